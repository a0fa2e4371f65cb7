//! The canonical config of a slowstart run: what every part of the project is told.
//!
//! A scenario (a TOML file, resolved into exact integers by the loader, [`scenario`], or a
//! JSON config handed to the binding) becomes a [`SimConfig`], and everything that runs reads it
//! from here: the engine (`slowstart_sim`), the link emulator (`slowstart_emu`) and the UDP
//! stack (`slowstart_udp`). This crate owns the facts they share, each declared once:
//!
//! # The schema
//! [`SimConfig`] and its tables (nodes and links, [`DirectionConfig`] with its queue
//! [`Discipline`], [`FlowConfig`] with its transport settings and [`AppConfig`],
//! [`CrossConfig`], [`TraceConfig`], [`SwarmConfig`]): every default (`impl Default`, the
//! `*_DEFAULTS` tables), every bound, every accepted word, and the checks that name the field
//! and what is accepted ([`SimConfig::validate`], [`SimError`]), one module of config/ per table
//! (link, queue, path, flow, program, app, cross, trace, swarm). [`defaults_json`] (schema.rs)
//! hands all of them to Python, which copies none.
//!
//! # The scenario's keys
//! [`KEYS`] (keys.rs): which TOML keys each scenario table takes, in the order messages list
//! them, each with its [`Unit`], the canonical field it fills, its one-line meaning and the
//! key it falls back to; the loader, the reference pages and the swarm's words read them
//! through [`defaults_json`] (`keys`, `word_lists`), and a test holds every canonical field to
//! a key.
//!
//! # The scenario loader
//! [`scenario`]: a scenario as written (TOML with units, the `[path]` shorthand, left-out keys,
//! `--set` overrides) → the canonical config, or one line naming the field and what it
//! accepts; one loader for the Python package (through the binding) and the browser
//! (slowstart-web). What lives in the user's files (their controllers, trace files) it asks
//! its [`scenario::Host`] for.
//!
//! # What a run derives from it
//! [`substream_seed`] (each component's own random stream from the scenario's seed),
//! [`FlowConfig::common_params`] (what a flow's controller is built with) and
//! [`stall_threshold`] (a path BDP in payload bytes): one definition for the engine, the swarm
//! and the UDP endpoints, so that a real run seeds and parameterises a controller exactly as
//! the simulated one.
//!
//! # The `cc` grammar
//! [`parse_cc`] ([`cc_text`]): `name:key=value,...` and a user's controller
//! (`PATH.py:Class[:...]`, `PATH.wasm[:...]`), read once for the scenario loader ([`scenario`]),
//! the quinn adapter and any other caller.
//!
//! # The trace columns
//! [`trace`]: the sampled tables (flows, queues, applications), each column declared once with
//! its numpy dtype, and the sampler that decimates a long run into a fixed memory bound.
//! [`recorder`]: the one recorder of a flow ([`FlowRecorder`]), the transport's observer that
//! every driver holds beside its connection, turning what the connection did into the flow
//! trace's rows and the summary's metrics (max cwnd, slow-start exit, time to full bandwidth
//! and to the window cap).
//!
//! # Dependencies
//! Below: `slowstart_cc` (controller names and their parameters, checked here) and
//! `slowstart_transport` (its [`Settings`](slowstart_transport::Settings), which a flow's
//! config produces, and the [`Observer`](slowstart_transport::Observer) the recorder is).
//! Above: `slowstart_link`, `slowstart_apps`, `slowstart_sim`, `slowstart_udp`,
//! `slowstart_emu`, `slowstart_quinn` and the binding. Nothing here runs anything: the
//! recorder is told.
//!
//! Start reading at [`SimConfig`] and [`FlowConfig`] (config/), then [`FlowConfig::transport`]
//! and [`FlowConfig::common_params`], what a run builds a connection from.

pub mod cc_text;
mod config;
mod derived;
mod keys;
pub mod recorder;
pub mod scenario;
mod schema;
#[doc(hidden)]
pub mod testing;
pub mod trace;

pub use cc_text::{parse_cc, CcText, GuestRef, Word, CC_HELP};
pub use config::*;
pub use derived::{stall_threshold, substream_seed, SeedStream};
pub use keys::{keys_json, Fill, Key, Unit, KEYS};
pub use recorder::{FlowMetrics, FlowRecorder};
pub use schema::defaults_json;

/// An error in a scenario or config, naming the field and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimError {}
