//! `fine` (TUNA v2, seed 000 §3.2): tRCD becomes the NVMM read latency and
//! tRP of a written row the NVMM write latency (of every row with
//! `trp_on = "always"`, seed 001 §3.1's modified MIG).

use rvnvmm_config::{NvmmParams, TrpOn};

use super::{Activation, NvmmMethod, Registration, Spec};
use crate::Ps;

/// Registers `fine`.
pub const REGISTRATION: Registration = Registration {
    name: "fine",
    build: |p, spec| Box::new(Fine::new(p, spec)),
};

/// The fine-grain method's row timing, in ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fine {
    /// ACT → column command: the NVMM read (`trcd_ns`).
    pub rcd: Ps,
    /// PRE → ACT of a written row: the NVMM write (`trp_ns`).
    pub rp_dirty: Ps,
    /// PRE → ACT of a clean row: DDR3 tRP, or `trp_ns` with
    /// `trp_on = "always"`.
    pub rp_clean: Ps,
}

impl Fine {
    /// The row timing of settings `p` on a controller with DDR3 timing `spec`.
    pub fn new(p: &NvmmParams, spec: &Spec) -> Fine {
        let rp_dirty = spec.controller_clocks(p.trp_ns);
        Fine {
            rcd: spec.controller_clocks(p.trcd_ns),
            rp_dirty,
            rp_clean: match p.trp_on {
                TrpOn::Dirty => spec.rp,
                TrpOn::Always => rp_dirty,
            },
        }
    }

    /// PRE at `at`: the cells hold the row `tRP` later.
    pub(crate) fn written_back(&self, at: Ps, dirty: bool) -> Ps {
        at.saturating_add(if dirty { self.rp_dirty } else { self.rp_clean })
    }
}

impl NvmmMethod for Fine {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn activate(&mut self, at: Ps, spec: &Spec) -> Activation {
        Activation {
            col_ready: at.saturating_add(self.rcd),
            pre_ready: at.saturating_add(spec.ras),
        }
    }

    fn precharge(&mut self, at: Ps, dirty: bool, _spec: &Spec) -> Ps {
        self.written_back(at, dirty)
    }
}
