//! uTP congestion control (BEP 29) as libtorrent implements it: `utp_socket_impl::do_ledbat` and `experienced_loss` in src/utp_stream.cpp, `timestamp_history`.
//!
//! One-way delay samples are kept relative to a base: the lowest sample of the last 20 minutes
//! (`timestamp_history`, stepped once a minute when it has more than 120 samples). The delay used
//! is the minimum of the last 3 queuing-delay samples, clamped to this ACK's RTT. Per ACK:
//! `cwnd += gain * (acked / in_flight) * (target - delay) / target`, so a window of ACKs moves cwnd
//! by at most `gain` bytes per RTT (`utp_gain_factor`, 3000 bytes) and not at all unless the
//! sender filled the window (`in_flight + MSS > cwnd`). Slow start adds the acked bytes (or the
//! linear gain if larger) and ends when the delay reaches the target (`ssthres = cwnd / 2`, cwnd
//! kept), on loss, or when it would pass `ssthres`. Loss multiplies cwnd by `utp_loss_multiplier`
//! (50%), at most once per 100 ms (`utp_cwnd_reduce_timer`) and once per recovery episode; a
//! timeout sets cwnd to one packet and slow-starts again.
//!
//! Deviations: libtorrent lets cwnd fall to 0 and relies on its timeout to restore one MTU; here
//! cwnd is floored at `min_cwnd` segments (default 1). libtorrent has no loss-recovery state; here
//! the window is left alone while the transport recovers (delay samples are still recorded) and
//! `ssthresh()` reports the post-loss cwnd during recovery, the target the transport's PRR steers to.

use crate::ledbat::{init_cwnd, seconds, INIT_CWND_ACCEPTS};
use crate::params::{Accepts, ParamInfo, Params};
use crate::params::{CcError, CommonParams};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SECOND};

/// libtorrent `settings_pack::utp_target_delay` default: 100 ms.
pub const DEFAULT_TARGET: Nanos = 100 * 1_000_000;
/// libtorrent `settings_pack::utp_gain_factor` default: at most 3000 bytes of cwnd change per RTT.
pub const DEFAULT_GAIN: u64 = 3000;
/// libtorrent `settings_pack::utp_loss_multiplier` default: cwnd * 50 / 100 on loss.
pub const DEFAULT_LOSS_MULTIPLIER: u64 = 50;
/// libtorrent `settings_pack::utp_cwnd_reduce_timer` default: "don't reduce cwnd more than once
/// every 100ms".
pub const CWND_REDUCE_TIMER: Nanos = 100 * 1_000_000;
/// libtorrent `timestamp_history::history_size`: "the lowest timestamps we've seen in the last 20
/// minutes".
pub const HISTORY_SIZE: usize = 20;
/// libtorrent `timestamp_history::add_sample`: "don't step base delay history unless we have at
/// least 120 samples".
pub const HISTORY_STEP_MIN_SAMPLES: u32 = 120;
/// libtorrent `incoming_packet`: the history steps when "receive_time - m_last_history_step >
/// minutes(1)".
pub const HISTORY_STEP: Nanos = 60 * SECOND;
/// libtorrent `incoming_packet`: "only use the minimum from the last 3 delay measurements".
pub const DELAY_SAMPLES: usize = 3;

/// 16.16 fixed point, as libtorrent's `m_cwnd`.
const FP_SHIFT: u32 = 16;

/// libtorrent `timestamp_history`: per-minute minima of the delay samples over 20 minutes.
#[derive(Clone, Debug)]
pub struct TimestampHistory {
    history: [Nanos; HISTORY_SIZE],
    base: Nanos,
    index: usize,
    /// Samples since the last step; `None` before the first sample.
    num_samples: Option<u32>,
}

impl Default for TimestampHistory {
    fn default() -> Self {
        Self {
            history: [0; HISTORY_SIZE],
            base: 0,
            index: 0,
            num_samples: None,
        }
    }
}

impl TimestampHistory {
    /// Record `sample`; `step` when a minute has passed since the last step. Returns the sample
    /// minus the base (after this sample updated it).
    pub fn add_sample(&mut self, sample: Nanos, step: bool) -> Nanos {
        let num = match self.num_samples {
            None => {
                self.history = [sample; HISTORY_SIZE];
                self.base = sample;
                0
            }
            Some(n) => n,
        };
        let num = (num + 1).min(0xfffe);
        self.num_samples = Some(num);
        if sample < self.base {
            self.base = sample;
            self.history[self.index] = sample;
        } else if sample < self.history[self.index] {
            self.history[self.index] = sample;
        }
        let delay = sample - self.base;
        if step && num > HISTORY_STEP_MIN_SAMPLES {
            self.num_samples = Some(0);
            self.index = (self.index + 1) % HISTORY_SIZE;
            self.history[self.index] = sample;
            self.base = self.history.iter().copied().min().unwrap_or(sample);
        }
        delay
    }

    /// The base delay, the lowest sample kept; `None` before the first sample.
    pub fn base(&self) -> Option<Nanos> {
        self.num_samples.map(|_| self.base)
    }
}

/// uTP's settings, from the `utp` parameters (libtorrent's settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtpConfig {
    /// Target queuing delay (libtorrent `utp_target_delay`).
    pub target: Nanos,
    /// Maximum cwnd change per RTT, bytes.
    pub gain: u64,
    /// Percent of cwnd kept on loss.
    pub loss_multiplier: u64,
    /// Floor of the window, segments.
    pub min_cwnd: u64,
    /// Initial window, segments (libtorrent starts at one Ethernet MTU).
    pub init_cwnd: u64,
}

impl Default for UtpConfig {
    fn default() -> Self {
        Self {
            target: DEFAULT_TARGET,
            gain: DEFAULT_GAIN,
            loss_multiplier: DEFAULT_LOSS_MULTIPLIER,
            min_cwnd: 1,
            init_cwnd: 1,
        }
    }
}

/// uTP: libtorrent's LEDBAT window, its slow start and loss response.
#[derive(Clone, Debug)]
pub struct Utp {
    cfg: UtpConfig,
    mss: u64,
    /// Window in bytes << 16 (libtorrent `m_cwnd`).
    cwnd_fp: u64,
    /// libtorrent `m_ssthres`, bytes; 0 while unset.
    ssthres: u64,
    slow_start: bool,
    phase: Phase,
    history: TimestampHistory,
    last_history_step: Option<Nanos>,
    /// libtorrent `m_delay_sample_hist`.
    delay_samples: [Nanos; DELAY_SAMPLES],
    delay_index: usize,
    /// libtorrent `m_next_loss`.
    next_loss: Option<Nanos>,
    last_delay: Option<Nanos>,
}

impl Utp {
    /// A controller in slow start at `cfg.init_cwnd` segments of `mss` bytes (at least
    /// `cfg.min_cwnd`).
    pub fn new(mss: u64, cfg: UtpConfig) -> Self {
        let cwnd = cfg.init_cwnd.max(cfg.min_cwnd).max(1) * mss;
        Self {
            cfg,
            mss,
            cwnd_fp: cwnd << FP_SHIFT,
            ssthres: 0,
            slow_start: true,
            phase: Phase::SlowStart,
            history: TimestampHistory::default(),
            last_history_step: None,
            delay_samples: [Nanos::MAX; DELAY_SAMPLES],
            delay_index: 0,
            next_loss: None,
            last_delay: None,
        }
    }

    /// The settings it was built with.
    pub fn config(&self) -> &UtpConfig {
        &self.cfg
    }

    /// The queuing delay `do_ledbat` last used.
    pub fn last_delay(&self) -> Option<Nanos> {
        self.last_delay
    }

    /// The base delay of the timestamp history, once there is a sample.
    pub fn base_delay(&self) -> Option<Nanos> {
        self.history.base()
    }

    fn min_cwnd_fp(&self) -> u64 {
        (self.cfg.min_cwnd.max(1) * self.mss) << FP_SHIFT
    }

    fn leave_slow_start(&mut self) {
        self.slow_start = false;
        self.phase = Phase::CongestionAvoidance;
    }

    /// libtorrent `utp_socket_impl::do_ledbat`.
    fn do_ledbat(&mut self, acked: u64, delay: Nanos, in_flight: u64) {
        let target = self.cfg.target.max(1);
        let cwnd = self.cwnd_fp >> FP_SHIFT;
        // "true if the upper layer is pushing enough data down the socket to be limited by the
        // cwnd": m_bytes_in_flight + acked_bytes + m_mtu > cwnd.
        let saturated = in_flight.saturating_add(self.mss) > cwnd;
        if delay >= target && self.slow_start {
            self.ssthres = (cwnd / 2).max(1);
            self.leave_slow_start();
        }
        // window_factor * delay_factor * gain, exactly (libtorrent truncates each 16.16 factor).
        let acked = acked.min(1 << 40) as i128;
        let off_target = (target as i128 - delay.min(1 << 40) as i128).max(-(1 << 40));
        let linear = acked * off_target * self.cfg.gain as i128 * (1 << FP_SHIFT)
            / (in_flight.max(1) as i128 * target as i128);
        let gain = if !saturated {
            0
        } else if self.slow_start {
            let exponential = acked << FP_SHIFT;
            if self.ssthres != 0
                && ((self.cwnd_fp as i128 + exponential) >> FP_SHIFT) > self.ssthres as i128
            {
                self.leave_slow_start();
                linear
            } else {
                exponential.max(linear)
            }
        } else {
            linear
        };
        let cwnd_fp = (self.cwnd_fp as i128 + gain).clamp(0, (u64::MAX >> 2) as i128) as u64;
        self.cwnd_fp = cwnd_fp.max(self.min_cwnd_fp());
    }
}

impl CongestionController for Utp {
    fn on_ack(&mut self, ack: &AckEvent) {
        let Some(owd) = ack.one_way_delay else {
            return;
        };
        let step = match self.last_history_step {
            None => {
                self.last_history_step = Some(ack.now);
                false
            }
            Some(t) if ack.now.saturating_sub(t) > HISTORY_STEP => {
                self.last_history_step = Some(ack.now);
                true
            }
            Some(_) => false,
        };
        let queuing = self.history.add_sample(owd, step);
        self.delay_samples[self.delay_index] = queuing;
        self.delay_index = (self.delay_index + 1) % DELAY_SAMPLES;
        if ack.bytes_acked == 0 || ack.prior_in_flight == 0 {
            return;
        }
        let mut delay = self.delay_samples.iter().copied().min().unwrap_or(queuing);
        // "it's impossible for delay to be more than the RTT, so make sure to clamp it".
        if let Some(rtt) = ack.rtt {
            delay = delay.min(rtt);
        }
        self.last_delay = Some(delay);
        if ack.in_recovery {
            return;
        }
        self.do_ledbat(ack.bytes_acked, delay, ack.prior_in_flight);
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.phase = Phase::Recovery;
        // libtorrent `experienced_loss`: "don't reduce cwnd more than once every 100ms".
        if self.next_loss.is_some_and(|t| t >= event.now) {
            return;
        }
        self.next_loss = Some(event.now.saturating_add(CWND_REDUCE_TIMER));
        let reduced = (self.cwnd_fp as u128 * self.cfg.loss_multiplier as u128 / 100) as u64;
        self.cwnd_fp = reduced.max(self.mss << FP_SHIFT).max(self.min_cwnd_fp());
        // "we set ssthres to the window size _after_ reducing it".
        if self.slow_start {
            self.ssthres = self.cwnd_fp >> FP_SHIFT;
            self.slow_start = false;
        }
    }

    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.phase = if self.slow_start {
            Phase::RtoRecovery
        } else {
            Phase::CongestionAvoidance
        };
    }

    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        // libtorrent `tick` on timeout: cwnd = one MTU, "enter slow start mode".
        self.cwnd_fp = (self.mss << FP_SHIFT).max(self.min_cwnd_fp());
        self.slow_start = true;
        self.phase = Phase::RtoRecovery;
    }

    fn cwnd(&self) -> u64 {
        (self.cwnd_fp >> FP_SHIFT).max(self.mss)
    }

    fn ssthresh(&self) -> u64 {
        if self.phase == Phase::Recovery {
            self.cwnd()
        } else if self.ssthres == 0 {
            u64::MAX
        } else {
            self.ssthres
        }
    }

    fn phase(&self) -> Phase {
        self.phase
    }
}

/// `utp` parameters.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "target",
        doc: "target queuing delay, seconds (libtorrent utp_target_delay)",
        default: "0.1",
        accepts: Accepts::number(1e-6, 10.0),
    },
    ParamInfo {
        name: "gain",
        doc: "largest cwnd change per RTT, bytes (libtorrent utp_gain_factor)",
        default: "3000",
        accepts: Accepts::integer(1, 1_000_000),
    },
    ParamInfo {
        name: "loss_multiplier",
        doc: "percent of cwnd kept on loss (libtorrent utp_loss_multiplier)",
        default: "50",
        accepts: Accepts::integer(1, 100),
    },
    ParamInfo {
        name: "min_cwnd",
        doc: "floor of the window, segments (libtorrent lets it reach 0 and waits for a timeout)",
        default: "1",
        accepts: Accepts::integer(1, 100),
    },
    ParamInfo {
        name: "init_cwnd",
        doc: "initial window in segments (libtorrent: one Ethernet MTU), or flow for the flow's \
              initcwnd",
        default: "1",
        accepts: INIT_CWND_ACCEPTS,
    },
];

/// `utp` from validated parameters.
pub fn from_params(params: &Params, common: &CommonParams) -> Result<Utp, CcError> {
    let cfg = UtpConfig {
        target: seconds(params.number("target")?),
        gain: params.integer("gain")?,
        loss_multiplier: params.integer("loss_multiplier")?,
        min_cwnd: params.integer("min_cwnd")?,
        init_cwnd: init_cwnd(params, common)?,
    };
    Ok(Utp::new(common.mss, cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;
    const BASE: Nanos = 30 * MS;
    const TARGET: Nanos = DEFAULT_TARGET;

    struct Driver {
        now: Nanos,
    }

    impl Driver {
        /// One ACK of one MSS from a sender with its window full.
        fn ack(&mut self, u: &Utp, owd: Nanos) -> AckEvent {
            self.now += MS;
            AckEvent {
                now: self.now,
                bytes_acked: MSS,
                mss: MSS,
                rtt: Some(500 * MS),
                one_way_delay: Some(owd),
                prior_in_flight: u.cwnd(),
                bytes_in_flight: u.cwnd() - MSS,
                cwnd_limited: true,
                ..Default::default()
            }
        }

        fn round(&mut self, u: &mut Utp, owd: Nanos) {
            for _ in 0..u.cwnd() / MSS {
                let a = self.ack(u, owd);
                u.on_ack(&a);
            }
        }

        /// Three delay samples at `owd` without changing the window (ACKs that deliver nothing).
        fn prime(&mut self, u: &mut Utp, owd: Nanos) {
            for _ in 0..DELAY_SAMPLES {
                let a = AckEvent {
                    bytes_acked: 0,
                    ..self.ack(u, owd)
                };
                u.on_ack(&a);
            }
        }
    }

    fn utp_with(cfg: UtpConfig) -> (Utp, Driver) {
        let mut u = Utp::new(MSS, cfg);
        let mut d = Driver { now: 0 };
        d.prime(&mut u, BASE);
        (u, d)
    }

    fn utp(init: u64) -> (Utp, Driver) {
        utp_with(UtpConfig {
            init_cwnd: init,
            ..Default::default()
        })
    }

    /// A uTP flow in congestion avoidance at `segments`.
    fn in_avoidance(segments: u64, gain: u64) -> (Utp, Driver) {
        let (mut u, d) = utp_with(UtpConfig {
            init_cwnd: segments * 2,
            gain,
            ..Default::default()
        });
        u.on_congestion_event(&CongestionEvent {
            now: 1,
            mss: MSS,
            ..Default::default()
        });
        u.on_recovery_exit(2);
        assert_eq!(u.cwnd(), segments * MSS);
        assert_eq!(u.phase(), Phase::CongestionAvoidance);
        (u, d)
    }

    #[test]
    fn libtorrent_defaults() {
        let c = UtpConfig::default();
        assert_eq!((c.target, c.gain, c.loss_multiplier), (100 * MS, 3000, 50));
        assert_eq!(
            (HISTORY_SIZE, DELAY_SAMPLES, CWND_REDUCE_TIMER),
            (20, 3, 100 * MS)
        );
        let u = Utp::new(MSS, c);
        assert_eq!(u.cwnd(), MSS);
        assert_eq!(u.ssthresh(), u64::MAX);
        assert_eq!(u.phase(), Phase::SlowStart);
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let (mut u, mut d) = utp(10);
        for r in 0..4 {
            assert_eq!(u.cwnd(), (10 * MSS) << r);
            d.round(&mut u, BASE);
        }
        assert_eq!(u.phase(), Phase::SlowStart);
    }

    #[test]
    fn tiny_windows_take_the_linear_gain_when_larger() {
        // One packet in flight: linear gain = 1 * 1 * 3000 bytes > 1000 acked.
        let (mut u, mut d) = utp(1);
        let a = d.ack(&u, BASE);
        u.on_ack(&a);
        assert_eq!(u.cwnd(), 4 * MSS);
    }

    #[test]
    fn leaves_slow_start_exactly_when_delay_reaches_target() {
        let (mut u, mut d) = utp(10);
        d.round(&mut u, BASE);
        // Just below the target (all of the last three samples): still slow start.
        d.prime(&mut u, BASE + TARGET - 1);
        let a = d.ack(&u, BASE + TARGET - 1);
        u.on_ack(&a);
        assert_eq!(u.phase(), Phase::SlowStart);
        assert_eq!(u.cwnd(), 21 * MSS);
        assert_eq!(u.last_delay(), Some(TARGET - 1));
        // At the target: libtorrent's `delay >= target_delay` leaves slow start, ssthres =
        // cwnd / 2, cwnd kept (the linear gain at zero off-target is 0).
        d.prime(&mut u, BASE + TARGET);
        let a = d.ack(&u, BASE + TARGET);
        u.on_ack(&a);
        assert_eq!(u.phase(), Phase::CongestionAvoidance);
        assert_eq!(u.cwnd(), 21 * MSS);
        assert_eq!(u.ssthresh(), 21 * MSS / 2);
    }

    #[test]
    fn delay_is_min_of_last_three_samples_clamped_to_rtt() {
        let (mut u, mut d) = utp(10);
        d.prime(&mut u, BASE + 50 * MS);
        let a = d.ack(&u, BASE + 300 * MS);
        u.on_ack(&a);
        assert_eq!(u.last_delay(), Some(50 * MS));
        d.prime(&mut u, BASE + 300 * MS);
        let a = AckEvent {
            rtt: Some(120 * MS),
            ..d.ack(&u, BASE + 300 * MS)
        };
        u.on_ack(&a);
        assert_eq!(u.last_delay(), Some(120 * MS));
    }

    #[test]
    fn avoidance_moves_gain_times_off_target_per_rtt() {
        // With a constant window in flight, one window of ACKs moves cwnd by exactly
        // gain * (target - delay) / target. Gain 900 < MSS keeps the window full throughout.
        for (delay, change) in [
            (0, 900i64),
            (TARGET / 2, 450),
            (TARGET, 0),
            (2 * TARGET, -900),
        ] {
            let (mut u, mut d) = in_avoidance(40, 900);
            d.prime(&mut u, BASE + delay);
            let before = u.cwnd_fp as i64;
            for _ in 0..40 {
                let a = AckEvent {
                    prior_in_flight: 40 * MSS,
                    ..d.ack(&u, BASE + delay)
                };
                u.on_ack(&a);
            }
            let moved = (u.cwnd_fp as i64 - before) as f64 / (1 << FP_SHIFT) as f64;
            assert!(
                (moved - change as f64).abs() < 0.01,
                "delay {delay}: moved {moved}, expected {change}"
            );
        }
    }

    #[test]
    fn avoidance_increase_is_capped_at_gain_per_rtt() {
        // libtorrent's 3000 bytes: a full window of ACKs at zero queuing delay adds just under
        // 3000 bytes (in flight grows with the window).
        let (mut u, mut d) = in_avoidance(40, DEFAULT_GAIN);
        let before = u.cwnd();
        d.round(&mut u, BASE);
        let grown = u.cwnd() - before;
        assert!(grown > 2850 && grown <= 3000, "{grown}");
    }

    #[test]
    fn no_change_unless_the_window_is_full() {
        let (mut u, mut d) = in_avoidance(40, DEFAULT_GAIN);
        let before = u.cwnd_fp;
        for _ in 0..40 {
            let a = AckEvent {
                prior_in_flight: 20 * MSS,
                ..d.ack(&u, BASE)
            };
            u.on_ack(&a);
        }
        assert_eq!(u.cwnd_fp, before);
    }

    #[test]
    fn loss_halves_at_most_once_per_100ms() {
        let (mut u, mut d) = utp(10);
        d.round(&mut u, BASE);
        assert_eq!(u.cwnd(), 20 * MSS);
        let now = d.now;
        u.on_congestion_event(&CongestionEvent {
            now,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(u.cwnd(), 10 * MSS);
        assert_eq!(u.phase(), Phase::Recovery);
        assert_eq!(
            u.ssthresh(),
            10 * MSS,
            "ssthres = cwnd after the cut, in slow start"
        );
        u.on_recovery_exit(now + 10 * MS);
        assert_eq!(u.phase(), Phase::CongestionAvoidance);
        assert_eq!(u.ssthresh(), 10 * MSS);
        // Within 100 ms: no second cut.
        u.on_congestion_event(&CongestionEvent {
            now: now + CWND_REDUCE_TIMER,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(u.cwnd(), 10 * MSS);
        assert_eq!(
            u.ssthresh(),
            10 * MSS,
            "recovery target is the uncut window"
        );
        u.on_congestion_event(&CongestionEvent {
            now: now + CWND_REDUCE_TIMER + 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(u.cwnd(), 5 * MSS);
    }

    #[test]
    fn loss_never_goes_below_one_packet() {
        let (mut u, _) = utp(1);
        u.on_congestion_event(&CongestionEvent {
            now: 1,
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(u.cwnd(), MSS);
    }

    #[test]
    fn timeout_slow_starts_to_ssthres() {
        let (mut u, mut d) = utp(10);
        d.round(&mut u, BASE);
        u.on_congestion_event(&CongestionEvent {
            now: d.now,
            mss: MSS,
            ..Default::default()
        });
        u.on_recovery_exit(d.now);
        assert_eq!(u.ssthresh(), 10 * MSS);
        u.on_rto(d.now, 10 * MSS);
        assert_eq!(u.cwnd(), MSS);
        assert_eq!(u.phase(), Phase::RtoRecovery);
        // Linear gain dominates at one packet (+3000), then +acked per ACK, until cwnd + acked
        // would pass ssthres: 1 -> 4 -> 5 ... -> 10 segments, then the linear gain (+300).
        let mut acks = 0;
        while u.phase() == Phase::RtoRecovery {
            let a = d.ack(&u, BASE);
            u.on_ack(&a);
            acks += 1;
        }
        assert_eq!(acks, 8);
        assert_eq!(u.phase(), Phase::CongestionAvoidance);
        assert_eq!(u.cwnd(), 10 * MSS + 300);
    }

    #[test]
    fn base_delay_history_steps_each_minute_with_enough_samples() {
        let mut h = TimestampHistory::default();
        assert_eq!(h.base(), None);
        assert_eq!(h.add_sample(50 * MS, false), 0);
        assert_eq!(h.add_sample(80 * MS, false), 30 * MS);
        // A step needs more than 120 samples since the last one.
        assert_eq!(h.add_sample(80 * MS, true), 30 * MS);
        assert_eq!(h.base(), Some(50 * MS));
        // 20 one-minute steps of 80 ms samples push the 50 ms minimum out.
        for minute in 1..=HISTORY_SIZE {
            for _ in 0..HISTORY_STEP_MIN_SAMPLES {
                h.add_sample(80 * MS, false);
            }
            h.add_sample(80 * MS, true);
            let expect = if minute < HISTORY_SIZE {
                50 * MS
            } else {
                80 * MS
            };
            assert_eq!(h.base(), Some(expect), "minute {minute}");
        }
        // A lower sample lowers the base at once.
        assert_eq!(h.add_sample(20 * MS, false), 0);
        assert_eq!(h.base(), Some(20 * MS));
    }

    #[test]
    fn history_steps_after_a_minute_of_ack_time() {
        let cfg = UtpConfig::default();
        let mut u = Utp::new(MSS, cfg);
        let mut now = 0;
        let ack = |u: &mut Utp, now: Nanos, owd: Nanos| {
            u.on_ack(&AckEvent {
                now,
                bytes_acked: 0,
                mss: MSS,
                one_way_delay: Some(owd),
                ..Default::default()
            })
        };
        ack(&mut u, now, 50 * MS);
        // 21 minutes of 80 ms samples every 100 ms.
        while now < 21 * HISTORY_STEP + SECOND {
            now += 100 * MS;
            ack(&mut u, now, 80 * MS);
        }
        assert_eq!(u.base_delay(), Some(80 * MS));
    }

    #[test]
    fn registry_builds_utp() {
        use crate::params::ParamValue::{Number, Text};
        let crate::Controller::Utp(u) = crate::registry::build_for_test("utp", MSS, &[]).unwrap()
        else {
            panic!("not utp");
        };
        assert_eq!(*u.config(), UtpConfig::default());
        let crate::Controller::Utp(u) = crate::registry::build_for_test(
            "utp",
            MSS,
            &[
                ("gain", Number(1500.0)),
                ("init_cwnd", Text("flow".into())),
                ("loss_multiplier", Number(70.0)),
            ],
        )
        .unwrap() else {
            panic!("not utp");
        };
        assert_eq!(
            (u.config().gain, u.config().loss_multiplier, u.cwnd()),
            (1500, 70, 10 * MSS)
        );
        let err =
            crate::registry::build_for_test("utp", MSS, &[("gain", Number(2.5))]).unwrap_err();
        assert!(
            err.0.contains("'gain'") && err.0.contains("integer"),
            "{err}"
        );
        assert!(
            crate::registry::build_for_test("utp", MSS, &[("loss_multiplier", Number(0.0))])
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn cwnd_stays_sane(
            offset in 0u64..(1 << 40),
            min_cwnd in 1u64..4,
            events in prop::collection::vec(
                (0u8..10, 0u64..64_000, 0u64..5_000, 0u64..200_000, any::<bool>(), any::<bool>()),
                1..400,
            ),
        ) {
            let cfg = UtpConfig { min_cwnd, ..Default::default() };
            let mut u = Utp::new(MSS, cfg);
            let mut now = 0;
            for (kind, bytes, owd_ms, flight, has_rtt, recovery) in events {
                now += owd_ms * 100_000 + 1;
                match kind {
                    0 => u.on_congestion_event(&CongestionEvent { now, mss: MSS, ..Default::default() }),
                    1 => u.on_recovery_exit(now),
                    2 => u.on_rto(now, flight),
                    _ => u.on_ack(&AckEvent {
                        now,
                        bytes_acked: bytes,
                        mss: MSS,
                        rtt: has_rtt.then_some(owd_ms * MS / 2),
                        one_way_delay: (kind != 3).then_some(offset + owd_ms * MS),
                        prior_in_flight: flight,
                        in_recovery: recovery,
                        ..Default::default()
                    }),
                }
                prop_assert!(u.cwnd() >= min_cwnd * MSS);
                prop_assert!(u.cwnd() < u64::MAX >> FP_SHIFT);
                prop_assert!(u.ssthresh() >= MSS / 2);
            }
        }
    }
}
