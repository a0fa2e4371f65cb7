//! What every connection of one flow is made from, in one place for each driver that opens a
//! flow's connections: the simulator's flows (both ends; a web flow without keep-alive opens
//! one per object), the UDP web server (a sending end per connection) and client (a receiving
//! end per connection), the UDP sender and receiver (issue #37).

use slowstart_cc::{CcError, CcSpec, CommonParams, Controller};

use crate::connection::{Connection, ReceiverEnd, SenderEnd};
use crate::receiver::Receiver;
use crate::settings::Settings;

/// A flow's connection, as each new one is made: its id, the settings of both ends (data and
/// request stream alike), its controller, stall threshold and size.
#[derive(Clone, Debug)]
pub struct ConnectionRecipe {
    pub flow: u32,
    pub settings: Settings,
    pub cc: CcSpec,
    pub common: CommonParams,
    /// [`crate::sender::Sender::set_stall_threshold`]; `None` leaves the sender's default
    /// (every window-blocked round trip is a stall).
    pub stall_threshold: Option<u64>,
    /// The receiver notes when this many bytes are in.
    pub size_bytes: Option<u64>,
}

impl ConnectionRecipe {
    /// The first connection's controller: a spec that cannot be built is the caller's error.
    pub fn controller(&self) -> Result<Controller, CcError> {
        Controller::new(&self.cc, &self.common)
    }

    /// A later connection's controller ([`Controller::rebuild`]: a user's constructor that
    /// fails now faults).
    pub fn rebuilt_controller(&self) -> Controller {
        Controller::rebuild(&self.cc, &self.common)
    }

    /// The sending end, run by `cc`.
    pub fn sender_end(&self, cc: Controller) -> SenderEnd {
        let s = &self.settings;
        let mut end = SenderEnd::new(self.flow, s, s, cc);
        if let Some(t) = self.stall_threshold {
            end.sender.set_stall_threshold(t);
        }
        end
    }

    /// The receiving end; its request stream keeps counting from `previous`'s, the end of
    /// the connection it replaces.
    pub fn receiver_end(&self, previous: Option<&ReceiverEnd>) -> ReceiverEnd {
        let s = &self.settings;
        let mut end = ReceiverEnd::new(self.flow, s, s, self.size_bytes);
        if let Some(previous) = previous {
            end.requests.continue_counts(&previous.requests);
        }
        end
    }

    /// Both ends: [`ConnectionRecipe::sender_end`] and [`ConnectionRecipe::receiver_end`].
    pub fn connection(&self, cc: Controller, previous: Option<&ReceiverEnd>) -> Connection {
        Connection {
            src: self.sender_end(cc),
            dst: self.receiver_end(previous),
        }
    }
}

/// What a flow's data receivers counted on its connections closed so far, for the flow's
/// totals with the current receiver's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EarlierReceivers {
    bytes: u64,
    dup_acks: u64,
    acks_sent: u64,
}

impl EarlierReceivers {
    /// The receiver of a connection just replaced.
    pub fn add(&mut self, closed: &Receiver) {
        self.bytes += closed.rcv_nxt();
        self.dup_acks += closed.dup_acks();
        self.acks_sent += closed.acks_sent();
    }

    /// Bytes received in order over every connection, `current` the last.
    pub fn bytes(&self, current: &Receiver) -> u64 {
        self.bytes + current.rcv_nxt()
    }

    /// Duplicate ACKs sent over every connection.
    pub fn dup_acks(&self, current: &Receiver) -> u64 {
        self.dup_acks + current.dup_acks()
    }

    /// ACKs sent over every connection.
    pub fn acks_sent(&self, current: &Receiver) -> u64 {
        self.acks_sent + current.acks_sent()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settings, MS};
    use crate::{pipe, Io};

    fn recipe(size: u64) -> ConnectionRecipe {
        ConnectionRecipe {
            flow: 3,
            settings: settings(),
            cc: CcSpec::named("reno"),
            common: CommonParams {
                mss: 1460,
                initcwnd: 10,
                abc: true,
                seed: 1,
                paced: false,
            },
            stall_threshold: Some(10_000),
            size_bytes: Some(size),
        }
    }

    /// `conn`'s sender sends `size` bytes over a 10 ms pipe from `start_ns`.
    fn transfer(conn: &mut Connection, size: u64, start_ns: u64) {
        conn.src.sender.write(size);
        conn.src.sender.close();
        pipe::transfer(conn, start_ns, 10 * MS, &[], &mut ());
    }

    #[test]
    fn a_flows_totals_count_every_connection_and_its_requests_carry_on() {
        let (size, r) = (20 * 1460, recipe(20 * 1460));
        let mut first = r.connection(r.controller().expect("a built-in"), None);
        let mut io = Io::default();
        first.dst.requests.write(0, 100, &mut io);
        transfer(&mut first, size, 0);
        let mut earlier = EarlierReceivers::default();
        earlier.add(&first.dst.receiver);
        let mut second = r.connection(r.rebuilt_controller(), Some(&first.dst));
        assert_eq!(second.dst.requests.packets_sent(), 1, "counted on");
        transfer(&mut second, size, 1_000 * MS);
        let (a, b) = (&first.dst.receiver, &second.dst.receiver);
        assert_eq!(earlier.bytes(b), 2 * size);
        assert_eq!(earlier.acks_sent(b), a.acks_sent() + b.acks_sent());
        assert_eq!(earlier.dup_acks(b), a.dup_acks() + b.dup_acks());
        assert!(b.completed_ns().is_some(), "the size is the recipe's");
    }
}
