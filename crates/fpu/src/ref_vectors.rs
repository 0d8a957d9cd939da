//! Reference vectors produced by real RISC-V instructions.
//!
//! `ref_vectors.txt` is the output of `tools/gen_vectors.c` compiled with
//! `riscv64-linux-gnu-gcc -static` and run under `qemu-riscv64` (see the
//! comment at the top of that file for the format and how to regenerate it).
//! Every line is replayed through this crate's public API and must match the
//! recorded result and `fflags` exactly.

use crate::*;

const VECTORS: &str = include_str!("ref_vectors.txt");

/// Runs one recorded instruction through the crate; returns (result, flags).
fn run(op: &str, rm: u8, a: u64, b: u64, c: u64) -> (u64, u8) {
    let mut f = 0u8;
    let fl = &mut f;
    let (a32, b32, c32) = (a as u32, b as u32, c as u32);
    let r: u64 = match op {
        "fadd.s" => f32_add(a32, b32, rm, fl).into(),
        "fsub.s" => f32_sub(a32, b32, rm, fl).into(),
        "fmul.s" => f32_mul(a32, b32, rm, fl).into(),
        "fdiv.s" => f32_div(a32, b32, rm, fl).into(),
        "fsqrt.s" => f32_sqrt(a32, rm, fl).into(),
        "fmadd.s" => f32_fmadd(a32, b32, c32, rm, fl).into(),
        "fmsub.s" => f32_fmsub(a32, b32, c32, rm, fl).into(),
        "fnmsub.s" => f32_fnmsub(a32, b32, c32, rm, fl).into(),
        "fnmadd.s" => f32_fnmadd(a32, b32, c32, rm, fl).into(),
        "fadd.d" => f64_add(a, b, rm, fl),
        "fsub.d" => f64_sub(a, b, rm, fl),
        "fmul.d" => f64_mul(a, b, rm, fl),
        "fdiv.d" => f64_div(a, b, rm, fl),
        "fsqrt.d" => f64_sqrt(a, rm, fl),
        "fmadd.d" => f64_fmadd(a, b, c, rm, fl),
        "fmsub.d" => f64_fmsub(a, b, c, rm, fl),
        "fnmsub.d" => f64_fnmsub(a, b, c, rm, fl),
        "fnmadd.d" => f64_fnmadd(a, b, c, rm, fl),
        "fmin.s" => f32_min(a32, b32, fl).into(),
        "fmax.s" => f32_max(a32, b32, fl).into(),
        "fmin.d" => f64_min(a, b, fl),
        "fmax.d" => f64_max(a, b, fl),
        "feq.s" => f32_eq(a32, b32, fl).into(),
        "flt.s" => f32_lt(a32, b32, fl).into(),
        "fle.s" => f32_le(a32, b32, fl).into(),
        "feq.d" => f64_eq(a, b, fl).into(),
        "flt.d" => f64_lt(a, b, fl).into(),
        "fle.d" => f64_le(a, b, fl).into(),
        "fclass.s" => f32_class(a32),
        "fclass.d" => f64_class(a),
        "fcvt.w.s" => f32_to_i32(a32, rm, fl),
        "fcvt.wu.s" => f32_to_u32(a32, rm, fl),
        "fcvt.l.s" => f32_to_i64(a32, rm, fl),
        "fcvt.lu.s" => f32_to_u64(a32, rm, fl),
        "fcvt.w.d" => f64_to_i32(a, rm, fl),
        "fcvt.wu.d" => f64_to_u32(a, rm, fl),
        "fcvt.l.d" => f64_to_i64(a, rm, fl),
        "fcvt.lu.d" => f64_to_u64(a, rm, fl),
        "fcvt.s.w" => i32_to_f32(a, rm, fl).into(),
        "fcvt.s.wu" => u32_to_f32(a, rm, fl).into(),
        "fcvt.s.l" => i64_to_f32(a, rm, fl).into(),
        "fcvt.s.lu" => u64_to_f32(a, rm, fl).into(),
        "fcvt.d.w" => i32_to_f64(a, rm, fl),
        "fcvt.d.wu" => u32_to_f64(a, rm, fl),
        "fcvt.d.l" => i64_to_f64(a, rm, fl),
        "fcvt.d.lu" => u64_to_f64(a, rm, fl),
        "fcvt.d.s" => f32_to_f64(a32, rm, fl),
        "fcvt.s.d" => f64_to_f32(a, rm, fl).into(),
        "unbox" => {
            let x = unbox_f32(a);
            box_f32(f32_sgnj(x, x))
        }
        _ => panic!("unknown op {op}"),
    };
    (r, f)
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).expect("hex field")
}

#[test]
fn qemu_reference_vectors() {
    let mut count = 0;
    let mut failures = Vec::new();
    for line in VECTORS.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 7, "bad line {line:?}");
        let rm: u8 = f[1].parse().expect("rm");
        let (a, b, c, want, want_flags) =
            (hex(f[2]), hex(f[3]), hex(f[4]), hex(f[5]), hex(f[6]) as u8);
        let (got, got_flags) = run(f[0], rm, a, b, c);
        if (got, got_flags) != (want, want_flags) {
            failures.push(format!(
                "{line}: got {got:x} flags {got_flags:x}, want {want:x} flags {want_flags:x}"
            ));
        }
        count += 1;
    }
    assert!(count > 5000, "only {count} vectors");
    assert!(
        failures.is_empty(),
        "{} of {count} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
