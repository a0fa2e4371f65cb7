//! A controller that behaves like Reno until its `after`-th ACK, then does what `fault` says:
//! `trap` (a panic, an `unreachable` trap), `loop` (never returns: the call's budget stops it),
//! `zero_window` or `huge_window` (a window outside the core's bounds), `grow` (allocates until
//! the memory limit stops it); `at_start` refuses to be built. The fault tests of the guest
//! interface run it (crates/slowstart-wasm, tests/test_guests.py).

use slowstart_guest::cc::params::ParamValue;
use slowstart_guest::cc::{CcSpec, Controller};
use slowstart_guest::{
    export, AckEvent, CommonParams, CongestionController, CongestionEvent, Nanos, Params, Phase,
};

pub struct Faulty {
    inner: Controller,
    fault: String,
    after: u64,
    acks: u64,
    hoard: Vec<Vec<u8>>,
}

fn build(common: &CommonParams, params: &Params) -> Result<Faulty, String> {
    params.reject_unknown(&["fault", "after"])?;
    let fault = match params.0.get("fault") {
        Some(ParamValue::Text(t)) => t.clone(),
        _ => return Err("fault: expected a word (trap, loop, zero_window, ...)".into()),
    };
    if fault == "at_start" {
        return Err("refused at start, as asked".into());
    }
    let inner = Controller::new(&CcSpec::named("reno"), common).map_err(|e| e.0)?;
    Ok(Faulty {
        inner,
        fault,
        after: params.number("after", 3.0)? as u64,
        acks: 0,
        hoard: Vec::new(),
    })
}

impl Faulty {
    fn faulting(&self) -> bool {
        self.acks >= self.after
    }
}

impl CongestionController for Faulty {
    fn on_ack(&mut self, ack: &AckEvent) {
        self.acks += 1;
        self.inner.on_ack(ack);
        if !self.faulting() {
            return;
        }
        match self.fault.as_str() {
            "trap" => panic!("the guest gave up"),
            "loop" => {
                let mut x = self.acks;
                while std::hint::black_box(x) != 0 {
                    x = x.wrapping_add(2);
                }
            }
            // Reserved, not written: the memory limit stops it, not the call's budget.
            "grow" => loop {
                self.hoard.push(Vec::with_capacity(1 << 20));
            },
            _ => {}
        }
    }
    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.inner.on_congestion_event(ev)
    }
    fn on_rto(&mut self, now: Nanos, bytes_in_flight: u64) {
        self.inner.on_rto(now, bytes_in_flight)
    }
    fn cwnd(&self) -> u64 {
        match self.fault.as_str() {
            "zero_window" if self.faulting() => 0,
            "huge_window" if self.faulting() => 1 << 60,
            _ => self.inner.cwnd(),
        }
    }
    fn ssthresh(&self) -> u64 {
        self.inner.ssthresh()
    }
    fn phase(&self) -> Phase {
        self.inner.phase()
    }
}

export!(build);
