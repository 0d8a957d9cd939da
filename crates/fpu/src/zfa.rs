//! The Zfa extension: immediate loads (`fli`), IEEE 754-2019
//! minimum/maximum (`fminm`/`fmaxm`), round-to-integral (`fround`,
//! `froundnx`), the modular conversion `fcvtmod.w.d` and the quiet
//! comparisons `fltq`/`fleq`, for binary16, binary32 and binary64.

use crate::{rm_check, sf, F16_CANONICAL_NAN, F32_CANONICAL_NAN, F64_CANONICAL_NAN, RM_RTZ};

/// The `fli` constants by `rs1` index, as numbers. Entry 1 (the minimum
/// positive normal) and entry 31 (the canonical NaN) depend on the format
/// and are handled apart; `NAN` here is a placeholder.
const FLI_VALUES: [f64; 32] = [
    -1.0,
    f64::NAN, // minimum positive normal of the format
    1.0 / 65536.0,
    1.0 / 32768.0,
    1.0 / 256.0,
    1.0 / 128.0,
    0.0625,
    0.125,
    0.25,
    0.3125,
    0.375,
    0.4375,
    0.5,
    0.625,
    0.75,
    0.875,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    4.0,
    8.0,
    16.0,
    128.0,
    256.0,
    32768.0,
    65536.0,
    f64::INFINITY,
    f64::NAN, // canonical NaN of the format
];

/// `fli.h`'s table: entries 2 and 3 are subnormal in binary16 and entry 29
/// (2^16, beyond the largest half) is +infinity, as the specification says.
const FLI_F16: [u16; 32] = [
    0xbc00,
    0x0400,
    0x0100,
    0x0200,
    0x1c00,
    0x2000,
    0x2c00,
    0x3000,
    0x3400,
    0x3500,
    0x3600,
    0x3700,
    0x3800,
    0x3900,
    0x3a00,
    0x3b00,
    0x3c00,
    0x3d00,
    0x3e00,
    0x3f00,
    0x4000,
    0x4100,
    0x4200,
    0x4400,
    0x4800,
    0x4c00,
    0x5800,
    0x5c00,
    0x7800,
    0x7c00,
    0x7c00,
    F16_CANONICAL_NAN,
];

/// `fli.h`: the binary16 constant with index `rs1` (0..=31; higher bits are
/// ignored). Never raises a flag.
#[inline]
pub fn fli_f16(rs1: u8) -> u16 {
    FLI_F16[rs1 as usize & 31]
}

/// `fli.s`: the binary32 constant with index `rs1`. Never raises a flag.
#[inline]
pub fn fli_f32(rs1: u8) -> u32 {
    match rs1 & 31 {
        1 => 0x0080_0000,
        31 => F32_CANONICAL_NAN,
        // Every other entry is exactly representable in binary32.
        i => (FLI_VALUES[i as usize] as f32).to_bits(),
    }
}

/// `fli.d`: the binary64 constant with index `rs1`. Never raises a flag.
#[inline]
pub fn fli_f64(rs1: u8) -> u64 {
    match rs1 & 31 {
        1 => 0x0010_0000_0000_0000,
        31 => F64_CANONICAL_NAN,
        i => FLI_VALUES[i as usize].to_bits(),
    }
}

/// `fminm.h`: IEEE 754-2019 minimum: like `fmin.h`, but any NaN operand
/// gives the canonical NaN (NV if one is signalling).
#[inline]
pub fn f16_minm(a: u16, b: u16, flags: &mut u8) -> u16 {
    crate::min_max_nan_propagating(a, b, false, flags)
}

/// `fmaxm.h`: IEEE 754-2019 maximum (see [`f16_minm`]).
#[inline]
pub fn f16_maxm(a: u16, b: u16, flags: &mut u8) -> u16 {
    crate::min_max_nan_propagating(a, b, true, flags)
}

/// `fminm.s`: IEEE 754-2019 minimum (see [`f16_minm`]).
#[inline]
pub fn f32_minm(a: u32, b: u32, flags: &mut u8) -> u32 {
    crate::min_max_nan_propagating(a, b, false, flags)
}

/// `fmaxm.s`: IEEE 754-2019 maximum (see [`f16_minm`]).
#[inline]
pub fn f32_maxm(a: u32, b: u32, flags: &mut u8) -> u32 {
    crate::min_max_nan_propagating(a, b, true, flags)
}

/// `fminm.d`: IEEE 754-2019 minimum (see [`f16_minm`]).
#[inline]
pub fn f64_minm(a: u64, b: u64, flags: &mut u8) -> u64 {
    crate::min_max_nan_propagating(a, b, false, flags)
}

/// `fmaxm.d`: IEEE 754-2019 maximum (see [`f16_minm`]).
#[inline]
pub fn f64_maxm(a: u64, b: u64, flags: &mut u8) -> u64 {
    crate::min_max_nan_propagating(a, b, true, flags)
}

/// `fround.h`: rounds to an integral value per `rm`. Zeros and infinities
/// pass unchanged; a NaN gives the canonical NaN; NV only for a signalling
/// NaN, and never NX.
#[inline]
pub fn f16_round(a: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_round_to_int(a, rm_check(rm), false, flags)
}

/// `froundnx.h`: as [`f16_round`], and NX when the result differs from a
/// non-NaN input (IEEE 754 roundToIntegralExact).
#[inline]
pub fn f16_roundnx(a: u16, rm: u8, flags: &mut u8) -> u16 {
    sf::f16_round_to_int(a, rm_check(rm), true, flags)
}

/// `fround.s` (see [`f16_round`]).
#[inline]
pub fn f32_round(a: u32, rm: u8, flags: &mut u8) -> u32 {
    sf::f32_round_to_int(a, rm_check(rm), false, flags)
}

/// `froundnx.s` (see [`f16_roundnx`]).
#[inline]
pub fn f32_roundnx(a: u32, rm: u8, flags: &mut u8) -> u32 {
    sf::f32_round_to_int(a, rm_check(rm), true, flags)
}

/// `fround.d` (see [`f16_round`]).
#[inline]
pub fn f64_round(a: u64, rm: u8, flags: &mut u8) -> u64 {
    sf::f64_round_to_int(a, rm_check(rm), false, flags)
}

/// `froundnx.d` (see [`f16_roundnx`]).
#[inline]
pub fn f64_roundnx(a: u64, rm: u8, flags: &mut u8) -> u64 {
    sf::f64_round_to_int(a, rm_check(rm), true, flags)
}

/// `fcvtmod.w.d`: truncates towards zero and keeps bits 31:0 of the
/// unbounded two's-complement integer, sign-extended to 64 bits; infinities
/// and NaNs give 0. The flags are those `fcvt.w.d` with RTZ raises for the
/// same operand (NV out of range, else NX if inexact).
#[inline]
pub fn f64_to_i32_mod(a: u64, flags: &mut u8) -> u64 {
    let _ = crate::f64_to_i32(a, RM_RTZ, flags);
    let exp = ((a >> 52) & 0x7ff) as i32;
    if exp == 0x7ff || exp < 1023 {
        // Infinity, NaN, or |a| < 1.
        return 0;
    }
    let significand = (a & 0x000f_ffff_ffff_ffff) | 1 << 52;
    let shift = exp - 1023 - 52;
    // Only the low 32 bits survive, so wrapping modulo 2^64 is harmless.
    let magnitude = match shift {
        s if s >= 64 => 0,
        s if s >= 0 => significand << s,
        s => significand >> -s,
    };
    let value = if a >> 63 != 0 {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    value as u32 as i32 as i64 as u64
}

/// `fltq.h`: `a < b` without NV for quiet NaNs (NV only for signalling).
#[inline]
pub fn f16_lt_quiet(a: u16, b: u16, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, false, flags)
}

/// `fleq.h`: `a <= b` without NV for quiet NaNs (NV only for signalling).
#[inline]
pub fn f16_le_quiet(a: u16, b: u16, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, true, flags)
}

/// `fltq.s` (see [`f16_lt_quiet`]).
#[inline]
pub fn f32_lt_quiet(a: u32, b: u32, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, false, flags)
}

/// `fleq.s` (see [`f16_le_quiet`]).
#[inline]
pub fn f32_le_quiet(a: u32, b: u32, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, true, flags)
}

/// `fltq.d` (see [`f16_lt_quiet`]).
#[inline]
pub fn f64_lt_quiet(a: u64, b: u64, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, false, flags)
}

/// `fleq.d` (see [`f16_le_quiet`]).
#[inline]
pub fn f64_le_quiet(a: u64, b: u64, flags: &mut u8) -> bool {
    crate::lt_le_quiet(a, b, true, flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn fl<R>(op: impl FnOnce(&mut u8) -> R) -> (R, u8) {
        let mut f = 0;
        let r = op(&mut f);
        (r, f)
    }

    /// The tables match the specification's values: each entry converted
    /// from its exact value with SoftFloat (round to nearest), entry 1 the
    /// format's smallest normal and entry 31 its canonical NaN.
    #[test]
    fn fli_tables_match_the_specification() {
        for i in 0..32u8 {
            let v = FLI_VALUES[i as usize];
            let (h, s, d) = (fli_f16(i), fli_f32(i), fli_f64(i));
            match i {
                1 => {
                    assert_eq!((h, s, d), (0x0400, 0x0080_0000, 0x0010_0000_0000_0000));
                }
                31 => assert_eq!((h, s, d), (0x7e00, 0x7fc0_0000, 0x7ff8_0000_0000_0000)),
                _ => {
                    assert_eq!(d, v.to_bits(), "fli.d {i}");
                    let (s_ref, s_flags) = fl(|f| crate::f64_to_f32(d, RM_RNE, f));
                    assert_eq!((s, s_flags), (s_ref, 0), "fli.s {i}");
                    let (h_ref, h_flags) = fl(|f| f64_to_f16(d, RM_RNE, f));
                    assert_eq!(h, h_ref, "fli.h {i}");
                    // Only 2^16 does not fit: it overflows to +inf.
                    let want = if i == 29 { FLAG_OF | FLAG_NX } else { 0 };
                    assert_eq!(h_flags, want, "fli.h {i}");
                }
            }
        }
        // Spot checks straight from the specification's table.
        assert_eq!(fli_f32(0), 0xbf80_0000); // -1.0
        assert_eq!(fli_f32(2), 0x3780_0000); // 2^-16: exponent 01101111
        assert_eq!(fli_f32(9), 0x3ea0_0000); // 0.3125
        assert_eq!(fli_f32(29), 0x4780_0000); // 2^16: exponent 10001111
        assert_eq!(fli_f32(30), 0x7f80_0000);
        assert_eq!(fli_f16(2), 0x0100); // subnormal 2^-16
        assert_eq!(fli_f16(29), 0x7c00); // +inf, as entry 30
        assert!(fli_f16(1) > fli_f16(3)); // "entry 1 is greater than 2 and 3"
        assert_eq!(fli_f64(28), 32768f64.to_bits());
        // Only the low five bits of the index matter.
        assert_eq!(fli_f64(16 | 32), 1f64.to_bits());
    }

    #[test]
    fn minm_maxm_propagate_nan() {
        const QNAN: u32 = 0x7fc0_0000;
        const SNAN: u32 = 0x7f80_0001;
        let one = 1f32.to_bits();
        // Unlike fmin/fmax, one NaN operand gives the canonical NaN.
        assert_eq!(fl(|f| f32_min(QNAN, one, f)), (one, 0));
        assert_eq!(fl(|f| f32_minm(QNAN, one, f)), (QNAN, 0));
        assert_eq!(fl(|f| f32_maxm(one, 0xffc1_2345, f)), (QNAN, 0));
        assert_eq!(fl(|f| f32_maxm(one, SNAN, f)), (QNAN, FLAG_NV));
        assert_eq!(fl(|f| f32_minm(SNAN, QNAN, f)), (QNAN, FLAG_NV));
        // Ordinary operands and signed zeros behave as fmin/fmax.
        assert_eq!(fl(|f| f32_minm(0x8000_0000, 0, f)), (0x8000_0000, 0));
        assert_eq!(fl(|f| f32_maxm(0x8000_0000, 0, f)), (0, 0));
        assert_eq!(fl(|f| f32_minm(one, 2f32.to_bits(), f)), (one, 0));
        let (d1, d2) = (1f64.to_bits(), (-2f64).to_bits());
        assert_eq!(fl(|f| f64_minm(d1, d2, f)), (d2, 0));
        assert_eq!(fl(|f| f64_maxm(d1, d2, f)), (d1, 0));
        assert_eq!(
            fl(|f| f64_maxm(d1, 0x7ff0_0000_0000_0001, f)),
            (F64_CANONICAL_NAN, FLAG_NV)
        );
        assert_eq!(fl(|f| f16_minm(0x3c00, 0xc000, f)), (0xc000, 0));
        assert_eq!(fl(|f| f16_maxm(0x3c00, 0x7e00, f)), (0x7e00, 0));
        assert_eq!(fl(|f| f16_maxm(0x7c01, 0x3c00, f)), (0x7e00, FLAG_NV));
        assert_eq!(fl(|f| f16_minm(0x8000, 0x0000, f)), (0x8000, 0));
    }

    #[test]
    fn fround_flags_follow_the_specification() {
        let rms = [RM_RNE, RM_RTZ, RM_RDN, RM_RUP, RM_RMM];
        // 2.5 in each mode: 2, 2, 2, 3, 3.
        let want = [2.0f64, 2.0, 2.0, 3.0, 3.0];
        for (&rm, &w) in rms.iter().zip(&want) {
            assert_eq!(fl(|f| f64_round(2.5f64.to_bits(), rm, f)), (w.to_bits(), 0));
            assert_eq!(
                fl(|f| f64_roundnx(2.5f64.to_bits(), rm, f)),
                (w.to_bits(), FLAG_NX)
            );
            assert_eq!(
                fl(|f| f32_round((-2.5f32).to_bits(), rm, f)),
                ((-[2.0f32, 2.0, 3.0, 2.0, 3.0][rm as usize]).to_bits(), 0)
            );
            // binary16 2.5 = 0x4100.
            let h = [0x4000u16, 0x4000, 0x4000, 0x4200, 0x4200][rm as usize];
            assert_eq!(fl(|f| f16_round(0x4100, rm, f)), (h, 0));
            assert_eq!(fl(|f| f16_roundnx(0x4100, rm, f)), (h, FLAG_NX));
        }
        // Integral inputs: no flag even for froundnx.
        assert_eq!(
            fl(|f| f32_roundnx(3f32.to_bits(), RM_RNE, f)),
            (3f32.to_bits(), 0)
        );
        // Small magnitudes keep their sign: -0.3 rounds to -0.
        assert_eq!(
            fl(|f| f64_roundnx((-0.3f64).to_bits(), RM_RNE, f)),
            (1 << 63, FLAG_NX)
        );
        assert_eq!(
            fl(|f| f64_round((-0.3f64).to_bits(), RM_RUP, f)),
            (1 << 63, 0)
        );
        // Zeros and infinities are copied unmodified.
        for rm in rms {
            for v in [0u64, 1 << 63, 0x7ff0_0000_0000_0000, 0xfff0_0000_0000_0000] {
                assert_eq!(fl(|f| f64_roundnx(v, rm, f)), (v, 0));
            }
            assert_eq!(fl(|f| f16_roundnx(0xfc00, rm, f)), (0xfc00, 0));
        }
        // NaNs: canonical NaN; NV only for a signalling NaN, for both forms.
        assert_eq!(
            fl(|f| f32_round(0xffc1_2345, RM_RNE, f)),
            (F32_CANONICAL_NAN, 0)
        );
        assert_eq!(
            fl(|f| f32_roundnx(0x7fc0_0001, RM_RNE, f)),
            (F32_CANONICAL_NAN, 0)
        );
        assert_eq!(
            fl(|f| f32_round(0x7f80_0001, RM_RNE, f)),
            (F32_CANONICAL_NAN, FLAG_NV)
        );
        assert_eq!(
            fl(|f| f64_roundnx(0x7ff0_0000_0000_0001, RM_RTZ, f)),
            (F64_CANONICAL_NAN, FLAG_NV)
        );
        assert_eq!(
            fl(|f| f16_round(0x7c01, RM_RNE, f)),
            (F16_CANONICAL_NAN, FLAG_NV)
        );
        // Subnormals round to zero or one unit.
        assert_eq!(fl(|f| f64_roundnx(1, RM_RUP, f)), (1f64.to_bits(), FLAG_NX));
        assert_eq!(fl(|f| f64_roundnx(1, RM_RDN, f)), (0, FLAG_NX));
        assert_eq!(fl(|f| f16_roundnx(0x8001, RM_RDN, f)), (0xbc00, FLAG_NX));
    }

    /// `fround`/`froundnx` agree with the host's exact rounding functions on
    /// random binary32 and binary64 operands in every rounding mode.
    #[test]
    fn fround_matches_host_rounding() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let host = |v: f64, rm: u8| match rm {
            RM_RTZ => v.trunc(),
            RM_RDN => v.floor(),
            RM_RUP => v.ceil(),
            RM_RMM => v.round(),
            _ => v.round_ties_even(),
        };
        for _ in 0..100_000 {
            let r = next();
            // Exponents around the integral threshold make most cases
            // non-trivial.
            let d = (r & 0x800f_ffff_ffff_ffff) | (1023 - 4 + (r >> 52) % 60) << 52;
            let s = ((r as u32) & 0x807f_ffff) | ((127 - 4 + (r >> 40) as u32 % 30) << 23);
            for rm in [RM_RNE, RM_RTZ, RM_RDN, RM_RUP, RM_RMM] {
                let dv = f64::from_bits(d);
                let want = host(dv, rm);
                let nx = if want != dv { FLAG_NX } else { 0 };
                assert_eq!(fl(|f| f64_round(d, rm, f)), (want.to_bits(), 0), "{d:#x}");
                assert_eq!(
                    fl(|f| f64_roundnx(d, rm, f)),
                    (want.to_bits(), nx),
                    "{d:#x}"
                );
                let sv = f32::from_bits(s);
                let want = host(f64::from(sv), rm) as f32;
                let nx = if want != sv { FLAG_NX } else { 0 };
                assert_eq!(fl(|f| f32_round(s, rm, f)), (want.to_bits(), 0), "{s:#x}");
                assert_eq!(
                    fl(|f| f32_roundnx(s, rm, f)),
                    (want.to_bits(), nx),
                    "{s:#x}"
                );
            }
        }
    }

    #[test]
    fn fcvtmod_is_modular_with_fcvt_flags() {
        let d = |v: f64| v.to_bits();
        let cases: &[(u64, u64, u8)] = &[
            (d(0.0), 0, 0),
            (d(-0.0), 0, 0),
            (d(1.5), 1, FLAG_NX),
            (d(-1.5), (-1i64) as u64, FLAG_NX),
            (d(0.75), 0, FLAG_NX),
            (1, 0, FLAG_NX), // smallest subnormal
            (d(2147483647.0), 0x7fff_ffff, 0),
            (d(-2147483648.0), 0xffff_ffff_8000_0000, 0),
            (d(-2147483648.75), 0xffff_ffff_8000_0000, FLAG_NX),
            // Out of range: the low 32 bits, NV, and no NX even if inexact.
            (d(2147483648.0), 0xffff_ffff_8000_0000, FLAG_NV),
            (d(4294967296.0 + 5.0), 5, FLAG_NV),
            (d(4294967296.0 + 5.5), 5, FLAG_NV),
            (d(-4294967301.0), (-5i64) as u64, FLAG_NV),
            (d(1e300), 0, FLAG_NV),
            (d(2f64.powi(52) + 7.0), 7, FLAG_NV),
            (
                d(2f64.powi(62) + 2f64.powi(31)),
                0xffff_ffff_8000_0000,
                FLAG_NV,
            ),
            (d(f64::INFINITY), 0, FLAG_NV),
            (d(f64::NEG_INFINITY), 0, FLAG_NV),
            (F64_CANONICAL_NAN, 0, FLAG_NV),
            (0x7ff0_0000_0000_0001, 0, FLAG_NV),
        ];
        for &(a, want, flags) in cases {
            assert_eq!(fl(|f| f64_to_i32_mod(a, f)), (want, flags), "{a:#x}");
        }
        // In range it agrees with fcvt.w.d, rtz, on random operands.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x & 0x800f_ffff_ffff_ffff) | (1023 - 2 + (x >> 52) % 40) << 52;
            let (r, f) = fl(|f| f64_to_i32_mod(a, f));
            let (w, wf) = fl(|f| crate::f64_to_i32(a, RM_RTZ, f));
            assert_eq!(f, wf, "{a:#x}");
            if wf & FLAG_NV == 0 {
                assert_eq!(r, w, "{a:#x}");
            } else {
                let v = f64::from_bits(a).trunc();
                assert_eq!(
                    r as u32,
                    (v.rem_euclid(4294967296.0)) as u64 as u32,
                    "{a:#x}"
                );
            }
        }
    }

    #[test]
    fn quiet_comparisons() {
        const QNAN: u32 = 0x7fc0_0000;
        const SNAN: u32 = 0x7f80_0001;
        let one = 1f32.to_bits();
        // flt/fle signal on quiet NaNs; fltq/fleq do not.
        assert_eq!(fl(|f| f32_lt(QNAN, one, f)), (false, FLAG_NV));
        assert_eq!(fl(|f| f32_lt_quiet(QNAN, one, f)), (false, 0));
        assert_eq!(fl(|f| f32_le_quiet(one, QNAN, f)), (false, 0));
        assert_eq!(fl(|f| f32_le_quiet(one, SNAN, f)), (false, FLAG_NV));
        assert_eq!(fl(|f| f32_le_quiet(0x8000_0000, 0, f)), (true, 0));
        assert_eq!(fl(|f| f32_lt_quiet(0x8000_0000, 0, f)), (false, 0));
        assert_eq!(
            fl(|f| f64_lt_quiet(1f64.to_bits(), 2f64.to_bits(), f)),
            (true, 0)
        );
        assert_eq!(
            fl(|f| f64_le_quiet(F64_CANONICAL_NAN, 2f64.to_bits(), f)),
            (false, 0)
        );
        assert_eq!(fl(|f| f16_lt_quiet(0xbc00, 0x3c00, f)), (true, 0));
        assert_eq!(fl(|f| f16_le_quiet(0x7e00, 0x3c00, f)), (false, 0));
        assert_eq!(fl(|f| f16_le_quiet(0x7d00, 0x3c00, f)), (false, FLAG_NV));
    }
}
