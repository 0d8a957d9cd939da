//! The board as the harts and DMA see it: device accesses at the hart's
//! time, with every hart's interrupt lines and `mtimecmp` kept in step.

use super::*;

/// Guest memory for DMA: writes drop decoded code they overwrite.
pub(super) struct Dma<'a> {
    pub(super) mem: &'a mut PhysMem,
    pub(super) pages: &'a mut CodePages,
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
pub(super) struct SystemBus<'a> {
    pub(super) board: &'a mut Board,
    pub(super) lines: &'a [Arc<InterruptLines>],
    pub(super) hart: usize,
}

pub(super) const LINE_MASK: u64 = irq::MSIP | irq::MEIP | irq::SEIP;

/// Copies the board's interrupt state to the harts' lines.
pub(super) fn sync_lines(board: &Board, lines: &[Arc<InterruptLines>]) {
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
