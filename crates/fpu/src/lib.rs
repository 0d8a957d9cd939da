//! Bit-exact RISC-V **F**, **D**, **Zfh**/**Zfhmin** and **Zfa** arithmetic
//! for the rvnvmm emulator.
//!
//! All operands and results are raw IEEE 754 bit patterns (`u16` for
//! binary16 / H, `u32` for binary32 / S, `u64` for binary64 / D and for
//! integer registers). The
//! heavy lifting is done by Berkeley SoftFloat 3 built with its RISC-V
//! specialization (via `softfloat-sys` with the `riscv` feature — the same
//! library and specialization Spike uses), which gives canonical NaNs,
//! tininess detection after rounding, RISC-V integer-conversion saturation
//! values and a correctly fused multiply-add. Operations SoftFloat does not
//! provide in RISC-V form (min/max, comparisons, classify, sign injection,
//! NaN-boxing) are implemented here in plain Rust. For the default rounding
//! mode (RNE) the common cases of `+ - * / sqrt`, the binary32 FMA and
//! binary64 -> binary32 narrowing take a host-arithmetic fast path that is
//! proven (and randomly tested) to give identical results *and* flags.
//!
//! # Conventions
//!
//! * `rm` is the RISC-V static rounding mode: [`RM_RNE`] (0), [`RM_RTZ`] (1),
//!   [`RM_RDN`] (2), [`RM_RUP`] (3), [`RM_RMM`] (4). The caller resolves the
//!   dynamic mode 7 from `frm` and traps on the reserved encodings 5 and 6
//!   before calling; passing them anyway is a logic error (debug assertion;
//!   release builds round to nearest-even).
//! * `flags: &mut u8` accumulates the RISC-V `fflags` bits raised by the
//!   operation: it is only ever ORed into, never cleared, so it can point
//!   straight at the hart's `fflags`. Bits: [`FLAG_NV`] 0x10, [`FLAG_DZ`]
//!   0x08, [`FLAG_OF`] 0x04, [`FLAG_UF`] 0x02, [`FLAG_NX`] 0x01.
//! * Every function whose instruction has an `rm` field takes `rm`; every
//!   function that can raise a flag takes `flags`. Classify, sign injection
//!   and NaN-boxing can do neither and take just their operands.
//! * binary32 operands must already be unboxed with [`unbox_f32`], and
//!   binary32 results must be NaN-boxed with [`box_f32`] before being written
//!   to an `f` register; likewise binary16 with [`unbox_f16`] / [`box_f16`].
//! * Results headed for an integer register are returned as the full 64-bit
//!   value the instruction writes: 32-bit integer results are sign-extended
//!   (so `fcvt.wu.s` of 3e9 yields `0xFFFF_FFFF_B2D0_5E00`), comparisons
//!   return `bool`, and classify returns the 10-bit mask as `u64`.
//! * Integer sources are taken as `u64` register values; the 32-bit variants
//!   (`i32_to_*`, `u32_to_*`) use only the low 32 bits.
//!
//! # API (naming scheme: `<format>_<operation>`, conversions `<from>_to_<to>`)
//!
//! | instruction(s) | binary32 (`u32`) | binary64 (`u64`) |
//! |---|---|---|
//! | `fadd fsub fmul fdiv` | [`f32_add`] [`f32_sub`] [`f32_mul`] [`f32_div`] `(a, b, rm, flags)` | [`f64_add`] [`f64_sub`] [`f64_mul`] [`f64_div`] |
//! | `fsqrt` | [`f32_sqrt`] `(a, rm, flags)` | [`f64_sqrt`] |
//! | `fmadd fmsub fnmsub fnmadd` | [`f32_fmadd`] [`f32_fmsub`] [`f32_fnmsub`] [`f32_fnmadd`] `(a, b, c, rm, flags)` | [`f64_fmadd`] [`f64_fmsub`] [`f64_fnmsub`] [`f64_fnmadd`] |
//! | `fmin fmax` | [`f32_min`] [`f32_max`] `(a, b, flags)` | [`f64_min`] [`f64_max`] |
//! | `feq flt fle` | [`f32_eq`] [`f32_lt`] [`f32_le`] `(a, b, flags) -> bool` | [`f64_eq`] [`f64_lt`] [`f64_le`] |
//! | `fclass` | [`f32_class`] `(a) -> u64` | [`f64_class`] |
//! | `fsgnj fsgnjn fsgnjx` | [`f32_sgnj`] [`f32_sgnjn`] [`f32_sgnjx`] `(a, b)` | [`f64_sgnj`] [`f64_sgnjn`] [`f64_sgnjx`] |
//! | `fcvt.d.s` / `fcvt.s.d` | [`f32_to_f64`] `(a, rm, flags) -> u64` | [`f64_to_f32`] `(a, rm, flags) -> u32` |
//! | `fcvt.{w,wu,l,lu}.{s,d}` | [`f32_to_i32`] [`f32_to_u32`] [`f32_to_i64`] [`f32_to_u64`] `(a, rm, flags) -> u64` | [`f64_to_i32`] [`f64_to_u32`] [`f64_to_i64`] [`f64_to_u64`] |
//! | `fcvt.{s,d}.{w,wu,l,lu}` | [`i32_to_f32`] [`u32_to_f32`] [`i64_to_f32`] [`u64_to_f32`] `(v: u64, rm, flags) -> u32` | [`i32_to_f64`] [`u32_to_f64`] [`i64_to_f64`] [`u64_to_f64`] `-> u64` |
//! | NaN-boxing | [`box_f32`] `(u32) -> u64`, [`unbox_f32`] `(u64) -> u32` | |
//!
//! binary16 (Zfh) has the same set with the `f16_` prefix (`f16_add`,
//! `f16_fmadd`, `f16_class`, `f16_to_i32`, `i32_to_f16`, ...), plus
//! [`f16_to_f32`], [`f16_to_f64`], [`f32_to_f16`], [`f64_to_f16`] and
//! [`box_f16`] / [`unbox_f16`]. Zfa adds, per format: [`fli_f16`]
//! [`fli_f32`] [`fli_f64`] `(rs1)`, `fminm`/`fmaxm` ([`f32_minm`]
//! [`f32_maxm`] ...), `fround`/`froundnx` ([`f32_round`] [`f32_roundnx`]
//! ...), `fltq`/`fleq` ([`f32_lt_quiet`] [`f32_le_quiet`] ...) and
//! [`f64_to_i32_mod`] (`fcvtmod.w.d`).
//!
//! Helpers: [`f32_is_nan`], [`f32_is_snan`], [`f64_is_nan`], [`f64_is_snan`]
//! (and `f16_`); constants [`F16_CANONICAL_NAN`], [`F32_CANONICAL_NAN`],
//! [`F64_CANONICAL_NAN`].
//!
//! # Thread safety
//!
//! SoftFloat's rounding mode and exception flags are thread-local C
//! variables; every call sets them up completely before use (see the private
//! `sf` module), so all functions here are safe to call from any thread.

#![warn(missing_docs)]

mod convert;
mod double;
mod fast;
mod half;
mod sf;
mod single;
mod zfa;

pub use convert::*;
pub use double::*;
pub use half::*;
pub use single::*;
pub use zfa::*;

#[cfg(test)]
mod half_tests;
#[cfg(test)]
mod ref_vectors;
#[cfg(test)]
mod tests;

/// Round to nearest, ties to even.
pub const RM_RNE: u8 = 0;
/// Round towards zero.
pub const RM_RTZ: u8 = 1;
/// Round down (towards -infinity).
pub const RM_RDN: u8 = 2;
/// Round up (towards +infinity).
pub const RM_RUP: u8 = 3;
/// Round to nearest, ties to max magnitude.
pub const RM_RMM: u8 = 4;

/// Invalid operation.
pub const FLAG_NV: u8 = 0x10;
/// Divide by zero.
pub const FLAG_DZ: u8 = 0x08;
/// Overflow.
pub const FLAG_OF: u8 = 0x04;
/// Underflow.
pub const FLAG_UF: u8 = 0x02;
/// Inexact.
pub const FLAG_NX: u8 = 0x01;
/// All five `fflags` bits.
pub const FLAG_MASK: u8 = 0x1f;

/// The RISC-V canonical binary16 NaN (`0x7e00`).
pub const F16_CANONICAL_NAN: u16 = 0x7e00;
/// The RISC-V canonical binary32 NaN (`0x7fc00000`).
pub const F32_CANONICAL_NAN: u32 = 0x7fc0_0000;
/// The RISC-V canonical binary64 NaN (`0x7ff8000000000000`).
pub const F64_CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// NaN-boxes a binary32 value for storage in a 64-bit `f` register (upper 32
/// bits all ones).
#[inline]
pub const fn box_f32(v: u32) -> u64 {
    0xffff_ffff_0000_0000 | v as u64
}

/// Reads a binary32 operand from a 64-bit `f` register: a properly NaN-boxed
/// value yields its low 32 bits, anything else the canonical NaN
/// `0x7fc00000`.
#[inline]
pub const fn unbox_f32(v: u64) -> u32 {
    if v >> 32 == 0xffff_ffff {
        v as u32
    } else {
        F32_CANONICAL_NAN
    }
}

/// NaN-boxes a binary16 value for storage in a 64-bit `f` register (upper 48
/// bits all ones).
#[inline]
pub const fn box_f16(v: u16) -> u64 {
    0xffff_ffff_ffff_0000 | v as u64
}

/// Reads a binary16 operand from a 64-bit `f` register: a properly NaN-boxed
/// value yields its low 16 bits, anything else the canonical NaN `0x7e00`.
#[inline]
pub const fn unbox_f16(v: u64) -> u16 {
    if v >> 16 == 0xffff_ffff_ffff {
        v as u16
    } else {
        F16_CANONICAL_NAN
    }
}

/// Validates a rounding mode: 0..=4 pass through; the reserved/dynamic
/// encodings are a caller bug (debug assertion) and fall back to RNE.
#[inline(always)]
fn rm_check(rm: u8) -> u8 {
    debug_assert!(rm <= RM_RMM, "invalid static rounding mode {rm}");
    if rm <= RM_RMM {
        rm
    } else {
        RM_RNE
    }
}

/// The bit-level parameters shared by the two formats, for the helpers
/// that are written once for both.
trait Format: Copy + Eq {
    const SIGN: Self;
    const EXP: Self;
    const QUIET: Self;
    const CANONICAL_NAN: Self;
    const ZERO: Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// `a < b` on the represented (non-NaN) numbers.
    fn num_lt(self, o: Self) -> bool;
    /// `a == b` on the represented (non-NaN) numbers (`-0 == +0`).
    fn num_eq(self, o: Self) -> bool;
}

macro_rules! impl_format {
    // A format the host has a float type for: compare as that type.
    ($raw:ty, $float:ty, $sign:expr, $exp:expr, $quiet:expr, $nan:expr) => {
        impl_format!($raw, $sign, $exp, $quiet, $nan, |a: $raw| {
            <$float>::from_bits(a)
        });
    };
    // Otherwise `$key` maps a non-NaN value to something ordered as it is.
    ($raw:ty, $sign:expr, $exp:expr, $quiet:expr, $nan:expr, $key:expr) => {
        impl Format for $raw {
            const SIGN: Self = $sign;
            const EXP: Self = $exp;
            const QUIET: Self = $quiet;
            const CANONICAL_NAN: Self = $nan;
            const ZERO: Self = 0;
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn num_lt(self, o: Self) -> bool {
                $key(self) < $key(o)
            }
            #[inline(always)]
            fn num_eq(self, o: Self) -> bool {
                $key(self) == $key(o)
            }
        }
    };
}

impl_format!(
    u32,
    f32,
    1 << 31,
    0x7f80_0000,
    0x0040_0000,
    F32_CANONICAL_NAN
);
impl_format!(
    u64,
    f64,
    1 << 63,
    0x7ff0_0000_0000_0000,
    0x0008_0000_0000_0000,
    F64_CANONICAL_NAN
);
// The host has no binary16 type: order non-NaN values by their
// sign-magnitude encoding (both zeros map to 0).
impl_format!(
    u16,
    1 << 15,
    0x7c00,
    0x0200,
    F16_CANONICAL_NAN,
    f16_order_key
);

/// A signed integer that orders non-NaN binary16 encodings like the numbers
/// they represent.
#[inline(always)]
fn f16_order_key(a: u16) -> i32 {
    let mag = i32::from(a & 0x7fff);
    if a & 0x8000 != 0 {
        -mag
    } else {
        mag
    }
}

#[inline(always)]
fn is_nan<T: Format>(a: T) -> bool {
    // exponent all ones and fraction non-zero  <=>  |a| > inf
    a.and(T::EXP) == T::EXP && a.and(T::SIGN.or(T::EXP).not()) != T::ZERO
}

#[inline(always)]
fn is_snan<T: Format>(a: T) -> bool {
    is_nan(a) && a.and(T::QUIET) == T::ZERO
}

/// `fmin`/`fmax` (IEEE 754-2019 minimumNumber/maximumNumber, RISC-V >= 2.2).
#[inline(always)]
fn min_max<T: Format>(a: T, b: T, max: bool, flags: &mut u8) -> T {
    let (an, bn) = (is_nan(a), is_nan(b));
    if an || bn {
        if is_snan(a) || is_snan(b) {
            *flags |= FLAG_NV;
        }
        return match (an, bn) {
            (true, true) => T::CANONICAL_NAN,
            (true, false) => b,
            _ => a,
        };
    }
    // -0 orders below +0.
    let a_first = if a.num_eq(b) {
        (a.and(T::SIGN) != T::ZERO) != max
    } else {
        a.num_lt(b) != max
    };
    if a_first {
        a
    } else {
        b
    }
}

/// Zfa `fminm`/`fmaxm` (IEEE 754-2019 minimum/maximum): like `fmin`/`fmax`
/// except that any NaN operand gives the canonical NaN.
#[inline(always)]
fn min_max_nan_propagating<T: Format>(a: T, b: T, max: bool, flags: &mut u8) -> T {
    if is_nan(a) || is_nan(b) {
        if is_snan(a) || is_snan(b) {
            *flags |= FLAG_NV;
        }
        return T::CANONICAL_NAN;
    }
    min_max(a, b, max, flags)
}

/// Zfa `fltq`/`fleq` (quiet comparisons): NV only for signalling NaNs.
#[inline(always)]
fn lt_le_quiet<T: Format>(a: T, b: T, or_equal: bool, flags: &mut u8) -> bool {
    if is_nan(a) || is_nan(b) {
        if is_snan(a) || is_snan(b) {
            *flags |= FLAG_NV;
        }
        return false;
    }
    a.num_lt(b) || (or_equal && a.num_eq(b))
}

/// `feq` (quiet): NV only for signalling NaNs.
#[inline(always)]
fn eq<T: Format>(a: T, b: T, flags: &mut u8) -> bool {
    if is_nan(a) || is_nan(b) {
        if is_snan(a) || is_snan(b) {
            *flags |= FLAG_NV;
        }
        return false;
    }
    a.num_eq(b)
}

/// `flt`/`fle` (signalling): NV for any NaN.
#[inline(always)]
fn lt_le<T: Format>(a: T, b: T, or_equal: bool, flags: &mut u8) -> bool {
    if is_nan(a) || is_nan(b) {
        *flags |= FLAG_NV;
        return false;
    }
    a.num_lt(b) || (or_equal && a.num_eq(b))
}

/// `fclass` mask.
#[inline(always)]
fn class<T: Format>(a: T) -> u64 {
    let neg = a.and(T::SIGN) != T::ZERO;
    let exp = a.and(T::EXP);
    let frac = a.and(T::SIGN.or(T::EXP).not());
    let bit = if exp == T::EXP {
        if frac == T::ZERO {
            if neg {
                0
            } else {
                7
            }
        } else if a.and(T::QUIET) != T::ZERO {
            9
        } else {
            8
        }
    } else if exp == T::ZERO {
        match (frac == T::ZERO, neg) {
            (true, true) => 3,
            (true, false) => 4,
            (false, true) => 2,
            (false, false) => 5,
        }
    } else if neg {
        1
    } else {
        6
    };
    1 << bit
}

#[inline(always)]
fn sgnj<T: Format>(a: T, sign: T) -> T {
    a.and(T::SIGN.not()).or(sign.and(T::SIGN))
}

#[inline(always)]
fn neg<T: Format>(a: T) -> T {
    a.xor(T::SIGN)
}
