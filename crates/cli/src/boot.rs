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

use crate::artefacts;
use crate::profile::{Profile, Symbols};
use crate::{load_config, MachineArgs};
use clap::{Args, ValueEnum};
use rvnvmm_board::{
    map, Block, Board, DtbOptions, Entropy, ExitRequest, GuestMemory, InputQueue, MemoryFault,
    NvmmMode,
};
use rvnvmm_hart::{
    irq, CodeCache, CodePages, ControlPort, Core, CoreMap, Env, Exit, Hart, HartConfig,
    InterruptLines, Mmio, SYNC_TOLERANCE,
};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
/// The default kernel command line.
pub const DEFAULT_APPEND: &str = "console=ttyS0 earlycon=sbi";

/// How the NVMM regions appear to Linux.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum NvmmArg {
    /// Outside system RAM, for user space through /dev/mem (default).
    DevMem,
    /// A `pmem-region`: Linux's of_pmem makes /dev/pmem0.
    Pmem,
}

#[derive(Args)]
pub struct BootArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Number of harts (overrides machine.harts).
    #[arg(long, value_name = "N")]
    smp: Option<u32>,
    /// The kernel: a RISC-V Linux `Image` (default RVNVMM_KERNEL of scripts/setup.sh).
    #[arg(long, value_name = "FILE")]
    kernel: Option<PathBuf>,
    /// The firmware: OpenSBI fw_dynamic.bin (default RVNVMM_OPENSBI).
    #[arg(long, value_name = "FILE")]
    firmware: Option<PathBuf>,
    /// The initramfs (default: what scripts/build-initramfs.sh builds; an
    /// empty file: none).
    #[arg(long, value_name = "FILE")]
    initrd: Option<PathBuf>,
    /// The kernel command line.
    #[arg(long, value_name = "CMDLINE", default_value = DEFAULT_APPEND)]
    append: String,
    /// A raw disk image for virtio-blk (/dev/vda), opened read-write.
    #[arg(long, value_name = "IMAGE")]
    disk: Option<PathBuf>,
    /// Write the generated device tree blob to FILE.
    #[arg(long, value_name = "FILE")]
    dump_dtb: Option<PathBuf>,
    /// How the NVMM regions appear to Linux.
    #[arg(
        long,
        value_enum,
        value_name = "dev-mem|pmem",
        default_value = "dev-mem"
    )]
    nvmm: NvmmArg,
    /// Write statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Give up (non-zero exit) if the guest has not powered off after about
    /// N instructions (all harts together).
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Write a profile of where simulated time goes (privilege level,
    /// function, pc) to FILE; kernel functions are named from the
    /// System.map beside the kernel image, or from --symbols.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// A System.map for --profile.
    #[arg(long, value_name = "FILE", requires = "profile")]
    symbols: Option<PathBuf>,
}

/// The fields of a RISC-V Linux `Image` header the loader uses
/// (Documentation/arch/riscv/boot-image-header.rst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// Offset of the image from a 2 MiB-aligned RAM base.
    pub text_offset: u64,
    /// Bytes the image occupies once running (including BSS); 0 if unknown.
    pub image_size: u64,
}

/// Checks the `Image` header of `bytes`: the magic "RISCV\0\0\0" at 0x30
/// (deprecated) or "RSC\x05" at 0x38.
pub fn parse_image(bytes: &[u8]) -> Result<ImageHeader, String> {
    if bytes.starts_with(b"\x7fELF") {
        return Err(
            "is an ELF file (vmlinux?); rvnvmm boot wants a flat RISC-V Linux Image \
                    (arch/riscv/boot/Image, Debian's /boot/vmlinux-*-riscv64)"
                .into(),
        );
    }
    if bytes.len() < 64
        || (&bytes[0x30..0x38] != b"RISCV\0\0\0" && &bytes[0x38..0x3c] != b"RSC\x05")
    {
        return Err(
            "is not a RISC-V Linux Image (no \"RISCV\" magic at 0x30 nor \"RSC\\x05\" \
                    at 0x38 of the header)"
                .into(),
        );
    }
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    let text_offset = u64_at(8);
    let image_size = u64_at(16);
    if text_offset % 4096 != 0 || text_offset >= 1 << 30 {
        return Err(format!("has an unusable text_offset {text_offset:#x}"));
    }
    Ok(ImageHeader {
        text_offset,
        image_size,
    })
}

/// Where everything goes in DRAM.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub firmware: u64,
    pub kernel: u64,
    pub initrd: Option<(u64, u64)>,
    pub info: u64,
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
) -> Result<Layout, String> {
    const MIB: u64 = 1 << 20;
    let end = base + size;
    let kernel = base + header.text_offset;
    if firmware_len > header.text_offset {
        return Err(format!(
            "the firmware ({firmware_len} bytes) overlaps the kernel at {kernel:#x}"
        ));
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
        return Err(format!(
            "DRAM ({} MiB at {base:#x}) is too small for the firmware, kernel ({kernel_len} bytes \
             at {kernel:#x}), initramfs and device tree",
            size / MIB
        ));
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

/// The largest input file `boot` reads (firmware, kernel, initramfs,
/// symbol map): guest RAM holds them, and no machine in `configs/` has
/// more than 4 GiB of it.
const MAX_INPUT_BYTES: u64 = 4 << 30;

fn read_file(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    rvnvmm_config::files::read_regular(path, MAX_INPUT_BYTES, "an input file")
        .map_err(|e| format!("cannot read the {what} {}: {e}", path.display()))
}

/// The console: UART output to stdout, remembering the last lines (for
/// error reports) and whether the kernel panicked.
#[derive(Clone, Default)]
struct Console {
    tail: Arc<Mutex<VecDeque<u8>>>,
    panicked: Arc<AtomicBool>,
}

const TAIL_BYTES: usize = 4096;

struct ConsoleOut {
    console: Console,
    out: std::io::Stdout,
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
    fn last_lines(&self, n: usize) -> String {
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
struct Bus<'a> {
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

impl Bus<'_> {
    fn set_time(&mut self) {
        let ticks = self.lines[self.hart].time();
        let ns = (u128::from(ticks) * 1_000_000_000 / u128::from(map::TIMEBASE_HZ)) as u64;
        self.board.set_time(ns);
    }
}

impl Mmio for Bus<'_> {
    fn load(&mut self, paddr: u64, size: u64, port: Option<&mut dyn ControlPort>) -> Option<u64> {
        self.set_time();
        let v = self.board.load(paddr, size, port);
        // Loads of the UART, PLIC (claim) and virtio have side effects.
        if !(map::CLINT_BASE..map::CLINT_BASE + 0x1_0000).contains(&paddr) {
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
        let ok = self.board.store(paddr, size, value, port);
        sync_lines(self.board, self.lines);
        ok
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Running,
    Wfi,
}

/// The terminal attributes to restore, for the signal handler.
static SAVED_TERMIOS: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();

/// SIGINT/SIGTERM/SIGHUP while the terminal is raw: restore it, then die
/// of the signal as usual.
extern "C" fn restore_terminal_and_die(sig: libc::c_int) {
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; the
    // OnceLock was set before the handler was installed.
    unsafe {
        if let Some(t) = SAVED_TERMIOS.get() {
            libc::tcsetattr(0, libc::TCSANOW, t);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Puts a terminal on stdin into non-canonical, no-echo mode (the guest
/// echoes) until dropped or a signal ends the emulator. Ctrl-C still
/// stops the emulator.
struct RawTerminal(Option<libc::termios>);

impl RawTerminal {
    fn new() -> RawTerminal {
        // SAFETY: plain termios calls on fd 0 with a valid struct, and
        // installing a handler that only makes async-signal-safe calls.
        unsafe {
            if libc::isatty(0) != 1 {
                return RawTerminal(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawTerminal(None);
            }
            let saved = t;
            if SAVED_TERMIOS.set(saved).is_ok() {
                let handler = restore_terminal_and_die as extern "C" fn(libc::c_int);
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                    libc::signal(sig, handler as libc::sighandler_t);
                }
            }
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawTerminal(Some(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(t) = self.0 {
            // SAFETY: restores the attributes read in `new`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &t);
            }
        }
    }
}

/// The machine being run.
struct Machine {
    harts: Vec<Hart>,
    /// The core each hart runs on (clock, costs, L1 slot).
    cores: Vec<Core>,
    lines: Vec<Arc<InterruptLines>>,
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
enum End {
    PowerOff(u16),
    Reboot,
}

impl Machine {
    /// Runs until the guest asks for a power-off or reboot.
    fn run(&mut self, max_insns: Option<u64>) -> Result<End, String> {
        let n = self.harts.len();
        let mut panic_at: Option<u64> = None;
        loop {
            if let Some(req) = self.board.take_exit_request() {
                self.board.flush();
                return Ok(match req {
                    ExitRequest::PowerOff(code) => End::PowerOff(code),
                    ExitRequest::Reboot => End::Reboot,
                });
            }
            if self.console.panicked.load(Ordering::Relaxed) {
                let at = *panic_at.get_or_insert(self.insns);
                if self.insns >= at + PANIC_GRACE_INSNS {
                    self.board.flush();
                    return Err(format!(
                        "the guest kernel panicked: {}",
                        self.console.panic_line()
                    ));
                }
            }
            if let Some(max) = max_insns {
                if self.insns >= max {
                    self.board.flush();
                    return Err(format!(
                        "the guest did not power off within {max} instructions\n  {}\n  last \
                         console lines:\n    {}",
                        self.where_harts_are(),
                        self.console.last_lines(8)
                    ));
                }
            }
            // The next hart: the running one with the smallest clock, or a
            // sleeping one whose timer fires before that.
            let mut best: Option<(u64, usize)> = None;
            for h in 0..n {
                let at = match self.state[h] {
                    State::Running => Some(self.cores[h].cycles),
                    State::Wfi => self.harts[h]
                        .timer_deadline(&self.cores[h])
                        .map(|d| d.max(self.cores[h].cycles)),
                };
                if let Some(at) = at {
                    if best.is_none_or(|(b, _)| at < b) {
                        best = Some((at, h));
                    }
                }
            }
            let Some((at, h)) = best else {
                self.idle()?;
                continue;
            };
            if self.state[h] == State::Wfi {
                self.cores[h].cycles = at;
                self.state[h] = State::Running;
            }
            let mut budget = SLICE;
            if let Some(max) = max_insns {
                budget = budget.min(max - self.insns).max(1);
            }
            // The earliest time another hart could reach the memory system:
            // this one may not go past it there (`Core::set_sync_limit`).
            let others = (0..n)
                .filter(|&o| o != h)
                .filter_map(|o| match self.state[o] {
                    State::Running => Some(self.cores[o].cycles),
                    State::Wfi => self.harts[o]
                        .timer_deadline(&self.cores[o])
                        .map(|d| d.max(self.cores[o].cycles)),
                })
                .min();
            let (hart, core) = (&mut self.harts[h], &mut self.cores[h]);
            core.set_sync_limit(others.map_or(u64::MAX, |c| c.saturating_add(SYNC_TOLERANCE)));
            self.board.set_time(core.time_ns());
            let before = hart.instret;
            let exit = {
                let mut bus = Bus {
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
            let now_cycles = core.cycles;
            let now_ns = core.time_ns();
            match exit {
                // `wrs.*` completes at once in full-system mode: no Yield.
                Exit::Budget | Exit::Yield => {}
                Exit::Wfi => self.state[h] = State::Wfi,
                Exit::Ecall => unreachable!("ecall exits only in user-mode emulation"),
                Exit::Trap(t) => {
                    self.board.flush();
                    return Err(format!(
                        "hart {h} is stuck taking traps (cause {:#x}, tval {:#x}) at pc {:#x} in \
                         {:?} mode\n  last console lines:\n    {}",
                        t.cause,
                        t.tval,
                        self.harts[h].pc,
                        self.harts[h].prv,
                        self.console.last_lines(8)
                    ));
                }
            }
            if let Some(m) = self.memsys.as_mut() {
                let floor = (0..n)
                    .filter(|&c| self.state[c] == State::Running)
                    .map(|c| self.cores[c].cycles)
                    .min()
                    .unwrap_or(now_cycles);
                for c in 0..n {
                    let t = match self.state[c] {
                        State::Running => self.cores[c].cycles,
                        State::Wfi => self.cores[c].cycles.max(floor),
                    };
                    m.note_hart_time(c, t);
                }
            }
            self.forward_input();
            let mut dma = Dma {
                mem: &mut self.mem,
                pages: &mut self.code.pages,
            };
            self.board.tick(now_ns, &mut dma);
            sync_lines(&self.board, &self.lines);
            self.wake(now_cycles);
        }
    }

    /// Passes host input on to the UART once Linux opened the console
    /// (IER.RDI set): bytes that reached the FIFO earlier would be dropped
    /// by the driver's FIFO resets, so `printf 'cmd\n' | rvnvmm boot`
    /// would lose them.
    fn forward_input(&mut self) {
        if !self.host_input.is_empty() && self.board.uart_rx_enabled() {
            self.input.push(&self.host_input.pop(usize::MAX));
        }
    }

    /// A warm reset: devices reset, the boot images reloaded (the rest of
    /// RAM keeps its contents), every hart back at the firmware; simulated
    /// time runs on.
    fn reboot(&mut self, boot: &BootImages) -> Result<(), String> {
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

    /// Sleeping harts with an interrupt pending run again, from `now` on.
    fn wake(&mut self, now_cycles: u64) {
        for (h, (hart, core)) in self.harts.iter().zip(&mut self.cores).enumerate() {
            if self.state[h] == State::Wfi && hart.interrupt_pending(core) {
                core.cycles = core.cycles.max(now_cycles);
                self.state[h] = State::Running;
            }
        }
    }

    /// Every hart sleeps with no timer armed: only console input can wake
    /// one.
    fn idle(&mut self) -> Result<(), String> {
        self.board.flush();
        self.forward_input();
        let host_done = self.host_input.is_closed() && self.host_input.is_empty();
        if self.console.panicked.load(Ordering::Relaxed) {
            return Err(format!(
                "the guest kernel panicked: {}",
                self.console.panic_line()
            ));
        }
        if host_done && self.input.is_empty() {
            return Err(format!(
                "every hart waits for an interrupt and nothing can raise one (no timer armed, \
                 console input closed)\n  {}\n  last console lines:\n    {}",
                self.where_harts_are(),
                self.console.last_lines(8)
            ));
        }
        if self.input.is_empty() {
            self.host_input.wait(Duration::from_millis(100));
            self.forward_input();
        }
        let now_cycles = self.cores.iter().map(|c| c.cycles).max().unwrap_or(0);
        let now_ns = self.cores.iter().map(|c| c.time_ns()).max().unwrap_or(0);
        let mut dma = Dma {
            mem: &mut self.mem,
            pages: &mut self.code.pages,
        };
        self.board.tick(now_ns, &mut dma);
        sync_lines(&self.board, &self.lines);
        self.wake(now_cycles);
        Ok(())
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

/// The default initramfs: what `scripts/build-initramfs.sh` builds.
fn default_initrd() -> Result<PathBuf, String> {
    let script = artefacts::repo_root().join("scripts/build-initramfs.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed (give --initrd FILE, or run scripts/setup.sh and make -C guest)",
            script.display()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

pub fn main(a: BootArgs) -> Result<i32, String> {
    let mut machine_args = a.machine.clone();
    if let Some(n) = a.smp {
        machine_args.sets.push(format!("machine.harts={n}"));
    }
    let cfg = load_config(&machine_args)?;
    // Output paths are checked before the run, not after it.
    let check = |what, p: &Option<PathBuf>| {
        p.as_deref()
            .map(|p| crate::output::OutputFile::check(what, p))
            .transpose()
    };
    let dtb_out = check("device tree", &a.dump_dtb)?;
    let stats_out = check("stats", &a.stats)?;
    let profile_out = check("profile", &a.profile)?;
    let firmware_path = match &a.firmware {
        Some(p) => p.clone(),
        None => artefacts::setup_path("RVNVMM_OPENSBI")?,
    };
    let kernel_path = match &a.kernel {
        Some(p) => p.clone(),
        None => artefacts::setup_path("RVNVMM_KERNEL")?,
    };
    let firmware = read_file("firmware", &firmware_path)?;
    let kernel = read_file("kernel", &kernel_path)?;
    let header =
        parse_image(&kernel).map_err(|e| format!("the kernel {} {e}", kernel_path.display()))?;
    let initrd_path = match &a.initrd {
        Some(p) => Some(p.clone()),
        None => Some(default_initrd()?),
    };
    // An empty file boots without an initramfs.
    let initrd = match &initrd_path {
        Some(p) => Some(read_file("initramfs", p)?).filter(|b| !b.is_empty()),
        None => None,
    };

    let (_, dram) = cfg
        .memory
        .regions_of_kind(rvnvmm_config::RegionKind::Dram)
        .next()
        .ok_or("the machine has no DRAM region to boot from")?;
    let (dram_base, dram_size) = (dram.base, dram.size);

    let input = InputQueue::new();
    let host_input = InputQueue::new();
    let console = Console::default();
    let mut builder = Board::builder(&cfg).uart(
        Box::new(ConsoleOut {
            console: console.clone(),
            out: std::io::stdout(),
        }),
        input.clone(),
    );
    if let Some(disk) = &a.disk {
        let blk = Block::open(disk, false)
            .map_err(|e| format!("cannot open the disk image {}: {e}", disk.display()))?;
        builder = builder.virtio(blk);
    }
    builder = builder.virtio(Entropy::new(0x5eed));
    let board = builder.build().map_err(|e| e.to_string())?;

    let nvmm = match a.nvmm {
        NvmmArg::DevMem => NvmmMode::Reserved,
        NvmmArg::Pmem => NvmmMode::Pmem,
    };
    let isa = cfg
        .machine
        .extensions()
        .map_err(|e| format!("machine.isa: {e}"))?;
    let mut opts = DtbOptions {
        bootargs: a.append.clone(),
        initrd: initrd.as_ref().map(|_| (0, 0)),
        nvmm,
        isa,
    };
    let probe = board.dtb(&opts).map_err(|e| e.to_string())?;
    let lay = layout(
        dram_base,
        dram_size,
        firmware.len() as u64,
        header,
        kernel.len() as u64,
        initrd.as_ref().map(|i| i.len() as u64),
        probe.len() as u64,
    )?;
    opts.initrd = lay.initrd;
    let dtb = board.dtb(&opts).map_err(|e| e.to_string())?;
    if let Some(out) = &dtb_out {
        out.write(&dtb)?;
    }

    let mut ranges: Vec<(u64, u64)> = board.dram().iter().map(|r| (r.base, r.size)).collect();
    ranges.extend(board.nvmm().iter().map(|r| (r.base, r.size)));
    let mut mem = PhysMem::new(&ranges).map_err(|e| e.to_string())?;
    let mut images = vec![
        (lay.firmware, firmware, "firmware"),
        (lay.kernel, kernel, "kernel"),
    ];
    if let (Some((start, _)), Some(bytes)) = (lay.initrd, initrd) {
        images.push((start, bytes, "initramfs"));
    }
    images.push((
        lay.info,
        fw_dynamic_info(lay.kernel, 0).to_vec(),
        "fw_dynamic_info",
    ));
    images.push((lay.dtb, dtb, "device tree"));
    let boot = BootImages { images, lay };
    boot.load(&mut mem)?;

    let hart_cfg = HartConfig {
        clock_hz: cfg.machine.clock_hz,
        timebase_hz: map::TIMEBASE_HZ,
        cflush_user: cfg.cflush.allow_user,
        costs: cfg.core_costs(),
        isa,
        misaligned_fast: cfg.machine.misaligned == rvnvmm_config::Misaligned::Fast,
    };
    let n = board.harts();
    // One hardware thread per core.
    let core_map = CoreMap::one_thread_per_core(n);
    let mut harts = Vec::with_capacity(n);
    let mut cores = Vec::with_capacity(n);
    let mut lines = Vec::with_capacity(n);
    for h in 0..n {
        let mut hart = Hart::new(hart_cfg.clone());
        boot.reset_hart(&mut hart, h as u64);
        lines.push(hart.interrupt_lines());
        harts.push(hart);
        cores.push(Core::new(core_map.core_of(h), h as u64, &hart_cfg));
    }
    let memsys = match cfg.machine.model {
        rvnvmm_config::Model::Timing => {
            Some(MemorySystem::with_cores(&cfg, core_map).map_err(|e| e.to_string())?)
        }
        rvnvmm_config::Model::Functional => None,
    };
    let mut m = Machine {
        harts,
        cores,
        lines,
        state: vec![State::Running; n],
        mem,
        code: CodeCache::default(),
        memsys,
        board,
        host_input: host_input.clone(),
        input,
        console,
        insns: 0,
        profile: a.profile.as_ref().map(|_| Profile::default()),
    };
    sync_lines(&m.board, &m.lines);

    let _raw = RawTerminal::new();
    host_input.spawn_reader(std::io::stdin());
    let started = Instant::now();
    let result = loop {
        match m.run(a.max_insns) {
            Ok(End::Reboot) => m.reboot(&boot)?,
            other => break other,
        }
    };
    let host_seconds = started.elapsed().as_secs_f64();
    m.board.flush();
    if let Some(out) = &stats_out {
        out.write(stats_json(&cfg, &mut m, &result, host_seconds).as_bytes())?;
    }
    if let (Some(out), Some(profile)) = (&profile_out, &m.profile) {
        let map = a.symbols.clone().or_else(|| Symbols::beside(&kernel_path));
        let symbols = match &map {
            Some(p) => Some(Symbols::parse(&String::from_utf8_lossy(&read_file(
                "symbol map",
                p,
            )?))),
            None => None,
        };
        out.write(profile.report(symbols.as_ref(), 60).as_bytes())?;
    }
    match result? {
        End::PowerOff(code) => Ok(i32::from(code)),
        End::Reboot => unreachable!("a reboot restarts the machine"),
    }
}

/// What is loaded at (re)boot, and where.
struct BootImages {
    images: Vec<(u64, Vec<u8>, &'static str)>,
    lay: Layout,
}

impl BootImages {
    fn load(&self, mem: &mut PhysMem) -> Result<(), String> {
        for (addr, bytes, what) in &self.images {
            if !mem.write(*addr, bytes) {
                return Err(format!("cannot place the {what} at {addr:#x}: not RAM"));
            }
        }
        Ok(())
    }

    /// A hart as at reset, about to enter the firmware (its clock runs on);
    /// `hart_id` is its `mhartid`, which the firmware expects in `a0`.
    fn reset_hart(&self, hart: &mut Hart, hart_id: u64) {
        hart.set_full_system(true);
        hart.x = [0; 32];
        hart.f = [0; 32];
        hart.pc = self.lay.firmware;
        hart.x[10] = hart_id;
        hart.x[11] = self.lay.dtb;
        hart.x[12] = self.lay.info;
    }
}

fn stats_json(
    cfg: &rvnvmm_config::Config,
    m: &mut Machine,
    result: &Result<End, String>,
    host_seconds: f64,
) -> String {
    use serde_json::json;
    let max_cycles = m.cores.iter().map(|c| c.cycles).max().unwrap_or(0);
    let sim_time_ns = m.cores.iter().map(|c| c.time_ns()).max().unwrap_or(0);
    let exit = match result {
        Ok(End::PowerOff(c)) => json!({ "code": c }),
        Ok(End::Reboot) => json!({ "reboot": true }),
        Err(e) => json!({ "error": e }),
    };
    let harts: Vec<_> = m
        .harts
        .iter()
        .zip(&m.cores)
        .enumerate()
        .map(|(i, (h, core))| {
            json!({
                "id": i,
                "cycles": core.cycles,
                "instructions": h.instret,
                "exceptions": h.stats.exceptions,
                "interrupts": h.stats.interrupts,
                "tlb_refills": h.stats.tlb_refills,
                "flush_insns": h.stats.flush_insns,
            })
        })
        .collect();
    let mut v = json!({
        "schema": "rvnvmm-stats/1",
        "machine": cfg.machine.name,
        "program": "boot",
        "exit": exit,
        "instructions": m.insns,
        "sim_time_ns": sim_time_ns,
        "clock_hz": cfg.machine.clock_hz,
        "harts": harts,
        "blocks_decoded": m.code.blocks_decoded,
        "host_seconds": host_seconds,
        "mips": if host_seconds > 0.0 { m.insns as f64 / host_seconds / 1e6 } else { 0.0 },
    });
    if let Some(ms) = m.memsys.as_mut() {
        ms.finish(max_cycles);
        if let (serde_json::Value::Object(mem), serde_json::Value::Object(top)) =
            (ms.stats_json(sim_time_ns), &mut v)
        {
            for (k, val) in mem {
                top.insert(k, val);
            }
        }
    }
    serde_json::to_string_pretty(&v).expect("JSON of plain values") + "\n"
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
        assert!(parse_image(b"\x7fELF\x02\x01\x01")
            .unwrap_err()
            .contains("ELF"));
        assert!(parse_image(&[0; 100]).unwrap_err().contains("not a RISC-V"));
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
