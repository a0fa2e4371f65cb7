//! Deterministic packet-level simulator of transfers over a network path.
//!
//! Layers, bottom up: [`engine`] (the event queue), [`network`] (link directions with drop-tail
//! queues, topology and static routes), [`cross`] (traffic without congestion control), the
//! transport (the sans-IO crate `slowstart_transport`: the TCP-like sender and receiver that
//! drive a `slowstart_cc` controller, and the request stream back), [`app`] (bulk, web and
//! BitTorrent applications on top), [`trace`] (sampled series) and [`sim`] (the run loop and
//! metrics), and [`swarm`] (a BitTorrent swarm of peers behind access links, with connections
//! that open and close). Time is integer nanoseconds, sizes integer bytes; the same config and
//! seed give byte-identical output.
//!
//! [`config`] is the canonical config every run starts from, with every default and bound of a
//! scenario; the Python front end (through `slowstart_py`) only resolves a TOML file's units
//! into it. [`export`] writes captures and qlog files as a run goes. The link emulator
//! (`slowstart_emu`) reuses [`network`]'s link model and [`cross`]'s sources against the wall
//! clock.

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
pub mod swarm;
#[cfg(test)]
mod swarm_tests;

// Moved into their own crates (issue #28); the engine's paths to them stay as they were.
pub use slowstart_apps as app;
pub use slowstart_config as config;
#[cfg(test)]
use slowstart_config::testing;
pub use slowstart_config::trace;
pub use slowstart_config::SimError;
pub use slowstart_link as network;
pub use slowstart_link::cross;

pub use config::SimConfig;
pub use export::ExportDirs;
pub use sim::{RunOutput, Simulation, Summary};

/// Told now and then (every [`PROGRESS_EVERY`] events) the simulated time and the run's
/// duration, both in ns; returning false stops the run there, with `interrupted` in its summary.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64) -> bool;

/// Events between two calls of a [`Progress`] (a power of two: the check is one mask).
pub const PROGRESS_EVERY: u64 = 1 << 16;

/// Whether a run stops at `now`: every [`PROGRESS_EVERY`] events `progress` is asked.
pub(crate) fn told_to_stop(events: u64, now: u64, duration: u64, progress: Progress) -> bool {
    events & (PROGRESS_EVERY - 1) == 0 && !progress(now, duration)
}

/// The fault of a user's controller on this thread, taken (`slowstart_cc::external`); only
/// looked for where the run has one (`guests`), since a built-in never faults.
#[inline]
pub(crate) fn guest_fault(guests: bool) -> Option<String> {
    if guests && slowstart_cc::external::faulted() {
        slowstart_cc::external::take_fault()
    } else {
        None
    }
}

/// Validate and run a config.
pub fn run(config: &SimConfig) -> Result<RunOutput, SimError> {
    run_with(config, &mut |_, _| true)
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
    if config.swarm.is_some() {
        if !exports.is_empty() {
            return Err(SimError(
                "pcap, qlog: not written for swarm scenarios (their peers' connections come and go)"
                    .into(),
            ));
        }
        let mut sim = swarm::SwarmSim::new(config)?;
        let end = sim.advance_with(progress);
        return Ok(sim.finish(end));
    }
    let mut sim = Simulation::new(config)?;
    sim.set_exports(exports)?;
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
