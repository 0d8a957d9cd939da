//! The Sv39 virtual-memory format: a three-level page table of 8-byte
//! entries, 4 KiB pages and 2 MiB / 1 GiB superpages (privileged spec §10.4).

use crate::PhysMem;

/// Bytes in a base page.
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;

/// log2 of [`PAGE_SIZE`].
pub const PAGE_SHIFT: u32 = 12;

/// The offset bits of an address within its base page.
pub const PAGE_OFFSET_MASK: u64 = PAGE_SIZE - 1;

/// The address of the base page `addr` lies in.
#[inline(always)]
pub const fn page_base(addr: u64) -> u64 {
    addr & !PAGE_OFFSET_MASK
}

/// `addr`'s offset within its base page.
#[inline(always)]
pub const fn page_offset(addr: u64) -> u64 {
    addr & PAGE_OFFSET_MASK
}

/// Kinds of memory access, for permission checks and fault causes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load (or the read of an AMO: AMOs check as stores).
    Read,
    /// A store or AMO.
    Write,
    /// An instruction fetch.
    Exec,
}

/// A failed translation: the architectural page fault for the access, or an
/// access fault when a page-table entry lies outside RAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Page fault (cause 12/13/15 depending on the access).
    Page,
    /// Access fault (cause 1/5/7): the walk touched memory that is not RAM.
    Access,
}

/// Page-table entry bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pte(pub u64);

impl Pte {
    /// Valid.
    pub const V: u64 = 1 << 0;
    /// Readable.
    pub const R: u64 = 1 << 1;
    /// Writable.
    pub const W: u64 = 1 << 2;
    /// Executable.
    pub const X: u64 = 1 << 3;
    /// User-accessible.
    pub const U: u64 = 1 << 4;
    /// Global.
    pub const G: u64 = 1 << 5;
    /// Accessed.
    pub const A: u64 = 1 << 6;
    /// Dirty.
    pub const D: u64 = 1 << 7;
    /// Svnapot: the entry is part of a naturally aligned power-of-two range.
    pub const N: u64 = 1 << 63;

    /// A leaf entry mapping physical address `paddr` with permission bits `flags`.
    pub fn leaf(paddr: u64, flags: u64) -> Pte {
        Pte(((paddr >> 12) << 10) | flags | Pte::V)
    }
    /// Whether V is set.
    pub fn valid(self) -> bool {
        self.0 & Pte::V != 0
    }
    /// Whether any of R/W/X is set (a leaf rather than a pointer).
    pub fn is_leaf(self) -> bool {
        self.0 & (Pte::R | Pte::W | Pte::X) != 0
    }
    /// The physical address the entry points at.
    pub fn paddr(self) -> u64 {
        ((self.0 >> 10) & ((1 << 44) - 1)) << 12
    }
    /// The low flag bits (V..D).
    pub fn flags(self) -> u64 {
        self.0 & 0xff
    }
}

/// A successful translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The physical address of the accessed byte.
    pub paddr: u64,
    /// Log2 of the size of the page that mapped it: 12, 21 or 30, or 16 for
    /// a 64 KiB Svnapot range.
    pub page_shift: u32,
    /// The leaf entry's flag bits after the A/D update.
    pub flags: u64,
}

/// Who is accessing memory, as far as translation cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requester {
    /// True in U-mode.
    pub user: bool,
    /// mstatus.SUM: S-mode may touch U pages.
    pub sum: bool,
    /// mstatus.MXR: loads may read execute-only pages.
    pub mxr: bool,
}

/// Whether `vaddr` is a canonical Sv39 address (bits 63..39 copy bit 38).
#[inline]
pub fn canonical(vaddr: u64) -> bool {
    let top = (vaddr as i64) >> 38;
    top == 0 || top == -1
}

fn vpn(vaddr: u64, level: u32) -> u64 {
    (vaddr >> (12 + 9 * level)) & 0x1ff
}

/// Translates `vaddr` through the table rooted at `root` (a physical
/// address), checking permissions for `access` and setting A (and D on a
/// write) in the leaf as hardware with Svadu does.
pub fn translate(
    mem: &mut PhysMem,
    root: u64,
    vaddr: u64,
    access: Access,
    who: Requester,
) -> Result<Translation, Fault> {
    translate_with(mem, root, vaddr, access, who, &mut |_, _| true)
}

/// Bits 60..54 of a PTE are reserved and 62..61 belong to Svpbmt, which is
/// not implemented: a leaf or pointer with any of them set is a page fault.
const RESERVED: u64 = 0x7f << 54 | 3 << 61;

/// As [`translate`], asking `pte_ok(paddr, write)` before the walker reads
/// (`write` false) or updates (`write` true) the 8-byte entry at `paddr`, as
/// PMP must for these implicit accesses: a refusal is an access fault.
pub fn translate_with(
    mem: &mut PhysMem,
    root: u64,
    vaddr: u64,
    access: Access,
    who: Requester,
    pte_ok: &mut dyn FnMut(u64, bool) -> bool,
) -> Result<Translation, Fault> {
    if !canonical(vaddr) {
        return Err(Fault::Page);
    }
    let mut table = root;
    for level in (0..3).rev() {
        let pte_addr = table + vpn(vaddr, level) * 8;
        if !pte_ok(pte_addr, false) {
            return Err(Fault::Access);
        }
        let pte = Pte(mem.read_u64(pte_addr).ok_or(Fault::Access)?);
        if !pte.valid() || (pte.0 & Pte::W != 0 && pte.0 & Pte::R == 0) || pte.0 & RESERVED != 0 {
            return Err(Fault::Page);
        }
        if !pte.is_leaf() {
            if pte.0 & (Pte::A | Pte::D | Pte::U | Pte::N) != 0 {
                return Err(Fault::Page);
            }
            table = pte.paddr();
            continue;
        }
        let allowed = match access {
            Access::Read => pte.0 & Pte::R != 0 || (who.mxr && pte.0 & Pte::X != 0),
            Access::Write => pte.0 & Pte::W != 0,
            Access::Exec => pte.0 & Pte::X != 0,
        };
        let user_page = pte.0 & Pte::U != 0;
        let mode_ok = if who.user {
            user_page
        } else {
            !user_page || (who.sum && access != Access::Exec)
        };
        if !allowed || !mode_ok {
            return Err(Fault::Page);
        }
        let mut shift = 12 + 9 * level;
        let mut base = pte.paddr();
        if level > 0 && (base >> 12) & ((1 << (9 * level)) - 1) != 0 {
            return Err(Fault::Page); // misaligned superpage
        }
        if pte.0 & Pte::N != 0 {
            // Svnapot: only 64 KiB at level 0 is defined.
            if level != 0 || (pte.0 >> 10) & 0xf != 0x8 {
                return Err(Fault::Page);
            }
            base = (base & !0xffff) | (vaddr & 0xf000);
            shift = 16;
        }
        let mut new = pte.0 | Pte::A;
        if access == Access::Write {
            new |= Pte::D;
        }
        if new != pte.0 && (!pte_ok(pte_addr, true) || !mem.write_u64(pte_addr, new)) {
            return Err(Fault::Access);
        }
        // A NAPOT base already holds the 4 KiB page within the range.
        let offset_mask = if shift == 16 {
            PAGE_OFFSET_MASK
        } else {
            (1u64 << shift) - 1
        };
        return Ok(Translation {
            paddr: (base & !offset_mask) | (vaddr & offset_mask),
            page_shift: shift,
            flags: new & 0xff,
        });
    }
    Err(Fault::Page)
}

/// Finds the leaf entry for `vaddr`: its physical address and value, and the
/// level it sits at (0 = 4 KiB page). `None` if no valid leaf maps it.
pub fn find_leaf(mem: &PhysMem, root: u64, vaddr: u64) -> Option<(u64, Pte, u32)> {
    let mut table = root;
    for level in (0..3).rev() {
        let pte_addr = table + vpn(vaddr, level) * 8;
        let pte = Pte(mem.read_u64(pte_addr)?);
        if !pte.valid() {
            return None;
        }
        if pte.is_leaf() {
            return Some((pte_addr, pte, level));
        }
        table = pte.paddr();
    }
    None
}

/// Calls `each(vaddr, pte, level)` for every valid leaf of the table at
/// `root`, in ascending virtual address; empty subtrees cost one read of
/// their entry. A table outside RAM is skipped.
pub fn for_each_leaf(mem: &PhysMem, root: u64, each: &mut dyn FnMut(u64, Pte, u32)) {
    fn walk(mem: &PhysMem, table: u64, level: u32, va: u64, each: &mut dyn FnMut(u64, Pte, u32)) {
        for i in 0..512u64 {
            let Some(raw) = mem.read_u64(table + i * 8) else {
                return;
            };
            let pte = Pte(raw);
            if !pte.valid() {
                continue;
            }
            let at = va | i << (PAGE_SHIFT + 9 * level);
            if pte.is_leaf() {
                // Sign-extend bit 38, as the hardware checks it.
                each(((at << 25) as i64 >> 25) as u64, pte, level);
            } else if level > 0 {
                walk(mem, pte.paddr(), level - 1, at, each);
            }
        }
    }
    walk(mem, root, 2, 0, each);
}

/// The physical address of the entry at `level` (0: 4 KiB, 1: 2 MiB) that
/// maps `vaddr`, creating the tables above it with frames from
/// `alloc_table` (zeroed 4 KiB frames). `None` when a frame could not be
/// allocated or a leaf above `level` is in the way.
pub fn entry_at(
    mem: &mut PhysMem,
    root: u64,
    vaddr: u64,
    level: u32,
    alloc_table: &mut dyn FnMut(&mut PhysMem) -> Option<u64>,
) -> Option<u64> {
    let mut table = root;
    for l in (level + 1..3).rev() {
        let pte_addr = table + vpn(vaddr, l) * 8;
        let cur = Pte(mem.read_u64(pte_addr)?);
        if cur.valid() {
            if cur.is_leaf() {
                return None;
            }
            table = cur.paddr();
        } else {
            let frame = alloc_table(mem)?;
            mem.write_u64(
                pte_addr,
                Pte::leaf(frame, 0).0 & !(Pte::R | Pte::W | Pte::X),
            );
            table = frame;
        }
    }
    Some(table + vpn(vaddr, level) * 8)
}

/// The physical frame of the 4 KiB page holding `vaddr` in the leaf `pte`
/// found at `level` (as [`find_leaf`] gives it): inside a superpage, or
/// inside a 64 KiB Svnapot range, whose entries all hold the range's base
/// with PPN[3:0] = 1000.
pub fn frame_of(pte: Pte, level: u32, vaddr: u64) -> u64 {
    let offset_mask = (PAGE_SIZE << (9 * level)) - 1;
    if level == 0 && pte.0 & Pte::N != 0 {
        (pte.paddr() & !0xffff) | (vaddr & 0xf000)
    } else {
        (pte.paddr() & !offset_mask) | (vaddr & offset_mask & !(PAGE_SIZE - 1))
    }
}

/// A 64 KiB Svnapot leaf for the range at physical `base` (64 KiB aligned):
/// the value every one of the range's 16 entries holds.
pub fn napot_leaf(base: u64, flags: u64) -> Pte {
    Pte(Pte::leaf(base | 0x8000, flags).0 | Pte::N)
}

/// Installs a 4 KiB leaf for `vaddr`, creating intermediate tables with
/// frames from `alloc_table` (which must return zeroed 4 KiB frames).
/// Returns the previous entry (possibly invalid), or `None` when a table
/// frame could not be allocated or a superpage is in the way.
pub fn map_page(
    mem: &mut PhysMem,
    root: u64,
    vaddr: u64,
    pte: Pte,
    alloc_table: &mut dyn FnMut(&mut PhysMem) -> Option<u64>,
) -> Option<Pte> {
    let pte_addr = entry_at(mem, root, vaddr, 0, alloc_table)?;
    let old = Pte(mem.read_u64(pte_addr)?);
    mem.write_u64(pte_addr, pte.0);
    Some(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    const USER: Requester = Requester {
        user: true,
        sum: false,
        mxr: false,
    };

    fn setup() -> (PhysMem, u64, impl FnMut(&mut PhysMem) -> Option<u64>) {
        let mem = PhysMem::new(&[(0x8000_0000, 0x40_0000)]).unwrap();
        let root = 0x8000_0000;
        let mut next = 0x8000_1000u64;
        let alloc = move |_: &mut PhysMem| {
            let f = next;
            next += 4096;
            Some(f)
        };
        (mem, root, alloc)
    }

    #[test]
    fn map_and_translate_sets_a_and_d() {
        let (mut mem, root, mut alloc) = setup();
        let pte = Pte::leaf(0x8020_0000, Pte::R | Pte::W | Pte::U);
        assert_eq!(
            map_page(&mut mem, root, 0x1234_5000, pte, &mut alloc),
            Some(Pte(0))
        );
        let t = translate(&mut mem, root, 0x1234_5678, Access::Read, USER).unwrap();
        assert_eq!(t.paddr, 0x8020_0678);
        assert_eq!(t.page_shift, 12);
        assert!(t.flags & Pte::A != 0 && t.flags & Pte::D == 0);
        let t = translate(&mut mem, root, 0x1234_5000, Access::Write, USER).unwrap();
        assert!(t.flags & Pte::D != 0);
        let (_, leaf, level) = find_leaf(&mem, root, 0x1234_5fff).unwrap();
        assert_eq!(level, 0);
        assert!(leaf.0 & (Pte::A | Pte::D) == Pte::A | Pte::D);
    }

    #[test]
    fn every_leaf_is_visited_in_address_order() {
        let (mut mem, root, mut alloc) = setup();
        let flags = Pte::R | Pte::U;
        for va in [0x3f_ffff_e000u64, 0x1000, 0x4000_3000, 0x2000] {
            map_page(
                &mut mem,
                root,
                va,
                Pte::leaf(0x8030_0000 + va % 0x10_0000, flags),
                &mut alloc,
            );
        }
        // A 2 MiB leaf in its own table, and one in the upper half.
        let e = entry_at(&mut mem, root, 0x20_0000_0000, 1, &mut alloc).unwrap();
        mem.write_u64(e, Pte::leaf(0x8020_0000, flags).0);
        let e = entry_at(&mut mem, root, 0xffff_ffc0_0000_0000, 1, &mut alloc).unwrap();
        mem.write_u64(e, Pte::leaf(0x8020_0000, flags).0);
        let mut seen = Vec::new();
        for_each_leaf(&mem, root, &mut |va, pte, level| {
            seen.push((va, pte.paddr(), level))
        });
        assert_eq!(
            seen,
            [
                (0x1000, 0x8030_1000, 0),
                (0x2000, 0x8030_2000, 0),
                (0x4000_3000, 0x8030_3000, 0),
                (0x20_0000_0000, 0x8020_0000, 1),
                (0x3f_ffff_e000, 0x803f_e000, 0),
                (0xffff_ffc0_0000_0000, 0x8020_0000, 1),
            ]
        );
    }

    #[test]
    fn permissions_enforced() {
        let (mut mem, root, mut alloc) = setup();
        map_page(
            &mut mem,
            root,
            0x1000,
            Pte::leaf(0x8030_0000, Pte::R | Pte::U),
            &mut alloc,
        );
        map_page(
            &mut mem,
            root,
            0x2000,
            Pte::leaf(0x8030_1000, Pte::X | Pte::U),
            &mut alloc,
        );
        map_page(
            &mut mem,
            root,
            0x3000,
            Pte::leaf(0x8030_2000, Pte::R | Pte::W),
            &mut alloc,
        );
        assert_eq!(
            translate(&mut mem, root, 0x1000, Access::Write, USER),
            Err(Fault::Page)
        );
        assert_eq!(
            translate(&mut mem, root, 0x1000, Access::Exec, USER),
            Err(Fault::Page)
        );
        assert_eq!(
            translate(&mut mem, root, 0x2000, Access::Read, USER),
            Err(Fault::Page)
        );
        let mxr = Requester { mxr: true, ..USER };
        assert!(translate(&mut mem, root, 0x2000, Access::Read, mxr).is_ok());
        // Supervisor page from user mode, and user page from S without SUM.
        assert_eq!(
            translate(&mut mem, root, 0x3000, Access::Read, USER),
            Err(Fault::Page)
        );
        let sup = Requester {
            user: false,
            sum: false,
            mxr: false,
        };
        assert_eq!(
            translate(&mut mem, root, 0x1000, Access::Read, sup),
            Err(Fault::Page)
        );
        let sum = Requester { sum: true, ..sup };
        assert!(translate(&mut mem, root, 0x1000, Access::Read, sum).is_ok());
        assert_eq!(
            translate(&mut mem, root, 0x9000, Access::Read, USER),
            Err(Fault::Page)
        );
        assert_eq!(
            translate(&mut mem, root, 1 << 40, Access::Read, USER),
            Err(Fault::Page)
        );
    }

    #[test]
    fn reserved_bits_napot_and_refused_pte_accesses() {
        let (mut mem, root, mut alloc) = setup();
        let napot = Pte(Pte::leaf(0x8031_8000, Pte::R | Pte::U).0 | Pte::N);
        map_page(&mut mem, root, 0x5000, napot, &mut alloc);
        let t = translate(&mut mem, root, 0x5abc, Access::Read, USER).unwrap();
        assert_eq!(
            t.paddr, 0x8031_5abc,
            "64 KiB NAPOT: offset within the range"
        );
        assert_eq!(t.page_shift, 16);
        // Svpbmt bits without Svpbmt, and the reserved bits, are page faults.
        for bits in [1u64 << 61, 1 << 54] {
            let pte = Pte(Pte::leaf(0x8030_0000, Pte::R | Pte::U).0 | bits);
            map_page(&mut mem, root, 0x6000, pte, &mut alloc);
            assert_eq!(
                translate(&mut mem, root, 0x6000, Access::Read, USER),
                Err(Fault::Page)
            );
        }
        // A walker refused the leaf's update (as PMP would) faults with an
        // access fault and leaves the entry alone.
        let pte = Pte::leaf(0x8030_0000, Pte::R | Pte::U);
        map_page(&mut mem, root, 0x7000, pte, &mut alloc);
        let mut no_writes = |_: u64, write: bool| !write;
        assert_eq!(
            translate_with(&mut mem, root, 0x7000, Access::Read, USER, &mut no_writes),
            Err(Fault::Access)
        );
        assert_eq!(find_leaf(&mem, root, 0x7000).unwrap().1, pte);
        let mut nothing = |_: u64, _: bool| false;
        assert_eq!(
            translate_with(&mut mem, root, 0x7000, Access::Read, USER, &mut nothing),
            Err(Fault::Access)
        );
    }

    #[test]
    fn napot_ranges_follow_the_svnapot_rules() {
        let (mut mem, root, mut alloc) = setup();
        // The 16 entries of a 64 KiB range at 0x10_0000, all the same value.
        let leaf = napot_leaf(0x8040_0000, Pte::R | Pte::W | Pte::U);
        for i in 0..16 {
            map_page(&mut mem, root, 0x10_0000 + i * PAGE_SIZE, leaf, &mut alloc);
        }
        for va in [0x10_0000u64, 0x10_7abc, 0x10_ffff] {
            let t = translate(&mut mem, root, va, Access::Write, USER).unwrap();
            assert_eq!(t.paddr, 0x8040_0000 | (va & 0xffff), "{va:#x}");
            assert_eq!(t.page_shift, 16);
            let (_, pte, level) = find_leaf(&mem, root, va).unwrap();
            assert_eq!(frame_of(pte, level, va), 0x8040_0000 | (va & 0xf000));
        }
        // PPN[3:0] other than 1000 is a reserved encoding: a page fault.
        for low in [0x0u64, 0x4, 0xc] {
            let pte = Pte(Pte::leaf(0x8040_0000 | low << 12, Pte::R | Pte::U).0 | Pte::N);
            map_page(&mut mem, root, 0x20_0000, pte, &mut alloc);
            assert_eq!(
                translate(&mut mem, root, 0x20_0000, Access::Read, USER),
                Err(Fault::Page),
                "PPN[3:0] = {low:#x}"
            );
        }
        // N on a superpage leaf, or on a pointer, is reserved.
        let l1 = entry_at(&mut mem, root, 0x4000_0000, 1, &mut alloc).unwrap();
        mem.write_u64(l1, napot_leaf(0x8020_0000, Pte::R | Pte::U).0);
        assert_eq!(
            translate(&mut mem, root, 0x4000_0000, Access::Read, USER),
            Err(Fault::Page)
        );
        let ptr = Pte::leaf(0x8000_3000, 0).0 & !(Pte::R | Pte::W | Pte::X);
        mem.write_u64(l1, ptr | Pte::N);
        assert_eq!(
            translate(&mut mem, root, 0x4000_0000, Access::Read, USER),
            Err(Fault::Page)
        );
    }

    #[test]
    fn entry_at_places_a_megapage_and_frame_of_finds_its_pages() {
        let (mut mem, root, mut alloc) = setup();
        let l1 = entry_at(&mut mem, root, 0x20_0000, 1, &mut alloc).unwrap();
        mem.write_u64(l1, Pte::leaf(0x8020_0000, Pte::R | Pte::U).0);
        let (_, pte, level) = find_leaf(&mem, root, 0x21_2345).unwrap();
        assert_eq!(level, 1);
        assert_eq!(frame_of(pte, level, 0x21_2345), 0x8021_2000);
        assert_eq!(
            translate(&mut mem, root, 0x3f_ffff, Access::Read, USER).map(|t| t.page_shift),
            Ok(21)
        );
        // A 4 KiB entry cannot go under it.
        assert_eq!(entry_at(&mut mem, root, 0x21_0000, 0, &mut alloc), None);
        assert_eq!(
            map_page(
                &mut mem,
                root,
                0x21_0000,
                Pte::leaf(0x8030_0000, Pte::R),
                &mut alloc
            ),
            None
        );
    }

    #[test]
    fn superpage_translation() {
        let (mut mem, root, _) = setup();
        // A 2 MiB leaf at level 1: root -> table at 0x8000_1000.
        let l1 = 0x8000_1000;
        mem.write_u64(root + vpn(0x4000_0000, 2) * 8, Pte::leaf(l1, 0).0);
        mem.write_u64(
            l1 + vpn(0x4020_0000, 1) * 8,
            Pte::leaf(0x8020_0000, Pte::R | Pte::U).0,
        );
        let t = translate(&mut mem, root, 0x4021_2345, Access::Read, USER).unwrap();
        assert_eq!(t.paddr, 0x8021_2345);
        assert_eq!(t.page_shift, 21);
        // Misaligned superpage faults.
        mem.write_u64(
            l1 + vpn(0x4040_0000, 1) * 8,
            Pte::leaf(0x8020_1000, Pte::R | Pte::U).0,
        );
        assert_eq!(
            translate(&mut mem, root, 0x4040_0000, Access::Read, USER),
            Err(Fault::Page)
        );
    }
}
