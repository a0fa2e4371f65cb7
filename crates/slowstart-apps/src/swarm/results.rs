//! What the swarm reports: its peers' results, the counts its run summary takes, and what tests
//! inspect of a connection.

use serde::Serialize;

use super::*;
use crate::seconds;

/// One peer's results, for the summary's `peers` list.
#[derive(Clone, Debug, Serialize)]
pub struct PeerSummary {
    pub id: u32,
    pub transport: &'static str,
    pub initial_seed: bool,
    /// Joined to replace a peer that left (random stay).
    pub replacement: bool,
    pub arrival_s: f64,
    /// When it had the whole file.
    pub done_s: Option<f64>,
    /// Download time: `done_s - arrival_s`.
    pub completion_s: Option<f64>,
    /// 1 for the first leecher to complete in the run.
    pub completion_rank: Option<u64>,
    pub left_s: Option<f64>,
    /// Block payload bytes sent to and received from other peers (delivered in order).
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// One-way propagation delay of its access link.
    pub access_delay_s: f64,
    /// Connections it took part in.
    pub connections: u64,
    /// Block bytes that arrived a second time (of `bytes_down`): a block still in the
    /// uploader's send buffer when it choked us, asked for again elsewhere; or end game.
    pub duplicate_bytes: u64,
    /// With `request_queue_time`: requests outstanding per connection that had any, averaged
    /// over its once-a-second ticks while it downloaded (what libtorrent's
    /// `peer_info::download_queue_length` shows a real swarm); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_queue_mean: Option<f64>,
}

impl Swarm {
    /// Every peer's results, by id.
    pub fn peer_summaries(&self) -> Vec<PeerSummary> {
        self.peers
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
            .collect()
    }

    /// Leechers that had the whole file so far.
    pub fn completions(&self) -> u64 {
        self.completions
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// With libtorrent's request queue, each downloading peer's requests outstanding per
    /// connection that has any, summed into its `request_queue_mean` (as the real swarm's peers
    /// report `download_queue_length`); the network samples its queues at the same moments.
    pub fn sample_request_queues(&mut self) {
        // Only libtorrent's request queue counts requests (`Side::requests`): without it the
        // walk over every leecher's connections would read them all for nothing.
        if self.cfg.bittorrent.request_queue_time_ns == 0 {
            return;
        }
        for (p, peer) in self.peers.iter_mut().enumerate() {
            if !peer.active || peer.done_ns.is_some() {
                continue;
            }
            for &c in &peer.conns {
                let side = &self.conns[c as usize].sides
                    [usize::from(self.ends[c as usize][0] != p as u32)];
                // Held blocks too, as libtorrent's download_queue_length counts them.
                let outstanding = (side.my_requests.len() + side.held_requests.len()) as u64;
                if side.requests.is_some() && outstanding > 0 {
                    peer.requests_outstanding += outstanding;
                    peer.request_samples += 1;
                }
            }
        }
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
}
