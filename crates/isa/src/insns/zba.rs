//! Zba.

macro_rules! zba {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Address generation (`sh*add`, `*.uw`).
            Zba = "zba", hwprobe Some(3);
        }
        AddUw      "add.uw"       0xfe00707f => 0x0800003b, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(zext32(a));
        Sh1add     "sh1add"       0xfe00707f => 0x20002033, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(a << 1);
        Sh2add     "sh2add"       0xfe00707f => 0x20004033, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(a << 2);
        Sh3add     "sh3add"       0xfe00707f => 0x20006033, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(a << 3);
        Sh1addUw   "sh1add.uw"    0xfe00707f => 0x2000203b, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(zext32(a) << 1);
        Sh2addUw   "sh2add.uw"    0xfe00707f => 0x2000403b, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(zext32(a) << 2);
        Sh3addUw   "sh3add.uw"    0xfe00707f => 0x2000603b, Rrr, Alu, Zba,
            exec |a, b| b.wrapping_add(zext32(a) << 3);
        SlliUw     "slli.uw"      0xfc00707f => 0x0800101b, Shamt, Alu, Zba,
            exec |a, b| zext32(a) << (b & 63);
    } };
}
