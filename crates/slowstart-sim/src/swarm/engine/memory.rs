//! What a swarm holds and gives back (issue #37): a peer's share of the memory at its limits,
//! for the refusal before a run, and the buffers of a half-connection's transport.

use slowstart_apps::swarm::{buffer_bytes, connection_bytes, peer_bytes};
use slowstart_config::{QueueLimit, SwarmConfig};

use super::*;

impl Half {
    /// Free the storage of the buffers left empty: the transport's both ways and the written
    /// streams' records.
    pub(super) fn release_empty_buffers(&mut self) {
        self.conn.release_empty_buffers();
        self.wire.release_empty_buffers();
    }
}

/// One peer's share of a swarm's memory at its limits, from the sizes of what it holds; times
/// the peers it schedules (`seeds + leechers`), all present at once, it is what a driver
/// compares with the memory its host can give before it starts the run (issue #37):
/// - its record, its pieces' state (a byte per block, three counts and a bit per piece) and its
///   list of connections ([`peer_bytes`]);
/// - its two access links, each with the queue buffer its limit allows (a limit in bytes
///   counted in header-only packets);
/// - half of the `max(max_connections, max_initiate)` connections it may have (each has two
///   ends): both directions' control streams and records, their data ends as if both had
///   carried data (made at a half's first write and kept while the connection is open, so any
///   half may hold them; issue #37), the senders' out-of-line state, and the BitTorrent state
///   with its four bitfields ([`connection_bytes`]);
/// - the scoreboards of twice `unchoke_slots` uploads, each grown to a full data window
///   (`max_window`, or the uplink queue's packets without one): those unchoked now and those
///   choked since the last rechoke, whose buffers the next one frees once drained (a choked
///   upload's drained buffers are given back at its uploader's rechoke,
///   `Swarm::release_empty_buffers`). A rechoke at once, when a slot frees, can choke more
///   between two periodic ones: one uploader of 12 leechers held 9 at 27 s.
///
/// Buffers are counted at the power of two a growing `Vec` or `VecDeque` leaves. Not counted:
/// the controllers' own buffers (LEDBAT's delay filters, under 200 bytes), the event queue, the
/// tracker's list and the traces.
pub fn peak_bytes_per_peer(cfg: &SwarmConfig) -> u64 {
    use std::mem::size_of;
    let bt = &cfg.bittorrent;
    let connections = bt.max_connections.max(bt.max_initiate);
    let queue_packets = |limit: QueueLimit| match limit {
        QueueLimit::Packets(n) => n,
        QueueLimit::Bytes(b) => b / cfg.tcp.header_bytes.max(1),
    };
    let links = (2 * size_of::<Channel>() as u64)
        .saturating_add(buffer_bytes(
            queue_packets(cfg.access.up_queue),
            Channel::PACKET_RECORD_BYTES,
        ))
        .saturating_add(buffer_bytes(
            queue_packets(cfg.access.down_queue),
            Channel::PACKET_RECORD_BYTES,
        ));
    // The halves' records (`WireHalf`) are counted here, in `[Half; 2]`.
    let connection = ((size_of::<[Half; 2]>()
        + size_of::<Option<Box<[Half; 2]>>>()
        + 2 * (size_of::<DataEnds>() + Sender::OUT_OF_LINE_BYTES)) as u64)
        .saturating_add(connection_bytes(cfg));
    let window_segments = |f: &FlowConfig| {
        f.max_window_bytes
            .map_or(queue_packets(cfg.access.up_queue), |w| {
                w.div_ceil(f.mss.max(1))
            })
    };
    let window = window_segments(&cfg.tcp).max(window_segments(&cfg.utp));
    let uploads =
        (2 * bt.unchoke_slots).saturating_mul(buffer_bytes(window, Sender::SEGMENT_BYTES));
    [
        peer_bytes(cfg),
        links,
        connections.div_ceil(2).saturating_mul(connection),
        uploads,
    ]
    .into_iter()
    .fold(0, u64::saturating_add)
}
