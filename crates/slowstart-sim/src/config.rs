//! The canonical simulation config: what the Python front end produces from a TOML scenario
//! after resolving units and shorthands. All times are integer nanoseconds, sizes integer bytes,
//! rates integer bits per second. Unknown fields are rejected; [`SimConfig::validate`] names the
//! offending field and what it accepts.

use serde::{Deserialize, Serialize};
use slowstart_cc::CcSpec;

use crate::SimError;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    pub duration_ns: u64,
    /// Node names. Hosts (flow endpoints) and routers alike.
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    #[serde(default)]
    pub trace: TraceConfig,
}

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

/// One direction of a link: a drop-tail queue served at `rate_bps`, then `delay_ns` of propagation.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionConfig {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueLimit,
    /// Independent random loss probability per packet, in [0, 1).
    #[serde(default)]
    pub loss: f64,
    /// Extra delay drawn uniformly in [0, jitter_ns] per packet, never reordering.
    #[serde(default)]
    pub jitter_ns: u64,
    /// Deterministic drops: the first transmission of data segment `seq` (1-based) of `flow`.
    #[serde(default)]
    pub drops: Vec<DropSpec>,
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

/// Loss recovery after fast retransmit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// RFC 6937 Proportional Rate Reduction (Linux's default).
    #[default]
    Prr,
    /// RFC 6675 §5: send while pipe < cwnd, with cwnd = ssthresh for the whole episode.
    Rfc6675,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Node sending the data and node receiving it.
    pub src: String,
    pub dst: String,
    pub cc: CcSpec,
    /// Bytes to transfer; `None` for unbounded.
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub start_ns: u64,
    pub mss: u64,
    /// TCP/IP header bytes on the wire per packet (MSS excludes them).
    pub header_bytes: u64,
    pub initcwnd: u64,
    pub initrwnd: u64,
    /// Receiver window ceiling (socket buffer), bytes; `None` for unlimited.
    pub max_rwnd_bytes: Option<u64>,
    /// Sender window ceiling (send buffer), bytes; `None` for unlimited.
    pub max_window_bytes: Option<u64>,
    pub handshake: bool,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    /// With delayed ACKs, ACK every `ack_every` full-sized segments (2 in RFC 1122 / RFC 5681).
    pub ack_every: u64,
    pub abc: bool,
    pub min_rto_ns: u64,
    pub max_rto_ns: u64,
    pub pacing: bool,
    pub recovery: Recovery,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Sample each flow's state at most once per this interval (0 = at every ACK).
    pub flow_interval_ns: u64,
    /// Sample each link's queue at most once per this interval (0 = at every change).
    pub queue_interval_ns: u64,
    /// Stop recording rows past this many (per table); the run itself continues.
    pub max_rows: u64,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self {
            flow_interval_ns: 0,
            queue_interval_ns: 0,
            max_rows: 2_000_000,
        }
    }
}

fn err(msg: String) -> SimError {
    SimError(msg)
}

impl SimConfig {
    pub fn from_json(text: &str) -> Result<Self, SimError> {
        serde_json::from_str(text).map_err(|e| err(format!("config: {e}")))
    }

    /// Check every value the engine relies on; the message names the field.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.duration_ns == 0 {
            return Err(err("duration: must be > 0".into()));
        }
        if self.nodes.is_empty() {
            return Err(err("nodes: at least two nodes are needed".into()));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if self.nodes[..i].contains(n) {
                return Err(err(format!("nodes: '{n}' is listed twice")));
            }
        }
        let known = |n: &str| self.nodes.iter().any(|x| x == n);
        for (i, l) in self.links.iter().enumerate() {
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !known(name) {
                    return Err(err(format!(
                        "links.{i}.{end}: unknown node '{name}' (nodes: {})",
                        self.nodes.join(", ")
                    )));
                }
            }
            if l.a == l.b {
                return Err(err(format!("links.{i}: a link needs two different nodes")));
            }
            for (dir, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                let at = format!("links.{i}.{dir}");
                if d.rate_bps == 0 {
                    return Err(err(format!("{at}.rate: must be > 0 bits per second")));
                }
                if !(0.0..1.0).contains(&d.loss) {
                    return Err(err(format!("{at}.loss: must be in [0, 1), got {}", d.loss)));
                }
                match d.queue {
                    QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
                        return Err(err(format!("{at}.buffer: must hold at least one packet")));
                    }
                    _ => {}
                }
                for (j, dspec) in d.drops.iter().enumerate() {
                    if dspec.flow as usize >= self.flows.len() {
                        return Err(err(format!(
                            "{at}.drop.{j}.flow: no flow {} (flows: 0..{})",
                            dspec.flow,
                            self.flows.len()
                        )));
                    }
                    if dspec.seq == 0 {
                        return Err(err(format!("{at}.drop.{j}.seq: segments count from 1")));
                    }
                }
            }
        }
        if self.flows.is_empty() {
            return Err(err("flow: at least one [[flow]] is needed".into()));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let at = format!("flow.{i}");
            for (end, name) in [("src", &f.src), ("dst", &f.dst)] {
                if !known(name) {
                    return Err(err(format!("{at}.{end}: unknown node '{name}'")));
                }
            }
            if f.src == f.dst {
                return Err(err(format!("{at}: src and dst must differ")));
            }
            if f.mss == 0 || f.mss > 65_000 {
                return Err(err(format!(
                    "{at}.mss: must be in 1..=65000, got {}",
                    f.mss
                )));
            }
            if f.initcwnd == 0 {
                return Err(err(format!("{at}.initcwnd: must be >= 1 segment")));
            }
            if f.initrwnd == 0 {
                return Err(err(format!("{at}.initrwnd: must be >= 1 segment")));
            }
            if f.size_bytes == Some(0) {
                return Err(err(format!("{at}.size: must be > 0 bytes or \"inf\"")));
            }
            if f.max_window_bytes.is_some_and(|w| w < f.mss) {
                return Err(err(format!("{at}.max_window: must be at least one MSS")));
            }
            if f.max_rwnd_bytes.is_some_and(|w| w < f.mss) {
                return Err(err(format!("{at}.max_rwnd: must be at least one MSS")));
            }
            if f.ack_every == 0 {
                return Err(err(format!("{at}.ack_every: must be >= 1")));
            }
            if f.min_rto_ns == 0 || f.max_rto_ns < f.min_rto_ns {
                return Err(err(format!("{at}.min_rto: must be > 0 and <= max_rto")));
            }
        }
        Ok(())
    }
}
