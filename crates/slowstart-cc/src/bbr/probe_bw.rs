//! BBR ProbeBW, draft-ietf-ccwg-bbr-06 §5.3.3: cycles DOWN (0.9) → CRUISE (1.0) → REFILL (1.0)
//! → UP (1.25), probing again after a randomised 2–3 s wall-clock wait or the Reno-coexistence
//! round count, whichever comes first. After a probe that met too much loss the next UP is
//! precautionary (§5.3.3.6): it stops as soon as in-flight reaches inflight_longterm, and if that
//! round shows no excess loss the cycle returns to REFILL at once.

use super::{AckPhase, Bbr, State, DEFAULT_CWND_GAIN};
use crate::{AckEvent, Nanos, RateSample, SECOND};

/// The four ProbeBW phases (§5.3.3.1–§5.3.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProbeBwPhase {
    /// §5.3.3.1 ProbeBW_DOWN: pacing gain 0.9, draining the queue a probe built.
    Down,
    /// §5.3.3.2 ProbeBW_CRUISE: pacing gain 1.0, sending at the estimated bandwidth.
    Cruise,
    /// §5.3.3.3 ProbeBW_REFILL: pacing gain 1.0 for a round, refilling the pipe before a probe.
    Refill,
    /// §5.3.3.4 ProbeBW_UP: pacing gain 1.25, cwnd gain 2.25, probing for more bandwidth.
    Up,
}

impl ProbeBwPhase {
    /// (pacing_gain, cwnd_gain) of each phase, §5.3.3.1–§5.3.3.5 and §5.6.1.
    pub fn gains(self) -> (f64, f64) {
        match self {
            ProbeBwPhase::Down => (0.9, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Cruise => (1.0, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Refill => (1.0, DEFAULT_CWND_GAIN),
            ProbeBwPhase::Up => (1.25, 2.25),
        }
    }
}

/// §5.3.3.8.3 `PickProbeWait`: 2 s plus up to 1 s at random.
pub const PROBE_WAIT_BASE: Nanos = 2 * SECOND;
pub const PROBE_WAIT_RANDOM: Nanos = SECOND;
/// §5.3.3.8.3 `IsRenoCoexistenceProbeTime`: at most 63 rounds between probes.
pub const MAX_RENO_ROUNDS: u64 = 63;
/// §5.3.3.9 `RaiseInflightLongtermSlope`: doubling stops after 30 rounds.
const MAX_PROBE_UP_ROUNDS: u32 = 30;

impl Bbr {
    fn set_probe_bw_phase(&mut self, phase: ProbeBwPhase) {
        self.state = State::ProbeBw(phase);
        (self.pacing_gain, self.cwnd_gain) = phase.gains();
    }

    /// §5.3.3.8.3 `PickProbeWait`, drawing from the controller's SplitMix64.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rng.next_u64() & 1;
        self.bw_probe_wait = PROBE_WAIT_BASE + self.rng.next_u64() % PROBE_WAIT_RANDOM;
    }

    /// §5.3.3.9 `StartProbeBW_DOWN`.
    pub(super) fn start_probe_bw_down(&mut self) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = u64::MAX;
        self.pick_probe_wait();
        self.cycle_stamp = self.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_probe_bw_phase(ProbeBwPhase::Down);
    }

    /// §5.3.3.9 `StartProbeBW_CRUISE`.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.set_probe_bw_phase(ProbeBwPhase::Cruise);
    }

    /// §5.3.3.9 `StartProbeBW_REFILL`.
    fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_probe_bw_phase(ProbeBwPhase::Refill);
    }

    /// §5.3.3.9 `StartProbeBW_UP`.
    fn start_probe_bw_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rs.delivery_rate;
        self.set_probe_bw_phase(ProbeBwPhase::Up);
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.9 `UpdateProbeBWCyclePhase`.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, ack: &AckEvent, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(ack, rs) {
            return;
        }
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
                    self.is_bw_probe_sample = true;
                    self.start_probe_bw_up(rs);
                }
            }
            ProbeBwPhase::Up => {
                if self.is_time_to_go_down(ack, rs) {
                    // No high loss (yet) in this probe.
                    self.prev_probe_too_high = false;
                    self.start_probe_bw_down();
                }
            }
        }
    }

    /// §5.3.3.8.3 `IsTimeToProbeBW`: the randomised wait elapsed, or Reno would have probed by
    /// now; starts REFILL.
    fn is_time_to_probe_bw(&mut self) -> bool {
        if self.now > self.cycle_stamp + self.bw_probe_wait || self.is_reno_coexistence_probe_time()
        {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.8.3 `IsRenoCoexistenceProbeTime`: one round per target-inflight packet, ≤ 63.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        self.rounds_since_probe_up >= reno_rounds.min(MAX_RENO_ROUNDS)
    }

    /// §5.3.3.9 `IsTimeToCruise`.
    fn is_time_to_cruise(&self, ack: &AckEvent) -> bool {
        let inflight = ack.bytes_in_flight;
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(self.max_bw, 1.0)
    }

    /// §5.3.3.9 `IsTimeToGoDown`: a precautionary probe stops at inflight_longterm (§5.3.3.6);
    /// otherwise UP ends once bandwidth stopped growing (full_bw_now). In-flight is the ACK's
    /// prior in-flight, as Linux tcp_bbr.c v3 `bbr_update_cycle_phase` reads it: after the ACK
    /// it is always below a cwnd capped at inflight_longterm.
    fn is_time_to_go_down(&mut self, ack: &AckEvent, rs: &RateSample) -> bool {
        if self.prev_probe_too_high && ack.prior_in_flight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if ack.cwnd_limited && self.cwnd >= self.inflight_longterm {
            // Bandwidth is limited by inflight_longterm: keep probing.
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// §5.3.3.9 `RaiseInflightLongtermSlope`: inflight_longterm grows 1, 2, 4... SMSS per round
    /// in UP, one SMSS per `probe_up_acked_per_inc` bytes ACKed.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(self.mss);
    }

    /// §5.3.3.9 `ProbeInflightLongtermUpward`.
    fn probe_inflight_longterm_upward(&mut self, ack: &AckEvent) {
        if !ack.cwnd_limited || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += ack.bytes_acked;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta * self.mss);
        }
        if self.round.started() {
            self.raise_inflight_longterm_slope();
        }
    }

    /// §5.3.3.9 `AdaptLongTermModel`: tracks the ACK phase, advances the max-bw filter a round
    /// after a probe, returns to REFILL after a precautionary probe without excess loss, and
    /// raises inflight_longterm while the loss rate is safe. Loss-driven `IsInflightTooHigh`
    /// is this loss round's tally (module notes); `RS.tx_in_flight` is the ACK's prior
    /// in-flight. Returns whether it decided a state transition.
    fn adapt_long_term_model(&mut self, ack: &AckEvent, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round.started() {
            // Starting to get bandwidth-probing samples.
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round.started() {
            // End of the samples from the probe.
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.is_in_probe_bw() && !self.sample_app_limited(rs) {
                self.advance_max_bw_filter();
            }
            // Precautionary Bandwidth Probing: Acceleration.
            if self.is_in_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if self.loss_too_high_in_round || self.inflight_longterm == u64::MAX {
            return false;
        }
        if ack.prior_in_flight > self.inflight_longterm {
            self.inflight_longterm = ack.prior_in_flight;
        }
        if self.state == State::ProbeBw(ProbeBwPhase::Up) {
            self.probe_inflight_longterm_upward(ack);
        }
        false
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
                    (c.bw_probe_wait(), c.rounds_since_probe_up)
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
    fn heavy_loss_in_up_sets_inflight_longterm_and_goes_down() {
        // Appendix A.21: excess loss in UP sets inflight_longterm = max(tx_in_flight,
        // 0.7 × target) and goes DOWN, remembering that the probe went too high.
        let mut c = in_probe_bw(3);
        c.state = State::ProbeBw(ProbeBwPhase::Up);
        c.is_bw_probe_sample = true;
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now: SECOND,
            bytes_lost: 5 * MSS,
            bytes_in_flight: 120 * MSS,
            mss: MSS,
        });
        assert_eq!(c.inflight_longterm(), 120 * MSS);
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
        assert!(c.prev_probe_too_high && !c.is_bw_probe_sample);
    }

    /// From CRUISE at `now`: REFILL once the probe wait is up, UP a round later (with the min
    /// RTT taken as just refreshed, so that no ProbeRTT comes between).
    fn probe_up(c: &mut Bbr, now: &mut Nanos) {
        *now = c.cycle_stamp + c.bw_probe_wait() + 1;
        c.probe_rtt_min_stamp = *now;
        c.on_ack(&ack(c, *now, MSS, 1_000_000, 100 * MS, 95 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Refill));
        *now += 100 * MS;
        c.on_ack(&ack(c, *now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Up));
    }

    #[test]
    fn after_a_probe_with_too_much_loss_the_next_one_is_precautionary() {
        // §5.3.3.6: the probe after one that went too high goes DOWN as soon as in-flight
        // reaches inflight_longterm; a round later, with no excess loss, it is back in REFILL
        // (not CRUISE), and the UP after that is a full one.
        let mut c = in_probe_bw(3);
        let mut now = SECOND;
        probe_up(&mut c, &mut now);
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now,
            bytes_lost: 5 * MSS,
            bytes_in_flight: 120 * MSS,
            mss: MSS,
        });
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
        assert_eq!(c.inflight_longterm(), 120 * MSS);
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        // The next probe: UP stops at inflight_longterm (prior in-flight 120 segments).
        probe_up(&mut c, &mut now);
        assert!(c.prev_probe_too_high);
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 118 * MSS, false));
        assert_eq!(
            c.state(),
            State::ProbeBw(ProbeBwPhase::Up),
            "below inflight_longterm"
        );
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 119 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
        assert!(c.prev_probe_precautionary && !c.prev_probe_too_high);
        // A round of feedback without excess loss: straight back to REFILL...
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Refill));
        assert!(!c.prev_probe_precautionary);
        // ...and this UP holds in-flight at inflight_longterm.
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Up));
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 119 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Up));
    }

    #[test]
    fn inflight_longterm_grows_one_segment_per_cwnd_over_two_to_the_rounds_acked() {
        // §5.3.3.9 RaiseInflightLongtermSlope: BBR.probe_up_acked_per_inc =
        // max(cwnd / 2^bw_probe_up_rounds, SMSS) bytes ACKed per SMSS of growth.
        let mut c = in_probe_bw(3);
        c.cwnd = 64 * MSS;
        c.bw_probe_up_rounds = 0;
        let per_inc: Vec<u64> = (0..8)
            .map(|_| {
                c.raise_inflight_longterm_slope();
                c.probe_up_acked_per_inc
            })
            .collect();
        let expected = [64, 32, 16, 8, 4, 2, 1, 1].map(|segs| segs * MSS);
        assert_eq!(per_inc, expected);
        // cwnd fully used at inflight_longterm: 2 SMSS ACKed at 1 SMSS each grows it by 2.
        c.state = State::ProbeBw(ProbeBwPhase::Up);
        c.inflight_longterm = 64 * MSS;
        let a = ack(
            &c,
            2 * SECOND,
            2 * MSS,
            1_000_000,
            100 * MS,
            62 * MSS,
            false,
        );
        c.probe_inflight_longterm_upward(&a);
        assert_eq!(c.inflight_longterm(), 66 * MSS);
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
