//! HyStart++ (RFC 9406 §4): delay-increase exit to Conservative Slow Start, then to congestion
//! avoidance after CSS_ROUNDS rounds unless the RTT falls back.

use super::SlowStartStep;
use crate::round::RoundCounter;
use crate::window::WindowGrowth;
use crate::{AckEvent, Nanos, Phase};

/// RFC 9406 §4.3 MIN_RTT_THRESH: RttThresh is at least 4 ms.
pub const MIN_RTT_THRESH: Nanos = 4_000_000;
/// MAX_RTT_THRESH: RttThresh is at most 16 ms.
pub const MAX_RTT_THRESH: Nanos = 16_000_000;
/// MIN_RTT_DIVISOR: RttThresh is lastRoundMinRTT / 8 between the two bounds.
pub const MIN_RTT_DIVISOR: u64 = 8;
/// N_RTT_SAMPLE: RTT samples per round before the delay test.
pub const N_RTT_SAMPLE: u32 = 8;
/// CSS_GROWTH_DIVISOR: Conservative Slow Start grows at a quarter of slow start's rate.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// CSS_ROUNDS: rounds in Conservative Slow Start before congestion avoidance.
pub const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3: L = 8 segments per ACK for non-paced senders (infinity when paced).
pub const L: u64 = 8;

/// RFC 9406 §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
/// MAX_RTT_THRESH)).
pub fn rtt_thresh(last_round_min_rtt: Nanos) -> Nanos {
    (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH)
}

/// HyStart++'s state for one connection (RFC 9406 §4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStartPlusPlus {
    /// The sender paces: no per-ACK cap L (RFC 9406 §4.2).
    pub paced: bool,
    /// Rounds by delivery: a rate sample's `prior_delivered` reaching the delivered count at
    /// round start ends one (stands in for windowEnd = SND.NXT, RFC 9406 §4.2).
    rounds: RoundCounter,
    last_round_min_rtt: Nanos,
    current_round_min_rtt: Nanos,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Nanos,
    in_css: bool,
    /// Rounds that ended while in CSS (the round CSS was entered in counts).
    css_rounds: u32,
    /// Growth credit not yet applied in CSS (divided by CSS_GROWTH_DIVISOR).
    css_credit: u64,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        Self::new()
    }
}

impl HyStartPlusPlus {
    /// Before the first round, not paced.
    pub fn new() -> Self {
        Self {
            paced: false,
            rounds: RoundCounter::new(),
            last_round_min_rtt: Nanos::MAX,
            current_round_min_rtt: Nanos::MAX,
            rtt_sample_count: 0,
            css_baseline_min_rtt: Nanos::MAX,
            in_css: false,
            css_rounds: 0,
            css_credit: 0,
        }
    }

    /// windowEnd as a delivered count, `None` before the first round.
    #[cfg(test)]
    fn window_end(&self) -> Option<u64> {
        (self.rounds.count() > 0).then_some(self.rounds.end())
    }

    /// Whether it is in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.in_css
    }

    fn phase(&self) -> Phase {
        if self.in_css {
            Phase::ConservativeSlowStart
        } else {
            Phase::SlowStart
        }
    }

    /// One ACK in slow start (RFC 9406 §4.2): growth (at most L segments unless paced), the
    /// delay test, CSS.
    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let credit = growth.ack_credit(ack);
        // §4.2: at the start of each round, lastRoundMinRTT = currentRoundMinRTT, reset the rest.
        let new_round = match ack.rate {
            Some(rs) => self.rounds.on_sample(rs.prior_delivered, ack.delivered),
            // The first ACK begins the first round, with a rate sample or without.
            None if self.rounds.count() == 0 => self.rounds.on_sample(0, ack.delivered),
            None => false,
        };
        if new_round {
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = Nanos::MAX;
            self.rtt_sample_count = 0;
            if self.in_css {
                self.css_rounds += 1;
                // §4.2: after CSS_ROUNDS rounds in CSS, enter congestion avoidance
                // (ssthresh = cwnd).
                if self.css_rounds >= CSS_ROUNDS {
                    return SlowStartStep {
                        cwnd,
                        leftover_credit: credit,
                        exit: true,
                        phase: Phase::ConservativeSlowStart,
                    };
                }
            }
        }
        // §4.2: cwnd += min(N, L * SMSS), divided by CSS_GROWTH_DIVISOR in CSS.
        let cap = if self.paced { u64::MAX } else { L * ack.mss };
        let inc = credit.min(cap);
        let room = ssthresh.saturating_sub(cwnd);
        let (grown, leftover) = if self.in_css {
            self.css_credit += inc;
            let add = (self.css_credit / CSS_GROWTH_DIVISOR).min(room);
            self.css_credit -= add * CSS_GROWTH_DIVISOR;
            let left = if add == room { credit - inc } else { 0 };
            (cwnd + add, left)
        } else {
            let add = inc.min(room);
            (cwnd + add, if inc >= room { credit - add } else { 0 })
        };
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
            self.rtt_sample_count += 1;
        }
        let enough = self.rtt_sample_count >= N_RTT_SAMPLE
            && self.current_round_min_rtt != Nanos::MAX
            && self.last_round_min_rtt != Nanos::MAX;
        if enough && !self.in_css {
            let thresh = rtt_thresh(self.last_round_min_rtt);
            if self.current_round_min_rtt >= self.last_round_min_rtt.saturating_add(thresh) {
                self.css_baseline_min_rtt = self.current_round_min_rtt;
                self.in_css = true;
                self.css_rounds = 0;
                self.css_credit = 0;
            }
        } else if self.rtt_sample_count >= N_RTT_SAMPLE
            && self.in_css
            && self.current_round_min_rtt < self.css_baseline_min_rtt
        {
            // §4.2: the RTT fell back: spurious CSS entry, resume slow start.
            self.css_baseline_min_rtt = Nanos::MAX;
            self.in_css = false;
        }
        SlowStartStep {
            cwnd: grown,
            leftover_credit: leftover,
            exit: false,
            phase: self.phase(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;
    use crate::RateSample;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    struct Driver {
        h: HyStartPlusPlus,
        cwnd: u64,
        delivered: u64,
        now: Nanos,
        g: WindowGrowth,
    }

    impl Driver {
        fn new() -> Self {
            Self {
                h: HyStartPlusPlus::new(),
                cwnd: 10 * MSS,
                delivered: 0,
                now: 0,
                g: WindowGrowth::new(AckCounting::Bytes),
            }
        }

        fn ack(&mut self, rtt: Nanos, prior_delivered: u64, bytes: u64) -> SlowStartStep {
            self.now += MS;
            self.delivered += bytes;
            let a = AckEvent {
                now: self.now,
                bytes_acked: bytes,
                mss: MSS,
                rtt: Some(rtt),
                rate: Some(RateSample {
                    prior_delivered,
                    ..Default::default()
                }),
                delivered: self.delivered,
                cwnd_limited: true,
                ..Default::default()
            };
            let step = self.h.on_ack(self.cwnd, u64::MAX, &a, &self.g);
            assert!(step.cwnd >= self.cwnd);
            self.cwnd = step.cwnd;
            step
        }

        /// One round of one ACK per segment of cwnd, all with RTT `rtt`; returns the last step
        /// or the exit step.
        fn round(&mut self, rtt: Nanos) -> SlowStartStep {
            let start = self.delivered;
            let n = self.cwnd / MSS;
            let mut last = None;
            for _ in 0..n {
                let step = self.ack(rtt, start, MSS);
                if step.exit {
                    return step;
                }
                last = Some(step);
            }
            last.unwrap()
        }
    }

    #[test]
    fn constants_are_rfc9406_section_4_3() {
        assert_eq!((MIN_RTT_THRESH, MAX_RTT_THRESH), (4 * MS, 16 * MS));
        assert_eq!((MIN_RTT_DIVISOR, N_RTT_SAMPLE), (8, 8));
        assert_eq!((CSS_GROWTH_DIVISOR, CSS_ROUNDS, L), (4, 5, 8));
        assert_eq!(rtt_thresh(20 * MS), 4 * MS);
        assert_eq!(rtt_thresh(80 * MS), 10 * MS);
        assert_eq!(rtt_thresh(1000 * MS), 16 * MS);
    }

    #[test]
    fn slow_start_growth_is_capped_at_l_segments_per_ack() {
        let mut d = Driver::new();
        let step = d.ack(50 * MS, 0, 20 * MSS);
        assert_eq!(step.cwnd, 18 * MSS);
        assert_eq!(step.leftover_credit, 0);
        d.h.paced = true;
        assert_eq!(d.ack(50 * MS, 0, 20 * MSS).cwnd, 38 * MSS);
    }

    #[test]
    fn rounds_end_when_prior_delivered_reaches_the_round_start_value() {
        let mut d = Driver::new();
        d.round(50 * MS);
        assert_eq!(d.h.window_end(), Some(MSS));
        // Still the round that began at the first ACK: packets sent before it.
        d.ack(50 * MS, 0, MSS);
        assert_eq!(d.h.window_end(), Some(MSS));
        // A packet sent after the round began ends it.
        d.ack(50 * MS, MSS, MSS);
        assert_eq!(d.h.window_end(), Some(d.delivered));
        assert_eq!(d.h.last_round_min_rtt, 50 * MS);
    }

    #[test]
    fn css_entered_in_the_round_whose_min_rtt_rises_by_rtt_thresh_after_8_samples() {
        let mut d = Driver::new();
        for _ in 0..3 {
            assert_eq!(d.round(80 * MS).phase, Phase::SlowStart);
        }
        // Threshold 10 ms: 89 ms does not enter CSS.
        assert_eq!(d.round(89 * MS).phase, Phase::SlowStart);
        // lastRoundMinRTT is now 89 ms: threshold 11.125 ms; exactly 100.125 ms enters (>=), at the
        // 8th sample.
        let start = d.delivered;
        for i in 1..=8 {
            let step = d.ack(100_125_000, start, MSS);
            assert_eq!(
                step.phase == Phase::ConservativeSlowStart,
                i == 8,
                "ack {i}"
            );
        }
    }

    fn into_css() -> Driver {
        let mut d = Driver::new();
        d.round(80 * MS);
        d.round(80 * MS);
        let start = d.delivered;
        for _ in 0..8 {
            d.ack(100 * MS, start, MSS);
        }
        assert!(d.h.in_css());
        d
    }

    #[test]
    fn css_grows_a_quarter_as_fast() {
        let mut d = into_css();
        let before = d.cwnd;
        let start = d.h.window_end().unwrap() - MSS;
        for _ in 0..8 {
            d.ack(100 * MS, start, MSS);
        }
        assert_eq!(d.cwnd - before, 2 * MSS);
        // Also with a cap: 20 segments acked count as L = 8, a quarter of that is 2.
        let step = d.ack(100 * MS, start, 20 * MSS);
        assert_eq!(step.cwnd - before, 4 * MSS);
        assert_eq!(step.phase, Phase::ConservativeSlowStart);
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_drops_below_the_baseline() {
        let mut d = into_css();
        // Next round: 8 samples at 90 ms < baseline 100 ms.
        let start = d.delivered;
        for i in 1..=8 {
            let step = d.ack(90 * MS, start, MSS);
            assert_eq!(step.phase == Phase::SlowStart, i == 8, "ack {i}");
        }
        assert!(!d.h.in_css());
    }

    #[test]
    fn exits_to_avoidance_after_css_rounds_rounds() {
        let mut d = into_css();
        let mut rounds_ended = 0;
        loop {
            let step = d.round(100 * MS);
            rounds_ended += 1;
            if step.exit {
                assert_eq!(step.phase, Phase::ConservativeSlowStart);
                break;
            }
            assert_eq!(step.phase, Phase::ConservativeSlowStart);
        }
        // The entry round ends at the start of the first of these rounds, so exit comes at the
        // start of the 5th: the entry round plus 4 full rounds in CSS.
        assert_eq!(rounds_ended, CSS_ROUNDS as usize);
    }
}
