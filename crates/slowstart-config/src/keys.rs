//! The scenario's TOML keys: which keys each table of a scenario file takes, in the order
//! messages list them, each with its unit kind (how the loader reads its value) and the
//! canonical field it fills (config.rs). The Python loader (python/slowstart/loading/scenario.py)
//! reads this table through `defaults_json`'s `keys`; it copies none of it.
//!
//! A key whose canonical field has another name (`size` fills `size_bytes`) names it; a key the
//! loader expands into several fields, or into a structure of another shape (the `[path]`
//! shorthand, `swarm.delay`), names them all or none (see [`Key::fields`]).

use serde::Serialize;

/// How the loader reads a key's value (python/slowstart/units.py and loading/).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A time such as "40ms", to integer nanoseconds.
    Time,
    /// A rate such as "250Mbps", to integer bits per second.
    Rate,
    /// A rate, or a Mahimahi trace file (`{trace = "FILE"}`).
    RateOrTrace,
    /// A size such as "32MiB", to integer bytes.
    Size,
    /// A size or "inf" (no limit).
    SizeOrInf,
    /// A window: a size, a number of segments ("100mss") or "inf".
    Window,
    /// A buffer: packets ("200pkt"), bytes, a time at the line rate, or BDPs ("1bdp").
    Buffer,
    /// A non-negative integer.
    Count,
    /// A count, or "none".
    CountOrNone,
    /// A finite number.
    Number,
    /// A loss probability, or a Gilbert-Elliott table.
    Loss,
    /// true or false.
    Bool,
    /// One of the words the core lists for it (`words` in `defaults_json`), or a name.
    Word,
    /// Free text.
    Text,
    /// A congestion controller: "name:key=value,..." or a table.
    Cc,
    /// A queue discipline: a word or a table (`kind = "codel"`, ...).
    Queue,
    /// A time, or a [min, max] pair of times.
    TimeRange,
    /// A list of names.
    List,
    /// A table (its keys are another entry of [`KEYS`] or the loader's, as `app`).
    Table,
    /// A list of tables (`[[flow]]`).
    Tables,
}

/// One key of a scenario table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Key {
    pub key: &'static str,
    pub unit: Unit,
    /// The canonical fields it fills, dotted below the table's canonical struct; empty where the
    /// field is the key itself, `EXPANDED` where the loader builds another shape from it.
    #[serde(skip)]
    pub fields: &'static [&'static str],
}

/// The `fields` of a key that names no canonical field: `[path]`'s keys, which the loader
/// expands into two links of two directions each.
pub const EXPANDED: &[&str] = &["(expanded)"];

/// The `fields` of a key the canonical config does not keep (`description`, a comment).
pub const NOT_KEPT: &[&str] = &["(not kept)"];

const fn key(key: &'static str, unit: Unit) -> Key {
    Key {
        key,
        unit,
        fields: &[],
    }
}

const fn to(key: &'static str, unit: Unit, fields: &'static [&'static str]) -> Key {
    Key { key, unit, fields }
}

const fn path(key: &'static str, unit: Unit) -> Key {
    Key {
        key,
        unit,
        fields: EXPANDED,
    }
}

use Unit::*;

/// A `[[flow]]` table's keys (FlowConfig); a swarm's `tcp` and `utp` take all but
/// [`NOT_IN_SWARM_FLOW`].
const FLOW: &[Key] = &[
    key("cc", Cc),
    to("size", SizeOrInf, &["size_bytes"]),
    to("start", Time, &["start_ns"]),
    key("mss", Count),
    key("header_bytes", Count),
    key("initcwnd", Count),
    key("initrwnd", Count),
    to("max_rwnd", Window, &["max_rwnd_bytes"]),
    to("max_window", Window, &["max_window_bytes"]),
    key("handshake", Bool),
    key("delayed_ack", Bool),
    to("delack_timeout", Time, &["delack_timeout_ns"]),
    key("ack_every", Count),
    key("quickack", Bool),
    key("abc", Bool),
    to("min_rto", Time, &["min_rto_ns"]),
    to("max_rto", Time, &["max_rto_ns"]),
    key("pacing", Bool),
    key("pacer", Word),
    key("recovery", Word),
    key("loss_detection", Word),
    key("ecn", Bool),
    key("ecn_feedback", Word),
    key("receiver_ecn", Word),
    key("cwnd_limited", Word),
    key("src", Word),
    key("dst", Word),
    key("app", Table),
    key("program", Table),
];

/// A `[[flow]]` key a swarm transport does not take: the swarm decides it itself.
pub const NOT_IN_SWARM_FLOW: &[&str] = &["src", "dst", "size", "start", "app", "program"];

/// Top-level keys a scenario with `[swarm]` must not give: the swarm builds its own topology
/// and connections.
pub const NOT_WITH_SWARM: &[&str] = &["path", "nodes", "link", "flow", "cross"];

/// The tables a `[swarm]` table holds.
pub const SWARM_TABLES: &[&str] = &["bittorrent", "tcp", "utp"];

/// Every scenario table's keys, by the table's name as messages write it (`swarm.bittorrent`;
/// `swarm.transport` is the keys of `swarm.tcp` and `swarm.utp`).
pub const KEYS: &[(&str, &[Key])] = &[
    (
        "top",
        &[
            key("name", Text),
            to("description", Text, NOT_KEPT),
            to("duration", Time, &["duration_ns"]),
            key("seed", Count),
            to("path", Table, &["nodes", "links"]),
            key("nodes", List),
            to("link", Tables, &["links"]),
            to("flow", Tables, &["flows"]),
            key("cross", Tables),
            key("trace", Table),
            key("swarm", Table),
        ],
    ),
    (
        "path",
        &[
            path("rate", RateOrTrace),
            path("rtt", Time),
            path("buffer", Buffer),
            path("loss", Loss),
            path("access_rate", Rate),
            path("reverse_rate", RateOrTrace),
            path("reverse_buffer", Buffer),
            path("jitter", Time),
            path("drop", Tables),
            path("queue", Queue),
            path("reverse_queue", Queue),
            path("ecn", Bool),
        ],
    ),
    (
        "link",
        &[
            key("name", Text),
            key("a", Word),
            key("b", Word),
            to(
                "rate",
                RateOrTrace,
                &["forward.rate_bps", "forward.rate_trace_ms"],
            ),
            to("delay", Time, &["forward.delay_ns"]),
            to("buffer", Buffer, &["forward.queue"]),
            to("loss", Loss, &["forward.loss", "forward.gilbert_elliott"]),
            to(
                "reverse_rate",
                RateOrTrace,
                &["reverse.rate_bps", "reverse.rate_trace_ms"],
            ),
            to("reverse_delay", Time, &["reverse.delay_ns"]),
            to("reverse_buffer", Buffer, &["reverse.queue"]),
            to("jitter", Time, &["forward.jitter_ns"]),
            to("drop", Tables, &["forward.drops"]),
            to("queue", Queue, &["forward.discipline"]),
            to("reverse_queue", Queue, &["reverse.discipline"]),
            to("ecn", Bool, &["forward.ecn", "reverse.ecn"]),
        ],
    ),
    ("drop", &[key("flow", Count), key("seq", Count)]),
    (
        "cross",
        &[
            key("kind", Word),
            key("src", Word),
            key("dst", Word),
            to("rate", Rate, &["rate_bps"]),
            to("packet_size", Size, &["packet_bytes"]),
            to("start", Time, &["start_ns"]),
            to("stop", Time, &["stop_ns"]),
            to("on", Time, &["on_ns"]),
            to("off", Time, &["off_ns"]),
            key("distribution", Word),
        ],
    ),
    (
        "trace",
        &[
            to("flow_interval", Time, &["flow_interval_ns"]),
            to("queue_interval", Time, &["queue_interval_ns"]),
            key("max_rows", Count),
        ],
    ),
    ("flow", FLOW),
    // The BitTorrent swarm of Testa and Rossi, "The impact of uTP on BitTorrent completion
    // time" (SwarmConfig).
    (
        "swarm",
        &[
            key("seeds", Count),
            key("leechers", Count),
            to("arrival_mean", Time, &["arrival_mean_ns"]),
            to("file", Size, &["file_bytes"]),
            to("piece", Size, &["piece_bytes"]),
            to("block", Size, &["block_bytes"]),
            key("population", Word),
            key("connection_transport", Word),
            key("seeding", Word),
            key("stay_factor", Number),
            to("stop_after", CountOrNone, &["stop_after_completions"]),
            to("queue_sample", Time, &["queue_sample_ns"]),
            to("up", Rate, &["access.up_bps"]),
            to("down", Rate, &["access.down_bps"]),
            to("buffer", Buffer, &["access.up_queue"]),
            to("down_buffer", Buffer, &["access.down_queue"]),
            to(
                "delay",
                TimeRange,
                &["access.delay_min_ns", "access.delay_max_ns"],
            ),
            key("bittorrent", Table),
            key("tcp", Table),
            key("utp", Table),
        ],
    ),
    (
        "swarm.bittorrent",
        &[
            key("tracker_peers", Count),
            key("min_peers", Count),
            key("max_initiate", Count),
            key("max_connections", Count),
            to("reannounce", Time, &["reannounce_ns"]),
            key("unchoke_slots", Count),
            to("rechoke", Time, &["rechoke_ns"]),
            to("rate_window", Time, &["rate_window_ns"]),
            to("optimistic", Time, &["optimistic_ns"]),
            key("new_peer_weight", Count),
            key("pipeline", Count),
            to("request_queue_time", Time, &["request_queue_time_ns"]),
            key("piece_picker", Word),
            to(
                "whole_pieces_threshold",
                Time,
                &["whole_pieces_threshold_ns"],
            ),
            key("hold_requests_beyond_target", Bool),
            key("send_buffer", Word),
            to(
                "send_buffer_watermark",
                Size,
                &["send_buffer_watermark_bytes"],
            ),
            to(
                "send_buffer_low_watermark",
                Size,
                &["send_buffer_low_watermark_bytes"],
            ),
            key("send_buffer_watermark_factor", Count),
            to(
                "send_not_sent_low_watermark",
                Size,
                &["send_not_sent_low_watermark_bytes"],
            ),
            key("messages", Word),
            key("end_game", Bool),
            key("anti_snubbing", Bool),
            to("snub", Time, &["snub_ns"]),
            key("super_seeding", Bool),
        ],
    ),
];

/// The keys of `table` (a name of [`KEYS`], or `swarm.transport`).
pub fn keys_of(table: &str) -> Vec<Key> {
    if table == "swarm.transport" {
        return FLOW
            .iter()
            .filter(|k| !NOT_IN_SWARM_FLOW.contains(&k.key))
            .copied()
            .collect();
    }
    KEYS.iter()
        .find(|(name, _)| *name == table)
        .map(|(_, keys)| keys.to_vec())
        .unwrap_or_else(|| panic!("no scenario table {table}"))
}

/// The canonical fields a key fills: its own name where it names none.
pub fn fields_of(k: &Key) -> Vec<&'static str> {
    if k.fields.is_empty() {
        vec![k.key]
    } else {
        k.fields.to_vec()
    }
}

/// The table as JSON, for `defaults_json`: `{"tables": {TABLE: [{key, unit, field}]}, ...}`,
/// `field` the one canonical field a key fills (null where it fills several, the loader
/// expands it or the config does not keep it), then `not_in_swarm_flow`, `not_with_swarm` and `swarm_tables`.
pub fn keys_json() -> serde_json::Value {
    let mut tables = serde_json::Map::new();
    let names = KEYS
        .iter()
        .map(|(name, _)| *name)
        .chain(["swarm.transport"]);
    for name in names {
        let list = keys_of(name)
            .iter()
            .map(|k| {
                let fields = fields_of(k);
                let field = match fields.as_slice() {
                    [one] if !one.starts_with('(') => serde_json::Value::from(*one),
                    _ => serde_json::Value::Null,
                };
                serde_json::json!({"key": k.key, "unit": k.unit, "field": field})
            })
            .collect();
        tables.insert(name.to_string(), serde_json::Value::Array(list));
    }
    serde_json::json!({
        "tables": tables,
        "not_in_swarm_flow": NOT_IN_SWARM_FLOW,
        "not_with_swarm": NOT_WITH_SWARM,
        "swarm_tables": SWARM_TABLES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        AccessConfig, CrossConfig, DirectionConfig, DropSpec, FlowConfig, LinkConfig, SimConfig,
        SwarmBittorrentConfig, SwarmConfig, TraceConfig,
    };
    use serde::de::DeserializeOwned;
    use std::collections::BTreeSet;

    /// Every field serde reads into `T`, from its own list of them (`deny_unknown_fields`
    /// names every field it expects when it meets one it does not).
    fn serde_fields<T: DeserializeOwned + std::fmt::Debug>(prefix: &str) -> BTreeSet<String> {
        let error = serde_json::from_str::<T>(r#"{"?": 0}"#).expect_err("an unknown field");
        let text = error.to_string();
        let (_, expected) = text.split_once("expected").expect("serde lists the fields");
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|f| format!("{prefix}{f}"))
            .collect()
    }

    /// The canonical fields `table`'s keys fill.
    fn reached(table: &str) -> BTreeSet<String> {
        keys_of(table)
            .iter()
            .flat_map(fields_of)
            .filter(|f| !f.starts_with('('))
            .map(String::from)
            .collect()
    }

    /// Each table's keys fill every field of its canonical struct but the ones named here
    /// (with why), and no field the struct does not have.
    fn check(table: &str, canonical: BTreeSet<String>, derived: &[&str]) {
        let derived: BTreeSet<String> = derived.iter().map(|f| f.to_string()).collect();
        let reached = reached(table);
        let missing: Vec<_> = canonical
            .difference(&reached)
            .filter(|f| !derived.contains(*f))
            .collect();
        assert!(
            missing.is_empty(),
            "{table}: no scenario key fills {missing:?} (keys.rs)"
        );
        let unknown: Vec<_> = reached
            .union(&derived)
            .filter(|f| !canonical.contains(*f))
            .collect();
        assert!(
            unknown.is_empty(),
            "{table}: {unknown:?} are no canonical fields"
        );
    }

    fn direction(side: &str) -> BTreeSet<String> {
        serde_fields::<DirectionConfig>(&format!("{side}."))
    }

    #[test]
    fn every_canonical_field_has_a_scenario_key() {
        // `slowstart compare` sets run_to_end; no scenario does.
        check("top", serde_fields::<SimConfig>(""), &["run_to_end"]);
        check("flow", serde_fields::<FlowConfig>(""), &[]);
        // What a swarm decides itself for every connection.
        let fixed = ["src", "dst", "size_bytes", "start_ns", "app", "program"];
        check("swarm.transport", serde_fields::<FlowConfig>(""), &fixed);
        check("cross", serde_fields::<CrossConfig>(""), &[]);
        check("trace", serde_fields::<TraceConfig>(""), &[]);
        check("drop", serde_fields::<DropSpec>(""), &[]);
        let mut swarm = serde_fields::<SwarmConfig>("");
        swarm.remove("access");
        swarm.extend(serde_fields::<AccessConfig>("access."));
        check("swarm", swarm, &[]);
        check(
            "swarm.bittorrent",
            serde_fields::<SwarmBittorrentConfig>(""),
            &[],
        );
        let mut link = serde_fields::<LinkConfig>("");
        link.remove("forward");
        link.remove("reverse");
        link.extend(direction("forward"));
        link.extend(direction("reverse"));
        // A [[link]]'s loss, jitter and scheduled drops are its forward direction's.
        let forward_only = [
            "reverse.loss",
            "reverse.gilbert_elliott",
            "reverse.jitter_ns",
            "reverse.drops",
        ];
        check("link", link, &forward_only);
    }

    #[test]
    fn keys_are_listed_once_and_the_named_keys_exist() {
        for (table, keys) in KEYS {
            let names: BTreeSet<_> = keys.iter().map(|k| k.key).collect();
            assert_eq!(names.len(), keys.len(), "{table}: a key is listed twice");
        }
        for name in NOT_IN_SWARM_FLOW {
            assert!(FLOW.iter().any(|k| k.key == *name), "{name} is no flow key");
        }
        let top = keys_of("top");
        for name in NOT_WITH_SWARM {
            assert!(
                top.iter().any(|k| k.key == *name),
                "{name} is no top-level key"
            );
        }
        let swarm = keys_of("swarm");
        for name in SWARM_TABLES {
            assert!(
                swarm.iter().any(|k| k.key == *name && k.unit == Table),
                "swarm.{name}"
            );
        }
    }
}
