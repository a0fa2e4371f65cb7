//! The engine's fuzz harness (issue #15), a plain function of a byte string: `fuzz/` runs it
//! under libFuzzer (`cargo fuzz`), and `cargo test` replays the saved corpus through the same
//! code. It panics only on a broken invariant; bad input is a clean `Err`, never a panic.
//!
//! - [`config_json`]: a canonical config from arbitrary JSON, through validation, to a 10 ms run.
//!
//! It fuzzes the engine, so it stays here; the controllers' harness is
//! `slowstart_cc::fuzzing::controllers`, the transport's `slowstart_transport::fuzzing::transport`.

use slowstart_config::SimConfig;

/// Largest simulated time a fuzzed config runs for, and limits that keep one input cheap.
const FUZZ_RUN_NS: u64 = 10_000_000;
const FUZZ_MAX_FLOWS: usize = 16;
const FUZZ_MAX_PEERS: u64 = 32;

/// Arbitrary JSON as a canonical config: rejected with an error, or validated and run for at
/// most 10 ms of simulated time (sizes capped so that one input stays cheap).
pub fn config_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut cfg) = SimConfig::from_json(text) else {
        return;
    };
    if cfg.validate().is_err() {
        return;
    }
    cfg.duration_ns = cfg.duration_ns.min(FUZZ_RUN_NS);
    cfg.trace.max_rows = cfg.trace.max_rows.min(10_000);
    if cfg.flows.len() > FUZZ_MAX_FLOWS {
        return;
    }
    if let Some(s) = &mut cfg.swarm {
        s.leechers = s.leechers.min(FUZZ_MAX_PEERS);
        s.seeds = s.seeds.min(FUZZ_MAX_PEERS);
    }
    // Shortening the run may make a flow start after it ends: validation says so cleanly.
    let _ = crate::run(&cfg);
}

#[cfg(test)]
mod tests {
    #[test]
    fn config_corpus_replays() {
        assert!(slowstart_cc::fuzzing::replay("config", super::config_json) > 0);
    }
}
