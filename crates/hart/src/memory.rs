//! Data and instruction access through the software TLB.

use crate::privileged::mstatus;
use crate::{DataAccess, DataKind, Env, Hart, Priv, TimingModel, Trap};
use rvnvmm_mem::sv39::{self, Access, Fault, Requester};
use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_SIZE};
use rvnvmm_mem::PhysMem;
use rvnvmm_timing::{PageRange, TlbFill, TlbLookup, TlbPort};

impl Hart {
    /// Translates `vaddr` for `access`, raising the matching page or access
    /// fault. Loads and stores use the data privilege (MPRV), fetches the
    /// current one; M-mode and Bare are untranslated.
    pub fn translate(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        access: Access,
    ) -> Result<u64, Trap> {
        self.walk(mem, vaddr, access, &mut PteReads::default())
            .map(|(paddr, _)| paddr)
    }

    /// As [`translate`](Self::translate) for a walk the hart's MMU makes
    /// (a TLB refill, or a translation the TLB does not keep): the walk's PTE
    /// reads are presented to the timing model (which may stall the hart
    /// for them), at `now` cycles into the current block.
    pub(crate) fn walk_timed<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        access: Access,
        now: u64,
    ) -> Result<(u64, u32), Trap> {
        let mut ptes = PteReads::default();
        let result = self.walk(env.mem, vaddr, access, &mut ptes);
        self.time_translation(env, vaddr, access, &ptes, &result, now);
        result
    }

    /// Presents a translation the hart's MMU made to the timing model: a
    /// model with TLBs is asked whether they hold it, and only on a miss
    /// sees the walk's PTE reads and what it found; pages its L1 TLBs
    /// gave up for it leave the software TLB. A model without TLBs sees
    /// the PTE reads. Untranslated accesses (no PTE read) use no TLB.
    fn time_translation<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        access: Access,
        ptes: &PteReads,
        result: &Result<(u64, u32), Trap>,
        now: u64,
    ) {
        let Some(t) = env.timing.as_deref_mut() else {
            return;
        };
        if ptes.len == 0 {
            return;
        }
        let core = self.core.id;
        let port = if access == Access::Exec {
            TlbPort::Fetch
        } else {
            TlbPort::Data
        };
        let asid = (self.csrs.satp >> 44) as u16;
        let evicted = match t.tlb_lookup(core, port, vaddr, asid, self.core.cycles + now) {
            TlbLookup::Untracked => {
                for &pa in &ptes.addrs[..ptes.len] {
                    let stall = t.page_walk_read(core, pa, self.core.cycles + now);
                    self.core.cycles += stall;
                    self.stats.memory_stall_cycles += stall;
                }
                return;
            }
            TlbLookup::Hit { stall, evicted } => {
                self.core.cycles += stall;
                self.stats.memory_stall_cycles += stall;
                evicted
            }
            TlbLookup::Miss => {
                for &pa in &ptes.addrs[..ptes.len] {
                    let stall = t.page_walk_read(core, pa, self.core.cycles + now);
                    self.core.cycles += stall;
                    self.stats.memory_stall_cycles += stall;
                }
                let fill = result.as_ref().ok().map(|&(_, page_shift)| TlbFill {
                    vaddr,
                    page_shift,
                    global: ptes.global,
                });
                t.tlb_fill(core, port, asid, fill)
            }
        };
        if let Some(page) = evicted {
            self.drop_model_evicted(port, page);
        }
        self.tlb_sync = Some((core, t.tlb_epoch(core)));
    }

    /// A page left the model's L1 TLB for `port`: it leaves the software
    /// TLBs of that kind in every context.
    fn drop_model_evicted(&mut self, port: TlbPort, page: PageRange) {
        let drop = |t: &mut crate::tlb::Tlb| match port {
            TlbPort::Fetch => t.exec.flush_range(page.vbase, page.page_shift),
            TlbPort::Data => {
                t.read.flush_range(page.vbase, page.page_shift);
                t.write.flush_range(page.vbase, page.page_shift);
            }
        };
        drop(&mut self.tlb);
        for t in self.tlb_contexts.saved_mut() {
            drop(t);
        }
    }

    /// As [`translate`](Self::translate), also giving log2 of the size of
    /// the page that mapped `vaddr`; records the PTEs the walk read in
    /// `ptes`, a faulting walk's too.
    fn walk(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        access: Access,
        ptes: &mut PteReads,
    ) -> Result<(u64, u32), Trap> {
        let Some(root) = self.page_table else {
            return Ok((vaddr, 12));
        };
        let prv = self.access_prv(access);
        if prv == Priv::Machine {
            return Ok((vaddr, 12));
        }
        self.stats.tlb_refills += 1;
        let ms = self.csrs.mstatus;
        let who = Requester {
            user: prv == Priv::User,
            sum: ms & mstatus::SUM != 0,
            mxr: ms & mstatus::MXR != 0,
        };
        // The walker's own accesses are S-mode accesses for PMP.
        let (pmp, full) = (&self.pmp, self.full_system);
        let mut pte_ok = |pa: u64, write: bool| {
            if !write && ptes.len < ptes.addrs.len() {
                ptes.addrs[ptes.len] = pa;
                ptes.len += 1;
            }
            let a = if write { Access::Write } else { Access::Read };
            !full || pmp.check(pa, 8, a, Priv::Supervisor)
        };
        let result = sv39::translate_with(mem, root, vaddr, access, who, &mut pte_ok);
        if let Ok(t) = &result {
            ptes.global = t.flags & sv39::Pte::G != 0;
        }
        result.map(|t| (t.paddr, t.page_shift)).map_err(|f| {
            let cause = match (f, access) {
                (Fault::Page, Access::Read) => Trap::LOAD_PAGE_FAULT,
                (Fault::Page, Access::Write) => Trap::STORE_PAGE_FAULT,
                (Fault::Page, Access::Exec) => Trap::INSN_PAGE_FAULT,
                (Fault::Access, _) => Self::access_fault(access, vaddr).cause,
            };
            Trap::new(cause, vaddr)
        })
    }

    /// The privilege an access is made with.
    #[inline]
    fn access_prv(&self, access: Access) -> Priv {
        if access == Access::Exec {
            self.prv
        } else {
            self.data_prv()
        }
    }

    /// Whether PMP lets `len` bytes at `paddr` be accessed (always, in
    /// user-mode emulation).
    pub(crate) fn pmp_allows(&self, paddr: u64, len: u64, access: Access) -> bool {
        !self.full_system || self.pmp.check(paddr, len, access, self.access_prv(access))
    }

    fn access_fault(access: Access, vaddr: u64) -> Trap {
        let cause = match access {
            Access::Read => Trap::LOAD_ACCESS,
            Access::Write => Trap::STORE_ACCESS,
            Access::Exec => Trap::INSN_ACCESS,
        };
        Trap::new(cause, vaddr)
    }

    /// Host address of the page holding `vaddr`, refilling the TLB for
    /// `access`. Returns the host pointer and the physical address of
    /// `vaddr` itself; an access fault if the page is not RAM or PMP denies
    /// the `size` bytes there. A page PMP does not treat as a whole is not
    /// cached, so each access to it comes back here.
    pub(crate) fn refill<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        access: Access,
        now: u64,
    ) -> Result<(*mut u8, u64), Trap> {
        let (paddr, shift) = self.walk_timed(env, vaddr, access, now)?;
        let ppage = page_base(paddr);
        let host = env
            .mem
            .host_ptr(ppage, PAGE_SIZE)
            .ok_or_else(|| Self::access_fault(access, vaddr))?;
        let cache = self.pmp_allows(ppage, PAGE_SIZE, access);
        if !cache && !self.pmp_allows(paddr, size, access) {
            return Err(Self::access_fault(access, vaddr));
        }
        match access {
            Access::Read if cache => self.tlb.read.fill_sized(vaddr, host, ppage, shift),
            Access::Exec if cache => self.tlb.exec.fill_sized(vaddr, host, ppage, shift),
            Access::Write => {
                if env.code.pages.contains(ppage) {
                    // Keep code pages out of the write TLB so every store to
                    // them comes here and invalidates the decoded blocks.
                    env.code.pages.code_written(ppage);
                    self.stop_block = true;
                } else if cache && !env.mem.traces_stores_to(ppage) {
                    // (NVMM pages stay out while a persistence trace is
                    // recorded: every store to them is seen.)
                    self.tlb.write.fill_sized(vaddr, host, ppage, shift);
                }
            }
            _ => {}
        }
        Ok((host.wrapping_add(page_offset(vaddr) as usize), paddr))
    }

    /// Before a device access: devices see the current time, and the hart
    /// looks at its interrupt lines at the end of the block.
    fn before_mmio(&mut self, now: u64) {
        self.publish_time(self.core.cycles + now);
        self.event_at = 0;
    }

    /// Charges the memory-system model for a data access at `paddr`, made
    /// `now` cycles into the current block: an L1 hit known to the filter
    /// costs nothing beyond the core model; anything else stalls the hart.
    /// Stops (`Trap::SYNC_STOP`) instead when the access would leave the
    /// private L1 after the sync limit.
    #[inline(always)]
    fn time_data<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        paddr: u64,
        size: u64,
        kind: DataKind,
        now: u64,
    ) -> Result<(), Trap> {
        if let Some(t) = env.timing.as_deref_mut() {
            let core = self.core.id;
            let write = kind.needs_exclusive();
            let at = self.core.cycles + now;
            // Atomics on a line other harts hold or have written wait for
            // them without the tolerance: each is a point where harts hand
            // the line over, and a hart let run ahead would take several
            // turns of it in one. On a line private to the core (per-hart
            // data, an uncontended lock, or a lock no other hart has asked
            // for yet) they may run `ATOMIC_RUN_AHEAD` cycles further.
            if kind.is_atomic() {
                let others = self.core.sync_limit.saturating_sub(crate::SYNC_TOLERANCE);
                if at > others
                    && (at > others.saturating_add(crate::ATOMIC_RUN_AHEAD)
                        || !t.data_private_hit(core, paddr, write))
                {
                    return Err(Trap::new(Trap::SYNC_STOP, 0));
                }
            }
            if !t.data_filter_hit(core, paddr, write) {
                if at > self.core.sync_limit && !t.data_private_hit(core, paddr, write) {
                    return Err(Trap::new(Trap::SYNC_STOP, 0));
                }
                let access = DataAccess { paddr, size, kind };
                let stall = t.data_access(core, access, at);
                self.core.cycles += stall;
                self.stats.memory_stall_cycles += stall;
                if env.mem.tracks_persistence() {
                    // Lines the access evicted to memory are persistent
                    // (ADR) with the contents they have now.
                    t.take_write_backs(&mut |a| env.mem.persist_write_back(a));
                }
                if kind.is_atomic() {
                    self.stats.atomics.stall_cycles += stall;
                }
            }
        }
        Ok(())
    }

    /// As [`time_data`](Self::time_data) for an access that may cross data
    /// lines (a misaligned one within a page): once per line it touches.
    fn time_data_lines<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        paddr: u64,
        size: u64,
        kind: DataKind,
        now: u64,
    ) -> Result<(), Trap> {
        let Some(shift) = env.timing.as_deref().map(|t| t.data_line_shift()) else {
            return Ok(());
        };
        let end = paddr + size;
        let mut at = paddr;
        while at < end {
            let line_end = ((at >> shift) + 1) << shift;
            let n = line_end.min(end) - at;
            self.time_data(env, at, n, kind, now)?;
            at += n;
        }
        Ok(())
    }

    /// For an access that crosses a page, done byte by byte: the byte at
    /// `paddr` (`first`: the access's first) with `left` bytes of the access
    /// from it on. A byte that starts the access or a data line presents the
    /// bytes up to the line's end (or the access's) to the model; a line
    /// never crosses a page, so those bytes are physically contiguous.
    fn time_data_piece<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        paddr: u64,
        left: u64,
        first: bool,
        kind: DataKind,
        now: u64,
    ) -> Result<(), Trap> {
        let Some(shift) = env.timing.as_deref().map(|t| t.data_line_shift()) else {
            return Ok(());
        };
        let within = paddr & ((1 << shift) - 1);
        if first || within == 0 {
            let n = left.min((1 << shift) - within);
            self.time_data(env, paddr, n, kind, now)?;
        }
        Ok(())
    }

    /// Loads `size` (1, 2, 4 or 8) bytes, zero-extended; `now` is the
    /// cycle offset into the current block.
    #[inline(always)]
    pub(crate) fn load<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        now: u64,
    ) -> Result<u64, Trap> {
        if let Some((p, paddr)) = self.tlb.read.lookup_paddr(vaddr, size) {
            self.time_data(env, paddr, size, DataKind::Load, now)?;
            // SAFETY: the TLB only holds pages of live guest RAM and the
            // access is naturally aligned inside the page.
            return Ok(unsafe { read_le(p, size) });
        }
        self.load_slow(env, vaddr, size, now)
    }

    #[inline(never)]
    fn load_slow<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        now: u64,
    ) -> Result<u64, Trap> {
        if page_offset(vaddr) + size <= PAGE_SIZE {
            // A page that is RAM is walked again by the refill below, which
            // is the walk the hardware makes; only a device page's walk is
            // this one.
            let mut ptes = PteReads::default();
            let walked = self.walk(env.mem, vaddr, Access::Read, &mut ptes);
            let ram = walked.is_ok_and(|(pa, _)| env.mem.is_ram(page_base(pa), PAGE_SIZE));
            if !ram {
                self.time_translation(env, vaddr, Access::Read, &ptes, &walked, now);
            }
            let paddr = walked?.0;
            if !ram {
                if !self.pmp_allows(paddr, size, Access::Read) {
                    return Err(Trap::new(Trap::LOAD_ACCESS, vaddr));
                }
                self.before_mmio(now);
                return match env.mmio.as_deref_mut() {
                    Some(dev) if vaddr & (size - 1) == 0 => dev
                        .load(
                            paddr,
                            size,
                            env.timing.as_deref_mut().and_then(|t| t.control_port()),
                        )
                        .ok_or(Trap::new(Trap::LOAD_ACCESS, vaddr)),
                    _ => Err(Trap::new(Trap::LOAD_ACCESS, vaddr)),
                };
            }
            let (p, paddr) = self.refill(env, vaddr, size, Access::Read, now)?;
            self.time_data_lines(env, paddr, size, DataKind::Load, now)?;
            // SAFETY: refill returned a pointer into a 4 KiB RAM page and the
            // access does not cross its end.
            return Ok(unsafe { read_le(p, size) });
        }
        // Crosses a page: byte by byte, so each page is checked.
        let mut v = 0u64;
        for i in 0..size {
            let (p, paddr) = self.refill(env, vaddr.wrapping_add(i), 1, Access::Read, now)?;
            self.time_data_piece(env, paddr, size - i, i == 0, DataKind::Load, now)?;
            // SAFETY: as above, one byte.
            v |= (unsafe { *p } as u64) << (8 * i);
        }
        Ok(v)
    }

    /// `lr`: loads `size` (4 or 8) aligned bytes and times the access as
    /// the start of a reservation. Only RAM can be reserved: a device page
    /// gives a load access fault.
    pub(crate) fn load_reserved<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        now: u64,
    ) -> Result<u64, Trap> {
        let (p, paddr) = match self.tlb.read.lookup_paddr(vaddr, size) {
            Some(hit) => hit,
            None => self.refill(env, vaddr, size, Access::Read, now)?,
        };
        self.time_data(env, paddr, size, DataKind::LoadReserved, now)?;
        // SAFETY: the TLB and `refill` only give pointers into live 4 KiB
        // RAM pages, and the caller checked the access is aligned.
        Ok(unsafe { read_le(p, size) })
    }

    /// Stores the low `size` bytes of `value`.
    #[inline(always)]
    pub(crate) fn store<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        value: u64,
        now: u64,
    ) -> Result<(), Trap> {
        if let Some((p, paddr)) = self.tlb.write.lookup_paddr(vaddr, size) {
            self.time_data(env, paddr, size, DataKind::Store, now)?;
            // SAFETY: as in `load`; write TLB entries are writable RAM pages.
            unsafe { write_le(p, size, value) };
            return Ok(());
        }
        self.store_slow(env, vaddr, size, value, now)
    }

    #[inline(never)]
    fn store_slow<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        value: u64,
        now: u64,
    ) -> Result<(), Trap> {
        if page_offset(vaddr) + size <= PAGE_SIZE {
            // A page that is RAM is walked again by the refill below, which
            // is the walk the hardware makes; only a device page's walk is
            // this one.
            let mut ptes = PteReads::default();
            let walked = self.walk(env.mem, vaddr, Access::Write, &mut ptes);
            let ram = walked.is_ok_and(|(pa, _)| env.mem.is_ram(page_base(pa), PAGE_SIZE));
            if !ram {
                self.time_translation(env, vaddr, Access::Write, &ptes, &walked, now);
            }
            let paddr = walked?.0;
            if !ram {
                if !self.pmp_allows(paddr, size, Access::Write) {
                    return Err(Trap::new(Trap::STORE_ACCESS, vaddr));
                }
                self.before_mmio(now);
                let ok = match env.mmio.as_deref_mut() {
                    Some(dev) if vaddr & (size - 1) == 0 => dev.store(
                        paddr,
                        size,
                        value,
                        env.timing.as_deref_mut().and_then(|t| t.control_port()),
                    ),
                    _ => false,
                };
                return if ok {
                    Ok(())
                } else {
                    Err(Trap::new(Trap::STORE_ACCESS, vaddr))
                };
            }
            let (p, paddr) = self.refill(env, vaddr, size, Access::Write, now)?;
            self.time_data_lines(env, paddr, size, DataKind::Store, now)?;
            // SAFETY: see load_slow.
            unsafe { write_le(p, size, value) };
            self.trace_store(env, paddr, size);
            return Ok(());
        }
        // Check every page first so a faulting store writes nothing.
        let mut ptrs = [std::ptr::null_mut(); 8];
        let mut paddrs = [0u64; 8];
        for i in 0..size {
            let (p, paddr) = self.refill(env, vaddr.wrapping_add(i), 1, Access::Write, now)?;
            self.time_data_piece(env, paddr, size - i, i == 0, DataKind::Store, now)?;
            ptrs[i as usize] = p;
            paddrs[i as usize] = paddr;
        }
        for (i, p) in ptrs.iter().take(size as usize).enumerate() {
            // SAFETY: each pointer came from refill for one byte.
            unsafe { **p = (value >> (8 * i)) as u8 };
            self.trace_store(env, paddrs[i], 1);
        }
        Ok(())
    }

    /// Records a store of `size` bytes at `paddr`, made by the instruction
    /// at `insn_at`, in the persistence trace (if one is kept and the bytes
    /// are NVMM). Only slow-path stores come here; while a trace is kept,
    /// NVMM pages stay out of the store TLB so that all of theirs do.
    #[inline]
    pub(crate) fn trace_store<T: TimingModel + ?Sized>(
        &self,
        env: &mut Env<'_, T>,
        paddr: u64,
        size: u64,
    ) {
        if env.mem.tracks_persistence() {
            self.note_calls(env);
            let (pc, done) = self.insn_at;
            env.mem
                .persist_store(self.core.hart_id, pc, self.instret + done, paddr, size);
        }
    }

    /// Tells the persistence trace the call stack of the instruction whose
    /// records come next, if the hart keeps one.
    #[inline]
    pub(crate) fn note_calls<T: TimingModel + ?Sized>(&self, env: &mut Env<'_, T>) {
        if let Some(calls) = self.calls.as_deref() {
            env.mem.set_persist_calls(calls.frames());
        }
    }

    /// A host pointer for an aligned read-modify-write of `size` bytes (AMOs,
    /// `sc`): misaligned raises a store-address-misaligned exception. The
    /// access is timed as a store (the line is fetched exclusive).
    #[inline]
    pub(crate) fn rmw_ptr<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        size: u64,
        now: u64,
    ) -> Result<(*mut u8, u64), Trap> {
        if vaddr & (size - 1) != 0 {
            return Err(Trap::new(Trap::STORE_MISALIGNED, vaddr));
        }
        let (p, paddr) = match self.tlb.write.lookup_paddr(vaddr, size) {
            Some(hit) => hit,
            None => self.refill(env, vaddr, size, Access::Write, now)?,
        };
        self.time_data(env, paddr, size, DataKind::Amo, now)?;
        Ok((p, paddr))
    }

    /// Reads guest virtual memory for the kernel (no TLB fill, no A/D
    /// semantics beyond a normal access). Fails at the first bad page.
    pub fn read_virt(&mut self, mem: &mut PhysMem, vaddr: u64, buf: &mut [u8]) -> Result<(), Trap> {
        let mut done = 0usize;
        while done < buf.len() {
            let va = vaddr.wrapping_add(done as u64);
            let chunk = ((PAGE_SIZE - page_offset(va)) as usize).min(buf.len() - done);
            let pa = self.translate(mem, va, Access::Read)?;
            if !mem.read(pa, &mut buf[done..done + chunk]) {
                return Err(Trap::new(Trap::LOAD_ACCESS, va));
            }
            done += chunk;
        }
        Ok(())
    }

    /// Writes guest virtual memory for the kernel, keeping decoded code
    /// coherent.
    pub fn write_virt<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
        data: &[u8],
    ) -> Result<(), Trap> {
        let mut done = 0usize;
        while done < data.len() {
            let va = vaddr.wrapping_add(done as u64);
            let chunk = ((PAGE_SIZE - page_offset(va)) as usize).min(data.len() - done);
            let pa = self.translate(env.mem, va, Access::Write)?;
            if !env.mem.write(pa, &data[done..done + chunk]) {
                return Err(Trap::new(Trap::STORE_ACCESS, va));
            }
            env.code.pages.code_written(page_base(pa));
            done += chunk;
        }
        Ok(())
    }

    /// The physical address of the instruction at `vaddr` (the code-cache
    /// key in full-system mode), refilling the fetch TLB if needed.
    pub(crate) fn fetch_paddr<T: TimingModel + ?Sized>(
        &mut self,
        env: &mut Env<'_, T>,
        vaddr: u64,
    ) -> Result<u64, Trap> {
        if vaddr & 1 != 0 {
            return Err(Trap::new(Trap::INSN_MISALIGNED, vaddr));
        }
        match self.tlb.exec.lookup_paddr(vaddr, 2) {
            Some((_, paddr)) => Ok(paddr),
            None => Ok(self.refill(env, vaddr, 2, Access::Exec, 0)?.1),
        }
    }

    /// Drops page `ppage` from the store TLB of every context.
    pub(crate) fn flush_write_ppage(&mut self, ppage: u64) {
        self.tlb.write.flush_ppage(ppage);
        for t in self.tlb_contexts.saved_mut() {
            t.write.flush_ppage(ppage);
        }
    }
}

/// Reads `size` bytes little-endian.
///
/// # Safety
/// `p` must be valid for `size` bytes.
#[inline(always)]
pub(crate) unsafe fn read_le(p: *const u8, size: u64) -> u64 {
    // SAFETY: the caller guarantees `size` readable bytes.
    unsafe {
        match size {
            1 => *p as u64,
            2 => u16::from_le(std::ptr::read_unaligned(p.cast::<u16>())) as u64,
            4 => u32::from_le(std::ptr::read_unaligned(p.cast::<u32>())) as u64,
            _ => u64::from_le(std::ptr::read_unaligned(p.cast::<u64>())),
        }
    }
}

/// Writes the low `size` bytes of `v` little-endian.
///
/// # Safety
/// `p` must be valid for `size` bytes of writes.
#[inline(always)]
pub(crate) unsafe fn write_le(p: *mut u8, size: u64, v: u64) {
    // SAFETY: the caller guarantees `size` writable bytes.
    unsafe {
        match size {
            1 => *p = v as u8,
            2 => std::ptr::write_unaligned(p.cast::<u16>(), (v as u16).to_le()),
            4 => std::ptr::write_unaligned(p.cast::<u32>(), (v as u32).to_le()),
            _ => std::ptr::write_unaligned(p.cast::<u64>(), v.to_le()),
        }
    }
}

pub(crate) use read_le as read_host;

/// The PTE addresses one page-table walk read, in order (Sv39: at most
/// three).
#[derive(Default)]
struct PteReads {
    addrs: [u64; 3],
    len: usize,
    /// The leaf PTE's G bit (a successful walk).
    global: bool,
}
