//! Deterministic packet-level simulator of transfers over a network path.
//!
//! This crate is the event loop: it owns time and nothing else that another stack could share.
//! Layers, bottom up, each in its own crate but the last:
//! - `slowstart_cc`: the congestion controllers (sans-IO).
//! - `slowstart_transport`: the TCP-like connection (sans-IO) that drives a controller.
//! - `slowstart_config`: the canonical config every run starts from, with every default and
//!   bound of a scenario (the Python front end only resolves a TOML file's units into it),
//!   seeds, the trace column table and each flow's recorder (its trace rows and summary
//!   metrics, the transport's observer).
//! - `slowstart_link`: link directions with their queue disciplines and loss, capacity traces,
//!   topology and static routes, cross traffic.
//! - `slowstart_apps`: bulk, web and BitTorrent applications on the transport.
//! - here: [`engine`] (the one event loop, its clock and its queues; the swarm's is [`wheel`]),
//!   the two applications it runs, [`sim`] (flows over a topology of links, with their
//!   applications, cross traffic, metrics and traces: it tells each flow's recorder and qlog
//!   file what its sender did) and [`swarm`] (a BitTorrent swarm of peers behind access links,
//!   with connections that open and close), [`summary`] (what a run reports, which both fill),
//!   and [`export`] (captures and qlog files written as a run goes).
//!
//! Time is integer nanoseconds, sizes integer bytes; the same config and seed give
//! byte-identical output. The UDP stack (`slowstart_udp`) and the link emulator
//! (`slowstart_emu`) sit beside this crate, not above it: they use the transport, config, apps
//! and link crates against the wall clock and never this event loop. Above it sits the binding
//! (`slowstart_py`).
//!
//! Start reading at [`run`], then [`engine::advance_with`] (the loop: pop an event, take a
//! link's head packet or fire a connection's timer, hand the rest to the application, flush
//! what the endpoints asked for), then [`sim::Simulation`], the application every run but a
//! swarm is. [`fuzzing`] fuzzes this loop with arbitrary configs (`fuzz/`).

#[cfg(test)]
mod app_tests;
#[cfg(test)]
mod config_tests;
#[cfg(test)]
mod cross_tests;
pub mod engine;
pub mod export;
#[doc(hidden)]
pub mod fuzzing;
pub mod sim;
#[cfg(test)]
mod sim_tests;
pub mod summary;
pub mod swarm;
#[cfg(test)]
mod swarm_tests;
pub mod wheel;

pub use export::ExportDirs;
pub use sim::Simulation;
pub use slowstart_config::{SimConfig, SimError};
pub use summary::{RunOutput, Summary};

/// Told now and then (every [`PROGRESS_EVERY`] events) how far the run got ([`Tick`]);
/// returning false stops the run there, with `interrupted` in its summary.
pub type Progress<'a> = &'a mut dyn FnMut(&Tick) -> bool;

/// What a [`Progress`] is told: the simulated time and the run's duration, and a swarm's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// Simulated time, ns.
    pub now_ns: u64,
    /// The run's duration, ns.
    pub end_ns: u64,
    /// A swarm's peers and completions ([`engine::Application::swarm_status`]); None for flows.
    pub swarm: Option<SwarmStatus>,
}

/// A swarm as it runs: what its summary will say of it if it stops now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwarmStatus {
    /// Peers joined so far, seeds and those who left included (`peers_joined`).
    pub peers: u64,
    /// Leechers that had the whole file so far (`completions`).
    pub completions: u64,
    /// The completions the run stops at (`swarm.stop_after`), if any.
    pub stop_after: Option<u64>,
}

/// Events between two calls of a [`Progress`] (a power of two: the check is one mask).
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// Validate and run a config.
pub fn run(config: &SimConfig) -> Result<RunOutput, SimError> {
    run_with(config, &mut |_| true)
}

/// Validate and run a config, reporting progress (and stopping when `progress` says so).
pub fn run_with(config: &SimConfig, progress: Progress) -> Result<RunOutput, SimError> {
    run_exporting(config, &ExportDirs::default(), progress)
}

/// [`run_with`], writing captures and qlog files where `exports` says.
pub fn run_exporting(
    config: &SimConfig,
    exports: &ExportDirs,
    progress: Progress,
) -> Result<RunOutput, SimError> {
    run_streaming(config, exports, progress, None)
}

/// [`run_exporting`], handing the trace rows to `stream`, when given, as the run goes
/// ([`Simulation::stream_traces`]); the output's traces hold the last rows. Not for swarms.
pub fn run_streaming(
    config: &SimConfig,
    exports: &ExportDirs,
    progress: Progress,
    stream: Option<sim::TraceStream>,
) -> Result<RunOutput, SimError> {
    if config.swarm.is_some() {
        if !exports.is_empty() {
            return Err(SimError(
                "pcap, qlog: not written for swarm scenarios (their peers' connections come and go)"
                    .into(),
            ));
        }
        if stream.is_some() {
            return Err(SimError(
                "stream: traces of swarm scenarios are not streamed (write them at the end)".into(),
            ));
        }
        let mut sim = swarm::SwarmSim::new(config)?;
        let end = sim.advance_with(progress);
        return Ok(sim.finish(end));
    }
    let mut sim = Simulation::new(config)?;
    sim.set_exports(exports)?;
    if let Some(stream) = stream {
        sim.stream_traces(stream);
    }
    let end = sim.advance_with(progress);
    Ok(sim.finish(end))
}

/// Parse a canonical JSON config, validate it and run it.
pub fn run_json(config_json: &str) -> Result<RunOutput, SimError> {
    run(&SimConfig::from_json(config_json)?)
}

/// [`run_json`] with a [`Progress`].
pub fn run_json_with(config_json: &str, progress: Progress) -> Result<RunOutput, SimError> {
    run_with(&SimConfig::from_json(config_json)?, progress)
}

/// [`run_json_with`], writing captures and qlog files where `exports` says.
pub fn run_json_exporting(
    config_json: &str,
    exports: &ExportDirs,
    progress: Progress,
) -> Result<RunOutput, SimError> {
    run_exporting(&SimConfig::from_json(config_json)?, exports, progress)
}
