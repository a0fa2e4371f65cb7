//! BBR version 3 per draft-ietf-ccwg-bbr-06 (Cardwell, Swett, Beshay, July 2026): a model of
//! the path (windowed max bandwidth, min RTT, long- and short-term inflight bounds) steering
//! pacing rate and cwnd. What changed from -01, which this module followed before, is listed in
//! docs/startups.md ("BBR: draft -01 to -06").
//!
//! Layout: this file holds the model, the control parameters (§5.6) and the per-ACK order of
//! §5.2.3; each state's entry and exit rules live in `startup`, `drain`, `probe_bw`, `probe_rtt`.
//!
//! Approximations, because the transport hands over aggregate events rather than per-packet
//! loss bookkeeping:
//! - Loss (§5.5.10.2 `IsInflightTooHigh`, `RS.lost > 2% RS.tx_in_flight`): bytes reported lost
//!   by [`CongestionEvent`]s during the current loss round, against the event's bytes in flight,
//!   which also stand in for `InflightAtLoss(P)` (the lost packet's own `P.tx_in_flight` and
//!   `P.lost` are not handed over). Losses detected later in the same recovery episode are not
//!   reported, so fewer losses count.
//! - Startup high-loss exit (§5.3.1.3, `BBRStartupFullLossCnt` = 6 loss events per round): six
//!   lost MSS in one round stand in for six discontiguous loss ranges. The transport always has
//!   SACK (`C.has_selective_acks`), so the draft's any-loss rule for connections without it
//!   does not arise.
//! - `RS.tx_in_flight` (bytes in flight when the acked packet was sent): the ACK's
//!   `prior_in_flight`.
//! - ProbeRTT's `MarkConnectionAppLimited`: the controller itself treats samples of data sent
//!   before ProbeRTT ends as application limited.
//! - Extra-ACKed aggregation allowance capped at 100 ms of bandwidth (Linux
//!   `bbr_extra_acked_max_us`), so it cannot run away while the bandwidth estimate is ~0.
//! - ECN (§3.7: CE marks MUST count as congestion, no specific response given): an ECN echo
//!   marks the round as one with congestion, so outside bandwidth probing the short-term model
//!   shrinks as for a loss (§5.5.10.3); it adds no lost bytes and starts no recovery.
//! - Not implemented: restart from idle (§5.4: the transport does not say when the
//!   application, rather than the window, leaves the pipe empty), and the undo of a spurious
//!   loss recovery (§5.5.11: the transport reports no spurious recovery, so there is nothing to
//!   call `HandleSpuriousLossDetection` on and `SaveStateUponLoss` would save for nothing).

mod drain;
mod probe_bw;
mod probe_rtt;
mod startup;

use crate::mul_div;
use crate::params::{CcError, CommonParams};
use crate::params::{ParamInfo, Params};
use crate::rng::SplitMix64;
use crate::round::RoundCounter;
use crate::windowed_filter::MaxFilter;
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, RateSample, SECOND};
pub use probe_bw::ProbeBwPhase;

/// No declared parameters: BBR's constants are the draft's.
pub const PARAMS: &[ParamInfo] = &[];

const MS: Nanos = 1_000_000;

/// §2.5 BBR.StartupPacingGain = 4 ln 2 ≈ 2.77.
pub const STARTUP_PACING_GAIN: f64 = 2.77;
/// §2.5 BBR.DrainPacingGain = 0.5 (at or below 1 / cwnd gain 2, drains in one round; -01: 0.35).
pub const DRAIN_PACING_GAIN: f64 = 0.5;
/// §2.6 BBR.DefaultCwndGain = 2, Startup's and Drain's cwnd gain too (§5.3.1.1, §5.3.2).
pub const DEFAULT_CWND_GAIN: f64 = 2.0;
/// §2.16.2 BBR.ProbeRTTCwndGain = 0.5 (ProbeRTT paces at gain 1).
pub const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// §2.5 BBR.PacingMarginPercent = 1.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// §2.8 BBR.LossThresh = 2%.
pub const LOSS_THRESH_PERCENT: u64 = 2;
/// §2.8 BBR.Beta = 0.7: multiplicative cut of the short-term model and of inflight_longterm.
pub const BETA: f64 = 0.7;
/// §2.8 BBR.Headroom = 0.15 of inflight_longterm left free in ProbeBW_CRUISE and ProbeRTT.
pub const HEADROOM: f64 = 0.15;
/// §2.8 BBR.MinPipeCwnd = 4 packets.
pub const MIN_PIPE_CWND_SEGMENTS: u64 = 4;
/// §2.11 BBR.MaxBwFilterLen = 2 ProbeBW cycles.
pub const MAX_BW_FILTER_LEN: u64 = 2;
/// §2.12 BBR.ExtraAckedFilterLen = 10 rounds (1 round in Startup, §5.5.9).
pub const EXTRA_ACKED_FILTER_LEN: u64 = 10;
/// §2.16.1 BBR.MinRTTFilterLen = 10 s.
pub const MIN_RTT_FILTER_LEN: Nanos = 10 * SECOND;
/// §2.16.2 BBR.ProbeRTTInterval = 5 s.
pub const PROBE_RTT_INTERVAL: Nanos = 5 * SECOND;
/// §2.16.2 BBR.ProbeRTTDuration = 200 ms.
pub const PROBE_RTT_DURATION: Nanos = 200 * MS;
/// Linux `bbr_extra_acked_max_us`: the aggregation allowance is at most 100 ms of bandwidth.
pub const EXTRA_ACKED_MAX: Nanos = 100 * MS;
/// §5.6.3 allows other quanta than its 1 ms of pacing within [2 SMSS, 64 KB] and asks for the
/// smallest feasible; kept from draft-cardwell-iccrg-bbr-congestion-control-02 §4.6.3: below
/// 1.2 Mbps the send quantum may shrink to one SMSS.
pub const SEND_QUANTUM_LOW_RATE: u64 = 1_200_000 / 8;
/// §5.6.3: the send quantum is at most 64 KB, bytes.
pub const SEND_QUANTUM_MAX: u64 = 64 * 1024;

/// The BBR state machine (§5.1.1), ProbeBW with its four phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// §5.3.1: pacing gain 2.77 until the pipe is full.
    Startup,
    /// §5.3.2: draining the queue Startup built.
    Drain,
    /// §5.3.3: cycling through the ProbeBW phases.
    ProbeBw(ProbeBwPhase),
    /// §5.3.4: cwnd cut to 0.5 BDP (at least 4 packets) to refresh the min RTT.
    ProbeRtt,
}

/// §2.14 `BBR.ack_phase`: where the ACKs of a bandwidth probe are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
    Refilling,
}

/// BBRv3 sender state (§2, §5.2.1 `OnInit`).
#[derive(Clone, Debug)]
pub struct Bbr {
    mss: u64,
    initial_cwnd: u64,
    state: State,
    pacing_gain: f64,
    cwnd_gain: f64,
    cwnd: u64,
    pacing_rate: u64,
    send_quantum: u64,
    max_inflight: u64,
    rng: SplitMix64,
    now: Nanos,
    started: bool,
    has_seen_rtt: bool,

    // Path model (§2.9, §5.5).
    max_bw_filter: MaxFilter,
    max_bw: u64,
    /// `BBR.bw = min(max_bw, bw_shortterm)`, bytes per second.
    bw: u64,
    bw_shortterm: u64,
    bw_latest: u64,
    inflight_longterm: u64,
    inflight_shortterm: u64,
    inflight_latest: u64,
    min_rtt: Nanos,
    min_rtt_stamp: Nanos,
    probe_rtt_min_delay: Nanos,
    probe_rtt_min_stamp: Nanos,
    probe_rtt_expired: bool,
    extra_acked_filter: MaxFilter,
    extra_acked: u64,
    extra_acked_interval_start: Nanos,
    extra_acked_delivered: u64,

    // Round counting (§5.5.1).
    delivered: u64,
    round: RoundCounter,
    rounds_since_probe_up: u64,

    // Congestion signals (§2.10, §5.5.10).
    loss_round: RoundCounter,
    is_loss_in_round: bool,
    loss_bytes_in_round: u64,
    loss_too_high_in_round: bool,

    // Startup and full-pipe estimation (§2.13, §5.3.1.2).
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_now: bool,
    // Drain (§2.7, §5.3.2).
    drain_start_round: u64,

    // ProbeBW (§2.14, §5.3.3).
    cycle_count: u64,
    cycle_stamp: Nanos,
    bw_probe_wait: Nanos,
    is_bw_probe_sample: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    ack_phase: AckPhase,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,

    // ProbeRTT (§2.16, §5.3.4).
    probe_rtt_done_stamp: Option<Nanos>,
    probe_rtt_round_done: bool,
    /// Samples of data sent before this `delivered` mark are application limited.
    app_limited_until: u64,

    // Loss recovery (§5.6.4.4).
    prior_cwnd: u64,
    in_recovery: bool,
}

impl Bbr {
    /// `OnInit` (§5.2.1) with `initcwnd` segments of `mss` bytes.
    pub fn new(mss: u64, initcwnd: u64, seed: u64) -> Self {
        let mss = mss.max(1);
        let initial_cwnd = initcwnd.max(1) * mss;
        let mut bbr = Self {
            mss,
            initial_cwnd,
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: DEFAULT_CWND_GAIN,
            cwnd: initial_cwnd.max(MIN_PIPE_CWND_SEGMENTS * mss),
            pacing_rate: 0,
            send_quantum: 2 * mss,
            max_inflight: initial_cwnd,
            rng: SplitMix64::new(seed),
            now: 0,
            started: false,
            has_seen_rtt: false,
            max_bw_filter: MaxFilter::new(MAX_BW_FILTER_LEN),
            max_bw: 0,
            bw: 0,
            bw_shortterm: u64::MAX,
            bw_latest: 0,
            inflight_longterm: u64::MAX,
            inflight_shortterm: u64::MAX,
            inflight_latest: 0,
            min_rtt: u64::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min_delay: u64::MAX,
            probe_rtt_min_stamp: 0,
            probe_rtt_expired: false,
            extra_acked_filter: MaxFilter::new(1),
            extra_acked: 0,
            extra_acked_interval_start: 0,
            extra_acked_delivered: 0,
            delivered: 0,
            round: RoundCounter::new(),
            rounds_since_probe_up: 0,
            loss_round: RoundCounter::new(),
            is_loss_in_round: false,
            loss_bytes_in_round: 0,
            loss_too_high_in_round: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_now: false,
            drain_start_round: 0,
            cycle_count: 0,
            cycle_stamp: 0,
            bw_probe_wait: 0,
            is_bw_probe_sample: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: u64::MAX,
            ack_phase: AckPhase::Init,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            app_limited_until: 0,
            prior_cwnd: 0,
            in_recovery: false,
        };
        bbr.init_pacing_rate(0);
        bbr.set_send_quantum();
        bbr.enter_startup();
        bbr
    }

    /// Current state (§5.1.1).
    pub fn state(&self) -> State {
        self.state
    }
    /// Current `BBR.pacing_gain`.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// Current `BBR.cwnd_gain`.
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    /// Windowed max delivery rate, bytes per second.
    pub fn max_bw(&self) -> u64 {
        self.max_bw
    }
    /// Bandwidth the model uses: `min(max_bw, bw_shortterm)`.
    pub fn bw(&self) -> u64 {
        self.bw
    }
    /// Min RTT estimate (`u64::MAX` before any sample).
    pub fn min_rtt(&self) -> Nanos {
        self.min_rtt
    }
    /// Packet-timed rounds begun so far (`BBR.round_count`, §5.5.1).
    pub fn round_count(&self) -> u64 {
        self.round.count()
    }
    /// `BBR.full_bw_reached`: the pipe has been estimated full once (§2.13).
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// `BBR.inflight_longterm` (`u64::MAX` while unset).
    pub fn inflight_longterm(&self) -> u64 {
        self.inflight_longterm
    }
    /// The current ProbeBW wait before the next bandwidth probe (§5.3.3.8.3).
    pub fn bw_probe_wait(&self) -> Nanos {
        self.bw_probe_wait
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_SEGMENTS * self.mss
    }

    /// §5.6.2 `InitPacingRate`: nominal_bandwidth = InitialCwnd / (SRTT or 1 ms), times
    /// BBR.StartupPacingGain.
    fn init_pacing_rate(&mut self, srtt: Nanos) {
        let rtt = if srtt > 0 { srtt } else { MS };
        let nominal = self.initial_cwnd as f64 * SECOND as f64 / rtt as f64;
        self.pacing_rate = ((STARTUP_PACING_GAIN * nominal) as u64).max(1);
    }

    /// §5.5.1 `UpdateRound`: a round ends when a packet sent after the previous round ended
    /// is delivered.
    fn update_round(&mut self, rs: &RateSample) {
        if self.round.on_sample(rs.prior_delivered, self.delivered) {
            self.rounds_since_probe_up += 1;
        }
    }

    /// §5.5.1 `StartRound`.
    fn start_round(&mut self) {
        self.round.restart(self.delivered);
    }

    fn sample_app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited || rs.prior_delivered < self.app_limited_until
    }

    /// §5.5.5 `UpdateMaxBw`: only positive samples (-06), application-limited ones only when
    /// they raise the max.
    fn update_max_bw(&mut self, rs: &RateSample) {
        self.update_round(rs);
        if rs.delivery_rate > 0 && (rs.delivery_rate >= self.max_bw || !self.sample_app_limited(rs))
        {
            self.max_bw = self
                .max_bw_filter
                .update(self.cycle_count, rs.delivery_rate);
        }
    }

    /// §5.5.6 `AdvanceMaxBwFilter`.
    fn advance_max_bw_filter(&mut self) {
        self.cycle_count += 1;
    }

    /// §5.5.10.3 `UpdateLatestDeliverySignals`.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        self.loss_round
            .on_sample(rs.prior_delivered, self.delivered);
    }

    /// §5.5.10.3 `AdvanceLatestDeliverySignals`.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round.started() {
            self.bw_latest = rs.delivery_rate;
            self.inflight_latest = rs.delivered;
        }
    }

    /// §5.5.10.3 `UpdateCongestionSignals`, with the per-round loss tally of the module notes.
    fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_max_bw(rs);
        if !self.loss_round.started() {
            return;
        }
        self.check_startup_high_loss();
        self.adapt_lower_bounds_from_congestion();
        self.is_loss_in_round = false;
        self.loss_bytes_in_round = 0;
        self.loss_too_high_in_round = false;
    }

    /// §5.5.10.3 `AdaptLowerBoundsFromCongestion` (`InitLowerBounds`, `LossLowerBounds`).
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() || !self.is_loss_in_round {
            return;
        }
        if self.bw_shortterm == u64::MAX {
            self.bw_shortterm = self.max_bw;
        }
        if self.inflight_shortterm == u64::MAX {
            self.inflight_shortterm = self.cwnd;
        }
        self.bw_shortterm = self.bw_latest.max((BETA * self.bw_shortterm as f64) as u64);
        self.inflight_shortterm = self
            .inflight_latest
            .max((BETA * self.inflight_shortterm as f64) as u64);
    }

    /// §5.5.10.3 `ResetCongestionSignals`.
    fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.loss_bytes_in_round = 0;
        self.loss_too_high_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 `ResetShortTermModel`.
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = u64::MAX;
        self.inflight_shortterm = u64::MAX;
    }

    /// §5.5.10.3 `BoundBWForModel`.
    fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.min(self.bw_shortterm);
    }

    /// §5.3.3.9 `IsProbingBW`: states that deliberately push beyond the model.
    fn is_probing_bw(&self) -> bool {
        matches!(
            self.state,
            State::Startup
                | State::ProbeBw(ProbeBwPhase::Refill)
                | State::ProbeBw(ProbeBwPhase::Up)
        )
    }

    fn is_in_probe_bw(&self) -> bool {
        matches!(self.state, State::ProbeBw(_))
    }

    /// §5.5.9 `UpdateACKAggregation`.
    fn update_ack_aggregation(&mut self, bytes_acked: u64) {
        let interval = self.now.saturating_sub(self.extra_acked_interval_start);
        let mut expected = mul_div(self.bw, interval, SECOND);
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = self.now;
            expected = 0;
        }
        self.extra_acked_delivered = self.extra_acked_delivered.saturating_add(bytes_acked);
        let extra = (self.extra_acked_delivered - expected).min(self.cwnd);
        self.extra_acked_filter.set_window(if self.full_bw_reached {
            EXTRA_ACKED_FILTER_LEN
        } else {
            1
        });
        self.extra_acked = self.extra_acked_filter.update(self.round.count(), extra);
    }

    /// §5.6.4.2 `BDPMultiple`: gain × BDP, or InitialCwnd before any RTT sample.
    fn bdp_multiple(&self, bw: u64, gain: f64) -> u64 {
        if self.min_rtt == u64::MAX {
            return self.initial_cwnd;
        }
        let bdp = mul_div(bw, self.min_rtt, SECOND);
        (gain * bdp as f64) as u64
    }

    /// §5.6.4.2 `QuantizationBudget`, with §5.5.8.1's TCP offload budget of 3 send quanta.
    fn quantization_budget(&self, inflight: u64) -> u64 {
        let offload_budget = 3 * self.send_quantum;
        let mut inflight = inflight.max(offload_budget).max(self.min_pipe_cwnd());
        if self.state == State::ProbeBw(ProbeBwPhase::Up) {
            inflight = inflight.saturating_add(2 * self.mss);
        }
        inflight
    }

    /// §5.6.4.2 `Inflight(bw, gain)`.
    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// §5.6.4.2 `UpdateMaxInflight`, aggregation allowance capped (module notes).
    fn update_max_inflight(&mut self) {
        let extra = self
            .extra_acked
            .min(mul_div(self.bw, EXTRA_ACKED_MAX, SECOND));
        let inflight = self
            .bdp_multiple(self.bw, self.cwnd_gain)
            .saturating_add(extra);
        self.max_inflight = self.quantization_budget(inflight);
    }

    /// §5.3.3.8.3 `TargetInflight`: the BDP, unless congestion cut cwnd.
    fn target_inflight(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0).min(self.cwnd)
    }

    /// §5.3.3.9 `InflightWithHeadroom`.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == u64::MAX {
            return u64::MAX;
        }
        let headroom = self
            .mss
            .max((HEADROOM * self.inflight_longterm as f64) as u64);
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// §5.6.2 `SetPacingRateWithGain`: gain × bw × (100 − 1)%; only upward before the pipe is
    /// full.
    fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        if self.bw == 0 {
            return;
        }
        let rate = (gain * self.bw as f64 * (100 - PACING_MARGIN_PERCENT) as f64 / 100.0) as u64;
        let rate = rate.max(1);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.3 `SetSendQuantum`, with the 1.2 Mbps floor rule of the note on the constants.
    fn set_send_quantum(&mut self) {
        let floor = if self.pacing_rate < SEND_QUANTUM_LOW_RATE {
            self.mss
        } else {
            2 * self.mss
        };
        self.send_quantum = (self.pacing_rate / 1000).min(SEND_QUANTUM_MAX).max(floor);
    }

    /// §5.6.4.4 `SaveCwnd`.
    fn save_cwnd(&mut self) {
        if !self.in_recovery && self.state != State::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §5.6.4.4 `RestoreCwnd`.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// §5.6.4.5 `ProbeRTTCwnd`.
    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(self.min_pipe_cwnd())
    }

    /// §5.6.4.6 `SetCwnd`: up by what was delivered, to max_inflight once the pipe was full.
    fn set_cwnd(&mut self, ack: &AckEvent) {
        self.update_max_inflight();
        if self.full_bw_reached {
            self.cwnd = self
                .cwnd
                .saturating_add(ack.bytes_acked)
                .min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || self.delivered < self.initial_cwnd {
            self.cwnd = self.cwnd.saturating_add(ack.bytes_acked);
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        // §5.6.4.5 BoundCwndForProbeRTT.
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        self.bound_cwnd_for_model();
    }

    /// §5.6.4.7 `BoundCwndForModel`.
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = u64::MAX;
        match self.state {
            State::ProbeBw(ProbeBwPhase::Cruise) | State::ProbeRtt => {
                cap = self.inflight_with_headroom()
            }
            State::ProbeBw(_) => cap = self.inflight_longterm,
            _ => {}
        }
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }

    /// §5.5.10.2 `HandleInflightTooHigh`; `tx_in_flight` is the in-flight at the loss, and the
    /// loss event carries no application-limited flag, so inflight_longterm is always set.
    fn handle_inflight_too_high(&mut self, tx_in_flight: u64) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        self.inflight_longterm = tx_in_flight.max((BETA * self.target_inflight() as f64) as u64);
        if self.state == State::ProbeBw(ProbeBwPhase::Up) {
            self.start_probe_bw_down();
        }
    }

    fn rtt_sample(ack: &AckEvent) -> Option<Nanos> {
        ack.rtt
            .or_else(|| ack.rate.map(|rs| rs.rtt))
            .filter(|&r| r > 0)
    }
}

impl CongestionController for Bbr {
    /// §5.2.3 `UpdateOnACK`: model and state, then control parameters.
    fn on_ack(&mut self, ack: &AckEvent) {
        self.now = ack.now;
        self.delivered = self.delivered.max(ack.delivered);
        if !self.started {
            self.started = true;
            self.min_rtt_stamp = ack.now;
            self.probe_rtt_min_stamp = ack.now;
            self.cycle_stamp = ack.now;
            self.extra_acked_interval_start = ack.now;
        }
        // Linux bbr_init_pacing_rate_from_rtt: redo the initial rate once an RTT is known.
        if !self.has_seen_rtt && ack.srtt > 0 {
            self.has_seen_rtt = true;
            if self.max_bw == 0 {
                self.init_pacing_rate(ack.srtt);
            }
        }
        if let Some(rs) = ack.rate {
            // UpdateModelAndState (§5.2.3).
            self.update_latest_delivery_signals(&rs);
            self.update_congestion_signals(&rs);
            self.update_ack_aggregation(ack.bytes_acked);
            self.check_full_bw_reached(&rs);
            self.check_startup_done();
            self.check_drain_done(ack);
            self.update_probe_bw_cycle_phase(ack, &rs);
            self.update_min_rtt(Self::rtt_sample(ack));
            self.check_probe_rtt(ack);
            self.advance_latest_delivery_signals(&rs);
            self.bound_bw_for_model();
        } else {
            self.round.no_sample();
            self.loss_round.no_sample();
            self.update_min_rtt(Self::rtt_sample(ack));
            self.check_probe_rtt(ack);
        }
        // UpdateControlParameters (§5.2.3).
        self.set_pacing_rate_with_gain(self.pacing_gain);
        self.set_send_quantum();
        self.set_cwnd(ack);
    }

    /// Loss: `NoteLoss` and `HandleLostPacket` (§5.5.10.2) for the episode's lost bytes, and
    /// `OnEnterFastRecovery` (§5.6.4.4), which saves cwnd and cuts nothing: the response is the
    /// model's. An ECN echo is congestion without loss (module notes).
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.is_loss_in_round = true;
        if event.ecn {
            return;
        }
        self.loss_bytes_in_round = self.loss_bytes_in_round.saturating_add(event.bytes_lost);
        if self.loss_bytes_in_round.saturating_mul(100)
            > LOSS_THRESH_PERCENT.saturating_mul(event.bytes_in_flight)
        {
            self.loss_too_high_in_round = true;
            if self.is_bw_probe_sample {
                self.handle_inflight_too_high(event.bytes_in_flight);
            }
        }
        self.save_cwnd();
        self.in_recovery = true;
    }

    /// §5.6.4.4: leaving recovery restores the cwnd saved on entry, bounded by the model.
    fn on_recovery_exit(&mut self, _now: Nanos) {
        self.in_recovery = false;
        self.restore_cwnd();
        self.bound_cwnd_for_model();
    }

    /// §5.6.4.4 `OnEnterRTO`: save cwnd, then `C.cwnd = C.inflight + 1` SMSS, where the
    /// transport has marked everything outstanding lost (RFC 6675 §5.1), so C.inflight is 0;
    /// the next ACK's `SetCwnd` lifts it to BBR.MinPipeCwnd. Restored at recovery exit.
    fn on_rto(&mut self, _now: Nanos, _bytes_in_flight: u64) {
        self.save_cwnd();
        self.in_recovery = true;
        self.is_loss_in_round = true;
        self.cwnd = self.mss;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// BBR keeps no slow-start threshold; the transport recovers with cwnd − pipe.
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate.max(1))
    }

    fn send_quantum(&self) -> Option<u64> {
        Some(self.send_quantum)
    }

    fn phase(&self) -> Phase {
        match self.state {
            State::Startup => Phase::Startup,
            State::Drain => Phase::Drain,
            State::ProbeBw(_) => Phase::ProbeBw,
            State::ProbeRtt => Phase::ProbeRtt,
        }
    }
}

/// Build from the registry (no parameters of its own).
pub fn from_params(_params: &Params, common: &CommonParams) -> Result<Bbr, CcError> {
    Ok(Bbr::new(common.mss, common.initcwnd, common.seed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_pipe::Pipe;
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    /// An ACK of `bytes` at `now` with a rate sample at `rate` bytes/s starting a new round
    /// when `new_round` (prior_delivered = everything delivered so far).
    pub(super) fn ack(
        c: &Bbr,
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
    fn constants_match_the_draft() {
        assert!((STARTUP_PACING_GAIN - 4.0 * std::f64::consts::LN_2).abs() < 0.01);
        assert_eq!(DEFAULT_CWND_GAIN, 2.0);
        assert_eq!(DRAIN_PACING_GAIN, 0.5);
        assert_eq!(PROBE_RTT_CWND_GAIN, 0.5);
        assert_eq!(MIN_PIPE_CWND_SEGMENTS, 4);
        assert_eq!(MAX_BW_FILTER_LEN, 2);
        assert_eq!(EXTRA_ACKED_FILTER_LEN, 10);
        assert_eq!(PACING_MARGIN_PERCENT, 1);
        assert_eq!(LOSS_THRESH_PERCENT, 2);
        assert_eq!(BETA, 0.7);
        assert_eq!(HEADROOM, 0.15);
        assert_eq!(PROBE_RTT_INTERVAL, 5 * SECOND);
        assert_eq!(PROBE_RTT_DURATION, 200 * MS);
        assert_eq!(MIN_RTT_FILTER_LEN, 10 * SECOND);
    }

    #[test]
    fn initial_pacing_is_startup_gain_times_initcwnd_over_rtt() {
        // §5.6.2: no SRTT yet, 1 ms: 10 × 1000 B / 1 ms × 2.77 = 27.7 MB/s.
        let c = Bbr::new(MSS, 10, 0);
        assert_eq!(c.pacing_rate(), Some(27_700_000));
        assert_eq!(c.cwnd(), 10 * MSS);
        assert_eq!(c.phase(), Phase::Startup);
        assert_eq!(c.ssthresh(), u64::MAX);
        // Once an SRTT of 100 ms is known and no bandwidth sample exists: 277 kB/s.
        let mut c = Bbr::new(MSS, 10, 0);
        let mut a = ack(&c, 100 * MS, MSS, 0, 100 * MS, 9 * MSS, true);
        a.rate = None;
        c.on_ack(&a);
        assert_eq!(c.pacing_rate(), Some(277_000));
    }

    #[test]
    fn pacing_rate_is_gain_times_bw_less_one_percent() {
        let mut c = Bbr::new(MSS, 10, 0);
        c.on_ack(&ack(&c, 10 * MS, MSS, 10_000_000, 10 * MS, 9 * MSS, true));
        assert_eq!(c.max_bw(), 10_000_000);
        // Startup: 2.77 × 10 MB/s × 0.99.
        assert_eq!(c.pacing_rate(), Some(27_423_000));
    }

    #[test]
    fn cwnd_is_gain_times_bdp_plus_quanta() {
        let mut c = Bbr::new(MSS, 10, 0);
        // bw 10 MB/s, min RTT 10 ms: BDP 100 kB; Startup cwnd gain 2 → max_inflight 200 kB
        // (+ extra_acked, capped at 100 ms of bw, here one round's 1 kB).
        c.on_ack(&ack(&c, 10 * MS, MSS, 10_000_000, 10 * MS, 9 * MSS, true));
        assert_eq!(c.bdp_multiple(c.bw(), 1.0), 100_000);
        assert_eq!(c.max_inflight, 200_000 + c.extra_acked);
        // Quantization budget: never below 3 send quanta nor 4 MSS, +2 MSS in ProbeBW_UP.
        assert_eq!(c.send_quantum(), Some(27_423));
        assert_eq!(c.quantization_budget(0), 3 * 27_423);
        c.state = State::ProbeBw(ProbeBwPhase::Up);
        assert_eq!(c.quantization_budget(200_000), 202_000);
    }

    #[test]
    fn send_quantum_follows_the_draft() {
        let mut c = Bbr::new(MSS, 10, 0);
        c.pacing_rate = 100_000; // 0.8 Mbps: floor 1 MSS
        c.set_send_quantum();
        assert_eq!(c.send_quantum, MSS);
        c.pacing_rate = 1_000_000; // 8 Mbps: 1 ms = 1000 B, floor 2 MSS
        c.set_send_quantum();
        assert_eq!(c.send_quantum, 2 * MSS);
        c.pacing_rate = 10_000_000; // 1 ms = 10 kB
        c.set_send_quantum();
        assert_eq!(c.send_quantum, 10_000);
        c.pacing_rate = 1_000_000_000; // capped at 64 KB
        c.set_send_quantum();
        assert_eq!(c.send_quantum, 65_536);
    }

    #[test]
    fn fast_recovery_keeps_cwnd_and_an_rto_leaves_one_segment() {
        // §5.6.4.4: OnEnterFastRecovery saves cwnd and changes nothing else.
        let mut c = Bbr::new(MSS, 40, 0);
        c.on_congestion_event(&CongestionEvent {
            ecn: false,
            now: 0,
            bytes_lost: MSS,
            bytes_in_flight: 30 * MSS,
            mss: MSS,
        });
        assert_eq!(c.cwnd(), 40 * MSS);
        c.on_recovery_exit(0);
        assert_eq!(c.cwnd(), 40 * MSS);
        // OnEnterRTO: C.inflight (0 once everything is marked lost) + 1 SMSS...
        c.on_rto(MS, 40 * MSS);
        assert_eq!(c.cwnd(), MSS);
        // ...SetCwnd's floor of BBR.MinPipeCwnd on the next ACK...
        let a = ack(&c, 2 * MS, MSS, 1_000_000, 10 * MS, 0, true);
        c.on_ack(&a);
        assert_eq!(c.cwnd(), 4 * MSS);
        // ...and the saved 40 segments back when recovery ends.
        c.on_recovery_exit(3 * MS);
        assert_eq!(c.cwnd(), 40 * MSS);
    }

    #[test]
    fn ecn_marks_shrink_the_short_term_model_outside_probing() {
        // §3.7: CE marks count as congestion. In ProbeBW_CRUISE a marked round ends with
        // bw_shortterm = max(bw_latest, 0.7 × max_bw), as after a loss (§5.5.10.3).
        let mut c = Bbr::new(MSS, 10, 0);
        let mut now = 0;
        for _ in 0..4 {
            now += 100 * MS;
            c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 150 * MSS, true));
        }
        now += 10 * MS;
        c.on_ack(&ack(&c, now, MSS, 1_000_000, 100 * MS, 95 * MSS, false));
        assert_eq!(c.state(), State::ProbeBw(ProbeBwPhase::Cruise));
        let cwnd = c.cwnd();
        let mark = CongestionEvent {
            ecn: true,
            now,
            bytes_lost: 0,
            bytes_in_flight: 130 * MSS,
            mss: MSS,
        };
        c.on_congestion_event(&mark);
        assert_eq!(c.cwnd(), cwnd, "no cut");
        assert!(!c.in_recovery, "no recovery");
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 500_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.bw_shortterm, 700_000);
        assert_eq!(c.bw(), 700_000);
        // Without the mark the next round leaves the model alone.
        now += 100 * MS;
        c.on_ack(&ack(&c, now, MSS, 500_000, 100 * MS, 95 * MSS, true));
        assert_eq!(c.bw_shortterm, 700_000);
    }

    #[test]
    fn ideal_pipe_startup_finds_the_bottleneck_and_probe_bw_settles_near_it() {
        // 10 MB/s bottleneck, 40 ms RTT (BDP 400 kB = 400 packets), unlimited buffer.
        let rate = 10_000_000;
        let mut c = Bbr::new(MSS, 10, 42);
        let mut pipe = Pipe::new(rate, 40 * MS, MSS);
        let mut round_reached = None;
        let mut exit_round = None;
        pipe.run(&mut c, 3 * SECOND, |c, _| {
            if round_reached.is_none() && c.max_bw() >= rate * 95 / 100 {
                round_reached = Some(c.round_count());
            }
            if exit_round.is_none() && c.phase() != Phase::Startup {
                exit_round = Some(c.round_count());
            }
        });
        let reached = round_reached.expect("bw estimate reaches the bottleneck");
        // 10 packets → 400 packets doubling per round: ~log2(40) + 2 rounds.
        assert!(reached <= 10, "reached bottleneck bw in round {reached}");
        let exit = exit_round.expect("Startup ended");
        assert!(exit <= reached + 4, "exit in round {exit}");
        assert!(c.max_bw() <= rate * 101 / 100, "max_bw {}", c.max_bw());
        // ProbeBW: average pacing over the next 10 s is near the bottleneck.
        let (mut sum, mut n) = (0u128, 0u128);
        let mut saw_probe_rtt = false;
        let mut phases = std::collections::BTreeSet::new();
        pipe.run(&mut c, 13 * SECOND, |c, _| {
            if let State::ProbeBw(p) = c.state() {
                phases.insert(format!("{p:?}"));
                sum += c.pacing_rate().unwrap() as u128;
                n += 1;
            }
            saw_probe_rtt |= c.phase() == Phase::ProbeRtt;
        });
        let avg = (sum / n) as u64;
        assert!(
            avg >= rate * 88 / 100 && avg <= rate * 110 / 100,
            "average ProbeBW pacing {avg}"
        );
        assert_eq!(phases.len(), 4, "visited {phases:?}");
        assert!(saw_probe_rtt, "ProbeRTT every 5 s with a constant RTT");
        assert!((c.min_rtt() as i64 - (40 * MS) as i64).abs() < (2 * MS) as i64);
    }

    #[test]
    fn same_seed_same_probe_bw_waits_over_a_run() {
        let waits = |seed| {
            let mut c = Bbr::new(MSS, 10, seed);
            let mut pipe = Pipe::new(5_000_000, 20 * MS, MSS);
            let mut seen = Vec::new();
            pipe.run(&mut c, 8 * SECOND, |c, _| {
                if matches!(c.state(), State::ProbeBw(_)) && seen.last() != Some(&c.bw_probe_wait())
                {
                    seen.push(c.bw_probe_wait());
                }
            });
            seen
        };
        let a = waits(11);
        assert!(a.len() >= 3, "{a:?}");
        assert_eq!(a, waits(11));
        assert_ne!(a, waits(12));
    }

    #[test]
    fn registered_as_bbr_without_parameters() {
        use crate::params::ParamValue;
        use crate::registry::build_for_test;
        let c = build_for_test("bbr", 1448, &[]).unwrap();
        assert_eq!(c.phase(), Phase::Startup);
        assert_eq!(c.ssthresh(), u64::MAX);
        assert!(c.pacing_rate().is_some() && c.send_quantum().is_some());
        let err = build_for_test("bbr", 1448, &[("gain", ParamValue::Number(2.0))]).unwrap_err();
        assert!(err.0.contains("unknown parameter 'gain'"), "{err}");
    }

    #[derive(Clone, Debug)]
    enum Step {
        Ack {
            segs: u64,
            rate_kbps: u64,
            rtt_ms: u64,
            app_limited: bool,
            new_round: bool,
        },
        NoSample,
        Loss(u64),
        Exit,
        Rto,
        Idle(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            10 => (1u64..64, 0u64..10_000_000, 1u64..3000, any::<bool>(), any::<bool>()).prop_map(
                |(segs, rate_kbps, rtt_ms, app_limited, new_round)| Step::Ack {
                    segs, rate_kbps, rtt_ms, app_limited, new_round
                }
            ),
            1 => Just(Step::NoSample),
            1 => (0u64..100).prop_map(Step::Loss),
            1 => Just(Step::Exit),
            1 => Just(Step::Rto),
            1 => (1u64..20_000).prop_map(Step::Idle),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any event sequence: cwnd ≥ 4 MSS after an ACK, ≥ 1 MSS (an RTO's) otherwise, bounded, pacing finite and positive, send
        /// quantum within [1 MSS, 64 KB].
        #[test]
        fn random_events_keep_bbr_sane(seed in any::<u64>(), steps in proptest::collection::vec(step(), 1..400)) {
            let mut c = Bbr::new(MSS, 10, seed);
            let mut now = 0;
            for s in &steps {
                now += MS;
                match *s {
                    Step::Ack { segs, rate_kbps, rtt_ms, app_limited, new_round } => {
                        let in_flight = c.cwnd().saturating_sub(segs * MSS);
                        let mut a = ack(&c, now, segs * MSS, rate_kbps * 125, rtt_ms * MS, in_flight, new_round);
                        if let Some(rs) = a.rate.as_mut() { rs.is_app_limited = app_limited; }
                        c.on_ack(&a);
                    }
                    Step::NoSample => {
                        let mut a = ack(&c, now, MSS, 0, 5 * MS, c.cwnd() / 2, false);
                        a.rate = None;
                        c.on_ack(&a);
                    }
                    Step::Loss(segs) => c.on_congestion_event(&CongestionEvent { ecn: false,
                        now, bytes_lost: segs * MSS, bytes_in_flight: c.cwnd(), mss: MSS,
                    }),
                    Step::Exit => c.on_recovery_exit(now),
                    Step::Rto => c.on_rto(now, c.cwnd()),
                    Step::Idle(ms) => now += ms * MS,
                }
                let cwnd = c.cwnd();
                let acked = matches!(s, Step::Ack { .. } | Step::NoSample);
                let floor = if acked { 4 * MSS } else { MSS };
                prop_assert!(cwnd >= floor, "cwnd {cwnd} after {s:?}");
                prop_assert!(cwnd < 1 << 50, "cwnd {cwnd} after {s:?}");
                let rate = c.pacing_rate().unwrap();
                prop_assert!(rate > 0 && rate < 1 << 50, "pacing {rate} after {s:?}");
                let q = c.send_quantum().unwrap();
                prop_assert!((MSS..=SEND_QUANTUM_MAX.max(2 * MSS)).contains(&q));
                prop_assert!(c.pacing_gain().is_finite() && c.cwnd_gain().is_finite());
            }
        }
    }
}
