//! The run: the process as the scheduler's machine (`Cores`, `Scheduled`),
//! the turns of threads on harts (SMT siblings back to back), and the
//! outcome at the end.

use super::threads::thread_stats;
use super::{ExitKind, Outcome, PagesOutcome, Process, RunError, ThreadState};
use crate::errno::*;
use rvnvmm_gdb::Verdict;
use rvnvmm_hart::{Exit, Hart, SMT_WINDOW, SYNC_TOLERANCE};
use rvnvmm_sched::{Cores, Scheduled, Status};
use std::ops::ControlFlow;

impl Process {
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
    pub fn run(&mut self) -> Result<Outcome, RunError> {
        // A write to a pipe with no reader fails with EPIPE, and the
        // guest's SIGPIPE is raised by the emulator (`syscall/mod.rs`).
        // SAFETY: setting a disposition to ignore.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        let ran = rvnvmm_sched::Scheduler::new(SYNC_TOLERANCE).run(self);
        // The page heat is whole whatever ended the run.
        let page_heat = self.pump_page_heat(true);
        if ran.is_ok() && self.exit == Some(ExitKind::Checkpoint) {
            // The process goes on from a checkpoint: nothing is let go.
            let mut o = self.outcome_now(false);
            o.page_heat_error = page_heat.err();
            return Ok(o);
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
        let mut o = self.outcome();
        o.page_heat_error = page_heat.err();
        Ok(o)
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
        if self.page_heat.is_some() {
            // An error stops the recording; the end of the run reports it.
            let _ = self.pump_page_heat(false);
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
            numa: {
                let numa = &self.memory.aspace.numa;
                numa.ids().map(|id| (id, numa.counters_of(id))).collect()
            },
            reset: base.point,
            snapshots: Vec::new(),
            model_switches: Vec::new(),
            sampling: None,
            processes: None,
            page_heat_error: None,
        }
    }
}
