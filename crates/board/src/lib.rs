//! The full-system board of rvnvmm: a QEMU `virt`-like machine for OpenSBI
//! and Linux (`docs/board.md`).
//!
//! Each device is a module with register-level behaviour and unit tests;
//! [`Board`] puts them at their addresses, wires their interrupt lines to
//! the PLIC, routes physical accesses ([`rvnvmm_hart::Mmio`]) and writes
//! the device tree ([`Board::dtb`]). The board knows nothing of harts'
//! internals: it is told the simulated time, reached through guest memory
//! for DMA ([`GuestMemory`]), and asked which interrupts are pending.
//!
//! ```
//! use rvnvmm_board::{Board, DtbOptions, Entropy, InputQueue};
//! use rvnvmm_config::Config;
//!
//! let cfg = Config::default();
//! let input = InputQueue::new();
//! let board = Board::builder(&cfg)
//!     .uart(Box::new(std::io::sink()), input.clone())
//!     .virtio(Entropy::new(1))
//!     .build()
//!     .unwrap();
//! let dtb = board.dtb(&DtbOptions::default()).unwrap();
//! assert_eq!(&dtb[..4], &[0xd0, 0x0d, 0xfe, 0xed]);
//! assert!(!board.pending_interrupts(0).mtip);
//! ```

#![warn(missing_docs)]

mod board;
pub mod clint;
pub mod device;
mod dtb;
mod guest_mem;
mod input;
pub mod machine;
pub mod plic;
pub mod profile;
mod run_control;
pub mod stats;
pub mod syscon;
#[cfg(test)]
mod test_device;
pub mod uart;
pub mod virtio;

pub use board::{
    numa_wanted, virtio_base, Board, BoardBuilder, BoardError, Irqs, MemRegion, Numa, Pending,
};
pub use device::{Device, ExitRequest, FdtNode, Wires};
pub use dtb::{DtbError, DtbOptions, NvmmMode};
pub use guest_mem::{GuestMemory, MemoryFault};
pub use input::InputQueue;
pub use virtio::{Block, Console, Entropy, VirtioDevice};

/// The memory map (QEMU `virt`'s addresses and interrupt numbers, plus the
/// NVMM control page).
pub mod map {
    /// The SiFive test device / syscon (power-off, reboot).
    pub const SYSCON_BASE: u64 = 0x0010_0000;
    /// The CLINT.
    pub const CLINT_BASE: u64 = 0x0200_0000;
    /// The PLIC.
    pub const PLIC_BASE: u64 = 0x0c00_0000;
    /// The NS16550A UART.
    pub const UART0_BASE: u64 = 0x1000_0000;
    /// The UART's PLIC source.
    pub const UART0_IRQ: u32 = 10;
    /// virtio-mmio slot 0; slot k is at `VIRTIO_BASE + 0x1000·k`.
    pub const VIRTIO_BASE: u64 = 0x1000_1000;
    /// Number of virtio-mmio slots.
    pub const VIRTIO_SLOTS: usize = 8;
    /// Slot k's PLIC source is `VIRTIO_IRQ_BASE + k`.
    pub const VIRTIO_IRQ_BASE: u32 = 1;
    /// The first memory node's control page; page k follows at
    /// `CONTROL_PAGE_BASE + 0x1000·k` (as at offset `0x1000·k` of user mode's
    /// `/dev/nvmm-ctl`).
    pub const CONTROL_PAGE_BASE: u64 = 0x1010_0000;
    /// The `mtime` frequency (QEMU's 10 MHz, the harts' `time` CSR rate).
    pub const TIMEBASE_HZ: u64 = 10_000_000;
}
