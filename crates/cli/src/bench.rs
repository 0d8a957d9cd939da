//! `rvnvmm bench`: built-in benchmarks.

use clap::Args;

/// Arguments of `rvnvmm bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Which benchmark: `speed`.
    pub name: String,
}

/// Runs a benchmark.
pub fn main(b: BenchArgs) -> Result<i32, String> {
    Err(format!(
        "unknown benchmark '{}' (available: none yet in this build)",
        b.name
    ))
}
