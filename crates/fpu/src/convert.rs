//! Conversions: binary32 <-> binary64, float -> integer, integer -> float.
//!
//! Float -> integer follows RISC-V: the value is rounded per `rm`; if the
//! rounded value fits, it is returned (NX if it differs from the input);
//! otherwise NV is raised and the result saturates: NaN and too-large
//! positive values (including +inf) give the maximum, too-large negative
//! values (including -inf) the minimum of the target type. For the unsigned
//! types a negative input that rounds to 0 is *in* range (NX only), one that
//! rounds to -1 or below gives 0 with NV.
//!
//! The in-range case is computed with exact host operations for every
//! rounding mode; only NaN and out-of-range inputs go to SoftFloat.

use crate::half::f16_to_host;
use crate::{
    fast, rm_check, sf, F64_CANONICAL_NAN, FLAG_NV, FLAG_NX, RM_RDN, RM_RMM, RM_RNE, RM_RTZ, RM_RUP,
};

/// `fcvt.d.s`: widens binary32 to binary64. Always exact; a NaN becomes the
/// canonical NaN (NV if it was signalling). `rm` is ignored.
#[inline]
pub fn f32_to_f64(a: u32, rm: u8, flags: &mut u8) -> u64 {
    let _ = rm_check(rm);
    if crate::is_nan(a) {
        if crate::is_snan(a) {
            *flags |= FLAG_NV;
        }
        return F64_CANONICAL_NAN;
    }
    f64::from(f32::from_bits(a)).to_bits()
}

/// `fcvt.s.d`: narrows binary64 to binary32, rounded per `rm` (NaN ->
/// canonical NaN, NV if signalling; OF/UF/NX as appropriate).
#[inline]
pub fn f64_to_f32(a: u64, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        if let Some((r, f)) = fast::f64_to_f32(a) {
            *flags |= f;
            return r;
        }
    }
    sf::f64_to_f32(a, rm, flags)
}

/// Rounds `x` (any f64, possibly NaN/inf) to an integral value per `rm`,
/// exactly.
#[inline(always)]
fn round_integral(x: f64, rm: u8) -> f64 {
    match rm {
        RM_RTZ => x.trunc(),
        RM_RDN => x.floor(),
        RM_RUP => x.ceil(),
        RM_RMM => x.round(),
        _ => x.round_ties_even(),
    }
}

/// Generates a float -> integer conversion. `$lo..=$hi` is the target range
/// as f64 bounds on the rounded value (all exactly representable), `$host`
/// the host integer type used for the exact in-range cast, and `$ext` how the
/// result is widened to the 64-bit register value.
macro_rules! to_int {
    ($($(#[$doc:meta])* $name:ident($raw:ty => $widen:expr) via $sf:ident, $host:ty, $lo:expr, $hi:expr, $ext:expr;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name(a: $raw, rm: u8, flags: &mut u8) -> u64 {
            let rm = rm_check(rm);
            let x: f64 = $widen(a);
            let r = round_integral(x, rm);
            let ext: fn($host) -> u64 = $ext;
            // NaN is in no range.
            if ($lo..=$hi).contains(&r) {
                if r != x {
                    *flags |= FLAG_NX;
                }
                // `r` is integral and in range: the cast is exact.
                return ext(r as $host);
            }
            ext(sf::$sf(a, rm, flags))
        }
    )*};
}

fn widen_f32(a: u32) -> f64 {
    f64::from(f32::from_bits(a))
}

fn widen_f64(a: u64) -> f64 {
    f64::from_bits(a)
}

// 2^63 and 2^64 are exact in f64; the largest f64 below them are 2^63-1024
// and 2^64-2048, so `r < 2^63` is the same as `r <= i64::MAX` for integral r.
const TWO63: f64 = 9_223_372_036_854_775_808.0;
const TWO64: f64 = 18_446_744_073_709_551_616.0;
const I64_HI: f64 = TWO63 - 1024.0;
const U64_HI: f64 = TWO64 - 2048.0;

to_int! {
    /// `fcvt.w.h`: binary16 -> signed 32-bit, sign-extended to 64 bits.
    f16_to_i32(u16 => f16_to_host) via f16_to_i32, i32, -2_147_483_648.0, 2_147_483_647.0, |v| v as i64 as u64;
    /// `fcvt.wu.h`: binary16 -> unsigned 32-bit; the 32-bit result is
    /// sign-extended to 64 bits as the instruction writes it.
    f16_to_u32(u16 => f16_to_host) via f16_to_ui32, u32, 0.0, 4_294_967_295.0, |v| v as i32 as i64 as u64;
    /// `fcvt.l.h`: binary16 -> signed 64-bit.
    f16_to_i64(u16 => f16_to_host) via f16_to_i64, i64, -TWO63, I64_HI, |v| v as u64;
    /// `fcvt.lu.h`: binary16 -> unsigned 64-bit.
    f16_to_u64(u16 => f16_to_host) via f16_to_ui64, u64, 0.0, U64_HI, |v| v;
    /// `fcvt.w.s`: binary32 -> signed 32-bit, sign-extended to 64 bits.
    f32_to_i32(u32 => widen_f32) via f32_to_i32, i32, -2_147_483_648.0, 2_147_483_647.0, |v| v as i64 as u64;
    /// `fcvt.wu.s`: binary32 -> unsigned 32-bit; the 32-bit result is
    /// sign-extended to 64 bits as the instruction writes it.
    f32_to_u32(u32 => widen_f32) via f32_to_ui32, u32, 0.0, 4_294_967_295.0, |v| v as i32 as i64 as u64;
    /// `fcvt.l.s`: binary32 -> signed 64-bit.
    f32_to_i64(u32 => widen_f32) via f32_to_i64, i64, -TWO63, I64_HI, |v| v as u64;
    /// `fcvt.lu.s`: binary32 -> unsigned 64-bit.
    f32_to_u64(u32 => widen_f32) via f32_to_ui64, u64, 0.0, U64_HI, |v| v;
    /// `fcvt.w.d`: binary64 -> signed 32-bit, sign-extended to 64 bits.
    f64_to_i32(u64 => widen_f64) via f64_to_i32, i32, -2_147_483_648.0, 2_147_483_647.0, |v| v as i64 as u64;
    /// `fcvt.wu.d`: binary64 -> unsigned 32-bit; the 32-bit result is
    /// sign-extended to 64 bits as the instruction writes it.
    f64_to_u32(u64 => widen_f64) via f64_to_ui32, u32, 0.0, 4_294_967_295.0, |v| v as i32 as i64 as u64;
    /// `fcvt.l.d`: binary64 -> signed 64-bit.
    f64_to_i64(u64 => widen_f64) via f64_to_i64, i64, -TWO63, I64_HI, |v| v as u64;
    /// `fcvt.lu.d`: binary64 -> unsigned 64-bit.
    f64_to_u64(u64 => widen_f64) via f64_to_ui64, u64, 0.0, U64_HI, |v| v;
}

/// `fcvt.s.w`: signed 32-bit (low 32 bits of `v`) -> binary32, rounded per
/// `rm` (NX if inexact).
#[inline]
pub fn i32_to_f32(v: u64, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    let v = v as u32 as i32;
    if rm == RM_RNE {
        let r = v as f32; // Rust: round to nearest, ties to even
        if i64::from(v) != r as i64 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::i32_to_f32(v, rm, flags)
}

/// `fcvt.s.wu`: unsigned 32-bit (low 32 bits of `v`) -> binary32, rounded
/// per `rm` (NX if inexact).
#[inline]
pub fn u32_to_f32(v: u64, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    let v = v as u32;
    if rm == RM_RNE {
        let r = v as f32;
        if u64::from(v) != r as u64 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::ui32_to_f32(v, rm, flags)
}

/// `fcvt.s.l`: signed 64-bit -> binary32, rounded per `rm` (NX if inexact).
#[inline]
pub fn i64_to_f32(v: u64, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    let v = v as i64;
    if rm == RM_RNE {
        let r = v as f32;
        if i128::from(v) != r as i128 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::i64_to_f32(v, rm, flags)
}

/// `fcvt.s.lu`: unsigned 64-bit -> binary32, rounded per `rm` (NX if
/// inexact).
#[inline]
pub fn u64_to_f32(v: u64, rm: u8, flags: &mut u8) -> u32 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        let r = v as f32;
        if u128::from(v) != r as u128 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::ui64_to_f32(v, rm, flags)
}

/// `fcvt.d.w`: signed 32-bit (low 32 bits of `v`) -> binary64. Always
/// exact; `rm` is ignored and no flag is ever raised.
#[inline]
pub fn i32_to_f64(v: u64, rm: u8, flags: &mut u8) -> u64 {
    let _ = (rm_check(rm), flags);
    f64::from(v as u32 as i32).to_bits()
}

/// `fcvt.d.wu`: unsigned 32-bit (low 32 bits of `v`) -> binary64. Always
/// exact; `rm` is ignored and no flag is ever raised.
#[inline]
pub fn u32_to_f64(v: u64, rm: u8, flags: &mut u8) -> u64 {
    let _ = (rm_check(rm), flags);
    f64::from(v as u32).to_bits()
}

/// `fcvt.d.l`: signed 64-bit -> binary64, rounded per `rm` (NX if inexact).
#[inline]
pub fn i64_to_f64(v: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    let v = v as i64;
    if rm == RM_RNE {
        let r = v as f64;
        if i128::from(v) != r as i128 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::i64_to_f64(v, rm, flags)
}

/// `fcvt.d.lu`: unsigned 64-bit -> binary64, rounded per `rm` (NX if
/// inexact).
#[inline]
pub fn u64_to_f64(v: u64, rm: u8, flags: &mut u8) -> u64 {
    let rm = rm_check(rm);
    if rm == RM_RNE {
        let r = v as f64;
        if u128::from(v) != r as u128 {
            *flags |= FLAG_NX;
        }
        return r.to_bits();
    }
    sf::ui64_to_f64(v, rm, flags)
}

/// SoftFloat-only versions of the conversions that have host fast paths, for
/// the differential tests.
#[cfg(test)]
pub(crate) mod reference {
    use crate::sf;

    pub(crate) fn f64_to_f32(a: u64, rm: u8, flags: &mut u8) -> u32 {
        sf::f64_to_f32(a, rm, flags)
    }
    pub(crate) fn f32_to_f64(a: u32, _rm: u8, flags: &mut u8) -> u64 {
        sf::f32_to_f64(a, flags)
    }
    pub(crate) fn f16_to_i32(a: u16, rm: u8, f: &mut u8) -> u64 {
        sf::f16_to_i32(a, rm, f) as i64 as u64
    }
    pub(crate) fn f16_to_u32(a: u16, rm: u8, f: &mut u8) -> u64 {
        sf::f16_to_ui32(a, rm, f) as i32 as i64 as u64
    }
    pub(crate) fn f16_to_i64(a: u16, rm: u8, f: &mut u8) -> u64 {
        sf::f16_to_i64(a, rm, f) as u64
    }
    pub(crate) fn f16_to_u64(a: u16, rm: u8, f: &mut u8) -> u64 {
        sf::f16_to_ui64(a, rm, f)
    }
    pub(crate) fn f32_to_i32(a: u32, rm: u8, f: &mut u8) -> u64 {
        sf::f32_to_i32(a, rm, f) as i64 as u64
    }
    pub(crate) fn f32_to_u32(a: u32, rm: u8, f: &mut u8) -> u64 {
        sf::f32_to_ui32(a, rm, f) as i32 as i64 as u64
    }
    pub(crate) fn f32_to_i64(a: u32, rm: u8, f: &mut u8) -> u64 {
        sf::f32_to_i64(a, rm, f) as u64
    }
    pub(crate) fn f32_to_u64(a: u32, rm: u8, f: &mut u8) -> u64 {
        sf::f32_to_ui64(a, rm, f)
    }
    pub(crate) fn f64_to_i32(a: u64, rm: u8, f: &mut u8) -> u64 {
        sf::f64_to_i32(a, rm, f) as i64 as u64
    }
    pub(crate) fn f64_to_u32(a: u64, rm: u8, f: &mut u8) -> u64 {
        sf::f64_to_ui32(a, rm, f) as i32 as i64 as u64
    }
    pub(crate) fn f64_to_i64(a: u64, rm: u8, f: &mut u8) -> u64 {
        sf::f64_to_i64(a, rm, f) as u64
    }
    pub(crate) fn f64_to_u64(a: u64, rm: u8, f: &mut u8) -> u64 {
        sf::f64_to_ui64(a, rm, f)
    }
    pub(crate) fn i32_to_f32(v: u64, rm: u8, f: &mut u8) -> u32 {
        sf::i32_to_f32(v as u32 as i32, rm, f)
    }
    pub(crate) fn u32_to_f32(v: u64, rm: u8, f: &mut u8) -> u32 {
        sf::ui32_to_f32(v as u32, rm, f)
    }
    pub(crate) fn i64_to_f32(v: u64, rm: u8, f: &mut u8) -> u32 {
        sf::i64_to_f32(v as i64, rm, f)
    }
    pub(crate) fn u64_to_f32(v: u64, rm: u8, f: &mut u8) -> u32 {
        sf::ui64_to_f32(v, rm, f)
    }
    pub(crate) fn i32_to_f64(v: u64, rm: u8, f: &mut u8) -> u64 {
        sf::i32_to_f64(v as u32 as i32, rm, f)
    }
    pub(crate) fn u32_to_f64(v: u64, rm: u8, f: &mut u8) -> u64 {
        sf::ui32_to_f64(v as u32, rm, f)
    }
    pub(crate) fn i64_to_f64(v: u64, rm: u8, f: &mut u8) -> u64 {
        sf::i64_to_f64(v as i64, rm, f)
    }
    pub(crate) fn u64_to_f64(v: u64, rm: u8, f: &mut u8) -> u64 {
        sf::ui64_to_f64(v, rm, f)
    }
}
