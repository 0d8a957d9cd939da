//! Xdemo: a made-up extension showing what adding one takes: this file,
//! its name in `insns/mod.rs`'s `extension_files!` list, and its `Ext`
//! line in `ext.rs`. It exists only with the `demo-ext` feature (which
//! `rvnvmm-hart`'s tests turn on): one instruction in the custom-0 major opcode, `xdemo.mulxor rd, rs1, rs2`
//! (`rd = (rs1 * rs2) ^ rs1`), decoded from the table (`@table`: the
//! hand-ordered decoder knows nothing of it), printed in the `Rrr` format,
//! costed as a multiply and run by the interpreter from its `exec`.

#[cfg(feature = "demo-ext")]
macro_rules! xdemo {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        @table XdemoMulxor "xdemo.mulxor" 0xfe00707f => 0x0a00100b, Rrr, Mul, Xdemo,
            exec |a: u64, b: u64| a.wrapping_mul(b) ^ a;
    } };
}

#[cfg(not(feature = "demo-ext"))]
macro_rules! xdemo {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ; } };
}

#[cfg(all(test, feature = "demo-ext"))]
mod tests {
    use crate::{decode, decode_for, disasm, op_extension, CostClass, Ext, ExtSet, Op};

    /// `xdemo.mulxor a0, a1, a2`.
    const WORD: u32 = 0x0a00100b | 10 << 7 | 11 << 15 | 12 << 20;

    #[test]
    fn decodes_prints_and_reports_its_extension_and_cost() {
        let i = decode(WORD);
        assert_eq!(
            (i.op, i.rd, i.rs1, i.rs2, i.len),
            (Op::XdemoMulxor, 10, 11, 12, 4)
        );
        assert_eq!(disasm(&i, 0), "xdemo.mulxor a0,a1,a2");
        assert_eq!(op_extension(i.op), Some(Ext::Xdemo));
        assert_eq!(i.op.cost_class(), CostClass::Mul);
        assert_eq!(Ext::Xdemo.name(), "xdemo");
        // Without the extension it is illegal; the rest of custom-0 is.
        assert_eq!(
            decode_for(WORD, ExtSet::ALL.without(Ext::Xdemo)).op,
            Op::Illegal
        );
        assert_eq!(decode(WORD ^ 1 << 12).op, Op::Illegal);
        let f = i.op.info().exec.unwrap();
        assert_eq!(f(7, 6), (7 * 6) ^ 7);
    }
}
