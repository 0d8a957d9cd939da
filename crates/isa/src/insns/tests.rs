//! The table is the source of truth: the decoder built from it must agree
//! with it in both directions, and where two entries overlap one must be
//! the more specific (it is tried first).

use crate::{decode, expand_compressed, Op};

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// Whether `w` matches one of `op`'s table encodings.
fn matches(op: Op, w: u32) -> bool {
    op.encodings().iter().any(|&(mask, m)| w & mask == m)
}

/// The most specific table entry matching `w` other than `op`, if it is
/// more specific than every encoding of `op` that `w` matches.
fn more_specific(op: Op, w: u32) -> Option<Op> {
    let own = op
        .encodings()
        .iter()
        .filter(|&&(mask, m)| w & mask == m)
        .map(|&(mask, _)| mask)
        .collect::<Vec<_>>();
    Op::ALL.iter().copied().find(|&o| {
        o != op
            && o.encodings().iter().any(|&(mask, m)| {
                w & mask == m && own.iter().all(|&om| mask & om == om && mask != om)
            })
    })
}

/// Every table entry's pattern, with random don't-care bits, decodes to
/// the entry's operation, unless a more specific entry (a hint carved out
/// of a base instruction, `pause` out of `fence` ...) also matches.
#[test]
fn every_table_pattern_decodes_to_its_op() {
    let mut s = 0x1234_5678_9abc_def1u64;
    for &op in &Op::ALL[1..] {
        assert!(!op.encodings().is_empty(), "{op:?} has no encoding");
        for &(mask, m) in op.encodings() {
            assert_eq!(m & !mask, 0, "{op:?}: match bits outside the mask");
            for _ in 0..2000 {
                let w = m | (xorshift(&mut s) as u32 & !mask);
                let got = decode(w).op;
                if got != op {
                    assert_eq!(
                        more_specific(op, w),
                        Some(got),
                        "{op:?} pattern {w:#010x} decodes to {got:?}"
                    );
                }
            }
        }
    }
}

/// What the decoder accepts, the table declares: every legal random word
/// (or the 32-bit expansion of a compressed one) matches an encoding of
/// the operation it decodes to, and no more specific entry.
#[test]
fn every_decoded_word_matches_the_table() {
    let mut s = 0x0bad_cafe_f00d_1234u64;
    let mut bad = std::collections::BTreeMap::<String, (u32, u32, u32)>::new();
    // Random words, and near misses: a table pattern with one fixed bit
    // flipped and random don't-care bits.
    let patterns: Vec<(u32, u32)> = Op::ALL
        .iter()
        .flat_map(|o| o.encodings())
        .copied()
        .collect();
    for i in 0..4_000_000u32 {
        let r = xorshift(&mut s) as u32;
        let w = match i % 4 {
            0 => r | 3,
            1 => r,
            _ => {
                let (mask, m) = patterns[(r as usize >> 8) % patterns.len()];
                let fixed: Vec<u32> = (0..32).filter(|b| mask >> b & 1 == 1).collect();
                let bit = fixed[(xorshift(&mut s) as usize) % fixed.len()];
                (m ^ (1 << bit)) | (xorshift(&mut s) as u32 & !mask)
            }
        };
        let op = decode(w).op;
        if op == Op::Illegal {
            continue;
        }
        let full = if w & 3 == 3 {
            w
        } else {
            match expand_compressed(w as u16) {
                Some(e) => e,
                None => w & 0xffff,
            }
        };
        if !matches(op, full) || more_specific(op, full).is_some() {
            bad.entry(format!("{op:?}")).or_insert((w, full, 0)).2 += 1;
        }
    }
    assert!(bad.is_empty(), "{bad:#x?}");
}

/// No two entries share an encoding, and the mnemonics are unique.
#[test]
fn table_entries_are_distinct() {
    let mut seen = std::collections::HashMap::new();
    for &op in &Op::ALL[1..] {
        for &e in op.encodings() {
            assert_eq!(seen.insert(e, op), None, "{op:?} {e:#x?}");
        }
    }
    let mut names = std::collections::HashSet::new();
    for &op in Op::ALL {
        assert!(names.insert(op.mnemonic()) || op == Op::Marker, "{op:?}");
    }
}

/// Where two operations' encodings overlap, one's mask strictly contains
/// the other's: the decoder tries the more specific first, so which
/// operation a word is never depends on the order of the table.
#[test]
fn overlapping_entries_are_nested() {
    let all: Vec<(u32, u32, Op)> = Op::ALL
        .iter()
        .flat_map(|&op| op.encodings().iter().map(move |&(mask, m)| (mask, m, op)))
        .collect();
    for (i, &(ma, va, a)) in all.iter().enumerate() {
        for &(mb, vb, b) in &all[i + 1..] {
            let overlap = (va ^ vb) & ma & mb == 0 && (va & 3 == 3) == (vb & 3 == 3);
            if overlap && a != b {
                let nested = ma != mb && (ma & mb == mb || ma & mb == ma);
                assert!(
                    nested,
                    "{a:?} {ma:#010x}/{va:#010x} and {b:?} {mb:#010x}/{vb:#010x}"
                );
            }
        }
    }
}

/// `dispatch_ops!` sends each operation to the arm of the file that
/// declares it (of `exec` if it has one), as a constant.
#[test]
fn dispatch_ops_names_each_operations_file() {
    macro_rules! file {
        ($file:ident, $op:ident) => {{
            assert_eq!(Op::$op.mnemonic(), Op::$op.info().mnemonic);
            stringify!($file)
        }};
    }
    let file_of = |op: Op| dispatch_ops!(op, file);
    assert_eq!(file_of(Op::Illegal), "illegal");
    assert_eq!(file_of(Op::Addi), "rv64i");
    assert_eq!(file_of(Op::Csrrw), "zicsr");
    assert_eq!(file_of(Op::Mulhu), "m");
    assert_eq!(file_of(Op::AmomaxuD), "a");
    assert_eq!(file_of(Op::Flw), "f");
    assert_eq!(file_of(Op::Fld), "d");
    assert_eq!(file_of(Op::Flh), "zfh");
    assert_eq!(file_of(Op::Mret), "privileged");
    assert_eq!(file_of(Op::CboZero), "cache");
    assert_eq!(file_of(Op::Andn), "exec");
    assert_eq!(file_of(Op::CzeroNez), "exec");
    assert_eq!(file_of(Op::Pause), "hints");
    assert_eq!(file_of(Op::Marker), "marker");
    // Every operation of a file lies between its first and its last: the
    // files are chained in `Op`'s order.
    let mut seen: Vec<&str> = Vec::new();
    for &op in Op::ALL {
        let f = file_of(op);
        assert_eq!(f == "exec", op.info().exec.is_some(), "{op:?}");
        if f == "exec" {
            continue;
        }
        if seen.last() != Some(&f) {
            assert!(!seen.contains(&f), "{op:?}: {f} again");
            seen.push(f);
        }
    }
}
