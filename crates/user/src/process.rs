//! The guest process: threads on harts, the scheduler, program loading and
//! the exit protocol.

use crate::elf::{auxv::*, ElfFile, LoadError};
use crate::errno::*;
use crate::fs::{Fs, AT_FDCWD};
pub use crate::outcome::{ExitKind, Outcome, PagesOutcome, ThreadStats};
use crate::signal::{SigAction, SignalInfo};
use crate::vm::{AddressSpace, Backing, PROT_EXEC, PROT_READ, PROT_WRITE, STACK_TOP};
use rvnvmm_gdb::{Target, Verdict};
use rvnvmm_hart::MemoryModel;
use rvnvmm_hart::{
    CodeCache, Core, CoreMap, Exit, Hart, HartConfig, Trap, SMT_WINDOW, SYNC_TOLERANCE,
};
use rvnvmm_mem::sv39::{self, Access, Requester};
use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_SIZE};
use rvnvmm_mem::PhysMem;
use rvnvmm_sched::{Cores, Scheduled, Status};
use std::ops::ControlFlow;
use std::path::PathBuf;
use zerocopy::{FromBytes, Immutable, IntoBytes};

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
    /// Guest RAM the process's frames come from (DRAM): base and size.
    pub ram: (u64, u64),
    /// The NVMM region, if the machine has one: base and size. It is guest
    /// RAM too; `/dev/nvmm` maps it, and with `heap_on_nvmm` the heap's
    /// frames come from it.
    pub nvmm: Option<(u64, u64)>,
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
    /// The config names of the DRAM and NVMM regions (`memory.NAME`), for
    /// messages that say which key sizes what ran out.
    pub region_names: [String; 2],
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

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ThreadState {
    Runnable,
    /// futex wait on an address with a bitset, optional deadline (ns).
    Futex {
        addr: u64,
        bitset: u32,
        deadline: Option<u64>,
    },
    /// Sleeping until a simulated time (ns). With `restart`, the pc still
    /// points at the ecall, which runs again on wake-up (polling calls).
    Sleep {
        until: u64,
        restart: bool,
    },
    /// Waiting for any deliverable signal (pause, sigsuspend).
    SigWait,
    /// sigtimedwait: waiting for a signal of `set` (blocked ones); the pc
    /// points at the ecall, which runs again when one arrives.
    SigTimedWait {
        set: u64,
        deadline: Option<u64>,
    },
    /// Blocked in a call until a descriptor of `fds` shows its poll events
    /// (a read, write, accept, connect, poll, select, ...;
    /// `syscall/blocking.rs`): the pc points at the ecall, which runs again
    /// when one does (a call of another thread made it ready: woken at that
    /// call's time), at `until` (the call's timeout, or the next look of a
    /// call that waits on no descriptor), or when a signal interrupts it;
    /// with `restart`, a handler with `SA_RESTART` runs the call again
    /// (not so poll, select and epoll_wait).
    Io {
        fds: Vec<(i32, i16)>,
        until: Option<u64>,
        restart: bool,
    },
    Exited,
}

pub(crate) struct Thread {
    pub tid: i32,
    pub hart: Hart,
    pub state: ThreadState,
    pub clear_child_tid: u64,
    pub sigmask: u64,
    pub pending: Vec<SignalInfo>,
    pub altstack: (u64, u64, i32),
    /// The thread's name (prctl PR_SET_NAME), NUL-padded.
    pub comm: [u8; 16],
    /// The mask to restore after the next handler (set by sigsuspend).
    pub saved_mask: Option<u64>,
    /// Deadline (ns) of a restarting wait (poll, select, sigtimedwait) in
    /// progress, kept across its re-executions.
    pub wait_deadline: Option<u64>,
    /// What a blocking call in progress has done before it waited again:
    /// the bytes a write (or a `MSG_WAITALL` receive) has moved, or
    /// `blocking::CONNECTING` for a connection under way; 0 otherwise.
    pub io_done: u64,
    pub cpu: usize,
    pub affinity: u64,
    /// Why the last synchronous fault was raised (for the line printed
    /// if it kills the process).
    pub fault_note: Option<String>,
}

impl Thread {
    /// A runnable thread `tid` on `hart`, placed on `cpu`, with nothing
    /// pending, no signal mask, no alternate stack, no name, any CPU
    /// allowed.
    pub(crate) fn new(tid: i32, hart: Hart, cpu: usize) -> Thread {
        Thread {
            tid,
            hart,
            state: ThreadState::Runnable,
            clear_child_tid: 0,
            sigmask: 0,
            pending: Vec::new(),
            altstack: (0, 0, crate::signal::SS_DISABLE),
            comm: [0; 16],
            saved_mask: None,
            wait_deadline: None,
            io_done: 0,
            cpu,
            affinity: u64::MAX,
            fault_note: None,
        }
    }

    /// When the thread's timed wait ends, in ns.
    pub(crate) fn wait_ends_ns(&self) -> Option<u64> {
        match self.state {
            ThreadState::Sleep { until, .. }
            | ThreadState::SigTimedWait {
                deadline: Some(until),
                ..
            }
            | ThreadState::Futex {
                deadline: Some(until),
                ..
            }
            | ThreadState::Io {
                until: Some(until), ..
            } => Some(until),
            _ => None,
        }
    }
}

pub(crate) struct Cpu {
    /// The core: local clock, costs, L1 slot and `mhartid`.
    pub core: Core,
    pub instret: u64,
    /// Round-robin cursor over threads.
    pub cursor: usize,
    /// The thread whose time slice is running, and when it ends (cycles).
    pub holder: Option<usize>,
    pub slice_end: u64,
}

/// The threads of a process on the harts they are scheduled on.
pub(crate) struct Threads {
    /// Every thread the process has had since its last exec, the exited
    /// ones too (in [`ThreadState::Exited`]): a thread's index here is its
    /// handle.
    pub(crate) all: Vec<Thread>,
    /// The harts (CPUs) threads run on, by `mhartid`.
    pub(crate) cpus: Vec<Cpu>,
    /// The index in `all` of the thread running (or last run).
    pub(crate) current: usize,
    /// The thread id the next new thread is given.
    pub(crate) next_tid: i32,
    /// Statistics of threads that have exited.
    pub(crate) exited: Vec<ThreadStats>,
    /// Instructions retired by all threads together, the exited ones too.
    pub(crate) total_insns: u64,
    /// The process's CPU time: the hart cycles its threads ran.
    pub(crate) cpu_cycles: u64,
}

impl Threads {
    /// The thread running (or last run).
    pub(crate) fn current(&self) -> &Thread {
        &self.all[self.current]
    }

    /// The thread running (or last run), to change.
    pub(crate) fn current_mut(&mut self) -> &mut Thread {
        &mut self.all[self.current]
    }

    /// The timed wait that ends first: (ns, thread), the lower thread on a
    /// tie.
    pub(crate) fn next_timed_wait(&self) -> Option<(u64, usize)> {
        self.all
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((t.wait_ends_ns()?, i)))
            .min()
    }

    /// Whether a thread other than `i` is runnable on `cpu`.
    pub(crate) fn others_runnable_on(&self, cpu: usize, i: usize) -> bool {
        self.all
            .iter()
            .enumerate()
            .any(|(k, t)| k != i && t.cpu == cpu && t.state == ThreadState::Runnable)
    }

    /// The next runnable thread on `cpu`, round-robin.
    pub(crate) fn rotate_on(&mut self, cpu: usize) -> Option<usize> {
        let n = self.all.len();
        let start = self.cpus[cpu].cursor;
        for k in 0..n {
            let i = (start + k) % n;
            if self.all[i].cpu == cpu && self.all[i].state == ThreadState::Runnable {
                self.cpus[cpu].cursor = i + 1;
                return Some(i);
            }
        }
        None
    }

    /// The latest hart clock, in cycles (the machine's time).
    pub(crate) fn latest_cycles(&self) -> u64 {
        self.cpus.iter().map(|c| c.core.cycles).max().unwrap_or(0)
    }

    /// After the page tables changed: drop every hart's cached translations.
    pub(crate) fn flush_tlbs(&mut self) {
        for t in &mut self.all {
            t.hart.translations_changed();
        }
    }
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
    pub(crate) pid: i32,
    pub(crate) exit: Option<ExitKind>,
    pub(crate) is_child: bool,
    /// The process tree this process belongs to, once it or an ancestor
    /// forked (`family.rs`).
    pub(crate) family: Option<crate::family::Family>,
    /// The tree's members at the end of the root's run.
    pub(crate) members: Option<crate::family::TreeStats>,
    /// `total_insns` when this process was forked (its own count starts
    /// there).
    pub(crate) insns_at_fork: u64,
    pub(crate) warned: std::collections::HashSet<u64>,
    /// State of the deterministic getrandom generator.
    pub(crate) rng_state: u64,
    /// Resource limits (soft, hard) by RLIMIT_* number.
    pub(crate) rlimits: [(u64, u64); 16],
    /// The memory-system timing model, if the machine is timed.
    pub(crate) memsys: Option<Box<dyn MemoryModel>>,
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
        let mut ranges = vec![opts.ram];
        ranges.extend(opts.nvmm);
        let mut mem = PhysMem::new(&ranges).map_err(|e| RunError::Setup(e.to_string()))?;
        let heap_pool = if opts.heap_on_nvmm {
            if opts.nvmm.is_none() {
                return Err(RunError::Setup(
                    "user.heap = nvmm, but the machine has no NVMM region".into(),
                ));
            }
            1
        } else {
            0
        };
        // Heap frames come from the upper half of the NVMM region: the
        // lower half is left to /dev/nvmm windows, which programs map from
        // offset 0, so the two never share frames by default (and a window
        // over heap frames in use is refused: `Frames::claim`).
        let pools: Vec<(u64, u64)> = ranges
            .iter()
            .enumerate()
            .map(|(i, &(base, size))| {
                if i == 1 {
                    let half = page_base(size / 2);
                    (base + half, size - half)
                } else {
                    (base, size)
                }
            })
            .collect();
        let mut aspace = AddressSpace::with_pools(&mut mem, &pools, heap_pool)
            .map_err(|_| RunError::Setup("guest RAM too small".into()))?;
        aspace.pages = opts.pages;
        let mut fs = Fs::new(opts.root.as_deref(), opts.sysroot.as_deref())
            .map_err(|e| RunError::Setup(format!("cannot use the root directory: {e}")))?;
        for m in &opts.maps {
            fs.add_map(m.clone())
                .map_err(|e| RunError::Setup(e.to_string()))?;
        }
        let topology = crate::procfs::Topology::new(opts.harts, opts.threads_per_core);
        let (harts, threads_per_core) = (topology.harts, topology.threads_per_core);
        fs.tree = Some(crate::procfs::EmulatedTree::build(topology).map_err(|e| {
            RunError::Setup(format!(
                "cannot write the emulated /proc and /sys to the temporary directory: {e}"
            ))
        })?);
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

    /// Maps the memory system's control page (`/dev/nvmm-ctl`).
    pub fn with_control_page(mut self, page: rvnvmm_memsys::control::ControlPage) -> Process {
        self.memory.devices.control = Some(page);
        self
    }

    /// Replaces the process image with `path` (execve). The current thread
    /// becomes the only one.
    pub(crate) fn exec(
        &mut self,
        path: &str,
        args: &[String],
        env: &[String],
        from_host: bool,
    ) -> Result<(), LoadError> {
        // The program named on the command line is a host path even under
        // --root, unless a map (or, without a root, the sysroot) holds it:
        // then it is the guest's name. Every path the guest names goes
        // through its own view.
        let mapped = from_host
            .then(|| self.files.fs.guest_named_host(path.as_bytes()))
            .flatten();
        let from_host = from_host && mapped.is_none();
        let host = if let Some(h) = mapped {
            h
        } else if from_host {
            PathBuf::from(path)
        } else {
            self.files
                .fs
                .host_path(AT_FDCWD, path.as_bytes())
                .map_err(|e| LoadError::Io {
                    path: path.to_string(),
                    source: std::io::Error::from_raw_os_error(e.raw()),
                })?
        };
        let file = ElfFile::open(&host, path)?;
        let interp = match file.interpreter().map(str::to_string) {
            Some(i) => {
                let hint = if self.opts.sysroot.is_none() && self.opts.root.is_none() {
                    " (pass --sysroot DIR with a riscv64 root, e.g. /usr/riscv64-linux-gnu)"
                        .to_string()
                } else {
                    " in the --sysroot/--root directory".to_string()
                };
                let missing = || LoadError::MissingInterpreter {
                    path: path.to_string(),
                    interp: i.clone(),
                    hint: hint.clone(),
                };
                let ihost = self
                    .files
                    .fs
                    .host_path(AT_FDCWD, i.as_bytes())
                    .map_err(|_| missing())?;
                if !ihost.exists() {
                    return Err(missing());
                }
                Some(ElfFile::open(&ihost, &i)?)
            }
            None => None,
        };
        // Point of no return: tear down the old image.
        self.memory.aspace.clear(&mut self.memory.phys);
        self.memory.code.flush();
        let cur = self.threads.current;
        let keep = self.threads.all.swap_remove(cur);
        self.threads.all.clear();
        self.threads.all.push(keep);
        self.threads.current = 0;
        for a in self.signals.actions.iter_mut() {
            if a.handler > 1 {
                *a = SigAction::default();
            }
        }
        // As Linux, the stack (and below it the mmap area) is laid out for
        // the soft RLIMIT_STACK in force at exec.
        let stack_size = self.rlimits[RLIMIT_STACK]
            .0
            .min(rvnvmm_config::MAX_STACK_SIZE)
            .next_multiple_of(0x1000)
            .max(0x1000);
        self.memory.aspace.mmap_top = crate::vm::mmap_top_for_stack(stack_size);
        let nomem = || LoadError::NoMemory {
            path: path.to_string(),
        };
        let (_bias, entry, phdr, end) = file.load(
            &mut self.memory.phys,
            &mut self.memory.aspace,
            Some(crate::vm::PIE_BASE),
        )?;
        let (interp_base, start) = match &interp {
            Some(i) => {
                let (b, e, _, _) = i.load(&mut self.memory.phys, &mut self.memory.aspace, None)?;
                (b, e)
            }
            None => (0, entry),
        };
        let brk = end.next_multiple_of(PAGE_SIZE);
        self.memory.aspace.data_segment = file.data_segment_bytes();
        self.memory.aspace.brk_start = brk;
        self.memory.aspace.brk = brk;
        // Signal-return trampoline: li a7, 139; ecall.
        self.memory.aspace.add(
            SIGRETURN_PAGE,
            SIGRETURN_PAGE + 0x1000,
            PROT_READ | PROT_EXEC,
            Backing::Populated,
            "[vdso]",
        );
        let f = self
            .memory
            .aspace
            .populate_page(&mut self.memory.phys, SIGRETURN_PAGE, PROT_READ | PROT_EXEC)
            .map_err(|_| nomem())?;
        self.memory
            .phys
            .write(f, &[0x93, 0x08, 0xb0, 0x08, 0x73, 0x00, 0x00, 0x00]);
        self.memory.aspace.add(
            STACK_TOP - stack_size,
            STACK_TOP,
            PROT_READ | PROT_WRITE,
            Backing::Anon,
            "[stack]",
        );
        self.files.fs.exe_host = host.clone();
        let base = path.rsplit('/').next().unwrap_or(path).as_bytes();
        let mut comm = [0u8; 16];
        comm[..base.len().min(15)].copy_from_slice(&base[..base.len().min(15)]);
        self.threads.current_mut().comm = comm;
        self.files.fs.exe_guest = if self.files.fs.confined() && from_host {
            // A program named on the command line is seen inside the
            // root; one from outside it by its file name only, so no host
            // path reaches the guest.
            std::fs::canonicalize(&host)
                .ok()
                .and_then(|h| self.files.fs.guest_path_of_host(&h))
                .unwrap_or_else(|| format!("/{}", path.rsplit('/').next().unwrap_or(path)))
        } else if self.files.fs.confined() || path.starts_with('/') {
            path.to_string()
        } else {
            std::env::current_dir()
                .map(|d| d.join(path).display().to_string())
                .unwrap_or_else(|_| path.to_string())
        };
        // The program's areas carry the name the guest knows it by.
        for v in self.memory.aspace.vmas.values_mut() {
            if v.image.is_some() && v.name == path {
                v.name.clone_from(&self.files.fs.exe_guest);
            }
        }
        let phnum = file.phdrs.len() as u64;
        let sp = self
            .build_stack(args, env, path, entry, phdr, phnum, interp_base)
            .map_err(|_| nomem())?;
        let t = &mut self.threads.all[0];
        t.hart.x = [0; 32];
        t.hart.f = [0; 32];
        t.hart.fflags = 0;
        t.hart.frm = 0;
        t.hart.x[2] = sp;
        t.hart.pc = start;
        t.hart.page_table = Some(self.memory.aspace.root);
        t.hart.translations_changed();
        t.hart.clear_reservation();
        t.clear_child_tid = 0;
        t.pending.clear();
        t.altstack = (0, 0, 2);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn build_stack(
        &mut self,
        args: &[String],
        env: &[String],
        execfn: &str,
        entry: u64,
        phdr: u64,
        phnum: u64,
        interp_base: u64,
    ) -> Result<u64, Errno> {
        let mut sp = STACK_TOP;
        let push_bytes = |p: &mut Process, sp: &mut u64, data: &[u8]| -> Result<u64, Errno> {
            *sp -= data.len() as u64;
            p.write_mem(*sp, data)?;
            Ok(*sp)
        };
        let cstr = |s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.push(0);
            v
        };
        let execfn_addr = push_bytes(self, &mut sp, &cstr(execfn))?;
        let env_end = sp;
        let mut env_ptrs = Vec::new();
        for e in env.iter().rev() {
            env_ptrs.push(push_bytes(self, &mut sp, &cstr(e))?);
        }
        env_ptrs.reverse();
        let arg_end = sp;
        self.image.env_area = (sp, env_end);
        let mut arg_ptrs = Vec::new();
        for a in args.iter().rev() {
            arg_ptrs.push(push_bytes(self, &mut sp, &cstr(a))?);
        }
        arg_ptrs.reverse();
        self.image.arg_area = (sp, arg_end);
        // AT_RANDOM: 16 bytes, fixed so runs are deterministic.
        let random = push_bytes(self, &mut sp, b"rvnvmm-at-random")?;
        sp &= !15;
        let auxv: Vec<(u64, u64)> = vec![
            (AT_PHDR, phdr),
            (AT_PHENT, 56),
            (AT_PHNUM, phnum),
            (AT_PAGESZ, PAGE_SIZE),
            (AT_BASE, interp_base),
            (AT_FLAGS, 0),
            (AT_ENTRY, entry),
            (AT_UID, unsafe_id(libc::getuid)),
            (AT_EUID, unsafe_id(libc::geteuid)),
            (AT_GID, unsafe_id(libc::getgid)),
            (AT_EGID, unsafe_id(libc::getegid)),
            (AT_HWCAP, self.opts.hart.isa.hwcap()),
            (AT_CLKTCK, 100),
            (AT_SECURE, 0),
            (AT_RANDOM, random),
            (AT_EXECFN, execfn_addr),
            (AT_NULL, 0),
        ];
        let mut words: Vec<u64> = vec![args.len() as u64];
        words.extend(&arg_ptrs);
        words.push(0);
        words.extend(&env_ptrs);
        words.push(0);
        for &(k, v) in &auxv {
            words.push(k);
            words.push(v);
        }
        self.image.auxv = auxv;
        sp -= words.len() as u64 * 8;
        sp &= !15;
        self.image.start_stack = sp;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write_mem(sp, &bytes)?;
        Ok(sp)
    }

    // ---- guest memory access for the kernel --------------------------------

    /// Translates a user address for the kernel, faulting pages in as the
    /// hart would. Errors are EFAULT.
    pub(crate) fn user_paddr(&mut self, vaddr: u64, access: Access) -> Result<u64, Errno> {
        let who = Requester {
            user: true,
            sum: false,
            mxr: false,
        };
        for _ in 0..2 {
            match sv39::translate(
                &mut self.memory.phys,
                self.memory.aspace.root,
                vaddr,
                access,
                who,
            ) {
                Ok(t) => return Ok(t.paddr),
                Err(_) => {
                    let ok = match self.memory.aspace.handle_fault(
                        &mut self.memory.phys,
                        vaddr,
                        access == Access::Write,
                        false,
                    ) {
                        Ok(ok) => ok,
                        Err(ENOMEM) => {
                            self.out_of_memory(vaddr);
                            return Err(EFAULT);
                        }
                        Err(_) => return Err(EFAULT),
                    };
                    if !ok {
                        return Err(EFAULT);
                    }
                }
            }
        }
        Err(EFAULT)
    }

    /// Reads guest memory.
    pub(crate) fn read_mem(&mut self, vaddr: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < buf.len() {
            let va = vaddr.wrapping_add(done as u64);
            let n = ((PAGE_SIZE - page_offset(va)) as usize).min(buf.len() - done);
            let pa = self.user_paddr(va, Access::Read)?;
            if !self.memory.phys.read(pa, &mut buf[done..done + n]) {
                return Err(EFAULT);
            }
            done += n;
        }
        Ok(())
    }

    /// Writes guest memory (keeping decoded code coherent).
    pub(crate) fn write_mem(&mut self, vaddr: u64, data: &[u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < data.len() {
            let va = vaddr.wrapping_add(done as u64);
            let n = ((PAGE_SIZE - page_offset(va)) as usize).min(data.len() - done);
            let pa = self.user_paddr(va, Access::Write)?;
            if !self.memory.phys.write(pa, &data[done..done + n]) {
                return Err(EFAULT);
            }
            self.memory.code.pages.code_written(page_base(pa));
            done += n;
        }
        Ok(())
    }

    /// Reads a guest ABI value (a [`crate::abi`] struct, or an array of
    /// plain integers) whole.
    pub(crate) fn read_obj<T: FromBytes + IntoBytes>(&mut self, vaddr: u64) -> Result<T, Errno> {
        let mut v = T::new_zeroed();
        self.read_mem(vaddr, v.as_mut_bytes())?;
        Ok(v)
    }

    /// Reads `n` guest ABI values in a row (an array of structs) whole.
    pub(crate) fn read_objs<T: FromBytes + IntoBytes + Clone>(
        &mut self,
        vaddr: u64,
        n: usize,
    ) -> Result<Vec<T>, Errno> {
        let mut v = vec![T::new_zeroed(); n];
        self.read_mem(vaddr, v.as_mut_slice().as_mut_bytes())?;
        Ok(v)
    }

    /// Writes a guest ABI value whole.
    pub(crate) fn write_obj<T: IntoBytes + Immutable + ?Sized>(
        &mut self,
        vaddr: u64,
        v: &T,
    ) -> Result<(), Errno> {
        self.write_mem(vaddr, v.as_bytes())
    }

    pub(crate) fn read_u64(&mut self, vaddr: u64) -> Result<u64, Errno> {
        let mut b = [0u8; 8];
        self.read_mem(vaddr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub(crate) fn read_u32(&mut self, vaddr: u64) -> Result<u32, Errno> {
        let mut b = [0u8; 4];
        self.read_mem(vaddr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(crate) fn write_u64(&mut self, vaddr: u64, v: u64) -> Result<(), Errno> {
        self.write_mem(vaddr, &v.to_le_bytes())
    }

    pub(crate) fn write_u32(&mut self, vaddr: u64, v: u32) -> Result<(), Errno> {
        self.write_mem(vaddr, &v.to_le_bytes())
    }

    /// Reads a NUL-terminated string (at most 4096 bytes).
    pub(crate) fn read_cstr(&mut self, vaddr: u64) -> Result<Vec<u8>, Errno> {
        let mut out = Vec::new();
        let mut va = vaddr;
        loop {
            let n = (PAGE_SIZE - page_offset(va)) as usize;
            let mut chunk = vec![0u8; n];
            self.read_mem(va, &mut chunk)?;
            if let Some(z) = chunk.iter().position(|&c| c == 0) {
                out.extend_from_slice(&chunk[..z]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk);
            if out.len() > 1 << 20 {
                return Err(ENAMETOOLONG);
            }
            va += n as u64;
        }
    }

    /// Reads a NULL-terminated array of string pointers (argv, envp).
    pub(crate) fn read_str_array(&mut self, vaddr: u64) -> Result<Vec<String>, Errno> {
        let mut v = Vec::new();
        if vaddr == 0 {
            return Ok(v);
        }
        for i in 0.. {
            let p = self.read_u64(vaddr + i * 8)?;
            if p == 0 {
                break;
            }
            v.push(String::from_utf8_lossy(&self.read_cstr(p)?).into_owned());
            if v.len() > 1 << 16 {
                return Err(E2BIG);
            }
        }
        Ok(v)
    }

    // ---- time and scheduling ------------------------------------------------

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

    /// The thread to run on `cpu`: the one whose time slice is running, if
    /// it still can; else the next runnable one, round-robin, with a new
    /// slice.
    fn next_thread_on(&mut self, cpu: usize) -> Option<usize> {
        let c = &self.threads.cpus[cpu];
        if let Some(i) = c.holder {
            let t = self.threads.all.get(i);
            if c.core.cycles < c.slice_end
                && t.is_some_and(|t| t.cpu == cpu && t.state == ThreadState::Runnable)
            {
                return Some(i);
            }
        }
        let i = self.threads.rotate_on(cpu)?;
        let slice = self.ns_to_cycles(self.opts.time_slice_ns.max(1)).max(1);
        let c = &mut self.threads.cpus[cpu];
        c.holder = Some(i);
        c.slice_end = c.core.cycles.saturating_add(slice);
        Some(i)
    }

    /// Runs the guest to completion: threads on harts, in simulated-time
    /// order ([`rvnvmm_sched::Scheduler`]).
    /// Keeps host descriptor `fd` (one the embedding program uses during
    /// the run) out of the guest's reach: not closed on exec or at the
    /// process's end.
    pub fn keep_fd(&mut self, fd: i32) {
        self.files.kept_fds.push(fd);
    }

    pub fn run(&mut self) -> Result<Outcome, RunError> {
        // A write to a pipe with no reader fails with EPIPE, and the
        // guest's SIGPIPE is raised by the emulator (`syscall/mod.rs`).
        // SAFETY: setting a disposition to ignore.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        let ran = rvnvmm_sched::Scheduler::new(SYNC_TOLERANCE).run(self);
        if ran.is_ok() && self.exit == Some(ExitKind::Checkpoint) {
            // The process goes on from a checkpoint: nothing is let go.
            return Ok(self.outcome_now(false));
        }
        // The other processes of the tree go on; the root waits for them.
        self.leave_tree(ran.is_err());
        // No guest code runs after this: let go of the emulated tree now,
        // not when the process is dropped (a run that ends by the guest's
        // signal ends the emulator without dropping it).
        if let Some(tree) = self.files.fs.tree.as_mut() {
            tree.release();
        }
        if let Some(gdb) = self.gdb.as_mut() {
            match self.exit {
                Some(ExitKind::Signal(sig)) => gdb.killed(sig),
                Some(ExitKind::Code(code)) => gdb.exited(code),
                None => gdb.exited(0),
                Some(ExitKind::InsnLimit | ExitKind::Crash | ExitKind::Checkpoint) => {
                    gdb.killed(libc::SIGKILL)
                }
            }
        }
        ran?;
        Ok(self.outcome())
    }

    /// Nothing can run: every thread waits or has exited.
    fn nothing_runs(&mut self) -> ControlFlow<Result<(), RunError>> {
        if self
            .threads
            .all
            .iter()
            .all(|t| t.state == ThreadState::Exited)
        {
            self.exit = Some(ExitKind::Code(0));
            return ControlFlow::Break(Ok(()));
        }
        // Threads wait for descriptors: the host says when one is ready,
        // or a host signal comes.
        if self.wait_for_io() {
            return ControlFlow::Continue(());
        }
        // Every thread waits. Only a signal from outside can wake
        // one: a thread in pause/sigsuspend/sigwait waits for it as
        // long as it takes (a fatal one ends the emulator on the
        // host), and a handled one wakes futex waiters with EINTR.
        let waits_for_signal = self.threads.all.iter().any(|t| match &t.state {
            ThreadState::SigWait | ThreadState::SigTimedWait { deadline: None, .. } => true,
            // select with no descriptors and no timeout.
            ThreadState::Io { fds, until, .. } => fds.is_empty() && until.is_none(),
            _ => false,
        });
        if waits_for_signal || self.signals.actions.iter().any(|a| a.handler > 1) {
            crate::signal::host::wait_for_host_signal();
            return ControlFlow::Continue(());
        }
        ControlFlow::Break(Err(RunError::Deadlock))
    }
}

/// The harts are the scheduler's cores: one is ready while a thread on it
/// is runnable; threads' timed waits are its wake-ups.
impl Cores for Process {
    fn cores(&self) -> usize {
        self.threads.cpus.len()
    }

    fn clock(&self, core: usize) -> u64 {
        self.threads.cpus[core].core.cycles
    }

    fn status(&self, core: usize) -> Status {
        let mut lives = false;
        let mut timer: Option<u64> = None;
        for t in self.threads.all.iter().filter(|t| t.cpu == core) {
            match t.state {
                ThreadState::Runnable => return Status::Ready,
                ThreadState::Exited => {}
                _ => {
                    lives = true;
                    if let Some(ns) = t.wait_ends_ns() {
                        timer = Some(timer.map_or(ns, |d| d.min(ns)));
                    }
                }
            }
        }
        if lives {
            Status::Blocked {
                timer: timer.map(|ns| self.ns_to_cycles(ns)),
            }
        } else {
            Status::Idle
        }
    }

    fn next_wakeup(&self) -> Option<u64> {
        let wait = self.threads.next_timed_wait().map(|(ns, _)| ns);
        let timer = self.real_timer_wakeup();
        wait.into_iter()
            .chain(timer)
            .min()
            .map(|ns| self.ns_to_cycles(ns))
    }

    /// The timed wait that ends first ends: the thread becomes runnable,
    /// its hart's clock no earlier than the end. `ITIMER_REAL` expiring
    /// first (or with it) sends its signal first.
    fn deliver_wakeup(&mut self) {
        let wait = self.threads.next_timed_wait();
        if let Some(at) = self.real_timer_wakeup() {
            if wait.is_none_or(|(ns, _)| at <= ns) {
                self.fire_real_timer(at);
                return;
            }
        }
        let Some((when, i)) = wait else {
            return;
        };
        let cpu = self.threads.all[i].cpu;
        let wake_cycles = self.ns_to_cycles(when);
        if self.threads.cpus[cpu].core.cycles < wake_cycles {
            self.threads.cpus[cpu].core.cycles = wake_cycles;
        }
        let t = &mut self.threads.all[i];
        t.hart.x[10] = match t.state {
            // A restarting call re-executes and sees its deadline.
            ThreadState::Sleep { restart: true, .. }
            | ThreadState::SigTimedWait { .. }
            | ThreadState::Io { .. } => t.hart.x[10],
            ThreadState::Futex { .. } => (-ETIMEDOUT) as u64,
            _ => 0,
        };
        t.state = ThreadState::Runnable;
    }

    fn notes_time(&self) -> bool {
        self.memsys.is_some()
    }

    fn note_time(&mut self, core: usize, cycles: u64) {
        if let Some(m) = self.memsys.as_deref_mut() {
            m.note_hart_time(core, cycles);
        }
    }
}

/// gdb's view of the process: its live threads by thread id, memory as
/// `ptrace` reaches it (faulting pages in, as Linux does).
impl Target for Process {
    fn threads(&self) -> Vec<u64> {
        self.threads
            .all
            .iter()
            .filter(|t| t.state != ThreadState::Exited)
            .map(|t| t.tid as u64)
            .collect()
    }

    fn hart(&self, thread: u64) -> Option<&Hart> {
        self.threads
            .all
            .iter()
            .find(|t| t.tid as u64 == thread && t.state != ThreadState::Exited)
            .map(|t| &t.hart)
    }

    fn hart_mut(&mut self, thread: u64) -> Option<&mut Hart> {
        self.threads
            .all
            .iter_mut()
            .find(|t| t.tid as u64 == thread && t.state != ThreadState::Exited)
            .map(|t| &mut t.hart)
    }

    fn read_memory(&mut self, thread: u64, addr: u64, buf: &mut [u8]) -> bool {
        Target::hart(self, thread).is_some_and(|hart| self.memory.peek(hart, addr, buf))
    }

    fn write_memory(&mut self, _thread: u64, addr: u64, data: &[u8]) -> bool {
        self.write_mem(addr, data).is_ok()
    }

    fn full_system(&self) -> bool {
        false
    }
}

impl Scheduled for Process {
    type Stop = Result<(), RunError>;
    type Turn = Exit;

    fn check(&mut self) -> ControlFlow<Self::Stop> {
        if self.exit.is_some() {
            return ControlFlow::Break(Ok(()));
        }
        self.take_host_signals();
        self.tree_check();
        if self
            .threads
            .all
            .iter()
            .any(|t| matches!(t.state, ThreadState::Io { .. }))
        {
            // Readiness from outside the process (a child, a terminal, a
            // peer elsewhere) wakes its waiter at the earliest ready hart's
            // time.
            let present = (0..self.threads.cpus.len())
                .filter(|&c| self.status(c) == Status::Ready)
                .map(|c| self.threads.cpus[c].core.cycles)
                .min();
            self.wake_ready_io(present);
        }
        if let Some(mut gdb) = self.gdb.take() {
            let last = self
                .threads
                .all
                .get(self.threads.current)
                .map_or(1, |t| t.tid as u64);
            match gdb.poll(self, last) {
                Verdict::Run => self.gdb = Some(gdb),
                Verdict::Detach => {}
                Verdict::Kill => {
                    self.exit = Some(ExitKind::Signal(libc::SIGKILL));
                    self.gdb = Some(gdb);
                    return ControlFlow::Break(Ok(()));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn idle(&mut self) -> ControlFlow<Self::Stop> {
        if self.tree_idle() {
            return ControlFlow::Continue(());
        }
        self.nothing_runs()
    }

    /// The next thread on the hart, after its pending signals; threads
    /// sharing the hart take turns every `quantum` instructions.
    fn begin_turn(&mut self, cpu: usize) -> ControlFlow<Self::Stop, u64> {
        let i = self
            .next_thread_on(cpu)
            .expect("a ready hart has a runnable thread");
        self.threads.current = i;
        if !self.threads.all[i].pending.is_empty() {
            self.deliver_pending();
            if self.exit.is_some() {
                return ControlFlow::Break(Ok(()));
            }
        }
        let slice = self.turn_slice();
        let slice = match self.opts.crash_at.filter(|_| !self.is_child) {
            Some(at) => {
                let cycles = self.threads.cpus[cpu].core.cycles;
                if at.reached(self.threads.total_insns, self.cycles_to_ns(cycles)) {
                    self.exit = Some(ExitKind::Crash);
                    return ControlFlow::Break(Ok(()));
                }
                at.turn(slice, self.threads.total_insns, |ns| {
                    self.ns_to_cycles(ns).saturating_sub(cycles)
                })
            }
            None => slice,
        };
        // A checkpoint's point comes before a switch or reset there: the
        // process restored from it makes them.
        let Some(slice) = self.checkpoint_turn(cpu, slice) else {
            return ControlFlow::Break(Ok(()));
        };
        // A fast-forward or reset by instruction count comes exactly at it.
        self.check_points();
        let slice = match self.insns_to_next_point() {
            Some(n) => slice.min(n),
            None => slice,
        };
        match rvnvmm_sched::clamp_budget(slice, self.threads.total_insns, self.opts.max_insns) {
            Some(budget) => ControlFlow::Continue(budget),
            None => {
                self.exit = Some(ExitKind::InsnLimit);
                ControlFlow::Break(Ok(()))
            }
        }
    }

    fn run_turn(&mut self, cpu: usize, budget: u64, limit: u64) -> ControlFlow<Self::Stop, Exit> {
        // The thread's slice ends the turn if another waits for the CPU; a
        // sibling hardware thread ready on the core ends it a window past
        // the sibling's clock (their slot contention needs them close).
        let mut turn_end = if self.threads.others_runnable_on(cpu, self.threads.current) {
            self.threads.cpus[cpu].slice_end
        } else {
            u64::MAX
        };
        if self.threads.cpus[cpu].core.calendar().is_some() {
            let per_core = self.opts.threads_per_core.max(1);
            let first = cpu - cpu % per_core;
            for sib in first..(first + per_core).min(self.threads.cpus.len()) {
                let ready = (sib != cpu && self.status(sib) == Status::Ready)
                    .then(|| self.threads.cpus[sib].core.cycles);
                self.threads.cpus[cpu]
                    .core
                    .set_sibling_ready(sib - first, ready);
                if let Some(c) = ready {
                    turn_end = turn_end.min(c.saturating_add(SMT_WINDOW));
                }
            }
        }
        if let Some(end) = self.timer_turn_end(cpu) {
            turn_end = turn_end.min(end);
        }
        if let Some(end) = self.tree_turn_end() {
            turn_end = turn_end.min(end);
        }
        self.threads.cpus[cpu].core.set_turn_end(turn_end);
        // The process's CPU time: what the turn adds to the clocks of the
        // core's harts (only those that run a thread move).
        let per_core = self.opts.threads_per_core.max(1);
        let group =
            cpu - cpu % per_core..(cpu - cpu % per_core + per_core).min(self.threads.cpus.len());
        let clocks_before: u64 = self.threads.cpus[group.clone()]
            .iter()
            .map(|c| c.core.cycles)
            .sum();
        let t = &mut self.threads.all[self.threads.current];
        self.threads.cpus[cpu].core.set_sync_limit(limit);
        let before = t.hart.instret;
        if self.memory.phys.tracks_persistence() {
            // Events carry the machine's instruction count.
            self.memory
                .phys
                .set_insn_base(self.threads.total_insns - before);
        }
        // Only the turn the crash ends stops mid-block, so a crash run is
        // the run without one up to its crash (crash points learnt from a
        // run without `--crash-at` land where they were there).
        let switch_ends_turn = self
            .insns_to_next_exact_point()
            .is_some_and(|n| budget >= n);
        let t = &mut self.threads.all[self.threads.current];
        t.hart.exact_budget = switch_ends_turn
            || !self.is_child
                && self
                    .opts
                    .crash_at
                    .is_some_and(|at| at.ends_turn(self.threads.total_insns, budget));
        let exit = if t.hart.exact_budget {
            None
        } else {
            self.run_siblings(cpu, budget)
        };
        let exit = match exit {
            Some(exit) => exit,
            None => {
                let t = &mut self.threads.all[self.threads.current];
                let mut env = self.memory.env(self.memsys.as_deref_mut());
                let exit = t
                    .hart
                    .run(&mut self.threads.cpus[cpu].core, &mut env, budget);
                let ran = t.hart.instret - before;
                self.threads.total_insns += ran;
                self.threads.cpus[cpu].instret += ran;
                exit
            }
        };
        let clocks_after: u64 = self.threads.cpus[group].iter().map(|c| c.core.cycles).sum();
        self.threads.cpu_cycles += clocks_after - clocks_before;
        if !self.is_child && self.progress.is_some() {
            let latest = self.threads.latest_cycles();
            let ns = self.cycles_to_ns(latest);
            if let Some(f) = self.progress.as_mut() {
                f(self.threads.total_insns, ns);
            }
        }
        ControlFlow::Continue(exit)
    }

    fn end_turn(&mut self, _cpu: usize, exit: Exit) -> ControlFlow<Self::Stop> {
        match exit {
            Exit::Budget => {}
            Exit::Ecall => {
                self.syscall();
                self.tree_after_syscall();
            }
            Exit::Wfi | Exit::Yield => {}
            Exit::Trap(trap) => self.handle_trap(trap),
            Exit::Marker { op, arg } => self.marker(op, arg),
        }
        if self.cpu_timer_armed() {
            self.check_cpu_timers();
        }
        self.deliver_pending();
        ControlFlow::Continue(())
    }
}

/// The most instructions the ready threads of an SMT core run in one
/// [`Process::run_siblings`] call: the scheduler's checks between turns
/// (host signals, the progress display) come at least this often.
const SIBLING_TURNS_INSNS: u64 = 1 << 20;

impl Process {
    /// The instructions a turn runs at most: `quantum` while several
    /// threads are runnable, else at least a million.
    fn turn_slice(&self) -> u64 {
        let runnable = self
            .threads
            .all
            .iter()
            .filter(|t| t.state == ThreadState::Runnable)
            .count();
        if runnable > 1 {
            self.opts.quantum
        } else {
            self.opts.quantum.max(1_000_000)
        }
    }

    /// Runs the turn of `cpu`, prepared by `run_turn`, and the turns of
    /// its core's other ready hardware threads after it, back to back, as
    /// long as the scheduler would choose them next and nothing between
    /// their turns would act (`Hart::run_siblings`): then the current
    /// thread is the one that ran last, and its exit is returned. `None`
    /// (nothing ran) where that does not hold: not an SMT core, fewer than
    /// two ready threads on it, a CPU of it time-shared by several threads
    /// or holding a thread with a signal pending, a debugger, a crash point,
    /// the persistence domain tracked.
    fn run_siblings(&mut self, cpu: usize, budget: u64) -> Option<Exit> {
        let per_core = self.opts.threads_per_core.max(1);
        if per_core < 2
            || self.gdb.is_some()
            || self.cpu_timer_armed()
            || self.opts.crash_at.is_some()
            || self.memory.phys.tracks_persistence()
            || self.threads.cpus[cpu].core.calendar().is_none()
        {
            return None;
        }
        let first_cpu = cpu - cpu % per_core;
        let end_cpu = (first_cpu + per_core).min(self.threads.cpus.len());
        // The runnable thread of each CPU of the core; `usize::MAX`: none.
        let mut runs = [usize::MAX; rvnvmm_hart::smt::MAX_THREADS];
        if end_cpu - first_cpu > runs.len() {
            return None;
        }
        for (i, t) in self.threads.all.iter().enumerate() {
            if t.state != ThreadState::Runnable || !(first_cpu..end_cpu).contains(&t.cpu) {
                continue;
            }
            let slot = &mut runs[t.cpu - first_cpu];
            let holds = self.threads.cpus[t.cpu].holder == Some(i);
            if *slot != usize::MAX || !holds || (t.cpu != cpu && !t.pending.is_empty()) {
                return None;
            }
            *slot = i;
        }
        let members = runs.iter().filter(|&&i| i != usize::MAX).count();
        if members < 2 {
            return None;
        }
        let outside = rvnvmm_sched::Scheduler::outside(&*self, |c| {
            (first_cpu..end_cpu).contains(&c) && runs[c - first_cpu] != usize::MAX
        });
        let room = [
            self.insns_to_next_point(),
            self.opts
                .max_insns
                .map(|n| n.saturating_sub(self.threads.total_insns)),
        ]
        .into_iter()
        .flatten()
        .fold(SIBLING_TURNS_INSNS, u64::min);
        let plan = rvnvmm_hart::SiblingPlan {
            budget: self.turn_slice(),
            pick_before: outside.pick_before,
            others_reach: outside.reach,
            tolerance: SYNC_TOLERANCE,
            insn_room: room,
        };
        // The siblings in CPU order (the scheduler's order on a tie).
        let mut harts: Vec<(usize, &mut Hart)> = self
            .threads
            .all
            .iter_mut()
            .enumerate()
            .filter(|(i, t)| (first_cpu..end_cpu).contains(&t.cpu) && runs[t.cpu - first_cpu] == *i)
            .map(|(_, t)| (t.cpu, &mut t.hart))
            .collect();
        harts.sort_by_key(|&(c, _)| c);
        let mut siblings: Vec<rvnvmm_hart::Sibling<'_>> = harts
            .into_iter()
            .zip(
                self.threads.cpus[first_cpu..end_cpu]
                    .iter_mut()
                    .enumerate()
                    .filter_map(|(k, c)| (runs[k] != usize::MAX).then_some(c)),
            )
            .map(|((_, hart), c)| rvnvmm_hart::Sibling {
                hart,
                core: &mut c.core,
                turns_before: c.slice_end,
                retired: 0,
            })
            .collect();
        let first = runs[..cpu - first_cpu]
            .iter()
            .filter(|&&i| i != usize::MAX)
            .count();
        let mut env = self.memory.env(self.memsys.as_deref_mut());
        let (last, exit) = Hart::run_siblings(&mut siblings, first, &mut env, budget, &plan);
        let retired: Vec<u64> = siblings.iter().map(|s| s.retired).collect();
        drop(siblings);
        let mut k = 0;
        for (slot, &thread) in runs.iter().enumerate() {
            if thread == usize::MAX {
                continue;
            }
            self.threads.total_insns += retired[k];
            self.threads.cpus[first_cpu + slot].instret += retired[k];
            if k == last {
                self.threads.current = thread;
            }
            k += 1;
        }
        Some(exit)
    }

    fn handle_trap(&mut self, trap: Trap) {
        let i = self.threads.current;
        let pc = self.threads.all[i].hart.pc;
        use crate::signal::*;
        let access = match trap.cause {
            Trap::STORE_PAGE_FAULT | Trap::STORE_MISALIGNED | Trap::STORE_ACCESS => "store to",
            Trap::INSN_PAGE_FAULT | Trap::INSN_MISALIGNED | Trap::INSN_ACCESS => {
                "instruction fetch from"
            }
            _ => "load from",
        };
        let addr = trap.tval;
        let (signo, code, at, note) = match trap.cause {
            Trap::LOAD_PAGE_FAULT | Trap::STORE_PAGE_FAULT | Trap::INSN_PAGE_FAULT => {
                let write = trap.cause == Trap::STORE_PAGE_FAULT;
                let exec = trap.cause == Trap::INSN_PAGE_FAULT;
                match self
                    .memory
                    .aspace
                    .handle_fault(&mut self.memory.phys, addr, write, exec)
                {
                    Ok(true) => return,
                    Ok(false) => match self.memory.aspace.find(addr) {
                        None => (
                            SIGSEGV,
                            SEGV_MAPERR,
                            addr,
                            format!("{access} {addr:#x}: nothing is mapped there"),
                        ),
                        Some((start, v)) => (
                            SIGSEGV,
                            SEGV_ACCERR,
                            addr,
                            format!(
                                "{access} {addr:#x}: the area {start:#x}-{:#x} ({}) is {}",
                                v.end,
                                area_label(&v.name),
                                prot_string(v.prot)
                            ),
                        ),
                    },
                    Err(ENOMEM) => {
                        self.out_of_memory(addr);
                        return;
                    }
                    Err(_) => (
                        SIGBUS,
                        BUS_ADRERR,
                        addr,
                        format!("{access} {addr:#x}: past the end of the file mapped there"),
                    ),
                }
            }
            Trap::ILLEGAL => (SIGILL, ILL_ILLOPC, pc, "illegal instruction".to_string()),
            Trap::BREAKPOINT => (SIGTRAP, TRAP_BRKPT, pc, "breakpoint".to_string()),
            Trap::LOAD_MISALIGNED | Trap::STORE_MISALIGNED | Trap::INSN_MISALIGNED => (
                SIGBUS,
                BUS_ADRALN,
                addr,
                format!(
                    "{access} {addr:#x}: misaligned (atomics and LR/SC need natural alignment)"
                ),
            ),
            _ => (
                SIGSEGV,
                SEGV_ACCERR,
                addr,
                format!("{access} {addr:#x}: access fault"),
            ),
        };
        self.threads.all[i].fault_note = Some(note);
        self.force_signal(signo, code, at);
    }

    fn outcome(&mut self) -> Outcome {
        let mut o = self.outcome_now(true);
        o.snapshots = self.roi.ctl.take_snapshots();
        o.model_switches = self.roi.ctl.switches().to_vec();
        o.sampling = self.sampling_outcome();
        o.processes = std::mem::take(&mut self.members);
        o
    }

    /// The statistics as they are now, counting from the last reset. `end`:
    /// the run is over, the controllers are drained first (a snapshot
    /// during the run leaves them alone, so it changes nothing).
    pub(crate) fn outcome_now(&mut self, end: bool) -> Outcome {
        let base = self.roi.base.clone();
        let mut threads = self.threads.exited.clone();
        for t in &self.threads.all {
            if t.state != ThreadState::Exited {
                threads.push(thread_stats(t));
            }
        }
        threads.sort_by_key(|t| t.tid);
        for t in &mut threads {
            t.instructions -= base.thread_insns.get(&t.tid).copied().unwrap_or(0);
        }
        let clocks: Vec<u64> = self.threads.cpus.iter().map(|c| c.core.cycles).collect();
        let max_cycles = clocks.iter().copied().max().unwrap_or(0);
        let hart_cycles: Vec<u64> = clocks
            .iter()
            .enumerate()
            .map(|(i, c)| c - base.cycles.get(i).copied().unwrap_or(0))
            .collect();
        let sim_time_ns = self.cycles_to_ns(max_cycles) - self.cycles_to_ns(base.latest_cycles);
        let memory = self.any_memsys().map(|m| {
            if end {
                m.finish(max_cycles);
            }
            m.stats_json(sim_time_ns)
        });
        Outcome {
            exit: self.exit.unwrap_or(ExitKind::Code(0)),
            instructions: self.threads.total_insns - base.insns,
            sim_time_ns,
            hart_instructions: self.threads.cpus.iter().map(|c| c.instret).collect(),
            hart_cycles,
            threads,
            blocks_decoded: self.memory.code.blocks_decoded - base.blocks_decoded,
            is_initial_process: !self.is_child,
            pid: self.pid,
            last_pc: self
                .threads
                .all
                .get(self.threads.current)
                .map_or((0, 0), |t| (t.cpu, t.hart.pc)),
            memory,
            pages: PagesOutcome {
                policy: self.memory.aspace.pages,
                mappings: self.memory.aspace.mappings_by_size(&self.memory.phys),
                stats: self.memory.aspace.page_stats.clone(),
            },
            reset: base.point,
            snapshots: Vec::new(),
            model_switches: Vec::new(),
            sampling: None,
            processes: None,
        }
    }

    /// A page fault (or a system call's access) found no free frame: as
    /// Linux's OOM killer, end the process with SIGKILL, saying on stderr
    /// what ran out and which config key sizes it.
    pub(crate) fn out_of_memory(&mut self, addr: u64) {
        let heap = self.memory.aspace.heap_pool;
        // A heap frame on NVMM, unless NVMM still has room: then it was a
        // page-table frame, and those live in DRAM.
        let pool = match self.memory.aspace.find(addr) {
            Some((_, v))
                if v.backing == Backing::Heap
                    && heap != 0
                    && self.memory.aspace.frames.free_bytes(heap) < 4096 =>
            {
                heap
            }
            _ => 0,
        };
        let mib = self.memory.aspace.frames.pool_bytes(pool) >> 20;
        let what = if pool == 0 {
            format!(
                "all {mib} MiB of DRAM are in use (memory.{}.size sizes it)",
                self.opts.region_names[0]
            )
        } else {
            format!(
                "all {mib} MiB of the heap on NVMM are in use (user.heap = \"nvmm\" takes the upper half of memory.{}.size)",
                self.opts.region_names[1]
            )
        };
        eprintln!(
            "rvnvmm: out of memory: guest (pid {}) killed by SIGKILL touching {addr:#x}: {what}",
            self.pid
        );
        self.exit = Some(ExitKind::Signal(crate::signal::SIGKILL));
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

/// An area's name as the fatal-signal line shows it.
fn area_label(name: &str) -> &str {
    if name.is_empty() || name == "[anon]" {
        "anonymous"
    } else {
        name
    }
}

/// `rwx` as /proc/PID/maps writes protections.
pub(crate) fn prot_string(prot: u32) -> String {
    let bit = |b: u32, c: char| if prot & b != 0 { c } else { '-' };
    [
        bit(PROT_READ, 'r'),
        bit(PROT_WRITE, 'w'),
        bit(PROT_EXEC, 'x'),
    ]
    .iter()
    .collect()
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

fn thread_stats(t: &Thread) -> ThreadStats {
    ThreadStats {
        tid: t.tid,
        hart: t.cpu,
        instructions: t.hart.instret,
        flush_insns: t.hart.stats.flush_insns,
        tlb_refills: t.hart.stats.tlb_refills,
        atomics: t.hart.stats.atomics,
        memory_stall_cycles: t.hart.stats.memory_stall_cycles,
        issue_wait_cycles: t.hart.stats.issue_wait_cycles,
        unit_wait_cycles: t.hart.stats.unit_wait_cycles,
    }
}

fn unsafe_id(f: unsafe extern "C" fn() -> u32) -> u64 {
    // SAFETY: the get*id family has no preconditions.
    unsafe { f() as u64 }
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
