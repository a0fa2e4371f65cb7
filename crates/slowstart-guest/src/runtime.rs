//! The guest side of [`crate::abi`], called by the functions [`crate::export!`] generates. A
//! WebAssembly instance is single-threaded and holds one controller.

use std::cell::UnsafeCell;

use slowstart_cc::CongestionController;

use crate::abi::{self, EventKind, Io, Params};

/// A cell for a single-threaded guest's globals.
struct Global<T>(UnsafeCell<T>);

// SAFETY: a WebAssembly instance without threads runs one call at a time, and no call
// re-enters the guest; on a native target the exports are only called from tests, one at a time.
unsafe impl<T> Sync for Global<T> {}

static IO: Global<Io> = Global(UnsafeCell::new(Io {
    event: [0; abi::EVENT_WORDS],
    out: [0; 5],
    text_len: 0,
    text: [0; abi::TEXT_BYTES],
}));

/// The controller, behind one call per event: monomorphic in the controller's type, so that the
/// event and its five answers are static calls (six calls through a `dyn` cost a JIT-compiled
/// guest about a quarter of its time per event, docs/performance.md).
type Deliver = Box<dyn FnMut(EventKind) -> i32>;

static CONTROLLER: Global<Option<Deliver>> = Global(UnsafeCell::new(None));

/// `slowstart_events`' answer for the controller built (every event until one is).
static EVENTS: Global<i32> = Global(UnsafeCell::new(ALL_EVENTS));

const ALL_EVENTS: i32 = (1 << EventKind::ALL.len()) - 1;

pub fn events() -> i32 {
    // SAFETY: see `Global`.
    unsafe { *EVENTS.0.get() }
}

fn io() -> &'static mut Io {
    // SAFETY: see `Global`; no other reference to IO is alive during a call.
    unsafe { &mut *IO.0.get() }
}

pub fn io_address() -> i32 {
    IO.0.get() as usize as i32
}

fn fail(message: &str) -> i32 {
    let io = io();
    let n = message.len().min(abi::TEXT_BYTES);
    io.text[..n].copy_from_slice(&message.as_bytes()[..n]);
    io.text_len = n as u64;
    -1
}

fn answer<C: CongestionController>(c: &C) -> i32 {
    io().out = abi::encode_out(
        c.cwnd(),
        c.ssthresh(),
        c.pacing_rate(),
        c.send_quantum(),
        c.phase(),
    );
    0
}

pub fn new<C, F>(mss: i64, initcwnd: i64, abc: i32, seed: i64, paced: i32, build: F) -> i32
where
    C: CongestionController + 'static,
    F: FnOnce(&slowstart_cc::CommonParams, &Params) -> Result<C, String>,
{
    let io = io();
    let len = (io.text_len as usize).min(abi::TEXT_BYTES);
    let params = match std::str::from_utf8(&io.text[..len])
        .map_err(|e| e.to_string())
        .and_then(Params::decode)
    {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let common = abi::common(mss, initcwnd, abc, seed, paced);
    match build(&common, &params) {
        Ok(mut c) => {
            let status = answer(&c);
            let events = if c.uses_packet_sent() {
                ALL_EVENTS
            } else {
                ALL_EVENTS & !EventKind::Sent.bit()
            };
            // SAFETY: see `Global`.
            unsafe { *EVENTS.0.get() = events };
            let deliver: Deliver = Box::new(move |kind| deliver_to(&mut c, kind));
            // SAFETY: see `Global`.
            unsafe { *CONTROLLER.0.get() = Some(deliver) };
            status
        }
        Err(e) => fail(&e),
    }
}

pub fn deliver(kind: EventKind) -> i32 {
    // SAFETY: see `Global`.
    match unsafe { &mut *CONTROLLER.0.get() } {
        Some(deliver) => deliver(kind),
        None => fail("no controller: slowstart_new did not succeed"),
    }
}

fn deliver_to<C: CongestionController>(c: &mut C, kind: EventKind) -> i32 {
    let w = &io().event;
    match kind {
        EventKind::Sent => c.on_packet_sent(&abi::decode_sent(w)),
        EventKind::Ack => c.on_ack(&abi::decode_ack(w)),
        EventKind::RttSample => c.on_rtt_sample(w[0], w[1]),
        EventKind::Congestion => c.on_congestion_event(&abi::decode_congestion(w)),
        EventKind::RecoveryExit => c.on_recovery_exit(w[0]),
        EventKind::Rto => c.on_rto(w[0], w[1]),
    }
    answer(c)
}
