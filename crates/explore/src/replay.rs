//! Replaying a trace: the state of every NVMM line the run touched, and at
//! each ordering point the values each line may hold in the image a power
//! failure leaves there.
//!
//! Per line the replay keeps its value in memory (*current*), the value
//! that is certainly in the persistence domain (*durable*: the starting
//! image's, then that of the last flush a fence completed, of a
//! synchronous write-back, or under eADR of the last store), the flushes
//! of it in flight, and the values it took since it was last durable.
//!
//! What a crash at a point may leave, per line (`docs/persistence.md`):
//! * ADR: the durable value, any in-flight flush's value (the flush may
//!   have reached the controller), and the current value (a cache may have
//!   evicted the line just before the power went). With `reorder`, every
//!   value the line took since it was durable as well: an eviction at any
//!   moment, or stores to different lines persisting in any order between
//!   fences, as RVWMO allows.
//! * eADR: stores are durable when they execute, so only the current value;
//!   with `reorder`, every value since the storing hart's last fence.
//! * A line's write-backs reach the domain in the order they leave the
//!   cache (its flushes, its evictions), so a completed flush brings every
//!   earlier flush of the line with it.
//! * Lines are independent: the image is one choice per line (per
//!   `torn`-byte word with `torn`), which is what "any subset of the
//!   flushes in flight and of the dirty lines" amounts to.

use crate::file::TraceFile;
use rvnvmm_mem::persist::DomainKind;
use rvnvmm_mem::persist_trace::TraceKind;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The choices of exploration.
#[derive(Clone, Debug)]
pub struct Options {
    /// More points: after these many instructions of the machine (any
    /// order; a count past the end is the end).
    pub at_insns: Vec<u64>,
    /// Every value since the line was durable, not only the current one.
    pub reorder: bool,
    /// The unit that persists atomically, in bytes (a power of two from 8
    /// to the line; `None`: the line).
    pub torn: Option<u64>,
    /// The most values a line keeps since it was durable (`reorder`), the
    /// latest ones.
    pub max_history: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            at_insns: Vec::new(),
            reorder: false,
            torn: None,
            max_history: 16,
        }
    }
}

/// Where a value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The starting image.
    Start,
    /// After the store or write of this record.
    Store(usize),
}

/// A value of a line, with the record that gave it.
#[derive(Clone, Debug)]
pub struct Value {
    /// The bytes.
    pub bytes: Arc<[u8]>,
    /// Their origin.
    pub origin: Origin,
}

/// A flush not yet completed by a fence.
#[derive(Clone, Debug)]
struct InFlight {
    hart: u32,
    record: usize,
    value: Value,
}

/// One line the run touched.
#[derive(Clone, Debug)]
struct Line {
    start: Arc<[u8]>,
    durable: Value,
    /// The record that made `durable` durable (a flush, sync, store).
    durable_by: Option<usize>,
    current: Value,
    /// Values since `durable`, oldest first (the stores' results).
    history: Vec<(u32, Value)>,
    in_flight: Vec<InFlight>,
    /// Whether an instruction stored to the line since its last flush
    /// or synchronous write-back (for the lint: a flush without one is of
    /// a clean line, whatever the bytes stored).
    stored_since_flush: bool,
}

/// One unit whose value in the image is not decided at a point.
#[derive(Clone, Debug)]
pub struct Open {
    /// Offset of the unit in the region.
    pub offset: u64,
    /// Its line's offset.
    pub line: u64,
    /// The values it may hold: the durable one first, the current one
    /// last, distinct.
    pub values: Vec<Choice>,
}

/// One value a unit may hold.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The unit's bytes.
    pub bytes: Arc<[u8]>,
    /// Where they came from.
    pub origin: Origin,
    /// The in-flight flush (its record) that would have written them, if
    /// that is how they got there.
    pub flushed_by: Option<usize>,
}

/// An ordering point: a crash right before the fence of `record` (under
/// eADR in order, before each store too), or after the last instruction
/// (`record` = the number of records).
#[derive(Clone, Debug)]
pub struct Point {
    /// The fence's record, or the number of records for the end.
    pub record: usize,
    /// Instructions retired before it.
    pub insn: u64,
    /// The undecided units.
    pub open: Vec<Open>,
    /// Bumped whenever a durable value changes: points with the same
    /// generation share their durable image.
    pub generation: u64,
    /// A point asked for by instruction count (`Options::at_insns`).
    pub requested: bool,
}

/// Reads the starting image's bytes of a line.
pub trait StartImage {
    /// The `len` bytes at `offset` of the region before the run.
    fn read(&mut self, offset: u64, len: usize) -> Arc<[u8]>;
}

/// The replay.
pub struct Replay<'a, S: StartImage> {
    trace: &'a TraceFile,
    start: S,
    opts: Options,
    lines: BTreeMap<u64, Line>,
    next: usize,
    generation: u64,
    /// Whether anything changed since the last point (points with nothing
    /// new between them have the same crash states).
    changed: bool,
    /// Per hart: whether it stored to NVMM since its last fence (lint).
    stored_since_fence: HashMap<u32, bool>,
    /// What the lint found.
    pub lint: Lint,
    /// The requested points not reached yet, latest first.
    pending_at: Vec<u64>,
}

/// pmemcheck-style findings, by the PC of the instruction concerned.
#[derive(Clone, Debug, Default)]
pub struct Lint {
    /// Flushes of lines not written since they were last flushed or
    /// made durable: PC -> how many.
    pub clean_flushes: BTreeMap<u64, u64>,
    /// Fences that completed no flush and followed no NVMM store of their
    /// hart since its previous fence: PC -> how many. Only fences whose PC
    /// completed a flush at another time count (persistence fences, not a
    /// library's own synchronisation).
    pub redundant_fences: BTreeMap<u64, u64>,
    /// PCs of fences that completed a flush.
    useful_fences: std::collections::BTreeSet<u64>,
    /// Fences that completed nothing, by PC, whatever their PC.
    idle_fences: BTreeMap<u64, u64>,
}

impl Lint {
    fn fence(&mut self, pc: u64, useful: bool, idle: bool) {
        if useful {
            self.useful_fences.insert(pc);
            if let Some(n) = self.idle_fences.remove(&pc) {
                self.redundant_fences.insert(pc, n);
            }
        }
        if idle {
            if self.useful_fences.contains(&pc) {
                *self.redundant_fences.entry(pc).or_default() += 1;
            } else {
                *self.idle_fences.entry(pc).or_default() += 1;
            }
        }
    }
}

impl<'a, S: StartImage> Replay<'a, S> {
    /// A replay of `trace` over the starting image `start`.
    pub fn new(trace: &'a TraceFile, start: S, opts: Options) -> Replay<'a, S> {
        let mut pending_at = opts.at_insns.clone();
        pending_at.sort_unstable_by(|a, b| b.cmp(a));
        pending_at.dedup();
        Replay {
            pending_at,
            trace,
            start,
            opts,
            lines: BTreeMap::new(),
            next: 0,
            generation: 0,
            changed: true,
            stored_since_fence: HashMap::new(),
            lint: Lint::default(),
        }
    }

    fn line_mut(&mut self, line: u64) -> &mut Line {
        let bytes = self.trace.line_bytes as usize;
        let start = &mut self.start;
        self.lines.entry(line).or_insert_with(|| {
            let s = start.read(line, bytes);
            let v = Value {
                bytes: s.clone(),
                origin: Origin::Start,
            };
            Line {
                start: s,
                durable: v.clone(),
                durable_by: None,
                current: v,
                history: Vec::new(),
                in_flight: Vec::new(),
                stored_since_flush: false,
            }
        })
    }

    /// The next ordering point, or `None` after the end.
    pub fn next_point(&mut self) -> Option<Point> {
        let records = &self.trace.records;
        while self.next < records.len() {
            let i = self.next;
            let r = records[i];
            // A requested point: after `n` instructions, so before the
            // first record made at or after it.
            if let Some(&n) = self.pending_at.last().filter(|&&n| n <= r.insn) {
                self.pending_at.pop();
                let mut p = self.point(i, n);
                p.requested = true;
                return Some(p);
            }
            // Under eADR (in order) every store is durable as it executes:
            // a crash between two stores is a point of its own.
            let eadr_store = self.trace.domain == DomainKind::Eadr
                && !self.opts.reorder
                && matches!(r.kind, TraceKind::Store | TraceKind::Write);
            if (r.kind == TraceKind::Fence || eadr_store) && self.changed {
                // The crash right before this record (which then runs).
                self.changed = false;
                return Some(self.point(i, r.insn));
            }
            self.apply(i);
            self.next += 1;
        }
        if self.next == records.len() {
            self.next += 1;
            return Some(self.point(records.len(), self.trace.instructions));
        }
        None
    }

    fn apply(&mut self, i: usize) {
        let r = self.trace.records[i];
        let lb = self.trace.line_bytes;
        let eadr = self.trace.domain == DomainKind::Eadr;
        match r.kind {
            TraceKind::Store | TraceKind::Write => {
                let data = self.trace.bytes_of(&r);
                let (mut off, mut at) = (r.offset, 0usize);
                while at < data.len() {
                    let line = off & !(lb - 1);
                    let n = ((line + lb - off) as usize).min(data.len() - at);
                    let max_history = self.opts.max_history;
                    let reorder = self.opts.reorder;
                    let l = self.line_mut(line);
                    let mut bytes = l.current.bytes.to_vec();
                    let o = (off - line) as usize;
                    bytes[o..o + n].copy_from_slice(&data[at..at + n]);
                    let v = Value {
                        bytes: bytes.into(),
                        origin: Origin::Store(i),
                    };
                    l.current = v.clone();
                    l.stored_since_flush = true;
                    if eadr && !reorder {
                        l.durable = v;
                        l.durable_by = Some(i);
                    } else {
                        l.history.push((r.hart, v));
                        if l.history.len() > max_history {
                            l.history.remove(0);
                        }
                    }
                    off += n as u64;
                    at += n;
                }
                if eadr && !self.opts.reorder {
                    self.generation += 1;
                }
                self.stored_since_fence.insert(r.hart, true);
                self.changed = true;
            }
            TraceKind::Flush => {
                self.flush(r.hart, i, r.offset, r.pc);
            }
            TraceKind::FlushAll => {
                let dirty: Vec<u64> = self
                    .lines
                    .iter()
                    .filter(|(_, l)| l.current.bytes != l.durable.bytes)
                    .map(|(&o, _)| o)
                    .collect();
                for line in dirty {
                    self.flush(r.hart, i, line, r.pc);
                }
            }
            TraceKind::Fence => self.fence(r.hart, i, r.pc),
            TraceKind::Sync => {
                let l = self.line_mut(r.offset);
                l.durable = l.current.clone();
                l.durable_by = Some(i);
                l.history.clear();
                l.in_flight.clear();
                l.stored_since_flush = false;
                self.generation += 1;
                self.changed = true;
            }
        }
    }

    fn flush(&mut self, hart: u32, i: usize, line: u64, pc: u64) {
        if self.trace.domain != DomainKind::Adr {
            return;
        }
        let l = self.line_mut(line);
        let clean = !l.stored_since_flush;
        l.stored_since_flush = false;
        let value = l.current.clone();
        // A flush of a clean line still orders it: its hart's next fence
        // completes it (the line's earlier write-backs with it).
        l.in_flight.push(InFlight {
            hart,
            record: i,
            value,
        });
        if clean {
            *self.lint.clean_flushes.entry(pc).or_default() += 1;
        }
        self.changed = true;
    }

    fn fence(&mut self, hart: u32, i: usize, pc: u64) {
        let mut completed = 0;
        let eadr_reorder = self.trace.domain == DomainKind::Eadr && self.opts.reorder;
        for l in self.lines.values_mut() {
            if eadr_reorder {
                // The hart's stores are all visible, so durable, now.
                if let Some(k) = l.history.iter().rposition(|(h, _)| *h == hart) {
                    l.durable = l.history[k].1.clone();
                    l.durable_by = Some(i);
                    l.history.drain(..=k);
                    completed += 1;
                }
                continue;
            }
            if !l.in_flight.iter().any(|f| f.hart == hart) {
                continue;
            }
            let mut kept = Vec::new();
            for f in l.in_flight.drain(..) {
                if f.hart != hart {
                    kept.push(f);
                    continue;
                }
                completed += 1;
                // A flush older than what is durable already changes nothing.
                if l.durable_by.is_none_or(|d| d < f.record) {
                    let Origin::Store(s) = f.value.origin else {
                        l.durable = f.value;
                        l.durable_by = Some(f.record);
                        continue;
                    };
                    l.history
                        .retain(|(_, v)| matches!(v.origin, Origin::Store(k) if k > s));
                    l.durable = f.value;
                    l.durable_by = Some(f.record);
                }
            }
            // A line's write-backs reach the domain in the order they left
            // the cache: other harts' earlier flushes of it are there too.
            if let Some(d) = l.durable_by {
                kept.retain(|f| f.record > d);
            }
            l.in_flight = kept;
        }
        if completed > 0 {
            self.generation += 1;
            self.changed = true;
        }
        let stored = self.stored_since_fence.insert(hart, false).unwrap_or(false);
        self.lint
            .fence(pc, completed > 0, completed == 0 && !stored);
    }

    /// The values each unit may hold at the point before record `record`.
    fn point(&self, record: usize, insn: u64) -> Point {
        let lb = self.trace.line_bytes;
        let unit = self.unit_bytes();
        let mut open = Vec::new();
        for (&line, l) in &self.lines {
            let mut values: Vec<(Value, Option<usize>)> = vec![(l.durable.clone(), None)];
            match (self.trace.domain, self.opts.reorder) {
                (DomainKind::Volatile, _) => continue,
                (DomainKind::Eadr, false) => {}
                (_, true) => values.extend(l.history.iter().map(|(_, v)| (v.clone(), None))),
                (DomainKind::Adr, false) => {}
            }
            if self.trace.domain == DomainKind::Adr {
                values.extend(
                    l.in_flight
                        .iter()
                        .map(|f| (f.value.clone(), Some(f.record))),
                );
            }
            values.push((l.current.clone(), None));
            for u in (0..lb).step_by(unit as usize) {
                let r = u as usize..(u + unit) as usize;
                let mut choices: Vec<Choice> = Vec::new();
                for (v, flushed_by) in &values {
                    let bytes = &v.bytes[r.clone()];
                    match choices.iter_mut().find(|c| &c.bytes[..] == bytes) {
                        // The same bytes: keep the latest origin (the
                        // store that last wrote them), a flush's if any.
                        Some(c) => {
                            if v.origin != Origin::Start {
                                c.origin = v.origin;
                            }
                            c.flushed_by = c.flushed_by.or(*flushed_by);
                        }
                        None => choices.push(Choice {
                            bytes: bytes.into(),
                            origin: v.origin,
                            flushed_by: *flushed_by,
                        }),
                    }
                }
                // The current value last.
                let cur = &l.current.bytes[r.clone()];
                if let Some(k) = choices.iter().position(|c| &c.bytes[..] == cur) {
                    if k != 0 {
                        let c = choices.remove(k);
                        choices.push(c);
                    }
                }
                if choices.len() > 1 {
                    open.push(Open {
                        offset: line + u,
                        line,
                        values: choices,
                    });
                }
            }
        }
        Point {
            record,
            insn,
            open,
            generation: self.generation,
            requested: false,
        }
    }

    /// The tracking line.
    pub fn line_bytes(&self) -> u64 {
        self.trace.line_bytes
    }

    /// The unit that persists whole: the line, or `torn`'s word.
    pub fn unit_bytes(&self) -> u64 {
        let lb = self.trace.line_bytes;
        self.opts.torn.unwrap_or(lb).clamp(1, lb)
    }

    /// The durable image's bytes wherever they differ from the starting
    /// image, by line: (offset, bytes).
    pub fn durable_changes(&self) -> Vec<(u64, Arc<[u8]>)> {
        self.lines
            .iter()
            .filter(|(_, l)| l.durable.bytes != l.start)
            .map(|(&o, l)| (o, l.durable.bytes.clone()))
            .collect()
    }

    /// The starting image's bytes of the line at `line` (touched lines).
    pub fn start_of(&self, line: u64) -> Option<&Arc<[u8]>> {
        self.lines.get(&line).map(|l| &l.start)
    }

    /// The region as the run left it, by touched line: (offset, bytes).
    pub fn final_lines(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.lines.iter().map(|(&o, l)| (o, &l.current.bytes[..]))
    }

    /// Lines whose last value never became durable: (line, the record
    /// of its last store).
    pub fn never_durable(&self) -> Vec<(u64, usize)> {
        self.lines
            .iter()
            .filter(|(_, l)| l.current.bytes != l.durable.bytes)
            .filter_map(|(&o, l)| match l.current.origin {
                Origin::Store(s) => Some((o, s)),
                Origin::Start => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{parse, write, TraceHeader};
    use rvnvmm_mem::persist_trace::PersistTrace;

    struct Zeros;

    impl StartImage for Zeros {
        fn read(&mut self, _: u64, len: usize) -> Arc<[u8]> {
            vec![0; len].into()
        }
    }

    fn trace(t: &PersistTrace, domain: DomainKind) -> TraceFile {
        let h = TraceHeader {
            base: 0,
            size: 4096,
            line_bytes: 64,
            domain,
            instructions: 100,
        };
        let mut buf = Vec::new();
        write(&mut buf, &h, t, &[]).unwrap();
        parse(&buf).unwrap()
    }

    #[test]
    fn requested_points_fall_between_records() {
        let mut t = PersistTrace::default();
        t.push_bytes(TraceKind::Store, 0, 10, 0x100, 0, &[1; 8]);
        t.push_bytes(TraceKind::Store, 0, 20, 0x104, 64, &[2; 8]);
        t.push(TraceKind::Fence, 0, 30, 0x108, 0);
        let tr = trace(&t, DomainKind::Adr);
        let opts = Options {
            at_insns: vec![15, 1000],
            ..Options::default()
        };
        let mut r = Replay::new(&tr, Zeros, opts);
        // After 15 instructions only the first store has happened.
        let p = r.next_point().unwrap();
        assert!(p.requested);
        assert_eq!((p.record, p.insn, p.open.len()), (1, 15, 1));
        // Before the fence, both lines are open.
        let p = r.next_point().unwrap();
        assert!(!p.requested);
        assert_eq!(p.open.len(), 2);
        // 1000 is past the end: the end point.
        let p = r.next_point().unwrap();
        assert_eq!(p.record, 3);
        assert!(r.next_point().is_none());
    }

    #[test]
    fn a_sync_makes_a_line_durable_at_once() {
        let mut t = PersistTrace::default();
        t.push_bytes(TraceKind::Store, 0, 10, 0x100, 0, &[1; 8]);
        t.push_sync(0);
        t.push(TraceKind::Fence, 0, 30, 0x108, 0);
        let tr = trace(&t, DomainKind::Adr);
        let mut r = Replay::new(&tr, Zeros, Options::default());
        let p = r.next_point().unwrap();
        assert!(p.open.is_empty());
        assert_eq!(r.durable_changes().len(), 1);
    }

    #[test]
    fn the_lint_counts_clean_flushes_and_idle_persistence_fences() {
        let mut t = PersistTrace::default();
        t.push_bytes(TraceKind::Store, 0, 1, 0x100, 0, &[1; 8]);
        t.push(TraceKind::Flush, 0, 2, 0x200, 0);
        t.push(TraceKind::Fence, 0, 3, 0x300, 0);
        // Flushed again with nothing new, and the same fence with nothing to do.
        t.push(TraceKind::Flush, 0, 4, 0x200, 0);
        t.push(TraceKind::Fence, 0, 5, 0x300, 0);
        t.push(TraceKind::Fence, 0, 6, 0x300, 0);
        // A fence that never orders a flush is not counted (a library's).
        t.push(TraceKind::Fence, 0, 7, 0x400, 0);
        let tr = trace(&t, DomainKind::Adr);
        let mut r = Replay::new(&tr, Zeros, Options::default());
        while r.next_point().is_some() {}
        assert_eq!(r.lint.clean_flushes.get(&0x200), Some(&1));
        assert_eq!(r.lint.redundant_fences.get(&0x300), Some(&1));
        assert!(!r.lint.redundant_fences.contains_key(&0x400));
        assert!(r.never_durable().is_empty());
    }
}
