//! The data sender: handshake, SACK scoreboard, RFC 6675 loss detection, PRR (RFC 6937) or
//! RFC 6675 recovery, RFC 6298 retransmission timer, pacing, and the controller interface.
//!
//! The sender sends only what the application has written ([`Sender::write`]): a bulk source
//! writes everything at once, a web server or a BitTorrent uploader writes each response as its
//! request arrives. Segments are numbered in send order; each holds up to one MSS of the bytes
//! written (shorter when the application had less, as with `TCP_NODELAY`: no Nagle delay).
//! Per-ACK work is amortised O(1) in the window: the scoreboard is a deque from `una`, SACK
//! blocks merge into a [`RangeSet`] that reports only newly covered segments, and the
//! loss-marking and retransmission cursors only move forward (until a timeout resets them).

use std::collections::VecDeque;

use slowstart_cc::estimators::PacketRateState;
use slowstart_cc::{
    AckEvent, CongestionController, CongestionEvent, Controller, Phase, RateSampler, RttEstimator,
    SentEvent,
};

use crate::config::{FlowConfig, LossDetection, Recovery};
use crate::engine::{Timer, TimerKind};
use crate::transport::packet::{Kind, Packet, CWR, ECE, ECT, RETRANSMISSION};
use crate::transport::ranges::RangeSet;
use crate::transport::Io;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission of this segment is in flight.
const RETRANS: u8 = 4;
/// Ever retransmitted: no RTT sample from it (Karn's rule, RFC 6298 §3).
const EVER_RETRANS: u8 = 8;

/// RFC 6675 §2 DupThresh.
const DUP_THRESH: u64 = 3;

#[derive(Clone, Copy, Debug)]
struct Segment {
    rate: PacketRateState,
    /// First byte's sequence number.
    seq: u64,
    len: u32,
    flags: u8,
}

impl Segment {
    fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Idle,
    SynSent,
    Established,
    /// Every byte is acknowledged.
    Done,
}

#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub data_packets_sent: u64,
    pub data_bytes_sent: u64,
    pub retransmits: u64,
    pub loss_events: u64,
    pub rto_count: u64,
    /// Retransmissions found lost before the retransmission timer fired.
    pub lost_retransmissions: u64,
    /// Tail loss probes sent (RFC 8985 §7).
    pub loss_probes: u64,
    /// Window reductions in response to ECN echoes (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// Round trips that ended while the sender waited on cwnd or the peer's window with data to
    /// send and less than a path BDP in flight (see [`Sender::set_stall_threshold`]).
    pub stalls: u64,
}

impl SenderStats {
    /// Add another connection's counts (a flow that opened a new connection).
    pub fn add(&mut self, o: &SenderStats) {
        self.data_packets_sent += o.data_packets_sent;
        self.data_bytes_sent += o.data_bytes_sent;
        self.retransmits += o.retransmits;
        self.loss_events += o.loss_events;
        self.rto_count += o.rto_count;
        self.lost_retransmissions += o.lost_retransmissions;
        self.loss_probes += o.loss_probes;
        self.ecn_reductions += o.ecn_reductions;
        self.stalls += o.stalls;
    }
}

pub struct Sender {
    flow: u32,
    mss: u64,
    header_bytes: u64,
    /// Bytes the application has written (`u64::MAX` for an unbounded source).
    written: u64,
    /// The application writes no more: the sender is done once `written` is acknowledged.
    closed: bool,
    /// Bytes acknowledged cumulatively, and bytes sent at least once.
    snd_una: u64,
    snd_nxt: u64,
    pub cc: Controller,
    pub rtt: RttEstimator,
    rate: RateSampler,
    pub state: State,
    una: u64,
    nxt: u64,
    segments: VecDeque<Segment>,
    sacked: RangeSet,
    /// Segments below this were examined by RFC 6675 loss marking.
    loss_frontier: u64,
    rtx_cursor: u64,
    out_bytes: u64,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    total_sent: u64,
    peer_rwnd: u64,
    max_window: u64,
    recovery: Recovery,
    in_recovery: bool,
    /// ECN (RFC 3168): data goes out ECT, and ECE reduces the window once per window.
    ecn: bool,
    /// Reacting to an ECN echo (Linux TCP_CA_CWR) until `una` passes `cwr_point`.
    in_cwr: bool,
    cwr_point: u64,
    /// The next new data segment carries CWR (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// RFC 6582 `recover`: no new congestion episode until `una` passes it.
    recover_point: u64,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    delivered_this_ack: u64,
    force_retransmit: bool,
    rto_backoff: u32,
    max_rto_ns: u64,
    syn_sent_ns: u64,
    syn_retransmitted: bool,
    pub rto_timer: Timer,
    pub pacing_timer: Timer,
    pacing_enabled: bool,
    next_send_ns: u64,
    blocked_by_cwnd: bool,
    /// When the cwnd last stopped the sender with something to send.
    cwnd_block_ns: Option<u64>,
    /// Most bytes outstanding since `cwnd_usage_seq` was passed (Linux `max_packets_out`, reset
    /// once a window after, in `tcp_cwnd_validate`).
    max_out_bytes: u64,
    cwnd_usage_seq: u64,
    /// The last `try_send` stopped on cwnd or a window with something left to send.
    window_blocked: bool,
    /// Segments sent at or after this time belong to the current round trip.
    round_start_ns: u64,
    /// Latest send time among the segments the current ACK delivered.
    newest_delivered_send: Option<u64>,
    /// Repairing after a retransmission timeout, until `una` passes `recover_point`.
    in_timeout_recovery: bool,
    /// RACK-TLP (RFC 8985) on top of RFC 6675's DupThresh rule.
    rack: bool,
    /// Original transmissions below this were examined by RACK's time rule.
    rack_frontier: u64,
    pub probe_timer: Timer,
    /// A tail loss probe is out and unanswered (one per tail, RFC 8985 §7.2).
    probe_out: bool,
    /// Retransmissions in send order (segment, send time), for lost-retransmission detection.
    retransmissions: VecDeque<(u64, u64)>,
    /// Segments whose retransmission was found lost, to send again before `rtx_cursor`'s.
    relost: VecDeque<u64>,
    stall_pipe_limit: u64,
    /// Cumulative ACK of the reverse (request) stream, carried by every data packet.
    pub piggyback_ack: u64,
    pub stats: SenderStats,
}

impl Sender {
    pub fn new(flow: u32, cfg: &FlowConfig, cc: Controller) -> Self {
        let mss = cfg.mss;
        Sender {
            flow,
            mss,
            header_bytes: cfg.header_bytes,
            written: 0,
            closed: false,
            snd_una: 0,
            snd_nxt: 0,
            cc,
            rtt: RttEstimator::new(cfg.min_rto_ns, cfg.max_rto_ns, 1_000_000),
            rate: RateSampler::new(),
            state: State::Idle,
            una: 0,
            nxt: 0,
            segments: VecDeque::new(),
            sacked: RangeSet::new(),
            loss_frontier: 0,
            rtx_cursor: 0,
            out_bytes: 0,
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            total_sent: 0,
            peer_rwnd: cfg.initrwnd * mss,
            max_window: cfg.max_window_bytes.unwrap_or(u64::MAX),
            recovery: cfg.recovery,
            in_recovery: false,
            ecn: cfg.ecn,
            in_cwr: false,
            cwr_point: 0,
            cwr_pending: false,
            recover_point: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            delivered_this_ack: 0,
            force_retransmit: false,
            rto_backoff: 0,
            max_rto_ns: cfg.max_rto_ns,
            syn_sent_ns: 0,
            syn_retransmitted: false,
            rto_timer: Timer::default(),
            pacing_timer: Timer::default(),
            pacing_enabled: cfg.pacing,
            next_send_ns: 0,
            blocked_by_cwnd: false,
            cwnd_block_ns: None,
            max_out_bytes: 0,
            cwnd_usage_seq: 0,
            window_blocked: false,
            round_start_ns: 0,
            newest_delivered_send: None,
            in_timeout_recovery: false,
            rack: cfg.loss_detection == LossDetection::Rack,
            rack_frontier: 0,
            probe_timer: Timer::default(),
            probe_out: false,
            retransmissions: VecDeque::new(),
            relost: VecDeque::new(),
            stall_pipe_limit: u64::MAX,
            piggyback_ack: 0,
            stats: SenderStats::default(),
        }
    }

    /// RFC 6675 `pipe` (Linux `tcp_packets_in_flight`, in bytes).
    pub fn pipe(&self) -> u64 {
        self.out_bytes - self.sacked_bytes - self.lost_bytes + self.retrans_bytes
    }

    pub fn delivered(&self) -> u64 {
        self.rate.delivered()
    }

    /// The application hands `bytes` more to send (`u64::MAX`: an unbounded source). Call
    /// [`Sender::try_send`] afterwards to send what the windows allow.
    pub fn write(&mut self, bytes: u64) {
        self.written = self.written.saturating_add(bytes);
    }

    /// The application will write no more.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Bytes written and not yet sent once.
    pub fn unsent_bytes(&self) -> u64 {
        self.written - self.snd_nxt
    }

    /// Count a round trip as a stall only while less than `bytes` are in flight: a sender
    /// waiting on its window with a path BDP in flight keeps the link busy and is not stalled.
    pub fn set_stall_threshold(&mut self, bytes: u64) {
        self.stall_pipe_limit = bytes.max(1);
    }

    pub fn cc_ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }

    pub fn phase(&self) -> Phase {
        self.cc.phase()
    }

    /// Bytes of data sent at least once (the highest sequence sent).
    pub fn highest_sent_bytes(&self) -> u64 {
        self.snd_nxt
    }

    /// Bytes acknowledged cumulatively.
    pub fn acked_bytes(&self) -> u64 {
        self.snd_una
    }

    /// Payload of segment `k` (sent, or the next new one when `k == nxt`).
    fn segment_len(&self, k: u64) -> u64 {
        if k < self.nxt {
            self.segments[(k - self.una) as usize].len as u64
        } else {
            (self.written - self.snd_nxt).min(self.mss)
        }
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

    fn arm_rto(&mut self, now: u64, io: &mut Io) {
        // RFC 6298 §5.5: back off by doubling, up to the maximum RTO.
        let rto = self
            .rtt
            .rto()
            .saturating_mul(1 << self.rto_backoff.min(32))
            .min(self.max_rto_ns);
        if let Some(t) = self.rto_timer.set(Some(now + rto)) {
            io.wake(t, self.flow, TimerKind::Retransmission);
        }
    }

    /// The application starts: open the connection (or start sending at once without handshake).
    pub fn start(&mut self, now: u64, handshake: bool, io: &mut Io) {
        if handshake {
            self.state = State::SynSent;
            self.syn_sent_ns = now;
            io.send(Packet::control(
                self.flow,
                Kind::Syn,
                self.header_bytes as u32,
                now,
            ));
            self.arm_rto(now, io);
        } else {
            self.state = State::Established;
            self.try_send(now, io);
        }
    }

    /// The handshake completed: the SYN's RTT is the first sample (Linux seeds srtt from it).
    pub fn on_syn_ack(&mut self, now: u64, pkt: &Packet, io: &mut Io) {
        if self.state != State::SynSent {
            return;
        }
        if !self.syn_retransmitted {
            self.rtt.on_sample(now - self.syn_sent_ns);
            self.cc.on_rtt_sample(now, now - self.syn_sent_ns);
        }
        self.rto_backoff = 0;
        let _ = self.rto_timer.set(None);
        self.peer_rwnd = pkt.rwnd;
        self.state = State::Established;
        self.try_send(now, io);
    }

    fn mark_delivered(&mut self, now: u64, seg: &Segment, newest_clean_send: &mut Option<u64>) {
        self.rate
            .on_packet_delivered(now, &seg.rate, seg.len as u64);
        self.delivered_this_ack += seg.len as u64;
        let sent = seg.rate.sent_time;
        self.newest_delivered_send = Some(self.newest_delivered_send.map_or(sent, |s| s.max(sent)));
        if seg.flags & EVER_RETRANS == 0 {
            let sent = seg.rate.sent_time;
            *newest_clean_send = Some(newest_clean_send.map_or(sent, |s: u64| s.max(sent)));
        }
    }

    /// Clear LOST/RETRANS accounting of a segment leaving the network (acked or SACKed).
    fn clear_in_flight_marks(&mut self, flags: u8, len: u64) {
        if flags & LOST != 0 {
            self.lost_bytes -= len;
        }
        if flags & RETRANS != 0 {
            self.retrans_bytes -= len;
        }
    }

    pub fn on_ack(&mut self, now: u64, ack: &Packet, io: &mut Io) -> AckOutcome {
        if self.state != State::Established {
            return AckOutcome::default();
        }
        let prior_in_flight = self.pipe();
        let cwnd_before = self.cc.cwnd();
        self.delivered_this_ack = 0;
        self.newest_delivered_send = None;
        let mut newest_clean_send = None;
        let una_before = self.una;
        // Cumulative acknowledgement.
        while self.segments.front().is_some_and(|g| g.end() <= ack.seq) {
            let seg = self.segments.pop_front().expect("checked");
            let len = seg.len as u64;
            self.snd_una = seg.end();
            if seg.flags & SACKED != 0 {
                self.sacked_bytes -= len;
            } else {
                self.clear_in_flight_marks(seg.flags, len);
                self.mark_delivered(now, &seg, &mut newest_clean_send);
            }
            self.out_bytes -= len;
            self.una += 1;
        }
        let advanced = self.una > una_before;
        if advanced {
            self.sacked.remove_below(self.una);
            self.rto_backoff = 0;
        }
        // SACK blocks (RFC 2018): mark newly covered segments only.
        for i in 0..ack.sack_count as usize {
            let (s, e) = ack.sack_block(i);
            let first = self.una + self.first_starting_at_or_after(s) as u64;
            let last = self.una + self.first_ending_after(e) as u64;
            if first >= last {
                continue;
            }
            let mut newly = std::mem::take(&mut self.sacked);
            newly.insert(first, last, |a, b| {
                for k in a..b {
                    let idx = (k - self.una) as usize;
                    let seg = self.segments[idx];
                    let len = seg.len as u64;
                    self.clear_in_flight_marks(seg.flags, len);
                    self.sacked_bytes += len;
                    self.mark_delivered(now, &seg, &mut newest_clean_send);
                    self.segments[idx].flags = (seg.flags | SACKED) & !(LOST | RETRANS);
                }
            });
            self.sacked = newly;
        }
        self.peer_rwnd = ack.rwnd;
        if let Some(sent) = newest_clean_send {
            self.rtt.on_sample(now - sent);
        } else if advanced && ack.sent_ns > 0 && ack.sent_ns <= now {
            // Only retransmissions acknowledged: Karn's rule forbids their RTT, but the
            // timestamp echo gives one (RFC 7323 §4; Linux tcp_ack_update_rtt falls back to
            // TSecr), so srtt and the pacing rate do not freeze after a timeout.
            self.rtt.on_sample(now - ack.sent_ns);
        }
        // Loss detection and recovery episodes.
        self.detect_lost_retransmissions();
        let newly_lost = self.mark_losses() + self.rack_mark_losses();
        if advanced {
            self.probe_out = false;
        }
        // A recovery episode, fast or after a timeout, ends once everything outstanding at its
        // start is acknowledged.
        if (self.in_recovery || self.in_timeout_recovery) && self.una >= self.recover_point {
            self.in_recovery = false;
            self.in_timeout_recovery = false;
            self.cc.on_recovery_exit(now);
        }
        let mut outcome = AckOutcome::default();
        if newly_lost > 0 && !self.in_recovery && self.una >= self.recover_point {
            self.in_recovery = true;
            self.recover_point = self.nxt;
            self.prr_delivered = 0;
            self.prr_out = 0;
            self.recover_fs = prior_in_flight.max(1);
            self.force_retransmit = true;
            self.stats.loss_events += 1;
            outcome.loss_event = true;
            self.cc.on_congestion_event(&CongestionEvent {
                ecn: false,
                now,
                bytes_lost: newly_lost,
                bytes_in_flight: prior_in_flight,
                mss: self.mss,
            });
        }
        if self.ecn {
            self.on_ecn_echo(now, ack, prior_in_flight);
        }
        if self.in_recovery {
            self.prr_delivered += self.delivered_this_ack;
        }
        // A round trip ends when a segment sent in it is delivered (Linux/BBR round counting).
        if self
            .newest_delivered_send
            .is_some_and(|sent| sent >= self.round_start_ns)
        {
            if self.window_blocked && prior_in_flight < self.stall_pipe_limit {
                self.stats.stalls += 1;
            }
            self.round_start_ns = now;
        }
        let sample = self.rate.take_sample(self.rtt.min_rtt());
        if self.delivered_this_ack > 0 {
            let in_slow_start =
                self.cc.phase().is_initial_slow_start() || self.cc.cwnd() < self.cc.ssthresh();
            // Linux `tcp_is_cwnd_limited`: in slow start, also while cwnd is below twice the
            // most outstanding this window (`max_packets_out`).
            let cwnd_limited =
                self.blocked_by_cwnd || (in_slow_start && 2 * self.max_out_bytes > cwnd_before);
            let event = AckEvent {
                now,
                bytes_acked: self.delivered_this_ack,
                mss: self.mss,
                rtt: newest_clean_send.map(|s| now - s),
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                one_way_delay: Some(ack.owd_ns),
                rate: sample,
                delivered: self.rate.delivered(),
                prior_in_flight,
                bytes_in_flight: self.pipe(),
                cwnd_limited,
                sent_before_cwnd_block: match (self.cwnd_block_ns, self.newest_delivered_send) {
                    (None, _) => true,
                    (Some(block), Some(sent)) => sent <= block,
                    (Some(_), None) => false,
                },
                in_recovery: self.in_recovery || self.in_cwr,
            };
            self.cc.on_ack(&event);
        }
        // RFC 6298 §5.2-5.3: stop the timer when nothing is outstanding, restart it on new data.
        if self.out_bytes == 0 {
            let _ = self.rto_timer.set(None);
        } else if advanced {
            self.arm_rto(now, io);
        }
        self.arm_loss_probe(now, io);
        if self.closed && self.snd_una >= self.written {
            self.state = State::Done;
            let _ = self.rto_timer.set(None);
            let _ = self.probe_timer.set(None);
            let _ = self.pacing_timer.set(None);
        } else {
            self.try_send(now, io);
        }
        outcome.delivered = self.delivered_this_ack;
        outcome
    }

    /// RFC 6675 §4 IsLost: a segment with DupThresh SACKed segments above it is lost. The
    /// DupThresh-th highest SACKed segment bounds them; marking moves forward only.
    fn mark_losses(&mut self) -> u64 {
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
            }
            k += 1;
        }
        self.loss_frontier = self.loss_frontier.max(upto);
        self.lost_bytes += newly;
        newly
    }

    /// A retransmission is lost when a segment sent more than a reordering window after it has
    /// been delivered (RACK, RFC 8985 §6.2, applied to retransmissions as Linux does): it is
    /// marked for sending again instead of waiting for the retransmission timer.
    fn detect_lost_retransmissions(&mut self) {
        let Some(newest) = self.newest_delivered_send else {
            return;
        };
        let reordering_window = self.rtt.min_rtt() / 4;
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
                self.retrans_bytes -= seg.len as u64;
                self.relost.push_back(k);
                self.stats.lost_retransmissions += 1;
            }
        }
    }

    /// RFC 8985 §6.2: an original transmission is lost once a segment sent more than a
    /// reordering window (min RTT / 4) after it has been delivered. Originals are in send order,
    /// so the examined prefix only grows; retransmissions are handled by
    /// [`Self::detect_lost_retransmissions`].
    fn rack_mark_losses(&mut self) -> u64 {
        if !self.rack {
            return 0;
        }
        let Some(newest) = self.newest_delivered_send else {
            return 0;
        };
        let reordering_window = self.rtt.min_rtt() / 4;
        let mut k = self.rack_frontier.max(self.una);
        let mut newly = 0;
        while k < self.nxt {
            let seg = &mut self.segments[(k - self.una) as usize];
            if seg.flags & EVER_RETRANS == 0 {
                if seg.rate.sent_time + reordering_window >= newest {
                    break;
                }
                if seg.flags & (SACKED | LOST) == 0 {
                    seg.flags |= LOST;
                    newly += seg.len as u64;
                }
            }
            k += 1;
        }
        self.rack_frontier = k;
        self.loss_frontier = self.loss_frontier.max(k);
        self.lost_bytes += newly;
        newly
    }

    /// RFC 8985 §7.2: probe after 2 SRTT without progress while data is outstanding and no
    /// recovery runs; with one segment in flight, allow for a delayed ACK (200 ms worst case).
    fn arm_loss_probe(&mut self, now: u64, io: &mut Io) {
        let eligible = self.rack
            && !self.probe_out
            && self.out_bytes > 0
            && !self.in_recovery
            && !self.in_timeout_recovery
            && self.rtt.has_sample();
        if !eligible {
            let _ = self.probe_timer.set(None);
            return;
        }
        let mut pto = 2 * self.rtt.srtt();
        if self.out_bytes <= self.mss {
            pto += 200_000_000;
        }
        let deadline = now + pto.max(10_000_000);
        if self.rto_timer.deadline().is_some_and(|rto| deadline >= rto) {
            let _ = self.probe_timer.set(None);
            return;
        }
        if let Some(t) = self.probe_timer.set(Some(deadline)) {
            io.wake(t, self.flow, TimerKind::LossProbe);
        }
    }

    /// The loss probe fired (RFC 8985 §7.3): send one new segment if the windows allow, else
    /// retransmit the last one; its ACK shows which of the tail was lost.
    pub fn on_loss_probe(&mut self, now: u64, io: &mut Io) {
        if self.state != State::Established || self.out_bytes == 0 || self.in_recovery {
            return;
        }
        let window = self.peer_rwnd.min(self.max_window);
        let new_len = self.segment_len(self.nxt);
        let new_fits = self.snd_nxt < self.written
            && self.snd_nxt + new_len <= self.snd_una.saturating_add(window);
        if new_fits {
            self.transmit(now, self.nxt, false, io);
        } else {
            let last = self.nxt - 1;
            if self.segments[(last - self.una) as usize].flags & SACKED != 0 {
                return;
            }
            self.transmit(now, last, true, io);
        }
        self.probe_out = true;
        self.stats.loss_probes += 1;
        // §7.3: the retransmission timer restarts after a probe.
        let _ = self.rto_timer.set(None);
        self.arm_rto(now, io);
    }

    /// The first segment marked lost and not yet retransmitted (RFC 6675 NextSeg rule 1),
    /// retransmissions found lost first.
    fn next_lost(&mut self) -> Option<u64> {
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

    /// Bytes the congestion state allows now (PRR, RFC 6937 §3, during recovery).
    fn send_allowance(&self, pipe: u64) -> u64 {
        let cwnd = self.cc.cwnd();
        let ssthresh = self.cc.ssthresh();
        if !self.in_recovery || self.recovery == Recovery::Rfc6675 || ssthresh == u64::MAX {
            return cwnd.saturating_sub(pipe);
        }
        if pipe > ssthresh {
            // Proportional part: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = (self.prr_delivered as u128 * ssthresh as u128)
                .div_ceil(self.recover_fs as u128) as u64;
            target.saturating_sub(self.prr_out)
        } else {
            // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS.
            let limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(self.delivered_this_ack)
                + self.mss;
            (ssthresh - pipe).min(limit)
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r.max(1));
        }
        if !self.pacing_enabled || !self.rtt.has_sample() {
            return None;
        }
        // Linux tcp_update_pacing_rate: 200% of cwnd/srtt in slow start, 120% after.
        let ratio = if self.cc.cwnd() < self.cc.ssthresh() / 2 {
            200
        } else {
            120
        };
        let srtt = self.rtt.srtt().max(1);
        Some(((self.cc.cwnd() as u128 * ratio * 1_000_000_000 / 100) / srtt as u128).max(1) as u64)
    }

    /// Send what the windows and the pacer allow.
    pub fn try_send(&mut self, now: u64, io: &mut Io) {
        if self.state != State::Established {
            return;
        }
        self.blocked_by_cwnd = false;
        self.window_blocked = false;
        let pacing = self.pacing_rate();
        loop {
            if pacing.is_some() && self.next_send_ns > now {
                if let Some(t) = self.pacing_timer.set(Some(self.next_send_ns)) {
                    io.wake(t, self.flow, TimerKind::Pacing);
                }
                return;
            }
            let pipe = self.pipe();
            let (k, retransmission) = if let Some(k) = self.next_lost() {
                (k, true)
            } else if self.snd_nxt < self.written {
                (self.nxt, false)
            } else {
                if self.cc.cwnd() > pipe {
                    self.rate.on_app_limited(pipe);
                }
                return;
            };
            let len = self.segment_len(k);
            let mut allowed = self.send_allowance(pipe);
            if self.force_retransmit && retransmission {
                allowed = allowed.max(len);
            }
            // A full cwnd counts as cwnd-limited even when a window also binds (Linux
            // `tcp_is_cwnd_limited`: in flight >= cwnd).
            if allowed < len {
                self.blocked_by_cwnd = true;
                self.cwnd_block_ns = Some(now);
                self.window_blocked = true;
                return;
            }
            // New data must also fit the receiver's and the sender's windows.
            let window = self.peer_rwnd.min(self.max_window);
            if !retransmission && self.snd_nxt + len > self.snd_una.saturating_add(window) {
                self.window_blocked = true;
                return;
            }
            self.transmit(now, k, retransmission, io);
            if let Some(rate) = pacing {
                let wire = len + self.header_bytes;
                let quantum = self
                    .cc
                    .send_quantum()
                    .unwrap_or(2 * (self.mss + self.header_bytes));
                let burst_ns = (quantum as u128 * 1_000_000_000 / rate as u128) as u64;
                let gap = (wire as u128 * 1_000_000_000 / rate as u128) as u64;
                self.next_send_ns = self.next_send_ns.max(now.saturating_sub(burst_ns)) + gap;
            }
        }
    }

    /// RFC 3168 §6.1.2: an ACK with ECE reduces the window as a loss would, at most once per
    /// window of data and not during loss recovery, without retransmitting anything; the next
    /// new segment (`cwr_point`) carries CWR. ECE is ignored until an ACK covers that segment,
    /// so the receiver has seen CWR (ns-2's `recover_` rule); a controller that entered its
    /// recovery phase for the reduction is told then that it is over.
    fn on_ecn_echo(&mut self, now: u64, ack: &Packet, prior_in_flight: u64) {
        if self.in_cwr && self.una > self.cwr_point {
            self.in_cwr = false;
            if self.cc.phase() == slowstart_cc::Phase::Recovery && !self.in_recovery {
                self.cc.on_recovery_exit(now);
            }
        }
        if !ack.has(ECE) || self.in_cwr || self.in_recovery || self.in_timeout_recovery {
            return;
        }
        self.in_cwr = true;
        self.cwr_point = self.nxt;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        self.cc.on_congestion_event(&CongestionEvent {
            ecn: true,
            now,
            bytes_lost: 0,
            bytes_in_flight: prior_in_flight,
            mss: self.mss,
        });
    }

    fn transmit(&mut self, now: u64, k: u64, retransmission: bool, io: &mut Io) {
        let pipe_before = self.pipe();
        let len = self.segment_len(k);
        let snapshot = self.rate.on_packet_sent(now, pipe_before);
        if k == self.nxt {
            self.segments.push_back(Segment {
                rate: snapshot,
                seq: self.snd_nxt,
                len: len as u32,
                flags: 0,
            });
            self.nxt += 1;
            self.snd_nxt += len;
            self.out_bytes += len;
            // Linux tcp_cwnd_validate: the most outstanding this window, restarted once the
            // data outstanding at the last restart is acknowledged.
            if self.snd_una >= self.cwnd_usage_seq || self.out_bytes > self.max_out_bytes {
                self.max_out_bytes = self.out_bytes;
                self.cwnd_usage_seq = self.snd_nxt;
            }
        }
        let seg = &mut self.segments[(k - self.una) as usize];
        seg.rate = snapshot;
        let seq = seg.seq;
        if retransmission {
            self.retransmissions.push_back((k, now));
            seg.flags |= RETRANS | EVER_RETRANS;
            self.retrans_bytes += len;
            self.stats.retransmits += 1;
            self.force_retransmit = false;
        }
        if self.in_recovery {
            self.prr_out += len;
        }
        self.total_sent += len;
        self.stats.data_packets_sent += 1;
        if !self.probe_out && self.probe_timer.deadline().is_none() {
            self.arm_loss_probe(now, io);
        }
        self.stats.data_bytes_sent += len;
        let mut p = Packet::control(self.flow, Kind::Data, (len + self.header_bytes) as u32, now);
        p.seq = seq;
        p.len = len as u32;
        p.set(RETRANSMISSION, retransmission);
        // RFC 3168 §6.1.5: retransmissions are not sent ECN-capable.
        p.set(ECT, self.ecn && !retransmission);
        if self.cwr_pending && !retransmission {
            p.set(CWR, true);
            self.cwr_pending = false;
        }
        p.rwnd = self.piggyback_ack;
        io.send(p);
        self.cc.on_packet_sent(&SentEvent {
            now,
            bytes: len,
            bytes_in_flight: self.pipe(),
            total_sent: self.total_sent,
            retransmission,
        });
        // RFC 6298 §5.1; Linux also restarts the timer when it retransmits the head segment, so
        // a repair in progress is not cut short by a timer armed for the lost original.
        if self.rto_timer.deadline().is_none() || (retransmission && k == self.una) {
            let _ = self.rto_timer.set(None);
            self.arm_rto(now, io);
        }
    }

    /// The retransmission timer fired (RFC 6298 §5.4-5.6, RFC 6675 §5.1).
    pub fn on_rto(&mut self, now: u64, io: &mut Io) {
        match self.state {
            State::SynSent => {
                self.syn_retransmitted = true;
                self.rto_backoff += 1;
                io.send(Packet::control(
                    self.flow,
                    Kind::Syn,
                    self.header_bytes as u32,
                    now,
                ));
                self.arm_rto(now, io);
            }
            State::Established if self.out_bytes > 0 => {
                // Linux arms the probe in place of the timer: when the probe would not have come
                // first, the timer's first expiry sends it (RFC 8985 §7.2, PTO = min(PTO, RTO)).
                let probe_first =
                    self.rack && !self.probe_out && !self.in_recovery && !self.in_timeout_recovery;
                if probe_first {
                    self.on_loss_probe(now, io);
                    if self.probe_out {
                        return;
                    }
                }
                self.stats.rto_count += 1;
                self.cc.on_rto(now, self.pipe());
                // Everything not SACKed is presumed lost; retransmissions in flight are forgotten.
                let mut lost = 0;
                for seg in self.segments.iter_mut() {
                    if seg.flags & SACKED == 0 {
                        seg.flags = (seg.flags | LOST) & !RETRANS;
                        lost += seg.len as u64;
                    }
                }
                self.lost_bytes = lost;
                self.retrans_bytes = 0;
                self.retransmissions.clear();
                self.relost.clear();
                self.loss_frontier = self.nxt;
                self.rtx_cursor = self.una;
                self.in_recovery = false;
                self.in_timeout_recovery = true;
                let _ = self.probe_timer.set(None);
                self.rack_frontier = self.nxt;
                self.recover_point = self.nxt;
                self.rto_backoff += 1;
                self.next_send_ns = now;
                self.try_send(now, io);
                self.arm_rto(now, io);
            }
            _ => {}
        }
    }

    pub fn on_pacing_timer(&mut self, now: u64, io: &mut Io) {
        self.try_send(now, io);
    }

    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}

/// What one ACK did, for the flow's metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    pub delivered: u64,
    pub loss_event: bool,
}
