//! The issue calendar of a core with several hardware threads (SMT).
//!
//! Each hart advances its own clock, and the scheduler runs the threads of
//! a core one after another, a few dozen cycles at a time (the sibling
//! window). What they share is recorded here, per cycle: the core's issue
//! slots (`core.issue_width` per cycle), its load/store port (one memory
//! instruction per cycle), and the busy intervals of its unpipelined units
//! (the iterative multiplier/divider, the FP divider). An instruction
//! issues in the first cycle at or after its ready time (the thread's
//! clock, after its own stalls) that has a free slot and, if it needs one,
//! a free unit for its whole occupancy. A thread waiting on a miss, a
//! fence, a flush or a long operation claims nothing, so its siblings get
//! the cycles.
//!
//! Threads simulated later must still find the slots they would have won:
//! while a thread claims cycles at or after a sibling's clock (the sibling
//! is ready there and has not been simulated yet), a cycle more threads
//! want than it has slots goes to the threads `core.smt_policy` ranks
//! first, and the losers' share is *reserved* for them. A reserved cycle a
//! sibling turns out not to use (it stalled first) stays empty: the cost of
//! not knowing the future. It is bounded by the sibling window and kept
//! small by predicting each thread's reserved slots from its last turn
//! ([`IssueCalendar::set_ready`]).

use rvnvmm_config::SmtPolicy;
use std::sync::{Arc, Mutex};

/// A core's calendar, shared by the [`Core`](crate::Core)s of its threads.
/// The most threads a core's calendar keeps (a byte mask per cycle).
pub const MAX_THREADS: usize = 8;

/// Boxed, so that a thread's turn takes the calendar from its home and
/// puts it back by moving a pointer, not the calendar.
pub type SharedCalendar = Arc<Mutex<Box<IssueCalendar>>>;

/// Cycles the ring remembers: far more than a sibling window plus the
/// longest stall within one block, so a live cycle is never overwritten.
const RING: usize = 1 << 12;

/// Pipeline depth for ICOUNT: instructions issued in the last `DEPTH`
/// cycles are in the pipeline (Rocket's five stages).
const DEPTH: u64 = 5;

/// The busy intervals kept per unit: the threads of a core are within the
/// sibling window of each other, so only the latest few can overlap a
/// claim.
const INTERVALS: usize = 8;

/// A shared unit an instruction may need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    /// Nothing shared beyond the issue slot (ALU, pipelined FPU).
    #[default]
    None,
    /// The load/store port: one memory instruction per cycle.
    Memory,
    /// The iterative integer multiplier/divider, busy for the whole
    /// operation.
    MulDiv,
    /// The iterative FP divide/square-root unit.
    FpDiv,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// The cycle this entry describes; any other cycle mapping here is empty.
    cycle: u64,
    /// Slots taken or reserved.
    used: u8,
    /// Threads that issued here.
    issuers: u8,
    /// Threads a slot here is reserved for.
    reserved: u8,
    /// Memory instructions issued here.
    memory: u8,
}

/// Per-cycle slot use of one core (see the module documentation).
#[derive(Debug, Default)]
pub struct IssueCalendar {
    width: u8,
    policy: Option<SmtPolicy>,
    slots: Vec<Slot>,
    /// Busy `[start, end)` intervals of `Unit::MulDiv` and `Unit::FpDiv`.
    busy: [[(u64, u64); INTERVALS]; 2],
    /// The latest end among each unit's `busy` intervals: a claim from
    /// it on overlaps none (the common case of a thread that waited for
    /// its own last operation).
    busy_until: [u64; 2],
    /// The earliest clock in `ready_at` of a thread with slots still to
    /// reserve (`u64::MAX`: none): before it no sibling can want a slot.
    earliest_rival: u64,
    /// One past the highest thread [`IssueCalendar::set_ready`] was told
    /// of.
    threads: usize,
    /// Each thread's clock when it is ready and not running (set by the
    /// scheduler before a turn); `None` for a thread with nothing to run.
    ready_at: [Option<u64>; MAX_THREADS],
    /// One past the last cycle each thread issued in (or had a slot
    /// reserved in); 0: never.
    last_issue: [u64; MAX_THREADS],
    /// Slots still to reserve for each thread while others run ahead of it.
    reserve_budget: [u32; MAX_THREADS],
    /// Reserved slots each thread used since its budget was last set.
    reserved_used: [u32; MAX_THREADS],
}

/// Where an instruction issues and why it waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issue {
    /// The cycle it issues in.
    pub cycle: u64,
    /// Cycles of the wait spent on a busy shared unit (the rest of
    /// `cycle - ready` went to siblings' issue slots).
    pub unit_wait: u64,
    /// The slot was reserved for this thread.
    reserved: bool,
}

impl IssueCalendar {
    /// The calendar of a core issuing `width` instructions per cycle,
    /// sharing contended slots by `policy`.
    pub fn shared(width: u32, policy: SmtPolicy) -> SharedCalendar {
        Arc::new(Mutex::new(Box::new(IssueCalendar {
            width: width.clamp(1, 8) as u8,
            policy: Some(policy),
            slots: vec![
                Slot {
                    cycle: u64::MAX,
                    ..Slot::default()
                };
                RING
            ],
            earliest_rival: u64::MAX,
            ..IssueCalendar::default()
        })))
    }

    /// Thread `thread` is ready from `clock` on (`Some`), or has nothing to
    /// run (`None`). The scheduler says so for every sibling before a turn.
    ///
    /// How many slots a sibling simulated later gets reserved is predicted
    /// from how many of its reserved slots it used last time (half as many
    /// again, plus 2): a thread that stalls after a few instructions leaves
    /// few reserved slots empty, one that keeps issuing gets its share.
    pub fn set_ready(&mut self, thread: usize, clock: Option<u64>) {
        if thread >= self.ready_at.len() {
            return;
        }
        self.threads = self.threads.max(thread + 1);
        if clock.is_some() && clock != self.ready_at[thread] {
            let used = std::mem::take(&mut self.reserved_used[thread]);
            self.reserve_budget[thread] = used + used / 2 + 2;
        }
        self.ready_at[thread] = clock;
        self.update_earliest_rival();
    }

    fn update_earliest_rival(&mut self) {
        self.earliest_rival = self
            .ready_at
            .iter()
            .zip(&self.reserve_budget)
            .filter(|&(_, &budget)| budget > 0)
            .filter_map(|(ready, _)| *ready)
            .min()
            .unwrap_or(u64::MAX);
    }

    fn slot(&mut self, cycle: u64) -> &mut Slot {
        let s = &mut self.slots[cycle as usize % RING];
        if s.cycle != cycle {
            *s = Slot {
                cycle,
                ..Slot::default()
            };
        }
        s
    }

    fn peek(&self, cycle: u64) -> Slot {
        let s = self.slots[cycle as usize % RING];
        if s.cycle == cycle {
            s
        } else {
            Slot::default()
        }
    }

    /// The end of a busy interval of `unit` overlapping `[t, t + occ)`.
    fn unit_busy_until(&self, unit: Unit, t: u64, occ: u64) -> Option<u64> {
        let k = match unit {
            Unit::MulDiv => 0,
            Unit::FpDiv => 1,
            _ => return None,
        };
        if t >= self.busy_until[k] {
            return None;
        }
        self.busy[k]
            .iter()
            .filter(|&&(s, e)| s < t + occ && t < e)
            .map(|&(_, e)| e)
            .max()
    }

    /// Instructions thread `k` has in the pipeline at `t`: issued (or
    /// reserved) in the `DEPTH` cycles before it.
    #[inline(never)]
    fn in_pipeline(&self, k: usize, t: u64) -> u32 {
        (t.saturating_sub(DEPTH)..t)
            .map(|c| self.peek(c))
            .filter(|s| (s.issuers | s.reserved) & (1 << k) != 0)
            .count() as u32
    }

    /// Whether thread `a` goes before thread `b` for a slot in cycle `t`.
    #[inline]
    fn before(&self, a: usize, b: usize, t: u64) -> bool {
        if self.policy == Some(SmtPolicy::Icount) {
            let (ia, ib) = (self.in_pipeline(a, t), self.in_pipeline(b, t));
            if ia != ib {
                return ia < ib;
            }
        }
        // Round-robin: the thread that issued least recently.
        (self.last_issue[a], a) < (self.last_issue[b], b)
    }

    /// Claims an issue slot for thread `me`'s instruction ready at `ready`,
    /// needing `unit` for `occupancy` cycles: [`IssueCalendar::find`] and
    /// [`IssueCalendar::commit`].
    pub fn issue(&mut self, me: usize, ready: u64, unit: Unit, occupancy: u64) -> Issue {
        let found = self.find(me, ready, unit, occupancy);
        self.commit(me, &found, unit, occupancy);
        found
    }

    /// Where thread `me`'s instruction ready at `ready`, needing `unit` for
    /// `occupancy` cycles, issues. Nothing is taken until
    /// [`IssueCalendar::commit`] (an instruction that traps, or stops to
    /// re-execute later, never issued); cycles that siblings win on the
    /// way are reserved for them.
    #[inline]
    pub fn find(&mut self, me: usize, ready: u64, unit: Unit, occupancy: u64) -> Issue {
        // The common case, inline: a free slot at `ready` nobody else is
        // ready for, and no unit to wait for (the first round of the
        // search below, which gives the same answer).
        if self.earliest_rival > ready && matches!(unit, Unit::None | Unit::Memory) {
            let s = self.peek(ready);
            if s.reserved & (1 << me) == 0
                && s.used < self.width
                && (unit == Unit::None || s.memory == 0)
            {
                return Issue {
                    cycle: ready,
                    unit_wait: 0,
                    reserved: false,
                };
            }
        }
        self.search(me, ready, unit, occupancy)
    }

    /// [`IssueCalendar::find`]'s search, cycle by cycle.
    #[inline(never)]
    fn search(&mut self, me: usize, ready: u64, unit: Unit, occupancy: u64) -> Issue {
        let mut t = ready;
        let mut unit_wait = 0;
        let occ = occupancy.max(1);
        loop {
            let s = self.peek(t);
            let mine = s.reserved & (1 << me) != 0;
            if !mine && s.used >= self.width {
                t += 1;
                continue;
            }
            if unit == Unit::Memory && s.memory >= 1 {
                unit_wait += 1;
                t += 1;
                continue;
            }
            if let Some(end) = self.unit_busy_until(unit, t, occ) {
                unit_wait += end - t;
                t = end;
                continue;
            }
            if !mine && !self.wins(me, t, s) {
                t += 1;
                continue;
            }
            return Issue {
                cycle: t,
                unit_wait,
                reserved: mine,
            };
        }
    }

    /// Whether `me` may take a free slot of cycle `t` given the siblings
    /// ready there and not yet simulated; if not, reserves the cycle's
    /// remaining slots for the siblings that win it.
    fn wins(&mut self, me: usize, t: u64, s: Slot) -> bool {
        // No sibling with slots to reserve is ready by `t`: no rivals (the
        // loop below would find none). The common case of a thread alone on
        // its core, or of one whose sibling's reserved slots are all kept.
        if self.earliest_rival > t {
            return true;
        }
        let free = (self.width - s.used) as usize;
        let mut rivals = [0usize; MAX_THREADS];
        let mut n = 0;
        // Threads past `threads` were never said ready: no rivals.
        for (k, r) in self.ready_at[..self.threads].iter().enumerate() {
            let wants = k != me
                && r.is_some_and(|c| c <= t)
                && self.reserve_budget[k] > 0
                && (s.issuers | s.reserved) & (1 << k) == 0;
            if wants {
                rivals[n] = k;
                n += 1;
            }
        }
        if n < free {
            return true;
        }
        if n == 1 {
            // One rival for the one free slot (two threads on a core of
            // width 1): the sort below, without it.
            let k = rivals[0];
            if !self.before(k, me, t) {
                return true;
            }
            self.reserve(k, t);
            return false;
        }
        self.contest(me, t, &mut rivals[..n], free)
    }

    /// [`IssueCalendar::wins`] with several rivals for the cycle's free
    /// slots: out of line, so that the search calling it stays small.
    #[cold]
    #[inline(never)]
    fn contest(&mut self, me: usize, t: u64, rivals: &mut [usize], free: usize) -> bool {
        let ahead = rivals.iter().filter(|&&k| self.before(k, me, t)).count();
        if ahead < free {
            return true;
        }
        // `me` loses this cycle: its slots go to the first `free` rivals.
        // Sorted in place: a heap copy per lost cycle was a tenth of a
        // same-core run's host time.
        rivals.sort_by(|&a, &b| {
            if self.before(a, b, t) {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            }
        });
        for &k in &rivals[..free] {
            self.reserve(k, t);
        }
        false
    }

    /// Reserves a slot of cycle `t` for thread `k`, out of its budget.
    fn reserve(&mut self, k: usize, t: u64) {
        let slot = self.slot(t);
        slot.used += 1;
        slot.reserved |= 1 << k;
        self.last_issue[k] = t + 1;
        self.reserve_budget[k] -= 1;
        if self.reserve_budget[k] == 0 {
            self.update_earliest_rival();
        }
    }

    /// Takes the slot [`IssueCalendar::find`] gave thread `me`, and `unit`
    /// for `occupancy` cycles from it.
    pub fn commit(&mut self, me: usize, issue: &Issue, unit: Unit, occupancy: u64) {
        let (t, occ) = (issue.cycle, occupancy.max(1));
        if issue.reserved {
            self.reserved_used[me] += 1;
        }
        // Changed in a register and stored once: byte after byte in place,
        // each change waited for the store before it.
        let mut slot = self.peek(t);
        slot.cycle = t;
        if issue.reserved {
            slot.reserved &= !(1 << me);
        } else {
            slot.used += 1;
        }
        slot.issuers |= 1 << me;
        if unit == Unit::Memory {
            slot.memory += 1;
        }
        self.slots[t as usize % RING] = slot;
        self.last_issue[me] = t + 1;
        let k = match unit {
            Unit::MulDiv => 0,
            Unit::FpDiv => 1,
            _ => return,
        };
        // Replace the interval that ended first (never the latest end
        // alone: `busy_until` stays the latest end of those kept).
        if let Some(oldest) = self.busy[k].iter_mut().min_by_key(|(_, e)| *e) {
            *oldest = (t, t + occ);
        }
        self.busy_until[k] = self.busy_until[k].max(t + occ);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar(width: u32, policy: SmtPolicy) -> IssueCalendar {
        let shared = IssueCalendar::shared(width, policy);
        let mut lock = shared.lock().unwrap();
        *std::mem::take(&mut *lock)
    }

    #[test]
    fn a_lone_thread_issues_when_ready() {
        let mut c = calendar(1, SmtPolicy::RoundRobin);
        c.set_ready(0, Some(0));
        for t in [0, 1, 2, 10, 11] {
            assert_eq!(c.issue(0, t, Unit::None, 1).cycle, t);
        }
        // Its own divide does not hold it up: it waits for the result anyway.
        assert_eq!(c.issue(0, 20, Unit::MulDiv, 66).cycle, 20);
        assert_eq!(c.issue(0, 86, Unit::MulDiv, 66).cycle, 86);
    }

    #[test]
    fn round_robin_alternates_and_reserves_for_the_sibling() {
        let mut c = calendar(1, SmtPolicy::RoundRobin);
        c.set_ready(1, Some(0));
        // Thread 0 runs first: it gets every other cycle from 0.
        let got: Vec<u64> = (0..4)
            .scan(0, |ready, _| {
                let i = c.issue(0, *ready, Unit::None, 1);
                *ready = i.cycle + 1;
                Some(i.cycle)
            })
            .collect();
        // Thread 1 has no history yet: two slots are kept for it.
        assert_eq!(got, [0, 2, 4, 5]);
        // Thread 1, simulated next, finds the cycles kept for it, then
        // alternates with thread 0 (ready at 6) in turn.
        c.set_ready(1, None);
        c.set_ready(0, Some(6));
        let got: Vec<u64> = (0..4)
            .scan(0, |ready, _| {
                let i = c.issue(1, *ready, Unit::None, 1);
                *ready = i.cycle + 1;
                Some(i.cycle)
            })
            .collect();
        assert_eq!(got, [1, 3, 6, 8]);
        // Having used both, thread 1 gets more kept next time (2 + 1 + 2).
        c.set_ready(1, Some(20));
        let kept = (20..40)
            .filter(|&t| c.issue(0, t, Unit::None, 1).cycle != t)
            .count();
        assert!(kept >= 5, "{kept}");
    }

    /// Three threads on one slot: the two rivals of the thread simulated
    /// first win the cycles in the policy's order, then it issues.
    #[test]
    fn several_rivals_take_the_cycles_in_the_policys_order() {
        for policy in [SmtPolicy::RoundRobin, SmtPolicy::Icount] {
            let mut c = calendar(1, policy);
            c.set_ready(1, Some(0));
            c.set_ready(2, Some(0));
            let got: Vec<u64> = (0..6)
                .scan(0, |ready, _| {
                    let i = c.issue(0, *ready, Unit::None, 1);
                    *ready = i.cycle + 1;
                    Some(i.cycle)
                })
                .collect();
            // Each rival has two slots kept (no history yet): thread 0
            // gets one cycle in three until they are used up.
            assert_eq!(got, [0, 3, 6, 7, 8, 9], "{policy:?}");
            let mine: Vec<bool> = (0..6).map(|t| c.peek(t).reserved & 0b110 != 0).collect();
            assert_eq!(mine, [false, true, true, false, true, true], "{policy:?}");
        }
    }

    #[test]
    fn a_stalled_sibling_leaves_its_slots() {
        let mut c = calendar(1, SmtPolicy::RoundRobin);
        // Thread 1 waits on a miss until cycle 100: not ready before.
        c.set_ready(1, Some(100));
        for t in 0..50 {
            assert_eq!(c.issue(0, t, Unit::None, 1).cycle, t);
        }
    }

    #[test]
    fn units_and_the_memory_port_are_shared() {
        let mut c = calendar(2, SmtPolicy::RoundRobin);
        c.set_ready(1, Some(0));
        assert_eq!(c.issue(0, 0, Unit::MulDiv, 10).cycle, 0);
        let i = c.issue(1, 3, Unit::MulDiv, 10);
        assert_eq!((i.cycle, i.unit_wait), (10, 7));
        assert_eq!(c.issue(0, 20, Unit::Memory, 1).cycle, 20);
        let i = c.issue(1, 20, Unit::Memory, 1);
        assert_eq!((i.cycle, i.unit_wait), (21, 1));
        // Two slots: an ALU instruction shares the cycle.
        assert_eq!(c.issue(1, 30, Unit::None, 1).cycle, 30);
        assert_eq!(c.issue(0, 30, Unit::None, 1).cycle, 30);
    }

    #[test]
    fn icount_favours_the_thread_with_less_in_the_pipeline() {
        let mut c = calendar(1, SmtPolicy::Icount);
        // Thread 0 issued in cycles 0-3; thread 1, back from a stall, is
        // ready at 4 and has nothing in the pipeline: it wins cycles 4 and
        // 5 (its two kept slots, with no history yet).
        for t in 0..4 {
            assert_eq!(c.issue(0, t, Unit::None, 1).cycle, t);
        }
        c.set_ready(1, Some(4));
        assert_eq!(c.issue(0, 4, Unit::None, 1).cycle, 6);
        let mut rr = calendar(1, SmtPolicy::RoundRobin);
        for t in 0..4 {
            rr.issue(0, t, Unit::None, 1);
        }
        rr.set_ready(1, Some(4));
        assert_eq!(rr.issue(0, 4, Unit::None, 1).cycle, 5);
    }
}
