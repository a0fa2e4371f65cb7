//! The schema export: every default, bound and word of the canonical config as one JSON
//! object for the Python loader (`_core.defaults()`).

use serde::Serialize;

use crate::*;

/// Every choice's words in the order messages list them, each with the canonical value it
/// stands for (`[word, value]` pairs), keyed by the setting: the loader turns a scenario's
/// `"50-50"` into `"mixed"` with them (and leaves other words to [`SimConfig::from_json`] to
/// refuse).
fn word_lists() -> serde_json::Value {
    fn table<T: Serialize>(words: &[(&str, T)]) -> serde_json::Value {
        let pairs = words.iter().map(|(w, v)| {
            let canonical = serde_json::to_value(v).expect("a choice serializes");
            serde_json::json!([w, canonical])
        });
        serde_json::Value::Array(pairs.collect())
    }
    serde_json::json!({
        "recovery": table(Recovery::WORDS),
        "loss_detection": table(LossDetection::WORDS),
        "cwnd_limited": table(CwndLimited::WORDS),
        "pacer": table(PacerModel::WORDS),
        "ecn_feedback": table(CeFeedback::WORDS),
        "receiver_ecn": table(ReceiverEcn::WORDS),
        "ecn_reduction": table(EcnReduction::WORDS),
        "population": table(Population::WORDS),
        "seeding": table(Seeding::WORDS),
        "connection_transport": table(ConnectionTransport::WORDS),
        "piece_picker": table(PiecePicker::WORDS),
        "send_buffer": table(SendBuffer::WORDS),
        "messages": table(Messages::WORDS),
        "sends": table(ProgramEnd::WORDS),
        "ends": table(ProgramEnds::WORDS),
    })
}

/// Every default of the canonical config as one JSON object, read by the Python loader
/// (`_core.defaults()`): `flow` (a flow's fields but its ends), `web` and `bittorrent` (a
/// flow's application), `trace`, `swarm` (with its `tcp` and `utp` transports),
/// `swarm_decided` (a swarm transport's fields the swarm decides: its ends, size, start, app),
/// `path` (by the `[path]` key each default is of, in canonical units; a buffer in BDPs),
/// `path_access_queue` (the access link's queue, which no key sets), `cross` (a `[[cross]]`
/// source's, its ends included; `rate_bps` has none), `program` (a
/// `[flow.program]`'s, its commands excepted) and `program_placeholders` (name: meaning).
/// Fields written only when set (`ecn`) are written here too, with their default. `queue`: each
/// queue discipline's parameters, keyed by its `kind` (drop-tail has none); `queue_docs`: each
/// discipline's one line. `words`: every
/// choice's accepted words and the canonical value of each; `word_lists` the same as lists of
/// `[word, value]` in the order messages list them. `limits`: bounds the front end
/// applies before a config exists (a trace's times, the files it reads, a sweep's size).
pub fn defaults_json() -> String {
    let flow = |f: FlowConfig| {
        let (ecn, cwnd_limited, feedback, pacer) = (f.ecn, f.cwnd_limited, f.ecn_feedback, f.pacer);
        let receiver_ecn = serde_json::to_value(f.receiver_ecn).expect("a config serializes");
        let reduction = serde_json::to_value(f.ecn_reduction).expect("a config serializes");
        let mut v = serde_json::to_value(f).expect("a config serializes");
        let o = v.as_object_mut().expect("a struct is an object");
        o.remove("src");
        o.remove("dst");
        o.insert("ecn".into(), ecn.into());
        let rule = serde_json::to_value(cwnd_limited).expect("a config serializes");
        o.insert("cwnd_limited".into(), rule);
        let feedback = serde_json::to_value(feedback).expect("a config serializes");
        o.insert("ecn_feedback".into(), feedback);
        o.insert("receiver_ecn".into(), receiver_ecn);
        o.insert("ecn_reduction".into(), reduction);
        let pacer = serde_json::to_value(pacer).expect("a config serializes");
        o.insert("pacer".into(), pacer);
        o.insert("program".into(), serde_json::Value::Null);
        v
    };
    let swarm = SwarmConfig::default();
    // The fields of a swarm transport's connections the swarm decides itself (the keys
    // NOT_IN_SWARM_FLOW fill), the same for both transports.
    let transport = serde_json::to_value(&swarm.tcp).expect("a config serializes");
    let decided: serde_json::Map<String, serde_json::Value> = crate::keys::keys_of("flow")
        .iter()
        .filter(|k| crate::keys::NOT_IN_SWARM_FLOW.contains(&k.key))
        .flat_map(crate::keys::fills_of)
        .filter_map(|fill| Some((fill.field.to_string(), transport.get(fill.field)?.clone())))
        .collect();
    let mut swarm_json = serde_json::to_value(&swarm).expect("a config serializes");
    swarm_json["tcp"] = flow(swarm.tcp);
    swarm_json["utp"] = flow(swarm.utp);
    let web = WebConfig {
        request_bytes: default_request_bytes(),
        response_bytes: vec![],
        objects: None,
        keep_alive: true,
    };
    let mut web_json = serde_json::to_value(web).expect("a config serializes");
    web_json
        .as_object_mut()
        .expect("a struct is an object")
        .remove("response_bytes");
    // A program's commands have no default; its other fields do.
    let mut program_json = serde_json::to_value(ProgramConfig {
        server: vec![],
        client: vec![],
        sends: ProgramEnd::default(),
        port: None,
        ends: ProgramEnds::default(),
    })
    .expect("a config serializes");
    let o = program_json.as_object_mut().expect("a struct is an object");
    o.remove("server");
    o.remove("client");
    let disciplines = Discipline::each_with_defaults();
    let queue_docs: serde_json::Map<String, serde_json::Value> = disciplines
        .iter()
        .map(|d| (d.name().to_string(), d.doc().into()))
        .collect();
    let queue: serde_json::Map<String, serde_json::Value> = disciplines[1..]
        .iter()
        .map(|d| {
            let mut v = serde_json::to_value(d).expect("a config serializes");
            let kind = v
                .as_object_mut()
                .and_then(|o| o.remove("kind"))
                .expect("a discipline is tagged by its kind");
            // Written only when off in a config; the loader lists every default.
            match (d, v.as_object_mut()) {
                (Discipline::Red(c), Some(o)) => {
                    o.insert("hard_drop".into(), c.hard_drop.into());
                }
                (Discipline::DualPi2(c), Some(o)) => {
                    o.insert("drop_overload".into(), c.drop_overload.into());
                }
                _ => {}
            }
            (kind.as_str().expect("a kind is a word").to_string(), v)
        })
        .collect();
    let flow_json = flow(FlowConfig::new("", ""));
    let lists = word_lists();
    // The same, each choice's words as a map (word: value).
    let words: serde_json::Map<String, serde_json::Value> = lists
        .as_object()
        .expect("a table of choices")
        .iter()
        .map(|(choice, pairs)| {
            let pairs = pairs.as_array().expect("a list of pairs").iter();
            let map = pairs.map(|p| (p[0].as_str().expect("a word").to_string(), p[1].clone()));
            (choice.clone(), serde_json::Value::Object(map.collect()))
        })
        .collect();
    serde_json::json!({
        "keys": crate::keys::keys_json(&flow_json, &lists),
        "flow": flow_json,
        "web": web_json,
        "bittorrent": BittorrentConfig::default(),
        "trace": TraceConfig::default(),
        "swarm": swarm_json,
        "swarm_decided": decided,
        "path": {
            "buffer": {"bdp": PATH_DEFAULTS.buffer_bdp},
            "loss": PATH_DEFAULTS.loss,
            "jitter": PATH_DEFAULTS.jitter_ns,
            "access_rate": PATH_DEFAULTS.access_rate_bps,
        },
        "path_access_queue": QueueLimit::Bytes(PATH_DEFAULTS.access_buffer_bytes),
        "queue": queue,
        "queue_docs": queue_docs,
        "cross": serde_json::from_str::<CrossConfig>("{}").expect("every field has a default"),
        "program": program_json,
        "program_placeholders": serde_json::Value::Object(
            PROGRAM_PLACEHOLDERS
                .iter()
                .map(|(name, meaning)| (name.to_string(), (*meaning).into()))
                .collect(),
        ),
        "words": words,
        "word_lists": lists,
        "limits": {
            "trace_ms": MAX_DELAY_NS / 1_000_000,
            "scenario_file_bytes": MAX_SCENARIO_FILE_BYTES,
            "trace_file_bytes": MAX_TRACE_FILE_BYTES,
            "sweep_points": MAX_SWEEP_POINTS,
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_stands_for_a_value_that_serializes_as_the_loader_writes_it() {
        let d: serde_json::Value = serde_json::from_str(&defaults_json()).unwrap();
        let words = &d["words"];
        assert_eq!(words["population"]["50-50"], "mixed");
        assert_eq!(words["seeding"]["random-stay"], "random_stay");
        assert_eq!(words["recovery"]["rfc6675"], "rfc6675");
        assert_eq!(words["cwnd_limited"]["strict"], "strict");
        assert_eq!(words["ecn_reduction"]["prr"], "prr");
        // The lists hold the same pairs, in the order messages list them.
        let population = serde_json::json!([
            ["tcp", "tcp"],
            ["utp", "utp"],
            ["50-50", "mixed"],
            ["mixed", "mixed"]
        ]);
        assert_eq!(d["word_lists"]["population"], population);
        assert_eq!(
            d["word_lists"].as_object().unwrap().len(),
            words.as_object().unwrap().len()
        );
    }

    #[test]
    fn defaults_json_holds_every_table_and_the_fields_written_only_when_set() {
        let d: serde_json::Value = serde_json::from_str(&defaults_json()).unwrap();
        for table in [
            "flow",
            "web",
            "bittorrent",
            "trace",
            "swarm",
            "path",
            "queue",
            "cross",
            "program",
            "program_placeholders",
        ] {
            assert!(d[table].is_object(), "{table}");
        }
        assert_eq!(
            d["program"],
            serde_json::json!({"sends": "server", "port": null, "ends": "client"})
        );
        assert_eq!(d["flow"]["program"], serde_json::Value::Null);
        assert_eq!(
            d["program_placeholders"].as_object().unwrap().len(),
            PROGRAM_PLACEHOLDERS.len()
        );
        assert_eq!(d["flow"]["ecn"], false);
        assert_eq!(d["flow"]["cwnd_limited"], "linux");
        assert_eq!(d["flow"]["pacer"], "linux");
        assert_eq!(d["flow"]["ecn_reduction"], "immediate");
        assert_eq!(d["swarm"]["tcp"]["ecn"], false);
        assert!(d["flow"].get("src").is_none() && d["web"].get("response_bytes").is_none());
        assert_eq!(d["trace"]["max_rows"], 2_000_000);
        assert_eq!(d["web"]["request_bytes"], 400);
        assert_eq!(d["path"]["access_rate"], 10_000_000_000u64);
        let docs: Vec<_> = d["queue_docs"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        let mut kinds: Vec<_> = d["keys"]["queue_kinds"]
            .as_array()
            .unwrap()
            .iter()
            .collect();
        kinds.sort_by_key(|k| k.as_str());
        assert_eq!(serde_json::json!(docs), serde_json::json!(kinds));
        let path_keys = crate::keys::keys_of("path");
        for key in d["path"].as_object().unwrap().keys() {
            assert!(path_keys.iter().any(|k| k.key == key), "path.{key}");
        }
        assert_eq!(
            (&d["cross"]["src"], &d["cross"]["dst"]),
            (&"sender".into(), &"receiver".into())
        );
        let queue = d["queue"].as_object().unwrap();
        let kinds: Vec<&str> = queue.keys().map(String::as_str).collect();
        assert_eq!(kinds, ["codel", "dualpi2", "fq_codel", "pie", "red"]);
        assert_eq!(queue["dualpi2"]["alpha"], 41.0 / 256.0);
        assert_eq!(queue["red"]["hard_drop"], true);
        assert_eq!(queue["dualpi2"]["drop_overload"], true);
        assert_eq!(queue["codel"]["target_ns"], 5_000_000);
        assert_eq!(queue["fq_codel"]["memory_limit_bytes"], 32 << 20);
        assert_eq!(queue["pie"]["alpha"], 0.125);
        assert_eq!(queue["red"]["gentle"], true);
        // Each kind's defaults read back as that discipline, every parameter given.
        for (kind, params) in queue {
            let mut tagged = params.clone();
            tagged["kind"] = kind.as_str().into();
            let d: Discipline = serde_json::from_value(tagged).unwrap();
            assert_eq!(d.name(), kind);
            d.validate("links.0.forward", 1500).unwrap();
        }
        // Each default flow passes validation as the loader would send it.
        let mut f = FlowConfig::new("a", "b");
        f.size_bytes = Some(1);
        f.validate_transport("flow.0").unwrap();
    }
}
