//! Zicsr.

macro_rules! zicsr {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// The `cycle`, `time` and `instret` counters.
            Zicntr = "zicntr", hwprobe None;
            /// CSR instructions.
            Zicsr = "zicsr", hwprobe None;
            /// The `hpmcounter3`..`hpmcounter31` counters (no events are
            /// implemented, so they read 0, as the specification allows).
            Zihpm = "zihpm", hwprobe None;
        }
        Csrrw      "csrrw"        0x0000707f => 0x00001073, Csr, Alu, Zicsr;
        Csrrs      "csrrs"        0x0000707f => 0x00002073, Csr, Alu, Zicsr;
        Csrrc      "csrrc"        0x0000707f => 0x00003073, Csr, Alu, Zicsr;
        Csrrwi     "csrrwi"       0x0000707f => 0x00005073, CsrI, Alu, Zicsr;
        Csrrsi     "csrrsi"       0x0000707f => 0x00006073, CsrI, Alu, Zicsr;
        Csrrci     "csrrci"       0x0000707f => 0x00007073, CsrI, Alu, Zicsr;
    } };
}
