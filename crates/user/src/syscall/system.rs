//! System information calls: sysinfo, uname, getrandom, prctl.

use crate::errno::*;
use crate::process::Process;

impl Process {
    pub(super) fn sys_sysinfo(&mut self, buf: u64) -> SysResult {
        let mut b = [0u8; 112];
        let ram = self.opts.ram.1;
        let used = self.aspace.frames.used * 4096;
        b[0..8].copy_from_slice(&(self.now_ns() / 1_000_000_000).to_le_bytes());
        b[32..40].copy_from_slice(&ram.to_le_bytes());
        b[40..48].copy_from_slice(&(ram.saturating_sub(used)).to_le_bytes());
        b[80..82].copy_from_slice(&(1u16).to_le_bytes());
        b[104..108].copy_from_slice(&1u32.to_le_bytes());
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    pub(super) fn sys_uname(&mut self, buf: u64) -> SysResult {
        let mut b = [0u8; 390];
        for (k, s) in [
            "Linux",
            "rvnvmm",
            "6.12.0-rvnvmm",
            "#1 SMP",
            "riscv64",
            "(none)",
        ]
        .iter()
        .enumerate()
        {
            b[k * 65..k * 65 + s.len()].copy_from_slice(s.as_bytes());
        }
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    pub(super) fn sys_getrandom(&mut self, buf: u64, len: u64) -> SysResult {
        // Deterministic: the same run gets the same bytes.
        let n = (len as usize).min(1 << 20);
        let mut out = vec![0u8; n];
        for b in out.iter_mut() {
            self.rng_state ^= self.rng_state << 13;
            self.rng_state ^= self.rng_state >> 7;
            self.rng_state ^= self.rng_state << 17;
            *b = self.rng_state as u8;
        }
        self.write_mem(buf, &out)?;
        Ok(n as i64)
    }

    pub(super) fn sys_prctl(&mut self, op: u64, arg: u64) -> SysResult {
        const PR_SET_NAME: u64 = 15;
        const PR_GET_NAME: u64 = 16;
        const PR_SET_NO_NEW_PRIVS: u64 = 38;
        const PR_GET_NO_NEW_PRIVS: u64 = 39;
        let i = self.current;
        match op {
            // The emulator grants no privileges, so the one-way flag only
            // needs remembering.
            PR_SET_NO_NEW_PRIVS if arg == 1 => {
                self.no_new_privs = true;
                Ok(0)
            }
            PR_SET_NO_NEW_PRIVS => Err(EINVAL),
            PR_GET_NO_NEW_PRIVS => Ok(i64::from(self.no_new_privs)),
            PR_SET_NAME => {
                let mut name = self.read_cstr(arg)?;
                name.truncate(15);
                let mut comm = [0u8; 16];
                comm[..name.len()].copy_from_slice(&name);
                self.threads[i].comm = comm;
                Ok(0)
            }
            PR_GET_NAME => {
                let comm = self.threads[i].comm;
                self.write_mem(arg, &comm)?;
                Ok(0)
            }
            _ => {
                self.warn_once(
                    3 << 32 | op,
                    &format!("unsupported prctl option {op} returns EINVAL"),
                );
                Err(EINVAL)
            }
        }
    }
}
