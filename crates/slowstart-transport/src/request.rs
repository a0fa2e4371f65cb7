//! The request stream: application bytes from the data receiver (`dst`) back to the data sender
//! (`src`) — HTTP requests, BitTorrent handshake and 17-byte request messages.
//!
//! In TCP these are data on the reverse half of the same connection. Here they are
//! [`Kind::Request`] packets carrying `header_bytes` plus their payload, sent as soon as the
//! application writes them (at most one MSS per packet, bytes written together travel together).
//! Reliability is go-back-N: the receiving side accepts bytes in order only and acknowledges
//! cumulatively, on the next data packet it sends (`Packet::rwnd` of data) or, when no data
//! leaves at that instant, with a header-only [`Kind::RequestAck`]; the sending side keeps an
//! RFC 6298 timer (own RTT estimate, Karn's rule, doubling back-off) and on expiry resends
//! everything unacknowledged. There is no congestion window: requests are a few hundred bytes
//! per round trip.

use std::collections::VecDeque;

use slowstart_cc::RttEstimator;

use crate::packet::{Kind, Packet};
use crate::rto::RetransmissionTimer;
use crate::settings::Settings;
use crate::timer::Timer;
use crate::Io;

/// The `dst` side: writes requests and resends them until acknowledged.
pub struct RequestSender {
    flow: u32,
    mss: u64,
    header_bytes: u64,
    written: u64,
    una: u64,
    nxt: u64,
    /// (end byte, send time) of packets not yet acknowledged, oldest first.
    in_flight: VecDeque<(u64, u64)>,
    /// Bytes below this were resent: their ACKs give no RTT sample (Karn).
    resent_upto: u64,
    rtt: RttEstimator,
    rto: RetransmissionTimer,
    packets_sent: u64,
    timeouts: u64,
}

impl RequestSender {
    pub fn new(flow: u32, cfg: &Settings) -> Self {
        RequestSender {
            flow,
            mss: cfg.mss,
            header_bytes: cfg.header_bytes,
            written: 0,
            una: 0,
            nxt: 0,
            in_flight: VecDeque::new(),
            resent_upto: 0,
            rtt: RttEstimator::new(cfg.min_rto_ns, cfg.max_rto_ns, 1_000_000),
            rto: RetransmissionTimer::new(cfg.max_rto_ns),
            packets_sent: 0,
            timeouts: 0,
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Free the storage of the packets in flight once every one is acknowledged.
    pub fn release_empty_buffers(&mut self) {
        crate::ranges::release_if_empty(&mut self.in_flight);
    }

    /// Bytes acknowledged by the other side.
    pub fn acked(&self) -> u64 {
        self.una
    }

    /// Request packets sent, resent ones included.
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }

    /// Expiries of the retransmission timer.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }

    /// Keep counting from an earlier connection's stream (a flow that opened a new one).
    pub fn continue_counts(&mut self, earlier: &RequestSender) {
        self.packets_sent = earlier.packets_sent;
        self.timeouts = earlier.timeouts;
    }

    pub(crate) fn timer(&self) -> &Timer {
        self.rto.timer()
    }

    /// The retransmission timer, for the connection's wake-ups.
    pub(crate) fn timer_mut(&mut self) -> &mut Timer {
        self.rto.timer_mut()
    }

    fn emit(&mut self, now: u64, seq: u64, len: u64, io: &mut Io) {
        let mut p = Packet::control(
            self.flow,
            Kind::Request,
            (self.header_bytes + len) as u32,
            now,
        );
        p.seq = seq;
        p.len = len as u32;
        self.packets_sent += 1;
        io.send(p);
    }

    /// The application writes `bytes` more; they leave at once.
    pub fn write(&mut self, now: u64, bytes: u64, io: &mut Io) {
        if bytes == 0 {
            return;
        }
        self.written += bytes;
        while self.nxt < self.written {
            let len = (self.written - self.nxt).min(self.mss);
            self.emit(now, self.nxt, len, io);
            self.nxt += len;
            self.in_flight.push_back((self.nxt, now));
        }
        if !self.rto.is_armed() {
            self.rto.arm(now, &self.rtt);
        }
    }

    /// A cumulative ACK of the request stream arrived (on data or alone).
    pub fn on_ack(&mut self, now: u64, ack: u64) {
        if ack <= self.una {
            return;
        }
        let ack = ack.min(self.nxt);
        let mut sample = None;
        while let Some(&(end, sent)) = self.in_flight.front() {
            if end > ack {
                break;
            }
            self.in_flight.pop_front();
            if end > self.resent_upto {
                sample = Some(now - sent);
            }
        }
        if let Some(rtt) = sample {
            self.rtt.on_sample(rtt);
        }
        self.una = ack;
        self.rto.reset_backoff();
        self.rto.stop();
        if self.una < self.nxt {
            // RFC 6298 §5.3: restart the timer when new data is acknowledged.
            self.rto.arm(now, &self.rtt);
        }
    }

    /// The retransmission timer fired: resend everything unacknowledged (go-back-N).
    pub fn on_timer(&mut self, now: u64, io: &mut Io) {
        if self.una >= self.nxt {
            return;
        }
        self.timeouts += 1;
        self.rto.back_off();
        let mut seq = self.una;
        while seq < self.nxt {
            let len = (self.nxt - seq).min(self.mss);
            self.emit(now, seq, len, io);
            seq += len;
        }
        self.resent_upto = self.nxt;
        self.rto.arm(now, &self.rtt);
    }
}

/// The `src` side: in-order reassembly of the request stream.
pub struct RequestReceiver {
    flow: u32,
    header_bytes: u64,
    /// Next request byte expected; everything below went to the application.
    rcv_nxt: u64,
    acks_sent: u64,
}

impl RequestReceiver {
    pub fn new(flow: u32, cfg: &Settings) -> Self {
        RequestReceiver {
            flow,
            header_bytes: cfg.header_bytes,
            rcv_nxt: 0,
            acks_sent: 0,
        }
    }

    /// Next request byte expected: every byte below went to the application.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// Take a request packet; true if it advanced the in-order point. Bytes beyond a gap are
    /// dropped (go-back-N resends them).
    pub fn on_request(&mut self, pkt: &Packet) -> bool {
        let end = pkt.seq + pkt.len as u64;
        if pkt.seq <= self.rcv_nxt && end > self.rcv_nxt {
            self.rcv_nxt = end;
            true
        } else {
            false
        }
    }

    /// A header-only cumulative ACK, when no data packet leaves to carry it.
    pub fn send_ack(&mut self, now: u64, io: &mut Io) {
        let mut p = Packet::control(self.flow, Kind::RequestAck, self.header_bytes as u32, now);
        p.seq = self.rcv_nxt;
        self.acks_sent += 1;
        io.send(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settings, MS};

    #[test]
    fn writes_leave_at_once_in_mss_packets_and_resend_after_a_timeout() {
        let cfg = settings();
        let mut tx = RequestSender::new(0, &cfg);
        let mut rx = RequestReceiver::new(0, &cfg);
        let mut io = Io::default();
        tx.write(0, 17 * 2, &mut io);
        tx.write(0, 2000, &mut io);
        let sizes: Vec<u32> = io.packets.iter().map(|p| p.len).collect();
        assert_eq!(sizes, vec![34, 1460, 540]);
        assert_eq!(io.packets[0].wire_bytes, 40 + 34);
        // The first packet is lost; the others arrive beyond the gap and are dropped.
        assert!(!rx.on_request(&io.packets[1]));
        assert_eq!(rx.rcv_nxt(), 0);
        // Timer fires (initial RTO 1 s): everything from the gap is resent.
        let deadline = tx.timer_mut().deadline().unwrap();
        assert_eq!(deadline, 1_000 * MS);
        io.packets.clear();
        assert!(tx.timer_mut().fire(deadline));
        tx.on_timer(deadline, &mut io);
        let sizes: Vec<u32> = io.packets.iter().map(|p| p.len).collect();
        assert_eq!(sizes, vec![1460, 574], "resent from the gap, packed anew");
        assert_eq!(tx.timeouts, 1);
        for p in &io.packets {
            assert!(rx.on_request(p));
        }
        assert_eq!(rx.rcv_nxt(), 2034);
        tx.on_ack(deadline + 50 * MS, rx.rcv_nxt());
        assert_eq!(tx.acked(), 2034);
        assert_eq!(tx.timer_mut().deadline(), None);
    }
}
