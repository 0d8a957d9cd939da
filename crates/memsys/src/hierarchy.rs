//! The miss path: an access that the filter could not answer, through the
//! L1s, the L2 and the bus to the controllers, and the time each step
//! takes. Every `*_ps` function takes and returns absolute picoseconds.
use crate::backend::Backend;
use crate::heat::HeatEvent;
use crate::time::Ps;
use crate::LineState::{self, Exclusive, Invalid, Modified, Shared};
use crate::{CoreId, Intent, MemorySystem, MemsysError};
impl MemorySystem {
    pub(crate) fn note_time(&mut self, core: CoreId, t: Ps) {
        // A request of a core of several threads bounds only the thread
        // that made it, which the model does not know: those cores' bounds
        // come from `note_hart_time` alone.
        if self.hart_ps.len() == self.l1d.len() {
            self.note_hart_ps(core, t);
        }
    }

    pub(crate) fn note_hart_ps(&mut self, hart: usize, t: Ps) {
        let slot = &mut self.hart_ps[hart];
        *slot = Some(slot.map_or(t, |p| p.max(t)));
    }

    /// No request can come before this: in-flight records ending earlier
    /// can be forgotten. A hart that has presented nothing yet may still
    /// present a request at time 0, unless the scheduler said otherwise
    /// ([`MemorySystem::note_hart_time`]).
    pub(crate) fn low_water(&self) -> Ps {
        self.hart_ps
            .iter()
            .map(|p| p.unwrap_or(0))
            .min()
            .unwrap_or(0)
    }

    /// Tells the model that hart `hart` will present no request before
    /// `now_cycles` (its clock, or for a hart with nothing to run, the
    /// earliest time work could reach it). Lets the model forget history
    /// sooner; never changes a result.
    pub fn note_hart_time(&mut self, hart: usize, now_cycles: u64) {
        let t = self.clock.cycles_to_ps(now_cycles);
        self.note_hart_ps(hart, t);
    }

    pub(crate) fn data_access_ps(&mut self, h: usize, paddr: u64, intent: Intent, t: Ps) -> Ps {
        let write = intent == Intent::Write;
        if !self.l1d[h].enabled() {
            return self.uncached_ps(h, paddr, write, t);
        }
        let line = paddr >> self.d_shift;
        if let Some(slot) = self.l1d[h].find(line) {
            let state = self.l1d[h].state(slot);
            let done = match (intent, state) {
                (Intent::Read, _) => {
                    self.l1d[h].stats.read_hits += 1;
                    t
                }
                (Intent::Write, Modified) | (Intent::ReadExclusive, Modified | Exclusive) => {
                    self.l1d[h].stats.write_hits += 1;
                    t
                }
                (Intent::Write, Exclusive) => {
                    self.l1d[h].stats.write_hits += 1;
                    self.l1d[h].set_state(slot, Modified);
                    t
                }
                (_, _) => {
                    // Shared: invalidate the other copies first.
                    let st = &mut self.l1d[h].stats;
                    st.write_misses += 1;
                    st.upgrades += 1;
                    self.note_heat(paddr, t, HeatEvent::Miss);
                    if self.invalidate_others(h, line) {
                        self.l1d[h].set_contended(slot);
                    }
                    let done = self.coherence_broadcast(h, t);
                    self.l1d[h].set_state(slot, if write { Modified } else { Exclusive });
                    self.l1d[h].set_arrival(slot, done);
                    done
                }
            };
            if let Some(old) = self.l1d[h].touch(slot) {
                self.filters[h].drop_data(old);
            }
            self.fill_data_filter(h, slot, line);
            return done;
        }

        // Miss. An `lr` counts with the stores: it needs the line exclusive.
        if intent != Intent::Read {
            self.l1d[h].stats.write_misses += 1;
        } else {
            self.l1d[h].stats.read_misses += 1;
        }
        self.note_heat(paddr, t, HeatEvent::Miss);
        let start = self.l1d[h].mshr.earliest_start(t);
        let mut t1 = start;
        let slot = self.l1d[h].victim(line);
        let vstate = self.l1d[h].state(slot);
        if vstate != Invalid {
            let vline = self.l1d[h].line(slot);
            self.filters[h].drop_data(vline);
            self.l1d[h].set_state(slot, Invalid);
            if vstate == Modified {
                self.l1d[h].stats.writebacks += 1;
                t1 = self.writeback_below(h, vline << self.d_shift, t1);
            }
        }
        let (done, state, contended) = self.l1d_refill(h, line, intent, t1);
        if !self.l1d[h].may_hold_lines() {
            self.l1d_filled += 1;
        }
        if let Some(old) = self.l1d[h].fill(slot, line, state) {
            self.filters[h].drop_data(old);
        }
        if contended {
            self.l1d[h].set_contended(slot);
        }
        self.l1d[h].set_arrival(slot, done);
        self.fill_data_filter(h, slot, line);
        self.l1d[h].mshr.insert(start, done, start);
        done
    }

    /// After an access of `h` to `line` in way `slot` of its L1D: the
    /// filter learns the line (for stores too if Modified), unless it is
    /// contended, whose every access must reach the sync check.
    #[inline(always)]
    pub(crate) fn fill_data_filter(&mut self, h: usize, slot: usize, line: u64) {
        let c = &self.l1d[h];
        if c.is_contended(slot) {
            return;
        }
        if c.state(slot) == Modified {
            self.filters[h].fill_write(line);
        } else {
            self.filters[h].fill_read(line);
        }
    }

    /// Snoops the other L1Ds for a miss of `h` on `line` (BusRd for a read,
    /// BusRdX for a store or an `lr`, which wants the line exclusive) and
    /// brings the line in: returns when it arrives, its new state, and
    /// whether it is contended (a BusRdX took it from another core, or a
    /// BusRd found it Modified in one).
    pub(crate) fn l1d_refill(
        &mut self,
        h: usize,
        line: u64,
        intent: Intent,
        t: Ps,
    ) -> (Ps, LineState, bool) {
        let write = intent != Intent::Read;
        if write {
            self.coherence[h].read_exclusives += 1;
        } else {
            self.coherence[h].reads += 1;
        }
        let mut owner = false;
        let mut shared = false;
        let mut took = false;
        // A Modified copy supplies the data, once it has it itself: a line
        // still on its way to one core goes on to the next after it lands.
        let mut from = t;
        // No other L1D ever held a line (a single-threaded program): none
        // to visit.
        let own = usize::from(self.l1d[h].may_hold_lines());
        let others = if self.l1d_filled > own {
            self.cores()
        } else {
            0
        };
        for o in 0..others {
            if o == h || !self.l1d[o].may_hold_lines() {
                continue;
            }
            let Some(s) = self.l1d[o].find(line) else {
                continue;
            };
            let st = self.l1d[o].state(s);
            if st == Modified {
                from = from.max(self.l1d[o].arrival(s));
            }
            if write {
                // BusRdX: every other copy goes; a Modified one hands its
                // data over (ownership moves, memory is not updated).
                owner |= st == Modified;
                took = true;
                self.coherence[h].invalidations_sent += 1;
                self.l1d[o].set_state(s, Invalid);
                self.l1d[o].stats.invalidations += 1;
                self.filters[o].drop_data(line);
            } else {
                // BusRd: every copy becomes Shared; a Modified one is
                // written back and forwards its data.
                shared = true;
                if st == Modified {
                    owner = true;
                    self.l1d[o].stats.writebacks += 1;
                }
                if st != Shared {
                    self.l1d[o].set_state(s, Shared);
                    self.filters[o].drop_write(line);
                }
            }
        }
        let c = &mut self.coherence[h];
        c.snoop_hits += (shared || took) as u64;
        c.cache_to_cache += owner as u64;
        let addr = line << self.d_shift;
        let done = if owner {
            self.cache_to_cache(h, addr, !write, from)
        } else {
            self.read_below(h, addr, t, self.d_occ)
        };
        let state = match intent {
            Intent::Write => Modified,
            // Dirty data handed over stays dirty; otherwise clean and alone.
            Intent::ReadExclusive if owner => Modified,
            Intent::ReadExclusive => Exclusive,
            Intent::Read if shared => Shared,
            Intent::Read => Exclusive,
        };
        (done, state, owner || took)
    }

    /// A line read below the L1s: the L2, or memory.
    pub(crate) fn read_below(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        if self.l2.is_some() {
            self.l2_access(h, addr, false, t)
        } else {
            self.mem_read(h, addr, t, occ)
        }
    }

    /// A dirty L1 line leaving: returns when the requester may go on.
    pub(crate) fn writeback_below(&mut self, h: usize, addr: u64, t: Ps) -> Ps {
        if self.l2.is_some() {
            self.l2_writeback(h, addr, t)
        } else {
            self.mem_write(h, addr, t, self.d_occ)
        }
    }

    /// A read (or, without an L1D, a write-allocate) of the L2 line holding
    /// `addr`.
    pub(crate) fn l2_access(&mut self, h: usize, addr: u64, write: bool, t: Ps) -> Ps {
        let low_water = self.low_water();
        let l2 = self.l2.as_mut().expect("l2_access needs an L2");
        let line = addr >> l2.line_shift();
        if let Some(s) = l2.find(line) {
            if write {
                l2.stats.write_hits += 1;
                l2.set_state(s, Modified);
            } else {
                l2.stats.read_hits += 1;
            }
            l2.touch(s);
            return t + self.l2_hit_ps;
        }
        if write {
            l2.stats.write_misses += 1;
        } else {
            l2.stats.read_misses += 1;
        }
        let start = l2.mshr.earliest_start(t + self.l2_hit_ps);
        let slot = l2.victim(line);
        let vstate = l2.state(slot);
        let vline = l2.line(slot);
        l2.set_state(slot, Invalid);
        let shift = l2.line_shift();
        let mut t1 = start;
        if vstate == Modified {
            l2.stats.writebacks += 1;
            t1 = self.mem_write(h, vline << shift, t1, self.d_occ);
        }
        let done = self.mem_read(h, line << shift, t1, self.d_occ);
        let l2 = self.l2.as_mut().expect("checked above");
        l2.fill(slot, line, if write { Modified } else { Exclusive });
        l2.mshr.insert(start, done, low_water);
        done
    }

    /// A dirty L1 line written into the L2 (allocated if absent; the L2
    /// is non-inclusive). Returns when the L1 may go on: at once, unless
    /// the L2 had to write back a dirty victim first.
    pub(crate) fn l2_writeback(&mut self, h: usize, addr: u64, t: Ps) -> Ps {
        let l2 = self.l2.as_mut().expect("l2_writeback needs an L2");
        let shift = l2.line_shift();
        let line = addr >> shift;
        if let Some(s) = l2.find(line) {
            l2.stats.write_hits += 1;
            l2.set_state(s, Modified);
            l2.touch(s);
            return t;
        }
        l2.stats.write_misses += 1;
        let slot = l2.victim(line);
        let vstate = l2.state(slot);
        let vline = l2.line(slot);
        l2.set_state(slot, Invalid);
        l2.fill(slot, line, Modified);
        if vstate == Modified {
            l2.stats.writebacks += 1;
            return self.mem_write(h, vline << shift, t, self.d_occ);
        }
        t
    }

    /// An access with the L1D disabled.
    pub(crate) fn uncached_ps(&mut self, h: usize, paddr: u64, write: bool, t: Ps) -> Ps {
        let addr = paddr >> self.d_shift << self.d_shift;
        if self.l2.is_some() {
            self.l2_access(h, addr, write, t)
        } else if write {
            self.mem_write(h, addr, t, self.d_occ)
        } else {
            self.mem_read(h, addr, t, self.d_occ)
        }
    }

    pub(crate) fn fetch_ps(&mut self, h: usize, paddr: u64, t: Ps) -> Ps {
        let addr = paddr >> self.i_shift << self.i_shift;
        if !self.l1i[h].enabled() {
            return self.read_below(h, addr, t, self.i_occ);
        }
        let line = paddr >> self.i_shift;
        if let Some(slot) = self.l1i[h].find(line) {
            self.l1i[h].stats.read_hits += 1;
            if let Some(old) = self.l1i[h].touch(slot) {
                self.filters[h].drop_fetch(old);
            }
            self.filters[h].fill_fetch(line);
            return t;
        }
        self.l1i[h].stats.read_misses += 1;
        self.note_heat(paddr, t, HeatEvent::Miss);
        let start = self.l1i[h].mshr.earliest_start(t);
        let slot = self.l1i[h].victim(line);
        if self.l1i[h].state(slot) != Invalid {
            let vline = self.l1i[h].line(slot);
            self.filters[h].drop_fetch(vline);
            self.l1i[h].set_state(slot, Invalid);
        }
        let done = self.read_below(h, addr, start, self.i_occ);
        if let Some(old) = self.l1i[h].fill(slot, line, Shared) {
            self.filters[h].drop_fetch(old);
        }
        self.filters[h].fill_fetch(line);
        self.l1i[h].mshr.insert(start, done, start);
        done
    }

    /// A line read over the bus from its controller. Returns when the data
    /// is at the cache.
    #[inline(always)]
    pub(crate) fn mem_read(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        let g = self.bus.acquire(Some(h), t, self.addr_occ);
        let arrive = g + self.req_ps;
        let route = self.routes.find(addr).copied();
        let data_out = match &route {
            Some(r) => self.backends[r.backend].backend.read(r.at(addr), arrive),
            None => arrive,
        };
        let rg = self.bus.acquire(None, data_out, occ);
        let done = rg + self.resp_ps;
        if let Some(r) = route {
            self.note_heat(addr, t, HeatEvent::Read);
            let info = &mut self.regions[r.region];
            info.bus_reads += 1;
            info.read_wait_ps += done - t;
        }
        done
    }

    /// A posted line write over the bus: address and data beats, then the
    /// controller's acceptance. Returns when the requester may go on: after
    /// the bus carried the line, later if the controller held its input.
    pub(crate) fn mem_write(&mut self, h: usize, addr: u64, t: Ps, occ: Ps) -> Ps {
        let g = self.bus.acquire(Some(h), t, occ);
        let arrive = g + self.req_ps;
        let accepted = self.controller_write(addr, arrive);
        let proceed = g + occ + accepted.saturating_sub(arrive);
        if let Some(r) = self.routes.find(addr) {
            let info = &mut self.regions[r.region];
            info.waited_writes += 1;
            info.write_wait_ps += proceed - t;
        }
        proceed
    }

    /// Hands a write to the controller of `addr` at `arrive`; returns its
    /// acceptance time.
    pub(crate) fn controller_write(&mut self, addr: u64, arrive: Ps) -> Ps {
        if let Some(w) = self.write_backs.as_mut() {
            w.push(addr);
        }
        match self.routes.find(addr).copied() {
            Some(r) => {
                self.note_heat(addr, arrive, HeatEvent::Write);
                self.regions[r.region].bus_writes += 1;
                self.backends[r.backend].backend.write(r.at(addr), arrive)
            }
            None => arrive,
        }
    }

    /// Counts `event` in the page heat, if it is recorded.
    #[inline(always)]
    fn note_heat(&mut self, paddr: u64, t: Ps, event: HeatEvent) {
        if let Some(heat) = self.heat.as_mut() {
            heat.note(paddr, t, event);
        }
    }

    /// The index of region `region` and the controller model serving it.
    pub(crate) fn region_backend(
        &mut self,
        region: &str,
    ) -> Result<(usize, &mut Box<dyn Backend + Send>), MemsysError> {
        let r = self
            .regions
            .iter()
            .position(|r| r.name == region)
            .ok_or_else(|| MemsysError::UnknownRegion(region.to_string()))?;
        let ctrl = &self.regions[r].controller;
        let b = self
            .backends
            .iter_mut()
            .find(|b| &b.name == ctrl)
            .ok_or_else(|| MemsysError::NoModel {
                region: region.to_string(),
                controller: ctrl.clone(),
            })?;
        Ok((r, &mut b.backend))
    }
}
