//! Random sequences of brk, mmap, munmap, mremap and mprotect on an
//! [`AddressSpace`], checked after every step against a page-by-page model
//! of Linux's rules:
//!
//! * brk is page-rounded, never below the start of the heap, refused (the
//!   old break returned) when the heap would come closer than a page to a
//!   mapping; shrinking always succeeds, and regrown pages read as zero;
//! * `MAP_FIXED` replaces, `MAP_FIXED_NOREPLACE` refuses with `EEXIST`,
//!   other mappings land in free space;
//! * munmap of part of an area splits it; mprotect changes areas up to the
//!   first hole and fails there with `ENOMEM`;
//! * mremap needs `old` mapped (`EFAULT`); it shrinks in place whatever
//!   the rest of the range holds (an unmap of the tail); otherwise it needs the old range inside one area (`EFAULT`), grows in place when the area ends there and the pages above
//!   are free, else moves (`MREMAP_MAYMOVE`, or `ENOMEM`), to a fixed
//!   address if asked (`EINVAL` if the ranges overlap); contents move with
//!   the pages.
//!
//! Neighbouring anonymous areas with the same protection merge, as Linux
//! merges them, so an area of the model is a run of mapped pages with one
//! protection.
//!
//! The harness caches translations as a hart's TLB does and drops them only
//! when the address space says they are stale, so a missed flush shows up
//! as a write landing in a freed frame.

use super::*;
use proptest::prelude::*;
use rvnvmm_mem::sv39::{Access, Requester};
use std::collections::HashMap;

const PAGE: u64 = PAGE_SIZE;
/// Start of the heap; fixed mappings go in the 64 pages from here.
const ARENA: u64 = 0x10_0000;
const ARENA_PAGES: u64 = 64;

#[derive(Clone, Debug)]
enum Target {
    /// A page of the arena (the heap and fixed mappings).
    Arena(u64),
    /// The k-th (modulo) mapping placed by the kernel, plus a page offset.
    Placed(usize, u64),
}

#[derive(Clone, Debug)]
enum Op {
    /// brk to `ARENA + pages * PAGE + bytes - 2 * PAGE` (below the start
    /// for the first two pages).
    Brk(u64, u64),
    MmapFixed(u64, u64, u32),
    MmapNoReplace(u64, u64, u32),
    MmapAnywhere(u64, u32),
    Munmap(Target, u64),
    Mprotect(Target, u64, u32),
    Mremap {
        at: Target,
        old_pages: u64,
        new_pages: u64,
        may_move: bool,
        fixed: Option<u64>,
    },
    Write(Target, u8),
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        (0..ARENA_PAGES).prop_map(Target::Arena),
        (0..8usize, 0..4u64).prop_map(|(k, o)| Target::Placed(k, o)),
    ]
}

fn prot() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(PROT_READ | PROT_WRITE),
        Just(PROT_READ),
        Just(0),
        Just(PROT_READ | PROT_WRITE | PROT_EXEC),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..ARENA_PAGES, 0..PAGE).prop_map(|(p, b)| Op::Brk(p, b)),
        2 => (0..ARENA_PAGES, 1..6u64, prot()).prop_map(|(p, n, r)| Op::MmapFixed(p, n, r)),
        1 => (0..ARENA_PAGES, 1..6u64, prot()).prop_map(|(p, n, r)| Op::MmapNoReplace(p, n, r)),
        2 => (1..6u64, prot()).prop_map(|(n, r)| Op::MmapAnywhere(n, r)),
        2 => (target(), 1..5u64).prop_map(|(t, n)| Op::Munmap(t, n)),
        2 => (target(), 1..5u64, prot()).prop_map(|(t, n, r)| Op::Mprotect(t, n, r)),
        3 => (target(), 1..5u64, 1..8u64, any::<bool>(), proptest::option::weighted(0.3, 0..ARENA_PAGES))
            .prop_map(|(at, old_pages, new_pages, may_move, fixed)| Op::Mremap {
                at, old_pages, new_pages, may_move, fixed,
            }),
        5 => (target(), any::<u8>()).prop_map(|(t, v)| Op::Write(t, v)),
    ]
}

/// One mapped page of the model.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Page {
    prot: u32,
    /// The page's first byte.
    byte: u8,
}

#[derive(Default)]
struct Model {
    pages: BTreeMap<u64, Page>,
    brk: u64,
    /// Addresses the kernel chose (MmapAnywhere and moved mremaps).
    placed: Vec<u64>,
}

impl Model {
    fn any_mapped(&self, start: u64, end: u64) -> bool {
        self.pages.range(start..end).next().is_some()
    }

    fn map(&mut self, start: u64, end: u64, prot: u32) {
        for p in (start..end).step_by(PAGE as usize) {
            self.pages.insert(p, Page { prot, byte: 0 });
        }
    }

    fn unmap(&mut self, start: u64, end: u64) {
        let keys: Vec<u64> = self.pages.range(start..end).map(|(&k, _)| k).collect();
        for k in keys {
            self.pages.remove(&k);
        }
    }

    /// The end of the area (run of pages with one protection) holding `page`.
    fn area_end(&self, page: u64) -> u64 {
        let prot = self.pages[&page].prot;
        let mut end = page;
        while self.pages.get(&end).is_some_and(|p| p.prot == prot) {
            end += PAGE;
        }
        end
    }

    fn resolve(&self, t: &Target) -> u64 {
        match *t {
            Target::Arena(p) => ARENA + p * PAGE,
            Target::Placed(k, off) if !self.placed.is_empty() => {
                self.placed[k % self.placed.len()] + off * PAGE
            }
            Target::Placed(_, off) => ARENA + off * PAGE,
        }
    }
}

/// The address space under test with a cache of translations, as a hart has.
struct Harness {
    mem: PhysMem,
    space: AddressSpace,
    tlb: HashMap<u64, u64>,
}

const USER: Requester = Requester {
    user: true,
    sum: false,
    mxr: false,
};

impl Harness {
    fn new() -> Harness {
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x100_0000)]).unwrap();
        let mut space = AddressSpace::new(&mut mem, 0x8000_0000, 0x100_0000).unwrap();
        space.brk_start = ARENA;
        space.brk = ARENA;
        Harness {
            mem,
            space,
            tlb: HashMap::new(),
        }
    }

    /// What the syscall layer does after each call.
    fn end_of_call(&mut self) {
        if std::mem::take(&mut self.space.translations_stale) {
            self.tlb.clear();
        }
    }

    /// The frame behind a user access, faulting the page in as the hart's
    /// trap handling does; None where the access is a SIGSEGV.
    fn access(&mut self, va: u64, write: bool) -> Option<u64> {
        let page = va & !(PAGE - 1);
        if write {
            if let Some(&pa) = self.tlb.get(&page) {
                return Some(pa);
            }
        }
        let access = if write { Access::Write } else { Access::Read };
        for _ in 0..2 {
            match sv39::translate(&mut self.mem, self.space.root, page, access, USER) {
                Ok(t) => {
                    if write {
                        self.tlb.insert(page, t.paddr);
                    }
                    return Some(t.paddr);
                }
                Err(_) => {
                    if !self
                        .space
                        .handle_fault(&mut self.mem, page, write, false)
                        .unwrap()
                    {
                        return None;
                    }
                }
            }
        }
        None
    }

    fn mmap_anon(
        &mut self,
        addr: u64,
        len: u64,
        prot: u32,
        fixed: bool,
        noreplace: bool,
    ) -> Result<u64, Errno> {
        let start = self.space.place(addr, len, fixed, noreplace)?;
        if !self.space.is_free(start, start + len) {
            self.space.unmap(&mut self.mem, start, start + len);
        }
        self.space.add(start, start + len, prot, Backing::Heap, "");
        self.space.merge_around(start, start + len);
        Ok(start)
    }
}

fn step(h: &mut Harness, m: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    match op {
        Op::Brk(pages, bytes) => {
            let new = (ARENA + pages * PAGE + bytes).saturating_sub(2 * PAGE);
            let got = h.space.set_brk(&mut h.mem, new);
            let old_end = m.brk.next_multiple_of(PAGE);
            let new_end = new.next_multiple_of(PAGE);
            let expect = if new < ARENA {
                m.brk
            } else if new_end <= old_end {
                m.unmap(new_end, old_end);
                new
            } else if m.any_mapped(old_end, new_end + PAGE) {
                m.brk
            } else {
                m.map(old_end, new_end, PROT_READ | PROT_WRITE);
                new
            };
            m.brk = expect;
            prop_assert_eq!(got, expect, "brk({:#x})", new);
        }
        Op::MmapFixed(p, n, prot) => {
            let (start, end) = (ARENA + p * PAGE, ARENA + (p + n) * PAGE);
            let got = h.mmap_anon(start, end - start, *prot, true, false);
            prop_assert_eq!(got, Ok(start));
            m.unmap(start, end);
            m.map(start, end, *prot);
        }
        Op::MmapNoReplace(p, n, prot) => {
            let (start, end) = (ARENA + p * PAGE, ARENA + (p + n) * PAGE);
            let got = h.mmap_anon(start, end - start, *prot, false, true);
            if m.any_mapped(start, end) {
                prop_assert_eq!(got, Err(EEXIST));
            } else {
                prop_assert_eq!(got, Ok(start));
                m.map(start, end, *prot);
            }
        }
        Op::MmapAnywhere(n, prot) => {
            let len = n * PAGE;
            let got = h.mmap_anon(0, len, *prot, false, false);
            let Ok(start) = got else {
                return Err(TestCaseError::fail(format!("mmap failed: {got:?}")));
            };
            prop_assert!(!m.any_mapped(start, start + len), "placed over a mapping");
            prop_assert!(start + len <= h.space.mmap_top);
            m.map(start, start + len, *prot);
            m.placed.push(start);
        }
        Op::Munmap(t, n) => {
            let start = m.resolve(t);
            h.space.unmap(&mut h.mem, start, start + n * PAGE);
            m.unmap(start, start + n * PAGE);
        }
        Op::Mprotect(t, n, prot) => {
            let (start, end) = (m.resolve(t), m.resolve(t) + n * PAGE);
            let got = h.space.protect(&mut h.mem, start, end, *prot);
            let mut expect = Ok(());
            for p in (start..end).step_by(PAGE as usize) {
                match m.pages.get_mut(&p) {
                    Some(pg) => pg.prot = *prot,
                    None => {
                        expect = Err(ENOMEM);
                        break;
                    }
                }
            }
            prop_assert_eq!(got, expect);
        }
        Op::Mremap {
            at,
            old_pages,
            new_pages,
            may_move,
            fixed,
        } => {
            let old = m.resolve(at);
            let (old_len, new_len) = (old_pages * PAGE, new_pages * PAGE);
            let fixed = fixed.filter(|_| *may_move).map(|p| ARENA + p * PAGE);
            let how = RemapFlags {
                may_move: *may_move,
                fixed,
                dont_unmap: false,
            };
            let got = h.space.remap(&mut h.mem, old, old_len, new_len, how);
            let expect: Result<Option<u64>, Errno> = (|| {
                if !m.pages.contains_key(&old) {
                    return Err(EFAULT);
                }
                let mut old_len = old_len;
                if let Some(to) = fixed {
                    if to < old + old_len && old < to + new_len {
                        return Err(EINVAL);
                    }
                    m.unmap(to, to + new_len);
                    if old_len > new_len {
                        m.unmap(old + new_len, old + old_len);
                        old_len = new_len;
                    }
                } else if new_len <= old_len {
                    return Ok(None);
                }
                let area_end = m.area_end(old);
                if old + old_len > area_end {
                    return Err(EFAULT);
                }
                if let Some(to) = fixed {
                    return Ok(Some(to));
                }
                if old + old_len == area_end && !m.any_mapped(area_end, old + new_len) {
                    return Ok(None);
                }
                if !may_move {
                    return Err(ENOMEM);
                }
                Ok(Some(u64::MAX)) // moved wherever the kernel chose
            })();
            match (expect, got) {
                (Err(e), got) => prop_assert_eq!(got, Err(e)),
                (Ok(None), got) => {
                    prop_assert_eq!(got, Ok(old));
                    if new_len <= old_len {
                        m.unmap(old + new_len, old + old_len);
                    } else {
                        let prot = m.pages[&old].prot;
                        m.map(old + old_len, old + new_len, prot);
                    }
                }
                (Ok(Some(to)), got) => {
                    let Ok(new) = got else {
                        return Err(TestCaseError::fail(format!("mremap failed: {got:?}")));
                    };
                    if to != u64::MAX {
                        prop_assert_eq!(new, to);
                    } else {
                        prop_assert!(!m.any_mapped(new, new + new_len), "moved over a mapping");
                        m.placed.push(new);
                    }
                    let moved: Vec<Page> = (0..old_len.min(new_len) / PAGE)
                        .filter_map(|k| m.pages.get(&(old + k * PAGE)).copied())
                        .collect();
                    let prot = moved[0].prot;
                    m.unmap(old, old + old_len);
                    m.unmap(new, new + new_len);
                    m.map(new, new + new_len, prot);
                    for (k, pg) in moved.iter().enumerate() {
                        m.pages.get_mut(&(new + k as u64 * PAGE)).unwrap().byte = pg.byte;
                    }
                }
            }
        }
        Op::Write(t, v) => {
            let va = m.resolve(t);
            let allowed = m.pages.get(&va).is_some_and(|p| p.prot & PROT_WRITE != 0);
            let pa = h.access(va, true);
            prop_assert_eq!(pa.is_some(), allowed, "write to {:#x}", va);
            if let Some(pa) = pa {
                h.mem.write(pa, &[*v]);
                m.pages.get_mut(&va).unwrap().byte = *v;
            }
        }
    }
    h.end_of_call();
    Ok(())
}

/// The address space's areas and contents equal the model's.
fn check(h: &mut Harness, m: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(h.space.brk, m.brk);
    let mut pages = BTreeMap::new();
    for (&start, v) in &h.space.vmas {
        for p in (start..v.end).step_by(PAGE as usize) {
            pages.insert(p, (v.prot, start));
        }
    }
    let mine: Vec<(u64, u32)> = pages.iter().map(|(&p, &(prot, _))| (p, prot)).collect();
    let model: Vec<(u64, u32)> = m.pages.iter().map(|(&p, pg)| (p, pg.prot)).collect();
    prop_assert_eq!(mine, model, "mapped pages and protections");
    // Area boundaries: a new area starts exactly where the model's does.
    for (&p, pg) in &m.pages {
        let model_starts = m
            .pages
            .get(&(p.wrapping_sub(PAGE)))
            .is_none_or(|q| q.prot != pg.prot);
        let starts = h.space.vmas.contains_key(&p);
        prop_assert_eq!(starts, model_starts, "an area starts at {:#x}", p);
    }
    for (&p, pg) in &m.pages {
        if pg.prot & PROT_READ == 0 {
            continue;
        }
        let pa = h.access(p, false);
        prop_assert!(pa.is_some(), "read of {:#x}", p);
        let mut b = [0u8];
        h.mem.read(pa.unwrap(), &mut b);
        prop_assert_eq!(b[0], pg.byte, "contents of {:#x}", p);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn memory_calls_follow_linux_rules(ops in proptest::collection::vec(op(), 1..60)) {
        let mut h = Harness::new();
        let mut m = Model { brk: ARENA, ..Model::default() };
        for op in &ops {
            step(&mut h, &mut m, op)?;
            check(&mut h, &m)?;
        }
    }
}

#[test]
fn refused_are_requests_larger_than_the_heap_ram() {
    let mut h = Harness::new();
    let ram = h.space.frames.pool_bytes(0);
    assert_eq!(h.space.set_brk(&mut h.mem, ARENA + ram + PAGE), ARENA);
    assert_eq!(
        h.space.set_brk(&mut h.mem, ARENA + ram / 2),
        ARENA + ram / 2
    );
    assert!(h.space.may_commit(ram, 0));
    assert!(!h.space.may_commit(ram + PAGE, 0));
    // A break past the user address space, or wrapping, is refused.
    assert_eq!(h.space.set_brk(&mut h.mem, u64::MAX), ARENA + ram / 2);
}

#[test]
fn unmapping_marks_translations_stale() {
    let mut h = Harness::new();
    h.space.set_brk(&mut h.mem, ARENA + 4 * PAGE);
    assert!(!h.space.translations_stale, "growing removes nothing");
    h.space.set_brk(&mut h.mem, ARENA + PAGE);
    assert!(h.space.translations_stale, "a shrinking break unmaps pages");
}
