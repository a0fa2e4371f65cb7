//! BBR ProbeBW, draft-ietf-ccwg-bbr-01 §5.3.3: cycles DOWN (0.9) → CRUISE (1.0) → REFILL (1.0)
//! → UP (1.25), probing again after a randomised 2–3 s wall-clock wait or the Reno-coexistence
//! round count, whichever comes first.

use super::{AckPhase, Bbr, State, DEFAULT_CWND_GAIN};
use crate::{AckEvent, Nanos, RateSample, SECOND};

/// The four ProbeBW phases (§5.3.3.1–§5.3.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProbeBwPhase {
    Down,
    Cruise,
    Refill,
    Up,
}

impl ProbeBwPhase {
    /// (pacing_gain, cwnd_gain) of each phase, §5.3.3.
    pub fn gains(self) -> (f64, f64) {
        match self {
            ProbeBwPhase::Down => (0.9, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Cruise => (1.0, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Refill => (1.0, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Up => (1.25, 2.25),
        }
    }
}

/// §5.3.3.5.3 `BBRPickProbeWait`: 2 s plus up to 1 s at random.
pub const PROBE_WAIT_BASE: Nanos = 2 * SECOND;
pub const PROBE_WAIT_RANDOM: Nanos = SECOND;
/// §5.3.3.5.3 `BBRIsRenoCoexistenceProbeTime`: at most 63 rounds between probes.
pub const MAX_RENO_ROUNDS: u64 = 63;
/// §5.3.3.4 `BBRRaiseInflightHiSlope`: doubling stops after 30 rounds.
const MAX_PROBE_UP_ROUNDS: u32 = 30;

impl Bbr {
    fn set_probe_bw_phase(&mut self, phase: ProbeBwPhase) {
        self.state = State::ProbeBw(phase);
        (self.pacing_gain, self.cwnd_gain) = phase.gains();
    }

    /// §5.3.3.5.3 `BBRPickProbeWait`, drawing from the controller's SplitMix64.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_bw_probe = self.rng.next_u64() & 1;
        self.bw_probe_wait = PROBE_WAIT_BASE + self.rng.next_u64() % PROBE_WAIT_RANDOM;
    }

    /// §5.3.3.6 `BBRStartProbeBW_DOWN`.
    pub(super) fn start_probe_bw_down(&mut self) {
        self.reset_congestion_signals();
        self.probe_up_cnt = u64::MAX;
        self.pick_probe_wait();
        self.cycle_stamp = self.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_probe_bw_phase(ProbeBwPhase::Down);
    }

    /// §5.3.3.6 `BBRStartProbeBW_CRUISE`.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.set_probe_bw_phase(ProbeBwPhase::Cruise);
    }

    /// §5.3.3.6 `BBRStartProbeBW_REFILL`.
    fn start_probe_bw_refill(&mut self) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_probe_bw_phase(ProbeBwPhase::Refill);
    }

    /// §5.3.3.6 `BBRStartProbeBW_UP`.
    fn start_probe_bw_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rs.delivery_rate;
        self.set_probe_bw_phase(ProbeBwPhase::Up);
        self.raise_inflight_hi_slope();
    }

    /// §5.3.3.6 `BBRUpdateProbeBWCyclePhase`.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, ack: &AckEvent, rs: &RateSample) {
        if !self.filled_pipe {
            return;
        }
        self.adapt_upper_bounds(ack, rs);
        let State::ProbeBw(phase) = self.state else {
            return;
        };
        match phase {
            ProbeBwPhase::Down => {
                if self.is_time_to_probe_bw() {
                    return;
                }
                if self.is_time_to_cruise(ack) {
                    self.start_probe_bw_cruise();
                }
            }
            ProbeBwPhase::Cruise => {
                self.is_time_to_probe_bw();
            }
            ProbeBwPhase::Refill => {
                // After one round of REFILL, start UP.
                if self.round.started() {
                    self.bw_probe_samples = true;
                    self.start_probe_bw_up(rs);
                }
            }
            ProbeBwPhase::Up => {
                if self.is_time_to_go_down(ack, rs) {
                    self.start_probe_bw_down();
                }
            }
        }
    }

    /// §5.3.3.5.3 `BBRIsTimeToProbeBW`: the randomised wait elapsed, or Reno would have
    /// probed by now; starts REFILL.
    fn is_time_to_probe_bw(&mut self) -> bool {
        if self.now > self.cycle_stamp + self.bw_probe_wait || self.is_reno_coexistence_probe_time()
        {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.5.3 `BBRIsRenoCoexistenceProbeTime`: one round per target-inflight packet, ≤ 63.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        self.rounds_since_bw_probe >= reno_rounds.min(MAX_RENO_ROUNDS)
    }

    /// §5.3.3.6 `BBRIsTimeToCruise`.
    fn is_time_to_cruise(&self, ack: &AckEvent) -> bool {
        let inflight = ack.bytes_in_flight;
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(self.max_bw, 1.0)
    }

    /// §5.3.3.6 `BBRIsTimeToGoDown`: UP ends once bandwidth stopped growing (full_bw_now).
    fn is_time_to_go_down(&mut self, ack: &AckEvent, rs: &RateSample) -> bool {
        if ack.cwnd_limited && self.cwnd >= self.inflight_hi {
            // Bandwidth is limited by inflight_hi: keep probing.
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// §5.3.3.4 `BBRRaiseInflightHiSlope`: inflight_hi grows 1, 2, 4... MSS per round in UP.
    fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = self.mss.saturating_mul(1 << self.bw_probe_up_rounds);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        // Bytes to ACK per MSS of inflight_hi growth.
        self.probe_up_cnt = (self.cwnd / growth_this_round).max(1) * self.mss;
    }

    /// §5.3.3.4 `BBRProbeInflightHiUpward`.
    fn probe_inflight_hi_upward(&mut self, ack: &AckEvent) {
        if !ack.cwnd_limited || self.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += ack.bytes_acked;
        if self.bw_probe_up_acks >= self.probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta * self.mss);
        }
        if self.round.started() {
            self.raise_inflight_hi_slope();
        }
    }

    /// §5.3.3.6 `BBRAdaptUpperBounds`; loss-driven `BBRCheckInflightTooHigh` happens in
    /// `on_congestion_event` (module notes), and `rs.tx_in_flight` is the ACK's prior in-flight.
    fn adapt_upper_bounds(&mut self, ack: &AckEvent, rs: &RateSample) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round.started() {
            // Starting to get bandwidth-probing samples.
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round.started() {
            // End of the samples from the probe (as Linux tcp_bbr.c v3 `bbr_adapt_upper_bounds`,
            // which also resets the ACK phase): advance the max-bw filter's cycle.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.is_in_probe_bw() && !self.sample_app_limited(rs) {
                self.advance_max_bw_filter();
            }
        }
        if self.inflight_hi == u64::MAX {
            return;
        }
        if ack.prior_in_flight > self.inflight_hi {
            self.inflight_hi = ack.prior_in_flight;
        }
        if self.state == State::ProbeBw(ProbeBwPhase::Up) {
            self.probe_inflight_hi_upward(ack);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::*;
    use crate::{CongestionController, CongestionEvent};

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// In ProbeBW (CRUISE: DOWN ends at once with in-flight below 1 BDP) with bw 1 MB/s and
    /// min RTT 100 ms (BDP 100 kB), at t = 1 s.
    fn in_probe_bw(seed: u64) -> Bbr {
        let mut c = Bbr::new(MSS, 10, seed);
        let mut now = 0;
        for _ in 0..4 {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 150 * MSS, true));
        }
        c.on_ack(&ack(&c, SECOND, MSS, 1_000_000, 100 * MS, 90 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        c
    }

    #[test]
    fn phase_gains_match_the_draft() {
        assert_eq!(ProbeBwPhase::Down.gains(), (0.9, 2.0));
        assert_eq!(ProbeBwPhase::Cruise.gains(), (1.0, 2.0));
        assert_eq!(ProbeBwPhase::Refill.gains(), (1.0, 2.0));
        assert_eq!(ProbeBwPhase::Up.gains(), (1.25, 2.25));
    }

    #[test]
    fn probe_wait_is_two_to_three_seconds_and_deterministic_per_seed() {
        let waits = |seed| {
            let mut c = Bbr::new(MSS, 10, seed);
            (0..50)
                .map(|_| {
                    c.pick_probe_wait();
                    (c.bw_probe_wait(), c.rounds_since_bw_probe)
                })
                .collect::<Vec<_>>()
        };
        let a = waits(7);
        assert_eq!(a, waits(7), "same seed, same waits");
        assert_ne!(a, waits(8), "another seed, other waits");
        for &(w, r) in &a {
            assert!((2 * SECOND..3 * SECOND).contains(&w), "{w}");
            assert!(r <= 1);
        }
        // SplitMix64(7): the first draw picks the round offset, the second the wait.
        let mut rng = crate::rng::SplitMix64::new(7);
        let r = rng.next_u64() & 1;
        let w = 2 * SECOND + rng.next_u64() % SECOND;
        assert_eq!(a[0], (w, r));
    }

    #[test]
    fn cycles_cruise_refill_up_down_cruise_with_the_drafts_gains() {
        let mut c = in_probe_bw(3);
        assert_eq!(c.pacing_gain(), 1.0);
        assert_eq!(c.pacing_rate(), Some(990_000)); // 1.0 × 1 MB/s × 0.99
                                                    // Stays in CRUISE until the probe wait (or the Reno round count) is up. With a BDP of
                                                    // 100 packets the Reno bound is 63 rounds of 100 ms = 6.3 s, so the wall-clock wait
                                                    // (2-3 s) decides.
        let mut now = SECOND;
        let deadline = c.cycle_stamp + c.bw_probe_wait();
        while now + 100 * MS <= deadline {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
            assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise), "t={now}");
        }
        now = deadline + 1;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Refill));
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (1.0, 2.0));
        // One round later: UP, pacing 1.25, cwnd gain 2.25.
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Up));
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (1.25, 2.25));
        assert_eq!(c.pacing_rate(), Some(1_237_500));
        // Bandwidth does not grow: after 3 rounds without 25% growth, DOWN.
        for i in 0..3 {
            assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Up), "round {i}");
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 120 * MSS, true));
        }
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (0.9, 2.0));
        assert_eq!(c.pacing_rate(), Some(891_000));
        let wait = c.bw_probe_wait();
        assert!((2 * SECOND..3 * SECOND).contains(&wait));
        // DOWN holds while the queue (in-flight above 1 BDP) drains...
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 110 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
        // ...and CRUISE starts once in-flight is at most BBRInflight(max_bw, 1.0).
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 100 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
    }

    #[test]
    fn reno_coexistence_bounds_the_wait_in_rounds() {
        // Tiny BDP (1 MB/s × 10 ms = 10 packets): probe after ≤ 10 rounds, well before 2 s.
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        for _ in 0..4 {
            now += 10 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 10 * MS, 5 * MSS, true));
        }
        assert!(matches!(c.state(), State::ProbeBw(_)));
        let start = now;
        while !matches!(c.state(), State::ProbeBw(ProbeBwPhase::Refill)) {
            now += 10 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 10 * MS, 5 * MSS, true));
            assert!(
                now - start <= 11 * 10 * MS,
                "no probe after {} rounds",
                (now - start) / (10 * MS)
            );
        }
    }

    #[test]
    fn heavy_loss_in_up_sets_inflight_hi_and_goes_down() {
        let mut c = in_probe_bw(3);
        c.state = State::ProbeBw(ProbeBwPhase::Up);
        c.bw_probe_samples = true;
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now: SECOND,
            bytes_lost: 5 * MSS,
            bytes_in_flight: 120 * MSS,
            mss: MSS,
        });
        assert_eq!(c.inflight_hi(), 120 * MSS);
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
    }

    #[test]
    fn max_bw_filter_forgets_after_two_cycles() {
        let mut c = in_probe_bw(3);
        assert_eq!(c.max_bw(), 1_000_000);
        let cycle = c.cycle_count;
        // Bandwidth halves; the old max survives while the cycle count advances by one...
        c.advance_max_bw_filter();
        c.on_ack(&ack(
            &c,
            2 * SECOND,
            MSS,
            500_000,
            100 * MS,
            50 * MSS,
            false,
        ));
        assert_eq!(c.max_bw(), 1_000_000);
        // ...and is gone two cycles after it was measured.
        c.advance_max_bw_filter();
        c.on_ack(&ack(
            &c,
            2 * SECOND,
            MSS,
            500_000,
            100 * MS,
            50 * MSS,
            false,
        ));
        assert_eq!(c.cycle_count, cycle + 2);
        assert_eq!(c.max_bw(), 500_000);
    }
}
