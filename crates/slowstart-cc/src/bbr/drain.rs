//! BBR Drain, draft-ietf-ccwg-bbr-06 §5.3.2: pace at 0.5 × bw until in-flight ≤ 1 BDP, or for
//! at most three rounds, then ProbeBW.

use super::{Bbr, State, DEFAULT_CWND_GAIN, DRAIN_PACING_GAIN};
use crate::AckEvent;

/// §5.3.2: Drain ends after this many rounds even with in-flight above the BDP (a bandwidth
/// overestimated in Startup; the max filter then advances in the next ProbeBW cycle).
pub const DRAIN_MAX_ROUNDS: u64 = 3;

impl Bbr {
    /// §5.3.2 `EnterDrain`: pacing gain BBR.DrainPacingGain, cwnd gain BBR.DefaultCwndGain.
    pub(super) fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.pacing_gain = DRAIN_PACING_GAIN;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.drain_start_round = self.round.count();
    }

    /// §5.3.2 `CheckDrainDone`: in-flight at or below `Inflight(1.0)`, or more than
    /// DRAIN_MAX_ROUNDS rounds since Drain began.
    pub(super) fn check_drain_done(&mut self, ack: &AckEvent) {
        if self.state == State::Drain
            && (ack.bytes_in_flight <= self.inflight(self.bw, 1.0)
                || self.round.count() > self.drain_start_round + DRAIN_MAX_ROUNDS)
        {
            self.enter_probe_bw();
        }
    }

    /// §5.3.3.9 `EnterProbeBW`.
    pub(super) fn enter_probe_bw(&mut self) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down();
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::super::ProbeBwPhase;
    use super::*;
    use crate::{CongestionController, Phase};

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    /// A controller that has just entered Drain with bw 1 MB/s, min RTT 100 ms (BDP 100 kB).
    fn drained() -> Bbr {
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        for _ in 0..4 {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 150 * MSS, true));
        }
        assert_eq!(c.phase(), Phase::Drain);
        c
    }

    #[test]
    fn drain_paces_at_half_and_exits_at_one_bdp() {
        // Appendix A.3.
        let mut c = drained();
        assert_eq!(c.pacing_gain(), 0.5);
        assert_eq!(c.cwnd_gain(), 2.0);
        assert_eq!(c.pacing_rate(), Some(495_000)); // 0.5 × 1 MB/s × 0.99
                                                    // Still 101 kB in flight > BDP 100 kB: stay.
        let a = ack(&c, 500 * MS, MSS, 1_000_000, 100 * MS, 101 * MSS, false);
        c.on_ack(&a);
        assert_eq!(c.phase(), Phase::Drain);
        let a = ack(&c, 510 * MS, MSS, 1_000_000, 100 * MS, 100 * MSS, false);
        c.on_ack(&a);
        // ProbeBW starts in DOWN (§5.3.3.9 EnterProbeBW), and with in-flight already at
        // 1 BDP the same ACK moves on to CRUISE (IsTimeToCruise).
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        assert_eq!(c.cwnd_gain(), 2.0);
    }

    #[test]
    fn drain_ends_after_three_rounds_above_the_bdp() {
        // Appendix A.4: in-flight stays above Inflight(1.0) (the bandwidth was overestimated);
        // Drain still ends once round_count > drain_start_round + 3.
        let mut c = drained();
        let start = c.drain_start_round;
        assert_eq!(start, c.round_count());
        let mut now = 400 * MS;
        for i in 1..=DRAIN_MAX_ROUNDS {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 130 * MSS, true));
            assert_eq!(c.round_count(), start + i);
            assert_eq!(c.phase(), Phase::Drain, "round {i} of Drain");
        }
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 130 * MSS, true));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Down));
    }
}
