//! LATTester-like loops (Yang et al., FAST 2020) run on the controller
//! model: idle read latency and bandwidth against access size and thread
//! count, for loads, stores + clean + fence and non-temporal stores
//! (`rvnvmm bench pm`).
//!
//! A thread stands for a core issuing the accesses of one loop: an access
//! of `size` bytes is `size / 64` line requests issued together (a core's
//! memory-level parallelism within one access), and the thread waits for
//! all of them before the next access (the fence of the loop). Each request
//! crosses the path from the core to the controller input
//! ([`CpuPath::request_ps`]) and back ([`CpuPath::response_ps`]). The
//! threads' requests reach the controller in time order: the thread whose
//! next step is earliest goes first (ties: lower thread).
//!
//! * **load**: line reads; done when the last data is back.
//! * **store + clean + fence** (`store-clean`): each line is read for
//!   ownership, then cleaned (written back, the `clwb`) when its data is
//!   back; the fence waits until every write is accepted (persistent).
//! * **non-temporal store** (`nt-store`): line writes, no read; the fence
//!   waits until every write is accepted.

use crate::{Controller, Ps};

/// Bytes of one line request.
pub const LINE: u64 = 64;

/// The path between a core and the controller, one way each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPath {
    /// Core → controller input.
    pub request_ps: Ps,
    /// Controller data out → core.
    pub response_ps: Ps,
}

/// Which addresses a loop visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Each thread walks its own slice of the span, access after access.
    Sequential,
    /// Each thread visits accesses at pseudo-random aligned places of its
    /// own slice (a fixed seed per thread).
    Random,
}

impl Pattern {
    /// `seq` / `rand`.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Sequential => "seq",
            Pattern::Random => "rand",
        }
    }
}

/// What a loop does with each line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Loads.
    Load,
    /// Stores, each line cleaned, a fence per access.
    StoreClean,
    /// Non-temporal stores, a fence per access.
    NtStore,
}

impl Kind {
    /// `load` / `store-clean` / `nt-store`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Load => "load",
            Kind::StoreClean => "store-clean",
            Kind::NtStore => "nt-store",
        }
    }

    /// Every kind, in the order listed.
    pub const ALL: [Kind; 3] = [Kind::Load, Kind::StoreClean, Kind::NtStore];
}

/// Where a loop runs: `span` bytes from `base`, split evenly between the
/// threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    /// Physical base.
    pub base: u64,
    /// Bytes.
    pub span: u64,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Offset of access `i` of thread `thread` in a slice of `slice` bytes,
/// accesses of `size` bytes.
fn offset(pattern: Pattern, rng: &mut u64, i: u64, size: u64, slice: u64) -> u64 {
    let slots = (slice / size).max(1);
    match pattern {
        Pattern::Sequential => (i % slots) * size,
        Pattern::Random => (xorshift(rng) % slots) * size,
    }
}

/// Idle read latency: one thread, one line at a time, each load issued
/// after the one before returned (a dependent chain): the average
/// load-to-use latency in ns over `count` loads, and the same without the
/// path (at the controller).
pub fn idle_read_latency(
    c: &mut Controller,
    path: CpuPath,
    area: Area,
    pattern: Pattern,
    count: u64,
) -> (f64, f64) {
    let mut rng = 0x2545_F491_4F6C_DD1D;
    let mut now = c.now();
    let (mut total, mut at_controller) = (0u64, 0u64);
    for i in 0..count {
        let a = area.base + offset(pattern, &mut rng, i, LINE, area.span);
        let arrive = now + path.request_ps;
        let out = c.read(a, arrive);
        let back = out + path.response_ps;
        total += back - now;
        at_controller += out - arrive;
        now = back;
    }
    let n = count.max(1) as f64 * 1000.0;
    (total as f64 / n, at_controller as f64 / n)
}

/// One thread's progress.
#[derive(Debug, Clone, Copy)]
struct Thread {
    /// When its next step starts.
    next: Ps,
    /// Accesses completed.
    done: u64,
    /// `StoreClean`: the reads of the current access are back; the
    /// writes are next.
    cleaning: bool,
    rng: u64,
}

/// A bandwidth loop: `threads` threads, each doing `accesses` accesses of
/// `size` bytes (a multiple of 64) of `kind`, at places `pattern` picks in
/// its own slice of the area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    /// Which places.
    pub pattern: Pattern,
    /// What each line gets.
    pub kind: Kind,
    /// Bytes per access.
    pub size: u64,
    /// Threads.
    pub threads: u64,
    /// Accesses per thread.
    pub accesses: u64,
}

/// The bandwidth of loop `l` in `area`: bytes moved by the CPU over the
/// time from the start to the last thread's end, in GB/s.
pub fn bandwidth(c: &mut Controller, path: CpuPath, area: Area, l: Loop) -> f64 {
    let Loop {
        pattern,
        kind,
        size,
        threads,
        accesses,
    } = l;
    let size = (size / LINE).max(1) * LINE;
    let threads = threads.max(1);
    let slice = (area.span / threads / size).max(1) * size;
    let start = c.now();
    let mut ts: Vec<Thread> = (0..threads)
        .map(|i| Thread {
            next: start,
            done: 0,
            cleaning: false,
            rng: 0x9E37_79B9_7F4A_7C15 ^ (i + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
        })
        .collect();
    let mut end = start;
    // The earliest thread still running goes next (ties: lowest).
    while let Some(k) = (0..ts.len())
        .filter(|&k| ts[k].done < accesses)
        .min_by_key(|&k| (ts[k].next, k))
    {
        let t = &mut ts[k];
        let mut rng = t.rng;
        let base = area.base + k as u64 * slice + offset(pattern, &mut rng, t.done, size, slice);
        let arrive = t.next + path.request_ps;
        let lines = size / LINE;
        let mut last = arrive;
        let write = match kind {
            Kind::Load => false,
            Kind::NtStore => true,
            Kind::StoreClean => t.cleaning,
        };
        for l in 0..lines {
            let a = base + l * LINE;
            last = last.max(if write {
                c.write(a, arrive)
            } else {
                c.read(a, arrive)
            });
        }
        let t = &mut ts[k];
        t.next = last + path.response_ps;
        if kind == Kind::StoreClean && !t.cleaning {
            // The same access again, now writing its lines back.
            t.cleaning = true;
            continue;
        }
        t.cleaning = false;
        t.rng = rng;
        t.done += 1;
        end = end.max(t.next);
    }
    let bytes = threads * accesses * size;
    let ns = (end - start) as f64 / 1000.0;
    if ns == 0.0 {
        0.0
    } else {
        bytes as f64 / ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvnvmm_config::{Method, NvmmParams};

    const DRAM: u64 = 0x8000_0000;
    const NVMM: u64 = 0xC000_0000;
    const PATH: CpuPath = CpuPath {
        request_ps: 30_000,
        response_ps: 30_000,
    };

    fn controller() -> Controller {
        let p = NvmmParams {
            method: Method::Optane,
            ..NvmmParams::default()
        };
        // A server iMC's read queues (six channels): deep enough that the
        // media, not the queue, bounds read bandwidth.
        let cfg = rvnvmm_config::ControllerConfig {
            read_queue: 384,
            ..rvnvmm_config::ControllerConfig::default()
        };
        Controller::new(
            "ddr3",
            &cfg,
            &[
                ("dram".to_string(), DRAM, 1 << 30, None),
                ("nvmm".to_string(), NVMM, 1 << 30, Some(p)),
            ],
        )
        .unwrap()
    }

    fn area(base: u64) -> Area {
        Area {
            base,
            span: 1 << 30,
        }
    }

    #[test]
    fn random_idle_reads_several_times_dram_sequential_faster() {
        let lat = |base, p| idle_read_latency(&mut controller(), PATH, area(base), p, 2000).0;
        let (dram_rand, nvmm_rand) = (lat(DRAM, Pattern::Random), lat(NVMM, Pattern::Random));
        let nvmm_seq = lat(NVMM, Pattern::Sequential);
        let ratio = nvmm_rand / dram_rand;
        assert!((3.0..=5.0).contains(&ratio), "{nvmm_rand} / {dram_rand}");
        assert!(nvmm_seq < 0.7 * nvmm_rand, "{nvmm_seq} vs {nvmm_rand}");
    }

    #[test]
    fn random_bandwidth_falls_below_256_byte_accesses() {
        let bw = |size| {
            bandwidth(
                &mut controller(),
                PATH,
                area(NVMM),
                Loop {
                    pattern: Pattern::Random,
                    kind: Kind::Load,
                    size,
                    threads: 8,
                    accesses: 500,
                },
            )
        };
        let (b64, b256) = (bw(64), bw(256));
        assert!(b64 < 0.5 * b256, "64 B {b64} GB/s, 256 B {b256} GB/s");
    }

    #[test]
    fn writes_reach_about_a_third_of_reads() {
        let bw = |kind| {
            bandwidth(
                &mut controller(),
                PATH,
                area(NVMM),
                Loop {
                    pattern: Pattern::Sequential,
                    kind,
                    size: 4096,
                    threads: 8,
                    accesses: 100,
                },
            )
        };
        let (read, write) = (bw(Kind::Load), bw(Kind::NtStore));
        let r = write / read;
        assert!((0.2..=0.5).contains(&r), "write {write} / read {read}");
    }

    #[test]
    fn same_loop_same_result() {
        let run = || {
            let mut c = controller();
            let b = bandwidth(
                &mut c,
                PATH,
                area(NVMM),
                Loop {
                    pattern: Pattern::Random,
                    kind: Kind::StoreClean,
                    size: 128,
                    threads: 4,
                    accesses: 300,
                },
            );
            (b, c.stats())
        };
        assert_eq!(run(), run());
    }
}
