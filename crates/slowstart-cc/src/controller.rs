//! The controller interface: what a transport tells a congestion controller, and what it reads back.
//!
//! Modelled on Linux `tcp_congestion_ops` and quinn's `Controller`: the transport owns
//! reliability (SACK scoreboard, loss detection, retransmission); the controller owns the window.

use crate::estimators::RateSample;
use crate::Nanos;

/// A data packet left the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentEvent {
    /// When the packet was sent.
    pub now: Nanos,
    /// Payload bytes in this packet.
    pub bytes: u64,
    /// Bytes in flight after sending it (RFC 6675 `pipe`).
    pub bytes_in_flight: u64,
    /// Total payload bytes ever sent, retransmissions included.
    pub total_sent: u64,
    /// Whether this packet was a retransmission.
    pub retransmission: bool,
}

/// One ACK arrived and delivered `bytes_acked` new bytes (cumulatively or by SACK).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    /// When the ACK arrived.
    pub now: Nanos,
    /// Bytes newly delivered by this ACK (cumulative advance plus newly SACKed), RFC 6937's
    /// `DeliveredData`.
    pub bytes_acked: u64,
    /// Sender's MSS, so window arithmetic in segments is possible.
    pub mss: u64,
    /// RTT sample from this ACK (Karn's rule applied by the transport), if any.
    pub rtt: Option<Nanos>,
    /// Smoothed RTT seen so far by the transport (0 before the first sample).
    pub srtt: Nanos,
    /// Minimum RTT seen so far by the transport (0 before the first sample).
    pub min_rtt: Nanos,
    /// One-way delay of the data packet that triggered this ACK (receiver clock minus sender
    /// timestamp; only differences and minima are meaningful, LEDBAT RFC 6817 §3.4.1).
    pub one_way_delay: Option<Nanos>,
    /// Delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), if any packet was
    /// newly delivered.
    pub rate: Option<RateSample>,
    /// Total bytes delivered so far, after this ACK.
    pub delivered: u64,
    /// Bytes in flight before processing this ACK.
    pub prior_in_flight: u64,
    /// Bytes in flight after processing this ACK.
    pub bytes_in_flight: u64,
    /// Whether the cwnd, not the application or another window, limited sending (Linux
    /// `tcp_is_cwnd_limited`, RFC 7661): loss-based controllers grow only when it is true.
    pub cwnd_limited: bool,
    /// Whether the newest segment this ACK delivers was sent before the sender last found the
    /// cwnd full with data waiting, or the cwnd has never held it back (picoquic's growth test,
    /// cc_common.c `picoquic_cc_was_cwin_blocked`, 2019-2020).
    pub sent_before_cwnd_block: bool,
    /// Whether the transport is in loss recovery when this ACK is processed.
    pub in_recovery: bool,
}

/// Start of a congestion episode: loss detected by SACK/dupacks, once per recovery episode, or
/// an ECN echo (ECE), at most once per window of data (RFC 3168 §6.1.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongestionEvent {
    /// When the episode started (the loss was detected or the ECE arrived).
    pub now: Nanos,
    /// The signal is an ECN mark, not a loss: nothing needs retransmitting, and loss-based
    /// controllers back off by RFC 8511's beta_ecn where they implement it.
    pub ecn: bool,
    /// Bytes newly marked lost at the start of the episode.
    pub bytes_lost: u64,
    /// Bytes in flight when the loss was detected (RFC 5681 `FlightSize`).
    pub bytes_in_flight: u64,
    /// Sender's MSS in bytes.
    pub mss: u64,
}

/// What one ACK's ECN feedback reported, for controllers that measure the extent of marking
/// (DCTCP, RFC 8257 §3.3; Prague). The transport sends it on every ACK of a flow that negotiated
/// ECN, before the ACK's loss detection and its ECN echo ([`CongestionEvent`] with `ecn`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnFeedback {
    /// When the ACK arrived.
    pub now: Nanos,
    /// Bytes newly delivered by this ACK (as [`AckEvent::bytes_acked`]).
    pub acked_bytes: u64,
    /// Of those, the bytes the feedback reports CE-marked: all of them when the ACK carries ECE
    /// (RFC 8257 §3.3, Linux tcp_dctcp.c), or the ACE counter's increase in segments times the
    /// MSS (RFC 9768 §3.2.2).
    pub ce_bytes: u64,
    /// Total bytes delivered so far, after this ACK.
    pub delivered: u64,
    /// Bytes still in flight after this ACK: `delivered + in_flight` is the data sent so far,
    /// which ends the current window of data (Linux tcp_dctcp.c `next_seq = snd_nxt`).
    pub in_flight: u64,
    /// Sender's MSS in bytes, the unit of the ACE count.
    pub mss: u64,
}

/// The ECN feedback a flow's handshake settled on (RFC 9768 §3.1.1), told to the controller
/// before any data goes out ([`CongestionController::on_ecn_negotiated`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NegotiatedEcn {
    /// No ECN: data goes out Not-ECT and no mark ever comes back.
    #[default]
    Off,
    /// One ECE flag per ACK: RFC 3168's echo until CWR, or DCTCP's per-packet state.
    Echo,
    /// Accurate ECN's ACE count of CE-marked packets (RFC 9768 §3.2.2).
    Accurate,
}

/// The ECN-capable codepoint a controller asks its data packets to carry when the flow uses ECN
/// (RFC 3168 §5): ECT(0), or ECT(1), the L4S identifier (RFC 9331), which a DualPI2 queue
/// steers into its low-latency queue and a classic ECN AQM treats as ECT(0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnCodepoint {
    /// ECT(0), the classic ECN-capable codepoint.
    #[default]
    Ect0,
    /// ECT(1), the L4S identifier (RFC 9331).
    Ect1,
}

/// What a controller is doing, for traces and for `slow_start_exit_s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Phase {
    /// Slow start (RFC 5681 §3.1).
    SlowStart = 0,
    /// RFC 3742 Limited Slow-Start above max_ssthresh (still part of slow start).
    LimitedSlowStart = 1,
    /// RFC 9406 §4.2 Conservative Slow Start (still part of slow start).
    ConservativeSlowStart = 2,
    /// Congestion avoidance: the window grows by the algorithm's increase rule.
    CongestionAvoidance = 3,
    /// Loss recovery, from a congestion event until the recovery exit.
    Recovery = 4,
    /// After a retransmission timeout, slow start back up to ssthresh.
    RtoRecovery = 5,
    /// BBR Startup (draft-ietf-ccwg-bbr-06 §5.1.1, for this and the three BBR states below).
    Startup = 6,
    /// BBR Drain: the queue built in Startup drains.
    Drain = 7,
    /// BBR ProbeBW: cycling the pacing gain around the estimated bandwidth.
    ProbeBw = 8,
    /// BBR ProbeRTT: the window cut to a few packets to measure the minimum RTT.
    ProbeRtt = 9,
    /// Careful Resume (RFC 9959 §4.3): the jump to the saved window, paced, not yet validated.
    Unvalidated = 10,
    /// Careful Resume §4.4: the jumped window awaiting the ACKs that validate it.
    Validating = 11,
    /// Careful Resume §4.5: congestion after the jump; the path drains at PipeSize / 2.
    SafeRetreat = 12,
}

impl Phase {
    /// Every phase, in code order; a trace stores `phase as u8`.
    pub const ALL: [Phase; 13] = [
        Phase::SlowStart,
        Phase::LimitedSlowStart,
        Phase::ConservativeSlowStart,
        Phase::CongestionAvoidance,
        Phase::Recovery,
        Phase::RtoRecovery,
        Phase::Startup,
        Phase::Drain,
        Phase::ProbeBw,
        Phase::ProbeRtt,
        Phase::Unvalidated,
        Phase::Validating,
        Phase::SafeRetreat,
    ];

    /// The phase's name in traces and the Python front end (`slow_start`, `probe_bw`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Phase::SlowStart => "slow_start",
            Phase::LimitedSlowStart => "limited_slow_start",
            Phase::ConservativeSlowStart => "conservative_slow_start",
            Phase::CongestionAvoidance => "congestion_avoidance",
            Phase::Recovery => "recovery",
            Phase::RtoRecovery => "rto_recovery",
            Phase::Startup => "startup",
            Phase::Drain => "drain",
            Phase::ProbeBw => "probe_bw",
            Phase::ProbeRtt => "probe_rtt",
            Phase::Unvalidated => "unvalidated",
            Phase::Validating => "validating",
            Phase::SafeRetreat => "safe_retreat",
        }
    }

    /// Part of the initial ramp-up: `slow_start_exit_s` is the first time a flow leaves these.
    pub fn is_initial_slow_start(self) -> bool {
        matches!(
            self,
            Phase::SlowStart
                | Phase::LimitedSlowStart
                | Phase::ConservativeSlowStart
                | Phase::Startup
                | Phase::Unvalidated
                | Phase::Validating
        )
    }
}

/// A congestion controller. All methods are driven by the transport; none reads a clock.
pub trait CongestionController {
    /// A data packet left the sender.
    fn on_packet_sent(&mut self, _sent: &SentEvent) {}
    /// Whether [`on_packet_sent`](Self::on_packet_sent) can change what the controller does,
    /// fixed when it is built: `false` lets a host that pays for each call skip it, as one run
    /// as a WebAssembly guest does (`slowstart_guest::abi`, `slowstart_events`).
    fn uses_packet_sent(&self) -> bool {
        true
    }
    /// An ACK delivered new data.
    fn on_ack(&mut self, ack: &AckEvent);
    /// An RTT measured outside data ACKs, such as the handshake's (picoquic's
    /// `rtt_measurement` notification).
    fn on_rtt_sample(&mut self, _now: Nanos, _rtt: Nanos) {}
    /// The ECN feedback the handshake settled on, once, before any data (at the start for a
    /// flow without a handshake).
    fn on_ecn_negotiated(&mut self, _ecn: NegotiatedEcn) {}
    /// The ECN feedback of one ACK (only on flows that negotiated ECN).
    fn on_ecn_feedback(&mut self, _feedback: &EcnFeedback) {}
    /// Loss detected: called once when a recovery episode starts.
    fn on_congestion_event(&mut self, event: &CongestionEvent);
    /// The recovery episode ended (everything outstanding at its start is acknowledged).
    fn on_recovery_exit(&mut self, _now: Nanos) {}
    /// Retransmission timeout (RFC 6298 §5.5, RFC 5681 §3.1 eq. 4).
    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64);
    /// Congestion window in bytes; never below one MSS.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` when unset).
    fn ssthresh(&self) -> u64;
    /// Pacing rate in bytes per second, or `None` to send as the window allows.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Largest burst the pacer may release at once, in bytes.
    fn send_quantum(&self) -> Option<u64> {
        None
    }
    /// The codepoint its data packets carry on a flow that uses ECN (Linux `TCP_ECN_ECT_1`,
    /// set by tcp_prague.c `prague_init`).
    fn ecn_codepoint(&self) -> EcnCodepoint {
        EcnCodepoint::Ect0
    }
    /// What the controller is doing now.
    fn phase(&self) -> Phase;
}

/// Events for controller unit tests.
#[cfg(test)]
pub(crate) mod test_events {
    use super::AckEvent;
    use crate::{Nanos, RateSample};

    /// A cwnd-limited ACK of `bytes` at `now`, `in_flight` left after it, with a rate sample at
    /// `rate` bytes/s that starts a new packet-timed round when `new_round` (its
    /// prior_delivered reaches `round_end`, the round's end in delivered bytes).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn round_ack(
        now: Nanos,
        mss: u64,
        bytes: u64,
        rate: u64,
        rtt: Nanos,
        in_flight: u64,
        delivered_before: u64,
        round_end: u64,
        new_round: bool,
    ) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: bytes,
            mss,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            one_way_delay: None,
            rate: Some(RateSample {
                delivery_rate: rate,
                delivered: bytes,
                interval: rtt,
                prior_delivered: if new_round {
                    round_end
                } else {
                    round_end.saturating_sub(1)
                },
                is_app_limited: false,
                rtt,
            }),
            delivered: delivered_before + bytes,
            prior_in_flight: in_flight + bytes,
            bytes_in_flight: in_flight,
            cwnd_limited: true,
            sent_before_cwnd_block: true,
            in_recovery: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Phase;

    #[test]
    fn phase_codes_match_their_index() {
        for (i, p) in Phase::ALL.iter().enumerate() {
            assert_eq!(*p as usize, i, "{}", p.name());
        }
    }
}
