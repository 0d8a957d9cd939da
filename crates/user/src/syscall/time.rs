//! Time system calls: clocks, sleeps, process times.

use crate::errno::*;
use crate::process::{Process, ThreadState};

impl Process {
    pub(super) fn sys_nanosleep(&mut self, clock: u64, flags: u64, req: u64) -> Option<i64> {
        let s = match self.read_u64(req) {
            Ok(v) => v,
            Err(e) => return Some(-e),
        };
        let ns = self.read_u64(req + 8).unwrap_or(0);
        let t = s.saturating_mul(1_000_000_000).saturating_add(ns);
        let until = if flags & 1 != 0 {
            if clock == 0 {
                t.saturating_sub(self.opts.epoch_secs * 1_000_000_000)
            } else {
                t
            }
        } else {
            self.now_ns() + t
        };
        let i = self.current;
        self.threads[i].state = ThreadState::Sleep {
            until,
            restart: false,
        };
        self.threads[i].hart.x[10] = 0;
        None
    }

    pub(super) fn write_timespec(&mut self, addr: u64, ns: u64) -> SysResult {
        self.write_u64(addr, ns / 1_000_000_000)?;
        self.write_u64(addr + 8, ns % 1_000_000_000)?;
        Ok(0)
    }

    pub(super) fn sys_clock_gettime(&mut self, clock: u64, tp: u64) -> SysResult {
        let ns = match clock {
            0 | 5 | 8 | 11 => self.realtime_ns(),
            1 | 4 | 6 | 7 | 9 => self.now_ns(),
            2 | 3 => self.now_ns(),
            _ => return Err(EINVAL),
        };
        self.write_timespec(tp, ns)
    }

    pub(super) fn sys_gettimeofday(&mut self, tv: u64) -> SysResult {
        if tv != 0 {
            let ns = self.realtime_ns();
            self.write_u64(tv, ns / 1_000_000_000)?;
            self.write_u64(tv + 8, (ns % 1_000_000_000) / 1000)?;
        }
        Ok(0)
    }

    pub(super) fn sys_times(&mut self, buf: u64) -> SysResult {
        let ticks = self.now_ns() / 10_000_000;
        if buf != 0 {
            self.write_u64(buf, ticks)?;
            self.write_u64(buf + 8, 0)?;
            self.write_u64(buf + 16, 0)?;
            self.write_u64(buf + 24, 0)?;
        }
        Ok(ticks as i64)
    }

    pub(super) fn sys_getrusage(&mut self, buf: u64) -> SysResult {
        let ns = self.now_ns();
        let mut b = [0u8; 144];
        b[0..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        b[8..16].copy_from_slice(&((ns % 1_000_000_000) / 1000).to_le_bytes());
        self.write_mem(buf, &b)?;
        Ok(0)
    }

    /// clock_getres: every clock counts in nanoseconds.
    pub(super) fn sys_clock_getres(&mut self, res: u64) -> SysResult {
        if res != 0 {
            self.write_timespec(res, 1)
        } else {
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    const REALTIME: u64 = 0;
    const MONOTONIC: u64 = 1;
    const NS: u64 = 1_000_000_000;

    fn timespec(p: &mut Process, at: u64) -> u64 {
        p.read_u64(at).unwrap() * NS + p.read_u64(at + 8).unwrap()
    }

    #[test]
    fn clocks_read_the_simulated_time() {
        let mut p = process();
        let tp = scratch(&mut p, 16);
        let now = p.now_ns();
        assert_eq!(p.sys_clock_gettime(MONOTONIC, tp), Ok(0));
        assert_eq!(timespec(&mut p, tp), now);
        assert_eq!(p.sys_clock_gettime(REALTIME, tp), Ok(0));
        assert_eq!(
            timespec(&mut p, tp),
            EPOCH_SECS * NS + now,
            "the epoch option"
        );
        for boottime_or_cputime in [2, 3, 7] {
            assert_eq!(p.sys_clock_gettime(boottime_or_cputime, tp), Ok(0));
            assert_eq!(timespec(&mut p, tp), now);
        }
        assert_eq!(err(p.sys_clock_gettime(12, tp)), EINVAL);
        assert_eq!(err(p.sys_clock_gettime(MONOTONIC, WILD)), EFAULT);
        assert_eq!(p.sys_clock_getres(tp), Ok(0));
        assert_eq!(timespec(&mut p, tp), 1, "nanosecond resolution");
        assert_eq!(p.sys_gettimeofday(tp), Ok(0));
        assert_eq!(p.read_u64(tp), Ok(EPOCH_SECS + now / NS));
        assert_eq!(
            p.sys_times(0),
            Ok((now / 10_000_000) as i64),
            "in 100 Hz ticks"
        );
    }

    #[test]
    fn sleeps_end_at_a_simulated_deadline() {
        let mut p = process();
        let req = scratch(&mut p, 16);
        p.write_u64(req, 2).unwrap();
        p.write_u64(req + 8, 500).unwrap();
        let now = p.now_ns();
        let until = |p: &Process| match p.threads[0].state {
            ThreadState::Sleep { until, .. } => until,
            ref s => panic!("not asleep: {s:?}"),
        };
        assert_eq!(
            p.sys_nanosleep(MONOTONIC, 0, req),
            None,
            "the thread blocks"
        );
        assert_eq!(until(&p), now + 2 * NS + 500);
        // TIMER_ABSTIME on the realtime clock: a date, less the epoch.
        p.write_u64(req, EPOCH_SECS + 3).unwrap();
        assert_eq!(p.sys_nanosleep(REALTIME, 1, req), None);
        assert_eq!(until(&p), 3 * NS + 500);
        assert_eq!(p.sys_nanosleep(MONOTONIC, 0, WILD), Some(-EFAULT));
    }
}
