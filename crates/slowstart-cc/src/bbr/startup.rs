//! BBR Startup, draft-ietf-ccwg-bbr-06 §5.3.1: pacing gain 2.77, cwnd gain 2, until the pipe is
//! full (3 rounds with < 25% growth, §5.3.1.2) or loss is too high (§5.3.1.3).

use super::{Bbr, State, DEFAULT_CWND_GAIN, STARTUP_PACING_GAIN};
use crate::RateSample;

/// §5.3.1.2: bandwidth must grow by at least 25% per round...
pub const FULL_BW_GROWTH: f64 = 1.25;
/// ...or the pipe is full after this many rounds without it.
pub const FULL_BW_ROUNDS: u32 = 3;
/// §5.3.1.3 BBRStartupFullLossCnt = 6 loss events in a round (approximated by lost MSS).
pub const STARTUP_FULL_LOSS_CNT: u64 = 6;

impl Bbr {
    /// §5.3.1.1 `EnterStartup`: BBR.StartupPacingGain and BBR.DefaultCwndGain.
    pub(super) fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.pacing_gain = STARTUP_PACING_GAIN;
        self.cwnd_gain = DEFAULT_CWND_GAIN;
    }

    /// §5.3.1.2 `ResetFullBW`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 `CheckFullBWReached` (also used by ProbeBW_UP): once per round, on its first
    /// non-application-limited sample (-06; -01 also took a new baseline mid-round).
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || !self.round.started() || self.sample_app_limited(rs) {
            return;
        }
        if rs.delivery_rate as f64 >= self.full_bw as f64 * FULL_BW_GROWTH {
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_ROUNDS;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// §5.3.1.3 `CheckStartupHighLoss`, at the end of a loss round: in recovery, at least
    /// BBRStartupFullLossCnt lost segments and a loss rate above BBR.LossThresh. Then
    /// inflight_longterm = max(BDP, inflight_latest) and the pipe counts as full.
    pub(super) fn check_startup_high_loss(&mut self) {
        if self.state != State::Startup || self.full_bw_reached {
            return;
        }
        if self.in_recovery
            && self.loss_bytes_in_round >= STARTUP_FULL_LOSS_CNT * self.mss
            && self.loss_too_high_in_round
        {
            self.inflight_longterm = self
                .bdp_multiple(self.max_bw, 1.0)
                .max(self.inflight_latest);
            self.full_bw_reached = true;
        }
    }

    /// §5.3.1.1 `CheckStartupDone`.
    pub(super) fn check_startup_done(&mut self) {
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::*;
    use crate::{CongestionController, CongestionEvent, Phase};

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    #[test]
    fn startup_gains() {
        let c = Bbr::new(MSS, 10, 0);
        assert_eq!(c.state(), State::Startup);
        assert_eq!(c.pacing_gain(), 2.77);
        assert_eq!(c.cwnd_gain(), 2.0);
    }

    #[test]
    fn exits_after_three_rounds_without_25_percent_growth() {
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        // Growing 2x per round: stays in Startup.
        let mut rate = 1_000_000;
        for _ in 0..5 {
            now += 10 * MS;
            c.on_ack(&ack(&c, now, MSS, rate, 10 * MS, 500 * MSS, true));
            rate *= 2;
        }
        assert_eq!(c.phase(), Phase::Startup);
        // Less than 25% above the baseline (the last rate that grew by 25%) is no growth.
        let base = rate / 2;
        for (i, g) in [1.2, 1.24].iter().enumerate() {
            now += 10 * MS;
            c.on_ack(&ack(
                &c,
                now,
                MSS,
                (base as f64 * g) as u64,
                10 * MS,
                500 * MSS,
                true,
            ));
            assert_eq!(c.phase(), Phase::Startup, "round {i}");
            assert_eq!(c.full_bw_count, i as u32 + 1);
        }
        // Acks within a round do not count rounds.
        c.on_ack(&ack(&c, now, MSS, base, 10 * MS, 500 * MSS, false));
        assert_eq!(c.phase(), Phase::Startup);
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, base, 10 * MS, 500 * MSS, true));
        assert!(c.full_bw_reached());
        assert_eq!(c.phase(), Phase::Drain);
    }

    #[test]
    fn app_limited_samples_do_not_fill_the_pipe() {
        let mut c = Bbr::new(MSS, 10, 0);
        for i in 1..10 {
            let mut a = ack(&c, i * 10 * MS, MSS, 1_000_000, 10 * MS, 5 * MSS, true);
            a.rate.as_mut().unwrap().is_app_limited = true;
            c.on_ack(&a);
        }
        assert_eq!(c.phase(), Phase::Startup);
    }

    #[test]
    fn high_loss_in_recovery_ends_startup() {
        let mut c = Bbr::new(MSS, 10, 0);
        let mut rate = 1_000_000;
        let mut now = 0;
        for _ in 0..3 {
            now += 10 * MS;
            c.on_ack(&ack(&c, now, MSS, rate, 10 * MS, 50 * MSS, true));
            rate *= 2;
        }
        // 6 segments lost of 100 in flight: 6% > 2%, 6 loss "events".
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now,
            bytes_lost: 6 * MSS,
            bytes_in_flight: 100 * MSS,
            mss: MSS,
        });
        assert_eq!(c.phase(), Phase::Startup);
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, rate, 10 * MS, 50 * MSS, true));
        assert!(c.full_bw_reached());
        assert_eq!(c.phase(), Phase::Drain);
        // inflight_longterm = max(BDP, inflight_latest): 8 MB/s × 10 ms = 80 kB.
        assert_eq!(c.inflight_longterm(), 80 * MSS);
    }

    #[test]
    fn loss_in_startup_does_not_cut_cwnd() {
        // §5.6.4.4 OnEnterFastRecovery only saves cwnd (-01's code held packet conservation).
        let mut c = Bbr::new(MSS, 10, 0);
        c.on_ack(&ack(&c, 10 * MS, 10 * MSS, 1_000_000, 10 * MS, 0, true));
        let cwnd = c.cwnd();
        assert_eq!(cwnd, 20 * MSS);
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now: 10 * MS,
            bytes_lost: 3 * MSS,
            bytes_in_flight: 20 * MSS,
            mss: MSS,
        });
        assert_eq!(c.cwnd(), cwnd);
        assert_eq!(c.phase(), Phase::Startup);
    }

    #[test]
    fn the_baseline_is_taken_once_per_round() {
        // -06 §5.3.1.2 checks only at a round start: a rate that doubles inside each round
        // (but not from one round's start to the next) does not reset the count, so the pipe
        // is full after three rounds. -01 took each such sample as a new baseline and never
        // left Startup here.
        let mut c = Bbr::new(MSS, 10, 0);
        let base = 1_000_000;
        let mut now = 10 * MS;
        c.on_ack(&ack(&c, now, MSS, base, 10 * MS, 500 * MSS, true));
        for round in 1..=3 {
            now += 5 * MS;
            c.on_ack(&ack(&c, now, MSS, base << round, 10 * MS, 500 * MSS, false));
            assert_eq!(c.full_bw, base, "mid-round sample, round {round}");
            now += 5 * MS;
            c.on_ack(&ack(&c, now, MSS, base, 10 * MS, 500 * MSS, true));
            assert_eq!(c.full_bw_count, round);
        }
        assert!(c.full_bw_reached());
        assert_eq!(c.phase(), Phase::Drain);
    }

    #[test]
    fn high_loss_ends_startup_even_when_application_limited() {
        // Appendix A.2: loss ends Startup though every bandwidth sample is app limited.
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        let app_limited_ack = |c: &mut Bbr, now: u64| {
            let mut a = ack(c, now, MSS, 1_000_000, 10 * MS, 50 * MSS, true);
            a.rate.as_mut().unwrap().is_app_limited = true;
            c.on_ack(&a);
        };
        for _ in 0..5 {
            now += 10 * MS;
            app_limited_ack(&mut c, now);
        }
        assert_eq!(c.phase(), Phase::Startup);
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now,
            bytes_lost: 6 * MSS,
            bytes_in_flight: 100 * MSS,
            mss: MSS,
        });
        now += 10 * MS;
        app_limited_ack(&mut c, now);
        assert!(c.full_bw_reached());
        assert_eq!(c.phase(), Phase::Drain);
    }

    #[test]
    fn light_loss_does_not_end_startup() {
        let mut c = Bbr::new(MSS, 10, 0);
        let mut rate = 1_000_000;
        for i in 1..4 {
            c.on_ack(&ack(&c, i * 10 * MS, MSS, rate, 10 * MS, 50 * MSS, true));
            rate *= 2;
        }
        // 1 segment of 100: 1% loss.
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now: 40 * MS,
            bytes_lost: MSS,
            bytes_in_flight: 100 * MSS,
            mss: MSS,
        });
        c.on_ack(&ack(&c, 50 * MS, MSS, rate, 10 * MS, 50 * MSS, true));
        assert_eq!(c.phase(), Phase::Startup);
    }
}
