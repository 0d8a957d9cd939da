//! The machine's checkpoint sections (`docs/checkpoints.md`).

use super::*;

/// The checkpoint section of the machine's own state.
pub(super) const MACHINE_SECTION: &str = "machine";
/// The checkpoint section of the board's devices.
pub(super) const BOARD_SECTION: &str = "board";
/// The checkpoint section of host input not yet passed to the UART.
pub const CONSOLE_INPUT_SECTION: &str = "console-input";
/// The checkpoint section of the console output recorded.
pub const CONSOLE_OUTPUT_SECTION: &str = "console-output";

/// The checkpoint section of hart `h`.
pub(super) fn hart_section(h: usize) -> String {
    format!("hart{h}")
}

/// Checkpoints (`docs/checkpoints.md`): the architectural state of the
/// harts, their cores' clocks and `wfi` states, the board's devices, the
/// counters and statistics baseline, the console input not yet consumed,
/// and RAM. Decoded code, software TLBs and the memory-system model are not
/// saved: a restored machine starts them empty (cold).
impl Machine {
    /// Writes the machine into `sections` (RAM too with `memory`), at a
    /// point between turns of the scheduler (a marker or the end of a
    /// [`Machine::run`]).
    pub fn save(&mut self, sections: &mut Sections, memory: bool) -> Result<(), CheckpointError> {
        let mut w = StateWriter::new();
        self.board.save(&mut w)?;
        sections.insert(BOARD_SECTION, w.into_bytes());
        for (h, hart) in self.harts.iter().enumerate() {
            sections.save(hart_section(h), hart);
        }
        sections.write(MACHINE_SECTION, |w| {
            w.u64(self.insns);
            w.count(self.harts.len());
            for (core, state) in self.cores.iter().zip(&self.state) {
                w.u64(core.cycles);
                w.bool(*state == State::Wfi);
            }
            w.u64(self.code.blocks_decoded);
            w.u64(self.last_hart as u64);
            w.bool(self.stats_base.is_some());
            if let Some(b) = &self.stats_base {
                w.u64(b.instructions);
                w.u64s(&b.hart_instructions);
                w.u64s(&b.cycles);
                w.u64(b.sim_time_ns);
                w.u64(b.blocks_decoded);
                w.u64s(&b.ipis.iter().flat_map(|&(r, s)| [r, s]).collect::<Vec<_>>());
            }
            w.bytes(&self.input.queued_bytes());
        });
        sections.write(CONSOLE_INPUT_SECTION, |w| {
            w.bytes(&self.host_input.queued_bytes())
        });
        sections.write(CONSOLE_OUTPUT_SECTION, |w| self.console.save(w));
        if memory {
            self.mem.save(sections);
        }
        Ok(())
    }

    /// Reads a checkpoint back into this machine, freshly built from the
    /// same memory map, harts and devices (RAM too with `memory`; with
    /// `host_side`, the host input not yet consumed then and the console
    /// output recorded). The timing model, if any, is this machine's, cold.
    pub fn restore(
        &mut self,
        sections: &Sections,
        memory: bool,
        host_side: bool,
    ) -> Result<(), CheckpointError> {
        let n = self.harts.len();
        sections.read(BOARD_SECTION, |r| self.board.restore(r))?;
        for (h, hart) in self.harts.iter_mut().enumerate() {
            sections.restore(&hart_section(h), hart)?;
        }
        sections.read(MACHINE_SECTION, |r| {
            self.insns = r.u64()?;
            r.exact_len(n, "harts")?;
            for h in 0..n {
                self.cores[h].cycles = r.u64()?;
                self.state[h] = if r.bool()? {
                    State::Wfi
                } else {
                    State::Running
                };
            }
            self.code.blocks_decoded = r.u64()?;
            self.last_hart = usize::try_from(r.u64()?)
                .ok()
                .filter(|&h| h < n)
                .ok_or_else(|| r.malformed("the last hart is not a hart"))?;
            self.stats_base = if r.bool()? {
                let instructions = r.u64()?;
                let hart_instructions = r.u64s(n)?;
                let cycles = r.u64s(n)?;
                let sim_time_ns = r.u64()?;
                let blocks_decoded = r.u64()?;
                let ipis = r.u64s(2 * n)?;
                Some(StatsBase {
                    instructions,
                    hart_instructions,
                    cycles,
                    sim_time_ns,
                    blocks_decoded,
                    ipis: ipis.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
                })
            } else {
                None
            };
            self.input.push(r.bytes(usize::MAX)?);
            Ok(())
        })?;
        if host_side {
            sections.read(CONSOLE_INPUT_SECTION, |r| {
                self.host_input.push(r.bytes(usize::MAX)?);
                Ok(())
            })?;
            sections.read(CONSOLE_OUTPUT_SECTION, |r| self.console.restore(r))?;
        }
        if memory {
            self.mem.restore(sections)?;
        }
        sync_lines(&self.board, &self.lines);
        Ok(())
    }

    /// Takes guest RAM out of this machine (leaving it none), to be moved
    /// into one rebuilt from a checkpoint of it.
    pub fn take_mem(&mut self) -> PhysMem {
        std::mem::take(&mut self.mem)
    }

    /// Holds host input back until every hart first sleeps in `wfi` (a
    /// restored machine: the guest has its console open, and whatever it
    /// was doing at the checkpoint, such as a program ending and the shell
    /// coming back to its prompt, finishes first), so input given at the
    /// start arrives at the same point of the run whatever the host's
    /// timing.
    pub fn hold_input_until_idle(&mut self) {
        self.input_held = true;
    }

    /// Feeds the UART from `input` (host input already arriving) instead
    /// of the machine's own queue.
    pub fn set_host_input(&mut self, input: InputQueue) {
        self.host_input = input;
    }
}
