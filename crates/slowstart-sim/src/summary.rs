//! What a run reports: the summary (its flows, links, applications, cross traffic and, for a
//! swarm, its peers: the [`RunKind`]), the sampled series beside it, and the names both are
//! written under ([`schema_json`]). The flows' simulation ([`crate::sim`]) and the swarm
//! ([`crate::swarm`]) both fill it; neither imports the other.

use serde::Serialize;

use slowstart_apps::AppSummary;
// A swarm's peers report what the peer wire kept of them.
pub use slowstart_apps::swarm::PeerSummary;
use slowstart_cc::Phase;
use slowstart_config::trace::{AppTrace, FlowTrace, QueueTrace};
use slowstart_config::{Population, Seeding};
use slowstart_link::cross::CrossSummary;
use slowstart_link::summary::LinkSummary;

/// The outcome of a run: the summary and the sampled series.
pub struct RunOutput {
    pub summary: Summary,
    pub flows: FlowTrace,
    pub queues: QueueTrace,
    pub apps: AppTrace,
    /// Writing a capture or qlog file failed (the run itself went on to its end).
    pub export_error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_s: f64,
    pub events: u64,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Per flow with a web or BitTorrent application.
    pub apps: Vec<AppSummary>,
    /// Per cross-traffic source (`[[cross]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cross: Vec<CrossSummary>,
    /// What the run was of; a swarm's `peers` and `swarm` are written here, between `cross`
    /// and `interrupted`, as they always were.
    #[serde(flatten)]
    pub kind: RunKind,
    /// The run was stopped before its end (Ctrl-C, or a user's controller faulted); what it
    /// holds is up to `sim_time_s`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// What a user's controller did wrong, when that stopped the run (`slowstart_cc::external`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// What a run was of: flows (their rows are [`Summary::flows`]) or a BitTorrent swarm, whose
/// peers and totals only a swarm has. Written without a tag: a swarm's summary holds `peers`
/// (when it has any) and `swarm`, a run of flows neither.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum RunKind {
    Flows,
    Swarm {
        /// One row per peer.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        peers: Vec<PeerSummary>,
        swarm: SwarmSummary,
    },
}

impl RunKind {
    /// The kind's name, as the binding hands it to Python (`slowstart.running.result.RunKind`).
    pub fn name(&self) -> &'static str {
        match self {
            RunKind::Flows => "flows",
            RunKind::Swarm { .. } => "swarm",
        }
    }
}

impl Summary {
    /// A swarm run's totals; None for a run of flows.
    pub fn swarm(&self) -> Option<&SwarmSummary> {
        match &self.kind {
            RunKind::Swarm { swarm, .. } => Some(swarm),
            RunKind::Flows => None,
        }
    }

    /// A swarm run's peers, one row each; none for a run of flows.
    pub fn peers(&self) -> &[PeerSummary] {
        match &self.kind {
            RunKind::Swarm { peers, .. } => peers,
            RunKind::Flows => &[],
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    pub id: u32,
    pub cc: String,
    pub size_bytes: Option<u64>,
    pub bytes_delivered: u64,
    pub completion_s: Option<f64>,
    pub goodput_bps: f64,
    pub slow_start_exit_s: Option<f64>,
    pub time_to_full_bw_s: Option<f64>,
    pub time_to_window_cap_s: Option<f64>,
    pub retransmits: u64,
    /// Duplicate ACKs the receiver sent (see `Receiver::dup_acks`).
    pub dup_acks: u64,
    pub loss_events: u64,
    pub rto_count: u64,
    pub lost_retransmissions: u64,
    pub loss_probes: u64,
    pub max_cwnd_bytes: u64,
    pub data_packets_sent: u64,
    pub data_bytes_sent: u64,
    pub drops: u64,
    pub slow_start_drops: u64,
    pub base_rtt_s: f64,
    pub bottleneck_bps: u64,
    /// Round trips that ended with the sender waiting on a window (see `Sender::stats`).
    pub stalls: u64,
    /// ECN flows: window reductions on ECN echoes (RFC 3168 §6.1.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn_reductions: Option<u64>,
}

/// The names a run reports under, as JSON, for results measured elsewhere (`slowstart real`)
/// to be reported alike and for field names to be checked before a run (`sweep --metric`):
/// `flow` and `link`, an empty summary row of each (every key in order, fields written only
/// when they apply included; a string value marks a text field), and `flows` and `queues`,
/// the trace tables' column names in order (`*_ns` columns are times in nanoseconds), and
/// `initial_phases`, the phases a flow's `slow_start_exit_s` ends
/// ([`Phase::is_initial_slow_start`]).
pub fn schema_json() -> String {
    let names = |names: &[&str]| serde_json::to_string(names).expect("names serialize");
    let initial: Vec<&str> = Phase::ALL
        .iter()
        .filter(|p| p.is_initial_slow_start())
        .map(|p| p.name())
        .collect();
    // Struct fields serialize in declaration order; a `serde_json::Value` would sort them.
    format!(
        r#"{{"flow": {}, "link": {}, "flows": {}, "queues": {}, "initial_phases": {}}}"#,
        serde_json::to_string(&FlowSummary {
            ecn_reductions: Some(0),
            ..FlowSummary::default()
        })
        .expect("a summary serializes"),
        serde_json::to_string(&LinkSummary {
            queue: Some(""),
            marks: Some(0),
            ..LinkSummary::default()
        })
        .expect("a summary serializes"),
        names(FlowTrace::NAMES),
        names(QueueTrace::NAMES),
        names(&initial),
    )
}

pub(crate) fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Data-transport counters summed over every connection, per uploader transport.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TransportTotals {
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    /// Data packets dropped at a full queue.
    pub drops: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SwarmSummary {
    pub population: Population,
    pub seeding: Seeding,
    pub file_bytes: u64,
    pub pieces: u32,
    pub blocks_per_piece: u32,
    pub peers_joined: u64,
    pub completions: u64,
    pub connections_opened: u64,
    /// The run ended at `stop_after_completions`, not at its duration.
    pub stopped_at_completions: bool,
    /// Packets that arrived for a connection already closed.
    pub stale_packets: u64,
    pub tcp: TransportTotals,
    pub utp: TransportTotals,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(kind: RunKind) -> Summary {
        Summary {
            scenario: "s".into(),
            seed: 1,
            sim_time_s: 0.0,
            events: 0,
            flows: vec![],
            links: vec![],
            apps: vec![],
            cross: vec![],
            kind,
            interrupted: true,
            fault: None,
        }
    }

    /// The kind is written without a tag, where a swarm's fields always were: a run of flows
    /// has neither `peers` nor `swarm`, a swarm `swarm` (and `peers` when it has any) between
    /// `apps` and `interrupted` (bench/digest.py hashes this JSON).
    #[test]
    fn the_kind_is_written_in_place_without_a_tag() {
        let flows = serde_json::to_string(&summary(RunKind::Flows)).unwrap();
        assert_eq!(
            flows,
            r#"{"scenario":"s","seed":1,"sim_time_s":0.0,"events":0,"flows":[],"links":[],"apps":[],"interrupted":true}"#
        );
        let totals = TransportTotals::default();
        let swarm = SwarmSummary {
            population: Population::Mixed,
            seeding: Seeding::NeverLeave,
            file_bytes: 1,
            pieces: 1,
            blocks_per_piece: 1,
            peers_joined: 0,
            completions: 0,
            connections_opened: 0,
            stopped_at_completions: false,
            stale_packets: 0,
            tcp: totals.clone(),
            utp: totals,
        };
        let s = summary(RunKind::Swarm {
            peers: vec![],
            swarm,
        });
        assert_eq!(s.kind.name(), "swarm");
        assert!(s.peers().is_empty() && s.swarm().is_some());
        let text = serde_json::to_string(&s).unwrap();
        assert!(
            text.starts_with(r#"{"scenario":"s","seed":1,"sim_time_s":0.0,"events":0,"flows":[],"links":[],"apps":[],"swarm":{"population":"#),
            "{text}"
        );
        assert!(text.ends_with(r#""interrupted":true}"#), "{text}");
    }
}
