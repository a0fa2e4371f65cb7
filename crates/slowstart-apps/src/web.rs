//! HTTP/1.1-like exchanges (initcwnd seed): the client at `dst` sends a request of
//! `request_bytes`, the server at `src` answers with the object, and the client asks for the
//! next object once the last byte of the previous one arrived (no pipelining): on the same
//! connection with keep-alive, else on a new connection (new handshake, fresh windows), as
//! HTTP/1.0 does. The server has no think time.
//!
//! Two halves, each seeing only its own end, sans-IO as the transport is: [`WebClient`] (the
//! receiver and the request stream at `dst`) and [`WebServer`] (the data sender at `src`). The
//! engine drives both through [`WebApp`]; the UDP endpoints (crates/slowstart-udp) drive one
//! each.
//!
//! The connection opens as the transport's handshake does (one RTT); the client sends its first
//! request the moment the handshake completes, so the first byte arrives two round trips after
//! the flow starts at best, the seed's "two round trips".
//!
//! Per object: `ttfb_s` from when the object was wanted (the flow start for the first, so the
//! handshake counts; the request for later ones) to its first byte at the client;
//! `first_to_last_s`; `total_s` from the same origin to the last byte; `stalls`, the round trips
//! that ended while the server waited on cwnd or the client's window with response bytes unsent
//! and less than a path BDP in flight (see `Sender::set_stall_threshold`), counted by the
//! server.

use serde::Serialize;
use slowstart_transport::receiver::Receiver;
use slowstart_transport::request::RequestSender;
use slowstart_transport::sender::Sender;
use slowstart_transport::Io;

use crate::{seconds, Ctx};
use slowstart_config::WebConfig;

#[derive(Clone, Copy, Debug, Default)]
struct ObjectTimes {
    bytes: u64,
    wanted_ns: u64,
    first_ns: u64,
    last_ns: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ObjectSummary {
    pub bytes: u64,
    pub ttfb_s: f64,
    pub first_to_last_s: f64,
    pub total_s: f64,
    /// Counted by the server; `None` where the client reports alone (a UDP client, whose
    /// server reports them).
    pub stalls: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WebSummary {
    pub request_bytes: u64,
    pub objects_requested: u64,
    pub objects_completed: u64,
    pub request_packets: u64,
    pub request_timeouts: u64,
    pub objects: Vec<ObjectSummary>,
}

/// Object `k`'s size.
fn size_of(sizes: &[u64], k: u64) -> u64 {
    sizes[(k % sizes.len() as u64) as usize]
}

/// The client's end of its connection: its data receiver (a delayed ACK it owes leaves with a
/// request) and its request stream.
pub struct ClientEnd<'a> {
    pub now: u64,
    pub receiver: &'a mut Receiver,
    pub requests: &'a mut RequestSender,
    pub io: &'a mut Io,
}

impl ClientEnd<'_> {
    /// Write request bytes; a delayed ACK owed leaves with them.
    pub fn request(&mut self, bytes: u64) {
        self.receiver.flush_ack(self.now, self.io);
        self.requests.write(self.now, bytes, self.io);
    }
}

/// What the client did with bytes delivered in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivered {
    /// The object in progress is not complete yet.
    Partial,
    /// An object completed; the next (if any) was requested on the same connection.
    Object,
    /// An object completed and the next one needs a new connection (no keep-alive): the
    /// driver opens one, with fresh streams from byte 0, and calls
    /// [`WebClient::on_established`] when it is.
    ObjectReconnect,
}

/// The client (`dst`): requests objects one at a time and times them.
pub struct WebClient {
    request_bytes: u64,
    sizes: Vec<u64>,
    objects: u64,
    keep_alive: bool,
    start_ns: u64,
    requested: u64,
    /// Data stream offsets of the object in progress (on the current connection).
    object_start: u64,
    object_end: u64,
    wanted_ns: u64,
    first_ns: Option<u64>,
    results: Vec<ObjectTimes>,
}

impl WebClient {
    pub fn new(cfg: &WebConfig, start_ns: u64) -> Self {
        let objects = cfg.object_count();
        WebClient {
            request_bytes: cfg.request_bytes,
            sizes: cfg.response_bytes.clone(),
            objects,
            keep_alive: cfg.keep_alive,
            start_ns,
            requested: 0,
            object_start: 0,
            object_end: 0,
            wanted_ns: start_ns,
            first_ns: None,
            results: Vec::with_capacity(objects.min(1 << 16) as usize),
        }
    }

    /// Data stream bytes asked for so far on the current connection: a server sends no byte
    /// past it.
    pub fn requested_end(&self) -> u64 {
        self.object_end
    }

    fn request_next(&mut self, end: &mut ClientEnd) {
        let k = self.requested;
        self.object_start = self.object_end;
        self.object_end += size_of(&self.sizes, k);
        self.first_ns = None;
        self.requested += 1;
        end.request(self.request_bytes);
    }

    /// The connection is open: ask for the next object.
    pub fn on_established(&mut self, end: &mut ClientEnd) {
        if self.requested == 0 {
            // The first object is wanted from the flow start: its times include the handshake.
            self.wanted_ns = self.start_ns;
        }
        self.request_next(end);
    }

    /// The data stream is in order up to byte `upto`: record the object's first and last
    /// byte; ask for the next one.
    pub fn on_delivered(&mut self, upto: u64, end: &mut ClientEnd) -> Delivered {
        let now = end.now;
        if self.results.len() as u64 == self.requested {
            return Delivered::Partial;
        }
        if self.first_ns.is_none() && upto > self.object_start {
            self.first_ns = Some(now);
        }
        if upto < self.object_end {
            return Delivered::Partial;
        }
        self.results.push(ObjectTimes {
            bytes: self.object_end - self.object_start,
            wanted_ns: self.wanted_ns,
            first_ns: self.first_ns.unwrap_or(now),
            last_ns: now,
        });
        if self.requested == self.objects {
            return Delivered::Object;
        }
        self.wanted_ns = now;
        if self.keep_alive {
            self.request_next(end);
            Delivered::Object
        } else {
            // The server closes; the next object's request waits for a new connection, whose
            // streams start again from byte 0.
            self.object_end = 0;
            Delivered::ObjectReconnect
        }
    }

    pub fn finished(&self) -> bool {
        self.results.len() as u64 == self.objects
    }

    /// When the first object's first byte and the last completed object's last byte arrived.
    pub fn first_and_last_byte_ns(&self) -> Option<(u64, u64)> {
        Some((self.results.first()?.first_ns, self.results.last()?.last_ns))
    }

    /// The summary, with the server's per-object stall counts when it has them.
    pub fn summary(&self, stalls: Option<&[u64]>, requests: &RequestSender) -> WebSummary {
        WebSummary {
            request_bytes: self.request_bytes,
            objects_requested: self.requested,
            objects_completed: self.results.len() as u64,
            request_packets: requests.packets_sent(),
            request_timeouts: requests.timeouts(),
            objects: self
                .results
                .iter()
                .enumerate()
                .map(|(k, r)| ObjectSummary {
                    bytes: r.bytes,
                    ttfb_s: seconds(r.first_ns - r.wanted_ns),
                    first_to_last_s: seconds(r.last_ns - r.first_ns),
                    total_s: seconds(r.last_ns - r.wanted_ns),
                    stalls: stalls.map(|s| s.get(k).copied().unwrap_or(0)),
                })
                .collect(),
        }
    }
}

/// The server (`src`): answers each complete request with its object at once, and counts
/// each object's stalls.
pub struct WebServer {
    request_bytes: u64,
    sizes: Vec<u64>,
    objects: u64,
    answered: u64,
    /// Objects answered on earlier connections.
    answered_before: u64,
    /// Data stream bytes written on the current connection.
    written: u64,
    /// Data stream end of each answered object whose stalls are not counted yet (current
    /// connection), oldest first.
    open: std::collections::VecDeque<u64>,
    stalls_at_answer: u64,
    stalls: Vec<u64>,
}

impl WebServer {
    pub fn new(cfg: &WebConfig) -> Self {
        let objects = cfg.object_count();
        WebServer {
            request_bytes: cfg.request_bytes,
            sizes: cfg.response_bytes.clone(),
            objects,
            answered: 0,
            answered_before: 0,
            written: 0,
            open: Default::default(),
            stalls_at_answer: 0,
            stalls: Vec::with_capacity(objects.min(1 << 16) as usize),
        }
    }

    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// Every object answered and its stalls counted.
    pub fn finished(&self) -> bool {
        self.stalls.len() as u64 == self.objects
    }

    /// Stall counts per object, in order.
    pub fn stalls(&self) -> &[u64] {
        &self.stalls
    }

    /// The request stream is in order up to byte `upto`: answer every complete request.
    pub fn on_requests(&mut self, upto: u64, sender: &mut Sender) {
        while (self.answered - self.answered_before + 1) * self.request_bytes <= upto
            && self.answered < self.objects
        {
            // An earlier object still open has delivered all it will on this connection.
            while !self.open.is_empty() {
                self.object_done(sender.stats().stalls);
            }
            let size = size_of(&self.sizes, self.answered);
            sender.write(size);
            self.written += size;
            self.open.push_back(self.written);
            self.stalls_at_answer = sender.stats().stalls;
            self.answered += 1;
        }
    }

    /// The oldest open object is complete (at the client; or acknowledged, for a server that
    /// cannot see the client): its stalls are those counted since it was answered.
    pub fn object_done(&mut self, sender_stalls: u64) {
        if self.open.pop_front().is_some() {
            self.stalls.push(sender_stalls - self.stalls_at_answer);
        }
    }

    /// The sender saw the data stream acknowledged up to `acked`: close the objects it covers.
    pub fn on_acked(&mut self, acked: u64, sender_stalls: u64) {
        while self.open.front().is_some_and(|&end| end <= acked) {
            self.object_done(sender_stalls);
        }
    }

    /// The connection closes (no keep-alive); requests and data on the next one count from 0.
    pub fn on_new_connection(&mut self, sender_stalls: u64) {
        while !self.open.is_empty() {
            self.object_done(sender_stalls);
        }
        self.answered_before = self.answered;
        self.written = 0;
    }
}

/// Both halves in one value, as the engine holds both ends of a flow.
pub struct WebApp {
    pub client: WebClient,
    pub server: WebServer,
}

impl WebApp {
    pub fn new(cfg: &WebConfig, start_ns: u64) -> Self {
        WebApp {
            client: WebClient::new(cfg, start_ns),
            server: WebServer::new(cfg),
        }
    }

    fn client_end<'a>(ctx: &'a mut Ctx) -> ClientEnd<'a> {
        ClientEnd {
            now: ctx.now,
            receiver: ctx.receiver,
            requests: ctx.requests,
            io: ctx.io,
        }
    }

    pub fn on_established(&mut self, ctx: &mut Ctx) {
        self.client.on_established(&mut Self::client_end(ctx));
    }

    pub fn on_requests(&mut self, upto: u64, ctx: &mut Ctx) {
        self.server.on_requests(upto, ctx.sender);
    }

    pub fn on_delivered(&mut self, upto: u64, ctx: &mut Ctx) {
        let done = self.client.on_delivered(upto, &mut Self::client_end(ctx));
        if done != Delivered::Partial {
            // The simulation sees both ends: the object's stalls are counted until its last
            // byte reaches the client.
            self.server.object_done(ctx.sender.stats().stalls);
        }
        if done == Delivered::ObjectReconnect {
            self.server.on_new_connection(ctx.sender.stats().stalls);
            ctx.reconnect = true;
        }
    }

    pub fn finished(&self) -> bool {
        self.client.finished()
    }

    pub fn summary(&self, requests: &RequestSender) -> WebSummary {
        self.client.summary(Some(self.server.stalls()), requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_cc::Controller;
    use slowstart_config::testing::flow;

    fn cfg(keep_alive: bool) -> WebConfig {
        WebConfig {
            request_bytes: 100,
            response_bytes: vec![1_000, 2_000],
            objects: Some(3),
            keep_alive,
        }
    }

    fn sender() -> Sender {
        let f = flow("reno", None);
        let common = f.common_params(1);
        Sender::new(0, &f.transport(), Controller::new(&f.cc, &common).unwrap())
    }

    #[test]
    fn the_server_answers_whole_requests_and_closes_objects_by_acknowledgement() {
        let mut server = WebServer::new(&cfg(true));
        let mut s = sender();
        server.on_requests(99, &mut s);
        assert_eq!(server.answered(), 0, "a partial request waits");
        server.on_requests(100, &mut s);
        assert_eq!((server.answered(), s.unsent_bytes()), (1, 1_000));
        server.on_acked(999, 2);
        assert!(
            server.stalls().is_empty(),
            "the object's last byte is not acknowledged"
        );
        server.on_acked(1_000, 2);
        assert_eq!(server.stalls(), [2]);
        // The next request arrives before the ACK of object 1's last byte: answering it
        // closes object 1 first.
        server.on_requests(200, &mut s);
        server.on_requests(300, &mut s);
        assert_eq!(server.answered(), 3);
        assert_eq!(server.stalls(), [2, 0]);
        server.on_acked(1_000 + 2_000 + 1_000, 7);
        assert_eq!(server.stalls(), [2, 0, 7]);
        assert!(server.finished());
        server.on_requests(400, &mut s);
        assert_eq!(server.answered(), 3, "no object past the last");
    }

    #[test]
    fn without_keep_alive_each_connection_counts_from_zero() {
        let mut server = WebServer::new(&cfg(false));
        let mut s = sender();
        server.on_requests(100, &mut s);
        server.on_new_connection(4);
        assert_eq!(
            server.stalls(),
            [4],
            "closing the connection closes its object"
        );
        let mut s = sender();
        server.on_requests(100, &mut s);
        assert_eq!((server.answered(), s.unsent_bytes()), (2, 2_000));
        server.on_acked(2_000, 0);
        assert_eq!(server.stalls(), [4, 0]);
    }

    #[test]
    fn the_client_asks_for_one_object_at_a_time() {
        let f = flow("reno", None);
        let settings = f.transport();
        for keep_alive in [true, false] {
            let mut client = WebClient::new(&cfg(keep_alive), 5);
            let mut r = Receiver::new(0, &settings, None);
            let mut requests = RequestSender::new(0, &settings);
            let mut io = Io::default();
            macro_rules! end {
                ($now:expr) => {
                    &mut ClientEnd {
                        now: $now,
                        receiver: &mut r,
                        requests: &mut requests,
                        io: &mut io,
                    }
                };
            }
            client.on_established(end!(10));
            assert_eq!(client.requested_end(), 1_000);
            assert_eq!(client.on_delivered(400, end!(20)), Delivered::Partial);
            let next = client.on_delivered(1_000, end!(30));
            if keep_alive {
                assert_eq!(next, Delivered::Object);
                assert_eq!(client.requested_end(), 3_000, "object 2 on the same stream");
            } else {
                assert_eq!(next, Delivered::ObjectReconnect);
                assert_eq!(
                    client.requested_end(),
                    0,
                    "nothing asked on a new connection yet"
                );
                client.on_established(end!(40));
                assert_eq!(client.requested_end(), 2_000);
            }
            assert_eq!(client.first_and_last_byte_ns(), Some((20, 30)));
            let s = client.summary(None, &requests);
            assert_eq!(s.objects_requested, 2);
            assert_eq!(s.objects[0].bytes, 1_000);
            // Wanted at the flow start (5): first byte 15 ns later, last 25.
            assert_eq!((s.objects[0].ttfb_s, s.objects[0].total_s), (15e-9, 25e-9));
            assert_eq!(s.objects[0].stalls, None);
            assert_eq!(
                client.summary(Some(&[3]), &requests).objects[0].stalls,
                Some(3)
            );
        }
    }
}
