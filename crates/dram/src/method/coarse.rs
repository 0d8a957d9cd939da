//! `coarse` (TUNA v1, seed 000 §3.1): DDR3 timing, but every request of
//! the region is held at the controller input for a fixed delay.

use rvnvmm_config::NvmmParams;

use super::{NvmmMethod, Registration, Spec};
use crate::{Access, Ps};

/// Registers `coarse`.
pub const REGISTRATION: Registration = Registration {
    name: "coarse",
    build: |p, spec| Box::new(Coarse::new(p, spec)),
};

/// The coarse-grain method's delays, in whole controller clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coarse {
    /// Added to each read at the input (`coarse_read_ns`).
    pub read: Ps,
    /// Added to each write at the input (`coarse_write_ns`).
    pub write: Ps,
}

impl Coarse {
    /// The delays of settings `p`.
    pub fn new(p: &NvmmParams, spec: &Spec) -> Coarse {
        Coarse {
            read: spec.controller_clocks(p.coarse_read_ns),
            write: spec.controller_clocks(p.coarse_write_ns),
        }
    }
}

impl NvmmMethod for Coarse {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn arrival(&mut self, access: Access, at: Ps) -> Ps {
        at.saturating_add(match access {
            Access::Read => self.read,
            Access::Write => self.write,
        })
    }
}
