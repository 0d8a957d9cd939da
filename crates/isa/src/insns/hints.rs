//! Hints: Zihintpause, Zihintntl, Zicbop (the offset in `imm`).

macro_rules! hints {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Cache-block prefetch hints (`prefetch.i/r/w`).
            Zicbop = "zicbop", hwprobe None;
            /// Non-temporal locality hints (`ntl.*`).
            Zihintntl = "zihintntl", hwprobe Some(29);
            /// The `pause` hint.
            Zihintpause = "zihintpause", hwprobe Some(36);
        }
        Pause      "pause"        0xffffffff => 0x0100000f, Bare, Alu, Zihintpause;
        NtlP1      "ntl.p1"       0xffffffff => 0x00200033, Bare, Alu, Zihintntl;
        NtlPall    "ntl.pall"     0xffffffff => 0x00300033, Bare, Alu, Zihintntl;
        NtlS1      "ntl.s1"       0xffffffff => 0x00400033, Bare, Alu, Zihintntl;
        NtlAll     "ntl.all"      0xffffffff => 0x00500033, Bare, Alu, Zihintntl;
        PrefetchI  "prefetch.i"   0x01f07fff => 0x00006013, Prefetch, Alu, Zicbop;
        PrefetchR  "prefetch.r"   0x01f07fff => 0x00106013, Prefetch, Store, Zicbop;
        PrefetchW  "prefetch.w"   0x01f07fff => 0x00306013, Prefetch, Store, Zicbop;
    } };
}
