//! The guest process's address space: virtual memory areas, physical frames
//! and the Sv39 page table the harts walk.
//!
//! Anonymous memory is demand-paged: a page gets a frame when first touched,
//! and data frames are handed out in ascending physical order, so pages
//! touched in address order are physically contiguous (rows and banks of the
//! memory model then see what a stride loop intends). Page-table frames come
//! from the top of the region so they never break that contiguity.

use crate::errno::*;
use rvnvmm_mem::sv39::{self, Pte, PAGE_SIZE};
use rvnvmm_mem::PhysMem;
use std::collections::BTreeMap;

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
/// Where top-down mmap allocation starts.
pub const MMAP_TOP: u64 = 0x3f_f000_0000;
/// Load bias of position-independent executables.
pub const PIE_BASE: u64 = 0x2a_aaaa_a000;

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
            f
        } else {
            let f = p.free.pop()?;
            mem.zero(f, PAGE_SIZE);
            f
        };
        self.used += 1;
        Some(f)
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
    pub fn claim(&mut self, base: u64, end: u64) -> Result<(), i64> {
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
    /// Next hint for top-down mmap.
    pub mmap_top: u64,
}

fn page_up(v: u64) -> u64 {
    (v + PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
}

/// A software bit (RSW) marking a PTE whose physical page belongs to a
/// device window, not to a frame pool: unmapping never frees it.
const PTE_DEVICE: u64 = 1 << 8;

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
    pub fn new(mem: &mut PhysMem, base: u64, size: u64) -> Result<AddressSpace, i64> {
        Self::with_pools(mem, &[(base, size)], 0)
    }

    /// An empty address space whose frames come from `pools` (see
    /// [`Frames`]); heap memory from pool `heap_pool`.
    pub fn with_pools(
        mem: &mut PhysMem,
        pools: &[(u64, u64)],
        heap_pool: usize,
    ) -> Result<AddressSpace, i64> {
        let mut frames = Frames::new(pools);
        let root = frames.alloc_table(mem).ok_or(ENOMEM)?;
        Ok(AddressSpace {
            vmas: BTreeMap::new(),
            root,
            frames,
            heap_pool,
            brk_start: 0,
            brk: 0,
            mmap_top: MMAP_TOP,
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
            self.vmas.get_mut(&start).unwrap().end = addr;
            self.vmas.insert(addr, tail);
        }
    }

    /// Adds an area (the range must be free). Pages of an anonymous area are
    /// mapped on first touch.
    pub fn add(&mut self, start: u64, end: u64, prot: u32, backing: Backing, name: &str) {
        self.vmas.insert(
            start,
            Vma {
                end,
                prot,
                backing,
                name: name.to_string(),
                file: None,
            },
        );
    }

    /// Maps one page at `vaddr` to a fresh zeroed frame with the area's
    /// protection. Returns the frame.
    pub fn populate_page(&mut self, mem: &mut PhysMem, vaddr: u64, prot: u32) -> Result<u64, i64> {
        self.populate_page_in(mem, vaddr, prot, 0)
    }

    /// As [`populate_page`](Self::populate_page), with a frame from `pool`.
    pub fn populate_page_in(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        prot: u32,
        pool: usize,
    ) -> Result<u64, i64> {
        let vaddr = vaddr & !(PAGE_SIZE - 1);
        if let Some((_, pte, 0)) = sv39::find_leaf(mem, self.root, vaddr) {
            return Ok(pte.paddr());
        }
        let frame = self.frames.alloc_data(mem, pool).ok_or(ENOMEM)?;
        let frames = &mut self.frames;
        sv39::map_page(
            mem,
            self.root,
            vaddr,
            Pte::leaf(frame, pte_flags(prot)),
            &mut |m| frames.alloc_table(m),
        )
        .ok_or(ENOMEM)?;
        Ok(frame)
    }

    /// Handles a page fault at `vaddr`: maps a zero page if an area allows
    /// the access. Returns false if the access is not allowed (SIGSEGV).
    pub fn handle_fault(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        write: bool,
        exec: bool,
    ) -> Result<bool, i64> {
        let Some((_, vma)) = self.find(vaddr) else {
            return Ok(false);
        };
        let need = if exec {
            PROT_EXEC
        } else if write {
            PROT_WRITE
        } else {
            PROT_READ
        };
        if vma.prot & need == 0 {
            return Ok(false);
        }
        if sv39::find_leaf(mem, self.root, vaddr).is_some() {
            // Mapped yet faulting: a permission the PTE lacks.
            return Ok(false);
        }
        let prot = vma.prot;
        let pool = match vma.backing {
            Backing::Heap => self.heap_pool,
            Backing::Physical { base } => {
                let (start, _) = self.find(vaddr).expect("found above");
                let page = vaddr & !(PAGE_SIZE - 1);
                let pa = base + (page - start);
                let frames = &mut self.frames;
                let pte = Pte::leaf(pa, pte_flags(prot) | PTE_DEVICE);
                sv39::map_page(mem, self.root, page, pte, &mut |m| frames.alloc_table(m))
                    .ok_or(ENOMEM)?;
                return Ok(true);
            }
            _ => 0,
        };
        let Some(file) = vma.file.clone() else {
            self.populate_page_in(mem, vaddr, prot, pool)?;
            return Ok(true);
        };
        use std::os::fd::AsRawFd;
        let (start, _) = self.find(vaddr).expect("found above");
        let page = vaddr & !(PAGE_SIZE - 1);
        let foff = file.offset + (page - start);
        let fd = file.fd.as_raw_fd();
        // SAFETY: fstat on a descriptor we own, into a zeroed stat.
        let size = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) < 0 {
                return Err(EIO);
            }
            st.st_size as u64
        };
        if foff >= size {
            return Err(EFAULT); // past the end of the file: SIGBUS, as on Linux
        }
        let frame = self.populate_page(mem, page, prot)?;
        if file.shared {
            mem.share_file_page(frame, fd, foff, file.writable)
                .map_err(|e| e.raw_os_error().unwrap_or(EIO as i32) as i64)?;
        } else {
            let mut buf = vec![0u8; PAGE_SIZE as usize];
            // SAFETY: buf is writable for its length.
            let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), foff as i64) };
            if n < 0 {
                return Err(EIO);
            }
            mem.write(frame, &buf);
        }
        Ok(true)
    }

    /// Unmaps `[start, end)`: areas are cut and frames released. Returns
    /// whether any executable page was affected.
    pub fn unmap(&mut self, mem: &mut PhysMem, start: u64, end: u64) -> bool {
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.vmas.range(start..end).map(|(&k, _)| k).collect();
        let mut exec = false;
        for k in keys {
            let vma = self.vmas.remove(&k).unwrap();
            exec |= vma.prot & PROT_EXEC != 0;
            let mut va = k;
            while va < vma.end {
                if let Some((pte_addr, pte, 0)) = sv39::find_leaf(mem, self.root, va) {
                    mem.write_u64(pte_addr, 0);
                    if pte.0 & PTE_DEVICE == 0 {
                        self.frames.release(mem, pte.paddr());
                    }
                }
                va += PAGE_SIZE;
            }
        }
        exec
    }

    /// Changes the protection of `[start, end)`. Fails with ENOMEM if part of
    /// the range is unmapped.
    pub fn protect(
        &mut self,
        mem: &mut PhysMem,
        start: u64,
        end: u64,
        prot: u32,
    ) -> Result<(), i64> {
        // The whole range must be mapped.
        let mut a = start;
        while a < end {
            let (_, v) = self.find(a).ok_or(ENOMEM)?;
            if v.file
                .as_ref()
                .is_some_and(|f| f.shared && !f.writable && prot & PROT_WRITE != 0)
            {
                return Err(EACCES);
            }
            a = v.end;
        }
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.vmas.range(start..end).map(|(&k, _)| k).collect();
        for k in keys {
            let vma = self.vmas.get_mut(&k).unwrap();
            vma.prot = prot;
            let vend = vma.end;
            let mut va = k;
            while va < vend {
                if let Some((pte_addr, pte, 0)) = sv39::find_leaf(mem, self.root, va) {
                    // PROT_NONE keeps the frame but drops U, so every user
                    // access faults until the protection is restored.
                    let perms = if prot == 0 { Pte::R } else { pte_flags(prot) };
                    let new = (pte.0 & !0xff) | Pte::V | Pte::A | Pte::D | perms;
                    mem.write_u64(pte_addr, new);
                }
                va += PAGE_SIZE;
            }
        }
        Ok(())
    }

    /// Sets the program break; returns the new break (unchanged on failure,
    /// as Linux does).
    pub fn set_brk(&mut self, mem: &mut PhysMem, new: u64) -> u64 {
        if new < self.brk_start {
            return self.brk;
        }
        let old_end = page_up(self.brk);
        let new_end = page_up(new);
        if new_end > old_end {
            if !self.is_free(old_end, new_end) {
                return self.brk;
            }
            // Grow the heap area (or create it).
            match self.vmas.range_mut(..old_end).next_back() {
                Some((_, v)) if v.end == old_end && v.name == "[heap]" => v.end = new_end,
                _ => self.add(
                    old_end,
                    new_end,
                    PROT_READ | PROT_WRITE,
                    Backing::Heap,
                    "[heap]",
                ),
            }
        } else if new_end < old_end {
            self.unmap(mem, new_end, old_end);
        }
        self.brk = new;
        new
    }

    /// Moves the frames mapped in `[from, from+len)` to `[to, to+len)`
    /// (mremap), leaving the source unmapped.
    pub fn move_pages(
        &mut self,
        mem: &mut PhysMem,
        from: u64,
        to: u64,
        len: u64,
    ) -> Result<(), i64> {
        let mut off = 0;
        while off < len {
            if let Some((pte_addr, pte, 0)) = sv39::find_leaf(mem, self.root, from + off) {
                mem.write_u64(pte_addr, 0);
                let frames = &mut self.frames;
                sv39::map_page(mem, self.root, to + off, pte, &mut |m| {
                    frames.alloc_table(m)
                })
                .ok_or(ENOMEM)?;
            }
            off += PAGE_SIZE;
        }
        Ok(())
    }

    /// Drops the pages of `[start, end)` but keeps the areas: they read as
    /// zero when touched again (MADV_DONTNEED).
    pub fn discard(&mut self, mem: &mut PhysMem, start: u64, end: u64) {
        // File pages are brought in again from the file on the next touch.
        let mut va = start & !(PAGE_SIZE - 1);
        while va < end {
            if let Some((pte_addr, pte, 0)) = sv39::find_leaf(mem, self.root, va) {
                mem.write_u64(pte_addr, 0);
                if pte.0 & PTE_DEVICE == 0 {
                    self.frames.release(mem, pte.paddr());
                }
            }
            va += PAGE_SIZE;
        }
    }

    /// Releases every area (exit or exec).
    pub fn clear(&mut self, mem: &mut PhysMem) {
        self.unmap(mem, 0, USER_TOP);
    }
}

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
