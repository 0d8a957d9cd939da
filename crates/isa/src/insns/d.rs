//! D.

macro_rules! d {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Double-precision FP.
            D = "d", hwprobe None;
        }
        Fld        "fld"          0x0000707f => 0x00003007, LoadF, Load, D;
        Fsd        "fsd"          0x0000707f => 0x00003027, StoreF, Store, D;
        FmaddD     "fmadd.d"      0x0600007f => 0x02000043, F4, Fpu, D;
        FmsubD     "fmsub.d"      0x0600007f => 0x02000047, F4, Fpu, D;
        FnmsubD    "fnmsub.d"     0x0600007f => 0x0200004b, F4, Fpu, D;
        FnmaddD    "fnmadd.d"     0x0600007f => 0x0200004f, F4, Fpu, D;
        FaddD      "fadd.d"       0xfe00007f => 0x02000053, F3Rm, Fpu, D;
        FsubD      "fsub.d"       0xfe00007f => 0x0a000053, F3Rm, Fpu, D;
        FmulD      "fmul.d"       0xfe00007f => 0x12000053, F3Rm, Fpu, D;
        FdivD      "fdiv.d"       0xfe00007f => 0x1a000053, F3Rm, Fdiv, D;
        FsqrtD     "fsqrt.d"      0xfff0007f => 0x5a000053, F2Rm, Fdiv, D;
        FsgnjD     "fsgnj.d"      0xfe00707f => 0x22000053, F3, Alu, D;
        FsgnjnD    "fsgnjn.d"     0xfe00707f => 0x22001053, F3, Alu, D;
        FsgnjxD    "fsgnjx.d"     0xfe00707f => 0x22002053, F3, Alu, D;
        FminD      "fmin.d"       0xfe00707f => 0x2a000053, F3, Fpu, D;
        FmaxD      "fmax.d"       0xfe00707f => 0x2a001053, F3, Fpu, D;
        FcvtSD     "fcvt.s.d"     0xfff0007f => 0x40100053, F2Rm, Fpu, D;
        FcvtDS     "fcvt.d.s"     0xfff0007f => 0x42000053, F2Exact, Fpu, D;
        FcvtWD     "fcvt.w.d"     0xfff0007f => 0xc2000053, XFRm, Fpu, D;
        FcvtWuD    "fcvt.wu.d"    0xfff0007f => 0xc2100053, XFRm, Fpu, D;
        FcvtLD     "fcvt.l.d"     0xfff0007f => 0xc2200053, XFRm, Fpu, D;
        FcvtLuD    "fcvt.lu.d"    0xfff0007f => 0xc2300053, XFRm, Fpu, D;
        FmvXD      "fmv.x.d"      0xfff0707f => 0xe2000053, XF, Alu, D;
        FclassD    "fclass.d"     0xfff0707f => 0xe2001053, XF, Alu, D;
        FeqD       "feq.d"        0xfe00707f => 0xa2002053, XFF, Fpu, D;
        FltD       "flt.d"        0xfe00707f => 0xa2001053, XFF, Fpu, D;
        FleD       "fle.d"        0xfe00707f => 0xa2000053, XFF, Fpu, D;
        FcvtDW     "fcvt.d.w"     0xfff0007f => 0xd2000053, FXExact, Fpu, D;
        FcvtDWu    "fcvt.d.wu"    0xfff0007f => 0xd2100053, FXExact, Fpu, D;
        FcvtDL     "fcvt.d.l"     0xfff0007f => 0xd2200053, FXRm, Fpu, D;
        FcvtDLu    "fcvt.d.lu"    0xfff0007f => 0xd2300053, FXRm, Fpu, D;
        FmvDX      "fmv.d.x"      0xfff0707f => 0xf2000053, FX, Alu, D;
    } };
}
