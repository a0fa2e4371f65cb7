//! SEARCH slow-start exit (draft-chung-ccwg-search, delivered-bytes form of -00/-01 as briefed;
//! bin/interpolation layout checked against neqo's implementation of -09): leave slow start when
//! the bytes delivered over the last window stop being about twice those one RTT earlier.

use super::{SlowStart, SlowStartStep};
use crate::window::WindowGrowth;
use crate::{AckEvent, Nanos};

/// Window = WINDOW_SIZE_FACTOR x initial RTT (draft: 3.5), in tenths.
pub const WINDOW_SIZE_FACTOR_TENTHS: u64 = 35;
/// Bins per window (draft `W` = 10).
pub const W: usize = 10;
/// Extra bins kept so the window one RTT back can be read (draft `EXTRA_BINS` = 15).
pub const EXTRA_BINS: usize = 15;
/// Ring size: the window one RTT back spans `[prev_idx - 1 - W, curr_idx]`.
const NUM_BINS: usize = W + 1 + EXTRA_BINS;
/// Draft `THRESH` = 0.35, in thousandths (the `search_thresh` default).
pub const THRESH_MILLI: u64 = 350;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// Exit threshold on norm_diff, thousandths.
    pub thresh_milli: u64,
    /// Cumulative delivered bytes at each bin boundary (ring, index mod NUM_BINS).
    bins: [u64; NUM_BINS],
    /// `None` until the first RTT sample sets the bin width.
    curr_idx: Option<usize>,
    bin_end: Nanos,
    bin_duration: Nanos,
    initial_rtt: Nanos,
    /// norm_diff at the last evaluation, thousandths (for tests and traces).
    pub last_norm_diff_milli: Option<i64>,
}

impl Search {
    pub fn new(thresh_milli: u64) -> Self {
        Self {
            thresh_milli,
            bins: [0; NUM_BINS],
            curr_idx: None,
            bin_end: 0,
            bin_duration: 0,
            initial_rtt: 0,
            last_norm_diff_milli: None,
        }
    }

    fn bin(&self, idx: usize) -> u64 {
        self.bins[idx % NUM_BINS]
    }

    /// Bytes delivered between bin boundaries `old` and `new`.
    fn delivered(&self, old: usize, new: usize) -> u64 {
        self.bin(new).saturating_sub(self.bin(old))
    }

    /// Draft §"Initialization": bin width = WINDOW_SIZE / W from the first RTT sample.
    fn init(&mut self, now: Nanos, rtt: Nanos, delivered_before: u64) {
        self.initial_rtt = rtt;
        self.bin_duration = (rtt * WINDOW_SIZE_FACTOR_TENTHS / 10 / W as u64).max(1);
        self.bin_end = now + self.bin_duration;
        self.bins = [delivered_before; NUM_BINS];
        self.curr_idx = Some(0);
    }

    /// Bin boundary passed: record it, then compare windows. Returns true to exit.
    fn update(&mut self, now: Nanos, rtt: Nanos, delivered_before: u64) -> bool {
        let Some(mut idx) = self.curr_idx else {
            return false;
        };
        let passed = ((now - self.bin_end) / self.bin_duration + 1) as usize;
        if passed > W {
            // Draft -09 "Handling missed bins" (optional): data too stale, start over.
            self.init(now, self.initial_rtt, delivered_before);
            return false;
        }
        // Skipped bins carry the previous cumulative value (nothing delivered in them).
        let last = self.bin(idx);
        for i in idx + 1..idx + passed {
            self.bins[i % NUM_BINS] = last;
        }
        idx += passed;
        self.bins[idx % NUM_BINS] = delivered_before;
        self.bin_end += passed as Nanos * self.bin_duration;
        self.curr_idx = Some(idx);
        self.evaluate(idx, rtt)
    }

    /// norm_diff = (2 prev_delv - curr_delv) / (2 prev_delv), prev_delv over the window one
    /// RTT earlier, interpolated between the two bins around it.
    fn evaluate(&mut self, idx: usize, rtt: Nanos) -> bool {
        let shift = (rtt / self.bin_duration) as usize;
        let fraction_milli = (rtt % self.bin_duration) * 1000 / self.bin_duration;
        if shift >= EXTRA_BINS || idx < shift + W + 1 {
            return false;
        }
        let prev_idx = idx - shift;
        let curr = self.delivered(idx - W, idx);
        // prev_idx is late by `fraction` of a bin: blend with the window one bin earlier.
        let late = self.delivered(prev_idx - W, prev_idx) as u128;
        let early = self.delivered(prev_idx - 1 - W, prev_idx - 1) as u128;
        let prev = ((late * (1000 - fraction_milli as u128) + early * fraction_milli as u128)
            / 1000) as u64;
        if prev == 0 {
            return false;
        }
        let norm = (2 * prev as i128 - curr as i128) * 1000 / (2 * prev as i128);
        self.last_norm_diff_milli = Some(norm as i64);
        norm >= self.thresh_milli as i128
    }

    /// Standard slow start; at a bin boundary, exit (ssthresh = cwnd, unchanged: the draft's
    /// optional cwnd correction is not applied) when norm_diff >= THRESH.
    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let delivered_before = ack.delivered.saturating_sub(ack.bytes_acked);
        // The draft's RTT for the look-back: the smoothed RTT, else this sample.
        let rtt = if ack.srtt > 0 {
            Some(ack.srtt)
        } else {
            ack.rtt
        };
        if let Some(rtt) = rtt.filter(|r| *r > 0) {
            let exit = match self.curr_idx {
                None => {
                    self.init(ack.now, rtt, delivered_before);
                    false
                }
                Some(_) if ack.now > self.bin_end => self.update(ack.now, rtt, delivered_before),
                Some(_) => false,
            };
            if exit {
                let mut step = SlowStart::standard_step(cwnd, cwnd, ack, growth);
                step.exit = true;
                return step;
            }
        }
        SlowStart::standard_step(cwnd, ssthresh, ack, growth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::AckCounting;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    /// Drive `ms` milliseconds of one ACK per millisecond, delivering what `rate(t_ms)` (bytes
    /// per ms) says. Returns the time of exit, if any.
    fn run(s: &mut Search, rtt: Nanos, ms: u64, rate: impl Fn(u64) -> u64) -> Option<u64> {
        let g = WindowGrowth::new(AckCounting::Bytes);
        let mut delivered = 0;
        let mut cwnd = 10 * MSS;
        for t in 1..=ms {
            let bytes = rate(t).max(1);
            delivered += bytes;
            let ack = AckEvent {
                now: t * MS,
                bytes_acked: bytes,
                mss: MSS,
                rtt: Some(rtt),
                srtt: rtt,
                delivered,
                cwnd_limited: true,
                ..Default::default()
            };
            let step = s.on_ack(cwnd, u64::MAX, &ack, &g);
            assert!(step.cwnd >= cwnd);
            if step.exit {
                assert_eq!(step.cwnd, cwnd, "cwnd unchanged at exit");
                return Some(t);
            }
            cwnd = step.cwnd;
        }
        None
    }

    /// Delivery rate doubling every RTT (100 ms), from 10 segments per RTT.
    fn doubling(t: u64) -> u64 {
        (100.0 * 2f64.powf(t as f64 / 100.0)) as u64
    }

    #[test]
    fn bins_follow_the_draft_layout() {
        let mut s = Search::new(THRESH_MILLI);
        s.init(0, 100 * MS, 0);
        // Window 3.5 x 100 ms over 10 bins: 35 ms each; 26 bins kept.
        assert_eq!(s.bin_duration, 35 * MS);
        assert_eq!(NUM_BINS, 26);
        assert_eq!(THRESH_MILLI, 350);
    }

    #[test]
    fn no_exit_while_the_delivery_rate_keeps_doubling() {
        let mut s = Search::new(THRESH_MILLI);
        assert_eq!(run(&mut s, 100 * MS, 2000, doubling), None);
        // Doubling per RTT: prev window delivers half of the current one, norm_diff ~ 0.
        let norm = s.last_norm_diff_milli.unwrap();
        assert!(norm.abs() < 50, "{norm}");
    }

    #[test]
    fn exits_once_the_delivery_rate_saturates() {
        let mut s = Search::new(THRESH_MILLI);
        // Saturates at 10 segments per ms from t = 100 log2(100) ~ 664 ms. Both windows must
        // have seen the cap before curr <= 1.3 prev: more than one RTT after saturation, and no
        // later than a window (350 ms) plus an RTT after it, when prev = curr (norm_diff 0.5).
        let cap = 10 * MSS;
        let exit = run(&mut s, 100 * MS, 2000, |t| doubling(t).min(cap)).unwrap();
        assert!((764..=1114).contains(&exit), "exit at {exit} ms");
        assert!(s.last_norm_diff_milli.unwrap() >= 350);
    }

    #[test]
    fn a_higher_threshold_exits_later() {
        let cap = 10 * MSS;
        let mut low = Search::new(THRESH_MILLI);
        let mut high = Search::new(450);
        let a = run(&mut low, 100 * MS, 2000, |t| doubling(t).min(cap)).unwrap();
        let b = run(&mut high, 100 * MS, 2000, |t| doubling(t).min(cap)).unwrap();
        assert!(b > a, "{a} {b}");
    }

    #[test]
    fn a_long_stall_restarts_the_bins() {
        let mut s = Search::new(THRESH_MILLI);
        run(&mut s, 100 * MS, 300, doubling);
        let g = WindowGrowth::new(AckCounting::Bytes);
        let ack = AckEvent {
            now: 2000 * MS,
            bytes_acked: MSS,
            mss: MSS,
            srtt: 100 * MS,
            delivered: 1 << 30,
            cwnd_limited: true,
            ..Default::default()
        };
        assert!(!s.on_ack(10 * MSS, u64::MAX, &ack, &g).exit);
        assert_eq!(s.curr_idx, Some(0));
    }
}
