//! What a connection did, told as it happens: the [`Observer`] a driver holds beside its
//! connection, as s2n-quic's event `Subscriber` and smoltcp's `phy::Tracer` are told of each
//! event with its time. Traces, summaries and qlog files are all made from these calls, so every
//! driver (the simulator, a UDP endpoint) measures a connection the same way.
//!
//! The driver reports each sender event after handing it to the connection, through
//! [`SenderEnd::notify`](crate::SenderEnd::notify), which tells the observer, in this order:
//! the segments found lost since the last report ([`Observer::on_packet_lost`], when the
//! sender logs them), a change of the controller's phase since the last report, once
//! ([`Observer::on_phase_change`]), and the event itself ([`Observer::on_sender_event`]).
//! Packets sent and received go to the observer straight from the driver, where it has them
//! ([`Observer::on_packet_sent`], [`Observer::on_packet_received`]).
//!
//! Observers compose: `()` hears nothing, `Option<O>` is `O` when present, `(A, B)` tells `A`
//! then `B`; all of them are static calls, so nothing is paid per ACK for what is not
//! listening.

use slowstart_cc::Phase;

use crate::packet::Packet;
use crate::sender::{AckOutcome, Loss, Sender};

/// A sender event a driver reports, after the sender handled it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderEvent {
    /// The connection started: its SYN left, or its first data without a handshake.
    Start,
    /// The SYN-ACK arrived.
    SynAck,
    /// An ACK arrived.
    Ack(AckOutcome),
    /// The application's requests arrived and were answered.
    Requests,
    /// The retransmission timer fired (RFC 6298 §5.4-5.7).
    Rto,
}

/// Told what a flow's sender did, each call with the time of the event (`now`, ns, the
/// driver's clock). Every method but [`Observer::on_sender_event`] defaults to nothing.
pub trait Observer {
    /// The sender handled `event` at `now`; `sender` is as the event left it.
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, sender: &Sender);

    /// The controller's phase is `to`, where at the last report it was `from` (told once per
    /// change, before the event that showed it).
    fn on_phase_change(&mut self, _now: u64, _from: Phase, _to: Phase) {}

    /// The sender found `loss` lost (only while it logs losses, [`Sender::log_losses`]); told
    /// at the next reported event, in the order found.
    fn on_packet_lost(&mut self, _now: u64, _loss: &Loss) {}

    /// The sender's end sent `packet` at `now`.
    fn on_packet_sent(&mut self, _now: u64, _packet: &Packet) {}

    /// `packet` arrived for the sender's end at `now`, before it handled it.
    fn on_packet_received(&mut self, _now: u64, _packet: &Packet) {}

    /// The connection is closed and replaced by a new one (a web flow without keep-alive):
    /// what `sender` counted is final.
    fn on_replaced(&mut self, _now: u64, _sender: &Sender) {}
}

/// Hears nothing.
impl Observer for () {
    #[inline]
    fn on_sender_event(&mut self, _: u64, _: SenderEvent, _: &Sender) {}
}

impl<O: Observer + ?Sized> Observer for &mut O {
    #[inline]
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, sender: &Sender) {
        (**self).on_sender_event(now, event, sender)
    }
    #[inline]
    fn on_phase_change(&mut self, now: u64, from: Phase, to: Phase) {
        (**self).on_phase_change(now, from, to)
    }
    #[inline]
    fn on_packet_lost(&mut self, now: u64, loss: &Loss) {
        (**self).on_packet_lost(now, loss)
    }
    #[inline]
    fn on_packet_sent(&mut self, now: u64, packet: &Packet) {
        (**self).on_packet_sent(now, packet)
    }
    #[inline]
    fn on_packet_received(&mut self, now: u64, packet: &Packet) {
        (**self).on_packet_received(now, packet)
    }
    #[inline]
    fn on_replaced(&mut self, now: u64, sender: &Sender) {
        (**self).on_replaced(now, sender)
    }
}

/// `O` when present (a qlog asked for), nothing otherwise.
impl<O: Observer> Observer for Option<O> {
    #[inline]
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, sender: &Sender) {
        if let Some(o) = self {
            o.on_sender_event(now, event, sender)
        }
    }
    #[inline]
    fn on_phase_change(&mut self, now: u64, from: Phase, to: Phase) {
        if let Some(o) = self {
            o.on_phase_change(now, from, to)
        }
    }
    #[inline]
    fn on_packet_lost(&mut self, now: u64, loss: &Loss) {
        if let Some(o) = self {
            o.on_packet_lost(now, loss)
        }
    }
    #[inline]
    fn on_packet_sent(&mut self, now: u64, packet: &Packet) {
        if let Some(o) = self {
            o.on_packet_sent(now, packet)
        }
    }
    #[inline]
    fn on_packet_received(&mut self, now: u64, packet: &Packet) {
        if let Some(o) = self {
            o.on_packet_received(now, packet)
        }
    }
    #[inline]
    fn on_replaced(&mut self, now: u64, sender: &Sender) {
        if let Some(o) = self {
            o.on_replaced(now, sender)
        }
    }
}

/// `A`, then `B`.
impl<A: Observer, B: Observer> Observer for (A, B) {
    #[inline]
    fn on_sender_event(&mut self, now: u64, event: SenderEvent, sender: &Sender) {
        self.0.on_sender_event(now, event, sender);
        self.1.on_sender_event(now, event, sender);
    }
    #[inline]
    fn on_phase_change(&mut self, now: u64, from: Phase, to: Phase) {
        self.0.on_phase_change(now, from, to);
        self.1.on_phase_change(now, from, to);
    }
    #[inline]
    fn on_packet_lost(&mut self, now: u64, loss: &Loss) {
        self.0.on_packet_lost(now, loss);
        self.1.on_packet_lost(now, loss);
    }
    #[inline]
    fn on_packet_sent(&mut self, now: u64, packet: &Packet) {
        self.0.on_packet_sent(now, packet);
        self.1.on_packet_sent(now, packet);
    }
    #[inline]
    fn on_packet_received(&mut self, now: u64, packet: &Packet) {
        self.0.on_packet_received(now, packet);
        self.1.on_packet_received(now, packet);
    }
    #[inline]
    fn on_replaced(&mut self, now: u64, sender: &Sender) {
        self.0.on_replaced(now, sender);
        self.1.on_replaced(now, sender);
    }
}
