//! binary32 (RISC-V F extension) operations.

use crate::{fast, rm_check, sf, RM_RNE};

/// `fadd.s`: `a + b`, rounded per `rm`.
#[inline]
pub fn f32_add(a: u32, b: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_add(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_add(a, b, rm, flags)
}

/// `fsub.s`: `a - b`, rounded per `rm`.
#[inline]
pub fn f32_sub(a: u32, b: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_add(a, crate::neg(b)) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_sub(a, b, rm, flags)
}

/// `fmul.s`: `a * b`, rounded per `rm`.
#[inline]
pub fn f32_mul(a: u32, b: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_mul(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_mul(a, b, rm, flags)
}

/// `fdiv.s`: `a / b`, rounded per `rm` (DZ for finite non-zero / zero).
#[inline]
pub fn f32_div(a: u32, b: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_div(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_div(a, b, rm, flags)
}

/// `fsqrt.s`: square root, rounded per `rm` (negative non-zero operand:
/// canonical NaN and NV; `sqrt(-0) = -0`).
#[inline]
pub fn f32_sqrt(a: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_sqrt(a) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_sqrt(a, rm, flags)
}

/// Fused `a*b + c`, shared by the four FMA flavours.
#[inline(always)]
fn mul_add(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f32_mul_add(a, b, c) {
            *flags |= f;
            return r;
        }
    }
    sf::f32_mul_add(a, b, c, rm, flags)
}

/// `fmadd.s`: `(a * b) + c` with a single rounding.
///
/// `∞ × 0` raises NV even when `c` is a quiet NaN, as RISC-V requires.
#[inline]
pub fn f32_fmadd(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    mul_add(a, b, c, rm, flags)
}

/// `fmsub.s`: `(a * b) - c` with a single rounding.
#[inline]
pub fn f32_fmsub(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    mul_add(a, b, crate::neg(c), rm, flags)
}

/// `fnmsub.s`: `-(a * b) + c` with a single rounding (an exact zero result
/// is `+0`, or `-0` in RDN, unless both terms are `-0`).
#[inline]
pub fn f32_fnmsub(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    mul_add(crate::neg(a), b, c, rm, flags)
}

/// `fnmadd.s`: `-(a * b) - c` with a single rounding.
#[inline]
pub fn f32_fnmadd(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    mul_add(crate::neg(a), b, crate::neg(c), rm, flags)
}

/// `fmin.s`: IEEE 754-2019 minimumNumber. One NaN operand: the other is
/// returned; both NaN: canonical NaN; any signalling NaN raises NV;
/// `-0 < +0`.
#[inline]
pub fn f32_min(a: u32, b: u32, flags: &mut u8) -> u32 {
    crate::min_max(a, b, false, flags)
}

/// `fmax.s`: IEEE 754-2019 maximumNumber (see [`f32_min`]).
#[inline]
pub fn f32_max(a: u32, b: u32, flags: &mut u8) -> u32 {
    crate::min_max(a, b, true, flags)
}

/// `feq.s` (quiet comparison): false if either operand is NaN; NV only for
/// signalling NaNs.
#[inline]
pub fn f32_eq(a: u32, b: u32, flags: &mut u8) -> bool {
    crate::eq(a, b, flags)
}

/// `flt.s` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f32_lt(a: u32, b: u32, flags: &mut u8) -> bool {
    crate::lt_le(a, b, false, flags)
}

/// `fle.s` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f32_le(a: u32, b: u32, flags: &mut u8) -> bool {
    crate::lt_le(a, b, true, flags)
}

/// `fclass.s`: the 10-bit classification mask (bit 0 `-inf`, 1 negative
/// normal, 2 negative subnormal, 3 `-0`, 4 `+0`, 5 positive subnormal,
/// 6 positive normal, 7 `+inf`, 8 signalling NaN, 9 quiet NaN).
#[inline]
pub fn f32_class(a: u32) -> u64 {
    crate::class(a)
}

/// `fsgnj.s`: magnitude of `a`, sign of `b`.
#[inline]
pub fn f32_sgnj(a: u32, b: u32) -> u32 {
    crate::sgnj(a, b)
}

/// `fsgnjn.s`: magnitude of `a`, inverted sign of `b`.
#[inline]
pub fn f32_sgnjn(a: u32, b: u32) -> u32 {
    crate::sgnj(a, !b)
}

/// `fsgnjx.s`: `a` with its sign XORed with the sign of `b`.
#[inline]
pub fn f32_sgnjx(a: u32, b: u32) -> u32 {
    a ^ (b & (1 << 31))
}

/// True if `a` is any NaN.
#[inline]
pub fn f32_is_nan(a: u32) -> bool {
    crate::is_nan(a)
}

/// True if `a` is a signalling NaN.
#[inline]
pub fn f32_is_snan(a: u32) -> bool {
    crate::is_snan(a)
}
