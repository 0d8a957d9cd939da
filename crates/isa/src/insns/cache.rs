//! Cache control: SiFive CFLUSH.D.L1 (both encodings), Zicbom and Zicboz.

macro_rules! cache {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Cache blocks of 64 bytes, naturally aligned, for every `cbo.*` and
            /// prefetch (no instructions). `cbo.zero`'s block is always
            /// [`CBOZ_BLOCK_BYTES`](crate::CBOZ_BLOCK_BYTES); the others' are the L1D line, so a machine
            /// config keeps this only when that line is 64 bytes too.
            Zic64b = "zic64b", hwprobe None;
            /// Cache-block management (`cbo.clean/flush/inval`).
            Zicbom = "zicbom", hwprobe None;
            /// Cache-block zero (`cbo.zero`).
            Zicboz = "zicboz", hwprobe Some(6);
        }
        CflushDL1  "cflush.d.l1"  0xfff07fff => 0xfc000073 | 0xfff07fff => 0xcc000073, Cflush, Store, Base;
        CboClean   "cbo.clean"    0xfff07fff => 0x0010200f, Cbo, Store, Zicbom;
        CboFlush   "cbo.flush"    0xfff07fff => 0x0020200f, Cbo, Store, Zicbom;
        CboInval   "cbo.inval"    0xfff07fff => 0x0000200f, Cbo, Store, Zicbom;
        CboZero    "cbo.zero"     0xfff07fff => 0x0040200f, Cbo, Store, Zicboz;
    } };
}
