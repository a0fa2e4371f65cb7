//! The cost of one call into a guest, apart from the engine: the built-in Reno and the same Reno
//! compiled as a guest (examples/builtin-guest, `make guests`) under each runtime of the build
//! answer the same ACKs. Prints nanoseconds per ACK; under `valgrind --tool=callgrind` run one
//! controller at a time (`-- RUNTIME`) and divide its instructions by the ACKs.
//!
//!     cargo run --release -p slowstart-wasm --features jit --example guest_calls [builtin|wasmi|wasmtime] [ACKS]

use std::time::Instant;

use slowstart_cc::external;
use slowstart_cc::params::ParamValue;
use slowstart_cc::{AckEvent, CongestionController};
use slowstart_cc::{CcSpec, CommonParams, Controller};
use slowstart_wasm::{Runtime, WasmFactory};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = args.first().map(String::as_str);
    let acks: u64 = args.get(1).map_or(1_000_000, |n| n.parse().expect("ACKS"));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/wasm32-unknown-unknown/release/builtin_guest.wasm"
    );
    let module = std::fs::read(path).expect("builtin_guest.wasm: run `make guests`");
    let common = CommonParams {
        mss: 1448,
        initcwnd: 10,
        abc: true,
        seed: 1,
        paced: false,
    };
    let mut runs: Vec<(&str, Controller)> = Vec::new();
    if only.is_none_or(|o| o == "builtin") {
        runs.push((
            "builtin",
            Controller::new(&CcSpec::named("reno"), &common).unwrap(),
        ));
    }
    for &runtime in Runtime::BUILT {
        if only.is_some_and(|o| o != runtime.name()) {
            continue;
        }
        let t0 = Instant::now();
        let factory = WasmFactory::load_with(&module, runtime).unwrap();
        eprintln!(
            "{}: loaded in {:.3} s",
            runtime.name(),
            t0.elapsed().as_secs_f64()
        );
        let name = format!("builtin-guest-{}", runtime.name());
        let params = [("algorithm".to_string(), ParamValue::Text("reno".into()))].into();
        external::register(&name, std::sync::Arc::new(factory));
        let spec = CcSpec {
            name,
            params,
            guest: None,
        };
        runs.push((runtime.name(), Controller::new(&spec, &common).unwrap()));
    }
    for (name, mut c) in runs {
        let t0 = Instant::now();
        let mut sum = 0u64;
        for i in 0..acks {
            c.on_ack(&AckEvent {
                now: i * 10_000,
                bytes_acked: 1448,
                mss: 1448,
                rtt: Some(80_000_000),
                srtt: 80_000_000,
                min_rtt: 80_000_000,
                delivered: i * 1448,
                prior_in_flight: c.cwnd(),
                bytes_in_flight: c.cwnd() - 1448,
                cwnd_limited: true,
                ..AckEvent::default()
            });
            sum = sum.wrapping_add(c.cwnd());
        }
        let ns = t0.elapsed().as_secs_f64() * 1e9 / acks as f64;
        println!("{name:10} {ns:8.1} ns per ACK (cwnd sum {sum})");
    }
}
