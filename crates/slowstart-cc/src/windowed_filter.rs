//! Windowed max filter (Kathleen Nichols' 3-sample algorithm, as Linux `lib/win_minmax.c`), used
//! by draft-ietf-ccwg-bbr-06 §5.5.5 (MaxBwFilter over 2 ProbeBW cycles) and §5.5.9 (ExtraACKed),
//! and by BBR v1 for its bandwidth over 10 rounds (tcp_bbr.c `bbr->bw`).

/// One sample: a value and the time (round or cycle count, or nanoseconds) it was taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    time: u64,
    value: u64,
}

/// Running maximum of the samples taken in the last `window` time units: a sample taken at `t`
/// counts while `now - t < window`. O(1) memory and time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxFilter {
    window: u64,
    s: [Sample; 3],
}

impl MaxFilter {
    /// An empty filter (maximum 0) over `window` time units (at least 1).
    pub fn new(window: u64) -> Self {
        Self {
            window: window.max(1),
            s: [Sample::default(); 3],
        }
    }

    /// Change the window (at least 1); the samples kept stay.
    pub fn set_window(&mut self, window: u64) {
        self.window = window.max(1);
    }

    /// Current maximum.
    pub fn get(&self) -> u64 {
        self.s[0].value
    }

    /// Forget everything and start over from `value` at `time`.
    pub fn reset(&mut self, time: u64, value: u64) {
        self.s = [Sample { time, value }; 3];
    }

    /// Add `value` measured at `time` (non-decreasing) and return the windowed maximum.
    pub fn update(&mut self, time: u64, value: u64) -> u64 {
        let new = Sample { time, value };
        if value >= self.s[0].value || time.saturating_sub(self.s[2].time) >= self.window {
            self.reset(time, value);
            return value;
        }
        if value >= self.s[1].value {
            self.s[1] = new;
            self.s[2] = new;
        } else if value >= self.s[2].value {
            self.s[2] = new;
        }
        // Age out the best samples (win_minmax.c `minmax_subwin_update`).
        let dt = time.saturating_sub(self.s[0].time);
        if dt >= self.window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if time.saturating_sub(self.s[0].time) >= self.window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
            }
        } else if self.s[1].time == self.s[0].time && dt > self.window / 4 {
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].time == self.s[1].time && dt > self.window / 2 {
            self.s[2] = new;
        }
        self.s[0].value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn max_holds_within_window_and_expires_after_it() {
        // MaxBwFilterLen = 2 cycles (draft-ietf-ccwg-bbr-06 §2.11): a sample from cycle c
        // counts in cycles c and c+1 and is gone in c+2.
        let mut f = MaxFilter::new(2);
        assert_eq!(f.update(0, 100), 100);
        assert_eq!(f.update(1, 50), 100);
        assert_eq!(f.update(2, 60), 60, "cycle-0 sample expired");
        assert_eq!(f.update(3, 10), 60);
        assert_eq!(f.update(4, 10), 10);
    }

    #[test]
    fn ten_round_window() {
        let mut f = MaxFilter::new(10);
        f.update(0, 7);
        for t in 1..10 {
            assert_eq!(f.update(t, 1), 7);
        }
        assert_eq!(f.update(10, 1), 1);
    }

    proptest! {
        /// The estimate is at least the newest sample and at most the true maximum of the last
        /// `window` time units (it may under-estimate, as the 3-sample algorithm allows).
        #[test]
        fn never_below_newest_nor_above_window_max(values in proptest::collection::vec(0u64..1000, 1..200), window in 1u64..12) {
            let mut f = MaxFilter::new(window);
            for (t, v) in values.iter().enumerate() {
                let t = t as u64;
                let got = f.update(t, *v);
                let lo = t.saturating_sub(window - 1) as usize;
                let true_max = values[lo..=t as usize].iter().copied().max().unwrap();
                prop_assert!(got >= *v);
                prop_assert!(got <= true_max, "t={t} got {got} > window max {true_max}");
            }
        }
    }
}
