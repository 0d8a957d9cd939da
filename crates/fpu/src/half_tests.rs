//! Unit tests of the binary16 (Zfh) operations: hand-computed cases for
//! rounding, overflow, underflow and NaNs in every rounding mode, and
//! exhaustive or randomized cross-checks of the pure-Rust parts against
//! SoftFloat.

use crate::convert::reference;
use crate::*;

const NV: u8 = FLAG_NV;
const DZ: u8 = FLAG_DZ;
const OF: u8 = FLAG_OF;
const UF: u8 = FLAG_UF;
const NX: u8 = FLAG_NX;
const RMS: [u8; 5] = [RM_RNE, RM_RTZ, RM_RDN, RM_RUP, RM_RMM];

const H_ZERO: u16 = 0x0000;
const H_NZERO: u16 = 0x8000;
const H_ONE: u16 = 0x3c00;
const H_NONE: u16 = 0xbc00;
const H_TWO: u16 = 0x4000;
const H_THREE: u16 = 0x4200;
const H_MAX: u16 = 0x7bff; // 65504
const H_INF: u16 = 0x7c00;
const H_NINF: u16 = 0xfc00;
const H_QNAN: u16 = 0x7e00;
const H_SNAN: u16 = 0x7c01;
const H_MIN_SUB: u16 = 0x0001; // 2^-24
const H_MIN_NORMAL: u16 = 0x0400; // 2^-14

fn fl<R>(op: impl FnOnce(&mut u8) -> R) -> (R, u8) {
    let mut f = 0;
    let r = op(&mut f);
    (r, f)
}

#[test]
fn nan_boxing_of_halves() {
    assert_eq!(box_f16(H_ONE), 0xffff_ffff_ffff_3c00);
    assert_eq!(unbox_f16(box_f16(H_ONE)), H_ONE);
    assert_eq!(unbox_f16(0xffff_ffff_ffff_8000), H_NZERO);
    // A boxed single, a double, or a half with one upper bit clear: the
    // canonical NaN.
    assert_eq!(unbox_f16(box_f32(0x3f80_0000)), F16_CANONICAL_NAN);
    assert_eq!(unbox_f16(1f64.to_bits()), F16_CANONICAL_NAN);
    assert_eq!(unbox_f16(0xffff_ffff_fffe_3c00), F16_CANONICAL_NAN);
    assert_eq!(unbox_f16(0x7fff_ffff_ffff_3c00), F16_CANONICAL_NAN);
    // A boxed half is also a boxed single (a NaN with payload).
    assert_eq!(unbox_f32(box_f16(H_ONE)), 0xffff_3c00);
}

#[test]
fn one_third_in_every_rounding_mode() {
    // 1/3 = 1.0101010101|0101...b x 2^-2: the first dropped bit is 0.
    let want = [0x3555, 0x3555, 0x3555, 0x3556, 0x3555];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f16_div(H_ONE, H_THREE, rm, f)), (w, NX), "rm {rm}");
        let neg = w | 0x8000;
        let neg_want = if rm == RM_RDN {
            neg + 1
        } else if rm == RM_RUP {
            neg - 1
        } else {
            neg
        };
        assert_eq!(
            fl(|f| f16_div(H_NONE, H_THREE, rm, f)),
            (neg_want, NX),
            "rm {rm}"
        );
    }
}

#[test]
fn ties_and_exact_results() {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
    let half_ulp = 0x1000; // 2^-11
    let want = [H_ONE, H_ONE, H_ONE, 0x3c01, 0x3c01];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f16_add(H_ONE, half_ulp, rm, f)), (w, NX), "rm {rm}");
    }
    assert_eq!(fl(|f| f16_add(H_ONE, H_TWO, RM_RNE, f)), (H_THREE, 0));
    assert_eq!(fl(|f| f16_mul(H_TWO, H_THREE, RM_RTZ, f)), (0x4600, 0));
    assert_eq!(fl(|f| f16_sub(H_ONE, H_ONE, RM_RNE, f)), (H_ZERO, 0));
    // x - x is -0 only when rounding down.
    assert_eq!(fl(|f| f16_sub(H_ONE, H_ONE, RM_RDN, f)), (H_NZERO, 0));
    assert_eq!(fl(|f| f16_sqrt(0x4400, RM_RNE, f)), (H_TWO, 0));
}

#[test]
fn overflow_per_rounding_mode() {
    // 65504 + 16 = 65520 is the tie between 65504 and 2^16: it overflows
    // only when it rounds up (overflow is judged after rounding).
    let want = [
        (H_INF, OF | NX),
        (H_MAX, NX),
        (H_MAX, NX),
        (H_INF, OF | NX),
        (H_INF, OF | NX),
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f16_add(H_MAX, 0x4c00, rm, f)), w, "rm {rm}");
    }
    let want = [H_NINF, 0xfbff, H_NINF, 0xfbff, H_NINF];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(
            fl(|f| f16_mul(0xfbff, H_TWO, rm, f)),
            (w, OF | NX),
            "rm {rm}"
        );
    }
    assert_eq!(fl(|f| f16_div(H_ONE, H_ZERO, RM_RNE, f)), (H_INF, DZ));
    assert_eq!(fl(|f| f16_div(H_NONE, H_ZERO, RM_RNE, f)), (H_NINF, DZ));
}

#[test]
fn underflow_and_subnormals() {
    // Half the smallest subnormal: a tie between 0 and 2^-24.
    let half = 0x3800; // 0.5
    let want = [H_ZERO, H_ZERO, H_ZERO, H_MIN_SUB, H_MIN_SUB];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(
            fl(|f| f16_mul(H_MIN_SUB, half, rm, f)),
            (w, UF | NX),
            "rm {rm}"
        );
    }
    // Subnormal results that are exact raise nothing.
    assert_eq!(fl(|f| f16_mul(0x0002, half, RM_RNE, f)), (H_MIN_SUB, 0));
    assert_eq!(
        fl(|f| f16_sub(H_MIN_NORMAL, H_MIN_SUB, RM_RNE, f)),
        (0x03ff, 0)
    );
    // Tininess is detected after rounding: (largest subnormal) x (1 + 2^-10)
    // = 2^-14 (1 - 2^-20) rounds to the smallest normal when rounding up (no
    // UF), but stays subnormal when truncated (UF).
    let (r, f) = fl(|f| f16_mul(0x03ff, 0x3c01, RM_RUP, f));
    assert_eq!(r, H_MIN_NORMAL);
    assert_eq!(f, NX);
    let (r, f) = fl(|f| f16_mul(0x03ff, 0x3c01, RM_RTZ, f));
    assert_eq!((r, f), (0x03ff, UF | NX));
}

#[test]
fn nans_are_canonical_and_signal_only_when_they_should() {
    assert_eq!(fl(|f| f16_add(0xfe55, H_ONE, RM_RNE, f)), (H_QNAN, 0));
    assert_eq!(fl(|f| f16_add(H_SNAN, H_ONE, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(fl(|f| f16_sub(H_INF, H_INF, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(fl(|f| f16_mul(H_INF, H_ZERO, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(fl(|f| f16_div(H_ZERO, H_ZERO, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(fl(|f| f16_sqrt(H_NONE, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(fl(|f| f16_sqrt(H_NZERO, RM_RNE, f)), (H_NZERO, 0));
    assert_eq!(fl(|f| f16_sqrt(H_INF, RM_RNE, f)), (H_INF, 0));
    // inf x 0 + qNaN still raises NV.
    assert_eq!(
        fl(|f| f16_fmadd(H_INF, H_ZERO, H_QNAN, RM_RNE, f)),
        (H_QNAN, NV)
    );
}

#[test]
fn fused_multiply_add_family() {
    // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20: exact only when fused.
    let a = 0x3c01;
    let minus = 0xbc02; // -(1 + 2^-9)
    assert_eq!(fl(|f| f16_fmadd(a, a, minus, RM_RNE, f)), (0x0010, 0)); // 2^-20
    assert_eq!(
        fl(|f| f16_fmsub(H_TWO, H_THREE, H_ONE, RM_RNE, f)),
        (0x4500, 0)
    ); // 5
    assert_eq!(
        fl(|f| f16_fnmsub(H_TWO, H_THREE, H_ONE, RM_RNE, f)),
        (0xc500, 0)
    ); // -5
    assert_eq!(
        fl(|f| f16_fnmadd(H_TWO, H_THREE, H_ONE, RM_RNE, f)),
        (0xc700, 0)
    ); // -7
       // An exact zero sum is +0, or -0 when rounding down.
    assert_eq!(
        fl(|f| f16_fmadd(H_ONE, H_ONE, H_NONE, RM_RNE, f)),
        (H_ZERO, 0)
    );
    assert_eq!(
        fl(|f| f16_fmadd(H_ONE, H_ONE, H_NONE, RM_RDN, f)),
        (H_NZERO, 0)
    );
}

#[test]
fn classify_every_category() {
    let cases = [
        (H_NINF, 0),
        (H_NONE, 1),
        (0x8001, 2),
        (H_NZERO, 3),
        (H_ZERO, 4),
        (0x03ff, 5),
        (H_MAX, 6),
        (H_INF, 7),
        (H_SNAN, 8),
        (0xfdff, 8),
        (H_QNAN, 9),
        (0xffff, 9),
    ];
    for (v, bit) in cases {
        assert_eq!(f16_class(v), 1 << bit, "{v:#06x}");
    }
}

#[test]
fn sign_injection() {
    assert_eq!(f16_sgnj(H_ONE, H_NZERO), H_NONE);
    assert_eq!(f16_sgnjn(H_ONE, H_NZERO), H_ONE);
    assert_eq!(f16_sgnjx(H_NONE, H_NONE), H_ONE);
    // Sign injection never looks at NaN-ness.
    assert_eq!(f16_sgnj(H_SNAN, H_NONE), 0xfc01);
}

#[test]
fn widening_is_exact_and_canonicalizes_nans() {
    assert_eq!(
        fl(|f| f16_to_f32(H_MAX, RM_RNE, f)),
        (65504f32.to_bits(), 0)
    );
    assert_eq!(fl(|f| f16_to_f32(H_MIN_SUB, RM_RNE, f)), (0x3380_0000, 0));
    assert_eq!(fl(|f| f16_to_f32(H_NZERO, RM_RNE, f)), (0x8000_0000, 0));
    assert_eq!(
        fl(|f| f16_to_f32(0xfe12, RM_RNE, f)),
        (F32_CANONICAL_NAN, 0)
    );
    assert_eq!(
        fl(|f| f16_to_f32(H_SNAN, RM_RNE, f)),
        (F32_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f16_to_f64(H_SNAN, RM_RTZ, f)),
        (F64_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f16_to_f64(H_NINF, RM_RNE, f)),
        (f64::NEG_INFINITY.to_bits(), 0)
    );
    // Exhaustively: both widenings equal the exact value.
    for a in 0..=u16::MAX {
        if f16_is_nan(a) {
            continue;
        }
        let exact = crate::half::f16_to_host(a);
        assert_eq!(
            fl(|f| f16_to_f64(a, RM_RNE, f)),
            (exact.to_bits(), 0),
            "{a:#06x}"
        );
        assert_eq!(
            fl(|f| f16_to_f32(a, RM_RNE, f)),
            ((exact as f32).to_bits(), 0),
            "{a:#06x}"
        );
    }
}

#[test]
fn narrowing_rounds_per_mode() {
    // 65520 is the tie between 65504 and 2^16.
    let v = 65520f32.to_bits();
    let want = [
        (H_INF, OF | NX),
        (H_MAX, NX),
        (H_MAX, NX),
        (H_INF, OF | NX),
        (H_INF, OF | NX),
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f32_to_f16(v, rm, f)), w, "rm {rm}");
    }
    assert_eq!(
        fl(|f| f32_to_f16(1e6f32.to_bits(), RM_RTZ, f)),
        (H_MAX, OF | NX)
    );
    // 1 + 2^-11 + 2^-30: above the tie, rounds up in RNE.
    let v = 1f64 + 2f64.powi(-11) + 2f64.powi(-30);
    assert_eq!(fl(|f| f64_to_f16(v.to_bits(), RM_RNE, f)), (0x3c01, NX));
    assert_eq!(fl(|f| f64_to_f16(v.to_bits(), RM_RTZ, f)), (H_ONE, NX));
    assert_eq!(
        fl(|f| f64_to_f16(1e-10f64.to_bits(), RM_RNE, f)),
        (H_ZERO, UF | NX)
    );
    assert_eq!(
        fl(|f| f64_to_f16(1e-10f64.to_bits(), RM_RUP, f)),
        (H_MIN_SUB, UF | NX)
    );
    assert_eq!(fl(|f| f32_to_f16(0xffc1_2345, RM_RNE, f)), (H_QNAN, 0));
    assert_eq!(fl(|f| f32_to_f16(0x7f80_0001, RM_RNE, f)), (H_QNAN, NV));
    assert_eq!(
        fl(|f| f64_to_f16(F64_CANONICAL_NAN, RM_RNE, f)),
        (H_QNAN, 0)
    );
    assert_eq!(
        fl(|f| f32_to_f16(f32::NEG_INFINITY.to_bits(), RM_RTZ, f)),
        (H_NINF, 0)
    );
    // Round trip: every half survives widening and narrowing unchanged.
    for a in 0..=u16::MAX {
        if f16_is_nan(a) {
            continue;
        }
        let s = f16_to_f32(a, RM_RNE, &mut 0);
        let d = f16_to_f64(a, RM_RNE, &mut 0);
        for rm in RMS {
            assert_eq!(fl(|f| f32_to_f16(s, rm, f)), (a, 0), "{a:#06x}");
            assert_eq!(fl(|f| f64_to_f16(d, rm, f)), (a, 0), "{a:#06x}");
        }
    }
}

#[test]
fn to_integer_saturates_like_risc_v() {
    let m = |v: i64| v as u64;
    assert_eq!(fl(|f| f16_to_i32(H_INF, RM_RNE, f)), (0x7fff_ffff, NV));
    assert_eq!(fl(|f| f16_to_i32(H_NINF, RM_RNE, f)), (m(-0x8000_0000), NV));
    assert_eq!(fl(|f| f16_to_i32(H_QNAN, RM_RNE, f)), (0x7fff_ffff, NV));
    assert_eq!(fl(|f| f16_to_u32(H_NONE, RM_RNE, f)), (0, NV));
    assert_eq!(fl(|f| f16_to_u32(0xb800, RM_RTZ, f)), (0, NX)); // -0.5
    assert_eq!(fl(|f| f16_to_u32(H_INF, RM_RNE, f)), (u64::MAX, NV));
    assert_eq!(fl(|f| f16_to_i64(H_NINF, RM_RNE, f)), (1 << 63, NV));
    assert_eq!(fl(|f| f16_to_u64(H_MAX, RM_RNE, f)), (65504, 0));
    assert_eq!(fl(|f| f16_to_u64(H_QNAN, RM_RNE, f)), (u64::MAX, NV));
    // 2.5 and -2.5 per rounding mode.
    let want = [2, 2, 2, 3, 3];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f16_to_i64(0x4100, rm, f)), (w, NX), "rm {rm}");
    }
    let want = [-2, -2, -3, -2, -3];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f16_to_i32(0xc100, rm, f)), (m(w), NX), "rm {rm}");
    }
    // Exhaustively equal to SoftFloat's own conversions.
    for a in 0..=u16::MAX {
        for rm in RMS {
            assert_eq!(
                fl(|f| f16_to_i32(a, rm, f)),
                fl(|f| reference::f16_to_i32(a, rm, f)),
                "w {a:#06x} rm {rm}"
            );
            assert_eq!(
                fl(|f| f16_to_u32(a, rm, f)),
                fl(|f| reference::f16_to_u32(a, rm, f)),
                "wu {a:#06x} rm {rm}"
            );
            assert_eq!(
                fl(|f| f16_to_i64(a, rm, f)),
                fl(|f| reference::f16_to_i64(a, rm, f)),
                "l {a:#06x} rm {rm}"
            );
            assert_eq!(
                fl(|f| f16_to_u64(a, rm, f)),
                fl(|f| reference::f16_to_u64(a, rm, f)),
                "lu {a:#06x} rm {rm}"
            );
        }
    }
}

#[test]
fn from_integer_rounds_and_overflows() {
    // 2049 is the tie between 2048 and 2050 (11-bit significand).
    let want = [0x6800, 0x6800, 0x6800, 0x6801, 0x6801];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| i32_to_f16(2049, rm, f)), (w, NX), "rm {rm}");
    }
    assert_eq!(fl(|f| i32_to_f16(65504, RM_RNE, f)), (H_MAX, 0));
    assert_eq!(fl(|f| i32_to_f16(65520, RM_RNE, f)), (H_INF, OF | NX));
    assert_eq!(fl(|f| i32_to_f16(65520, RM_RTZ, f)), (H_MAX, NX));
    assert_eq!(fl(|f| i32_to_f16(65536, RM_RTZ, f)), (H_MAX, OF | NX));
    assert_eq!(fl(|f| i32_to_f16(u64::MAX, RM_RNE, f)), (H_NONE, 0)); // -1
                                                                      // Only the low 32 bits count for the W forms.
    assert_eq!(
        fl(|f| u32_to_f16(0xdead_0000_0000_0003, RM_RNE, f)),
        (H_THREE, 0)
    );
    assert_eq!(fl(|f| u32_to_f16(0xffff_ffff, RM_RNE, f)), (H_INF, OF | NX));
    assert_eq!(
        fl(|f| i64_to_f16(i64::MIN as u64, RM_RTZ, f)),
        (0xfbff, OF | NX)
    );
    assert_eq!(fl(|f| u64_to_f16(u64::MAX, RM_RUP, f)), (H_INF, OF | NX));
    assert_eq!(fl(|f| u64_to_f16(0, RM_RDN, f)), (H_ZERO, 0));
}

/// xorshift64*.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn spike_min_max_f16(a: u16, b: u16, max: bool, flags: &mut u8) -> u16 {
    let pick_a = if max {
        sf::cmp::f16_lt_quiet(b, a, flags) || (sf::cmp::f16_eq(b, a, flags) && b & 0x8000 != 0)
    } else {
        sf::cmp::f16_lt_quiet(a, b, flags) || (sf::cmp::f16_eq(a, b, flags) && a & 0x8000 != 0)
    };
    if f16_is_nan(a) && f16_is_nan(b) {
        F16_CANONICAL_NAN
    } else if pick_a || f16_is_nan(b) {
        a
    } else {
        b
    }
}

/// The generic comparisons, min/max and their Zfa variants agree with
/// SoftFloat's comparisons on random binary16 pairs (and on pairs of equal
/// magnitude, where signed zeros and ties matter).
#[test]
fn comparisons_and_min_max_match_softfloat() {
    let mut s = 0x05ee_df16_u64;
    for _ in 0..400_000 {
        let r = next(&mut s);
        let a = r as u16;
        let b = if r >> 60 == 0 {
            a ^ ((r >> 59) as u16 & 1) << 15
        } else {
            (r >> 16) as u16
        };
        assert_eq!(fl(|f| f16_eq(a, b, f)), fl(|f| sf::cmp::f16_eq(a, b, f)));
        assert_eq!(fl(|f| f16_lt(a, b, f)), fl(|f| sf::cmp::f16_lt(a, b, f)));
        assert_eq!(fl(|f| f16_le(a, b, f)), fl(|f| sf::cmp::f16_le(a, b, f)));
        assert_eq!(
            fl(|f| f16_lt_quiet(a, b, f)),
            fl(|f| sf::cmp::f16_lt_quiet(a, b, f))
        );
        assert_eq!(
            fl(|f| f16_le_quiet(a, b, f)),
            fl(|f| sf::cmp::f16_le_quiet(a, b, f))
        );
        for max in [false, true] {
            let (want, wf) = fl(|f| spike_min_max_f16(a, b, max, f));
            let (got, gf) = fl(|f| {
                if max {
                    f16_max(a, b, f)
                } else {
                    f16_min(a, b, f)
                }
            });
            assert_eq!((got, gf), (want, wf), "{a:#06x} {b:#06x} max {max}");
            // minm/maxm: the same unless a NaN is involved.
            let (m, mf) = fl(|f| {
                if max {
                    f16_maxm(a, b, f)
                } else {
                    f16_minm(a, b, f)
                }
            });
            if f16_is_nan(a) || f16_is_nan(b) {
                assert_eq!((m, mf), (F16_CANONICAL_NAN, wf), "{a:#06x} {b:#06x}");
            } else {
                assert_eq!((m, mf), (want, wf), "{a:#06x} {b:#06x}");
            }
        }
        // The binary32 and binary64 quiet comparisons too.
        let (x, y) = (next(&mut s) as u32, next(&mut s) as u32);
        assert_eq!(
            fl(|f| f32_lt_quiet(x, y, f)),
            fl(|f| sf::cmp::f32_lt_quiet(x, y, f))
        );
        assert_eq!(
            fl(|f| f32_le_quiet(x, y, f)),
            fl(|f| sf::cmp::f32_le_quiet(x, y, f))
        );
        let (x, y) = (next(&mut s), next(&mut s));
        assert_eq!(
            fl(|f| f64_lt_quiet(x, y, f)),
            fl(|f| sf::cmp::f64_lt_quiet(x, y, f))
        );
        assert_eq!(
            fl(|f| f64_le_quiet(x, y, f)),
            fl(|f| sf::cmp::f64_le_quiet(x, y, f))
        );
    }
}
