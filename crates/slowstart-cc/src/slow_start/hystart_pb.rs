//! HyStart with a peak-bandwidth estimate for long-delay paths (picoquic, C. Huitema, "Faster
//! slow start for satellite links?", 2020): above 100 ms RTT pace in 25 ms bursts and raise cwnd
//! to RTT x peak rate / 2; otherwise plain HyStart.

use std::collections::VecDeque;

use super::hystart::{Detect, HyStart};
use super::SlowStartStep;
use crate::window::WindowGrowth;
use crate::{AckEvent, Nanos, SECOND};

/// Blog: the peak-bandwidth mode applies "if the RTT is larger than 100 milliseconds".
pub const RTT_THRESHOLD: Nanos = 100_000_000;
/// Blog: "long bursts – 25 milliseconds".
pub const BURST: Nanos = 25_000_000;
/// Shortest ACK run a peak-rate sample is taken over (noise guard): 1 ms and four segments.
pub const MIN_RUN: Nanos = 1_000_000;
pub const MIN_RUN_SEGMENTS: u64 = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyStartPb {
    pub hystart: HyStart,
    /// Minimum RTT above which the peak-bandwidth mode runs.
    pub rtt_threshold: Nanos,
    min_rtt: Nanos,
    /// Highest rate at which ACKs delivered data over a short run (at most one burst), bytes/s.
    pub peak_rate: u64,
    /// (time, delivered) of the ACKs of the last `BURST`: a burst sent back to back leaves the
    /// bottleneck at its rate, and so do its ACKs ("monitoring the amount of data received in
    /// short intervals", picoquic seed). Delivery-rate samples average over a round trip and
    /// cannot show it.
    recent_acks: VecDeque<(Nanos, u64)>,
    cwnd: u64,
    mss: u64,
}

impl HyStartPb {
    pub fn new(low_window: u64, detect: Detect, rtt_threshold: Nanos) -> Self {
        Self {
            hystart: HyStart::new(low_window, detect),
            rtt_threshold,
            min_rtt: 0,
            peak_rate: 0,
            recent_acks: VecDeque::new(),
            cwnd: 0,
            mss: 0,
        }
    }

    /// The peak-bandwidth mode (pacing, cwnd raise) is on: min RTT known and > the threshold.
    pub fn long_delay(&self) -> bool {
        self.min_rtt > self.rtt_threshold
    }

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
        if sample_min > 0 && (self.min_rtt == 0 || sample_min < self.min_rtt) {
            self.min_rtt = sample_min;
        }
        self.track_peak_rate(ack);
        let long = self.long_delay();
        // Paced bursts spread ACKs over the round: exit on delay increase only (the ACK-train
        // threshold would be the full min RTT anyway, tcp_cubic.c when paced).
        self.hystart.paced = long;
        let detect = self.hystart.detect;
        if long {
            self.hystart.detect.ack_train = false;
        }
        let mut step = self.hystart.on_ack(cwnd, ssthresh, ack, growth);
        self.hystart.detect = detect;
        if long && !step.exit {
            let target = (self.min_rtt as u128 * self.peak_rate as u128 / 2 / SECOND as u128)
                .min(ssthresh as u128) as u64;
            step.cwnd = step.cwnd.max(target);
        }
        self.cwnd = step.cwnd;
        self.mss = ack.mss;
        step
    }

    /// Peak rate over the ACK runs of the last burst length.
    fn track_peak_rate(&mut self, ack: &AckEvent) {
        while self
            .recent_acks
            .front()
            .is_some_and(|&(t, _)| t + BURST < ack.now)
        {
            self.recent_acks.pop_front();
        }
        if let Some(&(t0, d0)) = self.recent_acks.front() {
            let span = ack.now - t0;
            let bytes = ack.delivered - d0;
            if span >= MIN_RUN && bytes >= MIN_RUN_SEGMENTS * ack.mss {
                let rate = (bytes as u128 * SECOND as u128 / span as u128) as u64;
                self.peak_rate = self.peak_rate.max(rate);
            }
        }
        self.recent_acks.push_back((ack.now, ack.delivered));
    }

    /// About 2 x cwnd / RTT while the long-delay mode runs.
    pub fn pacing_rate(&self) -> Option<u64> {
        if !self.long_delay() || self.cwnd == 0 {
            return None;
        }
        let rate = 2 * self.cwnd as u128 * SECOND as u128 / self.min_rtt as u128;
        Some((rate as u64).max(1))
    }

    /// The bytes of one 25 ms burst at the pacing rate (at least one MSS).
    pub fn send_quantum(&self) -> Option<u64> {
        let rate = self.pacing_rate()?;
        let burst = (rate as u128 * BURST as u128 / SECOND as u128) as u64;
        Some(burst.max(self.mss).max(1))
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
            ..Default::default()
        }
    }

    fn pb() -> HyStartPb {
        HyStartPb::new(16, Detect::BOTH, RTT_THRESHOLD)
    }

    /// `n` ACKs of one segment each, arriving `MSS / rate` apart from `t0`, as the ACKs of a
    /// burst spread by a bottleneck of `rate` bytes/s.
    fn ack_run(
        p: &mut HyStartPb,
        cwnd: u64,
        ssthresh: u64,
        t0: Nanos,
        rate: u64,
        n: u64,
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
            let mut a = ack(t0 + i * gap, rtt, 0);
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
        // Raised to 0.6 s x peak / 2 once the run is long enough, then one MSS per later ACK.
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
    fn runs_shorter_than_a_millisecond_or_four_segments_give_no_peak() {
        let mut p = pb();
        ack_run(&mut p, 10 * MSS, u64::MAX, MS, 31_250_000, 4, 600 * MS);
        assert_eq!(p.peak_rate, 0, "3 gaps of 32 us: too short a run");
    }

    #[test]
    fn the_raise_is_only_taken_when_larger() {
        let mut p = pb();
        // 200 ms x 100 kB/s / 2 = 10 kB < cwnd 100 kB: plain slow start.
        let step = ack_run(&mut p, 100 * MSS, u64::MAX, MS, 100_000, 20, 200 * MS);
        assert_eq!(step.cwnd, 120 * MSS);
    }

    #[test]
    fn paces_in_25_ms_bursts_only_above_100_ms() {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut p = pb();
        assert_eq!(p.pacing_rate(), None, "no RTT yet");
        let step = p.on_ack(100 * MSS, u64::MAX, &ack(MS, 200 * MS, 1000), &g);
        assert_eq!(step.cwnd, 101 * MSS);
        // 2 x 101 kB / 0.2 s = 1.01 MB/s; 25 ms of it = 25.25 kB.
        assert_eq!(p.pacing_rate(), Some(1_010_000));
        assert_eq!(p.send_quantum(), Some(25_250));

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
    fn long_paths_exit_on_delay_increase_not_ack_trains() {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut p = pb();
        // A 1 ms ACK train for 200 ms at a flat 300 ms RTT: no exit.
        for i in 0..200u64 {
            assert!(
                !p.on_ack(20 * MSS, u64::MAX, &ack(i * MS, 300 * MS, 1000), &g)
                    .exit
            );
        }
        // RTT up by more than 16 ms: exit after the round's 8 samples.
        let mut exited = false;
        for i in 0..10u64 {
            exited |= p
                .on_ack(20 * MSS, u64::MAX, &ack((300 + i) * MS, 320 * MS, 1000), &g)
                .exit;
        }
        assert!(!exited, "the round's minimum still holds 300 ms samples");
        let mut a = ack(400 * MS, 320 * MS, 1000);
        a.delivered = 10 * MSS;
        a.rate.as_mut().unwrap().prior_delivered = 10 * MSS;
        for i in 0..10u64 {
            a.now = (400 + i) * MS;
            exited |= p.on_ack(20 * MSS, u64::MAX, &a, &g).exit;
            a.rate.as_mut().unwrap().prior_delivered = 0;
        }
        assert!(exited);
    }

    #[test]
    fn registered_as_cubic_with_this_rule_and_cubic_defaults_to_hystart() {
        use crate::registry::{build_for_test, Controller, ParamValue};
        use crate::slow_start::SlowStart;
        use crate::CongestionController;
        let mut c = build_for_test("hystart-pb", MSS, &[]).unwrap();
        let Controller::Cubic(lb) = &c else {
            panic!("hystart-pb runs CUBIC's rule")
        };
        assert!(matches!(lb.slow_start, SlowStart::HyStartPb(_)));
        for i in 0..40 {
            let mut a = ack(MS + i * 32_000, 600 * MS, 0);
            a.delivered = (i + 1) * MSS;
            c.on_ack(&a);
        }
        assert!(c.cwnd() > 9_000_000, "{}", c.cwnd());
        assert_eq!(c.pacing_rate(), Some(2 * c.cwnd() * 1000 / 600));
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
        ];
        for (key, value, accepted) in bad {
            let err = build_for_test("reno", MSS, &[(key, value)]).unwrap_err();
            assert!(err.0.contains(key) && err.0.contains(accepted), "{err}");
        }
    }
}
