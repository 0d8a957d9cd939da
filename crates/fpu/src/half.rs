//! binary16 (RISC-V Zfh / Zfhmin) operations.
//!
//! Half precision is rare enough in programs that no host fast path is worth
//! its proof: arithmetic and conversions go straight to SoftFloat's `f16`
//! routines (RISC-V specialisation), which are exact in every rounding mode.
//! Sign injection, min/max, comparisons and classify share the
//! format-generic code of the crate root.

use crate::{rm_check, sf};

/// `fadd.h`: `a + b`, rounded per `rm`.
#[inline]
pub fn f16_add(a: u16, b: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_add(a, b, rm_check(rm), flags)
}

/// `fsub.h`: `a - b`, rounded per `rm`.
#[inline]
pub fn f16_sub(a: u16, b: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_sub(a, b, rm_check(rm), flags)
}

/// `fmul.h`: `a * b`, rounded per `rm`.
#[inline]
pub fn f16_mul(a: u16, b: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_mul(a, b, rm_check(rm), flags)
}

/// `fdiv.h`: `a / b`, rounded per `rm` (DZ for finite non-zero / zero).
#[inline]
pub fn f16_div(a: u16, b: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_div(a, b, rm_check(rm), flags)
}

/// `fsqrt.h`: square root, rounded per `rm` (negative non-zero operand:
/// canonical NaN and NV; `sqrt(-0) = -0`).
#[inline]
pub fn f16_sqrt(a: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_sqrt(a, rm_check(rm), flags)
}

/// `fmadd.h`: `(a * b) + c` with a single rounding (`∞ × 0` raises NV even
/// when `c` is a quiet NaN).
#[inline]
pub fn f16_fmadd(a: u16, b: u16, c: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_mul_add(a, b, c, rm_check(rm), flags)
}

/// `fmsub.h`: `(a * b) - c` with a single rounding.
#[inline]
pub fn f16_fmsub(a: u16, b: u16, c: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_mul_add(a, b, crate::neg(c), rm_check(rm), flags)
}

/// `fnmsub.h`: `-(a * b) + c` with a single rounding.
#[inline]
pub fn f16_fnmsub(a: u16, b: u16, c: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_mul_add(crate::neg(a), b, c, rm_check(rm), flags)
}

/// `fnmadd.h`: `-(a * b) - c` with a single rounding.
#[inline]
pub fn f16_fnmadd(a: u16, b: u16, c: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_mul_add(crate::neg(a), b, crate::neg(c), rm_check(rm), flags)
}

/// `fmin.h`: IEEE 754-2019 minimumNumber (one NaN operand: the other is
/// returned; both NaN: canonical NaN; any signalling NaN raises NV;
/// `-0 < +0`).
#[inline]
pub fn f16_min(a: u16, b: u16, flags: &mut u8) -> u16 {
    crate::min_max(a, b, false, flags)
}

/// `fmax.h`: IEEE 754-2019 maximumNumber (see [`f16_min`]).
#[inline]
pub fn f16_max(a: u16, b: u16, flags: &mut u8) -> u16 {
    crate::min_max(a, b, true, flags)
}

/// `feq.h` (quiet comparison): false if either operand is NaN; NV only for
/// signalling NaNs.
#[inline]
pub fn f16_eq(a: u16, b: u16, flags: &mut u8) -> bool {
    crate::eq(a, b, flags)
}

/// `flt.h` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f16_lt(a: u16, b: u16, flags: &mut u8) -> bool {
    crate::lt_le(a, b, false, flags)
}

/// `fle.h` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f16_le(a: u16, b: u16, flags: &mut u8) -> bool {
    crate::lt_le(a, b, true, flags)
}

/// `fclass.h`: the 10-bit classification mask (bits as for `fclass.s`).
#[inline]
pub fn f16_class(a: u16) -> u64 {
    crate::class(a)
}

/// `fsgnj.h`: magnitude of `a`, sign of `b`.
#[inline]
pub fn f16_sgnj(a: u16, b: u16) -> u16 {
    crate::sgnj(a, b)
}

/// `fsgnjn.h`: magnitude of `a`, inverted sign of `b`.
#[inline]
pub fn f16_sgnjn(a: u16, b: u16) -> u16 {
    crate::sgnj(a, !b)
}

/// `fsgnjx.h`: `a` with its sign XORed with the sign of `b`.
#[inline]
pub fn f16_sgnjx(a: u16, b: u16) -> u16 {
    a ^ (b & (1 << 15))
}

/// True if `a` is any NaN.
#[inline]
pub fn f16_is_nan(a: u16) -> bool {
    crate::is_nan(a)
}

/// True if `a` is a signalling NaN.
#[inline]
pub fn f16_is_snan(a: u16) -> bool {
    crate::is_snan(a)
}

/// `fcvt.s.h`: widens binary16 to binary32. Always exact; a NaN becomes the
/// canonical NaN (NV if it was signalling). `rm` is ignored.
#[inline]
pub fn f16_to_f32(a: u16, rm: u8, flags: &mut u8) -> u32 {
    sf::f16_to_f32(a, rm_check(rm), flags)
}

/// `fcvt.d.h`: widens binary16 to binary64. Always exact; a NaN becomes the
/// canonical NaN (NV if it was signalling). `rm` is ignored.
#[inline]
pub fn f16_to_f64(a: u16, rm: u8, flags: &mut u8) -> u64 {
    sf::f16_to_f64(a, rm_check(rm), flags)
}

/// `fcvt.h.s`: narrows binary32 to binary16, rounded per `rm` (NaN ->
/// canonical NaN, NV if signalling; OF/UF/NX as appropriate).
#[inline]
pub fn f32_to_f16(a: u32, rm: u8, flags: &mut u8) -> u16 {
    sf::f32_to_f16(a, rm_check(rm), flags)
}

/// `fcvt.h.d`: narrows binary64 to binary16, rounded per `rm`.
#[inline]
pub fn f64_to_f16(a: u64, rm: u8, flags: &mut u8) -> u16 {
    sf::f64_to_f16(a, rm_check(rm), flags)
}

/// `fcvt.h.w`: signed 32-bit (low 32 bits of `v`) -> binary16, rounded per
/// `rm` (OF and NX beyond 65504 after rounding).
#[inline]
pub fn i32_to_f16(v: u64, rm: u8, flags: &mut u8) -> u16 {
    sf::i32_to_f16(v as u32 as i32, rm_check(rm), flags)
}

/// `fcvt.h.wu`: unsigned 32-bit (low 32 bits of `v`) -> binary16.
#[inline]
pub fn u32_to_f16(v: u64, rm: u8, flags: &mut u8) -> u16 {
    sf::ui32_to_f16(v as u32, rm_check(rm), flags)
}

/// `fcvt.h.l`: signed 64-bit -> binary16.
#[inline]
pub fn i64_to_f16(v: u64, rm: u8, flags: &mut u8) -> u16 {
    sf::i64_to_f16(v as i64, rm_check(rm), flags)
}

/// `fcvt.h.lu`: unsigned 64-bit -> binary16.
#[inline]
pub fn u64_to_f16(v: u64, rm: u8, flags: &mut u8) -> u16 {
    sf::ui64_to_f16(v, rm_check(rm), flags)
}

/// The exact value of a binary16 encoding as an `f64` (NaNs stay NaN).
#[inline]
pub(crate) fn f16_to_host(a: u16) -> f64 {
    let sign = if a & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((a >> 10) & 0x1f);
    let frac = f64::from(a & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1024.0 + frac) * 2f64.powi(exp - 25),
    }
}
