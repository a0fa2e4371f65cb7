//! quinn's calls to a congestion controller, recorded and replayed.
//!
//! [`Recorder`] wraps any quinn controller (ours or quinn's own) and writes every call it
//! receives as one line of text ([`Call`]); [`replay`] drives an [`Adapter`] with such lines.
//! The adapter's unit tests replay call sequences recorded from real quinn transfers
//! (`tests/calls/`), so they test what quinn really calls, in its order and batching.
//!
//! Lines, times in ns from the connection's start (rtt fields: quinn's `RttEstimator` before
//! the frame's sample, smoothed, min and conservative):
//!
//! ```text
//! sent T BYTES
//! ack T SENT BYTES APP_LIMITED SRTT MIN_RTT LATEST
//! end T IN_FLIGHT APP_LIMITED
//! loss T SENT PERSISTENT LOST_BYTES
//! mtu MTU
//! ```

use std::any::Any;
use std::time::Instant;

use quinn_proto::congestion::{Controller, ControllerMetrics};
use quinn_proto::RttEstimator;
use slowstart_cc::Nanos;

use crate::adapter::{Adapter, Rtt};
use crate::trace::{Sink, TraceRow};

/// One call of quinn-proto's `congestion::Controller`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// `on_sent`: `bytes` sent at `t`.
    Sent {
        /// When, in ns from the connection's start.
        t: Nanos,
        /// Bytes sent (one datagram, or a GSO batch).
        bytes: u64,
    },
    /// `on_ack`: one packet of `bytes`, sent at `sent`, acknowledged at `t`.
    Ack {
        /// When, in ns from the connection's start.
        t: Nanos,
        /// When the acknowledged packet was sent.
        sent: Nanos,
        /// Bytes of the acknowledged packet.
        bytes: u64,
        /// quinn's app-limited flag.
        app_limited: bool,
        /// quinn's RTT estimator before this frame's sample.
        rtt: Rtt,
    },
    /// `on_end_acks`: the ACK frame is processed.
    EndAcks {
        /// When, in ns from the connection's start.
        t: Nanos,
        /// Bytes in flight after the frame, as quinn counts them.
        in_flight: u64,
        /// quinn's app-limited flag: the last send found no data with the window open.
        app_limited: bool,
    },
    /// `on_congestion_event`: packets declared lost, or ECN-CE (`lost_bytes` 0).
    Congestion {
        /// When, in ns from the connection's start.
        t: Nanos,
        /// When the newest lost packet was sent.
        sent: Nanos,
        /// Whether quinn declared persistent congestion (RFC 9002 §7.6).
        persistent: bool,
        /// Bytes declared lost (0 for ECN-CE).
        lost_bytes: u64,
    },
    /// `on_mtu_update`: the new UDP payload size in bytes.
    Mtu(u16),
}

impl Call {
    /// The line this call is written as.
    pub fn line(&self) -> String {
        let b = |x: bool| x as u8;
        match *self {
            Call::Sent { t, bytes } => format!("sent {t} {bytes}"),
            Call::Ack {
                t,
                sent,
                bytes,
                app_limited,
                rtt,
            } => format!(
                "ack {t} {sent} {bytes} {} {} {} {}",
                b(app_limited),
                rtt.smoothed,
                rtt.min,
                rtt.latest
            ),
            Call::EndAcks {
                t,
                in_flight,
                app_limited,
            } => format!("end {t} {in_flight} {}", b(app_limited)),
            Call::Congestion {
                t,
                sent,
                persistent,
                lost_bytes,
            } => format!("loss {t} {sent} {} {lost_bytes}", b(persistent)),
            Call::Mtu(mtu) => format!("mtu {mtu}"),
        }
    }

    /// A line back as a call; the error names the line's fault.
    pub fn parse(line: &str) -> Result<Self, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> Result<u64, String> {
            words
                .get(i)
                .ok_or_else(|| format!("{line:?}: expected {} fields", i + 1))?
                .parse::<u64>()
                .map_err(|e| format!("{line:?}: field {}: {e}", i + 1))
        };
        let flag = |i: usize| -> Result<bool, String> {
            match n(i)? {
                0 => Ok(false),
                1 => Ok(true),
                other => Err(format!(
                    "{line:?}: field {}: expected 0 or 1, got {other}",
                    i + 1
                )),
            }
        };
        let (call, fields) = match words.first().copied() {
            Some("sent") => (
                Call::Sent {
                    t: n(1)?,
                    bytes: n(2)?,
                },
                3,
            ),
            Some("ack") => (
                Call::Ack {
                    t: n(1)?,
                    sent: n(2)?,
                    bytes: n(3)?,
                    app_limited: flag(4)?,
                    rtt: Rtt {
                        smoothed: n(5)?,
                        min: n(6)?,
                        latest: n(7)?,
                    },
                },
                8,
            ),
            Some("end") => (
                Call::EndAcks {
                    t: n(1)?,
                    in_flight: n(2)?,
                    app_limited: flag(3)?,
                },
                4,
            ),
            Some("loss") => (
                Call::Congestion {
                    t: n(1)?,
                    sent: n(2)?,
                    persistent: flag(3)?,
                    lost_bytes: n(4)?,
                },
                5,
            ),
            Some("mtu") => {
                let mtu = u16::try_from(n(1)?).map_err(|e| format!("{line:?}: mtu: {e}"))?;
                (Call::Mtu(mtu), 2)
            }
            _ => {
                return Err(format!(
                    "{line:?}: expected a call: sent, ack, end, loss or mtu"
                ))
            }
        };
        if words.len() != fields {
            return Err(format!("{line:?}: expected {fields} fields"));
        }
        Ok(call)
    }
}

/// Drive `adapter` with `calls`, in order.
pub fn replay(adapter: &mut Adapter, calls: &[Call]) {
    for call in calls {
        match *call {
            Call::Sent { t, bytes } => adapter.sent(t, bytes),
            Call::Ack {
                t,
                sent,
                bytes,
                rtt,
                ..
            } => adapter.ack(t, sent, bytes, rtt),
            Call::EndAcks {
                t,
                in_flight,
                app_limited,
            } => adapter.end_acks(t, in_flight, app_limited),
            Call::Congestion {
                t,
                sent,
                persistent,
                lost_bytes,
            } => adapter.congestion(t, sent, persistent, lost_bytes),
            Call::Mtu(mtu) => adapter.mtu_update(mtu),
        }
    }
}

/// Parse a recorded sequence, one call a line (blank lines and `#` comments skipped).
pub fn parse_calls(text: &str) -> Result<Vec<Call>, String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(Call::parse)
        .collect()
}

/// A quinn controller whose calls are written to `calls` and, for quinn's own controllers, whose
/// window is written to `trace` after each ACK frame and congestion event (an [`Adapter`]
/// writes its own rows, with the core's phase, through `SlowstartFactory::trace`).
pub struct Recorder {
    inner: Box<dyn Controller>,
    origin: Instant,
    calls: Option<Sink<Call>>,
    trace: Option<Sink<TraceRow>>,
    in_flight: u64,
    srtt: Nanos,
    acked: u64,
}

impl Recorder {
    /// Wraps `inner`; times are written in ns from `origin`.
    pub fn new(
        inner: Box<dyn Controller>,
        origin: Instant,
        calls: Option<Sink<Call>>,
        trace: Option<Sink<TraceRow>>,
    ) -> Self {
        Self {
            inner,
            origin,
            calls,
            trace,
            in_flight: 0,
            srtt: 0,
            acked: 0,
        }
    }

    fn ns(&self, t: Instant) -> Nanos {
        t.saturating_duration_since(self.origin).as_nanos() as Nanos
    }

    fn record(&self, call: Call) {
        if let Some(sink) = &self.calls {
            sink.push(call);
        }
    }

    fn row(&self, t: Nanos) {
        if let Some(sink) = &self.trace {
            let m = self.inner.metrics();
            let ssthresh = m.ssthresh.unwrap_or(u64::MAX);
            sink.push(TraceRow {
                t_ns: t,
                cwnd: m.congestion_window,
                ssthresh,
                in_flight: self.in_flight,
                srtt_ns: self.srtt,
                delivered: self.acked,
                // quinn's NewReno and Cubic grow by slow start below ssthresh.
                phase: if m.congestion_window < ssthresh {
                    "slow_start"
                } else {
                    "congestion_avoidance"
                },
            });
        }
    }
}

impl Controller for Recorder {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.record(Call::Sent {
            t: self.ns(now),
            bytes,
        });
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        let r = Rtt {
            smoothed: rtt.get().as_nanos() as Nanos,
            min: rtt.min().as_nanos() as Nanos,
            latest: rtt.conservative().as_nanos() as Nanos,
        };
        self.srtt = r.smoothed;
        self.acked += bytes;
        self.record(Call::Ack {
            t: self.ns(now),
            sent: self.ns(sent),
            bytes,
            app_limited,
            rtt: r,
        });
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.in_flight = in_flight;
        self.record(Call::EndAcks {
            t: self.ns(now),
            in_flight,
            app_limited,
        });
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
        self.row(self.ns(now));
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.record(Call::Congestion {
            t: self.ns(now),
            sent: self.ns(sent),
            persistent: is_persistent_congestion,
            lost_bytes,
        });
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
        self.row(self.ns(now));
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.record(Call::Mtu(new_mtu));
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Recorder::new(
            self.inner.clone_box(),
            self.origin,
            self.calls.clone(),
            self.trace.clone(),
        ))
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
