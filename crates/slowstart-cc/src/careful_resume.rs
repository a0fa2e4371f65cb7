//! Careful Resume (RFC 9959, draft-ietf-tsvwg-careful-resume-24): a connection that saved its
//! window (`saved_cwnd`) and minimum RTT (`saved_rtt`) on an earlier connection to the same
//! endpoint jumps to half of that window once the path is confirmed, then validates the jump or
//! retreats. Phases (§4):
//!
//! - Reconnaissance: the base controller runs from the IW. The path is confirmed once the IW is
//!   acknowledged without congestion: the jump comes with that ACK if the sender had data
//!   waiting (its rate sample is not application-limited), else it waits until the sender has
//!   more data than the base cwnd allows (§4.2, the transition "MAY be deferred"). It checks
//!   that the minimum RTT lies in (saved_rtt / 2, 10 saved_rtt) (§4.2, §5.2.2) and that the
//!   jump would raise cwnd.
//! - Unvalidated: PipeSize = flight_size, cwnd = jump_cwnd = min(max_jump, saved_cwnd / 2),
//!   paced at jump_cwnd per current RTT (§5.3); cwnd does not grow. It ends when the window is
//!   used, an unvalidated packet is acknowledged or one RTT has passed: then cwnd = PipeSize and
//!   normal CC if flight_size <= PipeSize (or < IW), else cwnd = flight_size and Validating.
//! - Validating: the base controller grows cwnd; normal CC once the last unvalidated packet is
//!   acknowledged.
//! - Safe Retreat, on congestion in either: cwnd at most PipeSize / 2 (whole segments, at least 2),
//!   no growth, until the last unvalidated packet is acknowledged (or the recovery episode
//!   ends); then ssthresh = PipeSize x Beta and normal CC.
//!
//! PipeSize counts the flight at the jump plus the unvalidated data acknowledged since, as the
//! RFC's worked example does (§A.3: 29 + 34 = 63). Packets are told apart by bytes: an ACK
//! acknowledges an unvalidated packet once the bytes delivered exceed the bytes sent before the
//! jump (the RFC's examples count packet numbers).

use crate::loss_based::{AvoidanceRule, LossBased};
use crate::params::CcError;
use crate::params::{Accepts, ParamInfo, Params};
use crate::SECOND;
use crate::{mul_div, AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SentEvent};

/// The parameters of `careful-resume`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "base",
        doc: "the normal CC Careful Resume starts and returns to",
        default: "reno",
        accepts: Accepts::Word(&["reno", "cubic"]),
    },
    ParamInfo {
        name: "saved_cwnd",
        doc: "saved_cwnd from an earlier connection, segments (0: nothing saved, the base CC \
              alone)",
        default: "0",
        accepts: Accepts::integer(0, 10_000_000),
    },
    ParamInfo {
        name: "saved_rtt_ms",
        doc: "saved_rtt, the earlier connection's minimum RTT, ms (needed with saved_cwnd)",
        default: "0",
        accepts: Accepts::number(0.0, 3_600_000.0),
    },
    ParamInfo {
        name: "jump",
        doc: "half: jump_cwnd = saved_cwnd / 2 (RFC 9959 §4.3); full: the whole saved_cwnd, as \
              picoquic's BDP seed does",
        default: "half",
        accepts: Accepts::Word(&["half", "full"]),
    },
    ParamInfo {
        name: "max_jump",
        doc: "max_jump: largest jump_cwnd, segments (0: no limit)",
        default: "0",
        accepts: Accepts::integer(0, 10_000_000),
    },
    ParamInfo {
        name: "retreat_beta",
        doc: "Beta: ssthresh = PipeSize x Beta on leaving Safe Retreat (RFC 9959 §4.5)",
        default: "0.5",
        accepts: Accepts::number(0.5, 1.0),
    },
    // CUBIC's own, read with base = "cubic".
    crate::cubic::C,
    crate::cubic::BETA,
    crate::cubic::FAST_CONVERGENCE,
    crate::cubic::LINUX_INITIAL_GROWTH,
];

/// RFC 9959 §5.2.2: a current RTT above ten times saved_rtt indicates a path change.
const RTT_FACTOR_MAX: u64 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Reconnaissance,
    Unvalidated,
    Validating,
    SafeRetreat,
    Normal,
}

/// Careful Resume (RFC 9959 §4) around a loss-based base controller.
#[derive(Clone, Debug)]
pub struct CarefulResume<A: AvoidanceRule> {
    /// The normal CC it starts with and returns to (Reno or CUBIC).
    pub base: LossBased<A>,
    state: State,
    /// jump_cwnd, bytes.
    jump_cwnd: u64,
    saved_rtt: Nanos,
    retreat_beta: f64,
    iw: u64,
    mss: u64,
    /// The IW has been acknowledged without congestion (§4.2 path confirmed).
    confirmed: bool,
    /// Lowest RTT seen in Reconnaissance.
    min_rtt: Nanos,
    /// Latest smoothed RTT, for pacing and the one-RTT limit.
    srtt: Nanos,
    /// New data sent so far, bytes (retransmissions not counted).
    sent: u64,
    /// PipeSize at the jump (the flight then), bytes.
    pipe_at_jump: u64,
    /// Unvalidated data acknowledged since the jump, bytes.
    validated: u64,
    /// Bytes sent before the jump: data delivered beyond them was sent unvalidated.
    sent_before_jump: u64,
    /// Bytes sent up to the last unvalidated packet.
    last_unvalidated: u64,
    jumped_at: Nanos,
}

impl<A: AvoidanceRule> CarefulResume<A> {
    /// `jump_cwnd` in bytes (0: nothing was saved, the base runs alone); the base's cwnd at
    /// construction is the IW.
    pub fn new(
        base: LossBased<A>,
        mss: u64,
        jump_cwnd: u64,
        saved_rtt: Nanos,
        retreat_beta: f64,
    ) -> Self {
        Self {
            state: if jump_cwnd == 0 {
                State::Normal
            } else {
                State::Reconnaissance
            },
            iw: base.cwnd(),
            mss,
            base,
            jump_cwnd,
            saved_rtt,
            retreat_beta,
            confirmed: false,
            min_rtt: u64::MAX,
            srtt: 0,
            sent: 0,
            pipe_at_jump: 0,
            validated: 0,
            sent_before_jump: 0,
            last_unvalidated: 0,
            jumped_at: 0,
        }
    }

    /// PipeSize (§2), bytes.
    pub fn pipe_size(&self) -> u64 {
        self.pipe_at_jump + self.validated
    }

    fn track_pipe(&mut self, ack: &AckEvent) {
        self.validated = self
            .validated
            .max(ack.delivered.saturating_sub(self.sent_before_jump));
    }

    /// §4.2: the path is confirmed and the sender has more to send than the base cwnd allows
    /// (`flight` in flight): jump, unless the RTT or the window says not to.
    fn jump(&mut self, now: Nanos, flight: u64) {
        let rtt_ok = self.min_rtt > self.saved_rtt / 2
            && self.min_rtt < self.saved_rtt.saturating_mul(RTT_FACTOR_MAX);
        if !rtt_ok || self.base.cwnd() >= self.jump_cwnd {
            self.state = State::Normal;
            return;
        }
        self.pipe_at_jump = flight;
        self.sent_before_jump = self.sent;
        self.jumped_at = now;
        self.base.set_window(self.jump_cwnd, None);
        self.state = State::Unvalidated;
    }

    /// §4.3 "Check flight_size", once the Unvalidated Phase ends.
    fn end_unvalidated(&mut self, flight: u64) {
        let pipe = self.pipe_size();
        if flight < self.iw || flight <= pipe {
            self.base.set_window(pipe.max(self.iw), None);
            self.state = State::Normal;
        } else {
            self.base.set_window(flight, None);
            self.last_unvalidated = self.sent;
            self.state = State::Validating;
        }
    }

    /// §4.5 on entry: cwnd "no more than" PipeSize / 2, in whole segments, at least two (RFC
    /// 9002 §4.8).
    fn retreat(&mut self) {
        if self.state == State::Unvalidated {
            self.last_unvalidated = self.sent;
        }
        let half = self.pipe_size() / 2 / self.mss * self.mss;
        let cwnd = half.min(self.base.cwnd()).max(2 * self.mss);
        self.base.set_window(cwnd, None);
        self.base.set_phase(Phase::Recovery);
        self.state = State::SafeRetreat;
    }

    /// §4.5 on leaving: ssthresh = PipeSize x Beta, then normal CC.
    fn leave_retreat(&mut self, now: Nanos) {
        let ssthresh = (self.pipe_size() as f64 * self.retreat_beta) as u64;
        self.base.set_window(self.base.cwnd(), Some(ssthresh));
        self.base.on_recovery_exit(now);
        self.state = State::Normal;
    }
}

impl<A: AvoidanceRule> CongestionController for CarefulResume<A> {
    fn on_packet_sent(&mut self, sent: &SentEvent) {
        self.base.on_packet_sent(sent);
        if sent.retransmission {
            return;
        }
        self.sent += sent.bytes;
        let full = |cwnd: u64| sent.bytes_in_flight + self.mss > cwnd;
        match self.state {
            State::Reconnaissance if self.confirmed && full(self.base.cwnd()) => {
                self.jump(sent.now, sent.bytes_in_flight)
            }
            State::Unvalidated if full(self.base.cwnd()) => {
                self.end_unvalidated(sent.bytes_in_flight)
            }
            _ => {}
        }
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.mss = ack.mss;
        if ack.srtt > 0 {
            self.srtt = ack.srtt;
        }
        match self.state {
            State::Reconnaissance => {
                if let Some(rtt) = ack.rtt {
                    self.min_rtt = self.min_rtt.min(rtt);
                }
                self.base.on_ack(ack);
                if !self.confirmed && ack.delivered >= self.iw {
                    self.confirmed = true;
                    // The sender had data waiting (its delivery-rate sample is not
                    // application-limited): jump now (§4.2).
                    if ack.rate.is_some_and(|r| !r.is_app_limited) {
                        self.jump(ack.now, ack.bytes_in_flight);
                    }
                }
            }
            State::Unvalidated => {
                self.track_pipe(ack);
                let acked_unvalidated = ack.delivered > self.sent_before_jump;
                let rtt_passed = ack.now.saturating_sub(self.jumped_at) > self.srtt;
                if acked_unvalidated || rtt_passed {
                    self.end_unvalidated(ack.bytes_in_flight);
                }
            }
            State::Validating => {
                self.track_pipe(ack);
                self.base.on_ack(ack);
                if ack.delivered >= self.last_unvalidated {
                    self.state = State::Normal;
                }
            }
            State::SafeRetreat => {
                self.track_pipe(ack);
                if ack.delivered >= self.last_unvalidated {
                    self.leave_retreat(ack.now);
                }
            }
            State::Normal => self.base.on_ack(ack),
        }
    }

    fn on_rtt_sample(&mut self, now: Nanos, rtt: Nanos) {
        self.min_rtt = self.min_rtt.min(rtt);
        self.base.on_rtt_sample(now, rtt);
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.mss = event.mss;
        match self.state {
            State::Unvalidated | State::Validating => self.retreat(),
            State::SafeRetreat => {}
            State::Reconnaissance | State::Normal => {
                self.state = State::Normal;
                self.base.on_congestion_event(event);
            }
        }
    }

    fn on_recovery_exit(&mut self, now: Nanos) {
        if self.state == State::SafeRetreat {
            self.leave_retreat(now);
        } else {
            self.base.on_recovery_exit(now);
        }
    }

    /// §4.6: persistent congestion ends Careful Resume.
    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64) {
        self.state = State::Normal;
        self.base.on_rto(now, bytes_in_flight);
    }

    fn cwnd(&self) -> u64 {
        self.base.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        self.base.ssthresh()
    }

    /// §5.3: unvalidated packets are paced at jump_cwnd per current RTT.
    fn pacing_rate(&self) -> Option<u64> {
        if self.state == State::Unvalidated && self.srtt > 0 {
            Some(mul_div(self.jump_cwnd, SECOND, self.srtt).max(1))
        } else {
            self.base.pacing_rate()
        }
    }

    fn send_quantum(&self) -> Option<u64> {
        self.base.send_quantum()
    }

    fn phase(&self) -> Phase {
        match self.state {
            State::Unvalidated => Phase::Unvalidated,
            State::Validating => Phase::Validating,
            State::SafeRetreat => Phase::SafeRetreat,
            State::Reconnaissance | State::Normal => self.base.phase(),
        }
    }
}

/// The jump (bytes) and saved RTT a spec asks for; errors name the field.
pub fn saved_state(params: &Params, mss: u64) -> Result<(u64, Nanos), CcError> {
    let saved_cwnd = params.integer("saved_cwnd")? * mss;
    let saved_rtt = (params.number("saved_rtt_ms")? * 1e6) as Nanos;
    if saved_cwnd > 0 && saved_rtt == 0 {
        return Err(CcError(
            "cc careful-resume: parameter 'saved_rtt_ms' must be > 0 when saved_cwnd is given"
                .into(),
        ));
    }
    let mut jump = match params.choice("jump")? {
        "full" => saved_cwnd,
        _ => saved_cwnd / 2,
    };
    let max_jump = params.integer("max_jump")? * mss;
    if max_jump > 0 {
        jump = jump.min(max_jump);
    }
    Ok((jump, saved_rtt))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_based::RenoRule;
    use crate::slow_start::SlowStart;
    use crate::window::AckCounting;
    use crate::RateSample;

    const MSS: u64 = 1000;
    const RTT: Nanos = 100_000_000;

    /// A sender counting in packets, as the RFC's examples do.
    struct Sender {
        cr: CarefulResume<RenoRule>,
        now: Nanos,
        sent: u64,
        delivered: u64,
        in_flight: u64,
        /// Whether ACKs carry a rate sample that is not application-limited.
        data_waiting: bool,
    }

    impl Sender {
        fn new(saved_cwnd: u64, saved_rtt: Nanos) -> Self {
            let base = LossBased::new(MSS, 10, AckCounting::Bytes, SlowStart::Standard, RenoRule);
            Sender {
                cr: CarefulResume::new(base, MSS, saved_cwnd * MSS / 2, saved_rtt, 0.5),
                now: 0,
                sent: 0,
                delivered: 0,
                in_flight: 0,
                data_waiting: false,
            }
        }

        fn send(&mut self, packets: u64) {
            for _ in 0..packets {
                self.sent += MSS;
                self.in_flight += MSS;
                self.cr.on_packet_sent(&SentEvent {
                    now: self.now,
                    bytes: MSS,
                    bytes_in_flight: self.in_flight,
                    total_sent: self.sent,
                    retransmission: false,
                });
            }
        }

        fn ack(&mut self, packets: u64) {
            for _ in 0..packets {
                self.delivered += MSS;
                self.in_flight -= MSS;
                self.cr.on_ack(&AckEvent {
                    now: self.now,
                    bytes_acked: MSS,
                    mss: MSS,
                    rtt: Some(RTT),
                    srtt: RTT,
                    min_rtt: RTT,
                    delivered: self.delivered,
                    prior_in_flight: self.in_flight + MSS,
                    bytes_in_flight: self.in_flight,
                    cwnd_limited: true,
                    rate: self.data_waiting.then(RateSample::default),
                    ..Default::default()
                });
            }
        }

        fn segments(&self) -> (u64, u64) {
            (self.cr.cwnd() / MSS, self.cr.pipe_size() / MSS)
        }

        /// The RFC's first example up to the jump: IW 10 acknowledged before more data was
        /// ready ("this path confirmation could have happened earlier if data had been
        /// available to send"), then cwnd-limited with 29 packets in flight.
        fn reach_jump(&mut self) {
            self.send(10);
            self.now += RTT;
            self.ack(10);
            assert_eq!(self.cr.cwnd(), 20 * MSS);
            self.send(11);
            self.now += RTT / 2;
            self.ack(9);
            self.send(27);
        }
    }

    /// RFC 9959 Appendix A.1 and A.4: IW 10, saved_cwnd 300. The jump comes with 29 packets in
    /// flight: PipeSize 29, CWND 150; the 121 unvalidated packets fill it (Validating). The
    /// 35th unvalidated packet is lost after 34 are acknowledged: PipeSize 63 (29 + 34), CWND
    /// 31 (63 / 2) in Safe Retreat, where it does not grow.
    #[test]
    fn rfc9959_worked_example() {
        let mut s = Sender::new(300, RTT);
        s.reach_jump();
        assert_eq!(s.segments(), (150, 29));
        assert_eq!(s.cr.phase(), Phase::Unvalidated);
        // Paced at jump_cwnd per RTT: 150 packets per 100 ms.
        assert_eq!(s.cr.pacing_rate(), Some(150 * MSS * 10));
        s.send(121);
        assert_eq!(s.cr.phase(), Phase::Validating);
        assert_eq!(s.segments(), (150, 29));
        s.now += RTT / 2;
        s.ack(29); // the packets in flight at the jump
        assert_eq!(s.cr.pipe_size(), 29 * MSS);
        s.ack(34);
        assert_eq!(s.cr.pipe_size(), 63 * MSS);
        s.cr.on_congestion_event(&CongestionEvent {
            now: s.now,
            mss: MSS,
            bytes_lost: MSS,
            bytes_in_flight: s.in_flight,
            ecn: false,
        });
        assert_eq!(s.segments(), (31, 63));
        assert_eq!(s.cr.phase(), Phase::SafeRetreat);
        s.ack(86);
        assert_eq!(s.cr.cwnd(), 31 * MSS, "no growth in Safe Retreat");
        assert_eq!(s.cr.pipe_size(), (29 + 120) * MSS);
        // The repaired packet ends the episode: ssthresh = PipeSize x 0.5, then slow start.
        s.cr.on_recovery_exit(s.now);
        assert_eq!(s.cr.ssthresh(), 149 * MSS / 2);
        assert_eq!(s.cr.phase(), Phase::RtoRecovery);
        s.ack(1);
        assert_eq!(s.cr.cwnd(), 32 * MSS);
    }

    /// Appendix A.1 without loss: Normal CC once the last unvalidated packet is acknowledged;
    /// in Validating each ACK grows cwnd by the base's slow start (§4.4 "Updating CWND"), from
    /// the flight of 150: 150 more.
    #[test]
    fn validated_jump_returns_to_normal_cc() {
        let mut s = Sender::new(300, RTT);
        s.reach_jump();
        s.send(121);
        s.now += RTT / 2;
        s.ack(150);
        assert_eq!(s.cr.phase(), Phase::SlowStart);
        assert_eq!(s.segments().0, 150 + 150);
    }

    /// Appendix A.2, rate-limited: the sender stops after 50 unvalidated packets; one RTT
    /// later cwnd becomes the flight_size and the jump is validated from there.
    #[test]
    fn rate_limited_sender_keeps_the_flight_it_used() {
        let mut s = Sender::new(300, RTT);
        s.reach_jump();
        s.send(50);
        s.now += 2 * RTT;
        s.ack(1);
        assert_eq!(s.cr.phase(), Phase::Validating);
        assert_eq!(s.cr.cwnd(), 78 * MSS);
    }

    /// §4.2: a minimum RTT at or below saved_rtt / 2 (or beyond 10 saved_rtt) is a different
    /// path: no jump, cwnd as the base CC left it. So is a saved_cwnd whose half is below the
    /// window already reached.
    #[test]
    fn unconfirmed_paths_do_not_jump() {
        for (saved_cwnd, saved_rtt) in [(300, 2 * RTT), (300, RTT / 11), (40, RTT)] {
            let mut s = Sender::new(saved_cwnd, saved_rtt);
            s.reach_jump();
            assert_eq!(s.segments().0, 29, "{saved_cwnd} {saved_rtt}");
            assert_eq!(s.cr.phase(), Phase::SlowStart);
        }
    }

    /// §4.2: a sender with data waiting jumps on the ACK that acknowledges the IW, PipeSize
    /// the flight then.
    #[test]
    fn sender_with_data_waiting_jumps_when_the_iw_is_acknowledged() {
        let mut s = Sender::new(300, RTT);
        s.data_waiting = true;
        s.send(10);
        s.now += RTT;
        for _ in 0..10 {
            s.ack(1);
            s.send(2);
        }
        assert_eq!(s.cr.phase(), Phase::Unvalidated);
        assert_eq!(s.segments(), (150, 18));
    }

    /// §4.2: congestion in Reconnaissance ends Careful Resume with the base's own response.
    #[test]
    fn loss_in_reconnaissance_is_normal_cc() {
        let mut s = Sender::new(300, RTT);
        s.send(10);
        s.cr.on_congestion_event(&CongestionEvent {
            mss: MSS,
            ..Default::default()
        });
        assert_eq!(s.cr.phase(), Phase::Recovery);
        assert_eq!(s.cr.cwnd(), 5 * MSS);
        s.cr.on_recovery_exit(0);
        s.ack(10);
        s.send(40);
        assert_ne!(s.cr.phase(), Phase::Unvalidated);
    }
}
