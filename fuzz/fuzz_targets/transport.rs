//! See crates/slowstart-transport/src/fuzzing.rs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| slowstart_transport::fuzzing::transport(data));
