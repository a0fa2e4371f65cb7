//! A `slowstart_cc` controller behind quinn-proto's `congestion::Controller`.
//!
//! [`Adapter`] holds the controller and the state quinn does not give it: a delivery-rate
//! sampler, the recovery episode, bytes in flight between quinn's reports. Its entry points
//! ([`Adapter::sent`], [`Adapter::ack`], [`Adapter::end_acks`], [`Adapter::congestion`],
//! [`Adapter::mtu_update`]) take plain numbers, so a recorded call sequence
//! ([`crate::record`]) drives it without a connection; the `Controller` impl only converts
//! quinn's `Instant`s and `RttEstimator` to them.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};
use quinn_proto::RttEstimator;
use slowstart_cc::estimators::PacketRateState;
use slowstart_cc::{
    AckEvent, CcError, CcSpec, CommonParams, CongestionController, CongestionEvent, Nanos, Phase,
    RateSample, RateSampler, SentEvent,
};

use crate::trace::{Sink, TraceRow};

/// The algorithms that steer by one-way delay (`AckEvent::one_way_delay`, RFC 6817 §3.4.1):
/// QUIC carries no send timestamp to the receiver, so quinn cannot give them one.
pub const NEEDS_ONE_WAY_DELAY: &[&str] = &["ledbat", "utp"];

/// The initial window in packets when none is set: RFC 9002 §7.2 (10 datagrams), as the
/// core's scenarios default to (RFC 6928).
pub const DEFAULT_INITIAL_PACKETS: u64 = 10;

/// A delivery-rate snapshot is kept this many smoothed RTTs behind the newest acknowledged
/// packet; older packets have been declared lost (RFC 9002 §6.1.2: 9/8 RTT).
const SNAPSHOT_KEEP_RTTS: u64 = 2;
/// At most this many snapshots, so a connection whose ACKs stop cannot grow the queue.
const SNAPSHOT_LIMIT: usize = 1 << 16;

/// RTT as quinn's `RttEstimator` reports it before an ACK frame's own sample, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rtt {
    /// Smoothed RTT (`RttEstimator::get`).
    pub smoothed: Nanos,
    /// Minimum RTT (`RttEstimator::min`).
    pub min: Nanos,
    /// The larger of smoothed and latest RTT (`RttEstimator::conservative`).
    pub latest: Nanos,
}

impl Rtt {
    fn of(rtt: &RttEstimator) -> Self {
        Rtt {
            smoothed: rtt.get().as_nanos() as Nanos,
            min: rtt.min().as_nanos() as Nanos,
            latest: rtt.conservative().as_nanos() as Nanos,
        }
    }
}

/// Builds an [`Adapter`] per connection from a spec such as `"cubic:slow_start=hystart++"`:
/// pass it to `quinn::TransportConfig::congestion_controller_factory`.
#[derive(Clone, Debug)]
pub struct SlowstartFactory {
    spec: CcSpec,
    initial_packets: u64,
    seed: u64,
    trace: Option<Sink<TraceRow>>,
}

impl SlowstartFactory {
    /// The factory of `spec` (the core's grammar, [`slowstart_config::parse_cc`]), checked by building one
    /// controller: an unknown name, a bad parameter or an algorithm quinn cannot feed is an
    /// error here, not at the first connection.
    pub fn new(spec: &str) -> Result<Self, CcError> {
        let text = slowstart_config::parse_cc(spec, "cc").map_err(|e| CcError(e.0))?;
        Self::from_spec(text.to_spec())
    }

    /// As [`SlowstartFactory::new`], from a spec already parsed.
    pub fn from_spec(spec: CcSpec) -> Result<Self, CcError> {
        if NEEDS_ONE_WAY_DELAY.contains(&spec.name.as_str()) {
            return Err(CcError(format!(
                "cc: {} steers by one-way delay, which QUIC does not carry (no send timestamp \
                 reaches the receiver); quinn runs the loss- and RTT-based algorithms",
                spec.name
            )));
        }
        let factory = Self {
            spec,
            initial_packets: DEFAULT_INITIAL_PACKETS,
            seed: 0,
            trace: None,
        };
        slowstart_cc::Controller::new(&factory.spec, &factory.common(1200))?;
        Ok(factory)
    }

    /// Initial window in packets (at least 2, RFC 9002 §7.2's minimum window).
    pub fn initial_window_packets(mut self, packets: u64) -> Self {
        self.initial_packets = packets.max(2);
        self
    }

    /// Seed of controllers that randomise (BBR's ProbeBW); the same seed, the same choices.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Write each connection's state after every ACK frame and congestion event to `sink`.
    pub fn trace(mut self, sink: Sink<TraceRow>) -> Self {
        self.trace = Some(sink);
        self
    }

    /// The spec every connection's controller is built from.
    pub fn spec(&self) -> &CcSpec {
        &self.spec
    }

    fn common(&self, mtu: u16) -> CommonParams {
        CommonParams {
            mss: mtu as u64,
            initcwnd: self.initial_packets,
            // quinn counts bytes (RFC 9002 §7.3.1: the window grows by the bytes acknowledged).
            abc: true,
            seed: self.seed,
            // quinn paces every connection (quinn-proto connection/pacing.rs).
            paced: true,
        }
    }

    /// A controller for a connection starting now with `mtu`.
    pub fn build_adapter(&self, mtu: u16) -> Adapter {
        let controller = slowstart_cc::Controller::new(&self.spec, &self.common(mtu))
            // Checked in `from_spec`; only a user's constructor can fail now, and then its fault
            // holds the initial window (slowstart_cc::external).
            .unwrap_or_else(|_| slowstart_cc::Controller::rebuild(&self.spec, &self.common(mtu)));
        Adapter::new(controller, self.clone(), mtu)
    }
}

impl ControllerFactory for SlowstartFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let mut adapter = self.build_adapter(current_mtu);
        adapter.origin = Some(now);
        Box::new(adapter)
    }
}

/// One acknowledged packet of the ACK frame being processed.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    bytes: u64,
    newest_sent: Option<Nanos>,
    prior_in_flight: u64,
    ends_recovery: bool,
    rtt: Rtt,
}

/// A `slowstart_cc` controller fed by quinn's calls.
pub struct Adapter {
    /// `Mutex` only to be `Sync` as quinn asks (a user's controller is `Send`, not `Sync`); every
    /// call reaches it through `&mut self` (`Mutex::get_mut`), so it is never locked.
    cc: Mutex<slowstart_cc::Controller>,
    factory: SlowstartFactory,
    /// quinn's `Instant` of time 0 (the connection's creation).
    origin: Option<Instant>,
    mtu: u64,
    initial_window: u64,
    /// What `window()` and `metrics()` read, refreshed after every call that can change it.
    cwnd: u64,
    ssthresh: u64,
    pacing_rate: Option<u64>,
    phase: Phase,
    rate: RateSampler,
    /// Rate snapshots by send time, oldest first (quinn reports acks by send time only).
    snapshots: VecDeque<(Nanos, PacketRateState)>,
    /// Bytes in flight: quinn's count at each ACK frame's end, plus sends, minus losses.
    in_flight: u64,
    frame: Option<Frame>,
    /// Start of the latest recovery episode (RFC 9002 §7.3.2): losses of packets sent before
    /// it never start another, even after it ended (quinn's NewReno `recovery_start_time`).
    recovery_start: Option<Nanos>,
    in_recovery: bool,
    /// Latest RTT seen, for the trace and the snapshot pruning.
    rtt: Rtt,
    total_sent: u64,
    congestion_events: u64,
    persistent_congestions: u64,
    last_rate: Option<RateSample>,
}

impl std::fmt::Debug for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapter")
            .field("spec", &self.factory.spec.name)
            .field("cwnd", &self.cwnd)
            .field("phase", &self.phase)
            .finish()
    }
}

impl Adapter {
    fn new(controller: slowstart_cc::Controller, factory: SlowstartFactory, mtu: u16) -> Self {
        let mut a = Self {
            cc: Mutex::new(controller),
            initial_window: 0,
            factory,
            origin: None,
            mtu: mtu as u64,
            cwnd: 0,
            ssthresh: u64::MAX,
            pacing_rate: None,
            phase: Phase::SlowStart,
            rate: RateSampler::new(),
            snapshots: VecDeque::new(),
            in_flight: 0,
            frame: None,
            recovery_start: None,
            in_recovery: false,
            rtt: Rtt::default(),
            total_sent: 0,
            congestion_events: 0,
            persistent_congestions: 0,
            last_rate: None,
        };
        a.refresh();
        a.initial_window = a.cwnd;
        a
    }

    fn cc(&mut self) -> &mut slowstart_cc::Controller {
        self.cc.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    fn refresh(&mut self) {
        let floor = 2 * self.mtu;
        let cc = self.cc.get_mut().unwrap_or_else(|e| e.into_inner());
        // RFC 9002 §7.2: the window is never below 2 datagrams (kMinimumWindow); the core's
        // loss window after a timeout is 1 segment (RFC 5681 §3.1).
        self.cwnd = cc.cwnd().max(floor);
        self.ssthresh = cc.ssthresh();
        self.pacing_rate = cc.pacing_rate();
        self.phase = cc.phase();
    }

    fn row(&self, now: Nanos) {
        if let Some(sink) = &self.factory.trace {
            sink.push(TraceRow {
                t_ns: now,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
                in_flight: self.in_flight,
                srtt_ns: self.rtt.smoothed,
                delivered: self.rate.delivered(),
                phase: self.phase.name(),
            });
        }
    }

    /// The window quinn is given (`Controller::window`), bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// The controller's phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The controller's pacing rate (bytes/s), if it sets one. quinn paces at 1.25 cwnd/srtt
    /// whatever this says (quinn-proto connection/pacing.rs); it reaches quinn's qlog only.
    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate
    }

    /// The controller's slow-start threshold in bytes, `u64::MAX` when unset.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Congestion events given to the controller (one per recovery episode).
    pub fn congestion_events(&self) -> u64 {
        self.congestion_events
    }

    /// Persistent congestions given to the controller as timeouts.
    pub fn persistent_congestions(&self) -> u64 {
        self.persistent_congestions
    }

    /// The delivery-rate sample of the last ACK frame, if it gave one.
    pub fn last_rate(&self) -> Option<RateSample> {
        self.last_rate
    }

    /// Bytes delivered so far, as the rate sampler counts them.
    pub fn delivered(&self) -> u64 {
        self.rate.delivered()
    }

    /// quinn sent `bytes` (one datagram, or several as one GSO batch) at `now`.
    pub fn sent(&mut self, now: Nanos, bytes: u64) {
        let snapshot = self.rate.on_packet_sent(now, self.in_flight);
        match self.snapshots.back() {
            Some((t, _)) if *t == now => {}
            _ => {
                if self.snapshots.len() == SNAPSHOT_LIMIT {
                    self.snapshots.pop_front();
                }
                self.snapshots.push_back((now, snapshot));
            }
        }
        self.in_flight += bytes;
        self.total_sent += bytes;
        let event = SentEvent {
            now,
            bytes,
            bytes_in_flight: self.in_flight,
            total_sent: self.total_sent,
            retransmission: false,
        };
        self.cc().on_packet_sent(&event);
    }

    /// quinn acknowledged one packet of `bytes`, sent at `sent`; `rtt` is its estimator before
    /// this frame's sample. The controller hears of the frame at [`Adapter::end_acks`].
    pub fn ack(&mut self, now: Nanos, sent: Nanos, bytes: u64, rtt: Rtt) {
        let in_flight = self.in_flight;
        let frame = self.frame.get_or_insert(Frame {
            prior_in_flight: in_flight,
            rtt,
            ..Default::default()
        });
        frame.bytes += bytes;
        frame.newest_sent = Some(frame.newest_sent.map_or(sent, |s| s.max(sent)));
        // RFC 9002 §7.3.2: recovery ends when a packet sent after its start is acknowledged.
        if self.in_recovery && self.recovery_start.is_some_and(|start| sent > start) {
            frame.ends_recovery = true;
        }
        let i = self.snapshots.partition_point(|(t, _)| *t < sent);
        if let Some((t, snapshot)) = self.snapshots.get(i) {
            if *t == sent {
                let snapshot = *snapshot;
                self.rate.on_packet_delivered(now, &snapshot, bytes);
            }
        }
    }

    /// The ACK frame is processed: quinn counts `in_flight` bytes now; `app_limited` is whether
    /// its last send found no data with the window open.
    pub fn end_acks(&mut self, now: Nanos, in_flight: u64, app_limited: bool) {
        self.in_flight = in_flight;
        let Some(frame) = self.frame.take() else {
            return;
        };
        let newest = frame.newest_sent.unwrap_or(now);
        let sample = now.saturating_sub(newest);
        let min_rtt = if frame.rtt.min == 0 {
            sample
        } else {
            frame.rtt.min.min(sample)
        };
        // (min_rtt needs no such care: the sample is below an initial RTT that was never met.)
        // Before its first sample quinn's estimator answers its initial RTT (333 ms) for all
        // three; the frame's own sample is then the better estimate.
        let unsampled = frame.rtt.smoothed == frame.rtt.min && frame.rtt.min == frame.rtt.latest;
        let srtt = if frame.rtt.smoothed == 0 || unsampled {
            sample
        } else {
            frame.rtt.smoothed
        };
        self.rtt = Rtt {
            smoothed: srtt,
            min: min_rtt,
            latest: sample,
        };
        if app_limited {
            self.rate.on_app_limited(in_flight);
        }
        let rate = self.rate.take_sample(min_rtt);
        self.last_rate = rate;
        let keep_after = newest.saturating_sub(SNAPSHOT_KEEP_RTTS * srtt.max(1));
        while self.snapshots.front().is_some_and(|(t, _)| *t < keep_after) {
            self.snapshots.pop_front();
        }
        if frame.ends_recovery {
            self.in_recovery = false;
            self.cc().on_recovery_exit(now);
        }
        let event = AckEvent {
            now,
            bytes_acked: frame.bytes,
            mss: self.mtu,
            rtt: Some(sample),
            srtt,
            min_rtt,
            // QUIC carries no send timestamp: refused algorithms are NEEDS_ONE_WAY_DELAY.
            one_way_delay: None,
            rate,
            delivered: self.rate.delivered(),
            prior_in_flight: frame.prior_in_flight,
            bytes_in_flight: in_flight,
            cwnd_limited: !app_limited,
            sent_before_cwnd_block: !app_limited,
            in_recovery: self.in_recovery,
        };
        self.cc().on_ack(&event);
        self.refresh();
        self.row(now);
    }

    /// quinn declared packets lost (or saw ECN-CE, `lost_bytes` 0), the newest sent at
    /// `sent`. One recovery episode gives one congestion event (RFC 9002 §7.3.2: losses of
    /// packets sent before the episode started do not reduce again); persistent congestion
    /// (§7.6) is a timeout.
    pub fn congestion(&mut self, now: Nanos, sent: Nanos, persistent: bool, lost_bytes: u64) {
        self.in_flight = self.in_flight.saturating_sub(lost_bytes);
        let in_flight = self.in_flight;
        if persistent {
            self.persistent_congestions += 1;
            self.recovery_start = Some(now);
            self.in_recovery = true;
            self.cc().on_rto(now, in_flight);
        } else if self.recovery_start.is_none_or(|start| sent > start) {
            self.congestion_events += 1;
            self.recovery_start = Some(now);
            self.in_recovery = true;
            let event = CongestionEvent {
                now,
                ecn: lost_bytes == 0,
                bytes_lost: lost_bytes,
                bytes_in_flight: in_flight + lost_bytes,
                mss: self.mtu,
            };
            self.cc().on_congestion_event(&event);
        } else {
            return;
        }
        self.refresh();
        self.row(now);
    }

    /// Path MTU discovery found a larger datagram size: events from now on carry it as the MSS.
    /// A controller keeps the initial window it was built with.
    pub fn mtu_update(&mut self, mtu: u16) {
        self.mtu = mtu as u64;
        self.refresh();
    }

    fn ns(&self, t: Instant) -> Nanos {
        self.origin
            .map_or(0, |o| t.saturating_duration_since(o).as_nanos() as Nanos)
    }
}

impl Controller for Adapter {
    fn on_sent(&mut self, now: Instant, bytes: u64, _last_packet_number: u64) {
        if self.origin.is_none() {
            self.origin = Some(now);
        }
        self.sent(self.ns(now), bytes);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        _app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.ack(self.ns(now), self.ns(sent), bytes, Rtt::of(rtt));
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        _largest_packet_num_acked: Option<u64>,
    ) {
        self.end_acks(self.ns(now), in_flight, app_limited);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.congestion(
            self.ns(now),
            self.ns(sent),
            is_persistent_congestion,
            lost_bytes,
        );
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut m = ControllerMetrics::default();
        m.congestion_window = self.cwnd;
        m.ssthresh = (self.ssthresh != u64::MAX).then_some(self.ssthresh);
        // qlog's pacing rate is in bits per second.
        m.pacing_rate = self.pacing_rate.map(|b| b.saturating_mul(8));
        m
    }

    /// quinn clones a path's controller when only the peer's port changed (NAT rebinding,
    /// quinn-proto connection/paths.rs `from_previous`). The core's controllers are not
    /// `Clone` (a user's is a live instance), so the new path starts a fresh controller, as
    /// RFC 9000 §9.4 has it for a new address.
    fn clone_box(&self) -> Box<dyn Controller> {
        let mut fresh = self.factory.build_adapter(self.mtu as u16);
        fresh.origin = self.origin;
        Box::new(fresh)
    }

    fn initial_window(&self) -> u64 {
        self.initial_window
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
