//! The decoded-block cache shared by the harts of one address space.
//!
//! A block is a run of decoded instructions from one virtual page: it goes on
//! past not-taken conditional branches and same-page direct jumps, and ends at
//! an indirect jump, a system instruction or the page end. Blocks are
//! keyed by virtual PC. Physical pages that hold decoded code are remembered
//! so the harts never cache them in their write TLBs: every store to such a
//! page takes the slow path, which asks for the cache to be flushed (QEMU's
//! approach to self-modifying code). `fence.i` flushes it too.

use rvnvmm_isa::Insn;
use std::collections::{HashMap, HashSet};

/// Most instructions in one block.
pub const MAX_BLOCK_INSNS: usize = 64;
const FAST_ENTRIES: usize = 4096;

/// A decoded basic block.
///
/// `repr(C)`, aligned to a host cache line: what a run of the block
/// reads where it is not translated code (the lookup's `next_ppage`, the
/// fetch's `fetch_lines`, `translation`'s entry and kind, `pc`) comes first
/// and fits the first line, so that entering a block out of the host's
/// caches (the first block of a hart's turn, one every ~165 instructions
/// of a timed 4-hart boot) costs one miss, not one per field.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Block {
    /// Its translation to host code, once hot (the translating engine only).
    pub translation: Option<crate::jit::Translation>,
    /// Virtual address of the first instruction.
    pub pc: u64,
    /// Page offsets of the fetch lines (of the timing model's size) it is
    /// fetched from, in first-use order; empty when decoded without a model.
    pub fetch_lines: FetchLines,
    /// The physical page the second half of a last instruction straddling
    /// the page end came from, or [`NO_NEXT_PAGE`].
    pub next_ppage: u64,
    /// The decoded instructions, in order.
    pub insns: Box<[Insn]>,
    /// `cost[i]`: core cycles of the first `i` instructions (see
    /// [`crate::CoreCosts`]).
    pub cost: Box<[u32]>,
    /// The instruction bits, for the `tval` of an illegal instruction.
    pub raw: Box<[u32]>,
    /// Times the translating engine ran the block before translating it.
    pub runs: u32,
    /// `cost` and `fetch_lines` under the timing the cache's last
    /// [`CodeCache::retime`] left (`CodeCache::parked_timing`), kept so that
    /// switching back costs a swap.
    pub parked: Option<BlockTiming>,
}

/// [`Block::next_ppage`] of a block that does not straddle pages (not a
/// page address).
pub const NO_NEXT_PAGE: u64 = u64::MAX;

// The fields a run reads fit the block's first host cache line.
const _: () = assert!(
    std::mem::offset_of!(Block, next_ppage) + std::mem::size_of::<u64>() <= 64
        && std::mem::size_of::<FetchLines>() == 16
);

/// A block's `cost` and `fetch_lines`.
pub type BlockTiming = (Box<[u32]>, FetchLines);

/// Fetch lines kept inline (a block of 64 four-byte instructions spans at
/// most five 64-byte lines).
const INLINE_FETCH_LINES: usize = 7;

/// A block's fetch lines (page offsets): inline when few, as nearly all
/// are. A timed run reads them at every block it enters (a 4-hart timed
/// boot enters one every few dozen instructions), and a separate
/// allocation there cost a host cache miss.
#[derive(Clone, Debug)]
pub enum FetchLines {
    /// At most [`INLINE_FETCH_LINES`]: `lines[..len]`.
    Inline {
        /// How many.
        len: u8,
        /// The lines, then zeros.
        lines: [u16; INLINE_FETCH_LINES],
    },
    /// More (boxed twice: a thin pointer keeps the enum at 16 bytes).
    Spilled(Box<Box<[u16]>>),
}

impl Default for FetchLines {
    fn default() -> Self {
        FetchLines::Inline {
            len: 0,
            lines: [0; INLINE_FETCH_LINES],
        }
    }
}

impl From<&[u16]> for FetchLines {
    fn from(lines: &[u16]) -> Self {
        if lines.len() <= INLINE_FETCH_LINES {
            let mut inline = [0; INLINE_FETCH_LINES];
            inline[..lines.len()].copy_from_slice(lines);
            FetchLines::Inline {
                len: lines.len() as u8,
                lines: inline,
            }
        } else {
            FetchLines::Spilled(Box::new(lines.into()))
        }
    }
}

impl std::ops::Deref for FetchLines {
    type Target = [u16];

    #[inline(always)]
    fn deref(&self) -> &[u16] {
        match self {
            FetchLines::Inline { len, lines } => &lines[..*len as usize],
            FetchLines::Spilled(lines) => lines,
        }
    }
}

impl PartialEq for FetchLines {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// What a block's timing is computed from: the core's costs and the
/// timing model's fetch-line size (`None`: no model).
type Timing = (crate::CoreCosts, Option<u32>);

/// Physical pages holding decoded code, and whether a flush is owed.
#[derive(Debug, Default)]
pub struct CodePages {
    pages: HashSet<u64>,
    /// Set when code was modified or `fence.i` ran: the cache is flushed
    /// before the next block is looked up.
    pub flush_pending: bool,
    /// Bumped whenever a page becomes a code page; a hart whose write TLB was
    /// filled under an older generation flushes it before running.
    pub generation: u64,
}

impl CodePages {
    /// Whether physical page `ppage` (page-aligned address) holds decoded code.
    #[inline]
    pub fn contains(&self, ppage: u64) -> bool {
        !self.pages.is_empty() && self.pages.contains(&ppage)
    }

    /// A store reached code page `ppage`: drop all decoded code.
    pub fn code_written(&mut self, ppage: u64) {
        if self.pages.contains(&ppage) {
            self.flush_pending = true;
        }
    }

    /// Records `ppage` as a code page; true if it was not one.
    pub fn mark(&mut self, ppage: u64) -> bool {
        let new = self.pages.insert(ppage);
        if new {
            self.generation += 1;
        }
        new
    }
}

/// The front-cache slot of block key `key`: its low bits folded with the
/// bits above them, so that blocks at the same offset of different 8 KiB
/// ranges (the kernel's and several processes' code, by physical address
/// in the full system) do not all share a slot.
#[inline(always)]
fn fast_slot(key: u64) -> usize {
    const BITS: u32 = FAST_ENTRIES.trailing_zeros();
    let k = key >> 1;
    ((k ^ (k >> BITS) ^ (k >> (2 * BITS))) as usize) & (FAST_ENTRIES - 1)
}

/// The tag of an empty front-cache slot: a key that belongs to another slot,
/// so no key looked up in `slot` can equal it (keys below `2 *
/// FAST_ENTRIES` have no bits to fold: their slot is `key >> 1`). (A fixed
/// marker such as `u64::MAX` is itself a key some PC can have.)
#[inline(always)]
fn empty_tag(slot: usize) -> u64 {
    (((slot + 1) & (FAST_ENTRIES - 1)) as u64) << 1
}

/// The front cache with every slot empty.
fn empty_fast() -> Box<[(u64, u32)]> {
    (0..FAST_ENTRIES).map(|s| (empty_tag(s), 0)).collect()
}

/// A new code-cache epoch, distinct from every one before it in the
/// process (a machine that replaces its cache, as a reboot does, must not
/// find its old indices valid in the new one).
fn next_epoch() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A jump table with every link empty.
fn empty_jumps() -> Box<[crate::jit::Link]> {
    (0..crate::jit::JUMP_SLOTS)
        .map(|_| crate::jit::Link::default())
        .collect()
}

/// The cache itself.
pub struct CodeCache {
    blocks: Vec<Block>,
    map: HashMap<u64, u32>,
    /// Direct-mapped by [`fast_slot`]: (key, block index), or
    /// ([`empty_tag`], 0) when empty.
    fast: Box<[(u64, u32)]>,
    /// Code-page tracking (a separate field so it can be borrowed mutably
    /// while a block is executing).
    pub pages: CodePages,
    /// Blocks decoded since creation (statistics).
    pub blocks_decoded: u64,
    /// Whole-cache flushes since creation (statistics).
    pub flushes: u64,
    /// Which set of blocks the indices refer to: new for every cache and
    /// every flush (blocks are only ever dropped all at once), so an index
    /// remembered with it is still the block it was while they are equal.
    epoch: u64,
    /// The host code of the blocks' translations.
    arena: crate::jit::ExecArena,
    /// Indirect-jump targets of the translated code: links by the PC's
    /// halfword index, validated by the PC (see [`crate::jit::Link`]).
    jumps: Box<[crate::jit::Link]>,
    /// The timing set by the last [`retime`](Self::retime) (`None`: none
    /// yet, the blocks carry the timing they were decoded with).
    timing: Option<Timing>,
    /// The timing before it, which the blocks' `parked` figures follow.
    parked_timing: Option<Timing>,
}

impl Default for CodeCache {
    fn default() -> Self {
        CodeCache {
            blocks: Vec::new(),
            map: HashMap::new(),
            fast: empty_fast(),
            pages: CodePages::default(),
            blocks_decoded: 0,
            flushes: 0,
            epoch: next_epoch(),
            arena: crate::jit::ExecArena::default(),
            jumps: empty_jumps(),
            timing: None,
            parked_timing: None,
        }
    }
}

impl CodeCache {
    /// The block with key `pc` (see [`insert`](Self::insert)), if decoded.
    #[inline(always)]
    pub fn lookup(&mut self, pc: u64) -> Option<u32> {
        let slot = fast_slot(pc);
        let (tag, idx) = self.fast[slot];
        if tag == pc {
            return Some(idx);
        }
        let idx = *self.map.get(&pc)?;
        self.fast[slot] = (pc, idx);
        Some(idx)
    }

    /// The block with index `idx` (from [`lookup`](Self::lookup) or [`insert`](Self::insert)).
    #[inline(always)]
    pub fn block(&self, idx: u32) -> &Block {
        &self.blocks[idx as usize]
    }

    /// Adds a block decoded from physical page `ppage`, found by `key` (its
    /// PC, or its physical address when the cache is shared by address
    /// spaces); returns its index and whether the page newly became a code
    /// page.
    pub fn insert(&mut self, key: u64, block: Block, ppage: u64) -> (u32, bool) {
        let idx = self.blocks.len() as u32;
        self.blocks.push(block);
        self.map.insert(key, idx);
        self.fast[fast_slot(key)] = (key, idx);
        self.blocks_decoded += 1;
        let new_page = self.pages.mark(ppage);
        (idx, new_page)
    }

    /// Counts a run of block `idx` by the translating engine and translates
    /// it when it becomes hot, for a run with a timing model if `timed`,
    /// in full-system mode if `full`. Returns whether it has a translation
    /// of that kind.
    #[inline]
    pub(crate) fn note_run(&mut self, idx: u32, timed: bool, full: bool) -> bool {
        let block = &mut self.blocks[idx as usize];
        if let Some(t) = &block.translation {
            // One made for the other kind of run (another process's
            // model cannot differ, but a test may switch): interpreted.
            return t.timed == timed && t.full == full;
        }
        if block.runs > crate::jit::HOT_THRESHOLD {
            // Translation failed once: it stays interpreted.
            return false;
        }
        block.runs += 1;
        if block.runs <= crate::jit::HOT_THRESHOLD || !cfg!(target_arch = "x86_64") {
            return false;
        }
        // A host that will not map executable memory leaves the block to
        // the interpreter, which gives the same results.
        block.translation = crate::jit::translate(
            &mut self.arena,
            idx,
            block.pc,
            &block.insns,
            &block.cost,
            timed.then_some(&block.fetch_lines[..]),
            full,
        )
        .ok();
        block.translation.is_some()
    }

    /// The jump table of the translated code (see [`crate::jit::JitCtx`]).
    pub(crate) fn jumps_ptr(&self) -> *const crate::jit::Link {
        self.jumps.as_ptr()
    }

    /// In a child process made by `fork`: makes the translated code the
    /// child's own (see [`ExecArena::unshare`](crate::jit::ExecArena::unshare));
    /// where the host refuses, the child starts over with an empty cache.
    pub fn unshare_after_fork(&mut self) {
        if self.arena.unshare().is_err() {
            self.flush();
        }
    }

    /// Drops every block (the code pages are forgotten too).
    pub fn flush(&mut self) {
        // The translations point into the arena, and the jump table into
        // the translations: they go first.
        for link in self.jumps.iter() {
            link.clear();
        }
        self.blocks.clear();
        self.arena.clear();
        self.map.clear();
        for (slot, entry) in self.fast.iter_mut().enumerate() {
            *entry = (empty_tag(slot), 0);
        }
        self.pages.pages.clear();
        self.pages.flush_pending = false;
        self.flushes += 1;
        self.epoch = next_epoch();
    }

    /// The current set of blocks (see the `epoch` field): a block index
    /// kept outside the cache is valid while this does not change.
    #[inline(always)]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Re-times every block for a change of model within a run: its
    /// instructions' costs from `costs`, and its fetch lines for a timing
    /// model with `fetch_line_shift` (`None`: no model, nothing fetched
    /// through a cache). The blocks themselves stay, so they begin and end
    /// where they did (a flush would let them be decoded from other entry
    /// points, which fetch other lines) and so do their translations: a
    /// translation bakes in its block's costs and fetch lines, but is only
    /// entered by a run of the kind (timed or functional) it was made for,
    /// and a run has one timing of each kind. A switch between two
    /// different timed configurations would have to drop them.
    ///
    /// Each block keeps the figures it leaves as `parked`: switching back
    /// to the timing before (a sampled run switches back and forth every
    /// window) swaps them in instead of computing them again.
    ///
    /// `figures` computes a block's costs and fetch lines afresh (the
    /// public `retime`, in `block_decode`, passes the block decoder's).
    pub(crate) fn retime_with(&mut self, to: Timing, figures: impl Fn(&Block) -> BlockTiming) {
        let back = self.parked_timing.as_ref() == Some(&to);
        for b in &mut self.blocks {
            let (cost, fetch_lines) = match b.parked.take() {
                Some(parked) if back => parked,
                _ => figures(b),
            };
            let left = (
                std::mem::replace(&mut b.cost, cost),
                std::mem::replace(&mut b.fetch_lines, fetch_lines),
            );
            b.parked = Some(left);
        }
        self.parked_timing = self.timing.replace(to);
    }

    /// Flushes if a flush is owed.
    #[inline(always)]
    pub fn settle(&mut self) {
        if self.pages.flush_pending {
            self.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(pc: u64) -> Block {
        Block {
            pc,
            insns: Box::new([]),
            cost: Box::new([0]),
            fetch_lines: FetchLines::default(),
            raw: Box::new([]),
            next_ppage: NO_NEXT_PAGE,
            runs: 0,
            translation: None,
            parked: None,
        }
    }

    #[test]
    fn empty_tags_match_no_key_of_their_slot() {
        for slot in 0..FAST_ENTRIES {
            assert_ne!(fast_slot(empty_tag(slot)), slot, "slot {slot}");
        }
    }

    /// Fetch lines read back as given, inline or spilled, and compare by
    /// content.
    #[test]
    fn fetch_lines_keep_their_lines() {
        let all: Vec<u16> = (0..12).map(|i| i * 0x40).collect();
        for n in 0..=all.len() {
            let lines = FetchLines::from(&all[..n]);
            assert_eq!(&*lines, &all[..n]);
            assert_eq!(
                matches!(lines, FetchLines::Inline { .. }),
                n <= INLINE_FETCH_LINES
            );
            assert_eq!(lines, FetchLines::Spilled(Box::new(all[..n].into())));
        }
        assert_eq!(&*FetchLines::default(), &[] as &[u16]);
    }

    /// Blocks at one offset of many pages (function entries of the kernel
    /// and of processes, by physical address) spread over the slots.
    #[test]
    fn blocks_at_one_page_offset_spread_over_slots() {
        for offset in [0x0, 0x40, 0x7fe] {
            let slots: HashSet<usize> = (0..256u64)
                .map(|page| fast_slot(0x8020_0000 + (page << 12) + offset))
                .collect();
            assert!(
                slots.len() >= 250,
                "offset {offset:#x}: {} slots",
                slots.len()
            );
        }
    }

    #[test]
    fn no_key_hits_an_empty_cache() {
        // Keys next to every slot boundary and at the ends of the range,
        // odd ones included (an ELF entry point or a sigreturn PC can be
        // anything), before any block exists and after a flush.
        let mut keys = vec![0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
        keys.extend((0..2 * FAST_ENTRIES as u64 + 2).map(|k| k << 1));
        keys.extend((0..2 * FAST_ENTRIES as u64 + 2).map(|k| k << 1 | 1));
        let mut c = CodeCache::default();
        for &k in &keys {
            assert_eq!(c.lookup(k), None, "key {k:#x}");
        }
        c.insert(0x1000, block(0x1000), 0x8000_0000);
        assert_eq!(c.lookup(0x1000), Some(0));
        c.flush();
        for &k in &keys {
            assert_eq!(c.lookup(k), None, "key {k:#x} after a flush");
        }
    }

    #[test]
    fn retiming_back_gives_the_figures_computed_afresh() {
        // addi, ld, add (a load-use stall), over a 64-byte line boundary.
        let raws = [0x0010_0093u32, 0x0000_b103, 0x0020_81b3];
        let insns: Box<[Insn]> = raws.iter().map(|&r| rvnvmm_isa::decode(r)).collect();
        let pc = 0x103c;
        let timed = crate::CoreCosts::default();
        let functional = crate::CoreCosts::FUNCTIONAL;
        let fresh = |costs: &crate::CoreCosts, shift: Option<u32>| {
            (
                crate::cost::prefix(costs, &insns),
                shift.map_or_else(FetchLines::default, |s| {
                    crate::block_decode::fetch_lines(pc, &insns, s)
                }),
            )
        };
        let mut c = CodeCache::default();
        let (cost, fetch_lines) = fresh(&timed, Some(6));
        c.insert(
            pc,
            Block {
                insns: insns.clone(),
                cost,
                fetch_lines,
                ..block(pc)
            },
            0,
        );
        for (costs, shift) in [
            (&functional, None),
            (&timed, Some(6)),
            (&functional, None),
            (&timed, Some(6)),
            (&timed, Some(7)),
            (&timed, Some(6)),
        ] {
            c.retime(costs, shift);
            let b = c.block(0);
            let (cost, fetch_lines) = fresh(costs, shift);
            assert_eq!((&b.cost, &b.fetch_lines), (&cost, &fetch_lines));
        }
        assert_ne!(fresh(&timed, Some(6)).0, fresh(&functional, None).0);
    }
}
