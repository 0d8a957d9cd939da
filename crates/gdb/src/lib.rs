//! A GDB remote serial protocol stub for rvnvmm: gdb attaches over TCP
//! (loopback only) to a user-mode process or to the full-system board and
//! debugs it as it would a program under QEMU's `-g`/`-gdb`.
//!
//! * [`packet`] frames and checks packets, [`command`] parses them,
//!   [`regs`] maps gdb's register numbers onto a [`Hart`] and writes the
//!   target description; all of it is tested without a socket.
//! * [`Target`] is what a machine offers the stub: its threads (one hart
//!   each), their registers and their virtual memory.
//! * [`GdbStub`] serves one connection. The machine calls
//!   [`GdbStub::poll`] between turns of its scheduler: when a hart stopped
//!   for a breakpoint, watchpoint or step ([`rvnvmm_hart::debug`]), or gdb
//!   sent Ctrl-C, the whole machine stays stopped (no simulated time
//!   passes) while the stub answers gdb, until gdb resumes it.

pub mod command;
pub mod packet;
pub mod regs;
mod stub;

pub use stub::{GdbStub, Verdict};

use rvnvmm_hart::Hart;

/// Errors of the stub's connection.
#[derive(Debug, thiserror::Error)]
pub enum GdbError {
    /// The port could not be listened on.
    #[error("cannot listen for gdb on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// Accepting or talking to gdb failed.
    #[error("gdb connection: {0}")]
    Io(#[from] std::io::Error),
}

/// A machine as the stub sees it: threads numbered from 1, each one hart.
pub trait Target {
    /// The live threads, in order.
    fn threads(&self) -> Vec<u64>;
    /// The hart of `thread`.
    fn hart(&self, thread: u64) -> Option<&Hart>;
    /// The hart of `thread`, to change.
    fn hart_mut(&mut self, thread: u64) -> Option<&mut Hart>;
    /// Reads virtual memory as `thread` sees it, without timing; `false`
    /// at the first unreadable byte.
    fn read_memory(&mut self, thread: u64, addr: u64, buf: &mut [u8]) -> bool;
    /// Writes virtual memory as `thread` sees it, without timing, keeping
    /// decoded code coherent; `false` at the first unwritable byte.
    fn write_memory(&mut self, thread: u64, addr: u64, data: &[u8]) -> bool;
    /// Whether this is the full system (privileged CSRs are shown).
    fn full_system(&self) -> bool;
}
