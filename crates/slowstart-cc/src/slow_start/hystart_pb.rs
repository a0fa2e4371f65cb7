//! HyStart with a peak-bandwidth estimate for long-delay paths (picoquic, C. Huitema, "Faster
//! slow start for satellite links?", 2020): above 100 ms RTT start from a larger window, pace in
//! bursts, and raise cwnd to RTT x peak rate / 2; otherwise plain HyStart.

use super::hystart::{Detect, HyStart};
use super::SlowStartStep;
use crate::window::WindowGrowth;
use crate::{AckEvent, Nanos, SECOND};

/// Blog: the peak-bandwidth mode applies "if the RTT is larger than 100 milliseconds"
/// (picoquic PICOQUIC_TARGET_RENO_RTT).
pub const RTT_THRESHOLD: Nanos = 100_000_000;
/// picoquic PICOQUIC_TARGET_SATELLITE_RTT: the long-RTT window stops growing with RTT here.
pub const SATELLITE_RTT: Nanos = 610_000_000;
/// Blog: "long bursts – 25 milliseconds".
pub const BURST: Nanos = 25_000_000;
/// picoquic sender.c: in long-RTT slow start the pacer's bucket holds at least 32 KiB.
pub const MIN_BURST_BYTES: u64 = 0x8000;
/// picoquic PICOQUIC_MAX_BANDWIDTH_TIME_INTERVAL_MIN: a peak sample spans more than 1 ms.
pub const MIN_INTERVAL: Nanos = 1_000_000;
/// picoquic cc_common.h PICOQUIC_MIN_MAX_RTT_SCOPE: RTT samples in the exit filter, and
/// consecutive excess samples that end slow start.
pub const RTT_SCOPE: usize = 7;
/// picoquic cc_common.c (2020) `picoquic_hystart_test`: on one-way delays the excess margin is
/// at most PICOQUIC_TARGET_RENO_RTT / 2.
pub const ONE_WAY_MARGIN_CAP: Nanos = RTT_THRESHOLD / 2;

/// picoquic's HyStart delay test (cc_common.c `picoquic_hystart_test`, 2020): one sample per
/// millisecond into a ring of seven; leave slow start once the ring's minimum has stayed more
/// than a quarter above the filtered minimum for seven samples running. On one-way delays the
/// margin is capped at 50 ms (on a 600 ms path: 50 ms of queue, not the 75 ms a quarter of the
/// 300 ms one-way delay would give); on RTTs it is 150 ms, where Linux's HyStart threshold is
/// clamped to 16 ms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RttExcessTest {
    samples: [Nanos; RTT_SCOPE],
    next: usize,
    full: bool,
    last_sample: Option<Nanos>,
    filtered_min: Nanos,
    excess: usize,
}

impl RttExcessTest {
    /// Feed one sample taken at `now`, a one-way delay or an RTT; true when slow start should
    /// end.
    pub fn on_sample(&mut self, now: Nanos, rtt: Nanos, one_way: bool) -> bool {
        if self.last_sample.is_some_and(|t| now <= t + MIN_INTERVAL) {
            return false;
        }
        self.last_sample = Some(now);
        self.samples[self.next] = rtt;
        self.next = (self.next + 1) % RTT_SCOPE;
        self.full |= self.next == 0;
        if !self.full {
            return false;
        }
        let min = *self.samples.iter().min().expect("non-empty");
        let max = *self.samples.iter().max().expect("non-empty");
        if self.filtered_min == 0 || self.filtered_min > max {
            self.filtered_min = max;
        }
        let mut margin = self.filtered_min / 4;
        if one_way {
            margin = margin.min(ONE_WAY_MARGIN_CAP);
        }
        if min <= self.filtered_min {
            self.excess = 0;
        } else if min > self.filtered_min + margin {
            self.excess += 1;
        }
        self.excess >= RTT_SCOPE
    }
}

/// hystart-pb's slow start: HyStart, plus picoquic's peak-bandwidth mode on long-delay paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStartPb {
    /// The HyStart that runs below the RTT threshold.
    pub hystart: HyStart,
    /// The exit test on long paths.
    pub rtt_excess: RttExcessTest,
    /// Minimum RTT above which the peak-bandwidth mode runs.
    pub rtt_threshold: Nanos,
    /// Start from `initial_window x min(RTT, 610 ms) / 100 ms` on long paths (picoquic
    /// cc_common.c `picoquic_cc_update_cwin_for_long_rtt`); 0 turns it off.
    pub initial_window: u64,
    min_rtt: Nanos,
    srtt: Nanos,
    /// Highest delivery rate over one peak sample, bytes/s.
    pub peak_rate: u64,
    /// Reference point of the sample in progress: (delivered, ack time, send time) of the
    /// newest packet acknowledged when it started (picoquic sender.c
    /// `picoquic_estimate_max_path_bandwidth`).
    reference: Option<(u64, Nanos, Nanos)>,
    cwnd: u64,
    mss: u64,
    /// Long paths grow only on ACKs with `sent_before_cwnd_block` (picoquic before April
    /// 2020); otherwise on every ACK of a packet not sent app-limited (picoquic after).
    pub cwnd_blocked_growth: bool,
}

impl HyStartPb {
    /// HyStart with `low_window` and `detect`; the peak-bandwidth mode above `rtt_threshold`
    /// (ns), long paths starting from `initial_window` bytes scaled by the RTT (0: off).
    pub fn new(low_window: u64, detect: Detect, rtt_threshold: Nanos, initial_window: u64) -> Self {
        Self {
            hystart: HyStart::new(low_window, detect),
            rtt_excess: RttExcessTest::default(),
            rtt_threshold,
            initial_window,
            min_rtt: 0,
            srtt: 0,
            peak_rate: 0,
            reference: None,
            cwnd: 0,
            mss: 0,
            cwnd_blocked_growth: false,
        }
    }

    /// The peak-bandwidth mode (pacing, cwnd raise) is on: min RTT known and > the threshold.
    pub fn long_delay(&self) -> bool {
        self.min_rtt > self.rtt_threshold
    }

    fn note_rtt(&mut self, rtt: Nanos) {
        if rtt > 0 && (self.min_rtt == 0 || rtt < self.min_rtt) {
            self.min_rtt = rtt;
        }
        if self.srtt == 0 {
            self.srtt = rtt;
        }
    }

    /// The window a long path starts from: picoquic scales its initial window with the RTT,
    /// `CWIN_INITIAL x min(rtt_min, 610 ms) / 100 ms`, in slow start on every RTT sample.
    fn long_rtt_window(&self, cwnd: u64) -> u64 {
        if !self.long_delay() || self.initial_window == 0 {
            return cwnd;
        }
        let rtt = self.min_rtt.min(SATELLITE_RTT) as u128;
        let window = self.initial_window as u128 * rtt / self.rtt_threshold.max(1) as u128;
        cwnd.max(window as u64)
    }

    /// An RTT measured before any data was acknowledged (the handshake): picoquic uses it at
    /// once ("using the RTT measured during the connection handshake", picoquic seed).
    pub fn on_rtt_sample(&mut self, rtt: Nanos, cwnd: u64, ssthresh: u64) -> u64 {
        self.note_rtt(rtt);
        self.cwnd = self.long_rtt_window(cwnd).min(ssthresh.max(cwnd));
        self.cwnd
    }

    /// One ACK in slow start: HyStart's step, or on a long path the peak-rate raise and the
    /// RTT-excess exit.
    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let sample_min = ack.rtt.map_or(ack.min_rtt, |r| {
            if ack.min_rtt > 0 {
                r.min(ack.min_rtt)
            } else {
                r
            }
        });
        self.note_rtt(sample_min);
        if ack.srtt > 0 {
            self.srtt = ack.srtt;
        }
        self.track_peak_rate(ack);
        if !self.long_delay() {
            let step = self.hystart.on_ack(cwnd, ssthresh, ack, growth);
            self.cwnd = step.cwnd;
            self.mss = ack.mss;
            return step;
        }
        // Long paths: picoquic's slow start, its delay test, the peak-rate raise.
        // picoquic since April 2020 (PR 878, the blog's code) grows unless the acked packet
        // was sent while the application had nothing to send (`last_sender_limited_time`);
        // before, only on ACKs of packets sent before the cwnd last blocked the sender.
        let grows = if self.cwnd_blocked_growth {
            ack.sent_before_cwnd_block
        } else {
            !ack.rate.is_some_and(|r| r.is_app_limited)
        };
        let mut step = if grows {
            super::SlowStart::standard_step(cwnd, ssthresh, ack, growth)
        } else {
            SlowStartStep {
                cwnd,
                leftover_credit: 0,
                exit: false,
                phase: crate::Phase::SlowStart,
            }
        };
        // picoquic feeds the test one-way delays when its timestamp extension is on (its
        // satellite test enables it), else RTTs.
        if let Some(owd) = ack.one_way_delay {
            step.exit = self.rtt_excess.on_sample(ack.now, owd, true);
        } else if let Some(rtt) = ack.rtt {
            step.exit = self.rtt_excess.on_sample(ack.now, rtt, false);
        }
        if !step.exit {
            let cap = ssthresh.max(cwnd);
            let target = (self.min_rtt as u128 * self.peak_rate as u128 / 2 / SECOND as u128)
                .min(cap as u128) as u64;
            step.cwnd = self.long_rtt_window(step.cwnd.max(target)).min(cap);
        }
        self.cwnd = step.cwnd;
        self.mss = ack.mss;
        step
    }

    /// picoquic's peak estimate: consecutive samples just over 1 ms of ACKs, each the bytes
    /// delivered over the longer of the ACK interval and the send interval of the newest
    /// packets acknowledged. A burst sent back to back has a short send interval, so its ACKs
    /// show the rate the bottleneck spread it to; paced data shows only the pacing rate.
    fn track_peak_rate(&mut self, ack: &AckEvent) {
        let Some(rate) = ack.rate else { return };
        let sent = ack.now.saturating_sub(rate.rtt);
        match self.reference {
            None => self.reference = Some((ack.delivered, ack.now, sent)),
            Some((_, _, ref_sent)) if sent < ref_sent => {}
            Some((ref_delivered, ref_acked, ref_sent)) => {
                let receive = ack.now - ref_acked;
                if receive > MIN_INTERVAL {
                    let interval = receive.max(sent - ref_sent);
                    let bytes = ack.delivered.saturating_sub(ref_delivered);
                    let sample = (bytes as u128 * SECOND as u128 / interval as u128) as u64;
                    self.peak_rate = self.peak_rate.max(sample);
                    self.reference = Some((ack.delivered, ack.now, sent));
                }
            }
        }
    }

    /// picoquic sender.c `picoquic_update_pacing_data` in slow start: 1.25 x cwnd / srtt,
    /// and no pacing below 8 segments (ACK clocking alone).
    pub fn pacing_rate(&self) -> Option<u64> {
        if !self.long_delay() || self.cwnd < 8 * self.mss.max(1) {
            return None;
        }
        let rtt = self.srtt.max(self.min_rtt).max(1) as u128;
        let rate = self.cwnd as u128 * SECOND as u128 * 5 / 4 / rtt;
        Some((rate as u64).max(1))
    }

    /// The pacer's bucket (picoquic sender.c): a quarter of cwnd, at least 32 KiB on long
    /// paths, or the blog's 25 ms at cwnd / srtt once that is more than 32 KiB.
    pub fn send_quantum(&self) -> Option<u64> {
        self.pacing_rate()?;
        let quantum = self.cwnd / 4;
        if quantum < 2 * self.mss {
            return Some(2 * self.mss);
        }
        if quantum < MIN_BURST_BYTES {
            return Some(MIN_BURST_BYTES);
        }
        let rtt = self.srtt.max(self.min_rtt).max(1) as u128;
        let burst = (self.cwnd as u128 * BURST as u128 / rtt) as u64;
        Some(if burst > MIN_BURST_BYTES {
            burst
        } else {
            quantum
        })
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;
    use crate::RateSample;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    fn ack(now: Nanos, rtt: Nanos, delivery_rate: u64) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: MSS,
            mss: MSS,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            rate: Some(RateSample {
                delivery_rate,
                delivered: MSS,
                interval: 5 * MS,
                prior_delivered: 0,
                is_app_limited: false,
                rtt,
            }),
            delivered: MSS,
            cwnd_limited: true,
            sent_before_cwnd_block: true,
            ..Default::default()
        }
    }

    fn pb() -> HyStartPb {
        HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD, 0)
    }

    /// `n` ACKs of one segment each, arriving `MSS / rate` apart from `t0`, as the ACKs of a
    /// burst spread by a bottleneck of `rate` bytes/s; each acked packet was sent `rtt` before.
    fn ack_run(
        p: &mut HyStartPb,
        cwnd: u64,
        ssthresh: u64,
        t0: Nanos,
        rate: u64,
        n: u64,
        rtt: Nanos,
    ) -> SlowStartStep {
        ack_run_sent(
            p,
            cwnd,
            ssthresh,
            t0,
            rate,
            n,
            |t| t.saturating_sub(rtt),
            rtt,
        )
    }

    /// As `ack_run`, with the send time of each acked packet given by `sent(ack time)`.
    #[allow(clippy::too_many_arguments)]
    fn ack_run_sent(
        p: &mut HyStartPb,
        cwnd: u64,
        ssthresh: u64,
        t0: Nanos,
        rate: u64,
        n: u64,
        sent: impl Fn(Nanos) -> Nanos,
        rtt: Nanos,
    ) -> SlowStartStep {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let gap = MSS * SECOND / rate;
        let mut step = SlowStartStep {
            cwnd,
            leftover_credit: 0,
            exit: false,
            phase: crate::Phase::SlowStart,
        };
        for i in 0..n {
            let now = t0 + i * gap;
            let mut a = ack(now, rtt, 0);
            a.rate.as_mut().unwrap().rtt = now - sent(now);
            a.delivered = (i + 1) * MSS;
            step = p.on_ack(step.cwnd, ssthresh, &a, &g);
        }
        step
    }

    #[test]
    fn raises_cwnd_to_rtt_times_half_the_peak_rate_on_long_paths() {
        let mut p = pb();
        // 600 ms RTT; ACKs of a burst arriving at 250 Mbit/s = 31.25 MB/s: 32 us apart.
        let step = ack_run(&mut p, 10 * MSS, u64::MAX, MS, 31_250_000, 40, 600 * MS);
        assert!(p.peak_rate.abs_diff(31_250_000) < 31_250, "{}", p.peak_rate);
        // Raised to 0.6 s x peak / 2 once a sample spans 1 ms, then one MSS per later ACK.
        let target = 600 * p.peak_rate / 1000 / 2;
        assert!(
            (target..=target + 40 * MSS).contains(&step.cwnd),
            "{} vs {target}",
            step.cwnd
        );
        assert!(!step.exit);
        // Slower ACKs later do not lower the peak.
        ack_run(
            &mut p,
            step.cwnd,
            u64::MAX,
            100 * MS,
            1_000_000,
            40,
            600 * MS,
        );
        assert!(p.peak_rate.abs_diff(31_250_000) < 31_250);
        // Never above ssthresh.
        let mut q = pb();
        let step = ack_run(&mut q, 10 * MSS, 50 * MSS, MS, 31_250_000, 40, 600 * MS);
        assert_eq!(step.cwnd, 50 * MSS);
    }

    #[test]
    fn a_peak_sample_spans_more_than_a_millisecond() {
        let mut p = pb();
        // 32 ACKs 32 us apart span 0.992 ms: no sample yet; the 33rd closes one.
        ack_run(&mut p, 10 * MSS, u64::MAX, MS, 31_250_000, 32, 600 * MS);
        assert_eq!(p.peak_rate, 0);
        ack_run(&mut p, 10 * MSS, u64::MAX, MS, 31_250_000, 33, 600 * MS);
        assert!(p.peak_rate > 0);
    }

    #[test]
    fn the_longer_of_send_and_ack_intervals_counts() {
        // Paced: packets sent at 10 MB/s reach the receiver as sent, ACKs 100 us apart; with
        // a long send interval the sample is the pacing rate even if ACKs bunch up.
        let mut paced = pb();
        ack_run_sent(
            &mut paced,
            10 * MSS,
            u64::MAX,
            2 * SECOND,
            31_250_000,
            100,
            |t| 2 * SECOND - 600 * MS + (t - 2 * SECOND) * 3,
            600 * MS,
        );
        // Sent over 3x the ACK span: a third of the ACK rate.
        assert!(
            paced.peak_rate.abs_diff(31_250_000 / 3) < 100_000,
            "{}",
            paced.peak_rate
        );
        // A burst sent back to back: the send interval is ~0, the ACK rate counts.
        let mut burst = pb();
        ack_run_sent(
            &mut burst,
            10 * MSS,
            u64::MAX,
            MS,
            31_250_000,
            100,
            |_| 0,
            600 * MS,
        );
        assert!(burst.peak_rate.abs_diff(31_250_000) < 31_250);
        // Samples from packets sent before the reference point are skipped.
        let mut old = pb();
        ack_run_sent(
            &mut old,
            10 * MSS,
            u64::MAX,
            2 * SECOND,
            31_250_000,
            100,
            |t| 3 * SECOND - 600 * MS - t,
            600 * MS,
        );
        assert_eq!(old.peak_rate, 0);
    }

    #[test]
    fn the_raise_is_only_taken_when_larger() {
        let mut p = pb();
        // 200 ms x 100 kB/s / 2 = 10 kB < cwnd 100 kB: plain slow start.
        let step = ack_run(&mut p, 100 * MSS, u64::MAX, MS, 100_000, 20, 200 * MS);
        assert_eq!(step.cwnd, 120 * MSS);
    }

    #[test]
    fn long_paths_start_from_a_window_scaled_by_rtt() {
        // picoquic: CWIN_INITIAL x min(RTT, 610 ms) / 100 ms.
        for (rtt_ms, expected) in [(600, 60), (1000, 61), (250, 25), (80, 10)] {
            let mut p = HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD, 10 * MSS);
            let cwnd = p.on_rtt_sample(rtt_ms * MS, 10 * MSS, u64::MAX);
            assert_eq!(cwnd, expected * MSS, "{rtt_ms} ms");
        }
        // Off, and never above ssthresh or below the current window.
        let mut off = HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD, 0);
        assert_eq!(off.on_rtt_sample(600 * MS, 10 * MSS, u64::MAX), 10 * MSS);
        let mut capped = HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD, 10 * MSS);
        assert_eq!(capped.on_rtt_sample(600 * MS, 10 * MSS, 30 * MSS), 30 * MSS);
        let mut larger = HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD, 10 * MSS);
        assert_eq!(larger.on_rtt_sample(600 * MS, 90 * MSS, u64::MAX), 90 * MSS);
    }

    #[test]
    fn paces_at_five_quarters_of_cwnd_per_rtt_in_bursts_only_above_100_ms() {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut p = pb();
        assert_eq!(p.pacing_rate(), None, "no RTT yet");
        let step = p.on_ack(100 * MSS, u64::MAX, &ack(MS, 200 * MS, 1000), &g);
        assert_eq!(step.cwnd, 101 * MSS);
        // 1.25 x 101 kB / 0.2 s = 631.25 kB/s; cwnd / 4 = 25.25 kB < 32 KiB: 32 KiB.
        assert_eq!(p.pacing_rate(), Some(631_250));
        assert_eq!(p.send_quantum(), Some(MIN_BURST_BYTES));
        // cwnd / 4 above 32 KiB while 25 ms of cwnd / RTT is not: cwnd / 4.
        let step = p.on_ack(200 * MSS, u64::MAX, &ack(2 * MS, 200 * MS, 1000), &g);
        assert_eq!(step.cwnd, 201 * MSS);
        assert_eq!(p.send_quantum(), Some(201 * MSS / 4));
        // 25 ms of 2 MB / 0.2 s = 250 kB > 32 KiB: the blog's 25 ms burst.
        p.on_ack(1999 * MSS, u64::MAX, &ack(3 * MS, 200 * MS, 1000), &g);
        assert_eq!(p.send_quantum(), Some(250_000));
        // Below 8 segments: ACK clocking alone.
        let mut small = pb();
        small.on_ack(5 * MSS, u64::MAX, &ack(MS, 200 * MS, 1000), &g);
        assert_eq!(small.pacing_rate(), None);

        // At or below 100 ms: exactly HyStart, no pacing, no raise.
        let mut short = pb();
        let mut plain = HyStart::new(16, Detect::BOTH);
        for i in 0..60u64 {
            let a = ack(i * MS, 100 * MS, 1 << 40);
            let x = short.on_ack(20 * MSS, u64::MAX, &a, &g);
            let y = plain.on_ack(20 * MSS, u64::MAX, &a, &g);
            assert_eq!(x, y);
            assert_eq!(short.pacing_rate(), None);
            assert_eq!(short.send_quantum(), None);
        }
        assert!(
            short.hystart.found,
            "the 1 ms ACK train exits as HyStart does"
        );
    }

    #[test]
    fn rtt_excess_test_follows_picoquic() {
        let mut t = RttExcessTest::default();
        // Samples closer than 1 ms apart are ignored; a flat 300 ms never exits.
        for i in 0..200u64 {
            assert!(!t.on_sample(i * MS / 2, 300 * MS, false));
        }
        // 360 ms is within a quarter of 300 ms: no exit.
        for i in 0..100u64 {
            assert!(!t.on_sample(200 * MS + 2 * i * MS, 360 * MS, false));
        }
        // 380 ms: the ring of 7 fills with it, then 7 samples in excess end slow start.
        let mut exited_at = None;
        for i in 0..20u64 {
            if t.on_sample(500 * MS + 2 * i * MS, 380 * MS, false) {
                exited_at = Some(i + 1);
                break;
            }
        }
        assert_eq!(exited_at, Some(2 * RTT_SCOPE as u64 - 1));
        // A sample back at the minimum resets the count.
        let mut u = RttExcessTest::default();
        for i in 0..7u64 {
            u.on_sample(i * 2 * MS, 300 * MS, false);
        }
        for i in 7..19u64 {
            assert!(!u.on_sample(i * 2 * MS, 400 * MS, false));
        }
        assert!(!u.on_sample(40 * MS, 300 * MS, false));
        for i in 21..33u64 {
            assert!(!u.on_sample(i * 2 * MS, 400 * MS, false), "{i}");
        }
    }

    /// One-way delays: the margin is a quarter of the base, at most 50 ms (picoquic 2020).
    #[test]
    fn one_way_delay_margin_is_capped_at_50_ms() {
        let run = |one_way: bool, delay: Nanos| {
            let mut t = RttExcessTest::default();
            for i in 0..7u64 {
                t.on_sample(i * 2 * MS, 300 * MS, one_way);
            }
            (7..40u64).any(|i| t.on_sample(i * 2 * MS, delay, one_way))
        };
        assert!(
            run(true, 360 * MS),
            "60 ms over a 300 ms one-way delay: out"
        );
        assert!(
            !run(false, 360 * MS),
            "as an RTT, 60 ms is within a quarter of 300"
        );
        assert!(!run(true, 349 * MS));
        // A short base keeps the quarter: 20 ms over 60 ms is in excess, 14 ms is not.
        let short = |delay: Nanos| {
            let mut t = RttExcessTest::default();
            for i in 0..7u64 {
                t.on_sample(i * 2 * MS, 60 * MS, true);
            }
            (7..40u64).any(|i| t.on_sample(i * 2 * MS, delay, true))
        };
        assert!(short(80 * MS) && !short(74 * MS));
    }

    #[test]
    fn long_paths_exit_on_delay_excess_not_ack_trains() {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut p = pb();
        // A 1 ms ACK train for 200 ms at a flat 300 ms RTT: no exit.
        for i in 0..200u64 {
            assert!(
                !p.on_ack(20 * MSS, u64::MAX, &ack(i * MS, 300 * MS, 1000), &g)
                    .exit
            );
        }
        // One-way delays, when the ACK has them, feed the test instead of RTTs: a flat RTT
        // with a one-way delay up by more than a quarter exits.
        let mut exited = false;
        for i in 0..20u64 {
            let mut a = ack((202 + 2 * i) * MS, 300 * MS, 1000);
            a.one_way_delay = Some(400 * MS);
            exited |= p.on_ack(20 * MSS, u64::MAX, &a, &g).exit;
        }
        assert!(exited);
    }

    #[test]
    fn registered_as_cubic_with_this_rule_and_cubic_defaults_to_hystart() {
        use crate::params::ParamValue;
        use crate::registry::{build_for_test, Controller};
        use crate::slow_start::SlowStart;
        use crate::CongestionController;
        let mut c = build_for_test("hystart-pb", MSS, &[]).unwrap();
        let Controller::Cubic(lb) = &c else {
            panic!("hystart-pb runs CUBIC's rule")
        };
        assert!(matches!(lb.slow_start, SlowStart::HyStartPb(_)));
        // The handshake's RTT scales the initial window at once: 10 x 600 / 100 segments.
        c.on_rtt_sample(0, 600 * MS);
        assert_eq!(c.cwnd(), 60 * MSS);
        let mut off = build_for_test(
            "hystart-pb",
            MSS,
            &[("long_rtt_initcwnd", ParamValue::Bool(false))],
        )
        .unwrap();
        off.on_rtt_sample(0, 600 * MS);
        assert_eq!(off.cwnd(), 10 * MSS);
        for i in 0..40 {
            let mut a = ack(MS + i * 32_000, 600 * MS, 0);
            a.delivered = (i + 1) * MSS;
            c.on_ack(&a);
        }
        assert!(c.cwnd() > 9_000_000, "{}", c.cwnd());
        assert_eq!(
            c.pacing_rate(),
            Some((c.cwnd() as u128 * 5 * 1000 / 4 / 600) as u64)
        );
        let Controller::Cubic(lb) = build_for_test("cubic", MSS, &[]).unwrap() else {
            panic!()
        };
        assert!(matches!(lb.slow_start, SlowStart::HyStart(_)));
        let bad = [
            (
                "hystart_detect",
                ParamValue::Text("sometimes".into()),
                "both | ack_train | delay",
            ),
            ("search_thresh", ParamValue::Number(2.0), "0.01..=1"),
            ("pb_rtt_threshold_ms", ParamValue::Number(0.0), "1..=100000"),
            ("pb_cwnd_blocked", ParamValue::Number(1.0), "true | false"),
            (
                "long_rtt_initcwnd",
                ParamValue::Text("maybe".into()),
                "true | false",
            ),
        ];
        // Each value is checked by the rule that reads it.
        for (key, value, accepted) in bad {
            let rule = if key == "search_thresh" {
                "search"
            } else {
                "hystart-pb"
            };
            let spec = [("slow_start", ParamValue::Text(rule.into())), (key, value)];
            let err = build_for_test("reno", MSS, &spec).unwrap_err();
            assert!(err.0.contains(key) && err.0.contains(accepted), "{err}");
        }
    }

    /// On long paths picoquic decides growth itself, whatever Linux's `cwnd_limited` says:
    /// since April 2020 on every ACK of a packet not sent app-limited; before, only on ACKs of
    /// packets sent before the cwnd last blocked the sender (`pb_cwnd_blocked = true`,
    /// cc_common.c `picoquic_cc_was_cwin_blocked`). Every ACK still feeds the delay test.
    #[test]
    fn long_paths_grow_by_picoquic_rules_not_linux_cwnd_limited() {
        use crate::params::ParamValue;
        use crate::registry::build_for_test;
        use crate::CongestionController;
        let feed = |c: &mut crate::registry::Controller, before_block: bool, app_limited: bool| {
            c.on_rtt_sample(0, 600 * MS);
            let start = c.cwnd();
            for i in 0..20 {
                // Paced ACKs 10 ms apart: a peak of 100 kB/s raises nothing (30 kB < cwnd).
                let mut a = ack(SECOND + i * 10 * MS, 600 * MS, 0);
                let rate = a.rate.as_mut().unwrap();
                rate.rtt = 600 * MS;
                rate.is_app_limited = app_limited;
                a.delivered = (i + 1) * MSS;
                a.sent_before_cwnd_block = before_block;
                a.cwnd_limited = false;
                c.on_ack(&a);
            }
            c.cwnd() - start
        };
        let mut c = build_for_test("hystart-pb", MSS, &[]).unwrap();
        assert_eq!(
            feed(&mut c, false, false),
            20 * MSS,
            "one MSS per MSS acked"
        );
        let mut c = build_for_test("hystart-pb", MSS, &[]).unwrap();
        assert_eq!(feed(&mut c, true, true), 0, "sent app-limited: no growth");
        let blocked = [("pb_cwnd_blocked", ParamValue::Bool(true))];
        let mut c = build_for_test("hystart-pb", MSS, &blocked).unwrap();
        assert_eq!(feed(&mut c, false, false), 0, "pacer-limited: no growth");
        let mut c = build_for_test("hystart-pb", MSS, &blocked).unwrap();
        assert_eq!(feed(&mut c, true, false), 20 * MSS);
        // ACKs that do not grow cwnd still end slow start once delay builds: the ring's minimum
        // passes base + 25% at the 14th sample (i = 13); the 7th such minimum in a row exits.
        let mut p = pb();
        let g = WindowGrowth::new(AckCounting::Bytes);
        p.on_rtt_sample(600 * MS, 60 * MSS, u64::MAX);
        let mut exited_at = None;
        for i in 0..30u64 {
            let rtt = if i < 7 { 600 * MS } else { 800 * MS };
            let mut a = ack(SECOND + i * 2 * MS, rtt, 0);
            a.one_way_delay = None;
            a.rate.as_mut().unwrap().is_app_limited = true;
            let step = p.on_ack(60 * MSS, u64::MAX, &a, &g);
            assert_eq!(step.cwnd, 60 * MSS);
            if step.exit && exited_at.is_none() {
                exited_at = Some(i);
            }
        }
        assert_eq!(exited_at, Some(19));
    }
}
