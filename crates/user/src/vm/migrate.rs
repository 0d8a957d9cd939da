//! Pages and their memory nodes: which node a page is on, moving a page to
//! another node (`move_pages`, `mbind`'s `MPOL_MF_MOVE`, `migrate_pages`),
//! and the per-area node counts `/proc/self/numa_maps` prints.
use super::*;

/// A page moved: its old and new frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moved {
    /// The frame it left (freed).
    pub from: u64,
    /// The frame it is on now.
    pub to: u64,
}

/// What `numa_maps` counts of one area.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AreaPages {
    /// Resident pages.
    pub pages: u64,
    /// Anonymous ones among them.
    pub anon: u64,
    /// Dirty ones (the PTE's D bit).
    pub dirty: u64,
    /// Resident pages by node id.
    pub by_node: BTreeMap<u32, u64>,
}

impl AddressSpace {
    /// The node of the page at `vaddr` as `move_pages` reports it:
    /// `EFAULT` where no area is, `ENOENT` for a page not present (never
    /// touched) or not in a frame pool (a device window).
    pub fn page_node(&self, mem: &PhysMem, vaddr: u64) -> Result<u32, Errno> {
        self.find(vaddr).ok_or(EFAULT)?;
        let (_, pte, level) = sv39::find_leaf(mem, self.root, vaddr).ok_or(ENOENT)?;
        if pte.0 & PTE_DEVICE != 0 {
            return Err(ENOENT);
        }
        let frame = sv39::frame_of(pte, level, vaddr);
        let pool = self.frames.pool_of_frame(frame).ok_or(ENOENT)?;
        Ok(self.numa.node_of_pool(pool))
    }

    /// Moves the page at `vaddr` to a frame of node `to`, as Linux's
    /// `add_folio_for_migration` and the migration after it do: `EFAULT`
    /// where no area is or the area cannot move (a device window),
    /// `ENOENT` for a page not present, `EACCES` for a page of a shared
    /// mapping (its frame is the host file's page, which other processes
    /// may map: Linux refuses a page mapped more than once without
    /// `MPOL_MF_MOVE_ALL`), `ENOMEM` if node `to` has no free frame.
    /// `None`: already there. A larger page holding it is split first.
    pub fn move_page(
        &mut self,
        mem: &mut PhysMem,
        vaddr: u64,
        to: u32,
    ) -> Result<Option<Moved>, Errno> {
        let (_, vma) = self.find(vaddr).ok_or(EFAULT)?;
        if matches!(vma.backing, Backing::Physical { .. }) {
            return Err(EFAULT);
        }
        let shared = vma.file.as_ref().is_some_and(|f| f.shared);
        let (_, pte, level) = sv39::find_leaf(mem, self.root, vaddr).ok_or(ENOENT)?;
        if pte.0 & PTE_DEVICE != 0 {
            return Err(EFAULT);
        }
        let old = sv39::frame_of(pte, level, vaddr & !(PAGE_SIZE - 1));
        let pool = self.frames.pool_of_frame(old).ok_or(ENOENT)?;
        let from = self.numa.node_of_pool(pool);
        if from == to {
            return Ok(None);
        }
        if shared {
            return Err(EACCES);
        }
        if level > 0 || pte.0 & Pte::N != 0 {
            self.split_block(mem, vaddr, true)?;
        }
        let pools = self.numa.pools_of(to).to_vec();
        let new = pools
            .iter()
            .find_map(|&p| self.frames.alloc_data(mem, p))
            .ok_or(ENOMEM)?;
        let mut page = vec![0u8; PAGE_SIZE as usize];
        mem.read(old, &mut page);
        mem.write(new, &page);
        let (entry, pte, _) = sv39::find_leaf(mem, self.root, vaddr).ok_or(ENOENT)?;
        mem.write_u64(entry, Pte::leaf(new, pte.0 & 0x3ff).0);
        self.frames.release(mem, old);
        self.translations_stale = true;
        self.numa.count_migration(from, to);
        Ok(Some(Moved { from: old, to: new }))
    }

    /// Gives the areas of `[start, end)` the NUMA policy `policy`
    /// (`mbind`), splitting areas at the ends and merging neighbours that
    /// end up alike.
    pub fn set_policy(&mut self, start: u64, end: u64, policy: Option<crate::numa::Policy>) {
        self.split_at(start);
        self.split_at(end);
        for (_, v) in self.vmas.range_mut(start..end) {
            v.policy = policy;
        }
        self.merge_around(start, end);
    }

    /// The resident pages of `[start, end)` with their nodes: `(page
    /// address, node)`, ascending.
    pub fn resident_nodes(&self, mem: &PhysMem, start: u64, end: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        let mut va = start & !(PAGE_SIZE - 1);
        while va < end {
            if let Ok(node) = self.page_node(mem, va) {
                out.push((va, node));
            }
            va += PAGE_SIZE;
        }
        out
    }

    /// What `numa_maps` counts of the area `[start, end)`.
    pub fn area_pages(&self, mem: &PhysMem, start: u64, end: u64) -> AreaPages {
        let mut out = AreaPages::default();
        let anon_from = self.find(start).map_or(u64::MAX, |(_, v)| v.anon_from);
        let mut va = start;
        while va < end {
            if let Some((_, pte, level)) = sv39::find_leaf(mem, self.root, va) {
                let frame = sv39::frame_of(pte, level, va);
                if pte.0 & PTE_DEVICE == 0 {
                    if let Some(pool) = self.frames.pool_of_frame(frame) {
                        out.pages += 1;
                        out.anon += u64::from(va >= anon_from);
                        out.dirty += u64::from(pte.0 & Pte::D != 0);
                        *out.by_node.entry(self.numa.node_of_pool(pool)).or_default() += 1;
                    }
                }
            }
            va += PAGE_SIZE;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numa::{NodeMap, Policy, MPOL_BIND, MPOL_INTERLEAVE};

    /// Two nodes of 4 MiB: pool 0 on node 0, pool 1 on node 1.
    fn space() -> (PhysMem, AddressSpace) {
        let ranges = [(0x8000_0000, 0x40_0000), (0x9000_0000, 0x40_0000)];
        let mut mem = PhysMem::new(&ranges).unwrap();
        let mut a = AddressSpace::with_pools(&mut mem, &ranges, 0).unwrap();
        a.numa = NodeMap::new(&[0, 1], 0, &[]);
        a.add(
            0x10_0000,
            0x20_0000,
            PROT_READ | PROT_WRITE,
            Backing::Heap,
            "[heap]",
        );
        (mem, a)
    }

    #[test]
    fn pages_go_where_the_policy_says_and_move_with_their_data() {
        let (mut mem, mut a) = space();
        let bind = Policy::new(
            MPOL_BIND,
            0,
            crate::numa::NodeMask::bits(2),
            a.numa.online(),
        )
        .unwrap();
        assert_eq!(a.page_node(&mem, 0x10_0000), Err(ENOENT));
        assert_eq!(a.page_node(&mem, 0x5000_0000), Err(EFAULT));
        assert!(a
            .handle_fault_for(&mut mem, 0x10_0000, true, false, bind.as_ref())
            .unwrap());
        assert_eq!(a.page_node(&mem, 0x10_0000), Ok(1));
        // Interleave by page number.
        let il = Policy::new(
            MPOL_INTERLEAVE,
            0,
            crate::numa::NodeMask::bits(3),
            a.numa.online(),
        )
        .unwrap();
        for page in 1..5u64 {
            a.handle_fault_for(
                &mut mem,
                0x10_0000 + page * PAGE_SIZE,
                true,
                false,
                il.as_ref(),
            )
            .unwrap();
        }
        let nodes: Vec<u32> = a
            .resident_nodes(&mem, 0x10_1000, 0x10_5000)
            .iter()
            .map(|p| p.1)
            .collect();
        assert_eq!(nodes, [1, 0, 1, 0]);
        // A move keeps the data.
        let (_, pte, lvl) = sv39::find_leaf(&mem, a.root, 0x10_2000).unwrap();
        mem.write(sv39::frame_of(pte, lvl, 0x10_2000) + 8, b"moved");
        let m = a.move_page(&mut mem, 0x10_2000, 1).unwrap().unwrap();
        assert_eq!(a.page_node(&mem, 0x10_2000), Ok(1));
        let mut got = [0u8; 5];
        mem.read(m.to + 8, &mut got);
        assert_eq!(&got, b"moved");
        assert!(a.translations_stale);
        assert_eq!(a.move_page(&mut mem, 0x10_2000, 1), Ok(None));
        assert_eq!(a.move_page(&mut mem, 0x10_9000, 1), Err(ENOENT));
        let c = a.numa.counters_of(1);
        assert_eq!((c.migrated_in, c.numa_hit, c.interleave_hit), (1, 3, 2));
        let area = a.area_pages(&mem, 0x10_0000, 0x20_0000);
        // Writable pages are mapped dirty from the start (no dirty-bit fault).
        assert_eq!((area.pages, area.anon, area.dirty), (5, 5, 5));
        assert_eq!(area.by_node.get(&1), Some(&4));
    }
}
