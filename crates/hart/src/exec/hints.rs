//! The hints (`insns/hints.rs`): Zihintpause, Zihintntl, Zicbop.

use crate::trap::Flow;
use crate::Hart;

impl Hart {
    /// Executes a hint: no architectural effect. (A prefetch does not
    /// reach the memory-system model: it would need a non-blocking fill.)
    #[inline(always)]
    pub(super) fn exec_hints(&mut self) -> Flow {
        Flow::Next
    }
}
