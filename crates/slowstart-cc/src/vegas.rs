//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 13(8), 1995), with the per-RTT mechanics of Linux `net/ipv4/tcp_vegas.c`.
//!
//! Once per RTT, with the minimum RTT seen in that RTT (`rtt`) and the minimum ever (`base_rtt`),
//! `diff = cwnd * (rtt - base_rtt) / rtt` segments is the paper's estimate of this flow's packets
//! queued in the network ((Expected - Actual) * BaseRTT). Linux divides by `base_rtt` instead; we
//! keep the paper's denominator. In congestion avoidance cwnd moves by one segment per RTT: up if
//! `diff < alpha`, down if `diff > beta`. Slow start is Linux's, not the paper's: it doubles every
//! RTT like Reno (the paper doubles every other RTT) and ends when `diff > gamma`, setting
//! `cwnd = min(cwnd, target_cwnd + 1)` with `target_cwnd = cwnd * base_rtt / rtt`. Loss halves the
//! window like Reno (`tcp_reno_ssthresh`, as Linux Vegas does), not with the Floyd AIMD of the
//! net100 experiments.
//!
//! The same machinery, with [`SlowStartExit::LimitedSlowStart`], is `vegas-lss` (see
//! [`crate::vegas_lss`]).

use crate::params::{Accepts, ParamInfo, Params, Range};
use crate::params::{CcError, CommonParams};
use crate::round::RoundCounter;
use crate::window::{limited_slow_start_increase, AckCounting, WindowGrowth};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase};

/// Linux `tcp_vegas.c` module defaults: `alpha = 2`, `beta = 4`, `gamma = 1` segments. (The paper
/// and the net100 runs use alpha/beta = 1/3.)
pub const LINUX_ALPHA: f64 = 2.0;
/// Linux `beta`, segments.
pub const LINUX_BETA: f64 = 4.0;
/// Linux `gamma`, segments.
pub const LINUX_GAMMA: f64 = 1.0;

/// Linux `tcp_vegas_cong_avoid`: a Vegas decision needs more than two RTT samples in the RTT
/// ("if we only had 2 samples total ... they're almost certainly delayed ACKs"); else Reno.
const MIN_SAMPLES_PER_RTT: u32 = 3;

/// Linux `tcp_vegas_cong_avoid`: `if (tp->snd_cwnd < 2) tp->snd_cwnd = 2`.
const MIN_CWND_SEGMENTS: u64 = 2;

/// What happens when `diff > gamma` in the initial slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartExit {
    /// Linux Vegas: `cwnd = min(cwnd, target_cwnd + 1)`, ssthresh = cwnd, congestion avoidance.
    LeaveSlowStart,
    /// net100 (Dunigan): switch to RFC 3742 Limited Slow-Start with this `max_ssthresh`.
    LimitedSlowStart(MaxSsthresh),
}

/// `max_ssthresh` of the Limited Slow-Start that `vegas-lss` switches to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxSsthresh {
    /// The cwnd at the moment `diff` first exceeded gamma.
    CwndAtGamma,
    /// A fixed value, in bytes.
    Bytes(u64),
}

/// Congestion-avoidance rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Avoidance {
    /// Vegas: +-1 segment per RTT by `diff` against alpha and beta.
    Vegas,
    /// Reno: +1 MSS per RTT (RFC 5681 §3.1).
    Reno,
}

/// Vegas parameters (segments).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VegasConfig {
    /// Avoidance adds one segment per RTT while `diff < alpha`.
    pub alpha: f64,
    /// Avoidance removes one segment per RTT while `diff > beta`.
    pub beta: f64,
    /// The initial slow start ends (or hands over) once `diff > gamma`.
    pub gamma: f64,
    /// What ending the initial slow start does.
    pub exit: SlowStartExit,
    /// The congestion-avoidance rule.
    pub avoidance: Avoidance,
    /// Which RTT of a round `diff` is computed from.
    pub round_rtt: RoundRtt,
}

/// Which RTT of a round the once-per-RTT decision uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RoundRtt {
    /// The round's minimum (Linux `tcp_vegas.c`, filtering delayed-ACK noise).
    #[default]
    Min,
    /// The mean of the round's samples: what a user-space implementation timing every packet
    /// sees (the net100 atou runs), so queueing inside slow-start bursts counts.
    Mean,
}

impl Default for VegasConfig {
    fn default() -> Self {
        Self {
            alpha: LINUX_ALPHA,
            beta: LINUX_BETA,
            gamma: LINUX_GAMMA,
            exit: SlowStartExit::LeaveSlowStart,
            avoidance: Avoidance::Vegas,
            round_rtt: RoundRtt::Min,
        }
    }
}

/// One Vegas decision, kept for traces and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasSample {
    /// Minimum RTT in the RTT that just ended.
    pub rtt: Nanos,
    /// Lowest RTT sample of the connection (Linux `baseRTT`).
    pub base_rtt: Nanos,
    /// cwnd in segments when the decision was taken.
    pub cwnd_segments: u64,
    /// `cwnd * (rtt - base_rtt) / rtt`, whole segments (Linux keeps it an integer).
    pub diff: u64,
    /// `cwnd * base_rtt / rtt`, whole segments.
    pub target_cwnd: u64,
}

/// `diff` and `target_cwnd` in whole segments for a window of `cwnd_segments`.
pub fn vegas_diff(cwnd_segments: u64, rtt: Nanos, base_rtt: Nanos) -> (u64, u64) {
    let rtt = rtt.max(base_rtt).max(1) as u128;
    let cwnd = cwnd_segments as u128;
    let diff = cwnd * (rtt - base_rtt as u128) / rtt;
    let target = cwnd * base_rtt as u128 / rtt;
    (diff as u64, target as u64)
}

/// TCP Vegas as Linux tcp_vegas.c, with net100's variants (`vegas`, `vegas-lss`).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    growth: WindowGrowth,
    phase: Phase,
    // Linux `struct vegas`.
    /// `doing_vegas_now`: off outside the Open state (recovery, after a timeout).
    enabled: bool,
    base_rtt: Nanos,
    min_rtt: Nanos,
    /// Sum of this round's RTT samples (for `RoundRtt::Mean`).
    sum_rtt: u128,
    cnt_rtt: u32,
    /// Rounds by sequence (`beg_snd_nxt` as a delivered-bytes count): the RTT ends at the first
    /// ACK that delivers beyond everything that was outstanding when it began.
    rounds: RoundCounter,
    /// Re-enable Vegas on the next ACK (the transport left recovery).
    pending_enable: bool,
    /// After a timeout, re-enable once everything outstanding at the timeout is delivered
    /// (Linux leaves TCP_CA_Loss when `snd_una` passes `high_seq`).
    reenable_at: Option<u64>,
    last_delivered: u64,
    /// Limited Slow-Start's max_ssthresh once `vegas-lss` has switched to it.
    lss_max_ssthresh: Option<u64>,
    last_sample: Option<VegasSample>,
}

impl Vegas {
    /// A controller in slow start at `initcwnd` segments of `mss` bytes, before any RTT sample.
    pub fn new(mss: u64, initcwnd: u64, counting: AckCounting, cfg: VegasConfig) -> Self {
        Self {
            cfg,
            mss,
            cwnd: initcwnd.max(1) * mss,
            ssthresh: u64::MAX,
            growth: WindowGrowth::new(counting),
            phase: Phase::SlowStart,
            enabled: true,
            base_rtt: Nanos::MAX,
            min_rtt: Nanos::MAX,
            sum_rtt: 0,
            cnt_rtt: 0,
            rounds: RoundCounter::new(),
            pending_enable: false,
            reenable_at: None,
            last_delivered: 0,
            lss_max_ssthresh: None,
            last_sample: None,
        }
    }

    /// Change which RTT of a round `diff` is computed from.
    pub fn set_round_rtt(&mut self, round_rtt: RoundRtt) {
        self.cfg.round_rtt = round_rtt;
    }

    /// The settings it runs with.
    pub fn config(&self) -> &VegasConfig {
        &self.cfg
    }

    /// Minimum RTT ever seen (`baseRTT`), if any.
    pub fn base_rtt(&self) -> Option<Nanos> {
        (self.base_rtt != Nanos::MAX).then_some(self.base_rtt)
    }

    /// The last once-per-RTT Vegas decision.
    pub fn last_sample(&self) -> Option<VegasSample> {
        self.last_sample
    }

    /// Limited Slow-Start's max_ssthresh once `vegas-lss` switched to it.
    pub fn lss_max_ssthresh(&self) -> Option<u64> {
        self.lss_max_ssthresh
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `vegas_enable`: start a fresh RTT at the current `snd_nxt`.
    fn enable(&mut self, ack: &AckEvent) {
        self.enabled = true;
        self.rounds
            .restart(ack.delivered.saturating_add(ack.bytes_in_flight));
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
        self.min_rtt = Nanos::MAX;
    }

    /// Linux `tcp_current_ssthresh` outside a cwnd reduction: `max(ssthresh, 3/4 cwnd)`.
    fn current_ssthresh(&self) -> u64 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    /// Linux `tcp_slow_start`: returns the credit left over above ssthresh.
    fn slow_start(&mut self, ack: &AckEvent) -> u64 {
        let (cwnd, leftover) = self.growth.slow_start(self.cwnd, self.ssthresh, ack);
        self.cwnd = cwnd;
        if !self.in_slow_start() {
            self.phase = Phase::CongestionAvoidance;
        }
        leftover
    }

    /// Linux `tcp_reno_cong_avoid` (the caller checked `cwnd_limited`).
    fn reno_step(&mut self, ack: &AckEvent) {
        let credit = if self.in_slow_start() {
            self.slow_start(ack)
        } else {
            self.growth.ack_credit(ack)
        };
        if credit > 0 {
            self.cwnd = self.growth.additive_increase(self.cwnd, credit, self.mss);
        }
    }

    /// RFC 3742 increase for this ACK's credit, with the switch-time max_ssthresh.
    fn limited_slow_start(&mut self, ack: &AckEvent, max_ssthresh: u64) {
        let credit = self.growth.ack_credit(ack);
        let per_mss = limited_slow_start_increase(self.cwnd, max_ssthresh, self.mss);
        let inc = (per_mss as u128 * credit as u128 / self.mss.max(1) as u128) as u64;
        self.cwnd = self.cwnd.saturating_add(inc).min(self.ssthresh);
        if !self.in_slow_start() {
            self.phase = Phase::CongestionAvoidance;
        }
    }

    /// The once-per-RTT Vegas adjustment (Linux `tcp_vegas_cong_avoid`, `cntRTT > 2` branch).
    fn vegas_adjust(&mut self, ack: &AckEvent) {
        let rtt = match self.cfg.round_rtt {
            RoundRtt::Min => self.min_rtt,
            RoundRtt::Mean => (self.sum_rtt / self.cnt_rtt.max(1) as u128) as Nanos,
        };
        let base = self.base_rtt;
        let cwnd_segments = self.cwnd / self.mss;
        let (diff, target_cwnd) = vegas_diff(cwnd_segments, rtt, base);
        self.last_sample = Some(VegasSample {
            rtt,
            base_rtt: base,
            cwnd_segments,
            diff,
            target_cwnd,
        });
        let diff = diff as f64;
        let initial = self.phase == Phase::SlowStart;
        if diff > self.cfg.gamma && self.in_slow_start() {
            match self.cfg.exit {
                SlowStartExit::LimitedSlowStart(max) if initial => {
                    // net100: Floyd's slow start from here on instead of leaving slow start.
                    let max_ssthresh = match max {
                        MaxSsthresh::CwndAtGamma => self.cwnd,
                        MaxSsthresh::Bytes(b) => b,
                    };
                    self.lss_max_ssthresh = Some(max_ssthresh);
                    self.phase = Phase::LimitedSlowStart;
                    self.limited_slow_start(ack, max_ssthresh);
                    return;
                }
                _ => {
                    // "Set cwnd to match the actual rate exactly ... then we add 1".
                    self.cwnd = self.cwnd.min((target_cwnd + 1) * self.mss);
                    self.ssthresh = self.ssthresh.min(self.cwnd);
                    self.phase = Phase::CongestionAvoidance;
                }
            }
        } else if self.in_slow_start() {
            if ack.cwnd_limited {
                self.slow_start(ack);
            }
        } else if diff > self.cfg.beta {
            self.cwnd = self.cwnd.saturating_sub(self.mss);
            self.ssthresh = self.ssthresh.min(self.cwnd);
        } else if diff < self.cfg.alpha && ack.cwnd_limited {
            self.cwnd += self.mss;
        }
        self.cwnd = self.cwnd.max(MIN_CWND_SEGMENTS * self.mss);
        self.ssthresh = self.current_ssthresh();
    }
}

impl CongestionController for Vegas {
    fn on_ack(&mut self, ack: &AckEvent) {
        self.last_delivered = ack.delivered;
        if self.pending_enable {
            self.pending_enable = false;
            self.enable(ack);
        }
        if self.reenable_at.is_some_and(|mark| ack.delivered >= mark) {
            self.reenable_at = None;
            self.enable(ack);
        }
        // Linux `tcp_vegas_pkts_acked`: every RTT sample feeds baseRTT and this RTT's minimum.
        if let Some(rtt) = ack.rtt {
            let rtt = rtt.max(1);
            self.base_rtt = self.base_rtt.min(rtt);
            self.min_rtt = self.min_rtt.min(rtt);
            self.sum_rtt += rtt as u128;
            self.cnt_rtt = self.cnt_rtt.saturating_add(1);
        }
        if ack.in_recovery {
            return;
        }
        if let Some(max_ssthresh) = self.lss_max_ssthresh {
            if self.phase == Phase::LimitedSlowStart {
                if ack.cwnd_limited {
                    self.limited_slow_start(ack, max_ssthresh);
                }
                return;
            }
        }
        let vegas_now = self.enabled
            && (self.cfg.avoidance == Avoidance::Vegas || self.phase == Phase::SlowStart);
        if !vegas_now {
            if ack.cwnd_limited {
                self.reno_step(ack);
            }
            return;
        }
        let sent = ack.delivered.saturating_add(ack.bytes_in_flight);
        if self.rounds.on_cumulative_ack(ack.delivered, sent) {
            // A full RTT since the last decision: `after(ack, vegas->beg_snd_nxt)`.
            if self.cnt_rtt < MIN_SAMPLES_PER_RTT || self.base_rtt == Nanos::MAX {
                if ack.cwnd_limited {
                    self.reno_step(ack);
                }
            } else {
                self.vegas_adjust(ack);
            }
            self.cnt_rtt = 0;
            self.sum_rtt = 0;
            self.min_rtt = Nanos::MAX;
        } else if self.in_slow_start() && ack.cwnd_limited {
            self.slow_start(ack);
        }
    }

    fn on_congestion_event(&mut self, _event: &CongestionEvent) {
        // Linux Vegas uses `tcp_reno_ssthresh`: half the window, at least two segments.
        self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.growth.reset();
        self.enabled = false;
        self.phase = Phase::Recovery;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.pending_enable = true;
        self.phase = if self.in_slow_start() {
            Phase::RtoRecovery
        } else {
            Phase::CongestionAvoidance
        };
    }

    fn on_rto(&mut self, _now: Nanos, bytes_in_flight: u64) {
        // RFC 5681 §3.1: one reduction per episode; loss window one segment.
        if self.phase != Phase::Recovery && self.phase != Phase::RtoRecovery {
            self.ssthresh = (self.cwnd / 2).max(2 * self.mss);
        }
        self.cwnd = self.mss;
        self.growth.reset();
        self.enabled = false;
        self.pending_enable = false;
        self.reenable_at = Some(self.last_delivered.saturating_add(bytes_in_flight));
        self.phase = Phase::RtoRecovery;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn phase(&self) -> Phase {
        self.phase
    }
}

/// alpha, beta and gamma, shared by `vegas` and `vegas-lss`.
pub const THRESHOLD_PARAMS: [ParamInfo; 4] = [
    ParamInfo {
        name: "alpha",
        doc: "congestion avoidance adds one segment per RTT while diff < alpha (segments queued)",
        default: "2",
        accepts: Accepts::Number(Range::number(0.0, 1000.0).with_note("at most beta")),
    },
    ParamInfo {
        name: "beta",
        doc: "congestion avoidance removes one segment per RTT while diff > beta",
        default: "4",
        accepts: Accepts::Number(Range::number(0.0, 1000.0).with_note("at least alpha")),
    },
    ParamInfo {
        name: "gamma",
        doc: "slow start ends (or hands over) when diff > gamma",
        default: "1",
        accepts: Accepts::number(0.0, 1000.0),
    },
    ParamInfo {
        name: "round_rtt",
        doc: "RTT of a round used for diff: min (Linux) or mean (user-space timing, net100 atou)",
        default: "min",
        accepts: Accepts::Word(&["min", "mean"]),
    },
];

/// The `round_rtt` parameter.
pub fn round_rtt(params: &Params) -> Result<RoundRtt, CcError> {
    Ok(match params.choice("round_rtt")? {
        "mean" => RoundRtt::Mean,
        _ => RoundRtt::Min,
    })
}

/// `vegas` parameters.
pub const PARAMS: &[ParamInfo] = &THRESHOLD_PARAMS;

/// alpha, beta, gamma from a spec; alpha must not exceed beta.
pub fn thresholds(params: &Params) -> Result<[f64; 3], CcError> {
    let alpha = params.number("alpha")?;
    let beta = params.number("beta")?;
    let gamma = params.number("gamma")?;
    if alpha > beta {
        return Err(CcError(format!(
            "cc: parameter 'alpha' = {alpha} must not exceed 'beta' = {beta}"
        )));
    }
    Ok([alpha, beta, gamma])
}

/// `vegas` from validated parameters.
pub fn from_params(params: &Params, common: &CommonParams) -> Result<Vegas, CcError> {
    let [alpha, beta, gamma] = thresholds(params)?;
    Ok(Vegas::new(
        common.mss,
        common.initcwnd,
        common.counting(),
        VegasConfig {
            alpha,
            beta,
            gamma,
            round_rtt: round_rtt(params)?,
            exit: SlowStartExit::LeaveSlowStart,
            avoidance: Avoidance::Vegas,
        },
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub const MSS: u64 = 1000;
    pub const MS: Nanos = 1_000_000;

    /// Feeds a controller ACKs of one MSS each from a sender that keeps its window full.
    pub struct Driver {
        pub delivered: u64,
        pub now: Nanos,
    }

    impl Driver {
        pub fn new() -> Self {
            Self {
                delivered: 0,
                now: 0,
            }
        }

        /// One ACK of one MSS with RTT sample `rtt`, sent with the window `cwnd` full.
        pub fn ack(&mut self, rtt: Option<Nanos>, cwnd: u64) -> AckEvent {
            self.delivered += MSS;
            self.now += MS;
            AckEvent {
                now: self.now,
                bytes_acked: MSS,
                mss: MSS,
                rtt,
                delivered: self.delivered,
                prior_in_flight: cwnd,
                bytes_in_flight: cwnd.saturating_sub(MSS),
                cwnd_limited: true,
                ..Default::default()
            }
        }

        /// One window of ACKs (cwnd at the start of the call), all with RTT `rtt`. With the window
        /// kept full, Vegas's RTT boundary falls on the first ACK of each call.
        pub fn round(&mut self, c: &mut impl CongestionController, rtt: Nanos) {
            for _ in 0..(c.cwnd() / MSS).max(1) {
                let a = self.ack(Some(rtt), c.cwnd());
                c.on_ack(&a);
            }
        }
    }

    fn vegas(initcwnd: u64) -> Vegas {
        Vegas::new(MSS, initcwnd, AckCounting::Bytes, VegasConfig::default())
    }

    fn loss() -> CongestionEvent {
        CongestionEvent {
            mss: MSS,
            ..Default::default()
        }
    }

    /// Rounds whose first ACK sees the empty queue and whose later ACKs see the queue a
    /// slow-start burst builds (half a millisecond per queued segment).
    fn bursty_rounds(v: &mut Vegas, rounds: usize) -> Vec<Phase> {
        let mut d = Driver::new();
        let mut phases = Vec::new();
        for _ in 0..rounds {
            let n = (v.cwnd() / MSS).max(1);
            for i in 0..n {
                let rtt = 100 * MS + i * MS / 2;
                let a = d.ack(Some(rtt), v.cwnd());
                v.on_ack(&a);
            }
            phases.push(v.phase());
        }
        phases
    }

    #[test]
    fn mean_round_rtt_sees_queueing_inside_slow_start_bursts() {
        let mut min = vegas(10);
        let mut mean = vegas(10);
        mean.set_round_rtt(RoundRtt::Mean);
        // The round minimum is always the base RTT: Linux's Vegas never leaves slow start here.
        assert!(bursty_rounds(&mut min, 6)
            .iter()
            .all(|p| *p == Phase::SlowStart));
        // The round mean grows with the burst: diff passes gamma within a few rounds.
        let phases = bursty_rounds(&mut mean, 6);
        assert_eq!(
            phases.last(),
            Some(&Phase::CongestionAvoidance),
            "{phases:?}"
        );
        assert!(mean.last_sample().unwrap().rtt > 100 * MS);
    }

    #[test]
    fn diff_is_the_papers_queue_estimate() {
        // 20 segments, base 100 ms, rtt 125 ms: (Expected - Actual) * BaseRTT
        // = (20/100 - 20/125) * 100 = 4 segments queued; target (Actual * BaseRTT) = 16.
        assert_eq!(vegas_diff(20, 125 * MS, 100 * MS), (4, 16));
        // Whole segments, as Linux: 10 * 9/109 = 0.83 -> 0.
        assert_eq!(vegas_diff(10, 109 * MS, 100 * MS), (0, 9));
        assert_eq!(vegas_diff(50, 100 * MS, 100 * MS), (0, 50));
    }

    #[test]
    fn linux_defaults() {
        let c = VegasConfig::default();
        assert_eq!((c.alpha, c.beta, c.gamma), (2.0, 4.0, 1.0));
    }

    /// Vegas in congestion avoidance at `segments` segments, base RTT `base`, then one RTT at
    /// `rtt` (its decision still sees the base-RTT samples of the round before).
    fn in_avoidance(segments: u64, base: Nanos, rtt: Nanos) -> (Vegas, Driver) {
        let mut v = vegas(segments * 2);
        let mut d = Driver::new();
        v.on_congestion_event(&loss());
        v.on_recovery_exit(0);
        assert_eq!(v.cwnd(), segments * MSS);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
        d.round(&mut v, base);
        assert_eq!(
            v.cwnd(),
            segments * MSS,
            "no decision in the first RTT after recovery"
        );
        d.round(&mut v, rtt);
        assert_eq!(v.cwnd(), (segments + 1) * MSS, "diff 0 at base RTT: +1");
        (v, d)
    }

    #[test]
    fn avoidance_adds_one_segment_per_rtt_below_alpha() {
        let (mut v, mut d) = in_avoidance(20, 100 * MS, 105 * MS);
        // diff = 21 * 5/105 = 1 < alpha = 2: +1 segment per RTT, once per RTT.
        for r in 1..=5 {
            d.round(&mut v, 105 * MS);
            assert_eq!(v.cwnd(), (21 + r) * MSS, "round {r}");
            assert_eq!(v.last_sample().unwrap().diff, 1);
        }
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
    }

    #[test]
    fn avoidance_holds_between_alpha_and_beta() {
        let (mut v, mut d) = in_avoidance(20, 100 * MS, 120 * MS);
        // diff = 21 * 20/120 = 3.5 -> 3: alpha (2) <= 3 <= beta (4): no change.
        for _ in 0..5 {
            d.round(&mut v, 120 * MS);
            assert_eq!(v.cwnd(), 21 * MSS);
        }
        assert_eq!(v.last_sample().unwrap().diff, 3);
    }

    #[test]
    fn avoidance_removes_one_segment_per_rtt_above_beta() {
        let (mut v, mut d) = in_avoidance(20, 100 * MS, 150 * MS);
        // diff = 21 * 50/150 = 7, 20 * 50/150 = 6, 19 * 50/150 = 6 > beta = 4: -1 per RTT.
        for r in 1..=3 {
            d.round(&mut v, 150 * MS);
            assert_eq!(v.cwnd(), (21 - r) * MSS, "round {r}");
            assert!(v.ssthresh() <= v.cwnd());
        }
        assert_eq!(v.last_sample().unwrap().diff, 6);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
    }

    #[test]
    fn decision_needs_three_rtt_samples() {
        let (mut v, mut d) = in_avoidance(20, 100 * MS, 100 * MS);
        // An RTT in which only two ACKs carry RTT samples (the rest are retransmissions or
        // delayed): its boundary behaves like Reno, which has no credit for a full window.
        for i in 0..21 {
            let a = d.ack((i == 1 || i == 2).then_some(300 * MS), v.cwnd());
            v.on_ack(&a);
        }
        assert_eq!(
            v.cwnd(),
            22 * MSS,
            "first ACK decided on the previous RTT's samples"
        );
        let before = v.last_sample();
        for _ in 0..22 {
            let a = d.ack(None, v.cwnd());
            v.on_ack(&a);
        }
        assert_eq!(v.cwnd(), 22 * MSS);
        assert_eq!(v.last_sample(), before, "no Vegas decision on two samples");
    }

    #[test]
    fn slow_start_doubles_per_rtt_without_queueing() {
        let mut v = vegas(10);
        let mut d = Driver::new();
        for r in 0..4 {
            assert_eq!(v.cwnd(), (10 * MSS) << r);
            d.round(&mut v, 100 * MS);
        }
        assert_eq!(v.phase(), Phase::SlowStart);
        assert_eq!(v.base_rtt(), Some(100 * MS));
    }

    /// Slow start to 40 segments at 100 ms, then ACKs at `rtt` until the phase changes.
    pub fn until_gamma(v: &mut Vegas, rtt: Nanos) -> Driver {
        let mut d = Driver::new();
        d.round(v, 100 * MS);
        d.round(v, 100 * MS);
        assert_eq!(v.cwnd(), 40 * MSS);
        for _ in 0..1000 {
            let a = d.ack(Some(rtt), v.cwnd());
            v.on_ack(&a);
            if v.phase() != Phase::SlowStart {
                return d;
            }
        }
        panic!("never left slow start");
    }

    #[test]
    fn gamma_exit_leaves_slow_start_at_target_plus_one() {
        let mut v = vegas(10);
        until_gamma(&mut v, 110 * MS);
        // The first RTT at 110 ms still sees 100 ms samples and doubles to 80 segments; the next
        // boundary has diff = 80 * 10/110 = 7 > gamma: cwnd = target + 1 = 80 * 100/110 + 1.
        let s = v.last_sample().unwrap();
        assert_eq!((s.cwnd_segments, s.diff, s.target_cwnd), (80, 7, 72));
        assert_eq!(v.cwnd(), 73 * MSS);
        assert_eq!(v.ssthresh(), v.cwnd());
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
    }

    #[test]
    fn diff_equal_to_gamma_stays_in_slow_start() {
        let mut v = vegas(10);
        let mut d = Driver::new();
        for _ in 0..3 {
            d.round(&mut v, 100 * MS);
        }
        // The first RTT at 101 ms decides on 100 ms samples; the next has 160 segments and
        // diff = 160 * 1/101 = 1.58 -> 1, not above gamma = 1.
        d.round(&mut v, 101 * MS);
        d.round(&mut v, 101 * MS);
        let s = v.last_sample().unwrap();
        assert_eq!((s.cwnd_segments, s.diff), (160, 1));
        assert_eq!(v.phase(), Phase::SlowStart);
        assert_eq!(v.cwnd(), 320 * MSS);
        // The next boundary: 320 * 1/101 = 3 > gamma.
        let a = d.ack(Some(101 * MS), v.cwnd());
        v.on_ack(&a);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
        assert_eq!(v.cwnd(), (320 * 100 / 101 + 1) * MSS);
    }

    #[test]
    fn loss_halves_like_reno_and_rto_slow_starts_with_reno() {
        let mut v = vegas(40);
        v.on_congestion_event(&loss());
        assert_eq!((v.cwnd(), v.ssthresh()), (20 * MSS, 20 * MSS));
        assert_eq!(v.phase(), Phase::Recovery);
        v.on_recovery_exit(0);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
        v.on_rto(0, 20 * MSS);
        assert_eq!((v.cwnd(), v.ssthresh()), (MSS, 10 * MSS));
        assert_eq!(v.phase(), Phase::RtoRecovery);
        // A second timeout in the same episode keeps ssthresh.
        v.on_rto(0, MSS);
        assert_eq!(v.ssthresh(), 10 * MSS);
        // Vegas is off until everything outstanding at the timeout is delivered: Reno slow start
        // even with a long queue.
        let mut d = Driver::new();
        for _ in 0..9 {
            let a = d.ack(Some(300 * MS), v.cwnd());
            v.on_ack(&a);
        }
        assert_eq!(v.cwnd(), 10 * MSS);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
    }

    #[test]
    fn no_growth_unless_cwnd_limited() {
        let mut v = vegas(10);
        let mut d = Driver::new();
        for _ in 0..30 {
            let a = AckEvent {
                cwnd_limited: false,
                ..d.ack(Some(100 * MS), v.cwnd())
            };
            v.on_ack(&a);
        }
        assert_eq!(v.cwnd(), 10 * MSS);
    }

    #[test]
    fn registry_builds_vegas_and_checks_thresholds() {
        use crate::params::ParamValue::Number;
        let c = crate::registry::build_for_test("vegas", MSS, &[]).unwrap();
        assert_eq!(c.cwnd(), 10 * MSS, "flow initcwnd, as Linux");
        let crate::Controller::Vegas(v) = crate::registry::build_for_test(
            "vegas",
            MSS,
            &[("alpha", Number(1.0)), ("beta", Number(3.0))],
        )
        .unwrap() else {
            panic!("not vegas");
        };
        assert_eq!(
            (v.config().alpha, v.config().beta, v.config().gamma),
            (1.0, 3.0, 1.0)
        );
        let err =
            crate::registry::build_for_test("vegas", MSS, &[("alpha", Number(5.0))]).unwrap_err();
        assert!(err.0.contains("alpha") && err.0.contains("beta"), "{err}");
        let err =
            crate::registry::build_for_test("vegas", MSS, &[("gamma", Number(-1.0))]).unwrap_err();
        assert!(
            err.0.contains("'gamma'") && err.0.contains("0..=1000"),
            "{err}"
        );
    }

    proptest! {
        #[test]
        fn cwnd_stays_sane(
            lss in any::<bool>(),
            events in prop::collection::vec(
                (0u8..10, 1u64..20_000, 1u64..2_000, any::<bool>(), any::<bool>()),
                1..400,
            ),
        ) {
            let cfg = if lss {
                VegasConfig {
                    exit: SlowStartExit::LimitedSlowStart(MaxSsthresh::CwndAtGamma),
                    avoidance: Avoidance::Reno,
                    ..Default::default()
                }
            } else {
                VegasConfig::default()
            };
            let mut v = Vegas::new(MSS, 10, AckCounting::Bytes, cfg);
            let mut delivered = 0u64;
            let mut now = 0;
            for (kind, bytes, rtt_ms, limited, recovery) in events {
                now += MS;
                match kind {
                    0 => v.on_congestion_event(&CongestionEvent { now, mss: MSS, ..Default::default() }),
                    1 => v.on_recovery_exit(now),
                    2 => v.on_rto(now, bytes * 10),
                    _ => {
                        delivered += bytes;
                        v.on_ack(&AckEvent {
                            now,
                            bytes_acked: bytes,
                            mss: MSS,
                            rtt: (kind != 3).then_some(rtt_ms * MS),
                            delivered,
                            prior_in_flight: v.cwnd(),
                            bytes_in_flight: v.cwnd().saturating_sub(bytes),
                            cwnd_limited: limited,
                            in_recovery: recovery,
                            ..Default::default()
                        });
                    }
                }
                prop_assert!(v.cwnd() >= MSS);
                prop_assert!(v.cwnd() < u64::MAX / 4);
                prop_assert!(v.ssthresh() >= MSS);
            }
        }
    }
}
