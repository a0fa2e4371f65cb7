//! A BitTorrent swarm's peer wire (utp seed: Testa and Rossi, "The impact of uTP on BitTorrent
//! completion time"), sans-IO: peers arrive, announce, connect, trade blocks and leave. What to
//! send and when is decided here; the network that carries it ([`Network`]: in the simulator,
//! `slowstart_sim::swarm`) owns the clock, the access links and each half-connection's
//! transport, routes the packets and hands back what arrived and what fell due ([`Due`]).
//!
//! - [`pieces`]: the file in pieces and blocks, bitfields, piece selection.
//! - [`choker`]: who gets an upload slot.
//! - [`tracker`]: the active peers and an announce's answer.
//! - [`Swarm`]: the peers and their connections' peer-wire state; its messages
//!   (`messages.rs`), choking (`choking.rs`), results (`results.rs`) and what it holds and
//!   gives back (`memory.rs`) in modules of their own.
//!
//! A connection between two peers carries, each way, a control stream over TCP (the BitTorrent
//! messages: handshake, bitfield, have, interested, choke, unchoke, request, cancel) and a data
//! stream of piece messages over the uploader's own transport (`tcp` or `utp` settings). With
//! `messages = "with_data"` the messages ride in their sender's data stream instead, behind the
//! piece data it already wrote, as on one real TCP connection or uTP socket.
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

pub mod choker;
mod choking;
mod memory;
mod messages;
pub mod pieces;
mod results;
pub mod tracker;

pub use memory::{buffer_bytes, connection_bytes, peer_bytes};
pub use results::PeerSummary;

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use slowstart_config::{substream_seed, SeedStream};
use slowstart_config::{
    AccessConfig, BittorrentConfig, ConnectionTransport, Messages, Population, Seeding, SendBuffer,
    SwarmBittorrentConfig, SwarmConfig,
};
use slowstart_transport::sender::Sender;
use slowstart_transport::Io;
use smallvec::SmallVec;

use crate::bittorrent::{
    RequestQueue, BARE_MESSAGE_BYTES, HANDSHAKE_BYTES, HAVE_BYTES, PIECE_HEADER_BYTES,
    REQUEST_BYTES, TICK_NS,
};
use choker::Candidate;
use pieces::{Bitfield, BlockState, Layout, Pieces, WHOLE_PIECES_MAX_BYTES};
use tracker::Tracker;

/// What the swarm asks of the network that carries it: the clock, its own events, the peers'
/// access links and each half-connection's transport. Half `h` is connection `h / 2`'s
/// direction in which `ends(h).0` uploads.
pub trait Network {
    /// The time of the event being handled, ns.
    fn now(&self) -> u64;
    /// Hand `due` back at `at` (after what is already due then).
    fn schedule(&mut self, at: u64, due: Due);
    /// Give new peer `peer` its access links, an up and a down channel of `delay_ns` each.
    fn attach(&mut self, peer: u32, access: &AccessConfig, delay_ns: u64);
    /// Open connection `c`: half `2c + i`, uploaded by `uploaders[i]`, carries its data over
    /// the swarm's `transports[i]` settings and the downloader's messages over TCP's, with
    /// `wires[i]` its record. A half's data sender is made when its uploader first writes to it
    /// ([`Network::data_half`]).
    fn open(
        &mut self,
        c: u32,
        uploaders: [u32; 2],
        transports: [Transport; 2],
        wires: [WireHalf; 2],
    );
    /// Close connection `c` (its halves' senders counted under the transports `open` gave
    /// them): its transports and records go; packets still on their way are stale.
    fn close(&mut self, c: u32);
    /// Half `h` while connection `h / 2` is open; its data sender if it was made.
    fn half(&mut self, h: u32) -> Option<HalfIo<'_>>;
    /// [`Network::half`], its data sender made first if it has none: its uploader is about to
    /// write to its data stream (issue #37: most halves never carry a piece, and hold only
    /// their control stream).
    fn data_half(&mut self, h: u32) -> Option<HalfIo<'_>>;
    /// Half `h` has control bytes written in this event: they leave together when it ends
    /// ([`WireHalf::take_unflushed`]; libtorrent corks a handler's messages).
    fn control_written(&mut self, h: u32);
    /// Free the storage peer `peer`'s access links hold empty.
    fn release_access_buffers(&mut self, peer: u32);
    /// Free the storage half `h`'s transport and record hold empty; whether its data sender is
    /// drained (nothing left to send or to see acknowledged; none made is drained).
    fn release_half_buffers(&mut self, h: u32) -> bool;
}

/// One half-connection while the swarm handles an event: its record, and its uploader's data
/// sender with the time and what the endpoints produce (as [`crate::Ctx`] for one flow).
pub struct HalfIo<'a> {
    pub wire: &'a mut WireHalf,
    /// `None` until the half's first data write ([`Network::data_half`]).
    pub sender: Option<&'a mut Sender>,
    pub now: u64,
    pub io: &'a mut Io,
}

/// What falls due for the swarm ([`Network::schedule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// The next of the scheduled leechers arrives.
    Arrival,
    Rechoke(u32),
    /// libtorrent's second tick of peer `p`'s connections (`request_queue_time` > 0 or
    /// `send_buffer = "libtorrent"`).
    RequestTick(u32),
    Announce(u32),
    Leave(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    Handshake,
    /// The sender's pieces when it wrote the message (kept in `Side::bitfield_sent`).
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
    #[inline]
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
pub enum Arrived {
    Block(u32, u32),
    Msg(Msg),
}

/// Which of the swarm's transport settings (`tcp`, `utp`) a peer or a half-connection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Utp,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Utp => "utp",
        }
    }
}

/// One direction of a connection as the peer wire sees it: what the uploader wrote on its data
/// stream and the downloader on its control stream, not yet read, and the uploader's send
/// buffer. The network keeps it beside the half's transport, so a packet reads one record.
pub struct WireHalf {
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
    /// Data bytes the transport took in the uploader's last second (libtorrent's
    /// `m_uploaded_last_second`) and those it had taken at that tick.
    uploaded_last_second: u64,
    sent_at_tick: u64,
    /// Unsent bytes the transport holds beyond the watermark: TCP's `TCP_NOTSENT_LOWAT`, none
    /// for uTP.
    socket_unsent_bytes: u64,
}

impl WireHalf {
    fn new(socket_unsent_bytes: u64) -> Self {
        WireHalf {
            data_written: 0,
            pieces_written: Written::default(),
            msgs_in_data: Written::default(),
            ctrl_written: 0,
            msgs_written: Written::default(),
            ctrl_unflushed: 0,
            uploaded_last_second: 0,
            sent_at_tick: 0,
            socket_unsent_bytes,
        }
    }

    /// The data stream reached its reader up to byte `upto`: the piece messages and (`messages =
    /// "with_data"`) the others it completed, in stream order.
    #[inline]
    pub fn take_arrived(&mut self, upto: u64) -> Vec<Arrived> {
        let mut arrived = Vec::new();
        loop {
            let piece_end = self.pieces_written.first_end();
            let msg_end = self.msgs_in_data.first_end();
            match (piece_end, msg_end) {
                (Some(p), m) if p <= upto && m.is_none_or(|m| p < m) => {
                    let (piece, block) = self.pieces_written.pop_front();
                    arrived.push(Arrived::Block(piece, block));
                }
                (_, Some(m)) if m <= upto => {
                    let msg = self.msgs_in_data.pop_front();
                    arrived.push(Arrived::Msg(msg));
                }
                _ => break,
            }
        }
        arrived
    }

    /// The control stream reached the uploader up to byte `upto`: the messages it completed.
    #[inline]
    pub fn take_control(&mut self, upto: u64) -> Vec<Msg> {
        let mut msgs = Vec::new();
        while self.msgs_written.first_end().is_some_and(|end| end <= upto) {
            msgs.push(self.msgs_written.pop_front());
        }
        msgs
    }

    /// The control bytes written during this event, now to be sent.
    #[inline]
    pub fn take_unflushed(&mut self) -> u64 {
        std::mem::take(&mut self.ctrl_unflushed)
    }

    /// Below how many unsent bytes this half's uploader writes the next requested block.
    #[inline]
    pub fn unsent_limit(&self, b: &SwarmBittorrentConfig) -> u64 {
        match b.send_buffer {
            SendBuffer::Transport => 1,
            SendBuffer::Libtorrent => {
                send_buffer_watermark(b, self.uploaded_last_second) + self.socket_unsent_bytes
            }
        }
    }
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

/// libtorrent's send-buffer watermark (`peer_connection::fill_send_buffer`, libtorrent 2.0 and
/// 2.1): `send_buffer_watermark_factor` percent of the payload the connection uploaded in the
/// last second, at least `send_buffer_low_watermark`, at most `send_buffer_watermark`. It reads
/// the next requested block from disk while its own send buffer and the reads under way hold
/// less than this.
#[inline]
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
    /// (sent, received) totals at the last periodic rechokes, oldest first: `rate_window /
    /// rechoke + 1` of them, inline up to the paper's 3 (issue #37: on the heap, each
    /// rechoke's first read of them missed, 5% of the misses at 30 000 peers).
    window: SmallVec<[(u64, u64); 3]>,
    last_block_ns: u64,
    drawn_optimistic: bool,
    /// This side's upload was choked and has not yet given back the buffers it drained
    /// ([`Swarm::release_empty_buffers`]).
    release_pending: bool,
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
            window: SmallVec::new(),
            last_block_ns: now,
            drawn_optimistic: false,
            release_pending: false,
            requests,
        }
    }
}

/// A connection's BitTorrent state; its ends are in `Swarm::ends` and its transport with the
/// network, apart, so that routing a packet touches only a small array.
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

/// The swarm's peers and their connections' peer-wire state, driven by a [`Network`].
pub struct Swarm {
    cfg: SwarmConfig,
    seed: u64,
    peers: Vec<Peer>,
    conns: Vec<Conn>,
    /// Per connection: [initiator, acceptor].
    ends: Vec<[u32; 2]>,
    tracker: Tracker,
    rng: Xoshiro256PlusPlus,
    layout: Layout,
    leechers_arrived: u64,
    completions: u64,
    stopped: bool,
    log: Option<Vec<LogEntry>>,
}

/// An exponential draw with mean `mean_ns`.
fn exponential(rng: &mut impl Rng, mean_ns: f64) -> u64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    (-mean_ns * u.ln()).round().min(u64::MAX as f64 / 2.0) as u64
}

impl Swarm {
    /// The swarm of `cfg` (validated), its draws from run seed `seed`.
    pub fn new(cfg: SwarmConfig, seed: u64) -> Self {
        Swarm {
            seed,
            peers: Vec::new(),
            conns: Vec::new(),
            ends: Vec::new(),
            tracker: Tracker::default(),
            rng: Xoshiro256PlusPlus::seed_from_u64(substream_seed(seed, SeedStream::Swarm, 0)),
            layout: Layout::new(cfg.file_bytes, cfg.piece_bytes, cfg.block_bytes),
            leechers_arrived: 0,
            completions: 0,
            stopped: false,
            log: None,
            cfg,
        }
    }

    /// Record choke decisions and requests ([`Swarm::take_log`]).
    pub fn record_log(&mut self) {
        self.log = Some(Vec::new());
    }

    /// The log recorded (empty unless [`Swarm::record_log`]).
    pub fn take_log(&mut self) -> Vec<LogEntry> {
        self.log.take().unwrap_or_default()
    }

    #[inline]
    pub fn config(&self) -> &SwarmConfig {
        &self.cfg
    }

    /// The seeds join; the first leecher's arrival is scheduled.
    pub fn start(&mut self, net: &mut impl Network) {
        for _ in 0..self.cfg.seeds {
            self.add_peer(net, true, false);
        }
        self.schedule_arrival(net);
    }

    pub fn on_due(&mut self, net: &mut impl Network, due: Due) {
        match due {
            Due::Arrival => {
                self.add_peer(net, false, false);
                self.schedule_arrival(net);
            }
            Due::Rechoke(p) => self.periodic_rechoke(net, p),
            Due::RequestTick(p) => self.request_tick(net, p),
            Due::Announce(p) => self.announce(net, p),
            Due::Leave(p) => self.leave(net, p),
        }
    }

    /// The run has had the completions it asked for (`stop_after_completions`).
    #[inline(always)]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Uploader and downloader of half `h`.
    #[inline(always)]
    pub fn ends(&self, h: u32) -> (u32, u32) {
        let peers = self.ends[(h / 2) as usize];
        let i = (h % 2) as usize;
        (peers[i], peers[1 - i])
    }

    /// Connections opened so far (ids `0..connections()`).
    pub fn connections(&self) -> u32 {
        self.conns.len() as u32
    }

    /// Peers joined so far (ids `0..peers()`).
    pub fn peers(&self) -> u32 {
        self.peers.len() as u32
    }

    /// Peer `p` is in the swarm (it has not left).
    pub fn is_active(&self, p: u32) -> bool {
        self.peers[p as usize].active
    }

    fn schedule_arrival(&mut self, net: &mut impl Network) {
        if self.leechers_arrived >= self.cfg.leechers {
            return;
        }
        self.leechers_arrived += 1;
        let gap = exponential(&mut self.rng, self.cfg.arrival_mean_ns as f64);
        net.schedule(net.now().saturating_add(gap), Due::Arrival);
    }

    fn add_peer(&mut self, net: &mut impl Network, seed: bool, replacement: bool) {
        let id = self.peers.len() as u32;
        let now = net.now();
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
        net.attach(id, a, delay_ns);
        self.peers.push(Peer {
            transport,
            initial_seed: seed,
            replacement,
            active: true,
            arrival_ns: now,
            done_ns: seed.then_some(now),
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
        net.schedule(now, Due::Announce(id));
        net.schedule(now + self.cfg.bittorrent.rechoke_ns, Due::Rechoke(id));
        if self.cfg.bittorrent.request_queue_time_ns > 0
            || self.cfg.bittorrent.send_buffer == SendBuffer::Libtorrent
        {
            net.schedule(now + TICK_NS, Due::RequestTick(id));
        }
    }

    // ---------------------------------------------------------------- tracker, connections

    fn announce(&mut self, net: &mut impl Network, p: u32) {
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
        self.check_connections(net, p);
        let next = net.now().saturating_add(self.cfg.bittorrent.reannounce_ns);
        net.schedule(next, Due::Announce(p));
    }

    fn connected(&self, p: u32, q: u32) -> bool {
        self.peers[p as usize]
            .conns
            .iter()
            .any(|&c| self.ends[c as usize].contains(&q))
    }

    fn check_connections(&mut self, net: &mut impl Network, p: u32) {
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
                self.connect(net, p, q);
            }
        }
    }

    /// The transport of half-connection `h` (`connection_transport`): its uploader's, or
    /// that of the peer that opened the connection (`ends[c][0]`).
    pub fn half_transport(&self, h: u32) -> Transport {
        let ends = self.ends[(h / 2) as usize];
        let peer = match self.cfg.connection_transport {
            ConnectionTransport::Uploader => ends[(h % 2) as usize],
            ConnectionTransport::Connector => ends[0],
        };
        self.peers[peer as usize].transport
    }

    /// Half `h`'s data transport and its record, new.
    fn new_half(&self, h: u32) -> (Transport, WireHalf) {
        let t = self.half_transport(h);
        let wire = match t {
            Transport::Tcp => WireHalf::new(self.cfg.bittorrent.send_not_sent_low_watermark_bytes),
            Transport::Utp => WireHalf::new(0),
        };
        (t, wire)
    }

    fn connect(&mut self, net: &mut impl Network, a: u32, b: u32) {
        let c = self.conns.len() as u32;
        let n = self.layout.pieces;
        self.ends.push([a, b]);
        let (t0, wire0) = self.new_half(2 * c);
        let (t1, wire1) = self.new_half(2 * c + 1);
        net.open(c, [a, b], [t0, t1], [wire0, wire1]);
        let now = net.now();
        self.conns.push(Conn {
            open: true,
            sides: [
                Side::new(n, now, self.request_queue()),
                Side::new(n, now, self.request_queue()),
            ],
        });
        for p in [a, b] {
            let peer = &mut self.peers[p as usize];
            peer.conns.push(c);
            peer.connections += 1;
        }
        self.send(net, a, c, Msg::Handshake);
        self.send_bitfield(net, a, c);
    }

    fn close(&mut self, net: &mut impl Network, c: u32) {
        let conn = &mut self.conns[c as usize];
        if !conn.open {
            return;
        }
        conn.open = false;
        let now = net.now();
        if let Some(log) = self.log.as_mut() {
            log.push(LogEntry::Close { t_ns: now, conn: c });
        }
        net.close(c);
        let peers = self.ends[c as usize];
        for (s, &p) in peers.iter().enumerate() {
            let side = std::mem::replace(
                &mut self.conns[c as usize].sides[s],
                Side::new(0, now, None),
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
                    self.rechoke(net, p, false);
                }
                if !side.my_requests.is_empty() || !side.held_requests.is_empty() {
                    self.refill_all(net, p);
                }
            }
        }
    }

    fn leave(&mut self, net: &mut impl Network, p: u32) {
        let peer = &mut self.peers[p as usize];
        if !peer.active {
            return;
        }
        peer.active = false;
        peer.left_ns = Some(net.now());
        self.tracker.leave(p);
        for c in self.peers[p as usize].conns.clone() {
            self.close(net, c);
        }
        self.release_departed(net, p);
        // Random stay keeps the swarm's size: a new leecher takes the place at once.
        self.add_peer(net, false, true);
    }

    // ---------------------------------------------------------------- what the network hands back

    /// The uploader of half `h` sends what its window allows, writing the next requested piece
    /// message whenever the previous one has left.
    pub fn pump(&mut self, net: &mut impl Network, h: u32) {
        let (c, i) = ((h / 2) as usize, (h % 2) as usize);
        let layout = self.layout;
        let side = &mut self.conns[c].sides[i];
        let Some(mut half) = net.half(h) else {
            return;
        };
        if half.sender.is_none() {
            // Nothing written yet: the data sender is made once there is a block to write,
            // which the loop below then writes unless the send buffer's limit stops it (the
            // sender is then made early, which changes nothing it sends).
            if side.am_choking || side.peer_requests.is_empty() {
                return;
            }
            let Some(made) = net.data_half(h) else {
                return;
            };
            half = made;
        }
        let HalfIo {
            wire,
            sender,
            now,
            io,
        } = half;
        let Some(sender) = sender else {
            return;
        };
        let limit = wire.unsent_limit(&self.cfg.bittorrent);
        loop {
            sender.try_send(now, io);
            if sender.unsent_bytes() >= limit || side.am_choking {
                return;
            }
            let Some((piece, block)) = side.peer_requests.pop_front() else {
                return;
            };
            let bytes = PIECE_HEADER_BYTES + layout.block_len(piece, block);
            sender.write(bytes);
            wire.data_written += bytes;
            wire.pieces_written.push(wire.data_written, (piece, block));
        }
    }

    /// Half `h`'s data stream completed `arrived` at its downloader
    /// ([`WireHalf::take_arrived`]).
    pub fn on_arrived(&mut self, net: &mut impl Network, h: u32, arrived: Vec<Arrived>) {
        let (c, downloader) = (h / 2, self.ends(h).1);
        for item in arrived {
            match item {
                Arrived::Block(piece, block) => self.on_block(net, downloader, c, piece, block),
                Arrived::Msg(msg) => self.on_message(net, downloader, c, msg),
            }
        }
    }

    /// Half `h`'s control stream completed `msgs` at its uploader ([`WireHalf::take_control`]).
    pub fn on_control(&mut self, net: &mut impl Network, h: u32, msgs: Vec<Msg>) {
        let (c, uploader) = (h / 2, self.ends(h).0);
        for msg in msgs {
            self.on_message(net, uploader, c, msg);
        }
    }
}
