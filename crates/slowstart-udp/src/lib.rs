//! The simulator's transport (`slowstart_transport`) and controllers (`slowstart_cc`) over real
//! UDP sockets: the same sans-IO sender and receiver, driven by the host's monotonic clock
//! instead of the event queue. One packet per datagram ([`slowstart_transport::wire`]).
//!
//! A sibling of the simulator (`slowstart_sim`) above the same transport: where the simulator
//! moves packets over modelled links, this moves them over the host's network, which
//! `slowstart real --stack udp` makes an emulated path (`slowstart_emu`) between two network
//! namespaces. The simulator's web application (`slowstart_apps::web`) runs here too, its
//! client and server halves in separate processes. It depends on the transport, the config
//! (`slowstart_config`: a flow's settings, seeds and controller parameters, as simulated) and
//! the applications, never on the event loop.
//!
//! ECN crosses the host's network as it does a simulated link: each datagram's IP header
//! carries the packet's ECT or CE codepoint, written and read per datagram ([`ecn`]), so a
//! queue that marks CE on the way (the emulator's) is seen by the receiver, which echoes it in
//! the transport's header.
//!
//! Each endpoint talks to one peer address and drops datagrams from any other. What arrives
//! from the peer is decoded and checked before the transport sees it: a datagram that does not
//! parse, an ACK of bytes never sent, SACK blocks past what was sent, and data whose payload is
//! not the known pattern are dropped and counted, so no forged or corrupted byte is delivered.
//! A transfer that stops making progress ends with one error line.
//!
//! Start reading at [`endpoint`] ([`run_sender`] and [`run_receiver`]: the loop that waits for a
//! datagram or the connection's `poll_timeout`), then [`web`]. [`cli`] is the binary's
//! arguments and report; the sender's `--trace` is the engine's flow trace
//! (`slowstart_config::trace::FlowTrace`), written under its column names, and it and the
//! report's window metrics are made by the engine's recorder
//! (`slowstart_config::FlowRecorder`), told of the same sender events.

pub mod cli;
pub mod clock;
pub mod ecn;
pub mod endpoint;
pub mod pattern;
pub mod web;

pub use endpoint::{run_receiver, run_sender, Limits, ReceiverReport, SenderReport};
pub use web::{run_client, run_server, ClientReport, ServerOptions};

#[cfg(test)]
mod layering {
    /// Issue #28: the UDP stack shares the transport, config and applications with the
    /// simulator, never its event loop.
    #[test]
    fn the_engine_is_not_a_dependency() {
        let manifest = include_str!("../Cargo.toml");
        assert!(
            !manifest.contains("slowstart-sim"),
            "slowstart-udp must not depend on slowstart-sim"
        );
    }
}
