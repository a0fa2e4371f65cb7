//! The frame every loss-based algorithm shares: a slow-start rule, then an avoidance rule
//! (increase per ACK, multiplicative decrease on loss), with RFC 5681 §3 / RFC 6675 §5 window
//! bookkeeping around them. Reno, CUBIC, HighSpeed, Scalable and tuned AIMD differ only in their
//! [`AvoidanceRule`]; any of them runs with any [`SlowStart`] rule (`slow_start = ...`).

use std::fmt::Debug;

use crate::controller::{EcnCodepoint, EcnFeedback, NegotiatedEcn};
use crate::slow_start::{SlowStart, SlowStartStep};
use crate::window::{AckCounting, RateLimitedGrowth, WindowGrowth};
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
    /// The ECN feedback the handshake settled on (Prague's fallback to Reno).
    fn on_ecn_negotiated(&mut self, _ecn: NegotiatedEcn) {}
    /// One ACK's ECN feedback (DCTCP's estimate of the marked fraction).
    fn on_ecn_feedback(&mut self, _feedback: &EcnFeedback) {}
    /// The codepoint the rule's data packets carry with ECN (Prague's ECT(1)).
    fn ecn_codepoint(&self) -> EcnCodepoint {
        EcnCodepoint::Ect0
    }
    /// Retransmission timeout: forget epoch state.
    fn on_rto(&mut self) {}
    /// A recovery episode (fast, or the repair after a timeout) ended.
    fn on_recovery_exit(&mut self) {}
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
/// Denominator of beta_ecn: `ABE_NUM / ABE_DEN` = 4/5.
pub const ABE_DEN: u64 = 5;

/// A loss-based controller: slow-start rule `slow_start`, avoidance rule `A`.
#[derive(Clone, Debug)]
pub struct LossBased<A: AvoidanceRule> {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    growth: WindowGrowth,
    phase: Phase,
    rate_limited: RateLimitedGrowth,
    /// draft-ietf-ccwg-ratelimited-increase maxFS, bytes (0 after a reduction).
    max_fs: u64,
    /// The slow-start rule (`slow_start = ...`).
    pub slow_start: SlowStart,
    /// The congestion-avoidance rule: increase per ACK, decrease on congestion.
    pub rule: A,
}

impl<A: AvoidanceRule> LossBased<A> {
    /// A controller at `initcwnd` segments of `mss` bytes, ssthresh unset, in `slow_start`'s
    /// initial phase.
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
            rate_limited: RateLimitedGrowth::CwndLimited,
            max_fs: initcwnd.max(1) * mss,
            slow_start,
            rule,
        }
    }

    /// Growth on ACKs that are not cwnd-limited (default: none).
    pub fn with_rate_limited_growth(mut self, growth: RateLimitedGrowth) -> Self {
        self.rate_limited = growth;
        self
    }

    /// draft-ietf-ccwg-ratelimited-increase §3: cwnd no larger than limit(maxFS), without
    /// taking back what cwnd already had.
    fn cap_growth(&mut self, before: u64, slow_start: bool) {
        let limit = if slow_start {
            2 * self.max_fs
        } else {
            self.max_fs + self.mss
        };
        self.cwnd = self.cwnd.min(limit.max(before));
    }

    /// Set the window from outside the frame (Careful Resume's jump, validation and retreat,
    /// RFC 9959 §4): cwnd, and ssthresh when given; partial growth credit is forgotten.
    pub fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) {
        if cwnd < self.cwnd {
            self.max_fs = 0;
        }
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

    /// One ACK's growth: the slow-start rule's step, then the avoidance rule's increase.
    fn grow(&mut self, ack: &AckEvent) {
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
        self.max_fs = self.max_fs.max(sent.bytes_in_flight);
        if self.phase.is_initial_slow_start() {
            self.slow_start.on_packet_sent(sent);
        }
    }

    /// maxFS is read only when growth is capped (`cap_growth`).
    fn uses_packet_sent(&self) -> bool {
        self.rate_limited == RateLimitedGrowth::Capped || self.slow_start.uses_packet_sent()
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.rule.observe(ack);
        let every_ack = self.phase.is_initial_slow_start()
            && self.in_slow_start()
            && self.slow_start.samples_every_ack();
        let grows = ack.cwnd_limited || self.rate_limited != RateLimitedGrowth::CwndLimited;
        if ack.in_recovery || !(grows || every_ack) {
            return;
        }
        if self.rate_limited == RateLimitedGrowth::Capped {
            let (before, slow_start) = (self.cwnd, self.in_slow_start());
            self.grow(ack);
            self.cap_growth(before, slow_start);
        } else {
            self.grow(ack);
        }
    }

    fn on_rtt_sample(&mut self, _now: Nanos, rtt: Nanos) {
        if self.phase.is_initial_slow_start() && self.in_slow_start() {
            self.cwnd = self.slow_start.on_rtt_sample(rtt, self.cwnd, self.ssthresh);
            self.cwnd = self.rule.on_rtt_sample(rtt, self.cwnd, self.mss);
        }
    }

    fn on_ecn_negotiated(&mut self, ecn: NegotiatedEcn) {
        self.rule.on_ecn_negotiated(ecn);
    }

    fn on_ecn_feedback(&mut self, feedback: &EcnFeedback) {
        self.rule.on_ecn_feedback(feedback);
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
        self.max_fs = 0;
        self.growth.reset();
        self.phase = Phase::Recovery;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.rule.on_recovery_exit();
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
        self.max_fs = 0;
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

    fn ecn_codepoint(&self) -> EcnCodepoint {
        self.rule.ecn_codepoint()
    }

    fn phase(&self) -> Phase {
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;

    const MSS: u64 = 1000;

    /// A Reno sender counting in packets: sends, then the ACKs of what it sent.
    struct Sender {
        c: LossBased<RenoRule>,
        in_flight: u64,
    }

    impl Sender {
        fn new(growth: RateLimitedGrowth) -> Self {
            let c = LossBased::new(MSS, 10, AckCounting::Bytes, SlowStart::Standard, RenoRule)
                .with_rate_limited_growth(growth);
            Sender { c, in_flight: 0 }
        }

        /// One round: `packets` sent, then acknowledged one by one; cwnd-limited when the
        /// round filled cwnd.
        fn round(&mut self, packets: u64) {
            let cwnd_limited = packets * MSS >= self.c.cwnd();
            for _ in 0..packets {
                self.in_flight += MSS;
                self.c.on_packet_sent(&SentEvent {
                    bytes: MSS,
                    bytes_in_flight: self.in_flight,
                    ..Default::default()
                });
            }
            for _ in 0..packets {
                self.in_flight -= MSS;
                self.c.on_ack(&AckEvent {
                    bytes_acked: MSS,
                    mss: MSS,
                    bytes_in_flight: self.in_flight,
                    cwnd_limited,
                    ..Default::default()
                });
            }
        }
    }

    /// draft-ietf-ccwg-ratelimited-increase-11 §3.1: IW 10, send 10, pause, send 4: cwnd 24
    /// segments growing on every ACK, 20 with Rate-Limited Increase (2 maxFS); Linux's rule
    /// (no growth unless cwnd-limited) also stops at 20.
    #[test]
    fn draft_example_ten_then_four() {
        for (growth, cwnd) in [
            (RateLimitedGrowth::Unlimited, 24),
            (RateLimitedGrowth::Capped, 20),
            (RateLimitedGrowth::CwndLimited, 20),
        ] {
            let mut s = Sender::new(growth);
            s.round(10);
            s.round(4);
            assert_eq!(s.c.cwnd(), cwnd * MSS, "{growth:?}");
        }
    }

    /// The draft's Appendix A, in bytes: rounds of 4, 8, 4 and 20 packets. cwnd reaches
    /// 14000, then 2 maxFS = 20000 and stays; the full round 4 raises maxFS to 20000 and cwnd
    /// doubles to 40000. Linux's rule grows only in round 4.
    #[test]
    fn draft_appendix_rounds() {
        let mut s = Sender::new(RateLimitedGrowth::Capped);
        for (packets, cwnd) in [(4, 14_000), (8, 20_000), (4, 20_000), (20, 40_000)] {
            s.round(packets);
            assert_eq!(s.c.cwnd(), cwnd, "after a round of {packets}");
        }
        let mut s = Sender::new(RateLimitedGrowth::CwndLimited);
        for packets in [4, 8, 4] {
            s.round(packets);
        }
        assert_eq!(s.c.cwnd(), 10_000);
    }

    /// A reduction resets maxFS; in congestion avoidance the cap is maxFS + SMSS. Twenty
    /// rounds of 3 packets from cwnd 10: limit(maxFS) = 4 segments, so no growth (the cap
    /// takes nothing back); growing on every ACK, the 60 ACKs add 5 segments (10 + 11 + 12 +
    /// 13 ACKs per segment, 14 left over).
    #[test]
    fn reduction_resets_max_fs_and_avoidance_caps_at_max_fs_plus_one_segment() {
        for (growth, after) in [
            (RateLimitedGrowth::Capped, 10),
            (RateLimitedGrowth::Unlimited, 15),
        ] {
            let mut s = Sender::new(growth);
            s.round(10);
            s.c.on_congestion_event(&CongestionEvent {
                mss: MSS,
                ..Default::default()
            });
            s.c.on_recovery_exit(0);
            assert_eq!(s.c.max_fs, 0);
            s.c.set_window(10 * MSS, Some(10 * MSS));
            for _ in 0..20 {
                s.round(3);
            }
            assert_eq!(s.c.cwnd(), after * MSS, "{growth:?}");
        }
        // Full rounds raise maxFS to cwnd: one segment per round, as Reno.
        let mut s = Sender::new(RateLimitedGrowth::Capped);
        s.c.set_window(10 * MSS, Some(10 * MSS));
        s.round(10);
        assert_eq!(s.c.cwnd(), 11 * MSS);
    }
}
