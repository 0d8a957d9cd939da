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

/// Bytes of the register window.
pub const SYSCON_SIZE: u64 = 0x1000;
/// The power-off value (`syscon-poweroff`'s `value`).
pub const POWEROFF: u32 = 0x5555;
/// The failure value; the exit status goes in bits 31:16.
pub const FAIL: u32 = 0x3333;
/// The reboot value (`syscon-reboot`'s `value`).
pub const REBOOT: u32 = 0x7777;

/// What the guest asked the machine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitRequest {
    /// Stop, with this exit status (0 for a plain power-off).
    PowerOff(u16),
    /// Reset the machine and boot again.
    Reboot,
}

/// The test/syscon device.
#[derive(Clone, Debug, Default)]
pub struct Syscon {
    request: Option<ExitRequest>,
}

impl Syscon {
    /// The request written last and not yet taken.
    pub fn take_request(&mut self) -> Option<ExitRequest> {
        self.request.take()
    }

    /// Whether a request waits.
    pub fn has_request(&self) -> bool {
        self.request.is_some()
    }

    /// A load: the register reads 0.
    pub fn load(&self, offset: u64, size: u64) -> Option<u64> {
        (offset < SYSCON_SIZE && matches!(size, 1 | 2 | 4 | 8)).then_some(0)
    }

    /// A store; 32-bit stores at offset 0 are commands.
    pub fn store(&mut self, offset: u64, size: u64, value: u64) -> bool {
        if offset >= SYSCON_SIZE || !matches!(size, 1 | 2 | 4 | 8) {
            return false;
        }
        if offset == 0 && size >= 4 {
            let v = value as u32;
            self.request = match v & 0xffff {
                POWEROFF => Some(ExitRequest::PowerOff(0)),
                FAIL => Some(ExitRequest::PowerOff((v >> 16) as u16)),
                REBOOT => Some(ExitRequest::Reboot),
                _ => self.request,
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        let mut s = Syscon::default();
        assert_eq!(s.take_request(), None);
        assert!(s.store(0, 4, 0x5555));
        assert_eq!(s.take_request(), Some(ExitRequest::PowerOff(0)));
        assert_eq!(s.take_request(), None);
        assert!(s.store(0, 4, (3 << 16) | 0x3333));
        assert_eq!(s.take_request(), Some(ExitRequest::PowerOff(3)));
        assert!(s.store(0, 4, 0x7777));
        assert!(s.has_request());
        assert_eq!(s.take_request(), Some(ExitRequest::Reboot));
        assert!(s.store(0, 4, 0x1234));
        assert!(s.store(0, 1, 0x55));
        assert!(s.store(8, 4, 0x5555));
        assert_eq!(
            s.take_request(),
            None,
            "other values and offsets do nothing"
        );
        assert_eq!(s.load(0, 4), Some(0));
        assert!(!s.store(SYSCON_SIZE, 4, 0x5555));
    }
}
