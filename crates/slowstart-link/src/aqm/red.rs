//! RED, Floyd and Jacobson 1993 ("Random Early Detection Gateways for Congestion Avoidance"),
//! with the gentle variant (Floyd 2000). Decisions at enqueue from an exponentially weighted
//! average of the queue length in packets.

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Entry, Fifo, Signals};
use slowstart_config::RedConfig;
use slowstart_transport::packet::Packet;

/// Bytes of the "typical small packet" whose transmission time converts idle time to the
/// number of packets that could have been sent (the paper's `m = f(time - q_time)`).
const TYPICAL_PACKET: u64 = 1500;

pub struct Red {
    cfg: RedConfig,
    ecn: bool,
    pub fifo: Fifo,
    /// Average queue length, packets.
    pub avg: f64,
    /// Packets since the last mark or drop (-1 below min_th).
    pub count: i64,
    /// When the queue last became empty, if it is empty.
    idle_since: Option<u64>,
    typical_tx_ns: f64,
}

/// What RED decides for one arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    Enqueue,
    /// Early mark or drop with this probability (already drawn as true).
    Early,
    /// Forced: above max_th (2 max_th with gentle).
    Forced,
}

impl Red {
    pub fn new(cfg: &RedConfig, ecn: bool, rate_bps: u64) -> Self {
        Red {
            cfg: *cfg,
            ecn,
            fifo: Fifo::default(),
            avg: 0.0,
            count: -1,
            idle_since: Some(0),
            typical_tx_ns: TYPICAL_PACKET as f64 * 8e9 / rate_bps as f64,
        }
    }

    /// The paper's average update on an arrival at `now` with `q` packets queued: an EWMA with
    /// weight w_q, or after an idle period, decayed as if m packets of size zero had arrived.
    pub fn update_average(&mut self, now: u64, q: usize) {
        match self.idle_since {
            Some(t) if q == 0 => {
                let m = (now - t) as f64 / self.typical_tx_ns;
                self.avg *= (1.0 - self.cfg.w_q).powf(m);
            }
            _ => self.avg = (1.0 - self.cfg.w_q) * self.avg + self.cfg.w_q * q as f64,
        }
    }

    /// The marking probability p_b for the current average: linear from 0 at min_th to max_p
    /// at max_th, then (gentle) from max_p to 1 at 2 max_th. `None` above the range.
    pub fn base_probability(&self) -> Option<f64> {
        let c = &self.cfg;
        if self.avg < c.min_th {
            Some(0.0)
        } else if self.avg < c.max_th {
            Some(c.max_p * (self.avg - c.min_th) / (c.max_th - c.min_th))
        } else if c.gentle && self.avg < 2.0 * c.max_th {
            Some(c.max_p + (1.0 - c.max_p) * (self.avg - c.max_th) / c.max_th)
        } else {
            None
        }
    }

    /// The paper's §4 algorithm for one arrival (after the average update).
    pub fn decide(&mut self, rng: &mut Xoshiro256PlusPlus) -> Decision {
        match self.base_probability() {
            Some(0.0) => {
                self.count = -1;
                Decision::Enqueue
            }
            Some(pb) => {
                self.count += 1;
                // p_a = p_b / (1 - count·p_b): spreads marks evenly between them.
                let denom = 1.0 - self.count as f64 * pb;
                let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
                if rng.random::<f64>() < pa {
                    self.count = 0;
                    Decision::Early
                } else {
                    Decision::Enqueue
                }
            }
            None => {
                self.count = 0;
                Decision::Forced
            }
        }
    }

    pub fn enqueue(
        &mut self,
        now: u64,
        mut packet: Packet,
        rng: &mut Xoshiro256PlusPlus,
        sig: &mut Signals,
    ) -> bool {
        self.update_average(now, self.fifo.q.len());
        match self.decide(rng) {
            Decision::Enqueue => {}
            // RFC 3168 §7: early signals may be marks; forced ones are drops, unless hard drops
            // are off (ns-3 RedQueueDisc `UseHardDrop`).
            Decision::Early if sig.mark(self.ecn, &mut packet) => {}
            Decision::Forced if !self.cfg.hard_drop && sig.mark(self.ecn, &mut packet) => {}
            Decision::Early | Decision::Forced => return false,
        }
        self.idle_since = None;
        self.fifo.push(Entry {
            packet,
            enqueued_ns: now,
        });
        true
    }

    pub fn dequeue(&mut self, now: u64) -> Option<Entry> {
        let e = self.fifo.pop()?;
        if self.fifo.q.is_empty() {
            // Strictly the queue empties when this packet finishes transmission; the
            // difference is one packet time.
            self.idle_since = Some(now);
        }
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn red() -> Red {
        Red::new(&RedConfig::default(), false, 12_000_000)
    }

    #[test]
    fn average_is_the_papers_ewma_and_decays_when_idle() {
        let mut r = red();
        r.idle_since = None;
        let mut avg = 0.0;
        for q in [3usize, 10, 20, 20, 7] {
            r.update_average(0, q);
            avg = (1.0 - 0.002) * avg + 0.002 * q as f64;
            assert!((r.avg - avg).abs() < 1e-12);
        }
        // Idle for 100 typical packet times (1 ms each at 12 Mbps): avg·(1 - w_q)^100.
        r.avg = 10.0;
        r.idle_since = Some(0);
        r.update_average(100_000_000, 0);
        assert!((r.avg - 10.0 * 0.998f64.powi(100)).abs() < 1e-9);
    }

    #[test]
    fn probability_is_linear_then_gentle_then_forced() {
        let mut r = red();
        r.avg = 4.9;
        assert_eq!(r.base_probability(), Some(0.0));
        r.avg = 10.0; // halfway from 5 to 15
        assert!((r.base_probability().unwrap() - 0.01).abs() < 1e-12);
        r.avg = 22.5; // halfway from 15 to 30: max_p + (1 - max_p)/2
        assert!((r.base_probability().unwrap() - (0.02 + 0.98 * 0.5)).abs() < 1e-12);
        r.avg = 30.0;
        assert_eq!(r.base_probability(), None);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        assert_eq!(r.decide(&mut rng), Decision::Forced);
        // Without gentle, everything above max_th is forced.
        r.cfg.gentle = false;
        r.avg = 15.5;
        assert_eq!(r.base_probability(), None);
    }

    #[test]
    fn count_spreads_early_drops() {
        // p_b = 0.01: p_a = 0.01 / (1 - count·0.01) reaches 1 at count 99, so the gap between
        // marks is uniform on 1..=100 (the paper's §4: marks spread evenly, not clustered).
        let mut r = red();
        r.avg = 10.0;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut gaps = Vec::new();
        let mut since = 0;
        for _ in 0..20_000 {
            since += 1;
            if r.decide(&mut rng) == Decision::Early {
                gaps.push(since);
                since = 0;
            }
        }
        assert!(gaps.iter().all(|&g| g <= 100), "{:?}", gaps.iter().max());
        let mean = gaps.iter().sum::<i32>() as f64 / gaps.len() as f64;
        // Uniform on 1..=100 has mean 50.5; allow sampling noise.
        assert!((mean - 50.5).abs() < 3.0, "{mean}");
    }

    /// DCTCP's step as RED (min_th = max_th = K, w_q = 1, gentle and hard drops off): an arrival
    /// finding K or more packets queued is marked, one finding fewer is not; a packet that is not
    /// ECN-capable is dropped where the mark would go.
    #[test]
    fn step_marks_every_arrival_at_k_or_more() {
        use slowstart_transport::packet::{Kind, CE, ECT};
        let cfg = RedConfig {
            min_th: 3.0,
            max_th: 3.0,
            w_q: 1.0,
            gentle: false,
            hard_drop: false,
            ..Default::default()
        };
        let mut r = Red::new(&cfg, true, 12_000_000);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut sig = Signals::default();
        let mut ect = Packet::control(0, Kind::Data, 1500, 0);
        ect.set(ECT, true);
        for n in 0..6 {
            assert!(r.enqueue(n, ect, &mut rng, &mut sig));
            let marked = r.fifo.q.back().unwrap().packet.has(CE);
            assert_eq!(marked, n >= 3, "arrival {n}");
        }
        assert_eq!(sig.marks, 3);
        let plain = Packet::control(0, Kind::Data, 1500, 0);
        assert!(!r.enqueue(6, plain, &mut rng, &mut sig));
        // With hard drops (RFC 3168 §7), the forced signal drops even an ECN-capable packet.
        let mut hard = Red::new(
            &RedConfig {
                hard_drop: true,
                ..cfg
            },
            true,
            12_000_000,
        );
        for n in 0..3 {
            assert!(hard.enqueue(n, ect, &mut rng, &mut sig));
        }
        assert!(!hard.enqueue(3, ect, &mut rng, &mut sig));
    }
}
