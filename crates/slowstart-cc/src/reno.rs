//! Reno/NewReno, RFC 5681 §3: slow start, +1 MSS per RTT in congestion avoidance, halve on loss.
//! Loss recovery itself (RFC 6675 with PRR, RFC 6937) belongs to the transport.

use crate::loss_based::{LossBased, RenoRule};
use crate::slow_start::SlowStart;
use crate::window::AckCounting;

/// Reno: the loss-based frame with [`RenoRule`]'s +1 MSS per RTT and halving.
pub type Reno = LossBased<RenoRule>;

/// Reno with the given slow-start rule.
pub fn reno(mss: u64, initcwnd: u64, counting: AckCounting, slow_start: SlowStart) -> Reno {
    LossBased::new(mss, initcwnd, counting, slow_start, RenoRule)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AckEvent, CongestionController, CongestionEvent, Phase};

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
        let mut r = reno(MSS, 10, AckCounting::Bytes, SlowStart::Standard);
        for round in 0..5 {
            let cwnd = r.cwnd();
            assert_eq!(cwnd, (10 * MSS) << round);
            for _ in 0..cwnd / MSS {
                r.on_ack(&ack(MSS));
            }
        }
        assert_eq!(r.phase(), Phase::SlowStart);
    }

    #[test]
    fn per_ack_counting_with_delayed_acks_grows_by_half() {
        // Each ACK covers two segments: 1.5x per RTT with per-ACK counting, 2x with ABC.
        let mut per_ack = reno(MSS, 10, AckCounting::PerAck, SlowStart::Standard);
        let mut abc = reno(MSS, 10, AckCounting::Bytes, SlowStart::Standard);
        for _ in 0..5 {
            per_ack.on_ack(&ack(2 * MSS));
            abc.on_ack(&ack(2 * MSS));
        }
        assert_eq!(per_ack.cwnd(), 15 * MSS);
        assert_eq!(abc.cwnd(), 20 * MSS);
    }

    /// RFC 8511 §3.1 (ABE): an ECN echo keeps 0.8 of the window, a loss half (RFC 5681).
    #[test]
    fn ecn_echo_backs_off_by_beta_ecn_loss_by_half() {
        let mut r = reno(MSS, 100, AckCounting::Bytes, SlowStart::Standard);
        r.on_congestion_event(&CongestionEvent {
            ecn: true,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!((r.cwnd(), r.ssthresh()), (80 * MSS, 80 * MSS));
        assert_eq!(r.phase(), Phase::Recovery);
        r.on_recovery_exit(0);
        r.on_congestion_event(&CongestionEvent {
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(r.cwnd(), 40 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_rtt() {
        let mut r = reno(MSS, 40, AckCounting::Bytes, SlowStart::Standard);
        r.on_congestion_event(&CongestionEvent {
            mss: MSS,
            ..Default::default()
        });
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
        let mut r = reno(MSS, 10, AckCounting::Bytes, SlowStart::Standard);
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
        let mut r = reno(MSS, 64, AckCounting::Bytes, SlowStart::Standard);
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
