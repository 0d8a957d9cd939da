//! `rvnvmm boot --sample` (docs/regions-of-interest.md, "Sampling"): the
//! first 300 million instructions of a four-hart Linux boot sampled
//! against the same instructions timed throughout, and a census (windows
//! as long as their period) that is the timed run itself. Needs
//! `scripts/setup.sh` and `make -C guest` first (`scripts/test.sh` does
//! both).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/boot_input.rs"]
mod boot_input;
#[path = "support/initramfs.rs"]
#[allow(dead_code)] // RC_LINES: these runs stop before the script.
mod initramfs;

use boot_input::boot_with_input;
use initramfs::initramfs;
use serde_json::Value;
use std::process::Output;

/// Instructions (all harts) each run stops at: the firmware and most of
/// the kernel's start.
const LIMIT: u64 = 300_000_000;

/// The longest turn of the machine scheduler (`rvnvmm_board::machine::SLICE`,
/// and the rest of the block that reaches it): a window's edges come at the
/// end of the turn that reaches them.
const TURN: u64 = 10_000 + 64;

/// `rvnvmm boot` of the initramfs up to `LIMIT` instructions with `extra`
/// options: its output and statistics (without the host's figures).
fn boot(initrd: &str, name: &str, extra: &[&str]) -> (Output, Value) {
    let path = std::env::temp_dir().join(format!(
        "rvnvmm-boot-sampling-{}-{name}.json",
        std::process::id()
    ));
    let limit = LIMIT.to_string();
    let mut args = vec![
        "--initrd",
        initrd,
        "--append",
        "console=ttyS0 quiet",
        "--max-insns",
        &limit,
        "--stats",
        path.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = boot_with_input(&args, "");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("no statistics: {}", String::from_utf8_lossy(&out.stderr)));
    std::fs::remove_file(&path).ok();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("host_seconds");
    o.remove("mips");
    (out, v)
}

#[test]
fn a_sampled_boot_estimates_the_timed_boot_within_its_bound() {
    let initrd = initramfs();
    let (o, timed) = boot(&initrd, "timed", &[]);
    // Stopped by the limit (status 124), as every run here.
    assert_eq!(
        o.status.code(),
        Some(124),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let plan = "period=10000000,detail=500000,warmup=500000";
    let (o, sampled) = boot(&initrd, "sampled", &["--sample", plan]);
    assert_eq!(
        o.status.code(),
        Some(124),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let s = &sampled["sampling"];
    let total = sampled["instructions"].as_u64().unwrap();
    assert_eq!(s["total_instructions"], total);
    assert!((LIMIT..LIMIT + TURN).contains(&total), "{total}");
    // One window at the end of every period, its edges at the end of the
    // turn that reaches them.
    let windows = s["windows"].as_array().unwrap();
    assert_eq!(windows.len() as u64, LIMIT / 10_000_000);
    for (k, w) in windows.iter().enumerate() {
        let start = w["start_instructions"].as_u64().unwrap();
        let planned = (k as u64 + 1) * 10_000_000 - 500_000;
        assert!((planned..planned + TURN).contains(&start), "{w}");
        let n = w["instructions"].as_u64().unwrap();
        assert!((500_000 - TURN..500_000 + TURN).contains(&n), "{w}");
    }
    let timed_fraction = s["timed_fraction"].as_f64().unwrap();
    assert!((0.09..0.11).contains(&timed_fraction), "{timed_fraction}");

    // The timed run's simulated time lies within the 95 % interval.
    let e = &s["estimate"];
    let (low, high) = (
        e["low_ns"].as_f64().unwrap(),
        e["high_ns"].as_f64().unwrap(),
    );
    let truth = timed["sim_time_ns"].as_f64().unwrap();
    assert!(
        low <= truth && truth <= high,
        "{truth} outside {low}..{high}: {e}"
    );
    // The sampled run itself is mostly functional: faster in simulated time.
    assert!(sampled["sim_time_ns"].as_f64().unwrap() < truth);
    assert_eq!(sampled["model_switches"], Value::Array(vec![]));

    // A census (windows as long as their period) is the timed run: every
    // statistic but the sampling's own.
    let (o, mut census) = boot(
        &initrd,
        "census",
        &["--sample", "period=100000000,detail=100000000"],
    );
    assert_eq!(o.status.code(), Some(124));
    let windows = census["sampling"]["windows"].as_array().unwrap().len();
    // The third ends at the limit: the pause there comes first.
    assert_eq!(windows, 3);
    census.as_object_mut().unwrap().remove("sampling");
    assert_eq!(census, timed);
}

#[test]
fn sampling_is_refused_with_a_fast_forward_or_on_a_functional_machine() {
    let initrd = initramfs();
    for (extra, says) in [
        (&["--fast-forward", "marker"][..], "cannot be used with"),
        (
            &["--set", "machine.model=functional"][..],
            "no timing model",
        ),
    ] {
        let mut args = vec!["--initrd", &initrd, "--sample", "period=100,detail=10"];
        args.extend(extra);
        let o = boot_with_input(&args, "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{says}: {err}");
    }
}
