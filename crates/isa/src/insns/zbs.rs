//! Zbs.

macro_rules! zbs {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Single-bit instructions.
            Zbs = "zbs", hwprobe Some(5);
        }
        Bclr       "bclr"         0xfe00707f => 0x48001033, Rrr, Alu, Zbs,
            exec |a, b| a & !(1 << (b & 63));
        Bclri      "bclri"        0xfc00707f => 0x48001013, Shamt, Alu, Zbs,
            exec |a, b| a & !(1 << (b & 63));
        Bext       "bext"         0xfe00707f => 0x48005033, Rrr, Alu, Zbs,
            exec |a, b| (a >> (b & 63)) & 1;
        Bexti      "bexti"        0xfc00707f => 0x48005013, Shamt, Alu, Zbs,
            exec |a, b| (a >> (b & 63)) & 1;
        Binv       "binv"         0xfe00707f => 0x68001033, Rrr, Alu, Zbs,
            exec |a, b| a ^ (1 << (b & 63));
        Binvi      "binvi"        0xfc00707f => 0x68001013, Shamt, Alu, Zbs,
            exec |a, b| a ^ (1 << (b & 63));
        Bset       "bset"         0xfe00707f => 0x28001033, Rrr, Alu, Zbs,
            exec |a, b| a | (1 << (b & 63));
        Bseti      "bseti"        0xfc00707f => 0x28001013, Shamt, Alu, Zbs,
            exec |a, b| a | (1 << (b & 63));
    } };
}
