//! slowstart's congestion controllers inside [quinn](https://github.com/quinn-rs/quinn), the Rust
//! QUIC stack.
//!
//! [`SlowstartFactory`] is a quinn-proto `congestion::ControllerFactory` for any controller the
//! core builds from a spec (`"cubic:slow_start=hystart++"`, `"hystart-pb"`, `"bbr"`, a user's
//! WebAssembly controller registered with `slowstart_wasm::register`): give it to
//! `TransportConfig::congestion_controller_factory` and the application runs it unchanged.
//!
//! ```no_run
//! use std::sync::Arc;
//! use slowstart_quinn::SlowstartFactory;
//!
//! let cc = SlowstartFactory::new("cubic:slow_start=hystart-pb").expect("a known algorithm");
//! let mut transport = quinn::TransportConfig::default();
//! transport.congestion_controller_factory(Arc::new(cc));
//! let mut client = quinn::ClientConfig::with_root_certificates(Arc::new(
//!     rustls::RootCertStore::empty(), // your roots
//! ))
//! .expect("roots");
//! client.transport_config(Arc::new(transport));
//! ```
//!
//! **Supported version: quinn 0.11.12 with quinn-proto 0.11.19, pinned in Cargo.toml.** The
//! adapter follows what quinn-proto calls and when (connection/mod.rs); another release is a new
//! check of that mapping, not a version bump.
//!
//! How quinn's calls become the core's events ([`adapter`]):
//!
//! - quinn calls `on_ack` for every acknowledged packet and `on_end_acks` once per ACK frame:
//!   the packets of one frame are one [`slowstart_cc::AckEvent`], whose RTT sample is taken from
//!   the newest packet's send time, its smoothed and minimum RTT from quinn's `RttEstimator`,
//!   bytes in flight from quinn, and `cwnd_limited` from quinn's app-limited flag.
//! - quinn calls `on_congestion_event` for every batch of packets it declares lost; the batches
//!   of one recovery episode (RFC 9002 §7.3.2: until a packet sent after its start is
//!   acknowledged) are one [`slowstart_cc::CongestionEvent`], and the acknowledgement that ends
//!   it is the core's `on_recovery_exit`. Persistent congestion (RFC 9002 §7.6) is the core's
//!   `on_rto`. An ECN-CE batch (0 lost bytes) is an ECN congestion event.
//! - quinn gives no delivery-rate samples: the adapter keeps a
//!   [`slowstart_cc::RateSampler`] (draft-cheng-iccrg-delivery-rate-estimation), with a snapshot
//!   per send time, so BBR and hystart-pb get theirs.
//! - The window is never below 2 datagrams (RFC 9002 §7.2); the MSS the core sees is quinn's
//!   current UDP payload size, updated by `on_mtu_update`.
//! - Controllers steering by one-way delay (LEDBAT, uTP: [`adapter::NEEDS_ONE_WAY_DELAY`]) are
//!   refused: QUIC carries no send timestamp.
//! - quinn paces every connection at 1.25 cwnd / srtt by itself (quinn-proto
//!   connection/pacing.rs) and asks the controller for its window only. A rate-based
//!   controller's pacing rate (BBR's) is therefore not the sending rate: BBR's cwnd of about 2
//!   BDP is sent at 2.5 times the estimated bandwidth, and its pacing-gain cycle shows only
//!   through cwnd. The rate is exposed as quinn allows, in `metrics().pacing_rate` (qlog).
//!
//! [`record`] writes and replays quinn's calls, which the unit tests use (`tests/calls/`);
//! [`trace`] is the cwnd trace of the `slowstart-quinn` client/server binary (src/main.rs), which
//! `slowstart real --stack quinn` runs through the emulated path.

#![warn(missing_docs)]

// The README's example, run by `cargo test --doc` (the README is what crates.io shows).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod adapter;
pub mod record;
pub mod trace;

pub use adapter::{Adapter, SlowstartFactory, DEFAULT_INITIAL_PACKETS};
