//! A link emulator for real TCP: the simulator's own link model ([`Channel`]) run against the
//! wall clock between two TUN devices.
//!
//! Each direction is one [`Channel`] built from the scenario's [`DirectionConfig`] (a queue,
//! drop-tail or an AQM discipline, served at the line rate, then propagation delay, random
//! loss, deterministic drops, non-reordering jitter). A packet read from one TUN device is
//! offered to the channel at the current monotonic time; the accepted packets' bytes wait in a
//! map beside it, by id, and leave when the channel hands that packet out at its arrival time
//! (with CE set in the IP header if an ECN queue marked it), or are forgotten when the
//! discipline drops them. Nothing here touches a device: [`Emulator`] is pure scheduling, unit-tested below, and
//! `main.rs` does the I/O.
//!
//! IPv4/TCP headers are read only to describe a packet to the channel as the simulator would:
//! its wire size (the IP total length), and for data segments the flow (the index of the
//! connection's server port in `ports`, else TCP connections in the order their first SYN
//! passed, from 0), the payload's offset from the initial sequence number and whether it is a
//! retransmission (it ends at or below the highest byte already seen), so that
//! `drop = [{flow, seq}]` hits the same first transmission as in the simulation. Both ends of a
//! connection are tracked (the SYN's sender and the SYN-ACK's), so data from the side that
//! accepted the connection (a web server) is numbered too. UDP datagrams of the simulator's own
//! transport (`slowstart-udp`, `slowstart_transport::wire`) carry their flow's offset and
//! retransmission flag in the clear: a data datagram is its port's flow, as is.

use std::collections::HashMap;
use std::io::Write;

use slowstart_sim::config::DirectionConfig;
use slowstart_sim::network::channel::{Channel, Offer};
use slowstart_sim::sim::LinkSummary;
use slowstart_transport::packet::{Kind, Packet, CE, ECT, RETRANSMISSION};
use slowstart_transport::wire;

/// Forward is sender side → receiver side; reverse carries the ACKs back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Forward,
    Reverse,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Forward => "forward",
            Dir::Reverse => "reverse",
        }
    }
}

/// What the emulator's config file holds: the two directions of the bottleneck, the seed of
/// its random loss and jitter, and the MSS that numbers data segments for deterministic drops.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmuConfig {
    pub forward: DirectionConfig,
    pub reverse: DirectionConfig,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_mss")]
    pub mss: u64,
    /// Flow `i` is the connection with port `ports[i]` at either end (its listening port).
    #[serde(default)]
    pub ports: Vec<u16>,
}

fn default_mss() -> u64 {
    1448
}

/// Bytes of `pkt` a capture keeps: the IPv4 and TCP headers of a TCP segment (options
/// included), else the first 128 bytes, as `tcpdump -s` would; the payload is left out.
pub fn capture_len(pkt: &[u8]) -> usize {
    const OTHER: usize = 128;
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return pkt.len().min(OTHER);
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    // RFC 9293 §3.1: data offset, the TCP header's length in 32-bit words.
    if pkt[9] == 6 && pkt.len() >= ihl + 13 {
        let doff = (pkt[ihl + 12] >> 4) as usize * 4;
        return (ihl + doff).min(pkt.len());
    }
    pkt.len().min(OTHER)
}

/// One logged event: `enqueue`, `drop_full`, `drop_random`, `drop_scheduled` (at offer) or
/// `deliver` (when the packet leaves the link at the far end). Queue occupancy is the channel's
/// after the event (bytes and packets waiting or in transmission).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEvent {
    pub t_ns: u64,
    pub dir: Dir,
    pub event: &'static str,
    pub id: u64,
    pub bytes: u32,
    pub queue_bytes: u64,
    pub queue_packets: u64,
}

impl LogEvent {
    pub const CSV_HEADER: &'static str = "t_ns,dir,event,id,bytes,queue_bytes,queue_packets";

    pub fn write_csv(&self, w: &mut impl Write) -> std::io::Result<()> {
        writeln!(
            w,
            "{},{},{},{},{},{},{}",
            self.t_ns,
            self.dir.name(),
            self.event,
            self.id,
            self.bytes,
            self.queue_bytes,
            self.queue_packets
        )
    }
}

/// A TCP connection seen in one direction: (source, destination, source port, destination port).
type ConnKey = ([u8; 4], [u8; 4], u16, u16);

#[derive(Default)]
struct TcpTracker {
    /// (src, dst, sport, dport) → (flow, initial sequence number, highest end seen).
    conns: HashMap<ConnKey, (u32, u32, u64)>,
    next_flow: u32,
    ports: Vec<u16>,
}

impl TcpTracker {
    /// The flow of a new connection: its port's index in `ports`, else the next free number.
    fn flow_of(&mut self, key: &ConnKey) -> u32 {
        let by_port = self
            .ports
            .iter()
            .position(|&p| p == key.2 || p == key.3)
            .map(|i| i as u32);
        by_port.unwrap_or_else(|| {
            while (self.next_flow as usize) < self.ports.len() {
                self.next_flow += 1;
            }
            self.next_flow += 1;
            self.next_flow - 1
        })
    }
}

impl TcpTracker {
    /// A UDP datagram (header and payload): a `slowstart-udp` data packet becomes the data
    /// segment it carries, of the flow whose port it is sent from or to.
    fn classify_udp(&mut self, p: &mut Packet, udp: &[u8]) {
        let ports = [
            u16::from_be_bytes([udp[0], udp[1]]),
            u16::from_be_bytes([udp[2], udp[3]]),
        ];
        let Ok((d, _)) = wire::decode(&udp[8..]) else {
            return;
        };
        let Some(flow) = self.ports.iter().position(|x| ports.contains(x)) else {
            return;
        };
        if d.kind == Kind::Data {
            p.kind = Kind::Data;
            p.flow = flow as u32;
            p.seq = d.seq;
            p.len = d.len;
            p.set(RETRANSMISSION, d.is_retransmission());
        }
    }

    /// Describe an IPv4 packet as the simulator's `Packet`.
    fn classify(&mut self, id: u64, pkt: &[u8]) -> Packet {
        let wire = pkt.len() as u32;
        let mut p = Packet::control(u32::MAX, Kind::Ack, wire, 0);
        p.sent_ns = id;
        if pkt.len() < 20 || pkt[0] >> 4 != 4 {
            return p;
        }
        p.set(ECT, pkt[1] & 0b11 != 0);
        let ihl = ((pkt[0] & 0x0f) as usize) * 4;
        let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
        if pkt[9] == 17 && total >= ihl + 8 {
            self.classify_udp(&mut p, &pkt[ihl..total]);
            return p;
        }
        if pkt[9] != 6 {
            return p;
        }
        if total < ihl + 20 {
            return p;
        }
        let tcp = &pkt[ihl..total];
        let doff = ((tcp[12] >> 4) as usize) * 4;
        let flags = tcp[13];
        let payload = total.saturating_sub(ihl + doff) as u64;
        let key = (
            [pkt[12], pkt[13], pkt[14], pkt[15]],
            [pkt[16], pkt[17], pkt[18], pkt[19]],
            u16::from_be_bytes([tcp[0], tcp[1]]),
            u16::from_be_bytes([tcp[2], tcp[3]]),
        );
        let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]);
        let syn = flags & 0x02 != 0;
        let ack = flags & 0x10 != 0;
        if syn {
            // The SYN-ACK belongs to the flow its SYN opened (the reversed key).
            let reversed = (key.1, key.0, key.3, key.2);
            let flow = match self.conns.get(&reversed) {
                Some(c) if ack => c.0,
                _ => self.flow_of(&key),
            };
            self.conns.insert(key, (flow, seq.wrapping_add(1), 0));
            p.kind = if ack { Kind::SynAck } else { Kind::Syn };
            p.flow = flow;
            return p;
        }
        if payload == 0 {
            return p;
        }
        let Some(c) = self.conns.get_mut(&key) else {
            return p;
        };
        // Offsets below 4 GiB: enough for the transfers this emulator is used for.
        let off = seq.wrapping_sub(c.1) as u64;
        let end = off + payload;
        p.kind = Kind::Data;
        p.flow = c.0;
        p.seq = off;
        p.len = payload as u32;
        p.set(RETRANSMISSION, end <= c.2);
        c.2 = c.2.max(end);
        p
    }
}

/// Set Congestion Experienced in an IPv4 header whose packet is ECN-capable (RFC 3168 §5),
/// updating the header checksum.
fn set_ce(pkt: &mut [u8]) {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 || pkt[1] & 0b11 == 0 {
        return;
    }
    pkt[1] |= 0b11;
    let ihl = ((pkt[0] & 0x0f) as usize * 4).min(pkt.len());
    pkt[10] = 0;
    pkt[11] = 0;
    let mut sum: u32 = pkt[..ihl]
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    pkt[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Both directions of the emulated link and the packets they hold.
pub struct Emulator {
    channels: [Channel; 2],
    /// The bytes of each accepted packet, by id (an AQM queue may reorder or drop them).
    held: [HashMap<u64, Vec<u8>>; 2],
    tracker: TcpTracker,
    mss: u64,
    next_id: u64,
    pub log: Vec<LogEvent>,
}

fn idx(d: Dir) -> usize {
    match d {
        Dir::Forward => 0,
        Dir::Reverse => 1,
    }
}

impl Emulator {
    pub fn new(cfg: &EmuConfig) -> Self {
        Emulator {
            channels: [
                Channel::new("forward".into(), 1, &cfg.forward, cfg.seed),
                // A distinct stream for the reverse direction, as the simulator seeds per link.
                Channel::new(
                    "reverse".into(),
                    0,
                    &cfg.reverse,
                    cfg.seed ^ 0x9e37_79b9_7f4a_7c15,
                ),
            ],
            held: [HashMap::new(), HashMap::new()],
            tracker: TcpTracker {
                ports: cfg.ports.clone(),
                ..TcpTracker::default()
            },
            mss: cfg.mss,
            next_id: 0,
            log: Vec::new(),
        }
    }

    /// A packet read from the `dir` side's TUN device at `now` (monotonic ns). Returns what
    /// the channel did with it.
    pub fn ingress(&mut self, dir: Dir, now: u64, bytes: Vec<u8>) -> Offer {
        let id = self.next_id;
        self.next_id += 1;
        let p = self.tracker.classify(id, &bytes);
        let i = idx(dir);
        let offer = self.channels[i].offer(now, p, self.mss);
        let event = match offer {
            Offer::Queued { .. } => "enqueue",
            Offer::DroppedQueueFull => "drop_full",
            Offer::DroppedRandom => "drop_random",
            Offer::DroppedScheduled => "drop_scheduled",
            Offer::DroppedAqm => "drop_aqm",
        };
        let (qb, qp) = self.channels[i].backlog();
        self.log.push(LogEvent {
            t_ns: now,
            dir,
            event,
            id,
            bytes: bytes.len() as u32,
            queue_bytes: qb,
            queue_packets: qp,
        });
        if let Offer::Queued { .. } = offer {
            self.held[i].insert(id, bytes);
        }
        self.log_aqm_drops(dir, now);
        offer
    }

    /// Log and forget the packets the queue discipline dropped after accepting them.
    fn log_aqm_drops(&mut self, dir: Dir, now: u64) {
        let i = idx(dir);
        if self.channels[i].dropped.is_empty() {
            return;
        }
        let dropped = std::mem::take(&mut self.channels[i].dropped);
        let (qb, qp) = self.channels[i].backlog();
        for p in dropped {
            // `classify` keeps the packet's id in `sent_ns`.
            let bytes = self.held[i].remove(&p.sent_ns).map_or(0, |b| b.len());
            self.log.push(LogEvent {
                t_ns: now,
                dir,
                event: "drop_aqm",
                id: p.sent_ns,
                bytes: bytes as u32,
                queue_bytes: qb,
                queue_packets: qp,
            });
        }
    }

    /// Earliest arrival time of a packet held in either direction.
    pub fn next_deadline(&self) -> Option<u64> {
        self.channels.iter().filter_map(|c| c.head_time()).min()
    }

    /// Packets of `dir` whose arrival time is at or before `now`, in order: write them to the
    /// far side's device.
    pub fn due(&mut self, dir: Dir, now: u64) -> Vec<Vec<u8>> {
        let i = idx(dir);
        let mut out = Vec::new();
        while let Some(t) = self.channels[i].head_time() {
            if t > now {
                break;
            }
            let popped = self.channels[i].pop_head(t);
            self.log_aqm_drops(dir, t);
            // An AQM channel's event may be the end of a transmission rather than an arrival.
            let Some(p) = popped else {
                continue;
            };
            let id = p.sent_ns;
            let mut bytes = self.held[i].remove(&id).expect("held mirrors the channel");
            if p.has(CE) {
                set_ce(&mut bytes);
            }
            let (qb, qp) = self.channels[i].occupancy(now);
            self.log.push(LogEvent {
                t_ns: now,
                dir,
                event: "deliver",
                id,
                bytes: bytes.len() as u32,
                queue_bytes: qb,
                queue_packets: qp,
            });
            out.push(bytes);
        }
        out
    }

    /// Statistics of both directions, as JSON: each the simulator's own link row
    /// ([`LinkSummary`]), so that real runs report what simulated ones do.
    pub fn stats_json(&self) -> serde_json::Value {
        let one = |c: &Channel| serde_json::to_value(LinkSummary::of(c)).expect("plain data");
        serde_json::json!({
            "forward": one(&self.channels[0]),
            "reverse": one(&self.channels[1]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slowstart_sim::config::{DropSpec, QueueLimit};

    /// An IPv4/TCP packet of `payload` bytes with 32-byte TCP header (timestamps).
    fn tcp(sport: u16, seq: u32, flags: u8, payload: usize) -> Vec<u8> {
        tcp_between(
            ([10, 0, 0, 1], sport),
            ([10, 0, 1, 1], 5001),
            seq,
            flags,
            payload,
        )
    }

    fn tcp_between(
        src: ([u8; 4], u16),
        dst: ([u8; 4], u16),
        seq: u32,
        flags: u8,
        payload: usize,
    ) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&src.0);
        p[16..20].copy_from_slice(&dst.0);
        p[20..22].copy_from_slice(&src.1.to_be_bytes());
        p[22..24].copy_from_slice(&dst.1.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 8 << 4;
        p[33] = flags;
        p
    }

    fn cfg(fwd: DirectionConfig) -> EmuConfig {
        EmuConfig {
            reverse: fwd.clone(),
            forward: fwd,
            seed: 1,
            mss: 1448,
            ports: vec![],
        }
    }

    #[test]
    fn captures_keep_the_headers_only() {
        let seg = tcp(5000, 1, 0x10, 1000);
        assert_eq!(
            capture_len(&seg),
            52,
            "IPv4 20 + TCP 32 (timestamps), no payload"
        );
        assert_eq!(capture_len(&seg[..30]), 30, "truncated: what there is");
        assert_eq!(
            capture_len(&[0x60; 200]),
            128,
            "not IPv4: the first 128 bytes"
        );
    }

    #[test]
    fn serialises_then_propagates_in_order() {
        // 1500-byte packets at 12 Mbps take 1 ms each; 10 ms propagation.
        let mut e = Emulator::new(&cfg(DirectionConfig::lossless(
            12_000_000,
            10_000_000,
            QueueLimit::Packets(10),
        )));
        for k in 0..3u32 {
            let o = e.ingress(Dir::Forward, 0, tcp(1, k * 1448, 0x10, 1448));
            assert!(matches!(o, Offer::Queued { .. }));
        }
        assert_eq!(e.next_deadline(), Some(11_000_000));
        assert!(e.due(Dir::Forward, 10_999_999).is_empty());
        assert_eq!(e.due(Dir::Forward, 11_000_000).len(), 1);
        assert_eq!(e.next_deadline(), Some(12_000_000));
        let rest = e.due(Dir::Forward, 20_000_000);
        assert_eq!(rest.len(), 2);
        // Bytes come out unchanged and in order.
        assert_eq!(&rest[0][24..28], &1448u32.to_be_bytes());
        assert_eq!(e.next_deadline(), None);
        assert!(e.due(Dir::Reverse, 20_000_000).is_empty());
    }

    #[test]
    fn drop_tail_when_full_and_logs_queue() {
        let mut e = Emulator::new(&cfg(DirectionConfig::lossless(
            12_000_000,
            0,
            QueueLimit::Packets(2),
        )));
        let offers: Vec<_> = (0..3u32)
            .map(|k| e.ingress(Dir::Forward, 0, tcp(1, k * 1448, 0x10, 1448)))
            .collect();
        assert_eq!(offers[2], Offer::DroppedQueueFull);
        let ev: Vec<_> = e.log.iter().map(|l| (l.event, l.queue_packets)).collect();
        assert_eq!(ev, [("enqueue", 1), ("enqueue", 2), ("drop_full", 2)]);
        // After the first is transmitted there is room again.
        assert!(matches!(
            e.ingress(Dir::Forward, 1_000_000, tcp(1, 4 * 1448, 0x10, 1448)),
            Offer::Queued { .. }
        ));
    }

    #[test]
    fn scheduled_drop_hits_first_transmission_of_segment() {
        let mut d = DirectionConfig::lossless(1_000_000_000, 0, QueueLimit::Packets(100));
        d.drops = vec![DropSpec { flow: 0, seq: 3 }];
        let mut e = Emulator::new(&cfg(d));
        let isn = 4_000_000_000u32; // wraps
        assert!(matches!(
            e.ingress(Dir::Forward, 0, tcp(7, isn, 0x02, 0)),
            Offer::Queued { .. }
        ));
        let seg = |k: u32| tcp(7, isn.wrapping_add(1 + k * 1448), 0x18, 1448);
        for k in 0..2 {
            assert!(matches!(
                e.ingress(Dir::Forward, 0, seg(k)),
                Offer::Queued { .. }
            ));
        }
        assert_eq!(e.ingress(Dir::Forward, 0, seg(2)), Offer::DroppedScheduled);
        assert!(matches!(
            e.ingress(Dir::Forward, 0, seg(3)),
            Offer::Queued { .. }
        ));
        // The retransmission passes.
        assert!(matches!(
            e.ingress(Dir::Forward, 0, seg(2)),
            Offer::Queued { .. }
        ));
    }

    #[test]
    fn udp_data_of_the_simulators_transport_is_numbered_by_port() {
        let mut d = DirectionConfig::lossless(1_000_000_000, 0, QueueLimit::Packets(100));
        d.drops = vec![DropSpec { flow: 1, seq: 2 }];
        let mut c = cfg(d);
        c.mss = 1424;
        c.ports = vec![5001, 5002];
        let mut e = Emulator::new(&c);
        let datagram = |seq: u64, retransmission: bool| {
            let mut q = Packet::control(1, Kind::Data, 0, 0);
            q.seq = seq;
            q.len = 1424;
            q.set(RETRANSMISSION, retransmission);
            let mut body = Vec::new();
            wire::encode(&q, &[7; 1424], &mut body).unwrap();
            let total = 28 + body.len();
            let mut p = vec![0u8; total];
            p[0] = 0x45;
            p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
            p[9] = 17;
            p[20..22].copy_from_slice(&5002u16.to_be_bytes());
            p[22..24].copy_from_slice(&5002u16.to_be_bytes());
            p[28..].copy_from_slice(&body);
            p
        };
        assert!(matches!(
            e.ingress(Dir::Forward, 0, datagram(0, false)),
            Offer::Queued { .. }
        ));
        assert_eq!(
            e.ingress(Dir::Forward, 0, datagram(1424, false)),
            Offer::DroppedScheduled
        );
        assert!(matches!(
            e.ingress(Dir::Forward, 0, datagram(1424, true)),
            Offer::Queued { .. }
        ));
        // Anything else over UDP is passed as a packet of no flow.
        let mut junk = datagram(0, false);
        junk[30] = 0;
        assert!(matches!(
            e.ingress(Dir::Forward, 0, junk),
            Offer::Queued { .. }
        ));
    }

    #[test]
    fn server_data_is_numbered_by_listening_port() {
        // Flow 1 is a web server on port 5002: the client's SYN comes the reverse way, the
        // SYN-ACK and the response the forward way; the third response segment is dropped.
        let mut d = DirectionConfig::lossless(1_000_000_000, 0, QueueLimit::Packets(100));
        d.drops = vec![DropSpec { flow: 1, seq: 3 }];
        let mut c = cfg(d);
        c.ports = vec![5001, 5002];
        let mut e = Emulator::new(&c);
        let (server, client) = (([10, 0, 0, 1], 5002), ([10, 0, 1, 1], 40000));
        // A bulk connection to port 5001 opened first is still flow 0 and keeps its data.
        let bulk = |seq: u32, flags: u8, n: usize| {
            tcp_between(([10, 0, 0, 1], 33000), ([10, 0, 1, 1], 5001), seq, flags, n)
        };
        assert!(matches!(
            e.ingress(Dir::Forward, 0, bulk(0, 0x02, 0)),
            Offer::Queued { .. }
        ));
        e.ingress(Dir::Reverse, 0, tcp_between(client, server, 7, 0x02, 0));
        e.ingress(Dir::Forward, 0, tcp_between(server, client, 100, 0x12, 0));
        let seg = |k: u32| tcp_between(server, client, 101 + k * 1448, 0x18, 1448);
        let offers: Vec<_> = (0..4).map(|k| e.ingress(Dir::Forward, 0, seg(k))).collect();
        assert_eq!(offers[2], Offer::DroppedScheduled);
        assert!(offers
            .iter()
            .enumerate()
            .all(|(k, o)| k == 2 || matches!(o, Offer::Queued { .. })));
        for k in 0..4 {
            assert!(matches!(
                e.ingress(Dir::Forward, 0, bulk(1 + k * 1448, 0x18, 1448)),
                Offer::Queued { .. }
            ));
        }
    }
}
