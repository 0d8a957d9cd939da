//! A device that exists to show what adding one takes: this file and one
//! registration line (`.device(COUNTER_BASE, Counter::default())`). It
//! counts stores to its register and raises its interrupt at each;
//! a store to offset 4 acknowledges (lowers) it.

use crate::device::{Device, FdtNode, Wires};
use rvnvmm_checkpoint::{CheckpointError, StateReader, StateWriter};
use vm_fdt::{FdtWriter, FdtWriterResult};

/// Where the tests put it (free in QEMU `virt`'s map).
pub const COUNTER_BASE: u64 = 0x1002_0000;

/// The counting device.
#[derive(Debug, Default)]
pub struct Counter {
    stores: u32,
    line: bool,
}

impl Device for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }

    fn size(&self) -> u64 {
        0x1000
    }

    fn irq_count(&self) -> usize {
        1
    }

    fn load(&mut self, offset: u64, _size: u64, _wires: &mut Wires<'_>) -> Option<u64> {
        (offset == 0).then_some(u64::from(self.stores))
    }

    fn store(&mut self, offset: u64, _size: u64, _value: u64, wires: &mut Wires<'_>) -> bool {
        match offset {
            0 => {
                self.stores += 1;
                self.line = true;
            }
            4 => self.line = false,
            _ => return false,
        }
        wires.set_irq(0, self.line);
        true
    }

    fn reset(&mut self, wires: &mut Wires<'_>) {
        *self = Counter::default();
        wires.set_irq(0, false);
    }

    fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        w.u32(self.stores);
        w.bool(self.line);
        Ok(())
    }

    fn restore(
        &mut self,
        r: &mut StateReader<'_>,
        wires: &mut Wires<'_>,
    ) -> Result<(), CheckpointError> {
        self.stores = r.u32()?;
        self.line = r.bool()?;
        wires.set_irq(0, self.line);
        Ok(())
    }

    fn fdt_name(&self) -> &'static str {
        "counter"
    }

    fn fdt_node(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()> {
        w.property_string("compatible", "rvnvmm,test-counter")?;
        node.reg(w)?;
        node.interrupts(w)
    }
}
