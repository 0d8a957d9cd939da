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

use crate::errno::*;
use rvnvmm_sched::{Cores, Status};
use std::collections::BTreeMap;

mod calls;

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
