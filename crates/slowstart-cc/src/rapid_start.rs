//! Rapid Start (draft-kazuho-ccwg-rapid-start-02, Oku 2026) around Reno or CUBIC:
//!
//! - The first flight: once the handshake gives an RTT, cwnd = `first_flight` x IW, paced
//!   over that RTT (-02's abstract: "an initial window up to 2x that of classic paced slow
//!   start at a comparable sending rate").
//! - Growth: +2 bytes per byte acknowledged (3x per RTT) while the RTT floor of the last
//!   observation window (an interval of length min_rtt) stays at or below
//!   min(min_rtt + 4 ms, 1.1 min_rtt); once it has not, +1 per byte (2x), for good.
//! - The first loss or CE: cwnd x silence_factor, then during the recovery period
//!   -ack_factor per byte acknowledged and -loss_factor per byte newly lost, not below
//!   cwnd_before_loss x (silence - ack/3 - 2 loss/3) nor IW x beta nor 2 segments; the base's
//!   congestion avoidance follows with ssthresh = cwnd.
//!
//! Factors from beta (the base's decrease: 0.5 Reno, 0.7 CUBIC) and K = 2/3 (-02; -00 had
//! 11/18): silence = loss = beta + K (1 - beta), ack = K (1 - beta). In the draft's model
//! (Appendix A: cwnd W = 3 BDP when the loss is found, two thirds of the last flight lost)
//! sending resumes once (1 - beta) BDP is acknowledged and the recovery ends at beta x BDP
//! (`model_*` tests below).
//!
//! The recovery period is QUIC's (RFC 9002 §7.3.2): it ends once a packet sent after the loss
//! is acknowledged, so only the flight that was out at the loss reduces cwnd (the model's
//! assumption); `recovery_period = "tcp"` keeps reducing until everything outstanding at the
//! loss is acknowledged, retransmissions and new data included (RFC 6582).
//!
//! During its recovery period the draft sends whenever cwnd exceeds the bytes in flight (QUIC,
//! RFC 9002 §7.3.2), not by PRR: `ssthresh` reads unset then, which the transport's PRR takes
//! as "send by cwnd". Lost bytes are the drop in bytes in flight an ACK does not account for.

use crate::loss_based::{AvoidanceRule, LossBased};
use crate::params::CcError;
use crate::params::{Accepts, ParamInfo, Params};
use crate::SECOND;
use crate::{mul_div, AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SentEvent};

/// The parameters of `rapid-start`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "base",
        doc: "the congestion avoidance Rapid Start hands over to (and its beta: Reno 0.5, \
              CUBIC its beta)",
        default: "reno",
        accepts: Accepts::Word(&["reno", "cubic"]),
    },
    ParamInfo {
        name: "first_flight",
        doc: "the first flight, in initial windows, paced over the handshake RTT",
        default: "2",
        accepts: Accepts::number(1.0, 2.0),
    },
    ParamInfo {
        name: "rtt_margin_ms",
        doc: "3x growth while the RTT floor is within min_rtt + this, ms",
        default: "4",
        accepts: Accepts::number(0.0, 1000.0),
    },
    ParamInfo {
        name: "rtt_margin_ratio",
        doc: "... and within min_rtt x (1 + this)",
        default: "0.1",
        accepts: Accepts::number(0.0, 10.0),
    },
    ParamInfo {
        name: "k",
        doc: "K of the reduction factors (-02: 2/3; -00: 11/18)",
        default: "0.6666666666666666",
        accepts: Accepts::number(0.0, 1.0),
    },
    ParamInfo {
        name: "recovery_period",
        doc: "quic: the reductions end once a packet sent after the loss is acknowledged (RFC \
              9002 §7.3.2, the draft's model); tcp: once everything outstanding at the loss is \
              (RFC 6582), so ACKs of retransmissions and new data reduce cwnd too",
        default: "quic",
        accepts: Accepts::Word(&["quic", "tcp"]),
    },
    ParamInfo {
        name: "iw_floor",
        doc: "stop reducing at IW x beta during the recovery period (the draft's MAY)",
        default: "true",
        accepts: Accepts::Bool,
    },
    crate::window::RATE_LIMITED_GROWTH,
    // CUBIC's own, read with base = "cubic".
    crate::cubic::C,
    crate::cubic::BETA,
    crate::cubic::FAST_CONVERGENCE,
    crate::cubic::LINUX_INITIAL_GROWTH,
];

/// The reduction factors of the recovery period (draft §"Deriving the Reduction Factors").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors {
    /// cwnd is multiplied by this at the first loss or CE.
    pub silence: f64,
    /// Bytes removed from cwnd per byte acknowledged in the recovery period.
    pub ack: f64,
    /// Bytes removed from cwnd per byte newly lost in the recovery period.
    pub loss: f64,
}

impl Factors {
    /// From the base's beta and K: silence = loss = beta + K (1 - beta), ack = K (1 - beta).
    pub fn new(beta: f64, k: f64) -> Self {
        Factors {
            silence: beta + k * (1.0 - beta),
            ack: k * (1.0 - beta),
            loss: beta + k * (1.0 - beta),
        }
    }

    /// The lowest cwnd the recovery period reaches, as a fraction of cwnd before the loss:
    /// losses from tail drop after 3x growth stay below two thirds of the flight.
    pub fn floor(&self) -> f64 {
        self.silence - self.ack / 3.0 - 2.0 * self.loss / 3.0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Startup,
    Recovery,
    Done,
}

/// Rapid Start (draft-kazuho-ccwg-rapid-start-02) around a loss-based base controller.
#[derive(Clone, Debug)]
pub struct RapidStart<A: AvoidanceRule> {
    /// The congestion avoidance it hands over to (Reno or CUBIC).
    pub base: LossBased<A>,
    state: State,
    factors: Factors,
    beta: f64,
    mss: u64,
    iw: u64,
    first_flight: f64,
    margin: Nanos,
    margin_ratio: f64,
    /// Pacing rate of the first flight, bytes/s, until its first ACK.
    first_flight_rate: Option<u64>,
    /// The first flight was set up, or data was acknowledged before any handshake RTT: the
    /// first flight happens once.
    first_flight_done: bool,
    min_rtt: Nanos,
    /// The current observation window: its start and lowest RTT sample.
    window_start: Nanos,
    window_floor: Nanos,
    /// A window's floor exceeded the threshold: 2x growth from now on.
    queue_seen: bool,
    /// cwnd in the recovery period, bytes (fractional reductions kept).
    recovery_cwnd: f64,
    recovery_floor: f64,
    /// Lost bytes the congestion event already counted, not to count again on its ACK.
    lost_counted: u64,
    /// End the reductions at the first ACK of a packet sent after the loss (QUIC).
    quic_period: bool,
    /// Bytes delivered once the ACK that found the loss was processed: a packet sent later
    /// has delivered at least this much before it (its rate sample's prior_delivered).
    delivered_at_loss: Option<u64>,
}

impl<A: AvoidanceRule> RapidStart<A> {
    /// Around `base` (its cwnd is the IW): `first_flight` IWs first, 3x growth while the RTT floor
    /// stays within min(min_rtt + `margin` ns, min_rtt (1 + `margin_ratio`)), recovery factors from
    /// `beta` and `k`, and no reduction below IW x beta if `iw_floor`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        base: LossBased<A>,
        mss: u64,
        beta: f64,
        k: f64,
        first_flight: f64,
        margin: Nanos,
        margin_ratio: f64,
        iw_floor: bool,
    ) -> Self {
        let iw = base.cwnd();
        Self {
            base,
            state: State::Startup,
            factors: Factors::new(beta, k),
            beta,
            mss,
            iw: if iw_floor { iw } else { 0 },
            first_flight,
            margin,
            margin_ratio,
            first_flight_rate: None,
            first_flight_done: false,
            min_rtt: u64::MAX,
            window_start: 0,
            window_floor: u64::MAX,
            queue_seen: false,
            recovery_cwnd: 0.0,
            recovery_floor: 0.0,
            lost_counted: 0,
            quic_period: true,
            delivered_at_loss: None,
        }
    }

    /// End the reductions as TCP ends recovery (everything outstanding at the loss
    /// acknowledged) rather than as QUIC does.
    pub fn with_tcp_recovery_period(mut self) -> Self {
        self.quic_period = false;
        self
    }

    /// The recovery period is over: congestion avoidance from the cwnd it reached.
    fn end_recovery(&mut self) {
        let cwnd = self.base.cwnd();
        self.base.set_window(cwnd, Some(cwnd));
        self.state = State::Done;
    }

    /// Bytes of growth per byte acknowledged now: 2 (3x per RTT) or 1 (2x).
    pub fn growth_factor(&self) -> u64 {
        if self.queue_seen {
            1
        } else {
            2
        }
    }

    /// min(min_rtt + margin, min_rtt x (1 + ratio)).
    fn threshold(&self) -> Nanos {
        let ratio = (self.min_rtt as f64 * (1.0 + self.margin_ratio)) as Nanos;
        self.min_rtt.saturating_add(self.margin).min(ratio)
    }

    fn on_rtt(&mut self, now: Nanos, rtt: Nanos) {
        self.min_rtt = self.min_rtt.min(rtt);
        if self.window_floor == u64::MAX {
            self.window_start = now;
        }
        self.window_floor = self.window_floor.min(rtt);
        if now.saturating_sub(self.window_start) >= self.min_rtt {
            if self.window_floor > self.threshold() {
                self.queue_seen = true;
            }
            self.window_start = now;
            self.window_floor = u64::MAX;
        }
    }

    fn reduce(&mut self, bytes: f64) {
        self.recovery_cwnd = (self.recovery_cwnd - bytes).max(self.recovery_floor);
        self.base.set_window(self.recovery_cwnd as u64, None);
    }
}

impl<A: AvoidanceRule> CongestionController for RapidStart<A> {
    fn on_packet_sent(&mut self, sent: &SentEvent) {
        self.base.on_packet_sent(sent);
    }

    fn on_ack(&mut self, ack: &AckEvent) {
        self.mss = ack.mss;
        self.first_flight_rate = None;
        self.first_flight_done = true;
        match self.state {
            State::Startup => {
                if let Some(rtt) = ack.rtt {
                    self.on_rtt(ack.now, rtt);
                }
                if ack.cwnd_limited && !ack.in_recovery {
                    let grown = self.base.cwnd() + self.growth_factor() * ack.bytes_acked;
                    self.base.set_window(grown, None);
                }
            }
            State::Recovery => {
                let sent_after_loss = match (self.delivered_at_loss, ack.rate) {
                    (Some(at_loss), Some(rate)) => rate.prior_delivered >= at_loss,
                    _ => false,
                };
                if self.quic_period && sent_after_loss {
                    self.end_recovery();
                    return self.base.on_ack(ack);
                }
                self.delivered_at_loss.get_or_insert(ack.delivered);
                let left = ack.prior_in_flight.saturating_sub(ack.bytes_in_flight);
                let lost = left.saturating_sub(ack.bytes_acked);
                let newly_lost = lost.saturating_sub(self.lost_counted);
                self.lost_counted = 0;
                let f = self.factors;
                self.reduce(f.ack * ack.bytes_acked as f64 + f.loss * newly_lost as f64);
            }
            State::Done => self.base.on_ack(ack),
        }
    }

    /// The handshake's RTT: the first flight becomes `first_flight` IWs, paced over it.
    fn on_rtt_sample(&mut self, now: Nanos, rtt: Nanos) {
        if self.state != State::Startup || rtt == 0 || self.first_flight_done {
            return;
        }
        self.on_rtt(now, rtt);
        let flight = (self.base.cwnd() as f64 * self.first_flight) as u64;
        self.base.set_window(flight, None);
        self.first_flight_rate = Some(mul_div(flight, SECOND, rtt).max(1));
        self.first_flight_done = true;
    }

    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        if self.state != State::Startup {
            if self.state == State::Done {
                self.base.on_congestion_event(event);
            }
            return;
        }
        let before = self.base.cwnd() as f64;
        let f = self.factors;
        self.recovery_floor = (before * f.floor())
            .max(self.iw as f64 * self.beta)
            .max(2.0 * event.mss as f64);
        self.recovery_cwnd = before * f.silence;
        self.lost_counted = event.bytes_lost;
        self.delivered_at_loss = None;
        // The base sees the loss (CUBIC keeps W_max from it, its recovery phase begins); the
        // window is Rapid Start's.
        self.base.on_congestion_event(event);
        self.reduce(f.loss * event.bytes_lost as f64);
        self.first_flight_rate = None;
        self.state = State::Recovery;
    }

    /// The recovery period ends: congestion avoidance from the cwnd it reached.
    fn on_recovery_exit(&mut self, now: Nanos) {
        if self.state == State::Recovery {
            self.end_recovery();
        }
        self.base.on_recovery_exit(now);
    }

    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64) {
        self.state = State::Done;
        self.first_flight_rate = None;
        self.base.on_rto(now, bytes_in_flight);
    }

    fn cwnd(&self) -> u64 {
        self.base.cwnd()
    }

    fn ssthresh(&self) -> u64 {
        match self.state {
            State::Recovery => u64::MAX,
            _ => self.base.ssthresh(),
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.first_flight_rate.or_else(|| self.base.pacing_rate())
    }

    fn send_quantum(&self) -> Option<u64> {
        self.base.send_quantum()
    }

    fn phase(&self) -> Phase {
        self.base.phase()
    }
}

/// Rapid Start's settings from a spec, with `beta` the base's decrease.
pub fn from_params<A: AvoidanceRule>(
    params: &Params,
    base: LossBased<A>,
    mss: u64,
    beta: f64,
) -> Result<RapidStart<A>, CcError> {
    let rapid = RapidStart::new(
        base,
        mss,
        beta,
        params.number("k")?,
        params.number("first_flight")?,
        (params.number("rtt_margin_ms")? * 1e6) as Nanos,
        params.number("rtt_margin_ratio")?,
        params.boolean("iw_floor")?,
    );
    Ok(match params.choice("recovery_period")? {
        "tcp" => rapid.with_tcp_recovery_period(),
        _ => rapid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_based::RenoRule;
    use crate::slow_start::SlowStart;
    use crate::window::AckCounting;

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    fn rapid(initcwnd: u64, beta: f64) -> RapidStart<RenoRule> {
        let base = LossBased::new(
            MSS,
            initcwnd,
            AckCounting::Bytes,
            SlowStart::Standard,
            RenoRule,
        );
        RapidStart::new(base, MSS, beta, 2.0 / 3.0, 2.0, 4 * MS, 0.1, false)
    }

    fn ack(now: Nanos, rtt: Nanos, in_flight: u64, acked: u64, lost: u64) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: acked,
            mss: MSS,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            prior_in_flight: in_flight,
            bytes_in_flight: in_flight - acked - lost,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    /// -02's factors with K = 2/3: beta 0.5 gives 5/6, 1/3, 5/6; beta 0.7 gives 0.9, 0.2, 0.9;
    /// the floor is beta / 3 of the window before the loss.
    #[test]
    fn reduction_factors_follow_beta() {
        let f = Factors::new(0.5, 2.0 / 3.0);
        assert!((f.silence - 5.0 / 6.0).abs() < 1e-12 && (f.ack - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(f.silence, f.loss);
        assert!((f.floor() - 0.5 / 3.0).abs() < 1e-12);
        let f = Factors::new(0.7, 2.0 / 3.0);
        assert!((f.silence - 0.9).abs() < 1e-12 && (f.ack - 0.2).abs() < 1e-12);
        assert!((f.floor() - 0.7 / 3.0).abs() < 1e-12);
    }

    /// The draft's model (Appendix A): the loss is found with cwnd = W = 3 BDP in flight and
    /// two thirds of that flight lost, evenly spread. Sending resumes (cwnd above the bytes in
    /// flight) once (1 - beta) BDP has been acknowledged; when the whole flight has left,
    /// cwnd = beta x BDP.
    #[test]
    fn model_resumes_after_one_minus_beta_bdp_and_ends_at_beta_bdp() {
        const BDP: u64 = 300;
        for beta in [0.5, 0.7] {
            let mut c = rapid(3 * BDP, beta);
            let mut in_flight = 3 * BDP * MSS;
            c.on_congestion_event(&CongestionEvent {
                bytes_lost: 2 * MSS,
                bytes_in_flight: in_flight,
                mss: MSS,
                ..Default::default()
            });
            assert_eq!(c.phase(), Phase::Recovery);
            let mut resumed_after = None;
            for delivered in 1..=BDP {
                c.on_ack(&ack(0, 100 * MS, in_flight, MSS, 2 * MSS));
                in_flight -= 3 * MSS;
                if resumed_after.is_none() && c.cwnd() > in_flight {
                    resumed_after = Some(delivered);
                }
            }
            let expected = ((1.0 - beta) * BDP as f64).round() as u64;
            let resumed = resumed_after.unwrap();
            assert!(
                resumed.abs_diff(expected) <= 1,
                "beta {beta}: resumed after {resumed}"
            );
            let end = (beta * (BDP * MSS) as f64) as u64;
            assert!(
                c.cwnd().abs_diff(end) <= MSS,
                "beta {beta}: cwnd {}",
                c.cwnd()
            );
            // Congestion avoidance from there, ssthresh = cwnd.
            c.on_recovery_exit(0);
            assert_eq!(c.ssthresh(), c.cwnd());
            assert_eq!(c.phase(), Phase::CongestionAvoidance);
        }
    }

    /// QUIC's recovery period: the first ACK of a packet sent after the loss ends the
    /// reductions; TCP's goes on until the transport's recovery ends.
    #[test]
    fn recovery_period_ends_at_the_first_ack_of_a_later_packet() {
        for (tcp, reduced_by_it) in [(false, false), (true, true)] {
            let mut c = rapid(30, 0.5);
            if tcp {
                c = c.with_tcp_recovery_period();
            }
            c.on_congestion_event(&CongestionEvent {
                bytes_in_flight: 30 * MSS,
                mss: MSS,
                ..Default::default()
            });
            let mut first = ack(0, 100 * MS, 30 * MSS, MSS, 0);
            first.delivered = 10 * MSS;
            c.on_ack(&first);
            let before = c.cwnd();
            let mut later = ack(0, 100 * MS, 29 * MSS, MSS, 0);
            later.delivered = 11 * MSS;
            later.rate = Some(crate::RateSample {
                prior_delivered: 10 * MSS,
                ..Default::default()
            });
            c.on_ack(&later);
            assert_eq!(c.cwnd() < before, reduced_by_it, "tcp {tcp}");
            assert_eq!(c.ssthresh() == u64::MAX, tcp, "tcp {tcp}");
        }
    }

    /// 3x per RTT while the RTT floor stays within min(min_rtt + 4 ms, 1.1 min_rtt); 2x once a
    /// whole observation window (min_rtt long) saw only RTTs above it.
    #[test]
    fn grows_threefold_until_a_window_sees_a_queue() {
        let mut c = rapid(10, 0.5);
        let rtt = 100 * MS;
        // One RTT of ACKs at the minimum: 10 -> 30 segments.
        for i in 0..10 {
            c.on_ack(&ack(i * MS, rtt, 10 * MSS, MSS, 0));
        }
        assert_eq!(c.cwnd(), 30 * MSS);
        // 103 ms is within 4 ms: still 3x.
        for i in 0..30 {
            c.on_ack(&ack(rtt + i * 3 * MS, rtt + 3 * MS, 30 * MSS, MSS, 0));
        }
        assert_eq!(c.cwnd(), 90 * MSS);
        // A window whose floor is 105 ms (beyond min_rtt + 4 ms = 104 ms): 2x from then on.
        // The first 105 ms sample closes the window of 103 ms ones; the next opens one that
        // closes 100 ms later.
        let start = 3 * rtt;
        for i in 0..=100 {
            assert_eq!(c.growth_factor(), 2, "{i}");
            c.on_ack(&ack(start + i * MS, rtt + 5 * MS, 90 * MSS, MSS, 0));
        }
        c.on_ack(&ack(start + 101 * MS, rtt + 5 * MS, 90 * MSS, MSS, 0));
        assert_eq!(c.growth_factor(), 1);
        c.on_ack(&ack(start + 200 * MS, rtt, 90 * MSS, MSS, 0));
        assert_eq!(c.growth_factor(), 1, "2x stays");
    }

    /// The first flight: twice the IW, paced over the handshake RTT, until the first ACK.
    #[test]
    fn first_flight_is_two_initial_windows_paced_over_one_rtt() {
        let mut c = rapid(10, 0.5);
        c.on_rtt_sample(0, 100 * MS);
        assert_eq!(c.cwnd(), 20 * MSS);
        assert_eq!(c.pacing_rate(), Some(200_000));
        c.on_ack(&ack(100 * MS, 100 * MS, 20 * MSS, MSS, 0));
        assert_eq!(c.pacing_rate(), None);
        // Once only: a later RTT sample leaves cwnd alone.
        let cwnd = c.cwnd();
        c.on_rtt_sample(200 * MS, 100 * MS);
        assert_eq!((c.cwnd(), c.pacing_rate()), (cwnd, None));
    }
}
