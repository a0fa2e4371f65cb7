//! FQ-CoDel, RFC 8290: packets hashed to flow queues, new queues served before old ones by
//! deficit round robin, each queue under its own CoDel state.
//!
//! The flow hash is the simulator's flow id modulo the number of queues (a run's flows are
//! few, so they never collide unless `flows` is made small on purpose).

use std::collections::VecDeque;

use super::codel::{Params, Vars};
use super::{Entry, Signals};
use slowstart_config::{FqCodelConfig, QueueLimit};
use slowstart_transport::packet::Packet;

#[derive(Default)]
struct FlowQueue {
    q: VecDeque<Entry>,
    bytes: u64,
    deficit: i64,
    codel: Vars,
    /// In `new_flows` or `old_flows`.
    listed: bool,
}

pub struct FqCodel {
    params: Params,
    ecn: bool,
    quantum: i64,
    limit_packets: u64,
    memory_limit: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    len: usize,
    bytes: u64,
}

impl FqCodel {
    /// `limit` is the direction's buffer: a packet limit (Linux `limit`) or a byte limit that
    /// tightens `memory_limit`.
    pub fn new(c: &FqCodelConfig, ecn: bool, limit: QueueLimit) -> Self {
        let (limit_packets, memory_limit) = match limit {
            QueueLimit::Packets(n) => (n, c.memory_limit_bytes),
            QueueLimit::Bytes(b) => (u64::MAX, c.memory_limit_bytes.min(b)),
        };
        FqCodel {
            params: Params {
                target_ns: c.target_ns,
                interval_ns: c.interval_ns,
                mtu_bytes: c.quantum_bytes,
            },
            ecn,
            quantum: c.quantum_bytes as i64,
            limit_packets,
            memory_limit,
            queues: (0..c.flows).map(|_| FlowQueue::default()).collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            bytes: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
        Box::new(
            self.queues
                .iter()
                .flat_map(|f| f.q.iter().map(|e| &e.packet)),
        )
    }

    /// RFC 8290 §4.1: classify, timestamp, append; a queue that was not active joins the new
    /// flows with a full quantum. Over the limits, drop from the head of the queue holding the
    /// most bytes (the arriving packet's own queue, most often).
    pub fn enqueue(&mut self, now: u64, packet: Packet, sig: &mut Signals) -> bool {
        let i = packet.flow as usize % self.queues.len();
        let f = &mut self.queues[i];
        f.bytes += packet.wire_bytes as u64;
        f.q.push_back(Entry {
            packet,
            enqueued_ns: now,
        });
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
        }
        self.len += 1;
        self.bytes += packet.wire_bytes as u64;
        while self.len as u64 > self.limit_packets || self.bytes > self.memory_limit {
            let fattest = (0..self.queues.len())
                .max_by_key(|&j| (self.queues[j].bytes, std::cmp::Reverse(j)))
                .expect("at least one queue");
            let e = self.pop(fattest).expect("the fattest queue holds a packet");
            sig.dropped.push(e.packet);
        }
        true
    }

    fn pop(&mut self, i: usize) -> Option<Entry> {
        let f = &mut self.queues[i];
        let e = f.q.pop_front()?;
        let b = e.packet.wire_bytes as u64;
        f.bytes -= b;
        self.bytes -= b;
        self.len -= 1;
        Some(e)
    }

    /// RFC 8290 §4.2: the first queue of the new list (else the old list) with deficit left
    /// sends; one out of deficit gets a quantum more and moves to the end of the old list; an
    /// empty new queue moves to the old list (if that is not empty) so it cannot starve
    /// others by coming back at once, an empty old queue leaves the lists.
    pub fn dequeue(&mut self, now: u64, sig: &mut Signals) -> Option<Entry> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = *if from_new {
                self.new_flows.front()
            } else {
                self.old_flows.front()
            }? as usize;
            if self.queues[i].deficit <= 0 {
                self.queues[i].deficit += self.quantum;
                self.pop_list(from_new);
                self.old_flows.push_back(i as u32);
                continue;
            }
            let mut codel = std::mem::take(&mut self.queues[i].codel);
            let (params, ecn) = (self.params, self.ecn);
            let got = codel.dequeue(
                now,
                &params,
                ecn,
                || {
                    // CoDel's maxpacket test looks at the whole backlog, as Linux does.
                    let e = self.pop(i)?;
                    Some((e, self.bytes))
                },
                sig,
            );
            self.queues[i].codel = codel;
            match got {
                Some(e) => {
                    self.queues[i].deficit -= e.packet.wire_bytes as i64;
                    return Some(e);
                }
                None => {
                    self.pop_list(from_new);
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(i as u32);
                    } else {
                        self.queues[i].listed = false;
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_transport::packet::Kind;

    /// A bulk flow arriving at twice the line rate and a sparse flow sending one small packet
    /// every 20 ms through one FQ-CoDel queue: the sparse flow's packets join the new-flow
    /// list and leave at the next dequeue, so their delay stays within one packet's
    /// transmission, while the bulk flow's queue sits at CoDel's target or above.
    #[test]
    fn sparse_flow_is_isolated_from_a_bulk_one() {
        let mut fq = FqCodel::new(
            &FqCodelConfig::default(),
            false,
            QueueLimit::Packets(10_240),
        );
        let mut sig = Signals::default();
        let tx_ns = 1_000_000; // 1500 bytes at 12 Mbps
        let (mut bulk_next, mut sparse_next) = (0u64, 5_000_000u64);
        let mut now = 0;
        let mut sparse_delays = Vec::new();
        let mut bulk_delays = Vec::new();
        while now < 3_000_000_000 {
            while bulk_next <= now {
                fq.enqueue(bulk_next, Packet::control(0, Kind::Data, 1500, 0), &mut sig);
                bulk_next += tx_ns / 2;
            }
            while sparse_next <= now {
                fq.enqueue(
                    sparse_next,
                    Packet::control(1, Kind::Data, 100, 0),
                    &mut sig,
                );
                sparse_next += 20_000_000;
            }
            let e = fq
                .dequeue(now, &mut sig)
                .expect("bulk keeps the queue busy");
            let delay = now - e.enqueued_ns;
            if e.packet.flow == 1 {
                sparse_delays.push(delay);
            } else if now > 1_000_000_000 {
                bulk_delays.push(delay);
            }
            now += e.packet.wire_bytes as u64 * 8 * 1_000_000_000 / 12_000_000;
        }
        assert!(sparse_delays.len() > 100);
        let worst = *sparse_delays.iter().max().unwrap();
        assert!(worst <= tx_ns, "sparse flow waited {worst} ns");
        let bulk_mean = bulk_delays.iter().sum::<u64>() / bulk_delays.len() as u64;
        assert!(bulk_mean >= 5_000_000, "bulk mean delay {bulk_mean} ns");
        assert!(!sig.dropped.is_empty(), "CoDel drops the bulk flow");
        assert!(sig.dropped.iter().all(|p| p.flow == 0));
    }

    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut fq = FqCodel::new(&FqCodelConfig::default(), false, QueueLimit::Packets(4));
        let mut sig = Signals::default();
        for _ in 0..3 {
            fq.enqueue(0, Packet::control(0, Kind::Data, 1500, 0), &mut sig);
        }
        fq.enqueue(0, Packet::control(1, Kind::Data, 100, 0), &mut sig);
        assert!(sig.dropped.is_empty());
        // The fifth packet is the sparse flow's, but the bulk flow pays.
        assert!(fq.enqueue(0, Packet::control(1, Kind::Data, 100, 0), &mut sig));
        assert_eq!(sig.dropped.len(), 1);
        assert_eq!(sig.dropped[0].flow, 0);
        assert_eq!((fq.len(), fq.bytes()), (4, 3200));
    }
}
