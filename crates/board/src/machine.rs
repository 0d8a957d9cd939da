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
use rvnvmm_hart::{
    irq, CodeCache, CodePages, Env, Exit, Hart, InterruptLines, Mmio, SYNC_TOLERANCE,
};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;
use std::collections::VecDeque;
use std::io::Write;
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

/// The console: UART output to stdout, remembering the last lines (for
/// error reports) and whether the kernel panicked.
#[derive(Clone, Default)]
pub struct Console {
    tail: Arc<Mutex<VecDeque<u8>>>,
    panicked: Arc<AtomicBool>,
}

const TAIL_BYTES: usize = 4096;

pub struct ConsoleOut {
    pub console: Console,
    pub out: std::io::Stdout,
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
pub fn sync_lines(board: &Board, lines: &[Arc<InterruptLines>]) {
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
    fn load(&mut self, paddr: u64, size: u64, timing: Option<&mut MemorySystem>) -> Option<u64> {
        self.set_time();
        let v = self.board.load(paddr, size, timing);
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
        timing: Option<&mut MemorySystem>,
    ) -> bool {
        self.set_time();
        let ok = self.board.store(paddr, size, value, timing);
        sync_lines(self.board, self.lines);
        ok
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Running,
    Wfi,
}

/// The machine being run.
pub struct Machine {
    pub harts: Vec<Hart>,
    pub lines: Vec<Arc<InterruptLines>>,
    pub state: Vec<State>,
    pub mem: PhysMem,
    pub code: CodeCache,
    pub memsys: Option<MemorySystem>,
    pub board: Board,
    /// What the host's stdin reader fills.
    pub host_input: InputQueue,
    /// What the UART takes from: host input moves here once the guest
    /// enabled the UART's receive interrupt (see [`Machine::forward_input`]).
    pub input: InputQueue,
    pub console: Console,
    pub insns: u64,
    /// Where the time goes, with `--profile`.
    pub profile: Option<Profile>,
}

/// Runs `budget` instructions of `hart` in sampling periods, recording
/// where each period ends.
fn run_sampled(hart: &mut Hart, env: &mut Env, budget: u64, profile: &mut Profile) -> Exit {
    let mut left = budget;
    loop {
        let period = profile.next_period().min(left);
        let (insns, cycles) = (hart.instret, hart.cycles);
        let exit = hart.run(env, period);
        profile.record(
            hart.prv,
            hart.pc,
            hart.instret - insns,
            hart.cycles - cycles,
        );
        let ran = hart.instret - insns;
        left = left.saturating_sub(ran);
        // A period cut short ended the run (a sync stop, see
        // `Hart::set_sync_limit`) just as a full one would.
        if !matches!(exit, Exit::Budget) || left == 0 || ran < period {
            return exit;
        }
    }
}

/// How a run ended.
pub enum End {
    PowerOff(u16),
    Reboot,
}

impl Machine {
    /// Runs until the guest asks for a power-off or reboot.
    pub fn run(&mut self, max_insns: Option<u64>) -> Result<End, String> {
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
                    State::Running => Some(self.harts[h].cycles),
                    State::Wfi => self.harts[h]
                        .timer_deadline()
                        .map(|d| d.max(self.harts[h].cycles)),
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
                self.harts[h].cycles = at;
                self.state[h] = State::Running;
            }
            let mut budget = SLICE;
            if let Some(max) = max_insns {
                budget = budget.min(max - self.insns).max(1);
            }
            // The earliest time another hart could reach the memory system:
            // this one may not go past it there (`Hart::set_sync_limit`).
            let others = (0..n)
                .filter(|&o| o != h)
                .filter_map(|o| match self.state[o] {
                    State::Running => Some(self.harts[o].cycles),
                    State::Wfi => self.harts[o]
                        .timer_deadline()
                        .map(|d| d.max(self.harts[o].cycles)),
                })
                .min();
            let hart = &mut self.harts[h];
            hart.set_sync_limit(others.map_or(u64::MAX, |c| c.saturating_add(SYNC_TOLERANCE)));
            self.board.set_time(hart.time_ns());
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
                    None => hart.run(&mut env, budget),
                    Some(profile) => run_sampled(hart, &mut env, budget, profile),
                }
            };
            self.insns += hart.instret - before;
            let now_cycles = hart.cycles;
            let now_ns = hart.time_ns();
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
                    .map(|c| self.harts[c].cycles)
                    .min()
                    .unwrap_or(now_cycles);
                for c in 0..n {
                    let t = match self.state[c] {
                        State::Running => self.harts[c].cycles,
                        State::Wfi => self.harts[c].cycles.max(floor),
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
    pub fn reboot(&mut self, boot: &BootImages) -> Result<(), String> {
        self.board.reset();
        boot.load(&mut self.mem)?;
        self.code = CodeCache::default();
        let now = self.harts.iter().map(|h| h.cycles).max().unwrap_or(0);
        for (h, hart) in self.harts.iter_mut().enumerate() {
            boot.reset_hart(hart);
            hart.cycles = now;
            self.state[h] = State::Running;
        }
        sync_lines(&self.board, &self.lines);
        Ok(())
    }

    /// Sleeping harts with an interrupt pending run again, from `now` on.
    fn wake(&mut self, now_cycles: u64) {
        for (h, hart) in self.harts.iter_mut().enumerate() {
            if self.state[h] == State::Wfi && hart.interrupt_pending() {
                hart.cycles = hart.cycles.max(now_cycles);
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
        let now_cycles = self.harts.iter().map(|h| h.cycles).max().unwrap_or(0);
        let now_ns = self.harts.iter().map(|h| h.time_ns()).max().unwrap_or(0);
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

/// What is loaded at (re)boot, and where.
pub struct BootImages {
    pub images: Vec<(u64, Vec<u8>, &'static str)>,
    pub lay: Layout,
}

impl BootImages {
    pub fn load(&self, mem: &mut PhysMem) -> Result<(), String> {
        for (addr, bytes, what) in &self.images {
            if !mem.write(*addr, bytes) {
                return Err(format!("cannot place the {what} at {addr:#x}: not RAM"));
            }
        }
        Ok(())
    }

    /// A hart as at reset, about to enter the firmware (its clock runs on).
    pub fn reset_hart(&self, hart: &mut Hart) {
        hart.set_full_system(true);
        hart.x = [0; 32];
        hart.f = [0; 32];
        hart.pc = self.lay.firmware;
        hart.x[10] = hart.hart_id;
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
