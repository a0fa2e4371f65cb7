//! A controller's state over a connection, for `slowstart real --stack quinn`'s cwnd trace.

use std::sync::{Arc, Mutex};

use slowstart_cc::Nanos;

/// A list shared between the connection's controller and whoever reads it afterwards.
#[derive(Debug)]
pub struct Sink<T>(Arc<Mutex<Vec<T>>>);

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Sink(self.0.clone())
    }
}

impl<T> Default for Sink<T> {
    fn default() -> Self {
        Sink(Arc::default())
    }
}

impl<T> Sink<T> {
    pub fn push(&self, item: T) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(item);
    }

    /// Everything pushed so far, leaving the sink empty.
    pub fn take(&self) -> Vec<T> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The controller after an ACK frame or a congestion event: the columns of
/// `slowstart-udp --trace` (t_ns from the connection's start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub t_ns: Nanos,
    pub cwnd: u64,
    /// `u64::MAX` when unset.
    pub ssthresh: u64,
    pub in_flight: u64,
    pub srtt_ns: Nanos,
    pub delivered: u64,
    pub phase: &'static str,
}

impl TraceRow {
    pub const CSV_HEADER: &'static str = "t_ns,cwnd,ssthresh,inflight,srtt_ns,delivered,phase";

    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{}",
            self.t_ns,
            self.cwnd,
            self.ssthresh,
            self.in_flight,
            self.srtt_ns,
            self.delivered,
            self.phase
        )
    }
}
