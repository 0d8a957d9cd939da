//! The decoder fuzz target (`fuzz/`, cargo-fuzz) at a size the test suite
//! affords: seeded random instruction streams, the same checks.

#[path = "../../../fuzz/bodies/decoder.rs"]
mod body;

/// xorshift64: the streams are the same on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn random_streams_decode_and_disassemble() {
    let mut s = 0x5eed_0fde_c0de_u64;
    for _ in 0..20_000 {
        let len = (next(&mut s) % 256) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| next(&mut s) as u8).collect();
        body::one_input(&bytes);
    }
}

#[test]
fn every_halfword_and_its_32_bit_extensions() {
    // Every 16-bit parcel alone, and with each of a few upper halves.
    for h in 0..=u16::MAX {
        body::one_input(&h.to_le_bytes());
        for hi in [0u16, 0xffff, 0x8000, 0x0fff] {
            let w = u32::from(h) | u32::from(hi) << 16;
            body::one_input(&w.to_le_bytes());
        }
    }
}
