//! A connection driven over a pipe with a fixed one-way delay and no rate limit, the way every
//! driver drives it: packets in with `handle_packet`, timers with `poll_timeout` and
//! `handle_timeouts`. Worked examples (slow start's rounds, delayed ACKs) and properties under
//! loss and reordering (every byte delivered once and in order, bytes conserved, cumulative
//! ACKs that never go back, no deadline in the past).

use proptest::prelude::*;
use slowstart_cc::{CcSpec, CommonParams, Controller};

use crate::packet::{Kind, Packet};
use crate::receiver::Receiver;
use crate::request::RequestSender;
use crate::sender::{Sender, State};
use crate::settings::{CeFeedback, ReceiverEcn};
use crate::testing::{settings, MS};
use crate::{Connection, DataEnds, Io, LazyConnection, Received, SenderEnd, Settings};

const MSS: u64 = 1460;

fn controller(name: &str, initcwnd: u64) -> Controller {
    let common = CommonParams {
        mss: MSS,
        initcwnd,
        abc: true,
        seed: 1,
        paced: false,
    };
    Controller::new(&CcSpec::named(name), &common).expect("a built-in")
}

/// What happens to the n-th packet put on the pipe.
#[derive(Clone, Copy, Debug)]
enum Fate {
    Deliver,
    Drop,
    /// Arrive this many ms later than the delay (overtaken by later packets).
    Late(u8),
}

/// Both directions of a path with a fixed one-way delay; packets arrive in order of arrival
/// time, then of sending.
struct Pipe {
    one_way_ns: u64,
    /// (arrival, sent order, packet)
    in_flight: Vec<(u64, u64, Packet)>,
    sent: u64,
    fates: Vec<Fate>,
    dropped_data_bytes: u64,
    /// Data packets sent ECN-capable, ECT(0) or ECT(1).
    ect_data_packets: u64,
}

impl Pipe {
    fn new(one_way_ns: u64, fates: Vec<Fate>) -> Self {
        Pipe {
            one_way_ns,
            in_flight: Vec::new(),
            sent: 0,
            fates,
            dropped_data_bytes: 0,
            ect_data_packets: 0,
        }
    }

    fn take(&mut self, now: u64, io: &mut Io) {
        for p in io.packets.drain(..) {
            let fate = self
                .fates
                .get(self.sent as usize)
                .copied()
                .unwrap_or(Fate::Deliver);
            self.sent += 1;
            if p.kind == Kind::Data && p.ecn_capable() {
                self.ect_data_packets += 1;
            }
            let at = now + self.one_way_ns;
            match fate {
                Fate::Deliver => self.in_flight.push((at, self.sent, p)),
                Fate::Late(ms) => self.in_flight.push((at + ms as u64 * MS, self.sent, p)),
                Fate::Drop if p.kind == Kind::Data => self.dropped_data_bytes += p.len as u64,
                Fate::Drop => {}
            }
        }
    }

    fn next_arrival(&self) -> Option<u64> {
        self.in_flight.iter().map(|&(at, ..)| at).min()
    }

    fn pop(&mut self) -> Packet {
        let i = (0..self.in_flight.len())
            .min_by_key(|&i| (self.in_flight[i].0, self.in_flight[i].1))
            .expect("a packet");
        self.in_flight.swap_remove(i).2
    }
}

/// What a transfer showed on its way.
#[derive(Debug, Default)]
struct Run {
    /// When the receiver had every byte, and when the sender had them all acknowledged.
    received_ns: Option<u64>,
    done_ns: Option<u64>,
    acks: u64,
}

/// Transfer `size` bytes over `pipe`, checking the invariants after every event.
fn transfer(conn: &mut Connection, pipe: &mut Pipe, size: u64, handshake: bool) -> Run {
    let mut io = Io::default();
    let mut run = Run::default();
    let (mut now, mut last_ack, mut last_rcv_nxt, mut last_una) = (0, 0, 0, 0);
    conn.src.sender.write(size);
    conn.src.sender.close();
    conn.src.sender.start(now, handshake, &mut io);
    pipe.take(now, &mut io);
    for _ in 0..1_000_000 {
        if conn.src.sender.state() == State::Done {
            break;
        }
        let timer = conn.poll_timeout();
        assert!(
            timer.is_none_or(|t| t >= now),
            "a deadline in the past: {timer:?} at {now}"
        );
        let arrival = pipe.next_arrival();
        match (arrival, timer) {
            (None, None) => panic!(
                "stalled at {now}: nothing in flight, no timer, {} of {size} acked",
                conn.src.sender.acked_bytes()
            ),
            (Some(a), t) if t.is_none_or(|t| a <= t) => {
                now = a;
                let p = pipe.pop();
                if p.kind == Kind::Ack {
                    run.acks += 1;
                }
                let _ = conn.handle_packet(now, &p, &mut io);
            }
            (_, t) => {
                now = t.expect("a timer comes first");
                conn.handle_timeouts(now, &mut io, |_| {});
            }
        }
        for p in io.packets.iter().filter(|p| p.kind == Kind::Ack) {
            assert!(p.seq >= last_ack, "cumulative ACK went back");
            last_ack = p.seq;
        }
        pipe.take(now, &mut io);
        let (rcv_nxt, una) = (conn.dst.receiver.rcv_nxt(), conn.src.sender.acked_bytes());
        assert!(
            rcv_nxt >= last_rcv_nxt && rcv_nxt <= size,
            "delivery in order"
        );
        assert!(
            una >= last_una && una <= rcv_nxt,
            "acked what was not received"
        );
        (last_rcv_nxt, last_una) = (rcv_nxt, una);
        if rcv_nxt == size && run.received_ns.is_none() {
            run.received_ns = Some(now);
        }
    }
    assert_eq!(conn.src.sender.state(), State::Done, "the transfer ended");
    run.done_ns = Some(now);
    run
}

/// Data settings for the worked examples: no delayed ACKs, a receive window that never binds.
fn plain() -> Settings {
    Settings {
        delayed_ack: false,
        initrwnd: 100_000,
        ..settings()
    }
}

fn connection(s: &Settings, cc: &str, size: u64) -> Connection {
    Connection::new(0, s, s, controller(cc, 10), Some(size))
}

const RTT: u64 = 100 * MS;

#[test]
fn slow_start_takes_the_analytic_number_of_rounds() {
    // Reno from initcwnd 10 with an ACK per segment doubles cwnd each round trip (RFC 5681
    // §3.1): rounds of 10, 20, 40, 80 segments carry 150 in 4 round trips; a 151st takes a
    // fifth. The last data arrives half a round trip before its ACK.
    for (segments, rounds, handshake) in [
        (10, 1, false),
        (150, 4, false),
        (151, 5, false),
        (630, 6, false),
        (150, 4, true),
    ] {
        let size = segments * MSS;
        let mut conn = connection(&plain(), "reno", size);
        let mut pipe = Pipe::new(RTT / 2, vec![]);
        let run = transfer(&mut conn, &mut pipe, size, handshake);
        let rounds = rounds + u64::from(handshake);
        assert_eq!(run.done_ns, Some(rounds * RTT), "{segments} segments");
        assert_eq!(run.received_ns, Some(rounds * RTT - RTT / 2));
        assert_eq!(conn.src.sender.stats().retransmits, 0);
        assert_eq!(run.acks, segments, "one ACK per segment");
    }
}

/// RFC 9768 §3.1.1: what the SYN asks for (`ecn`, `ecn_feedback`) and what the receiver
/// supports (`receiver_ecn`) settle the feedback of both ends; `lost_syns` SYNs are dropped
/// first. Returns (sender's, receiver's, data packets sent ECT).
fn negotiate(
    feedback: Option<CeFeedback>,
    receiver: ReceiverEcn,
    accurate_only: bool,
    handshake: bool,
    lost_syns: usize,
) -> (Option<CeFeedback>, Option<CeFeedback>, u64) {
    let s = Settings {
        ecn: feedback.is_some(),
        ecn_feedback: feedback.unwrap_or_default(),
        receiver_ecn: receiver,
        accurate_only,
        ..plain()
    };
    assert_eq!(s.validate(), Ok(()));
    let size = 20 * MSS;
    let mut conn = connection(&s, "reno", size);
    let mut pipe = Pipe::new(RTT / 2, vec![Fate::Drop; lost_syns]);
    transfer(&mut conn, &mut pipe, size, handshake);
    let sender = conn.src.sender.ecn_feedback();
    if lost_syns == 0 {
        // A handshake answered at once, or none, settles what the settings say.
        assert_eq!(sender, s.sender_feedback());
        assert_eq!(conn.dst.receiver.ecn_feedback(), s.receiver_feedback());
    }
    (
        sender,
        conn.dst.receiver.ecn_feedback(),
        pipe.ect_data_packets,
    )
}

#[test]
fn the_handshake_settles_accurate_ecn_or_falls_back() {
    use CeFeedback::{Accurate, Classic, Dctcp};
    let data = 20; // the transfer's data packets, none lost
    for handshake in [true, false] {
        // Both ends AccECN (RFC 9768 §3.1.1 Table 2, first row), or a receiver that runs the
        // sender's own stack.
        for receiver in [ReceiverEcn::Accurate, ReceiverEcn::Same] {
            let both = negotiate(Some(Accurate), receiver, false, handshake, 0);
            assert_eq!(both, (Some(Accurate), Some(Accurate), data));
        }
        // An RFC 3168 receiver answers an AccECN SYN with classic ECN (Table 2: ECE alone).
        let classic = negotiate(Some(Accurate), ReceiverEcn::Classic, false, handshake, 0);
        assert_eq!(classic, (Some(Classic), Some(Classic), data));
        // ... unless the controller takes no RFC 3168 feedback (Prague): no ECN at all.
        let prague = negotiate(Some(Accurate), ReceiverEcn::Classic, true, handshake, 0);
        assert_eq!(prague, (None, Some(Classic), 0));
        // A receiver without ECN: none, whatever was asked.
        for asked in [Accurate, Classic, Dctcp] {
            let none = negotiate(Some(asked), ReceiverEcn::None, false, handshake, 0);
            assert_eq!(none, (None, None, 0), "{asked:?}");
        }
        // DCTCP asks with RFC 3168's SYN: an AccECN receiver gives classic feedback, which the
        // DCTCP sender reads as its own (still ECT on every packet, as Linux's).
        let dctcp = negotiate(Some(Dctcp), ReceiverEcn::Accurate, false, handshake, 0);
        assert_eq!(dctcp, (Some(Dctcp), Some(Classic), data));
        let same = negotiate(Some(Dctcp), ReceiverEcn::Same, false, handshake, 0);
        assert_eq!(same, (Some(Dctcp), Some(Dctcp), data));
        // A classic sender keeps classic ECN with an AccECN receiver.
        let old = negotiate(Some(Classic), ReceiverEcn::Accurate, false, handshake, 0);
        assert_eq!(old, (Some(Classic), Some(Classic), data));
        // No ECN asked: none.
        assert_eq!(
            negotiate(None, ReceiverEcn::Same, false, handshake, 0),
            (None, None, 0)
        );
    }
}

/// RFC 9768 §3.1.4.1: the first retransmission of an AccECN SYN still asks for AccECN; later
/// ones carry no ECN flags, so the receiver answers without ECN.
#[test]
fn a_retransmitted_accecn_syn_asks_again_once_then_without_ecn() {
    use CeFeedback::Accurate;
    let once = negotiate(Some(Accurate), ReceiverEcn::Accurate, false, true, 1);
    assert_eq!(once, (Some(Accurate), Some(Accurate), 20));
    let twice = negotiate(Some(Accurate), ReceiverEcn::Accurate, false, true, 2);
    assert_eq!(twice, (None, None, 0));
}

#[test]
fn delayed_acks_answer_every_second_segment_and_the_odd_one_after_the_timeout() {
    // RFC 5681 §4.2 / RFC 1122 §4.2.3.2 with `ack_every` 2 and a 40 ms timer: 3 segments are
    // acknowledged by an ACK for the first two and one for the third when the timer fires.
    let s = Settings {
        initrwnd: 100_000,
        ..settings()
    };
    let size = 3 * MSS;
    let mut conn = connection(&s, "reno", size);
    let mut pipe = Pipe::new(RTT / 2, vec![]);
    let run = transfer(&mut conn, &mut pipe, size, false);
    assert_eq!(run.acks, 2);
    assert_eq!(run.done_ns, Some(RTT + s.delack_timeout_ns));
}

#[test]
fn a_lost_tail_is_repaired_by_the_loss_probe() {
    // The last of 10 segments is lost: no duplicate ACKs can show it, so RACK-TLP's probe
    // (RFC 8985 §7) resends it, and the transfer ends with one retransmission.
    let size = 10 * MSS;
    let mut conn = connection(&plain(), "reno", size);
    let mut fates = vec![Fate::Deliver; 9];
    fates.push(Fate::Drop);
    let mut pipe = Pipe::new(RTT / 2, fates);
    let run = transfer(&mut conn, &mut pipe, size, false);
    assert_eq!(conn.src.sender.stats().retransmits, 1);
    assert_eq!(conn.src.sender.stats().loss_probes, 1);
    assert!(run.done_ns.expect("done") > 2 * RTT);
}

fn fates() -> impl Strategy<Value = Vec<Fate>> {
    let fate = prop_oneof![
        6 => Just(Fate::Deliver),
        1 => Just(Fate::Drop),
        1 => (1u8..80).prop_map(Fate::Late),
    ];
    prop::collection::vec(fate, 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under any pattern of loss and reordering (after which the pipe is clean), every byte
    /// arrives once and in order, the cumulative ACK never goes back, no timer is due in the
    /// past, and every byte sent is received, dropped or still in the pipe.
    #[test]
    fn every_byte_arrives_once_in_order_under_loss_and_reordering(
        segments in 1u64..200,
        tail in 0u64..MSS,
        fates in fates(),
        cc in prop::sample::select(vec!["reno", "cubic", "bbr"]),
        delayed_ack in any::<bool>(),
        rack in any::<bool>(),
        handshake in any::<bool>(),
    ) {
        let s = Settings {
            delayed_ack,
            loss_detection: if rack {
                crate::LossDetection::Rack
            } else {
                crate::LossDetection::Dupthresh
            },
            ..settings()
        };
        let size = segments * MSS + tail;
        let mut conn = connection(&s, cc, size);
        let mut pipe = Pipe::new(RTT / 2, fates);
        transfer(&mut conn, &mut pipe, size, handshake);
        prop_assert_eq!(conn.dst.receiver.rcv_nxt(), size);
        prop_assert_eq!(conn.src.sender.acked_bytes(), size);
        let in_pipe: u64 = pipe
            .in_flight
            .iter()
            .filter(|(_, _, p)| p.kind == Kind::Data)
            .map(|(_, _, p)| p.len as u64)
            .sum();
        prop_assert_eq!(
            conn.src.sender.stats().data_bytes_sent,
            conn.dst.receiver.data_bytes_received() + pipe.dropped_data_bytes + in_pipe,
            "bytes conserved"
        );
    }
}

/// What a test drives: a connection whose data ends are there from the start, or made at the
/// first write ([`LazyConnection`]).
trait Ends {
    fn handle_packet(&mut self, now: u64, p: &Packet, io: &mut Io) -> Received;
    fn next_deadline(&self) -> u64;
    fn handle_timeouts(&mut self, now: u64, io: &mut Io);
    fn carry_request_ack(&mut self) -> u64;
    fn ack_requests(&mut self, now: u64, mark: u64, io: &mut Io);
    /// The data sender, made first if it is not there.
    fn sender(&mut self, io: &mut Io) -> &mut Sender;
    fn requests(&mut self) -> &mut RequestSender;
}

impl Ends for Connection {
    fn handle_packet(&mut self, now: u64, p: &Packet, io: &mut Io) -> Received {
        Connection::handle_packet(self, now, p, io)
    }
    fn next_deadline(&self) -> u64 {
        Connection::next_deadline(self)
    }
    fn handle_timeouts(&mut self, now: u64, io: &mut Io) {
        Connection::handle_timeouts(self, now, io, |_| {});
    }
    fn carry_request_ack(&mut self) -> u64 {
        self.src.carry_request_ack()
    }
    fn ack_requests(&mut self, now: u64, mark: u64, io: &mut Io) {
        self.src.ack_requests(now, mark, io);
    }
    fn sender(&mut self, _: &mut Io) -> &mut Sender {
        &mut self.src.sender
    }
    fn requests(&mut self) -> &mut RequestSender {
        &mut self.dst.requests
    }
}

impl Ends for LazyConnection {
    fn handle_packet(&mut self, now: u64, p: &Packet, io: &mut Io) -> Received {
        LazyConnection::handle_packet(self, now, p, io)
    }
    fn next_deadline(&self) -> u64 {
        LazyConnection::next_deadline(self)
    }
    fn handle_timeouts(&mut self, now: u64, io: &mut Io) {
        for kind in SenderEnd::TIMERS {
            self.handle_sender_timeout(now, kind, io);
        }
        self.handle_receiver_timeouts(now, io, |_| {});
    }
    fn carry_request_ack(&mut self) -> u64 {
        LazyConnection::carry_request_ack(self)
    }
    fn ack_requests(&mut self, now: u64, mark: u64, io: &mut Io) {
        LazyConnection::ack_requests(self, now, mark, io);
    }
    fn sender(&mut self, io: &mut Io) -> &mut Sender {
        let s = settings();
        let make = || DataEnds {
            sender: Sender::new(0, &s, controller("cubic", 10)),
            receiver: Receiver::new(0, &s, None),
        };
        &mut self.data_or_make(make, io).sender
    }
    fn requests(&mut self) -> &mut RequestSender {
        &mut self.requests
    }
}

/// A request-response exchange over a pipe with a 100 ms RTT whose 4th packet is lost: the
/// receiving end asks at 0 and 300 ms, and each time a request arrives the sending end answers
/// with 30 segments (the first answer is the first write); every packet sent, with its time.
fn exchange(conn: &mut impl Ends) -> Vec<(u64, Packet)> {
    let mut pipe = Pipe::new(
        RTT / 2,
        vec![Fate::Deliver, Fate::Deliver, Fate::Deliver, Fate::Drop],
    );
    let mut io = Io::default();
    let mut log = Vec::new();
    let mut asks = vec![300 * MS, 0];
    let mut sent = |now: u64, io: &mut Io, pipe: &mut Pipe| {
        log.extend(io.packets.iter().map(|&p| (now, p)));
        pipe.take(now, io);
    };
    loop {
        let ask = asks.last().copied().unwrap_or(u64::MAX);
        let arrival = pipe.next_arrival().unwrap_or(u64::MAX);
        let deadline = conn.next_deadline();
        let now = ask.min(arrival).min(deadline);
        if now == u64::MAX || now > 10_000 * MS {
            break;
        }
        if now == ask {
            asks.pop();
            conn.requests().write(now, 17, &mut io);
        } else if now == arrival {
            let p = pipe.pop();
            if let Received::Request { advanced: true, .. } = conn.handle_packet(now, &p, &mut io) {
                let mark = conn.carry_request_ack();
                let sender = conn.sender(&mut io);
                sender.write(30 * MSS);
                sender.try_send(now, &mut io);
                conn.ack_requests(now, mark, &mut io);
            }
        } else {
            conn.handle_timeouts(now, &mut io);
        }
        sent(now, &mut io, &mut pipe);
    }
    log
}

#[test]
fn data_ends_made_at_the_first_write_send_what_ends_made_at_the_opening_would() {
    let s = settings();
    let mut eager = Connection::new(0, &s, &s, controller("cubic", 10), None);
    let mut io = Io::default();
    eager.src.sender.start(0, false, &mut io);
    assert!(io.packets.is_empty(), "nothing written, nothing sent");
    let mut lazy = LazyConnection::new(0, &s, 0);
    let (before, after) = (exchange(&mut eager), exchange(&mut lazy));
    assert!(before.iter().filter(|(_, p)| p.kind == Kind::Data).count() > 60);
    assert!(before
        .iter()
        .any(|(_, p)| p.kind == Kind::Data && p.rwnd == 34));
    // Packet and SenderStats have no `PartialEq`: their records, field by field.
    assert_eq!(format!("{before:?}"), format!("{after:?}"));
    let ends = lazy.data().expect("made at the first write");
    let stats = |s: &Sender| format!("{:?}", s.stats());
    assert_eq!(stats(&ends.sender), stats(&eager.src.sender));
    assert_eq!(ends.receiver.rcv_nxt(), 60 * MSS);
}

#[test]
fn a_lazy_connection_without_data_holds_its_request_stream_alone() {
    let s = settings();
    let mut lazy = LazyConnection::new(3, &s, 0);
    let mut io = Io::default();
    lazy.requests.write(0, 17, &mut io);
    let request = io.packets.pop().expect("a request");
    assert_eq!(
        lazy.handle_packet(50 * MS, &request, &mut io),
        Received::Request {
            advanced: true,
            upto: 17
        }
    );
    // No data leaves to carry the stream's ACK: it goes alone.
    let mark = lazy.carry_request_ack();
    lazy.ack_requests(50 * MS, mark, &mut io);
    let ack = io.packets.pop().expect("the ACK");
    assert_eq!((ack.kind, ack.seq), (Kind::RequestAck, 17));
    assert_eq!(
        lazy.handle_packet(100 * MS, &ack, &mut io),
        Received::Nothing
    );
    assert_eq!(lazy.next_deadline(), crate::timer::NEVER);
    assert!(lazy.data().is_none());
    assert!(std::mem::size_of::<LazyConnection>() < std::mem::size_of::<Connection>() / 4);
}
