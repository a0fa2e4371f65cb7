//! A flow's `cc`: the core's grammar (cc_text.rs) or a table, a user's controller (resolved
//! by the host, which reads its file), and the names checked against the core's registry.

use slowstart_cc::registry::ALGORITHMS;

use super::units::err;
use super::value::{py_strip, show, V};
use super::Host;
use crate::cc_text::{parse_cc as parse_text, GuestRef, Word, CC_HELP};
use crate::SimError;

/// What a cc value may name besides a built-in, for messages.
pub const GUEST_HELP: &str = "your own controller: PATH.py:CLASS, PATH.wasm or PATH.bpf.o, each \
    optionally followed by :key=value,...";

fn word(w: &Word) -> V {
    match w {
        Word::Bool(b) => V::Bool(*b),
        Word::Integer(i) => V::Int(*i),
        Word::Number(x) => V::Float(*x),
        Word::Text(t) => V::Str(t.clone()),
    }
}

/// A cc value read by the grammar alone, a user's controller not yet resolved: its name (a
/// built-in's, or the reference as written), whether it is a user's, and its parameters.
pub struct CcWritten {
    pub name: String,
    pub guest: bool,
    /// The field a user's controller is resolved under (its table's `name`, or the value's).
    pub at: String,
    pub params: Vec<(String, V)>,
}

/// `"name:key=value,..."` or `{name = ..., key = value}`, by the grammar alone.
pub fn read_cc(value: &V, field: &str, host: &mut dyn Host) -> Result<CcWritten, SimError> {
    match value {
        V::Str(text) => {
            if GuestRef::split(text).is_none() {
                own_without_suffix(text, field, host)?;
            }
            let spec = parse_text(text, field)?;
            Ok(CcWritten {
                name: spec.name,
                guest: spec.guest.is_some(),
                at: field.to_string(),
                params: spec
                    .params
                    .iter()
                    .map(|(k, w)| (k.clone(), word(w)))
                    .collect(),
            })
        }
        V::Table(t) => {
            let Some(name) = value.get("name") else {
                return Err(err(format!("{field}.name: missing (expected {CC_HELP})")));
            };
            let params: Vec<(String, V)> = t.iter().filter(|(k, _)| k != "name").cloned().collect();
            for (key, v) in &params {
                if !matches!(v, V::Bool(_) | V::Int(_) | V::Float(_) | V::Str(_)) {
                    return Err(err(format!(
                        "{field}.{key}: expected a number, true/false or a word, got {}",
                        show(v)
                    )));
                }
            }
            for (key, v) in &params {
                if let V::Float(x) = v {
                    if !x.is_finite() {
                        return Err(err(format!(
                            "{field}: parameter {key} must be a finite number, got {}",
                            show(v)
                        )));
                    }
                }
            }
            let text = match name {
                V::Str(s) if !py_strip(s).is_empty() => s,
                _ => {
                    return Err(err(format!(
                        "{field}: expected {CC_HELP}, got {}",
                        show(value)
                    )))
                }
            };
            // The name is read by the same grammar as a string, so `{name = "x.py:C:g=2"}`
            // keeps g=2.
            let mut spec = read_cc(&V::Str(text.clone()), &format!("{field}.name"), host)?;
            let mut twice: Vec<&String> = params
                .iter()
                .map(|(k, _)| k)
                .filter(|k| spec.params.iter().any(|(s, _)| s == *k))
                .collect();
            twice.sort();
            if let Some(key) = twice.first() {
                return Err(err(format!(
                    "{field}.{key}: given both in name and as a key; give it once"
                )));
            }
            spec.params.extend(params);
            Ok(spec)
        }
        _ => Err(err(format!(
            "{field}: expected {CC_HELP}, got {}",
            show(value)
        ))),
    }
}

/// The canonical spec of a cc value: {"name", "params"}, and "guest" for a user's controller
/// (its name then the host's, with the content's hash).
pub fn parse_cc(value: &V, field: &str, host: &mut dyn Host) -> Result<V, SimError> {
    let spec = read_cc(value, field, host)?;
    let params = V::Table(spec.params);
    if spec.guest {
        let (name, guest) = host.guest(&spec.name, &spec.at)?;
        return Ok(V::Table(vec![
            ("name".into(), V::Str(name)),
            ("params".into(), params),
            ("guest".into(), guest),
        ]));
    }
    Ok(V::Table(vec![
        ("name".into(), V::Str(spec.name)),
        ("params".into(), params),
    ]))
}

/// A user's controller written without its file's suffix (`delay_start:DelayStart`) is named
/// as one, not read by the built-ins' grammar.
fn own_without_suffix(value: &str, field: &str, host: &mut dyn Host) -> Result<(), SimError> {
    let text = py_strip(value);
    let (name, colon, rest) = match text.split_once(':') {
        Some((n, r)) => (n, ":", r),
        None => (text, "", ""),
    };
    let shown = show(&V::str(value));
    for suffix in [".py", ".wasm"] {
        if !name.is_empty() && host.is_file(&format!("{name}{suffix}")) {
            let fix = format!("{name}{suffix}{colon}{rest}");
            return Err(err(format!(
                "{field}: {shown} names no algorithm; your own controller is written \
                 PATH.py:CLASS or PATH.wasm: did you mean {}?",
                show(&V::Str(fix))
            )));
        }
    }
    if name.contains('/') {
        return Err(err(format!(
            "{field}: {shown} names no algorithm; your own controller is written with its \
             file's suffix: PATH.py:CLASS or PATH.wasm"
        )));
    }
    Ok(())
}

/// Name and parameter names against the core's registry (values are checked there); a user's
/// controller checks its own when it is built.
pub fn check_cc(spec: &V, field: &str) -> Result<(), SimError> {
    if spec.has("guest") {
        return Ok(());
    }
    let name = spec.get("name").and_then(V::as_str).unwrap_or_default();
    let Some(algo) = ALGORITHMS.iter().find(|a| a.name == name) else {
        let names: Vec<&str> = ALGORITHMS.iter().map(|a| a.name).collect();
        return Err(err(format!(
            "{field}: unknown algorithm {} (accepted: {}; or {GUEST_HELP})",
            show(&V::str(name)),
            names.join(", ")
        )));
    };
    let accepted: Vec<&str> = algo.all_params().map(|p| p.name).collect();
    if let Some(V::Table(params)) = spec.get("params") {
        for (key, _) in params {
            if !accepted.contains(&key.as_str()) {
                let list = if accepted.is_empty() {
                    "none".to_string()
                } else {
                    accepted.join(", ")
                };
                return Err(err(format!(
                    "{field}: {} has no parameter {} (accepted: {list})",
                    algo.name,
                    show(&V::str(key.as_str()))
                )));
            }
        }
    }
    Ok(())
}
