use super::*;

/// Fake cores: clocks, statuses, software wake-ups (at, core), and a log
/// of what the scheduler did to them.
#[derive(Clone, Default)]
struct Fake {
    clocks: Vec<u64>,
    status: Vec<Status>,
    wakeups: Vec<(u64, usize)>,
    notes: Option<Vec<(usize, u64)>>,
    /// Whether `status_untimed` leaves the timers out.
    untimed: bool,
    log: Vec<String>,
}

impl Fake {
    fn ready(clocks: &[u64]) -> Fake {
        Fake {
            clocks: clocks.to_vec(),
            status: vec![Status::Ready; clocks.len()],
            ..Fake::default()
        }
    }
}

impl Cores for Fake {
    fn cores(&self) -> usize {
        self.clocks.len()
    }
    fn clock(&self, core: usize) -> u64 {
        self.clocks[core]
    }
    fn status(&self, core: usize) -> Status {
        self.status[core]
    }
    fn status_untimed(&self, core: usize) -> Status {
        match self.status[core] {
            Status::Blocked { .. } if self.untimed => Status::Blocked { timer: None },
            Status::Asleep { .. } if self.untimed => Status::Asleep { timer: None },
            s => s,
        }
    }
    fn next_wakeup(&self) -> Option<u64> {
        self.wakeups.iter().map(|&(at, _)| at).min()
    }
    fn deliver_wakeup(&mut self) {
        let k = (0..self.wakeups.len())
            .min_by_key(|&k| self.wakeups[k])
            .expect("a wake-up is due");
        let (at, core) = self.wakeups.remove(k);
        self.clocks[core] = self.clocks[core].max(at);
        self.status[core] = Status::Ready;
        self.log.push(format!("wakeup {core} at {at}"));
    }
    fn wake(&mut self, core: usize, at: u64) {
        self.clocks[core] = at;
        self.status[core] = Status::Ready;
        self.log.push(format!("wake {core} at {at}"));
    }
    fn notes_time(&self) -> bool {
        self.notes.is_some()
    }
    fn note_time(&mut self, core: usize, cycles: u64) {
        self.notes.as_mut().unwrap().push((core, cycles));
    }
}

#[test]
fn the_ready_core_with_the_smallest_clock_runs_next_the_lower_index_on_a_tie() {
    let s = Scheduler::new(16);
    assert_eq!(s.pick(&mut Fake::ready(&[300, 100, 200])), Some(1));
    assert_eq!(s.pick(&mut Fake::ready(&[300, 100, 100])), Some(1));
    assert_eq!(s.pick(&mut Fake::ready(&[7])), Some(0));
}

#[test]
fn blocked_idle_and_untimed_asleep_cores_are_skipped() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[900, 10, 20, 30]);
    m.status[1] = Status::Blocked { timer: Some(15) };
    m.status[2] = Status::Idle;
    m.status[3] = Status::Asleep { timer: None };
    assert_eq!(s.pick(&mut m), Some(0));
    m.status[0] = Status::Idle;
    assert_eq!(s.pick(&mut m), None, "nothing can run");
    assert!(m.log.is_empty());
}

#[test]
fn an_asleep_core_runs_when_its_timer_comes_first_and_is_woken_at_that_time() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[500, 100]);
    m.status[1] = Status::Asleep { timer: Some(400) };
    assert_eq!(s.pick(&mut m), Some(1));
    assert_eq!(m.clocks[1], 400);
    assert_eq!(m.status[1], Status::Ready);
    assert_eq!(m.log, ["wake 1 at 400"]);

    // A timer already past counts from the core's clock; a ready core
    // with the same time and a lower index goes first.
    let mut m = Fake::ready(&[500, 600]);
    m.status[1] = Status::Asleep { timer: Some(100) };
    assert_eq!(s.pick(&mut m), Some(0));
    let mut m = Fake::ready(&[600, 500]);
    m.status[0] = Status::Asleep { timer: Some(100) };
    assert_eq!(s.pick(&mut m), Some(1));
    m.clocks[1] = 600;
    assert_eq!(s.pick(&mut m), Some(0), "tie: the lower index");
    assert_eq!(m.clocks[0], 600);
}

#[test]
fn a_wakeup_due_by_the_earliest_ready_core_is_delivered_first() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[500, 1000]);
    m.status[1] = Status::Blocked { timer: Some(300) };
    m.wakeups = vec![(300, 1), (800, 0)];
    // 300 <= 500: the blocked core's thread wakes (its clock stays 1000),
    // then core 0 runs; the wake-up at 800 is not due yet.
    assert_eq!(s.pick(&mut m), Some(0));
    assert_eq!(m.log, ["wakeup 1 at 300"]);
    assert_eq!(m.wakeups, [(800, 0)]);
    // Due exactly at the earliest clock: delivered first.
    let mut m = Fake::ready(&[800, 900]);
    m.wakeups = vec![(800, 1)];
    assert_eq!(s.pick(&mut m), Some(0));
    assert_eq!(m.log, ["wakeup 1 at 800"]);
    // With nothing ready, a wake-up is what makes a core ready.
    let mut m = Fake::ready(&[50]);
    m.status[0] = Status::Blocked { timer: Some(70) };
    m.wakeups = vec![(70, 0)];
    assert_eq!(s.pick(&mut m), Some(0));
    assert_eq!(m.clocks[0], 70);
}

#[test]
fn the_sync_limit_is_the_earliest_other_core_plus_the_tolerance() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[100, 300, 200, 50, 10]);
    m.status[3] = Status::Idle;
    m.status[4] = Status::Asleep { timer: None };
    // Its own clock does not count; idle and untimed sleepers do not.
    assert_eq!(s.sync_limit(&m, 0), 216);
    assert_eq!(s.sync_limit(&m, 2), 116);
    // A timed wait counts at its timer, or the clock if later; an
    // untimed blocked core does not count.
    m.status[2] = Status::Blocked { timer: None };
    assert_eq!(s.sync_limit(&m, 0), 316);
    m.status[2] = Status::Blocked { timer: Some(250) };
    assert_eq!(s.sync_limit(&m, 0), 266);
    m.status[2] = Status::Asleep { timer: Some(120) };
    assert_eq!(s.sync_limit(&m, 0), 216, "clock 200 is later than 120");
    m.clocks[2] = 100;
    assert_eq!(s.sync_limit(&m, 0), 136);
    // No other core can run: no limit; no overflow near the end of time.
    assert_eq!(s.sync_limit(&Fake::ready(&[5]), 0), u64::MAX);
    assert_eq!(s.sync_limit(&Fake::ready(&[5, u64::MAX - 3]), 0), u64::MAX);
}

#[test]
fn the_limit_with_the_choice_is_the_sync_limit_after_it() {
    let s = Scheduler::new(16);
    let statuses = [
        Status::Ready,
        Status::Idle,
        Status::Blocked { timer: None },
        Status::Blocked { timer: Some(150) },
        Status::Asleep { timer: None },
        Status::Asleep { timer: Some(120) },
        Status::Asleep { timer: Some(400) },
        Status::Asleep {
            timer: Some(u64::MAX),
        },
    ];
    let clocks = [300, 100, 100, 250];
    let n = statuses.len();
    // Every combination of statuses on cores with tied and distinct
    // clocks, with and without a software wake-up due in between.
    for combo in 0..n.pow(clocks.len() as u32) {
        for wakeups in [vec![], vec![(200, 1)]] {
            let mut m = Fake::ready(&clocks);
            for (c, status) in m.status.iter_mut().enumerate() {
                *status = statuses[combo / n.pow(c as u32) % n];
            }
            m.wakeups = wakeups;
            let mut full = m.clone();
            let picked = s.pick_with_limit(&mut m);
            let expected = s.pick(&mut full).map(|c| (c, s.sync_limit(&full, c)));
            assert_eq!(picked, expected, "{:?} {:?}", full.status, full.wakeups);
            assert_eq!(m.clocks, full.clocks);
            assert_eq!(m.log, full.log);
        }
    }
}

#[test]
fn memory_times_follow_each_status() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[400, 300, 100, 900, 50]);
    m.status[1] = Status::Blocked { timer: None };
    m.status[2] = Status::Asleep { timer: Some(1000) };
    m.status[3] = Status::Asleep { timer: None };
    m.status[4] = Status::Idle;
    m.notes = Some(Vec::new());
    s.note_times(&mut m, 0);
    // Floor: the smallest clock of ready and blocked cores (300).
    assert_eq!(
        m.notes.as_deref().unwrap(),
        [(0, 400), (1, 300), (2, 300), (3, 900), (4, 300)]
    );
    // With no ready or blocked core the floor is the clock of the core
    // that ran.
    let mut m = Fake::ready(&[700, 20]);
    m.status = vec![Status::Asleep { timer: None }, Status::Idle];
    m.notes = Some(Vec::new());
    s.note_times(&mut m, 0);
    assert_eq!(m.notes.as_deref().unwrap(), [(0, 700), (1, 700)]);
    // Without a memory system nothing is noted.
    let mut m = Fake::ready(&[1, 2]);
    s.note_times(&mut m, 0);
    assert!(m.notes.is_none());
}

#[test]
fn memory_times_are_the_same_without_the_timers() {
    let s = Scheduler::new(16);
    // Timers before, between and after the clocks and the floor.
    let timers = [None, Some(10), Some(250), Some(350), Some(5000)];
    for (k, &t1) in timers.iter().enumerate() {
        let t2 = timers[(k + 2) % timers.len()];
        let notes = |untimed: bool, first: Status| {
            let mut m = Fake::ready(&[400, 300, 100, 900, 50]);
            m.status[0] = first;
            m.status[1] = Status::Blocked { timer: t1 };
            m.status[2] = Status::Asleep { timer: t2 };
            m.status[3] = Status::Asleep { timer: t1 };
            m.status[4] = Status::Idle;
            m.untimed = untimed;
            m.notes = Some(Vec::new());
            s.note_times(&mut m, 0);
            m.notes.unwrap()
        };
        for first in [Status::Ready, Status::Asleep { timer: t2 }] {
            assert_eq!(
                notes(true, first),
                notes(false, first),
                "timers {t1:?} {t2:?}"
            );
        }
    }
}

#[test]
fn budgets_stop_at_the_instruction_limit() {
    assert_eq!(clamp_budget(10_000, 5, None), Some(10_000));
    assert_eq!(clamp_budget(10_000, 95_000, Some(100_000)), Some(5_000));
    assert_eq!(clamp_budget(10_000, 0, Some(100_000)), Some(10_000));
    assert_eq!(clamp_budget(10_000, 100_000, Some(100_000)), None);
    assert_eq!(clamp_budget(10_000, 100_001, Some(100_000)), None);
}

/// A machine of cores that each run `work` turns costing `cost[c]` cycles,
/// the cores in `sleepy` going to sleep (no timer) after every turn until
/// the idle hook wakes them all.
struct Toy {
    cores: Fake,
    cost: Vec<u64>,
    work: Vec<u32>,
    sleepy: Vec<usize>,
    turns: Vec<(usize, u64, u64)>,
    idles: u32,
}

impl Toy {
    fn new(cost: &[u64], work: u32) -> Toy {
        Toy {
            cores: Fake::ready(&vec![0; cost.len()]),
            cost: cost.to_vec(),
            work: vec![work; cost.len()],
            sleepy: Vec::new(),
            turns: Vec::new(),
            idles: 0,
        }
    }
}

impl Cores for Toy {
    fn cores(&self) -> usize {
        self.cores.cores()
    }
    fn clock(&self, core: usize) -> u64 {
        self.cores.clock(core)
    }
    fn status(&self, core: usize) -> Status {
        self.cores.status(core)
    }
    fn wake(&mut self, core: usize, at: u64) {
        self.cores.wake(core, at)
    }
}

impl Scheduled for Toy {
    type Stop = &'static str;
    type Turn = ();
    // The runs below check each turn's limit against the clocks: they
    // test the limit `pick_with_limit` gives with the choice.
    const BEGIN_TURN_KEEPS_OTHERS: bool = true;
    fn idle(&mut self) -> ControlFlow<&'static str> {
        self.idles += 1;
        if self.work.iter().all(|&w| w == 0) {
            return ControlFlow::Break("done");
        }
        let latest = self.cores.clocks.iter().copied().max().unwrap_or(0);
        for &c in &self.sleepy {
            if self.work[c] > 0 {
                self.cores.clocks[c] = latest;
                self.cores.status[c] = Status::Ready;
            }
        }
        ControlFlow::Continue(())
    }
    fn begin_turn(&mut self, _core: usize) -> ControlFlow<&'static str, u64> {
        ControlFlow::Continue(1)
    }
    fn run_turn(&mut self, core: usize, budget: u64, limit: u64) -> ControlFlow<&'static str> {
        assert_eq!(budget, 1);
        self.turns.push((core, self.cores.clocks[core], limit));
        self.cores.clocks[core] += self.cost[core];
        self.work[core] -= 1;
        if self.work[core] == 0 {
            self.cores.status[core] = Status::Idle;
        } else if self.sleepy.contains(&core) {
            self.cores.status[core] = Status::Asleep { timer: None };
        }
        ControlFlow::Continue(())
    }
    fn end_turn(&mut self, _core: usize, _turn: ()) -> ControlFlow<&'static str> {
        ControlFlow::Continue(())
    }
}

#[test]
fn a_run_keeps_the_clocks_together_and_is_deterministic() {
    let s = Scheduler::new(16);
    let run = || {
        let mut m = Toy::new(&[30, 70, 50], 40);
        assert_eq!(s.run(&mut m), "done");
        m
    };
    let m = run();
    assert_eq!(m.turns.len(), 120);
    assert_eq!(m.idles, 1, "idle only once everything is done");
    // Every turn went to a core no later than any other with work left,
    // under the limit of the earliest other core.
    let mut clocks = [0u64; 3];
    let mut left = [40u32; 3];
    for &(core, at, limit) in &m.turns {
        assert_eq!(at, clocks[core]);
        let others = (0..3).filter(|&o| o != core && left[o] > 0);
        assert!(others.clone().all(|o| clocks[o] >= at), "{:?}", m.turns);
        assert_eq!(
            limit,
            others.map(|o| clocks[o]).min().map_or(u64::MAX, |c| c + 16)
        );
        clocks[core] += [30, 70, 50][core];
        left[core] -= 1;
    }
    assert_eq!(m.cores.clocks, [1200, 2800, 2000]);
    assert_eq!(run().turns, m.turns, "same inputs, same schedule");
}

#[test]
fn sleeping_cores_are_skipped_until_the_idle_hook_wakes_them() {
    let s = Scheduler::new(16);
    let mut m = Toy::new(&[10, 10], 3);
    m.sleepy = vec![0, 1];
    assert_eq!(s.run(&mut m), "done");
    let order: Vec<usize> = m.turns.iter().map(|t| t.0).collect();
    // Both run, both sleep, idle wakes both at the latest clock.
    assert_eq!(order, [0, 1, 0, 1, 0, 1]);
    assert_eq!(m.idles, 3);
    // An asleep core without a timer imposes no limit.
    assert_eq!(m.turns[1], (1, 0, u64::MAX));
}

/// A group's choices made from `Scheduler::outside` are the scheduler's:
/// the group's smallest clock is picked while it is below `pick_before`,
/// and each group core's sync limit is the smaller of `reach` and the
/// other group cores' clocks, plus the tolerance.
#[test]
fn choices_within_a_group_follow_from_what_is_outside_it() {
    let s = Scheduler::new(16);
    let mut m = Fake::ready(&[100, 90, 500, 0, 700]);
    m.status[2] = Status::Blocked { timer: Some(300) };
    m.status[3] = Status::Idle;
    m.status[4] = Status::Asleep { timer: Some(650) };
    m.wakeups.push((600, 3));
    let group = |c: usize| c < 2;
    let outside = Scheduler::outside(&m, group);
    // The asleep core competes at its clock (later than its timer); the
    // wake-up at 600 comes first. The blocked core reaches memory at its
    // clock (later than its timer).
    assert_eq!(
        outside,
        Outside {
            pick_before: 600,
            reach: 500
        }
    );
    for clocks in [[100, 90], [40, 40], [599, 650], [700, 650], [10, 5000]] {
        m.clocks[..2].copy_from_slice(&clocks);
        let first = if clocks[0] <= clocks[1] { 0 } else { 1 };
        let mut probe = Fake::ready(&m.clocks);
        probe.status = m.status.clone();
        probe.wakeups = m.wakeups.clone();
        let picked = s.pick(&mut probe);
        if clocks[first] < outside.pick_before {
            assert_eq!(picked, Some(first), "{clocks:?}");
        } else {
            assert_ne!(picked, Some(first), "{clocks:?}");
        }
        for c in 0..2 {
            let other = clocks[1 - c];
            assert_eq!(
                s.sync_limit(&m, c),
                other.min(outside.reach) + 16,
                "{clocks:?} {c}"
            );
        }
    }
    // Nothing outside: nothing bounds the group.
    let alone = Fake::ready(&[3, 4]);
    let outside = Scheduler::outside(&alone, |c| c < 2);
    assert_eq!((outside.pick_before, outside.reach), (u64::MAX, u64::MAX));
}
