//! The NVMM-backed directory as a layer of the process's file calls:
//! mounting it, and the table following what each call changed.

use super::*;
use crate::process::Process;

/// Why the table in the image cannot be used.
fn corrupt(what: String) -> crate::process::RunError {
    crate::process::RunError::Setup(format!(
        "the NVMM image's pmem directory table is corrupt: {what}"
    ))
}

impl Process {
    /// Mounts `user.pmem_dir`: reads the table from the NVMM region (or
    /// writes an empty one), and makes a host file of every file it lists,
    /// sharing its pages with the file's extent. Called once the image (if
    /// any) is in the region, before the guest runs.
    pub fn mount_pmem_dir(&mut self) -> Result<(), crate::process::RunError> {
        use crate::process::RunError;
        let (Some(guest), Some(nvmm)) = (
            self.opts.pmem_dir.clone(),
            self.opts.nvmm_node().map(|n| n.range()),
        ) else {
            return Ok(());
        };
        let (base, size) = PmemDir::partition(nvmm);
        if size < 2 * PAGE_SIZE {
            return Err(RunError::Setup(format!(
                "user.pmem_dir needs an NVMM region of at least 32 KiB (its second quarter holds the files), got {size:#x} bytes"
            )));
        }
        let tree = self.files.fs.tree.as_ref().ok_or_else(|| {
            RunError::Setup("user.pmem_dir needs the emulated tree's directory".into())
        })?;
        let host = tree.scratch("pmem");
        std::fs::create_dir_all(&host)
            .map_err(|e| RunError::Setup(format!("cannot create {}: {e}", host.display())))?;
        let mut dir = PmemDir {
            guest: guest.trim_end_matches('/').as_bytes().to_vec(),
            host,
            base,
            size,
            slots: vec![None; (SLOTS - 1) as usize],
            traced_before: None,
        };
        let mut header = [0u8; ENTRY as usize];
        self.memory.phys.read(dir.table(), &mut header);
        if &header[..8] != MAGIC {
            // A new directory: an empty table, persisted.
            let mut page = vec![0u8; PAGE_SIZE as usize];
            page[..8].copy_from_slice(MAGIC);
            self.memory.phys.write(dir.table(), &page);
            for line in 0..SLOTS {
                self.memory.phys.persist_sync(dir.table() + line * ENTRY);
            }
        } else {
            let mut used: Vec<(u64, u64, usize)> = Vec::new();
            for i in 0..(SLOTS - 1) as usize {
                let mut line = Line::new_zeroed();
                let at = dir.table() + (i as u64 + 1) * ENTRY;
                self.memory.phys.read(at, line.as_mut_bytes());
                let Some(e) = decode(&line) else { continue };
                let name_ok = !e.name.contains(&b'/') && e.name != b"." && e.name != b"..";
                if !name_ok
                    || e.pages != e.size.div_ceil(PAGE_SIZE)
                    || e.start
                        .checked_add(e.pages)
                        .is_none_or(|end| end > dir.data_pages())
                    || dir.slot(&e.name).is_some()
                {
                    return Err(corrupt(format!("entry {} ({:?})", i + 1, e)));
                }
                used.push((e.start, e.start + e.pages, i));
                dir.slots[i] = Some(e);
            }
            used.sort_unstable();
            if used.windows(2).any(|w| w[0].1 > w[1].0 && w[1].1 > w[1].0) {
                return Err(corrupt("two files share pages".into()));
            }
        }
        for i in 0..dir.slots.len() {
            let Some(e) = dir.slots[i].clone() else {
                continue;
            };
            let path = dir.host.join(std::ffi::OsStr::from_bytes(&e.name));
            let mut data = vec![0u8; e.size as usize];
            self.memory.phys.read(dir.page_addr(e.start), &mut data);
            std::fs::write(&path, &data).map_err(|err| {
                RunError::Setup(format!("cannot create {}: {err}", path.display()))
            })?;
            self.share_extent(&dir, &path, &e)
                .map_err(|err| RunError::Setup(format!("cannot map {}: {err}", path.display())))?;
        }
        self.files.fs.pmem = Some((dir.guest.clone(), dir.host.clone()));
        self.files.pmem = Some(dir);
        Ok(())
    }

    /// Backs the extent's frames with the host file's pages.
    fn share_extent(&mut self, dir: &PmemDir, path: &Path, e: &Entry) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        for p in 0..e.pages {
            self.memory.phys.share_file_page(
                dir.page_addr(e.start + p),
                f.as_raw_fd(),
                p * PAGE_SIZE,
                true,
            )?;
            // Fault it in for writing, so that saving the image (which
            // reads the pages the host has mapped) finds it.
            let at = dir.page_addr(e.start + p);
            let mut b = [0u8; 1];
            self.memory.phys.read(at, &mut b);
            self.memory.phys.write(at, &b);
        }
        Ok(())
    }

    /// Writes a changed table entry back to the persistence domain.
    fn store_entry(&mut self, slot: usize) {
        let Some(dir) = self.files.pmem.as_ref() else {
            return;
        };
        let at = dir.table() + (slot as u64 + 1) * ENTRY;
        let line = encode(dir.slots[slot].as_ref());
        self.memory.phys.write(at, line.as_bytes());
        self.memory.phys.persist_sync(at);
    }

    /// Writes `pages` pages from `page` of the partition back to the
    /// persistence domain.
    fn write_back_pages(&mut self, page: u64, pages: u64) {
        let Some(dir) = self.files.pmem.as_ref() else {
            return;
        };
        let (from, to) = (dir.page_addr(page), dir.page_addr(page + pages));
        let line = self
            .memory
            .phys
            .domain()
            .map_or(64, rvnvmm_mem::persist::Domain::line_bytes);
        let mut a = from;
        while a < to {
            self.memory.phys.persist_sync(a);
            a += line;
        }
    }

    /// Before the host runs `op`: the directory keeps regular files only,
    /// as a flat table, so a directory or another kind of node made inside
    /// it is refused (EPERM).
    pub(crate) fn pmem_before(&mut self, op: &FileOp) -> Result<(), Errno> {
        if let FileOp::Wrote(fd) = *op {
            self.pmem_snapshot_for_trace(fd);
        }
        let (dirfd, path, regular) = match *op {
            FileOp::MakeDir { dirfd, path } => (dirfd, path, false),
            FileOp::MakeNode { dirfd, path, mode } => (
                dirfd,
                path,
                matches!(mode & libc::S_IFMT, 0 | libc::S_IFREG),
            ),
            _ => return Ok(()),
        };
        let p = self.read_cstr(path)?;
        if !regular && self.files.fs.inside_pmem_dir(dirfd, &p) {
            return Err(EPERM);
        }
        Ok(())
    }

    /// After `op` succeeded with `r`: the table and the extents follow
    /// what changed (ENOSPC when a file outgrows the partition, and a file
    /// just opened that the directory cannot take is closed again); an
    /// `fsync` writes the file's lines back.
    pub(crate) fn pmem_after(&mut self, op: &FileOp, r: i64) -> SysResult {
        match *op {
            FileOp::MakeDir { .. } => {}
            FileOp::MakeNode { .. } | FileOp::Names => self.pmem_sync()?,
            FileOp::Opened => {
                self.pmem_file_changed(r as i32).inspect_err(|_| {
                    // SAFETY: close takes an integer; `r` was opened by this call.
                    unsafe { libc::close(r as i32) };
                })?
            }
            FileOp::Wrote(fd) => {
                self.pmem_trace_host_writes();
                self.pmem_file_changed(fd)?
            }
            FileOp::Synced(fd) => self.pmem_fsync(fd),
        }
        Ok(r)
    }

    /// Before a call that writes the file `fd` has open through the host,
    /// when a persistence trace is recorded: a copy of the file's extent,
    /// since the host's write changes region memory where the trace does
    /// not see it.
    fn pmem_snapshot_for_trace(&mut self, fd: i32) {
        if !self.memory.phys.traces_persistence() {
            return;
        }
        let Some(Ok((at, len))) = self.pmem_extent_of_fd(fd) else {
            return;
        };
        let mut before = vec![0u8; len as usize];
        self.memory.phys.read(at, &mut before);
        if let Some(dir) = self.files.pmem.as_mut() {
            dir.traced_before = Some((at, before));
        }
    }

    /// After such a call: the lines of the extent it changed go to the
    /// trace as writes.
    fn pmem_trace_host_writes(&mut self) {
        let Some((at, before)) = self
            .files
            .pmem
            .as_mut()
            .and_then(|d| d.traced_before.take())
        else {
            return;
        };
        let mut now = vec![0u8; before.len()];
        self.memory.phys.read(at, &mut now);
        const CHUNK: usize = 64;
        let mut i = 0;
        while i < now.len() {
            let n = CHUNK.min(now.len() - i);
            if now[i..i + n] != before[i..i + n] {
                self.memory.phys.trace_write(at + i as u64, n as u64);
            }
            i += n;
        }
    }

    /// The file `fd` has open may have been created or resized: the table
    /// follows if it is one of the directory's.
    fn pmem_file_changed(&mut self, fd: i32) -> Result<(), Errno> {
        if self.pmem_name_of_fd(fd).is_some() {
            self.pmem_sync()?;
        }
        Ok(())
    }

    /// The table's name of the file `fd` has open, if it is one of the
    /// directory's.
    pub(crate) fn pmem_name_of_fd(&self, fd: i32) -> Option<Vec<u8>> {
        let dir = self.files.pmem.as_ref()?;
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
        if target.parent()? != dir.host {
            return None;
        }
        Some(target.file_name()?.as_bytes().to_vec())
    }

    /// The physical address and size of the extent of the file `fd` has
    /// open, after bringing the table up to date with it.
    pub(crate) fn pmem_extent_of_fd(&mut self, fd: i32) -> Option<Result<(u64, u64), Errno>> {
        self.pmem_name_of_fd(fd)?;
        if let Err(e) = self.pmem_sync() {
            return Some(Err(e));
        }
        let name = self.pmem_name_of_fd(fd)?;
        let dir = self.files.pmem.as_ref()?;
        let e = dir.slots[dir.slot(&name)?].as_ref()?;
        Some(Ok((dir.page_addr(e.start), e.pages * PAGE_SIZE)))
    }

    /// After a call that may have changed the directory (a file created,
    /// grown, shrunk, renamed or removed): the table and the extents follow
    /// the host directory. ENOSPC when a file outgrows the partition (it
    /// is cut back to what its extent holds).
    pub(crate) fn pmem_sync(&mut self) -> Result<(), Errno> {
        let Some(dir) = self.files.pmem.as_ref() else {
            return Ok(());
        };
        let mut found: Vec<(Vec<u8>, u64)> = Vec::new();
        let entries = std::fs::read_dir(&dir.host).map_err(|_| EIO)?;
        for d in entries.flatten() {
            // Not followed: a symbolic link is not one of the files.
            let Ok(md) = std::fs::symlink_metadata(d.path()) else {
                continue;
            };
            if md.is_file() {
                found.push((d.file_name().as_bytes().to_vec(), md.len()));
            }
        }
        found.sort();
        // Gone (unlinked, or renamed away): free the extent.
        for i in 0..dir.slots.len() {
            let gone = self.files.pmem.as_ref().expect("checked").slots[i]
                .as_ref()
                .is_some_and(|e| !found.iter().any(|(n, _)| *n == e.name));
            if gone {
                // Shrinking to nothing moves nothing: it cannot fail.
                let _ = self.pmem_resize_slot(i, 0, None);
                self.files.pmem.as_mut().expect("checked").slots[i] = None;
                self.store_entry(i);
            }
        }
        let mut result = Ok(());
        for (name, size) in found {
            let dir = self.files.pmem.as_ref().expect("checked");
            let slot = match dir.slot(&name) {
                Some(s) => s,
                None => {
                    let free = dir.slots.iter().position(Option::is_none);
                    let refused = match free {
                        None => Some(ENOSPC),
                        Some(_) if name.len() > NAME_MAX => Some(ENAMETOOLONG),
                        Some(_) => None,
                    };
                    if let Some(e) = refused {
                        // Not one of the directory's files: it goes again.
                        let _ =
                            std::fs::remove_file(dir.host.join(std::ffi::OsStr::from_bytes(&name)));
                        result = Err(e);
                        continue;
                    }
                    let free = free.expect("checked");
                    let start = dir.find_free(0, None).unwrap_or(0);
                    self.files.pmem.as_mut().expect("checked").slots[free] = Some(Entry {
                        name: name.clone(),
                        size: 0,
                        start,
                        pages: 0,
                    });
                    self.store_entry(free);
                    free
                }
            };
            let e = self.files.pmem.as_ref().expect("checked").slots[slot]
                .clone()
                .expect("set");
            if e.size != size {
                let path = self
                    .files
                    .pmem
                    .as_ref()
                    .expect("checked")
                    .host
                    .join(std::ffi::OsStr::from_bytes(&name));
                if let Err(err) = self.pmem_resize_slot(slot, size, Some(&path)) {
                    result = Err(err);
                }
            }
        }
        result
    }

    /// Gives slot `i`'s file `size` bytes of extent (moving it if it cannot
    /// grow in place), sharing new pages with the host file at `path`.
    fn pmem_resize_slot(&mut self, i: usize, size: u64, path: Option<&Path>) -> Result<(), Errno> {
        let dir = self.files.pmem.as_ref().expect("pmem dir");
        let e = dir.slots[i].clone().expect("slot in use");
        let pages = size.div_ceil(PAGE_SIZE);
        let keep = pages.min(e.pages);
        // Pages the file no longer has go back to private memory first:
        // past the host file's end they would fault on access.
        let dropped: Vec<u64> = (pages..e.pages)
            .map(|p| dir.page_addr(e.start + p))
            .collect();
        for a in dropped {
            self.memory.phys.discard_page(a);
        }
        let mut entry = Entry {
            size,
            pages,
            ..e.clone()
        };
        if pages > e.pages {
            let dir = self.files.pmem.as_ref().expect("pmem dir");
            let in_place = e.start + pages <= dir.data_pages()
                && dir
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .filter_map(|(_, s)| s.as_ref())
                    .all(|o| {
                        o.pages == 0 || o.start + o.pages <= e.start || o.start >= e.start + pages
                    });
            let start = if in_place {
                e.start
            } else {
                let Some(s) = dir.find_free(pages, Some(i)) else {
                    // Cut the file back to what its extent holds.
                    if let Some(p) = path {
                        let _ = std::fs::OpenOptions::new()
                            .write(true)
                            .open(p)
                            .and_then(|f| f.set_len(e.size));
                    }
                    return Err(ENOSPC);
                };
                for p in 0..keep {
                    self.memory.phys.discard_page(dir.page_addr(e.start + p));
                }
                s
            };
            entry.start = start;
            let dir = self.files.pmem.take().expect("pmem dir");
            let shared = path.map_or(Ok(()), |p| self.share_extent(&dir, p, &entry));
            self.files.pmem = Some(dir);
            shared.map_err(|_| EIO)?;
            // The pages reach the domain before the entry naming them.
            if start == e.start {
                self.write_back_pages(start + keep, pages - keep);
            } else {
                self.write_back_pages(start, pages);
            }
        }
        self.files.pmem.as_mut().expect("pmem dir").slots[i] = Some(entry);
        self.store_entry(i);
        Ok(())
    }

    /// `fsync` of a directory's file: its lines are written back.
    fn pmem_fsync(&mut self, fd: i32) {
        let Some(name) = self.pmem_name_of_fd(fd) else {
            return;
        };
        let _ = self.pmem_sync();
        let Some(dir) = self.files.pmem.as_ref() else {
            return;
        };
        let Some(e) = dir.slot(&name).and_then(|s| dir.slots[s].clone()) else {
            return;
        };
        self.write_back_pages(e.start, e.pages);
    }

    /// `msync` of `[paddr, paddr + len)` of a directory's mapping: its
    /// lines are written back.
    pub(crate) fn pmem_msync(&mut self, paddr: u64, len: u64) {
        let Some(dir) = self.files.pmem.as_ref() else {
            return;
        };
        if paddr < dir.base || paddr >= dir.base + dir.size {
            return;
        }
        let first = (paddr - dir.base) / PAGE_SIZE;
        if first == 0 {
            return;
        }
        self.write_back_pages(first - 1, len.div_ceil(PAGE_SIZE));
    }
}
