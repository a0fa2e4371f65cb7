//! Fuzz harness (issue #15) of the transport, as a plain function of a byte string: `fuzz/`
//! runs it under libFuzzer (`cargo fuzz`), and `cargo test` replays the saved corpus through
//! the same code. It panics only on a broken invariant.
//!
//! - [`transport`]: one sender and one receiver joined by a channel that loses, duplicates and
//!   reorders as the bytes say, then a clean drain: every byte arrives once and in order, bytes
//!   are conserved, and the transfer ends (no stall).

use slowstart_cc::fuzzing::Bytes;
use slowstart_cc::{CcSpec, CommonParams, Controller};

use crate::packet::{Kind, Packet};
use crate::sender::State;
use crate::settings::{LossDetection, Recovery, Settings};
use crate::{Connection, Io};

/// The flow the harness runs: Reno's transport as a scenario's defaults set it, with or
/// without RACK and delayed ACKs (slowstart_config's `FlowConfig::transport` of that flow).
fn fuzz_settings(rack: bool, delayed_ack: bool) -> Settings {
    Settings {
        mss: 1000,
        header_bytes: 40,
        initrwnd: 10,
        max_rwnd_bytes: None,
        max_window_bytes: None,
        delayed_ack,
        delack_timeout_ns: 40_000_000,
        ack_every: 2,
        quickack: false,
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
        ecn_reduction: Default::default(),
        accurate_only: false,
        cwnd_limited: Default::default(),
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
    }
}

/// A transfer through a channel that loses, duplicates and reorders as `data` says, then a
/// clean drain that must finish it.
pub fn transport(data: &[u8]) {
    let mut input = Bytes(data);
    let size = 1 + (input.u32() as u64 % 300_000);
    let settings = fuzz_settings(input.u8() % 2 == 0, input.u8() % 2 == 0);
    let common = CommonParams {
        mss: settings.mss,
        initcwnd: 10,
        abc: true,
        seed: 1,
        paced: false,
    };
    let cc = Controller::new(&CcSpec::named("reno"), &common).expect("reno");
    let mut conn = Connection::new(0, &settings, &settings, cc, Some(size));
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
    use slowstart_cc::fuzzing::replay;

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
