//! Page heat in user mode (`--page-heat`, docs/page-heat.md): the model's
//! windows by physical page, and the same windows by the process's virtual
//! pages, looked up in its page tables when each window is written.
use crate::process::Process;
use crate::vm::{AddressSpace, PTE_DEVICE};
use rvnvmm_hart::PageCounts;
use rvnvmm_heat::{Recorder, VirtualPage, PAGE_SHIFT};
use rvnvmm_mem::{sv39, PhysMem};

/// Which virtual page holds each frame: runs of frames mapped by runs of
/// pages (a superpage is one run), sorted by frame.
pub(crate) struct ReverseMap {
    /// (first frame number, frames, first virtual page number, node).
    runs: Vec<(u64, u64, u64, u32)>,
}

impl ReverseMap {
    /// The process's mappings now. A frame mapped twice is given to its
    /// lowest virtual page.
    pub(crate) fn of(aspace: &AddressSpace, mem: &PhysMem) -> ReverseMap {
        let mut runs = Vec::new();
        sv39::for_each_leaf(mem, aspace.root, &mut |va, pte, level| {
            if pte.0 & PTE_DEVICE != 0 {
                return;
            }
            let frame = sv39::frame_of(pte, level, va);
            let Some(pool) = aspace.frames.pool_of_frame(frame) else {
                return;
            };
            let pages = 1u64 << (9 * level);
            runs.push((
                frame >> PAGE_SHIFT,
                pages,
                va >> PAGE_SHIFT,
                aspace.numa.node_of_pool(pool),
            ));
        });
        runs.sort_unstable();
        runs.dedup_by_key(|r| r.0);
        ReverseMap { runs }
    }

    /// The virtual page and node of frame `frame` (a page number).
    pub(crate) fn find(&self, frame: u64) -> Option<(u64, u32)> {
        let i = self.runs.partition_point(|r| r.0 <= frame).checked_sub(1)?;
        let (first, n, vpage, node) = self.runs[i];
        (frame < first + n).then(|| (vpage + (frame - first), node))
    }
}

impl Process {
    /// Records page heat into `recorder` from now on (the machine must be
    /// timed: the model counts).
    pub fn with_page_heat(mut self, recorder: Recorder) -> Process {
        if let Some(m) = self.any_memsys() {
            m.record_page_heat(recorder.window_ns());
        }
        self.page_heat = Some(recorder);
        self
    }

    /// Writes the windows no request can reach any more; `end`: every
    /// window and the end block (the result says whether the whole file
    /// was written).
    pub(crate) fn pump_page_heat(&mut self, end: bool) -> Result<(), String> {
        let Some(mut recorder) = self.page_heat.take() else {
            return Ok(());
        };
        let parked = self
            .roi
            .models
            .as_mut()
            .and_then(|m| m.parked.as_deref_mut());
        let Some(model) = self.memsys.as_deref_mut().or(parked) else {
            self.page_heat = Some(recorder);
            return Ok(());
        };
        let (aspace, mem, pid) = (&self.memory.aspace, &self.memory.phys, self.pid as u32);
        let mut reverse: Option<ReverseMap> = None;
        let mut by_virtual = |pages: &[(u64, PageCounts)], out: &mut Vec<VirtualPage>| {
            let map = reverse.get_or_insert_with(|| ReverseMap::of(aspace, mem));
            out.extend(pages.iter().filter_map(|&(frame, counts)| {
                let (page, node) = map.find(frame)?;
                Some(VirtualPage {
                    pid,
                    page,
                    node,
                    counts,
                })
            }));
        };
        if end {
            return recorder.finish(model, Some(&mut by_virtual));
        }
        recorder.pump(model, false, Some(&mut by_virtual));
        self.page_heat = Some(recorder);
        Ok(())
    }

    /// A forked child records nothing: the file is the initial process's.
    pub(crate) fn drop_page_heat_in_child(&mut self) {
        if let Some(recorder) = self.page_heat.take() {
            recorder.abandon();
        }
        if let Some(m) = self.memsys.as_deref_mut() {
            m.record_page_heat(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::Backing;
    use rvnvmm_mem::sv39::PAGE_SIZE;

    #[test]
    fn frames_map_back_to_their_pages_and_nodes() {
        let ranges = [(0x8000_0000, 0x40_0000), (0x9000_0000, 0x40_0000)];
        let mut mem = PhysMem::new(&ranges).unwrap();
        let mut a = AddressSpace::with_pools(&mut mem, &ranges, 0).unwrap();
        a.numa = crate::numa::NodeMap::new(&[0, 1], 0, &[]);
        a.add(0x10_0000, 0x20_0000, 3, Backing::Heap, "[heap]");
        for i in 0..3 {
            a.handle_fault(&mut mem, 0x10_0000 + i * PAGE_SIZE, true, false)
                .unwrap();
        }
        a.move_page(&mut mem, 0x10_1000, 1).unwrap();
        let map = ReverseMap::of(&a, &mem);
        for i in 0..3 {
            let va = 0x10_0000 + i * PAGE_SIZE;
            let (_, pte, level) = sv39::find_leaf(&mem, a.root, va).unwrap();
            let frame = sv39::frame_of(pte, level, va) >> PAGE_SHIFT;
            let node = u32::from(i == 1);
            assert_eq!(map.find(frame), Some((va >> PAGE_SHIFT, node)), "page {i}");
        }
        assert_eq!(map.find(0x7_0000), None);
    }
}
