//! The user-mode Linux kernel of rvnvmm: runs a riscv64 Linux ELF directly,
//! as gem5's syscall emulation or qemu-user do, with the process's own Sv39
//! page tables in guest memory.
//!
//! The emulator process is the guest process: guest file descriptors are
//! host descriptors, `fork` forks the emulator (the processes of a tree
//! then take turns in simulated-time order, `family.rs`, and have guest
//! pids of their own), and `execve` loads another RISC-V program in place.
//! Guest threads run on the configured number of harts, time-shared
//! deterministically in simulated time.
#![deny(clippy::undocumented_unsafe_blocks)]

mod abi;
mod checkpoint;
pub mod devices;
pub mod elf;
pub mod errno;
mod family;
pub mod fs;
mod heat;
pub mod hwprobe;
mod nodes;
pub mod numa;
mod outcome;
mod pmem;
mod process;
pub mod procfs;
mod roi;
mod signal;
mod syscall;
mod timers;
pub mod vm;

pub use checkpoint::{checkpoint_program, Carried};
pub use family::{MemberStats, TreeStats};
pub use nodes::MemoryNode;
pub use process::{
    ExitKind, GuestStart, Options, Outcome, PagesOutcome, Process, RunError, StopAt, ThreadStats,
};
pub use roi::Snapshot;
