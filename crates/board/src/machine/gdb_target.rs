//! gdb's view of the machine (`--gdb`).

use super::*;
use rvnvmm_mem::sv39::{page_offset, PAGE_SIZE};

/// gdb's view of the board: hart `h` is thread `h + 1`; memory is what
/// the thread's hart sees through its current translation (RAM only: no
/// device register is read or written on gdb's behalf).
impl Target for Machine {
    fn threads(&self) -> Vec<u64> {
        (1..=self.harts.len() as u64).collect()
    }

    fn hart(&self, thread: u64) -> Option<&Hart> {
        self.harts
            .get(usize::try_from(thread.checked_sub(1)?).ok()?)
    }

    fn hart_mut(&mut self, thread: u64) -> Option<&mut Hart> {
        self.harts
            .get_mut(usize::try_from(thread.checked_sub(1)?).ok()?)
    }

    fn read_memory(&mut self, thread: u64, addr: u64, buf: &mut [u8]) -> bool {
        let Some(hart) = Target::hart(self, thread) else {
            return false;
        };
        each_page(addr, buf.len(), |va, range| {
            hart.debug_translate(&self.mem, va)
                .is_some_and(|pa| self.mem.read(pa, &mut buf[range]))
        })
    }

    fn write_memory(&mut self, thread: u64, addr: u64, data: &[u8]) -> bool {
        let Some(hart) = usize::try_from(thread.wrapping_sub(1))
            .ok()
            .and_then(|h| self.harts.get(h))
        else {
            return false;
        };
        let (mem, code) = (&mut self.mem, &mut self.code);
        each_page(addr, data.len(), |va, range| {
            let Some(pa) = hart.debug_translate(mem, va) else {
                return false;
            };
            let ok = mem.write(pa, &data[range]);
            code.pages.code_written(pa & !0xfff);
            ok
        })
    }

    fn full_system(&self) -> bool {
        true
    }
}

/// Calls `f` with each page's virtual address and byte range of an access
/// of `len` bytes at `addr`, while it succeeds.
pub(super) fn each_page(
    addr: u64,
    len: usize,
    mut f: impl FnMut(u64, std::ops::Range<usize>) -> bool,
) -> bool {
    let mut done = 0usize;
    while done < len {
        let va = addr.wrapping_add(done as u64);
        let n = ((PAGE_SIZE - page_offset(va)) as usize).min(len - done);
        if !f(va, done..done + n) {
            return false;
        }
        done += n;
    }
    true
}
