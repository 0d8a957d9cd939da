//! The ISA extensions a hart implements, as one set everything else derives
//! from: which encodings decode ([`crate::decode_for`]), the ISA string
//! (`machine.isa`, `/proc/cpuinfo`, the device tree's `riscv,isa`), the
//! device tree's `riscv,isa-extensions`, `misa`, `AT_HWCAP` and the
//! `riscv_hwprobe` bits.
//!
//! The ISA string follows the RISC-V naming convention as Spike's `--isa`
//! and Linux's `riscv,isa` read it: `rv64` then single letters (`g` =
//! `imafd_zicsr_zifencei`, `b` = `zba_zbb_zbs`), then `_`-separated
//! multi-letter extensions, case-insensitive. As Linux does for a device
//! tree, `i` implies Zicsr, Zifencei and Zicntr (they were part of the base
//! ISA when the port was written). `c` stands for Zca, plus Zcd with `d`;
//! conversely Zca (+ Zcd with D) is written `c`.
//!
//! ```
//! use rvnvmm_isa::{Ext, ExtSet};
//!
//! let gc: ExtSet = "rv64gc".parse().unwrap();
//! assert!(gc.has(Ext::C) && gc.has(Ext::Zicsr) && !gc.has(Ext::Zba));
//! assert_eq!(
//!     gc.to_string(),
//!     "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zca_zcd_sstc_svnapot"
//! );
//! let b: ExtSet = "RV64GCB_Zicond".parse().unwrap();
//! assert!(b.has(Ext::Zba) && b.has(Ext::Zbb) && b.has(Ext::Zbs) && b.has(Ext::Zicond));
//! assert!("rv64gc_zbz".parse::<ExtSet>().unwrap_err().to_string().contains("zbz"));
//! ```

use core::fmt;
use core::str::FromStr;

pub use crate::insns::Ext;

/// The block `cbo.zero` zeroes, in bytes (a hart property: the device
/// tree's `riscv,cboz-block-size`, hwprobe's `ZICBOZ_BLOCK_SIZE`).
pub const CBOZ_BLOCK_BYTES: u32 = 64;

/// The extensions that cannot be turned off: the base ISA, the counters
/// (the hart always has every counter CSR) and CSR instructions every Linux
/// relies on, and the privileged extensions the full-system board is built
/// around. An ISA string may name them, and gets
/// them whether it does or not.
const ALWAYS: ExtSet = ExtSet::EMPTY
    .with(Ext::I)
    .with(Ext::Zicsr)
    .with(Ext::Zifencei)
    .with(Ext::Zicntr)
    .with(Ext::Zihpm)
    .with(Ext::Sstc)
    .with(Ext::Svnapot);

/// A set of [`Ext`]s (a bitset).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExtSet(u64);

impl ExtSet {
    /// No extension at all (not a valid hart; a starting point).
    pub const EMPTY: ExtSet = ExtSet(0);

    /// Everything the emulator implements.
    pub const ALL: ExtSet = {
        let mut s = ExtSet::EMPTY;
        let mut k = 0;
        while k < Ext::ALL.len() {
            s = s.with(Ext::ALL[k]);
            k += 1;
        }
        s
    };

    /// What a hart has unless `machine.isa` says otherwise: everything
    /// but custom (`x`) extensions, which a machine only has when its ISA
    /// string names them.
    pub const DEFAULT: ExtSet = {
        let mut s = ExtSet::EMPTY;
        let mut k = 0;
        while k < Ext::ALL.len() {
            if Ext::ALL[k].name().as_bytes()[0] != b'x' {
                s = s.with(Ext::ALL[k]);
            }
            k += 1;
        }
        s
    };

    /// RV64GC as Linux distributions before RVA22 assumed it (plus the
    /// extensions that are always present).
    pub const RV64GC: ExtSet = ALWAYS
        .with(Ext::M)
        .with(Ext::A)
        .with(Ext::F)
        .with(Ext::D)
        .with(Ext::C)
        .with(Ext::Zca)
        .with(Ext::Zcd);

    /// This set plus `e`.
    pub const fn with(self, e: Ext) -> ExtSet {
        ExtSet(self.0 | 1 << e as u32)
    }

    /// This set without `e`.
    pub const fn without(self, e: Ext) -> ExtSet {
        ExtSet(self.0 & !(1 << e as u32))
    }

    /// Whether `e` is in the set.
    #[inline(always)]
    pub const fn has(self, e: Ext) -> bool {
        self.0 & 1 << e as u32 != 0
    }

    /// The members, in canonical order.
    pub fn iter(self) -> impl Iterator<Item = Ext> {
        Ext::ALL.iter().copied().filter(move |&e| self.has(e))
    }

    /// The names of `riscv,isa-extensions` (Linux's device-tree binding):
    /// every member, single letters included.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Ext::name).collect()
    }

    /// The value of `misa`'s extension field (bits 25..0): one bit per
    /// single-letter extension, plus S and U (the hart has both modes).
    pub fn misa_letters(self) -> u64 {
        let mut bits = (1 << (b's' - b'a')) | (1 << (b'u' - b'a'));
        for e in self.iter() {
            if let [c] = e.name().as_bytes() {
                bits |= 1 << (c - b'a');
            }
        }
        bits
    }

    /// `AT_HWCAP` as Linux sets it on RISC-V: one bit per single-letter
    /// extension (`1 << (letter - 'a')`), I, M, A, F, D, C only.
    pub fn hwcap(self) -> u64 {
        self.misa_letters() & !((1 << (b's' - b'a')) | (1 << (b'u' - b'a')))
    }

    /// `riscv_hwprobe`'s `IMA_EXT_0` value: FD when both F and D are
    /// present (bit 0), then one bit per extension Linux reports.
    pub fn hwprobe_ima_ext_0(self) -> u64 {
        let mut v = 0;
        if self.has(Ext::F) && self.has(Ext::D) {
            v |= 1;
        }
        for e in self.iter() {
            if let Some(b) = e.hwprobe_bit() {
                v |= 1 << b;
            }
        }
        v
    }

    /// Checks the dependencies between extensions.
    fn check(self) -> Result<(), IsaError> {
        // (extension, what it needs, how to spell the need)
        let needs: &[(Ext, &[Ext], &str)] = &[
            (Ext::D, &[Ext::F], "f"),
            (Ext::Zcd, &[Ext::Zca, Ext::D], "zca and d"),
            (Ext::Zfa, &[Ext::F], "f"),
            (Ext::Zfh, &[Ext::F], "f"),
            (Ext::Zfhmin, &[Ext::F], "f"),
            (Ext::Zcb, &[Ext::Zca], "c or zca"),
            (Ext::Zcmop, &[Ext::Zca], "c or zca"),
        ];
        for &(e, deps, spelled) in needs {
            if self.has(e) && !deps.iter().all(|&d| self.has(d)) {
                return Err(IsaError::Needs(e.name(), spelled));
            }
        }
        Ok(())
    }
}

impl Default for ExtSet {
    fn default() -> Self {
        ExtSet::DEFAULT
    }
}

impl fmt::Debug for ExtSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExtSet({self})")
    }
}

/// The canonical ISA string (`rv64imafdc_zicsr_...`): single letters first,
/// then the others joined by `_`. This is what `/proc/cpuinfo`'s `isa`
/// line and the device tree's `riscv,isa` show, and it parses back to the
/// same set.
impl fmt::Display for ExtSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("rv64")?;
        for e in self.iter().filter(|e| e.name().len() == 1) {
            f.write_str(e.name())?;
        }
        for e in self.iter().filter(|e| e.name().len() > 1) {
            write!(f, "_{}", e.name())?;
        }
        Ok(())
    }
}

/// Why an ISA string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IsaError {
    /// It does not start with `rv64`.
    NotRv64(String),
    /// The first letter after `rv64` is not `i` or `g`.
    NoBase(String),
    /// A single letter that names no implemented extension.
    Letter(char),
    /// A multi-letter name that is not implemented; with the nearest known
    /// name, if one is close.
    Unknown(String, Option<&'static str>),
    /// An extension without one it depends on.
    Needs(&'static str, &'static str),
}

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IsaError::NotRv64(s) => write!(
                f,
                "'{s}' is not an RV64 ISA string (expected e.g. 'rv64gc' or 'rv64imafdc_zba_zbb')"
            ),
            IsaError::NoBase(s) => {
                write!(f, "'{s}': the base must be 'i' or 'g' right after 'rv64'")
            }
            IsaError::Letter(c) => write!(
                f,
                "extension '{c}' is not implemented (single letters: i, m, a, f, d, c, g, b)"
            ),
            IsaError::Unknown(s, Some(near)) => {
                write!(
                    f,
                    "extension '{s}' is not implemented; did you mean '{near}'?"
                )
            }
            IsaError::Unknown(s, None) => write!(
                f,
                "extension '{s}' is not implemented (known: {})",
                Ext::ALL
                    .iter()
                    .filter(|e| e.name().len() > 1)
                    .map(|e| e.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            IsaError::Needs(e, d) => write!(f, "extension '{e}' needs {d}"),
        }
    }
}

impl std::error::Error for IsaError {}

impl FromStr for ExtSet {
    type Err = IsaError;

    fn from_str(s: &str) -> Result<ExtSet, IsaError> {
        let lower = s.trim().to_ascii_lowercase();
        let rest = lower
            .strip_prefix("rv64")
            .ok_or_else(|| IsaError::NotRv64(s.to_string()))?;
        let mut parts = rest.split('_');
        let letters = parts.next().unwrap_or("");
        if !matches!(letters.chars().next(), Some('i' | 'g')) {
            return Err(IsaError::NoBase(s.to_string()));
        }
        let mut set = ALWAYS;
        for c in letters.chars() {
            set = match c {
                'i' => set,
                'g' => set.with(Ext::M).with(Ext::A).with(Ext::F).with(Ext::D),
                'm' => set.with(Ext::M),
                'a' => set.with(Ext::A),
                'f' => set.with(Ext::F),
                'd' => set.with(Ext::D),
                'c' => set.with(Ext::C),
                'b' => set.with(Ext::Zba).with(Ext::Zbb).with(Ext::Zbs),
                c => return Err(IsaError::Letter(c)),
            };
        }
        for name in parts.filter(|p| !p.is_empty()) {
            let e = Ext::ALL
                .iter()
                .copied()
                .find(|e| e.name().len() > 1 && e.name() == name)
                .ok_or_else(|| IsaError::Unknown(name.to_string(), nearest(name)))?;
            set = set.with(e);
        }
        // C is Zca plus, with D, Zcd (RV64 has no Zcf); either spelling
        // gives both.
        if set.has(Ext::C) {
            set = set.with(Ext::Zca);
            if set.has(Ext::D) {
                set = set.with(Ext::Zcd);
            }
        }
        if set.has(Ext::Zca) && (set.has(Ext::Zcd) || !set.has(Ext::D)) {
            set = set.with(Ext::C);
        }
        // Zfh is a superset of Zfhmin.
        if set.has(Ext::Zfh) {
            set = set.with(Ext::Zfhmin);
        }
        set.check()?;
        Ok(set)
    }
}

/// The known multi-letter name nearest to `name` (edit distance at most 2).
fn nearest(name: &str) -> Option<&'static str> {
    Ext::ALL
        .iter()
        .map(|e| e.name())
        .filter(|n| n.len() > 1)
        .map(|n| (edit_distance(name, n), n))
        .filter(|&(d, _)| d <= 2)
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_round_trips() {
        let s = ExtSet::ALL.to_string();
        assert!(s.starts_with("rv64imafdc_zic64b_zicbom_zicbop_zicboz_zicntr_zicond_zicsr"));
        assert_eq!(s.parse::<ExtSet>().unwrap(), ExtSet::ALL);
        assert_eq!(ExtSet::default(), ExtSet::DEFAULT);
    }

    #[test]
    fn rv64gc_and_spellings() {
        let gc: ExtSet = "rv64gc".parse().unwrap();
        assert_eq!(gc, ExtSet::RV64GC);
        // The counters are always there; 64-byte cache blocks only when
        // asked for.
        assert!(gc.has(Ext::Zihpm) && !gc.has(Ext::Zic64b));
        assert!("rv64gc_zic64b".parse::<ExtSet>().unwrap().has(Ext::Zic64b));
        assert_eq!("rv64imafdc".parse::<ExtSet>().unwrap(), gc);
        assert_eq!(
            "RV64IMAFD_Zicsr_Zifencei_Zca_Zcd"
                .parse::<ExtSet>()
                .unwrap(),
            gc
        );
        assert_eq!(gc.to_string().parse::<ExtSet>().unwrap(), gc);
        // `i` alone still has the counters and CSRs.
        let i: ExtSet = "rv64i".parse().unwrap();
        assert_eq!(i, ALWAYS);
        assert!(!i.has(Ext::M) && !i.has(Ext::C));
        // zca without d is `c`; with d but without zcd it is not.
        assert!("rv64i_zca".parse::<ExtSet>().unwrap().has(Ext::C));
        let no_zcd: ExtSet = "rv64imafd_zca".parse().unwrap();
        assert!(no_zcd.has(Ext::Zca) && !no_zcd.has(Ext::C) && !no_zcd.has(Ext::Zcd));
        let b: ExtSet = "rv64gcb".parse().unwrap();
        assert_eq!(b, gc.with(Ext::Zba).with(Ext::Zbb).with(Ext::Zbs));
    }

    #[test]
    fn bad_strings_say_why() {
        let err = |s: &str| s.parse::<ExtSet>().unwrap_err();
        assert!(matches!(err("rv32gc"), IsaError::NotRv64(_)));
        assert!(matches!(err("x86"), IsaError::NotRv64(_)));
        assert!(matches!(err("rv64"), IsaError::NoBase(_)));
        assert!(matches!(err("rv64mafd"), IsaError::NoBase(_)));
        assert_eq!(err("rv64gcv"), IsaError::Letter('v'));
        assert_eq!(
            err("rv64gc_zbaa"),
            IsaError::Unknown("zbaa".into(), Some("zba"))
        );
        assert!(matches!(err("rv64gc_xyzzy"), IsaError::Unknown(_, None)));
        assert_eq!(err("rv64iad"), IsaError::Needs("d", "f"));
        assert_eq!(err("rv64i_zcb"), IsaError::Needs("zcb", "c or zca"));
        assert!(err("rv64gc_zbaa")
            .to_string()
            .contains("did you mean 'zba'"));
    }

    #[test]
    fn derived_values() {
        let gc = ExtSet::RV64GC;
        let letters = |s: &str| s.bytes().fold(0u64, |b, c| b | 1 << (c - b'a'));
        assert_eq!(gc.hwcap(), letters("imafdc"));
        assert_eq!(gc.misa_letters(), letters("imafdcsu"));
        // FD, C and Zca only.
        assert_eq!(gc.hwprobe_ima_ext_0(), 1 | 2 | 1 << 43 | 1 << 45);
        let all = ExtSet::ALL.hwprobe_ima_ext_0();
        for bit in [3, 4, 5, 6, 7, 16, 29, 35, 36, 42, 44, 47, 48] {
            assert_ne!(all & 1 << bit, 0, "bit {bit}");
        }
        assert_eq!(&gc.names()[..7], &["i", "m", "a", "f", "d", "c", "zicntr"]);
    }
}
