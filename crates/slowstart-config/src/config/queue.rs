//! The queue disciplines a link direction may run (drop-tail, CoDel, FQ-CoDel, PIE, RED,
//! DualPI2): each one's parameters, defaults and bounds.

use super::*;

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
    /// Every discipline, each with its default parameters, in the order messages list them.
    pub fn each_with_defaults() -> [Discipline; 6] {
        [
            Discipline::DropTail,
            Discipline::Codel(CodelConfig::default()),
            Discipline::FqCodel(FqCodelConfig::default()),
            Discipline::Pie(PieConfig::default()),
            Discipline::Red(RedConfig::default()),
            Discipline::DualPi2(DualPi2Config::default()),
        ]
    }

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

    /// One line on what the discipline does, for the reference pages.
    pub fn doc(&self) -> &'static str {
        match self {
            Discipline::DropTail => {
                "first in, first out; arrivals to a full buffer are dropped (the default)"
            }
            Discipline::Codel(_) => {
                "CoDel (RFC 8289): drops at dequeue once the sojourn time stays above target"
            }
            Discipline::FqCodel(_) => {
                "FQ-CoDel (RFC 8290): CoDel per flow queue, served by deficit round robin"
            }
            Discipline::Pie(_) => {
                "PIE (RFC 8033): drops at enqueue with a probability steered by queue delay"
            }
            Discipline::Red(_) => {
                "RED (Floyd and Jacobson 1993) with gentle (Floyd 2000), on the average queue"
            }
            Discipline::DualPi2(_) => {
                "DualPI2 (RFC 9332): an L queue for ECT(1) and CE beside a classic one, coupled"
            }
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
