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
//! board is its `Mmio` (through [`Bus`], which keeps every hart's interrupt
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
use rvnvmm_hart::{
    irq, CodeCache, CodePages, ControlPort, Core, Env, Exit, Hart, InterruptLines, Mmio, Priv,
    SmtSeat, SMT_WINDOW, SYNC_TOLERANCE,
};
use rvnvmm_mem::persist::{self, CrashReport, NvmmImage};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;
use rvnvmm_runctl::StopAt;
use rvnvmm_sched::{Cores, Status};
use std::collections::VecDeque;
use std::io::Write;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
/// Instructions a hart runs before the next hart in time order gets a turn.
pub const SLICE: u64 = 10_000;

/// `fw_dynamic_info.magic` ("OSBI").
pub const FW_DYNAMIC_INFO_MAGIC: u64 = 0x4942_534f;
/// `fw_dynamic_info.version`.
pub const FW_DYNAMIC_INFO_VERSION: u64 = 2;
/// `fw_dynamic_info.next_mode` for S-mode.
pub const FW_DYNAMIC_INFO_NEXT_MODE_S: u64 = 1;
/// What ends a console line that says the kernel gave up.
const PANIC_MARK: &[u8] = b"Kernel panic - not syncing";
/// Instructions the guest may still run after a kernel panic (to finish
/// printing it) before the emulator stops.
const PANIC_GRACE_INSNS: u64 = 20_000_000;

/// The fields of a RISC-V Linux `Image` header the loader uses
/// (Documentation/arch/riscv/boot-image-header.rst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// Offset of the image from a 2 MiB-aligned RAM base.
    pub text_offset: u64,
    /// Bytes the image occupies once running (including BSS); 0 if unknown.
    pub image_size: u64,
}

/// What is wrong with a kernel image or where the boot images would go.
/// The image messages complete a sentence that names the file ("the kernel
/// FILE ...").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// An ELF file where a flat `Image` is wanted.
    #[error(
        "is an ELF file (vmlinux?); rvnvmm boot wants a flat RISC-V Linux Image \
         (arch/riscv/boot/Image, Debian's /boot/vmlinux-*-riscv64)"
    )]
    Elf,
    /// No `Image` magic.
    #[error(
        "is not a RISC-V Linux Image (no \"RISCV\" magic at 0x30 nor \"RSC\\x05\" at 0x38 of \
         the header)"
    )]
    NoMagic,
    /// A `text_offset` that is not page-aligned or not below 1 GiB.
    #[error("has an unusable text_offset {0:#x}")]
    TextOffset(u64),
    /// The firmware reaches into the kernel's place.
    #[error("the firmware ({firmware_len} bytes) overlaps the kernel at {kernel:#x}")]
    FirmwareOverlapsKernel {
        /// The firmware's size.
        firmware_len: u64,
        /// Where the kernel goes.
        kernel: u64,
    },
    /// DRAM cannot hold everything.
    #[error(
        "DRAM ({mib} MiB at {base:#x}) is too small for the firmware, kernel ({kernel_len} bytes \
         at {kernel:#x}), initramfs and device tree"
    )]
    DramTooSmall {
        /// DRAM's size in MiB.
        mib: u64,
        /// DRAM's base.
        base: u64,
        /// The kernel's size.
        kernel_len: u64,
        /// Where the kernel goes.
        kernel: u64,
    },
}

/// Checks the `Image` header of `bytes`: the magic "RISCV\0\0\0" at 0x30
/// (deprecated) or "RSC\x05" at 0x38.
pub fn parse_image(bytes: &[u8]) -> Result<ImageHeader, ImageError> {
    if bytes.starts_with(b"\x7fELF") {
        return Err(ImageError::Elf);
    }
    if bytes.len() < 64
        || (&bytes[0x30..0x38] != b"RISCV\0\0\0" && &bytes[0x38..0x3c] != b"RSC\x05")
    {
        return Err(ImageError::NoMagic);
    }
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    let text_offset = u64_at(8);
    let image_size = u64_at(16);
    if text_offset % 4096 != 0 || text_offset >= 1 << 30 {
        return Err(ImageError::TextOffset(text_offset));
    }
    Ok(ImageHeader {
        text_offset,
        image_size,
    })
}

/// Where everything goes in DRAM.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// The firmware (DRAM's base).
    pub firmware: u64,
    /// The kernel.
    pub kernel: u64,
    /// The initramfs: start and end.
    pub initrd: Option<(u64, u64)>,
    /// `struct fw_dynamic_info`.
    pub info: u64,
    /// The device tree.
    pub dtb: u64,
}

/// Places the images in the DRAM region `[base, base + size)`.
pub fn layout(
    base: u64,
    size: u64,
    firmware_len: u64,
    header: ImageHeader,
    kernel_len: u64,
    initrd_len: Option<u64>,
    dtb_len: u64,
) -> Result<Layout, ImageError> {
    const MIB: u64 = 1 << 20;
    let end = base + size;
    let kernel = base + header.text_offset;
    if firmware_len > header.text_offset {
        return Err(ImageError::FirmwareOverlapsKernel {
            firmware_len,
            kernel,
        });
    }
    let kernel_end = kernel + header.image_size.max(kernel_len);
    let dtb = (end.saturating_sub(dtb_len + 64 * 1024)) & !(2 * MIB - 1);
    let info = dtb - 4096;
    let initrd = initrd_len.map(|len| {
        let start = info.saturating_sub(len) & !0xfff;
        (start, start + len)
    });
    let low = initrd.map_or(info, |(s, _)| s);
    if dtb < base || low < kernel_end {
        return Err(ImageError::DramTooSmall {
            mib: size / MIB,
            base,
            kernel_len,
            kernel,
        });
    }
    Ok(Layout {
        firmware: base,
        kernel,
        initrd,
        info,
        dtb,
    })
}

/// `struct fw_dynamic_info` (OpenSBI `include/sbi/fw_dynamic.h`, version 2).
pub fn fw_dynamic_info(next_addr: u64, boot_hart: u64) -> [u8; 48] {
    let mut b = [0u8; 48];
    let fields = [
        FW_DYNAMIC_INFO_MAGIC,
        FW_DYNAMIC_INFO_VERSION,
        next_addr,
        FW_DYNAMIC_INFO_NEXT_MODE_S,
        0,
        boot_hart,
    ];
    for (i, f) in fields.iter().enumerate() {
        b[8 * i..8 * i + 8].copy_from_slice(&f.to_le_bytes());
    }
    b
}

/// The console: the UART's output passed on to a writer (stdout for
/// `rvnvmm boot`), remembering the last lines (for error reports) and
/// whether the kernel panicked. Clones share the record.
#[derive(Clone, Default)]
pub struct Console {
    tail: Arc<Mutex<VecDeque<u8>>>,
    panicked: Arc<AtomicBool>,
}

const TAIL_BYTES: usize = 4096;

/// The UART's output stream: writes to `out` and records in `console`.
pub struct ConsoleOut {
    console: Console,
    out: Box<dyn Write + Send>,
}

impl ConsoleOut {
    /// Output to `out`, recorded in `console`.
    pub fn new(console: Console, out: Box<dyn Write + Send>) -> ConsoleOut {
        ConsoleOut { console, out }
    }
}

impl Write for ConsoleOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut tail = self.console.tail.lock().unwrap_or_else(|e| e.into_inner());
        tail.extend(buf);
        let excess = tail.len().saturating_sub(TAIL_BYTES);
        tail.drain(..excess);
        if !self.console.panicked.load(Ordering::Relaxed) {
            let (a, b) = tail.as_slices();
            let joined = [a, b].concat();
            let from = joined.len().saturating_sub(buf.len() + PANIC_MARK.len());
            if joined[from..]
                .windows(PANIC_MARK.len())
                .any(|w| w == PANIC_MARK)
            {
                self.console.panicked.store(true, Ordering::Relaxed);
            }
        }
        drop(tail);
        // A closed stdout must not stop the machine.
        let _ = self.out.write_all(buf);
        let _ = self.out.flush();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.out.flush();
        Ok(())
    }
}

impl Console {
    /// The last `n` non-empty console lines.
    pub fn last_lines(&self, n: usize) -> String {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let text: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&text);
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(n)..].join("\n    ")
    }

    /// Whether the kernel printed "Kernel panic - not syncing".
    pub fn panicked(&self) -> bool {
        self.panicked.load(Ordering::Relaxed)
    }

    /// The output recorded (its last bytes) and whether the kernel
    /// panicked: a checkpoint keeps them for the messages of the run that
    /// restores it.
    fn save(&self, w: &mut StateWriter) {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        w.bytes(&tail.iter().copied().collect::<Vec<_>>());
        w.bool(self.panicked());
    }

    /// Reads back what [`Console::save`] wrote.
    fn restore(&self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let bytes = r.bytes(TAIL_BYTES)?;
        let panicked = r.bool()?;
        let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        *tail = bytes.iter().copied().collect();
        self.panicked.store(panicked, Ordering::Relaxed);
        Ok(())
    }

    fn panic_line(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let text: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&text)
            .lines()
            .find(|l| l.contains("Kernel panic"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }
}

/// Guest memory for DMA: writes drop decoded code they overwrite.
struct Dma<'a> {
    mem: &'a mut PhysMem,
    pages: &'a mut CodePages,
}

impl GuestMemory for Dma<'_> {
    fn read(&mut self, paddr: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        GuestMemory::read(self.mem, paddr, buf)
    }

    fn write(&mut self, paddr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        GuestMemory::write(self.mem, paddr, data)?;
        if !data.is_empty() {
            let last = paddr + data.len() as u64 - 1;
            for page in (paddr >> 12)..=(last >> 12) {
                self.pages.code_written(page << 12);
            }
        }
        Ok(())
    }
}

/// The board as a hart's `Mmio`: device accesses see the hart's time, and
/// afterwards every hart's interrupt lines and `mtimecmp` follow the board.
struct SystemBus<'a> {
    board: &'a mut Board,
    lines: &'a [Arc<InterruptLines>],
    hart: usize,
}

const LINE_MASK: u64 = irq::MSIP | irq::MEIP | irq::SEIP;

/// Copies the board's interrupt state to the harts' lines.
fn sync_lines(board: &Board, lines: &[Arc<InterruptLines>]) {
    for (h, l) in lines.iter().enumerate() {
        let p = board.pending_interrupts(h);
        let want = if p.msip { irq::MSIP } else { 0 }
            | if p.meip { irq::MEIP } else { 0 }
            | if p.seip { irq::SEIP } else { 0 };
        let have = l.levels() & LINE_MASK;
        if want != have {
            l.set(LINE_MASK & !want, false);
            l.set(want, true);
        }
        let cmp = board.mtimecmp(h);
        if l.mtimecmp() != cmp {
            l.set_mtimecmp(cmp);
        }
    }
}

impl SystemBus<'_> {
    fn set_time(&mut self) {
        let ticks = self.lines[self.hart].time();
        let ns = (u128::from(ticks) * 1_000_000_000 / u128::from(map::TIMEBASE_HZ)) as u64;
        self.board.set_time(ns);
    }
}

impl Mmio for SystemBus<'_> {
    fn load(&mut self, paddr: u64, size: u64, port: Option<&mut dyn ControlPort>) -> Option<u64> {
        self.set_time();
        let before = self.board.irq_changes();
        let v = self.board.load(paddr, size, port);
        // Loads have side effects too (a PLIC claim, a UART read); the
        // lines follow only what moved the board's count.
        if self.board.irq_changes() != before {
            sync_lines(self.board, self.lines);
        }
        v
    }

    fn store(
        &mut self,
        paddr: u64,
        size: u64,
        value: u64,
        port: Option<&mut dyn ControlPort>,
    ) -> bool {
        self.set_time();
        let before = self.board.irq_changes();
        let ok = self
            .board
            .store_from(Some(self.hart), paddr, size, value, port);
        if self.board.irq_changes() != before {
            sync_lines(self.board, self.lines);
        }
        ok
    }
}

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
    memsys: Option<MemorySystem>,
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
    parked: Option<(MemorySystem, rvnvmm_hart::CoreCosts)>,
    /// Per hart: its seat in its SMT core's issue calendar while the
    /// functional model runs (one cycle an instruction, no pipeline to
    /// share); given back to the core when the timing model resumes.
    parked_seats: Vec<Option<SmtSeat>>,
    /// Host input waits until every hart sleeps in `wfi`
    /// ([`Machine::hold_input_until_idle`]).
    input_held: bool,
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
    env: &mut Env<MemorySystem>,
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
        memsys: Option<MemorySystem>,
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
        };
        sync_lines(&m.board, &m.lines);
        m
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
        if let Some(m) = self.memsys.as_mut() {
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
    pub fn memsys_mut(&mut self) -> Option<&mut MemorySystem> {
        self.memsys.as_mut()
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
        let shift = self
            .memsys
            .as_ref()
            .map(rvnvmm_hart::TimingModel::fetch_line_shift);
        self.code.retime(&costs, shift);
        if self
            .memsys
            .as_ref()
            .is_some_and(rvnvmm_hart::TimingModel::has_tlb)
        {
            for h in &mut self.harts {
                h.flush_tlb();
            }
        }
        Ok(true)
    }

    /// The memory system, in use or set aside by [`Machine::set_timing`].
    pub fn any_memsys_mut(&mut self) -> Option<&mut MemorySystem> {
        match self.memsys.as_mut() {
            Some(m) => Some(m),
            None => self.parked.as_mut().map(|(m, _)| m),
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

/// The checkpoint section of the machine's own state.
const MACHINE_SECTION: &str = "machine";
/// The checkpoint section of the board's devices.
const BOARD_SECTION: &str = "board";
/// The checkpoint section of host input not yet passed to the UART.
pub const CONSOLE_INPUT_SECTION: &str = "console-input";
/// The checkpoint section of the console output recorded.
pub const CONSOLE_OUTPUT_SECTION: &str = "console-output";

/// The checkpoint section of hart `h`.
fn hart_section(h: usize) -> String {
    format!("hart{h}")
}

/// Checkpoints (`docs/checkpoints.md`): the architectural state of the
/// harts, their cores' clocks and `wfi` states, the board's devices, the
/// counters and statistics baseline, the console input not yet consumed,
/// and RAM. Decoded code, software TLBs and the memory-system model are not
/// saved: a restored machine starts them empty (cold).
impl Machine {
    /// Writes the machine into `sections` (RAM too with `memory`), at a
    /// point between turns of the scheduler (a marker or the end of a
    /// [`Machine::run`]).
    pub fn save(&mut self, sections: &mut Sections, memory: bool) -> Result<(), CheckpointError> {
        let mut w = StateWriter::new();
        self.board.save(&mut w)?;
        sections.insert(BOARD_SECTION, w.into_bytes());
        for (h, hart) in self.harts.iter().enumerate() {
            sections.save(hart_section(h), hart);
        }
        sections.write(MACHINE_SECTION, |w| {
            w.u64(self.insns);
            w.count(self.harts.len());
            for (core, state) in self.cores.iter().zip(&self.state) {
                w.u64(core.cycles);
                w.bool(*state == State::Wfi);
            }
            w.u64(self.code.blocks_decoded);
            w.u64(self.last_hart as u64);
            w.bool(self.stats_base.is_some());
            if let Some(b) = &self.stats_base {
                w.u64(b.instructions);
                w.u64s(&b.hart_instructions);
                w.u64s(&b.cycles);
                w.u64(b.sim_time_ns);
                w.u64(b.blocks_decoded);
                w.u64s(&b.ipis.iter().flat_map(|&(r, s)| [r, s]).collect::<Vec<_>>());
            }
            w.bytes(&self.input.queued_bytes());
        });
        sections.write(CONSOLE_INPUT_SECTION, |w| {
            w.bytes(&self.host_input.queued_bytes())
        });
        sections.write(CONSOLE_OUTPUT_SECTION, |w| self.console.save(w));
        if memory {
            self.mem.save(sections);
        }
        Ok(())
    }

    /// Reads a checkpoint back into this machine, freshly built from the
    /// same memory map, harts and devices (RAM too with `memory`; with
    /// `host_side`, the host input not yet consumed then and the console
    /// output recorded). The timing model, if any, is this machine's, cold.
    pub fn restore(
        &mut self,
        sections: &Sections,
        memory: bool,
        host_side: bool,
    ) -> Result<(), CheckpointError> {
        let n = self.harts.len();
        sections.read(BOARD_SECTION, |r| self.board.restore(r))?;
        for (h, hart) in self.harts.iter_mut().enumerate() {
            sections.restore(&hart_section(h), hart)?;
        }
        sections.read(MACHINE_SECTION, |r| {
            self.insns = r.u64()?;
            r.exact_len(n, "harts")?;
            for h in 0..n {
                self.cores[h].cycles = r.u64()?;
                self.state[h] = if r.bool()? {
                    State::Wfi
                } else {
                    State::Running
                };
            }
            self.code.blocks_decoded = r.u64()?;
            self.last_hart = usize::try_from(r.u64()?)
                .ok()
                .filter(|&h| h < n)
                .ok_or_else(|| r.malformed("the last hart is not a hart"))?;
            self.stats_base = if r.bool()? {
                let instructions = r.u64()?;
                let hart_instructions = r.u64s(n)?;
                let cycles = r.u64s(n)?;
                let sim_time_ns = r.u64()?;
                let blocks_decoded = r.u64()?;
                let ipis = r.u64s(2 * n)?;
                Some(StatsBase {
                    instructions,
                    hart_instructions,
                    cycles,
                    sim_time_ns,
                    blocks_decoded,
                    ipis: ipis.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
                })
            } else {
                None
            };
            self.input.push(r.bytes(usize::MAX)?);
            Ok(())
        })?;
        if host_side {
            sections.read(CONSOLE_INPUT_SECTION, |r| {
                self.host_input.push(r.bytes(usize::MAX)?);
                Ok(())
            })?;
            sections.read(CONSOLE_OUTPUT_SECTION, |r| self.console.restore(r))?;
        }
        if memory {
            self.mem.restore(sections)?;
        }
        sync_lines(&self.board, &self.lines);
        Ok(())
    }

    /// Takes guest RAM out of this machine (leaving it none), to be moved
    /// into one rebuilt from a checkpoint of it.
    pub fn take_mem(&mut self) -> PhysMem {
        std::mem::take(&mut self.mem)
    }

    /// Holds host input back until every hart first sleeps in `wfi` (a
    /// restored machine: the guest has its console open, and whatever it
    /// was doing at the checkpoint, such as a program ending and the shell
    /// coming back to its prompt, finishes first), so input given at the
    /// start arrives at the same point of the run whatever the host's
    /// timing.
    pub fn hold_input_until_idle(&mut self) {
        self.input_held = true;
    }

    /// Feeds the UART from `input` (host input already arriving) instead
    /// of the machine's own queue.
    pub fn set_host_input(&mut self, input: InputQueue) {
        self.host_input = input;
    }
}

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
        if let Some(m) = self.memsys.as_mut() {
            m.note_hart_time(core, cycles);
        }
    }
}

/// gdb's view of the board: hart `h` is thread `h + 1`; memory is what
/// the thread's hart sees through its current translation (RAM only: no
/// device register is read or written on gdb's behalf).
impl Target for Machine {
    fn threads(&self) -> Vec<u64> {
        (1..=self.harts.len() as u64).collect()
    }

    fn hart(&self, thread: u64) -> Option<&Hart> {
        self.harts
            .get(usize::try_from(thread.checked_sub(1)?).ok()?)
    }

    fn hart_mut(&mut self, thread: u64) -> Option<&mut Hart> {
        self.harts
            .get_mut(usize::try_from(thread.checked_sub(1)?).ok()?)
    }

    fn read_memory(&mut self, thread: u64, addr: u64, buf: &mut [u8]) -> bool {
        let Some(hart) = Target::hart(self, thread) else {
            return false;
        };
        each_page(addr, buf.len(), |va, range| {
            hart.debug_translate(&self.mem, va)
                .is_some_and(|pa| self.mem.read(pa, &mut buf[range]))
        })
    }

    fn write_memory(&mut self, thread: u64, addr: u64, data: &[u8]) -> bool {
        let Some(hart) = usize::try_from(thread.wrapping_sub(1))
            .ok()
            .and_then(|h| self.harts.get(h))
        else {
            return false;
        };
        let (mem, code) = (&mut self.mem, &mut self.code);
        each_page(addr, data.len(), |va, range| {
            let Some(pa) = hart.debug_translate(mem, va) else {
                return false;
            };
            let ok = mem.write(pa, &data[range]);
            code.pages.code_written(pa & !0xfff);
            ok
        })
    }

    fn full_system(&self) -> bool {
        true
    }
}

/// Calls `f` with each page's virtual address and byte range of an access
/// of `len` bytes at `addr`, while it succeeds.
fn each_page(
    addr: u64,
    len: usize,
    mut f: impl FnMut(u64, std::ops::Range<usize>) -> bool,
) -> bool {
    let mut done = 0usize;
    while done < len {
        let va = addr.wrapping_add(done as u64);
        let n = ((4096 - (va & 0xfff)) as usize).min(len - done);
        if !f(va, done..done + n) {
            return false;
        }
        done += n;
    }
    true
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
        let exit = {
            let mut bus = SystemBus {
                board: &mut self.board,
                lines: &self.lines,
                hart: h,
            };
            let mut env = Env {
                mem: &mut self.mem,
                code: &mut self.code,
                timing: self.memsys.as_mut(),
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

/// What is loaded at (re)boot, and where.
pub struct BootImages {
    /// (address, bytes, what it is) of each image.
    pub images: Vec<(u64, Vec<u8>, &'static str)>,
    /// Where they go.
    pub lay: Layout,
}

impl BootImages {
    /// Writes the images into guest RAM.
    pub fn load(&self, mem: &mut PhysMem) -> Result<(), MachineError> {
        for (addr, bytes, what) in &self.images {
            if !mem.write(*addr, bytes) {
                return Err(MachineError::NotRam { what, addr: *addr });
            }
        }
        Ok(())
    }

    /// A hart as at reset, about to enter the firmware (its clock runs on);
    /// `hart_id` is its `mhartid`, which the firmware expects in `a0`.
    pub fn reset_hart(&self, hart: &mut Hart, hart_id: u64) {
        hart.set_full_system(true);
        hart.x = [0; 32];
        hart.f = [0; 32];
        hart.pc = self.lay.firmware;
        hart.x[10] = hart_id;
        hart.x[11] = self.lay.dtb;
        hart.x[12] = self.lay.info;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(magic_at_30: bool) -> Vec<u8> {
        let mut b = vec![0u8; 128];
        b[8..16].copy_from_slice(&0x20_0000u64.to_le_bytes());
        b[16..24].copy_from_slice(&0x1000u64.to_le_bytes());
        if magic_at_30 {
            b[0x30..0x38].copy_from_slice(b"RISCV\0\0\0");
        } else {
            b[0x38..0x3c].copy_from_slice(b"RSC\x05");
        }
        b
    }

    #[test]
    fn image_header() {
        for m in [true, false] {
            assert_eq!(
                parse_image(&image(m)).unwrap(),
                ImageHeader {
                    text_offset: 0x20_0000,
                    image_size: 0x1000
                }
            );
        }
        assert_eq!(
            parse_image(b"\x7fELF\x02\x01\x01").unwrap_err(),
            ImageError::Elf
        );
        assert!(parse_image(b"\x7fELF\x02\x01\x01")
            .unwrap_err()
            .to_string()
            .contains("ELF"));
        assert_eq!(parse_image(&[0; 100]).unwrap_err(), ImageError::NoMagic);
        assert!(ImageError::NoMagic
            .to_string()
            .contains("not a RISC-V Linux Image (no \"RISCV\" magic at 0x30 nor \"RSC\\x05\""));
        assert!(parse_image(&[0; 10]).is_err());
    }

    #[test]
    fn layout_puts_dtb_high_and_aligned() {
        let h = ImageHeader {
            text_offset: 0x20_0000,
            image_size: 32 << 20,
        };
        let l = layout(
            0x8000_0000,
            1 << 30,
            300_000,
            h,
            31 << 20,
            Some(10 << 20),
            4000,
        )
        .unwrap();
        assert_eq!(l.kernel, 0x8020_0000);
        assert_eq!(l.dtb, 0xbfe0_0000);
        assert_eq!(l.dtb % 8, 0);
        assert_eq!(l.info, 0xbfdf_f000);
        let (s, e) = l.initrd.unwrap();
        assert!(e <= l.info && s % 4096 == 0 && e - s == 10 << 20);
        assert!(layout(0x8000_0000, 16 << 20, 300_000, h, 31 << 20, None, 4000).is_err());
    }

    #[test]
    fn fw_dynamic_info_fields() {
        let b = fw_dynamic_info(0x8020_0000, 0);
        assert_eq!(&b[0..8], &0x4942_534fu64.to_le_bytes());
        assert_eq!(&b[8..16], &2u64.to_le_bytes());
        assert_eq!(&b[16..24], &0x8020_0000u64.to_le_bytes());
        assert_eq!(&b[24..32], &1u64.to_le_bytes());
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod machine_tests;
