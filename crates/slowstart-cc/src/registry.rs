//! The algorithms slowstart knows (name, summary, source and declared parameters, see
//! [`crate::params`]) and construction of a [`Controller`] from a [`CcSpec`] such as
//! `lss:max_ssthresh=100`.

use std::collections::BTreeMap;

pub use crate::params::ParamValue;
use crate::params::{Algorithm, CcError, CcSpec, CommonParams};
use crate::params::{ParamInfo, Params};

use crate::external::GuestController;
use crate::loss_based::{AvoidanceRule, LossBased};
use crate::reno::Reno;
use crate::slow_start::SlowStart;
use crate::window::RateLimitedGrowth;
use crate::{
    AckEvent, CongestionController, CongestionEvent, EcnCodepoint, EcnFeedback, Nanos, Phase,
    SentEvent,
};

impl CcSpec {
    /// A spec of `name` without parameters (a `cc` string is parsed by
    /// `slowstart_config::parse_cc`).
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            params: BTreeMap::new(),
            guest: None,
        }
    }

    /// Whether it names a user's controller (anything not built in, [`crate::external`]).
    pub fn is_guest(&self) -> bool {
        algorithm(&self.name).is_none()
    }
}

impl Algorithm {
    /// Its own parameters, then the slow-start ones if it takes them.
    pub fn all_params(&self) -> impl Iterator<Item = &'static ParamInfo> {
        let shared: &'static [ParamInfo] = if self.slow_start.is_some() {
            crate::slow_start::SLOW_START_PARAMS
        } else {
            &[]
        };
        self.params.iter().chain(shared.iter())
    }
}

/// Every algorithm slowstart knows, in the order `slowstart list` prints them.
pub const ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "reno",
        summary: "Reno/NewReno: slow start, +1 MSS per RTT, halve on loss",
        source: "RFC 5681",
        params: &[],
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "lss",
        summary: "Reno with Limited Slow-Start: at most max_ssthresh/2 segments per RTT above it",
        source: "RFC 3742",
        params: &[],
        slow_start: Some("lss"),
    },
    Algorithm {
        name: "cubic",
        summary: "CUBIC: cubic window growth around W_max, Reno-friendly floor, beta 0.7",
        source: "RFC 9438; Linux tcp_cubic.c (HyStart, growth before the first loss)",
        params: crate::cubic::PARAMS,
        slow_start: Some("hystart"),
    },
    Algorithm {
        name: "hystart-pb",
        summary:
            "CUBIC; above 100 ms RTT picoquic's start: RTT-scaled window, bursts, peak/2 raise",
        source: "picoquic (Huitema 2020; cc_common.c, sender.c); Linux tcp_cubic.c; RFC 9438",
        params: crate::cubic::PICOQUIC_PARAMS,
        slow_start: Some("hystart-pb"),
    },
    Algorithm {
        name: "suss",
        summary: "CUBIC whose slow start grows up to 4x per round while the ACK train and RTT \
                  predict room, the extra data paced",
        source: "Arghavani et al., SIGCOMM 2024; SUSSdeveloper/SUSS linux-6.8 tcp_cubic.c",
        params: &[
            crate::slow_start::suss::SUSS_MAX,
            crate::cubic::C,
            crate::cubic::BETA,
            crate::cubic::FAST_CONVERGENCE,
            crate::cubic::LINUX_INITIAL_GROWTH,
            crate::window::RATE_LIMITED_GROWTH,
        ],
        slow_start: None,
    },
    Algorithm {
        name: "hstcp",
        summary: "HighSpeed TCP: increase a(w) and decrease b(w) grow with the window",
        source: "RFC 3649",
        params: crate::hstcp::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "aimd",
        summary: "Tuned AIMD (net100 WAD): fixed (a, b), or re-tuned from RFC 3649 every 0.1 s",
        source: "net100 (Dunigan 2003); RFC 3649",
        params: crate::aimd::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "scalable",
        summary: "Scalable TCP: +0.01 segment per ACK, decrease by 1/8",
        source: "Kelly 2003; Linux tcp_scalable.c",
        params: crate::scalable::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "dctcp",
        summary: "DCTCP: Reno, but an ECN echo cuts cwnd by alpha/2, alpha the marked fraction's \
                  average per window; turns on ECN with per-packet (RFC 8257) feedback",
        source: "RFC 8257; Alizadeh et al., SIGCOMM 2010; Linux tcp_dctcp.c",
        params: crate::dctcp::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "prague",
        summary: "TCP Prague (L4S): DCTCP's alpha/2 cut at most once per virtual RTT, increase \
                  per rtt_virt = max(srtt, 25 ms); sends ECT(1), turns on Accurate ECN",
        source: "draft-briscoe-iccrg-prague-congestion-control-04; Linux tcp_prague.c (L4STeam)",
        params: crate::prague::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "careful-resume",
        summary: "Careful Resume: jump to half a saved cwnd once the path is confirmed, paced; \
                  validate it or retreat to PipeSize/2",
        source: "RFC 9959 (draft-ietf-tsvwg-careful-resume-24); picoquic (full-BDP jump)",
        params: crate::careful_resume::PARAMS,
        slow_start: Some("standard"),
    },
    Algorithm {
        name: "rapid-start",
        summary: "Rapid Start: 2 IW paced first flight, 3x per RTT until the RTT floor rises, \
                  then 2x; loss scales cwnd by delivered and lost data",
        source: "draft-kazuho-ccwg-rapid-start-02",
        params: crate::rapid_start::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "hybla",
        summary: "Hybla: rho = RTT / RTT0; slow start +2^rho - 1 per ACK, avoidance +rho^2/cwnd",
        source: "Caini & Firrincieli 2004; Linux tcp_hybla.c; ns-3 tcp-hybla.cc",
        params: crate::hybla::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "vegas",
        summary: "Vegas: +-1 segment per RTT by queued-segment estimate; slow start ends at gamma",
        source: "Brakmo & Peterson 1995; Linux tcp_vegas.c",
        params: crate::vegas::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "vegas-lss",
        summary: "Vegas whose slow start hands over to Limited Slow-Start at gamma (net100)",
        source: "net100 (Dunigan 2003); RFC 3742; Linux tcp_vegas.c",
        params: crate::vegas_lss::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "ledbat",
        summary: "LEDBAT: window steered by one-way queuing delay towards a target",
        source: "RFC 6817",
        params: crate::ledbat::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "utp",
        summary: "uTP: LEDBAT window, gain cap per RTT, slow start left at the delay target",
        source: "BEP 29; libtorrent utp_stream.cpp",
        params: crate::utp::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "bbr",
        summary: "BBRv3: paces at the max delivery rate, cwnd 2 BDP, ProbeBW/ProbeRTT cycles",
        source: "draft-ietf-ccwg-bbr-06",
        params: crate::bbr::PARAMS,
        slow_start: None,
    },
    Algorithm {
        name: "bbr1",
        summary: "BBR v1 as Linux tcp_bbr: startup at 2.885, loss ignored, 8-phase gain cycle",
        source: "Linux tcp_bbr.c (BBR v1)",
        params: crate::bbr1::PARAMS,
        slow_start: None,
    },
];

/// The ECN feedbacks an algorithm can read, if it needs ECN at all (Linux's
/// TCP_CONG_NEEDS_ECN modules), its default first: DCTCP reads the receiver's per-packet CE
/// state (RFC 8257 §3.2) or Accurate ECN's count (RFC 9768), Prague only the latter; a user's
/// controller says through its factory ([`crate::external::needs_ecn`], a BPF object by its
/// flags). In the transport's words (`ecn_feedback`); the flow turns ECN on for it.
pub fn needs_ecn(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "dctcp" => Some(&["dctcp", "accurate"]),
        // Linux tcp_prague.c: TCP_CONG_NEEDS_ACCECN, no RFC 3168 fallback.
        "prague" => Some(&["accurate"]),
        _ => crate::external::needs_ecn(name),
    }
}

/// Whether controller `name` refuses RFC 3168 feedback when the peer does not negotiate
/// Accurate ECN, so the flow runs without ECN (Linux TCP_CONG_NO_FALLBACK_RFC3168; tcp_prague.c
/// `prague_init` then switches to `prague_reno`). DCTCP takes RFC 3168's echo (tcp_dctcp.c
/// `dctcp_init` falls back to Reno only without any ECN).
pub fn refuses_classic_ecn(name: &str) -> bool {
    name == "prague"
}

/// The built-in algorithm called `name` in [`ALGORITHMS`], if any.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

fn algorithm_names() -> String {
    ALGORITHMS
        .iter()
        .map(|a| a.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A built controller. An enum, not a trait object, so the per-ACK call is a direct match. The
/// variants larger than CUBIC's 408 bytes are boxed (BBR 488, Prague 440, Careful Resume 448 and
/// 520, Rapid Start 496 and 568), so every sender holds at most 416 inline, not 576 (issue #37;
/// a test pins the bound), as is a user's controller ([`crate::external`]).
#[derive(Debug)]
pub enum Controller {
    /// `bbr`: BBRv3 (draft-ietf-ccwg-bbr-06).
    Bbr(Box<crate::bbr::Bbr>),
    /// `bbr1`: BBR v1 as Linux tcp_bbr.c.
    Bbr1(crate::bbr1::Bbr1),
    /// `reno` and `lss` (RFC 3742 Limited Slow-Start is a slow-start rule).
    Reno(Reno),
    /// `cubic`, `hystart-pb` and `suss`: CUBIC with their slow-start rules.
    Cubic(LossBased<crate::cubic::Cubic>),
    /// `hstcp`: HighSpeed TCP (RFC 3649).
    HighSpeed(LossBased<crate::hstcp::HighSpeed>),
    /// `aimd`: tuned AIMD (net100 WAD), fixed or re-tuned from RFC 3649.
    Aimd(LossBased<crate::aimd::Aimd>),
    /// `scalable`: Scalable TCP (Kelly 2003).
    Scalable(LossBased<crate::scalable::Scalable>),
    /// `dctcp`: DCTCP (RFC 8257).
    Dctcp(LossBased<crate::dctcp::Dctcp>),
    /// `prague`: TCP Prague (L4S; Linux tcp_prague.c).
    Prague(Box<LossBased<crate::prague::Prague>>),
    /// `hybla`: TCP Hybla.
    Hybla(LossBased<crate::hybla::Hybla>),
    /// `careful-resume` over Reno.
    CarefulResumeReno(Box<crate::careful_resume::CarefulResume<crate::loss_based::RenoRule>>),
    /// `careful-resume` over CUBIC.
    CarefulResumeCubic(Box<crate::careful_resume::CarefulResume<crate::cubic::Cubic>>),
    /// `rapid-start` over Reno.
    RapidStartReno(Box<crate::rapid_start::RapidStart<crate::loss_based::RenoRule>>),
    /// `rapid-start` over CUBIC.
    RapidStartCubic(Box<crate::rapid_start::RapidStart<crate::cubic::Cubic>>),
    /// `vegas`: TCP Vegas.
    Vegas(crate::vegas::Vegas),
    /// `vegas-lss`: Vegas handing over to Limited Slow-Start.
    VegasLss(crate::vegas::Vegas),
    /// `ledbat`: LEDBAT (RFC 6817).
    Ledbat(crate::ledbat::Ledbat),
    /// `utp`: uTP (BEP 29).
    Utp(crate::utp::Utp),
    /// A user's controller ([`crate::external`]).
    Guest(Box<GuestController>),
}

macro_rules! dispatch {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            Controller::Bbr($c) => $body,
            Controller::Bbr1($c) => $body,
            Controller::Reno($c) => $body,
            Controller::Cubic($c) => $body,
            Controller::HighSpeed($c) => $body,
            Controller::Aimd($c) => $body,
            Controller::Scalable($c) => $body,
            Controller::Dctcp($c) => $body,
            Controller::Prague($c) => $body,
            Controller::Hybla($c) => $body,
            Controller::CarefulResumeReno($c) => $body,
            Controller::CarefulResumeCubic($c) => $body,
            Controller::RapidStartReno($c) => $body,
            Controller::RapidStartCubic($c) => $body,
            Controller::Vegas($c) => $body,
            Controller::VegasLss($c) => $body,
            Controller::Ledbat($c) => $body,
            Controller::Utp($c) => $body,
            Controller::Guest($c) => $body,
        }
    };
}

/// A loss-based controller with `rule` and the slow-start rule the spec asks for.
fn loss_based<A: AvoidanceRule>(
    params: &Params,
    common: &CommonParams,
    rule: A,
) -> Result<LossBased<A>, CcError> {
    frame(
        params,
        common,
        SlowStart::from_params(params, common)?,
        rule,
    )
}

/// The loss-based frame around `rule` with `slow_start`: the spec's rule, or for an algorithm
/// whose slow start is its own (it takes no `slow_start` parameter) the rule it builds itself
/// or the standard one it does not use.
fn frame<A: AvoidanceRule>(
    params: &Params,
    common: &CommonParams,
    slow_start: SlowStart,
    rule: A,
) -> Result<LossBased<A>, CcError> {
    Ok(LossBased::new(
        common.mss,
        common.initcwnd,
        common.counting(),
        slow_start,
        rule,
    )
    .with_rate_limited_growth(rate_limited_growth(params)?))
}

/// The `rate_limited_growth` a spec asks for.
fn rate_limited_growth(params: &Params) -> Result<RateLimitedGrowth, CcError> {
    Ok(RateLimitedGrowth::from_word(
        params.choice("rate_limited_growth")?,
    ))
}

/// CUBIC's avoidance rule from its declared parameters.
fn cubic_rule(params: &Params) -> Result<crate::cubic::Cubic, CcError> {
    Ok(crate::cubic::Cubic::new(
        params.number("c")?,
        params.number("beta")?,
        params.boolean("fast_convergence")?,
    )
    .with_linux_initial_growth(params.boolean("linux_initial_growth")?))
}

/// Careful Resume around the base its spec names (RFC 9959).
fn careful_resume(params: &Params, common: &CommonParams) -> Result<Controller, CcError> {
    use crate::careful_resume::{saved_state, CarefulResume};
    let (jump, saved_rtt) = saved_state(params, common.mss)?;
    let beta = params.number("retreat_beta")?;
    Ok(match params.choice("base")? {
        "cubic" => Controller::CarefulResumeCubic(Box::new(CarefulResume::new(
            loss_based(params, common, cubic_rule(params)?)?,
            common.mss,
            jump,
            saved_rtt,
            beta,
        ))),
        _ => Controller::CarefulResumeReno(Box::new(CarefulResume::new(
            loss_based(params, common, crate::loss_based::RenoRule)?,
            common.mss,
            jump,
            saved_rtt,
            beta,
        ))),
    })
}

/// Rapid Start around the base its spec names (draft-kazuho-ccwg-rapid-start-02); the base's
/// slow start is Rapid Start's own, so it takes no `slow_start` rule.
fn rapid_start(params: &Params, common: &CommonParams) -> Result<Controller, CcError> {
    use crate::rapid_start::from_params;
    Ok(match params.choice("base")? {
        "cubic" => {
            let rule = cubic_rule(params)?;
            let beta = rule.beta;
            let b = frame(params, common, SlowStart::Standard, rule)?;
            Controller::RapidStartCubic(Box::new(from_params(params, b, common.mss, beta)?))
        }
        _ => {
            let b = frame(
                params,
                common,
                SlowStart::Standard,
                crate::loss_based::RenoRule,
            )?;
            let beta = crate::loss_based::RENO_BETA;
            Controller::RapidStartReno(Box::new(from_params(params, b, common.mss, beta)?))
        }
    })
}

impl Controller {
    /// Build the controller `spec` names, validating its parameters.
    pub fn new(spec: &CcSpec, common: &CommonParams) -> Result<Self, CcError> {
        if common.mss == 0 {
            return Err(CcError("mss: must be > 0".into()));
        }
        let Some(algo) = algorithm(&spec.name) else {
            return match crate::external::factory(&spec.name) {
                Some(f) => Ok(Controller::Guest(Box::new(GuestController::new(
                    &spec.name,
                    f.as_ref(),
                    &spec.params,
                    common,
                )?))),
                None => Err(CcError(format!(
                    "cc: unknown algorithm '{}' (accepted: {}; or your own controller: \
                     PATH.py:CLASS or PATH.wasm, with :key=value,... after it)",
                    spec.name,
                    algorithm_names()
                ))),
            };
        };
        let params = Params::new(spec, algo)?;
        let controller = Self::build(algo, &params, common)?;
        // What chose the parameters read: the mode and the slow-start rule.
        let mut with = Vec::new();
        for choosing in ["mode", "base"] {
            if algo.all_params().any(|p| p.name == choosing) {
                with.push(format!("{choosing} = \"{}\"", params.choice(choosing)?));
            }
        }
        if let Some(default) = algo.slow_start {
            with.push(format!(
                "slow_start = \"{}\"",
                params.choice_or("slow_start", default)?
            ));
        }
        if with.is_empty() {
            with.push(format!("cc {}", algo.name));
        }
        params.refuse_unread(&with.join(", "))?;
        Ok(controller)
    }

    fn build(
        algo: &'static Algorithm,
        params: &Params,
        common: &CommonParams,
    ) -> Result<Self, CcError> {
        Ok(match algo.name {
            "reno" | "lss" => {
                Controller::Reno(loss_based(params, common, crate::loss_based::RenoRule)?)
            }
            "suss" => {
                let mss = common.mss;
                let max = params.integer("suss_max")?;
                let suss = crate::slow_start::suss::Suss::for_flow(
                    common.initcwnd,
                    mss,
                    max,
                    common.paced,
                );
                let slow_start = SlowStart::Suss(Box::new(suss));
                let rule = cubic_rule(params)?;
                Controller::Cubic(frame(params, common, slow_start, rule)?)
            }
            "cubic" | "hystart-pb" => {
                Controller::Cubic(loss_based(params, common, cubic_rule(params)?)?)
            }
            "hstcp" => Controller::HighSpeed(loss_based(
                params,
                common,
                crate::hstcp::HighSpeed {
                    table: crate::hstcp::HighSpeedTable {
                        low_window: params.number("low_window")?,
                    },
                },
            )?),
            "aimd" => Controller::Aimd(loss_based(params, common, {
                match params.choice("mode")? {
                    "periodic" => crate::aimd::Aimd::periodic(
                        crate::hstcp::HighSpeedTable {
                            low_window: params.number("low_window")?,
                        },
                        (params.number("period")? * 1e9) as Nanos,
                    ),
                    _ => crate::aimd::Aimd::fixed(params.number("a")?, params.number("b")?),
                }
            })?),
            "scalable" => Controller::Scalable(loss_based(
                params,
                common,
                crate::scalable::Scalable::new(params.number("a")?, params.number("b")?),
            )?),
            "dctcp" => Controller::Dctcp(loss_based(
                params,
                common,
                crate::dctcp::Dctcp::from_params(params)?,
            )?),
            "prague" => Controller::Prague(Box::new(loss_based(
                params,
                common,
                crate::prague::Prague::from_params(params)?,
            )?)),
            "careful-resume" => careful_resume(params, common)?,
            "rapid-start" => rapid_start(params, common)?,
            "hybla" => Controller::Hybla(frame(
                params,
                common,
                SlowStart::Standard,
                crate::hybla::Hybla::from_params(params)?,
            )?),
            "vegas" => Controller::Vegas(crate::vegas::from_params(params, common)?),
            "vegas-lss" => Controller::VegasLss(crate::vegas_lss::from_params(params, common)?),
            "ledbat" => Controller::Ledbat(crate::ledbat::from_params(params, common)?),
            "utp" => Controller::Utp(crate::utp::from_params(params, common)?),
            "bbr" => Controller::Bbr(Box::new(crate::bbr::from_params(params, common)?)),
            "bbr1" => Controller::Bbr1(crate::bbr1::from_params(params, common)?),
            other => unreachable!("algorithm {other} is registered but not constructed"),
        })
    }
}

impl Controller {
    /// Build again a spec that was built before (a reconnection, a swarm's next connection).
    /// Built-ins cannot fail here; a user's constructor can, and then the fault is recorded and
    /// a faulted stand-in returned, on which the engine's next check stops the run.
    pub fn rebuild(spec: &CcSpec, common: &CommonParams) -> Self {
        Controller::new(spec, common).unwrap_or_else(|e| {
            Controller::Guest(Box::new(GuestController::faulted_stand_in(
                &spec.name, common, e.0,
            )))
        })
    }

    /// Whether this is a user's controller that has faulted ([`crate::external`]).
    pub fn is_faulted(&self) -> bool {
        matches!(self, Controller::Guest(g) if g.is_faulted())
    }

    /// Whether this is a user's controller, loaded at run time.
    pub fn is_guest(&self) -> bool {
        matches!(self, Controller::Guest(_))
    }
}

impl CongestionController for Controller {
    fn on_packet_sent(&mut self, sent: &SentEvent) {
        dispatch!(self, c => c.on_packet_sent(sent))
    }
    fn uses_packet_sent(&self) -> bool {
        dispatch!(self, c => c.uses_packet_sent())
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        dispatch!(self, c => c.on_ack(ack))
    }
    fn on_rtt_sample(&mut self, now: Nanos, rtt: Nanos) {
        dispatch!(self, c => c.on_rtt_sample(now, rtt))
    }
    fn on_ecn_negotiated(&mut self, ecn: crate::controller::NegotiatedEcn) {
        dispatch!(self, c => c.on_ecn_negotiated(ecn))
    }
    fn on_ecn_feedback(&mut self, feedback: &EcnFeedback) {
        dispatch!(self, c => c.on_ecn_feedback(feedback))
    }
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        dispatch!(self, c => c.on_congestion_event(event))
    }
    fn on_recovery_exit(&mut self, now: Nanos) {
        dispatch!(self, c => c.on_recovery_exit(now))
    }
    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64) {
        dispatch!(self, c => c.on_rto(now, bytes_in_flight))
    }
    fn cwnd(&self) -> u64 {
        dispatch!(self, c => c.cwnd())
    }
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, c => c.pacing_rate())
    }
    fn send_quantum(&self) -> Option<u64> {
        dispatch!(self, c => c.send_quantum())
    }
    fn ecn_codepoint(&self) -> EcnCodepoint {
        dispatch!(self, c => c.ecn_codepoint())
    }
    fn phase(&self) -> Phase {
        dispatch!(self, c => c.phase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #37: a sender holds its controller inline, so the enum's size is every sender's;
    /// the variants larger than CUBIC's are boxed (576 bytes before, RapidStart over CUBIC's).
    #[test]
    fn no_controller_variant_is_held_inline_larger_than_cubics() {
        use std::mem::size_of;
        let controller = size_of::<Controller>();
        let cubic = size_of::<LossBased<crate::cubic::Cubic>>();
        assert!(controller <= cubic + 8, "{controller} bytes");
    }

    const COMMON: CommonParams = CommonParams {
        mss: 1460,
        initcwnd: 10,
        abc: true,
        seed: 1,
        paced: false,
    };

    #[test]
    fn unknown_algorithm_names_the_accepted_ones() {
        let err = Controller::new(&CcSpec::named("warp"), &COMMON).unwrap_err();
        assert!(err.0.contains("unknown algorithm 'warp'"), "{err}");
        assert!(err.0.contains("reno"), "{err}");
    }

    #[test]
    fn a_repeated_parameter_is_refused() {
        let spec = r#"{"name": "cubic", "params": {"beta": 0.5, "beta": 0.6}}"#;
        let err = serde_json::from_str::<CcSpec>(spec).unwrap_err();
        assert!(err.to_string().contains("'beta' is given twice"), "{err}");
        let once = r#"{"name": "cubic", "params": {"beta": 0.5, "c": 0.6}}"#;
        assert_eq!(
            serde_json::from_str::<CcSpec>(once).unwrap().params.len(),
            2
        );
    }

    #[test]
    fn unknown_parameter_is_an_error() {
        let mut spec = CcSpec::named("reno");
        spec.params.insert("beta".into(), ParamValue::Number(0.7));
        let err = Controller::new(&spec, &COMMON).unwrap_err();
        assert!(err.0.contains("unknown parameter 'beta'"), "{err}");
    }

    #[test]
    fn aimd_refuses_the_other_modes_parameters() {
        for (mode, key) in [
            ("static", "period"),
            ("static", "low_window"),
            ("periodic", "a"),
        ] {
            let mut spec = CcSpec::named("aimd");
            spec.params
                .insert("mode".into(), ParamValue::Text(mode.into()));
            spec.params.insert(key.into(), ParamValue::Number(0.5));
            let err = Controller::new(&spec, &COMMON).unwrap_err();
            assert!(
                err.0.contains(&format!("'{key}' is not read with mode")),
                "{err}"
            );
        }
        let mut spec = CcSpec::named("aimd");
        spec.params.insert("period".into(), ParamValue::Number(0.1));
        assert!(
            Controller::new(&spec, &COMMON).is_err(),
            "static is the default mode"
        );
    }

    /// A parameter of another slow-start rule or mode is refused, whichever algorithm takes it.
    #[test]
    fn a_parameter_the_chosen_rule_never_reads_is_refused() {
        for (name, key, with) in [
            ("reno", "max_ssthresh", "slow_start = \"standard\""),
            ("cubic", "search_thresh", "slow_start = \"hystart\""),
            ("lss", "pb_rtt_threshold_ms", "slow_start = \"lss\""),
            (
                "aimd",
                "hystart_low_window",
                "mode = \"static\", slow_start = \"standard\"",
            ),
        ] {
            let err = build_for_test(name, 1460, &[(key, ParamValue::Number(1.0))]).unwrap_err();
            assert!(
                err.0.contains(&format!("'{key}' is not read with {with}")),
                "{err}"
            );
        }
        // Chosen with its rule, the same parameter is read.
        let lss = [
            ("slow_start", ParamValue::Text("lss".into())),
            ("max_ssthresh", ParamValue::Number(5.0)),
        ];
        build_for_test("reno", 1460, &lss).unwrap();
        let search = [
            ("slow_start", ParamValue::Text("search".into())),
            ("search_thresh", ParamValue::Number(0.5)),
        ];
        build_for_test("cubic", 1460, &search).unwrap();
    }

    #[test]
    fn every_declared_default_parses() {
        for algo in ALGORITHMS {
            for p in algo.params {
                assert!(!p.doc.is_empty() && !p.accepted().is_empty(), "{}", p.name);
            }
            let c = Controller::new(&CcSpec::named(algo.name), &COMMON).unwrap();
            assert!(c.cwnd() >= COMMON.mss);
        }
    }
}

/// A controller built the way a scenario builds it (initcwnd 10, byte counting), for tests.
#[cfg(test)]
pub(crate) fn build_for_test(
    name: &str,
    mss: u64,
    params: &[(&str, ParamValue)],
) -> Result<Controller, CcError> {
    let mut spec = CcSpec::named(name);
    for (k, v) in params {
        spec.params.insert(k.to_string(), v.clone());
    }
    let common = CommonParams {
        mss,
        initcwnd: 10,
        abc: true,
        seed: 0,
        paced: false,
    };
    Controller::new(&spec, &common)
}

#[cfg(test)]
mod property_tests {
    use super::*;
    use crate::estimators::RateSample;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Ack {
            segments: u64,
            rtt_ms: u64,
            owd_ms: u64,
            limited: bool,
        },
        Loss,
        RecoveryExit,
        Timeout,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            8 => (1u64..64, 1u64..2000, 0u64..2000, any::<bool>())
                .prop_map(|(segments, rtt_ms, owd_ms, limited)| Step::Ack { segments, rtt_ms, owd_ms, limited }),
            1 => Just(Step::Loss),
            1 => Just(Step::RecoveryExit),
            1 => Just(Step::Timeout),
        ]
    }

    /// Specs that turn on what the defaults leave idle: a saved state for Careful Resume,
    /// ns-3's arithmetic for Hybla, the capped rate-limited growth.
    fn mechanisms_on() -> Vec<CcSpec> {
        let spec = |name: &str, params: &[(&str, ParamValue)]| {
            let mut s = CcSpec::named(name);
            for (k, v) in params {
                s.params.insert(k.to_string(), v.clone());
            }
            s
        };
        let (n, t) = (ParamValue::Number, |w: &str| ParamValue::Text(w.into()));
        vec![
            spec(
                "careful-resume",
                &[("saved_cwnd", n(500.0)), ("saved_rtt_ms", n(50.0))],
            ),
            spec(
                "careful-resume",
                &[
                    ("saved_cwnd", n(500.0)),
                    ("saved_rtt_ms", n(50.0)),
                    ("base", t("cubic")),
                ],
            ),
            spec(
                "hybla",
                &[
                    ("model", t("ns3")),
                    ("rho_initial_window", ParamValue::Bool(true)),
                ],
            ),
            spec("rapid-start", &[("recovery_period", t("tcp"))]),
            spec("reno", &[("rate_limited_growth", t("capped"))]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every algorithm (and those whose defaults leave their mechanism idle, with it
        /// on), any event order: cwnd stays at least one MSS, finite and far from overflow;
        /// pacing, when given, is positive.
        #[test]
        fn every_controller_keeps_a_sane_window(steps in proptest::collection::vec(step(), 1..300)) {
            const MSS: u64 = 1448;
            let specs = ALGORITHMS.iter().map(|a| CcSpec::named(a.name)).chain(mechanisms_on());
            for spec in specs {
                let common = CommonParams { mss: MSS, initcwnd: 10, abc: true, seed: 7, paced: false };
                let mut c = Controller::new(&spec, &common).unwrap();
                let algo = &spec; // named in the messages below
                let (mut now, mut delivered, mut in_recovery) = (0u64, 0u64, false);
                for s in &steps {
                    now += 1_000_000;
                    match *s {
                        Step::Ack { segments, rtt_ms, owd_ms, limited } => {
                            let bytes = segments * MSS;
                            let prior_delivered = delivered;
                            delivered += bytes;
                            let rtt = rtt_ms * 1_000_000;
                            c.on_ack(&AckEvent {
                                now,
                                bytes_acked: bytes,
                                mss: MSS,
                                rtt: Some(rtt),
                                srtt: rtt,
                                min_rtt: 1_000_000,
                                one_way_delay: Some(owd_ms * 1_000_000),
                                rate: Some(RateSample {
                                    delivery_rate: bytes * 1_000_000_000 / rtt,
                                    delivered: bytes,
                                    interval: rtt,
                                    prior_delivered,
                                    is_app_limited: !limited,
                                    rtt,
                                }),
                                delivered,
                                prior_in_flight: c.cwnd(),
                                bytes_in_flight: c.cwnd().saturating_sub(bytes),
                                cwnd_limited: limited,
                                sent_before_cwnd_block: limited,
                                in_recovery,
                            });
                        }
                        Step::Loss => {
                            if !in_recovery {
                                c.on_congestion_event(&CongestionEvent { ecn: false,
                                    now,
                                    bytes_lost: MSS,
                                    bytes_in_flight: c.cwnd(),
                                    mss: MSS,
                                });
                                in_recovery = true;
                            }
                        }
                        Step::RecoveryExit => {
                            if in_recovery {
                                c.on_recovery_exit(now);
                                in_recovery = false;
                            }
                        }
                        Step::Timeout => {
                            c.on_rto(now, c.cwnd());
                            in_recovery = false;
                        }
                    }
                    let cwnd = c.cwnd();
                    prop_assert!(cwnd >= MSS, "{}: cwnd {cwnd} after {s:?}", algo.name);
                    prop_assert!(cwnd < 1 << 50, "{}: cwnd {cwnd} after {s:?}", algo.name);
                    if let Some(rate) = c.pacing_rate() {
                        prop_assert!(rate > 0, "{}: pacing {rate}", algo.name);
                    }
                }
            }
        }
    }
}
