//! M.

macro_rules! m {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Integer multiply and divide.
            M = "m", hwprobe None;
        }
        Mul        "mul"          0xfe00707f => 0x02000033, Rrr, Mul, M;
        Mulh       "mulh"         0xfe00707f => 0x02001033, Rrr, Mul, M;
        Mulhsu     "mulhsu"       0xfe00707f => 0x02002033, Rrr, Mul, M;
        Mulhu      "mulhu"        0xfe00707f => 0x02003033, Rrr, Mul, M;
        Div        "div"          0xfe00707f => 0x02004033, Rrr, Div, M;
        Divu       "divu"         0xfe00707f => 0x02005033, Rrr, Div, M;
        Rem        "rem"          0xfe00707f => 0x02006033, Rrr, Div, M;
        Remu       "remu"         0xfe00707f => 0x02007033, Rrr, Div, M;
        Mulw       "mulw"         0xfe00707f => 0x0200003b, Rrr, Mul, M;
        Divw       "divw"         0xfe00707f => 0x0200403b, Rrr, Div, M;
        Divuw      "divuw"        0xfe00707f => 0x0200503b, Rrr, Div, M;
        Remw       "remw"         0xfe00707f => 0x0200603b, Rrr, Div, M;
        Remuw      "remuw"        0xfe00707f => 0x0200703b, Rrr, Div, M;
    } };
}
