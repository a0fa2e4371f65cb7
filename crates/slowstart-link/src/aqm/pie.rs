//! PIE, RFC 8033: random early drop at enqueue with a probability that a PI controller on the
//! queueing delay updates every `t_update`.
//!
//! The queueing delay is the sojourn time of the last packet dequeued, 0 when the queue
//! empties (the timestamp method Linux uses by default rather than §5.2's departure-rate
//! estimate; it also follows a link whose rate changes). The periodic update runs lazily: an
//! enqueue or dequeue first performs every update that fell due since the last one, with the
//! delay as it stood then (nothing changes it between packet events). PIE is active from the
//! start (§5.3's activation is optional); §5.4's derandomisation and §5.5's cap on a single
//! adjustment are included.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Entry, Fifo, Signals};
use slowstart_config::PieConfig;
use slowstart_transport::packet::Packet;

/// `MEAN_PKTSIZE` of §4.1's work-conserving safeguard: no early drop with fewer bytes queued
/// than two of these.
const MEAN_PKTSIZE: u64 = 1500;
/// §5.1: mark instead of dropping only while the drop probability is at most 10%.
const MARK_ECN_THRESHOLD: f64 = 0.1;

pub struct Pie {
    cfg: PieConfig,
    ecn: bool,
    pub fifo: Fifo,
    pub drop_prob: f64,
    accu_prob: f64,
    pub qdelay_ns: u64,
    pub qdelay_old_ns: u64,
    pub burst_allowance_ns: u64,
    next_update_ns: u64,
}

impl Pie {
    pub fn new(cfg: &PieConfig, ecn: bool) -> Self {
        Pie {
            cfg: *cfg,
            ecn,
            fifo: Fifo::default(),
            drop_prob: 0.0,
            accu_prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            // §4.4: the burst allowance starts at MAX_BURST.
            burst_allowance_ns: cfg.max_burst_ns,
            next_update_ns: cfg.t_update_ns,
        }
    }

    /// Perform every periodic update due by `now`.
    fn catch_up(&mut self, now: u64) {
        while self.next_update_ns <= now {
            self.update();
            self.next_update_ns += self.cfg.t_update_ns;
            // Idle and settled: later updates change nothing until a packet comes.
            if self.drop_prob == 0.0
                && self.qdelay_ns == 0
                && self.qdelay_old_ns == 0
                && self.burst_allowance_ns == self.cfg.max_burst_ns
                && self.next_update_ns <= now
            {
                let behind = (now - self.next_update_ns) / self.cfg.t_update_ns + 1;
                self.next_update_ns += behind * self.cfg.t_update_ns;
            }
        }
    }

    /// RFC 8033 §4.2 `calculate_drop_prob`, one T_UPDATE step.
    pub fn update(&mut self) {
        let (qdelay, old, target) = (
            self.qdelay_ns as f64 / 1e9,
            self.qdelay_old_ns as f64 / 1e9,
            self.cfg.target_ns as f64 / 1e9,
        );
        let mut p = self.cfg.alpha * (qdelay - target) + self.cfg.beta * (qdelay - old);
        // §4.2: scale the step to the current probability so that it adapts smoothly.
        p /= match self.drop_prob {
            x if x < 0.000001 => 2048.0,
            x if x < 0.00001 => 512.0,
            x if x < 0.0001 => 128.0,
            x if x < 0.001 => 32.0,
            x if x < 0.01 => 8.0,
            x if x < 0.1 => 2.0,
            _ => 1.0,
        };
        // §5.5: above 10%, one update raises the probability by at most 2%.
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // §4.2: decay exponentially once the queue has been empty for two updates.
        if self.qdelay_ns == 0 && self.qdelay_old_ns == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4: spend the burst allowance; refill it once the queue is calm again.
        self.burst_allowance_ns = self.burst_allowance_ns.saturating_sub(self.cfg.t_update_ns);
        if self.drop_prob == 0.0
            && self.qdelay_ns < self.cfg.target_ns / 2
            && self.qdelay_old_ns < self.cfg.target_ns / 2
        {
            self.burst_allowance_ns = self.cfg.max_burst_ns;
        }
        self.qdelay_old_ns = self.qdelay_ns;
    }

    /// §4.1 with §5.4's derandomisation: whether to drop an arriving packet.
    fn drop_early(&mut self, rng: &mut Xoshiro256PlusPlus) -> bool {
        // Work-conserving safeguard.
        if (self.qdelay_old_ns < self.cfg.target_ns / 2 && self.drop_prob < 0.2)
            || self.fifo.bytes <= 2 * MEAN_PKTSIZE
        {
            return false;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if rng.random::<f64>() < self.drop_prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    pub fn enqueue(
        &mut self,
        now: u64,
        mut packet: Packet,
        rng: &mut Xoshiro256PlusPlus,
        sig: &mut Signals,
    ) -> bool {
        self.catch_up(now);
        if self.drop_early(rng) && self.burst_allowance_ns == 0 {
            let mark = self.drop_prob <= MARK_ECN_THRESHOLD;
            if !(mark && sig.mark(self.ecn, &mut packet)) {
                return false;
            }
        }
        self.fifo.push(Entry {
            packet,
            enqueued_ns: now,
        });
        true
    }

    pub fn dequeue(&mut self, now: u64) -> Option<Entry> {
        self.catch_up(now);
        let e = self.fifo.pop()?;
        self.qdelay_ns = if self.fifo.q.is_empty() {
            0
        } else {
            now - e.enqueued_ns
        };
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8033 §4.2 worked by hand: from p = 0 with the delay 15 ms above target and grown
    /// 15 ms since the last update, the raw step alpha·0.015 + beta·0.015 = 0.020625 is divided
    /// by 2048 (p < 0.000001); at p = 0.05 the same step is halved; at p = 0.5 it is capped at
    /// 0.02 (§5.5); and an empty queue decays p by 2% per update.
    #[test]
    fn probability_update_follows_the_rfc() {
        let mut pie = Pie::new(&PieConfig::default(), false);
        pie.qdelay_old_ns = 15_000_000;
        pie.qdelay_ns = 30_000_000;
        pie.update();
        let step = 0.125 * 0.015 + 1.25 * 0.015;
        assert!((pie.drop_prob - step / 2048.0).abs() < 1e-15);
        assert_eq!(pie.qdelay_old_ns, 30_000_000);

        pie.drop_prob = 0.05;
        pie.qdelay_old_ns = 15_000_000;
        pie.update();
        assert!((pie.drop_prob - (0.05 + step / 2.0)).abs() < 1e-12);

        pie.drop_prob = 0.5;
        pie.qdelay_old_ns = 0;
        pie.qdelay_ns = 200_000_000;
        pie.update();
        assert!((pie.drop_prob - 0.52).abs() < 1e-12);

        // Below target the probability falls; with an empty queue it also decays.
        pie.drop_prob = 0.5;
        pie.qdelay_ns = 0;
        pie.qdelay_old_ns = 0;
        pie.update();
        let raw: f64 = 0.125 * (0.0 - 0.015);
        assert!((pie.drop_prob - (0.5 + raw) * 0.98).abs() < 1e-12);
    }

    #[test]
    fn burst_allowance_runs_down_then_refills() {
        let mut pie = Pie::new(&PieConfig::default(), false);
        assert_eq!(pie.burst_allowance_ns, 150_000_000);
        pie.qdelay_ns = 40_000_000;
        for _ in 0..10 {
            pie.update();
        }
        assert_eq!(pie.burst_allowance_ns, 0);
        pie.qdelay_ns = 0;
        for _ in 0..100 {
            pie.update();
        }
        assert_eq!(pie.drop_prob, 0.0);
        assert_eq!(pie.burst_allowance_ns, 150_000_000);
    }
}
