//! Clock grids: rounding a time up to the DRAM or controller clock, and
//! dividing by it, without a hardware division.

use crate::Ps;

/// `t` rounded up to a multiple of `g` (the reference for [`Grid::up`]).
#[cfg(test)]
fn align_up(t: Ps, g: Ps) -> Ps {
    if g <= 1 {
        return t;
    }
    match t % g {
        0 => t,
        r => t.saturating_add(g - r),
    }
}

/// A fixed clock grid of `g` ps: rounds up to it like `align_up`, and
/// divides by `g`, without a hardware division (the scheduler rounds to the
/// DRAM and controller clocks many times per request, the memory system
/// converts to hart cycles on every miss). A `g` of 0 acts as 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    /// At least 1.
    g: Ps,
    /// `floor(2^64 / g)`, or `2^64 - 1` for `g = 1`: the one correction of
    /// [`Grid::div_rem`] still makes it exact (`t * m / 2^64` is then
    /// `t - 1` for `t > 0`), so no case of its own is needed.
    m: u64,
}

impl Grid {
    /// The grid of period `g` ps.
    pub fn new(g: Ps) -> Grid {
        let g = g.max(1);
        let m = u64::try_from((1u128 << 64) / u128::from(g)).unwrap_or(u64::MAX);
        Grid { g, m }
    }

    /// The first multiple of `g` at or after `t` (saturating), exactly as
    /// `align_up`: with `m = floor(2^64 / g)`, `floor(t * m / 2^64)` is
    /// `floor(t / g)` or one less (`t * m / 2^64` is below `t / g` by less
    /// than `t / 2^64 < 1`), so one correction gives the exact remainder.
    #[inline(always)]
    pub fn up(&self, t: Ps) -> Ps {
        match self.div_rem(t).1 {
            0 => t,
            r => t.saturating_add(self.g - r),
        }
    }

    /// `t.div_ceil(g)`: how many periods cover `t`.
    #[inline(always)]
    pub fn div_ceil(&self, t: Ps) -> u64 {
        let (q, r) = self.div_rem(t);
        q + u64::from(r != 0)
    }

    /// `(t / g, t % g)` (see [`Grid::up`] for why one correction
    /// suffices).
    #[inline(always)]
    fn div_rem(&self, t: Ps) -> (u64, u64) {
        let mut q = ((u128::from(t) * u128::from(self.m)) >> 64) as u64;
        let mut r = t - q * self.g;
        if r >= self.g {
            r -= self.g;
            q += 1;
        }
        (q, r)
    }
}

/// `ns` rounded up to whole periods of `unit` ps. Values are checked
/// positive and finite by the caller.
pub(crate) fn quantise(ns: f64, unit: Ps) -> Ps {
    let units = (ns * 1000.0 / unit as f64 - 1e-9).ceil().max(0.0);
    (units as u64).saturating_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::insert_sorted;
    use crate::HORIZON;

    #[test]
    fn insert_sorted_is_an_insert_at_the_partition_point() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut fast, mut searched) = (Vec::new(), Vec::new());
        for i in 0..5_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly in order, sometimes earlier, with ties.
            let v = if x.is_multiple_of(4) {
                i - x % (i + 1)
            } else {
                i + x % 3
            };
            insert_sorted(&mut fast, v, |&a| a <= v);
            let pos = searched.partition_point(|&a| a <= v);
            searched.insert(pos, v);
            assert_eq!(fast, searched);
        }
    }

    #[test]
    fn grid_up_is_align_up() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for g in [
            0u64,
            1,
            2,
            3,
            1250,
            1500,
            1875,
            5000,
            7519,
            1 << 20,
            u64::MAX,
        ] {
            let grid = Grid::new(g);
            for t in [
                0u64,
                1,
                g.wrapping_sub(1),
                g,
                g.wrapping_add(1),
                HORIZON,
                u64::MAX - 1,
                u64::MAX,
            ] {
                assert_eq!(grid.up(t), align_up(t, g), "g {g} t {t}");
                assert_eq!(grid.div_ceil(t), t.div_ceil(g.max(1)), "g {g} t {t}");
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for t in [x, x >> 20, x >> 40] {
                    assert_eq!(grid.up(t), align_up(t, g), "g {g} t {t}");
                    assert_eq!(grid.div_ceil(t), t.div_ceil(g.max(1)), "g {g} t {t}");
                }
            }
        }
    }
}
