//! The instruction table: every instruction declared once, one file per
//! extension. Each line gives the operation ([`Op`] variant), its mnemonic,
//! its encoding (`mask => match`, several alternatives separated by `|`),
//! its disassembly [`Format`], its [`CostClass`] and the extension it needs.
//! From the table come the [`Op`] enum itself, [`Op::mnemonic`] (and so the
//! disassembler), [`Op::extension`] (`op_extension`, `fp_extension` and
//! `decode_for`'s checks), [`Op::cost_class`] (the hart's cost model) and
//! [`Op::encodings`], from which the decoder (`decode.rs`) is built; tests
//! decode every table pattern with random don't-care bits and random words,
//! and check they agree with the table.
//!
//! The extension column is an [`Ext`] name, `Base` (no extension), or for
//! the optional floating-point extensions `Zfhmin`, `Zfh`, `Zfa`, `ZfaZfh`
//! (Zfa's half-precision forms, which need Zfh too); `+D` marks an
//! operation that also needs D.
//!
//! Each file also declares the extensions it brings (an `extensions` block:
//! [`Ext`]'s variants, their names and hwprobe bits), so adding an extension
//! is a new file here whose macro (named as the file) lists them and its
//! instructions, and its name in the `extension_files!` list below. Each
//! file's macro appends its lines to the lists it is handed and passes
//! everything on to the next file's (`isa_chain!`); the last hands the
//! whole lists to `define_extensions!` and `define_isa!`, and each file's
//! own lines to `define_dispatch!`, whose `dispatch_ops!` is the
//! interpreter's dispatch: each operation to its file's execute function
//! (`crates/hart/src/exec/NAME.rs` for `insns/NAME.rs`).

use crate::bits::{clmul, orc_b, sext32, zext32};
use crate::decode_fp_ext::FpExtension;

/// How the disassembler prints an operation's operands (see `disasm.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Format {
    /// The mnemonic alone.
    Bare,
    U,
    J,
    Jalr,
    B,
    LoadX,
    LoadF,
    StoreX,
    StoreF,
    Imm,
    Shamt,
    Rrr,
    Rr,
    Prefetch,
    MopR,
    MopRr,
    CMop,
    Fence,
    Csr,
    CsrI,
    Lr,
    Amo,
    F4,
    F3Rm,
    F2Rm,
    F2Exact,
    F3,
    XFRm,
    FXRm,
    FXExact,
    XF,
    XFF,
    FX,
    Fli,
    Sfence,
    Cflush,
    Cbo,
}

/// The in-order core's cost class of an operation (`rvnvmm-hart`'s
/// `cost.rs` turns it into cycles and a shared unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostClass {
    /// Single-cycle integer work (and everything not listed below).
    Alu,
    /// A load (integer, FP or `lr`): the load-use stall applies after it.
    Load,
    /// Other users of the load/store port: stores, `sc`, AMOs, cache-block
    /// operations, `prefetch.r/w`.
    Store,
    /// Integer multiply.
    Mul,
    /// Carry-less multiply.
    Clmul,
    /// Integer divide and remainder.
    Div,
    /// FP divide and square root.
    Fdiv,
    /// Other FP computation.
    Fpu,
    /// `jal`: an ALU operation plus the taken-branch penalty, always.
    Jal,
}

/// What the table says about one operation.
#[derive(Debug)]
pub struct OpInfo {
    /// The assembler mnemonic (without `.aq`/`.rl` or `.N` suffixes).
    pub mnemonic: &'static str,
    /// How its operands print.
    pub format: Format,
    /// Its cost class.
    pub cost: CostClass,
    /// The extension it belongs to (`None`: the base ISA, or governed by
    /// something else, as `cflush.d.l1`).
    pub ext: Option<Ext>,
    /// The optional FP extension(s) it needs, for those.
    pub fp: Option<FpExtension>,
    /// Whether it also needs D.
    pub needs_d: bool,
    /// Its encodings: `(mask, match)` pairs (a 16-bit pattern for a
    /// compressed-only operation).
    pub encodings: &'static [(u32, u32)],
    /// For a register operation declared with `exec`: its result from the
    /// value of `rs1` and the second operand (see [`execute`], which the
    /// interpreter runs).
    pub exec: Option<fn(u64, u64) -> u64>,
}

macro_rules! ext_of {
    (Base) => {
        None
    };
    (Zfhmin) => {
        Some(Ext::Zfhmin)
    };
    (ZfaZfh) => {
        Some(Ext::Zfa)
    };
    ($e:ident) => {
        Some(Ext::$e)
    };
}

macro_rules! fp_of {
    (Zfhmin) => {
        Some(FpExtension::Zfhmin)
    };
    (Zfh) => {
        Some(FpExtension::Zfh)
    };
    (Zfa) => {
        Some(FpExtension::Zfa)
    };
    (ZfaZfh) => {
        Some(FpExtension::ZfaAndZfh)
    };
    ($e:ident) => {
        None
    };
}

macro_rules! d_of {
    () => {
        false
    };
    (D) => {
        true
    };
}

/// Passes the extensions and the table collected so far, and each file's
/// own lines under its name, to the next extension file's macro, or once
/// there is none, to `define_extensions!`, `define_isa!` and
/// `define_dispatch!`. (`$d` is a `$`, for the macro `define_dispatch!`
/// defines.)
macro_rules! isa_chain {
    ($d:tt [$next:ident $($rest:ident)*] ($file:ident) [$($exts:tt)*] [$($acc:tt)*]
        [$($files:tt)*] ; extensions { $($ext:tt)* } $($new:tt)*) => {
        $next! {
            $d [$($rest)*] ($next) [$($exts)* $($ext)*] [$($acc)* $($new)*]
            [$($files)* $file { $($new)* }]
        }
    };
    ($d:tt [] ($file:ident) [$($exts:tt)*] [$($acc:tt)*] [$($files:tt)*] ;
        extensions { $($ext:tt)* } $($new:tt)*) => {
        define_extensions! { $($exts)* $($ext)* }
        define_isa! { $($acc)* $($new)* }
        define_dispatch! { $d $($files)* $file { $($new)* } }
    };
}

/// Defines [`Ext`] from the extension files' `extensions` blocks: one line
/// each, with the name as `riscv,isa` spells it and the bit of
/// `RISCV_HWPROBE_KEY_IMA_EXT_0` Linux assigns it (`None`: not reported
/// there). [`Ext::ALL`] lists them in the canonical order of an ISA string
/// whatever the files' order (see [`canonical_before`]).
macro_rules! define_extensions {
    ($( $(#[$m:meta])* $variant:ident = $name:literal, hwprobe $hw:expr; )+) => {
        /// One ISA extension the emulator implements.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Ext {
            $( $(#[$m])* $variant, )+
        }

        const DECLARED: &[Ext] = &[$(Ext::$variant),+];

        impl Ext {
            /// Every extension, in canonical order.
            pub const ALL: &'static [Ext] = &canonical_order::<{ DECLARED.len() }>();

            /// The lower-case name (`m`, `zba`, ...).
            pub const fn name(self) -> &'static str {
                match self { $( Ext::$variant => $name, )+ }
            }

            /// Its bit in `riscv_hwprobe`'s `IMA_EXT_0` value, if Linux
            /// reports it there.
            pub const fn hwprobe_bit(self) -> Option<u32> {
                match self { $( Ext::$variant => $hw, )+ }
            }
        }
    };
}

/// The declared extensions sorted into an ISA string's canonical order.
const fn canonical_order<const N: usize>() -> [Ext; N] {
    let mut out = [Ext::I; N];
    let mut k = 0;
    while k < N {
        out[k] = DECLARED[k];
        k += 1;
    }
    // Insertion sort: `const` has no `sort`, and there are a few dozen.
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && canonical_before(out[j].name(), out[j - 1].name()) {
            let t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    out
}

/// Whether extension `a` comes before `b` in an ISA string: single letters
/// in `IMAFDQLCBKJTPVH` order, then `Z` extensions by the category letter
/// after the `Z` in that order and alphabetically within it, then `S`
/// extensions, then custom `X` ones, each alphabetically.
const fn canonical_before(a: &str, b: &str) -> bool {
    let (ka, kb) = (canonical_key(a.as_bytes()), canonical_key(b.as_bytes()));
    if ka.0 != kb.0 {
        return ka.0 < kb.0;
    }
    if ka.1 != kb.1 {
        return ka.1 < kb.1;
    }
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

/// (kind, letter rank) of a name: kind 0 single letter, 1 `z`, 2 `s`,
/// 3 `x` (and anything else).
const fn canonical_key(name: &[u8]) -> (u8, u8) {
    const LETTERS: &[u8] = b"imafdqlcbkjtpvh";
    const fn rank(c: u8) -> u8 {
        let mut i = 0;
        while i < LETTERS.len() {
            if LETTERS[i] == c {
                return i as u8;
            }
            i += 1;
        }
        LETTERS.len() as u8
    }
    match name {
        [c] => (0, rank(*c)),
        [b'z', c, ..] => (1, rank(*c)),
        [b's', ..] => (2, 0),
        _ => (3, 0),
    }
}

/// The second operand an `exec` sees: the immediate of an I-type format,
/// else `rs2`'s value.
macro_rules! second_operand {
    (Shamt, $rs2:expr, $imm:expr) => {
        $imm as u64
    };
    (Imm, $rs2:expr, $imm:expr) => {
        $imm as u64
    };
    ($fmt:ident, $rs2:expr, $imm:expr) => {
        $rs2
    };
}

macro_rules! exec_of {
    () => {
        None
    };
    ($f:expr) => {
        Some($f)
    };
}

macro_rules! define_isa {
    ($(
        $op:ident $mn:literal $($mask:literal => $match:literal)|+ ,
        $fmt:ident , $cls:ident , $ext:ident $(+ $d:ident)? $(, exec $f:expr)? ;
    )*) => {
        /// Every operation the emulator executes, in table order.
        /// Compressed instructions decode to the same operations as their
        /// 32-bit expansions. (More than 256 of them: `u16`, which still
        /// leaves [`Insn`](crate::Insn) at 16 bytes.)
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u16)]
        #[allow(missing_docs)]
        pub enum Op {
            /// Not a valid or implemented encoding: raises
            /// illegal-instruction.
            Illegal,
            $($op,)*
        }

        impl Op {
            /// Every operation, `Illegal` first, in table order.
            pub const ALL: &'static [Op] = &[Op::Illegal, $(Op::$op,)*];
        }

        /// Runs a register operation whose table entry declares its
        /// `exec`: its result from `rs1`'s value and the second operand
        /// (`rs2`'s value, or the immediate for the `Shamt` and `Imm`
        /// formats); `None` for any other operation. Inlined into the
        /// interpreter's dispatch.
        #[inline(always)]
        pub fn execute(op: Op, rs1: u64, rs2: u64, imm: i64) -> Option<u64> {
            match op {
                $($(Op::$op => {
                    let f: fn(u64, u64) -> u64 = $f;
                    Some(f(rs1, second_operand!($fmt, rs2, imm)))
                })?)*
                _ => None,
            }
        }

        static OP_INFO: &[OpInfo] = &[
            OpInfo {
                mnemonic: "illegal",
                format: Format::Bare,
                cost: CostClass::Alu,
                ext: None,
                fp: None,
                needs_d: false,
                encodings: &[],
                exec: None,
            },
            $(OpInfo {
                mnemonic: $mn,
                format: Format::$fmt,
                cost: CostClass::$cls,
                ext: ext_of!($ext),
                fp: fp_of!($ext),
                needs_d: d_of!($($d)?),
                encodings: &[$(($mask, $match)),+],
                exec: exec_of!($($f)?),
            },)*
        ];
    };
}

/// Defines `dispatch_ops!` from each extension file's operations.
macro_rules! define_dispatch {
    ($d:tt $( $file:ident { $(
        $op:ident $mn:literal $($mask:literal => $match:literal)|+ ,
        $fmt:ident , $cls:ident , $ext:ident $(+ $d2:ident)? $(, exec $f:expr)? ;
    )* } )*) => {
        /// The interpreter's dispatch: `dispatch_ops!(op, arm)` is a
        /// `match` on `op` with one arm per operation, `Op::X =>
        /// arm!(NAME, X)`, `NAME` the extension file declaring `X`
        /// (`insns/NAME.rs`; `illegal` for `Op::Illegal`, `exec` for an
        /// operation declared with `exec`, run by [`execute`]). The caller's
        /// `arm!` has a rule per file sending its operations to that
        /// extension's execute function (an inlined one, given the
        /// operation as a constant, keeps only that operation's code: the
        /// `match` stays one jump table). A file without a rule does not
        /// compile.
        #[macro_export]
        macro_rules! dispatch_ops {
            ($d scrutinee:expr, $d arm:ident) => {
                match $d scrutinee {
                    $crate::Op::Illegal => $d arm!(illegal, Illegal),
                    $( $(
                        $crate::Op::$op => $crate::dispatch_arm!($d arm, $file, $op $(, $f)?),
                    )* )*
                }
            };
        }
    };
}

/// One arm of `dispatch_ops!`: `arm!(NAME, X)`, or `arm!(exec, X)` for an
/// operation declared with `exec` (whatever its file).
#[doc(hidden)]
#[macro_export]
macro_rules! dispatch_arm {
    ($arm:ident, $file:ident, $op:ident) => {
        $arm!($file, $op)
    };
    ($arm:ident, $file:ident, $op:ident, $f:expr) => {
        $arm!(exec, $op)
    };
}

/// Declares the extension files (each a module whose macro is named as
/// it) and chains their macros in this order, which is `Op`'s.
macro_rules! extension_files {
    ($d:tt $first:ident $($name:ident)*) => {
        #[macro_use]
        mod $first;
        $(
            #[macro_use]
            mod $name;
        )*
        $first! { $d [$($name)*] ($first) [] [] [] }
    };
}

extension_files! {
    $ rv64i zicsr m a f d c zfh zfa privileged cache zba zbb zbc zbs zicond hints mop zawrs zkt
    marker xdemo
}

impl Op {
    /// What the table says about this operation.
    #[inline]
    pub fn info(self) -> &'static OpInfo {
        &OP_INFO[self as usize]
    }

    /// The assembler mnemonic (without `.aq`/`.rl` suffixes).
    #[inline]
    pub fn mnemonic(self) -> &'static str {
        self.info().mnemonic
    }

    /// How the disassembler prints the operands.
    #[inline]
    pub fn format(self) -> Format {
        self.info().format
    }

    /// The cost class.
    #[inline]
    pub fn cost_class(self) -> CostClass {
        self.info().cost
    }

    /// The extension the operation belongs to (see `op_extension`).
    #[inline]
    pub fn extension(self) -> Option<Ext> {
        self.info().ext
    }

    /// The `(mask, match)` encodings the table declares.
    #[inline]
    pub fn encodings(self) -> &'static [(u32, u32)] {
        self.info().encodings
    }
}

#[cfg(test)]
mod tests;
