//! What a device on the board is: the [`Device`] trait, the [`Wires`] a
//! device drives (its PLIC interrupt lines, the machine's power) while the
//! board calls it, and the [`FdtNode`] it describes itself with.
//!
//! Adding a device is a file implementing [`Device`] and one registration
//! line ([`crate::BoardBuilder::device`], or a line in
//! [`crate::BoardBuilder::build`] for a device every board has): the board
//! gives it its address window and PLIC sources, routes accesses in the
//! window to it, applies the interrupt levels it pushes, ticks it, resets
//! it, saves it in checkpoints and asks it for its device-tree node.

use crate::guest_mem::GuestMemory;
use crate::plic::Plic;
use rvnvmm_checkpoint::{CheckpointError, StateReader, StateWriter};
use std::any::Any;
use vm_fdt::{FdtWriter, FdtWriterResult};

/// What the guest asked the machine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitRequest {
    /// Stop, with this exit status (0 for a plain power-off).
    PowerOff(u16),
    /// Reset the machine and boot again.
    Reboot,
}

/// Registered device `i` may give its node phandle `PHANDLE_DEVICES + i`
/// (below `PHANDLE_CPU`).
pub(crate) const PHANDLE_DEVICES: u32 = 2;
/// Hart h's cpu node is `PHANDLE_CPU + 2h`, its interrupt controller the
/// next one.
pub(crate) const PHANDLE_CPU: u32 = 0x10;

/// A memory-mapped device.
///
/// The board calls it only on an access to its window and at time events
/// (the end of a time slice, reset, checkpoints): never per instruction.
/// Every call that may change its interrupt outputs gets the [`Wires`] to
/// push them through ([`Wires::set_irq`]); the board polls no device. A
/// device starts (is registered) with its lines low.
pub trait Device: Any + Send {
    /// A name for messages (a region overlapping its window).
    fn name(&self) -> &'static str;

    /// Bytes of its register window.
    fn size(&self) -> u64;

    /// How many interrupt lines it drives (each gets a PLIC source).
    fn irq_count(&self) -> usize {
        0
    }

    /// A load of `size` (1, 2, 4 or 8) bytes at `offset` into the window
    /// (the access lies within it); `None` for an access fault.
    fn load(&mut self, offset: u64, size: u64, wires: &mut Wires<'_>) -> Option<u64>;

    /// A store; `false` for an access fault.
    fn store(&mut self, offset: u64, size: u64, value: u64, wires: &mut Wires<'_>) -> bool;

    /// Time advanced to `wires.now_ns()`: work that needs guest memory
    /// (DMA) or the host (input, output) happens here.
    fn tick(&mut self, _mem: &mut dyn GuestMemory, _wires: &mut Wires<'_>) {}

    /// Whether [`Device::tick`] has work waiting (a hart loop may end a
    /// time slice early for it).
    fn needs_service(&self) -> bool {
        false
    }

    /// The earliest time, not before `now_ns`, at which it wants a tick to
    /// raise an interrupt, if any.
    fn next_event_ns(&self, _now_ns: u64) -> Option<u64> {
        None
    }

    /// Back to the reset state (a reboot); host ends are kept.
    fn reset(&mut self, wires: &mut Wires<'_>);

    /// Passes held output on to the host.
    fn flush(&mut self) {}

    /// Writes its state for a checkpoint (nothing by default: a stateless
    /// device).
    fn save(&self, _w: &mut StateWriter) -> Result<(), CheckpointError> {
        Ok(())
    }

    /// Reads back what [`Device::save`] wrote, into a device built the same
    /// way; it pushes its restored interrupt levels.
    fn restore(
        &mut self,
        _r: &mut StateReader<'_>,
        _wires: &mut Wires<'_>,
    ) -> Result<(), CheckpointError> {
        Ok(())
    }

    /// Consecutive devices of one group are saved after a count of them
    /// (the virtio transports: "virtio devices"), so a checkpoint of a
    /// board with another number of them is refused.
    fn checkpoint_group(&self) -> Option<&'static str> {
        None
    }

    /// Its device-tree node's name before the `@address` (`serial`).
    fn fdt_name(&self) -> &'static str;

    /// Its node's properties (the board opened the node `name@base` under
    /// `/soc` and closes it).
    fn fdt_node(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()>;

    /// Nodes it adds at the root of the tree (the syscon's `poweroff`).
    fn fdt_root(&self, _w: &mut FdtWriter, _node: &FdtNode<'_>) -> FdtWriterResult<()> {
        Ok(())
    }

    /// The alias its node gets (`serial0`, which is also `stdout-path`).
    fn fdt_alias(&self) -> Option<&'static str> {
        None
    }
}

/// Where a device is, for its device-tree node.
#[derive(Clone, Copy, Debug)]
pub struct FdtNode<'a> {
    /// Its window's base.
    pub base: u64,
    /// Its window's size.
    pub size: u64,
    /// Its PLIC sources, line by line.
    pub irqs: &'a [u32],
    /// The PLIC's phandle (`interrupt-parent`).
    pub plic_phandle: u32,
    /// A phandle the device may give its node (unique to it).
    pub phandle: u32,
}

impl FdtNode<'_> {
    /// `reg`: the window (2 address and 2 size cells).
    pub fn reg(&self, w: &mut FdtWriter) -> FdtWriterResult<()> {
        w.property_array_u64("reg", &[self.base, self.size])
    }

    /// `interrupt-parent` and `interrupts`: its PLIC sources.
    pub fn interrupts(&self, w: &mut FdtWriter) -> FdtWriterResult<()> {
        w.property_u32("interrupt-parent", self.plic_phandle)?;
        match self.irqs {
            [one] => w.property_u32("interrupts", *one),
            many => w.property_array_u32("interrupts", many),
        }
    }
}

/// What a device drives while the board calls it: its interrupt lines
/// into the PLIC, and the machine's power-off or reboot request.
pub struct Wires<'a> {
    now_ns: u64,
    plic: &'a mut Plic,
    sources: &'a [u32],
    exit: &'a mut Option<ExitRequest>,
    changed: bool,
}

impl<'a> Wires<'a> {
    pub(crate) fn new(
        now_ns: u64,
        plic: &'a mut Plic,
        sources: &'a [u32],
        exit: &'a mut Option<ExitRequest>,
    ) -> Wires<'a> {
        Wires {
            now_ns,
            plic,
            sources,
            exit,
            changed: false,
        }
    }

    /// The simulated time.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Drives the device's interrupt line `line` (0 ..
    /// [`Device::irq_count`]) high or low. Pushing an unchanged level does
    /// nothing.
    pub fn set_irq(&mut self, line: usize, high: bool) {
        let source = self.sources[line];
        self.changed |= self.plic.set_level(source, high);
    }

    /// Asks the machine to power off or reboot.
    pub fn request_exit(&mut self, req: ExitRequest) {
        *self.exit = Some(req);
    }

    /// Whether a line moved.
    pub(crate) fn changed(&self) -> bool {
        self.changed
    }
}
