//! The one packet record every link carries: compact, `Copy`, no heap.

/// What a packet is; direction follows from it (data, SYN and request ACKs travel to the
/// receiver, `dst`; ACKs and requests to the sender, `src`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Syn,
    SynAck,
    Data,
    Ack,
    /// Application bytes of the request stream (`dst` to `src`): `seq`, `len` as for data.
    Request,
    /// Cumulative ACK (`seq`) of the request stream, when no data packet carries it.
    RequestAck,
}

/// Data: this is a retransmission (deterministic drops hit first transmissions only).
pub const RETRANSMISSION: u8 = 1 << 4;
/// ECN-Capable Transport, ECT(0) in the IP header (RFC 3168 §5).
pub const ECT: u8 = 1;
/// Congestion Experienced, set by a router instead of dropping (RFC 3168 §5).
pub const CE: u8 = 2;
/// TCP ECN-Echo: the receiver saw CE (RFC 3168 §6.1.3).
pub const ECE: u8 = 4;
/// TCP Congestion Window Reduced: the sender reacted to ECE (RFC 3168 §6.1.2).
pub const CWR: u8 = 8;
/// ECT(1) in the IP header instead of ECT(0): the L4S identifier (RFC 9331 §8).
pub const ECT1: u8 = 1 << 5;
/// TCP AE flag: with Accurate ECN, AE, CWR and ECE together are the 3-bit ACE counter of CE
/// packets received (RFC 9768 §3.2.2), AE its most significant bit.
pub const AE: u8 = 1 << 6;

/// The IP header's ECN field (RFC 3168 §5): ECT(0), ECT(1) and CE; 0 is Not-ECT.
pub const IP_ECT0: u8 = 0b10;
pub const IP_ECT1: u8 = 0b01;
pub const IP_CE: u8 = 0b11;

/// Up to three SACK blocks fit in the TCP option space beside timestamps (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// [`RETRANSMISSION`] and the ECN bits of the IP and TCP headers ([`ECT`], [`ECT1`], [`CE`],
    /// [`ECE`], [`CWR`]); one byte keeps the record at 72 bytes.
    pub flags: u8,
    pub sack_count: u8,
    /// Which connection of the flow sent it (a web flow without keep-alive opens one per
    /// object); the engine stamps it and drops packets of a connection that was replaced.
    pub conn: u8,
    /// Bytes on the wire, headers included.
    pub wire_bytes: u32,
    /// Data: payload bytes.
    pub len: u32,
    /// Data: first byte's sequence number (0-based, data only). ACK: cumulative ACK.
    pub seq: u64,
    /// When the sender sent it (the TCP timestamp value).
    pub sent_ns: u64,
    /// ACK: one-way delay of the data packet that triggered it, measured by the receiver.
    pub owd_ns: u64,
    /// ACK: receive window advertised, bytes. Data: cumulative ACK of the request stream
    /// (TCP carries it in every segment; here it rides in this otherwise unused field).
    pub rwnd: u64,
    /// ACK: SACK blocks as offsets above the cumulative ACK (`seq`), keeping the record small.
    sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn to_receiver(&self) -> bool {
        matches!(self.kind, Kind::Syn | Kind::Data | Kind::RequestAck)
    }

    pub fn control(flow: u32, kind: Kind, wire_bytes: u32, now: u64) -> Self {
        Packet {
            flow,
            kind,
            flags: 0,
            sack_count: 0,
            conn: 0,
            wire_bytes,
            len: 0,
            seq: 0,
            sent_ns: now,
            owd_ns: 0,
            rwnd: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    pub fn is_retransmission(&self) -> bool {
        self.flags & RETRANSMISSION != 0
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Set or clear `flag` (one of the flag constants).
    pub fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    /// The ACE field (RFC 9768 §3.2.2): AE, CWR, ECE as a number 0..=7.
    pub fn ace(&self) -> u8 {
        ((self.has(AE) as u8) << 2) | ((self.has(CWR) as u8) << 1) | self.has(ECE) as u8
    }

    /// Whether the IP header carries ECT(0) or ECT(1) (RFC 3168 §5: either may be marked CE).
    pub fn ecn_capable(&self) -> bool {
        self.has(ECT) || self.has(ECT1)
    }

    /// Set the ECN-capable codepoint: none, ECT(0), or ECT(1) when `l4s` (RFC 9331 §4).
    pub fn set_ect(&mut self, capable: bool, l4s: bool) {
        self.set(ECT, capable && !l4s);
        self.set(ECT1, capable && l4s);
    }

    /// The IP header's ECN field (RFC 3168 §5, the TOS byte's two low bits) this packet
    /// carries: CE `0b11`, else ECT(1) `0b01`, ECT(0) `0b10`, or Not-ECT `0b00`.
    pub fn ip_ecn(&self) -> u8 {
        if self.has(CE) {
            IP_CE
        } else if self.has(ECT1) {
            IP_ECT1
        } else if self.has(ECT) {
            IP_ECT0
        } else {
            0
        }
    }

    /// Take the IP header's ECN field `field` (its two low bits; see [`Packet::ip_ecn`]). A CE
    /// packet was ECN-capable but the field no longer says which ECT it had: it is ECT(0) here,
    /// so a queue may mark it again rather than drop it (RFC 3168 §5).
    pub fn set_ip_ecn(&mut self, field: u8) {
        let field = field & IP_CE;
        self.set(CE, field == IP_CE);
        self.set(ECT1, field == IP_ECT1);
        self.set(ECT, field == IP_ECT0 || field == IP_CE);
    }

    /// Write the ACE field: `value` modulo 8 into AE, CWR and ECE.
    pub fn set_ace(&mut self, value: u8) {
        self.set(AE, value & 4 != 0);
        self.set(CWR, value & 2 != 0);
        self.set(ECE, value & 1 != 0);
    }

    /// SACK block `i` as absolute byte numbers `[start, end)`.
    pub fn sack_block(&self, i: usize) -> (u64, u64) {
        let (s, e) = self.sack[i];
        (self.seq + s as u64, self.seq + e as u64)
    }

    /// Append a SACK block above the cumulative ACK; false if full or out of offset range.
    pub fn push_sack(&mut self, start: u64, end: u64) -> bool {
        let n = self.sack_count as usize;
        let (Ok(s), Ok(e)) = (
            u32::try_from(start.saturating_sub(self.seq)),
            u32::try_from(end.saturating_sub(self.seq)),
        ) else {
            return false;
        };
        if n == MAX_SACK_BLOCKS || self.sack[..n].contains(&(s, e)) {
            return false;
        }
        self.sack[n] = (s, e);
        self.sack_count += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_record_stays_small() {
        assert!(std::mem::size_of::<Packet>() <= 72);
    }

    #[test]
    fn the_ip_ecn_field_round_trips_and_ce_stays_capable() {
        let mut p = Packet::control(0, Kind::Data, 0, 0);
        for (capable, l4s, field) in [(false, false, 0), (true, false, 0b10), (true, true, 0b01)] {
            p.set_ect(capable, l4s);
            assert_eq!(p.ip_ecn(), field);
            let mut q = Packet::control(0, Kind::Data, 0, 0);
            q.set_ip_ecn(field);
            assert_eq!((q.ip_ecn(), q.ecn_capable()), (field, capable));
        }
        p.set(CE, true);
        assert_eq!(p.ip_ecn(), IP_CE);
        p.set_ip_ecn(IP_CE | 0b1111_1100); // a whole TOS byte: its DSCP is not ECN
        assert!(p.has(CE) && p.ecn_capable() && !p.has(ECT1));
        p.set_ip_ecn(0);
        assert!(!p.has(CE) && !p.ecn_capable());
    }

    #[test]
    fn ace_round_trips_through_ae_cwr_and_ece() {
        let mut p = Packet::control(0, Kind::Ack, 40, 0);
        for v in 0..16u8 {
            p.set_ace(v);
            assert_eq!(p.ace(), v % 8);
        }
        p.set_ace(5);
        assert!(p.has(AE) && !p.has(CWR) && p.has(ECE));
    }

    #[test]
    fn sack_blocks_round_trip_relative_to_the_ack() {
        let mut p = Packet::control(0, Kind::Ack, 40, 0);
        p.seq = 10_000_000_000;
        assert!(p.push_sack(10_000_001_000, 10_000_002_000));
        assert!(!p.push_sack(10_000_001_000, 10_000_002_000), "duplicate");
        assert_eq!(p.sack_block(0), (10_000_001_000, 10_000_002_000));
        assert!(
            !p.push_sack(p.seq + (1 << 33), p.seq + (1 << 33) + 1),
            "beyond offset range"
        );
    }
}
