//! A scenario's tables: unknown and missing keys named, each key's value read into the
//! canonical fields keys.rs says it fills, by its unit kind; and the core's defaults written
//! back as a scenario writes them, so a left-out key is read exactly as if its default had
//! been written.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::units::{
    err, parse_bool, parse_int, parse_number, parse_rate, parse_size, parse_size_or_inf,
    parse_time, INT, SIZE_UNITS,
};
use super::value::{show, V};
use crate::SimError;

/// The core's defaults, keys and words (`defaults_json`), read once.
pub fn core() -> &'static serde_json::Value {
    static CORE: OnceLock<serde_json::Value> = OnceLock::new();
    CORE.get_or_init(|| serde_json::from_str(&crate::defaults_json()).expect("defaults are JSON"))
}

/// One key of a scenario table as keys.rs lists it (through `keys_json`).
#[derive(Clone, Debug)]
pub struct KeyInfo {
    pub key: String,
    pub unit: String,
    /// (canonical field, key of the value's table it is read from or "").
    pub fields: Vec<(String, String)>,
    /// The value at which the config leaves the field out.
    pub unwritten: Option<V>,
    pub fallback: String,
}

/// Each of `table`'s keys in the order messages list them.
pub fn key_table(table: &str) -> &'static [KeyInfo] {
    static TABLES: OnceLock<HashMap<String, Vec<KeyInfo>>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        let all = core()["keys"]["tables"].as_object().expect("keys by table");
        all.iter()
            .map(|(name, list)| {
                let keys = list
                    .as_array()
                    .expect("a list of keys")
                    .iter()
                    .map(|k| KeyInfo {
                        key: k["key"].as_str().expect("a key").into(),
                        unit: k["unit"].as_str().expect("a unit").into(),
                        fields: k["fields"]
                            .as_array()
                            .expect("fields")
                            .iter()
                            .map(|f| {
                                let s =
                                    |x: &serde_json::Value| x.as_str().unwrap_or("").to_string();
                                (s(&f["field"]), s(&f["from"]))
                            })
                            .collect(),
                        unwritten: k.get("unwritten").map(V::from),
                        fallback: k["fallback"].as_str().unwrap_or("").into(),
                    })
                    .collect();
                (name.clone(), keys)
            })
            .collect()
    });
    tables.get(table).map_or(&[], Vec::as_slice)
}

pub fn key_info(table: &str, key: &str) -> &'static KeyInfo {
    key_table(table)
        .iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| panic!("{table}.{key} is a key of keys.rs"))
}

/// The names of `table`'s keys, in order.
pub fn keys(table: &str) -> Vec<&'static str> {
    key_table(table).iter().map(|k| k.key.as_str()).collect()
}

/// A list of keys the core names (`not_with_swarm`, `swarm_tables`, `queue_kinds`, ...).
pub fn key_names(name: &str) -> Vec<&'static str> {
    core()["keys"][name]
        .as_array()
        .expect("a list of names")
        .iter()
        .map(|n| n.as_str().expect("a name"))
        .collect()
}

pub fn field_at(field: &str, key: &str) -> String {
    if field.is_empty() {
        key.to_string()
    } else {
        format!("{field}.{key}")
    }
}

/// The table, if `value` is one whose keys are all `accepted`.
pub fn check_table<'a>(
    value: &'a V,
    field: &str,
    accepted: &[&str],
) -> Result<&'a [(String, V)], SimError> {
    let V::Table(t) = value else {
        let at = if field.is_empty() { "scenario" } else { field };
        return Err(err(format!("{at}: expected a table, got {}", show(value))));
    };
    for (key, _) in t {
        if !accepted.contains(&key.as_str()) {
            return Err(err(format!(
                "{}: unknown key (accepted: {})",
                field_at(field, key),
                accepted.join(", ")
            )));
        }
    }
    Ok(t)
}

pub fn require<'a>(table: &'a V, field: &str, key: &str, what: &str) -> Result<&'a V, SimError> {
    table.get(key).ok_or_else(|| {
        err(format!(
            "{}: missing (expected {what})",
            field_at(field, key)
        ))
    })
}

pub fn parse_str(value: &V, field: &str) -> Result<String, SimError> {
    match value {
        V::Str(s) if !s.is_empty() => Ok(s.clone()),
        _ => Err(err(format!(
            "{field}: expected a non-empty string, got {}",
            show(value)
        ))),
    }
}

/// `base` with `given`'s keys laid over it (Python's `{**base, **given}`).
pub fn over(base: V, given: &[(String, V)]) -> V {
    let mut out = base;
    for (k, v) in given {
        out.set(k, v.clone());
    }
    out
}

// --- the defaults, as a scenario writes them --------------------------------------------------

const TIME_TEXT: &[(&str, u64)] = &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)];

/// Nanoseconds as a scenario time: 40_000_000 → "40ms".
pub fn time_text(ns: u64) -> String {
    for (unit, scale) in TIME_TEXT {
        if ns.is_multiple_of(*scale) {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

/// Bytes in the largest scenario unit that divides them: 33_554_432 → "32MiB".
pub fn size_text(n: u64) -> String {
    let mut units: Vec<_> = SIZE_UNITS.iter().filter(|(_, k)| *k > 1).collect();
    units.sort_by_key(|(_, k)| std::cmp::Reverse(*k));
    for (unit, scale) in units {
        if n != 0 && (n as u128).is_multiple_of(*scale) {
            return format!("{}{unit}", n as u128 / scale);
        }
    }
    format!("{n}B")
}

/// Bits per second in the largest unit that divides them.
pub fn rate_text(bps: u64) -> String {
    for (unit, scale) in [
        ("Tbps", 1_000_000_000_000u64),
        ("Gbps", 1_000_000_000),
        ("Mbps", 1_000_000),
        ("kbps", 1_000),
    ] {
        if bps != 0 && bps.is_multiple_of(scale) {
            return format!("{}{unit}", bps / scale);
        }
    }
    format!("{bps}bps")
}

fn int_of(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .expect("a default in canonical units is an integer")
}

/// A canonical value as a scenario writes a key of kind `unit` (40_000_000 ns "40ms", a
/// buffer {"packets": 200} "200pkt", an algorithm as a table `{name = ..., param = ...}`); a
/// unit kind not listed as the core writes it; None as "inf" or "none" where the unit says.
pub fn written(unit: &str, value: &serde_json::Value) -> V {
    if value.is_null() {
        return match unit {
            "size_or_inf" | "window" => V::str("inf"),
            "count_or_none" => V::str("none"),
            _ => V::Null,
        };
    }
    match unit {
        "time" => V::Str(time_text(int_of(value))),
        "time_range" => V::List(
            value
                .as_array()
                .expect("a range")
                .iter()
                .map(|v| V::Str(time_text(int_of(v))))
                .collect(),
        ),
        "rate" | "rate_or_trace" => V::Str(rate_text(int_of(value))),
        "size" | "size_or_inf" | "window" => V::Str(size_text(int_of(value))),
        "buffer" => V::Str(if let Some(p) = value.get("packets") {
            format!("{}pkt", int_of(p))
        } else if let Some(b) = value.get("bdp") {
            format!("{}bdp", V::from(b).to_json())
        } else {
            size_text(int_of(&value["bytes"]))
        }),
        "cc" => {
            let mut t = vec![("name".to_string(), V::from(&value["name"]))];
            if let Some(params) = value["params"].as_object() {
                t.extend(params.iter().map(|(k, v)| (k.clone(), V::from(v))));
            }
            V::Table(t)
        }
        _ => V::from(value),
    }
}

fn field_value<'a>(canonical: &'a serde_json::Value, field: &str) -> Option<&'a serde_json::Value> {
    field
        .split('.')
        .try_fold(canonical, |node, part| node.get(part))
}

/// A canonical table's defaults under `table`'s keys, in their units; a key whose field has
/// no default is left out.
fn as_written(table: &str, canonical: &serde_json::Value) -> V {
    let mut out = V::table();
    for k in key_table(table) {
        let values: Option<Vec<&serde_json::Value>> = k
            .fields
            .iter()
            .filter(|(_, part)| part.is_empty())
            .map(|(field, _)| field_value(canonical, field))
            .collect();
        let Some(values) = values else { continue };
        let Some(first) = values.first() else {
            continue;
        };
        let value = if k.unit == "time_range" {
            written(
                &k.unit,
                &serde_json::Value::Array(values.iter().map(|v| (*v).clone()).collect()),
            )
        } else {
            written(&k.unit, first)
        };
        out.set(&k.key, value);
    }
    out
}

/// The defaults of `table` as a scenario writes them ("flow", "web", "bittorrent", "trace",
/// "path", "cross", "program", "swarm", "swarm.bittorrent", "swarm.tcp", "swarm.utp",
/// "queue.KIND"), or the canonical "path_access_queue".
pub fn defaults(table: &str) -> V {
    written_defaults()
        .get(table)
        .cloned()
        .unwrap_or_else(|| panic!("no defaults for {table}"))
}

/// Every table's defaults as a scenario writes them, by the table's name (see [`defaults`]).
pub fn written_defaults() -> &'static HashMap<String, V> {
    static TABLES: OnceLock<HashMap<String, V>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let c = core();
        let swarm = &c["swarm"];
        let swarm_tables = key_names("swarm_tables");
        let mut swarm_own = as_written("swarm", swarm);
        if let V::Table(t) = &mut swarm_own {
            t.retain(|(k, _)| !swarm_tables.contains(&k.as_str()));
        }
        let mut path = V::table();
        for k in key_table("path") {
            if let Some(value) = c["path"].get(&k.key) {
                path.set(&k.key, written(&k.unit, value));
            }
        }
        let mut out: HashMap<String, V> = [
            ("flow", as_written("flow", &c["flow"])),
            ("web", as_written("app.web", &c["web"])),
            ("bittorrent", as_written("app.bittorrent", &c["bittorrent"])),
            ("trace", as_written("trace", &c["trace"])),
            ("path", path),
            ("path_access_queue", V::from(&c["path_access_queue"])),
            ("cross", as_written("cross", &c["cross"])),
            ("program", as_written("program", &c["program"])),
            ("swarm", swarm_own),
            (
                "swarm.bittorrent",
                as_written("swarm.bittorrent", &swarm["bittorrent"]),
            ),
            ("swarm.tcp", as_written("swarm.transport", &swarm["tcp"])),
            ("swarm.utp", as_written("swarm.transport", &swarm["utp"])),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for (kind, params) in c["queue"].as_object().expect("queues by kind") {
            let table = format!("queue.{kind}");
            out.insert(table.clone(), as_written(&table, params));
        }
        out
    })
}

/// The value of `table`'s `key` in `given` and the field to name it by; left out, the value
/// of the key it falls back to, named by that key.
pub fn fallback<'a>(table: &str, given: &'a V, key: &str, at: &str) -> (&'a V, String) {
    let key = if given.has(key) {
        key
    } else {
        key_info(table, key).fallback.as_str()
    };
    (
        given.get(key).expect("the fallback key has a value"),
        format!("{at}.{key}"),
    )
}

/// Whether the core lists words for `choice`.
pub fn has_words(choice: &str) -> bool {
    core()["words"].get(choice).is_some()
}

/// The canonical value a choice's word stands for; any other value is left for the core to
/// refuse, naming what it accepts.
pub fn canonical_word(choice: &str, value: &V) -> V {
    match value {
        V::Str(s) => core()["words"][choice]
            .get(s)
            .map_or_else(|| value.clone(), V::from),
        _ => value.clone(),
    }
}

/// `["1ms", "25ms"]` (uniform between) or one time (every link the same).
fn delay_range(value: &V, field: &str) -> Result<Vec<V>, SimError> {
    let V::List(items) = value else {
        let one = parse_time(value, field)?;
        return Ok(vec![V::Int(one.into()), V::Int(one.into())]);
    };
    if items.len() != 2 {
        return Err(err(format!(
            "{field}: expected a time or a [min, max] pair such as [\"1ms\", \"25ms\"], got {} \
             values",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(k, v)| parse_time(v, &format!("{field}.{k}")).map(|t| V::Int(t.into())))
        .collect()
}

fn opt_int(v: Option<u64>) -> V {
    v.map_or(V::Null, |n| V::Int(n.into()))
}

/// How a key reads its value where the key alone says how, by its unit kind; None for a unit
/// read by hand.
fn read_by_unit(unit: &str, value: &V, field: &str) -> Option<Result<Vec<V>, SimError>> {
    let one = |r: Result<V, SimError>| Some(r.map(|v| vec![v]));
    let int = |r: Result<u64, SimError>| one(r.map(|n| V::Int(n.into())));
    match unit {
        "time" => int(parse_time(value, field)),
        "rate" => int(parse_rate(value, field)),
        "size" => int(parse_size(value, field)),
        "size_or_inf" => one(parse_size_or_inf(value, field).map(opt_int)),
        "count" => int(parse_int(value, field, INT)),
        "positive" => int(parse_int(value, field, "a positive integer")),
        "number" => one(parse_number(value, field, "a number >= 0").map(V::Float)),
        "bool" => one(parse_bool(value, field).map(V::Bool)),
        "time_range" => Some(delay_range(value, field)),
        _ => None,
    }
}

/// A key read by hand: its value, its field's name for messages, and what is read so far.
pub type Reader<'a> = Box<dyn FnMut(&V, &str, &V) -> Result<V, SimError> + 'a>;

/// The canonical fields `table`'s keys in `given` fill, in the table's order: each value read
/// as its unit kind says, a word as the core lists its words (else as a name), `by_hand` given
/// what is read so far; errors are named `at.KEY`. A field the core writes only when set is
/// left out at the value it is not written at.
pub fn read_keys(
    table: &str,
    given: &V,
    at: &str,
    by_hand: &mut [(&str, Reader<'_>)],
) -> Result<V, SimError> {
    let mut out = V::table();
    for k in key_table(table) {
        let Some(value) = given.get(&k.key) else {
            continue;
        };
        let field = format!("{at}.{}", k.key);
        let values: Vec<V> =
            if let Some((_, read)) = by_hand.iter_mut().find(|(key, _)| *key == k.key) {
                vec![read(value, &field, &out)?]
            } else if k.unit == "word" {
                vec![if has_words(&k.key) {
                    canonical_word(&k.key, value)
                } else {
                    V::Str(parse_str(value, &field)?)
                }]
            } else if let Some(read) = read_by_unit(&k.unit, value, &field) {
                read?
            } else if k.unit == "table" || k.unit == "tables" {
                continue;
            } else {
                panic!(
                    "{field}: no reader for unit {:?} (tables.rs `read_keys`)",
                    k.unit
                )
            };
        if k.unwritten.as_ref() == Some(&values[0]) && values.len() == 1 {
            continue;
        }
        let values = if k.fields.len() > 1 && values.len() == 1 {
            // A value read by hand that fills several fields comes as a list.
            match values.into_iter().next() {
                Some(V::List(items)) => items,
                Some(other) => vec![other],
                None => vec![],
            }
        } else {
            values
        };
        for ((name, _), v) in k.fields.iter().zip(values) {
            let mut node = &mut out;
            let parts: Vec<&str> = name.split('.').collect();
            let (last, parents) = parts.split_last().expect("a field has a name");
            for part in parents {
                if !node.has(part) {
                    node.set(part, V::table());
                }
                node = node.get_mut(part).expect("just set");
            }
            node.set(last, v);
        }
    }
    Ok(out)
}

/// The value `table`'s `key` filled in `done` (read by `read_keys`).
pub fn filled<'a>(done: &'a V, table: &str, key: &str) -> &'a V {
    let (field, _) = &key_info(table, key).fields[0];
    field
        .split('.')
        .try_fold(done, |node, part| node.get(part))
        .unwrap_or_else(|| panic!("{table}.{key} is read before it is needed"))
}

/// The integer a filled field holds.
pub fn filled_int(done: &V, table: &str, key: &str) -> u64 {
    match filled(done, table, key) {
        V::Int(n) => *n as u64,
        other => panic!("{table}.{key}: {other:?} is no integer"),
    }
}
