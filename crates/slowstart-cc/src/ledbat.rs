//! LEDBAT, RFC 6817 §2.4 (Shalunov, Hazel, Iyengar, Kuehlewind, Dec 2012): a window steered by one-way queuing delay towards TARGET.
//!
//! Per ACK (§2.4.2): `queuing_delay = FILTER(current_delays) - MIN(base_delays)`,
//! `off_target = (TARGET - queuing_delay) / TARGET`,
//! `cwnd += GAIN * off_target * bytes_newly_acked * MSS / cwnd` (`bytes_newly_acked` is the ACK's
//! bytes, or one MSS with per-ACK counting: it "MAY be set to MSS"), then
//! `cwnd = min(cwnd, flightsize + ALLOWED_INCREASE * MSS)` and `cwnd = max(cwnd, MIN_CWND * MSS)`.
//! `base_delays` keeps BASE_HISTORY one-minute minima; FILTER is the minimum of the last
//! CURRENT_FILTER samples that are at most one (smoothed) RTT old. Loss:
//! `cwnd = min(cwnd, max(cwnd/2, MIN_CWND * MSS))`, once per recovery episode (the RFC's "at most
//! once per RTT"); timeout: `cwnd = 1 MSS`.
//!
//! Slow start: §2.4.2 leaves it to the implementation ("conservative ... implementations ... may
//! skip slow start altogether and start with an initial window of INIT_CWND * MSS"). By default
//! (`slow_start = false`) LEDBAT starts in congestion avoidance at INIT_CWND = 2 segments. With
//! `slow_start = true` it grows like Reno slow start (cwnd-limited ACKs add their bytes) until the
//! queuing delay reaches TARGET (where LEDBAT itself would stop growing), a loss, or ssthresh.
//!
//! While the transport is in loss recovery the window is left to its recovery (PRR towards
//! `ssthresh`, which loss sets to the reduced cwnd); delay samples are still recorded.

use std::collections::VecDeque;

use crate::params::{Accepts, NumberOrWord, ParamInfo, Params, Range};
use crate::params::{CcError, CommonParams};
use crate::window::{AckCounting, WindowGrowth};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SECOND};

/// §2.4.2 / §3.2: "TARGET MUST be 100 milliseconds or less"; 100 ms is the usual choice.
pub const MAX_TARGET: Nanos = 100 * 1_000_000;
/// §2.4.2: "GAIN MUST be set to 1 or less."
pub const MAX_GAIN: f64 = 1.0;
/// §2.4.2: "The size of the base_delays list, BASE_HISTORY, SHOULD be 10."
pub const BASE_HISTORY: usize = 10;
/// §2.4.2: "ALLOWED_INCREASE SHOULD be 1."
pub const ALLOWED_INCREASE: u64 = 1;
/// §2.4.2: "INIT_CWND and MIN_CWND SHOULD both be 2."
pub const INIT_CWND: u64 = 2;
/// MIN_CWND, segments: the floor of delay-based and loss reductions (a timeout sets one MSS).
pub const MIN_CWND: u64 = 2;
/// §2.4.2: "the sender SHOULD use at least 4 delay samples in each RTT"; our FILTER is the minimum
/// of the last 4 (libtorrent uses the last 3).
pub const DEFAULT_CURRENT_FILTER: usize = 4;
/// §2.4.2 `update_base_delay`: each minimum covers one minute (`round_to_minute(now)`).
pub const BASE_INTERVAL: Nanos = 60 * SECOND;

/// Fractional bits of the window (libtorrent keeps cwnd in 16.16 fixed point as well).
const FP_SHIFT: u32 = 16;

/// §2.4.2 `update_base_delay`: BASE_HISTORY per-minute delay minima; a new minute (by
/// `round_to_minute(now)`) drops the oldest.
#[derive(Clone, Debug)]
pub struct BaseDelayHistory {
    minima: VecDeque<Nanos>,
    last_rollover_minute: Option<u64>,
}

impl BaseDelayHistory {
    /// A history of `buckets` minutes (at least 1), empty.
    pub fn new(buckets: usize) -> Self {
        Self {
            minima: std::iter::repeat_n(Nanos::MAX, buckets.max(1)).collect(),
            last_rollover_minute: None,
        }
    }

    /// Take a one-way delay sample at `now`: the current minute's minimum, or a new minute's first.
    pub fn update(&mut self, now: Nanos, delay: Nanos) {
        let minute = now / BASE_INTERVAL;
        if self.last_rollover_minute != Some(minute) {
            self.last_rollover_minute = Some(minute);
            self.minima.pop_front();
            self.minima.push_back(delay);
        } else if let Some(tail) = self.minima.back_mut() {
            *tail = (*tail).min(delay);
        }
    }

    /// `MIN(base_delays)`, once there is a sample.
    pub fn base(&self) -> Option<Nanos> {
        self.minima
            .iter()
            .copied()
            .min()
            .filter(|&m| m != Nanos::MAX)
    }
}

/// §2.4.2 `update_current_delay` and FILTER: the last `len` samples, minimum of those no older
/// than one RTT ("CURRENT_FILTER MUST be limited such that samples in the list are not older than
/// an RTT in the past"); the newest always counts.
#[derive(Clone, Debug)]
pub struct CurrentDelayFilter {
    samples: VecDeque<(Nanos, Nanos)>,
    len: usize,
}

impl CurrentDelayFilter {
    /// A filter over the last `len` samples (at least 1), empty.
    pub fn new(len: usize) -> Self {
        let len = len.max(1);
        Self {
            samples: VecDeque::with_capacity(len),
            len,
        }
    }

    /// Add a one-way delay sample taken at `now`, dropping the oldest when full.
    pub fn update(&mut self, now: Nanos, delay: Nanos) {
        if self.samples.len() == self.len {
            self.samples.pop_front();
        }
        self.samples.push_back((now, delay));
    }

    /// Minimum of the samples at most `rtt` old (all of them when `rtt` is 0: no estimate yet).
    pub fn filter(&self, now: Nanos, rtt: Nanos) -> Option<Nanos> {
        let newest = self.samples.back()?.1;
        let recent = self
            .samples
            .iter()
            .filter(|(t, _)| rtt == 0 || now.saturating_sub(*t) <= rtt)
            .map(|&(_, d)| d)
            .min();
        Some(recent.map_or(newest, |m| m.min(newest)))
    }
}

/// LEDBAT's settings (RFC 6817 §2.4.2), from the `ledbat` parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatConfig {
    /// TARGET queuing delay (at most [`MAX_TARGET`], 100 ms).
    pub target: Nanos,
    /// GAIN: cwnd change per RTT at |off_target| = 1, in MSS (at most 1).
    pub gain: f64,
    /// CURRENT_FILTER: the queuing delay is the minimum of this many latest samples.
    pub current_filter: usize,
    /// Whether to grow as Reno's slow start until the queuing delay reaches TARGET.
    pub slow_start: bool,
    /// Initial window, segments.
    pub init_cwnd: u64,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        Self {
            target: MAX_TARGET,
            gain: MAX_GAIN,
            current_filter: DEFAULT_CURRENT_FILTER,
            slow_start: false,
            init_cwnd: INIT_CWND,
        }
    }
}

/// LEDBAT (RFC 6817): cwnd steered so the queuing delay stays at TARGET.
#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    mss: u64,
    /// Window in bytes << 16.
    cwnd_fp: u64,
    ssthresh: u64,
    in_slow_start: bool,
    phase: Phase,
    growth: WindowGrowth,
    base: BaseDelayHistory,
    current: CurrentDelayFilter,
    queuing_delay: Option<Nanos>,
}

impl Ledbat {
    /// A controller at `cfg.init_cwnd` segments of `mss` bytes, in slow start if `cfg.slow_start`.
    pub fn new(mss: u64, counting: AckCounting, cfg: LedbatConfig) -> Self {
        let cwnd = cfg.init_cwnd.max(1) * mss;
        Self {
            cfg,
            mss,
            cwnd_fp: cwnd << FP_SHIFT,
            ssthresh: u64::MAX,
            in_slow_start: cfg.slow_start,
            phase: if cfg.slow_start {
                Phase::SlowStart
            } else {
                Phase::CongestionAvoidance
            },
            growth: WindowGrowth::new(counting),
            base: BaseDelayHistory::new(BASE_HISTORY),
            current: CurrentDelayFilter::new(cfg.current_filter),
            queuing_delay: None,
        }
    }

    /// The settings it was built with.
    pub fn config(&self) -> &LedbatConfig {
        &self.cfg
    }

    /// The queuing delay estimate of the last ACK with a delay sample.
    pub fn queuing_delay(&self) -> Option<Nanos> {
        self.queuing_delay
    }

    /// The base delay, `MIN(base_delays)`, once there is a sample.
    pub fn base_delay(&self) -> Option<Nanos> {
        self.base.base()
    }

    fn min_cwnd(&self) -> u64 {
        MIN_CWND * self.mss
    }

    fn set_cwnd(&mut self, bytes: u64) {
        self.cwnd_fp = bytes.min(u64::MAX >> FP_SHIFT) << FP_SHIFT;
    }

    /// §2.4.2 "on acknowledgement", after the delay lists are updated.
    fn ledbat_update(&mut self, ack: &AckEvent, queuing_delay: Nanos) {
        let target = self.cfg.target.max(1) as f64;
        let off_target = (target - queuing_delay as f64) / target;
        let bytes_newly_acked = self.growth.ack_credit(ack) as f64;
        let cwnd = (self.cwnd_fp >> FP_SHIFT).max(1) as f64;
        let delta = self.cfg.gain * off_target * bytes_newly_acked * self.mss as f64 / cwnd;
        let scaled = self.cwnd_fp as f64 + delta * (1u64 << FP_SHIFT) as f64;
        // f64 -> u64 saturates; negative goes to 0 and is floored below.
        let mut cwnd_fp = scaled.max(0.0) as u64;
        let max_allowed = ack
            .prior_in_flight
            .saturating_add(ALLOWED_INCREASE * self.mss)
            .min(u64::MAX >> FP_SHIFT);
        cwnd_fp = cwnd_fp.min(max_allowed << FP_SHIFT);
        self.cwnd_fp = cwnd_fp.max(self.min_cwnd() << FP_SHIFT);
    }
}

impl CongestionController for Ledbat {
    fn on_ack(&mut self, ack: &AckEvent) {
        if let Some(delay) = ack.one_way_delay {
            self.base.update(ack.now, delay);
            self.current.update(ack.now, delay);
        }
        let (Some(current), Some(base)) =
            (self.current.filter(ack.now, ack.srtt), self.base.base())
        else {
            return;
        };
        let queuing_delay = current.saturating_sub(base);
        self.queuing_delay = Some(queuing_delay);
        if ack.in_recovery || ack.bytes_acked == 0 {
            return;
        }
        if self.in_slow_start {
            if queuing_delay < self.cfg.target {
                if ack.cwnd_limited {
                    let (cwnd, _) = self.growth.slow_start(self.cwnd(), self.ssthresh, ack);
                    self.set_cwnd(cwnd);
                }
                if self.cwnd() < self.ssthresh {
                    return;
                }
                self.in_slow_start = false;
                self.phase = Phase::CongestionAvoidance;
                return;
            }
            // Queuing delay reached TARGET: LEDBAT proper from this ACK on.
            self.in_slow_start = false;
            self.ssthresh = self.ssthresh.min(self.cwnd());
            self.phase = Phase::CongestionAvoidance;
        }
        self.ledbat_update(ack, queuing_delay);
    }

    fn on_congestion_event(&mut self, _event: &CongestionEvent) {
        // §2.4.2 "on data loss": cwnd = min(cwnd, max(cwnd/2, MIN_CWND * MSS)).
        let cwnd = self.cwnd();
        let reduced = cwnd.min((cwnd / 2).max(self.min_cwnd()));
        self.set_cwnd(reduced);
        self.ssthresh = reduced;
        self.in_slow_start = false;
        self.phase = Phase::Recovery;
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.phase = Phase::CongestionAvoidance;
    }

    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        // §2.4.2: "if no ACKs are received within a CTO ... set cwnd to 1MSS".
        if self.phase != Phase::Recovery && self.phase != Phase::RtoRecovery {
            self.ssthresh = (self.cwnd() / 2).max(self.min_cwnd());
        }
        self.set_cwnd(self.mss);
        if self.cfg.slow_start {
            self.in_slow_start = true;
            self.phase = Phase::RtoRecovery;
        } else {
            self.phase = Phase::CongestionAvoidance;
        }
    }

    fn cwnd(&self) -> u64 {
        (self.cwnd_fp >> FP_SHIFT).max(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn phase(&self) -> Phase {
        self.phase
    }
}

/// `ledbat` parameters.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "target",
        doc: "TARGET queuing delay, seconds (RFC 6817: MUST be 100 ms or less)",
        default: "0.1",
        accepts: Accepts::number(1e-6, 0.1),
    },
    ParamInfo {
        name: "gain",
        doc: "GAIN: cwnd change per RTT at |off_target| = 1, in MSS (RFC 6817: MUST be 1 or less)",
        default: "1",
        accepts: Accepts::number(1e-6, MAX_GAIN),
    },
    ParamInfo {
        name: "current_filter",
        doc: "CURRENT_FILTER: queuing delay uses the minimum of this many latest samples (at most \
              one RTT old)",
        default: "4",
        accepts: Accepts::integer(1, 64),
    },
    ParamInfo {
        name: "slow_start",
        doc: "grow like Reno slow start until the queuing delay reaches TARGET (RFC 6817 leaves \
              slow start optional); false starts in congestion avoidance",
        default: "false",
        accepts: Accepts::Bool,
    },
    ParamInfo {
        name: "init_cwnd",
        doc: "initial window in segments (RFC 6817 INIT_CWND SHOULD be 2), or flow for the flow's \
              initcwnd",
        default: "2",
        accepts: INIT_CWND_ACCEPTS,
    },
];

/// Seconds to nanoseconds.
pub(crate) fn seconds(s: f64) -> Nanos {
    (s * SECOND as f64).round() as Nanos
}

/// What `init_cwnd` accepts (`ledbat` and `utp`): a number of segments or `flow`.
pub(crate) const INIT_CWND_ACCEPTS: Accepts =
    Accepts::WordOrNumber(&["flow"], Range::integer(1, 1000));

/// An initial window: a number of segments or `flow` (the flow's initcwnd).
pub(crate) fn init_cwnd(params: &Params, common: &CommonParams) -> Result<u64, CcError> {
    Ok(match params.number_or_word("init_cwnd")? {
        NumberOrWord::Word(_) => common.initcwnd.max(1),
        NumberOrWord::Number(n) => n as u64,
    })
}

/// `ledbat` from validated parameters.
pub fn from_params(params: &Params, common: &CommonParams) -> Result<Ledbat, CcError> {
    let cfg = LedbatConfig {
        target: seconds(params.number("target")?),
        gain: params.number("gain")?,
        current_filter: params.integer("current_filter")? as usize,
        slow_start: params.boolean("slow_start")?,
        init_cwnd: init_cwnd(params, common)?,
    };
    Ok(Ledbat::new(common.mss, common.counting(), cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;
    const BASE: Nanos = 40 * MS;

    struct Driver {
        now: Nanos,
        delivered: u64,
    }

    impl Driver {
        fn ack(&mut self, c: &Ledbat, owd: Nanos) -> AckEvent {
            self.now += MS;
            self.delivered += MSS;
            AckEvent {
                now: self.now,
                bytes_acked: MSS,
                mss: MSS,
                rtt: Some(100 * MS),
                srtt: 100 * MS,
                min_rtt: 100 * MS,
                one_way_delay: Some(owd),
                delivered: self.delivered,
                prior_in_flight: c.cwnd(),
                bytes_in_flight: c.cwnd() - MSS,
                cwnd_limited: true,
                ..Default::default()
            }
        }

        /// CURRENT_FILTER ACKs at `owd` during recovery: the filter sees only `owd`, cwnd is kept.
        fn prime(&mut self, c: &mut Ledbat, owd: Nanos) {
            for _ in 0..DEFAULT_CURRENT_FILTER {
                let a = AckEvent {
                    in_recovery: true,
                    ..self.ack(c, owd)
                };
                c.on_ack(&a);
            }
        }

        /// One window of ACKs at one-way delay `owd`.
        fn round(&mut self, c: &mut Ledbat, owd: Nanos) {
            for _ in 0..c.cwnd() / MSS {
                let a = self.ack(c, owd);
                c.on_ack(&a);
            }
        }
    }

    /// LEDBAT at `segments` segments with base delay BASE already measured.
    fn ledbat_at(segments: u64) -> (Ledbat, Driver) {
        let cfg = LedbatConfig {
            init_cwnd: segments,
            ..Default::default()
        };
        let mut l = Ledbat::new(MSS, AckCounting::Bytes, cfg);
        let mut d = Driver {
            now: 0,
            delivered: 0,
        };
        // Seed the base delay without growing the window: an ACK in recovery.
        let a = AckEvent {
            in_recovery: true,
            ..d.ack(&l, BASE)
        };
        l.on_ack(&a);
        assert_eq!(l.base_delay(), Some(BASE));
        (l, d)
    }

    #[test]
    fn rfc_constants() {
        assert_eq!(MAX_TARGET, 100 * MS);
        assert_eq!(
            (BASE_HISTORY, ALLOWED_INCREASE, INIT_CWND, MIN_CWND),
            (10, 1, 2, 2)
        );
        let l = Ledbat::new(MSS, AckCounting::Bytes, LedbatConfig::default());
        assert_eq!(l.cwnd(), 2 * MSS, "INIT_CWND");
        assert_eq!(
            l.phase(),
            Phase::CongestionAvoidance,
            "no slow start by default"
        );
    }

    #[test]
    fn no_queuing_adds_one_mss_per_rtt() {
        let (mut l, mut d) = ledbat_at(20);
        // off_target = 1: +MSS*MSS/cwnd per ACK, ~1 MSS per window.
        d.prime(&mut l, BASE);
        let start = l.cwnd_fp;
        d.round(&mut l, BASE);
        let grown = (l.cwnd_fp - start) as f64 / (1u64 << FP_SHIFT) as f64;
        // Sum of 1000 * 1000 / cwnd over 20 ACKs from cwnd = 20000: 975.9 bytes.
        let mut expect = 0.0;
        let mut c = 20_000.0;
        for _ in 0..20 {
            let inc = 1000.0 * 1000.0 / c;
            expect += inc;
            c += inc;
        }
        assert!((grown - expect).abs() < 1.0, "{grown} vs {expect}");
        assert!(grown > 0.95 * MSS as f64 && grown < MSS as f64);
        assert_eq!(l.queuing_delay(), Some(0));
    }

    #[test]
    fn at_target_no_change() {
        let (mut l, mut d) = ledbat_at(20);
        d.prime(&mut l, BASE + MAX_TARGET);
        let start = l.cwnd_fp;
        d.round(&mut l, BASE + MAX_TARGET);
        assert_eq!(l.cwnd_fp, start);
        assert_eq!(l.queuing_delay(), Some(MAX_TARGET));
    }

    #[test]
    fn at_twice_target_loses_one_mss_per_rtt() {
        let (mut l, mut d) = ledbat_at(20);
        d.prime(&mut l, BASE + 2 * MAX_TARGET);
        let start = l.cwnd_fp;
        d.round(&mut l, BASE + 2 * MAX_TARGET);
        let lost = (start - l.cwnd_fp) as f64 / (1u64 << FP_SHIFT) as f64;
        // off_target = -1: -MSS*MSS/cwnd per ACK; 20 ACKs from 20000 lose ~1026 bytes.
        assert!(lost > MSS as f64 && lost < 1.05 * MSS as f64, "{lost}");
    }

    #[test]
    fn large_delay_decrease_is_floored_at_min_cwnd() {
        let (mut l, mut d) = ledbat_at(20);
        // off_target = -99: ~-99 MSS per RTT, capped by MIN_CWND.
        d.prime(&mut l, BASE + 100 * MAX_TARGET);
        d.round(&mut l, BASE + 100 * MAX_TARGET);
        assert_eq!(l.cwnd(), MIN_CWND * MSS);
        d.round(&mut l, BASE + 100 * MAX_TARGET);
        assert_eq!(l.cwnd(), MIN_CWND * MSS);
    }

    #[test]
    fn gain_scales_the_response() {
        let cfg = LedbatConfig {
            init_cwnd: 20,
            gain: 0.5,
            ..Default::default()
        };
        let mut l = Ledbat::new(MSS, AckCounting::Bytes, cfg);
        let mut d = Driver {
            now: 0,
            delivered: 0,
        };
        let a = d.ack(&l, BASE);
        l.on_ack(&a);
        // +0.5 * 1000 * 1000 / 20000 = 25 bytes.
        assert_eq!(l.cwnd_fp, (20_000 << FP_SHIFT) + (25 << FP_SHIFT));
    }

    #[test]
    fn allowed_increase_caps_at_flightsize_plus_one_mss() {
        let (mut l, mut d) = ledbat_at(20);
        // Application-limited: only 5 segments were in flight.
        let a = AckEvent {
            prior_in_flight: 5 * MSS,
            ..d.ack(&l, BASE)
        };
        l.on_ack(&a);
        assert_eq!(l.cwnd(), 6 * MSS);
    }

    #[test]
    fn base_delay_minima_roll_over_by_the_minute() {
        let mut h = BaseDelayHistory::new(BASE_HISTORY);
        assert_eq!(h.base(), None);
        let minute = BASE_INTERVAL;
        h.update(0, 50 * MS);
        h.update(10 * SECOND, 80 * MS);
        // Every 30 s of ACK time for 12 minutes, delay 80 ms.
        for half in 1..24u64 {
            let now = half * 30 * SECOND;
            h.update(now, 80 * MS);
            let expect = if now < 10 * minute { 50 * MS } else { 80 * MS };
            assert_eq!(h.base(), Some(expect), "at {} s", now / SECOND);
        }
        // A lower delay counts at once.
        h.update(12 * minute, 30 * MS);
        assert_eq!(h.base(), Some(30 * MS));
    }

    #[test]
    fn minutes_without_samples_do_not_roll() {
        // round_to_minute: only a sample in a new minute drops the oldest minimum.
        let mut h = BaseDelayHistory::new(BASE_HISTORY);
        h.update(0, 50 * MS);
        h.update(60 * BASE_INTERVAL, 90 * MS);
        assert_eq!(h.base(), Some(50 * MS));
    }

    #[test]
    fn current_filter_is_min_of_recent_samples() {
        let mut f = CurrentDelayFilter::new(4);
        assert_eq!(f.filter(0, 0), None);
        for (t, d) in [(1, 70), (2, 60), (3, 90), (4, 80)] {
            f.update(t * MS, d * MS);
        }
        assert_eq!(f.filter(4 * MS, 100 * MS), Some(60 * MS));
        f.update(5 * MS, 95 * MS);
        f.update(6 * MS, 85 * MS);
        // The window holds 90, 80, 95, 85.
        assert_eq!(f.filter(6 * MS, 100 * MS), Some(80 * MS));
        // Samples older than one RTT drop out; the newest always counts.
        assert_eq!(f.filter(6 * MS, 2 * MS), Some(80 * MS));
        assert_eq!(f.filter(6 * MS, MS), Some(85 * MS));
        assert_eq!(f.filter(500 * MS, 2 * MS), Some(85 * MS));
    }

    #[test]
    fn loss_halves_once_floored_at_min_cwnd() {
        let (mut l, _) = ledbat_at(20);
        l.on_congestion_event(&CongestionEvent::default());
        assert_eq!((l.cwnd(), l.ssthresh()), (10 * MSS, 10 * MSS));
        assert_eq!(l.phase(), Phase::Recovery);
        let (mut l, _) = ledbat_at(3);
        l.on_congestion_event(&CongestionEvent::default());
        assert_eq!(l.cwnd(), 2 * MSS);
    }

    #[test]
    fn timeout_sets_one_mss_then_min_cwnd_on_next_ack() {
        let (mut l, mut d) = ledbat_at(20);
        l.on_rto(0, 20 * MSS);
        assert_eq!(l.cwnd(), MSS);
        let a = d.ack(&l, BASE);
        l.on_ack(&a);
        assert_eq!(l.cwnd(), MIN_CWND * MSS);
    }

    #[test]
    fn optional_slow_start_until_queuing_delay_reaches_target() {
        let cfg = LedbatConfig {
            slow_start: true,
            ..Default::default()
        };
        let mut l = Ledbat::new(MSS, AckCounting::Bytes, cfg);
        let mut d = Driver {
            now: 0,
            delivered: 0,
        };
        assert_eq!(l.phase(), Phase::SlowStart);
        for r in 0..4 {
            assert_eq!(l.cwnd(), (2 * MSS) << r);
            d.round(&mut l, BASE);
        }
        assert_eq!(l.phase(), Phase::SlowStart);
        // The current filter needs four samples at the new delay before it sees TARGET.
        for i in 0..4 {
            let a = d.ack(&l, BASE + MAX_TARGET);
            l.on_ack(&a);
            assert_eq!(l.phase() == Phase::SlowStart, i < 3, "ack {i}");
        }
        assert_eq!(l.ssthresh(), 35 * MSS);
        assert_eq!(l.cwnd(), 35 * MSS);
    }

    #[test]
    fn registry_builds_ledbat_with_rfc_limits() {
        use crate::params::ParamValue::{Bool, Number, Text};
        let crate::Controller::Ledbat(l) =
            crate::registry::build_for_test("ledbat", MSS, &[]).unwrap()
        else {
            panic!("not ledbat");
        };
        assert_eq!(*l.config(), LedbatConfig::default());
        assert_eq!(l.cwnd(), INIT_CWND * MSS);
        let err =
            crate::registry::build_for_test("ledbat", MSS, &[("target", Number(0.2))]).unwrap_err();
        assert!(err.0.contains("'target'") && err.0.contains("0.1"), "{err}");
        assert!(crate::registry::build_for_test("ledbat", MSS, &[("gain", Number(2.0))]).is_err());
        assert!(
            crate::registry::build_for_test("ledbat", MSS, &[("current_filter", Number(2.5))])
                .is_err()
        );
        assert!(crate::registry::build_for_test(
            "ledbat",
            MSS,
            &[("slow_start", Text("maybe".into()))]
        )
        .is_err());
        let crate::Controller::Ledbat(l) = crate::registry::build_for_test(
            "ledbat",
            MSS,
            &[
                ("slow_start", Bool(true)),
                ("init_cwnd", Text("flow".into())),
                ("target", Number(0.025)),
            ],
        )
        .unwrap() else {
            panic!("not ledbat");
        };
        assert_eq!(l.cwnd(), 10 * MSS);
        assert_eq!(l.phase(), Phase::SlowStart);
        assert_eq!(l.config().target, 25 * MS);
        assert!(crate::registry::build_for_test(
            "ledbat",
            MSS,
            &[("init_cwnd", Text("lots".into()))]
        )
        .is_err());
    }

    proptest! {
        #[test]
        fn cwnd_stays_sane(
            slow_start in any::<bool>(),
            offset in 0u64..(1 << 40),
            events in prop::collection::vec(
                (0u8..10, 1u64..64_000, 0u64..5_000, 0u64..200_000, any::<bool>(), any::<bool>()),
                1..400,
            ),
        ) {
            let cfg = LedbatConfig { slow_start, ..Default::default() };
            let mut l = Ledbat::new(MSS, AckCounting::Bytes, cfg);
            let mut now = 0;
            let mut rto_seen = false;
            for (kind, bytes, owd_ms, flight, limited, recovery) in events {
                now += owd_ms * 100_000 + 1;
                match kind {
                    0 => l.on_congestion_event(&CongestionEvent::default()),
                    1 => l.on_recovery_exit(now),
                    2 => { l.on_rto(now, flight); rto_seen = true; }
                    _ => {
                        l.on_ack(&AckEvent {
                            now,
                            bytes_acked: bytes,
                            mss: MSS,
                            srtt: owd_ms * MS,
                            one_way_delay: (kind != 3).then_some(offset + owd_ms * MS),
                            prior_in_flight: flight,
                            cwnd_limited: limited,
                            in_recovery: recovery,
                            ..Default::default()
                        });
                    }
                }
                prop_assert!(l.cwnd() >= MSS);
                prop_assert!(l.cwnd() < u64::MAX >> FP_SHIFT);
                // Only a timeout (1 MSS, RFC 6817 §2.4.2) goes below MIN_CWND.
                if !rto_seen {
                    prop_assert!(l.cwnd() >= MIN_CWND * MSS, "{}", l.cwnd());
                }
            }
        }
    }
}
