//! SUSS (Arghavani, Zhang, Eyers, Arghavani, "SUSS: Improving TCP Performance by Speeding Up
//! Slow-Start", ACM SIGCOMM 2024) as its Linux 6.8 code runs it (SUSSdeveloper/SUSS,
//! `sourceCode/linux-6.8/suss/tcp_cubic.c`, blocks E1-E12, and `tcp_output.c` D1): HyStart
//! whose rounds are split into a "blue" ACK train (the ACKs of the packets standard slow start
//! would have sent) and "red" ACKs (of the extra ones).
//!
//! - At the tail of each round's blue train the train's duration is measured (`delta_t_bat`).
//!   In round 2 (the IW's ACKs) growth may quadruple if min RTT > 10 ms and the train took
//!   under min RTT / 4, else SUSS stops for good; later (up to `suss_max` rounds) if the
//!   projected train still fits in min RTT and the RTT has not risen (`suss_speedup`).
//! - Quadrupling: cwnd may reach `suss_limit` = cwnd + acked + red_pkt - red_ack (red_pkt =
//!   blue_pkt (2^(round-1) - 1)), the extra data paced at red_pkt per (min RTT - min RTT /
//!   2^(round-1)), red ACKs not growing cwnd; ACK clocking again at the next round.
//! - HyStart's ACK-train detector is replaced by a cap on cwnd (`suss_cap`): once a train
//!   lasts (delay_min / 2) / 2^jumps, slow start ends when cwnd passes cwnd + blue ACKs x
//!   (2^jumps - 1); the delay detector stays. Either exit after more than one jump sets cwnd
//!   to the bytes in flight.
//!
//! Not modelled: the guard before each pacing period (`suss_pacing_start_ns`: the sans-IO
//! interface cannot delay a departure, so the extra data starts at the blue tail), the code's
//! override of the peer's window (`tp->snd_wnd = max(snd_wnd, 10 MSS << rounds)`: the
//! transport's receive window still binds), its gating on port 20480, and its changes on
//! loss (cwnd to the flight, SUSS off). `TCP_INIT_CWND` (10) is the flow's initcwnd here.

use super::hystart::{Detect, HyStart};
use super::{SlowStart, SlowStartStep};
use crate::params::{Accepts, ParamInfo};
use crate::window::WindowGrowth;
use crate::{mul_div, AckEvent, Nanos, Phase, SentEvent, SECOND};

/// SUSS's own parameter; the `suss` algorithm also takes CUBIC's (its registry entry).
pub const SUSS_MAX: ParamInfo = ParamInfo {
    name: "suss_max",
    doc: "rounds in which growth may exceed 2x (tcp_cubic.c suss_max)",
    default: "3",
    accepts: Accepts::integer(1, 16),
};
/// `suss_speedup`: round 2 quadruples only above this min RTT (10 000 us).
const MIN_DELAY: Nanos = 10_000_000;

/// `tp->suss_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// 1: measuring, ACK clocking.
    Clocking,
    /// 2: the extra data of this round is paced.
    Pacing,
    /// 3, 4: slow start ended by the cap or by HyStart's delay detector.
    Ended,
    /// 10: off (round 2's train too slow or min RTT too small); HyStart as usual.
    Off,
}

/// SUSS's state for one connection (the `suss_*` fields of the SUSS tcp_cubic.c).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suss {
    /// The HyStart it runs alongside; its delay detector still ends slow start.
    pub hystart: HyStart,
    state: State,
    /// `TCP_INIT_CWND`, segments.
    iw: u64,
    mss: u64,
    /// `suss_round_no`, from 1.
    round: u64,
    /// Bytes sent when the round began (`suss_head_seq`) and the end of its blue part.
    head: u64,
    tail: u64,
    /// New data sent so far, bytes (`snd_nxt`).
    sent: u64,
    /// `suss_is_blue`: 1 in the blue train, 2 on its tail ACK, 0 for red ACKs.
    blue: u8,
    /// Segments acknowledged by this round's blue ACKs (`suss_blue_cnt`).
    blue_cnt: u64,
    round_start: Nanos,
    /// The previous round's `delta_t_bat`.
    prev_delta: Nanos,
    /// `suss_gf`: growth may still quadruple.
    growth_factor: bool,
    /// `suss_num_of_jump`: pacing periods so far.
    jumps: u32,
    /// The round in which min RTT last fell (`suss_r_minupdate`).
    min_update_round: u64,
    /// `suss_flag` and `suss_cap` (segments).
    capped: bool,
    cap: u64,
    /// `suss_limit`, bytes: cwnd this round may reach.
    limit: u64,
    /// `suss_rate`, bytes per second.
    rate: u64,
    /// `suss_max`.
    max_rounds: u64,
}

impl Suss {
    /// SUSS in its first round from `initcwnd` segments of `mss` bytes, HyStart with
    /// `low_window` and `detect`, at most 3 rounds.
    pub fn new(low_window: u64, detect: Detect, initcwnd: u64, mss: u64) -> Self {
        Suss {
            hystart: HyStart::new(low_window, detect),
            state: State::Clocking,
            iw: initcwnd,
            mss,
            round: 1,
            head: 0,
            tail: initcwnd * mss,
            sent: 0,
            blue: 0,
            blue_cnt: 0,
            round_start: 0,
            prev_delta: 0,
            growth_factor: true,
            jumps: 0,
            min_update_round: 0,
            capped: false,
            cap: 0,
            limit: 0,
            rate: 0,
            max_rounds: 3,
        }
    }

    /// SUSS for a flow: `suss_max` rounds; off from the start on a paced socket, as the code
    /// only starts it when `sk_pacing_status == SK_PACING_NONE`.
    pub fn for_flow(initcwnd: u64, mss: u64, max_rounds: u64, paced: bool) -> Self {
        let mut s = Suss::new(super::hystart::LOW_WINDOW, Detect::BOTH, initcwnd, mss);
        s.max_rounds = max_rounds;
        s.hystart.paced = paced;
        if paced {
            s.state = State::Off;
        }
        s
    }

    fn running(&self) -> bool {
        matches!(self.state, State::Clocking | State::Pacing)
    }

    /// Counts new data sent (retransmissions not).
    pub fn on_packet_sent(&mut self, sent: &SentEvent) {
        if !sent.retransmission {
            self.sent += sent.bytes;
        }
    }

    /// Pacing rate of the extra data, while it is sent.
    pub fn pacing_rate(&self) -> Option<u64> {
        (self.state == State::Pacing && self.rate > 0).then_some(self.rate)
    }

    /// Bursts while pacing: two segments, Linux's smallest TSO burst (`tcp_tso_autosize`).
    pub fn send_quantum(&self) -> Option<u64> {
        self.pacing_rate().map(|_| 2 * self.mss)
    }

    /// `suss_speedup`: may this round's growth be 4x?
    fn speedup(&mut self, delta: Nanos) -> bool {
        let min = self.hystart.delay_min;
        if self.round == 2 {
            if min > MIN_DELAY && delta < min / 4 {
                return true;
            }
            self.state = State::Off;
            return false;
        }
        // Condition 1: the train, projected one more doubling, still fits in min RTT.
        let delta_t = delta << (self.round - 2);
        let prev = self.prev_delta << (self.round - 3);
        let projected = mul_div(delta_t, delta_t, prev.max(1));
        if projected > min || self.round >= self.max_rounds + 2 {
            return false;
        }
        // Condition 2: the RTT has not risen by more than min / 8 per round since min fell.
        let k = self.round - self.min_update_round;
        (k + 1).saturating_mul(self.hystart.curr_rtt) <= min * (k + 1) + min * k / 8
    }

    /// `suss_measurements`, before slow start's growth; returns cwnd after it.
    fn measure(&mut self, ack: &AckEvent, acked: u64, mut cwnd: u64) -> u64 {
        let mss = ack.mss.max(1);
        if self.blue == 2 {
            self.blue = 0;
        }
        if ack.delivered > self.head {
            self.blue = 1;
            self.blue_cnt = 0;
            self.round += 1;
            self.round_start = ack.now;
            self.head = self.sent;
            self.state = State::Clocking;
        }
        if ack.delivered >= self.tail && self.round >= 2 {
            let elapsed = ack.now.saturating_sub(self.round_start);
            self.blue = 2;
            // The kernel's u32 arithmetic wraps here in a slow start of many rounds; these
            // saturate (a train longer than any window, never reached).
            let blue_pkt = shl_saturating(self.iw, self.round - 1);
            let blue_ack = blue_pkt >> 1;
            self.tail = self.head.saturating_add(blue_pkt.saturating_mul(mss));
            let delta = mul_div(blue_pkt, elapsed, self.blue_cnt.saturating_mul(2).max(1));
            if self.growth_factor {
                self.growth_factor = self.speedup(delta);
            }
            if self.growth_factor {
                self.prev_delta = delta;
                let red_pkt = shl_saturating(blue_pkt, self.round - 1) - blue_pkt;
                let red_ack = shl_saturating(blue_ack, self.round - 2) - blue_ack;
                let limit = (cwnd / mss)
                    .saturating_add(acked)
                    .saturating_add(red_pkt)
                    .saturating_sub(red_ack);
                self.limit = limit.saturating_mul(mss);
                let min = self.hystart.delay_min;
                let pacing = min - (min >> (self.round - 1));
                self.rate = mul_div(red_pkt.saturating_mul(mss), SECOND, pacing.max(1));
                if min - pacing > delta {
                    self.state = State::Pacing;
                    self.jumps += 1;
                } else {
                    self.state = State::Clocking;
                }
            }
        }
        if self.blue != 0 {
            self.blue_cnt = self.blue_cnt.saturating_add(acked);
        }
        if self.blue == 0 && self.state == State::Pacing {
            // Slow start adds them back after; where it adds less (a window capped since), the
            // window keeps one segment, as every controller's does.
            cwnd = cwnd.saturating_sub(acked.saturating_mul(mss)).max(mss);
        }
        cwnd
    }

    /// `suss_cap`, where `hystart_update` ran the ACK-train test; returns cwnd if slow start
    /// ends here.
    fn cap_check(&mut self, cwnd: u64, ack: &AckEvent) -> Option<u64> {
        let mss = ack.mss.max(1);
        if self.capped && cwnd / mss > self.cap {
            self.hystart.found = true;
            self.state = State::Ended;
            return Some(if self.jumps > 1 {
                ack.bytes_in_flight.max(mss)
            } else {
                cwnd
            });
        }
        if !self.capped && self.running() && self.blue != 0 {
            let h = &mut self.hystart;
            if ack.now.saturating_sub(h.last_ack) <= super::hystart::ACK_DELTA {
                h.last_ack = ack.now;
                let threshold = h.delay_min / 2;
                if ack.now.saturating_sub(h.round_start) << self.jumps > threshold {
                    self.capped = true;
                    let more = self.blue_cnt.saturating_mul((1 << self.jumps) - 1);
                    self.cap = (cwnd / mss).saturating_add(more);
                }
            }
        }
        None
    }

    /// Whether SUSS is still running (measuring or pacing) and so wants every ACK.
    pub fn samples_every_ack(&self) -> bool {
        self.running()
    }

    /// One ACK in slow start: HyStart's detectors with SUSS's cap, and growth by up to 4x per
    /// round.
    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let mss = ack.mss.max(1);
        let acked = ack.bytes_acked.div_ceil(mss);
        let mut cwnd = cwnd;
        // cubictcp_acked: delay_min (and the round it fell in), then hystart_update with
        // suss_cap in place of the ACK train while SUSS runs.
        let mut ended_at = None;
        if ack.rtt.is_some() && self.hystart.detecting(cwnd, ack) {
            ended_at = self.cap_check(cwnd, ack);
        }
        self.hystart.ack_train_off = self.state != State::Off;
        let found_before = self.hystart.found;
        if ended_at.is_none() {
            if self.hystart.acked(cwnd, ack) {
                self.min_update_round = self.round;
            }
            if self.hystart.found && !found_before && self.running() {
                self.state = State::Ended;
                if self.jumps > 1 {
                    ended_at = Some(ack.bytes_in_flight.max(mss));
                }
            }
        }
        self.hystart.track_round(ack);
        // cubictcp_cong_avoid: suss_measurements, then slow start if cwnd-limited.
        if self.running() && !self.capped {
            cwnd = self.measure(ack, acked, cwnd);
        }
        if self.hystart.found {
            return SlowStartStep {
                cwnd: ended_at.unwrap_or(cwnd),
                leftover_credit: growth.ack_credit(ack),
                exit: true,
                phase: Phase::SlowStart,
            };
        }
        if !ack.cwnd_limited {
            return SlowStartStep {
                cwnd,
                leftover_credit: 0,
                exit: false,
                phase: Phase::SlowStart,
            };
        }
        let mut step = SlowStart::standard_step(cwnd, ssthresh, ack, growth);
        // tcp_output.c D1: while pacing, each packet that fills cwnd raises it by two until
        // suss_limit; the pacer spreads what that allows, so cwnd goes there at once.
        if self.state == State::Pacing {
            step.cwnd = step.cwnd.max(self.limit.min(ssthresh));
        }
        step
    }
}

/// `x << n`, or `u64::MAX` if bits would be lost.
fn shl_saturating(x: u64, n: u64) -> u64 {
    if x == 0 {
        0
    } else if n >= u64::from(x.leading_zeros()) {
        u64::MAX
    } else {
        x << n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_based::LossBased;
    use crate::window::AckCounting;
    use crate::{CongestionController, RateSample};

    const MSS: u64 = 1000;
    const MS: Nanos = 1_000_000;

    fn cubic_suss() -> LossBased<crate::cubic::Cubic> {
        let suss = Suss::new(16, Detect::BOTH, 10, MSS);
        LossBased::new(
            MSS,
            10,
            AckCounting::Bytes,
            SlowStart::Suss(Box::new(suss)),
            crate::cubic::Cubic::new(0.4, 0.7, true),
        )
    }

    /// The IW's ten ACKs, `gap` apart from 100 ms, RTT 100 ms, each for one segment sent before
    /// the round began.
    fn iw_train(c: &mut LossBased<crate::cubic::Cubic>, gap: Nanos) {
        for _ in 0..10 {
            c.on_packet_sent(&SentEvent {
                bytes: MSS,
                ..Default::default()
            });
        }
        for i in 0..10u64 {
            c.on_ack(&AckEvent {
                now: 100 * MS + i * gap,
                bytes_acked: MSS,
                mss: MSS,
                rtt: Some(100 * MS),
                srtt: 100 * MS,
                min_rtt: 100 * MS,
                rate: Some(RateSample {
                    prior_delivered: 0,
                    ..Default::default()
                }),
                delivered: (i + 1) * MSS,
                cwnd_limited: true,
                ..Default::default()
            });
        }
    }

    /// suss_speedup in round 2: the IW's train took 9 ms, delta_t_bat = 20 x 9 / (2 x 9) =
    /// 10 ms, under min RTT / 4 = 25 ms: cwnd goes to suss_limit = 19 + 1 + 20 - 0 = 40
    /// segments (cwnd before the tail ACK, its own segment, 20 red, none of them acked yet:
    /// 4x the IW), the 20 extra paced over min RTT / 2.
    #[test]
    fn a_quick_iw_train_quadruples_the_window() {
        let mut c = cubic_suss();
        iw_train(&mut c, MS);
        assert_eq!(c.cwnd(), 40 * MSS);
        assert_eq!(c.pacing_rate(), Some(20 * MSS * 1000 / 50));
    }

    /// The same train 5 ms apart: delta_t_bat 50 ms, above 25 ms: SUSS stops for good and
    /// slow start doubles (cwnd 20).
    #[test]
    fn a_slow_iw_train_turns_suss_off() {
        let mut c = cubic_suss();
        iw_train(&mut c, 5 * MS);
        assert_eq!(c.cwnd(), 20 * MSS);
        assert_eq!(c.pacing_rate(), None);
        let SlowStart::Suss(s) = &c.slow_start else {
            unreachable!()
        };
        assert_eq!(s.state, State::Off);
    }
}

#[cfg(test)]
mod property_tests {
    use super::*;
    use crate::{CcSpec, CommonParams, Controller};
    use crate::{CongestionController, RateSample};
    use proptest::prelude::*;

    const MSS: u64 = 1448;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Random ACK trains: in slow start cwnd falls only where the code lowers it, on the
        /// exit after more than one jump (to the bytes in flight, plus the ACK's leftover
        /// growth) or on a red ACK that is not cwnd-limited while pacing (by what it
        /// acknowledges); pacing comes with a quantum.
        #[test]
        fn cwnd_falls_only_where_suss_lowers_it(
            steps in proptest::collection::vec(
                (1u64..8, 0u64..3000, 20u64..300, any::<bool>(), any::<bool>()), 1..400)
        ) {
            let common = CommonParams { mss: MSS, initcwnd: 10, abc: true, seed: 1, paced: false };
            let mut c = Controller::new(&CcSpec::named("suss"), &common).unwrap();
            let (mut now, mut sent, mut delivered) = (0u64, 0u64, 0u64);
            for (segments, gap_us, rtt_ms, limited, new_round) in steps {
                while sent < delivered + c.cwnd() {
                    sent += MSS;
                    c.on_packet_sent(&SentEvent {
                        now,
                        bytes: MSS,
                        bytes_in_flight: sent - delivered,
                        total_sent: sent,
                        retransmission: false,
                    });
                }
                now += gap_us * 1000;
                let bytes = (segments * MSS).min(sent - delivered);
                let prior = if new_round { delivered } else { delivered.saturating_sub(1) };
                delivered += bytes;
                let before = (c.cwnd(), c.phase());
                let in_flight = sent - delivered;
                c.on_ack(&AckEvent {
                    now,
                    bytes_acked: bytes,
                    mss: MSS,
                    rtt: Some(rtt_ms * 1_000_000),
                    srtt: rtt_ms * 1_000_000,
                    min_rtt: rtt_ms * 1_000_000,
                    rate: Some(RateSample { prior_delivered: prior, ..Default::default() }),
                    delivered,
                    prior_in_flight: in_flight + bytes,
                    bytes_in_flight: in_flight,
                    cwnd_limited: limited,
                    ..Default::default()
                });
                let after = c.cwnd();
                if before.1.is_initial_slow_start() && after < before.0 {
                    // Set to the flight, then congestion avoidance's growth from the
                    // ACK's leftover credit (at most what it acknowledges).
                    let flight = in_flight.max(MSS);
                    let drained = c.phase() == Phase::CongestionAvoidance
                        && (flight..=flight + bytes).contains(&after);
                    let red = !limited && before.0 - after == bytes.div_ceil(MSS) * MSS;
                    prop_assert!(drained || red, "{} -> {after}", before.0);
                }
                prop_assert!((MSS..1 << 50).contains(&after));
                if c.pacing_rate().is_some() {
                    prop_assert!(c.send_quantum().unwrap_or(0) >= MSS);
                }
            }
        }
    }
}
