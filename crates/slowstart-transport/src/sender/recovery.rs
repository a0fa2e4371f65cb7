//! Recovery episodes: fast recovery after a loss found by SACK, sending by Proportional Rate
//! Reduction (RFC 6937) or RFC 6675's pipe < cwnd rule, and the repair after a retransmission
//! timeout. An episode ends once everything outstanding at its start is acknowledged; RFC 6582's
//! `recover` point keeps a second loss in the same window from starting another. With
//! [`EcnReduction::Prr`], PRR also paces the window down after an ECN echo, as Linux does in
//! its CWR state (tcp_input.c `tcp_in_cwnd_reduction`: CA_CWR and CA_Recovery alike).

use slowstart_cc::mul_div_ceil;

use crate::settings::{EcnReduction, Recovery};

pub(super) struct Episodes {
    mode: Recovery,
    ecn_reduction: EcnReduction,
    /// In fast recovery.
    fast: bool,
    /// In an ECN reduction that PRR paces (Linux TCP_CA_CWR, with [`EcnReduction::Prr`]).
    cwr: bool,
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
    pub fn new(mode: Recovery, ecn_reduction: EcnReduction) -> Self {
        Episodes {
            mode,
            ecn_reduction,
            fast: false,
            cwr: false,
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
        self.cwr = false;
        self.recover_point = nxt;
        self.start_prr(in_flight);
    }

    /// An ECN echo lowered the window with `in_flight` bytes outstanding before its ACK: with
    /// [`EcnReduction::Prr`], PRR paces the reduction until [`Episodes::end_cwr`] (Linux
    /// `tcp_enter_cwr`, `tcp_init_cwnd_reduction`); otherwise nothing changes here.
    pub fn start_cwr(&mut self, in_flight: u64) {
        if self.ecn_reduction == EcnReduction::Prr {
            self.cwr = true;
            self.start_prr(in_flight);
        }
    }

    /// The ECN reduction is over: an ACK covered the segment that carried CWR.
    pub fn end_cwr(&mut self) {
        self.cwr = false;
    }

    fn start_prr(&mut self, in_flight: u64) {
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = in_flight.max(1);
    }

    /// PRR decides what is sent: in fast recovery with [`Recovery::Prr`], or in a paced ECN
    /// reduction.
    fn prr(&self) -> bool {
        (self.fast && self.mode == Recovery::Prr) || self.cwr
    }

    /// The retransmission timer expired: repair until segment `nxt` is reached.
    pub fn start_timeout(&mut self, nxt: u64) {
        self.fast = false;
        self.cwr = false;
        self.timeout = true;
        self.recover_point = nxt;
    }

    pub fn on_delivered(&mut self, bytes: u64) {
        if self.fast || self.cwr {
            self.prr_delivered += bytes;
        }
    }

    pub fn on_sent(&mut self, bytes: u64) {
        if self.fast || self.cwr {
            self.prr_out += bytes;
        }
    }

    /// Bytes the congestion state allows now with `pipe` in flight; `delivered` by the ACK
    /// being processed (PRR, RFC 6937 §3, during fast recovery and a paced ECN reduction).
    pub fn allowance(&self, cwnd: u64, ssthresh: u64, pipe: u64, delivered: u64, mss: u64) -> u64 {
        if !self.prr() || ssthresh == u64::MAX {
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
        let mut e = Episodes::new(Recovery::Prr, EcnReduction::Immediate);
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
        let mut r = Episodes::new(Recovery::Rfc6675, EcnReduction::Immediate);
        r.start_fast(20, 10_000);
        assert_eq!(
            r.allowance(5_000, 5_000, 4_000, 0, mss),
            1_000,
            "pipe < cwnd"
        );
    }

    #[test]
    fn an_ecn_reduction_runs_prr_only_when_asked_and_ends_with_its_episode() {
        let mss = 1000;
        // "immediate": an echo changes nothing here; pipe < cwnd decides.
        let mut e = Episodes::new(Recovery::Prr, EcnReduction::Immediate);
        e.start_cwr(10_000);
        e.on_delivered(2_000);
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 2_000, mss), 0);
        // "prr": half of what is delivered while pipe > ssthresh, whatever the recovery mode.
        let mut e = Episodes::new(Recovery::Rfc6675, EcnReduction::Prr);
        e.start_cwr(10_000);
        e.on_delivered(2_000);
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 2_000, mss), 1_000);
        e.on_sent(1_000);
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 2_000, mss), 0);
        assert!(!e.in_any(), "an ECN reduction is no recovery episode");
        e.end_cwr();
        assert_eq!(e.allowance(5_000, 5_000, 8_000, 2_000, mss), 0);
        // A timeout ends the paced reduction (Linux's CA_Loss is no reduction state).
        e.start_cwr(10_000);
        e.start_timeout(30);
        assert_eq!(e.allowance(1_000, 5_000, 0, 0, mss), 1_000, "cwnd - pipe");
    }
}
