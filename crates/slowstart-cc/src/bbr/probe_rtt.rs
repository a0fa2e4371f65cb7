//! BBR ProbeRTT, draft-ietf-ccwg-bbr-06 §5.3.4: when the min RTT has not been refreshed for
//! 5 s, cap cwnd at 0.5 BDP (≥ 4 packets) for 200 ms and one round, then resume.

use super::{
    AckPhase, Bbr, State, MIN_RTT_FILTER_LEN, PROBE_RTT_CWND_GAIN, PROBE_RTT_DURATION,
    PROBE_RTT_INTERVAL,
};
use crate::{AckEvent, Nanos};

impl Bbr {
    /// §5.3.4.3 `UpdateMinRTT`.
    pub(super) fn update_min_rtt(&mut self, rtt: Option<Nanos>) {
        self.probe_rtt_expired = self.now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = rtt {
            if rtt < self.probe_rtt_min_delay || self.probe_rtt_expired {
                self.probe_rtt_min_delay = rtt;
                self.probe_rtt_min_stamp = self.now;
            }
        }
        let min_rtt_expired = self.now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if self.probe_rtt_min_delay < self.min_rtt || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min_delay;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// §5.3.4.3 `CheckProbeRTT` (without `idle_restart`: restart from idle is not modelled).
    pub(super) fn check_probe_rtt(&mut self, ack: &AckEvent) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired {
            self.enter_probe_rtt();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == State::ProbeRtt {
            self.handle_probe_rtt(ack);
        }
    }

    /// §5.3.4.3 `EnterProbeRTT`.
    fn enter_probe_rtt(&mut self) {
        self.state = State::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_RTT_CWND_GAIN;
    }

    /// §5.3.4.3 `HandleProbeRTT`; samples of data now in flight count as app limited.
    fn handle_probe_rtt(&mut self, ack: &AckEvent) {
        self.app_limited_until = self
            .app_limited_until
            .max(self.delivered + ack.bytes_in_flight);
        match self.probe_rtt_done_stamp {
            None if ack.bytes_in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(self.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            None => {}
            Some(_) => {
                if self.round.started() {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done();
                }
            }
        }
    }

    /// §5.3.4.3 `CheckProbeRTTDone`.
    fn check_probe_rtt_done(&mut self) {
        if matches!(self.probe_rtt_done_stamp, Some(done) if self.now > done) {
            // Wait another ProbeRTTInterval before the next ProbeRTT.
            self.probe_rtt_min_stamp = self.now;
            self.restore_cwnd();
            self.exit_probe_rtt();
        }
    }

    /// §5.3.4.4 `ExitProbeRTT`.
    fn exit_probe_rtt(&mut self) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down();
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::ack;
    use super::super::ProbeBwPhase;
    use super::*;
    use crate::{CongestionController, Phase, SECOND};

    const MSS: u64 = 1000;
    const MS: u64 = 1_000_000;

    #[test]
    fn probe_rtt_after_5s_without_new_min_held_200ms_and_a_round() {
        // bw 1 MB/s, RTT 100 ms: BDP 100 kB, ProbeRTT cwnd 50 kB.
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        for _ in 0..4 {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 150 * MSS, true));
        }
        // The RTT never drops below 100 ms; the first sample was at 100 ms.
        let first = 100 * MS;
        while now + 100 * MS <= first + PROBE_RTT_INTERVAL {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 90 * MSS, true));
            assert_ne!(c.phase(), Phase::ProbeRtt, "t={now}");
        }
        now = first + PROBE_RTT_INTERVAL + 1;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 90 * MSS, false));
        assert_eq!(c.phase(), Phase::ProbeRtt);
        assert_eq!(c.cwnd(), 50 * MSS, "cwnd 0.5 BDP");
        // Until in-flight drops to the ProbeRTT cwnd the 200 ms timer does not start.
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 60 * MSS, false));
        assert_eq!(c.probe_rtt_done_stamp, None);
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 50 * MSS, false));
        let entered = now;
        assert_eq!(c.probe_rtt_done_stamp, Some(entered + PROBE_RTT_DURATION));
        // A round passes quickly but 200 ms has not: stay.
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 50 * MSS, true));
        assert_eq!(c.phase(), Phase::ProbeRtt);
        // 200 ms passed: leave to ProbeBW_CRUISE with the saved cwnd restored.
        now = entered + PROBE_RTT_DURATION + 1;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 50 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        assert!(c.cwnd() > 50 * MSS);
    }

    #[test]
    fn probe_rtt_needs_a_round_too() {
        let mut c = Bbr::new(MSS, 10, 0);
        c.on_ack(&ack(&c, 100 * MS, MSS, 1_000_000, 100 * MS, 5 * MSS, true));
        let now = 100 * MS + PROBE_RTT_INTERVAL + 1;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 4 * MSS, false));
        assert_eq!(c.phase(), Phase::ProbeRtt);
        assert!(c.probe_rtt_done_stamp.is_some());
        // 300 ms later but no round ended: still in ProbeRTT.
        c.on_ack(&ack(
            &c,
            now + 300 * MS,
            MSS,
            1_000_000,
            100 * MS,
            4 * MSS,
            false,
        ));
        assert_eq!(c.phase(), Phase::ProbeRtt);
        // Round ends (and 200 ms passed): back to Startup, since the pipe was never full.
        c.on_ack(&ack(
            &c,
            now + 310 * MS,
            MSS,
            1_000_000,
            100 * MS,
            4 * MSS,
            true,
        ));
        assert_eq!(c.phase(), Phase::Startup);
    }

    #[test]
    fn a_lower_rtt_postpones_probe_rtt() {
        let mut c = Bbr::new(MSS, 10, 0);
        let mut rtt = 100 * MS;
        let mut now = 0;
        while now < 20 * SECOND {
            now += 100 * MS;
            rtt -= 1000; // a new minimum every ACK
            c.on_ack(&ack(&c, now, MSS, 1_000_000, rtt, 5 * MSS, true));
            assert_ne!(c.phase(), Phase::ProbeRtt);
        }
        assert_eq!(c.min_rtt(), rtt);
    }
}
