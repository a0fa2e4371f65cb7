//! Scalable TCP (Kelly 2003; Linux tcp_scalable.c): +0.01 segment per acked segment, decrease by
//! 1/8; Reno's one-per-window increase while the window is below 1/a = 100 segments.

use crate::loss_based::AvoidanceRule;
use crate::params::{Accepts, ParamInfo};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent};

/// The parameters of `scalable`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "a",
        doc: "segments added per acked segment (Kelly: 0.01)",
        default: "0.01",
        accepts: Accepts::number(0.0001, 1.0),
    },
    ParamInfo {
        name: "b",
        doc: "fraction of cwnd removed on loss (Kelly: 0.125)",
        default: "0.125",
        accepts: Accepts::number(0.01, 0.9),
    },
];

/// The avoidance rule of `scalable`: +1 segment per `ai_count` segments acked (per cwnd below
/// that), remove `b` of cwnd on loss.
#[derive(Clone, Debug)]
pub struct Scalable {
    /// Acked segments per one-segment increase: 1/a (Linux TCP_SCALABLE_AI_CNT = 100).
    pub ai_count: u64,
    /// Fraction of cwnd removed on loss (Kelly: 0.125).
    pub b: f64,
}

impl Scalable {
    /// From `a`, segments added per acked segment, and `b`.
    pub fn new(a: f64, b: f64) -> Self {
        Scalable {
            ai_count: (1.0 / a).round().max(1.0) as u64,
            b,
        }
    }
}

impl AvoidanceRule for Scalable {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        // Linux: tcp_cong_avoid_ai(tp, min(cwnd, TCP_SCALABLE_AI_CNT), acked).
        let threshold = cwnd.min(self.ai_count * ack.mss);
        growth.increase_every(cwnd, credit, threshold, ack.mss)
    }

    fn decrease(&mut self, cwnd: u64, _event: &CongestionEvent) -> u64 {
        cwnd - (cwnd as f64 * self.b) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;

    #[test]
    fn adds_one_segment_per_hundred_acked_above_the_legacy_window() {
        let mut s = Scalable::new(0.01, 0.125);
        let mut g = WindowGrowth::new(AckCounting::Bytes);
        let ack = AckEvent {
            bytes_acked: 1000,
            mss: 1000,
            ..Default::default()
        };
        let mut cwnd = 1_000_000; // 1000 segments: +10 segments per RTT
        for _ in 0..1000 {
            cwnd = s.increase(cwnd, 1000, &ack, &mut g);
        }
        assert_eq!(cwnd, 1_010_000);
        // Below 100 segments it is Reno: +1 per window.
        let mut cwnd = 50_000;
        for _ in 0..50 {
            cwnd = s.increase(cwnd, 1000, &ack, &mut g);
        }
        assert_eq!(cwnd, 51_000);
    }

    #[test]
    fn decreases_by_an_eighth() {
        let mut s = Scalable::new(0.01, 0.125);
        assert_eq!(s.decrease(800_000, &CongestionEvent::default()), 700_000);
    }
}
