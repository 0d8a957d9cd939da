//! Bit arithmetic the instruction semantics share.

/// The low 32 bits, sign-extended (the `*w` operations' results).
#[inline(always)]
pub fn sext32(v: u64) -> u64 {
    v as i32 as i64 as u64
}

/// The low 32 bits, zero-extended.
#[inline(always)]
pub fn zext32(v: u64) -> u64 {
    v as u32 as u64
}

/// `orc.b`: each byte becomes 0xff if it is non-zero, else stays 0.
#[inline(always)]
pub fn orc_b(v: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Per byte: bit 7 set iff the byte is non-zero (no carries cross bytes).
    let nonzero = (((v & LOW7) + LOW7) | v) & !LOW7;
    (nonzero >> 7) * 0xff
}

/// The 128-bit carry-less product of `a` and `b` (`clmul` is its low half,
/// `clmulh` its high half, `clmulr` bits 126..63).
#[inline(never)]
pub fn clmul(a: u64, b: u64) -> u128 {
    let mut acc = 0u128;
    let mut b = b;
    while b != 0 {
        let i = b.trailing_zeros();
        acc ^= (a as u128) << i;
        b &= b - 1;
    }
    acc
}
