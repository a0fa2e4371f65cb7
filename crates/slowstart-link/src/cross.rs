//! Cross traffic: sources without congestion control (UDP) beside the flows. A source sends
//! fixed-size packets at its rate from its start to its stop, always (`cbr`) or in on periods
//! separated by off periods (`onoff`, exponential or fixed lengths); nothing it sees slows it.
//! Its packets enter the links as the flows' do and are counted per source: sent, delivered,
//! dropped.
//!
//! Times are exact: the k-th packet of a sending period leaves at
//! `period start + ceil(k × packet bits × 10^9 / rate)` ns, so no rounding accumulates and a
//! source at rate R sends R × T bits in T within one packet.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use slowstart_transport::packet::{Kind, Packet};

use crate::channel::Channel;
use slowstart_config::CrossConfig;
use slowstart_config::{substream_seed, SeedStream};

/// The seed of source `k`'s on/off draws in a run seeded `seed`, as `Simulation::new` seeds it
/// (sim.rs: `substream_seed(cfg.seed, SeedStream::CrossSource, k)`), so that a source built elsewhere (the link
/// emulator, crates/slowstart-emu) sends at the simulated times.
pub fn source_seed(seed: u64, k: usize) -> u64 {
    substream_seed(seed, SeedStream::CrossSource, k as u64)
}

/// Per-source counts, packets and bytes on the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CrossCounts {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub packets_delivered: u64,
    pub bytes_delivered: u64,
    pub packets_dropped: u64,
    pub bytes_dropped: u64,
}

/// A cross source's row in the summary.
#[derive(Clone, Debug, Serialize)]
pub struct CrossSummary {
    pub id: u32,
    pub kind: String,
    pub src: String,
    pub dst: String,
    pub rate_bps: u64,
    pub packet_bytes: u64,
    #[serde(flatten)]
    pub counts: CrossCounts,
    /// Bytes delivered × 8 over the time from its start to its stop (or the run's end).
    pub delivered_bps: f64,
}

pub struct CrossSource {
    cfg: CrossConfig,
    /// The id its packets carry: after the flows' (`Packet::flow` = flows + index).
    pub packet_id: u32,
    pub src: u32,
    pub dst: u32,
    rate_bps: u64,
    stop_ns: u64,
    /// `onoff`: (on, off, exponential).
    onoff: Option<(u64, u64, bool)>,
    rng: Xoshiro256PlusPlus,
    /// The current sending period: its start, its end, and packets sent in it.
    period_start: u64,
    period_end: u64,
    in_period: u64,
    pub counts: CrossCounts,
}

impl CrossSource {
    /// It sends until its stop or the run's end (`run_end`, inclusive), whichever is first.
    pub fn new(
        cfg: &CrossConfig,
        packet_id: u32,
        src: u32,
        dst: u32,
        run_end: u64,
        seed: u64,
    ) -> Self {
        let mut s = CrossSource {
            cfg: cfg.clone(),
            packet_id,
            src,
            dst,
            rate_bps: cfg.rate_bps.expect("validated"),
            stop_ns: cfg
                .stop_ns
                .unwrap_or(run_end)
                .min(run_end.saturating_add(1)),
            onoff: cfg.is_onoff().then(|| cfg.periods()),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            period_start: cfg.start_ns,
            period_end: u64::MAX,
            in_period: 0,
            counts: CrossCounts::default(),
        };
        s.period_end = match s.onoff {
            Some((on, _, exp)) => s.period_start.saturating_add(s.draw(on, exp)),
            None => u64::MAX,
        };
        s
    }

    /// A period length: `mean` itself, or drawn from the exponential distribution of that mean
    /// (inversion; at least 1 ns so a period always advances time).
    fn draw(&mut self, mean: u64, exponential: bool) -> u64 {
        if !exponential || mean == 0 {
            return mean;
        }
        let u: f64 = self.rng.random();
        ((-(1.0 - u).ln() * mean as f64).round() as u64).max(1)
    }

    /// When the next packet leaves, or `None` once the source has stopped. Advances to the
    /// next on period when the current one has no room left.
    pub fn next_send(&mut self) -> Option<u64> {
        loop {
            let offset = (self.in_period as u128 * self.cfg.packet_bytes as u128 * 8_000_000_000)
                .div_ceil(self.rate_bps as u128);
            let t = (self.period_start as u128 + offset).min(u64::MAX as u128) as u64;
            if t >= self.stop_ns {
                return None;
            }
            if t < self.period_end {
                return Some(t);
            }
            let (on, off, exp) = self.onoff.expect("only on/off periods end");
            let next = self.period_end.saturating_add(self.draw(off, exp));
            self.period_start = next;
            self.period_end = next.saturating_add(self.draw(on, exp));
            self.in_period = 0;
        }
    }

    /// The packet leaving at `now` (which [`Self::next_send`] gave), counted as sent.
    pub fn send(&mut self, now: u64) -> Packet {
        let bytes = self.cfg.packet_bytes as u32;
        let mut p = Packet::control(self.packet_id, Kind::Data, bytes, now);
        p.len = bytes;
        p.seq = self.counts.bytes_sent;
        self.in_period += 1;
        self.counts.packets_sent += 1;
        self.counts.bytes_sent += bytes as u64;
        p
    }

    pub fn delivered(&mut self, p: &Packet) {
        self.counts.packets_delivered += 1;
        self.counts.bytes_delivered += p.wire_bytes as u64;
    }

    pub fn dropped(&mut self, p: &Packet) {
        self.counts.packets_dropped += 1;
        self.counts.bytes_dropped += p.wire_bytes as u64;
    }

    /// Bytes on the wire: (sent, delivered, dropped, held in `channels`), with
    /// `sent == delivered + dropped + held` when `channels` are all it crosses.
    pub fn ledger(&self, channels: &[Channel]) -> (u64, u64, u64, u64) {
        let held = channels
            .iter()
            .map(|c| c.held_data_bytes(self.packet_id))
            .sum();
        let n = &self.counts;
        (n.bytes_sent, n.bytes_delivered, n.bytes_dropped, held)
    }

    pub fn summary(&self, id: u32, end_ns: u64) -> CrossSummary {
        let active = self.stop_ns.min(end_ns).saturating_sub(self.cfg.start_ns);
        CrossSummary {
            id,
            kind: self.cfg.kind.clone(),
            src: self.cfg.src.clone(),
            dst: self.cfg.dst.clone(),
            rate_bps: self.rate_bps,
            packet_bytes: self.cfg.packet_bytes,
            counts: self.counts.clone(),
            delivered_bps: if active > 0 {
                self.counts.bytes_delivered as f64 * 8e9 / active as f64
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(kind: &str, rate_bps: u64, stop_ns: Option<u64>) -> CrossConfig {
        CrossConfig {
            kind: kind.into(),
            src: "a".into(),
            dst: "b".into(),
            rate_bps: Some(rate_bps),
            packet_bytes: 1500,
            start_ns: 1_000,
            stop_ns,
            on_ns: None,
            off_ns: None,
            distribution: None,
        }
    }

    fn sends(s: &mut CrossSource) -> Vec<u64> {
        std::iter::from_fn(|| {
            let t = s.next_send()?;
            s.send(t);
            Some(t)
        })
        .collect()
    }

    /// 1500-byte packets at 7 Mbps leave every 12000/7 µs, exactly, not rounded per packet.
    #[test]
    fn cbr_spacing_does_not_accumulate_rounding() {
        let mut s = CrossSource::new(&source("cbr", 7_000_000, None), 3, 0, 1, 1_000_000_000, 1);
        let t = sends(&mut s);
        // ceil(k × 12000 / 7 × 1000) ns after the start, for every k below the stop.
        assert_eq!(t[0], 1_000);
        assert_eq!(t[1], 1_000 + 1_714_286);
        assert_eq!(t[7], 1_000 + 12_000_000);
        // k × 12 ms / 7 < 1 s - 1 µs for k = 0..=583.
        assert_eq!(t.len(), 584);
        assert_eq!(s.counts.bytes_sent, t.len() as u64 * 1500);
    }

    /// Fixed on/off: bursts of on / gap packets every on + off.
    #[test]
    fn fixed_on_off_repeats_exactly() {
        let mut c = source("onoff", 12_000_000, Some(1_000 + 400_000_000));
        c.on_ns = Some(10_000_000);
        c.off_ns = Some(90_000_000);
        c.distribution = Some("fixed".into());
        let mut s = CrossSource::new(&c, 0, 0, 1, 10_000_000_000, 1);
        let t = sends(&mut s);
        // 1 ms a packet: 10 per on period, four periods.
        assert_eq!(t.len(), 40);
        for (k, &x) in t.iter().enumerate() {
            let (period, i) = (k as u64 / 10, k as u64 % 10);
            assert_eq!(x, 1_000 + period * 100_000_000 + i * 1_000_000);
        }
    }

    /// Exponential on/off: the long-run share of time on is on / (on + off), and the same seed
    /// gives the same packets.
    #[test]
    fn exponential_on_off_sends_the_mean_share() {
        let mut c = source("onoff", 12_000_000, None);
        c.on_ns = Some(100_000_000);
        c.off_ns = Some(300_000_000);
        let run = 2_000_000_000_000; // 2000 s: 5000 periods
        let mut s = CrossSource::new(&c, 0, 0, 1, run, 7);
        let t = sends(&mut s);
        let share = t.len() as f64 / (run as f64 / 1e6);
        assert!((share - 0.25).abs() < 0.01, "{share}");
        let mut again = CrossSource::new(&c, 0, 0, 1, run, 7);
        assert_eq!(sends(&mut again), t);
    }
}
