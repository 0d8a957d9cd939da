//! Time system calls: clocks, sleeps, process times.

use crate::abi::{GuestTime, Rusage, Timespec, Timeval, Tms};
use crate::errno::*;
use crate::process::{Process, ThreadState};

/// What a clock id names (`CLOCK_*`, or a CPU clock of the process or one
/// of its threads as `clock_getcpuclockid` and `pthread_getcpuclockid`
/// make them: `~pid << 3 | perthread << 2 | type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clock {
    /// The date: `CLOCK_REALTIME` and its coarse, TAI and alarm forms.
    Realtime,
    /// Simulated time: `CLOCK_MONOTONIC`, `CLOCK_BOOTTIME` and theirs.
    Monotonic,
    /// `CLOCK_PROCESS_CPUTIME_ID` or a CPU clock of the process.
    ProcessCpu,
    /// `CLOCK_THREAD_CPUTIME_ID` or a CPU clock of one of its threads.
    ThreadCpu,
}

const TIMER_ABSTIME: u64 = 1;

impl Process {
    /// The clock `id` names, or EINVAL as Linux answers an id that names
    /// none (10, the removed `CLOCK_SGI_CYCLE`, 12 and up, a CPU clock of
    /// type 3 or of another process).
    fn clock(&self, id: u64) -> Result<Clock, Errno> {
        let id = id as i32;
        if id < 0 {
            if id & 3 == 3 {
                return Err(EINVAL);
            }
            let who = !id >> 3;
            return if id & 4 != 0 {
                let ours = who == 0
                    || self
                        .threads
                        .all
                        .iter()
                        .any(|t| t.tid == who && t.state != ThreadState::Exited);
                ours.then_some(Clock::ThreadCpu).ok_or(EINVAL)
            } else {
                (who == 0 || who == self.pid)
                    .then_some(Clock::ProcessCpu)
                    .ok_or(EINVAL)
            };
        }
        Ok(match id {
            0 | 5 | 8 | 11 => Clock::Realtime,
            1 | 4 | 6 | 7 | 9 => Clock::Monotonic,
            2 => Clock::ProcessCpu,
            3 => Clock::ThreadCpu,
            _ => return Err(EINVAL),
        })
    }

    /// nanosleep (`clock` 1, `flags` 0) and clock_nanosleep. As Linux, flags
    /// other than `TIMER_ABSTIME` are ignored; the clocks without a sleep
    /// (the raw and coarse ones, a thread's CPU clock) answer EOPNOTSUPP,
    /// a thread's CPU clock named by id EINVAL. A sleep on the process's
    /// CPU clock counts simulated time, as that clock reads it.
    pub(super) fn sys_nanosleep(&mut self, clock: u64, flags: u64, req: u64) -> Option<i64> {
        let r = (|| -> Result<u64, Errno> {
            let kind = self.clock(clock)?;
            match (clock as i32, kind) {
                (3..=6, _) => return Err(EOPNOTSUPP),
                (..0, Clock::ThreadCpu) => return Err(EINVAL),
                _ => {}
            }
            if req == 0 {
                return Err(EFAULT);
            }
            let t = self.read_timeout(req)?.unwrap_or(0);
            if flags & TIMER_ABSTIME == 0 {
                return Ok(self.now_ns().saturating_add(t));
            }
            Ok(match kind {
                Clock::Realtime => t.saturating_sub(self.opts.epoch_secs * 1_000_000_000),
                _ => t,
            })
        })();
        let until = match r {
            Ok(u) => u,
            Err(e) => return Some(-e),
        };
        let i = self.threads.current;
        self.threads.all[i].state = ThreadState::Sleep {
            until,
            restart: false,
        };
        self.threads.all[i].hart.x[10] = 0;
        None
    }

    pub(super) fn write_timespec(&mut self, addr: u64, ns: u64) -> SysResult {
        self.write_obj(addr, &Timespec::from_ns(ns))?;
        Ok(0)
    }

    pub(super) fn sys_clock_gettime(&mut self, clock: u64, tp: u64) -> SysResult {
        let ns = match self.clock(clock)? {
            Clock::Realtime => self.realtime_ns(),
            Clock::Monotonic | Clock::ProcessCpu | Clock::ThreadCpu => self.now_ns(),
        };
        self.write_timespec(tp, ns)
    }

    pub(super) fn sys_gettimeofday(&mut self, tv: u64) -> SysResult {
        if tv != 0 {
            let now = Timeval::from_ns(self.realtime_ns());
            self.write_obj(tv, &now)?;
        }
        Ok(0)
    }

    pub(super) fn sys_times(&mut self, buf: u64) -> SysResult {
        let ticks = self.now_ns() / 10_000_000;
        if buf != 0 {
            let tms = Tms {
                tms_utime: ticks as i64,
                ..Tms::default()
            };
            self.write_obj(buf, &tms)?;
        }
        Ok(ticks as i64)
    }

    pub(super) fn sys_getrusage(&mut self, buf: u64) -> SysResult {
        let ns = self.now_ns();
        let ru = Rusage {
            ru_utime: Timeval::from_ns(ns),
            ..Rusage::default()
        };
        self.write_obj(buf, &ru)?;
        Ok(0)
    }

    /// clock_getres: every clock counts in nanoseconds.
    pub(super) fn sys_clock_getres(&mut self, clock: u64, res: u64) -> SysResult {
        self.clock(clock)?;
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
    use rvnvmm_sched::Cores;

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
        assert_eq!(p.sys_clock_getres(MONOTONIC, tp), Ok(0));
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
        let until = |p: &Process| match p.threads.all[0].state {
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

    #[test]
    fn clock_ids_are_checked_as_linux_does() {
        let mut p = process();
        let tp = scratch(&mut p, 16);
        for bad in [10u64, 12, 99, u32::MAX as u64 - 4, u32::MAX as u64] {
            assert_eq!(err(p.sys_clock_gettime(bad, tp)), EINVAL, "{bad}");
            assert_eq!(err(p.sys_clock_getres(bad, tp)), EINVAL, "{bad}");
            assert_eq!(err(p.sys_clock_getres(bad, 0)), EINVAL, "{bad}");
        }
        // CPU clocks by id: -6 the process's (pid 0), -2 the thread's.
        let process_clock = (-6i64) as u64;
        let thread_clock = (-2i64) as u64;
        assert_eq!(p.sys_clock_gettime(process_clock, tp), Ok(0));
        assert_eq!(p.sys_clock_getres(thread_clock, 0), Ok(0));
        let other_pid = (!((p.pid + 77) << 3) | 2) as i64 as u64;
        assert_eq!(err(p.sys_clock_gettime(other_pid, tp)), EINVAL);
        assert_eq!(p.sys_clock_getres(11, 0), Ok(0), "CLOCK_TAI");
    }

    #[test]
    fn clock_nanosleep_refuses_what_linux_refuses() {
        let mut p = process();
        let req = scratch(&mut p, 16);
        p.write_u64(req + 8, 1000).unwrap();
        assert_eq!(p.sys_nanosleep(99, 0, req), Some(-EINVAL));
        assert_eq!(p.sys_nanosleep(10, 0, req), Some(-EINVAL));
        for no_sleep in [3, 4, 5, 6] {
            assert_eq!(p.sys_nanosleep(no_sleep, 0, req), Some(-EOPNOTSUPP));
        }
        assert_eq!(p.sys_nanosleep((-2i64) as u64, 0, req), Some(-EINVAL));
        assert_eq!(p.sys_nanosleep(MONOTONIC, 0, 0), Some(-EFAULT));
        p.write_u64(req + 8, NS).unwrap();
        assert_eq!(p.sys_nanosleep(MONOTONIC, 0, req), Some(-EINVAL));
        p.write_u64(req + 8, 1000).unwrap();
        // Flags other than TIMER_ABSTIME are ignored, as by Linux.
        assert_eq!(p.sys_nanosleep(MONOTONIC, 2, req), None);
        assert_eq!(p.threads.all[0].hart.x[10], 0);
    }

    #[test]
    fn a_signal_tells_an_interrupted_sleep_the_time_left() {
        let mut p = process();
        let (req, rem) = (scratch(&mut p, 16), scratch(&mut p, 16));
        p.write_u64(req, 5).unwrap();
        let now = p.now_ns();
        let t = &mut p.threads.all[0];
        t.hart.x[17] = crate::syscall::nr::NANOSLEEP;
        t.hart.x[11] = rem;
        assert_eq!(p.sys_nanosleep(MONOTONIC, 0, req), None);
        let sig = crate::signal::SignalInfo::sent(crate::signal::SIGUSR1, 0, 1);
        p.queue_signal_at(0, sig, now + NS + 250);
        assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
        assert_eq!(p.threads.all[0].hart.x[10], (-EINTR) as u64);
        assert_eq!(timespec(&mut p, rem), 4 * NS - 250);
    }

    /// itimerval or itimerspec `(interval, value)` at `at`, in ns.
    fn pair(p: &mut Process, at: u64, unit: u64) -> (u64, u64) {
        let w = |p: &mut Process, k: u64| p.read_u64(at + 8 * k).unwrap();
        (w(p, 0) * NS + w(p, 1) * unit, w(p, 2) * NS + w(p, 3) * unit)
    }

    fn put_pair(p: &mut Process, at: u64, interval: u64, value: u64, unit: u64) {
        for (k, v) in [
            interval / NS,
            interval % NS / unit,
            value / NS,
            value % NS / unit,
        ]
        .into_iter()
        .enumerate()
        {
            p.write_u64(at + 8 * k as u64, v).unwrap();
        }
    }

    #[test]
    fn setitimer_arms_reloads_and_getitimer_tells_the_time_left() {
        use crate::timers::*;
        let mut p = process();
        let (new, old) = (scratch(&mut p, 32), scratch(&mut p, 32));
        put_pair(&mut p, new, 0, 1_000_000, 1000);
        assert_eq!(err(p.sys_setitimer(3, new, 0)), EINVAL);
        assert_eq!(err(p.sys_getitimer(3, old)), EINVAL);
        assert_eq!(err(p.sys_setitimer(0, WILD, 0)), EFAULT);
        p.write_u64(new + 24, 1_000_000).unwrap();
        assert_eq!(err(p.sys_setitimer(0, new, 0)), EINVAL, "usec 1000000");
        put_pair(&mut p, new, 250_000_000, 2_500_000_000, 1000);
        assert_eq!(p.sys_setitimer(0, new, old), Ok(0));
        assert_eq!(pair(&mut p, old, 1000), (0, 0), "disarmed before");
        assert_eq!(p.sys_getitimer(0, old), Ok(0));
        assert_eq!(pair(&mut p, old, 1000), (250_000_000, 2_500_000_000));
        // The expiry is a wake-up of the scheduler: a thread in pause()
        // gets SIGALRM (EINTR) at its time, and the timer reloads.
        let now = p.now_ns();
        p.threads.all[0].state = ThreadState::SigWait;
        let due = p.ns_to_cycles(now + 2_500_000_000);
        assert_eq!(p.next_wakeup(), Some(due));
        p.deliver_wakeup();
        let t = &p.threads.all[0];
        assert_eq!(t.state, ThreadState::Runnable);
        assert_eq!(t.hart.x[10], (-EINTR) as u64);
        assert_eq!(t.pending[0].signo, 14);
        assert_eq!(p.threads.cpus[0].core.cycles, due, "woken at the expiry");
        assert_eq!(
            p.signals.itimers[ITIMER_REAL].next,
            Some(now + 2_750_000_000)
        );
        assert_eq!(p.sys_getitimer(0, old), Ok(0));
        assert_eq!(pair(&mut p, old, 1000), (250_000_000, 250_000_000));
        // Blocked by every waiting thread, the signal wakes nobody: no
        // wake-up (a deadlock, not a spin).
        p.threads.all[0].pending.clear();
        p.threads.all[0].state = ThreadState::SigWait;
        p.threads.all[0].sigmask = 1 << 13;
        assert_eq!(p.next_wakeup(), None);
        p.threads.all[0].sigmask = 0;
        // A null value disarms.
        assert_eq!(p.sys_setitimer(0, 0, old), Ok(0));
        assert_eq!(p.signals.itimers[ITIMER_REAL], Schedule::default());
        assert_eq!(p.next_wakeup(), None);
    }

    #[test]
    fn cpu_time_timers_fire_when_the_process_has_run_long_enough() {
        let mut p = process();
        let new = scratch(&mut p, 32);
        put_pair(&mut p, new, 0, 1_000_000, 1000);
        for which in [1, 2] {
            assert_eq!(p.sys_setitimer(which, new, 0), Ok(0));
        }
        let end = p.timer_turn_end(0).unwrap();
        assert_eq!(
            end,
            p.threads.cpus[0].core.cycles + p.ns_to_cycles(1_000_000)
        );
        p.threads.cpu_cycles = p.ns_to_cycles(1_000_000) - 1;
        p.check_cpu_timers();
        assert!(p.threads.all[0].pending.is_empty());
        p.threads.cpu_cycles += 1;
        p.check_cpu_timers();
        let sigs: Vec<i32> = p.threads.all[0].pending.iter().map(|s| s.signo).collect();
        assert_eq!(sigs, [26, 27], "SIGVTALRM, SIGPROF");
        assert!(!p.cpu_timer_armed(), "one-shot");
    }

    #[test]
    fn timerfds_count_expirations_in_simulated_time() {
        let mut p = process();
        let (spec, out, buf) = (scratch(&mut p, 32), scratch(&mut p, 32), scratch(&mut p, 8));
        assert_eq!(err(p.sys_timerfd_create(MONOTONIC, 1)), EINVAL, "bad flags");
        assert_eq!(err(p.sys_timerfd_create(2, 0)), EINVAL, "a CPU clock");
        assert_eq!(err(p.sys_timerfd_create(99, 0)), EINVAL);
        let fd = p
            .sys_timerfd_create(MONOTONIC, libc::O_NONBLOCK as u64)
            .unwrap() as i32;
        // Not a timerfd: EINVAL; not open: EBADF.
        assert_eq!(err(p.sys_timerfd_gettime(0, out)), EINVAL);
        assert_eq!(err(p.sys_timerfd_gettime(4000, out)), EBADF);
        put_pair(&mut p, spec, 10_000, 30_000, 1);
        assert_eq!(err(p.sys_timerfd_settime(fd, 4, spec, 0)), EINVAL);
        assert_eq!(p.sys_timerfd_settime(fd, 0, spec, out), Ok(0));
        assert_eq!(pair(&mut p, out, 1), (0, 0));
        assert_eq!(p.sys_timerfd_gettime(fd, out), Ok(0));
        assert_eq!(pair(&mut p, out, 1), (10_000, 30_000));
        assert_eq!(p.timerfd_read(fd, buf, 8), Some(-EAGAIN), "not yet");
        assert_eq!(p.timerfd_read(fd, buf, 4), Some(-EINVAL), "a short buffer");
        let readable = |fd: i32| {
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd, alive for the call.
            unsafe { libc::poll(&mut pfd, 1, 0) == 1 }
        };
        p.sync_timerfds();
        assert!(!readable(fd));
        // 55 us later: expired at 30 and 40 and 50 us.
        let start = p.now_ns();
        p.threads.cpus[0].core.cycles += p.ns_to_cycles(55_000);
        p.sync_timerfds();
        assert!(readable(fd), "the eventfd follows the simulated time");
        assert_eq!(p.timerfd_read(fd, buf, 8), Some(8));
        assert_eq!(p.read_u64(buf), Ok(3));
        assert!(!readable(fd));
        assert_eq!(p.sys_timerfd_gettime(fd, out), Ok(0));
        assert_eq!(pair(&mut p, out, 1), (10_000, start + 60_000 - p.now_ns()));
        // An absolute date on the realtime clock, in the past: expired.
        let rt = p.sys_timerfd_create(REALTIME, 0).unwrap() as i32;
        put_pair(&mut p, spec, 0, EPOCH_SECS * NS, 1);
        assert_eq!(p.sys_timerfd_settime(rt, 1, spec, 0), Ok(0));
        assert_eq!(p.timerfd_read(rt, buf, 8), Some(8));
        assert_eq!(p.read_u64(buf), Ok(1));
        // Blocking and not expired: the thread sleeps until the expiry and
        // reads again.
        put_pair(&mut p, spec, 0, 7_000, 1);
        assert_eq!(p.sys_timerfd_settime(rt, 0, spec, 0), Ok(0));
        p.threads.all[0].hart.pc = 0x1004;
        assert_eq!(p.timerfd_read(rt, buf, 8), None);
        let now = p.now_ns();
        assert_eq!(
            p.threads.all[0].state,
            ThreadState::Sleep {
                until: now + 7_000,
                restart: true
            }
        );
        assert_eq!(p.threads.all[0].hart.pc, 0x1000, "the read runs again");
        // A write is EINVAL, and a duplicate is the same timer.
        p.threads.all[0].state = ThreadState::Runnable;
        assert_eq!(
            p.dispatch(crate::syscall::nr::WRITE, [fd as u64, buf, 8, 0, 0, 0]),
            Some(-EINVAL)
        );
        let d = p.sys_dup(fd).unwrap() as i32;
        assert_eq!(p.sys_close(fd), Ok(0));
        assert_eq!(p.sys_timerfd_gettime(d, out), Ok(0));
        assert_eq!(p.sys_close(d), Ok(0));
        assert_eq!(p.sys_close(rt), Ok(0));
        assert!(p.files.timerfds.timers.is_empty());
    }
}
