//! Window arithmetic shared by the loss-based controllers: slow-start increase and additive
//! increase, counted per byte (RFC 3465, as Linux does) or per ACK (RFC 5681 §3.1's per-ACK
//! formula, as ns-2 does).

use crate::params::{Accepts, CommonParams, ParamInfo};
use crate::AckEvent;

/// How an ACK is credited to window growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckCounting {
    /// Appropriate byte counting (RFC 3465): growth follows the bytes each ACK delivers. Linux
    /// counts this way and does not cap the slow-start increase per ACK.
    Bytes,
    /// One MSS of credit per ACK whatever it covers (RFC 5681 §3.1, ns-2): with delayed ACKs the
    /// window grows half as fast.
    PerAck,
}

/// Slow-start and additive-increase credit for one connection.
#[derive(Clone, Debug)]
pub struct WindowGrowth {
    /// How ACKs are credited.
    pub counting: AckCounting,
    /// Bytes of credit towards the next additive increase (Linux `snd_cwnd_cnt`, in bytes).
    credit: u64,
}

impl WindowGrowth {
    /// Growth with no credit yet.
    pub fn new(counting: AckCounting) -> Self {
        Self {
            counting,
            credit: 0,
        }
    }

    /// Credit one ACK carries: its newly delivered bytes, or one MSS.
    pub fn ack_credit(&self, ack: &AckEvent) -> u64 {
        match self.counting {
            AckCounting::Bytes => ack.bytes_acked,
            AckCounting::PerAck => ack.mss,
        }
    }

    /// Slow start (RFC 5681 §3.1): cwnd grows by the ACK's credit, not past `ssthresh`.
    /// Returns the new cwnd and the credit left over for congestion avoidance (Linux
    /// `tcp_slow_start`).
    pub fn slow_start(&self, cwnd: u64, ssthresh: u64, ack: &AckEvent) -> (u64, u64) {
        let credit = self.ack_credit(ack);
        let room = ssthresh.saturating_sub(cwnd);
        let used = credit.min(room);
        (cwnd + used, credit - used)
    }

    /// Additive increase: `increase` bytes per cwnd's worth of credit (Reno: one MSS per RTT,
    /// RFC 5681 §3.1). Returns the new cwnd.
    pub fn additive_increase(&mut self, cwnd: u64, credit: u64, increase: u64) -> u64 {
        self.credit += credit;
        let mut cwnd = cwnd;
        while cwnd > 0 && self.credit >= cwnd {
            self.credit -= cwnd;
            cwnd += increase;
        }
        cwnd
    }

    /// Add `increase` bytes each time `threshold` bytes of credit accumulate (Linux
    /// `tcp_cong_avoid_ai` with a count other than cwnd). Returns the new cwnd.
    pub fn increase_every(&mut self, cwnd: u64, credit: u64, threshold: u64, increase: u64) -> u64 {
        self.credit += credit;
        let threshold = threshold.max(1);
        let mut cwnd = cwnd;
        while self.credit >= threshold {
            self.credit -= threshold;
            cwnd += increase;
        }
        cwnd
    }

    /// Forget partial credit (after a window reduction).
    pub fn reset(&mut self) {
        self.credit = 0;
    }
}

/// RFC 3742 §3 Limited Slow-Start increase for one ACK: one MSS per ACK up to `max_ssthresh`,
/// then `MSS / K` with `K = int(cwnd / (0.5 max_ssthresh))`, at most max_ssthresh/2 per RTT.
pub fn limited_slow_start_increase(cwnd: u64, max_ssthresh: u64, mss: u64) -> u64 {
    if cwnd <= max_ssthresh || max_ssthresh == 0 {
        return mss;
    }
    let k = cwnd / (max_ssthresh / 2).max(1);
    mss / k.max(1)
}

/// Per-ACK or byte counting, as the flow's `abc` says.
impl CommonParams {
    /// The flow's [`AckCounting`]: bytes if `abc`, else per ACK.
    pub fn counting(&self) -> AckCounting {
        if self.abc {
            AckCounting::Bytes
        } else {
            AckCounting::PerAck
        }
    }
}

/// How cwnd grows on ACKs the transport does not report cwnd-limited (`rate_limited_growth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateLimitedGrowth {
    /// Not at all (Linux `tcp_is_cwnd_limited`, RFC 9002 §7.8, RFC 9438 §5.8).
    CwndLimited,
    /// As on any other ACK (RFC 5681 §3.1 as written).
    Unlimited,
    /// As on any other ACK, but cwnd at most limit(maxFS): 2 maxFS in slow start, maxFS + SMSS
    /// in congestion avoidance, maxFS the largest FlightSize since cwnd last decreased
    /// (draft-ietf-ccwg-ratelimited-increase-11 §3).
    Capped,
}

/// The parameter every loss-based algorithm takes to choose its [`RateLimitedGrowth`].
pub const RATE_LIMITED_GROWTH: ParamInfo = ParamInfo {
    name: "rate_limited_growth",
    doc: "growth on ACKs that are not cwnd-limited: cwnd_limited (none, as Linux), unlimited \
          (RFC 5681 as written), capped (draft-ietf-ccwg-ratelimited-increase: at most 2 maxFS \
          in slow start, maxFS + SMSS after)",
    default: "cwnd_limited",
    accepts: Accepts::Word(RateLimitedGrowth::WORDS),
};

impl RateLimitedGrowth {
    /// Accepted words, in the order of the variants.
    pub const WORDS: &'static [&'static str] = &["cwnd_limited", "unlimited", "capped"];

    /// The variant named by one of [`Self::WORDS`]; any other word reads as `CwndLimited`.
    pub fn from_word(word: &str) -> Self {
        match word {
            "unlimited" => RateLimitedGrowth::Unlimited,
            "capped" => RateLimitedGrowth::Capped,
            _ => RateLimitedGrowth::CwndLimited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(bytes: u64) -> AckEvent {
        AckEvent {
            bytes_acked: bytes,
            mss: 1000,
            cwnd_limited: true,
            ..Default::default()
        }
    }

    #[test]
    fn per_ack_counting_credits_one_mss_whatever_is_acked() {
        let g = WindowGrowth::new(AckCounting::PerAck);
        assert_eq!(g.slow_start(10_000, u64::MAX, &ack(2000)), (11_000, 0));
        let g = WindowGrowth::new(AckCounting::Bytes);
        assert_eq!(g.slow_start(10_000, u64::MAX, &ack(2000)), (12_000, 0));
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_back_the_rest() {
        let g = WindowGrowth::new(AckCounting::Bytes);
        assert_eq!(g.slow_start(9_500, 10_000, &ack(2000)), (10_000, 1500));
    }

    #[test]
    fn limited_slow_start_follows_rfc3742() {
        // max_ssthresh 100 segments of 1000 bytes: +1 MSS per ACK up to 100 segments.
        assert_eq!(limited_slow_start_increase(100_000, 100_000, 1000), 1000);
        // cwnd 150 segments: K = int(150 / 50) = 3, +333 bytes per ACK.
        assert_eq!(limited_slow_start_increase(150_000, 100_000, 1000), 333);
        // cwnd 1000 segments: K = 20, +50 bytes per ACK: 1000 ACKs add 50 segments per RTT.
        assert_eq!(limited_slow_start_increase(1_000_000, 100_000, 1000), 50);
    }

    #[test]
    fn additive_increase_adds_one_mss_per_window_of_acks() {
        let mut g = WindowGrowth::new(AckCounting::PerAck);
        let mut cwnd = 10_000;
        for _ in 0..9 {
            cwnd = g.additive_increase(cwnd, 1000, 1000);
        }
        assert_eq!(cwnd, 10_000);
        cwnd = g.additive_increase(cwnd, 1000, 1000);
        assert_eq!(cwnd, 11_000);
    }
}
