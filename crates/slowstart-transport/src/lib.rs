//! The TCP-like transport the simulator runs, sans-IO: no clock, no sockets, no randomness.
//! Every entry point takes the time (`now`, integer nanoseconds) and an [`Io`], where the
//! packets an endpoint sends go. A driver holds a flow [`Session`] (a [`Connection`] and its
//! application) or a connection's end, and calls `handle_packet`, `handle_timeout(s)` and
//! `poll_timeout`, the one deadline: the simulator's event loop (`slowstart_sim::engine`)
//! keeps one queue entry per session ([`session::Wake`]); a loop over sockets, the fuzzer and
//! the tests sleep until `poll_timeout`. Only [`connection`] fires the transport's [`Timer`]s.
//!
//! The layer between the controllers below (`slowstart_cc`, which decide cwnd and pacing) and
//! what moves packets above: the simulator's links (`slowstart_sim`) or UDP sockets
//! (`slowstart_udp`). It owns everything TCP-like that is not congestion control: sequence
//! space, loss detection, recovery, timers, ACK policy and the receive window.
//!
//! - [`session`]: a connection and its application ([`session::FlowApp`]) with one deadline,
//!   telling the observer what the sender did: what the simulator's flows are;
//! - [`connection`]: a flow's two ends (sender and receiver, each with its side of the request
//!   stream) behind `handle_packet`, `handle_timeouts` and `poll_timeout`, and the one place
//!   that decides what firing a timer does;
//! - [`recipe`]: what each new connection of a flow is made from ([`ConnectionRecipe`]), and
//!   what its closed connections' receivers counted ([`EarlierReceivers`]), for every driver
//!   that opens them;
//! - [`observe`]: the [`Observer`] a driver holds beside its connection, told of each sender
//!   event with its time ([`SenderEnd::notify`]: losses, a phase change once, the event), and
//!   of packets sent and received: what traces, summaries and qlog files are made from, the
//!   same way in every driver (the recorder of traces and summary metrics is
//!   `slowstart_config::recorder`, beside the trace columns);
//! - [`packet`]: the one packet record, with its SACK blocks;
//! - [`ranges`]: a set of disjoint byte or segment ranges (SACK scoreboard, reassembly);
//! - [`timer`]: a deadline and which of the five it is;
//! - [`settings`]: the transport's settings, checked in one place;
//! - [`rto`]: the RFC 6298 retransmission timer, shared by the sender and the request stream;
//! - [`sender`]: handshake, SACK scoreboard and loss detection (RFC 6675, RACK-TLP), recovery
//!   (PRR), pacing and the send loop, driving a `slowstart_cc` controller;
//! - [`receiver`]: reassembly, SACK blocks, delayed ACKs and the receive window;
//! - [`request`]: the application's requests back from receiver to sender (go-back-N);
//! - [`wire`]: the packets as UDP datagrams, versioned and bounds-checked.
//!
//! Start reading at [`session`] (what a driver calls), then [`connection`] and [`sender`]. The tests sit beside the code (`connection_tests.rs`, each module's own); the
//! fuzz harness of a lossy, reordering channel is `fuzzing::transport` (`fuzz/`).

pub mod connection;
#[cfg(test)]
mod connection_tests;
#[doc(hidden)]
pub mod fuzzing;
pub mod observe;
#[cfg(test)]
mod observe_tests;
pub mod packet;
#[doc(hidden)]
pub mod pipe;
pub mod ranges;
pub mod receiver;
pub mod recipe;
pub mod request;
pub mod rto;
pub mod sender;
pub mod session;
pub mod settings;
pub mod timer;
pub mod wire;

pub use connection::{
    notify, Connection, DataEnds, Fired, LazyConnection, Received, ReceiverEnd, SenderEnd,
};
pub use observe::{Observer, SenderEvent};
pub use packet::{Kind, Packet};
pub use recipe::{ConnectionRecipe, EarlierReceivers};
pub use session::{Ctx, FlowApp, Outcome, Session, Wake};
pub use settings::{LossDetection, Recovery, Settings};
pub use timer::{Timer, TimerKind};

/// The packets an endpoint sent while handling one event, for the driver to put on the wire.
#[derive(Default)]
pub struct Io {
    pub packets: Vec<Packet>,
}

impl Io {
    pub fn send(&mut self, p: Packet) {
        self.packets.push(p);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use crate::settings::{LossDetection, Recovery, Settings};

    pub const MS: u64 = 1_000_000;
    pub const SEC: u64 = 1_000_000_000;

    /// The scenario defaults: MSS 1460, 40-byte headers, initrwnd 10, delayed ACKs every 2
    /// segments after 40 ms, RTO 200 ms to 120 s, no pacing, PRR, RACK-TLP.
    pub fn settings() -> Settings {
        Settings {
            mss: 1460,
            header_bytes: 40,
            initrwnd: 10,
            max_rwnd_bytes: None,
            max_window_bytes: None,
            delayed_ack: true,
            delack_timeout_ns: 40 * MS,
            ack_every: 2,
            quickack: false,
            min_rto_ns: 200 * MS,
            max_rto_ns: 120 * SEC,
            pacing: false,
            pacer: Default::default(),
            recovery: Recovery::Prr,
            loss_detection: LossDetection::Rack,
            ecn: false,
            ecn_feedback: crate::settings::CeFeedback::Classic,
            receiver_ecn: Default::default(),
            ecn_reduction: Default::default(),
            accurate_only: false,
            cwnd_limited: Default::default(),
        }
    }
}
