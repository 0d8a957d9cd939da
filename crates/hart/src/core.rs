//! A processor core: what a hart runs on.

use crate::smt::{IssueCalendar, SharedCalendar, MAX_THREADS};
use crate::{CoreId, CoreMap, HartConfig};
use rvnvmm_config::CoreCosts;

/// A processor core: the clock, the in-order cost model and the port to
/// the timing model's private caches (its [`CoreId`], the L1 slot). A
/// [`Hart`](crate::Hart), an architectural thread (registers, CSRs,
/// privilege, reservation, TLB), runs on a core:
/// [`Hart::run`](crate::Hart::run) takes both. The scheduler owns the
/// cores; a thread moved to another core takes that core's clock and L1s.
///
/// A core of several hardware threads is one `Core` per thread (its own
/// clock and `mhartid`, the same `id`) sharing an issue calendar
/// ([`Core::with_smt`]); `hart_id` is the thread's `mhartid`.
#[derive(Debug, PartialEq, Eq)]
pub struct Core {
    /// The core's number: its slot among the timing model's L1s.
    pub id: CoreId,
    /// `mhartid` of the hardware thread the core runs.
    pub hart_id: u64,
    /// Simulated cycles elapsed on this core, including stalls.
    pub cycles: u64,
    /// Core clock in Hz: one cycle is `1e9 / clock_hz` ns of simulated time.
    pub clock_hz: u64,
    /// Frequency of the `time` CSR in Hz.
    pub timebase_hz: u64,
    /// The in-order core's cycle costs.
    pub costs: CoreCosts,
    /// The latest local time (cycles) at which this core may take an access
    /// past its private caches to the shared memory system; a later one
    /// ends [`Hart::run`](crate::Hart::run) before the instruction (see
    /// [`Core::set_sync_limit`]).
    pub(crate) sync_limit: u64,
    /// The run ends at the first block boundary at or after this cycle
    /// (see [`Core::set_turn_end`]).
    pub(crate) turn_end: u64,
    /// The issue calendar of the core and this thread's number in it, if
    /// the core has several threads.
    pub(crate) smt: Option<SmtSeat>,
    /// What [`Core::set_sibling_ready`] said of each thread of the core
    /// since the last run (`None`: nothing).
    pub(crate) sibling_ready: [Option<Option<u64>>; MAX_THREADS],
}

/// A hardware thread's seat in its core's issue calendar (see
/// [`Core::take_smt`]).
#[derive(Clone, Debug)]
pub struct SmtSeat {
    pub(crate) calendar: SharedCalendar,
    pub(crate) thread: usize,
}

impl PartialEq for SmtSeat {
    fn eq(&self, other: &SmtSeat) -> bool {
        std::sync::Arc::ptr_eq(&self.calendar, &other.calendar) && self.thread == other.thread
    }
}

impl Eq for SmtSeat {}

impl Clone for Core {
    fn clone(&self) -> Core {
        Core {
            id: self.id,
            hart_id: self.hart_id,
            cycles: self.cycles,
            clock_hz: self.clock_hz,
            timebase_hz: self.timebase_hz,
            costs: self.costs.clone(),
            sync_limit: self.sync_limit,
            turn_end: self.turn_end,
            smt: self.smt.clone(),
            sibling_ready: self.sibling_ready,
        }
    }

    /// Copies `source` field by field, leaving the seat alone when it is
    /// already the same one (the same calendar and thread: a hart that
    /// stays on its hardware thread, as it does every turn but a
    /// migration), which spares the shared calendar's reference count two
    /// atomic operations per turn.
    fn clone_from(&mut self, source: &Core) {
        let Core {
            id,
            hart_id,
            cycles,
            clock_hz,
            timebase_hz,
            ref costs,
            sync_limit,
            turn_end,
            ref smt,
            sibling_ready,
        } = *source;
        self.id = id;
        self.hart_id = hart_id;
        self.cycles = cycles;
        self.clock_hz = clock_hz;
        self.timebase_hz = timebase_hz;
        self.costs.clone_from(costs);
        self.sync_limit = sync_limit;
        self.turn_end = turn_end;
        self.sibling_ready = sibling_ready;
        if self.smt != *smt {
            self.smt.clone_from(smt);
        }
    }
}

impl Core {
    /// Core `id` at cycle 0, running hardware thread `hart_id`, with the
    /// clock and costs of `config`.
    pub fn new(id: CoreId, hart_id: u64, config: &HartConfig) -> Core {
        Core {
            id,
            hart_id,
            cycles: 0,
            clock_hz: config.clock_hz,
            timebase_hz: config.timebase_hz,
            costs: config.costs.clone(),
            sync_limit: u64::MAX,
            turn_end: u64::MAX,
            smt: None,
            sibling_ready: [None; MAX_THREADS],
        }
    }

    /// One `Core` per hart of `map`, at cycle 0: hart `h` runs on core
    /// `map.core_of(h)` as its `mhartid` `h`. When a core has several
    /// threads, every core gets an issue calendar its threads share (each
    /// thread numbered by its place among its core's harts); one thread
    /// per core builds plain cores, which time as they always did. User
    /// mode and the full-system board build their cores so.
    pub fn for_harts(map: &CoreMap, config: &HartConfig) -> Vec<Core> {
        let smt = map.harts() > map.cores();
        let calendars: Vec<Option<SharedCalendar>> = (0..map.cores())
            .map(|_| {
                smt.then(|| {
                    IssueCalendar::shared(config.costs.issue_width, config.costs.smt_policy)
                })
            })
            .collect();
        let mut seats = vec![0usize; map.cores()];
        (0..map.harts())
            .map(|h| {
                let id = map.core_of(h);
                let core = Core::new(id, h as u64, config);
                let thread = seats[id];
                seats[id] += 1;
                match &calendars[id] {
                    Some(calendar) => core.with_smt(calendar, thread),
                    None => core,
                }
            })
            .collect()
    }

    /// Takes this core out of its issue calendar: it runs as a core of
    /// its own (one cycle an instruction in the functional model) until
    /// [`Core::put_smt`] gives the seat back. The full-system board does so
    /// while it runs the functional model, which has no pipeline to share.
    pub fn take_smt(&mut self) -> Option<SmtSeat> {
        self.smt.take()
    }

    /// Puts back a seat [`Core::take_smt`] took.
    pub fn put_smt(&mut self, seat: Option<SmtSeat>) {
        self.smt = seat;
    }

    /// This hardware thread's number in its core's issue calendar; `None`
    /// on a core of one thread.
    pub fn smt_thread(&self) -> Option<usize> {
        self.smt.as_ref().map(|s| s.thread)
    }

    /// This core as hardware thread `thread` of an SMT core whose issue
    /// slots and shared units `calendar` keeps (one calendar per core,
    /// shared by its threads' `Core`s).
    pub fn with_smt(mut self, calendar: &SharedCalendar, thread: usize) -> Core {
        self.smt = Some(SmtSeat {
            calendar: calendar.clone(),
            thread,
        });
        self
    }

    /// The issue calendar this core shares with its sibling threads.
    pub fn calendar(&self) -> Option<&SharedCalendar> {
        self.smt.as_ref().map(|s| &s.calendar)
    }

    /// Says that hardware thread `thread` of this SMT core is ready from
    /// `clock` on, or has nothing to run (`None`):
    /// [`IssueCalendar::set_ready`](crate::smt::IssueCalendar::set_ready),
    /// applied when the next run takes the calendar. Said so, not through
    /// the calendar's lock, the calendar is locked once per turn. Nothing
    /// for a core of one thread.
    pub fn set_sibling_ready(&mut self, thread: usize, clock: Option<u64>) {
        if self.smt.is_some() && thread < MAX_THREADS {
            self.sibling_ready[thread] = Some(clock);
        }
    }

    /// Ends the next run at the first block boundary at or after `cycle`
    /// (`u64::MAX`: no end). The user-mode kernel ends a thread's time
    /// slice so; the scheduler keeps the threads of an SMT core within a
    /// few dozen cycles of each other so, as their slot contention needs.
    pub fn set_turn_end(&mut self, cycle: u64) {
        self.turn_end = cycle;
    }

    /// Bounds how far ahead of the other cores this one may reach the
    /// shared memory system (bus, L2, controllers) in simulated time.
    ///
    /// Cores are simulated one after another, so without a bound a core
    /// that ran ahead books the controllers far into the future and a core
    /// that lags behind queues behind requests that, in simulated time,
    /// have not happened yet. With a limit, an access that misses the
    /// private L1 at a local time after `limit` cycles ends
    /// [`Hart::run`](crate::Hart::run) with [`Exit::Budget`](crate::Exit)
    /// before that instruction executes (nothing of it is done; it
    /// re-executes when the hart runs again), so the scheduler can first
    /// run the cores that lag behind. L1 hits never stop, so a core whose
    /// working set fits its caches runs on. The scheduler sets the limit to
    /// the earliest time another core could reach the memory system (plus a
    /// tolerance) before each run; `u64::MAX` (the default) means no limit.
    pub fn set_sync_limit(&mut self, limit: u64) {
        self.sync_limit = limit;
    }

    /// Simulated time of this core in nanoseconds.
    pub fn time_ns(&self) -> u64 {
        mul_div(self.cycles, 1_000_000_000, self.clock_hz.max(1))
    }

    /// The first cycle at which [`time_ns`](Self::time_ns) reaches `ns`.
    pub fn ns_to_cycles(&self, ns: u64) -> u64 {
        mul_div_ceil(ns, self.clock_hz, 1_000_000_000)
    }

    /// The `time` CSR value.
    pub fn time_csr(&self) -> u64 {
        self.time_at(self.cycles)
    }

    /// The `time` CSR value after `cycles` cycles.
    pub(crate) fn time_at(&self, cycles: u64) -> u64 {
        mul_div(cycles, self.timebase_hz, self.clock_hz.max(1))
    }
}

/// `a * b / c` (`c > 0`) truncated to 64 bits, exactly as in 128-bit
/// arithmetic, but with 64-bit divisions where they give the same: a
/// 128-bit one is a library call, and the scheduler converts clocks several
/// times per hart turn (a clock in cycles times 10^9 leaves 64 bits after
/// 18 simulated seconds at 1 GHz, so a long run would pay it on every turn).
#[inline]
pub(crate) fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    if let Some(p) = a.checked_mul(b) {
        return p / c;
    }
    if c.checked_mul(b).is_some() {
        // a = q c + r with r < c: a b / c = q b + r b / c, and r b < c b
        // fits; the sum is the exact quotient, kept to its low 64 bits.
        let (q, r) = (a / c, a % c);
        return q.wrapping_mul(b).wrapping_add(r * b / c);
    }
    (u128::from(a) * u128::from(b) / u128::from(c)) as u64
}

/// `ceil(a * b / c)` (`c > 0`), saturating at `u64::MAX`, with 64-bit
/// divisions where they give the same (see [`mul_div`]).
#[inline]
pub(crate) fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    if let Some(p) = a.checked_mul(b) {
        return p.div_ceil(c);
    }
    if c.checked_mul(b).is_some() {
        // As in `mul_div`: q b + ceil(r b / c), saturating.
        let (q, r) = (a / c, a % c);
        return q
            .checked_mul(b)
            .and_then(|qb| qb.checked_add((r * b).div_ceil(c)))
            .unwrap_or(u64::MAX);
    }
    u64::try_from((u128::from(a) * u128::from(b)).div_ceil(u128::from(c))).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::{mul_div, mul_div_ceil, Core};
    use crate::{CoreMap, HartConfig};

    /// Threads of a core share one calendar, each in its own seat; one
    /// thread per core builds plain cores.
    #[test]
    fn cores_for_harts_share_a_calendar_per_core() {
        let config = HartConfig::default();
        let map = CoreMap::with_threads_per_core(4, 2).unwrap();
        let mut cores = Core::for_harts(&map, &config);
        let ids: Vec<_> = cores
            .iter()
            .map(|c| (c.id, c.hart_id, c.smt_thread()))
            .collect();
        assert_eq!(
            ids,
            [
                (0, 0, Some(0)),
                (0, 1, Some(1)),
                (1, 2, Some(0)),
                (1, 3, Some(1))
            ]
        );
        let same = |a: &Core, b: &Core| {
            std::sync::Arc::ptr_eq(a.calendar().unwrap(), b.calendar().unwrap())
        };
        assert!(same(&cores[0], &cores[1]) && same(&cores[2], &cores[3]));
        assert!(!same(&cores[0], &cores[2]));
        // A seat taken out and given back is the same seat.
        let before = cores[1].clone();
        let seat = cores[1].take_smt();
        assert_eq!(cores[1].smt_thread(), None);
        cores[1].put_smt(seat);
        assert_eq!(cores[1], before);
        let plain = Core::for_harts(&CoreMap::one_thread_per_core(3), &config);
        assert!(plain.iter().all(|c| c.calendar().is_none()));
        assert_eq!(plain[2], Core::new(2, 2, &config));
    }

    /// The 64-bit fast path and the 128-bit one agree with 128-bit
    /// arithmetic, on both sides of the product's overflow.
    #[test]
    fn mul_div_is_128_bit_arithmetic() {
        let cases = [
            (0, 1_000_000_000, 50_000_000),
            (3_250_000_001, 1_000_000_000, 50_000_000),
            (u64::MAX / 1_000_000_000, 1_000_000_000, 7),
            (u64::MAX / 1_000_000_000 + 1, 1_000_000_000, 7),
            (u64::MAX, u64::MAX, u64::MAX),
            (u64::MAX, 10_000_000, 1),
            (123_456_789_123, 10_000_000, 1_000_000_000),
        ];
        let check = |a: u64, b: u64, c: u64| {
            let p = u128::from(a) * u128::from(b);
            assert_eq!(mul_div(a, b, c), (p / u128::from(c)) as u64, "{a} {b} {c}");
            let up = u64::try_from(p.div_ceil(u128::from(c))).unwrap_or(u64::MAX);
            assert_eq!(mul_div_ceil(a, b, c), up, "{a} {b} {c}");
        };
        for (a, b, c) in cases {
            check(a, b, c);
        }
        // The split path (a b overflows, c b does not): clocks and rates of
        // every size, around multiples of c, up to quotients past 64 bits.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let b = next() >> (next() % 64);
            let c = (next() >> (next() % 64)).max(1);
            let a = match next() % 3 {
                0 => next(),
                1 => (next() >> (next() % 64)) / c * c,
                _ => ((next() >> (next() % 64)) / c * c).wrapping_sub(1),
            };
            check(a, b, c);
        }
        for (b, c) in [
            (1_000_000_000, 1_000_000_000),
            (1_000_000_000, 1_500_000_000),
        ] {
            for a in [
                u64::MAX,
                u64::MAX - 1,
                1 << 63,
                18_446_744_074,
                69_371_457_960,
            ] {
                check(a, b, c);
            }
        }
    }
}
