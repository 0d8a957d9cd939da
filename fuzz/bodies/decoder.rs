//! One fuzz input for the decoder, shared by the libFuzzer target and the
//! seeded test in `crates/isa/tests/decoder_fuzz.rs`: the bytes as an
//! instruction stream, walked as the hart fetches it (a halfword, then its
//! second half if the low bits say 32-bit), each instruction decoded and
//! disassembled, and a compressed one checked against its expansion.

use rvnvmm_isa::{decode, disasm, expand_compressed, Insn, Op};

pub fn one_input(data: &[u8]) {
    let mut at = 0;
    while at + 2 <= data.len() {
        let lo = u16::from_le_bytes([data[at], data[at + 1]]);
        let raw = if lo & 3 == 3 {
            if at + 4 > data.len() {
                break;
            }
            u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
        } else {
            u32::from(lo)
        };
        let insn = decode(raw);
        let want_len = if lo & 3 == 3 { 4 } else { 2 };
        assert_eq!(insn.len, want_len, "{raw:#010x}");
        if lo & 3 != 3 {
            match expand_compressed(lo) {
                Some(w) => {
                    assert_eq!(w & 3, 3, "{lo:#06x} expands to {w:#010x}");
                    assert_eq!(
                        insn,
                        Insn {
                            len: 2,
                            ..decode(w)
                        },
                        "{lo:#06x}"
                    );
                }
                // Zcmop's c.mop.N has no 32-bit form: it is a may-be-operation
                // of its own in the reserved c.lui space.
                None => assert!(
                    matches!(insn.op, Op::Illegal | Op::CMop),
                    "{lo:#06x} decodes as {:?} without an expansion",
                    insn.op
                ),
            }
        }
        let pc = 0x1_0000 + at as u64;
        let text = disasm(&insn, pc);
        assert!(!text.is_empty(), "{raw:#010x}");
        at += usize::from(insn.len);
    }
}
