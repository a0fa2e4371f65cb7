//! A controller of your own, as a WebAssembly guest: a slow start that ends when the RTT rises
//! `rise` above its minimum (a delay signal, after HyStart's, RFC 9406 §4.2), then Reno's
//! +1 MSS per RTT (RFC 5681 §3.1); a loss halves the window, a timeout restarts from one MSS.
//!
//! Build: `cargo build --release --target wasm32-unknown-unknown` (see README.md);
//! run: `slowstart run satellite --cc target/wasm32-unknown-unknown/release/wasm_controller.wasm:rise=0.25`.

use slowstart_guest::{
    export, AckEvent, CommonParams, CongestionController, CongestionEvent, Nanos, Params, Phase,
};

pub struct DelayStart {
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Leave slow start once an RTT sample exceeds min_rtt x (1 + rise).
    rise: f64,
    /// Bytes acknowledged towards the next +1 MSS in congestion avoidance.
    acked: u64,
}

impl DelayStart {
    fn new(common: &CommonParams, params: &Params) -> Result<Self, String> {
        params.reject_unknown(&["rise"])?;
        let rise = params.number("rise", 0.125)?;
        if !(0.0..=10.0).contains(&rise) {
            return Err(format!("rise: must be in 0..=10, got {rise}"));
        }
        Ok(Self {
            mss: common.mss,
            cwnd: common.initcwnd * common.mss,
            ssthresh: u64::MAX,
            rise,
            acked: 0,
        })
    }
}

impl CongestionController for DelayStart {
    fn on_ack(&mut self, ack: &AckEvent) {
        if !ack.cwnd_limited || ack.in_recovery {
            return;
        }
        if self.cwnd < self.ssthresh {
            let rtt = ack.rtt.unwrap_or(0) as f64;
            if ack.min_rtt > 0 && rtt > ack.min_rtt as f64 * (1.0 + self.rise) {
                self.ssthresh = self.cwnd; // the queue is building: slow start ends here
            } else {
                self.cwnd += ack.bytes_acked.min(2 * self.mss); // RFC 3465 §2.3, L = 2
                return;
            }
        }
        self.acked += ack.bytes_acked;
        if self.acked >= self.cwnd {
            self.acked -= self.cwnd;
            self.cwnd += self.mss;
        }
    }

    fn on_congestion_event(&mut self, ev: &CongestionEvent) {
        self.ssthresh = (ev.bytes_in_flight / 2).max(2 * self.mss);
        self.cwnd = self.ssthresh;
    }

    fn on_rto(&mut self, _now: Nanos, bytes_in_flight: u64) {
        self.ssthresh = (bytes_in_flight / 2).max(2 * self.mss);
        self.cwnd = self.mss;
    }

    fn cwnd(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn phase(&self) -> Phase {
        if self.cwnd < self.ssthresh {
            Phase::SlowStart
        } else {
            Phase::CongestionAvoidance
        }
    }
}

export!(DelayStart::new);
