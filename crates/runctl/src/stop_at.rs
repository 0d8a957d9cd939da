//! Points where a run stops exactly: a power failure (`--crash-at`), a
//! checkpoint (`--checkpoint-at`), given as an instruction count of all
//! harts together or as a simulated time. Both machines shorten their turns
//! as a point nears with [`StopAt::turn`] and stop there with
//! [`StopAt::reached`]; only the turn a point ends stops mid-block
//! ([`StopAt::ends_turn`]), so a run with a point is the run without it up to
//! the point.

/// Where the run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopAt {
    /// After exactly this many instructions of all harts (user mode: all
    /// threads) together.
    Insns(u64),
    /// When the next hart to run has reached this simulated time, in ns.
    TimeNs(u64),
}

/// A turn nearing a point in time is at most this fraction of the cycles
/// left (a hart retires at most one instruction a cycle, so the stop lands
/// within a few instructions of the time).
const TIME_APPROACH_DIVISOR: u64 = 8;

impl StopAt {
    /// Whether the run is at or past the point: `insns` retired by all
    /// harts, `time_ns` the clock of the hart about to run.
    pub fn reached(self, insns: u64, time_ns: u64) -> bool {
        match self {
            StopAt::Insns(n) => insns >= n,
            StopAt::TimeNs(ns) => time_ns >= ns,
        }
    }

    /// The length of the next turn, at most `slice` instructions, for a
    /// point not yet reached: up to an instruction count exactly, or a
    /// fraction of the cycles left before a time (`cycles_until(ns)`: the
    /// hart's cycles from its clock to `ns`). At least 1.
    pub fn turn(self, slice: u64, insns: u64, cycles_until: impl FnOnce(u64) -> u64) -> u64 {
        let left = match self {
            StopAt::Insns(n) => n.saturating_sub(insns),
            StopAt::TimeNs(ns) => cycles_until(ns) / TIME_APPROACH_DIVISOR,
        };
        slice.min(left.max(1))
    }

    /// Whether a turn of `budget` instructions from `insns` reaches the
    /// point, so that it must stop exactly there (mid-block).
    pub fn ends_turn(self, insns: u64, budget: u64) -> bool {
        matches!(self, StopAt::Insns(n) if insns + budget >= n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instruction_count_is_reached_exactly() {
        let p = StopAt::Insns(1_000);
        assert!(!p.reached(999, u64::MAX));
        assert!(p.reached(1_000, 0));
        assert_eq!(p.turn(10_000, 400, |_| unreachable!()), 600);
        assert_eq!(p.turn(100, 400, |_| unreachable!()), 100);
        assert!(p.ends_turn(400, 600) && !p.ends_turn(400, 599));
    }

    #[test]
    fn a_time_is_neared_in_shrinking_turns() {
        let p = StopAt::TimeNs(5_000);
        assert!(!p.reached(u64::MAX, 4_999) && p.reached(0, 5_000));
        // 800 cycles left: a turn of at most 100.
        assert_eq!(p.turn(10_000, 0, |ns| ns - 4_200), 100);
        assert_eq!(p.turn(50, 0, |ns| ns - 4_200), 50);
        // Fewer than 8 cycles left still make progress.
        assert_eq!(p.turn(10_000, 0, |_| 3), 1);
        // A turn never stops mid-block for a time.
        assert!(!p.ends_turn(0, u64::MAX / 2));
    }
}
