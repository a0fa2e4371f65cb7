//! Controllers written outside this crate: a user's Python class (bound in `slowstart-py`) or
//! WebAssembly guest (`slowstart-wasm`), loaded at run time and run wherever a built-in runs.
//!
//! A [`Guest`] answers every event of [`CongestionController`] with its [`Outputs`]; a
//! [`GuestFactory`] builds one per connection. Factories are registered under the name a spec
//! uses (`my_start.py:MyStart#1a2b3c4d5e6f`, the content hash included, so an edited
//! controller is a new name). [`GuestController`] checks every answer against the core's
//! bounds: a guest that fails or answers out of bounds is *faulted*. It is then asked nothing
//! more, holds its last good window, and the fault waits in this thread's slot until the engine
//! takes it ([`faulted`], [`take_fault`]) and stops the run with that one line.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::controller::{EcnFeedback, NegotiatedEcn};
use crate::params::ParamValue;
use crate::params::{CcError, CommonParams};
use crate::{AckEvent, CongestionController, CongestionEvent, Nanos, Phase, SentEvent};

/// The largest window a controller may ask for, in bytes (the fuzzed bound every built-in keeps).
pub const MAX_CWND: u64 = 1 << 50;

/// What a controller tells the transport after each event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// `u64::MAX` when unset.
    pub ssthresh: u64,
    /// Bytes per second, `None` to send as the window allows.
    pub pacing_rate: Option<u64>,
    /// Largest burst the pacer may release at once, in bytes; `None` when the controller sets none.
    pub send_quantum: Option<u64>,
    /// What the controller is doing.
    pub phase: Phase,
}

/// One event, as [`CongestionController`]'s methods receive it.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// [`CongestionController::on_packet_sent`].
    Sent(&'a SentEvent),
    /// [`CongestionController::on_ack`].
    Ack(&'a AckEvent),
    /// [`CongestionController::on_rtt_sample`].
    RttSample {
        /// When the RTT was measured.
        now: Nanos,
        /// The RTT measured.
        rtt: Nanos,
    },
    /// [`CongestionController::on_congestion_event`].
    Congestion(&'a CongestionEvent),
    /// [`CongestionController::on_recovery_exit`].
    RecoveryExit {
        /// When the recovery episode ended.
        now: Nanos,
    },
    /// [`CongestionController::on_rto`].
    Rto {
        /// When the retransmission timer fired.
        now: Nanos,
        /// Bytes in flight when it fired.
        bytes_in_flight: u64,
    },
}

impl Event<'_> {
    /// The method's name, as the interface spells it.
    pub fn method(&self) -> &'static str {
        match self {
            Event::Sent(_) => "on_packet_sent",
            Event::Ack(_) => "on_ack",
            Event::RttSample { .. } => "on_rtt_sample",
            Event::Congestion(_) => "on_congestion_event",
            Event::RecoveryExit { .. } => "on_recovery_exit",
            Event::Rto { .. } => "on_rto",
        }
    }

    /// The event's bit in [`Guest::skipped`]: 1 << its place in the list above (the order of
    /// `slowstart_guest::abi::EventKind`).
    pub fn bit(&self) -> u8 {
        1 << match self {
            Event::Sent(_) => 0,
            Event::Ack(_) => 1,
            Event::RttSample { .. } => 2,
            Event::Congestion(_) => 3,
            Event::RecoveryExit { .. } => 4,
            Event::Rto { .. } => 5,
        }
    }

    /// When the event happened.
    pub fn now(&self) -> Nanos {
        match *self {
            Event::Sent(e) => e.now,
            Event::Ack(e) => e.now,
            Event::Congestion(e) => e.now,
            Event::RttSample { now, .. } | Event::RecoveryExit { now } | Event::Rto { now, .. } => {
                now
            }
        }
    }
}

/// An ECN event, delivered only to a guest that answers [`Guest::on_ecn`] (a BPF controller
/// reads ECN as Linux's do; the Python and WebAssembly interfaces have no ECN events).
#[derive(Clone, Copy, Debug)]
pub enum EcnEvent<'a> {
    /// [`CongestionController::on_ecn_negotiated`].
    Negotiated(NegotiatedEcn),
    /// [`CongestionController::on_ecn_feedback`].
    Feedback(&'a EcnFeedback),
}

impl EcnEvent<'_> {
    /// The method's name, as the interface spells it.
    pub fn method(&self) -> &'static str {
        match self {
            EcnEvent::Negotiated(_) => "on_ecn_negotiated",
            EcnEvent::Feedback(_) => "on_ecn_feedback",
        }
    }
}

/// A controller instance living outside the crate. An `Err` is a fault: one line saying what
/// the controller did (a Python exception's last frame, a WebAssembly trap, an exhausted budget).
/// `Send`, so a controller can move to the thread a real stack runs it on (quinn's
/// `Controller: Send + Sync`, crates/slowstart-quinn).
pub trait Guest: Send {
    /// Deliver `event`; answer the outputs after it.
    fn call(&mut self, event: Event<'_>) -> Result<Outputs, String>;

    /// The events not to deliver, as [`Event::bit`]s, asked once after the guest is built:
    /// those its controller ignores, whose answers would be the ones before. Default: none.
    fn skipped(&self) -> u8 {
        0
    }

    /// Deliver an ECN event: `None` for a guest that does not read ECN (the default).
    fn on_ecn(&mut self, _event: EcnEvent<'_>) -> Option<Result<Outputs, String>> {
        None
    }
}

/// Builds a [`Guest`] per connection, with its outputs before any event.
pub trait GuestFactory: Send + Sync {
    /// A controller for one connection from its parameters, with its outputs before any event.
    fn build(
        &self,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<(Box<dyn Guest>, Outputs), CcError>;

    /// The ECN feedbacks its controllers read, if they need ECN (as
    /// [`crate::registry::needs_ecn`] for a built-in). Default: no ECN.
    fn needs_ecn(&self) -> Option<&'static [&'static str]> {
        None
    }
}

static FACTORIES: Mutex<BTreeMap<String, Arc<dyn GuestFactory>>> = Mutex::new(BTreeMap::new());

/// Make `name` build controllers with `factory` (replacing one registered before under it).
pub fn register(name: &str, factory: Arc<dyn GuestFactory>) {
    lock().insert(name.to_string(), factory);
}

/// Whether a factory is registered under `name`.
pub fn is_registered(name: &str) -> bool {
    lock().contains_key(name)
}

fn lock() -> std::sync::MutexGuard<'static, BTreeMap<String, Arc<dyn GuestFactory>>> {
    // A panic while holding the lock leaves the map whole (inserts are atomic).
    FACTORIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ECN feedbacks the controller registered under `name` reads, if it needs ECN.
pub fn needs_ecn(name: &str) -> Option<&'static [&'static str]> {
    factory(name)?.needs_ecn()
}

pub(crate) fn factory(name: &str) -> Option<Arc<dyn GuestFactory>> {
    lock().get(name).cloned()
}

thread_local! {
    static FAULTED: Cell<bool> = const { Cell::new(false) };
    static FAULT: RefCell<Option<String>> = const { RefCell::new(None) };
    static CLOCK_ORIGIN: Cell<Nanos> = const { Cell::new(0) };
}

/// Times in this thread's fault lines count from `origin`, ns: a real endpoint
/// (`slowstart-udp`) runs its controller on the host's monotonic clock, and its line says how
/// long after the flow's start the fault came. The simulator's clock starts at 0, the default.
pub fn set_clock_origin(origin: Nanos) {
    CLOCK_ORIGIN.with(|o| o.set(origin));
}

/// Whether a guest on this thread has faulted since the last [`take_fault`] (one load, for the
/// engine's loop).
#[inline]
pub fn faulted() -> bool {
    FAULTED.with(Cell::get)
}

/// The first fault on this thread since the last call, clearing it.
pub fn take_fault() -> Option<String> {
    FAULTED.with(|f| f.set(false));
    FAULT.with(|f| f.borrow_mut().take())
}

fn record_fault(message: String) {
    FAULT.with(|f| {
        f.borrow_mut().get_or_insert(message);
    });
    FAULTED.with(|f| f.set(true));
}

/// A [`Guest`] behind the [`CongestionController`] interface, its answers checked.
pub struct GuestController {
    name: String,
    mss: u64,
    guest: Box<dyn Guest>,
    /// [`Guest::skipped`].
    skipped: u8,
    out: Outputs,
    faulted: bool,
}

impl fmt::Debug for GuestController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuestController")
            .field("name", &self.name)
            .field("out", &self.out)
            .field("faulted", &self.faulted)
            .finish()
    }
}

impl GuestController {
    /// Build `name`'s controller with `factory`; its first outputs are checked like any other.
    pub(crate) fn new(
        name: &str,
        factory: &dyn GuestFactory,
        params: &BTreeMap<String, ParamValue>,
        common: &CommonParams,
    ) -> Result<Self, CcError> {
        let (guest, out) = factory
            .build(params, common)
            .map_err(|e| CcError(format!("cc: {name}: {e}")))?;
        check(&out, common.mss).map_err(|e| CcError(format!("cc: {name}: at start, {e}")))?;
        Ok(Self {
            name: name.to_string(),
            mss: common.mss,
            skipped: guest.skipped(),
            guest,
            out,
            faulted: false,
        })
    }

    /// A controller whose build failed where it had succeeded before (a constructor that raised
    /// on its second connection): faulted from the start, so the engine stops at its next check.
    pub(crate) fn faulted_stand_in(name: &str, common: &CommonParams, message: String) -> Self {
        struct Nothing;
        impl Guest for Nothing {
            fn call(&mut self, _: Event<'_>) -> Result<Outputs, String> {
                Err("faulted".into())
            }
        }
        record_fault(message);
        Self {
            name: name.to_string(),
            mss: common.mss,
            guest: Box::new(Nothing),
            skipped: 0,
            out: Outputs {
                cwnd: common
                    .initcwnd
                    .max(1)
                    .saturating_mul(common.mss)
                    .min(MAX_CWND),
                ssthresh: u64::MAX,
                pacing_rate: None,
                send_quantum: None,
                phase: Phase::SlowStart,
            },
            faulted: true,
        }
    }

    /// Whether it has faulted (and is asked nothing more).
    pub fn is_faulted(&self) -> bool {
        self.faulted
    }

    fn deliver_ecn(&mut self, event: EcnEvent<'_>) {
        if self.faulted {
            return;
        }
        let Some(answer) = self.guest.on_ecn(event) else {
            return;
        };
        let now = match event {
            EcnEvent::Feedback(f) => f.now,
            EcnEvent::Negotiated(_) => 0,
        };
        match answer.and_then(|out| check(&out, self.mss).map(|()| out)) {
            Ok(out) => self.out = out,
            Err(e) => self.fault(event.method(), now, e),
        }
    }

    fn fault(&mut self, method: &str, now: Nanos, e: String) {
        self.faulted = true;
        record_fault(format!(
            "cc {}: {method} at {:.6} s: {e}",
            self.name,
            now.saturating_sub(CLOCK_ORIGIN.with(Cell::get)) as f64 / 1e9
        ));
    }

    fn deliver(&mut self, event: Event<'_>) {
        if self.faulted || self.skipped & event.bit() != 0 {
            return;
        }
        let checked = self
            .guest
            .call(event)
            .and_then(|out| check(&out, self.mss).map(|()| out));
        match checked {
            Ok(out) => self.out = out,
            Err(e) => self.fault(event.method(), event.now(), e),
        }
    }
}

/// The bounds every controller's outputs keep.
fn check(out: &Outputs, mss: u64) -> Result<(), String> {
    if out.cwnd < mss || out.cwnd > MAX_CWND {
        return Err(format!(
            "cwnd() returned {} (accepted: {mss}..={MAX_CWND} bytes, one MSS to 2^50)",
            out.cwnd
        ));
    }
    if out.pacing_rate == Some(0) {
        return Err(
            "pacing_rate() returned 0 (accepted: a positive rate in bytes/s, or None)".into(),
        );
    }
    if out.send_quantum == Some(0) {
        return Err(
            "send_quantum() returned 0 (accepted: a positive size in bytes, or None)".into(),
        );
    }
    Ok(())
}

impl CongestionController for GuestController {
    fn on_packet_sent(&mut self, sent: &SentEvent) {
        self.deliver(Event::Sent(sent));
    }
    fn uses_packet_sent(&self) -> bool {
        self.skipped & Event::Sent(&SentEvent::default()).bit() == 0
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        self.deliver(Event::Ack(ack));
    }
    fn on_ecn_negotiated(&mut self, ecn: NegotiatedEcn) {
        self.deliver_ecn(EcnEvent::Negotiated(ecn));
    }
    fn on_ecn_feedback(&mut self, feedback: &EcnFeedback) {
        self.deliver_ecn(EcnEvent::Feedback(feedback));
    }
    fn on_rtt_sample(&mut self, now: Nanos, rtt: Nanos) {
        self.deliver(Event::RttSample { now, rtt });
    }
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.deliver(Event::Congestion(event));
    }
    fn on_recovery_exit(&mut self, now: Nanos) {
        self.deliver(Event::RecoveryExit { now });
    }
    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64) {
        self.deliver(Event::Rto {
            now,
            bytes_in_flight,
        });
    }
    fn cwnd(&self) -> u64 {
        self.out.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.out.ssthresh
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.out.pacing_rate
    }
    fn send_quantum(&self) -> Option<u64> {
        self.out.send_quantum
    }
    fn phase(&self) -> Phase {
        self.out.phase
    }
}

/// A phase by the name [`Phase::name`] gives it.
pub fn phase_named(name: &str) -> Option<Phase> {
    Phase::ALL.iter().copied().find(|p| p.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CcSpec, Controller};

    /// A guest that doubles cwnd per ACK, and answers 0 once `zero_after` ACKs have come.
    struct Doubling {
        cwnd: u64,
        acks: u32,
        zero_after: u32,
    }

    impl Guest for Doubling {
        fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
            if let Event::Ack(_) = event {
                self.acks += 1;
                self.cwnd = if self.acks >= self.zero_after {
                    0
                } else {
                    self.cwnd * 2
                };
            }
            Ok(Outputs {
                cwnd: self.cwnd,
                ssthresh: u64::MAX,
                pacing_rate: None,
                send_quantum: None,
                phase: Phase::SlowStart,
            })
        }
    }

    struct DoublingFactory(u32);

    impl GuestFactory for DoublingFactory {
        fn build(
            &self,
            _: &BTreeMap<String, ParamValue>,
            common: &CommonParams,
        ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
            let cwnd = common.initcwnd * common.mss;
            let g = Doubling {
                cwnd,
                acks: 0,
                zero_after: self.0,
            };
            let out = Outputs {
                cwnd,
                ssthresh: u64::MAX,
                pacing_rate: None,
                send_quantum: None,
                phase: Phase::SlowStart,
            };
            Ok((Box::new(g), out))
        }
    }

    const COMMON: CommonParams = CommonParams {
        mss: 1000,
        initcwnd: 2,
        abc: true,
        seed: 0,
        paced: false,
    };

    #[test]
    fn a_guest_faults_once_and_keeps_its_last_good_window() {
        register("test-doubling-3", Arc::new(DoublingFactory(3)));
        take_fault();
        let mut c = Controller::new(&CcSpec::named("test-doubling-3"), &COMMON).unwrap();
        let ack = AckEvent {
            now: 1_500_000_000,
            ..AckEvent::default()
        };
        c.on_ack(&ack);
        c.on_ack(&ack);
        assert_eq!(c.cwnd(), 8000);
        assert!(!faulted());
        c.on_ack(&ack);
        assert_eq!(c.cwnd(), 8000, "the faulty answer is not taken");
        assert!(faulted());
        c.on_ack(&ack);
        let fault = take_fault().unwrap();
        assert_eq!(
            fault,
            "cc test-doubling-3: on_ack at 1.500000 s: cwnd() returned 0 \
             (accepted: 1000..=1125899906842624 bytes, one MSS to 2^50)"
        );
        assert!(!faulted() && take_fault().is_none(), "taken once");
    }

    /// A guest that adds one MSS per packet sent, skipping that event when `skip`.
    struct CountsSent {
        cwnd: u64,
        skip: bool,
    }

    impl Guest for CountsSent {
        fn call(&mut self, event: Event<'_>) -> Result<Outputs, String> {
            if let Event::Sent(_) = event {
                self.cwnd += COMMON.mss;
            }
            Ok(self.outputs())
        }
        fn skipped(&self) -> u8 {
            if self.skip {
                Event::Sent(&SentEvent::default()).bit()
            } else {
                0
            }
        }
    }

    struct CountsSentFactory(bool);

    impl GuestFactory for CountsSentFactory {
        fn build(
            &self,
            _: &BTreeMap<String, ParamValue>,
            common: &CommonParams,
        ) -> Result<(Box<dyn Guest>, Outputs), CcError> {
            let g = CountsSent {
                cwnd: common.mss,
                skip: self.0,
            };
            let out = g.outputs();
            Ok((Box::new(g), out))
        }
    }

    impl CountsSent {
        fn outputs(&self) -> Outputs {
            Outputs {
                cwnd: self.cwnd,
                ssthresh: u64::MAX,
                pacing_rate: None,
                send_quantum: None,
                phase: Phase::SlowStart,
            }
        }
    }

    #[test]
    fn a_skipped_event_is_not_delivered() {
        for skip in [false, true] {
            let name = format!("test-counts-sent-{skip}");
            register(&name, Arc::new(CountsSentFactory(skip)));
            let mut c = Controller::new(&CcSpec::named(&name), &COMMON).unwrap();
            assert_eq!(c.uses_packet_sent(), !skip);
            c.on_packet_sent(&SentEvent::default());
            c.on_ack(&AckEvent::default());
            let expected = if skip { 1000 } else { 2000 };
            assert_eq!(c.cwnd(), expected, "skip {skip}");
        }
    }

    #[test]
    fn an_unregistered_name_is_still_unknown() {
        let err = Controller::new(&CcSpec::named("nobody.py:Nothing"), &COMMON).unwrap_err();
        assert!(
            err.0.contains("unknown algorithm 'nobody.py:Nothing'"),
            "{err}"
        );
    }
}
