//! The explorer's crash images against a brute-force enumeration, on
//! random tiny programs: at every ordering point the set of images the
//! explorer makes must equal the set a direct model of write-backs gives
//! when every choice it has is tried.
//!
//! The direct model, per line: each flush makes a write-back that leaves
//! the cache at the flush with the line's value then; a cache may also
//! evict the line, making a write-back with its value at that moment (any
//! moment with `reorder`, else only right before the crash); a line's
//! write-backs reach the domain in the order they left; at the crash some
//! prefix of them has arrived, which must include every flush a later
//! fence of its hart completed; the image holds the last arrived value (the
//! start's if none). Every subset of eviction moments and every prefix is
//! tried. Under eADR the image is the memory as the crash found it.

use rvnvmm_explore::file::{parse, write, TraceFile, TraceHeader};
use rvnvmm_explore::replay::{Options, Replay, StartImage};
use rvnvmm_explore::states::enumerate;
use rvnvmm_mem::persist::DomainKind;
use rvnvmm_mem::persist_trace::{PersistTrace, TraceKind};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const LINE: u64 = 64;
const LINES: u64 = 2;

/// Every line of the starting image holds its index + 100 in its first word.
struct Start;

impl StartImage for Start {
    fn read(&mut self, offset: u64, len: usize) -> Arc<[u8]> {
        let mut v = vec![0u8; len];
        v[..8].copy_from_slice(&start_word(offset / LINE).to_le_bytes());
        v.into()
    }
}

fn start_word(line: u64) -> u64 {
    100 + line
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Store { line: u64, hart: u32, value: u64 },
    Flush { line: u64, hart: u32 },
    Fence { hart: u32 },
}

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn program(seed: u64, len: usize) -> Vec<Op> {
    let mut s = seed;
    let mut value = 1;
    (0..len)
        .map(|_| {
            let line = splitmix(&mut s) % LINES;
            let hart = (splitmix(&mut s) % 2) as u32;
            match splitmix(&mut s) % 5 {
                0 | 1 => {
                    value += 1;
                    Op::Store { line, hart, value }
                }
                2 | 3 => Op::Flush { line, hart },
                _ => Op::Fence { hart },
            }
        })
        .collect()
}

fn trace_of(ops: &[Op], domain: DomainKind) -> TraceFile {
    let mut t = PersistTrace::default();
    for (i, op) in ops.iter().enumerate() {
        let i = i as u64;
        match *op {
            Op::Store { line, hart, value } => t.push_bytes(
                TraceKind::Store,
                hart,
                i,
                0x1000 + i,
                line * LINE,
                &value.to_le_bytes(),
            ),
            Op::Flush { line, hart } => t.push(TraceKind::Flush, hart, i, 0x1000 + i, line * LINE),
            Op::Fence { hart } => t.push(TraceKind::Fence, hart, i, 0x1000 + i, 0),
        }
    }
    let h = TraceHeader {
        base: 0,
        size: LINES * LINE,
        line_bytes: LINE,
        domain,
        instructions: ops.len() as u64,
    };
    let mut buf = Vec::new();
    write(&mut buf, &h, &t, &[]).unwrap();
    parse(&buf).unwrap()
}

/// An image: each line's first word.
type Image = Vec<u64>;

/// The line's value after the first `k` ops.
fn value_at(ops: &[Op], line: u64, k: usize) -> u64 {
    ops[..k]
        .iter()
        .rev()
        .find_map(|op| match *op {
            Op::Store { line: l, value, .. } if l == line => Some(value),
            _ => None,
        })
        .unwrap_or(start_word(line))
}

/// The values a line may hold after a crash right before op `c`.
fn brute_line(ops: &[Op], line: u64, c: usize, reorder: bool) -> BTreeSet<u64> {
    // Flushes: (leaves at, value, must have arrived).
    let flushes: Vec<(usize, u64, bool)> = ops[..c]
        .iter()
        .enumerate()
        .filter_map(|(f, op)| match *op {
            Op::Flush { line: l, hart } if l == line => {
                let fenced = ops[f + 1..c]
                    .iter()
                    .any(|o| matches!(*o, Op::Fence { hart: h } if h == hart));
                Some((f, value_at(ops, line, f), fenced))
            }
            _ => None,
        })
        .collect();
    let moments: Vec<usize> = if reorder { (0..=c).collect() } else { vec![c] };
    let mut out = BTreeSet::new();
    for mask in 0u32..(1 << moments.len()) {
        // The write-backs in the order they leave: (leaves at, order, value, must).
        let mut wbs: Vec<(usize, u8, u64, bool)> =
            flushes.iter().map(|&(f, v, m)| (f, 0, v, m)).collect();
        for (j, &m) in moments.iter().enumerate() {
            if mask & (1 << j) != 0 {
                wbs.push((m, 1, value_at(ops, line, m), false));
            }
        }
        wbs.sort();
        let must = wbs.iter().rposition(|w| w.3).map_or(0, |k| k + 1);
        for prefix in must..=wbs.len() {
            out.insert(if prefix == 0 {
                start_word(line)
            } else {
                wbs[prefix - 1].2
            });
        }
    }
    out
}

fn brute(ops: &[Op], c: usize, reorder: bool, domain: DomainKind) -> BTreeSet<Image> {
    if domain == DomainKind::Eadr {
        return [(0..LINES).map(|l| value_at(ops, l, c)).collect()].into();
    }
    let per_line: Vec<Vec<u64>> = (0..LINES)
        .map(|l| brute_line(ops, l, c, reorder).into_iter().collect())
        .collect();
    let mut out: BTreeSet<Image> = [Vec::new()].into();
    for vals in per_line {
        out = out
            .iter()
            .flat_map(|img| {
                vals.iter().map(move |&v| {
                    let mut i = img.clone();
                    i.push(v);
                    i
                })
            })
            .collect();
    }
    out
}

/// The explorer's images at each point: point record -> images.
fn explored(trace: &TraceFile, reorder: bool) -> BTreeMap<usize, BTreeSet<Image>> {
    let opts = Options {
        reorder,
        ..Options::default()
    };
    let mut r = Replay::new(trace, Start, opts);
    let mut out = BTreeMap::new();
    while let Some(p) = r.next_point() {
        let durable: BTreeMap<u64, u64> = r
            .durable_changes()
            .iter()
            .map(|(o, b)| (*o, u64::from_le_bytes(b[..8].try_into().unwrap())))
            .collect();
        let mut images = BTreeSet::new();
        for s in enumerate(&p.open, usize::MAX) {
            let mut img: Image = (0..LINES)
                .map(|l| *durable.get(&(l * LINE)).unwrap_or(&start_word(l)))
                .collect();
            for (o, &v) in p.open.iter().zip(&s) {
                if o.offset == o.line {
                    let b = &o.values[v as usize].bytes;
                    img[(o.line / LINE) as usize] = u64::from_le_bytes(b[..8].try_into().unwrap());
                }
            }
            images.insert(img);
        }
        out.insert(p.record, images);
    }
    out
}

fn check(domain: DomainKind, reorder: bool) {
    let mut points = 0;
    for seed in 0..1000u64 {
        let ops = program(seed, 3 + (seed % 7) as usize);
        let trace = trace_of(&ops, domain);
        for (c, images) in explored(&trace, reorder) {
            let want = brute(&ops, c, reorder, domain);
            assert_eq!(
                images, want,
                "seed {seed}, crash before op {c} of {ops:?} ({domain:?}, reorder {reorder})"
            );
            points += 1;
        }
    }
    assert!(points > 2000, "only {points} points compared");
}

#[test]
fn adr_latest_values_match_brute_force() {
    check(DomainKind::Adr, false);
}

#[test]
fn adr_reordered_values_match_brute_force() {
    check(DomainKind::Adr, true);
}

#[test]
fn eadr_matches_brute_force() {
    check(DomainKind::Eadr, false);
}
