//! The sender's scoreboard: every segment from the oldest unacknowledged (`una`) to the next new
//! one (`nxt`), what the receiver has SACKed, and the loss rules that mark segments lost: RFC
//! 6675 IsLost (DupThresh SACKed segments above), the RACK time rule (RFC 8985 §6.2) for
//! original transmissions and, as Linux does, for retransmissions.
//!
//! Segments are numbered in send order from 0; `segments[k - una]` is segment `k`. Per-ACK work
//! is amortised O(1) in the window: SACK blocks merge into a [`RangeSet`] that reports only newly
//! covered segments, and the loss-marking and retransmission cursors only move forward (until a
//! timeout resets them).

use std::collections::VecDeque;

use slowstart_cc::estimators::PacketRateState;

use crate::ranges::{held_bytes, release_if_empty, RangeSet};

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission of this segment is in flight.
const RETRANS: u8 = 4;
/// Ever retransmitted: no RTT sample from it (Karn's rule, RFC 6298 §3).
const EVER_RETRANS: u8 = 8;

/// RFC 6675 §2 DupThresh.
const DUP_THRESH: u64 = 3;

/// Which rule found a segment lost (the triggers of qlog's `recovery:packet_lost`,
/// draft-ietf-quic-qlog-quic-events-03 §7.4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossTrigger {
    /// RFC 6675 IsLost: DupThresh SACKed segments above it.
    ReorderingThreshold,
    /// RACK's time rule (RFC 8985 §6.2), for originals and retransmissions.
    TimeThreshold,
    /// The retransmission timer expired (RFC 6298 §5.5).
    Timeout,
}

/// A segment found lost: its first byte, length and the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    pub seq: u64,
    pub len: u32,
    pub trigger: LossTrigger,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    /// The rate sampler's snapshot at the segment's latest transmission.
    pub rate: PacketRateState,
    /// First byte's sequence number.
    pub seq: u64,
    pub len: u32,
    flags: u8,
}

impl Segment {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }

    /// Sent once only: its ACK is an RTT sample.
    pub fn never_retransmitted(&self) -> bool {
        self.flags & EVER_RETRANS == 0
    }
}

pub(super) struct Scoreboard {
    mss: u64,
    /// Oldest unacknowledged segment and the next new one.
    una: u64,
    nxt: u64,
    /// Bytes acknowledged cumulatively, and bytes sent at least once.
    snd_una: u64,
    snd_nxt: u64,
    segments: VecDeque<Segment>,
    sacked: RangeSet,
    /// Segments below this were examined by RFC 6675 loss marking.
    loss_frontier: u64,
    rtx_cursor: u64,
    /// Original transmissions below this were examined by RACK's time rule.
    rack_frontier: u64,
    out_bytes: u64,
    /// RFC 6675 `pipe`: `out_bytes` less SACKed and lost bytes, plus retransmissions in flight,
    /// kept up to date as segments change state rather than summed per read.
    pipe: u64,
    /// Retransmissions in send order (segment, send time), for lost-retransmission detection.
    retransmissions: VecDeque<(u64, u64)>,
    /// Segments whose retransmission was found lost, to send again before `rtx_cursor`'s.
    relost: VecDeque<u64>,
    /// Losses found since the driver last took them, when it asked for them (qlog).
    pub losses: Option<Vec<Loss>>,
}

impl Scoreboard {
    pub fn new(mss: u64) -> Self {
        Scoreboard {
            mss,
            una: 0,
            nxt: 0,
            snd_una: 0,
            snd_nxt: 0,
            segments: VecDeque::new(),
            sacked: RangeSet::new(),
            loss_frontier: 0,
            rtx_cursor: 0,
            rack_frontier: 0,
            out_bytes: 0,
            pipe: 0,
            retransmissions: VecDeque::new(),
            relost: VecDeque::new(),
            losses: None,
        }
    }

    /// RFC 6675 `pipe` (Linux `tcp_packets_in_flight`, in bytes).
    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    /// Free the storage of the buffers left empty (every segment acknowledged: an idle
    /// sender's window of up to `max_window` segments, 56 bytes each).
    pub fn release_empty_buffers(&mut self) {
        release_if_empty(&mut self.segments);
        self.sacked.release_if_empty();
        release_if_empty(&mut self.retransmissions);
        release_if_empty(&mut self.relost);
    }

    /// Bytes of storage its buffers hold, empty or not.
    pub fn buffer_bytes(&self) -> usize {
        held_bytes(&self.segments)
            + self.sacked.buffer_bytes()
            + held_bytes(&self.retransmissions)
            + held_bytes(&self.relost)
    }

    /// Bytes sent and not cumulatively acknowledged, SACKed ones included.
    pub fn out_bytes(&self) -> u64 {
        self.out_bytes
    }

    pub fn una(&self) -> u64 {
        self.una
    }

    pub fn nxt(&self) -> u64 {
        self.nxt
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Payload of segment `k` (sent, or the next new one when `k == nxt`, of the `written`
    /// bytes).
    pub fn segment_len(&self, k: u64, written: u64) -> u64 {
        if k < self.nxt {
            self.segments[(k - self.una) as usize].len as u64
        } else {
            (written - self.snd_nxt).min(self.mss)
        }
    }

    /// Whether segment `k` (sent, not cumulatively acknowledged) is SACKed.
    pub fn is_sacked(&self, k: u64) -> bool {
        self.segments[(k - self.una) as usize].flags & SACKED != 0
    }

    /// Offset from `una` of the first segment starting at or after `byte`. Segments are one MSS
    /// except at write boundaries, so the guess by division is nearly always right.
    fn first_starting_at_or_after(&self, byte: u64) -> usize {
        let Some(front) = self.segments.front() else {
            return 0;
        };
        if byte <= front.seq {
            return 0;
        }
        if byte >= self.snd_nxt {
            return self.segments.len();
        }
        let guess = ((byte - front.seq) / self.mss) as usize;
        if self.segments.get(guess).is_some_and(|g| g.seq == byte) {
            return guess;
        }
        self.segments.partition_point(|g| g.seq < byte)
    }

    /// Offset from `una` of the first segment not wholly below `byte`.
    fn first_ending_after(&self, byte: u64) -> usize {
        let i = self.first_starting_at_or_after(byte);
        if i > 0 && self.segments[i - 1].end() > byte {
            i - 1
        } else {
            i
        }
    }

    /// A segment leaves the network (acked or SACKed): take it out of `pipe`, where it counts
    /// once, less once if lost, plus once per retransmission in flight.
    fn leave_pipe(&mut self, flags: u8, len: u64) {
        if flags & LOST != 0 {
            self.pipe += len;
        }
        if flags & RETRANS != 0 {
            self.pipe -= len;
        }
        self.pipe -= len;
    }

    /// Drop the segments wholly below the cumulative ACK `ack` (a byte number), calling
    /// `delivered` for each that was not already SACKed. True if `una` advanced.
    pub fn ack_cumulative(&mut self, ack: u64, mut delivered: impl FnMut(&Segment)) -> bool {
        let una_before = self.una;
        while let Some(&seg) = self.segments.front() {
            if seg.end() > ack {
                break;
            }
            self.segments.pop_front();
            let len = seg.len as u64;
            self.snd_una = seg.end();
            // A SACKed segment already left `pipe`.
            if seg.flags & SACKED == 0 {
                self.leave_pipe(seg.flags, len);
                delivered(&seg);
            }
            self.out_bytes -= len;
            self.una += 1;
        }
        let advanced = self.una > una_before;
        if advanced {
            self.sacked.remove_below(self.una);
        }
        advanced
    }

    /// A SACK block `[start, end)` (byte numbers, RFC 2018): mark the segments it newly
    /// covers, calling `delivered` for each.
    pub fn sack(&mut self, start: u64, end: u64, mut delivered: impl FnMut(&Segment)) {
        let first = self.una + self.first_starting_at_or_after(start) as u64;
        let last = self.una + self.first_ending_after(end) as u64;
        if first >= last {
            return;
        }
        let mut newly = std::mem::take(&mut self.sacked);
        newly.insert(first, last, |a, b| {
            for k in a..b {
                let idx = (k - self.una) as usize;
                let seg = self.segments[idx];
                let len = seg.len as u64;
                self.leave_pipe(seg.flags, len);
                delivered(&seg);
                self.segments[idx].flags = (seg.flags | SACKED) & !(LOST | RETRANS);
            }
        });
        self.sacked = newly;
    }

    /// RFC 6675 §4 IsLost: a segment with DupThresh SACKed segments above it is lost. The
    /// DupThresh-th highest SACKed segment bounds them; marking moves forward only. Returns the
    /// bytes newly marked lost.
    pub fn mark_losses(&mut self) -> u64 {
        let Some(bound) = self.sacked.nth_highest(DUP_THRESH) else {
            return 0;
        };
        let upto = bound.min(self.nxt);
        let mut newly = 0;
        let mut k = self.loss_frontier.max(self.una);
        while k < upto {
            let seg = &mut self.segments[(k - self.una) as usize];
            if seg.flags & (SACKED | LOST) == 0 {
                seg.flags |= LOST;
                newly += seg.len as u64;
                note(&mut self.losses, seg, LossTrigger::ReorderingThreshold);
            }
            k += 1;
        }
        self.loss_frontier = self.loss_frontier.max(upto);
        self.pipe -= newly;
        newly
    }

    /// A retransmission is lost when a segment sent more than `reordering_window` after it has
    /// been delivered (the newest delivered was sent at `newest`; RACK, RFC 8985 §6.2, applied
    /// to retransmissions as Linux does): it is marked for sending again instead of waiting for
    /// the retransmission timer. Returns how many were found lost.
    pub fn detect_lost_retransmissions(&mut self, newest: u64, reordering_window: u64) -> u64 {
        let mut found = 0;
        while let Some(&(k, sent)) = self.retransmissions.front() {
            if sent + reordering_window >= newest {
                break;
            }
            self.retransmissions.pop_front();
            if k < self.una {
                continue;
            }
            let seg = &mut self.segments[(k - self.una) as usize];
            if seg.flags & (RETRANS | SACKED) == RETRANS && seg.rate.sent_time == sent {
                seg.flags &= !RETRANS;
                self.pipe -= seg.len as u64;
                self.relost.push_back(k);
                note(&mut self.losses, seg, LossTrigger::TimeThreshold);
                found += 1;
            }
        }
        found
    }

    /// RFC 8985 §6.2: an original transmission is lost once a segment sent more than
    /// `reordering_window` after it has been delivered (the newest delivered was sent at
    /// `newest`). Originals are in send order, so the examined prefix only grows;
    /// retransmissions are [`Self::detect_lost_retransmissions`]'. Returns the bytes newly
    /// marked lost.
    pub fn rack_mark_losses(&mut self, newest: u64, reordering_window: u64) -> u64 {
        let mut k = self.rack_frontier.max(self.una);
        let mut newly = 0;
        // Disjoint borrows, so the deque's fields stay in registers across the loop.
        let (segments, losses, una) = (&mut self.segments, &mut self.losses, self.una);
        while k < self.nxt {
            let seg = &mut segments[(k - una) as usize];
            if seg.flags & EVER_RETRANS == 0 {
                if seg.rate.sent_time + reordering_window >= newest {
                    break;
                }
                if seg.flags & (SACKED | LOST) == 0 {
                    seg.flags |= LOST;
                    newly += seg.len as u64;
                    note(losses, seg, LossTrigger::TimeThreshold);
                }
            }
            k += 1;
        }
        self.rack_frontier = k;
        self.loss_frontier = self.loss_frontier.max(k);
        self.pipe -= newly;
        newly
    }

    /// The first segment marked lost and not yet retransmitted (RFC 6675 NextSeg rule 1),
    /// retransmissions found lost first.
    pub fn next_lost(&mut self) -> Option<u64> {
        while let Some(&k) = self.relost.front() {
            let pending = k >= self.una
                && self.segments[(k - self.una) as usize].flags & (LOST | RETRANS | SACKED) == LOST;
            if pending {
                return Some(k);
            }
            self.relost.pop_front();
        }
        self.rtx_cursor = self.rtx_cursor.max(self.una);
        let end = self.loss_frontier.min(self.nxt);
        while self.rtx_cursor < end {
            let seg = &self.segments[(self.rtx_cursor - self.una) as usize];
            if seg.flags & LOST != 0 && seg.flags & (RETRANS | SACKED) == 0 {
                return Some(self.rtx_cursor);
            }
            self.rtx_cursor += 1;
        }
        None
    }

    /// Segment `k` (the next new one when `k == nxt`) of `len` bytes leaves at `now` with the
    /// rate sampler's `snapshot`; returns its first byte's sequence number.
    pub fn on_transmit(
        &mut self,
        now: u64,
        k: u64,
        len: u64,
        snapshot: PacketRateState,
        retransmission: bool,
    ) -> u64 {
        let mut flags = 0;
        if retransmission {
            flags = RETRANS | EVER_RETRANS;
            self.retransmissions.push_back((k, now));
            // A retransmission in flight counts once in `pipe`, as it leaves it once
            // (`leave_pipe`): sent again while the first is out (a loss probe of the last
            // segment), it adds nothing.
            let in_flight =
                k < self.nxt && self.segments[(k - self.una) as usize].flags & RETRANS != 0;
            if !in_flight {
                self.pipe += len;
            }
        }
        if k == self.nxt {
            let seq = self.snd_nxt;
            self.segments.push_back(Segment {
                rate: snapshot,
                seq,
                len: len as u32,
                flags,
            });
            self.nxt += 1;
            self.snd_nxt += len;
            self.out_bytes += len;
            self.pipe += len;
            return seq;
        }
        let seg = &mut self.segments[(k - self.una) as usize];
        seg.rate = snapshot;
        seg.flags |= flags;
        seg.seq
    }

    /// The retransmission timer expired (RFC 6675 §5.1): everything not SACKed is presumed
    /// lost, retransmissions in flight are forgotten, and repair starts again from `una`.
    pub fn on_timeout(&mut self) {
        for seg in self.segments.iter_mut() {
            if seg.flags & SACKED == 0 {
                // Newly lost: never marked, or a retransmission in flight.
                if seg.flags & LOST == 0 || seg.flags & RETRANS != 0 {
                    note(&mut self.losses, seg, LossTrigger::Timeout);
                }
                seg.flags = (seg.flags | LOST) & !RETRANS;
            }
        }
        // Every segment outstanding is now SACKed or lost, none retransmitted: none in flight.
        self.pipe = 0;
        self.retransmissions.clear();
        self.relost.clear();
        self.loss_frontier = self.nxt;
        self.rtx_cursor = self.una;
        self.rack_frontier = self.nxt;
    }
}

fn note(losses: &mut Option<Vec<Loss>>, seg: &Segment, trigger: LossTrigger) {
    if let Some(l) = losses {
        l.push(Loss {
            seq: seg.seq,
            len: seg.len,
            trigger,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// A scoreboard with `n` full segments sent, segment k at time k ms.
    fn sent(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(MSS);
        for k in 0..n {
            let snapshot = PacketRateState {
                sent_time: k * 1_000_000,
                ..Default::default()
            };
            let len = b.segment_len(k, n * MSS);
            assert_eq!(
                b.on_transmit(k * 1_000_000, k, len, snapshot, false),
                k * MSS
            );
        }
        b
    }

    #[test]
    fn three_sacked_segments_above_mark_a_hole_lost_once() {
        let mut b = sent(10);
        assert_eq!(b.pipe(), 10 * MSS);
        let mut delivered = Vec::new();
        // Segment 0 acknowledged; 1 lost; 2..=4 SACKed.
        assert!(b.ack_cumulative(MSS, |s| delivered.push(s.seq)));
        b.sack(2 * MSS, 5 * MSS, |s| delivered.push(s.seq));
        assert_eq!(delivered, vec![0, 2 * MSS, 3 * MSS, 4 * MSS]);
        assert_eq!(
            b.mark_losses(),
            MSS,
            "segment 1 has DupThresh SACKed above it"
        );
        assert_eq!(b.mark_losses(), 0, "marked once");
        // pipe: 9 outstanding, 3 SACKed, 1 lost.
        assert_eq!(b.pipe(), 5 * MSS);
        assert_eq!(b.next_lost(), Some(1));
        // Re-reported SACK blocks deliver nothing new.
        b.sack(2 * MSS, 5 * MSS, |_| panic!("already SACKed"));
        // The retransmission is in flight again, then found lost by a later delivery.
        let snapshot = PacketRateState {
            sent_time: 20_000_000,
            ..Default::default()
        };
        b.on_transmit(20_000_000, 1, MSS, snapshot, true);
        assert_eq!(b.pipe(), 6 * MSS);
        assert_eq!(b.next_lost(), None);
        assert_eq!(b.detect_lost_retransmissions(30_000_000, 5_000_000), 1);
        assert_eq!(b.next_lost(), Some(1), "sent again before anything else");
    }

    /// The last segment retransmitted twice (a loss probe while its retransmission is out)
    /// counts once in `pipe`, as it leaves once: `pipe` is empty when all is acknowledged (it
    /// kept one segment, and the sender stalled with nothing in flight and no timer).
    #[test]
    fn a_segment_sent_again_while_retransmitted_counts_once_in_pipe() {
        let mut b = sent(3);
        for t in [10_000_000, 20_000_000] {
            let snapshot = PacketRateState {
                sent_time: t,
                ..Default::default()
            };
            b.on_transmit(t, 2, MSS, snapshot, true);
        }
        assert_eq!(
            b.pipe(),
            4 * MSS,
            "three segments, one retransmission in flight"
        );
        b.ack_cumulative(3 * MSS, |_| {});
        assert_eq!((b.out_bytes(), b.pipe()), (0, 0));
    }

    #[test]
    fn rack_marks_originals_sent_a_reordering_window_before_the_newest_delivered() {
        let mut b = sent(10);
        // Segment 9 (sent at 9 ms) is SACKed: with a 2 ms window, 0..=6 are lost.
        b.sack(9 * MSS, 10 * MSS, |_| {});
        assert_eq!(b.rack_mark_losses(9_000_000, 2_000_000), 7 * MSS);
        assert_eq!(b.rack_mark_losses(9_000_000, 2_000_000), 0);
        b.on_timeout();
        assert_eq!(b.pipe(), 0, "after a timeout all but the SACKed are lost");
        assert_eq!(b.next_lost(), Some(0));
    }
}
