//! A BitTorrent swarm over ADSL access links (utp seed: Testa and Rossi, "The impact of uTP on
//! BitTorrent completion time"), at packet level.
//!
//! - [`pieces`]: the file in pieces and blocks, bitfields, piece selection.
//! - [`choker`]: who gets an upload slot.
//! - [`engine`]: peers, connections that open and close: the swarm as an application of the
//!   one event loop ([`crate::engine`]), over a calendar queue.
//!
//! Every peer sits behind its own access link (an up and a down channel, drop-tail); the core
//! between them has infinite capacity and no delay, so a packet from peer `a` to peer `b` crosses
//! `a`'s uplink, then `b`'s downlink. A connection between two peers carries, each way, a
//! control stream over TCP (the BitTorrent messages: handshake, bitfield, have, interested,
//! choke, unchoke, request, cancel) and a data stream of piece messages over the uploader's own
//! transport (`tcp` or `utp` settings): the same sender, receiver and controllers as every
//! other flow of the simulator. With `messages = "with_data"` the messages ride in their
//! sender's data stream instead, behind the piece data it already wrote, as on one real TCP
//! connection or uTP socket.

pub mod choker;
pub mod engine;
pub mod pieces;

use serde::Serialize;

use slowstart_config::{Population, Seeding};

pub use engine::SwarmSim;

/// One peer's results, for the summary's `peers` list.
#[derive(Clone, Debug, Serialize)]
pub struct PeerSummary {
    pub id: u32,
    pub transport: &'static str,
    pub initial_seed: bool,
    /// Joined to replace a peer that left (random stay).
    pub replacement: bool,
    pub arrival_s: f64,
    /// When it had the whole file.
    pub done_s: Option<f64>,
    /// Download time: `done_s - arrival_s`.
    pub completion_s: Option<f64>,
    /// 1 for the first leecher to complete in the run.
    pub completion_rank: Option<u64>,
    pub left_s: Option<f64>,
    /// Block payload bytes sent to and received from other peers (delivered in order).
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// One-way propagation delay of its access link.
    pub access_delay_s: f64,
    /// Connections it took part in.
    pub connections: u64,
    /// Block bytes that arrived a second time (of `bytes_down`): a block still in the
    /// uploader's send buffer when it choked us, asked for again elsewhere; or end game.
    pub duplicate_bytes: u64,
    /// With `request_queue_time`: requests outstanding per connection that had any, averaged
    /// over its once-a-second ticks while it downloaded (what libtorrent's
    /// `peer_info::download_queue_length` shows a real swarm); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_queue_mean: Option<f64>,
}

/// Data-transport counters summed over every connection, per uploader transport.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TransportTotals {
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    /// Data packets dropped at a full queue.
    pub drops: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SwarmSummary {
    pub population: Population,
    pub seeding: Seeding,
    pub file_bytes: u64,
    pub pieces: u32,
    pub blocks_per_piece: u32,
    pub peers_joined: u64,
    pub completions: u64,
    pub connections_opened: u64,
    /// The run ended at `stop_after_completions`, not at its duration.
    pub stopped_at_completions: bool,
    /// Packets that arrived for a connection already closed.
    pub stale_packets: u64,
    pub tcp: TransportTotals,
    pub utp: TransportTotals,
}
