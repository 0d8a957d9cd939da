//! The `riscv_hwprobe` system call (nr 258) as Linux 6.12 answers it
//! (`arch/riscv/kernel/sys_hwprobe.c`): every value comes from the harts'
//! extension set and configuration, and the arguments are checked as the
//! kernel checks them.

use crate::abi::HwProbe;
use crate::errno::*;
use crate::process::Process;
use rvnvmm_hart::HartConfig;
use rvnvmm_isa::{Ext, CBOZ_BLOCK_BYTES};

/// Bytes of one `struct riscv_hwprobe` in the guest's array.
const PAIR: u64 = std::mem::size_of::<HwProbe>() as u64;

/// Keys (`RISCV_HWPROBE_KEY_*`).
pub const KEY_MVENDORID: i64 = 0;
pub const KEY_MARCHID: i64 = 1;
pub const KEY_MIMPID: i64 = 2;
pub const KEY_BASE_BEHAVIOR: i64 = 3;
pub const KEY_IMA_EXT_0: i64 = 4;
pub const KEY_CPUPERF_0: i64 = 5;
pub const KEY_ZICBOZ_BLOCK_SIZE: i64 = 6;
pub const KEY_HIGHEST_VIRT_ADDRESS: i64 = 7;
pub const KEY_TIME_CSR_FREQ: i64 = 8;
pub const KEY_MISALIGNED_SCALAR_PERF: i64 = 9;
pub const KEY_MISALIGNED_VECTOR_PERF: i64 = 10;
/// The highest key Linux 6.12 knows.
const MAX_KEY: i64 = KEY_MISALIGNED_VECTOR_PERF;

/// `RISCV_HWPROBE_BASE_BEHAVIOR_IMA`.
const BASE_BEHAVIOR_IMA: u64 = 1;
/// `RISCV_HWPROBE_MISALIGNED_SCALAR_FAST`: the harts do misaligned loads
/// and stores in hardware, as one access per line touched, faster than the
/// byte accesses that would replace them.
const MISALIGNED_SCALAR_FAST: u64 = 3;
/// `RISCV_HWPROBE_MISALIGNED_SCALAR_EMULATED`: misaligned accesses trap and
/// firmware emulates them (Rocket), so software should avoid them.
const MISALIGNED_SCALAR_EMULATED: u64 = 1;
/// `RISCV_HWPROBE_MISALIGNED_VECTOR_UNSUPPORTED`: there is no V.
const MISALIGNED_VECTOR_UNSUPPORTED: u64 = 4;
/// `RISCV_HWPROBE_WHICH_CPUS`: the call answers which CPUs match the pairs.
const WHICH_CPUS: u64 = 1;
/// The highest user virtual address under Sv39 (TASK_SIZE - 1).
const SV39_HIGHEST_USER_VA: u64 = (1 << 38) - 1;

/// What the machine's harts answer for `key` (all harts are alike), or
/// `None` for a key Linux does not know.
pub fn value(key: i64, hart: &HartConfig) -> Option<u64> {
    let (isa, timebase_hz) = (hart.isa, hart.timebase_hz);
    Some(match key {
        // The harts' mvendorid, marchid and mimpid CSRs: 0, not implemented.
        KEY_MVENDORID | KEY_MARCHID | KEY_MIMPID => 0,
        KEY_BASE_BEHAVIOR => BASE_BEHAVIOR_IMA,
        KEY_IMA_EXT_0 => isa.hwprobe_ima_ext_0(),
        KEY_CPUPERF_0 | KEY_MISALIGNED_SCALAR_PERF if hart.misaligned_fast => {
            MISALIGNED_SCALAR_FAST
        }
        KEY_CPUPERF_0 | KEY_MISALIGNED_SCALAR_PERF => MISALIGNED_SCALAR_EMULATED,
        KEY_ZICBOZ_BLOCK_SIZE if isa.has(Ext::Zicboz) => CBOZ_BLOCK_BYTES as u64,
        KEY_ZICBOZ_BLOCK_SIZE => 0,
        KEY_HIGHEST_VIRT_ADDRESS => SV39_HIGHEST_USER_VA,
        KEY_TIME_CSR_FREQ => timebase_hz,
        KEY_MISALIGNED_VECTOR_PERF => MISALIGNED_VECTOR_UNSUPPORTED,
        _ => return None,
    })
}

/// Whether Linux compares `key`'s values as bit sets (a CPU matches when it
/// has every bit asked for) rather than for equality.
fn is_bitmask(key: i64) -> bool {
    matches!(key, KEY_BASE_BEHAVIOR | KEY_IMA_EXT_0 | KEY_CPUPERF_0)
}

impl Process {
    /// `riscv_hwprobe(pairs, pair_count, cpusetsize, cpus, flags)`.
    pub(crate) fn sys_riscv_hwprobe(
        &mut self,
        pairs: u64,
        count: u64,
        cpusetsize: u64,
        cpus: u64,
        flags: u64,
    ) -> SysResult {
        if flags & WHICH_CPUS != 0 {
            return self.hwprobe_which_cpus(pairs, count, cpusetsize, cpus, flags);
        }
        if flags != 0 {
            return Err(EINVAL);
        }
        // NULL and 0 mean every online CPU; otherwise at least one of those
        // given must be online.
        if cpusetsize != 0 || cpus != 0 {
            let set = self.read_cpuset(cpus, cpusetsize)?;
            if set.iter().all(|&w| w == 0) {
                return Err(EINVAL);
            }
        }
        for k in 0..count {
            let at = pairs.wrapping_add(k.wrapping_mul(PAIR));
            let key = self.read_obj::<HwProbe>(at)?.key;
            let pair = match value(key, &self.opts.hart) {
                Some(value) => HwProbe { key, value },
                None => HwProbe { key: -1, value: 0 },
            };
            self.write_obj(at, &pair)?;
        }
        Ok(0)
    }

    /// `RISCV_HWPROBE_WHICH_CPUS`: clears from the CPU set (empty meaning
    /// every online CPU) those that do not match every pair; an unknown key
    /// is marked -1 and empties the set.
    fn hwprobe_which_cpus(
        &mut self,
        pairs: u64,
        count: u64,
        cpusetsize: u64,
        cpus: u64,
        flags: u64,
    ) -> SysResult {
        if flags != WHICH_CPUS || cpusetsize == 0 || cpus == 0 {
            return Err(EINVAL);
        }
        let mut set = self.read_cpuset(cpus, cpusetsize)?;
        if set.iter().all(|&w| w == 0) {
            set = self.online_cpus();
        }
        let mut clear_all = false;
        for k in 0..count {
            let at = pairs.wrapping_add(k.wrapping_mul(PAIR));
            let HwProbe { key, value: want } = self.read_obj(at)?;
            if !(0..=MAX_KEY).contains(&key) {
                clear_all = true;
                self.write_obj(at, &HwProbe { key: -1, value: 0 })?;
            }
            if clear_all {
                continue;
            }
            // Every hart has the same value; Linux knows every key up to
            // MAX_KEY.
            let have = value(key, &self.opts.hart).unwrap_or(0);
            let matches = if is_bitmask(key) {
                have & want == want
            } else {
                have == want
            };
            if !matches {
                set.iter_mut().for_each(|w| *w = 0);
            }
        }
        if clear_all {
            set.iter_mut().for_each(|w| *w = 0);
        }
        let bytes: Vec<u8> = set.iter().flat_map(|w| w.to_le_bytes()).collect();
        let n = (cpusetsize as usize).min(bytes.len());
        self.write_mem(cpus, &bytes[..n])?;
        Ok(0)
    }

    /// The kernel's CPU mask: one bit per hart, in 64-bit words.
    fn online_cpus(&self) -> Vec<u64> {
        let n = self.threads.cpus.len();
        let mut set = vec![0u64; n.div_ceil(64).max(1)];
        for c in 0..n {
            set[c / 64] |= 1 << (c % 64);
        }
        set
    }

    /// The guest's CPU set (at most the kernel mask's size is read), limited
    /// to the online CPUs.
    fn read_cpuset(&mut self, cpus: u64, cpusetsize: u64) -> Result<Vec<u64>, Errno> {
        let online = self.online_cpus();
        let n = (cpusetsize as usize).min(online.len() * 8);
        let mut bytes = vec![0u8; online.len() * 8];
        self.read_mem(cpus, &mut bytes[..n])?;
        Ok(bytes
            .chunks(8)
            .zip(&online)
            .map(|(b, o)| u64::from_le_bytes(b.try_into().unwrap()) & o)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvnvmm_isa::ExtSet;

    fn hart(isa: ExtSet, timebase_hz: u64) -> HartConfig {
        HartConfig {
            isa,
            timebase_hz,
            ..HartConfig::default()
        }
    }

    #[test]
    fn values_follow_the_extension_set() {
        let all = ExtSet::ALL;
        let gc = ExtSet::RV64GC;
        assert_eq!(value(KEY_BASE_BEHAVIOR, &hart(all, 10_000_000)), Some(1));
        let ext = value(KEY_IMA_EXT_0, &hart(all, 10_000_000)).unwrap();
        // FD, C, Zba, Zbb, Zbs, Zicboz, Zbc, Zicond, Zihintpause, Zcb, Zawrs.
        for bit in [0, 1, 3, 4, 5, 6, 7, 35, 36, 44, 48] {
            assert_ne!(ext & 1 << bit, 0, "bit {bit}");
        }
        assert_eq!(
            value(KEY_IMA_EXT_0, &hart(gc, 1)),
            Some(1 | 2 | 1 << 43 | 1 << 45)
        );
        assert_eq!(value(KEY_ZICBOZ_BLOCK_SIZE, &hart(all, 1)), Some(64));
        assert_eq!(value(KEY_ZICBOZ_BLOCK_SIZE, &hart(gc, 1)), Some(0));
        assert_eq!(
            value(KEY_TIME_CSR_FREQ, &hart(gc, 10_000_000)),
            Some(10_000_000)
        );
        assert_eq!(
            value(KEY_HIGHEST_VIRT_ADDRESS, &hart(gc, 1)),
            Some(0x3f_ffff_ffff)
        );
        assert_eq!(value(KEY_MISALIGNED_SCALAR_PERF, &hart(gc, 1)), Some(3));
        assert_eq!(value(KEY_CPUPERF_0, &hart(gc, 1)), Some(3));
        let emulated = HartConfig {
            misaligned_fast: false,
            ..hart(gc, 1)
        };
        assert_eq!(value(KEY_MISALIGNED_SCALAR_PERF, &emulated), Some(1));
        assert_eq!(value(KEY_CPUPERF_0, &emulated), Some(1));
        assert_eq!(value(11, &hart(gc, 1)), None);
        assert_eq!(value(-5, &hart(gc, 1)), None);
    }
}
