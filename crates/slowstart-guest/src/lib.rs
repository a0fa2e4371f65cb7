//! Your own congestion controller as a WebAssembly guest.
//!
//! Write a type that implements [`CongestionController`] (the trait every built-in implements,
//! re-exported here with its events), build it with [`export!`] for `wasm32-unknown-unknown`, and
//! run it with `slowstart run SCENARIO --cc ./my_start.wasm`. The engine builds one instance of
//! the module per connection; the guest has no imports at all (no file, network or clock): time
//! and randomness (`CommonParams::seed`) come only from the engine.
//!
//! A built-in as a guest (the README's example writes its own controller):
//!
//! ```
//! use slowstart_guest::{cc, export, CommonParams, Params};
//! export!(|common: &CommonParams, params: &Params| {
//!     params.reject_unknown(&[])?;
//!     cc::Controller::new(&cc::CcSpec::named("reno"), common).map_err(|e| e.0)
//! });
//! # assert_eq!(slowstart_abi_version(), slowstart_guest::abi::VERSION);
//! ```
//!
//! [`abi`] is the contract between host and guest, for guests written in other languages (C,
//! Zig): its exports, the layout of the exchange block, and the version the host checks at load.

#![warn(missing_docs)]

// The README's example, run by `cargo test --doc` (the README is what crates.io shows).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod abi;
#[doc(hidden)]
pub mod runtime;

pub use slowstart_cc::{
    self as cc, reno, AckEvent, CommonParams, CongestionController, CongestionEvent, Nanos, Phase,
    RateSample, SentEvent,
};

pub use abi::Params;

/// Export `build` (a `fn(&CommonParams, &Params) -> Result<C, String>` for a
/// [`CongestionController`] `C`) as the module's controller, under the exports [`abi`] lists.
#[macro_export]
macro_rules! export {
    ($build:expr) => {
        #[no_mangle]
        pub extern "C" fn slowstart_abi_version() -> i32 {
            $crate::abi::VERSION
        }
        #[no_mangle]
        pub extern "C" fn slowstart_io() -> i32 {
            $crate::runtime::io_address()
        }
        #[no_mangle]
        pub extern "C" fn slowstart_new(
            mss: i64,
            initcwnd: i64,
            abc: i32,
            seed: i64,
            paced: i32,
        ) -> i32 {
            $crate::runtime::new(mss, initcwnd, abc, seed, paced, $build)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_events() -> i32 {
            $crate::runtime::events()
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_packet_sent() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::Sent)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_ack() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::Ack)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_rtt_sample() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::RttSample)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_congestion_event() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::Congestion)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_recovery_exit() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::RecoveryExit)
        }
        #[no_mangle]
        pub extern "C" fn slowstart_on_rto() -> i32 {
            $crate::runtime::deliver($crate::abi::EventKind::Rto)
        }
    };
}
