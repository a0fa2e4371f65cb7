//! A link's two directions: rate, delay, jitter, loss (Bernoulli or Gilbert-Elliott), a
//! capacity trace, scheduled drops and the queue in front of each.

use super::*;

/// A duplex link between nodes `a` and `b`: `forward` carries a→b, `reverse` b→a.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub name: String,
    pub a: String,
    pub b: String,
    pub forward: DirectionConfig,
    pub reverse: DirectionConfig,
}

/// One direction of a link: a queue (drop-tail unless `discipline` says otherwise) served at
/// `rate_bps`, then `delay_ns` of propagation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionConfig {
    /// Line rate; with `rate_trace_ms`, the trace's mean (for summaries and BDPs).
    pub rate_bps: u64,
    /// Capacity from a trace in Mahimahi's format: the times (ms) of 1500-byte delivery
    /// opportunities, repeating with the last one as period (see `network::opportunities`).
    /// Read from a list of integers, or from one string of them separated by spaces, as
    /// Python's loader writes a trace file (a list of millions costs it ten times the memory).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "trace_times"
    )]
    pub rate_trace_ms: Vec<u64>,
    pub delay_ns: u64,
    /// The buffer: drop-tail's limit, and the hard limit under every discipline.
    pub queue: QueueLimit,
    /// Active queue management, if any (see `network::aqm`).
    #[serde(default, skip_serializing_if = "Discipline::is_drop_tail")]
    pub discipline: Discipline,
    /// Mark ECN-capable packets Congestion Experienced where the discipline would drop them
    /// (RFC 3168 §5); a full buffer still drops.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
    /// Independent random loss probability per packet, in [0, 1).
    #[serde(default)]
    pub loss: f64,
    /// Bursty loss instead of `loss`: a two-state Gilbert-Elliott chain as Linux netem runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gilbert_elliott: Option<GilbertElliott>,
    /// Extra delay drawn uniformly in [0, jitter_ns] per packet, never reordering.
    #[serde(default)]
    pub jitter_ns: u64,
    /// Deterministic drops: the first transmission of data segment `seq` (1-based) of `flow`.
    #[serde(default)]
    pub drops: Vec<DropSpec>,
}

impl DirectionConfig {
    /// A drop-tail direction with no random loss, jitter or scheduled drops.
    pub fn lossless(rate_bps: u64, delay_ns: u64, queue: QueueLimit) -> Self {
        Self {
            rate_bps,
            rate_trace_ms: vec![],
            delay_ns,
            queue,
            discipline: Discipline::DropTail,
            ecn: false,
            loss: 0.0,
            gilbert_elliott: None,
            jitter_ns: 0,
            drops: vec![],
        }
    }
}

/// netem's `loss gemodel p r 1-h 1-k` (tc-netem(8); q_netem.c `loss_gilb_ell`): per packet,
/// in the good state move to bad with probability `p` and lose with `loss_good` (1-k); in the
/// bad state move to good with probability `r` and lose with `loss_bad` (1-h). netem's
/// defaults for the last three are r = 1 - p, 1-h = 1, 1-k = 0 (iproute2 `netem_parse_opt`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    pub p: f64,
    pub r: f64,
    pub loss_bad: f64,
    pub loss_good: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum QueueLimit {
    /// At most this many packets waiting or in transmission.
    Packets(u64),
    /// At most this many wire bytes waiting or in transmission.
    Bytes(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropSpec {
    pub flow: u32,
    pub seq: u64,
}

/// Largest queue limit: 10^9 packets or 10^12 bytes.
pub const MAX_QUEUE_PACKETS: u64 = 1_000_000_000;
pub const MAX_QUEUE_BYTES: u64 = 1_000_000_000_000;

/// `rate_trace_ms`: a list of integers, or a string of them separated by ASCII whitespace.
fn trace_times<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    use serde::de;

    struct Times;

    impl<'de> de::Visitor<'de> for Times {
        type Value = Vec<u64>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("times in ms: a list of integers, or a string of them separated by spaces")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u64>, E> {
            v.split_ascii_whitespace()
                .enumerate()
                .map(|(i, t)| {
                    t.parse().map_err(|_| {
                        let t: String = t.chars().take(40).collect();
                        E::custom(format_args!(
                            "time {i}: expected an integer (ms), got {t:?}"
                        ))
                    })
                })
                .collect()
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u64>, A::Error> {
            let mut times = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
            while let Some(t) = seq.next_element()? {
                times.push(t);
            }
            Ok(times)
        }
    }
    d.deserialize_any(Times)
}

impl DirectionConfig {
    /// Check the direction named `at` (`links.0.forward`): its messages name its canonical
    /// fields, which the loader names back as the scenario wrote them (keys.rs). Its queue must
    /// hold a packet of `largest` bytes; its drops name flows below `flows`.
    pub(super) fn validate(&self, at: &str, largest: u64, flows: usize) -> Result<(), SimError> {
        in_range(&format!("{at}.rate_bps"), self.rate_bps, 1, MAX_RATE_BPS)?;
        in_range(&format!("{at}.delay_ns"), self.delay_ns, 0, MAX_DELAY_NS)?;
        in_range(&format!("{at}.jitter_ns"), self.jitter_ns, 0, MAX_DELAY_NS)?;
        if !(0.0..1.0).contains(&self.loss) {
            return Err(err(format!(
                "{at}.loss: must be in [0, 1), got {}",
                self.loss
            )));
        }
        if let Some(&last) = self.rate_trace_ms.last() {
            if self.rate_trace_ms.windows(2).any(|w| w[0] > w[1]) {
                return Err(err(format!("{at}.rate_trace_ms: times must not decrease")));
            }
            in_range(
                &format!("{at}.rate_trace_ms"),
                last,
                1,
                MAX_DELAY_NS / 1_000_000,
            )?;
        }
        if let Some(g) = &self.gilbert_elliott {
            for (name, v) in [
                ("p", g.p),
                ("r", g.r),
                ("loss_bad", g.loss_bad),
                ("loss_good", g.loss_good),
            ] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(err(format!(
                        "{at}.gilbert_elliott.{name}: must be in [0, 1], got {v}"
                    )));
                }
            }
            // Every packet lost in the long run, as `loss = 1` would be: the states
            // the chain keeps visiting lose all (it starts good; r = 0 keeps it bad).
            let lost_for_good = if g.p == 0.0 {
                g.loss_good == 1.0
            } else if g.r == 0.0 {
                g.loss_bad == 1.0
            } else {
                g.loss_good == 1.0 && g.loss_bad == 1.0
            };
            if lost_for_good {
                let field = if g.p > 0.0 && g.r == 0.0 {
                    "loss_bad"
                } else {
                    "loss_good"
                };
                return Err(err(format!(
                    "{at}.gilbert_elliott.{field}: with p = {}, r = {}, loss_bad = {} and \
                     loss_good = {} every packet is lost (as loss = 1); lower it",
                    g.p, g.r, g.loss_bad, g.loss_good
                )));
            }
        }
        match self.queue {
            QueueLimit::Packets(n) => in_range(&format!("{at}.queue"), n, 1, MAX_QUEUE_PACKETS)?,
            QueueLimit::Bytes(b) => {
                if b < largest {
                    return Err(err(format!(
                        "{at}.queue: {b} bytes hold no full-size packet \
                         ({largest} bytes with headers)"
                    )));
                }
                in_range(&format!("{at}.queue"), b, largest, MAX_QUEUE_BYTES)?
            }
        }
        self.discipline.validate(at, largest)?;
        for (j, dspec) in self.drops.iter().enumerate() {
            if dspec.flow as usize >= flows {
                return Err(err(format!(
                    "{at}.drops.{j}.flow: no flow {} (flows are numbered 0 to {} in \
                     file order)",
                    dspec.flow,
                    flows - 1
                )));
            }
            if dspec.seq == 0 {
                return Err(err(format!(
                    "{at}.drops.{j}.seq: must be >= 1 (segments count from 1), got 0"
                )));
            }
        }
        Ok(())
    }
}
