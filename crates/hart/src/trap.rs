//! Architectural exceptions and the reasons a hart stops running.

/// An exception raised by an instruction (privileged spec, mcause values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trap {
    /// The exception code (`mcause` without the interrupt bit).
    pub cause: u64,
    /// The value for `mtval`/`stval`: the faulting address or instruction bits.
    pub tval: u64,
}

#[allow(missing_docs)]
impl Trap {
    pub const INSN_MISALIGNED: u64 = 0;
    pub const INSN_ACCESS: u64 = 1;
    pub const ILLEGAL: u64 = 2;
    pub const BREAKPOINT: u64 = 3;
    pub const LOAD_MISALIGNED: u64 = 4;
    pub const LOAD_ACCESS: u64 = 5;
    pub const STORE_MISALIGNED: u64 = 6;
    pub const STORE_ACCESS: u64 = 7;
    pub const ECALL_U: u64 = 8;
    pub const ECALL_S: u64 = 9;
    pub const ECALL_M: u64 = 11;
    pub const INSN_PAGE_FAULT: u64 = 12;
    pub const LOAD_PAGE_FAULT: u64 = 13;
    pub const STORE_PAGE_FAULT: u64 = 15;

    /// Not an exception: the hart must stop before this instruction because
    /// it would reach the shared memory system beyond its sync limit
    /// (`Core::set_sync_limit`). Never taken architecturally.
    pub(crate) const SYNC_STOP: u64 = u64::MAX;

    /// A trap with the given cause and value.
    pub const fn new(cause: u64, tval: u64) -> Trap {
        Trap { cause, tval }
    }

    /// Whether this is one of the three page faults.
    pub fn is_page_fault(&self) -> bool {
        matches!(
            self.cause,
            Trap::INSN_PAGE_FAULT | Trap::LOAD_PAGE_FAULT | Trap::STORE_PAGE_FAULT
        )
    }
}

/// Why [`crate::Hart::run`] returned. In every case `pc` and the registers
/// describe the architectural state at that point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The instruction budget is used up.
    Budget,
    /// An `ecall` (user-mode emulation only; in full-system mode it traps):
    /// `pc` points at the `ecall`.
    Ecall,
    /// User-mode emulation: an exception other than `ecall`; `pc` points at
    /// the faulting instruction. Full-system mode takes exceptions itself
    /// and returns this only when traps repeat without an instruction
    /// retiring (a trap vector that faults): the last trap taken, its cause
    /// with the interrupt bit.
    Trap(Trap),
    /// A `wfi`: `pc` points after it. In full-system mode only when no
    /// interrupt enabled in `mie` is pending: the board may move the hart's
    /// clock to its next event ([`crate::Hart::timer_deadline`] or a
    /// device's) before running it again.
    Wfi,
    /// User-mode emulation: `wrs.nto` or `wrs.sto`, waiting for the
    /// reservation set to change; `pc` points after it. The caller may run
    /// other threads first.
    Yield,
    /// A region-of-interest marker (`rvnvmm_isa::marker`), in any privilege
    /// mode: `op` and the value of its argument register; `pc` points after
    /// it. The caller acts on it (statistics, the model, the end of the run)
    /// and runs the hart on; architecturally it did nothing.
    Marker {
        /// What it asks for.
        op: rvnvmm_isa::MarkerOp,
        /// The value of its `rs1`.
        arg: u64,
    },
}

/// What the next instruction is.
pub(crate) enum Flow {
    /// Fall through.
    Next,
    /// Continue at this address (a direct jump the block follows).
    Goto(u64),
    /// Fall through, but end the run of blocks (decoded code changed).
    Stop,
    /// Control transfer: the block ends here.
    Jump(u64),
    /// Leave the run loop.
    Exit(Exit),
}
