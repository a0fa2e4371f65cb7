//! The RFC 6298 retransmission timer: the RTO from an RTT estimator, doubled per expiry up to
//! the maximum (§5.5), restarted as data is acknowledged. The sender and the request stream
//! each keep one; the RTT estimator stays with its owner, which samples it by its own rules.

use slowstart_cc::RttEstimator;

use crate::timer::Timer;

#[derive(Clone, Debug)]
pub struct RetransmissionTimer {
    timer: Timer,
    /// Expiries since the last progress: the RTO is doubled this many times.
    backoff: u32,
    max_rto_ns: u64,
}

impl RetransmissionTimer {
    pub fn new(max_rto_ns: u64) -> Self {
        RetransmissionTimer {
            timer: Timer::default(),
            backoff: 0,
            max_rto_ns,
        }
    }

    /// Expire one backed-off RTO from `now` (RFC 6298 §5.5: double per expiry, capped).
    pub fn arm(&mut self, now: u64, rtt: &RttEstimator) {
        let rto = rtt
            .rto()
            .saturating_mul(1 << self.backoff.min(32))
            .min(self.max_rto_ns);
        self.timer.set(Some(now + rto));
    }

    pub fn stop(&mut self) {
        self.timer.set(None);
    }

    pub fn is_armed(&self) -> bool {
        self.timer.deadline().is_some()
    }

    pub fn deadline(&self) -> Option<u64> {
        self.timer.deadline()
    }

    /// The timer expired: the next RTO is twice as long.
    pub fn back_off(&mut self) {
        self.backoff += 1;
    }

    /// New data was acknowledged: back to the plain RTO.
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    /// The timer, for its session to fire ([`Timer::fire`]).
    pub fn timer_mut(&mut self) -> &mut Timer {
        &mut self.timer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MS, SEC};

    #[test]
    fn doubles_per_expiry_up_to_the_maximum_and_resets_on_progress() {
        let rtt = RttEstimator::new(200 * MS, 3 * SEC, MS);
        let mut t = RetransmissionTimer::new(3 * SEC);
        t.arm(0, &rtt);
        assert_eq!(t.deadline(), Some(SEC));
        t.back_off();
        t.stop();
        t.arm(0, &rtt);
        assert_eq!(t.deadline(), Some(2 * SEC));
        t.back_off();
        t.arm(0, &rtt);
        assert_eq!(t.deadline(), Some(3 * SEC), "capped at max_rto");
        t.reset_backoff();
        t.arm(10 * SEC, &rtt);
        assert_eq!(t.deadline(), Some(11 * SEC));
    }
}
