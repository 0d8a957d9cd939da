//! Cache flushes (`cbo.*`, `CFLUSH.D.L1`): one line through every level
//! and every core's copy, or a whole L1D.
use crate::time::Ps;
use crate::LineState::{self, Exclusive, Invalid, Modified};
use crate::{CoreId, FlushKind, MemorySystem};
impl MemorySystem {
    /// A cache-maintenance instruction on the line holding `paddr` (see
    /// [`FlushKind`]). Returns the stall in hart cycles (the instruction's
    /// own issue cycle is the core's); counts the instruction and, if the
    /// line was dirty anywhere it looked, one line written back.
    pub fn flush_line(
        &mut self,
        core: CoreId,
        paddr: u64,
        kind: FlushKind,
        now_cycles: u64,
    ) -> u64 {
        let t0 = self.clock.cycles_to_ps(now_cycles);
        self.note_time(core, t0);
        let done = self.flush_line_ps(core, paddr, kind, t0);
        self.clock
            .ps_to_cycles_ceil(done)
            .saturating_sub(now_cycles)
    }

    /// `CFLUSH.D.L1 x0`: write back every dirty line of `core`'s L1D (to the
    /// L2 if there is one, else memory) and invalidate the whole L1D.
    /// Returns the stall in hart cycles: the walk over all ways, or the
    /// write-backs if they take longer.
    pub fn flush_l1d(&mut self, core: CoreId, now_cycles: u64) -> u64 {
        let t0 = self.clock.cycles_to_ps(now_cycles);
        self.note_time(core, t0);
        let st = &mut self.flush[core];
        st.instructions += 1;
        st.whole_l1d += 1;
        let dirty: Vec<(usize, u64, LineState)> = self.l1d[core].valid_lines().collect();
        let mut t = t0;
        let mut written = 0;
        for (slot, line, state) in dirty {
            let walk = t0 + slot as Ps * self.flush_walk_ps;
            t = t.max(walk);
            self.l1d[core].set_state(slot, Invalid);
            if state == Modified {
                self.l1d[core].stats.writebacks += 1;
                written += 1;
                t = self.writeback_below(core, line << self.d_shift, t);
            }
        }
        self.filters[core].clear_data();
        self.flush[core].lines_written_back += written;
        let walk_end = t0 + self.l1d[core].capacity_lines() as Ps * self.flush_walk_ps;
        let done = t.max(walk_end);
        self.clock
            .ps_to_cycles_ceil(done)
            .saturating_sub(now_cycles)
    }

    /// `fence.i`: invalidate `core`'s L1I (clean: nothing to write back).
    pub fn flush_l1i(&mut self, core: CoreId) {
        let lines: Vec<usize> = self.l1i[core].valid_lines().map(|(s, _, _)| s).collect();
        for s in lines {
            self.l1i[core].set_state(s, Invalid);
        }
        self.filters[core].clear_fetch();
    }

    pub(crate) fn flush_line_ps(&mut self, h: usize, paddr: u64, kind: FlushKind, t0: Ps) -> Ps {
        self.flush[h].instructions += 1;
        let line = paddr >> self.d_shift;
        let addr = line << self.d_shift;
        let mut t = t0;
        let (_, mut dirty) = self.flush_l1_copy(h, line, kind);
        if kind != FlushKind::L1 {
            if self.cores() > 1 || self.l2.is_some() {
                t = self.coherence_broadcast(h, t);
            }
            for o in 0..self.cores() {
                if o == h {
                    continue;
                }
                let (present, was_dirty) = self.flush_l1_copy(o, line, kind);
                if present && kind != FlushKind::Clean {
                    self.l1d[o].stats.invalidations += 1;
                }
                dirty |= was_dirty;
            }
        }
        let mut written = dirty;
        match kind {
            FlushKind::L1 => {
                if dirty {
                    t = self.writeback_below(h, addr, t);
                }
            }
            FlushKind::Flush | FlushKind::Clean | FlushKind::Inval => {
                let mut to_memory = dirty;
                if let Some(l2) = &mut self.l2 {
                    let l2line = addr >> l2.line_shift();
                    if let Some(s) = l2.find(l2line) {
                        if l2.state(s) == Modified {
                            if !dirty {
                                l2.stats.writebacks += 1;
                            }
                            to_memory = true;
                            written = true;
                        }
                        let keep = if kind == FlushKind::Clean {
                            Exclusive
                        } else {
                            Invalid
                        };
                        l2.set_state(s, keep);
                    }
                }
                if to_memory {
                    t = self.mem_write(h, addr, t, self.d_occ);
                }
            }
        }
        if written {
            self.flush[h].lines_written_back += 1;
        }
        t
    }

    /// Applies a flush to `o`'s L1D copy of `line`: `(present, dirty)`
    /// (a dirty line's write-back is counted on that cache).
    pub(crate) fn flush_l1_copy(&mut self, o: usize, line: u64, kind: FlushKind) -> (bool, bool) {
        let Some(s) = self.l1d[o].find(line) else {
            return (false, false);
        };
        let state = self.l1d[o].state(s);
        let dirty = state == Modified;
        if dirty {
            self.l1d[o].stats.writebacks += 1;
        }
        if kind == FlushKind::Clean {
            if dirty {
                // The only copy (MESI): clean and still exclusive.
                self.l1d[o].set_state(s, Exclusive);
                self.filters[o].drop_write(line);
            }
        } else {
            self.l1d[o].set_state(s, Invalid);
            self.filters[o].drop_data(line);
        }
        (true, dirty)
    }
}
