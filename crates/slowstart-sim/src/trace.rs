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

/// One column of a trace table, as the binding hands it to Python: its name, a numpy dtype
/// and little-endian bytes. The tables below declare their columns here and nowhere else.
pub struct Column {
    /// `*_ns` columns are times in nanoseconds (Python shows them as `*_s`, seconds).
    pub name: &'static str,
    pub dtype: &'static str,
    pub bytes: Vec<u8>,
    /// u64::MAX stands for "no value" (Python shows NaN).
    pub unset: bool,
    /// Codes into a list of names: "phases" (controller phases) or "links" (link names).
    pub codes: Option<&'static str>,
}

/// A column's element type: its numpy dtype and its little-endian bytes.
pub trait Element: Copy {
    const DTYPE: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

impl Element for u64 {
    const DTYPE: &'static str = "<u8";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Element for u32 {
    const DTYPE: &'static str = "<u4";
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
}

impl Element for u8 {
    const DTYPE: &'static str = "|u1";
    fn put(self, out: &mut Vec<u8>) {
        out.push(self);
    }
}

fn column<T: Element>(name: &'static str, values: &[T]) -> Column {
    let mut bytes = Vec::with_capacity(std::mem::size_of_val(values));
    for &v in values {
        v.put(&mut bytes);
    }
    Column {
        name,
        dtype: T::DTYPE,
        bytes,
        unset: false,
        codes: None,
    }
}

impl Column {
    fn unset(self) -> Self {
        Column {
            unset: true,
            ..self
        }
    }

    fn codes(self, names: &'static str) -> Self {
        Column {
            codes: Some(names),
            ..self
        }
    }
}

impl FlowTrace {
    /// The columns, in table order.
    pub fn columns(&self) -> Vec<Column> {
        vec![
            column("t_ns", &self.t_ns),
            column("flow", &self.flow),
            column("cwnd_bytes", &self.cwnd_bytes),
            column("ssthresh_bytes", &self.ssthresh_bytes).unset(),
            column("inflight_bytes", &self.inflight_bytes),
            column("srtt_ns", &self.srtt_ns),
            column("delivered_bytes", &self.delivered_bytes),
            column("phase", &self.phase).codes("phases"),
        ]
    }
}

impl QueueTrace {
    pub fn columns(&self) -> Vec<Column> {
        vec![
            column("t_ns", &self.t_ns),
            column("link", &self.link).codes("links"),
            column("queue_bytes", &self.queue_bytes),
            column("queue_packets", &self.queue_packets),
        ]
    }
}

impl AppTrace {
    pub fn columns(&self) -> Vec<Column> {
        vec![
            column("t_ns", &self.t_ns),
            column("flow", &self.flow),
            column("outstanding_requests", &self.outstanding_requests),
            column("target_queue", &self.target_queue),
            column("download_rate_bps", &self.download_rate_bps),
        ]
    }
}

/// Which rows decimation keeps: every other row of each series (`keys`: the flow or link of
/// each row), so that interleaved series thin out alike.
fn every_other_per_series(keys: &[u32]) -> Vec<bool> {
    let mut seen: Vec<bool> = Vec::new();
    keys.iter()
        .map(|&k| {
            let k = k as usize;
            if k >= seen.len() {
                seen.resize(k + 1, false);
            }
            let keep = !seen[k];
            seen[k] = !seen[k];
            keep
        })
        .collect()
}

fn retain_rows<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        keep[i - 1]
    });
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
        self.next_due[i] = now.saturating_add(self.interval_ns);
        true
    }

    fn widen(&mut self, span_ns: u64) {
        let even = span_ns / (self.max_rows as u64 / 2).max(1);
        // Saturating: a trace bound of a few rows doubles the interval at every row (fuzz).
        self.interval_ns = self.interval_ns.saturating_mul(2).max(even).max(1);
    }
}

impl FlowTrace {
    pub fn push(&mut self, row: FlowRow, sampler: &mut Sampler) {
        if self.t_ns.len() >= sampler.max_rows {
            let span = self.t_ns.last().unwrap() - self.t_ns[0];
            let keep = every_other_per_series(&self.flow);
            retain_rows(&mut self.t_ns, &keep);
            retain_rows(&mut self.flow, &keep);
            retain_rows(&mut self.cwnd_bytes, &keep);
            retain_rows(&mut self.ssthresh_bytes, &keep);
            retain_rows(&mut self.inflight_bytes, &keep);
            retain_rows(&mut self.srtt_ns, &keep);
            retain_rows(&mut self.delivered_bytes, &keep);
            retain_rows(&mut self.phase, &keep);
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
            let keep = every_other_per_series(&self.flow);
            retain_rows(&mut self.t_ns, &keep);
            retain_rows(&mut self.flow, &keep);
            retain_rows(&mut self.outstanding_requests, &keep);
            retain_rows(&mut self.target_queue, &keep);
            retain_rows(&mut self.download_rate_bps, &keep);
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
            let keep = every_other_per_series(&self.link);
            retain_rows(&mut self.t_ns, &keep);
            retain_rows(&mut self.link, &keep);
            retain_rows(&mut self.queue_bytes, &keep);
            retain_rows(&mut self.queue_packets, &keep);
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

    #[test]
    fn decimation_thins_each_interleaved_series_alike() {
        // Two links sampled in turn: dropping every other row of the table would drop one
        // link entirely.
        let mut trace = QueueTrace::default();
        let mut s = Sampler::new(0, 100, 2);
        for t in 0..10_000u64 {
            let link = (t % 2) as usize;
            if s.due(link, t, false) {
                trace.push(t, link as u32, t, 0, &mut s);
            }
        }
        for link in 0..2 {
            let times: Vec<u64> = (0..trace.len())
                .filter(|&i| trace.link[i] == link)
                .map(|i| trace.t_ns[i])
                .collect();
            assert!(times.len() >= 20, "link {link}: {} rows", times.len());
            assert!(
                *times.last().unwrap() > 9_000,
                "link {link} reaches the end"
            );
        }
    }
}
