//! A controller's state over a connection, for `slowstart real --stack quinn`'s cwnd trace.

use std::sync::{Arc, Mutex};

use slowstart_cc::{Nanos, Phase};
use slowstart_config::trace::FlowRow;

/// A list shared between the connection's controller and whoever reads it afterwards.
#[derive(Debug)]
pub struct Sink<T>(Arc<Mutex<Vec<T>>>);

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Sink(self.0.clone())
    }
}

impl<T> Default for Sink<T> {
    fn default() -> Self {
        Sink(Arc::default())
    }
}

impl<T> Sink<T> {
    /// Appends `item`.
    pub fn push(&self, item: T) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(item);
    }

    /// Everything pushed so far, leaving the sink empty.
    pub fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The controller after an ACK frame or a congestion event (t_ns from the connection's start):
/// a row of the simulator's flow trace ([`TraceRow::flow_row`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRow {
    /// When, in ns from the connection's start.
    pub t_ns: Nanos,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// `u64::MAX` when unset.
    pub ssthresh: u64,
    /// Bytes in flight.
    pub in_flight: u64,
    /// Smoothed RTT in ns.
    pub srtt_ns: Nanos,
    /// Bytes acknowledged so far.
    pub delivered: u64,
    /// The phase's name ([`Phase::name`]).
    pub phase: &'static str,
}

impl TraceRow {
    /// As a row of the simulator's flow trace (`slowstart_config::trace`), of flow `flow`; a
    /// phase the core does not name is code `u8::MAX` (written `unknown`).
    pub fn flow_row(&self, flow: u32) -> FlowRow {
        let phase = Phase::ALL.iter().position(|p| p.name() == self.phase);
        FlowRow {
            t_ns: self.t_ns,
            flow,
            cwnd_bytes: self.cwnd,
            ssthresh_bytes: self.ssthresh,
            inflight_bytes: self.in_flight,
            srtt_ns: self.srtt_ns,
            delivered_bytes: self.delivered,
            phase: phase.map_or(u8::MAX, |i| i as u8),
        }
    }
}

/// The first record of `--qlog`: a qlog 0.3 JSON-SEQ trace (draft-ietf-quic-qlog-main-schema,
/// as ngtcp2 writes it) from the client's vantage point, its times in ms from the connection's
/// start (the `t_ns` origin of [`TraceRow`]).
pub fn qlog_header() -> String {
    let head = serde_json::json!({
        "qlog_version": "0.3",
        "qlog_format": "JSON-SEQ",
        "title": "slowstart-quinn client",
        "trace": {
            "vantage_point": {"type": "client"},
            "common_fields": {"time_format": "relative", "reference_time": 0},
        },
    });
    format!("\u{1e}{head}\n")
}

impl TraceRow {
    /// The row as qlog events (draft-ietf-quic-qlog-quic-events): `recovery:metrics_updated`
    /// with the window, bytes in flight and smoothed RTT (quinn's, in datagram bytes), and
    /// `recovery:congestion_state_updated` when the phase is not `previous`'s.
    pub fn qlog(&self, previous: Option<&TraceRow>) -> String {
        let time = self.t_ns as f64 / 1e6;
        let mut data = serde_json::json!({
            "congestion_window": self.cwnd,
            "bytes_in_flight": self.in_flight,
            "smoothed_rtt": self.srtt_ns as f64 / 1e6,
        });
        if self.ssthresh != u64::MAX {
            data["ssthresh"] = self.ssthresh.into();
        }
        let metrics = serde_json::json!({
            "time": time, "name": "recovery:metrics_updated", "data": data,
        });
        let mut out = format!("\u{1e}{metrics}\n");
        if previous.is_none_or(|p| p.phase != self.phase) {
            let state = serde_json::json!({
                "time": time,
                "name": "recovery:congestion_state_updated",
                "data": {"old": previous.map(|p| p.phase), "new": self.phase},
            });
            out.push_str(&format!("\u{1e}{state}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<serde_json::Value> {
        let chunks = text.split('\u{1e}').filter(|c| !c.trim().is_empty());
        chunks.map(|c| serde_json::from_str(c).unwrap()).collect()
    }

    #[test]
    fn a_row_of_the_simulators_flow_trace() {
        let mut r = TraceRow {
            t_ns: 5,
            cwnd: 12_000,
            ssthresh: u64::MAX,
            in_flight: 1200,
            srtt_ns: 100,
            delivered: 2400,
            phase: "recovery",
        };
        let f = r.flow_row(3);
        assert_eq!((f.t_ns, f.flow, f.cwnd_bytes), (5, 3, 12_000));
        assert_eq!((f.ssthresh_bytes, f.inflight_bytes), (u64::MAX, 1200));
        assert_eq!((f.srtt_ns, f.delivered_bytes), (100, 2400));
        assert_eq!(Phase::ALL[f.phase as usize], Phase::Recovery);
        r.phase = "warp";
        assert_eq!(r.flow_row(0).phase, u8::MAX);
    }

    #[test]
    fn qlog_records_are_json_seq_metrics_and_state_changes() {
        let row = |t_ns, cwnd, phase| TraceRow {
            t_ns,
            cwnd,
            ssthresh: u64::MAX,
            in_flight: 14_720,
            srtt_ns: 100_500_000,
            delivered: 0,
            phase,
        };
        let (a, b) = (
            row(1_500_000, 14_720, "slow_start"),
            row(2_000_000, 16_192, "slow_start"),
        );
        let head = records(&qlog_header());
        assert_eq!(head[0]["trace"]["vantage_point"]["type"], "client");
        let first = records(&a.qlog(None));
        assert_eq!(first.len(), 2);
        assert_eq!(first[0]["name"], "recovery:metrics_updated");
        assert_eq!(first[0]["time"], 1.5);
        assert_eq!(first[0]["data"]["congestion_window"], 14_720);
        assert_eq!(first[0]["data"]["smoothed_rtt"], 100.5);
        assert!(first[0]["data"].get("ssthresh").is_none());
        assert_eq!(first[1]["data"]["new"], "slow_start");
        // The same phase again: metrics only.
        assert_eq!(records(&b.qlog(Some(&a))).len(), 1);
    }
}
