//! The only place in the crate that talks to Berkeley SoftFloat (through
//! `softfloat-sys`), and therefore the only place with `unsafe` code.
//!
//! # Soundness
//!
//! SoftFloat keeps its dynamic state — the rounding mode
//! `softfloat_roundingMode` and the sticky `softfloat_exceptionFlags` — in C
//! globals. `softfloat-sys` compiles them as `_Thread_local` (its build script
//! defines `THREAD_LOCAL` to `_Thread_local`/`__thread`) and exposes them only
//! through tiny C accessor functions (`*_read_helper` / `*_write_helper`), so
//! every thread has its own copy and no data race is possible, even if several
//! harts were ever emulated on several threads.
//!
//! All SoftFloat arithmetic entry points used here take and return plain
//! integers / `#[repr(C)]` structs of integers by value, dereference no
//! pointers supplied by us, cannot fail and have no preconditions: every bit
//! pattern is a valid input. Calling them is therefore always memory-safe; the
//! `unsafe` is only required because they are `extern "C"`.
//!
//! # Protocol
//!
//! Every operation runs as: set the rounding mode, clear the exception
//! flags, call SoftFloat, read the flags and OR them into the caller's
//! accumulator. Because the state is thread-local and each operation sets it
//! completely before use, state left behind by any other user of
//! `softfloat-sys` in the same thread cannot influence our results.
//!
//! SoftFloat's flag bits (`inexact=1, underflow=2, overflow=4, infinite=8,
//! invalid=16`) coincide with the RISC-V `fflags` bits (NX, UF, OF, DZ, NV),
//! and its rounding-mode numbering (`near_even=0, minMag=1, min=2, max=3,
//! near_maxMag=4`) coincides with the RISC-V `rm` encodings 0..=4, so no
//! translation is needed in either direction (checked by the `const`
//! assertions below).

use softfloat_sys as s;
use softfloat_sys::{float16_t, float32_t, float64_t};

const _: () = {
    assert!(s::softfloat_round_near_even == crate::RM_RNE);
    assert!(s::softfloat_round_minMag == crate::RM_RTZ);
    assert!(s::softfloat_round_min == crate::RM_RDN);
    assert!(s::softfloat_round_max == crate::RM_RUP);
    assert!(s::softfloat_round_near_maxMag == crate::RM_RMM);
    assert!(s::softfloat_flag_inexact == crate::FLAG_NX);
    assert!(s::softfloat_flag_underflow == crate::FLAG_UF);
    assert!(s::softfloat_flag_overflow == crate::FLAG_OF);
    assert!(s::softfloat_flag_infinite == crate::FLAG_DZ);
    assert!(s::softfloat_flag_invalid == crate::FLAG_NV);
};

/// Sets SoftFloat's (thread-local) rounding mode and clears its (thread-local)
/// exception flags.
#[inline]
fn begin(rm: u8) {
    // SAFETY: the helper only stores its by-value argument into SoftFloat's
    // thread-local `softfloat_roundingMode`; no pointers are involved and the
    // variable is private to this thread, so there can be no data race.
    unsafe { s::softfloat_roundingMode_write_helper(rm) };
    begin_flags();
}

/// Clears SoftFloat's (thread-local) exception flags.
#[inline]
fn begin_flags() {
    // SAFETY: the helper only stores 0 into SoftFloat's thread-local
    // `softfloat_exceptionFlags`; see `begin`.
    unsafe { s::softfloat_exceptionFlags_write_helper(0) };
}

/// ORs the exception flags raised since `begin`/`begin_flags` into `flags`.
#[inline]
fn end(flags: &mut u8) {
    // SAFETY: the helper only loads SoftFloat's thread-local
    // `softfloat_exceptionFlags`; see `begin`.
    let raised = unsafe { s::softfloat_exceptionFlags_read_helper() };
    *flags |= raised & crate::FLAG_MASK;
}

/// Generates `fn name(a, b, rm, flags)` wrappers for two-operand operations.
macro_rules! binary {
    ($($name:ident: $raw:ty, $ty:ident;)*) => {$(
        #[inline]
        pub(crate) fn $name(a: $raw, b: $raw, rm: u8, flags: &mut u8) -> $raw {
            begin(rm);
            // SAFETY: pure SoftFloat arithmetic on by-value operands; any bit
            // pattern is a valid input (see the module documentation).
            let r = unsafe { s::$name($ty { v: a }, $ty { v: b }) };
            end(flags);
            r.v
        }
    )*};
}

binary! {
    f16_add: u16, float16_t;
    f16_sub: u16, float16_t;
    f16_mul: u16, float16_t;
    f16_div: u16, float16_t;
    f32_add: u32, float32_t;
    f32_sub: u32, float32_t;
    f32_mul: u32, float32_t;
    f32_div: u32, float32_t;
    f64_add: u64, float64_t;
    f64_sub: u64, float64_t;
    f64_mul: u64, float64_t;
    f64_div: u64, float64_t;
}

/// `sqrt(a)` for binary16.
#[inline]
pub(crate) fn f16_sqrt(a: u16, rm: u8, flags: &mut u8) -> u16 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on a by-value operand.
    let r = unsafe { s::f16_sqrt(float16_t { v: a }) };
    end(flags);
    r.v
}

/// `sqrt(a)` for binary32.
#[inline]
pub(crate) fn f32_sqrt(a: u32, rm: u8, flags: &mut u8) -> u32 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on a by-value operand.
    let r = unsafe { s::f32_sqrt(float32_t { v: a }) };
    end(flags);
    r.v
}

/// `sqrt(a)` for binary64.
#[inline]
pub(crate) fn f64_sqrt(a: u64, rm: u8, flags: &mut u8) -> u64 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on a by-value operand.
    let r = unsafe { s::f64_sqrt(float64_t { v: a }) };
    end(flags);
    r.v
}

/// Fused `a*b + c` for binary16 (single rounding).
#[inline]
pub(crate) fn f16_mul_add(a: u16, b: u16, c: u16, rm: u8, flags: &mut u8) -> u16 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on by-value operands.
    let r = unsafe { s::f16_mulAdd(float16_t { v: a }, float16_t { v: b }, float16_t { v: c }) };
    end(flags);
    r.v
}

/// Fused `a*b + c` for binary32 (single rounding).
#[inline]
pub(crate) fn f32_mul_add(a: u32, b: u32, c: u32, rm: u8, flags: &mut u8) -> u32 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on by-value operands.
    let r = unsafe { s::f32_mulAdd(float32_t { v: a }, float32_t { v: b }, float32_t { v: c }) };
    end(flags);
    r.v
}

/// Fused `a*b + c` for binary64 (single rounding).
#[inline]
pub(crate) fn f64_mul_add(a: u64, b: u64, c: u64, rm: u8, flags: &mut u8) -> u64 {
    begin(rm);
    // SAFETY: pure SoftFloat arithmetic on by-value operands.
    let r = unsafe { s::f64_mulAdd(float64_t { v: a }, float64_t { v: b }, float64_t { v: c }) };
    end(flags);
    r.v
}

/// binary32 -> binary64 (exact; NaNs become the canonical NaN). Test
/// oracle only: the crate implements this conversion in plain Rust.
#[cfg(test)]
pub(crate) fn f32_to_f64(a: u32, flags: &mut u8) -> u64 {
    begin_flags();
    // SAFETY: pure SoftFloat conversion on a by-value operand.
    let r = unsafe { s::f32_to_f64(float32_t { v: a }) };
    end(flags);
    r.v
}

/// binary64 -> binary32, rounded according to `rm`.
#[inline]
pub(crate) fn f64_to_f32(a: u64, rm: u8, flags: &mut u8) -> u32 {
    begin(rm);
    // SAFETY: pure SoftFloat conversion on a by-value operand.
    let r = unsafe { s::f64_to_f32(float64_t { v: a }) };
    end(flags);
    r.v
}

/// Generates conversions between float formats (rounding mode from `rm`;
/// the widening ones are exact and ignore it).
macro_rules! float_to_float {
    ($($name:ident: $from:ty, $fty:ident => $to:ty;)*) => {$(
        #[inline]
        pub(crate) fn $name(a: $from, rm: u8, flags: &mut u8) -> $to {
            begin(rm);
            // SAFETY: pure SoftFloat conversion on a by-value operand.
            let r = unsafe { s::$name($fty { v: a }) };
            end(flags);
            r.v
        }
    )*};
}

float_to_float! {
    f16_to_f32: u16, float16_t => u32;
    f16_to_f64: u16, float16_t => u64;
    f32_to_f16: u32, float32_t => u16;
    f64_to_f16: u64, float64_t => u16;
}

/// Generates round-to-integral wrappers (`exact = true` raises inexact when
/// the value changes).
macro_rules! round_to_int {
    ($($name:ident = $sf:ident: $raw:ty, $ty:ident;)*) => {$(
        #[inline]
        pub(crate) fn $name(a: $raw, rm: u8, exact: bool, flags: &mut u8) -> $raw {
            begin_flags();
            // SAFETY: pure SoftFloat operation on by-value operands; `rm` is
            // one of the five modes SoftFloat defines (checked by callers).
            let r = unsafe { s::$sf($ty { v: a }, rm, exact) };
            end(flags);
            r.v
        }
    )*};
}

round_to_int! {
    f16_round_to_int = f16_roundToInt: u16, float16_t;
    f32_round_to_int = f32_roundToInt: u32, float32_t;
    f64_round_to_int = f64_roundToInt: u64, float64_t;
}

/// Generates float -> integer wrappers. SoftFloat takes the rounding mode as
/// an argument here; `exact = true` makes it raise inexact.
macro_rules! to_int {
    ($($name:ident: $raw:ty, $ty:ident -> $out:ty;)*) => {$(
        #[inline]
        pub(crate) fn $name(a: $raw, rm: u8, flags: &mut u8) -> $out {
            begin_flags();
            // SAFETY: pure SoftFloat conversion on by-value operands; `rm` is
            // one of the five modes SoftFloat defines (checked by callers).
            let r = unsafe { s::$name($ty { v: a }, rm, true) };
            end(flags);
            // The C return type is a `*_fast*_t`, which may be wider than the
            // result; SoftFloat guarantees the value fits in `$out`.
            r as $out
        }
    )*};
}

to_int! {
    f16_to_i32: u16, float16_t -> i32;
    f16_to_ui32: u16, float16_t -> u32;
    f16_to_i64: u16, float16_t -> i64;
    f16_to_ui64: u16, float16_t -> u64;
    f32_to_i32: u32, float32_t -> i32;
    f32_to_ui32: u32, float32_t -> u32;
    f32_to_i64: u32, float32_t -> i64;
    f32_to_ui64: u32, float32_t -> u64;
    f64_to_i32: u64, float64_t -> i32;
    f64_to_ui32: u64, float64_t -> u32;
    f64_to_i64: u64, float64_t -> i64;
    f64_to_ui64: u64, float64_t -> u64;
}

/// Generates integer -> float wrappers (rounding mode from `rm`).
macro_rules! from_int {
    ($($name:ident: $int:ty => $raw:ty;)*) => {$(
        #[inline]
        pub(crate) fn $name(v: $int, rm: u8, flags: &mut u8) -> $raw {
            begin(rm);
            // SAFETY: pure SoftFloat conversion on a by-value operand.
            let r = unsafe { s::$name(v) };
            end(flags);
            r.v
        }
    )*};
}

from_int! {
    i32_to_f16: i32 => u16;
    ui32_to_f16: u32 => u16;
    i64_to_f16: i64 => u16;
    ui64_to_f16: u64 => u16;
    i32_to_f32: i32 => u32;
    ui32_to_f32: u32 => u32;
    i64_to_f32: i64 => u32;
    ui64_to_f32: u64 => u32;
    i64_to_f64: i64 => u64;
    ui64_to_f64: u64 => u64;
}

// Exact conversions the crate implements in plain Rust; SoftFloat's versions
// serve as test oracles only.
#[cfg(test)]
from_int! {
    i32_to_f64: i32 => u64;
    ui32_to_f64: u32 => u64;
}

/// SoftFloat's own comparisons, used only to cross-check the pure-Rust
/// implementations in tests.
#[cfg(test)]
pub(crate) mod cmp {
    use super::*;

    macro_rules! cmp {
        ($($name:ident: $raw:ty, $ty:ident;)*) => {$(
            pub(crate) fn $name(a: $raw, b: $raw, flags: &mut u8) -> bool {
                begin_flags();
                // SAFETY: pure SoftFloat comparison on by-value operands.
                let r = unsafe { s::$name($ty { v: a }, $ty { v: b }) };
                end(flags);
                r
            }
        )*};
    }

    cmp! {
        f16_eq: u16, float16_t;
        f16_lt: u16, float16_t;
        f16_le: u16, float16_t;
        f16_lt_quiet: u16, float16_t;
        f16_le_quiet: u16, float16_t;
        f32_le_quiet: u32, float32_t;
        f64_le_quiet: u64, float64_t;
        f32_eq: u32, float32_t;
        f32_lt: u32, float32_t;
        f32_le: u32, float32_t;
        f32_lt_quiet: u32, float32_t;
        f64_eq: u64, float64_t;
        f64_lt: u64, float64_t;
        f64_le: u64, float64_t;
        f64_lt_quiet: u64, float64_t;
    }
}
