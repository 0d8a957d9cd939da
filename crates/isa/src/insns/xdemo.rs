//! Xdemo: a made-up extension showing what adding one takes: this file
//! (its [`Ext`](crate::Ext) variant and its instructions) and its name in
//! `insns/mod.rs`'s `extension_files!` list. It exists only with the
//! `demo-ext` feature (which `rvnvmm-hart`'s tests turn on), and as a custom
//! extension a hart has it only when `machine.isa` names it (`_xdemo`):
//! one instruction in the custom-0 major opcode, `xdemo.mulxor rd, rs1,
//! rs2` (`rd = (rs1 * rs2) ^ rs1`), decoded from the table as every
//! instruction is, its operands as the `Rrr` format has them, printed so,
//! costed as a multiply and run by the interpreter from its `exec`.

#[cfg(feature = "demo-ext")]
macro_rules! xdemo {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// A made-up custom extension (`insns/xdemo.rs`), only with the
            /// `demo-ext` feature and only when `machine.isa` names it.
            Xdemo = "xdemo", hwprobe None;
        }
        XdemoMulxor "xdemo.mulxor" 0xfe00707f => 0x0a00100b, Rrr, Mul, Xdemo,
            exec |a: u64, b: u64| a.wrapping_mul(b) ^ a;
    } };
}

#[cfg(not(feature = "demo-ext"))]
macro_rules! xdemo {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ; extensions {} } };
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
        // Custom: after the standard extensions, and not in the default set.
        assert_eq!(Ext::ALL.last(), Some(&Ext::Xdemo));
        assert!(!ExtSet::DEFAULT.has(Ext::Xdemo));
        let named: ExtSet = "rv64gc_xdemo".parse().unwrap();
        assert!(named.has(Ext::Xdemo) && named.to_string().ends_with("_xdemo"));
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
