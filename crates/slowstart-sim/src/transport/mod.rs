//! TCP-like transport: packets, the sender, the receiver and what they hand the engine.

pub mod packet;
pub mod ranges;
pub mod receiver;
pub mod request;
pub mod sender;

use crate::engine::TimerKind;
use packet::Packet;

/// What an endpoint produced while handling one event: packets to send and timers to arm.
#[derive(Default)]
pub struct Io {
    pub packets: Vec<Packet>,
    pub wakeups: Vec<(u64, u32, TimerKind)>,
}

impl Io {
    pub fn send(&mut self, p: Packet) {
        self.packets.push(p);
    }

    pub fn wake(&mut self, at: u64, flow: u32, kind: TimerKind) {
        self.wakeups.push((at, flow, kind));
    }
}
