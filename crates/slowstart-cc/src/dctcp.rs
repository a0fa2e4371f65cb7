//! DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010; Linux tcp_dctcp.c): Reno's slow start and
//! increase, but an ECN echo cuts cwnd by alpha / 2, alpha being the moving average of the
//! fraction of bytes marked CE per window of data. Loss halves cwnd as Reno does (RFC 8257 §3.5).
//!
//! The reduction happens at most once per window (the transport's RFC 3168 §6.1.2 rule, Linux's
//! TCP_CA_CWR state); the marked fraction comes from the receiver's per-packet feedback
//! (`ecn_feedback = "dctcp"`, RFC 8257 §3.2) through
//! [`crate::CongestionController::on_ecn_feedback`].

use crate::controller::EcnFeedback;
use crate::loss_based::{AvoidanceRule, RenoRule};
use crate::params::CcError;
use crate::params::{Accepts, ParamInfo, Params};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent};

/// The parameters of `dctcp`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "g",
        doc: "gain of alpha's moving average, per window of data (RFC 8257 §3.3: 1/16; Linux \
              dctcp_shift_g = 4)",
        default: "0.0625",
        accepts: Accepts::number(0.0001, 1.0),
    },
    ParamInfo {
        name: "alpha_init",
        doc: "alpha before the first window ends: 1 makes the first reduction a halving (Linux \
              dctcp_alpha_on_init = 1024/1024, ns-3 TcpDctcp DctcpAlphaOnInit)",
        default: "1",
        accepts: Accepts::number(0.0, 1.0),
    },
];

/// The bytes delivered and the bytes reported CE-marked since a window (DCTCP) or round
/// (Prague) began: the marked fraction their alpha moves towards.
#[derive(Clone, Debug, Default)]
pub(crate) struct MarkedBytes {
    acked: u64,
    marked: u64,
}

impl MarkedBytes {
    pub(crate) fn add(&mut self, fb: &EcnFeedback) {
        self.acked += fb.acked_bytes;
        self.marked += fb.ce_bytes;
    }

    /// The fraction of the bytes delivered that were marked (0 of none), counting anew.
    pub(crate) fn take_fraction(&mut self) -> f64 {
        let MarkedBytes { acked, marked } = std::mem::take(self);
        if acked > 0 {
            marked.min(acked) as f64 / acked as f64
        } else {
            0.0
        }
    }
}

/// DCTCP's avoidance rule: Reno's increase, alpha's estimate and the decrease by alpha / 2.
#[derive(Clone, Debug)]
pub struct Dctcp {
    g: f64,
    /// Estimated fraction of bytes marked (RFC 8257 `DCTCP.Alpha`).
    pub alpha: f64,
    /// Bytes delivered and bytes reported marked in the current window (`DCTCP.BytesAcked`,
    /// `DCTCP.BytesMarked`).
    counts: MarkedBytes,
    /// The window of data ends once this many bytes are delivered (`DCTCP.WindowEnd`: SND.NXT
    /// when the window began; Linux `next_seq`).
    window_end: u64,
}

impl Dctcp {
    /// A rule with gain `g` (RFC 8257 §3.3) and alpha starting at `alpha_init`.
    pub fn new(g: f64, alpha_init: f64) -> Self {
        Dctcp {
            g,
            alpha: alpha_init,
            counts: MarkedBytes::default(),
            window_end: 0,
        }
    }

    /// From the `g` and `alpha_init` parameters.
    pub fn from_params(params: &Params) -> Result<Self, CcError> {
        Ok(Self::new(params.number("g")?, params.number("alpha_init")?))
    }
}

impl AvoidanceRule for Dctcp {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        RenoRule.increase(cwnd, credit, ack, growth)
    }

    /// RFC 8257 §3.5: loss as conventional TCP (Linux `dctcp_react_to_loss`: half of cwnd).
    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        RenoRule.decrease(cwnd, event)
    }

    /// RFC 8257 §3.3: cwnd x (1 - alpha / 2), at least two segments (Linux `dctcp_ssthresh`).
    fn decrease_ecn(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        let cut = (cwnd as f64 * self.alpha / 2.0) as u64;
        (cwnd - cut.min(cwnd)).max(2 * event.mss)
    }

    /// RFC 8257 §3.3: count the bytes acknowledged and those marked; when the window of data
    /// ends, alpha = (1 - g) alpha + g M with M the marked fraction, and a new window begins.
    fn on_ecn_feedback(&mut self, fb: &EcnFeedback) {
        self.counts.add(fb);
        if fb.delivered >= self.window_end {
            let m = self.counts.take_fraction();
            self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
            self.window_end = fb.delivered + fb.in_flight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_based::LossBased;
    use crate::slow_start::SlowStart;
    use crate::window::AckCounting;
    use crate::{CongestionController, Phase};

    const MSS: u64 = 1000;

    /// A sender keeping `flight` segments in flight: each ACK delivers one segment.
    struct Feed {
        delivered: u64,
        flight: u64,
    }

    impl Feed {
        fn ack(&mut self, d: &mut Dctcp, ce: bool) {
            self.delivered += MSS;
            d.on_ecn_feedback(&EcnFeedback {
                acked_bytes: MSS,
                ce_bytes: if ce { MSS } else { 0 },
                delivered: self.delivered,
                in_flight: self.flight * MSS,
                mss: MSS,
                ..Default::default()
            });
        }

        /// One window: `flight` ACKs, the first `marked` of them CE.
        fn window(&mut self, d: &mut Dctcp, marked: u64) {
            for i in 0..self.flight {
                self.ack(d, i < marked);
            }
        }
    }

    #[test]
    fn alpha_is_the_moving_average_of_the_marked_fraction_per_window() {
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        let mut feed = Feed {
            delivered: 0,
            flight: 10,
        };
        // The first ACK ends the window that began before any data was sent.
        feed.ack(&mut d, false);
        assert!((d.alpha - 15.0 / 16.0).abs() < 1e-12);
        // Windows without marks: alpha falls by (1 - g) per window of 10 ACKs, not per ACK.
        for n in 1..=5 {
            for _ in 0..9 {
                feed.ack(&mut d, false);
            }
            assert!((d.alpha - (15.0f64 / 16.0).powi(n)).abs() < 1e-9);
            feed.ack(&mut d, false);
            assert!((d.alpha - (15.0f64 / 16.0).powi(n + 1)).abs() < 1e-9);
        }
        // A steady marked fraction F is alpha's fixed point: alpha -> F.
        for _ in 0..400 {
            feed.window(&mut d, 3);
        }
        assert!((d.alpha - 0.3).abs() < 1e-6, "{}", d.alpha);
    }

    #[test]
    fn a_fully_marked_window_moves_alpha_by_g() {
        let mut d = Dctcp::new(1.0 / 16.0, 0.0);
        let mut feed = Feed {
            delivered: 0,
            flight: 20,
        };
        feed.ack(&mut d, false);
        assert_eq!(d.alpha, 0.0);
        feed.window(&mut d, 20);
        assert!((d.alpha - 1.0 / 16.0).abs() < 1e-12, "{}", d.alpha);
    }

    #[test]
    fn echo_cuts_by_half_alpha_and_loss_halves() {
        let event = CongestionEvent {
            ecn: true,
            mss: MSS,
            ..Default::default()
        };
        let mut d = Dctcp::new(1.0 / 16.0, 1.0);
        assert_eq!(d.decrease_ecn(100 * MSS, &event), 50 * MSS);
        d.alpha = 0.2;
        assert_eq!(d.decrease_ecn(100 * MSS, &event), 90 * MSS);
        d.alpha = 0.0;
        assert_eq!(d.decrease_ecn(100 * MSS, &event), 100 * MSS);
        assert_eq!(d.decrease_ecn(2 * MSS, &event), 2 * MSS);
        // Loss: conventional TCP's response whatever alpha is (RFC 8257 §3.5).
        let loss = CongestionEvent {
            mss: MSS,
            ..Default::default()
        };
        assert_eq!(d.decrease(100 * MSS, &loss), 50 * MSS);
    }

    #[test]
    fn in_the_frame_slow_start_grows_and_an_echo_sets_ssthresh() {
        let mut c = LossBased::new(
            MSS,
            10,
            AckCounting::Bytes,
            SlowStart::Standard,
            Dctcp::new(1.0 / 16.0, 0.5),
        );
        for _ in 0..10 {
            c.on_ack(&AckEvent {
                bytes_acked: MSS,
                mss: MSS,
                cwnd_limited: true,
                ..Default::default()
            });
        }
        assert_eq!(c.cwnd(), 20 * MSS);
        c.on_congestion_event(&CongestionEvent {
            ecn: true,
            mss: MSS,
            ..Default::default()
        });
        // alpha 0.5: cwnd x 0.75.
        assert_eq!((c.cwnd(), c.ssthresh()), (15 * MSS, 15 * MSS));
        assert_eq!(c.phase(), Phase::Recovery);
    }
}
