//! Banks and the command bus: closing rows, and the earliest slot on the
//! DRAM clock grid an ACT (tRRD, tFAW) or a column command (tCCD, the data
//! bus) may take.
use crate::regions::method_of;
use crate::stats::hist_add;
use crate::{CommandKind, Controller, Grid, Ps};

/// The earliest time on `grid` at or after `at` that is at least `gap`
/// from every time of the sorted `list` after it is reached (a bank
/// group's tRRD_L or tCCD_L), and whether it moved.
fn clear_of(list: &[Ps], mut at: Ps, gap: Ps, grid: &Grid) -> (Ps, bool) {
    let lo = list.partition_point(|&x| x.saturating_add(gap) <= at);
    let mut moved = false;
    for &x in &list[lo..] {
        if x >= at.saturating_add(gap) {
            break;
        }
        at = grid.up(x.saturating_add(gap));
        moved = true;
    }
    (at, moved)
}
impl Controller {
    pub(crate) fn split_bank(&self, b: usize) -> (u32, u32) {
        let per = self.banks_per_rank.max(1) as usize;
        ((b / per) as u32, (b % per) as u32)
    }

    /// The index of bank `b`'s bank group among all ranks' groups (into
    /// `group_acts`, `group_cols`): group `bank % groups` of its rank, the
    /// lowest bits of the bank index. Only with `Timing::groups > 1`.
    #[inline(always)]
    pub(crate) fn group_of(&self, b: usize) -> usize {
        let (rank, bank) = self.split_bank(b);
        rank as usize * self.t.groups + bank as usize % self.t.groups
    }

    /// Precharges bank `b` at `at`: its row goes back to the cells, writes in
    /// it complete at `at + tRP`.
    #[inline(always)]
    pub(crate) fn close(&mut self, b: usize, at: Ps) {
        self.close_on_tck(b, self.t.tck_grid.up(at));
    }

    /// [`Controller::close`] at `at`, already on the DRAM clock.
    #[inline(always)]
    pub(crate) fn close_on_tck(&mut self, b: usize, at: Ps) {
        let Some(o) = self.banks[b].open.take() else {
            return;
        };
        self.open_banks[b / 64] &= !(1 << (b % 64));
        let done = method_of(&mut self.regions, o.region).precharge(at, o.dirty, &self.spec);
        let bank = &mut self.banks[b];
        bank.act_ready = bank.act_ready.max(done);
        self.act_ready_max = self.act_ready_max.max(bank.act_ready);
        // A row write-back wears the NVMM cells; one holding only writes of
        // an earlier statistics period is not counted in this one.
        if o.dirty && bank.pending.iter().any(|p| p.2 == self.epoch) {
            if let Some(r) = self.regions.get_mut(o.region).filter(|r| r.nvmm.is_some()) {
                r.wear.add(((b as u64) << 32) | (o.row & 0xFFFF_FFFF));
            }
        }
        let bank = &mut self.banks[b];
        if bank.pending.is_empty() {
            self.log_bank(at, CommandKind::Pre, b, o.row);
            return;
        }
        let pending = std::mem::take(&mut bank.pending);
        for &(region, issue, epoch) in &pending {
            if epoch != self.epoch {
                continue;
            }
            if let Some(r) = self.regions.get_mut(region) {
                let lat = done.saturating_sub(issue);
                r.stats.writes_done += 1;
                r.stats.write_latency_ps_sum = r.stats.write_latency_ps_sum.saturating_add(lat);
                hist_add(&mut r.stats.write_latency_hist, lat);
            }
        }
        let mut pending = pending;
        pending.clear();
        self.banks[b].pending = pending;
        self.log_bank(at, CommandKind::Pre, b, o.row);
    }

    /// Whether region index `region` is timed by DDR3's hooks (a DRAM
    /// region, or no region), as [`method_of`] decides.
    #[inline(always)]
    pub(crate) fn is_ddr3(&self, region: usize) -> bool {
        self.regions.get(region).is_none_or(|r| r.nvmm.is_none())
    }

    /// `t`, which the caller knows to be on the DRAM clock (or saturated):
    /// what rounding it would give. The unit tests check each such claim.
    #[inline(always)]
    pub(crate) fn known_on_tck(&self, t: Ps) -> Ps {
        #[cfg(test)]
        assert_eq!(self.t.tck_grid.up(t), t, "{t} ps is off the DRAM clock");
        t
    }

    /// Earliest ACT of bank `b` at or after `lb` in `rank` respecting tRRD
    /// (tRRD_L within its bank group) and tFAW against the ACTs already
    /// decided (which may lie on both sides).
    #[inline(always)]
    pub(crate) fn act_slot(&self, rank: usize, b: usize, lb: Ps) -> Ps {
        self.act_slot_on_tck(rank, b, self.t.tck_grid.up(lb))
    }

    /// [`Controller::act_slot`] from `at`, already on the DRAM clock.
    #[inline(always)]
    pub(crate) fn act_slot_on_tck(&self, rank: usize, b: usize, at: Ps) -> Ps {
        // No recent ACT (a lightly loaded rank, after `prune`): nothing
        // constrains this one (a group's ACTs are among its rank's).
        if self.acts[rank].is_empty() {
            return at;
        }
        self.act_slot_among(rank, b, at)
    }

    /// [`Controller::act_slot`] from `at` (on the DRAM clock) with recent
    /// ACTs in `rank` to keep clear of.
    pub(crate) fn act_slot_among(&self, rank: usize, b: usize, mut at: Ps) -> Ps {
        let t = &self.t;
        let acts = &self.acts[rank];
        let reach = t.act_reach;
        loop {
            // Only ACTs within `reach` of `at` matter (sorted list).
            let lo = acts.partition_point(|&a| a.saturating_add(reach) <= at);
            let hi = acts.partition_point(|&a| a < at.saturating_add(reach));
            let near = &acts[lo..hi];
            let mut moved = false;
            for &a in near {
                if at < a.saturating_add(t.rrd) && a < at.saturating_add(t.rrd) {
                    at = t.tck_grid.up(a.saturating_add(t.rrd));
                    moved = true;
                }
            }
            if let Some(faw) = t.faw {
                for w in near.windows(4) {
                    let lo = w[0].min(at);
                    let hi = w[3].max(at);
                    if hi - lo < faw {
                        at = t.tck_grid.up(w[0].saturating_add(faw));
                        moved = true;
                    }
                }
            }
            if t.groups > 1 {
                // tRRD_L to the ACTs of the bank's own group.
                let (later, group_moved) =
                    clear_of(&self.group_acts[self.group_of(b)], at, t.rrd_l, &t.tck_grid);
                at = later;
                moved |= group_moved;
            }
            if !moved || at == Ps::MAX {
                return at;
            }
        }
    }

    /// Earliest column command to bank `b` at or after `lb` whose data
    /// burst does not overlap another and which keeps tCCD to the other
    /// column commands (tCCD_L to those of its bank group).
    #[inline(always)]
    pub(crate) fn col_slot(&self, lb: Ps, write: bool, b: usize) -> Ps {
        self.col_slot_on_tck(self.t.tck_grid.up(lb), write, b)
    }

    /// [`Controller::col_slot`] from `c`, already on the DRAM clock.
    #[inline(always)]
    pub(crate) fn col_slot_on_tck(&self, c: Ps, write: bool, b: usize) -> Ps {
        // No recent column command (after `prune`): the channel is free
        // (a group's commands are among the channel's).
        if self.bus.is_empty() {
            return c;
        }
        self.col_slot_among(c, write, b)
    }

    /// [`Controller::col_slot`] from `c` (on the DRAM clock) with recent
    /// column commands to keep clear of.
    pub(crate) fn col_slot_among(&self, mut c: Ps, write: bool, b: usize) -> Ps {
        let t = &self.t;
        let lat = if write { t.cwl } else { t.cl };
        let reach = t.col_reach;
        loop {
            // Only commands within `reach` of `c` matter (sorted list).
            let lo = self
                .bus
                .partition_point(|s| s.cmd.saturating_add(reach) <= c);
            let hi = self
                .bus
                .partition_point(|s| s.cmd < c.saturating_add(reach));
            let mut moved = false;
            for s in &self.bus[lo..hi] {
                if c < s.cmd.saturating_add(t.ccd) && s.cmd < c.saturating_add(t.ccd) {
                    c = t.tck_grid.up(s.cmd.saturating_add(t.ccd));
                    moved = true;
                }
                let start = c.saturating_add(lat);
                let end = start.saturating_add(t.burst);
                if start < s.end && s.start < end {
                    c = t.tck_grid.up(c.max(s.end.saturating_sub(lat)));
                    moved = true;
                }
            }
            if t.groups > 1 {
                // tCCD_L to the column commands of the bank's own group.
                let (later, group_moved) =
                    clear_of(&self.group_cols[self.group_of(b)], c, t.ccd_l, &t.tck_grid);
                c = later;
                moved |= group_moved;
            }
            if !moved || c == Ps::MAX {
                return c;
            }
        }
    }
}
