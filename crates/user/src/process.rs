//! The guest process: its state, grouped by subsystem (memory, the exec
//! image, threads, files, signals), its options, its construction and its
//! clocks. The rest by concept in `process/`: program loading (`load.rs`),
//! guest memory as the kernel reaches it (`guest_memory.rs`), the threads
//! and the harts they run on (`threads.rs`), the run as the scheduler drives
//! it and its outcome (`run.rs`), synchronous faults (`faults.rs`) and gdb's
//! view (`gdb_target.rs`).

use crate::elf::LoadError;
use crate::fs::Fs;
use crate::nodes::MemoryNode;
pub use crate::outcome::{ExitKind, Outcome, PagesOutcome, ThreadStats};
use crate::signal::SigAction;
use crate::vm::{AddressSpace, STACK_TOP};
use rvnvmm_hart::MemoryModel;
use rvnvmm_hart::{CodeCache, Core, CoreMap, Hart, HartConfig};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::control::ControlPage;
use std::path::PathBuf;

mod faults;
mod gdb_target;
mod guest_memory;
mod load;
mod run;
mod threads;

use threads::{thread_stats, Threads};
pub(crate) use threads::{Cpu, Thread, ThreadState};

/// Everything `rvnvmm run` decides about a run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The program as named on the command line (or by execve).
    pub program: String,
    /// argv, including argv[0].
    pub args: Vec<String>,
    /// The environment, `KEY=VALUE`.
    pub env: Vec<String>,
    /// Confine every path inside this directory.
    pub root: Option<PathBuf>,
    /// Look up absolute paths here first (the dynamic linker and libraries).
    pub sysroot: Option<PathBuf>,
    /// Guest paths placed on host paths (`--map`), before the sysroot and
    /// the root.
    pub maps: Vec<crate::fs::Map>,
    /// The guest's working directory at the start, a guest path (`--cwd`);
    /// `None`: the host's (`/` under a root).
    pub cwd: Option<String>,
    /// Number of harts threads are scheduled on.
    pub harts: usize,
    /// Per-hart settings.
    pub hart: HartConfig,
    /// The machine's memory nodes, in address order: all of them guest
    /// RAM. The process's frames come from the first DRAM node; `/dev/nvmm`
    /// maps the first NVMM node, and with `heap_on_nvmm` the heap's frames
    /// come from it (`nodes::frame_pools`).
    pub nodes: Vec<MemoryNode>,
    /// The distances between the nodes' ids, `(from, to, distance)`
    /// (`rvnvmm_memsys::NumaNodes::matrix`); Linux's defaults (10 local,
    /// 20 remote) for a pair not listed.
    pub numa_distances: Vec<(u32, u32, u8)>,
    /// Put brk and anonymous mmap memory on NVMM (`user.heap = nvmm`).
    pub heap_on_nvmm: bool,
    /// The guest path of the NVMM-backed directory (`user.pmem_dir`),
    /// mounted by [`Process::mount_pmem_dir`].
    pub pmem_dir: Option<String>,
    /// The soft `RLIMIT_STACK` the process starts with (`user.stack_size`):
    /// it sizes the stack of every program it execs until the guest changes
    /// the limit.
    pub stack_size: u64,
    /// The page sizes anonymous memory is mapped with (`user.pages`).
    pub pages: crate::vm::PagePolicy,
    /// Stop after about this many instructions (all threads together).
    pub max_insns: Option<u64>,
    /// Cut the power at this point (`--crash-at`): the run ends with
    /// [`ExitKind::Crash`]. Forked children never crash.
    pub crash_at: Option<StopAt>,
    /// Print every retired instruction to stderr.
    pub trace: bool,
    /// Seconds since 1970 that simulated time zero corresponds to.
    pub epoch_secs: u64,
    /// Instructions a turn runs at most (the scheduler's slice between
    /// harts; threads on one hart switch at `time_slice_ns`).
    pub quantum: u64,
    /// Hardware threads per core (`machine.threads_per_core`).
    pub threads_per_core: usize,
    /// Simulated ns a thread runs before another runnable thread on the
    /// same hart gets it (`user.time_slice_ns`).
    pub time_slice_ns: u64,
}

pub use rvnvmm_runctl::StopAt;

impl Options {
    /// The first DRAM node of the machine (`nodes::dram_node`).
    pub fn dram_node(&self) -> Option<&MemoryNode> {
        crate::nodes::dram_node(&self.nodes)
    }

    /// The first NVMM node of the machine (`nodes::nvmm_node`).
    pub fn nvmm_node(&self) -> Option<&MemoryNode> {
        crate::nodes::nvmm_node(&self.nodes)
    }
}

/// Why a run could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// Setting up the process failed.
    #[error("{0}")]
    Setup(String),
    /// Every guest thread is blocked forever.
    #[error("deadlock: every guest thread is blocked (futex or sleep) with nothing to wake it")]
    Deadlock,
}

/// Where exec laid out the program's start on its stack, and the
/// trampoline page (what `/proc/self/{auxv,cmdline,environ,stat}` show).
pub(crate) struct Image {
    /// The auxiliary vector the program was started with (`/proc/self/auxv`).
    pub(crate) auxv: Vec<(u64, u64)>,
    /// The initial stack pointer (argc's address).
    pub(crate) start_stack: u64,
    /// Where the argument strings lie on the stack (`/proc/self/cmdline`).
    pub(crate) arg_area: (u64, u64),
    /// Where the environment strings lie (`/proc/self/environ`).
    pub(crate) env_area: (u64, u64),
    /// The page holding the signal-return trampoline.
    pub(crate) sigreturn_page: u64,
}

/// A running guest process.
pub struct Process {
    /// What the run was started with (a restored process: its checkpoint's
    /// program, argv and environment).
    pub(crate) opts: Options,
    /// Guest RAM, the address space, decoded code and the devices mapped
    /// outside RAM.
    pub(crate) memory: crate::vm::Memory,
    /// Where the running program's start lies in its memory.
    pub(crate) image: Image,
    /// The threads and the harts they run on.
    pub(crate) threads: Threads,
    /// The descriptor table and paths, the NVMM-backed directory, the
    /// timerfds.
    pub(crate) files: crate::fs::Files,
    /// Signal dispositions and the `setitimer` timers that send signals.
    pub(crate) signals: crate::signal::Signals,
    /// The process id.
    pub(crate) pid: i32,
    /// How the process ended, once it has.
    pub(crate) exit: Option<ExitKind>,
    /// Forked from another process (not the run's initial one).
    pub(crate) is_child: bool,
    /// The process tree this process belongs to, once it or an ancestor
    /// forked (`family.rs`).
    pub(crate) family: Option<crate::family::Family>,
    /// The tree's members at the end of the root's run.
    pub(crate) members: Option<crate::family::TreeStats>,
    /// `total_insns` when this process was forked (its own count starts
    /// there).
    pub(crate) insns_at_fork: u64,
    /// The notices [`Process::warn_once`] has printed, by key.
    pub(crate) warned: std::collections::HashSet<u64>,
    /// State of the deterministic getrandom generator.
    pub(crate) rng_state: u64,
    /// Resource limits (soft, hard) by RLIMIT_* number.
    pub(crate) rlimits: [(u64, u64); 16],
    /// The memory-system timing model, if the machine is timed.
    pub(crate) memsys: Option<Box<dyn MemoryModel>>,
    /// Where the page heat goes, when recorded (`--page-heat`).
    pub(crate) page_heat: Option<rvnvmm_heat::Recorder>,
    /// Told (instructions so far, simulated ns) after every time slice of
    /// the initial process: a progress display.
    pub(crate) progress: Option<Box<dyn FnMut(u64, u64) + Send>>,
    /// `prctl(PR_SET_NO_NEW_PRIVS)` was called.
    pub(crate) no_new_privs: bool,
    /// The gdb connection, if a debugger is attached.
    pub(crate) gdb: Option<rvnvmm_gdb::GdbStub>,
    /// Statistics resets, snapshots and model switches (`roi.rs`).
    pub(crate) roi: crate::roi::state::Roi,
}

/// Address of the page holding the signal-return trampoline: the last user
/// page, just above the stack.
pub(crate) const SIGRETURN_PAGE: u64 = STACK_TOP;

/// A file mapped executable ([`Process::mapped_code`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedCode {
    /// The guest's name of the file.
    pub guest_path: String,
    /// Where it is on the host, if known.
    pub host_path: Option<std::path::PathBuf>,
    /// The mapping's first byte and one past its last.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    /// The file offset of `start`.
    pub offset: u64,
}

impl Process {
    /// Creates the process and loads the program.
    pub fn new(opts: Options) -> Result<Process, RunError> {
        let mut p = Process::without_program(opts)?;
        let prog = p.opts.program.clone();
        let (args, env) = (p.opts.args.clone(), p.opts.env.clone());
        p.exec(&prog, &args, &env, true)?;
        // After the program is found: a relative program path is the
        // command line's, relative to the host's working directory.
        if let Some(cwd) = p.opts.cwd.clone() {
            p.files.fs.chdir(cwd.as_bytes()).map_err(|e| {
                RunError::Setup(format!(
                    "cannot make {cwd} the guest's working directory (--cwd): {}",
                    std::io::Error::from_raw_os_error(e.raw())
                ))
            })?;
        }
        Ok(p)
    }

    /// The process with its first thread and an empty address space,
    /// before a program is loaded (unit tests use it so).
    pub(crate) fn without_program(opts: Options) -> Result<Process, RunError> {
        crate::checkpoint::inherited::note_inherited();
        let pools =
            crate::nodes::frame_pools(&opts.nodes, opts.heap_on_nvmm).map_err(RunError::Setup)?;
        let ranges: Vec<(u64, u64)> = opts.nodes.iter().map(MemoryNode::range).collect();
        let mut mem = PhysMem::new(&ranges).map_err(|e| RunError::Setup(e.to_string()))?;
        let mut aspace = AddressSpace::with_pools(&mut mem, &pools.ranges, pools.heap)
            .map_err(|_| RunError::Setup("guest RAM too small".into()))?;
        aspace.pages = opts.pages;
        // The harts are on the node of pool 0, the first DRAM node.
        aspace.numa =
            crate::numa::NodeMap::new(&pools.node_ids, pools.node_ids[0], &opts.numa_distances);
        let mut fs = Fs::new(opts.root.as_deref(), opts.sysroot.as_deref())
            .map_err(|e| RunError::Setup(format!("cannot use the root directory: {e}")))?;
        for m in &opts.maps {
            fs.add_map(m.clone())
                .map_err(|e| RunError::Setup(e.to_string()))?;
        }
        let topology = crate::procfs::Topology::new(opts.harts, opts.threads_per_core);
        let (harts, threads_per_core) = (topology.harts, topology.threads_per_core);
        let (node_ids, cpu_node) = (aspace.numa.online(), aspace.numa.local());
        fs.tree = Some(
            crate::procfs::EmulatedTree::build(topology, node_ids, cpu_node).map_err(|e| {
                RunError::Setup(format!(
                    "cannot write the emulated /proc and /sys to the temporary directory: {e}"
                ))
            })?,
        );
        let core_map = CoreMap::with_threads_per_core(harts, threads_per_core)
            .ok_or_else(|| RunError::Setup("a machine needs at least one hart".into()))?;
        let mut p = Process {
            memory: crate::vm::Memory {
                phys: mem,
                aspace,
                code: CodeCache::default(),
                devices: Default::default(),
            },
            image: Image {
                auxv: Vec::new(),
                start_stack: 0,
                arg_area: (0, 0),
                env_area: (0, 0),
                sigreturn_page: SIGRETURN_PAGE,
            },
            threads: Threads {
                all: Vec::new(),
                cpus: Core::for_harts(&core_map, &opts.hart)
                    .into_iter()
                    .map(|core| Cpu {
                        core,
                        instret: 0,
                        cursor: 0,
                        holder: None,
                        slice_end: 0,
                    })
                    .collect(),
                current: 0,
                next_tid: 1,
                exited: Vec::new(),
                total_insns: 0,
                cpu_cycles: 0,
            },
            files: crate::fs::Files {
                fs,
                umask: 0o022,
                kept_fds: Vec::new(),
                pmem: None,
                timerfds: Default::default(),
            },
            signals: crate::signal::Signals {
                actions: vec![SigAction::default(); 65],
                itimers: Default::default(),
            },
            pid: crate::family::FIRST_PID,
            exit: None,
            is_child: false,
            family: None,
            members: None,
            insns_at_fork: 0,
            warned: Default::default(),
            rng_state: 0x9e37_79b9_7f4a_7c15,
            rlimits: default_rlimits(opts.stack_size),
            memsys: None,
            page_heat: None,
            progress: None,
            gdb: None,
            no_new_privs: false,
            roi: Default::default(),
            opts,
        };
        p.threads.next_tid = p.pid + 1;
        let mut hart = Hart::new(p.opts.hart.clone());
        hart.trace = p.opts.trace;
        p.threads.all.push(Thread::new(p.pid, hart, 0));
        Ok(p)
    }

    /// Lets gdb debug the process through `stub` (`rvnvmm run --gdb`): the
    /// process stops before its first instruction for gdb.
    pub fn with_gdb(mut self, stub: rvnvmm_gdb::GdbStub) -> Process {
        self.gdb = Some(stub);
        self
    }

    /// Times memory accesses with `model` (caches, bus, controllers)
    /// from now on.
    pub fn with_memory_model(mut self, model: Box<dyn MemoryModel>) -> Process {
        self.memsys = Some(model);
        self
    }

    /// Calls `f(instructions, simulated ns)` after every time slice (a
    /// million instructions or a blocking system call) of the initial
    /// process; forked children do not.
    pub fn with_progress(mut self, f: impl FnMut(u64, u64) + Send + 'static) -> Process {
        self.progress = Some(Box::new(f));
        self
    }

    /// Fills the NVMM region from `image` (its contents from an earlier
    /// run). Heap frames taken from NVMM are zeroed from now on, as the
    /// region no longer starts zeroed.
    pub fn load_nvmm_image(
        &mut self,
        image: &rvnvmm_mem::persist::NvmmImage,
    ) -> Result<(), rvnvmm_mem::persist::ImageError> {
        image.load(&mut self.memory.phys)?;
        self.memory.aspace.frames_not_zero(1);
        Ok(())
    }

    /// Writes the NVMM region to `image` as it is now (a clean end).
    pub fn save_nvmm_image(
        &self,
        image: &rvnvmm_mem::persist::NvmmImage,
    ) -> Result<(), rvnvmm_mem::persist::ImageError> {
        image.save(&self.memory.phys)
    }

    /// Tracks what reaches the NVMM region's persistence domain from now on
    /// (and has the timing model report its write-backs).
    pub fn track_persistence(&mut self, domain: rvnvmm_mem::persist::Domain) {
        self.memory.phys.set_domain(domain);
        if let Some(m) = self.memsys.as_deref_mut() {
            m.record_write_backs();
        }
    }

    /// The persistence domain, if tracked.
    pub fn persistence_domain(&self) -> Option<&rvnvmm_mem::persist::Domain> {
        self.memory.phys.domain()
    }

    /// Writes `data` at physical `paddr` of guest RAM (an image overlay):
    /// false if it is not all RAM.
    pub fn write_nvmm(&mut self, paddr: u64, data: &[u8]) -> bool {
        self.memory.phys.write(paddr, data)
    }

    /// The files mapped executable now (the program, the dynamic linker,
    /// shared libraries), to name the code behind the persistence trace's
    /// records.
    pub fn mapped_code(&self) -> Vec<MappedCode> {
        use std::os::fd::AsRawFd;
        let mut out = Vec::new();
        for (&start, v) in &self.memory.aspace.vmas {
            if v.prot & libc::PROT_EXEC as u32 == 0 || !v.name.starts_with('/') {
                continue;
            }
            let (offset, host) = match (&v.file, &v.image) {
                (Some(f), _) => (
                    f.offset,
                    std::fs::read_link(format!("/proc/self/fd/{}", f.fd.as_raw_fd())).ok(),
                ),
                (None, Some(i)) => (
                    i.offset,
                    self.files
                        .fs
                        .host_path(libc::AT_FDCWD, v.name.as_bytes())
                        .ok(),
                ),
                (None, None) => continue,
            };
            out.push(MappedCode {
                guest_path: v.name.clone(),
                host_path: host,
                start,
                end: v.end,
                offset,
            });
        }
        out
    }

    /// Cuts the power: the NVMM region keeps what reached the persistence
    /// domain (`rvnvmm_mem::persist::crash`), and `image`, if given, is
    /// written so.
    pub fn power_fail(
        &mut self,
        image: Option<&rvnvmm_mem::persist::NvmmImage>,
        seed: u64,
    ) -> Result<rvnvmm_mem::persist::CrashReport, rvnvmm_mem::persist::ImageError> {
        if let Some(m) = self.memsys.as_deref_mut() {
            let mem = &mut self.memory.phys;
            m.take_write_backs(&mut |a| mem.persist_write_back(a));
        }
        rvnvmm_mem::persist::crash(&mut self.memory.phys, image, seed)
    }

    /// Maps the memory nodes' control pages (`/dev/nvmm-ctl`, page k at
    /// offset `k * 4096`).
    pub fn with_control_pages(mut self, pages: Vec<ControlPage>) -> Process {
        self.memory.devices.control = pages;
        self
    }

    /// Keeps host descriptor `fd` (one the embedding program uses during
    /// the run) out of the guest's reach: not closed on exec or at the
    /// process's end.
    pub fn keep_fd(&mut self, fd: i32) {
        self.files.kept_fds.push(fd);
    }

    // ---- time ---------------------------------------------------------------

    /// Simulated time of the running hart, in ns.
    pub(crate) fn now_ns(&self) -> u64 {
        let t = self.threads.current();
        self.threads.cpus[t.cpu].core.time_ns()
    }

    /// The simulated ns of `c` cycles (saturating: past the end of time,
    /// `u64::MAX`, never a wrapped small time).
    pub(crate) fn cycles_to_ns(&self, c: u64) -> u64 {
        u64::try_from(c as u128 * 1_000_000_000 / self.opts.hart.clock_hz.max(1) as u128)
            .unwrap_or(u64::MAX)
    }

    /// The first cycle at or after `ns` (`u64::MAX` past the end of time).
    pub(crate) fn ns_to_cycles(&self, ns: u64) -> u64 {
        u64::try_from((ns as u128 * self.opts.hart.clock_hz as u128).div_ceil(1_000_000_000))
            .unwrap_or(u64::MAX)
    }

    /// Marks thread `i` exited, handling CLONE_CHILD_CLEARTID.
    pub(crate) fn exit_thread(&mut self, i: usize) {
        let ctid = self.threads.all[i].clear_child_tid;
        if ctid != 0 && self.write_u32(ctid, 0).is_ok() {
            self.futex_wake(ctid, 1, u32::MAX);
        }
        self.threads.exited.push(thread_stats(&self.threads.all[i]));
        self.threads.all[i].state = ThreadState::Exited;
    }

    /// Wakes up to `n` threads waiting on `addr` whose bitset intersects.
    pub(crate) fn futex_wake(&mut self, addr: u64, n: u64, bitset: u32) -> u64 {
        let now = self.threads.cpus[self.threads.current().cpu].core.cycles;
        let mut woken = 0;
        for t in self.threads.all.iter_mut() {
            if woken >= n {
                break;
            }
            if let ThreadState::Futex {
                addr: a, bitset: b, ..
            } = t.state
            {
                if a == addr && b & bitset != 0 {
                    t.state = ThreadState::Runnable;
                    t.hart.x[10] = 0;
                    let c = &mut self.threads.cpus[t.cpu];
                    if c.core.cycles < now {
                        c.core.cycles = now;
                    }
                    woken += 1;
                }
            }
        }
        woken
    }

    /// Prints a one-time notice about something the emulator lacks.
    pub(crate) fn warn_once(&mut self, key: u64, msg: &str) {
        if self.warned.insert(key) {
            eprintln!("rvnvmm: {msg}");
        }
    }
}

/// `RLIMIT_DATA`'s number.
pub(crate) const RLIMIT_DATA: usize = 2;
/// `RLIMIT_STACK`'s number.
pub(crate) const RLIMIT_STACK: usize = 3;

/// Linux's defaults for a process started from a shell whose stack limit is
/// `stack_size`.
fn default_rlimits(stack_size: u64) -> [(u64, u64); 16] {
    const INF: u64 = u64::MAX;
    let mut r = [(INF, INF); 16];
    r[RLIMIT_STACK] = (stack_size, INF);
    r[4] = (0, INF); // RLIMIT_CORE
    r[6] = (63_545, 63_545); // RLIMIT_NPROC
    r[7] = (1024, 1 << 20); // RLIMIT_NOFILE
    r[8] = (8 << 20, 8 << 20); // RLIMIT_MEMLOCK
    r[11] = (63_545, 63_545); // RLIMIT_SIGPENDING
    r[12] = (819_200, 819_200); // RLIMIT_MSGQUEUE
    r
}

/// The world the guest started in, as the guest sees it: what `--stats`
/// records as `guest`, so that two runs that differ can be told apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestStart {
    /// argv.
    pub argv: Vec<String>,
    /// The environment, `KEY=VALUE`.
    pub env: Vec<String>,
    /// The working directory (`getcwd`).
    pub cwd: String,
    /// The guest paths of the `--map`s.
    pub maps: Vec<String>,
}

impl Process {
    /// The guest's arguments, environment and working directory as given
    /// to the program now running (the command line's, or a checkpoint's).
    pub fn guest_start(&self) -> GuestStart {
        GuestStart {
            argv: self.opts.args.clone(),
            env: self.opts.env.clone(),
            cwd: self
                .files
                .fs
                .getcwd()
                .map(|c| String::from_utf8_lossy(&c).into_owned())
                .unwrap_or_default(),
            maps: self
                .files
                .fs
                .maps()
                .iter()
                .map(|m| m.guest.clone())
                .collect(),
        }
    }

    /// The epoch-based realtime clock in ns.
    pub(crate) fn realtime_ns(&self) -> u64 {
        self.opts.epoch_secs * 1_000_000_000 + self.now_ns()
    }
}

impl Outcome {
    /// The status `rvnvmm` should exit with (128+N for a signal).
    pub fn exit_status(&self) -> i32 {
        match self.exit {
            ExitKind::Code(c) => c & 0xff,
            ExitKind::Signal(s) => 128 + s,
            ExitKind::InsnLimit | ExitKind::Crash | ExitKind::Checkpoint => 0,
        }
    }
}
