//! Zawrs (`insns/zawrs.rs`): wait-on-reservation-set.

use crate::trap::Flow;
use crate::{Exit, Hart};

impl Hart {
    /// Executes `wrs.nto` or `wrs.sto`: the wait may end at once for any
    /// reason, so it does; in user mode the hart is offered to the other
    /// threads first, as a spinning waiter would want.
    #[inline(always)]
    pub(super) fn exec_zawrs<const FULL: bool>(&mut self) -> Flow {
        if FULL {
            Flow::Next
        } else {
            Flow::Exit(Exit::Yield)
        }
    }
}
