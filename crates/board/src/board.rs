//! The board: the devices at their addresses, the interrupt wiring between
//! them, and the bus that routes physical accesses.

use crate::clint::{Clint, CLINT_SIZE, MAX_HARTS};
use crate::device::{Device, ExitRequest, Wires, PHANDLE_CPU, PHANDLE_DEVICES};
use crate::guest_mem::GuestMemory;
use crate::input::InputQueue;
use crate::map::*;
use crate::plic::{plic_size, Plic, PLIC_SOURCES};
use crate::syscon::Syscon;
use crate::uart::Uart;
use crate::virtio::{QueueError, VirtioDevice, VirtioMmio, VIRTIO_MMIO_SIZE};
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};
use rvnvmm_config::{Config, RegionKind};
use rvnvmm_hart::ControlPort;
use rvnvmm_memsys::control::{ControlPage, CONTROL_PAGE_SIZE};
use rvnvmm_memsys::{MemsysError, NumaNodes};
use std::any::Any;
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
    /// Two devices' windows overlap.
    #[error("the {device} at {base:#x} overlaps the {other}")]
    DeviceOverlap {
        /// The device being registered.
        device: &'static str,
        /// Where it was to go.
        base: u64,
        /// The device already there.
        other: &'static str,
    },
    /// A device's interrupt lines cannot all get a free PLIC source.
    #[error("no free PLIC source for the {0}")]
    Irqs(&'static str),
    /// More devices than the device tree has phandles for.
    #[error("too many devices for the device tree")]
    TooManyDevices,
    /// The memory nodes' latencies, for the NUMA distances, cannot be
    /// measured (the memory system of the config cannot be built).
    #[error("measuring the memory nodes for their NUMA distances: {0}")]
    Numa(MemsysError),
}

/// Which PLIC sources a device being registered gets, one per line
/// ([`Device::irq_count`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Irqs {
    /// Consecutive sources from this one (a fixed number of QEMU `virt`'s
    /// map, which guests may know).
    At(u32),
    /// The lowest free sources above the virtio slots' (then below).
    Any,
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

/// A memory node of the board, as the device tree describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemRegion {
    /// The configuration's name for it.
    pub name: String,
    /// Physical base.
    pub base: u64,
    /// Bytes.
    pub size: u64,
    /// What it is made of: DRAM is system RAM, NVMM what `--nvmm` makes it.
    pub kind: RegionKind,
    /// Its NUMA node id (`rvnvmm_config::Memory::nodes`).
    pub node: u32,
    /// Hot-pluggable rather than boot-time RAM (`memory.NAME.soft_reserved`):
    /// a `pmem-region` whatever its kind.
    pub soft_reserved: bool,
}

/// The NUMA nodes the device tree describes (`docs/board.md`): each
/// memory node's id, the distances between them, and the node of the
/// harts. Only machines that ask for NUMA have it ([`numa_wanted`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Numa {
    /// Every memory node with its measured idle read latency.
    pub nodes: NumaNodes,
    /// The node every hart is on: the fastest DRAM node (the lowest
    /// address among equals). The others are CPU-less.
    pub cpu_node: u32,
}

impl Numa {
    /// Measures the memory nodes of `cfg` and puts the harts on the
    /// fastest DRAM node (any node if there is no DRAM).
    pub fn measure(cfg: &Config) -> Result<Numa, MemsysError> {
        let nodes = NumaNodes::measure(cfg)?;
        // Boot-time DRAM only: a soft-reserved node has no memory until
        // it is hot-plugged, and Linux puts CPUs on nodes it knows at boot.
        let is_dram = |name: &str| {
            cfg.memory
                .regions
                .get(name)
                .is_some_and(|r| r.kind() == RegionKind::Dram && !r.soft_reserved)
        };
        // `min_by_key` keeps the first of equals: the lowest address.
        let fastest = |dram_only: bool| {
            nodes
                .nodes
                .iter()
                .filter(|(_, name, _)| !dram_only || is_dram(name))
                .min_by_key(|(_, _, latency)| *latency)
                .map(|(id, _, _)| *id)
        };
        let cpu_node = fastest(true).or_else(|| fastest(false)).unwrap_or(0);
        Ok(Numa { nodes, cpu_node })
    }

    /// The distance matrix over the node ids in `shown` (the nodes the
    /// device tree describes): `(from, to, distance)`, ascending.
    pub fn matrix(&self, shown: &[u32]) -> Vec<(u32, u32, u8)> {
        self.nodes
            .matrix()
            .into_iter()
            .filter(|(a, b, _)| shown.contains(a) && shown.contains(b))
            .collect()
    }
}

/// Whether the device tree of `cfg`'s machine describes NUMA nodes: when
/// its DRAM regions (the guest's RAM) are more than one node, or when a
/// region names its node (`memory.NAME.node`), or when a region is soft
/// reserved (hot-plugged memory is a node of its own). Every other
/// machine's tree is as it was before NUMA: one node, which Linux fakes
/// itself.
pub fn numa_wanted(cfg: &Config) -> bool {
    let nodes = cfg.memory.nodes();
    let mut dram = nodes
        .iter()
        .filter(|n| n.region.kind() == RegionKind::Dram)
        .map(|n| n.id);
    let first = dram.next();
    dram.any(|id| Some(id) != first)
        || nodes
            .iter()
            .any(|n| n.region.node.is_some() || n.region.soft_reserved)
}

/// Builds a [`Board`]: the memory map and harts come from the [`Config`],
/// the host ends of the devices from the caller.
pub struct BoardBuilder {
    harts: usize,
    /// Hardware threads per core (consecutive harts share a core).
    threads_per_core: usize,
    timebase_hz: u64,
    cbom_block_bytes: u32,
    /// The memory nodes, by base address.
    memory: Vec<MemRegion>,
    /// The NUMA nodes, if the machine wants them described.
    numa: Result<Option<Numa>, MemsysError>,
    control: Vec<ControlPage>,
    uart: Option<Uart>,
    virtio: Vec<Box<dyn VirtioDevice>>,
    extra: Vec<(u64, Box<dyn Device>)>,
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

    /// Adds `dev` at `base`, after the board's own devices, its interrupt
    /// lines on free PLIC sources ([`Irqs::Any`]).
    pub fn device(mut self, base: u64, dev: impl Device) -> BoardBuilder {
        self.extra.push((base, Box::new(dev)));
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
        let mut board = Board {
            harts: self.harts,
            threads_per_core: self.threads_per_core,
            now_ns: 0,
            cbom_block_bytes: self.cbom_block_bytes,
            memory: self.memory,
            numa: self.numa.map_err(BoardError::Numa)?,
            clint: Clint::new(self.harts, self.timebase_hz),
            plic: Plic::new(PLIC_SOURCES, contexts),
            control: self.control,
            map: Vec::new(),
            devices: Vec::new(),
            groups: Vec::new(),
            exit: None,
            irq_changes: 0,
        };
        // The interrupt controllers (and the memory system's control page)
        // are not `Device`s: the CLINT is read for every hart's `time` and
        // `mtimecmp` and counts IPIs by sender, the PLIC is what devices'
        // lines drive, and the control page talks to the memory system
        // through the accessing hart's port. The board holds them itself.
        board.map_window(CLINT_BASE, CLINT_SIZE, Target::Clint, "CLINT")?;
        board.map_window(PLIC_BASE, plic_size(contexts), Target::Plic, "PLIC")?;
        for k in 0..board.control.len() {
            let name = "NVMM control page";
            board.map_window(
                control_page_base(k),
                CONTROL_PAGE_SIZE,
                Target::Control(k),
                name,
            )?;
        }
        let uart = self
            .uart
            .unwrap_or_else(|| Uart::new(Box::new(std::io::stdout()), InputQueue::new()));
        // The devices; each one line.
        board.attach(SYSCON_BASE, Box::new(Syscon), Irqs::Any)?;
        board.attach(UART0_BASE, Box::new(uart), Irqs::At(UART0_IRQ))?;
        board.declare_group(VIRTIO_GROUP);
        for (k, v) in self.virtio.into_iter().enumerate() {
            let irq = Irqs::At(VIRTIO_IRQ_BASE + k as u32);
            board.attach(virtio_base(k), Box::new(VirtioMmio::new(v)), irq)?;
        }
        for (base, dev) in self.extra {
            board.attach(base, dev, Irqs::Any)?;
        }
        // Memory must not hide a device, nor the room kept for the virtio
        // slots.
        let reserved = [(
            "virtio-mmio",
            VIRTIO_BASE,
            VIRTIO_MMIO_SIZE * VIRTIO_SLOTS as u64,
        )];
        let windows = board.map.iter().map(|w| (w.name, w.base, w.size));
        let windows: Vec<_> = windows.chain(reserved).collect();
        for r in &board.memory {
            for &(device, base, size) in &windows {
                if r.base < base + size && base < r.base.saturating_add(r.size) {
                    return Err(BoardError::Overlap {
                        region: r.name.clone(),
                        device,
                        base,
                    });
                }
            }
        }
        Ok(board)
    }
}

/// The checkpoint group of the virtio transports (saved after their
/// count, even when there are none).
const VIRTIO_GROUP: &str = "virtio devices";

/// What a window of the address map leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Clint,
    Plic,
    /// Control page k.
    Control(usize),
    /// `Board::devices[i]`.
    Dev(usize),
}

/// A window of the address map.
#[derive(Clone, Copy, Debug)]
struct Window {
    base: u64,
    size: u64,
    target: Target,
    name: &'static str,
}

/// A registered device.
struct Slot {
    base: u64,
    /// Its PLIC sources, line by line.
    irqs: Vec<u32>,
    dev: Box<dyn Device>,
}

/// A checkpoint group: saved, at device `at` of the order, as the count
/// of devices of the group, then those devices.
struct Group {
    at: usize,
    name: &'static str,
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
    /// The memory nodes, by base address.
    memory: Vec<MemRegion>,
    /// The NUMA nodes the device tree describes, if any.
    numa: Option<Numa>,
    clint: Clint,
    plic: Plic,
    /// The memory nodes' control pages, page k at
    /// `CONTROL_PAGE_BASE + k * CONTROL_PAGE_SIZE`.
    control: Vec<ControlPage>,
    /// The address map, by base: every window on the bus.
    map: Vec<Window>,
    /// The registered devices, in registration order (which is address
    /// order for the board's own: ticks, checkpoints and the device tree
    /// follow it).
    devices: Vec<Slot>,
    groups: Vec<Group>,
    /// The power-off or reboot a device asked for.
    exit: Option<ExitRequest>,
    /// See [`Board::irq_changes`].
    irq_changes: u64,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("harts", &self.harts)
            .field("now_ns", &self.now_ns)
            .field("map", &self.map)
            .finish_non_exhaustive()
    }
}

impl Board {
    /// A builder for the machine `cfg`: its harts, its memory nodes (and
    /// their NUMA distances if [`numa_wanted`]), the L1D line size as the
    /// `cbo` block size, and a control page for each NVMM node.
    pub fn builder(cfg: &Config) -> BoardBuilder {
        let memory = cfg
            .memory
            .nodes()
            .into_iter()
            .map(|n| MemRegion {
                name: n.name.to_string(),
                base: n.region.base,
                size: n.region.size,
                kind: n.region.kind(),
                node: n.id,
                soft_reserved: n.region.soft_reserved,
            })
            .collect();
        BoardBuilder {
            harts: cfg.machine.harts as usize,
            threads_per_core: cfg.machine.threads_per_core.max(1) as usize,
            timebase_hz: TIMEBASE_HZ,
            cbom_block_bytes: cfg.cache.l1d.line_bytes,
            memory,
            numa: if numa_wanted(cfg) {
                Numa::measure(cfg).map(Some)
            } else {
                Ok(None)
            },
            control: ControlPage::pages(cfg),
            uart: None,
            virtio: Vec::new(),
            extra: Vec::new(),
        }
    }

    /// Puts a window into the address map.
    fn map_window(
        &mut self,
        base: u64,
        size: u64,
        target: Target,
        name: &'static str,
    ) -> Result<(), BoardError> {
        if let Some(w) = self
            .map
            .iter()
            .find(|w| base < w.base + w.size && w.base < base.saturating_add(size))
        {
            return Err(BoardError::DeviceOverlap {
                device: name,
                base,
                other: w.name,
            });
        }
        let at = self.map.partition_point(|w| w.base < base);
        self.map.insert(
            at,
            Window {
                base,
                size,
                target,
                name,
            },
        );
        Ok(())
    }

    /// Registers `dev` at `base`: its window goes into the address map,
    /// its interrupt lines get PLIC sources (`irqs`).
    pub fn attach(
        &mut self,
        base: u64,
        dev: Box<dyn Device>,
        irqs: Irqs,
    ) -> Result<(), BoardError> {
        let name = dev.name();
        let i = self.devices.len();
        if PHANDLE_DEVICES + i as u32 >= PHANDLE_CPU {
            return Err(BoardError::TooManyDevices);
        }
        let sources = self
            .allocate_irqs(dev.irq_count(), irqs)
            .ok_or(BoardError::Irqs(name))?;
        self.map_window(base, dev.size(), Target::Dev(i), name)?;
        if let Some(g) = dev.checkpoint_group() {
            self.declare_group(g);
        }
        self.devices.push(Slot {
            base,
            irqs: sources,
            dev,
        });
        Ok(())
    }

    /// `n` PLIC sources no device has yet.
    fn allocate_irqs(&self, n: usize, irqs: Irqs) -> Option<Vec<u32>> {
        let taken = |s: u32| self.devices.iter().any(|d| d.irqs.contains(&s));
        let sources: Vec<u32> = match irqs {
            _ if n == 0 => Vec::new(),
            Irqs::At(first) => (first..first + n as u32).collect(),
            Irqs::Any => {
                let above = VIRTIO_IRQ_BASE + VIRTIO_SLOTS as u32;
                (above..=PLIC_SOURCES)
                    .chain(1..above)
                    .filter(|&s| !taken(s))
                    .take(n)
                    .collect()
            }
        };
        let valid = |s: &u32| (1..=PLIC_SOURCES).contains(s) && !taken(*s);
        (sources.len() == n && sources.iter().all(valid)).then_some(sources)
    }

    /// Devices of checkpoint group `name` are saved, from the next device
    /// registered on, after their count (0 if none follow).
    fn declare_group(&mut self, name: &'static str) {
        if !self.groups.iter().any(|g| g.name == name) {
            self.groups.push(Group {
                at: self.devices.len(),
                name,
            });
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

    /// The memory nodes, by base address.
    pub fn memory(&self) -> &[MemRegion] {
        &self.memory
    }

    /// The NUMA nodes the device tree describes; `None` for a machine
    /// that does not want them ([`numa_wanted`]).
    pub fn numa(&self) -> Option<&Numa> {
        self.numa.as_ref()
    }

    /// The DRAM nodes, by base address (soft-reserved ones included: the
    /// machine has their memory, Linux hot-plugs it later).
    pub fn dram(&self) -> impl Iterator<Item = &MemRegion> + '_ {
        self.memory.iter().filter(|r| r.kind == RegionKind::Dram)
    }

    /// The nodes Linux finds as RAM at boot (`memory` nodes of the device
    /// tree): the DRAM that is not soft reserved, by base address.
    pub fn boot_ram(&self) -> impl Iterator<Item = &MemRegion> + '_ {
        self.dram().filter(|r| !r.soft_reserved)
    }

    /// The NVMM nodes, by base address.
    pub fn nvmm(&self) -> impl Iterator<Item = &MemRegion> + '_ {
        self.memory.iter().filter(|r| r.kind == RegionKind::Nvmm)
    }

    /// The `cbo` block size announced in the device tree.
    pub fn cbom_block_bytes(&self) -> u32 {
        self.cbom_block_bytes
    }

    /// The first registered device of type `T`.
    pub fn device<T: Device>(&self) -> Option<&T> {
        self.devices
            .iter()
            .find_map(|s| (&*s.dev as &dyn Any).downcast_ref::<T>())
    }

    /// The PLIC sources of the first registered device of type `T`.
    pub fn device_irqs<T: Device>(&self) -> Option<&[u32]> {
        self.devices
            .iter()
            .find(|s| (&*s.dev as &dyn Any).is::<T>())
            .map(|s| s.irqs.as_slice())
    }

    /// The virtio transports, slot by slot.
    pub fn virtio(&self) -> impl Iterator<Item = &VirtioMmio> {
        self.devices
            .iter()
            .filter_map(|s| (&*s.dev as &dyn Any).downcast_ref::<VirtioMmio>())
    }

    /// The memory nodes' control pages, in address order.
    pub fn control_pages(&self) -> &[ControlPage] {
        &self.control
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

    /// Calls device `i` with its wires, and counts a moved line.
    fn with_wires<R>(
        &mut self,
        i: usize,
        f: impl FnOnce(&mut dyn Device, &mut Wires<'_>) -> R,
    ) -> R {
        let slot = &mut self.devices[i];
        let mut wires = Wires::new(self.now_ns, &mut self.plic, &slot.irqs, &mut self.exit);
        let r = f(&mut *slot.dev, &mut wires);
        if wires.changed() {
            self.irq_changes += 1;
        }
        r
    }

    /// Advances the board to `now_ns`: every device's [`Device::tick`]
    /// (the UART pulls console input and passes output on, virtio
    /// transports process notified virtqueues, reading and writing `mem`),
    /// in registration order.
    pub fn tick(&mut self, now_ns: u64, mem: &mut dyn GuestMemory) {
        self.now_ns = now_ns;
        for i in 0..self.devices.len() {
            self.with_wires(i, |d, w| d.tick(mem, w));
        }
    }

    /// Whether a device has work for [`Board::tick`]: a virtqueue was
    /// notified or console input waits. A hart loop may end a time slice
    /// early on it.
    pub fn needs_service(&self) -> bool {
        self.devices.iter().any(|s| s.dev.needs_service())
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
        self.device::<Uart>()
            .is_some_and(Uart::rx_interrupt_enabled)
    }

    /// Hart `hart`'s `mtimecmp` on the scale of the harts' `time` CSR
    /// (which does not see stores to `mtime`): hand it to the hart
    /// ([`rvnvmm_hart::InterruptLines::set_mtimecmp`]) so it raises MTIP
    /// itself at the exact cycle, rather than when the board next looks.
    pub fn mtimecmp(&self, hart: usize) -> u64 {
        self.clint.mtimecmp_ticks(hart)
    }

    /// The earliest time, not before the current one, at which a timer
    /// interrupt becomes pending (on any hart) or a device wants a tick,
    /// or `None` if nothing is armed. Harts all waiting in WFI may skip
    /// ahead to it; with `None` they can only wait for console input
    /// ([`InputQueue::wait`]).
    pub fn next_event_ns(&self) -> Option<u64> {
        let now = self.now_ns;
        let devices = self.devices.iter().filter_map(|s| s.dev.next_event_ns(now));
        self.clint
            .next_event_ns(now)
            .into_iter()
            .chain(devices)
            .min()
    }

    /// The power-off or reboot the guest asked for, if any (taken once).
    pub fn take_exit_request(&mut self) -> Option<ExitRequest> {
        self.exit.take()
    }

    /// Whether the guest asked for a power-off or reboot.
    pub fn has_exit_request(&self) -> bool {
        self.exit.is_some()
    }

    /// The virtio devices that set DEVICE_NEEDS_RESET, by base address,
    /// with the reason: for diagnostics.
    pub fn virtio_errors(&self) -> impl Iterator<Item = (u64, &QueueError)> {
        self.devices.iter().filter_map(|s| {
            let v = (&*s.dev as &dyn Any).downcast_ref::<VirtioMmio>()?;
            Some((s.base, v.error()?))
        })
    }

    /// Resets every device for a reboot; images, console queues and the
    /// NVMM control page (the memory system's state) are kept.
    pub fn reset(&mut self) {
        self.clint.reset();
        self.plic.reset();
        self.exit = None;
        for i in 0..self.devices.len() {
            self.with_wires(i, |d, w| d.reset(w));
        }
        self.irq_changes += 1;
    }

    /// Passes held console output on to the host.
    pub fn flush(&mut self) {
        self.devices.iter_mut().for_each(|s| s.dev.flush());
    }

    /// A count that moves whenever what [`Board::pending_interrupts`]
    /// (less `mtip`, which follows the time) or [`Board::mtimecmp`] give may
    /// have changed: at every PLIC access and CLINT store, reset and
    /// restore, and when a device's interrupt line moves. Equal counts: the
    /// same answers, so whoever mirrors them (the harts' interrupt lines)
    /// need not ask again.
    pub fn irq_changes(&self) -> u64 {
        self.irq_changes
    }

    /// What the address map holds, by address.
    pub(crate) fn targets(&self) -> impl Iterator<Item = Target> + '_ {
        self.map.iter().map(|w| w.target)
    }

    /// Number of registered devices.
    pub(crate) fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// Registered device `i`: its base, size, PLIC sources, and it.
    pub(crate) fn device_at(&self, i: usize) -> (u64, u64, &[u32], &dyn Device) {
        let s = &self.devices[i];
        (s.base, s.dev.size(), &s.irqs, &*s.dev)
    }

    /// The window that holds all of `[paddr, paddr + size)`, and the offset
    /// into it.
    #[inline]
    fn route(&self, paddr: u64, size: u64) -> Option<(Target, u64)> {
        let i = self
            .map
            .partition_point(|w| w.base <= paddr)
            .checked_sub(1)?;
        let w = &self.map[i];
        let off = paddr - w.base;
        (off < w.size && size <= w.size - off).then_some((w.target, off))
    }
}

/// The base address of control page `k`.
pub fn control_page_base(k: usize) -> u64 {
    CONTROL_PAGE_BASE + CONTROL_PAGE_SIZE * k as u64
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
        let (target, off) = self.route(paddr, size)?;
        match target {
            Target::Dev(i) => self.with_wires(i, |d, w| d.load(off, size, w)),
            Target::Clint => self.clint.load(off, size, self.now_ns),
            Target::Plic => {
                // A claim changes what is pending.
                self.irq_changes += 1;
                self.plic.load(off, size)
            }
            Target::Control(k) => self.control[k].load(port, off, size),
        }
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
        let Some((target, off)) = self.route(paddr, size) else {
            return false;
        };
        match target {
            Target::Dev(i) => self.with_wires(i, |d, w| d.store(off, size, value, w)),
            Target::Clint => {
                self.irq_changes += 1;
                self.clint.store(off, size, value, self.now_ns, from)
            }
            Target::Plic => {
                self.irq_changes += 1;
                self.plic.store(off, size, value)
            }
            Target::Control(k) => self.control[k].store(port, off, size, value),
        }
    }
}

impl Board {
    /// Writes the devices' state: the board's time, CLINT, PLIC and each
    /// device in registration order ([`Device::save`]; a checkpoint group
    /// after its count). Output held is passed on first. A pending
    /// power-off or reboot, or a device that cannot be saved, is an error.
    pub fn save(&mut self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        if self.exit.is_some() {
            return Err(CheckpointError::Unsupported(
                "a machine that is powering off or rebooting".into(),
            ));
        }
        self.flush();
        w.u64(self.now_ns);
        self.clint.save(w);
        self.plic.save(w);
        for i in 0..=self.devices.len() {
            for g in self.groups.iter().filter(|g| g.at == i) {
                w.count(self.group_len(g.name));
            }
            if let Some(s) = self.devices.get(i) {
                s.dev.save(w)?;
            }
        }
        Ok(())
    }

    fn group_len(&self, name: &str) -> usize {
        let of = |s: &&Slot| s.dev.checkpoint_group() == Some(name);
        self.devices.iter().filter(of).count()
    }

    /// Reads back what [`Board::save`] wrote into a board built from the
    /// same configuration with the same devices.
    pub fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        self.now_ns = r.u64()?;
        self.clint.restore(r)?;
        self.plic.restore(r)?;
        for i in 0..=self.devices.len() {
            for k in 0..self.groups.len() {
                if self.groups[k].at == i {
                    let name = self.groups[k].name;
                    r.exact_len(self.group_len(name), name)?;
                }
            }
            if i < self.devices.len() {
                self.with_wires(i, |d, w| d.restore(r, w))?;
            }
        }
        self.exit = None;
        self.irq_changes += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest_mem::fake::FakeMem;
    use crate::uart::tests::Captured;
    use crate::uart::UART_SIZE;
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
        assert!(b.control_pages().is_empty());
        assert_eq!(b.load(CONTROL_PAGE_BASE, 8, None), None);
    }

    #[test]
    fn each_nvmm_node_has_its_control_page() {
        let mut text = Config::builtin_toml("freedom-u500").unwrap().to_string();
        text.push_str(
            "[memory.pm2]\nbase = 0x1_0000_0000\nsize = 0x4000_0000\nkind = \"nvmm\"\ncontroller = \"ddr3\"\nnode = 5\n",
        );
        let sets = ["memory.nvmm.size=0x4000_0000".to_string()];
        let cfg = Config::from_toml_str(&text, &sets).unwrap();
        let mut b = Board::builder(&cfg).build().unwrap();
        let node = rvnvmm_memsys::control::reg::NODE;
        assert_eq!(ld(&mut b, CONTROL_PAGE_BASE + node, 8), 1);
        assert_eq!(ld(&mut b, control_page_base(1) + node, 8), 5);
        assert_eq!(b.load(control_page_base(2), 8, None), None);
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

    #[test]
    fn a_device_is_one_file_and_one_registration_line() {
        use crate::test_device::{Counter, COUNTER_BASE};
        let mut cfg = Config::default();
        cfg.machine.harts = 2;
        let mut b = Board::builder(&cfg)
            .uart(Box::new(std::io::sink()), InputQueue::new())
            .virtio(Entropy::new(5))
            .device(COUNTER_BASE, Counter::default())
            .build()
            .unwrap();
        // Its line got the first free source above the virtio slots'.
        let s = VIRTIO_IRQ_BASE + VIRTIO_SLOTS as u32;
        assert_eq!(b.device_irqs::<Counter>(), Some(&[s][..]));
        route_to_s0(&mut b, s);
        let changes = b.irq_changes();
        assert_eq!(ld(&mut b, COUNTER_BASE, 4), 0);
        assert_eq!(b.irq_changes(), changes, "a load moved no line");
        st(&mut b, COUNTER_BASE, 4, 7);
        assert!(b.irq_changes() != changes, "the line rose");
        assert!(b.pending_interrupts(0).seip && !b.pending_interrupts(1).seip);
        assert_eq!(ld(&mut b, COUNTER_BASE, 4), 1);
        assert!(!b.store(COUNTER_BASE + 8, 4, 0, None), "its own faults");
        assert_eq!(b.load(COUNTER_BASE + 0x1000, 4, None), None);
        // Claimed through the PLIC, acknowledged at the device, completed.
        let claim = PLIC_BASE + 0x20_0000 + 0x1000 + 4;
        assert_eq!(ld(&mut b, claim, 4), u64::from(s));
        st(&mut b, COUNTER_BASE + 4, 4, 0);
        st(&mut b, claim, 4, u64::from(s));
        assert!(!b.pending_interrupts(0).seip);
        st(&mut b, COUNTER_BASE, 4, 0);
        assert!(b.pending_interrupts(0).seip);

        // In the device tree, with its source.
        let blob = b.dtb(&crate::DtbOptions::default()).unwrap();
        let fdt = fdt::Fdt::new(&blob).unwrap();
        let node = fdt.find_node("/soc/counter@10020000").unwrap();
        let compatible = node.property("compatible").unwrap().value;
        assert_eq!(compatible, b"rvnvmm,test-counter\0");
        let irq = node.property("interrupts").unwrap().value;
        assert_eq!(irq, s.to_be_bytes());

        // In checkpoints: a board built alike gets its count and line back.
        let mut w = StateWriter::new();
        b.save(&mut w).unwrap();
        let bytes = w.into_bytes();
        let mut c = Board::builder(&cfg)
            .uart(Box::new(std::io::sink()), InputQueue::new())
            .virtio(Entropy::new(5))
            .device(COUNTER_BASE, Counter::default())
            .build()
            .unwrap();
        c.restore(&mut StateReader::new("board", &bytes)).unwrap();
        assert_eq!(ld(&mut c, COUNTER_BASE, 4), 2);
        assert!(c.pending_interrupts(0).seip);
        c.reset();
        assert_eq!(ld(&mut c, COUNTER_BASE, 4), 0);
        assert!(!c.pending_interrupts(0).seip);
    }

    #[test]
    fn registration_errors() {
        use crate::test_device::Counter;
        let cfg = Config::default();
        let on_uart = Board::builder(&cfg).device(UART0_BASE + 0x80, Counter::default());
        match on_uart.build() {
            Err(BoardError::DeviceOverlap { device, other, .. }) => {
                assert_eq!((device, other), ("counter", "UART"));
            }
            other => panic!("{other:?}"),
        }
        let mut b = Board::builder(&cfg).build().unwrap();
        let taken = b.attach(
            0x2000_0000,
            Box::new(Counter::default()),
            Irqs::At(UART0_IRQ),
        );
        assert!(matches!(taken, Err(BoardError::Irqs("counter"))));
    }

    #[test]
    fn checkpoints_keep_their_layout() {
        // now, CLINT, PLIC, UART, the count of virtio devices, each one:
        // a board without virtio still writes the count.
        let cfg = Config::default();
        let mut b = Board::builder(&cfg)
            .uart(Box::new(std::io::sink()), InputQueue::new())
            .build()
            .unwrap();
        let mut w = StateWriter::new();
        b.save(&mut w).unwrap();
        let mut expect = StateWriter::new();
        expect.u64(0);
        b.clint.save(&mut expect);
        b.plic.save(&mut expect);
        Checkpointable::save(b.device::<Uart>().unwrap(), &mut expect);
        expect.count(0);
        assert_eq!(w.into_bytes(), expect.into_bytes());
    }
}
