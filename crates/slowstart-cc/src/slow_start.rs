//! Slow-start rules for loss-based controllers, chosen with `slow_start = ...`.

use crate::window::WindowGrowth;
use crate::{AckEvent, Phase, SentEvent};

/// What one ACK did in slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartStep {
    pub cwnd: u64,
    /// Credit not used by slow start, handed to congestion avoidance.
    pub leftover_credit: u64,
    /// The rule decided to leave slow start: ssthresh becomes cwnd.
    pub exit: bool,
    /// Phase to report while still in slow start.
    pub phase: Phase,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlowStart {
    /// RFC 5681 §3.1: cwnd grows by each ACK's credit until ssthresh or loss.
    Standard,
}

impl SlowStart {
    pub fn initial_phase(&self) -> Phase {
        Phase::SlowStart
    }

    pub fn standard_step(
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        let (cwnd, leftover_credit) = growth.slow_start(cwnd, ssthresh, ack);
        SlowStartStep {
            cwnd,
            leftover_credit,
            exit: false,
            phase: Phase::SlowStart,
        }
    }

    pub fn on_ack(
        &mut self,
        cwnd: u64,
        ssthresh: u64,
        ack: &AckEvent,
        growth: &WindowGrowth,
    ) -> SlowStartStep {
        match self {
            SlowStart::Standard => Self::standard_step(cwnd, ssthresh, ack, growth),
        }
    }

    pub fn on_packet_sent(&mut self, _sent: &SentEvent) {}

    pub fn pacing_rate(&self) -> Option<u64> {
        None
    }

    pub fn send_quantum(&self) -> Option<u64> {
        None
    }
}
