//! qlog files (`--qlog DIR`): one per flow, from the data sender's side, in the JSON-SEQ
//! serialization of draft-ietf-quic-qlog-main-schema-04 §6.2 (qlog_version "0.3", file
//! extension `.sqlog`): each record is RFC 7464's record separator 0x1E, one JSON object and a
//! line feed; the first record is the header, every later one an event. Events and their fields
//! are draft-ietf-quic-qlog-quic-events-03's, as qvis reads them:
//!
//! - `transport:packet_sent` (§5.5) for every segment the sender sends (SYN: an "initial"
//!   packet; data: "1RTT" with one stream frame at the segment's byte offset);
//! - `transport:packet_received` (§5.6) for every ACK it receives, with an ack frame listing
//!   the packets its cumulative acknowledgment newly covers;
//! - `recovery:metrics_updated` (§7.2) with the values that changed: congestion_window,
//!   bytes_in_flight, ssthresh, pacing_rate, smoothed_rtt, min_rtt, latest_rtt, rtt_variance;
//! - `recovery:congestion_state_updated` (§7.3) when the controller's phase changes;
//! - `recovery:packet_lost` (§7.5) for every segment found lost, with the rule that found it.
//!
//! TCP has no packet numbers: each transmission gets the next number, as in QUIC, so a
//! retransmission is a new packet carrying old bytes. Only the packets in flight are kept
//! (byte offset to packet number), so memory stays bounded by the window.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use slowstart_cc::Phase;
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::{Loss, LossTrigger, Sender};
use slowstart_transport::{Observer, SenderEvent};

use super::{make_dir, pcap::file_stem};
use crate::SimError;

/// RFC 7464 §2.2: every JSON text is preceded by the record separator.
const RS: u8 = 0x1e;

/// What metrics_updated reported last, so the next one carries only changes.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Metrics {
    cwnd: u64,
    in_flight: u64,
    ssthresh: u64,
    pacing_bps: u64,
    srtt: u64,
    min_rtt: u64,
    latest_rtt: u64,
    rttvar: u64,
}

struct FlowLog {
    path: PathBuf,
    out: BufWriter<File>,
    /// Packet numbers of the next packet sent and received.
    next_sent: u64,
    next_received: u64,
    /// Data in flight: first byte of a segment to the packet number of its latest transmission.
    in_flight: BTreeMap<u64, u64>,
    last: Option<Metrics>,
    phase: Option<Phase>,
    ecn_reductions: u64,
    rto_count: u64,
    error: Option<String>,
}

/// The qlog files of a run, one per flow.
pub(crate) struct Qlogs {
    flows: Vec<FlowLog>,
    line: String,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A JSON string literal of `s` (names and titles: quotes, backslashes, control characters).
fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl Qlogs {
    pub fn new(dir: &Path, scenario: &str, seed: u64, ccs: &[String]) -> Result<Self, SimError> {
        make_dir(dir, "qlog")?;
        let mut flows = Vec::with_capacity(ccs.len());
        for (i, cc) in ccs.iter().enumerate() {
            let path = dir.join(format!("{}-flow{i}.sqlog", file_stem(scenario)));
            let file = File::create(&path)
                .map_err(|e| SimError(format!("qlog: cannot create {}: {e}", path.display())))?;
            let mut log = FlowLog {
                path,
                out: BufWriter::with_capacity(1 << 16, file),
                next_sent: 0,
                next_received: 0,
                in_flight: BTreeMap::new(),
                last: None,
                phase: None,
                ecn_reductions: 0,
                rto_count: 0,
                error: None,
            };
            // main-schema-04 §6.2: QlogFileSeq, then one trace's events; times in ms relative
            // to the run's start (common_fields, §5.2.2).
            let title = json_str(&format!("{scenario} flow {i} ({cc}), seed {seed}"));
            let header = format!(
                "{{\"qlog_version\":\"0.3\",\"qlog_format\":\"JSON-SEQ\",\"title\":{title},\
                 \"description\":\"slowstart simulation; TCP seen as qlog's QUIC recovery events\",\
                 \"trace\":{{\"title\":{title},\"vantage_point\":{{\"name\":\"sender\",\"type\":\"client\"}},\
                 \"common_fields\":{{\"protocol_type\":[\"QUIC\"],\"time_format\":\"relative\",\
                 \"reference_time\":0,\"group_id\":\"flow{i}\"}}}}}}"
            );
            log.record(&header);
            flows.push(log);
        }
        Ok(Qlogs {
            flows,
            line: String::with_capacity(256),
        })
    }

    /// Flow `f`'s file, as the flow's [`Observer`].
    #[inline]
    pub fn flow(&mut self, f: usize) -> QlogFlow<'_> {
        QlogFlow { qlogs: self, f }
    }

    /// Flow `f` opened a new connection: its byte offsets start again at 0.
    fn on_reconnect(&mut self, f: usize) {
        self.flows[f].in_flight.clear();
    }

    /// The sender of flow `f` sent `p` at `now`.
    fn on_sent(&mut self, f: usize, now: u64, p: &Packet) {
        let log = &mut self.flows[f];
        let line = &mut self.line;
        line.clear();
        let pn = log.next_sent;
        let frames = match p.kind {
            Kind::Syn => {
                write_event_start(line, now, "transport:packet_sent");
                line.push_str(&format!(
                    "{{\"header\":{{\"packet_type\":\"initial\",\"packet_number\":{pn}}},\
                     \"raw\":{{\"length\":{}}},\"frames\":[]}}}}",
                    p.wire_bytes
                ));
                None
            }
            Kind::Data => {
                log.in_flight.insert(p.seq, pn);
                write_event_start(line, now, "transport:packet_sent");
                Some(format!(
                    "{{\"header\":{{\"packet_type\":\"1RTT\",\"packet_number\":{pn}}},\
                     \"raw\":{{\"length\":{},\"payload_length\":{}}},\
                     \"frames\":[{{\"frame_type\":\"stream\",\"stream_id\":0,\"offset\":{},\"length\":{}}}]}}}}",
                    p.wire_bytes, p.len, p.seq, p.len
                ))
            }
            _ => return,
        };
        if let Some(frames) = frames {
            line.push_str(&frames);
        }
        log.next_sent += 1;
        let line = std::mem::take(&mut self.line);
        self.flows[f].record(&line);
        self.line = line;
    }

    /// The sender of flow `f` received `p` (an ACK or SYN-ACK) at `now`.
    fn on_received(&mut self, f: usize, now: u64, p: &Packet) {
        let log = &mut self.flows[f];
        let pn = log.next_received;
        log.next_received += 1;
        let line = &mut self.line;
        line.clear();
        write_event_start(line, now, "transport:packet_received");
        if p.kind == Kind::SynAck {
            line.push_str(&format!(
                "{{\"header\":{{\"packet_type\":\"initial\",\"packet_number\":{pn}}},\
                 \"raw\":{{\"length\":{}}},\"frames\":[]}}}}",
                p.wire_bytes
            ));
        } else {
            // The packets the cumulative ACK newly covers, as ranges of packet numbers.
            let kept = log.in_flight.split_off(&p.seq);
            let acked = std::mem::replace(&mut log.in_flight, kept);
            let mut pns: Vec<u64> = acked.into_values().collect();
            pns.sort_unstable();
            line.push_str(&format!(
                "{{\"header\":{{\"packet_type\":\"1RTT\",\"packet_number\":{pn}}},\
                 \"raw\":{{\"length\":{}}},\"frames\":[{{\"frame_type\":\"ack\"",
                p.wire_bytes
            ));
            if !pns.is_empty() {
                line.push_str(",\"acked_ranges\":[");
                let mut i = 0;
                while i < pns.len() {
                    let mut j = i;
                    while j + 1 < pns.len() && pns[j + 1] == pns[j] + 1 {
                        j += 1;
                    }
                    if i > 0 {
                        line.push(',');
                    }
                    if i == j {
                        line.push_str(&format!("[{}]", pns[i]));
                    } else {
                        line.push_str(&format!("[{},{}]", pns[i], pns[j]));
                    }
                    i = j + 1;
                }
                line.push(']');
            }
            line.push_str("}]}}");
        }
        let line = std::mem::take(&mut self.line);
        self.flows[f].record(&line);
        self.line = line;
    }

    /// After the sender of flow `f` handled an event at `now` (and what it found lost was
    /// written): its congestion state and its metrics, each when it changed since this file
    /// last said (across the flow's connections).
    fn after_sender_event(&mut self, f: usize, now: u64, s: &Sender) {
        let phase = s.phase();
        let stats = s.stats();
        let log = &mut self.flows[f];
        let (ecn, rto) = (stats.ecn_reductions, stats.rto_count);
        if log.phase != Some(phase) {
            let line = &mut self.line;
            line.clear();
            write_event_start(line, now, "recovery:congestion_state_updated");
            line.push('{');
            if let Some(old) = log.phase {
                line.push_str(&format!("\"old\":\"{}\",", old.name()));
            }
            line.push_str(&format!("\"new\":\"{}\"", phase.name()));
            // quic-events-03 §7.3 names two triggers: an ECN echo, and persistent congestion,
            // which RFC 9002 §7.6 likens to TCP's retransmission timeout.
            if ecn > log.ecn_reductions {
                line.push_str(",\"trigger\":\"ECN\"");
            } else if rto > log.rto_count {
                line.push_str(",\"trigger\":\"persistent_congestion\"");
            }
            line.push_str("}}");
            log.phase = Some(phase);
            let line = std::mem::take(&mut self.line);
            self.flows[f].record(&line);
            self.line = line;
        }
        let log = &mut self.flows[f];
        log.ecn_reductions = ecn;
        log.rto_count = rto;
        let rtt = s.rtt();
        let m = Metrics {
            cwnd: s.cwnd(),
            in_flight: s.pipe(),
            ssthresh: s.ssthresh(),
            pacing_bps: s.pacing_rate().map_or(0, |r| r.saturating_mul(8)),
            srtt: rtt.srtt(),
            min_rtt: rtt.min_rtt(),
            latest_rtt: rtt.latest(),
            rttvar: rtt.rttvar(),
        };
        if log.last == Some(m) {
            return;
        }
        let before = log.last;
        log.last = Some(m);
        let line = &mut self.line;
        line.clear();
        write_event_start(line, now, "recovery:metrics_updated");
        let mut fields: Vec<String> = Vec::with_capacity(8);
        let changed = |get: fn(&Metrics) -> u64| before.is_none_or(|b| get(&b) != get(&m));
        if changed(|m| m.cwnd) {
            fields.push(format!("\"congestion_window\":{}", m.cwnd));
        }
        if changed(|m| m.in_flight) {
            fields.push(format!("\"bytes_in_flight\":{}", m.in_flight));
        }
        // No ssthresh before the first reduction (u64::MAX), no pacing without a rate.
        if changed(|m| m.ssthresh) && m.ssthresh != u64::MAX {
            fields.push(format!("\"ssthresh\":{}", m.ssthresh));
        }
        if changed(|m| m.pacing_bps) && m.pacing_bps > 0 {
            fields.push(format!("\"pacing_rate\":{}", m.pacing_bps));
        }
        if rtt.has_sample() {
            for (name, get) in [
                (
                    "smoothed_rtt",
                    (|m: &Metrics| m.srtt) as fn(&Metrics) -> u64,
                ),
                ("min_rtt", |m| m.min_rtt),
                ("latest_rtt", |m| m.latest_rtt),
                ("rtt_variance", |m| m.rttvar),
            ] {
                if changed(get) {
                    fields.push(format!("\"{name}\":{}", ms(get(&m))));
                }
            }
        }
        if fields.is_empty() {
            return;
        }
        line.push('{');
        line.push_str(&fields.join(","));
        line.push_str("}}");
        let line = std::mem::take(&mut self.line);
        self.flows[f].record(&line);
        self.line = line;
    }

    fn packet_lost(&mut self, f: usize, now: u64, loss: &Loss) {
        let log = &mut self.flows[f];
        let line = &mut self.line;
        line.clear();
        write_event_start(line, now, "recovery:packet_lost");
        let trigger = match loss.trigger {
            LossTrigger::ReorderingThreshold => "reordering_threshold",
            LossTrigger::TimeThreshold => "time_threshold",
            LossTrigger::Timeout => "pto_expired",
        };
        line.push_str("{\"header\":{\"packet_type\":\"1RTT\"");
        if let Some(pn) = log.in_flight.get(&loss.seq) {
            line.push_str(&format!(",\"packet_number\":{pn}"));
        }
        line.push_str(&format!(
            "}},\"frames\":[{{\"frame_type\":\"stream\",\"stream_id\":0,\"offset\":{},\"length\":{}}}],\
             \"trigger\":\"{trigger}\"}}}}",
            loss.seq, loss.len
        ));
        let line = std::mem::take(&mut self.line);
        self.flows[f].record(&line);
        self.line = line;
    }

    pub fn finish(self) -> Result<(), String> {
        for mut log in self.flows {
            if let Some(e) = log.error {
                return Err(e);
            }
            log.out
                .flush()
                .map_err(|e| format!("qlog: cannot write {}: {e}", log.path.display()))?;
        }
        Ok(())
    }
}

/// One flow's qlog file, told what its sender did ([`Qlogs::flow`]).
pub(crate) struct QlogFlow<'a> {
    qlogs: &'a mut Qlogs,
    f: usize,
}

impl Observer for QlogFlow<'_> {
    fn on_sender_event(&mut self, now: u64, _: SenderEvent, sender: &Sender) {
        self.qlogs.after_sender_event(self.f, now, sender);
    }

    fn on_packet_lost(&mut self, now: u64, loss: &Loss) {
        self.qlogs.packet_lost(self.f, now, loss);
    }

    fn on_packet_sent(&mut self, now: u64, packet: &Packet) {
        self.qlogs.on_sent(self.f, now, packet);
    }

    /// An ACK or SYN-ACK.
    fn on_packet_received(&mut self, now: u64, packet: &Packet) {
        self.qlogs.on_received(self.f, now, packet);
    }

    fn on_replaced(&mut self, _: u64, _: &Sender) {
        self.qlogs.on_reconnect(self.f);
    }
}

/// `{"time":…,"name":…,"data":` — the caller writes the data object and the closing brace.
fn write_event_start(line: &mut String, now: u64, name: &str) {
    line.push_str(&format!(
        "{{\"time\":{},\"name\":\"{name}\",\"data\":",
        ms(now)
    ));
}

impl FlowLog {
    fn record(&mut self, json: &str) {
        if self.error.is_some() {
            return;
        }
        let written = self
            .out
            .write_all(&[RS])
            .and_then(|()| self.out.write_all(json.as_bytes()))
            .and_then(|()| self.out.write_all(b"\n"));
        if let Err(e) = written {
            self.error = Some(format!("qlog: cannot write {}: {e}", self.path.display()));
        }
    }
}
