//! Zkt, a promise about timing rather than instructions: the operations it
//! covers (the base ISA, M's multiplies, Zbb, Zbc, ...) are declared with
//! their own extensions.

macro_rules! zkt {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Data-independent execution latency: every class cost in `[core]`
            /// is a constant, so the timing model satisfies it by construction.
            Zkt = "zkt", hwprobe Some(16);
        }
    } };
}
