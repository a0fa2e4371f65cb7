//! DualPI2, RFC 9332 (Linux sch_dualpi2.c): two queues under one PI controller. Packets marked
//! ECT(1) or CE (the L4S identifier, RFC 9331 §8) wait in the L queue, every other packet in
//! the C (classic) queue.
//!
//! Every `t_update` the base probability p' follows the larger of the two queues' head sojourn
//! times: p' += alpha t_update (qdelay - target) + beta t_update (qdelay - qdelay_before),
//! within [0, 1] (RFC 9332 Appendix A.1). At dequeue a C packet is dropped, or marked if it is
//! ECN-capable and the direction marks, with p_C = p'^2; an L packet is marked with
//! p_CL = k p' (the coupling) or whenever it waited `step` or more (the L queue's native step
//! AQM). Both decisions are taken at dequeue, Linux's default (`drop_early` off). When both
//! queues hold packets the L queue goes first, but the C queue gets `c_protection` of the bytes
//! (Linux's weighted credit, default 10%). The buffer is the direction's (Linux's `limit`,
//! 10 000 packets by default, is `buffer = "10000pkt"`). Overload (k p' above 1, RFC 9332
//! §4.2.3) drops instead of marking, as Linux's `drop_overload` does (see [`DualPi2Config`]).
//! Not modelled: Linux's rule of no signal below two MTUs of backlog, GSO splitting, memory
//! accounting.
//!
//! The periodic update runs lazily as PIE's does: an enqueue or dequeue first performs every
//! update that fell due since the last one, with the queues as they stood then.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Entry, Fifo, Signals};
use slowstart_config::DualPi2Config;
use slowstart_transport::packet::{Packet, CE, ECT1};

pub struct DualPi2 {
    cfg: DualPi2Config,
    ecn: bool,
    pub l: Fifo,
    pub c: Fifo,
    /// The base probability p'.
    pub prob: f64,
    qdelay_before_ns: u64,
    next_update_ns: u64,
    /// 0 or above: the L queue goes next; below 0: the C queue is owed bytes. Changes only
    /// while both queues wait.
    credit: f64,
}

impl DualPi2 {
    pub fn new(cfg: &DualPi2Config, ecn: bool) -> Self {
        DualPi2 {
            cfg: *cfg,
            ecn,
            l: Fifo::default(),
            c: Fifo::default(),
            prob: 0.0,
            qdelay_before_ns: 0,
            next_update_ns: cfg.t_update_ns,
            credit: 0.0,
        }
    }

    /// The L4S identifier: ECT(1), or CE (which may have been ECT(1)), RFC 9331 §8.
    pub fn is_l4s(p: &Packet) -> bool {
        p.has(ECT1) || p.has(CE)
    }

    fn head_sojourn(fifo: &Fifo, at: u64) -> u64 {
        fifo.q
            .front()
            .map_or(0, |e| at.saturating_sub(e.enqueued_ns))
    }

    /// Perform every periodic update due by `now` (RFC 9332 Appendix A.1 `dualpi2_update`).
    fn catch_up(&mut self, now: u64) {
        let t = self.cfg.t_update_ns as f64 / 1e9;
        while self.next_update_ns <= now {
            let at = self.next_update_ns;
            // Linux: the larger of the two queues' delays.
            let qdelay = Self::head_sojourn(&self.c, at).max(Self::head_sojourn(&self.l, at));
            let error = (qdelay as f64 - self.cfg.target_ns as f64) / 1e9;
            let change = (qdelay as f64 - self.qdelay_before_ns as f64) / 1e9;
            // Without drop on overload, Linux caps p' at 1/k (`calculate_probability`).
            let ceiling = if self.cfg.drop_overload {
                1.0
            } else {
                (1.0 / self.cfg.coupling).min(1.0)
            };
            self.prob = (self.prob + self.cfg.alpha * t * error + self.cfg.beta * t * change)
                .clamp(0.0, ceiling);
            self.qdelay_before_ns = qdelay;
            self.next_update_ns += self.cfg.t_update_ns;
            // Idle and settled: later updates change nothing until a packet comes.
            let idle = self.l.q.is_empty() && self.c.q.is_empty();
            if self.prob == 0.0 && qdelay == 0 && idle && self.next_update_ns <= now {
                self.next_update_ns +=
                    (now - self.next_update_ns) / self.cfg.t_update_ns * self.cfg.t_update_ns;
            }
        }
    }

    pub fn enqueue(&mut self, now: u64, packet: Packet) -> bool {
        self.catch_up(now);
        let e = Entry {
            packet,
            enqueued_ns: now,
        };
        if Self::is_l4s(&packet) {
            self.l.push(e);
        } else {
            self.c.push(e);
        }
        true
    }

    /// Which queue serves next: the L queue unless it is empty or the C queue is owed bytes.
    fn take(&mut self) -> Option<(Entry, bool)> {
        let both = !self.l.q.is_empty() && !self.c.q.is_empty();
        let c_owed = both && self.credit < 0.0;
        let from_l = !self.l.q.is_empty() && !c_owed;
        let e = if from_l { self.l.pop()? } else { self.c.pop()? };
        if both {
            let bytes = e.packet.wire_bytes as f64;
            let share = self.cfg.c_protection;
            // Serving C moves the credit up by the L share, serving L down by the C share: C
            // gets `share` of the bytes while both wait.
            self.credit += if from_l {
                -share * bytes
            } else {
                (1.0 - share) * bytes
            };
        }
        Some((e, from_l))
    }

    pub fn dequeue(
        &mut self,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
        sig: &mut Signals,
    ) -> Option<Entry> {
        self.catch_up(now);
        loop {
            let (mut e, from_l) = self.take()?;
            let p_c = self.prob * self.prob;
            let overload = self.overloaded();
            if from_l {
                // Overload: the classic drop first, then every L packet is marked (Linux
                // `dualpi2_scalable_marking`).
                if overload && rng.random::<f64>() < p_c {
                    sig.dropped.push(e.packet);
                    continue;
                }
                let sojourn = now.saturating_sub(e.enqueued_ns);
                let coupled = (self.cfg.coupling * self.prob).min(1.0);
                if overload || sojourn >= self.cfg.step_ns || rng.random::<f64>() < coupled {
                    // An L packet is ECT(1) or CE already: it can always be marked.
                    if !e.packet.has(CE) {
                        e.packet.set(CE, true);
                        sig.marks += 1;
                    }
                }
                return Some(e);
            }
            if p_c > 0.0 && rng.random::<f64>() < p_c {
                // Overload: ECN-capable or not, the C packet is dropped (Linux
                // `dualpi2_classic_marking`).
                let ecn_capable = e.packet.ecn_capable() && !overload;
                if !sig.mark(self.ecn && ecn_capable, &mut e.packet) {
                    sig.dropped.push(e.packet);
                    continue;
                }
            }
            return Some(e);
        }
    }

    /// RFC 9332 §4.2.3 overload: the coupled L probability k p' exceeds 1 (Linux
    /// `must_drop`), with drop on overload configured.
    fn overloaded(&self) -> bool {
        self.cfg.drop_overload && self.cfg.coupling * self.prob > 1.0
    }

    pub fn len(&self) -> usize {
        self.l.q.len() + self.c.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }

    pub fn packets(&self) -> impl Iterator<Item = &Packet> + '_ {
        self.l.q.iter().chain(self.c.q.iter()).map(|e| &e.packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use slowstart_transport::packet::{Kind, ECT};

    const MS: u64 = 1_000_000;

    fn packet(l4s: bool) -> Packet {
        let mut p = Packet::control(0, Kind::Data, 1500, 0);
        p.set(ECT, !l4s);
        p.set(ECT1, l4s);
        p
    }

    #[test]
    fn the_pi_update_follows_rfc_9332_appendix_a() {
        let cfg = DualPi2Config::default();
        let mut q = DualPi2::new(&cfg, true);
        // A classic packet arrives at 0; at the first update, 16 ms, it has waited 16 ms:
        // p' = alpha T (16 - 15 ms) + beta T (16 - 0 ms).
        q.enqueue(0, packet(false));
        q.catch_up(16 * MS);
        let t = 0.016;
        let expected = cfg.alpha * t * 0.001 + cfg.beta * t * 0.016;
        assert!((q.prob - expected).abs() < 1e-12, "{} {expected}", q.prob);
        // At 32 ms: 32 ms of sojourn, 16 ms more than before.
        q.catch_up(32 * MS);
        let expected = expected + cfg.alpha * t * 0.017 + cfg.beta * t * 0.016;
        assert!((q.prob - expected).abs() < 1e-12);
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_which_is_served_first() {
        let mut q = DualPi2::new(&DualPi2Config::default(), true);
        let mut ce = packet(false);
        ce.set(CE, true);
        q.enqueue(0, packet(false));
        q.enqueue(0, packet(true));
        q.enqueue(0, ce);
        assert_eq!((q.l.q.len(), q.c.q.len()), (2, 1));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut sig = Signals::default();
        let first = q.dequeue(1, &mut rng, &mut sig).unwrap();
        assert!(DualPi2::is_l4s(&first.packet));
    }

    /// While both queues wait, the C queue gets `c_protection` (10%) of the bytes.
    #[test]
    fn classic_protection_gives_c_a_tenth_of_the_bytes() {
        let mut q = DualPi2::new(&DualPi2Config::default(), true);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut sig = Signals::default();
        for _ in 0..1000 {
            q.enqueue(0, packet(false));
            q.enqueue(0, packet(true));
        }
        let mut from_c = 0;
        for _ in 0..500 {
            let e = q.dequeue(0, &mut rng, &mut sig).unwrap();
            from_c += !DualPi2::is_l4s(&e.packet) as u32;
        }
        assert_eq!(from_c, 50);
    }

    /// The L queue's step marks a packet that waited 1 ms or more, and only those while p' is 0.
    #[test]
    fn the_step_marks_l_packets_that_waited_the_threshold() {
        let mut q = DualPi2::new(&DualPi2Config::default(), true);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut sig = Signals::default();
        q.enqueue(0, packet(true));
        q.enqueue(0, packet(true));
        let early = q.dequeue(MS - 1, &mut rng, &mut sig).unwrap();
        let late = q.dequeue(MS, &mut rng, &mut sig).unwrap();
        assert!(!early.packet.has(CE) && late.packet.has(CE));
        assert_eq!(sig.marks, 1);
    }

    /// With p' = 0.5, classic packets see p_C = 0.25 and L packets p_CL = min(1, 2 x 0.5) = 1.
    #[test]
    fn coupling_marks_l_at_k_p_and_drops_c_at_p_squared() {
        let mut q = DualPi2::new(&DualPi2Config::default(), false);
        q.prob = 0.5;
        q.next_update_ns = u64::MAX;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut sig = Signals::default();
        let n = 20_000;
        for _ in 0..n {
            q.enqueue(0, packet(false));
        }
        let mut passed = 0;
        while q.dequeue(0, &mut rng, &mut sig).is_some() {
            passed += 1;
        }
        let dropped = sig.dropped.len() as f64 / n as f64;
        assert_eq!(passed + sig.dropped.len(), n);
        assert!((dropped - 0.25).abs() < 0.01, "{dropped}");
        q.enqueue(0, packet(true));
        assert!(q.dequeue(0, &mut rng, &mut sig).unwrap().packet.has(CE));
    }

    /// RFC 9332 §4.2.3 overload, as Linux: with p' = 0.8 and k = 2, k p' > 1, so ECN-capable
    /// classic packets are dropped with p_C = 0.64 instead of marked, and L packets dropped with
    /// p_C and every other one marked. Without drop on overload p' stops at 1/k = 0.5 and
    /// every signal is a mark.
    #[test]
    fn overload_drops_instead_of_marking() {
        let n = 20_000;
        let run = |drop_overload: bool, l4s: bool| {
            let cfg = DualPi2Config {
                drop_overload,
                ..Default::default()
            };
            let mut q = DualPi2::new(&cfg, true);
            // A classic packet waiting 32 s drives p' up to its ceiling.
            q.enqueue(0, packet(false));
            q.catch_up(32_000 * MS);
            let prob = q.prob;
            q.c.q.clear();
            q.c.bytes = 0;
            q.prob = prob.min(0.8);
            q.next_update_ns = u64::MAX;
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
            let mut sig = Signals::default();
            for _ in 0..n {
                q.enqueue(0, packet(l4s));
            }
            while q.dequeue(0, &mut rng, &mut sig).is_some() {}
            (prob, sig.dropped.len(), sig.marks as usize)
        };
        let share = |count: usize| count as f64 / n as f64;
        let (prob, dropped, marks) = run(true, false);
        assert_eq!((prob, marks), (1.0, 0));
        assert!((share(dropped) - 0.64).abs() < 0.01, "{dropped}");
        let (_, dropped, marks) = run(true, true);
        assert!((share(dropped) - 0.64).abs() < 0.01, "{dropped}");
        assert_eq!(marks, n - dropped);
        let (prob, dropped, marks) = run(false, false);
        assert_eq!((prob, dropped), (0.5, 0));
        assert!((share(marks) - 0.25).abs() < 0.01, "{marks}");
    }
}
