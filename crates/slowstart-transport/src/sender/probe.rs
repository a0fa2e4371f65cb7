//! The tail loss probe (RFC 8985 §7): after 2 SRTT without progress, one segment goes out so
//! that its ACK's SACK shows which of the tail was lost, instead of waiting for the
//! retransmission timer. One probe per tail (§7.2).

use slowstart_cc::RttEstimator;

use crate::timer::Timer;

/// Allowance for a delayed ACK when one segment is in flight (RFC 8985 §7.2 WCDelAckT).
const WORST_CASE_DELAYED_ACK_NS: u64 = 200_000_000;
/// Shortest probe timeout.
const MIN_PTO_NS: u64 = 10_000_000;

pub(super) struct LossProbe {
    /// A probe is out and unanswered.
    out: bool,
    timer: Timer,
}

impl LossProbe {
    pub fn new() -> Self {
        LossProbe {
            out: false,
            timer: Timer::default(),
        }
    }

    /// A probe is out and unanswered.
    pub fn is_out(&self) -> bool {
        self.out
    }

    pub fn is_armed(&self) -> bool {
        self.timer.deadline().is_some()
    }

    /// A probe was sent.
    pub fn sent(&mut self) {
        self.out = true;
    }

    /// The cumulative ACK advanced: the next tail may be probed.
    pub fn answered(&mut self) {
        self.out = false;
    }

    /// Arm the probe at `now` + PTO (§7.2), or clear it when a probe is out, when `eligible`
    /// is false (RACK-TLP off, no data out, a recovery running), with no RTT sample yet, or when the retransmission timer (`rto_deadline`) would
    /// come first. `out_bytes` are outstanding, `mss` is a full segment.
    #[allow(clippy::too_many_arguments)]
    pub fn arm(
        &mut self,
        now: u64,
        eligible: bool,
        rtt: &RttEstimator,
        out_bytes: u64,
        mss: u64,
        rto_deadline: Option<u64>,
    ) {
        if !eligible || self.out || !rtt.has_sample() {
            self.stop();
            return;
        }
        let mut pto = 2 * rtt.srtt();
        if out_bytes <= mss {
            pto += WORST_CASE_DELAYED_ACK_NS;
        }
        let deadline = now + pto.max(MIN_PTO_NS);
        if rto_deadline.is_some_and(|rto| deadline >= rto) {
            self.stop();
            return;
        }
        self.timer.set(Some(deadline));
    }

    pub fn stop(&mut self) {
        self.timer.set(None);
    }

    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    pub fn timer_mut(&mut self) -> &mut Timer {
        &mut self.timer
    }
}
