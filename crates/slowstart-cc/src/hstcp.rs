//! HighSpeed TCP, RFC 3649: increase a(w) and decrease b(w) grow with the window above
//! Low_Window; Reno below it.

use crate::loss_based::AvoidanceRule;
use crate::params::{Accepts, ParamInfo};
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent};

/// RFC 3649 §5 constants. Low_Window is 38 there; the ns-2 version in the net100 seed used 31.
pub const HIGH_WINDOW: f64 = 83_000.0;
/// High_P: the loss rate at which the window is High_Window.
pub const HIGH_P: f64 = 1e-7;
/// High_Decrease: b(w) at High_Window.
pub const HIGH_DECREASE: f64 = 0.1;

/// RFC 3649 Low_Window (`aimd` declares it too, for its periodic mode).
pub const LOW_WINDOW_PARAM: ParamInfo = ParamInfo {
    name: "low_window",
    doc:
        "window (segments) above which the HighSpeed response applies (38 in RFC 3649, 31 in ns-2)",
    default: "38",
    accepts: Accepts::number(2.0, 10_000.0),
};

/// The parameters of `hstcp`.
pub const PARAMS: &[ParamInfo] = &[LOW_WINDOW_PARAM];

/// The response function of RFC 3649 §5 for one Low_Window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HighSpeedTable {
    /// Low_Window in segments: below it the response is Reno's (a = 1, b = 0.5).
    pub low_window: f64,
}

impl HighSpeedTable {
    /// b(w) = (High_Decrease − 0.5) (log w − log Low_Window) / (log High_Window − log Low_Window)
    /// + 0.5, for w in segments.
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        (HIGH_DECREASE - 0.5) * (w.ln() - self.low_window.ln())
            / (HIGH_WINDOW.ln() - self.low_window.ln())
            + 0.5
    }

    /// p(w): the loss rate at which the response function gives window w (log-log line from
    /// (Low_Window, Low_P = 1.5 / Low_Window²) to (High_Window, High_P)).
    pub fn p(&self, w: f64) -> f64 {
        let low_p = 1.5 / (self.low_window * self.low_window);
        let s = (HIGH_P.ln() - low_p.ln()) / (HIGH_WINDOW.ln() - self.low_window.ln());
        (s * (w.ln() - self.low_window.ln()) + low_p.ln()).exp()
    }

    /// a(w) = w² p(w) 2 b(w) / (2 − b(w)), segments per RTT.
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        w * w * self.p(w) * 2.0 * b / (2.0 - b)
    }
}

/// The avoidance rule of `hstcp`: +a(w) segments per RTT, keep `1 - b(w)` of cwnd on loss.
#[derive(Clone, Debug)]
pub struct HighSpeed {
    /// The response function.
    pub table: HighSpeedTable,
}

impl AvoidanceRule for HighSpeed {
    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        let w = cwnd as f64 / ack.mss as f64;
        let step = (self.table.a(w) * ack.mss as f64).round().max(1.0) as u64;
        growth.additive_increase(cwnd, credit, step)
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        let w = cwnd as f64 / event.mss.max(1) as f64;
        (cwnd as f64 * (1.0 - self.table.b(w))) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC: HighSpeedTable = HighSpeedTable { low_window: 38.0 };
    const NS2: HighSpeedTable = HighSpeedTable { low_window: 31.0 };

    #[test]
    fn decrease_at_1000_segments_matches_the_net100_seed() {
        // "for a cwnd of 1000 segments is to reduce cwnd by 0.329878"; ns-2 (Low_Window 31):
        // "the decrement is 0.323949 and the additive increase is 8.6".
        assert!((RFC.b(1000.0) - 0.329878).abs() < 5e-6, "{}", RFC.b(1000.0));
        assert!((NS2.b(1000.0) - 0.323949).abs() < 5e-6, "{}", NS2.b(1000.0));
        assert!((NS2.a(1000.0) - 8.6).abs() < 0.05, "{}", NS2.a(1000.0));
    }

    #[test]
    fn rfc3649_table_rows() {
        // RFC 3649 Appendix B (w, a(w), b(w)): the window at which the increase reaches each
        // whole number of segments (so a(w) rounds down to it), b(w) to two decimals.
        for (w, a, b) in [
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (347.0, 4.0, 0.38),
            (495.0, 5.0, 0.37),
            (663.0, 6.0, 0.35),
            (851.0, 7.0, 0.34),
            (1058.0, 8.0, 0.33),
            (1529.0, 10.0, 0.31),
            (5036.0, 20.0, 0.25),
        ] {
            assert_eq!(RFC.a(w).floor(), a, "a({w}) = {}", RFC.a(w));
            assert!((RFC.b(w) - b).abs() < 0.006, "b({w}) = {}", RFC.b(w));
        }
        assert!((RFC.b(HIGH_WINDOW) - HIGH_DECREASE).abs() < 1e-12);
    }

    #[test]
    fn reno_below_low_window() {
        assert_eq!(RFC.a(38.0), 1.0);
        assert_eq!(RFC.b(20.0), 0.5);
        let mut h = HighSpeed { table: RFC };
        let ev = CongestionEvent {
            mss: 1000,
            ..Default::default()
        };
        assert_eq!(h.decrease(30_000, &ev), 15_000);
    }
}
