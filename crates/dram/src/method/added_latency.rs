//! `added-latency` (compiled for tests only): DDR3 timing plus a fixed
//! latency on every activation, with a counter of its own. It shows that a
//! method with state lives in one file plus its line in `methods!`.

use rvnvmm_config::NvmmParams;

use super::{Activation, NvmmMethod, Registration, Spec};
use crate::Ps;

/// Registers `added-latency`.
pub const REGISTRATION: Registration = Registration {
    name: "added-latency",
    build: |_p, _spec| Box::new(AddedLatency::default()),
};

/// The fixed latency every ACT of the region adds before its first column
/// command: 100 ns.
pub const ADDED: Ps = 100_000;

/// DDR3 plus [`ADDED`] per activation, counting the activations it slowed.
#[derive(Debug, Clone, Default)]
pub struct AddedLatency {
    slowed: u64,
}

impl NvmmMethod for AddedLatency {
    fn name(&self) -> &'static str {
        REGISTRATION.name
    }

    fn activate(&mut self, at: Ps, spec: &Spec) -> Activation {
        self.slowed += 1;
        Activation {
            col_ready: at.saturating_add(spec.rcd).saturating_add(ADDED),
            pre_ready: at.saturating_add(spec.ras),
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("slowed_acts", self.slowed)]
    }

    fn reset_counters(&mut self) {
        self.slowed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Controller;

    fn controller(method: &str) -> Controller {
        let nvmm = vec![(
            "nvmm".to_string(),
            0xC000_0000,
            1 << 30,
            Some(NvmmParams::default()),
        )];
        let cfg = rvnvmm_config::ControllerConfig::default();
        let mut c = Controller::new("ddr3", &cfg, &nvmm).unwrap();
        c.set_method("nvmm", method).unwrap();
        c
    }

    #[test]
    fn a_registered_method_runs_through_the_shared_ddr3_path() {
        // One read on a closed bank: ACT, tRCD (+ ADDED), RD, CL + burst,
        // each stage on the 5 ns controller clock.
        let mut plain = Controller::new(
            "ddr3",
            &rvnvmm_config::ControllerConfig::default(),
            &[("dram".to_string(), 0xC000_0000, 1 << 30, None)],
        )
        .unwrap();
        let base = plain.read(0xC000_0000, 0);
        let mut c = controller("added-latency");
        assert_eq!(c.method("nvmm"), Some("added-latency"));
        let slow = c.read(0xC000_0000, 0);
        assert_eq!(slow, base + ADDED);
        // Another row of the same bank, once all is quiet: ADDED again.
        let (t, other) = (1_000_000, 0xC000_0000 + (1 << 20));
        assert_eq!(c.read(other, t), plain.read(other, t) + ADDED);
        c.finish();
        let s = &c.stats()[0];
        assert_eq!(s.acts, 2);
        assert_eq!(s.method, vec![("slowed_acts", 2)]);
        c.reset_stats();
        assert_eq!(c.stats()[0].method, vec![("slowed_acts", 0)]);
        assert!(plain.stats()[0].method.is_empty(), "DDR3 has no counters");
    }
}
