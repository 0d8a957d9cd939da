//! Host cost of the controller model: requests per host second for a
//! random mix and for a streaming pattern.
//!
//! `cargo run --release -p rvnvmm-dram --example throughput`

use std::time::Instant;

use rvnvmm_config::Config;
use rvnvmm_dram::Controller;

fn main() {
    let cfg = Config::default();
    for (name, pattern) in [("random", 0u8), ("stream", 1u8)] {
        let mut c = Controller::from_config(&cfg, "ddr3").unwrap();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut t = 0u64;
        let n = 2_000_000u64;
        let start = Instant::now();
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = match pattern {
                0 => (0x8000_0000 + (x % (4 << 30))) & !63,
                _ => 0x8000_0000 + (i * 64) % (4 << 30),
            };
            t += 50_000 + x % 200_000;
            if x.is_multiple_of(4) {
                c.write(a, t);
            } else {
                t = c.read(a, t);
            }
        }
        c.finish();
        let s = start.elapsed().as_secs_f64();
        println!(
            "{name}: {:.2} M requests/s ({:.0} ns each)",
            n as f64 / s / 1e6,
            s / n as f64 * 1e9
        );
    }
}
