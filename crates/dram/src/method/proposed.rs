//! `proposed` (seed 000 §3.3): as `fine`, plus tRAS stretched to
//! `tras_ns` (tRTP and tWR become max(spec, tRAS remaining)), so that the
//! row stays open long enough for a slow blocking CPU to see row-buffer
//! locality and bank parallelism.

use rvnvmm_config::{KeepOpen, NvmmParams};

use super::fine::Fine;
use super::{Activation, NvmmMethod, Registration, Spec};
use crate::{Access, Ps};

/// Registers `proposed`.
pub const REGISTRATION: Registration = Registration {
    name: "proposed",
    build: |p, spec| Box::new(Proposed::new(p, spec)),
};

/// The proposed method's row timing, in ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proposed {
    /// tRCD and tRP as in `fine`.
    pub fine: Fine,
    /// ACT → earliest PRE (`tras_ns`).
    pub ras: Ps,
    /// `keep_open = "restart-at-access"`: column command → earliest PRE
    /// (`tras_ns - trcd_ns`); `None` for `from-act`.
    pub restart: Option<Ps>,
}

impl Proposed {
    /// The row timing of settings `p` on a controller with DDR3 timing `spec`.
    pub fn new(p: &NvmmParams, spec: &Spec) -> Proposed {
        let fine = Fine::new(p, spec);
        let ras = spec.controller_clocks(p.tras_ns);
        Proposed {
            fine,
            ras,
            restart: match p.keep_open {
                KeepOpen::FromAct => None,
                KeepOpen::RestartAtAccess => Some(ras.saturating_sub(fine.rcd)),
            },
        }
    }
}

impl NvmmMethod for Proposed {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn activate(&mut self, at: Ps, _spec: &Spec) -> Activation {
        Activation {
            col_ready: at.saturating_add(self.fine.rcd),
            pre_ready: at.saturating_add(self.ras),
        }
    }

    /// tRTP and tWR are already in `pre_ready`; max(spec, tRAS remaining)
    /// is the same bound. `restart-at-access` reopens the window.
    fn column(&mut self, _access: Access, col: Ps, pre_ready: Ps) -> Ps {
        match self.restart {
            Some(w) => pre_ready.max(col.saturating_add(w)),
            None => pre_ready,
        }
    }

    fn precharge(&mut self, at: Ps, dirty: bool, _spec: &Spec) -> Ps {
        self.fine.written_back(at, dirty)
    }
}
