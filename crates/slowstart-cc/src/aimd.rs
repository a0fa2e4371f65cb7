//! Tuned AIMD as the net100 WAD set it (Dunigan, net100 seed): a fixed additive increase `a`
//! (segments per RTT) and decrease `b`, or `mode = "periodic"`, re-tuned from HighSpeed TCP's
//! response (RFC 3649) every `period` seconds of ACK time, as the WAD did every 0.1 s.

use crate::hstcp::HighSpeedTable;
use crate::loss_based::AvoidanceRule;
use crate::params::{Accepts, ParamInfo};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent, Nanos};

/// The parameters of `aimd`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "a",
        doc: "segments added per RTT in congestion avoidance (static mode)",
        default: "1",
        accepts: Accepts::number(0.01, 1000.0),
    },
    ParamInfo {
        name: "b",
        doc: "fraction of cwnd removed on loss (static mode)",
        default: "0.5",
        accepts: Accepts::number(0.01, 0.9),
    },
    ParamInfo {
        name: "mode",
        doc: "static: fixed a, b; periodic: a(w), b(w) from RFC 3649 every period",
        default: "static",
        accepts: Accepts::Word(&["static", "periodic"]),
    },
    ParamInfo {
        name: "period",
        doc: "re-tuning interval of the periodic mode, seconds (net100 WAD: 0.1)",
        default: "0.1",
        accepts: Accepts::number(0.001, 60.0),
    },
    ParamInfo {
        name: "low_window",
        doc: "RFC 3649 Low_Window used by the periodic mode",
        ..crate::hstcp::LOW_WINDOW_PARAM
    },
];

/// The avoidance rule of `aimd`: `+a` segments per RTT, keep `1 - b` of cwnd on loss.
#[derive(Clone, Debug)]
pub struct Aimd {
    /// Segments added per RTT (re-tuned to a(w) in periodic mode).
    pub a: f64,
    /// Fraction of cwnd removed on loss (re-tuned to b(w) in periodic mode).
    pub b: f64,
    /// `Some` in periodic mode: the table and the re-tuning interval.
    pub periodic: Option<(HighSpeedTable, Nanos)>,
    next_tune: Option<Nanos>,
}

impl Aimd {
    /// Static mode: `a` and `b` never change.
    pub fn fixed(a: f64, b: f64) -> Self {
        Aimd {
            a,
            b,
            periodic: None,
            next_tune: None,
        }
    }

    /// Periodic mode: a and b re-tuned from `table` at the current window every `period` ns.
    pub fn periodic(table: HighSpeedTable, period: Nanos) -> Self {
        Aimd {
            a: 1.0,
            b: 0.5,
            periodic: Some((table, period)),
            next_tune: None,
        }
    }

    /// Re-tune a and b from the current window when a period of ACK time has passed.
    fn tune(&mut self, now: Nanos, cwnd: u64, mss: u64) {
        let Some((table, period)) = self.periodic else {
            return;
        };
        if self.next_tune.is_some_and(|t| now < t) {
            return;
        }
        let w = cwnd as f64 / mss.max(1) as f64;
        self.a = table.a(w);
        self.b = table.b(w);
        self.next_tune = Some(now + period);
    }
}

impl AvoidanceRule for Aimd {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        self.tune(ack.now, cwnd, ack.mss);
        let step = (self.a * ack.mss as f64).round().max(1.0) as u64;
        growth.additive_increase(cwnd, credit, step)
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        self.tune(event.now, cwnd, event.mss);
        (cwnd as f64 * (1.0 - self.b)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;

    const MSS: u64 = 1000;

    #[test]
    fn static_tuning_adds_a_per_rtt_and_removes_b() {
        // The WAD's pre-tuned AIMD (0.3, 15): +15 segments per RTT, keep 70% on loss.
        let mut r = Aimd::fixed(15.0, 0.3);
        let mut g = WindowGrowth::new(AckCounting::Bytes);
        let ack = AckEvent {
            bytes_acked: MSS,
            mss: MSS,
            ..Default::default()
        };
        let mut cwnd = 100 * MSS;
        for _ in 0..100 {
            cwnd = r.increase(cwnd, MSS, &ack, &mut g);
        }
        assert_eq!(cwnd, 115 * MSS);
        let ev = CongestionEvent {
            mss: MSS,
            ..Default::default()
        };
        assert_eq!(r.decrease(1000 * MSS, &ev), 700 * MSS);
    }

    #[test]
    fn periodic_mode_retunes_every_period_of_ack_time() {
        let table = HighSpeedTable { low_window: 38.0 };
        let mut r = Aimd::periodic(table, 100_000_000);
        let mut g = WindowGrowth::new(AckCounting::Bytes);
        let at = |now| AckEvent {
            now,
            bytes_acked: MSS,
            mss: MSS,
            ..Default::default()
        };
        r.increase(1000 * MSS, MSS, &at(0), &mut g);
        assert!((r.b - table.b(1000.0)).abs() < 1e-12);
        // 99 ms later the window is larger but a and b are not re-read...
        r.increase(2000 * MSS, MSS, &at(99_000_000), &mut g);
        assert!((r.b - table.b(1000.0)).abs() < 1e-12);
        // ...at 100 ms they are.
        r.increase(2000 * MSS, MSS, &at(100_000_000), &mut g);
        assert!((r.b - table.b(2000.0)).abs() < 1e-12);
        assert!((r.a - table.a(2000.0)).abs() < 1e-12);
    }
}
