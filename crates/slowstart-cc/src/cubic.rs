//! CUBIC, RFC 9438: window W_cubic(t) = C (t − K)³ + W_max after a loss, a Reno-friendly
//! estimate as a floor (§4.3), fast convergence (§4.7), multiplicative decrease beta = 0.7.

use crate::loss_based::AvoidanceRule;
use crate::registry::ParamInfo;
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent, Nanos};

pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "c",
        doc: "RFC 9438 C, segments / s^3",
        default: "0.4",
        accepted: "0.01..=10",
    },
    ParamInfo {
        name: "beta",
        doc: "RFC 9438 beta_cubic: window kept on loss",
        default: "0.7",
        accepted: "0.1..=0.95",
    },
    ParamInfo {
        name: "fast_convergence",
        doc: "RFC 9438 §4.7 fast convergence",
        default: "true",
        accepted: "true | false",
    },
];

#[derive(Clone, Debug)]
pub struct Cubic {
    pub c: f64,
    pub beta: f64,
    pub fast_convergence: bool,
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
    pub fn new(c: f64, beta: f64, fast_convergence: bool) -> Self {
        Cubic {
            c,
            beta,
            fast_convergence,
            w_max: 0.0,
            epoch_start: None,
            k: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
        }
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
        // §4.3: Reno-friendly estimate grows alpha segments per window of acked segments.
        self.w_est += self.alpha() * (credit as f64 / mss) / w;
        if self.w_cubic(t) < self.w_est {
            // Reno-friendly region: follow W_est.
            let est_bytes = (self.w_est * mss) as u64;
            return est_bytes.max(cwnd);
        }
        // Concave and convex regions: (target − cwnd) / cwnd segments per acked segment, i.e.
        // one segment per cwnd / (target − cwnd) acked segments (Linux `bictcp_update` cnt).
        if target <= w {
            // At the plateau Linux grows one segment per 100 windows.
            return growth.increase_every(cwnd, credit, cwnd.saturating_mul(100), ack.mss);
        }
        let per_segment = (w / (target - w) * mss).max(1.0) as u64;
        growth.increase_every(cwnd, credit, per_segment, ack.mss)
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
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
