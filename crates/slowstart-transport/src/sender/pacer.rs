//! The pacer: packets leave no faster than the pacing rate, with a burst allowance of one send
//! quantum, as Linux's fq does. The rate is the controller's when it sets one; otherwise, with
//! pacing on, Linux's `tcp_update_pacing_rate` from cwnd and srtt.

use slowstart_cc::{CongestionController, Controller, RttEstimator};

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
        // In u64 when the product fits (identical quotient, no 128-bit division call).
        Some(match cc.cwnd().checked_mul(ratio * 1_000_000_000) {
            Some(product) => (product / 100 / srtt).max(1),
            None => ((cc.cwnd() as u128 * ratio as u128 * 1_000_000_000 / 100) / srtt as u128)
                .max(1) as u64,
        })
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
        let burst_ns = ns_to_send(quantum, rate);
        let gap = ns_to_send(wire, rate);
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

/// Nanoseconds `bytes` take at `rate` bytes per second, rounded down: in u64 when the product
/// fits (identical quotient, no 128-bit division call).
fn ns_to_send(bytes: u64, rate: u64) -> u64 {
    match bytes.checked_mul(1_000_000_000) {
        Some(product) => product / rate,
        None => (bytes as u128 * 1_000_000_000 / rate as u128) as u64,
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
