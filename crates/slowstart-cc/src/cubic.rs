//! CUBIC, RFC 9438: window W_cubic(t) = C (t − K)³ + W_max after a loss, a Reno-friendly
//! estimate as a floor (§4.3), fast convergence (§4.7), multiplicative decrease beta = 0.7.

use crate::loss_based::AvoidanceRule;
use crate::params::{Accepts, ParamInfo};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent, Nanos};

/// The parameter `c`: RFC 9438 C.
pub const C: ParamInfo = ParamInfo {
    name: "c",
    doc: "RFC 9438 C, segments / s^3",
    default: "0.4",
    accepts: Accepts::number(0.01, 10.0),
};
/// The parameter `beta`: RFC 9438 beta_cubic.
pub const BETA: ParamInfo = ParamInfo {
    name: "beta",
    doc: "RFC 9438 beta_cubic: window kept on loss",
    default: "0.7",
    accepts: Accepts::number(0.1, 0.95),
};
/// The parameter `fast_convergence`: RFC 9438 §4.7 on or off.
pub const FAST_CONVERGENCE: ParamInfo = ParamInfo {
    name: "fast_convergence",
    doc: "RFC 9438 §4.7 fast convergence",
    default: "true",
    accepts: Accepts::Bool,
};
/// The parameter `linux_initial_growth`: Linux's growth floor before the first loss.
pub const LINUX_INITIAL_GROWTH: ParamInfo = ParamInfo {
    name: "linux_initial_growth",
    doc: "until the first loss grow at least 5% per RTT, as Linux tcp_cubic.c (cnt <= 20 while \
          last_max_cwnd is 0)",
    default: "true",
    accepts: Accepts::Bool,
};

/// The parameters of `cubic` (Linux's initial growth on by default).
pub const PARAMS: &[ParamInfo] = &[C, BETA, FAST_CONVERGENCE, LINUX_INITIAL_GROWTH];

/// `hystart-pb` models picoquic, not Linux: the 5% floor is off unless asked for.
pub const PICOQUIC_PARAMS: &[ParamInfo] = &[
    C,
    BETA,
    FAST_CONVERGENCE,
    ParamInfo {
        default: "false",
        ..LINUX_INITIAL_GROWTH
    },
];

/// Linux `bictcp_update`: while no loss has set W_max, at most 20 segments acked per segment
/// of growth ("the initial growth of cubic function may be too conservative").
pub const INITIAL_GROWTH_CNT: u64 = 20;

/// The avoidance rule of CUBIC (RFC 9438 §4).
#[derive(Clone, Debug)]
pub struct Cubic {
    /// C, segments / s³ (RFC 9438: 0.4).
    pub c: f64,
    /// beta_cubic: the fraction of cwnd kept on loss (RFC 9438: 0.7).
    pub beta: f64,
    /// Whether W_max is lowered further when losses come below it (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Linux's 5%-per-RTT floor on growth until the first loss.
    pub linux_initial_growth: bool,
    /// A loss has set W_max (Linux `last_max_cwnd != 0`).
    loss_seen: bool,
    /// Window before the last reduction, segments (W_max).
    w_max: f64,
    /// Start of the current congestion-avoidance epoch; None until the first ACK in it.
    epoch_start: Option<Nanos>,
    /// K, seconds.
    k: f64,
    /// Reno-friendly estimate, segments (§4.3).
    w_est: f64,
    /// cwnd at the last reduction (cwnd_prior), segments.
    cwnd_prior: f64,
}

impl Cubic {
    /// A rule before any loss, without Linux's initial growth floor.
    pub fn new(c: f64, beta: f64, fast_convergence: bool) -> Self {
        Cubic {
            c,
            beta,
            fast_convergence,
            linux_initial_growth: false,
            loss_seen: false,
            w_max: 0.0,
            epoch_start: None,
            k: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
        }
    }

    /// With Linux's growth floor before the first loss on or off.
    pub fn with_linux_initial_growth(mut self, on: bool) -> Self {
        self.linux_initial_growth = on;
        self
    }

    /// §4.2 eq. 2: K = cbrt(W_max (1 − beta) / C), with cwnd at the epoch start = W_max · beta.
    pub fn k_for(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        ((w_max - cwnd_epoch).max(0.0) / self.c).cbrt()
    }

    /// §4.2 eq. 1, segments.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.c * (t - self.k).powi(3) + self.w_max
    }

    /// §4.3 alpha_cubic = 3 (1 − beta) / (1 + beta), 1 once W_est passes cwnd_prior.
    fn alpha(&self) -> f64 {
        if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - self.beta) / (1.0 + self.beta)
        }
    }
}

impl AvoidanceRule for Cubic {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        let mss = ack.mss as f64;
        let w = cwnd as f64 / mss;
        let start = *self.epoch_start.get_or_insert_with(|| {
            // An epoch without a prior loss (after slow start): W_max = cwnd, K = 0 (§4.2).
            if self.w_max <= 0.0 {
                self.w_max = w;
                self.cwnd_prior = w;
            }
            self.k = ((self.w_max - w).max(0.0) / self.c).cbrt();
            self.w_est = w;
            ack.now
        });
        // §4.2: target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd].
        let rtt = if ack.srtt > 0 { ack.srtt } else { ack.min_rtt };
        let t = (ack.now.saturating_sub(start) + rtt) as f64 / 1e9;
        let target = self.w_cubic(t).clamp(w, 1.5 * w);
        // Concave and convex regions: (target − cwnd) / cwnd segments per acked segment, i.e.
        // one segment per cwnd / (target − cwnd) acked segments (Linux `bictcp_update` cnt); at
        // the plateau Linux grows one segment per 100 windows.
        let mut per_segment = if target <= w {
            cwnd.saturating_mul(100)
        } else {
            (w / (target - w) * mss).max(1.0) as u64
        };
        let initial = self.linux_initial_growth && !self.loss_seen;
        if initial {
            per_segment = per_segment.min(INITIAL_GROWTH_CNT * ack.mss);
        }
        // §4.3: Reno-friendly estimate grows alpha segments per window of acked segments.
        self.w_est += self.alpha() * (credit as f64 / mss) / w;
        if self.w_cubic(t) < self.w_est {
            // Reno-friendly region: follow W_est.
            let est_bytes = (self.w_est * mss) as u64;
            if !initial {
                return est_bytes.max(cwnd);
            }
            return growth
                .increase_every(cwnd, credit, per_segment, ack.mss)
                .max(est_bytes);
        }
        growth.increase_every(cwnd, credit, per_segment, ack.mss)
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        self.loss_seen = true;
        let w = cwnd as f64 / event.mss.max(1) as f64;
        // §4.7 fast convergence: remember a lower W_max when the window did not regain it.
        self.w_max = if self.fast_convergence && w < self.w_max {
            w * (1.0 + self.beta) / 2.0
        } else {
            w
        };
        self.cwnd_prior = w;
        self.epoch_start = None;
        let reduced = w * self.beta;
        self.k = self.k_for(self.w_max, reduced);
        (reduced * event.mss as f64) as u64
    }

    /// RFC 8511 §3.1 (ABE): on ECE the window is multiplied by beta_ecn = 0.8 instead of
    /// beta_cubic; W_max and K follow from it as from a loss.
    fn decrease_ecn(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        let beta = self.beta;
        self.beta = crate::loss_based::ABE_NUM as f64 / crate::loss_based::ABE_DEN as f64;
        let reduced = self.decrease(cwnd, event);
        self.beta = beta;
        reduced
    }

    fn on_slow_start_exit(&mut self, _now: Nanos, _cwnd: u64) {
        self.epoch_start = None;
    }

    fn on_rto(&mut self) {
        self.epoch_start = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;

    const MSS: u64 = 1000;

    fn loss(c: &mut Cubic, cwnd: u64) -> u64 {
        c.decrease(
            cwnd,
            &CongestionEvent {
                mss: MSS,
                ..Default::default()
            },
        )
    }

    #[test]
    fn k_and_w_cubic_follow_rfc9438() {
        let mut c = Cubic::new(0.4, 0.7, false);
        // W_max = 100 segments: cwnd 70 after the loss, K = cbrt(100 × 0.3 / 0.4) = 4.217 s.
        assert_eq!(loss(&mut c, 100 * MSS), 70 * MSS);
        assert!((c.k - 4.2172).abs() < 1e-3, "{}", c.k);
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k + 1.0) - 100.4).abs() < 1e-9);
    }

    /// RFC 8511 §3.1: on an ECN echo the window keeps beta_ecn = 0.8, not beta_cubic; K is
    /// the time to regain W_max from there, and beta_cubic is back for the next loss.
    #[test]
    fn ecn_echo_keeps_beta_ecn_of_the_window() {
        let mut c = Cubic::new(0.4, 0.7, false);
        let ecn = CongestionEvent {
            ecn: true,
            mss: MSS,
            ..Default::default()
        };
        assert_eq!(c.decrease_ecn(100 * MSS, &ecn), 80 * MSS);
        assert!(
            (c.k - (100.0f64 * 0.2 / 0.4).cbrt()).abs() < 1e-9,
            "{}",
            c.k
        );
        assert_eq!(loss(&mut c, 100 * MSS), 70 * MSS);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_did_not_recover() {
        let mut c = Cubic::new(0.4, 0.7, true);
        loss(&mut c, 100 * MSS);
        loss(&mut c, 80 * MSS);
        assert!((c.w_max - 80.0 * 1.7 / 2.0).abs() < 1e-9, "{}", c.w_max);
    }

    /// One RTT of ACKs at `rtt`, starting at `now`.
    fn rtt_of_acks(c: &mut Cubic, g: &mut WindowGrowth, cwnd: &mut u64, now: u64, rtt: u64) {
        let n = *cwnd / MSS;
        for i in 0..n {
            let ack = AckEvent {
                now: now + rtt * i / n,
                bytes_acked: MSS,
                mss: MSS,
                srtt: rtt,
                min_rtt: rtt,
                ..Default::default()
            };
            *cwnd = c.increase(*cwnd, MSS, &ack, g);
        }
    }

    #[test]
    fn linux_grows_five_percent_per_rtt_until_the_first_loss() {
        // After a HyStart exit (no loss: W_max unknown) at 246 segments, 100 ms RTT: W_cubic
        // from K = 0 adds 0.4 t^3, a fraction of a segment per RTT; Linux caps cnt at 20.
        let run = |linux: bool, lose_first: bool| {
            let mut c = Cubic::new(0.4, 0.7, true).with_linux_initial_growth(linux);
            let mut g = WindowGrowth::new(AckCounting::Bytes);
            let mut cwnd = 246 * MSS;
            if lose_first {
                cwnd = loss(&mut c, 352 * MSS);
            }
            c.on_slow_start_exit(0, cwnd);
            let start = cwnd;
            for r in 0..10 {
                rtt_of_acks(&mut c, &mut g, &mut cwnd, r * 100_000_000, 100_000_000);
            }
            (start, cwnd)
        };
        let (start, linux) = run(true, false);
        // 1.05^10 = 1.63, a little less as each round's cnt uses its starting cwnd.
        assert!(
            (160..=163).contains(&(linux * 100 / start)),
            "{start} -> {linux}"
        );
        let (start, rfc) = run(false, false);
        assert!(rfc - start < 10 * MSS, "RFC 9438 alone: {start} -> {rfc}");
        // After a loss W_max is known and the cap no longer applies.
        let (a, after_loss_linux) = run(true, true);
        let (b, after_loss_rfc) = run(false, true);
        assert_eq!((a, after_loss_linux), (b, after_loss_rfc));
    }

    #[test]
    fn window_returns_to_w_max_near_k_on_a_long_rtt() {
        let mut c = Cubic::new(0.4, 0.7, false);
        let mut g = WindowGrowth::new(AckCounting::Bytes);
        let mut cwnd = loss(&mut c, 1000 * MSS);
        let rtt = 100_000_000;
        let mut now = 0;
        let mut at_k = 0;
        while now < 20_000_000_000 {
            rtt_of_acks(&mut c, &mut g, &mut cwnd, now, rtt);
            now += rtt;
            if at_k == 0 && now as f64 / 1e9 >= c.k {
                at_k = cwnd / MSS;
            }
        }
        // K = cbrt(1000 × 0.3 / 0.4) = 9.09 s; the target leads by one RTT.
        assert!((980..=1010).contains(&at_k), "{at_k}");
        assert!(
            cwnd / MSS > 1100,
            "convex growth past W_max: {}",
            cwnd / MSS
        );
    }

    #[test]
    fn reno_friendly_region_wins_at_small_windows_and_short_rtts() {
        // W_max = 20 segments, 1 ms RTT: W_cubic barely moves in 100 RTTs; Reno adds ~0.53/RTT.
        let mut c = Cubic::new(0.4, 0.7, false);
        let mut g = WindowGrowth::new(AckCounting::Bytes);
        let mut cwnd = loss(&mut c, 20 * MSS);
        let rtt = 1_000_000;
        for i in 0..100 {
            rtt_of_acks(&mut c, &mut g, &mut cwnd, i * rtt, rtt);
        }
        let cubic_only = c.w_cubic(0.1 + 0.001);
        assert!(
            (cwnd / MSS) as f64 > cubic_only + 20.0,
            "{} vs {cubic_only}",
            cwnd / MSS
        );
    }
}
