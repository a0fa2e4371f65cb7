//! What a swarm run reports: what tests inspect of a half-connection, and the run's summary.

use super::*;
use crate::summary::{seconds, RunKind, Summary, SwarmSummary};
use slowstart_config::trace::{AppTrace, FlowTrace};
use slowstart_link::summary::LinkSummary;

impl<Q: Queue<Event<SwarmEvent>>> SwarmSim<Q> {
    /// Half `h`'s bytes written and not yet sent, and below how many its uploader writes the
    /// next requested block, while the connection is open.
    pub fn send_buffer(&self, h: u32) -> Option<(u64, u64)> {
        let half = &self.net.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        Some((
            half.conn.src.sender.unsent_bytes(),
            half.wire.unsent_limit(&self.app.config().bittorrent),
        ))
    }

    /// Connection `c`'s downloads at each end ([`Swarm::requests`]).
    pub fn requests(&self, c: u32) -> Option<[(usize, usize, u64); 2]> {
        self.app.requests(c)
    }

    /// Data payload bytes of half `h`: (sent, received, dropped, held in channels), while the
    /// connection is open. Every byte sent is received, dropped or still in a channel.
    pub fn byte_ledger(&self, h: u32) -> Option<(u64, u64, u64, u64)> {
        let half = &self.net.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        let held = self.net.channels.iter().map(|c| c.held_data_bytes(h)).sum();
        Some((
            half.conn.src.sender.stats().data_bytes_sent,
            half.conn.dst.receiver.data_bytes_received(),
            half.dropped_data_bytes,
            held,
        ))
    }

    pub fn finish(mut self, end_ns: u64) -> RunOutput {
        for (c, halves) in self.net.halves.iter().enumerate() {
            if let Some(halves) = halves {
                for (i, half) in halves.iter().enumerate() {
                    let t = self.app.half_transport(2 * c as u32 + i as u32);
                    self.net.totals[t as usize].add(half.conn.src.sender.stats());
                }
            }
        }
        let peers = self.app.peer_summaries();
        let [tcp, utp] = std::mem::take(&mut self.net.totals);
        let cfg = self.app.config();
        let layout = self.app.layout();
        let swarm = SwarmSummary {
            population: cfg.population,
            seeding: cfg.seeding,
            file_bytes: cfg.file_bytes,
            pieces: layout.pieces,
            blocks_per_piece: layout.blocks_per_piece(),
            peers_joined: u64::from(self.app.peers()),
            completions: self.app.completions(),
            connections_opened: u64::from(self.app.connections()),
            stopped_at_completions: self.app.stopped(),
            stale_packets: self.stale_packets,
            tcp,
            utp,
        };
        RunOutput {
            summary: Summary {
                scenario: self.name,
                seed: self.net.seed,
                sim_time_s: seconds(end_ns),
                events: self.net.engine.events,
                flows: vec![],
                links: self.net.channels.iter().map(LinkSummary::of).collect(),
                apps: vec![],
                cross: vec![],
                kind: RunKind::Swarm { peers, swarm },
                interrupted: self.net.engine.interrupted,
                fault: self.net.engine.fault,
            },
            flows: FlowTrace::default(),
            queues: self.queue_trace,
            apps: AppTrace::default(),
            export_error: None,
        }
    }
}
