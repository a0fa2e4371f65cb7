//! A `[[flow]]`: its ends, size, controller and transport settings, with their defaults,
//! bounds and the transport's settings built from them.

use super::*;

/// A connection and its transport. Every field but the ends has a default (the `default_*`
/// functions below, named in `#[serde(default)]`): what a `[[flow]]` table that leaves the key
/// out gets, here and in the Python loader, which reads them through [`defaults_json`](crate::schema::defaults_json).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Node sending the data and node receiving it.
    pub src: String,
    pub dst: String,
    #[serde(default = "default_cc")]
    pub cc: CcSpec,
    /// Bytes to transfer; `None` for unbounded.
    #[serde(default)]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub start_ns: u64,
    #[serde(default = "default_mss")]
    pub mss: u64,
    /// TCP/IP header bytes on the wire per packet (MSS excludes them).
    #[serde(default = "default_header_bytes")]
    pub header_bytes: u64,
    #[serde(default = "default_initial_window")]
    pub initcwnd: u64,
    #[serde(default = "default_initial_window")]
    pub initrwnd: u64,
    /// Receiver window ceiling (socket buffer), bytes; `None` for unlimited.
    #[serde(default)]
    pub max_rwnd_bytes: Option<u64>,
    /// Sender window ceiling (send buffer), bytes; `None` for unlimited.
    #[serde(default)]
    pub max_window_bytes: Option<u64>,
    #[serde(default = "yes")]
    pub handshake: bool,
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    #[serde(default = "default_delack_timeout_ns")]
    pub delack_timeout_ns: u64,
    /// With delayed ACKs, ACK every `ack_every` full-sized segments (2 in RFC 1122 / RFC 5681).
    #[serde(default = "default_ack_every")]
    pub ack_every: u64,
    /// Linux's quick ACKs: from the first data segment, ACK each segment at once for
    /// min(16, max(2, receive window / (2 x 536))) ACKs (tcp_input.c `tcp_incr_quickack`),
    /// and whenever the segment grew the receive window (`tcp_grow_window`).
    #[serde(default)]
    pub quickack: bool,
    #[serde(default = "yes")]
    pub abc: bool,
    #[serde(default = "default_min_rto_ns")]
    pub min_rto_ns: u64,
    #[serde(default = "default_max_rto_ns")]
    pub max_rto_ns: u64,
    #[serde(default)]
    pub pacing: bool,
    /// How pacing spaces packets (see [`PacerModel`]); with `pacing` only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pacer: PacerModel,
    #[serde(default)]
    pub recovery: Recovery,
    #[serde(default)]
    pub loss_detection: LossDetection,
    /// ECN (RFC 3168): data is sent ECN-capable, the receiver echoes CE marks, and the sender
    /// reduces its window once per window of data on ECE, without retransmitting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
    /// How the receiver echoes CE marks (see [`CeFeedback`]); with `ecn` only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ecn_feedback: CeFeedback,
    /// What ECN the receiver supports (see [`ReceiverEcn`]): the handshake settles the feedback.
    #[serde(default, skip_serializing_if = "is_default")]
    pub receiver_ecn: ReceiverEcn,
    /// How an ECN echo lowers the window (see [`EcnReduction`]); with `ecn` only.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ecn_reduction: EcnReduction,
    /// When slow start grows a cwnd that a window holds back (see [`CwndLimited`]).
    #[serde(default, skip_serializing_if = "is_default")]
    pub cwnd_limited: CwndLimited,
    /// What the application on top of the connection does; bulk by default.
    #[serde(default)]
    pub app: AppConfig,
    /// A real program pair that carries this flow in `slowstart real` instead of a built-in
    /// stack; a simulation runs the flow as its `cc`, `size` and `app` say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramConfig>,
}

/// Reno, the algorithm RFC 5681 specifies.
pub(crate) fn default_cc() -> CcSpec {
    CcSpec::named("reno")
}
/// Ethernet's 1500-byte MTU less 40 bytes of IPv4 and TCP headers (RFC 879, RFC 6691).
fn default_mss() -> u64 {
    1460
}
fn default_header_bytes() -> u64 {
    40
}
/// RFC 6928: an initial window of 10 segments (Linux since 2.6.39, for cwnd and rwnd).
fn default_initial_window() -> u64 {
    10
}
/// Linux TCP_DELACK_MIN (include/net/tcp.h): 40 ms.
fn default_delack_timeout_ns() -> u64 {
    40_000_000
}
fn default_ack_every() -> u64 {
    2
}
/// Linux TCP_RTO_MIN and TCP_RTO_MAX (include/net/tcp.h): 200 ms and 120 s.
fn default_min_rto_ns() -> u64 {
    200_000_000
}
fn default_max_rto_ns() -> u64 {
    120_000_000_000
}

impl FlowConfig {
    /// A bulk flow from `src` to `dst` of unbounded size with every default.
    pub fn new(src: &str, dst: &str) -> Self {
        Self {
            src: src.into(),
            dst: dst.into(),
            cc: default_cc(),
            size_bytes: None,
            start_ns: 0,
            mss: default_mss(),
            header_bytes: default_header_bytes(),
            initcwnd: default_initial_window(),
            initrwnd: default_initial_window(),
            max_rwnd_bytes: None,
            max_window_bytes: None,
            handshake: true,
            delayed_ack: true,
            delack_timeout_ns: default_delack_timeout_ns(),
            ack_every: default_ack_every(),
            quickack: false,
            abc: true,
            min_rto_ns: default_min_rto_ns(),
            max_rto_ns: default_max_rto_ns(),
            pacing: false,
            pacer: PacerModel::default(),
            recovery: Recovery::default(),
            loss_detection: LossDetection::default(),
            ecn: false,
            ecn_feedback: CeFeedback::default(),
            receiver_ecn: ReceiverEcn::default(),
            ecn_reduction: EcnReduction::default(),
            cwnd_limited: CwndLimited::default(),
            app: AppConfig::Bulk,
            program: None,
        }
    }
}

impl FlowConfig {
    /// The ECN feedback the flow's controller reads, if it needs ECN (see
    /// [`slowstart_cc::registry::needs_ecn`]): the flow's own if the controller reads it, else
    /// the controller's default.
    pub fn needed_feedback(&self) -> Option<CeFeedback> {
        let words = slowstart_cc::registry::needs_ecn(&self.cc.name)?;
        let value = |word: &str| {
            let found = CeFeedback::WORDS.iter().find(|(w, _)| *w == word);
            found
                .expect("a needed feedback is one of the transport's words")
                .1
        };
        let readable = words.iter().any(|w| value(w) == self.ecn_feedback);
        Some(if readable {
            self.ecn_feedback
        } else {
            value(words[0])
        })
    }

    /// The transport's settings, as the sender and receiver take them. A controller that needs
    /// ECN turns it on for its flow, with the feedback it reads, as Linux's TCP_CONG_NEEDS_ECN
    /// modules (tcp_dctcp.c) set ECT whatever net.ipv4.tcp_ecn says; both ends of a flow run
    /// the same algorithm here, as both hosts of a data center run DCTCP.
    pub fn transport(&self) -> Settings {
        let needed = self.needed_feedback();
        Settings {
            mss: self.mss,
            header_bytes: self.header_bytes,
            initrwnd: self.initrwnd,
            max_rwnd_bytes: self.max_rwnd_bytes,
            max_window_bytes: self.max_window_bytes,
            delayed_ack: self.delayed_ack,
            delack_timeout_ns: self.delack_timeout_ns,
            ack_every: self.ack_every,
            quickack: self.quickack,
            min_rto_ns: self.min_rto_ns,
            max_rto_ns: self.max_rto_ns,
            pacing: self.pacing,
            pacer: self.pacer,
            recovery: self.recovery,
            loss_detection: self.loss_detection,
            ecn: self.ecn || needed.is_some(),
            ecn_feedback: needed.unwrap_or(self.ecn_feedback),
            receiver_ecn: self.receiver_ecn,
            ecn_reduction: self.ecn_reduction,
            accurate_only: slowstart_cc::registry::refuses_classic_ecn(&self.cc.name),
            cwnd_limited: self.cwnd_limited,
        }
    }

    /// The transport's own settings and its controller (not its ends, size or application);
    /// `at` names the table.
    pub fn validate_transport(&self, at: &str) -> Result<(), SimError> {
        self.transport()
            .validate()
            .map_err(|e| err(format!("{at}.{e}")))?;
        in_range(
            &format!("{at}.initcwnd"),
            self.initcwnd,
            1,
            MAX_INITIAL_WINDOW,
        )?;
        // Built once here, so that a parameter it refuses is refused before any run.
        slowstart_cc::Controller::new(&self.cc, &self.common_params(0))
            .map_err(|e| err(format!("{at}.{e}")))?;
        if let Some(needed) = self.needed_feedback() {
            if self.ecn_feedback != CeFeedback::default() && self.ecn_feedback != needed {
                let word = |f: CeFeedback| serde_json::to_value(f).expect("a choice serializes");
                let words = slowstart_cc::registry::needs_ecn(&self.cc.name).unwrap_or(&[]);
                return Err(err(format!(
                    "{at}.ecn_feedback: cc {} reads {} feedback, got {}",
                    self.cc.name,
                    words.join(" or "),
                    word(self.ecn_feedback)
                )));
            }
        }
        Ok(())
    }

    /// Check the flow as flow `i` of a run of `duration_ns` whose nodes `known` accepts: its
    /// ends, transport, size, start, application and program.
    pub(super) fn validate(
        &self,
        i: usize,
        known: &dyn Fn(&str) -> bool,
        duration_ns: u64,
    ) -> Result<(), SimError> {
        let at = format!("flow.{i}");
        for (end, name) in [("src", &self.src), ("dst", &self.dst)] {
            if !known(name) {
                return Err(err(format!("{at}.{end}: unknown node '{name}'")));
            }
        }
        if self.src == self.dst {
            return Err(err(format!(
                "{at}.dst: src and dst must differ, both are '{}'",
                self.dst
            )));
        }
        self.validate_transport(&at)?;
        if self.size_bytes == Some(0) {
            return Err(err(format!("{at}.size: must be > 0 bytes or \"inf\"")));
        }
        if self.start_ns >= duration_ns {
            return Err(err(format!(
                "{at}.start: {} s is not before the run ends (duration {} s)",
                self.start_ns as f64 / 1e9,
                duration_ns as f64 / 1e9
            )));
        }
        validate_app(i, self)?;
        if let Some(p) = &self.program {
            p.validate(&format!("{at}.program"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_that_names_only_its_ends_gets_every_default() {
        let f: FlowConfig = serde_json::from_str(r#"{"src": "a", "dst": "b"}"#).unwrap();
        let d = FlowConfig::new("a", "b");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            serde_json::to_string(&d).unwrap()
        );
        assert_eq!((d.mss, d.initcwnd, d.min_rto_ns), (1460, 10, 200_000_000));
        let missing = serde_json::from_str::<FlowConfig>(r#"{"dst": "b"}"#).unwrap_err();
        assert!(
            missing.to_string().contains("missing field `src`"),
            "{missing}"
        );
    }

    #[test]
    fn an_ecn_reduction_reaches_the_transport_with_ecn_only() {
        let mut f = crate::testing::flow("dctcp", Some(1));
        assert_eq!(f.transport().ecn_reduction, EcnReduction::Immediate);
        f.ecn_reduction = EcnReduction::Prr;
        assert_eq!(f.transport().ecn_reduction, EcnReduction::Prr);
        f.validate_transport("flow.0").unwrap();
        f.cc = CcSpec::named("reno");
        assert!(f
            .validate_transport("flow.0")
            .unwrap_err()
            .0
            .starts_with("flow.0.ecn_reduction: a reduction other than \"immediate\" needs ecn"));
        f.ecn = true;
        f.validate_transport("flow.0").unwrap();
    }
}
