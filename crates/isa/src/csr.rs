//! Numbers and names of the control and status registers rvnvmm knows about.

/// Floating-point accrued exceptions.
pub const FFLAGS: u16 = 0x001;
/// Floating-point dynamic rounding mode.
pub const FRM: u16 = 0x002;
/// Floating-point control and status register (`frm` and `fflags`).
pub const FCSR: u16 = 0x003;

/// Cycle counter (user read-only shadow of `mcycle`).
pub const CYCLE: u16 = 0xC00;
/// Real-time clock.
pub const TIME: u16 = 0xC01;
/// Instructions-retired counter (user read-only shadow of `minstret`).
pub const INSTRET: u16 = 0xC02;

/// Supervisor status register (restricted view of `mstatus`).
pub const SSTATUS: u16 = 0x100;
/// Supervisor interrupt-enable register.
pub const SIE: u16 = 0x104;
/// Supervisor trap-handler base address.
pub const STVEC: u16 = 0x105;
/// Supervisor counter enable.
pub const SCOUNTEREN: u16 = 0x106;
/// Supervisor environment configuration.
pub const SENVCFG: u16 = 0x10A;
/// Supervisor scratch register.
pub const SSCRATCH: u16 = 0x140;
/// Supervisor exception program counter.
pub const SEPC: u16 = 0x141;
/// Supervisor trap cause.
pub const SCAUSE: u16 = 0x142;
/// Supervisor trap value.
pub const STVAL: u16 = 0x143;
/// Supervisor interrupt pending.
pub const SIP: u16 = 0x144;
/// Supervisor address translation and protection.
pub const SATP: u16 = 0x180;

/// Machine status register.
pub const MSTATUS: u16 = 0x300;
/// ISA and extensions.
pub const MISA: u16 = 0x301;
/// Machine exception delegation.
pub const MEDELEG: u16 = 0x302;
/// Machine interrupt delegation.
pub const MIDELEG: u16 = 0x303;
/// Machine interrupt-enable register.
pub const MIE: u16 = 0x304;
/// Machine trap-handler base address.
pub const MTVEC: u16 = 0x305;
/// Machine counter enable.
pub const MCOUNTEREN: u16 = 0x306;
/// Machine environment configuration.
pub const MENVCFG: u16 = 0x30A;
/// Machine counter-inhibit register.
pub const MCOUNTINHIBIT: u16 = 0x320;
/// Machine scratch register.
pub const MSCRATCH: u16 = 0x340;
/// Machine exception program counter.
pub const MEPC: u16 = 0x341;
/// Machine trap cause.
pub const MCAUSE: u16 = 0x342;
/// Machine trap value.
pub const MTVAL: u16 = 0x343;
/// Machine interrupt pending.
pub const MIP: u16 = 0x344;
/// First physical-memory-protection configuration register.
pub const PMPCFG0: u16 = 0x3A0;
/// First physical-memory-protection address register (`pmpaddrN` is
/// `PMPADDR0 + N`).
pub const PMPADDR0: u16 = 0x3B0;
/// Machine cycle counter.
pub const MCYCLE: u16 = 0xB00;
/// Machine instructions-retired counter.
pub const MINSTRET: u16 = 0xB02;
/// Vendor ID.
pub const MVENDORID: u16 = 0xF11;
/// Architecture ID.
pub const MARCHID: u16 = 0xF12;
/// Implementation ID.
pub const MIMPID: u16 = 0xF13;
/// Hardware thread ID.
pub const MHARTID: u16 = 0xF14;

const PMPCFG_NAMES: [&str; 16] = [
    "pmpcfg0", "pmpcfg1", "pmpcfg2", "pmpcfg3", "pmpcfg4", "pmpcfg5", "pmpcfg6", "pmpcfg7",
    "pmpcfg8", "pmpcfg9", "pmpcfg10", "pmpcfg11", "pmpcfg12", "pmpcfg13", "pmpcfg14", "pmpcfg15",
];

const PMPADDR_NAMES: [&str; 16] = [
    "pmpaddr0",
    "pmpaddr1",
    "pmpaddr2",
    "pmpaddr3",
    "pmpaddr4",
    "pmpaddr5",
    "pmpaddr6",
    "pmpaddr7",
    "pmpaddr8",
    "pmpaddr9",
    "pmpaddr10",
    "pmpaddr11",
    "pmpaddr12",
    "pmpaddr13",
    "pmpaddr14",
    "pmpaddr15",
];

/// The standard (GNU objdump) name of CSR `n`, if it is one rvnvmm knows.
pub fn csr_name(n: u16) -> Option<&'static str> {
    Some(match n {
        FFLAGS => "fflags",
        FRM => "frm",
        FCSR => "fcsr",
        CYCLE => "cycle",
        TIME => "time",
        INSTRET => "instret",
        SSTATUS => "sstatus",
        SIE => "sie",
        STVEC => "stvec",
        SCOUNTEREN => "scounteren",
        SENVCFG => "senvcfg",
        SSCRATCH => "sscratch",
        SEPC => "sepc",
        SCAUSE => "scause",
        STVAL => "stval",
        SIP => "sip",
        SATP => "satp",
        MSTATUS => "mstatus",
        MISA => "misa",
        MEDELEG => "medeleg",
        MIDELEG => "mideleg",
        MIE => "mie",
        MTVEC => "mtvec",
        MCOUNTEREN => "mcounteren",
        MENVCFG => "menvcfg",
        MCOUNTINHIBIT => "mcountinhibit",
        MSCRATCH => "mscratch",
        MEPC => "mepc",
        MCAUSE => "mcause",
        MTVAL => "mtval",
        MIP => "mip",
        0x3A0..=0x3AF => PMPCFG_NAMES[(n - PMPCFG0) as usize],
        0x3B0..=0x3BF => PMPADDR_NAMES[(n - PMPADDR0) as usize],
        MCYCLE => "mcycle",
        MINSTRET => "minstret",
        MVENDORID => "mvendorid",
        MARCHID => "marchid",
        MIMPID => "mimpid",
        MHARTID => "mhartid",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(csr_name(FFLAGS), Some("fflags"));
        assert_eq!(csr_name(FCSR), Some("fcsr"));
        assert_eq!(csr_name(CYCLE), Some("cycle"));
        assert_eq!(csr_name(SATP), Some("satp"));
        assert_eq!(csr_name(MHARTID), Some("mhartid"));
        assert_eq!(csr_name(PMPCFG0 + 2), Some("pmpcfg2"));
        assert_eq!(csr_name(PMPADDR0 + 15), Some("pmpaddr15"));
        assert_eq!(csr_name(0x7c0), None);
        assert_eq!(csr_name(0xfff), None);
        assert_eq!(csr_name(0xffff), None);
    }

    #[test]
    fn names_are_unique() {
        let named: Vec<&str> = (0..4096u16).filter_map(csr_name).collect();
        let mut sorted = named.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), named.len());
    }
}
