//! Host-backed guest physical RAM.

use crate::sv39::{page_base, PAGE_SIZE};
use rvnvmm_checkpoint::{read_pages, write_pages, CheckpointError, Sections};
use std::ptr::NonNull;

/// Errors creating guest memory.
#[derive(Debug, thiserror::Error)]
pub enum MemError {
    /// The host refused to reserve address space for a region.
    #[error("cannot reserve {size:#x} bytes of host memory for guest RAM at {base:#x}: {source} (lower the region size in the config)")]
    Reserve {
        /// Guest physical base.
        base: u64,
        /// Region size in bytes.
        size: u64,
        /// The host's error.
        source: std::io::Error,
    },
    /// Two regions overlap or a region is empty or unaligned.
    #[error("bad RAM region {base:#x}+{size:#x}: {why}")]
    BadRegion {
        /// Guest physical base.
        base: u64,
        /// Region size in bytes.
        size: u64,
        /// What is wrong.
        why: &'static str,
    },
}

/// One contiguous range of guest RAM and the host memory behind it.
#[derive(Debug)]
pub struct RamRegion {
    /// Guest physical address of the first byte.
    pub base: u64,
    /// Length in bytes (a multiple of 4 KiB).
    pub size: u64,
    host: NonNull<u8>,
}

impl Drop for RamRegion {
    fn drop(&mut self) {
        // SAFETY: `host` was returned by mmap for exactly `size` bytes and is
        // unmapped once, here.
        unsafe {
            libc::munmap(self.host.as_ptr().cast(), self.size as usize);
        }
    }
}

/// All guest RAM. Addresses outside every region are not memory (MMIO or a
/// bus error, decided by the caller).
#[derive(Debug, Default)]
pub struct PhysMem {
    regions: Vec<RamRegion>,
    /// The persistence domain of the NVMM region, when a crash may be
    /// injected (`crate::persist`).
    pub(crate) domain: Option<Box<crate::persist::Domain>>,
}

// SAFETY: the host memory is owned by this value alone; raw pointers are only
// handed out through methods that borrow `self`.
unsafe impl Send for PhysMem {}

impl PhysMem {
    /// The bytes of region `i` (see [`PhysMem::regions`]).
    pub fn region_bytes(&self, i: usize) -> &[u8] {
        let r = &self.regions[i];
        // SAFETY: `host` maps `size` readable bytes for as long as the
        // region lives, and `&self` keeps every write out meanwhile.
        unsafe { std::slice::from_raw_parts(r.host.as_ptr(), r.size as usize) }
    }

    /// Creates RAM for the given `(base, size)` ranges, all zero.
    pub fn new(ranges: &[(u64, u64)]) -> Result<PhysMem, MemError> {
        let mut mem = PhysMem::default();
        for &(base, size) in ranges {
            mem.add_region(base, size)?;
        }
        Ok(mem)
    }

    /// Adds a zero-filled RAM region.
    pub fn add_region(&mut self, base: u64, size: u64) -> Result<(), MemError> {
        let bad = |why| MemError::BadRegion { base, size, why };
        if size == 0 || !size.is_multiple_of(PAGE_SIZE) || !base.is_multiple_of(PAGE_SIZE) {
            return Err(bad("size and base must be non-zero multiples of 4 KiB"));
        }
        let end = base.checked_add(size).ok_or_else(|| bad("wraps around"))?;
        if self
            .regions
            .iter()
            .any(|r| base < r.base + r.size && r.base < end)
        {
            return Err(bad("overlaps another RAM region"));
        }
        // SAFETY: an anonymous private mapping with no fixed address; the
        // result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(MemError::Reserve {
                base,
                size,
                source: std::io::Error::last_os_error(),
            });
        }
        let host = NonNull::new(p.cast::<u8>()).expect("mmap returned null");
        self.regions.push(RamRegion { base, size, host });
        self.regions.sort_by_key(|r| r.base);
        Ok(())
    }

    /// The RAM regions, sorted by base address.
    pub fn regions(&self) -> &[RamRegion] {
        &self.regions
    }

    /// The host address of guest physical `paddr` if `len` bytes from it lie
    /// inside one RAM region.
    #[inline]
    pub fn host_ptr(&self, paddr: u64, len: u64) -> Option<*mut u8> {
        for r in &self.regions {
            let off = paddr.wrapping_sub(r.base);
            if off < r.size && len <= r.size - off {
                // SAFETY: off + len <= size, so the pointer stays inside the
                // mapping.
                return Some(unsafe { r.host.as_ptr().add(off as usize) });
            }
        }
        None
    }

    /// Whether `len` bytes at `paddr` are RAM.
    pub fn is_ram(&self, paddr: u64, len: u64) -> bool {
        self.host_ptr(paddr, len).is_some()
    }

    /// Reads `buf.len()` bytes at `paddr`; false if not all of it is RAM.
    pub fn read(&self, paddr: u64, buf: &mut [u8]) -> bool {
        match self.host_ptr(paddr, buf.len() as u64) {
            Some(p) => {
                // SAFETY: host_ptr checked the whole range is inside a mapping
                // that does not alias `buf` (guest RAM is never a Rust slice).
                unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) };
                true
            }
            None => false,
        }
    }

    /// Writes `data` at `paddr`; false if not all of it is RAM.
    pub fn write(&mut self, paddr: u64, data: &[u8]) -> bool {
        match self.host_ptr(paddr, data.len() as u64) {
            Some(p) => {
                // SAFETY: as in `read`.
                unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
                if self.domain.is_some() {
                    self.trace_write(paddr, data.len() as u64);
                }
                true
            }
            None => false,
        }
    }

    /// Fills `len` bytes at `paddr` with zero; false if not all of it is RAM.
    pub fn zero(&mut self, paddr: u64, len: u64) -> bool {
        match self.host_ptr(paddr, len) {
            Some(p) => {
                // SAFETY: as in `read`.
                unsafe { std::ptr::write_bytes(p, 0, len as usize) };
                if self.domain.is_some() {
                    self.trace_write(paddr, len);
                }
                true
            }
            None => false,
        }
    }

    /// Reads a little-endian u64 (for page-table entries).
    pub fn read_u64(&self, paddr: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        self.read(paddr, &mut b).then(|| u64::from_le_bytes(b))
    }

    /// Writes a little-endian u64; false if not RAM.
    pub fn write_u64(&mut self, paddr: u64, v: u64) -> bool {
        self.write(paddr, &v.to_le_bytes())
    }

    /// Gives a 4 KiB page back to the host: it reads as zero afterwards and
    /// is private anonymous memory again, even if it was backed by a file.
    pub fn discard_page(&mut self, paddr: u64) {
        if let Some(p) = self.host_ptr(page_base(paddr), PAGE_SIZE) {
            // SAFETY: the page lies inside one of our mappings; replacing it
            // with a fresh private anonymous page touches nothing else.
            unsafe {
                libc::mmap(
                    p.cast(),
                    PAGE_SIZE as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if self.domain.is_some() {
                self.trace_write(page_base(paddr), PAGE_SIZE);
            }
        }
    }

    /// Backs the RAM page at `paddr` with page `offset` of the host file
    /// `fd`, shared: stores reach the file and other mappings of it, and
    /// writes to the file are seen (a MAP_SHARED mapping, shared across
    /// `fork` too). Undone by [`discard_page`](Self::discard_page).
    pub fn share_file_page(
        &mut self,
        paddr: u64,
        fd: i32,
        offset: u64,
        writable: bool,
    ) -> std::io::Result<()> {
        let p = self
            .host_ptr(page_base(paddr), PAGE_SIZE)
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EFAULT))?;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: MAP_FIXED over a page inside our own mapping; the result
        // is checked.
        let r = unsafe {
            libc::mmap(
                p.cast(),
                PAGE_SIZE as usize,
                prot,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                offset as i64,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        if self.domain.is_some() {
            // The page holds the file's bytes now.
            self.trace_write(page_base(paddr), PAGE_SIZE);
        }
        Ok(())
    }
}

/// The name of the checkpoint section holding the RAM region at `base`.
pub fn memory_section(base: u64) -> String {
    format!("memory@{base:#x}")
}

impl PhysMem {
    /// Writes every region into a checkpoint section of its own
    /// ([`memory_section`]): the pages that are not all zero, deflated.
    pub fn save(&self, sections: &mut Sections) {
        for (i, r) in self.regions.iter().enumerate() {
            sections.write(memory_section(r.base), |w| {
                write_pages(w, self.region_bytes(i))
            });
        }
    }

    /// Reads the regions back from a checkpoint into RAM of the same map
    /// (zero, as built).
    pub fn restore(&mut self, sections: &Sections) -> Result<(), CheckpointError> {
        let regions: Vec<(u64, u64)> = self.regions.iter().map(|r| (r.base, r.size)).collect();
        for (base, size) in regions {
            let name = memory_section(base);
            sections.read(&name, |r| {
                read_pages(r, size as usize, |off, page| {
                    let ok = self.write(base + off as u64, page);
                    debug_assert!(ok, "a page inside the region");
                })
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_inside_and_outside() {
        let mut m = PhysMem::new(&[(0x8000_0000, 0x10_0000)]).unwrap();
        assert!(m.write_u64(0x8000_0008, 0x1122_3344_5566_7788));
        assert_eq!(m.read_u64(0x8000_0008), Some(0x1122_3344_5566_7788));
        assert_eq!(m.read_u64(0x7fff_fff8), None);
        // Straddling the end is not RAM.
        assert_eq!(m.read_u64(0x800f_fffc), None);
        assert!(!m.write_u64(0x8010_0000, 1));
    }

    #[test]
    fn overlapping_regions_rejected() {
        let mut m = PhysMem::new(&[(0x8000_0000, 0x2000)]).unwrap();
        assert!(m.add_region(0x8000_1000, 0x1000).is_err());
        assert!(m.add_region(0x8000_2000, 0x1000).is_ok());
        assert!(m.add_region(0x8000_3000, 0x100).is_err());
    }

    #[test]
    fn discard_zeroes() {
        let mut m = PhysMem::new(&[(0x1000, 0x2000)]).unwrap();
        m.write_u64(0x1010, 5);
        m.discard_page(0x1010);
        assert_eq!(m.read_u64(0x1010), Some(0));
    }

    #[test]
    fn a_checkpoint_restores_every_region() {
        let mut m = PhysMem::new(&[(0x1000, 0x4000), (0x10_0000, 0x2000)]).unwrap();
        m.write_u64(0x1008, 0xdead_beef);
        m.write_u64(0x4ff8, 7);
        m.write_u64(0x10_1000, 9);
        let mut s = Sections::new();
        m.save(&mut s);
        let mut back = PhysMem::new(&[(0x1000, 0x4000), (0x10_0000, 0x2000)]).unwrap();
        back.restore(&s).unwrap();
        for i in 0..2 {
            assert_eq!(back.region_bytes(i), m.region_bytes(i));
        }
        // RAM of another map is refused.
        let mut other = PhysMem::new(&[(0x1000, 0x8000), (0x10_0000, 0x2000)]).unwrap();
        assert!(other.restore(&s).is_err());
    }
}
