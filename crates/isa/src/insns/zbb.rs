//! Zbb.

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
        Andn       "andn"         0xfe00707f => 0x40007033, Rrr, Alu, Zbb,
            exec |a, b| a & !b;
        Orn        "orn"          0xfe00707f => 0x40006033, Rrr, Alu, Zbb,
            exec |a, b| a | !b;
        Xnor       "xnor"         0xfe00707f => 0x40004033, Rrr, Alu, Zbb,
            exec |a, b| !(a ^ b);
        Clz        "clz"          0xfdf0707f => 0x60001013, Rr, Alu, Zbb,
            exec |a, _| a.leading_zeros() as u64;
        Clzw       "clzw"         0xfff0707f => 0x6000101b, Rr, Alu, Zbb,
            exec |a, _| (a as u32).leading_zeros() as u64;
        Ctz        "ctz"          0xfdf0707f => 0x60101013, Rr, Alu, Zbb,
            exec |a, _| a.trailing_zeros() as u64;
        Ctzw       "ctzw"         0xfff0707f => 0x6010101b, Rr, Alu, Zbb,
            exec |a, _| (a as u32).trailing_zeros() as u64;
        Cpop       "cpop"         0xfdf0707f => 0x60201013, Rr, Alu, Zbb,
            exec |a, _| a.count_ones() as u64;
        Cpopw      "cpopw"        0xfff0707f => 0x6020101b, Rr, Alu, Zbb,
            exec |a, _| (a as u32).count_ones() as u64;
        Max        "max"          0xfe00707f => 0x0a006033, Rrr, Alu, Zbb,
            exec |a, b| (a as i64).max(b as i64) as u64;
        Maxu       "maxu"         0xfe00707f => 0x0a007033, Rrr, Alu, Zbb,
            exec |a, b| a.max(b);
        Min        "min"          0xfe00707f => 0x0a004033, Rrr, Alu, Zbb,
            exec |a, b| (a as i64).min(b as i64) as u64;
        Minu       "minu"         0xfe00707f => 0x0a005033, Rrr, Alu, Zbb,
            exec |a, b| a.min(b);
        SextB      "sext.b"       0xfdf0707f => 0x60401013, Rr, Alu, Zbb,
            exec |a, _| a as i8 as i64 as u64;
        SextH      "sext.h"       0xfdf0707f => 0x60501013, Rr, Alu, Zbb,
            exec |a, _| a as i16 as i64 as u64;
        ZextH      "zext.h"       0xfff0707f => 0x0800403b, Rr, Alu, Zbb,
            exec |a, _| a as u16 as u64;
        Rol        "rol"          0xfe00707f => 0x60001033, Rrr, Alu, Zbb,
            exec |a, b| a.rotate_left((b & 63) as u32);
        Rolw       "rolw"         0xfe00707f => 0x6000103b, Rrr, Alu, Zbb,
            exec |a, b| sext32((a as u32).rotate_left((b & 31) as u32) as u64);
        Ror        "ror"          0xfe00707f => 0x60005033, Rrr, Alu, Zbb,
            exec |a, b| a.rotate_right((b & 63) as u32);
        Rori       "rori"         0xfc00707f => 0x60005013, Shamt, Alu, Zbb,
            exec |a, b| a.rotate_right((b & 63) as u32);
        Roriw      "roriw"        0xfe00707f => 0x6000501b, Shamt, Alu, Zbb,
            exec |a, b| sext32((a as u32).rotate_right((b & 31) as u32) as u64);
        Rorw       "rorw"         0xfe00707f => 0x6000503b, Rrr, Alu, Zbb,
            exec |a, b| sext32((a as u32).rotate_right((b & 31) as u32) as u64);
        OrcB       "orc.b"        0xfff0707f => 0x28705013, Rr, Alu, Zbb,
            exec |a, _| orc_b(a);
        Rev8       "rev8"         0xfff0707f => 0x6b805013, Rr, Alu, Zbb,
            exec |a, _| a.swap_bytes();
    } };
}
