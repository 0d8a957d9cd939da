//! System information calls: sysinfo, uname, getrandom, prctl.

use crate::abi::{Sysinfo, Utsname};
use crate::errno::*;
use crate::process::Process;
use rvnvmm_mem::sv39::PAGE_SIZE;

impl Process {
    pub(super) fn sys_sysinfo(&mut self, buf: u64) -> SysResult {
        let ram = self.opts.dram_node().map_or(0, |n| n.size);
        let used = self.memory.aspace.frames.used * PAGE_SIZE;
        let info = Sysinfo {
            uptime: (self.now_ns() / 1_000_000_000) as i64,
            totalram: ram,
            freeram: ram.saturating_sub(used),
            procs: 1,
            mem_unit: 1,
            ..Sysinfo::default()
        };
        self.write_obj(buf, &info)?;
        Ok(0)
    }

    pub(super) fn sys_uname(&mut self, buf: u64) -> SysResult {
        let field = |s: &str| {
            let mut f = [0u8; 65];
            f[..s.len()].copy_from_slice(s.as_bytes());
            f
        };
        let uts = Utsname {
            sysname: field("Linux"),
            nodename: field("rvnvmm"),
            release: field("6.12.0-rvnvmm"),
            version: field("#1 SMP"),
            machine: field("riscv64"),
            domainname: field("(none)"),
        };
        self.write_obj(buf, &uts)?;
        Ok(0)
    }

    /// Fills `out` from the run's deterministic generator (`getrandom`,
    /// `/proc/sys/kernel/random/uuid`).
    pub(crate) fn random_bytes(&mut self, out: &mut [u8]) {
        for b in out.iter_mut() {
            self.rng_state ^= self.rng_state << 13;
            self.rng_state ^= self.rng_state >> 7;
            self.rng_state ^= self.rng_state << 17;
            *b = self.rng_state as u8;
        }
    }

    pub(super) fn sys_getrandom(&mut self, buf: u64, len: u64) -> SysResult {
        // Deterministic: the same run gets the same bytes.
        let n = (len as usize).min(1 << 20);
        let mut out = vec![0u8; n];
        self.random_bytes(&mut out);
        self.write_mem(buf, &out)?;
        Ok(n as i64)
    }

    pub(super) fn sys_prctl(&mut self, op: u64, arg: u64) -> SysResult {
        const PR_SET_NAME: u64 = 15;
        const PR_GET_NAME: u64 = 16;
        const PR_SET_NO_NEW_PRIVS: u64 = 38;
        const PR_GET_NO_NEW_PRIVS: u64 = 39;
        let i = self.threads.current;
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
                self.threads.all[i].comm = comm;
                Ok(0)
            }
            PR_GET_NAME => {
                let comm = self.threads.all[i].comm;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    #[test]
    fn uname_fields() {
        let mut p = process();
        let buf = scratch(&mut p, 390);
        assert_eq!(p.sys_uname(buf), Ok(0));
        let b = read(&mut p, buf, 390);
        let field = |k: usize| {
            let f = &b[k * 65..(k + 1) * 65];
            String::from_utf8(f[..f.iter().position(|&c| c == 0).unwrap()].to_vec()).unwrap()
        };
        assert_eq!(field(0), "Linux");
        assert_eq!(field(1), "rvnvmm");
        assert!(field(2).starts_with("6.12."), "{}", field(2));
        assert_eq!(field(4), "riscv64");
        assert_eq!(err(p.sys_uname(WILD)), EFAULT);
    }

    #[test]
    fn sysinfo_reports_the_configured_ram() {
        let mut p = process();
        let buf = scratch(&mut p, 112);
        assert_eq!(p.sys_sysinfo(buf), Ok(0));
        let total = p.read_u64(buf + 32).unwrap();
        let free = p.read_u64(buf + 40).unwrap();
        assert_eq!(total, 64 << 20);
        assert!(free < total && free > total / 2, "{free}");
        assert_eq!(p.read_u32(buf + 104), Ok(1), "mem_unit");
    }

    #[test]
    fn getrandom_is_deterministic_per_run() {
        let (mut p, mut q) = (process(), process());
        let (a, b) = (scratch(&mut p, 64), scratch(&mut q, 64));
        assert_eq!(p.sys_getrandom(a, 32), Ok(32));
        assert_eq!(q.sys_getrandom(b, 32), Ok(32));
        let first = read(&mut p, a, 32);
        assert_eq!(first, read(&mut q, b, 32), "the same bytes in every run");
        assert_eq!(p.sys_getrandom(a, 32), Ok(32));
        assert_ne!(first, read(&mut p, a, 32), "a stream, not a constant");
        assert_eq!(err(p.sys_getrandom(WILD, 8)), EFAULT);
    }

    #[test]
    fn prctl_names_the_thread() {
        let mut p = process();
        let name = guest_str(&mut p, "a-rather-long-thread-name");
        let out = scratch(&mut p, 16);
        assert_eq!(p.sys_prctl(15, name), Ok(0), "PR_SET_NAME");
        assert_eq!(p.sys_prctl(16, out), Ok(0), "PR_GET_NAME");
        assert_eq!(
            read(&mut p, out, 16),
            b"a-rather-long-t\0",
            "15 bytes and a NUL"
        );
        assert_eq!(p.sys_prctl(39, 0), Ok(0), "PR_GET_NO_NEW_PRIVS");
        assert_eq!(err(p.sys_prctl(38, 2)), EINVAL);
        assert_eq!(p.sys_prctl(38, 1), Ok(0));
        assert_eq!(p.sys_prctl(39, 0), Ok(1));
        assert_eq!(err(p.sys_prctl(9999, 0)), EINVAL);
    }
}
