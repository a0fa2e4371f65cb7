//! BBR version 1 as Linux ships it in `net/ipv4/tcp_bbr.c` (Cardwell et al. 2016/2017, with the
//! extra-ACKed aggregation allowance of Linux 4.19+): startup at 2.885 for pacing and cwnd, loss
//! ignored by the model, an eight-phase ProbeBW gain cycle and a 4-packet ProbeRTT.
//!
//! Windows and budgets are counted in whole segments as Linux counts packets, then held in bytes.
//! Approximations, because the transport hands over aggregate events rather than per-packet state:
//! - `rs->losses` (packets marked lost by this ACK): the fall in bytes in flight across the ACK
//!   that its delivered bytes do not explain (`prior_in_flight - bytes_in_flight - acked`); the
//!   transport marks losses before it calls the controller and retransmits after.
//! - `bbr_packets_in_net_at_edt`: the pacer's departure time is taken as now, so in flight plus
//!   one TSO goal when the gain is above 1.
//! - `rs->is_ack_delayed` is not known, so an expired min-RTT filter takes any sample.
//! - Left out: the long-term bandwidth ("policer") sampling `bbr_lt_bw_sampling` (`lt_use_bw`
//!   never set), restart from idle (`bbr_cwnd_event` CA_EVENT_TX_START), undo of a spurious
//!   recovery (`bbr_undo_cwnd`), and `sk_max_pacing_rate`.

use crate::mul_div;
use crate::params::{CcError, CommonParams};
use crate::params::{ParamInfo, Params};
use crate::rng::SplitMix64;
use crate::round::RoundCounter;
use crate::windowed_filter::MaxFilter;
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, RateSample, SECOND};

/// No declared parameters: the constants are tcp_bbr.c's.
pub const PARAMS: &[ParamInfo] = &[];

const MS: Nanos = 1_000_000;

/// `BBR_SCALE` 8, `BBR_UNIT` = 256: gains are fractions of 256.
pub const BBR_UNIT: u64 = 1 << 8;
/// `bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1` (2/ln 2, rounded up): startup pacing and cwnd.
pub const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain = BBR_UNIT * 1000 / 2885`: drain pacing.
pub const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain = BBR_UNIT * 2`: ProbeBW cwnd gain.
pub const CWND_GAIN: u64 = BBR_UNIT * 2;
/// `CYCLE_LEN` = 8 phases of `bbr_pacing_gain`.
pub const CYCLE_LEN: usize = 8;
/// `bbr_pacing_gain[]`: probe at 5/4, drain at 3/4, cruise at 1 for six phases.
pub const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand = 7`: ProbeBW starts at a random phase other than the 3/4 one.
pub const CYCLE_RAND: u64 = 7;
/// `bbr_bw_rtts = CYCLE_LEN + 2`: max-bandwidth filter window in rounds.
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// `bbr_min_rtt_win_sec = 10`: min-RTT filter window, and ProbeRTT once it expires.
pub const MIN_RTT_WIN: Nanos = 10 * SECOND;
/// `bbr_probe_rtt_mode_ms = 200`.
pub const PROBE_RTT_MODE: Nanos = 200 * MS;
/// `bbr_cwnd_min_target = 4` packets.
pub const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh = BBR_UNIT * 5 / 4`: bandwidth must grow 25% per round...
pub const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt = 3`: ...or after three rounds without it the pipe is full.
pub const FULL_BW_CNT: u32 = 3;
/// `bbr_pacing_margin_percent = 1`: pace 1% below the estimate.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_min_tso_rate = 1200000` bit/s: below it the TSO goal is one segment, else two.
pub const MIN_TSO_RATE: u64 = 1_200_000;
/// `sk_pacing_shift = 10`: the TSO goal is about 1 ms (1/1024 s) of pacing.
pub const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` = 64 KiB: largest TSO burst (less headers in Linux).
pub const GSO_MAX_SIZE: u64 = 64 * 1024;
/// `bbr_tso_segs_goal`: at most 0x7F segments.
pub const TSO_SEGS_MAX: u64 = 0x7f;
/// `TCP_INIT_CWND = 10`: the BDP before any RTT sample, and startup grows cwnd freely until
/// this many packets are delivered.
pub const TCP_INIT_CWND: u64 = 10;
/// `bbr_extra_acked_gain = BBR_UNIT`.
pub const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts = 5`: each of the two extra-ACKed slots covers 5 rounds.
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh = 1U << 20` packets.
pub const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
/// `bbr_extra_acked_max_us = 100 * 1000`: the allowance is at most 100 ms of bandwidth.
pub const EXTRA_ACKED_MAX: Nanos = 100 * MS;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `BBR_STARTUP`: ramping up at `bbr_high_gain` (2.885) until the bandwidth stops growing.
    Startup,
    /// `BBR_DRAIN`: draining the queue Startup built.
    Drain,
    /// `BBR_PROBE_BW`: cycling the pacing gain through 8 phases around the estimated bandwidth.
    ProbeBw,
    /// `BBR_PROBE_RTT`: cwnd cut to 4 packets to refresh the min RTT.
    ProbeRtt,
}

/// The part of `icsk_ca_state` BBR reads (`bbr->prev_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum CaState {
    Open,
    Recovery,
    Loss,
}

/// `struct bbr` (without the long-term sampling fields).
#[derive(Clone, Debug)]
pub struct Bbr1 {
    mss: u64,
    mode: Mode,
    pacing_gain: u64,
    cwnd_gain: u64,
    cwnd: u64,
    pacing_rate: u64,
    has_seen_rtt: bool,
    rng: SplitMix64,
    now: Nanos,
    started: bool,
    delivered: u64,

    /// `bbr->bw`: windowed max of delivery rate over `bbr_bw_rtts` rounds, bytes per second.
    bw: MaxFilter,
    min_rtt: Nanos,
    min_rtt_stamp: Nanos,

    /// `rtt_cnt`, `next_rtt_delivered`, `round_start`.
    round: RoundCounter,

    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,

    cycle_idx: usize,
    cycle_stamp: Nanos,

    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// `tp->app_limited` set in ProbeRTT: samples of data sent before this mark are app limited.
    app_limited_until: u64,

    prior_cwnd: u64,
    prev_ca_state: CaState,
    ca_state: CaState,
    packet_conservation: bool,
    /// Bytes marked lost by this ACK (`rs->losses`).
    losses: u64,

    ack_epoch_stamp: Nanos,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl Bbr1 {
    /// `bbr_init` with `initcwnd` segments of `mss` bytes.
    pub fn new(mss: u64, initcwnd: u64, seed: u64) -> Self {
        let mss = mss.max(1);
        let mut b = Self {
            mss,
            mode: Mode::Startup,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cwnd: initcwnd.max(1) * mss,
            pacing_rate: 0,
            has_seen_rtt: false,
            rng: SplitMix64::new(seed),
            now: 0,
            started: false,
            delivered: 0,
            bw: MaxFilter::new(BW_RTTS),
            min_rtt: u64::MAX,
            min_rtt_stamp: 0,
            round: RoundCounter::new(),
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_until: 0,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            ca_state: CaState::Open,
            packet_conservation: false,
            losses: 0,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        };
        b.init_pacing_rate_from_rtt(0);
        b
    }

    /// Current mode (`bbr->mode`).
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// Current gains in units of [`BBR_UNIT`].
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }
    /// Current cwnd gain in units of [`BBR_UNIT`].
    pub fn cwnd_gain(&self) -> u64 {
        self.cwnd_gain
    }
    /// ProbeBW gain-cycle phase (`bbr->cycle_idx`).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    /// `bbr_max_bw`, bytes per second.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }
    /// Min RTT estimate (`bbr->min_rtt_us`, in ns; `u64::MAX` before any sample).
    pub fn min_rtt(&self) -> Nanos {
        self.min_rtt
    }
    /// `bbr_full_bw_reached`: Startup found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Packet-timed rounds begun so far (`bbr->rtt_cnt`).
    pub fn round_count(&self) -> u64 {
        self.round.count()
    }

    /// `bbr_rate_bytes_per_sec`: bw × gain × (100 − margin)%.
    fn rate_with_gain(bw: u64, gain: u64) -> u64 {
        (bw as u128 * gain as u128 * (100 - PACING_MARGIN_PERCENT) as u128
            / (BBR_UNIT as u128 * 100))
            .min(u64::MAX as u128) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: cwnd / srtt (1 ms before any sample) at high gain.
    fn init_pacing_rate_from_rtt(&mut self, srtt: Nanos) {
        let rtt = if srtt > 0 {
            self.has_seen_rtt = true;
            srtt
        } else {
            MS
        };
        let bw = mul_div(self.cwnd, SECOND, rtt);
        self.pacing_rate = Self::rate_with_gain(bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: only upward until the pipe is full.
    fn set_pacing_rate(&mut self, srtt: Nanos) {
        let rate = Self::rate_with_gain(self.bw.get(), self.pacing_gain);
        if !self.has_seen_rtt && srtt > 0 {
            self.init_pacing_rate_from_rtt(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: about 1 ms of pacing in segments, 1 or 2 at least
    /// (`bbr_min_tso_segs`), within 64 KiB and 127 segments.
    pub fn tso_segs_goal(&self) -> u64 {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE / 8 {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_SIZE);
        (bytes / self.mss).max(min_segs).min(TSO_SEGS_MAX)
    }

    /// `bbr_bdp`: ⌈bw × min_rtt × gain⌉ in packets, `TCP_INIT_CWND` before any RTT sample.
    fn bdp_segs(&self, bw: u64, gain: u64) -> u64 {
        if self.min_rtt == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt as u128 * gain as u128;
        let unit = BBR_UNIT as u128 * SECOND as u128 * self.mss as u128;
        w.div_ceil(unit).min(u64::MAX as u128 / 2) as u64
    }

    /// `bbr_quantization_budget`: three TSO goals, rounded up to even, +2 in phase 0 of ProbeBW.
    fn quantization_budget(&self, segs: u64) -> u64 {
        let mut cwnd = segs.saturating_add(3 * self.tso_segs_goal());
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`, in bytes.
    fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp_segs(bw, gain))
            .saturating_mul(self.mss)
    }

    /// `bbr_packets_in_net_at_edt` with the next departure taken as now (module notes).
    fn in_net_at_edt(&self, in_flight: u64) -> u64 {
        if self.pacing_gain > BBR_UNIT {
            in_flight + self.tso_segs_goal() * self.mss
        } else {
            in_flight
        }
    }

    /// `bbr_extra_acked`: the larger of the two 5-round slots.
    fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd`, in bytes: only once the pipe is full, capped at 100 ms of bw.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = mul_div(self.bw.get(), EXTRA_ACKED_MAX, SECOND);
        (EXTRA_ACKED_GAIN * self.extra_acked() / BBR_UNIT).min(max_aggr)
    }

    /// `bbr_update_bw`: round counting and the max filter.
    fn update_bw(&mut self, rs: &RateSample) {
        if rs.interval == 0 {
            self.round.no_sample();
            return;
        }
        if self.round.on_sample(rs.prior_delivered, self.delivered) {
            self.packet_conservation = false;
        }
        let app_limited = rs.is_app_limited || rs.prior_delivered < self.app_limited_until;
        if !app_limited || rs.delivery_rate >= self.bw.get() {
            self.bw.update(self.round.count(), rs.delivery_rate);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, acked: u64, rs: &RateSample) {
        if acked == 0 || rs.interval == 0 {
            return;
        }
        if self.round.started() {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = self.now.saturating_sub(self.ack_epoch_stamp);
        let mut expected = mul_div(self.bw.get(), epoch, SECOND);
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH * self.mss
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = self.now;
            expected = 0;
        }
        self.ack_epoch_acked += acked;
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.now;
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, prior_in_flight: u64) -> bool {
        let is_full_length = self.now.saturating_sub(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.in_net_at_edt(prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (self.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// `bbr_reset_probe_bw_mode`: `cycle_idx = CYCLE_LEN - 1 - random(bbr_cycle_rand)`, then
    /// advance, so ProbeBW starts in any phase but the 3/4 one.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - (self.rng.next_u64() % CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round.started() || rs.is_app_limited {
            return;
        }
        let max_bw = self.bw.get();
        let thresh = mul_div(self.full_bw, FULL_BW_THRESH, BBR_UNIT);
        if max_bw >= thresh {
            self.full_bw = max_bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, bytes_in_flight: u64) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(bytes_in_flight) <= self.inflight(self.bw.get(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_update_min_rtt`: the 10 s filter, ProbeRTT entry, and its 200 ms + one round.
    fn update_min_rtt(&mut self, rtt: Option<Nanos>, ack: &AckEvent) {
        let expired = self.now > self.min_rtt_stamp.saturating_add(MIN_RTT_WIN);
        if let Some(rtt) = rtt {
            if rtt < self.min_rtt || expired {
                self.min_rtt = rtt;
                self.min_rtt_stamp = self.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.app_limited_until = (self.delivered + ack.bytes_in_flight).max(1);
            if self.probe_rtt_done_stamp.is_none()
                && ack.bytes_in_flight <= CWND_MIN_TARGET * self.mss
            {
                self.probe_rtt_done_stamp = Some(self.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.round.restart(self.delivered);
            } else if let Some(done) = self.probe_rtt_done_stamp {
                if self.round.started() {
                    self.probe_rtt_round_done = true;
                }
                // bbr_check_probe_rtt_done.
                if self.probe_rtt_round_done && self.now > done {
                    self.min_rtt_stamp = self.now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    self.reset_mode();
                }
            }
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: `Some(cwnd)` while conserving packets.
    fn recover_or_restore(&mut self, ack: &AckEvent) -> Option<u64> {
        let mut cwnd = self.cwnd;
        if self.losses > 0 {
            cwnd = cwnd.saturating_sub(self.losses).max(self.mss);
        }
        if self.ca_state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.round.restart(self.delivered);
            cwnd = ack.bytes_in_flight + ack.bytes_acked;
        } else if self.prev_ca_state >= CaState::Recovery && self.ca_state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = self.ca_state;
        if self.packet_conservation {
            return Some(cwnd.max(ack.bytes_in_flight + ack.bytes_acked));
        }
        self.cwnd = cwnd;
        None
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, ack: &AckEvent) {
        let acked = ack.bytes_acked;
        if acked > 0 {
            if let Some(cwnd) = self.recover_or_restore(ack) {
                self.cwnd = cwnd;
            } else {
                let segs = self.bdp_segs(self.bw.get(), self.cwnd_gain);
                let segs = segs.saturating_add(self.ack_aggregation_cwnd().div_ceil(self.mss));
                let target = self.quantization_budget(segs).saturating_mul(self.mss);
                if self.full_bw_reached {
                    self.cwnd = self.cwnd.saturating_add(acked).min(target);
                } else if self.cwnd < target || self.delivered < TCP_INIT_CWND * self.mss {
                    self.cwnd = self.cwnd.saturating_add(acked);
                }
                self.cwnd = self.cwnd.max(CWND_MIN_TARGET * self.mss);
            }
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET * self.mss);
        }
        self.cwnd = self.cwnd.max(self.mss);
    }

    fn rtt_sample(ack: &AckEvent) -> Option<Nanos> {
        ack.rate
            .map(|rs| rs.rtt)
            .filter(|&r| r > 0)
            .or(ack.rtt)
            .filter(|&r| r > 0)
    }
}

impl CongestionController for Bbr1 {
    /// `bbr_main`: `bbr_update_model`, then pacing rate and cwnd.
    fn on_ack(&mut self, ack: &AckEvent) {
        self.now = ack.now;
        self.delivered = self.delivered.max(ack.delivered);
        if !self.started {
            self.started = true;
            self.min_rtt_stamp = ack.now;
            self.ack_epoch_stamp = ack.now;
        }
        self.ca_state = match self.ca_state {
            CaState::Recovery if !ack.in_recovery => CaState::Open,
            s => s,
        };
        self.losses = ack
            .prior_in_flight
            .saturating_sub(ack.bytes_in_flight.saturating_add(ack.bytes_acked));
        let rs = ack.rate.unwrap_or_default();
        self.update_bw(&rs);
        self.update_ack_aggregation(ack.bytes_acked, &rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(ack.prior_in_flight) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(&rs);
        self.check_drain(ack.bytes_in_flight);
        self.update_min_rtt(Self::rtt_sample(ack), ack);
        self.update_gains();
        self.set_pacing_rate(ack.srtt);
        self.set_cwnd(ack);
    }

    /// The handshake's RTT: Linux initialises BBR after it, pacing from srtt at once.
    fn on_rtt_sample(&mut self, _now: Nanos, rtt: Nanos) {
        if !self.has_seen_rtt && rtt > 0 {
            self.init_pacing_rate_from_rtt(rtt);
        }
    }

    /// Entering TCP_CA_Recovery (`bbr_ssthresh` saves cwnd); cwnd is set on the next ACK.
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        // Linux BBR leaves the cwnd alone in TCP_CA_CWR (`bbr_set_cwnd_to_recover_or_restore`
        // acts only on Recovery and Loss): an ECN echo changes nothing.
        if event.ecn {
            return;
        }
        self.save_cwnd();
        self.ca_state = CaState::Recovery;
    }

    /// Back to TCP_CA_Open: the next ACK restores the cwnd saved on entry.
    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.ca_state = CaState::Open;
    }

    /// `tcp_enter_loss` + `bbr_set_state(TCP_CA_Loss)`: cwnd saved, cut to in flight + 1 with
    /// everything presumed lost (1 packet), `full_bw` reset; restored on exit from Loss.
    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        self.save_cwnd();
        self.ca_state = CaState::Loss;
        self.prev_ca_state = CaState::Loss;
        self.packet_conservation = false;
        self.full_bw = 0;
        self.round.set_started();
        self.cwnd = self.mss;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// Linux sets `snd_ssthresh` to the 1-gain inflight on leaving startup, but with
    /// `cong_control` it steers nothing (no PRR), so the transport is told there is none.
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate.max(1))
    }

    fn send_quantum(&self) -> Option<u64> {
        Some(self.tso_segs_goal() * self.mss)
    }

    fn phase(&self) -> Phase {
        match self.mode {
            Mode::Startup => Phase::Startup,
            Mode::Drain => Phase::Drain,
            Mode::ProbeBw => Phase::ProbeBw,
            Mode::ProbeRtt => Phase::ProbeRtt,
        }
    }
}

/// Build from the registry (no parameters of its own).
pub fn from_params(_params: &Params, common: &CommonParams) -> Result<Bbr1, CcError> {
    Ok(Bbr1::new(common.mss, common.initcwnd, common.seed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_pipe::Pipe;
    use crate::{CcSpec, Controller};

    const MSS: u64 = 1000;

    /// An ACK of `bytes` at `now` with a rate sample at `rate` bytes/s, starting a new round
    /// when `new_round`.
    fn ack(
        c: &Bbr1,
        now: Nanos,
        bytes: u64,
        rate: u64,
        rtt: Nanos,
        in_flight: u64,
        new_round: bool,
    ) -> AckEvent {
        crate::controller::test_events::round_ack(
            now,
            MSS,
            bytes,
            rate,
            rtt,
            in_flight,
            c.delivered,
            c.round.end(),
            new_round,
        )
    }

    #[test]
    fn constants_match_tcp_bbr_c() {
        assert_eq!(BBR_UNIT, 256);
        assert_eq!(HIGH_GAIN, 739); // 256 * 2885 / 1000 + 1
        assert_eq!(DRAIN_GAIN, 88); // 256 * 1000 / 2885
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!(CYCLE_RAND, 7);
        assert_eq!(BW_RTTS, 10);
        assert_eq!(MIN_RTT_WIN, 10 * SECOND);
        assert_eq!(PROBE_RTT_MODE, 200 * MS);
        assert_eq!(CWND_MIN_TARGET, 4);
        assert_eq!(FULL_BW_THRESH, 320);
        assert_eq!(FULL_BW_CNT, 3);
        assert_eq!(PACING_MARGIN_PERCENT, 1);
        assert_eq!(MIN_TSO_RATE, 1_200_000);
        assert_eq!(EXTRA_ACKED_GAIN, 256);
        assert_eq!(EXTRA_ACKED_WIN_RTTS, 5);
        assert_eq!(EXTRA_ACKED_MAX, 100 * MS);
    }

    #[test]
    fn startup_paces_and_sizes_cwnd_at_high_gain() {
        let mut c = Bbr1::new(MSS, 10, 1);
        assert_eq!(c.mode(), Mode::Startup);
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (HIGH_GAIN, HIGH_GAIN));
        // bbr_init_pacing_rate_from_rtt: 10 packets / 100 ms × 739/256 × 99%.
        c.on_rtt_sample(0, 100 * MS);
        assert_eq!(c.pacing_rate().unwrap(), 100_000 * 739 * 99 / (256 * 100));
        // Once bw is measured: pacing = high_gain × bw × 99%, cwnd target = ⌈bdp × high_gain⌉
        // + 3 TSO goals, rounded up to even.
        let bw = 1_000_000; // 1000 packets/s
        let a = ack(&c, 100 * MS, MSS, bw, 100 * MS, 0, true);
        c.on_ack(&a);
        assert_eq!(c.pacing_rate().unwrap(), bw * 739 * 99 / (256 * 100));
        let tso = c.tso_segs_goal();
        assert_eq!(tso, (c.pacing_rate().unwrap() >> 10) / MSS);
        let target = (((100 * 739u64).div_ceil(256) + 3 * tso + 1) & !1) * MSS;
        assert_eq!(c.inflight(bw, HIGH_GAIN), target);
    }

    #[test]
    fn tso_goal_is_two_segments_at_least_and_64_kib_at_most() {
        let mut c = Bbr1::new(1448, 10, 1);
        c.pacing_rate = 1_000_000; // ~976 B per 1/1024 s
        assert_eq!(c.tso_segs_goal(), 2);
        c.pacing_rate = 100_000; // below bbr_min_tso_rate (150 kB/s)
        assert_eq!(c.tso_segs_goal(), 1);
        c.pacing_rate = 20_000_000; // 19 531 B
        assert_eq!(c.tso_segs_goal(), 13);
        c.pacing_rate = 10_000_000_000;
        assert_eq!(c.tso_segs_goal(), 64 * 1024 / 1448);
    }

    #[test]
    fn full_bandwidth_after_three_rounds_without_25_percent_growth() {
        let mut c = Bbr1::new(MSS, 10, 1);
        let rtt = 100 * MS;
        let mut now = 0;
        // Growing 2x per round: still in startup.
        for rate in [100_000, 200_000, 400_000, 800_000] {
            now += rtt;
            let a = ack(&c, now, MSS, rate, rtt, 100 * MSS, true);
            c.on_ack(&a);
            assert!(!c.full_bw_reached());
        }
        // Growth below 25%: three rounds of it fill the pipe.
        for (i, rate) in [900_000, 950_000, 990_000].into_iter().enumerate() {
            now += rtt;
            let a = ack(&c, now, MSS, rate, rtt, 300 * MSS, true);
            c.on_ack(&a);
            assert_eq!(c.full_bw_reached(), i == 2, "round {i}");
        }
        // In flight above one BDP: DRAIN paces at 1/high_gain with cwnd gain high_gain.
        assert_eq!(c.mode(), Mode::Drain);
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (DRAIN_GAIN, HIGH_GAIN));
        // ACKs within a round do not count as rounds.
        let mut d = Bbr1::new(MSS, 10, 1);
        for _ in 0..10 {
            now += MS;
            let a = ack(&d, now, MSS, 100_000, rtt, 10 * MSS, false);
            d.on_ack(&a);
        }
        assert!(!d.full_bw_reached());
    }

    /// Drive `c` into ProbeBW at `rate` bytes/s and `rtt`; returns the time.
    fn into_probe_bw(c: &mut Bbr1, rate: u64, rtt: Nanos) -> Nanos {
        let mut now = 0;
        for _ in 0..5 {
            now += rtt;
            let a = ack(c, now, MSS, rate, rtt, 0, true);
            c.on_ack(&a);
        }
        assert_eq!(c.mode(), Mode::ProbeBw);
        now
    }

    #[test]
    fn probe_bw_starts_anywhere_but_the_drain_phase_and_is_seeded() {
        let mut seen = [false; CYCLE_LEN];
        for seed in 0..200 {
            let mut c = Bbr1::new(MSS, 10, seed);
            into_probe_bw(&mut c, 1_000_000, 100 * MS);
            seen[c.cycle_idx()] = true;
            let mut again = Bbr1::new(MSS, 10, seed);
            into_probe_bw(&mut again, 1_000_000, 100 * MS);
            assert_eq!(again.cycle_idx(), c.cycle_idx(), "deterministic per seed");
        }
        assert!(!seen[1], "never starts in the 3/4 phase");
        assert!(seen.iter().enumerate().all(|(i, &s)| s || i == 1));
    }

    #[test]
    fn gain_cycle_advances_per_min_rtt_with_the_probe_and_drain_rules() {
        let rtt = 100 * MS;
        let rate = 1_000_000;
        let mut c = Bbr1::new(MSS, 10, 3);
        let mut now = into_probe_bw(&mut c, rate, rtt);
        // One min_rtt with in flight above every target ends any phase.
        let idx = c.cycle_idx();
        now += rtt + 1;
        let a = ack(&c, now, MSS, rate, rtt, 1000 * MSS, false);
        c.on_ack(&a);
        assert_eq!(c.cycle_idx(), (idx + 1) % CYCLE_LEN);
        // Walk to phase 0 (5/4), one min_rtt per phase.
        while c.cycle_idx() != 0 {
            let idx = c.cycle_idx();
            now += rtt / 2;
            let a = ack(&c, now, MSS, rate, rtt, 200 * MSS, false);
            c.on_ack(&a);
            assert_eq!(c.cycle_idx(), idx, "half a min_rtt is not a phase");
            now += rtt / 2 + 1;
            let a = ack(&c, now, MSS, rate, rtt, 200 * MSS, false);
            c.on_ack(&a);
            assert_eq!(c.cycle_idx(), (idx + 1) % CYCLE_LEN);
        }
        assert_eq!(c.pacing_gain(), 320);
        assert_eq!(c.cwnd_gain(), CWND_GAIN);
        // 5/4 lasts past one min_rtt until in flight reaches the 5/4 target.
        now += rtt + 1;
        let a = ack(&c, now, MSS, rate, rtt, 100 * MSS, false);
        c.on_ack(&a);
        assert_eq!(c.cycle_idx(), 0, "in flight below 5/4 BDP: keep probing");
        let full = c.inflight(rate, 320);
        now += MS;
        let a = ack(&c, now, MSS, rate, rtt, full, false);
        c.on_ack(&a);
        assert_eq!(c.cycle_idx(), 1);
        assert_eq!(c.pacing_gain(), 192);
        // 3/4 ends early once in flight is down to one BDP's inflight.
        now += MS;
        let a = ack(&c, now, MSS, rate, rtt, 50 * MSS, false);
        c.on_ack(&a);
        assert_eq!(c.cycle_idx(), 2);
        assert_eq!(c.pacing_gain(), BBR_UNIT);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_packets_for_200_ms_and_a_round() {
        let rtt = 100 * MS;
        let rate = 1_000_000;
        let mut c = Bbr1::new(MSS, 10, 5);
        let mut now = into_probe_bw(&mut c, rate, rtt);
        let start = c.min_rtt_stamp;
        // Larger RTTs only: the min RTT filter expires 10 s after its last new minimum.
        while now <= start + MIN_RTT_WIN {
            now += rtt;
            let a = ack(&c, now, MSS, rate, rtt + 10 * MS, 100 * MSS, true);
            c.on_ack(&a);
            if now <= start + MIN_RTT_WIN {
                assert_eq!(c.mode(), Mode::ProbeBw);
            }
        }
        assert_eq!(c.mode(), Mode::ProbeRtt);
        assert_eq!(c.cwnd(), CWND_MIN_TARGET * MSS);
        assert_eq!((c.pacing_gain(), c.cwnd_gain()), (BBR_UNIT, BBR_UNIT));
        // In flight down to 4 packets starts the 200 ms.
        now += 10 * MS;
        let a = ack(&c, now, MSS, rate, rtt, 4 * MSS, false);
        c.on_ack(&a);
        let done = now + PROBE_RTT_MODE;
        while now <= done {
            now += 50 * MS;
            let a = ack(&c, now, MSS, rate, rtt, 4 * MSS, now < done - 100 * MS);
            c.on_ack(&a);
            if now <= done {
                assert_eq!(c.mode(), Mode::ProbeRtt);
                assert_eq!(c.cwnd(), 4 * MSS);
            }
        }
        assert_eq!(c.mode(), Mode::ProbeBw, "200 ms and a round done");
        assert!(c.cwnd() > 4 * MSS, "prior cwnd restored");
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores_on_exit() {
        let rtt = 100 * MS;
        let rate = 1_000_000;
        let mut c = Bbr1::new(MSS, 10, 5);
        let mut now = into_probe_bw(&mut c, rate, rtt);
        for _ in 0..300 {
            now += MS;
            let a = ack(&c, now, MSS, rate, rtt, c.cwnd(), false);
            c.on_ack(&a);
        }
        let before = c.cwnd();
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now,
            bytes_lost: 5 * MSS,
            bytes_in_flight: before,
            mss: MSS,
        });
        // First ACK in recovery: cwnd = in flight + acked.
        now += MS;
        let mut a = ack(&c, now, 2 * MSS, rate, rtt, 40 * MSS, false);
        a.in_recovery = true;
        c.on_ack(&a);
        assert_eq!(c.cwnd(), 42 * MSS);
        // Within the round: never below in flight + acked, no growth beyond it.
        now += MS;
        let mut a = ack(&c, now, MSS, rate, rtt, 30 * MSS, false);
        a.in_recovery = true;
        c.on_ack(&a);
        assert_eq!(c.cwnd(), 42 * MSS);
        // Losses marked by an ACK (in flight falls more than acked) cut cwnd by them.
        now += MS;
        let mut a = ack(&c, now, MSS, rate, rtt, 30 * MSS, false);
        a.prior_in_flight = 34 * MSS;
        a.in_recovery = true;
        c.on_ack(&a);
        assert_eq!(c.cwnd(), 39 * MSS);
        // The round ends: conservation stops, cwnd grows by acked again.
        now += MS;
        let mut a = ack(&c, now, MSS, rate, rtt, 30 * MSS, true);
        a.in_recovery = true;
        c.on_ack(&a);
        assert_eq!(c.cwnd(), 40 * MSS);
        // Exit restores the cwnd saved on entry.
        c.on_recovery_exit(now);
        now += MS;
        let a = ack(&c, now, MSS, rate, rtt, 30 * MSS, false);
        c.on_ack(&a);
        assert_eq!(c.cwnd(), before);
    }

    #[test]
    fn startup_ignores_loss() {
        let mut c = Bbr1::new(MSS, 10, 1);
        let a = ack(&c, 100 * MS, MSS, 100_000, 100 * MS, 10 * MSS, true);
        c.on_ack(&a);
        for i in 0..20 {
            c.on_congestion_event(&CongestionEvent {
                ecn: false,
                now: 100 * MS + i,
                bytes_lost: 50 * MSS,
                bytes_in_flight: 100 * MSS,
                mss: MSS,
            });
        }
        assert_eq!(c.mode(), Mode::Startup);
        assert_eq!(c.pacing_gain(), HIGH_GAIN);
    }

    #[test]
    fn rto_cuts_to_one_packet_and_restores_on_exit() {
        let rtt = 100 * MS;
        let mut c = Bbr1::new(MSS, 10, 5);
        let mut now = into_probe_bw(&mut c, 1_000_000, rtt);
        for _ in 0..100 {
            now += MS;
            let a = ack(&c, now, MSS, 1_000_000, rtt, c.cwnd(), false);
            c.on_ack(&a);
        }
        let before = c.cwnd();
        c.on_rto(now, before);
        assert_eq!(c.cwnd(), MSS);
        now += MS;
        let a = ack(&c, now, MSS, 1_000_000, rtt, 0, false);
        c.on_ack(&a);
        assert_eq!(c.cwnd(), CWND_MIN_TARGET * MSS);
        c.on_recovery_exit(now);
        now += MS;
        let a = ack(&c, now, MSS, 1_000_000, rtt, 0, false);
        c.on_ack(&a);
        // Restored, then grown by the ACK as usual, within the target.
        assert!(
            c.cwnd() >= before && c.cwnd() <= before + MSS,
            "{} vs {before}",
            c.cwnd()
        );
    }

    #[test]
    fn ideal_pipe_settles_near_the_bottleneck() {
        // 10 Mbit/s, 50 ms: BDP 62.5 packets of 1000 B.
        let rate = 1_250_000;
        let rtt = 50 * MS;
        let mut c = Bbr1::new(MSS, 10, 9);
        let mut pipe = Pipe::new(rate, rtt, MSS);
        let mut exit = None;
        pipe.run(&mut c, 3 * SECOND, |c, p| {
            if exit.is_none() && c.mode() != Mode::Startup {
                exit = Some(p.now);
            }
        });
        assert!(c.full_bw_reached());
        assert!(exit.unwrap() < SECOND, "{exit:?}");
        let bw = c.max_bw() as f64;
        assert!((bw / rate as f64 - 1.0).abs() < 0.05, "max_bw {bw}");
        assert_eq!(c.min_rtt(), rtt + MSS * SECOND / rate);
        assert_eq!(c.mode(), Mode::ProbeBw);
        assert!(c.cwnd() <= c.inflight(c.max_bw(), CWND_GAIN) + 2 * MSS);
    }

    #[test]
    fn registered_as_bbr1_without_parameters() {
        let common = CommonParams {
            mss: 1448,
            initcwnd: 10,
            abc: true,
            seed: 1,
            paced: false,
        };
        let c = Controller::new(&CcSpec::named("bbr1"), &common).unwrap();
        assert!(matches!(c, Controller::Bbr1(_)));
        assert_eq!(c.phase(), Phase::Startup);
        assert_eq!(
            crate::registry::algorithm("bbr1").unwrap().source,
            "Linux tcp_bbr.c (BBR v1)"
        );
    }
}
