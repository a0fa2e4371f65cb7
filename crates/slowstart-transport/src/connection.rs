//! One flow's connection, sans-IO as quinn-proto's `Connection`: every call takes the time, and
//! the packets the connection sends go into an [`Io`]. Nothing here reads a clock.
//!
//! A connection has two ends, each usable alone (a UDP endpoint holds one):
//! - the [`SenderEnd`] at `src`: the data [`Sender`] and the [`RequestReceiver`] that takes the
//!   application's requests;
//! - the [`ReceiverEnd`] at `dst`: the data [`Receiver`] and the [`RequestSender`] of the
//!   requests.
//!
//! A driver (a [`crate::session::Session`], which the simulator's flows use; the swarm's
//! halves; a loop over UDP sockets; the fuzzer) calls three things, on a [`Connection`] or on
//! one end:
//! - `handle_packet`: a packet arrived, with what the application must hear returned
//!   ([`Received`]);
//! - `poll_timeout`: the earliest deadline of its timers;
//! - `handle_timeouts`: fire every timer due by now, in a fixed order;
//!
//! and after each sender event it hands over (a start, a SYN-ACK, an ACK, answered requests, a
//! retransmission timeout) tells its observer with [`SenderEnd::notify`] ([`crate::observe`]).
//!
//! A [`LazyConnection`] holds the request stream's two ends from the start and the data ends
//! ([`DataEnds`]) only from the first data written: a swarm's half-connection, most of which
//! never carry a piece (issue #37).
//!
//! The five timers live in the parts that arm them (the sender's retransmission, loss probe and
//! pacing timers, the receiver's delayed ACK, the request stream's retransmission timer);
//! whether one is due and what firing it does is decided here only.

use slowstart_cc::{Controller, Phase};

use crate::observe::{Observer, SenderEvent};
use crate::packet::{Kind, Packet};
use crate::receiver::Receiver;
use crate::request::{RequestReceiver, RequestSender};
use crate::sender::{AckOutcome, Sender, State};
use crate::settings::Settings;
use crate::timer::{Timer, TimerKind, NEVER};
use crate::Io;

/// What a packet did that the application above may act on (as quinn-proto's events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Nothing the application sees (a SYN answered, a request stream ACK).
    Nothing,
    /// Data arrived at the receiver: bytes in order went from `before` to `upto`.
    Data { before: u64, upto: u64 },
    /// The SYN-ACK arrived; `established` if it completed the handshake just now.
    SynAck { established: bool },
    /// An ACK arrived at the sender.
    Ack(AckOutcome),
    /// A request packet arrived; `advanced` if it moved the request stream's in-order point
    /// (now `upto`). Call [`SenderEnd::answer_requests`] once the application has written its
    /// answer, so the stream's ACK rides on it.
    Request { advanced: bool, upto: u64 },
    /// A kind this end does not take (a UDP endpoint counts it as unexpected).
    Unexpected,
}

/// A timer that fired: its kind and the deadline it had (a socket loop's lateness).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired {
    pub kind: TimerKind,
    pub deadline: u64,
}

/// The data sender's end (`src`).
pub struct SenderEnd {
    pub sender: Sender,
    /// The application's requests from the other end.
    pub request_rx: RequestReceiver,
    /// The controller's phase at the last [`SenderEnd::notify`] (at the start, its first).
    observed_phase: Phase,
}

/// The data receiver's end (`dst`).
pub struct ReceiverEnd {
    pub receiver: Receiver,
    /// The application's requests to the other end.
    pub requests: RequestSender,
}

/// Both ends of flow `flow`, as a simulator holds them.
pub struct Connection {
    pub src: SenderEnd,
    pub dst: ReceiverEnd,
}

/// Fire `timer` if its deadline has passed.
#[inline]
fn due(timer: &mut Timer, now: u64, kind: TimerKind) -> Option<Fired> {
    let deadline = timer.deadline().filter(|&d| d <= now)?;
    timer.fire(now).then_some(Fired { kind, deadline })
}

/// A SYN-ACK or an ACK at the data sender.
#[inline]
fn at_sender(sender: &mut Sender, now: u64, packet: &Packet, io: &mut Io) -> Received {
    match packet.kind {
        Kind::SynAck => {
            let was_established = sender.state() == State::Established;
            sender.on_syn_ack(now, packet, io);
            Received::SynAck {
                established: !was_established && sender.state() == State::Established,
            }
        }
        Kind::Ack => Received::Ack(sender.on_ack(now, packet, io)),
        _ => Received::Unexpected,
    }
}

/// A request packet at the data sender's end.
#[inline]
fn at_request_receiver(request_rx: &mut RequestReceiver, packet: &Packet) -> Received {
    Received::Request {
        advanced: request_rx.on_request(packet),
        upto: request_rx.rcv_nxt(),
    }
}

/// A SYN or data at the data receiver; data carries the request stream's cumulative ACK too.
#[inline]
fn at_receiver(
    receiver: &mut Receiver,
    requests: &mut RequestSender,
    now: u64,
    packet: &Packet,
    io: &mut Io,
) -> Received {
    match packet.kind {
        Kind::Syn => {
            receiver.on_syn(now, packet, io);
            Received::Nothing
        }
        Kind::Data => {
            let before = receiver.rcv_nxt();
            receiver.on_data(now, packet, io);
            // Data carries the request stream's cumulative ACK (0 while it has none).
            requests.on_ack(now, packet.rwnd);
            Received::Data {
                before,
                upto: receiver.rcv_nxt(),
            }
        }
        _ => Received::Unexpected,
    }
}

/// The request stream's ACK, alone, at the data receiver's end.
#[inline]
fn at_request_sender(requests: &mut RequestSender, now: u64, packet: &Packet) -> Received {
    requests.on_ack(now, packet.seq);
    Received::Nothing
}

/// The timers of one end and what firing each does; the waking, polling and firing around
/// them are written once, here, for both ends.
trait EndTimers {
    /// This end's timers, in the order `handle_timeouts` fires them.
    const TIMERS: &'static [TimerKind];

    fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer>;
    fn fire(&mut self, now: u64, kind: TimerKind, io: &mut Io);

    /// The earliest deadline of this end's timers, or [`NEVER`].
    fn next_deadline(&self) -> u64;

    /// Fire the timer of `kind` if it is due by `now`.
    #[inline]
    fn handle_timeout(&mut self, now: u64, kind: TimerKind, io: &mut Io) -> Option<Fired> {
        let fired = due(self.timer_mut(kind)?, now, kind)?;
        self.fire(now, kind, io);
        Some(fired)
    }

    #[inline]
    fn handle_timeouts(&mut self, now: u64, io: &mut Io, mut fired: impl FnMut(Fired)) {
        for &kind in Self::TIMERS {
            if let Some(f) = self.handle_timeout(now, kind, io) {
                fired(f);
            }
        }
    }
}

impl SenderEnd {
    /// The timers of this end, in the order `handle_timeouts` fires them.
    pub const TIMERS: [TimerKind; 3] = [
        TimerKind::Retransmission,
        TimerKind::LossProbe,
        TimerKind::Pacing,
    ];

    /// Flow `flow`'s sending end: data under `data` settings run by `cc`, requests under
    /// `control`'s.
    pub fn new(flow: u32, data: &Settings, control: &Settings, cc: Controller) -> Self {
        let sender = Sender::new(flow, data, cc);
        SenderEnd {
            observed_phase: sender.phase(),
            sender,
            request_rx: RequestReceiver::new(flow, control),
        }
    }

    /// Tell `obs` what the sender did at `now`, right after the driver handed it `event`: the
    /// segments it found lost since the last report (while it logs them), a change of its
    /// controller's phase since the last report (once), then the event ([`crate::observe`]).
    #[inline]
    pub fn notify<O: Observer>(&mut self, now: u64, event: SenderEvent, obs: &mut O) {
        notify(&mut self.sender, &mut self.observed_phase, now, event, obs);
    }

    /// A packet for the sending end arrived (a SYN-ACK, an ACK or a request).
    #[inline]
    pub fn handle_packet(&mut self, now: u64, packet: &Packet, io: &mut Io) -> Received {
        match packet.kind {
            Kind::SynAck | Kind::Ack => at_sender(&mut self.sender, now, packet, io),
            Kind::Request => at_request_receiver(&mut self.request_rx, packet),
            Kind::Syn | Kind::Data | Kind::RequestAck => Received::Unexpected,
        }
    }

    /// After a [`Received::Request`] and the application's answer to it: the request stream's
    /// cumulative ACK rides on the data `send` sends now, or goes alone when none leaves.
    pub fn answer_requests(
        &mut self,
        now: u64,
        io: &mut Io,
        send: impl FnOnce(&mut Sender, &mut Io),
    ) {
        let mark = self.carry_request_ack();
        send(&mut self.sender, io);
        self.ack_requests(now, mark, io);
    }

    /// [`Self::answer_requests`] in two halves, for a driver whose sending loop needs more than
    /// the sender (the swarm writes queued messages as room frees): the data sent from now on
    /// carries the request stream's ACK; the returned mark is for [`Self::ack_requests`].
    pub fn carry_request_ack(&mut self) -> u64 {
        self.sender.set_piggyback_ack(self.request_rx.rcv_nxt());
        self.sender.stats().data_packets_sent
    }

    /// The request stream's ACK goes alone if no data left since `mark`.
    pub fn ack_requests(&mut self, now: u64, mark: u64, io: &mut Io) {
        if self.sender.stats().data_packets_sent == mark {
            self.request_rx.send_ack(now, io);
        }
    }

    /// The earliest deadline of this end's timers.
    #[inline]
    pub fn poll_timeout(&self) -> Option<u64> {
        let at = EndTimers::next_deadline(&self.sender);
        (at != NEVER).then_some(at)
    }

    /// Fire this end's timer of `kind` if it is due by `now`.
    #[inline]
    pub fn handle_timeout(&mut self, now: u64, kind: TimerKind, io: &mut Io) -> Option<Fired> {
        EndTimers::handle_timeout(&mut self.sender, now, kind, io)
    }

    /// Fire every timer of this end due by `now`, each after the ones before it acted;
    /// `fired` hears each.
    pub fn handle_timeouts(&mut self, now: u64, io: &mut Io, fired: impl FnMut(Fired)) {
        EndTimers::handle_timeouts(&mut self.sender, now, io, fired)
    }

    /// [`SenderEnd::handle_timeouts`], telling `obs` of a retransmission timeout as it fires
    /// (every driver reports it so: the simulator's sessions, the UDP endpoints).
    #[inline]
    pub fn handle_timeouts_observed(
        &mut self,
        now: u64,
        io: &mut Io,
        obs: &mut impl Observer,
        mut fired: impl FnMut(Fired),
    ) {
        for kind in Self::TIMERS {
            if let Some(f) = self.handle_timeout(now, kind, io) {
                if kind == TimerKind::Retransmission {
                    self.notify(now, SenderEvent::Rto, obs);
                }
                fired(f);
            }
        }
    }
}

/// [`SenderEnd::notify`] for a sender held apart from its end (a swarm's half-connection),
/// `observed_phase` being the controller's phase at the last report.
#[inline]
pub fn notify<O: Observer>(
    sender: &mut Sender,
    observed_phase: &mut Phase,
    now: u64,
    event: SenderEvent,
    obs: &mut O,
) {
    for loss in sender.take_losses() {
        obs.on_packet_lost(now, &loss);
    }
    let phase = sender.phase();
    if phase != *observed_phase {
        obs.on_phase_change(now, *observed_phase, phase);
        *observed_phase = phase;
    }
    obs.on_sender_event(now, event, sender);
}

impl Received {
    /// The sender event this was, to report to an observer: a SYN-ACK or an ACK.
    pub fn sender_event(self) -> Option<SenderEvent> {
        match self {
            Received::SynAck { .. } => Some(SenderEvent::SynAck),
            Received::Ack(outcome) => Some(SenderEvent::Ack(outcome)),
            _ => None,
        }
    }
}

impl EndTimers for Sender {
    const TIMERS: &'static [TimerKind] = &SenderEnd::TIMERS;

    #[inline]
    fn next_deadline(&self) -> u64 {
        Sender::next_deadline(self)
    }

    #[inline]
    fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer> {
        Sender::timer_mut(self, kind)
    }

    #[inline]
    fn fire(&mut self, now: u64, kind: TimerKind, io: &mut Io) {
        match kind {
            TimerKind::Retransmission => self.on_rto(now, io),
            TimerKind::LossProbe => self.on_loss_probe(now, io),
            TimerKind::Pacing => self.on_pacing_timer(now, io),
            _ => {}
        }
    }
}

impl ReceiverEnd {
    /// The timers of this end, in the order `handle_timeouts` fires them.
    pub const TIMERS: [TimerKind; 2] = [TimerKind::DelayedAck, TimerKind::Request];

    /// Flow `flow`'s receiving end: data under `data` settings (noting when `size_bytes`
    /// are in), requests under `control`'s.
    pub fn new(flow: u32, data: &Settings, control: &Settings, size_bytes: Option<u64>) -> Self {
        ReceiverEnd {
            receiver: Receiver::new(flow, data, size_bytes),
            requests: RequestSender::new(flow, control),
        }
    }

    /// A packet for the receiving end arrived (a SYN, data or a request stream ACK).
    #[inline]
    pub fn handle_packet(&mut self, now: u64, packet: &Packet, io: &mut Io) -> Received {
        match packet.kind {
            Kind::Syn | Kind::Data => {
                at_receiver(&mut self.receiver, &mut self.requests, now, packet, io)
            }
            Kind::RequestAck => at_request_sender(&mut self.requests, now, packet),
            Kind::SynAck | Kind::Ack | Kind::Request => Received::Unexpected,
        }
    }

    /// The earliest deadline of this end's timers.
    #[inline]
    pub fn poll_timeout(&self) -> Option<u64> {
        let at = EndTimers::next_deadline(self);
        (at != NEVER).then_some(at)
    }

    /// Fire this end's timer of `kind` if it is due by `now`.
    #[inline]
    pub fn handle_timeout(&mut self, now: u64, kind: TimerKind, io: &mut Io) -> Option<Fired> {
        EndTimers::handle_timeout(self, now, kind, io)
    }

    /// Fire every timer of this end due by `now`, each after the ones before it acted;
    /// `fired` hears each.
    pub fn handle_timeouts(&mut self, now: u64, io: &mut Io, fired: impl FnMut(Fired)) {
        EndTimers::handle_timeouts(self, now, io, fired)
    }
}

impl EndTimers for ReceiverEnd {
    const TIMERS: &'static [TimerKind] = &ReceiverEnd::TIMERS;

    #[inline]
    fn next_deadline(&self) -> u64 {
        EndTimers::next_deadline(&self.receiver).min(EndTimers::next_deadline(&self.requests))
    }

    #[inline]
    fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer> {
        match kind {
            TimerKind::DelayedAck => EndTimers::timer_mut(&mut self.receiver, kind),
            TimerKind::Request => EndTimers::timer_mut(&mut self.requests, kind),
            _ => None,
        }
    }

    #[inline]
    fn fire(&mut self, now: u64, kind: TimerKind, io: &mut Io) {
        match kind {
            TimerKind::DelayedAck => EndTimers::fire(&mut self.receiver, now, kind, io),
            TimerKind::Request => EndTimers::fire(&mut self.requests, now, kind, io),
            _ => {}
        }
    }
}

impl EndTimers for Receiver {
    const TIMERS: &'static [TimerKind] = &[TimerKind::DelayedAck];

    #[inline]
    fn next_deadline(&self) -> u64 {
        self.delack_timer().at()
    }

    #[inline]
    fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer> {
        (kind == TimerKind::DelayedAck).then(|| self.delack_timer_mut())
    }

    #[inline]
    fn fire(&mut self, now: u64, _: TimerKind, io: &mut Io) {
        self.on_delack_timer(now, io);
    }
}

impl EndTimers for RequestSender {
    const TIMERS: &'static [TimerKind] = &[TimerKind::Request];

    #[inline]
    fn next_deadline(&self) -> u64 {
        self.timer().at()
    }

    #[inline]
    fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer> {
        (kind == TimerKind::Request).then(|| RequestSender::timer_mut(self))
    }

    #[inline]
    fn fire(&mut self, now: u64, _: TimerKind, io: &mut Io) {
        self.on_timer(now, io);
    }
}

impl Connection {
    /// Flow `flow`'s connection: data under `data` settings run by `cc`, the request stream
    /// under `control`'s (a swarm's uTP peers send their requests over TCP's settings); the
    /// receiver notes when `size_bytes` are in.
    pub fn new(
        flow: u32,
        data: &Settings,
        control: &Settings,
        cc: Controller,
        size_bytes: Option<u64>,
    ) -> Self {
        Connection {
            src: SenderEnd::new(flow, data, control, cc),
            dst: ReceiverEnd::new(flow, data, control, size_bytes),
        }
    }

    /// A packet arrived at the end it is addressed to.
    #[inline]
    pub fn handle_packet(&mut self, now: u64, packet: &Packet, io: &mut Io) -> Received {
        match packet.kind {
            Kind::SynAck | Kind::Ack | Kind::Request => self.src.handle_packet(now, packet, io),
            Kind::Syn | Kind::Data | Kind::RequestAck => self.dst.handle_packet(now, packet, io),
        }
    }

    /// Free the storage of every buffer of both ends left empty: an idle connection (nothing
    /// in flight either way) then holds its fixed fields only (issue #37). Nothing it does
    /// next changes.
    pub fn release_empty_buffers(&mut self) {
        self.src.sender.release_empty_buffers();
        self.dst.receiver.release_empty_buffers();
        self.dst.requests.release_empty_buffers();
    }

    /// The earliest deadline of either end's timers.
    #[inline]
    pub fn poll_timeout(&self) -> Option<u64> {
        let at = self.next_deadline();
        (at != NEVER).then_some(at)
    }

    /// [`Connection::poll_timeout`], or [`NEVER`].
    #[inline]
    pub fn next_deadline(&self) -> u64 {
        EndTimers::next_deadline(&self.src.sender).min(EndTimers::next_deadline(&self.dst))
    }

    /// Fire every timer due by `now`: the sending end's, then the receiving end's.
    pub fn handle_timeouts(&mut self, now: u64, io: &mut Io, mut fired: impl FnMut(Fired)) {
        self.src.handle_timeouts(now, io, &mut fired);
        self.dst.handle_timeouts(now, io, &mut fired);
    }
}

/// A connection's data ends, made together: the data sender (with its controller) and the
/// data receiver.
pub struct DataEnds {
    pub sender: Sender,
    pub receiver: Receiver,
}

/// Both ends of a connection whose data ends are made only when its application first writes
/// data ([`LazyConnection::data_or_make`]), the request stream's from the start: a swarm's
/// half-connection, most of which never carry a piece (issue #37: 99.8% of the halves at
/// 100 000 peers). Until then it holds the request stream and a few words. The data sender is
/// made as [`Connection::new`] and a start without handshake at the opening would have left
/// it, so nothing it sends differs from a connection whose data ends were there from the start.
pub struct LazyConnection {
    /// At the data sender's end: the requests from the other end.
    pub request_rx: RequestReceiver,
    /// At the data receiver's end: the requests to the other end.
    pub requests: RequestSender,
    data: Option<Box<DataEnds>>,
    /// While there is no sender: the request stream's ACK the data would carry
    /// ([`Sender::set_piggyback_ack`]), handed to the sender when it is made.
    piggyback_ack: u64,
    /// When the connection opened: its sender starts then.
    opened_ns: u64,
}

impl LazyConnection {
    /// Flow `flow`'s connection, opened at `opened_ns`, its request stream under `control`'s
    /// settings; no data ends yet.
    pub fn new(flow: u32, control: &Settings, opened_ns: u64) -> Self {
        LazyConnection {
            request_rx: RequestReceiver::new(flow, control),
            requests: RequestSender::new(flow, control),
            data: None,
            piggyback_ack: 0,
            opened_ns,
        }
    }

    /// The data ends, once made.
    #[inline]
    pub fn data(&self) -> Option<&DataEnds> {
        self.data.as_deref()
    }

    #[inline]
    pub fn data_mut(&mut self) -> Option<&mut DataEnds> {
        self.data.as_deref_mut()
    }

    /// The data ends, made by `make` (a sender and receiver as [`Connection::new`] makes them)
    /// if there are none: the sender then starts, without handshake, at the opening, and
    /// carries the request stream's ACK the driver last set
    /// ([`LazyConnection::carry_request_ack`]). With nothing written, `start` sends nothing
    /// (its `try_send` marks the rate sampler app-limited, and its pacer waits for nothing
    /// before a first packet) and a later `try_send` changes nothing more; the receiver before
    /// data has nothing to ACK. So the ends made now are as ends made at the opening would be.
    #[inline]
    pub fn data_or_make(&mut self, make: impl FnOnce() -> DataEnds, io: &mut Io) -> &mut DataEnds {
        let (opened_ns, piggyback_ack) = (self.opened_ns, self.piggyback_ack);
        self.data.get_or_insert_with(|| {
            let mut data = Box::new(make());
            data.sender.start(opened_ns, false, io);
            data.sender.set_piggyback_ack(piggyback_ack);
            data
        })
    }

    /// A packet arrived at the end it is addressed to (data, ACKs and SYNs only once the data
    /// ends exist: [`Received::Unexpected`] before).
    #[inline]
    pub fn handle_packet(&mut self, now: u64, packet: &Packet, io: &mut Io) -> Received {
        match (packet.kind, self.data.as_deref_mut()) {
            (Kind::Request, _) => at_request_receiver(&mut self.request_rx, packet),
            (Kind::RequestAck, _) => at_request_sender(&mut self.requests, now, packet),
            (Kind::SynAck | Kind::Ack, Some(data)) => at_sender(&mut data.sender, now, packet, io),
            (Kind::Syn | Kind::Data, Some(data)) => {
                at_receiver(&mut data.receiver, &mut self.requests, now, packet, io)
            }
            (_, None) => Received::Unexpected,
        }
    }

    /// [`SenderEnd::carry_request_ack`]: the data sent from now on carries the request
    /// stream's ACK; the mark is for [`LazyConnection::ack_requests`].
    #[inline]
    pub fn carry_request_ack(&mut self) -> u64 {
        let ack = self.request_rx.rcv_nxt();
        match self.data.as_deref_mut() {
            Some(data) => {
                data.sender.set_piggyback_ack(ack);
                data.sender.stats().data_packets_sent
            }
            None => {
                self.piggyback_ack = ack;
                0
            }
        }
    }

    /// The request stream's ACK goes alone if no data left since `mark`.
    #[inline]
    pub fn ack_requests(&mut self, now: u64, mark: u64, io: &mut Io) {
        let sent = self
            .data()
            .map_or(0, |d| d.sender.stats().data_packets_sent);
        if sent == mark {
            self.request_rx.send_ack(now, io);
        }
    }

    /// The earliest deadline of its timers, or [`NEVER`].
    #[inline]
    pub fn next_deadline(&self) -> u64 {
        let requests = EndTimers::next_deadline(&self.requests);
        match self.data.as_deref() {
            Some(d) => EndTimers::next_deadline(&d.sender)
                .min(EndTimers::next_deadline(&d.receiver))
                .min(requests),
            None => requests,
        }
    }

    /// Fire the data sender's timer of `kind` (one of [`SenderEnd::TIMERS`]) if it is due.
    #[inline]
    pub fn handle_sender_timeout(
        &mut self,
        now: u64,
        kind: TimerKind,
        io: &mut Io,
    ) -> Option<Fired> {
        EndTimers::handle_timeout(&mut self.data.as_deref_mut()?.sender, now, kind, io)
    }

    /// Fire every timer of the data receiver's end due by `now`, in [`ReceiverEnd::TIMERS`]'
    /// order; `fired` hears each.
    #[inline]
    pub fn handle_receiver_timeouts(
        &mut self,
        now: u64,
        io: &mut Io,
        mut fired: impl FnMut(Fired),
    ) {
        if let Some(data) = self.data.as_deref_mut() {
            EndTimers::handle_timeouts(&mut data.receiver, now, io, &mut fired);
        }
        EndTimers::handle_timeouts(&mut self.requests, now, io, fired);
    }

    /// [`Connection::release_empty_buffers`].
    pub fn release_empty_buffers(&mut self) {
        if let Some(data) = self.data.as_deref_mut() {
            data.sender.release_empty_buffers();
            data.receiver.release_empty_buffers();
        }
        self.requests.release_empty_buffers();
    }
}
