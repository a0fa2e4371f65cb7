//! BBR Drain, draft-ietf-ccwg-bbr-01 §5.3.2: pace at 0.35 × bw until in-flight ≤ 1 BDP, then
//! ProbeBW.

use super::{Bbr, State, DEFAULT_CWND_GAIN, DRAIN_PACING_GAIN, STARTUP_CWND_GAIN};
use crate::AckEvent;

impl Bbr {
    /// §5.3.2 `BBREnterDrain`: pacing gain BBRDrainPacingGain, cwnd gain kept at Startup's.
    pub(super) fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.pacing_gain = DRAIN_PACING_GAIN;
        self.cwnd_gain = STARTUP_CWND_GAIN;
    }

    /// §5.3.2 `BBRCheckDrainDone`: in-flight at or below `BBRInflight(bw, 1.0)`.
    pub(super) fn check_drain_done(&mut self, ack: &AckEvent) {
        if self.state == State::Drain && ack.bytes_in_flight <= self.inflight(self.bw, 1.0) {
            self.enter_probe_bw();
        }
    }

    /// §5.3.3.6 `BBREnterProbeBW`.
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
    fn drain_paces_at_035_and_exits_at_one_bdp() {
        let mut c = drained();
        assert_eq!(c.pacing_gain(), 0.35);
        assert_eq!(c.cwnd_gain(), 2.0);
        assert_eq!(c.pacing_rate(), Some(346_500)); // 0.35 × 1 MB/s × 0.99
                                                    // Still 101 kB in flight > BDP 100 kB: stay.
        c.on_ack(&ack(
            &c,
            500 * MS,
            MSS,
            1_000_000,
            100 * MS,
            101 * MSS,
            false,
        ));
        assert_eq!(c.phase(), Phase::Drain);
        c.on_ack(&ack(
            &c,
            510 * MS,
            MSS,
            1_000_000,
            100 * MS,
            100 * MSS,
            false,
        ));
        // ProbeBW starts in DOWN (§5.3.3.6 BBREnterProbeBW), and with in-flight already at
        // 1 BDP the same ACK moves on to CRUISE (BBRIsTimeToCruise).
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        assert_eq!(c.cwnd_gain(), 2.0);
    }
}
