//! A link whose capacity follows a recorded trace, in Mahimahi's format: one line per
//! 1500-byte delivery opportunity, its time in milliseconds; the trace repeats with a period of
//! its last timestamp (mahimahi `LinkQueue`).
//!
//! As in Mahimahi, an opportunity at time t carries up to 1500 bytes of what is queued at t:
//! several small packets may share one, a packet larger than what is left of it continues in
//! the next, and what no packet uses is lost. Since the queue is served in order, the
//! opportunity in which a packet's last byte leaves is known when the packet is offered, so
//! drop-tail keeps its enqueue-time model on a trace-driven link.

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`, an Ethernet MTU).
pub const OPPORTUNITY_BYTES: u64 = 1500;

#[derive(Clone, Debug)]
pub struct Opportunities {
    /// Opportunity times within one period, ns, sorted.
    times_ns: Vec<u64>,
    period_ns: u64,
    /// The opportunity used last (absolute time) and the bytes it has left.
    last_ns: u64,
    left: u64,
    /// The opportunity after it: (period number, index).
    next: (u64, usize),
}

impl Opportunities {
    /// From a trace's millisecond timestamps (non-empty, sorted, last one > 0).
    pub fn new(times_ms: &[u64]) -> Self {
        let period_ns = times_ms.last().copied().unwrap_or(1).max(1) * 1_000_000;
        Opportunities {
            times_ns: times_ms.iter().map(|&t| t * 1_000_000).collect(),
            period_ns,
            last_ns: 0,
            left: 0,
            next: (0, 0),
        }
    }

    /// Mean capacity, bits per second.
    pub fn mean_rate_bps(times_ms: &[u64]) -> u64 {
        let period_ms = times_ms.last().copied().unwrap_or(1).max(1);
        times_ms.len() as u64 * OPPORTUNITY_BYTES * 8 * 1000 / period_ms
    }

    fn at(&self, (cycle, i): (u64, usize)) -> u64 {
        cycle * self.period_ns + self.times_ns[i]
    }

    fn step(&self, (cycle, i): (u64, usize)) -> (u64, usize) {
        if i + 1 == self.times_ns.len() {
            (cycle + 1, 0)
        } else {
            (cycle, i + 1)
        }
    }

    /// The first opportunity at or after `t`.
    fn first_from(&self, t: u64) -> (u64, usize) {
        let (cycle, offset) = (t / self.period_ns, t % self.period_ns);
        let i = self.times_ns.partition_point(|&x| x < offset);
        if i == self.times_ns.len() {
            (cycle + 1, 0)
        } else {
            (cycle, i)
        }
    }

    /// Serve `bytes` queued at `now` behind everything served before: returns the time of
    /// the opportunity that carries its last byte.
    pub fn serve(&mut self, now: u64, bytes: u64) -> u64 {
        let mut need = bytes.max(1);
        if now <= self.last_ns && self.left > 0 {
            let used = need.min(self.left);
            self.left -= used;
            need -= used;
            if need == 0 {
                return self.last_ns;
            }
        }
        let mut pos = self.next;
        if self.at(pos) < now {
            pos = self.first_from(now);
        }
        loop {
            let t = self.at(pos);
            pos = self.step(pos);
            let used = need.min(OPPORTUNITY_BYTES);
            need -= used;
            if need == 0 {
                self.last_ns = t;
                self.left = OPPORTUNITY_BYTES - used;
                self.next = pos;
                return t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn full_packets_take_one_opportunity_each_and_the_trace_loops() {
        // Opportunities at 1, 1, 3 ms; period 3 ms.
        let mut o = Opportunities::new(&[1, 1, 3]);
        assert_eq!(Opportunities::mean_rate_bps(&[1, 1, 3]), 12_000_000);
        let ends: Vec<u64> = (0..6).map(|_| o.serve(0, 1500)).collect();
        assert_eq!(ends, vec![MS, MS, 3 * MS, 4 * MS, 4 * MS, 6 * MS]);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_large_ones_span_two() {
        let mut o = Opportunities::new(&[1, 2, 3, 4]);
        assert_eq!(o.serve(0, 40), MS);
        assert_eq!(o.serve(0, 40), MS, "shares the 1 ms opportunity");
        // 1460 bytes: 1420 left at 1 ms, the last 40 at 2 ms.
        assert_eq!(o.serve(0, 1460), 2 * MS);
        // Arriving after the 2 ms opportunity: its leftover is gone, the next is at 3 ms.
        assert_eq!(o.serve(2 * MS + 1, 100), 3 * MS);
    }

    #[test]
    fn an_idle_link_wastes_opportunities() {
        let mut o = Opportunities::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(o.serve(0, 1500), MS);
        // Idle until 25.5 ms: the next opportunity is at 26 ms (6 ms into the third period).
        assert_eq!(o.serve(25 * MS + MS / 2, 1500), 26 * MS);
        assert_eq!(o.serve(25 * MS + MS / 2, 1500), 27 * MS);
    }
}
