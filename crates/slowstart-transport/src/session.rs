//! A flow session: a connection, the application on it and its controller (inside the
//! sender), driven as quinn-proto drives a connection: `handle_packet(now, ..)`,
//! `handle_timeout(now, ..)` and one deadline, [`Session::poll_timeout`] (the earliest of the
//! connection's five timers and the application's own). Each call tells the observer the
//! driver lends it what the sender did ([`crate::observe`]), and returns what the driver must
//! act on ([`Outcome`]).
//!
//! An event heap keeps one entry per session: after an event it asks [`Session::wake_at`],
//! which names a time only when the deadline came earlier than the entry pending ([`Wake`]);
//! a loop over sockets sleeps until `poll_timeout` instead. The simulator's flows are sessions;
//! a swarm's half-connections, whose application spans a peer's connections, keep a
//! [`Connection`] and a [`Wake`] each, the same way.

use crate::connection::{Connection, Received};
use crate::observe::{Observer, SenderEvent};
use crate::packet::{Kind, Packet};
use crate::receiver::Receiver;
use crate::request::RequestSender;
use crate::sender::{Sender, State};
use crate::timer::{Timer, NEVER};
use crate::Io;

/// What an application reaches while it handles one event.
pub struct Ctx<'a> {
    pub now: u64,
    pub flow: u32,
    /// `src`'s data sender (the server, the uploader).
    pub sender: &'a mut Sender,
    /// `dst`'s data receiver (to let a pending delayed ACK leave with a request).
    pub receiver: &'a mut Receiver,
    /// `dst`'s request stream.
    pub requests: &'a mut RequestSender,
    pub io: &'a mut Io,
    /// Set by the application: close this connection and open a new one (HTTP without
    /// keep-alive).
    pub reconnect: bool,
}

impl Ctx<'_> {
    /// `dst` writes request bytes; a delayed ACK it owes leaves with them.
    pub fn request(&mut self, bytes: u64) {
        self.receiver.flush_ack(self.now, self.io);
        self.requests.write(self.now, bytes, self.io);
    }
}

/// An application on a flow session (`slowstart_apps`): told when the flow starts, when the
/// connection is established, when request bytes reach `src` in order, when data reaches
/// `dst` in order, and when its own deadline comes. Both ends live in one value; each side
/// reads only what its own endpoint would know.
pub trait FlowApp {
    /// Whether it talks on the request stream (if not, data arriving is not its business).
    fn uses_requests(&self) -> bool;
    /// Before the connection opens.
    fn on_start(&mut self, ctx: &mut Ctx);
    /// The handshake completed (both ends may send).
    fn on_established(&mut self, ctx: &mut Ctx);
    /// `src` received the request stream in order up to byte `upto`.
    fn on_requests(&mut self, upto: u64, ctx: &mut Ctx);
    /// `dst` received the data stream in order up to byte `upto`.
    fn on_delivered(&mut self, upto: u64, ctx: &mut Ctx);
    /// The application's own timer, if it keeps one.
    fn timer(&self) -> Option<&Timer> {
        None
    }
    fn timer_mut(&mut self) -> Option<&mut Timer> {
        None
    }
    /// Its timer fired.
    fn on_timeout(&mut self, _ctx: &mut Ctx) {}
}

/// What an event did that the driver acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The application acted (a row of its series may be due; it may have finished).
    pub app: bool,
    /// The application asked for a new connection ([`Ctx::reconnect`]).
    pub reconnect: bool,
    /// An ACK reached the sender (a bulk flow may be done).
    pub acked: bool,
}

/// The wake-up an event heap holds for a session, with lazy deletion: the entry it acts on is
/// the earliest pushed. A deadline that moves later waits for it (it finds nothing due and
/// pushes again); one that moves earlier is pushed at once, and the entry it replaced stays in
/// the heap: when it comes, it becomes the one acted on if it is the next, so a deadline that
/// comes back to it does not push a second entry.
#[derive(Clone, Copy, Debug)]
pub struct Wake {
    /// When the entry acted on comes (`u64::MAX`: none).
    armed_at: u64,
    /// The earliest entry it replaced that is still in the heap (`u64::MAX`: none known).
    replaced: u64,
}

impl Default for Wake {
    fn default() -> Self {
        Wake {
            armed_at: NEVER,
            replaced: NEVER,
        }
    }
}

impl Wake {
    /// After an event: the time to push a wake-up at, if `deadline` comes before the entry
    /// acted on.
    #[inline]
    #[must_use]
    pub fn arm(&mut self, deadline: Option<u64>) -> Option<u64> {
        self.arm_at(deadline.unwrap_or(NEVER))
    }

    /// [`Wake::arm`] with [`NEVER`] for no deadline.
    #[inline]
    #[must_use]
    pub fn arm_at(&mut self, deadline: u64) -> Option<u64> {
        if deadline >= self.armed_at {
            return None;
        }
        self.replaced = self.replaced.min(self.armed_at);
        self.armed_at = deadline;
        Some(deadline)
    }

    /// A wake-up came at `now`: true if it is the one to act on (false: an entry replaced by
    /// an earlier one, which came already).
    #[inline]
    #[must_use]
    pub fn woke(&mut self, now: u64) -> bool {
        if self.armed_at != now {
            return false;
        }
        self.armed_at = std::mem::replace(&mut self.replaced, NEVER);
        true
    }
}

/// A connection and its application, with the session's wake-up.
pub struct Session<A> {
    pub conn: Connection,
    pub app: A,
    wake: Wake,
}

impl<A: FlowApp> Session<A> {
    pub fn new(conn: Connection, app: A) -> Self {
        Session {
            conn,
            app,
            wake: Wake::default(),
        }
    }

    /// Run an application hook with both ends at hand; true if it asked for a new connection.
    #[inline]
    pub fn with_app(
        &mut self,
        now: u64,
        flow: u32,
        io: &mut Io,
        hook: impl FnOnce(&mut A, &mut Ctx),
    ) -> bool {
        let mut ctx = Ctx {
            now,
            flow,
            sender: &mut self.conn.src.sender,
            receiver: &mut self.conn.dst.receiver,
            requests: &mut self.conn.dst.requests,
            io,
            reconnect: false,
        };
        hook(&mut self.app, &mut ctx);
        ctx.reconnect
    }

    /// The flow starts: the application first hears of it, then the connection opens.
    pub fn start(
        &mut self,
        now: u64,
        flow: u32,
        handshake: bool,
        io: &mut Io,
        obs: &mut impl Observer,
    ) -> Outcome {
        self.with_app(now, flow, io, |app, ctx| app.on_start(ctx));
        self.open(now, flow, handshake, io, obs);
        Outcome {
            app: true,
            ..Outcome::default()
        }
    }

    /// The connection opens (a handshake, or established at once: the application hears of
    /// it and the sender sends what it may).
    pub fn open(
        &mut self,
        now: u64,
        flow: u32,
        handshake: bool,
        io: &mut Io,
        obs: &mut impl Observer,
    ) {
        self.conn.src.sender.start(now, handshake, io);
        if self.conn.src.sender.state() == State::Established {
            self.with_app(now, flow, io, |app, ctx| app.on_established(ctx));
            self.conn.src.sender.try_send(now, io);
        }
        self.conn.src.notify(now, SenderEvent::Start, obs);
    }

    /// Replace the connection (the application stays): the next [`Session::open`] starts it.
    pub fn replace_connection(&mut self, conn: Connection) -> Connection {
        std::mem::replace(&mut self.conn, conn)
    }

    /// A packet of this session arrived.
    #[inline]
    pub fn handle_packet(
        &mut self,
        now: u64,
        packet: &Packet,
        io: &mut Io,
        obs: &mut impl Observer,
    ) -> Outcome {
        let flow = packet.flow;
        if let Kind::Ack | Kind::SynAck = packet.kind {
            obs.on_packet_received(now, packet);
        }
        let mut out = Outcome::default();
        match self.conn.handle_packet(now, packet, io) {
            Received::Nothing | Received::Unexpected => {}
            Received::Data { before, upto } => {
                if self.app.uses_requests() && upto > before {
                    out.reconnect =
                        self.with_app(now, flow, io, |app, ctx| app.on_delivered(upto, ctx));
                    out.app = true;
                }
            }
            Received::SynAck { established } => {
                if established {
                    self.with_app(now, flow, io, |app, ctx| app.on_established(ctx));
                    self.conn.src.sender.try_send(now, io);
                }
                self.conn.src.notify(now, SenderEvent::SynAck, obs);
                out.app = true;
            }
            Received::Ack(outcome) => {
                self.conn.src.notify(now, SenderEvent::Ack(outcome), obs);
                out.acked = true;
            }
            Received::Request { advanced, upto } => {
                if advanced {
                    self.with_app(now, flow, io, |app, ctx| app.on_requests(upto, ctx));
                }
                self.conn.src.answer_requests(now, io, |sender, io| {
                    sender.try_send(now, io);
                });
                self.conn.src.notify(now, SenderEvent::Requests, obs);
                out.app = true;
            }
        }
        out
    }

    /// The earliest deadline of the connection's timers and the application's.
    #[inline]
    pub fn poll_timeout(&self) -> Option<u64> {
        let at = self.next_deadline();
        (at != NEVER).then_some(at)
    }

    /// [`Session::poll_timeout`], or [`NEVER`].
    #[inline]
    fn next_deadline(&self) -> u64 {
        let app = self.app.timer().map_or(NEVER, Timer::at);
        self.conn.next_deadline().min(app)
    }

    /// After an event: when an event heap must wake this session, if earlier than its
    /// pending wake-up ([`Wake`]).
    #[inline]
    pub fn wake_at(&mut self) -> Option<u64> {
        self.wake.arm_at(self.next_deadline())
    }

    /// Fire every timer due by `now`: the sending end's (a retransmission timeout is told to
    /// the observer as it fires), the receiving end's, then the application's.
    #[inline]
    pub fn handle_timeout(
        &mut self,
        now: u64,
        flow: u32,
        io: &mut Io,
        obs: &mut impl Observer,
    ) -> Outcome {
        if !self.wake.woke(now) {
            return Outcome::default();
        }
        self.conn.src.handle_timeouts_observed(now, io, obs, |_| {});
        self.conn.dst.handle_timeouts(now, io, |_| {});
        let mut out = Outcome::default();
        if self.app.timer_mut().is_some_and(|t| t.fire(now)) {
            out.reconnect = self.with_app(now, flow, io, |app, ctx| app.on_timeout(ctx));
            out.app = true;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settings, MS, SEC};
    use slowstart_cc::{CcSpec, CommonParams, Controller};

    /// Writes `bytes` at the start and ticks every `every` ns after it, counting its ticks.
    struct Ticking {
        bytes: u64,
        every: u64,
        tick: Timer,
        ticks: u32,
    }

    impl FlowApp for Ticking {
        fn uses_requests(&self) -> bool {
            false
        }
        fn on_start(&mut self, ctx: &mut Ctx) {
            ctx.sender.write(self.bytes);
            self.tick.set(Some(ctx.now + self.every));
        }
        fn on_established(&mut self, _: &mut Ctx) {}
        fn on_requests(&mut self, _: u64, _: &mut Ctx) {}
        fn on_delivered(&mut self, _: u64, _: &mut Ctx) {}
        fn timer(&self) -> Option<&Timer> {
            Some(&self.tick)
        }
        fn timer_mut(&mut self) -> Option<&mut Timer> {
            Some(&mut self.tick)
        }
        fn on_timeout(&mut self, ctx: &mut Ctx) {
            self.ticks += 1;
            self.tick.set(Some(ctx.now + self.every));
        }
    }

    fn session(bytes: u64, every: u64) -> Session<Ticking> {
        let common = CommonParams {
            mss: 1460,
            initcwnd: 10,
            abc: true,
            seed: 1,
            paced: false,
        };
        let cc = Controller::new(&CcSpec::named("reno"), &common).expect("a built-in");
        let s = settings();
        let app = Ticking {
            bytes,
            every,
            tick: Timer::default(),
            ticks: 0,
        };
        Session::new(Connection::new(0, &s, &s, cc, Some(bytes)), app)
    }

    #[test]
    fn the_deadline_is_the_earliest_of_the_connections_timers_and_the_applications() {
        // Data in flight: the retransmission timer (RFC 6298's 1 s before an RTT sample)
        // against a tick every 300 ms, then every 5 s.
        let mut io = Io::default();
        let mut s = session(14_600, 300 * MS);
        s.start(0, 0, false, &mut io, &mut ());
        assert!(!io.packets.is_empty(), "the first window left");
        assert_eq!(s.poll_timeout(), Some(300 * MS), "the tick comes first");
        assert_eq!(s.wake_at(), Some(300 * MS));
        assert_eq!(s.wake_at(), None, "one entry: already pending");
        let mut late = session(14_600, 5 * SEC);
        late.start(0, 0, false, &mut io, &mut ());
        let rto = late.conn.poll_timeout().expect("the retransmission timer");
        assert!(rto < 5 * SEC);
        assert_eq!(late.poll_timeout(), Some(rto));
    }

    #[test]
    fn a_wake_up_fires_what_is_due_and_a_replaced_one_nothing() {
        let mut io = Io::default();
        let mut s = session(0, 300 * MS);
        s.start(0, 0, false, &mut io, &mut ());
        assert_eq!(s.wake_at(), Some(300 * MS));
        // The tick moves earlier, then every 100 ms: a new entry; the one at 300 ms is
        // replaced.
        s.app.tick.set(Some(100 * MS));
        s.app.every = 100 * MS;
        assert_eq!(s.wake_at(), Some(100 * MS));
        let out = s.handle_timeout(100 * MS, 0, &mut io, &mut ());
        assert!(out.app);
        assert_eq!((s.app.ticks, s.poll_timeout()), (1, Some(200 * MS)));
        // The next tick (200 ms) comes before the replaced entry (300 ms): pushed.
        assert_eq!(s.wake_at(), Some(200 * MS));
        assert!(s.handle_timeout(200 * MS, 0, &mut io, &mut ()).app);
        assert_eq!(
            s.wake_at(),
            None,
            "300 ms: the replaced entry, still coming"
        );
        assert!(s.handle_timeout(300 * MS, 0, &mut io, &mut ()).app);
        assert_eq!(s.app.ticks, 3);
        // An entry not acted on (a stale one) fires nothing, even with something due.
        assert_eq!(s.wake_at(), Some(400 * MS));
        let out = s.handle_timeout(450 * MS, 0, &mut io, &mut ());
        assert_eq!((out, s.app.ticks), (Outcome::default(), 3));
    }

    #[test]
    fn a_wake_up_is_pushed_only_when_the_deadline_comes_earlier() {
        let mut w = Wake::default();
        assert_eq!(w.arm(None), None);
        assert_eq!(w.arm(Some(100)), Some(100));
        assert_eq!(
            w.arm(Some(200)),
            None,
            "later: the entry at 100 comes first"
        );
        assert_eq!(w.arm(Some(50)), Some(50), "earlier: pushed at once");
        assert!(w.woke(50));
        assert_eq!(
            w.arm(Some(100)),
            None,
            "the replaced entry at 100 is still coming"
        );
        assert!(w.woke(100));
        assert_eq!(w.arm(Some(200)), Some(200), "nothing pending after it came");
    }

    #[test]
    fn an_entry_replaced_and_not_taken_back_is_passed_over() {
        let mut w = Wake::default();
        assert_eq!(w.arm(Some(100)), Some(100));
        assert_eq!(w.arm(Some(50)), Some(50));
        assert!(w.woke(50));
        assert_eq!(w.arm(Some(70)), Some(70), "earlier than the entry at 100");
        assert!(w.woke(70));
        assert_eq!(w.arm(Some(300)), None, "the entry at 100 comes first");
        assert!(w.woke(100), "acted on: the next one");
        assert_eq!(w.arm(Some(300)), Some(300));
        assert!(!w.woke(250), "not the entry acted on");
        assert!(w.woke(300));
    }
}
