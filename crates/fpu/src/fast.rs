//! Host-arithmetic fast paths for round-to-nearest-even.
//!
//! Each function here either returns `Some((result, flags))` that is
//! bit-for-bit identical to what SoftFloat (and a RISC-V hart) produces for
//! RNE, or `None`, in which case the caller falls back to SoftFloat. They only
//! ever answer for the common "boring" cases: finite, non-NaN operands whose
//! result is a normal number (or an exact zero) far enough from the overflow
//! and underflow thresholds that OF and UF can't be raised; only NX has to be
//! decided, and that is done with error-free transformations.
//!
//! The reasoning relies on the host evaluating `f32`/`f64` arithmetic as
//! correctly rounded IEEE 754 binary32/binary64 in round-to-nearest-even
//! without flush-to-zero, which Rust guarantees (on x86-64 it uses SSE2 and
//! never changes MXCSR), and on `as` casts f64 -> f32 and integer -> float
//! rounding to nearest-even.
//!
//! binary32 results are computed in binary64 and rounded once more. For
//! `+ - * / sqrt` that double rounding is innocuous because 53 >= 2*24 + 2
//! (Figueroa, "When is double rounding innocuous?", 1995); the fused
//! multiply-add, whose exact result can need many more bits, additionally
//! refuses the rare case where the binary64 intermediate lies exactly on a
//! binary32 rounding boundary.
//!
//! The whole module is exhaustively cross-checked against SoftFloat on
//! randomised inputs by the crate's tests (`fast_paths_match_softfloat_*`).

use crate::FLAG_NX;

/// `|x|` bit pattern bounds: smallest normal and infinity.
const F32_MIN_NORMAL: u32 = 0x0080_0000;
const F32_INF: u32 = 0x7f80_0000;

/// Error-free sum (Knuth's TwoSum): `s + e == a + b` exactly, `s = RN(a+b)`,
/// valid as long as nothing overflows.
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// Veltkamp split of `a` into two 26-bit halves (`a == hi + lo`).
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    const C: f64 = 134_217_729.0; // 2^27 + 1
    let t = C * a;
    let hi = t - (t - a);
    (hi, a - hi)
}

/// Error-free product (Dekker's TwoProduct): `p + e == a * b` exactly,
/// `p = RN(a*b)`, valid when neither the split nor the error term overflows
/// or underflows (callers ensure moderate exponents).
#[inline(always)]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, e)
}

/// Rounds the binary64 value `s` (which is `RN64(x)` of some exact result
/// `x`; `exact` tells whether `s == x`) to binary32, returning the result and
/// NX when that is provably `RN32(x)` with no OF/UF, else `None`.
#[inline(always)]
fn narrow(s: f64, exact: bool) -> Option<(u32, u8)> {
    let r = s as f32;
    let rb = r.to_bits();
    let mag = rb & 0x7fff_ffff;
    if mag <= F32_MIN_NORMAL || mag >= F32_INF {
        // Zero, subnormal, the smallest normal (where tininess-after-rounding
        // needs care), infinity or NaN: only an exact zero is easy.
        return if mag == 0 && s == 0.0 && exact {
            Some((rb, 0))
        } else {
            None
        };
    }
    if exact {
        return Some((rb, if f64::from(r) == s { 0 } else { FLAG_NX }));
    }
    // `x` is not representable in binary64. If `s` is not a midpoint between
    // two adjacent binary32 values, no binary32 rounding boundary can lie
    // between `x` and `s` (it would be a binary64 number closer to `x` than
    // `s` is), so RN32(x) == RN32(s). (If `s` is a binary32 value, `x` is
    // within half a binary64 ulp of it and rounds to it too.) Here `s` is in
    // the binary32 normal range, so a binary32 ulp spans the low 29 binary64
    // fraction bits and midpoints have exactly the top one of them set.
    if s.to_bits() & 0x1fff_ffff == 0x1000_0000 {
        return None;
    }
    Some((rb, FLAG_NX))
}

/// binary32 `a + b`.
#[inline(always)]
pub(crate) fn f32_add(a: u32, b: u32) -> Option<(u32, u8)> {
    let (s, e) = two_sum(f64::from(f32::from_bits(a)), f64::from(f32::from_bits(b)));
    // NaN/inf operands give a non-finite `s`, which `narrow` rejects; two_sum
    // of finite binary32 values can't overflow in binary64.
    narrow(s, e == 0.0)
}

/// binary32 `a * b`: the product of two binary32 values is exact in binary64.
#[inline(always)]
pub(crate) fn f32_mul(a: u32, b: u32) -> Option<(u32, u8)> {
    let p = f64::from(f32::from_bits(a)) * f64::from(f32::from_bits(b));
    narrow(p, true)
}

/// binary32 `a / b`.
#[inline(always)]
pub(crate) fn f32_div(a: u32, b: u32) -> Option<(u32, u8)> {
    let a = f64::from(f32::from_bits(a));
    let b = f64::from(f32::from_bits(b));
    let r = (a / b) as f32;
    let rb = r.to_bits();
    let mag = rb & 0x7fff_ffff;
    if mag <= F32_MIN_NORMAL || mag >= F32_INF {
        // `a / b == 0` in binary64 only for `a == 0` (the quotient of two
        // finite binary32 values is >= 2^-277), which is exact -- but b could
        // also be 0 or NaN; require a finite, non-zero divisor.
        return if mag == 0 && a == 0.0 && b != 0.0 && b.is_finite() {
            Some((rb, 0))
        } else {
            None
        };
    }
    // Double rounding is innocuous for division. `r * b` (24 x 24 bits, no
    // overflow/underflow possible here) is exact in binary64.
    let nx = if f64::from(r) * b == a { 0 } else { FLAG_NX };
    Some((rb, nx))
}

/// binary32 `sqrt(a)`.
#[inline(always)]
pub(crate) fn f32_sqrt(a: u32) -> Option<(u32, u8)> {
    let a = f64::from(f32::from_bits(a));
    let r = a.sqrt() as f32;
    let rb = r.to_bits();
    let mag = rb & 0x7fff_ffff;
    if mag <= F32_MIN_NORMAL || mag >= F32_INF {
        // sqrt(±0) = ±0 exactly; everything else (negative -> NaN, +inf,
        // NaN) goes to SoftFloat. (sqrt of a subnormal is normal.)
        return if mag == 0 { Some((rb, 0)) } else { None };
    }
    // Innocuous double rounding; `r * r` is exact in binary64.
    let rr = f64::from(r);
    Some((rb, if rr * rr == a { 0 } else { FLAG_NX }))
}

/// binary32 fused `a * b + c`.
#[inline(always)]
pub(crate) fn f32_mul_add(a: u32, b: u32, c: u32) -> Option<(u32, u8)> {
    // The product is exact in binary64 (and never underflows/overflows there).
    let p = f64::from(f32::from_bits(a)) * f64::from(f32::from_bits(b));
    let (s, e) = two_sum(p, f64::from(f32::from_bits(c)));
    // An exact zero sum gets its sign from the host's IEEE addition, which
    // is the correct RNE sign of `p + c` with `p` an exact signed product.
    narrow(s, e == 0.0)
}

/// binary64 exponent gate for the Dekker-based paths: true when
/// `2^-450 <= |x| < 2^451`, so splits can't overflow and error terms can't
/// underflow.
#[inline(always)]
fn moderate(x: u64) -> bool {
    let exp = (x >> 52) & 0x7ff;
    (1023 - 450..=1023 + 450).contains(&exp)
}

const F64_INF: u64 = 0x7ff0_0000_0000_0000;

/// binary64 `a + b`. Sums of binary64 numbers that land in the subnormal
/// range (or near it) are always exact, so only overflow needs SoftFloat.
#[inline(always)]
pub(crate) fn f64_add(a: u64, b: u64) -> Option<(u64, u8)> {
    const LIMIT: u64 = 0x7fd0_0000_0000_0000; // 2^1022: no overflow inside two_sum
    if (a & !(1 << 63)) >= LIMIT || (b & !(1 << 63)) >= LIMIT {
        return None; // also rejects inf and NaN
    }
    let (s, e) = two_sum(f64::from_bits(a), f64::from_bits(b));
    Some((s.to_bits(), if e == 0.0 { 0 } else { FLAG_NX }))
}

/// binary64 `a * b`.
#[inline(always)]
pub(crate) fn f64_mul(a: u64, b: u64) -> Option<(u64, u8)> {
    let (fa, fb) = (f64::from_bits(a), f64::from_bits(b));
    if moderate(a) && moderate(b) {
        let (p, e) = two_prod(fa, fb);
        return Some((p.to_bits(), if e == 0.0 { 0 } else { FLAG_NX }));
    }
    // 0 * finite is an exact signed zero.
    if (fa == 0.0 && fb.is_finite()) || (fb == 0.0 && fa.is_finite()) {
        return Some(((fa * fb).to_bits(), 0));
    }
    None
}

/// binary64 `a / b`.
#[inline(always)]
pub(crate) fn f64_div(a: u64, b: u64) -> Option<(u64, u8)> {
    let (fa, fb) = (f64::from_bits(a), f64::from_bits(b));
    if moderate(a) && moderate(b) {
        let q = fa / fb;
        // The remainder a - q*b is exactly representable; with
        // (ph, pl) = TwoProduct(q, b), `a - ph` is exact (Sterbenz), so the
        // division is exact iff `a - ph == pl`. q*b ~ a keeps the error term
        // of TwoProduct clear of underflow.
        let (ph, pl) = two_prod(q, fb);
        return Some((q.to_bits(), if fa - ph == pl { 0 } else { FLAG_NX }));
    }
    if fa == 0.0 && fb != 0.0 && !fb.is_nan() {
        return Some(((fa / fb).to_bits(), 0));
    }
    None
}

/// binary64 `sqrt(a)`.
#[inline(always)]
pub(crate) fn f64_sqrt(a: u64) -> Option<(u64, u8)> {
    if a & !(1 << 63) == 0 {
        return Some((a, 0)); // sqrt(±0) = ±0
    }
    if a >> 63 != 0 || !moderate(a) {
        return None;
    }
    let r = f64::from_bits(a).sqrt();
    let (ph, pl) = two_prod(r, r);
    let exact = ph == f64::from_bits(a) && pl == 0.0;
    Some((r.to_bits(), if exact { 0 } else { FLAG_NX }))
}

/// Fast2Sum (Dekker): `s + e == a + b` exactly, `s = RN(a+b)`, when
/// `a == 0` or the exponent of `a` is at least that of `b`.
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// binary64 fused `a * b + c`: the host's correctly rounded `fma` for the
/// result, and Boldo and Muller's ErrFma ("Exact and approximated error of
/// the FMA", IEEE Trans. Computers 60(2), 2011) for NX: it gives `r2`, `r3`
/// with `a*b + c == r1 + r2 + r3` exactly, so the result is exact iff both
/// are zero. The gate keeps every quantity of the algorithm clear of
/// underflow and overflow: with `2^-450 <= |a|, |b|, |c| < 2^451` (or `c`
/// zero) every one is a multiple of 2^-1004 below 2^904, and a non-zero one
/// is normal.
#[inline(always)]
pub(crate) fn f64_mul_add(a: u64, b: u64, c: u64) -> Option<(u64, u8)> {
    if !(moderate(a) && moderate(b) && (moderate(c) || c & !(1 << 63) == 0)) {
        return None;
    }
    let (fa, fb, fc) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
    let r1 = fa.mul_add(fb, fc);
    let u1 = fa * fb;
    let u2 = fa.mul_add(fb, -u1);
    let (alpha1, alpha2) = two_sum(fc, u2);
    let (beta1, beta2) = two_sum(u1, alpha1);
    let gamma = (beta1 - r1) + beta2;
    let (r2, r3) = fast_two_sum(gamma, alpha2);
    let exact = r2 == 0.0 && r3 == 0.0;
    Some((r1.to_bits(), if exact { 0 } else { FLAG_NX }))
}

/// binary64 -> binary32.
#[inline(always)]
pub(crate) fn f64_to_f32(a: u64) -> Option<(u32, u8)> {
    let fa = f64::from_bits(a);
    if (a & !(1 << 63)) >= F64_INF {
        return None;
    }
    narrow(fa, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sum_and_two_prod_are_error_free() {
        let (s, e) = two_sum(1.0, 1e-30);
        assert_eq!(s, 1.0);
        assert_eq!(e, 1e-30);
        let x = 1.0 + f64::EPSILON;
        let (p, e) = two_prod(x, x);
        assert_eq!(p, 1.0 + 2.0 * f64::EPSILON);
        assert_eq!(e, f64::EPSILON * f64::EPSILON);
    }

    #[test]
    fn narrow_refuses_boundaries() {
        // 1 + 2^-24 is the midpoint between 1 and the next binary32.
        assert_eq!(narrow(1.0 + 2f64.powi(-24), false), None);
        assert_eq!(
            narrow(1.0 + 2f64.powi(-24), true),
            Some((0x3f80_0000, FLAG_NX))
        );
        assert_eq!(narrow(f64::from(f32::MIN_POSITIVE), true), None);
        assert_eq!(narrow(-0.0, true), Some((0x8000_0000, 0)));
        assert_eq!(narrow(1e300, true), None);
    }
}
