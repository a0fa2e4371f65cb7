//! The flows' simulation: topology, flows (a connection and an application each), cross
//! traffic, metrics and traces, run by the engine's loop ([`crate::engine`]) as its
//! [`Application`]: it starts the flows, routes each packet a link delivers or an endpoint
//! sends, and reacts to what a connection's packet or timer changed.

use slowstart_cc::CcSpec;
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::State;
use slowstart_transport::{ConnectionRecipe, EarlierReceivers, Io, Observer, Session};

use crate::engine::{Application, Engine, Event, EventQueue, Queue};
use crate::export::qlog::Qlogs;
use crate::export::{tcp::TcpView, Captures, ExportDirs};
use crate::summary::{seconds, FlowSummary, RunKind, RunOutput, Summary};
use crate::SimError;
use slowstart_apps::App;
use slowstart_config::trace::{AppTrace, FlowTrace, QueueRow, QueueTrace, Sampler};
use slowstart_config::SimConfig;
use slowstart_config::{stall_threshold, substream_seed, FlowRecorder, SeedStream};
use slowstart_link::channel::Channel;
use slowstart_link::cross::CrossSource;
pub use slowstart_link::summary::LinkSummary;
use slowstart_link::topology::Topology;

/// A flow's data packets the links dropped (the sender's own measurements are its
/// [`FlowRecorder`]'s).
#[derive(Clone, Debug, Default)]
struct FlowDrops {
    drops: u64,
    drop_bytes: u64,
    slow_start_drops: u64,
}

#[derive(Clone, Copy)]
struct Route {
    src: u32,
    dst: u32,
    mss: u64,
}

struct Flow {
    /// What each of its connections is made from (a web flow without keep-alive opens one per
    /// object).
    recipe: ConnectionRecipe,
    /// The current connection; packets of earlier ones are dropped on arrival.
    conn: u8,
    /// What the earlier connections' receivers counted.
    earlier: EarlierReceivers,
    start_ns: u64,
    handshake: bool,
    /// The connection (the data sender and the request stream's receiver at `src`, the data
    /// receiver and the request stream's sender at `dst`) and its application.
    session: Session<App>,
    /// Finished (sender done for bulk, the application's own verdict otherwise).
    done: bool,
    /// When an application flow finished.
    app_done_ns: Option<u64>,
    base_rtt_ns: u64,
    bottleneck_bps: u64,
    /// What the sender did: its trace rows, summary metrics and counts over every connection.
    recorder: FlowRecorder,
    drops: FlowDrops,
}

fn cc_label(spec: &CcSpec) -> String {
    if spec.params.is_empty() {
        return spec.name.clone();
    }
    let params: Vec<String> = spec
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!("{}:{}", spec.name, params.join(",")).replace('"', "")
}

/// The flows' own event ([`Event::App`]): the flow of this id starts its application; past the
/// flows' ids, a cross-traffic source sends its next packet (one variant for both: a fourth kind of
/// event would turn the loop's dispatch into a jump table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowStart(pub u32);

/// The flows' queue unless told otherwise ([`Simulation::with_queue`]).
pub type FlowQueue = EventQueue<Event<FlowStart>>;

/// Flows over a topology, with their applications, cross traffic, metrics and traces: an
/// [`Application`] of the [`Engine`], whose queue is `Q`.
pub struct Simulation<Q = FlowQueue> {
    name: String,
    seed: u64,
    /// Run to the duration even once every flow is done (SimConfig::run_to_end).
    run_to_end: bool,
    /// Flows whose sender is not done; the run ends early when it reaches 0.
    unfinished_flows: usize,
    engine: Engine<Q>,
    topo: Topology,
    flows: Vec<Flow>,
    /// Per flow, then per cross source, what forwarding a packet needs, apart from the flows'
    /// large state: with thousands of flows, a packet crossing a router then touches one small
    /// record.
    routes: Vec<Route>,
    /// Cross-traffic sources; their packets carry ids after the flows' (see `cross`). They do
    /// not keep the run going: it ends when every flow is done, as without them.
    cross: Vec<CrossSource>,
    flow_trace: FlowTrace,
    flow_sampler: Sampler,
    queue_trace: QueueTrace,
    queue_sampler: Sampler,
    app_trace: AppTrace,
    app_sampler: Sampler,
    /// `--pcap` and `--qlog`, when asked for.
    captures: Option<Box<Captures>>,
    qlogs: Option<Box<Qlogs>>,
    /// Where trace rows go as the run goes (`stream_traces`), and why it stopped taking them.
    stream: Option<TraceStream>,
    stream_error: Option<String>,
}

/// Trace rows handed over during a run: each table's rows since the last chunk, and the names
/// their codes index (the phases are [`slowstart_cc::Phase::ALL`]'s).
pub struct TraceChunk<'a> {
    pub flows: FlowTrace,
    pub queues: QueueTrace,
    pub apps: AppTrace,
    pub link_names: &'a [&'a str],
}

/// Takes each chunk of trace rows (to write it out); an error stops the run, named in the
/// output's `export_error`.
pub type TraceStream = Box<dyn FnMut(TraceChunk) -> Result<(), String>>;

/// Rows a streamed trace holds before it hands them over (checked every
/// [`PROGRESS_EVERY`](crate::PROGRESS_EVERY) events): the run's memory stays that of this many
/// rows, whatever its length.
pub const STREAM_CHUNK_ROWS: usize = 1 << 16;

impl Simulation {
    pub fn new(cfg: &SimConfig) -> Result<Self, SimError> {
        Self::with_queue(cfg)
    }
}

impl<Q: Queue<Event<FlowStart>>> Simulation<Q> {
    /// [`Simulation::new`] over a queue of kind `Q`.
    pub fn with_queue(cfg: &SimConfig) -> Result<Self, SimError> {
        cfg.validate()?;
        let topo = Topology::build(cfg)?;
        let mut flows = Vec::with_capacity(cfg.flows.len());
        let mut routes = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            let seed = substream_seed(cfg.seed, SeedStream::Controller, i as u64);
            let mut recipe = f.connection_recipe(i as u32, seed);
            let cc = recipe
                .controller()
                .map_err(|e| SimError(format!("flow.{i}.{e}")))?;
            let (src, dst) = (topo.node(&f.src), topo.node(&f.dst));
            routes.push(Route {
                src,
                dst,
                mss: f.mss,
            });
            let forward = topo.route(src, dst);
            let reverse = topo.route(dst, src);
            let base_rtt_ns: u64 = forward
                .iter()
                .chain(reverse.iter())
                .map(|&c| topo.channels[c as usize].delay_ns)
                .sum();
            let bottleneck_bps = forward
                .iter()
                .map(|&c| topo.channels[c as usize].rate_bps)
                .min()
                .unwrap_or(u64::MAX);
            // The largest window the sender can use, in whole segments.
            let window_cap = match (f.max_window_bytes, f.max_rwnd_bytes) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
            .map(|cap| cap / f.mss * f.mss);
            recipe.stall_threshold = Some(stall_threshold(
                bottleneck_bps,
                base_rtt_ns,
                f.mss,
                f.header_bytes,
            ));
            let ends = recipe.connection(cc, None);
            flows.push(Flow {
                recipe,
                conn: 0,
                earlier: EarlierReceivers::default(),
                start_ns: f.start_ns,
                handshake: f.handshake,
                session: Session::new(ends, App::new(f)),
                done: false,
                app_done_ns: None,
                base_rtt_ns,
                bottleneck_bps,
                recorder: FlowRecorder::new(i as u32, 0).with_path(
                    bottleneck_bps,
                    base_rtt_ns,
                    window_cap,
                ),
                drops: FlowDrops::default(),
            });
        }
        let n_flows = flows.len();
        let mut cross = Vec::with_capacity(cfg.cross.len());
        for (k, c) in cfg.cross.iter().enumerate() {
            let (src, dst) = (topo.node(&c.src), topo.node(&c.dst));
            if topo.next_hop(src, dst).is_none() {
                return Err(SimError(format!(
                    "cross.{k}: no route from '{}' to '{}'",
                    c.src, c.dst
                )));
            }
            // Cross packets are forwarded by the flows' route table, after the flows' entries
            // (no MSS: scheduled drops number flow segments only).
            routes.push(Route { src, dst, mss: 1 });
            let id = (n_flows + k) as u32;
            let seed = substream_seed(cfg.seed, SeedStream::CrossSource, k as u64);
            cross.push(CrossSource::new(c, id, src, dst, cfg.duration_ns, seed));
        }
        let n_channels = topo.channels.len();
        Ok(Simulation {
            name: cfg.name.clone(),
            seed: cfg.seed,
            run_to_end: cfg.run_to_end,
            unfinished_flows: n_flows,
            engine: Engine::new(cfg.duration_ns, cfg.flows.iter().any(|f| f.cc.is_guest())),
            topo,
            flows,
            routes,
            cross,
            flow_trace: FlowTrace::default(),
            flow_sampler: Sampler::new(cfg.trace.flow_interval_ns, cfg.trace.max_rows, n_flows),
            queue_trace: QueueTrace::default(),
            queue_sampler: Sampler::new(
                cfg.trace.queue_interval_ns,
                cfg.trace.max_rows,
                n_channels,
            ),
            app_trace: AppTrace::default(),
            app_sampler: Sampler::new(cfg.trace.flow_interval_ns, cfg.trace.max_rows, n_flows),
            captures: None,
            qlogs: None,
            stream: None,
            stream_error: None,
        })
    }

    /// Write captures and qlog files as the run goes (see [`crate::export`]).
    /// Hand the trace rows to `stream` as the run goes, in chunks of about
    /// [`STREAM_CHUNK_ROWS`], instead of keeping them (and thinning them at `trace.max_rows`):
    /// a run of any length keeps every sampled row in bounded memory. What is left at the end
    /// is the output's traces, as without a stream.
    pub fn stream_traces(&mut self, stream: TraceStream) {
        for sampler in [
            &mut self.flow_sampler,
            &mut self.queue_sampler,
            &mut self.app_sampler,
        ] {
            sampler.never_thin();
        }
        self.stream = Some(stream);
    }

    /// The rows held so far, to the stream; false (the run stops) if it failed.
    fn hand_over_traces(&mut self) -> bool {
        let Some(stream) = self.stream.as_mut() else {
            return true;
        };
        let links: Vec<&str> = self.topo.channels.iter().map(|c| c.name.as_str()).collect();
        let chunk = TraceChunk {
            flows: std::mem::take(&mut self.flow_trace),
            queues: std::mem::take(&mut self.queue_trace),
            apps: std::mem::take(&mut self.app_trace),
            link_names: &links,
        };
        match stream(chunk) {
            Ok(()) => true,
            Err(e) => {
                self.stream = None;
                self.stream_error = Some(e);
                false
            }
        }
    }

    pub fn set_exports(&mut self, dirs: &ExportDirs) -> Result<(), SimError> {
        if let Some(dir) = &dirs.pcap {
            let views = self
                .flows
                .iter()
                .zip(&self.routes)
                .enumerate()
                .map(|(i, (f, r))| {
                    let s = &f.recipe.settings;
                    TcpView::new(i as u32, r.src, r.dst, r.mss, s.max_rwnd_bytes, s.ecn)
                })
                .collect();
            let links: Vec<&str> = self.topo.channels.iter().map(|c| c.name.as_str()).collect();
            self.captures = Some(Box::new(Captures::new(dir, &links, views)?));
        }
        if let Some(dir) = &dirs.qlog {
            let titles: Vec<String> = self.flows.iter().map(|f| cc_label(&f.recipe.cc)).collect();
            self.qlogs = Some(Box::new(Qlogs::new(dir, &self.name, self.seed, &titles)?));
            for f in &mut self.flows {
                f.session.conn.src.sender.log_losses(true);
            }
        }
        Ok(())
    }

    pub fn run(mut self) -> RunOutput {
        let end = self.advance();
        self.finish(end)
    }

    /// Run the event loop to the end (duration reached or every flow done); returns the end time.
    pub fn advance(&mut self) -> u64 {
        self.advance_with(&mut |_| true)
    }

    /// [`Simulation::advance`], telling `progress` how far it got now and then; it stops early
    /// (and the summary says `interrupted`) when `progress` returns false.
    pub fn advance_with(&mut self, progress: crate::Progress) -> u64 {
        crate::engine::advance_with(self, progress)
    }

    /// Payload bytes of flow `f`: (sent, received, dropped, held in links). Every byte sent is
    /// received, dropped or still in a link, so `sent == received + dropped + held`.
    pub fn byte_ledger(&self, f: usize) -> (u64, u64, u64, u64) {
        let flow = &self.flows[f];
        let held = self
            .topo
            .channels
            .iter()
            .map(|c| c.held_data_bytes(f as u32))
            .sum();
        (
            flow.session.conn.src.sender.stats().data_bytes_sent,
            flow.session.conn.dst.receiver.data_bytes_received(),
            flow.drops.drop_bytes,
            held,
        )
    }

    /// Bytes on the wire of cross source `k`: (sent, delivered, dropped, held in links), with
    /// `sent == delivered + dropped + held`.
    pub fn cross_ledger(&self, k: usize) -> (u64, u64, u64, u64) {
        self.cross[k].ledger(&self.topo.channels)
    }

    /// Cross source `k` sends its packet due now and schedules the next. The cross paths stay
    /// out of line (and cold), so the flows' event loop compiles as without them.
    #[cold]
    #[inline(never)]
    fn cross_send(&mut self, k: usize) {
        let s = &mut self.cross[k];
        let packet = s.send(self.engine.now);
        let (src, dst) = (s.src, s.dst);
        if let Some(t) = s.next_send() {
            self.engine
                .queue
                .push(t, Event::App(FlowStart(s.packet_id)));
        }
        self.forward(src, dst, packet);
    }

    #[cold]
    #[inline(never)]
    fn cross_dropped(&mut self, packet: &Packet) {
        let k = packet.flow as usize - self.flows.len();
        self.cross[k].dropped(packet);
    }

    /// A cross packet reached its destination.
    #[cold]
    #[inline(never)]
    fn cross_delivered(&mut self, packet: &Packet) {
        let k = packet.flow as usize - self.flows.len();
        self.cross[k].delivered(packet);
    }

    /// The engine took channel `c`'s head (`popped`): deliver it or forward it.
    fn channel_head(&mut self, c: u32, popped: Option<Packet>) {
        let channel = &self.topo.channels[c as usize];
        let node = channel.to_node;
        if !channel.dropped.is_empty() {
            self.aqm_drops(c);
        }
        let Some(packet) = popped else {
            return;
        };
        let route = self.routes[packet.flow as usize];
        let dest = if packet.to_receiver() {
            route.dst
        } else {
            route.src
        };
        if node == dest {
            self.deliver(packet);
        } else {
            self.forward(node, dest, packet);
        }
    }

    fn forward(&mut self, node: u32, dest: u32, packet: Packet) {
        let c = self
            .topo
            .next_hop(node, dest)
            .expect("routes checked at build");
        let mss = self.routes[packet.flow as usize].mss;
        let now = self.engine.now;
        if let Some(x) = self.captures.as_deref_mut() {
            x.on_link(c, now, &packet);
        }
        let channel = &mut self.topo.channels[c as usize];
        let queued = self.engine.offer(c, channel, packet, mss);
        let aqm_dropped = !channel.dropped.is_empty();
        if !queued {
            self.count_drop(&packet);
        }
        if aqm_dropped {
            self.aqm_drops(c);
        }
        if self.queue_sampler.due(c as usize, now, false) {
            let (bytes, packets) = self.topo.channels[c as usize].backlog();
            self.queue_trace.push(
                QueueRow {
                    t_ns: now,
                    link: c,
                    queue_bytes: bytes,
                    queue_packets: packets,
                },
                &mut self.queue_sampler,
            );
        }
    }

    fn count_drop(&mut self, packet: &Packet) {
        if packet.kind == Kind::Data {
            let Some(flow) = self.flows.get_mut(packet.flow as usize) else {
                return self.cross_dropped(packet);
            };
            flow.drops.drops += 1;
            flow.drops.drop_bytes += packet.len as u64;
            if flow.session.conn.src.sender.phase().is_initial_slow_start() {
                flow.drops.slow_start_drops += 1;
            }
        }
    }

    /// Account the packets channel `c`'s queue discipline dropped after accepting them.
    fn aqm_drops(&mut self, c: u32) {
        let mut dropped = std::mem::take(&mut self.topo.channels[c as usize].dropped);
        for p in &dropped {
            self.count_drop(p);
        }
        dropped.clear();
        self.topo.channels[c as usize].dropped = dropped;
    }

    /// Flow `f`'s session, the observer of its sender (its recorder, its qlog file if any)
    /// and the engine's [`Io`].
    #[inline(always)]
    fn session(&mut self, f: usize) -> (&mut Session<App>, impl Observer + '_, &mut Io) {
        let flow = &mut self.flows[f];
        let qlog = self.qlogs.as_deref_mut().map(|x| x.flow(f));
        let recorder = flow
            .recorder
            .observer(&mut self.flow_trace, &mut self.flow_sampler);
        (&mut flow.session, (recorder, qlog), &mut self.engine.io)
    }

    /// Replace flow `f`'s connection by a new one: fresh endpoints and controller, a new
    /// handshake; packets of the old connection still in the network are dropped on arrival.
    fn reconnect(&mut self, f: usize) {
        let now = self.engine.now;
        let flow = &mut self.flows[f];
        let recipe = &flow.recipe;
        let cc = recipe.rebuilt_controller();
        let mut conn = recipe.connection(cc, Some(&flow.session.conn.dst));
        if self.qlogs.is_some() {
            conn.src.sender.log_losses(true);
        }
        let old = flow.session.replace_connection(conn);
        flow.earlier.add(&old.dst.receiver);
        flow.conn = flow.conn.wrapping_add(1);
        let handshake = flow.handshake;
        let (session, mut obs, io) = self.session(f);
        obs.on_replaced(now, &old.src.sender);
        session.open(now, f as u32, handshake, io, &mut obs);
    }

    fn flow_start(&mut self, f: usize) {
        if f >= self.flows.len() {
            return self.cross_send(f - self.flows.len());
        }
        let now = self.engine.now;
        let handshake = self.flows[f].handshake;
        {
            let (session, mut obs, io) = self.session(f);
            session.start(now, f as u32, handshake, io, &mut obs);
        }
        self.arm(f);
        self.after_app_event(f);
    }

    fn deliver(&mut self, packet: Packet) {
        let f = packet.flow as usize;
        let now = self.engine.now;
        let Some(flow) = self.flows.get_mut(f) else {
            return self.cross_delivered(&packet);
        };
        if packet.conn != flow.conn {
            return; // from a connection this flow has replaced
        }
        if let Some(x) = self.captures.as_deref_mut() {
            x.on_delivered(&packet);
        }
        let out = {
            let (session, mut obs, io) = self.session(f);
            session.handle_packet(now, &packet, io, &mut obs)
        };
        if out.reconnect {
            self.reconnect(f);
        }
        self.arm(f);
        if out.app {
            self.after_app_event(f);
        } else if out.acked {
            self.check_done(f);
        }
    }

    /// Record the application's series row, if due, and whether the flow finished.
    fn after_app_event(&mut self, f: usize) {
        let now = self.engine.now;
        let flow = &mut self.flows[f];
        if let Some((row, forced)) = flow.session.app.row(now, f as u32) {
            if self.app_sampler.due(f, now, forced) {
                self.app_trace.push(row, &mut self.app_sampler);
            }
        }
        self.check_done(f);
    }

    fn check_done(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if flow.done {
            return;
        }
        let finished = match flow.session.app.finished() {
            Some(done) => done,
            None => flow.session.conn.src.sender.state() == State::Done,
        };
        if finished {
            flow.done = true;
            if flow.session.app.finished().is_some() {
                flow.app_done_ns = Some(self.engine.now);
            }
            self.unfinished_flows -= 1;
        }
    }

    /// After an event of flow `f`: a wake-up for its session, if its deadline came earlier.
    #[inline(always)]
    fn arm(&mut self, f: usize) {
        let at = self.flows[f].session.wake_at();
        self.engine.wake(f as u32, at);
    }

    /// Flow `f`'s wake-up came: its session fires what is due.
    fn wake(&mut self, f: usize) {
        let now = self.engine.now;
        let out = {
            let (session, mut obs, io) = self.session(f);
            session.handle_timeout(now, f as u32, io, &mut obs)
        };
        if out.reconnect {
            self.reconnect(f);
        }
        self.arm(f);
        if out.app {
            self.after_app_event(f);
        }
    }

    /// Put a packet an endpoint sent on its first link.
    fn send_packet(&mut self, mut p: Packet) {
        p.conn = self.flows[p.flow as usize].conn;
        if let Some(x) = self.qlogs.as_deref_mut() {
            x.flow(p.flow as usize).on_packet_sent(self.engine.now, &p);
        }
        let route = self.routes[p.flow as usize];
        let (from, to) = if p.to_receiver() {
            (route.src, route.dst)
        } else {
            (route.dst, route.src)
        };
        self.forward(from, to, p);
    }

    pub fn finish(mut self, end_ns: u64) -> RunOutput {
        let mut export_error = None;
        if let Some(x) = self.captures.take() {
            export_error = x.finish().err();
        }
        if let Some(x) = self.qlogs.take() {
            export_error = export_error.or(x.finish().err());
        }
        export_error = export_error.or(self.stream_error.take());
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let since_start = |t: Option<u64>| t.map(|t| seconds(t.saturating_sub(f.start_ns)));
                let (sender, receiver) = (&f.session.conn.src.sender, &f.session.conn.dst.receiver);
                let m = f.recorder.metrics();
                let delivered = f.earlier.bytes(receiver);
                let completed_ns = receiver.completed_ns().or(f.app_done_ns);
                let active_end = completed_ns.unwrap_or(end_ns);
                let active = active_end.saturating_sub(f.start_ns);
                let st = f.recorder.stats(sender);
                FlowSummary {
                    id: i as u32,
                    cc: cc_label(&f.recipe.cc),
                    size_bytes: f.recipe.size_bytes,
                    bytes_delivered: delivered,
                    completion_s: since_start(completed_ns),
                    goodput_bps: if active > 0 {
                        delivered as f64 * 8.0 / seconds(active)
                    } else {
                        0.0
                    },
                    slow_start_exit_s: since_start(m.slow_start_exit_ns),
                    time_to_full_bw_s: since_start(m.full_bw_ns),
                    time_to_window_cap_s: since_start(m.window_cap_ns),
                    retransmits: st.retransmits,
                    dup_acks: f.earlier.dup_acks(receiver),
                    loss_events: st.loss_events,
                    rto_count: st.rto_count,
                    lost_retransmissions: st.lost_retransmissions,
                    loss_probes: st.loss_probes,
                    max_cwnd_bytes: m.max_cwnd_bytes,
                    data_packets_sent: st.data_packets_sent,
                    data_bytes_sent: st.data_bytes_sent,
                    drops: f.drops.drops,
                    slow_start_drops: f.drops.slow_start_drops,
                    base_rtt_s: seconds(f.base_rtt_ns),
                    bottleneck_bps: f.bottleneck_bps,
                    stalls: st.stalls,
                    ecn_reductions: f.recipe.settings.ecn.then_some(st.ecn_reductions),
                }
            })
            .collect();
        let apps = self
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                f.session
                    .app
                    .summary(i as u32, &f.session.conn.dst.requests)
            })
            .collect();
        let links = self.topo.channels.iter().map(LinkSummary::of).collect();
        let cross = self
            .cross
            .iter()
            .enumerate()
            .map(|(k, s)| s.summary(k as u32, end_ns))
            .collect();
        RunOutput {
            summary: Summary {
                scenario: self.name,
                seed: self.seed,
                sim_time_s: seconds(end_ns),
                events: self.engine.events,
                flows,
                links,
                apps,
                cross,
                kind: RunKind::Flows,
                interrupted: self.engine.interrupted,
                fault: self.engine.fault,
            },
            flows: self.flow_trace,
            queues: self.queue_trace,
            apps: self.app_trace,
            export_error,
        }
    }
}

impl<Q: Queue<Event<FlowStart>>> Application for Simulation<Q> {
    type Event = FlowStart;
    type Queue = Q;

    #[inline(always)]
    fn engine(&mut self) -> &mut Engine<Q> {
        &mut self.engine
    }

    fn start(&mut self) {
        for (i, f) in self.flows.iter().enumerate() {
            self.engine
                .queue
                .push(f.start_ns, Event::App(FlowStart(i as u32)));
        }
        for s in &mut self.cross {
            if let Some(t) = s.next_send() {
                self.engine
                    .queue
                    .push(t, Event::App(FlowStart(s.packet_id)));
            }
        }
    }

    #[inline(always)]
    fn on_event(&mut self, FlowStart(f): FlowStart) {
        self.flow_start(f as usize);
    }

    #[inline(always)]
    fn channel(&mut self, c: u32) -> (&mut Channel, &mut Engine<Q>) {
        (&mut self.topo.channels[c as usize], &mut self.engine)
    }

    #[inline(always)]
    fn on_channel_head(&mut self, c: u32, packet: Option<Packet>) {
        self.channel_head(c, packet);
    }

    #[inline(always)]
    fn on_wake(&mut self, f: u32) {
        self.wake(f as usize);
    }

    #[inline(always)]
    fn send(&mut self, packet: Packet) {
        self.send_packet(packet);
    }

    #[inline(always)]
    fn finished(&self) -> bool {
        self.unfinished_flows == 0 && !self.run_to_end
    }

    fn at_progress(&mut self) -> bool {
        if self.stream.is_none() {
            return true;
        }
        let held = self.flow_trace.len() + self.queue_trace.len() + self.app_trace.len();
        held < STREAM_CHUNK_ROWS || self.hand_over_traces()
    }
}
