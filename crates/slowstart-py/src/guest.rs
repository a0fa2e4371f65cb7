//! A user's Python controller (a subclass of `slowstart.Controller`) as a `slowstart-cc`
//! controller: every event becomes a method call with an event object whose fields are the
//! core's (integer nanoseconds and bytes), and the answers are read back after each call.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTraceback};
use slowstart_cc::external::{self, Event, Guest, GuestFactory, Outputs};
use slowstart_cc::params::ParamValue;
use slowstart_cc::Phase;
use slowstart_cc::{CcError, CommonParams};

/// `on_packet_sent(ev)`: a data packet left the sender.
#[pyclass(frozen, get_all, module = "slowstart._core")]
pub struct SentEvent {
    now: u64,
    bytes: u64,
    bytes_in_flight: u64,
    total_sent: u64,
    retransmission: bool,
}

/// The delivery-rate sample of an ACK (draft-cheng-iccrg-delivery-rate-estimation).
#[pyclass(frozen, get_all, module = "slowstart._core")]
#[derive(Clone)]
pub struct RateSample {
    delivery_rate: u64,
    delivered: u64,
    interval: u64,
    prior_delivered: u64,
    is_app_limited: bool,
    rtt: u64,
}

/// `on_ack(ev)`: one ACK delivered `bytes_acked` new bytes.
#[pyclass(frozen, get_all, module = "slowstart._core")]
pub struct AckEvent {
    now: u64,
    bytes_acked: u64,
    mss: u64,
    rtt: Option<u64>,
    srtt: u64,
    min_rtt: u64,
    one_way_delay: Option<u64>,
    rate: Option<RateSample>,
    delivered: u64,
    prior_in_flight: u64,
    bytes_in_flight: u64,
    cwnd_limited: bool,
    sent_before_cwnd_block: bool,
    in_recovery: bool,
}

/// `on_congestion_event(ev)`: a loss (or ECN mark) starts a recovery episode.
#[pyclass(frozen, get_all, module = "slowstart._core")]
pub struct CongestionEvent {
    now: u64,
    ecn: bool,
    bytes_lost: u64,
    bytes_in_flight: u64,
    mss: u64,
}

/// Builds one instance of the class per connection.
pub struct PyFactory {
    class: Py<PyAny>,
}

/// Register `class` under `name`.
pub fn register(name: &str, class: Py<PyAny>) {
    external::register(name, Arc::new(PyFactory { class }));
}

struct PyGuest {
    object: Py<PyAny>,
    /// [`Guest::skipped`]: the events whose method is `slowstart.Controller`'s no-op.
    skipped: u8,
}

/// The events whose method `object` leaves as `slowstart.Controller` defines it (a no-op), as
/// [`Event::bit`]s: not calling them saves a Python call per packet sent.
fn inherited_no_ops(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<u8> {
    let base = py.import("slowstart")?.getattr("Controller")?;
    let sent = slowstart_cc::SentEvent::default();
    let mut skipped = 0;
    for event in [
        Event::Sent(&sent),
        Event::RttSample { now: 0, rtt: 0 },
        Event::RecoveryExit { now: 0 },
    ] {
        let method = event.method();
        // A function set on the instance has no __func__, and is called.
        let own = object
            .getattr(method)
            .and_then(|m| m.getattr("__func__"))
            .ok();
        if own.is_some_and(|f| base.getattr(method).is_ok_and(|b| f.is(&b))) {
            skipped |= event.bit();
        }
    }
    Ok(skipped)
}

thread_local! {
    static INTERRUPTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether Ctrl-C reached a controller's method (as KeyboardInterrupt) since the last call:
/// that stop is the user's, not the controller's fault.
pub fn take_interrupt() -> bool {
    INTERRUPTED.with(|i| i.replace(false))
}

/// A Python exception as one line: its type, message and innermost frame.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let mut line = format!("{}", e.value(py)).replace('\n', " ");
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    line = format!("{kind}: {line}");
    if let Some(tb) = e.traceback(py) {
        if let Some(frame) = last_frame(&tb) {
            line.push_str(&format!(" ({frame})"));
        }
    }
    line
}

fn last_frame(tb: &Bound<'_, PyTraceback>) -> Option<String> {
    let mut tb = tb.clone().into_any();
    loop {
        let next = tb.getattr("tb_next").ok()?;
        if next.is_none() {
            break;
        }
        tb = next;
    }
    let line: u64 = tb.getattr("tb_lineno").ok()?.extract().ok()?;
    let code = tb.getattr("tb_frame").ok()?.getattr("f_code").ok()?;
    let file: String = code.getattr("co_filename").ok()?.extract().ok()?;
    let func: String = code.getattr("co_name").ok()?.extract().ok()?;
    let file = std::path::Path::new(&file)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or(file);
    Some(format!("{file}:{line} in {func}"))
}

fn param(py: Python<'_>, v: &ParamValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        ParamValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        ParamValue::Number(x) if x.fract() == 0.0 && x.abs() < 9e15 => {
            (*x as i64).into_pyobject(py)?.into_any().unbind()
        }
        ParamValue::Number(x) => x.into_pyobject(py)?.into_any().unbind(),
        ParamValue::Text(t) => t.into_pyobject(py)?.into_any().unbind(),
    })
}

impl GuestFactory for PyFactory {
    fn build(
        &self,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
        Python::attach(|py| {
            let kwargs = PyDict::new(py);
            let build = || -> PyResult<Py<PyAny>> {
                kwargs.set_item("mss", common.mss)?;
                kwargs.set_item("initcwnd", common.initcwnd)?;
                kwargs.set_item("abc", common.abc)?;
                kwargs.set_item("seed", common.seed)?;
                kwargs.set_item("paced", common.paced)?;
                for (k, v) in params {
                    kwargs.set_item(k, param(py, v)?)?;
                }
                self.class.call(py, (), Some(&kwargs))
            };
            let object = build().map_err(|e| CcError(describe(py, &e)))?;
            let skipped =
                inherited_no_ops(py, object.bind(py)).map_err(|e| CcError(describe(py, &e)))?;
            let guest = PyGuest { object, skipped };
            let out = guest.answers(py).map_err(CcError)?;
            Ok((Box::new(guest) as Box<dyn Guest>, out))
        })
    }
}

impl PyGuest {
    /// `cwnd()`, `ssthresh()`, `pacing_rate()`, `send_quantum()` and `phase()`.
    fn answers(&self, py: Python<'_>) -> Result<Outputs, String> {
        let o = self.object.bind(py);
        let call = |name: &str| {
            o.call_method0(name)
                .map_err(|e| format!("{name}() raised {}", describe(py, &e)))
        };
        let bytes = |name: &str, v: Bound<'_, PyAny>| {
            let unit = if name == "pacing_rate" {
                "bytes per second"
            } else {
                "bytes"
            };
            v.extract::<u64>().map_err(|_| {
                format!(
                    "{name}() returned {} (accepted: a whole number of {unit}, 0..2^64)",
                    v.repr().map(|r| r.to_string()).unwrap_or_default()
                )
            })
        };
        let optional = |name: &str| -> Result<Option<u64>, String> {
            let v = call(name)?;
            if v.is_none() {
                return Ok(None);
            }
            bytes(name, v).map(Some)
        };
        let cwnd = bytes("cwnd", call("cwnd")?)?;
        let ssthresh = match call("ssthresh")? {
            v if v.is_none() => u64::MAX,
            v => bytes("ssthresh", v)?,
        };
        let pacing_rate = optional("pacing_rate")?;
        let send_quantum = optional("send_quantum")?;
        let phase = call("phase")?;
        let name: String = phase
            .str()
            .and_then(|s| s.extract())
            .map_err(|e| format!("phase() raised {}", describe(py, &e)))?;
        let phase = external::phase_named(&name).ok_or_else(|| {
            let names: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
            format!("phase() returned {name:?} (accepted: {})", names.join(", "))
        })?;
        Ok(Outputs {
            cwnd,
            ssthresh,
            pacing_rate,
            send_quantum,
            phase,
        })
    }
}

impl Guest for PyGuest {
    fn skipped(&self) -> u8 {
        self.skipped
    }

    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
        Python::attach(|py| {
            let o = self.object.bind(py);
            let method = event.method();
            let called = match event {
                Event::Sent(e) => Bound::new(
                    py,
                    SentEvent {
                        now: e.now,
                        bytes: e.bytes,
                        bytes_in_flight: e.bytes_in_flight,
                        total_sent: e.total_sent,
                        retransmission: e.retransmission,
                    },
                )
                .and_then(|ev| o.call_method1(method, (ev,))),
                Event::Ack(e) => Bound::new(
                    py,
                    AckEvent {
                        now: e.now,
                        bytes_acked: e.bytes_acked,
                        mss: e.mss,
                        rtt: e.rtt,
                        srtt: e.srtt,
                        min_rtt: e.min_rtt,
                        one_way_delay: e.one_way_delay,
                        rate: e.rate.map(|r| RateSample {
                            delivery_rate: r.delivery_rate,
                            delivered: r.delivered,
                            interval: r.interval,
                            prior_delivered: r.prior_delivered,
                            is_app_limited: r.is_app_limited,
                            rtt: r.rtt,
                        }),
                        delivered: e.delivered,
                        prior_in_flight: e.prior_in_flight,
                        bytes_in_flight: e.bytes_in_flight,
                        cwnd_limited: e.cwnd_limited,
                        sent_before_cwnd_block: e.sent_before_cwnd_block,
                        in_recovery: e.in_recovery,
                    },
                )
                .and_then(|ev| o.call_method1(method, (ev,))),
                Event::RttSample { now, rtt } => o.call_method1(method, (now, rtt)),
                Event::Congestion(e) => Bound::new(
                    py,
                    CongestionEvent {
                        now: e.now,
                        ecn: e.ecn,
                        bytes_lost: e.bytes_lost,
                        bytes_in_flight: e.bytes_in_flight,
                        mss: e.mss,
                    },
                )
                .and_then(|ev| o.call_method1(method, (ev,))),
                Event::RecoveryExit { now } => o.call_method1(method, (now,)),
                Event::Rto {
                    now,
                    bytes_in_flight,
                } => o.call_method1(method, (now, bytes_in_flight)),
            };
            if let Err(e) = called {
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    INTERRUPTED.with(|i| i.set(true));
                }
                return Err(format!("raised {}", describe(py, &e)));
            }
            self.answers(py)
        })
    }
}
