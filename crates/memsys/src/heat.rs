//! Page heat: what reaches every page in each window of simulated time
//! (`--page-heat`, docs/page-heat.md). The counts are taken where the
//! statistics count the same events (a line read or write at a controller,
//! an L1 miss), so they add up to them.
//!
//! Harts run ahead of one another within the scheduler's tolerance, so a
//! request may come for a window older than the latest one: windows stay
//! open until the low-water mark (no hart can present a request earlier)
//! has passed them.
use crate::time::Ps;
use rvnvmm_timing::{HeatWindow, PageCounts};
use std::collections::BTreeMap;

/// The page size the heat is counted in.
pub const PAGE_SHIFT: u32 = 12;

/// Which count an event adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeatEvent {
    /// A line read reached the page's controller.
    Read,
    /// A line write reached the page's controller.
    Write,
    /// An L1 missed on the page.
    Miss,
}

/// The open windows' counts. Ordered maps, as everywhere in the model:
/// the output is sorted and no order depends on a hash seed.
#[derive(Debug)]
pub(crate) struct PageHeat {
    window_ps: Ps,
    open: BTreeMap<u64, BTreeMap<u64, PageCounts>>,
    /// Windows below this were handed out: a request the low-water mark
    /// did not foresee counts in the first open window instead, so the
    /// file stays in window order.
    closed_below: u64,
    /// A reusable buffer for the window being handed out.
    out: Vec<(u64, PageCounts)>,
}

impl PageHeat {
    pub(crate) fn new(window_ps: Ps) -> PageHeat {
        PageHeat {
            window_ps: window_ps.max(1),
            open: BTreeMap::new(),
            closed_below: 0,
            out: Vec::new(),
        }
    }

    /// Counts `event` on the page of `paddr` at time `t`.
    pub(crate) fn note(&mut self, paddr: u64, t: Ps, event: HeatEvent) {
        let counts = self
            .open
            .entry((t / self.window_ps).max(self.closed_below))
            .or_default()
            .entry(paddr >> PAGE_SHIFT)
            .or_default();
        let field = match event {
            HeatEvent::Read => &mut counts.reads,
            HeatEvent::Write => &mut counts.writes,
            HeatEvent::Miss => &mut counts.misses,
        };
        *field = field.saturating_add(1);
    }

    /// Hands out, in order, the windows that end at or before `low_water`
    /// (every window with `all`) and forgets them.
    pub(crate) fn take(&mut self, low_water: Ps, all: bool, each: &mut dyn FnMut(HeatWindow<'_>)) {
        let first_open = low_water / self.window_ps;
        while let Some(entry) = self.open.first_entry() {
            let window = *entry.key();
            if !all && window >= first_open {
                break;
            }
            self.closed_below = window + 1;
            self.out.clear();
            self.out.extend(entry.remove());
            each((window, &self.out));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(heat: &mut PageHeat, low_water: Ps, all: bool) -> Vec<(u64, Vec<(u64, PageCounts)>)> {
        let mut got = Vec::new();
        heat.take(low_water, all, &mut |(w, pages)| {
            got.push((w, pages.to_vec()))
        });
        got
    }

    #[test]
    fn windows_close_only_when_no_request_can_reach_them() {
        let mut heat = PageHeat::new(1000);
        heat.note(0x8000_1040, 1500, HeatEvent::Read);
        heat.note(0x8000_1fc0, 1999, HeatEvent::Miss);
        heat.note(0x8000_0000, 1000, HeatEvent::Write);
        heat.note(0x8000_0000, 2500, HeatEvent::Read);
        // A request may still come at 1999: window 1 stays open.
        assert!(taken(&mut heat, 1999, false).is_empty());
        let got = taken(&mut heat, 2000, false);
        let c = |reads, writes, misses| PageCounts {
            reads,
            writes,
            misses,
        };
        assert_eq!(
            got,
            [(1, vec![(0x80000, c(0, 1, 0)), (0x80001, c(1, 0, 1))])]
        );
        // A request the low-water mark did not foresee counts in the first
        // open window; the end of the run takes everything.
        heat.note(0x8000_0000, 1200, HeatEvent::Miss);
        let got = taken(&mut heat, 0, true);
        assert_eq!(got, [(2, vec![(0x80000, c(1, 0, 1))])]);
        assert!(taken(&mut heat, u64::MAX, true).is_empty());
    }

    #[test]
    fn counts_saturate() {
        let mut heat = PageHeat::new(10);
        heat.open.entry(0).or_default().insert(
            1,
            PageCounts {
                reads: u32::MAX,
                ..PageCounts::default()
            },
        );
        heat.note(0x1000, 0, HeatEvent::Read);
        let got = taken(&mut heat, 0, true);
        assert_eq!(got[0].1[0].1.reads, u32::MAX);
    }
}
