//! The swarm's engine side: [`SwarmSim`] is an [`Application`] of the engine's loop
//! ([`crate::engine::advance_with`]) that carries the peer wire of [`slowstart_apps::swarm`]
//! (whose module doc tells what the model follows of Eger et al.'s ns-2 module as the utp seed
//! ran it). The engine takes each access link's head packet and wakes each half-connection when
//! its deadline comes (one queue entry per half, [`Wake`]); here packets are routed through the core and handed to their half's transport, and
//! what a transport delivered, a window that opened and what fell due go to the peer wire,
//! which decides what to write ([`Network`], implemented by [`SwarmNet`]).

mod memory;
mod results;

pub use memory::peak_bytes_per_peer;

use slowstart_cc::{Controller, Phase};
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::receiver::Receiver;
use slowstart_transport::sender::{Sender, SenderStats};
use slowstart_transport::{
    notify, DataEnds, LazyConnection, Received, SenderEnd, SenderEvent, Settings, TimerKind, Wake,
};

use crate::engine::{Application, Engine, Event, Queue};
use crate::summary::{RunOutput, TransportTotals};
use crate::wheel::WheelQueue;
use crate::{SimError, SwarmStatus};
use slowstart_apps::swarm::{Due, HalfIo, LogEntry, Network, Swarm, Transport, WireHalf};
use slowstart_config::recorder::FlowRecorder;
use slowstart_config::trace::{FlowTrace, QueueRow, QueueTrace, Sampler};
use slowstart_config::{substream_seed, SeedStream};
use slowstart_config::{AccessConfig, FlowConfig, Messages, SimConfig};
use slowstart_link::channel::Channel;

/// The swarm's own events ([`Event::App`]): what fell due for the peer wire ([`Due`]) or the
/// queue sample, in one `u32`, its kind in the low three bits and its peer above (peers
/// number below 2^29). An `Event<SwarmEvent>` is then 8 bytes, as a flow's is; with the enum
/// inside it took 12, its payload at an odd offset, and the loop's copies of a popped event
/// were overlapping 8- and 4-byte moves whose reads stalled on store forwarding (issue #37: 6
/// to 12% of the loop's perf samples at 3 000 leechers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwarmEvent(u32);

const _: () = assert!(std::mem::size_of::<Event<SwarmEvent>>() == 8);

impl SwarmEvent {
    /// Each uplink's occupancy is sampled (every `queue_sample`).
    const QUEUE_SAMPLE: SwarmEvent = SwarmEvent(5);

    /// What fell due for the peer wire; `None`: the queue sample.
    #[inline(always)]
    fn due(self) -> Option<Due> {
        let peer = self.0 >> 3;
        Some(match self.0 & 7 {
            0 => Due::Arrival,
            1 => Due::Rechoke(peer),
            2 => Due::RequestTick(peer),
            3 => Due::Announce(peer),
            4 => Due::Leave(peer),
            _ => return None,
        })
    }
}

impl From<Due> for SwarmEvent {
    #[inline(always)]
    fn from(due: Due) -> Self {
        let (kind, peer) = match due {
            Due::Arrival => (0, 0),
            Due::Rechoke(p) => (1, p),
            Due::RequestTick(p) => (2, p),
            Due::Announce(p) => (3, p),
            Due::Leave(p) => (4, p),
        };
        debug_assert!(peer < 1 << 29, "peer {peer} beyond 29 bits");
        SwarmEvent(peer << 3 | kind)
    }
}

/// One direction of a connection: the uploader's data sender and the downloader's receiver
/// (once the uploader first writes to it), the downloader's control stream back to the
/// uploader, and the peer wire's record of both.
struct Half {
    /// The control stream's ends, and the data ends once made ([`SwarmNet::data_half`]).
    conn: LazyConnection,
    /// The engine's one wake-up for this half's timers.
    wake: Wake,
    dropped_data_bytes: u64,
    wire: WireHalf,
    /// Whose settings its data ends are made with and whose totals count its sender (the
    /// peer wire's choice, at `open`).
    transport: Transport,
    /// Its recorder in [`UploadTrace`], if its uploader is traced; else [`UNTRACED`].
    traced: u32,
}

const UNTRACED: u32 = u32::MAX;

/// The observer of the traced peers' uploads (`swarm.traced_peers`): a recorder per half, as
/// each flow has ([`FlowRecorder`]), and the flow trace they fill. Halves of other peers are
/// told nothing, at no cost but a comparison.
struct UploadTrace {
    peers: u32,
    halves: Vec<TracedHalf>,
    trace: FlowTrace,
    sampler: Sampler,
}

struct TracedHalf {
    recorder: FlowRecorder,
    /// The controller's phase at the last report, once the half's sender is made.
    phase: Option<Phase>,
}

impl UploadTrace {
    /// Half `h`'s recorder if `uploader` is traced, else [`UNTRACED`].
    fn trace_half(&mut self, h: u32, uploader: u32) -> u32 {
        if uploader >= self.peers {
            return UNTRACED;
        }
        let series = self.sampler.add_series() as u32;
        self.halves.push(TracedHalf {
            recorder: FlowRecorder::new(h, 0).in_series(series),
            phase: None,
        });
        series
    }

    /// Tell half `h`'s recorder, if it has one, what its sender did at `now`.
    #[inline(always)]
    fn notify(&mut self, half: &mut Half, now: u64, event: SenderEvent) {
        if half.traced != UNTRACED {
            self.record(half, now, event);
        }
    }

    /// Out of line: only traced halves come here.
    #[cold]
    #[inline(never)]
    fn record(&mut self, half: &mut Half, now: u64, event: SenderEvent) {
        let Some(data) = half.conn.data_mut() else {
            return;
        };
        let traced = &mut self.halves[half.traced as usize];
        let phase = traced.phase.get_or_insert(data.sender.phase());
        let mut obs = traced.recorder.observer(&mut self.trace, &mut self.sampler);
        notify(&mut data.sender, phase, now, event, &mut obs);
    }
}

impl Half {
    /// Add its sender's counts to its transport's totals (none before its first write).
    fn count_sender(&self, totals: &mut [TransportTotals; 2]) {
        if let Some(data) = self.conn.data() {
            totals[self.transport as usize].add(data.sender.stats());
        }
    }
}

/// What a half's data ends are made of, for one of the swarm's transports: its settings and
/// the transport's [`Settings`] derived from them once.
struct DataTransport {
    flow: FlowConfig,
    settings: Settings,
}

impl DataTransport {
    fn new(flow: &FlowConfig) -> Self {
        DataTransport {
            flow: flow.clone(),
            settings: flow.transport(),
        }
    }
}

/// The swarm's queue unless told otherwise ([`SwarmSim::with_queue`]): the timing wheel, whose
/// cost does not grow with the entries pending as the calendar's heap does (issue #37).
pub type SwarmQueue = WheelQueue<Event<SwarmEvent>>;

/// A BitTorrent swarm: an [`Application`] of the [`Engine`], whose queue is `Q`.
pub struct SwarmSim<Q = SwarmQueue> {
    name: String,
    /// The peer wire.
    app: Swarm,
    /// What carries it.
    net: SwarmNet<Q>,
    stale_packets: u64,
    queue_trace: QueueTrace,
    queue_sampler: Sampler,
    /// Uplinks are sampled every `queue_stride`-th round (a round every `queue_sample`, the
    /// first at 0): each time the trace thins its rows the stride doubles, so no round is
    /// sampled only to be thinned away.
    queue_stride: u64,
}

/// The network a swarm runs on: the loop's engine, every peer's access links (`up(p)`,
/// `down(p)`) and each half-connection's transport.
pub struct SwarmNet<Q> {
    engine: Engine<Q>,
    seed: u64,
    channels: Vec<Channel>,
    /// Per connection: `halves[c][i]`, `ends[c][i]` uploads to `ends[c][1 - i]`
    /// ([`Swarm::ends`]); `None` once the connection closed.
    halves: Vec<Option<Box<[Half; 2]>>>,
    /// The swarm's data transports, `tcp` and `utp` (by [`Transport`]), and the control
    /// streams' settings (`tcp`'s).
    data_transports: [DataTransport; 2],
    control: Settings,
    /// Halves with control bytes written during this event.
    dirty: Vec<u32>,
    /// Halves whose timers this event may have moved: woken anew after it if their deadline
    /// came earlier ([`Wake`]).
    touched: Vec<u32>,
    totals: [TransportTotals; 2],
    uploads: UploadTrace,
}

const fn up(peer: u32) -> u32 {
    2 * peer
}

const fn down(peer: u32) -> u32 {
    2 * peer + 1
}

impl SwarmSim {
    pub fn new(config: &SimConfig) -> Result<Self, SimError> {
        Self::with_queue(config)
    }
}

impl<Q: Queue<Event<SwarmEvent>>> SwarmSim<Q> {
    /// [`SwarmSim::new`] over a queue of kind `Q`.
    pub fn with_queue(config: &SimConfig) -> Result<Self, SimError> {
        config.validate()?;
        let cfg = config
            .swarm
            .clone()
            .ok_or_else(|| SimError("swarm: missing".into()))?;
        Ok(SwarmSim {
            name: config.name.clone(),
            net: SwarmNet {
                engine: Engine::new(
                    config.duration_ns,
                    cfg.tcp.cc.is_guest() || cfg.utp.cc.is_guest(),
                ),
                seed: config.seed,
                channels: Vec::new(),
                halves: Vec::new(),
                data_transports: [DataTransport::new(&cfg.tcp), DataTransport::new(&cfg.utp)],
                control: cfg.tcp.transport(),
                dirty: Vec::new(),
                touched: Vec::new(),
                totals: Default::default(),
                uploads: UploadTrace {
                    peers: u32::try_from(cfg.traced_peers).unwrap_or(u32::MAX),
                    halves: Vec::new(),
                    trace: FlowTrace::default(),
                    sampler: Sampler::new(config.trace.flow_interval_ns, config.trace.max_rows, 0),
                },
            },
            app: Swarm::new(cfg, config.seed),
            stale_packets: 0,
            queue_trace: QueueTrace::default(),
            queue_sampler: Sampler::new(0, config.trace.max_rows, 1),
            queue_stride: 1,
        })
    }

    /// Record choke decisions and requests, returned by [`SwarmSim::run_logged`].
    pub fn with_log(mut self) -> Self {
        self.app.record_log();
        self
    }

    pub fn run(self) -> RunOutput {
        self.run_logged().0
    }

    /// Run, and return the log (empty unless [`SwarmSim::with_log`]).
    pub fn run_logged(mut self) -> (RunOutput, Vec<LogEntry>) {
        let end = self.advance();
        let log = self.take_log();
        (self.finish(end), log)
    }

    /// The log so far (empty unless [`SwarmSim::with_log`]), taken.
    pub fn take_log(&mut self) -> Vec<LogEntry> {
        self.app.take_log()
    }

    /// Half-connections so far (ids `0..halves()`; closed ones have no ledger).
    pub fn halves(&self) -> u32 {
        2 * self.app.connections()
    }

    /// Run the event loop to the end (duration, or the completions asked for); the end time.
    pub fn advance(&mut self) -> u64 {
        self.advance_with(&mut |_| true)
    }

    /// [`SwarmSim::advance`], telling `progress` how far it got now and then; it stops early
    /// (and the summary says `interrupted`) when `progress` returns false.
    pub fn advance_with(&mut self, progress: crate::Progress) -> u64 {
        crate::engine::advance_with(self, progress)
    }

    // ---------------------------------------------------------------- transport and network

    /// The uploader of half `h` sends what its window allows, writing the next requested piece
    /// message whenever the previous one has left ([`Swarm::pump`]).
    #[inline(always)]
    fn pump(&mut self, h: u32) {
        self.app.pump(&mut self.net, h);
    }

    /// The engine took channel `c`'s head (`popped`): on to the far peer's downlink or to
    /// the peer.
    fn channel_head(&mut self, c: u32, popped: Option<Packet>) {
        // Access links are drop-tail: every event is an arrival.
        let Some(packet) = popped else {
            return;
        };
        if c.is_multiple_of(2) {
            // Through the core to the far peer's downlink.
            let (uploader, downloader) = self.app.ends(packet.flow);
            let to = if packet.to_receiver() {
                downloader
            } else {
                uploader
            };
            self.offer(down(to), packet);
        } else {
            self.deliver(packet);
        }
    }

    fn offer(&mut self, c: u32, packet: Packet) {
        let net = &mut self.net;
        let channel = &mut net.channels[c as usize];
        let mss = self.app.config().tcp.mss;
        if !net.engine.offer(c, channel, packet, mss) && packet.kind == Kind::Data {
            let t = self.app.half_transport(packet.flow);
            net.totals[t as usize].drops += 1;
            let h = packet.flow;
            if let Some(halves) = net.halves[(h / 2) as usize].as_mut() {
                halves[(h % 2) as usize].dropped_data_bytes += packet.len as u64;
            }
        }
    }

    fn deliver(&mut self, packet: Packet) {
        let h = packet.flow;
        let (c, i) = (h / 2, (h % 2) as usize);
        let now = self.net.engine.now;
        let Some(halves) = self.net.halves[c as usize].as_mut() else {
            self.stale_packets += 1;
            self.app.release_if_departed(&mut self.net, h);
            return;
        };
        self.net.touched.push(h);
        let half = &mut halves[i];
        match half
            .conn
            .handle_packet(now, &packet, &mut self.net.engine.io)
        {
            Received::Data { before, upto } => {
                if upto > before {
                    // Piece messages and (`messages = "with_data"`) the others, in stream order.
                    let arrived = half.wire.take_arrived(upto);
                    if !arrived.is_empty() {
                        self.app.on_arrived(&mut self.net, h, arrived);
                    }
                }
            }
            Received::Ack(outcome) => {
                self.net
                    .uploads
                    .notify(half, now, SenderEvent::Ack(outcome));
                self.pump(h)
            }
            Received::Request { advanced, upto } => {
                if advanced {
                    let msgs = half.wire.take_control(upto);
                    if !msgs.is_empty() {
                        self.app.on_control(&mut self.net, h, msgs);
                    }
                }
                // The control stream's ACK rides on data leaving now, or goes alone.
                let Some(halves) = self.net.halves[c as usize].as_mut() else {
                    return;
                };
                let mark = halves[i].conn.carry_request_ack();
                self.pump(h);
                let half = &mut self.net.halves[c as usize].as_mut().expect("open")[i];
                half.conn.ack_requests(now, mark, &mut self.net.engine.io);
            }
            // No handshake in a swarm: the transport starts established.
            Received::Nothing | Received::SynAck { .. } | Received::Unexpected => {}
        }
    }

    /// Send the control bytes written during the event (the engine then sends every packet
    /// and arms every timer produced).
    fn flush_control(&mut self) {
        let net = &mut self.net;
        let now = net.engine.now;
        for h in std::mem::take(&mut net.dirty) {
            let Some(halves) = net.halves[(h / 2) as usize].as_mut() else {
                continue;
            };
            net.touched.push(h);
            let half = &mut halves[(h % 2) as usize];
            let bytes = half.wire.take_unflushed();
            let data = half.conn.data_mut();
            if self.app.config().bittorrent.messages == Messages::WithData {
                // The messages were written to the data stream, which made its sender.
                if let Some(data) = data {
                    data.sender.try_send(now, &mut net.engine.io);
                }
                continue;
            }
            if let Some(data) = data {
                data.receiver.flush_ack(now, &mut net.engine.io);
            }
            half.conn.requests.write(now, bytes, &mut net.engine.io);
        }
    }

    /// After an event: a wake-up for each half it touched whose deadline came earlier than
    /// its pending one (an event may touch many: a `have` goes to every neighbour).
    fn wake_touched(&mut self) {
        let net = &mut self.net;
        for h in net.touched.drain(..) {
            if let Some(halves) = net.halves[(h / 2) as usize].as_mut() {
                let half = &mut halves[(h % 2) as usize];
                let at = half.wake.arm_at(half.conn.next_deadline());
                net.engine.wake(h, at);
            }
        }
    }

    /// Put a packet an endpoint sent on its peer's uplink.
    fn send_packet(&mut self, p: Packet) {
        let (uploader, downloader) = self.app.ends(p.flow);
        let from = if p.to_receiver() {
            uploader
        } else {
            downloader
        };
        self.offer(up(from), p);
    }

    /// Each uplink's occupancy and, with libtorrent's request queue, each downloading peer's
    /// requests outstanding ([`Swarm::sample_request_queues`]), every `queue_sample`; once the
    /// trace has thinned, uplinks only in the rounds it keeps (`queue_stride`).
    fn sample_queues(&mut self) {
        let now = self.net.engine.now;
        self.app.sample_request_queues();
        let every = self.app.config().queue_sample_ns;
        if (now / every).is_multiple_of(self.queue_stride) {
            self.sample_uplinks(now);
        }
        let next = now.saturating_add(every);
        self.net
            .engine
            .queue
            .push(next, Event::App(SwarmEvent::QUEUE_SAMPLE));
    }

    fn sample_uplinks(&mut self, now: u64) {
        let mut thinned = false;
        for p in 0..self.app.peers() {
            if !self.app.is_active(p) {
                continue;
            }
            let c = up(p);
            let (bytes, packets) = self.net.channels[c as usize].occupancy(now);
            thinned |= self.queue_trace.push(
                QueueRow {
                    t_ns: now,
                    link: c,
                    queue_bytes: bytes,
                    queue_packets: packets,
                },
                &mut self.queue_sampler,
            );
        }
        if thinned {
            self.queue_stride = self.queue_stride.saturating_mul(2);
        }
    }
}

impl<Q: Queue<Event<SwarmEvent>>> SwarmNet<Q> {
    /// Half `h`'s data ends, as the connection's opening made them before issue #37 (its
    /// controller's seed is the half's, drawn the same whenever it is made).
    #[cold]
    fn make_data(seed: u64, data: &DataTransport, h: u32) -> DataEnds {
        let common =
            data.flow
                .common_params(substream_seed(seed, SeedStream::Controller, h as u64));
        let cc = Controller::rebuild(&data.flow.cc, &common);
        DataEnds {
            sender: Sender::new(h, &data.settings, cc),
            receiver: Receiver::new(h, &data.settings, data.flow.size_bytes),
        }
    }
}

impl<Q: Queue<Event<SwarmEvent>>> Network for SwarmNet<Q> {
    #[inline(always)]
    fn now(&self) -> u64 {
        self.engine.now
    }

    #[inline(always)]
    fn schedule(&mut self, at: u64, due: Due) {
        self.engine.queue.push(at, Event::App(due.into()));
    }

    fn attach(&mut self, peer: u32, access: &AccessConfig, delay_ns: u64) {
        for (c, rate, queue) in [
            (up(peer), access.up_bps, access.up_queue),
            (down(peer), access.down_bps, access.down_queue),
        ] {
            let dir = slowstart_config::DirectionConfig::lossless(rate, delay_ns, queue);
            let name = if c.is_multiple_of(2) { "up" } else { "down" };
            let rng_seed = substream_seed(self.seed, SeedStream::Channel, c as u64);
            self.channels.push(Channel::new(
                format!("peer{peer}.{name}"),
                c,
                &dir,
                rng_seed,
            ));
        }
    }

    fn open(
        &mut self,
        c: u32,
        uploaders: [u32; 2],
        transports: [Transport; 2],
        wires: [WireHalf; 2],
    ) {
        debug_assert_eq!(c as usize, self.halves.len());
        let now = self.engine.now;
        let [wire0, wire1] = wires;
        let uploads = &mut self.uploads;
        let mut half = |h: u32, uploader: u32, transport: Transport, wire: WireHalf| Half {
            conn: LazyConnection::new(h, &self.control, now),
            wake: Wake::default(),
            dropped_data_bytes: 0,
            wire,
            transport,
            traced: uploads.trace_half(h, uploader),
        };
        let halves = Box::new([
            half(2 * c, uploaders[0], transports[0], wire0),
            half(2 * c + 1, uploaders[1], transports[1], wire1),
        ]);
        self.halves.push(Some(halves));
        self.touched.extend([2 * c, 2 * c + 1]);
    }

    fn close(&mut self, c: u32) {
        if let Some(halves) = self.halves[c as usize].take() {
            for half in halves.iter() {
                half.count_sender(&mut self.totals);
            }
        }
    }

    #[inline(always)]
    fn half(&mut self, h: u32) -> Option<HalfIo<'_>> {
        let half = &mut self.halves[(h / 2) as usize].as_mut()?[(h % 2) as usize];
        self.touched.push(h);
        Some(HalfIo {
            wire: &mut half.wire,
            sender: half.conn.data_mut().map(|d| &mut d.sender),
            now: self.engine.now,
            io: &mut self.engine.io,
        })
    }

    /// Out of line: called at a half's first write (and with `messages = "with_data"` at
    /// every message), not on the loop's hot path.
    #[inline(never)]
    fn data_half(&mut self, h: u32) -> Option<HalfIo<'_>> {
        let half = &mut self.halves[(h / 2) as usize].as_mut()?[(h % 2) as usize];
        self.touched.push(h);
        let (seed, data) = (self.seed, &self.data_transports[half.transport as usize]);
        let io = &mut self.engine.io;
        let made = half.conn.data().is_none();
        half.conn
            .data_or_make(|| Self::make_data(seed, data, h), io);
        if made {
            self.uploads
                .notify(half, self.engine.now, SenderEvent::Start);
        }
        let ends = half.conn.data_mut().expect("made above");
        let io = &mut self.engine.io;
        Some(HalfIo {
            wire: &mut half.wire,
            sender: Some(&mut ends.sender),
            now: self.engine.now,
            io,
        })
    }

    #[inline(always)]
    fn control_written(&mut self, h: u32) {
        self.dirty.push(h);
    }

    fn release_access_buffers(&mut self, peer: u32) {
        for c in [up(peer), down(peer)] {
            self.channels[c as usize].release_empty_buffers();
        }
    }

    fn release_half_buffers(&mut self, h: u32) -> bool {
        let Some(halves) = self.halves[(h / 2) as usize].as_mut() else {
            return true;
        };
        let half = &mut halves[(h % 2) as usize];
        half.release_empty_buffers();
        half.conn.data().is_none_or(|d| d.sender.drained())
    }
}

impl<Q: Queue<Event<SwarmEvent>>> Application for SwarmSim<Q> {
    type Event = SwarmEvent;
    type Queue = Q;

    #[inline(always)]
    fn engine(&mut self) -> &mut Engine<Q> {
        &mut self.net.engine
    }

    fn start(&mut self) {
        self.app.start(&mut self.net);
        self.net
            .engine
            .queue
            .push(0, Event::App(SwarmEvent::QUEUE_SAMPLE));
    }

    fn on_event(&mut self, event: SwarmEvent) {
        match event.due() {
            Some(due) => self.app.on_due(&mut self.net, due),
            None => self.sample_queues(),
        }
    }

    #[inline(always)]
    fn channel(&mut self, c: u32) -> (&mut Channel, &mut Engine<Q>) {
        (&mut self.net.channels[c as usize], &mut self.net.engine)
    }

    #[inline(always)]
    fn on_channel_head(&mut self, c: u32, packet: Option<Packet>) {
        self.channel_head(c, packet);
    }

    /// Half `h`'s timers that are due fire; after a retransmission timeout or a paced
    /// departure its uploader sends what it may.
    fn on_wake(&mut self, h: u32) {
        let now = self.net.engine.now;
        let (c, i) = ((h / 2) as usize, (h % 2) as usize);
        let acted_on = self.net.halves[c]
            .as_mut()
            .is_some_and(|halves| halves[i].wake.woke(now));
        if !acted_on {
            return;
        }
        self.net.touched.push(h);
        for kind in SenderEnd::TIMERS {
            let Some(halves) = self.net.halves[c].as_mut() else {
                return;
            };
            let half = &mut halves[i];
            let fired = half
                .conn
                .handle_sender_timeout(now, kind, &mut self.net.engine.io);
            if fired.is_some() && kind == TimerKind::Retransmission {
                self.net.uploads.notify(half, now, SenderEvent::Rto);
            }
            if fired.is_some() && matches!(kind, TimerKind::Retransmission | TimerKind::Pacing) {
                self.pump(h);
            }
        }
        if let Some(halves) = self.net.halves[c].as_mut() {
            halves[i]
                .conn
                .handle_receiver_timeouts(now, &mut self.net.engine.io, |_| {});
        }
    }

    #[inline(always)]
    fn before_flush(&mut self) {
        self.flush_control();
        self.wake_touched();
    }

    #[inline(always)]
    fn send(&mut self, packet: Packet) {
        self.send_packet(packet);
    }

    #[inline(always)]
    fn finished(&self) -> bool {
        self.app.stopped()
    }

    fn swarm_status(&self) -> Option<SwarmStatus> {
        Some(SwarmStatus {
            peers: u64::from(self.app.peers()),
            completions: self.app.completions(),
            stop_after: self.app.config().stop_after_completions,
        })
    }
}

impl TransportTotals {
    fn add(&mut self, s: &SenderStats) {
        self.data_packets_sent += s.data_packets_sent;
        self.retransmits += s.retransmits;
        self.rto_count += s.rto_count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_due_event_comes_back_from_the_queue_as_it_went_in() {
        let last = (1 << 29) - 1;
        for due in [
            Due::Arrival,
            Due::Rechoke(0),
            Due::RequestTick(7),
            Due::Announce(last),
            Due::Leave(123_456),
        ] {
            assert_eq!(SwarmEvent::from(due).due(), Some(due));
        }
        assert_eq!(SwarmEvent::QUEUE_SAMPLE.due(), None);
    }
}
