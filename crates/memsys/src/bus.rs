//! Shared resources in simulated time: the bus and the MSHRs.
//!
//! Harts are simulated one after another, so requests do not reach a shared
//! resource in global time order: a hart that ran ahead has already booked
//! the bus at later times when a hart that lags behind asks for it. Both
//! resources therefore keep *reservations in time* rather than a single
//! "free at" time: a request at `t` gets the earliest gap at or after `t` that
//! fits it, so a lagging hart uses the idle time between the reservations
//! of a leading one instead of queueing behind its future. When requests do
//! arrive in time order (the scheduler of DESIGN §5), this is exactly a
//! first-come first-served bus.

use std::collections::VecDeque;

use crate::time::Ps;

/// How many reservations a timeline keeps before it forgets the oldest (a
/// request older than the forgotten ones sees the bus idle there).
const TIMELINE_CAP: usize = 4096;

/// Busy intervals of a resource that serves one transfer at a time.
///
/// A ring buffer of `(start, end)` sorted by start: the common case (one
/// hart, or the hart furthest ahead) appends at the back and forgets at the
/// front, both O(1) without allocation; an out-of-order reservation is a
/// binary search and an insertion.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    /// `(start, end)`, sorted, disjoint, non-adjacent (adjacent ones are
    /// merged).
    busy: VecDeque<(Ps, Ps)>,
}

impl Timeline {
    /// The earliest `s >= t` such that `[s, s + len)` overlaps no
    /// reservation.
    #[inline]
    pub(crate) fn earliest_fit(&self, t: Ps, len: Ps) -> Ps {
        // Fast path: at or after the last reservation (one hart, or the
        // hart that is furthest ahead) nothing can be in the way.
        match self.busy.back() {
            None => return t,
            Some(&(_, end)) if t >= end => return t,
            _ => {}
        }
        self.earliest_fit_slow(t, len)
    }

    /// How many reservations start at or before `s` (`inclusive`) or before
    /// it: `partition_point` searched from the back. Requests come at most a
    /// little behind the newest reservations (the harts are kept close in
    /// time), so galloping back from the end finds the place in a few
    /// probes, where a bisection of the whole ring would walk thousands of
    /// entries' worth of host cache.
    fn starting_before(&self, s: Ps, inclusive: bool) -> usize {
        let before = |st: Ps| if inclusive { st <= s } else { st < s };
        // Invariant: every entry at `hi..` starts after (or at) `s`.
        let mut hi = self.busy.len();
        let mut step = 1;
        let lo = loop {
            if hi == 0 {
                return 0;
            }
            let probe = hi.saturating_sub(step);
            if before(self.busy[probe].0) {
                break probe + 1;
            }
            hi = probe;
            step *= 2;
        };
        // The answer is in `lo..=hi`: entry `lo - 1` is before `s`.
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(self.busy[mid].0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn earliest_fit_slow(&self, t: Ps, len: Ps) -> Ps {
        let mut s = t;
        // The last reservation starting at or before `s`.
        let i = self.starting_before(s, true);
        if i > 0 {
            s = s.max(self.busy[i - 1].1);
        }
        if len == 0 {
            return s;
        }
        // Reservations starting at or after `s`, in order: from `i` on
        // (they are disjoint and not empty, so the one before `i`, if any,
        // starts before `s`, and the one at `i` starts after `t` and after
        // the end of the one before it).
        debug_assert_eq!(i, self.busy.partition_point(|&(st, _)| st < s));
        for &(start, end) in self.busy.range(i..) {
            if start >= s + len {
                break;
            }
            s = end;
        }
        s
    }

    /// Books `[s, s + len)`, which must be free.
    #[inline]
    pub(crate) fn reserve(&mut self, s: Ps, len: Ps) {
        if len == 0 {
            return;
        }
        // Fast path: extending or following the last reservation.
        if let Some(last) = self.busy.back_mut() {
            if last.1 == s {
                last.1 = s + len;
                return;
            }
            if last.1 < s {
                self.busy.push_back((s, s + len));
                while self.busy.len() > TIMELINE_CAP {
                    self.busy.pop_front();
                }
                return;
            }
        }
        self.reserve_slow(s, len);
    }

    fn reserve_slow(&mut self, s: Ps, len: Ps) {
        let mut start = s;
        let mut end = s + len;
        // Merge with the reservation starting at or before `s` if it reaches `s`.
        let i = self.starting_before(s, true);
        let mut at = i;
        if i > 0 {
            let (ps, pe) = self.busy[i - 1];
            if pe >= s {
                start = ps;
                end = end.max(pe);
                self.busy.remove(i - 1);
                at = i - 1;
            }
        }
        // Merge with the reservation starting exactly at `end`.
        let k = self.starting_before(end, false);
        if k < self.busy.len() && self.busy[k].0 == end {
            end = self.busy[k].1;
            self.busy.remove(k);
        }
        // Nothing starts inside [s, s + len) (it was free), so `start` goes
        // where the merged-away neighbour was, or where `s` would go.
        debug_assert_eq!(at, self.busy.partition_point(|&(st, _)| st < start));
        self.busy.insert(at, (start, end));
        while self.busy.len() > TIMELINE_CAP {
            self.busy.pop_front();
        }
    }

    /// Number of reservations kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.busy.len()
    }
}

/// Bus counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Transfers (request, write-back and response phases).
    pub transfers: u64,
    /// Time the bus carried a transfer, in ps.
    pub busy_ps: Ps,
    /// Time requesters waited for a grant, in ps.
    pub wait_ps: Ps,
    /// Grants per hart (hart-side phases only).
    pub grants: Vec<u64>,
    /// Wait per hart, in ps.
    pub hart_wait_ps: Vec<Ps>,
}

/// The shared bus between the caches and the memory controllers: one
/// transfer at a time, round-robin among the harts.
///
/// Requests are granted in the order they are presented (earliest fitting
/// gap, see the module docs). The round-robin pointer decides between
/// requests presented for the *same* instant: [`Bus::rank`] tells the
/// scheduler which of several harts with equal local time to run first, so
/// the hart after the last one granted wins, as in seed 003's arbiter.
#[derive(Clone, Debug)]
pub struct Bus {
    timeline: Timeline,
    harts: usize,
    rr_next: usize,
    pub(crate) stats: BusStats,
}

impl Bus {
    /// A bus shared by `harts` harts.
    pub(crate) fn new(harts: usize) -> Bus {
        Bus {
            timeline: Timeline::default(),
            harts: harts.max(1),
            rr_next: 0,
            stats: BusStats {
                grants: vec![0; harts.max(1)],
                hart_wait_ps: vec![0; harts.max(1)],
                ..BusStats::default()
            },
        }
    }

    /// Books the bus for `len` ps from the earliest free time at or after
    /// `t`; returns the grant time. `hart` is the requester for the
    /// round-robin pointer and the wait statistics (`None` for a
    /// controller's response).
    #[inline(always)]
    pub(crate) fn acquire(&mut self, hart: Option<usize>, t: Ps, len: Ps) -> Ps {
        let g = self.timeline.earliest_fit(t, len);
        self.timeline.reserve(g, len);
        self.stats.transfers += 1;
        self.stats.busy_ps += len;
        self.stats.wait_ps += g - t;
        if let Some(h) = hart {
            // `h < harts`: the next one round, without a division.
            self.rr_next = if h + 1 >= self.harts { 0 } else { h + 1 };
            self.stats.grants[h] += 1;
            self.stats.hart_wait_ps[h] += g - t;
        }
        g
    }

    /// Round-robin priority of `hart`: 0 for the hart that wins a tie next,
    /// `harts - 1` for the one granted last.
    pub fn rank(&self, hart: usize) -> usize {
        (hart % self.harts + self.harts - self.rr_next) % self.harts
    }

    /// Drops the counters (the reservations stay).
    pub(crate) fn reset_stats(&mut self) {
        let n = self.harts;
        self.stats = BusStats {
            grants: vec![0; n],
            hart_wait_ps: vec![0; n],
            ..BusStats::default()
        };
    }
}

/// How many in-flight intervals an [`InFlight`] keeps at most.
const INFLIGHT_CAP: usize = 256;

/// Miss-status holding registers: at most `k` misses in flight at any
/// instant. A miss that finds all `k` busy starts when the first of them
/// completes. Kept as intervals, like [`Timeline`], so out-of-order requests
/// from different harts do not queue behind each other's future.
#[derive(Clone, Debug)]
pub(crate) struct InFlight {
    k: usize,
    iv: Vec<(Ps, Ps)>,
}

impl InFlight {
    /// `k` registers (at least 1; a blocking cache has one).
    pub(crate) fn new(k: usize) -> InFlight {
        InFlight {
            k: k.max(1),
            iv: Vec::new(),
        }
    }

    /// The earliest instant at or after `t` at which fewer than `k` misses
    /// are in flight.
    #[inline(always)]
    pub(crate) fn earliest_start(&self, t: Ps) -> Ps {
        let mut c = t;
        loop {
            let mut covering = 0usize;
            let mut first_end = Ps::MAX;
            for &(s, e) in &self.iv {
                if s <= c && c < e {
                    covering += 1;
                    first_end = first_end.min(e);
                }
            }
            if covering < self.k {
                return c;
            }
            c = first_end;
        }
    }

    /// Records a miss in flight over `[s, e)`, forgetting intervals that
    /// ended at or before `low_water` (no request can come before it).
    #[inline(always)]
    pub(crate) fn insert(&mut self, s: Ps, e: Ps, low_water: Ps) {
        self.iv.retain(|&(_, end)| end > low_water);
        if e > s {
            self.iv.push((s, e));
        }
        if self.iv.len() > INFLIGHT_CAP {
            // Forget the one that ended first.
            if let Some(i) = (0..self.iv.len()).min_by_key(|&i| self.iv[i].1) {
                self.iv.swap_remove(i);
            }
        }
    }

    /// Number of registers.
    #[cfg(test)]
    pub(crate) fn registers(&self) -> usize {
        self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_first_fit_and_merge() {
        let mut t = Timeline::default();
        t.reserve(100, 10); // [100,110)
        t.reserve(130, 10); // [130,140)
        assert_eq!(t.earliest_fit(0, 10), 0);
        assert_eq!(t.earliest_fit(95, 10), 110, "would overlap [100,110)");
        assert_eq!(t.earliest_fit(105, 10), 110);
        assert_eq!(t.earliest_fit(110, 20), 110, "exact gap");
        assert_eq!(t.earliest_fit(110, 21), 140);
        assert_eq!(t.earliest_fit(200, 5), 200);
        t.reserve(110, 20); // fills the gap: one interval [100,140)
        assert_eq!(t.len(), 1);
        assert_eq!(t.earliest_fit(100, 1), 140);
        t.reserve(90, 10); // adjacent before
        assert_eq!(t.len(), 1);
        assert_eq!(t.earliest_fit(85, 6), 140);
        assert_eq!(t.earliest_fit(85, 5), 85);
    }

    #[test]
    fn search_from_the_back_matches_a_bisection() {
        // Reservations spread over time, then probes all over them (and
        // before and after), compared with the slice bisection.
        let mut t = Timeline::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut at = 1_000;
        for n in 0..3000 {
            at += 1 + next() % 50;
            t.reserve(at, 1 + next() % 20);
            if n % 7 == 0 {
                // An out-of-order booking somewhere in the past.
                let s = t.earliest_fit(next() % at, 3);
                t.reserve(s, 3);
            }
            for _ in 0..3 {
                let s = next() % (at + 100);
                for inclusive in [true, false] {
                    let want = t
                        .busy
                        .partition_point(|&(st, _)| if inclusive { st <= s } else { st < s });
                    assert_eq!(t.starting_before(s, inclusive), want, "s={s} {inclusive}");
                }
            }
        }
        assert_eq!(t.starting_before(0, true), 0);
        assert_eq!(t.starting_before(Ps::MAX, true), t.len());
    }

    #[test]
    fn out_of_order_requests_use_earlier_gaps() {
        let mut b = Bus::new(2);
        // Hart 0 ran ahead and booked t=10_000.
        assert_eq!(b.acquire(Some(0), 10_000, 100), 10_000);
        // Hart 1, behind in time, is not delayed by hart 0's future.
        assert_eq!(b.acquire(Some(1), 500, 100), 500);
        // But it is when it overlaps.
        assert_eq!(b.acquire(Some(1), 9_950, 100), 10_100);
        assert_eq!(b.stats.hart_wait_ps, vec![0, 150]);
    }

    #[test]
    fn round_robin_rank_rotates() {
        let mut b = Bus::new(4);
        assert_eq!((0..4).map(|h| b.rank(h)).collect::<Vec<_>>(), [0, 1, 2, 3]);
        b.acquire(Some(1), 0, 10);
        // Hart 2 is next, hart 1 last.
        assert_eq!((0..4).map(|h| b.rank(h)).collect::<Vec<_>>(), [2, 3, 0, 1]);
        b.acquire(None, 0, 10);
        assert_eq!(b.rank(2), 0, "responses do not move the pointer");
    }

    /// Presents simultaneous requests of `harts` in rank order, as the
    /// scheduler must; returns the order they were granted in.
    fn tie(b: &mut Bus, harts: &[usize], t: Ps) -> Vec<usize> {
        let mut order = harts.to_vec();
        order.sort_by_key(|&h| b.rank(h));
        for &h in &order {
            b.acquire(Some(h), t, 10);
        }
        order
    }

    #[test]
    fn ties_are_broken_round_robin() {
        let mut b = Bus::new(4);
        assert_eq!(tie(&mut b, &[1, 0], 0), [0, 1]);
        assert_eq!(tie(&mut b, &[0, 1, 2, 3], 100), [2, 3, 0, 1]);
        assert_eq!(tie(&mut b, &[1, 3], 200), [3, 1]);
        assert_eq!(tie(&mut b, &[0, 2], 300), [2, 0]);
        assert_eq!(tie(&mut b, &[0, 1, 2, 3], 400), [1, 2, 3, 0]);
    }

    #[test]
    fn blocking_requesters_share_the_bus_equally() {
        // Four blocking masters: each asks again `think` after its
        // transfer; the bus is the bottleneck. Present requests in
        // (time, rank) order, as the scheduler does.
        let mut b = Bus::new(4);
        let (len, think) = (100, 50);
        let mut ready = [0 as Ps; 4];
        let mut grants = [0u64; 4];
        let mut last_end = 0;
        for _ in 0..4001 {
            let h = (0..4).min_by_key(|&h| (ready[h], b.rank(h))).unwrap();
            let g = b.acquire(Some(h), ready[h], len);
            assert!(g >= last_end, "one transfer at a time");
            last_end = g + len;
            ready[h] = g + len + think;
            grants[h] += 1;
        }
        let (lo, hi) = (grants.iter().min().unwrap(), grants.iter().max().unwrap());
        assert!(hi - lo <= 1, "{grants:?}");
        assert_eq!(b.stats.busy_ps, 4001 * len);
        // Saturated: back-to-back transfers.
        assert_eq!(last_end, 4001 * len);
    }

    #[test]
    fn inflight_limits_outstanding_misses() {
        let mut m = InFlight::new(2);
        assert_eq!(m.registers(), 2);
        assert_eq!(m.earliest_start(0), 0);
        m.insert(0, 100, 0);
        assert_eq!(m.earliest_start(10), 10);
        m.insert(10, 50, 0);
        assert_eq!(
            m.earliest_start(20),
            50,
            "both busy until the first completes"
        );
        m.insert(50, 200, 0);
        assert_eq!(m.earliest_start(60), 100);
        // Blocking: one register.
        let mut b = InFlight::new(0);
        b.insert(0, 100, 0);
        assert_eq!(b.earliest_start(0), 100);
        assert_eq!(b.earliest_start(100), 100);
        b.insert(100, 150, 100);
        assert_eq!(
            b.iv.len(),
            1,
            "intervals before the low-water mark are forgotten"
        );
    }
}
