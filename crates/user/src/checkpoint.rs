//! Checkpoints of user-mode runs (`docs/checkpoints.md`, "User mode"):
//! where a run stops to take one, what of the process is saved (threads,
//! the scheduler, signals, the address space, the file-system view, the
//! descriptors), what is refused, and the process rebuilt from it.
//!
//! Decoded code, the harts' software TLBs, the cores' turn state and the
//! timing model are not saved: a restored process starts them cold. A
//! restore point rebuilds the running process the same way, so a run
//! through a point and a run restored from it have the same statistics.

mod descriptors;

pub(crate) mod inherited;

use crate::process::{Cpu, ExitKind, Options, Process, StopAt, Thread, ThreadState, ThreadStats};
use crate::roi::{ModelSwitch, ResetPoint, StatsBase};
use crate::signal::{SigAction, SignalInfo};
use crate::vm::{AddressSpace, Backing, FileIdent, FileMap, HugeAdvice, Vma};
use rvnvmm_checkpoint::{CheckpointError, Sections, StateReader, StateWriter};
use rvnvmm_hart::{CodeCache, Hart};
use rvnvmm_mem::sv39::page_offset;
use rvnvmm_mem::PhysMem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The section of the process: its program, identity, scheduler, signal
/// dispositions, threads (less their harts) and statistics baseline.
pub const PROCESS_SECTION: &str = "process";
/// The section of the address space (areas, frames, break).
pub const ADDRESS_SPACE_SECTION: &str = "address-space";
/// The section of the open descriptors.
pub const DESCRIPTORS_SECTION: &str = "descriptors";

/// The section of thread `i`'s hart.
fn thread_section(i: usize) -> String {
    format!("thread{i}")
}

/// The most threads, areas, strings, ... a section may claim: bounds what a
/// damaged count can make the reader allocate.
const MAX_ITEMS: usize = 1 << 20;
/// The longest string (a path, an argument, an environment entry).
const MAX_STRING: usize = 1 << 20;

/// What a restored process takes over from the running one at a restore
/// point instead of reading it from the checkpoint: guest RAM, the address
/// space and the host side of the file system (the emulated tree the
/// guest's descriptors may point into). The descriptors themselves are host
/// descriptors and stay as they are.
pub struct Carried {
    mem: PhysMem,
    aspace: AddressSpace,
    tree: Option<crate::procfs::EmulatedTree>,
    pmem: Option<crate::pmem::PmemDir>,
    pmem_names: Option<(Vec<u8>, PathBuf)>,
    snapshots: Vec<crate::roi::Snapshot>,
}

impl Process {
    /// Makes the guest's `checkpoint` markers restore points
    /// ([`ExitKind::Checkpoint`] ends [`Process::run`] there); without it
    /// they are said once to be ignored.
    pub fn enable_restore_points(&mut self) {
        self.roi.restore_points = true;
    }

    /// Stops the run ([`ExitKind::Checkpoint`]) after exactly N
    /// instructions (all threads), or when the next thread to run has
    /// reached NS of simulated time, once.
    pub fn checkpoint_at(&mut self, at: StopAt) {
        self.roi.checkpoint_at = Some(at);
    }

    /// Where the run stands: instructions of all threads since the start,
    /// and the latest hart clock in ns.
    pub fn point_now(&self) -> (u64, u64) {
        let latest = self.threads.latest_cycles();
        (self.threads.total_insns, self.cycles_to_ns(latest))
    }

    /// Whether the last stop at a checkpoint was a guest's marker (not
    /// [`Process::checkpoint_at`]'s point).
    pub fn stopped_at_marker(&self) -> bool {
        self.roi.stopped_at_marker
    }

    /// The instruction count of a pending `checkpoint_at(Insns(n))`.
    pub(crate) fn checkpoint_insns(&self) -> Option<u64> {
        match self.roi.checkpoint_at {
            Some(StopAt::Insns(n)) if !self.is_child => Some(n),
            _ => None,
        }
    }

    /// At the start of a turn on `cpu`: whether the checkpoint's point is
    /// reached (the run stops there), else the turn's slice, shortened as
    /// a point in time nears.
    pub(crate) fn checkpoint_turn(&mut self, cpu: usize, slice: u64) -> Option<u64> {
        if self.is_child {
            return Some(slice);
        }
        let Some(at) = self.roi.checkpoint_at else {
            return Some(slice);
        };
        let now = self.threads.cpus[cpu].core.cycles;
        if !at.reached(self.threads.total_insns, self.cycles_to_ns(now)) {
            // An instruction count shortens the turn with the ROI points
            // (`insns_to_next_exact_point`); a time here.
            return Some(match at {
                StopAt::Insns(_) => slice,
                StopAt::TimeNs(_) => at.turn(slice, self.threads.total_insns, |ns| {
                    self.ns_to_cycles(ns).saturating_sub(now)
                }),
            });
        }
        self.roi.checkpoint_at = None;
        self.roi.stopped_at_marker = false;
        self.exit = Some(ExitKind::Checkpoint);
        None
    }

    /// A `checkpoint` marker: a restore point if they are enabled.
    pub(crate) fn checkpoint_marker(&mut self) -> bool {
        if !self.roi.restore_points || self.is_child {
            return false;
        }
        self.roi.stopped_at_marker = true;
        self.exit = Some(ExitKind::Checkpoint);
        true
    }

    /// What the process holds that a checkpoint cannot save, named; `Ok`
    /// if nothing.
    /// With `carry` (a restore point of this host process), only what the
    /// rebuilt process would lose is refused: it keeps the host's children,
    /// RAM and the address space.
    fn check_saveable(&self, carry: bool) -> Result<(), CheckpointError> {
        let no = |what: String| Err(CheckpointError::Unsupported(what));
        if self.roi.ctl.is_sampled() {
            return no("a sampled run (--sample)".into());
        }
        if self.gdb.is_some() {
            return no("a process a debugger is attached to (--gdb)".into());
        }
        if self.memory.phys.tracks_persistence() {
            return no(
                "the persistence domain (--crash-at, persistence events): it is not saved yet"
                    .into(),
            );
        }
        // The kernel's own state of these is not saved: a rebuilt process,
        // even one keeping the descriptors, would lose it.
        const ITIMERS: [&str; 3] = ["ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"];
        if let Some(w) = self.signals.itimers.iter().position(|t| t.next.is_some()) {
            return no(format!(
                "an armed interval timer ({}, set by setitimer or alarm): interval timers are not saved yet",
                ITIMERS[w]
            ));
        }
        if let Some(fd) = self.files.timerfds.fds.keys().next() {
            return no(format!(
                "descriptor {fd}: a timerfd (timerfd_create): timerfds are not saved yet"
            ));
        }
        if carry {
            return Ok(());
        }
        if self.is_child {
            return no("a forked child process (only the process `rvnvmm run` started can be checkpointed)".into());
        }
        if has_host_children() {
            return no("a process with child processes: guest processes are host processes, which a checkpoint cannot hold".into());
        }
        if self.files.pmem.is_some() {
            return no(
                "the NVMM-backed directory (user.pmem_dir): its table is not saved yet".into(),
            );
        }
        if !self.roi.ctl.snapshots().is_empty() {
            return no(format!(
                "the statistics snapshots of `dump` markers taken before the point ({}): they are not saved yet",
                self.roi.ctl.snapshots().len()
            ));
        }
        for (start, v) in &self.memory.aspace.vmas {
            if v.file.as_ref().is_some_and(|f| f.shared) {
                let what = if v.name.is_empty() || v.name == "[anon]" {
                    "shared memory (MAP_SHARED)".to_string()
                } else {
                    format!("a shared mapping (MAP_SHARED) of {}", v.name)
                };
                return no(format!("{what} at {start:#x}-{:#x}", v.end));
            }
        }
        Ok(())
    }

    /// Saves the process into `sections`: with `carry`, for a restore point
    /// in this host process, only what is rebuilt (RAM, the address space
    /// and the descriptors stay where they are); without, everything,
    /// RAM included. Refused, naming it, when the process holds something a
    /// checkpoint cannot save.
    pub fn save_checkpoint(
        &mut self,
        sections: &mut Sections,
        carry: bool,
    ) -> Result<(), CheckpointError> {
        self.check_saveable(carry)?;
        if !carry {
            let mut w = StateWriter::new();
            self.save_descriptors(&mut w)?;
            sections.insert(DESCRIPTORS_SECTION, w.into_bytes());
            let mut w = StateWriter::new();
            save_address_space(&self.memory.aspace, &mut w)?;
            sections.insert(ADDRESS_SPACE_SECTION, w.into_bytes());
            self.memory.phys.save(sections);
        }
        for (i, t) in self.threads.all.iter().enumerate() {
            sections.save(thread_section(i), &t.hart);
        }
        sections.write(PROCESS_SECTION, |w| self.save_process(w));
        Ok(())
    }

    /// Takes what a restore point carries over out of this process (which
    /// is done with).
    pub fn carry(mut self) -> Carried {
        Carried {
            mem: std::mem::take(&mut self.memory.phys),
            aspace: self.memory.aspace.clone(),
            tree: self.files.fs.tree.take(),
            pmem: self.files.pmem.take(),
            pmem_names: self.files.fs.pmem.take(),
            snapshots: self.roi.ctl.take_snapshots(),
        }
    }

    fn save_process(&self, w: &mut StateWriter) {
        let o = &self.opts;
        w.bytes(o.program.as_bytes());
        strings(w, &o.args);
        strings(w, &o.env);
        opt_path(w, o.root.as_deref());
        opt_path(w, o.sysroot.as_deref());
        w.count(self.files.fs.maps().len());
        for m in self.files.fs.maps() {
            w.bytes(m.guest.as_bytes());
            w.bytes(m.host.as_os_str().as_bytes());
        }
        let host_cwd = std::env::current_dir().unwrap_or_default();
        w.bytes(host_cwd.as_os_str().as_bytes());
        w.bytes(self.files.fs.cwd_confined().as_bytes());
        w.bytes(self.files.fs.exe_host.as_os_str().as_bytes());
        w.bytes(self.files.fs.exe_guest.as_bytes());
        w.u32(self.pid as u32);
        w.u32(self.threads.next_tid as u32);
        w.u64(self.threads.current as u64);
        w.u32(self.files.umask);
        w.u64(self.threads.total_insns);
        w.u64(self.image.sigreturn_page);
        w.u64(self.rng_state);
        let limits: Vec<u64> = self.rlimits.iter().flat_map(|&(s, h)| [s, h]).collect();
        w.u64s(&limits);
        w.bool(self.no_new_privs);
        let auxv: Vec<u64> = self.image.auxv.iter().flat_map(|&(k, v)| [k, v]).collect();
        w.u64s(&auxv);
        w.u64s(&[
            self.image.start_stack,
            self.image.arg_area.0,
            self.image.arg_area.1,
            self.image.env_area.0,
            self.image.env_area.1,
        ]);
        let mut warned: Vec<u64> = self.warned.iter().copied().collect();
        warned.sort_unstable();
        w.u64s(&warned);
        w.u64(self.memory.code.blocks_decoded);
        let actions: Vec<u64> = self
            .signals
            .actions
            .iter()
            .flat_map(|a| [a.handler, a.flags, a.mask])
            .collect();
        w.u64s(&actions);
        w.count(self.threads.cpus.len());
        for c in &self.threads.cpus {
            w.u64(c.core.cycles);
            w.u64(c.instret);
            w.u64(c.cursor as u64);
            w.opt_u64(c.holder.map(|h| h as u64));
            w.u64(c.slice_end);
        }
        w.count(self.threads.all.len());
        for t in &self.threads.all {
            save_thread(w, t);
        }
        w.count(self.threads.exited.len());
        for s in &self.threads.exited {
            save_thread_stats(w, s);
        }
        save_stats_base(w, &self.roi.base);
        w.count(self.roi.ctl.switches().len());
        for s in self.roi.ctl.switches() {
            w.bool(s.to == crate::roi::Model::Timing);
            w.u64(s.instructions);
            w.u64(s.sim_time_ns);
        }
        w.opt_u64(self.roi.ctl.pending_reset());
    }

    /// The process saved in `sections`, on the machine `opts` describes
    /// (its program, arguments, environment, `--root` and `--sysroot` are
    /// the checkpoint's). With `carried`, RAM, the address space and the
    /// emulated tree are those of the process saved at a restore point of
    /// this run; without, they are read from the checkpoint and the
    /// descriptors are reopened. The timing model is not attached, and
    /// decoded code, software TLBs and the cores' turns start cold.
    pub fn restore_checkpoint(
        mut opts: Options,
        sections: &Sections,
        carried: Option<Carried>,
    ) -> Result<Process, CheckpointError> {
        let saved = read_process_head(&mut StateReader::new(
            PROCESS_SECTION,
            sections.get(PROCESS_SECTION)?,
        ))?;
        opts.program = saved.program.clone();
        opts.args = saved.args.clone();
        opts.env = saved.env.clone();
        opts.root = saved.root.clone();
        opts.sysroot = saved.sysroot.clone();
        opts.maps = saved
            .maps
            .iter()
            .map(|(guest, host)| crate::fs::Map::new(guest, host))
            .collect::<Result<_, _>>()
            .map_err(|e| CheckpointError::Outside(format!("its {e}")))?;
        // The working directory is the checkpoint's, restored below.
        opts.cwd = None;
        for (what, dir) in [("--root", &opts.root), ("--sysroot", &opts.sysroot)] {
            if let Some(d) = dir.as_ref().filter(|d| !d.is_dir()) {
                return Err(CheckpointError::Outside(format!(
                    "its {what} directory {} is not there",
                    d.display()
                )));
            }
        }
        let mut p = Process::without_program(opts)
            .map_err(|e| CheckpointError::Outside(format!("the process: {e}")))?;
        let carried_here = carried.is_some();
        match carried {
            Some(c) => {
                p.memory.phys = c.mem;
                p.memory.aspace = c.aspace;
                p.files.pmem = c.pmem;
                p.files.fs.pmem = c.pmem_names;
                p.roi.ctl.set_snapshots(c.snapshots);
                if let Some(tree) = c.tree {
                    if let Some(mut fresh) = p.files.fs.tree.replace(tree) {
                        fresh.release();
                    }
                }
            }
            None => {
                p.memory.phys.restore(sections)?;
                sections.read(ADDRESS_SPACE_SECTION, |r| {
                    restore_address_space(&mut p.memory.aspace, r)
                })?;
                if saved.host_cwd.as_os_str().is_empty()
                    || std::env::set_current_dir(&saved.host_cwd).is_err()
                {
                    return Err(CheckpointError::Outside(format!(
                        "its working directory {} is not there",
                        saved.host_cwd.display()
                    )));
                }
            }
        }
        p.memory.aspace.pages = p.opts.pages;
        p.files.fs.set_cwd_confined(saved.cwd_confined.clone());
        p.files.fs.exe_host = saved.exe_host.clone();
        p.files.fs.exe_guest = saved.exe_guest.clone();
        sections.read(PROCESS_SECTION, |r| {
            read_process_head(r)?;
            p.restore_process(r)
        })?;
        for (i, t) in p.threads.all.iter_mut().enumerate() {
            sections.restore(&thread_section(i), &mut t.hart)?;
            t.hart.translations_changed();
        }
        if !carried_here {
            sections.read(DESCRIPTORS_SECTION, |r| p.restore_descriptors(r))?;
        }
        Ok(p)
    }

    fn restore_process(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        self.pid = r.u32()? as i32;
        self.files.fs.pid = self.pid;
        self.threads.next_tid = r.u32()? as i32;
        let current = r.u64()?;
        self.files.umask = r.u32()?;
        self.threads.total_insns = r.u64()?;
        self.image.sigreturn_page = r.u64()?;
        self.rng_state = r.u64()?;
        let mut limits = [0u64; 32];
        r.u64s_into(&mut limits, "resource limits")?;
        for (k, l) in self.rlimits.iter_mut().enumerate() {
            *l = (limits[2 * k], limits[2 * k + 1]);
        }
        self.no_new_privs = r.bool()?;
        let auxv = r.u64s(128)?;
        self.image.auxv = auxv.chunks_exact(2).map(|c| (c[0], c[1])).collect();
        let mut areas = [0u64; 5];
        r.u64s_into(&mut areas, "the stack's areas")?;
        self.image.start_stack = areas[0];
        self.image.arg_area = (areas[1], areas[2]);
        self.image.env_area = (areas[3], areas[4]);
        self.warned = r.u64s(MAX_ITEMS)?.into_iter().collect();
        self.memory.code = CodeCache::default();
        self.memory.code.blocks_decoded = r.u64()?;
        let mut actions = vec![0u64; 3 * self.signals.actions.len()];
        r.u64s_into(&mut actions, "signal dispositions")?;
        for (a, v) in self.signals.actions.iter_mut().zip(actions.chunks_exact(3)) {
            *a = SigAction {
                handler: v[0],
                flags: v[1],
                mask: v[2],
            };
        }
        r.exact_len(self.threads.cpus.len(), "harts")?;
        let n_cpus = self.threads.cpus.len();
        for c in &mut self.threads.cpus {
            restore_cpu(r, c)?;
        }
        let n = r.count(MAX_ITEMS)?;
        if n == 0 {
            return Err(r.malformed("the process has no thread"));
        }
        // The thread the process was built with gives way to the saved ones.
        self.threads.all.clear();
        for _ in 0..n {
            let mut hart = Hart::new(self.opts.hart.clone());
            hart.trace = self.opts.trace;
            let t = restore_thread(r, hart, n_cpus)?;
            self.threads.all.push(t);
        }
        for c in &self.threads.cpus {
            if c.holder.is_some_and(|h| h >= n) || c.cursor > n {
                return Err(r.malformed("a hart's scheduler names a thread that is not there"));
            }
        }
        self.threads.current = usize::try_from(current)
            .ok()
            .filter(|&c| c < n)
            .ok_or_else(|| r.malformed("the current thread is not a thread"))?;
        let exited = r.count(MAX_ITEMS)?;
        self.threads.exited = (0..exited)
            .map(|_| restore_thread_stats(r))
            .collect::<Result<_, _>>()?;
        self.roi.base = restore_stats_base(r, n_cpus)?;
        let switches = r.count(MAX_ITEMS)?;
        let switches = (0..switches)
            .map(|_| {
                Ok(ModelSwitch {
                    to: if r.bool()? {
                        crate::roi::Model::Timing
                    } else {
                        crate::roi::Model::Functional
                    },
                    instructions: r.u64()?,
                    sim_time_ns: r.u64()?,
                })
            })
            .collect::<Result<_, CheckpointError>>()?;
        let reset_at = r.opt_u64()?;
        let reset = self.roi.base.point;
        self.roi.ctl.restore(reset, switches, reset_at);
        self.exit = None;
        Ok(())
    }
}

/// Whether the emulator (= the guest process) has child processes, exited
/// ones not yet waited for included.
fn has_host_children() -> bool {
    // SAFETY: waitid into a zeroed siginfo; WNOWAIT leaves any child as it
    // is, WNOHANG returns at once.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WSTOPPED | libc::WCONTINUED | libc::WNOHANG | libc::WNOWAIT,
        );
        !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }
}

/// The start of the process section: what the process is built from.
struct SavedProgram {
    program: String,
    args: Vec<String>,
    env: Vec<String>,
    root: Option<PathBuf>,
    sysroot: Option<PathBuf>,
    /// The `--map`s: guest path, host path.
    maps: Vec<(String, PathBuf)>,
    host_cwd: PathBuf,
    cwd_confined: String,
    exe_host: PathBuf,
    exe_guest: String,
}

fn read_process_head(r: &mut StateReader<'_>) -> Result<SavedProgram, CheckpointError> {
    Ok(SavedProgram {
        program: string(r)?,
        args: read_strings(r)?,
        env: read_strings(r)?,
        root: read_opt_path(r)?,
        sysroot: read_opt_path(r)?,
        maps: {
            let n = r.count(MAX_ITEMS)?;
            (0..n)
                .map(|_| Ok((string(r)?, path(r)?)))
                .collect::<Result<_, CheckpointError>>()?
        },
        host_cwd: path(r)?,
        cwd_confined: string(r)?,
        exe_host: path(r)?,
        exe_guest: string(r)?,
    })
}

/// The program and arguments a checkpoint's process was started with (what
/// `rvnvmm run --restore` names in its messages and statistics).
pub fn checkpoint_program(sections: &Sections) -> Result<(String, Vec<String>), CheckpointError> {
    let mut r = StateReader::new(PROCESS_SECTION, sections.get(PROCESS_SECTION)?);
    let s = read_process_head(&mut r)?;
    Ok((s.program, s.args))
}

fn strings(w: &mut StateWriter, v: &[String]) {
    w.count(v.len());
    for s in v {
        w.bytes(s.as_bytes());
    }
}

fn string(r: &mut StateReader<'_>) -> Result<String, CheckpointError> {
    let b = r.bytes(MAX_STRING)?;
    String::from_utf8(b.to_vec()).map_err(|_| r.malformed("a string is not UTF-8"))
}

fn read_strings(r: &mut StateReader<'_>) -> Result<Vec<String>, CheckpointError> {
    let n = r.count(MAX_ITEMS)?;
    (0..n).map(|_| string(r)).collect()
}

fn path(r: &mut StateReader<'_>) -> Result<PathBuf, CheckpointError> {
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(
        r.bytes(MAX_STRING)?,
    )))
}

fn opt_path(w: &mut StateWriter, p: Option<&Path>) {
    w.bool(p.is_some());
    if let Some(p) = p {
        w.bytes(p.as_os_str().as_bytes());
    }
}

fn read_opt_path(r: &mut StateReader<'_>) -> Result<Option<PathBuf>, CheckpointError> {
    Ok(if r.bool()? { Some(path(r)?) } else { None })
}

fn restore_cpu(r: &mut StateReader<'_>, c: &mut Cpu) -> Result<(), CheckpointError> {
    c.core.cycles = r.u64()?;
    c.instret = r.u64()?;
    c.cursor = usize::try_from(r.u64()?).map_err(|_| r.malformed("a cursor"))?;
    c.holder = r
        .opt_u64()?
        .map(|h| usize::try_from(h).map_err(|_| r.malformed("a holder")))
        .transpose()?;
    c.slice_end = r.u64()?;
    Ok(())
}

fn save_thread(w: &mut StateWriter, t: &Thread) {
    w.u32(t.tid as u32);
    match t.state {
        // A call that waited and runs again, part done (`Thread::io_done`).
        ThreadState::Runnable if t.io_done != 0 => {
            w.u8(7);
            w.u64(t.io_done);
        }
        ThreadState::Runnable => w.u8(0),
        ThreadState::Futex {
            addr,
            bitset,
            deadline,
        } => {
            w.u8(1);
            w.u64(addr);
            w.u32(bitset);
            w.opt_u64(deadline);
        }
        ThreadState::Sleep { until, restart } => {
            w.u8(2);
            w.u64(until);
            w.bool(restart);
        }
        ThreadState::SigWait => w.u8(3),
        ThreadState::SigTimedWait { set, deadline } => {
            w.u8(4);
            w.u64(set);
            w.opt_u64(deadline);
        }
        ThreadState::Exited => w.u8(5),
        ThreadState::Io {
            ref fds,
            until,
            restart,
        } => {
            w.u8(6);
            w.bool(restart);
            w.count(fds.len());
            for &(fd, events) in fds {
                w.u32(fd as u32);
                w.u32(events as u16 as u32);
            }
            w.opt_u64(until);
            w.u64(t.io_done);
        }
    }
    w.u64(t.clear_child_tid);
    w.u64(t.sigmask);
    w.count(t.pending.len());
    for s in &t.pending {
        w.u32(s.signo as u32);
        w.u32(s.code as u32);
        w.u64s(&s.data);
    }
    w.u64(t.altstack.0);
    w.u64(t.altstack.1);
    w.u32(t.altstack.2 as u32);
    w.bytes(&t.comm);
    w.opt_u64(t.saved_mask);
    w.opt_u64(t.wait_deadline);
    w.u64(t.cpu as u64);
    w.u64(t.affinity);
    w.bool(t.fault_note.is_some());
    if let Some(n) = &t.fault_note {
        w.bytes(n.as_bytes());
    }
    crate::numa::save_policy(w, t.mempolicy.as_ref());
}

fn restore_thread(
    r: &mut StateReader<'_>,
    hart: Hart,
    n_cpus: usize,
) -> Result<Thread, CheckpointError> {
    let tid = r.u32()? as i32;
    let mut io_done = 0;
    let state = match r.u8()? {
        0 => ThreadState::Runnable,
        7 => {
            io_done = r.u64()?;
            ThreadState::Runnable
        }
        6 => {
            let restart = r.bool()?;
            let n = r.count(MAX_ITEMS)?;
            let mut fds = Vec::with_capacity(n.min(64));
            for _ in 0..n {
                fds.push((r.u32()? as i32, r.u32()? as u16 as i16));
            }
            let until = r.opt_u64()?;
            io_done = r.u64()?;
            ThreadState::Io {
                fds,
                until,
                restart,
            }
        }
        1 => ThreadState::Futex {
            addr: r.u64()?,
            bitset: r.u32()?,
            deadline: r.opt_u64()?,
        },
        2 => ThreadState::Sleep {
            until: r.u64()?,
            restart: r.bool()?,
        },
        3 => ThreadState::SigWait,
        4 => ThreadState::SigTimedWait {
            set: r.u64()?,
            deadline: r.opt_u64()?,
        },
        5 => ThreadState::Exited,
        c => return Err(r.malformed(format!("thread state {c}"))),
    };
    let clear_child_tid = r.u64()?;
    let sigmask = r.u64()?;
    let n = r.count(MAX_ITEMS)?;
    let mut pending = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        let signo = r.u32()? as i32;
        let code = r.u32()? as i32;
        let mut data = [0u64; 4];
        r.u64s_into(&mut data, "a signal's data")?;
        if !(1..=64).contains(&signo) {
            return Err(r.malformed(format!("a pending signal {signo}")));
        }
        pending.push(SignalInfo { signo, code, data });
    }
    let altstack = (r.u64()?, r.u64()?, r.u32()? as i32);
    let comm: [u8; 16] = r
        .bytes(16)?
        .try_into()
        .map_err(|_| r.malformed("a thread's name is not 16 bytes"))?;
    let saved_mask = r.opt_u64()?;
    let wait_deadline = r.opt_u64()?;
    let cpu = usize::try_from(r.u64()?)
        .ok()
        .filter(|&c| c < n_cpus)
        .ok_or_else(|| r.malformed("a thread's hart is not a hart"))?;
    let affinity = r.u64()?;
    let fault_note = if r.bool()? { Some(string(r)?) } else { None };
    let mempolicy = crate::numa::restore_policy(r)?;
    Ok(Thread {
        tid,
        hart,
        state,
        clear_child_tid,
        sigmask,
        pending,
        altstack,
        comm,
        saved_mask,
        wait_deadline,
        io_done,
        cpu,
        affinity,
        fault_note,
        mempolicy,
    })
}

fn save_thread_stats(w: &mut StateWriter, s: &ThreadStats) {
    w.u32(s.tid as u32);
    w.u64(s.hart as u64);
    w.u64s(&[
        s.instructions,
        s.flush_insns,
        s.tlb_refills,
        s.atomics.amos,
        s.atomics.lr,
        s.atomics.sc,
        s.atomics.sc_failures,
        s.atomics.stall_cycles,
        s.memory_stall_cycles,
        s.issue_wait_cycles,
        s.unit_wait_cycles,
    ]);
}

fn restore_thread_stats(r: &mut StateReader<'_>) -> Result<ThreadStats, CheckpointError> {
    let tid = r.u32()? as i32;
    let hart = r.u64()? as usize;
    let mut v = [0u64; 11];
    r.u64s_into(&mut v, "a thread's figures")?;
    Ok(ThreadStats {
        tid,
        hart,
        instructions: v[0],
        flush_insns: v[1],
        tlb_refills: v[2],
        atomics: rvnvmm_hart::AtomicStats {
            amos: v[3],
            lr: v[4],
            sc: v[5],
            sc_failures: v[6],
            stall_cycles: v[7],
        },
        memory_stall_cycles: v[8],
        issue_wait_cycles: v[9],
        unit_wait_cycles: v[10],
    })
}

fn save_stats_base(w: &mut StateWriter, b: &StatsBase) {
    w.bool(b.point.is_some());
    if let Some(p) = b.point {
        w.u64(p.instructions);
        w.u64(p.sim_time_ns);
    }
    w.u64(b.insns);
    w.u64s(&b.cycles);
    w.u64(b.latest_cycles);
    let mut tids: Vec<(i32, u64)> = b.thread_insns.iter().map(|(&t, &n)| (t, n)).collect();
    tids.sort_unstable();
    w.count(tids.len());
    for (t, n) in tids {
        w.u32(t as u32);
        w.u64(n);
    }
    w.u64(b.blocks_decoded);
}

fn restore_stats_base(r: &mut StateReader<'_>, harts: usize) -> Result<StatsBase, CheckpointError> {
    let point = if r.bool()? {
        Some(ResetPoint {
            instructions: r.u64()?,
            sim_time_ns: r.u64()?,
        })
    } else {
        None
    };
    let insns = r.u64()?;
    let cycles = r.u64s(harts)?;
    let latest_cycles = r.u64()?;
    let n = r.count(MAX_ITEMS)?;
    let mut thread_insns = std::collections::HashMap::new();
    for _ in 0..n {
        let tid = r.u32()? as i32;
        thread_insns.insert(tid, r.u64()?);
    }
    Ok(StatsBase {
        point,
        insns,
        cycles,
        latest_cycles,
        thread_insns,
        blocks_decoded: r.u64()?,
    })
}

/// A file an area maps, as saved: its host path, and what identifies its
/// contents (size and modification time), checked on restore.
fn save_file_ident(w: &mut StateWriter, fd: i32) -> Result<(), CheckpointError> {
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map_err(|e| CheckpointError::Unsupported(format!("a mapped file: {e}")))?;
    let st = descriptors::fstat(fd)
        .map_err(|e| CheckpointError::Unsupported(format!("{}: {e}", path.display())))?;
    if st.st_nlink == 0 {
        return Err(CheckpointError::Unsupported(format!(
            "a mapping of the deleted file {}",
            path.display()
        )));
    }
    w.bytes(path.as_os_str().as_bytes());
    w.u64(st.st_size as u64);
    w.u64(st.st_mtime as u64);
    w.u64(st.st_mtime_nsec as u64);
    Ok(())
}

fn save_address_space(a: &AddressSpace, w: &mut StateWriter) -> Result<(), CheckpointError> {
    w.u64(a.root);
    w.u64(a.heap_pool as u64);
    w.u64s(&[
        a.brk_start,
        a.brk,
        a.mmap_top,
        a.data_rlimit.0,
        a.data_rlimit.1,
        a.data_segment,
    ]);
    w.bool(a.translations_stale);
    let ps = &a.page_stats;
    w.u64s(&[
        ps.mapped[0],
        ps.mapped[1],
        ps.demoted[0],
        ps.demoted[1],
        ps.fallbacks,
    ]);
    a.frames.save(w);
    a.numa.save(w);
    w.count(a.vmas.len());
    for (&start, v) in &a.vmas {
        w.u64(start);
        w.u64(v.end);
        w.u32(v.prot);
        match v.backing {
            Backing::Anon => w.u8(0),
            Backing::Heap => w.u8(1),
            Backing::Physical { base } => {
                w.u8(2);
                w.u64(base);
            }
            Backing::Populated => w.u8(3),
        }
        w.bytes(v.name.as_bytes());
        w.bool(v.file.is_some());
        if let Some(f) = &v.file {
            save_file_ident(w, f.fd.as_raw_fd())?;
            w.u64(f.offset);
            w.bool(f.writable);
        }
        w.bool(v.image.is_some());
        if let Some(i) = v.image {
            w.u64s(&[i.dev, i.ino, i.offset]);
        }
        w.u64(v.anon_from);
        w.u8(match v.huge {
            HugeAdvice::Default => 0,
            HugeAdvice::Huge => 1,
            HugeAdvice::NoHuge => 2,
        });
        w.u32(v.hint);
        crate::numa::save_policy(w, v.policy.as_ref());
    }
    Ok(())
}

fn restore_address_space(
    a: &mut AddressSpace,
    r: &mut StateReader<'_>,
) -> Result<(), CheckpointError> {
    a.root = r.u64()?;
    a.heap_pool = usize::try_from(r.u64()?)
        .ok()
        .filter(|&p| p == a.heap_pool)
        .ok_or_else(|| r.malformed("the heap's pool is not this machine's (user.heap differs)"))?;
    let mut v = [0u64; 6];
    r.u64s_into(&mut v, "the break and limits")?;
    [a.brk_start, a.brk, a.mmap_top] = [v[0], v[1], v[2]];
    a.data_rlimit = (v[3], v[4]);
    a.data_segment = v[5];
    a.translations_stale = r.bool()?;
    let mut ps = [0u64; 5];
    r.u64s_into(&mut ps, "the page counters")?;
    a.page_stats = crate::vm::PageStats {
        mapped: [ps[0], ps[1]],
        demoted: [ps[2], ps[3]],
        fallbacks: ps[4],
    };
    a.frames.restore(r)?;
    a.numa.restore(r)?;
    let n = r.count(MAX_ITEMS)?;
    a.vmas.clear();
    let mut files: std::collections::HashMap<PathBuf, std::rc::Rc<OwnedFd>> = Default::default();
    for _ in 0..n {
        let start = r.u64()?;
        let end = r.u64()?;
        let prot = r.u32()?;
        let backing = match r.u8()? {
            0 => Backing::Anon,
            1 => Backing::Heap,
            2 => Backing::Physical { base: r.u64()? },
            3 => Backing::Populated,
            c => return Err(r.malformed(format!("area backing {c}"))),
        };
        let name = string(r)?;
        let file = if r.bool()? {
            let path = path(r)?;
            let (size, sec, nsec) = (r.u64()?, r.u64()?, r.u64()?);
            let offset = r.u64()?;
            let writable = r.bool()?;
            let fd = match files.get(&path) {
                Some(fd) => fd.clone(),
                None => {
                    let fd = std::rc::Rc::new(reopen_mapped(&path, writable, size, sec, nsec)?);
                    files.insert(path, fd.clone());
                    fd
                }
            };
            Some(FileMap {
                fd,
                offset,
                shared: false,
                writable,
            })
        } else {
            None
        };
        let image = if r.bool()? {
            let mut i = [0u64; 3];
            r.u64s_into(&mut i, "an image's identity")?;
            Some(FileIdent {
                dev: i[0],
                ino: i[1],
                offset: i[2],
            })
        } else {
            None
        };
        let anon_from = r.u64()?;
        let huge = match r.u8()? {
            0 => HugeAdvice::Default,
            1 => HugeAdvice::Huge,
            2 => HugeAdvice::NoHuge,
            c => return Err(r.malformed(format!("huge-page advice {c}"))),
        };
        let hint = r.u32()?;
        let policy = crate::numa::restore_policy(r)?;
        if start >= end || page_offset(start) != 0 {
            return Err(r.malformed(format!("an area {start:#x}-{end:#x}")));
        }
        a.vmas.insert(
            start,
            Vma {
                end,
                prot,
                backing,
                name,
                file,
                image,
                anon_from,
                huge,
                hint,
                policy,
            },
        );
    }
    Ok(())
}

/// Reopens a file an area maps, privately, checking that it is the file
/// the checkpoint saw (same size and modification time).
fn reopen_mapped(
    path: &Path,
    writable: bool,
    size: u64,
    sec: u64,
    nsec: u64,
) -> Result<OwnedFd, CheckpointError> {
    let flags = if writable {
        libc::O_RDWR
    } else {
        libc::O_RDONLY
    };
    let fd = descriptors::open_checked(path, flags, size, sec, nsec, "mapped")?;
    // Out of the guest's range, as sys_mmap keeps its own.
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own.
    let high = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 1000) };
    if high < 0 {
        return Err(CheckpointError::Outside(format!(
            "the mapped file {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: `high` is a new descriptor owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(high) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing;

    /// A process with a second thread waiting on a futex, a pending signal,
    /// a handler, a changed limit and data on its heap.
    fn busy_process() -> (Process, u64) {
        let mut p = testing::process();
        let at = testing::scratch(&mut p, 8192);
        p.write_mem(at + 100, b"kept across the restore").unwrap();
        p.signals.actions[10] = SigAction {
            handler: 0x1234,
            flags: 4,
            mask: 1 << 3,
        };
        p.rlimits[7] = (77, 99);
        p.threads.total_insns = 5_000;
        p.files.umask = 0o027;
        let mut hart = Hart::new(p.opts.hart.clone());
        hart.x[10] = 42;
        hart.pc = 0x1_0000;
        p.threads.all.push(Thread {
            tid: p.pid + 1,
            hart,
            state: ThreadState::Futex {
                addr: at,
                bitset: 0xff,
                deadline: Some(9_000),
            },
            clear_child_tid: at + 8,
            sigmask: 1 << 11,
            pending: vec![SignalInfo::fault(11, 1, 0xdead)],
            altstack: (at, 4096, 0),
            comm: *b"worker\0\0\0\0\0\0\0\0\0\0",
            saved_mask: Some(5),
            wait_deadline: None,
            io_done: 0,
            cpu: 1,
            affinity: 2,
            fault_note: None,
            mempolicy: crate::numa::Policy::new(
                crate::numa::MPOL_INTERLEAVE,
                crate::numa::MPOL_F_STATIC_NODES,
                crate::numa::NodeMask::bits(1),
                crate::numa::NodeMask::bits(1),
            )
            .unwrap(),
        });
        p.threads.cpus[1].core.cycles = 123_456;
        p.threads.cpus[1].holder = Some(1);
        (p, at)
    }

    #[test]
    fn a_process_rebuilt_at_a_restore_point_is_the_one_saved() {
        let (mut p, at) = busy_process();
        let mut sections = Sections::new();
        p.save_checkpoint(&mut sections, true).unwrap();
        let opts = p.opts.clone();
        let pid = p.pid;
        let mut back = Process::restore_checkpoint(opts, &sections, Some(p.carry())).unwrap();
        assert_eq!(back.pid, pid);
        assert_eq!((back.threads.total_insns, back.files.umask), (5_000, 0o027));
        assert_eq!(back.rlimits[7], (77, 99));
        assert_eq!(back.signals.actions[10].handler, 0x1234);
        assert_eq!(back.threads.all.len(), 2);
        let t = &back.threads.all[1];
        assert_eq!(t.tid, pid + 1);
        assert_eq!(
            t.state,
            ThreadState::Futex {
                addr: at,
                bitset: 0xff,
                deadline: Some(9_000)
            }
        );
        assert_eq!(t.pending, vec![SignalInfo::fault(11, 1, 0xdead)]);
        assert_eq!((t.hart.x[10], t.hart.pc), (42, 0x1_0000));
        assert_eq!((t.cpu, t.affinity, t.saved_mask), (1, 2, Some(5)));
        assert_eq!(
            t.mempolicy.map(|p| (p.nodes, p.mode_word())),
            Some((
                crate::numa::NodeMask::bits(1),
                crate::numa::MPOL_INTERLEAVE | crate::numa::MPOL_F_STATIC_NODES
            ))
        );
        assert_eq!(&t.comm[..6], b"worker");
        assert_eq!(back.threads.cpus[1].core.cycles, 123_456);
        assert_eq!(back.threads.cpus[1].holder, Some(1));
        assert_eq!(
            testing::read(&mut back, at + 100, 23),
            b"kept across the restore"
        );
    }

    #[test]
    fn a_thread_in_a_blocking_call_reads_back_as_it_was() {
        let (mut p, _) = busy_process();
        p.threads.all[0].state = ThreadState::Io {
            fds: vec![(3, libc::POLLOUT), (4, libc::POLLIN)],
            until: Some(77),
            restart: true,
        };
        p.threads.all[0].io_done = 12;
        // Woken, to run its call again.
        p.threads.all[1].state = ThreadState::Runnable;
        p.threads.all[1].io_done = crate::syscall::CONNECTING;
        for t in &p.threads.all {
            let mut w = StateWriter::new();
            save_thread(&mut w, t);
            let bytes = w.into_bytes();
            let mut r = StateReader::new("t", &bytes);
            let q = restore_thread(&mut r, Hart::new(p.opts.hart.clone()), 2).unwrap();
            r.finish().unwrap();
            assert_eq!((&q.state, q.io_done), (&t.state, t.io_done));
        }
    }

    #[test]
    fn the_address_space_reads_back_as_it_was() {
        let (mut p, at) = busy_process();
        testing::read(&mut p, at, 8); // a page faulted in
        let mut w = StateWriter::new();
        save_address_space(&p.memory.aspace, &mut w).unwrap();
        let bytes = w.into_bytes();
        let mut q = testing::process();
        restore_address_space(&mut q.memory.aspace, &mut StateReader::new("a", &bytes)).unwrap();
        assert_eq!(q.memory.aspace.root, p.memory.aspace.root);
        assert_eq!(
            (q.memory.aspace.brk, q.memory.aspace.mmap_top),
            (p.memory.aspace.brk, p.memory.aspace.mmap_top)
        );
        assert_eq!(q.memory.aspace.frames.used, p.memory.aspace.frames.used);
        let areas = |a: &AddressSpace| -> Vec<(u64, u64, u32, String)> {
            a.vmas
                .iter()
                .map(|(&s, v)| (s, v.end, v.prot, v.name.clone()))
                .collect()
        };
        assert_eq!(areas(&q.memory.aspace), areas(&p.memory.aspace));
        // Cut short anywhere: an error naming the section, never a panic.
        let mut q = testing::process();
        for cut in 0..bytes.len() {
            let r = restore_address_space(
                &mut q.memory.aspace,
                &mut StateReader::new("a", &bytes[..cut]),
            );
            assert!(r.is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn interval_timers_and_timerfds_are_refused_naming_them() {
        let refusal = |p: &mut Process| {
            let mut sections = Sections::new();
            match p.save_checkpoint(&mut sections, true) {
                Err(CheckpointError::Unsupported(what)) => what,
                r => panic!("not refused: {r:?}"),
            }
        };
        let (mut p, _) = busy_process();
        p.signals.itimers[crate::timers::ITIMER_REAL] = crate::timers::Schedule::armed(5, 0);
        assert!(refusal(&mut p).contains("ITIMER_REAL"));
        p.signals.itimers = Default::default();
        let fd = p.sys_timerfd_create(1, 0).unwrap();
        let what = refusal(&mut p);
        assert!(
            what.contains(&format!("descriptor {fd}: a timerfd")),
            "{what}"
        );
        p.sys_close(fd as i32).unwrap();
        let mut sections = Sections::new();
        p.save_checkpoint(&mut sections, true)
            .expect("nothing left to refuse");
    }

    #[test]
    fn a_damaged_process_section_is_an_error() {
        let (mut p, _) = busy_process();
        let mut sections = Sections::new();
        p.save_checkpoint(&mut sections, true).unwrap();
        let bytes = sections.get(PROCESS_SECTION).unwrap().to_vec();
        for cut in (0..bytes.len()).step_by(31) {
            let mut s = Sections::new();
            for i in 0..2 {
                s.insert(
                    thread_section(i),
                    sections.get(&thread_section(i)).unwrap().to_vec(),
                );
            }
            s.insert(PROCESS_SECTION, bytes[..cut].to_vec());
            let (q, _) = busy_process();
            let opts = q.opts.clone();
            assert!(
                Process::restore_checkpoint(opts, &s, Some(q.carry())).is_err(),
                "cut at {cut}"
            );
        }
    }
}
