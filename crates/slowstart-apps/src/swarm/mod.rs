//! A BitTorrent swarm's peer wire, sans-IO: the file in pieces and the piece picker
//! ([`pieces`]), who gets an upload slot ([`choker`]), the active peers and an announce's answer
//! ([`tracker`]).

pub mod choker;
pub mod pieces;
pub mod tracker;
