//! The ELF-loader fuzz target (`fuzz/`, cargo-fuzz) at a size the test suite
//! affords: seeded mutations of valid programs (static, PIE, dynamically
//! linked), biased toward the header and program-header fields.

#[path = "../../../fuzz/bodies/elf_loader.rs"]
mod body;

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A little-endian RISC-V ELF64 of `e_type` with `phdrs` (type, flags,
/// offset, vaddr, filesz, memsz) after the header, then `payload`.
fn build(
    e_type: u16,
    entry: u64,
    phdrs: &[(u32, u32, u64, u64, u64, u64)],
    payload: &[u8],
) -> Vec<u8> {
    let mut v = b"\x7fELF\x02\x01\x01\x00".to_vec();
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&e_type.to_le_bytes());
    v.extend_from_slice(&243u16.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&entry.to_le_bytes());
    v.extend_from_slice(&64u64.to_le_bytes());
    v.extend_from_slice(&0u64.to_le_bytes());
    v.extend_from_slice(&5u32.to_le_bytes());
    for h in [64u16, 56, phdrs.len() as u16, 64, 0, 0] {
        v.extend_from_slice(&h.to_le_bytes());
    }
    for &(ty, flags, off, vaddr, filesz, memsz) in phdrs {
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&flags.to_le_bytes());
        for x in [off, vaddr, vaddr, filesz, memsz, 0x1000] {
            v.extend_from_slice(&x.to_le_bytes());
        }
    }
    v.extend_from_slice(payload);
    v
}

fn seeds() -> Vec<Vec<u8>> {
    let code = [0x13, 0, 0, 0, 0x73, 0, 0, 0];
    let one = (64 + 56 + 8) as u64;
    let interp = b"/lib/ld-linux-riscv64-lp64d.so.1\0\0\0\0";
    let three = (64 + 3 * 56) as u64;
    let mut dynamic = interp.to_vec();
    dynamic.extend_from_slice(&code);
    let dyn_len = three + dynamic.len() as u64;
    vec![
        build(2, 0x10000 + 120, &[(1, 5, 0, 0x10000, one, one)], &code),
        build(3, 120, &[(1, 5, 0, 0, one, one + 0x3000)], &code),
        build(
            3,
            three + interp.len() as u64,
            &[
                (6, 4, 64, 64, 3 * 56, 3 * 56),
                (3, 4, three, three, interp.len() as u64, interp.len() as u64),
                (1, 7, 0, 0, dyn_len, dyn_len + 0x10),
            ],
            &dynamic,
        ),
    ]
}

/// Values that sit on the loader's boundaries.
const INTERESTING: [u64; 12] = [
    0,
    1,
    0xfff,
    0x1000,
    0x40_0000_0000 - 0x1000,
    0x40_0000_0000,
    0x2a_aaaa_a000,
    1 << 63,
    u64::MAX - 0xfff,
    u64::MAX - 1,
    u64::MAX,
    4096 / 56 + 1,
];

#[test]
fn mutated_programs_load_or_fail_cleanly() {
    let mut s = 0x0e1f_10ad_u64;
    let seeds = seeds();
    for seed in &seeds {
        body::one_input(seed);
    }
    for _ in 0..20_000 {
        let mut f = seeds[(next(&mut s) % seeds.len() as u64) as usize].clone();
        for _ in 0..1 + next(&mut s) % 4 {
            let header_part = 64 + 3 * 56;
            let at = (next(&mut s) as usize) % header_part.min(f.len());
            match next(&mut s) % 3 {
                0 => f[at] = next(&mut s) as u8,
                1 => {
                    // A boundary value over an 8-byte field.
                    let at = at & !7;
                    if at + 8 <= f.len() {
                        let v = INTERESTING[(next(&mut s) % INTERESTING.len() as u64) as usize];
                        f[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                _ => {
                    let at = at & !1;
                    if at + 2 <= f.len() {
                        f[at..at + 2].copy_from_slice(&(next(&mut s) as u16).to_le_bytes());
                    }
                }
            }
        }
        if next(&mut s).is_multiple_of(8) {
            let n = (next(&mut s) % (f.len() as u64 + 1)) as usize;
            f.truncate(n);
        }
        body::one_input(&f);
    }
}
