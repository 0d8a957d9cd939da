//! Interval timers (`setitimer`: `ITIMER_REAL`, `ITIMER_VIRTUAL`,
//! `ITIMER_PROF`) and timerfds, all in simulated time.
//!
//! * `ITIMER_REAL` runs on the simulated clock. Its expiry is a wake-up of
//!   the scheduler (`Cores::next_wakeup`), as a thread's timed wait is: it
//!   falls due when the cores have reached it, queues `SIGALRM` to the
//!   process and reloads. A running thread's turn ends at it
//!   ([`Process::timer_turn_end`]), so the signal comes within a block of
//!   its time.
//! * `ITIMER_VIRTUAL` and `ITIMER_PROF` run on the process's CPU time: the
//!   simulated time its threads ran on their harts (a blocked thread's hart
//!   time does not count). The emulated kernel takes no simulated time, so
//!   user and user+system time are the same and the two timers count alike;
//!   unlike Linux, no tick is added to a value.
//! * A timerfd is a host eventfd, which the guest's descriptor is, so that
//!   `poll`, `select` and `epoll` see it. The kernel keeps the eventfd
//!   readable exactly while the timer has expired at the simulated time of
//!   the thread that looks ([`Process::sync_timerfds`], before every poll),
//!   reads of it are answered here, and a polling wait with a timerfd armed
//!   sleeps in simulated time until the timer's next expiry instead of
//!   blocking on the host (`Process::wait_or_restart`). No host timer is
//!   ever used: runs stay deterministic.

use crate::abi::{Itimerspec, Itimerval};
use crate::errno::*;
use crate::process::{Process, ThreadState};
use crate::signal::{SignalInfo, SI_KERNEL};
use rvnvmm_sched::{Cores, Status};
use std::collections::BTreeMap;

/// `setitimer`'s timers, by their number.
pub(crate) const ITIMER_REAL: usize = 0;
pub(crate) const ITIMER_VIRTUAL: usize = 1;
pub(crate) const ITIMER_PROF: usize = 2;

/// The signal each interval timer sends.
pub(crate) const ITIMER_SIGNALS: [i32; 3] = [14, 26, 27]; // SIGALRM, SIGVTALRM, SIGPROF

/// When a timer expires: its first expiry not yet counted and its period,
/// on some clock in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// The first expiry not yet counted; `None`: disarmed.
    pub next: Option<u64>,
    /// The period (0: one-shot).
    pub interval: u64,
}

impl Schedule {
    /// A timer expiring at `at`, then every `interval`.
    pub fn armed(at: u64, interval: u64) -> Schedule {
        Schedule {
            next: Some(at),
            interval,
        }
    }

    /// The expirations at or before `now` not counted yet.
    pub fn due(&self, now: u64) -> u64 {
        match self.next {
            Some(n) if n <= now => match self.interval {
                0 => 1,
                i => 1 + (now - n) / i,
            },
            _ => 0,
        }
    }

    /// Counts the expirations due at `now`: the schedule moves to the first
    /// expiry after `now`, or a one-shot timer disarms. Returns the count.
    pub fn take(&mut self, now: u64) -> u64 {
        let k = self.due(now);
        if let (Some(n), true) = (self.next, k > 0) {
            self.next = match self.interval {
                0 => None,
                i => Some(n.saturating_add(k.saturating_mul(i))),
            };
        }
        k
    }

    /// The time from `now` to the next expiry after it; 0 for a one-shot
    /// timer that has expired or a disarmed one.
    pub fn remaining(&self, now: u64) -> u64 {
        match self.next {
            None => 0,
            Some(n) if n > now => n - now,
            Some(_) if self.interval == 0 => 0,
            Some(n) => {
                let k = self.due(now);
                n.saturating_add(k.saturating_mul(self.interval)) - now
            }
        }
    }

    /// The first expiry after `now`, if any.
    pub fn next_after(&self, now: u64) -> Option<u64> {
        let n = self.next?;
        if n > now {
            Some(n)
        } else if self.interval == 0 {
            None
        } else {
            Some(n.saturating_add(self.due(now).saturating_mul(self.interval)))
        }
    }
}

/// One timerfd.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TimerFd {
    /// `CLOCK_REALTIME`, `CLOCK_MONOTONIC` or `CLOCK_BOOTTIME` (its
    /// absolute times are converted; the schedule is on the simulated
    /// monotonic clock).
    pub clock: u64,
    /// The schedule in simulated (monotonic) ns; its expirations due are
    /// the ones a read returns.
    pub schedule: Schedule,
    /// Whether the kernel made the host eventfd readable.
    pub readable: bool,
}

/// The process's timerfds: the guest descriptors standing for each (a
/// `dup` gives a timer a second one), and the timers.
#[derive(Clone, Debug, Default)]
pub(crate) struct TimerFds {
    /// Guest (= host) descriptor to timer.
    pub fds: BTreeMap<i32, u32>,
    /// The timers by number.
    pub timers: BTreeMap<u32, TimerFd>,
    next_id: u32,
}

impl TimerFds {
    /// The timer descriptor `fd` stands for, if it is a timerfd.
    pub fn get(&self, fd: i32) -> Option<&TimerFd> {
        self.timers.get(self.fds.get(&fd)?)
    }

    fn get_mut(&mut self, fd: i32) -> Option<&mut TimerFd> {
        let id = *self.fds.get(&fd)?;
        self.timers.get_mut(&id)
    }

    /// Registers the new timerfd `fd`.
    pub fn add(&mut self, fd: i32, clock: u64) {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.forget(fd);
        self.fds.insert(fd, id);
        self.timers.insert(
            id,
            TimerFd {
                clock,
                schedule: Schedule::default(),
                readable: false,
            },
        );
    }

    /// `fd` no longer names a timerfd (closed, or replaced by `dup3`); the
    /// timer goes when no descriptor names it.
    pub fn forget(&mut self, fd: i32) {
        if let Some(id) = self.fds.remove(&fd) {
            if !self.fds.values().any(|&v| v == id) {
                self.timers.remove(&id);
            }
        }
    }

    /// `new` is a duplicate of `old`.
    pub fn duplicated(&mut self, old: i32, new: i32) {
        self.forget(new);
        if let Some(&id) = self.fds.get(&old) {
            self.fds.insert(new, id);
        }
    }

    /// Drops the descriptors the host no longer has open (closed by an
    /// `execve`'s close-on-exec).
    pub fn prune_closed(&mut self) {
        let closed: Vec<i32> = self
            .fds
            .keys()
            .copied()
            // SAFETY: F_GETFD takes no argument.
            .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0)
            .collect();
        for fd in closed {
            self.forget(fd);
        }
    }

    /// The earliest expiry of any timerfd after `now`.
    pub fn next_expiry_after(&self, now: u64) -> Option<u64> {
        self.timers
            .values()
            .filter_map(|t| t.schedule.next_after(now))
            .min()
    }
}

/// `timerfd_create`'s and `timerfd_settime`'s flags.
const TFD_NONBLOCK: u64 = 0o4000;
const TFD_CLOEXEC: u64 = 0o2_000_000;
const TFD_TIMER_ABSTIME: u64 = 1;
const TFD_TIMER_CANCEL_ON_SET: u64 = 2;

impl Process {
    // ---- interval timers --------------------------------------------------

    /// The process's CPU time: the simulated time its threads ran, in ns.
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.cycles_to_ns(self.cpu_cycles)
    }

    /// Where interval timer `which` counts now, in ns.
    fn itimer_now(&self, which: usize) -> u64 {
        if which == ITIMER_REAL {
            self.now_ns()
        } else {
            self.cpu_ns()
        }
    }

    /// setitimer(2).
    pub(crate) fn sys_setitimer(&mut self, which: u64, new: u64, old: u64) -> SysResult {
        let (interval, value) = if new != 0 {
            self.read_obj::<Itimerval>(new)?.to_ns().ok_or(EINVAL)?
        } else {
            // A null value disarms (a misfeature Linux keeps).
            (0, 0)
        };
        let which = usize::try_from(which)
            .ok()
            .filter(|&w| w <= ITIMER_PROF)
            .ok_or(EINVAL)?;
        let before = self.itimer_value(which);
        let now = self.itimer_now(which);
        self.itimers[which] = if value == 0 {
            Schedule::default()
        } else {
            Schedule::armed(now.saturating_add(value), interval)
        };
        if old != 0 {
            self.write_obj(old, &before)?;
        }
        Ok(0)
    }

    /// getitimer(2).
    pub(crate) fn sys_getitimer(&mut self, which: u64, cur: u64) -> SysResult {
        let which = usize::try_from(which)
            .ok()
            .filter(|&w| w <= ITIMER_PROF)
            .ok_or(EINVAL)?;
        let v = self.itimer_value(which);
        self.write_obj(cur, &v)?;
        Ok(0)
    }

    /// Timer `which` as getitimer gives it: an armed timer has at least a
    /// microsecond left, as on Linux.
    fn itimer_value(&self, which: usize) -> Itimerval {
        let s = self.itimers[which];
        let left = match s.next {
            None => 0,
            Some(_) => s.remaining(self.itimer_now(which)).max(1000),
        };
        Itimerval::from_ns(s.interval, left)
    }

    /// Whether signal `sig` of a timer could wake or reach a thread now:
    /// it is not ignored, and some thread does not block it or waits for
    /// it in `sigtimedwait`.
    fn timer_signal_matters(&self, sig: i32) -> bool {
        if self.actions[sig as usize].handler == 1 {
            return false;
        }
        let bit = 1u64 << (sig - 1);
        self.threads.iter().any(|t| match t.state {
            ThreadState::Exited => false,
            ThreadState::SigTimedWait { set, .. } if set & bit != 0 => true,
            _ => t.sigmask & bit == 0,
        })
    }

    /// When `ITIMER_REAL` next expires (ns), as a wake-up: while a thread
    /// runs, or while its signal can reach one (a process whose threads all
    /// wait with the signal blocked or ignored is not woken by it).
    pub(crate) fn real_timer_wakeup(&self) -> Option<u64> {
        let next = self.itimers[ITIMER_REAL].next?;
        let runs = self
            .threads
            .iter()
            .any(|t| t.state == ThreadState::Runnable);
        (runs || self.timer_signal_matters(ITIMER_SIGNALS[ITIMER_REAL])).then_some(next)
    }

    /// `ITIMER_REAL` expired at `at` ns: `SIGALRM` to the process, and the
    /// timer reloads past the time the cores have reached (expirations
    /// missed while its signal could not matter merge into this one).
    pub(crate) fn fire_real_timer(&mut self, at: u64) {
        let floor = (0..self.cpus.len())
            .filter(|&c| self.status(c) == Status::Ready)
            .map(|c| self.cycles_to_ns(self.cpus[c].core.cycles))
            .min()
            .unwrap_or(at)
            .max(at);
        self.itimers[ITIMER_REAL].take(floor);
        self.timer_signal(ITIMER_SIGNALS[ITIMER_REAL], self.ns_to_cycles(at));
    }

    /// After a turn: the CPU-time timers that the process's CPU time has
    /// reached send their signals.
    pub(crate) fn check_cpu_timers(&mut self) {
        let cpu = self.cpu_ns();
        for which in [ITIMER_VIRTUAL, ITIMER_PROF] {
            if self.itimers[which].take(cpu) > 0 {
                let now = self.cpus[self.threads[self.current].cpu].core.cycles;
                self.timer_signal(ITIMER_SIGNALS[which], now);
            }
        }
    }

    /// A timer's signal to the process (`SI_KERNEL`, as Linux's
    /// itimers), at `at_cycles`: a thread it wakes goes on no earlier.
    /// An ignored one is dropped, as Linux drops it, unless it is blocked
    /// (the disposition may change before it is unblocked).
    fn timer_signal(&mut self, sig: i32, at_cycles: u64) {
        let i = self.signal_target(sig);
        let blocked = self.threads[i].sigmask & 1 << (sig - 1) != 0;
        if self.actions[sig as usize].handler == 1 && !blocked {
            // Ignored: discarded as it is sent, it interrupts nothing.
            return;
        }
        let waited = self.threads[i].state != ThreadState::Runnable;
        let at_ns = self.cycles_to_ns(at_cycles);
        self.queue_signal_at(
            i,
            SignalInfo {
                signo: sig,
                code: SI_KERNEL,
                data: [0; 4],
            },
            at_ns,
        );
        let t = &self.threads[i];
        if waited && t.state == ThreadState::Runnable {
            let c = &mut self.cpus[t.cpu].core;
            c.cycles = c.cycles.max(at_cycles);
        }
    }

    /// The cycle at which a turn of `cpu` should end for a timer: at
    /// `ITIMER_REAL`'s expiry, and where the CPU time the turn adds would
    /// reach a CPU-time timer's.
    pub(crate) fn timer_turn_end(&self, cpu: usize) -> Option<u64> {
        let real = self.itimers[ITIMER_REAL]
            .next
            .map(|ns| self.ns_to_cycles(ns));
        let clock = self.cpus[cpu].core.cycles;
        let cpu_time = [ITIMER_VIRTUAL, ITIMER_PROF]
            .into_iter()
            .filter_map(|w| self.itimers[w].next)
            .map(|ns| clock.saturating_add(self.ns_to_cycles(ns).saturating_sub(self.cpu_cycles)));
        real.into_iter().chain(cpu_time).min()
    }

    /// Whether a CPU-time timer is armed.
    pub(crate) fn cpu_timer_armed(&self) -> bool {
        self.itimers[ITIMER_VIRTUAL].next.is_some() || self.itimers[ITIMER_PROF].next.is_some()
    }

    // ---- timerfds ---------------------------------------------------------

    /// timerfd_create(2): an eventfd stands for the timer.
    pub(crate) fn sys_timerfd_create(&mut self, clock: u64, flags: u64) -> SysResult {
        if flags & !(TFD_NONBLOCK | TFD_CLOEXEC) != 0 {
            return Err(EINVAL);
        }
        match clock {
            0 | 1 | 7 => {}
            // CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM: no wake-up alarms.
            8 | 9 => return Err(EPERM),
            _ => return Err(EINVAL),
        }
        // EFD_NONBLOCK and EFD_CLOEXEC are TFD_NONBLOCK's and TFD_CLOEXEC's
        // bits: the descriptor's flags are the guest's.
        // SAFETY: eventfd takes integers only.
        let fd = crate::syscall::host(unsafe { libc::eventfd(0, flags as i32) } as i64)?;
        self.timerfds.add(fd as i32, clock);
        Ok(fd)
    }

    /// The timerfd `fd`, or the error Linux gives for a descriptor that is
    /// not one (EBADF closed, EINVAL another kind).
    fn timerfd(&self, fd: i32) -> Result<&TimerFd, Errno> {
        match self.timerfds.get(fd) {
            Some(t) => Ok(t),
            // SAFETY: F_GETFD takes no argument.
            None if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 || self.is_own_fd(fd) => {
                Err(EBADF)
            }
            None => Err(EINVAL),
        }
    }

    /// timerfd_settime(2).
    pub(crate) fn sys_timerfd_settime(
        &mut self,
        fd: i32,
        flags: u64,
        new: u64,
        old: u64,
    ) -> SysResult {
        let new: Itimerspec = self.read_obj(new)?;
        let (interval, value) = new.to_ns().ok_or(EINVAL)?;
        if flags & !(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) != 0 {
            return Err(EINVAL);
        }
        let now = self.now_ns();
        let t = self.timerfd(fd)?;
        let before = Itimerspec::from_ns(t.schedule.interval, t.schedule.remaining(now));
        let at = if flags & TFD_TIMER_ABSTIME == 0 {
            now.saturating_add(value)
        } else if t.clock == 0 {
            // A date: simulated time zero is the epoch option's.
            value.saturating_sub(self.opts.epoch_secs * 1_000_000_000)
        } else {
            value
        };
        let t = self.timerfds.get_mut(fd).expect("a timerfd");
        t.schedule = if value == 0 {
            Schedule::default()
        } else {
            Schedule::armed(at, interval)
        };
        self.sync_timerfds();
        if old != 0 {
            self.write_obj(old, &before)?;
        }
        Ok(0)
    }

    /// timerfd_gettime(2): the time to the next expiry and the period.
    pub(crate) fn sys_timerfd_gettime(&mut self, fd: i32, cur: u64) -> SysResult {
        let now = self.now_ns();
        let t = self.timerfd(fd)?;
        let v = Itimerspec::from_ns(t.schedule.interval, t.schedule.remaining(now));
        self.write_obj(cur, &v)?;
        Ok(0)
    }

    /// read(2) of the timerfd `fd`: the expirations since the last read
    /// (a u64); none yet: EAGAIN if non-blocking, else the thread sleeps
    /// until the next expiry and reads again. `None`: it sleeps.
    pub(crate) fn timerfd_read(&mut self, fd: i32, buf: u64, len: u64) -> Option<i64> {
        let r = (|| -> Result<Option<i64>, Errno> {
            if len < 8 {
                return Err(EINVAL);
            }
            let now = self.now_ns();
            let t = self.timerfds.get_mut(fd).expect("a timerfd");
            let due = t.schedule.due(now);
            if due > 0 {
                self.write_u64(buf, due)?;
                let t = self.timerfds.get_mut(fd).expect("a timerfd");
                t.schedule.take(now);
                self.sync_timerfds();
                return Ok(Some(8));
            }
            let next = t.schedule.next;
            // SAFETY: F_GETFL takes no argument.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if fl >= 0 && fl & libc::O_NONBLOCK != 0 {
                return Err(EAGAIN);
            }
            let i = self.current;
            match next {
                Some(at) => {
                    let t = &mut self.threads[i];
                    t.state = ThreadState::Sleep {
                        until: at,
                        restart: true,
                    };
                    t.hart.pc -= 4;
                }
                // Disarmed: only another thread's settime or a signal ends
                // the wait. While another thread can run, look again after
                // a short simulated interval; else only a signal can.
                None if self.others_can_run() => {
                    const LOOK_AGAIN_NS: u64 = 100_000;
                    let t = &mut self.threads[i];
                    t.state = ThreadState::Sleep {
                        until: now.saturating_add(LOOK_AGAIN_NS),
                        restart: true,
                    };
                    t.hart.pc -= 4;
                }
                None => {
                    let t = &mut self.threads[i];
                    t.state = ThreadState::SigWait;
                    t.hart.x[10] = (-EINTR) as u64;
                }
            }
            Ok(None)
        })();
        match r {
            Ok(v) => v,
            Err(e) => Some(-e),
        }
    }

    /// Makes each timerfd's eventfd readable exactly while its timer has
    /// expired at the current thread's simulated time.
    pub(crate) fn sync_timerfds(&mut self) {
        if self.timerfds.timers.is_empty() {
            return;
        }
        let now = self.now_ns();
        let ids: Vec<u32> = self.timerfds.timers.keys().copied().collect();
        for id in ids {
            let Some(&fd) = self
                .timerfds
                .fds
                .iter()
                .find(|&(_, &v)| v == id)
                .map(|(fd, _)| fd)
            else {
                continue;
            };
            let t = self.timerfds.timers.get_mut(&id).expect("listed");
            let want = t.schedule.due(now) > 0;
            if want == t.readable {
                continue;
            }
            let mut v = 1u64;
            // SAFETY: `v` is 8 bytes, an eventfd's counter, alive for the
            // call; the kernel alone writes and reads this eventfd (the
            // guest's reads and writes of it are answered without it), so
            // a read finds the 1 written and neither call blocks.
            let r = unsafe {
                if want {
                    libc::write(fd, (&v as *const u64).cast(), 8)
                } else {
                    libc::read(fd, (&mut v as *mut u64).cast(), 8)
                }
            };
            if r == 8 {
                t.readable = want;
            }
        }
    }

    /// Whether `fd` is one of the emulator's own descriptors.
    fn is_own_fd(&self, fd: i32) -> bool {
        self.fs.is_internal(fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_counts_expirations_and_moves_past_them() {
        let mut s = Schedule::armed(100, 30);
        assert_eq!(s.due(99), 0);
        assert_eq!(s.remaining(99), 1);
        assert_eq!(s.due(100), 1);
        assert_eq!(s.due(189), 3, "100, 130, 160");
        assert_eq!(s.remaining(189), 1, "the next at 190");
        assert_eq!(s.next_after(189), Some(190));
        assert_eq!(s.take(189), 3);
        assert_eq!(s.next, Some(190));
        assert_eq!(s.take(189), 0, "counted once");
        let mut once = Schedule::armed(50, 0);
        assert_eq!(once.remaining(60), 0);
        assert_eq!(once.next_after(60), None);
        assert_eq!(once.take(60), 1);
        assert_eq!(once, Schedule::default(), "a one-shot timer disarms");
        assert_eq!(Schedule::default().due(u64::MAX), 0);
    }

    #[test]
    fn a_duplicate_keeps_the_timer_until_the_last_descriptor_goes() {
        let mut t = TimerFds::default();
        t.add(10, 1);
        t.duplicated(10, 11);
        assert!(t.get(11).is_some());
        t.forget(10);
        assert!(t.get(11).is_some(), "the duplicate still has it");
        t.forget(11);
        assert!(t.timers.is_empty());
        assert!(t.fds.is_empty());
    }
}
