//! Estimators a transport keeps once and shares with every controller: the RFC 6298 RTT
//! estimator and the delivery-rate sampler of draft-cheng-iccrg-delivery-rate-estimation-02.
//! Both are O(1) per packet and per ACK.

use crate::{Nanos, SECOND};

/// RFC 6298 §2 smoothed RTT and RTO, with Linux's 200 ms minimum by default.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Nanos,
    rttvar: Nanos,
    min_rtt: Nanos,
    latest: Nanos,
    has_sample: bool,
    min_rto: Nanos,
    max_rto: Nanos,
    granularity: Nanos,
}

impl RttEstimator {
    /// RFC 6298 §2.1: before any sample the RTO is 1 s.
    pub const INITIAL_RTO: Nanos = SECOND;

    /// An estimator with no sample yet; the RTO is clamped to `[min_rto, max_rto]`, and
    /// `granularity` is RFC 6298's clock granularity G.
    pub fn new(min_rto: Nanos, max_rto: Nanos, granularity: Nanos) -> Self {
        Self {
            srtt: 0,
            rttvar: 0,
            min_rtt: 0,
            latest: 0,
            has_sample: false,
            min_rto,
            max_rto,
            granularity,
        }
    }

    /// RFC 6298 §2.2 and §2.3 (alpha = 1/8, beta = 1/4).
    pub fn on_sample(&mut self, rtt: Nanos) {
        self.latest = rtt;
        if !self.has_sample {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            self.min_rtt = rtt;
            self.has_sample = true;
            return;
        }
        self.min_rtt = self.min_rtt.min(rtt);
        let err = self.srtt.abs_diff(rtt);
        self.rttvar = (3 * self.rttvar + err) / 4;
        self.srtt = (7 * self.srtt + rtt) / 8;
    }

    /// RFC 6298 §2.2: RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto].
    pub fn rto(&self) -> Nanos {
        if !self.has_sample {
            return Self::INITIAL_RTO.max(self.min_rto);
        }
        let rto = self.srtt + self.granularity.max(4 * self.rttvar);
        rto.clamp(self.min_rto, self.max_rto)
    }

    /// Smoothed RTT (SRTT), 0 before the first sample.
    pub fn srtt(&self) -> Nanos {
        self.srtt
    }

    /// Smallest sample so far, 0 before the first.
    pub fn min_rtt(&self) -> Nanos {
        self.min_rtt
    }

    /// The newest sample, 0 before the first.
    pub fn latest(&self) -> Nanos {
        self.latest
    }

    /// RTT variation (RTTVAR), 0 before the first sample.
    pub fn rttvar(&self) -> Nanos {
        self.rttvar
    }

    /// Whether any sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
}

/// Per-packet snapshot taken when the packet is sent and handed back when it is delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketRateState {
    /// The sampler's `delivered` bytes when the packet was sent (draft's `P.delivered`).
    pub delivered: u64,
    /// When `delivered` was last updated before the packet was sent (`P.delivered_time`).
    pub delivered_time: Nanos,
    /// Start of its send interval: the send time of the newest packet delivered before it was
    /// sent, or its own after an idle (`P.first_sent_time`).
    pub first_sent_time: Nanos,
    /// When the packet was sent.
    pub sent_time: Nanos,
    /// Whether it was sent in an application-limited period (`P.is_app_limited`, §3.4).
    pub is_app_limited: bool,
}

/// One delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes per second.
    pub delivery_rate: u64,
    /// Bytes delivered over the sample interval.
    pub delivered: u64,
    /// The sample interval: the longer of the send and ACK elapsed times (§3.3).
    pub interval: Nanos,
    /// `delivered` counter when the newest acked packet was sent: round counting uses it.
    pub prior_delivered: u64,
    /// Whether the newest acked packet was sent while application limited (§3.4).
    pub is_app_limited: bool,
    /// RTT of the newest acked packet (including any ACK delay).
    pub rtt: Nanos,
}

/// Connection-wide state of the delivery-rate sampler.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time: Nanos,
    first_sent_time: Nanos,
    /// Nonzero while the sample in progress is application limited: the `delivered` value at
    /// which that ends (§3.4).
    app_limited_until: u64,
    // The sample being built from one ACK.
    prior_delivered: u64,
    prior_time: Nanos,
    send_elapsed: Nanos,
    ack_elapsed: Nanos,
    sample_rtt: Nanos,
    sample_app_limited: bool,
    has_newest: bool,
}

impl RateSampler {
    /// A sampler with nothing delivered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Total bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Snapshot for a packet sent at `now` (§3.2); `bytes_in_flight` is before sending it.
    pub fn on_packet_sent(&mut self, now: Nanos, bytes_in_flight: u64) -> PacketRateState {
        if bytes_in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketRateState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            is_app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender ran out of data with the window open (§3.4).
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited_until = (self.delivered + bytes_in_flight).max(1);
    }

    /// A packet sent with snapshot `p` and `bytes` of payload was delivered (ACKed or SACKed).
    pub fn on_packet_delivered(&mut self, now: Nanos, p: &PacketRateState, bytes: u64) {
        self.delivered += bytes;
        self.delivered_time = now;
        if !self.has_newest || p.delivered >= self.prior_delivered {
            self.has_newest = true;
            self.prior_delivered = p.delivered;
            self.prior_time = p.delivered_time;
            self.sample_app_limited = p.is_app_limited;
            self.send_elapsed = p.sent_time - p.first_sent_time;
            self.ack_elapsed = self.delivered_time - p.delivered_time;
            self.sample_rtt = now - p.sent_time;
            self.first_sent_time = p.sent_time;
        }
    }

    /// Finish the sample for this ACK (§3.3). `None` when nothing was delivered or the interval
    /// is shorter than `min_rtt` (the draft discards those as ACK-compression artefacts).
    pub fn take_sample(&mut self, min_rtt: Nanos) -> Option<RateSample> {
        if !self.has_newest {
            return None;
        }
        self.has_newest = false;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let delivered = self.delivered - self.prior_delivered;
        let interval = self.send_elapsed.max(self.ack_elapsed);
        if interval == 0 || interval < min_rtt {
            return None;
        }
        let _ = self.prior_time;
        Some(RateSample {
            delivery_rate: crate::mul_div(delivered, SECOND, interval),
            delivered,
            interval,
            prior_delivered: self.prior_delivered,
            is_app_limited: self.sample_app_limited,
            rtt: self.sample_rtt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn rto_follows_rfc6298_first_sample() {
        // §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 3R.
        let mut e = RttEstimator::new(0, 60 * SECOND, MS);
        assert_eq!(e.rto(), SECOND);
        e.on_sample(100 * MS);
        assert_eq!(e.srtt(), 100 * MS);
        assert_eq!(e.rto(), 300 * MS);
        // §2.3 with R' = 100 ms: RTTVAR = 3/4 * 50 = 37.5 ms, RTO = 100 + 150 ms.
        e.on_sample(100 * MS);
        assert_eq!(e.rto(), 250 * MS);
    }

    #[test]
    fn rto_is_clamped_to_min_rto() {
        let mut e = RttEstimator::new(200 * MS, 60 * SECOND, MS);
        for _ in 0..50 {
            e.on_sample(10 * MS);
        }
        assert_eq!(e.rto(), 200 * MS);
        assert_eq!(e.min_rtt(), 10 * MS);
    }

    #[test]
    fn steady_stream_samples_its_send_rate() {
        // 1000-byte packets every 1 ms, each delivered 50 ms later: 1 MB/s.
        let mut s = RateSampler::new();
        let mut snaps = Vec::new();
        let mut in_flight = 0;
        for i in 0..200u64 {
            let now = i * MS;
            // Deliver what was sent 50 ms ago, before sending at the same instant.
            if i >= 50 {
                let (snap, bytes) = snaps[(i - 50) as usize];
                s.on_packet_delivered(now, &snap, bytes);
                in_flight -= bytes;
                let rs = s.take_sample(50 * MS);
                if i >= 110 {
                    let rs = rs.expect("interval spans a full RTT");
                    assert_eq!(rs.delivery_rate, 1_000_000);
                    assert_eq!(rs.rtt, 50 * MS);
                }
            }
            snaps.push((s.on_packet_sent(now, in_flight), 1000));
            in_flight += 1000;
        }
    }

    #[test]
    fn app_limited_marks_samples_until_delivered_catches_up() {
        let mut s = RateSampler::new();
        s.on_app_limited(0);
        let p = s.on_packet_sent(0, 0);
        assert!(p.is_app_limited);
        s.on_packet_delivered(10 * MS, &p, 1000);
        let rs = s.take_sample(0).unwrap();
        assert!(rs.is_app_limited);
        let p2 = s.on_packet_sent(10 * MS, 0);
        assert!(!p2.is_app_limited, "cleared once delivered passed the mark");
    }
}
