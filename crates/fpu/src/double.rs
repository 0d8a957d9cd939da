//! binary64 (RISC-V D extension) operations.

use crate::{fast, rm_check, sf, RM_RNE};

/// `fadd.d`: `a + b`, rounded per `rm`.
#[inline]
pub fn f64_add(a: u64, b: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_add(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_add(a, b, rm, flags)
}

/// `fsub.d`: `a - b`, rounded per `rm`.
#[inline]
pub fn f64_sub(a: u64, b: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_add(a, crate::neg(b)) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_sub(a, b, rm, flags)
}

/// `fmul.d`: `a * b`, rounded per `rm`.
#[inline]
pub fn f64_mul(a: u64, b: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_mul(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_mul(a, b, rm, flags)
}

/// `fdiv.d`: `a / b`, rounded per `rm` (DZ for finite non-zero / zero).
#[inline]
pub fn f64_div(a: u64, b: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_div(a, b) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_div(a, b, rm, flags)
}

/// `fsqrt.d`: square root, rounded per `rm` (negative non-zero operand:
/// canonical NaN and NV; `sqrt(-0) = -0`).
#[inline]
pub fn f64_sqrt(a: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_sqrt(a) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_sqrt(a, rm, flags)
}

/// Fused `a*b + c`, shared by the four FMA flavours.
#[inline(always)]
fn mul_add(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_mul_add(a, b, c) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_mul_add(a, b, c, rm, flags)
}

/// `fmadd.d`: `(a * b) + c` with a single rounding.
///
/// `∞ × 0` raises NV even when `c` is a quiet NaN, as RISC-V requires.
#[inline]
pub fn f64_fmadd(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    mul_add(a, b, c, rm, flags)
}

/// `fmsub.d`: `(a * b) - c` with a single rounding.
#[inline]
pub fn f64_fmsub(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    mul_add(a, b, crate::neg(c), rm, flags)
}

/// `fnmsub.d`: `-(a * b) + c` with a single rounding (an exact zero result
/// is `+0`, or `-0` in RDN, unless both terms are `-0`).
#[inline]
pub fn f64_fnmsub(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    mul_add(crate::neg(a), b, c, rm, flags)
}

/// `fnmadd.d`: `-(a * b) - c` with a single rounding.
#[inline]
pub fn f64_fnmadd(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    mul_add(crate::neg(a), b, crate::neg(c), rm, flags)
}

/// `fmin.d`: IEEE 754-2019 minimumNumber. One NaN operand: the other is
/// returned; both NaN: canonical NaN; any signalling NaN raises NV;
/// `-0 < +0`.
#[inline]
pub fn f64_min(a: u64, b: u64, flags: &mut u8) -> u64 {
    crate::min_max(a, b, false, flags)
}

/// `fmax.d`: IEEE 754-2019 maximumNumber (see [`f64_min`]).
#[inline]
pub fn f64_max(a: u64, b: u64, flags: &mut u8) -> u64 {
    crate::min_max(a, b, true, flags)
}

/// `feq.d` (quiet comparison): false if either operand is NaN; NV only for
/// signalling NaNs.
#[inline]
pub fn f64_eq(a: u64, b: u64, flags: &mut u8) -> bool {
    crate::eq(a, b, flags)
}

/// `flt.d` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f64_lt(a: u64, b: u64, flags: &mut u8) -> bool {
    crate::lt_le(a, b, false, flags)
}

/// `fle.d` (signalling comparison): false and NV if either operand is NaN.
#[inline]
pub fn f64_le(a: u64, b: u64, flags: &mut u8) -> bool {
    crate::lt_le(a, b, true, flags)
}

/// `fclass.d`: the 10-bit classification mask (bit 0 `-inf`, 1 negative
/// normal, 2 negative subnormal, 3 `-0`, 4 `+0`, 5 positive subnormal,
/// 6 positive normal, 7 `+inf`, 8 signalling NaN, 9 quiet NaN).
#[inline]
pub fn f64_class(a: u64) -> u64 {
    crate::class(a)
}

/// `fsgnj.d`: magnitude of `a`, sign of `b`.
#[inline]
pub fn f64_sgnj(a: u64, b: u64) -> u64 {
    crate::sgnj(a, b)
}

/// `fsgnjn.d`: magnitude of `a`, inverted sign of `b`.
#[inline]
pub fn f64_sgnjn(a: u64, b: u64) -> u64 {
    crate::sgnj(a, !b)
}

/// `fsgnjx.d`: `a` with its sign XORed with the sign of `b`.
#[inline]
pub fn f64_sgnjx(a: u64, b: u64) -> u64 {
    a ^ (b & (1 << 63))
}

/// True if `a` is any NaN.
#[inline]
pub fn f64_is_nan(a: u64) -> bool {
    crate::is_nan(a)
}

/// True if `a` is a signalling NaN.
#[inline]
pub fn f64_is_snan(a: u64) -> bool {
    crate::is_snan(a)
}
