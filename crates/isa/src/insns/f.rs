//! F.

macro_rules! f {
    ($($chain:tt)*) => { isa_chain! { $($chain)* ;
        extensions {
            /// Single-precision FP.
            F = "f", hwprobe None;
        }
        Flw        "flw"          0x0000707f => 0x00002007, LoadF, Load, F;
        Fsw        "fsw"          0x0000707f => 0x00002027, StoreF, Store, F;
        FmaddS     "fmadd.s"      0x0600007f => 0x00000043, F4, Fpu, F;
        FmsubS     "fmsub.s"      0x0600007f => 0x00000047, F4, Fpu, F;
        FnmsubS    "fnmsub.s"     0x0600007f => 0x0000004b, F4, Fpu, F;
        FnmaddS    "fnmadd.s"     0x0600007f => 0x0000004f, F4, Fpu, F;
        FaddS      "fadd.s"       0xfe00007f => 0x00000053, F3Rm, Fpu, F;
        FsubS      "fsub.s"       0xfe00007f => 0x08000053, F3Rm, Fpu, F;
        FmulS      "fmul.s"       0xfe00007f => 0x10000053, F3Rm, Fpu, F;
        FdivS      "fdiv.s"       0xfe00007f => 0x18000053, F3Rm, Fdiv, F;
        FsqrtS     "fsqrt.s"      0xfff0007f => 0x58000053, F2Rm, Fdiv, F;
        FsgnjS     "fsgnj.s"      0xfe00707f => 0x20000053, F3, Alu, F;
        FsgnjnS    "fsgnjn.s"     0xfe00707f => 0x20001053, F3, Alu, F;
        FsgnjxS    "fsgnjx.s"     0xfe00707f => 0x20002053, F3, Alu, F;
        FminS      "fmin.s"       0xfe00707f => 0x28000053, F3, Fpu, F;
        FmaxS      "fmax.s"       0xfe00707f => 0x28001053, F3, Fpu, F;
        FcvtWS     "fcvt.w.s"     0xfff0007f => 0xc0000053, XFRm, Fpu, F;
        FcvtWuS    "fcvt.wu.s"    0xfff0007f => 0xc0100053, XFRm, Fpu, F;
        FcvtLS     "fcvt.l.s"     0xfff0007f => 0xc0200053, XFRm, Fpu, F;
        FcvtLuS    "fcvt.lu.s"    0xfff0007f => 0xc0300053, XFRm, Fpu, F;
        FmvXW      "fmv.x.w"      0xfff0707f => 0xe0000053, XF, Alu, F;
        FclassS    "fclass.s"     0xfff0707f => 0xe0001053, XF, Alu, F;
        FeqS       "feq.s"        0xfe00707f => 0xa0002053, XFF, Fpu, F;
        FltS       "flt.s"        0xfe00707f => 0xa0001053, XFF, Fpu, F;
        FleS       "fle.s"        0xfe00707f => 0xa0000053, XFF, Fpu, F;
        FcvtSW     "fcvt.s.w"     0xfff0007f => 0xd0000053, FXRm, Fpu, F;
        FcvtSWu    "fcvt.s.wu"    0xfff0007f => 0xd0100053, FXRm, Fpu, F;
        FcvtSL     "fcvt.s.l"     0xfff0007f => 0xd0200053, FXRm, Fpu, F;
        FcvtSLu    "fcvt.s.lu"    0xfff0007f => 0xd0300053, FXRm, Fpu, F;
        FmvWX      "fmv.w.x"      0xfff0707f => 0xf0000053, FX, Alu, F;
    } };
}
