//! The crash states of a persistent-memory program, explored rather than
//! sampled (`rvnvmm crashtest --explore`, `docs/persistence.md`).
//!
//! One run of the program records every write to the NVMM region and
//! every flush and fence ([`rvnvmm_mem::persist_trace`], written as a
//! [`file`]). The [`replay`] walks the records and stops at each ordering
//! point (before each fence, and at the end), where it says which values
//! each line may hold in the image a power failure leaves; [`states`]
//! picks the combinations to check and fingerprints the images, so that
//! states giving the same image are checked once; an [`Explorer`] turns
//! them into [`Job`]s, each an image given as changes to the starting one
//! ([`overlay`]), for a recovery program to judge.
//!
//! ```
//! use rvnvmm_explore::replay::{Options, Replay, StartImage};
//! use rvnvmm_explore::file::{parse, write, TraceHeader};
//! use rvnvmm_mem::persist::DomainKind;
//! use rvnvmm_mem::persist_trace::{PersistTrace, TraceKind};
//! use std::sync::Arc;
//!
//! struct Zeros;
//! impl StartImage for Zeros {
//!     fn read(&mut self, _: u64, len: usize) -> Arc<[u8]> { vec![0; len].into() }
//! }
//! // Two stores to two lines, one flush, one fence.
//! let mut t = PersistTrace::default();
//! t.push_bytes(TraceKind::Store, 0, 1, 0x100, 0, &[1; 8]);
//! t.push_bytes(TraceKind::Store, 0, 2, 0x104, 64, &[2; 8]);
//! t.push(TraceKind::Flush, 0, 3, 0x108, 0);
//! t.push(TraceKind::Fence, 0, 4, 0x10c, 0);
//! let h = TraceHeader { base: 0, size: 4096, line_bytes: 64, domain: DomainKind::Adr, instructions: 5 };
//! let mut buf = Vec::new();
//! write(&mut buf, &h, &t, &[]).unwrap();
//! let trace = parse(&buf).unwrap();
//! let mut r = Replay::new(&trace, Zeros, Options::default());
//! // Before the fence both lines may or may not have persisted.
//! let p = r.next_point().unwrap();
//! assert_eq!(p.open.len(), 2);
//! // At the end the flushed line is durable; the other may still be lost.
//! let p = r.next_point().unwrap();
//! assert_eq!(p.open.len(), 1);
//! assert_eq!(p.open[0].line, 64);
//! ```

#![forbid(unsafe_code)]

pub mod file;
pub mod overlay;
pub mod replay;
pub mod states;

use replay::{Choice, Open, Origin, Point, Replay, StartImage};
use states::{Fingerprint, State};
use std::collections::HashSet;
use std::sync::Arc;

/// Changes to the starting image: (offset in the region, bytes).
pub type Changes = Vec<(u64, Arc<[u8]>)>;

/// One image to check.
#[derive(Clone, Debug)]
pub struct Job {
    /// The point it was first met at (index into [`Explorer::points`]).
    pub point: usize,
    /// Its choices there.
    pub state: State,
    /// The image's fingerprint: every state with it has the same image.
    pub fingerprint: Fingerprint,
    /// The durable image of the point (shared by its states).
    pub base: Arc<Changes>,
    /// The generation of `base`.
    pub generation: u64,
    /// The open units' chosen bytes, applied after `base`.
    pub choices: Changes,
}

/// What the explorer kept of a point.
#[derive(Clone, Debug)]
pub struct PointInfo {
    /// The fence's record, or the number of records for the end.
    pub record: usize,
    /// Instructions retired before it.
    pub insn: u64,
    /// Asked for by instruction count.
    pub requested: bool,
    /// The open units.
    pub open: Vec<Open>,
    /// The states enumerated, with their images' fingerprints.
    pub states: Vec<(State, Fingerprint)>,
    /// How many of them gave an image not met before.
    pub new_images: usize,
    /// All states the point has (the product of its units' values,
    /// saturating), of which `states` were enumerated.
    pub possible: u128,
}

/// Walks a trace's points and makes their jobs.
pub struct Explorer<'a, S: StartImage> {
    replay: Replay<'a, S>,
    max_states: usize,
    /// Fingerprints of the images met.
    seen: HashSet<Fingerprint>,
    /// The durable image of the current generation, and its fingerprint.
    base: Option<(u64, Arc<Changes>, Fingerprint)>,
    /// The points walked.
    pub points: Vec<PointInfo>,
    /// States that gave an image met before (not checked again).
    pub merged: u64,
}

impl<'a, S: StartImage> Explorer<'a, S> {
    /// An explorer of `replay`'s points, at most `max_states` a point.
    pub fn new(replay: Replay<'a, S>, max_states: usize) -> Explorer<'a, S> {
        Explorer {
            replay,
            max_states,
            seen: HashSet::new(),
            base: None,
            points: Vec::new(),
            merged: 0,
        }
    }

    /// The replay (for its lint and final state once done).
    pub fn replay(&self) -> &Replay<'a, S> {
        &self.replay
    }

    /// The next point's jobs (images not met before); `None` at the end.
    pub fn next_jobs(&mut self) -> Option<Vec<Job>> {
        let Point {
            record,
            insn,
            open,
            generation,
            requested,
        } = self.replay.next_point()?;
        let lb = self.replay.line_bytes();
        if self.base.as_ref().is_none_or(|b| b.0 != generation) {
            let changes = self.replay.durable_changes();
            let mut fp = Fingerprint::default();
            let unit = self.replay.unit_bytes() as usize;
            for (line, bytes) in &changes {
                let start = self.replay.start_of(*line).expect("a touched line");
                for u in (0..lb as usize).step_by(unit) {
                    fp.add(Fingerprint::term(
                        line + u as u64,
                        &bytes[u..u + unit],
                        &start[u..u + unit],
                    ));
                }
            }
            self.base = Some((generation, Arc::new(changes), fp));
        }
        let (_, base, base_fp) = self.base.clone().expect("set above");
        let states = states::enumerate(&open, self.max_states);
        let index = self.points.len();
        let mut jobs = Vec::new();
        let mut fingerprints = Vec::with_capacity(states.len());
        for s in &states {
            let mut fp = base_fp;
            let mut choices = Vec::new();
            for (o, &v) in open.iter().zip(s) {
                let start = self.replay.start_of(o.line).expect("a touched line");
                let at = (o.offset - o.line) as usize;
                let start = &start[at..at + o.values[0].bytes.len()];
                fp.sub(Fingerprint::term(o.offset, &o.values[0].bytes, start));
                let c = &o.values[v as usize];
                fp.add(Fingerprint::term(o.offset, &c.bytes, start));
                if v != 0 {
                    choices.push((o.offset, c.bytes.clone()));
                }
            }
            fingerprints.push(fp);
            if !self.seen.insert(fp) {
                self.merged += 1;
                continue;
            }
            jobs.push(Job {
                point: index,
                state: s.clone(),
                fingerprint: fp,
                base: base.clone(),
                generation,
                choices,
            });
        }
        let possible = open
            .iter()
            .try_fold(1u128, |acc, o| acc.checked_mul(o.values.len() as u128))
            .unwrap_or(u128::MAX);
        self.points.push(PointInfo {
            record,
            insn,
            requested,
            open,
            states: states.into_iter().zip(fingerprints).collect(),
            new_images: jobs.len(),
            possible,
        });
        Some(jobs)
    }
}

/// How a failing state differs from one of the two extremes of its point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// From everything persisted: these units kept an older value.
    Absent,
    /// From nothing more persisted: these units got a newer value early.
    Early,
}

/// One unit of a failing state that differs from the extreme.
#[derive(Clone, Debug)]
pub struct Deviation {
    /// The unit's offset and line.
    pub offset: u64,
    /// See `offset`.
    pub line: u64,
    /// The value the state gives it.
    pub chosen: Choice,
    /// Its current value (the last store's).
    pub current: Choice,
    /// Its durable value.
    pub durable: Choice,
}

/// The smaller description of `state` at a point with `open` units: the
/// units absent from the all-persisted image, or those present early in
/// the durable one (on a tie); absent ones when the durable image itself
/// fails (no unit is early).
pub fn describe(open: &[Open], state: &State) -> (Side, Vec<Deviation>) {
    let dev = |o: &Open, v: u16| Deviation {
        offset: o.offset,
        line: o.line,
        chosen: o.values[v as usize].clone(),
        current: o.values.last().expect("values").clone(),
        durable: o.values[0].clone(),
    };
    let absent: Vec<Deviation> = open
        .iter()
        .zip(state)
        .filter(|(o, &v)| v as usize != o.values.len() - 1)
        .map(|(o, &v)| dev(o, v))
        .collect();
    let early: Vec<Deviation> = open
        .iter()
        .zip(state)
        .filter(|(_, &v)| v != 0)
        .map(|(o, &v)| dev(o, v))
        .collect();
    // On a tie the early units: what got ahead is what to fix.
    if !early.is_empty() && early.len() <= absent.len() || absent.is_empty() {
        (Side::Early, early)
    } else {
        (Side::Absent, absent)
    }
}

/// The failing states of a point that no other failing state of it
/// explains, each with how many failing states it explains (itself
/// included): `fails[i]` says whether `states[i]` failed. A state explains
/// another when its differences from one of the extremes (every unit
/// current, every unit durable) are a part of the other's: the smaller one
/// shows the bug already. Indices into `states`, in order.
pub fn minimal_failures(open: &[Open], states: &[State], fails: &[bool]) -> Vec<(usize, usize)> {
    let diff = |s: &State, toward_current: bool| -> Vec<(usize, u16)> {
        s.iter()
            .enumerate()
            .filter(|&(u, &v)| {
                if toward_current {
                    v as usize != open[u].values.len() - 1
                } else {
                    v != 0
                }
            })
            .map(|(u, &v)| (u, v))
            .collect()
    };
    let part = |a: &[(usize, u16)], b: &[(usize, u16)]| a.iter().all(|x| b.contains(x));
    let failing: Vec<usize> = (0..states.len()).filter(|&i| fails[i]).collect();
    let sides: Vec<[Vec<(usize, u16)>; 2]> = failing
        .iter()
        .map(|&i| [diff(&states[i], true), diff(&states[i], false)])
        .collect();
    // `a` explains `b` (a != b).
    let explains = |a: usize, b: usize| {
        (0..2).any(|k| sides[a][k].len() < sides[b][k].len() && part(&sides[a][k], &sides[b][k]))
    };
    // Smallest first (fewest differences from the nearer extreme), each
    // kept unless one kept already explains it: a failure always has one.
    let mut by_size: Vec<usize> = (0..failing.len()).collect();
    by_size.sort_by_key(|&a| (sides[a][0].len().min(sides[a][1].len()), a));
    let mut kept: Vec<usize> = Vec::new();
    for a in by_size {
        if !kept.iter().any(|&k| explains(k, a)) {
            kept.push(a);
        }
    }
    kept.sort_unstable();
    kept.into_iter()
        .map(|a| {
            let n = 1
                + (0..failing.len())
                    .filter(|&b| b != a && explains(a, b))
                    .count();
            (failing[a], n)
        })
        .collect()
}

/// The store record behind a choice, if a store made it.
pub fn store_of(c: &Choice) -> Option<usize> {
    match c.origin {
        Origin::Store(r) => Some(r),
        Origin::Start => None,
    }
}
