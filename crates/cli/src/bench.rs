//! `rvnvmm bench`: built-in benchmarks.
//!
//! `rvnvmm bench speed` runs a fixed set of riscv64 programs under this
//! emulator (in-process, through [`rvnvmm_user::Process`] exactly as
//! `rvnvmm run` does) and under Debian's `qemu-riscv64` in the same run, and
//! prints the guest instruction count (counted by rvnvmm), each emulator's
//! best wall time over a few runs and the MIPS that follow from them.
//!
//! Each rvnvmm measurement runs in a forked child of this process, with
//! `/dev/null` as the guest's stdin and stdout, its own working directory,
//! and the guest's process-wide host state (signal dispositions, umask,
//! cwd, descriptors) thrown away with it; the child reports its
//! instruction count through a pipe. The time is from the fork to the
//! child's reaping, as qemu's is from its spawn to its reaping.

use crate::artefacts;
use crate::bench_common::{mips, nvmm_region, qemu_version};
use crate::error::{CliError, MachineLacks, SpeedError};
use crate::MachineArgs;
use clap::{Args, Subcommand};
use rvnvmm_config::Config;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

impl SpeedError {
    /// A failed host operation, with the OS error of the last call.
    fn last_os(what: &str) -> SpeedError {
        SpeedError::Host {
            what: what.to_string(),
            source: std::io::Error::last_os_error(),
        }
    }

    /// A failed host operation, with its error.
    fn host(what: String) -> impl FnOnce(std::io::Error) -> SpeedError {
        move |source| SpeedError::Host { what, source }
    }
}

/// Arguments of `rvnvmm bench`.
#[derive(Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    which: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// Guest MIPS of rvnvmm beside qemu-riscv64 on a fixed set of programs.
    Speed(SpeedArgs),
    /// Seed 000 Fig. 9 / Tables 3-4: average latency of a stride loop over
    /// the NVMM region, STRIDE 4096 and 8192, per method, read and write.
    Locality(MicroArgs),
    /// Seed 000 Fig. 10 / Tables 5-6: average latency of a loop visiting
    /// NBANK banks round-robin, NBANK 1..6, per method, read and write.
    Banks(MicroArgs),
    /// Seed 001 Fig. 4 / §4.1: NVMM bandwidth normalised to DRAM for STRIDE
    /// 4, 32 and 8192 over 1 MiB, over a grid of added tRCD and tRP (run it
    /// with --config zc706).
    Bandwidth(BandwidthArgs),
    /// Persistent-memory measurements like Yang et al.'s LATTester, on the
    /// timing model of the NVMM region (method optane unless --method):
    /// idle read latency and bandwidth against access size and threads,
    /// each beside DRAM.
    Pm(crate::bench_pm::PmArgs),
    /// Intel MLC's loaded latency on each memory node (DRAM, NVMM, CXL):
    /// a pointer chase's latency against the bandwidth of streams beside
    /// it, with the published figures of the node's kind of memory.
    LoadedLatency(crate::bench_loaded::LoadedArgs),
    /// The full system: Debian's kernel booted to power-off with the
    /// project's initramfs under rvnvmm (functional and timing model) and
    /// under qemu-system-riscv64, alternating: wall times and ratio.
    Boot(crate::bench_boot::BootBenchArgs),
}

/// Options of `bench bandwidth`.
#[derive(Args)]
struct BandwidthArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Print one JSON object per row instead of the table.
    #[arg(long)]
    json: bool,
    /// Only this operation (read, write); default both.
    #[arg(long)]
    op: Option<String>,
    /// Added tRCD/tRP values in ns (comma-separated); every pair is run.
    #[arg(long, value_delimiter = ',', default_values_t = vec![0u32, 200, 400, 600, 800, 1000])]
    added: Vec<u32>,
    /// Bytes each loop covers (the paper: 1 MiB, twice its LLC).
    #[arg(long, default_value_t = 1 << 20)]
    size: u64,
    /// Passes over the range; the last is timed, the earlier ones leave the
    /// caches as runs before it would (1: a cold single pass).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    passes: u64,
}

/// Options of the memory microbenchmarks.
#[derive(Args)]
struct MicroArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Print one JSON object per row instead of the table.
    #[arg(long)]
    json: bool,
    /// Only this method (coarse, fine, proposed); default all three.
    #[arg(long)]
    method: Option<String>,
    /// Only this operation (read, write); default both.
    #[arg(long)]
    op: Option<String>,
    /// Bytes each loop covers (per bank for `banks`); the paper covers the
    /// whole region, whose average this approaches.
    #[arg(long, default_value_t = 16 << 20)]
    size: u64,
}

#[derive(Args)]
struct SpeedArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Print one JSON object per program instead of the table.
    #[arg(long)]
    json: bool,
    /// The qemu-riscv64 to compare with (default: $RVNVMM_QEMU, else PATH).
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
    /// Directory of the static guest programs (default: guest/build/static
    /// of the repository rvnvmm was built from).
    #[arg(long, value_name = "DIR")]
    programs: Option<PathBuf>,
    /// Runs per program and emulator; the fastest counts (default 3, or 1
    /// with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    runs: Option<u32>,
    /// Tiny workloads and one run: checks that the benchmark works, says
    /// nothing about speed.
    #[arg(long)]
    quick: bool,
    /// The execution engine rvnvmm runs the programs with (as `rvnvmm run`'s
    /// `--engine`).
    #[arg(long, value_name = "interp|jit", default_value = "jit")]
    engine: rvnvmm_hart::Engine,
    /// Add the full system's row: Debian's kernel booted on 4 harts to
    /// power-off in the same model, beside qemu-system-riscv64 (as `bench
    /// boot` measures it).
    #[arg(long)]
    boot: bool,
    /// Write the programs' inputs (the gzip row's text) into DIR and keep
    /// them, so a row can be run again outside `bench speed` (under a
    /// profiler, say); by default they go to a temporary directory removed
    /// at the end.
    #[arg(long, value_name = "DIR")]
    keep_inputs: Option<PathBuf>,
}

/// Harts of the full system's row of `bench speed --boot`.
const BOOT_HARTS: u32 = 4;
/// Instructions after which the full system's row gives up on a boot.
const BOOT_MAX_INSNS: u64 = 30_000_000_000;

/// Runs a benchmark.
pub fn main(b: BenchArgs) -> Result<i32, CliError> {
    match b.which {
        Bench::Speed(s) => speed(s),
        Bench::Locality(m) => micro(m, false),
        Bench::Banks(m) => micro(m, true),
        Bench::Bandwidth(b) => bandwidth(b),
        Bench::Pm(p) => crate::bench_pm::pm(p),
        Bench::LoadedLatency(l) => crate::bench_loaded::loaded(l),
        Bench::Boot(b) => crate::bench_boot::boot(b),
    }
}

/// NVMM bandwidth over DRAM bandwidth for every (op, stride, added tRCD,
/// added tRP): both loops run the same code, one over the first DRAM region
/// (16 MiB past its start, clear of the code) and one over the NVMM region,
/// each timed on its last pass (`--passes`, default 2): the first leaves the
/// caches as a sweep of runs on one machine does (a write pass then writes
/// back a dirty line of the pass before for every line it fills).
fn bandwidth(a: BandwidthArgs) -> Result<i32, CliError> {
    use crate::microbench::{self, Pattern};
    let ops = parse_ops(a.op.as_deref())?;
    let base_cfg = crate::load_config(&a.machine)?;
    let (nvmm_name, nvmm, ctl) = nvmm_region(&base_cfg)?;
    let (nvmm_name, nvmm) = (nvmm_name.to_string(), nvmm.clone());
    let (_, dram) = base_cfg
        .memory
        .regions_of_kind(rvnvmm_config::RegionKind::Dram)
        .next()
        .ok_or(MachineLacks::Dram)?;
    let (spec_trcd, spec_trp) = (ctl.trcd_ns, ctl.trp_ns);
    let dram_base = dram.base + (16 << 20);
    if !a.json {
        println!(
            "{:<6} {:>7} {:>10} {:>10} {:>12}",
            "op", "stride", "+tRCD ns", "+tRP ns", "NVMM/DRAM"
        );
    }
    for &op in &ops {
        for stride in [4u64, 32, 8192] {
            let pattern = |base| Pattern {
                base,
                bank_stride: 0,
                nbank: 1,
                step: stride,
                rounds: (a.size / stride).max(1),
                op,
                passes: a.passes,
            };
            let dram_ns = microbench::run(&base_cfg, &pattern(dram_base))?.avg_latency_ns;
            for &add_rcd in &a.added {
                for &add_rp in &a.added {
                    let mut sets = a.machine.sets.clone();
                    sets.push(format!(
                        "memory.{nvmm_name}.trcd_ns={}",
                        spec_trcd + add_rcd as f64
                    ));
                    sets.push(format!(
                        "memory.{nvmm_name}.trp_ns={}",
                        spec_trp + add_rp as f64
                    ));
                    let cfg = crate::load_config(&MachineArgs {
                        config: a.machine.config.clone(),
                        sets,
                    })?;
                    let nvmm_ns = microbench::run(&cfg, &pattern(nvmm.base))?.avg_latency_ns;
                    // Same bytes per access on both sides: bandwidth is the
                    // inverse of the time per access.
                    let ratio = dram_ns / nvmm_ns;
                    if a.json {
                        println!(
                            "{}",
                            serde_json::json!({
                                "bench": "bandwidth", "machine": cfg.machine.name, "op": op.as_str(), "stride": stride,
                                "added_trcd_ns": add_rcd, "added_trp_ns": add_rp, "passes": a.passes,
                                "dram_ns_per_access": dram_ns, "nvmm_ns_per_access": nvmm_ns, "ratio": ratio,
                            })
                        );
                    } else {
                        println!(
                            "{:<6} {stride:>7} {add_rcd:>10} {add_rp:>10} {ratio:>12.3}",
                            op.as_str()
                        );
                    }
                }
            }
        }
    }
    Ok(0)
}

/// Runs the locality or banks table: every (method, op, parameter) cell.
fn micro(a: MicroArgs, banks: bool) -> Result<i32, CliError> {
    use crate::microbench::{self, Pattern};
    let methods: Vec<String> = match &a.method {
        Some(m) => vec![m.clone()],
        None => vec!["coarse".into(), "fine".into(), "proposed".into()],
    };
    let ops = parse_ops(a.op.as_deref())?;
    let name = if banks { "banks" } else { "locality" };
    if !a.json {
        println!(
            "{:<10} {:<6} {:>8} {:>16} {:>10} {:>12}",
            "method",
            "op",
            if banks { "nbank" } else { "stride" },
            "avg latency ns",
            "ACT/REQ",
            "row hit rate"
        );
    }
    for method in &methods {
        let mut sets = a.machine.sets.clone();
        sets.push(format!("memory.nvmm.method={method}"));
        let cfg = crate::load_config(&MachineArgs {
            config: a.machine.config.clone(),
            sets,
        })?;
        let (_, nvmm, ctl) = nvmm_region(&cfg)?;
        let (bank_bytes, row_bytes) = bank_and_row_strides(ctl)?;
        for &op in &ops {
            let params: Vec<u64> = if banks {
                (1..=6).collect()
            } else {
                vec![4096, 8192]
            };
            for p in params {
                let pattern = if banks {
                    Pattern {
                        base: nvmm.base,
                        bank_stride: bank_bytes,
                        nbank: p,
                        step: row_bytes,
                        rounds: (a.size / row_bytes).max(1),
                        op,
                        passes: 1,
                    }
                } else {
                    Pattern {
                        base: nvmm.base,
                        bank_stride: 0,
                        nbank: 1,
                        step: p,
                        rounds: (a.size.min(nvmm.size) / p).max(1),
                        op,
                        passes: 1,
                    }
                };
                let m = microbench::run(&cfg, &pattern)?;
                let region = &m.stats["regions"][nvmm_name(&cfg)];
                let act_per_req = region["act_per_req"].as_f64().unwrap_or(f64::NAN);
                let row_hit = region["row_hit_rate"].as_f64().unwrap_or(f64::NAN);
                if a.json {
                    let key = if banks { "nbank" } else { "stride" };
                    println!(
                        "{}",
                        serde_json::json!({
                            "bench": name, "machine": cfg.machine.name, "method": method, "op": op.as_str(),
                            key: p, "accesses": m.accesses, "cycles": m.cycles, "avg_latency_ns": m.avg_latency_ns,
                            "act_per_req": act_per_req, "row_hit_rate": row_hit,
                        })
                    );
                } else {
                    println!(
                        "{method:<10} {:<6} {p:>8} {:>16.0} {act_per_req:>10.3} {row_hit:>12.3}",
                        op.as_str(),
                        m.avg_latency_ns
                    );
                }
            }
        }
    }
    Ok(0)
}

/// `--op`: both operations, or the one named.
fn parse_ops(op: Option<&str>) -> Result<Vec<crate::microbench::Op>, CliError> {
    use crate::microbench::Op;
    match op {
        None => Ok(vec![Op::Read, Op::Write]),
        Some("read") => Ok(vec![Op::Read]),
        Some("write") => Ok(vec![Op::Write]),
        Some(o) => Err(CliError::Usage(format!(
            "--op wants read or write, got '{o}'"
        ))),
    }
}

/// The name of the machine's first NVMM region.
fn nvmm_name(cfg: &rvnvmm_config::Config) -> &str {
    cfg.memory
        .regions_of_kind(rvnvmm_config::RegionKind::Nvmm)
        .next()
        .map(|(n, _)| n)
        .unwrap_or("nvmm")
}

/// From a controller's address mapping: the distance between consecutive
/// banks and between consecutive rows of one bank.
fn bank_and_row_strides(ctl: &rvnvmm_config::ControllerConfig) -> Result<(u64, u64), CliError> {
    use rvnvmm_config::AddressField;
    let layout = ctl.address_layout().map_err(CliError::AddressMapping)?;
    // Fields are listed from the most to the least significant bit.
    let mut pos = 0u32;
    let (mut bank, mut row) = (None, None);
    for f in layout.iter().rev() {
        match f.field {
            AddressField::Bank if bank.is_none() => bank = Some(pos),
            AddressField::Row if row.is_none() => row = Some(pos),
            _ => {}
        }
        pos += f.bits;
    }
    match (bank, row) {
        (Some(b), Some(r)) => Ok((1 << b, 1 << r)),
        _ => Err(MachineLacks::BankOrRowBits.into()),
    }
}

/// Bytes of the text `gzip` compresses.
const GZIP_INPUT_BYTES: usize = 4 << 20;
const GZIP_INPUT_BYTES_QUICK: usize = 64 << 10;
/// Iterations of the shell loop.
const SH_LOOP: u32 = 2000;
const SH_LOOP_QUICK: u32 = 20;

/// A busybox `sh -c` loop that stays in one process: ash builtins (`echo`,
/// `printf`, `test`/`[`, `read`, arithmetic, `case`) and redirections only.
/// Every other busybox applet would fork, and most would then `execve
/// /proc/self/exe`, which under qemu-user without binfmt_misc falls back to
/// the *host's* command of that name (rvnvmm counts a forked child's
/// instructions, qemu's plugin would not).
const SH_SCRIPT: &str = r#"n=$1; i=0; s=1; k=0
while [ $i -lt $n ]; do
  s=$(( (s * 1103515245 + 12345 + i) % 2147483648 ))
  case $((s % 3)) in 0) w=zero ;; 1) w=one ;; *) w=two ;; esac
  printf '%d %s %x\n' "$i" "$w" "$s"
  [ ${#w} -gt 3 ] && k=$((k + 1))
  i=$((i + 1))
done > loop.txt
t=0
while read -r a b c; do
  test "$b" = one && t=$((t + a))
  echo "$b:$c"
done < loop.txt
echo "k=$k t=$t"
"#;

/// One program of the set, with its arguments.
struct Workload {
    name: String,
    program: PathBuf,
    /// argv\[1..\].
    args: Vec<String>,
}

/// The best (fastest) runs of one workload.
struct Row {
    name: String,
    instructions: u64,
    runs: u32,
    rvnvmm_seconds: f64,
    qemu_seconds: f64,
}

impl Row {
    fn rvnvmm_mips(&self) -> f64 {
        mips(self.instructions, self.rvnvmm_seconds)
    }
    fn qemu_mips(&self) -> f64 {
        mips(self.instructions, self.qemu_seconds)
    }
    /// How many times longer rvnvmm took than qemu.
    fn ratio(&self) -> f64 {
        if self.qemu_seconds > 0.0 {
            self.rvnvmm_seconds / self.qemu_seconds
        } else {
            0.0
        }
    }
    fn to_json(&self, cfg: &Config) -> String {
        serde_json::json!({
            "program": self.name,
            "machine": cfg.machine.name,
            "model": cfg.machine.model.as_str(),
            "instructions": self.instructions,
            "runs": self.runs,
            "rvnvmm_seconds": self.rvnvmm_seconds,
            "rvnvmm_mips": self.rvnvmm_mips(),
            "qemu_seconds": self.qemu_seconds,
            "qemu_mips": self.qemu_mips(),
            "ratio": self.ratio(),
        })
        .to_string()
    }
    fn to_table_line(&self) -> String {
        format!(
            "{:<28} {:>10.1} M {:>9.3} {:>8.1} {:>9.3} {:>8.1} {:>9.1}x",
            self.name,
            self.instructions as f64 / 1e6,
            self.rvnvmm_seconds,
            self.rvnvmm_mips(),
            self.qemu_seconds,
            self.qemu_mips(),
            self.ratio()
        )
    }
}

fn speed(a: SpeedArgs) -> Result<i32, CliError> {
    // The functional model unless --set says otherwise: qemu models no
    // timing either, and the figures in docs/performance.md are functional.
    let mut machine = a.machine.clone();
    machine.sets.insert(0, "machine.model=functional".into());
    let cfg = crate::load_config(&machine)?;
    // Everything is found before anything runs, so a missing piece fails
    // in a second with its fix.
    let qemu = match &a.qemu {
        Some(q) if q.is_file() => q.clone(),
        Some(q) => {
            return Err(CliError::Usage(format!(
                "--qemu {} does not exist",
                q.display()
            )))
        }
        None => artefacts::qemu()?,
    };
    let program = |name: &str| match &a.programs {
        Some(d) if !d.is_dir() => Err(CliError::NotADirectory {
            option: "--programs",
            path: d.clone(),
        }),
        Some(d) if !d.join(name).is_file() => Err(CliError::Usage(format!(
            "--programs {}: no {name} in it",
            d.display()
        ))),
        Some(d) => Ok(d.join(name)),
        None => Ok(artefacts::guest_program(
            &artefacts::guest_build().join("static"),
            name,
        )?),
    };
    let bench_compute = program("bench_compute")?;
    let float_print = program("float_print")?;
    let busybox = artefacts::busybox()?;
    let runs = a.runs.unwrap_or(if a.quick { 1 } else { 3 });
    let work = match &a.keep_inputs {
        Some(dir) => WorkDir::kept(dir)?,
        None => WorkDir::temporary()?,
    };
    let text_bytes = if a.quick {
        GZIP_INPUT_BYTES_QUICK
    } else {
        GZIP_INPUT_BYTES
    };
    std::fs::write(work.path.join("input.txt"), generate_text(text_bytes)).map_err(
        SpeedError::host(format!(
            "cannot write the gzip input in {}",
            work.path.display()
        )),
    )?;
    let boot_images = if a.boot {
        Some(crate::bench_boot::BootImages::find(None, None)?)
    } else {
        None
    };
    let sh_loop = if a.quick { SH_LOOP_QUICK } else { SH_LOOP };
    let workloads = vec![
        Workload {
            name: if a.quick {
                "bench_compute (0 rounds)".into()
            } else {
                "bench_compute".into()
            },
            program: bench_compute,
            args: if a.quick { vec!["0".into()] } else { vec![] },
        },
        Workload {
            name: "float_print".into(),
            program: float_print,
            args: vec![],
        },
        Workload {
            name: format!("busybox gzip -6 ({})", size_text(text_bytes)),
            program: busybox.clone(),
            args: ["gzip", "-c", "-6", "input.txt"].map(String::from).to_vec(),
        },
        Workload {
            name: format!("busybox sh loop ({sh_loop})"),
            program: busybox,
            args: vec![
                "sh".into(),
                "-c".into(),
                SH_SCRIPT.into(),
                "sh".into(),
                sh_loop.to_string(),
            ],
        },
    ];
    // The same fixed environment for both emulators.
    let env: Vec<String> = vec!["PATH=/usr/bin:/bin".into(), "LC_ALL=C".into()];

    // Not holding the stdout lock: children are forked in between.
    let out = |line: String| {
        let mut o = std::io::stdout();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    };
    if !a.json {
        out(format!(
            "rvnvmm bench speed: machine {} ({} model), best of {runs} run{}, \
             instructions counted by rvnvmm; {}",
            cfg.machine.name,
            cfg.machine.model,
            if runs == 1 { "" } else { "s" },
            qemu_version(&qemu)
        ));
        if let Some(images) = &boot_images {
            out(format!(
                "the system row: qemu-system-riscv64, {}",
                images.qemu_version()
            ));
        }
        out(format!(
            "{:<28} {:>12} {:>9} {:>8} {:>9} {:>8} {:>10}",
            "program", "instructions", "rvnvmm s", "MIPS", "qemu s", "MIPS", "rv/qemu"
        ));
    }
    for w in &workloads {
        let row = measure(&cfg, a.engine, &qemu, w, &work.path, &env, runs)?;
        out(if a.json {
            row.to_json(&cfg)
        } else {
            row.to_table_line()
        });
    }
    if let Some(images) = &boot_images {
        let t = crate::bench_boot::measure(
            images,
            &machine,
            cfg.machine.model.as_str(),
            a.engine,
            BOOT_HARTS,
            runs,
            BOOT_MAX_INSNS,
        )?;
        let row = Row {
            name: format!("boot, {BOOT_HARTS} harts (system)"),
            instructions: t.instructions,
            runs,
            rvnvmm_seconds: t.rvnvmm_seconds,
            qemu_seconds: t.qemu_seconds,
        };
        out(if a.json {
            row.to_json(&cfg)
        } else {
            row.to_table_line()
        });
    }
    Ok(0)
}

/// Runs one workload `runs` times under each emulator, alternating.
fn measure(
    cfg: &Config,
    engine: rvnvmm_hart::Engine,
    qemu: &Path,
    w: &Workload,
    cwd: &Path,
    env: &[String],
    runs: u32,
) -> Result<Row, CliError> {
    let mut best_rv = f64::INFINITY;
    let mut best_q = f64::INFINITY;
    let mut instructions = None;
    for _ in 0..runs {
        let (n, t) = run_rvnvmm(cfg, engine, w, cwd, env)?;
        match instructions {
            None => instructions = Some(n),
            Some(m) if m != n => eprintln!(
                "rvnvmm: warning: {}: the instruction count changed between runs \
                 ({m} then {n}); runs should be deterministic",
                w.name
            ),
            Some(_) => {}
        }
        best_rv = best_rv.min(t);
        best_q = best_q.min(run_qemu(qemu, w, cwd, env)?);
    }
    Ok(Row {
        name: w.name.clone(),
        instructions: instructions.unwrap_or(0),
        runs,
        rvnvmm_seconds: best_rv,
        qemu_seconds: best_q,
    })
}

/// Runs the workload under qemu-riscv64; returns the wall time.
fn run_qemu(qemu: &Path, w: &Workload, cwd: &Path, env: &[String]) -> Result<f64, SpeedError> {
    let mut cmd = Command::new(qemu);
    cmd.arg(&w.program)
        .args(&w.args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().filter_map(|kv| kv.split_once('=')))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let t0 = Instant::now();
    let status = cmd.status().map_err(|source| SpeedError::QemuStart {
        qemu: qemu.to_path_buf(),
        source,
    })?;
    let secs = t0.elapsed().as_secs_f64();
    if !status.success() {
        return Err(SpeedError::QemuFailed {
            workload: w.name.clone(),
            program: w.program.clone(),
            status,
        });
    }
    Ok(secs)
}

/// Runs the workload under rvnvmm in a forked child; returns the
/// instruction count and the wall time.
fn run_rvnvmm(
    cfg: &Config,
    engine: rvnvmm_hart::Engine,
    w: &Workload,
    cwd: &Path,
    env: &[String],
) -> Result<(u64, f64), CliError> {
    // The guest sees the program at /bench/NAME and its working directory
    // at /work wherever they lie on the host: the same stack, and so the
    // same instruction count, on every host.
    let name = w
        .program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let program = format!("/bench/{name}");
    let map = |guest: &str, host: &Path| {
        rvnvmm_user::fs::Map::new(guest, host).map_err(|e| CliError::Usage(e.to_string()))
    };
    let mut argv = vec![program.clone()];
    argv.extend(w.args.iter().cloned());
    let mut opts = crate::user_options(cfg, program.clone(), argv)?;
    opts.maps = vec![map(&program, &w.program)?, map("/work", cwd)?];
    opts.cwd = Some("/work".into());
    opts.env = env.to_vec();
    opts.hart.engine = engine;

    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(SpeedError::last_os("pipe").into());
    }
    // SAFETY: both descriptors were just created and are owned here only.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    let t0 = Instant::now();
    // SAFETY: this process is single-threaded (the benchmark starts no
    // threads), so the child may go on running ordinary Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(SpeedError::last_os("fork").into());
    }
    if pid == 0 {
        drop(rd);
        child(cfg, opts, cwd, wr);
    }
    drop(wr);
    let mut report = String::new();
    let read = std::fs::File::from(rd).read_to_string(&mut report);
    let mut status = 0;
    // SAFETY: waiting for our own child with a valid status pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(SpeedError::last_os("waitpid").into());
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    read.map_err(SpeedError::host(
        "reading the benchmark child's report".to_string(),
    ))?;
    let first = report.lines().next().unwrap_or("");
    if let Some(msg) = first.strip_prefix("error ") {
        return Err(SpeedError::Child {
            workload: w.name.clone(),
            message: msg.to_string(),
        }
        .into());
    }
    let parsed = first.strip_prefix("done ").and_then(|r| {
        let (n, st) = r.split_once(' ')?;
        Some((n.parse::<u64>().ok()?, st.parse::<i32>().ok()?))
    });
    match parsed {
        Some((n, 0)) if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 => Ok((n, secs)),
        Some((_, st)) if st != 0 => Err(SpeedError::GuestFailed {
            workload: w.name.clone(),
            program: w.program.clone(),
            status: st,
        }
        .into()),
        _ => Err(SpeedError::NoReport {
            workload: w.name.clone(),
            wait_status: status,
        }
        .into()),
    }
}

/// The forked child: runs the guest with stdin and stdout on /dev/null and
/// writes `done INSNS STATUS` or `error MESSAGE` to `report`: the
/// instructions of the whole process tree if the guest forked. A process
/// the guest forks returns here too, and ends without a word.
fn child(cfg: &Config, opts: rvnvmm_user::Options, cwd: &Path, report: OwnedFd) -> ! {
    use std::os::fd::AsRawFd;
    let report_fd = report.as_raw_fd();
    let mut report = std::fs::File::from(report);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        redirect_stdio(cwd)?;
        let mut p = crate::new_process(cfg, opts)?;
        p.keep_fd(report_fd);
        Ok::<_, CliError>(p.run()?)
    }));
    let (line, code) = match result {
        // SAFETY: ends a process of the guest's tree quietly.
        Ok(Ok(o)) if !o.is_initial_process => unsafe { libc::_exit(o.exit_status()) },
        Ok(Ok(o)) => {
            let n = o
                .processes
                .as_ref()
                .map_or(o.instructions, |t| t.instructions);
            (format!("done {n} {}\n", o.exit_status()), 0)
        }
        Ok(Err(e)) => (format!("error {}\n", e.to_string().replace('\n', " ")), 1),
        Err(_) => ("error the emulator panicked\n".to_string(), 101),
    };
    let _ = report.write_all(line.as_bytes());
    // SAFETY: ends this process without running the parent's exit path.
    unsafe { libc::_exit(code) }
}

fn redirect_stdio(cwd: &Path) -> Result<(), SpeedError> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(SpeedError::host("cannot open /dev/null".to_string()))?;
    use std::os::fd::AsRawFd;
    for fd in [0, 1] {
        // SAFETY: dup2 of a valid descriptor onto stdin/stdout.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } < 0 {
            return Err(SpeedError::last_os("dup2"));
        }
    }
    std::env::set_current_dir(cwd).map_err(SpeedError::host(format!(
        "cannot chdir to {}",
        cwd.display()
    )))
}

fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// Deterministic text: a vocabulary of 500 words of 2 to 9 letters from
/// `a`..`j`, then words drawn from it, 16 to a line, cut to `bytes` bytes
/// (ending in a newline). Compresses about as well as English prose.
fn generate_text(bytes: usize) -> Vec<u8> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let words: Vec<Vec<u8>> = (0..500)
        .map(|_| {
            let len = 2 + (next() >> 33) % 8;
            (0..len)
                .map(|_| b'a' + ((next() >> 33) % 10) as u8)
                .collect()
        })
        .collect();
    let mut text = Vec::with_capacity(bytes + 16);
    let mut k = 0u64;
    while text.len() < bytes {
        text.extend_from_slice(&words[((next() >> 33) % 500) as usize]);
        k += 1;
        text.push(if k.is_multiple_of(16) { b'\n' } else { b' ' });
    }
    text.truncate(bytes);
    if let Some(last) = text.last_mut() {
        *last = b'\n';
    }
    text
}

/// A private temporary directory, removed on drop.
/// The directory the programs run in and find their inputs: temporary
/// (removed when dropped) or kept (`--keep-inputs`).
struct WorkDir {
    path: PathBuf,
    /// Removed when dropped.
    temporary: bool,
}

impl WorkDir {
    fn temporary() -> Result<WorkDir, SpeedError> {
        let p = std::env::temp_dir().join(format!("rvnvmm-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p)
            .map_err(SpeedError::host(format!("cannot create {}", p.display())))?;
        Ok(WorkDir {
            path: p,
            temporary: true,
        })
    }

    fn kept(dir: &Path) -> Result<WorkDir, SpeedError> {
        std::fs::create_dir_all(dir)
            .map_err(SpeedError::host(format!("cannot create {}", dir.display())))?;
        Ok(WorkDir {
            path: dir.to_path_buf(),
            temporary: false,
        })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_deterministic_and_sized() {
        let a = generate_text(100_000);
        assert_eq!(a.len(), 100_000);
        assert_eq!(a, generate_text(100_000));
        assert_eq!(a.last(), Some(&b'\n'));
        assert!(a
            .iter()
            .all(|&c| c == b' ' || c == b'\n' || (b'a'..=b'j').contains(&c)));
        // About 16 words of 5.5 letters and a separator to a line.
        let lines = a.iter().filter(|&&c| c == b'\n').count();
        assert!((800..1200).contains(&lines), "{lines} lines");
    }
}
