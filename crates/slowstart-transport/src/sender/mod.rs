//! The data sender: handshake, the send loop and the controller interface, over the parts it is
//! made of: the `scoreboard` (SACK, RFC 6675 and RACK loss detection), `recovery` episodes
//! (PRR, RFC 6937, or RFC 6675), the RFC 6298 retransmission timer ([`crate::rto`]), the tail
//! loss `probe` (RFC 8985 §7) and the `pacer`.
//!
//! The sender sends only what the application has written ([`Sender::write`]): a bulk source
//! writes everything at once, a web server or a BitTorrent uploader writes each response as its
//! request arrives. Segments are numbered in send order; each holds up to one MSS of the bytes
//! written (shorter when the application had less, as with `TCP_NODELAY`: no Nagle delay).

mod pacer;
mod probe;
mod recovery;
mod scoreboard;
#[cfg(test)]
mod tests;

use slowstart_cc::{
    AckEvent, CongestionController, CongestionEvent, Controller, EcnCodepoint, EcnFeedback,
    NegotiatedEcn, Phase, RateSampler, RttEstimator, SentEvent,
};

use crate::packet::{Kind, Packet, CWR, ECE, RETRANSMISSION};
use crate::rto::RetransmissionTimer;
use crate::settings::{CeFeedback, CwndLimited, LossDetection, Settings};
use crate::timer::{Timer, TimerKind};
use crate::Io;
use pacer::Pacer;
use probe::LossProbe;
use recovery::Episodes;
pub use scoreboard::{Loss, LossTrigger};
use scoreboard::{Scoreboard, Segment};

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

/// What the ACK being processed delivered (acknowledged or SACKed for the first time).
#[derive(Clone, Copy, Debug, Default)]
struct Delivery {
    bytes: u64,
    /// Latest send time among the segments delivered.
    newest_send: Option<u64>,
    /// The same among segments sent once only (an RTT sample, Karn's rule).
    newest_clean_send: Option<u64>,
}

impl Delivery {
    fn add(&mut self, rate: &mut RateSampler, now: u64, seg: &Segment) {
        rate.on_packet_delivered(now, &seg.rate, seg.len as u64);
        self.bytes += seg.len as u64;
        let sent = seg.rate.sent_time;
        self.newest_send = Some(self.newest_send.map_or(sent, |s| s.max(sent)));
        if seg.never_retransmitted() {
            self.newest_clean_send = Some(self.newest_clean_send.map_or(sent, |s| s.max(sent)));
        }
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
    cc: Controller,
    rtt: RttEstimator,
    rate: RateSampler,
    state: State,
    board: Scoreboard,
    total_sent: u64,
    peer_rwnd: u64,
    max_window: u64,
    episodes: Episodes,
    /// ECN (RFC 3168): data goes out ECT, and ECE reduces the window once per window.
    ecn: bool,
    /// Reacting to an ECN echo (Linux TCP_CA_CWR) until `una` passes `cwr_point`.
    in_cwr: bool,
    /// The next new data segment carries CWR (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// What the latest ACK delivered (PRR's DeliveredData lasts until the next ACK).
    delivery: Delivery,
    /// The first retransmission of a recovery episode goes out whatever the allowance.
    force_retransmit: bool,
    rto: RetransmissionTimer,
    pacer: Pacer,
    blocked_by_cwnd: bool,
    /// Whether slow start also grows cwnd below twice the most outstanding.
    cwnd_rule: CwndLimited,
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
    /// RACK-TLP (RFC 8985) on top of RFC 6675's DupThresh rule.
    rack: bool,
    probe: LossProbe,
    /// Cumulative ACK of the reverse (request) stream, carried by every data packet.
    piggyback_ack: u64,
    stats: SenderStats,
    /// What the handshake, ECN's echoes and a round's end touch, apart (below).
    cold: Box<SenderCold>,
}

/// The sender's state that an ACK or a new segment does not touch (read at the handshake, on
/// an ECN echo, once a round), kept out of line so that what they touch stays on fewer cache
/// lines (issue #28's hot and cold state; the measurements are in bench/README.md).
struct SenderCold {
    /// What the handshake asks for and settles (see [`Settings::settle_ecn`]).
    ecn_settings: Settings,
    /// Every packet goes out ECT, SYN and retransmissions too: Linux does so for a controller
    /// that needs ECN (tcp_output.c `tcp_ecn_send`, `tcp_ecn_send_syn`: `tcp_ca_needs_ecn`),
    /// so DCTCP's step, which drops what it cannot mark, does not drop them.
    ect_all: bool,
    /// Accurate ECN (RFC 9768 §3.2.2): marks are counted from the ACE field's increase over
    /// `s_cep` (CE packets the receiver reported, modulo 8, from 5); no CWR is sent.
    accurate: bool,
    s_cep: u8,
    /// The segment whose ACK ends the current ECN reduction (see `Sender::on_ecn_echo`).
    cwr_point: u64,
    syn_sent_ns: u64,
    /// SYNs retransmitted (RFC 9768 §3.1.4.1 counts them; Karn's rule skips their RTT).
    syn_retransmissions: u32,
    /// See [`Sender::set_stall_threshold`].
    stall_pipe_limit: u64,
}

impl Sender {
    /// Bytes a sender holds out of line from the start (its cold state), for a driver that
    /// sizes its memory before it runs (issue #37).
    pub const OUT_OF_LINE_BYTES: usize = std::mem::size_of::<SenderCold>();
    /// Bytes of the scoreboard's record of one segment in flight.
    pub const SEGMENT_BYTES: usize = std::mem::size_of::<Segment>();

    pub fn new(flow: u32, cfg: &Settings, cc: Controller) -> Self {
        let mss = cfg.mss;
        Sender {
            flow,
            mss,
            header_bytes: cfg.header_bytes,
            written: 0,
            closed: false,
            cc,
            rtt: RttEstimator::new(cfg.min_rto_ns, cfg.max_rto_ns, 1_000_000),
            rate: RateSampler::new(),
            state: State::Idle,
            board: Scoreboard::new(mss),
            total_sent: 0,
            peer_rwnd: cfg.initrwnd * mss,
            max_window: cfg.max_window_bytes.unwrap_or(u64::MAX),
            episodes: Episodes::new(cfg.recovery, cfg.ecn_reduction),
            ecn: false,
            in_cwr: false,
            cwr_pending: false,
            delivery: Delivery::default(),
            force_retransmit: false,
            rto: RetransmissionTimer::new(cfg.max_rto_ns),
            pacer: Pacer::new(cfg.pacing, cfg.pacer),
            blocked_by_cwnd: false,
            cwnd_rule: cfg.cwnd_limited,
            cwnd_block_ns: None,
            max_out_bytes: 0,
            cwnd_usage_seq: 0,
            window_blocked: false,
            round_start_ns: 0,
            rack: cfg.loss_detection == LossDetection::Rack,
            probe: LossProbe::new(),
            piggyback_ack: 0,
            stats: SenderStats::default(),
            cold: Box::new(SenderCold {
                ecn_settings: cfg.clone(),
                ect_all: false,
                accurate: false,
                s_cep: 5,
                cwr_point: 0,
                syn_sent_ns: 0,
                syn_retransmissions: 0,
                stall_pipe_limit: u64::MAX,
            }),
        }
    }

    // ------------------------------------------------------------------ what the driver reads

    pub fn state(&self) -> State {
        self.state
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// RFC 6675 `pipe` (Linux `tcp_packets_in_flight`, in bytes).
    pub fn pipe(&self) -> u64 {
        self.board.pipe()
    }

    /// Bytes delivered so far (the rate sampler's count: acknowledged or SACKed).
    pub fn delivered(&self) -> u64 {
        self.rate.delivered()
    }

    pub fn cwnd(&self) -> u64 {
        self.cc.cwnd()
    }

    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    pub fn phase(&self) -> Phase {
        self.cc.phase()
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The rate the sender paces at, bytes per second, if it paces.
    pub fn pacing_rate(&self) -> Option<u64> {
        self.pacer.rate(&self.cc, &self.rtt)
    }

    /// Bytes of data sent at least once (the highest sequence sent).
    pub fn highest_sent_bytes(&self) -> u64 {
        self.board.snd_nxt()
    }

    /// Bytes acknowledged cumulatively.
    pub fn acked_bytes(&self) -> u64 {
        self.board.snd_una()
    }

    /// Bytes written and not yet sent once.
    pub fn unsent_bytes(&self) -> u64 {
        self.written - self.board.snd_nxt()
    }

    /// Everything written has been sent and acknowledged.
    pub fn drained(&self) -> bool {
        self.written == self.board.snd_una()
    }

    pub fn in_recovery(&self) -> bool {
        self.episodes.in_fast_recovery()
    }

    /// The earliest deadline of the sender's timers, or [`crate::timer::NEVER`].
    #[inline]
    pub(crate) fn next_deadline(&self) -> u64 {
        let (rto, probe, pacing) = (self.rto.timer(), self.probe.timer(), self.pacer.timer());
        rto.at().min(probe.at()).min(pacing.at())
    }

    /// The sender's timer of `kind` (retransmission, loss probe or pacing), for the
    /// connection to fire ([`crate::Connection::handle_timeouts`]).
    pub(crate) fn timer_mut(&mut self, kind: TimerKind) -> Option<&mut Timer> {
        match kind {
            TimerKind::Retransmission => Some(self.rto.timer_mut()),
            TimerKind::LossProbe => Some(self.probe.timer_mut()),
            TimerKind::Pacing => Some(self.pacer.timer_mut()),
            _ => None,
        }
    }

    /// Keep the segments found lost, for [`Sender::take_losses`] (a qlog wants them).
    pub fn log_losses(&mut self, on: bool) {
        self.board.losses = on.then(Vec::new);
    }

    /// The segments found lost since the last call, in the order found (none unless
    /// [`Sender::log_losses`]).
    pub fn take_losses(&mut self) -> impl Iterator<Item = Loss> + '_ {
        self.board.losses.iter_mut().flat_map(|l| l.drain(..))
    }

    // ----------------------------------------------------------------- what the driver tells

    /// The application hands `bytes` more to send (`u64::MAX`: an unbounded source). Call
    /// [`Sender::try_send`] afterwards to send what the windows allow.
    pub fn write(&mut self, bytes: u64) {
        self.written = self.written.saturating_add(bytes);
    }

    /// The application will write no more.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Count a round trip as a stall only while less than `bytes` are in flight: a sender
    /// waiting on its window with a path BDP in flight keeps the link busy and is not stalled.
    pub fn set_stall_threshold(&mut self, bytes: u64) {
        self.cold.stall_pipe_limit = bytes.max(1);
    }

    /// Free the storage of the scoreboard's buffers left empty (nothing in flight): an idle
    /// sender then holds its fixed fields only; what it sends next is unchanged.
    pub fn release_empty_buffers(&mut self) {
        self.board.release_empty_buffers();
    }

    /// Bytes of storage its scoreboard's buffers hold, empty or not.
    pub fn buffer_bytes(&self) -> usize {
        self.board.buffer_bytes()
    }

    /// The request stream's cumulative ACK, for the data packets to carry.
    pub fn set_piggyback_ack(&mut self, ack: u64) {
        self.piggyback_ack = ack;
    }

    fn arm_rto(&mut self, now: u64) {
        self.rto.arm(now, &self.rtt);
    }

    /// RFC 8985 §7.2: probe after 2 SRTT without progress while data is outstanding and no
    /// recovery runs.
    fn arm_loss_probe(&mut self, now: u64) {
        let eligible = self.rack && self.board.out_bytes() > 0 && !self.episodes.in_any();
        self.probe.arm(
            now,
            eligible,
            &self.rtt,
            self.board.out_bytes(),
            self.mss,
            self.rto.deadline(),
        );
    }

    /// The application starts: open the connection (or start sending at once without handshake).
    pub fn start(&mut self, now: u64, handshake: bool, io: &mut Io) {
        if handshake {
            self.state = State::SynSent;
            self.cold.syn_sent_ns = now;
            io.send(self.syn(now, 0));
            self.arm_rto(now);
        } else {
            // No SYN to ask with: the flow starts as a handshake answered at once would leave it.
            self.use_ecn(self.cold.ecn_settings.sender_feedback());
            self.state = State::Established;
            self.try_send(now, io);
        }
    }

    /// The SYN (`retransmission` 0 the first): RFC 3168 §6.1.1's ECN-setup SYN (ECE, CWR) or
    /// RFC 9768 §3.1.1's AccECN SYN (AE, CWR, ECE). §3.1.4.1: the first retransmission of an
    /// AccECN SYN still asks for AccECN, later ones ask for no ECN. Its IP field is ECT when
    /// the sender's feedback is not the classic one, as Linux's `tcp_ecn_send_syn` does for a
    /// controller that needs ECN.
    fn syn(&self, now: u64, retransmission: u32) -> Packet {
        let mut p = Packet::control(self.flow, Kind::Syn, self.header_bytes as u32, now);
        let asked = self.cold.ecn_settings.asked_ecn();
        p.set_ect(asked.is_some_and(|f| f != CeFeedback::Classic), self.l4s());
        match asked {
            Some(CeFeedback::Accurate) if retransmission <= 1 => p.set_ace(7),
            Some(CeFeedback::Classic | CeFeedback::Dctcp) => {
                p.set(ECE, true);
                p.set(CWR, true);
            }
            _ => {}
        }
        p
    }

    /// What a SYN-ACK's (AE, CWR, ECE) say the receiver gives (RFC 9768 §3.1.1): any of
    /// AccECN's four answers to an AccECN SYN (which also reflect the SYN's IP-ECN field),
    /// RFC 3168's ECE alone, or none (all clear, or (1,1,1) reflected by a broken server).
    fn answered_ecn(&self, syn_ack: &Packet) -> Option<CeFeedback> {
        let asked_accurate = self.cold.ecn_settings.asked_ecn() == Some(CeFeedback::Accurate);
        match syn_ack.ace() {
            0b001 => Some(CeFeedback::Classic),
            0b010 | 0b011 | 0b100 | 0b110 if asked_accurate => Some(CeFeedback::Accurate),
            _ => None,
        }
    }

    /// Use ECN feedback `feedback` from now on (none: no ECN), and tell the controller.
    fn use_ecn(&mut self, feedback: Option<CeFeedback>) {
        self.ecn = feedback.is_some();
        self.cold.ect_all = feedback.is_some_and(|f| f != CeFeedback::Classic);
        self.cold.accurate = feedback == Some(CeFeedback::Accurate);
        self.cc.on_ecn_negotiated(match feedback {
            None => NegotiatedEcn::Off,
            Some(CeFeedback::Accurate) => NegotiatedEcn::Accurate,
            Some(_) => NegotiatedEcn::Echo,
        });
    }

    /// The ECN feedback the sender uses (none: no ECN), as the handshake settled it.
    pub fn ecn_feedback(&self) -> Option<CeFeedback> {
        match (self.ecn, self.cold.accurate, self.cold.ect_all) {
            (false, _, _) => None,
            (true, true, _) => Some(CeFeedback::Accurate),
            (true, false, true) => Some(CeFeedback::Dctcp),
            (true, false, false) => Some(CeFeedback::Classic),
        }
    }

    /// The handshake completed: the SYN's RTT is the first sample (Linux seeds srtt from it).
    pub fn on_syn_ack(&mut self, now: u64, pkt: &Packet, io: &mut Io) {
        if self.state != State::SynSent {
            return;
        }
        if self.cold.syn_retransmissions == 0 {
            self.rtt.on_sample(now - self.cold.syn_sent_ns);
            self.cc.on_rtt_sample(now, now - self.cold.syn_sent_ns);
        }
        self.rto.reset_backoff();
        self.rto.stop();
        self.peer_rwnd = pkt.rwnd;
        let answered = self.answered_ecn(pkt);
        self.use_ecn(self.cold.ecn_settings.settle_ecn(answered));
        self.state = State::Established;
        self.try_send(now, io);
    }

    pub fn on_ack(&mut self, now: u64, ack: &Packet, io: &mut Io) -> AckOutcome {
        if self.state != State::Established {
            return AckOutcome::default();
        }
        let prior_in_flight = self.board.pipe();
        let cwnd_before = self.cc.cwnd();
        self.delivery = Delivery::default();
        // Cumulative acknowledgement, then SACK blocks (RFC 2018): newly covered segments only.
        let (rate, delivery) = (&mut self.rate, &mut self.delivery);
        let advanced = self
            .board
            .ack_cumulative(ack.seq, |seg| delivery.add(rate, now, seg));
        if advanced {
            self.rto.reset_backoff();
        }
        for i in 0..ack.sack_count as usize {
            let (s, e) = ack.sack_block(i);
            self.board.sack(s, e, |seg| delivery.add(rate, now, seg));
        }
        self.peer_rwnd = ack.rwnd;
        let delivered = self.delivery;
        if let Some(sent) = delivered.newest_clean_send {
            self.rtt.on_sample(now - sent);
        } else if advanced && ack.sent_ns > 0 && ack.sent_ns <= now {
            // Only retransmissions acknowledged: Karn's rule forbids their RTT, but the
            // timestamp echo gives one (RFC 7323 §4; Linux tcp_ack_update_rtt falls back to
            // TSecr), so srtt and the pacing rate do not freeze after a timeout.
            self.rtt.on_sample(now - ack.sent_ns);
        }
        let mut echo = ack.has(ECE);
        if self.ecn {
            // An ACK with ECE reports every byte it delivers marked (RFC 8257 §3.3); with
            // Accurate ECN, ACE's increase counts marked segments (RFC 9768 §3.2.2.3; without
            // the ambiguity check of §3.2.2.5.2, as ACKs come every two segments here).
            let ce_bytes = if self.cold.accurate {
                let newly = ack.ace().wrapping_sub(self.cold.s_cep) % 8;
                self.cold.s_cep = ack.ace();
                echo = newly > 0;
                newly as u64 * self.mss
            } else if echo {
                delivered.bytes
            } else {
                0
            };
            self.cc.on_ecn_feedback(&EcnFeedback {
                now,
                acked_bytes: delivered.bytes,
                ce_bytes,
                delivered: self.rate.delivered(),
                in_flight: self.board.pipe(),
                mss: self.mss,
            });
        }
        // Loss detection and recovery episodes.
        let reordering_window = self.rtt.min_rtt() / 4;
        if let Some(newest) = delivered.newest_send {
            self.stats.lost_retransmissions += self
                .board
                .detect_lost_retransmissions(newest, reordering_window);
        }
        let mut newly_lost = self.board.mark_losses();
        if let (true, Some(newest)) = (self.rack, delivered.newest_send) {
            newly_lost += self.board.rack_mark_losses(newest, reordering_window);
        }
        if advanced {
            self.probe.answered();
        }
        // A recovery episode, fast or after a timeout, ends once everything outstanding at its
        // start is acknowledged.
        if self.episodes.end_if_repaired(self.board.una()) {
            self.cc.on_recovery_exit(now);
        }
        let mut outcome = AckOutcome::default();
        if newly_lost > 0 && self.episodes.may_start(self.board.una()) {
            self.episodes.start_fast(self.board.nxt(), prior_in_flight);
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
            self.on_ecn_echo(now, echo, prior_in_flight);
        }
        self.episodes.on_delivered(delivered.bytes);
        // A round trip ends when a segment sent in it is delivered (Linux/BBR round counting).
        if delivered
            .newest_send
            .is_some_and(|sent| sent >= self.round_start_ns)
        {
            if self.window_blocked && prior_in_flight < self.cold.stall_pipe_limit {
                self.stats.stalls += 1;
            }
            self.round_start_ns = now;
        }
        let sample = self.rate.take_sample(self.rtt.min_rtt());
        if delivered.bytes > 0 {
            // Linux `tcp_is_cwnd_limited`: in slow start, also while cwnd is below twice the
            // most outstanding this window (`max_packets_out`). The controller is asked only
            // when the answer depends on it.
            let cwnd_limited = self.blocked_by_cwnd
                || (self.cwnd_rule == CwndLimited::Linux
                    && (self.cc.phase().is_initial_slow_start()
                        || self.cc.cwnd() < self.cc.ssthresh())
                    && 2 * self.max_out_bytes > cwnd_before);
            let event = AckEvent {
                now,
                bytes_acked: delivered.bytes,
                mss: self.mss,
                rtt: delivered.newest_clean_send.map(|s| now - s),
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                one_way_delay: Some(ack.owd_ns),
                rate: sample,
                delivered: self.rate.delivered(),
                prior_in_flight,
                bytes_in_flight: self.board.pipe(),
                cwnd_limited,
                sent_before_cwnd_block: match (self.cwnd_block_ns, delivered.newest_send) {
                    (None, _) => true,
                    (Some(block), Some(sent)) => sent <= block,
                    (Some(_), None) => false,
                },
                in_recovery: self.episodes.in_fast_recovery() || self.in_cwr,
            };
            self.cc.on_ack(&event);
        }
        // RFC 6298 §5.2-5.3: stop the timer when nothing is outstanding, restart it on new data.
        if self.board.out_bytes() == 0 {
            self.rto.stop();
        } else if advanced {
            self.arm_rto(now);
        }
        self.arm_loss_probe(now);
        if self.closed && self.board.snd_una() >= self.written {
            self.state = State::Done;
            self.rto.stop();
            self.probe.stop();
            self.pacer.stop();
        } else {
            self.try_send(now, io);
        }
        outcome.delivered = delivered.bytes;
        outcome
    }

    /// The loss probe fired (RFC 8985 §7.3): send one new segment if the windows allow, else
    /// retransmit the last one; its ACK shows which of the tail was lost.
    pub fn on_loss_probe(&mut self, now: u64, io: &mut Io) {
        if self.state != State::Established
            || self.board.out_bytes() == 0
            || self.episodes.in_fast_recovery()
        {
            return;
        }
        let window = self.peer_rwnd.min(self.max_window);
        let (snd_nxt, nxt) = (self.board.snd_nxt(), self.board.nxt());
        let new_len = self.board.segment_len(nxt, self.written);
        let new_fits = snd_nxt < self.written
            && snd_nxt + new_len <= self.board.snd_una().saturating_add(window);
        if new_fits {
            self.transmit(now, nxt, false, io);
        } else {
            let last = nxt - 1;
            if self.board.is_sacked(last) {
                return;
            }
            self.transmit(now, last, true, io);
        }
        self.probe.sent();
        self.stats.loss_probes += 1;
        // §7.3: the retransmission timer restarts after a probe.
        self.rto.stop();
        self.arm_rto(now);
    }

    /// Send what the windows and the pacer allow.
    pub fn try_send(&mut self, now: u64, io: &mut Io) {
        if self.state != State::Established {
            return;
        }
        self.blocked_by_cwnd = false;
        self.window_blocked = false;
        let pacing = self.pacer.rate(&self.cc, &self.rtt);
        loop {
            let window = (self.cc.cwnd(), self.rtt.srtt(), self.mss);
            if pacing.is_some() && self.pacer.must_wait(now, window) {
                return;
            }
            let pipe = self.board.pipe();
            let (k, retransmission) = if let Some(k) = self.board.next_lost() {
                (k, true)
            } else if self.board.snd_nxt() < self.written {
                (self.board.nxt(), false)
            } else {
                if self.cc.cwnd() > pipe {
                    self.rate.on_app_limited(pipe);
                }
                return;
            };
            let len = self.board.segment_len(k, self.written);
            let mut allowed = self.episodes.allowance(
                self.cc.cwnd(),
                self.cc.ssthresh(),
                pipe,
                self.delivery.bytes,
                self.mss,
            );
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
            if !retransmission
                && self.board.snd_nxt() + len > self.board.snd_una().saturating_add(window)
            {
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
                self.pacer.on_sent(now, (wire, len), rate, quantum);
            }
        }
    }

    /// RFC 3168 §6.1.2: an ACK with ECE reduces the window as a loss would, at most once per
    /// window of data and not during loss recovery, without retransmitting anything; the next
    /// new segment (`cwr_point`) carries CWR. ECE is ignored until an ACK covers that segment,
    /// so the receiver has seen CWR (ns-2's `recover_` rule); a controller that entered its
    /// recovery phase for the reduction is told then that it is over. The controller's cwnd
    /// drops at once; with `ecn_reduction = "prr"` PRR paces the sending down to it meanwhile,
    /// as Linux's CWR state does (tcp_input.c `tcp_cwnd_reduction`).
    fn on_ecn_echo(&mut self, now: u64, echo: bool, prior_in_flight: u64) {
        if self.in_cwr && self.board.una() > self.cold.cwr_point {
            self.in_cwr = false;
            self.episodes.end_cwr();
            if self.cc.phase() == Phase::Recovery && !self.episodes.in_fast_recovery() {
                self.cc.on_recovery_exit(now);
            }
        }
        if !echo || self.in_cwr || self.episodes.in_any() {
            return;
        }
        self.in_cwr = true;
        self.episodes.start_cwr(prior_in_flight);
        self.cold.cwr_point = self.board.nxt();
        self.cwr_pending = !self.cold.accurate;
        self.stats.ecn_reductions += 1;
        self.cc.on_congestion_event(&CongestionEvent {
            ecn: true,
            now,
            bytes_lost: 0,
            bytes_in_flight: prior_in_flight,
            mss: self.mss,
        });
    }

    /// The controller asks for ECT(1), the L4S identifier, instead of ECT(0).
    fn l4s(&self) -> bool {
        self.cc.ecn_codepoint() == EcnCodepoint::Ect1
    }

    fn transmit(&mut self, now: u64, k: u64, retransmission: bool, io: &mut Io) {
        let pipe_before = self.board.pipe();
        let len = self.board.segment_len(k, self.written);
        let snapshot = self.rate.on_packet_sent(now, pipe_before);
        let new = k == self.board.nxt();
        let seq = self
            .board
            .on_transmit(now, k, len, snapshot, retransmission);
        if new {
            // Linux tcp_cwnd_validate: the most outstanding this window, restarted once the
            // data outstanding at the last restart is acknowledged.
            let out = self.board.out_bytes();
            if self.board.snd_una() >= self.cwnd_usage_seq || out > self.max_out_bytes {
                self.max_out_bytes = out;
                self.cwnd_usage_seq = self.board.snd_nxt();
            }
        }
        if retransmission {
            self.stats.retransmits += 1;
            self.force_retransmit = false;
        }
        self.episodes.on_sent(len);
        self.total_sent += len;
        self.stats.data_packets_sent += 1;
        if !self.probe.is_out() && !self.probe.is_armed() {
            self.arm_loss_probe(now);
        }
        self.stats.data_bytes_sent += len;
        let mut p = Packet::control(self.flow, Kind::Data, (len + self.header_bytes) as u32, now);
        p.seq = seq;
        p.len = len as u32;
        p.set(RETRANSMISSION, retransmission);
        // RFC 3168 §6.1.5: retransmissions are not sent ECN-capable (unless `ect_all`).
        p.set_ect(
            self.ecn && (!retransmission || self.cold.ect_all),
            self.l4s(),
        );
        if self.cwr_pending && !retransmission {
            p.set(CWR, true);
            self.cwr_pending = false;
        }
        p.rwnd = self.piggyback_ack;
        io.send(p);
        self.cc.on_packet_sent(&SentEvent {
            now,
            bytes: len,
            bytes_in_flight: self.board.pipe(),
            total_sent: self.total_sent,
            retransmission,
        });
        // RFC 6298 §5.1; Linux also restarts the timer when it retransmits the head segment, so
        // a repair in progress is not cut short by a timer armed for the lost original.
        if !self.rto.is_armed() || (retransmission && k == self.board.una()) {
            self.rto.stop();
            self.arm_rto(now);
        }
    }

    /// The retransmission timer fired (RFC 6298 §5.4-5.6, RFC 6675 §5.1).
    pub fn on_rto(&mut self, now: u64, io: &mut Io) {
        match self.state {
            State::SynSent => {
                self.cold.syn_retransmissions += 1;
                self.rto.back_off();
                io.send(self.syn(now, self.cold.syn_retransmissions));
                self.arm_rto(now);
            }
            State::Established if self.board.out_bytes() > 0 => {
                // Linux arms the probe in place of the timer: when the probe would not have come
                // first, the timer's first expiry sends it (RFC 8985 §7.2, PTO = min(PTO, RTO)).
                let probe_first = self.rack && !self.probe.is_out() && !self.episodes.in_any();
                if probe_first {
                    self.on_loss_probe(now, io);
                    if self.probe.is_out() {
                        return;
                    }
                }
                self.stats.rto_count += 1;
                self.cc.on_rto(now, self.board.pipe());
                self.board.on_timeout();
                self.episodes.start_timeout(self.board.nxt());
                self.probe.stop();
                self.rto.back_off();
                self.pacer.restart(now);
                self.try_send(now, io);
                self.arm_rto(now);
            }
            _ => {}
        }
    }

    pub fn on_pacing_timer(&mut self, now: u64, io: &mut Io) {
        self.try_send(now, io);
    }
}

/// What one ACK did, for the flow's metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    pub delivered: u64,
    pub loss_event: bool,
}
