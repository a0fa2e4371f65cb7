//! One direction of a link: a queue served at the line rate, then propagation delay.
//!
//! Drop-tail (the default) has a fast path. Because service is FIFO and delay never reorders,
//! a packet's arrival time at the far node is known when it is enqueued. The channel keeps
//! every packet it holds (waiting, in transmission, propagating) in one deque ordered by
//! arrival, and only the head is scheduled in the global event queue. Occupancy (packets not yet
//! fully transmitted) is the deque's tail past a boundary that moves lazily on each enqueue,
//! over the transmission end times the entries carry, so both enqueue and arrival are
//! amortised O(1).
//!
//! Active queue management ([`crate::aqm`]) cannot work that way: CoDel decides at dequeue and
//! FQ-CoDel reorders, so a packet's fate is unknown until the transmitter takes it. An AQM
//! channel therefore serves its queue at dequeue time: when the transmitter frees it asks the
//! discipline for the next packet, whose transmission end is then the channel's next event;
//! at that end the packet joins the propagation deque (still FIFO) and the next is taken. The
//! channel's next event is the earlier of the transmission end and the propagation head, and
//! [`Channel::rearm`] tells the engine when that needs a new heap entry.
use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use slowstart_transport::packet::{Kind, Packet};

use crate::aqm::{Aqm, Entry, Signals};
use crate::opportunities::Opportunities;
use slowstart_config::{DirectionConfig, GilbertElliott, QueueLimit};

#[derive(Clone, Copy, Debug)]
struct InTransit {
    arrive_ns: u64,
    /// When its last bit leaves the transmitter (drop-tail's occupancy counts it until then).
    end_ns: u64,
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
    /// The queue discipline dropped it at enqueue (PIE, RED).
    DroppedAqm,
}

#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    pub forwarded: u64,
    pub forwarded_bytes: u64,
    pub drops: u64,
    /// Packets marked Congestion Experienced instead of dropped.
    pub marks: u64,
    pub max_queue_bytes: u64,
    pub max_queue_packets: u64,
    /// Sum over forwarded packets of time spent waiting before transmission.
    pub total_wait_ns: u128,
}

/// Its fields in the order a drop-tail packet touches them (`repr(C)`, line-aligned): the
/// first 64-byte line holds all an arrival and the engine's rearm read, the first four all an
/// offer reads and writes, statistics included; the rest (name, loss model, trace, AQM) lies
/// beyond. At scale a channel is cold when its packet comes, so each line it touches is a miss
/// (issue #37: against the compiler's order, 45.6 -> 43.9 second-level misses an event at
/// 30 000 swarm peers).
#[repr(C, align(64))]
pub struct Channel {
    // Line 0: arrival and rearm.
    pipe: VecDeque<InTransit>,
    /// Drop-tail: the last `untransmitted` packets of `pipe` are not known to be fully
    /// transmitted (some may be, until the next drain), and `backlog_bytes` their wire bytes.
    untransmitted: usize,
    backlog_bytes: u64,
    /// When the transmitter finishes everything accepted so far.
    busy_until: u64,
    /// The queue discipline, with its transmitter; `None` is drop-tail.
    aqm: Option<Box<AqmState>>,
    // Line 1: an offer's times.
    last_arrival: u64,
    /// Last (wire bytes, serialisation time) computed: most packets repeat one of two sizes.
    tx_cache: [(u64, u64); 2],
    pub delay_ns: u64,
    jitter_ns: u64,
    loss: f64,
    // Line 2: an offer's limits.
    limit: QueueLimit,
    /// (flow, 1-based data segment number) still to drop; removed once used.
    scheduled_drops: Vec<(u32, u64)>,
    pub rate_bps: u64,
    pub to_node: u32,
    /// Drop-tail at a fixed rate with at most independent loss: the fast path.
    plain: bool,
    /// Marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
    // Line 3.
    pub stats: ChannelStats,
    // Beyond: what the fast path does not read.
    pub name: String,
    /// The queue discipline's name ("droptail", "codel", ...).
    pub discipline: &'static str,
    /// Gilbert-Elliott loss and whether the chain is in its bad state.
    gilbert_elliott: Option<(GilbertElliott, bool)>,
    rng: Xoshiro256PlusPlus,
    /// Delivery opportunities of a trace-driven link; `None`: the fixed `rate_bps`.
    opportunities: Option<Box<Opportunities>>,
    /// Packets the discipline dropped after accepting them (at dequeue, or evicted), for the
    /// engine to account; the offered packet's own fate is the [`Offer`].
    pub dropped: Vec<Packet>,
}

// The lines above, as laid out (64-bit targets).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Channel, last_arrival) == 64);
    assert!(offset_of!(Channel, limit) == 128);
    assert!(offset_of!(Channel, stats) == 192);
    assert!(offset_of!(Channel, name) == 256);
};

struct AqmState {
    aqm: Aqm,
    sig: Signals,
    /// The packet in transmission and when its last bit leaves.
    tx: Option<(u64, Entry)>,
    /// Earliest time a heap entry for this channel is pending (`u64::MAX`: none known).
    armed_at: u64,
}

impl Channel {
    /// Bytes of the record of one packet accepted and not yet delivered, for a driver that
    /// sizes its memory before it runs (issue #37).
    pub const PACKET_RECORD_BYTES: usize = std::mem::size_of::<InTransit>();

    pub fn new(name: String, to_node: u32, cfg: &DirectionConfig, seed: u64) -> Self {
        Channel {
            name,
            to_node,
            rate_bps: cfg.rate_bps,
            delay_ns: cfg.delay_ns,
            discipline: cfg.discipline.name(),
            ecn: cfg.ecn,
            limit: cfg.queue,
            loss: cfg.loss,
            gilbert_elliott: cfg.gilbert_elliott.map(|g| (g, false)),
            jitter_ns: cfg.jitter_ns,
            scheduled_drops: cfg.drops.iter().map(|d| (d.flow, d.seq)).collect(),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            pipe: VecDeque::new(),
            untransmitted: 0,
            backlog_bytes: 0,
            busy_until: 0,
            last_arrival: 0,
            tx_cache: [(u64::MAX, 0); 2],
            plain: cfg.discipline.is_drop_tail()
                && cfg.rate_trace_ms.is_empty()
                && cfg.gilbert_elliott.is_none(),
            opportunities: (!cfg.rate_trace_ms.is_empty())
                .then(|| Box::new(Opportunities::new(&cfg.rate_trace_ms))),
            aqm: Aqm::new(&cfg.discipline, cfg.ecn, cfg.rate_bps, cfg.queue).map(|aqm| {
                Box::new(AqmState {
                    aqm,
                    sig: Signals::default(),
                    tx: None,
                    armed_at: u64::MAX,
                })
            }),
            dropped: Vec::new(),
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
        while self.untransmitted > 0 {
            let oldest = &self.pipe[self.pipe.len() - self.untransmitted];
            if oldest.end_ns > now {
                break;
            }
            self.backlog_bytes -= oldest.packet.wire_bytes as u64;
            self.untransmitted -= 1;
        }
    }

    /// Bytes and packets waiting or in transmission at `now`.
    pub fn occupancy(&mut self, now: u64) -> (u64, u64) {
        if self.aqm.is_some() {
            // Every transmission end is an event, so the state is current.
            return self.backlog();
        }
        self.drain_backlog(now);
        (self.backlog_bytes, self.untransmitted as u64)
    }

    /// Bytes and packets waiting or in transmission as of the last offer.
    pub fn backlog(&self) -> (u64, u64) {
        if let Some(a) = &self.aqm {
            let (tb, tp) =
                a.tx.map_or((0, 0), |(_, e)| (e.packet.wire_bytes as u64, 1));
            return (a.aqm.bytes() + tb, a.aqm.len() as u64 + tp);
        }
        (self.backlog_bytes, self.untransmitted as u64)
    }

    fn scheduled_drop(&mut self, p: &Packet, mss: u64) -> bool {
        if p.kind != Kind::Data || p.is_retransmission() || self.scheduled_drops.is_empty() {
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

    /// Whether the link loses this packet: independently with `loss`, or as netem's
    /// Gilbert-Elliott model decides (q_netem.c `loss_gilb_ell`: one uniform draw decides both
    /// the transition and, from the state before it, the loss).
    #[inline]
    fn random_loss(&mut self) -> bool {
        let Some((g, bad)) = &mut self.gilbert_elliott else {
            return self.loss > 0.0 && self.rng.random::<f64>() < self.loss;
        };
        let u = self.rng.random::<f64>();
        if *bad {
            if u < g.r {
                *bad = false;
            }
            // netem: lost when the draw exceeds h = 1 - (1-h).
            u >= 1.0 - g.loss_bad
        } else {
            if u < g.p {
                *bad = true;
            }
            u < g.loss_good
        }
    }

    /// Offer a packet at `now`; `mss` numbers data segments for scheduled drops.
    pub fn offer(&mut self, now: u64, packet: Packet, mss: u64) -> Offer {
        if self.plain {
            self.offer_fifo::<true>(now, packet, mss)
        } else if self.aqm.is_some() {
            self.offer_aqm(now, packet, mss)
        } else {
            self.offer_fifo::<false>(now, packet, mss)
        }
    }

    /// Drop-tail. `PLAIN`: no trace and no Gilbert-Elliott loss, so neither is looked at (the
    /// common case, kept as short as it was before either existed).
    #[inline(always)]
    fn offer_fifo<const PLAIN: bool>(&mut self, now: u64, packet: Packet, mss: u64) -> Offer {
        self.drain_backlog(now);
        let bytes = packet.wire_bytes as u64;
        let full = match self.limit {
            QueueLimit::Packets(n) => self.untransmitted as u64 >= n,
            QueueLimit::Bytes(b) => self.backlog_bytes + bytes > b,
        };
        let dropped = if full {
            Some(Offer::DroppedQueueFull)
        } else if self.scheduled_drop(&packet, mss) {
            Some(Offer::DroppedScheduled)
        } else if if PLAIN {
            self.loss > 0.0 && self.rng.random::<f64>() < self.loss
        } else {
            self.random_loss()
        } {
            Some(Offer::DroppedRandom)
        } else {
            None
        };
        if let Some(d) = dropped {
            self.stats.drops += 1;
            return d;
        }
        let start = now.max(self.busy_until);
        let end = match self.opportunities.as_deref_mut() {
            Some(o) if !PLAIN => o.serve(now, bytes),
            _ => start + self.cached_tx_time(bytes),
        };
        self.busy_until = end;
        let mut arrive = end + self.delay_ns;
        if self.jitter_ns > 0 {
            arrive += self.rng.random_range(0..=self.jitter_ns);
        }
        // Jitter never reorders: a packet cannot overtake the one ahead of it.
        arrive = arrive.max(self.last_arrival);
        self.last_arrival = arrive;
        self.untransmitted += 1;
        self.backlog_bytes += bytes;
        let s = &mut self.stats;
        s.forwarded += 1;
        s.forwarded_bytes += bytes;
        s.total_wait_ns += (start - now) as u128;
        s.max_queue_bytes = s.max_queue_bytes.max(self.backlog_bytes);
        s.max_queue_packets = s.max_queue_packets.max(self.untransmitted as u64);
        let was_idle = self.pipe.is_empty();
        self.pipe.push_back(InTransit {
            arrive_ns: arrive,
            end_ns: end,
            packet,
        });
        Offer::Queued { was_idle }
    }

    /// When the channel next needs the engine: the head packet's arrival (drop-tail), or the
    /// earlier of that and the end of the current transmission (AQM).
    pub fn head_time(&self) -> Option<u64> {
        let arrive = self.pipe.front().map(|p| p.arrive_ns);
        match self.aqm.as_deref().and_then(|a| a.tx.as_ref()) {
            Some(&(end, _)) => Some(arrive.map_or(end, |t| t.min(end))),
            None => arrive,
        }
    }

    /// The channel's event at `now` came: take the head packet if it has arrived. Drop-tail's
    /// events are always arrivals; an AQM channel's may be a transmission end (then `None`,
    /// and perhaps packets in [`Self::dropped`]).
    pub fn pop_head(&mut self, now: u64) -> Option<Packet> {
        if self.aqm.is_some() {
            return self.pop_head_aqm(now);
        }
        let head = self.pipe.pop_front()?;
        if self.untransmitted > self.pipe.len() {
            // It arrived, so it was transmitted; it was still counted only for want of a drain.
            self.untransmitted -= 1;
            self.backlog_bytes -= head.packet.wire_bytes as u64;
        }
        Some(head.packet)
    }

    /// After [`Self::pop_head`]: the time to put in the event heap, if one is needed.
    pub fn rearm(&mut self) -> Option<u64> {
        if self.aqm.is_none() {
            return self.pipe.front().map(|p| p.arrive_ns);
        }
        let next = self.head_time()?;
        match self.aqm.as_deref_mut() {
            None => Some(next),
            Some(a) if next < a.armed_at => {
                a.armed_at = next;
                Some(next)
            }
            Some(_) => None,
        }
    }

    /// Free the storage of the packets in transit once none is: a channel idle now keeps no
    /// buffer its busiest queue grew (a full 200-packet uplink's is 22 kB; issue #37).
    /// Nothing it does next changes.
    pub fn release_empty_buffers(&mut self) {
        slowstart_transport::ranges::release_if_empty(&mut self.pipe);
    }

    /// Packets accepted and not yet delivered to the far node.
    pub fn held(&self) -> usize {
        let queued = self
            .aqm
            .as_deref()
            .map_or(0, |a| a.aqm.len() + a.tx.is_some() as usize);
        self.pipe.len() + queued
    }

    /// Payload bytes of `flow`'s data held in this channel (for conservation checks).
    pub fn held_data_bytes(&self, flow: u32) -> u64 {
        let of = |p: &Packet| {
            if p.flow == flow && p.kind == Kind::Data {
                p.len as u64
            } else {
                0
            }
        };
        let mut sum: u64 = self.pipe.iter().map(|p| of(&p.packet)).sum();
        if let Some(a) = self.aqm.as_deref() {
            sum += a.aqm.packets().map(of).sum::<u64>();
            sum += a.tx.map_or(0, |(_, e)| of(&e.packet));
        }
        sum
    }

    // --- the AQM path -----------------------------------------------------------------------

    #[inline(never)]
    fn offer_aqm(&mut self, now: u64, packet: Packet, mss: u64) -> Offer {
        self.advance(now);
        let bytes = packet.wire_bytes as u64;
        let a = self.aqm.as_deref().expect("AQM path");
        let full = a.aqm.tail_drops() && {
            let (qb, qp) = self.backlog();
            match self.limit {
                QueueLimit::Packets(n) => qp >= n,
                QueueLimit::Bytes(b) => qb + bytes > b,
            }
        };
        let dropped = if full {
            Some(Offer::DroppedQueueFull)
        } else if self.scheduled_drop(&packet, mss) {
            Some(Offer::DroppedScheduled)
        } else if self.random_loss() {
            Some(Offer::DroppedRandom)
        } else {
            None
        };
        if let Some(d) = dropped {
            self.stats.drops += 1;
            return d;
        }
        let a = self.aqm.as_deref_mut().expect("AQM path");
        let accepted = a.aqm.enqueue(now, packet, &mut self.rng, &mut a.sig);
        self.collect_signals();
        if !accepted {
            self.stats.drops += 1;
            return Offer::DroppedAqm;
        }
        if self.aqm.as_deref().is_some_and(|a| a.tx.is_none()) {
            self.start_next(now);
        }
        let (qb, qp) = self.backlog();
        let s = &mut self.stats;
        s.max_queue_bytes = s.max_queue_bytes.max(qb);
        s.max_queue_packets = s.max_queue_packets.max(qp);
        Offer::Queued {
            was_idle: self.rearm().is_some(),
        }
    }

    #[inline(never)]
    fn pop_head_aqm(&mut self, now: u64) -> Option<Packet> {
        let a = self.aqm.as_deref_mut().expect("AQM path");
        if a.armed_at == now {
            a.armed_at = u64::MAX;
        }
        self.advance(now);
        match self.pipe.front() {
            Some(p) if p.arrive_ns <= now => self.pipe.pop_front().map(|p| p.packet),
            _ => None,
        }
    }

    /// Finish every transmission that ends by `now`: the packet starts propagating and the
    /// transmitter takes the next one at that instant.
    fn advance(&mut self, now: u64) {
        while let Some((end, e)) = self.aqm.as_deref().and_then(|a| a.tx) {
            if end > now {
                break;
            }
            self.aqm.as_deref_mut().expect("AQM path").tx = None;
            let mut arrive = end + self.delay_ns;
            if self.jitter_ns > 0 {
                arrive += self.rng.random_range(0..=self.jitter_ns);
            }
            arrive = arrive.max(self.last_arrival);
            self.last_arrival = arrive;
            self.pipe.push_back(InTransit {
                arrive_ns: arrive,
                end_ns: end,
                packet: e.packet,
            });
            self.start_next(end);
        }
    }

    /// The transmitter is free at `t`: take the discipline's next packet, if any.
    fn start_next(&mut self, t: u64) {
        let a = self.aqm.as_deref_mut().expect("AQM path");
        let next = a.aqm.dequeue(t, &mut self.rng, &mut a.sig);
        self.collect_signals();
        if let Some(e) = next {
            let bytes = e.packet.wire_bytes as u64;
            let end = match self.opportunities.as_deref_mut() {
                None => t + self.cached_tx_time(bytes),
                Some(o) => o.serve(t, bytes),
            };
            let s = &mut self.stats;
            s.forwarded += 1;
            s.forwarded_bytes += bytes;
            s.total_wait_ns += (t - e.enqueued_ns) as u128;
            self.aqm.as_deref_mut().expect("AQM path").tx = Some((end, e));
        }
    }

    fn collect_signals(&mut self) {
        let a = self.aqm.as_deref_mut().expect("AQM path");
        self.stats.marks += std::mem::take(&mut a.sig.marks);
        self.stats.drops += a.sig.dropped.len() as u64;
        self.dropped.append(&mut a.sig.dropped);
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
        c.pop_head(11_000_000);
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
        d.drops = vec![slowstart_config::DropSpec { flow: 0, seq: 2 }];
        let mut c = Channel::new("l".into(), 1, &d, 1);
        assert!(matches!(
            c.offer(0, data(0, 1000), 1000),
            Offer::Queued { .. }
        ));
        assert_eq!(c.offer(0, data(1000, 1000), 1000), Offer::DroppedScheduled);
        let mut again = data(1000, 1000);
        again.set(slowstart_transport::packet::RETRANSMISSION, true);
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
            c.pop_head(t);
        }
    }

    /// Drains `c` event by event: (event time, delivered packet's seq) for every delivery.
    fn deliveries(c: &mut Channel) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        while let Some(t) = c.head_time() {
            if let Some(p) = c.pop_head(t) {
                out.push((t, p.seq));
            }
        }
        out
    }

    /// The dequeue-time service model delivers exactly what drop-tail's enqueue-time model
    /// does when the discipline never drops: same packets, same arrival times, same waits.
    #[test]
    fn aqm_service_matches_drop_tail_when_nothing_is_dropped() {
        let mut d = DirectionConfig::lossless(12_000_000, 7_000_000, QueueLimit::Packets(50));
        d.jitter_ns = 300_000;
        let mut fifo = Channel::new("l".into(), 1, &d, 5);
        d.discipline = slowstart_config::Discipline::Codel(slowstart_config::CodelConfig {
            target_ns: u64::MAX / 4,
            ..Default::default()
        });
        let mut aqm = Channel::new("l".into(), 1, &d, 5);
        let mut got = [Vec::new(), Vec::new()];
        // Bursts and gaps, offered at the same times to both; deliveries drained as due.
        for i in 0..400u64 {
            let now = (i / 20) * 30_000_000 + (i % 20) * 200_000;
            for (k, c) in [&mut fifo, &mut aqm].into_iter().enumerate() {
                while let Some(t) = c.head_time().filter(|&t| t <= now) {
                    if let Some(p) = c.pop_head(t) {
                        got[k].push((t, p.seq));
                    }
                }
                let offer = c.offer(now, data(i * 1000, 1000), 1000);
                assert!(matches!(offer, Offer::Queued { .. }), "{offer:?}");
            }
        }
        for (k, c) in [&mut fifo, &mut aqm].into_iter().enumerate() {
            got[k].extend(deliveries(c));
        }
        assert_eq!(got[0].len(), 400);
        assert_eq!(got[0], got[1]);
        assert_eq!(fifo.stats.total_wait_ns, aqm.stats.total_wait_ns);
        assert_eq!(fifo.stats.max_queue_packets, aqm.stats.max_queue_packets);
    }

    /// A CoDel channel overloaded for a second: drops happen at dequeue, are handed to the
    /// engine through `dropped`, and every packet is delivered or dropped exactly once.
    #[test]
    fn codel_channel_reports_dequeue_drops() {
        let mut d = DirectionConfig::lossless(12_000_000, 1_000_000, QueueLimit::Packets(1000));
        d.discipline = slowstart_config::Discipline::Codel(Default::default());
        let mut c = Channel::new("l".into(), 1, &d, 1);
        let mut delivered = 0;
        let mut dropped = 0;
        for i in 0..2000u64 {
            let now = i * 500_000;
            while let Some(t) = c.head_time().filter(|&t| t <= now) {
                delivered += c.pop_head(t).is_some() as u64;
                dropped += c.dropped.drain(..).count() as u64;
            }
            assert!(matches!(
                c.offer(now, data(i, 1460), 1460),
                Offer::Queued { .. }
            ));
            dropped += c.dropped.drain(..).count() as u64;
        }
        while let Some(t) = c.head_time() {
            delivered += c.pop_head(t).is_some() as u64;
            dropped += c.dropped.drain(..).count() as u64;
        }
        assert!(dropped > 10, "{dropped}");
        assert_eq!(delivered + dropped, 2000);
        assert_eq!(c.stats.drops, dropped);
        assert_eq!(c.stats.forwarded, delivered);
        assert_eq!(c.held(), 0);
    }

    /// netem's Gilbert-Elliott chain: the stationary bad-state share is p / (p + r), so with
    /// 1-h = 1 and 1-k = 0 the loss rate is p / (p + r) and losses come in runs of mean
    /// length 1 / r.
    #[test]
    fn gilbert_elliott_loss_rate_and_burst_length() {
        let mut d = DirectionConfig::lossless(1_000_000_000_000, 0, QueueLimit::Packets(1 << 40));
        d.gilbert_elliott = Some(GilbertElliott {
            p: 0.01,
            r: 0.25,
            loss_bad: 1.0,
            loss_good: 0.0,
        });
        let mut c = Channel::new("l".into(), 1, &d, 11);
        let n = 400_000u64;
        let (mut lost, mut runs, mut in_run) = (0u64, 0u64, false);
        for i in 0..n {
            let dropped = c.offer(i, data(i, 100), 100) == Offer::DroppedRandom;
            lost += dropped as u64;
            runs += (dropped && !in_run) as u64;
            in_run = dropped;
        }
        let rate = lost as f64 / n as f64;
        let expected = 0.01 / 0.26;
        assert!(
            (rate - expected).abs() < 0.1 * expected,
            "{rate} vs {expected}"
        );
        let mean_run = lost as f64 / runs as f64;
        // A run is the packets seen in the bad state (the one whose draw moves the chain back
        // is still lost: netem decides from the state before the transition), geometric with
        // mean 1/r.
        assert!((mean_run - 1.0 / 0.25).abs() < 0.2, "{mean_run}");
    }
}
