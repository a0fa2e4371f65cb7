//! What a swarm holds and gives back (issue #37): a peer's share of the memory at its limits,
//! for the refusal before a run, and the buffers idle uploads and departed peers free.

use slowstart_transport::ranges::release_if_empty;

use super::*;

impl<T: Copy> Written<T> {
    fn release_if_empty(&mut self) {
        release_if_empty(&mut self.queue);
    }
}

impl Half {
    /// Free the storage of the buffers left empty: the transport's both ways and the written
    /// streams' records.
    fn release_empty_buffers(&mut self) {
        self.conn.release_empty_buffers();
        self.pieces_written.release_if_empty();
        self.msgs_in_data.release_if_empty();
        self.msgs_written.release_if_empty();
    }
}

/// One peer's share of a swarm's memory at its limits, from the sizes of what it holds; times
/// the peers it schedules (`seeds + leechers`), all present at once, it is what a driver
/// compares with the memory its host can give before it starts the run (issue #37):
/// - its record, its pieces' state (a byte per block, three counts and a bit per piece) and its
///   list of connections;
/// - its two access links, each with the queue buffer its limit allows (a limit in bytes
///   counted in header-only packets);
/// - half of the `max(max_connections, max_initiate)` connections it may have (each has two
///   ends): both directions' transports and BitTorrent state, the senders' out-of-line state
///   and four bitfields;
/// - the scoreboards of twice `unchoke_slots` uploads, each grown to a full data window
///   (`max_window`, or the uplink queue's packets without one): those unchoked now and those
///   choked at the last rechoke, whose buffers the next one frees (a choked upload's drained
///   buffers are given back at its uploader's rechoke, `SwarmSim::release_empty_buffers`).
///
/// Buffers are counted at the power of two a growing `Vec` or `VecDeque` leaves. Not counted:
/// the controllers' own buffers (LEDBAT's delay filters, under 200 bytes), the event queue, the
/// tracker's list and the traces.
pub fn peak_bytes_per_peer(cfg: &SwarmConfig) -> u64 {
    use std::mem::size_of;
    let layout = Layout::new(cfg.file_bytes, cfg.piece_bytes, cfg.block_bytes);
    let pieces = u64::from(layout.pieces);
    let blocks = layout.block_index(layout.pieces - 1, layout.blocks_in(layout.pieces - 1)) as u64;
    let bitfield = pieces.div_ceil(64) * 8;
    let bt = &cfg.bittorrent;
    let connections = bt.max_connections.max(bt.max_initiate);
    // Saturating: a swarm at the keys' bounds estimates at u64::MAX and is refused.
    let buffer = |items: u64, bytes: usize| {
        (items.max(4).checked_next_power_of_two())
            .unwrap_or(u64::MAX)
            .saturating_mul(bytes as u64)
    };
    let peer = (size_of::<Peer>() as u64
        + blocks * size_of::<BlockState>() as u64
        + pieces * 3 * 4
        + bitfield)
        .saturating_add(buffer(connections, 4));
    let queue_packets = |limit: QueueLimit| match limit {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(b) => b / cfg.tcp.header_bytes.max(1),
    };
    let links = (2 * size_of::<Channel>() as u64)
        .saturating_add(buffer(
            queue_packets(cfg.access.up_queue),
            Channel::PACKET_RECORD_BYTES,
        ))
        .saturating_add(buffer(
            queue_packets(cfg.access.down_queue),
            Channel::PACKET_RECORD_BYTES,
        ));
    let rates_kept = (bt.rate_window_ns / bt.rechoke_ns.max(1)).max(1) + 1;
    let connection = ((size_of::<[Half; 2]>()
        + size_of::<Conn>()
        + size_of::<[u32; 2]>()
        + size_of::<Option<Box<[Half; 2]>>>()
        + 2 * Sender::OUT_OF_LINE_BYTES) as u64
        + 4 * bitfield)
        .saturating_add(buffer(rates_kept, size_of::<(u64, u64)>()).saturating_mul(2));
    let window_segments = |f: &FlowConfig| {
        f.max_window_bytes
            .map_or(queue_packets(cfg.access.up_queue), |w| {
                w.div_ceil(f.mss.max(1))
            })
    };
    let window = window_segments(&cfg.tcp).max(window_segments(&cfg.utp));
    let uploads = (2 * bt.unchoke_slots).saturating_mul(buffer(window, Sender::SEGMENT_BYTES));
    [
        peer,
        links,
        connections.div_ceil(2).saturating_mul(connection),
        uploads,
    ]
    .into_iter()
    .fold(0, u64::saturating_add)
}

impl<Q: Queue<Event<SwarmEvent>>> SwarmSim<Q> {
    /// Free the buffers peer `p`'s idle parts grew and now hold empty: its access links' queues
    /// and the halves it uploads on while it chokes the remote (issue #37: 100 s into the
    /// 10 000-leecher run, 94% of 30 454 halves had nothing in flight, each keeping the
    /// scoreboard its last window grew, 1.8 kB, and a drained uplink its 22 kB queue). At the
    /// peer's periodic rechoke, every `rechoke`, and only for a choked upload, so a buffer is
    /// not freed and grown again between packets (the regrowth after a choke still costs
    /// swarm-20 about 5 instructions an event). Storage only: nothing the run does changes.
    /// Out of line: inlined into the event loop it cost 3 more an event there.
    #[inline(never)]
    pub(super) fn release_empty_buffers(&mut self, p: u32) {
        for c in [up(p), down(p)] {
            self.channels[c as usize].release_empty_buffers();
        }
        for &c in &self.peers[p as usize].conns {
            let s = usize::from(self.ends[c as usize][0] != p);
            if !self.conns[c as usize].sides[s].am_choking {
                continue;
            }
            if let Some(halves) = self.halves[c as usize].as_mut() {
                halves[s].release_empty_buffers();
            }
        }
    }

    /// Free what departed peer `p` held and will not use again (issue #37: it is never
    /// rechoked again, so `release_empty_buffers` never reached it): its record's buffers (its
    /// closed connections' halves went at `close`) and its access links' queues once drained.
    /// A link still holding packets drains on after the peer left; every packet it carries is
    /// then stale at its far end, where `deliver` calls this again. Storage only.
    #[cold]
    pub(super) fn release_departed(&mut self, p: u32) {
        let peer = &mut self.peers[p as usize];
        debug_assert!(peer.conns.is_empty());
        peer.conns = Vec::new();
        peer.known = VecDeque::new();
        peer.pieces.release_when_gone();
        for c in [up(p), down(p)] {
            self.channels[c as usize].release_empty_buffers();
        }
    }
}
