//! The canonical simulation config: what the Python front end produces from a TOML scenario
//! after resolving units and shorthands. All times are integer nanoseconds, sizes integer bytes,
//! rates integer bits per second. Unknown fields are rejected; [`SimConfig::validate`] names the
//! offending field and what it accepts.
//!
//! One module per table, each with its type, its defaults, its bounds and its checks: `link`
//! (a link's two directions, loss and capacity traces), `queue` (the AQM disciplines), `path`
//! (the `[path]` shorthand's defaults), `flow` (a flow's transport), `program`
//! (`[flow.program]`), `app` (its application), `cross`, `trace` (the `[trace]` table) and
//! `swarm`. Here: the whole config, the bounds every table shares and the checks across
//! tables (nodes, routes).

use serde::{Deserialize, Deserializer, Serialize};
use slowstart_cc::CcSpec;
use slowstart_transport::settings::from_words;
pub use slowstart_transport::settings::{
    CeFeedback, CwndLimited, EcnReduction, LossDetection, PacerModel, ReceiverEcn, Recovery,
    MAX_ACK_EVERY, MAX_DELACK_NS, MAX_HEADER_BYTES, MAX_INITIAL_WINDOW,
};
use slowstart_transport::Settings;

use crate::SimError;

mod app;
mod cross;
mod flow;
mod link;
mod path;
mod program;
mod queue;
mod swarm;
mod trace;

pub use app::*;
pub use cross::*;
pub use flow::*;
pub use link::*;
pub use path::*;
pub use program::*;
pub use queue::*;
pub use swarm::*;
pub use trace::*;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    pub duration_ns: u64,
    /// Node names. Hosts (flow endpoints) and routers alike.
    pub nodes: Vec<String>,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// Traffic without congestion control beside the flows (`[[cross]]`, see [`CrossConfig`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross: Vec<CrossConfig>,
    #[serde(default)]
    pub trace: TraceConfig,
    /// Run to `duration_ns` even once every flow is done (a web flow is done with its last
    /// byte, before its last ACKs are back): `slowstart compare` simulates as long as the real
    /// run lasted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub run_to_end: bool,
    /// A BitTorrent swarm over access links (utp seed); with it, `nodes`, `links` and `flows`
    /// are empty: the swarm builds its own star and connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<SwarmConfig>,
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn yes() -> bool {
    true
}

/// A serde path as validation names the field: `flows[0].recovery` is `flow.0.recovery`,
/// `flows[0].app.request_bytes` is `app.0.request`, and units leave the key (`min_rto_ns`);
/// a link's field stays canonical (`links.0.forward.delay_ns`), as its validation names it.
fn field_name(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut parts: Vec<String> = path
        .iter()
        .filter_map(|s| match s {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect();
    if parts.first().map(String::as_str) == Some("flows") {
        parts[0] = "flow".into();
        if parts.get(2).map(String::as_str) == Some("app") {
            let index = parts[1].clone();
            parts.splice(0..3, ["app".to_string(), index]);
        }
    }
    let canonical = parts.first().map(String::as_str) == Some("links");
    if let Some(last) = parts.last_mut() {
        if last != "header_bytes" && !canonical {
            for unit in ["_ns", "_bytes"] {
                if let Some(key) = last.strip_suffix(unit) {
                    *last = key.to_string();
                }
            }
        }
    }
    parts.join(".")
}

/// Node names for a message, the first few of many.
fn node_list(nodes: &[String]) -> String {
    let shown = nodes[..nodes.len().min(8)].join(", ");
    match nodes.len().saturating_sub(8) {
        0 => shown,
        more => format!("{shown}, and {more} more"),
    }
}

fn err(msg: String) -> SimError {
    SimError(msg)
}

/// `at: must be in lo..=hi, got v`: the one form every integer bound takes.
fn in_range(at: &str, v: u64, lo: u64, hi: u64) -> Result<(), SimError> {
    if v < lo || v > hi {
        Err(err(format!("{at}: must be in {lo}..={hi}, got {v}")))
    } else {
        Ok(())
    }
}

// Every integer setting's maximum. With these, sums of times (now + a delay, an RTO, a
// duration) stay far below u64::MAX, so the engine's arithmetic on them cannot wrap.
/// Longest run: 10^9 s (about 32 years).
pub const MAX_DURATION_NS: u64 = 1_000_000_000 * 1_000_000_000;
/// Longest propagation delay, jitter, timer or sampling interval: one hour (as long as the
/// longest RTO, `slowstart_transport::settings::MAX_RTO_NS`).
pub const MAX_DELAY_NS: u64 = 3_600 * 1_000_000_000;
/// Fastest link: 10 Tbps.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;

/// Largest scenario or sweep plan file the loader reads (the 60 000-node scenario of issue #31
/// is 529 kB), and largest capacity trace (Mahimahi's: a line per 1500-byte opportunity).
pub const MAX_SCENARIO_FILE_BYTES: u64 = 16 << 20;
pub const MAX_TRACE_FILE_BYTES: u64 = 256 << 20;
/// Most points (runs) one sweep may have, checked before its grid is built.
pub const MAX_SWEEP_POINTS: u64 = 10_000_000;

/// Most (nodes + links) x route destinations: the routes' table and the work to fill it
/// (2^26: 256 MB of next hops, well under a second of searching).
pub const MAX_ROUTE_TABLE: u64 = 1 << 26;

impl SimConfig {
    /// Parse a canonical config; an error names the field as [`SimConfig::validate`] does
    /// (`flow.0.recovery: expected one of prr, rfc6675, got "fast"`), else `config`.
    pub fn from_json(text: &str) -> Result<Self, SimError> {
        let mut de = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let (field, inner) = (field_name(e.path()), e.inner());
            let text = inner.to_string();
            if field.is_empty() {
                return err(format!("config: {text}"));
            }
            // The field says where; serde_json's position only repeats it.
            let at = format!(" at line {} column {}", inner.line(), inner.column());
            err(format!(
                "{field}: {}",
                text.strip_suffix(&at).unwrap_or(&text)
            ))
        })
    }

    /// Check every value the engine relies on; the message names the field.
    pub fn validate(&self) -> Result<(), SimError> {
        in_range("duration", self.duration_ns, 1, MAX_DURATION_NS)?;
        let t = &self.trace;
        t.validate()?;
        if let Some(swarm) = &self.swarm {
            if !self.nodes.is_empty()
                || !self.links.is_empty()
                || !self.flows.is_empty()
                || !self.cross.is_empty()
            {
                return Err(err(
                    "swarm: a swarm builds its own peers and links; give no path, nodes, link, \
                     flow or cross"
                        .into(),
                ));
            }
            return swarm.validate(self.duration_ns, t.max_rows);
        }
        if self.nodes.is_empty() {
            return Err(err("nodes: at least two nodes are needed".into()));
        }
        let mut names = std::collections::HashSet::with_capacity(self.nodes.len());
        for n in &self.nodes {
            if !names.insert(n.as_str()) {
                return Err(err(format!("nodes: '{n}' is listed twice")));
            }
        }
        let known = |n: &str| names.contains(n);
        // Flows first: a link's buffer is checked against the largest packet they send.
        if self.flows.is_empty() {
            return Err(err("flow: at least one [[flow]] is needed".into()));
        }
        for (i, f) in self.flows.iter().enumerate() {
            f.validate(i, &known, self.duration_ns)?;
        }
        // A queue must take the largest packet a flow sends, or nothing ever passes.
        let largest = self
            .flows
            .iter()
            .map(|f| f.mss.saturating_add(f.header_bytes))
            .chain(self.cross.iter().map(|c| c.packet_bytes))
            .max()
            .unwrap_or(1);
        for (i, l) in self.links.iter().enumerate() {
            for (end, name) in [("a", &l.a), ("b", &l.b)] {
                if !known(name) {
                    return Err(err(format!(
                        "links.{i}.{end}: unknown node '{name}' (nodes: {})",
                        node_list(&self.nodes)
                    )));
                }
            }
            if l.a == l.b {
                return Err(err(format!("links.{i}: a link needs two different nodes")));
            }
            // A direction's messages name its canonical fields; the loader names them as the
            // scenario wrote them, through the keys that fill them (keys.rs).
            for (dir, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
                d.validate(&format!("links.{i}.{dir}"), largest, self.flows.len())?;
            }
        }
        let mut cross_packets: u128 = 0;
        for (i, c) in self.cross.iter().enumerate() {
            c.validate(i, &self.nodes, &names, self.duration_ns)?;
            cross_packets += self.check_cross_work(i, c)?;
        }
        // Each source is in bounds; so must all of them be (issue #31: many sources).
        if cross_packets > MAX_CROSS_PACKETS as u128 {
            return Err(err(format!(
                "cross: the {} sources send about {cross_packets} packets in the run together, \
                 more than {MAX_CROSS_PACKETS}; use fewer or slower sources, larger packets, \
                 or stop them sooner",
                self.cross.len()
            )));
        }
        self.check_route_table()
    }

    /// Routes are a table of next hops, one column per node a packet is addressed to (flow
    /// ends, cross sinks), found by a search over every node and link per column
    /// (`network::topology`): refused before it is built when that work is out of bounds.
    fn check_route_table(&self) -> Result<(), SimError> {
        let ends = self.flows.iter().flat_map(|f| [&f.src, &f.dst]);
        let dests: std::collections::HashSet<&String> =
            ends.chain(self.cross.iter().map(|c| &c.dst)).collect();
        let size = (self.nodes.len() as u64 + self.links.len() as u64) * dests.len() as u64;
        if size > MAX_ROUTE_TABLE {
            return Err(err(format!(
                "nodes: routes over {} nodes and {} links to {} destinations (flow ends and \
                 cross sinks) are {size} entries to compute, at most {MAX_ROUTE_TABLE}; use \
                 fewer nodes, links or flows",
                self.nodes.len(),
                self.links.len(),
                dests.len()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_choice_names_its_field_and_every_accepted_word() {
        let flows = vec![crate::testing::flow("reno", Some(1))];
        let cfg =
            crate::testing::path(1_000_000, 1_000_000, QueueLimit::Packets(10), flows, vec![]);
        let mut good = serde_json::to_value(cfg).unwrap();
        let parse = |v: &serde_json::Value| SimConfig::from_json(&v.to_string()).map(|_| ());
        parse(&good).unwrap();
        let flow = &mut good["flows"][0];
        flow["recovery"] = "fast".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.recovery: expected one of prr, rfc6675, got "fast""#
        );
        good["flows"][0]["recovery"] = "prr".into();
        good["flows"][0]["loss_detection"] = 3.into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            "flow.0.loss_detection: expected one of rack, dupthresh, got 3"
        );
        good["flows"][0]["loss_detection"] = "rack".into();
        good["flows"][0]["cwnd_limited"] = "loose".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.cwnd_limited: expected one of linux, strict, got "loose""#
        );
        good["flows"][0]["cwnd_limited"] = "strict".into();
        good["flows"][0]["ecn_reduction"] = "gradual".into();
        assert_eq!(
            parse(&good).unwrap_err().0,
            r#"flow.0.ecn_reduction: expected one of immediate, prr, got "gradual""#
        );
        good["flows"][0]["ecn_reduction"] = "immediate".into();
        good["flows"][0]["min_rto_ns"] = "soon".into();
        assert!(parse(&good)
            .unwrap_err()
            .0
            .starts_with("flow.0.min_rto: invalid type"));
        good["flows"][0]["min_rto_ns"] = 1_000_000.into();
        good["flows"][0]["app"] =
            serde_json::json!({"kind": "web", "request_bytes": -1, "response_bytes": [1]});
        // An internally tagged enum is read whole, so the path stops at the app's table.
        let e = parse(&good).unwrap_err().0;
        assert!(e.starts_with("app.0: invalid value: integer `-1`"), "{e}");

        let swarm = |key: &str, word: &str| {
            let text = format!(
                r#"{{"name": "s", "duration_ns": 1, "nodes": [], "links": [], "flows": [],
                    "swarm": {{"{key}": "{word}"}}}}"#
            );
            SimConfig::from_json(&text).map(|c| c.swarm.unwrap())
        };
        assert_eq!(
            swarm("population", "50-50").unwrap().population,
            Population::Mixed
        );
        assert_eq!(
            swarm("seeding", "never-leave").unwrap().seeding,
            Seeding::NeverLeave
        );
        assert_eq!(
            swarm("population", "quic").unwrap_err().0,
            r#"swarm.population: expected one of tcp, utp, 50-50, mixed, got "quic""#
        );
        assert_eq!(
            swarm("seeding", "forever").unwrap_err().0,
            "swarm.seeding: expected one of never-leave, random-stay, never_leave, \
             random_stay, got \"forever\""
        );
        // Not a field's fault: the position says where.
        assert!(SimConfig::from_json("{")
            .unwrap_err()
            .0
            .starts_with("config: EOF"));
    }
}
