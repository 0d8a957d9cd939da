//! Periodic sampling of a run (`rvnvmm run --sample`,
//! `docs/regions-of-interest.md`): every `period` instructions, `warmup`
//! instructions in the timing model whose figures are not kept, then a
//! window of `detail` instructions in the timing model whose cycles are
//! recorded; the rest of the period runs in the functional model. The
//! windows' cycles per instruction estimate the whole run's simulated time,
//! with a confidence interval from their variance, as SMARTS does
//! (Wunderlich et al., ISCA 2003). The edges come at the end of the block
//! that reaches them, not mid-block, so a run sampled with windows as long
//! as their period is the run timed throughout, to the cycle.

use crate::{Controlled, Model};

/// The sampling plan: where the windows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Instructions per period (all threads): one window each.
    pub period: u64,
    /// Instructions of each window, measured in the timing model.
    pub detail: u64,
    /// Instructions in the timing model before each window, not measured.
    pub warmup: u64,
}

impl Sampling {
    /// A plan, if it fits: `detail > 0`, `warmup + detail <= period`.
    pub fn new(period: u64, detail: u64, warmup: u64) -> Result<Sampling, String> {
        if detail == 0 {
            return Err("detail must be at least 1 instruction".into());
        }
        if warmup.checked_add(detail).is_none_or(|w| w > period) {
            return Err(format!(
                "warmup + detail ({warmup} + {detail}) must fit in the period ({period})"
            ));
        }
        Ok(Sampling {
            period,
            detail,
            warmup,
        })
    }

    /// The instruction count where period `k`'s warm-up begins: each
    /// period ends with its warm-up and window.
    fn warmup_start(&self, k: u64) -> u64 {
        (k + 1)
            .saturating_mul(self.period)
            .saturating_sub(self.detail + self.warmup)
    }
}

/// One measured window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleWindow {
    /// Instructions retired before it (all threads, since the start).
    pub start_instructions: u64,
    /// Instructions in it.
    pub instructions: u64,
    /// Simulated cycles it took: the advance of the latest hart clock.
    pub cycles: u64,
    /// Simulated time it took, in ns.
    pub sim_time_ns: u64,
    /// L1D misses in it (all caches named `*.l1d`).
    pub l1d_misses: u64,
    /// Bus transfers in it.
    pub bus_transfers: u64,
}

/// The whole run's simulated time estimated from the windows.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Mean cycles per instruction of the windows.
    pub cpi_mean: f64,
    /// Sample standard deviation of the windows' CPI (0 with one window).
    pub cpi_stddev: f64,
    /// Estimated simulated time of the run, in ns: `cpi_mean` x the run's
    /// instructions, at the clock.
    pub sim_time_ns: f64,
    /// Half the width of the 95 % confidence interval of `sim_time_ns`, in
    /// ns; `None` with fewer than two windows (no variance to go by).
    pub half_width_ns: Option<f64>,
}

/// Confidence of the interval `Estimate::half_width_ns` gives.
pub const CONFIDENCE: f64 = 0.95;

/// Student's t quantile for a two-sided 95 % interval with `df` degrees of
/// freedom (`df >= 1`): the table up to 30, then an approximation within
/// 0.002 of the exact value, tending to the normal's 1.96.
pub fn t_quantile_95(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => 1.96 + (2.042 - 1.96) * 30.0 / df as f64,
    }
}

/// Estimates a run of `total_instructions` at `clock_hz` from `windows`
/// of `unit` instructions each (SMARTS: the mean of the windows' CPI, its
/// standard error with the finite-population correction for sampling `n`
/// of the run's `total_instructions / unit` units). `None` without windows.
pub fn estimate(
    windows: &[SampleWindow],
    unit: u64,
    total_instructions: u64,
    clock_hz: u64,
) -> Option<Estimate> {
    let cpis: Vec<f64> = windows
        .iter()
        .filter(|w| w.instructions > 0)
        .map(|w| w.cycles as f64 / w.instructions as f64)
        .collect();
    if cpis.is_empty() {
        return None;
    }
    let n = cpis.len() as f64;
    let cpi_mean = cpis.iter().sum::<f64>() / n;
    let variance = if cpis.len() > 1 {
        cpis.iter().map(|c| (c - cpi_mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let ns_per_cycle = 1e9 / clock_hz.max(1) as f64;
    let scale = total_instructions as f64 * ns_per_cycle;
    let units = (total_instructions as f64 / unit.max(1) as f64).max(n);
    let fpc = (1.0 - n / units).max(0.0);
    let half_width_ns = (cpis.len() > 1)
        .then(|| t_quantile_95(cpis.len() as u64 - 1) * (variance / n * fpc).sqrt() * scale);
    Some(Estimate {
        cpi_mean,
        cpi_stddev: variance.sqrt(),
        sim_time_ns: cpi_mean * scale,
        half_width_ns,
    })
}

/// Where a sampled run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Functional, up to the period's warm-up.
    Functional,
    /// Timing, not measured.
    Warmup,
    /// Timing, measured from `WindowStart`.
    Detail,
}

/// The counters a window measures, as a machine has them now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleCounters {
    /// Instructions of all threads since the start.
    pub instructions: u64,
    /// The latest hart clock, in cycles.
    pub cycles: u64,
    /// L1D misses (all caches named `*.l1d`; 0 without a memory system).
    pub l1d_misses: u64,
    /// Bus transfers (0 without a memory system).
    pub bus_transfers: u64,
}

impl SampleCounters {
    /// The counters of a machine that has run `instructions` to hart clock
    /// `cycles`, timed by `model` (or functional: `None`).
    pub fn of(
        instructions: u64,
        cycles: u64,
        model: Option<&dyn rvnvmm_timing::MemoryModel>,
    ) -> SampleCounters {
        SampleCounters {
            instructions,
            cycles,
            l1d_misses: model.map_or(0, |m| m.l1d_misses()),
            bus_transfers: model.map_or(0, |m| m.bus_transfers()),
        }
    }
}

/// A sampled run's state: which phase it is in, the windows measured. The
/// machine runs to [`Sampler::next_point`] (the end of the block or turn
/// that reaches it) and calls [`Sampler::check_points`] there.
#[derive(Clone, Debug)]
pub struct Sampler {
    plan: Sampling,
    /// The current period.
    period: u64,
    phase: Phase,
    /// Where the current warm-up began.
    warmup_start: u64,
    /// Instructions of the warm-ups before it.
    warmup_instructions: u64,
    start: SampleCounters,
    windows: Vec<SampleWindow>,
}

/// What a sampled run reports (`Outcome::sampling`).
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingOutcome {
    /// The plan.
    pub plan: Sampling,
    /// The windows measured, in order (a window the run's end cut short is
    /// left out). Each begins and ends at the end of the block that reaches
    /// its planned edge: it holds `detail` instructions and up to a block
    /// more or less.
    pub windows: Vec<SampleWindow>,
    /// Instructions of the whole run (all threads, since the start).
    pub total_instructions: u64,
    /// Instructions run in the timing model outside the windows: the
    /// warm-ups, and a window the end cut short.
    pub warmup_instructions: u64,
    /// The estimate; `None` without windows.
    pub estimate: Option<Estimate>,
}

impl SamplingOutcome {
    /// Fraction of the run's instructions measured in the windows.
    pub fn detail_fraction(&self) -> f64 {
        let detail: u64 = self.windows.iter().map(|w| w.instructions).sum();
        detail as f64 / self.total_instructions.max(1) as f64
    }
}

impl Sampler {
    /// The sampling of a run by `plan`, which starts in the functional
    /// model (the caller switches the machine there).
    pub fn new(plan: Sampling) -> Sampler {
        Sampler {
            plan,
            period: 0,
            phase: Phase::Functional,
            warmup_start: 0,
            warmup_instructions: 0,
            start: SampleCounters::default(),
            windows: Vec::new(),
        }
    }

    /// The instruction count of the next change of phase.
    pub fn next_point(&self) -> u64 {
        let end = (self.period + 1).saturating_mul(self.plan.period);
        match self.phase {
            Phase::Functional => self.plan.warmup_start(self.period),
            Phase::Warmup => end - self.plan.detail,
            Phase::Detail => end,
        }
    }

    /// Acts on the points `m` has reached: switches its model, starts and
    /// ends windows.
    pub fn check_points(&mut self, m: &mut impl Controlled) {
        while m.instructions() >= self.next_point() {
            match self.phase {
                Phase::Functional => {
                    // The run control checked that there is a timing model.
                    let _ = m.switch_model(Model::Timing);
                    self.warmup_start = m.instructions();
                    self.phase = Phase::Warmup;
                }
                Phase::Warmup => {
                    let now = m.sample_counters();
                    self.warmup_instructions += now.instructions - self.warmup_start;
                    self.start = now;
                    self.phase = Phase::Detail;
                }
                Phase::Detail => {
                    let now = m.sample_counters();
                    let start = self.start;
                    self.windows.push(SampleWindow {
                        start_instructions: start.instructions,
                        instructions: now.instructions - start.instructions,
                        cycles: now.cycles - start.cycles,
                        sim_time_ns: m.cycles_to_ns(now.cycles) - m.cycles_to_ns(start.cycles),
                        l1d_misses: now.l1d_misses.saturating_sub(start.l1d_misses),
                        bus_transfers: now.bus_transfers.saturating_sub(start.bus_transfers),
                    });
                    self.period += 1;
                    // The next warm-up may start here (warmup + detail =
                    // period): then the model stays.
                    self.phase = Phase::Functional;
                    if self.next_point() > now.instructions {
                        let _ = m.switch_model(Model::Functional);
                    } else {
                        self.warmup_start = now.instructions;
                        self.phase = Phase::Warmup;
                    }
                }
            }
        }
    }

    /// What the sampled run reports at its end, after `total`
    /// instructions, at `clock_hz`.
    pub fn outcome(&self, total: u64, clock_hz: u64) -> SamplingOutcome {
        // A warm-up or window the end cut short was timed, not measured.
        let cut_short = match self.phase {
            Phase::Functional => 0,
            Phase::Warmup => total - self.warmup_start,
            Phase::Detail => total - self.start.instructions,
        };
        SamplingOutcome {
            plan: self.plan,
            windows: self.windows.clone(),
            total_instructions: total,
            warmup_instructions: self.warmup_instructions + cut_short,
            estimate: estimate(&self.windows, self.plan.detail, total, clock_hz),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(instructions: u64, cycles: u64) -> SampleWindow {
        SampleWindow {
            start_instructions: 0,
            instructions,
            cycles,
            sim_time_ns: 0,
            l1d_misses: 0,
            bus_transfers: 0,
        }
    }

    #[test]
    fn plans_that_do_not_fit_are_refused() {
        assert!(Sampling::new(100, 10, 20).is_ok());
        assert!(Sampling::new(100, 100, 0).is_ok());
        assert!(Sampling::new(100, 0, 20).is_err());
        assert!(Sampling::new(100, 90, 20).is_err());
        assert!(Sampling::new(100, u64::MAX, 1).is_err());
    }

    #[test]
    fn windows_end_each_period() {
        let p = Sampling::new(1000, 100, 50).unwrap();
        assert_eq!(p.warmup_start(0), 850);
        assert_eq!(p.warmup_start(3), 3850);
    }

    #[test]
    fn constant_cpi_is_estimated_exactly_with_no_spread() {
        let w = vec![window(1000, 2500); 4];
        let e = estimate(&w, 1000, 1_000_000, 1_000_000_000).unwrap();
        assert_eq!(e.cpi_mean, 2.5);
        assert_eq!(e.cpi_stddev, 0.0);
        assert_eq!(e.sim_time_ns, 2_500_000.0);
        assert_eq!(e.half_width_ns, Some(0.0));
    }

    #[test]
    fn the_interval_follows_the_student_t_and_the_clock() {
        // CPIs 1, 2, 3: mean 2, s = 1, n = 3, t(2) = 4.303; 10^6
        // instructions in 10^4 units of 100; 2 GHz.
        let w = vec![window(100, 100), window(100, 200), window(100, 300)];
        let e = estimate(&w, 100, 1_000_000, 2_000_000_000).unwrap();
        assert_eq!(e.cpi_mean, 2.0);
        assert!((e.cpi_stddev - 1.0).abs() < 1e-12);
        assert!((e.sim_time_ns - 1_000_000.0).abs() < 1e-6);
        let fpc = (1.0f64 - 3.0 / 10_000.0).sqrt();
        let want = 4.303 * (1.0 / 3.0f64).sqrt() * fpc * 500_000.0;
        assert!((e.half_width_ns.unwrap() - want).abs() < 1e-6);
    }

    #[test]
    fn a_census_has_no_sampling_error() {
        // Every unit measured: the finite-population correction is 0.
        let w = vec![window(10, 10), window(10, 30)];
        let e = estimate(&w, 10, 20, 1_000_000_000).unwrap();
        assert_eq!(e.sim_time_ns, 40.0);
        assert_eq!(e.half_width_ns, Some(0.0));
    }

    #[test]
    fn one_window_gives_no_bound_and_none_gives_nothing() {
        let e = estimate(&[window(10, 20)], 10, 1000, 1_000_000_000).unwrap();
        assert_eq!(e.half_width_ns, None);
        assert!(estimate(&[], 10, 1000, 1_000_000_000).is_none());
    }

    #[test]
    fn t_quantiles_fall_to_the_normal() {
        assert_eq!(t_quantile_95(1), 12.706);
        assert_eq!(t_quantile_95(30), 2.042);
        assert!((t_quantile_95(60) - 2.000).abs() < 0.002);
        assert!((t_quantile_95(120) - 1.980).abs() < 0.002);
        assert!((t_quantile_95(100_000) - 1.96).abs() < 0.001);
        assert!(t_quantile_95(0).is_infinite());
    }
}
