//! The scenario's TOML keys: which keys each table of a scenario file takes, in the order
//! messages list them, each with its unit kind (how the loader reads its value) and the
//! canonical field it fills (config/). The Python loader (python/slowstart/loading/scenario.py)
//! reads this table through `defaults_json`'s `keys`; it copies none of it.
//!
//! A key whose canonical field has another name (`size` fills `size_bytes`) names it; a key the
//! loader expands into several fields (`swarm.delay`, a link's `rate` and its trace, each
//! `[path]` key into the two links it stands for) names them all (see [`Key::fields`]). The
//! core's messages about a link name its canonical field (`links.1.forward.queue`), and the
//! loader names it back as the scenario wrote it (`path.buffer`) by finding the key that fills it.

use serde::Serialize;

use crate::FlowConfig;

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
    /// A size, or a list of sizes.
    Sizes,
    /// A size or "inf" (no limit).
    SizeOrInf,
    /// A window: a size, a number of segments ("100mss") or "inf".
    Window,
    /// A buffer: packets ("200pkt"), bytes, a time at the line rate, or BDPs ("1bdp").
    Buffer,
    /// A non-negative integer.
    Count,
    /// An integer of at least 1.
    Positive,
    /// A count, or "none".
    CountOrNone,
    /// A finite number.
    Number,
    /// A loss probability, or a Gilbert-Elliott table.
    Loss,
    /// A probability in [0, 1], or a percentage ("25%").
    Probability,
    /// A queue discipline's probability or weight: a bare number (no percentage).
    Fraction,
    /// A queue discipline's controller gain, a number in Hz.
    Gain,
    /// A number of packets, fractional allowed (RED's thresholds on the average queue).
    Packets,
    /// true or false.
    Bool,
    /// One of the words the core lists for it (`words` in `defaults_json`), or a name.
    Word,
    /// Free text.
    Text,
    /// A command line (split as a POSIX shell would) or a list of arguments.
    Command,
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
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub key: &'static str,
    pub unit: Unit,
    /// The canonical fields it fills, dotted below the table's canonical struct (for `[path]`,
    /// below the expanded config: `links.1.forward.delay_ns`); empty where the field is the key
    /// itself.
    pub fields: &'static [Fill],
}

/// A canonical field a key fills, and the part of the key's value it is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    pub field: &'static str,
    /// The key of the value's table the field is read from (`trace` of `rate = {trace =
    /// "FILE"}`); empty where it is read from the whole value.
    pub from: &'static str,
}

/// A field read from the whole value.
const fn f(field: &'static str) -> Fill {
    Fill { field, from: "" }
}

/// A field read from the value's table's key `from`.
const fn sub(field: &'static str, from: &'static str) -> Fill {
    Fill { field, from }
}

/// The `fields` of a key the canonical config does not keep (`description`, a comment).
pub const NOT_KEPT: &[Fill] = &[f("(not kept)")];

const fn key(key: &'static str, unit: Unit) -> Key {
    Key {
        key,
        unit,
        fields: &[],
    }
}

const fn to(key: &'static str, unit: Unit, fields: &'static [Fill]) -> Key {
    Key { key, unit, fields }
}

use Unit::*;

/// A `[[flow]]` table's keys (FlowConfig); a swarm's `tcp` and `utp` take all but
/// [`NOT_IN_SWARM_FLOW`].
const FLOW: &[Key] = &[
    key("cc", Cc),
    to("size", SizeOrInf, &[f("size_bytes")]),
    to("start", Time, &[f("start_ns")]),
    key("mss", Positive),
    key("header_bytes", Count),
    key("initcwnd", Positive),
    key("initrwnd", Positive),
    to("max_rwnd", Window, &[f("max_rwnd_bytes")]),
    to("max_window", Window, &[f("max_window_bytes")]),
    key("handshake", Bool),
    key("delayed_ack", Bool),
    to("delack_timeout", Time, &[f("delack_timeout_ns")]),
    key("ack_every", Positive),
    key("quickack", Bool),
    key("abc", Bool),
    to("min_rto", Time, &[f("min_rto_ns")]),
    to("max_rto", Time, &[f("max_rto_ns")]),
    key("pacing", Bool),
    key("pacer", Word),
    key("recovery", Word),
    key("loss_detection", Word),
    key("ecn", Bool),
    key("ecn_feedback", Word),
    key("receiver_ecn", Word),
    key("ecn_reduction", Word),
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
            to("duration", Time, &[f("duration_ns")]),
            key("seed", Count),
            to("path", Table, &[f("nodes"), f("links")]),
            key("nodes", List),
            to("link", Tables, &[f("links")]),
            to("flow", Tables, &[f("flows")]),
            key("cross", Tables),
            key("trace", Table),
            key("swarm", Table),
        ],
    ),
    // Each `[path]` key fills fields of the two links it expands into (scenario.py
    // `expand_path`: 0 the access link, 1 the bottleneck); a reverse key left out takes its
    // forward key's value.
    (
        "path",
        &[
            to(
                "rate",
                RateOrTrace,
                &[
                    f("links.1.forward.rate_bps"),
                    sub("links.1.forward.rate_trace_ms", "trace"),
                ],
            ),
            to(
                "rtt",
                Time,
                &[f("links.1.forward.delay_ns"), f("links.1.reverse.delay_ns")],
            ),
            to("buffer", Buffer, &[f("links.1.forward.queue")]),
            to(
                "loss",
                Loss,
                &[
                    f("links.1.forward.loss"),
                    f("links.1.forward.gilbert_elliott"),
                ],
            ),
            to(
                "access_rate",
                Rate,
                &[f("links.0.forward.rate_bps"), f("links.0.reverse.rate_bps")],
            ),
            to(
                "reverse_rate",
                RateOrTrace,
                &[
                    f("links.1.reverse.rate_bps"),
                    sub("links.1.reverse.rate_trace_ms", "trace"),
                ],
            ),
            to("reverse_buffer", Buffer, &[f("links.1.reverse.queue")]),
            to("jitter", Time, &[f("links.1.forward.jitter_ns")]),
            to("drop", Tables, &[f("links.1.forward.drops")]),
            to("queue", Queue, &[f("links.1.forward.discipline")]),
            to("reverse_queue", Queue, &[f("links.1.reverse.discipline")]),
            to(
                "ecn",
                Bool,
                &[f("links.1.forward.ecn"), f("links.1.reverse.ecn")],
            ),
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
                &[f("forward.rate_bps"), sub("forward.rate_trace_ms", "trace")],
            ),
            to("delay", Time, &[f("forward.delay_ns")]),
            to("buffer", Buffer, &[f("forward.queue")]),
            to(
                "loss",
                Loss,
                &[f("forward.loss"), f("forward.gilbert_elliott")],
            ),
            to(
                "reverse_rate",
                RateOrTrace,
                &[f("reverse.rate_bps"), sub("reverse.rate_trace_ms", "trace")],
            ),
            to("reverse_delay", Time, &[f("reverse.delay_ns")]),
            to("reverse_buffer", Buffer, &[f("reverse.queue")]),
            to("jitter", Time, &[f("forward.jitter_ns")]),
            to("drop", Tables, &[f("forward.drops")]),
            to("queue", Queue, &[f("forward.discipline")]),
            to("reverse_queue", Queue, &[f("reverse.discipline")]),
            to("ecn", Bool, &[f("forward.ecn"), f("reverse.ecn")]),
        ],
    ),
    ("drop", &[key("flow", Count), key("seq", Count)]),
    (
        "cross",
        &[
            key("kind", Word),
            key("src", Word),
            key("dst", Word),
            to("rate", Rate, &[f("rate_bps")]),
            to("packet_size", Size, &[f("packet_bytes")]),
            to("start", Time, &[f("start_ns")]),
            to("stop", Time, &[f("stop_ns")]),
            to("on", Time, &[f("on_ns")]),
            to("off", Time, &[f("off_ns")]),
            key("distribution", Word),
        ],
    ),
    (
        "trace",
        &[
            to("flow_interval", Time, &[f("flow_interval_ns")]),
            to("queue_interval", Time, &[f("queue_interval_ns")]),
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
            to("arrival_mean", Time, &[f("arrival_mean_ns")]),
            to("file", Size, &[f("file_bytes")]),
            to("piece", Size, &[f("piece_bytes")]),
            to("block", Size, &[f("block_bytes")]),
            key("population", Word),
            key("connection_transport", Word),
            key("seeding", Word),
            key("stay_factor", Number),
            to("stop_after", CountOrNone, &[f("stop_after_completions")]),
            to("queue_sample", Time, &[f("queue_sample_ns")]),
            to("up", Rate, &[f("access.up_bps")]),
            to("down", Rate, &[f("access.down_bps")]),
            to("buffer", Buffer, &[f("access.up_queue")]),
            to("down_buffer", Buffer, &[f("access.down_queue")]),
            to(
                "delay",
                TimeRange,
                &[f("access.delay_min_ns"), f("access.delay_max_ns")],
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
            to("reannounce", Time, &[f("reannounce_ns")]),
            key("unchoke_slots", Count),
            to("rechoke", Time, &[f("rechoke_ns")]),
            to("rate_window", Time, &[f("rate_window_ns")]),
            to("optimistic", Time, &[f("optimistic_ns")]),
            key("new_peer_weight", Count),
            key("pipeline", Count),
            to("request_queue_time", Time, &[f("request_queue_time_ns")]),
            key("piece_picker", Word),
            to(
                "whole_pieces_threshold",
                Time,
                &[f("whole_pieces_threshold_ns")],
            ),
            key("hold_requests_beyond_target", Bool),
            key("send_buffer", Word),
            to(
                "send_buffer_watermark",
                Size,
                &[f("send_buffer_watermark_bytes")],
            ),
            to(
                "send_buffer_low_watermark",
                Size,
                &[f("send_buffer_low_watermark_bytes")],
            ),
            key("send_buffer_watermark_factor", Count),
            to(
                "send_not_sent_low_watermark",
                Size,
                &[f("send_not_sent_low_watermark_bytes")],
            ),
            key("messages", Word),
            key("end_game", Bool),
            key("anti_snubbing", Bool),
            to("snub", Time, &[f("snub_ns")]),
            key("super_seeding", Bool),
        ],
    ),
    // A flow's application (`app = {kind = "web", ...}`, AppConfig), one table per kind.
    ("app.bulk", &[key("kind", Word)]),
    (
        "app.web",
        &[
            key("kind", Word),
            to("request", Size, &[f("request_bytes")]),
            to("response", Sizes, &[f("response_bytes")]),
            key("objects", Count),
            key("keep_alive", Bool),
        ],
    ),
    (
        "app.bittorrent",
        &[
            key("kind", Word),
            to("block", Size, &[f("block_bytes")]),
            to("queue_time", Time, &[f("queue_time_ns")]),
            key("min_queue", Count),
            key("max_queue", Count),
            key("app_slow_start", Bool),
            to(
                "slow_start_threshold",
                Size,
                &[f("slow_start_threshold_bytes")],
            ),
            key("blocks", Count),
        ],
    ),
    // A real program pair carrying a flow in `slowstart real` (ProgramConfig).
    (
        "program",
        &[
            key("server", Command),
            key("client", Command),
            key("sends", Word),
            key("port", Count),
            key("ends", Word),
        ],
    ),
    // A Gilbert-Elliott `loss = {p = ..., ...}` table (GilbertElliott): netem's gemodel.
    (
        "loss",
        &[
            key("p", Probability),
            key("r", Probability),
            key("loss_bad", Probability),
            key("loss_good", Probability),
        ],
    ),
    // A link's queue discipline (`queue = {kind = "codel", ...}`, Discipline), one table per
    // kind, its parameters in the order messages list them; the kind is the tag.
    ("queue.droptail", &[]),
    (
        "queue.codel",
        &[
            to("target", Time, &[f("target_ns")]),
            to("interval", Time, &[f("interval_ns")]),
            to("mtu", Size, &[f("mtu_bytes")]),
        ],
    ),
    (
        "queue.fq_codel",
        &[
            key("flows", Positive),
            to("quantum", Size, &[f("quantum_bytes")]),
            to("target", Time, &[f("target_ns")]),
            to("interval", Time, &[f("interval_ns")]),
            to("memory_limit", Size, &[f("memory_limit_bytes")]),
        ],
    ),
    (
        "queue.pie",
        &[
            to("target", Time, &[f("target_ns")]),
            to("t_update", Time, &[f("t_update_ns")]),
            key("alpha", Gain),
            key("beta", Gain),
            to("max_burst", Time, &[f("max_burst_ns")]),
        ],
    ),
    (
        "queue.red",
        &[
            key("min_th", Packets),
            key("max_th", Packets),
            key("max_p", Fraction),
            key("w_q", Fraction),
            key("gentle", Bool),
            key("hard_drop", Bool),
        ],
    ),
    (
        "queue.dualpi2",
        &[
            to("target", Time, &[f("target_ns")]),
            to("t_update", Time, &[f("t_update_ns")]),
            key("alpha", Gain),
            key("beta", Gain),
            to("step", Time, &[f("step_ns")]),
            key("coupling", Gain),
            key("c_protection", Fraction),
            key("drop_overload", Bool),
        ],
    ),
];

/// The queue disciplines' kinds, in the order of their tables in [`KEYS`] (`queue.KIND`).
fn queue_kinds() -> Vec<&'static str> {
    KEYS.iter()
        .filter_map(|(name, _)| name.strip_prefix("queue."))
        .collect()
}

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

/// The canonical fields a key fills: its own name where it names none, none where the config
/// does not keep it.
pub fn fills_of(k: &Key) -> Vec<Fill> {
    if k.fields.is_empty() {
        vec![f(k.key)]
    } else {
        k.fields
            .iter()
            .filter(|fill| !fill.field.starts_with('('))
            .copied()
            .collect()
    }
}

/// The fields of the default flow (`flow`, every field as `defaults_json` lists them) that a
/// config does not write at that value (serde's `skip_serializing_if` on [`FlowConfig`]):
/// those missing from the default's serialization.
fn unwritten_flow_fields(flow: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    let written = serde_json::to_value(FlowConfig::new("", "")).expect("a config serializes");
    flow.as_object()
        .expect("the default flow is a table")
        .iter()
        .filter(|(field, _)| written.get(field.as_str()).is_none())
        .map(|(field, value)| (field.clone(), value.clone()))
        .collect()
}

/// The table as JSON, for `defaults_json` (`flow`: the default flow it lists):
/// `{"tables": {TABLE: [{key, unit, field, fields, unwritten?}]}, ...}`, `field` the one
/// canonical field a key fills (null where it fills several or the config does not keep it),
/// `fields` every field it fills as `{field, from}` ([`Fill`]), `unwritten` (present only for
/// such a field) the value at which a config leaves the field out, so that the loader does
/// too; then `not_in_swarm_flow`, `not_with_swarm`, `swarm_tables` and `queue_kinds`
/// (the kinds of the `queue.KIND` tables in their order; `tables` is a map, which JSON does
/// not keep in order).
pub fn keys_json(flow: &serde_json::Value) -> serde_json::Value {
    let unwritten = unwritten_flow_fields(flow);
    let mut tables = serde_json::Map::new();
    let names = KEYS
        .iter()
        .map(|(name, _)| *name)
        .chain(["swarm.transport"]);
    for name in names {
        let list = keys_of(name)
            .iter()
            .map(|k| {
                let fills = fills_of(k);
                let field = match fills.as_slice() {
                    [one] => serde_json::Value::from(one.field),
                    _ => serde_json::Value::Null,
                };
                let fields: Vec<_> = fills
                    .iter()
                    .map(|fill| serde_json::json!({"field": fill.field, "from": fill.from}))
                    .collect();
                let mut entry = serde_json::json!({
                    "key": k.key, "unit": k.unit, "field": field, "fields": fields,
                });
                let flow_table = name == "flow" || name == "swarm.transport";
                if let (true, [one]) = (flow_table, fills.as_slice()) {
                    if let Some(value) = unwritten.get(one.field) {
                        entry["unwritten"] = value.clone();
                    }
                }
                entry
            })
            .collect();
        tables.insert(name.to_string(), serde_json::Value::Array(list));
    }
    serde_json::json!({
        "tables": tables,
        "not_in_swarm_flow": NOT_IN_SWARM_FLOW,
        "not_with_swarm": NOT_WITH_SWARM,
        "swarm_tables": SWARM_TABLES,
        "queue_kinds": queue_kinds(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        AccessConfig, BittorrentConfig, CodelConfig, CrossConfig, DirectionConfig, Discipline,
        DropSpec, DualPi2Config, FlowConfig, FqCodelConfig, GilbertElliott, LinkConfig, PieConfig,
        ProgramConfig, RedConfig, SimConfig, SwarmBittorrentConfig, SwarmConfig, TraceConfig,
        WebConfig,
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

    /// The canonical fields a key fills, by name.
    fn fields_of(k: &Key) -> Vec<&'static str> {
        fills_of(k).iter().map(|fill| fill.field).collect()
    }

    /// The canonical fields `table`'s keys fill.
    fn reached(table: &str) -> BTreeSet<String> {
        keys_of(table)
            .iter()
            .flat_map(fields_of)
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
        // An application's kind is the tag of AppConfig, not a field of its kind's struct.
        let tagged = |mut fields: BTreeSet<String>| {
            fields.insert("kind".into());
            fields
        };
        check("app.bulk", tagged(BTreeSet::new()), &[]);
        check("app.web", tagged(serde_fields::<WebConfig>("")), &[]);
        check(
            "app.bittorrent",
            tagged(serde_fields::<BittorrentConfig>("")),
            &[],
        );
        check("program", serde_fields::<ProgramConfig>(""), &[]);
        check("loss", serde_fields::<GilbertElliott>(""), &[]);
    }

    /// The fields serde reads into a discipline of `d`'s kind, but its tag `kind`.
    fn discipline_fields(d: &Discipline) -> BTreeSet<String> {
        match d {
            Discipline::DropTail => BTreeSet::new(),
            Discipline::Codel(_) => serde_fields::<CodelConfig>(""),
            Discipline::FqCodel(_) => serde_fields::<FqCodelConfig>(""),
            Discipline::Pie(_) => serde_fields::<PieConfig>(""),
            Discipline::Red(_) => serde_fields::<RedConfig>(""),
            Discipline::DualPi2(_) => serde_fields::<DualPi2Config>(""),
        }
    }

    /// Each discipline has a table `queue.KIND` whose keys fill its variant's fields, in the
    /// order its kinds are listed, and there is no other `queue.` table.
    #[test]
    fn each_discipline_has_its_table_of_parameters() {
        let disciplines = [
            Discipline::DropTail,
            Discipline::Codel(CodelConfig::default()),
            Discipline::FqCodel(FqCodelConfig::default()),
            Discipline::Pie(PieConfig::default()),
            Discipline::Red(RedConfig::default()),
            Discipline::DualPi2(DualPi2Config::default()),
        ];
        let names: Vec<_> = disciplines.iter().map(Discipline::name).collect();
        assert_eq!(queue_kinds(), names);
        for d in &disciplines {
            // The kind is the serialized tag, but drop-tail's: the loader leaves the default
            // discipline out of a config (serde calls it `drop_tail`).
            if !d.is_drop_tail() {
                let written = serde_json::to_value(d).expect("a discipline serializes");
                assert_eq!(written["kind"], d.name());
            }
            check(&format!("queue.{}", d.name()), discipline_fields(d), &[]);
        }
    }

    #[test]
    fn each_path_key_fills_fields_of_the_two_links_it_expands_into() {
        let mut link = direction("forward");
        link.extend(direction("reverse"));
        for k in keys_of("path") {
            let fields = fields_of(&k);
            assert!(!fields.is_empty(), "path.{} fills nothing", k.key);
            for field in fields {
                let rest = ["links.0.", "links.1."]
                    .iter()
                    .find_map(|link| field.strip_prefix(link))
                    .unwrap_or_else(|| panic!("path.{}: {field} is no field of a link", k.key));
                assert!(
                    link.contains(rest),
                    "path.{}: {field} is no canonical field",
                    k.key
                );
            }
        }
    }

    /// The key of `table` whose fields hold the message's field, and what of the field is left.
    fn key_of_message(table: &str, message: &str) -> Option<(&'static str, String)> {
        let (field, _) = message.split_once(": ")?;
        keys_of(table).iter().find_map(|k| {
            fields_of(k).iter().find_map(|f| {
                let rest = field.strip_prefix(f)?;
                (rest.is_empty() || rest.starts_with('.')).then(|| (k.key, rest.to_string()))
            })
        })
    }

    /// Each message about a `[path]` link names a field that the key the scenario wrote fills:
    /// the loader names the key from it (scenario.py `scenario_field`).
    #[test]
    fn a_link_message_names_a_field_its_path_key_fills() {
        use crate::testing::{flow, path, MS};
        use crate::QueueLimit;
        type Edit = fn(&mut SimConfig);
        let cases: [(Edit, &str, &str); 13] = [
            (|c| c.links[1].forward.rate_bps = 0, "rate", ""),
            (
                |c| c.links[1].forward.rate_trace_ms = vec![5, 1],
                "rate",
                "",
            ),
            (|c| c.links[1].reverse.rate_bps = 0, "reverse_rate", ""),
            (|c| c.links[1].reverse.delay_ns = u64::MAX, "rtt", ""),
            (|c| c.links[1].forward.jitter_ns = u64::MAX, "jitter", ""),
            (|c| c.links[1].forward.loss = 1.0, "loss", ""),
            (
                |c| {
                    c.links[1].forward.gilbert_elliott = Some(GilbertElliott {
                        p: 2.0,
                        r: 0.5,
                        loss_bad: 1.0,
                        loss_good: 0.0,
                    })
                },
                "loss",
                ".p",
            ),
            (
                |c| c.links[1].forward.queue = QueueLimit::Packets(0),
                "buffer",
                "",
            ),
            (
                |c| c.links[1].reverse.queue = QueueLimit::Bytes(10),
                "reverse_buffer",
                "",
            ),
            (
                |c| {
                    c.links[1].forward.discipline = Discipline::Codel(CodelConfig {
                        target_ns: 0,
                        ..CodelConfig::default()
                    })
                },
                "queue",
                ".target_ns",
            ),
            (
                |c| c.links[1].forward.drops = vec![DropSpec { flow: 5, seq: 1 }],
                "drop",
                ".0.flow",
            ),
            (|c| c.links[0].forward.rate_bps = 0, "access_rate", ""),
            (|c| c.links[0].reverse.rate_bps = 0, "access_rate", ""),
        ];
        for (edit, key, rest) in cases {
            let mut cfg = path(
                10_000_000,
                50 * MS,
                QueueLimit::Packets(50),
                vec![flow("reno", None)],
                vec![],
            );
            cfg.validate().unwrap();
            edit(&mut cfg);
            let message = cfg.validate().unwrap_err().0;
            let named = key_of_message("path", &message);
            assert_eq!(named, Some((key, rest.to_string())), "{message}");
            // The same field below a [[link]] is the link key's own.
            let link = message
                .strip_prefix("links.1.")
                .or(message.strip_prefix("links.0."));
            let link_key = link.and_then(|m| key_of_message("link", m));
            assert!(link_key.is_some(), "no [[link]] key fills {message}");
        }
    }

    #[test]
    fn a_flow_key_written_only_when_set_carries_the_value_it_is_left_out_at() {
        let d: serde_json::Value = serde_json::from_str(&crate::defaults_json()).unwrap();
        for table in ["flow", "swarm.transport"] {
            let marked: Vec<(&str, &serde_json::Value)> = d["keys"]["tables"][table]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|k| Some((k["key"].as_str()?, k.get("unwritten")?)))
                .collect();
            let mut want = vec![
                ("pacer", serde_json::json!("linux")),
                ("ecn", serde_json::json!(false)),
                ("ecn_feedback", serde_json::json!("classic")),
                ("receiver_ecn", serde_json::json!("same")),
                ("ecn_reduction", serde_json::json!("immediate")),
                ("cwnd_limited", serde_json::json!("linux")),
            ];
            if table == "flow" {
                want.push(("program", serde_json::Value::Null));
            }
            let want: Vec<_> = want.iter().map(|(k, v)| (*k, v)).collect();
            assert_eq!(marked, want, "{table}");
        }
    }

    #[test]
    fn keys_are_listed_once_and_the_named_keys_exist() {
        for (table, keys) in KEYS {
            let names: BTreeSet<_> = keys.iter().map(|k| k.key).collect();
            assert_eq!(names.len(), keys.len(), "{table}: a key is listed twice");
            // One key per field, so that a message naming the field names the key (the top
            // level's `path` and `nodes`/`link` are alternatives that fill the same fields).
            if *table != "top" {
                let fields: Vec<_> = keys.iter().flat_map(fields_of).collect();
                let once: BTreeSet<_> = fields.iter().collect();
                assert_eq!(once.len(), fields.len(), "{table}: a field is filled twice");
            }
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
