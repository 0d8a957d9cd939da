//! The progress line of `rvnvmm run` on a terminal: instructions, simulated
//! time, speed and, with `--max-insns`, the time left. It appears only after
//! the run has taken a couple of seconds, is redrawn at most twice a second
//! on stderr, and is erased when the run ends, so short runs and piped
//! output never see it.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How long a run goes before the line appears.
const QUIET_FOR: Duration = Duration::from_secs(2);
/// Time between redraws.
const EVERY: Duration = Duration::from_millis(500);

/// The state of the line.
pub struct Progress {
    started: Instant,
    drawn_at: Option<Instant>,
    max_insns: Option<u64>,
}

impl Progress {
    /// A progress line if stderr is a terminal.
    pub fn on_terminal(max_insns: Option<u64>) -> Option<Progress> {
        std::io::stderr().is_terminal().then(|| Progress {
            started: Instant::now(),
            drawn_at: None,
            max_insns,
        })
    }

    /// Redraws the line if it is due.
    pub fn update(&mut self, insns: u64, sim_ns: u64) {
        let now = Instant::now();
        let elapsed = now - self.started;
        if elapsed < QUIET_FOR || self.drawn_at.is_some_and(|t| now - t < EVERY) {
            return;
        }
        self.drawn_at = Some(now);
        let line = render(insns, sim_ns, elapsed, self.max_insns);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[K{line}");
        let _ = err.flush();
    }

    /// Erases the line, if it was drawn.
    pub fn finish(&mut self) {
        if self.drawn_at.take().is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

/// The line's text.
fn render(insns: u64, sim_ns: u64, elapsed: Duration, max_insns: Option<u64>) -> String {
    let secs = elapsed.as_secs_f64();
    let mips = insns as f64 / secs / 1e6;
    let mut line = format!(
        "rvnvmm: {} instructions, {:.6} s simulated, {mips:.1} MIPS",
        grouped(insns),
        sim_ns as f64 / 1e9
    );
    if let Some(max) = max_insns.filter(|&m| m > 0) {
        let done = (insns as f64 / max as f64).min(1.0);
        let left = if insns > 0 {
            secs * (max.saturating_sub(insns)) as f64 / insns as f64
        } else {
            0.0
        };
        line.push_str(&format!(
            ", {:.0}% of --max-insns, ETA {left:.0} s",
            done * 100.0
        ));
    }
    line
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_ran_and_what_is_left() {
        let line = render(
            250_000_000,
            1_500_000_000,
            Duration::from_secs(5),
            Some(1_000_000_000),
        );
        assert_eq!(
            line,
            "rvnvmm: 250,000,000 instructions, 1.500000 s simulated, 50.0 MIPS, 25% of --max-insns, ETA 15 s"
        );
        let line = render(7, 20, Duration::from_secs(1), None);
        assert_eq!(
            line,
            "rvnvmm: 7 instructions, 0.000000 s simulated, 0.0 MIPS"
        );
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
    }
}
