//! Applications on a flow: `app = {kind = "web", ...}` → the canonical `app` (config/app.rs);
//! and the real programs that may carry a flow in `slowstart real` (`[flow.program]`). Errors
//! name the field as `app.N.key`, N the flow's index.

use super::tables::{canonical_word, defaults, keys, over};
use super::units::{err, parse_bool, parse_int, parse_size, parse_time, INT};
use super::value::{show, V};
use crate::SimError;

pub const APP_KINDS: [&str; 3] = ["bulk", "web", "bittorrent"];
const APP_HELP: &str = "an application such as {kind = \"web\", response = \"17kB\"} or \"bulk\"";
const COMMAND_HELP: &str =
    "a command line such as \"curl -o {dir}/got http://{peer}:{port}/data\" or a list";

/// One size or a list of sizes (the core checks there is one and each is > 0).
fn sizes(value: &V, field: &str) -> Result<V, SimError> {
    match value {
        V::List(items) => items
            .iter()
            .enumerate()
            .map(|(k, item)| parse_size(item, &format!("{field}.{k}")).map(|n| V::Int(n.into())))
            .collect::<Result<_, _>>()
            .map(V::List),
        one => Ok(V::List(vec![V::Int(parse_size(one, field)?.into())])),
    }
}

fn int(n: u64) -> V {
    V::Int(n.into())
}

/// A flow's `app` value → {"kind": ..., ...} in canonical units.
pub fn parse_app(value: &V, i: usize) -> Result<V, SimError> {
    let at = format!("app.{i}");
    let value = match value {
        V::Str(_) => V::Table(vec![("kind".into(), value.clone())]),
        V::Table(_) => value.clone(),
        _ => {
            return Err(err(format!(
                "{at}: expected {APP_HELP}, got {}",
                show(value)
            )))
        }
    };
    let kind = value.get("kind").cloned().unwrap_or(V::str("bulk"));
    let kind = match &kind {
        V::Str(k) if APP_KINDS.contains(&k.as_str()) => k.clone(),
        _ => {
            return Err(err(format!(
                "{at}.kind: expected one of {}, got {}",
                APP_KINDS.join(", "),
                show(&kind)
            )))
        }
    };
    let accepted = keys(&format!("app.{kind}"));
    let V::Table(given) = &value else {
        unreachable!()
    };
    for (key, _) in given {
        if !accepted.contains(&key.as_str()) {
            return Err(err(format!(
                "{at}.{key}: unknown key for a {kind} app (accepted: {})",
                accepted.join(", ")
            )));
        }
    }
    let field = |key: &str| format!("{at}.{key}");
    match kind.as_str() {
        "bulk" => Ok(V::Table(vec![("kind".into(), V::str("bulk"))])),
        "web" => {
            let mut base = defaults("web");
            base.set("response", V::Null);
            let w = over(base, given);
            let response = w.get("response").cloned().unwrap_or(V::Null);
            if response.is_null() {
                return Err(err(format!(
                    "{at}.response: missing (expected a size such as \"17kB\")"
                )));
            }
            let get = |k: &str| w.get(k).cloned().unwrap_or(V::Null);
            let mut out = V::Table(vec![
                ("kind".into(), V::str("web")),
                (
                    "request_bytes".into(),
                    int(parse_size(&get("request"), &field("request"))?),
                ),
                (
                    "response_bytes".into(),
                    sizes(&response, &field("response"))?,
                ),
                (
                    "keep_alive".into(),
                    V::Bool(parse_bool(&get("keep_alive"), &field("keep_alive"))?),
                ),
            ]);
            let objects = get("objects");
            if !objects.is_null() {
                out.set("objects", int(parse_int(&objects, &field("objects"), INT)?));
            }
            Ok(out)
        }
        _ => {
            let b = over(defaults("bittorrent"), given);
            let get = |k: &str| b.get(k).cloned().unwrap_or(V::Null);
            let mut out = V::Table(vec![
                ("kind".into(), V::str("bittorrent")),
                (
                    "block_bytes".into(),
                    int(parse_size(&get("block"), &field("block"))?),
                ),
                (
                    "queue_time_ns".into(),
                    int(parse_time(&get("queue_time"), &field("queue_time"))?),
                ),
                (
                    "min_queue".into(),
                    int(parse_int(&get("min_queue"), &field("min_queue"), INT)?),
                ),
                (
                    "max_queue".into(),
                    int(parse_int(&get("max_queue"), &field("max_queue"), INT)?),
                ),
                (
                    "app_slow_start".into(),
                    V::Bool(parse_bool(
                        &get("app_slow_start"),
                        &field("app_slow_start"),
                    )?),
                ),
                (
                    "slow_start_threshold_bytes".into(),
                    int(parse_size(
                        &get("slow_start_threshold"),
                        &field("slow_start_threshold"),
                    )?),
                ),
            ]);
            let blocks = get("blocks");
            if !blocks.is_null() {
                out.set("blocks", int(parse_int(&blocks, &field("blocks"), INT)?));
            }
            Ok(out)
        }
    }
}

/// A command line split as a POSIX shell would (Python's `shlex.split`): quotes, and
/// backslashes outside single quotes; Err with shlex's words for an unclosed quote or escape.
pub fn shell_words(text: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(next) => word.push(next),
                    None => return Err("No escaped character"),
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return Err("No closing quotation"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(next @ ('"' | '\\')) => word.push(next),
                            Some(next) => {
                                word.push('\\');
                                word.push(next);
                            }
                            None => return Err("No closing quotation"),
                        },
                        Some(ch) => word.push(ch),
                        None => return Err("No closing quotation"),
                    }
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// A command line or a list of arguments → the argument list.
fn command(value: &V, field: &str) -> Result<V, SimError> {
    let argv: Vec<String> = match value {
        V::Str(s) => shell_words(s).map_err(|e| err(format!("{field}: {e} in {}", show(value))))?,
        V::List(items) if items.iter().all(|a| matches!(a, V::Str(_))) => items
            .iter()
            .map(|a| a.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => {
            return Err(err(format!(
                "{field}: expected {COMMAND_HELP}, got {}",
                show(value)
            )))
        }
    };
    if argv.is_empty() {
        return Err(err(format!(
            "{field}: expected {COMMAND_HELP}, got an empty command"
        )));
    }
    Ok(V::List(argv.into_iter().map(V::Str).collect()))
}

/// Flow `i`'s `program` table → the canonical program (errors name `flow.N.program.KEY`).
pub fn parse_program(value: &V, i: usize) -> Result<V, SimError> {
    let at = format!("flow.{i}.program");
    let V::Table(given) = value else {
        return Err(err(format!(
            "{at}: expected a table such as {{server = ..., client = ...}}, got {}",
            show(value)
        )));
    };
    let accepted = keys("program");
    for (key, _) in given {
        if !accepted.contains(&key.as_str()) {
            return Err(err(format!(
                "{at}.{key}: unknown key (accepted: {})",
                accepted.join(", ")
            )));
        }
    }
    let mut out = V::table();
    for end in ["server", "client"] {
        let Some(v) = value.get(end) else {
            return Err(err(format!(
                "{at}.{end}: missing (expected {COMMAND_HELP})"
            )));
        };
        out.set(end, command(v, &format!("{at}.{end}"))?);
    }
    for word in ["sends", "ends"] {
        if let Some(v) = value.get(word) {
            out.set(word, canonical_word(word, v));
        }
    }
    if let Some(port) = value.get("port") {
        let p = parse_int(port, &format!("{at}.port"), "a port in 1..=65535")?;
        if p > 65535 {
            return Err(err(format!("{at}.port: must be in 1..=65535, got {p}")));
        }
        out.set("port", int(p));
    }
    Ok(out)
}
