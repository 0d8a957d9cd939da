//! `rvnvmm crashtest`: power failures injected at many points of a
//! program's run, each followed by a recovery program that says whether the
//! NVMM image it finds is consistent (`docs/persistence.md`).
//!
//! One run learns the program's length and the instruction counts of its
//! NVMM flushes and of the fences completing them; the crash points are
//! drawn from a seeded generator: half right before and after those events
//! (where a missing flush or fence shows), the rest anywhere. Each point
//! runs as two `rvnvmm run` child processes on its own copy of the starting
//! image, `--jobs` points at a time, in the guests' fixed view of the world
//! (`crash_runs`). With `--explore` the run is recorded once and every
//! crash state is checked instead (`crash_explore`).

use crate::crash_runs::{path_arg, read_json, GuestView, Runner, Scratch, WORK_GUEST};
use crate::error::CliError;
use crate::persistence::{NvmmRegion, CRASH_STATUS};
use crate::MachineArgs;
use clap::Args;
use rvnvmm_mem::persist::NvmmImage;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `rvnvmm crashtest` arguments.
#[derive(Args)]
pub struct CrashtestArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Crash points to test.
    #[arg(long, value_name = "N", default_value_t = 50)]
    points: usize,
    /// Seed of the crash points and of each crash's choices.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Points run at a time (default: the host's CPUs).
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// The persistence domain (overrides memory.NAME.persistence).
    #[arg(long, value_name = "adr|eadr")]
    persistence: Option<rvnvmm_config::Persistence>,
    /// The recovery program and its arguments, split at spaces: it runs on
    /// the image each crash left and exits 0 when it finds it consistent.
    #[arg(long, value_name = "PROG ARGS", required_unless_present = "explore")]
    recover: Option<String>,
    /// Look up the dynamic linker and absolute paths here first.
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// Keep the work directory (images, statistics) in DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// A variable of the guests' environment (repeatable): they get these
    /// alone, never the host's.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    envs: Vec<String>,
    /// Place a host directory or file at a guest path, as `rvnvmm run
    /// --map` (repeatable): for inputs the programs name.
    #[arg(long = "map", value_name = "GUEST=HOST")]
    maps: Vec<String>,
    /// Explore instead of sampling: record one run, then check every
    /// crash state the persistence domain allows at each ordering point
    /// (before each fence, and at the end), as images made from the
    /// record; `--points` and `--seed` are not used (docs/persistence.md).
    #[arg(long)]
    explore: bool,
    /// With --explore: every value a line took since it was last durable
    /// may be the one that persists (early write-backs, and stores to
    /// different lines persisting in any order between fences, as RVWMO
    /// allows), not only its latest.
    #[arg(long, requires = "explore")]
    reorder: bool,
    /// With --explore: the bytes that persist atomically (8: a line may be
    /// torn into 8-byte words); default the whole line.
    #[arg(long, value_name = "BYTES", requires = "explore")]
    torn: Option<u64>,
    /// With --explore: also crash after exactly N instructions of the
    /// machine (repeatable), besides the ordering points.
    #[arg(long = "at", value_name = "insns=N", value_parser = rvnvmm_runctl::parse_insns, requires = "explore")]
    at_insns: Vec<u64>,
    /// With --explore: the most crash states checked at one ordering point.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "explore")]
    max_states_per_point: usize,
    /// With --explore: the full system instead of user mode. The runs
    /// restore the `rvnvmm boot` checkpoint in DIR (taken at the shell
    /// prompt, the programs' files in reach), the program's command line
    /// and then, per crash state, the recovery's typed at its shell; their
    /// exit status is the command's (docs/persistence.md).
    #[arg(long, value_name = "DIR", requires = "explore",
          conflicts_with_all = ["sysroot", "envs", "maps"])]
    restore: Option<PathBuf>,
    /// With --restore: an ELF file of a program run in the guest, whose
    /// PCs are named from its DWARF and symbols (repeatable); loaded at the
    /// addresses it links (a static or non-PIE program), or with @BASE
    /// (hex) added to them. Kernel PCs are named from the System.map
    /// beside the checkpoint's kernel.
    #[arg(long = "symbols", value_name = "ELF[@BASE]", requires = "restore")]
    symbols: Vec<String>,
    /// The program under test, then its arguments (with --restore: the
    /// command line typed at the guest's shell).
    #[arg(value_name = "PROGRAM [ARGS]", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

/// What one crash point gave.
#[derive(Clone, Debug)]
struct PointResult {
    insns: u64,
    pc: String,
    hart: u64,
    lost_lines: Vec<String>,
    in_flight: (u64, u64),
    /// `None`: passed; otherwise why it failed.
    failure: Option<String>,
}

/// A splitmix64 step.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An event of the learning run: `k` instructions had retired before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    k: u64,
    /// Flushes a fence completed (0 for a flush).
    completed: u64,
}

/// Parses the lines of `--persist-events` (`K flush`, `K fence N`).
fn parse_events(text: &str) -> Vec<Event> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let k = w.next()?.parse().ok()?;
            let completed = match w.next()? {
                "fence" => w.next()?.parse().ok()?,
                _ => 0,
            };
            Some(Event { k, completed })
        })
        .collect()
}

/// `n` distinct crash points in `[1, len)` (a point `p` crashes after `p`
/// instructions). A quarter at most right before fences completing
/// several flushes (the crashes where those flushes may reach NVMM in any
/// order), up to half in all right before or after any flush or fence
/// (`k` and `k + 1`), the rest uniform. Sorted.
fn pick_points(n: usize, len: u64, events: &[Event], seed: u64) -> Vec<u64> {
    let mut rng = seed;
    let mut out = std::collections::BTreeSet::new();
    if len < 2 {
        return Vec::new();
    }
    let want = n.min((len - 1) as usize);
    let in_run = |p: &u64| *p >= 1 && *p < len;
    let distinct = |v: Vec<u64>| -> Vec<u64> {
        let set: std::collections::BTreeSet<u64> = v.into_iter().filter(in_run).collect();
        set.into_iter().collect()
    };
    let multi = distinct(
        events
            .iter()
            .filter(|e| e.completed >= 2)
            .map(|e| e.k)
            .collect(),
    );
    let near = distinct(events.iter().flat_map(|e| [e.k, e.k + 1]).collect());
    for (pool, upto) in [(&multi, want / 4), (&near, want / 2)] {
        let target = upto.max(out.len());
        let mut left: Vec<u64> = pool.iter().copied().filter(|p| !out.contains(p)).collect();
        while out.len() < target && !left.is_empty() {
            let i = (splitmix(&mut rng) % left.len() as u64) as usize;
            out.insert(left.swap_remove(i));
        }
    }
    while out.len() < want {
        out.insert(1 + splitmix(&mut rng) % (len - 1));
    }
    out.into_iter().collect()
}

/// Runs `rvnvmm crashtest`; returns the exit status (1 if a point failed).
pub fn main(a: CrashtestArgs) -> Result<i32, CliError> {
    if a.points == 0 {
        return Err(CliError::Usage("--points must be at least 1".into()));
    }
    let recover: Vec<String> = a
        .recover
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .map(String::from)
        .collect();
    if recover.is_empty() && a.recover.is_some() {
        return Err(CliError::Usage("--recover names no program".into()));
    }
    if let Some(t) = a.torn {
        if !t.is_power_of_two() || t == 0 {
            return Err(CliError::Usage(format!(
                "--torn wants a power of two number of bytes, got {t}"
            )));
        }
    }
    for kv in &a.envs {
        if kv.split_once('=').is_none_or(|(k, _)| k.is_empty()) {
            return Err(CliError::Usage(format!(
                "--env wants KEY=VALUE, got '{kv}'"
            )));
        }
    }
    let mut view = GuestView {
        maps: a
            .maps
            .iter()
            .map(|m| {
                rvnvmm_user::fs::Map::parse(m)
                    .map(|m| format!("{}={}", m.guest, m.host.display()))
                    .map_err(|e| CliError::Usage(e.to_string()))
            })
            .collect::<Result<_, _>>()?,
        envs: a.envs.clone(),
        placed: Vec::new(),
    };
    let (command, recover) = match (&a.restore, recover.is_empty()) {
        // Guest paths typed at the guest's shell.
        (Some(_), _) => (a.command.clone(), recover),
        (None, true) => (view.place(&a.command)?, recover),
        (None, false) => (view.place(&a.command)?, view.place(&recover)?),
    };
    if let Some(dir) = &a.restore {
        if !dir.join("manifest.json").is_file() {
            return Err(CliError::Usage(format!(
                "--restore {}: not a checkpoint (no manifest.json): take one with `rvnvmm boot \
                 --checkpoint-at marker --checkpoint-to DIR` at the guest's shell",
                dir.display()
            )));
        }
    }
    let mut machine = a.machine.clone();
    let cfg = crate::load_config(&machine)?;
    let region =
        NvmmRegion::of(&cfg)?.ok_or(CliError::Machine(crate::error::MachineLacks::Nvmm))?;
    if let Some(p) = a.persistence {
        machine
            .sets
            .push(format!("memory.{}.persistence={p}", region.name));
    }
    let persistence = match a.persistence {
        Some(p) => p,
        None => {
            cfg.memory.regions[&region.name]
                .nvmm
                .as_ref()
                .expect("NVMM region")
                .persistence
        }
    };
    let start: Option<&NvmmImage> = region.image.as_ref();
    let work = match &a.keep {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("rvnvmm-crashtest-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work).map_err(|e| {
        CliError::Usage(format!(
            "cannot create the work directory {}: {e}",
            work.display()
        ))
    })?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Usage(format!("cannot find the rvnvmm executable: {e}")))?;
    view.maps.push(format!("{WORK_GUEST}={}", work.display()));
    let scratch = Scratch::new();
    let runner = Runner {
        exe,
        view,
        machine,
        region: region.name.clone(),
        sysroot: a.sysroot.clone(),
        start,
        work: work.clone(),
        scratch: scratch.as_ref().map(|s| s.0.clone()),
        system: a.restore.clone(),
    };

    if a.explore {
        let opts = crate::crash_explore::Options {
            reorder: a.reorder,
            torn: a.torn,
            at_insns: a.at_insns.clone(),
            max_states: a.max_states_per_point.max(2),
            jobs: a
                .jobs
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                .max(1),
            persistence,
            symbols: a.symbols.clone(),
        };
        let status = crate::crash_explore::run(&runner, &opts, &command, &recover);
        if a.keep.is_none() {
            let _ = std::fs::remove_dir_all(&work);
        }
        return status;
    }

    // The learning run.
    let learn_img = work.join("learn.img");
    runner.fresh_image(&learn_img)?;
    let events_file = work.join("events.txt");
    let stats_file = work.join("learn.json");
    let options = [
        "--persist-events".to_string(),
        path_arg(&events_file),
        "--stats".into(),
        path_arg(&stats_file),
    ];
    runner.learning_run(&learn_img, &options, &command, "learns its length")?;
    let stats = read_json(&stats_file)?;
    let len = stats["instructions"].as_u64().unwrap_or(0);
    let events = parse_events(
        &std::fs::read_to_string(&events_file)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", events_file.display())))?,
    );
    let points = pick_points(a.points, len, &events, a.seed);
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, points.len().max(1));

    let results: Mutex<Vec<Option<Result<PointResult, CliError>>>> =
        Mutex::new((0..points.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let terminal = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= points.len() {
                    break;
                }
                let mut crash_seed = a.seed ^ (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
                let crash_seed = splitmix(&mut crash_seed);
                let r = runner.point(i, points[i], crash_seed, &command, &recover);
                if matches!(&r, Ok(p) if p.failure.is_some()) || r.is_err() {
                    failed.fetch_add(1, Ordering::SeqCst);
                }
                results.lock().expect("no worker panics")[i] = Some(r);
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                if terminal {
                    let mut err = std::io::stderr().lock();
                    let _ = write!(
                        err,
                        "\r\x1b[Kcrashtest: {d}/{} points, {} failed, {:.0} s",
                        points.len(),
                        failed.load(Ordering::SeqCst),
                        started.elapsed().as_secs_f64()
                    );
                    let _ = err.flush();
                }
            });
        }
    });
    if terminal {
        eprint!("\r\x1b[K");
    }
    let results = results_into(results)?;
    if a.keep.is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
    let fails: Vec<&PointResult> = results.iter().filter(|r| r.failure.is_some()).collect();
    println!(
        "crashtest: {}: {} crash points (seed {}, persistence {persistence}, {len} instructions, {} flush and fence events): {} passed, {} failed",
        command.join(" "),
        results.len(),
        a.seed,
        events.len(),
        results.len() - fails.len(),
        fails.len()
    );
    for f in &fails {
        let lost = if f.lost_lines.is_empty() {
            "no lines lost".to_string()
        } else {
            format!("lost lines {}", f.lost_lines.join(" "))
        };
        println!(
            "  FAIL at {} instructions (hart {} pc {}): {lost}; in flight {} kept, {} lost; {}",
            f.insns,
            f.hart,
            f.pc,
            f.in_flight.0,
            f.in_flight.1,
            f.failure.as_deref().unwrap_or("")
        );
    }
    Ok(if fails.is_empty() { 0 } else { 1 })
}

fn results_into(
    m: Mutex<Vec<Option<Result<PointResult, CliError>>>>,
) -> Result<Vec<PointResult>, CliError> {
    m.into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|r| r.expect("every point ran"))
        .collect()
}

impl Runner<'_> {
    /// One crash point: a fresh image, the run to the crash, the recovery.
    fn point(
        &self,
        i: usize,
        insns: u64,
        seed: u64,
        command: &[String],
        recover: &[String],
    ) -> Result<PointResult, CliError> {
        let img = self.work.join(format!("point-{i}.img"));
        let stats = self.work.join(format!("point-{i}.json"));
        self.fresh_image(&img)?;
        let mut args = vec![
            "--crash-at".to_string(),
            format!("insns={insns}"),
            "--crash-seed".into(),
            seed.to_string(),
            "--stats".into(),
            path_arg(&stats),
            "--".into(),
        ];
        args.extend(command.iter().cloned());
        let out = self.run(&img, &args)?;
        if out.status.code() != Some(CRASH_STATUS) {
            return Err(CliError::Usage(format!(
                "the run to crash point {insns} ended with {} instead of the crash (is the program deterministic?):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        let crash = read_json(&stats)?["crash"].clone();
        let mut r = PointResult {
            insns,
            pc: crash["pc"].as_str().unwrap_or("?").to_string(),
            hart: crash["hart"].as_u64().unwrap_or(0),
            lost_lines: crash["lost_lines"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .filter_map(|l| l.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            in_flight: (
                crash["in_flight_kept"].as_u64().unwrap_or(0),
                crash["in_flight_lost"].as_u64().unwrap_or(0),
            ),
            failure: None,
        };
        r.failure = self.recovery(&img, &[], recover)?;
        let _ = std::fs::remove_file(&img);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_distinct_in_range_and_seeded() {
        let ev = |k, completed| Event { k, completed };
        let events = [ev(100, 0), ev(200, 3), ev(300, 1)];
        let p = pick_points(20, 1000, &events, 7);
        assert_eq!(p.len(), 20);
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        assert!(p.iter().all(|&x| (1..1000).contains(&x)));
        // The fence of three flushes, then every point near the events.
        for k in [100, 101, 200, 201, 300, 301] {
            assert!(p.contains(&k), "{k} in {p:?}");
        }
        assert_eq!(pick_points(20, 1000, &events, 7), p);
        assert_ne!(pick_points(20, 1000, &events, 8), p);
        // Before the multi-flush fence first when points are few.
        assert_eq!(pick_points(4, 1000, &events, 1)[..1], [200]);
        // No more than the run has.
        assert_eq!(pick_points(50, 10, &[], 1).len(), 9);
        assert!(pick_points(5, 1, &[], 1).is_empty());
    }

    #[test]
    fn events_parse() {
        let e = parse_events("5 flush\n9 fence 2\nbad\n");
        assert_eq!(
            e,
            [Event { k: 5, completed: 0 }, Event { k: 9, completed: 2 }]
        );
    }
}
