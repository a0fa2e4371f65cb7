//! Sans-IO congestion controllers.
//!
//! The bottom layer of slowstart: `slowstart_transport` drives these controllers, the
//! simulator (`slowstart_sim`) and the UDP endpoints (`slowstart_udp`) drive that transport, and
//! the Python front end lists the [`registry`] (`slowstart list`, the documentation's generated
//! algorithm reference). Adding an algorithm touches only this crate.
//!
//! Nothing in this crate reads a clock, draws randomness of its own or touches a socket. A
//! transport (the simulator's, or a real one) feeds timestamped events in and reads the
//! controller's decisions out:
//!
//! - [`AckEvent`]: bytes newly delivered by one ACK, with its RTT, one-way delay and
//!   delivery-rate samples, bytes in flight and whether the sender was application limited.
//! - [`CongestionEvent`]: the start of a loss-recovery episode (RFC 6675 §5), once per episode.
//! - `on_rto`: a retransmission timeout (RFC 6298 §5).
//! - Out: [`CongestionController::cwnd`], `ssthresh`, `pacing_rate`, `send_quantum`, [`Phase`].
//!
//! Layers: [`controller`] (the interface and the events), [`estimators`] (RTT and delivery-rate
//! sampling a transport shares with every algorithm), [`window`] (slow-start and additive-increase
//! arithmetic shared by the loss-based algorithms), [`params`] (what a controller is built
//! from: its spec, the flow's common settings, and how an algorithm declares its parameters,
//! with defaults and accepted ranges, and reads them), components several algorithms keep for
//! themselves ([`round`] counting, the [`windowed_filter`], the [`rng`]), one module per
//! algorithm, and on top [`registry`] (the list of algorithms and construction of one from a
//! [`CcSpec`]; the `name:key=value` text of a spec is read by
//! `slowstart_config::parse_cc`). A user's own controller (a Python class, a WebAssembly guest) comes in
//! through [`external`]: registered under a name at run time, built like any algorithm, its
//! every answer checked.
//!
//! Start reading at [`controller`], then [`reno`] (the smallest algorithm) and [`registry`].
//! No module uses one above it (tests/test_crate_modules.py holds every crate to that).
//! The fuzz harness of every controller is `fuzzing::controllers` (`fuzz/`).

#![warn(missing_docs)]

// The README's example, run by `cargo test --doc` (the README is what crates.io shows).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod aimd;
pub mod bbr;
pub mod bbr1;
pub mod careful_resume;
pub mod controller;
pub mod cubic;
pub mod dctcp;
pub mod estimators;
pub mod external;
#[doc(hidden)]
pub mod fuzzing;
pub mod hstcp;
pub mod hybla;
pub mod ledbat;
pub mod loss_based;
pub mod params;
pub mod prague;
pub mod rapid_start;
pub mod registry;
pub mod reno;
pub mod rng;
pub mod round;
pub mod scalable;
pub mod slow_start;
#[cfg(test)]
pub(crate) mod test_pipe;
pub mod utp;
pub mod vegas;
pub mod vegas_lss;
pub mod window;
pub mod windowed_filter;

pub use controller::{
    AckEvent, CongestionController, CongestionEvent, EcnCodepoint, EcnFeedback, NegotiatedEcn,
    Phase, SentEvent,
};
pub use estimators::{RateSample, RateSampler, RttEstimator};
pub use params::{Algorithm, CcError, CcSpec, CommonParams};
pub use registry::Controller;

/// Time in integer nanoseconds, from an origin the transport chooses.
pub type Nanos = u64;

/// One second in [`Nanos`].
pub const SECOND: Nanos = 1_000_000_000;

/// `a * b / c` rounded down, without overflow, saturating (`c` of 0 counts as 1). In u64 when
/// the product fits: the same quotient without a 128-bit division call, which per-ACK rates
/// and pacing gaps would otherwise pay.
#[inline]
pub fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let c = c.max(1);
    match a.checked_mul(b) {
        Some(product) => product / c,
        None => (a as u128 * b as u128 / c as u128).min(u64::MAX as u128) as u64,
    }
}

/// [`mul_div`] rounded up.
#[inline]
pub fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    let c = c.max(1);
    match a.checked_mul(b) {
        Some(product) => product.div_ceil(c),
        None => (a as u128 * b as u128)
            .div_ceil(c as u128)
            .min(u64::MAX as u128) as u64,
    }
}
