//! See crates/slowstart-sim/src/fuzzing.rs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| slowstart_sim::fuzzing::controllers(data));
