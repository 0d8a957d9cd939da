//! The request scheduler: the queues in arrival order, the choice of the
//! next request (FCFS, read-first, FR-FCFS with write draining) and the
//! commands that serve it.
use crate::regions::method_of;
use crate::{Access, BusSlot, CommandKind, Controller, Done, OpenRow, Ps, Req};
use rvnvmm_config::Scheduler;
impl Controller {
    /// Drops history no future command can conflict with. Call only after
    /// `process_until(l)` with `l >= t` for the arrival time `t`: then every
    /// command still to be decided (queued requests, and new ones arriving at
    /// or after `t`) issues at or after `t`.
    #[inline(always)]
    pub(crate) fn prune(&mut self, t: Ps) {
        let horizon = t.saturating_sub(self.t.act_reach);
        // Each list is sorted: when its first entry stays, all do (the
        // common case, checked without a search).
        for acts in &mut self.acts {
            if acts.first().is_some_and(|&a| a < horizon) {
                let n = acts.partition_point(|&a| a < horizon);
                acts.drain(..n);
            }
        }
        // A column command at or after `t` cannot collide with one whose
        // command is more than `col_reach` earlier.
        let reach = self.t.col_reach;
        if self
            .bus
            .first()
            .is_some_and(|s| s.cmd.saturating_add(reach) <= t)
        {
            let n = self
                .bus
                .partition_point(|s| s.cmd.saturating_add(reach) <= t);
            self.bus.drain(..n);
        }
        if self.t.groups > 1 {
            self.prune_groups(t);
        }
        if self.wr_pending.first().is_some_and(|w| w.0 <= t) {
            let n = self.wr_pending.partition_point(|w| w.0 <= t);
            self.wr_pending.drain(..n);
        }
        if self.rd_pending.first().is_some_and(|&d| d <= t) {
            let n = self.rd_pending.partition_point(|&d| d <= t);
            self.rd_pending.drain(..n);
        }
    }

    /// [`Controller::prune`] of the bank groups' lists, with the same
    /// horizons as the rank's and the channel's lists they are subsets of.
    fn prune_groups(&mut self, t: Ps) {
        let horizon = t.saturating_sub(self.t.act_reach);
        for acts in &mut self.group_acts {
            let n = acts.partition_point(|&a| a < horizon);
            acts.drain(..n);
        }
        let reach = self.t.col_reach;
        for cols in &mut self.group_cols {
            let n = cols.partition_point(|&c| c.saturating_add(reach) <= t);
            cols.drain(..n);
        }
    }

    /// Schedules every queued request whose first command can issue before
    /// `limit`, and the refreshes due by then. Afterwards every command
    /// still to be decided issues at or after `limit`.
    pub(crate) fn process_until(&mut self, limit: Ps) {
        loop {
            if self.queue.is_empty() && self.empty_queue_shortcuts {
                // With nothing queued (a read into an idle controller, or
                // the posted write just scheduled) every scheduler picks
                // nothing and `read-first` ends a drain, so `step` would
                // only run the refreshes due by `limit`, one at a time: run
                // them directly.
                self.draining = false;
                while self.next_ref != Ps::MAX && self.next_ref <= limit {
                    self.refresh(Some(limit), true);
                }
                return;
            }
            if self.step(Some(limit)).is_none() {
                return;
            }
        }
    }

    pub(crate) fn is_hit(&self, q: &Req) -> bool {
        matches!(self.banks[q.bank].open, Some(o) if o.row == q.row && q.arrival < o.pre_ready)
    }

    /// The next request to schedule: [`Controller::pick_fcfs`] or
    /// [`Controller::pick_fr_fcfs`]. Returns (first command time, queue
    /// index).
    pub(crate) fn pick(&mut self) -> Option<(Ps, usize)> {
        match self.scheduler {
            Scheduler::Fcfs => self.pick_fcfs(),
            Scheduler::FrFcfs => self.pick_fr_fcfs(Only::Any),
            Scheduler::ReadFirst => self.pick_read_first(),
        }
    }

    /// FCFS choice: the oldest request, whatever its bank or row; its
    /// commands still overlap those of other banks already scheduled.
    pub(crate) fn pick_fcfs(&self) -> Option<(Ps, usize)> {
        let (i, q) = self.queue.iter().enumerate().min_by_key(|(_, q)| q.seq)?;
        Some((self.first_command(q), i))
    }

    /// `read-first` choice: reads by FR-FCFS; posted writes wait in the
    /// write queue until it reaches its high watermark, then drain (FR-FCFS
    /// among writes, reads waiting) down to the low watermark, as gem5's and
    /// Ramulator's write-buffering controllers do. A write the queue holds
    /// below the watermark costs a read nothing; the bank time is paid in
    /// the drain.
    pub(crate) fn pick_read_first(&mut self) -> Option<(Ps, usize)> {
        let writes = self.queue.iter().filter(|q| q.write).count();
        let (high, low) = write_watermarks(self.write_cap);
        if writes >= high {
            self.draining = true;
        } else if writes <= low {
            self.draining = false;
        }
        let reads = self.queue.len() - writes;
        let writes_only = self.draining || (reads == 0 && self.flushing);
        if !writes_only && reads == 0 {
            return None;
        }
        self.pick_fr_fcfs(if writes_only {
            Only::Writes
        } else {
            Only::Reads
        })
    }

    /// FR-FCFS choice: per bank the oldest row hit, else the oldest request;
    /// across banks the one whose first command can issue earliest (ties:
    /// hits, then oldest), among the requests `only` admits.
    pub(crate) fn pick_fr_fcfs(&mut self, only: Only) -> Option<(Ps, usize)> {
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        for (i, q) in self.queue.iter().enumerate() {
            match only {
                Only::Reads if q.write => continue,
                Only::Writes if !q.write => continue,
                _ => {}
            }
            let hit = self.is_hit(q);
            match self.best[q.bank] {
                None => {
                    self.best[q.bank] = Some((i, hit));
                    touched.push(q.bank);
                }
                Some((_, false)) if hit => self.best[q.bank] = Some((i, hit)),
                _ => {}
            }
        }
        let mut choice: Option<(Ps, bool, u64, usize)> = None;
        for &b in &touched {
            let Some((i, hit)) = self.best[b].take() else {
                continue;
            };
            let q = &self.queue[i];
            let bank = &self.banks[b];
            let first = match bank.open {
                Some(o) if hit => q.arrival.max(o.col_ready),
                Some(o) => o.pre_ready,
                None => q.arrival.max(bank.act_ready),
            };
            let key = (first, !hit, q.seq, i);
            if choice.is_none_or(|c| (key.0, key.1, key.2) < (c.0, c.1, c.2)) {
                choice = Some(key);
            }
        }
        self.touched = touched;
        choice.map(|c| (c.0, c.3))
    }

    /// One scheduling step: a due refresh, or one request (all its
    /// commands). `limit`: only what starts before it (refresh: due at or
    /// before it). Returns the scheduled request, `None` if nothing was
    /// scheduled.
    pub(crate) fn step(&mut self, limit: Option<Ps>) -> Option<Done> {
        loop {
            let cand = self.pick();
            if self.next_ref != Ps::MAX {
                let due = self.next_ref;
                let before_cand = cand.is_none_or(|(f, _)| due <= f);
                let in_limit = match limit {
                    Some(l) => due <= l,
                    None => cand.is_some(),
                };
                if before_cand && in_limit {
                    // With nothing the scheduler would pick (`read-first`
                    // holding writes below its watermark: a choice of the
                    // queue's make-up, not of time) nothing issues between
                    // the refreshes due by `limit` either.
                    self.refresh(limit, cand.is_none());
                    continue;
                }
            }
            return match cand {
                Some((first, i)) if limit.is_none_or(|l| first < l) => Some(self.commit(i)),
                _ => None,
            };
        }
    }

    /// Schedules `req` with nothing else queued: what queuing it and calling
    /// `step(None)` does, without the queue. Every scheduler picks a lone
    /// read (`read-first` ends a drain: no writes are left), and the
    /// refreshes due by its first command come first.
    pub(crate) fn schedule_alone(&mut self, req: Req) -> Done {
        debug_assert!(self.queue.is_empty() && !req.write);
        self.draining = false;
        while self.next_ref != Ps::MAX && self.next_ref <= self.first_command(&req) {
            self.refresh(None, true);
        }
        self.commit_req(req)
    }

    /// When the first command of queued request `q` (PRE, ACT or the column
    /// command) can issue.
    pub(crate) fn first_command(&self, q: &Req) -> Ps {
        let bank = &self.banks[q.bank];
        match bank.open {
            Some(o) if self.is_hit(q) => q.arrival.max(o.col_ready),
            Some(o) => o.pre_ready,
            None => q.arrival.max(bank.act_ready),
        }
    }

    /// Schedules queued request `i` completely: PRE if another row is open,
    /// ACT if needed, then its column command.
    pub(crate) fn commit(&mut self, i: usize) -> Done {
        let q = self.queue.remove(i);
        self.commit_req(q)
    }

    /// Schedules request `q`, taken off the queue (or never queued),
    /// completely: PRE if another row is open, ACT if needed, then its
    /// column command.
    #[inline(always)]
    pub(crate) fn commit_req(&mut self, q: Req) -> Done {
        // Which times are already on the DRAM clock (or saturated, which
        // rounding keeps), given `Timing::on_tck`: every arrival (a
        // controller clock time), every command time (rounded when
        // decided), and a row's `col_ready` and `pre_ready` when DDR3's
        // hooks timed it (command times plus DDR3 latencies). An NVMM
        // method's times and a bank's `act_ready` after its precharge are
        // rounded as they come.
        let b = q.bank;
        let hit = self.is_hit(&q);
        if !hit {
            if let Some(o) = self.banks[b].open {
                let at = if self.t.on_tck && self.is_ddr3(o.region) {
                    self.known_on_tck(o.pre_ready)
                } else {
                    self.t.tck_grid.up(o.pre_ready)
                };
                self.close_on_tck(b, at);
            }
            let act_ready = self.banks[b].act_ready;
            let act = if self.t.on_tck && act_ready <= q.arrival {
                self.act_slot_on_tck(q.rank as usize, b, self.known_on_tck(q.arrival))
            } else {
                self.act_slot(q.rank as usize, b, q.arrival.max(act_ready))
            };
            let acts = &mut self.acts[q.rank as usize];
            insert_sorted(acts, act, |&a| a <= act);
            if self.t.groups > 1 {
                let g = self.group_of(b);
                insert_sorted(&mut self.group_acts[g], act, |&a| a <= act);
            }
            let opened = method_of(&mut self.regions, q.region).activate(act, &self.spec);
            self.open_banks[b / 64] |= 1 << (b % 64);
            self.banks[b].open = Some(OpenRow {
                row: q.row,
                region: q.region,
                col_ready: opened.col_ready,
                pre_ready: opened.pre_ready,
                pre_spec: act.saturating_add(self.t.ras),
                dirty: false,
            });
            self.log_bank(act, CommandKind::Act, b, q.row);
        }
        let counted = q.epoch == self.epoch;
        if let Some(r) = self.regions.get_mut(q.region).filter(|_| counted) {
            if hit {
                r.stats.row_hits += 1;
            } else {
                r.stats.acts += 1;
            }
        }
        let o = self.banks[b].open.unwrap_or(OpenRow {
            row: q.row,
            region: q.region,
            col_ready: q.arrival,
            pre_ready: q.arrival,
            pre_spec: q.arrival,
            dirty: false,
        });
        let lb = q.arrival.max(o.col_ready);
        let col = if self.t.on_tck && self.is_ddr3(o.region) {
            self.col_slot_on_tck(self.known_on_tck(lb), q.write, b)
        } else {
            self.col_slot(lb, q.write, b)
        };
        let t = &self.t;
        let lat = if q.write { t.cwl } else { t.cl };
        let data_end = col.saturating_add(lat).saturating_add(t.burst);
        let slot = BusSlot {
            cmd: col,
            start: col.saturating_add(lat),
            end: data_end,
        };
        insert_sorted(&mut self.bus, slot, |s| s.cmd <= col);
        if self.t.groups > 1 {
            let g = self.group_of(b);
            insert_sorted(&mut self.group_cols[g], col, |&x| x <= col);
        }
        // Earliest PRE: the row's keep-open time from the ACT (already in
        // pre_ready), tRTP after a read, tWR after the write data; then
        // whatever the method of the region that opened the row adds.
        let recovery = if q.write {
            data_end.saturating_add(t.wr)
        } else {
            col.saturating_add(t.rtp)
        };
        let access = if q.write { Access::Write } else { Access::Read };
        let pre_ready =
            method_of(&mut self.regions, o.region).column(access, col, o.pre_ready.max(recovery));
        let pre_spec = o.pre_spec.max(recovery);
        let epoch = q.epoch;
        let bank = &mut self.banks[b];
        bank.open = Some(OpenRow {
            pre_ready,
            pre_spec,
            dirty: o.dirty || q.write,
            ..o
        });
        if q.write {
            bank.pending.push((q.region, q.issue, epoch));
            insert_sorted(&mut self.wr_pending, (col, q.line), |w| w.0 <= col);
        }
        let kind = if q.write {
            CommandKind::Wr
        } else {
            CommandKind::Rd
        };
        self.log_bank(col, kind, b, q.row);
        Done { seq: q.seq, col }
    }
}

/// Which requests a scheduling choice may take.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Only {
    Any,
    Reads,
    Writes,
}

/// `read-first`'s write-queue watermarks for a queue of `cap` entries:
/// drain from 85% full down to half full (gem5's defaults), at least one
/// write per drain.
pub(crate) fn write_watermarks(cap: usize) -> (usize, usize) {
    let high = (cap * 85).div_ceil(100).max(1);
    (high, (cap / 2).min(high - 1))
}

/// Inserts `x` into the sorted `list` after every entry for which `before`
/// holds (a prefix): at the end without a search when the last one does,
/// the common case of requests arriving in time order.
#[inline(always)]
pub(crate) fn insert_sorted<T>(list: &mut Vec<T>, x: T, before: impl Fn(&T) -> bool) {
    if list.last().is_none_or(&before) {
        list.push(x);
    } else {
        let pos = list.partition_point(before);
        list.insert(pos, x);
    }
}
