//! Interrupts in full-system mode: the lines devices drive, the timer
//! comparators (`mtimecmp` of the CLINT, `stimecmp` of Sstc), and when a
//! pending interrupt is taken.
//!
//! The hart looks at interrupts only at block boundaries, and only when its
//! clock reaches `event_at` (the next timer deadline) or after something
//! that may have made one takeable (a CSR write, `mret`/`sret`, an MMIO
//! access, a new `run`), which sets `event_at` to zero.

use crate::privileged::envcfg;
use crate::{Core, Hart, Priv};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// `mip`/`mie` bits.
pub mod irq {
    /// Supervisor software interrupt.
    pub const SSIP: u64 = 1 << 1;
    /// Machine software interrupt (CLINT `msip`).
    pub const MSIP: u64 = 1 << 3;
    /// Supervisor timer interrupt.
    pub const STIP: u64 = 1 << 5;
    /// Machine timer interrupt (CLINT `mtimecmp`).
    pub const MTIP: u64 = 1 << 7;
    /// Supervisor external interrupt (PLIC S-context).
    pub const SEIP: u64 = 1 << 9;
    /// Machine external interrupt (PLIC M-context).
    pub const MEIP: u64 = 1 << 11;
    /// The lines devices drive (SEIP is ORed with the software-written bit).
    pub const DEVICE_LINES: u64 = MSIP | MTIP | SEIP | MEIP;
}

/// Bits of `mie` that exist.
pub(crate) const MIE_WRITABLE: u64 =
    irq::SSIP | irq::MSIP | irq::STIP | irq::MTIP | irq::SEIP | irq::MEIP;
/// Interrupts `mideleg` can delegate.
pub(crate) const DELEGABLE_INTERRUPTS: u64 = irq::SSIP | irq::STIP | irq::SEIP;

/// Causes in decreasing priority (privileged spec §3.1.9).
const PRIORITY: [u64; 6] = [11, 3, 7, 9, 1, 5];

/// The interrupt inputs of one hart, shared (through an [`Arc`]) with the
/// devices that drive them, so a CLINT or PLIC can change them while the
/// hart runs (from an MMIO store): the hart looks at them after every MMIO
/// access and at every `run`.
#[derive(Debug)]
pub struct InterruptLines {
    levels: AtomicU64,
    mtimecmp: AtomicU64,
    pub(crate) time: AtomicU64,
}

impl Default for InterruptLines {
    fn default() -> Self {
        InterruptLines {
            levels: AtomicU64::new(0),
            mtimecmp: AtomicU64::new(u64::MAX),
            time: AtomicU64::new(0),
        }
    }
}

impl InterruptLines {
    /// Raises (`level` true) or lowers the lines in `mask` (bits of
    /// [`irq::DEVICE_LINES`]; others are ignored).
    pub fn set(&self, mask: u64, level: bool) {
        let mask = mask & irq::DEVICE_LINES;
        if level {
            self.levels.fetch_or(mask, Relaxed);
        } else {
            self.levels.fetch_and(!mask, Relaxed);
        }
    }

    /// The device lines that are high.
    pub fn levels(&self) -> u64 {
        self.levels.load(Relaxed)
    }

    /// Sets the machine timer comparator, in `time` ticks: MTIP is pending
    /// while `time >= mtimecmp` (besides when the MTIP line is high).
    /// `u64::MAX` (the default) never fires.
    pub fn set_mtimecmp(&self, value: u64) {
        self.mtimecmp.store(value, Relaxed);
    }

    /// The machine timer comparator.
    pub fn mtimecmp(&self) -> u64 {
        self.mtimecmp.load(Relaxed)
    }

    /// The hart's `time` as of its last MMIO access or the end of its last
    /// `run` (what a CLINT returns for `mtime`).
    pub fn time(&self) -> u64 {
        self.time.load(Relaxed)
    }
}

impl Hart {
    /// The interrupt inputs, for the devices that drive them.
    pub fn interrupt_lines(&self) -> Arc<InterruptLines> {
        self.lines.clone()
    }

    /// Raises or lowers device interrupt lines (bits of
    /// [`irq::DEVICE_LINES`]); the hart looks at them before its next
    /// block.
    pub fn set_interrupt(&mut self, mask: u64, level: bool) {
        self.lines.set(mask, level);
        self.event_at = 0;
    }

    /// `mip` after `cycles` cycles: software bits, device lines and the two
    /// timer comparators.
    pub(crate) fn mip_at(&self, cycles: u64) -> u64 {
        let time = self.time_at(cycles);
        let mut ip = self.csrs.mip | (self.lines.levels() & irq::DEVICE_LINES);
        if time >= self.lines.mtimecmp() {
            ip |= irq::MTIP;
        }
        if self.csrs.menvcfg & envcfg::STCE != 0 {
            ip &= !irq::STIP;
            if time >= self.csrs.stimecmp {
                ip |= irq::STIP;
            }
        }
        ip
    }

    /// Whether an interrupt is pending and enabled in `mie`, whatever the
    /// global enables: what wakes a `wfi`.
    pub fn interrupt_pending(&self, core: &Core) -> bool {
        self.mip_at(core.cycles) & self.csrs.mie != 0
    }

    /// The cycle at which the next timer comparator (`mtimecmp`, or
    /// `stimecmp` under Sstc) that is not yet reached fires: where a board
    /// may skip simulated time to after [`crate::Exit::Wfi`].
    pub fn timer_deadline(&self, core: &Core) -> Option<u64> {
        let time = core.time_at(core.cycles);
        let mut at = u64::MAX;
        let mtimecmp = self.lines.mtimecmp();
        if time < mtimecmp {
            at = at.min(cycles_for_time(core, mtimecmp));
        }
        if self.csrs.menvcfg & envcfg::STCE != 0 && time < self.csrs.stimecmp {
            at = at.min(cycles_for_time(core, self.csrs.stimecmp));
        }
        (at != u64::MAX).then_some(at)
    }

    /// The interrupt to take now, if any: the highest-priority one pending,
    /// enabled in `mie` and globally enabled for the mode it goes to.
    fn interrupt_to_take(&self) -> Option<u64> {
        let pending = self.mip_at(self.core.cycles) & self.csrs.mie;
        if pending == 0 {
            return None;
        }
        let ms = self.csrs.mstatus;
        let m_on = self.prv != Priv::Machine || ms & crate::privileged::mstatus::MIE != 0;
        let s_on = self.prv == Priv::User
            || (self.prv == Priv::Supervisor && ms & crate::privileged::mstatus::SIE != 0);
        let mut takeable = 0;
        if m_on {
            takeable |= pending & !self.csrs.mideleg;
        }
        if takeable == 0 && s_on {
            takeable |= pending & self.csrs.mideleg;
        }
        PRIORITY.into_iter().find(|&c| takeable >> c & 1 != 0)
    }

    /// At a block boundary once the clock reached `event_at`: takes a
    /// pending interrupt and sets the next deadline.
    pub(crate) fn service_events(&mut self) {
        self.event_at = self.timer_deadline(&self.core).unwrap_or(u64::MAX);
        if let Some(cause) = self.interrupt_to_take() {
            self.take_trap(cause, 0, true);
        }
    }

    /// Makes the current `time` visible to devices (before an MMIO access
    /// and when `run` returns).
    pub(crate) fn publish_time(&self, cycles: u64) {
        self.lines.time.store(self.time_at(cycles), Relaxed);
    }
}

/// The first cycle count of `core` at which `time` reaches `t`.
fn cycles_for_time(core: &Core, t: u64) -> u64 {
    crate::core::mul_div_ceil(t, core.clock_hz.max(1), core.timebase_hz.max(1))
}
