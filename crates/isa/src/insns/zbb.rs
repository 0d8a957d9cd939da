//! Zbb.
//!
//! One line per instruction: operation, mnemonic, `mask => match`
//! encoding(s), disassembly format, cost class, extension (see
//! `insns/mod.rs`).

// `clz`, `ctz`, `cpop`, `sext.b`, `sext.h`: the specification fixes bit 25
// (funct7 = 0x30); the decoder has always matched only funct6 (bits
// 31:26), so bit 25 is left free here to say what it decodes. (A decoder
// change would be a behaviour change: not made with the table.)
macro_rules! zbb {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Basic bit manipulation.
            Zbb = "zbb", hwprobe Some(4);
        }
        Andn       "andn"         0xfe00707f => 0x40007033, Rrr, Alu, Zbb;
        Orn        "orn"          0xfe00707f => 0x40006033, Rrr, Alu, Zbb;
        Xnor       "xnor"         0xfe00707f => 0x40004033, Rrr, Alu, Zbb;
        Clz        "clz"          0xfdf0707f => 0x60001013, Rr, Alu, Zbb;
        Clzw       "clzw"         0xfff0707f => 0x6000101b, Rr, Alu, Zbb;
        Ctz        "ctz"          0xfdf0707f => 0x60101013, Rr, Alu, Zbb;
        Ctzw       "ctzw"         0xfff0707f => 0x6010101b, Rr, Alu, Zbb;
        Cpop       "cpop"         0xfdf0707f => 0x60201013, Rr, Alu, Zbb;
        Cpopw      "cpopw"        0xfff0707f => 0x6020101b, Rr, Alu, Zbb;
        Max        "max"          0xfe00707f => 0x0a006033, Rrr, Alu, Zbb;
        Maxu       "maxu"         0xfe00707f => 0x0a007033, Rrr, Alu, Zbb;
        Min        "min"          0xfe00707f => 0x0a004033, Rrr, Alu, Zbb;
        Minu       "minu"         0xfe00707f => 0x0a005033, Rrr, Alu, Zbb;
        SextB      "sext.b"       0xfdf0707f => 0x60401013, Rr, Alu, Zbb;
        SextH      "sext.h"       0xfdf0707f => 0x60501013, Rr, Alu, Zbb;
        ZextH      "zext.h"       0xfff0707f => 0x0800403b, Rr, Alu, Zbb;
        Rol        "rol"          0xfe00707f => 0x60001033, Rrr, Alu, Zbb;
        Rolw       "rolw"         0xfe00707f => 0x6000103b, Rrr, Alu, Zbb;
        Ror        "ror"          0xfe00707f => 0x60005033, Rrr, Alu, Zbb;
        Rori       "rori"         0xfc00707f => 0x60005013, Shamt, Alu, Zbb;
        Roriw      "roriw"        0xfe00707f => 0x6000501b, Shamt, Alu, Zbb;
        Rorw       "rorw"         0xfe00707f => 0x6000503b, Rrr, Alu, Zbb;
        OrcB       "orc.b"        0xfff0707f => 0x28705013, Rr, Alu, Zbb;
        Rev8       "rev8"         0xfff0707f => 0x6b805013, Rr, Alu, Zbb;
    } };
}
