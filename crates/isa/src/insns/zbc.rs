//! Zbc.

macro_rules! zbc {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Carry-less multiplication.
            Zbc = "zbc", hwprobe Some(7);
        }
        Clmul      "clmul"        0xfe00707f => 0x0a001033, Rrr, Clmul, Zbc,
            exec |a, b| clmul(a, b) as u64;
        Clmulh     "clmulh"       0xfe00707f => 0x0a003033, Rrr, Clmul, Zbc,
            exec |a, b| (clmul(a, b) >> 64) as u64;
        Clmulr     "clmulr"       0xfe00707f => 0x0a002033, Rrr, Clmul, Zbc,
            exec |a, b| (clmul(a, b) >> 63) as u64;
    } };
}
