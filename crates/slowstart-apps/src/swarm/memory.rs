//! What the swarm holds and gives back (issue #37): the peer wire's share of a peer's memory
//! at its limits (the simulator's `peak_bytes_per_peer` adds the links and transports), and the
//! buffers idle uploads and departed peers free.

use std::mem::size_of;

use slowstart_transport::ranges::release_if_empty;

use super::*;

impl<T: Copy> Written<T> {
    fn release_if_empty(&mut self) {
        release_if_empty(&mut self.queue);
    }
}

impl WireHalf {
    /// Free the storage of the written streams' records left empty.
    pub fn release_empty_buffers(&mut self) {
        self.pieces_written.release_if_empty();
        self.msgs_in_data.release_if_empty();
        self.msgs_written.release_if_empty();
    }
}

/// The bytes a growing `Vec` or `VecDeque` of `items` of `bytes` each holds: the power of two
/// it leaves, at least 4 (saturating: a swarm at the keys' bounds estimates at `u64::MAX`).
pub fn buffer_bytes(items: u64, bytes: usize) -> u64 {
    (items.max(4).checked_next_power_of_two())
        .unwrap_or(u64::MAX)
        .saturating_mul(bytes as u64)
}

/// A peer's record, its pieces' state (a byte per block, three counts and a bit per piece) and
/// its list of connections.
pub fn peer_bytes(cfg: &SwarmConfig) -> u64 {
    let layout = Layout::new(cfg.file_bytes, cfg.piece_bytes, cfg.block_bytes);
    let pieces = u64::from(layout.pieces);
    let blocks = layout.block_index(layout.pieces - 1, layout.blocks_in(layout.pieces - 1)) as u64;
    let bt = &cfg.bittorrent;
    let connections = bt.max_connections.max(bt.max_initiate);
    (size_of::<Peer>() as u64
        + blocks * size_of::<BlockState>() as u64
        + pieces * 3 * 4
        + bitfield_bytes(cfg))
    .saturating_add(buffer_bytes(connections, 4))
}

/// A connection's peer-wire state apart from its halves' records ([`WireHalf`], kept with the
/// transports): both sides, its ends, four bitfields and both sides' rate windows.
pub fn connection_bytes(cfg: &SwarmConfig) -> u64 {
    let bt = &cfg.bittorrent;
    let rates_kept = (bt.rate_window_ns / bt.rechoke_ns.max(1)).max(1) + 1;
    ((size_of::<Conn>() + size_of::<[u32; 2]>()) as u64 + 4 * bitfield_bytes(cfg))
        .saturating_add(buffer_bytes(rates_kept, size_of::<(u64, u64)>()).saturating_mul(2))
}

fn bitfield_bytes(cfg: &SwarmConfig) -> u64 {
    let layout = Layout::new(cfg.file_bytes, cfg.piece_bytes, cfg.block_bytes);
    u64::from(layout.pieces).div_ceil(64) * 8
}

impl Swarm {
    /// Free the buffers peer `p`'s idle parts grew and now hold empty: its access links' queues
    /// and the halves it uploads on that it choked, once drained (issue #37: 100 s into the
    /// 10 000-leecher run, 94% of 30 454 halves had nothing in flight, each keeping the
    /// scoreboard its last window grew, 1.8 kB, and a drained uplink its 22 kB queue). At the
    /// peer's periodic rechoke, every `rechoke`, so a buffer is not freed and grown again
    /// between packets; a choked upload is freed at the first at which it has drained, then
    /// left alone until choked again. Walking every choked upload at every rechoke instead
    /// took 28% of the second-level misses at 30 000 peers, each half cold, to free mostly
    /// what an earlier rechoke had freed. Storage only: nothing the run does changes.
    /// Out of line: inlined into the event loop it cost 3 more an event there.
    #[inline(never)]
    pub(super) fn release_empty_buffers(&mut self, net: &mut impl Network, p: u32) {
        net.release_access_buffers(p);
        for &c in &self.peers[p as usize].conns {
            let s = usize::from(self.ends[c as usize][0] != p);
            let side = &mut self.conns[c as usize].sides[s];
            if side.am_choking && side.release_pending {
                side.release_pending = !net.release_half_buffers(2 * c + s as u32);
            }
        }
    }

    /// Free what departed peer `p` held and will not use again (issue #37: it is never
    /// rechoked again, so `release_empty_buffers` never reached it): its record's buffers (its
    /// closed connections' halves went at `close`) and its access links' queues once drained.
    /// A link still holding packets drains on after the peer left; every packet it carries is
    /// then stale at its far end, where the network calls [`Swarm::release_if_departed`].
    /// Storage only.
    #[cold]
    pub(super) fn release_departed(&mut self, net: &mut impl Network, p: u32) {
        let peer = &mut self.peers[p as usize];
        debug_assert!(peer.conns.is_empty());
        peer.conns = Vec::new();
        peer.known = VecDeque::new();
        peer.pieces.release_when_gone();
        net.release_access_buffers(p);
    }

    /// A packet of half `h` arrived after its connection closed: an end that left frees what
    /// it held (`Swarm::release_departed`).
    #[cold]
    pub fn release_if_departed(&mut self, net: &mut impl Network, h: u32) {
        let (uploader, downloader) = self.ends(h);
        for p in [uploader, downloader] {
            if !self.peers[p as usize].active {
                self.release_departed(net, p);
            }
        }
    }
}
