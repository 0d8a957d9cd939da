//! The compressed extensions. Their instructions decode (`compressed.rs`)
//! to the operations of the 32-bit instructions they stand for, so they
//! declare extensions only; `c.mop.N` is with the other may-be-operations
//! in `mop.rs`.

macro_rules! c {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Compressed instructions (Zca, and Zcd with D).
            C = "c", hwprobe Some(1);
            /// The compressed subset of C without FP loads and stores.
            Zca = "zca", hwprobe Some(43);
            /// Additional simple compressed instructions.
            Zcb = "zcb", hwprobe Some(44);
            /// Compressed double-precision loads and stores.
            Zcd = "zcd", hwprobe Some(45);
        }
    } };
}
