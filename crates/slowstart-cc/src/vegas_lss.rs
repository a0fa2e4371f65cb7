//! Vegas slow start handing over to RFC 3742 Limited Slow-Start at gamma (net100, Dunigan 2003: "Floyd's TCP slow-start and AIMD mods").
//!
//! The net100 experiments used "the Vegas gamma threshold during slow-start to initiate Floyd's
//! slow start (rather than max_ssthresh)": where [`crate::vegas`] leaves slow start when
//! `diff > gamma`, this variant switches to Limited Slow-Start (phase `limited_slow_start`) with
//! `max_ssthresh` = the cwnd at that moment (net100 saw ~120 segments, close to Floyd's 100) or a
//! fixed value, and keeps growing (about max_ssthresh/2 per RTT) until loss or until the sender
//! stops being cwnd-limited (the receive window caps it). Loss halves like Reno; congestion
//! avoidance is then Reno's by default, or Vegas's (`avoidance = "vegas"`). The net100 runs paired
//! this with Floyd's HighSpeed AIMD, which is not modelled here.

use crate::params::{Accepts, NumberOrWord, ParamInfo, Params, Range};
use crate::params::{CcError, CommonParams};
use crate::vegas::{thresholds, Avoidance, MaxSsthresh, SlowStartExit, Vegas, VegasConfig};
use crate::window::AckCounting;

/// `vegas-lss` parameters.
pub const PARAMS: &[ParamInfo] = &[
    crate::vegas::THRESHOLD_PARAMS[0],
    crate::vegas::THRESHOLD_PARAMS[1],
    crate::vegas::THRESHOLD_PARAMS[2],
    crate::vegas::THRESHOLD_PARAMS[3],
    ParamInfo {
        name: "max_ssthresh",
        doc: "RFC 3742 max_ssthresh of the Limited Slow-Start begun at gamma: the cwnd at that \
              moment, or a fixed number of segments",
        default: "gamma",
        accepts: Accepts::WordOrNumber(&["gamma"], Range::number(1.0, 1e6)),
    },
    ParamInfo {
        name: "avoidance",
        doc: "congestion avoidance after the first loss: Reno's +1 MSS per RTT or Vegas's +-1 per RTT",
        default: "reno",
        accepts: Accepts::Word(&["reno", "vegas"]),
    },
];

/// `vegas-lss` from validated parameters.
pub fn from_params(params: &Params, common: &CommonParams) -> Result<Vegas, CcError> {
    let max_ssthresh = match params.number_or_word("max_ssthresh")? {
        NumberOrWord::Number(segments) => MaxSsthresh::Bytes((segments * common.mss as f64) as u64),
        NumberOrWord::Word(_) => MaxSsthresh::CwndAtGamma,
    };
    let avoidance = match params.choice("avoidance")? {
        "vegas" => Avoidance::Vegas,
        _ => Avoidance::Reno,
    };
    let mut v = vegas_lss(
        common.mss,
        common.initcwnd,
        common.counting(),
        thresholds(params)?,
        max_ssthresh,
        avoidance,
    );
    v.set_round_rtt(crate::vegas::round_rtt(params)?);
    Ok(v)
}

/// Vegas with net100's gamma-triggered Limited Slow-Start.
pub fn vegas_lss(
    mss: u64,
    initcwnd: u64,
    counting: AckCounting,
    [alpha, beta, gamma]: [f64; 3],
    max_ssthresh: MaxSsthresh,
    avoidance: Avoidance,
) -> Vegas {
    Vegas::new(
        mss,
        initcwnd,
        counting,
        VegasConfig {
            alpha,
            beta,
            gamma,
            exit: SlowStartExit::LimitedSlowStart(max_ssthresh),
            avoidance,
            round_rtt: crate::vegas::RoundRtt::Min,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vegas::tests::{until_gamma, MS, MSS};
    use crate::vegas::{LINUX_ALPHA, LINUX_BETA, LINUX_GAMMA};
    use crate::{AckEvent, CongestionController, CongestionEvent, Phase};

    fn lss(max: MaxSsthresh, avoidance: Avoidance) -> Vegas {
        vegas_lss(
            MSS,
            10,
            AckCounting::Bytes,
            [LINUX_ALPHA, LINUX_BETA, LINUX_GAMMA],
            max,
            avoidance,
        )
    }

    #[test]
    fn gamma_switches_to_limited_slow_start_at_cwnd() {
        let mut v = lss(MaxSsthresh::CwndAtGamma, Avoidance::Reno);
        let mut d = until_gamma(&mut v, 110 * MS);
        // Same point as plain Vegas (80 segments, diff 7 > gamma), but no cut to target + 1:
        // Limited Slow-Start with max_ssthresh = 80 segments, and this ACK's +1 MSS.
        assert_eq!(v.phase(), Phase::LimitedSlowStart);
        assert!(v.phase().is_initial_slow_start());
        assert_eq!(v.lss_max_ssthresh(), Some(80 * MSS));
        assert_eq!(v.cwnd(), 81 * MSS);
        assert_eq!(v.ssthresh(), u64::MAX);
        // RFC 3742: above max_ssthresh, K = int(cwnd / (max_ssthresh / 2)): +MSS/2 per ACK from
        // 81 to 120 segments (78 ACKs), then +MSS/3: one window of 81 ACKs adds 39.999 segments.
        let start = v.cwnd();
        d.round(&mut v, 110 * MS);
        assert_eq!(v.cwnd() - start, 78 * 500 + 3 * 333);
        // Keeps growing sub-exponentially: about max_ssthresh/2 per RTT, never doubling.
        for _ in 0..10 {
            let before = v.cwnd();
            d.round(&mut v, 110 * MS);
            let g = v.cwnd() - before;
            assert!((39 * MSS..=80 * MSS).contains(&g) && g < before, "grew {g}");
        }
        assert_eq!(v.phase(), Phase::LimitedSlowStart);
    }

    #[test]
    fn fixed_max_ssthresh_is_standard_slow_start_below_it() {
        let mut v = lss(MaxSsthresh::Bytes(100 * MSS), Avoidance::Reno);
        let mut d = until_gamma(&mut v, 110 * MS);
        assert_eq!(v.lss_max_ssthresh(), Some(100 * MSS));
        // +1 MSS per ACK up to 100 segments, then K = int(cwnd / 50 segments) = 2.
        for _ in 0..19 {
            let a = d.ack(Some(110 * MS), v.cwnd());
            v.on_ack(&a);
        }
        assert_eq!(v.cwnd(), 100 * MSS);
        let a = d.ack(Some(110 * MS), v.cwnd());
        v.on_ack(&a);
        assert_eq!(v.cwnd(), 101 * MSS);
        let a = d.ack(Some(110 * MS), v.cwnd());
        v.on_ack(&a);
        assert_eq!(v.cwnd(), 101 * MSS + MSS / 2);
    }

    #[test]
    fn loss_ends_limited_slow_start_then_reno_avoidance() {
        let mut v = lss(MaxSsthresh::CwndAtGamma, Avoidance::Reno);
        let mut d = until_gamma(&mut v, 110 * MS);
        d.round(&mut v, 110 * MS);
        let at_loss = v.cwnd();
        v.on_congestion_event(&CongestionEvent {
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(v.cwnd(), at_loss / 2);
        assert_eq!(v.phase(), Phase::Recovery);
        v.on_recovery_exit(0);
        assert_eq!(v.phase(), Phase::CongestionAvoidance);
        // Reno: +1 MSS per window of ACKs whatever the queueing delay.
        let start = v.cwnd();
        for _ in 0..3 {
            d.round(&mut v, 500 * MS);
        }
        assert!(v.cwnd() >= start + 2 * MSS && v.cwnd() <= start + 3 * MSS);
    }

    #[test]
    fn vegas_avoidance_after_loss_when_asked() {
        let mut v = lss(MaxSsthresh::CwndAtGamma, Avoidance::Vegas);
        let mut d = until_gamma(&mut v, 110 * MS);
        v.on_congestion_event(&CongestionEvent {
            mss: MSS,
            ..Default::default()
        });
        v.on_recovery_exit(0);
        // A long queue (diff far above beta): Vegas shrinks the window one segment per RTT.
        d.round(&mut v, 110 * MS);
        let start = v.cwnd();
        d.round(&mut v, 500 * MS);
        d.round(&mut v, 500 * MS);
        d.round(&mut v, 500 * MS);
        assert!(v.cwnd() < start, "{} !< {start}", v.cwnd());
    }

    #[test]
    fn window_limit_stops_growth() {
        let mut v = lss(MaxSsthresh::CwndAtGamma, Avoidance::Reno);
        let mut d = until_gamma(&mut v, 110 * MS);
        let at = v.cwnd();
        for _ in 0..200 {
            let a = AckEvent {
                cwnd_limited: false,
                ..d.ack(Some(110 * MS), v.cwnd())
            };
            v.on_ack(&a);
        }
        assert_eq!(v.cwnd(), at);
        assert_eq!(v.phase(), Phase::LimitedSlowStart);
    }
    #[test]
    fn registry_builds_vegas_lss() {
        use crate::params::ParamValue::{Number, Text};
        let crate::Controller::VegasLss(v) =
            crate::registry::build_for_test("vegas-lss", MSS, &[]).unwrap()
        else {
            panic!("not vegas-lss");
        };
        let cfg = v.config();
        assert_eq!(
            cfg.exit,
            SlowStartExit::LimitedSlowStart(MaxSsthresh::CwndAtGamma)
        );
        assert_eq!(cfg.avoidance, Avoidance::Reno);
        let crate::Controller::VegasLss(v) = crate::registry::build_for_test(
            "vegas-lss",
            MSS,
            &[
                ("max_ssthresh", Number(100.0)),
                ("avoidance", Text("vegas".into())),
            ],
        )
        .unwrap() else {
            panic!("not vegas-lss");
        };
        assert_eq!(
            v.config().exit,
            SlowStartExit::LimitedSlowStart(MaxSsthresh::Bytes(100 * MSS))
        );
        assert_eq!(v.config().avoidance, Avoidance::Vegas);
        let err = crate::registry::build_for_test(
            "vegas-lss",
            MSS,
            &[("max_ssthresh", Text("huge".into()))],
        )
        .unwrap_err();
        assert!(err.0.contains("gamma | 1..=1000000"), "{err}");
        assert!(crate::registry::build_for_test(
            "vegas-lss",
            MSS,
            &[("avoidance", Text("cubic".into()))]
        )
        .is_err());
    }
}
