//! The machine under the scheduler: its harts as cores, and what happens
//! around each turn.

use super::*;

/// The harts are the scheduler's cores; one in `wfi` is asleep, on its
/// timer if armed.
impl Cores for Machine {
    fn cores(&self) -> usize {
        self.harts.len()
    }

    fn clock(&self, core: usize) -> u64 {
        self.cores[core].cycles
    }

    fn status(&self, core: usize) -> Status {
        match self.state[core] {
            State::Running => Status::Ready,
            State::Wfi => Status::Asleep {
                timer: self.harts[core].timer_deadline(&self.cores[core]),
            },
        }
    }

    /// Without the timer deadline (divisions, and a sleeping hart's state
    /// brought back into the host's caches), which the notes after every
    /// turn do not look at.
    fn status_untimed(&self, core: usize) -> Status {
        match self.state[core] {
            State::Running => Status::Ready,
            State::Wfi => Status::Asleep { timer: None },
        }
    }

    fn wake(&mut self, core: usize, at: u64) {
        self.cores[core].cycles = at;
        self.state[core] = State::Running;
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

impl rvnvmm_sched::Scheduled for Machine {
    type Stop = Result<End, MachineError>;
    type Turn = ();

    /// A power-off or reboot request, a kernel panic (after a grace for
    /// printing it), the instruction limit.
    fn check(&mut self) -> ControlFlow<Self::Stop> {
        if let Some(req) = self.board.take_exit_request() {
            self.board.flush();
            return ControlFlow::Break(Ok(match req {
                ExitRequest::PowerOff(code) => End::PowerOff(code),
                ExitRequest::Reboot => End::Reboot,
            }));
        }
        if self.console.panicked() {
            let at = *self.panic_at.get_or_insert(self.insns);
            if self.insns >= at + PANIC_GRACE_INSNS {
                self.board.flush();
                return ControlFlow::Break(Err(MachineError::Panicked {
                    line: self.console.panic_line(),
                }));
            }
        }
        if let Some((at @ StopAt::Insns(_), end)) = self.crash_at {
            if at.reached(self.insns, 0) {
                self.board.flush();
                if end == End::Checkpoint {
                    self.crash_at = None;
                }
                return ControlFlow::Break(Ok(end));
            }
        }
        if self.pause_at.is_some_and(|n| self.insns >= n) {
            self.pause_at = None;
            return ControlFlow::Break(Ok(End::Pause));
        }
        if let Some(max) = self.max_insns {
            if self.insns >= max {
                self.board.flush();
                return ControlFlow::Break(Err(MachineError::InsnLimit {
                    max,
                    harts: self.where_harts_are(),
                    console: self.console.last_lines(8),
                }));
            }
        }
        if self.page_heat.is_some() {
            self.pump_page_heat();
        }
        self.poll_gdb()
    }

    fn idle(&mut self) -> ControlFlow<Self::Stop> {
        match self.all_asleep() {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(Err(e)),
        }
    }

    // `begin_turn` sets the budget and the chosen hart's exact stop;
    // another hart's clock and state change only in a turn or at its end.
    const BEGIN_TURN_KEEPS_OTHERS: bool = true;

    fn begin_turn(&mut self, h: usize) -> ControlFlow<Self::Stop, u64> {
        let slice = match self.crash_at {
            Some((at, end)) => {
                let core = &self.cores[h];
                if at.reached(self.insns, core.time_ns()) {
                    self.board.flush();
                    if end == End::Checkpoint {
                        self.crash_at = None;
                    }
                    return ControlFlow::Break(Ok(end));
                }
                at.turn(SLICE, self.insns, |ns| {
                    core.ns_to_cycles(ns).saturating_sub(core.cycles)
                })
            }
            None => SLICE,
        };
        // `check` stopped the run at the limit, so something is left.
        let budget = rvnvmm_sched::clamp_budget(slice, self.insns, self.max_insns).unwrap_or(1);
        // Only the turn the crash ends stops mid-block: every turn before
        // it ends where it would without `--crash-at`, so the run is the
        // same run up to the crash (a point learnt from a run without one
        // lands where it did there).
        self.harts[h].exact_budget = self
            .crash_at
            .is_some_and(|(at, _)| at.ends_turn(self.insns, budget));
        ControlFlow::Continue(budget)
    }

    fn run_turn(&mut self, h: usize, budget: u64, sync_limit: u64) -> ControlFlow<Self::Stop> {
        self.last_hart = h;
        self.see_siblings(h);
        let (hart, core) = (&mut self.harts[h], &mut self.cores[h]);
        core.set_sync_limit(sync_limit);
        self.board.set_time(core.time_ns());
        let before = hart.instret;
        if self.mem.tracks_persistence() {
            // Persistence events and traces carry the machine's count.
            self.mem.set_insn_base(self.insns - before);
        }
        let exit = {
            let mut bus = SystemBus {
                board: &mut self.board,
                lines: &self.lines,
                hart: h,
            };
            let mut env = Env {
                mem: &mut self.mem,
                code: &mut self.code,
                timing: self.memsys.as_deref_mut(),
                mmio: Some(&mut bus),
            };
            match self.profile.as_mut() {
                None => hart.run(core, &mut env, budget),
                Some(profile) => run_sampled(hart, core, &mut env, budget, profile),
            }
        };
        self.insns += hart.instret - before;
        match exit {
            // `wrs.*` completes at once in full-system mode: no Yield.
            Exit::Budget | Exit::Yield => {}
            Exit::Wfi => self.state[h] = State::Wfi,
            Exit::Marker { op, arg } => {
                return ControlFlow::Break(Ok(End::Marker { hart: h, op, arg }));
            }
            Exit::Ecall => unreachable!("ecall exits only in user-mode emulation"),
            Exit::Trap(t) => {
                self.board.flush();
                return ControlFlow::Break(Err(MachineError::StuckInTraps {
                    hart: h,
                    cause: t.cause,
                    tval: t.tval,
                    pc: self.harts[h].pc,
                    prv: self.harts[h].prv,
                    console: self.console.last_lines(8),
                }));
            }
        }
        ControlFlow::Continue(())
    }

    /// Console input, device time, interrupts: sleeping harts with one
    /// pending wake at the time the turn ended.
    fn end_turn(&mut self, h: usize, (): ()) -> ControlFlow<Self::Stop> {
        let (now_cycles, now_ns) = (self.cores[h].cycles, self.cores[h].time_ns());
        self.forward_input();
        self.tick(now_ns);
        self.wake_pending(now_cycles);
        ControlFlow::Continue(())
    }
}
