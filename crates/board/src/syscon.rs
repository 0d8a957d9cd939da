//! The SiFive test device (`sifive,test0`), which QEMU `virt` uses as its
//! syscon for power-off and reboot: one 32-bit register at offset 0.
//!
//! | value written | meaning |
//! |---|---|
//! | `0x5555` | power off, exit status 0 |
//! | `code << 16 \| 0x3333` | power off, exit status `code` |
//! | `0x7777` | reboot |
//!
//! Other values are ignored; the register reads 0 (Linux's
//! `syscon-poweroff` does a read-modify-write).

use crate::device::{Device, ExitRequest, FdtNode, Wires};
use vm_fdt::{FdtWriter, FdtWriterResult};

/// Bytes of the register window.
pub const SYSCON_SIZE: u64 = 0x1000;
/// The power-off value (`syscon-poweroff`'s `value`).
pub const POWEROFF: u32 = 0x5555;
/// The failure value; the exit status goes in bits 31:16.
pub const FAIL: u32 = 0x3333;
/// The reboot value (`syscon-reboot`'s `value`).
pub const REBOOT: u32 = 0x7777;

/// The test/syscon device: stateless, a command goes to the machine at
/// once ([`Wires::request_exit`]).
#[derive(Clone, Debug, Default)]
pub struct Syscon;

/// The request a 32-bit value written at offset 0 makes, if any.
pub fn command(value: u32) -> Option<ExitRequest> {
    match value & 0xffff {
        POWEROFF => Some(ExitRequest::PowerOff(0)),
        FAIL => Some(ExitRequest::PowerOff((value >> 16) as u16)),
        REBOOT => Some(ExitRequest::Reboot),
        _ => None,
    }
}

impl Device for Syscon {
    fn name(&self) -> &'static str {
        "syscon"
    }

    fn size(&self) -> u64 {
        SYSCON_SIZE
    }

    /// The register reads 0.
    fn load(&mut self, _offset: u64, _size: u64, _wires: &mut Wires<'_>) -> Option<u64> {
        Some(0)
    }

    /// 32-bit (or wider) stores at offset 0 are commands.
    fn store(&mut self, offset: u64, size: u64, value: u64, wires: &mut Wires<'_>) -> bool {
        if offset == 0 && size >= 4 {
            if let Some(req) = command(value as u32) {
                wires.request_exit(req);
            }
        }
        true
    }

    fn reset(&mut self, _wires: &mut Wires<'_>) {}

    fn fdt_name(&self) -> &'static str {
        "test"
    }

    fn fdt_node(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()> {
        w.property_string_list(
            "compatible",
            vec![
                "sifive,test1".into(),
                "sifive,test0".into(),
                "syscon".into(),
            ],
        )?;
        node.reg(w)?;
        w.property_phandle(node.phandle)
    }

    /// `poweroff` and `reboot` through its register.
    fn fdt_root(&self, w: &mut FdtWriter, node: &FdtNode<'_>) -> FdtWriterResult<()> {
        for (name, value) in [("poweroff", POWEROFF), ("reboot", REBOOT)] {
            let n = w.begin_node(name)?;
            w.property_string("compatible", &format!("syscon-{name}"))?;
            w.property_u32("regmap", node.phandle)?;
            w.property_u32("offset", 0)?;
            w.property_u32("value", value)?;
            w.end_node(n)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(command(0x5555), Some(ExitRequest::PowerOff(0)));
        assert_eq!(command((3 << 16) | 0x3333), Some(ExitRequest::PowerOff(3)));
        assert_eq!(command(0x7777), Some(ExitRequest::Reboot));
        assert_eq!(command(0x1234), None);
    }
}
