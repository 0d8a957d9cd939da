//! rvnvmm's region-of-interest marker (`slti x0, rs1, 0x7aN`, a custom HINT; `crate::marker`): `imm` holds the immediate, `rs1` the argument.

macro_rules! marker {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {}
        Marker     "slti"         0xff007fff => 0x7a002013, Imm, Alu, Base;
    } };
}
