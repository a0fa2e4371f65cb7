//! The scenario loader: a scenario as written (TOML with units, the `[path]` shorthand, left-out
//! keys, `--set` overrides) → the canonical config ([`crate::SimConfig`]'s JSON), or one line
//! naming the field and what it accepts (`flow.0.mss: ...`, `path.rate: ...`).
//!
//! One loader for every front end: the Python package (through the binding's `load_scenario`)
//! and the browser (slowstart-web). What touches the user's files is the [`Host`]'s: a user's
//! controller (`x.py:Cls`, `x.wasm`, `x.bpf.o`, which the Python package loads and hashes) and
//! a Mahimahi trace file. Keys, units, defaults and words are keys.rs's and config/'s, read
//! through [`crate::defaults_json`]; the submodules mirror a scenario's parts: units
//! (quantities), tables (keys and defaults), links (`[path]`, `[[link]]`), queues (disciplines,
//! Gilbert-Elliott loss, traces), apps, cc, overrides, toml_text.

mod apps;
mod cc;
mod links;
mod overrides;
mod queues;
mod tables;
mod toml_text;
mod units;
mod value;

pub use cc::GUEST_HELP;
pub use overrides::{apply_overrides, Overrides};
pub use queues::Trace;
pub use toml_text::set_value;

/// Every scenario table's defaults as a scenario writes them (`{"flow": {"cc": {"name":
/// "reno"}, "start": "0s", ...}, "path": {"buffer": "1bdp", ...}, ...}`, tables.rs `defaults`),
/// as JSON: what a left-out key is read as, and what the CLI and the reference pages show.
pub fn written_defaults_json() -> String {
    let mut names: Vec<&String> = tables::written_defaults().keys().collect();
    names.sort();
    let all = names
        .into_iter()
        .map(|name| (name.clone(), tables::written_defaults()[name].clone()))
        .collect();
    V::Table(all).to_json()
}

/// A canonical value (JSON) as a scenario writes a key of unit kind `unit` (tables.rs
/// `written`), as JSON.
pub fn written_json(unit: &str, canonical: &serde_json::Value) -> String {
    tables::written(unit, canonical).to_json()
}
pub use value::{show, V};

use apps::{parse_app, parse_program};
use cc::{check_cc, parse_cc};
use links::{expand_links, expand_path, node_list, node_ref, queue_limit, scenario_field};
use tables::{
    check_table, defaults, filled_int, key_names, key_table, keys, over, parse_str, read_keys,
    require, Reader,
};
use units::{err, parse_int, parse_time, parse_window, INT};

use crate::{SimConfig, SimError};

/// What the loader asks of its caller: what lives in the user's files.
pub trait Host {
    /// A user's controller named by `reference` as written (`x.py:Cls`, `x.wasm`, `x.bpf.o`) →
    /// its canonical name (with the content's hash) and its `guest` table; an error names
    /// `field`.
    fn guest(&mut self, reference: &str, field: &str) -> Result<(String, V), SimError>;
    /// A Mahimahi trace file; an error names `field`.
    fn trace(&mut self, name: &str, field: &str) -> Result<Trace, SimError>;
    /// Whether `path` is a file (a controller written without its suffix is named as one).
    fn is_file(&mut self, path: &str) -> bool;
}

/// A host without files (the browser): a user's controller or a trace file is refused.
pub struct NoFiles;

impl Host for NoFiles {
    fn guest(&mut self, reference: &str, field: &str) -> Result<(String, V), SimError> {
        Err(err(format!(
            "{field}: {} is your own controller, which runs with `slowstart run`, not here",
            show(&V::str(reference))
        )))
    }

    fn trace(&mut self, name: &str, field: &str) -> Result<Trace, SimError> {
        Err(err(format!(
            "{field}: {} is a trace file, which runs with `slowstart run`, not here",
            show(&V::str(name))
        )))
    }

    fn is_file(&mut self, _: &str) -> bool {
        false
    }
}

/// TOML text's table, or one line naming `source` (`scenario`, a file) and where it is not
/// TOML.
pub fn parse_toml(text: &str, source: &str) -> Result<V, SimError> {
    toml_text::parse(text).map_err(|e| err(format!("{source}: invalid TOML: {e}")))
}

/// A scenario (its raw table) with overrides → the canonical config as JSON, checked by the
/// core's own rules ([`SimConfig::validate`], its messages naming a link's field as the
/// scenario wrote it).
pub fn load(raw: V, overrides: &Overrides, host: &mut dyn Host) -> Result<String, SimError> {
    load_until(raw, overrides, host, Stage::Checked).map(|config| config.to_json())
}

/// How far [`load_until`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The raw scenario with `--cc`, each `--set` item, `--seed` and `--duration` applied.
    Overridden,
    /// The canonical config, not yet checked by the core's rules.
    Built,
    /// The canonical config [`load`] returns.
    Checked,
}

/// [`load`]'s steps as far as `stage`, the value tree at that point.
pub fn load_until(
    raw: V,
    overrides: &Overrides,
    host: &mut dyn Host,
    stage: Stage,
) -> Result<V, SimError> {
    let mut raw = raw;
    overrides::apply_overrides(&mut raw, overrides, host)?;
    if stage == Stage::Overridden {
        return Ok(raw);
    }
    let config = build_config(&raw, host)?;
    if stage == Stage::Checked {
        check(&config, raw.has("path"))?;
    }
    Ok(config)
}

/// A built config checked by the core's rules ([`SimConfig::validate`]), a message about a
/// link naming it as the scenario wrote it (`path` for the `[path]` form).
pub fn check(config: &V, path: bool) -> Result<(), SimError> {
    SimConfig::from_json(&config.to_json())
        .and_then(|c| c.validate())
        .map_err(|e| err(scenario_field(&e.0, path)))
}

/// A scenario file's text with `slowstart run`'s options → the canonical config as JSON: its
/// `name` where the text gives none (the CLI names it by its file), `--cc` for every flow, the
/// `--set` items in order (slowstart-web's entry).
pub fn load_toml(
    text: &str,
    name: Option<&str>,
    cc: Option<&str>,
    set: &[String],
    host: &mut dyn Host,
) -> Result<String, SimError> {
    let mut raw = parse_toml(text, "scenario")?;
    if let (Some(name), false) = (name, raw.has("name")) {
        raw.set("name", V::str(name));
    }
    let overrides = Overrides {
        cc: cc.map(V::str),
        set: Some(V::List(set.iter().cloned().map(V::Str).collect())),
        ..Overrides::default()
    };
    load(raw, &overrides, host)
}

fn int(n: u64) -> V {
    V::Int(n.into())
}

/// One value read as a key of unit kind `unit` reads it ("time", "rate", "size",
/// "size_or_inf", "count", "window" in segments of `mss`, "loss"), for front ends that read a
/// quantity outside a scenario (a sweep's axes, a plan); `what` names a count's kind in the
/// message. None for "inf" where the unit takes it.
pub fn parse_value(
    unit: &str,
    value: &V,
    field: &str,
    mss: u64,
    what: &str,
) -> Result<V, SimError> {
    let opt = |v: Option<u64>| v.map_or(V::Null, int);
    Ok(match unit {
        "time" => int(units::parse_time(value, field)?),
        "rate" => int(units::parse_rate(value, field)?),
        "size" => int(units::parse_size(value, field)?),
        "size_or_inf" => opt(units::parse_size_or_inf(value, field)?),
        "count" => int(parse_int(value, field, what)?),
        "window" => opt(parse_window(value, field, mss)?),
        "loss" => V::Float(units::parse_loss(value, field)?),
        _ => {
            return Err(err(format!(
                "{field}: no unit kind {unit:?} (scenario/mod.rs `parse_value`)"
            )))
        }
    })
}

/// A buffer (`"200pkt"`, `"1MB"`, `"50ms"` at `rate_bps`, `"1bdp"` of a `[path]`'s `(rate_bps,
/// rtt_ns)`) → the canonical queue limit, {"packets": N} or {"bytes": N}.
pub fn buffer_limit(
    value: &V,
    field: &str,
    rate_bps: u64,
    path: Option<(u64, u64)>,
) -> Result<V, SimError> {
    let bdp = path.map(|(rate_bps, rtt_ns)| units::Bdp { rate_bps, rtt_ns });
    queue_limit(value, field, rate_bps, bdp)
}

/// A flow's keys but its application (`table` "flow", or "swarm.transport"); `f` holds every
/// key of `table`, errors are named `at.KEY`. By hand here only the algorithm and the windows,
/// which may be given in segments of the MSS.
fn transport<'a>(
    table: &'a str,
    f: &V,
    at: &str,
    host: &'a mut dyn Host,
    mut by_hand: Vec<(&'a str, Reader<'a>)>,
) -> Result<V, SimError> {
    let windows: Vec<&'a str> = key_table(table)
        .iter()
        .filter(|k| k.unit == "window")
        .map(|k| k.key.as_str())
        .collect();
    let mut readers: Vec<(&'a str, Reader<'a>)> = vec![(
        "cc",
        Box::new(|value: &V, field: &str, _: &V| {
            let spec = parse_cc(value, field, host)?;
            check_cc(&spec, field)?;
            Ok(spec)
        }),
    )];
    for key in windows {
        readers.push((
            key,
            Box::new(move |value: &V, field: &str, done: &V| {
                let mss = filled_int(done, table, "mss");
                Ok(parse_window(value, field, mss)?.map_or(V::Null, int))
            }),
        ));
    }
    readers.append(&mut by_hand);
    read_keys(table, f, at, &mut readers)
}

fn build_flow(
    item: &V,
    i: usize,
    nodes: &[String],
    default_ends: Option<(&str, &str)>,
    host: &mut dyn Host,
) -> Result<V, SimError> {
    let at = format!("flow.{i}");
    let mut base = defaults("flow");
    base.set("src", V::Null);
    base.set("dst", V::Null);
    let f = over(base, check_table(item, &at, &keys("flow"))?);
    let mut ends = Vec::new();
    for (end, default) in [
        ("src", default_ends.map(|e| e.0)),
        ("dst", default_ends.map(|e| e.1)),
    ] {
        let given = f.get(end).cloned().unwrap_or(V::Null);
        let value = match (given, default) {
            (V::Null, Some(d)) => V::str(d),
            (V::Null, None) => {
                return Err(err(format!(
                    "{at}.{end}: missing (with nodes and [[link]], every flow names its {end}; \
                     nodes: {})",
                    node_list(nodes)
                )))
            }
            (v, _) => v,
        };
        ends.push(node_ref(&value, &format!("{at}.{end}"), nodes)?);
    }
    let (src, dst) = (V::Str(ends[0].clone()), V::Str(ends[1].clone()));
    let by_hand: Vec<(&str, Reader<'_>)> = vec![
        (
            "src",
            Box::new(move |_: &V, _: &str, _: &V| Ok(src.clone())),
        ),
        (
            "dst",
            Box::new(move |_: &V, _: &str, _: &V| Ok(dst.clone())),
        ),
    ];
    let mut out = transport("flow", &f, &at, host, by_hand)?;
    out.set("app", parse_app(f.get("app").unwrap_or(&V::Null), i)?);
    if let Some(program) = f.get("program").filter(|p| !p.is_null()) {
        out.set("program", parse_program(program, i)?);
    }
    Ok(out)
}

fn build_cross(item: &V, i: usize) -> Result<V, SimError> {
    let at = format!("cross.{i}");
    let given = check_table(item, &at, &keys("cross"))?;
    read_keys("cross", &V::Table(given.to_vec()), &at, &mut [])
}

fn stop_after(value: &V, field: &str) -> Result<V, SimError> {
    if let V::Str(s) = value {
        if value::py_strip(s) == "none" {
            return Ok(V::Null);
        }
    }
    let what = "a number of completions (a positive integer) or \"none\"";
    parse_int(value, field, what).map(int)
}

fn swarm_transport(kind: &str, value: &V, host: &mut dyn Host) -> Result<V, SimError> {
    let at = format!("swarm.{kind}");
    let f = over(
        defaults(&at),
        check_table(value, &at, &keys("swarm.transport"))?,
    );
    let mut out = V::Table(vec![
        ("src".into(), V::str("uploader")),
        ("dst".into(), V::str("downloader")),
        ("size_bytes".into(), V::Null),
        ("start_ns".into(), V::Int(0)),
    ]);
    if let V::Table(t) = transport("swarm.transport", &f, &at, host, vec![])? {
        for (k, v) in t {
            out.set(&k, v);
        }
    }
    out.set("app", V::Table(vec![("kind".into(), V::str("bulk"))]));
    Ok(out)
}

/// `[swarm]` → the canonical SwarmConfig; by hand only what a key's value does not say alone:
/// the access buffers at their rates.
fn build_swarm(value: &V, host: &mut dyn Host) -> Result<V, SimError> {
    let mut base = defaults("swarm");
    for table in ["bittorrent", "tcp", "utp"] {
        base.set(table, V::table());
    }
    let w = over(base, check_table(value, "swarm", &keys("swarm"))?);
    let buffer = |rate: &'static str| -> Reader<'static> {
        Box::new(move |value: &V, field: &str, done: &V| {
            queue_limit(value, field, filled_int(done, "swarm", rate), None)
        })
    };
    let mut by_hand: Vec<(&str, Reader<'_>)> = vec![
        (
            "stop_after",
            Box::new(|v: &V, field: &str, _: &V| stop_after(v, field)),
        ),
        ("buffer", buffer("up")),
        ("down_buffer", buffer("down")),
    ];
    let mut out = read_keys("swarm", &w, "swarm", &mut by_hand)?;
    let get = |k: &str| w.get(k).cloned().unwrap_or(V::Null);
    let bittorrent = get("bittorrent");
    let at = "swarm.bittorrent";
    let given = over(defaults(at), check_table(&bittorrent, at, &keys(at))?);
    out.set("bittorrent", read_keys(at, &given, at, &mut [])?);
    out.set("tcp", swarm_transport("tcp", &get("tcp"), host)?);
    out.set("utp", swarm_transport("utp", &get("utp"), host)?);
    Ok(out)
}

fn build_trace(value: &V) -> Result<V, SimError> {
    let t = over(
        defaults("trace"),
        check_table(value, "trace", &keys("trace"))?,
    );
    read_keys("trace", &t, "trace", &mut [])
}

/// Validate a raw scenario and resolve it to the canonical config (not yet checked by the
/// core's rules: [`load`] does).
pub fn build_config(raw: &V, host: &mut dyn Host) -> Result<V, SimError> {
    check_table(raw, "", &keys("top"))?;
    let name = parse_str(raw.get("name").unwrap_or(&V::str("scenario")), "name")?;
    if let Some(d) = raw.get("description") {
        if !matches!(d, V::Str(_)) {
            return Err(err(format!(
                "description: expected a string, got {}",
                show(d)
            )));
        }
    }
    let duration = parse_time(
        require(raw, "", "duration", "a time such as \"60s\"")?,
        "duration",
    )?;
    let seed = parse_int(raw.get("seed").unwrap_or(&V::Int(0)), "seed", INT)?;
    let empty = V::table();
    let trace_given = raw.get("trace").unwrap_or(&empty);
    if let Some(swarm) = raw.get("swarm") {
        for key in key_names("not_with_swarm") {
            if raw.has(key) {
                return Err(err(format!(
                    "{key}: a scenario with [swarm] builds its own peers, links and \
                     connections; remove {key}"
                )));
            }
        }
        return Ok(V::Table(vec![
            ("name".into(), V::Str(name)),
            ("seed".into(), int(seed)),
            ("duration_ns".into(), int(duration)),
            ("nodes".into(), V::List(vec![])),
            ("links".into(), V::List(vec![])),
            ("flows".into(), V::List(vec![])),
            ("trace".into(), build_trace(trace_given)?),
            ("swarm".into(), build_swarm(swarm, host)?),
        ]));
    }
    let flows = match raw.get("flow") {
        Some(V::List(l)) if !l.is_empty() => l,
        _ => return Err(err("flow: at least one [[flow]] table is needed".into())),
    };
    let (nodes, links, default_ends) = if let Some(path) = raw.get("path") {
        if raw.has("nodes") || raw.has("link") {
            return Err(err(
                "path: give either [path] or nodes and [[link]], not both".into(),
            ));
        }
        let (nodes, links) = expand_path(path, host)?;
        (nodes, links, Some(("sender", "receiver")))
    } else if raw.has("nodes") || raw.has("link") {
        let (nodes, links) = expand_links(raw, host)?;
        (nodes, links, None)
    } else {
        return Err(err(
            "path: missing (give a [path] table, or nodes = [...] with [[link]] tables)".into(),
        ));
    };
    let mut built = Vec::new();
    for (i, f) in flows.iter().enumerate() {
        built.push(build_flow(f, i, &nodes, default_ends, host)?);
    }
    let mut config = V::Table(vec![
        ("name".into(), V::Str(name)),
        ("seed".into(), int(seed)),
        ("duration_ns".into(), int(duration)),
        (
            "nodes".into(),
            V::List(nodes.into_iter().map(V::Str).collect()),
        ),
        ("links".into(), V::List(links)),
        ("flows".into(), V::List(built)),
        ("trace".into(), build_trace(trace_given)?),
    ]);
    // Written only when given, so scenarios without cross traffic keep their canonical form.
    if let Some(cross) = raw.get("cross") {
        let V::List(items) = cross else {
            return Err(err(format!(
                "cross: expected [[cross]] tables, got {}",
                show(cross)
            )));
        };
        let built: Result<Vec<V>, SimError> = items
            .iter()
            .enumerate()
            .map(|(i, c)| build_cross(c, i))
            .collect();
        config.set("cross", V::List(built?));
    }
    Ok(config)
}

#[cfg(test)]
mod tests;
