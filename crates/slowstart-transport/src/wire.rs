//! The transport's packets on the wire, for running it over UDP: one packet per datagram,
//! big-endian, versioned, every length bounded, and anything that does not parse rejected with
//! the reason (never a panic, whatever the bytes).
//!
//! ```text
//!  0  magic    u16  0x5353 ("SS")
//!  2  version  u8   1
//!  3  kind     u8   0 SYN, 1 SYN-ACK, 2 data, 3 ACK, 4 request, 5 request ACK
//!  4  flags    u8   bit 0: retransmission (data only); bits 1-3: the TCP header's ECN flags
//!                   ECE, CWR, AE (any kind); other bits 0
//!  5  sacks    u8   SACK blocks that follow the header, at most 3 (ACK only)
//!  6  conn     u8   connection of the flow
//!  7  reserved u8   0
//!  8  flow     u32
//! 12  len      u32  payload bytes (data and request: 1..=MAX_PAYLOAD; others 0)
//! 16  seq      u64  data/request: first byte; ACKs: cumulative ACK
//! 24  sent     u64  the sender's timestamp, ns; on an ACK, the echo of the data's
//! 32  owd      u64  ACK: one-way delay of the data that triggered it, ns
//! 40  rwnd     u64  ACK, SYN-ACK: receive window, bytes; data: the request stream's ACK
//! 48  SACK blocks: `sacks` x (start u32, end u32), offsets above `seq`, start < end
//! 48 + 8 x sacks: payload, exactly `len` bytes
//! ```
//!
//! Times are the endpoints' own clocks (both ends of an emulated path share the host's
//! monotonic clock, so the one-way delay is meaningful there).
//!
//! ECN's IP-header half (ECT(0), ECT(1), CE: [`crate::packet::ECT`], [`crate::packet::ECT1`],
//! [`crate::packet::CE`]) is not here: it travels in the datagram's own IP header, where a
//! router can mark it (RFC 3168 §5), and the socket layer carries it (`slowstart_udp::ecn`).
//! Only the TCP header's half, the echo and its answer, rides in `flags`.

use crate::packet::{Kind, Packet, AE, CWR, ECE, MAX_SACK_BLOCKS};

pub const MAGIC: u16 = 0x5353;
pub const VERSION: u8 = 1;
pub const HEADER_BYTES: usize = 48;
const SACK_BLOCK_BYTES: usize = 8;
/// Largest UDP payload over IPv4.
pub const MAX_DATAGRAM: usize = 65_507;
/// Largest payload a packet may carry (the header and no SACK blocks beside it).
pub const MAX_PAYLOAD: usize = MAX_DATAGRAM - HEADER_BYTES;
const RETRANSMISSION: u8 = 1;
/// The TCP header's ECN flags (RFC 3168 §6.1, RFC 9768 §3.2.2): wire bit, packet flag.
const TCP_ECN: [(u8, u8); 3] = [(1 << 1, ECE), (1 << 2, CWR), (1 << 3, AE)];
const TCP_ECN_BITS: u8 = 0b1110;

/// Why a datagram was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// Shorter than its header and SACK blocks say.
    Truncated {
        need: usize,
        got: usize,
    },
    /// Longer than a UDP datagram may be, or than its header says.
    TooLong {
        max: usize,
        got: usize,
    },
    Magic(u16),
    Version(u8),
    Kind(u8),
    Flags(u8),
    SackCount(u8),
    Reserved(u8),
    /// `len` does not fit the kind (0 for control packets, 1..=MAX_PAYLOAD with a payload).
    Length(u32),
    /// A SACK block empty, repeated, or past the end of the sequence space.
    Sack(usize),
    /// `seq + len` past the end of the sequence space.
    Sequence(u64),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Truncated { need, got } => {
                write!(f, "truncated datagram: {got} bytes, need {need}")
            }
            WireError::TooLong { max, got } => {
                write!(f, "datagram too long: {got} bytes, at most {max}")
            }
            WireError::Magic(m) => write!(f, "not a slowstart datagram (magic {m:#06x})"),
            WireError::Version(v) => write!(f, "unsupported version {v} (this is {VERSION})"),
            WireError::Kind(k) => write!(f, "unknown packet kind {k}"),
            WireError::Flags(x) => write!(f, "unknown flags {x:#04x}"),
            WireError::SackCount(n) => {
                write!(f, "{n} SACK blocks, at most {MAX_SACK_BLOCKS} on an ACK")
            }
            WireError::Reserved(r) => write!(f, "reserved byte is {r}, must be 0"),
            WireError::Length(n) => write!(f, "payload length {n} does not fit the kind"),
            WireError::Sack(i) => write!(f, "SACK block {i} is empty, repeated or out of range"),
            WireError::Sequence(s) => write!(f, "sequence {s} plus length overflows"),
        }
    }
}

impl std::error::Error for WireError {}

fn kind_code(k: Kind) -> u8 {
    match k {
        Kind::Syn => 0,
        Kind::SynAck => 1,
        Kind::Data => 2,
        Kind::Ack => 3,
        Kind::Request => 4,
        Kind::RequestAck => 5,
    }
}

fn kind_of(code: u8) -> Option<Kind> {
    Some(match code {
        0 => Kind::Syn,
        1 => Kind::SynAck,
        2 => Kind::Data,
        3 => Kind::Ack,
        4 => Kind::Request,
        5 => Kind::RequestAck,
        _ => return None,
    })
}

fn carries_payload(k: Kind) -> bool {
    matches!(k, Kind::Data | Kind::Request)
}

/// Append `p` and its `payload` to `out` as one datagram. `payload` must be `p.len` bytes for
/// data and requests and empty otherwise; the packet must be one [`decode`] accepts.
pub fn encode(p: &Packet, payload: &[u8], out: &mut Vec<u8>) -> Result<(), WireError> {
    check_lengths(p.kind, p.len, p.seq)?;
    if payload.len() != p.len as usize {
        return Err(WireError::Length(p.len));
    }
    if p.sack_count > 0 && p.kind != Kind::Ack {
        return Err(WireError::SackCount(p.sack_count));
    }
    let mut flags = if p.is_retransmission() {
        RETRANSMISSION
    } else {
        0
    };
    for (bit, flag) in TCP_ECN {
        if p.has(flag) {
            flags |= bit;
        }
    }
    out.reserve(HEADER_BYTES + SACK_BLOCK_BYTES * p.sack_count as usize + payload.len());
    out.extend_from_slice(&MAGIC.to_be_bytes());
    out.extend_from_slice(&[VERSION, kind_code(p.kind), flags, p.sack_count, p.conn, 0]);
    out.extend_from_slice(&p.flow.to_be_bytes());
    out.extend_from_slice(&p.len.to_be_bytes());
    for v in [p.seq, p.sent_ns, p.owd_ns, p.rwnd] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    for i in 0..p.sack_count as usize {
        let (s, e) = p.sack_block(i);
        // Offsets above `seq` fit 32 bits: `Packet::push_sack` accepts no others.
        out.extend_from_slice(&((s - p.seq) as u32).to_be_bytes());
        out.extend_from_slice(&((e - p.seq) as u32).to_be_bytes());
    }
    out.extend_from_slice(payload);
    Ok(())
}

fn check_lengths(kind: Kind, len: u32, seq: u64) -> Result<(), WireError> {
    let ok = if carries_payload(kind) {
        len >= 1 && len as usize <= MAX_PAYLOAD
    } else {
        len == 0
    };
    if !ok {
        return Err(WireError::Length(len));
    }
    if seq.checked_add(len as u64).is_none() {
        return Err(WireError::Sequence(seq));
    }
    Ok(())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Parse one datagram: the packet (its `wire_bytes` the datagram's length) and its payload.
pub fn decode(b: &[u8]) -> Result<(Packet, &[u8]), WireError> {
    if b.len() > MAX_DATAGRAM {
        return Err(WireError::TooLong {
            max: MAX_DATAGRAM,
            got: b.len(),
        });
    }
    if b.len() < HEADER_BYTES {
        return Err(WireError::Truncated {
            need: HEADER_BYTES,
            got: b.len(),
        });
    }
    let magic = u16::from_be_bytes([b[0], b[1]]);
    if magic != MAGIC {
        return Err(WireError::Magic(magic));
    }
    if b[2] != VERSION {
        return Err(WireError::Version(b[2]));
    }
    let kind = kind_of(b[3]).ok_or(WireError::Kind(b[3]))?;
    let flags = b[4];
    if flags & !(RETRANSMISSION | TCP_ECN_BITS) != 0
        || (flags & RETRANSMISSION != 0 && kind != Kind::Data)
    {
        return Err(WireError::Flags(flags));
    }
    let sacks = b[5];
    if sacks as usize > MAX_SACK_BLOCKS || (sacks > 0 && kind != Kind::Ack) {
        return Err(WireError::SackCount(sacks));
    }
    if b[7] != 0 {
        return Err(WireError::Reserved(b[7]));
    }
    let len = u32_at(b, 12);
    let seq = u64_at(b, 16);
    check_lengths(kind, len, seq)?;
    let payload_at = HEADER_BYTES + SACK_BLOCK_BYTES * sacks as usize;
    let need = payload_at + len as usize;
    if b.len() < need {
        return Err(WireError::Truncated { need, got: b.len() });
    }
    if b.len() > need {
        return Err(WireError::TooLong {
            max: need,
            got: b.len(),
        });
    }
    let mut p = Packet::control(u32_at(b, 8), kind, b.len() as u32, u64_at(b, 24));
    p.set(crate::packet::RETRANSMISSION, flags & RETRANSMISSION != 0);
    for (bit, flag) in TCP_ECN {
        p.set(flag, flags & bit != 0);
    }
    p.conn = b[6];
    p.len = len;
    p.seq = seq;
    p.owd_ns = u64_at(b, 32);
    p.rwnd = u64_at(b, 40);
    for i in 0..sacks as usize {
        let at = HEADER_BYTES + SACK_BLOCK_BYTES * i;
        let (s, e) = (u32_at(b, at) as u64, u32_at(b, at + 4) as u64);
        let (Some(start), Some(end)) = (seq.checked_add(s), seq.checked_add(e)) else {
            return Err(WireError::Sack(i));
        };
        if start >= end || !p.push_sack(start, end) {
            return Err(WireError::Sack(i));
        }
    }
    Ok((p, &b[payload_at..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{CE, ECT, ECT1};
    use proptest::prelude::*;

    fn data(seq: u64, len: u32) -> Packet {
        let mut p = Packet::control(7, Kind::Data, 0, 123_456_789);
        p.seq = seq;
        p.len = len;
        p.set(crate::packet::RETRANSMISSION, true);
        p.rwnd = 400;
        p.conn = 2;
        p
    }

    fn same(a: &Packet, b: &Packet) -> bool {
        let blocks = |p: &Packet| -> Vec<(u64, u64)> {
            (0..p.sack_count as usize)
                .map(|i| p.sack_block(i))
                .collect()
        };
        // The TCP header's ECN flags travel; the IP header's (ECT, CE) are the socket's.
        let tcp_ecn = |p: &Packet| p.flags & (ECE | CWR | AE);
        (a.flow, a.kind, a.is_retransmission(), a.conn, a.len, a.seq)
            == (b.flow, b.kind, b.is_retransmission(), b.conn, b.len, b.seq)
            && tcp_ecn(a) == tcp_ecn(b)
            && !b.has(ECT)
            && !b.has(ECT1)
            && !b.has(CE)
            && (a.sent_ns, a.owd_ns, a.rwnd) == (b.sent_ns, b.owd_ns, b.rwnd)
            && blocks(a) == blocks(b)
    }

    #[test]
    fn data_and_an_ack_with_sack_blocks_round_trip() {
        let payload = vec![0xab; 1460];
        let p = data(1 << 40, 1460);
        let mut buf = Vec::new();
        encode(&p, &payload, &mut buf).unwrap();
        assert_eq!(buf.len(), HEADER_BYTES + 1460);
        let (q, body) = decode(&buf).unwrap();
        assert!(same(&p, &q));
        assert_eq!(body, &payload[..]);
        assert_eq!(q.wire_bytes as usize, buf.len());

        let mut ack = Packet::control(7, Kind::Ack, 0, 5);
        ack.seq = 10_000;
        ack.owd_ns = 40_000_000;
        ack.rwnd = 1 << 30;
        assert!(ack.push_sack(20_000, 30_000));
        assert!(ack.push_sack(12_000, 13_000));
        buf.clear();
        encode(&ack, &[], &mut buf).unwrap();
        assert_eq!(buf.len(), HEADER_BYTES + 16);
        let (q, body) = decode(&buf).unwrap();
        assert!(same(&ack, &q) && body.is_empty());
    }

    #[test]
    fn rejects_what_does_not_parse_with_the_reason() {
        let mut good = Vec::new();
        encode(&data(0, 100), &[1; 100], &mut good).unwrap();
        let bad = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            edit(&mut b);
            decode(&b).unwrap_err()
        };
        assert_eq!(bad(&|b| b[0] = 0), WireError::Magic(0x0053));
        assert_eq!(bad(&|b| b[2] = 2), WireError::Version(2));
        assert_eq!(bad(&|b| b[3] = 6), WireError::Kind(6));
        assert_eq!(bad(&|b| b[4] = 0x10), WireError::Flags(0x10));
        // ECE, CWR and AE may ride on any kind, the retransmission flag on data only.
        let mut ack = Packet::control(0, Kind::Ack, 0, 0);
        ack.set_ace(0b111);
        let mut b = Vec::new();
        encode(&ack, &[], &mut b).unwrap();
        assert_eq!(b[4], 0b1110);
        assert_eq!(decode(&b).unwrap().0.ace(), 0b111);
        b[4] |= 1;
        assert_eq!(decode(&b).unwrap_err(), WireError::Flags(0b1111));
        assert_eq!(bad(&|b| b[5] = 1), WireError::SackCount(1), "SACK on data");
        assert_eq!(bad(&|b| b[7] = 1), WireError::Reserved(1));
        assert_eq!(
            bad(&|b| b.truncate(120)),
            WireError::Truncated {
                need: 148,
                got: 120
            }
        );
        assert_eq!(
            bad(&|b| b.push(0)),
            WireError::TooLong { max: 148, got: 149 }
        );
        assert_eq!(
            bad(&|b| b[12..16].copy_from_slice(&[0; 4])),
            WireError::Length(0)
        );
        assert_eq!(
            bad(&|b| b[16..24].copy_from_slice(&[0xff; 8])),
            WireError::Sequence(u64::MAX)
        );
        // An ACK whose SACK block is empty, or repeated.
        let mut ack = Packet::control(0, Kind::Ack, 0, 0);
        assert!(ack.push_sack(10, 20));
        let mut b = Vec::new();
        encode(&ack, &[], &mut b).unwrap();
        b[48..52].copy_from_slice(&20u32.to_be_bytes());
        assert_eq!(decode(&b).unwrap_err(), WireError::Sack(0));
        let mut b2 = Vec::new();
        encode(&ack, &[], &mut b2).unwrap();
        b2[5] = 2;
        b2.extend_from_within(48..56);
        assert_eq!(decode(&b2).unwrap_err(), WireError::Sack(1));
        assert!(decode(&[]).is_err());
        assert!(decode(&vec![0; MAX_DATAGRAM + 1]).is_err());
    }

    #[test]
    fn encode_refuses_what_decode_would_reject() {
        let mut out = Vec::new();
        assert_eq!(
            encode(&data(0, 10), &[0; 9], &mut out),
            Err(WireError::Length(10))
        );
        assert_eq!(
            encode(&data(0, 0), &[], &mut out),
            Err(WireError::Length(0))
        );
        assert!(out.is_empty());
    }

    fn any_packet() -> impl Strategy<Value = (Packet, Vec<u8>)> {
        (
            0u8..6,
            any::<u32>(),
            any::<u8>(),
            any::<bool>(),
            any::<u64>(),
            (any::<u64>(), any::<u64>(), any::<u64>()),
            1usize..3000,
            proptest::collection::vec((0u32..1 << 20, 1u32..5000), 0..=3),
            any::<u8>(),
        )
            .prop_map(
                |(k, flow, conn, rtx, seq, (sent, owd, rwnd), n, blocks, ecn)| {
                    let kind = kind_of(k).unwrap();
                    let mut p = Packet::control(flow, kind, 0, sent);
                    // Any ECN flags, the IP header's too (which the wire leaves out).
                    p.flags = ecn & (ECT | ECT1 | CE | ECE | CWR | AE);
                    p.conn = conn;
                    p.owd_ns = owd;
                    p.rwnd = rwnd;
                    let mut payload = vec![];
                    if carries_payload(kind) {
                        payload = (0..n).map(|i| i as u8).collect();
                        p.len = n as u32;
                        p.seq = seq.min(u64::MAX - n as u64);
                        p.set(crate::packet::RETRANSMISSION, rtx && kind == Kind::Data);
                    } else {
                        p.seq = seq.min(u64::MAX - (1 << 33));
                    }
                    if kind == Kind::Ack {
                        for (s, w) in blocks {
                            p.push_sack(p.seq + s as u64, p.seq + (s + w) as u64);
                        }
                    }
                    (p, payload)
                },
            )
    }

    proptest! {
        #[test]
        fn every_valid_packet_round_trips((p, payload) in any_packet()) {
            let mut buf = Vec::new();
            encode(&p, &payload, &mut buf).unwrap();
            let (q, body) = decode(&buf).unwrap();
            prop_assert!(same(&p, &q));
            prop_assert_eq!(body, &payload[..]);
            // Every strict prefix is rejected.
            for cut in [0, 1, HEADER_BYTES - 1, HEADER_BYTES, buf.len() - 1] {
                prop_assert!(decode(&buf[..cut.min(buf.len() - 1)]).is_err());
            }
        }

        #[test]
        fn random_bytes_never_panic_and_what_parses_reencodes_the_same(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            header in any::<bool>(),
        ) {
            let mut b = bytes;
            if header && b.len() >= 8 {
                // Mostly a valid start, so the deeper checks are reached too.
                b[..3].copy_from_slice(&[0x53, 0x53, VERSION]);
                b[3] %= 6;
                b[4] &= 0x0f;
                b[5] %= 4;
                b[7] = 0;
            }
            if let Ok((p, payload)) = decode(&b) {
                let mut again = Vec::new();
                encode(&p, payload, &mut again).unwrap();
                prop_assert_eq!(again, b);
            }
        }
    }
}
