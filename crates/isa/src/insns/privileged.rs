//! Privileged.

macro_rules! privileged {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Supervisor timer compare (`stimecmp`).
            Sstc = "sstc", hwprobe None;
            /// NAPOT translation contiguity.
            Svnapot = "svnapot", hwprobe None;
        }
        Mret       "mret"         0xffffffff => 0x30200073, Bare, Alu, Base;
        Sret       "sret"         0xffffffff => 0x10200073, Bare, Alu, Base;
        Wfi        "wfi"          0xffffffff => 0x10500073, Bare, Alu, Base;
        SfenceVma  "sfence.vma"   0xfe007fff => 0x12000073, Sfence, Alu, Base;
    } };
}
