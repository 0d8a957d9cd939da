//! Page faults and page sizes: the block a fault maps (4 KiB, 64 KiB,
//! 2 MiB, 1 GiB as `user.pages` allows), splitting blocks that a change
//! covers only in part, and the mappings by size.
use super::*;
use crate::numa::Policy;
impl AddressSpace {
    /// Log2 of the size of the block a fault at `vaddr` maps under the page
    /// policy, if larger than 4 KiB: one wholly inside the anonymous part
    /// of its area (so it never maps a page the area does not own). `thp`
    /// maps 2 MiB at the first touch of such a range, as Linux's THP with
    /// `enabled=always` does at fault time (what khugepaged would collapse
    /// later is mapped at once here: no copy, and no program sees the
    /// difference but in its TLB). `hint` maps the area's recorded size, or
    /// 64 KiB where a 2 MiB block would not fit (the area's edges).
    pub(crate) fn block_shift(&self, vaddr: u64) -> Option<u32> {
        let (start, v) = self.find(vaddr)?;
        if v.file.is_some() || v.huge == HugeAdvice::NoHuge {
            return None;
        }
        let lo = v.anon_from.max(start);
        let sizes: &[u32] = match (self.pages, v.hint) {
            (PagePolicy::Base, _) => &[],
            (PagePolicy::Thp, _) => &[SHIFT_2M],
            (PagePolicy::Hint, SHIFT_2M) => &[SHIFT_2M, SHIFT_64K],
            (PagePolicy::Hint, SHIFT_64K) => &[SHIFT_64K],
            (PagePolicy::Hint, _) => &[],
        };
        sizes.iter().copied().find(|&shift| {
            let b = vaddr & !((1u64 << shift) - 1);
            b >= lo && b.checked_add(1 << shift).is_some_and(|e| e <= v.end)
        })
    }

    /// Maps the block of `1 << shift` bytes holding `vaddr` to a fresh,
    /// equally aligned physical block from `pool`: a megapage, or the 16
    /// entries of a Svnapot range. False (nothing done) when part of the
    /// range is mapped already or the pool has no aligned block left.
    pub(crate) fn map_block(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        shift: u32,
        prot: u32,
        pool: usize,
    ) -> Result<bool, Errno> {
        let base = vaddr & !((1u64 << shift) - 1);
        let level = u32::from(shift == SHIFT_2M);
        let frames = &mut self.frames;
        let Some(entry) =
            sv39::entry_at(mem, self.root, base, level, &mut |m| frames.alloc_table(m))
        else {
            return Ok(false);
        };
        let entries = if level == 1 { 1 } else { 16 };
        let mut empty_table = None;
        for i in 0..entries {
            let cur = Pte(mem.read_u64(entry + i * 8).ok_or(ENOMEM)?);
            if !cur.valid() {
                continue;
            }
            // A megapage may replace a table that maps nothing yet.
            let table = cur.paddr();
            let unused = level == 1
                && !cur.is_leaf()
                && (0..512).all(|j| mem.read_u64(table + j * 8).is_some_and(|p| p & Pte::V == 0));
            if !unused {
                return Ok(false);
            }
            empty_table = Some(table);
        }
        let Some(block) = self.frames.alloc_block(mem, pool, shift) else {
            return Ok(false);
        };
        let flags = pte_flags(prot);
        if level == 1 {
            mem.write_u64(entry, Pte::leaf(block, flags).0);
            if let Some(t) = empty_table {
                self.frames.release(mem, t);
            }
            self.page_stats.mapped[1] += 1;
        } else {
            let leaf = sv39::napot_leaf(block, flags);
            for i in 0..16 {
                mem.write_u64(entry + i * 8, leaf.0);
            }
            self.page_stats.mapped[0] += 1;
        }
        Ok(true)
    }

    /// Splits the block mapping `vaddr`, if any, into 4 KiB pages with the
    /// same frames and protection (seed 004 §5's downgrade); `partial`
    /// counts it as a demotion. The caller drops cached translations.
    pub(crate) fn split_block(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        partial: bool,
    ) -> Result<(), Errno> {
        let Some((entry, pte, level)) = sv39::find_leaf(mem, self.root, vaddr) else {
            return Ok(());
        };
        let flags = pte.0 & (0xff | PTE_DEVICE);
        if level == 1 {
            let table = self.frames.alloc_table(mem).ok_or(ENOMEM)?;
            let base = pte.paddr();
            for i in 0..512 {
                mem.write_u64(table + i * 8, Pte::leaf(base + i * PAGE_SIZE, flags).0);
            }
            mem.write_u64(entry, Pte::leaf(table, 0).0 & !(Pte::R | Pte::W | Pte::X));
            self.page_stats.demoted[1] += u64::from(partial);
        } else if level == 0 && pte.0 & Pte::N != 0 {
            let first = entry & !(16 * 8 - 1);
            let base = pte.paddr() & !0xffff;
            for i in 0..16 {
                let cur = mem.read_u64(first + i * 8).unwrap_or(0);
                // Each entry keeps its own A/D bits.
                let keep = cur & (Pte::A | Pte::D);
                mem.write_u64(
                    first + i * 8,
                    Pte::leaf(base + i * PAGE_SIZE, (flags & !(Pte::A | Pte::D)) | keep).0,
                );
            }
            self.page_stats.demoted[0] += u64::from(partial);
        } else {
            return Ok(());
        }
        self.translations_stale = true;
        Ok(())
    }

    /// Splits every block that maps part of `[start, end)`, so the range
    /// can be changed page by page; blocks not wholly inside it count as
    /// demoted.
    pub(crate) fn split_blocks_in(
        &mut self,
        mem: &mut PhysMem,
        start: u64,
        end: u64,
    ) -> Result<(), Errno> {
        if self.pages == PagePolicy::Base {
            return Ok(()); // nothing but 4 KiB pages
        }
        let mut va = start & !(PAGE_SIZE - 1);
        while va < end {
            match sv39::find_leaf(mem, self.root, va) {
                Some((_, pte, level)) if level == 1 || pte.0 & Pte::N != 0 => {
                    let shift = if level == 1 { SHIFT_2M } else { SHIFT_64K };
                    let b = va & !((1u64 << shift) - 1);
                    let partial = b < start || b + (1 << shift) > end;
                    self.split_block(mem, va, partial)?;
                    va = b + (1 << shift);
                }
                Some(_) => va += PAGE_SIZE,
                None => va += PAGE_SIZE,
            }
        }
        Ok(())
    }

    /// Splits the blocks that straddle `start` or `end`: what a change of
    /// `[start, end)` touches only part of.
    pub(crate) fn split_blocks_across(
        &mut self,
        mem: &mut PhysMem,
        start: u64,
        end: u64,
    ) -> Result<(), Errno> {
        if self.pages == PagePolicy::Base {
            return Ok(());
        }
        for at in [start, end] {
            if at & ((1 << SHIFT_2M) - 1) != 0 {
                if let Some((_, _, 1)) = sv39::find_leaf(mem, self.root, at) {
                    self.split_block(mem, at, true)?;
                }
            }
            if at & ((1 << SHIFT_64K) - 1) != 0 {
                if let Some((_, pte, 0)) = sv39::find_leaf(mem, self.root, at) {
                    if pte.0 & Pte::N != 0 {
                        self.split_block(mem, at, true)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// How many mappings of each size (4 KiB, 64 KiB, 2 MiB, 1 GiB) the
    /// page table holds: leaves, a Svnapot range counting once.
    pub fn mappings_by_size(&self, mem: &PhysMem) -> [u64; 4] {
        fn walk(mem: &PhysMem, table: u64, level: u32, out: &mut [u64; 4]) {
            for i in 0..512 {
                let Some(pte) = mem.read_u64(table + i * 8).map(Pte) else {
                    continue;
                };
                if !pte.valid() {
                    continue;
                }
                if level == 0 {
                    // 16 entries per range: count its first.
                    if pte.0 & Pte::N == 0 {
                        out[0] += 1;
                    } else if i % 16 == 0 {
                        out[1] += 1;
                    }
                } else if pte.is_leaf() {
                    out[level as usize + 1] += 1;
                } else {
                    walk(mem, pte.paddr(), level - 1, out);
                }
            }
        }
        let mut out = [0; 4];
        walk(mem, self.root, 2, &mut out);
        out
    }

    /// Maps one page at `vaddr` to a fresh zeroed frame with the area's
    /// protection. Returns the frame.
    pub fn populate_page(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        prot: u32,
    ) -> Result<u64, Errno> {
        self.populate_page_in(mem, vaddr, prot, 0)
    }

    /// As [`populate_page`](Self::populate_page), with a frame from `pool`.
    pub fn populate_page_in(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        prot: u32,
        pool: usize,
    ) -> Result<u64, Errno> {
        self.populate_page_from(mem, vaddr, prot, &[pool])
    }

    /// As [`populate_page`](Self::populate_page), with a frame from the
    /// first of `pools` that has one.
    pub(crate) fn populate_page_from(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        prot: u32,
        pools: &[usize],
    ) -> Result<u64, Errno> {
        let vaddr = vaddr & !(PAGE_SIZE - 1);
        if let Some((_, pte, level)) = sv39::find_leaf(mem, self.root, vaddr) {
            return Ok(sv39::frame_of(pte, level, vaddr));
        }
        let frame = pools
            .iter()
            .find_map(|&pool| self.frames.alloc_data(mem, pool))
            .ok_or(ENOMEM)?;
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

    /// The policy that places a fresh page of the area at `vaddr`: the
    /// area's, else the thread's (`task`).
    pub fn policy_at(&self, vaddr: u64, task: Option<&Policy>) -> Option<Policy> {
        self.find(vaddr)
            .and_then(|(_, v)| v.policy)
            .or(task.copied())
    }

    /// The pools a fresh block of `1 << shift` bytes at `vaddr` may come
    /// from, in order, under `policy`, for an area whose default pool is
    /// `default_pool`; with what the placement meant, for the counters.
    fn placement(
        &self,
        vaddr: u64,
        shift: u32,
        policy: Option<&Policy>,
        default_pool: usize,
    ) -> (Vec<usize>, u32, bool) {
        // Linux's interleave index of an anonymous page: its page number
        // at the folio's order.
        self.numa.placement(policy, default_pool, vaddr >> shift)
    }

    /// Counts `pages` frames from `frame` on, handed out for a placement
    /// that meant node `meant`.
    fn count_placed(&mut self, frame: u64, pages: u64, meant: u32, interleaved: bool) {
        if let Some(pool) = self.frames.pool_of_frame(frame) {
            let got = self.numa.node_of_pool(pool);
            self.numa.count_allocation(got, meant, interleaved, pages);
        }
    }

    /// Handles a page fault at `vaddr`: maps a zero page if an area allows
    /// the access. Returns false if the access is not allowed (SIGSEGV).
    pub fn handle_fault(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        write: bool,
        exec: bool,
    ) -> Result<bool, Errno> {
        self.handle_fault_for(mem, vaddr, write, exec, None)
    }

    /// As [`handle_fault`](Self::handle_fault), for a thread whose own
    /// NUMA policy is `task`.
    pub fn handle_fault_for(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        write: bool,
        exec: bool,
        task: Option<&Policy>,
    ) -> Result<bool, Errno> {
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
        let policy = vma.policy.or(task.copied());
        let Some(file) = vma.file.clone() else {
            if let Some(shift) = self.block_shift(vaddr) {
                let (pools, meant, interleaved) =
                    self.placement(vaddr, shift, policy.as_ref(), pool);
                if self.map_block(mem, vaddr, shift, prot, pools[0])? {
                    if let Some((_, pte, level)) = sv39::find_leaf(mem, self.root, vaddr) {
                        let frame = sv39::frame_of(pte, level, vaddr);
                        self.count_placed(frame, 1 << (shift - SHIFT_4K), meant, interleaved);
                    }
                    return Ok(true);
                }
                self.page_stats.fallbacks += 1;
            }
            let (pools, meant, interleaved) =
                self.placement(vaddr, SHIFT_4K, policy.as_ref(), pool);
            let frame = self.populate_page_from(mem, vaddr, prot, &pools)?;
            self.count_placed(frame, 1, meant, interleaved);
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
        let (pools, meant, interleaved) = self.placement(vaddr, SHIFT_4K, policy.as_ref(), 0);
        let frame = self.populate_page_from(mem, page, prot, &pools)?;
        self.count_placed(frame, 1, meant, interleaved);
        if file.shared {
            mem.share_file_page(frame, fd, foff, file.writable)
                .map_err(Errno::from)?;
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
}
