//! The ready hardware threads of one SMT core taking turns inside one call
//! ([`Hart::run_siblings`]), as the machine's scheduler would run them one
//! turn at a time.
//!
//! Siblings change turns every [`SMT_WINDOW`](crate::SMT_WINDOW) cycles or
//! so, a dozen instructions; going back to the scheduler for each turn (its
//! pick, the sync limit, the memory-time notes, the kernel's turn
//! preparation, the calendar's lock) cost about a fifth of a same-core
//! run's host time. While nothing outside the core can be chosen before the
//! sibling that is due, the scheduler's next choice is known: the ready
//! sibling with the smallest clock, with the turn end, sync limit and
//! calendar readiness it would set. Here those turns run back to back, the
//! calendar held throughout.

use crate::{Core, Env, Exit, Hart, TimingModel, SMT_WINDOW};

/// One ready hardware thread of the core, for [`Hart::run_siblings`].
pub struct Sibling<'a> {
    /// The architectural thread it runs.
    pub hart: &'a mut Hart,
    /// The hardware thread: its clock and its seat in the core's calendar
    /// (every sibling's seat is in the same calendar).
    pub core: &'a mut Core,
    /// A later turn of it starts only while its clock is below this (user
    /// mode: the end of its thread's time slice, where the kernel chooses
    /// its thread again).
    pub turns_before: u64,
    /// Instructions it retired during the call (set by the call).
    pub retired: u64,
}

/// What the machine's scheduler would decide between the siblings' turns,
/// as long as it holds (see [`Hart::run_siblings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SiblingPlan {
    /// The budget, in instructions, of every turn after the first.
    pub budget: u64,
    /// A later turn starts only at a clock below this: the earliest time
    /// anything outside the siblings could be chosen (another core ready,
    /// a wake-up due).
    pub pick_before: u64,
    /// The earliest time a core outside the siblings could reach the
    /// memory system: a turn's sync limit is the smaller of it and the
    /// other siblings' clocks, plus `tolerance`.
    pub others_reach: u64,
    /// The scheduler's sync tolerance.
    pub tolerance: u64,
    /// A later turn starts only while the instructions retired by the call
    /// so far plus its budget stay below this (an instruction-count point
    /// of the machine, its instruction limit, or how long it may go
    /// without looking at host signals).
    pub insn_room: u64,
}

impl Hart {
    /// Runs the ready hardware threads of one SMT core, `siblings` (in the
    /// scheduler's order, which breaks ties between equal clocks), starting
    /// with `siblings[first]` for `budget` instructions, prepared by the
    /// caller as for [`Hart::run`]. While the first turns end with
    /// [`Exit::Budget`], the sibling the scheduler would choose next (the
    /// smallest clock) runs on, with the turn end
    /// ([`Core::set_turn_end`]: `SMT_WINDOW` past the earliest other
    /// sibling), the sync limit and the calendar readiness
    /// ([`Core::set_sibling_ready`]) the machine would give it, as long as
    /// `plan` says nothing else could happen first. Returns which sibling
    /// ran last and how its turn ended; [`Sibling::retired`] says what each
    /// ran. The statistics are those of running the turns one at a time.
    pub fn run_siblings<T: TimingModel + ?Sized>(
        siblings: &mut [Sibling<'_>],
        first: usize,
        env: &mut Env<'_, T>,
        budget: u64,
        plan: &SiblingPlan,
    ) -> (usize, Exit) {
        for s in siblings.iter_mut() {
            s.retired = 0;
        }
        let Some(seat) = siblings[first].core.smt.clone() else {
            // Not an SMT core: one plain turn.
            let s = &mut siblings[first];
            let before = s.hart.instret;
            let exit = s.hart.run(s.core, env, budget);
            s.retired = s.hart.instret - before;
            return (first, exit);
        };
        let mut home = seat
            .calendar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (thread, ready) in siblings[first].core.sibling_ready.iter_mut().enumerate() {
            if let Some(clock) = ready.take() {
                home.set_ready(thread, clock);
            }
        }
        let placeholder = siblings[first]
            .hart
            .calendar_placeholder
            .take()
            .unwrap_or_default();
        let mut calendar = std::mem::replace(&mut *home, placeholder);
        let (mut at, mut budget, mut retired) = (first, budget, 0u64);
        let exit = loop {
            let s = &mut siblings[at];
            s.hart.core.clone_from(s.core);
            s.hart.calendar = Some(calendar);
            let before = s.hart.instret;
            let exit = s.hart.run_on_core(env, budget);
            s.core.cycles = s.hart.core.cycles;
            s.retired += s.hart.instret - before;
            retired += s.hart.instret - before;
            calendar = match s.hart.calendar.take() {
                Some(c) => c,
                None => unreachable!("a run gives back the calendar it holds"),
            };
            if exit != Exit::Budget {
                break exit;
            }
            // The scheduler's pick: the smallest clock, the first on a tie.
            let Some(next) = (0..siblings.len()).min_by_key(|&k| siblings[k].core.cycles) else {
                break exit;
            };
            let clock = siblings[next].core.cycles;
            if clock >= plan.pick_before
                || clock >= siblings[next].turns_before
                || retired.saturating_add(plan.budget) >= plan.insn_room
            {
                break exit;
            }
            // What the machine tells the chosen sibling's turn: every other
            // sibling ready at its clock, the turn ending a window past the
            // earliest of them, the sync limit.
            let mut earliest_other = u64::MAX;
            for (k, s) in siblings.iter().enumerate() {
                let Some(thread) = s.core.smt_thread() else {
                    continue;
                };
                if k == next {
                    calendar.set_ready(thread, None);
                } else {
                    calendar.set_ready(thread, Some(s.core.cycles));
                    earliest_other = earliest_other.min(s.core.cycles);
                }
            }
            let s = &mut siblings[next];
            s.core
                .set_turn_end(earliest_other.saturating_add(SMT_WINDOW));
            s.core.set_sync_limit(
                earliest_other
                    .min(plan.others_reach)
                    .saturating_add(plan.tolerance),
            );
            s.hart.exact_budget = false;
            (at, budget) = (next, plan.budget);
        };
        siblings[first].hart.calendar_placeholder = Some(std::mem::replace(&mut *home, calendar));
        (at, exit)
    }
}
