//! Refresh: REF commands every tREFI per rank, closing the open rows first.
use crate::method::{Ddr3, NvmmMethod, OpenWindow};
use crate::{set_bits, CommandKind, Controller, OpenRow, Ps};
impl Controller {
    /// Performs the refresh due at `self.next_ref`: every open row closes at
    /// the due time or as soon as the DDR3 spec tRAS/tRTP/tWR allow (the
    /// refresh path is unaffected by the NVMM methods, seed 001 §3.1: it does
    /// not wait out a stretched tRAS, but a dirty NVMM row still takes the
    /// NVMM tRP to write back), REF issues when all banks are precharged, and
    /// no bank activates for tRFC. `unpicked`: nothing queued can be
    /// scheduled before `limit` (an empty queue, or only requests the
    /// scheduler holds back whatever the time).
    pub(crate) fn refresh(&mut self, limit: Option<Ps>, unpicked: bool) {
        let Some((refi, rfc)) = self.t.refresh else {
            self.next_ref = Ps::MAX;
            return;
        };
        let mut due = self.next_ref;
        // Whether all banks are closed and ready by `due`, and whether the
        // refresh would cut an open row short (never when all are closed, so
        // skipping ahead below leaves it false): only the open banks are
        // looked at.
        let any_open = self.open_banks.iter().any(|&w| w != 0);
        let closed_and_ready = !any_open && self.act_ready_max <= due;
        let mut cuts_a_row = false;
        if any_open {
            for (w, &bits) in self.open_banks.iter().enumerate() {
                for b in set_bits(bits) {
                    let o = self.banks[w * 64 + b].open;
                    cuts_a_row |= o.is_some_and(|o| o.pre_ready > due);
                }
            }
        }
        // Idle and closed: consecutive refreshes leave the same state, so
        // only the last one due by `limit` matters.
        if let Some(l) = limit {
            let idle = (unpicked || self.queue.is_empty()) && closed_and_ready;
            if idle && l > due {
                due += (l - due) / refi * refi;
            }
        }
        // Postpone while the refresh would cut an open row short.
        if cuts_a_row && self.owed < self.t.postpone_max {
            self.owed += 1;
            self.next_ref = due.saturating_add(refi);
            return;
        }
        let count = u64::from(self.owed) + 1;
        self.owed = 0;
        // Every open row closes, in bank order (each close calls its
        // region's method), then REF waits for the latest bank.
        if any_open {
            for w in 0..self.open_banks.len() {
                for b in set_bits(self.open_banks[w]).map(|b| w * 64 + b) {
                    if let Some(o) = self.banks[b].open {
                        let at = self.refresh_close(o, due);
                        self.close(b, at);
                    }
                }
            }
        }
        let ref_at = self.t.tck_grid.up(due.max(self.act_ready_max));
        let ready = ref_at.saturating_add(rfc * count);
        for b in &mut self.banks {
            b.act_ready = ready;
        }
        self.act_ready_max = ready;
        if self.trace.is_some() {
            for k in 0..count {
                for rank in 0..self.acts.len() {
                    self.log(ref_at + k * rfc, CommandKind::Ref, rank as u32, 0, 0);
                }
            }
        }
        self.next_ref = due.saturating_add(refi);
    }

    /// When a refresh due at `due` closes row `o`: its method decides
    /// ([`NvmmMethod::refresh_close`]; a DRAM region's, always DDR3's, and
    /// that of addresses outside every region are called statically).
    pub(crate) fn refresh_close(&self, o: OpenRow, due: Ps) -> Ps {
        let window = OpenWindow {
            pre_ready: o.pre_ready,
            pre_spec: o.pre_spec,
        };
        match self.regions.get(o.region) {
            Some(r) if r.nvmm.is_some() => r.method.refresh_close(window, due),
            _ => Ddr3.refresh_close(window, due),
        }
    }
}
