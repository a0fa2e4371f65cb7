//! The pacer: packets leave no faster than the pacing rate. With the Linux model (the default)
//! the rate is the controller's when it sets one, otherwise, with pacing on, Linux's
//! `tcp_update_pacing_rate` from cwnd and srtt, with a burst allowance of one send quantum, as
//! Linux's fq does. With the quinn model it is quinn-proto's token bucket ([`QuinnBucket`]).

use slowstart_cc::{mul_div, CongestionController, Controller, RttEstimator, SECOND};

use crate::settings::PacerModel;
use crate::timer::Timer;

/// quinn's pacing gain, 5/4: its bucket refills at 1.25 x cwnd per srtt (quinn-proto 0.11.19
/// `connection/pacing.rs`, after RFC 9002 §7.7's N = 1.25).
pub const QUINN_PACING_GAIN: (u64, u64) = (5, 4);
/// quinn's burst interval: the bucket holds what 1 x cwnd / srtt sends in 2 ms
/// (`BURST_INTERVAL_NANOS`) ...
const QUINN_BURST_INTERVAL_NS: u64 = 2_000_000;
/// ... but no less than 10 packets and no more than 256 (`MIN_BURST_SIZE`, `MAX_BURST_SIZE`).
const QUINN_BURST_PACKETS: (u64, u64) = (10, 256);

pub(super) struct Pacer {
    /// Pace at Linux's rate when the controller sets none.
    enabled: bool,
    /// Earliest departure of the next packet (the Linux model).
    next_send_ns: u64,
    /// quinn's bucket, from the first packet paced (the quinn model).
    quinn: Option<QuinnBucket>,
    model: PacerModel,
    timer: Timer,
}

impl Pacer {
    pub fn new(enabled: bool, model: PacerModel) -> Self {
        Pacer {
            enabled,
            next_send_ns: 0,
            quinn: None,
            model,
            timer: Timer::default(),
        }
    }

    /// Bytes per second to pace at, if any.
    pub fn rate(&self, cc: &Controller, rtt: &RttEstimator) -> Option<u64> {
        if self.model == PacerModel::Quinn {
            // quinn paces from its handshake's RTT sample; without one, nothing is paced.
            let (num, den) = QUINN_PACING_GAIN;
            return self
                .enabled
                .then_some(())
                .filter(|_| rtt.has_sample())
                .map(|_| mul_div(cc.cwnd(), num * SECOND, den * rtt.srtt().max(1)).max(1));
        }
        if let Some(r) = cc.pacing_rate() {
            return Some(r.max(1));
        }
        if !self.enabled || !rtt.has_sample() {
            return None;
        }
        // Linux tcp_update_pacing_rate: 200% of cwnd/srtt in slow start, 120% after.
        let ratio = if cc.cwnd() < cc.ssthresh() / 2 {
            200
        } else {
            120
        };
        let srtt = rtt.srtt().max(1);
        // ratio% of cwnd per srtt, in bytes per second: cwnd * ratio * 10^9 / 100 / srtt.
        Some(mul_div(cc.cwnd(), ratio * (SECOND / 100), srtt).max(1))
    }

    /// True if a packet of up to `mss` payload bytes may not leave at `now`; then the pacing
    /// timer is armed for it. `cwnd` and `srtt` are the quinn model's (it reads them as it
    /// decides, as quinn does).
    pub fn must_wait(&mut self, now: u64, (cwnd, srtt, mss): (u64, u64, u64)) -> bool {
        let wait_until = match self.model {
            PacerModel::Linux => Some(self.next_send_ns).filter(|&t| t > now),
            PacerModel::Quinn => self
                .quinn
                .get_or_insert_with(|| QuinnBucket::new(srtt, cwnd, mss, now))
                .delay(now, srtt, mss, mss, cwnd),
        };
        let Some(at) = wait_until else {
            return false;
        };
        self.timer.set(Some(at.max(now + 1)));
        true
    }

    /// A packet of `wire` bytes on the wire and `len` payload bytes left at `now`, paced at
    /// `rate` with bursts of `quantum` bytes (the Linux model; quinn's takes `len` from its
    /// bucket, counted in the window's bytes).
    pub fn on_sent(&mut self, now: u64, (wire, len): (u64, u64), rate: u64, quantum: u64) {
        if let Some(bucket) = self.quinn.as_mut() {
            bucket.on_transmit(len);
            return;
        }
        let burst_ns = mul_div(quantum, SECOND, rate);
        let gap = mul_div(wire, SECOND, rate);
        self.next_send_ns = self.next_send_ns.max(now.saturating_sub(burst_ns)) + gap;
    }

    /// Forget the schedule: the next packet may leave at `now` (quinn's bucket is never reset:
    /// it refills with the time that passed).
    pub fn restart(&mut self, now: u64) {
        self.next_send_ns = now;
    }

    pub fn stop(&mut self) {
        self.timer.set(None);
    }

    pub fn timer(&self) -> &Timer {
        &self.timer
    }

    pub fn timer_mut(&mut self) -> &mut Timer {
        &mut self.timer
    }
}

/// quinn-proto 0.11.19's pacer (`connection/pacing.rs`), in the sender's units: a token bucket
/// of `capacity` bytes, refilled at 1.25 x window / srtt when a packet finds it short; the
/// sender then waits until the bucket is full again, so packets leave in bursts of `capacity`.
/// Windows and tokens count payload bytes here where quinn counts datagram bytes, so that both
/// pace the same packets per second.
#[derive(Clone, Debug)]
pub(super) struct QuinnBucket {
    capacity: u64,
    last_window: u64,
    last_mtu: u64,
    tokens: u64,
    prev_ns: u64,
}

impl QuinnBucket {
    pub fn new(srtt: u64, window: u64, mtu: u64, now: u64) -> Self {
        let capacity = quinn_capacity(srtt, window, mtu);
        QuinnBucket {
            capacity,
            last_window: window,
            last_mtu: mtu,
            tokens: capacity,
            prev_ns: now,
        }
    }

    pub fn on_transmit(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(bytes);
    }

    /// quinn's `Pacer::delay`: `None` if `bytes` may leave at `now`, otherwise when to look
    /// again (when the bucket will be full).
    pub fn delay(&mut self, now: u64, srtt: u64, bytes: u64, mtu: u64, window: u64) -> Option<u64> {
        if window != self.last_window || mtu != self.last_mtu {
            self.capacity = quinn_capacity(srtt, window, mtu);
            self.tokens = self.tokens.min(self.capacity);
            self.last_window = window;
            self.last_mtu = mtu;
        }
        if self.tokens >= bytes || window > u64::from(u32::MAX) || srtt == 0 || window == 0 {
            return None;
        }
        let (num, den) = QUINN_PACING_GAIN;
        let elapsed = now.saturating_sub(self.prev_ns);
        let new_tokens = u128::from(window) * u128::from(num) * u128::from(elapsed)
            / (u128::from(den) * u128::from(srtt));
        self.tokens = u128::from(self.tokens)
            .saturating_add(new_tokens)
            .min(u128::from(self.capacity)) as u64;
        self.prev_ns = now;
        if self.tokens >= bytes {
            return None;
        }
        // The time the bucket is full again: srtt x missing / window, divided by the gain.
        let unscaled = mul_div(srtt, bytes.max(self.capacity) - self.tokens, window);
        Some(self.prev_ns + unscaled / num * den)
    }
}

/// quinn's `optimal_capacity`: what cwnd / srtt sends in the burst interval, within 10 to 256
/// packets of `mtu` bytes.
fn quinn_capacity(srtt: u64, window: u64, mtu: u64) -> u64 {
    let (lo, hi) = QUINN_BURST_PACKETS;
    mul_div(window, QUINN_BURST_INTERVAL_NS, srtt.max(1)).clamp(lo * mtu, hi * mtu)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Linux model does not read the window.
    const NO_WINDOW: (u64, u64, u64) = (0, 0, 0);

    #[test]
    fn spaces_packets_at_the_rate_after_a_quantum_of_burst() {
        let mut p = Pacer::new(true, PacerModel::Linux);
        // 1 MB/s: a 1000-byte packet every ms, a 2000-byte burst.
        let rate = 1_000_000;
        assert!(!p.must_wait(0, NO_WINDOW));
        p.on_sent(0, (1000, 960), rate, 2000);
        assert!(p.must_wait(0, NO_WINDOW));
        assert_eq!(p.timer().deadline(), Some(1_000_000));
        // After a long idle, a quantum leaves at once, then the rate holds again.
        p.on_sent(10_000_000, (1000, 960), rate, 2000);
        assert!(!p.must_wait(10_000_000, NO_WINDOW));
        p.on_sent(10_000_000, (1000, 960), rate, 2000);
        assert!(!p.must_wait(10_000_000, NO_WINDOW));
        p.on_sent(10_000_000, (1000, 960), rate, 2000);
        assert!(p.must_wait(10_000_000, NO_WINDOW));
    }

    /// With the quinn model a window of W bytes at srtt S leaves at 1.25 W / S, whatever the
    /// controller asks: here W = 100 packets of 1000 bytes, S = 100 ms, so 1.25 MB/s, in bursts
    /// of quinn's smallest bucket (10 packets, 8 ms apart) after a first full bucket.
    #[test]
    fn quinn_model_sends_a_window_at_five_fourths_of_it_per_srtt() {
        use slowstart_cc::{CcSpec, CommonParams};
        let (mss, window, srtt) = (1000, 100_000, 100_000_000);
        let mut p = Pacer::new(true, PacerModel::Quinn);
        let mut sent_at = Vec::new();
        let mut now = 0;
        while sent_at.len() < 1010 {
            if p.must_wait(now, (window, srtt, mss)) {
                now = p.timer().deadline().unwrap();
                assert!(p.timer_mut().fire(now));
                continue;
            }
            sent_at.push(now);
            p.on_sent(now, (mss + 40, mss), 0, 0);
        }
        // 1000 packets after the first bucket of 10: 1 MB at 1.25 MB/s, 0.8 s.
        assert_eq!(sent_at[1009] - sent_at[10], 800_000_000 - 8_000_000);
        assert_eq!(sent_at[10], 8_000_000);
        assert!(sent_at.chunks(10).all(|burst| burst[0] == burst[9]));
        // The rate reported is quinn's, not hystart-pb's own.
        let common = CommonParams {
            mss,
            initcwnd: 100,
            abc: true,
            seed: 0,
            paced: true,
        };
        let cc = Controller::new(&CcSpec::named("hystart-pb"), &common).unwrap();
        let mut rtt = RttEstimator::new(200_000_000, 60 * SECOND, 1_000_000);
        rtt.on_sample(srtt);
        assert_eq!(cc.cwnd(), window);
        assert_eq!(p.rate(&cc, &rtt), Some(1_250_000));
        assert_ne!(cc.pacing_rate(), Some(1_250_000));
    }
}
