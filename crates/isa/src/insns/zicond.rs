//! Zicond.

macro_rules! zicond {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Integer conditional zero (`czero.eqz/nez`).
            Zicond = "zicond", hwprobe Some(35);
        }
        CzeroEqz   "czero.eqz"    0xfe00707f => 0x0e005033, Rrr, Alu, Zicond,
            exec |a, b| if b == 0 { 0 } else { a };
        CzeroNez   "czero.nez"    0xfe00707f => 0x0e007033, Rrr, Alu, Zicond,
            exec |a, b| if b != 0 { 0 } else { a };
    } };
}
