//! RISC-V instruction decoding and disassembly for rvnvmm.
//!
//! [`decode`] turns the 32 bits at a PC (of which only the low 16 matter for a
//! compressed instruction) into an [`Insn`]; the executor caches the result
//! per basic block so each instruction is decoded once. [`expand_compressed`]
//! maps a 16-bit RVC parcel to its 32-bit equivalent, [`disasm`] (and the
//! `Display` impl of [`Insn`]) print objdump-style text, and [`csr`] names the
//! control and status registers. [`ExtSet`] is the set of extensions a hart
//! implements (`machine.isa`); [`decode_for`] decodes for such a hart.
//!
//! ```
//! use rvnvmm_isa::{decode, disasm, Op};
//!
//! let i = decode(0x0015_0513); // addi a0,a0,1
//! assert_eq!((i.op, i.rd, i.rs1, i.imm, i.len), (Op::Addi, 10, 10, 1, 4));
//! assert_eq!(disasm(&i, 0x1000), "addi a0,a0,1");
//!
//! let c = decode(0x60a2); // c.ldsp ra,8(sp): only the low half matters
//! assert_eq!((c.op, c.len), (Op::Ld, 2));
//! assert_eq!(c.to_string(), "ld ra,8(sp)");
//!
//! let b = decode(0xfe05_8ee3); // beq a1,zero,.-4
//! assert_eq!(b.to_string(), "beq a1,zero,.-4");
//! assert_eq!(disasm(&b, 0x1000), "beq a1,zero,ffc");
//! ```

#![warn(missing_docs)]

pub mod bits;
mod compressed;
pub mod csr;
mod decode;
mod decode_fp_ext;
mod disasm;
pub mod encode;
mod ext;
mod insns;
pub mod marker;
mod op;

#[cfg(test)]
mod ext_tests;
#[cfg(test)]
mod testdata;
#[cfg(test)]
mod testdata_ext;
#[cfg(test)]
mod testdata_zfh;

pub use compressed::{compressed_extension, expand_compressed};
pub use decode::{decode, decode_for, op_extension};
pub use decode_fp_ext::{fp_extension, FpExtension};
pub use disasm::{disasm, mnemonic, FREG_NAMES, XREG_NAMES};
pub use ext::{Ext, ExtSet, IsaError, CBOZ_BLOCK_BYTES};
pub use insns::{execute, CostClass, Format, OpInfo};
pub use marker::{encode_marker, MarkerOp};
pub use op::{FenceSets, Insn, Op, Ordering, VectorFields};
