//! How devices reach guest memory (DMA): a small trait, so the board does
//! not depend on how RAM is held.

use rvnvmm_mem::PhysMem;

/// An access to guest physical memory that is not all RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("guest memory access of {len} bytes at {paddr:#x} is outside RAM")]
pub struct MemoryFault {
    /// First byte of the failed access.
    pub paddr: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// Guest physical memory as the devices see it.
///
/// Both methods take `&mut self` so an implementation may account DMA
/// traffic. An emulator that caches decoded code must also invalidate it in
/// `write`: device writes do not pass through the harts' stores.
pub trait GuestMemory {
    /// Fills `buf` from `paddr`; an error if any byte is not RAM (then `buf`
    /// is unspecified).
    fn read(&mut self, paddr: u64, buf: &mut [u8]) -> Result<(), MemoryFault>;
    /// Writes `data` at `paddr`; an error if any byte is not RAM (then
    /// nothing is written).
    fn write(&mut self, paddr: u64, data: &[u8]) -> Result<(), MemoryFault>;
}

impl GuestMemory for PhysMem {
    fn read(&mut self, paddr: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
        PhysMem::read(self, paddr, buf)
            .then_some(())
            .ok_or(MemoryFault {
                paddr,
                len: buf.len() as u64,
            })
    }

    fn write(&mut self, paddr: u64, data: &[u8]) -> Result<(), MemoryFault> {
        PhysMem::write(self, paddr, data)
            .then_some(())
            .ok_or(MemoryFault {
                paddr,
                len: data.len() as u64,
            })
    }
}

/// Little-endian helpers over [`GuestMemory`].
pub(crate) trait GuestMemoryExt: GuestMemory {
    fn read_u16(&mut self, paddr: u64) -> Result<u16, MemoryFault> {
        let mut b = [0; 2];
        self.read(paddr, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    fn write_u16(&mut self, paddr: u64, v: u16) -> Result<(), MemoryFault> {
        self.write(paddr, &v.to_le_bytes())
    }
}

impl<M: GuestMemory + ?Sized> GuestMemoryExt for M {}

#[cfg(test)]
pub(crate) mod fake {
    use super::*;

    /// A flat RAM at `base` for tests.
    pub struct FakeMem {
        pub base: u64,
        pub bytes: Vec<u8>,
    }

    impl FakeMem {
        pub fn new(base: u64, size: usize) -> FakeMem {
            FakeMem {
                base,
                bytes: vec![0; size],
            }
        }

        fn range(&self, paddr: u64, len: usize) -> Result<std::ops::Range<usize>, MemoryFault> {
            let fault = MemoryFault {
                paddr,
                len: len as u64,
            };
            let off = paddr.checked_sub(self.base).ok_or(fault)? as usize;
            let end = off.checked_add(len).ok_or(fault)?;
            if end > self.bytes.len() {
                return Err(fault);
            }
            Ok(off..end)
        }

        pub fn put(&mut self, paddr: u64, data: &[u8]) {
            GuestMemory::write(self, paddr, data).unwrap();
        }

        pub fn get(&mut self, paddr: u64, len: usize) -> Vec<u8> {
            let mut v = vec![0; len];
            GuestMemory::read(self, paddr, &mut v).unwrap();
            v
        }
    }

    impl GuestMemory for FakeMem {
        fn read(&mut self, paddr: u64, buf: &mut [u8]) -> Result<(), MemoryFault> {
            let r = self.range(paddr, buf.len())?;
            buf.copy_from_slice(&self.bytes[r]);
            Ok(())
        }

        fn write(&mut self, paddr: u64, data: &[u8]) -> Result<(), MemoryFault> {
            let r = self.range(paddr, data.len())?;
            self.bytes[r].copy_from_slice(data);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn physmem_reads_and_writes_and_faults_outside_ram() {
        let mut m = PhysMem::new(&[(0x8000_0000, 0x2000)]).unwrap();
        let mem: &mut dyn GuestMemory = &mut m;
        mem.write(0x8000_1ffe, &[1, 2]).unwrap();
        let mut b = [0; 2];
        mem.read(0x8000_1ffe, &mut b).unwrap();
        assert_eq!(b, [1, 2]);
        assert_eq!(
            mem.write(0x8000_1fff, &[1, 2]),
            Err(MemoryFault {
                paddr: 0x8000_1fff,
                len: 2
            })
        );
        assert!(mem.read(0x1000, &mut b).is_err());
    }
}
