//! The process's side of the emulated /proc and /sys: the contents of its
//! files, made from the running process.

use super::*;
use crate::process::Process;

impl Process {
    /// The emulated file `path` (relative to `dirfd`) names, if any.
    pub(crate) fn emulated_file(&self, dirfd: i32, path: &[u8]) -> Option<ProcFile> {
        // A relative name is resolved (a look at the directory
        // descriptor) only when its last component can be ours.
        if path.first() != Some(&b'/') {
            let last = path.rsplit(|&c| c == b'/').next().unwrap_or_default();
            let ours = matches!(
                last,
                b"maps"
                    | b"smaps"
                    | b"stat"
                    | b"status"
                    | b"auxv"
                    | b"cmdline"
                    | b"environ"
                    | b"comm"
                    | b"cpuinfo"
                    | b"meminfo"
                    | b"online"
                    | b"possible"
                    | b"present"
                    | b"uuid"
                    | b"numa_maps"
            ) || TopologyFile::by_name(last).is_some()
                || NodeFile::by_name(last).is_some()
                || NODE_LISTS.iter().any(|n| n.as_bytes() == last);
            if !ours {
                return None;
            }
        }
        let abs = self.files.fs.guest_absolute(dirfd, path)?;
        ProcFile::by_path(
            &abs,
            self.pid,
            self.opts.harts,
            self.memory.aspace.numa.online(),
        )
    }

    /// Opens an emulated file: a read-only memfd holding its content now.
    pub(crate) fn open_emulated(&mut self, file: ProcFile, flags: i32) -> SysResult {
        if flags & libc::O_ACCMODE != libc::O_RDONLY {
            return Err(EACCES);
        }
        if flags & libc::O_DIRECTORY != 0 {
            return Err(ENOTDIR);
        }
        let content = self.emulated_content(file);
        // SAFETY: memfd_create with a NUL-terminated name; the buffer is
        // valid for its length; the descriptor is closed on every path.
        unsafe {
            let fd = libc::memfd_create(c"rvnvmm-proc".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return Err(Errno::last_host());
            }
            let mut done = 0;
            while done < content.len() {
                let n = libc::write(fd, content[done..].as_ptr().cast(), content.len() - done);
                if n <= 0 {
                    let e = Errno::last_host();
                    libc::close(fd);
                    return Err(e);
                }
                done += n as usize;
            }
            // Reopen read-only, so writes fail with EBADF as on /proc.
            let path = format!("/proc/self/fd/{fd}\0");
            let ro = libc::open(
                path.as_ptr().cast(),
                libc::O_RDONLY | (flags & (libc::O_CLOEXEC | libc::O_NONBLOCK)),
            );
            let e = Errno::last_host();
            libc::close(fd);
            if ro < 0 {
                return Err(e);
            }
            Ok(ro as i64)
        }
    }

    /// The machine's cores and threads, as every file describing them
    /// tells (the tree's listing and the files' contents alike).
    pub(crate) fn topology(&self) -> Topology {
        Topology::new(self.opts.harts, self.opts.threads_per_core)
    }

    fn emulated_content(&mut self, file: ProcFile) -> Vec<u8> {
        let topology = self.topology();
        match file {
            ProcFile::Cpuinfo => {
                // The harts' mvendorid, marchid and mimpid CSRs read zero.
                cpuinfo(self.opts.harts, &self.opts.hart.isa.to_string(), (0, 0, 0)).into_bytes()
            }
            ProcFile::Meminfo => {
                let entries = self.maps_entries(true);
                let anon: u64 = entries.iter().filter(|e| e.inode == 0).map(|e| e.rss).sum();
                let file: u64 = entries.iter().filter(|e| e.inode != 0).map(|e| e.rss).sum();
                meminfo(
                    self.memory.aspace.frames.pool_bytes(0),
                    self.memory.aspace.frames.free_bytes(0),
                    anon,
                    file,
                )
                .into_bytes()
            }
            ProcFile::Maps => self
                .maps_entries(false)
                .iter()
                .map(MapsEntry::line)
                .collect::<String>()
                .into_bytes(),
            ProcFile::Smaps => self
                .maps_entries(true)
                .iter()
                .map(MapsEntry::smaps)
                .collect::<String>()
                .into_bytes(),
            ProcFile::Stat => self.process_info().stat().into_bytes(),
            ProcFile::Status => self.process_info().status().into_bytes(),
            ProcFile::Auxv => auxv_bytes(&self.image.auxv),
            // As Linux, what the stack holds now (a program may rewrite its
            // arguments); an area the program unmapped reads as empty.
            ProcFile::Cmdline | ProcFile::Environ => {
                let (start, end) = if file == ProcFile::Cmdline {
                    self.image.arg_area
                } else {
                    self.image.env_area
                };
                let mut buf = vec![0u8; end.saturating_sub(start) as usize];
                match self.read_mem(start, &mut buf) {
                    Ok(()) => buf,
                    Err(_) => Vec::new(),
                }
            }
            ProcFile::Comm => {
                let comm = self.threads.current().comm;
                let len = comm.iter().position(|&c| c == 0).unwrap_or(16);
                let mut v = comm[..len].to_vec();
                v.push(b'\n');
                v
            }
            ProcFile::CpuRange => {
                let all: Vec<usize> = (0..self.opts.harts).collect();
                (cpu_list(&all) + "\n").into_bytes()
            }
            ProcFile::Topology { cpu, file } => topology.file(cpu, file).into_bytes(),
            ProcFile::NumaMaps => self.numa_maps().into_bytes(),
            ProcFile::NodeList { cpus } => {
                let numa = &self.memory.aspace.numa;
                let list = if cpus {
                    crate::numa::NodeMask::of(numa.local())
                } else {
                    numa.online()
                };
                (node_list(list) + "\n").into_bytes()
            }
            ProcFile::Node { node, file } => self.node_content(node, file).into_bytes(),
            ProcFile::RandomUuid => {
                let mut b = [0u8; 16];
                self.random_bytes(&mut b);
                random_uuid(b).into_bytes()
            }
        }
    }

    /// A file of node `node`'s directory.
    fn node_content(&self, node: u32, file: NodeFile) -> String {
        let a = &self.memory.aspace;
        let numa = &a.numa;
        let cpus: Vec<usize> = if node == numa.local() {
            (0..self.opts.harts).collect()
        } else {
            Vec::new()
        };
        match file {
            NodeFile::CpuMap => cpu_mask(&cpus, self.opts.harts) + "\n",
            NodeFile::CpuList => cpu_list(&cpus) + "\n",
            NodeFile::Distance => {
                let d: Vec<String> = numa
                    .ids()
                    .map(|to| numa.distance(node, to).to_string())
                    .collect();
                d.join(" ") + "\n"
            }
            NodeFile::Meminfo => {
                let pools = numa.pools_of(node);
                let total = pools.iter().map(|&p| a.frames.pool_bytes(p)).sum();
                let free = pools.iter().map(|&p| a.frames.free_bytes(p)).sum();
                node_meminfo(node, total, free)
            }
            NodeFile::Numastat => node_numastat(&numa.counters_of(node)),
        }
    }

    /// `/proc/self/numa_maps`: each area's start, policy, kind and
    /// resident pages by node, as Linux's `show_numa_map` prints them.
    fn numa_maps(&self) -> String {
        let a = &self.memory.aspace;
        let task = self.threads.current().mempolicy;
        let mut out = String::new();
        for ((&start, v), e) in a.vmas.iter().zip(self.maps_entries(false)) {
            let policy = v
                .policy
                .or(task)
                .map_or_else(|| "default".to_string(), |p| policy_text(&p));
            let _ = write!(out, "{start:08x} {policy}");
            match e.name.as_str() {
                "[heap]" => out += " heap",
                "[stack]" => out += " stack",
                _ if e.inode != 0 => {
                    let _ = write!(out, " file={}", e.name);
                }
                _ => {}
            }
            let pages = a.area_pages(&self.memory.phys, start, v.end);
            if pages.pages > 0 {
                if pages.anon > 0 {
                    let _ = write!(out, " anon={}", pages.anon);
                }
                if pages.dirty > 0 {
                    let _ = write!(out, " dirty={}", pages.dirty);
                }
                if pages.pages != pages.anon && pages.pages != pages.dirty {
                    let _ = write!(out, " mapped={}", pages.pages);
                }
                for (node, n) in &pages.by_node {
                    let _ = write!(out, " N{node}={n}");
                }
                out += " kernelpagesize_kB=4";
            }
            out.push('\n');
        }
        out
    }

    /// The areas of the address space as `/proc/self/maps` lists them,
    /// with resident sizes when `rss`.
    fn maps_entries(&self, rss: bool) -> Vec<MapsEntry> {
        let a = &self.memory.aspace;
        let mut out = Vec::new();
        for (&start, v) in &a.vmas {
            let mut e = MapsEntry {
                start,
                end: v.end,
                prot: v.prot,
                shared: v.file.as_ref().is_some_and(|f| f.shared),
                offset: 0,
                dev: (0, 0),
                inode: 0,
                name: String::new(),
                rss: if rss {
                    a.resident_pages(&self.memory.phys, start, v.end) * PAGE_SIZE
                } else {
                    0
                },
            };
            let dev_of = |d: u64| (libc::major(d), libc::minor(d));
            match (&v.file, &v.image) {
                (Some(f), _) if v.name != "[anon]" => {
                    let mut st = crate::fs::unsafe_zeroed_stat();
                    // SAFETY: fstat on a descriptor the area owns.
                    if unsafe { libc::fstat(f.fd.as_raw_fd(), &mut st) } == 0 {
                        e.dev = dev_of(st.st_dev);
                        e.inode = st.st_ino;
                    }
                    e.offset = f.offset;
                    e.name = v.name.clone();
                }
                (_, Some(i)) => {
                    e.dev = dev_of(i.dev);
                    e.inode = i.ino;
                    e.offset = i.offset;
                    e.name = v.name.clone();
                }
                (None, None) if matches!(v.backing, Backing::Physical { .. }) => {
                    // A device window: the offset is into the device.
                    if let (Backing::Physical { base }, Some(dev)) = (
                        &v.backing,
                        crate::devices::Device::by_path(v.name.as_bytes()),
                    ) {
                        let dev_base = self.device_window(dev, 0, 0).unwrap_or(*base);
                        e.offset = base - dev_base;
                    }
                    e.shared = true;
                    e.name = v.name.clone();
                }
                _ => {
                    let heap = v.backing == Backing::Heap
                        && start <= a.brk
                        && v.end >= a.brk_start
                        && a.brk > a.brk_start;
                    e.name = if heap {
                        "[heap]".into()
                    } else if v.name.starts_with('[') && v.name != "[anon]" && v.name != "[heap]" {
                        v.name.clone()
                    } else {
                        String::new()
                    };
                }
            }
            out.push(e);
        }
        out
    }

    fn process_info(&self) -> ProcessInfo {
        let entries = self.maps_entries(true);
        let exe = &self.files.fs.exe_guest;
        let code = entries
            .iter()
            .filter(|e| &e.name == exe && e.prot & PROT_EXEC != 0)
            .fold(None, |acc: Option<(u64, u64)>, e| {
                Some(acc.map_or((e.start, e.end), |(s, t)| (s.min(e.start), t.max(e.end))))
            })
            .unwrap_or((0, 0));
        let stack = entries.iter().find(|e| e.name == "[stack]");
        let t = self.threads.current();
        let comm_len = t.comm.iter().position(|&c| c == 0).unwrap_or(16);
        // SAFETY: these calls have no preconditions.
        let (pgrp, session, uid, gid) = unsafe {
            (
                libc::getpgrp(),
                libc::getsid(0),
                libc::getuid(),
                libc::getgid(),
            )
        };
        let (ppid, pgrp, session) = (
            self.guest_ppid(),
            self.guest_group_id(pgrp),
            self.guest_group_id(session),
        );
        ProcessInfo {
            mems_allowed: self.mems_allowed(),
            pid: self.pid,
            ppid,
            pgrp,
            session,
            comm: String::from_utf8_lossy(&t.comm[..comm_len]).into_owned(),
            threads: self.threads.all.len(),
            vsize: entries.iter().map(|e| e.end - e.start).sum(),
            rss: entries.iter().map(|e| e.rss).sum(),
            stack_rss: stack.map_or(0, |s| s.rss),
            stack_size: stack.map_or(0, |s| s.end - s.start),
            code,
            start_stack: self.image.start_stack,
            brk: (self.memory.aspace.brk_start, self.memory.aspace.brk),
            data: self.memory.aspace.data_bytes(0, crate::vm::USER_TOP),
            processor: t.cpu,
            harts: self.opts.harts,
            umask: self.files.umask,
            uid,
            gid,
        }
    }
}
