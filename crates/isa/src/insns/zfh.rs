//! Zfhmin and Zfh.

macro_rules! zfh {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Half-precision floating point (includes Zfhmin).
            Zfh = "zfh", hwprobe Some(27);
            /// Minimal half precision: `flh`, `fsh`, moves and conversions to and
            /// from single and double.
            Zfhmin = "zfhmin", hwprobe Some(28);
        }
        Flh        "flh"          0x0000707f => 0x00001007, LoadF, Load, Zfhmin;
        Fsh        "fsh"          0x0000707f => 0x00001027, StoreF, Store, Zfhmin;
        FmaddH     "fmadd.h"      0x0600007f => 0x04000043, F4, Fpu, Zfh;
        FmsubH     "fmsub.h"      0x0600007f => 0x04000047, F4, Fpu, Zfh;
        FnmsubH    "fnmsub.h"     0x0600007f => 0x0400004b, F4, Fpu, Zfh;
        FnmaddH    "fnmadd.h"     0x0600007f => 0x0400004f, F4, Fpu, Zfh;
        FaddH      "fadd.h"       0xfe00007f => 0x04000053, F3Rm, Fpu, Zfh;
        FsubH      "fsub.h"       0xfe00007f => 0x0c000053, F3Rm, Fpu, Zfh;
        FmulH      "fmul.h"       0xfe00007f => 0x14000053, F3Rm, Fpu, Zfh;
        FdivH      "fdiv.h"       0xfe00007f => 0x1c000053, F3Rm, Fdiv, Zfh;
        FsqrtH     "fsqrt.h"      0xfff0007f => 0x5c000053, F2Rm, Fdiv, Zfh;
        FsgnjH     "fsgnj.h"      0xfe00707f => 0x24000053, F3, Alu, Zfh;
        FsgnjnH    "fsgnjn.h"     0xfe00707f => 0x24001053, F3, Alu, Zfh;
        FsgnjxH    "fsgnjx.h"     0xfe00707f => 0x24002053, F3, Alu, Zfh;
        FminH      "fmin.h"       0xfe00707f => 0x2c000053, F3, Fpu, Zfh;
        FmaxH      "fmax.h"       0xfe00707f => 0x2c001053, F3, Fpu, Zfh;
        FcvtSH     "fcvt.s.h"     0xfff0007f => 0x40200053, F2Exact, Fpu, Zfhmin;
        FcvtHS     "fcvt.h.s"     0xfff0007f => 0x44000053, F2Rm, Fpu, Zfhmin;
        FcvtDH     "fcvt.d.h"     0xfff0007f => 0x42200053, F2Exact, Fpu, Zfhmin +D;
        FcvtHD     "fcvt.h.d"     0xfff0007f => 0x44100053, F2Rm, Fpu, Zfhmin +D;
        FcvtWH     "fcvt.w.h"     0xfff0007f => 0xc4000053, XFRm, Fpu, Zfh;
        FcvtWuH    "fcvt.wu.h"    0xfff0007f => 0xc4100053, XFRm, Fpu, Zfh;
        FcvtLH     "fcvt.l.h"     0xfff0007f => 0xc4200053, XFRm, Fpu, Zfh;
        FcvtLuH    "fcvt.lu.h"    0xfff0007f => 0xc4300053, XFRm, Fpu, Zfh;
        FmvXH      "fmv.x.h"      0xfff0707f => 0xe4000053, XF, Alu, Zfhmin;
        FclassH    "fclass.h"     0xfff0707f => 0xe4001053, XF, Alu, Zfh;
        FeqH       "feq.h"        0xfe00707f => 0xa4002053, XFF, Fpu, Zfh;
        FltH       "flt.h"        0xfe00707f => 0xa4001053, XFF, Fpu, Zfh;
        FleH       "fle.h"        0xfe00707f => 0xa4000053, XFF, Fpu, Zfh;
        FcvtHW     "fcvt.h.w"     0xfff0007f => 0xd4000053, FXRm, Fpu, Zfh;
        FcvtHWu    "fcvt.h.wu"    0xfff0007f => 0xd4100053, FXRm, Fpu, Zfh;
        FcvtHL     "fcvt.h.l"     0xfff0007f => 0xd4200053, FXRm, Fpu, Zfh;
        FcvtHLu    "fcvt.h.lu"    0xfff0007f => 0xd4300053, FXRm, Fpu, Zfh;
        FmvHX      "fmv.h.x"      0xfff0707f => 0xf4000053, FX, Alu, Zfhmin;
    } };
}
