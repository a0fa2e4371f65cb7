//! Recovery episodes: fast recovery after a loss found by SACK, sending by Proportional Rate
//! Reduction (RFC 6937) or RFC 6675's pipe < cwnd rule, and the repair after a retransmission
//! timeout. An episode ends once everything outstanding at its start is acknowledged; RFC 6582's
//! `recover` point keeps a second loss in the same window from starting another.

use slowstart_cc::mul_div_ceil;

use crate::settings::Recovery;

pub(super) struct Episodes {
    mode: Recovery,
    /// In fast recovery.
    fast: bool,
    /// Repairing after a retransmission timeout.
    timeout: bool,
    /// RFC 6582 `recover`: no new congestion episode until `una` passes it.
    recover_point: u64,
    /// RFC 6937 state: bytes delivered and sent since the episode began, and the bytes in
    /// flight at its start.
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
}

impl Episodes {
    pub fn new(mode: Recovery) -> Self {
        Episodes {
            mode,
            fast: false,
            timeout: false,
            recover_point: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
        }
    }

    /// In fast recovery.
    pub fn in_fast_recovery(&self) -> bool {
        self.fast
    }

    /// In either kind of episode.
    pub fn in_any(&self) -> bool {
        self.fast || self.timeout
    }

    /// Once segment `una` is the oldest unacknowledged, an episode that was running has ended.
    /// True if one ended.
    pub fn end_if_repaired(&mut self, una: u64) -> bool {
        if (self.fast || self.timeout) && una >= self.recover_point {
            self.fast = false;
            self.timeout = false;
            return true;
        }
        false
    }

    /// A new loss may start an episode: none runs and `una` passed the last one's end.
    pub fn may_start(&self, una: u64) -> bool {
        !self.fast && una >= self.recover_point
    }

    /// Fast recovery starts; it ends once segment `nxt` (the next new one) is reached, and
    /// `in_flight` bytes were outstanding before the ACK that found the loss.
    pub fn start_fast(&mut self, nxt: u64, in_flight: u64) {
        self.fast = true;
        self.recover_point = nxt;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = in_flight.max(1);
    }

    /// The retransmission timer expired: repair until segment `nxt` is reached.
    pub fn start_timeout(&mut self, nxt: u64) {
        self.fast = false;
        self.timeout = true;
        self.recover_point = nxt;
    }

    pub fn on_delivered(&mut self, bytes: u64) {
        if self.fast {
            self.prr_delivered += bytes;
        }
    }

    pub fn on_sent(&mut self, bytes: u64) {
        if self.fast {
            self.prr_out += bytes;
        }
    }

    /// Bytes the congestion state allows now with `pipe` in flight; `delivered` by the ACK
    /// being processed (PRR, RFC 6937 §3, during fast recovery).
    pub fn allowance(&self, cwnd: u64, ssthresh: u64, pipe: u64, delivered: u64, mss: u64) -> u64 {
        if !self.fast || self.mode == Recovery::Rfc6675 || ssthresh == u64::MAX {
            return cwnd.saturating_sub(pipe);
        }
        if pipe > ssthresh {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = mul_div_ceil(self.prr_delivered, ssthresh, self.recover_fs);
            target.saturating_sub(self.prr_out)
        } else {
            // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS.
            let limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered)
                + mss;
            (ssthresh - pipe).min(limit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prr_sends_in_proportion_then_slow_starts_back_to_ssthresh() {
        let mss = 1000;
        let mut e = Episodes::new(Recovery::Prr);
        assert_eq!(e.allowance(10_000, 5_000, 9_000, 1_000, mss), 1_000);
        e.start_fast(20, 10_000);
        // pipe above ssthresh: half of what is delivered (ssthresh / RecoverFS = 1/2).
        e.on_delivered(3_000);
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 3_000, mss), 1_500);
        e.on_sent(1_000);
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 3_000, mss), 500);
        // pipe below ssthresh: up to what was delivered and one MSS more.
        assert_eq!(e.allowance(5_000, 5_000, 1_000, 3_000, mss), 4_000);
        assert!(!e.may_start(19));
        assert!(!e.end_if_repaired(19));
        assert!(e.end_if_repaired(20));
        assert!(e.may_start(20));
        let mut r = Episodes::new(Recovery::Rfc6675);
        r.start_fast(20, 10_000);
        assert_eq!(
            r.allowance(5_000, 5_000, 4_000, 0, mss),
            1_000,
            "pipe < cwnd"
        );
    }
}
