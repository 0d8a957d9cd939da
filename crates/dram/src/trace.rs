//! The command trace (`set_trace`): every command the controller issues,
//! for tests and for `rvnvmm bench` to show.
use crate::{Command, CommandKind, Controller, Ps};
impl Controller {
    /// Turns the command trace on (cleared) or off.
    pub fn set_trace(&mut self, on: bool) {
        self.trace = on.then(Vec::new);
    }

    /// Takes the commands traced so far, sorted by time (commands of
    /// different banks are decided out of time order; automatic precharges
    /// appear once decided, e.g. after [`Controller::advance`]).
    pub fn take_trace(&mut self) -> Vec<Command> {
        let mut v = self.trace.as_mut().map(std::mem::take).unwrap_or_default();
        v.sort_by_key(|c| c.at);
        v
    }

    pub(crate) fn log(&mut self, at: Ps, kind: CommandKind, rank: u32, bank: u32, row: u64) {
        if let Some(t) = &mut self.trace {
            t.push(Command {
                at,
                kind,
                rank,
                bank,
                row,
            });
        }
    }

    /// [`Controller::log`] of a command to bank index `b`: the split into
    /// rank and bank (a division) only when the trace is on.
    pub(crate) fn log_bank(&mut self, at: Ps, kind: CommandKind, b: usize, row: u64) {
        if self.trace.is_some() {
            let (rank, bank) = self.split_bank(b);
            self.log(at, kind, rank, bank, row);
        }
    }
}
