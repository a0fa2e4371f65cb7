//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04; Linux tcp_prague.c of the
//! L4STeam tree): DCTCP adapted to the public Internet. Its data packets carry ECT(1), the L4S
//! identifier, so an L4S queue (DualPI2's L queue, RFC 9332) marks them at a shallow step.
//!
//! - alpha, the moving average of the fraction of delivered bytes marked CE, moves by
//!   g = 1/16 towards the last round's fraction once per virtual RTT (the draft; Linux
//!   `prague_update_alpha`), and not before the first CE mark (`saw_ce`).
//! - An ECN echo multiplies cwnd by (1 - alpha / 2), at most once per virtual RTT (the draft;
//!   Linux `prague_enter_cwr`); the transport adds its once-per-window rule (RFC 3168 §6.1.2).
//! - Additive increase of one segment per rtt_virt = max(srtt, 25 ms) (the draft's reduced
//!   RTT dependence): per RTT, cwnd grows by (srtt / rtt_virt)^2 segments, so the rate grows as
//!   a flow's with RTT rtt_virt would (Linux `prague_rate_scaled_ai_ack_increase`). CE-marked
//!   bytes give no credit (Linux `acked -= rs->ece_delta`, the unsaturated increase).
//! - Loss halves cwnd, as Reno (the draft; Linux `prague_enter_loss`).
//!
//! Prague needs Accurate ECN feedback (RFC 9768) to count the marks; the flow asks for it
//! (`ecn_feedback = "accurate"`, [`crate::registry::needs_ecn`]). When the handshake does not
//! give it (a receiver without AccECN, `receiver_ecn`), the flow runs without ECN and Prague
//! falls back to Reno, as Linux's module does (`prague_init` switches to `prague_reno`:
//! `tcp_reno_cong_avoid`, one segment per RTT, and `tcp_reno_ssthresh`, half of cwnd on loss;
//! TCP_CONG_NO_FALLBACK_RFC3168 keeps it off RFC 3168 ECN).
//!
//! Not modelled: Linux's 500-round transition before RTT independence starts
//! (`prague_rtt_transition`; the draft gives none), classic-ECN AQM detection (off by default in
//! Linux, `prague_ecn_fallback = 0`), its own pacing (the flow's `pacing` applies).

use crate::controller::{EcnCodepoint, EcnFeedback, NegotiatedEcn};
use crate::dctcp::MarkedBytes;
use crate::loss_based::{AvoidanceRule, RenoRule};
use crate::params::CcError;
use crate::params::{Accepts, ParamInfo, Params};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent, Nanos};

/// The parameters of `prague`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "g",
        doc: "gain of alpha's moving average, per virtual RTT (draft-briscoe-iccrg-prague-\
              congestion-control-04: 1/16; Linux PRAGUE_SHIFT_G = 4)",
        default: "0.0625",
        accepts: Accepts::number(0.0001, 1.0),
    },
    ParamInfo {
        name: "rtt_virt_min_ms",
        doc: "floor of the virtual RTT, ms: rtt_virt = max(srtt, this) paces alpha's updates, \
              the reductions and the additive increase (the draft: 25 ms; Linux \
              prague_rtt_target); 0 makes Prague RTT-dependent as DCTCP",
        default: "25",
        accepts: Accepts::number(0.0, 10_000.0),
    },
];

/// Prague's avoidance rule: the scaled additive increase, alpha's estimate and the decrease by
/// alpha / 2 once per virtual RTT.
#[derive(Clone, Debug)]
pub struct Prague {
    g: f64,
    rtt_virt_min: Nanos,
    /// Estimated fraction of bytes marked (Linux `upscaled_alpha >> PRAGUE_SHIFT_G`); 1 until
    /// the first update, so the first reduction halves (Linux `prague_init`).
    pub alpha: f64,
    /// Whether any CE mark has been reported: alpha stays put until then (Linux `saw_ce`).
    saw_ce: bool,
    /// Bytes delivered and bytes reported marked since the round began (Linux `delivered -
    /// old_delivered`, `delivered_ce - old_delivered_ce`).
    counts: MarkedBytes,
    /// The round ends once this many bytes are delivered (Linux `next_seq = snd_nxt`).
    round_end: u64,
    /// When alpha last moved and when cwnd was last reduced on ECN (Linux `alpha_stamp`,
    /// `cwr_stamp`).
    alpha_at: Option<Nanos>,
    reduced_at: Option<Nanos>,
    /// The latest smoothed RTT and the CE bytes of the latest ACK (not credited to growth).
    srtt: Nanos,
    ce_bytes: u64,
    /// The handshake gave no Accurate ECN: Reno's increase (Linux `prague_reno`).
    pub reno_fallback: bool,
}

impl Prague {
    /// A rule with gain `g` and the virtual RTT's floor `rtt_virt_min` (ns); alpha starts at 1.
    pub fn new(g: f64, rtt_virt_min: Nanos) -> Self {
        Prague {
            g,
            rtt_virt_min,
            alpha: 1.0,
            saw_ce: false,
            counts: MarkedBytes::default(),
            round_end: 0,
            alpha_at: None,
            reduced_at: None,
            srtt: 0,
            ce_bytes: 0,
            reno_fallback: false,
        }
    }

    /// From the `g` and `rtt_virt_min_ms` parameters.
    pub fn from_params(params: &Params) -> Result<Self, CcError> {
        let floor_ms = params.number("rtt_virt_min_ms")?;
        Ok(Self::new(
            params.number("g")?,
            (floor_ms * 1e6).round() as Nanos,
        ))
    }

    /// rtt_virt = max(srtt, its floor), the draft's virtual RTT.
    pub fn rtt_virt(&self) -> Nanos {
        self.srtt.max(self.rtt_virt_min)
    }

    /// Whether `now` is a virtual RTT or more after `at` (or nothing happened yet).
    fn virtual_rtt_since(&self, at: Option<Nanos>, now: Nanos) -> bool {
        at.is_none_or(|at| now.saturating_sub(at) >= self.rtt_virt())
    }

    /// Segments of increase per RTT: (srtt / rtt_virt)^2, 1 at or above the floor.
    pub fn ai_per_rtt(&self) -> f64 {
        let rtt_virt = self.rtt_virt();
        if rtt_virt == 0 || self.srtt >= rtt_virt {
            1.0
        } else {
            let ratio = self.srtt as f64 / rtt_virt as f64;
            ratio * ratio
        }
    }
}

impl AvoidanceRule for Prague {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        if self.reno_fallback {
            return RenoRule.increase(cwnd, credit, ack, growth);
        }
        let credit = credit.saturating_sub(std::mem::take(&mut self.ce_bytes));
        let step = ((ack.mss as f64 * self.ai_per_rtt()).round() as u64).max(1);
        growth.additive_increase(cwnd, credit, step)
    }

    /// Loss: Reno's halving, as the draft's classic response to loss.
    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        RenoRule.decrease(cwnd, event)
    }

    /// cwnd x (1 - alpha / 2), at least two segments, at most once per virtual RTT.
    fn decrease_ecn(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        if !self.virtual_rtt_since(self.reduced_at, event.now) {
            return cwnd;
        }
        self.reduced_at = Some(event.now);
        let cut = (cwnd as f64 * self.alpha / 2.0).round() as u64;
        (cwnd - cut.min(cwnd)).max(2 * event.mss)
    }

    /// Without Accurate ECN, Linux's `prague_init` hands the socket to `prague_reno`.
    fn on_ecn_negotiated(&mut self, ecn: NegotiatedEcn) {
        self.reno_fallback = ecn != NegotiatedEcn::Accurate;
    }

    fn observe(&mut self, ack: &AckEvent) {
        self.srtt = ack.srtt;
    }

    /// Count the round's bytes and marks; when a round has ended and a virtual RTT has passed
    /// since alpha last moved, alpha += g (F - alpha) with F the round's marked fraction, and a
    /// new round begins (Linux `prague_should_update_ewma`, `prague_update_alpha`).
    fn on_ecn_feedback(&mut self, fb: &EcnFeedback) {
        self.counts.add(fb);
        self.ce_bytes = fb.ce_bytes;
        self.saw_ce |= fb.ce_bytes > 0;
        if fb.delivered < self.round_end || !self.virtual_rtt_since(self.alpha_at, fb.now) {
            return;
        }
        let f = self.counts.take_fraction();
        if self.saw_ce {
            self.alpha += self.g * (f - self.alpha);
            self.alpha_at = Some(fb.now);
        }
        self.round_end = fb.delivered + fb.in_flight;
    }

    fn ecn_codepoint(&self) -> EcnCodepoint {
        EcnCodepoint::Ect1
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
    const MS: Nanos = 1_000_000;

    /// A sender keeping `flight` segments in flight over a path of `rtt`: the ACKs of one
    /// round arrive spread over the round.
    struct Feed {
        now: Nanos,
        delivered: u64,
        flight: u64,
        rtt: Nanos,
    }

    impl Feed {
        fn ack(&mut self, p: &mut Prague, ce: bool) {
            self.now += self.rtt / self.flight;
            self.delivered += MSS;
            p.observe(&AckEvent {
                now: self.now,
                srtt: self.rtt,
                mss: MSS,
                ..Default::default()
            });
            p.on_ecn_feedback(&EcnFeedback {
                now: self.now,
                acked_bytes: MSS,
                ce_bytes: if ce { MSS } else { 0 },
                delivered: self.delivered,
                in_flight: self.flight * MSS,
                mss: MSS,
            });
        }

        /// One round: `flight` ACKs, the first `marked` of them CE.
        fn round(&mut self, p: &mut Prague, marked: u64) {
            for i in 0..self.flight {
                self.ack(p, i < marked);
            }
        }
    }

    fn feed(rtt: Nanos) -> Feed {
        Feed {
            now: 0,
            delivered: 0,
            flight: 10,
            rtt,
        }
    }

    #[test]
    fn alpha_stays_at_one_until_the_first_mark() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        let mut f = feed(40 * MS);
        for _ in 0..5 {
            f.round(&mut p, 0);
        }
        assert_eq!(p.alpha, 1.0);
    }

    /// The draft's EWMA: after a round in which k of n segments were marked, alpha moves by
    /// g (k/n - alpha). At 40 ms (above the 25 ms floor) a round is a virtual RTT.
    #[test]
    fn alpha_after_a_round_with_k_of_n_marked() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        let mut f = feed(40 * MS);
        f.ack(&mut p, false); // ends the round that began before any data
        f.round(&mut p, 0);
        assert_eq!(p.alpha, 1.0);
        // Round with 3 of 10 marked: the update at its last ACK sees F = 3/10.
        f.round(&mut p, 3);
        let expected = 1.0 + (0.3 - 1.0) / 16.0;
        assert!((p.alpha - expected).abs() < 1e-12, "{}", p.alpha);
        // Unmarked rounds then decay alpha by (1 - g) each.
        f.round(&mut p, 0);
        assert!((p.alpha - expected * 15.0 / 16.0).abs() < 1e-12);
        // A steady fraction is alpha's fixed point.
        for _ in 0..600 {
            f.round(&mut p, 2);
        }
        assert!((p.alpha - 0.2).abs() < 1e-6, "{}", p.alpha);
    }

    /// Below the floor, alpha moves once per rtt_virt = 25 ms, not once per 5 ms round: five
    /// rounds pass between updates, their marks all counted.
    #[test]
    fn alpha_moves_once_per_virtual_rtt_below_the_floor() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        let mut f = feed(5 * MS);
        f.round(&mut p, 10);
        let first = p.alpha;
        assert!((first - (1.0 + (1.0 - 1.0) / 16.0)).abs() < 1e-12);
        p.alpha = 0.0;
        let mut updates = 0;
        let mut last = p.alpha;
        for _ in 0..50 {
            f.round(&mut p, 5);
            if p.alpha != last {
                updates += 1;
                last = p.alpha;
            }
        }
        // 50 rounds of 5 ms: 250 ms, 10 virtual RTTs, so 9 or 10 updates after the first.
        assert!((9..=10).contains(&updates), "{updates}");
    }

    #[test]
    fn rtt_virt_is_srtt_with_a_25_ms_floor() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        for (srtt, virt, ai) in [
            (5 * MS, 25 * MS, 0.04),
            (20 * MS, 25 * MS, 0.64),
            (25 * MS, 25 * MS, 1.0),
            (100 * MS, 100 * MS, 1.0),
        ] {
            p.observe(&AckEvent {
                srtt,
                ..Default::default()
            });
            assert_eq!(p.rtt_virt(), virt);
            assert!(
                (p.ai_per_rtt() - ai).abs() < 1e-12,
                "{srtt}: {}",
                p.ai_per_rtt()
            );
        }
        // A floor of 0 is DCTCP's RTT-dependent increase.
        let mut dctcp_like = Prague::new(1.0 / 16.0, 0);
        dctcp_like.observe(&AckEvent {
            srtt: 5 * MS,
            ..Default::default()
        });
        assert_eq!(dctcp_like.ai_per_rtt(), 1.0);
    }

    /// Below the floor, one RTT's ACKs of a full window add (srtt / 25 ms)^2 segments; marked
    /// bytes add nothing.
    #[test]
    fn additive_increase_is_scaled_to_the_virtual_rtt() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        p.observe(&AckEvent {
            srtt: 5 * MS,
            ..Default::default()
        });
        let ack = AckEvent {
            mss: MSS,
            ..Default::default()
        };
        let mut growth = WindowGrowth::new(AckCounting::Bytes);
        let mut cwnd = 100 * MSS;
        // 25 windows: one virtual RTT of 5 ms rounds at (5/25)^2 = 1/25 segment each.
        for _ in 0..25 * 100 {
            cwnd = p.increase(cwnd, MSS, &ack, &mut growth);
        }
        // Increases of 40 bytes (1/25 segment), one per window of credit: the window grows
        // meanwhile, so the 25th falls just after.
        let grown = cwnd - 100 * MSS;
        assert!(
            grown.is_multiple_of(40) && (24..=25).contains(&(grown / 40)),
            "{grown}"
        );
        // A marked ACK carries no credit.
        p.ce_bytes = MSS;
        let before = cwnd;
        let mut growth = WindowGrowth::new(AckCounting::Bytes);
        assert_eq!(p.increase(cwnd, MSS, &ack, &mut growth), before);
    }

    /// Without Accurate ECN, Reno's increase (Linux `prague_reno`): at 5 ms, one window of
    /// ACKs adds a whole segment, not (5/25)^2 of one; Accurate ECN restores the scaling.
    #[test]
    fn without_accurate_ecn_the_increase_is_renos() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        p.observe(&AckEvent {
            srtt: 5 * MS,
            ..Default::default()
        });
        let ack = AckEvent {
            mss: MSS,
            ..Default::default()
        };
        let window = |p: &mut Prague| {
            let mut growth = WindowGrowth::new(AckCounting::Bytes);
            let mut cwnd = 10 * MSS;
            for _ in 0..10 {
                cwnd = p.increase(cwnd, MSS, &ack, &mut growth);
            }
            cwnd - 10 * MSS
        };
        for (ecn, grown) in [
            (NegotiatedEcn::Off, MSS),
            (NegotiatedEcn::Echo, MSS),
            (NegotiatedEcn::Accurate, 40),
        ] {
            p.on_ecn_negotiated(ecn);
            assert_eq!(window(&mut p), grown, "{ecn:?}");
        }
    }

    #[test]
    fn echo_cuts_by_half_alpha_once_per_virtual_rtt_and_loss_halves() {
        let mut p = Prague::new(1.0 / 16.0, 25 * MS);
        p.observe(&AckEvent {
            srtt: 10 * MS,
            ..Default::default()
        });
        let echo = |now| CongestionEvent {
            ecn: true,
            now,
            mss: MSS,
            ..Default::default()
        };
        // alpha 1 at first: a halving.
        assert_eq!(p.decrease_ecn(100 * MSS, &echo(100 * MS)), 50 * MSS);
        p.alpha = 0.2;
        // 10 ms later (one RTT, less than rtt_virt): no second reduction.
        assert_eq!(p.decrease_ecn(100 * MSS, &echo(110 * MS)), 100 * MSS);
        assert_eq!(p.decrease_ecn(100 * MSS, &echo(124 * MS)), 100 * MSS);
        // 25 ms after the first: cwnd x (1 - 0.1).
        assert_eq!(p.decrease_ecn(100 * MSS, &echo(125 * MS)), 90 * MSS);
        assert_eq!(p.decrease_ecn(2 * MSS, &echo(200 * MS)), 2 * MSS);
        // Loss: Reno's halving whatever alpha is.
        let loss = CongestionEvent {
            mss: MSS,
            ..Default::default()
        };
        assert_eq!(p.decrease(100 * MSS, &loss), 50 * MSS);
    }

    #[test]
    fn asks_for_ect1_in_the_frame() {
        let mut c = LossBased::new(
            MSS,
            10,
            AckCounting::Bytes,
            SlowStart::Standard,
            Prague::new(1.0 / 16.0, 25 * MS),
        );
        assert_eq!(c.ecn_codepoint(), EcnCodepoint::Ect1);
        c.on_congestion_event(&CongestionEvent {
            ecn: true,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!((c.cwnd(), c.phase()), (5 * MSS, Phase::Recovery));
    }
}
