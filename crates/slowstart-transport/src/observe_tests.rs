//! The observer hears a connection's events in the order they happen, each phase change once
//! and before the event that showed it, and the losses before both: a Reno transfer over a
//! pipe with a fixed one-way delay, one segment dropped, worked out by hand.

use slowstart_cc::Phase;

use crate::observe::{Observer, SenderEvent};
use crate::packet::{Kind, Packet};
use crate::sender::{Loss, LossTrigger, Sender};
use crate::testing::{settings, MS};
use crate::LossDetection;

const MSS: u64 = 1460;
const ONE_WAY: u64 = 10 * MS;

/// What the observer heard, with the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Heard {
    Event(SenderEvent),
    Phase(Phase, Phase),
    Lost(u64, LossTrigger),
    Sent(Kind),
    Received(Kind),
}

#[derive(Default)]
struct Log(Vec<(u64, Heard)>);

impl Observer for Log {
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, _: &Sender) {
        self.0.push((now, Heard::Event(event)));
    }
    fn on_phase_change(&mut self, now: u64, from: Phase, to: Phase) {
        self.0.push((now, Heard::Phase(from, to)));
    }
    fn on_packet_lost(&mut self, now: u64, loss: &Loss) {
        self.0.push((now, Heard::Lost(loss.seq, loss.trigger)));
    }
    fn on_packet_sent(&mut self, now: u64, p: &Packet) {
        self.0.push((now, Heard::Sent(p.kind)));
    }
    fn on_packet_received(&mut self, now: u64, p: &Packet) {
        self.0.push((now, Heard::Received(p.kind)));
    }
}

fn transfer(size: u64, drop: &[u64], detection: LossDetection, obs: &mut impl Observer) {
    let s = crate::Settings {
        loss_detection: detection,
        ..settings()
    };
    let mut conn = crate::pipe::connection("reno", 10, &s, size);
    conn.src.sender.log_losses(true);
    crate::pipe::transfer(&mut conn, 0, ONE_WAY, drop, obs);
}

fn phase_changes(log: &Log) -> Vec<(u64, Phase, Phase)> {
    log.0
        .iter()
        .filter_map(|&(t, h)| match h {
            Heard::Phase(a, b) => Some((t, a, b)),
            _ => None,
        })
        .collect()
}

#[test]
fn without_loss_slow_start_never_changes() {
    let mut log = Log::default();
    transfer(50 * MSS, &[], LossDetection::Rack, &mut log);
    assert_eq!(log.0[0], (0, Heard::Event(SenderEvent::Start)));
    assert!(phase_changes(&log).is_empty(), "{:?}", phase_changes(&log));
    assert!(log.0.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
}

#[test]
fn a_loss_then_the_phase_change_then_its_ack_each_once() {
    // Ten segments leave at 0 and arrive at 10 ms with the 4th (seq 3 MSS) missing: the
    // receiver ACKs the first two, then every segment above the hole at once with a SACK, so
    // the ACK of the third segment above it (DupThresh, RFC 6675 §5) arrives at 20 ms, when
    // Reno leaves slow start for recovery. The retransmission arrives at 30 ms and its ACK,
    // which covers the recovery point, at 40 ms: recovery ends.
    let mut log = Log::default();
    transfer(100 * MSS, &[3], LossDetection::Rack, &mut log);
    assert_eq!(
        phase_changes(&log),
        vec![
            (20 * MS, Phase::SlowStart, Phase::Recovery),
            (40 * MS, Phase::Recovery, Phase::CongestionAvoidance),
        ]
    );
    // At 20 ms: the loss, then the phase change, then the ACK that showed both.
    let i = log
        .0
        .iter()
        .position(|&(_, h)| matches!(h, Heard::Lost(..)))
        .expect("a loss heard");
    assert_eq!(
        log.0[i],
        (
            20 * MS,
            Heard::Lost(3 * MSS, LossTrigger::ReorderingThreshold)
        )
    );
    assert_eq!(
        log.0[i + 1],
        (20 * MS, Heard::Phase(Phase::SlowStart, Phase::Recovery))
    );
    let (t, Heard::Event(SenderEvent::Ack(outcome))) = log.0[i + 2] else {
        panic!("an ACK after the phase change: {:?}", log.0[i + 2]);
    };
    assert_eq!(t, 20 * MS);
    assert!(outcome.loss_event);
    // The packet that showed it was received just before; one loss only.
    assert_eq!(log.0[i - 1], (20 * MS, Heard::Received(Kind::Ack)));
    let losses = log.0.iter().filter(|(_, h)| matches!(h, Heard::Lost(..)));
    assert_eq!(losses.count(), 1);
    assert!(log.0.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
}

#[test]
fn a_retransmission_timeout_is_an_event_and_one_phase_change() {
    // The last of ten segments is lost and nothing follows it: without RACK's probe nothing
    // SACKs past it, so the retransmission timer (RFC 6298 §2: 1 s before an RTT sample, then
    // max(min RTO 200 ms, SRTT + 4 RTTVAR)) fires; slow start ends there.
    let mut log = Log::default();
    transfer(10 * MSS, &[9], LossDetection::Dupthresh, &mut log);
    let rtos: Vec<u64> = log
        .0
        .iter()
        .filter(|(_, h)| *h == Heard::Event(SenderEvent::Rto))
        .map(|&(t, _)| t)
        .collect();
    assert_eq!(rtos.len(), 1, "{log:?}", log = log.0);
    let changes = phase_changes(&log);
    assert_eq!(changes[0], (rtos[0], Phase::SlowStart, Phase::RtoRecovery));
    let i = log
        .0
        .iter()
        .position(|&(_, h)| h == Heard::Event(SenderEvent::Rto));
    assert_eq!(
        log.0[i.unwrap() - 1],
        (rtos[0], Heard::Phase(Phase::SlowStart, Phase::RtoRecovery))
    );
    // Each change follows on from the one before.
    assert!(changes
        .windows(2)
        .all(|w| w[0].2 == w[1].1 && w[0].0 <= w[1].0));
}
