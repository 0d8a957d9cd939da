//! A.

macro_rules! a {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Atomics.
            A = "a", hwprobe None;
        }
        LrW        "lr.w"         0xf9f0707f => 0x1000202f, Lr, Load, A;
        ScW        "sc.w"         0xf800707f => 0x1800202f, Amo, Store, A;
        AmoswapW   "amoswap.w"    0xf800707f => 0x0800202f, Amo, Store, A;
        AmoaddW    "amoadd.w"     0xf800707f => 0x0000202f, Amo, Store, A;
        AmoxorW    "amoxor.w"     0xf800707f => 0x2000202f, Amo, Store, A;
        AmoandW    "amoand.w"     0xf800707f => 0x6000202f, Amo, Store, A;
        AmoorW     "amoor.w"      0xf800707f => 0x4000202f, Amo, Store, A;
        AmominW    "amomin.w"     0xf800707f => 0x8000202f, Amo, Store, A;
        AmomaxW    "amomax.w"     0xf800707f => 0xa000202f, Amo, Store, A;
        AmominuW   "amominu.w"    0xf800707f => 0xc000202f, Amo, Store, A;
        AmomaxuW   "amomaxu.w"    0xf800707f => 0xe000202f, Amo, Store, A;
        LrD        "lr.d"         0xf9f0707f => 0x1000302f, Lr, Load, A;
        ScD        "sc.d"         0xf800707f => 0x1800302f, Amo, Store, A;
        AmoswapD   "amoswap.d"    0xf800707f => 0x0800302f, Amo, Store, A;
        AmoaddD    "amoadd.d"     0xf800707f => 0x0000302f, Amo, Store, A;
        AmoxorD    "amoxor.d"     0xf800707f => 0x2000302f, Amo, Store, A;
        AmoandD    "amoand.d"     0xf800707f => 0x6000302f, Amo, Store, A;
        AmoorD     "amoor.d"      0xf800707f => 0x4000302f, Amo, Store, A;
        AmominD    "amomin.d"     0xf800707f => 0x8000302f, Amo, Store, A;
        AmomaxD    "amomax.d"     0xf800707f => 0xa000302f, Amo, Store, A;
        AmominuD   "amominu.d"    0xf800707f => 0xc000302f, Amo, Store, A;
        AmomaxuD   "amomaxu.d"    0xf800707f => 0xe000302f, Amo, Store, A;
    } };
}
