//! The board machine as its run control (`rvnvmm_runctl`) drives it: all
//! harts' instructions, the hart that ran last (the one that ran a
//! marker), the statistics JSON of [`crate::stats`] for a snapshot.

use crate::machine::Machine;
use rvnvmm_runctl::{Controlled, Model, ResetPoint, SampleCounters};

impl Controlled for Machine {
    type Stats = serde_json::Value;

    fn instructions(&self) -> u64 {
        Machine::instructions(self)
    }

    fn hart_time_ns(&self) -> u64 {
        self.cores()[self.last_pc().0].time_ns()
    }

    fn switch_model(&mut self, to: Model) -> Result<bool, String> {
        self.set_timing(to == Model::Timing)
            .map_err(|e| format!("a `switch` marker was ignored: {e}"))
    }

    fn reset_stats(&mut self) -> ResetPoint {
        Machine::reset_stats(self);
        let base = self.stats_base().cloned().unwrap_or_default();
        ResetPoint {
            instructions: base.instructions,
            sim_time_ns: base.sim_time_ns,
        }
    }

    fn stats(&mut self) -> serde_json::Value {
        crate::stats::stats_json(self, false)
    }

    fn read_guest_string(&mut self, addr: u64, max: usize) -> Option<Vec<u8>> {
        Machine::read_guest_string(self, self.last_pc().0, addr, max)
    }

    fn sample_counters(&mut self) -> SampleCounters {
        let cycles = self.cores().iter().map(|c| c.cycles).max().unwrap_or(0);
        let instructions = Machine::instructions(self);
        SampleCounters::of(instructions, cycles, self.any_memsys_mut().map(|m| &*m))
    }

    fn cycles_to_ns(&self, cycles: u64) -> u64 {
        (u128::from(cycles) * 1_000_000_000 / u128::from(self.clock_hz().max(1))) as u64
    }
}
