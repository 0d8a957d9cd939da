//! One set-associative cache: tags, MESI states, replacement, statistics.
//!
//! The cache holds no data (the guest's bytes live in guest RAM); it is the
//! timing model's record of which lines are where and in what state. Lines
//! are identified by their *line number* `paddr >> line_shift`. A disabled
//! level has no sets: every lookup misses and nothing is ever filled.

use rvnvmm_config::{CacheLevel, Replacement};

use crate::MemsysError;

/// MESI state of a line. L1I lines are `Shared` (clean, read-only); L2 lines
/// are `Exclusive` (clean) or `Modified` (dirty).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LineState {
    /// Not present.
    Invalid,
    /// Clean, possibly also in other caches; reads only.
    Shared,
    /// Clean and in no other private cache; a write makes it `Modified`
    /// without a bus transaction.
    Exclusive,
    /// Dirty and in no other private cache; must be written back when it
    /// leaves.
    Modified,
}

/// Event counters of one cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Loads (or fetches, for an L1I; or fills from above, for the L2) that
    /// found the line.
    pub read_hits: u64,
    /// Loads/fetches that did not find the line.
    pub read_misses: u64,
    /// Stores/AMOs (or write-backs from above, for the L2) that found the
    /// line with write permission.
    pub write_hits: u64,
    /// Stores/AMOs that did not find the line, or found it `Shared`
    /// (see `upgrades`).
    pub write_misses: u64,
    /// Dirty lines sent to the next level: victims, lines downgraded by a
    /// remote read, and flushes.
    pub writebacks: u64,
    /// Writes to a `Shared` line that had to invalidate the other copies
    /// (counted in `write_misses` too).
    pub upgrades: u64,
    /// Lines this cache lost to another hart's write or flush (coherence
    /// invalidations).
    pub invalidations: u64,
}

impl CacheStats {
    /// All hits.
    pub fn hits(&self) -> u64 {
        self.read_hits + self.write_hits
    }

    /// All misses.
    pub fn misses(&self) -> u64 {
        self.read_misses + self.write_misses
    }
}

/// Tag of an empty way: no line number can equal it (line numbers are
/// addresses shifted right by at least 2 bits).
const NO_LINE: u64 = u64::MAX;

/// `len` copies of `value`, or `None` if the host cannot allocate them.
fn filled_vec<T: Clone>(len: usize, value: T) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, value);
    Some(v)
}

/// What filling or touching a line did to the set's most-recently-used way.
pub(crate) type Demoted = Option<u64>;

/// A set-associative, write-back, write-allocate cache.
#[derive(Clone, Debug)]
pub struct Cache {
    /// Name in the statistics (`hart0.l1d`, `l2`).
    pub(crate) name: String,
    sets: usize,
    ways: usize,
    line_shift: u32,
    policy: Replacement,
    /// Line number per way (`NO_LINE` when invalid), index `set * ways + way`.
    tags: Vec<u64>,
    states: Vec<LineState>,
    /// Per way: the line came here from, or was taken away from, another
    /// core's copy (a write invalidated others, or a read found it
    /// Modified elsewhere): harts share it for writing, so its hits must
    /// keep to simulated-time order with the other harts.
    contended: Vec<bool>,
    /// Per way: when the line's data arrived (or its ownership was
    /// granted), in ps: another core's request cannot take it earlier.
    arrivals: Vec<u64>,
    /// LRU: last-use stamp per way.
    stamps: Vec<u64>,
    /// Most recently used way per set (`u32::MAX` when none).
    mru: Vec<u32>,
    tick: u64,
    rng: u64,
    /// log2 of `ways` when that is a power of two: a slot splits into set
    /// and way, and a random way is drawn, without a division.
    way_shift: Option<u32>,
    /// Whether a line was ever filled: a cache that never held one holds
    /// none, and the snoops of other cores' misses may skip it.
    ever_filled: bool,
    /// Counters.
    pub(crate) stats: CacheStats,
    /// Outstanding misses (MSHRs).
    pub(crate) mshr: crate::bus::InFlight,
}

impl Cache {
    /// Builds a cache from its config level; `seed` seeds the random
    /// replacement (fixed per cache, so runs are deterministic). A disabled
    /// level gives a cache with no sets.
    pub(crate) fn new(name: &str, level: &CacheLevel, seed: u64) -> Result<Cache, MemsysError> {
        let (sets, ways, line_shift) = if level.enabled {
            if !level.line_bytes.is_power_of_two() || level.line_bytes < 4 {
                return Err(MemsysError::LineBytes {
                    cache: name.to_string(),
                    line_bytes: level.line_bytes,
                });
            }
            let sets = level.sets();
            if level.ways == 0 || sets == 0 || !sets.is_power_of_two() {
                return Err(MemsysError::Sets {
                    cache: name.to_string(),
                    size_bytes: level.size_bytes,
                    ways: level.ways,
                    line_bytes: level.line_bytes,
                });
            }
            (
                sets as usize,
                level.ways as usize,
                level.line_bytes.trailing_zeros(),
            )
        } else {
            (
                0,
                0,
                level.line_bytes.max(4).next_power_of_two().trailing_zeros(),
            )
        };
        let n = sets * ways;
        // Config validation bounds the sizes; the host may still lack the
        // memory, which is an error to report, not an abort.
        let no_memory = || MemsysError::CacheMemory {
            cache: name.to_string(),
            lines: n,
            size_bytes: level.size_bytes,
        };
        Ok(Cache {
            name: name.to_string(),
            sets,
            ways,
            line_shift,
            policy: level.replacement,
            tags: filled_vec(n, NO_LINE).ok_or_else(no_memory)?,
            states: filled_vec(n, LineState::Invalid).ok_or_else(no_memory)?,
            contended: filled_vec(n, false).ok_or_else(no_memory)?,
            arrivals: filled_vec(n, 0).ok_or_else(no_memory)?,
            stamps: filled_vec(n, 0).ok_or_else(no_memory)?,
            mru: filled_vec(sets, u32::MAX).ok_or_else(no_memory)?,
            tick: 0,
            way_shift: ways.is_power_of_two().then(|| ways.trailing_zeros()),
            ever_filled: false,
            // xorshift64* must not start at 0.
            rng: seed | 1,
            stats: CacheStats::default(),
            mshr: crate::bus::InFlight::new(level.mshrs.max(1) as usize),
        })
    }

    /// Whether the level exists.
    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        self.sets != 0
    }

    /// log2 of the line size.
    #[inline]
    pub(crate) fn line_shift(&self) -> u32 {
        self.line_shift
    }

    /// Number of ways in all (sets × ways).
    pub(crate) fn capacity_lines(&self) -> usize {
        self.tags.len()
    }

    #[inline]
    fn set_of(&self, line: u64) -> usize {
        (line as usize) & (self.sets - 1)
    }

    /// The way holding `line`, if present.
    #[inline]
    pub(crate) fn find(&self, line: u64) -> Option<usize> {
        if self.sets == 0 {
            return None;
        }
        let base = self.set_of(line) * self.ways;
        self.tags[base..base + self.ways]
            .iter()
            .position(|&t| t == line)
            .map(|w| base + w)
    }

    /// Whether the cache may hold a line: false only if none was ever
    /// filled, when every [`Cache::find`] misses.
    #[inline]
    pub(crate) fn may_hold_lines(&self) -> bool {
        self.ever_filled
    }

    /// State of `line` (`Invalid` if absent).
    pub(crate) fn state_of(&self, line: u64) -> LineState {
        self.find(line)
            .map_or(LineState::Invalid, |s| self.states[s])
    }

    /// State of the line in way `slot`.
    #[inline]
    pub(crate) fn state(&self, slot: usize) -> LineState {
        self.states[slot]
    }

    /// Line number in way `slot` (meaningless if invalid).
    #[inline]
    pub(crate) fn line(&self, slot: usize) -> u64 {
        self.tags[slot]
    }

    /// Changes the state of way `slot`; `Invalid` empties it.
    pub(crate) fn set_state(&mut self, slot: usize, state: LineState) {
        self.states[slot] = state;
        if state == LineState::Invalid {
            self.tags[slot] = NO_LINE;
            self.contended[slot] = false;
        }
    }

    /// Marks the line in way `slot` as shared for writing with other cores.
    pub(crate) fn set_contended(&mut self, slot: usize) {
        self.contended[slot] = true;
    }

    /// Records that the line in way `slot` arrived (or became owned) at
    /// `t` ps.
    pub(crate) fn set_arrival(&mut self, slot: usize, t: u64) {
        self.arrivals[slot] = t;
    }

    /// When the line in way `slot` arrived ([`Cache::set_arrival`]).
    pub(crate) fn arrival(&self, slot: usize) -> u64 {
        self.arrivals[slot]
    }

    /// Whether the line in way `slot` is shared for writing with other
    /// cores ([`Cache::set_contended`]); cleared when the way empties.
    #[inline]
    pub(crate) fn is_contended(&self, slot: usize) -> bool {
        self.contended[slot]
    }

    /// Records a use of way `slot`. With LRU replacement, returns the line
    /// that was the set's most recently used one if it changes (its filter
    /// entries must go: a filter hit does not update recency, so the filter
    /// may only hold a set's MRU line under LRU).
    pub(crate) fn touch(&mut self, slot: usize) -> Demoted {
        self.tick += 1;
        self.stamps[slot] = self.tick;
        let (set, way) = match self.way_shift {
            Some(s) => (slot >> s, (slot & (self.ways - 1)) as u32),
            None => (slot / self.ways, (slot % self.ways) as u32),
        };
        let prev = std::mem::replace(&mut self.mru[set], way);
        if self.policy == Replacement::Lru && prev != way && prev != u32::MAX {
            let old = self.tags[set * self.ways + prev as usize];
            if old != NO_LINE {
                return Some(old);
            }
        }
        None
    }

    /// The way `line` would be filled into: an empty way of its set if any
    /// (lowest first), else the LRU way or a random one.
    #[inline(always)]
    pub(crate) fn victim(&mut self, line: u64) -> usize {
        let base = self.set_of(line) * self.ways;
        let set = &self.tags[base..base + self.ways];
        if let Some(w) = set.iter().position(|&t| t == NO_LINE) {
            return base + w;
        }
        match self.policy {
            Replacement::Lru => {
                let stamps = &self.stamps[base..base + self.ways];
                let mut best = 0;
                for (w, &s) in stamps.iter().enumerate() {
                    if s < stamps[best] {
                        best = w;
                    }
                }
                base + best
            }
            Replacement::Random => {
                let r = self.next_random();
                base + match self.way_shift {
                    Some(_) => (r & (self.ways as u64 - 1)) as usize,
                    None => (r % self.ways as u64) as usize,
                }
            }
        }
    }

    /// Puts `line` into way `slot` (which the caller has emptied) in `state`
    /// and makes it the most recently used.
    #[inline(always)]
    pub(crate) fn fill(&mut self, slot: usize, line: u64, state: LineState) -> Demoted {
        debug_assert_eq!(self.states[slot], LineState::Invalid);
        self.ever_filled = true;
        self.tags[slot] = line;
        self.states[slot] = state;
        self.contended[slot] = false;
        self.arrivals[slot] = 0;
        self.touch(slot)
    }

    /// Every valid way: `(slot, line, state)` in way order.
    pub(crate) fn valid_lines(&self) -> impl Iterator<Item = (usize, u64, LineState)> + '_ {
        self.states
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != LineState::Invalid)
            .map(|(i, &s)| (i, self.tags[i], s))
    }

    /// Whether `line` is the most recently used line of its set.
    #[cfg(test)]
    pub(crate) fn is_mru(&self, line: u64) -> bool {
        let set = self.set_of(line);
        let w = self.mru[set];
        w != u32::MAX && self.tags[set * self.ways + w as usize] == line
    }

    /// The replacement policy.
    #[cfg(test)]
    pub(crate) fn policy(&self) -> Replacement {
        self.policy
    }

    /// xorshift64* (fixed seed per cache: deterministic).
    fn next_random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32
    }

    /// Drops every counter.
    pub(crate) fn reset_stats(&mut self) {
        self.stats = CacheStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(size: u64, ways: u32, line: u32, policy: Replacement) -> CacheLevel {
        CacheLevel {
            enabled: true,
            size_bytes: size,
            ways,
            line_bytes: line,
            hit_latency_cycles: 1,
            mshrs: 0,
            replacement: policy,
        }
    }

    #[test]
    fn geometry_errors() {
        assert!(Cache::new("x", &level(3 * 64 * 2, 2, 64, Replacement::Lru), 1).is_err());
        assert!(Cache::new("x", &level(1024, 2, 48, Replacement::Lru), 1).is_err());
        assert!(Cache::new("x", &level(1024, 0, 64, Replacement::Lru), 1).is_err());
        let off = CacheLevel {
            enabled: false,
            ..level(3, 0, 48, Replacement::Lru)
        };
        let c = Cache::new("x", &off, 1).unwrap();
        assert!(!c.enabled());
        assert_eq!(c.find(5), None);
    }

    #[test]
    fn lru_victim_order() {
        // 1 set of 4 ways.
        let mut c = Cache::new("x", &level(256, 4, 64, Replacement::Lru), 1).unwrap();
        for line in [0u64, 1, 2, 3] {
            let v = c.victim(line);
            c.fill(v, line, LineState::Exclusive);
        }
        // Use 0 and 2 again: LRU order is now 1, 3, 0, 2.
        let s0 = c.find(0).unwrap();
        c.touch(s0);
        let s2 = c.find(2).unwrap();
        c.touch(s2);
        let mut evicted = Vec::new();
        for line in 10..14u64 {
            let v = c.victim(line);
            evicted.push(c.line(v));
            c.set_state(v, LineState::Invalid);
            c.fill(v, line, LineState::Exclusive);
        }
        assert_eq!(evicted, vec![1, 3, 0, 2]);
    }

    #[test]
    fn lru_reports_demoted_mru() {
        let mut c = Cache::new("x", &level(256, 4, 64, Replacement::Lru), 1).unwrap();
        let v = c.victim(0);
        assert_eq!(c.fill(v, 0, LineState::Exclusive), None);
        let v = c.victim(1);
        assert_eq!(c.fill(v, 1, LineState::Exclusive), Some(0));
        let s = c.find(1).unwrap();
        assert_eq!(c.touch(s), None, "touching the MRU line demotes nothing");
        let mut r = Cache::new("x", &level(256, 4, 64, Replacement::Random), 1).unwrap();
        let v = r.victim(0);
        r.fill(v, 0, LineState::Exclusive);
        let v = r.victim(1);
        assert_eq!(
            r.fill(v, 1, LineState::Exclusive),
            None,
            "random keeps no recency"
        );
    }

    #[test]
    fn random_is_deterministic_and_fills_empty_ways_first() {
        let run = || {
            let mut c = Cache::new("x", &level(256, 4, 64, Replacement::Random), 7).unwrap();
            let mut out = Vec::new();
            for line in 0..40u64 {
                let v = c.victim(line);
                out.push(v);
                c.set_state(v, LineState::Invalid);
                c.fill(v, line, LineState::Shared);
            }
            out
        };
        let a = run();
        assert_eq!(a, run());
        assert_eq!(&a[..4], &[0, 1, 2, 3]);
        // All ways get chosen eventually.
        for w in 0..4 {
            assert!(a[4..].contains(&w));
        }
    }

    #[test]
    fn sets_are_indexed_by_low_line_bits() {
        // 4 sets x 2 ways.
        let mut c = Cache::new("x", &level(512, 2, 64, Replacement::Lru), 1).unwrap();
        for line in [0u64, 4, 8] {
            let v = c.victim(line);
            if c.state(v) != LineState::Invalid {
                c.set_state(v, LineState::Invalid);
            }
            c.fill(v, line, LineState::Modified);
        }
        // Set 0 holds 4 and 8 (0 was LRU), set 1 is empty.
        assert_eq!(c.find(0), None);
        assert!(c.find(4).is_some() && c.find(8).is_some());
        assert_eq!(c.state_of(8), LineState::Modified);
        assert_eq!(c.valid_lines().count(), 2);
    }
}
