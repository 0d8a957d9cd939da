//! `rvnvmm boot --profile FILE`: where the guest spends its simulated time.
//!
//! The boot loop runs each hart's slice in sampling periods of roughly
//! [`MEAN_PERIOD`] instructions (varied by a fixed-seed generator so that a
//! loop whose length divides the period is not always caught at the same
//! instruction). After each period the hart's privilege level and pc are
//! recorded together with the instructions and simulated cycles the period
//! took, so the report weighs code by the time it cost, not only by how
//! often it ran: a kernel path that misses in the caches shows up as
//! cycles, not instructions. Kernel addresses are named from the
//! `System.map` beside the kernel image when there is one (Debian ships
//! `System.map-VERSION` next to `vmlinux-VERSION` in `/boot`).

use rvnvmm_hart::Priv;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Average sampling period in instructions.
pub const MEAN_PERIOD: u64 = 1000;

/// Samples collected over a run.
pub struct Profile {
    /// (privilege, pc) -> (periods, instructions, cycles).
    samples: BTreeMap<(u8, u64), Sample>,
    rng: u64,
}

#[derive(Clone, Copy, Default)]
struct Sample {
    periods: u64,
    insns: u64,
    cycles: u64,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            samples: BTreeMap::new(),
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

impl Profile {
    /// The length of the next sampling period: uniform in
    /// [MEAN_PERIOD / 2, 3 * MEAN_PERIOD / 2).
    pub fn next_period(&mut self) -> u64 {
        // xorshift64*: fixed seed, so a profiled run is reproducible.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
        MEAN_PERIOD / 2 + r % MEAN_PERIOD
    }

    /// Records one period that ended at `pc` in `prv` after running `insns`
    /// instructions in `cycles` cycles.
    pub fn record(&mut self, prv: Priv, pc: u64, insns: u64, cycles: u64) {
        let s = self.samples.entry((prv as u8, pc)).or_default();
        s.periods += 1;
        s.insns += insns;
        s.cycles += cycles;
    }

    /// The report: functions (kernel symbols for S- and M-mode pcs, or one
    /// line per privilege level and 4 KiB page where there is no symbol) by
    /// simulated time,
    /// then the hottest program counters.
    pub fn report(&self, symbols: Option<&Symbols>, top: usize) -> String {
        let total_cycles: u64 = self.samples.values().map(|s| s.cycles).sum();
        let total_insns: u64 = self.samples.values().map(|s| s.insns).sum();
        let pct = |x: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                100.0 * x as f64 / of as f64
            }
        };
        // time%, insns% and cycles per instruction of a group of samples.
        let shares = |s: &Sample| {
            format!(
                "{:6.2} {:7.2} {:12.2}",
                pct(s.cycles, total_cycles),
                pct(s.insns, total_insns),
                s.cycles as f64 / s.insns.max(1) as f64
            )
        };
        let mut by_prv: BTreeMap<u8, Sample> = BTreeMap::new();
        let mut by_fn: BTreeMap<(u8, String), Sample> = BTreeMap::new();
        for (&(prv, pc), s) in &self.samples {
            let p = by_prv.entry(prv).or_default();
            p.insns += s.insns;
            p.cycles += s.cycles;
            p.periods += s.periods;
            let name = symbols
                .filter(|_| prv != Priv::User as u8)
                .and_then(|m| m.lookup(pc))
                .map(|(n, _)| n.to_string())
                .unwrap_or_else(|| format!("{:#x} page", pc & !0xfff));
            let f = by_fn.entry((prv, name)).or_default();
            f.insns += s.insns;
            f.cycles += s.cycles;
            f.periods += s.periods;
        }
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# rvnvmm boot profile: {} samples, {total_insns} instructions, {total_cycles} cycles",
            self.samples.values().map(|s| s.periods).sum::<u64>()
        );
        let _ = writeln!(
            out,
            "\n# by privilege level\n# time%  insns%  cycles/insn  level"
        );
        for (prv, s) in &by_prv {
            let _ = writeln!(out, "{}  {}", shares(s), prv_name(*prv));
        }
        let mut fns: Vec<_> = by_fn.into_iter().collect();
        fns.sort_by(|a, b| b.1.cycles.cmp(&a.1.cycles).then(a.0.cmp(&b.0)));
        let _ = writeln!(
            out,
            "\n# by function\n# time%  insns%  cycles/insn  level  function"
        );
        for ((prv, name), s) in fns.iter().take(top) {
            let _ = writeln!(out, "{}  {:5}  {name}", shares(s), prv_name(*prv));
        }
        let mut pcs: Vec<_> = self.samples.iter().collect();
        pcs.sort_by(|a, b| b.1.cycles.cmp(&a.1.cycles).then(a.0.cmp(b.0)));
        let _ = writeln!(
            out,
            "\n# by pc (end of a period)\n# time%  samples  level  pc  where"
        );
        for (&(prv, pc), s) in pcs.iter().take(top) {
            let at = symbols
                .filter(|_| prv != Priv::User as u8)
                .and_then(|m| m.lookup(pc))
                .map(|(n, off)| format!("{n}+{off:#x}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{:6.2} {:8}  {:5}  {pc:#x}  {at}",
                pct(s.cycles, total_cycles),
                s.periods,
                prv_name(prv)
            );
        }
        out
    }
}

fn prv_name(prv: u8) -> &'static str {
    match prv {
        0 => "U",
        1 => "S",
        _ => "M",
    }
}

/// Text symbols of a kernel, from a `System.map`.
pub struct Symbols {
    /// (address, name), sorted by address.
    syms: Vec<(u64, String)>,
}

impl Symbols {
    /// Parses `System.map` text: `ADDRESS TYPE NAME` per line; keeps text
    /// symbols (t, T, w, W).
    pub fn parse(text: &str) -> Symbols {
        let mut syms: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let name = f.next()?;
                matches!(kind, "t" | "T" | "w" | "W").then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort();
        Symbols { syms }
    }

    /// The symbol at or below `pc` and the offset into it; none below the
    /// first symbol or more than 1 MiB past the nearest one.
    pub fn lookup(&self, pc: u64) -> Option<(&str, u64)> {
        let i = self.syms.partition_point(|(a, _)| *a <= pc);
        let (a, n) = self.syms.get(i.checked_sub(1)?)?;
        (pc - a < 1 << 20).then_some((n.as_str(), pc - a))
    }

    /// The `System.map` that belongs to `kernel` (`vmlinux-V` or
    /// `vmlinuz-V` beside `System.map-V`), if there is one.
    pub fn beside(kernel: &Path) -> Option<PathBuf> {
        let name = kernel.file_name()?.to_str()?;
        let version = name
            .strip_prefix("vmlinux")
            .or_else(|| name.strip_prefix("vmlinuz"))
            .or_else(|| name.strip_prefix("Image"))?;
        let map = kernel.with_file_name(format!("System.map{version}"));
        map.is_file().then_some(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_name_the_function_a_pc_is_in() {
        let m = Symbols::parse(
            "ffffffff80000000 T _start\nffffffff80000100 t helper\n\
             ffffffff80000200 D some_data\nffffffff80000300 W weak_fn\n",
        );
        assert_eq!(m.lookup(0xffff_ffff_8000_0104), Some(("helper", 4)));
        // Data symbols are not functions: the pc stays in `helper`.
        assert_eq!(m.lookup(0xffff_ffff_8000_0204), Some(("helper", 0x104)));
        assert_eq!(m.lookup(0xffff_ffff_8000_0300), Some(("weak_fn", 0)));
        assert_eq!(m.lookup(0x1000), None);
        assert_eq!(
            m.lookup(0xffff_ffff_9000_0000),
            None,
            "far past the last symbol"
        );
    }

    #[test]
    fn periods_vary_around_the_mean_and_repeat_from_run_to_run() {
        let (mut a, mut b) = (Profile::default(), Profile::default());
        let pa: Vec<u64> = (0..1000).map(|_| a.next_period()).collect();
        let pb: Vec<u64> = (0..1000).map(|_| b.next_period()).collect();
        assert_eq!(pa, pb);
        assert!(pa
            .iter()
            .all(|&p| (MEAN_PERIOD / 2..MEAN_PERIOD * 3 / 2).contains(&p)));
        let mean = pa.iter().sum::<u64>() / pa.len() as u64;
        assert!(mean.abs_diff(MEAN_PERIOD) < MEAN_PERIOD / 20, "mean {mean}");
        assert!(pa.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn the_report_ranks_functions_by_time_not_by_instructions() {
        let m = Symbols::parse("1000 T cheap\n2000 T costly\n");
        let mut p = Profile::default();
        p.record(Priv::Supervisor, 0x1004, 900, 900);
        p.record(Priv::Supervisor, 0x2008, 100, 9100);
        p.record(Priv::User, 0x10_0000, 0, 0);
        let r = p.report(Some(&m), 10);
        let costly = r.find("costly").unwrap();
        let cheap = r.find("  cheap").unwrap();
        assert!(costly < cheap, "{r}");
        assert!(r.contains(" 91.00   10.00"), "{r}");
        assert!(r.contains("0x100000 page"), "{r}");
    }
}
