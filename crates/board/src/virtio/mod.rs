//! virtio over MMIO, version 2 (virtio 1.2 §4.2), and the devices behind
//! it: block (§5.2), console (§5.3) and entropy (§5.4).
//!
//! The transport handles the registers, feature negotiation, device status
//! and the interrupt line; a [`VirtioDevice`] handles requests. Register
//! accesses never touch guest memory (an MMIO access has none at hand):
//! a queue notification is recorded, and the queues are processed by
//! [`VirtioMmio::service`], which the board calls from its `tick`.

mod block;
mod console;
mod entropy;
pub mod queue;

pub use block::Block;
pub use console::Console;
pub use entropy::Entropy;
pub use queue::{Chain, Cursor, Desc, Queue, QueueError, QUEUE_MAX};

use crate::device::{Device, FdtNode, Wires};
use crate::guest_mem::GuestMemory;
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};
use vm_fdt::{FdtWriter, FdtWriterResult};

/// Bytes of one virtio-mmio window.
pub const VIRTIO_MMIO_SIZE: u64 = 0x1000;
/// `MagicValue`: "virt".
pub const MAGIC: u32 = 0x7472_6976;
/// `VendorID`: "RVNM".
pub const VENDOR_ID: u32 = u32::from_le_bytes(*b"RVNM");

/// Feature bit: indirect descriptors (§6).
pub const F_INDIRECT_DESC: u64 = 1 << 28;
/// Feature bit: a modern (1.x) device (§6).
pub const F_VERSION_1: u64 = 1 << 32;

/// Device status bits (§2.1).
pub mod status {
    /// The guest noticed the device.
    pub const ACKNOWLEDGE: u32 = 1;
    /// The guest has a driver for it.
    pub const DRIVER: u32 = 2;
    /// The driver is ready.
    pub const DRIVER_OK: u32 = 4;
    /// Feature negotiation is complete.
    pub const FEATURES_OK: u32 = 8;
    /// The device hit an error and needs a reset.
    pub const DEVICE_NEEDS_RESET: u32 = 64;
    /// The driver gave up.
    pub const FAILED: u32 = 128;
}

/// What a virtio device does, whatever the transport.
pub trait VirtioDevice: Send {
    /// The virtio device ID (2 block, 3 console, 4 entropy).
    fn device_id(&self) -> u32;
    /// Device-type feature bits; the transport adds VERSION_1 and
    /// INDIRECT_DESC.
    fn features(&self) -> u64;
    /// Number of virtqueues.
    fn queue_count(&self) -> usize;
    /// Fills `data` from the configuration space at `offset` (zeros beyond
    /// its end).
    fn read_config(&self, offset: u64, data: &mut [u8]);
    /// A driver write to the configuration space.
    fn write_config(&mut self, _offset: u64, _data: &[u8]) {}
    /// Processes the queues whose bit is set in `notified`, and anything
    /// else the device has to deliver (console input).
    fn process(
        &mut self,
        queues: &mut [Queue],
        notified: u32,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError>;
    /// Whether the device has work without a notification (pending input).
    fn wants_service(&self) -> bool {
        false
    }
    /// The device is reset by the driver.
    fn reset(&mut self) {}
    /// Passes held output on to the host.
    fn flush(&mut self) {}
    /// Writes the device's own state into a checkpoint (the transport
    /// saves the queues); a device that cannot be saved says what it is.
    fn save(&self, _w: &mut StateWriter) -> Result<(), CheckpointError> {
        Err(CheckpointError::Unsupported(format!(
            "a virtio device of type {} (only the entropy device is saved so far)",
            self.device_id()
        )))
    }
    /// Reads back what [`VirtioDevice::save`] wrote.
    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        Err(r.malformed(format!(
            "a virtio device of type {} cannot be restored",
            self.device_id()
        )))
    }
}

const REG_MAGIC: u64 = 0x000;
const REG_VERSION: u64 = 0x004;
const REG_DEVICE_ID: u64 = 0x008;
const REG_VENDOR_ID: u64 = 0x00c;
const REG_DEVICE_FEATURES: u64 = 0x010;
const REG_DEVICE_FEATURES_SEL: u64 = 0x014;
const REG_DRIVER_FEATURES: u64 = 0x020;
const REG_DRIVER_FEATURES_SEL: u64 = 0x024;
const REG_QUEUE_SEL: u64 = 0x030;
const REG_QUEUE_NUM_MAX: u64 = 0x034;
const REG_QUEUE_NUM: u64 = 0x038;
const REG_QUEUE_READY: u64 = 0x044;
const REG_QUEUE_NOTIFY: u64 = 0x050;
const REG_INTERRUPT_STATUS: u64 = 0x060;
const REG_INTERRUPT_ACK: u64 = 0x064;
const REG_STATUS: u64 = 0x070;
const REG_QUEUE_DESC_LOW: u64 = 0x080;
const REG_QUEUE_DESC_HIGH: u64 = 0x084;
const REG_QUEUE_DRIVER_LOW: u64 = 0x090;
const REG_QUEUE_DRIVER_HIGH: u64 = 0x094;
const REG_QUEUE_DEVICE_LOW: u64 = 0x0a0;
const REG_QUEUE_DEVICE_HIGH: u64 = 0x0a4;
const REG_SHM_LEN_LOW: u64 = 0x0b0;
const REG_SHM_LEN_HIGH: u64 = 0x0b4;
const REG_SHM_BASE_LOW: u64 = 0x0b8;
const REG_SHM_BASE_HIGH: u64 = 0x0bc;
const REG_CONFIG_GENERATION: u64 = 0x0fc;
const REG_CONFIG: u64 = 0x100;

/// Interrupt status: a used buffer was returned.
const INT_VRING: u32 = 1;
/// Interrupt status: the configuration (or DEVICE_NEEDS_RESET) changed.
const INT_CONFIG: u32 = 2;

/// One virtio-mmio window and the device behind it.
pub struct VirtioMmio {
    dev: Box<dyn VirtioDevice>,
    queues: Vec<Queue>,
    queue_sel: u32,
    device_features_sel: u32,
    driver_features_sel: u32,
    driver_features: u64,
    status: u32,
    interrupt_status: u32,
    notified: u32,
    error: Option<QueueError>,
}

impl std::fmt::Debug for VirtioMmio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtioMmio")
            .field("device_id", &self.dev.device_id())
            .field("status", &self.status)
            .field("interrupt_status", &self.interrupt_status)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl VirtioMmio {
    /// The transport for `dev`, in its reset state.
    pub fn new(dev: Box<dyn VirtioDevice>) -> VirtioMmio {
        assert!(dev.queue_count() <= 32, "notifications are a 32-bit mask");
        let queues = vec![Queue::default(); dev.queue_count()];
        VirtioMmio {
            dev,
            queues,
            queue_sel: 0,
            device_features_sel: 0,
            driver_features_sel: 0,
            driver_features: 0,
            status: 0,
            interrupt_status: 0,
            notified: 0,
            error: None,
        }
    }

    /// The device's virtio ID.
    pub fn device_id(&self) -> u32 {
        self.dev.device_id()
    }

    /// Every feature the device offers.
    pub fn offered_features(&self) -> u64 {
        self.dev.features() | F_VERSION_1 | F_INDIRECT_DESC
    }

    /// The device status register.
    pub fn status(&self) -> u32 {
        self.status
    }

    /// The protocol violation that set DEVICE_NEEDS_RESET, if any.
    pub fn error(&self) -> Option<&QueueError> {
        self.error.as_ref()
    }

    /// The interrupt line (to the PLIC): high while InterruptStatus is not 0.
    pub fn irq(&self) -> bool {
        self.interrupt_status != 0
    }

    /// Resets the transport and the device (a 0 written to Status, or a
    /// board reset).
    pub fn reset(&mut self) {
        self.dev.reset();
        self.queues.iter_mut().for_each(|q| *q = Queue::default());
        self.queue_sel = 0;
        self.device_features_sel = 0;
        self.driver_features_sel = 0;
        self.driver_features = 0;
        self.status = 0;
        self.interrupt_status = 0;
        self.notified = 0;
        self.error = None;
    }

    fn live(&self) -> bool {
        self.status & status::DRIVER_OK != 0 && self.status & status::DEVICE_NEEDS_RESET == 0
    }

    /// Whether [`VirtioMmio::service`] has something to do.
    pub fn needs_service(&self) -> bool {
        self.live() && (self.notified != 0 || self.dev.wants_service())
    }

    /// Processes notified queues (and pending input), raising the
    /// interrupt for returned buffers. A protocol violation sets
    /// DEVICE_NEEDS_RESET and stops the device until it is reset.
    pub fn service(&mut self, mem: &mut dyn GuestMemory) {
        if !self.needs_service() {
            self.dev.flush();
            return;
        }
        let notified = std::mem::take(&mut self.notified);
        let result = self.dev.process(&mut self.queues, notified, mem);
        // Buffers returned before an error still count.
        if self
            .queues
            .iter_mut()
            .fold(false, |any, q| q.take_signal() | any)
        {
            self.interrupt_status |= INT_VRING;
        }
        self.dev.flush();
        if let Err(e) = result {
            self.status |= status::DEVICE_NEEDS_RESET;
            self.interrupt_status |= INT_CONFIG;
            self.error = Some(e);
        }
    }

    /// Passes held device output on to the host.
    pub fn flush(&mut self) {
        self.dev.flush();
    }

    fn queue(&mut self) -> Option<&mut Queue> {
        self.queues.get_mut(self.queue_sel as usize)
    }

    /// A load at `offset` into the window; `None` for an access fault.
    pub fn load(&mut self, offset: u64, size: u64) -> Option<u64> {
        if offset >= REG_CONFIG {
            return self.load_config(offset - REG_CONFIG, size);
        }
        if size != 4 || !offset.is_multiple_of(4) {
            return None;
        }
        let q = self.queues.get(self.queue_sel as usize);
        let v = match offset {
            REG_MAGIC => MAGIC,
            REG_VERSION => 2,
            REG_DEVICE_ID => self.dev.device_id(),
            REG_VENDOR_ID => VENDOR_ID,
            REG_DEVICE_FEATURES => match self.device_features_sel {
                0 => self.offered_features() as u32,
                1 => (self.offered_features() >> 32) as u32,
                _ => 0,
            },
            REG_QUEUE_NUM_MAX => q.map_or(0, |_| u32::from(QUEUE_MAX)),
            REG_QUEUE_READY => q.map_or(0, |q| u32::from(q.ready)),
            REG_INTERRUPT_STATUS => self.interrupt_status,
            REG_STATUS => self.status,
            // No shared memory regions: a length of -1 says so (§4.2.2).
            REG_SHM_LEN_LOW | REG_SHM_LEN_HIGH | REG_SHM_BASE_LOW | REG_SHM_BASE_HIGH => u32::MAX,
            REG_CONFIG_GENERATION => 0,
            _ => 0,
        };
        Some(u64::from(v))
    }

    fn load_config(&self, offset: u64, size: u64) -> Option<u64> {
        if !matches!(size, 1 | 2 | 4 | 8) || !offset.is_multiple_of(size) {
            return None;
        }
        let mut b = [0u8; 8];
        self.dev.read_config(offset, &mut b[..size as usize]);
        Some(u64::from_le_bytes(b))
    }

    /// A store at `offset` into the window; `false` for an access fault.
    pub fn store(&mut self, offset: u64, size: u64, value: u64) -> bool {
        if offset >= REG_CONFIG {
            if !matches!(size, 1 | 2 | 4 | 8) || !offset.is_multiple_of(size) {
                return false;
            }
            let b = value.to_le_bytes();
            self.dev
                .write_config(offset - REG_CONFIG, &b[..size as usize]);
            return true;
        }
        if size != 4 || !offset.is_multiple_of(4) {
            return false;
        }
        let v = value as u32;
        let set_low = |r: &mut u64| *r = (*r & !0xffff_ffff) | u64::from(v);
        let set_high = |r: &mut u64| *r = (*r & 0xffff_ffff) | u64::from(v) << 32;
        match offset {
            REG_DEVICE_FEATURES_SEL => self.device_features_sel = v,
            REG_DRIVER_FEATURES => match self.driver_features_sel {
                0 => set_low(&mut self.driver_features),
                1 => set_high(&mut self.driver_features),
                _ => {}
            },
            REG_DRIVER_FEATURES_SEL => self.driver_features_sel = v,
            REG_QUEUE_SEL => self.queue_sel = v,
            REG_QUEUE_NUM => {
                if let Some(q) = self.queue() {
                    q.size = v as u16;
                }
            }
            REG_QUEUE_READY => {
                if let Some(q) = self.queue() {
                    q.ready = v & 1 != 0;
                }
            }
            REG_QUEUE_NOTIFY => {
                // The index, or with VIRTIO_F_NOTIFICATION_DATA (not offered)
                // the index in the low 16 bits.
                let i = v & 0xffff;
                if (i as usize) < self.queues.len() {
                    self.notified |= 1 << i;
                }
            }
            REG_INTERRUPT_ACK => self.interrupt_status &= !v,
            REG_STATUS => self.write_status(v),
            REG_QUEUE_DESC_LOW => self.queue().map_or((), |q| set_low(&mut q.desc)),
            REG_QUEUE_DESC_HIGH => self.queue().map_or((), |q| set_high(&mut q.desc)),
            REG_QUEUE_DRIVER_LOW => self.queue().map_or((), |q| set_low(&mut q.driver)),
            REG_QUEUE_DRIVER_HIGH => self.queue().map_or((), |q| set_high(&mut q.driver)),
            REG_QUEUE_DEVICE_LOW => self.queue().map_or((), |q| set_low(&mut q.device)),
            REG_QUEUE_DEVICE_HIGH => self.queue().map_or((), |q| set_high(&mut q.device)),
            // Read-only and reserved registers ignore stores.
            _ => {}
        }
        true
    }

    fn write_status(&mut self, v: u32) {
        if v == 0 {
            self.reset();
            return;
        }
        let mut v = v & 0xff & !status::DEVICE_NEEDS_RESET;
        if v & status::FEATURES_OK != 0 && self.status & status::FEATURES_OK == 0 {
            let f = self.driver_features;
            // Features the device did not offer, or a legacy driver: refuse
            // by leaving FEATURES_OK clear (§3.1.1).
            if f & !self.offered_features() != 0 || f & F_VERSION_1 == 0 {
                v &= !status::FEATURES_OK;
            }
        }
        if v & status::DRIVER_OK != 0 && self.status & status::DRIVER_OK == 0 {
            // Buffers may have been made available before DRIVER_OK.
            self.notified = (1u64 << self.queues.len()).wrapping_sub(1) as u32;
        }
        self.status = v | (self.status & status::DEVICE_NEEDS_RESET);
    }
}

impl VirtioMmio {
    /// Writes the transport's registers, its queues and the device's own
    /// state. A device that needs a reset (a protocol error) is not saved.
    pub fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        if let Some(e) = &self.error {
            return Err(CheckpointError::Unsupported(format!(
                "a virtio device that needs a reset ({e})"
            )));
        }
        w.u32(self.dev.device_id());
        for v in [
            self.queue_sel,
            self.device_features_sel,
            self.driver_features_sel,
            self.status,
            self.interrupt_status,
            self.notified,
        ] {
            w.u32(v);
        }
        w.u64(self.driver_features);
        w.count(self.queues.len());
        self.queues.iter().for_each(|q| q.save(w));
        self.dev.save(w)
    }

    /// Reads back what [`VirtioMmio::save`] wrote, into a transport of the
    /// same device.
    pub fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let id = r.u32()?;
        if id != self.dev.device_id() {
            return Err(r.malformed(format!(
                "a virtio device of type {id} where the machine has type {}",
                self.dev.device_id()
            )));
        }
        for v in [
            &mut self.queue_sel,
            &mut self.device_features_sel,
            &mut self.driver_features_sel,
            &mut self.status,
            &mut self.interrupt_status,
            &mut self.notified,
        ] {
            *v = r.u32()?;
        }
        self.driver_features = r.u64()?;
        r.exact_len(self.queues.len(), "virtqueues")?;
        for q in &mut self.queues {
            q.restore(r)?;
        }
        self.error = None;
        self.dev.restore(r)
    }
}

/// On the board: one interrupt line, high while InterruptStatus is not 0,
/// pushed after stores, service, reset and restore (loads do not change
/// it).
impl Device for VirtioMmio {
    fn name(&self) -> &'static str {
        "virtio-mmio"
    }

    fn size(&self) -> u64 {
        VIRTIO_MMIO_SIZE
    }

    fn irq_count(&self) -> usize {
        1
    }

    fn load(&mut self, offset: u64, size: u64, _wires: &mut Wires<'_>) -> Option<u64> {
        VirtioMmio::load(self, offset, size)
    }

    fn store(&mut self, offset: u64, size: u64, value: u64, wires: &mut Wires<'_>) -> bool {
        let ok = VirtioMmio::store(self, offset, size, value);
        wires.set_irq(0, self.irq());
        ok
    }

    /// Processes notified virtqueues.
    fn tick(&mut self, mem: &mut dyn GuestMemory, wires: &mut Wires<'_>) {
        self.service(mem);
        wires.set_irq(0, self.irq());
    }

    fn needs_service(&self) -> bool {
        VirtioMmio::needs_service(self)
    }

    fn reset(&mut self, wires: &mut Wires<'_>) {
        VirtioMmio::reset(self);
        wires.set_irq(0, self.irq());
    }

    fn flush(&mut self) {
        VirtioMmio::flush(self);
    }

    fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        VirtioMmio::save(self, w)
    }

    fn restore(
        &mut self,
        r: &mut StateReader<'_>,
        wires: &mut Wires<'_>,
    ) -> Result<(), CheckpointError> {
        VirtioMmio::restore(self, r)?;
        wires.set_irq(0, self.irq());
        Ok(())
    }

    fn checkpoint_group(&self) -> Option<&'static str> {
        Some("virtio devices")
    }

    fn fdt_name(&self) -> &'static str {
        "virtio_mmio"
    }

    fn fdt_node(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()> {
        w.property_string("compatible", "virtio,mmio")?;
        node.reg(w)?;
        node.interrupts(w)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::queue::tests::{Driver, AVAIL, DESC, RAM, USED};
    use super::*;
    use crate::guest_mem::fake::FakeMem;

    /// Drives a transport through the driver initialisation of §3.1.1 with
    /// every queue at the test rings (one queue per 0x4000 bytes).
    pub fn init(t: &mut VirtioMmio, queues: u32, size: u16) {
        assert!(t.store(REG_STATUS, 4, 0));
        assert!(t.store(REG_STATUS, 4, 1));
        assert!(t.store(REG_STATUS, 4, 3));
        t.store(REG_DRIVER_FEATURES_SEL, 4, 1);
        t.store(REG_DRIVER_FEATURES, 4, 1);
        t.store(REG_DRIVER_FEATURES_SEL, 4, 0);
        t.store(REG_DRIVER_FEATURES, 4, F_INDIRECT_DESC);
        t.store(REG_STATUS, 4, 11);
        assert_eq!(t.load(REG_STATUS, 4), Some(11));
        for i in 0..queues {
            let off = u64::from(i) * 0x4000;
            t.store(REG_QUEUE_SEL, 4, u64::from(i));
            assert_eq!(t.load(REG_QUEUE_NUM_MAX, 4), Some(u64::from(QUEUE_MAX)));
            t.store(REG_QUEUE_NUM, 4, u64::from(size));
            t.store(REG_QUEUE_DESC_LOW, 4, (DESC + off) & 0xffff_ffff);
            t.store(REG_QUEUE_DESC_HIGH, 4, (DESC + off) >> 32);
            t.store(REG_QUEUE_DRIVER_LOW, 4, (AVAIL + off) & 0xffff_ffff);
            t.store(REG_QUEUE_DRIVER_HIGH, 4, (AVAIL + off) >> 32);
            t.store(REG_QUEUE_DEVICE_LOW, 4, (USED + off) & 0xffff_ffff);
            t.store(REG_QUEUE_DEVICE_HIGH, 4, (USED + off) >> 32);
            t.store(REG_QUEUE_READY, 4, 1);
        }
        t.store(REG_STATUS, 4, 15);
        assert_eq!(t.load(REG_STATUS, 4), Some(15));
    }

    pub fn notify(t: &mut VirtioMmio, queue: u64) {
        assert!(t.store(REG_QUEUE_NOTIFY, 4, queue));
    }

    /// Reads and acknowledges the interrupt status.
    pub fn ack(t: &mut VirtioMmio) -> u64 {
        let s = t.load(REG_INTERRUPT_STATUS, 4).unwrap();
        t.store(REG_INTERRUPT_ACK, 4, s);
        s
    }

    pub fn ram() -> FakeMem {
        FakeMem::new(RAM, 0x4_0000)
    }

    #[test]
    fn identity_registers() {
        let mut t = VirtioMmio::new(Box::new(Entropy::new(1)));
        assert_eq!(t.load(REG_MAGIC, 4), Some(0x7472_6976));
        assert_eq!(t.load(REG_VERSION, 4), Some(2));
        assert_eq!(t.load(REG_DEVICE_ID, 4), Some(4));
        assert_eq!(t.load(REG_VENDOR_ID, 4), Some(u64::from(VENDOR_ID)));
        t.store(REG_DEVICE_FEATURES_SEL, 4, 1);
        assert_eq!(t.load(REG_DEVICE_FEATURES, 4), Some(1), "VERSION_1");
        t.store(REG_DEVICE_FEATURES_SEL, 4, 0);
        assert_eq!(t.load(REG_DEVICE_FEATURES, 4), Some(1 << 28));
        t.store(REG_QUEUE_SEL, 4, 1);
        assert_eq!(t.load(REG_QUEUE_NUM_MAX, 4), Some(0), "no queue 1");
        assert_eq!(t.load(REG_SHM_LEN_LOW, 4), Some(0xffff_ffff));
        assert_eq!(t.load(REG_MAGIC, 2), None, "registers are 32-bit");
        assert!(!t.store(REG_STATUS, 8, 1));
    }

    #[test]
    fn features_ok_refused_without_version_1_or_with_unknown_bits() {
        let mut t = VirtioMmio::new(Box::new(Entropy::new(1)));
        t.store(REG_STATUS, 4, 3);
        t.store(REG_STATUS, 4, 11);
        assert_eq!(t.load(REG_STATUS, 4), Some(3), "legacy driver refused");
        t.store(REG_DRIVER_FEATURES_SEL, 4, 1);
        t.store(REG_DRIVER_FEATURES, 4, 1 | 2);
        t.store(REG_STATUS, 4, 11);
        assert_eq!(t.load(REG_STATUS, 4), Some(3), "bit 33 not offered");
        t.store(REG_DRIVER_FEATURES, 4, 1);
        t.store(REG_STATUS, 4, 11);
        assert_eq!(t.load(REG_STATUS, 4), Some(11));
        t.store(REG_STATUS, 4, 0);
        assert_eq!(t.load(REG_STATUS, 4), Some(0));
    }

    #[test]
    fn notification_waits_for_service_then_interrupts() {
        let mut mem = ram();
        let mut t = VirtioMmio::new(Box::new(Entropy::new(7)));
        init(&mut t, 1, 8);
        // DRIVER_OK looks at every queue once: nothing there yet.
        t.service(&mut mem);
        assert!(!t.irq());
        let mut d = Driver::new(8);
        d.offer(&mut mem, 0, &[(RAM + 0x10000, 16, true)]);
        assert!(!t.needs_service());
        notify(&mut t, 0);
        assert!(t.needs_service() && !t.irq());
        t.service(&mut mem);
        assert!(t.irq());
        assert_eq!(d.used(&mut mem), Some((0, 16)));
        assert_eq!(ack(&mut t), 1);
        assert!(!t.irq());
    }

    #[test]
    fn malformed_descriptor_sets_needs_reset_until_reset() {
        let mut mem = ram();
        let mut t = VirtioMmio::new(Box::new(Entropy::new(7)));
        init(&mut t, 1, 8);
        let mut d = Driver::new(8);
        // A buffer outside guest RAM.
        d.offer(&mut mem, 0, &[(0x1000, 16, true)]);
        notify(&mut t, 0);
        t.service(&mut mem);
        let s = t.load(REG_STATUS, 4).unwrap() as u32;
        assert_ne!(s & status::DEVICE_NEEDS_RESET, 0);
        assert!(matches!(t.error(), Some(QueueError::Memory(_))));
        assert_eq!(ack(&mut t), 2, "a configuration-change interrupt");
        // Dead until reset: further notifications do nothing.
        d.offer(&mut mem, 1, &[(RAM + 0x10000, 16, true)]);
        notify(&mut t, 0);
        assert!(!t.needs_service());
        // Writing the status back cannot clear DEVICE_NEEDS_RESET.
        t.store(REG_STATUS, 4, 15);
        assert_ne!(t.status() & status::DEVICE_NEEDS_RESET, 0);
        t.store(REG_STATUS, 4, 0);
        assert_eq!(t.status(), 0);
        assert!(t.error().is_none());
        assert_eq!(t.load(REG_QUEUE_READY, 4), Some(0));
    }

    #[test]
    fn buffers_made_available_before_driver_ok_are_processed() {
        let mut mem = ram();
        let mut t = VirtioMmio::new(Box::new(Entropy::new(7)));
        let mut d = Driver::new(8);
        d.offer(&mut mem, 0, &[(RAM + 0x10000, 4, true)]);
        init(&mut t, 1, 8);
        assert!(t.needs_service());
        t.service(&mut mem);
        assert_eq!(d.used(&mut mem), Some((0, 4)));
    }
}
