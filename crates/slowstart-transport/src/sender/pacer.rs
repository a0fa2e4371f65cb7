//! The pacer: packets leave no faster than the pacing rate, with a burst allowance of one send
//! quantum, as Linux's fq does. The rate is the controller's when it sets one; otherwise, with
//! pacing on, Linux's `tcp_update_pacing_rate` from cwnd and srtt.

use slowstart_cc::{mul_div, CongestionController, Controller, RttEstimator, SECOND};

use crate::timer::{Timer, TimerKind};
use crate::Io;

pub(super) struct Pacer {
    /// Pace at Linux's rate when the controller sets none.
    enabled: bool,
    /// Earliest departure of the next packet.
    next_send_ns: u64,
    timer: Timer,
}

impl Pacer {
    pub fn new(enabled: bool) -> Self {
        Pacer {
            enabled,
            next_send_ns: 0,
            timer: Timer::default(),
        }
    }

    /// Bytes per second to pace at, if any.
    pub fn rate(&self, cc: &Controller, rtt: &RttEstimator) -> Option<u64> {
        if let Some(r) = cc.pacing_rate() {
            return Some(r.max(1));
        }
        if !self.enabled || !rtt.has_sample() {
            return None;
        }
        // Linux tcp_update_pacing_rate: 200% of cwnd/srtt in slow start, 120% after.
        let ratio = if cc.cwnd() < cc.ssthresh() / 2 {
            200
        } else {
            120
        };
        let srtt = rtt.srtt().max(1);
        // ratio% of cwnd per srtt, in bytes per second: cwnd * ratio * 10^9 / 100 / srtt.
        Some(mul_div(cc.cwnd(), ratio * (SECOND / 100), srtt).max(1))
    }

    /// True if the next packet may not leave at `now`; then the pacing timer is armed for it.
    pub fn must_wait(&mut self, now: u64, flow: u32, io: &mut Io) -> bool {
        if self.next_send_ns <= now {
            return false;
        }
        if let Some(t) = self.timer.set(Some(self.next_send_ns)) {
            io.wake(t, flow, TimerKind::Pacing);
        }
        true
    }

    /// A packet of `wire` bytes left at `now`, paced at `rate` with bursts of `quantum` bytes.
    pub fn on_sent(&mut self, now: u64, wire: u64, rate: u64, quantum: u64) {
        let burst_ns = mul_div(quantum, SECOND, rate);
        let gap = mul_div(wire, SECOND, rate);
        self.next_send_ns = self.next_send_ns.max(now.saturating_sub(burst_ns)) + gap;
    }

    /// Forget the schedule: the next packet may leave at `now`.
    pub fn restart(&mut self, now: u64) {
        self.next_send_ns = now;
    }

    pub fn stop(&mut self) {
        let _ = self.timer.set(None);
    }

    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    pub fn timer_mut(&mut self) -> &mut Timer {
        &mut self.timer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_packets_at_the_rate_after_a_quantum_of_burst() {
        let mut p = Pacer::new(true);
        let mut io = Io::default();
        // 1 MB/s: a 1000-byte packet every ms, a 2000-byte burst.
        let rate = 1_000_000;
        assert!(!p.must_wait(0, 0, &mut io));
        p.on_sent(0, 1000, rate, 2000);
        assert!(p.must_wait(0, 0, &mut io));
        assert_eq!(io.wakeups, vec![(1_000_000, 0, TimerKind::Pacing)]);
        // After a long idle, a quantum leaves at once, then the rate holds again.
        p.on_sent(10_000_000, 1000, rate, 2000);
        assert!(!p.must_wait(10_000_000, 0, &mut io));
        p.on_sent(10_000_000, 1000, rate, 2000);
        assert!(!p.must_wait(10_000_000, 0, &mut io));
        p.on_sent(10_000_000, 1000, rate, 2000);
        assert!(p.must_wait(10_000_000, 0, &mut io));
    }
}
