//! A BitTorrent swarm over ADSL access links (utp seed: Testa and Rossi, "The impact of uTP on
//! BitTorrent completion time"), at packet level.
//!
//! - `slowstart_apps::swarm::{pieces, choker, tracker}`: the file in pieces and blocks,
//!   bitfields, piece selection; who gets an upload slot; the active peers and an announce's
//!   answer.
//! - [`engine`]: peers, connections that open and close: the swarm as an application of the
//!   one event loop ([`crate::engine`]), over a calendar queue; its peer-wire messages
//!   (`engine/messages.rs`), choking (`engine/choking.rs`) and results (`engine/results.rs`)
//!   in modules of their own.
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

pub mod engine;

pub use engine::SwarmSim;
