//! The guest interface, version [`VERSION`]: what a WebAssembly module exports to be a
//! slowstart controller, and how host and guest exchange events and answers. Both sides use this
//! module (the host is `slowstart-wasm`), so the layout has one owner.
//!
//! A module has **no imports** and exports:
//!
//! | export | signature | does |
//! | --- | --- | --- |
//! | `memory` | memory | the guest's linear memory |
//! | `slowstart_abi_version` | `() -> i32` | [`VERSION`]; the host refuses any other |
//! | `slowstart_io` | `() -> i32` | address of the exchange block ([`Io`], 8-byte aligned) |
//! | `slowstart_new` | `(mss: i64, initcwnd: i64, abc: i32, seed: i64, paced: i32) -> i32` | build the controller from [`CommonParams`] and the parameters in the block's text |
//! | `slowstart_on_ack`, `slowstart_on_congestion_event`, `slowstart_on_rto` | `() -> i32` | deliver the event in the block's `event` words |
//! | `slowstart_on_packet_sent`, `slowstart_on_rtt_sample`, `slowstart_on_recovery_exit` (optional) | `() -> i32` | the same; a guest without one is not sent that event |
//! | `slowstart_events` (optional) | `() -> i32` | the events this instance wants, bit `i` for [`EventKind::ALL`]`[i]`; without it, every event it exports |
//!
//! Every call but `slowstart_abi_version`, `slowstart_io` and `slowstart_events` returns 0 after
//! writing the controller's answers into `out`, or -1 after writing a one-line message into
//! `text`. One module instance holds one controller. Times are nanoseconds, sizes bytes, all
//! `u64` little-endian; [`NONE`] stands for "absent".
//!
//! **Events not sent.** Each call into a guest costs the host hundreds of instructions, and
//! `on_packet_sent` comes once per packet: half of a bulk transfer's calls. The host calls
//! `slowstart_events` once, after `slowstart_new` succeeded, and from then on sends the instance
//! only the events whose bit is set, keeping its previous answers for the others (an event the
//! controller ignores leaves them as they were). A bit set for an event the module does not
//! export is refused at that point. The optional events are those
//! [`CongestionController`](slowstart_cc::CongestionController) gives a no-op default; a Rust
//! guest built with `export!` asks for every event except `on_packet_sent` when its controller's
//! `uses_packet_sent()` is false (built-in Reno's is: the guest runs at half the calls).

use std::collections::BTreeMap;

use slowstart_cc::external::Outputs;
use slowstart_cc::params::ParamValue;
use slowstart_cc::{AckEvent, CommonParams, CongestionEvent, Nanos, Phase, RateSample, SentEvent};

/// The interface version a guest reports and the host checks at load.
pub const VERSION: i32 = 1;

/// An absent value (`Option::None`) in an event or answer word.
pub const NONE: u64 = u64::MAX;

/// Words of an event; each event uses the first few (see the `encode_*` functions).
pub const EVENT_WORDS: usize = 18;

/// Bytes of the text area: parameters in, a message out.
pub const TEXT_BYTES: usize = 4096;

/// The exchange block at `slowstart_io()`.
#[repr(C, align(8))]
pub struct Io {
    /// The event a call delivers, its words as the `encode_*` functions lay them out.
    pub event: [u64; EVENT_WORDS],
    /// cwnd, ssthresh, pacing rate, send quantum ([`NONE`] for the last two when absent), phase
    /// code ([`Phase`] as `u8`).
    pub out: [u64; 5],
    /// Bytes used in `text`.
    pub text_len: u64,
    /// Parameters in (`slowstart_new`, [`Params::encode`]), an error message out.
    pub text: [u8; TEXT_BYTES],
}

/// Byte offset of [`Io::event`] in the block, for the host.
pub const EVENT_OFFSET: usize = 0;
/// Byte offset of [`Io::out`].
pub const OUT_OFFSET: usize = EVENT_WORDS * 8;
/// Byte offset of [`Io::text_len`].
pub const TEXT_LEN_OFFSET: usize = OUT_OFFSET + 5 * 8;
/// Byte offset of [`Io::text`].
pub const TEXT_OFFSET: usize = TEXT_LEN_OFFSET + 8;
/// Size of the whole block.
pub const IO_BYTES: usize = TEXT_OFFSET + TEXT_BYTES;

const _: () = assert!(std::mem::size_of::<Io>() == IO_BYTES);

/// Which event a call delivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A packet sent (`on_packet_sent`).
    Sent,
    /// An ACK (`on_ack`).
    Ack,
    /// An RTT sample outside an ACK's (`on_rtt_sample`).
    RttSample,
    /// The start of a congestion episode (`on_congestion_event`).
    Congestion,
    /// The end of loss recovery (`on_recovery_exit`).
    RecoveryExit,
    /// A retransmission timeout (`on_rto`).
    Rto,
}

impl EventKind {
    /// The export that delivers it.
    pub fn export(self) -> &'static str {
        match self {
            EventKind::Sent => "slowstart_on_packet_sent",
            EventKind::Ack => "slowstart_on_ack",
            EventKind::RttSample => "slowstart_on_rtt_sample",
            EventKind::Congestion => "slowstart_on_congestion_event",
            EventKind::RecoveryExit => "slowstart_on_recovery_exit",
            EventKind::Rto => "slowstart_on_rto",
        }
    }

    /// The event's bit in `slowstart_events`' answer (its place in [`EventKind::ALL`]).
    pub fn bit(self) -> i32 {
        1 << self as u32
    }

    /// Whether a guest may leave the event's export out (the trait's method has a default).
    pub fn optional(self) -> bool {
        matches!(
            self,
            EventKind::Sent | EventKind::RttSample | EventKind::RecoveryExit
        )
    }

    /// Every event, in the order of their bits.
    pub const ALL: [EventKind; 6] = [
        EventKind::Sent,
        EventKind::Ack,
        EventKind::RttSample,
        EventKind::Congestion,
        EventKind::RecoveryExit,
        EventKind::Rto,
    ];
}

fn opt(x: Option<u64>) -> u64 {
    x.unwrap_or(NONE)
}

fn unopt(x: u64) -> Option<u64> {
    (x != NONE).then_some(x)
}

/// Each `encode_*` returns the number of words it wrote, the first of `w`: the host copies only
/// those into the guest's block.
pub fn encode_sent(e: &SentEvent, w: &mut [u64; EVENT_WORDS]) -> usize {
    w[..5].copy_from_slice(&[
        e.now,
        e.bytes,
        e.bytes_in_flight,
        e.total_sent,
        e.retransmission as u64,
    ]);
    5
}

/// The event [`encode_sent`] wrote.
pub fn decode_sent(w: &[u64; EVENT_WORDS]) -> SentEvent {
    SentEvent {
        now: w[0],
        bytes: w[1],
        bytes_in_flight: w[2],
        total_sent: w[3],
        retransmission: w[4] != 0,
    }
}

/// An ACK's words (16), its optional fields as [`NONE`] and its flags in one word.
pub fn encode_ack(e: &AckEvent, w: &mut [u64; EVENT_WORDS]) -> usize {
    let r = e.rate.unwrap_or_default();
    let flags = e.cwnd_limited as u64
        | (e.sent_before_cwnd_block as u64) << 1
        | (e.in_recovery as u64) << 2
        | (e.rate.is_some() as u64) << 3
        | (r.is_app_limited as u64) << 4;
    w[..16].copy_from_slice(&[
        e.now,
        e.bytes_acked,
        e.mss,
        opt(e.rtt),
        e.srtt,
        e.min_rtt,
        opt(e.one_way_delay),
        r.delivery_rate,
        r.delivered,
        r.interval,
        r.prior_delivered,
        r.rtt,
        e.delivered,
        e.prior_in_flight,
        e.bytes_in_flight,
        flags,
    ]);
    16
}

/// The event [`encode_ack`] wrote.
pub fn decode_ack(w: &[u64; EVENT_WORDS]) -> AckEvent {
    let flags = w[15];
    AckEvent {
        now: w[0],
        bytes_acked: w[1],
        mss: w[2],
        rtt: unopt(w[3]),
        srtt: w[4],
        min_rtt: w[5],
        one_way_delay: unopt(w[6]),
        rate: (flags & 8 != 0).then_some(RateSample {
            delivery_rate: w[7],
            delivered: w[8],
            interval: w[9],
            prior_delivered: w[10],
            is_app_limited: flags & 16 != 0,
            rtt: w[11],
        }),
        delivered: w[12],
        prior_in_flight: w[13],
        bytes_in_flight: w[14],
        cwnd_limited: flags & 1 != 0,
        sent_before_cwnd_block: flags & 2 != 0,
        in_recovery: flags & 4 != 0,
    }
}

/// A congestion event's words (5).
pub fn encode_congestion(e: &CongestionEvent, w: &mut [u64; EVENT_WORDS]) -> usize {
    w[..5].copy_from_slice(&[e.now, e.ecn as u64, e.bytes_lost, e.bytes_in_flight, e.mss]);
    5
}

/// The event [`encode_congestion`] wrote.
pub fn decode_congestion(w: &[u64; EVENT_WORDS]) -> CongestionEvent {
    CongestionEvent {
        now: w[0],
        ecn: w[1] != 0,
        bytes_lost: w[2],
        bytes_in_flight: w[3],
        mss: w[4],
    }
}

/// `on_rtt_sample(now, rtt)`: words `[now, rtt]`; `on_recovery_exit(now)`: `[now]`;
/// `on_rto(now, bytes_in_flight)`: `[now, bytes_in_flight]`.
pub fn encode_pair(a: Nanos, b: u64, w: &mut [u64; EVENT_WORDS]) -> usize {
    w[0] = a;
    w[1] = b;
    2
}

/// A controller's answers as `out` words.
pub fn encode_out(
    cwnd: u64,
    ssthresh: u64,
    pacing_rate: Option<u64>,
    send_quantum: Option<u64>,
    phase: Phase,
) -> [u64; 5] {
    [
        cwnd,
        ssthresh,
        opt(pacing_rate),
        opt(send_quantum),
        phase as u64,
    ]
}

/// `out` words as answers, or a message when the phase code is not one of [`Phase::ALL`].
pub fn decode_out(w: &[u64; 5]) -> Result<Outputs, String> {
    let phase = Phase::ALL.get(w[4] as usize).copied().ok_or_else(|| {
        format!(
            "phase code {} (accepted: 0..={}, the order of Phase)",
            w[4],
            Phase::ALL.len() - 1
        )
    })?;
    Ok(Outputs {
        cwnd: w[0],
        ssthresh: w[1],
        pacing_rate: unopt(w[2]),
        send_quantum: unopt(w[3]),
        phase,
    })
}

/// A controller's own parameters (`--cc ./x.wasm:gain=2`), as the spec gave them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params(pub BTreeMap<String, ParamValue>);

impl Params {
    /// The text form the host writes: one `key=value` a line, the value prefixed by its kind
    /// (`b:true`, `n:0.5`, `t:word`); a number in Rust's shortest round-trip form.
    pub fn encode(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.0 {
            let v = match v {
                ParamValue::Bool(b) => format!("b:{b}"),
                ParamValue::Number(x) => format!("n:{x:?}"),
                ParamValue::Text(t) => format!("t:{t}"),
            };
            s.push_str(&format!("{k}={v}\n"));
        }
        s
    }

    /// The parameters [`Params::encode`] wrote; a line in another form is an error naming it.
    pub fn decode(text: &str) -> Result<Self, String> {
        let mut map = BTreeMap::new();
        for line in text.lines() {
            let bad = || format!("parameter line {line:?} (expected key=b:|n:|t:value)");
            let (k, v) = line.split_once('=').ok_or_else(bad)?;
            let value = match v.split_at_checked(2).ok_or_else(bad)? {
                ("b:", b) => ParamValue::Bool(b.parse().map_err(|_| bad())?),
                ("n:", x) => ParamValue::Number(x.parse().map_err(|_| bad())?),
                ("t:", t) => ParamValue::Text(t.to_string()),
                _ => return Err(bad()),
            };
            map.insert(k.to_string(), value);
        }
        Ok(Params(map))
    }

    /// A number parameter, or `default` when not given.
    pub fn number(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.0.get(key) {
            None => Ok(default),
            Some(ParamValue::Number(x)) => Ok(*x),
            Some(v) => Err(format!("{key}: expected a number, got {v}")),
        }
    }

    /// Refuse every parameter not in `known`, naming them.
    pub fn reject_unknown(&self, known: &[&str]) -> Result<(), String> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(format!(
                "unknown parameter '{k}' (accepted: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )),
        }
    }
}

/// [`CommonParams`] from `slowstart_new`'s arguments.
pub fn common(mss: i64, initcwnd: i64, abc: i32, seed: i64, paced: i32) -> CommonParams {
    CommonParams {
        mss: mss as u64,
        initcwnd: initcwnd as u64,
        abc: abc != 0,
        seed: seed as u64,
        paced: paced != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_the_words() {
        let ack = AckEvent {
            now: 7,
            bytes_acked: 2896,
            mss: 1448,
            rtt: Some(40_000_000),
            srtt: 41_000_000,
            min_rtt: 39_000_000,
            one_way_delay: None,
            rate: Some(RateSample {
                delivery_rate: 12_500_000,
                delivered: 28_960,
                interval: 40_000_000,
                prior_delivered: 100,
                is_app_limited: true,
                rtt: 40_000_000,
            }),
            delivered: 1_000_000,
            prior_in_flight: 30_000,
            bytes_in_flight: 27_104,
            cwnd_limited: true,
            sent_before_cwnd_block: false,
            in_recovery: true,
        };
        let mut w = [0; EVENT_WORDS];
        encode_ack(&ack, &mut w);
        assert_eq!(decode_ack(&w), ack);
        let no_rate = AckEvent {
            rate: None,
            rtt: None,
            one_way_delay: Some(5),
            ..ack
        };
        encode_ack(&no_rate, &mut w);
        assert_eq!(decode_ack(&w), no_rate);
        let sent = SentEvent {
            now: 1,
            bytes: 1448,
            bytes_in_flight: 2896,
            total_sent: 9000,
            retransmission: true,
        };
        encode_sent(&sent, &mut w);
        assert_eq!(decode_sent(&w), sent);
        let loss = CongestionEvent {
            now: 3,
            ecn: true,
            bytes_lost: 1448,
            bytes_in_flight: 10_000,
            mss: 1448,
        };
        encode_congestion(&loss, &mut w);
        assert_eq!(decode_congestion(&w), loss);
    }

    #[test]
    fn event_bits_are_the_hosts() {
        use slowstart_cc::external::Event;
        let (sent, ack, loss) = (
            SentEvent::default(),
            AckEvent::default(),
            CongestionEvent::default(),
        );
        let events = [
            Event::Sent(&sent),
            Event::Ack(&ack),
            Event::RttSample { now: 0, rtt: 0 },
            Event::Congestion(&loss),
            Event::RecoveryExit { now: 0 },
            Event::Rto {
                now: 0,
                bytes_in_flight: 0,
            },
        ];
        for (kind, event) in EventKind::ALL.iter().zip(events) {
            assert_eq!(kind.bit(), i32::from(event.bit()), "{}", kind.export());
            assert_eq!(kind.export(), format!("slowstart_{}", event.method()));
        }
    }

    #[test]
    fn params_survive_their_text() {
        let mut map = BTreeMap::new();
        map.insert("gain".to_string(), ParamValue::Number(0.1 + 0.2));
        map.insert("mode".to_string(), ParamValue::Text("fast".into()));
        map.insert("on".to_string(), ParamValue::Bool(true));
        let p = Params(map);
        assert_eq!(Params::decode(&p.encode()).unwrap(), p);
        assert!(Params::decode("gain=x:1").is_err());
    }

    #[test]
    fn an_unknown_phase_code_is_refused() {
        assert!(decode_out(&[1, 2, NONE, NONE, 99]).is_err());
        let out = decode_out(&[1, 2, 5, NONE, 3]).unwrap();
        assert_eq!(
            (out.cwnd, out.pacing_rate, out.phase),
            (1, Some(5), Phase::CongestionAvoidance)
        );
    }
}
