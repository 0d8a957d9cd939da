//! Zfa.

macro_rules! zfa {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Additional floating-point instructions (`fli`, `fminm`/`fmaxm`,
            /// `fround`/`froundnx`, `fcvtmod.w.d`, `fleq`/`fltq`).
            Zfa = "zfa", hwprobe Some(32);
        }
        FliH       "fli.h"        0xfff0707f => 0xf4100053, Fli, Alu, ZfaZfh;
        FliS       "fli.s"        0xfff0707f => 0xf0100053, Fli, Alu, Zfa;
        FliD       "fli.d"        0xfff0707f => 0xf2100053, Fli, Alu, Zfa +D;
        FminmH     "fminm.h"      0xfe00707f => 0x2c002053, F3, Fpu, ZfaZfh;
        FmaxmH     "fmaxm.h"      0xfe00707f => 0x2c003053, F3, Fpu, ZfaZfh;
        FminmS     "fminm.s"      0xfe00707f => 0x28002053, F3, Fpu, Zfa;
        FmaxmS     "fmaxm.s"      0xfe00707f => 0x28003053, F3, Fpu, Zfa;
        FminmD     "fminm.d"      0xfe00707f => 0x2a002053, F3, Fpu, Zfa +D;
        FmaxmD     "fmaxm.d"      0xfe00707f => 0x2a003053, F3, Fpu, Zfa +D;
        FroundH    "fround.h"     0xfff0007f => 0x44400053, F2Rm, Fpu, ZfaZfh;
        FroundnxH  "froundnx.h"   0xfff0007f => 0x44500053, F2Rm, Fpu, ZfaZfh;
        FroundS    "fround.s"     0xfff0007f => 0x40400053, F2Rm, Fpu, Zfa;
        FroundnxS  "froundnx.s"   0xfff0007f => 0x40500053, F2Rm, Fpu, Zfa;
        FroundD    "fround.d"     0xfff0007f => 0x42400053, F2Rm, Fpu, Zfa +D;
        FroundnxD  "froundnx.d"   0xfff0007f => 0x42500053, F2Rm, Fpu, Zfa +D;
        FcvtmodWD  "fcvtmod.w.d"  0xfff0707f => 0xc2801053, XFRm, Fpu, Zfa +D;
        FleqH      "fleq.h"       0xfe00707f => 0xa4004053, XFF, Fpu, ZfaZfh;
        FltqH      "fltq.h"       0xfe00707f => 0xa4005053, XFF, Fpu, ZfaZfh;
        FleqS      "fleq.s"       0xfe00707f => 0xa0004053, XFF, Fpu, Zfa;
        FltqS      "fltq.s"       0xfe00707f => 0xa0005053, XFF, Fpu, Zfa;
        FleqD      "fleq.d"       0xfe00707f => 0xa2004053, XFF, Fpu, Zfa +D;
        FltqD      "fltq.d"       0xfe00707f => 0xa2005053, XFF, Fpu, Zfa +D;
    } };
}
