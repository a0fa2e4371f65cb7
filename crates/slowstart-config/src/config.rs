//! The canonical simulation config: what the Python front end produces from a TOML scenario
//! after resolving units and shorthands. All times are integer nanoseconds, sizes integer bytes,
//! rates integer bits per second. Unknown fields are rejected; [`SimConfig::validate`] names the
//! offending field and what it accepts.

use serde::{Deserialize, Deserializer, Serialize};
use slowstart_cc::CcSpec;
use slowstart_transport::settings::from_words;
pub use slowstart_transport::settings::{
    CeFeedback, CwndLimited, EcnReduction, LossDetection, PacerModel, ReceiverEcn, Recovery,
    MAX_ACK_EVERY, MAX_DELACK_NS, MAX_HEADER_BYTES, MAX_INITIAL_WINDOW,
};
use slowstart_transport::Settings;

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
    /// Traffic without congestion control beside the flows (`[[cross]]`, see [`CrossConfig`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross: Vec<CrossConfig>,
    #[serde(default)]
    pub trace: TraceConfig,
    /// Run to `duration_ns` even once every flow is done (a web flow is done with its last
    /// byte, before its last ACKs are back): `slowstart compare` simulates as long as the real
    /// run lasted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_to_end: bool,
    /// A BitTorrent swarm over access links (utp seed); with it, `nodes`, `links` and `flows`
    /// are empty: the swarm builds its own star and connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<SwarmConfig>,
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

/// How a link direction manages its queue. Every default is the one the algorithm's document
/// gives; times are nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Discipline {
    /// First in, first out; arrivals to a full buffer are dropped.
    #[default]
    DropTail,
    Codel(CodelConfig),
    FqCodel(FqCodelConfig),
    Pie(PieConfig),
    Red(RedConfig),
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Config),
}

impl Discipline {
    pub fn is_drop_tail(&self) -> bool {
        matches!(self, Discipline::DropTail)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Discipline::DropTail => "droptail",
            Discipline::Codel(_) => "codel",
            Discipline::FqCodel(_) => "fq_codel",
            Discipline::Pie(_) => "pie",
            Discipline::Red(_) => "red",
            Discipline::DualPi2(_) => "dualpi2",
        }
    }
}

/// CoDel, RFC 8289.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    /// Acceptable standing queue delay (RFC 8289 §4.4: 5 ms).
    #[serde(default = "codel_target")]
    pub target_ns: u64,
    /// Window over which the minimum sojourn time must stay above target (§4.3: 100 ms).
    #[serde(default = "codel_interval")]
    pub interval_ns: u64,
    /// No drop while at most this many bytes are queued (§5.5 `maxpacket`: one MTU; Linux
    /// `codel` uses the device MTU, 1514 bytes with its Ethernet header).
    #[serde(default = "one_mtu")]
    pub mtu_bytes: u64,
}

impl Default for CodelConfig {
    fn default() -> Self {
        Self {
            target_ns: codel_target(),
            interval_ns: codel_interval(),
            mtu_bytes: one_mtu(),
        }
    }
}

/// FQ-CoDel, RFC 8290: per-flow queues served by deficit round robin, each under CoDel.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Flow queues (RFC 8290 §5.2, the Linux default: 1024).
    #[serde(default = "fq_flows")]
    pub flows: u64,
    /// Bytes a queue may send per round (§5.2: one MTU; 1514 bytes in Linux, the Ethernet
    /// MTU with its header).
    #[serde(default = "one_mtu")]
    pub quantum_bytes: u64,
    #[serde(default = "codel_target")]
    pub target_ns: u64,
    #[serde(default = "codel_interval")]
    pub interval_ns: u64,
    /// Total bytes queued before the fattest flow loses packets (§4.1 drops from the fattest
    /// queue on overflow; Linux's `memory_limit` default: 32 MB).
    #[serde(default = "fq_memory_limit")]
    pub memory_limit_bytes: u64,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        Self {
            flows: fq_flows(),
            quantum_bytes: one_mtu(),
            target_ns: codel_target(),
            interval_ns: codel_interval(),
            memory_limit_bytes: fq_memory_limit(),
        }
    }
}

/// PIE, RFC 8033.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    /// Target queue delay `QDELAY_REF` (RFC 8033 §4.2: 15 ms).
    #[serde(default = "pie_target")]
    pub target_ns: u64,
    /// Drop probability update interval `T_UPDATE` (§4.2: 15 ms).
    #[serde(default = "pie_target")]
    pub t_update_ns: u64,
    /// Gains, in Hz (§4.2: alpha 0.125, beta 1.25).
    #[serde(default = "pie_alpha")]
    pub alpha: f64,
    #[serde(default = "pie_beta")]
    pub beta: f64,
    /// Burst allowance `MAX_BURST` (§4.4: 150 ms).
    #[serde(default = "pie_max_burst")]
    pub max_burst_ns: u64,
}

impl Default for PieConfig {
    fn default() -> Self {
        Self {
            target_ns: pie_target(),
            t_update_ns: pie_target(),
            alpha: pie_alpha(),
            beta: pie_beta(),
            max_burst_ns: pie_max_burst(),
        }
    }
}

/// RED, Floyd and Jacobson 1993, with the gentle variant (Floyd 2000). Thresholds in packets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Floyd and Jacobson 1993 §11 (their simulations): min_th 5, max_th 15 packets,
    /// max_p 1/50, w_q 0.002.
    #[serde(default = "red_min_th")]
    pub min_th: f64,
    #[serde(default = "red_max_th")]
    pub max_th: f64,
    #[serde(default = "red_max_p")]
    pub max_p: f64,
    #[serde(default = "red_w_q")]
    pub w_q: f64,
    /// Between max_th and 2 max_th the probability rises from max_p to 1 instead of jumping
    /// to 1 (Floyd, "Recommendation on using the gentle_ variant of RED", 2000).
    #[serde(default = "yes")]
    pub gentle: bool,
    /// Forced signals (above max_th, 2 max_th with gentle) are drops, as RFC 3168 §7 asks;
    /// false marks ECN-capable packets there too (ns-3 RedQueueDisc `UseHardDrop`). With
    /// min_th = max_th, w_q = 1, gentle and hard_drop off, RED is DCTCP's step: mark when the
    /// instantaneous queue holds K = min_th packets or more (Alizadeh et al. 2010 §3.1).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub hard_drop: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        Self {
            min_th: red_min_th(),
            max_th: red_max_th(),
            max_p: red_max_p(),
            w_q: red_w_q(),
            gentle: true,
            hard_drop: true,
        }
    }
}

/// DualPI2, RFC 9332, with Linux sch_dualpi2.c's defaults; times in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// PI2's target queueing delay (Linux `target` 15 ms; RFC 9332 §A.1 15 ms).
    #[serde(default = "dualpi2_target")]
    pub target_ns: u64,
    /// Update period of the base probability (Linux `tupdate` 16 ms).
    #[serde(default = "dualpi2_t_update")]
    pub t_update_ns: u64,
    /// Integral gain, Hz (Linux 41/256; RFC 9332: 0.16).
    #[serde(default = "dualpi2_alpha")]
    pub alpha: f64,
    /// Proportional gain, Hz (Linux 819/256; RFC 9332: 3.2).
    #[serde(default = "dualpi2_beta")]
    pub beta: f64,
    /// The L queue's step: an L packet that waited this long is marked (Linux 1 ms).
    #[serde(default = "dualpi2_step")]
    pub step_ns: u64,
    /// k: L packets are marked with k p' (Linux `coupling_factor` 2).
    #[serde(default = "dualpi2_coupling")]
    pub coupling: f64,
    /// Share of the bytes the C queue gets while both queues wait (Linux `c_protection` 10%).
    #[serde(default = "dualpi2_c_protection")]
    pub c_protection: f64,
    /// Overload (k p' above 1, RFC 9332 §4.2.3): drop instead of marking, ECN-capable C packets
    /// always and L packets with p'^2, as Linux's `drop_overload` (default on); false keeps
    /// marking and caps p' at 1/k, so the buffer's tail drop is the only loss.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub drop_overload: bool,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        Self {
            target_ns: dualpi2_target(),
            t_update_ns: dualpi2_t_update(),
            alpha: dualpi2_alpha(),
            beta: dualpi2_beta(),
            step_ns: dualpi2_step(),
            coupling: dualpi2_coupling(),
            c_protection: dualpi2_c_protection(),
            drop_overload: true,
        }
    }
}

fn dualpi2_target() -> u64 {
    15_000_000
}
fn dualpi2_t_update() -> u64 {
    16_000_000
}
fn dualpi2_alpha() -> f64 {
    41.0 / 256.0
}
fn dualpi2_beta() -> f64 {
    819.0 / 256.0
}
fn dualpi2_step() -> u64 {
    1_000_000
}
fn dualpi2_coupling() -> f64 {
    2.0
}
fn dualpi2_c_protection() -> f64 {
    0.1
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn codel_target() -> u64 {
    5_000_000
}
fn codel_interval() -> u64 {
    100_000_000
}
fn one_mtu() -> u64 {
    1514
}
fn fq_flows() -> u64 {
    1024
}
fn fq_memory_limit() -> u64 {
    32 << 20
}
fn pie_target() -> u64 {
    15_000_000
}
fn pie_alpha() -> f64 {
    0.125
}
fn pie_beta() -> f64 {
    1.25
}
fn pie_max_burst() -> u64 {
    150_000_000
}
fn red_min_th() -> f64 {
    5.0
}
fn red_max_th() -> f64 {
    15.0
}
fn red_max_p() -> f64 {
    0.02
}
fn red_w_q() -> f64 {
    0.002
}

impl Discipline {
    /// Check the parameters; `at` names the direction (`links.0.forward`), `largest` is the
    /// largest packet it must hold, headers included. A message names the canonical field
    /// (`links.0.forward.discipline.target_ns`), which the loader names as the scenario wrote it.
    pub fn validate(&self, at: &str, largest: u64) -> Result<(), SimError> {
        let positive = |field: &str, v: u64| {
            // Times at most an hour, sizes at most the largest buffer.
            let hi = if field.ends_with("_bytes") {
                MAX_QUEUE_BYTES
            } else {
                MAX_DELAY_NS
            };
            in_range(&format!("{at}.discipline.{field}"), v, 1, hi)
        };
        let fraction = |field: &str, v: f64, lo: f64, hi: f64| {
            if !(v.is_finite() && v > lo && v <= hi) {
                Err(err(format!(
                    "{at}.discipline.{field}: must be in ({lo}, {hi}], got {v}"
                )))
            } else {
                Ok(())
            }
        };
        match self {
            Discipline::DropTail => {}
            Discipline::Codel(c) => {
                positive("target_ns", c.target_ns)?;
                positive("interval_ns", c.interval_ns)?;
                positive("mtu_bytes", c.mtu_bytes.max(1))?;
            }
            Discipline::FqCodel(c) => {
                if !(1..=65536).contains(&c.flows) {
                    return Err(err(format!(
                        "{at}.discipline.flows: must be in 1..=65536, got {}",
                        c.flows
                    )));
                }
                positive("quantum_bytes", c.quantum_bytes)?;
                positive("target_ns", c.target_ns)?;
                positive("interval_ns", c.interval_ns)?;
                positive("memory_limit_bytes", c.memory_limit_bytes)?;
                // As a byte buffer must (`buffer` below): else nothing ever passes.
                if c.memory_limit_bytes < largest {
                    return Err(err(format!(
                        "{at}.discipline.memory_limit_bytes: {} bytes hold no full-size packet \
                         ({largest} bytes with headers)",
                        c.memory_limit_bytes
                    )));
                }
            }
            Discipline::Pie(c) => {
                positive("target_ns", c.target_ns)?;
                positive("t_update_ns", c.t_update_ns)?;
                positive("max_burst_ns", c.max_burst_ns.max(1))?;
                fraction("alpha", c.alpha, 0.0, 1e6)?;
                fraction("beta", c.beta, 0.0, 1e6)?;
            }
            Discipline::DualPi2(c) => {
                positive("target_ns", c.target_ns)?;
                positive("t_update_ns", c.t_update_ns)?;
                positive("step_ns", c.step_ns)?;
                fraction("alpha", c.alpha, 0.0, 1e6)?;
                fraction("beta", c.beta, 0.0, 1e6)?;
                fraction("coupling", c.coupling, 0.0, 1e3)?;
                fraction("c_protection", c.c_protection, 0.0, 1.0)?;
            }
            Discipline::Red(c) => {
                fraction("max_p", c.max_p, 0.0, 1.0)?;
                fraction("w_q", c.w_q, 0.0, 1.0)?;
                // Equal thresholds are a step (no linear part); max_th > 0 keeps gentle's slope
                // (1 - max_p) / max_th finite.
                if !(c.min_th.is_finite()
                    && c.min_th >= 0.0
                    && c.max_th >= c.min_th
                    && c.max_th > 0.0
                    && c.max_th.is_finite())
                {
                    return Err(err(format!(
                        "{at}.discipline.max_th: must be at least min_th >= 0 and above 0, got \
                         min_th {} max_th {}",
                        c.min_th, c.max_th
                    )));
                }
            }
        }
        Ok(())
    }
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

/// A connection and its transport. Every field but the ends has a default (the `default_*`
/// functions below, named in `#[serde(default)]`): what a `[[flow]]` table that leaves the key
/// out gets, here and in the Python loader, which reads them through [`defaults_json`].
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

/// A server and a client command (argument vectors, no shell) run in the two namespaces of a
/// real run, the emulated path between them. `{name}` in an argument is one of
/// [`PROGRAM_PLACEHOLDERS`], replaced at run time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramConfig {
    /// Started first; the client starts at the flow's `start` once the server listens.
    pub server: Vec<String>,
    /// Its exit (status 0) ends the flow.
    pub client: Vec<String>,
    /// Which of the two sends the flow's data, and so runs in the sender's namespace.
    #[serde(default)]
    pub sends: ProgramEnd,
    /// The port the server listens on; `None`: the testbed's own for the flow (5001 + index).
    #[serde(default)]
    pub port: Option<u16>,
    /// Whose exit ends the flow: the client's (the server is then stopped), or both (the
    /// server exits by itself too: an upload's receiver that stops at the end of the data,
    /// whose client may exit while its last bytes are still on the path).
    #[serde(default)]
    pub ends: ProgramEnds,
}

/// Whose exit ends a program pair's flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramEnds {
    #[default]
    Client,
    Both,
}

impl ProgramEnds {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("client", Self::Client), ("both", Self::Both)];
}

impl<'de> Deserialize<'de> for ProgramEnds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// One end of a program pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgramEnd {
    /// A download: HTTP, a QUIC client fetching a resource, `iperf3 -R`.
    #[default]
    Server,
    /// An upload: `iperf3` without `-R`, an HTTP POST.
    Client,
}

impl ProgramEnd {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("server", Self::Server), ("client", Self::Client)];
}

impl<'de> Deserialize<'de> for ProgramEnd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// What a program's `{name}` stands for at run time (python/slowstart/real/program.py fills
/// them in). A `{word}` not listed is refused, as a likely misspelling.
pub const PROGRAM_PLACEHOLDERS: &[(&str, &str)] = &[
    ("addr", "this end's address"),
    ("peer", "the other end's address"),
    ("port", "the server's port"),
    (
        "cc",
        "the flow's congestion control as Linux and ngtcp2 name it (reno, cubic, bbr)",
    ),
    ("size", "the flow's size in bytes"),
    (
        "dir",
        "the flow's folder, shared by both ends: `data` there holds `size` bytes",
    ),
    ("file", "that file, `{dir}/data`"),
    (
        "out",
        "a folder of this end's own, for what it writes (kept with `--out`)",
    ),
    (
        "qlog",
        "a folder for qlog files (`compare` overlays their cwnd)",
    ),
    ("key", "a self-signed private key (PEM) made for the run"),
    ("cert", "its certificate (PEM, CN slowstart)"),
];

/// Longest program command line, in arguments.
pub const MAX_PROGRAM_ARGS: usize = 4096;

impl ProgramConfig {
    /// Each command has a program and only known placeholders; the port is not 0.
    pub fn validate(&self, at: &str) -> Result<(), SimError> {
        for (end, argv) in [("server", &self.server), ("client", &self.client)] {
            let field = format!("{at}.{end}");
            if argv.first().is_none_or(|a| a.is_empty()) {
                return Err(err(format!(
                    "{field}: expected a command line such as \"curl -o {{out}}/data \
                     http://{{peer}}:{{port}}/data\", got none"
                )));
            }
            if argv.len() > MAX_PROGRAM_ARGS {
                return Err(err(format!(
                    "{field}: at most {MAX_PROGRAM_ARGS} arguments, got {}",
                    argv.len()
                )));
            }
            for arg in argv {
                for name in placeholders(arg) {
                    if !PROGRAM_PLACEHOLDERS.iter().any(|(n, _)| *n == name) {
                        let known: Vec<String> = PROGRAM_PLACEHOLDERS
                            .iter()
                            .map(|(n, _)| format!("{{{n}}}"))
                            .collect();
                        return Err(err(format!(
                            "{field}: unknown placeholder {{{name}}} (accepted: {})",
                            known.join(", ")
                        )));
                    }
                }
            }
        }
        if self.port == Some(0) {
            return Err(err(format!("{at}.port: must be in 1..=65535, got 0")));
        }
        Ok(())
    }
}

/// The `{word}` placeholders in `arg`: a brace, lowercase letters and `_`, a brace.
pub fn placeholders(arg: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let word = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .map_or(rest, |end| &rest[..end]);
        if !word.is_empty() && rest[word.len()..].starts_with('}') {
            out.push(word);
        }
    }
    out
}

/// Reno, the algorithm RFC 5681 specifies.
fn default_cc() -> CcSpec {
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

/// A source of traffic without congestion control (UDP): from `src` to `dst` it sends
/// `packet_bytes`-byte packets at `rate_bps` from `start_ns` until `stop_ns`, entering the links
/// as the flows' packets do; drops do not slow it. `onoff` alternates on and off periods, as
/// ns-2's Application/Traffic/Exponential does, sending at the rate only while on. Names in
/// error messages are the scenario's (`cross.N.rate`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossConfig {
    /// "cbr" (constant bit rate) or "onoff".
    #[serde(default = "cross_kind")]
    pub kind: String,
    #[serde(default = "cross_src")]
    pub src: String,
    #[serde(default = "cross_dst")]
    pub dst: String,
    /// Rate while sending, counting every byte of the packet (required).
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// Bytes on the wire per packet, IP and UDP headers included.
    #[serde(default = "cross_packet_bytes")]
    pub packet_bytes: u64,
    #[serde(default)]
    pub start_ns: u64,
    /// When it stops sending; `None`: at the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// `onoff` only: (mean) length of an on and of an off period; see [`CROSS_ON_NS`].
    #[serde(default)]
    pub on_ns: Option<u64>,
    #[serde(default)]
    pub off_ns: Option<u64>,
    /// `onoff` only: "exponential" (the default) or "fixed" period lengths.
    #[serde(default)]
    pub distribution: Option<String>,
}

/// ns-2's defaults for Application/Traffic/Exponential (tcl/lib/ns-default.tcl: burst_time_
/// and idle_time_ 0.5 s); exponential periods as there, since a sum of such sources gives the
/// Poisson-like burst arrivals background traffic is usually modelled with; "fixed" repeats
/// exactly, for a periodic burst.
pub const CROSS_ON_NS: u64 = 500_000_000;
pub const CROSS_OFF_NS: u64 = 500_000_000;
pub const CROSS_DISTRIBUTIONS: [&str; 2] = ["exponential", "fixed"];
pub const CROSS_KINDS: [&str; 2] = ["cbr", "onoff"];
/// Smallest and largest cross packet: IPv4 and UDP headers alone (RFC 791, RFC 768: 20 + 8
/// bytes) and IPv4's largest datagram (its 16-bit total length).
pub const MIN_CROSS_PACKET_BYTES: u64 = 28;
pub const MAX_CROSS_PACKET_BYTES: u64 = 65_535;

fn cross_kind() -> String {
    "cbr".into()
}
fn cross_src() -> String {
    "sender".into()
}
fn cross_dst() -> String {
    "receiver".into()
}
/// One full Ethernet-MTU IP packet.
fn cross_packet_bytes() -> u64 {
    1500
}

impl CrossConfig {
    pub fn is_onoff(&self) -> bool {
        self.kind == "onoff"
    }

    /// (on, off, exponential) of an `onoff` source, defaults applied.
    pub fn periods(&self) -> (u64, u64, bool) {
        (
            self.on_ns.unwrap_or(CROSS_ON_NS),
            self.off_ns.unwrap_or(CROSS_OFF_NS),
            self.distribution.as_deref().unwrap_or("exponential") == "exponential",
        )
    }

    /// `nodes` (and the set of them, `known`) to check `src` and `dst` against; `duration_ns`
    /// bounds the start.
    pub fn validate(
        &self,
        i: usize,
        nodes: &[String],
        known: &std::collections::HashSet<&str>,
        duration_ns: u64,
    ) -> Result<(), SimError> {
        let at = format!("cross.{i}");
        if !CROSS_KINDS.contains(&self.kind.as_str()) {
            return Err(err(format!(
                "{at}.kind: expected one of {}, got \"{}\"",
                CROSS_KINDS.join(", "),
                self.kind
            )));
        }
        for (end, name) in [("src", &self.src), ("dst", &self.dst)] {
            if !known.contains(name.as_str()) {
                return Err(err(format!(
                    "{at}.{end}: unknown node '{name}' (nodes: {})",
                    node_list(nodes)
                )));
            }
        }
        if self.src == self.dst {
            return Err(err(format!("{at}: src and dst must differ")));
        }
        let Some(rate) = self.rate_bps else {
            return Err(err(format!(
                "{at}.rate: missing (a rate in 1..={MAX_RATE_BPS} bits/s, e.g. \"100Mbps\")"
            )));
        };
        in_range(&format!("{at}.rate"), rate, 1, MAX_RATE_BPS)?;
        in_range(
            &format!("{at}.packet_size"),
            self.packet_bytes,
            MIN_CROSS_PACKET_BYTES,
            MAX_CROSS_PACKET_BYTES,
        )?;
        in_range(
            &format!("{at}.start"),
            self.start_ns,
            0,
            duration_ns.saturating_sub(1),
        )?;
        if let Some(stop) = self.stop_ns {
            in_range(
                &format!("{at}.stop"),
                stop,
                self.start_ns + 1,
                MAX_DURATION_NS,
            )?;
        }
        if self.is_onoff() {
            in_range(
                &format!("{at}.on"),
                self.on_ns.unwrap_or(CROSS_ON_NS),
                1,
                MAX_DELAY_NS,
            )?;
            in_range(
                &format!("{at}.off"),
                self.off_ns.unwrap_or(CROSS_OFF_NS),
                0,
                MAX_DELAY_NS,
            )?;
            if let Some(d) = &self.distribution {
                if !CROSS_DISTRIBUTIONS.contains(&d.as_str()) {
                    return Err(err(format!(
                        "{at}.distribution: expected one of {}, got \"{d}\"",
                        CROSS_DISTRIBUTIONS.join(", ")
                    )));
                }
            }
        } else {
            for (key, given) in [
                ("on", self.on_ns.is_some()),
                ("off", self.off_ns.is_some()),
                ("distribution", self.distribution.is_some()),
            ] {
                if given {
                    return Err(err(format!(
                        "{at}.{key}: only for kind = \"onoff\" (this source is \"{}\")",
                        self.kind
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The application on a flow. Requests of `web` and `bittorrent` travel from `dst` back to
/// `src` on the connection's request stream (see `slowstart_transport::request`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// `src` writes `size_bytes` (or an endless stream) at once.
    #[default]
    Bulk,
    /// An HTTP/1.1-like client at `dst` fetching objects from the server at `src`.
    Web(WebConfig),
    /// A BitTorrent downloader at `dst` requesting 16 KiB blocks from a seed at `src`.
    Bittorrent(BittorrentConfig),
}

impl AppConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            AppConfig::Bulk => "bulk",
            AppConfig::Web(_) => "web",
            AppConfig::Bittorrent(_) => "bittorrent",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfig {
    /// Request bytes (request line and headers), sent once per object.
    #[serde(default = "default_request_bytes")]
    pub request_bytes: u64,
    /// Response sizes, bytes; object `k` has size `response_bytes[k % len]`.
    pub response_bytes: Vec<u64>,
    /// Objects fetched one after the other; `None` for one per listed size.
    #[serde(default)]
    pub objects: Option<u64>,
    /// HTTP/1.1 persistent connection; without it each object has a connection of its own,
    /// opened when the previous object's last byte arrives.
    #[serde(default = "yes")]
    pub keep_alive: bool,
}

impl WebConfig {
    pub fn object_count(&self) -> u64 {
        self.objects.unwrap_or(self.response_bytes.len() as u64)
    }
}

/// libtorrent's request-queue policy (peer_connection.cpp `update_desired_queue_size`,
/// `second_tick`, `incoming_piece`; defaults from libtorrent 1.0 settings_pack).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BittorrentConfig {
    /// Block size requested at a time (BEP 3: 16 KiB).
    #[serde(default = "default_block_bytes")]
    pub block_bytes: u64,
    /// `request_queue_time`: seconds of download the queue should cover (3 s).
    #[serde(default = "default_queue_time_ns")]
    pub queue_time_ns: u64,
    /// Fewest requests kept outstanding (libtorrent `min_request_queue` = 2).
    #[serde(default = "default_min_queue")]
    pub min_queue: u64,
    /// Most requests kept outstanding (`max_out_request_queue`: 200 in 1.0, 500 from 1.1).
    #[serde(default = "default_max_queue")]
    pub max_queue: u64,
    /// libtorrent 1.0.6 request slow start: +1 target per block received.
    #[serde(default = "yes")]
    pub app_slow_start: bool,
    /// Leave request slow start when a second's download grew by no more than this over the
    /// previous second's, bytes (seed: 10 kB; libtorrent 1.1+ uses 5000).
    #[serde(default = "default_slow_start_threshold")]
    pub slow_start_threshold_bytes: u64,
    /// Blocks to download; `None` to keep downloading until the run ends.
    #[serde(default)]
    pub blocks: Option<u64>,
}

impl BittorrentConfig {
    /// libtorrent 2.0's settings (the real swarm's, python/slowstart/real/swarm.py):
    /// `max_out_request_queue` 500 and slow start left at 5000 bytes (peer_connection.cpp,
    /// `second_tick`); the rest as the defaults.
    pub fn libtorrent_2() -> Self {
        Self {
            max_queue: 500,
            slow_start_threshold_bytes: 5000,
            ..Self::default()
        }
    }
}

impl Default for BittorrentConfig {
    fn default() -> Self {
        Self {
            block_bytes: default_block_bytes(),
            queue_time_ns: default_queue_time_ns(),
            min_queue: default_min_queue(),
            max_queue: default_max_queue(),
            app_slow_start: true,
            slow_start_threshold_bytes: default_slow_start_threshold(),
            blocks: None,
        }
    }
}

fn yes() -> bool {
    true
}
fn default_request_bytes() -> u64 {
    400
}
fn default_block_bytes() -> u64 {
    16 * 1024
}
fn default_queue_time_ns() -> u64 {
    3_000_000_000
}
fn default_min_queue() -> u64 {
    2
}
fn default_max_queue() -> u64 {
    200
}
fn default_slow_start_threshold() -> u64 {
    10_000
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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

/// Which transport each leecher uploads with (Testa and Rossi §III).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Population {
    Tcp,
    Utp,
    /// Each leecher's transport drawn at random, half and half.
    Mixed,
}

/// What a leecher does once it has the whole file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seeding {
    /// Stays until the run ends.
    NeverLeave,
    /// Stays an exponential time with mean `stay_factor` x its own download time, then leaves
    /// and a new leecher arrives at once (constant swarm size).
    RandomStay,
}

/// Which transport carries a connection's piece data each way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionTransport {
    /// Each direction its uploader's, as the paper describes its runs: peers upload "according
    /// to the protocol of their choice" (Testa and Rossi §IV). The ns-2 module itself has no
    /// uTP: one `FullTcp/Newreno` agent per side of one two-way connection carries that side's
    /// pieces and messages (SiangYun/BTcode `bittorrent_connection.cc`).
    Uploader,
    /// Both directions the transport of the peer that opened the connection, as a real one is
    /// one TCP connection or one uTP socket (libtorrent: the connecting side's
    /// `enable_outgoing_utp`/`_tcp`).
    Connector,
}

impl ConnectionTransport {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("uploader", Self::Uploader), ("connector", Self::Connector)];
}

impl<'de> Deserialize<'de> for ConnectionTransport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// Which stream carries a peer's BitTorrent messages (all but piece messages) to the other end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Messages {
    /// A control stream of their own each way, beside the data streams (the module's agents
    /// as the model has run them): a request never waits behind piece data.
    Separate,
    /// The sender's own data stream to that end, behind the piece messages it already wrote,
    /// as BEP 3's one connection carries both each way (libtorrent appends a request to the
    /// send buffer that holds its outgoing blocks: `peer_connection::send_buffer`).
    WithData,
}

impl Messages {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("separate", Self::Separate), ("with_data", Self::WithData)];
}

impl<'de> Deserialize<'de> for Messages {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// When an uploader hands its transport the next requested block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SendBuffer {
    /// Once the transport has sent every byte of the previous piece message (ns-2 agents send
    /// what the application handed them, as the window allows).
    Transport,
    /// libtorrent 2.0's `peer_connection::fill_send_buffer`: while the bytes not yet sent are
    /// below a watermark of the connection's payload uploaded in the last second
    /// (`send_buffer_watermark_factor`), clamped to `send_buffer_low_watermark` and
    /// `send_buffer_watermark`; over TCP the kernel holds up to `send_not_sent_low_watermark`
    /// unsent bytes more (`TCP_NOTSENT_LOWAT`).
    Libtorrent,
}

impl SendBuffer {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("transport", Self::Transport),
        ("libtorrent", Self::Libtorrent),
    ];
}

impl<'de> Deserialize<'de> for SendBuffer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// How a leecher chooses the next piece to ask a neighbour for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PiecePicker {
    /// The ns-2 module's `chunk_selection`: a piece already partly requested first, whatever its
    /// availability (the lowest-numbered); a random piece until the first completes; then
    /// rarest first.
    Module,
    /// libtorrent 2.0's `piece_picker::pick_pieces` with its default settings: random pieces,
    /// partial ones first, until 4 are held (`initial_picker_threshold`); then rarest first, a
    /// partial piece ahead of a fresh one only when equally rare (`piece_pos::priority`), and
    /// partial pieces first, rarest first, only while more than 1.5 per connection are
    /// partial. Seeds are not counted in a piece's availability. Whole pieces from fast
    /// connections: `whole_pieces_threshold`.
    Libtorrent,
}

impl PiecePicker {
    pub const WORDS: &'static [(&'static str, Self)] =
        &[("module", Self::Module), ("libtorrent", Self::Libtorrent)];
}

impl<'de> Deserialize<'de> for PiecePicker {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl Population {
    /// The words a config may write, the scenario's spelling first; serialized as the last.
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("tcp", Self::Tcp),
        ("utp", Self::Utp),
        ("50-50", Self::Mixed),
        ("mixed", Self::Mixed),
    ];
}

impl Seeding {
    pub const WORDS: &'static [(&'static str, Self)] = &[
        ("never-leave", Self::NeverLeave),
        ("random-stay", Self::RandomStay),
        ("never_leave", Self::NeverLeave),
        ("random_stay", Self::RandomStay),
    ];
}

impl<'de> Deserialize<'de> for Population {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

impl<'de> Deserialize<'de> for Seeding {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        from_words(d, Self::WORDS)
    }
}

/// Every choice's words, each with the canonical value it stands for, keyed by the setting:
/// the loader turns a scenario's `"50-50"` into `"mixed"` with it (and leaves other words to
/// [`SimConfig::from_json`] to refuse).
fn words_json() -> serde_json::Value {
    fn table<T: Serialize>(words: &[(&str, T)]) -> serde_json::Value {
        let pairs = words.iter().map(|(w, v)| {
            let canonical = serde_json::to_value(v).expect("a choice serializes");
            (w.to_string(), canonical)
        });
        serde_json::Value::Object(pairs.collect())
    }
    serde_json::json!({
        "recovery": table(Recovery::WORDS),
        "loss_detection": table(LossDetection::WORDS),
        "cwnd_limited": table(CwndLimited::WORDS),
        "pacer": table(PacerModel::WORDS),
        "ecn_feedback": table(CeFeedback::WORDS),
        "receiver_ecn": table(ReceiverEcn::WORDS),
        "ecn_reduction": table(EcnReduction::WORDS),
        "population": table(Population::WORDS),
        "seeding": table(Seeding::WORDS),
        "connection_transport": table(ConnectionTransport::WORDS),
        "piece_picker": table(PiecePicker::WORDS),
        "send_buffer": table(SendBuffer::WORDS),
        "messages": table(Messages::WORDS),
        "sends": table(ProgramEnd::WORDS),
        "ends": table(ProgramEnds::WORDS),
    })
}

/// A swarm: seeds at t = 0, leechers arriving with exponential inter-arrival times, each peer
/// behind its own access link, a core of infinite capacity and no delay. Defaults: the swarm of
/// Testa and Rossi, "The impact of uTP on BitTorrent completion time" (ns-2), see `Default`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwarmConfig {
    /// Seeds present at t = 0 (they never leave).
    pub seeds: u64,
    /// Leechers that arrive (replacements of departed seeds come on top).
    pub leechers: u64,
    pub arrival_mean_ns: u64,
    pub file_bytes: u64,
    pub piece_bytes: u64,
    pub block_bytes: u64,
    pub population: Population,
    /// Whose transport carries a connection's piece data: matters in a 50-50 population only.
    pub connection_transport: ConnectionTransport,
    pub seeding: Seeding,
    /// Mean stay after completion as a fraction of the peer's download time (paper: 0.5).
    pub stay_factor: f64,
    /// End the run at this many completions (`None`: at `duration` or when all are done).
    pub stop_after_completions: Option<u64>,
    /// Uplink queues sampled every this often for the queue series (paper: 10 Hz), and with
    /// libtorrent's request queue each connection's requests outstanding (a real swarm's
    /// peers report `download_queue_length` as often).
    pub queue_sample_ns: u64,
    pub access: AccessConfig,
    pub bittorrent: SwarmBittorrentConfig,
    /// Data transport of TCP uploaders; also the control connections' settings.
    pub tcp: FlowConfig,
    /// Data transport of uTP uploaders.
    pub utp: FlowConfig,
}

/// Every peer's access link: `up` to the core, `down` from it, delay drawn per link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccessConfig {
    pub up_bps: u64,
    pub down_bps: u64,
    pub up_queue: QueueLimit,
    pub down_queue: QueueLimit,
    /// One-way propagation delay of each access link, uniform in [min, max], both directions.
    pub delay_min_ns: u64,
    pub delay_max_ns: u64,
}

/// The BitTorrent module of Eger et al. (ns-2), as the utp seed ran it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwarmBittorrentConfig {
    /// Peers the tracker returns per announce (`num_from_tracker`).
    pub tracker_peers: u64,
    /// Announce again while fewer connections than this (`min_peers`).
    pub min_peers: u64,
    /// Open no new connections at this many (`max_initiate`).
    pub max_initiate: u64,
    /// Accept no incoming connection at this many (`max_open_cons`).
    pub max_connections: u64,
    pub reannounce_ns: u64,
    /// Upload slots, the optimistic one included (`unchokes`).
    pub unchoke_slots: u64,
    pub rechoke_ns: u64,
    /// Rates for the choker are bytes over this window (ROLLING_AVERAGE x choking interval).
    pub rate_window_ns: u64,
    pub optimistic_ns: u64,
    /// Weight of a new connection in the optimistic draw (`opt_unchoke_prob = 3`).
    pub new_peer_weight: u64,
    /// Requests kept outstanding per connection (`pipelined_requests`); with
    /// `request_queue_time`, the depth a connection starts from.
    pub pipeline: u64,
    /// 0: `pipeline` requests, always (the ns-2 module). Otherwise libtorrent's request queue
    /// per connection (`app::bittorrent::RequestQueue`, `BittorrentConfig::libtorrent_2`):
    /// from 4 requests, one more per block received while the connection's payload per second
    /// still grows, then this long of its download rate (settings_pack `request_queue_time`),
    /// from 2 to 500 requests; `pipeline` is then unused.
    pub request_queue_time_ns: u64,
    /// Which piece a leecher asks for next (`PiecePicker`).
    pub piece_picker: PiecePicker,
    /// 0: off. Otherwise, with libtorrent's picker and request queue (which measures each
    /// connection's rate), a connection whose rate brings a whole piece within this long is
    /// asked for this long of its rate in whole pieces at once (at most 8 MiB), above the
    /// queue's target if need be, pieces others began only as backups (settings_pack
    /// `whole_pieces_threshold`, 20 s; `request_a_block`'s `prefer_contiguous_blocks`).
    pub whole_pieces_threshold_ns: u64,
    /// false: every block picked is requested at once, a whole-pieces range beyond the
    /// queue's target too. true: libtorrent's `peer_connection::send_block_requests` (RC_2_1):
    /// picked blocks wait at the downloader (`m_request_queue`) and are requested only while
    /// fewer than the queue's target are outstanding (`m_download_queue`); blocks are picked
    /// while both together are below it (`request_a_block`).
    pub hold_requests_beyond_target: bool,
    /// When an uploader hands its transport the next requested block (`SendBuffer`).
    pub send_buffer: SendBuffer,
    /// With `send_buffer = "libtorrent"`: the watermark's upper bound in bytes
    /// (settings_pack `send_buffer_watermark`, 500 KiB).
    pub send_buffer_watermark_bytes: u64,
    /// Its lower bound (`send_buffer_low_watermark`, 10 KiB).
    pub send_buffer_low_watermark_bytes: u64,
    /// The watermark in percent of the payload uploaded in the last second
    /// (`send_buffer_watermark_factor`, 50).
    pub send_buffer_watermark_factor: u64,
    /// Unsent bytes a TCP socket takes beyond the watermark (`send_not_sent_low_watermark`,
    /// 16 KiB, set as `TCP_NOTSENT_LOWAT`); uTP hands libtorrent back what it has not put in
    /// a packet, so none.
    pub send_not_sent_low_watermark_bytes: u64,
    /// Which stream carries the messages other than piece messages (`Messages`).
    pub messages: Messages,
    pub end_game: bool,
    pub anti_snubbing: bool,
    /// A peer that sent no block for this long is snubbed (ANTI_SNUBBING x choking interval).
    pub snub_ns: u64,
    pub super_seeding: bool,
}

impl Default for SwarmConfig {
    fn default() -> Self {
        // ns-2's one-way TCP as the paper used it: no SYN, window_ 20, windowInit_ 2, a
        // TCPSink that ACKs every segment, dupack-threshold loss detection, per-ACK growth.
        let ns2_agent = |cc: CcSpec| {
            let mut f = FlowConfig::new("uploader", "downloader");
            f.cc = cc;
            f.initcwnd = 2;
            f.initrwnd = 20;
            f.max_window_bytes = Some(20 * f.mss);
            f.handshake = false;
            f.delayed_ack = false;
            f.abc = false;
            f.recovery = Recovery::Rfc6675;
            f.loss_detection = LossDetection::Dupthresh;
            f
        };
        // The paper's LEDBAT module is an ns-2 TCP agent with a 25 ms target and no slow
        // start (ledbat's own default).
        let ledbat = CcSpec {
            name: "ledbat".into(),
            params: [(
                "target".to_string(),
                slowstart_cc::registry::ParamValue::Number(0.025),
            )]
            .into(),
            guest: None,
        };
        Self {
            seeds: 1,
            leechers: 100,
            arrival_mean_ns: 10_000_000_000,
            // Not given in the paper; its never-leave downloads take about 30 s at 8 Mbps.
            file_bytes: 25_000_000,
            piece_bytes: 256 * 1024,
            block_bytes: 16 * 1024,
            population: Population::Mixed,
            connection_transport: ConnectionTransport::Uploader,
            seeding: Seeding::RandomStay,
            stay_factor: 0.5,
            // 50 completions discarded, 50 kept.
            stop_after_completions: Some(100),
            queue_sample_ns: 100_000_000,
            access: AccessConfig::default(),
            bittorrent: SwarmBittorrentConfig::default(),
            tcp: ns2_agent(default_cc()),
            utp: ns2_agent(ledbat),
        }
    }
}

impl Default for AccessConfig {
    /// 1 Mbps up and 8 Mbps down, 200-packet buffers, 1 to 25 ms one way (the paper's ADSL).
    fn default() -> Self {
        Self {
            up_bps: 1_000_000,
            down_bps: 8_000_000,
            up_queue: QueueLimit::Packets(200),
            down_queue: QueueLimit::Packets(200),
            delay_min_ns: 1_000_000,
            delay_max_ns: 25_000_000,
        }
    }
}

impl Default for SwarmBittorrentConfig {
    /// The ns-2 module's settings as the paper ran them.
    fn default() -> Self {
        Self {
            tracker_peers: 25,
            min_peers: 10,
            max_initiate: 20,
            max_connections: 40,
            reannounce_ns: 300_000_000_000,
            unchoke_slots: 4,
            rechoke_ns: 10_000_000_000,
            rate_window_ns: 20_000_000_000,
            optimistic_ns: 30_000_000_000,
            new_peer_weight: 3,
            pipeline: 5,
            request_queue_time_ns: 0,
            piece_picker: PiecePicker::Module,
            whole_pieces_threshold_ns: 0,
            hold_requests_beyond_target: false,
            send_buffer: SendBuffer::Transport,
            // libtorrent 2.0's settings_pack.cpp defaults (also 2.1's).
            send_buffer_watermark_bytes: 500 * 1024,
            send_buffer_low_watermark_bytes: 10 * 1024,
            send_buffer_watermark_factor: 50,
            send_not_sent_low_watermark_bytes: 16 * 1024,
            messages: Messages::Separate,
            end_game: false,
            anti_snubbing: false,
            snub_ns: 60_000_000_000,
            super_seeding: false,
        }
    }
}

/// The `[path]` shorthand's defaults, for the loader that expands it into nodes and links:
/// the bottleneck's buffer in multiples of its BDP, no loss or jitter, and the sender's access
/// link (10 Gbps with a 100 MB buffer, fast enough never to be the bottleneck).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PathDefaults {
    pub buffer_bdp: u64,
    pub loss: f64,
    pub jitter_ns: u64,
    pub access_rate_bps: u64,
    pub access_buffer_bytes: u64,
}

pub const PATH_DEFAULTS: PathDefaults = PathDefaults {
    buffer_bdp: 1,
    loss: 0.0,
    jitter_ns: 0,
    access_rate_bps: 10_000_000_000,
    access_buffer_bytes: 100_000_000,
};

/// Every default of the canonical config as one JSON object, read by the Python loader
/// (`_core.defaults()`): `flow` (a flow's fields but its ends), `web` and `bittorrent` (a
/// flow's application), `trace`, `swarm` (with its `tcp` and `utp` transports), `path` and
/// `cross` (a `[[cross]]` source's, its ends included; `rate_bps` has none), `program` (a
/// `[flow.program]`'s, its commands excepted) and `program_placeholders` (name: meaning).
/// Fields written only when set (`ecn`) are written here too, with their default. `queue`: each
/// queue discipline's parameters, keyed by its `kind` (drop-tail has none). `words`: every
/// choice's accepted words and the canonical value of each. `limits`: bounds the front end
/// applies before a config exists (a trace's times, the files it reads, a sweep's size).
pub fn defaults_json() -> String {
    let flow = |f: FlowConfig| {
        let (ecn, cwnd_limited, feedback, pacer) = (f.ecn, f.cwnd_limited, f.ecn_feedback, f.pacer);
        let receiver_ecn = serde_json::to_value(f.receiver_ecn).expect("a config serializes");
        let reduction = serde_json::to_value(f.ecn_reduction).expect("a config serializes");
        let mut v = serde_json::to_value(f).expect("a config serializes");
        let o = v.as_object_mut().expect("a struct is an object");
        o.remove("src");
        o.remove("dst");
        o.insert("ecn".into(), ecn.into());
        let rule = serde_json::to_value(cwnd_limited).expect("a config serializes");
        o.insert("cwnd_limited".into(), rule);
        let feedback = serde_json::to_value(feedback).expect("a config serializes");
        o.insert("ecn_feedback".into(), feedback);
        o.insert("receiver_ecn".into(), receiver_ecn);
        o.insert("ecn_reduction".into(), reduction);
        let pacer = serde_json::to_value(pacer).expect("a config serializes");
        o.insert("pacer".into(), pacer);
        o.insert("program".into(), serde_json::Value::Null);
        v
    };
    let swarm = SwarmConfig::default();
    let mut swarm_json = serde_json::to_value(&swarm).expect("a config serializes");
    swarm_json["tcp"] = flow(swarm.tcp);
    swarm_json["utp"] = flow(swarm.utp);
    let web = WebConfig {
        request_bytes: default_request_bytes(),
        response_bytes: vec![],
        objects: None,
        keep_alive: true,
    };
    let mut web_json = serde_json::to_value(web).expect("a config serializes");
    web_json
        .as_object_mut()
        .expect("a struct is an object")
        .remove("response_bytes");
    // A program's commands have no default; its other fields do.
    let mut program_json = serde_json::to_value(ProgramConfig {
        server: vec![],
        client: vec![],
        sends: ProgramEnd::default(),
        port: None,
        ends: ProgramEnds::default(),
    })
    .expect("a config serializes");
    let o = program_json.as_object_mut().expect("a struct is an object");
    o.remove("server");
    o.remove("client");
    let queue: serde_json::Map<String, serde_json::Value> = [
        Discipline::Codel(CodelConfig::default()),
        Discipline::FqCodel(FqCodelConfig::default()),
        Discipline::Pie(PieConfig::default()),
        Discipline::Red(RedConfig::default()),
        Discipline::DualPi2(DualPi2Config::default()),
    ]
    .iter()
    .map(|d| {
        let mut v = serde_json::to_value(d).expect("a config serializes");
        let kind = v
            .as_object_mut()
            .and_then(|o| o.remove("kind"))
            .expect("a discipline is tagged by its kind");
        // Written only when off in a config; the loader lists every default.
        match (d, v.as_object_mut()) {
            (Discipline::Red(c), Some(o)) => {
                o.insert("hard_drop".into(), c.hard_drop.into());
            }
            (Discipline::DualPi2(c), Some(o)) => {
                o.insert("drop_overload".into(), c.drop_overload.into());
            }
            _ => {}
        }
        (kind.as_str().expect("a kind is a word").to_string(), v)
    })
    .collect();
    let flow_json = flow(FlowConfig::new("", ""));
    serde_json::json!({
        "keys": crate::keys::keys_json(&flow_json),
        "flow": flow_json,
        "web": web_json,
        "bittorrent": BittorrentConfig::default(),
        "trace": TraceConfig::default(),
        "swarm": swarm_json,
        "path": PATH_DEFAULTS,
        "queue": queue,
        "cross": serde_json::from_str::<CrossConfig>("{}").expect("every field has a default"),
        "program": program_json,
        "program_placeholders": serde_json::Value::Object(
            PROGRAM_PLACEHOLDERS
                .iter()
                .map(|(name, meaning)| (name.to_string(), (*meaning).into()))
                .collect(),
        ),
        "words": words_json(),
        "limits": {
            "trace_ms": MAX_DELAY_NS / 1_000_000,
            "scenario_file_bytes": MAX_SCENARIO_FILE_BYTES,
            "trace_file_bytes": MAX_TRACE_FILE_BYTES,
            "sweep_points": MAX_SWEEP_POINTS,
        },
    })
    .to_string()
}

/// A serde path as validation names the field: `flows[0].recovery` is `flow.0.recovery`,
/// `flows[0].app.request_bytes` is `app.0.request`, and units leave the key (`min_rto_ns`);
/// a link's field stays canonical (`links.0.forward.delay_ns`), as its validation names it.
fn field_name(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut parts: Vec<String> = path
        .iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect();
    if parts.first().map(String::as_str) == Some("flows") {
        parts[0] = "flow".into();
        if parts.get(2).map(String::as_str) == Some("app") {
            let index = parts[1].clone();
            parts.splice(0..3, ["app".to_string(), index]);
        }
    }
    let canonical = parts.first().map(String::as_str) == Some("links");
    if let Some(last) = parts.last_mut() {
        if last != "header_bytes" && !canonical {
            for unit in ["_ns", "_bytes"] {
                if let Some(key) = last.strip_suffix(unit) {
                    *last = key.to_string();
                }
            }
        }
    }
    parts.join(".")
}

/// Node names for a message, the first few of many.
fn node_list(nodes: &[String]) -> String {
    let shown = nodes[..nodes.len().min(8)].join(", ");
    match nodes.len().saturating_sub(8) {
        0 => shown,
        more => format!("{shown}, and {more} more"),
    }
}

fn err(msg: String) -> SimError {
    SimError(msg)
}

/// `at: must be in lo..=hi, got v`: the one form every integer bound takes.
fn in_range(at: &str, v: u64, lo: u64, hi: u64) -> Result<(), SimError> {
    if v < lo || v > hi {
        Err(err(format!("{at}: must be in {lo}..={hi}, got {v}")))
    } else {
        Ok(())
    }
}

// Every integer setting's maximum. With these, sums of times (now + a delay, an RTO, a
// duration) stay far below u64::MAX, so the engine's arithmetic on them cannot wrap.
/// Longest run: 10^9 s (about 32 years).
pub const MAX_DURATION_NS: u64 = 1_000_000_000 * 1_000_000_000;
/// Longest propagation delay, jitter, timer or sampling interval: one hour (as long as the
/// longest RTO, `slowstart_transport::settings::MAX_RTO_NS`).
pub const MAX_DELAY_NS: u64 = 3_600 * 1_000_000_000;
/// Fastest link: 10 Tbps.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
/// Largest queue limit: 10^9 packets or 10^12 bytes.
pub const MAX_QUEUE_PACKETS: u64 = 1_000_000_000;
pub const MAX_QUEUE_BYTES: u64 = 1_000_000_000_000;
/// Largest send-buffer watermark of a swarm's uploaders: 1 GiB (libtorrent's is an int).
pub const MAX_SEND_BUFFER_BYTES: u64 = 1 << 30;
/// Most rows a trace table keeps, and fewest (decimation keeps every other row).
pub const MAX_TRACE_ROWS: u64 = 1_000_000_000;
pub const MIN_TRACE_ROWS: u64 = 2;
/// Largest scenario or sweep plan file the loader reads (the 60 000-node scenario of issue #31
/// is 529 kB), and largest capacity trace (Mahimahi's: a line per 1500-byte opportunity).
pub const MAX_SCENARIO_FILE_BYTES: u64 = 16 << 20;
pub const MAX_TRACE_FILE_BYTES: u64 = 256 << 20;
/// Most points (runs) one sweep may have, checked before its grid is built.
pub const MAX_SWEEP_POINTS: u64 = 10_000_000;
/// Most packets the cross sources of a run may send, all together, estimated before it (rate x
/// sending time / packet size, summed): about a microsecond of engine time each, so some 15
/// minutes at most.
pub const MAX_CROSS_PACKETS: u64 = 1_000_000_000;
/// Most (nodes + links) x route destinations: the routes' table and the work to fill it
/// (2^26: 256 MB of next hops, well under a second of searching).
pub const MAX_ROUTE_TABLE: u64 = 1 << 26;
/// Largest web request: it leaves as request packets at once.
pub const MAX_REQUEST_BYTES: u64 = 1_000_000;

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

impl SimConfig {
    /// Parse a canonical config; an error names the field as [`SimConfig::validate`] does
    /// (`flow.0.recovery: expected one of prr, rfc6675, got "fast"`), else `config`.
    pub fn from_json(text: &str) -> Result<Self, SimError> {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (field, inner) = (field_name(e.path()), e.inner());
            let text = inner.to_string();
            if field.is_empty() {
                return err(format!("config: {text}"));
            }
            // The field says where; serde_json's position only repeats it.
            let at = format!(" at line {} column {}", inner.line(), inner.column());
            err(format!(
                "{field}: {}",
                text.strip_suffix(&at).unwrap_or(&text)
            ))
        })
    }

    /// Check every value the engine relies on; the message names the field.
    pub fn validate(&self) -> Result<(), SimError> {
        in_range("duration", self.duration_ns, 1, MAX_DURATION_NS)?;
        let t = &self.trace;
        in_range("trace.flow_interval", t.flow_interval_ns, 0, MAX_DELAY_NS)?;
        in_range("trace.queue_interval", t.queue_interval_ns, 0, MAX_DELAY_NS)?;
        in_range("trace.max_rows", t.max_rows, MIN_TRACE_ROWS, MAX_TRACE_ROWS)?;
        if let Some(swarm) = &self.swarm {
            if !self.nodes.is_empty()
                || !self.links.is_empty()
                || !self.flows.is_empty()
                || !self.cross.is_empty()
            {
                return Err(err(
                    "swarm: a swarm builds its own peers and links; give no path, nodes, link, \
                     flow or cross"
                        .into(),
                ));
            }
            return swarm.validate(self.duration_ns, t.max_rows);
        }
        if self.nodes.is_empty() {
            return Err(err("nodes: at least two nodes are needed".into()));
        }
        let mut names = std::collections::HashSet::with_capacity(self.nodes.len());
        for n in &self.nodes {
            if !names.insert(n.as_str()) {
                return Err(err(format!("nodes: '{n}' is listed twice")));
            }
        }
        let known = |n: &str| names.contains(n);
        // Flows first: a link's buffer is checked against the largest packet they send.
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
                return Err(err(format!(
                    "{at}.dst: src and dst must differ, both are '{}'",
                    f.dst
                )));
            }
            f.validate_transport(&at)?;
            if f.size_bytes == Some(0) {
                return Err(err(format!("{at}.size: must be > 0 bytes or \"inf\"")));
            }
            if f.start_ns >= self.duration_ns {
                return Err(err(format!(
                    "{at}.start: {} s is not before the run ends (duration {} s)",
                    f.start_ns as f64 / 1e9,
                    self.duration_ns as f64 / 1e9
                )));
            }
            validate_app(i, f)?;
            if let Some(p) = &f.program {
                p.validate(&format!("{at}.program"))?;
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !known(name) {
                    return Err(err(format!(
                        "links.{i}.{end}: unknown node '{name}' (nodes: {})",
                        node_list(&self.nodes)
                    )));
                }
            }
            if l.a == l.b {
                return Err(err(format!("links.{i}: a link needs two different nodes")));
            }
            // A direction's messages name its canonical fields; the loader names them as the
            // scenario wrote them, through the keys that fill them (keys.rs).
            for (dir, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                let at = format!("links.{i}.{dir}");
                in_range(&format!("{at}.rate_bps"), d.rate_bps, 1, MAX_RATE_BPS)?;
                in_range(&format!("{at}.delay_ns"), d.delay_ns, 0, MAX_DELAY_NS)?;
                in_range(&format!("{at}.jitter_ns"), d.jitter_ns, 0, MAX_DELAY_NS)?;
                if !(0.0..1.0).contains(&d.loss) {
                    return Err(err(format!("{at}.loss: must be in [0, 1), got {}", d.loss)));
                }
                if let Some(&last) = d.rate_trace_ms.last() {
                    if d.rate_trace_ms.windows(2).any(|w| w[0] > w[1]) {
                        return Err(err(format!("{at}.rate_trace_ms: times must not decrease")));
                    }
                    in_range(
                        &format!("{at}.rate_trace_ms"),
                        last,
                        1,
                        MAX_DELAY_NS / 1_000_000,
                    )?;
                }
                if let Some(g) = &d.gilbert_elliott {
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
                // A queue must take the largest packet a flow sends, or nothing ever passes.
                let largest = self
                    .flows
                    .iter()
                    .map(|f| f.mss.saturating_add(f.header_bytes))
                    .chain(self.cross.iter().map(|c| c.packet_bytes))
                    .max()
                    .unwrap_or(1);
                match d.queue {
                    QueueLimit::Packets(n) => {
                        in_range(&format!("{at}.queue"), n, 1, MAX_QUEUE_PACKETS)?
                    }
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
                d.discipline.validate(&at, largest)?;
                for (j, dspec) in d.drops.iter().enumerate() {
                    if dspec.flow as usize >= self.flows.len() {
                        return Err(err(format!(
                            "{at}.drops.{j}.flow: no flow {} (flows are numbered 0 to {} in \
                             file order)",
                            dspec.flow,
                            self.flows.len() - 1
                        )));
                    }
                    if dspec.seq == 0 {
                        return Err(err(format!(
                            "{at}.drops.{j}.seq: must be >= 1 (segments count from 1), got 0"
                        )));
                    }
                }
            }
        }
        let mut cross_packets: u128 = 0;
        for (i, c) in self.cross.iter().enumerate() {
            c.validate(i, &self.nodes, &names, self.duration_ns)?;
            cross_packets += self.check_cross_work(i, c)?;
        }
        // Each source is in bounds; so must all of them be (issue #31: many sources).
        if cross_packets > MAX_CROSS_PACKETS as u128 {
            return Err(err(format!(
                "cross: the {} sources send about {cross_packets} packets in the run together, \
                 more than {MAX_CROSS_PACKETS}; use fewer or slower sources, larger packets, \
                 or stop them sooner",
                self.cross.len()
            )));
        }
        self.check_route_table()
    }

    /// A source no faster than the fastest link out of its node can take (else the excess is
    /// only dropped, at a cost in events), an on period at least one packet long, and at most
    /// [`MAX_CROSS_PACKETS`] packets sent over the run: the estimate, for the sum over sources.
    fn check_cross_work(&self, i: usize, c: &CrossConfig) -> Result<u128, SimError> {
        let rate = c.rate_bps.unwrap_or(1);
        let fastest = self
            .links
            .iter()
            .flat_map(|l| {
                let forward = (l.a == c.src).then_some(l.forward.rate_bps);
                forward
                    .into_iter()
                    .chain((l.b == c.src).then_some(l.reverse.rate_bps))
            })
            .max();
        if let Some(fastest) = fastest.filter(|&f| rate > f) {
            return Err(err(format!(
                "cross.{i}.rate: must not exceed the fastest link out of '{}' ({fastest} \
                 bits/s), got {rate}",
                c.src
            )));
        }
        if c.is_onoff() {
            let (on, _, _) = c.periods();
            let packet_ns = (c.packet_bytes as u128 * 8 * 1_000_000_000).div_ceil(rate as u128);
            if (on as u128) < packet_ns {
                return Err(err(format!(
                    "cross.{i}.on: must be at least one packet at the rate ({packet_ns} ns for \
                     {} bytes), got {on} ns",
                    c.packet_bytes
                )));
            }
        }
        let end = c.stop_ns.unwrap_or(u64::MAX).min(self.duration_ns);
        let mut sending_ns = end.saturating_sub(c.start_ns) as u128;
        if c.is_onoff() {
            let (on, off, _) = c.periods();
            sending_ns = sending_ns * on as u128 / (on as u128 + off as u128);
        }
        let packets = sending_ns * rate as u128 / (8 * 1_000_000_000 * c.packet_bytes as u128);
        if packets > MAX_CROSS_PACKETS as u128 {
            return Err(err(format!(
                "cross.{i}.rate: sends about {packets} packets of {} bytes in the run, more than \
                 {MAX_CROSS_PACKETS}; lower the rate, raise packet_size, or stop it sooner",
                c.packet_bytes
            )));
        }
        Ok(packets)
    }

    /// Routes are a table of next hops, one column per node a packet is addressed to (flow
    /// ends, cross sinks), found by a search over every node and link per column
    /// (`network::topology`): refused before it is built when that work is out of bounds.
    fn check_route_table(&self) -> Result<(), SimError> {
        let ends = self.flows.iter().flat_map(|f| [&f.src, &f.dst]);
        let dests: std::collections::HashSet<&String> =
            ends.chain(self.cross.iter().map(|c| &c.dst)).collect();
        let size = (self.nodes.len() as u64 + self.links.len() as u64) * dests.len() as u64;
        if size > MAX_ROUTE_TABLE {
            return Err(err(format!(
                "nodes: routes over {} nodes and {} links to {} destinations (flow ends and \
                 cross sinks) are {size} entries to compute, at most {MAX_ROUTE_TABLE}; use \
                 fewer nodes, links or flows",
                self.nodes.len(),
                self.links.len(),
                dests.len()
            )));
        }
        Ok(())
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
}

/// Largest file a swarm shares: 1 PB.
pub const MAX_FILE_BYTES: u64 = 1_000_000_000_000_000;
/// Most peers one swarm may have at the start (seeds and scheduled leechers).
pub const MAX_SWARM_PEERS: u64 = 100_000;
/// Most pieces a swarm's file may have, and most blocks per piece.
pub const MAX_PIECES: u64 = 1_000_000;
pub const MAX_BLOCKS_PER_PIECE: u64 = 4096;

impl SwarmConfig {
    /// `duration_ns` and `max_rows` (the run's and its trace's) bound the sampling interval.
    pub fn validate(&self, duration_ns: u64, max_rows: u64) -> Result<(), SimError> {
        let range =
            |field: &str, v: u64, lo: u64, hi: u64| in_range(&format!("swarm.{field}"), v, lo, hi);
        range("seeds", self.seeds, 1, MAX_SWARM_PEERS)?;
        range("leechers", self.leechers, 1, MAX_SWARM_PEERS - self.seeds)?;
        range("arrival_mean", self.arrival_mean_ns, 1, MAX_DELAY_NS)?;
        range("file", self.file_bytes, 1, MAX_FILE_BYTES)?;
        range("piece", self.piece_bytes, 1, MAX_FILE_BYTES)?;
        if self.piece_bytes > self.file_bytes {
            return Err(err(format!(
                "swarm.piece: must not exceed swarm.file ({} bytes), got {}",
                self.file_bytes, self.piece_bytes
            )));
        }
        range("block", self.block_bytes, 1, 1 << 24)?;
        if self.block_bytes > self.piece_bytes {
            return Err(err(format!(
                "swarm.block: must not exceed swarm.piece ({} bytes), got {}",
                self.piece_bytes, self.block_bytes
            )));
        }
        range(
            "file",
            self.file_bytes.div_ceil(self.piece_bytes),
            1,
            MAX_PIECES,
        )
        .map_err(|_| {
            err(format!(
                "swarm.piece: the file would have more than {MAX_PIECES} pieces"
            ))
        })?;
        if self.piece_bytes.div_ceil(self.block_bytes) > MAX_BLOCKS_PER_PIECE {
            return Err(err(format!(
                "swarm.block: a piece may hold at most {MAX_BLOCKS_PER_PIECE} blocks"
            )));
        }
        if !(self.stay_factor.is_finite() && self.stay_factor >= 0.0) {
            return Err(err(format!(
                "swarm.stay_factor: must be a finite number >= 0, got {}",
                self.stay_factor
            )));
        }
        if self.stop_after_completions == Some(0) {
            return Err(err(
                "swarm.stop_after: must be >= 1 completion or omitted".into()
            ));
        }
        range("queue_sample", self.queue_sample_ns, 1, MAX_DELAY_NS)?;
        // A sample interval no finer than the queue table can keep over the run.
        let samples = duration_ns / self.queue_sample_ns;
        if samples > max_rows {
            return Err(err(format!(
                "swarm.queue_sample: {} ns is {samples} samples in a {} s run, more than \
                 trace.max_rows ({max_rows}) keeps; at least {} ns (or raise trace.max_rows)",
                self.queue_sample_ns,
                duration_ns / 1_000_000_000,
                duration_ns.div_ceil(max_rows)
            )));
        }
        let a = &self.access;
        range("up", a.up_bps, 1, MAX_RATE_BPS)?;
        range("down", a.down_bps, 1, MAX_RATE_BPS)?;
        for (field, q) in [("buffer", a.up_queue), ("down_buffer", a.down_queue)] {
            match q {
                QueueLimit::Packets(n) => range(field, n, 1, MAX_QUEUE_PACKETS)?,
                QueueLimit::Bytes(b) => {
                    let largest = [&self.tcp, &self.utp]
                        .iter()
                        .map(|t| t.mss.saturating_add(t.header_bytes))
                        .max()
                        .unwrap_or(1);
                    range(field, b, largest, MAX_QUEUE_BYTES)?
                }
            }
        }
        if a.delay_min_ns > a.delay_max_ns {
            return Err(err(format!(
                "swarm.delay: the minimum must not exceed the maximum, got {} > {} ns",
                a.delay_min_ns, a.delay_max_ns
            )));
        }
        range("delay", a.delay_max_ns, 0, MAX_DELAY_NS)?;
        let b = &self.bittorrent;
        range(
            "bittorrent.tracker_peers",
            b.tracker_peers,
            1,
            MAX_SWARM_PEERS,
        )?;
        range("bittorrent.min_peers", b.min_peers, 0, MAX_SWARM_PEERS)?;
        range(
            "bittorrent.max_initiate",
            b.max_initiate,
            1,
            MAX_SWARM_PEERS,
        )?;
        range(
            "bittorrent.max_connections",
            b.max_connections,
            1,
            MAX_SWARM_PEERS,
        )?;
        range("bittorrent.reannounce", b.reannounce_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.unchoke_slots", b.unchoke_slots, 1, 10_000)?;
        range("bittorrent.rechoke", b.rechoke_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.rate_window", b.rate_window_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.optimistic", b.optimistic_ns, 1, MAX_DELAY_NS)?;
        range("bittorrent.new_peer_weight", b.new_peer_weight, 1, 1000)?;
        range("bittorrent.pipeline", b.pipeline, 1, 10_000)?;
        range(
            "bittorrent.request_queue_time",
            b.request_queue_time_ns,
            0,
            MAX_DELAY_NS,
        )?;
        range(
            "bittorrent.whole_pieces_threshold",
            b.whole_pieces_threshold_ns,
            0,
            MAX_DELAY_NS,
        )?;
        if b.whole_pieces_threshold_ns > 0
            && (b.piece_picker != PiecePicker::Libtorrent || b.request_queue_time_ns == 0)
        {
            return Err(err(
                "swarm.bittorrent.whole_pieces_threshold: needs piece_picker = \"libtorrent\" \
                 and request_queue_time above 0 (which measures each connection's rate)"
                    .into(),
            ));
        }
        if b.hold_requests_beyond_target && b.request_queue_time_ns == 0 {
            return Err(err(
                "swarm.bittorrent.hold_requests_beyond_target: needs request_queue_time above 0 \
                 (libtorrent's queue, whose target it holds to)"
                    .into(),
            ));
        }
        range(
            "bittorrent.send_buffer_low_watermark",
            b.send_buffer_low_watermark_bytes,
            1,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range(
            "bittorrent.send_buffer_watermark",
            b.send_buffer_watermark_bytes,
            b.send_buffer_low_watermark_bytes,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range(
            "bittorrent.send_buffer_watermark_factor",
            b.send_buffer_watermark_factor,
            1,
            10_000,
        )?;
        range(
            "bittorrent.send_not_sent_low_watermark",
            b.send_not_sent_low_watermark_bytes,
            0,
            MAX_SEND_BUFFER_BYTES,
        )?;
        range("bittorrent.snub", b.snub_ns, 1, MAX_DELAY_NS)?;
        // Counts of connections that max_connections caps: above it they never bind.
        for (field, v) in [
            ("min_peers", b.min_peers),
            ("max_initiate", b.max_initiate),
            ("unchoke_slots", b.unchoke_slots),
        ] {
            if v > b.max_connections {
                return Err(err(format!(
                    "swarm.bittorrent.{field}: must not exceed swarm.bittorrent.max_connections \
                     ({}), got {v}",
                    b.max_connections
                )));
            }
        }
        if b.super_seeding {
            return Err(err(
                "swarm.bittorrent.super_seeding: not modelled; only false is accepted".into(),
            ));
        }
        for (name, t) in [("tcp", &self.tcp), ("utp", &self.utp)] {
            let at = format!("swarm.{name}");
            t.validate_transport(&at)?;
        }
        Ok(())
    }
}

/// Most objects one web flow may fetch (per-object results are kept for the summary).
pub const MAX_WEB_OBJECTS: u64 = 10_000_000;

fn validate_app(i: usize, f: &FlowConfig) -> Result<(), SimError> {
    let at = format!("app.{i}");
    if !matches!(f.app, AppConfig::Bulk) && f.size_bytes.is_some() {
        return Err(err(format!(
            "flow.{i}.size: only for bulk flows; a {} app sets its own sizes (app.{i})",
            f.app.kind()
        )));
    }
    match &f.app {
        AppConfig::Bulk => {}
        AppConfig::Web(w) => {
            in_range(
                &format!("{at}.request"),
                w.request_bytes,
                1,
                MAX_REQUEST_BYTES,
            )?;
            if w.response_bytes.is_empty() {
                return Err(err(format!(
                    "{at}.response: at least one object size is needed"
                )));
            }
            if let Some(k) = w.response_bytes.iter().position(|&b| b == 0) {
                // One size is written without a list, so without an index.
                let field = match w.response_bytes.len() {
                    1 => format!("{at}.response"),
                    _ => format!("{at}.response.{k}"),
                };
                return Err(err(format!("{field}: must be > 0 bytes")));
            }
            let n = w.object_count();
            if n == 0 || n > MAX_WEB_OBJECTS {
                return Err(err(format!(
                    "{at}.objects: must be in 1..={MAX_WEB_OBJECTS}, got {n}"
                )));
            }
        }
        AppConfig::Bittorrent(b) => {
            if b.block_bytes == 0 || b.block_bytes > 1 << 24 {
                return Err(err(format!(
                    "{at}.block: must be in 1..=16777216 bytes, got {}",
                    b.block_bytes
                )));
            }
            if b.queue_time_ns == 0 {
                return Err(err(format!("{at}.queue_time: must be > 0 s")));
            }
            if b.min_queue == 0 {
                return Err(err(format!("{at}.min_queue: must be >= 1 request")));
            }
            if b.max_queue < b.min_queue || b.max_queue > 100_000 {
                return Err(err(format!(
                    "{at}.max_queue: must be in min_queue..=100000 ({}..=100000), got {}",
                    b.min_queue, b.max_queue
                )));
            }
            if b.blocks == Some(0) {
                return Err(err(format!(
                    "{at}.blocks: must be >= 1 or omitted (unbounded)"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_pair_names_its_commands_and_known_placeholders_only() {
        let program = |server: &str, client: &str, extra: &str| {
            let text = format!(r#"{{"server": {server}, "client": {client}{extra}}}"#);
            serde_json::from_str::<ProgramConfig>(&text)
        };
        let p = program(r#"["srv", "{addr}", "{port}"]"#, r#"["cli", "{peer}"]"#, "").unwrap();
        assert_eq!(p.sends, ProgramEnd::Server);
        assert_eq!(p.validate("flow.0.program"), Ok(()));
        let typo = program(r#"["srv", "--to={peer_addr}"]"#, r#"["cli"]"#, "").unwrap();
        let e = typo.validate("flow.0.program").unwrap_err().0;
        assert!(
            e.starts_with(
                "flow.0.program.server: unknown placeholder {peer_addr} (accepted: {addr}"
            ),
            "{e}"
        );
        // JSON or shell braces are not placeholders.
        assert_eq!(placeholders(r#"{"a": 1} ${HOME} {} {x}"#), ["x"]);
        let empty = program("[]", r#"["cli"]"#, "").unwrap();
        let e = empty.validate("flow.1.program").unwrap_err().0;
        assert!(
            e.starts_with("flow.1.program.server: expected a command line"),
            "{e}"
        );
        let e = program(r#"["s"]"#, r#"["c"]"#, r#", "sends": "both""#).unwrap_err();
        assert!(
            e.to_string().contains("expected one of server, client"),
            "{e}"
        );
        let upload = program(r#"["s"]"#, r#"["c"]"#, r#", "sends": "client""#).unwrap();
        assert_eq!(upload.sends, ProgramEnd::Client);
        assert!(program(r#"["s"]"#, r#"["c"]"#, r#", "shell": true"#).is_err());
    }

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

    #[test]
    fn a_bad_choice_names_its_field_and_every_accepted_word() {
        let flows = vec![crate::testing::flow("reno", Some(1))];
        let cfg =
            crate::testing::path(1_000_000, 1_000_000, QueueLimit::Packets(10), flows, vec![]);
        let mut good = serde_json::to_value(cfg).unwrap();
        let parse = |v: &serde_json::Value| SimConfig::from_json(&v.to_string()).map(|_| ());
        parse(&good).unwrap();
        let flow = &mut good["flows"][0];
        flow["recovery"] = "fast".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.recovery: expected one of prr, rfc6675, got "fast""#
        );
        good["flows"][0]["recovery"] = "prr".into();
        good["flows"][0]["loss_detection"] = 3.into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            "flow.0.loss_detection: expected one of rack, dupthresh, got 3"
        );
        good["flows"][0]["loss_detection"] = "rack".into();
        good["flows"][0]["cwnd_limited"] = "loose".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.cwnd_limited: expected one of linux, strict, got "loose""#
        );
        good["flows"][0]["cwnd_limited"] = "strict".into();
        good["flows"][0]["ecn_reduction"] = "gradual".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.ecn_reduction: expected one of immediate, prr, got "gradual""#
        );
        good["flows"][0]["ecn_reduction"] = "immediate".into();
        good["flows"][0]["min_rto_ns"] = "soon".into();
        assert!(parse(&good)
            .unwrap_err()
            .0
            .starts_with("flow.0.min_rto: invalid type"));
        good["flows"][0]["min_rto_ns"] = 1_000_000.into();
        good["flows"][0]["app"] =
            serde_json::json!({"kind": "web", "request_bytes": -1, "response_bytes": [1]});
        // An internally tagged enum is read whole, so the path stops at the app's table.
        let e = parse(&good).unwrap_err().0;
        assert!(e.starts_with("app.0: invalid value: integer `-1`"), "{e}");

        let swarm = |key: &str, word: &str| {
            let text = format!(
                r#"{{"name": "s", "duration_ns": 1, "nodes": [], "links": [], "flows": [],
                    "swarm": {{"{key}": "{word}"}}}}"#
            );
            SimConfig::from_json(&text).map(|c| c.swarm.unwrap())
        };
        assert_eq!(
            swarm("population", "50-50").unwrap().population,
            Population::Mixed
        );
        assert_eq!(
            swarm("seeding", "never-leave").unwrap().seeding,
            Seeding::NeverLeave
        );
        assert_eq!(
            swarm("population", "quic").unwrap_err().0,
            r#"swarm.population: expected one of tcp, utp, 50-50, mixed, got "quic""#
        );
        assert_eq!(
            swarm("seeding", "forever").unwrap_err().0,
            "swarm.seeding: expected one of never-leave, random-stay, never_leave, \
             random_stay, got \"forever\""
        );
        // Not a field's fault: the position says where.
        assert!(SimConfig::from_json("{")
            .unwrap_err()
            .0
            .starts_with("config: EOF"));
    }

    #[test]
    fn every_word_stands_for_a_value_that_serializes_as_the_loader_writes_it() {
        let words = words_json();
        assert_eq!(words["population"]["50-50"], "mixed");
        assert_eq!(words["seeding"]["random-stay"], "random_stay");
        assert_eq!(words["recovery"]["rfc6675"], "rfc6675");
        assert_eq!(words["cwnd_limited"]["strict"], "strict");
        assert_eq!(words["ecn_reduction"]["prr"], "prr");
        let d: serde_json::Value = serde_json::from_str(&defaults_json()).unwrap();
        assert_eq!(d["words"], words);
    }

    #[test]
    fn the_swarm_defaults_validate_and_an_empty_table_is_them() {
        let d = SwarmConfig::default();
        d.validate(4_000_000_000_000, 2_000_000).unwrap();
        let empty: SwarmConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(
            serde_json::to_string(&empty).unwrap(),
            serde_json::to_string(&d).unwrap()
        );
        // ns-2's window_ 20, in the default MSS.
        assert_eq!(d.tcp.max_window_bytes, Some(20 * 1460));
        assert_eq!(d.utp.cc.name, "ledbat");
    }

    #[test]
    fn defaults_json_holds_every_table_and_the_fields_written_only_when_set() {
        let d: serde_json::Value = serde_json::from_str(&defaults_json()).unwrap();
        for table in [
            "flow",
            "web",
            "bittorrent",
            "trace",
            "swarm",
            "path",
            "queue",
            "cross",
            "program",
            "program_placeholders",
        ] {
            assert!(d[table].is_object(), "{table}");
        }
        assert_eq!(
            d["program"],
            serde_json::json!({"sends": "server", "port": null, "ends": "client"})
        );
        assert_eq!(d["flow"]["program"], serde_json::Value::Null);
        assert_eq!(
            d["program_placeholders"].as_object().unwrap().len(),
            PROGRAM_PLACEHOLDERS.len()
        );
        assert_eq!(d["flow"]["ecn"], false);
        assert_eq!(d["flow"]["cwnd_limited"], "linux");
        assert_eq!(d["flow"]["pacer"], "linux");
        assert_eq!(d["flow"]["ecn_reduction"], "immediate");
        assert_eq!(d["swarm"]["tcp"]["ecn"], false);
        assert!(d["flow"].get("src").is_none() && d["web"].get("response_bytes").is_none());
        assert_eq!(d["trace"]["max_rows"], 2_000_000);
        assert_eq!(d["web"]["request_bytes"], 400);
        assert_eq!(d["path"]["access_rate_bps"], 10_000_000_000u64);
        assert_eq!(
            (&d["cross"]["src"], &d["cross"]["dst"]),
            (&"sender".into(), &"receiver".into())
        );
        let queue = d["queue"].as_object().unwrap();
        let kinds: Vec<&str> = queue.keys().map(String::as_str).collect();
        assert_eq!(kinds, ["codel", "dualpi2", "fq_codel", "pie", "red"]);
        assert_eq!(queue["dualpi2"]["alpha"], 41.0 / 256.0);
        assert_eq!(queue["red"]["hard_drop"], true);
        assert_eq!(queue["dualpi2"]["drop_overload"], true);
        assert_eq!(queue["codel"]["target_ns"], 5_000_000);
        assert_eq!(queue["fq_codel"]["memory_limit_bytes"], 32 << 20);
        assert_eq!(queue["pie"]["alpha"], 0.125);
        assert_eq!(queue["red"]["gentle"], true);
        // Each kind's defaults read back as that discipline, every parameter given.
        for (kind, params) in queue {
            let mut tagged = params.clone();
            tagged["kind"] = kind.as_str().into();
            let d: Discipline = serde_json::from_value(tagged).unwrap();
            assert_eq!(d.name(), kind);
            d.validate("links.0.forward", 1500).unwrap();
        }
        // Each default flow passes validation as the loader would send it.
        let mut f = FlowConfig::new("a", "b");
        f.size_bytes = Some(1);
        f.validate_transport("flow.0").unwrap();
    }
}
