//! The board: the devices at their addresses, the interrupt wiring between
//! them, and the bus that routes physical accesses.

use crate::clint::{Clint, CLINT_SIZE, MAX_HARTS};
use crate::guest_mem::GuestMemory;
use crate::input::InputQueue;
use crate::map::*;
use crate::plic::{plic_size, Plic, PLIC_SOURCES};
use crate::syscon::{ExitRequest, Syscon, SYSCON_SIZE};
use crate::uart::{Uart, UART_SIZE};
use crate::virtio::{QueueError, VirtioDevice, VirtioMmio, VIRTIO_MMIO_SIZE};
use rvnvmm_checkpoint::{CheckpointError, Snapshot, StateReader, StateWriter};
use rvnvmm_config::{Config, RegionKind};
use rvnvmm_hart::ControlPort;
use rvnvmm_memsys::control::{ControlPage, CONTROL_PAGE_SIZE};
use std::io::Write;

/// Why a board cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// `machine.harts` is 0 or more than the CLINT holds.
    #[error("{0} harts: the board takes 1 to {MAX_HARTS}")]
    Harts(usize),
    /// More virtio devices than slots.
    #[error("{0} virtio devices: the board has {VIRTIO_SLOTS} slots")]
    TooManyVirtio(usize),
    /// A memory region covers a device's registers.
    #[error("memory region '{region}' overlaps the {device} at {base:#x}")]
    Overlap {
        /// The region's name.
        region: String,
        /// The device's name.
        device: &'static str,
        /// The device's base address.
        base: u64,
    },
}

/// The interrupts pending for one hart, to be ORed into its `mip`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    /// Machine external (PLIC context 2h).
    pub meip: bool,
    /// Supervisor external (PLIC context 2h+1).
    pub seip: bool,
    /// Machine timer (CLINT `mtime >= mtimecmp`).
    pub mtip: bool,
    /// Machine software (CLINT `msip`).
    pub msip: bool,
}

/// A memory region as the device tree describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemRegion {
    /// The configuration's name for it.
    pub name: String,
    /// Physical base.
    pub base: u64,
    /// Bytes.
    pub size: u64,
}

/// Builds a [`Board`]: the memory map and harts come from the [`Config`],
/// the host ends of the devices from the caller.
pub struct BoardBuilder {
    harts: usize,
    /// Hardware threads per core (consecutive harts share a core).
    threads_per_core: usize,
    timebase_hz: u64,
    cbom_block_bytes: u32,
    dram: Vec<MemRegion>,
    nvmm: Vec<MemRegion>,
    control: Option<ControlPage>,
    uart: Option<Uart>,
    virtio: Vec<Box<dyn VirtioDevice>>,
}

impl BoardBuilder {
    /// Sets the `mtime` frequency (default [`TIMEBASE_HZ`]); it must match
    /// the harts' `time` CSR.
    pub fn timebase_hz(mut self, hz: u64) -> BoardBuilder {
        self.timebase_hz = hz;
        self
    }

    /// Connects the UART to `out` and `input`. Without this the UART
    /// writes to stdout and receives nothing.
    pub fn uart(mut self, out: Box<dyn Write + Send>, input: InputQueue) -> BoardBuilder {
        self.uart = Some(Uart::new(out, input));
        self
    }

    /// Adds a virtio device in the next free slot `k` (0x1000_1000 +
    /// 0x1000·k, PLIC source 1+k).
    pub fn virtio(mut self, dev: impl VirtioDevice + 'static) -> BoardBuilder {
        self.virtio.push(Box::new(dev));
        self
    }

    /// The board.
    pub fn build(self) -> Result<Board, BoardError> {
        if !(1..=MAX_HARTS).contains(&self.harts) {
            return Err(BoardError::Harts(self.harts));
        }
        if self.virtio.len() > VIRTIO_SLOTS {
            return Err(BoardError::TooManyVirtio(self.virtio.len()));
        }
        let contexts = 2 * self.harts;
        let devices = [
            ("syscon", SYSCON_BASE, SYSCON_SIZE),
            ("CLINT", CLINT_BASE, CLINT_SIZE),
            ("PLIC", PLIC_BASE, plic_size(contexts)),
            ("UART", UART0_BASE, UART_SIZE),
            (
                "virtio-mmio",
                VIRTIO_BASE,
                VIRTIO_MMIO_SIZE * VIRTIO_SLOTS as u64,
            ),
            ("NVMM control page", CONTROL_PAGE_BASE, CONTROL_PAGE_SIZE),
        ];
        for r in self.dram.iter().chain(&self.nvmm) {
            for &(device, base, size) in &devices {
                if r.base < base + size && base < r.base.saturating_add(r.size) {
                    return Err(BoardError::Overlap {
                        region: r.name.clone(),
                        device,
                        base,
                    });
                }
            }
        }
        let mut board = Board {
            harts: self.harts,
            threads_per_core: self.threads_per_core,
            now_ns: 0,
            cbom_block_bytes: self.cbom_block_bytes,
            dram: self.dram,
            nvmm: self.nvmm,
            clint: Clint::new(self.harts, self.timebase_hz),
            plic: Plic::new(PLIC_SOURCES, contexts),
            uart: self
                .uart
                .unwrap_or_else(|| Uart::new(Box::new(std::io::stdout()), InputQueue::new())),
            virtio: self.virtio.into_iter().map(VirtioMmio::new).collect(),
            syscon: Syscon::default(),
            control: self.control,
            irq_changes: 0,
        };
        board.update_irqs();
        Ok(board)
    }
}

/// The devices of the full-system machine (`docs/board.md`), behind one
/// [`rvnvmm_hart::Mmio`] bus.
///
/// Driving it: the hart loop hands the board to the harts as their `Mmio`,
/// calls [`Board::set_time`] with a hart's time before running it and
/// [`Board::tick`] with guest memory at the end of every time slice
/// (device work such as virtqueue requests happens there, since a register
/// access has no guest memory at hand), ORs [`Board::pending_interrupts`]
/// into each hart's `mip`, reads `time` from [`Board::mtime`], lets a hart
/// in WFI skip ahead to [`Board::next_event_ns`], and polls
/// [`Board::take_exit_request`].
pub struct Board {
    harts: usize,
    /// Hardware threads per core (consecutive harts share a core).
    threads_per_core: usize,
    now_ns: u64,
    cbom_block_bytes: u32,
    dram: Vec<MemRegion>,
    nvmm: Vec<MemRegion>,
    clint: Clint,
    plic: Plic,
    uart: Uart,
    virtio: Vec<VirtioMmio>,
    syscon: Syscon,
    control: Option<ControlPage>,
    /// See [`Board::irq_changes`].
    irq_changes: u64,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("harts", &self.harts)
            .field("now_ns", &self.now_ns)
            .field("virtio", &self.virtio)
            .finish_non_exhaustive()
    }
}

/// A device window on the bus.
#[derive(Clone, Copy)]
enum Dev {
    Syscon,
    Clint,
    Plic,
    Uart,
    Virtio(usize),
    Control,
}

impl Board {
    /// A builder for the machine `cfg`: its harts, its `dram` and `nvmm`
    /// regions, the L1D line size as the `cbo` block size, and the NVMM
    /// control page if it has NVMM.
    pub fn builder(cfg: &Config) -> BoardBuilder {
        let regions = |kind| {
            cfg.memory
                .regions_of_kind(kind)
                .map(|(name, r)| MemRegion {
                    name: name.to_string(),
                    base: r.base,
                    size: r.size,
                })
                .collect::<Vec<_>>()
        };
        BoardBuilder {
            harts: cfg.machine.harts as usize,
            threads_per_core: cfg.machine.threads_per_core.max(1) as usize,
            timebase_hz: TIMEBASE_HZ,
            cbom_block_bytes: cfg.cache.l1d.line_bytes,
            dram: regions(RegionKind::Dram),
            nvmm: regions(RegionKind::Nvmm),
            control: ControlPage::new(cfg),
            uart: None,
            virtio: Vec::new(),
        }
    }

    /// Number of harts.
    pub fn harts(&self) -> usize {
        self.harts
    }

    /// Hardware threads per core: harts `c * t .. (c + 1) * t` are the
    /// threads of core `c`.
    pub fn threads_per_core(&self) -> usize {
        self.threads_per_core
    }

    /// The DRAM regions (system RAM).
    pub fn dram(&self) -> &[MemRegion] {
        &self.dram
    }

    /// The NVMM regions.
    pub fn nvmm(&self) -> &[MemRegion] {
        &self.nvmm
    }

    /// The `cbo` block size announced in the device tree.
    pub fn cbom_block_bytes(&self) -> u32 {
        self.cbom_block_bytes
    }

    /// The virtio transports, slot by slot.
    pub fn virtio(&self) -> &[VirtioMmio] {
        &self.virtio
    }

    /// Whether the machine has the NVMM control page.
    pub fn has_control_page(&self) -> bool {
        self.control.is_some()
    }

    /// The `mtime` frequency.
    pub fn timebase_hz(&self) -> u64 {
        self.clint.timebase_hz()
    }

    /// The simulated time of the last [`Board::set_time`] or
    /// [`Board::tick`].
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Sets the simulated time register accesses (`mtime`) and
    /// [`Board::pending_interrupts`] see, without servicing devices.
    pub fn set_time(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }

    /// `mtime` at `now_ns`: the value of every hart's `time` CSR.
    pub fn mtime(&self, now_ns: u64) -> u64 {
        self.clint.mtime(now_ns)
    }

    /// Inter-processor interrupts hart `hart` received (CLINT `msip`
    /// raised), reboots included.
    pub fn ipis_received(&self, hart: usize) -> u64 {
        self.clint.ipis_received(hart)
    }

    /// Inter-processor interrupts hart `hart` sent: `msip` of a hart
    /// (itself included) raised by its stores, reboots included.
    pub fn ipis_sent(&self, hart: usize) -> u64 {
        self.clint.ipis_sent(hart)
    }

    /// Advances the board to `now_ns`: pulls console input into the UART,
    /// processes notified virtqueues (reading and writing `mem`), passes
    /// console output on, and updates the interrupt lines.
    pub fn tick(&mut self, now_ns: u64, mem: &mut dyn GuestMemory) {
        self.now_ns = now_ns;
        self.uart.poll_input();
        self.uart.flush();
        for v in &mut self.virtio {
            v.service(mem);
        }
        self.update_irqs();
    }

    /// Whether a device has work for [`Board::tick`]: a virtqueue was
    /// notified or console input waits. A hart loop may end a time slice
    /// early on it.
    pub fn needs_service(&self) -> bool {
        self.virtio.iter().any(|v| v.needs_service())
    }

    /// The interrupts pending for hart `hart` at the board's current time.
    pub fn pending_interrupts(&self, hart: usize) -> Pending {
        Pending {
            meip: self.plic.irq_pending(2 * hart),
            seip: self.plic.irq_pending(2 * hart + 1),
            mtip: self.clint.mtip(hart, self.now_ns),
            msip: self.clint.msip(hart),
        }
    }

    /// Whether the UART's driver enabled its received-data interrupt (see
    /// [`crate::uart::Uart::rx_interrupt_enabled`]).
    pub fn uart_rx_enabled(&self) -> bool {
        self.uart.rx_interrupt_enabled()
    }

    /// Hart `hart`'s `mtimecmp` on the scale of the harts' `time` CSR
    /// (which does not see stores to `mtime`): hand it to the hart
    /// ([`rvnvmm_hart::InterruptLines::set_mtimecmp`]) so it raises MTIP
    /// itself at the exact cycle, rather than when the board next looks.
    pub fn mtimecmp(&self, hart: usize) -> u64 {
        self.clint.mtimecmp_ticks(hart)
    }

    /// The earliest time, not before the current one, at which a timer
    /// interrupt becomes pending (on any hart), or `None` if no timer is
    /// armed. Harts all waiting in WFI may skip ahead to it; with `None`
    /// they can only wait for console input ([`InputQueue::wait`]).
    pub fn next_event_ns(&self) -> Option<u64> {
        self.clint.next_event_ns(self.now_ns)
    }

    /// The power-off or reboot the guest asked for, if any (taken once).
    pub fn take_exit_request(&mut self) -> Option<ExitRequest> {
        self.syscon.take_request()
    }

    /// Whether the guest asked for a power-off or reboot.
    pub fn has_exit_request(&self) -> bool {
        self.syscon.has_request()
    }

    /// The virtio devices that set DEVICE_NEEDS_RESET, by base address,
    /// with the reason: for diagnostics.
    pub fn virtio_errors(&self) -> impl Iterator<Item = (u64, &QueueError)> {
        self.virtio
            .iter()
            .enumerate()
            .filter_map(|(k, v)| Some((virtio_base(k), v.error()?)))
    }

    /// Resets every device for a reboot; images, console queues and the
    /// NVMM control page (the memory system's state) are kept.
    pub fn reset(&mut self) {
        self.clint.reset();
        self.plic.reset();
        self.uart.reset();
        self.virtio.iter_mut().for_each(VirtioMmio::reset);
        self.syscon = Syscon::default();
        self.irq_changes += 1;
        self.update_irqs();
    }

    /// Passes held console output on to the host.
    pub fn flush(&mut self) {
        self.uart.flush();
        self.virtio.iter_mut().for_each(VirtioMmio::flush);
    }

    /// Drives the PLIC's lines from the devices' interrupt outputs.
    fn update_irqs(&mut self) {
        let mut changed = self.plic.set_level(UART0_IRQ, self.uart.irq());
        for (k, v) in self.virtio.iter().enumerate() {
            changed |= self.plic.set_level(VIRTIO_IRQ_BASE + k as u32, v.irq());
        }
        if changed {
            self.irq_changes += 1;
        }
    }

    /// A count that moves whenever what [`Board::pending_interrupts`]
    /// (less `mtip`, which follows the time) or [`Board::mtimecmp`] give may
    /// have changed: at every device access, reset and restore, and when a
    /// device's interrupt line moves. Equal counts: the same answers, so
    /// whoever mirrors them (the harts' interrupt lines) need not ask again.
    pub fn irq_changes(&self) -> u64 {
        self.irq_changes
    }

    /// The device whose window holds all of `[paddr, paddr + size)`, and the
    /// offset into it.
    fn route(&self, paddr: u64, size: u64) -> Option<(Dev, u64)> {
        let within = |base: u64, len: u64| {
            let off = paddr.checked_sub(base)?;
            (off < len && size <= len - off).then_some(off)
        };
        if let Some(off) = within(VIRTIO_BASE, VIRTIO_MMIO_SIZE * self.virtio.len() as u64) {
            let k = (off / VIRTIO_MMIO_SIZE) as usize;
            return within(virtio_base(k), VIRTIO_MMIO_SIZE).map(|o| (Dev::Virtio(k), o));
        }
        let windows = [
            (Dev::Uart, UART0_BASE, UART_SIZE),
            (Dev::Clint, CLINT_BASE, CLINT_SIZE),
            (Dev::Plic, PLIC_BASE, plic_size(self.plic.contexts())),
            (Dev::Syscon, SYSCON_BASE, SYSCON_SIZE),
            (Dev::Control, CONTROL_PAGE_BASE, CONTROL_PAGE_SIZE),
        ];
        windows
            .into_iter()
            .find_map(|(dev, base, len)| within(base, len).map(|o| (dev, o)))
    }
}

/// The base address of virtio slot `k`.
pub fn virtio_base(k: usize) -> u64 {
    VIRTIO_BASE + VIRTIO_MMIO_SIZE * k as u64
}

impl rvnvmm_hart::Mmio for Board {
    fn load(&mut self, paddr: u64, size: u64, port: Option<&mut dyn ControlPort>) -> Option<u64> {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return None;
        }
        let (dev, off) = self.route(paddr, size)?;
        self.irq_changes += 1;
        let v = match dev {
            Dev::Syscon => self.syscon.load(off, size),
            Dev::Clint => self.clint.load(off, size, self.now_ns),
            Dev::Plic => self.plic.load(off, size),
            Dev::Uart => Some(self.uart.load(off)),
            Dev::Virtio(k) => self.virtio[k].load(off, size),
            Dev::Control => self.control.as_mut()?.load(port, off, size),
        };
        // Reads have side effects too (RBR, IIR, claim).
        if matches!(dev, Dev::Uart | Dev::Virtio(_)) {
            self.update_irqs();
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
        self.store_from(None, paddr, size, value, port)
    }
}

impl Board {
    /// A store by hart `from` (`None`: not a hart's), which the CLINT
    /// counts as the sender of the IPIs it raises.
    pub fn store_from(
        &mut self,
        from: Option<usize>,
        paddr: u64,
        size: u64,
        value: u64,
        port: Option<&mut dyn ControlPort>,
    ) -> bool {
        if !matches!(size, 1 | 2 | 4 | 8) {
            return false;
        }
        let Some((dev, off)) = self.route(paddr, size) else {
            return false;
        };
        self.irq_changes += 1;
        let ok = match dev {
            Dev::Syscon => self.syscon.store(off, size, value),
            Dev::Clint => self.clint.store(off, size, value, self.now_ns, from),
            Dev::Plic => self.plic.store(off, size, value),
            Dev::Uart => {
                self.uart.store(off, value);
                true
            }
            Dev::Virtio(k) => self.virtio[k].store(off, size, value),
            Dev::Control => match self.control.as_mut() {
                Some(c) => c.store(port, off, size, value),
                None => false,
            },
        };
        if matches!(dev, Dev::Uart | Dev::Virtio(_)) {
            self.update_irqs();
        }
        ok
    }
}

impl Board {
    /// Writes the devices' state: the board's time, CLINT, PLIC, UART and
    /// each virtio transport with its device. Output held is passed on
    /// first. A pending power-off or reboot, or a device that cannot be
    /// saved, is an error.
    pub fn save(&mut self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        if self.syscon.has_request() {
            return Err(CheckpointError::Unsupported(
                "a machine that is powering off or rebooting".into(),
            ));
        }
        self.flush();
        w.u64(self.now_ns);
        self.clint.save(w);
        self.plic.save(w);
        self.uart.save(w);
        w.count(self.virtio.len());
        for v in &self.virtio {
            v.save(w)?;
        }
        Ok(())
    }

    /// Reads back what [`Board::save`] wrote into a board built from the
    /// same configuration with the same devices.
    pub fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        self.now_ns = r.u64()?;
        self.clint.restore(r)?;
        self.plic.restore(r)?;
        self.uart.restore(r)?;
        r.exact_len(self.virtio.len(), "virtio devices")?;
        for v in &mut self.virtio {
            v.restore(r)?;
        }
        self.syscon = Syscon::default();
        self.irq_changes += 1;
        self.update_irqs();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest_mem::fake::FakeMem;
    use crate::uart::tests::Captured;
    use crate::virtio::queue::tests::{Driver, AVAIL, DESC, RAM, USED};
    use crate::Entropy;
    use rvnvmm_hart::Mmio;

    fn board(harts: u32) -> (Board, Captured, InputQueue) {
        let mut cfg = Config::default();
        cfg.machine.harts = harts;
        let out = Captured::default();
        let input = InputQueue::new();
        let b = Board::builder(&cfg)
            .uart(Box::new(out.clone()), input.clone())
            .virtio(Entropy::new(5))
            .build()
            .unwrap();
        (b, out, input)
    }

    fn st(b: &mut Board, paddr: u64, size: u64, v: u64) {
        assert!(b.store(paddr, size, v, None), "store at {paddr:#x}");
    }

    fn ld(b: &mut Board, paddr: u64, size: u64) -> u64 {
        b.load(paddr, size, None).unwrap()
    }

    /// Enables source `s` at priority 1 for hart 0's S-mode context.
    fn route_to_s0(b: &mut Board, s: u32) {
        st(b, PLIC_BASE + 4 * u64::from(s), 4, 1);
        st(b, PLIC_BASE + 0x2000 + 0x80, 4, 1 << s);
    }

    #[test]
    fn unknown_addresses_fault() {
        let (mut b, _, _) = board(1);
        for a in [
            0,
            0x1000_0100,
            0x1000_2000,
            0x0c00_0000 + plic_size(2),
            0x8000_0000,
        ] {
            assert_eq!(b.load(a, 4, None), None, "{a:#x}");
            assert!(!b.store(a, 4, 0, None), "{a:#x}");
        }
        // Straddling the end of a window, or an odd size.
        assert_eq!(b.load(UART0_BASE + UART_SIZE - 4, 8, None), None);
        assert_eq!(b.load(UART0_BASE, 3, None), None);
    }

    #[test]
    fn uart_receive_interrupt_reaches_the_hart_through_the_plic() {
        let (mut b, out, input) = board(2);
        let mut mem = FakeMem::new(RAM, 0x1000);
        route_to_s0(&mut b, UART0_IRQ);
        st(&mut b, UART0_BASE + 1, 1, 1); // IER.RDI
        assert_eq!(b.pending_interrupts(0), Pending::default());
        input.push(b"k");
        b.tick(0, &mut mem);
        let p = b.pending_interrupts(0);
        assert!(p.seip && !p.meip && !p.mtip && !p.msip);
        assert_eq!(b.pending_interrupts(1), Pending::default());
        // Claim, read the byte, echo it, complete.
        let claim = PLIC_BASE + 0x20_0000 + 0x1000 + 4;
        assert_eq!(ld(&mut b, claim, 4), u64::from(UART0_IRQ));
        let c = ld(&mut b, UART0_BASE, 1);
        st(&mut b, UART0_BASE, 1, c);
        st(&mut b, claim, 4, u64::from(UART0_IRQ));
        assert!(!b.pending_interrupts(0).seip, "the UART line fell");
        b.flush();
        assert_eq!(out.0.lock().unwrap().as_slice(), b"k");
    }

    #[test]
    fn virtio_notify_is_served_at_tick_and_interrupts() {
        let (mut b, _, _) = board(1);
        let mut mem = FakeMem::new(RAM, 0x1_0000);
        route_to_s0(&mut b, VIRTIO_IRQ_BASE);
        let v = virtio_base(0);
        assert_eq!(ld(&mut b, v, 4), 0x7472_6976);
        assert_eq!(ld(&mut b, v + 8, 4), 4);
        st(&mut b, v + 0x24, 4, 1);
        st(&mut b, v + 0x20, 4, 1);
        st(&mut b, v + 0x70, 4, 11);
        st(&mut b, v + 0x38, 4, 4);
        for (reg, addr) in [(0x80, DESC), (0x90, AVAIL), (0xa0, USED)] {
            st(&mut b, v + reg, 4, addr & 0xffff_ffff);
            st(&mut b, v + reg + 4, 4, addr >> 32);
        }
        st(&mut b, v + 0x44, 4, 1);
        st(&mut b, v + 0x70, 4, 15);
        let mut d = Driver::new(4);
        d.offer(&mut mem, 0, &[(RAM + 0x8000, 32, true)]);
        st(&mut b, v + 0x50, 4, 0);
        assert!(b.needs_service());
        assert!(!b.pending_interrupts(0).seip);
        b.tick(10, &mut mem);
        assert!(b.pending_interrupts(0).seip);
        assert_eq!(d.used(&mut mem), Some((0, 32)));
        st(&mut b, v + 0x64, 4, 1);
        assert!(!b.pending_interrupts(0).seip, "acknowledged");
        assert_eq!(b.virtio_errors().count(), 0);
    }

    #[test]
    fn clint_through_the_bus() {
        let (mut b, _, _) = board(2);
        st(&mut b, CLINT_BASE + 4, 4, 1);
        assert!(b.pending_interrupts(1).msip && !b.pending_interrupts(0).msip);
        st(&mut b, CLINT_BASE + 0x4000, 8, 50);
        assert_eq!(b.next_event_ns(), Some(5_000));
        b.set_time(4_999);
        assert!(!b.pending_interrupts(0).mtip);
        assert_eq!(ld(&mut b, CLINT_BASE + 0xbff8, 8), 49);
        b.set_time(5_000);
        assert!(b.pending_interrupts(0).mtip);
        assert_eq!(b.mtime(5_000), 50);
    }

    #[test]
    fn syscon_and_reset() {
        let (mut b, _, _) = board(1);
        st(&mut b, CLINT_BASE, 4, 1);
        st(&mut b, SYSCON_BASE, 4, 0x7777);
        assert!(b.has_exit_request());
        assert_eq!(b.take_exit_request(), Some(ExitRequest::Reboot));
        b.reset();
        assert!(!b.pending_interrupts(0).msip);
        st(&mut b, SYSCON_BASE, 4, (42 << 16) | 0x3333);
        assert_eq!(b.take_exit_request(), Some(ExitRequest::PowerOff(42)));
    }

    #[test]
    fn control_page_is_on_the_bus_when_there_is_nvmm() {
        let (mut b, _, _) = board(1);
        assert_eq!(
            ld(&mut b, CONTROL_PAGE_BASE, 8),
            rvnvmm_memsys::control::MAGIC
        );
        let mut cfg = Config::default();
        cfg.memory.regions.remove("nvmm");
        let mut b = Board::builder(&cfg).build().unwrap();
        assert!(!b.has_control_page());
        assert_eq!(b.load(CONTROL_PAGE_BASE, 8, None), None);
    }

    #[test]
    fn build_errors() {
        let mut cfg = Config::default();
        cfg.machine.harts = 0;
        assert!(matches!(
            Board::builder(&cfg).build(),
            Err(BoardError::Harts(0))
        ));
        cfg.machine.harts = 4096;
        assert!(matches!(
            Board::builder(&cfg).build(),
            Err(BoardError::Harts(4096))
        ));
        let cfg = Config::default();
        let many = (0..9).fold(Board::builder(&cfg), |b, k| b.virtio(Entropy::new(k)));
        assert!(matches!(many.build(), Err(BoardError::TooManyVirtio(9))));
        let mut cfg = Config::default();
        cfg.memory.regions.get_mut("dram").unwrap().base = 0x1000_0000;
        match Board::builder(&cfg).build() {
            Err(BoardError::Overlap { region, device, .. }) => {
                assert_eq!((region.as_str(), device), ("dram", "UART"));
            }
            other => panic!("{other:?}"),
        }
    }
}
