//! Fuzz harnesses (issue #15) of the controllers, as plain functions of a byte string: `fuzz/`
//! runs them under libFuzzer (`cargo fuzz`), and `cargo test` replays the saved corpus through
//! the same code. A harness panics only on a broken invariant.
//!
//! - [`controllers`]: every controller under arbitrary sent, acked, lost and timeout events at
//!   arbitrary times: cwnd never below one MSS nor above 2^50 bytes, pacing positive.
//!
//! [`Bytes`] and [`replay`] serve the transport's and the engine's harnesses too.

use std::path::Path;

use crate::estimators::RateSample;
use crate::registry::ALGORITHMS;
use crate::{
    AckEvent, CcSpec, CommonParams, CongestionController, CongestionEvent, Controller, SentEvent,
};

/// Reads the input a byte (or a few) at a time; zeros once it runs out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Runs every saved input of `target` (fuzz/corpus/TARGET) through `harness`; how many.
pub fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).unwrap();
            harness(&data);
            n += 1;
        }
    }
    n
}

/// Every registered controller (defaults) under one event sequence decoded from `data`.
pub fn controllers(data: &[u8]) {
    const MSS: u64 = 1448;
    for algo in ALGORITHMS {
        let mut input = Bytes(data);
        let common = CommonParams {
            mss: MSS,
            initcwnd: 1 + input.u8() as u64 % 64,
            abc: input.u8() % 2 == 0,
            seed: 7,
            paced: input.u8() % 2 == 0,
        };
        let mut c = Controller::new(&CcSpec::named(algo.name), &common).expect("defaults");
        let (mut now, mut sent, mut delivered, mut in_recovery) = (0u64, 0u64, 0u64, false);
        while !input.is_empty() {
            // Time moves on by anything from 0 to about 4 s, now and then by up to 70 minutes.
            let jump = input.u32() as u64;
            now += if jump.is_multiple_of(16) {
                jump << 10
            } else {
                jump
            };
            match input.u8() % 6 {
                0 => {
                    let bytes = 1 + input.u8() as u64 * 64;
                    sent += bytes;
                    c.on_packet_sent(&SentEvent {
                        now,
                        bytes,
                        bytes_in_flight: sent.saturating_sub(delivered),
                        total_sent: sent,
                        retransmission: input.u8() % 4 == 0,
                    });
                }
                1 | 2 => {
                    let bytes = input.u8() as u64 * MSS / 4;
                    let rtt = input.u32() as u64 * 16; // 0 to about 69 s
                    let owd = input.u32() as u64 * 16;
                    let limited = input.u8() % 2 == 0;
                    let prior_delivered = delivered;
                    delivered += bytes;
                    let in_flight = sent.saturating_sub(delivered);
                    c.on_ack(&AckEvent {
                        now,
                        bytes_acked: bytes,
                        mss: MSS,
                        rtt: (rtt > 0).then_some(rtt),
                        srtt: rtt,
                        min_rtt: rtt / 2,
                        one_way_delay: Some(owd),
                        rate: (bytes > 0).then(|| RateSample {
                            delivery_rate: (bytes as u128 * 1_000_000_000 / rtt.max(1) as u128)
                                .min(u64::MAX as u128)
                                as u64,
                            delivered: bytes,
                            interval: rtt,
                            prior_delivered,
                            is_app_limited: !limited,
                            rtt,
                        }),
                        delivered,
                        prior_in_flight: in_flight + bytes,
                        bytes_in_flight: in_flight,
                        cwnd_limited: limited,
                        sent_before_cwnd_block: input.u8() % 2 == 0,
                        in_recovery,
                    });
                    if rtt > 0 && input.u8() % 8 == 0 {
                        c.on_rtt_sample(now, rtt);
                    }
                }
                3 => {
                    if !in_recovery {
                        c.on_congestion_event(&CongestionEvent {
                            ecn: false,
                            now,
                            bytes_lost: input.u8() as u64 * MSS / 8,
                            bytes_in_flight: sent.saturating_sub(delivered),
                            mss: MSS,
                        });
                        in_recovery = true;
                    }
                }
                4 => {
                    if in_recovery {
                        c.on_recovery_exit(now);
                        in_recovery = false;
                    }
                }
                _ => {
                    c.on_rto(now, sent.saturating_sub(delivered));
                    in_recovery = false;
                }
            }
            let cwnd = c.cwnd();
            assert!(cwnd >= MSS, "{}: cwnd {cwnd} below one MSS", algo.name);
            assert!(cwnd < 1 << 50, "{}: cwnd {cwnd} out of bounds", algo.name);
            if let Some(rate) = c.pacing_rate() {
                assert!(rate > 0, "{}: pacing rate {rate}", algo.name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn controllers_corpus_replays() {
        assert!(super::replay("controllers", super::controllers) > 0);
    }
}
