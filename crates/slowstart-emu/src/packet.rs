//! What the emulator reads of a packet: IPv4, TCP and UDP headers, to describe a packet to the
//! channel as the simulator would (its flow, offset and whether it is a retransmission, the
//! [`TcpTracker`]), to mark it CE, to count its payload and to cut it for a capture.

use std::collections::HashMap;

use slowstart_transport::packet::{Kind, Packet, RETRANSMISSION};
use slowstart_transport::wire;

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

/// A TCP connection seen in one direction: (source, destination, source port, destination port).
pub(crate) type ConnKey = ([u8; 4], [u8; 4], u16, u16);

#[derive(Default)]
pub(crate) struct TcpTracker {
    /// (src, dst, sport, dport) → (flow, initial sequence number, highest end seen).
    pub(crate) conns: HashMap<ConnKey, (u32, u32, u64)>,
    pub(crate) next_flow: u32,
    pub(crate) ports: Vec<u16>,
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
    pub(crate) fn classify(&mut self, id: u64, pkt: &[u8]) -> Packet {
        let wire = pkt.len() as u32;
        let mut p = Packet::control(u32::MAX, Kind::Ack, wire, 0);
        p.sent_ns = id;
        if pkt.len() < 20 || pkt[0] >> 4 != 4 {
            return p;
        }
        // ECT(1) as ECT(1), so that DualPI2 queues an L4S sender's packets in its L queue.
        p.set_ip_ecn(pkt[1]);
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
pub(crate) fn set_ce(pkt: &mut [u8]) {
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

/// The source and destination ports of an IPv4 TCP or UDP packet and its transport payload
/// bytes (after the TCP header with its options, or the 8-byte UDP header).
pub(crate) fn ports_and_payload(pkt: &[u8]) -> Option<([u16; 2], u64)> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((pkt[0] & 0x0f) as usize) * 4;
    let total = (u16::from_be_bytes([pkt[2], pkt[3]]) as usize).min(pkt.len());
    let header = match pkt[9] {
        6 if total >= ihl + 20 => ((pkt[ihl + 12] >> 4) as usize) * 4,
        17 if total >= ihl + 8 => 8,
        _ => return None,
    };
    let t = &pkt[ihl..];
    let ports = [
        u16::from_be_bytes([t[0], t[1]]),
        u16::from_be_bytes([t[2], t[3]]),
    ];
    Some((ports, total.saturating_sub(ihl + header) as u64))
}
