//! Sampled time series, stored by column. A table that reaches its row limit is decimated (every
//! other row dropped, sampling interval doubled), so a long run keeps an even picture of the
//! whole run within a fixed memory bound.

/// One column of a trace table, as the binding hands it to Python: its name, a numpy dtype
/// and little-endian bytes. The tables (`trace_table!` below) declare their columns once.
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
    /// Its number of rows.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.width()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn width(&self) -> usize {
        match self.dtype {
            "<u8" => 8,
            "<u4" => 4,
            _ => 1,
        }
    }

    /// Row `i`'s value.
    pub fn value(&self, i: usize) -> u64 {
        let w = self.width();
        let mut le = [0u8; 8];
        le[..w].copy_from_slice(&self.bytes[i * w..(i + 1) * w]);
        u64::from_le_bytes(le)
    }

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

/// A table's columns as CSV under their names: a header, then a row per sample; a column of
/// codes is written as the name each stands for (`name(list, code)`, the list being e.g.
/// `"phases"`), a code without one as `unknown`. A real endpoint writes its trace so, and Python reads it as
/// it reads the engine's.
pub fn write_csv(
    out: &mut impl std::io::Write,
    columns: &[Column],
    name: impl Fn(&str, usize) -> Option<&'static str>,
) -> std::io::Result<()> {
    let header: Vec<&str> = columns.iter().map(|c| c.name).collect();
    writeln!(out, "{}", header.join(","))?;
    for i in 0..columns.first().map_or(0, Column::len) {
        for (j, c) in columns.iter().enumerate() {
            let sep = if j + 1 == columns.len() { "\n" } else { "," };
            let v = c.value(i);
            match c.codes {
                Some(list) => {
                    let name = name(list, v as usize).unwrap_or("unknown");
                    write!(out, "{name}{sep}")?
                }
                None => write!(out, "{v}{sep}")?,
            }
        }
    }
    Ok(())
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

    /// Every event of series `0..series`, without a row limit: a real endpoint's trace, which
    /// its run bounds.
    pub fn unbounded(series: usize) -> Self {
        Sampler {
            interval_ns: 0,
            max_rows: usize::MAX,
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

    /// One more series, its index: the next a swarm traces.
    pub fn add_series(&mut self) -> usize {
        self.next_due.push(0);
        self.next_due.len() - 1
    }

    /// Keep every due row: the table is handed over before it grows (a streamed trace).
    pub fn never_thin(&mut self) {
        self.max_rows = usize::MAX;
    }

    fn widen(&mut self, span_ns: u64) {
        let even = span_ns / (self.max_rows as u64 / 2).max(1);
        // Saturating: a trace bound of a few rows doubles the interval at every row (fuzz).
        self.interval_ns = self.interval_ns.saturating_mul(2).max(even).max(1);
    }
}

/// A trace table declared once: its columns in order, each with its element type and, where it
/// applies, how Python reads it (`unset`: u64::MAX is "no value"; `codes(list)`: codes into a
/// list of names). From the one list come the table (a vector per column), its row, the
/// columns handed to Python ([`Column`]) and the push with decimation, which thins every
/// column alike by the `series` column (the flow or link of each row).
macro_rules! trace_table {
    (
        $(#[$doc:meta])*
        $table:ident / $row:ident, series = $series:ident {
            $( $field:ident : $ty:ty $( => $modifier:ident ( $($arg:expr)? ) )? ),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default)]
        pub struct $table {
            $( pub $field: Vec<$ty>, )+
        }

        /// One row of its table.
        #[derive(Clone, Copy, Debug)]
        pub struct $row {
            $( pub $field: $ty, )+
        }

        impl $table {
            /// The columns' names, in table order.
            pub const NAMES: &'static [&'static str] = &[$( stringify!($field) ),+];

            /// The columns, in table order.
            pub fn columns(&self) -> Vec<Column> {
                vec![$( column(stringify!($field), &self.$field) $( .$modifier($($arg)?) )? ),+]
            }

            /// Add `row`, first thinning the table if it is full; whether it thinned.
            pub fn push(&mut self, row: $row, sampler: &mut Sampler) -> bool {
                let full = self.t_ns.len() >= sampler.max_rows;
                if full {
                    let span = self.t_ns.last().unwrap() - self.t_ns[0];
                    let keep = every_other_per_series(&self.$series);
                    $( retain_rows(&mut self.$field, &keep); )+
                    sampler.widen(span);
                }
                $( self.$field.push(row.$field); )+
                full
            }

            pub fn len(&self) -> usize {
                self.t_ns.len()
            }

            pub fn is_empty(&self) -> bool {
                self.t_ns.is_empty()
            }
        }
    };
}

trace_table! {
    /// Each flow's sender: its window, what is in flight, its RTT, what it delivered and its
    /// controller's phase.
    FlowTrace / FlowRow, series = flow {
        t_ns: u64,
        flow: u32,
        cwnd_bytes: u64,
        ssthresh_bytes: u64 => unset(),
        inflight_bytes: u64,
        srtt_ns: u64,
        delivered_bytes: u64,
        phase: u8 => codes("phases"),
    }
}

trace_table! {
    /// Each link direction's queue.
    QueueTrace / QueueRow, series = link {
        t_ns: u64,
        link: u32 => codes("links"),
        queue_bytes: u64,
        queue_packets: u64,
    }
}

trace_table! {
    /// Application series (BitTorrent flows): the downloader's request queue.
    AppTrace / AppRow, series = flow {
        t_ns: u64,
        flow: u32,
        outstanding_requests: u64,
        target_queue: u64,
        download_rate_bps: u64,
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
                trace.push(
                    QueueRow {
                        t_ns: t,
                        link: 0,
                        queue_bytes: t,
                        queue_packets: 0,
                    },
                    &mut s,
                );
            }
        }
        assert!(trace.len() <= 100);
        assert!(trace.len() >= 40, "{}", trace.len());
        assert_eq!(trace.t_ns[0], 0);
        assert!(*trace.t_ns.last().unwrap() > 9_000);
        assert!(trace.t_ns.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn csv_under_the_tables_names() {
        let (mut trace, mut every) = (FlowTrace::default(), Sampler::unbounded(3));
        for (t, phase) in [(0, 0), (5, 3), (9, 200)] {
            assert!(every.due(2, t, false));
            let row = FlowRow {
                t_ns: t,
                flow: 2,
                cwnd_bytes: 14_480,
                ssthresh_bytes: u64::MAX,
                inflight_bytes: t * 1000,
                srtt_ns: 100_000_000,
                delivered_bytes: t,
                phase,
            };
            trace.push(row, &mut every);
        }
        let mut out = Vec::new();
        let phases: &[&str] = &["slow_start", "a", "b", "recovery"];
        write_csv(&mut out, &trace.columns(), |list, code| {
            assert_eq!(list, "phases");
            phases.get(code).copied()
        })
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "t_ns,flow,cwnd_bytes,ssthresh_bytes,inflight_bytes,srtt_ns,delivered_bytes,phase\n\
             0,2,14480,18446744073709551615,0,100000000,0,slow_start\n\
             5,2,14480,18446744073709551615,5000,100000000,5,recovery\n\
             9,2,14480,18446744073709551615,9000,100000000,9,unknown\n"
        );
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
                trace.push(
                    QueueRow {
                        t_ns: t,
                        link: link as u32,
                        queue_bytes: t,
                        queue_packets: 0,
                    },
                    &mut s,
                );
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
