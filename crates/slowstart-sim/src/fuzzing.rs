//! Fuzz harnesses (issue #15), as plain functions of a byte string: `fuzz/` runs them under
//! libFuzzer (`cargo fuzz`), and `cargo test` replays the saved corpus through the same code.
//! Each panics only on a broken invariant; bad input is a clean `Err`, never a panic.
//!
//! - [`config_json`]: a canonical config from arbitrary JSON, through validation, to a 10 ms run.
//! - [`controllers`]: every controller under arbitrary sent, acked, lost and timeout events at
//!   arbitrary times: cwnd never below one MSS nor above 2^50 bytes, pacing positive.
//! - [`transport`]: one sender and one receiver joined by a channel that loses, duplicates and
//!   reorders as the bytes say, then a clean drain: every byte arrives once and in order, bytes
//!   are conserved, and the transfer ends (no stall).

use slowstart_cc::estimators::RateSample;
use slowstart_cc::registry::ALGORITHMS;
use slowstart_cc::{
    AckEvent, CcSpec, CommonParams, CongestionController, CongestionEvent, Controller, SentEvent,
};
use slowstart_transport::packet::{Kind, Packet};
use slowstart_transport::sender::State;
use slowstart_transport::{Connection, Io};

use slowstart_config::{AppConfig, FlowConfig, LossDetection, Recovery, SimConfig};

/// Largest simulated time a fuzzed config runs for, and limits that keep one input cheap.
const FUZZ_RUN_NS: u64 = 10_000_000;
const FUZZ_MAX_FLOWS: usize = 16;
const FUZZ_MAX_PEERS: u64 = 32;

/// Arbitrary JSON as a canonical config: rejected with an error, or validated and run for at
/// most 10 ms of simulated time (sizes capped so that one input stays cheap).
pub fn config_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut cfg) = SimConfig::from_json(text) else {
        return;
    };
    if cfg.validate().is_err() {
        return;
    }
    cfg.duration_ns = cfg.duration_ns.min(FUZZ_RUN_NS);
    cfg.trace.max_rows = cfg.trace.max_rows.min(10_000);
    if cfg.flows.len() > FUZZ_MAX_FLOWS {
        return;
    }
    if let Some(s) = &mut cfg.swarm {
        s.leechers = s.leechers.min(FUZZ_MAX_PEERS);
        s.seeds = s.seeds.min(FUZZ_MAX_PEERS);
    }
    // Shortening the run may make a flow start after it ends: validation says so cleanly.
    let _ = crate::run(&cfg);
}

/// Reads the input a byte (or a few) at a time; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
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

fn fuzz_flow(size: u64, rack: bool, delayed_ack: bool) -> FlowConfig {
    FlowConfig {
        src: "sender".into(),
        dst: "receiver".into(),
        cc: CcSpec::named("reno"),
        size_bytes: Some(size),
        start_ns: 0,
        mss: 1000,
        header_bytes: 40,
        initcwnd: 10,
        initrwnd: 10,
        max_rwnd_bytes: None,
        max_window_bytes: None,
        handshake: false,
        delayed_ack,
        delack_timeout_ns: 40_000_000,
        ack_every: 2,
        quickack: false,
        abc: true,
        min_rto_ns: 200_000_000,
        max_rto_ns: 60_000_000_000,
        pacing: false,
        pacer: Default::default(),
        recovery: Recovery::Prr,
        loss_detection: if rack {
            LossDetection::Rack
        } else {
            LossDetection::Dupthresh
        },
        ecn: false,
        ecn_feedback: Default::default(),
        receiver_ecn: Default::default(),
        cwnd_limited: Default::default(),
        app: AppConfig::Bulk,
        program: None,
    }
}

/// One link each way with a fixed delay; the fuzzer decides what happens to each packet.
struct Wire {
    to_receiver: Vec<(u64, Packet)>,
    to_sender: Vec<(u64, Packet)>,
}

const WIRE_DELAY_NS: u64 = 10_000_000;

impl Wire {
    fn take(&mut self, now: u64, io: &mut Io) {
        for p in io.packets.drain(..) {
            let queue = if p.to_receiver() {
                &mut self.to_receiver
            } else {
                &mut self.to_sender
            };
            queue.push((now + WIRE_DELAY_NS, p));
        }
        io.wakeups.clear(); // this loop reads `poll_timeout` instead
    }
}

/// A transfer through a channel that loses, duplicates and reorders as `data` says, then a
/// clean drain that must finish it.
pub fn transport(data: &[u8]) {
    let mut input = Bytes(data);
    let size = 1 + (input.u32() as u64 % 300_000);
    let cfg = fuzz_flow(size, input.u8() % 2 == 0, input.u8() % 2 == 0);
    let common = CommonParams {
        mss: cfg.mss,
        initcwnd: cfg.initcwnd,
        abc: cfg.abc,
        seed: 1,
        paced: false,
    };
    let settings = cfg.transport();
    let cc = Controller::new(&cfg.cc, &common).expect("reno");
    let mut conn = Connection::new(0, &settings, &settings, cc, cfg.size_bytes);
    let mut io = Io::default();
    let mut wire = Wire {
        to_receiver: vec![],
        to_sender: vec![],
    };
    let mut now = 0;
    let (mut dropped, mut duplicated) = (0u64, 0u64);
    let tx = &mut conn.src.sender;
    tx.write(size);
    tx.close();
    tx.start(now, false, &mut io);
    wire.take(now, &mut io);
    // The fuzzer's part: each byte says what happens next.
    while !input.is_empty() {
        let op = input.u8();
        let which = input.u8() as usize;
        let queue = if op & 1 == 0 {
            &mut wire.to_receiver
        } else {
            &mut wire.to_sender
        };
        match (op >> 1) % 6 {
            0 | 1 if !queue.is_empty() => {
                let (at, p) = queue.remove(which % queue.len());
                now = now.max(at);
                let _ = conn.handle_packet(now, &p, &mut io);
            }
            2 if !queue.is_empty() => {
                let (_, p) = queue.remove(which % queue.len());
                if p.kind == Kind::Data {
                    dropped += p.len as u64;
                }
            }
            3 if !queue.is_empty() && queue.len() < 10_000 => {
                let copy = queue[which % queue.len()];
                if copy.1.kind == Kind::Data {
                    duplicated += copy.1.len as u64;
                }
                queue.push(copy);
            }
            4 => {
                now += (which as u64 + 1) * 5_000_000;
                conn.handle_timeouts(now, &mut io, |_| {});
            }
            _ => {}
        }
        wire.take(now, &mut io);
        assert!(conn.dst.receiver.rcv_nxt() <= size, "received past the end");
        assert!(
            conn.src.sender.acked_bytes() <= conn.dst.receiver.rcv_nxt(),
            "acked what was not received"
        );
    }
    // The clean drain: everything arrives in order of its arrival time, timers fire.
    for _ in 0..100_000 {
        if conn.src.sender.state() == State::Done {
            break;
        }
        let mut all: Vec<(u64, Packet)> = std::mem::take(&mut wire.to_receiver);
        all.append(&mut wire.to_sender);
        if all.is_empty() {
            match conn.poll_timeout() {
                Some(d) => {
                    now = now.max(d);
                    conn.handle_timeouts(now, &mut io, |_| {});
                }
                None => panic!(
                    "stalled: nothing in flight and no timer, {} of {size} acked",
                    conn.src.sender.acked_bytes()
                ),
            }
        } else {
            all.sort_by_key(|&(at, _)| at);
            for (at, p) in all {
                now = now.max(at);
                let _ = conn.handle_packet(now, &p, &mut io);
            }
        }
        wire.take(now, &mut io);
    }
    assert_eq!(
        conn.src.sender.state(),
        State::Done,
        "the transfer did not end"
    );
    assert_eq!(conn.dst.receiver.rcv_nxt(), size, "every byte, in order");
    // Bytes conserved: what was sent arrived, was dropped, or arrived twice by duplication.
    let sent = conn.src.sender.stats().data_bytes_sent;
    let in_wire: u64 = wire
        .to_receiver
        .iter()
        .filter(|(_, p)| p.kind == Kind::Data)
        .map(|(_, p)| p.len as u64)
        .sum();
    assert_eq!(
        sent + duplicated,
        conn.dst.receiver.data_bytes_received() + dropped + in_wire,
        "bytes conserved"
    );
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Run every saved input of `target` (fuzz/corpus/TARGET) through `harness`.
    fn replay(target: &str, harness: fn(&[u8])) -> usize {
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

    #[test]
    fn config_corpus_replays() {
        assert!(replay("config", super::config_json) > 0);
    }

    #[test]
    fn controllers_corpus_replays() {
        assert!(replay("controllers", super::controllers) > 0);
    }

    #[test]
    fn transport_corpus_replays() {
        assert!(replay("transport", super::transport) > 0);
    }

    #[test]
    fn a_lossy_reordering_channel_still_delivers_everything() {
        // Hand-made input: drop, duplicate and reorder for a while, then drain.
        let mut data = vec![0x40, 0x9c, 0, 0, 1, 1];
        for i in 0..600u32 {
            data.push([0, 4, 6, 0, 1, 8, 3][(i % 7) as usize]);
            data.push((i * 37 % 251) as u8);
        }
        super::transport(&data);
    }
}
