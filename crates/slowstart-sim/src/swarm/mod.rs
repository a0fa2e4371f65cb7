//! A BitTorrent swarm over ADSL access links (utp seed: Testa and Rossi, "The impact of uTP on
//! BitTorrent completion time"), at packet level: the engine side of it.
//!
//! - `slowstart_apps::swarm`: the peer wire (the one BitTorrent model: tracker, choker, piece
//!   picker, request pipeline, send buffer), which decides what each peer writes and when.
//! - [`engine`]: what carries it: the access links, each half-connection's transport and the
//!   swarm as an application of the one event loop ([`crate::engine`]), over a calendar queue;
//!   its results (`engine/results.rs`) and memory estimate (`engine/memory.rs`) in modules of
//!   their own.
//!
//! Every peer sits behind its own access link (an up and a down channel, drop-tail); the core
//! between them has infinite capacity and no delay, so a packet from peer `a` to peer `b` crosses
//! `a`'s uplink, then `b`'s downlink. A connection between two peers carries, each way, a
//! control stream over TCP (the BitTorrent messages) and a data stream of piece messages over
//! the uploader's own transport (`tcp` or `utp` settings): the same sender, receiver and
//! controllers as every other flow of the simulator. With `messages = "with_data"` the messages
//! ride in their sender's data stream instead.

pub mod engine;

pub use engine::SwarmSim;
