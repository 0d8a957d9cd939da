//! Seed 000's microbenchmarks run against the controller alone, with a
//! slow blocking requester standing in for the CPU, its cache and the bus.
//!
//! This is what the tests and `examples/paper_tables.rs` use to check the
//! controller against seed 000 Fig. 8 and Tables 3-6; the emulator's real
//! benchmarks (`rvnvmm bench`) run guest loops through the caches instead.
//! The requester issues one request at a time (a blocking cache): a read
//! goes over the bus (`request_ps`), through the controller, and back
//! (`response_ps`), after which the CPU thinks for `think_ps` (its loop
//! overhead) before the next request. A write-back is posted: the CPU waits
//! only until the controller accepts it, plus the bus both ways.

use crate::{Controller, Ps};

/// A slow CPU with a blocking cache, one memory request at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockingCpu {
    /// Bus latency from the cache to the controller input.
    pub request_ps: Ps,
    /// Bus latency from the controller's data out back to the cache.
    pub response_ps: Ps,
    /// CPU time between receiving read data and issuing the next request.
    pub think_ps: Ps,
    /// The CPU's clock.
    pub now: Ps,
}

impl BlockingCpu {
    /// freedom-u500 (seed 000): 800 ns bus each way (the config's `[bus]`,
    /// from Fig. 8), and 200 ns of loop overhead per access (about ten
    /// cycles at 50 MHz; assumed).
    pub fn freedom_u500() -> BlockingCpu {
        BlockingCpu {
            request_ps: 800_000,
            response_ps: 800_000,
            think_ps: 200_000,
            now: 0,
        }
    }

    /// Reads `paddr`; returns the latency the CPU saw (issue → data back).
    /// The CPU then thinks for `think_ps`.
    pub fn read(&mut self, c: &mut Controller, paddr: u64) -> Ps {
        let issue = self.now;
        let out = c.read(paddr, issue.saturating_add(self.request_ps));
        let back = out.saturating_add(self.response_ps);
        self.now = back.saturating_add(self.think_ps);
        back - issue
    }

    /// Writes back a line at `paddr` (posted); returns what the CPU waited
    /// (issue → acceptance acknowledged). No think time follows: the cache
    /// goes on to its fill at once.
    pub fn write(&mut self, c: &mut Controller, paddr: u64) -> Ps {
        let issue = self.now;
        let acc = c.write(paddr, issue.saturating_add(self.request_ps));
        self.now = acc.saturating_add(self.response_ps);
        self.now - issue
    }
}

/// Read or write benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Each access is a read miss (line fill).
    Read,
    /// Each access is a store miss in a write-back, write-allocate cache:
    /// the fill (a read) is preceded by the write-back of the dirty line
    /// evicted from the same set, `ways` accesses earlier (all lines of
    /// these loops map to one L1 set; LRU order, the deterministic stand-in
    /// for Rocket's random replacement).
    Write {
        /// Associativity of the L1 set all accesses map to.
        ways: u64,
    },
}

/// Address of access `i` of a sequence, and one access of the loop body.
fn access(cpu: &mut BlockingCpu, c: &mut Controller, op: Op, addr: impl Fn(u64) -> u64, i: u64) {
    if let Op::Write { ways } = op {
        if i >= ways {
            cpu.write(c, addr(i - ways));
        }
    }
    cpu.read(c, addr(i));
}

/// Seed 000 Fig. 9: `count` accesses at `base + i * stride`; returns the
/// average time per access in ns, measured like the paper's
/// `(end - start) / iterations`.
pub fn stride(
    c: &mut Controller,
    cpu: &mut BlockingCpu,
    base: u64,
    stride: u64,
    count: u64,
    op: Op,
) -> f64 {
    let start = cpu.now;
    for i in 0..count {
        access(cpu, c, op, |k| base.wrapping_add(k.wrapping_mul(stride)), i);
    }
    (cpu.now - start) as f64 / count.max(1) as f64 / 1000.0
}

/// Seed 000 Fig. 10: `rounds` rounds over `nbank` banks (`bank_bytes`
/// apart), the offset within a bank advancing by `step` each round, so
/// every access to a bank opens a new row when `step` is a row; returns the
/// average time per access in ns.
#[allow(clippy::too_many_arguments)]
pub fn banks(
    c: &mut Controller,
    cpu: &mut BlockingCpu,
    base: u64,
    bank_bytes: u64,
    nbank: u64,
    step: u64,
    rounds: u64,
    op: Op,
) -> f64 {
    let nbank = nbank.max(1);
    let start = cpu.now;
    let addr = |k: u64| {
        base.wrapping_add((k % nbank).wrapping_mul(bank_bytes))
            .wrapping_add((k / nbank).wrapping_mul(step))
    };
    let n = rounds * nbank;
    for i in 0..n {
        access(cpu, c, op, addr, i);
    }
    (cpu.now - start) as f64 / n.max(1) as f64 / 1000.0
}
