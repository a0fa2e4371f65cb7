//! Sampled time series, stored by column. A table that reaches its row limit is decimated (every
//! other row dropped, sampling interval doubled), so a long run keeps an even picture of the
//! whole run within a fixed memory bound.

#[derive(Clone, Debug, Default)]
pub struct FlowTrace {
    pub t_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub cwnd_bytes: Vec<u64>,
    pub ssthresh_bytes: Vec<u64>,
    pub inflight_bytes: Vec<u64>,
    pub srtt_ns: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
    pub phase: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
pub struct FlowRow {
    pub t_ns: u64,
    pub flow: u32,
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    pub inflight_bytes: u64,
    pub srtt_ns: u64,
    pub delivered_bytes: u64,
    pub phase: u8,
}

#[derive(Clone, Debug, Default)]
pub struct QueueTrace {
    pub t_ns: Vec<u64>,
    pub link: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub queue_packets: Vec<u64>,
}

/// Application series (BitTorrent flows): the downloader's request queue.
#[derive(Clone, Debug, Default)]
pub struct AppTrace {
    pub t_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub outstanding_requests: Vec<u64>,
    pub target_queue: Vec<u64>,
    pub download_rate_bps: Vec<u64>,
}

#[derive(Clone, Copy, Debug)]
pub struct AppRow {
    pub t_ns: u64,
    pub flow: u32,
    pub outstanding_requests: u64,
    pub target_queue: u64,
    pub download_rate_bps: u64,
}

fn keep_even<T: Copy>(v: &mut Vec<T>) {
    let mut w = 0;
    for r in (0..v.len()).step_by(2) {
        v[w] = v[r];
        w += 1;
    }
    v.truncate(w);
}

/// When to take the next sample of each series, with decimation on overflow.
#[derive(Clone, Debug)]
pub struct Sampler {
    pub interval_ns: u64,
    max_rows: usize,
    next_due: Vec<u64>,
}

impl Sampler {
    pub fn new(interval_ns: u64, max_rows: u64, series: usize) -> Self {
        Sampler {
            interval_ns,
            max_rows: max_rows.max(2) as usize,
            next_due: vec![0; series],
        }
    }

    /// Whether series `i` is due at `now` (`force` samples regardless, e.g. on a phase change).
    pub fn due(&mut self, i: usize, now: u64, force: bool) -> bool {
        if now < self.next_due[i] && !force {
            return false;
        }
        self.next_due[i] = now + self.interval_ns;
        true
    }

    fn widen(&mut self, span_ns: u64) {
        let even = span_ns / (self.max_rows as u64 / 2).max(1);
        self.interval_ns = (self.interval_ns * 2).max(even).max(1);
    }
}

impl FlowTrace {
    pub fn push(&mut self, row: FlowRow, sampler: &mut Sampler) {
        if self.t_ns.len() >= sampler.max_rows {
            let span = self.t_ns.last().unwrap() - self.t_ns[0];
            keep_even(&mut self.t_ns);
            keep_even(&mut self.flow);
            keep_even(&mut self.cwnd_bytes);
            keep_even(&mut self.ssthresh_bytes);
            keep_even(&mut self.inflight_bytes);
            keep_even(&mut self.srtt_ns);
            keep_even(&mut self.delivered_bytes);
            keep_even(&mut self.phase);
            sampler.widen(span);
        }
        self.t_ns.push(row.t_ns);
        self.flow.push(row.flow);
        self.cwnd_bytes.push(row.cwnd_bytes);
        self.ssthresh_bytes.push(row.ssthresh_bytes);
        self.inflight_bytes.push(row.inflight_bytes);
        self.srtt_ns.push(row.srtt_ns);
        self.delivered_bytes.push(row.delivered_bytes);
        self.phase.push(row.phase);
    }

    pub fn len(&self) -> usize {
        self.t_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_ns.is_empty()
    }
}

impl AppTrace {
    pub fn push(&mut self, row: AppRow, sampler: &mut Sampler) {
        if self.t_ns.len() >= sampler.max_rows {
            let span = self.t_ns.last().unwrap() - self.t_ns[0];
            keep_even(&mut self.t_ns);
            keep_even(&mut self.flow);
            keep_even(&mut self.outstanding_requests);
            keep_even(&mut self.target_queue);
            keep_even(&mut self.download_rate_bps);
            sampler.widen(span);
        }
        self.t_ns.push(row.t_ns);
        self.flow.push(row.flow);
        self.outstanding_requests.push(row.outstanding_requests);
        self.target_queue.push(row.target_queue);
        self.download_rate_bps.push(row.download_rate_bps);
    }

    pub fn len(&self) -> usize {
        self.t_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_ns.is_empty()
    }
}

impl QueueTrace {
    pub fn push(&mut self, t_ns: u64, link: u32, bytes: u64, packets: u64, sampler: &mut Sampler) {
        if self.t_ns.len() >= sampler.max_rows {
            let span = self.t_ns.last().unwrap() - self.t_ns[0];
            keep_even(&mut self.t_ns);
            keep_even(&mut self.link);
            keep_even(&mut self.queue_bytes);
            keep_even(&mut self.queue_packets);
            sampler.widen(span);
        }
        self.t_ns.push(t_ns);
        self.link.push(link);
        self.queue_bytes.push(bytes);
        self.queue_packets.push(packets);
    }

    pub fn len(&self) -> usize {
        self.t_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_ns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_bounds_rows_and_keeps_the_whole_span() {
        let mut trace = QueueTrace::default();
        let mut s = Sampler::new(0, 100, 1);
        for t in 0..10_000u64 {
            if s.due(0, t, false) {
                trace.push(t, 0, t, 0, &mut s);
            }
        }
        assert!(trace.len() <= 100);
        assert!(trace.len() >= 40, "{}", trace.len());
        assert_eq!(trace.t_ns[0], 0);
        assert!(*trace.t_ns.last().unwrap() > 9_000);
        assert!(trace.t_ns.windows(2).all(|w| w[0] < w[1]));
    }
}
