//! libFuzzer target: decoding, RVC expansion and disassembly of arbitrary
//! instruction streams.
#![no_main]

#[path = "../bodies/decoder.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::one_input(data));
