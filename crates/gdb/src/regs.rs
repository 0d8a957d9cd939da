//! The registers gdb sees and the target description that names them,
//! numbered as QEMU's riscv64 stub numbers them (its `gdb-xml/riscv-64bit-*.xml`):
//! `x0`-`x31` 0-31, `pc` 32, `f0`-`f31` 33-64, a CSR at 65 plus its number
//! (`fflags` 66, `frm` 67, `fcsr` 68), and the privilege level 4161.

use rvnvmm_hart::{Hart, Priv};

/// The number of `pc`.
pub const PC: u32 = 32;
/// The number of `f0`.
pub const FIRST_FP: u32 = 33;
/// The number of CSR 0.
pub const FIRST_CSR: u32 = 65;
/// The number of the virtual `priv` register.
pub const PRIV: u32 = 4161;
/// Registers in the `g` packet: `x0`-`x31` and `pc`.
pub const G_PACKET: u32 = 33;

const FFLAGS: u16 = 1;
const FRM: u16 = 2;
const FCSR: u16 = 3;

/// The privileged CSRs the full system shows, if the hart implements them.
const SYSTEM_CSRS: &[(u16, &str)] = &[
    (0x100, "sstatus"),
    (0x104, "sie"),
    (0x105, "stvec"),
    (0x106, "scounteren"),
    (0x140, "sscratch"),
    (0x141, "sepc"),
    (0x142, "scause"),
    (0x143, "stval"),
    (0x144, "sip"),
    (0x14d, "stimecmp"),
    (0x180, "satp"),
    (0x300, "mstatus"),
    (0x301, "misa"),
    (0x302, "medeleg"),
    (0x303, "mideleg"),
    (0x304, "mie"),
    (0x305, "mtvec"),
    (0x306, "mcounteren"),
    (0x340, "mscratch"),
    (0x341, "mepc"),
    (0x342, "mcause"),
    (0x343, "mtval"),
    (0x344, "mip"),
    (0xb00, "mcycle"),
    (0xb02, "minstret"),
    (0xc00, "cycle"),
    (0xc01, "time"),
    (0xc02, "instret"),
    (0xf11, "mvendorid"),
    (0xf12, "marchid"),
    (0xf13, "mimpid"),
    (0xf14, "mhartid"),
];

/// The ABI names of the integer registers, as gdb's description names them.
const X_NAMES: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// The ABI names of the FP registers.
const F_NAMES: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];

/// The target description (`target.xml`): integer and FP registers, and
/// in the full system the privileged CSRs `hart` implements and the
/// privilege level.
pub fn target_xml(hart: &Hart, full_system: bool) -> String {
    let mut x = String::from(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n\
         <target version=\"1.0\">\n<architecture>riscv:rv64</architecture>\n",
    );
    x.push_str("<feature name=\"org.gnu.gdb.riscv.cpu\">\n");
    for (n, name) in X_NAMES.iter().enumerate() {
        let ty = match *name {
            "ra" => "code_ptr",
            "sp" | "gp" | "tp" | "fp" => "data_ptr",
            _ => "int",
        };
        x.push_str(&format!(
            "  <reg name=\"{name}\" bitsize=\"64\" type=\"{ty}\" regnum=\"{n}\"/>\n"
        ));
    }
    x.push_str(&format!(
        "  <reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\" regnum=\"{PC}\"/>\n</feature>\n"
    ));
    x.push_str(
        "<feature name=\"org.gnu.gdb.riscv.fpu\">\n  <union id=\"riscv_double\">\n    \
         <field name=\"float\" type=\"ieee_single\"/>\n    \
         <field name=\"double\" type=\"ieee_double\"/>\n  </union>\n",
    );
    for (n, name) in F_NAMES.iter().enumerate() {
        x.push_str(&format!(
            "  <reg name=\"{name}\" bitsize=\"64\" type=\"riscv_double\" regnum=\"{}\"/>\n",
            FIRST_FP + n as u32
        ));
    }
    for (csr, name) in [(FFLAGS, "fflags"), (FRM, "frm"), (FCSR, "fcsr")] {
        x.push_str(&format!(
            "  <reg name=\"{name}\" bitsize=\"32\" type=\"int\" regnum=\"{}\"/>\n",
            FIRST_CSR + csr as u32
        ));
    }
    x.push_str("</feature>\n");
    if full_system {
        x.push_str("<feature name=\"org.gnu.gdb.riscv.csr\">\n");
        for &(csr, name) in SYSTEM_CSRS {
            if hart.read_csr(csr).is_some() {
                x.push_str(&format!(
                    "  <reg name=\"{name}\" bitsize=\"64\" type=\"int\" regnum=\"{}\" group=\"system\"/>\n",
                    FIRST_CSR + csr as u32
                ));
            }
        }
        x.push_str("</feature>\n<feature name=\"org.gnu.gdb.riscv.virtual\">\n");
        x.push_str(&format!(
            "  <reg name=\"priv\" bitsize=\"64\" type=\"int\" regnum=\"{PRIV}\"/>\n</feature>\n"
        ));
    }
    x.push_str("</target>\n");
    x
}

/// Register `n`'s value as little-endian bytes, `None` if there is no
/// such register (or the CSR is not shown: outside the full system only
/// the FP CSRs are).
pub fn read(hart: &Hart, n: u32, full_system: bool) -> Option<Vec<u8>> {
    let v = match n {
        0..=31 => hart.x[n as usize],
        PC => hart.pc,
        FIRST_FP..=64 => hart.f[(n - FIRST_FP) as usize],
        PRIV if full_system => hart.prv as u64,
        _ => {
            let csr = u16::try_from(n.checked_sub(FIRST_CSR)?).ok()?;
            return Some(match csr {
                FFLAGS => u32::from(hart.fflags).to_le_bytes().to_vec(),
                FRM => u32::from(hart.frm).to_le_bytes().to_vec(),
                FCSR => (u32::from(hart.frm) << 5 | u32::from(hart.fflags))
                    .to_le_bytes()
                    .to_vec(),
                _ if full_system => hart.read_csr(csr)?.to_le_bytes().to_vec(),
                _ => return None,
            });
        }
    };
    Some(v.to_le_bytes().to_vec())
}

/// Writes register `n` from little-endian `bytes`; `false` if there is no
/// such register, the value has the wrong size, or the write is refused.
pub fn write(hart: &mut Hart, n: u32, bytes: &[u8], full_system: bool) -> bool {
    let narrow = match bytes.len() {
        4 => Some(u32::from_le_bytes(bytes.try_into().unwrap_or_default())),
        _ => None,
    };
    let wide = match bytes.len() {
        8 => Some(u64::from_le_bytes(bytes.try_into().unwrap_or_default())),
        _ => None,
    };
    match n {
        0..=31 => match wide {
            Some(v) => {
                if n != 0 {
                    hart.x[n as usize] = v;
                }
                true
            }
            None => false,
        },
        PC => wide.map(|v| hart.pc = v).is_some(),
        FIRST_FP..=64 => wide.map(|v| hart.f[(n - FIRST_FP) as usize] = v).is_some(),
        PRIV if full_system => match wide {
            Some(0) => set_priv(hart, Priv::User),
            Some(1) => set_priv(hart, Priv::Supervisor),
            Some(3) => set_priv(hart, Priv::Machine),
            _ => false,
        },
        _ => {
            let Some(csr) = n.checked_sub(FIRST_CSR).and_then(|c| u16::try_from(c).ok()) else {
                return false;
            };
            match (csr, narrow) {
                (FFLAGS, Some(v)) => hart.fflags = (v & 0x1f) as u8,
                (FRM, Some(v)) => hart.frm = (v & 7) as u8,
                (FCSR, Some(v)) => {
                    hart.fflags = (v & 0x1f) as u8;
                    hart.frm = (v >> 5 & 7) as u8;
                }
                _ if full_system => return wide.is_some_and(|v| hart.write_csr(csr, v)),
                _ => return false,
            }
            true
        }
    }
}

fn set_priv(hart: &mut Hart, prv: Priv) -> bool {
    hart.prv = prv;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvnvmm_hart::HartConfig;

    #[test]
    fn reads_and_writes_integer_fp_and_fp_csrs() {
        let mut h = Hart::new(HartConfig::default());
        assert!(write(&mut h, 10, &42u64.to_le_bytes(), false));
        assert_eq!(h.x[10], 42);
        assert!(write(&mut h, 0, &7u64.to_le_bytes(), false));
        assert_eq!(h.x[0], 0);
        assert!(write(&mut h, PC, &0x1000u64.to_le_bytes(), false));
        assert_eq!(read(&h, PC, false), Some(0x1000u64.to_le_bytes().to_vec()));
        assert!(write(
            &mut h,
            FIRST_FP + 3,
            &1.5f64.to_bits().to_le_bytes(),
            false
        ));
        assert_eq!(h.f[3], 1.5f64.to_bits());
        assert!(write(
            &mut h,
            FIRST_CSR + 3,
            &((2u32 << 5) | 1).to_le_bytes(),
            false
        ));
        assert_eq!((h.frm, h.fflags), (2, 1));
        assert_eq!(
            read(&h, FIRST_CSR + 2, false),
            Some(2u32.to_le_bytes().to_vec())
        );
        // A wrong size, and a CSR user mode does not show.
        assert!(!write(&mut h, 5, &[1, 2], false));
        assert_eq!(read(&h, FIRST_CSR + 0x300, false), None);
        assert_eq!(read(&h, PRIV, false), None);
    }

    #[test]
    fn the_full_system_shows_privileged_csrs() {
        let mut h = Hart::new(HartConfig::default());
        h.set_full_system(true);
        let xml = target_xml(&h, true);
        assert!(xml.contains("name=\"mstatus\" bitsize=\"64\" type=\"int\" regnum=\"833\""));
        assert!(xml.contains("regnum=\"4161\""));
        assert_eq!(read(&h, PRIV, true), Some(3u64.to_le_bytes().to_vec()));
        assert!(write(&mut h, FIRST_CSR + 0x340, &9u64.to_le_bytes(), true));
        assert_eq!(h.read_csr(0x340), Some(9));
        let user = target_xml(&Hart::new(HartConfig::default()), false);
        assert!(user.contains("org.gnu.gdb.riscv.fpu") && !user.contains("mstatus"));
    }
}
