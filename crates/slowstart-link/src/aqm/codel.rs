//! CoDel, RFC 8289: drop (or mark) at dequeue once the sojourn time has stayed above `target`
//! for an `interval`, then at intervals shrinking as interval/sqrt(count) while it stays above.

use super::{Entry, Fifo, Signals};
use slowstart_config::CodelConfig;
use slowstart_transport::packet::Packet;

/// CoDel's parameters (RFC 8289 §5.2: TARGET, INTERVAL, maxpacket).
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub mtu_bytes: u64,
}

/// CoDel's per-queue state (RFC 8289 §5.1 / §5.3), dequeue side only.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    /// When the sojourn time will have been above target for an interval (0: it is below).
    first_above_time: u64,
    /// When the next drop is due while dropping.
    drop_next: u64,
    /// Drops since entering the dropping state.
    pub count: u32,
    lastcount: u32,
    pub dropping: bool,
}

/// RFC 8289 §5.4 `control_law`: the next drop time, `interval / sqrt(count)` after `t`.
pub fn control_law(t: u64, interval_ns: u64, count: u32) -> u64 {
    t + (interval_ns as f64 / (count.max(1) as f64).sqrt()) as u64
}

impl Vars {
    /// RFC 8289 §5.5 `dodequeue`: the head packet and whether it may be dropped. `pop` returns
    /// it with the bytes still queued behind it.
    fn dodequeue(
        &mut self,
        now: u64,
        p: &Params,
        pop: &mut impl FnMut() -> Option<(Entry, u64)>,
    ) -> (Option<Entry>, bool) {
        let Some((e, backlog)) = pop() else {
            // The queue is empty: leave the above-target state.
            self.first_above_time = 0;
            return (None, false);
        };
        let sojourn = now - e.enqueued_ns;
        let mut ok_to_drop = false;
        if sojourn < p.target_ns || backlog <= p.mtu_bytes {
            // Below target, or too few bytes queued to form a standing queue.
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            // Just went above target; wait an interval before dropping.
            self.first_above_time = now + p.interval_ns;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(e), ok_to_drop)
    }

    /// RFC 8289 §5.6 `dequeue`. With ECN a congestion signal marks the packet and sends it
    /// (Linux `codel_dequeue` does the same) instead of dropping it and taking the next.
    pub fn dequeue(
        &mut self,
        now: u64,
        p: &Params,
        ecn: bool,
        mut pop: impl FnMut() -> Option<(Entry, u64)>,
        sig: &mut Signals,
    ) -> Option<Entry> {
        let (mut r, mut ok_to_drop) = self.dodequeue(now, p, &mut pop);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time fell below target: leave the dropping state.
                self.dropping = false;
            }
            // Drop as many packets as the control law says are due (§5.6).
            while self.dropping && now >= self.drop_next {
                let mut e = r.expect("ok_to_drop implies a packet");
                self.count += 1;
                if sig.mark(ecn, &mut e.packet) {
                    self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
                    return Some(e);
                }
                sig.dropped.push(e.packet);
                (r, ok_to_drop) = self.dodequeue(now, p, &mut pop);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, p.interval_ns, self.count);
                }
            }
        } else if ok_to_drop {
            // Enter the dropping state with one drop (§5.6).
            let mut e = r.expect("ok_to_drop implies a packet");
            if sig.mark(ecn, &mut e.packet) {
                r = Some(e);
            } else {
                sig.dropped.push(e.packet);
                (r, _) = self.dodequeue(now, p, &mut pop);
            }
            self.dropping = true;
            // If we were dropping recently, start from the rate that controlled the queue then.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if delta > 1
                && (now as i128 - self.drop_next as i128) < 16 * p.interval_ns as i128
            {
                delta
            } else {
                1
            };
            self.drop_next = control_law(now, p.interval_ns, self.count);
            self.lastcount = self.count;
        }
        r
    }
}

/// A single CoDel queue.
pub struct Codel {
    params: Params,
    ecn: bool,
    pub vars: Vars,
    pub fifo: Fifo,
}

impl Codel {
    pub fn new(c: &CodelConfig, ecn: bool) -> Self {
        Codel {
            params: Params {
                target_ns: c.target_ns,
                interval_ns: c.interval_ns,
                mtu_bytes: c.mtu_bytes,
            },
            ecn,
            vars: Vars::default(),
            fifo: Fifo::default(),
        }
    }

    /// CoDel accepts every packet the buffer has room for (RFC 8289 §5.3).
    pub fn enqueue(&mut self, now: u64, packet: Packet) -> bool {
        self.fifo.push(Entry {
            packet,
            enqueued_ns: now,
        });
        true
    }

    pub fn dequeue(&mut self, now: u64, sig: &mut Signals) -> Option<Entry> {
        let fifo = &mut self.fifo;
        self.vars.dequeue(
            now,
            &self.params,
            self.ecn,
            || fifo.pop().map(|e| (e, fifo.bytes)),
            sig,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_transport::packet::{Kind, CE, ECT};

    fn pkt(flow: u32) -> Packet {
        Packet::control(flow, Kind::Data, 1500, 0)
    }

    /// A queue kept full by arrivals faster than departures: after the first interval above
    /// target, drop k+1 follows drop k by interval/sqrt(k) (RFC 8289 §5.4).
    #[test]
    fn drop_spacing_is_interval_over_sqrt_count() {
        let mut c = Codel::new(&CodelConfig::default(), false);
        let mut sig = Signals::default();
        // 1500-byte packets: arrive every 0.5 ms, depart every 1 ms.
        let mut drop_times = Vec::new();
        let mut t_in = 0u64;
        let mut now = 0u64;
        while now < 2_000_000_000 {
            while t_in <= now {
                c.enqueue(t_in, pkt(0));
                t_in += 500_000;
            }
            let before = sig.dropped.len();
            let got = c.dequeue(now, &mut sig);
            for _ in before..sig.dropped.len() {
                drop_times.push(now);
            }
            assert!(got.is_some());
            now += 1_000_000;
        }
        // First drop: an interval after the sojourn time first exceeded 5 ms (at ~10 ms).
        assert!(drop_times[0] >= 100_000_000 && drop_times[0] <= 120_000_000);
        for k in 1..20 {
            let gap = drop_times[k] - drop_times[k - 1];
            let law = (100e6 / (k as f64).sqrt()) as u64;
            // Dequeues happen every 1 ms, so a due drop waits at most that long.
            assert!(
                gap + 1_000_000 > law && gap <= law + 1_000_000,
                "drop {k}: gap {gap} ns, control law {law} ns"
            );
        }
        assert!(c.vars.dropping);
    }

    #[test]
    fn no_drops_below_target_or_with_one_packet_queued() {
        let mut c = Codel::new(&CodelConfig::default(), false);
        let mut sig = Signals::default();
        // One packet queued for a second: sojourn far above target, but only one MTU queued.
        for i in 0..10 {
            c.enqueue(i * 1_000_000_000, pkt(0));
            assert!(c
                .dequeue(i * 1_000_000_000 + 900_000_000, &mut sig)
                .is_some());
        }
        assert!(sig.dropped.is_empty());
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut c = Codel::new(&CodelConfig::default(), true);
        let mut sig = Signals::default();
        let mut marked = 0;
        let mut t_in = 0u64;
        for ms in 0..1000u64 {
            let now = ms * 1_000_000;
            while t_in <= now {
                let mut p = pkt(0);
                p.set(ECT, true);
                c.enqueue(t_in, p);
                t_in += 500_000;
            }
            if c.dequeue(now, &mut sig).unwrap().packet.has(CE) {
                marked += 1;
            }
        }
        assert!(sig.dropped.is_empty());
        assert_eq!(sig.marks, marked);
        assert!(marked > 5, "{marked}");
    }
}
