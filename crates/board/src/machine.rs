//! `rvnvmm boot`: the full system. Loads OpenSBI (`fw_dynamic`), a Linux
//! `Image`, an initramfs and the board's device tree into DRAM, starts every
//! hart at the firmware in M-mode and runs them in simulated-time order on
//! the board (`docs/board.md`, `docs/full-system.md`) until the guest powers
//! the machine off.
//!
//! Memory layout (DRAM = the machine's first `dram` region, base B, end E):
//!
//! | where | what |
//! |---|---|
//! | B | OpenSBI `fw_dynamic.bin` |
//! | B + `text_offset` (2 MiB) | the kernel `Image` (entry at its first byte) |
//! | below the info page | the initramfs (page-aligned) |
//! | DTB − 4 KiB | `struct fw_dynamic_info` |
//! | 2 MiB-aligned, ≥ 64 KiB below E | the device tree, with free space after it (OpenSBI grows it in place) |
//!
//! Harts: each starts at B with `a0` = hart id, `a1` = DTB, `a2` =
//! `fw_dynamic_info` (whose `boot_hart` is 0, as QEMU sets it; OpenSBI
//! parks the others and Linux starts them through SBI HSM). The hart with
//! the smallest clock runs next for a slice of [`SLICE`] instructions; the
//! board is its `Mmio` (through `SystemBus`, which keeps every hart's interrupt
//! lines and `mtimecmp` in step with the CLINT and PLIC after each device
//! access), the memory-system model times its accesses when
//! `machine.model = timing`, and the board ticks after every slice. A hart
//! in `wfi` sleeps until an interrupt is pending for it; when every hart
//! sleeps, simulated time jumps to the earliest timer deadline, or the
//! emulator waits for console input.

use crate::profile::Profile;
use crate::{map, Board, ExitRequest, GuestMemory, InputQueue, MemoryFault};
use rvnvmm_checkpoint::{CheckpointError, Sections, StateReader, StateWriter};
use rvnvmm_gdb::{GdbStub, Target, Verdict};
use rvnvmm_hart::MemoryModel;
use rvnvmm_hart::{
    irq, CodeCache, CodePages, ControlPort, Core, Env, Exit, Hart, InterruptLines, Mmio, Priv,
    SmtSeat, SMT_WINDOW, SYNC_TOLERANCE,
};
use rvnvmm_mem::persist::{self, CrashReport, NvmmImage};
use rvnvmm_mem::PhysMem;
use rvnvmm_runctl::StopAt;
use rvnvmm_sched::{Cores, Status};
use std::collections::VecDeque;
use std::io::Write;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod boot_image;
mod checkpoint;
mod console;
mod gdb_target;
mod scheduled;
mod system_bus;

pub use boot_image::{
    fw_dynamic_info, layout, parse_image, BootImages, ImageError, ImageHeader, Layout,
    FW_DYNAMIC_INFO_MAGIC, FW_DYNAMIC_INFO_NEXT_MODE_S, FW_DYNAMIC_INFO_VERSION,
};
pub use checkpoint::{CONSOLE_INPUT_SECTION, CONSOLE_OUTPUT_SECTION};
pub use console::{Console, ConsoleOut};
use system_bus::{sync_lines, Dma, SystemBus};
/// Instructions a hart runs before the next hart in time order gets a turn.
pub const SLICE: u64 = 10_000;

/// What ends a console line that says the kernel gave up.
const PANIC_MARK: &[u8] = b"Kernel panic - not syncing";
/// Instructions the guest may still run after a kernel panic (to finish
/// printing it) before the emulator stops.
const PANIC_GRACE_INSNS: u64 = 20_000_000;

/// Whether a hart runs or sleeps in `wfi`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Running,
    Wfi,
}

/// Why the machine stopped short of a power-off or reboot.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// [`Machine::set_timing`] on a machine without a timing model.
    #[error("the machine has no timing model to switch to (machine.model = \"functional\")")]
    NoTimingModel,
    /// The guest kernel panicked.
    #[error("the guest kernel panicked: {line}")]
    Panicked {
        /// The console line of the panic.
        line: String,
    },
    /// `max_insns` ran out.
    #[error(
        "the guest did not power off within {max} instructions\n  {harts}\n  last console \
         lines:\n    {console}"
    )]
    InsnLimit {
        /// The limit.
        max: u64,
        /// Where each hart is.
        harts: String,
        /// The last console lines.
        console: String,
    },
    /// A hart takes trap after trap without making progress.
    #[error(
        "hart {hart} is stuck taking traps (cause {cause:#x}, tval {tval:#x}) at pc {pc:#x} in \
         {prv:?} mode\n  last console lines:\n    {console}"
    )]
    StuckInTraps {
        /// The hart.
        hart: usize,
        /// `mcause` of the trap.
        cause: u64,
        /// `mtval` of the trap.
        tval: u64,
        /// Where it is.
        pc: u64,
        /// Its privilege level.
        prv: Priv,
        /// The last console lines.
        console: String,
    },
    /// gdb killed the machine (`kill`).
    #[error("gdb killed the machine")]
    KilledByDebugger,
    /// Every hart sleeps and nothing can wake one.
    #[error(
        "every hart waits for an interrupt and nothing can raise one (no timer armed, console \
         input closed)\n  {harts}\n  last console lines:\n    {console}"
    )]
    AllAsleep {
        /// Where each hart is.
        harts: String,
        /// The last console lines.
        console: String,
    },
    /// A boot image does not fit in RAM.
    #[error("cannot place the {what} at {addr:#x}: not RAM")]
    NotRam {
        /// Which image.
        what: &'static str,
        /// Where it should go.
        addr: u64,
    },
}

/// The board machine: harts on the board (its devices through [`Bus`],
/// DMA into guest memory), the memory-system model when timed, the console
/// and its input. [`Machine::run`] runs the harts under the machine
/// scheduler ([`rvnvmm_sched`]) until the guest powers off or reboots.
pub struct Machine {
    harts: Vec<Hart>,
    /// The core each hart runs on (clock, costs, L1 slot).
    cores: Vec<Core>,
    lines: Vec<Arc<InterruptLines>>,
    /// The board's [`Board::irq_changes`] when the lines were last pushed
    /// at the end of a turn.
    lines_synced: Option<u64>,
    state: Vec<State>,
    mem: PhysMem,
    code: CodeCache,
    memsys: Option<Box<dyn MemoryModel>>,
    board: Board,
    /// What the host's stdin reader fills.
    host_input: InputQueue,
    /// What the UART takes from: host input moves here once the guest
    /// enabled the UART's receive interrupt (see [`Machine::forward_input`]).
    input: InputQueue,
    console: Console,
    insns: u64,
    /// Where the time goes, with `--profile`.
    profile: Option<Profile>,
    /// The instruction limit of the current [`Machine::run`].
    max_insns: Option<u64>,
    /// Instructions retired when the kernel panic was first seen.
    panic_at: Option<u64>,
    /// Where the run stops on its own, and how it ends there: the power
    /// fails (`--crash-at`, [`End::Crash`]) or a checkpoint is due
    /// (`--checkpoint-at`, [`End::Checkpoint`]).
    crash_at: Option<(StopAt, End)>,
    /// The run pauses ([`End::Pause`]) at the end of the turn that brings
    /// the instructions of all harts to this count.
    pause_at: Option<u64>,
    /// The hart that ran last: where a crash finds the machine.
    last_hart: usize,
    /// The gdb connection, if a debugger is attached.
    gdb: Option<GdbStub>,
    /// The counters at the last statistics reset (a `reset` marker).
    stats_base: Option<StatsBase>,
    /// The memory system while the functional model runs
    /// ([`Machine::set_timing`]), and the cores' timing costs.
    parked: Option<(Box<dyn MemoryModel>, rvnvmm_hart::CoreCosts)>,
    /// Per hart: its seat in its SMT core's issue calendar while the
    /// functional model runs (one cycle an instruction, no pipeline to
    /// share); given back to the core when the timing model resumes.
    parked_seats: Vec<Option<SmtSeat>>,
    /// Host input waits until every hart sleeps in `wfi`
    /// ([`Machine::hold_input_until_idle`]).
    input_held: bool,
    /// Where the page heat goes, when recorded (`--page-heat`).
    page_heat: Option<rvnvmm_heat::Recorder>,
}

/// The counters as they stood at a statistics reset ([`Machine::reset_stats`]):
/// the statistics of the region are the differences. The harts' `instret`
/// and clocks are architectural and never reset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatsBase {
    /// Instructions of all harts.
    pub instructions: u64,
    /// Per hart: `instret`.
    pub hart_instructions: Vec<u64>,
    /// Per hart: its core's clock.
    pub cycles: Vec<u64>,
    /// The latest core clock, in ns.
    pub sim_time_ns: u64,
    /// Blocks decoded.
    pub blocks_decoded: u64,
    /// Per hart: inter-processor interrupts received and sent.
    pub ipis: Vec<(u64, u64)>,
}

/// Runs `budget` instructions of `hart` in sampling periods, recording
/// where each period ends.
fn run_sampled(
    hart: &mut Hart,
    core: &mut Core,
    env: &mut Env<dyn MemoryModel>,
    budget: u64,
    profile: &mut Profile,
) -> Exit {
    let mut left = budget;
    loop {
        let period = profile.next_period().min(left);
        let (insns, cycles) = (hart.instret, core.cycles);
        let exit = hart.run(core, env, period);
        profile.record(
            hart.prv,
            hart.pc,
            hart.instret - insns,
            core.cycles - cycles,
        );
        let ran = hart.instret - insns;
        left = left.saturating_sub(ran);
        // A period cut short ended the run (a sync stop, see
        // `Core::set_sync_limit`) just as a full one would.
        if !matches!(exit, Exit::Budget) || left == 0 || ran < period {
            return exit;
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The guest powered the machine off with this code.
    PowerOff(u16),
    /// The guest asked for a reboot.
    Reboot,
    /// The power failed at [`Machine::with_crash_at`]'s point.
    Crash,
    /// The run reached [`Machine::set_checkpoint_at`]'s point (which is
    /// then cleared); the caller saves the machine and calls
    /// [`Machine::run`] again to go on.
    Checkpoint,
    /// The run reached [`Machine::set_pause_at`]'s count (which is then
    /// cleared); the caller calls [`Machine::run`] again to go on.
    Pause,
    /// Hart `hart` ran a region-of-interest marker (`rvnvmm_isa::marker`),
    /// `op` with argument `arg`; its pc is past it. The caller acts on it
    /// and calls [`Machine::run`] again to go on.
    Marker {
        /// The hart that ran it.
        hart: usize,
        /// What it asks for.
        op: rvnvmm_isa::MarkerOp,
        /// The value of its argument register.
        arg: u64,
    },
}

impl Machine {
    /// The machine of `board`, with `harts` (each set up to start) on
    /// `cores` (one each), guest RAM `mem`, the memory-system model if
    /// timed, the UART's `input` and the `console` its output is recorded
    /// in.
    pub fn new(
        board: Board,
        harts: Vec<Hart>,
        cores: Vec<Core>,
        mem: PhysMem,
        memsys: Option<Box<dyn MemoryModel>>,
        input: InputQueue,
        console: Console,
    ) -> Machine {
        let n = harts.len();
        assert_eq!(cores.len(), n, "one core per hart");
        let mut cores = cores;
        let parked_seats = if memsys.is_none() {
            cores.iter_mut().map(Core::take_smt).collect()
        } else {
            vec![None; n]
        };
        let m = Machine {
            lines: harts.iter().map(|h| h.interrupt_lines()).collect(),
            lines_synced: None,
            harts,
            cores,
            state: vec![State::Running; n],
            mem,
            code: CodeCache::default(),
            memsys,
            board,
            host_input: InputQueue::new(),
            input,
            console,
            insns: 0,
            profile: None,
            max_insns: None,
            panic_at: None,
            crash_at: None,
            pause_at: None,
            last_hart: 0,
            gdb: None,
            stats_base: None,
            parked: None,
            parked_seats,
            input_held: false,
            page_heat: None,
        };
        sync_lines(&m.board, &m.lines);
        m
    }

    /// Records page heat into `recorder` from now on (docs/page-heat.md);
    /// the machine must be timed, since the model counts.
    pub fn with_page_heat(mut self, recorder: rvnvmm_heat::Recorder) -> Machine {
        if let Some(m) = self.any_memsys_mut() {
            m.record_page_heat(recorder.window_ns());
        }
        self.page_heat = Some(recorder);
        self
    }

    /// Writes the page heat's finished windows.
    fn pump_page_heat(&mut self) {
        let parked = self.parked.as_mut().map(|p| &mut *p.0);
        if let (Some(r), Some(m)) = (
            self.page_heat.as_mut(),
            self.memsys.as_deref_mut().or(parked),
        ) {
            r.pump(m, false, None);
        }
    }

    /// The page heat's recorder, every window of this machine's model
    /// written: for the machine rebuilt at a restore point, which goes on
    /// recording into the same file.
    pub fn take_page_heat(&mut self) -> Option<rvnvmm_heat::Recorder> {
        let mut r = self.page_heat.take()?;
        if let Some(m) = self.any_memsys_mut() {
            r.pump(m, true, None);
        }
        Some(r)
    }

    /// The end of the run: writes the rest of the page heat and its end
    /// block (nothing without `--page-heat`).
    pub fn finish_page_heat(&mut self) -> Result<(), String> {
        let Some(r) = self.page_heat.take() else {
            return Ok(());
        };
        match self.any_memsys_mut() {
            Some(m) => r.finish(m, None),
            None => Ok(()),
        }
    }

    /// Samples where simulated time goes from now on ([`Profile`]).
    pub fn with_profile(mut self) -> Machine {
        self.profile = Some(Profile::default());
        self
    }

    /// Cuts the power at `at` ([`End::Crash`]): after exactly that many
    /// instructions of all harts (the harts stop mid-block to land there),
    /// or when the next hart to run has reached that simulated time (turns
    /// shorten as it nears, so it lands within a few instructions).
    pub fn with_crash_at(mut self, at: StopAt) -> Machine {
        self.crash_at = Some((at, End::Crash));
        self
    }

    /// Stops the run with [`End::Checkpoint`] at `at`, as
    /// [`Machine::with_crash_at`] stops for a crash: after exactly that many
    /// instructions of all harts, or when the next hart to run has reached
    /// that simulated time. `None` clears it.
    pub fn set_checkpoint_at(&mut self, at: Option<StopAt>) {
        self.crash_at = at.map(|a| (a, End::Checkpoint));
    }

    /// Pauses the run ([`End::Pause`]) at the end of the scheduler's turn
    /// that brings the instructions of all harts to `at`: the turns are
    /// those of a run without a pause, so pausing changes nothing that
    /// follows (a sampled boot's window edges). `None` clears it.
    pub fn set_pause_at(&mut self, at: Option<u64>) {
        self.pause_at = at;
    }

    /// Whether the timing model runs (not the functional one).
    pub fn is_timed(&self) -> bool {
        self.memsys.is_some()
    }

    /// The power fails now: the NVMM region keeps what reached its
    /// persistence domain (tracked since [`PhysMem::set_domain`]), with the
    /// lines the caches wrote back, and `image`, if given, is written so
    /// (`rvnvmm_mem::persist::crash`).
    pub fn power_fail(
        &mut self,
        image: Option<&NvmmImage>,
        seed: u64,
    ) -> Result<CrashReport, persist::ImageError> {
        if let Some(m) = self.memsys.as_deref_mut() {
            let mem = &mut self.mem;
            rvnvmm_hart::TimingModel::take_write_backs(m, &mut |a| mem.persist_write_back(a));
        }
        persist::crash(&mut self.mem, image, seed)
    }

    /// The hart that ran last and its pc: where a crash found the machine.
    pub fn last_pc(&self) -> (usize, u64) {
        (self.last_hart, self.harts[self.last_hart].pc)
    }

    /// The queue host input goes into (passed on to the UART once the
    /// guest opened the console).
    pub fn host_input(&self) -> &InputQueue {
        &self.host_input
    }

    /// The harts.
    pub fn harts(&self) -> &[Hart] {
        &self.harts
    }

    /// The cores the harts run on (hart `h` on core `h`).
    pub fn cores(&self) -> &[Core] {
        &self.cores
    }

    /// Guest RAM.
    pub fn mem(&self) -> &PhysMem {
        &self.mem
    }

    /// Guest RAM, to change.
    pub fn mem_mut(&mut self) -> &mut PhysMem {
        &mut self.mem
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The memory-system model, when the machine is timed.
    pub fn memsys_mut(&mut self) -> Option<&mut (dyn MemoryModel + 'static)> {
        self.memsys.as_deref_mut()
    }

    /// The profile, with [`Machine::with_profile`].
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// Instructions retired by all harts.
    pub fn instructions(&self) -> u64 {
        self.insns
    }

    /// The harts' clock in Hz (`machine.clock_hz`: every core runs at it).
    pub fn clock_hz(&self) -> u64 {
        self.cores[0].clock_hz
    }

    /// Blocks decoded.
    pub fn blocks_decoded(&self) -> u64 {
        self.code.blocks_decoded
    }

    /// Zeroes the statistics (a `reset` marker): the harts' event counters
    /// and the memory system's; the rest is counted from the point
    /// [`Machine::stats_base`] records.
    pub fn reset_stats(&mut self) {
        for h in &mut self.harts {
            h.stats = Default::default();
        }
        if let Some(m) = self.any_memsys_mut() {
            m.reset_stats();
        }
        self.stats_base = Some(StatsBase {
            instructions: self.insns,
            hart_instructions: self.harts.iter().map(|h| h.instret).collect(),
            cycles: self.cores.iter().map(|c| c.cycles).collect(),
            sim_time_ns: self.cores.iter().map(|c| c.time_ns()).max().unwrap_or(0),
            blocks_decoded: self.code.blocks_decoded,
            ipis: (0..self.harts.len())
                .map(|i| (self.board.ipis_received(i), self.board.ipis_sent(i)))
                .collect(),
        });
    }

    /// Switches between the timing model (`true`) and the functional one:
    /// the memory system is set aside or taken back (cold the first time:
    /// built at the start, never used), the cores get the model's costs and
    /// the decoded blocks are re-timed, so they keep their boundaries. A
    /// TLB model starts without the harts' software TLBs. Whether the model
    /// changed; an error for a machine without a timing model to switch to.
    pub fn set_timing(&mut self, timing: bool) -> Result<bool, MachineError> {
        if timing == self.memsys.is_some() {
            return Ok(false);
        }
        let costs = if timing {
            let (memsys, costs) = self.parked.take().ok_or(MachineError::NoTimingModel)?;
            self.memsys = Some(memsys);
            costs
        } else {
            let memsys = self.memsys.take().expect("timed: a memory system");
            self.parked = Some((memsys, self.cores[0].costs.clone()));
            rvnvmm_hart::CoreCosts::FUNCTIONAL
        };
        for (c, seat) in self.cores.iter_mut().zip(&mut self.parked_seats) {
            c.costs = costs.clone();
            if timing {
                c.put_smt(seat.take());
            } else {
                *seat = c.take_smt();
            }
        }
        self.code.retime_for(&costs, self.memsys.as_deref());
        if self
            .memsys
            .as_deref()
            .is_some_and(rvnvmm_hart::TimingModel::has_tlb)
        {
            for h in &mut self.harts {
                h.flush_tlb();
            }
        }
        Ok(true)
    }

    /// The memory system, in use or set aside by [`Machine::set_timing`].
    pub fn any_memsys_mut(&mut self) -> Option<&mut (dyn MemoryModel + 'static)> {
        match self.memsys.as_deref_mut() {
            Some(m) => Some(m),
            None => self.parked.as_mut().map(|(m, _)| &mut **m),
        }
    }

    /// The counters at the last statistics reset, if any.
    pub fn stats_base(&self) -> Option<&StatsBase> {
        self.stats_base.as_ref()
    }

    /// The NUL-terminated string at virtual address `addr` as hart `hart`
    /// sees it now (at most `max` bytes), or `None` if unreadable.
    pub fn read_guest_string(&mut self, hart: usize, addr: u64, max: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut byte = [0u8];
        while out.len() < max {
            if !Target::read_memory(self, hart as u64 + 1, addr + out.len() as u64, &mut byte) {
                return None;
            }
            if byte[0] == 0 {
                break;
            }
            out.push(byte[0]);
        }
        Some(out)
    }

    /// Whether hart `h` sleeps in `wfi`.
    pub fn asleep(&self, h: usize) -> bool {
        self.state[h] == State::Wfi
    }

    /// Writes device state that is buffered (disk writes) through.
    pub fn flush(&mut self) {
        self.board.flush();
    }

    /// Runs until the guest asks for a power-off or reboot, or, with
    /// `max_insns`, about that many instructions of all harts.
    pub fn run(&mut self, max_insns: Option<u64>) -> Result<End, MachineError> {
        self.max_insns = max_insns;
        self.panic_at = None;
        let end = rvnvmm_sched::Scheduler::new(SYNC_TOLERANCE).run(self);
        if let Some(gdb) = self.gdb.as_mut() {
            match &end {
                // gdb stays attached across the reboot and a marker.
                Ok(End::Reboot | End::Marker { .. } | End::Checkpoint | End::Pause) => {}
                Ok(End::PowerOff(code)) => gdb.exited(i32::from(*code)),
                Ok(End::Crash) | Err(_) => gdb.killed(libc::SIGKILL),
            }
        }
        end
    }

    /// Lets gdb debug the machine through `stub` (`rvnvmm boot --gdb`),
    /// the harts as its threads: the machine stops before its first
    /// instruction for gdb.
    pub fn with_gdb(mut self, stub: GdbStub) -> Machine {
        self.gdb = Some(stub);
        self
    }

    /// Polls the debugger between turns (see [`GdbStub::poll`]).
    fn poll_gdb(&mut self) -> ControlFlow<<Self as rvnvmm_sched::Scheduled>::Stop> {
        let Some(mut gdb) = self.gdb.take() else {
            return ControlFlow::Continue(());
        };
        let last = self.last_hart as u64 + 1;
        match gdb.poll(self, last) {
            Verdict::Run => self.gdb = Some(gdb),
            Verdict::Detach => {}
            Verdict::Kill => {
                self.gdb = Some(gdb);
                self.board.flush();
                return ControlFlow::Break(Err(MachineError::KilledByDebugger));
            }
        }
        ControlFlow::Continue(())
    }

    /// Passes host input on to the UART once Linux opened the console
    /// (IER.RDI set): bytes that reached the FIFO earlier would be dropped
    /// by the driver's FIFO resets, so `printf 'cmd\n' | rvnvmm boot`
    /// would lose them.
    fn forward_input(&mut self) {
        if self.input_held {
            if !self.state.iter().all(|&s| s == State::Wfi) {
                return;
            }
            self.input_held = false;
        }
        if !self.host_input.is_empty() && self.board.uart_rx_enabled() {
            self.input.push(&self.host_input.pop(usize::MAX));
        }
    }

    /// A warm reset: devices reset, the boot images reloaded (the rest of
    /// RAM keeps its contents), every hart back at the firmware; simulated
    /// time runs on.
    pub fn reboot(&mut self, boot: &BootImages) -> Result<(), MachineError> {
        self.board.reset();
        boot.load(&mut self.mem)?;
        self.code = CodeCache::default();
        let now = self.cores.iter().map(|c| c.cycles).max().unwrap_or(0);
        for (h, (hart, core)) in self.harts.iter_mut().zip(&mut self.cores).enumerate() {
            boot.reset_hart(hart, core.hart_id);
            core.cycles = now;
            self.state[h] = State::Running;
        }
        sync_lines(&self.board, &self.lines);
        Ok(())
    }

    /// On an SMT core, tells hart `h`'s core which sibling threads are
    /// ready (running, not in `wfi`) and from when, and ends its turn
    /// `SMT_WINDOW` cycles past the earliest of them, as the user-mode
    /// kernel does: the siblings' slot contention needs them close.
    fn see_siblings(&mut self, h: usize) {
        if self.cores[h].smt_thread().is_none() {
            return;
        }
        let id = self.cores[h].id;
        let mut turn_end = u64::MAX;
        for sib in 0..self.cores.len() {
            let Some(thread) = self.cores[sib].smt_thread() else {
                continue;
            };
            if self.cores[sib].id != id {
                continue;
            }
            let ready =
                (sib != h && self.state[sib] == State::Running).then(|| self.cores[sib].cycles);
            if let Some(c) = ready {
                turn_end = turn_end.min(c.saturating_add(SMT_WINDOW));
            }
            self.cores[h].set_sibling_ready(thread, ready);
        }
        self.cores[h].set_turn_end(turn_end);
    }

    /// Sleeping harts with an interrupt pending run again, from `now` on.
    fn wake_pending(&mut self, now_cycles: u64) {
        for (h, (hart, core)) in self.harts.iter().zip(&mut self.cores).enumerate() {
            if self.state[h] == State::Wfi && hart.interrupt_pending(core) {
                core.cycles = core.cycles.max(now_cycles);
                self.state[h] = State::Running;
            }
        }
    }

    /// Every hart sleeps with no timer armed: only console input can wake
    /// one.
    fn all_asleep(&mut self) -> Result<(), MachineError> {
        self.board.flush();
        self.forward_input();
        let host_done = self.host_input.is_closed() && self.host_input.is_empty();
        if self.console.panicked() {
            return Err(MachineError::Panicked {
                line: self.console.panic_line(),
            });
        }
        if host_done && self.input.is_empty() {
            return Err(MachineError::AllAsleep {
                harts: self.where_harts_are(),
                console: self.console.last_lines(8),
            });
        }
        if self.input.is_empty() {
            self.host_input.wait(Duration::from_millis(100));
            self.forward_input();
        }
        let now_cycles = self.cores.iter().map(|c| c.cycles).max().unwrap_or(0);
        let now_ns = self.cores.iter().map(|c| c.time_ns()).max().unwrap_or(0);
        self.tick(now_ns);
        self.wake_pending(now_cycles);
        Ok(())
    }

    /// The board's devices advance to `now_ns` (DMA, interrupts), and the
    /// harts' interrupt lines follow.
    fn tick(&mut self, now_ns: u64) {
        let mut dma = Dma {
            mem: &mut self.mem,
            pages: &mut self.code.pages,
        };
        self.board.tick(now_ns, &mut dma);
        // Every turn ends here (a timed run of 4 harts has about one every
        // 170 instructions): the lines are only pushed again when the board
        // says its answers may have changed.
        let changes = self.board.irq_changes();
        if self.lines_synced != Some(changes) {
            sync_lines(&self.board, &self.lines);
            self.lines_synced = Some(changes);
        }
    }

    fn where_harts_are(&self) -> String {
        self.harts
            .iter()
            .enumerate()
            .map(|(h, hart)| {
                format!(
                    "hart {h}: pc {:#x} {:?} {}",
                    hart.pc,
                    hart.prv,
                    if self.state[h] == State::Wfi {
                        "(wfi)"
                    } else {
                        ""
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod machine_tests;
