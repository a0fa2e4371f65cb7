//! The data receiver: in-order reassembly, SACK blocks (RFC 2018), delayed ACKs (RFC 5681 §4.2,
//! RFC 1122 §4.2.3.2) and a receive window that grows as Linux's does.

use crate::packet::{Kind, Packet, CE, CWR, ECE, ECT, ECT1, MAX_SACK_BLOCKS};
use crate::ranges::RangeSet;
use crate::settings::{CeFeedback, ReceiverEcn, Settings};
use crate::timer::Timer;
use crate::Io;

pub struct Receiver {
    flow: u32,
    mss: u64,
    header_bytes: u64,
    size_bytes: Option<u64>,
    /// Next byte expected in order; everything below was delivered to the application.
    rcv_nxt: u64,
    out_of_order: RangeSet,
    /// A byte inside each of the most recently changed out-of-order blocks, newest first.
    recent_blocks: [u64; MAX_SACK_BLOCKS],
    recent_count: usize,
    /// Advertised window, bytes (Linux `rcv_ssthresh`, grown per in-order segment).
    rwnd: u64,
    max_rwnd: u64,
    delayed_ack: bool,
    ack_every: u64,
    /// ACKs still to send at once (Linux `icsk_ack.quick`), set at the first data segment
    /// when quick-ACK start is on.
    quick_acks: Option<u64>,
    quickack: bool,
    delack_timeout_ns: u64,
    unacked_segments: u64,
    last_owd_ns: u64,
    last_sent_ns: u64,
    delack_timer: Timer,
    completed_ns: Option<u64>,
    acks_sent: u64,
    /// ACKs that repeat the previous ACK's acknowledgment number (see [`Receiver::dup_acks`]).
    dup_acks: u64,
    last_ack: u64,
    /// Payload bytes that arrived, duplicates included.
    data_bytes_received: u64,
    /// Set ECE on every ACK until the sender's CWR (RFC 3168 §6.1.3).
    ece: bool,
    /// Data packets that arrived marked CE.
    ce_received: u64,
    /// ECE echoes the latest packet's CE state (RFC 8257 §3.2) instead of RFC 3168's latch.
    dctcp_feedback: bool,
    /// ACKs carry the ACE counter (RFC 9768 §3.2.2): `r_cep`, CE packets received, from 5.
    accurate_feedback: bool,
    r_cep: u8,
    /// The SYN-ACK and ACKs go out ECT, as Linux sends them for a controller that needs ECN
    /// (any feedback but the classic one).
    ect_all: bool,
    /// What ECN this end supports, and the feedback its own stack would ask for (DCTCP's
    /// ECN-setup SYN looks like RFC 3168's).
    support: ReceiverEcn,
    own_feedback: Option<CeFeedback>,
    /// The feedback the handshake settled (none: no ECN).
    feedback: Option<CeFeedback>,
}

impl Receiver {
    /// A receiver for flow `flow`; with `size_bytes`, it notes when that many bytes are in.
    pub fn new(flow: u32, cfg: &Settings, size_bytes: Option<u64>) -> Self {
        let max_rwnd = cfg.max_rwnd_bytes.unwrap_or(u64::MAX);
        let mut r = Receiver {
            flow,
            mss: cfg.mss,
            header_bytes: cfg.header_bytes,
            size_bytes,
            rcv_nxt: 0,
            out_of_order: RangeSet::new(),
            recent_blocks: [0; MAX_SACK_BLOCKS],
            recent_count: 0,
            rwnd: (cfg.initrwnd * cfg.mss).min(max_rwnd),
            max_rwnd,
            delayed_ack: cfg.delayed_ack,
            ack_every: cfg.ack_every,
            quick_acks: None,
            quickack: cfg.quickack,
            delack_timeout_ns: cfg.delack_timeout_ns,
            unacked_segments: 0,
            last_owd_ns: 0,
            last_sent_ns: 0,
            delack_timer: Timer::default(),
            completed_ns: None,
            acks_sent: 0,
            dup_acks: 0,
            last_ack: 0,
            data_bytes_received: 0,
            ece: false,
            ce_received: 0,
            dctcp_feedback: false,
            accurate_feedback: false,
            r_cep: 5,
            ect_all: false,
            support: cfg.receiver_ecn,
            own_feedback: cfg.asked_ecn(),
            feedback: None,
        };
        // Without a handshake, the feedback a first SYN would have settled.
        r.use_feedback(cfg.receiver_feedback());
        r
    }

    fn use_feedback(&mut self, feedback: Option<CeFeedback>) {
        self.feedback = feedback;
        self.dctcp_feedback = feedback == Some(CeFeedback::Dctcp);
        self.accurate_feedback = feedback == Some(CeFeedback::Accurate);
        self.ect_all = feedback.is_some_and(|f| f != CeFeedback::Classic);
    }

    /// The feedback this end gives (none: no ECN), as the handshake settled it.
    pub fn ecn_feedback(&self) -> Option<CeFeedback> {
        self.feedback
    }

    /// Next byte expected in order: every byte below it is in.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Free the out-of-order set's storage once no hole is left.
    pub fn release_empty_buffers(&mut self) {
        self.out_of_order.release_if_empty();
    }

    /// When the expected size was all in, if it was.
    pub fn completed_ns(&self) -> Option<u64> {
        self.completed_ns
    }

    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// Duplicate ACKs sent: pure ACKs with the acknowledgment number of the ACK before (RFC
    /// 5681 §2; the window is the same too, since it grows only with in-order data). The SYN-ACK
    /// does not count as the ACK before: its window is unscaled (RFC 7323 §2.2), so Wireshark
    /// does not compare it either (`tcp.analysis.duplicate_ack`).
    pub fn dup_acks(&self) -> u64 {
        self.dup_acks
    }

    /// Payload bytes that arrived, duplicates included.
    pub fn data_bytes_received(&self) -> u64 {
        self.data_bytes_received
    }

    pub(crate) fn delack_timer(&self) -> &Timer {
        &self.delack_timer
    }

    /// The delayed-ACK timer, for the connection's wake-ups.
    pub(crate) fn delack_timer_mut(&mut self) -> &mut Timer {
        &mut self.delack_timer
    }

    /// Answer a SYN (each one: a retransmitted SYN may ask for less, RFC 9768 §3.1.4.1): the
    /// SYN's request met with this end's support ([`ReceiverEcn::answer`]) sets the feedback,
    /// and the SYN-ACK says which (RFC 9768 §3.1.1): AccECN's reflection of the SYN's IP-ECN
    /// field in (AE, CWR, ECE), (0,1,0) Not-ECT, (0,1,1) ECT(1), (1,0,0) ECT(0), (1,1,0) CE
    /// (Linux `tcp_accecn_reflector_flags`); RFC 3168's ECE alone; or no flag.
    pub fn on_syn(&mut self, now: u64, syn: &Packet, io: &mut Io) {
        // (AE, CWR, ECE): none asks for no ECN, (0,1,1) for RFC 3168 (DCTCP's SYN too), any
        // other for AccECN (Linux `tcp_accecn_syn_requested`; the sender sends (1,1,1)).
        let asked = match syn.ace() {
            0 => None,
            0b011 => Some(match self.own_feedback {
                Some(CeFeedback::Dctcp) => CeFeedback::Dctcp,
                _ => CeFeedback::Classic,
            }),
            _ => Some(CeFeedback::Accurate),
        };
        let feedback = self.support.answer(asked);
        self.use_feedback(feedback);
        let mut p = Packet::control(self.flow, Kind::SynAck, self.header_bytes as u32, now);
        p.rwnd = self.rwnd;
        p.owd_ns = now - syn.sent_ns;
        p.set(ECT, self.ect_all);
        match feedback {
            Some(CeFeedback::Accurate) => {
                p.set_ace(match (syn.has(CE), syn.has(ECT1), syn.has(ECT)) {
                    (true, _, _) => 0b110,
                    (_, true, _) => 0b011,
                    (_, _, true) => 0b100,
                    _ => 0b010,
                })
            }
            Some(_) => p.set(ECE, true),
            None => {}
        }
        io.send(p);
    }

    fn remember_block(&mut self, byte: u64) {
        // Most recent first (RFC 2018 §4); drop entries now inside the same block.
        let block = self.out_of_order.containing(byte);
        let mut kept = [byte; MAX_SACK_BLOCKS];
        let mut n = 1;
        for &b in &self.recent_blocks[..self.recent_count] {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            let same = block.is_some() && self.out_of_order.containing(b) == block;
            if !same {
                kept[n] = b;
                n += 1;
            }
        }
        self.recent_blocks = kept;
        self.recent_count = n;
    }

    pub fn on_data(&mut self, now: u64, pkt: &Packet, io: &mut Io) {
        let start = pkt.seq;
        let end = pkt.seq + pkt.len as u64;
        self.data_bytes_received += pkt.len as u64;
        let ce = pkt.has(CE);
        let mut ack_now = ce;
        if self.accurate_feedback {
            // RFC 9768 §3.2.2.5.1: a change of CE state is ACKed at once; `ece` keeps the
            // latest packet's state here.
            ack_now = ce != self.ece;
            self.ece = ce;
            self.r_cep = self.r_cep.wrapping_add(ce as u8);
        } else if self.dctcp_feedback {
            // RFC 8257 §3.2, as Linux `dctcp_ece_ack_update`: on a change of CE state, the
            // delayed ACK still owed goes out first with the old state, and this packet is
            // ACKed at once with the new one; otherwise ACKs are delayed as usual.
            ack_now = ce != self.ece;
            if ack_now && self.unacked_segments > 0 {
                self.send_ack(now, io);
            }
            self.ece = ce;
        } else {
            // RFC 3168 §6.1.3: CWR ends the echo; a CE mark (re)starts it and is ACKed at once,
            // as Linux does (`tcp_ecn_check_ce` enters quick-ACK mode).
            if pkt.has(CWR) {
                self.ece = false;
            }
            if ce {
                self.ece = true;
            }
        }
        if ce {
            self.ce_received += 1;
        }
        self.last_owd_ns = now.saturating_sub(pkt.sent_ns);
        self.last_sent_ns = pkt.sent_ns;
        let immediate = if end <= self.rcv_nxt {
            true // duplicate
        } else if start <= self.rcv_nxt {
            let filled_hole = !self.out_of_order.is_empty();
            self.rcv_nxt = end;
            while let Some((s, e)) = self.out_of_order.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.out_of_order.remove_below(e);
            }
            if self.quickack && self.quick_acks.is_none() {
                // Linux `tcp_event_data_recv` on the first data segment: `tcp_incr_quickack`,
                // the advertised window over twice the initial rcv_mss estimate (536,
                // TCP_MSS_DEFAULT), at least 2, at most TCP_MAX_QUICKACKS = 16.
                self.quick_acks = Some((self.rwnd / (2 * 536)).clamp(2, 16));
            }
            // Linux tcp_grow_window: rcv_ssthresh grows by two segments per full in-order
            // segment, up to the window clamp; each growth also asks for a quick ACK
            // (`icsk_ack.quick |= 1`), so Linux ACKs every segment while its window opens.
            let mut grew = false;
            if pkt.len as u64 >= self.mss {
                let grown = (self.rwnd + 2 * self.mss).min(self.max_rwnd);
                grew = grown > self.rwnd;
                self.rwnd = grown;
            }
            if self.quickack && grew {
                if let Some(left) = &mut self.quick_acks {
                    *left = (*left).max(1);
                }
            }
            if self.completed_ns.is_none() && self.size_bytes.is_some_and(|s| self.rcv_nxt >= s) {
                self.completed_ns = Some(now);
            }
            self.unacked_segments += 1;
            // RFC 5681 §4.2: ACK at once when a segment fills a gap; otherwise every
            // `ack_every` full segments, or when the delayed-ACK timer expires.
            self.quick_ack_due()
                || filled_hole
                || !self.delayed_ack
                || self.unacked_segments >= self.ack_every
        } else {
            self.out_of_order.insert(start, end, |_, _| {});
            self.remember_block(start);
            true // out of order: duplicate ACK at once
        };
        if immediate || ack_now {
            self.send_ack(now, io);
        } else if self.delack_timer.deadline().is_none() {
            self.delack_timer.set(Some(now + self.delack_timeout_ns));
        }
    }

    /// The application sends bytes the other way: a pending delayed ACK rides with them
    /// (RFC 1122 §4.2.3.2: an ACK piggybacks on data; here it goes as its own packet, at once).
    pub fn flush_ack(&mut self, now: u64, io: &mut Io) {
        if self.unacked_segments > 0 {
            self.send_ack(now, io);
        }
    }

    pub fn on_delack_timer(&mut self, now: u64, io: &mut Io) {
        if self.unacked_segments > 0 {
            self.send_ack(now, io);
        }
    }

    /// In quick-ACK mode: this segment is ACKed at once, and uses one of the quick ACKs.
    fn quick_ack_due(&mut self) -> bool {
        match &mut self.quick_acks {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        }
    }

    fn send_ack(&mut self, now: u64, io: &mut Io) {
        let mut p = Packet::control(self.flow, Kind::Ack, 0, now);
        p.seq = self.rcv_nxt;
        p.rwnd = self.rwnd;
        p.owd_ns = self.last_owd_ns;
        p.sent_ns = self.last_sent_ns;
        if self.accurate_feedback {
            p.set_ace(self.r_cep % 8);
        } else {
            p.set(ECE, self.ece);
        }
        p.set(ECT, self.ect_all);
        // Nothing out of order (the common case): no blocks to look up.
        if !self.out_of_order.is_empty() {
            for &b in &self.recent_blocks[..self.recent_count] {
                if let Some((s, e)) = self.out_of_order.containing(b) {
                    if s >= self.rcv_nxt {
                        p.push_sack(s, e);
                    }
                }
            }
        }
        let n = p.sack_count as u64;
        // SACK option: kind, length and 8 bytes per block, padded to 4 bytes (RFC 2018 §3).
        let options = if n > 0 { 4 + 8 * n } else { 0 };
        p.wire_bytes = (self.header_bytes + options) as u32;
        self.unacked_segments = 0;
        self.delack_timer.set(None);
        if self.acks_sent > 0 && p.seq == self.last_ack {
            self.dup_acks += 1;
        }
        self.last_ack = p.seq;
        self.acks_sent += 1;
        io.send(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settings, MS};

    const MSS: u64 = 1460;

    /// Data segment `k` (0-based), ECN-capable, with CE and CWR as asked.
    fn segment(k: u64, ce: bool, cwr: bool) -> Packet {
        let mut p = Packet::control(0, Kind::Data, (MSS + 40) as u32, k * MS);
        p.seq = k * MSS;
        p.len = MSS as u32;
        p.set(ECT, true);
        p.set(CE, ce);
        p.set(CWR, cwr);
        p
    }

    /// The ACKs segment after segment produces: (segments acknowledged, ECE) per ACK.
    fn acks(feedback: CeFeedback, marks: &[(bool, bool)]) -> Vec<Vec<(u64, bool)>> {
        let mut cfg = settings();
        cfg.ecn = true;
        cfg.ecn_feedback = feedback;
        let mut r = Receiver::new(0, &cfg, None);
        let mut out = Vec::new();
        for (k, &(ce, cwr)) in marks.iter().enumerate() {
            let mut io = Io::default();
            r.on_data(k as u64 * MS, &segment(k as u64, ce, cwr), &mut io);
            out.push(
                io.packets
                    .iter()
                    .map(|p| (p.seq / MSS, p.has(ECE)))
                    .collect(),
            );
        }
        out
    }

    /// RFC 8257 §3.2's two-state machine: ECE is the latest segment's CE state; at a change the
    /// delayed ACK owed goes out first with the old state, the segment itself at once with the
    /// new; between changes, an ACK every two segments; CWR does not matter.
    #[test]
    fn dctcp_feedback_echoes_each_segments_ce_state() {
        let (no, ce, cwr) = ((false, false), (true, false), (false, true));
        let got = acks(CeFeedback::Dctcp, &[no, ce, ce, ce, cwr, no, no]);
        let expected: Vec<Vec<(u64, bool)>> = vec![
            vec![],                      // delayed
            vec![(1, false), (2, true)], // change: the owed ACK, then this one
            vec![],                      // delayed
            vec![(4, true)],             // second segment
            vec![(5, false)],            // change, nothing owed; CWR ignored
            vec![],
            vec![(7, false)],
        ];
        assert_eq!(got, expected);
    }

    /// RFC 9768 §3.2.2: ACE counts CE packets from 5, modulo 8, on every ACK; a change of CE
    /// state is ACKed at once.
    #[test]
    fn accurate_feedback_counts_ce_packets_in_ace() {
        let mut cfg = settings();
        cfg.ecn = true;
        cfg.ecn_feedback = CeFeedback::Accurate;
        let mut r = Receiver::new(0, &cfg, None);
        let marks = [false, true, true, true, true, false, false];
        let mut got = Vec::new();
        for (k, &ce) in marks.iter().enumerate() {
            let mut io = Io::default();
            r.on_data(k as u64 * MS, &segment(k as u64, ce, false), &mut io);
            got.push(
                io.packets
                    .iter()
                    .map(|p| (p.seq / MSS, p.ace()))
                    .collect::<Vec<_>>(),
            );
        }
        let expected: Vec<Vec<(u64, u8)>> = vec![
            vec![],
            vec![(2, 6)], // a change: at once, one CE so far
            vec![],
            vec![(4, 0)], // second segment: three CE, 5 + 3 = 8 = 0 modulo 8
            vec![],
            vec![(6, 1)], // a change
            vec![],
        ];
        assert_eq!(got, expected);
    }

    /// RFC 3168 §6.1.3 for contrast: CE is ACKed at once and ECE stays on every ACK until CWR.
    #[test]
    fn classic_feedback_latches_ece_until_cwr() {
        let (no, ce, cwr) = ((false, false), (true, false), (false, true));
        let got = acks(CeFeedback::Classic, &[no, ce, no, no, cwr, no]);
        let expected: Vec<Vec<(u64, bool)>> = vec![
            vec![],
            vec![(2, true)],
            vec![],
            vec![(4, true)],
            vec![],
            vec![(6, false)],
        ];
        assert_eq!(got, expected);
    }
}
