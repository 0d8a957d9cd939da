//! What the address space holds and may still take: resident and mapped
//! bytes, commit limits per frame pool.
use super::*;
impl AddressSpace {
    /// Pages of `[start, end)` that have a frame (are resident), counted by
    /// walking the page table past absent subtrees.
    pub fn resident_pages(&self, mem: &PhysMem, start: u64, end: u64) -> u64 {
        fn walk(mem: &PhysMem, table: u64, level: u32, base: u64, start: u64, end: u64) -> u64 {
            let span = PAGE_SIZE << (9 * level);
            let first = start.saturating_sub(base) / span;
            let last = (end.saturating_sub(base)).div_ceil(span).min(512);
            let mut n = 0;
            for i in first..last {
                let lo = base + i * span;
                let Some(pte) = mem.read_u64(table + i * 8).map(Pte) else {
                    continue;
                };
                if !pte.valid() {
                    continue;
                }
                // A valid last-level entry maps a page even without R/W/X.
                if pte.is_leaf() || level == 0 {
                    n += ((lo + span).min(end) - lo.max(start)) / PAGE_SIZE;
                } else if level > 0 {
                    n += walk(mem, pte.paddr(), level - 1, lo, start, end);
                }
            }
            n
        }
        walk(mem, self.root, 2, 0, start, end)
    }

    /// Whether `len` more bytes of private memory from `pool` may be
    /// promised, by Linux's default overcommit heuristic: one request
    /// larger than all of the RAM it would come from is refused up front
    /// (`ENOMEM`); smaller ones are granted and run out, if they do, at a
    /// page fault.
    pub fn may_commit(&self, len: u64, pool: usize) -> bool {
        len <= self.frames.pool_bytes(pool)
    }

    /// Bytes of data areas ([`Vma::is_data_with`]) in `[start, end)`.
    pub fn data_bytes(&self, start: u64, end: u64) -> u64 {
        self.mapped_bytes_where(start, end, |v| v.is_data_with(v.prot))
    }

    /// Bytes of `[start, end)` that areas cover.
    pub fn mapped_bytes(&self, start: u64, end: u64) -> u64 {
        self.mapped_bytes_where(start, end, |_| true)
    }

    /// Bytes of the areas in `[start, end)` that `keep` selects.
    pub(crate) fn mapped_bytes_where(
        &self,
        start: u64,
        end: u64,
        keep: impl Fn(&Vma) -> bool,
    ) -> u64 {
        let first = self.find(start).map_or(start, |(s, _)| s);
        self.vmas
            .range(first..end)
            .filter(|(_, v)| keep(v))
            .map(|(&s, v)| v.end.min(end).saturating_sub(s.max(start)))
            .sum()
    }

    /// Whether the data areas may grow by `more` bytes under
    /// `RLIMIT_DATA`, as Linux's `may_expand_vm` decides (in pages; a soft
    /// limit of 0 lets them grow to the hard one, Linux's allowance for
    /// Valgrind).
    pub fn may_expand_data(&self, more: u64) -> bool {
        let (soft, hard) = self.data_rlimit;
        if soft == u64::MAX {
            return true;
        }
        let pages = (self.data_bytes(0, USER_TOP) + more) / PAGE_SIZE;
        pages <= soft / PAGE_SIZE || (soft == 0 && pages <= hard / PAGE_SIZE)
    }

    /// The pool an area's fresh frames come from.
    pub fn pool_of(&self, backing: &Backing) -> usize {
        match backing {
            Backing::Heap => self.heap_pool,
            _ => 0,
        }
    }
}
