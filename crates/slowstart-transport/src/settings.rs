//! The transport's settings: what a sender and receiver need to know beyond the controller.
//! Scenario defaults live with the scenario loader; the bounds the transport relies on live
//! here, in [`Settings::validate`].

use serde::{de, Deserialize, Deserializer, Serialize};

/// Loss recovery after fast retransmit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// RFC 6937 Proportional Rate Reduction (Linux's default).
    #[default]
    Prr,
    /// RFC 6675 §5: send while pipe < cwnd, with cwnd = ssthresh for the whole episode.
    Rfc6675,
}

/// How the sender lowers its window on an ECN echo (RFC 3168 §6.1.2), with `ecn` only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnReduction {
    /// The controller's cwnd at once: the sender waits until pipe falls below it.
    #[default]
    Immediate,
    /// Linux's CWR state (tcp_input.c `tcp_cwnd_reduction`): Proportional Rate Reduction
    /// (RFC 6937) paces the reduction over the next round, as in fast recovery.
    Prr,
}

impl EcnReduction {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("immediate", Self::Immediate), ("prr", Self::Prr)];
}

impl<'de> Deserialize<'de> for EcnReduction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// How the sender decides a segment is lost (besides the retransmission timer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    /// RFC 8985 RACK-TLP as Linux does it: a segment is lost once one sent a reordering window
    /// (min RTT / 4) later is delivered, or DupThresh segments above it are SACKed; a tail loss
    /// probe after 2 SRTT without ACKs elicits the SACK that reveals tail losses.
    #[default]
    Rack,
    /// RFC 6675 only: DupThresh SACKed segments above; tail losses wait for the timer (ns-2).
    Dupthresh,
}

/// When a sender that a window (not cwnd) holds back still grows cwnd in slow start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CwndLimited {
    /// Linux `tcp_is_cwnd_limited` (3.x on): in slow start while cwnd is below twice the most
    /// outstanding this window, so a window-limited cwnd climbs to twice the window.
    #[default]
    Linux,
    /// Only when in flight has reached cwnd, as Linux 2.4's `tcp_ack` (`prior_in_flight >=
    /// snd_cwnd` before `tcp_cong_avoid`): cwnd stops at the window the sender can use.
    Strict,
}

/// How a pacing sender spaces its packets (`pacer`, with `pacing` on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PacerModel {
    /// At the controller's pacing rate when it sets one, otherwise at Linux's
    /// (`tcp_update_pacing_rate`: 2 x cwnd / srtt in slow start, 1.2 x after), with bursts of
    /// the controller's send quantum (two packets by default), as Linux's fq.
    #[default]
    Linux,
    /// quinn-proto 0.11's pacer (`connection/pacing.rs`): a token bucket refilled at
    /// 1.25 x cwnd / srtt whatever the controller's own rate, holding cwnd x 2 ms / srtt
    /// (10 to 256 packets); a blocked sender waits until the bucket is full again.
    Quinn,
}

impl PacerModel {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("linux", Self::Linux), ("quinn", Self::Quinn)];
}

impl<'de> Deserialize<'de> for PacerModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// How the receiver feeds CE marks back to the sender (`ecn_feedback`): what the sender asks
/// for; the handshake settles what both ends use, with the receiver's [`ReceiverEcn`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CeFeedback {
    /// RFC 3168 §6.1.3: ECE on every ACK from a CE mark until the sender's CWR.
    #[default]
    Classic,
    /// RFC 8257 §3.2 (Linux tcp_dctcp.h `dctcp_ece_ack_update`): ECE echoes the CE state of the
    /// latest data packet; when it changes, a delayed ACK still owed goes out at once with the
    /// old state, and the packet that changed it is ACKed at once. CWR is ignored.
    Dctcp,
    /// Accurate ECN, RFC 9768 §3.2.2: every ACK carries ACE, the count of CE-marked packets
    /// received modulo 8 (from 5), in AE, CWR and ECE; a change of CE state is ACKed at once
    /// (§3.2.2.5.1). The sender counts marks from ACE's increase and sets no CWR.
    Accurate,
}

impl CeFeedback {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("classic", Self::Classic),
        ("dctcp", Self::Dctcp),
        ("accurate", Self::Accurate),
    ];
}

impl<'de> Deserialize<'de> for CeFeedback {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// What ECN the receiving end supports (`receiver_ecn`): the answer the sender's SYN gets
/// (RFC 9768 §3.1.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiverEcn {
    /// The receiver runs the sender's stack and gives the feedback it asks for (a data
    /// center's DCTCP hosts; every flow before the negotiation was modelled).
    #[default]
    Same,
    /// An AccECN receiver (RFC 9768): Accurate ECN if the SYN asks for it, RFC 3168 ECN if it
    /// asks for that (a DCTCP sender's SYN asks for RFC 3168, §3.1.1).
    Accurate,
    /// An RFC 3168 receiver: it answers an AccECN or an ECN-setup SYN with classic ECN.
    Classic,
    /// No ECN: the SYN-ACK carries no ECN flags and the flow runs without ECN.
    None,
}

impl ReceiverEcn {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("same", Self::Same),
        ("accurate", Self::Accurate),
        ("classic", Self::Classic),
        ("none", Self::None),
    ];

    /// The feedback this receiver gives a SYN asking for `asked` (`None`: a SYN without ECN
    /// flags): RFC 9768 §3.1.1 and RFC 3168 §6.1.1.
    pub fn answer(self, asked: Option<CeFeedback>) -> Option<CeFeedback> {
        let asked = asked?;
        match self {
            Self::Same => Some(asked),
            Self::None => None,
            Self::Classic => Some(CeFeedback::Classic),
            Self::Accurate if asked == CeFeedback::Accurate => Some(CeFeedback::Accurate),
            Self::Accurate => Some(CeFeedback::Classic),
        }
    }
}

impl<'de> Deserialize<'de> for ReceiverEcn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl Recovery {
    /// The words a config may write, each with the value it stands for.
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("prr", Self::Prr), ("rfc6675", Self::Rfc6675)];
}

impl LossDetection {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("rack", Self::Rack), ("dupthresh", Self::Dupthresh)];
}

impl CwndLimited {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("linux", Self::Linux), ("strict", Self::Strict)];
}

impl<'de> Deserialize<'de> for Recovery {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl<'de> Deserialize<'de> for LossDetection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl<'de> Deserialize<'de> for CwndLimited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// A choice read from one of its `words`; anything else is refused with all of them listed
/// (`expected one of prr, rfc6675, got "fast"`), where serde's derive would name only the
/// variants, and not at all for a value that is not a string.
pub fn from_words<'de, D: Deserializer<'de>, T: Copy>(
    d: D,
    words: &'static [(&'static str, T)],
) -> Result<T, D::Error> {
    struct Words<T: 'static>(&'static [(&'static str, T)]);

    impl<T: 'static> Words<T> {
        fn list(&self) -> String {
            let names: Vec<&str> = self.0.iter().map(|(w, _)| *w).collect();
            names.join(", ")
        }
        fn refuse<E: de::Error>(&self, got: impl std::fmt::Display) -> E {
            E::custom(format_args!("expected one of {}, got {got}", self.list()))
        }
    }

    impl<T: Copy + 'static> de::Visitor<'_> for Words<T> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "one of {}", self.list())
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            match self.0.iter().find(|(w, _)| *w == v) {
                Some(&(_, value)) => Ok(value),
                None => Err(self.refuse(format_args!("{v:?}"))),
            }
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<T, E> {
            Err(self.refuse(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
            Err(self.refuse(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
            Err(self.refuse(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
            Err(self.refuse(v))
        }
    }

    d.deserialize_any(Words(words))
}

// Every bound of the transport's settings. With these, sums of times (now + an RTO, a
// delayed-ACK timeout) stay far below u64::MAX, and no setting allocates without bound.
/// Largest MSS accepted, bytes (a segment's length and offsets fit in 32 bits with room).
pub const MAX_MSS: u64 = 65_000;
/// Largest header per packet (IPv6 with extension headers and TCP options fit well within).
pub const MAX_HEADER_BYTES: u64 = 1_024;
/// Largest initial windows, in segments (the sender keeps a record per segment in flight).
pub const MAX_INITIAL_WINDOW: u64 = 100_000;
/// Largest ACK frequency, in segments.
pub const MAX_ACK_EVERY: u64 = 10_000;
/// Longest delayed-ACK timer: RFC 1122 §4.2.3.2 asks for less than 0.5 s; 60 s is allowed.
pub const MAX_DELACK_NS: u64 = 60 * 1_000_000_000;
/// Longest RTO: one hour.
pub const MAX_RTO_NS: u64 = 3_600 * 1_000_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Largest payload per data packet, bytes.
    pub mss: u64,
    /// TCP/IP header bytes on the wire per packet (MSS excludes them).
    pub header_bytes: u64,
    /// Receive window before the first data arrives, segments (also the sender's assumption
    /// of the peer's window until the handshake tells it).
    pub initrwnd: u64,
    /// Receive window ceiling (socket buffer), bytes; `None` for unlimited.
    pub max_rwnd_bytes: Option<u64>,
    /// Send window ceiling (send buffer), bytes; `None` for unlimited.
    pub max_window_bytes: Option<u64>,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    /// With delayed ACKs, ACK every `ack_every` full-sized segments (2 in RFC 1122 / RFC 5681).
    pub ack_every: u64,
    /// Linux's quick ACKs: from the first data segment, ACK each segment at once for
    /// min(16, max(2, receive window / (2 x 536))) ACKs (tcp_input.c `tcp_incr_quickack`),
    /// and whenever the segment grew the receive window (`tcp_grow_window`).
    pub quickack: bool,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    /// Pace at Linux's rate (2 or 1.2 x cwnd / srtt) when the controller sets none.
    pub pacing: bool,
    /// How pacing spaces packets (with `pacing` only).
    pub pacer: PacerModel,
    pub recovery: Recovery,
    pub loss_detection: LossDetection,
    /// RFC 3168 ECN: data goes out ECN-capable and an echoed mark reduces the window.
    pub ecn: bool,
    /// How CE marks come back (with `ecn` only): what the sender asks for at the handshake.
    pub ecn_feedback: CeFeedback,
    /// What ECN the receiver supports; the handshake settles what the flow uses
    /// ([`Settings::sender_feedback`], [`Settings::receiver_feedback`]).
    pub receiver_ecn: ReceiverEcn,
    /// How an ECN echo lowers the window (with `ecn` only).
    pub ecn_reduction: EcnReduction,
    /// The controller takes no RFC 3168 feedback: without Accurate ECN the flow runs without
    /// ECN (Linux TCP_CONG_NO_FALLBACK_RFC3168, tcp_prague.c).
    pub accurate_only: bool,
    pub cwnd_limited: CwndLimited,
}

/// A setting out of bounds: the field (as scenarios name it) and what it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SettingsError {}

impl Settings {
    /// Check every bound the transport relies on.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let fail = |field, message: String| Err(SettingsError { field, message });
        let range = |field, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                fail(field, format!("must be in {lo}..={hi}, got {v}"))
            } else {
                Ok(())
            }
        };
        range("mss", self.mss, 1, MAX_MSS)?;
        range("header_bytes", self.header_bytes, 0, MAX_HEADER_BYTES)?;
        range("initrwnd", self.initrwnd, 1, MAX_INITIAL_WINDOW)?;
        for (field, window) in [
            ("max_window", self.max_window_bytes),
            ("max_rwnd", self.max_rwnd_bytes),
        ] {
            if let Some(w) = window.filter(|&w| w < self.mss) {
                return fail(
                    field,
                    format!("must be at least one MSS ({} bytes), got {w}", self.mss),
                );
            }
        }
        range("ack_every", self.ack_every, 1, MAX_ACK_EVERY)?;
        range("delack_timeout", self.delack_timeout_ns, 0, MAX_DELACK_NS)?;
        if self.min_rto_ns == 0 || self.max_rto_ns < self.min_rto_ns {
            let (lo, hi) = (self.min_rto_ns, self.max_rto_ns);
            return fail(
                "min_rto",
                format!("must be in 1..=max_rto ({hi}) ns, got {lo}"),
            );
        }
        range("max_rto", self.max_rto_ns, 1, MAX_RTO_NS)?;
        if self.pacer != PacerModel::Linux && !self.pacing {
            return fail(
                "pacer",
                "a pacer other than \"linux\" paces every packet and needs pacing = true".into(),
            );
        }
        if self.ecn_feedback != CeFeedback::Classic && !self.ecn {
            return fail(
                "ecn_feedback",
                "a feedback other than \"classic\" needs ecn = true".into(),
            );
        }
        if self.ecn_reduction != EcnReduction::Immediate && !self.ecn {
            return fail(
                "ecn_reduction",
                "a reduction other than \"immediate\" needs ecn = true (or a cc that needs ECN)"
                    .into(),
            );
        }
        if self.receiver_ecn != ReceiverEcn::Same && !self.ecn {
            return fail(
                "receiver_ecn",
                "a receiver's ECN support matters only to a sender with ecn = true (or a cc \
                 that needs ECN)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The ECN feedback the sender asks for in its SYN (`None`: no ECN).
    pub fn asked_ecn(&self) -> Option<CeFeedback> {
        self.ecn.then_some(self.ecn_feedback)
    }

    /// What the sender uses once the SYN-ACK `answered` (Accurate ECN, RFC 3168 ECN or none):
    /// a classic answer keeps the sender's own ECE reading (DCTCP's, or RFC 3168's), or turns
    /// ECN off for a controller that refuses RFC 3168 feedback ([`Settings::accurate_only`]).
    pub fn settle_ecn(&self, answered: Option<CeFeedback>) -> Option<CeFeedback> {
        let asked = self.asked_ecn()?;
        match answered? {
            CeFeedback::Accurate if asked == CeFeedback::Accurate => Some(CeFeedback::Accurate),
            _ if self.accurate_only => None,
            _ if asked == CeFeedback::Dctcp => Some(CeFeedback::Dctcp),
            _ => Some(CeFeedback::Classic),
        }
    }

    /// The feedback the receiver gives after a handshake whose first SYN was answered (RFC
    /// 9768 §3.1.1); a flow without a handshake starts with it, as if its handshake
    /// had happened.
    pub fn receiver_feedback(&self) -> Option<CeFeedback> {
        self.receiver_ecn.answer(self.asked_ecn())
    }

    /// The same for the sender: the receiver's answer as the sender settles it.
    pub fn sender_feedback(&self) -> Option<CeFeedback> {
        self.settle_ecn(self.receiver_feedback())
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::settings;

    #[test]
    fn defaults_pass_and_each_bound_names_its_field() {
        assert_eq!(settings().validate(), Ok(()));
        let mut s = settings();
        s.mss = 65_001;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "mss: must be in 1..=65000, got 65001"
        );
        let mut s = settings();
        s.max_window_bytes = Some(1000);
        assert_eq!(s.validate().unwrap_err().field, "max_window");
        let mut s = settings();
        s.max_rto_ns = s.min_rto_ns - 1;
        assert_eq!(s.validate().unwrap_err().field, "min_rto");
        let mut s = settings();
        s.ecn_feedback = super::CeFeedback::Dctcp;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "ecn_feedback: a feedback other than \"classic\" needs ecn = true"
        );
        s.ecn = true;
        assert_eq!(s.validate(), Ok(()));
        s.receiver_ecn = super::ReceiverEcn::Classic;
        assert_eq!(s.validate(), Ok(()));
        s.ecn = false;
        s.ecn_feedback = super::CeFeedback::Classic;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "receiver_ecn: a receiver's ECN support matters only to a sender with ecn = true (or \
             a cc that needs ECN)"
        );
        s.receiver_ecn = super::ReceiverEcn::Same;
        s.ecn_reduction = super::EcnReduction::Prr;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "ecn_reduction: a reduction other than \"immediate\" needs ecn = true (or a cc that \
             needs ECN)"
        );
        s.ecn = true;
        assert_eq!(s.validate(), Ok(()));
        s.pacer = super::PacerModel::Quinn;
        assert_eq!(s.validate().unwrap_err().field, "pacer");
        s.pacing = true;
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn choices_read_their_words_and_list_them_on_a_miss() {
        use super::{CwndLimited, LossDetection, PacerModel, Recovery};
        for &(word, value) in PacerModel::WORDS {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<PacerModel>(&json).unwrap(), value);
        }
        for &(word, value) in Recovery::WORDS {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<Recovery>(&json).unwrap(), value);
        }
        for &(word, value) in LossDetection::WORDS {
            assert_eq!(
                serde_json::to_string(&value).unwrap(),
                format!("\"{word}\"")
            );
        }
        for &(word, value) in super::ReceiverEcn::WORDS {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(
                serde_json::from_str::<super::ReceiverEcn>(&json).unwrap(),
                value
            );
        }
        for &(word, value) in super::EcnReduction::WORDS {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(
                serde_json::from_str::<super::EcnReduction>(&json).unwrap(),
                value
            );
        }
        for &(word, value) in CwndLimited::WORDS {
            let json = serde_json::to_string(&value).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<CwndLimited>(&json).unwrap(), value);
        }
        let limited = serde_json::from_str::<CwndLimited>("\"loose\"").unwrap_err();
        assert!(limited
            .to_string()
            .starts_with("expected one of linux, strict, got \"loose\""));
        let miss = |json: &str| {
            serde_json::from_str::<Recovery>(json)
                .unwrap_err()
                .to_string()
        };
        assert!(miss("\"fast\"").starts_with("expected one of prr, rfc6675, got \"fast\""));
        assert!(miss("3").starts_with("expected one of prr, rfc6675, got 3"));
        assert!(miss("[]").contains("expected one of prr, rfc6675"));
    }
}
