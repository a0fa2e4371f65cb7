//! One flow's recorder: what its connection did, turned into the flow trace's rows (through the
//! one [`Sampler`]) and the summary's metrics (max cwnd, slow-start exit, time to full
//! bandwidth, time to the window cap) and counts across connections. Every driver holds one
//! beside its connection and hands it to [`SenderEnd::notify`] as the
//! [`Observer`] ([`FlowRecorder::observer`]): the simulator, the UDP endpoints and the quinn
//! client's trace ([`FlowRecorder::record_row`]) measure a flow alike.
//!
//! Times are the driver's clock (ns): the metrics keep them as they came, the rows count from
//! the recorder's origin (the simulator's 0, an endpoint's start).
//!
//! [`SenderEnd::notify`]: slowstart_transport::SenderEnd::notify

use std::collections::VecDeque;

use slowstart_cc::Phase;
use slowstart_transport::observe::{Observer, SenderEvent};
use slowstart_transport::sender::{Sender, SenderStats};

use crate::trace::{FlowRow, FlowTrace, Sampler};

/// What a flow's summary reports of its window's course, measured as the run goes (times in
/// the driver's clock, ns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowMetrics {
    pub max_cwnd_bytes: u64,
    /// The first event after which the controller was no longer in its initial slow start
    /// (`Phase::is_initial_slow_start`; at the start for one without slow start, LEDBAT's).
    pub slow_start_exit_ns: Option<u64>,
    /// The first ACK after which the delivery rate over the last base RTT reached 95% of
    /// what the path allows ([`FlowRecorder::with_path`]).
    pub full_bw_ns: Option<u64>,
    /// The first event after which cwnd reached the window cap.
    pub window_cap_ns: Option<u64>,
}

/// One flow's recorder (see the module's doc).
#[derive(Clone, Debug)]
pub struct FlowRecorder {
    flow: u32,
    /// Its series in the sampler (`flow` unless [`FlowRecorder::in_series`]).
    series: u32,
    origin_ns: u64,
    metrics: FlowMetrics,
    /// A phase change since the last row: the next event is sampled whatever the interval.
    phase_changed: bool,
    /// The largest window the sender can use, whole segments (min of send buffer and receive
    /// window ceiling), if any.
    window_cap: Option<u64>,
    base_rtt_ns: u64,
    /// 95% of min(bottleneck rate, window cap / base RTT), bits per second.
    full_bw_target_bps: u64,
    /// (time, delivered) samples spanning at least one base RTT, for `full_bw_ns`.
    delivered_window: VecDeque<(u64, u64)>,
    /// What the connections before the current one counted.
    prior_stats: SenderStats,
    prior_delivered: u64,
}

impl FlowRecorder {
    /// Flow `flow`'s recorder, its rows' times counted from `origin_ns`; no window cap and no
    /// full-bandwidth target until [`FlowRecorder::with_path`].
    pub fn new(flow: u32, origin_ns: u64) -> Self {
        FlowRecorder {
            flow,
            series: flow,
            origin_ns,
            metrics: FlowMetrics::default(),
            phase_changed: false,
            window_cap: None,
            base_rtt_ns: 0,
            full_bw_target_bps: 0,
            delivered_window: VecDeque::new(),
            prior_stats: SenderStats::default(),
            prior_delivered: 0,
        }
    }

    /// The path the flow runs on, for `window_cap_ns` and `full_bw_ns`: its bottleneck rate,
    /// base RTT (none measured when 0) and the sender's window cap in bytes, if any.
    pub fn with_path(mut self, bottleneck_bps: u64, base_rtt_ns: u64, cap: Option<u64>) -> Self {
        let mut target = bottleneck_bps as u128;
        if let (Some(cap), true) = (cap, base_rtt_ns > 0) {
            target = target.min(cap as u128 * 8 * 1_000_000_000 / base_rtt_ns as u128);
        }
        self.window_cap = cap;
        self.base_rtt_ns = base_rtt_ns;
        self.full_bw_target_bps = (target * 95 / 100) as u64;
        self
    }

    /// Sampled as series `series` (a swarm's half `flow` among the few it traces).
    pub fn in_series(mut self, series: u32) -> Self {
        self.series = series;
        self
    }

    pub fn metrics(&self) -> &FlowMetrics {
        &self.metrics
    }

    /// The sender's counts over every connection of the flow, `sender` being the current one's.
    pub fn stats(&self, sender: &Sender) -> SenderStats {
        let mut st = self.prior_stats.clone();
        st.add(sender.stats());
        st
    }

    /// Bytes delivered over every connection (the rate sampler's count: acknowledged or
    /// SACKed), `sender` being the current one's.
    pub fn delivered(&self, sender: &Sender) -> u64 {
        self.prior_delivered + sender.delivered()
    }

    /// Bytes the connections before the current one delivered.
    pub fn delivered_before(&self) -> u64 {
        self.prior_delivered
    }

    /// The observer to hand [`slowstart_transport::SenderEnd::notify`]: it records into this
    /// flow's metrics and, when `sampler` finds series `flow` due (or the phase changed), a row
    /// into `trace`.
    #[inline]
    pub fn observer<'a>(
        &'a mut self,
        trace: &'a mut FlowTrace,
        sampler: &'a mut Sampler,
    ) -> Recording<'a> {
        Recording {
            rec: self,
            trace,
            sampler,
        }
    }

    /// A row a driver measured itself, without a [`Sender`] (the quinn client's trace): into
    /// the metrics (but `full_bw_ns`), and into `trace` when due.
    pub fn record_row(&mut self, row: FlowRow, trace: &mut FlowTrace, sampler: &mut Sampler) {
        let now = row.t_ns.saturating_add(self.origin_ns);
        let phase = Phase::ALL.get(row.phase as usize);
        self.window(now, row.cwnd_bytes, || {
            phase.is_some_and(|p| !p.is_initial_slow_start())
        });
        let force = std::mem::take(&mut self.phase_changed);
        if sampler.due(self.series as usize, now, force) {
            trace.push(row, sampler);
        }
    }

    /// cwnd's maximum, the slow-start exit (`left_slow_start` read only until it happened) and
    /// the window cap, at `now`.
    #[inline]
    fn window(&mut self, now: u64, cwnd: u64, left_slow_start: impl FnOnce() -> bool) {
        let m = &mut self.metrics;
        m.max_cwnd_bytes = m.max_cwnd_bytes.max(cwnd);
        if m.slow_start_exit_ns.is_none() && left_slow_start() {
            m.slow_start_exit_ns = Some(now);
        }
        if m.window_cap_ns.is_none() && self.window_cap.is_some_and(|cap| cwnd >= cap) {
            m.window_cap_ns = Some(now);
        }
    }

    /// Delivery rate over the last base RTT against the flow's target (`full_bw_ns`).
    #[inline]
    fn track_full_bw(&mut self, now: u64, delivered: u64) {
        if self.metrics.full_bw_ns.is_some() || self.base_rtt_ns == 0 {
            return;
        }
        let window = &mut self.delivered_window;
        window.push_back((now, delivered));
        let horizon = now.saturating_sub(self.base_rtt_ns);
        while window.len() > 1 && window[1].0 <= horizon {
            window.pop_front();
        }
        let (t0, d0) = window[0];
        if now - t0 >= self.base_rtt_ns {
            // bits * 1e9 / (now - t0) >= target, multiplied out: no 128-bit division on every
            // ACK.
            let bits_x_1e9 = (delivered - d0) as u128 * 8 * 1_000_000_000;
            if bits_x_1e9 >= self.full_bw_target_bps as u128 * (now - t0) as u128 {
                self.metrics.full_bw_ns = Some(now);
                self.delivered_window = VecDeque::new();
            }
        }
    }
}

/// A [`FlowRecorder`] with the run's flow trace and sampler at hand: the [`Observer`].
pub struct Recording<'a> {
    rec: &'a mut FlowRecorder,
    trace: &'a mut FlowTrace,
    sampler: &'a mut Sampler,
}

impl Observer for Recording<'_> {
    #[inline]
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, s: &Sender) {
        let rec = &mut *self.rec;
        if let SenderEvent::Ack(outcome) = event {
            if outcome.delivered > 0 {
                rec.track_full_bw(now, rec.prior_delivered + s.delivered());
            }
        }
        let cwnd = s.cwnd();
        rec.window(now, cwnd, || !s.phase().is_initial_slow_start());
        let force = std::mem::take(&mut rec.phase_changed);
        if self.sampler.due(rec.series as usize, now, force) {
            let row = FlowRow {
                t_ns: now.saturating_sub(rec.origin_ns),
                flow: rec.flow,
                cwnd_bytes: cwnd,
                ssthresh_bytes: s.ssthresh(),
                inflight_bytes: s.pipe(),
                srtt_ns: s.rtt().srtt(),
                delivered_bytes: rec.prior_delivered + s.delivered(),
                phase: s.phase() as u8,
            };
            self.trace.push(row, self.sampler);
        }
    }

    #[inline]
    fn on_phase_change(&mut self, _: u64, _: Phase, _: Phase) {
        self.rec.phase_changed = true;
    }

    fn on_replaced(&mut self, _: u64, sender: &Sender) {
        let rec = &mut *self.rec;
        rec.prior_stats.add(sender.stats());
        rec.prior_delivered += sender.delivered();
    }
}

#[cfg(test)]
mod tests {
    use slowstart_transport::pipe;

    use super::*;
    use crate::testing::{flow, MS};

    const MSS: u64 = 1460;
    const ONE_WAY: u64 = 10 * MS;

    fn rows(t: &FlowTrace) -> Vec<(u64, u64, Phase)> {
        (0..t.len())
            .map(|i| (t.t_ns[i], t.cwnd_bytes[i], Phase::ALL[t.phase[i] as usize]))
            .collect()
    }

    #[test]
    fn phase_changes_force_rows_between_samples() {
        // Reno over 10 ms each way, the 4th segment lost (worked out in the transport's
        // observe_tests): recovery from 20 ms, congestion avoidance from 40 ms. Sampled every
        // second, the rows are the first event's and the two phase changes'.
        let settings = flow("reno", None).transport();
        let mut conn = pipe::connection("reno", 10, &settings, 100 * MSS);
        let mut rec = FlowRecorder::new(0, 0);
        let (mut trace, mut sampler) = (FlowTrace::default(), Sampler::new(1_000 * MS, 100, 1));
        let (mut every, mut all) = (FlowTrace::default(), Sampler::unbounded(1));
        let mut twin = FlowRecorder::new(0, 0);
        let mut obs = (
            rec.observer(&mut trace, &mut sampler),
            twin.observer(&mut every, &mut all),
        );
        pipe::transfer(&mut conn, 0, ONE_WAY, &[3], &mut obs);
        let r = rows(&trace);
        let times: Vec<(u64, Phase)> = r.iter().map(|&(t, _, p)| (t, p)).collect();
        assert_eq!(
            times,
            vec![
                (0, Phase::SlowStart),
                (20 * MS, Phase::Recovery),
                (40 * MS, Phase::CongestionAvoidance)
            ]
        );
        assert_eq!(rec.metrics().slow_start_exit_ns, Some(20 * MS));
        // Every event's row: the maximum is the largest window any of them saw.
        let max = every.cwnd_bytes.iter().copied().max().unwrap();
        assert_eq!(rec.metrics().max_cwnd_bytes, max);
        assert_eq!(rec.metrics(), twin.metrics());
        assert!(every.len() > trace.len());
        assert_eq!(every.delivered_bytes.last(), Some(&(100 * MSS)));
        // No path given: no window cap, no full-bandwidth target.
        assert_eq!(rec.metrics().window_cap_ns, None);
        assert_eq!(rec.metrics().full_bw_ns, None);
    }

    #[test]
    fn the_window_cap_then_full_bandwidth() {
        // No loss, cwnd capped at 20 segments on a path of 20 ms base RTT and no rate limit:
        // cwnd reaches the cap in slow start, and one base RTT later the delivery rate is the
        // cap's, 20 segments a round trip (over 95% of it).
        let cap = 20 * MSS;
        let mut cfg = flow("reno", None);
        cfg.max_window_bytes = Some(cap);
        let settings = cfg.transport();
        let mut conn = pipe::connection("reno", 10, &settings, 400 * MSS);
        let mut rec = FlowRecorder::new(0, 0).with_path(10_000_000_000, 2 * ONE_WAY, Some(cap));
        let (mut trace, mut sampler) = (FlowTrace::default(), Sampler::unbounded(1));
        pipe::transfer(
            &mut conn,
            0,
            ONE_WAY,
            &[],
            &mut rec.observer(&mut trace, &mut sampler),
        );
        let r = rows(&trace);
        let first_at_cap = r.iter().find(|&&(_, cwnd, _)| cwnd >= cap).unwrap().0;
        let m = rec.metrics();
        assert_eq!(m.window_cap_ns, Some(first_at_cap));
        assert!(m.max_cwnd_bytes >= cap);
        assert_eq!(m.slow_start_exit_ns, None);
        let full = m.full_bw_ns.expect("the capped rate is reached");
        assert!(
            full >= first_at_cap + 2 * ONE_WAY && full <= first_at_cap + 4 * ONE_WAY,
            "cap at {first_at_cap}, full bandwidth at {full}"
        );
    }

    #[test]
    fn counts_go_on_across_connections() {
        // Two connections of one flow, as a web flow without keep-alive has: the counts and the
        // trace's delivered bytes go on from the first's.
        let settings = flow("reno", None).transport();
        let mut rec = FlowRecorder::new(0, 0);
        let (mut trace, mut sampler) = (FlowTrace::default(), Sampler::unbounded(1));
        let mut first = pipe::connection("reno", 10, &settings, 30 * MSS);
        pipe::transfer(
            &mut first,
            0,
            ONE_WAY,
            &[],
            &mut rec.observer(&mut trace, &mut sampler),
        );
        let rows_first = trace.len();
        let later = trace.t_ns.last().unwrap() + ONE_WAY;
        let mut obs = rec.observer(&mut trace, &mut sampler);
        obs.on_replaced(later, &first.src.sender);
        let mut second = pipe::connection("reno", 10, &settings, 20 * MSS);
        pipe::transfer(&mut second, later, ONE_WAY, &[5], &mut obs);
        let (a, b) = (first.src.sender.stats(), second.src.sender.stats());
        let st = rec.stats(&second.src.sender);
        assert_eq!(
            st.data_packets_sent,
            a.data_packets_sent + b.data_packets_sent
        );
        assert_eq!((a.retransmits, st.retransmits), (0, 1));
        assert_eq!(rec.delivered(&second.src.sender), 50 * MSS);
        assert_eq!(trace.t_ns[rows_first], later);
        assert_eq!(trace.delivered_bytes[rows_first], 30 * MSS);
        assert_eq!(trace.delivered_bytes.last(), Some(&(50 * MSS)));
        assert!(trace.delivered_bytes.windows(2).all(|w| w[0] <= w[1]));
    }
}
