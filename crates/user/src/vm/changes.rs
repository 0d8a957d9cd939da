//! Changes to the mappings: unmapping, protection, the break, placing and
//! moving (`mremap`), discarding (`MADV_DONTNEED`), huge-page advice.
use super::*;
impl AddressSpace {
    /// Unmaps `[start, end)`: areas are cut and frames released. Returns
    /// whether any executable page was affected.
    pub fn unmap(&mut self, mem: &mut PhysMem, start: u64, end: u64) -> bool {
        if start >= end {
            return false;
        }
        // (Without a frame for the table a split needs, a block across an
        // edge stays mapped whole: see `release_pages`.)
        self.split_blocks_across(mem, start, end).ok();
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.vmas.range(start..end).map(|(&k, _)| k).collect();
        let mut exec = false;
        self.translations_stale |= !keys.is_empty();
        for k in keys {
            let vma = self.vmas.remove(&k).unwrap();
            exec |= vma.prot & PROT_EXEC != 0;
            self.release_pages(mem, k, vma.end);
        }
        exec
    }

    /// Unmaps the pages of `[start, end)` and releases their frames. The
    /// caller split the blocks across the edges; one it could not (no
    /// frame for a table) stays mapped rather than free pages still in use.
    pub(crate) fn release_pages(&mut self, mem: &mut PhysMem, start: u64, end: u64) {
        let mut va = start;
        while va < end {
            match sv39::find_leaf(mem, self.root, va) {
                Some((pte_addr, pte, 1)) => {
                    let b = va & !((1 << SHIFT_2M) - 1);
                    if b >= start && b + (1 << SHIFT_2M) <= end {
                        mem.write_u64(pte_addr, 0);
                        let base = pte.paddr();
                        for i in 0..512 {
                            self.frames.release(mem, base + i * PAGE_SIZE);
                        }
                    }
                    va = b + (1 << SHIFT_2M);
                }
                Some((pte_addr, pte, 0)) => {
                    mem.write_u64(pte_addr, 0);
                    if pte.0 & PTE_DEVICE == 0 {
                        self.frames.release(mem, sv39::frame_of(pte, 0, va));
                    }
                    va += PAGE_SIZE;
                }
                _ => va += PAGE_SIZE,
            }
        }
    }

    /// Changes the protection of `[start, end)`, as Linux's mprotect: area
    /// by area from `start`, stopping with `ENOMEM` at the first hole (the
    /// areas before it keep their new protection), or with `EACCES` at a
    /// shared mapping of a file opened read-only asked to become writable.
    pub fn protect(
        &mut self,
        mem: &mut PhysMem,
        start: u64,
        end: u64,
        prot: u32,
    ) -> Result<(), Errno> {
        let mut a = start;
        let mut result = Ok(());
        // Data bytes the change adds so far: as Linux's mprotect_fixup, an
        // area that becomes data must fit under RLIMIT_DATA with the areas
        // before it already changed.
        let mut added: i64 = 0;
        while a < end {
            let Some((_, v)) = self.find(a) else {
                result = Err(ENOMEM);
                break;
            };
            if v.file
                .as_ref()
                .is_some_and(|f| f.shared && !f.writable && prot & PROT_WRITE != 0)
            {
                result = Err(EACCES);
                break;
            }
            let piece = (v.end.min(end) - a) as i64;
            match (v.is_data_with(v.prot), v.is_data_with(prot)) {
                (false, true) => {
                    let more = (added + piece).max(0) as u64;
                    if !self.may_expand_data(more) {
                        result = Err(ENOMEM);
                        break;
                    }
                    added += piece;
                }
                (true, false) => added -= piece,
                _ => {}
            }
            a = v.end;
        }
        let end = a.min(end);
        if end <= start {
            return result;
        }
        // A block the change covers only part of becomes 4 KiB pages
        // first: a block has one protection (seed 004 §5).
        self.split_blocks_across(mem, start, end)?;
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<u64> = self.vmas.range(start..end).map(|(&k, _)| k).collect();
        self.translations_stale = true;
        for k in keys {
            let vma = self.vmas.get_mut(&k).unwrap();
            vma.prot = prot;
            let vend = vma.end;
            let mut va = k;
            while va < vend {
                let leaf = sv39::find_leaf(mem, self.root, va);
                if let Some((pte_addr, pte, _)) = leaf {
                    // PROT_NONE keeps the frame but drops U, so every user
                    // access faults until the protection is restored. (The
                    // Svnapot bit and PPN stay: a whole range changes.)
                    let perms = if prot == 0 { Pte::R } else { pte_flags(prot) };
                    let new = (pte.0 & !0xff) | Pte::V | Pte::A | Pte::D | perms;
                    mem.write_u64(pte_addr, new);
                }
                va = match leaf {
                    Some((_, _, 1)) => (va | ((1 << SHIFT_2M) - 1)) + 1,
                    _ => va + PAGE_SIZE,
                };
            }
        }
        self.merge_around(start, end);
        result
    }

    /// Sets the program break as Linux's brk does, and returns the break
    /// in effect afterwards: the old one when the request is refused (below
    /// the start of the heap, past the user address space, closer than a
    /// page to the next mapping, more than the heap's RAM, or beyond
    /// `RLIMIT_DATA`).
    pub fn set_brk(&mut self, mem: &mut PhysMem, new: u64) -> u64 {
        if new < self.brk_start || new > self.mmap_top {
            return self.brk;
        }
        // Linux's check_data_rlimit, on every request (a shrink to a break
        // still beyond the limit too): heap plus initialised data.
        let soft = self.data_rlimit.0;
        if soft != u64::MAX && (new - self.brk_start).saturating_add(self.data_segment) > soft {
            return self.brk;
        }
        let old_end = page_up(self.brk);
        let new_end = page_up(new);
        if new_end > old_end {
            // Linux leaves at least a page between the heap and the next
            // mapping.
            if !self.is_free(old_end, new_end + PAGE_SIZE)
                || !self.may_commit(new_end - old_end, self.heap_pool)
                || !self.may_expand_data(new_end - old_end)
            {
                return self.brk;
            }
            // A new area, which joins the one below if that is
            // anonymous read-write memory too.
            self.add(
                old_end,
                new_end,
                PROT_READ | PROT_WRITE,
                Backing::Heap,
                "[heap]",
            );
            self.merge_around(old_end, new_end);
        } else if new_end < old_end {
            self.unmap(mem, new_end, old_end);
        }
        self.brk = new;
        new
    }

    /// Where an `mmap` of `len` bytes (page-aligned, non-zero) goes: at
    /// `addr` for `MAP_FIXED` (replacing what is there) or
    /// `MAP_FIXED_NOREPLACE` (`EEXIST` if anything is), at the hint `addr`
    /// if that range is free, else in the highest free gap below the mmap
    /// top. Fixed addresses below 64 KiB are refused as Linux's
    /// `mmap_min_addr` does (`EPERM`).
    pub fn place(&self, addr: u64, len: u64, fixed: bool, noreplace: bool) -> Result<u64, Errno> {
        const MIN_ADDR: u64 = 0x10000;
        let end = addr.checked_add(len).filter(|&e| e <= USER_TOP);
        if fixed || noreplace {
            if addr & (PAGE_SIZE - 1) != 0 {
                return Err(EINVAL);
            }
            let end = end.ok_or(ENOMEM)?;
            if addr < MIN_ADDR {
                return Err(EPERM);
            }
            if noreplace && !self.is_free(addr, end) {
                return Err(EEXIST);
            }
            return Ok(addr);
        }
        let hint_free = end.is_some_and(|e| e <= self.mmap_top && self.is_free(addr, e));
        if addr != 0 && addr & (PAGE_SIZE - 1) == 0 && addr >= MIN_ADDR && hint_free {
            return Ok(addr);
        }
        self.find_free(len).ok_or(ENOMEM)
    }

    /// mremap of `[old, old + old_len)` to `new_len` bytes (all page
    /// multiples; `old_len` > 0), as Linux does for private and file
    /// mappings: shrink in place, grow in place if the area ends there and
    /// the pages above are free, else move (`MREMAP_MAYMOVE`) to `fixed` or
    /// a free range, keeping the contents and the protection. With
    /// `dont_unmap` the old range stays mapped, empty. Returns the new
    /// address; the caller flushes decoded code if it was executable.
    pub fn remap(
        &mut self,
        mem: &mut PhysMem,
        old: u64,
        old_len: u64,
        new_len: u64,
        how: RemapFlags,
    ) -> Result<u64, Errno> {
        let RemapFlags {
            may_move,
            fixed,
            dont_unmap,
        } = how;
        // Shrinking in place needs only `old` mapped: it is an unmap of
        // the tail, whatever areas that spans.
        if self.find(old).is_none() {
            return Err(EFAULT);
        }
        if fixed.is_none() && !dont_unmap && new_len <= old_len {
            let end = old.checked_add(old_len).ok_or(EINVAL)?;
            self.unmap(mem, old + new_len, end);
            return Ok(old);
        }
        let mut old_len = old_len;
        let mut old_end = old.checked_add(old_len).ok_or(EINVAL)?;
        if let Some(to) = fixed {
            let to_end = to
                .checked_add(new_len)
                .filter(|&e| e <= USER_TOP)
                .ok_or(EINVAL)?;
            if to & (PAGE_SIZE - 1) != 0 || (to < old_end && old < to_end) {
                return Err(EINVAL);
            }
            // Linux clears the target, and drops the tail a shrink loses,
            // before it looks at the old area.
            self.unmap(mem, to, to_end);
            if old_len > new_len {
                self.unmap(mem, old + new_len, old_end);
                old_len = new_len;
                old_end = old + new_len;
            }
        }
        let (vstart, vma) = self.find(old).map(|(s, v)| (s, v.clone())).ok_or(EFAULT)?;
        if old_end > vma.end {
            return Err(EFAULT);
        }
        let physical = matches!(vma.backing, Backing::Physical { .. });
        if physical && new_len > old_len {
            // A window on a device cannot be widened (VM_PFNMAP).
            return Err(EFAULT);
        }
        let accounted = vma.file.is_none()
            || (vma.prot & PROT_WRITE != 0 && !vma.file.as_ref().is_some_and(|f| f.shared));
        let pool = self.pool_of(&vma.backing);
        if new_len > old_len && accounted && !self.may_commit(new_len - old_len, pool) {
            return Err(ENOMEM);
        }
        // RLIMIT_DATA counts the growth, or with dont_unmap the copy, as
        // Linux's vma_to_resize does.
        let added = if dont_unmap {
            old_len
        } else {
            new_len.saturating_sub(old_len)
        };
        if added > 0 && vma.is_data_with(vma.prot) && !self.may_expand_data(added) {
            return Err(ENOMEM);
        }
        if fixed.is_none() && !dont_unmap {
            let grow_end = old.checked_add(new_len).filter(|&e| e <= USER_TOP);
            if let Some(grow_end) = grow_end {
                if old_end == vma.end && self.is_free(old_end, grow_end) {
                    self.vmas.get_mut(&vstart).unwrap().end = grow_end;
                    self.merge_around(vstart, grow_end);
                    return Ok(old);
                }
            }
        }
        if !may_move {
            return Err(ENOMEM);
        }
        let new = match fixed {
            Some(to) => to,
            None => self.find_free(new_len).ok_or(ENOMEM)?,
        };
        let moved = old_len.min(new_len);
        let mut area = vma.clone();
        area.end = new + new_len;
        if area.anon_from != u64::MAX {
            area.anon_from = new + vma.anon_from.saturating_sub(old);
        }
        if let Some(f) = &mut area.file {
            f.offset += old - vstart;
        }
        if let Backing::Physical { base } = &mut area.backing {
            *base += old - vstart;
        }
        self.vmas.insert(new, area);
        self.move_pages(mem, old, new, moved)?;
        if !dont_unmap {
            self.unmap(mem, old, old_end);
        }
        // (With dont_unmap the old range stays, its pages gone: it reads
        // as zero, or the file, again.)
        self.merge_around(new, new + new_len);
        Ok(new)
    }

    /// Moves the frames mapped in `[from, from+len)` to `[to, to+len)`
    /// (mremap), leaving the source unmapped.
    pub fn move_pages(
        &mut self,
        mem: &mut PhysMem,
        from: u64,
        to: u64,
        len: u64,
    ) -> Result<(), Errno> {
        self.translations_stale = true;
        // Pages move one by one: the blocks there become 4 KiB pages.
        self.split_blocks_in(mem, from, from + len)?;
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
        self.translations_stale = true;
        // File pages are brought in again from the file on the next touch.
        let start = start & !(PAGE_SIZE - 1);
        self.split_blocks_across(mem, start, end).ok();
        self.release_pages(mem, start, end);
    }

    /// `madvise(MADV_HUGEPAGE / MADV_NOHUGEPAGE)` over `[start, end)`:
    /// records the advice in the areas there (splitting them at the
    /// edges); `ENOMEM` if part of the range is not mapped, as Linux (the
    /// mapped part still takes the advice). Blocks mapped already stay,
    /// as Linux leaves its huge pages.
    pub fn advise_huge(&mut self, start: u64, end: u64, advice: HugeAdvice) -> Result<(), Errno> {
        let mut hole = false;
        let mut a = start;
        while a < end {
            match self.find(a) {
                Some((_, v)) => a = v.end,
                None => {
                    hole = true;
                    a = self.vmas.range(a..).next().map_or(end, |(&k, _)| k);
                }
            }
        }
        self.split_at(start);
        self.split_at(end);
        for v in self.vmas.range_mut(start..end).map(|(_, v)| v) {
            v.huge = advice;
        }
        self.merge_around(start, end);
        if hole {
            Err(ENOMEM)
        } else {
            Ok(())
        }
    }

    /// Releases every area (exit or exec).
    pub fn clear(&mut self, mem: &mut PhysMem) {
        self.unmap(mem, 0, USER_TOP);
    }
}
