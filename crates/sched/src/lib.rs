//! The machine scheduler: one policy for running several cores in
//! simulated-time order, shared by user-mode emulation (threads on harts)
//! and the full-system board (harts on the board).
//!
//! Each core has a clock in cycles. The scheduler repeatedly runs the core
//! that is furthest behind for one *turn* (a time slice), so the cores'
//! clocks advance together:
//!
//! * **Pick.** The ready core with the smallest clock runs next (the lower
//!   index on a tie). A core asleep on a timer ([`Status::Asleep`]) competes
//!   as if ready at its timer (or its clock, if later) and is woken at that
//!   time ([`Cores::wake`]) when chosen. A wake-up of the software the
//!   machine runs ([`Cores::next_wakeup`], e.g. a user-mode thread's timed
//!   wait) that falls due no later than that is delivered first, and the
//!   choice is made again: it changes what is ready at that time.
//! * **Sync limit.** A core may run ahead of the others only by a tolerance
//!   where it reaches the shared memory system ([`Scheduler::sync_limit`]):
//!   the earliest time another core could present a request, plus the
//!   tolerance. The core enforces it (`Core::set_sync_limit`).
//! * **Budget.** A turn runs at most the machine's slice of instructions,
//!   and never past an instruction limit ([`clamp_budget`]).
//! * **Memory time.** After each turn every core's lower bound for its next
//!   request goes to the memory system ([`Cores::note_time`]), so it can
//!   forget history no request can reach any more.
//! * **Idle.** When nothing is ready, no timer is armed and no wake-up is
//!   due, the machine decides ([`Scheduled::idle`]): the board waits for
//!   device input, user mode for a host signal or reports a deadlock.
//!
//! What differs between the two machines is behind [`Scheduled`]: how a turn
//! runs and what its end means (an `ecall`, a trap, `wfi`), the checks
//! before each choice, and device polling after a turn. The scheduler knows
//! nothing of harts or memory systems, only of cores, clocks and
//! [`Status`], so it is tested with fake cores.
//!
//! ```
//! use rvnvmm_sched::{Cores, Scheduler, Status};
//!
//! struct Two([u64; 2]);
//! impl Cores for Two {
//!     fn cores(&self) -> usize { 2 }
//!     fn clock(&self, core: usize) -> u64 { self.0[core] }
//!     fn status(&self, _: usize) -> Status { Status::Ready }
//! }
//! let mut m = Two([500, 200]);
//! let s = Scheduler::new(16);
//! assert_eq!(s.pick(&mut m), Some(1));
//! assert_eq!(s.sync_limit(&m, 1), 516);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::ops::ControlFlow;

/// What a core has to do, as its machine tells the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// It has work to run at its clock.
    Ready,
    /// Its software waits (user mode: every thread on it is in a futex
    /// wait, a sleep, a signal wait). The waits end by wake-ups
    /// ([`Cores::next_wakeup`]) or by another core, so it may present a
    /// request from its own clock on. `timer` is its earliest timed wait,
    /// in cycles.
    Blocked {
        /// The earliest timed wait on the core, if any.
        timer: Option<u64>,
    },
    /// The core itself sleeps (a hart in `wfi`) until an interrupt: its
    /// timer (`timer`, cycles) makes it ready at that time; an interrupt
    /// raised by another core or a device wakes it through the machine.
    Asleep {
        /// The core's timer deadline, if armed.
        timer: Option<u64>,
    },
    /// It has nothing to run (user mode: no thread lives on it).
    Idle,
}

/// The cores of a machine, as the scheduler sees them.
pub trait Cores {
    /// The number of cores.
    fn cores(&self) -> usize;
    /// Core `core`'s clock, in cycles.
    fn clock(&self, core: usize) -> u64;
    /// What core `core` has to do.
    fn status(&self, core: usize) -> Status;
    /// [`Cores::status`] for a use that looks at no timer (the memory-time
    /// notes, [`Scheduler::note_times`], after every turn): a machine whose
    /// timers cost something to work out may leave them `None`. By default
    /// the full status.
    fn status_untimed(&self, core: usize) -> Status {
        self.status(core)
    }
    /// When the earliest wake-up of the machine's software falls due, in
    /// cycles (user mode: the earliest timed wait of any thread).
    fn next_wakeup(&self) -> Option<u64> {
        None
    }
    /// Delivers the wake-up [`Cores::next_wakeup`] named.
    fn deliver_wakeup(&mut self) {}
    /// Core `core`, [`Status::Asleep`], was chosen to run at `at` cycles
    /// (its timer, or its clock if later): it wakes with its clock at `at`.
    fn wake(&mut self, core: usize, at: u64) {
        let _ = (core, at);
    }
    /// Whether a memory system wants [`Cores::note_time`].
    fn notes_time(&self) -> bool {
        false
    }
    /// Core `core` will present no memory request before `cycles`.
    fn note_time(&mut self, core: usize, cycles: u64) {
        let _ = (core, cycles);
    }
}

/// A machine the scheduler runs: its cores plus what happens around each
/// turn. Every hook may end the run with `Break`.
pub trait Scheduled: Cores {
    /// Why a run ended.
    type Stop;
    /// How a turn ended, from [`Scheduled::run_turn`] to [`Scheduled::end_turn`].
    type Turn;
    /// Before each choice (board: a power-off request, a kernel panic, the
    /// instruction limit; user mode: host signals, the exit).
    fn check(&mut self) -> ControlFlow<Self::Stop> {
        ControlFlow::Continue(())
    }
    /// Nothing can run: no core is ready, no timer armed, no wake-up due.
    fn idle(&mut self) -> ControlFlow<Self::Stop>;
    /// Core `core` was chosen: prepares its turn and returns its budget in
    /// instructions (user mode: which thread runs, its pending signals).
    fn begin_turn(&mut self, core: usize) -> ControlFlow<Self::Stop, u64>;
    /// Whether [`Scheduled::begin_turn`] leaves every other core's clock and
    /// status as they were. The sync limit then comes from the look at the
    /// cores that chose the core ([`Scheduler::pick_with_limit`]) rather
    /// than from asking each other core again after `begin_turn`.
    const BEGIN_TURN_KEEPS_OTHERS: bool = false;
    /// Runs the turn: at most `budget` instructions, and no access past
    /// the private caches after `sync_limit` cycles. Whatever the
    /// memory-time notes that follow depend on is applied here (a hart in
    /// `wfi` is asleep); the rest of how the turn ended is returned for
    /// [`Scheduled::end_turn`].
    fn run_turn(
        &mut self,
        core: usize,
        budget: u64,
        sync_limit: u64,
    ) -> ControlFlow<Self::Stop, Self::Turn>;
    /// After the memory-time notes: what the end of the turn means (a
    /// system call, a trap), device polling, waking cores.
    fn end_turn(&mut self, core: usize, turn: Self::Turn) -> ControlFlow<Self::Stop>;
}

/// What the scheduler's choices among a group of ready cores depend on
/// outside the group ([`Scheduler::outside`]), while nothing outside it
/// changes: after a turn of a group's core, a core of the group whose clock
/// is below `pick_before` and the smallest in the group (the first on a
/// tie) is picked next, with the sync limit the smaller of `reach` and the
/// other group cores' clocks, plus the tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outside {
    /// The earliest time anything outside the group could be chosen: a
    /// core ready (or asleep on a timer) or a wake-up falling due
    /// (`u64::MAX`: none). Conservative on ties: at it, the outside may
    /// win.
    pub pick_before: u64,
    /// The earliest time a core outside the group could reach the memory
    /// system (`u64::MAX`: none), before the tolerance.
    pub reach: u64,
}

/// The scheduling policy (see the crate documentation).
#[derive(Clone, Copy, Debug)]
pub struct Scheduler {
    tolerance: u64,
}

/// The budget of a turn: `slice` instructions, but no more than what is
/// left of `max` after `done`; `None` once `done` reached `max`.
pub fn clamp_budget(slice: u64, done: u64, max: Option<u64>) -> Option<u64> {
    match max {
        None => Some(slice),
        Some(max) if done >= max => None,
        Some(max) => Some(slice.min(max - done)),
    }
}

impl Scheduler {
    /// A scheduler letting a core run `tolerance` cycles past the others
    /// before an access past its private caches waits.
    pub fn new(tolerance: u64) -> Scheduler {
        Scheduler { tolerance }
    }

    /// When core `core` could next run: its clock if ready, its timer (or
    /// its clock, if later) if asleep on one.
    fn ready_at<M: Cores + ?Sized>(m: &M, core: usize, status: Status) -> Option<u64> {
        match status {
            Status::Ready => Some(m.clock(core)),
            Status::Asleep { timer: Some(t) } => Some(t.max(m.clock(core))),
            _ => None,
        }
    }

    /// When core `core` could next reach the memory system: its clock if
    /// ready; its timer, or its clock if later, if it waits on one.
    fn reach_at<M: Cores + ?Sized>(m: &M, core: usize, status: Status) -> Option<u64> {
        match status {
            Status::Ready => Some(m.clock(core)),
            Status::Blocked { timer: Some(t) } | Status::Asleep { timer: Some(t) } => {
                Some(t.max(m.clock(core)))
            }
            _ => None,
        }
    }

    /// The core to run next, after delivering the wake-ups due before it
    /// (see the crate documentation); `None` if nothing can run.
    pub fn pick<M: Cores + ?Sized>(&self, m: &mut M) -> Option<usize> {
        self.pick_with_limit(m).map(|(core, _)| core)
    }

    /// [`Scheduler::pick`], with the chosen core's sync limit as
    /// [`Scheduler::sync_limit`] gives it right after the choice, from the
    /// same look at each core's status (waking the chosen core changes
    /// only its own, which its limit does not depend on).
    pub fn pick_with_limit<M: Cores + ?Sized>(&self, m: &mut M) -> Option<(usize, u64)> {
        loop {
            // The chosen core's status is kept from the scan: nothing
            // changes between the scan and the choice.
            let mut best: Option<(u64, usize, Status)> = None;
            // The two earliest times a core could reach the memory system,
            // with the cores: the limit of the chosen one is the other's
            // (`usize::MAX`, `u64::MAX`: none).
            let mut reach = [(usize::MAX, u64::MAX); 2];
            for c in 0..m.cores() {
                let status = m.status(c);
                if let Some(at) = Self::ready_at(m, c, status) {
                    if best.is_none_or(|(b, _, _)| at < b) {
                        best = Some((at, c, status));
                    }
                }
                if let Some(r) = Self::reach_at(m, c, status) {
                    if r < reach[0].1 {
                        reach = [(c, r), reach[0]];
                    } else if r < reach[1].1 {
                        reach[1] = (c, r);
                    }
                }
            }
            if let Some(due) = m.next_wakeup() {
                if best.is_none_or(|(b, _, _)| due <= b) {
                    m.deliver_wakeup();
                    continue;
                }
            }
            let (at, c, status) = best?;
            if matches!(status, Status::Asleep { .. }) {
                m.wake(c, at);
            }
            // (A reach at `u64::MAX` gives the limit of none.)
            let other = if reach[0].0 == c {
                reach[1].1
            } else {
                reach[0].1
            };
            return Some((c, other.saturating_add(self.tolerance)));
        }
    }

    /// How far core `core` may run before an access past its private
    /// caches must wait for the others: the earliest time another core
    /// could reach the memory system (its clock if ready; its timer, or
    /// clock if later, if it waits on one), plus the tolerance. `u64::MAX`
    /// when no other core can run.
    pub fn sync_limit<M: Cores + ?Sized>(&self, m: &M, core: usize) -> u64 {
        (0..m.cores())
            .filter(|&o| o != core)
            .filter_map(|o| Self::reach_at(m, o, m.status(o)))
            .min()
            .map_or(u64::MAX, |c| c.saturating_add(self.tolerance))
    }

    /// What the choices among a group of cores depend on outside it (see
    /// [`Outside`]), `in_group` saying which cores are in it. A machine that
    /// runs a group's turns itself (the ready hardware threads of an SMT
    /// core) makes the choices this scheduler would from it.
    pub fn outside<M: Cores + ?Sized>(m: &M, in_group: impl Fn(usize) -> bool) -> Outside {
        let mut outside = Outside {
            pick_before: m.next_wakeup().unwrap_or(u64::MAX),
            reach: u64::MAX,
        };
        for c in (0..m.cores()).filter(|&c| !in_group(c)) {
            let status = m.status(c);
            if let Some(at) = Self::ready_at(m, c, status) {
                outside.pick_before = outside.pick_before.min(at);
            }
            if let Some(r) = Self::reach_at(m, c, status) {
                outside.reach = outside.reach.min(r);
            }
        }
        outside
    }

    /// Tells the memory system, after core `ran` ran, the earliest time
    /// each core can present its next request: a ready or blocked core its
    /// clock; an idle one the *floor*, the smallest clock of the ready and
    /// blocked cores (work reaches it from them), and an asleep one the
    /// floor or its clock, if later (`ran`'s clock when no core is ready
    /// or blocked). Notes only ever raise the memory system's bound.
    pub fn note_times<M: Cores + ?Sized>(&self, m: &mut M, ran: usize) {
        if !m.notes_time() {
            return;
        }
        let n = m.cores();
        // Each core's status is asked once when the machine is small
        // enough for a buffer on the stack (notes change no status). The
        // notes look at no timer: an asleep core is noted from its clock,
        // as it could be woken by another core at any time.
        const BUFFERED: usize = 16;
        let mut buffer = [Status::Idle; BUFFERED];
        let buffered = n <= BUFFERED;
        if buffered {
            for (c, status) in buffer.iter_mut().enumerate().take(n) {
                *status = m.status_untimed(c);
            }
        }
        let status_of = |m: &M, c: usize| {
            if buffered {
                buffer[c]
            } else {
                m.status_untimed(c)
            }
        };
        let floor = (0..n)
            .filter(|&c| matches!(status_of(m, c), Status::Ready | Status::Blocked { .. }))
            .map(|c| m.clock(c))
            .min()
            .unwrap_or_else(|| m.clock(ran));
        for c in 0..n {
            let t = match status_of(m, c) {
                Status::Ready | Status::Blocked { .. } => m.clock(c),
                Status::Asleep { .. } => m.clock(c).max(floor),
                Status::Idle => floor,
            };
            m.note_time(c, t);
        }
    }

    /// Runs `m` until a hook ends the run: check, pick (or idle), begin
    /// the turn, run it under the sync limit, note memory times, end the
    /// turn.
    pub fn run<M: Scheduled + ?Sized>(&self, m: &mut M) -> M::Stop {
        loop {
            if let ControlFlow::Break(stop) = m.check() {
                return stop;
            }
            let Some((core, limit)) = self.pick_with_limit(m) else {
                if let ControlFlow::Break(stop) = m.idle() {
                    return stop;
                }
                continue;
            };
            let budget = match m.begin_turn(core) {
                ControlFlow::Continue(b) => b,
                ControlFlow::Break(stop) => return stop,
            };
            let limit = if M::BEGIN_TURN_KEEPS_OTHERS {
                limit
            } else {
                self.sync_limit(m, core)
            };
            let turn = match m.run_turn(core, budget, limit) {
                ControlFlow::Continue(t) => t,
                ControlFlow::Break(stop) => return stop,
            };
            self.note_times(m, core);
            if let ControlFlow::Break(stop) = m.end_turn(core, turn) {
                return stop;
            }
        }
    }
}

#[cfg(test)]
mod tests;
