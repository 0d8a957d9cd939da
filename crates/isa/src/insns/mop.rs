//! Zimop and Zcmop (`imm` holds N).

macro_rules! mop {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// May-be-operations (`mop.r.N`, `mop.rr.N`).
            Zimop = "zimop", hwprobe Some(42);
            /// Compressed may-be-operations (`c.mop.N`).
            Zcmop = "zcmop", hwprobe Some(47);
        }
        MopR       "mop.r"        0xb3c0707f => 0x81c04073, MopR, Alu, Zimop;
        MopRr      "mop.rr"       0xb200707f => 0x82004073, MopRr, Alu, Zimop;
        CMop       "c.mop"        0x0000f0ff => 0x00006081, CMop, Alu, Zcmop;
    } };
}
