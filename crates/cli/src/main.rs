//! `rvnvmm`: the command-line front end.

mod artefacts;
mod bench;
mod bench_boot;
mod bench_common;
mod bench_loaded;
mod bench_pm;
mod boot_command;
mod checkpoint;
mod crash_explore;
mod crash_runs;
mod crashtest;
mod error;
mod gdb;
mod microbench;
mod output;
mod page_heat;
mod persistence;
mod progress;
mod roi;
mod run_checkpoint;
mod stats;

use clap::{Args, Parser, Subcommand};
use error::{CliError, MachineLacks};
use rvnvmm_config::{Config, ConfigError};
use rvnvmm_hart::HartConfig;
use rvnvmm_user::{ExitKind, MemoryNode, Options, Process};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rvnvmm",
    version,
    about = "RISC-V emulator with DRAM + non-volatile main memory"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a riscv64 Linux program in user mode (syscall emulation).
    Run(RunArgs),
    /// Boot OpenSBI and Linux on the full-system board (`docs/full-system.md`).
    Boot(boot_command::BootArgs),
    /// Built-in benchmarks: `speed` (MIPS beside qemu-riscv64), `boot` (the full system beside qemu-system-riscv64) and the papers' microbenchmarks (`locality`, `banks`, `bandwidth`, `pm`).
    Bench(bench::BenchArgs),
    /// Print the effective configuration as TOML.
    Config(MachineArgs),
    /// Inject power failures at many points of a program's run and check
    /// each image with a recovery program (`docs/persistence.md`).
    Crashtest(crashtest::CrashtestArgs),
}

/// Options that choose and adjust the machine.
#[derive(Args, Clone, Default)]
struct MachineArgs {
    /// Machine config: a file, or the name of one in configs/ (default freedom-u500).
    #[arg(long, value_name = "FILE|NAME")]
    config: Option<String>,
    /// Override one config key, e.g. --set machine.harts=2 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Write statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Also write the statistics of every forked child process, each to
    /// FILE.PID (by default only the process started here writes FILE).
    #[arg(long, requires = "stats")]
    stats_children: bool,
    /// Record what reached every page (line reads and writes at its memory
    /// node, L1 misses), by physical and by virtual page, in windows of
    /// simulated time, into FILE (docs/page-heat.md; timing model).
    #[arg(long, value_name = "FILE", conflicts_with = "checkpoint_at")]
    page_heat: Option<PathBuf>,
    /// The page heat's window in nanoseconds of simulated time.
    #[arg(long, value_name = "NS", requires = "page_heat",
          default_value_t = rvnvmm_heat::DEFAULT_WINDOW_NS)]
    page_heat_window: u64,
    /// Look up the dynamic linker and absolute paths here first (like qemu's -L).
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// Confine every guest path inside DIR.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Number of harts (overrides machine.harts).
    #[arg(long)]
    harts: Option<u32>,
    /// Set a guest environment variable (repeatable); otherwise the host's is inherited.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    envs: Vec<String>,
    /// Start the guest with an empty environment (then only --env's
    /// variables) instead of the host's.
    #[arg(long)]
    clean_env: bool,
    /// Place the host directory or file HOST at the guest path GUEST
    /// (repeatable; as a bind mount, the innermost wins): a program,
    /// its inputs and its working directory get the same guest names
    /// wherever they lie on the host. The program itself may be named by
    /// its GUEST path.
    #[arg(long = "map", value_name = "GUEST=HOST")]
    maps: Vec<String>,
    /// The guest's working directory at the start, a guest path (default:
    /// the host's, or / under --root).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Stop after about N instructions.
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Cut the power after N instructions (all harts) or when the next hart
    /// to run has reached NS of simulated time: the NVMM image keeps what
    /// reached the persistence domain, and rvnvmm exits with status 125.
    #[arg(long, value_name = "insns=N|time=NS", value_parser = rvnvmm_runctl::parse_stop_at)]
    crash_at: Option<rvnvmm_runctl::StopAt>,
    /// Seed of the choices a crash makes (which flushes in flight survive).
    #[arg(long, value_name = "S", default_value_t = 0)]
    crash_seed: u64,
    /// Write the instruction counts of the NVMM flushes and of the fences
    /// completing them to FILE (`rvnvmm crashtest` picks crash points by them).
    #[arg(long, value_name = "FILE", hide = true)]
    persist_events: Option<PathBuf>,
    /// Record every write to the NVMM region and every flush and fence,
    /// each with the hart and PC behind it, to FILE: the trace `rvnvmm
    /// crashtest --explore` enumerates crash states from
    /// (docs/persistence.md).
    #[arg(long, value_name = "FILE")]
    persist_trace: Option<PathBuf>,
    /// Write the changes in FILE over the NVMM image once it is read
    /// (repeatable, applied in order); the image file is then left as it
    /// was. The crash states of `rvnvmm crashtest --explore`.
    #[arg(long = "image-overlay", value_name = "FILE", hide = true)]
    image_overlays: Vec<PathBuf>,
    /// Run in the functional model until N instructions or the program's
    /// `switch timing` marker, then in the machine's timing model, with the
    /// statistics counting from that switch (docs/regions-of-interest.md).
    #[arg(long, value_name = "insns=N|marker", value_parser = rvnvmm_runctl::parse_fast_forward)]
    fast_forward: Option<rvnvmm_runctl::FastForward>,
    /// Reset the statistics after exactly N instructions (all threads), as
    /// `--fast-forward insns=N` does at its switch.
    #[arg(long, value_name = "insns=N", value_parser = rvnvmm_runctl::parse_insns)]
    reset_stats_at: Option<u64>,
    /// Sample the run: in every period of N instructions, W instructions of
    /// warm-up then a window of M measured in the timing model, the rest
    /// functional; the statistics JSON's `sampling` estimates the whole
    /// run's simulated time with a 95 % bound (docs/regions-of-interest.md).
    #[arg(long, value_name = "period=N,detail=M[,warmup=W]", value_parser = rvnvmm_runctl::parse_sample,
          conflicts_with_all = ["fast_forward", "reset_stats_at"])]
    sample: Option<rvnvmm_runctl::Sampling>,
    /// Take a checkpoint of the process after exactly N instructions (all
    /// threads), when the next thread to run has reached NS of simulated
    /// time, or at the program's first `checkpoint` marker, into
    /// --checkpoint-to DIR; the run goes on (docs/checkpoints.md). Without
    /// --checkpoint-to: the same restore point, nothing written (the run
    /// through).
    #[arg(long, value_name = "insns=N|time=NS|marker", value_parser = checkpoint::parse_run_point,
          conflicts_with_all = ["crash_at", "gdb", "sample", "persist_events", "persist_trace"])]
    checkpoint_at: Option<checkpoint::RunPoint>,
    /// The directory the checkpoint is written to (created; a checkpoint
    /// there is replaced).
    #[arg(long, value_name = "DIR", requires = "checkpoint_at")]
    checkpoint_to: Option<PathBuf>,
    /// End the run (exit status 0) once the checkpoint is written.
    #[arg(long, requires = "checkpoint_to")]
    exit_after_checkpoint: bool,
    /// Build the process from the checkpoint in DIR (the program, its
    /// arguments, environment, --root and --sysroot are the checkpoint's)
    /// and run on. The machine (--config, --set) must have the
    /// checkpoint's memory map, harts and ISA; its timing configuration
    /// may differ.
    #[arg(long, value_name = "DIR",
          conflicts_with_all = ["command", "sysroot", "root", "envs", "clean_env", "maps", "cwd", "crash_at", "gdb", "sample", "persist_events", "persist_trace", "image_overlays"])]
    restore: Option<PathBuf>,
    /// Print every retired instruction (hart, PC, disassembly) to stderr.
    #[arg(long)]
    trace: bool,
    /// Execution engine: `jit` (the default: hot blocks translated to
    /// x86-64 code where the host is x86-64 and the run allows it), or
    /// `interp` (the interpreter only, the reference); the same results
    /// either way.
    #[arg(long, value_name = "interp|jit", default_value = "jit")]
    engine: rvnvmm_hart::Engine,
    /// No progress line on a terminal (it appears after two seconds).
    #[arg(long)]
    no_progress: bool,
    /// Wait for gdb on 127.0.0.1:PORT before the first instruction and let it
    /// debug the program (0: any free port, printed on stderr).
    #[arg(long, value_name = "PORT")]
    gdb: Option<u16>,
    /// The riscv64 ELF to run, then its arguments: everything from the
    /// program on is the guest's (`rvnvmm run PROG --help` passes --help on).
    #[arg(value_name = "PROGRAM [ARGS]", required_unless_present = "restore", num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE; a Unix command (and a guest program whose
    // SIGPIPE is at its default) dies of it instead, which also keeps
    // `rvnvmm ... | head` from failing on a closed pipe.
    // SAFETY: resetting a signal disposition before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Run(a) => run(a),
        Cmd::Boot(b) => boot_command::main(b).map_err(CliError::from),
        Cmd::Bench(b) => bench::main(b),
        Cmd::Crashtest(c) => crashtest::main(c),
        Cmd::Config(m) => load_config(&m).map_err(CliError::from).map(|c| {
            print!("{}", c.to_toml_string());
            0
        }),
    };
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(msg) => {
            eprintln!("rvnvmm: {msg}");
            ExitCode::from(2)
        }
    }
}

pub(crate) fn load_config(m: &MachineArgs) -> Result<Config, ConfigError> {
    let cfg = Config::load(m.config.as_deref(), &m.sets)?;
    let warnings = cfg.validate()?;
    for w in warnings {
        eprintln!("rvnvmm: warning: {w}");
    }
    Ok(cfg)
}

/// Builds the user-mode process options from the config.
pub(crate) fn user_options(
    cfg: &Config,
    program: String,
    args: Vec<String>,
) -> Result<Options, CliError> {
    let nodes: Vec<MemoryNode> = cfg
        .memory
        .nodes()
        .into_iter()
        .map(|n| MemoryNode {
            name: n.name.to_string(),
            id: n.id,
            base: n.region.base,
            size: n.region.size,
            nvmm: n.region.kind() == rvnvmm_config::RegionKind::Nvmm,
        })
        .collect();
    if !nodes.iter().any(|n| !n.nvmm) {
        return Err(MachineLacks::Dram.into());
    }
    Ok(Options {
        program,
        args,
        env: std::env::vars().map(|(k, v)| format!("{k}={v}")).collect(),
        root: None,
        sysroot: None,
        maps: Vec::new(),
        cwd: None,
        harts: cfg.machine.harts as usize,
        threads_per_core: cfg.machine.threads_per_core as usize,
        hart: HartConfig {
            clock_hz: cfg.machine.clock_hz,
            timebase_hz: 10_000_000,
            cflush_user: cfg.cflush.allow_user,
            costs: cfg.core_costs(),
            isa: cfg.extensions()?,
            misaligned_fast: cfg.machine.misaligned == rvnvmm_config::Misaligned::Fast,
            engine: rvnvmm_hart::Engine::Interp,
            call_stacks: false,
        },
        nodes,
        numa_distances: rvnvmm_memsys::NumaNodes::measure(cfg)?.matrix(),
        heap_on_nvmm: cfg.user.heap == rvnvmm_config::RegionKind::Nvmm,
        pmem_dir: (!cfg.user.pmem_dir.is_empty()).then(|| cfg.user.pmem_dir.clone()),
        stack_size: cfg.user.stack_size,
        pages: cfg.user.pages,
        max_insns: None,
        crash_at: None,
        trace: false,
        epoch_secs: 1_767_225_600, // 2026-01-01T00:00:00Z
        quantum: 10_000,
        time_slice_ns: cfg.user.time_slice_ns,
    })
}

/// The user-mode process for `opts` on machine `cfg`, with the memory-system
/// model attached when the machine is timed.
pub(crate) fn new_process(cfg: &Config, opts: Options) -> Result<Process, CliError> {
    let mut process = Process::new(opts)?;
    process = process.with_control_pages(rvnvmm_memsys::control::ControlPage::pages(cfg));
    Ok(match cfg.machine.model {
        rvnvmm_config::Model::Timing => {
            let memsys = rvnvmm_memsys::MemorySystem::for_machine(cfg)?;
            process.with_memory_model(Box::new(memsys))
        }
        rvnvmm_config::Model::Functional => process,
    })
}

fn run(mut a: RunArgs) -> Result<i32, CliError> {
    // Absolute: the guest's chdir moves the emulator's working directory.
    for dir in [
        &mut a.checkpoint_to,
        &mut a.restore,
        &mut a.sysroot,
        &mut a.root,
    ]
    .into_iter()
    .flatten()
    {
        if let Ok(abs) = std::path::absolute(&*dir) {
            *dir = abs;
        }
    }
    let mut machine = a.machine.clone();
    if let Some(h) = a.harts {
        machine.sets.push(format!("machine.harts={h}"));
    }
    let cfg = load_config(&machine)?;
    let restored = a
        .restore
        .as_deref()
        .map(|dir| run_checkpoint::read(&cfg, dir))
        .transpose()?;
    let program = match &restored {
        Some(r) => r.program.clone(),
        None => a.command[0].clone(),
    };
    let argv = a.command.clone();
    let mut opts = user_options(&cfg, program.clone(), argv)?;
    if a.clean_env {
        opts.env.clear();
    }
    for spec in &a.maps {
        opts.maps
            .push(rvnvmm_user::fs::Map::parse(spec).map_err(|e| CliError::Usage(e.to_string()))?);
    }
    opts.cwd = a.cwd.clone();
    for kv in &a.envs {
        let key = kv.split('=').next().unwrap_or("");
        if !kv.contains('=') || key.is_empty() {
            return Err(CliError::Usage(format!(
                "--env wants KEY=VALUE, got '{kv}'"
            )));
        }
        opts.env.retain(|e| e.split('=').next() != Some(key));
        opts.env.push(kv.clone());
    }
    if let Some(s) = &a.sysroot {
        if !s.is_dir() {
            return Err(CliError::NotADirectory {
                option: "--sysroot",
                path: s.clone(),
            });
        }
    }
    if let Some(r) = &a.root {
        if !r.is_dir() {
            return Err(CliError::NotADirectory {
                option: "--root",
                path: r.clone(),
            });
        }
    }
    // Before the run, not after it: a run can take hours.
    let stats_out = a
        .stats
        .as_deref()
        .map(|p| output::OutputFile::check("stats", p))
        .transpose()?;
    opts.sysroot = a.sysroot.clone();
    opts.root = a.root.clone();
    opts.max_insns = a.max_insns;
    opts.crash_at = a.crash_at;
    opts.trace = a.trace;
    opts.hart.engine = a.engine;
    if a.persist_trace.is_some() {
        // The trace names call sites from the harts' shadow call stacks,
        // which the interpreter keeps.
        opts.hart.call_stacks = true;
        opts.hart.engine = rvnvmm_hart::Engine::Interp;
    }
    let events_out = a
        .persist_events
        .as_deref()
        .map(|p| output::OutputFile::check("persistence events", p))
        .transpose()?;
    let trace_out = a
        .persist_trace
        .as_deref()
        .map(|p| output::OutputFile::check("persistence trace", p))
        .transpose()?;
    let nvmm = persistence::NvmmRegion::of(&cfg)?;
    let tracks = a.crash_at.is_some() || events_out.is_some() || trace_out.is_some();
    if nvmm.is_none() && (tracks || !a.image_overlays.is_empty()) {
        return Err(MachineLacks::Nvmm.into());
    }
    let started = std::time::Instant::now();
    let mut process = match &restored {
        Some(r) => {
            if !cfg.user.pmem_dir.is_empty() {
                return Err(CliError::Usage(
                    "--restore cannot mount user.pmem_dir (its table is not in checkpoints yet)"
                        .into(),
                ));
            }
            run_checkpoint::restored_process(&cfg, opts.clone(), r, None, a.fast_forward)?
        }
        None => new_process(&cfg, opts.clone())?,
    };
    if let (Some(n), None) = (&nvmm, &restored) {
        n.load(&mut process)?;
        n.apply_overlays(&a.image_overlays, |at, bytes| {
            process.write_nvmm(at, bytes);
        })
        .map_err(CliError::Usage)?;
        if tracks {
            let mut domain = n.domain();
            if events_out.is_some() {
                domain.record_events();
            }
            if trace_out.is_some() {
                domain.record_trace();
            }
            process.track_persistence(domain);
        }
    }
    if let (Some(until), None) = (a.fast_forward, &restored) {
        process.fast_forward(until).map_err(CliError::Usage)?;
    }
    if let Some(n) = a.reset_stats_at {
        process.reset_stats_at(n);
    }
    if let Some(plan) = a.sample {
        process.sample(plan).map_err(CliError::Usage)?;
    }
    // After the image and the domain: the directory's table is read from
    // the image, and a new one is written back to the domain.
    if restored.is_none() {
        process.mount_pmem_dir()?;
    }
    if let Some(path) = &a.page_heat {
        let recorder =
            page_heat::recorder(&cfg, path, a.page_heat_window).map_err(CliError::Usage)?;
        process = process.with_page_heat(recorder);
    }
    let guest = stats::guest_json(&process.guest_start());
    let mut points = run_checkpoint::Points::new(&a);
    points.arm(&mut process);
    if let Some(port) = a.gdb {
        process = process.with_gdb(gdb::wait_for_gdb(port)?);
    }
    let line = progress::Progress::on_terminal(a.max_insns)
        .filter(|_| !a.no_progress && !a.trace && a.gdb.is_none())
        .map(|p| std::sync::Arc::new(std::sync::Mutex::new(p)));
    if let Some(line) = &line {
        let line = line.clone();
        process = process.with_progress(move |insns, ns| {
            if let Ok(mut p) = line.lock() {
                p.update(insns, ns);
            }
        });
    }
    let outcome = loop {
        let outcome = process.run();
        let stopped = match outcome {
            Ok(o) if o.exit == ExitKind::Checkpoint => o,
            other => break other,
        };
        // A restore point: save, write if asked, rebuild.
        match points.restore_point(&cfg, &opts, process, stopped, a.fast_forward)? {
            run_checkpoint::AfterPoint::Goes(p) => process = *p,
            run_checkpoint::AfterPoint::Ends(p, o) => {
                process = *p;
                break Ok(*o);
            }
        }
        if let Some(line) = &line {
            let line = line.clone();
            process = process.with_progress(move |insns, ns| {
                if let Ok(mut p) = line.lock() {
                    p.update(insns, ns);
                }
            });
        }
    };
    if let Some(p) = line.as_ref().and_then(|l| l.lock().ok()).as_mut() {
        p.finish();
    }
    let outcome = outcome?;
    if let Some(e) = &outcome.page_heat_error {
        eprintln!("rvnvmm: {e}");
    }
    let crash = if outcome.exit == ExitKind::Crash {
        let image = nvmm.as_ref().and_then(|n| n.image.as_ref());
        let report = process.power_fail(image, a.crash_seed)?;
        let at = persistence::CrashPoint::from(&outcome);
        eprintln!("rvnvmm: {}", persistence::crash_line(&at, &report));
        Some(persistence::crash_json(
            &at,
            &report,
            process.persistence_domain(),
            a.crash_seed,
        ))
    } else {
        // A clean end, or the guest's own death: the machine is still on.
        // A run ended at its checkpoint leaves the image as it was: the
        // checkpoint holds NVMM.
        let ended_at_checkpoint = outcome.exit == ExitKind::Checkpoint;
        let overlaid = !a.image_overlays.is_empty();
        if let (Some(n), true, false, false) = (
            &nvmm,
            outcome.is_initial_process,
            ended_at_checkpoint,
            overlaid,
        ) {
            n.save(&process)?;
        }
        None
    };
    let host_seconds = started.elapsed().as_secs_f64();
    if let (Some(out), Some(d)) = (&events_out, process.persistence_domain()) {
        if outcome.is_initial_process {
            let mut text = Vec::new();
            rvnvmm_mem::persist::write_events(&mut text, d.events()).expect("writing to memory");
            out.write(&text)?;
        }
    }
    if let (Some(out), true) = (&trace_out, outcome.is_initial_process) {
        persistence::write_trace(out, &process, outcome.instructions)?;
    }
    if let Some(out) = &stats_out {
        let target = if outcome.is_initial_process {
            Some(out.clone())
        } else if a.stats_children {
            Some(out.with_suffix(&format!(".{}", outcome.pid)))
        } else {
            None
        };
        if let Some(target) = target {
            let json = stats::to_json(
                &cfg,
                &program,
                Some(&guest),
                &outcome,
                host_seconds,
                crash.as_ref(),
            );
            target.write(json.as_bytes())?;
        }
    }
    match outcome.exit {
        ExitKind::Signal(sig) => die_by_signal(sig),
        ExitKind::InsnLimit => {
            eprintln!(
                "rvnvmm: stopped at --max-insns: {} instructions retired and the guest had not exited (exit status {INSN_LIMIT_STATUS})",
                outcome.instructions
            );
            Ok(INSN_LIMIT_STATUS)
        }
        ExitKind::Crash => Ok(persistence::CRASH_STATUS),
        ExitKind::Checkpoint => Ok(0),
        ExitKind::Code(_) => Ok(outcome.exit_status()),
    }
}

/// The exit status of a run stopped by `--max-insns` (`timeout`'s status
/// when its time runs out).
const INSN_LIMIT_STATUS: i32 = 124;

/// Ends the emulator with the guest's fatal signal, so a parent (a shell,
/// or a guest parent in another emulator process) sees how it died.
fn die_by_signal(sig: i32) -> ! {
    // SAFETY: resetting a disposition, disabling core dumps and raising a
    // signal are plain syscalls with valid arguments.
    unsafe {
        let rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &rl);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
    std::process::exit(128 + sig)
}
