//! What a swarm run reports: what tests inspect of a half-connection, and the run's summary.

use super::*;
use crate::summary::{seconds, RunKind, Summary, SwarmSummary};
use slowstart_config::trace::AppTrace;
use slowstart_link::summary::LinkSummary;

impl<Q: Queue<Event<SwarmEvent>>> SwarmSim<Q> {
    /// Half `h`'s bytes written and not yet sent, and below how many its uploader writes the
    /// next requested block, while the connection is open.
    pub fn send_buffer(&self, h: u32) -> Option<(u64, u64)> {
        let half = &self.net.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        Some((
            half.conn.data().map_or(0, |d| d.sender.unsent_bytes()),
            half.wire.unsent_limit(&self.app.config().bittorrent),
        ))
    }

    /// Whether half `h` holds its data ends (made at its uploader's first write to it), while
    /// the connection is open.
    pub fn has_data_ends(&self, h: u32) -> Option<bool> {
        let half = &self.net.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        Some(half.conn.data().is_some())
    }

    /// Bytes of storage half `h`'s data sender holds (its scoreboard's buffers; 0 before its
    /// first write) and whether it is drained ([`Sender::drained`]), while the connection is
    /// open.
    pub fn sender_storage(&self, h: u32) -> Option<(usize, bool)> {
        let half = &self.net.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        Some(
            half.conn
                .data()
                .map_or((0, true), |d| (d.sender.buffer_bytes(), d.sender.drained())),
        )
    }

    /// Half `h`'s (uploader, downloader).
    pub fn ends(&self, h: u32) -> (u32, u32) {
        self.app.ends(h)
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
        let data = half.conn.data();
        Some((
            data.map_or(0, |d| d.sender.stats().data_bytes_sent),
            data.map_or(0, |d| d.receiver.data_bytes_received()),
            half.dropped_data_bytes,
            held,
        ))
    }

    pub fn finish(mut self, end_ns: u64) -> RunOutput {
        for half in self.net.halves.iter().flatten().flat_map(|h| h.iter()) {
            half.count_sender(&mut self.net.totals);
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
            flows: self.net.uploads.trace,
            queues: self.queue_trace,
            apps: AppTrace::default(),
            export_error: None,
        }
    }
}
