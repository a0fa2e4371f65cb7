//! The loader, end to end: a scenario's TOML → the canonical config, and the one line of each
//! kind of mistake.

use super::*;

fn load_text(text: &str, set: &[&str]) -> Result<serde_json::Value, String> {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load_toml(text, None, None, &set, &mut NoFiles)
        .map(|json| serde_json::from_str(&json).expect("the config is JSON"))
        .map_err(|e| e.0)
}

const SATELLITE: &str = r#"
name = "satellite"
duration = "60s"
[path]
rate = "250Mbps"
rtt = "600ms"
[[flow]]
cc = "cubic"
size = "100MB"
"#;

#[test]
fn the_path_shorthand_expands_into_two_links_and_a_bdp_buffer() {
    let c = load_text(SATELLITE, &[]).unwrap();
    assert_eq!(
        c["nodes"],
        serde_json::json!(["sender", "router", "receiver"])
    );
    let bottleneck = &c["links"][1];
    assert_eq!(bottleneck["forward"]["rate_bps"], 250_000_000);
    assert_eq!(bottleneck["forward"]["delay_ns"], 300_000_000);
    assert_eq!(bottleneck["reverse"]["delay_ns"], 300_000_000);
    // One BDP: 250 Mbit/s × 600 ms / 8 bits.
    assert_eq!(
        bottleneck["forward"]["queue"],
        serde_json::json!({"bytes": 18_750_000})
    );
    assert_eq!(c["links"][0]["name"], "access");
    assert_eq!(c["flows"][0]["size_bytes"], 100_000_000);
    assert_eq!(c["flows"][0]["src"], "sender");
    assert_eq!(
        c["flows"][0]["cc"],
        serde_json::json!({"name": "cubic", "params": {}})
    );
    assert_eq!(c["duration_ns"], 60_000_000_000u64);
}

#[test]
fn an_override_sets_a_key_and_the_buffer_is_resolved_again() {
    let c = load_text(
        SATELLITE,
        &["path.rate=100Mbps", "flow.0.cc.beta=0.8", "seed=7"],
    )
    .unwrap();
    let forward = &c["links"][1]["forward"];
    assert_eq!(forward["rate_bps"], 100_000_000);
    assert_eq!(forward["queue"], serde_json::json!({"bytes": 7_500_000}));
    assert_eq!(
        c["flows"][0]["cc"]["params"],
        serde_json::json!({"beta": 0.8})
    );
    assert_eq!(c["seed"], 7);
}

#[test]
fn each_kind_of_mistake_is_one_line_naming_the_field() {
    let cases: &[(&str, &[&str], &str)] = &[
        (SATELLITE, &["flow.0.mss=0"], "flow.0.mss: "),
        (
            SATELLITE,
            &["path.rate=fast"],
            "path.rate: expected a rate such as \"250Mbps\"",
        ),
        (
            SATELLITE,
            &["path.rtt=600"],
            "path.rtt: give a unit, e.g. \"600ms\"",
        ),
        (
            SATELLITE,
            &["path.colour=1"],
            "--set path.colour=1: unknown key \"colour\" in path",
        ),
        (
            SATELLITE,
            &["flow.0.cc=warp"],
            "flow.0.cc: unknown algorithm \"warp\"",
        ),
        (
            SATELLITE,
            &["flow.0.cc=reno:gain=2"],
            "flow.0.cc: reno has no parameter \"gain\"",
        ),
        (
            SATELLITE,
            &["flow.0.cc=x.wasm"],
            "flow.0.cc: \"x.wasm\" is your own controller",
        ),
        (SATELLITE, &["path.rate=0Mbps"], "path.rate: "),
        (
            SATELLITE,
            &["path.buffer=1bdp", "path.rtt=1ns", "path.rate=1bps"],
            "path.buffer: ",
        ),
        (
            "duration = \"1s\"\n",
            &[],
            "flow: at least one [[flow]] table is needed",
        ),
        (
            "duration = \"1s\"\ncolour = 1\n",
            &[],
            "colour: unknown key (accepted: name, ",
        ),
        ("duration = [\n", &[], "scenario: invalid TOML: "),
    ];
    for (text, set, start) in cases {
        let message = load_text(text, set).unwrap_err();
        assert!(message.starts_with(start), "{set:?}: {message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

#[test]
fn the_general_form_names_its_links_fields() {
    let text = r#"
duration = "10s"
nodes = ["a", "b"]
[[link]]
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"
buffer = "50ms"
queue = {kind = "codel", target = "0ms"}
[[flow]]
src = "a"
dst = "b"
"#;
    let message = load_text(text, &[]).unwrap_err();
    assert!(message.starts_with("link.0.queue.target: "), "{message}");
    // A discipline is one value: an override gives the whole table.
    let set = ["link.0.queue={kind = \"codel\", target = \"5ms\"}"];
    let ok = load_text(text, &set).unwrap();
    assert_eq!(
        ok["links"][0]["forward"]["queue"],
        serde_json::json!({"bytes": 62_500})
    );
    assert_eq!(
        ok["links"][0]["forward"]["discipline"]["target_ns"],
        5_000_000
    );
}
