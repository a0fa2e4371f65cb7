//! The host against real guests: the built-ins compiled as guests (examples/builtin-guest) must
//! answer every event exactly as the built-ins do, and each way a guest can misbehave
//! (examples/faulty-guest, hand-written modules) must give one line saying what it did. Every
//! test runs under each runtime of the build ([`Runtime::BUILT`]).

use std::path::PathBuf;

use proptest::prelude::*;
use slowstart_cc::external::{take_fault, Event, GuestFactory};
use slowstart_cc::registry::ALGORITHMS;
use slowstart_cc::{AckEvent, CongestionController, CongestionEvent, RateSample, SentEvent};
use slowstart_cc::{CcSpec, CommonParams, Controller};

use super::*;

/// Register `module` under `name`, run by `runtime`.
fn register_with(name: &str, module: &[u8], runtime: Runtime) {
    let factory = WasmFactory::load_with(module, runtime).unwrap();
    external::register(name, Arc::new(factory));
}

/// A guest module built by `make guests` (cargo build --target wasm32-unknown-unknown).
fn guest_module(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/wasm32-unknown-unknown/release")
        .join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; build the guests first (make guests)",
            path.display()
        )
    })
}

const COMMON: CommonParams = CommonParams {
    mss: 1448,
    initcwnd: 10,
    abc: true,
    seed: 3,
    paced: false,
};

fn params(pairs: &[(&str, ParamValue)]) -> BTreeMap<String, ParamValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn text(s: &str) -> ParamValue {
    ParamValue::Text(s.into())
}

#[derive(Clone, Debug)]
enum Step {
    Sent(u64),
    Ack {
        segments: u64,
        rtt_ms: u64,
        limited: bool,
    },
    Loss,
    RecoveryExit,
    Timeout,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (1u64..4).prop_map(Step::Sent),
        8 => (1u64..64, 1u64..800, any::<bool>())
            .prop_map(|(segments, rtt_ms, limited)| Step::Ack { segments, rtt_ms, limited }),
        1 => Just(Step::Loss),
        1 => Just(Step::RecoveryExit),
        1 => Just(Step::Timeout),
    ]
}

/// Deliver `steps` to a controller, calling `after` with each answer.
fn drive(c: &mut dyn CongestionController, steps: &[Step], mut after: impl FnMut(&str)) {
    const MSS: u64 = 1448;
    let (mut now, mut delivered, mut sent) = (0u64, 0u64, 0u64);
    for s in steps {
        now += 1_000_000;
        match *s {
            Step::Sent(n) => {
                sent += n * MSS;
                c.on_packet_sent(&SentEvent {
                    now,
                    bytes: n * MSS,
                    bytes_in_flight: c.cwnd(),
                    total_sent: sent,
                    retransmission: n == 3,
                })
            }
            Step::Ack {
                segments,
                rtt_ms,
                limited,
            } => {
                let bytes = segments * MSS;
                let rtt = rtt_ms * 1_000_000;
                c.on_ack(&AckEvent {
                    now,
                    bytes_acked: bytes,
                    mss: MSS,
                    rtt: Some(rtt),
                    srtt: rtt,
                    min_rtt: 1_000_000,
                    one_way_delay: Some(rtt / 2),
                    rate: Some(RateSample {
                        delivery_rate: bytes * 1_000_000_000 / rtt,
                        delivered: bytes,
                        interval: rtt,
                        prior_delivered: delivered,
                        is_app_limited: !limited,
                        rtt,
                    }),
                    delivered: delivered + bytes,
                    prior_in_flight: c.cwnd(),
                    bytes_in_flight: c.cwnd().saturating_sub(bytes),
                    cwnd_limited: limited,
                    sent_before_cwnd_block: limited,
                    in_recovery: false,
                });
                delivered += bytes;
            }
            Step::Loss => c.on_congestion_event(&CongestionEvent {
                now,
                ecn: delivered % 3 == 0,
                bytes_lost: MSS,
                bytes_in_flight: c.cwnd(),
                mss: MSS,
            }),
            Step::RecoveryExit => c.on_recovery_exit(now),
            Step::Timeout => c.on_rto(now, c.cwnd()),
        }
        after(&format!(
            "{:?} {} {} {:?} {:?} {:?}",
            s,
            c.cwnd(),
            c.ssthresh(),
            c.pacing_rate(),
            c.send_quantum(),
            c.phase()
        ));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Every built-in, compiled as a guest, answers every event as the built-in does.
    #[test]
    fn every_builtin_as_a_guest_answers_as_the_builtin(steps in proptest::collection::vec(step(), 1..200)) {
        for &runtime in Runtime::BUILT {
            let name = format!("builtin-guest-test-{runtime:?}");
            if !external::is_registered(&name) {
                register_with(&name, &guest_module("builtin_guest"), runtime);
            }
            for algo in ALGORITHMS {
                let mut native = Controller::new(&CcSpec::named(algo.name), &COMMON).unwrap();
                let spec = CcSpec {
                    name: name.clone(),
                    params: params(&[("algorithm", text(algo.name))]),
                    guest: None,
                };
                let mut guest = Controller::new(&spec, &COMMON).unwrap();
                prop_assert_eq!(guest.uses_packet_sent(), native.uses_packet_sent(), "{}", algo.name);
                let mut expected = Vec::new();
                drive(&mut native, &steps, |line| expected.push(line.to_string()));
                let mut got = Vec::new();
                drive(&mut guest, &steps, |line| got.push(line.to_string()));
                prop_assert_eq!(got, expected, "{} under {:?}", algo.name, runtime);
                prop_assert!(take_fault().is_none());
            }
        }
    }
}

/// The first fault of a faulty guest's controller under `runtime`, driven by ACKs until it
/// misbehaves.
fn fault_of(fault: &str, runtime: Runtime) -> String {
    let factory = WasmFactory::load_with(&guest_module("faulty_guest"), runtime).unwrap();
    let p = params(&[("fault", text(fault)), ("after", ParamValue::Number(2.0))]);
    let (mut guest, _) = factory.build(&p, &COMMON).unwrap();
    let ack = AckEvent {
        now: 5,
        bytes_acked: 1448,
        mss: 1448,
        cwnd_limited: true,
        ..AckEvent::default()
    };
    for _ in 0..4 {
        if let Err(e) = guest.call(Event::Ack(&ack)) {
            return e;
        }
    }
    panic!("{fault}: no fault after 4 ACKs under {runtime:?}");
}

#[test]
fn a_trap_an_endless_loop_and_runaway_memory_are_faults() {
    for &runtime in Runtime::BUILT {
        let trap = fault_of("trap", runtime);
        assert_eq!(
            trap,
            "slowstart_on_ack trapped: wasm `unreachable` instruction executed"
        );
        let endless = fault_of("loop", runtime);
        let budget = match runtime {
            Runtime::Interpreter => format!("{FUEL_PER_CALL} instructions"),
            #[cfg(feature = "jit")]
            Runtime::Jit => format!("{} s", TIME_PER_CALL.as_secs_f64()),
        };
        assert_eq!(
            endless,
            format!("slowstart_on_ack ran past its budget of {budget} (an endless loop?)")
        );
        let grow = fault_of("grow", runtime);
        assert!(grow.starts_with("slowstart_on_ack trapped"), "{grow}");
    }
}

#[test]
fn windows_out_of_bounds_fault_through_the_controller() {
    for &runtime in Runtime::BUILT {
        windows_out_of_bounds_fault_under(runtime);
    }
}

fn windows_out_of_bounds_fault_under(runtime: Runtime) {
    let name = format!("faulty-guest-test-{runtime:?}");
    register_with(&name, &guest_module("faulty_guest"), runtime);
    for (fault, got) in [
        ("zero_window", "returned 0"),
        ("huge_window", "returned 1152921504606846976"),
    ] {
        take_fault();
        let spec = CcSpec {
            name: name.clone(),
            params: params(&[("fault", text(fault)), ("after", ParamValue::Number(1.0))]),
            guest: None,
        };
        let mut c = Controller::new(&spec, &COMMON).unwrap();
        c.on_ack(&AckEvent {
            now: 2_000_000_000,
            bytes_acked: 1448,
            mss: 1448,
            cwnd_limited: true,
            ..AckEvent::default()
        });
        assert!(c.is_faulted());
        let message = take_fault().unwrap();
        assert!(
            message.starts_with(&format!("cc {name}: on_ack at 2.000000 s: cwnd() "))
                && message.contains(got),
            "{message}"
        );
    }
}

#[test]
fn a_guest_refusing_its_parameters_is_a_build_error() {
    for &runtime in Runtime::BUILT {
        let name = format!("faulty-guest-refusing-{runtime:?}");
        register_with(&name, &guest_module("faulty_guest"), runtime);
        let spec = CcSpec {
            name: name.clone(),
            params: params(&[("fault", text("at_start"))]),
            guest: None,
        };
        let err = Controller::new(&spec, &COMMON).unwrap_err();
        assert_eq!(
            err.0,
            format!("cc: {name}: returned -1: refused at start, as asked")
        );
        let spec = CcSpec {
            name,
            params: params(&[("fault", text("trap")), ("speed", ParamValue::Number(1.0))]),
            guest: None,
        };
        let err = Controller::new(&spec, &COMMON).unwrap_err();
        assert!(
            err.0
                .contains("unknown parameter 'speed' (accepted: fault, after)"),
            "{err}"
        );
    }
}

/// Why `bytes` do not load, the same line under every runtime.
fn bytes_error(bytes: &[u8]) -> String {
    let errors: Vec<String> = Runtime::BUILT
        .iter()
        .map(|&runtime| match WasmFactory::load_with(bytes, runtime) {
            Ok(_) => panic!("loaded under {runtime:?}"),
            Err(e) => e,
        })
        .collect();
    assert!(!errors[0].contains('\n'), "{}", errors[0]);
    // A runtime's own words (after the validator's or the instantiation's prefix) differ
    // between runtimes; what slowstart says does not.
    let ours = |e: &String| match e.split_once(": ") {
        Some((prefix @ ("not a valid WebAssembly module" | "cannot be instantiated"), _)) => {
            prefix.to_string()
        }
        _ => e.clone(),
    };
    assert!(
        errors.iter().all(|e| ours(e) == ours(&errors[0])),
        "{errors:?}"
    );
    errors[0].clone()
}

fn load_error(wat: &str) -> String {
    bytes_error(&wat::parse_str(wat).unwrap())
}

/// Every export of the interface, with `version` as the version.
fn module(version: i32, extra: &str) -> String {
    let events: String = EventKind::ALL
        .iter()
        .map(|k| {
            format!(
                "(func (export \"{}\") (result i32) i32.const 0)",
                k.export()
            )
        })
        .collect();
    format!(
        r#"(module {extra} (memory (export "memory") 1)
            (func (export "slowstart_abi_version") (result i32) i32.const {version})
            (func (export "slowstart_io") (result i32) i32.const 0)
            (func (export "slowstart_new") (param i64 i64 i32 i64 i32) (result i32) i32.const 0)
            {events})"#
    )
}

#[test]
fn modules_that_do_not_fit_the_interface_are_refused_with_one_line() {
    for &runtime in Runtime::BUILT {
        let fits = wat::parse_str(module(abi::VERSION, "")).unwrap();
        assert!(WasmFactory::load_with(&fits, runtime).is_ok());
    }
    assert_eq!(
        bytes_error(b"#!/bin/sh\necho hi\n"),
        "not a WebAssembly module (no \\0asm header)"
    );
    assert!(bytes_error(b"\0asm\x01\0\0\0\x99").starts_with("not a valid WebAssembly module"));
    assert_eq!(
        load_error(&module(2, "")),
        "built for guest interface version 2; this slowstart runs version 1 (rebuild it \
         against this slowstart-guest)"
    );
    assert_eq!(
        load_error(&module(
            1,
            r#"(import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))"#
        )),
        "imports wasi_snapshot_preview1.fd_write, which slowstart does not provide (a guest has \
         no file, network or clock: build it for wasm32-unknown-unknown, without WASI)"
    );
    let no_ack = module(1, "").replace("(export \"slowstart_on_ack\")", "");
    assert_eq!(
        load_error(&no_ack),
        "missing export 'slowstart_on_ack' (is it built with slowstart_guest::export!?)"
    );
    let wrong = module(1, "").replace(
        "(func (export \"slowstart_new\") (param i64 i64 i32 i64 i32)",
        "(func (export \"slowstart_new\") (param i32)",
    );
    assert!(load_error(&wrong).starts_with("export 'slowstart_new' has the wrong type"));
    let no_memory = module(1, "").replace("(memory (export \"memory\") 1)", "");
    assert_eq!(
        load_error(&no_memory),
        "missing export 'memory' (the guest's linear memory)"
    );
}

/// `module`'s on_packet_sent trapping, `events` as its `slowstart_events` export, and answers
/// in its block that the core accepts (cwnd 10 segments, the rest unset, slow start).
fn module_wanting(events: &str) -> String {
    let ff = "\\ff".repeat(24);
    let answers = format!(
        "(data (i32.const {}) \"\\90\\38\\00\\00\\00\\00\\00\\00{ff}\\00\")",
        abi::OUT_OFFSET
    );
    module(1, &format!("{events} {answers}")).replace(
        "(func (export \"slowstart_on_packet_sent\") (result i32) i32.const 0)",
        "(func (export \"slowstart_on_packet_sent\") (result i32) unreachable)",
    )
}

/// The events a module's instance is not sent, or why it cannot be built.
fn skipped_by(wat: &str) -> Result<u8, String> {
    let bytes = wat::parse_str(wat).unwrap();
    let answers: Vec<Result<u8, String>> = Runtime::BUILT
        .iter()
        .map(|&runtime| {
            let factory = WasmFactory::load_with(&bytes, runtime)?;
            let (guest, _) = factory.build(&BTreeMap::new(), &COMMON).map_err(|e| e.0)?;
            Ok(guest.skipped())
        })
        .collect();
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    answers[0].clone()
}

#[test]
fn a_guest_is_sent_only_the_events_it_wants() {
    let sent = EventKind::Sent.bit() as u8;
    let all_but_sent = (1 << EventKind::ALL.len()) - 1 - sent;
    let wants = |bits: u8| {
        module_wanting(&format!(
            "(func (export \"slowstart_events\") (result i32) i32.const {bits})"
        ))
    };
    assert_eq!(skipped_by(&module(1, "")), Ok(0), "every event by default");
    assert_eq!(skipped_by(&wants(all_but_sent)), Ok(sent));
    // Without the export, on_packet_sent is not sent (the trait's default does nothing).
    let no_sent = module(1, "").replace("(export \"slowstart_on_packet_sent\")", "");
    assert_eq!(skipped_by(&no_sent), Ok(sent));
    let no_sent_but_wanted = wants(63).replace("(export \"slowstart_on_packet_sent\")", "");
    assert_eq!(
        skipped_by(&no_sent_but_wanted),
        Err(
            "slowstart_events asks for an event the module does not export \
             (slowstart_on_packet_sent)"
                .into()
        )
    );
    assert_eq!(
        skipped_by(&wants(64)),
        Err(
            "slowstart_events returned 0x40 (accepted: bits 0..=5, one an event, \
             slowstart_guest::abi::EventKind)"
                .into()
        )
    );
    // Through a controller: the skipped on_packet_sent (it would trap) is never called.
    for &runtime in Runtime::BUILT {
        let name = format!("wants-no-sent-{runtime:?}");
        register_with(
            &name,
            &wat::parse_str(wants(all_but_sent)).unwrap(),
            runtime,
        );
        let mut c = Controller::new(&CcSpec::named(&name), &COMMON).unwrap();
        assert!(!c.uses_packet_sent());
        c.on_packet_sent(&SentEvent::default());
        assert!(!c.is_faulted() && take_fault().is_none(), "{runtime:?}");
    }
}

#[test]
fn an_access_outside_its_memory_is_a_trap() {
    let wat = module(1, "").replace(
        "(func (export \"slowstart_on_ack\") (result i32) i32.const 0)",
        "(func (export \"slowstart_on_ack\") (result i32) i32.const -8 i64.load drop i32.const 0)",
    );
    let bytes = wat::parse_str(&wat).unwrap();
    for &runtime in Runtime::BUILT {
        let factory = WasmFactory::load_with(&bytes, runtime).unwrap();
        let (mut guest, _) = factory.build(&BTreeMap::new(), &COMMON).unwrap();
        let fault = guest.call(Event::Ack(&AckEvent::default())).unwrap_err();
        assert!(
            fault.starts_with("slowstart_on_ack trapped: ") && fault.contains("out of bounds"),
            "{runtime:?}: {fault}"
        );
    }
}

#[test]
fn a_module_asking_for_more_memory_than_the_limit_cannot_start() {
    let pages = MEMORY_LIMIT / 65536 + 1;
    let big = module(1, "").replace(
        "(memory (export \"memory\") 1)",
        &format!("(memory (export \"memory\") {pages})"),
    );
    assert!(
        load_error(&big).starts_with("cannot be instantiated"),
        "{}",
        load_error(&big)
    );
}
