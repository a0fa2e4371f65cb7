//! HyStart (Ha & Rhee, "Taming the elephants", Computer Networks 2011) as Linux
//! net/ipv4/tcp_cubic.c (v5.7+) runs it: ACK-train and delay-increase detection of the exit point.

use super::{SlowStart, SlowStartStep};
use crate::round::RoundCounter;
use crate::window::WindowGrowth;
use crate::{AckEvent, Nanos, Phase};

/// tcp_cubic.c `hystart_low_window`: detection only once cwnd >= 16 segments.
pub const LOW_WINDOW: u64 = 16;
/// tcp_cubic.c `hystart_ack_delta_us` = 2000: ACKs closer than this belong to one train.
pub const ACK_DELTA: Nanos = 2_000_000;
/// tcp_cubic.c `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// tcp_cubic.c `HYSTART_DELAY_MIN` (4 ms) and `HYSTART_DELAY_MAX` (16 ms).
pub const DELAY_MIN: Nanos = 4_000_000;
/// `HYSTART_DELAY_MAX`: the delay threshold's ceiling, 16 ms.
pub const DELAY_MAX: Nanos = 16_000_000;

/// tcp_cubic.c `HYSTART_DELAY_THRESH(delay_min >> 3)`: clamp(delay_min / 8, 4 ms, 16 ms).
pub fn delay_threshold(delay_min: Nanos) -> Nanos {
    (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX)
}

/// Which detectors run (tcp_cubic.c `hystart_detect`, default both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detect {
    /// The ACK-train detector (`HYSTART_ACK_TRAIN`).
    pub ack_train: bool,
    /// The delay-increase detector (`HYSTART_DELAY`).
    pub delay: bool,
}

impl Detect {
    /// Both detectors, Linux's default.
    pub const BOTH: Detect = Detect {
        ack_train: true,
        delay: true,
    };
}

/// HyStart's state for one connection (tcp_cubic.c `struct bictcp`'s HyStart fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStart {
    /// Segments (`hystart_low_window`).
    pub low_window: u64,
    /// Which detectors run.
    pub detect: Detect,
    /// The transport paces: the ACK-train threshold is delay_min, not delay_min / 2 (tcp_cubic.c
    /// `sk_pacing_status != SK_PACING_NONE`).
    pub paced: bool,
    /// Exit point found (`ca->found`).
    pub found: bool,
    /// SUSS replaces the ACK-train detector while it runs (its tcp_cubic.c `suss_cap`).
    pub(crate) ack_train_off: bool,
    pub(crate) round_start: Nanos,
    pub(crate) last_ack: Nanos,
    /// Rounds by delivery: an ACK's rate sample with `prior_delivered` at or past the delivered
    /// count when the round began ends it (stands in for `after(snd_una, end_seq)` with
    /// `end_seq = snd_nxt` at round start).
    rounds: RoundCounter,
    /// This round's lowest RTT once the delay test runs (`ca->curr_rtt`).
    pub(crate) curr_rtt: Nanos,
    sample_cnt: u32,
    /// Smallest RTT seen (`ca->delay_min`), 0 before any sample.
    pub delay_min: Nanos,
}

impl HyStart {
    /// HyStart detecting from `low_window` segments with `detect`, unpaced, before any sample.
    pub fn new(low_window: u64, detect: Detect) -> Self {
        Self {
            low_window,
            detect,
            paced: false,
            found: false,
            ack_train_off: false,
            round_start: 0,
            last_ack: 0,
            rounds: RoundCounter::new(),
            curr_rtt: Nanos::MAX,
            sample_cnt: 0,
            delay_min: 0,
        }
    }

    /// tcp_cubic.c `bictcp_hystart_reset` (the round's end mark is set by `rounds`).
    fn reset_round(&mut self, ack: &AckEvent) {
        self.round_start = ack.now;
        self.last_ack = ack.now;
        self.curr_rtt = Nanos::MAX;
        self.sample_cnt = 0;
    }

    /// tcp_cubic.c `hystart_update` (ACK delay cushion `hystart_ack_delay` taken as 0: no GSO).
    fn update(&mut self, delay: Nanos, ack: &AckEvent) {
        if self.detect.ack_train
            && !self.ack_train_off
            && ack.now.saturating_sub(self.last_ack) <= ACK_DELTA
        {
            self.last_ack = ack.now;
            let threshold = if self.paced {
                self.delay_min
            } else {
                self.delay_min / 2
            };
            if ack.now.saturating_sub(self.round_start) > threshold {
                self.found = true;
            }
        }
        if self.detect.delay {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt > self.delay_min + delay_threshold(self.delay_min) {
                self.found = true;
            }
        }
    }

    /// Whether `hystart_update` runs for this ACK: not found yet, cwnd at least
    /// hystart_low_window.
    pub(crate) fn detecting(&self, cwnd: u64, ack: &AckEvent) -> bool {
        !self.found && cwnd >= self.low_window * ack.mss
    }

    /// tcp_cubic.c `cubictcp_acked`: delay_min, then `hystart_update`. Returns whether
    /// delay_min fell.
    pub(crate) fn acked(&mut self, cwnd: u64, ack: &AckEvent) -> bool {
        let Some(rtt) = ack.rtt else {
            return false;
        };
        let delay = rtt.max(1);
        let fell = self.delay_min == 0 || self.delay_min > delay;
        if fell {
            self.delay_min = delay;
        }
        if self.detecting(cwnd, ack) {
            self.update(delay, ack);
        }
        fell
    }

    /// tcp_cubic.c `cubictcp_cong_avoid`, after `cubictcp_acked`: a round starts with the
    /// first ACK of data sent after the last one started, from the first ACK on and whatever
    /// the window (below hystart_low_window too), so rounds stay aligned with ACK trains.
    pub(crate) fn track_round(&mut self, ack: &AckEvent) {
        if ack
            .rate
            .is_some_and(|rs| self.rounds.on_sample(rs.prior_delivered, ack.delivered))
        {
            self.reset_round(ack);
        }
    }

    /// tcp_cubic.c `cubictcp_acked` then `tcp_slow_start`: on detection ssthresh = cwnd before
    /// this ACK's growth, and the ACK's credit goes to congestion avoidance.
    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        self.acked(cwnd, ack);
        self.track_round(ack);
        if self.found {
            return SlowStartStep {
                cwnd,
                leftover_credit: growth.ack_credit(ack),
                exit: true,
                phase: Phase::SlowStart,
            };
        }
        SlowStart::standard_step(cwnd, ssthresh, ack, growth)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::window::AckCounting;
    use crate::RateSample;

    pub const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    pub fn ack(now: Nanos, rtt: Nanos, prior_delivered: u64, delivered: u64) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: MSS,
            mss: MSS,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            rate: Some(RateSample {
                delivery_rate: MSS * 1_000_000_000 / rtt.max(1),
                delivered: MSS,
                interval: rtt,
                prior_delivered,
                is_app_limited: false,
                rtt,
            }),
            delivered,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    /// One round: one ACK per segment of cwnd, spaced `gap` apart from `start`, all with RTT
    /// `rtt`. Returns whether the rule exited.
    fn round(
        h: &mut HyStart,
        cwnd: &mut u64,
        delivered: &mut u64,
        start: Nanos,
        gap: Nanos,
        rtt: Nanos,
    ) -> bool {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let round_start_delivered = *delivered;
        let n = *cwnd / MSS;
        for i in 0..n {
            *delivered += MSS;
            // Every packet acked in this round was sent before the round began.
            let prior = round_start_delivered;
            let step = h.on_ack(
                *cwnd,
                u64::MAX,
                &ack(start + i * gap, rtt, prior, *delivered),
                &g,
            );
            assert!(step.cwnd >= *cwnd);
            *cwnd = step.cwnd;
            if step.exit {
                return true;
            }
        }
        false
    }

    #[test]
    fn constants_match_tcp_cubic() {
        assert_eq!(delay_threshold(10 * MS), 4 * MS);
        assert_eq!(delay_threshold(80 * MS), 10 * MS);
        assert_eq!(delay_threshold(400 * MS), 16 * MS);
        assert_eq!((LOW_WINDOW, ACK_DELTA, MIN_SAMPLES), (16, 2 * MS, 8));
    }

    #[test]
    fn delay_increase_exits_once_a_round_has_eight_samples_above_threshold() {
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        let (mut cwnd, mut delivered) = (32 * MSS, 0);
        // ACKs 10 ms apart: no train. Base RTT 100 ms, threshold clamp(12.5 ms) = 12.5 ms.
        assert!(!round(
            &mut h,
            &mut cwnd,
            &mut delivered,
            0,
            10 * MS,
            100 * MS
        ));
        assert!(!round(
            &mut h,
            &mut cwnd,
            &mut delivered,
            1000 * MS,
            10 * MS,
            112 * MS
        ));
        let before = cwnd;
        let mut exit_at = 0;
        let g = WindowGrowth::new(AckCounting::Bytes);
        let start = delivered;
        for i in 0..20u64 {
            delivered += MSS;
            let a = ack(3000 * MS + i * 10 * MS, 113 * MS, start, delivered);
            let step = h.on_ack(cwnd, u64::MAX, &a, &g);
            if step.exit {
                assert_eq!(step.cwnd, cwnd, "ssthresh = cwnd before this ACK's growth");
                assert_eq!(step.leftover_credit, MSS);
                exit_at = i + 1;
                break;
            }
            cwnd = step.cwnd;
        }
        // The round's first ACK is sampled before it resets the round (cubictcp_acked runs
        // before cubictcp_cong_avoid); samples 2..=9 fill the minimum, the 10th tests it.
        assert_eq!(exit_at, 10);
        assert!(cwnd > before);
    }

    #[test]
    fn rounds_start_at_the_first_ack_of_each_train_even_below_the_low_window() {
        // tcp_cubic.c resets rounds in cong_avoid from the first ACK on; gating the reset on
        // hystart_low_window started the first counted round mid-train and every later one
        // late (a real-vs-simulated 20 Mbps run left slow start a round early).
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        h.on_ack(10 * MSS, u64::MAX, &ack(100 * MS, 100 * MS, 0, MSS), &g);
        assert_eq!((h.round_start, h.rounds.end()), (100 * MS, MSS));
        // The rest of the train acks data sent before the round began: same round.
        for i in 1..10 {
            h.on_ack(
                10 * MSS,
                u64::MAX,
                &ack((100 + i) * MS, 100 * MS, 0, (i + 1) * MSS),
                &g,
            );
        }
        assert_eq!(h.round_start, 100 * MS);
        // The next train's first ACK covers data sent after the round began: a new round.
        h.on_ack(
            20 * MSS,
            u64::MAX,
            &ack(200 * MS, 100 * MS, MSS, 11 * MSS),
            &g,
        );
        assert_eq!((h.round_start, h.rounds.end()), (200 * MS, 11 * MSS));
        let mut small = HyStart::new(LOW_WINDOW, Detect::BOTH);
        small.on_ack(4 * MSS, u64::MAX, &ack(5 * MS, 100 * MS, 0, MSS), &g);
        assert_eq!(small.round_start, 5 * MS, "below the low window too");
    }

    #[test]
    fn ack_train_exits_when_the_train_outlasts_half_the_min_rtt() {
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        let (mut cwnd, mut delivered) = (16 * MSS, 0);
        // Base RTT 40 ms; ACKs 1 ms apart, RTT flat: a 16-ACK round lasts 15 ms < 20 ms.
        assert!(!round(&mut h, &mut cwnd, &mut delivered, 0, MS, 40 * MS));
        assert_eq!(cwnd, 32 * MSS);
        // Next round of 32 ACKs 1 ms apart: exits once now - round_start > 20 ms.
        let g = WindowGrowth::new(AckCounting::Bytes);
        let start = delivered;
        let mut exit_at = None;
        for i in 0..32u64 {
            delivered += MSS;
            let a = ack(100 * MS + i * MS, 40 * MS, start, delivered);
            let step = h.on_ack(cwnd, u64::MAX, &a, &g);
            cwnd = step.cwnd;
            if step.exit {
                exit_at = Some(i);
                break;
            }
        }
        assert_eq!(exit_at, Some(21));
    }

    #[test]
    fn ack_train_is_broken_by_gaps_over_two_ms() {
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        let (mut cwnd, mut delivered) = (16 * MSS, 0);
        for r in 0..4 {
            assert!(!round(
                &mut h,
                &mut cwnd,
                &mut delivered,
                r * 1000 * MS,
                3 * MS,
                40 * MS
            ));
        }
        assert_eq!(cwnd, 256 * MSS);
    }

    #[test]
    fn paced_ack_train_threshold_is_the_full_min_rtt() {
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        h.paced = true;
        let (mut cwnd, mut delivered) = (32 * MSS, 0);
        // 32 ACKs 1 ms apart last 31 ms: over 20 ms but under 40 ms.
        assert!(!round(&mut h, &mut cwnd, &mut delivered, 0, MS, 40 * MS));
    }

    #[test]
    fn nothing_triggers_below_the_low_window() {
        let mut h = HyStart::new(LOW_WINDOW, Detect::BOTH);
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut delivered = 0;
        // cwnd stays at 15 segments (the caller discards growth): 100 ACKs in a 1 ms train with
        // RTT far above the minimum.
        for i in 0..100u64 {
            delivered += MSS;
            let rtt = if i == 0 { 10 * MS } else { 200 * MS };
            let step = h.on_ack(15 * MSS, u64::MAX, &ack(i * MS, rtt, 0, delivered), &g);
            assert!(!step.exit);
        }
        assert!(!h.found);
        // At 16 segments the same signal exits.
        for i in 0..10u64 {
            if h.on_ack(
                16 * MSS,
                u64::MAX,
                &ack((102 + i) * MS, 200 * MS, 0, delivered),
                &g,
            )
            .exit
            {
                return;
            }
        }
        panic!("no exit at the low window");
    }
}
