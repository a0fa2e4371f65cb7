//! The simulator's packets as real IPv4/TCP headers, for captures: each flow is one TCP
//! connection from its sender (the client, which sends the SYN) to its receiver, with the
//! options Linux puts on the handshake (MSS, SACK-permitted, timestamps, window scale; RFC 9293
//! §3.2, RFC 2018, RFC 7323), sequence and acknowledgment numbers from random-looking initial
//! sequence numbers, SACK blocks and timestamps. Only the headers are captured; the length on
//! the wire is the packet's, and the TCP checksum is that of an all-zero payload of that length.

use etherparse::{IpNumber, Ipv4Header, TcpHeader, TcpOptionElement};
use slowstart_transport::packet::{Kind, Packet, CE, CWR, ECE, ECT, ECT1};

use slowstart_config::{substream_seed, SeedStream};

/// Zero payload for checksums, as large as an IPv4 packet's payload can be.
static ZEROS: [u8; 65_535] = [0; 65_535];

/// TCP timestamps tick once per millisecond, as Linux's (RFC 7323 §5.4 allows 1 ms to 1 s).
const TS_TICK_NS: u64 = 1_000_000;
/// The data receiver's port, and the first of the senders' (one per flow).
const SERVER_PORT: u16 = 5001;
const CLIENT_PORT_BASE: u16 = 32_768;
/// The window the data sender advertises for the requests it receives (not modelled: a
/// 64 KiB socket buffer).
const CLIENT_WINDOW: u64 = 1 << 16;

/// One flow seen as a TCP connection.
pub struct TcpView {
    client: [u8; 4],
    server: [u8; 4],
    flow: u32,
    mss: u16,
    /// Window scale both ends announce (RFC 7323 §2.3): the least that fits the receive
    /// window's ceiling in 16 bits, 14 when it has none.
    wscale: u8,
    ecn: bool,
    conn: u8,
    isn_client: u32,
    isn_server: u32,
    /// The latest timestamp value each end received, to echo (RFC 7323 §4.3).
    client_echo: u32,
    server_echo: u32,
    /// Bytes each end sent (data from the client, requests from the server).
    client_sent: u64,
    server_sent: u64,
    /// The server's latest cumulative ACK and window, which its requests carry too.
    server_ack: u64,
    server_window: u16,
}

/// IPv4 address of node `n`: 10.0.0.0/8, node 0 at 10.0.0.1.
pub fn node_address(n: u32) -> [u8; 4] {
    let a = n + 1;
    [10, (a >> 16) as u8, (a >> 8) as u8, a as u8]
}

impl TcpView {
    pub fn new(flow: u32, src: u32, dst: u32, mss: u64, max_rwnd: Option<u64>, ecn: bool) -> Self {
        let ceiling = max_rwnd.unwrap_or(u64::MAX);
        let mut wscale = 0;
        while wscale < 14 && ceiling >> wscale > u16::MAX as u64 {
            wscale += 1;
        }
        let mut view = TcpView {
            client: node_address(src),
            server: node_address(dst),
            flow,
            mss: mss.min(u16::MAX as u64) as u16,
            wscale,
            ecn,
            conn: u8::MAX,
            isn_client: 0,
            isn_server: 0,
            client_echo: 0,
            server_echo: 0,
            client_sent: 0,
            server_sent: 0,
            server_ack: 0,
            server_window: 1,
        };
        view.open(0);
        view
    }

    /// A new connection of the flow (web flows without keep-alive): new sequence numbers.
    fn open(&mut self, conn: u8) {
        (self.isn_client, self.isn_server) = isns(self.flow, conn);
        self.conn = conn;
        self.client_echo = 0;
        self.server_echo = 0;
        self.client_sent = 0;
        self.server_sent = 0;
        self.server_ack = 0;
        self.server_window = 1;
    }

    fn client_port(&self) -> u16 {
        CLIENT_PORT_BASE + (self.flow % 28_000) as u16
    }

    /// The window field of a segment advertising `bytes`: scaled, rounded up so it never reads
    /// zero, at most 65535 (RFC 7323 §2.3).
    fn window_field(&self, bytes: u64) -> u16 {
        bytes.div_ceil(1 << self.wscale).clamp(1, u16::MAX as u64) as u16
    }

    /// The end that receives `p` got it: remember its timestamp to echo.
    pub fn on_delivered(&mut self, p: &Packet) {
        if p.conn != self.conn {
            return;
        }
        let tsval = ts(own_time(p));
        if p.to_receiver() {
            self.server_echo = tsval;
        } else {
            self.client_echo = tsval;
        }
    }

    /// Write `p`'s IPv4 and TCP headers to `out`; returns the packet's length on the wire.
    pub fn headers(&mut self, p: &Packet, out: &mut Vec<u8>) -> u32 {
        // Connections are numbered in order (wrapping): a newer one starts afresh; a packet of
        // an older one still in the network keeps its own sequence numbers.
        let current = (self.isn_client, self.isn_server);
        let older = p.conn != self.conn && p.conn.wrapping_sub(self.conn) >= 128;
        if p.conn != self.conn && !older {
            self.open(p.conn);
        } else if older {
            (self.isn_client, self.isn_server) = isns(self.flow, p.conn);
        }
        let len = self.encode(p, out);
        if older {
            (self.isn_client, self.isn_server) = current;
        }
        len
    }

    fn encode(&mut self, p: &Packet, out: &mut Vec<u8>) -> u32 {
        let from_client = p.to_receiver();
        let (src, dst, sport, dport) = if from_client {
            (self.client, self.server, self.client_port(), SERVER_PORT)
        } else {
            (self.server, self.client, SERVER_PORT, self.client_port())
        };
        let client_seq = |v: &Self, b: u64| v.isn_client.wrapping_add(1).wrapping_add(b as u32);
        let server_seq = |v: &Self, b: u64| v.isn_server.wrapping_add(1).wrapping_add(b as u32);
        let mut tcp = TcpHeader::new(sport, dport, 0, self.window_field(CLIENT_WINDOW));
        let tsval = ts(own_time(p));
        let mut payload = 0u32;
        let mut options = Vec::with_capacity(6);
        match p.kind {
            Kind::Syn | Kind::SynAck => {
                let syn = p.kind == Kind::Syn;
                tcp.syn = true;
                tcp.ack = !syn;
                if syn {
                    tcp.sequence_number = self.isn_client;
                    tcp.window_size = CLIENT_WINDOW.min(u16::MAX as u64) as u16;
                    // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR, its SYN-ACK ECE.
                    tcp.ece = self.ecn;
                    tcp.cwr = self.ecn;
                } else {
                    tcp.sequence_number = self.isn_server;
                    tcp.acknowledgment_number = client_seq(self, 0);
                    tcp.ece = self.ecn;
                    // RFC 7323 §2.2: the window of a SYN is never scaled.
                    tcp.window_size = p.rwnd.min(u16::MAX as u64) as u16;
                    self.server_window = self.window_field(p.rwnd);
                }
                let echo = if syn { 0 } else { self.server_echo };
                options.extend([
                    TcpOptionElement::MaximumSegmentSize(self.mss),
                    TcpOptionElement::SelectiveAcknowledgementPermitted,
                    TcpOptionElement::Timestamp(tsval, echo),
                    TcpOptionElement::Noop,
                    TcpOptionElement::WindowScale(self.wscale),
                ]);
            }
            Kind::Data | Kind::RequestAck => {
                let end = p.seq + p.len as u64;
                tcp.ack = true;
                if p.kind == Kind::Data {
                    payload = p.len;
                    tcp.sequence_number = client_seq(self, p.seq);
                    // Data carries the request stream's cumulative ACK in `rwnd`.
                    tcp.acknowledgment_number = server_seq(self, p.rwnd);
                    tcp.cwr = p.has(CWR);
                    self.client_sent = self.client_sent.max(end);
                } else {
                    tcp.sequence_number = client_seq(self, self.client_sent);
                    tcp.acknowledgment_number = server_seq(self, p.seq);
                }
                options.extend([
                    TcpOptionElement::Noop,
                    TcpOptionElement::Noop,
                    TcpOptionElement::Timestamp(tsval, self.client_echo),
                ]);
            }
            Kind::Ack | Kind::Request => {
                tcp.ack = true;
                if p.kind == Kind::Ack {
                    self.server_ack = p.seq;
                    tcp.sequence_number = server_seq(self, self.server_sent);
                    self.server_window = self.window_field(p.rwnd);
                    tcp.ece = p.has(ECE);
                } else {
                    payload = p.len;
                    tcp.sequence_number = server_seq(self, p.seq);
                    self.server_sent = self.server_sent.max(p.seq + p.len as u64);
                }
                tcp.acknowledgment_number = client_seq(self, self.server_ack);
                tcp.window_size = self.server_window;
                // An ACK echoes the timestamp of the data that triggered it (`sent_ns`).
                let echo = if p.kind == Kind::Ack {
                    ts(p.sent_ns)
                } else {
                    self.server_echo
                };
                options.extend([
                    TcpOptionElement::Noop,
                    TcpOptionElement::Noop,
                    TcpOptionElement::Timestamp(tsval, echo),
                ]);
                if p.sack_count > 0 {
                    let block = |i: usize| {
                        let (s, e) = p.sack_block(i);
                        (client_seq(self, s), client_seq(self, e))
                    };
                    let mut rest = [None; 3];
                    for (i, r) in rest.iter_mut().enumerate().take(p.sack_count as usize - 1) {
                        *r = Some(block(i + 1));
                    }
                    options.extend([
                        TcpOptionElement::Noop,
                        TcpOptionElement::Noop,
                        TcpOptionElement::SelectiveAcknowledgement(block(0), rest),
                    ]);
                }
            }
        }
        tcp.set_options(&options)
            .expect("at most 40 bytes of options: timestamps and 3 SACK blocks");
        let tcp_len = tcp.header_len() as u32 + payload;
        let mut ip = Ipv4Header::new(tcp_len as u16, 64, IpNumber::TCP, src, dst)
            .expect("payload within one IPv4 packet");
        // RFC 3168 §5: ECT(0) is 10, ECT(1) 01, CE 11.
        ip.ecn = if p.has(CE) {
            etherparse::IpEcn::CongestionExperienced
        } else if p.has(ECT1) {
            etherparse::IpEcn::Ect1
        } else if p.has(ECT) {
            etherparse::IpEcn::Ect0
        } else {
            etherparse::IpEcn::NotEct
        };
        ip.header_checksum = ip.calc_header_checksum();
        tcp.checksum = tcp
            .calc_checksum_ipv4(&ip, &ZEROS[..payload as usize])
            .expect("payload within one IPv4 packet");
        ip.write(out).expect("writing to a Vec");
        tcp.write(out).expect("writing to a Vec");
        ip.total_len as u32
    }
}

/// Initial sequence numbers of connection `conn` of `flow` (client, server): fixed, but spread
/// over the sequence space as RFC 6528's would be.
fn isns(flow: u32, conn: u8) -> (u32, u32) {
    let isn = substream_seed(flow as u64, SeedStream::CaptureIsn, conn as u64);
    (isn as u32, (isn >> 32) as u32)
}

/// When the end that sent `p` sent it: data, SYNs and requests carry it in `sent_ns`; an ACK
/// carries the echo of its data's instead, and left when that data arrived (`sent_ns` +
/// `owd_ns`), or later for a delayed ACK.
fn own_time(p: &Packet) -> u64 {
    if p.kind == Kind::Ack {
        p.sent_ns + p.owd_ns
    } else {
        p.sent_ns
    }
}

fn ts(ns: u64) -> u32 {
    (ns / TS_TICK_NS) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{Ipv4HeaderSlice, TcpHeaderSlice, TcpOptionElement as O};

    const MS: u64 = 1_000_000;

    fn parse(view: &mut TcpView, p: &Packet) -> (Ipv4Header, TcpHeader, u32) {
        let mut buf = Vec::new();
        let len = view.headers(p, &mut buf);
        let ip = Ipv4HeaderSlice::from_slice(&buf).unwrap().to_header();
        let tcp = TcpHeaderSlice::from_slice(&buf[ip.header_len()..])
            .unwrap()
            .to_header();
        assert_eq!(
            buf.len(),
            ip.header_len() + tcp.header_len(),
            "headers only"
        );
        assert_eq!(ip.header_checksum, ip.calc_header_checksum());
        (ip, tcp, len)
    }

    fn options(tcp: &TcpHeader) -> Vec<O> {
        tcp.options_iterator().map(|o| o.unwrap()).collect()
    }

    #[test]
    fn a_flow_reads_as_one_tcp_connection() {
        let mut v = TcpView::new(0, 0, 2, 1460, Some(6 << 20), false);
        assert_eq!(v.wscale, 7, "6 MiB needs 7 bits of scale");
        let syn = Packet::control(0, Kind::Syn, 40, 0);
        let (ip, tcp, len) = parse(&mut v, &syn);
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 1], [10, 0, 0, 3]));
        assert!(tcp.syn && !tcp.ack);
        assert_eq!(
            options(&tcp),
            [
                O::MaximumSegmentSize(1460),
                O::SelectiveAcknowledgementPermitted,
                O::Timestamp(0, 0),
                O::Noop,
                O::WindowScale(7)
            ]
        );
        assert_eq!(len, 20 + 20 + 20);
        let isn = tcp.sequence_number;
        v.on_delivered(&syn);

        let mut syn_ack = Packet::control(0, Kind::SynAck, 40, 20 * MS);
        syn_ack.rwnd = 14_600;
        let (_, tcp, _) = parse(&mut v, &syn_ack);
        assert!(tcp.syn && tcp.ack);
        assert_eq!(tcp.acknowledgment_number, isn.wrapping_add(1));
        assert_eq!(tcp.window_size, 14_600, "unscaled on a SYN");
        let isn_server = tcp.sequence_number;
        v.on_delivered(&syn_ack);

        let mut data = Packet::control(0, Kind::Data, 1500, 40 * MS);
        data.seq = 2920;
        data.len = 1460;
        let (ip, tcp, len) = parse(&mut v, &data);
        assert_eq!(len, 20 + 32 + 1460);
        assert_eq!(ip.total_len as u32, len);
        assert_eq!(tcp.sequence_number, isn.wrapping_add(2921));
        assert_eq!(tcp.acknowledgment_number, isn_server.wrapping_add(1));
        assert_eq!(options(&tcp)[2], O::Timestamp(40, 20), "echoes the SYN-ACK");
        let zeros = vec![0; 1460];
        assert_eq!(tcp.checksum, tcp.calc_checksum_ipv4(&ip, &zeros).unwrap());

        // An ACK with two SACK blocks above a hole at 0..2920, echoing the data's timestamp.
        let mut ack = Packet::control(0, Kind::Ack, 60, 0);
        ack.seq = 0;
        ack.sent_ns = 40 * MS;
        ack.owd_ns = 20 * MS;
        ack.rwnd = 20_000;
        ack.push_sack(2920, 4380);
        ack.push_sack(5840, 7300);
        let (ip, tcp, _) = parse(&mut v, &ack);
        assert_eq!((ip.source, ip.destination), ([10, 0, 0, 3], [10, 0, 0, 1]));
        assert_eq!(tcp.acknowledgment_number, isn.wrapping_add(1));
        assert_eq!(tcp.window_size, 157, "20 000 bytes / 128, rounded up");
        let o = options(&tcp);
        assert_eq!(o[2], O::Timestamp(60, 40));
        let at = |b: u32| isn.wrapping_add(1).wrapping_add(b);
        assert_eq!(
            o[5],
            O::SelectiveAcknowledgement(
                (at(2920), at(4380)),
                [Some((at(5840), at(7300))), None, None]
            )
        );
    }

    #[test]
    fn each_connection_of_a_flow_keeps_its_own_sequence_numbers() {
        let mut v = TcpView::new(0, 0, 1, 1460, None, false);
        let syn = |conn| {
            let mut p = Packet::control(0, Kind::Syn, 40, 0);
            p.conn = conn;
            p
        };
        let (_, first, _) = parse(&mut v, &syn(0));
        let (_, second, _) = parse(&mut v, &syn(1));
        assert_ne!(first.sequence_number, second.sequence_number);
        // Data of the first connection, still in the network after the second opened.
        let mut late = Packet::control(0, Kind::Data, 1500, 0);
        late.len = 1460;
        let (_, tcp, _) = parse(&mut v, &late);
        assert_eq!(tcp.sequence_number, first.sequence_number.wrapping_add(1));
        late.conn = 1;
        let (_, tcp, _) = parse(&mut v, &late);
        assert_eq!(tcp.sequence_number, second.sequence_number.wrapping_add(1));
    }

    #[test]
    fn ecn_marks_reach_the_ip_and_tcp_headers() {
        let mut v = TcpView::new(1, 0, 1, 1460, None, true);
        assert_eq!(v.wscale, 14, "no ceiling: the largest scale");
        let (_, tcp, _) = parse(&mut v, &Packet::control(1, Kind::Syn, 40, 0));
        assert!(tcp.ece && tcp.cwr, "ECN-setup SYN");
        let mut data = Packet::control(1, Kind::Data, 1500, 0);
        data.len = 1460;
        data.set(ECT, true);
        data.set(CE, true);
        data.set(CWR, true);
        let (ip, tcp, _) = parse(&mut v, &data);
        assert_eq!(ip.ecn, etherparse::IpEcn::CongestionExperienced);
        assert!(tcp.cwr);
        let mut ack = Packet::control(1, Kind::Ack, 40, 0);
        ack.set(ECE, true);
        ack.rwnd = 1;
        let (_, tcp, _) = parse(&mut v, &ack);
        assert!(tcp.ece);
        assert_eq!(tcp.window_size, 1, "never a zero window");
    }
}
