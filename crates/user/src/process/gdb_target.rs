//! gdb's view of the process (`rvnvmm run --gdb`).

use super::{Process, ThreadState};
use rvnvmm_gdb::Target;
use rvnvmm_hart::Hart;

/// gdb's view of the process: its live threads by thread id, memory as
/// `ptrace` reaches it (faulting pages in, as Linux does).
impl Target for Process {
    fn threads(&self) -> Vec<u64> {
        self.threads
            .all
            .iter()
            .filter(|t| t.state != ThreadState::Exited)
            .map(|t| t.tid as u64)
            .collect()
    }

    fn hart(&self, thread: u64) -> Option<&Hart> {
        self.threads
            .all
            .iter()
            .find(|t| t.tid as u64 == thread && t.state != ThreadState::Exited)
            .map(|t| &t.hart)
    }

    fn hart_mut(&mut self, thread: u64) -> Option<&mut Hart> {
        self.threads
            .all
            .iter_mut()
            .find(|t| t.tid as u64 == thread && t.state != ThreadState::Exited)
            .map(|t| &mut t.hart)
    }

    fn read_memory(&mut self, thread: u64, addr: u64, buf: &mut [u8]) -> bool {
        Target::hart(self, thread).is_some_and(|hart| self.memory.peek(hart, addr, buf))
    }

    fn write_memory(&mut self, _thread: u64, addr: u64, data: &[u8]) -> bool {
        self.write_mem(addr, data).is_ok()
    }

    fn full_system(&self) -> bool {
        false
    }
}
