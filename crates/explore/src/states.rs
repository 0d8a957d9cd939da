//! Which crash states of a point to check, and telling images apart.
//!
//! A point's states are one choice per open unit ([`Open`]). When there
//! are at most `max` of them, all are enumerated. Otherwise the states
//! nearest to the two extremes come first, as bugs are found there and
//! are described by few units: everything persisted (every unit at its
//! current value) and nothing more persisted (every unit durable), then
//! each single unit changed from either, then each pair, and so on, until
//! `max` states are taken. The order is deterministic.

use crate::replay::Open;
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One crash state: for each open unit of the point, the index of its
/// value.
pub type State = Vec<u16>;

/// The states of a point to check, at most `max` (at least the two
/// extremes), distinct, in the order described in the module's doc.
pub fn enumerate(open: &[Open], max: usize) -> Vec<State> {
    let sizes: Vec<usize> = open.iter().map(|o| o.values.len()).collect();
    let total = sizes
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .unwrap_or(usize::MAX);
    if open.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    if total <= max.max(2) {
        // Every combination (mixed radix), all-current first.
        let mut s: State = sizes.iter().map(|&n| (n - 1) as u16).collect();
        for _ in 0..total {
            out.push(s.clone());
            for (d, &n) in s.iter_mut().zip(&sizes) {
                if *d == 0 {
                    *d = (n - 1) as u16;
                } else {
                    *d -= 1;
                    break;
                }
            }
        }
        return out;
    }
    let max = max.max(2);
    let current: State = sizes.iter().map(|&n| (n - 1) as u16).collect();
    let durable: State = vec![0; sizes.len()];
    let mut seen: HashSet<State> = HashSet::new();
    let mut take = |s: State, out: &mut Vec<State>| {
        if out.len() < max && seen.insert(s.clone()) {
            out.push(s);
        }
    };
    take(current.clone(), &mut out);
    take(durable.clone(), &mut out);
    // k units changed from an extreme, k = 1, 2, ...: each unit's other
    // values (from the current state: the durable one, then the rest).
    let mut k = 1;
    while out.len() < max && k <= sizes.len() {
        for base in [&current, &durable] {
            let mut idx: Vec<usize> = (0..k).collect();
            loop {
                // Every value combination of the chosen units other than
                // the base's.
                let mut alt: Vec<Vec<u16>> = Vec::new();
                for &u in &idx {
                    let b = base[u];
                    let mut vals: Vec<u16> = (0..sizes[u] as u16).filter(|&v| v != b).collect();
                    if b != 0 {
                        // From the current state the durable value first.
                        vals.sort_by_key(|&v| v != 0);
                    } else {
                        vals.reverse();
                    }
                    alt.push(vals);
                }
                let mut pick = vec![0usize; k];
                'combos: loop {
                    let mut s = base.clone();
                    for (j, &u) in idx.iter().enumerate() {
                        s[u] = alt[j][pick[j]];
                    }
                    take(s, &mut out);
                    if out.len() >= max {
                        return out;
                    }
                    for j in (0..k).rev() {
                        pick[j] += 1;
                        if pick[j] < alt[j].len() {
                            continue 'combos;
                        }
                        pick[j] = 0;
                    }
                    break;
                }
                // The next k-subset of units.
                let n = sizes.len();
                let mut j = k;
                while j > 0 && idx[j - 1] == n - k + j - 1 {
                    j -= 1;
                }
                if j == 0 {
                    break;
                }
                idx[j - 1] += 1;
                for t in j..k {
                    idx[t] = idx[t - 1] + 1;
                }
            }
        }
        k += 1;
    }
    out
}

/// A 128-bit fingerprint of an image, as a sum over its units that differ
/// from the starting image, so that it is updated unit by unit: images
/// with the same bytes have the same fingerprint whatever the choices that
/// made them. (Two different images colliding is a 2^-128 event.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub u128);

impl Fingerprint {
    /// The term of `bytes` at `offset` (zero when they are the start's).
    pub fn term(offset: u64, bytes: &[u8], start: &[u8]) -> u128 {
        if bytes == start {
            return 0;
        }
        let mut a = DefaultHasher::new();
        (0u8, offset, bytes).hash(&mut a);
        let mut b = DefaultHasher::new();
        (1u8, offset, bytes).hash(&mut b);
        (u128::from(a.finish()) << 64) | u128::from(b.finish())
    }

    /// Adds a term.
    pub fn add(&mut self, t: u128) {
        self.0 = self.0.wrapping_add(t);
    }

    /// Takes a term away.
    pub fn sub(&mut self, t: u128) {
        self.0 = self.0.wrapping_sub(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Choice, Origin};

    fn open(values: usize) -> Open {
        Open {
            offset: 0,
            line: 0,
            values: (0..values)
                .map(|v| Choice {
                    bytes: vec![v as u8].into(),
                    origin: Origin::Start,
                    flushed_by: None,
                })
                .collect(),
        }
    }

    #[test]
    fn small_points_are_enumerated_whole() {
        let o = [open(2), open(3), open(2)];
        let s = enumerate(&o, 100);
        assert_eq!(s.len(), 12);
        let set: HashSet<_> = s.iter().cloned().collect();
        assert_eq!(set.len(), 12);
        assert_eq!(s[0], vec![1, 2, 1], "all current first");
        assert_eq!(enumerate(&[], 10), vec![Vec::<u16>::new()]);
    }

    #[test]
    fn large_points_take_the_extremes_then_single_changes() {
        let o: Vec<Open> = (0..20).map(|_| open(2)).collect();
        let s = enumerate(&o, 42);
        assert_eq!(s.len(), 42);
        assert_eq!(s[0], vec![1; 20]);
        assert_eq!(s[1], vec![0; 20]);
        // Then each unit durable alone, then each unit current alone.
        let mut one_absent = vec![1; 20];
        one_absent[0] = 0;
        assert_eq!(s[2], one_absent);
        let mut one_present = vec![0; 20];
        one_present[0] = 1;
        assert_eq!(s[22], one_present);
        let set: HashSet<_> = s.iter().cloned().collect();
        assert_eq!(set.len(), 42);
        // Every single change from either extreme is among the first 42.
        for u in 0..20 {
            let mut a = vec![1; 20];
            a[u] = 0;
            let mut b = vec![0; 20];
            b[u] = 1;
            assert!(set.contains(&a) && set.contains(&b));
        }
    }

    #[test]
    fn fingerprints_depend_on_bytes_only() {
        let start = [0u8; 8];
        let t = Fingerprint::term(64, &[1; 8], &start);
        assert_ne!(t, 0);
        assert_eq!(Fingerprint::term(64, &start, &start), 0);
        assert_ne!(t, Fingerprint::term(128, &[1; 8], &start));
        let mut f = Fingerprint::default();
        f.add(t);
        f.sub(t);
        assert_eq!(f, Fingerprint::default());
    }
}
