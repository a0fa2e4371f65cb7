//! The swarm: peers arrive, announce, connect, trade blocks and leave. [`SwarmSim`] is an
//! [`Application`] of the engine's loop ([`crate::engine::advance_with`]): the engine takes
//! each access link's head packet and fires each half-connection's timers; the swarm routes
//! packets through the core, pumps piece messages and handles its own events (arrivals,
//! announces, rechokes, ticks, departures, queue samples).
//!
//! What follows the ns-2 module of Eger et al. (SiangYun/BTcode `bittorrent_app.cc`,
//! `bittorrent_params.h`) as the utp seed ran it, and what is our choice where it is silent:
//! - A new peer announces at once and every `reannounce` after; the tracker answers with
//!   `tracker_peers` active peers drawn at random; while it has fewer than `min_peers`
//!   connections it asks again, and it opens connections to the peers it learnt of until it has
//!   `max_initiate`. The remote accepts unless it has `max_connections` (the module decides this
//!   at once, `connect_step_2`; the TCP three-way handshake is not modelled).
//! - Messages: the initiator sends its handshake and bitfield, the acceptor answers with its
//!   own; then `interested`/`not interested` as bitfields and `have`s change what a neighbour
//!   can give; `choke`/`unchoke` from the choker; 17-byte requests, `pipeline` outstanding per
//!   connection, topped up as each block arrives. Requests carry the number of the unchoke they
//!   follow: requests sent before the latest unchoke are discarded, as the module's timestamp
//!   check does; a choke discards the requests waiting at the uploader and the downloader asks
//!   elsewhere for the blocks it had outstanding, but for those whose piece message is already
//!   on its way (the module keeps the request being served, `delete_peer_from_list`). Each
//!   way has a control stream of its own; with `messages = "with_data"` a peer's messages go
//!   in its data stream to that neighbour, after the piece messages it wrote before them.
//! - An uploader keeps one piece message in its transport's send buffer per connection (ns-2
//!   agents send what the application handed them, as the window allows); the next is written
//!   once the last byte of the previous one was sent. With `send_buffer = "libtorrent"` it
//!   writes requested blocks while the bytes not yet sent are below libtorrent's watermark
//!   ([`send_buffer_watermark`]).
//! - Rechoke every `rechoke` from the peer's arrival (the periodic timer), and at once when an
//!   unchoked neighbour leaves or loses interest or a choked one becomes interested while a
//!   slot is free (BitTorrent 4's `Choker`); the optimistic unchoke moves every
//!   `optimistic / rechoke` periodic rechokes. A connection weighs `new_peer_weight` in the
//!   optimistic draw until it has been drawn once.
//! - A peer that leaves closes its connections; the other end learns of it at once (no FIN is
//!   modelled) and asks elsewhere for the blocks it had requested. Packets still in flight for a
//!   closed connection are dropped on arrival (`stale_packets`).
//! - Transports: the module has no uTP and carries both directions of a connection, pieces
//!   and messages alike, over one `Agent/TCP/FullTcp/Newreno` per side
//!   (`bittorrent_connection.cc`); the paper split control from data (Testa and Rossi §IV), so
//!   each direction here has its data stream over its uploader's transport
//!   (`connection_transport`) and the downloader's messages over TCP. Messages go at their
//!   BEP 3 size (`BitTorrentApp::send` writes `length_`), and the downloader ACKs every
//!   full-size segment, as FullTcp's `segsperack_` 1 does (`tests/test_ns2_agents.py`).
//! - Super-seeding is not modelled (the module's example scripts turn it on for the first seed;
//!   we follow the module's default, off).

mod choking;
mod memory;
mod messages;
mod results;

pub use memory::peak_bytes_per_peer;

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use slowstart_cc::Controller;
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::Sender;
use slowstart_transport::sender::SenderStats;
use slowstart_transport::{Connection, Fired, Received, TimerKind};

use crate::engine::{Application, Engine, Event, Queue};
use crate::summary::{
    seconds, PeerSummary, RunKind, RunOutput, Summary, SwarmSummary, TransportTotals,
};
use crate::swarm::choker::{self, Candidate};
use crate::swarm::pieces::{Bitfield, BlockState, Layout, Pieces, WHOLE_PIECES_MAX_BYTES};
use crate::swarm::tracker::Tracker;
use crate::wheel::WheelQueue;
use crate::SimError;
use slowstart_config::trace::{AppTrace, FlowTrace, QueueRow, QueueTrace, Sampler};
use slowstart_config::{substream_seed, SeedStream};
use slowstart_config::{
    BittorrentConfig, ConnectionTransport, FlowConfig, Messages, Population, QueueLimit, Seeding,
    SendBuffer, SimConfig, SwarmBittorrentConfig, SwarmConfig,
};
use slowstart_link::channel::Channel;
use slowstart_link::summary::LinkSummary;

// BEP 3 message sizes, length prefix included: the one copy is the peer-wire application's.
use slowstart_apps::bittorrent::{
    RequestQueue, BARE_MESSAGE_BYTES, HANDSHAKE_BYTES, HAVE_BYTES, PIECE_HEADER_BYTES,
    REQUEST_BYTES, TICK_NS,
};

/// What the swarm itself has due ([`SwarmEvent`]); a channel's head and a transport timer of
/// half-connection `h` (`Event::Timer(h, ..)`) are the engine's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    /// The next of the scheduled leechers arrives.
    Arrival,
    Rechoke(u32),
    /// libtorrent's second tick of peer `p`'s connections (`request_queue_time` > 0 or
    /// `send_buffer = "libtorrent"`).
    RequestTick(u32),
    Announce(u32),
    Leave(u32),
    QueueSample,
}

/// The swarm's own events ([`Event::App`]): a `Due` in one `u32`, its kind in the low three
/// bits and its peer above (peers number below 2^29). An `Event<SwarmEvent>` is then 8 bytes,
/// as a flow's is; with the enum inside it took 12, its payload at an odd offset, and the
/// loop's copies of a popped event were overlapping 8- and 4-byte moves whose reads stalled on
/// store forwarding (issue #37: 6 to 12% of the loop's perf samples at 3 000 leechers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwarmEvent(u32);

const _: () = assert!(std::mem::size_of::<Event<SwarmEvent>>() == 8);

impl From<Due> for SwarmEvent {
    #[inline(always)]
    fn from(due: Due) -> Self {
        let (kind, peer) = match due {
            Due::Arrival => (0, 0),
            Due::Rechoke(p) => (1, p),
            Due::RequestTick(p) => (2, p),
            Due::Announce(p) => (3, p),
            Due::Leave(p) => (4, p),
            Due::QueueSample => (5, 0),
        };
        debug_assert!(peer < 1 << 29, "peer {peer} beyond 29 bits");
        SwarmEvent(peer << 3 | kind)
    }
}

impl From<SwarmEvent> for Due {
    #[inline(always)]
    fn from(event: SwarmEvent) -> Self {
        let peer = event.0 >> 3;
        match event.0 & 7 {
            0 => Due::Arrival,
            1 => Due::Rechoke(peer),
            2 => Due::RequestTick(peer),
            3 => Due::Announce(peer),
            4 => Due::Leave(peer),
            _ => Due::QueueSample,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    Handshake,
    /// The sender's pieces when it wrote the message (kept in [`Side::bitfield_sent`]).
    Bitfield,
    Have(u32),
    Interested,
    NotInterested,
    Choke,
    /// The uploader's unchoke count for this neighbour.
    Unchoke(u32),
    /// Piece, block, and the unchoke it follows.
    Request(u32, u32, u32),
    Cancel(u32, u32),
}

impl Msg {
    fn bytes(self, pieces: u32) -> u64 {
        match self {
            Msg::Handshake => HANDSHAKE_BYTES,
            Msg::Bitfield => BARE_MESSAGE_BYTES + (pieces as u64).div_ceil(8),
            Msg::Have(_) => HAVE_BYTES,
            Msg::Request(..) | Msg::Cancel(..) => REQUEST_BYTES,
            _ => BARE_MESSAGE_BYTES,
        }
    }
}

/// What the bytes a data stream delivered completed: a piece message or another.
enum Arrived {
    Block(u32, u32),
    Msg(Msg),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Utp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Utp => "utp",
        }
    }
}

/// One direction of a connection: the uploader's data sender and the downloader's receiver,
/// and the downloader's control stream back to the uploader.
struct Half {
    /// The uploader's data sender and control receiver (`conn.src`), the downloader's data
    /// receiver and control sender (`conn.dst`).
    conn: Connection,
    data_written: u64,
    /// Piece messages written: (end byte in the data stream, (piece, block)).
    pieces_written: Written<(u32, u32)>,
    /// With `messages = "with_data"`, the uploader's other messages in the data stream: (end
    /// byte, message).
    msgs_in_data: Written<Msg>,
    ctrl_written: u64,
    /// Control messages written: (end byte in the control stream, message).
    msgs_written: Written<Msg>,
    /// Control bytes written during this event, sent together when it ends.
    ctrl_unflushed: u64,
    dropped_data_bytes: u64,
    /// Data bytes the transport took in the uploader's last second (libtorrent's
    /// `m_uploaded_last_second`) and those it had taken at that tick.
    uploaded_last_second: u64,
    sent_at_tick: u64,
    /// Unsent bytes the transport holds beyond the watermark: TCP's `TCP_NOTSENT_LOWAT`, none
    /// for uTP.
    socket_unsent_bytes: u64,
}

/// What a stream's writer wrote and its reader has not yet taken, in stream order: (end byte,
/// item). The first entry's end is kept beside the queue, so a packet that completes no entry
/// reads this record and not the queue's buffer (issue #37: that read, on every data packet
/// delivered, was 4% of perf's samples at 3 000 leechers).
struct Written<T> {
    /// The first entry's end byte; `u64::MAX`: none.
    first_end: u64,
    queue: VecDeque<(u64, T)>,
}

impl<T> Default for Written<T> {
    fn default() -> Self {
        Written {
            first_end: u64::MAX,
            queue: VecDeque::new(),
        }
    }
}

impl<T: Copy> Written<T> {
    fn push(&mut self, end: u64, item: T) {
        if self.queue.is_empty() {
            self.first_end = end;
        }
        self.queue.push_back((end, item));
    }

    /// The first entry's end byte.
    #[inline(always)]
    fn first_end(&self) -> Option<u64> {
        (self.first_end != u64::MAX).then_some(self.first_end)
    }

    /// Take the first entry (there must be one).
    fn pop_front(&mut self) -> T {
        let (_, item) = self.queue.pop_front().expect("an entry");
        self.first_end = self.queue.front().map_or(u64::MAX, |w| w.0);
        item
    }

    fn items(&self) -> impl Iterator<Item = T> + '_ {
        self.queue.iter().map(|&(_, item)| item)
    }
}

/// Below how many unsent bytes half `half`'s uploader writes the next requested block.
fn unsent_limit(b: &SwarmBittorrentConfig, half: &Half) -> u64 {
    match b.send_buffer {
        SendBuffer::Transport => 1,
        SendBuffer::Libtorrent => {
            send_buffer_watermark(b, half.uploaded_last_second) + half.socket_unsent_bytes
        }
    }
}

/// libtorrent's send-buffer watermark (`peer_connection::fill_send_buffer`, libtorrent 2.0 and
/// 2.1): `send_buffer_watermark_factor` percent of the payload the connection uploaded in the
/// last second, at least `send_buffer_low_watermark`, at most `send_buffer_watermark`. It reads
/// the next requested block from disk while its own send buffer and the reads under way hold
/// less than this.
pub fn send_buffer_watermark(b: &SwarmBittorrentConfig, uploaded_last_second: u64) -> u64 {
    (uploaded_last_second.saturating_mul(b.send_buffer_watermark_factor) / 100).clamp(
        b.send_buffer_low_watermark_bytes,
        b.send_buffer_watermark_bytes,
    )
}

/// One peer's state about the other end of a connection.
#[derive(Clone, Debug)]
struct Side {
    handshaken: bool,
    remote: Bitfield,
    bitfield_known: bool,
    bitfield_sent: Bitfield,
    am_choking: bool,
    am_interested: bool,
    peer_choking: bool,
    peer_interested: bool,
    my_requests: Vec<(u32, u32)>,
    /// Blocks picked and not yet requested, with `hold_requests_beyond_target` (libtorrent's
    /// `m_request_queue`); the picker counts them as requested.
    held_requests: VecDeque<(u32, u32)>,
    peer_requests: VecDeque<(u32, u32)>,
    unchokes_sent: u32,
    unchoke_got: u32,
    /// Block bytes delivered to the remote and from it.
    sent_bytes: u64,
    recv_bytes: u64,
    /// (sent, received) totals at the last periodic rechokes, oldest first.
    window: VecDeque<(u64, u64)>,
    last_block_ns: u64,
    drawn_optimistic: bool,
    /// libtorrent's request queue of this side's downloads, with `request_queue_time`.
    requests: Option<RequestQueue>,
}

impl Side {
    fn new(pieces: u32, now: u64, requests: Option<RequestQueue>) -> Self {
        Side {
            handshaken: false,
            remote: Bitfield::empty(pieces),
            bitfield_known: false,
            bitfield_sent: Bitfield::empty(pieces),
            am_choking: true,
            am_interested: false,
            peer_choking: true,
            peer_interested: false,
            my_requests: Vec::new(),
            held_requests: VecDeque::new(),
            peer_requests: VecDeque::new(),
            unchokes_sent: 0,
            unchoke_got: 0,
            sent_bytes: 0,
            recv_bytes: 0,
            window: VecDeque::new(),
            last_block_ns: now,
            drawn_optimistic: false,
            requests,
        }
    }
}

/// A connection's BitTorrent state; its ends are in `SwarmSim::ends` and its transport in
/// `SwarmSim::halves`, apart, so that routing a packet touches only a small array.
struct Conn {
    open: bool,
    /// `sides[i]`: what `ends[i]` knows of `ends[1 - i]`.
    sides: [Side; 2],
}

struct Peer {
    transport: Transport,
    initial_seed: bool,
    replacement: bool,
    active: bool,
    arrival_ns: u64,
    done_ns: Option<u64>,
    left_ns: Option<u64>,
    rank: Option<u64>,
    delay_ns: u64,
    pieces: Pieces,
    conns: Vec<u32>,
    /// Peers the tracker named, not yet tried.
    known: VecDeque<u32>,
    optimistic: Option<u32>,
    rechokes: u64,
    bytes_up: u64,
    bytes_down: u64,
    connections: u64,
    duplicate_bytes: u64,
    /// Requests outstanding summed over its connections' ticks with any, and those ticks.
    requests_outstanding: u64,
    request_samples: u64,
    rng: Xoshiro256PlusPlus,
}

/// What a test can check afterwards: every choke decision and block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogEntry {
    /// `peer` unchoked (`true`) or choked the remote on `conn`.
    Choke {
        t_ns: u64,
        peer: u32,
        conn: u32,
        unchoked: bool,
    },
    /// `peer` requested `piece`, having `have` pieces. `started`: a partly requested piece
    /// came first; otherwise `rarest` is the least availability among the pieces it could begin
    /// from that remote and `availability` the chosen one's.
    Request {
        t_ns: u64,
        peer: u32,
        piece: u32,
        have: u32,
        started: bool,
        availability: u32,
        rarest: Option<u32>,
    },
    /// Connection `conn` closed (its unchokes end without a message).
    Close { t_ns: u64, conn: u32 },
}

impl LogEntry {
    /// Peer `peer`'s request at `t_ns` for `piece`, with what its `pieces` were then.
    fn request(
        (t_ns, peer): (u64, u32),
        pieces: &Pieces,
        piece: u32,
        started: bool,
        rarest: Option<u32>,
    ) -> Self {
        LogEntry::Request {
            t_ns,
            peer,
            piece,
            have: pieces.have.count(),
            started,
            availability: pieces.availability[piece as usize],
            rarest,
        }
    }
}

/// The swarm's queue unless told otherwise ([`SwarmSim::with_queue`]): the timing wheel, whose
/// cost does not grow with the entries pending as the calendar's heap does (issue #37).
pub type SwarmQueue = WheelQueue<Event<SwarmEvent>>;

/// A BitTorrent swarm: an [`Application`] of the [`Engine`], whose queue is `Q`.
pub struct SwarmSim<Q = SwarmQueue> {
    cfg: SwarmConfig,
    name: String,
    seed: u64,
    engine: Engine<Q>,
    channels: Vec<Channel>,
    peers: Vec<Peer>,
    conns: Vec<Conn>,
    /// Per connection: [initiator, acceptor].
    ends: Vec<[u32; 2]>,
    /// Per connection: `halves[c][i]`, `ends[c][i]` uploads to `ends[c][1 - i]`; `None` once
    /// the connection closed.
    halves: Vec<Option<Box<[Half; 2]>>>,
    tracker: Tracker,
    rng: Xoshiro256PlusPlus,
    layout: Layout,
    leechers_arrived: u64,
    completions: u64,
    stopped: bool,
    dirty: Vec<u32>,
    totals: [TransportTotals; 2],
    stale_packets: u64,
    queue_trace: QueueTrace,
    queue_sampler: Sampler,
    log: Option<Vec<LogEntry>>,
}

const fn up(peer: u32) -> u32 {
    2 * peer
}

const fn down(peer: u32) -> u32 {
    2 * peer + 1
}

/// An exponential draw with mean `mean_ns`.
fn exponential(rng: &mut impl Rng, mean_ns: f64) -> u64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    (-mean_ns * u.ln()).round().min(u64::MAX as f64 / 2.0) as u64
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
        let layout = Layout::new(cfg.file_bytes, cfg.piece_bytes, cfg.block_bytes);
        Ok(SwarmSim {
            name: config.name.clone(),
            seed: config.seed,
            engine: Engine::new(
                config.duration_ns,
                cfg.tcp.cc.is_guest() || cfg.utp.cc.is_guest(),
            ),
            channels: Vec::new(),
            peers: Vec::new(),
            conns: Vec::new(),
            ends: Vec::new(),
            halves: Vec::new(),
            tracker: Tracker::default(),
            rng: Xoshiro256PlusPlus::seed_from_u64(substream_seed(
                config.seed,
                SeedStream::Swarm,
                0,
            )),
            layout,
            leechers_arrived: 0,
            completions: 0,
            stopped: false,
            dirty: Vec::new(),
            totals: Default::default(),
            stale_packets: 0,
            queue_trace: QueueTrace::default(),
            queue_sampler: Sampler::new(0, config.trace.max_rows, 1),
            log: None,
            cfg,
        })
    }

    /// Record choke decisions and requests, returned by [`SwarmSim::run_logged`].
    pub fn with_log(mut self) -> Self {
        self.log = Some(Vec::new());
        self
    }

    pub fn run(self) -> RunOutput {
        self.run_logged().0
    }

    /// Run, and return the log (empty unless [`SwarmSim::with_log`]).
    pub fn run_logged(mut self) -> (RunOutput, Vec<LogEntry>) {
        let end = self.advance();
        let log = self.log.take().unwrap_or_default();
        (self.finish(end), log)
    }

    /// Half-connections so far (ids `0..halves()`; closed ones have no ledger).
    pub fn halves(&self) -> u32 {
        2 * self.conns.len() as u32
    }

    /// Run the event loop to the end (duration, or the completions asked for); the end time.
    pub fn advance(&mut self) -> u64 {
        self.advance_with(&mut |_, _| true)
    }

    /// [`SwarmSim::advance`], telling `progress` how far it got now and then; it stops early
    /// (and the summary says `interrupted`) when `progress` returns false.
    pub fn advance_with(&mut self, progress: crate::Progress) -> u64 {
        crate::engine::advance_with(self, progress)
    }

    fn schedule_arrival(&mut self) {
        if self.leechers_arrived >= self.cfg.leechers {
            return;
        }
        self.leechers_arrived += 1;
        let gap = exponential(&mut self.rng, self.cfg.arrival_mean_ns as f64);
        self.engine.queue.push(
            self.engine.now.saturating_add(gap),
            Event::App(Due::Arrival.into()),
        );
    }

    fn add_peer(&mut self, seed: bool, replacement: bool) {
        let id = self.peers.len() as u32;
        let a = &self.cfg.access;
        let delay_ns = self.rng.random_range(a.delay_min_ns..=a.delay_max_ns);
        let transport = match self.cfg.population {
            Population::Tcp => Transport::Tcp,
            Population::Utp => Transport::Utp,
            Population::Mixed => {
                if self.rng.random_bool(0.5) {
                    Transport::Utp
                } else {
                    Transport::Tcp
                }
            }
        };
        for (c, rate, queue) in [
            (up(id), a.up_bps, a.up_queue),
            (down(id), a.down_bps, a.down_queue),
        ] {
            let dir = slowstart_config::DirectionConfig::lossless(rate, delay_ns, queue);
            let name = if c.is_multiple_of(2) { "up" } else { "down" };
            let rng_seed = substream_seed(self.seed, SeedStream::Channel, c as u64);
            self.channels
                .push(Channel::new(format!("peer{id}.{name}"), c, &dir, rng_seed));
        }
        self.peers.push(Peer {
            transport,
            initial_seed: seed,
            replacement,
            active: true,
            arrival_ns: self.engine.now,
            done_ns: seed.then_some(self.engine.now),
            left_ns: None,
            rank: None,
            delay_ns,
            pieces: Pieces::new(self.layout, seed, self.cfg.bittorrent.piece_picker),
            conns: Vec::new(),
            known: VecDeque::new(),
            optimistic: None,
            rechokes: 0,
            bytes_up: 0,
            bytes_down: 0,
            connections: 0,
            duplicate_bytes: 0,
            requests_outstanding: 0,
            request_samples: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(substream_seed(
                self.seed,
                SeedStream::Peer,
                id as u64,
            )),
        });
        self.tracker.join(id);
        self.engine
            .queue
            .push(self.engine.now, Event::App(Due::Announce(id).into()));
        self.engine.queue.push(
            self.engine.now + self.cfg.bittorrent.rechoke_ns,
            Event::App(Due::Rechoke(id).into()),
        );
        if self.cfg.bittorrent.request_queue_time_ns > 0
            || self.cfg.bittorrent.send_buffer == SendBuffer::Libtorrent
        {
            self.engine.queue.push(
                self.engine.now + TICK_NS,
                Event::App(Due::RequestTick(id).into()),
            );
        }
    }

    // ---------------------------------------------------------------- tracker, connections

    fn announce(&mut self, p: u32) {
        if !self.peers[p as usize].active {
            return;
        }
        let bt = &self.cfg.bittorrent;
        if (self.peers[p as usize].conns.len() as u64) < bt.min_peers {
            let drawn = self
                .tracker
                .draw(p, bt.tracker_peers as usize, &mut self.rng);
            for q in drawn {
                let connected = self.connected(p, q);
                let peer = &mut self.peers[p as usize];
                if !connected && !peer.known.contains(&q) {
                    peer.known.push_back(q);
                }
            }
        }
        self.check_connections(p);
        let next = self
            .engine
            .now
            .saturating_add(self.cfg.bittorrent.reannounce_ns);
        self.engine
            .queue
            .push(next, Event::App(Due::Announce(p).into()));
    }

    fn connected(&self, p: u32, q: u32) -> bool {
        self.peers[p as usize]
            .conns
            .iter()
            .any(|&c| self.ends[c as usize].contains(&q))
    }

    fn check_connections(&mut self, p: u32) {
        let bt = &self.cfg.bittorrent;
        let (max_initiate, max_connections) = (bt.max_initiate, bt.max_connections);
        while (self.peers[p as usize].conns.len() as u64) < max_initiate {
            let Some(q) = self.peers[p as usize].known.pop_front() else {
                break;
            };
            let remote = &self.peers[q as usize];
            if remote.active
                && (remote.conns.len() as u64) < max_connections
                && !self.connected(p, q)
            {
                self.connect(p, q);
            }
        }
    }

    /// The transport of half-connection `h` (`connection_transport`): its uploader's, or
    /// that of the peer that opened the connection (`ends[c][0]`).
    fn half_transport(&self, h: u32) -> Transport {
        let ends = self.ends[(h / 2) as usize];
        let peer = match self.cfg.connection_transport {
            ConnectionTransport::Uploader => ends[(h % 2) as usize],
            ConnectionTransport::Connector => ends[0],
        };
        self.peers[peer as usize].transport
    }

    fn new_half(&self, h: u32) -> Half {
        let template: &FlowConfig = match self.half_transport(h) {
            Transport::Tcp => &self.cfg.tcp,
            Transport::Utp => &self.cfg.utp,
        };
        let common =
            template.common_params(substream_seed(self.seed, SeedStream::Controller, h as u64));
        let cc = Controller::rebuild(&template.cc, &common);
        let data = template.transport();
        let control = self.cfg.tcp.transport();
        let socket_unsent_bytes = match self.half_transport(h) {
            Transport::Tcp => self.cfg.bittorrent.send_not_sent_low_watermark_bytes,
            Transport::Utp => 0,
        };
        Half {
            conn: Connection::new(h, &data, &control, cc, template.size_bytes),
            data_written: 0,
            pieces_written: Written::default(),
            msgs_in_data: Written::default(),
            ctrl_written: 0,
            msgs_written: Written::default(),
            ctrl_unflushed: 0,
            dropped_data_bytes: 0,
            uploaded_last_second: 0,
            sent_at_tick: 0,
            socket_unsent_bytes,
        }
    }

    fn connect(&mut self, a: u32, b: u32) {
        let c = self.conns.len() as u32;
        let n = self.layout.pieces;
        self.ends.push([a, b]);
        let mut halves = Box::new([self.new_half(2 * c), self.new_half(2 * c + 1)]);
        for half in halves.iter_mut() {
            half.conn
                .src
                .sender
                .start(self.engine.now, false, &mut self.engine.io);
        }
        self.conns.push(Conn {
            open: true,
            sides: [
                Side::new(n, self.engine.now, self.request_queue()),
                Side::new(n, self.engine.now, self.request_queue()),
            ],
        });
        self.halves.push(Some(halves));
        for p in [a, b] {
            let peer = &mut self.peers[p as usize];
            peer.conns.push(c);
            peer.connections += 1;
        }
        self.send(a, c, Msg::Handshake);
        self.send_bitfield(a, c);
    }

    fn close(&mut self, c: u32) {
        let conn = &mut self.conns[c as usize];
        if !conn.open {
            return;
        }
        conn.open = false;
        if let Some(log) = self.log.as_mut() {
            log.push(LogEntry::Close {
                t_ns: self.engine.now,
                conn: c,
            });
        }
        let peers = self.ends[c as usize];
        if let Some(halves) = self.halves[c as usize].take() {
            for (i, half) in halves.iter().enumerate() {
                let t = self.half_transport(2 * c + i as u32);
                self.totals[t as usize].add(half.conn.src.sender.stats());
            }
        }
        for (s, &p) in peers.iter().enumerate() {
            let side = std::mem::replace(
                &mut self.conns[c as usize].sides[s],
                Side::new(0, self.engine.now, None),
            );
            let peer = &mut self.peers[p as usize];
            peer.conns.retain(|&x| x != c);
            if side.bitfield_known {
                peer.pieces.count_remote(&side.remote, false);
            }
            for &(piece, block) in side.my_requests.iter().chain(&side.held_requests) {
                peer.pieces.release(piece, block);
            }
            if peer.optimistic == Some(c) {
                peer.optimistic = None;
            }
            if peer.active {
                if !side.am_choking {
                    self.rechoke(p, false);
                }
                if !side.my_requests.is_empty() || !side.held_requests.is_empty() {
                    self.refill_all(p);
                }
            }
        }
    }

    fn leave(&mut self, p: u32) {
        let peer = &mut self.peers[p as usize];
        if !peer.active {
            return;
        }
        peer.active = false;
        peer.left_ns = Some(self.engine.now);
        self.tracker.leave(p);
        for c in self.peers[p as usize].conns.clone() {
            self.close(c);
        }
        self.release_departed(p);
        // Random stay keeps the swarm's size: a new leecher takes the place at once.
        self.add_peer(false, true);
    }

    // ---------------------------------------------------------------- transport and network

    /// The uploader of half `h` sends what its window allows, writing the next requested piece
    /// message whenever the previous one has left.
    fn pump(&mut self, h: u32) {
        let (c, i) = ((h / 2) as usize, (h % 2) as usize);
        let layout = self.layout;
        let Some(halves) = self.halves[c].as_mut() else {
            return;
        };
        let half = &mut halves[i];
        let side = &mut self.conns[c].sides[i];
        let limit = unsent_limit(&self.cfg.bittorrent, half);
        loop {
            half.conn
                .src
                .sender
                .try_send(self.engine.now, &mut self.engine.io);
            if half.conn.src.sender.unsent_bytes() >= limit || side.am_choking {
                return;
            }
            let Some((piece, block)) = side.peer_requests.pop_front() else {
                return;
            };
            let bytes = PIECE_HEADER_BYTES + layout.block_len(piece, block);
            half.conn.src.sender.write(bytes);
            half.data_written += bytes;
            half.pieces_written.push(half.data_written, (piece, block));
        }
    }

    /// Uploader and downloader of half `h`.
    fn ends(&self, h: u32) -> (u32, u32) {
        let peers = self.ends[(h / 2) as usize];
        let i = (h % 2) as usize;
        (peers[i], peers[1 - i])
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
            let (uploader, downloader) = self.ends(packet.flow);
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
        let channel = &mut self.channels[c as usize];
        if !self.engine.offer(c, channel, packet, self.cfg.tcp.mss) && packet.kind == Kind::Data {
            let t = self.half_transport(packet.flow);
            self.totals[t as usize].drops += 1;
            let h = packet.flow;
            if let Some(halves) = self.halves[(h / 2) as usize].as_mut() {
                halves[(h % 2) as usize].dropped_data_bytes += packet.len as u64;
            }
        }
    }

    fn deliver(&mut self, packet: Packet) {
        let h = packet.flow;
        let (c, i) = (h / 2, (h % 2) as usize);
        let now = self.engine.now;
        let (uploader, downloader) = self.ends(h);
        let Some(halves) = self.halves[c as usize].as_mut() else {
            self.stale_packets += 1;
            for p in [uploader, downloader] {
                if !self.peers[p as usize].active {
                    self.release_departed(p);
                }
            }
            return;
        };
        let half = &mut halves[i];
        match half.conn.handle_packet(now, &packet, &mut self.engine.io) {
            Received::Data { before, upto } => {
                if upto > before {
                    // Piece messages and (`messages = "with_data"`) the others, in stream order.
                    let mut arrived = Vec::new();
                    loop {
                        let piece_end = half.pieces_written.first_end();
                        let msg_end = half.msgs_in_data.first_end();
                        match (piece_end, msg_end) {
                            (Some(p), m) if p <= upto && m.is_none_or(|m| p < m) => {
                                let (piece, block) = half.pieces_written.pop_front();
                                arrived.push(Arrived::Block(piece, block));
                            }
                            (_, Some(m)) if m <= upto => {
                                let msg = half.msgs_in_data.pop_front();
                                arrived.push(Arrived::Msg(msg));
                            }
                            _ => break,
                        }
                    }
                    for item in arrived {
                        match item {
                            Arrived::Block(piece, block) => {
                                self.on_block(downloader, c, piece, block)
                            }
                            Arrived::Msg(msg) => self.on_message(downloader, c, msg),
                        }
                    }
                }
            }
            Received::Ack(_) => self.pump(h),
            Received::Request { advanced, upto } => {
                let mut msgs = Vec::new();
                if advanced {
                    while half.msgs_written.first_end().is_some_and(|end| end <= upto) {
                        msgs.push(half.msgs_written.pop_front());
                    }
                }
                for msg in msgs {
                    self.on_message(uploader, c, msg);
                }
                // The control stream's ACK rides on data leaving now, or goes alone.
                let Some(halves) = self.halves[c as usize].as_mut() else {
                    return;
                };
                let mark = halves[i].conn.src.carry_request_ack();
                self.pump(h);
                let half = &mut self.halves[c as usize].as_mut().expect("open")[i];
                half.conn.src.ack_requests(now, mark, &mut self.engine.io);
            }
            // No handshake in a swarm: the transport starts established.
            Received::Nothing | Received::SynAck { .. } | Received::Unexpected => {}
        }
    }

    /// Send the control bytes written during the event (the engine then sends every packet
    /// and arms every timer produced).
    fn flush_control(&mut self) {
        let now = self.engine.now;
        for h in std::mem::take(&mut self.dirty) {
            let Some(halves) = self.halves[(h / 2) as usize].as_mut() else {
                continue;
            };
            let half = &mut halves[(h % 2) as usize];
            let bytes = std::mem::take(&mut half.ctrl_unflushed);
            if self.cfg.bittorrent.messages == Messages::WithData {
                half.conn.src.sender.try_send(now, &mut self.engine.io);
                continue;
            }
            half.conn.dst.receiver.flush_ack(now, &mut self.engine.io);
            half.conn
                .dst
                .requests
                .write(now, bytes, &mut self.engine.io);
        }
    }

    /// Put a packet an endpoint sent on its peer's uplink.
    fn send_packet(&mut self, p: Packet) {
        let (uploader, downloader) = self.ends(p.flow);
        let from = if p.to_receiver() {
            uploader
        } else {
            downloader
        };
        self.offer(up(from), p);
    }

    /// Each uplink's occupancy and, with libtorrent's request queue, each downloading peer's
    /// requests outstanding per connection that has any, every `queue_sample` (as the real
    /// swarm's peers report `download_queue_length`).
    fn sample_queues(&mut self) {
        let now = self.engine.now;
        // Only libtorrent's request queue counts requests (`Side::requests`): without it the
        // walk over every leecher's connections would read them all for nothing.
        let count_requests = self.cfg.bittorrent.request_queue_time_ns > 0;
        for (p, peer) in self.peers.iter_mut().enumerate() {
            if !peer.active {
                continue;
            }
            if count_requests && peer.done_ns.is_none() {
                for &c in &peer.conns {
                    let side = &self.conns[c as usize].sides
                        [usize::from(self.ends[c as usize][0] != p as u32)];
                    // Held blocks too, as libtorrent's download_queue_length counts them.
                    let outstanding = (side.my_requests.len() + side.held_requests.len()) as u64;
                    if side.requests.is_some() && outstanding > 0 {
                        peer.requests_outstanding += outstanding;
                        peer.request_samples += 1;
                    }
                }
            }
            let c = up(p as u32);
            let (bytes, packets) = self.channels[c as usize].occupancy(now);
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
        let next = now.saturating_add(self.cfg.queue_sample_ns);
        self.engine
            .queue
            .push(next, Event::App(Due::QueueSample.into()));
    }
}

impl<Q: Queue<Event<SwarmEvent>>> Application for SwarmSim<Q> {
    type Event = SwarmEvent;
    type Queue = Q;

    #[inline(always)]
    fn engine(&mut self) -> &mut Engine<Q> {
        &mut self.engine
    }

    fn start(&mut self) {
        for _ in 0..self.cfg.seeds {
            self.add_peer(true, false);
        }
        self.schedule_arrival();
        self.engine
            .queue
            .push(0, Event::App(Due::QueueSample.into()));
    }

    fn on_event(&mut self, event: SwarmEvent) {
        match Due::from(event) {
            Due::Arrival => {
                self.add_peer(false, false);
                self.schedule_arrival();
            }
            Due::Rechoke(p) => self.periodic_rechoke(p),
            Due::RequestTick(p) => self.request_tick(p),
            Due::Announce(p) => self.announce(p),
            Due::Leave(p) => self.leave(p),
            Due::QueueSample => self.sample_queues(),
        }
    }

    #[inline(always)]
    fn channel(&mut self, c: u32) -> (&mut Channel, &mut Engine<Q>) {
        (&mut self.channels[c as usize], &mut self.engine)
    }

    #[inline(always)]
    fn on_channel_head(&mut self, c: u32, packet: Option<Packet>) {
        self.channel_head(c, packet);
    }

    #[inline(always)]
    fn connection(&mut self, h: u32) -> (Option<&mut Connection>, &mut Engine<Q>) {
        let half = self.halves[(h / 2) as usize]
            .as_mut()
            .map(|halves| &mut halves[(h % 2) as usize].conn);
        (half, &mut self.engine)
    }

    #[inline(always)]
    fn on_timer_fired(&mut self, h: u32, fired: Fired) {
        if let TimerKind::Retransmission | TimerKind::Pacing = fired.kind {
            self.pump(h);
        }
    }

    /// No application of a swarm's connections sets a timer of its own.
    fn on_app_timer(&mut self, _: u32) {}

    #[inline(always)]
    fn before_flush(&mut self) {
        self.flush_control();
    }

    #[inline(always)]
    fn send(&mut self, packet: Packet) {
        self.send_packet(packet);
    }

    #[inline(always)]
    fn finished(&self) -> bool {
        self.stopped
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
            Due::QueueSample,
        ] {
            assert_eq!(Due::from(SwarmEvent::from(due)), due);
        }
    }
}
