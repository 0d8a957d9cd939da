//! The guest process's address space: virtual memory areas, physical frames
//! and the Sv39 page table the harts walk.
//!
//! Anonymous memory is demand-paged: a page gets a frame when first touched,
//! and data frames are handed out in ascending physical order, so pages
//! touched in address order are physically contiguous (rows and banks of the
//! memory model then see what a stride loop intends). Page-table frames come
//! from the top of the region so they never break that contiguity.

use crate::errno::*;
use rvnvmm_mem::sv39::{self, page_offset, Pte, PAGE_SIZE};
use rvnvmm_mem::PhysMem;
use std::collections::BTreeMap;

pub use rvnvmm_config::PagePolicy;

mod accounting;
mod changes;
mod faults;
mod migrate;

pub use migrate::{AreaPages, Moved};

/// Protection bits as in mmap's PROT_*.
pub const PROT_READ: u32 = 1;
/// Writable.
pub const PROT_WRITE: u32 = 2;
/// Executable.
pub const PROT_EXEC: u32 = 4;

/// Highest user address + 1 (Sv39 user half).
pub const USER_TOP: u64 = 0x40_0000_0000;
/// Top of the initial stack.
pub const STACK_TOP: u64 = 0x3f_ffff_f000;
/// The least room left between the top of the user address space and the
/// mmap area, whatever the stack size (the layout user mode has always had;
/// Linux's own floor, `MIN_GAP` in mm/util.c, is 128 MiB plus the stack's
/// random offset).
pub const MIN_STACK_GAP: u64 = 256 << 20;
/// The gap Linux keeps below a stack at its limit (`stack_guard_gap`, 256
/// pages).
pub const STACK_GUARD_GAP: u64 = 256 * PAGE_SIZE;
/// Load bias of position-independent executables.
pub const PIE_BASE: u64 = 0x2a_aaaa_a000;

/// Where top-down mmap allocation starts for a stack of `stack_size` bytes,
/// as Linux's `mmap_base` places it: below the stack's whole extent and a
/// guard gap, never closer to the top than [`MIN_STACK_GAP`]. A larger
/// stack moves the mmap area down, so the two never meet.
pub fn mmap_top_for_stack(stack_size: u64) -> u64 {
    let gap = stack_size
        .min(rvnvmm_config::MAX_STACK_SIZE)
        .next_multiple_of(PAGE_SIZE)
        + STACK_GUARD_GAP;
    USER_TOP - gap.max(MIN_STACK_GAP)
}
/// What backs an area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Zero-filled on demand, from the system pool (the stack).
    Anon,
    /// Zero-filled on demand, from the heap pool (brk, anonymous mmap).
    Heap,
    /// A window on fixed physical memory (`/dev/nvmm`): the page at
    /// `start + k` is physical `base + k`, never allocated or freed.
    Physical {
        /// Physical address of the area's first byte.
        base: u64,
    },
    /// Populated with data when created (ELF segments, file maps); pages
    /// beyond the data are zero-filled on demand like anonymous memory.
    Populated,
}

/// mremap's choices: `MREMAP_MAYMOVE`, `MREMAP_FIXED` (with the target),
/// `MREMAP_DONTUNMAP`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RemapFlags {
    /// The area may move.
    pub may_move: bool,
    /// Move it exactly here.
    pub fixed: Option<u64>,
    /// Leave the old range mapped, empty.
    pub dont_unmap: bool,
}

/// What `madvise` said about huge pages for an area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HugeAdvice {
    /// Nothing: the page policy decides.
    #[default]
    Default,
    /// `MADV_HUGEPAGE`.
    Huge,
    /// `MADV_NOHUGEPAGE`: 4 KiB pages only.
    NoHuge,
}

/// Log2 of the page sizes the user-mode kernel maps: 4 KiB, 64 KiB
/// (Svnapot) and 2 MiB (a megapage).
const SHIFT_4K: u32 = 12;
const SHIFT_64K: u32 = 16;
const SHIFT_2M: u32 = 21;

/// The block size seed 004's hint gives an area of `len` bytes: the
/// largest of 2 MiB and 64 KiB it holds at least one of, else 4 KiB.
pub fn hint_for(len: u64) -> u32 {
    if len >= 1 << SHIFT_2M {
        SHIFT_2M
    } else if len >= 1 << SHIFT_64K {
        SHIFT_64K
    } else {
        SHIFT_4K
    }
}

/// Counters of the larger pages (`--stats` `pages`): per size (64 KiB,
/// 2 MiB), blocks mapped at a fault and blocks split into 4 KiB pages
/// because a change touched part of one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageStats {
    /// Blocks mapped: [64 KiB, 2 MiB].
    pub mapped: [u64; 2],
    /// Blocks demoted: [64 KiB, 2 MiB].
    pub demoted: [u64; 2],
    /// Faults in a range a block could have covered that got a 4 KiB page
    /// (part of it mapped already, or no aligned physical block left).
    pub fallbacks: u64,
}

/// A virtual memory area.
#[derive(Clone, Debug)]
pub struct Vma {
    /// One past the last byte.
    pub end: u64,
    /// PROT_* bits.
    pub prot: u32,
    /// What backs it.
    pub backing: Backing,
    /// A short name for diagnostics (`[heap]`, `[stack]`, a file name).
    pub name: String,
    /// The file behind a file mapping or shared memory; pages are brought
    /// in on first touch.
    pub file: Option<FileMap>,
    /// The file an area populated at creation came from (an ELF segment),
    /// for `/proc/self/maps`.
    pub image: Option<FileIdent>,
    /// Pages from here to the end are anonymous (zero-filled on demand,
    /// no file): the area's start for anonymous memory, the end of the
    /// file data for an ELF segment's bss, `u64::MAX` for none. Only
    /// anonymous pages may be mapped by larger pages.
    pub anon_from: u64,
    /// `madvise`'s huge-page advice.
    pub huge: HugeAdvice,
    /// With `user.pages = hint`: log2 of the block size recorded when the
    /// area was created ([`hint_for`] of its size).
    pub hint: u32,
    /// The area's NUMA policy (`mbind`); `None`: its thread's.
    pub policy: Option<crate::numa::Policy>,
}

impl Vma {
    /// Whether the area, with protection `prot`, is data as Linux's
    /// `is_data_mapping` counts it for `RLIMIT_DATA`: private and writable
    /// (anonymous memory, the heap, a private file mapping, an ELF segment),
    /// but not the stack, shared memory or a window on a device.
    pub fn is_data_with(&self, prot: u32) -> bool {
        prot & PROT_WRITE != 0
            && !self.file.as_ref().is_some_and(|f| f.shared)
            && !matches!(self.backing, Backing::Anon | Backing::Physical { .. })
    }
}

/// Which file, and where in it, an area's first byte came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdent {
    /// The file's device (`st_dev`).
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// File offset of the area's first byte.
    pub offset: u64,
}

/// A mapped file (or, for shared anonymous memory, a memfd).
#[derive(Clone, Debug)]
pub struct FileMap {
    /// The host descriptor, kept open while any area uses it.
    pub fd: std::rc::Rc<std::os::fd::OwnedFd>,
    /// File offset of the area's first byte.
    pub offset: u64,
    /// MAP_SHARED: the area's frames are the file's pages on the host.
    pub shared: bool,
    /// The file is open for writing (bounds mprotect of shared areas).
    pub writable: bool,
}

/// One range of RAM frames are handed out from: data frames upwards from
/// the bottom, page-table frames downwards from the top.
#[derive(Clone, Debug)]
struct Pool {
    base: u64,
    end: u64,
    next_data: u64,
    next_table: u64,
    free: Vec<u64>,
    /// Ranges mapped as device windows, never handed out (see
    /// [`Frames::claim`]).
    claimed: Vec<(u64, u64)>,
    /// Frames not handed out yet may hold data (an NVMM image was loaded):
    /// zero them when they are.
    fresh_not_zero: bool,
}

/// Physical-frame allocation over one or more pools: pool 0 holds the
/// program image, stack and page tables (DRAM); the heap may come from
/// another (NVMM with `user.heap = nvmm`).
#[derive(Clone, Debug)]
pub struct Frames {
    pools: Vec<Pool>,
    /// Frames in use.
    pub used: u64,
}

impl Frames {
    /// Pools over the given `(base, size)` ranges.
    pub fn new(ranges: &[(u64, u64)]) -> Frames {
        let pools = ranges
            .iter()
            .map(|&(base, size)| Pool {
                base,
                end: base + size,
                next_data: base,
                next_table: base + size,
                free: Vec::new(),
                claimed: Vec::new(),
                fresh_not_zero: false,
            })
            .collect();
        Frames { pools, used: 0 }
    }

    fn alloc_data(&mut self, mem: &mut PhysMem, pool: usize) -> Option<u64> {
        let p = &mut self.pools[pool];
        while let Some(&(_, end)) = p
            .claimed
            .iter()
            .find(|&&(b, e)| p.next_data >= b && p.next_data < e)
        {
            p.next_data = end.next_multiple_of(PAGE_SIZE);
        }
        let f = if p.next_data < p.next_table {
            let f = p.next_data;
            p.next_data += PAGE_SIZE;
            if p.fresh_not_zero {
                mem.zero(f, PAGE_SIZE);
            }
            f
        } else {
            let f = p.free.pop()?;
            mem.zero(f, PAGE_SIZE);
            f
        };
        self.used += 1;
        Some(f)
    }

    /// A block of `1 << shift` bytes aligned to its size, from the frames
    /// pool `pool` has not handed out yet (freed frames are scattered).
    /// Frames the alignment skips go to the free list for 4 KiB pages.
    fn alloc_block(&mut self, mem: &mut PhysMem, pool: usize, shift: u32) -> Option<u64> {
        let p = &mut self.pools[pool];
        let size = 1u64 << shift;
        let start = p.next_data.checked_next_multiple_of(size)?;
        let end = start.checked_add(size).filter(|&e| e <= p.next_table)?;
        if p.claimed.iter().any(|&(b, e)| b < end && e > p.next_data) {
            return None;
        }
        p.free
            .extend((p.next_data..start).step_by(PAGE_SIZE as usize));
        p.next_data = end;
        self.used += size / PAGE_SIZE;
        if p.fresh_not_zero {
            mem.zero(start, size);
        }
        Some(start)
    }

    fn alloc_table(&mut self, mem: &mut PhysMem) -> Option<u64> {
        let p = &mut self.pools[0];
        let f = if p.next_table - PAGE_SIZE >= p.next_data {
            p.next_table -= PAGE_SIZE;
            p.next_table
        } else {
            let f = p.free.pop()?;
            mem.zero(f, PAGE_SIZE);
            f
        };
        self.used += 1;
        Some(f)
    }

    /// Keeps `[base, end)` out of the frame pools from now on: a device
    /// window (`/dev/nvmm`) maps those physical pages directly, so handing
    /// them out as heap frames too would alias two guest objects. `EBUSY`
    /// if a pool already handed out frames there; otherwise later data
    /// frames skip the range.
    pub fn claim(&mut self, base: u64, end: u64) -> Result<(), Errno> {
        for (i, p) in self.pools.iter_mut().enumerate() {
            if end <= p.base || base >= p.end {
                continue;
            }
            // Busy if frames were handed out where the range overlaps the
            // pool: data frames lie in [p.base, p.next_data).
            if i == 0 || base.max(p.base) < p.next_data {
                return Err(crate::errno::EBUSY);
            }
            p.claimed.push((base, end));
        }
        Ok(())
    }

    /// The frames of pool `pool` not handed out yet may hold data: they
    /// are zeroed when handed out.
    pub fn fresh_not_zero(&mut self, pool: usize) {
        if let Some(p) = self.pools.get_mut(pool) {
            p.fresh_not_zero = true;
        }
    }

    /// Bytes of pool `pool` not handed out yet.
    pub fn free_bytes(&self, pool: usize) -> u64 {
        self.pools.get(pool).map_or(0, |p| {
            p.next_table.saturating_sub(p.next_data) + p.free.len() as u64 * PAGE_SIZE
        })
    }

    /// Bytes of RAM pool `pool` spans.
    pub fn pool_bytes(&self, pool: usize) -> u64 {
        self.pools.get(pool).map_or(0, |p| p.end - p.base)
    }

    /// The pool frame `frame` belongs to.
    pub fn pool_of_frame(&self, frame: u64) -> Option<usize> {
        self.pools
            .iter()
            .position(|p| frame >= p.base && frame < p.end)
    }

    fn release(&mut self, mem: &mut PhysMem, frame: u64) {
        mem.discard_page(frame);
        if let Some(p) = self
            .pools
            .iter_mut()
            .find(|p| frame >= p.base && frame < p.end)
        {
            self.used -= 1;
            p.free.push(frame);
        }
    }
}

impl Frames {
    /// Writes the allocator's state (a checkpoint, `checkpoint.rs`).
    pub(crate) fn save(&self, w: &mut rvnvmm_checkpoint::StateWriter) {
        w.u64(self.used);
        w.count(self.pools.len());
        for p in &self.pools {
            w.u64s(&[p.base, p.end, p.next_data, p.next_table]);
            w.u64s(&p.free);
            let claimed: Vec<u64> = p.claimed.iter().flat_map(|&(b, e)| [b, e]).collect();
            w.u64s(&claimed);
            w.bool(p.fresh_not_zero);
        }
    }

    /// Reads the state [`Frames::save`] wrote into allocator over the same
    /// pools.
    pub(crate) fn restore(
        &mut self,
        r: &mut rvnvmm_checkpoint::StateReader<'_>,
    ) -> Result<(), rvnvmm_checkpoint::CheckpointError> {
        self.used = r.u64()?;
        r.exact_len(self.pools.len(), "frame pools")?;
        for p in &mut self.pools {
            let mut edges = [0u64; 4];
            r.u64s_into(&mut edges, "a pool's edges")?;
            let [base, end, next_data, next_table] = edges;
            if (base, end) != (p.base, p.end)
                || !(base <= next_data && next_data <= next_table && next_table <= end)
            {
                return Err(r.malformed(format!(
                    "the frame pool {base:#x}-{end:#x} is not the machine's {:#x}-{:#x} or its cursors are outside it",
                    p.base, p.end
                )));
            }
            let pages = ((end - base) / PAGE_SIZE) as usize;
            p.next_data = next_data;
            p.next_table = next_table;
            p.free = r.u64s(pages)?;
            let claimed = r.u64s(2 * pages)?;
            p.claimed = claimed.chunks_exact(2).map(|c| (c[0], c[1])).collect();
            p.fresh_not_zero = r.bool()?;
        }
        Ok(())
    }
}

/// A process's memory: guest RAM, the address space mapped into it, the
/// code decoded from it and the devices mapped outside it.
pub(crate) struct Memory {
    /// Guest RAM (DRAM and the NVMM region), where the frames of the
    /// address space and its page tables lie.
    pub(crate) phys: PhysMem,
    /// The areas, page tables and frame pools of the process.
    pub(crate) aspace: AddressSpace,
    /// Blocks decoded from guest memory, kept coherent with writes to it.
    pub(crate) code: rvnvmm_hart::CodeCache,
    /// Devices outside RAM (the memory system's control page).
    pub(crate) devices: crate::devices::Devices,
}

impl Memory {
    /// What a hart runs in: this memory, timed by `timing`, if given.
    pub(crate) fn env<'a, T: rvnvmm_hart::TimingModel + ?Sized>(
        &'a mut self,
        timing: Option<&'a mut T>,
    ) -> rvnvmm_hart::Env<'a, T> {
        rvnvmm_hart::Env {
            mem: &mut self.phys,
            code: &mut self.code,
            timing,
            mmio: Some(&mut self.devices),
        }
    }

    /// Reads guest memory for a debugger, changing nothing: a page not yet
    /// touched reads as the zeros it would be given if it is anonymous, and
    /// fails otherwise (faulting it in would change what the guest does
    /// later). `false` at the first unreadable byte.
    pub(crate) fn peek(&self, hart: &rvnvmm_hart::Hart, vaddr: u64, buf: &mut [u8]) -> bool {
        let mut done = 0usize;
        while done < buf.len() {
            let va = vaddr.wrapping_add(done as u64);
            let n = ((PAGE_SIZE - page_offset(va)) as usize).min(buf.len() - done);
            let chunk = &mut buf[done..done + n];
            match hart.debug_translate(&self.phys, va) {
                Some(pa) => {
                    if !self.phys.read(pa, chunk) {
                        return false;
                    }
                }
                None => match self.aspace.find(va) {
                    Some((_, vma)) if va < vma.end && va >= vma.anon_from && vma.file.is_none() => {
                        chunk.fill(0)
                    }
                    _ => return false,
                },
            }
            done += n;
        }
        true
    }
}

/// The address space.
#[derive(Clone, Debug)]
pub struct AddressSpace {
    /// Areas by start address.
    pub vmas: BTreeMap<u64, Vma>,
    /// Physical address of the Sv39 root.
    pub root: u64,
    /// Frame allocator.
    pub frames: Frames,
    /// The pool heap memory (brk, anonymous mmap) comes from.
    pub heap_pool: usize,
    /// Start of the heap (program break at exec).
    pub brk_start: u64,
    /// Current program break.
    pub brk: u64,
    /// Top of the mmap area: `mmap(NULL, ...)` takes the highest free gap
    /// below it, and the heap may not grow past it.
    pub mmap_top: u64,
    /// `RLIMIT_DATA` (soft, hard), which bounds the data areas
    /// ([`Vma::is_data_with`]) and the heap.
    pub data_rlimit: (u64, u64),
    /// Bytes of the program's initialised data (Linux's `end_data -
    /// start_data`), which the heap's limit counts too.
    pub data_segment: u64,
    /// A translation was removed or narrowed (unmap, mprotect, a moved
    /// page): every hart's cached translations must be dropped before the
    /// guest runs again, or a stale entry would reach a frame that has been
    /// freed and handed to another mapping.
    pub translations_stale: bool,
    /// The page sizes anonymous memory gets (`user.pages`).
    pub pages: PagePolicy,
    /// Counters of the larger pages.
    pub page_stats: PageStats,
    /// The memory nodes the pools belong to, and what went where.
    pub numa: crate::numa::NodeMap,
}

fn page_up(v: u64) -> u64 {
    (v + PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
}

/// A software bit (RSW) marking a PTE whose physical page belongs to a
/// device window, not to a frame pool: unmapping never frees it.
pub(crate) const PTE_DEVICE: u64 = 1 << 8;

fn pte_flags(prot: u32) -> u64 {
    let mut f = Pte::U | Pte::A | Pte::D;
    if prot & PROT_READ != 0 {
        f |= Pte::R;
    }
    if prot & PROT_WRITE != 0 {
        f |= Pte::W | Pte::R;
    }
    if prot & PROT_EXEC != 0 {
        f |= Pte::X;
    }
    f
}

impl AddressSpace {
    /// An empty address space using frames from `[base, base+size)`.
    pub fn new(mem: &mut PhysMem, base: u64, size: u64) -> Result<AddressSpace, Errno> {
        Self::with_pools(mem, &[(base, size)], 0)
    }

    /// The frames of pool `pool` (1: NVMM) not handed out yet may hold
    /// data (an NVMM image was loaded): they are zeroed when handed out.
    pub fn frames_not_zero(&mut self, pool: usize) {
        self.frames.fresh_not_zero(pool);
    }

    /// An empty address space whose frames come from `pools` (see
    /// [`Frames`]); heap memory from pool `heap_pool`.
    pub fn with_pools(
        mem: &mut PhysMem,
        pools: &[(u64, u64)],
        heap_pool: usize,
    ) -> Result<AddressSpace, Errno> {
        let mut frames = Frames::new(pools);
        let root = frames.alloc_table(mem).ok_or(ENOMEM)?;
        Ok(AddressSpace {
            vmas: BTreeMap::new(),
            root,
            frames,
            heap_pool,
            brk_start: 0,
            brk: 0,
            mmap_top: mmap_top_for_stack(0),
            data_rlimit: (u64::MAX, u64::MAX),
            data_segment: 0,
            translations_stale: false,
            pages: PagePolicy::Base,
            page_stats: PageStats::default(),
            numa: crate::numa::NodeMap::new(&vec![0; pools.len()], 0, &[]),
        })
    }

    /// The area containing `addr`.
    pub fn find(&self, addr: u64) -> Option<(u64, &Vma)> {
        let (&start, vma) = self.vmas.range(..=addr).next_back()?;
        (addr < vma.end).then_some((start, vma))
    }

    /// Whether `[start, end)` overlaps no area.
    pub fn is_free(&self, start: u64, end: u64) -> bool {
        if let Some((_, v)) = self.vmas.range(..end).next_back() {
            if v.end > start {
                return false;
            }
        }
        true
    }

    /// Finds a free range of `len` bytes below the mmap top.
    pub fn find_free(&self, len: u64) -> Option<u64> {
        let mut top = self.mmap_top;
        // Walk areas downwards from the top looking for a gap.
        for (&start, vma) in self.vmas.range(..self.mmap_top).rev() {
            if vma.end <= top && top - vma.end >= len {
                return Some(top - len);
            }
            top = top.min(start);
        }
        top.checked_sub(len).filter(|&s| s >= 0x10000)
    }

    /// Splits any area straddling `addr` so that `addr` starts or ends areas.
    fn split_at(&mut self, addr: u64) {
        let Some((&start, vma)) = self.vmas.range(..addr).next_back() else {
            return;
        };
        if vma.end > addr {
            let mut tail = vma.clone();
            if let Some(f) = &mut tail.file {
                f.offset += addr - start;
            }
            if let Some(i) = &mut tail.image {
                i.offset += addr - start;
            }
            self.vmas.get_mut(&start).unwrap().end = addr;
            self.vmas.insert(addr, tail);
        }
    }

    /// Whether area `b` (starting where `a` ends) can join `a`, as Linux
    /// merges neighbours: the same protection, backing and NUMA policy, and for files
    /// the same open file at contiguous offsets. (Linux also keeps apart
    /// anonymous areas whose pages were first touched through different
    /// mappings; here they merge, which only lets one mremap span more.)
    fn mergeable(a_start: u64, a: &Vma, b: &Vma) -> bool {
        let len = a.end - a_start;
        let same_file = match (&a.file, &b.file) {
            (None, None) => true,
            (Some(x), Some(y)) => {
                std::rc::Rc::ptr_eq(&x.fd, &y.fd)
                    && x.shared == y.shared
                    && x.offset + len == y.offset
            }
            _ => false,
        };
        let same_image = match (&a.image, &b.image) {
            (None, None) => true,
            (Some(x), Some(y)) => x.dev == y.dev && x.ino == y.ino && x.offset + len == y.offset,
            _ => false,
        };
        let same_backing = match (&a.backing, &b.backing) {
            (Backing::Physical { base: x }, Backing::Physical { base: y }) => x + len == *y,
            (x, y) => x == y,
        };
        // Anonymous memory has no name of its own ([heap] is where the
        // break is); everything else keeps its name.
        let same_name = a.backing == Backing::Heap || a.name == b.name;
        // As Linux keeps areas with different huge-page advice apart.
        a.prot == b.prot
            && same_backing
            && same_file
            && same_image
            && same_name
            && a.huge == b.huge
            && a.policy == b.policy
            && (a.anon_from == b.anon_from || (a.anon_from <= a_start && b.anon_from <= a.end))
    }

    /// Merges the areas touching `[start, end)` with mergeable neighbours.
    pub fn merge_around(&mut self, start: u64, end: u64) {
        let mut cur = self
            .vmas
            .range(..start)
            .next_back()
            .or_else(|| self.vmas.range(start..).next())
            .map(|(&k, _)| k);
        while let Some(k) = cur.filter(|&k| k < end) {
            let a = &self.vmas[&k];
            let a_end = a.end;
            match self.vmas.get(&a_end) {
                Some(b) if Self::mergeable(k, a, b) => {
                    let (b_end, b_hint) = (b.end, b.hint);
                    self.vmas.remove(&a_end);
                    let a = self.vmas.get_mut(&k).unwrap();
                    a.end = b_end;
                    // One area now: blocks as large as either part's.
                    a.hint = a.hint.max(b_hint);
                }
                _ => cur = self.vmas.range(k + 1..).next().map(|(&k, _)| k),
            }
        }
    }

    /// Adds an area (the range must be free). Pages of an anonymous area are
    /// mapped on first touch.
    pub fn add(&mut self, start: u64, end: u64, prot: u32, backing: Backing, name: &str) {
        let anon = matches!(backing, Backing::Anon | Backing::Heap);
        self.vmas.insert(
            start,
            Vma {
                end,
                prot,
                backing,
                name: name.to_string(),
                file: None,
                image: None,
                anon_from: if anon { start } else { u64::MAX },
                huge: HugeAdvice::Default,
                hint: hint_for(end - start),
                policy: None,
            },
        );
    }

    /// Marks the pages of the area at `start` from `from` on as anonymous
    /// (an ELF segment's bss), with the hint their size gives.
    pub fn set_anon_from(&mut self, start: u64, from: u64) {
        if let Some(v) = self.vmas.get_mut(&start) {
            v.anon_from = from.max(start);
            v.hint = hint_for(v.end.saturating_sub(v.anon_from));
        }
    }
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> (PhysMem, AddressSpace) {
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x100_0000)]).unwrap();
        let a = AddressSpace::new(&mut mem, 0x8000_0000, 0x100_0000).unwrap();
        (mem, a)
    }

    #[test]
    fn demand_pages_are_contiguous_in_touch_order() {
        let (mut mem, mut a) = space();
        a.add(
            0x10_0000,
            0x20_0000,
            PROT_READ | PROT_WRITE,
            Backing::Anon,
            "x",
        );
        let f0 = a
            .populate_page(&mut mem, 0x10_0000, PROT_READ | PROT_WRITE)
            .unwrap();
        assert!(a.handle_fault(&mut mem, 0x10_1000, true, false).unwrap());
        let (_, pte, _) = sv39::find_leaf(&mem, a.root, 0x10_1000).unwrap();
        assert_eq!(pte.paddr(), f0 + PAGE_SIZE);
        assert!(!a.handle_fault(&mut mem, 0x30_0000, false, false).unwrap());
    }

    #[test]
    fn resident_pages_count_the_touched_pages_of_a_range() {
        let (mut mem, mut a) = space();
        let rw = PROT_READ | PROT_WRITE;
        // Two areas 1 GiB apart, so the walk crosses empty subtrees.
        a.add(0x10_0000, 0x20_0000, rw, Backing::Anon, "x");
        a.add(0x4010_0000, 0x4020_0000, rw, Backing::Anon, "y");
        for va in [0x10_0000, 0x10_3000, 0x1f_f000, 0x4010_0000] {
            a.populate_page(&mut mem, va, rw).unwrap();
        }
        assert_eq!(a.resident_pages(&mem, 0, USER_TOP), 4);
        assert_eq!(a.resident_pages(&mem, 0x10_0000, 0x20_0000), 3);
        assert_eq!(a.resident_pages(&mem, 0x10_1000, 0x1f_f000), 1);
        assert_eq!(a.resident_pages(&mem, 0x4010_1000, 0x4020_0000), 0);
        a.unmap(&mut mem, 0x10_3000, 0x10_4000);
        assert_eq!(a.resident_pages(&mem, 0x10_0000, 0x20_0000), 2);
    }

    #[test]
    fn heap_frames_skip_device_windows_and_never_alias_them() {
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x10_0000), (0xC000_0000, 0x10_0000)]).unwrap();
        let mut f = Frames::new(&[(0x8000_0000, 0x10_0000), (0xC000_0000, 0x10_0000)]);
        let first = f.alloc_data(&mut mem, 1).unwrap();
        assert_eq!(first, 0xC000_0000);
        // A window over frames the heap already has: refused.
        assert_eq!(f.claim(0xC000_0000, 0xC000_2000), Err(crate::errno::EBUSY));
        // A window just above: later heap frames jump over it.
        assert_eq!(f.claim(0xC000_1000, 0xC000_3000), Ok(()));
        assert_eq!(f.alloc_data(&mut mem, 1), Some(0xC000_3000));
        // The DRAM pool (program, stack, page tables) is never a window.
        assert_eq!(f.claim(0x8000_0000, 0x8000_1000), Err(crate::errno::EBUSY));
    }

    #[test]
    fn a_window_from_below_a_fresh_pool_may_cover_it() {
        // The NVMM heap pool is the region's upper half; a window over the
        // whole region starts below the pool and overlaps no frame yet.
        let mut f = Frames::new(&[(0x8000_0000, 0x10_0000), (0xC008_0000, 0x8_0000)]);
        assert_eq!(f.claim(0xC000_0000, 0xC010_0000), Ok(()));
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x10_0000), (0xC000_0000, 0x10_0000)]).unwrap();
        let mut g = Frames::new(&[(0x8000_0000, 0x10_0000), (0xC008_0000, 0x8_0000)]);
        assert_eq!(g.alloc_data(&mut mem, 1), Some(0xC008_0000));
        assert_eq!(g.claim(0xC000_0000, 0xC010_0000), Err(crate::errno::EBUSY));
        assert_eq!(g.claim(0xC000_0000, 0xC008_0000), Ok(()), "below the pool");
    }

    fn policy_space(pages: PagePolicy) -> (PhysMem, AddressSpace) {
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x100_0000)]).unwrap();
        let mut a = AddressSpace::new(&mut mem, 0x8000_0000, 0x100_0000).unwrap();
        a.pages = pages;
        (mem, a)
    }

    const RW: u32 = PROT_READ | PROT_WRITE;

    /// Translates for a user read (or write): physical address and page size.
    fn user_access(
        mem: &mut PhysMem,
        a: &AddressSpace,
        va: u64,
        write: bool,
    ) -> Option<(u64, u32)> {
        let who = sv39::Requester {
            user: true,
            sum: false,
            mxr: false,
        };
        let access = if write {
            sv39::Access::Write
        } else {
            sv39::Access::Read
        };
        sv39::translate(mem, a.root, va, access, who)
            .ok()
            .map(|t| (t.paddr, t.page_shift))
    }

    #[test]
    fn thp_maps_a_megapage_where_a_whole_aligned_range_lies_in_the_area() {
        let (mut mem, mut a) = policy_space(PagePolicy::Thp);
        // 0x1f_f000..0x60_1000: one page below 2 MiB alignment, two whole
        // 2 MiB ranges, one page beyond.
        a.add(0x1f_f000, 0x60_1000, RW, Backing::Heap, "[anon]");
        assert!(a.handle_fault(&mut mem, 0x25_0000, true, false).unwrap());
        let (pa, shift) = user_access(&mut mem, &a, 0x25_0123, false).unwrap();
        assert_eq!(shift, 21);
        assert_eq!(pa & 0x1f_ffff, 0x5_0123, "physically aligned as well");
        // The edges get 4 KiB pages.
        for va in [0x1f_f000, 0x60_0000] {
            assert!(a.handle_fault(&mut mem, va, true, false).unwrap());
            assert_eq!(user_access(&mut mem, &a, va, false).unwrap().1, 12);
        }
        assert_eq!(a.mappings_by_size(&mem), [2, 0, 1, 0]);
        // MADV_NOHUGEPAGE: the other range gets 4 KiB pages.
        a.advise_huge(0x40_0000, 0x60_0000, HugeAdvice::NoHuge)
            .unwrap();
        assert!(a.handle_fault(&mut mem, 0x40_0000, true, false).unwrap());
        assert_eq!(user_access(&mut mem, &a, 0x40_0000, false).unwrap().1, 12);
        assert_eq!(a.page_stats.mapped, [0, 1]);
        assert_eq!(
            a.advise_huge(0x60_0000, 0x80_0000, HugeAdvice::Huge),
            Err(ENOMEM),
            "part of the range is not mapped"
        );
        // Base maps nothing larger than 4 KiB.
        let (mut mem, mut b) = policy_space(PagePolicy::Base);
        b.add(0x20_0000, 0x40_0000, RW, Backing::Heap, "[anon]");
        b.handle_fault(&mut mem, 0x20_0000, true, false).unwrap();
        assert_eq!(b.mappings_by_size(&mem), [1, 0, 0, 0]);
    }

    #[test]
    fn hint_blocks_follow_the_area_size() {
        let (mut mem, mut a) = policy_space(PagePolicy::Hint);
        // 128 KiB: 64 KiB blocks (Svnapot).
        a.add(0x10_0000, 0x12_0000, RW, Backing::Heap, "[anon]");
        assert!(a.handle_fault(&mut mem, 0x11_2000, true, false).unwrap());
        let (pa, shift) = user_access(&mut mem, &a, 0x11_2345, false).unwrap();
        assert_eq!((shift, pa & 0xffff), (16, 0x2345));
        // 8 KiB: 4 KiB pages.
        a.add(0x20_0000, 0x20_2000, RW, Backing::Heap, "[anon]");
        a.handle_fault(&mut mem, 0x20_0000, true, false).unwrap();
        assert_eq!(user_access(&mut mem, &a, 0x20_0000, false).unwrap().1, 12);
        // 3 MiB from 0x40_0000: a 2 MiB block, then 64 KiB ones beyond.
        a.add(0x40_0000, 0x70_0000, RW, Backing::Heap, "[anon]");
        a.handle_fault(&mut mem, 0x41_0000, true, false).unwrap();
        a.handle_fault(&mut mem, 0x61_0000, true, false).unwrap();
        assert_eq!(user_access(&mut mem, &a, 0x41_0000, false).unwrap().1, 21);
        assert_eq!(user_access(&mut mem, &a, 0x61_0000, false).unwrap().1, 16);
        assert_eq!(a.mappings_by_size(&mem), [1, 2, 1, 0]);
    }

    #[test]
    fn mprotect_of_one_page_splits_its_block_and_keeps_the_data() {
        for (len, shift) in [(0x20_0000u64, 21u32), (0x1_0000, 16)] {
            let (mut mem, mut a) = policy_space(PagePolicy::Hint);
            let base = 0x20_0000;
            a.add(base, base + len, RW, Backing::Heap, "[anon]");
            assert!(a.handle_fault(&mut mem, base, true, false).unwrap());
            assert_eq!(user_access(&mut mem, &a, base, true).unwrap().1, shift);
            // Data in every page, through the block.
            for p in (0..len).step_by(PAGE_SIZE as usize) {
                let (pa, _) = user_access(&mut mem, &a, base + p, true).unwrap();
                mem.write_u64(pa, p ^ 0x5a5a);
            }
            a.translations_stale = false;
            let page = base + 0x3000;
            a.protect(&mut mem, page, page + PAGE_SIZE, PROT_READ)
                .unwrap();
            assert!(a.translations_stale);
            let which = usize::from(shift == 21);
            assert_eq!(a.page_stats.demoted[which], 1, "{shift}");
            // 4 KiB pages now, the same frames, the data unchanged.
            for p in (0..len).step_by(PAGE_SIZE as usize) {
                let va = base + p;
                let (pa, s) = user_access(&mut mem, &a, va, false).unwrap();
                assert_eq!(s, 12);
                assert_eq!(mem.read_u64(pa), Some(p ^ 0x5a5a), "{va:#x}");
                // Only the protected page refuses writes.
                assert_eq!(user_access(&mut mem, &a, va, true).is_some(), va != page);
            }
            assert_eq!(a.mappings_by_size(&mem)[0], len / PAGE_SIZE);
            // Unmapping a page of what was the block frees just that frame.
            let used = a.frames.used;
            a.unmap(&mut mem, page, page + PAGE_SIZE);
            assert_eq!(a.frames.used, used - 1);
            assert!(user_access(&mut mem, &a, page, false).is_none());
        }
    }

    #[test]
    fn unmapping_part_of_a_block_splits_it_and_frees_only_that_part() {
        let (mut mem, mut a) = policy_space(PagePolicy::Thp);
        a.add(0x20_0000, 0x40_0000, RW, Backing::Heap, "[anon]");
        a.handle_fault(&mut mem, 0x20_0000, true, false).unwrap();
        let used = a.frames.used;
        a.unmap(&mut mem, 0x30_0000, 0x40_0000);
        // Half the frames go; the split took a frame for its 4 KiB table.
        assert_eq!(a.frames.used, used - 256 + 1);
        assert_eq!(a.page_stats.demoted, [0, 1]);
        assert_eq!(user_access(&mut mem, &a, 0x2f_f000, true).unwrap().1, 12);
        assert!(user_access(&mut mem, &a, 0x30_0000, false).is_none());
        // The whole of a block goes without a split.
        a.add(0x40_0000, 0x60_0000, RW, Backing::Heap, "[anon]");
        a.handle_fault(&mut mem, 0x40_0000, true, false).unwrap();
        let used = a.frames.used;
        a.unmap(&mut mem, 0x40_0000, 0x60_0000);
        assert_eq!(a.frames.used, used - 512);
        assert_eq!(a.page_stats.demoted, [0, 1]);
    }

    #[test]
    fn the_mmap_area_starts_below_the_whole_stack() {
        // Linux's default 8 MiB keeps the layout user mode always had.
        assert_eq!(mmap_top_for_stack(8 << 20), 0x3f_f000_0000);
        let big = 4 << 30;
        assert_eq!(mmap_top_for_stack(big), USER_TOP - big - STACK_GUARD_GAP);
        // An unlimited RLIMIT_STACK is held to the largest stack.
        let max = rvnvmm_config::MAX_STACK_SIZE;
        assert_eq!(
            mmap_top_for_stack(u64::MAX),
            USER_TOP - max - STACK_GUARD_GAP
        );
        assert!(mmap_top_for_stack(u64::MAX) > PIE_BASE);
        let (mut mem, mut a) = space();
        a.mmap_top = mmap_top_for_stack(big);
        a.add(
            USER_TOP - big,
            STACK_TOP,
            PROT_READ | PROT_WRITE,
            Backing::Anon,
            "[stack]",
        );
        let at = a.place(0, 0x10_0000, false, false).unwrap();
        assert_eq!(at + 0x10_0000 + STACK_GUARD_GAP, USER_TOP - big);
        // The heap stops short of it too.
        a.brk_start = 0x10_0000;
        a.brk = 0x10_0000;
        assert_eq!(a.set_brk(&mut mem, a.mmap_top + PAGE_SIZE), 0x10_0000);
    }

    #[test]
    fn protect_and_unmap() {
        let (mut mem, mut a) = space();
        a.add(
            0x10_0000,
            0x10_4000,
            PROT_READ | PROT_WRITE,
            Backing::Anon,
            "x",
        );
        for p in 0..4 {
            a.populate_page(&mut mem, 0x10_0000 + p * PAGE_SIZE, PROT_READ | PROT_WRITE)
                .unwrap();
        }
        a.protect(&mut mem, 0x10_1000, 0x10_2000, PROT_READ)
            .unwrap();
        assert_eq!(a.vmas.len(), 3);
        assert!(!a.handle_fault(&mut mem, 0x10_1000, true, false).unwrap());
        let used = a.frames.used;
        a.unmap(&mut mem, 0x10_0000, 0x10_2000);
        assert_eq!(a.frames.used, used - 2);
        assert!(a.find(0x10_0000).is_none());
        assert!(a.find(0x10_2000).is_some());
        assert_eq!(
            a.protect(&mut mem, 0x10_0000, 0x10_3000, PROT_READ),
            Err(ENOMEM)
        );
    }
}
