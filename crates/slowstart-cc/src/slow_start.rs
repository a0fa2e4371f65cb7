//! Slow-start rules for loss-based controllers, chosen with `slow_start = ...`.

pub mod hystart;
pub mod hystart_pb;
pub mod hystart_pp;
pub mod search;
pub mod suss;

use crate::params::{Accepts, ParamInfo, Params};
use crate::params::{CcError, CommonParams};
use crate::window::{limited_slow_start_increase, AckCounting, WindowGrowth};
use crate::{AckEvent, Nanos, Phase, SentEvent};

/// Parameters every loss-based algorithm takes, declared once.
pub const SLOW_START_PARAMS: &[ParamInfo] = &[
    crate::window::RATE_LIMITED_GROWTH,
    ParamInfo {
        name: "slow_start",
        doc: "slow-start rule: standard (RFC 5681), lss (RFC 3742), hystart (Linux tcp_cubic.c), \
              hystart++ (RFC 9406), search (draft-chung-ccwg-search), hystart-pb (picoquic)",
        default: "per algorithm",
        accepts: Accepts::Word(SLOW_START_RULES),
    },
    ParamInfo {
        name: "max_ssthresh",
        doc: "RFC 3742 max_ssthresh, segments (slow_start = lss)",
        default: "100",
        accepts: Accepts::integer(1, 1_000_000),
    },
    ParamInfo {
        name: "hystart_low_window",
        doc: "HyStart detects only once cwnd >= this, segments (Linux hystart_low_window; \
              hystart, hystart-pb)",
        default: "16",
        accepts: Accepts::integer(1, 1_000_000),
    },
    ParamInfo {
        name: "hystart_detect",
        doc: "HyStart detectors (Linux hystart_detect; hystart, hystart-pb)",
        default: "both",
        accepts: Accepts::Word(&["both", "ack_train", "delay"]),
    },
    ParamInfo {
        name: "search_thresh",
        doc: "SEARCH exit threshold on (bytes sent one RTT earlier - bytes delivered) / bytes \
              sent one RTT earlier (slow_start = search)",
        default: "0.35",
        accepts: Accepts::number(0.01, 1.0),
    },
    ParamInfo {
        name: "pb_rtt_threshold_ms",
        doc: "hystart-pb paces bursts and raises cwnd from the peak rate above this min RTT, ms",
        default: "100",
        accepts: Accepts::integer(1, 100_000),
    },
    ParamInfo {
        name: "pb_cwnd_blocked",
        doc: "hystart-pb on long paths grows cwnd only on ACKs of packets sent before the \
              sender last found cwnd full (picoquic before April 2020, \
              picoquic_cc_was_cwin_blocked); false: unless sent app-limited (picoquic after)",
        default: "false",
        accepts: Accepts::Bool,
    },
    ParamInfo {
        name: "long_rtt_initcwnd",
        doc: "hystart-pb starts long paths from initcwnd x min(RTT, 610 ms) / 100 ms \
              (picoquic update_cwin_for_long_rtt)",
        default: "true",
        accepts: Accepts::Bool,
    },
];

/// Names accepted by `slow_start = ...`.
pub const SLOW_START_RULES: &[&str] = &[
    "standard",
    "lss",
    "hystart",
    "hystart++",
    "search",
    "hystart-pb",
];

/// What one ACK did in slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartStep {
    /// cwnd after the ACK, bytes.
    pub cwnd: u64,
    /// Credit not used by slow start, handed to congestion avoidance.
    pub leftover_credit: u64,
    /// The rule decided to leave slow start: ssthresh becomes cwnd.
    pub exit: bool,
    /// Phase to report while still in slow start.
    pub phase: Phase,
}

/// A slow-start rule (`slow_start = ...`): how cwnd grows below ssthresh and when to leave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// RFC 5681 §3.1: cwnd grows by each ACK's credit until ssthresh or loss.
    Standard,
    /// RFC 3742 Limited Slow-Start: at most max_ssthresh/2 segments per RTT above max_ssthresh.
    Limited {
        /// max_ssthresh, bytes.
        max_ssthresh: u64,
    },
    /// HyStart as Linux tcp_cubic.c runs it.
    HyStart(hystart::HyStart),
    /// RFC 9406 HyStart++.
    HyStartPlusPlus(hystart_pp::HyStartPlusPlus),
    /// SEARCH (draft-chung-ccwg-search).
    Search(Box<search::Search>),
    /// HyStart with picoquic's peak-bandwidth raise on long-delay paths.
    HyStartPb(hystart_pb::HyStartPb),
    /// SUSS: HyStart growing up to 4x per round while the ACK train predicts room (the `suss`
    /// algorithm's own: SUSS is CUBIC's, and its exit may lower cwnd to the flight).
    Suss(Box<suss::Suss>),
}

impl SlowStart {
    /// The rule a spec asks for (`slow_start = ...`), or the algorithm's default.
    pub fn from_params(params: &Params, common: &CommonParams) -> Result<Self, CcError> {
        let default = params.algorithm().slow_start.unwrap_or("standard");
        let rule = params.choice_or("slow_start", default)?;
        // Each rule reads its own parameters only: the ones it leaves are refused by the
        // caller (`Params::refuse_unread`), not ignored.
        let detect = || -> Result<hystart::Detect, CcError> {
            Ok(match params.choice("hystart_detect")? {
                "ack_train" => hystart::Detect {
                    ack_train: true,
                    delay: false,
                },
                "delay" => hystart::Detect {
                    ack_train: false,
                    delay: true,
                },
                _ => hystart::Detect::BOTH,
            })
        };
        Ok(match rule {
            "lss" => SlowStart::Limited {
                max_ssthresh: params.integer("max_ssthresh")? * common.mss,
            },
            "hystart" => {
                let mut h = hystart::HyStart::new(params.integer("hystart_low_window")?, detect()?);
                h.paced = common.paced;
                SlowStart::HyStart(h)
            }
            "hystart++" => SlowStart::HyStartPlusPlus(hystart_pp::HyStartPlusPlus::new()),
            "search" => SlowStart::Search(Box::new(search::Search::new(
                (params.number("search_thresh")? * 1000.0).round() as u64,
                common.initcwnd * common.mss,
            ))),
            "hystart-pb" => {
                let pb_initial_window = if params.boolean("long_rtt_initcwnd")? {
                    common.initcwnd * common.mss
                } else {
                    0
                };
                let mut h = hystart_pb::HyStartPb::new(
                    params.integer("hystart_low_window")?,
                    detect()?,
                    params.integer("pb_rtt_threshold_ms")? * 1_000_000,
                    pb_initial_window,
                );
                h.hystart.paced = common.paced;
                h.cwnd_blocked_growth = params.boolean("pb_cwnd_blocked")?;
                SlowStart::HyStartPb(h)
            }
            _ => SlowStart::Standard,
        })
    }

    /// The phase a controller starts in with this rule: [`Phase::SlowStart`].
    pub fn initial_phase(&self) -> Phase {
        Phase::SlowStart
    }

    /// The rule wants every ACK, cwnd-limited or not: it decides growth itself.
    pub fn samples_every_ack(&self) -> bool {
        match self {
            SlowStart::HyStartPb(h) => h.long_delay(),
            SlowStart::Suss(s) => s.samples_every_ack(),
            _ => false,
        }
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

    /// RFC 5681 §3.1: cwnd grows by the ACK's credit, up to `ssthresh`.
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

    /// One ACK in slow start at `cwnd` bytes: the rule's growth and whether it exits.
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
            SlowStart::HyStart(h) => h.on_ack(cwnd, ssthresh, ack, growth),
            SlowStart::HyStartPlusPlus(h) => h.on_ack(cwnd, ssthresh, ack, growth),
            SlowStart::Search(s) => s.on_ack(cwnd, ssthresh, ack, growth),
            SlowStart::HyStartPb(h) => h.on_ack(cwnd, ssthresh, ack, growth),
            SlowStart::Suss(s) => s.on_ack(cwnd, ssthresh, ack, growth),
        }
    }

    /// Whether [`SlowStart::on_packet_sent`] does anything for this rule.
    pub fn uses_packet_sent(&self) -> bool {
        matches!(self, SlowStart::Search(_) | SlowStart::Suss(_))
    }

    /// A data packet left in slow start (only SEARCH and SUSS read it).
    pub fn on_packet_sent(&mut self, sent: &SentEvent) {
        match self {
            SlowStart::Search(s) => s.on_packet_sent(sent),
            SlowStart::Suss(s) => s.on_packet_sent(sent),
            _ => {}
        }
    }

    /// An RTT sample outside data ACKs (the handshake); returns the new cwnd.
    pub fn on_rtt_sample(&mut self, rtt: Nanos, cwnd: u64, ssthresh: u64) -> u64 {
        match self {
            SlowStart::HyStartPb(h) => h.on_rtt_sample(rtt, cwnd, ssthresh),
            _ => cwnd,
        }
    }

    /// The rule's pacing rate in bytes/s, if it paces (hystart-pb, SUSS).
    pub fn pacing_rate(&self) -> Option<u64> {
        match self {
            SlowStart::HyStartPb(h) => h.pacing_rate(),
            SlowStart::Suss(s) => s.pacing_rate(),
            _ => None,
        }
    }

    /// The rule's largest burst in bytes, if it sets one (hystart-pb, SUSS).
    pub fn send_quantum(&self) -> Option<u64> {
        match self {
            SlowStart::HyStartPb(h) => h.send_quantum(),
            SlowStart::Suss(s) => s.send_quantum(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::{CcSpec, Controller};
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
            paced: false,
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
            paced: false,
        };
        let err = Controller::new(&spec, &common).unwrap_err();
        assert!(
            err.0.contains("slow_start") && err.0.contains("standard | lss"),
            "{err}"
        );
    }
}

#[cfg(test)]
mod property_tests {
    use super::*;
    use crate::params::ParamValue;
    use crate::{CcSpec, Controller};
    use crate::{CongestionController, CongestionEvent, RateSample};
    use proptest::prelude::*;

    const MSS: u64 = 1448;

    #[derive(Clone, Debug)]
    enum Step {
        Ack {
            segments: u64,
            gap_us: u64,
            rtt_ms: u64,
            rate_kbps: u64,
            new_round: bool,
        },
        Loss,
        Timeout,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            20 => (1u64..16, 0u64..5000, 1u64..1000, 1u64..10_000_000, any::<bool>()).prop_map(
                |(segments, gap_us, rtt_ms, rate_kbps, new_round)| Step::Ack {
                    segments, gap_us, rtt_ms, rate_kbps, new_round
                }
            ),
            1 => Just(Step::Loss),
            1 => Just(Step::Timeout),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every slow-start rule under Reno and CUBIC, random ACK timings, RTTs and rate
        /// samples: cwnd never falls during initial slow start, never below one MSS, never
        /// absurd; pacing and quantum, when given, are positive.
        #[test]
        fn slow_start_rules_never_shrink_cwnd(steps in proptest::collection::vec(step(), 1..400)) {
            for algo in ["reno", "cubic"] {
                for rule in SLOW_START_RULES {
                    let mut spec = CcSpec::named(algo);
                    spec.params.insert("slow_start".into(), ParamValue::Text(rule.to_string()));
                    let common = CommonParams { mss: MSS, initcwnd: 10, abc: true, seed: 1, paced: false };
                    let mut c = Controller::new(&spec, &common).unwrap();
                    let (mut now, mut delivered, mut round_start) = (0u64, 0u64, 0u64);
                    for s in &steps {
                        let before = (c.cwnd(), c.phase());
                        match *s {
                            Step::Ack { segments, gap_us, rtt_ms, rate_kbps, new_round } => {
                                now += gap_us * 1000;
                                if new_round {
                                    round_start = delivered;
                                }
                                let bytes = segments * MSS;
                                delivered += bytes;
                                let rtt = rtt_ms * 1_000_000;
                                c.on_ack(&AckEvent {
                                    now,
                                    bytes_acked: bytes,
                                    mss: MSS,
                                    rtt: Some(rtt),
                                    srtt: rtt,
                                    min_rtt: rtt,
                                    rate: Some(RateSample {
                                        delivery_rate: rate_kbps * 125,
                                        delivered: bytes,
                                        interval: rtt,
                                        prior_delivered: round_start,
                                        is_app_limited: false,
                                        rtt,
                                    }),
                                    delivered,
                                    prior_in_flight: c.cwnd(),
                                    bytes_in_flight: c.cwnd().saturating_sub(bytes),
                                    cwnd_limited: true,
                                    ..Default::default()
                                });
                                if before.1.is_initial_slow_start() {
                                    let after = c.cwnd();
                                    let shrank = format!("{algo}/{rule}: {} -> {after}", before.0);
                                    prop_assert!(after >= before.0, "{}", shrank);
                                }
                            }
                            Step::Loss => {
                                c.on_congestion_event(&CongestionEvent { ecn: false,
                                    now, bytes_lost: MSS, bytes_in_flight: c.cwnd(), mss: MSS,
                                });
                                c.on_recovery_exit(now);
                            }
                            Step::Timeout => c.on_rto(now, c.cwnd()),
                        }
                        prop_assert!(c.cwnd() >= MSS, "{algo}/{rule}: cwnd {}", c.cwnd());
                        prop_assert!(c.cwnd() < 1 << 50, "{algo}/{rule}: cwnd {}", c.cwnd());
                        if let Some(rate) = c.pacing_rate() {
                            prop_assert!(rate > 0);
                            prop_assert!(c.send_quantum().unwrap_or(0) >= MSS);
                        }
                    }
                }
            }
        }
    }
}
