//! `slowstart._core`: the Python binding. No logic: JSON config in, summary JSON and trace
//! columns (little-endian bytes for `numpy.frombuffer`) out.
//!
//! The top of the Rust stack: it exposes `slowstart_sim`'s run, validation, defaults and schema
//! `slowstart_cc`'s registry, `slowstart_config`'s scenario loader (`load_scenario`, with the
//! Python package as its host for the user's files) and `cc` grammar (`guest_reference`) to
//! the Python package (`python/slowstart`), which owns finding and reading the user's files,
//! the CLI, sweeps, reproductions and figures. Python reads every
//! default, bound and column name through here, never from a copy.

/// The extension's allocator: mimalloc, not the C library's. At 30 000 swarm peers glibc's
/// malloc took a quarter of the second-level misses (consolidating and unlinking freed chunks);
/// with mimalloc the 100 000-peer swarm's first 120 s took 31% less CPU than with glibc and
/// 13% more peak memory, with jemalloc about 10% less CPU and the same memory (issue #37;
/// bench/README.md). mimalloc also reads the page size at run time, where jemalloc fixes it
/// when built (its `--with-lg-page`) and a 4 KiB build fails on a 64 KiB-page kernel.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyAny, PyBool, PyBytes, PyDict, PyFloat, PyList, PyString};
use slowstart_cc::registry::{ParamValue, ALGORITHMS};
use slowstart_cc::Phase;
use slowstart_config::scenario::{self, Host, Overrides, Stage, Trace, V};
use slowstart_config::trace::{AppTrace, FlowTrace, QueueTrace};
use slowstart_config::{GuestRef, SimError};
use slowstart_sim::sim::{TraceChunk, TraceStream};
use slowstart_sim::ExportDirs;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

mod guest;
use std::time::{Duration, Instant};

/// Wall time between two looks at Ctrl-C and the caller's progress callback.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Run a canonical JSON config; raises ValueError naming the bad field. `progress(now_s,
/// end_s)` is called about every 100 ms of wall time; for a swarm `progress(now_s, end_s,
/// swarm)`, `swarm` a dict of "peers" (joined so far), "completions" and "stop_after" (None
/// when the run does not stop at completions). Ctrl-C (or an exception from `progress`)
/// stops the run: it returns what it has, its summary saying `interrupted`. `qlog` and `pcap`
/// are folders to write qlog files and captures into (OSError if they cannot be written).
/// `stream(chunk)`, when given, takes the trace rows as the run goes (`slowstart_sim::
/// run_streaming`): `chunk` holds "flows", "queues" and "apps" as the result does, with
/// "phase_names" and "link_names"; its exception stops the run and is raised.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, qlog=None, pcap=None, stream=None))]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<Bound<'py, PyAny>>,
    qlog: Option<PathBuf>,
    pcap: Option<PathBuf>,
    stream: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut last = Instant::now();
    let mut failure: Option<PyErr> = None;
    let mut tick = |tick: &slowstart_sim::Tick| {
        if last.elapsed() < PROGRESS_INTERVAL {
            return true;
        }
        last = Instant::now();
        let told = py.check_signals().and_then(|()| match &progress {
            Some(p) => tell(p, tick),
            None => Ok(()),
        });
        match told {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    };
    let exports = ExportDirs { qlog, pcap };
    let stream_failure: Rc<RefCell<Option<PyErr>>> = Rc::default();
    let sink = stream.map(|stream| {
        let failed = Rc::clone(&stream_failure);
        Box::new(move |chunk: TraceChunk| {
            Python::attach(|py| {
                let tables = PyDict::new(py);
                trace_tables(&tables, &chunk.flows, &chunk.queues, &chunk.apps)?;
                tables.set_item("phase_names", phase_names())?;
                tables.set_item("link_names", chunk.link_names)?;
                stream.call1(py, (tables,)).map(drop)
            })
            .map_err(|e| {
                let line = e.to_string();
                *failed.borrow_mut() = Some(e);
                line
            })
        }) as TraceStream
    });
    let ran = slowstart_sim::SimConfig::from_json(config_json)
        .and_then(|config| slowstart_sim::run_streaming(&config, &exports, &mut tick, sink));
    // The run's state is freed: give its pages back now, not after mimalloc's delay, so that
    // the results' tables built next in Python's own heap do not add to a peak of the run's
    // (the 10 000-leecher swarm with its tables: 766 MB peak, against 552 with glibc).
    // SAFETY: mi_collect only returns memory mimalloc holds free.
    unsafe { libmimalloc_sys::mi_collect(true) };
    if let Some(e) = stream_failure.take() {
        return Err(e);
    }
    let mut out = ran.map_err(|e| PyValueError::new_err(e.0))?;
    if guest::take_interrupt() {
        // Ctrl-C inside a Python controller: the user's stop, not the controller's fault.
        out.summary.fault = None;
    }
    if let Some(e) = out.export_error {
        return Err(PyOSError::new_err(e));
    }
    // Ctrl-C returns what was run so far (`interrupted`); any other exception is raised.
    if let Some(e) = failure {
        if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(e);
        }
    }
    let result = PyDict::new(py);
    let summary =
        serde_json::to_string(&out.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
    result.set_item("summary", summary)?;
    // What the run was of ("flows", "swarm"): Python picks its result class by it, once.
    result.set_item("kind", out.summary.kind.name())?;

    trace_tables(&result, &out.flows, &out.queues, &out.apps)?;
    result.set_item("phase_names", phase_names())?;
    let links: Vec<&str> = out.summary.links.iter().map(|l| l.name.as_str()).collect();
    result.set_item("link_names", links)?;
    Ok(result)
}

/// `progress(now_s, end_s)`, or for a swarm `progress(now_s, end_s, swarm)` (see [`run`]).
fn tell(progress: &Bound<'_, PyAny>, tick: &slowstart_sim::Tick) -> PyResult<()> {
    let (now_s, end_s) = (tick.now_ns as f64 / 1e9, tick.end_ns as f64 / 1e9);
    let Some(status) = tick.swarm else {
        return progress.call1((now_s, end_s)).map(drop);
    };
    let swarm = PyDict::new(progress.py());
    swarm.set_item("peers", status.peers)?;
    swarm.set_item("completions", status.completions)?;
    swarm.set_item("stop_after", status.stop_after)?;
    progress.call1((now_s, end_s, swarm)).map(drop)
}

/// The trace tables into `into`: "flows", "queues", "apps", each column name -> (bytes,
/// dtype, unset, codes).
fn trace_tables(
    into: &Bound<'_, PyDict>,
    flows: &FlowTrace,
    queues: &QueueTrace,
    apps: &AppTrace,
) -> PyResult<()> {
    let py = into.py();
    for (name, columns) in [
        ("flows", flows.columns()),
        ("queues", queues.columns()),
        ("apps", apps.columns()),
    ] {
        let table = PyDict::new(py);
        for c in columns {
            let bytes = PyBytes::new(py, &c.bytes);
            table.set_item(c.name, (bytes, c.dtype, c.unset, c.codes))?;
        }
        into.set_item(name, table)?;
    }
    Ok(())
}

/// The phases' names, which the flow trace's `phase` codes index.
fn phase_names() -> Vec<&'static str> {
    Phase::ALL.iter().map(|p| p.name()).collect()
}

/// Parse and validate a canonical JSON config without running it; raises ValueError naming the
/// bad field.
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    slowstart_sim::SimConfig::from_json(config_json)
        .and_then(|c| c.validate())
        .map_err(|e| PyValueError::new_err(e.0))
}

/// A swarm's peers and the most bytes one of them holds at its limits
/// (`slowstart_sim::swarm::engine::peak_bytes_per_peer`), for the run's memory check before it
/// starts; None for a run without a swarm. Validates first: ValueError naming the bad field.
#[pyfunction]
fn swarm_peak_bytes(config_json: &str) -> PyResult<Option<(u64, u64)>> {
    let config = slowstart_sim::SimConfig::from_json(config_json)
        .and_then(|c| c.validate().map(|()| c))
        .map_err(|e| PyValueError::new_err(e.0))?;
    Ok(config.swarm.as_ref().map(|s| {
        (
            s.seeds + s.leechers,
            slowstart_sim::swarm::engine::peak_bytes_per_peer(s),
        )
    }))
}

/// A Python value as the loader reads a scenario's: bool, int (numpy's too), float, str,
/// list, dict (keys as `str()` writes them), None; any other object by its `str()`,
/// which the loader refuses wherever it is read.
fn value_of(obj: &Bound<'_, PyAny>) -> PyResult<V> {
    if obj.is_none() {
        return Ok(V::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(V::Bool(b.is_true()));
    }
    if let Ok(x) = obj.cast::<PyFloat>() {
        return Ok(V::Float(x.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(V::Str(s.to_string_lossy().into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut table = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s.to_string_lossy().into_owned(),
                Err(_) => k.str()?.to_string_lossy().into_owned(),
            };
            table.push((key, value_of(&v)?));
        }
        return Ok(V::Table(table));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l
            .iter()
            .map(|v| value_of(&v))
            .collect::<PyResult<_>>()
            .map(V::List);
    }
    if obj.hasattr("__index__")? {
        if let Ok(i) = obj.extract::<i128>() {
            return Ok(V::Int(i));
        }
        if let Ok(x) = obj.extract::<f64>() {
            return Ok(V::Float(x));
        }
    }
    Ok(V::Other(obj.str()?.to_string_lossy().into_owned()))
}

/// The loader's host in Python (slowstart.loading.scenario `_Files`): it loads users'
/// controllers and reads trace files. A ValueError it raises is the loader's one line; any
/// other exception is kept and raised once the loader returns.
struct PyHost<'py> {
    host: Bound<'py, PyAny>,
    failure: Option<PyErr>,
}

impl PyHost<'_> {
    fn refused(&mut self, e: PyErr) -> SimError {
        let py = self.host.py();
        if e.is_instance_of::<PyValueError>(py) {
            return SimError(e.value(py).to_string());
        }
        self.failure = Some(e);
        SimError(String::new())
    }
}

impl Host for PyHost<'_> {
    fn guest(&mut self, reference: &str, field: &str) -> Result<(String, V), SimError> {
        let got = self
            .host
            .call_method1("guest", (reference, field))
            .and_then(|r| {
                let (name, guest): (String, Bound<'_, PyAny>) = r.extract()?;
                Ok((name, value_of(&guest)?))
            });
        got.map_err(|e| self.refused(e))
    }

    fn trace(&mut self, name: &str, field: &str) -> Result<Trace, SimError> {
        let got = self
            .host
            .call_method1("trace", (name, field))
            .and_then(|r| r.extract::<(String, u64, u64)>());
        match got {
            Ok((times, count, last_ms)) => Ok(Trace {
                times,
                count,
                last_ms,
            }),
            Err(e) => Err(self.refused(e)),
        }
    }

    fn is_file(&mut self, path: &str) -> bool {
        match self
            .host
            .call_method1("is_file", (path,))
            .and_then(|r| r.extract())
        {
            Ok(b) => b,
            Err(e) => {
                self.failure = Some(e);
                false
            }
        }
    }
}

/// A raw scenario (a dict, as TOML reads one) with `slowstart.load`'s overrides, by the core's
/// loader (`slowstart_config::scenario`), as far as `until` says: "overridden" (the raw
/// scenario with `--cc`, each `--set` item, `--seed` and `--duration` applied), "built" (the
/// canonical config, not yet checked by the core's rules) or "checked" (the config `load`
/// returns). `host` has `guest(reference, field) -> (name, guest)`, `trace(name, field) ->
/// (times, count, last_ms)` and `is_file(path) -> bool`. ValueError with the loader's one line.
#[pyfunction]
#[pyo3(signature = (raw, host, set=None, cc=None, seed=None, duration=None, until="checked"))]
#[allow(clippy::too_many_arguments)]
fn load_scenario<'py>(
    raw: &Bound<'py, PyAny>,
    host: &Bound<'py, PyAny>,
    set: Option<&Bound<'py, PyAny>>,
    cc: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    duration: Option<&Bound<'py, PyAny>>,
    until: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let opt = |o: Option<&Bound<'py, PyAny>>| o.map(value_of).transpose();
    let overrides = Overrides {
        cc: opt(cc)?,
        set: opt(set)?,
        seed: opt(seed)?,
        duration: opt(duration)?,
    };
    let mut files = PyHost {
        host: host.clone(),
        failure: None,
    };
    let stage = match until {
        "overridden" => Stage::Overridden,
        "built" => Stage::Built,
        "checked" => Stage::Checked,
        other => {
            return Err(PyValueError::new_err(format!(
                "until: {other:?} is not a stage (accepted: overridden, built, checked)"
            )))
        }
    };
    let loaded = scenario::load_until(value_of(raw)?, &overrides, &mut files, stage);
    if let Some(e) = files.failure.take() {
        return Err(e);
    }
    let out = loaded.map_err(|e| PyValueError::new_err(e.0))?;
    py_of(raw.py(), &out)
}

/// A value of the loader's tree as Python's (the inverse of `value_of`; an object it could not
/// read comes back as its `str()`).
fn py_of<'py>(py: Python<'py>, value: &V) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        V::Null => py.None().into_bound(py),
        V::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        V::Int(i) => i.into_pyobject(py)?.into_any(),
        V::Float(x) => PyFloat::new(py, *x).into_any(),
        V::Str(s) | V::Other(s) => PyString::new(py, s).into_any(),
        V::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(py_of(py, item)?)?;
            }
            list.into_any()
        }
        V::Table(t) => {
            let dict = PyDict::new(py);
            for (k, v) in t {
                dict.set_item(k, py_of(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// One value read as the loader reads a key of unit kind `unit` (`scenario::parse_value`:
/// "time", "rate", "size", "size_or_inf", "count", "window", "loss"); ValueError with its line.
#[pyfunction]
#[pyo3(signature = (unit, value, field, mss=0, what="an integer >= 0"))]
fn parse_value<'py>(
    unit: &str,
    value: &Bound<'py, PyAny>,
    field: &str,
    mss: u64,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let read = scenario::parse_value(unit, &value_of(value)?, field, mss, what)
        .map_err(|e| PyValueError::new_err(e.0))?;
    py_of(value.py(), &read)
}

/// A buffer → the canonical queue limit at `rate_bps`, a BDP multiple of `path` (rate_bps,
/// rtt_ns) (`scenario::buffer_limit`); ValueError with its line.
#[pyfunction]
#[pyo3(signature = (value, field, rate_bps, path=None))]
fn buffer_limit<'py>(
    value: &Bound<'py, PyAny>,
    field: &str,
    rate_bps: u64,
    path: Option<(u64, u64)>,
) -> PyResult<Bound<'py, PyAny>> {
    let limit = scenario::buffer_limit(&value_of(value)?, field, rate_bps, path)
        .map_err(|e| PyValueError::new_err(e.0))?;
    py_of(value.py(), &limit)
}

/// Every scenario table's defaults as a scenario writes them, as JSON
/// (`scenario::written_defaults_json`).
#[pyfunction]
fn scenario_defaults() -> String {
    scenario::written_defaults_json()
}

/// A canonical value (JSON) as a scenario writes a key of unit kind `unit`, as JSON
/// (`scenario::written_json`: 40000000 as a time is "40ms").
#[pyfunction]
fn written(unit: &str, canonical_json: &str) -> PyResult<String> {
    let value: serde_json::Value =
        serde_json::from_str(canonical_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(scenario::written_json(unit, &value))
}

/// A `--set` value as the loader reads it: a TOML value, else the text itself (stripped).
#[pyfunction]
fn set_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py_of(py, &scenario::set_value(text))
}

/// The user's controller a `cc` string starts with, as the grammar finds it: {"kind"
/// ("python" or "wasm"), "path", "class" (None for wasm), "params" (the text after its colon,
/// or None)}, or None for anything else.
#[pyfunction]
fn guest_reference<'py>(py: Python<'py>, text: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
    GuestRef::split(text)
        .map(|(guest, params)| guest_dict(py, &guest, params))
        .transpose()
}

fn guest_dict<'py>(
    py: Python<'py>,
    guest: &GuestRef,
    params: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    match guest {
        GuestRef::Python { path, class } => {
            out.set_item("kind", "python")?;
            out.set_item("path", path)?;
            out.set_item("class", class)?;
        }
        GuestRef::Wasm { path } => {
            out.set_item("kind", "wasm")?;
            out.set_item("path", path)?;
            out.set_item("class", py.None())?;
        }
        GuestRef::Bpf { path } => {
            out.set_item("kind", "bpf")?;
            out.set_item("path", path)?;
            out.set_item("class", py.None())?;
        }
    }
    out.set_item("params", params)?;
    Ok(out)
}

/// Every algorithm with its parameters, as a JSON list.
#[pyfunction]
fn algorithms() -> String {
    let list: Vec<serde_json::Value> = ALGORITHMS
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "summary": a.summary,
                "source": a.source,
                // The default slow-start rule of an algorithm that takes one, else null.
                "slow_start": a.slow_start,
                // The ECN feedbacks it reads (its default first), if it needs ECN, else null.
                "needs_ecn": slowstart_cc::registry::needs_ecn(a.name),
                "params": a.all_params().map(|p| serde_json::json!({
                    "name": p.name,
                    "doc": p.doc,
                    // The shared slow-start parameter's default is the algorithm's own rule.
                    "default": match (p.name, a.slow_start) {
                        ("slow_start", Some(rule)) => rule,
                        _ => p.default,
                    },
                    "accepted": p.accepted(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Every default of the canonical config and every choice's words, as JSON
/// (`slowstart_config::defaults_json`), with the largest controller module among the
/// limits (`slowstart_wasm::MODULE_LIMIT`, which the loader applies to a controller's file).
#[pyfunction]
fn defaults() -> String {
    let mut all: serde_json::Value =
        serde_json::from_str(&slowstart_config::defaults_json()).expect("defaults_json is JSON");
    all["limits"]["controller_file_bytes"] = slowstart_wasm::MODULE_LIMIT.into();
    all.to_string()
}

/// The summary's and the traces' names, as JSON (`slowstart_sim::summary::schema_json`).
#[pyfunction]
fn schema() -> String {
    slowstart_sim::summary::schema_json()
}

/// Register a WebAssembly controller module under `name` (its content hash in the name);
/// ValueError with one line if the module does not fit the guest interface.
#[pyfunction]
fn register_wasm(name: &str, module: &[u8]) -> PyResult<()> {
    slowstart_wasm::register(name, module).map_err(PyValueError::new_err)
}

/// Register a BPF `tcp_congestion_ops` object under `name` (its content hash in the name);
/// ValueError with one line if it cannot run (`slowstart_bpf::load`).
#[pyfunction]
fn register_bpf(name: &str, object: &[u8]) -> PyResult<()> {
    slowstart_bpf::register(name, object).map_err(PyValueError::new_err)
}

/// What a BPF object is: {"name" (its tcp_congestion_ops .name, as the kernel registers it),
/// "flags", "hooks", "kfuncs", "globals" (the ones `key=value` may set)}; ValueError with one
/// line if it cannot run.
#[pyfunction]
fn bpf_object_info<'py>(py: Python<'py>, object: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let o = slowstart_bpf::load(object).map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("name", &o.name)?;
    out.set_item("flags", o.flags)?;
    out.set_item("hooks", o.hooks.keys().collect::<Vec<_>>())?;
    out.set_item("kfuncs", &o.kfuncs)?;
    out.set_item("globals", o.settable_globals())?;
    Ok(out)
}

/// The object with `params` ({global: int or bool}) written into its globals, for the kernel to
/// load; ValueError naming the global otherwise.
#[pyfunction]
fn bpf_set_globals(object: &[u8], params: BTreeMap<String, Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    let mut values = BTreeMap::new();
    for (key, value) in params {
        let v = if let Ok(b) = value.extract::<bool>() {
            ParamValue::Bool(b)
        } else if let Ok(x) = value.extract::<f64>() {
            ParamValue::Number(x)
        } else {
            ParamValue::Text(value.str()?.to_string())
        };
        values.insert(key, v);
    }
    slowstart_bpf::set_globals(object, &values).map_err(PyValueError::new_err)
}

/// The WebAssembly runtimes this build has (`wasmi`, and `wasmtime` with the feature `jit`), the
/// default last.
#[pyfunction]
fn wasm_runtimes() -> Vec<&'static str> {
    slowstart_wasm::Runtime::BUILT
        .iter()
        .map(|r| r.name())
        .collect()
}

/// Register a Python controller class under `name`; the engine builds one instance per
/// connection, with the keywords mss, initcwnd, abc, seed, paced and the spec's parameters.
#[pyfunction]
fn register_python(name: &str, class: Py<PyAny>) {
    guest::register(name, class);
}

/// Run one endpoint of `slowstart real --stack udp` in this process, as the `slowstart-udp`
/// binary does with the same arguments (`slowstart_udp::cli`), and return its exit status.
/// For a flow whose controller is Python (registered here first): the loop runs without the
/// GIL and takes it only for the controller's calls.
#[pyfunction]
fn udp_endpoint(py: Python<'_>, args: Vec<String>) -> u8 {
    py.detach(|| slowstart_udp::cli::main(args))
}

/// Whether `name` is registered as a user's controller in this process.
#[pyfunction]
fn is_registered(name: &str) -> bool {
    slowstart_cc::external::is_registered(name)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(register_wasm, m)?)?;
    m.add_function(wrap_pyfunction!(register_bpf, m)?)?;
    m.add_function(wrap_pyfunction!(bpf_object_info, m)?)?;
    m.add_function(wrap_pyfunction!(bpf_set_globals, m)?)?;
    m.add_function(wrap_pyfunction!(register_python, m)?)?;
    m.add_function(wrap_pyfunction!(wasm_runtimes, m)?)?;
    m.add_function(wrap_pyfunction!(is_registered, m)?)?;
    m.add_function(wrap_pyfunction!(udp_endpoint, m)?)?;
    m.add_class::<guest::SentEvent>()?;
    m.add_class::<guest::AckEvent>()?;
    m.add_class::<guest::RateSample>()?;
    m.add_class::<guest::CongestionEvent>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(swarm_peak_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(defaults, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(set_value, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(written, m)?)?;
    m.add_function(wrap_pyfunction!(parse_value, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_limit, m)?)?;
    m.add_function(wrap_pyfunction!(guest_reference, m)?)?;
    m.add("CC_HELP", slowstart_config::CC_HELP)?;
    m.add("GUEST_HELP", scenario::GUEST_HELP)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
