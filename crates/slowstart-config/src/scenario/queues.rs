//! Link directions beyond drop-tail at a fixed rate: queue disciplines, Gilbert-Elliott loss
//! and trace-driven capacity. A discipline's keys, units and fields are keys.rs's tables
//! `queue.KIND`; its defaults and ranges are config/queue.rs's.

use super::tables::{key_names, key_table, keys};
use super::units::{err, parse_bool, parse_number, parse_rate, parse_size, parse_time, U64_MAX};
use super::value::{py_strip, show, V};
use super::Host;
use crate::SimError;

/// The scenario's key of a discipline's canonical field (`target_ns` is `target`).
pub fn parameter_key(field: &str) -> String {
    for kind in key_names("queue_kinds") {
        for k in key_table(&format!("queue.{kind}")) {
            if k.fields.iter().any(|(canonical, _)| canonical == field) {
                return k.key.clone();
            }
        }
    }
    field.to_string()
}

/// A parameter in canonical units, read as its unit kind says; its range is the core's.
fn parameter(unit: &str, value: &V, field: &str) -> Result<V, SimError> {
    let int = |n: u64| V::Int(n.into());
    Ok(match unit {
        "time" => int(parse_time(value, field)?),
        "size" => int(parse_size(value, field)?),
        "positive" => match value {
            V::Int(i) if (0..=U64_MAX as i128).contains(i) => V::Int(*i),
            _ => {
                return Err(err(format!(
                    "{field}: expected a positive integer, got {}",
                    show(value)
                )))
            }
        },
        "gain" => V::Float(parse_number(value, field, "a number (Hz)")?),
        "packets" => V::Float(parse_number(value, field, "a number of packets")?),
        "fraction" => V::Float(parse_number(value, field, "a probability (a number)")?),
        "bool" => V::Bool(parse_bool(value, field)?),
        _ => panic!("{field}: no reader for unit {unit:?} (queues.rs `parameter`)"),
    })
}

/// The canonical discipline, or None for drop-tail (the canonical default).
pub fn parse_queue(value: &V, field: &str) -> Result<Option<V>, SimError> {
    let kinds = key_names("queue_kinds");
    let mut table = match value {
        V::Str(_) => vec![("kind".to_string(), value.clone())],
        V::Table(t) => t.clone(),
        _ => {
            return Err(err(format!(
                "{field}: expected one of {} or a table such as {{kind = \"codel\", target = \
                 \"5ms\"}}, got {}",
                kinds.join(", "),
                show(value)
            )))
        }
    };
    let kind = match table.iter().position(|(k, _)| k == "kind") {
        Some(i) => table.remove(i).1,
        None => V::Null,
    };
    let kind = match &kind {
        V::Str(s) if kinds.contains(&s.as_str()) => s.clone(),
        _ => {
            return Err(err(format!(
                "{field}.kind: expected one of {}, got {}",
                kinds.join(", "),
                show(&kind)
            )))
        }
    };
    let params = key_table(&format!("queue.{kind}"));
    let mut out = vec![("kind".to_string(), V::Str(kind.clone()))];
    for (key, raw) in &table {
        let Some(k) = params.iter().find(|k| &k.key == key) else {
            let accepted = keys(&format!("queue.{kind}")).join(", ");
            let accepted = if accepted.is_empty() {
                "no parameters".to_string()
            } else {
                accepted
            };
            return Err(err(format!(
                "{field}.{key}: unknown {kind} parameter (accepted: {accepted})"
            )));
        };
        let canonical = k.fields[0].0.clone();
        let v = parameter(&k.unit, raw, &format!("{field}.{key}"))?;
        match out.iter_mut().find(|(name, _)| *name == canonical) {
            Some((_, old)) => *old = v,
            None => out.push((canonical, v)),
        }
    }
    Ok((kind != "droptail").then_some(V::Table(out)))
}

const GE_HELP: &str = "a probability in [0, 1] such as 0.25 or \"25%\" (netem gemodel: p, r, \
    loss_bad = 1-h, loss_good = 1-k)";

fn probability(value: &V, field: &str) -> Result<f64, SimError> {
    let refuse = || err(format!("{field}: expected {GE_HELP}, got {}", show(value)));
    let x = match value {
        V::Str(s) if py_strip(s).ends_with('%') => {
            let number = py_strip(s);
            let number = py_strip(&number[..number.len() - 1]);
            python_float(number).ok_or_else(refuse)? / 100.0
        }
        V::Int(i) => *i as f64,
        V::Float(x) => *x,
        _ => return Err(refuse()),
    };
    if !x.is_finite() {
        return Err(refuse());
    }
    Ok(x)
}

/// Python's `float(text)` of stripped text: a decimal, "inf", "nan" (any case), `_` between
/// digits.
fn python_float(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower.parse::<f64>().ok().or(Some(f64::NAN));
    }
    if text.contains("__") || text.starts_with('_') || text.ends_with('_') {
        return None;
    }
    let plain: String = text.chars().filter(|c| *c != '_').collect();
    if !plain.is_ascii() {
        return None;
    }
    plain.parse::<f64>().ok()
}

/// `loss = {p = "1%", r = "25%", loss_bad = 1, loss_good = 0}`: netem's `loss gemodel p r
/// 1-h 1-k`, with netem's defaults r = 1 - p, loss_bad (1-h) = 1, loss_good (1-k) = 0.
pub fn parse_gilbert_elliott(value: &V, field: &str) -> Result<V, SimError> {
    let accepted = keys("loss");
    let V::Table(t) = value else {
        unreachable!("called with a table")
    };
    for (key, _) in t {
        if !accepted.contains(&key.as_str()) {
            return Err(err(format!(
                "{field}.{key}: unknown key (accepted: {}: a Gilbert-Elliott model as netem's \
                 gemodel)",
                accepted.join(", ")
            )));
        }
    }
    let Some(p) = value.get("p") else {
        return Err(err(format!(
            "{field}.p: missing (the good-to-bad transition probability)"
        )));
    };
    let p = probability(p, &format!("{field}.p"))?;
    let or = |key: &str, default: f64| -> Result<f64, SimError> {
        match value.get(key) {
            Some(v) => probability(v, &format!("{field}.{key}")),
            None => Ok(default),
        }
    };
    Ok(V::Table(vec![
        ("p".into(), V::Float(p)),
        ("r".into(), V::Float(or("r", 1.0 - p)?)),
        ("loss_bad".into(), V::Float(or("loss_bad", 1.0)?)),
        ("loss_good".into(), V::Float(or("loss_good", 0.0)?)),
    ]))
}

/// A Mahimahi trace as the canonical config carries it: its times (ms) as one line of text,
/// separated by spaces (config/link.rs `rate_trace_ms`); `count` and `last_ms` for its mean
/// rate. The host reads the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub times: String,
    pub count: u64,
    pub last_ms: u64,
}

/// Mean capacity of a trace, bits per second: 1500 bytes per opportunity over the period.
fn trace_rate(trace: &Trace) -> u64 {
    (trace.count as u128 * 1500 * 8 * 1000 / trace.last_ms.max(1) as u128) as u64
}

/// `"20Mbps"`, or `{trace = "traces/steps.txt"}`: (rate in bit/s, trace or None).
pub fn parse_rate_or_trace(
    value: &V,
    field: &str,
    host: &mut dyn Host,
) -> Result<(u64, Option<Trace>), SimError> {
    if let V::Table(t) = value {
        if t.len() != 1 || t[0].0 != "trace" {
            return Err(err(format!(
                "{field}: expected a rate such as \"20Mbps\" or {{trace = \"file\"}}, got {}",
                show(value)
            )));
        }
        let name = match &t[0].1 {
            V::Str(s) if !s.is_empty() => s.clone(),
            other => {
                return Err(err(format!(
                    "{field}.trace: expected a file name, got {}",
                    show(other)
                )))
            }
        };
        let trace = host.trace(&name, &format!("{field}.trace"))?;
        return Ok((trace_rate(&trace), Some(trace)));
    }
    Ok((parse_rate(value, field)?, None))
}
