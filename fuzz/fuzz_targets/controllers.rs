//! See crates/slowstart-cc/src/fuzzing.rs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| slowstart_cc::fuzzing::controllers(data));
