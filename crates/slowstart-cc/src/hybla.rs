//! TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks",
//! Int. J. Satell. Commun. Netw. 22(5), 2004): growth made independent of the RTT by scaling
//! with rho = max(RTT / RTT0, 1). Slow start adds 2^rho - 1 segments per ACK, congestion
//! avoidance rho^2 / cwnd; the decrease is Reno's. Two implementations, as `model`:
//!
//! - `linux` (tcp_hybla.c): rho in eighths from the lowest smoothed RTT, 2^fraction from an
//!   8-entry table, fractions of a segment carried in 1/128ths (`snd_cwnd_cents`), one
//!   increment per ACK in both phases, cwnd clamped at 65 535 segments.
//! - `ns3` (tcp-hybla.cc): rho as a real number from the minimum RTT in whole milliseconds,
//!   slow start once per ACK (`SlowStart` with segmentsAcked >= 1), avoidance once per acked
//!   segment with a real-valued carry (`m_cWndCnt`).
//!
//! Linux grows as Reno outside the Open state (`hybla_state`: `hybla_en = ca_state ==
//! TCP_CA_Open`): after a timeout, standard slow start until the repair ends. Both models do.

use crate::loss_based::{AvoidanceRule, RenoRule};
use crate::params::CcError;
use crate::params::{Accepts, ParamInfo, Params};
use crate::slow_start::SlowStartStep;
use crate::window::WindowGrowth;
use crate::{AckEvent, CongestionEvent, Nanos, Phase};

/// The parameters of `hybla`.
pub const PARAMS: &[ParamInfo] = &[
    ParamInfo {
        name: "rtt0_ms",
        doc: "reference RTT RTT0, ms (Linux rtt0 = 25; ns-3 RRTT = 50)",
        default: "25",
        accepts: Accepts::integer(1, 10_000),
    },
    ParamInfo {
        name: "model",
        doc: "linux: tcp_hybla.c fixed-point arithmetic, rho from the lowest srtt; ns3: \
              tcp-hybla.cc real-valued rho from the minimum RTT",
        default: "linux",
        accepts: Accepts::Word(&["linux", "ns3"]),
    },
    ParamInfo {
        name: "rho_initial_window",
        doc: "start from rho segments once the handshake RTT is known, as Linux hybla_init \
              does (replacing initcwnd, even below it)",
        default: "false",
        accepts: Accepts::Bool,
    },
    crate::window::RATE_LIMITED_GROWTH,
];

/// Which implementation's arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Linux tcp_hybla.c: fixed-point rho in eighths from the lowest smoothed RTT.
    Linux,
    /// ns-3 tcp-hybla.cc: real-valued rho from the minimum RTT in whole ms.
    Ns3,
}

/// tcp_hybla.c `hybla_fraction`: 2^(i/8) << 7 for i in 0..8.
const FRACTIONS: [u64; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

/// tcp_hybla.c `hybla_init`: `snd_cwnd_clamp = 65535`.
const LINUX_CWND_CLAMP: u64 = 65_535;

/// ns-3 keeps cwnd in a uint32_t (TcpSocketState::m_cWnd); where it would wrap we saturate.
const NS3_CWND_MAX: u64 = u32::MAX as u64;

/// Hybla's rules: the slow-start and avoidance increases scaled by rho, Reno's decrease.
#[derive(Clone, Debug)]
pub struct Hybla {
    rtt0: Nanos,
    model: Model,
    rho_initial_window: bool,
    /// The RTT rho was computed from: lowest srtt (Linux `minrtt_us`) or min RTT (ns-3).
    base_rtt: Nanos,
    /// Linux `rho_3ls`: rho in eighths, at least 8.
    rho_8: u64,
    /// ns-3 `m_rho`.
    rho: f64,
    /// Linux `snd_cwnd_cents`: fractions of a segment, 1/128ths.
    cents: u64,
    /// Linux `snd_cwnd_cnt` as Hybla uses it: ACKs since the last increase when the per-ACK
    /// increase is below one segment.
    cnt: u64,
    /// ns-3 `m_cWndCnt`, segments.
    ns3_carry: f64,
    /// Bytes acked not yet counted as whole segments (ns-3 counts segments per ACK).
    ns3_bytes: u64,
    /// An ACK has arrived: the handshake's RTT sample, if any, came before it.
    acked: bool,
    /// Not repairing after a timeout (Linux `hybla_en`, TCP_CA_Open).
    open: bool,
}

impl Hybla {
    /// A rule with reference RTT `rtt0_ms` (ms) in `model`'s arithmetic; rho is 1 until an RTT
    /// is known.
    pub fn new(rtt0_ms: u64, model: Model, rho_initial_window: bool) -> Self {
        Hybla {
            rtt0: rtt0_ms * 1_000_000,
            model,
            rho_initial_window,
            base_rtt: u64::MAX,
            rho_8: 8,
            rho: 1.0,
            cents: 0,
            cnt: 0,
            ns3_carry: 0.0,
            ns3_bytes: 0,
            acked: false,
            open: true,
        }
    }

    /// Hybla from its declared parameters.
    pub fn from_params(params: &Params) -> Result<Self, CcError> {
        let model = match params.choice("model")? {
            "ns3" => Model::Ns3,
            _ => Model::Linux,
        };
        Ok(Hybla::new(
            params.integer("rtt0_ms")?,
            model,
            params.boolean("rho_initial_window")?,
        ))
    }

    /// rho as a real number (for traces and tests).
    pub fn rho(&self) -> f64 {
        match self.model {
            Model::Linux => self.rho_8 as f64 / 8.0,
            Model::Ns3 => self.rho,
        }
    }

    /// Linux `hybla_recalc_param` / ns-3 `RecalcParam` from a new lowest RTT.
    fn recalc(&mut self, rtt: Nanos) {
        self.base_rtt = rtt;
        self.rho_8 = (rtt * 8 / self.rtt0).max(8);
        let whole_ms = (rtt / 1_000_000) as f64;
        self.rho = (whole_ms / (self.rtt0 / 1_000_000) as f64).max(1.0);
    }

    /// Add `increment` 1/128ths of a segment, carrying the fraction (tcp_hybla.c).
    fn linux_add(&mut self, cwnd_segments: u64, increment: u64) -> u64 {
        let mut cwnd = cwnd_segments + (increment >> 7);
        self.cents += increment % 128;
        while self.cents >= 128 {
            cwnd += 1;
            self.cents -= 128;
            self.cnt = 0;
        }
        if increment == 0 && self.cnt >= cwnd {
            cwnd += 1;
            self.cnt = 0;
        }
        cwnd.min(LINUX_CWND_CLAMP)
    }
}

impl AvoidanceRule for Hybla {
    fn observe(&mut self, ack: &AckEvent) {
        self.acked = true;
        let rtt = match self.model {
            Model::Linux => ack.srtt,
            Model::Ns3 => ack.min_rtt,
        };
        if rtt > 0 && rtt < self.base_rtt {
            self.recalc(rtt);
        }
    }

    fn slow_start_step(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        _growth: &WindowGrowth,
    ) -> Option<SlowStartStep> {
        if !self.open {
            return None;
        }
        let mss = ack.mss.max(1);
        let grown = match self.model {
            Model::Linux => {
                let (whole, eighths) = (self.rho_8 >> 3, self.rho_8 & 7);
                let increment = (1u64 << whole.min(16)) * FRACTIONS[eighths as usize] - 128;
                self.linux_add(cwnd / mss, increment) * mss
            }
            Model::Ns3 => {
                let increment = ((2f64.powf(self.rho) - 1.0) * mss as f64) as u64;
                cwnd.saturating_add(increment).min(NS3_CWND_MAX)
            }
        };
        Some(SlowStartStep {
            cwnd: grown.min(ssthresh).max(cwnd),
            leftover_credit: 0,
            exit: false,
            phase: Phase::SlowStart,
        })
    }

    fn increase(
        &mut self,
        cwnd: u64,
        credit: u64,
        ack: &AckEvent,
        growth: &mut WindowGrowth,
    ) -> u64 {
        if !self.open {
            return RenoRule.increase(cwnd, credit, ack, growth);
        }
        let mss = ack.mss.max(1);
        let segments = (cwnd / mss).max(1);
        match self.model {
            Model::Linux => {
                // rho2_7ls = rho_3ls^2 << 1: rho^2 in 1/128ths.
                let increment = (self.rho_8 * self.rho_8 * 2) / segments;
                if increment < 128 {
                    self.cnt += 1;
                }
                (self.linux_add(segments, increment) * mss).max(cwnd)
            }
            Model::Ns3 => {
                self.ns3_bytes += credit;
                let acked = self.ns3_bytes / mss;
                self.ns3_bytes %= mss;
                self.ns3_carry += acked as f64 * self.rho * self.rho / segments as f64;
                let whole = self.ns3_carry.floor();
                self.ns3_carry -= whole;
                cwnd.saturating_add(whole as u64 * mss).min(NS3_CWND_MAX)
            }
        }
    }

    fn decrease(&mut self, cwnd: u64, event: &CongestionEvent) -> u64 {
        RenoRule.decrease(cwnd, event)
    }

    fn on_rto(&mut self) {
        self.open = false;
    }

    fn on_recovery_exit(&mut self) {
        self.open = true;
    }

    fn on_rtt_sample(&mut self, rtt: Nanos, cwnd: u64, mss: u64) -> u64 {
        if rtt > 0 && rtt < self.base_rtt {
            self.recalc(rtt);
        }
        if self.rho_initial_window && !self.acked {
            (self.rho_8 >> 3).max(1) * mss
        } else {
            cwnd
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss_based::LossBased;
    use crate::slow_start::SlowStart;
    use crate::window::AckCounting;
    use crate::CongestionController;

    const MS: Nanos = 1_000_000;

    fn ack(mss: u64, rtt: Nanos) -> AckEvent {
        AckEvent {
            bytes_acked: mss,
            mss,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    /// ns-3's TcpHyblaIncrementTest: cwnd 1000 bytes, segment 500, RRTT 50 ms, one ACK.
    fn ns3_case(rtt_ms: u64, ssthresh: u64) -> (f64, u64) {
        let mut c = LossBased::new(
            500,
            2,
            AckCounting::Bytes,
            SlowStart::Standard,
            Hybla::new(50, Model::Ns3, false),
        );
        if ssthresh < u64::MAX {
            c.on_congestion_event(&CongestionEvent {
                mss: 500,
                ..Default::default()
            });
            c.on_recovery_exit(0);
            // Reno's halving leaves 2 MSS = 1000 bytes, ssthresh 1000; ns-3's case has
            // ssthresh 500 below cwnd: congestion avoidance either way.
            assert_eq!((c.cwnd(), c.ssthresh()), (1000, 1000));
        }
        c.on_ack(&ack(500, rtt_ms * MS));
        (c.rule.rho(), c.cwnd())
    }

    /// ns-3 src/internet/test/tcp-hybla-test.cc: slow start adds (2^rho - 1) x 500 bytes,
    /// truncated: rho 1.1 at 55 ms, 2 at 100 ms, 15 at 750 ms (its names say 30, RTT0 25 ms).
    #[test]
    fn ns3_slow_start_increments() {
        assert_eq!(ns3_case(55, u64::MAX), (1.1, 1000 + 571));
        assert_eq!(ns3_case(100, u64::MAX), (2.0, 1000 + 1500));
        assert_eq!(ns3_case(750, u64::MAX), (15.0, 1000 + 32767 * 500));
        // 2 s: 2^40 segments would pass ns-3's 32-bit cwnd.
        assert_eq!(ns3_case(2000, u64::MAX).1, u32::MAX as u64);
    }

    /// The same file's avoidance cases (cwnd 2 segments): rho^2 / 2 segments, whole segments
    /// only; ns-3 asserts at most 31 250, 2 000 and 57 250 bytes.
    #[test]
    fn ns3_avoidance_increments() {
        assert_eq!(ns3_case(550, 500).1, 1000 + 60 * 500); // 121 / 2 = 60.5
        assert_eq!(ns3_case(100, 500).1, 1000 + 2 * 500); // 4 / 2
        assert_eq!(ns3_case(750, 500).1, 1000 + 112 * 500); // 225 / 2 = 112.5
    }

    /// tcp_hybla.c at RTT0 25 ms: rho in eighths, 2^fraction from the table. 55 ms: rho_3ls =
    /// 17 (rho 2 + 1/8), increment (4 x 139 - 128) / 128 = 3.34 segments per ACK, the
    /// fraction carried; 600 ms: rho 24, 2^16 - 1 per ACK (the shift stops at 16), then the
    /// 65 535-segment clamp.
    #[test]
    fn linux_slow_start_increments() {
        let mss = 1000;
        let mut h = Hybla::new(25, Model::Linux, false);
        h.observe(&ack(mss, 55 * MS));
        assert_eq!(h.rho(), 2.125);
        let g = WindowGrowth::new(AckCounting::PerAck);
        let mut cwnd = 10 * mss;
        for _ in 0..4 {
            cwnd = h
                .slow_start_step(cwnd, u64::MAX, &ack(mss, 55 * MS), &g)
                .unwrap()
                .cwnd;
        }
        // 4 x 428 = 1712 / 128 = 13.375 segments: 13 added, 48/128 carried.
        assert_eq!((cwnd, h.cents), (23 * mss, 48));
        let mut h = Hybla::new(25, Model::Linux, false);
        h.observe(&ack(mss, 600 * MS));
        let step = h.slow_start_step(10 * mss, u64::MAX, &ack(mss, 600 * MS), &g);
        assert_eq!(step.unwrap().cwnd, 65_535 * mss);
    }

    /// Congestion avoidance adds rho^2 / W per ACK: at rho 4 (100 ms), 100 ACKs from 100
    /// segments reach sqrt(100^2 + 2 x 16 x 100) = 114.9 (dW/dn = rho^2 / W), each ACK's
    /// increment truncated to 1/128ths of a segment.
    #[test]
    fn linux_avoidance_adds_rho_squared_per_rtt() {
        let mss = 1000;
        let mut h = Hybla::new(25, Model::Linux, false);
        let a = ack(mss, 100 * MS);
        h.observe(&a);
        let mut g = WindowGrowth::new(AckCounting::PerAck);
        let mut cwnd = 100 * mss;
        for _ in 0..100 {
            cwnd = h.increase(cwnd, mss, &a, &mut g);
        }
        assert_eq!(cwnd, 114 * mss);
        // Below RTT0 rho is 1, rho^2 = 128/128: at 100 segments 1/128 per ACK (the truncated
        // 128 / 100), one segment per 128 ACKs; from 129 segments the increment is 0 and
        // snd_cwnd_cnt gives Reno's one per window.
        for (window, acks) in [(100, 128), (200, 200)] {
            let mut h = Hybla::new(25, Model::Linux, false);
            h.observe(&ack(mss, 10 * MS));
            let mut cwnd = window * mss;
            for _ in 0..acks - 1 {
                cwnd = h.increase(cwnd, mss, &a, &mut g);
            }
            assert_eq!(cwnd, window * mss);
            cwnd = h.increase(cwnd, mss, &a, &mut g);
            assert_eq!(cwnd, (window + 1) * mss);
        }
    }

    /// After a timeout Linux's Hybla grows as Reno until the repair ends (hybla_en is false
    /// outside TCP_CA_Open): one segment per ACK in slow start, not 2^rho - 1.
    #[test]
    fn reno_growth_while_repairing_after_a_timeout() {
        let mut c = LossBased::new(
            1000,
            10,
            AckCounting::PerAck,
            SlowStart::Standard,
            Hybla::new(25, Model::Linux, false),
        );
        c.on_ack(&ack(1000, 100 * MS));
        assert_eq!(c.cwnd(), 25_000); // 10 + 2^4 - 1
        c.on_rto(0, 25_000);
        c.on_ack(&ack(1000, 100 * MS));
        assert_eq!(c.cwnd(), 2000);
        // Repaired: 2^4 - 1 again, clamped at ssthresh (half of 25 segments).
        c.on_recovery_exit(0);
        c.on_ack(&ack(1000, 100 * MS));
        assert_eq!(c.cwnd(), 12_500);
    }

    /// The lowest RTT sets rho; a later, larger one does not raise it.
    #[test]
    fn rho_follows_the_lowest_rtt() {
        let mut h = Hybla::new(25, Model::Linux, false);
        h.observe(&ack(1000, 200 * MS));
        h.observe(&ack(1000, 400 * MS));
        assert_eq!(h.rho(), 8.0);
        h.observe(&ack(1000, 50 * MS));
        assert_eq!(h.rho(), 2.0);
    }

    /// hybla_init: cwnd = rho segments from the handshake RTT, below initcwnd on short paths.
    #[test]
    fn rho_initial_window_replaces_initcwnd() {
        for (rtt, cwnd) in [(600 * MS, 24_000), (20 * MS, 1000)] {
            let mut c = LossBased::new(
                1000,
                10,
                AckCounting::Bytes,
                SlowStart::Standard,
                Hybla::new(25, Model::Linux, true),
            );
            c.on_rtt_sample(0, rtt);
            assert_eq!(c.cwnd(), cwnd);
        }
    }
}
