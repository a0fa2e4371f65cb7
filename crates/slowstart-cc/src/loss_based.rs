//! The frame every loss-based algorithm shares: a slow-start rule, then an avoidance rule
//! (increase per ACK, multiplicative decrease on loss), with RFC 5681 §3 / RFC 6675 §5 window
//! bookkeeping around them. Reno, CUBIC, HighSpeed, Scalable and tuned AIMD differ only in their
//! [`AvoidanceRule`]; any of them runs with any [`SlowStart`] rule (`slow_start = ...`).

use std::fmt::Debug;

use crate::slow_start::{SlowStart, SlowStartStep};
use crate::window::{AckCounting, WindowGrowth};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SentEvent};

/// Congestion-avoidance increase and loss decrease of one algorithm.
pub trait AvoidanceRule: Clone + Debug {
    /// Grow `cwnd` in congestion avoidance, given this ACK's `credit` (bytes, or one MSS per ACK
    /// with per-ACK counting). Returns the new cwnd.
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64;
    /// Multiplicative decrease: the ssthresh (and cwnd) to use after loss at window `cwnd`.
    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64;
    /// The decrease on an ECN echo: as for loss (RFC 3168 §6.1.2) unless the rule implements
    /// RFC 8511's Alternative Backoff with ECN.
    fn decrease_ecn(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        self.decrease(cwnd, event)
    }
    /// Every ACK, before any growth decision (cwnd-limited or not, in recovery or not): state
    /// the rule keeps from all samples, such as Hybla's lowest smoothed RTT.
    fn observe(&mut self, _ack: &AckEvent) {}
    /// The rule's own slow-start increase (Hybla's 2^rho - 1 per ACK), used instead of the
    /// slow-start rule's; `None` (the default) keeps the slow-start rule.
    fn slow_start_step(
        &mut self,
        _cwnd: u64,
        _ssthresh: u64,
        _ack: &AckEvent,
        _growth: &WindowGrowth,
    ) -> Option<SlowStartStep> {
        None
    }
    /// The handshake's RTT sample; returns the cwnd to start from (Linux `hybla_init`).
    fn on_rtt_sample(&mut self, _rtt: Nanos, cwnd: u64, _mss: u64) -> u64 {
        cwnd
    }
    /// Slow start ended at `cwnd` (reached ssthresh, or the slow-start rule exited).
    fn on_slow_start_exit(&mut self, _now: Nanos, _cwnd: u64) {}
    /// Retransmission timeout: forget epoch state.
    fn on_rto(&mut self) {}
}

/// Reno's rule, RFC 5681 §3.1: +1 MSS per RTT; halve on loss (Linux `tcp_reno_ssthresh`, as ns-2:
/// half of cwnd, at least two segments; RFC 5681 eq. (4) halves FlightSize, which differs only
/// when the sender is not cwnd-limited).
#[derive(Clone, Debug, Default)]
pub struct RenoRule;

impl AvoidanceRule for RenoRule {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        growth.additive_increase(cwnd, credit, ack.mss)
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        (cwnd / 2).max(2 * event.mss)
    }

    /// RFC 8511 §3.1 (ABE): on ECE keep beta_ecn = 0.8 of the window instead of half.
    fn decrease_ecn(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        (cwnd * ABE_NUM / ABE_DEN).max(2 * event.mss)
    }
}

/// The window [`RenoRule`] keeps on loss (its `cwnd / 2`), for algorithms derived from it.
pub const RENO_BETA: f64 = 0.5;

/// RFC 8511 §3.1: beta_ecn = 0.8, the window kept on an ECN echo by ABE.
pub const ABE_NUM: u64 = 4;
pub const ABE_DEN: u64 = 5;

/// A loss-based controller: slow-start rule `slow_start`, avoidance rule `A`.
#[derive(Clone, Debug)]
pub struct LossBased<A: AvoidanceRule> {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    growth: WindowGrowth,
    phase: Phase,
    pub slow_start: SlowStart,
    pub rule: A,
}

impl<A: AvoidanceRule> LossBased<A> {
    pub fn new(
        mss: u64,
        initcwnd: u64,
        counting: AckCounting,
        slow_start: SlowStart,
        rule: A,
    ) -> Self {
        Self {
            cwnd: initcwnd.max(1) * mss,
            ssthresh: u64::MAX,
            mss,
            growth: WindowGrowth::new(counting),
            phase: slow_start.initial_phase(),
            slow_start,
            rule,
        }
    }

    /// Set the window from outside the frame (Careful Resume's jump, validation and retreat,
    /// RFC 9959 §4): cwnd, and ssthresh when given; partial growth credit is forgotten.
    pub fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        self.cwnd = cwnd.max(self.mss);
        if let Some(ssthresh) = ssthresh {
            self.ssthresh = ssthresh.max(2 * self.mss);
        }
        self.growth.reset();
    }

    /// Enter `phase` from outside the frame (Careful Resume's Safe Retreat is a recovery).
    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    fn enter_avoidance(&mut self, now: Nanos) {
        if self.phase.is_initial_slow_start() || self.phase == Phase::RtoRecovery {
            self.rule.on_slow_start_exit(now, self.cwnd);
        }
        self.phase = Phase::CongestionAvoidance;
    }
}

impl<A: AvoidanceRule> CongestionController for LossBased<A> {
    fn on_packet_sent(&mut self, sent: &SentEvent) {
        if self.phase.is_initial_slow_start() {
            self.slow_start.on_packet_sent(sent);
        }
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.rule.observe(ack);
        let every_ack = self.phase.is_initial_slow_start()
            && self.in_slow_start()
            && self.slow_start.samples_every_ack();
        if ack.in_recovery || !(ack.cwnd_limited || every_ack) {
            return;
        }
        let mut credit = self.growth.ack_credit(ack);
        if self.in_slow_start() {
            let initial = self.phase.is_initial_slow_start();
            let own = self
                .rule
                .slow_start_step(self.cwnd, self.ssthresh, ack, &self.growth);
            let step = if let Some(step) = own {
                step
            } else if initial {
                self.slow_start
                    .on_ack(self.cwnd, self.ssthresh, ack, &self.growth)
            } else {
                // After a timeout: standard slow start back to ssthresh (RFC 5681 §3.1).
                SlowStart::standard_step(self.cwnd, self.ssthresh, ack, &self.growth)
            };
            self.cwnd = step.cwnd;
            credit = step.leftover_credit;
            if step.exit {
                self.ssthresh = self.cwnd;
            }
            if initial {
                self.phase = step.phase;
            }
            if self.in_slow_start() {
                return;
            }
            self.enter_avoidance(ack.now);
        } else if self.phase != Phase::CongestionAvoidance {
            self.enter_avoidance(ack.now);
        }
        if credit > 0 {
            self.cwnd = self.rule.increase(self.cwnd, credit, ack, &mut self.growth);
        }
    }

    fn on_rtt_sample(&mut self, _now: Nanos, rtt: Nanos) {
        if self.phase.is_initial_slow_start() && self.in_slow_start() {
            self.cwnd = self.slow_start.on_rtt_sample(rtt, self.cwnd, self.ssthresh);
            self.cwnd = self.rule.on_rtt_sample(rtt, self.cwnd, self.mss);
        }
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        if self.phase.is_initial_slow_start() {
            self.rule.on_slow_start_exit(event.now, self.cwnd);
        }
        let reduced = if event.ecn {
            self.rule.decrease_ecn(self.cwnd, event)
        } else {
            self.rule.decrease(self.cwnd, event)
        };
        self.ssthresh = reduced.max(2 * self.mss);
        self.cwnd = self.ssthresh;
        self.growth.reset();
        self.phase = Phase::Recovery;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.phase = if self.in_slow_start() {
            Phase::RtoRecovery
        } else {
            Phase::CongestionAvoidance
        };
    }

    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        // RFC 5681 §3.1: reduce ssthresh unless this episode already did; loss window = 1 MSS.
        if self.phase != Phase::Recovery && self.phase != Phase::RtoRecovery {
            let event = CongestionEvent {
                mss: self.mss,
                ..Default::default()
            };
            self.ssthresh = self.rule.decrease(self.cwnd, &event).max(2 * self.mss);
        }
        self.rule.on_rto();
        self.cwnd = self.mss;
        self.growth.reset();
        self.phase = Phase::RtoRecovery;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn pacing_rate(&self) -> Option<u64> {
        if self.phase.is_initial_slow_start() {
            self.slow_start.pacing_rate()
        } else {
            None
        }
    }

    fn send_quantum(&self) -> Option<u64> {
        if self.phase.is_initial_slow_start() {
            self.slow_start.send_quantum()
        } else {
            None
        }
    }

    fn phase(&self) -> Phase {
        self.phase
    }
}
