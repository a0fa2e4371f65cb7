//! One direction of a link: a drop-tail FIFO served at the line rate, then propagation delay.
//!
//! Because service is FIFO and delay never reorders, a packet's arrival time at the far node is
//! known when it is enqueued. The channel keeps every packet it holds (waiting, in
//! transmission, propagating) in one deque ordered by arrival, and only the head is scheduled in
//! the global event queue. Occupancy is kept in a second deque of transmission end times, popped
//! lazily, so both enqueue and arrival are amortised O(1).

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use slowstart_transport::packet::{Kind, Packet};

use crate::config::{DirectionConfig, QueueLimit};

#[derive(Clone, Copy, Debug)]
struct InTransit {
    arrive_ns: u64,
    packet: Packet,
}

/// What happened to a packet offered to a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued; `was_idle` means the channel held nothing and its head must be scheduled.
    Queued {
        was_idle: bool,
    },
    DroppedQueueFull,
    DroppedRandom,
    DroppedScheduled,
}

#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    pub drops: u64,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
    /// Sum over forwarded packets of time spent waiting before transmission.
    pub total_wait_ns: u128,
}

pub struct Channel {
    pub name: String,
    pub to_node: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    limit: QueueLimit,
    loss: f64,
    jitter_ns: u64,
    /// (flow, 1-based data segment number) still to drop; removed once used.
    scheduled_drops: Vec<(u32, u64)>,
    rng: Xoshiro256PlusPlus,
    pipe: VecDeque<InTransit>,
    /// (transmission end, wire bytes) of packets not yet fully transmitted.
    backlog: VecDeque<(u64, u32)>,
    backlog_bytes: u64,
    /// When the transmitter finishes everything accepted so far.
    busy_until: u64,
    last_arrival: u64,
    /// Last (wire bytes, serialisation time) computed: most packets repeat one of two sizes.
    tx_cache: [(u64, u64); 2],
    pub stats: ChannelStats,
}

impl Channel {
    pub fn new(name: String, to_node: u32, cfg: &DirectionConfig, seed: u64) -> Self {
        Channel {
            name,
            to_node,
            rate_bps: cfg.rate_bps,
            delay_ns: cfg.delay_ns,
            limit: cfg.queue,
            loss: cfg.loss,
            jitter_ns: cfg.jitter_ns,
            scheduled_drops: cfg.drops.iter().map(|d| (d.flow, d.seq)).collect(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            pipe: VecDeque::new(),
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            busy_until: 0,
            last_arrival: 0,
            tx_cache: [(u64::MAX, 0); 2],
            stats: ChannelStats::default(),
        }
    }

    /// Serialisation time of `bytes` at the line rate, rounded up to whole nanoseconds.
    pub fn tx_time(&self, bytes: u64) -> u64 {
        (bytes as u128 * 8 * 1_000_000_000).div_ceil(self.rate_bps as u128) as u64
    }

    fn cached_tx_time(&mut self, bytes: u64) -> u64 {
        for &(b, t) in &self.tx_cache {
            if b == bytes {
                return t;
            }
        }
        let t = self.tx_time(bytes);
        self.tx_cache = [(bytes, t), self.tx_cache[0]];
        t
    }

    fn drain_backlog(&mut self, now: u64) {
        while let Some(&(end, bytes)) = self.backlog.front() {
            if end > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= bytes as u64;
        }
    }

    /// Bytes and packets waiting or in transmission at `now`.
    pub fn occupancy(&mut self, now: u64) -> (u64, u64) {
        self.drain_backlog(now);
        (self.backlog_bytes, self.backlog.len() as u64)
    }

    /// Bytes and packets waiting or in transmission as of the last offer.
    pub fn backlog(&self) -> (u64, u64) {
        (self.backlog_bytes, self.backlog.len() as u64)
    }

    fn scheduled_drop(&mut self, p: &Packet, mss: u64) -> bool {
        if p.kind != Kind::Data || p.retransmission || self.scheduled_drops.is_empty() {
            return false;
        }
        let segment = p.seq / mss.max(1) + 1;
        if let Some(i) = self
            .scheduled_drops
            .iter()
            .position(|&(f, s)| f == p.flow && s == segment)
        {
            self.scheduled_drops.swap_remove(i);
            return true;
        }
        false
    }

    /// Offer a packet at `now`; `mss` numbers data segments for scheduled drops.
    pub fn offer(&mut self, now: u64, packet: Packet, mss: u64) -> Offer {
        self.drain_backlog(now);
        let bytes = packet.wire_bytes as u64;
        let full = match self.limit {
            QueueLimit::Packets(n) => self.backlog.len() as u64 >= n,
            QueueLimit::Bytes(b) => self.backlog_bytes + bytes > b,
        };
        let dropped = if full {
            Some(Offer::DroppedQueueFull)
        } else if self.scheduled_drop(&packet, mss) {
            Some(Offer::DroppedScheduled)
        } else if self.loss > 0.0 && self.rng.random::<f64>() < self.loss {
            Some(Offer::DroppedRandom)
        } else {
            None
        };
        if let Some(d) = dropped {
            self.stats.drops += 1;
            return d;
        }
        let start = now.max(self.busy_until);
        let end = start + self.cached_tx_time(bytes);
        self.busy_until = end;
        let mut arrive = end + self.delay_ns;
        if self.jitter_ns > 0 {
            arrive += self.rng.random_range(0..=self.jitter_ns);
        }
        // Jitter never reorders: a packet cannot overtake the one ahead of it.
        arrive = arrive.max(self.last_arrival);
        self.last_arrival = arrive;
        self.backlog.push_back((end, packet.wire_bytes));
        self.backlog_bytes += bytes;
        let s = &mut self.stats;
        s.forwarded += 1;
        s.forwarded_bytes += bytes;
        s.total_wait_ns += (start - now) as u128;
        s.max_queue_bytes = s.max_queue_bytes.max(self.backlog_bytes);
        s.max_queue_packets = s.max_queue_packets.max(self.backlog.len() as u64);
        let was_idle = self.pipe.is_empty();
        self.pipe.push_back(InTransit {
            arrive_ns: arrive,
            packet,
        });
        Offer::Queued { was_idle }
    }

    /// Arrival time of the head packet, if any.
    pub fn head_time(&self) -> Option<u64> {
        self.pipe.front().map(|p| p.arrive_ns)
    }

    /// Take the head packet (its arrival time has come).
    pub fn pop_head(&mut self) -> Option<Packet> {
        self.pipe.pop_front().map(|p| p.packet)
    }

    /// Packets accepted and not yet delivered to the far node.
    pub fn held(&self) -> usize {
        self.pipe.len()
    }

    /// Payload bytes of `flow`'s data held in this channel (for conservation checks).
    pub fn held_data_bytes(&self, flow: u32) -> u64 {
        self.pipe
            .iter()
            .filter(|p| p.packet.flow == flow && p.packet.kind == Kind::Data)
            .map(|p| p.packet.len as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32) -> Packet {
        let mut p = Packet::control(0, Kind::Data, len + 40, 0);
        p.seq = seq;
        p.len = len;
        p
    }

    #[test]
    fn serialises_back_to_back_then_propagates() {
        // 1500-byte packets at 12 Mbps take 1 ms each; 10 ms propagation.
        let mut c = Channel::new(
            "l".into(),
            1,
            &DirectionConfig::lossless(12_000_000, 10_000_000, QueueLimit::Packets(10)),
            1,
        );
        assert_eq!(
            c.offer(0, data(0, 1460), 1460),
            Offer::Queued { was_idle: true }
        );
        assert_eq!(
            c.offer(0, data(1460, 1460), 1460),
            Offer::Queued { was_idle: false }
        );
        assert_eq!(c.head_time(), Some(11_000_000));
        c.pop_head();
        assert_eq!(c.head_time(), Some(12_000_000));
        assert_eq!(c.stats.total_wait_ns, 1_000_000);
    }

    #[test]
    fn drop_tail_counts_packets_not_yet_transmitted() {
        let mut c = Channel::new(
            "l".into(),
            1,
            &DirectionConfig::lossless(12_000_000, 0, QueueLimit::Packets(2)),
            1,
        );
        assert!(matches!(
            c.offer(0, data(0, 1460), 1460),
            Offer::Queued { .. }
        ));
        assert!(matches!(
            c.offer(0, data(1460, 1460), 1460),
            Offer::Queued { .. }
        ));
        assert_eq!(c.offer(0, data(2920, 1460), 1460), Offer::DroppedQueueFull);
        // After the first finishes transmission (1 ms) there is room again.
        assert_eq!(c.occupancy(1_000_000), (1500, 1));
        assert!(matches!(
            c.offer(1_000_000, data(2920, 1460), 1460),
            Offer::Queued { .. }
        ));
    }

    #[test]
    fn scheduled_drop_hits_first_transmission_only() {
        let mut d = DirectionConfig::lossless(1_000_000_000, 0, QueueLimit::Packets(100));
        d.drops = vec![crate::config::DropSpec { flow: 0, seq: 2 }];
        let mut c = Channel::new("l".into(), 1, &d, 1);
        assert!(matches!(
            c.offer(0, data(0, 1000), 1000),
            Offer::Queued { .. }
        ));
        assert_eq!(c.offer(0, data(1000, 1000), 1000), Offer::DroppedScheduled);
        let mut again = data(1000, 1000);
        again.retransmission = true;
        assert!(matches!(c.offer(0, again, 1000), Offer::Queued { .. }));
    }

    #[test]
    fn jitter_never_reorders() {
        let mut d = DirectionConfig::lossless(1_000_000_000, 1_000_000, QueueLimit::Packets(1000));
        d.jitter_ns = 5_000_000;
        let mut c = Channel::new("l".into(), 1, &d, 7);
        for i in 0..500 {
            c.offer(i * 1000, data(i * 1000, 1000), 1000);
        }
        let mut last = 0;
        while let Some(t) = c.head_time() {
            assert!(t >= last);
            last = t;
            c.pop_head();
        }
    }
}
