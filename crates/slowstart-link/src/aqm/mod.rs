//! Active queue management: the disciplines a link direction may run instead of drop-tail.
//!
//! Each discipline holds the packets waiting for the transmitter and decides which of them to
//! drop or mark Congestion Experienced: at enqueue (PIE, RED), at dequeue (CoDel, and FQ-CoDel's
//! CoDel per flow queue), or by evicting another flow's packet when memory runs out (FQ-CoDel).
//! FQ-CoDel also chooses the order of service. The channel therefore serves these queues at
//! dequeue time: it takes the next packet when the transmitter frees (see `channel.rs`).
//!
//! A congestion signal marks instead of dropping when the direction has `ecn = true` and the
//! packet is ECN-capable, ECT(0) or ECT(1) alike (RFC 3168 §5; a classic AQM treats the L4S
//! identifier as ECT, RFC 9331); otherwise the packet is dropped.

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod red;

use rand_xoshiro::Xoshiro256PlusPlus;

use slowstart_config::{Discipline, QueueLimit};
use slowstart_transport::packet::{Packet, CE};

/// A packet waiting in a queue and when it arrived.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub packet: Packet,
    pub enqueued_ns: u64,
}

/// What the disciplines did besides queueing: packets dropped other than the one offered, and
/// how many were marked.
#[derive(Debug, Default)]
pub struct Signals {
    pub dropped: Vec<Packet>,
    pub marks: u64,
}

impl Signals {
    /// Signal congestion on `p`: mark it CE and keep it (true), or drop it (false).
    pub fn mark(&mut self, ecn: bool, p: &mut Packet) -> bool {
        if ecn && p.ecn_capable() {
            p.set(CE, true);
            self.marks += 1;
            true
        } else {
            false
        }
    }
}

/// A plain FIFO of entries with a byte count, the store of CoDel, PIE and RED.
#[derive(Debug, Default)]
pub struct Fifo {
    pub q: std::collections::VecDeque<Entry>,
    pub bytes: u64,
}

impl Fifo {
    pub fn push(&mut self, e: Entry) {
        self.bytes += e.packet.wire_bytes as u64;
        self.q.push_back(e);
    }

    pub fn pop(&mut self) -> Option<Entry> {
        let e = self.q.pop_front()?;
        self.bytes -= e.packet.wire_bytes as u64;
        Some(e)
    }
}

/// The discipline of one link direction, with its queued packets.
pub enum Aqm {
    Codel(codel::Codel),
    FqCodel(Box<fq_codel::FqCodel>),
    Pie(pie::Pie),
    Red(red::Red),
    DualPi2(Box<dualpi2::DualPi2>),
}

impl Aqm {
    /// `None` for drop-tail, which the channel serves on its own fast path. `rate_bps` is the
    /// line rate (RED's idle-time estimate), `limit` the direction's buffer.
    pub fn new(d: &Discipline, ecn: bool, rate_bps: u64, limit: QueueLimit) -> Option<Self> {
        Some(match d {
            Discipline::DropTail => return None,
            Discipline::Codel(c) => Aqm::Codel(codel::Codel::new(c, ecn)),
            Discipline::FqCodel(c) => Aqm::FqCodel(Box::new(fq_codel::FqCodel::new(c, ecn, limit))),
            Discipline::Pie(c) => Aqm::Pie(pie::Pie::new(c, ecn)),
            Discipline::Red(c) => Aqm::Red(red::Red::new(c, ecn, rate_bps)),
            Discipline::DualPi2(c) => Aqm::DualPi2(Box::new(dualpi2::DualPi2::new(c, ecn))),
        })
    }

    /// Whether the channel applies the buffer as a tail-drop limit before [`Self::enqueue`]
    /// (FQ-CoDel enforces its own limits by dropping from the fattest flow).
    pub fn tail_drops(&self) -> bool {
        !matches!(self, Aqm::FqCodel(_))
    }

    /// Offer `p` at `now`; false if the discipline dropped it. Other packets it drops go to
    /// `sig.dropped`.
    pub fn enqueue(
        &mut self,
        now: u64,
        p: Packet,
        rng: &mut Xoshiro256PlusPlus,
        sig: &mut Signals,
    ) -> bool {
        match self {
            Aqm::Codel(a) => a.enqueue(now, p),
            Aqm::FqCodel(a) => a.enqueue(now, p, sig),
            Aqm::Pie(a) => a.enqueue(now, p, rng, sig),
            Aqm::Red(a) => a.enqueue(now, p, rng, sig),
            Aqm::DualPi2(a) => a.enqueue(now, p),
        }
    }

    /// The next packet to transmit at `now`, if any; packets dropped on the way go to
    /// `sig.dropped`. `rng` draws DualPI2's dequeue-time decisions.
    pub fn dequeue(
        &mut self,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
        sig: &mut Signals,
    ) -> Option<Entry> {
        match self {
            Aqm::Codel(a) => a.dequeue(now, sig),
            Aqm::FqCodel(a) => a.dequeue(now, sig),
            Aqm::Pie(a) => a.dequeue(now),
            Aqm::Red(a) => a.dequeue(now),
            Aqm::DualPi2(a) => a.dequeue(now, rng, sig),
        }
    }

    /// Packets and bytes waiting (not counting the one in transmission).
    pub fn len(&self) -> usize {
        match self {
            Aqm::Codel(a) => a.fifo.q.len(),
            Aqm::FqCodel(a) => a.len(),
            Aqm::Pie(a) => a.fifo.q.len(),
            Aqm::Red(a) => a.fifo.q.len(),
            Aqm::DualPi2(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        match self {
            Aqm::Codel(a) => a.fifo.bytes,
            Aqm::FqCodel(a) => a.bytes(),
            Aqm::Pie(a) => a.fifo.bytes,
            Aqm::Red(a) => a.fifo.bytes,
            Aqm::DualPi2(a) => a.bytes(),
        }
    }

    /// Every waiting packet, in no particular order (for conservation checks).
    pub fn packets(&self) -> Box<dyn Iterator<Item = &Packet> + '_> {
        match self {
            Aqm::Codel(a) => Box::new(a.fifo.q.iter().map(|e| &e.packet)),
            Aqm::FqCodel(a) => a.packets(),
            Aqm::Pie(a) => Box::new(a.fifo.q.iter().map(|e| &e.packet)),
            Aqm::Red(a) => Box::new(a.fifo.q.iter().map(|e| &e.packet)),
            Aqm::DualPi2(a) => Box::new(a.packets()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_transport::packet::{Kind, ECT, ECT1};

    /// A classic ECN AQM marks ECT(1) as it marks ECT(0) (RFC 9331), and drops Not-ECT.
    #[test]
    fn a_classic_signal_marks_ect0_and_ect1_alike() {
        let mut sig = Signals::default();
        for (ect0, ect1, kept) in [
            (true, false, true),
            (false, true, true),
            (false, false, false),
        ] {
            let mut p = Packet::control(0, Kind::Data, 1500, 0);
            p.set(ECT, ect0);
            p.set(ECT1, ect1);
            assert_eq!(sig.mark(true, &mut p), kept);
            assert_eq!(p.has(CE), kept);
        }
        assert_eq!(sig.marks, 2);
    }
}
