//! The one packet record every link carries: compact, `Copy`, no heap.

/// What a packet is; direction follows from it (data and SYN travel to the receiver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Syn,
    SynAck,
    Data,
    Ack,
}

/// Up to three SACK blocks fit in the TCP option space beside timestamps (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: Kind,
    /// Data: this is a retransmission (deterministic drops hit first transmissions only).
    pub retransmission: bool,
    pub sack_count: u8,
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
    /// ACK: receive window advertised, bytes.
    pub rwnd: u64,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn to_receiver(&self) -> bool {
        matches!(self.kind, Kind::Syn | Kind::Data)
    }

    pub fn control(flow: u32, kind: Kind, wire_bytes: u32, now: u64) -> Self {
        Packet {
            flow,
            kind,
            retransmission: false,
            sack_count: 0,
            wire_bytes,
            len: 0,
            seq: 0,
            sent_ns: now,
            owd_ns: 0,
            rwnd: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }
}
