//! A small x86-64 emitter: exactly the instructions the translator uses.
//!
//! Register plan of translated code: `rbx` holds the address of the hart's
//! integer registers (`x[i]` at `[rbx + 8 i]`), `r12` the translation
//! context; `rax` and `rcx` are scratch, and `rdx` and `r8` for multiplies
//! and divides. Guest values are loaded into `rax`
//! (first operand) and `rcx` (second operand), combined in `rax` and stored
//! back.

use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_OFFSET_MASK};

/// An x86 condition code (the low nibble of `jcc`/`setcc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// Unsigned below.
    Below = 0x2,
    /// Unsigned above or equal.
    AboveEq = 0x3,
    /// Equal.
    Eq = 0x4,
    /// Not equal.
    Ne = 0x5,
    /// Signed less.
    Less = 0xc,
    /// Signed greater or equal.
    GreaterEq = 0xd,
}

impl Cond {
    /// The opposite condition.
    pub fn inverse(self) -> Cond {
        match self {
            Cond::Below => Cond::AboveEq,
            Cond::AboveEq => Cond::Below,
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Less => Cond::GreaterEq,
            Cond::GreaterEq => Cond::Less,
        }
    }
}

/// A two-operand ALU operation `rax op= rcx` (the `op r/m, r` opcode).
#[derive(Clone, Copy, Debug)]
pub enum Alu {
    /// `add`.
    Add = 0x01,
    /// `or`.
    Or = 0x09,
    /// `and`.
    And = 0x21,
    /// `sub`.
    Sub = 0x29,
    /// `xor`.
    Xor = 0x31,
    /// `cmp` (flags only).
    Cmp = 0x39,
}

/// A shift `rax by cl` (the `/digit` of opcode `d3`); the CPU masks `cl` to
/// 6 bits (64-bit) or 5 bits (32-bit), as RISC-V does.
#[derive(Clone, Copy, Debug)]
pub enum Shift {
    /// `rol`.
    RotateLeft = 0,
    /// `ror`.
    RotateRight = 1,
    /// `shl`.
    Left = 4,
    /// `shr`.
    RightLogical = 5,
    /// `sar`.
    RightArith = 7,
}

/// A one-operand operation `rax = op(rax)` of the bit-manipulation
/// extensions (see [`Asm::unary`]).
#[derive(Clone, Copy, Debug)]
pub enum Unary {
    /// Zbb `rev8`: the bytes reversed.
    Rev8,
    /// Zbb `orc.b`: each byte all ones if non-zero, else zero.
    OrcB,
    /// Zbb `ctz` (`wide`) or `ctzw`: trailing zeros, the width if none set.
    Ctz { wide: bool },
    /// Zbb `clz` or `clzw`: leading zeros, the width if none set.
    Clz { wide: bool },
    /// Zbb `sext.b`.
    SextB,
    /// Zbb `sext.h`.
    SextH,
    /// Zbb `zext.h`.
    ZextH,
    /// `not`.
    Not,
}

/// A bit of `rax` at the position `rcx` (mod 64) set, cleared or flipped
/// (Zbs `bset`, `bclr`, `binv`: the `bts`, `btr`, `btc` opcodes).
#[derive(Clone, Copy, Debug)]
pub enum BitOp {
    /// `bts`.
    Set = 0xab,
    /// `btr`.
    Clear = 0xb3,
    /// `btc`.
    Invert = 0xbb,
}

/// Which operands of a high multiply are signed.
#[derive(Clone, Copy, Debug)]
pub enum MulHigh {
    /// `mulh`: both.
    Signed,
    /// `mulhu`: neither.
    Unsigned,
    /// `mulhsu`: the first.
    SignedUnsigned,
}

/// Where `fsgnj.d`, `fsgnjn.d` and `fsgnjx.d` take the result's sign.
#[derive(Clone, Copy, Debug)]
pub enum SignFrom {
    /// The second operand's sign.
    Second,
    /// The inverse of the second operand's sign.
    NotSecond,
    /// The first operand's sign XOR the second's.
    Xor,
}

/// The size of a chain link (`jit::Link`: guest PC, host entry, physical
/// page).
pub const LINK_BYTES: u32 = 24;

/// Scratch registers.
#[derive(Clone, Copy, Debug)]
pub enum Reg {
    /// `rax`.
    Rax = 0,
    /// `rcx`.
    Rcx = 1,
}

/// Machine code being assembled, with the jumps to the common exit still
/// to be patched.
#[derive(Default)]
pub struct Asm {
    /// The bytes so far.
    pub code: Vec<u8>,
    /// Offsets of `rel32` fields that jump to the exit.
    exit_fixups: Vec<usize>,
    /// The guest register (1-31) whose value `rax` holds here, as last
    /// loaded or stored: a load of it into `rax` is left out, into `rcx`
    /// becomes a register move. Forgotten by any other instruction and at
    /// every jump target.
    rax_holds: Option<u8>,
}

impl Asm {
    fn bytes(&mut self, b: &[u8]) {
        self.rax_holds = None;
        self.code.extend_from_slice(b);
    }

    /// Declares that `rax` holds guest register `r` here, on every path
    /// that reaches this point.
    pub fn assume_rax_holds(&mut self, r: u8) {
        self.rax_holds = Some(r & 31).filter(|&r| r != 0);
    }

    fn u32(&mut self, v: u32) {
        self.code.extend_from_slice(&v.to_le_bytes());
    }

    /// Saves the callee-saved registers used and sets `rbx` (registers)
    /// and `r12` (context) from the System V arguments `rdi`, `rsi`. Three
    /// pushes leave the stack 16-byte aligned for calls.
    pub fn prologue(&mut self) {
        self.bytes(&[0x53, 0x41, 0x54, 0x55]); // push rbx; push r12; push rbp
        self.bytes(&[0x48, 0x89, 0xfb]); // mov rbx, rdi
        self.bytes(&[0x49, 0x89, 0xf4]); // mov r12, rsi
    }

    /// `reg = x[r]`.
    pub fn load_guest(&mut self, reg: Reg, r: u8) {
        let held = self.rax_holds;
        if held.is_some() && held == Some(r & 31) {
            if let Reg::Rcx = reg {
                self.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
                self.rax_holds = held;
            }
            return;
        }
        // mov reg, [rbx + disp32]
        self.bytes(&[0x48, 0x8b, 0x83 | (reg as u8) << 3]);
        self.u32(8 * (r as u32 & 31));
        match reg {
            Reg::Rax => self.assume_rax_holds(r),
            Reg::Rcx => self.rax_holds = held,
        }
    }

    /// `x[r] = rax`.
    pub fn store_guest(&mut self, r: u8) {
        self.bytes(&[0x48, 0x89, 0x83]); // mov [rbx + disp32], rax
        self.u32(8 * (r as u32 & 31));
        self.assume_rax_holds(r);
    }

    /// `reg = v`.
    pub fn mov_imm(&mut self, reg: Reg, v: u64) {
        if v <= u32::MAX as u64 {
            // mov r32, imm32 (zero-extended)
            self.bytes(&[0xb8 | reg as u8]);
            self.u32(v as u32);
            return;
        }
        if v as i64 == v as i32 as i64 {
            // mov reg, simm32 (sign-extended)
            self.bytes(&[0x48, 0xc7, 0xc0 | reg as u8]);
            self.u32(v as u32);
        } else {
            // movabs reg, imm64
            self.bytes(&[0x48, 0xb8 | reg as u8]);
            self.code.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// `rax op= rcx`, 64-bit (`wide`) or 32-bit (upper half zeroed).
    pub fn alu(&mut self, op: Alu, wide: bool) {
        if wide {
            self.bytes(&[0x48]);
        }
        self.bytes(&[op as u8, 0xc8]);
    }

    /// `rax = rax << cl` etc., 64-bit or 32-bit.
    pub fn shift(&mut self, op: Shift, wide: bool) {
        if wide {
            self.bytes(&[0x48]);
        }
        self.bytes(&[0xd3, 0xc0 | (op as u8) << 3]);
    }

    /// `rax = rax * rcx` (low bits), 64-bit or 32-bit.
    pub fn imul(&mut self, wide: bool) {
        if wide {
            self.bytes(&[0x48]);
        }
        self.bytes(&[0x0f, 0xaf, 0xc1]);
    }

    /// `rax` = the high 64 bits of the 128-bit product of `rax` and `rcx`,
    /// each signed or not as `kind` says (RISC-V `mulh`, `mulhu`,
    /// `mulhsu`). Clobbers `rdx` and `r8` (caller-saved, otherwise unused).
    pub fn mul_high(&mut self, kind: MulHigh) {
        match kind {
            MulHigh::Signed => self.bytes(&[0x48, 0xf7, 0xe9]), // imul rcx
            MulHigh::Unsigned => self.bytes(&[0x48, 0xf7, 0xe1]), // mul rcx
            MulHigh::SignedUnsigned => {
                // The unsigned product's high half, less rcx when rax < 0.
                self.bytes(&[0x49, 0x89, 0xc0]); // mov r8, rax
                self.bytes(&[0x48, 0xf7, 0xe1]); // mul rcx
                self.bytes(&[0x49, 0xc1, 0xf8, 0x3f]); // sar r8, 63
                self.bytes(&[0x49, 0x21, 0xc8]); // and r8, rcx
                self.bytes(&[0x4c, 0x29, 0xc2]); // sub rdx, r8
            }
        }
        self.bytes(&[0x48, 0x89, 0xd0]); // mov rax, rdx
    }

    /// `rax = rax / rcx` or `rax % rcx` with RISC-V's results where x86
    /// would fault: by zero, the quotient is all ones and the remainder the
    /// dividend; the signed overflow (minimum / -1) gives the dividend and
    /// remainder 0. 64-bit (`wide`) or 32-bit (upper half zeroed; the caller
    /// sign-extends). Clobbers `rdx`.
    pub fn divide(&mut self, signed: bool, remainder: bool, wide: bool) {
        let w = |a: &mut Asm| {
            if wide {
                a.bytes(&[0x48]);
            }
        };
        w(self);
        self.bytes(&[0x85, 0xc9]); // test rcx, rcx
        let by_zero = self.jump_if(Cond::Eq);
        let mut done = Vec::new();
        if signed {
            // x / -1 = -x (wrapping: the minimum stays), x % -1 = 0; this
            // also keeps idiv away from the minimum / -1 fault.
            w(self);
            self.bytes(&[0x83, 0xf9, 0xff]); // cmp rcx, -1
            let general = self.jump_if(Cond::Ne);
            if remainder {
                self.bytes(&[0x31, 0xc0]); // xor eax, eax
            } else {
                w(self);
                self.bytes(&[0xf7, 0xd8]); // neg rax
            }
            done.push(self.jump());
            self.here(general);
            w(self);
            self.bytes(&[0x99]); // cqo / cdq
            w(self);
            self.bytes(&[0xf7, 0xf9]); // idiv rcx
        } else {
            self.bytes(&[0x31, 0xd2]); // xor edx, edx
            w(self);
            self.bytes(&[0xf7, 0xf1]); // div rcx
        }
        if remainder {
            w(self);
            self.bytes(&[0x89, 0xd0]); // mov rax, rdx
        }
        done.push(self.jump());
        self.here(by_zero);
        if !remainder {
            self.bytes(&[0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff]); // mov rax, -1
        } else if !wide {
            self.bytes(&[0x89, 0xc0]); // mov eax, eax (the 32-bit dividend)
        }
        for d in done {
            self.here(d);
        }
    }

    /// `rax` = `rax` with the sign bit `kind` says from `rcx` (the
    /// `fsgnj.d` family); clobbers `rcx`.
    pub fn sign_inject(&mut self, kind: SignFrom) {
        if let SignFrom::NotSecond = kind {
            self.bytes(&[0x48, 0xf7, 0xd1]); // not rcx
        }
        self.bytes(&[0x48, 0xc1, 0xe9, 63]); // shr rcx, 63
        self.bytes(&[0x48, 0xc1, 0xe1, 63]); // shl rcx, 63 (the sign alone)
        if let SignFrom::Xor = kind {
            self.bytes(&[0x48, 0x31, 0xc8]); // xor rax, rcx
        } else {
            self.bytes(&[0x48, 0x0f, 0xba, 0xf0, 63]); // btr rax, 63
            self.bytes(&[0x48, 0x09, 0xc8]); // or rax, rcx
        }
    }

    /// `rax = op(rax)`; clobbers `rcx` and `xmm0`-`xmm1` (caller-saved,
    /// otherwise unused).
    pub fn unary(&mut self, op: Unary) {
        match op {
            Unary::Rev8 => self.bytes(&[0x48, 0x0f, 0xc8]), // bswap rax
            Unary::OrcB => {
                self.bytes(&[0x66, 0x48, 0x0f, 0x6e, 0xc0]); // movq xmm0, rax
                self.bytes(&[0x66, 0x0f, 0xef, 0xc9]); // pxor xmm1, xmm1
                self.bytes(&[0x66, 0x0f, 0x74, 0xc1]); // pcmpeqb xmm0, xmm1 (zero bytes)
                self.bytes(&[0x66, 0x48, 0x0f, 0x7e, 0xc0]); // movq rax, xmm0
                self.bytes(&[0x48, 0xf7, 0xd0]); // not rax
            }
            Unary::Ctz { wide } => {
                // bsf leaves its destination undefined for zero, and
                // sets ZF: the width instead.
                self.mov_imm(Reg::Rcx, if wide { 64 } else { 32 });
                self.rex_w(wide);
                self.bytes(&[0x0f, 0xbc, 0xc0]); // bsf rax, rax
                self.rex_w(wide);
                self.bytes(&[0x0f, 0x44, 0xc1]); // cmovz rax, rcx
            }
            Unary::Clz { wide } => {
                // The highest set bit's index, and leading zeros = index ^
                // (width - 1); for zero, the width ^ (width - 1) ^ (width -
                // 1).
                let top = if wide { 63 } else { 31 };
                self.mov_imm(Reg::Rcx, (top + 1) ^ top);
                self.rex_w(wide);
                self.bytes(&[0x0f, 0xbd, 0xc0]); // bsr rax, rax
                self.rex_w(wide);
                self.bytes(&[0x0f, 0x44, 0xc1]); // cmovz rax, rcx
                self.rex_w(wide);
                self.bytes(&[0x83, 0xf0, top as u8]); // xor rax, top
            }
            Unary::SextB => self.bytes(&[0x48, 0x0f, 0xbe, 0xc0]), // movsx rax, al
            Unary::SextH => self.bytes(&[0x48, 0x0f, 0xbf, 0xc0]), // movsx rax, ax
            Unary::ZextH => self.bytes(&[0x0f, 0xb7, 0xc0]),       // movzx eax, ax
            Unary::Not => self.bytes(&[0x48, 0xf7, 0xd0]),         // not rax
        }
    }

    /// A REX.W prefix if `wide`.
    fn rex_w(&mut self, wide: bool) {
        if wide {
            self.bytes(&[0x48]);
        }
    }

    /// `rcx = !rcx`.
    pub fn not_rcx(&mut self) {
        self.bytes(&[0x48, 0xf7, 0xd1]); // not rcx
    }

    /// `rax = rcx + (rax << shift)` (Zba `sh1add`..`sh3add`).
    pub fn shift_add(&mut self, shift: u8) {
        debug_assert!((1..=3).contains(&shift));
        // lea rax, [rcx + rax * 2^shift]
        self.bytes(&[0x48, 0x8d, 0x04, shift << 6 | 0x01]);
    }

    /// `rax = rcx` if the flags say `cond`.
    pub fn cmov(&mut self, cond: Cond) {
        self.bytes(&[0x48, 0x0f, 0x40 | cond as u8, 0xc1]); // cmovcc rax, rcx
    }

    /// Sets the flags from `rcx` (`test rcx, rcx`).
    pub fn test_rcx(&mut self) {
        self.bytes(&[0x48, 0x85, 0xc9]);
    }

    /// `ecx = 0`, the flags kept.
    pub fn clear_rcx_keeping_flags(&mut self) {
        self.bytes(&[0xb9, 0, 0, 0, 0]); // mov ecx, 0
    }

    /// Bit `rcx` (mod 64) of `rax` set, cleared or flipped.
    pub fn bit(&mut self, op: BitOp) {
        self.bytes(&[0x48, 0x0f, op as u8, 0xc8]); // bts/btr/btc rax, rcx
    }

    /// `rax &= 1`.
    pub fn low_bit(&mut self) {
        self.bytes(&[0x83, 0xe0, 0x01]); // and eax, 1
    }

    /// Jumps to the returned fixup when the byte at `[r12 + disp]` (a
    /// context flag) is not zero.
    pub fn ctx_flag_set(&mut self, disp: u8) -> usize {
        self.bytes(&[0x41, 0x80, 0x7c, 0x24, disp, 0]); // cmp byte [r12 + disp], 0
        self.jump_if(Cond::Ne)
    }

    /// `rax = zero-extended eax`.
    pub fn zext32(&mut self) {
        self.bytes(&[0x89, 0xc0]); // mov eax, eax
    }

    /// `rax = sign-extended eax`.
    pub fn sext32(&mut self) {
        self.bytes(&[0x48, 0x63, 0xc0]); // movsxd rax, eax
    }

    /// `rax = flags say cond ? 1 : 0`.
    pub fn set_cond(&mut self, cond: Cond) {
        self.bytes(&[0x0f, 0x90 | cond as u8, 0xc0]); // setcc al
        self.bytes(&[0x0f, 0xb6, 0xc0]); // movzx eax, al
    }

    /// Returns `value` from the translation when the flags say `cond`.
    pub fn exit_if(&mut self, cond: Cond, value: u32) {
        // j!cc over `mov eax, imm32` (5 bytes) and `jmp rel32` (5 bytes).
        self.bytes(&[0x70 | cond.inverse() as u8, 10]);
        self.exit(value);
    }

    /// Returns `value` from the translation.
    pub fn exit(&mut self, value: u32) {
        self.bytes(&[0xb8]); // mov eax, imm32
        self.u32(value);
        self.bytes(&[0xe9]); // jmp rel32 (to the epilogue)
        self.exit_fixups.push(self.code.len());
        self.u32(0);
    }

    /// Calls the context's helper (its first field) with `(context, arg,
    /// words[0], words[1], words[2], words[3])` (`rdi`, `esi`, then `rdx`,
    /// `rcx`, `r8`, `r9` as 64-bit immediates: what the helper needs of
    /// the instruction comes with the call, not from the block's arrays in
    /// host memory) and returns `value` from the translation if it returns
    /// non-zero.
    pub fn call_helper(&mut self, arg: u32, words: [u64; 4], value: u32) {
        self.bytes(&[0x4c, 0x89, 0xe7]); // mov rdi, r12
        self.bytes(&[0xbe]); // mov esi, imm32
        self.u32(arg);
        // movabs rdx, rcx, r8, r9 (REX.W, and REX.B for r8 and r9).
        for (word, (rex, reg)) in
            words
                .into_iter()
                .zip([(0x48, 2), (0x48, 1), (0x49, 0), (0x49, 1)])
        {
            self.bytes(&[rex, 0xb8 | reg]);
            self.code.extend_from_slice(&word.to_le_bytes());
        }
        self.bytes(&[0x41, 0xff, 0x54, 0x24, 0]); // call [r12]
        self.bytes(&[0x48, 0x85, 0xc0]); // test rax, rax
        self.exit_if(Cond::Ne, value);
    }

    /// As [`call_helper`](Self::call_helper) for the function pointer at
    /// `[r12 + at]`.
    pub fn call_ctx(&mut self, at: u8, arg: u32, value: u32) {
        self.bytes(&[0x4c, 0x89, 0xe7]); // mov rdi, r12
        self.bytes(&[0xbe]); // mov esi, imm32
        self.u32(arg);
        self.bytes(&[0x41, 0xff, 0x54, 0x24, at]); // call [r12 + at]
        self.bytes(&[0x48, 0x85, 0xc0]); // test rax, rax
        self.exit_if(Cond::Ne, value);
    }

    /// `rax = x[rs1] + imm`, then `rdx` = the entry of the software-TLB
    /// table (pointer at `[r12 + table]`) for that address and `rcx` =
    /// the address masked as the tag compare wants it for a `size`-byte
    /// access; compares the two and jumps to the returned fixup (patch it
    /// with [`here`](Self::here)) when they differ. Falls through with
    /// `rax` = the host address. The table index and entry layout are
    /// `TlbTable::lookup`'s.
    pub fn tlb_lookup(&mut self, rs1: u8, imm: i32, table: u8, size: u64) -> usize {
        use crate::tlb::{TlbEntry, TLB_ENTRIES};
        const _: () = assert!(TLB_ENTRIES == 256 && std::mem::size_of::<TlbEntry>() == 24);
        let tag = std::mem::offset_of!(TlbEntry, tag) as u8;
        let addend = std::mem::offset_of!(TlbEntry, addend) as u8;
        self.load_guest(Reg::Rax, rs1);
        if imm != 0 {
            self.bytes(&[0x48, 0x05]); // add rax, simm32
            self.u32(imm as u32);
        }
        self.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
        self.bytes(&[0x48, 0xc1, 0xe9, 12]); // shr rcx, 12
        self.bytes(&[0x0f, 0xb6, 0xc9]); // movzx ecx, cl (256 entries)
        self.bytes(&[0x48, 0x8d, 0x0c, 0x49]); // lea rcx, [rcx + rcx*2]
        self.bytes(&[0x49, 0x8b, 0x54, 0x24, table]); // mov rdx, [r12 + table]
        self.bytes(&[0x48, 0x8d, 0x14, 0xca]); // lea rdx, [rdx + rcx*8]
        self.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
        self.bytes(&[0x48, 0x81, 0xe1]); // and rcx, simm32
        self.u32(!(PAGE_OFFSET_MASK as u32) | (size as u32 - 1));
        self.bytes(&[0x48, 0x3b, 0x4a, tag]); // cmp rcx, [rdx + tag]
        let miss = self.jump_if(Cond::Ne);
        self.bytes(&[0x48, 0x03, 0x42, addend]); // add rax, [rdx + addend]
        miss
    }

    /// `mov r64, [r12 + disp32]` for register number `reg` (below 8): a
    /// context field at any offset.
    fn load_ctx_far(&mut self, reg: u8, disp: u32) {
        self.bytes(&[0x49, 0x8b, 0x84 | reg << 3, 0x24]);
        self.u32(disp);
    }

    /// After a [`tlb_lookup`](Self::tlb_lookup) hit (`rax` the host
    /// address, `rdx` the entry): the timing model's data filter test
    /// (`rvnvmm_timing::FilterTables`) inline, with the context's line shift
    /// at `[r12 + shift]`, table at `[r12 + table]` and hit counter at
    /// `[r12 + hits]`: the guest physical address's line number looked up
    /// at its index; jumps to the returned fixup on a miss, counts the hit
    /// and falls through otherwise, `rax` unchanged.
    pub fn filter_test(&mut self, shift: u32, table: u32, hits: u32) -> usize {
        use crate::tlb::TlbEntry;
        let addend = std::mem::offset_of!(TlbEntry, addend) as u8;
        let ppage = std::mem::offset_of!(TlbEntry, ppage) as u8;
        self.bytes(&[0x48, 0x89, 0xc6]); // mov rsi, rax
        self.bytes(&[0x48, 0x2b, 0x72, addend]); // sub rsi, [rdx + addend] (the vaddr)
        self.bytes(&[0x81, 0xe6]); // and esi, imm32 (the page offset)
        self.u32(PAGE_OFFSET_MASK as u32);
        self.bytes(&[0x48, 0x0b, 0x72, ppage]); // or rsi, [rdx + ppage]
        self.load_ctx_far(1, shift); // mov rcx, [r12 + shift]
        self.bytes(&[0x48, 0xd3, 0xee]); // shr rsi, cl (the line)
        self.load_ctx_far(7, table); // mov rdi, [r12 + table]
        let miss = self.filter_lookup_rsi();
        self.load_ctx_far(7, hits); // mov rdi, [r12 + hits]
        self.bytes(&[0x48, 0x83, 0x07, 0x01]); // add qword [rdi], 1
        miss
    }

    /// Line number `rsi` against the filter table at `rdi`
    /// (`rvnvmm_timing::filter_index`); clobbers `rdx`. Jumps to the
    /// returned fixup when the entry holds another line.
    fn filter_lookup_rsi(&mut self) -> usize {
        const _: () = assert!(rvnvmm_timing::FILTER_ENTRIES == 1024);
        self.bytes(&[0x48, 0x89, 0xf2]); // mov rdx, rsi
        self.bytes(&[0x48, 0xc1, 0xea, 10]); // shr rdx, 10
        self.bytes(&[0x48, 0x31, 0xf2]); // xor rdx, rsi
        self.bytes(&[0x81, 0xe2]); // and edx, 1023 (the index)
        self.u32(1023);
        self.bytes(&[0x48, 0x3b, 0x34, 0xd7]); // cmp rsi, [rdi + rdx*8]
        self.jump_if(Cond::Ne)
    }

    /// A timed block's fetch at `pc` inline, when everything hits: the
    /// fetch-TLB entry (table at `[r12 + exec_tlb]`) must map `pc`
    /// (`TlbTable::lookup_paddr` for 2 bytes), and each of the block's
    /// fetch lines (`page | offset`) must be in the fetch filter table;
    /// then `lines.len()` hits are counted. Jumps to the returned fixup
    /// otherwise, having changed nothing (the full fetch runs there).
    pub fn fetch_test(
        &mut self,
        pc: u64,
        lines: &[u16],
        exec_tlb: u8,
        (shift, table, hits): (u32, u32, u32),
    ) -> Vec<usize> {
        use crate::tlb::{TlbEntry, TLB_ENTRIES};
        let tag = std::mem::offset_of!(TlbEntry, tag) as u8;
        let ppage = std::mem::offset_of!(TlbEntry, ppage) as u8;
        let entry = ((pc >> 12) as usize & (TLB_ENTRIES - 1)) * std::mem::size_of::<TlbEntry>();
        let mut misses = Vec::with_capacity(lines.len() + 1);
        self.bytes(&[0x49, 0x8b, 0x44, 0x24, exec_tlb]); // mov rax, [r12 + exec_tlb]
        self.bytes(&[0x48, 0x05]); // add rax, imm32 (the entry)
        self.u32(entry as u32);
        self.mov_imm(Reg::Rcx, page_base(pc) | (pc & 1));
        self.bytes(&[0x48, 0x3b, 0x48, tag]); // cmp rcx, [rax + tag]
        misses.push(self.jump_if(Cond::Ne));
        self.bytes(&[0x4c, 0x8b, 0x40, ppage]); // mov r8, [rax + ppage]
        self.bytes(&[0x49, 0x81, 0xc8]); // or r8, imm32 (the PC's offset)
        self.u32(page_offset(pc) as u32);
        self.bytes(&[0x49, 0x81, 0xe0]); // and r8, simm32 (the page)
        self.u32(!(PAGE_OFFSET_MASK as u32));
        self.load_ctx_far(1, shift); // mov rcx, [r12 + shift]
        self.load_ctx_far(7, table); // mov rdi, [r12 + table]
        for &off in lines {
            self.bytes(&[0x4c, 0x89, 0xc6]); // mov rsi, r8
            self.bytes(&[0x48, 0x81, 0xce]); // or rsi, imm32 (the line's offset)
            self.u32(u32::from(off));
            self.bytes(&[0x48, 0xd3, 0xee]); // shr rsi, cl
            misses.push(self.filter_lookup_rsi());
        }
        self.load_ctx_far(7, hits); // mov rdi, [r12 + hits]
        self.bytes(&[0x48, 0x81, 0x07]); // add qword [rdi], imm32
        self.u32(lines.len() as u32);
        misses
    }

    /// `rax` = the value at host address `rax`, `size` bytes, sign- or
    /// zero-extended.
    pub fn load_host(&mut self, size: u64, signed: bool) {
        match (size, signed) {
            (1, true) => self.bytes(&[0x48, 0x0f, 0xbe, 0x00]), // movsx rax, byte [rax]
            (1, false) => self.bytes(&[0x0f, 0xb6, 0x00]),      // movzx eax, byte [rax]
            (2, true) => self.bytes(&[0x48, 0x0f, 0xbf, 0x00]), // movsx rax, word [rax]
            (2, false) => self.bytes(&[0x0f, 0xb7, 0x00]),      // movzx eax, word [rax]
            (4, true) => self.bytes(&[0x48, 0x63, 0x00]),       // movsxd rax, dword [rax]
            (4, false) => self.bytes(&[0x8b, 0x00]),            // mov eax, [rax]
            _ => self.bytes(&[0x48, 0x8b, 0x00]),               // mov rax, [rax]
        }
    }

    /// Stores the low `size` bytes of `rcx` at host address `rax`.
    pub fn store_host(&mut self, size: u64) {
        match size {
            1 => self.bytes(&[0x88, 0x08]),       // mov [rax], cl
            2 => self.bytes(&[0x66, 0x89, 0x08]), // mov [rax], cx
            4 => self.bytes(&[0x89, 0x08]),       // mov [rax], ecx
            _ => self.bytes(&[0x48, 0x89, 0x08]), // mov [rax], rcx
        }
    }

    /// `rax = [r12 + disp]` (a context field).
    pub fn load_ctx(&mut self, disp: u8) {
        self.bytes(&[0x49, 0x8b, 0x44, 0x24, disp]);
    }

    /// `[r12 + disp] = reg` (a context field).
    pub fn store_ctx(&mut self, disp: u8, reg: Reg) {
        self.bytes(&[0x49, 0x89, 0x44 | (reg as u8) << 3, 0x24, disp]);
    }

    /// `dword [r12 + disp] = v` (a 32-bit context field).
    pub fn store_ctx_u32(&mut self, disp: u8, v: u32) {
        self.bytes(&[0x41, 0xc7, 0x44, 0x24, disp]);
        self.u32(v);
    }

    /// `rax += [r12 + disp]`.
    pub fn add_ctx(&mut self, disp: u8) {
        self.bytes(&[0x49, 0x03, 0x44, 0x24, disp]);
    }

    /// `cmp rax, [r12 + disp]`.
    pub fn cmp_ctx(&mut self, disp: u8) {
        self.bytes(&[0x49, 0x3b, 0x44, 0x24, disp]);
    }

    /// `rax = [rbx + disp]`: a hart field at `disp` from the registers.
    pub fn load_hart(&mut self, disp: i32) {
        self.bytes(&[0x48, 0x8b, 0x83]);
        self.u32(disp as u32);
    }

    /// `reg = [rbx + disp]`: a hart field at `disp` from the registers.
    pub fn load_hart_to(&mut self, reg: Reg, disp: i32) {
        self.bytes(&[0x48, 0x8b, 0x83 | (reg as u8) << 3]);
        self.u32(disp as u32);
    }

    /// `[rbx + disp] = rax`: a hart field at `disp` from the registers.
    pub fn store_hart(&mut self, disp: i32) {
        self.bytes(&[0x48, 0x89, 0x83]);
        self.u32(disp as u32);
    }

    /// Jumps to the returned fixup unless the bits `mask` of the hart field
    /// at `disp` (below bit 31) equal `value`; clobbers `rax`.
    pub fn field_test(&mut self, disp: i32, mask: u32, value: u32) -> usize {
        self.load_hart(disp);
        self.bytes(&[0x25]); // and eax, imm32
        self.u32(mask);
        self.bytes(&[0x3d]); // cmp eax, imm32
        self.u32(value);
        self.jump_if(Cond::Ne)
    }

    /// Calls the function at `f` with `([r12 + at], arg)` (`at` a context
    /// field's `disp32`) and jumps to the returned fixup if it returns
    /// zero.
    pub fn call_abs(&mut self, at: u32, arg: u32, f: u64) -> usize {
        self.load_ctx_far(7, at); // mov rdi, [r12 + at]
        self.bytes(&[0xbe]); // mov esi, imm32
        self.u32(arg);
        self.bytes(&[0x48, 0xb8]); // movabs rax, f
        self.code.extend_from_slice(&f.to_le_bytes());
        self.bytes(&[0xff, 0xd0]); // call rax
        self.bytes(&[0x48, 0x85, 0xc0]); // test rax, rax
        self.jump_if(Cond::Eq)
    }

    /// `[rbx + disp] += rax`.
    pub fn add_to_hart(&mut self, disp: i32) {
        self.bytes(&[0x48, 0x01, 0x83]);
        self.u32(disp as u32);
    }

    /// `rax &= !1` (a `jalr` target).
    pub fn clear_bit0(&mut self) {
        self.bytes(&[0x48, 0x83, 0xe0, 0xfe]); // and rax, -2
    }

    /// `rcx` = the address of slot `(rax >> 1) & (slots - 1)` of the
    /// table of links ([`LINK_BYTES`] each) whose address is at
    /// `[r12 + table]`.
    pub fn table_slot(&mut self, table: u8, slots: u32) {
        const _: () = assert!(LINK_BYTES == 24);
        self.bytes(&[0x48, 0x89, 0xc1]); // mov rcx, rax
        self.bytes(&[0x48, 0xd1, 0xe9]); // shr rcx, 1
        self.bytes(&[0x48, 0x81, 0xe1]); // and rcx, imm32
        self.u32(slots - 1);
        self.bytes(&[0x48, 0x8d, 0x0c, 0x49]); // lea rcx, [rcx + rcx*2]
        self.bytes(&[0x48, 0xc1, 0xe1, 3]); // shl rcx, 3
        self.bytes(&[0x49, 0x03, 0x4c, 0x24, table]); // add rcx, [r12 + table]
    }

    /// Jumps to `[rcx + 8]` if `[rcx]` equals `rax`, else falls through
    /// (a link: guest PC, then host entry).
    pub fn follow_link(&mut self) {
        self.bytes(&[0x48, 0x3b, 0x01]); // cmp rax, [rcx]
        self.bytes(&[0x75, 3]); // jne over the jump
        self.bytes(&[0xff, 0x61, 0x08]); // jmp [rcx + 8]
    }

    /// As [`follow_link`](Self::follow_link), and only while the fetch-TLB
    /// table at `[r12 + exec_tlb]` maps the (even) PC `rax` to the link's
    /// physical page `[rcx + 16]` (`TlbTable::lookup_paddr` for 2 bytes);
    /// clobbers `rdx` and `rsi`.
    pub fn follow_link_mapped(&mut self, exec_tlb: u8) {
        use crate::tlb::TlbEntry;
        let tag = std::mem::offset_of!(TlbEntry, tag) as u8;
        let ppage = std::mem::offset_of!(TlbEntry, ppage) as u8;
        self.bytes(&[0x48, 0x3b, 0x01]); // cmp rax, [rcx]
        let other_pc = self.jump_if(Cond::Ne);
        self.bytes(&[0x48, 0x89, 0xc2]); // mov rdx, rax
        self.bytes(&[0x48, 0xc1, 0xea, 12]); // shr rdx, 12
        self.bytes(&[0x0f, 0xb6, 0xd2]); // movzx edx, dl (256 entries)
        self.bytes(&[0x48, 0x8d, 0x14, 0x52]); // lea rdx, [rdx + rdx*2]
        self.bytes(&[0x49, 0x8b, 0x74, 0x24, exec_tlb]); // mov rsi, [r12 + exec_tlb]
        self.bytes(&[0x48, 0x8d, 0x14, 0xd6]); // lea rdx, [rsi + rdx*8]
        self.bytes(&[0x48, 0x89, 0xc6]); // mov rsi, rax
        self.bytes(&[0x48, 0x81, 0xe6]); // and rsi, simm32 (the page)
        self.u32(!(PAGE_OFFSET_MASK as u32));
        self.bytes(&[0x48, 0x3b, 0x72, tag]); // cmp rsi, [rdx + tag]
        let unmapped = self.jump_if(Cond::Ne);
        self.bytes(&[0x48, 0x8b, 0x72, ppage]); // mov rsi, [rdx + ppage]
        self.bytes(&[0x48, 0x3b, 0x71, 16]); // cmp rsi, [rcx + 16]
        let elsewhere = self.jump_if(Cond::Ne);
        self.bytes(&[0xff, 0x61, 0x08]); // jmp [rcx + 8]
        self.here(other_pc);
        self.here(unmapped);
        self.here(elsewhere);
    }

    /// The length of [`prologue`](Self::prologue).
    pub const PROLOGUE_LEN: usize = 10;

    /// A `jcc rel32` to a place not yet emitted: returns the fixup (the
    /// end of its `rel32` field).
    pub fn jump_if(&mut self, cond: Cond) -> usize {
        self.bytes(&[0x0f, 0x80 | cond as u8]);
        self.u32(0);
        self.code.len()
    }

    /// A `jmp rel32` to a place not yet emitted: returns the fixup.
    pub fn jump(&mut self) -> usize {
        self.bytes(&[0xe9]);
        self.u32(0);
        self.code.len()
    }

    /// Points the jump with `fixup` here.
    pub fn here(&mut self, fixup: usize) {
        self.rax_holds = None;
        let at = fixup - 4;
        let rel = (self.code.len() - fixup) as i32;
        self.code[at..at + 4].copy_from_slice(&rel.to_le_bytes());
    }

    /// Ends the code: the common exit restores the saved registers and
    /// returns `eax`. Patches every jump to it.
    pub fn finish(mut self) -> Vec<u8> {
        let epilogue = self.code.len();
        self.bytes(&[0x5d, 0x41, 0x5c, 0x5b, 0xc3]); // pop rbp; pop r12; pop rbx; ret
        for at in std::mem::take(&mut self.exit_fixups) {
            let rel = (epilogue as i64 - (at as i64 + 4)) as i32;
            self.code[at..at + 4].copy_from_slice(&rel.to_le_bytes());
        }
        self.code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_match_the_manual() {
        let mut a = Asm::default();
        a.load_guest(Reg::Rcx, 5);
        assert_eq!(a.code, [0x48, 0x8b, 0x8b, 40, 0, 0, 0]);
        let mut a = Asm::default();
        a.alu(Alu::Sub, true);
        a.shift(Shift::RightArith, false);
        a.imul(true);
        assert_eq!(
            a.code,
            [0x48, 0x29, 0xc8, 0xd3, 0xf8, 0x48, 0x0f, 0xaf, 0xc1]
        );
        let mut a = Asm::default();
        a.mov_imm(Reg::Rax, u64::MAX);
        a.mov_imm(Reg::Rcx, 1 << 40);
        assert_eq!(a.code[..7], [0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(a.code[7..9], [0x48, 0xb9]);
        let mut a = Asm::default();
        a.call_helper(7, [1, 2, 3, 4], 9);
        assert_eq!(
            a.code[..48],
            [
                0x4c, 0x89, 0xe7, 0xbe, 7, 0, 0, 0, 0x48, 0xba, 1, 0, 0, 0, 0, 0, 0, 0, 0x48, 0xb9,
                2, 0, 0, 0, 0, 0, 0, 0, 0x49, 0xb8, 3, 0, 0, 0, 0, 0, 0, 0, 0x49, 0xb9, 4, 0, 0, 0,
                0, 0, 0, 0
            ]
        );
        assert_eq!(
            a.code[48..56],
            [0x41, 0xff, 0x54, 0x24, 0, 0x48, 0x85, 0xc0]
        );
        let mut a = Asm::default();
        a.filter_test(0x78, 0x58, 0x168);
        assert_eq!(
            a.code,
            [
                0x48, 0x89, 0xc6, 0x48, 0x2b, 0x72, 8, 0x81, 0xe6, 0xff, 0x0f, 0, 0, 0x48, 0x0b,
                0x72, 16, 0x49, 0x8b, 0x8c, 0x24, 0x78, 0, 0, 0, 0x48, 0xd3, 0xee, 0x49, 0x8b,
                0xbc, 0x24, 0x58, 0, 0, 0, 0x48, 0x89, 0xf2, 0x48, 0xc1, 0xea, 10, 0x48, 0x31,
                0xf2, 0x81, 0xe2, 0xff, 0x03, 0, 0, 0x48, 0x3b, 0x34, 0xd7, 0x0f, 0x85, 0, 0, 0, 0,
                0x49, 0x8b, 0xbc, 0x24, 0x68, 0x01, 0, 0, 0x48, 0x83, 0x07, 0x01
            ]
        );
        let mut a = Asm::default();
        let misses = a.fetch_test(0x1_2344, &[0x340], 0x18, (0x80, 0x88, 0x90));
        assert_eq!(misses.len(), 2);
        assert_eq!(
            a.code[..36],
            [
                0x49, 0x8b, 0x44, 0x24, 0x18, 0x48, 0x05, 0xb0, 0x01, 0, 0, 0xb9, 0, 0x20, 0x01, 0,
                0x48, 0x3b, 0x48, 0, 0x0f, 0x85, 0, 0, 0, 0, 0x4c, 0x8b, 0x40, 16, 0x49, 0x81,
                0xc8, 0x44, 0x03, 0
            ]
        );
        assert_eq!(a.code[a.code.len() - 7..], [0x48, 0x81, 0x07, 1, 0, 0, 0]);
        let mut a = Asm::default();
        a.load_hart_to(Reg::Rcx, 0x108);
        a.store_hart(-8);
        assert_eq!(
            a.code,
            [0x48, 0x8b, 0x8b, 8, 1, 0, 0, 0x48, 0x89, 0x83, 0xf8, 0xff, 0xff, 0xff]
        );
        let mut a = Asm::default();
        a.field_test(0x10, 0x6000, 0x6000);
        assert_eq!(
            a.code,
            [
                0x48, 0x8b, 0x83, 0x10, 0, 0, 0, 0x25, 0, 0x60, 0, 0, 0x3d, 0, 0x60, 0, 0, 0x0f,
                0x85, 0, 0, 0, 0
            ]
        );
        let mut a = Asm::default();
        a.call_abs(0xa0, 7, 0x1122_3344_5566_7788);
        assert_eq!(
            a.code,
            [
                0x49, 0x8b, 0xbc, 0x24, 0xa0, 0, 0, 0, 0xbe, 7, 0, 0, 0, 0x48, 0xb8, 0x88, 0x77,
                0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0xff, 0xd0, 0x48, 0x85, 0xc0, 0x0f, 0x84, 0, 0,
                0, 0
            ]
        );
    }

    #[test]
    fn a_register_just_loaded_or_stored_is_not_loaded_again() {
        let mut a = Asm::default();
        a.load_guest(Reg::Rax, 5);
        a.load_guest(Reg::Rax, 5); // left out
        a.load_guest(Reg::Rcx, 5); // mov rcx, rax
        a.load_guest(Reg::Rcx, 6);
        a.load_guest(Reg::Rax, 5); // still held
        assert_eq!(
            a.code,
            [0x48, 0x8b, 0x83, 40, 0, 0, 0, 0x48, 0x89, 0xc1, 0x48, 0x8b, 0x8b, 48, 0, 0, 0]
        );
        let mut a = Asm::default();
        a.store_guest(7);
        a.load_guest(Reg::Rax, 7); // left out
        let to = a.jump();
        a.here(to);
        a.load_guest(Reg::Rax, 7); // a jump target: loaded
        a.mov_imm(Reg::Rcx, 1);
        a.load_guest(Reg::Rax, 7); // after another instruction: loaded
        a.load_guest(Reg::Rax, 0);
        a.load_guest(Reg::Rax, 0); // x0 is never held
        assert_eq!(a.code.len(), 7 + 5 + 7 + 5 + 7 + 7 + 7);
    }

    #[test]
    fn sign_injection_encodings() {
        let mut a = Asm::default();
        a.sign_inject(SignFrom::NotSecond);
        a.sign_inject(SignFrom::Xor);
        a.zext32();
        assert_eq!(
            a.code,
            [
                0x48, 0xf7, 0xd1, 0x48, 0xc1, 0xe9, 63, 0x48, 0xc1, 0xe1, 63, 0x48, 0x0f, 0xba,
                0xf0, 63, 0x48, 0x09, 0xc8, 0x48, 0xc1, 0xe9, 63, 0x48, 0xc1, 0xe1, 63, 0x48, 0x31,
                0xc8, 0x89, 0xc0
            ]
        );
    }

    #[test]
    fn exits_jump_to_the_epilogue() {
        let mut a = Asm::default();
        a.exit(7);
        let code = a.finish();
        // jmp rel32 at offset 5, its field at 6..10, epilogue right after.
        assert_eq!(&code[6..10], &0i32.to_le_bytes());
        assert_eq!(&code[10..], &[0x5d, 0x41, 0x5c, 0x5b, 0xc3]);
    }
}
