//! Memory system calls: mmap, munmap, mprotect, mremap, msync, madvise,
//! mincore.

use crate::errno::*;
use crate::fs::unsafe_zeroed_stat;
use crate::process::Process;
use crate::vm::{Backing, PROT_EXEC, PROT_WRITE};
use rvnvmm_mem::sv39::{page_offset, PAGE_SIZE};
use std::os::fd::FromRawFd;

/// The page-aligned end of `[addr, addr + len)`, if it lies in the user
/// address space.
pub(super) fn page_end(addr: u64, len: u64) -> Option<u64> {
    addr.checked_add(len)?
        .checked_next_multiple_of(PAGE_SIZE)
        .filter(|&e| e <= crate::vm::USER_TOP)
}

impl Process {
    pub(super) fn sys_mmap(&mut self, a: [u64; 6]) -> SysResult {
        let (addr, len, prot, flags, fd, off) =
            (a[0], a[1], a[2] as u32, a[3] as u32, a[4] as i32, a[5]);
        const MAP_SHARED: u32 = 1;
        const MAP_FIXED: u32 = 0x10;
        const MAP_ANON: u32 = 0x20;
        const MAP_FIXED_NOREPLACE: u32 = 0x10_0000;
        const MAP_TYPE: u32 = 0x0f;
        const MAP_SHARED_VALIDATE: u32 = 3;
        const MAP_SYNC: u32 = 0x8_0000;
        // Linux's map types: 1 shared, 2 private, 3 shared with the flags
        // validated; MAP_SYNC (only there) promises a DAX mapping, which
        // only the physical-memory devices give: a host file's pages are
        // page cache, so refusing it is what tells a program so.
        let kind = flags & MAP_TYPE;
        if !(1..=3).contains(&kind) {
            return Err(EINVAL);
        }
        let sync = kind == MAP_SHARED_VALIDATE && flags & MAP_SYNC != 0;
        if len == 0
            || page_offset(off) != 0
            || (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 && page_offset(addr) != 0)
        {
            return Err(EINVAL);
        }
        let len = len.checked_next_multiple_of(PAGE_SIZE).ok_or(ENOMEM)?;
        if len >= crate::vm::USER_TOP {
            return Err(ENOMEM);
        }
        let start = self.memory.aspace.place(
            addr,
            len,
            flags & MAP_FIXED != 0,
            flags & MAP_FIXED_NOREPLACE != 0,
        )?;
        let anon = flags & MAP_ANON != 0;
        let shared = flags & MAP_SHARED != 0;
        let device = if anon {
            None
        } else {
            crate::devices::Device::of_fd(fd)
        };
        // A shared mapping of a file of the NVMM-backed directory maps its
        // extent's physical pages, as DAX does.
        let pmem_extent = match (anon || !shared, device) {
            (false, None) => self.pmem_extent_of_fd(fd).transpose()?,
            _ => None,
        };
        let physical = device.is_some() || pmem_extent.is_some();
        // Linux accounts private writable and shared anonymous memory
        // (unless MAP_NORESERVE) and refuses a request larger than RAM.
        const MAP_NORESERVE: u32 = 0x4000;
        let accounted = anon || (!shared && prot & PROT_WRITE != 0);
        let pool = if anon && !shared {
            self.memory.aspace.heap_pool
        } else {
            0
        };
        if accounted
            && !physical
            && flags & MAP_NORESERVE == 0
            && !self.memory.aspace.may_commit(len, pool)
        {
            return Err(ENOMEM);
        }
        // RLIMIT_DATA, as Linux's mmap_region asks may_expand_vm: a private
        // writable mapping may add what it does not replace.
        if !shared
            && prot & PROT_WRITE != 0
            && !physical
            && !self
                .memory
                .aspace
                .may_expand_data(len - self.memory.aspace.mapped_bytes(start, start + len))
        {
            return Err(ENOMEM);
        }
        if sync && !physical {
            return Err(EOPNOTSUPP);
        }
        if let Some((base, size)) = pmem_extent {
            // SAFETY: F_GETFL takes no argument.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if fl < 0 {
                return Err(EBADF);
            }
            let acc = fl & libc::O_ACCMODE;
            if acc == libc::O_WRONLY || (prot & PROT_WRITE != 0 && acc == libc::O_RDONLY) {
                return Err(EACCES);
            }
            // Past the file's last page there are no frames of its own.
            if off.checked_add(len).is_none_or(|end| end > size) {
                return Err(EINVAL);
            }
            let name = self.files.fs.guest_path_of_open_fd(fd).unwrap_or_default();
            if !self.memory.aspace.is_free(start, start + len) {
                let exec = self
                    .memory
                    .aspace
                    .unmap(&mut self.memory.phys, start, start + len);
                self.after_unmap(exec);
            }
            self.memory.aspace.add(
                start,
                start + len,
                prot,
                Backing::Physical { base: base + off },
                &name,
            );
            return Ok(start as i64);
        }
        if !anon {
            if let Some(dev) = device {
                // A window on physical memory (/dev/nvmm, /dev/nvmm-ctl).
                let base = self.device_window(dev, off, len)?;
                self.memory.aspace.frames.claim(base, base + len)?;
                if !self.memory.aspace.is_free(start, start + len) {
                    let exec = self
                        .memory
                        .aspace
                        .unmap(&mut self.memory.phys, start, start + len);
                    self.after_unmap(exec);
                }
                self.memory.aspace.add(
                    start,
                    start + len,
                    prot,
                    Backing::Physical { base },
                    dev.path(),
                );
                return Ok(start as i64);
            }
        }
        let file = if anon && !shared {
            None
        } else {
            // The file behind the mapping: a duplicate of the guest's
            // descriptor, or for shared anonymous memory a memfd (so forked
            // children share it too). Pages come in on first touch.
            let raw = if anon {
                // SAFETY: the name is a NUL-terminated literal.
                let low = unsafe { libc::memfd_create(c"rvnvmm-shm".as_ptr(), libc::MFD_CLOEXEC) };
                if low < 0 {
                    return Err(Errno::last_host());
                }
                // Moved out of the range guests use, as the dup of a mapped
                // file is: the guest's next descriptor number is Linux's.
                // SAFETY: F_DUPFD_CLOEXEC and close on a descriptor we own.
                let fd = unsafe { libc::fcntl(low, libc::F_DUPFD_CLOEXEC, 1000) };
                // SAFETY: as above.
                unsafe { libc::close(low) };
                // SAFETY: ftruncate takes integers only.
                if fd < 0 || unsafe { libc::ftruncate(fd, len as i64) } < 0 {
                    let e = Errno::last_host();
                    if fd >= 0 {
                        // SAFETY: `fd` is ours and not yet handed anywhere.
                        unsafe { libc::close(fd) };
                    }
                    return Err(e);
                }
                fd
            } else {
                // SAFETY: F_GETFL takes no argument.
                let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                if fl < 0 {
                    return Err(EBADF);
                }
                let acc = fl & libc::O_ACCMODE;
                if acc == libc::O_WRONLY
                    || (shared && prot & PROT_WRITE != 0 && acc == libc::O_RDONLY)
                {
                    return Err(EACCES);
                }
                let mut st = unsafe_zeroed_stat();
                // SAFETY: `st` is a struct stat the call fills.
                if unsafe { libc::fstat(fd, &mut st) } < 0
                    || st.st_mode & libc::S_IFMT == libc::S_IFDIR
                {
                    return Err(ENODEV);
                }
                // SAFETY: F_DUPFD_CLOEXEC takes an integer argument.
                let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 1000) };
                if dup < 0 {
                    return Err(Errno::last_host());
                }
                dup
            };
            let writable = anon
                // SAFETY: F_GETFL takes no argument.
                || unsafe { libc::fcntl(raw, libc::F_GETFL) } & libc::O_ACCMODE == libc::O_RDWR;
            // SAFETY: `raw` is a descriptor created above and owned from here on.
            let fd = std::rc::Rc::new(unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) });
            Some(crate::vm::FileMap {
                fd,
                offset: if anon { 0 } else { off },
                shared,
                writable,
            })
        };
        if !self.memory.aspace.is_free(start, start + len) {
            let exec = self
                .memory
                .aspace
                .unmap(&mut self.memory.phys, start, start + len);
            self.after_unmap(exec);
        }
        // The guest's name of the file, for /proc/self/maps.
        let name = if anon {
            "[anon]".to_string()
        } else {
            self.files.fs.guest_path_of_open_fd(fd).unwrap_or_default()
        };
        let backing = if file.is_none() {
            Backing::Heap
        } else {
            Backing::Populated
        };
        self.memory
            .aspace
            .add(start, start + len, prot, backing, &name);
        if let Some(v) = self.memory.aspace.vmas.get_mut(&start) {
            v.file = file;
        }
        self.memory.aspace.merge_around(start, start + len);
        Ok(start as i64)
    }

    /// After pages were unmapped or their protection changed: cached
    /// translations go when the call returns (`translations_stale`), and
    /// decoded code now if any of them was executable.
    pub(super) fn after_unmap(&mut self, exec: bool) {
        if exec {
            self.memory.code.pages.flush_pending = true;
        }
    }

    pub(super) fn sys_munmap(&mut self, addr: u64, len: u64) -> SysResult {
        let end = page_end(addr, len).ok_or(EINVAL)?;
        if page_offset(addr) != 0 || len == 0 {
            return Err(EINVAL);
        }
        let exec = self.memory.aspace.unmap(&mut self.memory.phys, addr, end);
        self.after_unmap(exec);
        Ok(0)
    }

    pub(super) fn sys_mprotect(&mut self, addr: u64, len: u64, prot: u32) -> SysResult {
        const PROT_GROWSDOWN: u32 = 0x0100_0000;
        const PROT_GROWSUP: u32 = 0x0200_0000;
        if page_offset(addr) != 0 || prot & !(7 | PROT_GROWSDOWN | PROT_GROWSUP) != 0 {
            return Err(EINVAL);
        }
        let end = page_end(addr, len).ok_or(ENOMEM)?;
        let was_exec = self
            .memory
            .aspace
            .vmas
            .range(..end)
            .any(|(&s, v)| v.end > addr && s < end && v.prot & PROT_EXEC != 0);
        let r = self
            .memory
            .aspace
            .protect(&mut self.memory.phys, addr, end, prot & 7);
        self.after_unmap(was_exec || prot & PROT_EXEC != 0);
        r.map(|_| 0)
    }

    pub(super) fn sys_mremap(&mut self, a: [u64; 6]) -> SysResult {
        const MREMAP_MAYMOVE: u64 = 1;
        const MREMAP_FIXED: u64 = 2;
        const MREMAP_DONTUNMAP: u64 = 4;
        let (old, flags) = (a[0], a[3]);
        let may_move = flags & MREMAP_MAYMOVE != 0;
        let fixed = flags & MREMAP_FIXED != 0;
        let dont_unmap = flags & MREMAP_DONTUNMAP != 0;
        if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) != 0
            || ((fixed || dont_unmap) && !may_move)
            || page_offset(old) != 0
        {
            return Err(EINVAL);
        }
        let old_len = page_end(0, a[1]).ok_or(EINVAL)?;
        let new_len = page_end(0, a[2]).ok_or(EINVAL)?;
        // old_len 0 duplicates a shared mapping, which nothing here needs.
        if new_len == 0 || old_len == 0 || (dont_unmap && old_len != new_len) {
            return Err(EINVAL);
        }
        let exec = self
            .memory
            .aspace
            .find(old)
            .is_some_and(|(_, v)| v.prot & PROT_EXEC != 0);
        let r = self.memory.aspace.remap(
            &mut self.memory.phys,
            old,
            old_len,
            new_len,
            crate::vm::RemapFlags {
                may_move,
                fixed: fixed.then_some(a[4]),
                dont_unmap,
            },
        );
        self.after_unmap(exec);
        r.map(|new| new as i64)
    }

    pub(super) fn sys_msync(&mut self, addr: u64, len: u64) -> SysResult {
        // Shared mappings are the host file's own pages: nothing to copy.
        if page_offset(addr) != 0 {
            return Err(EINVAL);
        }
        let mut a = addr;
        let mut physical = Vec::new();
        while a < addr.saturating_add(len) {
            let (start, v) = self.memory.aspace.find(a).ok_or(ENOMEM)?;
            if let Backing::Physical { base } = &v.backing {
                let base = *base;
                let end = v.end.min(addr.saturating_add(len));
                physical.push((base + (a - start), end - a));
            }
            a = v.end;
        }
        // A mapping of the NVMM-backed directory's file: its lines are
        // written back, as Linux's DAX msync does.
        for (paddr, n) in physical {
            self.pmem_msync(paddr, n);
        }
        Ok(0)
    }

    pub(super) fn sys_madvise(&mut self, addr: u64, len: u64, advice: u64) -> SysResult {
        const MADV_DONTNEED: u64 = 4;
        const MADV_HUGEPAGE: u64 = 14;
        const MADV_NOHUGEPAGE: u64 = 15;
        match advice {
            MADV_DONTNEED => {
                let end = (addr + len).next_multiple_of(PAGE_SIZE);
                self.memory.aspace.discard(&mut self.memory.phys, addr, end);
                self.threads.flush_tlbs();
            }
            MADV_HUGEPAGE | MADV_NOHUGEPAGE => {
                let end = page_end(addr, len).ok_or(ENOMEM)?;
                if page_offset(addr) != 0 {
                    return Err(EINVAL);
                }
                let how = if advice == MADV_HUGEPAGE {
                    crate::vm::HugeAdvice::Huge
                } else {
                    crate::vm::HugeAdvice::NoHuge
                };
                self.memory.aspace.advise_huge(addr, end, how)?;
            }
            _ => {}
        }
        Ok(0)
    }

    /// mincore: one byte per page of `[addr, addr + len)`, 1 if the page
    /// has a frame; `ENOMEM` if a page is not mapped (which libsigsegv's
    /// stack probing relies on).
    pub(super) fn sys_mincore(&mut self, addr: u64, len: u64, vec: u64) -> SysResult {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(EINVAL);
        }
        let end = addr
            .checked_add(len)
            .ok_or(ENOMEM)?
            .next_multiple_of(PAGE_SIZE);
        let mut flags = Vec::with_capacity(((end - addr) / PAGE_SIZE) as usize);
        for page in (addr..end).step_by(PAGE_SIZE as usize) {
            if self.memory.aspace.find(page).is_none() {
                return Err(ENOMEM);
            }
            let resident =
                rvnvmm_mem::sv39::find_leaf(&self.memory.phys, self.memory.aspace.root, page)
                    .is_some();
            flags.push(u8::from(resident));
        }
        self.write_mem(vec, &flags)?;
        Ok(0)
    }

    /// riscv_flush_icache: decoded code is dropped before the next
    /// instruction runs.
    pub(super) fn sys_riscv_flush_icache(&mut self) -> SysResult {
        self.memory.code.pages.flush_pending = true;
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::AT_FDCWD;
    use crate::syscall::testing::*;
    use crate::vm::PROT_READ;

    const RW: u64 = 3;
    const PRIVATE_ANON: u64 = 0x22;

    fn mmap(p: &mut Process, addr: u64, len: u64, prot: u64, flags: u64) -> SysResult {
        p.sys_mmap([addr, len, prot, flags, u64::MAX, 0])
    }

    /// RLIMIT_DATA as Linux enforces it: brk beyond it keeps the old break;
    /// a private writable mapping (mmap, mprotect, mremap growth) beyond it
    /// is ENOMEM; shared and read-only memory and the stack are not data.
    #[test]
    fn rlimit_data_bounds_the_heap_and_private_writable_mappings() {
        const PAGE: u64 = 0x1000;
        const SHARED_ANON: u64 = 0x21;
        const DATA: u64 = 2;
        let mut p = process();
        // One page of data: the limit's own buffer.
        let lim = scratch(&mut p, 16);
        let set = |p: &mut Process, soft: u64, hard: u64| {
            p.write_u64(lim, soft).unwrap();
            p.write_u64(lim + 8, hard).unwrap();
            p.sys_rlimit(crate::syscall::nr::SETRLIMIT, [DATA, lim, 0, 0, 0, 0])
        };
        assert_eq!(set(&mut p, 16 * PAGE, u64::MAX), Ok(0));
        let brk = |p: &mut Process, to: u64| p.memory.aspace.set_brk(&mut p.memory.phys, to);
        assert_eq!(brk(&mut p, BRK_START + 10 * PAGE), BRK_START + 10 * PAGE);
        // 16 pages of heap fit the heap's own check but not the 17 pages
        // of data with the buffer; 17 fit neither.
        assert_eq!(brk(&mut p, BRK_START + 16 * PAGE), BRK_START + 10 * PAGE);
        assert_eq!(brk(&mut p, BRK_START + 17 * PAGE), BRK_START + 10 * PAGE);
        assert_eq!(brk(&mut p, BRK_START + 15 * PAGE), BRK_START + 15 * PAGE);
        // Full: no private writable page more, by any route.
        assert_eq!(err(mmap(&mut p, 0, PAGE, RW, PRIVATE_ANON)), ENOMEM);
        let shared = mmap(&mut p, 0, 4 * PAGE, RW, SHARED_ANON).unwrap() as u64;
        let ro = mmap(&mut p, 0, 4 * PAGE, PROT_READ as u64, PRIVATE_ANON).unwrap() as u64;
        assert_eq!(err(p.sys_mprotect(ro, 4 * PAGE, RW as u32)), ENOMEM);
        // Replacing data with data adds nothing.
        assert_eq!(
            mmap(&mut p, lim, PAGE, RW, PRIVATE_ANON | 0x10),
            Ok(lim as i64)
        );
        // Room for four pages, which may then not grow.
        assert_eq!(brk(&mut p, BRK_START + 11 * PAGE), BRK_START + 11 * PAGE);
        let data = mmap(&mut p, 0, 4 * PAGE, RW, PRIVATE_ANON).unwrap() as u64;
        assert_eq!(
            p.memory.aspace.data_bytes(0, crate::vm::USER_TOP),
            16 * PAGE
        );
        let mremap = |p: &mut Process, at: u64, new: u64, flags: u64| {
            p.sys_mremap([at, 4 * PAGE, new, flags, 0, 0])
        };
        assert_eq!(err(mremap(&mut p, data, 5 * PAGE, 1)), ENOMEM);
        assert_eq!(
            err(mremap(&mut p, data, 4 * PAGE, 1 | 4)),
            ENOMEM,
            "DONTUNMAP"
        );
        assert_eq!(mremap(&mut p, data, 3 * PAGE, 0), Ok(data as i64));
        // Shared memory is not data: it grows.
        assert_eq!(mremap(&mut p, shared, 8 * PAGE, 1).map(|_| ()), Ok(()));
        // A soft limit of 0 lets data grow to the hard limit (Linux's
        // allowance for Valgrind); no limit, without bound.
        assert_eq!(set(&mut p, 0, 17 * PAGE), Ok(0));
        assert_eq!(
            mmap(&mut p, 0, 2 * PAGE, RW, PRIVATE_ANON).map(|_| ()),
            Ok(())
        );
        assert_eq!(err(mmap(&mut p, 0, PAGE, RW, PRIVATE_ANON)), ENOMEM);
        assert_eq!(set(&mut p, u64::MAX, u64::MAX), Ok(0));
        assert_eq!(p.sys_mprotect(ro, 4 * PAGE, RW as u32), Ok(0));
        assert_eq!(brk(&mut p, BRK_START + 64 * PAGE), BRK_START + 64 * PAGE);
    }

    #[test]
    fn brk_grows_and_shrinks_by_pages() {
        let mut p = process();
        let brk = |p: &mut Process, to: u64| p.memory.aspace.set_brk(&mut p.memory.phys, to);
        assert_eq!(brk(&mut p, 0), BRK_START, "a query");
        assert_eq!(brk(&mut p, BRK_START + 0x2800), BRK_START + 0x2800);
        p.write_u64(BRK_START + 0x2ff8, 42).unwrap();
        assert_eq!(p.read_u64(BRK_START + 0x2ff8), Ok(42));
        assert_eq!(brk(&mut p, BRK_START + 0x1000), BRK_START + 0x1000);
        assert_eq!(
            err(p.read_u64(BRK_START + 0x1000).map(|v| v as i64)),
            EFAULT
        );
        assert_eq!(p.read_u64(BRK_START + 0xff8), Ok(0));
        assert_eq!(
            brk(&mut p, BRK_START - 0x1000),
            BRK_START + 0x1000,
            "below the start"
        );
        // Past guest RAM: refused, the break stays.
        assert_eq!(brk(&mut p, BRK_START + (1 << 30)), BRK_START + 0x1000);
    }

    #[test]
    fn mmap_and_munmap_anonymous_memory() {
        let mut p = process();
        let a = mmap(&mut p, 0, 0x2001, RW, PRIVATE_ANON).unwrap() as u64;
        assert_eq!(a & 0xfff, 0);
        p.write_u64(a + 0x2ff8, 7).unwrap();
        assert_eq!(
            p.read_u64(a + 0x2ff8),
            Ok(7),
            "the length rounds up to pages"
        );
        assert_eq!(p.sys_munmap(a + 0x1000, 0x1000), Ok(0));
        assert_eq!(err(p.read_u32(a + 0x1000).map(i64::from)), EFAULT);
        assert_eq!(p.read_u64(a + 0x2ff8), Ok(7), "the rest stays");
        // MAP_FIXED over it replaces the pages with fresh zeroes.
        let fixed = 0x10;
        assert_eq!(
            mmap(&mut p, a, 0x3000, RW, PRIVATE_ANON | fixed),
            Ok(a as i64)
        );
        assert_eq!(p.read_u64(a + 0x2ff8), Ok(0));
    }

    #[test]
    fn mmap_and_munmap_refuse_bad_arguments() {
        let mut p = process();
        let a = mmap(&mut p, 0, 0x1000, RW, PRIVATE_ANON).unwrap() as u64;
        assert_eq!(
            err(mmap(&mut p, 0, 0, RW, PRIVATE_ANON)),
            EINVAL,
            "length 0"
        );
        assert_eq!(
            err(mmap(&mut p, 0, 0x1000, RW, 0x20)),
            EINVAL,
            "no map type"
        );
        assert_eq!(
            err(mmap(&mut p, a + 8, 0x1000, RW, PRIVATE_ANON | 0x10)),
            EINVAL
        );
        assert_eq!(err(p.sys_mmap([0, 0x1000, RW, 2, u64::MAX, 0x800])), EINVAL);
        assert_eq!(err(mmap(&mut p, 0, 1 << 40, RW, PRIVATE_ANON)), ENOMEM);
        assert_eq!(err(mmap(&mut p, 0, u64::MAX, RW, PRIVATE_ANON)), ENOMEM);
        assert_eq!(
            err(mmap(&mut p, 0, 128 << 20, RW, PRIVATE_ANON)),
            ENOMEM,
            "> RAM"
        );
        assert_eq!(
            err(p.sys_mmap([0, 0x1000, 1, 2, 1_000_000, 0])),
            EBADF,
            "no file"
        );
        assert_eq!(err(p.sys_munmap(a + 1, 0x1000)), EINVAL);
        assert_eq!(err(p.sys_munmap(a, 0)), EINVAL);
        assert_eq!(err(p.sys_munmap(a, u64::MAX)), EINVAL);
    }

    #[test]
    fn mprotect_changes_what_the_kernel_may_write() {
        let mut p = process();
        let a = mmap(&mut p, 0, 0x2000, RW, PRIVATE_ANON).unwrap() as u64;
        p.write_u64(a, 5).unwrap();
        assert_eq!(p.sys_mprotect(a, 0x1000, PROT_READ), Ok(0));
        assert_eq!(err(p.write_u64(a, 6).map(|_| 0)), EFAULT);
        assert_eq!(p.read_u64(a), Ok(5));
        p.write_u64(a + 0x1000, 6).unwrap();
        assert_eq!(p.sys_mprotect(a, 0x1000, PROT_READ | PROT_WRITE), Ok(0));
        p.write_u64(a, 6).unwrap();
        assert_eq!(err(p.sys_mprotect(a + 4, 0x1000, PROT_READ)), EINVAL);
        assert_eq!(err(p.sys_mprotect(a, 0x1000, 0x10)), EINVAL, "unknown bit");
        assert_eq!(err(p.sys_mprotect(WILD, 0x1000, PROT_READ)), ENOMEM);
        assert_eq!(err(p.sys_mprotect(a, u64::MAX - a, PROT_READ)), ENOMEM);
    }

    #[test]
    fn mremap_moves_contents() {
        let mut p = process();
        let a = mmap(&mut p, 0, 0x1000, RW, PRIVATE_ANON).unwrap() as u64;
        // Something right after it, so growing must move.
        mmap(&mut p, a + 0x1000, 0x1000, RW, PRIVATE_ANON | 0x10).unwrap();
        p.write_u64(a + 8, 99).unwrap();
        assert_eq!(err(p.sys_mremap([a, 0x1000, 0x3000, 0, 0, 0])), ENOMEM);
        let b = p.sys_mremap([a, 0x1000, 0x3000, 1, 0, 0]).unwrap() as u64;
        assert_ne!(a, b);
        assert_eq!(p.read_u64(b + 8), Ok(99));
        assert_eq!(err(p.read_u64(a + 8).map(|v| v as i64)), EFAULT);
        assert_eq!(err(p.sys_mremap([b, 0x1000, 0x2000, 2, 0, 0])), EINVAL);
    }

    #[test]
    fn mincore_tells_touched_pages() {
        let mut p = process();
        let a = mmap(&mut p, 0, 0x3000, RW, PRIVATE_ANON).unwrap() as u64;
        let vec = scratch(&mut p, 8);
        p.write_u64(a + 0x1000, 1).unwrap();
        assert_eq!(p.sys_mincore(a, 0x3000, vec), Ok(0));
        assert_eq!(read(&mut p, vec, 3), [0, 1, 0]);
        assert_eq!(err(p.sys_mincore(a + 1, 0x1000, vec)), EINVAL);
        assert_eq!(err(p.sys_mincore(a, 0x4000, vec)), ENOMEM, "a page past it");
        assert_eq!(err(p.sys_mincore(a, 0x1000, WILD)), EFAULT);
    }

    /// A process with a 1 MiB NVMM region and `/mnt/pmem` on it.
    fn with_pmem_dir() -> Process {
        let mut opts = process().opts.clone();
        opts.nodes.push(crate::MemoryNode {
            name: "nvmm".into(),
            id: 1,
            base: 0x1_0000_0000,
            size: 1 << 20,
            nvmm: true,
        });
        opts.pmem_dir = Some("/mnt/pmem".into());
        let mut p = Process::without_program(opts).expect("a bare process");
        p.memory.aspace.brk_start = BRK_START;
        p.memory.aspace.brk = BRK_START;
        p.mount_pmem_dir().expect("mounted");
        p
    }

    const SHARED_VALIDATE_SYNC: u64 = 3 | 0x8_0000;

    #[test]
    fn pmem_dir_files_map_with_map_sync_and_live_in_nvmm() {
        let mut p = with_pmem_dir();
        let path = guest_str(&mut p, "/mnt/pmem/pool");
        let flags = (libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC) as u64;
        let fd = p.sys_openat(AT_FDCWD as u64, path, flags, 0o600).unwrap() as i32;
        let data = scratch(&mut p, 8192);
        p.write_mem(data, &[0x5a; 5000]).unwrap();
        assert_eq!(p.sys_pwrite64(fd, data, 5000, 0), Ok(5000));
        p.pmem_sync().unwrap();
        let (base, size) = p.pmem_extent_of_fd(fd).unwrap().unwrap();
        assert_eq!(size, 8192);
        // Inside the partition, past the table's page.
        assert!(base >= 0x1_0000_0000 + (256 << 10) + 4096);
        // A DAX mapping shows the file, and a store through it is the file's.
        let m = p
            .sys_mmap([0, 8192, 3, SHARED_VALIDATE_SYNC, fd as u64, 0])
            .unwrap() as u64;
        assert_eq!(read(&mut p, m + 4999, 2), [0x5a, 0]);
        p.write_mem(m + 10, b"tree").unwrap();
        let mut b = [0u8; 4];
        assert!(p.memory.phys.read(base + 10, &mut b));
        assert_eq!(&b, b"tree");
        assert_eq!(p.sys_pread64(fd, data, 4, 10), Ok(4));
        assert_eq!(read(&mut p, data, 4), b"tree");
        // Beyond the file's pages: refused.
        assert_eq!(
            err(p.sys_mmap([0, 3 * 4096, 3, SHARED_VALIDATE_SYNC, fd as u64, 0])),
            EINVAL
        );
        // Another run on the same NVMM contents finds the file.
        let (pbase, psize) = crate::pmem::PmemDir::partition((0x1_0000_0000, 1 << 20));
        let mut region = vec![0u8; psize as usize];
        p.memory.phys.read(pbase, &mut region);
        let mut q = {
            let mut opts = p.opts.clone();
            opts.pmem_dir = Some("/mnt/pmem".into());
            Process::without_program(opts).unwrap()
        };
        q.memory.phys.write(pbase, &region);
        q.mount_pmem_dir().unwrap();
        let path = guest_str(&mut q, "/mnt/pmem/pool");
        let fd = q
            .sys_openat(AT_FDCWD as u64, path, libc::O_RDONLY as u64, 0)
            .unwrap() as i32;
        let data = scratch(&mut q, 8192);
        assert_eq!(q.sys_pread64(fd, data, 8192, 0), Ok(5000));
        assert_eq!(read(&mut q, data + 8, 8), b"\x5a\x5atree\x5a\x5a");
        // Flat: no subdirectories.
        let sub = guest_str(&mut q, "/mnt/pmem/sub");
        let mkdir = [AT_FDCWD as u64, sub, 0o700, 0, 0, 0];
        assert_eq!(q.dispatch(crate::syscall::nr::MKDIRAT, mkdir), Some(-EPERM));
        // Unlinked: its extent is free again.
        let path = guest_str(&mut q, "/mnt/pmem/pool");
        q.sys_unlinkat(AT_FDCWD as u64, path, 0).unwrap();
        q.pmem_sync().unwrap();
        assert!(q.pmem_extent_of_fd(fd).is_none());
    }

    #[test]
    fn map_sync_of_an_ordinary_file_is_not_supported() {
        let mut p = with_pmem_dir();
        let f = TempFile::new("mapsync", &[1; 4096]);
        let path = guest_str(&mut p, f.path());
        let fd = p
            .sys_openat(AT_FDCWD as u64, path, libc::O_RDWR as u64, 0)
            .unwrap();
        assert_eq!(
            err(p.sys_mmap([0, 4096, 3, SHARED_VALIDATE_SYNC, fd as u64, 0])),
            EOPNOTSUPP
        );
        // Without MAP_SYNC it maps as any shared file.
        assert!(p.sys_mmap([0, 4096, 3, 1, fd as u64, 0]).is_ok());
    }
}
