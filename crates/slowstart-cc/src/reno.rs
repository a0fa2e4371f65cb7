//! Reno/NewReno window rules, RFC 5681 §3 (slow start, congestion avoidance, multiplicative
//! decrease); loss recovery itself (RFC 6675 with PRR, RFC 6937) belongs to the transport.

use crate::window::{AckCounting, WindowGrowth};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase};

#[derive(Clone, Debug)]
pub struct Reno {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    growth: WindowGrowth,
    phase: Phase,
}

impl Reno {
    pub fn new(mss: u64, initcwnd_segments: u64, counting: AckCounting) -> Self {
        Self {
            cwnd: initcwnd_segments.max(1) * mss,
            ssthresh: u64::MAX,
            mss,
            growth: WindowGrowth::new(counting),
            phase: Phase::SlowStart,
        }
    }

    /// Linux `tcp_reno_ssthresh` (and ns-2): half the congestion window, at least two segments.
    /// RFC 5681 eq. (4) halves FlightSize instead; the two differ only when not cwnd-limited.
    fn halved_window(&self) -> u64 {
        (self.cwnd / 2).max(2 * self.mss)
    }
}

impl CongestionController for Reno {
    fn on_ack(&mut self, ack: &AckEvent) {
        if ack.in_recovery || !ack.cwnd_limited {
            return;
        }
        let mut credit = self.growth.ack_credit(ack);
        if self.cwnd < self.ssthresh {
            (self.cwnd, credit) = self.growth.slow_start(self.cwnd, self.ssthresh, ack);
            if self.cwnd < self.ssthresh {
                return;
            }
        }
        self.phase = Phase::CongestionAvoidance;
        if credit > 0 {
            self.cwnd = self.growth.additive_increase(self.cwnd, credit, self.mss);
        }
    }

    fn on_congestion_event(&mut self, _event: &CongestionEvent) {
        self.ssthresh = self.halved_window();
        self.cwnd = self.ssthresh;
        self.growth.reset();
        self.phase = Phase::Recovery;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.phase = if self.cwnd < self.ssthresh {
            Phase::RtoRecovery
        } else {
            Phase::CongestionAvoidance
        };
    }

    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        // RFC 5681 §3.1: ssthresh from eq. (4) unless already reduced in this episode; the loss
        // window is one segment.
        if self.phase != Phase::Recovery && self.phase != Phase::RtoRecovery {
            self.ssthresh = self.halved_window();
        }
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

    fn phase(&self) -> Phase {
        self.phase
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(bytes: u64) -> AckEvent {
        AckEvent {
            bytes_acked: bytes,
            mss: MSS,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    #[test]
    fn slow_start_doubles_per_window_of_acks() {
        let mut r = Reno::new(MSS, 10, AckCounting::Bytes);
        for round in 0..5 {
            let cwnd = r.cwnd();
            assert_eq!(cwnd, 10 * MSS << round);
            for _ in 0..cwnd / MSS {
                r.on_ack(&ack(MSS));
            }
        }
        assert_eq!(r.phase(), Phase::SlowStart);
    }

    #[test]
    fn per_ack_counting_with_delayed_acks_grows_by_half() {
        // Each ACK covers two segments: 1.5x per RTT with per-ACK counting, 2x with ABC.
        let mut per_ack = Reno::new(MSS, 10, AckCounting::PerAck);
        let mut abc = Reno::new(MSS, 10, AckCounting::Bytes);
        for _ in 0..5 {
            per_ack.on_ack(&ack(2 * MSS));
            abc.on_ack(&ack(2 * MSS));
        }
        assert_eq!(per_ack.cwnd(), 15 * MSS);
        assert_eq!(abc.cwnd(), 20 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_rtt() {
        let mut r = Reno::new(MSS, 40, AckCounting::Bytes);
        r.on_congestion_event(&CongestionEvent::default());
        r.on_recovery_exit(0);
        assert_eq!(r.cwnd(), 20 * MSS);
        assert_eq!(r.phase(), Phase::CongestionAvoidance);
        for rtt in 0..10 {
            let acks = r.cwnd() / MSS;
            for _ in 0..acks {
                r.on_ack(&ack(MSS));
            }
            assert_eq!(r.cwnd(), (21 + rtt) * MSS);
        }
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut r = Reno::new(MSS, 10, AckCounting::Bytes);
        r.on_ack(&AckEvent {
            cwnd_limited: false,
            ..ack(MSS)
        });
        r.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(MSS)
        });
        assert_eq!(r.cwnd(), 10 * MSS);
    }

    #[test]
    fn rto_collapses_to_one_segment_and_keeps_reduced_ssthresh() {
        let mut r = Reno::new(MSS, 64, AckCounting::Bytes);
        r.on_rto(0, 64 * MSS);
        assert_eq!((r.cwnd(), r.ssthresh()), (MSS, 32 * MSS));
        assert_eq!(r.phase(), Phase::RtoRecovery);
        // A second timeout in the same episode does not halve ssthresh again.
        r.on_rto(0, MSS);
        assert_eq!(r.ssthresh(), 32 * MSS);
        // Slow start back to ssthresh, then congestion avoidance.
        for _ in 0..31 {
            r.on_ack(&ack(MSS));
        }
        assert_eq!(r.cwnd(), 32 * MSS);
        assert_eq!(r.phase(), Phase::CongestionAvoidance);
    }
}
