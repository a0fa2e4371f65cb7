//! What a swarm run reports: what tests inspect of a half-connection, and the run's summary.

use super::*;

impl<Q: Queue<Event<SwarmEvent>>> SwarmSim<Q> {
    /// Half `h`'s bytes written and not yet sent, and below how many its uploader writes the
    /// next requested block, while the connection is open.
    pub fn send_buffer(&self, h: u32) -> Option<(u64, u64)> {
        let half = &self.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        Some((
            half.conn.src.sender.unsent_bytes(),
            unsent_limit(&self.cfg.bittorrent, half),
        ))
    }

    /// Connection `c`'s downloads at each end, while it is open and libtorrent's request queue
    /// runs: (blocks requested, blocks picked and held back, the queue's target).
    pub fn requests(&self, c: u32) -> Option<[(usize, usize, u64); 2]> {
        let conn = self.conns.get(c as usize).filter(|conn| conn.open)?;
        let side = |s: usize| {
            let side = &conn.sides[s];
            let target = side.requests.as_ref().map(|q| q.target())?;
            Some((side.my_requests.len(), side.held_requests.len(), target))
        };
        Some([side(0)?, side(1)?])
    }

    /// Data payload bytes of half `h`: (sent, received, dropped, held in channels), while the
    /// connection is open. Every byte sent is received, dropped or still in a channel.
    pub fn byte_ledger(&self, h: u32) -> Option<(u64, u64, u64, u64)> {
        let half = &self.halves[(h / 2) as usize].as_ref()?[(h % 2) as usize];
        let held = self.channels.iter().map(|c| c.held_data_bytes(h)).sum();
        Some((
            half.conn.src.sender.stats().data_bytes_sent,
            half.conn.dst.receiver.data_bytes_received(),
            half.dropped_data_bytes,
            held,
        ))
    }

    pub fn finish(mut self, end_ns: u64) -> RunOutput {
        for (c, halves) in self.halves.iter().enumerate() {
            if let Some(halves) = halves {
                for (i, half) in halves.iter().enumerate() {
                    let t = self.half_transport(2 * c as u32 + i as u32);
                    self.totals[t as usize].add(half.conn.src.sender.stats());
                }
            }
        }
        let peers = self
            .peers
            .iter()
            .enumerate()
            .map(|(id, p)| PeerSummary {
                id: id as u32,
                transport: p.transport.name(),
                initial_seed: p.initial_seed,
                replacement: p.replacement,
                arrival_s: seconds(p.arrival_ns),
                done_s: p.done_ns.filter(|_| !p.initial_seed).map(seconds),
                completion_s: p
                    .done_ns
                    .filter(|_| !p.initial_seed)
                    .map(|d| seconds(d - p.arrival_ns)),
                completion_rank: p.rank,
                left_s: p.left_ns.map(seconds),
                bytes_up: p.bytes_up,
                bytes_down: p.bytes_down,
                access_delay_s: seconds(p.delay_ns),
                connections: p.connections,
                duplicate_bytes: p.duplicate_bytes,
                request_queue_mean: (p.request_samples > 0)
                    .then(|| p.requests_outstanding as f64 / p.request_samples as f64),
            })
            .collect();
        let [tcp, utp] = std::mem::take(&mut self.totals);
        let swarm = SwarmSummary {
            population: self.cfg.population,
            seeding: self.cfg.seeding,
            file_bytes: self.cfg.file_bytes,
            pieces: self.layout.pieces,
            blocks_per_piece: self.layout.blocks_per_piece(),
            peers_joined: self.peers.len() as u64,
            completions: self.completions,
            connections_opened: self.conns.len() as u64,
            stopped_at_completions: self.stopped,
            stale_packets: self.stale_packets,
            tcp,
            utp,
        };
        RunOutput {
            summary: Summary {
                scenario: self.name,
                seed: self.seed,
                sim_time_s: seconds(end_ns),
                events: self.engine.events,
                flows: vec![],
                links: self.channels.iter().map(LinkSummary::of).collect(),
                apps: vec![],
                cross: vec![],
                kind: RunKind::Swarm { peers, swarm },
                interrupted: self.engine.interrupted,
                fault: self.engine.fault,
            },
            flows: FlowTrace::default(),
            queues: self.queue_trace,
            apps: AppTrace::default(),
            export_error: None,
        }
    }
}
