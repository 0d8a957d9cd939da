//! Zawrs.

macro_rules! zawrs {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Wait-on-reservation-set (`wrs.nto`, `wrs.sto`).
            Zawrs = "zawrs", hwprobe Some(48);
        }
        WrsNto     "wrs.nto"      0xffffffff => 0x00d00073, Bare, Alu, Zawrs;
        WrsSto     "wrs.sto"      0xffffffff => 0x01d00073, Bare, Alu, Zawrs;
    } };
}
