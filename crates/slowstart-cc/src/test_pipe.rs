//! A synthetic single-bottleneck pipe for tests: FIFO link of fixed rate, fixed propagation
//! delay, unlimited buffer, one ACK per packet, rate samples from the crate's [`RateSampler`]
//! (the BBR and BBR v1 tests run on it).

use crate::estimators::{PacketRateState, RateSampler, RttEstimator};
use crate::{AckEvent, CongestionController, Nanos, SECOND};
use std::collections::VecDeque;

pub struct Pipe {
    pub rate: u64,
    pub rtt: Nanos,
    pub mss: u64,
    pub now: Nanos,
    next_send: Nanos,
    link_free: Nanos,
    in_flight: VecDeque<(Nanos, PacketRateState, u64)>,
    bytes_in_flight: u64,
    sampler: RateSampler,
    rtt_est: RttEstimator,
    total_sent: u64,
}

impl Pipe {
    pub fn new(rate: u64, rtt: Nanos, mss: u64) -> Self {
        Self {
            rate,
            rtt,
            mss,
            now: 0,
            next_send: 0,
            link_free: 0,
            in_flight: VecDeque::new(),
            bytes_in_flight: 0,
            sampler: RateSampler::new(),
            rtt_est: RttEstimator::new(0, 60 * SECOND, 1_000_000),
            total_sent: 0,
        }
    }

    /// Run until `until`, calling `observe` after every ACK.
    pub fn run<C: CongestionController>(
        &mut self,
        c: &mut C,
        until: Nanos,
        mut observe: impl FnMut(&C, &Self),
    ) {
        while self.now < until {
            let next_ack = self.in_flight.front().map_or(u64::MAX, |p| p.0);
            let can_send = self.bytes_in_flight + self.mss <= c.cwnd();
            let send_at = self.now.max(self.next_send);
            if can_send && send_at < next_ack {
                self.now = send_at;
                let snap = self.sampler.on_packet_sent(self.now, self.bytes_in_flight);
                let depart = self.now.max(self.link_free) + self.mss * SECOND / self.rate;
                self.link_free = depart;
                self.in_flight
                    .push_back((depart + self.rtt, snap, self.mss));
                self.bytes_in_flight += self.mss;
                self.total_sent += self.mss;
                c.on_packet_sent(&crate::SentEvent {
                    now: self.now,
                    bytes: self.mss,
                    bytes_in_flight: self.bytes_in_flight,
                    total_sent: self.total_sent,
                    retransmission: false,
                });
                let pace = c.pacing_rate().unwrap().max(1);
                self.next_send = self.now + self.mss * SECOND / pace;
            } else if next_ack != u64::MAX {
                let (at, snap, bytes) = self.in_flight.pop_front().unwrap();
                self.now = at;
                let prior_in_flight = self.bytes_in_flight;
                self.bytes_in_flight -= bytes;
                let rtt = at - snap.sent_time;
                self.rtt_est.on_sample(rtt);
                self.sampler.on_packet_delivered(at, &snap, bytes);
                let rs = self.sampler.take_sample(self.rtt_est.min_rtt());
                c.on_ack(&AckEvent {
                    now: at,
                    bytes_acked: bytes,
                    mss: self.mss,
                    rtt: Some(rtt),
                    srtt: self.rtt_est.srtt(),
                    min_rtt: self.rtt_est.min_rtt(),
                    one_way_delay: None,
                    rate: rs,
                    delivered: self.sampler.delivered(),
                    prior_in_flight,
                    bytes_in_flight: self.bytes_in_flight,
                    cwnd_limited: prior_in_flight + self.mss > c.cwnd(),
                    sent_before_cwnd_block: prior_in_flight + self.mss > c.cwnd(),
                    in_recovery: false,
                });
                observe(c, self);
            } else {
                self.now = send_at;
            }
        }
    }
}
