//! MESI between the L1Ds by snooping on the bus: invalidating other
//! copies, the broadcast a miss or upgrade costs, and cache-to-cache
//! transfers of Modified lines.
use crate::time::Ps;
use crate::LineState::{Invalid, Modified};
use crate::MemorySystem;
impl MemorySystem {
    /// Invalidates every other hart's copy of `line` (they are Shared);
    /// true if there was one.
    pub(crate) fn invalidate_others(&mut self, h: usize, line: u64) -> bool {
        let mut any = false;
        for o in 0..self.cores() {
            if o == h || !self.l1d[o].may_hold_lines() {
                continue;
            }
            if let Some(s) = self.l1d[o].find(line) {
                debug_assert_ne!(self.l1d[o].state(s), Modified);
                self.l1d[o].set_state(s, Invalid);
                self.l1d[o].stats.invalidations += 1;
                self.filters[o].drop_data(line);
                self.coherence[h].invalidations_sent += 1;
                any = true;
            }
        }
        any
    }

    /// A coherence transaction without data from memory (an upgrade, or the
    /// broadcast of a `cbo.*`): through the L2 if there is one, else an
    /// address phase on the bus; then the snoop.
    pub(crate) fn coherence_broadcast(&mut self, h: usize, t: Ps) -> Ps {
        if self.l2.is_some() {
            t + self.l2_hit_ps + self.snoop_ps
        } else {
            let g = self.bus.acquire(Some(h), t, self.addr_occ);
            g + self.addr_occ + self.snoop_ps
        }
    }

    /// A dirty line supplied by another L1D. `update_memory` (a read):
    /// the owner also writes it back (into the L2, or posted to memory).
    pub(crate) fn cache_to_cache(&mut self, h: usize, addr: u64, update_memory: bool, t: Ps) -> Ps {
        if self.l2.is_some() {
            let t = if update_memory {
                self.l2_writeback(h, addr, t)
            } else {
                t
            };
            t + self.l2_hit_ps + self.snoop_ps
        } else {
            let g = self.bus.acquire(Some(h), t, self.addr_occ);
            let ready = g + self.addr_occ + self.snoop_ps;
            let r = self.bus.acquire(None, ready, self.d_occ);
            if update_memory {
                // Memory takes the data off the bus as the requester does.
                self.controller_write(addr, r + self.req_ps);
            }
            r + self.d_occ
        }
    }
}
