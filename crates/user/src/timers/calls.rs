//! The interval timers' and timerfds' system calls, and their expiries
//! delivered to the process.

use super::*;
use crate::abi::{Itimerspec, Itimerval};
use crate::process::{Process, ThreadState};
use crate::signal::{SignalInfo, SI_KERNEL};

impl Process {
    // ---- interval timers --------------------------------------------------

    /// The process's CPU time: the simulated time its threads ran, in ns.
    pub(crate) fn cpu_ns(&self) -> u64 {
        self.cycles_to_ns(self.threads.cpu_cycles)
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
        self.signals.itimers[which] = if value == 0 {
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
        let s = self.signals.itimers[which];
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
        if self.signals.actions[sig as usize].handler == 1 {
            return false;
        }
        let bit = 1u64 << (sig - 1);
        self.threads.all.iter().any(|t| match t.state {
            ThreadState::Exited => false,
            ThreadState::SigTimedWait { set, .. } if set & bit != 0 => true,
            _ => t.sigmask & bit == 0,
        })
    }

    /// When `ITIMER_REAL` next expires (ns), as a wake-up: while a thread
    /// runs, or while its signal can reach one (a process whose threads all
    /// wait with the signal blocked or ignored is not woken by it).
    pub(crate) fn real_timer_wakeup(&self) -> Option<u64> {
        let next = self.signals.itimers[ITIMER_REAL].next?;
        let runs = self
            .threads
            .all
            .iter()
            .any(|t| t.state == ThreadState::Runnable);
        (runs || self.timer_signal_matters(ITIMER_SIGNALS[ITIMER_REAL])).then_some(next)
    }

    /// `ITIMER_REAL` expired at `at` ns: `SIGALRM` to the process, and the
    /// timer reloads past the time the cores have reached (expirations
    /// missed while its signal could not matter merge into this one).
    pub(crate) fn fire_real_timer(&mut self, at: u64) {
        let floor = (0..self.threads.cpus.len())
            .filter(|&c| self.status(c) == Status::Ready)
            .map(|c| self.cycles_to_ns(self.threads.cpus[c].core.cycles))
            .min()
            .unwrap_or(at)
            .max(at);
        self.signals.itimers[ITIMER_REAL].take(floor);
        self.timer_signal(ITIMER_SIGNALS[ITIMER_REAL], self.ns_to_cycles(at));
    }

    /// After a turn: the CPU-time timers that the process's CPU time has
    /// reached send their signals.
    pub(crate) fn check_cpu_timers(&mut self) {
        let cpu = self.cpu_ns();
        for which in [ITIMER_VIRTUAL, ITIMER_PROF] {
            if self.signals.itimers[which].take(cpu) > 0 {
                let now = self.threads.cpus[self.threads.current().cpu].core.cycles;
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
        let blocked = self.threads.all[i].sigmask & 1 << (sig - 1) != 0;
        if self.signals.actions[sig as usize].handler == 1 && !blocked {
            // Ignored: discarded as it is sent, it interrupts nothing.
            return;
        }
        let waited = self.threads.all[i].state != ThreadState::Runnable;
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
        let t = &self.threads.all[i];
        if waited && t.state == ThreadState::Runnable {
            let c = &mut self.threads.cpus[t.cpu].core;
            c.cycles = c.cycles.max(at_cycles);
        }
    }

    /// The cycle at which a turn of `cpu` should end for a timer: at
    /// `ITIMER_REAL`'s expiry, and where the CPU time the turn adds would
    /// reach a CPU-time timer's.
    pub(crate) fn timer_turn_end(&self, cpu: usize) -> Option<u64> {
        let real = self.signals.itimers[ITIMER_REAL]
            .next
            .map(|ns| self.ns_to_cycles(ns));
        let clock = self.threads.cpus[cpu].core.cycles;
        let cpu_time = [ITIMER_VIRTUAL, ITIMER_PROF]
            .into_iter()
            .filter_map(|w| self.signals.itimers[w].next)
            .map(|ns| {
                clock.saturating_add(
                    self.ns_to_cycles(ns)
                        .saturating_sub(self.threads.cpu_cycles),
                )
            });
        real.into_iter().chain(cpu_time).min()
    }

    /// Whether a CPU-time timer is armed.
    pub(crate) fn cpu_timer_armed(&self) -> bool {
        self.signals.itimers[ITIMER_VIRTUAL].next.is_some()
            || self.signals.itimers[ITIMER_PROF].next.is_some()
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
        self.files.timerfds.add(fd as i32, clock);
        Ok(fd)
    }

    /// The timerfd `fd`, or the error Linux gives for a descriptor that is
    /// not one (EBADF closed, EINVAL another kind).
    fn timerfd(&self, fd: i32) -> Result<&TimerFd, Errno> {
        match self.files.timerfds.get(fd) {
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
        let t = self.files.timerfds.get_mut(fd).expect("a timerfd");
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
            let t = self.files.timerfds.get_mut(fd).expect("a timerfd");
            let due = t.schedule.due(now);
            if due > 0 {
                self.write_u64(buf, due)?;
                let t = self.files.timerfds.get_mut(fd).expect("a timerfd");
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
            let i = self.threads.current;
            match next {
                Some(at) => {
                    let t = &mut self.threads.all[i];
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
                    let t = &mut self.threads.all[i];
                    t.state = ThreadState::Sleep {
                        until: now.saturating_add(LOOK_AGAIN_NS),
                        restart: true,
                    };
                    t.hart.pc -= 4;
                }
                None => {
                    let t = &mut self.threads.all[i];
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
        if self.files.timerfds.timers.is_empty() {
            return;
        }
        let now = self.now_ns();
        let ids: Vec<u32> = self.files.timerfds.timers.keys().copied().collect();
        for id in ids {
            let Some(&fd) = self
                .files
                .timerfds
                .fds
                .iter()
                .find(|&(_, &v)| v == id)
                .map(|(fd, _)| fd)
            else {
                continue;
            };
            let t = self.files.timerfds.timers.get_mut(&id).expect("listed");
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
        self.files.fs.is_internal(fd)
    }
}
