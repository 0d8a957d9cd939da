#!/usr/bin/env python3
"""Regenerates crates/isa/src/testdata_zfh.rs from GNU binutils.

Usage: python3 crates/isa/tools/gen_testdata_zfh.py  (needs
riscv64-linux-gnu-as and riscv64-linux-gnu-objdump on PATH).

Every Zfh/Zfhmin instruction, with random registers, offsets and rounding
modes, assembled with -march=rv64gc_zfh and disassembled with
`objdump -d -M no-aliases`, as (pc, word, text) rows. Zfa is missing:
binutils 2.40 does not know it (its cases are written by hand in
crates/isa/src/decode_fp_ext.rs).
"""
import os
import random

from gen_testdata import FREGS, RMS, XREGS, assemble

rng = random.Random(0x2F16)


def X():
    return rng.choice(XREGS)


def F():
    return rng.choice(FREGS)


def mem():
    return f"{rng.choice([0, 2, -2, 2047, -2048, rng.randint(-2048, 2047)])}({X()})"


def rm():
    return rng.choice(RMS)


T = [
    lambda: f"flh {F()},{mem()}",
    lambda: f"fsh {F()},{mem()}",
    lambda: f"fsqrt.h {F()},{F()}{rm()}",
    lambda: f"fclass.h {X()},{F()}",
    lambda: f"fmv.x.h {X()},{F()}",
    lambda: f"fmv.h.x {F()},{X()}",
    # Exact widenings: gas 2.40 takes no rounding-mode operand.
    lambda: f"fcvt.s.h {F()},{F()}",
    lambda: f"fcvt.d.h {F()},{F()}",
    lambda: f"fcvt.h.s {F()},{F()}{rm()}",
    lambda: f"fcvt.h.d {F()},{F()}{rm()}",
]
for m in ["fmadd", "fmsub", "fnmsub", "fnmadd"]:
    T.append(lambda m=m: f"{m}.h {F()},{F()},{F()},{F()}{rm()}")
for m in ["fadd", "fsub", "fmul", "fdiv"]:
    T.append(lambda m=m: f"{m}.h {F()},{F()},{F()}{rm()}")
for m in ["fsgnj", "fsgnjn", "fsgnjx", "fmin", "fmax"]:
    T.append(lambda m=m: f"{m}.h {F()},{F()},{F()}")
for m in ["feq", "flt", "fle"]:
    T.append(lambda m=m: f"{m}.h {X()},{F()},{F()}")
for i in ["w", "wu", "l", "lu"]:
    T.append(lambda i=i: f"fcvt.{i}.h {X()},{F()}{rm()}")
    T.append(lambda i=i: f"fcvt.h.{i} {F()},{X()}{rm()}")


def main():
    lines = []
    for f in T:
        seen = set()
        for _ in range(8):
            ln = f()
            if ln not in seen:
                seen.add(ln)
                lines.append(ln)
    rows = assemble(lines, "rv64gc_zfh", False)
    out = [
        "//! Zfh/Zfhmin encodings produced by GNU binutils 2.40; regenerate with",
        "//! `python3 crates/isa/tools/gen_testdata_zfh.py`. Texts are",
        "//! `objdump -d -M no-aliases` output.",
        "",
        "/// `(pc, word, objdump text)`.",
        "#[rustfmt::skip]",
        "pub(crate) const RV32_ZFH: &[(u64, u32, &str)] = &[",
    ]
    for (pc, hexw, text), src in zip(rows, lines):
        assert not text.startswith(".word"), src
        out.append(f"    (0x{pc:x}, 0x{hexw}, \"{text}\"), // {src}")
    out.append("];")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src",
                        "testdata_zfh.rs")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print(f"{len(rows)} rows -> {path}")


if __name__ == "__main__":
    main()
