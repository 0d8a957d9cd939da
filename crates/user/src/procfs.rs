//! The `/proc` and `/sys` files that describe the machine and the process,
//! synthesised from the emulated machine rather than passed through from
//! the host (as qemu-user's `fake_open` does): `/proc/cpuinfo`,
//! `/proc/meminfo`, `/proc/self/{maps,smaps,stat,status,auxv}` and
//! `/sys/devices/system/cpu/{online,possible,present}` with each hart's
//! `topology/` files.
//!
//! An open of one of these paths hands the guest a memfd holding the
//! content as of the open, so reads, `lseek`, `dup` and `fork` behave as
//! for any file. The formatters here are pure functions of their inputs.

use crate::errno::*;
use crate::vm::{Backing, PROT_EXEC};
use rvnvmm_mem::sv39::PAGE_SIZE;
use std::fmt::Write;
use std::os::fd::AsRawFd;

mod contents;
mod nodes;

pub use nodes::{node_list, node_meminfo, node_numastat, policy_text, NodeFile, NODE_LISTS};

/// A file of the emulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcFile {
    /// `/proc/cpuinfo`.
    Cpuinfo,
    /// `/proc/meminfo`.
    Meminfo,
    /// `/proc/self/maps`.
    Maps,
    /// `/proc/self/smaps`.
    Smaps,
    /// `/proc/self/stat`.
    Stat,
    /// `/proc/self/status`.
    Status,
    /// `/proc/self/auxv`.
    Auxv,
    /// `/proc/self/cmdline`: the argument strings on the stack.
    Cmdline,
    /// `/proc/self/environ`: the environment strings on the stack.
    Environ,
    /// `/proc/self/comm`: the thread's name.
    Comm,
    /// `/sys/devices/system/cpu/{online,possible,present}`: all harts.
    CpuRange,
    /// `/proc/sys/kernel/random/uuid`: a new random UUID at every open,
    /// from the run's deterministic generator (PMDK names its pools with
    /// them; the host's would make two runs differ).
    RandomUuid,
    /// `/sys/devices/system/cpu/cpuN/topology/FILE`.
    Topology {
        /// The hart.
        cpu: usize,
        /// Which file.
        file: TopologyFile,
    },
    /// `/proc/self/numa_maps`.
    NumaMaps,
    /// A node list of `/sys/devices/system/node`: `has_cpu` (`cpus`), or
    /// `online`, `possible`, `has_memory`, `has_normal_memory` (every
    /// node).
    NodeList {
        /// Only the nodes with CPUs.
        cpus: bool,
    },
    /// `/sys/devices/system/node/nodeN/FILE`.
    Node {
        /// The node.
        node: u32,
        /// Which file.
        file: NodeFile,
    },
}

/// The files of a hart's `topology/` directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFile {
    /// `core_id`.
    CoreId,
    /// `physical_package_id`.
    PackageId,
    /// `cluster_id`.
    ClusterId,
    /// `thread_siblings` (a mask).
    ThreadSiblings,
    /// `thread_siblings_list`.
    ThreadSiblingsList,
    /// `core_siblings` (a mask): the harts of the package.
    CoreSiblings,
    /// `core_siblings_list`.
    CoreSiblingsList,
    /// `cluster_cpus` (a mask): the harts of the cluster (the device
    /// tree's one `cluster0`: every hart).
    ClusterCpus,
    /// `cluster_cpus_list`.
    ClusterCpusList,
}

impl TopologyFile {
    fn by_name(name: &[u8]) -> Option<TopologyFile> {
        Some(match name {
            b"core_id" => TopologyFile::CoreId,
            b"physical_package_id" => TopologyFile::PackageId,
            b"cluster_id" => TopologyFile::ClusterId,
            b"thread_siblings" | b"core_cpus" => TopologyFile::ThreadSiblings,
            b"thread_siblings_list" | b"core_cpus_list" => TopologyFile::ThreadSiblingsList,
            b"core_siblings" | b"package_cpus" => TopologyFile::CoreSiblings,
            b"core_siblings_list" | b"package_cpus_list" => TopologyFile::CoreSiblingsList,
            b"cluster_cpus" => TopologyFile::ClusterCpus,
            b"cluster_cpus_list" => TopologyFile::ClusterCpusList,
            _ => return None,
        })
    }
}

impl TopologyFile {
    /// The names a hart's `topology` directory lists (Linux 6.12's on a
    /// device-tree machine, whose `arch_topology` has clusters), with the
    /// file each one is.
    pub const LISTED: [(&'static str, TopologyFile); 13] = [
        ("cluster_cpus", TopologyFile::ClusterCpus),
        ("cluster_cpus_list", TopologyFile::ClusterCpusList),
        ("cluster_id", TopologyFile::ClusterId),
        ("core_cpus", TopologyFile::ThreadSiblings),
        ("core_cpus_list", TopologyFile::ThreadSiblingsList),
        ("core_id", TopologyFile::CoreId),
        ("core_siblings", TopologyFile::CoreSiblings),
        ("core_siblings_list", TopologyFile::CoreSiblingsList),
        ("package_cpus", TopologyFile::CoreSiblings),
        ("package_cpus_list", TopologyFile::CoreSiblingsList),
        ("physical_package_id", TopologyFile::PackageId),
        ("thread_siblings", TopologyFile::ThreadSiblings),
        ("thread_siblings_list", TopologyFile::ThreadSiblingsList),
    ];
}

/// The emulated `/proc` and `/sys` as a host directory tree, so that
/// listing them (`getdents64`: hwloc, `lscpu` and OpenMP runtimes count the
/// `cpuN` entries; `ps`-like tools walk `/proc/self`) and `stat` of their
/// entries show what the emulator provides, never the host's CPUs or the
/// host process's entries. The file contents are not read from here (opens
/// of the emulated files get a memfd, [`ProcFile`]); the tree gives names,
/// types and modes. The guest's descriptors are host descriptors, so a
/// directory it opens, lists, `fchdir`s to or resolves names against must
/// be a host directory: hence a tree on the host, not synthesised listings.
///
/// The tree outlives the process that made it as long as a forked child
/// shares it: every process holds one open file description of the tree's
/// root with a shared `flock` (a fork inherits it), and the process that
/// finds no other holder when it lets go removes the tree. The kernel does
/// the counting, so a child that outlives `rvnvmm run`, or a parent that
/// dies by a signal, needs no message between processes.
#[derive(Debug)]
pub struct EmulatedTree {
    /// The host directory standing for the guest's `/`.
    root: std::path::PathBuf,
    /// The locked descriptor of `root` this process holds.
    hold: Option<std::os::fd::OwnedFd>,
}

/// Where the emulated CPU tree is mounted in the guest.
const SYS_CPU: &[u8] = b"/sys/devices/system/cpu";

/// The names a process's directory lists (Linux's `/proc/<pid>` has more:
/// those are not emulated and are `ENOENT`). `fd` and `fdinfo` are the
/// host's own (guest descriptors are host descriptors), the rest emulated.
pub const PROCESS_DIR: [&str; 12] = [
    "auxv",
    "cmdline",
    "comm",
    "environ",
    "exe",
    "fd",
    "fdinfo",
    "maps",
    "numa_maps",
    "smaps",
    "stat",
    "status",
];

/// How a guest path of the emulated tree reaches the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreePath {
    /// A name in the tree.
    Tree(std::path::PathBuf),
    /// The host's `/proc/self/` + this (`fd/...`, `fdinfo/...`).
    HostSelf(String),
    /// The process's `exe`.
    Exe,
}

impl EmulatedTree {
    /// Writes the tree of a machine of `topology` and memory nodes
    /// `nodes` (the harts on node `cpu_node`) under a new host temporary
    /// directory, and holds it.
    pub fn build(
        topology: Topology,
        nodes: crate::numa::NodeMask,
        cpu_node: u32,
    ) -> std::io::Result<EmulatedTree> {
        use std::fs;
        use std::os::unix::fs::{symlink, PermissionsExt};
        let base = std::env::temp_dir();
        sweep_abandoned_trees(&base, ABANDONED_AFTER);
        let mut root = None;
        for attempt in 0..100u32 {
            let dir = base.join(format!("{TREE_PREFIX}{}-{attempt}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => {
                    root = Some(dir);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        let root = root.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists))?;
        // Held before anything else, so a failure below still removes it.
        let mut tree = EmulatedTree { root, hold: None };
        tree.hold = Some(lock(&tree.root, libc::LOCK_SH)?);
        let file = |path: std::path::PathBuf, content: &str, mode: u32| {
            fs::write(&path, content)?;
            fs::set_permissions(&path, fs::Permissions::from_mode(mode))
        };
        let proc = tree.root.join("proc");
        let own = proc.join("self");
        fs::create_dir_all(&own)?;
        for name in ["cpuinfo", "meminfo"] {
            file(proc.join(name), "", 0o444)?;
        }
        symlink("self", proc.join("thread-self"))?;
        for name in PROCESS_DIR {
            match name {
                "fd" | "fdinfo" => fs::create_dir(own.join(name))?,
                // Read through the process's own path (`TreePath::Exe`);
                // the link in the tree gives `lstat` its type only.
                "exe" => symlink("/", own.join(name))?,
                "auxv" | "environ" => file(own.join(name), "", 0o400)?,
                _ => file(own.join(name), "", 0o444)?,
            }
        }
        let cpu = tree.root.join("sys/devices/system/cpu");
        fs::create_dir_all(&cpu)?;
        let all: Vec<usize> = (0..topology.harts).collect();
        for name in ["online", "possible", "present"] {
            fs::write(cpu.join(name), cpu_list(&all) + "\n")?;
        }
        for name in ["offline", "isolated"] {
            fs::write(cpu.join(name), "\n")?;
        }
        for h in 0..topology.harts {
            let dir = cpu.join(format!("cpu{h}")).join("topology");
            fs::create_dir_all(&dir)?;
            for (name, file) in TopologyFile::LISTED {
                fs::write(dir.join(name), topology.file(h, file))?;
            }
        }
        nodes::write_tree(
            &tree.root.join("sys/devices/system"),
            nodes,
            cpu_node,
            topology.harts,
        )?;
        Ok(tree)
    }

    /// The descriptor this process holds the tree by (the guest may not
    /// close or reach it).
    pub fn hold_fd(&self) -> Option<i32> {
        use std::os::fd::AsRawFd;
        self.hold.as_ref().map(|f| f.as_raw_fd())
    }

    /// Where the absolute guest `path` leads if the tree answers it:
    /// `/proc/self`, `/proc/thread-self` and `/proc/<pid>` of the calling
    /// process (`pid`) and what is below them, `/sys/devices/system/cpu` and
    /// below, and with `whole` (a `--root`, where the guest sees no host
    /// directory) all of `/proc` and `/sys`. A name the tree lacks is a
    /// missing host name: `ENOENT`.
    pub fn host_path(&self, path: &[u8], pid: u32, whole: bool) -> Option<TreePath> {
        if path.first() != Some(&b'/') {
            return None;
        }
        let p = normalise(path);
        let below = |prefix: &[u8]| -> Option<String> {
            let rest = p.strip_prefix(prefix)?;
            if !(rest.is_empty() || rest.starts_with(b"/")) {
                return None;
            }
            Some(
                std::str::from_utf8(rest)
                    .ok()?
                    .trim_matches('/')
                    .to_string(),
            )
        };
        if let Some(rest) = p.strip_prefix(b"/proc/") {
            let (dir, after) = match rest.iter().position(|&c| c == b'/') {
                Some(i) => (&rest[..i], std::str::from_utf8(&rest[i + 1..]).ok()?),
                None => (rest, ""),
            };
            let own = dir == b"self"
                || dir == b"thread-self"
                || std::str::from_utf8(dir).ok()?.parse::<u32>().ok() == Some(pid);
            if own {
                let first = after.split('/').next().unwrap_or_default();
                return Some(match first {
                    "exe" if after == "exe" => TreePath::Exe,
                    "fd" | "fdinfo" => TreePath::HostSelf(after.to_string()),
                    _ => TreePath::Tree(self.root.join("proc/self").join(after)),
                });
            }
        }
        if whole {
            for top in ["proc", "sys"] {
                if let Some(rest) = below(format!("/{top}").as_bytes()) {
                    return Some(TreePath::Tree(self.root.join(top).join(rest)));
                }
            }
        }
        if let Some(rest) = below(nodes::SYS_NODE) {
            return Some(TreePath::Tree(
                self.root.join("sys/devices/system/node").join(rest),
            ));
        }
        let rest = below(SYS_CPU)?;
        Some(TreePath::Tree(
            self.root.join("sys/devices/system/cpu").join(rest),
        ))
    }

    /// The host path of `rest` in the process's directory of the tree.
    /// A host path of the emulator's own inside the tree's directory,
    /// outside the guest's `/proc` and `/sys` (the NVMM-backed directory's
    /// files live there), removed with the tree.
    pub fn scratch(&self, name: &str) -> std::path::PathBuf {
        self.root.join(format!(".{name}"))
    }

    pub fn own(&self, rest: &str) -> std::path::PathBuf {
        self.root.join("proc/self").join(rest)
    }

    /// The guest path of a host path inside the tree.
    pub fn guest_path(&self, host: &std::path::Path) -> Option<String> {
        let rest = host.strip_prefix(&self.root).ok()?;
        Some(format!("/{}", rest.display()))
    }

    /// Lets go of the tree, and removes it if no other process holds it.
    pub fn release(&mut self) {
        if self.hold.take().is_none() {
            return;
        }
        // Closing ours first: the exclusive lock is then granted only if no
        // process (a forked child holds the same description) keeps one.
        if lock(&self.root, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// How the trees' directories in the temporary directory are named.
const TREE_PREFIX: &str = "rvnvmm-tree-";

/// How old an unheld tree must be before another run removes it: older than
/// any tree between its creation and its first lock.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the trees under `base` that no process holds and that were made
/// more than `min_age` ago: those of emulators killed by SIGKILL, which
/// never let go. A tree is held while any process keeps its shared `flock`,
/// so an exclusive one granted without waiting proves it abandoned (the
/// age rules out a tree just made, not yet locked). Only this user's real
/// directories are looked at; what cannot be read or removed is left.
fn sweep_abandoned_trees(base: &std::path::Path, min_age: std::time::Duration) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(TREE_PREFIX) {
            continue;
        }
        let path = entry.path();
        // Not followed: a symbolic link of that name is not a tree.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > min_age);
        if !meta.is_dir() || meta.uid() != uid || !old {
            continue;
        }
        if let Ok(_held) = lock(&path, libc::LOCK_EX | libc::LOCK_NB) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Opens `dir` and takes the `flock` `op` on it, the descriptor out of the
/// range guests use and closed on exec.
fn lock(dir: &std::path::Path, op: i32) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let f = std::fs::File::open(dir)?;
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own.
    let high = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 900) };
    if high < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `high` is a new descriptor owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(high) };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(fd.as_raw_fd(), op) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

impl Drop for EmulatedTree {
    fn drop(&mut self) {
        self.release();
    }
}

/// Collapses repeated slashes and `.` components of an absolute path, and
/// takes `..` back a component (lexically: the directories of `/proc/self`
/// and `/sys/devices/system/cpu` are not symbolic links, and `..` of
/// `/proc/self` is `/proc` either way).
fn normalise(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for comp in path.split(|&c| c == b'/') {
        match comp {
            b"" | b"." => {}
            b".." => {
                let parent = out.iter().rposition(|&c| c == b'/').unwrap_or(0);
                out.truncate(parent);
            }
            _ => {
                out.push(b'/');
                out.extend_from_slice(comp);
            }
        }
    }
    out
}

impl ProcFile {
    /// The emulated file an absolute guest path names, if any, for the
    /// process `pid` on a machine of `harts` harts. The process's own
    /// directory is `/proc/self`, `/proc/thread-self` or `/proc/<pid>`;
    /// its memory nodes are `nodes`.
    pub fn by_path(
        path: &[u8],
        pid: i32,
        harts: usize,
        nodes: crate::numa::NodeMask,
    ) -> Option<ProcFile> {
        if path.first() != Some(&b'/') {
            return None;
        }
        let p = normalise(path);
        match &p[..] {
            b"/proc/cpuinfo" => return Some(ProcFile::Cpuinfo),
            b"/proc/meminfo" => return Some(ProcFile::Meminfo),
            b"/proc/sys/kernel/random/uuid" => return Some(ProcFile::RandomUuid),
            _ => {}
        }
        if let Some(rest) = p.strip_prefix(b"/proc/") {
            let (dir, file) = split_first(rest)?;
            let own = dir == b"self"
                || dir == b"thread-self"
                || std::str::from_utf8(dir).ok()?.parse::<i32>().ok() == Some(pid);
            if !own {
                return None;
            }
            return Some(match file {
                b"maps" => ProcFile::Maps,
                b"numa_maps" => ProcFile::NumaMaps,
                b"smaps" => ProcFile::Smaps,
                b"stat" => ProcFile::Stat,
                b"status" => ProcFile::Status,
                b"auxv" => ProcFile::Auxv,
                b"cmdline" => ProcFile::Cmdline,
                b"environ" => ProcFile::Environ,
                b"comm" => ProcFile::Comm,
                _ => return None,
            });
        }
        if let Some(rest) = p.strip_prefix(b"/sys/devices/system/node/") {
            return nodes::node_file(rest, nodes);
        }
        let rest = p.strip_prefix(b"/sys/devices/system/cpu/")?;
        if matches!(rest, b"online" | b"possible" | b"present") {
            return Some(ProcFile::CpuRange);
        }
        let (dir, file) = split_first(rest)?;
        let cpu: usize = std::str::from_utf8(dir.strip_prefix(b"cpu")?)
            .ok()?
            .parse()
            .ok()?;
        // "cpu01" is not a hart's directory.
        if cpu >= harts || dir != format!("cpu{cpu}").as_bytes() {
            return None;
        }
        let file = TopologyFile::by_name(file.strip_prefix(b"topology/")?)?;
        Some(ProcFile::Topology { cpu, file })
    }
}

/// A version-4 (random) UUID of 16 random bytes, as Linux prints one:
/// lower-case hex in 8-4-4-4-12 groups and a newline.
pub fn random_uuid(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}\n",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

fn split_first(p: &[u8]) -> Option<(&[u8], &[u8])> {
    let i = p.iter().position(|&c| c == b'/')?;
    Some((&p[..i], &p[i + 1..]))
}

/// A CPU list as Linux prints it (`0-3`, `0`, `0,2-3`).
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if i == j {
            let _ = write!(out, "{}", cpus[i]);
        } else {
            let _ = write!(out, "{}-{}", cpus[i], cpus[j]);
        }
        i = j + 1;
    }
    out
}

/// A CPU mask as Linux's `%*pb` prints one for `nr_cpus` CPUs: 32-bit
/// hexadecimal chunks separated by commas, the first only as wide as the
/// CPUs it covers.
pub fn cpu_mask(cpus: &[usize], nr_cpus: usize) -> String {
    let nr = nr_cpus.max(1);
    let chunks = nr.div_ceil(32);
    let mut out = String::new();
    for c in (0..chunks).rev() {
        let bits = if c == chunks - 1 && !nr.is_multiple_of(32) {
            nr % 32
        } else {
            32
        };
        let val: u32 = cpus
            .iter()
            .filter(|&&k| k / 32 == c)
            .fold(0, |v, &k| v | 1 << (k % 32));
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(out, "{:0w$x}", val, w = bits.div_ceil(4));
    }
    out
}

/// How harts form cores: `threads_per_core` consecutive harts share a
/// core, all in one package and cluster. This is what Linux makes of the
/// full system's device tree for the same machine (`cpu-map` with one
/// `cluster0` of `coreN` nodes, each naming its `threadM`s: see
/// `rvnvmm_board`'s device tree), so a program finds the same siblings in
/// user mode and under `rvnvmm boot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Harts of the machine.
    pub harts: usize,
    /// Hardware threads per core (1 without SMT).
    pub threads_per_core: usize,
}

impl Topology {
    /// The topology of `harts` harts in cores of `threads_per_core`
    /// (`machine.harts`, `machine.threads_per_core`), each at least 1 and
    /// no core larger than the machine.
    pub fn new(harts: usize, threads_per_core: usize) -> Topology {
        let harts = harts.max(1);
        Topology {
            harts,
            threads_per_core: threads_per_core.clamp(1, harts),
        }
    }

    /// The core hart `cpu` is a thread of.
    pub fn core_of(&self, cpu: usize) -> usize {
        cpu / self.threads_per_core.max(1)
    }

    /// The harts of hart `cpu`'s core, itself included, in order.
    pub fn siblings(&self, cpu: usize) -> std::ops::Range<usize> {
        let t = self.threads_per_core.max(1);
        let core = self.core_of(cpu);
        core * t..((core + 1) * t).min(self.harts)
    }

    /// The content of one topology file of hart `cpu`, newline included.
    pub fn file(&self, cpu: usize, file: TopologyFile) -> String {
        let siblings: Vec<usize> = self.siblings(cpu).collect();
        let package: Vec<usize> = (0..self.harts).collect();
        let s = match file {
            TopologyFile::CoreId => self.core_of(cpu).to_string(),
            TopologyFile::PackageId | TopologyFile::ClusterId => "0".into(),
            TopologyFile::ThreadSiblings => cpu_mask(&siblings, self.harts),
            TopologyFile::ThreadSiblingsList => cpu_list(&siblings),
            TopologyFile::CoreSiblings | TopologyFile::ClusterCpus => {
                cpu_mask(&package, self.harts)
            }
            TopologyFile::CoreSiblingsList | TopologyFile::ClusterCpusList => cpu_list(&package),
        };
        s + "\n"
    }
}

/// `/proc/cpuinfo` as riscv64 Linux 6.12 prints it: one block per hart.
/// `ids` are the harts' `mvendorid`, `marchid` and `mimpid`.
pub fn cpuinfo(harts: usize, isa: &str, ids: (u64, u64, u64)) -> String {
    let mut s = String::new();
    for h in 0..harts {
        let _ = write!(
            s,
            "processor\t: {h}\nhart\t\t: {h}\nisa\t\t: {isa}\nmmu\t\t: sv39\n\
             mvendorid\t: {:#x}\nmarchid\t\t: {:#x}\nmimpid\t\t: {:#x}\n\
             hart isa\t: {isa}\n\n",
            ids.0, ids.1, ids.2
        );
    }
    s
}

/// `/proc/meminfo` of a machine with `total` bytes of RAM of which `free`
/// are unallocated; `anon` bytes are the process's resident anonymous
/// memory and `file` its resident file pages. There is no swap and no page
/// cache apart from the process's file pages.
pub fn meminfo(total: u64, free: u64, anon: u64, file: u64) -> String {
    let mut s = String::new();
    let mut kb = |k: &str, v: u64| {
        let _ = writeln!(s, "{:<16}{:>8} kB", format!("{k}:"), v >> 10);
    };
    kb("MemTotal", total);
    kb("MemFree", free);
    kb("MemAvailable", free);
    kb("Buffers", 0);
    kb("Cached", file);
    kb("SwapCached", 0);
    kb("Active", anon + file);
    kb("Inactive", 0);
    kb("Active(anon)", anon);
    kb("Inactive(anon)", 0);
    kb("Active(file)", file);
    kb("Inactive(file)", 0);
    kb("Unevictable", 0);
    kb("Mlocked", 0);
    kb("SwapTotal", 0);
    kb("SwapFree", 0);
    kb("Dirty", 0);
    kb("Writeback", 0);
    kb("AnonPages", anon);
    kb("Mapped", file);
    kb("Shmem", 0);
    kb("CommitLimit", total);
    s.push_str("HugePages_Total:       0\nHugePages_Free:        0\n");
    s.push_str("Hugepagesize:       2048 kB\n");
    s
}

/// One line of `/proc/self/maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapsEntry {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// PROT_* bits.
    pub prot: u32,
    /// A shared mapping (`s`) rather than private (`p`).
    pub shared: bool,
    /// File offset.
    pub offset: u64,
    /// The file's device (major, minor) and inode; zeros for anonymous
    /// memory.
    pub dev: (u32, u32),
    /// Inode.
    pub inode: u64,
    /// The guest path, `[heap]`, `[stack]`, `[vdso]` or empty.
    pub name: String,
    /// Resident bytes (for smaps).
    pub rss: u64,
}

impl MapsEntry {
    /// The line as Linux's `show_map_vma` prints it, newline included.
    pub fn line(&self) -> String {
        let perm = |bit: u32, c: char| if self.prot & bit != 0 { c } else { '-' };
        let mut s = format!(
            "{:08x}-{:08x} {}{}{}{} {:08x} {:02x}:{:02x} {} ",
            self.start,
            self.end,
            perm(crate::vm::PROT_READ, 'r'),
            perm(crate::vm::PROT_WRITE, 'w'),
            perm(crate::vm::PROT_EXEC, 'x'),
            if self.shared { 's' } else { 'p' },
            self.offset,
            self.dev.0,
            self.dev.1,
            self.inode
        );
        // As `seq_pad`: a name starts after column 72 and one more space.
        if !self.name.is_empty() {
            while s.len() < 72 {
                s.push(' ');
            }
            s.push(' ');
            s.push_str(&self.name);
        }
        s.push('\n');
        s
    }

    /// The block of `/proc/self/smaps` for this area.
    pub fn smaps(&self) -> String {
        let mut s = self.line();
        let mut kb = |k: &str, v: u64| {
            let _ = writeln!(s, "{:<16}{:>8} kB", format!("{k}:"), v >> 10);
        };
        let anon = self.inode == 0;
        kb("Size", self.end - self.start);
        kb("KernelPageSize", 4096);
        kb("MMUPageSize", 4096);
        kb("Rss", self.rss);
        kb("Pss", self.rss);
        kb("Pss_Dirty", if anon { self.rss } else { 0 });
        kb("Shared_Clean", 0);
        kb("Shared_Dirty", 0);
        kb("Private_Clean", if anon { 0 } else { self.rss });
        kb("Private_Dirty", if anon { self.rss } else { 0 });
        kb("Referenced", self.rss);
        kb("Anonymous", if anon { self.rss } else { 0 });
        kb("KSM", 0);
        kb("LazyFree", 0);
        kb("AnonHugePages", 0);
        kb("ShmemPmdMapped", 0);
        kb("FilePmdMapped", 0);
        kb("Shared_Hugetlb", 0);
        kb("Private_Hugetlb", 0);
        kb("Swap", 0);
        kb("SwapPss", 0);
        kb("Locked", 0);
        let _ = writeln!(s, "THPeligible:    0");
        let mut flags = String::new();
        for (bit, f) in [
            (crate::vm::PROT_READ, "rd"),
            (crate::vm::PROT_WRITE, "wr"),
            (crate::vm::PROT_EXEC, "ex"),
        ] {
            if self.prot & bit != 0 {
                flags.push_str(f);
                flags.push(' ');
            }
        }
        if self.shared {
            flags.push_str("sh ");
        }
        // May-read/write/execute: what mprotect may grant.
        flags.push_str("mr mw me ");
        if self.shared {
            flags.push_str("ms ");
        }
        if self.name == "[stack]" {
            flags.push_str("gd ");
        }
        flags.push_str("ac ");
        let _ = writeln!(s, "VmFlags: {flags}");
        s
    }
}

/// `/proc/self/auxv`: the (type, value) pairs as 64-bit little-endian
/// words, `AT_NULL` included.
pub fn auxv_bytes(auxv: &[(u64, u64)]) -> Vec<u8> {
    auxv.iter()
        .flat_map(|&(k, v)| k.to_le_bytes().into_iter().chain(v.to_le_bytes()))
        .collect()
}

/// What `/proc/self/stat` and `/proc/self/status` report of a process.
#[derive(Clone, Debug, Default)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: i32,
    /// Parent's id.
    pub ppid: i32,
    /// Process group.
    pub pgrp: i32,
    /// Session.
    pub session: i32,
    /// The thread's name (`comm`).
    pub comm: String,
    /// Threads.
    pub threads: usize,
    /// Mapped bytes.
    pub vsize: u64,
    /// Resident bytes.
    pub rss: u64,
    /// Resident bytes of the stack.
    pub stack_rss: u64,
    /// Mapped bytes of the stack.
    pub stack_size: u64,
    /// Start and end of the program's code.
    pub code: (u64, u64),
    /// Start of the stack (argc's address).
    pub start_stack: u64,
    /// Start of the heap and the break.
    pub brk: (u64, u64),
    /// Bytes of private writable memory (what `RLIMIT_DATA` bounds).
    pub data: u64,
    /// The hart the thread last ran on.
    pub processor: usize,
    /// Harts of the machine.
    pub harts: usize,
    /// umask.
    pub umask: u32,
    /// The nodes the process may allocate from.
    pub mems_allowed: crate::numa::NodeMask,
    /// Real, effective uid and gid.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
}

impl ProcessInfo {
    /// `/proc/self/stat`: the 52 fields of Linux 6.12's `do_task_stat`; times
    /// and fault counts are not modelled and read zero.
    pub fn stat(&self) -> String {
        let mut f: Vec<String> = vec![
            self.pid.to_string(),
            format!("({})", self.comm),
            "R".into(),
            self.ppid.to_string(),
            self.pgrp.to_string(),
            self.session.to_string(),
        ];
        // tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
        // cutime cstime
        f.extend(["0", "-1", "4194304"].map(String::from));
        f.extend(std::iter::repeat_n("0".to_string(), 8));
        // priority nice num_threads itrealvalue starttime vsize rss rsslim
        f.extend([
            "20".into(),
            "0".into(),
            self.threads.to_string(),
            "0".into(),
        ]);
        f.push("0".into());
        f.push(self.vsize.to_string());
        f.push((self.rss / 4096).to_string());
        f.push(u64::MAX.to_string());
        f.push(self.code.0.to_string());
        f.push(self.code.1.to_string());
        f.push(self.start_stack.to_string());
        // kstkesp kstkeip signal blocked sigignore sigcatch wchan nswap
        // cnswap
        f.extend(std::iter::repeat_n("0".to_string(), 9));
        f.push("17".into()); // exit_signal: SIGCHLD
        f.push(self.processor.to_string());
        // rt_priority policy delayacct_blkio_ticks guest_time cguest_time
        f.extend(std::iter::repeat_n("0".to_string(), 5));
        // start_data end_data start_brk arg_start arg_end env_start env_end
        // exit_code
        f.extend(["0".into(), "0".into(), self.brk.0.to_string()]);
        f.extend(std::iter::repeat_n("0".to_string(), 5));
        f.join(" ") + "\n"
    }

    /// `/proc/self/status` (the fields a program or `ps` reads).
    pub fn status(&self) -> String {
        let kb = |v: u64| format!("{:>8} kB", v >> 10);
        let ids = |v: u32| format!("{v}\t{v}\t{v}\t{v}");
        let all: Vec<usize> = (0..self.harts).collect();
        format!(
            "Name:\t{}\nUmask:\t{:04o}\nState:\tR (running)\nTgid:\t{}\nNgid:\t0\nPid:\t{}\n\
             PPid:\t{}\nTracerPid:\t0\nUid:\t{}\nGid:\t{}\nVmPeak:\t{}\nVmSize:\t{}\n\
             VmRSS:\t{}\nVmData:\t{}\nVmStk:\t{}\nVmExe:\t{}\nThreads:\t{}\n\
             Cpus_allowed:\t{}\nCpus_allowed_list:\t{}\nMems_allowed:\t{}\n\
             Mems_allowed_list:\t{}\n",
            self.comm,
            self.umask,
            self.pid,
            self.pid,
            self.ppid,
            ids(self.uid),
            ids(self.gid),
            kb(self.vsize),
            kb(self.vsize),
            kb(self.rss),
            kb(self.data),
            kb(self.stack_size),
            kb(self.code.1.saturating_sub(self.code.0)),
            self.threads,
            cpu_mask(&all, self.harts),
            cpu_list(&all),
            self.mems_allowed.hex_words(),
            node_list(self.mems_allowed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_no_process_holds_are_swept_once_old() {
        use std::time::{Duration, SystemTime};
        let base = std::env::temp_dir().join(format!("rvnvmm-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap();
        let make = |name: &str, age: Duration| {
            let dir = base.join(name);
            std::fs::create_dir_all(dir.join("proc/self")).unwrap();
            let when = SystemTime::now() - age;
            std::fs::File::open(&dir)
                .unwrap()
                .set_modified(when)
                .unwrap();
            dir
        };
        let minute = Duration::from_secs(60);
        let killed = make("rvnvmm-tree-1-0", 2 * minute);
        let held = make("rvnvmm-tree-2-0", 2 * minute);
        let _holder = lock(&held, libc::LOCK_SH).unwrap();
        let young = make("rvnvmm-tree-3-0", Duration::ZERO);
        let other = make("another-tree", 2 * minute);
        let link = base.join("rvnvmm-tree-4-0");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        sweep_abandoned_trees(&base, minute);
        assert!(!killed.exists(), "abandoned and old: removed");
        assert!(held.exists(), "a process holds it");
        assert!(young.exists(), "maybe not locked yet");
        assert!(
            other.join("proc/self").exists() && link.exists(),
            "not a tree"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn paths_of_the_process_and_the_machine() {
        let f = |p: &str| ProcFile::by_path(p.as_bytes(), 1234, 4, crate::numa::NodeMask::bits(1));
        assert_eq!(f("/proc/self/maps"), Some(ProcFile::Maps));
        assert_eq!(f("/proc/1234/smaps"), Some(ProcFile::Smaps));
        assert_eq!(f("//proc/./thread-self/status"), Some(ProcFile::Status));
        assert_eq!(f("/proc/1235/maps"), None, "another process");
        assert_eq!(f("/proc/cpuinfo"), Some(ProcFile::Cpuinfo));
        assert_eq!(
            f("/sys/devices/system/cpu/online"),
            Some(ProcFile::CpuRange)
        );
        assert_eq!(
            f("/sys/devices/system/cpu/cpu3/topology/core_id"),
            Some(ProcFile::Topology {
                cpu: 3,
                file: TopologyFile::CoreId
            })
        );
        assert_eq!(f("/sys/devices/system/cpu/cpu4/topology/core_id"), None);
        assert_eq!(f("/sys/devices/system/cpu/cpu03/topology/core_id"), None);
        assert_eq!(f("proc/cpuinfo"), None, "relative paths are resolved first");
        assert_eq!(
            f("/sys/devices/system/cpu/cpu0/../online"),
            Some(ProcFile::CpuRange)
        );
        assert_eq!(f("/proc/self/../self/auxv"), Some(ProcFile::Auxv));
        assert_eq!(f("/proc/../../proc/meminfo"), Some(ProcFile::Meminfo));
    }

    fn tree_dir(tree: &EmulatedTree, path: &str, whole: bool) -> std::path::PathBuf {
        match tree.host_path(path.as_bytes(), 4321, whole) {
            Some(TreePath::Tree(p)) => p,
            other => panic!("{path}: {other:?}"),
        }
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    /// Whether `path` is gone, or goes within 5 s: a process another test
    /// forks meanwhile holds every tree of this process too, until it ends,
    /// and the last holder removes a tree.
    fn gone(path: &std::path::Path) -> bool {
        for _ in 0..500 {
            if !path.exists() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        !path.exists()
    }

    #[test]
    fn the_sys_tree_lists_the_harts_and_only_them() {
        let tree = EmulatedTree::build(
            Topology {
                harts: 3,
                threads_per_core: 1,
            },
            crate::numa::NodeMask::bits(1),
            0,
        )
        .unwrap();
        let dir = tree_dir(&tree, "/sys/devices/system/cpu/", false);
        assert_eq!(
            names(&dir),
            ["cpu0", "cpu1", "cpu2", "isolated", "offline", "online", "possible", "present"]
        );
        let read = |p: &str| std::fs::read_to_string(tree_dir(&tree, p, false));
        assert_eq!(read("/sys/devices/system/cpu/online").unwrap(), "0-2\n");
        assert_eq!(
            read("/sys//devices/system/cpu/cpu2/topology/core_cpus_list").unwrap(),
            "2\n"
        );
        assert_eq!(
            read("/sys/devices/system/cpu/cpu1/topology/package_cpus").unwrap(),
            "7\n"
        );
        let topology = tree_dir(&tree, "/sys/devices/system/cpu/cpu0/topology", false);
        assert_eq!(std::fs::read_dir(topology).unwrap().count(), 13);
        assert!(read("/sys/devices/system/cpu/cpu3/topology/core_id").is_err());
        // Outside the tree (or out of it through `..`): the ordinary lookup.
        assert_eq!(
            tree.host_path(b"/sys/devices/system/cpufreq", 1, false),
            None
        );
        assert_eq!(
            tree.host_path(b"/sys/devices/system/cpu/../../../etc", 1, false),
            None
        );
        let root = tree.root.clone();
        drop(tree);
        assert!(gone(&root), "removed when the process ends");
    }

    #[test]
    fn the_process_directory_lists_what_the_emulator_provides() {
        let tree = EmulatedTree::build(
            Topology {
                harts: 1,
                threads_per_core: 1,
            },
            crate::numa::NodeMask::bits(1),
            0,
        )
        .unwrap();
        for own in [
            "/proc/self",
            "/proc/thread-self/",
            "/proc/4321",
            "/proc/self/fd/..",
        ] {
            let dir = tree_dir(&tree, own, false);
            assert_eq!(names(&dir), PROCESS_DIR, "{own}");
            assert_eq!(tree.guest_path(&dir).as_deref(), Some("/proc/self"));
        }
        assert_eq!(
            tree.host_path(b"/proc/4322", 4321, false),
            None,
            "another pid"
        );
        assert_eq!(
            tree.host_path(b"/proc", 4321, false),
            None,
            "the host's /proc"
        );
        assert_eq!(
            tree.host_path(b"/proc/self/exe", 4321, false),
            Some(TreePath::Exe)
        );
        assert_eq!(
            tree.host_path(b"/proc/self/fd/3", 4321, false),
            Some(TreePath::HostSelf("fd/3".into()))
        );
        // Every listed name has the type Linux gives it; the rest is missing.
        let dir = tree_dir(&tree, "/proc/self", false);
        for name in PROCESS_DIR {
            let st = std::fs::symlink_metadata(dir.join(name)).unwrap();
            let want = match name {
                "fd" | "fdinfo" => st.is_dir(),
                "exe" => st.file_type().is_symlink(),
                _ => st.is_file() && st.len() == 0,
            };
            assert!(want, "{name}: {st:?}");
        }
        assert!(!tree_dir(&tree, "/proc/self/environ2", false).exists());
        assert!(!tree_dir(&tree, "/proc/self/mountinfo", false).exists());
        // Under a root, /proc and /sys are the tree's as a whole.
        assert_eq!(
            names(&tree_dir(&tree, "/proc", true)),
            ["cpuinfo", "meminfo", "self", "thread-self"]
        );
        assert_eq!(names(&tree_dir(&tree, "/sys", true)), ["devices"]);
        assert_eq!(tree.host_path(b"/proc", 4321, false), None);
        assert_eq!(tree.host_path(b"/procfs", 4321, true), None);
    }

    /// A forked child that outlives the process that made the tree still
    /// sees it; the last one to let go removes it.
    #[test]
    fn the_tree_lasts_while_a_forked_child_holds_it() {
        let mut tree = EmulatedTree::build(
            Topology {
                harts: 2,
                threads_per_core: 1,
            },
            crate::numa::NodeMask::bits(1),
            0,
        )
        .unwrap();
        let online = tree_dir(&tree, "/sys/devices/system/cpu/online", false);
        // Parent to child: "let go now"; child to parent: what it saw.
        let (mut go, mut seen) = ([0i32; 2], [0i32; 2]);
        // SAFETY: pipe fills the two descriptors.
        assert_eq!(unsafe { libc::pipe(go.as_mut_ptr()) }, 0);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::pipe(seen.as_mut_ptr()) }, 0);
        // SAFETY: the child only waits on a pipe, reads a file, lets go of
        // the tree, answers and ends with _exit.
        let child = unsafe { libc::fork() };
        assert!(child >= 0);
        if child == 0 {
            // The trees of the tests running beside this one are held by
            // this child too (a fork keeps every descriptor), and would
            // outlive their tests' ends, which check their removal: only
            // this test's tree stays held here.
            for fd in 900..1024 {
                if Some(fd) != tree.hold_fd() {
                    // SAFETY: closing a descriptor number, owned or not, in
                    // a child that only ends with _exit.
                    unsafe { libc::close(fd) };
                }
            }
            let mut b = [0u8; 1];
            // SAFETY: reads one byte into `b`.
            unsafe { libc::read(go[0], b.as_mut_ptr().cast(), 1) };
            let ok = std::fs::read_to_string(&online).is_ok_and(|s| s == "0-1\n");
            tree.release();
            // SAFETY: writes one byte; `_exit` ends the child without
            // running the test harness.
            unsafe {
                libc::write(seen[1], [ok as u8].as_ptr().cast(), 1);
                libc::_exit(0);
            }
        }
        tree.release();
        assert!(online.exists(), "the child still holds the tree");
        let mut b = [0u8; 1];
        // SAFETY: one byte each way through the pipes.
        unsafe {
            libc::write(go[1], b"x".as_ptr().cast(), 1);
            libc::read(seen[0], b.as_mut_ptr().cast(), 1);
            for fd in go.into_iter().chain(seen) {
                libc::close(fd);
            }
        }
        assert_eq!(b[0], 1, "the child saw the tree after the parent let go");
        // The child removed it.
        assert!(gone(&online));
    }

    #[test]
    fn random_uuids_are_version_4() {
        assert_eq!(
            random_uuid([0xff; 16]),
            "ffffffff-ffff-4fff-bfff-ffffffffffff\n"
        );
        assert_eq!(
            random_uuid([0; 16]),
            "00000000-0000-4000-8000-000000000000\n"
        );
        assert_eq!(
            ProcFile::by_path(
                b"/proc/sys/kernel/random/../random/uuid",
                1,
                1,
                crate::numa::NodeMask::bits(1)
            ),
            Some(ProcFile::RandomUuid)
        );
    }

    #[test]
    fn cpu_lists_and_masks_as_linux_prints_them() {
        assert_eq!(cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(cpu_list(&[0]), "0");
        assert_eq!(cpu_list(&[0, 2, 3, 5]), "0,2-3,5");
        assert_eq!(cpu_mask(&[0], 2), "1");
        assert_eq!(cpu_mask(&[0, 1], 8), "03");
        assert_eq!(cpu_mask(&[0, 33], 40), "02,00000001");
        assert_eq!(cpu_mask(&[31], 32), "80000000");
    }

    #[test]
    fn topology_is_a_function_of_cores_and_threads() {
        let one = Topology {
            harts: 4,
            threads_per_core: 1,
        };
        assert_eq!(one.file(2, TopologyFile::CoreId), "2\n");
        assert_eq!(one.file(2, TopologyFile::ThreadSiblingsList), "2\n");
        assert_eq!(one.file(2, TopologyFile::ThreadSiblings), "4\n");
        assert_eq!(one.file(2, TopologyFile::CoreSiblingsList), "0-3\n");
        let smt = Topology {
            harts: 4,
            threads_per_core: 2,
        };
        assert_eq!(smt.file(3, TopologyFile::CoreId), "1\n");
        assert_eq!(smt.file(3, TopologyFile::ThreadSiblingsList), "2-3\n");
        assert_eq!(smt.file(3, TopologyFile::ThreadSiblings), "c\n");
    }

    #[test]
    fn cpuinfo_has_a_block_per_hart() {
        let s = cpuinfo(2, "rv64imafdc_zicsr", (0, 0, 0));
        assert_eq!(s.matches("processor\t: ").count(), 2);
        assert!(
            s.contains("processor\t: 1\nhart\t\t: 1\nisa\t\t: rv64imafdc_zicsr\nmmu\t\t: sv39\n")
        );
        assert!(s.contains(
            "mvendorid\t: 0x0\nmarchid\t\t: 0x0\nmimpid\t\t: 0x0\nhart isa\t: rv64imafdc_zicsr\n\n"
        ));
    }

    #[test]
    fn meminfo_lines_have_linux_widths() {
        let s = meminfo(1 << 30, 1 << 29, 4096, 8192);
        assert!(s.starts_with("MemTotal:        1048576 kB\nMemFree:          524288 kB\n"));
        assert!(s.contains("AnonPages:             4 kB\n"));
        assert!(s.contains("HugePages_Total:       0\n"));
    }

    #[test]
    fn maps_lines_in_linux_format() {
        let mut e = MapsEntry {
            start: 0x10000,
            end: 0x12000,
            prot: 5,
            shared: false,
            offset: 0,
            dev: (8, 1),
            inode: 42,
            name: "/bin/true".into(),
            rss: 4096,
        };
        assert_eq!(
            e.line(),
            format!(
                "{:<72} /bin/true\n",
                "00010000-00012000 r-xp 00000000 08:01 42 "
            )
        );
        let smaps = e.smaps();
        assert!(smaps.contains("Size:                  8 kB\nKernelPageSize:        4 kB\nMMUPageSize:           4 kB\nRss:                   4 kB\n"));
        assert!(smaps.ends_with("VmFlags: rd ex mr mw me ac \n"));
        e.name.clear();
        e.inode = 0;
        e.dev = (0, 0);
        assert_eq!(e.line(), "00010000-00012000 r-xp 00000000 00:00 0 \n");
    }

    #[test]
    fn stat_has_52_fields_and_status_the_usual_keys() {
        let info = ProcessInfo {
            pid: 7,
            ppid: 1,
            comm: "a b".into(),
            threads: 3,
            vsize: 1 << 20,
            rss: 8192,
            harts: 2,
            ..Default::default()
        };
        let stat = info.stat();
        assert!(stat.starts_with("7 (a b) R 1 "));
        let after_comm = stat.rsplit(')').next().unwrap();
        assert_eq!(after_comm.split_whitespace().count(), 50);
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        assert_eq!(fields[17], "3", "num_threads");
        assert_eq!(fields[20], "1048576", "vsize");
        assert_eq!(fields[21], "2", "rss in pages");
        let st = info.status();
        for k in [
            "Name:\ta b\n",
            "Pid:\t7\n",
            "PPid:\t1\n",
            "Threads:\t3\n",
            "VmRSS:\t       8 kB\n",
            "Cpus_allowed_list:\t0-1\n",
        ] {
            assert!(st.contains(k), "{k}: {st}");
        }
    }

    #[test]
    fn auxv_is_little_endian_pairs() {
        let b = auxv_bytes(&[(6, 4096), (0, 0)]);
        assert_eq!(b.len(), 32);
        assert_eq!(&b[..9], &[6, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 4096);
    }
}

#[cfg(test)]
mod smt_topology_tests {
    use super::*;

    /// The tree built for every shipped machine (`configs/*.toml`) shows
    /// its cores and threads: hart `h` is thread `h % threads_per_core` of
    /// core `h / threads_per_core`, as the full system's device tree says.
    #[test]
    fn every_shipped_machine_shows_its_cores_and_threads() {
        let configs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&configs).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let cfg = rvnvmm_config::Config::load(path.to_str(), &[]).unwrap();
            let (harts, tpc) = (
                cfg.machine.harts as usize,
                cfg.machine.threads_per_core as usize,
            );
            let topology = Topology::new(harts, tpc);
            let tree = EmulatedTree::build(topology, crate::numa::NodeMask::bits(1), 0).unwrap();
            let read = |cpu: usize, file: &str| {
                let p = format!("/sys/devices/system/cpu/cpu{cpu}/topology/{file}");
                match tree.host_path(p.as_bytes(), 1, false) {
                    Some(TreePath::Tree(host)) => std::fs::read_to_string(host).unwrap(),
                    other => panic!("{p}: {other:?}"),
                }
            };
            let all = if harts == 1 {
                "0\n".to_string()
            } else {
                format!("0-{}\n", harts - 1)
            };
            for h in 0..harts {
                let what = format!("{}: cpu{h}", path.display());
                let first = h / tpc * tpc;
                let siblings = if tpc == 1 {
                    format!("{h}\n")
                } else {
                    format!("{first}-{}\n", first + tpc - 1)
                };
                assert_eq!(read(h, "core_id"), format!("{}\n", h / tpc), "{what}");
                for file in ["thread_siblings_list", "core_cpus_list"] {
                    assert_eq!(read(h, file), siblings, "{what}: {file}");
                }
                for file in [
                    "core_siblings_list",
                    "package_cpus_list",
                    "cluster_cpus_list",
                ] {
                    assert_eq!(read(h, file), all, "{what}: {file}");
                }
                assert_eq!(read(h, "physical_package_id"), "0\n", "{what}");
                // The files a guest opens (a memfd of `Topology::file`) say
                // what the tree's copies say.
                for (name, file) in TopologyFile::LISTED {
                    assert_eq!(topology.file(h, file), read(h, name), "{what}: {name}");
                }
            }
            if path.file_stem().and_then(|s| s.to_str()) == Some("smt-pm") {
                assert_eq!((harts, tpc), (4, 2));
                assert_eq!(read(0, "thread_siblings_list"), "0-1\n");
                assert_eq!(read(0, "thread_siblings"), "3\n");
                assert_eq!(read(3, "core_id"), "1\n");
            }
            seen += 1;
        }
        assert!(seen >= 5, "{seen} configs");
    }

    /// 2 cores x 2 threads, numbered as Linux numbers a device tree's
    /// threads: CPUs 0-1 on core 0, 2-3 on core 1.
    #[test]
    fn two_threads_per_core() {
        let t = Topology {
            harts: 4,
            threads_per_core: 2,
        };
        let f = |cpu, file| t.file(cpu, file);
        assert_eq!(f(0, TopologyFile::CoreId), "0\n");
        assert_eq!(f(3, TopologyFile::CoreId), "1\n");
        assert_eq!(f(2, TopologyFile::ThreadSiblingsList), "2-3\n");
        assert_eq!(f(1, TopologyFile::ThreadSiblings), "3\n");
        assert_eq!(f(2, TopologyFile::CoreSiblingsList), "0-3\n");
    }
}
