//! The module the Playground runs (built by `make web`) gives the native engine's bytes: the
//! same envelope (summary and every trace column) for the same config, the same one-line
//! message for a bad one, and it stops when its progress import says so. Run in wasmi, the
//! interpreter the workspace already has.

use std::path::PathBuf;

use slowstart_config::testing::{flow, path, MS, SEC};
use slowstart_config::{QueueLimit, SimConfig};
use wasmi::{Caller, Engine, Linker, Module, Store};

/// The module as `make web` builds it.
fn module_bytes() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/wasm32-unknown-unknown/web/slowstart_web.wasm");
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; build the module first (make web)", path.display()))
}

/// What the module did with a config: its status, its output and how often it told progress.
struct WasmRun {
    status: u32,
    out: Vec<u8>,
    progress_calls: u32,
}

/// Run `config` in the module; `stop_after` progress calls, the import answers 0 (stop).
fn run_in_wasm(config: &str, stop_after: Option<u32>) -> WasmRun {
    run_in_wasm_by("ss_run", config, stop_after)
}

/// Call the module's `entry` (`ss_run` or `ss_run_scenario`) on `text`.
fn run_in_wasm_by(entry: &str, text: &str, stop_after: Option<u32>) -> WasmRun {
    let config = text;
    let engine = Engine::default();
    let module = Module::new(&engine, module_bytes()).unwrap();
    let mut store = Store::new(&engine, 0u32);
    let mut linker = Linker::<u32>::new(&engine);
    linker
        .func_wrap(
            "env",
            "ss_progress",
            move |mut caller: Caller<'_, u32>, now: f64, end: f64| -> i32 {
                assert!(now <= end, "{now} > {end}");
                *caller.data_mut() += 1;
                i32::from(stop_after.is_none_or(|n| *caller.data() < n))
            },
        )
        .unwrap();
    let instance = linker.instantiate_and_start(&mut store, &module).unwrap();
    let memory = instance.get_memory(&store, "memory").unwrap();
    let version = instance.get_typed_func::<(), u32>(&store, "ss_abi_version");
    let alloc = instance
        .get_typed_func::<u32, u32>(&store, "ss_alloc")
        .unwrap();
    let run = instance
        .get_typed_func::<(u32, u32), u32>(&store, entry)
        .unwrap();
    let out_ptr = instance
        .get_typed_func::<(), u32>(&store, "ss_out_ptr")
        .unwrap();
    let out_len = instance
        .get_typed_func::<(), u32>(&store, "ss_out_len")
        .unwrap();
    let version = version.unwrap().call(&mut store, ()).unwrap();
    assert_eq!(version, slowstart_web::ABI_VERSION);

    let len = config.len() as u32;
    let ptr = alloc.call(&mut store, len).unwrap();
    memory
        .write(&mut store, ptr as usize, config.as_bytes())
        .unwrap();
    let status = run.call(&mut store, (ptr, len)).unwrap();
    let (p, n) = (
        out_ptr.call(&mut store, ()).unwrap() as usize,
        out_len.call(&mut store, ()).unwrap() as usize,
    );
    let out = memory.data(&store)[p..p + n].to_vec();
    WasmRun {
        status,
        out,
        progress_calls: *store.data(),
    }
}

/// Two controllers on a lossy 50 Mbps, 40 ms path with a 1-BDP buffer, for 30 s: some 78 000
/// events, so that progress is told (every 65 536).
fn config() -> SimConfig {
    let bdp = 50_000_000 * 40 * MS / 8 / SEC;
    let mut c = path(
        50_000_000,
        40 * MS,
        QueueLimit::Bytes(bdp),
        vec![flow("reno", Some(3_000_000)), flow("cubic", None)],
        vec![],
    );
    c.links[1].forward.loss = 0.002;
    c.duration_ns = 30 * SEC;
    c
}

/// The envelope's summary and header.
fn texts(envelope: &[u8]) -> (serde_json::Value, serde_json::Value) {
    let length = |at: usize| u32::from_le_bytes(envelope[at..at + 4].try_into().unwrap()) as usize;
    let n = length(0);
    let m = length(4 + n);
    let summary = serde_json::from_slice(&envelope[4..4 + n]).unwrap();
    let header = serde_json::from_slice(&envelope[8 + n..8 + n + m]).unwrap();
    (summary, header)
}

#[test]
fn the_module_gives_the_native_engines_bytes() {
    let json = serde_json::to_string(&config()).unwrap();
    let native = slowstart_web::run(&json, &mut |_| true).unwrap();
    let wasm = run_in_wasm(&json, None);
    assert_eq!(wasm.status, 0, "{}", String::from_utf8_lossy(&wasm.out));
    // A run that did something: both flows delivered, some loss, rows in every flow column.
    let (summary, h) = texts(&native);
    let flows = summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    assert!(flows
        .iter()
        .all(|f| f["bytes_delivered"].as_u64().unwrap() > 1_000_000));
    assert!(flows[1]["retransmits"].as_u64().unwrap() > 0);
    let cwnd = &h["tables"]["flows"][2];
    assert_eq!(cwnd["name"], "cwnd_bytes");
    assert!(cwnd["bytes"].as_u64().unwrap() > 8 * 100);
    let events = summary["events"].as_u64().unwrap();
    assert!(events > 65_536, "{events} events");
    assert_eq!(u64::from(wasm.progress_calls), events / 65_536);
    // Byte for byte (a mismatch is shown by where it starts, not as two megabytes).
    let first = native.iter().zip(&wasm.out).position(|(a, b)| a != b);
    assert_eq!(first, None, "the envelopes differ from byte {first:?}");
    assert_eq!(native.len(), wasm.out.len());
}

#[test]
fn a_bad_config_gets_the_cores_one_line() {
    let mut c = config();
    c.flows[1].initcwnd = 0;
    let json = serde_json::to_string(&c).unwrap();
    let native = slowstart_web::run(&json, &mut |_| true).unwrap_err().0;
    assert!(native.starts_with("flow.1.initcwnd: "), "{native}");
    assert!(!native.contains('\n'));
    let wasm = run_in_wasm(&json, None);
    assert_eq!(
        (wasm.status, String::from_utf8(wasm.out).unwrap()),
        (1, native)
    );

    // Traces that could outgrow the browser's memory: refused before the run, in one line.
    let mut c = config();
    c.trace.max_rows = 100_000_000;
    let json = serde_json::to_string(&c).unwrap();
    let native = slowstart_web::run(&json, &mut |_| true).unwrap_err().0;
    assert!(
        native.starts_with("trace.max_rows: 100000000 rows"),
        "{native}"
    );
    let wasm = run_in_wasm(&json, None);
    assert_eq!(
        (wasm.status, String::from_utf8(wasm.out).unwrap()),
        (1, native)
    );
    c.trace.max_rows = 2_000_000; // the default passes
    assert!(slowstart_web::check_memory(&c).is_ok());

    let wasm = run_in_wasm("{\"name\": 5}", None);
    let line = String::from_utf8(wasm.out).unwrap();
    assert_eq!(wasm.status, 1);
    assert!(
        line.starts_with("name: invalid type: integer `5`"),
        "{line}"
    );
}

#[test]
fn progress_answering_zero_stops_the_run() {
    let json = serde_json::to_string(&config()).unwrap();
    let wasm = run_in_wasm(&json, Some(1));
    assert_eq!(wasm.status, 0);
    let (summary, _) = texts(&wasm.out);
    assert_eq!(summary["interrupted"], true);
    assert!(summary["sim_time_s"].as_f64().unwrap() < 30.0);
}

/// A small scenario as a user would write it: units, the [path] shorthand, defaults left out.
const SCENARIO: &str = r#"
description = "two flows over a lossy path"
duration = "20s"
[path]
rate = "50Mbps"
rtt = "40ms"
buffer = "1bdp"
loss = "0.2%"
[[flow]]
cc = "reno"
size = "3MB"
[[flow]]
start = "1s"
"#;

fn request(set: &[&str], cc: Option<&str>) -> String {
    serde_json::json!({"toml": SCENARIO, "set": set, "cc": cc, "name": "lossy"}).to_string()
}

#[test]
fn a_scenarios_toml_with_overrides_gives_the_native_engines_bytes() {
    let text = request(
        &["path.rate=20Mbps", "flow.*.initcwnd=20"],
        Some("cubic:beta=0.6"),
    );
    let native = slowstart_web::run_scenario(&text, &mut |_| true).unwrap();
    let wasm = run_in_wasm_by("ss_run_scenario", &text, None);
    assert_eq!(wasm.status, 0, "{}", String::from_utf8_lossy(&wasm.out));
    let first = native.iter().zip(&wasm.out).position(|(a, b)| a != b);
    assert_eq!(first, None, "the envelopes differ from byte {first:?}");
    assert_eq!(native.len(), wasm.out.len());
    // The overrides took: the path's rate, each flow's window and algorithm, the name given.
    let (summary, _) = texts(&native);
    assert_eq!(summary["scenario"], "lossy");
    let flows = summary["flows"].as_array().unwrap();
    assert!(
        flows.iter().all(|f| f["cc"] == "cubic:beta=0.6"),
        "{flows:?}"
    );
    let config: serde_json::Value =
        serde_json::from_str(&slowstart_web::load(&serde_json::from_str(&text).unwrap()).unwrap())
            .unwrap();
    assert_eq!(config["links"][1]["forward"]["rate_bps"], 20_000_000);
    assert_eq!(config["links"][1]["forward"]["queue"]["bytes"], 100_000);
    assert_eq!(config["flows"][1]["initcwnd"], 20);
}

#[test]
fn a_bad_scenario_gets_the_loaders_one_line() {
    for (set, cc, start) in [
        (
            vec!["path.rate=fast"],
            None,
            "path.rate: expected a rate such as \"250Mbps\"",
        ),
        (
            vec!["path.colour=red"],
            None,
            "--set path.colour=red: unknown key \"colour\"",
        ),
        (
            vec![],
            Some("warp"),
            "flow.0.cc: unknown algorithm \"warp\"",
        ),
        (
            vec![],
            Some("mine.wasm"),
            "flow.0.cc: \"mine.wasm\" is your own controller",
        ),
        (vec!["flow.0.mss=0"], None, "flow.0.mss: "),
    ] {
        let text = request(&set, cc);
        let native = slowstart_web::run_scenario(&text, &mut |_| true)
            .unwrap_err()
            .0;
        assert!(native.starts_with(start), "{native}");
        assert!(!native.contains('\n'), "{native}");
        let wasm = run_in_wasm_by("ss_run_scenario", &text, None);
        assert_eq!(
            (wasm.status, String::from_utf8(wasm.out).unwrap()),
            (1, native)
        );
    }
    let wasm = run_in_wasm_by("ss_run_scenario", r#"{"toml": "duration = ["}"#, None);
    let line = String::from_utf8(wasm.out).unwrap();
    assert!(line.starts_with("scenario: invalid TOML: "), "{line}");
}
