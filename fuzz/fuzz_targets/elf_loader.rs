//! libFuzzer target: the ELF loader on arbitrary bytes.
#![no_main]

#[path = "../bodies/elf_loader.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::one_input(data));
