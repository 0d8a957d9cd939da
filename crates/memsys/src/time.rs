//! Exact conversion between hart cycles and picoseconds.
//!
//! Inside the memory system every time is a [`Ps`] (picoseconds, `u64`, about
//! 213 days of simulated time). Harts count cycles of `machine.clock_hz`. A
//! cycle count becomes picoseconds by `floor(cycles * 1e12 / hz)` and a time
//! becomes a cycle count by `ceil(ps * hz / 1e12)`, both in `u128`, so a
//! round trip of a whole cycle count is the identity and a stall is always
//! computed from absolute times (no rounding error accumulates over a run).

use rvnvmm_dram::Grid;
pub use rvnvmm_dram::Ps;

/// Picoseconds per second.
pub const PS_PER_S: u128 = 1_000_000_000_000;

/// A clock of `hz` Hz: converts its cycles to and from [`Ps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    hz: u64,
    /// Picoseconds per cycle when that is a whole number (50 MHz: 20000),
    /// so the conversions on every miss need no 128-bit division, and as a
    /// grid, so the one back to cycles needs no division at all.
    exact_ps: Option<u64>,
    exact_grid: Option<Grid>,
}

impl Clock {
    /// A clock of `hz` Hz (at least 1).
    pub fn new(hz: u64) -> Clock {
        let hz = hz.max(1);
        let exact_ps = PS_PER_S
            .is_multiple_of(u128::from(hz))
            .then(|| (PS_PER_S / u128::from(hz)) as u64);
        Clock {
            hz,
            exact_ps,
            exact_grid: exact_ps.map(Grid::new),
        }
    }

    /// The frequency in Hz.
    pub fn hz(&self) -> u64 {
        self.hz
    }

    /// The start of cycle `cycles`: `floor(cycles * 1e12 / hz)` ps
    /// (saturating).
    #[inline]
    pub fn cycles_to_ps(&self, cycles: u64) -> Ps {
        if let Some(p) = self.exact_ps {
            return cycles.saturating_mul(p);
        }
        u64::try_from(u128::from(cycles) * PS_PER_S / u128::from(self.hz)).unwrap_or(u64::MAX)
    }

    /// The first cycle boundary at or after `ps`: `ceil(ps * hz / 1e12)`.
    #[inline]
    pub fn ps_to_cycles_ceil(&self, ps: Ps) -> u64 {
        if let Some(g) = &self.exact_grid {
            return g.div_ceil(ps);
        }
        u64::try_from((u128::from(ps) * u128::from(self.hz)).div_ceil(PS_PER_S)).unwrap_or(u64::MAX)
    }

    /// The duration of `cycles` cycles, rounded to the nearest ps (for
    /// latencies added at arbitrary points in time).
    pub fn duration_ps(&self, cycles: u64) -> Ps {
        let hz = u128::from(self.hz);
        u64::try_from((u128::from(cycles) * PS_PER_S + hz / 2) / hz).unwrap_or(u64::MAX)
    }
}

/// Nanoseconds from the config (`f64`) to picoseconds, rounded; negative or
/// NaN becomes 0.
pub fn ns_to_ps(ns: f64) -> Ps {
    if ns.is_finite() && ns > 0.0 {
        (ns * 1000.0).round() as Ps
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_is_identity_for_whole_cycles() {
        for hz in [50_000_000u64, 667_000_000, 1_000_000_000, 3, 999_999_937] {
            let c = Clock::new(hz);
            for cycles in [0u64, 1, 2, 3, 7, 1000, 123_456_789, 1 << 40] {
                if u128::from(cycles) * PS_PER_S / u128::from(hz) > u128::from(u64::MAX) {
                    assert_eq!(c.cycles_to_ps(cycles), u64::MAX, "saturates");
                    continue;
                }
                assert_eq!(
                    c.ps_to_cycles_ceil(c.cycles_to_ps(cycles)),
                    cycles,
                    "{hz} {cycles}"
                );
            }
        }
    }

    #[test]
    fn the_whole_picosecond_shortcut_agrees_with_the_general_path() {
        for hz in [50_000_000u64, 1_000_000_000, 200_000_000] {
            let fast = Clock::new(hz);
            assert!(fast.exact_ps.is_some());
            let slow = Clock {
                hz,
                exact_ps: None,
                exact_grid: None,
            };
            for v in [
                0u64,
                1,
                19_999,
                20_000,
                20_001,
                123_456_789_123,
                u64::MAX / 3,
                u64::MAX,
            ] {
                assert_eq!(fast.cycles_to_ps(v), slow.cycles_to_ps(v), "{hz} {v}");
                assert_eq!(
                    fast.ps_to_cycles_ceil(v),
                    slow.ps_to_cycles_ceil(v),
                    "{hz} {v}"
                );
            }
        }
    }

    #[test]
    fn ceil_and_floor() {
        let c = Clock::new(50_000_000); // 20 ns cycle
        assert_eq!(c.cycles_to_ps(3), 60_000);
        assert_eq!(c.ps_to_cycles_ceil(60_000), 3);
        assert_eq!(c.ps_to_cycles_ceil(60_001), 4);
        assert_eq!(c.ps_to_cycles_ceil(59_999), 3);
        let c = Clock::new(667_000_000); // 1499.25 ps
        assert_eq!(c.cycles_to_ps(4), 5997);
        assert_eq!(c.duration_ps(1), 1499);
        assert_eq!(c.duration_ps(4), 5997);
    }

    #[test]
    fn ns_conversion() {
        assert_eq!(ns_to_ps(13.75), 13_750);
        assert_eq!(ns_to_ps(800.0), 800_000);
        assert_eq!(ns_to_ps(-1.0), 0);
        assert_eq!(ns_to_ps(f64::NAN), 0);
    }
}
