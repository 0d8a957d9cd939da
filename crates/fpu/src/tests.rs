//! Unit tests: hand-picked tricky cases per operation, plus randomized
//! differential tests of the host fast paths and pure-Rust operations against
//! SoftFloat. Constants marked "qemu" were confirmed by running the real
//! instruction under `qemu-riscv64` (they are also part of `ref_vectors.txt`).

use crate::*;

const NV: u8 = FLAG_NV;
const DZ: u8 = FLAG_DZ;
const OF: u8 = FLAG_OF;
const UF: u8 = FLAG_UF;
const NX: u8 = FLAG_NX;
const RMS: [u8; 5] = [RM_RNE, RM_RTZ, RM_RDN, RM_RUP, RM_RMM];

// binary32 constants
const S_ZERO: u32 = 0x0000_0000;
const S_NZERO: u32 = 0x8000_0000;
const S_ONE: u32 = 0x3f80_0000;
const S_NONE: u32 = 0xbf80_0000;
const S_TWO: u32 = 0x4000_0000;
const S_THREE: u32 = 0x4040_0000;
const S_INF: u32 = 0x7f80_0000;
const S_NINF: u32 = 0xff80_0000;
const S_MAX: u32 = 0x7f7f_ffff;
const S_MIN_NORMAL: u32 = 0x0080_0000;
const S_QNAN: u32 = 0x7fc0_0000;
const S_QNAN_PAYLOAD: u32 = 0xffc1_2345;
const S_SNAN: u32 = 0x7f80_0001;
const S_NSNAN: u32 = 0xff81_2345;

// binary64 constants
const D_ZERO: u64 = 0;
const D_NZERO: u64 = 1 << 63;
const D_ONE: u64 = 0x3ff0_0000_0000_0000;
const D_NONE: u64 = 0xbff0_0000_0000_0000;
const D_TWO: u64 = 0x4000_0000_0000_0000;
const D_THREE: u64 = 0x4008_0000_0000_0000;
const D_INF: u64 = 0x7ff0_0000_0000_0000;
const D_NINF: u64 = 0xfff0_0000_0000_0000;
const D_MAX: u64 = 0x7fef_ffff_ffff_ffff;
const D_QNAN: u64 = 0x7ff8_0000_0000_0000;
const D_QNAN_PAYLOAD: u64 = 0xfff8_0000_0001_2345;
const D_SNAN: u64 = 0x7ff0_0000_0000_0001;

type Bin32 = fn(u32, u32, u8, &mut u8) -> u32;
type Bin64 = fn(u64, u64, u8, &mut u8) -> u64;

fn s(x: f32) -> u32 {
    x.to_bits()
}
fn d(x: f64) -> u64 {
    x.to_bits()
}

/// Runs `op` with a fresh flag accumulator, returning (result, flags).
fn fl<R>(op: impl FnOnce(&mut u8) -> R) -> (R, u8) {
    let mut f = 0;
    let r = op(&mut f);
    (r, f)
}

// ----------------------------------------------------------- the C library

/// The `riscv` feature of softfloat-sys must select SoftFloat's RISCV
/// specialization; the default x86 (8086-SSE) one would produce the negative
/// default NaN 0xffc00000, propagate NaN payloads and saturate differently.
#[test]
fn softfloat_uses_the_riscv_specialization() {
    assert_eq!(fl(|f| sf::f32_div(0, 0, RM_RNE, f)), (0x7fc0_0000, NV));
    assert_eq!(
        fl(|f| sf::f64_sub(D_INF, D_INF, RM_RNE, f)),
        (0x7ff8_0000_0000_0000, NV)
    );
    assert_eq!(
        fl(|f| sf::f32_add(S_QNAN_PAYLOAD, S_ONE, RM_RTZ, f)),
        (0x7fc0_0000, 0)
    );
    assert_eq!(
        fl(|f| sf::f64_mul(D_QNAN_PAYLOAD, D_ONE, RM_RTZ, f)),
        (D_QNAN, 0)
    );
    assert_eq!(
        fl(|f| sf::f32_to_i32(S_QNAN_PAYLOAD, RM_RNE, f)),
        (i32::MAX, NV)
    );
    assert_eq!(fl(|f| sf::f64_to_ui32(D_NINF, RM_RNE, f)), (0, NV));
    assert_eq!(
        fl(|f| sf::f64_to_ui64(D_QNAN_PAYLOAD, RM_RNE, f)),
        (u64::MAX, NV)
    );
    assert_eq!(fl(|f| sf::f64_to_i64(D_NINF, RM_RNE, f)), (i64::MIN, NV));
}

// ---------------------------------------------------------------- NaN-boxing

#[test]
fn nan_boxing() {
    assert_eq!(box_f32(0x3f80_0000), 0xffff_ffff_3f80_0000);
    assert_eq!(box_f32(0), 0xffff_ffff_0000_0000);
    assert_eq!(unbox_f32(0xffff_ffff_3f80_0000), 0x3f80_0000);
    assert_eq!(unbox_f32(0xffff_ffff_7f80_0001), 0x7f80_0001); // boxed sNaN stays
                                                               // qemu: anything not boxed reads as the canonical NaN
    for v in [
        0x3f80_0000,
        0xffff_fffe_3f80_0000,
        0x7fff_ffff_3f80_0000,
        D_ONE,
        0,
    ] {
        assert_eq!(unbox_f32(v), F32_CANONICAL_NAN, "{v:#x}");
    }
    // An improperly boxed operand behaves as a (quiet) NaN in arithmetic.
    let (r, f) = fl(|f| f32_add(unbox_f32(D_ONE), S_ONE, RM_RNE, f));
    assert_eq!((r, f), (F32_CANONICAL_NAN, 0));
    assert_eq!(f32_class(unbox_f32(0x1234)), 1 << 9);
}

// ------------------------------------------------------------ rounding modes

#[test]
fn one_third_in_every_rounding_mode() {
    // binary64: 1/3 = 0x3fd5555555555555 rounded down, ...556 rounded up
    let want = [
        0x3fd5_5555_5555_5555,
        0x3fd5_5555_5555_5555,
        0x3fd5_5555_5555_5555,
        0x3fd5_5555_5555_5556,
        0x3fd5_5555_5555_5555,
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f64_div(D_ONE, D_THREE, rm, f)), (w, NX), "rm {rm}");
    }
    // -1/3: RDN and RUP swap roles
    let (r, f) = fl(|f| f64_div(D_NONE, D_THREE, RM_RDN, f));
    assert_eq!((r, f), (0xbfd5_5555_5555_5556, NX));
    let (r, f) = fl(|f| f64_div(D_NONE, D_THREE, RM_RUP, f));
    assert_eq!((r, f), (0xbfd5_5555_5555_5555, NX));
    // binary32: 1/3 = 0x3eaaaaab in RNE/RUP/RMM, ...aa in RTZ/RDN
    let want = [
        0x3eaa_aaab,
        0x3eaa_aaaa,
        0x3eaa_aaaa,
        0x3eaa_aaab,
        0x3eaa_aaab,
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f32_div(S_ONE, S_THREE, rm, f)), (w, NX), "rm {rm}");
    }
}

#[test]
fn add_rounding_and_sign_of_zero() {
    // 1 + 2^-24 is a tie in binary32: even (1.0) for RNE, up for RMM/RUP.
    let tiny = s(2f32.powi(-24));
    let want = [S_ONE, S_ONE, S_ONE, 0x3f80_0001, 0x3f80_0001];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f32_add(S_ONE, tiny, rm, f)), (w, NX), "rm {rm}");
    }
    // x - x is +0, except -0 in RDN; -0 + -0 = -0 always.
    for rm in RMS {
        let z = if rm == RM_RDN { S_NZERO } else { S_ZERO };
        assert_eq!(fl(|f| f32_sub(S_THREE, S_THREE, rm, f)), (z, 0));
        let z = if rm == RM_RDN { D_NZERO } else { D_ZERO };
        assert_eq!(fl(|f| f64_add(D_ONE, D_NONE, rm, f)), (z, 0));
        assert_eq!(fl(|f| f64_add(D_NZERO, D_NZERO, rm, f)), (D_NZERO, 0));
        assert_eq!(
            fl(|f| f32_add(S_NZERO, S_ZERO, rm, f)),
            (if rm == RM_RDN { S_NZERO } else { S_ZERO }, 0)
        );
    }
}

#[test]
fn mul_rounding() {
    // (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46
    let a = 0x3f80_0001;
    let want = [
        0x3f80_0002,
        0x3f80_0002,
        0x3f80_0002,
        0x3f80_0003,
        0x3f80_0002,
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f32_mul(a, a, rm, f)), (w, NX));
    }
    let a = 0x3ff0_0000_0000_0001;
    let want = [
        0x3ff0_0000_0000_0002,
        0x3ff0_0000_0000_0002,
        0x3ff0_0000_0000_0002,
        0x3ff0_0000_0000_0003,
        0x3ff0_0000_0000_0002,
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f64_mul(a, a, rm, f)), (w, NX));
    }
    assert_eq!(fl(|f| f64_mul(D_THREE, D_NONE, RM_RNE, f)), (d(-3.0), 0));
    assert_eq!(fl(|f| f64_mul(D_NZERO, D_THREE, RM_RNE, f)), (D_NZERO, 0));
}

// ----------------------------------------------------- overflow / underflow

#[test]
fn overflow_per_rounding_mode() {
    // qemu: MAX * 2 overflows to inf or to MAX depending on rm and sign.
    let pos = [S_INF, S_MAX, S_MAX, S_INF, S_INF];
    let neg = [S_NINF, S_MAX | 1 << 31, S_NINF, S_MAX | 1 << 31, S_NINF];
    for i in 0..5 {
        assert_eq!(fl(|f| f32_mul(S_MAX, S_TWO, RMS[i], f)), (pos[i], OF | NX));
        assert_eq!(
            fl(|f| f32_mul(S_MAX | 1 << 31, S_TWO, RMS[i], f)),
            (neg[i], OF | NX)
        );
    }
    assert_eq!(fl(|f| f64_add(D_MAX, D_MAX, RM_RNE, f)), (D_INF, OF | NX));
    assert_eq!(fl(|f| f64_add(D_MAX, D_MAX, RM_RTZ, f)), (D_MAX, OF | NX));
    // qemu: fcvt.s.d of the largest double overflows
    assert_eq!(fl(|f| f64_to_f32(D_MAX, RM_RNE, f)), (S_INF, OF | NX));
    assert_eq!(fl(|f| f64_to_f32(D_MAX, RM_RTZ, f)), (S_MAX, OF | NX));
    // Infinity arithmetic itself raises nothing.
    assert_eq!(fl(|f| f32_add(S_INF, S_ONE, RM_RNE, f)), (S_INF, 0));
}

#[test]
fn underflow_tininess_after_rounding() {
    // Exact subnormal results raise nothing.
    assert_eq!(
        fl(|f| f32_mul(S_MIN_NORMAL, s(0.5), RM_RNE, f)),
        (0x0040_0000, 0)
    );
    assert_eq!(
        fl(|f| f64_mul(0x0010_0000_0000_0000, d(0.5), RM_RNE, f)),
        (0x0008_0000_0000_0000, 0)
    );
    // qemu: 2^-126 * (1 - 2^-24) = 2^-126 - 2^-150 rounds to 2^-126 but is
    // tiny even after rounding with unbounded exponent: UF|NX.
    assert_eq!(
        fl(|f| f32_mul(S_MIN_NORMAL, 0x3f7f_ffff, RM_RNE, f)),
        (S_MIN_NORMAL, UF | NX)
    );
    assert_eq!(
        fl(|f| f32_mul(S_MIN_NORMAL, 0x3f7f_ffff, RM_RTZ, f)),
        (0x007f_ffff, UF | NX)
    );
    // qemu: 2^-126 - 2^-151 rounds (unbounded) to 2^-126: not tiny, NX only
    // in RNE, but tiny in RTZ.
    assert_eq!(
        fl(|f| f64_to_f32(0x380f_ffff_f000_0000, RM_RNE, f)),
        (S_MIN_NORMAL, NX)
    );
    assert_eq!(
        fl(|f| f64_to_f32(0x380f_ffff_f000_0000, RM_RTZ, f)),
        (0x007f_ffff, UF | NX)
    );
    assert_eq!(
        fl(|f| f64_to_f32(0x380f_ffff_e000_0000, RM_RNE, f)),
        (S_MIN_NORMAL, UF | NX)
    );
    // Flush to zero from far below.
    assert_eq!(fl(|f| f32_mul(1, s(0.25), RM_RNE, f)), (0, UF | NX));
    assert_eq!(fl(|f| f32_mul(1, s(0.25), RM_RUP, f)), (1, UF | NX));
    assert_eq!(fl(|f| f64_mul(1, d(-0.25), RM_RNE, f)), (D_NZERO, UF | NX));
    assert_eq!(
        fl(|f| f64_mul(1, d(-0.25), RM_RDN, f)),
        (D_NZERO | 1, UF | NX)
    );
}

// ------------------------------------------------------------------ division

#[test]
fn division_special_cases() {
    assert_eq!(fl(|f| f32_div(S_ONE, S_ZERO, RM_RNE, f)), (S_INF, DZ));
    assert_eq!(fl(|f| f32_div(S_ONE, S_NZERO, RM_RNE, f)), (S_NINF, DZ));
    assert_eq!(fl(|f| f64_div(D_NONE, D_ZERO, RM_RTZ, f)), (D_NINF, DZ));
    assert_eq!(
        fl(|f| f32_div(S_ZERO, S_ZERO, RM_RNE, f)),
        (F32_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f64_div(D_INF, D_INF, RM_RNE, f)),
        (F64_CANONICAL_NAN, NV)
    );
    assert_eq!(fl(|f| f64_div(D_INF, D_ZERO, RM_RNE, f)), (D_INF, 0));
    assert_eq!(fl(|f| f64_div(D_ONE, D_INF, RM_RNE, f)), (D_ZERO, 0));
    assert_eq!(fl(|f| f32_div(S_NZERO, S_THREE, RM_RNE, f)), (S_NZERO, 0));
    assert_eq!(fl(|f| f64_div(d(6.0), D_THREE, RM_RNE, f)), (D_TWO, 0));
}

// ---------------------------------------------------------------------- sqrt

#[test]
fn sqrt_special_cases() {
    for rm in RMS {
        assert_eq!(fl(|f| f32_sqrt(S_NONE, rm, f)), (F32_CANONICAL_NAN, NV));
        assert_eq!(fl(|f| f64_sqrt(D_NONE, rm, f)), (F64_CANONICAL_NAN, NV));
        assert_eq!(fl(|f| f64_sqrt(D_NINF, rm, f)), (F64_CANONICAL_NAN, NV));
        assert_eq!(fl(|f| f32_sqrt(S_NZERO, rm, f)), (S_NZERO, 0));
        assert_eq!(fl(|f| f64_sqrt(D_NZERO, rm, f)), (D_NZERO, 0));
        assert_eq!(fl(|f| f64_sqrt(D_INF, rm, f)), (D_INF, 0));
        assert_eq!(fl(|f| f64_sqrt(d(9.0), rm, f)), (D_THREE, 0));
        assert_eq!(
            fl(|f| f32_sqrt(S_QNAN_PAYLOAD, rm, f)),
            (F32_CANONICAL_NAN, 0)
        );
        assert_eq!(fl(|f| f32_sqrt(S_SNAN, rm, f)), (F32_CANONICAL_NAN, NV));
    }
    // sqrt(2) = 1.41421356237309504880...: ...bcc = 1.41421356237309492,
    // ...bcd = 1.41421356237309514, so RNE/RUP round up and RTZ/RDN down.
    assert_eq!(
        fl(|f| f64_sqrt(D_TWO, RM_RNE, f)),
        (0x3ff6_a09e_667f_3bcd, NX)
    );
    assert_eq!(
        fl(|f| f64_sqrt(D_TWO, RM_RUP, f)),
        (0x3ff6_a09e_667f_3bcd, NX)
    );
    assert_eq!(
        fl(|f| f64_sqrt(D_TWO, RM_RTZ, f)),
        (0x3ff6_a09e_667f_3bcc, NX)
    );
    assert_eq!(
        fl(|f| f64_sqrt(D_TWO, RM_RDN, f)),
        (0x3ff6_a09e_667f_3bcc, NX)
    );
    assert_eq!(fl(|f| f32_sqrt(S_TWO, RM_RNE, f)), (0x3fb5_04f3, NX));
    assert_eq!(fl(|f| f32_sqrt(S_TWO, RM_RTZ, f)), (0x3fb5_04f3, NX));
    assert_eq!(fl(|f| f32_sqrt(S_TWO, RM_RUP, f)), (0x3fb5_04f4, NX));
}

// ------------------------------------------------------------------------ NaN

#[test]
fn nan_results_are_canonical() {
    let f32_ops: [Bin32; 4] = [f32_add, f32_sub, f32_mul, f32_div];
    let f64_ops: [Bin64; 4] = [f64_add, f64_sub, f64_mul, f64_div];
    for op in f32_ops {
        assert_eq!(
            fl(|f| op(S_QNAN_PAYLOAD, S_ONE, RM_RNE, f)),
            (F32_CANONICAL_NAN, 0)
        );
        assert_eq!(
            fl(|f| op(S_ONE, S_NSNAN, RM_RNE, f)),
            (F32_CANONICAL_NAN, NV)
        );
    }
    for op in f64_ops {
        assert_eq!(
            fl(|f| op(D_ONE, D_QNAN_PAYLOAD, RM_RNE, f)),
            (F64_CANONICAL_NAN, 0)
        );
        assert_eq!(
            fl(|f| op(D_SNAN, D_ONE, RM_RUP, f)),
            (F64_CANONICAL_NAN, NV)
        );
    }
    assert_eq!(
        fl(|f| f32_add(S_INF, S_NINF, RM_RNE, f)),
        (F32_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f64_mul(D_INF, D_ZERO, RM_RNE, f)),
        (F64_CANONICAL_NAN, NV)
    );
    // conversions between formats
    assert_eq!(
        fl(|f| f32_to_f64(S_QNAN_PAYLOAD, RM_RNE, f)),
        (F64_CANONICAL_NAN, 0)
    );
    assert_eq!(
        fl(|f| f32_to_f64(S_SNAN, RM_RNE, f)),
        (F64_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f64_to_f32(D_QNAN_PAYLOAD, RM_RNE, f)),
        (F32_CANONICAL_NAN, 0)
    );
    assert_eq!(
        fl(|f| f64_to_f32(D_SNAN, RM_RNE, f)),
        (F32_CANONICAL_NAN, NV)
    );
    assert!(f32_is_nan(S_QNAN) && f32_is_nan(S_SNAN) && !f32_is_nan(S_INF));
    assert!(f32_is_snan(S_SNAN) && !f32_is_snan(S_QNAN));
    assert!(f64_is_snan(D_SNAN) && !f64_is_snan(D_QNAN) && !f64_is_nan(D_INF));
}

// ------------------------------------------------------------------------ FMA

#[test]
fn fma_is_fused_f64() {
    // a = 1 + 2^-27: a*a = 1 + 2^-26 + 2^-54 exactly. Fused with c = -1 the
    // result is exact; mul-then-add loses the 2^-54 term.
    let a = 0x3ff0_0000_0200_0000;
    let fused = d(2f64.powi(-26) + 2f64.powi(-54));
    assert_eq!(fl(|f| f64_fmadd(a, a, D_NONE, RM_RNE, f)), (fused, 0)); // qemu
    let mut f = 0;
    let p = f64_mul(a, a, RM_RNE, &mut f);
    let unfused = f64_add(p, D_NONE, RM_RNE, &mut f);
    assert_eq!((unfused, f), (d(2f64.powi(-26)), NX));
    assert_ne!(unfused, fused);
    // The other three flavours.
    assert_eq!(fl(|f| f64_fmsub(a, a, D_ONE, RM_RNE, f)), (fused, 0));
    assert_eq!(
        fl(|f| f64_fnmsub(a, a, D_ONE, RM_RNE, f)),
        (fused ^ 1 << 63, 0)
    );
    assert_eq!(
        fl(|f| f64_fnmadd(a, a, D_NONE, RM_RNE, f)),
        (fused ^ 1 << 63, 0)
    );
}

#[test]
fn fma_is_fused_f32() {
    // a = 1 + 2^-12: a*a = 1 + 2^-11 + 2^-24.
    let a = 0x3f80_0800;
    assert_eq!(fl(|f| f32_fmadd(a, a, S_NONE, RM_RNE, f)), (0x3a00_0400, 0)); // qemu
    let mut f = 0;
    let p = f32_mul(a, a, RM_RNE, &mut f);
    assert_eq!(f32_add(p, S_NONE, RM_RNE, &mut f), 0x3a00_0000);
    // a*a is exactly a binary32 midpoint; +-2^-80 decides the direction. A
    // binary64 intermediate would round a*a + 2^-80 to the midpoint and then
    // to even (qemu: 0x3f801001 / 0x3f801000).
    let c = 0x1780_0000; // 2^-80
    assert_eq!(fl(|f| f32_fmadd(a, a, c, RM_RNE, f)), (0x3f80_1001, NX));
    assert_eq!(
        fl(|f| f32_fmadd(a, a, c | 1 << 31, RM_RNE, f)),
        (0x3f80_1000, NX)
    );
    assert_eq!(
        fl(|f| f32_fmadd(a, a, c | 1 << 31, RM_RMM, f)),
        (0x3f80_1000, NX)
    );
    assert_eq!(
        fl(|f| f32_fmadd(a, a, c | 1 << 31, RM_RUP, f)),
        (0x3f80_1001, NX)
    );
}

#[test]
fn fma_signs_and_specials() {
    // -(1*2) + 2 is an exact zero: +0, or -0 in RDN (qemu).
    for rm in RMS {
        let z = if rm == RM_RDN { D_NZERO } else { D_ZERO };
        assert_eq!(fl(|f| f64_fnmsub(D_ONE, D_TWO, D_TWO, rm, f)), (z, 0));
        let z = if rm == RM_RDN { S_NZERO } else { S_ZERO };
        assert_eq!(fl(|f| f32_fnmadd(S_ONE, S_TWO, s(-2.0), rm, f)), (z, 0));
        assert_eq!(fl(|f| f32_fmsub(S_ONE, S_TWO, S_TWO, rm, f)), (z, 0));
        // (-0 * 1) + -0 = -0 in every mode
        assert_eq!(
            fl(|f| f32_fmadd(S_NZERO, S_ONE, S_NZERO, rm, f)),
            (S_NZERO, 0)
        );
        // fnmadd(0, 1, 0) = -(+0) - (+0) = -0
        assert_eq!(
            fl(|f| f32_fnmadd(S_ZERO, S_ONE, S_ZERO, rm, f)),
            (S_NZERO, 0)
        );
        // inf * 0 + qNaN raises NV (RISC-V requirement; qemu)
        assert_eq!(
            fl(|f| f64_fmadd(D_INF, D_ZERO, D_QNAN, rm, f)),
            (F64_CANONICAL_NAN, NV)
        );
        assert_eq!(
            fl(|f| f32_fmadd(S_INF, S_ZERO, S_QNAN, rm, f)),
            (F32_CANONICAL_NAN, NV)
        );
    }
    assert_eq!(
        fl(|f| f64_fmadd(D_INF, D_ONE, D_NINF, RM_RNE, f)),
        (F64_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f64_fmsub(D_INF, D_ONE, D_INF, RM_RNE, f)),
        (F64_CANONICAL_NAN, NV)
    );
    assert_eq!(
        fl(|f| f32_fmadd(S_ONE, S_ONE, S_QNAN_PAYLOAD, RM_RNE, f)),
        (F32_CANONICAL_NAN, 0)
    );
    assert_eq!(
        fl(|f| f32_fmadd(S_ONE, S_SNAN, S_ONE, RM_RNE, f)),
        (F32_CANONICAL_NAN, NV)
    );
    // Overflow and underflow in the fused result.
    assert_eq!(
        fl(|f| f32_fmadd(S_MAX, S_TWO, S_NONE, RM_RNE, f)),
        (S_INF, OF | NX)
    );
    assert_eq!(
        fl(|f| f32_fmadd(0x0080_0001, s(0.5), S_ZERO, RM_RNE, f)),
        (0x0040_0000, UF | NX)
    );
}

// ---------------------------------------------------------------- min / max

#[test]
fn min_max_semantics() {
    let (min, max) = (f32_min, f32_max);
    // -0 < +0 in both argument orders.
    assert_eq!(fl(|f| min(S_NZERO, S_ZERO, f)), (S_NZERO, 0));
    assert_eq!(fl(|f| min(S_ZERO, S_NZERO, f)), (S_NZERO, 0));
    assert_eq!(fl(|f| max(S_NZERO, S_ZERO, f)), (S_ZERO, 0));
    assert_eq!(fl(|f| max(S_ZERO, S_NZERO, f)), (S_ZERO, 0));
    // one NaN: the other operand; sNaN additionally raises NV
    assert_eq!(fl(|f| min(S_QNAN_PAYLOAD, S_TWO, f)), (S_TWO, 0));
    assert_eq!(fl(|f| max(S_TWO, S_QNAN, f)), (S_TWO, 0));
    assert_eq!(fl(|f| min(S_SNAN, S_TWO, f)), (S_TWO, NV));
    assert_eq!(fl(|f| max(S_NINF, S_NSNAN, f)), (S_NINF, NV));
    // both NaN: canonical NaN
    assert_eq!(
        fl(|f| min(S_QNAN_PAYLOAD, S_QNAN_PAYLOAD, f)),
        (F32_CANONICAL_NAN, 0)
    );
    assert_eq!(
        fl(|f| max(S_SNAN, S_QNAN_PAYLOAD, f)),
        (F32_CANONICAL_NAN, NV)
    );
    // ordinary values
    assert_eq!(fl(|f| min(S_NONE, S_TWO, f)), (S_NONE, 0));
    assert_eq!(fl(|f| max(S_NONE, S_TWO, f)), (S_TWO, 0));
    assert_eq!(fl(|f| max(S_NINF, S_INF, f)), (S_INF, 0));
    assert_eq!(fl(|f| f64_min(D_ZERO, D_NZERO, f)), (D_NZERO, 0));
    assert_eq!(fl(|f| f64_max(D_NZERO, D_ZERO, f)), (D_ZERO, 0));
    assert_eq!(fl(|f| f64_max(D_NZERO, D_NZERO, f)), (D_NZERO, 0));
    assert_eq!(fl(|f| f64_min(D_QNAN_PAYLOAD, D_NONE, f)), (D_NONE, 0));
    assert_eq!(fl(|f| f64_max(D_SNAN, D_NONE, f)), (D_NONE, NV));
    assert_eq!(fl(|f| f64_min(D_SNAN, D_SNAN, f)), (F64_CANONICAL_NAN, NV));
    assert_eq!(fl(|f| f64_min(D_THREE, D_TWO, f)), (D_TWO, 0));
}

// --------------------------------------------------------------- comparisons

#[test]
fn comparison_nan_flags() {
    // feq is quiet: NV only for sNaN. flt/fle signal on any NaN.
    assert_eq!(fl(|f| f32_eq(S_QNAN, S_ONE, f)), (false, 0));
    assert_eq!(fl(|f| f32_eq(S_QNAN, S_QNAN, f)), (false, 0));
    assert_eq!(fl(|f| f32_eq(S_ONE, S_SNAN, f)), (false, NV));
    assert_eq!(fl(|f| f32_lt(S_QNAN, S_ONE, f)), (false, NV));
    assert_eq!(fl(|f| f32_le(S_ONE, S_QNAN, f)), (false, NV));
    assert_eq!(fl(|f| f32_lt(S_SNAN, S_ONE, f)), (false, NV));
    assert_eq!(fl(|f| f64_eq(D_QNAN, D_QNAN, f)), (false, 0));
    assert_eq!(fl(|f| f64_eq(D_SNAN, D_ONE, f)), (false, NV));
    assert_eq!(fl(|f| f64_lt(D_ONE, D_QNAN, f)), (false, NV));
    assert_eq!(fl(|f| f64_le(D_QNAN_PAYLOAD, D_ONE, f)), (false, NV));
    // -0 == +0
    assert_eq!(fl(|f| f32_eq(S_NZERO, S_ZERO, f)), (true, 0));
    assert_eq!(fl(|f| f32_lt(S_NZERO, S_ZERO, f)), (false, 0));
    assert_eq!(fl(|f| f32_le(S_ZERO, S_NZERO, f)), (true, 0));
    assert_eq!(fl(|f| f64_eq(D_NZERO, D_ZERO, f)), (true, 0));
    assert_eq!(fl(|f| f64_lt(D_NINF, D_NONE, f)), (true, 0));
    assert_eq!(fl(|f| f64_le(D_TWO, D_ONE, f)), (false, 0));
    assert_eq!(fl(|f| f64_le(D_INF, D_INF, f)), (true, 0));
}

// ------------------------------------------------------------------ classify

#[test]
fn classify_every_category() {
    let cases32 = [
        (S_NINF, 0),
        (S_NONE, 1),
        (0x8000_0001, 2),
        (S_NZERO, 3),
        (S_ZERO, 4),
        (0x007f_ffff, 5),
        (S_MIN_NORMAL, 6),
        (S_INF, 7),
        (S_SNAN, 8),
        (S_NSNAN, 8),
        (S_QNAN, 9),
        (S_QNAN_PAYLOAD, 9),
    ];
    for (v, bit) in cases32 {
        assert_eq!(f32_class(v), 1 << bit, "{v:#x}");
    }
    let cases64 = [
        (D_NINF, 0),
        (d(-1e300), 1),
        (D_NZERO | 5, 2),
        (D_NZERO, 3),
        (D_ZERO, 4),
        (1, 5),
        (D_MAX, 6),
        (D_INF, 7),
        (D_SNAN, 8),
        (D_QNAN, 9),
    ];
    for (v, bit) in cases64 {
        assert_eq!(f64_class(v), 1 << bit, "{v:#x}");
    }
}

#[test]
fn sign_injection() {
    assert_eq!(f32_sgnj(S_ONE, S_NZERO), S_NONE);
    assert_eq!(f32_sgnjn(S_ONE, S_NZERO), S_ONE);
    assert_eq!(f32_sgnjx(S_NONE, S_NONE), S_ONE);
    assert_eq!(f32_sgnjx(S_SNAN, S_NONE), S_SNAN | 1 << 31); // NaNs untouched
    assert_eq!(f64_sgnj(D_NONE, D_ONE), D_ONE);
    assert_eq!(f64_sgnjn(D_ONE, D_ONE), D_NONE);
    assert_eq!(f64_sgnjx(D_NONE, D_ZERO), D_NONE);
}

// ------------------------------------------------------ float -> integer

#[test]
fn fcvt_to_int_rounding_of_halves() {
    // fcvt.w.s of 2.5 / -2.5 per rm (RNE, RTZ, RDN, RUP, RMM)
    let pos = [2i64, 2, 2, 3, 3];
    let neg = [-2i64, -2, -3, -2, -3];
    for i in 0..5 {
        let rm = RMS[i];
        assert_eq!(fl(|f| f32_to_i32(s(2.5), rm, f)), (pos[i] as u64, NX));
        assert_eq!(fl(|f| f32_to_i32(s(-2.5), rm, f)), (neg[i] as u64, NX));
        assert_eq!(fl(|f| f64_to_i32(d(2.5), rm, f)), (pos[i] as u64, NX));
        assert_eq!(fl(|f| f64_to_i64(d(-2.5), rm, f)), (neg[i] as u64, NX));
        assert_eq!(fl(|f| f32_to_i64(s(-2.5), rm, f)), (neg[i] as u64, NX));
        assert_eq!(fl(|f| f64_to_u32(d(2.5), rm, f)), (pos[i] as u64, NX));
        assert_eq!(fl(|f| f32_to_u64(s(2.5), rm, f)), (pos[i] as u64, NX));
        // 3.5 distinguishes ties-to-even from truncation (RNE 4, RTZ 3)
        let w = [4u64, 3, 3, 4, 4][i];
        assert_eq!(fl(|f| f64_to_u64(d(3.5), rm, f)), (w, NX));
        // exact integers: no flags
        assert_eq!(fl(|f| f32_to_i32(s(-7.0), rm, f)), (-7i64 as u64, 0));
    }
}

#[test]
fn fcvt_to_int_results_are_sign_extended() {
    // qemu: fcvt.wu.s of 3e9 writes 0xFFFFFFFF_B2D05E00
    assert_eq!(
        fl(|f| f32_to_u32(s(3e9), RM_RTZ, f)),
        (0xffff_ffff_b2d0_5e00, 0)
    );
    assert_eq!(
        fl(|f| f64_to_u32(d(3e9), RM_RNE, f)),
        (0xffff_ffff_b2d0_5e00, 0)
    );
    assert_eq!(fl(|f| f32_to_i32(s(-1.0), RM_RNE, f)), (u64::MAX, 0));
    assert_eq!(fl(|f| f64_to_u32(d(1.0), RM_RNE, f)), (1, 0));
}

/// Saturation table for (input, [i32, u32, i64, u64] results) with NV.
#[test]
fn fcvt_to_int_saturation() {
    const I32_MAX: u64 = 0x7fff_ffff;
    const I32_MIN: u64 = 0xffff_ffff_8000_0000;
    const U32_MAX: u64 = u64::MAX; // 0xffffffff sign-extended
    const I64_MAX: u64 = i64::MAX as u64;
    const I64_MIN: u64 = i64::MIN as u64;
    let cases: [(f64, [u64; 4]); 7] = [
        (f64::NAN, [I32_MAX, U32_MAX, I64_MAX, u64::MAX]),
        (f64::INFINITY, [I32_MAX, U32_MAX, I64_MAX, u64::MAX]),
        (f64::NEG_INFINITY, [I32_MIN, 0, I64_MIN, 0]),
        (1e30, [I32_MAX, U32_MAX, I64_MAX, u64::MAX]),
        (-1e30, [I32_MIN, 0, I64_MIN, 0]),
        (-1.0, [u64::MAX, 0, u64::MAX, 0]), // unsigned: NV
        (2f64.powi(64), [I32_MAX, U32_MAX, I64_MAX, u64::MAX]),
    ];
    for rm in RMS {
        for (x, want) in cases {
            let nvs = if x == -1.0 { [0, NV, 0, NV] } else { [NV; 4] };
            let ds: [fn(u64, u8, &mut u8) -> u64; 4] =
                [f64_to_i32, f64_to_u32, f64_to_i64, f64_to_u64];
            let ss: [fn(u32, u8, &mut u8) -> u64; 4] =
                [f32_to_i32, f32_to_u32, f32_to_i64, f32_to_u64];
            for k in 0..4 {
                assert_eq!(
                    fl(|f| ds[k](d(x), rm, f)),
                    (want[k], nvs[k]),
                    "f64 {x} conv {k} rm {rm}"
                );
                assert_eq!(
                    fl(|f| ss[k](s(x as f32), rm, f)),
                    (want[k], nvs[k]),
                    "f32 {x} conv {k} rm {rm}"
                );
            }
        }
        // sNaN and qNaN both give the max, with NV.
        assert_eq!(fl(|f| f32_to_i64(S_NSNAN, rm, f)), (I64_MAX, NV));
        assert_eq!(fl(|f| f64_to_u64(D_QNAN_PAYLOAD, rm, f)), (u64::MAX, NV));
    }
    // Exactly at the edges.
    assert_eq!(fl(|f| f64_to_i32(d(2147483647.0), RM_RNE, f)), (I32_MAX, 0));
    assert_eq!(
        fl(|f| f64_to_i32(d(2147483647.5), RM_RTZ, f)),
        (I32_MAX, NX)
    );
    assert_eq!(
        fl(|f| f64_to_i32(d(2147483647.5), RM_RNE, f)),
        (I32_MAX, NV)
    );
    assert_eq!(
        fl(|f| f64_to_i32(d(-2147483648.5), RM_RTZ, f)),
        (I32_MIN, NX)
    );
    assert_eq!(
        fl(|f| f64_to_i32(d(-2147483648.5), RM_RDN, f)),
        (I32_MIN, NV)
    );
    assert_eq!(
        fl(|f| f64_to_u32(d(4294967295.5), RM_RTZ, f)),
        (U32_MAX, NX)
    );
    assert_eq!(
        fl(|f| f64_to_u32(d(4294967295.5), RM_RUP, f)),
        (U32_MAX, NV)
    );
    assert_eq!(fl(|f| f32_to_i64(s(-9.223372e18), RM_RNE, f)), (I64_MIN, 0)); // -2^63
    assert_eq!(fl(|f| f32_to_i64(s(9.223372e18), RM_RNE, f)), (I64_MAX, NV)); // 2^63
    assert_eq!(
        fl(|f| f64_to_u64(0x43ef_ffff_ffff_ffff, RM_RNE, f)),
        (0xffff_ffff_ffff_f800, 0)
    );
    // Negative values that round to zero are in range for the unsigned
    // conversions (NX only); ones that round to -1 are not.
    assert_eq!(fl(|f| f64_to_u32(d(-0.4), RM_RNE, f)), (0, NX));
    assert_eq!(fl(|f| f64_to_u64(d(-0.9), RM_RTZ, f)), (0, NX));
    assert_eq!(fl(|f| f64_to_u64(d(-0.4), RM_RDN, f)), (0, NV));
    assert_eq!(fl(|f| f32_to_u32(s(-0.5), RM_RMM, f)), (0, NV));
    assert_eq!(fl(|f| f32_to_u32(s(-0.5), RM_RNE, f)), (0, NX));
    assert_eq!(fl(|f| f32_to_u32(S_NZERO, RM_RNE, f)), (0, 0));
}

// ------------------------------------------------------ integer -> float

#[test]
fn fcvt_from_int() {
    // 2^53 + 1 is not a double: RNE/RTZ/RDN give 2^53, RUP/RMM... RMM ties
    // away only on ties; 2^53+1 is a tie between 2^53 and 2^53+2.
    let v = (1u64 << 53) + 1;
    let want = [1u64 << 53, 1 << 53, 1 << 53, (1 << 53) + 2, (1 << 53) + 2];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| i64_to_f64(v, rm, f)), (d(w as f64), NX), "rm {rm}");
        assert_eq!(fl(|f| u64_to_f64(v, rm, f)), (d(w as f64), NX), "rm {rm}");
    }
    // qemu: 2^63 + 2^39 + 1 -> binary32 must round up in RNE (a binary64
    // intermediate would produce the tie 2^63 + 2^39 and round to even).
    assert_eq!(
        fl(|f| u64_to_f32(0x8000_0080_0000_0001, RM_RNE, f)),
        (0x5f00_0001, NX)
    );
    assert_eq!(
        fl(|f| i64_to_f32(0x4000_0040_0000_0001, RM_RNE, f)),
        (0x5e80_0001, NX)
    );
    assert_eq!(fl(|f| u64_to_f32(u64::MAX, RM_RNE, f)), (0x5f80_0000, NX));
    assert_eq!(fl(|f| u64_to_f32(u64::MAX, RM_RTZ, f)), (0x5f7f_ffff, NX));
    assert_eq!(
        fl(|f| i64_to_f64(i64::MIN as u64, RM_RNE, f)),
        (0xc3e0_0000_0000_0000, 0)
    );
    // The 32-bit sources use only the low 32 bits of the register.
    assert_eq!(
        fl(|f| i32_to_f32(0x1234_5678_ffff_ffff, RM_RNE, f)),
        (S_NONE, 0)
    );
    assert_eq!(
        fl(|f| u32_to_f32(0xdead_beef_ffff_ffff, RM_RNE, f)),
        (0x4f80_0000, NX)
    );
    assert_eq!(
        fl(|f| u32_to_f32(0xdead_beef_ffff_ffff, RM_RTZ, f)),
        (0x4f7f_ffff, NX)
    );
    assert_eq!(
        fl(|f| i32_to_f64(0xffff_ffff_8000_0000, RM_RNE, f)),
        (d(-2147483648.0), 0)
    );
    assert_eq!(
        fl(|f| u32_to_f64(0x0000_0001_ffff_ffff, RM_RUP, f)),
        (d(4294967295.0), 0)
    );
    assert_eq!(fl(|f| i32_to_f32(16_777_217, RM_RNE, f)), (0x4b80_0000, NX));
    assert_eq!(fl(|f| i32_to_f32(16_777_217, RM_RUP, f)), (0x4b80_0001, NX));
    assert_eq!(fl(|f| i32_to_f32(0, RM_RDN, f)), (S_ZERO, 0)); // +0 even in RDN
}

#[test]
fn fcvt_between_formats() {
    for rm in RMS {
        assert_eq!(
            fl(|f| f32_to_f64(0x0000_0001, rm, f)),
            (d(2f64.powi(-149)), 0)
        );
        assert_eq!(fl(|f| f32_to_f64(S_NINF, rm, f)), (D_NINF, 0));
        assert_eq!(fl(|f| f64_to_f32(D_NZERO, rm, f)), (S_NZERO, 0));
        assert_eq!(fl(|f| f64_to_f32(D_NINF, rm, f)), (S_NINF, 0));
    }
    let third = 0x3fd5_5555_5555_5555;
    let want = [
        0x3eaa_aaab,
        0x3eaa_aaaa,
        0x3eaa_aaaa,
        0x3eaa_aaab,
        0x3eaa_aaab,
    ];
    for (rm, w) in RMS.into_iter().zip(want) {
        assert_eq!(fl(|f| f64_to_f32(third, rm, f)), (w, NX));
    }
}

// -------------------------------------------------------------- plumbing

#[test]
fn flags_accumulate_and_are_never_cleared() {
    let mut f = 0;
    f64_div(D_ONE, D_ZERO, RM_RNE, &mut f);
    f64_div(D_ONE, D_THREE, RM_RNE, &mut f);
    f64_add(D_ONE, D_ONE, RM_RNE, &mut f); // raises nothing
    f32_sqrt(S_NONE, RM_RUP, &mut f);
    assert_eq!(f, DZ | NX | NV);
    // SoftFloat's own state does not leak from one call into the next.
    let mut g = 0;
    f32_add(S_ONE, S_TWO, RM_RUP, &mut g);
    assert_eq!(g, 0);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "invalid static rounding mode")]
fn reserved_rounding_mode_is_a_caller_bug() {
    f32_add(S_ONE, S_ONE, 5, &mut 0);
}

#[test]
fn threads_have_independent_softfloat_state() {
    // Each thread hammers the non-RNE (SoftFloat) path with its own mode.
    let handles: Vec<_> = [RM_RDN, RM_RUP, RM_RTZ, RM_RMM]
        .into_iter()
        .map(|rm| {
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    let mut f = 0;
                    let r = f64_div(D_ONE, D_THREE, rm, &mut f);
                    let want = if rm == RM_RUP {
                        0x3fd5_5555_5555_5556
                    } else {
                        0x3fd5_5555_5555_5555
                    };
                    assert_eq!((r, f), (want, NX));
                    let mut f = 0;
                    assert_eq!(f64_add(D_ONE, D_ONE, rm, &mut f), D_TWO);
                    assert_eq!(f, 0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
}

// ------------------------------------------- randomized differential tests

/// xorshift64* — deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// binary32 operands biased towards the cases fast paths must get right.
    fn f32(&mut self) -> u32 {
        const SPECIAL: [u32; 14] = [
            S_ZERO,
            S_NZERO,
            S_ONE,
            S_NONE,
            S_INF,
            S_NINF,
            S_MAX,
            S_MIN_NORMAL,
            S_QNAN,
            S_SNAN,
            1,
            0x007f_ffff,
            0x8080_0000,
            0xff7f_ffff,
        ];
        let r = self.next();
        let sign = ((r >> 63) as u32) << 31;
        match r % 8 {
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            1 => r as u32 >> 7 | sign, // anything
            // short significands make exact results, ties and cancellations common
            2 | 3 => {
                let frac = (self.next() as u32 & 0x7f_ffff) & !((1u32 << self.below(24)) - 1);
                sign | (127 - 8 + self.below(17) as u32) << 23 | frac
            }
            // near the overflow / underflow thresholds
            4 => sign | (self.below(24) as u32) << 23 | (self.next() as u32 & 0x7f_ffff),
            5 => sign | (254 - self.below(24) as u32) << 23 | (self.next() as u32 & 0x7f_ffff),
            _ => sign | (127 - 30 + self.below(61) as u32) << 23 | (self.next() as u32 & 0x7f_ffff),
        }
    }

    /// binary64 operands, biased likewise (including the fast-path gates at
    /// exponents +-450 and the 2^1022 add limit).
    fn f64(&mut self) -> u64 {
        const SPECIAL: [u64; 13] = [
            D_ZERO,
            D_NZERO,
            D_ONE,
            D_NONE,
            D_INF,
            D_NINF,
            D_MAX,
            0x0010_0000_0000_0000,
            D_QNAN,
            D_SNAN,
            1,
            0x000f_ffff_ffff_ffff,
            0x7fd0_0000_0000_0000,
        ];
        let r = self.next();
        let sign = r & 1 << 63;
        let frac = self.next() & 0x000f_ffff_ffff_ffff;
        let exp = |e: u64| e << 52;
        match r % 9 {
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            1 => self.next(),
            2 | 3 => {
                let short = frac & !((1u64 << self.below(53)) - 1);
                sign | exp(1023 - 8 + self.below(17)) | short
            }
            4 => sign | exp(self.below(60)) | frac,
            5 => sign | exp(2046 - self.below(60)) | frac,
            6 => sign | exp(1023 - 450 - 3 + self.below(7)) | frac,
            7 => sign | exp(1023 + 450 - 3 + self.below(7)) | frac,
            _ => sign | exp(1023 - 60 + self.below(121)) | frac,
        }
    }

    /// Integers biased towards rounding boundaries of the float formats.
    fn int(&mut self) -> u64 {
        let r = self.next();
        match r % 4 {
            0 => r >> self.below(64),
            1 => (r >> self.below(64)).wrapping_neg(),
            2 => {
                // a few bits around a power of two: ties and near-ties
                let k = self.below(64);
                (1u64 << k)
                    .wrapping_add(self.next() & 0xff)
                    .wrapping_add((self.next() & 1) << k.saturating_sub(25))
            }
            _ => r,
        }
    }
}

/// Iterations of the randomized tests; raise with `RVNVMM_FPU_ITERS=...`
/// for a soak run.
fn iters() -> usize {
    std::env::var("RVNVMM_FPU_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

#[test]
fn fast_paths_match_softfloat_f32() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..iters() {
        let (a, b, c) = (rng.f32(), rng.f32(), rng.f32());
        let pairs: [(&str, Bin32, Bin32); 4] = [
            ("add", f32_add, sf::f32_add),
            ("sub", f32_sub, sf::f32_sub),
            ("mul", f32_mul, sf::f32_mul),
            ("div", f32_div, sf::f32_div),
        ];
        for (name, ours, theirs) in pairs {
            assert_eq!(
                fl(|f| ours(a, b, RM_RNE, f)),
                fl(|f| theirs(a, b, RM_RNE, f)),
                "{name} {a:#x} {b:#x}"
            );
        }
        assert_eq!(
            fl(|f| f32_sqrt(a, RM_RNE, f)),
            fl(|f| sf::f32_sqrt(a, RM_RNE, f)),
            "sqrt {a:#x}"
        );
        assert_eq!(
            fl(|f| f32_fmadd(a, b, c, RM_RNE, f)),
            fl(|f| sf::f32_mul_add(a, b, c, RM_RNE, f)),
            "fma {a:#x} {b:#x} {c:#x}"
        );
        let p = a & 0x7fff_ffff | 0x3f80_0000; // [1, 2): products near midpoints
        let q = b & 0x807f_ffff | 0x3f80_0000;
        assert_eq!(
            fl(|f| f32_fmadd(p, q, c, RM_RNE, f)),
            fl(|f| sf::f32_mul_add(p, q, c, RM_RNE, f)),
            "fma {p:#x} {q:#x} {c:#x}"
        );
        // a non-RNE mode must bypass the fast path and still be right
        let rm = rng.below(5) as u8;
        assert_eq!(
            fl(|f| f32_add(a, b, rm, f)),
            fl(|f| sf::f32_add(a, b, rm, f))
        );
    }
}

#[test]
fn fast_paths_match_softfloat_f64() {
    let mut rng = Rng(0xfeed_face_cafe_beef);
    for _ in 0..iters() {
        let (a, b) = (rng.f64(), rng.f64());
        let pairs: [(&str, Bin64, Bin64); 4] = [
            ("add", f64_add, sf::f64_add),
            ("sub", f64_sub, sf::f64_sub),
            ("mul", f64_mul, sf::f64_mul),
            ("div", f64_div, sf::f64_div),
        ];
        for (name, ours, theirs) in pairs {
            assert_eq!(
                fl(|f| ours(a, b, RM_RNE, f)),
                fl(|f| theirs(a, b, RM_RNE, f)),
                "{name} {a:#x} {b:#x}"
            );
        }
        assert_eq!(
            fl(|f| f64_sqrt(a, RM_RNE, f)),
            fl(|f| sf::f64_sqrt(a, RM_RNE, f)),
            "sqrt {a:#x}"
        );
        // exact quotients/roots are where NX detection matters
        let mut g = 0;
        let prod = sf::f64_mul(a, b, RM_RNE, &mut g);
        assert_eq!(
            fl(|f| f64_div(prod, b, RM_RNE, f)),
            fl(|f| sf::f64_div(prod, b, RM_RNE, f)),
            "div {prod:#x} {b:#x}"
        );
        let sq = sf::f64_mul(a, a, RM_RNE, &mut g);
        assert_eq!(
            fl(|f| f64_sqrt(sq, RM_RNE, f)),
            fl(|f| sf::f64_sqrt(sq, RM_RNE, f)),
            "sqrt {sq:#x}"
        );
        assert_eq!(
            fl(|f| f64_to_f32(a, RM_RNE, f)),
            fl(|f| convert::reference::f64_to_f32(a, RM_RNE, f)),
            "narrow {a:#x}"
        );
    }
}

/// The binary64 fused multiply-add's host fast path against SoftFloat, in
/// all four flavours: random operands (specials included), then moderate
/// ones built where NX is hard to decide: `c` cancelling the product to its
/// rounding error (an exact result), `c` a few ulps away from it, small
/// integers (exact), products near rounding midpoints, and a `c` far below
/// the product's last bit.
#[test]
fn fused_multiply_add_f64_matches_softfloat() {
    type Fma = fn(u64, u64, u64, u8, &mut u8) -> u64;
    let flavours: [(&str, Fma, Fma); 4] = [
        ("fmadd", f64_fmadd, |a, b, c, rm, f| {
            sf::f64_mul_add(a, b, c, rm, f)
        }),
        ("fmsub", f64_fmsub, |a, b, c, rm, f| {
            sf::f64_mul_add(a, b, neg(c), rm, f)
        }),
        ("fnmsub", f64_fnmsub, |a, b, c, rm, f| {
            sf::f64_mul_add(neg(a), b, c, rm, f)
        }),
        ("fnmadd", f64_fnmadd, |a, b, c, rm, f| {
            sf::f64_mul_add(neg(a), b, neg(c), rm, f)
        }),
    ];
    let check = |a: u64, b: u64, c: u64| {
        for (name, ours, theirs) in flavours {
            assert_eq!(
                fl(|f| ours(a, b, c, RM_RNE, f)),
                fl(|f| theirs(a, b, c, RM_RNE, f)),
                "{name} {a:#x} {b:#x} {c:#x}"
            );
        }
    };
    let mut rng = Rng(0x0f3a_d00d_1234_5678);
    // A moderate binary64 (exponent within 2^-440..2^440), random sign.
    let moderate = |rng: &mut Rng| {
        let exp = 1023 - 440 + rng.below(881);
        (rng.next() & (1 << 63)) | (exp << 52) | (rng.next() & ((1 << 52) - 1))
    };
    for _ in 0..iters() {
        check(rng.f64(), rng.f64(), rng.f64());
        let (a, b) = (moderate(&mut rng), moderate(&mut rng));
        let mut g = 0;
        let p = sf::f64_mul(a, b, RM_RNE, &mut g);
        check(a, b, neg(p));
        let ulps = rng.below(7);
        check(a, b, neg(p).wrapping_add(ulps).wrapping_sub(3));
        check(a, b, moderate(&mut rng));
        let tiny = (p & (1 << 63)) | (p & (0x7ff << 52)).saturating_sub(60 << 52);
        check(a, b, tiny | (rng.next() & ((1 << 52) - 1)));
        let (i, j, k) = (rng.below(1 << 26), rng.below(1 << 26), rng.below(1 << 40));
        check(
            (i as f64).to_bits(),
            (j as f64).to_bits(),
            (k as f64 * if rng.below(2) == 0 { -1.0 } else { 1.0 }).to_bits(),
        );
        // Mantissas in [1, 2) with few bits: products on or near midpoints.
        let short = |rng: &mut Rng| 0x3ff0_0000_0000_0000 | (rng.next() & 0x000f_ffff_f000_0000);
        let (x, y) = (short(&mut rng), short(&mut rng));
        check(
            x,
            y,
            moderate(&mut rng) & 0x800f_ffff_ffff_ffff | 0x3ca0_0000_0000_0000,
        );
    }
}

#[test]
fn exact_f32_quotients_and_roots_match_softfloat() {
    let mut rng = Rng(42);
    for _ in 0..iters() {
        let (a, b) = (rng.f32(), rng.f32());
        let mut g = 0;
        let prod = sf::f32_mul(a, b, RM_RNE, &mut g);
        assert_eq!(
            fl(|f| f32_div(prod, b, RM_RNE, f)),
            fl(|f| sf::f32_div(prod, b, RM_RNE, f)),
            "div {prod:#x} {b:#x}"
        );
        let sq = sf::f32_mul(a, a, RM_RNE, &mut g);
        assert_eq!(
            fl(|f| f32_sqrt(sq, RM_RNE, f)),
            fl(|f| sf::f32_sqrt(sq, RM_RNE, f)),
            "sqrt {sq:#x}"
        );
    }
}

#[test]
fn conversions_match_softfloat_in_all_modes() {
    use convert::reference as r;
    let mut rng = Rng(7);
    type S2I = fn(u32, u8, &mut u8) -> u64;
    type D2I = fn(u64, u8, &mut u8) -> u64;
    type I2S = fn(u64, u8, &mut u8) -> u32;
    type I2D = fn(u64, u8, &mut u8) -> u64;
    let s2i: [(S2I, S2I); 4] = [
        (f32_to_i32, r::f32_to_i32),
        (f32_to_u32, r::f32_to_u32),
        (f32_to_i64, r::f32_to_i64),
        (f32_to_u64, r::f32_to_u64),
    ];
    let d2i: [(D2I, D2I); 4] = [
        (f64_to_i32, r::f64_to_i32),
        (f64_to_u32, r::f64_to_u32),
        (f64_to_i64, r::f64_to_i64),
        (f64_to_u64, r::f64_to_u64),
    ];
    let i2s: [(I2S, I2S); 4] = [
        (i32_to_f32, r::i32_to_f32),
        (u32_to_f32, r::u32_to_f32),
        (i64_to_f32, r::i64_to_f32),
        (u64_to_f32, r::u64_to_f32),
    ];
    let i2d: [(I2D, I2D); 4] = [
        (i32_to_f64, r::i32_to_f64),
        (u32_to_f64, r::u32_to_f64),
        (i64_to_f64, r::i64_to_f64),
        (u64_to_f64, r::u64_to_f64),
    ];
    for _ in 0..iters() / 4 {
        // integer-valued and half-integer floats near the range limits too
        let x = match rng.below(3) {
            0 => rng.f64(),
            1 => d(rng.int() as i64 as f64 + [0.0, 0.5, -0.5, 0.25][rng.below(4) as usize]),
            _ => d(rng.int() as f64),
        };
        let xs = match rng.below(2) {
            0 => rng.f32(),
            _ => s(f64::from_bits(x) as f32),
        };
        let v = rng.int();
        for rm in RMS {
            for (k, (ours, theirs)) in s2i.iter().enumerate() {
                assert_eq!(
                    fl(|f| ours(xs, rm, f)),
                    fl(|f| theirs(xs, rm, f)),
                    "s2i{k} {xs:#x} rm {rm}"
                );
            }
            for (k, (ours, theirs)) in d2i.iter().enumerate() {
                assert_eq!(
                    fl(|f| ours(x, rm, f)),
                    fl(|f| theirs(x, rm, f)),
                    "d2i{k} {x:#x} rm {rm}"
                );
            }
            for (k, (ours, theirs)) in i2s.iter().enumerate() {
                assert_eq!(
                    fl(|f| ours(v, rm, f)),
                    fl(|f| theirs(v, rm, f)),
                    "i2s{k} {v:#x} rm {rm}"
                );
            }
            for (k, (ours, theirs)) in i2d.iter().enumerate() {
                assert_eq!(
                    fl(|f| ours(v, rm, f)),
                    fl(|f| theirs(v, rm, f)),
                    "i2d{k} {v:#x} rm {rm}"
                );
            }
            assert_eq!(
                fl(|f| f32_to_f64(xs, rm, f)),
                fl(|f| r::f32_to_f64(xs, rm, f)),
                "widen {xs:#x}"
            );
            assert_eq!(
                fl(|f| f64_to_f32(x, rm, f)),
                fl(|f| r::f64_to_f32(x, rm, f)),
                "narrow {x:#x}"
            );
        }
    }
}

/// Spike's formulation of fmin/fmax on top of SoftFloat's comparisons.
fn spike_min_max_f32(a: u32, b: u32, max: bool, flags: &mut u8) -> u32 {
    let pick_a = if max {
        sf::cmp::f32_lt_quiet(b, a, flags) || (sf::cmp::f32_eq(b, a, flags) && b & 1 << 31 != 0)
    } else {
        sf::cmp::f32_lt_quiet(a, b, flags) || (sf::cmp::f32_eq(a, b, flags) && a & 1 << 31 != 0)
    };
    if f32_is_nan(a) && f32_is_nan(b) {
        F32_CANONICAL_NAN
    } else if pick_a || f32_is_nan(b) {
        a
    } else {
        b
    }
}

fn spike_min_max_f64(a: u64, b: u64, max: bool, flags: &mut u8) -> u64 {
    let pick_a = if max {
        sf::cmp::f64_lt_quiet(b, a, flags) || (sf::cmp::f64_eq(b, a, flags) && b & 1 << 63 != 0)
    } else {
        sf::cmp::f64_lt_quiet(a, b, flags) || (sf::cmp::f64_eq(a, b, flags) && a & 1 << 63 != 0)
    };
    if f64_is_nan(a) && f64_is_nan(b) {
        F64_CANONICAL_NAN
    } else if pick_a || f64_is_nan(b) {
        a
    } else {
        b
    }
}

#[test]
fn comparisons_and_min_max_match_softfloat() {
    let mut rng = Rng(99);
    for _ in 0..iters() / 2 {
        let (a, b) = (rng.f32(), rng.f32());
        let b = if rng.below(4) == 0 {
            a ^ (rng.below(2) as u32) << 31
        } else {
            b
        };
        assert_eq!(fl(|f| f32_eq(a, b, f)), fl(|f| sf::cmp::f32_eq(a, b, f)));
        assert_eq!(fl(|f| f32_lt(a, b, f)), fl(|f| sf::cmp::f32_lt(a, b, f)));
        assert_eq!(fl(|f| f32_le(a, b, f)), fl(|f| sf::cmp::f32_le(a, b, f)));
        assert_eq!(
            fl(|f| f32_min(a, b, f)),
            fl(|f| spike_min_max_f32(a, b, false, f)),
            "min {a:#x} {b:#x}"
        );
        assert_eq!(
            fl(|f| f32_max(a, b, f)),
            fl(|f| spike_min_max_f32(a, b, true, f)),
            "max {a:#x} {b:#x}"
        );
        let (a, b) = (rng.f64(), rng.f64());
        let b = if rng.below(4) == 0 {
            a ^ rng.below(2) << 63
        } else {
            b
        };
        assert_eq!(fl(|f| f64_eq(a, b, f)), fl(|f| sf::cmp::f64_eq(a, b, f)));
        assert_eq!(fl(|f| f64_lt(a, b, f)), fl(|f| sf::cmp::f64_lt(a, b, f)));
        assert_eq!(fl(|f| f64_le(a, b, f)), fl(|f| sf::cmp::f64_le(a, b, f)));
        assert_eq!(
            fl(|f| f64_min(a, b, f)),
            fl(|f| spike_min_max_f64(a, b, false, f)),
            "min {a:#x} {b:#x}"
        );
        assert_eq!(
            fl(|f| f64_max(a, b, f)),
            fl(|f| spike_min_max_f64(a, b, true, f)),
            "max {a:#x} {b:#x}"
        );
    }
}
