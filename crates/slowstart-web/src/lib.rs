//! The engine in the browser: `slowstart_sim` behind a small C ABI, built for
//! `wasm32-unknown-unknown` (`make web`) and run by the documentation's Playground
//! (docs/playground.md, docs/playground/worker.js) in a Web Worker.
//!
//! The module takes a scenario's TOML text with `--set` overrides and a `--cc`, read by the
//! core's loader (`slowstart_config::scenario`, the one `slowstart run` uses through the
//! binding), or a canonical JSON config; it checks it with the core's own rules, runs it and
//! hands back one buffer, [`envelope`]: the summary and every trace column, the same bytes the
//! native engine gives (tests/native.rs compares them). A bad scenario or config gives the
//! core's one line naming the field, the line the CLI prints. What a scenario reads from files
//! (a user's controller, a trace file) is refused here (`scenario::NoFiles`).
//!
//! Why not wasm-bindgen: the interface is bytes in and bytes out, six functions and one import;
//! a C ABI needs no generated glue and no pinned CLI, and the JavaScript side is a page of
//! `worker.js`; the module's size is the same either way (within 2%).
//! Sizes: docs/performance.md ("The engine in the browser").
//!
//! # The ABI (version [`ABI_VERSION`])
//! - `ss_abi_version() -> u32`: [`ABI_VERSION`], which the page checks before a run.
//! - `ss_alloc(len) -> ptr`, `ss_free(ptr, len)`: a buffer in the module's memory.
//! - `ss_run_scenario(ptr, len) -> status`: run the UTF-8 JSON [`ScenarioRequest`] at `ptr`
//!   (`{"toml": TEXT, "set": ["path.rate=100Mbps", ...], "cc": "cubic:beta=0.5" or null,
//!   "name": "satellite"}`); 0 if it ran (the output is the envelope), 1 if the scenario was
//!   refused (the output is the one-line message).
//! - `ss_run(ptr, len) -> status`: the same for a canonical JSON config at `ptr` (the
//!   reproductions' live figures).
//! - `ss_out_ptr()`, `ss_out_len()`: the last output; valid until the next call of `ss_run`.
//!   After a trap (a panic, memory exhausted) it holds the panic's message, if there was one.
//! - Imported: `env.ss_progress(now_ns: f64, end_ns: f64) -> i32`, told every
//!   [`slowstart_sim::PROGRESS_EVERY`] events; 0 stops the run (its summary says `interrupted`).

use slowstart_config::scenario::{self, NoFiles};
use slowstart_sim::{RunOutput, SimConfig, SimError};

/// Bumped when a function's meaning or the envelope's layout changes; the page checks it.
/// 2: `ss_run_scenario`, a scenario's TOML with overrides.
pub const ABI_VERSION: u32 = 2;

/// A scenario as the page sends it: `slowstart run`'s file and options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRequest {
    /// The scenario file's text.
    pub toml: String,
    /// `--set KEY=VALUE` items, in order.
    #[serde(default)]
    pub set: Vec<String>,
    /// `--cc`: every flow's algorithm.
    #[serde(default)]
    pub cc: Option<String>,
    /// The scenario's name where its text gives none (the CLI names it by its file).
    #[serde(default)]
    pub name: Option<String>,
}

/// A scenario's TOML with overrides → the canonical config as JSON, by the core's loader (the
/// same one line as the CLI for a bad value).
pub fn load(request: &ScenarioRequest) -> Result<String, SimError> {
    scenario::load_toml(
        &request.toml,
        request.name.as_deref(),
        request.cc.as_deref(),
        &request.set,
        &mut NoFiles,
    )
}

/// Read a [`ScenarioRequest`] (JSON), load and run it into its [`envelope`], or the loader's or
/// the core's one line.
pub fn run_scenario(
    request_json: &str,
    progress: slowstart_sim::Progress,
) -> Result<Vec<u8>, SimError> {
    let request: ScenarioRequest =
        serde_json::from_str(request_json).map_err(|e| SimError(format!("request: {e}")))?;
    run(&load(&request)?, progress)
}

/// A run's output as one buffer: the summary, a JSON header, then the columns' bytes back to
/// back; each of the two texts is preceded by its length in bytes (a little-endian u32). The
/// summary is the engine's exactly as serialised for `_core.run`; the header is
/// `{"link_names": [...], "phase_names": [...], "tables": {"flows": [{"name", "dtype", "unset",
/// "codes", "offset", "bytes"}, ...], "queues": [...], "apps": [...]}}`, a column's `offset`
/// counting from the end of the header.
pub fn envelope(out: &RunOutput) -> Result<Vec<u8>, SimError> {
    let summary = serde_json::to_string(&out.summary).map_err(|e| SimError(e.to_string()))?;
    let mut body = Vec::new();
    let mut tables = serde_json::Map::new();
    for (name, columns) in [
        ("flows", out.flows.columns()),
        ("queues", out.queues.columns()),
        ("apps", out.apps.columns()),
    ] {
        let mut list = Vec::new();
        for c in columns {
            list.push(serde_json::json!({
                "name": c.name,
                "dtype": c.dtype,
                "unset": c.unset,
                "codes": c.codes,
                "offset": body.len(),
                "bytes": c.bytes.len(),
            }));
            body.extend_from_slice(&c.bytes);
        }
        tables.insert(name.into(), list.into());
    }
    let phases: Vec<&str> = slowstart_cc::Phase::ALL.iter().map(|p| p.name()).collect();
    let links: Vec<&str> = out.summary.links.iter().map(|l| l.name.as_str()).collect();
    let header = serde_json::json!({"phase_names": phases, "link_names": links, "tables": tables})
        .to_string();
    let mut buffer = Vec::with_capacity(8 + summary.len() + header.len() + body.len());
    for text in [&summary, &header] {
        buffer.extend_from_slice(&(text.len() as u32).to_le_bytes());
        buffer.extend_from_slice(text.as_bytes());
    }
    buffer.extend_from_slice(&body);
    Ok(buffer)
}

/// What the traces of a run in the browser may take at most: half of the 4 GiB a wasm32
/// module can address, the engine's queues and the output's copy needing the rest.
pub const TRACE_BUDGET_BYTES: u64 = 2 << 30;

/// The most a trace row costs across the three tables (flows 53 B, queues 28 B, apps 36 B:
/// slowstart_config::trace), twice over for a growing vector's spare capacity.
const ROW_BYTES: u64 = 2 * (53 + 28 + 36);

/// Refuse, before it runs, a run whose traces could outgrow the browser's memory (a module
/// out of memory can only trap), naming the field as the core's messages do.
pub fn check_memory(config: &SimConfig) -> Result<(), SimError> {
    let rows = config.trace.max_rows;
    let most = TRACE_BUDGET_BYTES / ROW_BYTES;
    if rows > most {
        return Err(SimError(format!(
            "trace.max_rows: {rows} rows a table could need {} MB, more than a page in the \
             browser can hold; at most {most} here (the command line takes it)",
            rows.saturating_mul(ROW_BYTES) / 1_000_000
        )));
    }
    Ok(())
}

/// Parse, validate and run a canonical JSON config into its [`envelope`], or the core's one
/// line naming the field ([`check_memory`]'s for a run too large for the browser).
pub fn run(config_json: &str, progress: slowstart_sim::Progress) -> Result<Vec<u8>, SimError> {
    let config = SimConfig::from_json(config_json)?;
    config.validate()?;
    check_memory(&config)?;
    envelope(&slowstart_sim::run_with(&config, progress)?)
}

#[cfg(target_arch = "wasm32")]
mod abi {
    use std::cell::RefCell;

    #[link(wasm_import_module = "env")]
    extern "C" {
        fn ss_progress(now_ns: f64, end_ns: f64) -> i32;
    }

    thread_local! {
        static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    #[no_mangle]
    pub extern "C" fn ss_abi_version() -> u32 {
        super::ABI_VERSION
    }

    #[no_mangle]
    pub extern "C" fn ss_alloc(len: usize) -> *mut u8 {
        let mut v = Vec::<u8>::with_capacity(len);
        let p = v.as_mut_ptr();
        std::mem::forget(v);
        p
    }

    /// # Safety
    /// `ptr` and `len` are what one `ss_alloc` call gave and took.
    #[no_mangle]
    pub unsafe extern "C" fn ss_free(ptr: *mut u8, len: usize) {
        drop(Vec::from_raw_parts(ptr, 0, len));
    }

    type Runner = fn(&str, slowstart_sim::Progress) -> Result<Vec<u8>, super::SimError>;

    /// Run `runner` on the UTF-8 text at `ptr..ptr + len` (named `what` if it is not UTF-8).
    unsafe fn run_text(ptr: *const u8, len: usize, what: &str, runner: Runner) -> u32 {
        std::panic::set_hook(Box::new(|info| {
            let line = info.to_string().replace('\n', " ");
            OUT.with(|o| *o.borrow_mut() = format!("the engine stopped: {line}").into_bytes());
        }));
        OUT.with(|o| *o.borrow_mut() = Vec::new());
        let text = std::slice::from_raw_parts(ptr, len);
        let (status, out) = match std::str::from_utf8(text) {
            Err(_) => (1, format!("{what}: not UTF-8 text").into_bytes()),
            Ok(text) => match runner(text, &mut |tick| {
                ss_progress(tick.now_ns as f64, tick.end_ns as f64) != 0
            }) {
                Ok(buffer) => (0, buffer),
                Err(e) => (1, e.0.into_bytes()),
            },
        };
        OUT.with(|o| *o.borrow_mut() = out);
        status
    }

    /// # Safety
    /// `ptr..ptr + len` is a buffer from `ss_alloc`.
    #[no_mangle]
    pub unsafe extern "C" fn ss_run(ptr: *const u8, len: usize) -> u32 {
        run_text(ptr, len, "config", super::run)
    }

    /// # Safety
    /// `ptr..ptr + len` is a buffer from `ss_alloc`.
    #[no_mangle]
    pub unsafe extern "C" fn ss_run_scenario(ptr: *const u8, len: usize) -> u32 {
        run_text(ptr, len, "scenario", super::run_scenario)
    }

    #[no_mangle]
    pub extern "C" fn ss_out_ptr() -> *const u8 {
        OUT.with(|o| o.borrow().as_ptr())
    }

    #[no_mangle]
    pub extern "C" fn ss_out_len() -> usize {
        OUT.with(|o| o.borrow().len())
    }
}
