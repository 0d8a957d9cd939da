//! The software TLB: virtual page to host address in one compare.
//!
//! Each entry maps one 4 KiB guest virtual page to the host address of its
//! physical frame (stored as `host - vaddr_page`, QEMU's "addend"). Loads,
//! stores and fetches have separate tables so permissions need no check on a
//! hit. A miss, a misaligned access or an access to anything but RAM takes the
//! slow path, which walks the page table and refills the entry.

use rvnvmm_mem::sv39::{page_base, page_offset, PAGE_OFFSET_MASK};

/// Entries per table (direct-mapped by virtual page number).
pub const TLB_ENTRIES: usize = 256;

/// One direct-mapped entry. `repr(C)`: translated code reads `tag` and
/// `addend` at fixed offsets.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TlbEntry {
    /// The virtual page address this entry maps; `INVALID` if none.
    pub tag: u64,
    /// Host address of the page minus the virtual page address.
    pub addend: usize,
    /// Guest physical address of the page (for the timing model).
    pub ppage: u64,
}

impl TlbEntry {
    /// A tag no address can match (its low bits are set).
    pub const INVALID: u64 = u64::MAX;
    const EMPTY: TlbEntry = TlbEntry {
        tag: Self::INVALID,
        addend: 0,
        ppage: 0,
    };
}

/// One table of entries.
#[derive(Clone)]
pub struct TlbTable {
    entries: Box<[TlbEntry; TLB_ENTRIES]>,
    /// Some entry came from a page larger than 4 KiB since the last full
    /// flush, so flushing one page must drop its neighbours too.
    huge: bool,
}

impl Default for TlbTable {
    fn default() -> Self {
        TlbTable {
            entries: Box::new([TlbEntry::EMPTY; TLB_ENTRIES]),
            huge: false,
        }
    }
}

impl TlbTable {
    /// The first of the table's [`TLB_ENTRIES`] entries (for translated
    /// code, which looks them up inline as [`lookup`](Self::lookup) does).
    pub(crate) fn entries_ptr(&self) -> *const TlbEntry {
        self.entries.as_ptr()
    }

    #[inline(always)]
    fn index(vaddr: u64) -> usize {
        ((vaddr >> 12) as usize) & (TLB_ENTRIES - 1)
    }

    /// The host address for an access of `size` bytes (a power of two) at
    /// `vaddr`, if the page is cached and the access is naturally aligned.
    #[inline(always)]
    pub fn lookup(&self, vaddr: u64, size: u64) -> Option<*mut u8> {
        let e = &self.entries[Self::index(vaddr)];
        if vaddr & (!PAGE_OFFSET_MASK | (size - 1)) == e.tag {
            Some((vaddr as usize).wrapping_add(e.addend) as *mut u8)
        } else {
            None
        }
    }

    /// As [`lookup`](Self::lookup), also giving the guest physical address
    /// of `vaddr` (for the timing model).
    #[inline(always)]
    pub fn lookup_paddr(&self, vaddr: u64, size: u64) -> Option<(*mut u8, u64)> {
        let e = &self.entries[Self::index(vaddr)];
        if vaddr & (!PAGE_OFFSET_MASK | (size - 1)) == e.tag {
            Some((
                (vaddr as usize).wrapping_add(e.addend) as *mut u8,
                e.ppage | page_offset(vaddr),
            ))
        } else {
            None
        }
    }

    /// Caches the mapping of the page holding `vaddr` to host page `host`.
    pub fn fill(&mut self, vaddr: u64, host: *mut u8, ppage: u64) {
        let page = page_base(vaddr);
        self.entries[Self::index(vaddr)] = TlbEntry {
            tag: page,
            addend: (host as usize).wrapping_sub(page as usize),
            ppage,
        };
    }

    /// As [`fill`](Self::fill) for a 4 KiB piece of a page of `1 << page_shift`
    /// bytes (a superpage or Svnapot range).
    pub fn fill_sized(&mut self, vaddr: u64, host: *mut u8, ppage: u64, page_shift: u32) {
        self.fill(vaddr, host, ppage);
        self.huge |= page_shift > 12;
    }

    /// Drops the entry for the page holding `vaddr`, and every other piece
    /// of the large page that may hold it (anything in its 1 GiB region)
    /// once the table has cached a large page.
    pub fn flush_page(&mut self, vaddr: u64) {
        if self.huge {
            for e in self.entries.iter_mut() {
                if e.tag != TlbEntry::INVALID && (e.tag ^ vaddr) >> 30 == 0 {
                    *e = TlbEntry::EMPTY;
                }
            }
            return;
        }
        let e = &mut self.entries[Self::index(vaddr)];
        if e.tag == page_base(vaddr) {
            *e = TlbEntry::EMPTY;
        }
    }

    /// Drops the entries of the `1 << page_shift`-byte page at `vbase`
    /// (every 4 KiB piece of a large page).
    pub fn flush_range(&mut self, vbase: u64, page_shift: u32) {
        if page_shift <= 12 {
            let e = &mut self.entries[Self::index(vbase)];
            if e.tag == page_base(vbase) {
                *e = TlbEntry::EMPTY;
            }
            return;
        }
        for e in self.entries.iter_mut() {
            if e.tag != TlbEntry::INVALID && (e.tag ^ vbase) >> page_shift == 0 {
                *e = TlbEntry::EMPTY;
            }
        }
    }

    /// Drops every entry whose physical page is `ppage`.
    pub fn flush_ppage(&mut self, ppage: u64) {
        for e in self.entries.iter_mut() {
            if e.tag != TlbEntry::INVALID && e.ppage == ppage {
                *e = TlbEntry::EMPTY;
            }
        }
    }

    /// Drops every entry.
    pub fn flush(&mut self) {
        self.entries.fill(TlbEntry::EMPTY);
        self.huge = false;
    }
}

/// The three tables of one hart.
#[derive(Clone, Default)]
pub struct Tlb {
    /// Loads.
    pub read: TlbTable,
    /// Stores and AMOs (never holds a page that contains decoded code).
    pub write: TlbTable,
    /// Instruction fetch.
    pub exec: TlbTable,
}

impl Tlb {
    /// Drops every entry (sfence.vma with no arguments, or a kernel's change
    /// of mappings).
    pub fn flush(&mut self) {
        self.read.flush();
        self.write.flush();
        self.exec.flush();
    }

    /// Drops the entries for one virtual page.
    pub fn flush_page(&mut self, vaddr: u64) {
        self.read.flush_page(vaddr);
        self.write.flush_page(vaddr);
        self.exec.flush_page(vaddr);
    }
}

/// Most translation contexts kept besides the active one.
const SAVED_CONTEXTS: usize = 6;

/// The TLBs of the translation contexts the hart is not in. A context is
/// what decides a translation besides the page tables: the fetch privilege,
/// the data privilege (MPRV) and SUM/MXR. Switching context swaps whole
/// tables (three pointers), so a trap or `sret` keeps both sides' entries
/// and the hot path never looks at the context.
#[derive(Default)]
pub(crate) struct TlbContexts {
    /// The key of the context whose tables are the hart's active [`Tlb`].
    pub active: u8,
    /// Inactive contexts, least recently used first.
    saved: Vec<(u8, Tlb)>,
}

impl TlbContexts {
    /// Makes `key` the active context: `tlb` is swapped with its saved
    /// tables, or with empty ones if it has none.
    pub fn switch(&mut self, tlb: &mut Tlb, key: u8) {
        let next = match self.saved.iter().position(|(k, _)| *k == key) {
            Some(i) => self.saved.remove(i).1,
            None if self.saved.len() >= SAVED_CONTEXTS => {
                let mut t = self.saved.remove(0).1;
                t.flush();
                t
            }
            None => Tlb::default(),
        };
        let old = std::mem::replace(tlb, next);
        self.saved.push((self.active, old));
        self.active = key;
    }

    /// The saved tables of every inactive context.
    pub fn saved_mut(&mut self) -> impl Iterator<Item = &mut Tlb> {
        self.saved.iter_mut().map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_requires_alignment_and_same_page() {
        let mut t = TlbTable::default();
        let mut page = [0u8; 4096];
        t.fill(0x1_2000, page.as_mut_ptr(), 0x8000_0000);
        assert_eq!(
            t.lookup(0x1_2008, 8),
            Some(page.as_mut_ptr().wrapping_add(8))
        );
        assert!(t.lookup(0x1_2ffc, 4).is_some());
        assert_eq!(t.lookup(0x1_2ffd, 4), None, "misaligned goes slow");
        assert_eq!(t.lookup(0x1_3000, 1), None, "other page");
        assert!(t.lookup(0x1_2fff, 1).is_some());
        t.flush_page(0x1_2abc);
        assert_eq!(t.lookup(0x1_2008, 8), None);
    }

    #[test]
    fn flush_range_drops_every_piece_of_a_large_page() {
        let mut t = TlbTable::default();
        let mut page = [0u8; 4096];
        for va in [0x20_0000u64, 0x20_1000, 0x3f_f000, 0x40_0000] {
            t.fill_sized(va, page.as_mut_ptr(), 0x8000_0000, 21);
        }
        t.flush_range(0x20_0000, 21);
        assert_eq!(t.lookup(0x20_0000, 1), None);
        assert_eq!(t.lookup(0x20_1000, 1), None);
        assert_eq!(t.lookup(0x3f_f000, 1), None);
        assert!(
            t.lookup(0x40_0000, 1).is_some(),
            "the next 2 MiB page stays"
        );
        t.fill(0x5000, page.as_mut_ptr(), 0x8000_0000);
        t.flush_range(0x6000, 12);
        assert!(t.lookup(0x5000, 1).is_some());
        t.flush_range(0x5000, 12);
        assert_eq!(t.lookup(0x5000, 1), None);
    }

    #[test]
    fn empty_never_hits() {
        let t = TlbTable::default();
        for a in [0u64, 0xfff, !0xfff, u64::MAX] {
            assert_eq!(t.lookup(a, 1), None);
        }
    }
}
