//! Region-of-interest markers: `slti x0, rs1, 0x7aN`.
//!
//! The unprivileged ISA reserves `slti` with `rd = x0` as a HINT
//! "designated for custom use" (the HINT table of the RV32I chapter, with
//! `sltiu`, `slli`, `srli`, `srai`, `slt`, `sltu`): it writes nothing, so
//! hardware and `qemu-riscv64` run it as a no-op, and no standard extension
//! will take it. rvnvmm gives the immediates `0x7a0..=0x7af` a meaning:
//! the low four bits are the operation ([`MarkerOp`]), `rs1` the register
//! holding its argument. Every other `slti x0` stays an ordinary no-op.

/// The `slti` immediates of markers: `MARKER_BASE | code`.
pub const MARKER_BASE: i64 = 0x7a0;

/// What a marker asks the emulator to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerOp {
    /// Reset the statistics: they count from here (code 1).
    ResetStats,
    /// Append a snapshot of the statistics to the run's statistics; the
    /// argument is the address of its NUL-terminated name, 0 for none (2).
    DumpStats,
    /// Switch the timing model: argument 0 functional, 1 timing (3).
    SwitchModel,
    /// End the simulation with the argument as exit status (4).
    Exit,
    /// Take a checkpoint: reserved, reported as not yet supported (5).
    Checkpoint,
    /// A code without a meaning yet (0, 6..=15): a no-op.
    Unknown(u8),
}

impl MarkerOp {
    /// The operation of marker code `code` (the immediate's low four bits).
    pub const fn from_code(code: u8) -> MarkerOp {
        match code {
            1 => MarkerOp::ResetStats,
            2 => MarkerOp::DumpStats,
            3 => MarkerOp::SwitchModel,
            4 => MarkerOp::Exit,
            5 => MarkerOp::Checkpoint,
            c => MarkerOp::Unknown(c & 15),
        }
    }

    /// The operation's code.
    pub const fn code(self) -> u8 {
        match self {
            MarkerOp::ResetStats => 1,
            MarkerOp::DumpStats => 2,
            MarkerOp::SwitchModel => 3,
            MarkerOp::Exit => 4,
            MarkerOp::Checkpoint => 5,
            MarkerOp::Unknown(c) => c & 15,
        }
    }

    /// Its name in the SDK and the command-line tool.
    pub const fn name(self) -> &'static str {
        match self {
            MarkerOp::ResetStats => "reset",
            MarkerOp::DumpStats => "dump",
            MarkerOp::SwitchModel => "switch",
            MarkerOp::Exit => "exit",
            MarkerOp::Checkpoint => "checkpoint",
            MarkerOp::Unknown(_) => "unknown",
        }
    }
}

/// The 32-bit encoding of marker `op` with its argument in register `rs1`.
pub const fn encode_marker(op: MarkerOp, rs1: u8) -> u32 {
    let imm = (MARKER_BASE as u32) | op.code() as u32;
    imm << 20 | ((rs1 as u32) & 31) << 15 | 2 << 12 | 0x13
}

/// The model argument of [`MarkerOp::SwitchModel`] that selects the
/// functional model.
pub const SWITCH_TO_FUNCTIONAL: u64 = 0;
/// The model argument of [`MarkerOp::SwitchModel`] that selects the timing
/// model.
pub const SWITCH_TO_TIMING: u64 = 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode, decode_for, disasm, ExtSet, Op};

    #[test]
    fn markers_decode_with_their_operation_and_register() {
        for code in 0..16u8 {
            let op = MarkerOp::from_code(code);
            assert_eq!(op.code(), code);
            let raw = encode_marker(op, 10);
            let i = decode(raw);
            assert_eq!((i.op, i.rd, i.rs1, i.len), (Op::Marker, 0, 10, 4));
            assert_eq!(MarkerOp::from_code((i.imm & 15) as u8), op);
            // Printed as the instruction it is on any other machine.
            assert_eq!(
                disasm(&i, 0),
                format!("slti zero,a0,{}", MARKER_BASE + code as i64)
            );
            // Not an extension: a hart of the base ISA decodes it too.
            assert_eq!(decode_for(raw, ExtSet::EMPTY).op, Op::Marker);
        }
    }

    #[test]
    fn other_slti_to_x0_stay_ordinary() {
        // slti x0,a0,0x7b0; slti x0,a0,0x79f; slti a1,a0,0x7a1
        for raw in [0x7b05_2013u32, 0x79f5_2013, 0x7a15_2593] {
            assert_eq!(decode(raw).op, Op::Slti, "{raw:#x}");
        }
        assert_eq!(encode_marker(MarkerOp::ResetStats, 0), 0x7a10_2013);
    }
}
