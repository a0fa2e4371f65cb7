//! Slow-start rules for loss-based controllers, chosen with `slow_start = ...`.

use crate::registry::{CcError, CommonParams, ParamInfo, Params};
use crate::window::{limited_slow_start_increase, AckCounting, WindowGrowth};
use crate::{AckEvent, Phase, SentEvent};

/// Parameters every loss-based algorithm takes, declared once.
pub const SLOW_START_PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "slow_start",
        doc: "slow-start rule: standard (RFC 5681), lss (RFC 3742)",
        default: "per algorithm",
        accepted: "standard | lss",
    },
    ParamInfo {
        name: "max_ssthresh",
        doc: "RFC 3742 max_ssthresh, segments (slow_start = lss)",
        default: "100",
        accepted: "1..=1000000",
    },
];

/// Names accepted by `slow_start = ...`.
pub const SLOW_START_RULES: &[&str] = &["standard", "lss"];

/// What one ACK did in slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartStep {
    pub cwnd: u64,
    /// Credit not used by slow start, handed to congestion avoidance.
    pub leftover_credit: u64,
    /// The rule decided to leave slow start: ssthresh becomes cwnd.
    pub exit: bool,
    /// Phase to report while still in slow start.
    pub phase: Phase,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// RFC 5681 §3.1: cwnd grows by each ACK's credit until ssthresh or loss.
    Standard,
    /// RFC 3742 Limited Slow-Start: at most max_ssthresh/2 segments per RTT above max_ssthresh.
    Limited { max_ssthresh: u64 },
}

impl SlowStart {
    /// The rule a spec asks for (`slow_start = ...`), or the algorithm's default.
    pub fn from_params(params: &Params, common: &CommonParams) -> Result<Self, CcError> {
        let default = params.algorithm().slow_start.unwrap_or("standard");
        let rule = params.choice_or("slow_start", SLOW_START_RULES, default)?;
        let max_ssthresh = params.integer("max_ssthresh", 1, 1_000_000)? * common.mss;
        Ok(match rule {
            "lss" => SlowStart::Limited { max_ssthresh },
            _ => SlowStart::Standard,
        })
    }

    pub fn initial_phase(&self) -> Phase {
        Phase::SlowStart
    }

    /// RFC 3742 §3 per ACK; with byte counting, once per segment the ACK covers.
    fn limited_step(
        cwnd: u64,
        ssthresh: u64,
        max_ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let segments = match growth.counting {
            AckCounting::PerAck => 1,
            AckCounting::Bytes => (ack.bytes_acked / ack.mss.max(1)).max(1),
        };
        let mut grown = cwnd;
        for _ in 0..segments {
            grown += limited_slow_start_increase(grown, max_ssthresh, ack.mss);
        }
        let capped = grown.min(ssthresh.max(cwnd));
        SlowStartStep {
            cwnd: capped,
            leftover_credit: 0,
            exit: false,
            phase: if capped > max_ssthresh {
                Phase::LimitedSlowStart
            } else {
                Phase::SlowStart
            },
        }
    }

    pub fn standard_step(
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let (cwnd, leftover_credit) = growth.slow_start(cwnd, ssthresh, ack);
        SlowStartStep {
            cwnd,
            leftover_credit,
            exit: false,
            phase: Phase::SlowStart,
        }
    }

    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        match self {
            SlowStart::Standard => Self::standard_step(cwnd, ssthresh, ack, growth),
            SlowStart::Limited { max_ssthresh } => {
                Self::limited_step(cwnd, ssthresh, *max_ssthresh, ack, growth)
            }
        }
    }

    pub fn on_packet_sent(&mut self, _sent: &SentEvent) {}

    pub fn pacing_rate(&self) -> Option<u64> {
        None
    }

    pub fn send_quantum(&self) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{CcSpec, Controller, ParamValue};
    use crate::{CongestionController, Phase};

    const MSS: u64 = 1000;

    fn ack() -> AckEvent {
        AckEvent {
            bytes_acked: MSS,
            mss: MSS,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    fn lss(max_ssthresh: f64) -> Controller {
        let mut spec = CcSpec::named("reno");
        spec.params
            .insert("slow_start".into(), ParamValue::Text("lss".into()));
        spec.params
            .insert("max_ssthresh".into(), ParamValue::Number(max_ssthresh));
        let common = CommonParams {
            mss: MSS,
            initcwnd: 10,
            abc: false,
            seed: 0,
        };
        Controller::new(&spec, &common).unwrap()
    }

    /// One RTT: one ACK per segment of the window at its start.
    fn one_rtt(c: &mut Controller) {
        for _ in 0..c.cwnd() / MSS {
            c.on_ack(&ack());
        }
    }

    #[test]
    fn lss_doubles_below_max_ssthresh_then_adds_at_most_half_of_it_per_rtt() {
        let mut c = lss(100.0);
        for expected in [20, 40, 80] {
            one_rtt(&mut c);
            assert_eq!(c.cwnd(), expected * MSS);
        }
        // 80 ACKs: 21 add one MSS each (cwnd <= max_ssthresh up to and including 100
        // segments), the other 59 add MSS/K = 500 bytes with K = int(cwnd / 50) = 2.
        one_rtt(&mut c);
        assert_eq!(c.cwnd(), 130_500);
        assert_eq!(c.phase(), Phase::LimitedSlowStart);
        // RFC 3742 §2: above max_ssthresh, at most max_ssthresh/2 = 50 segments per RTT.
        for _ in 0..20 {
            let before = c.cwnd();
            one_rtt(&mut c);
            let added = c.cwnd() - before;
            assert!((40 * MSS..=50 * MSS).contains(&added), "{added}");
        }
    }

    #[test]
    fn slow_start_rule_is_validated() {
        let mut spec = CcSpec::named("reno");
        spec.params
            .insert("slow_start".into(), ParamValue::Text("warp".into()));
        let common = CommonParams {
            mss: MSS,
            initcwnd: 10,
            abc: true,
            seed: 0,
        };
        let err = Controller::new(&spec, &common).unwrap_err();
        assert!(
            err.0.contains("slow_start") && err.0.contains("standard | lss"),
            "{err}"
        );
    }
}
