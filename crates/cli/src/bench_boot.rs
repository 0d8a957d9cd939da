//! `rvnvmm bench boot`: the full system's speed row. Boots Debian's kernel
//! on OpenSBI with the project's initramfs (`scripts/build-initramfs.sh`,
//! its test script on: `rvnvmm.rc=1`) to power-off, under `rvnvmm boot` in
//! each model asked for and under `qemu-system-riscv64 -machine virt` with
//! the same images and harts, alternating, and reports the wall times and
//! their ratio. Both are child processes, timed from spawn to reaping;
//! rvnvmm's instruction count and simulated time come from its `--stats`.

use crate::artefacts::{self, find_in_path};
use crate::error::{BootBenchError, CliError};
use crate::MachineArgs;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// The kernel command line of every boot: the console, the initramfs's
/// test script, no boot messages (both emulators print the same ones).
const APPEND: &str = "console=ttyS0 rvnvmm.rc=1 quiet";
/// What the console shows once the guest has powered off.
const POWER_DOWN: &str = "reboot: Power down";

/// Options of `bench boot`.
#[derive(Args)]
pub struct BootBenchArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Print one JSON object per model instead of the table.
    #[arg(long)]
    json: bool,
    /// The execution engine rvnvmm boots with (as `rvnvmm boot`'s
    /// `--engine`).
    #[arg(long, value_name = "interp|jit", default_value = "jit")]
    engine: rvnvmm_hart::Engine,
    /// Harts of both machines.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    smp: u32,
    /// The models to boot rvnvmm in, comma-separated (each a row).
    #[arg(long, value_delimiter = ',', default_value = "functional,timing",
          value_parser = ["functional", "timing"])]
    models: Vec<String>,
    /// Boots per model and emulator, alternating; the fastest counts.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// The qemu-system-riscv64 to compare with (default:
    /// $RVNVMM_QEMU_SYSTEM, else PATH).
    #[arg(long, value_name = "PATH")]
    qemu: Option<PathBuf>,
    /// The initramfs (default: what scripts/build-initramfs.sh builds).
    #[arg(long, value_name = "FILE")]
    initrd: Option<PathBuf>,
    /// Stop a boot of rvnvmm that runs past this many instructions.
    #[arg(long, value_name = "N", default_value_t = 30_000_000_000)]
    max_insns: u64,
}

/// One model's row.
struct Row {
    machine: String,
    model: String,
    instructions: u64,
    sim_time_ns: u64,
    rvnvmm_seconds: f64,
    qemu_seconds: f64,
}

impl Row {
    fn ratio(&self) -> f64 {
        if self.qemu_seconds > 0.0 {
            self.rvnvmm_seconds / self.qemu_seconds
        } else {
            0.0
        }
    }

    fn to_json(&self, smp: u32, runs: u32) -> String {
        serde_json::json!({
            "program": "boot",
            "machine": self.machine,
            "model": self.model,
            "harts": smp,
            "runs": runs,
            "instructions": self.instructions,
            "sim_time_ns": self.sim_time_ns,
            "rvnvmm_seconds": self.rvnvmm_seconds,
            "rvnvmm_mips": crate::bench_common::mips(self.instructions, self.rvnvmm_seconds),
            "qemu_seconds": self.qemu_seconds,
            "ratio": self.ratio(),
        })
        .to_string()
    }

    fn to_table_line(&self) -> String {
        format!(
            "{:<12} {:>12.1} M {:>10.3} {:>9.3} {:>8.1} {:>9.3} {:>9.1}x",
            self.model,
            self.instructions as f64 / 1e6,
            self.sim_time_ns as f64 / 1e9,
            self.rvnvmm_seconds,
            crate::bench_common::mips(self.instructions, self.rvnvmm_seconds),
            self.qemu_seconds,
            self.ratio()
        )
    }
}

/// What every boot of the benchmark needs, found and checked before the
/// first one runs.
pub(crate) struct BootImages {
    rvnvmm: PathBuf,
    qemu: PathBuf,
    firmware: PathBuf,
    kernel: PathBuf,
    initrd: PathBuf,
}

impl BootImages {
    /// The emulators and the images: `qemu` as `--qemu` (else
    /// `$RVNVMM_QEMU_SYSTEM`, else `PATH`), `initrd` as `--initrd` (else
    /// what `scripts/build-initramfs.sh` builds).
    pub(crate) fn find(qemu: Option<&Path>, initrd: Option<&Path>) -> Result<Self, CliError> {
        let qemu = qemu_system(qemu)?;
        let firmware = artefacts::setup_path("RVNVMM_OPENSBI")?;
        let kernel = artefacts::setup_path("RVNVMM_KERNEL")?;
        let initrd = match initrd {
            Some(p) if p.is_file() => p.to_path_buf(),
            Some(p) => {
                return Err(CliError::Usage(format!(
                    "--initrd {} does not exist",
                    p.display()
                )))
            }
            None => build_initramfs()?,
        };
        let rvnvmm = std::env::current_exe().map_err(|source| BootBenchError::Start {
            program: "rvnvmm".into(),
            source,
        })?;
        Ok(BootImages {
            rvnvmm,
            qemu,
            firmware,
            kernel,
            initrd,
        })
    }

    /// `qemu-system-riscv64 --version`'s first line.
    pub(crate) fn qemu_version(&self) -> String {
        crate::bench_common::qemu_version(&self.qemu)
    }
}

/// One boot measured: rvnvmm's counts and both emulators' best wall times.
pub(crate) struct BootTimes {
    /// Instructions rvnvmm retired, all harts.
    pub instructions: u64,
    /// rvnvmm's simulated time.
    pub sim_time_ns: u64,
    /// rvnvmm's best wall time.
    pub rvnvmm_seconds: f64,
    /// qemu-system-riscv64's best wall time.
    pub qemu_seconds: f64,
}

/// Boots `smp` harts to power-off `runs` times under rvnvmm with `machine`
/// (its model named `model` in messages) and `engine`, and under qemu-system-riscv64,
/// alternating; the fastest of each counts.
pub(crate) fn measure(
    images: &BootImages,
    machine: &MachineArgs,
    model: &str,
    engine: rvnvmm_hart::Engine,
    smp: u32,
    runs: u32,
    max_insns: u64,
) -> Result<BootTimes, CliError> {
    let stats = std::env::temp_dir().join(format!("rvnvmm-bench-boot-{}.json", std::process::id()));
    let mut best_rv = f64::INFINITY;
    let mut best_q = f64::INFINITY;
    let mut counts = None;
    for _ in 0..runs {
        let mut cmd = Command::new(&images.rvnvmm);
        cmd.arg("boot");
        if let Some(c) = &machine.config {
            cmd.args(["--config", c]);
        }
        for s in &machine.sets {
            cmd.args(["--set", s]);
        }
        cmd.args(["--smp", &smp.to_string()])
            .args(["--engine", engine_name(engine)])
            .arg("--initrd")
            .arg(&images.initrd)
            .args(["--append", APPEND])
            .args(["--max-insns", &max_insns.to_string()])
            .arg("--stats")
            .arg(&stats);
        let secs = timed_boot(&mut cmd, &images.rvnvmm, &format!("rvnvmm ({model} model)"))?;
        let now = read_stats(&stats, model)?;
        let _ = std::fs::remove_file(&stats);
        match counts {
            Some(c) if c != now => eprintln!(
                "rvnvmm: warning: boot ({model} model): instructions and simulated time \
                 changed between runs ({c:?} then {now:?}); boots should be deterministic"
            ),
            _ => counts = Some(now),
        }
        best_rv = best_rv.min(secs);

        let mut q = Command::new(&images.qemu);
        q.args(["-machine", "virt", "-m", "2G", "-nographic", "-no-reboot"])
            .args(["-smp", &smp.to_string()])
            .arg("-bios")
            .arg(&images.firmware)
            .arg("-kernel")
            .arg(&images.kernel)
            .arg("-initrd")
            .arg(&images.initrd)
            .args(["-append", APPEND]);
        best_q = best_q.min(timed_boot(&mut q, &images.qemu, "qemu-system-riscv64")?);
    }
    let (instructions, sim_time_ns) = counts.unwrap_or((0, 0));
    Ok(BootTimes {
        instructions,
        sim_time_ns,
        rvnvmm_seconds: best_rv,
        qemu_seconds: best_q,
    })
}

/// Runs `bench boot`.
pub fn boot(a: BootBenchArgs) -> Result<i32, CliError> {
    // Everything is found and checked before the first boot.
    let images = BootImages::find(a.qemu.as_deref(), a.initrd.as_deref())?;
    let mut machines = Vec::new();
    for model in &a.models {
        let args = model_args(&a.machine, model);
        machines.push(crate::load_config(&args)?.machine.name.clone());
    }

    let out = |line: String| {
        let mut o = std::io::stdout();
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    };
    if !a.json {
        out(format!(
            "rvnvmm bench boot: {} harts to power-off, best of {} run{}; {}",
            a.smp,
            a.runs,
            if a.runs == 1 { "" } else { "s" },
            images.qemu_version()
        ));
        out(format!(
            "{:<12} {:>14} {:>10} {:>9} {:>8} {:>9} {:>10}",
            "model", "instructions", "sim s", "rvnvmm s", "MIPS", "qemu s", "rv/qemu"
        ));
    }
    for (model, machine) in a.models.iter().zip(machines) {
        let t = measure(
            &images,
            &model_args(&a.machine, model),
            model,
            a.engine,
            a.smp,
            a.runs,
            a.max_insns,
        )?;
        let row = Row {
            machine,
            model: model.clone(),
            instructions: t.instructions,
            sim_time_ns: t.sim_time_ns,
            rvnvmm_seconds: t.rvnvmm_seconds,
            qemu_seconds: t.qemu_seconds,
        };
        out(if a.json {
            row.to_json(a.smp, a.runs)
        } else {
            row.to_table_line()
        });
    }
    Ok(0)
}

/// `engine` as `--engine` spells it.
fn engine_name(engine: rvnvmm_hart::Engine) -> &'static str {
    match engine {
        rvnvmm_hart::Engine::Interp => "interp",
        rvnvmm_hart::Engine::Jit => "jit",
    }
}

/// The machine options of a boot in `model`: the user's, the model last.
fn model_args(machine: &MachineArgs, model: &str) -> MachineArgs {
    let mut m = machine.clone();
    m.sets.push(format!("machine.model={model}"));
    m
}

/// `--qemu`, else `$RVNVMM_QEMU_SYSTEM`, else `qemu-system-riscv64` on PATH.
fn qemu_system(explicit: Option<&Path>) -> Result<PathBuf, BootBenchError> {
    let named = explicit.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("RVNVMM_QEMU_SYSTEM")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    match named {
        Some(q) if q.is_file() => Ok(q),
        Some(q) => Err(BootBenchError::QemuMissing(q)),
        None => find_in_path("qemu-system-riscv64").ok_or(BootBenchError::QemuNotOnPath),
    }
}

/// The initramfs `scripts/build-initramfs.sh` builds (or finds in its
/// cache): its path.
fn build_initramfs() -> Result<PathBuf, BootBenchError> {
    let script = artefacts::repo_root().join("scripts/build-initramfs.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| BootBenchError::Start {
            program: script.clone(),
            source,
        })?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !path.is_file() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(BootBenchError::Initramfs(err.trim().to_string()));
    }
    Ok(path)
}

/// Runs one boot to power-off; its wall time from spawn to reaping.
fn timed_boot(cmd: &mut Command, program: &Path, who: &str) -> Result<f64, BootBenchError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let out: Output = cmd.output().map_err(|source| BootBenchError::Start {
        program: program.to_path_buf(),
        source,
    })?;
    let secs = t0.elapsed().as_secs_f64();
    let console = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !console.contains(POWER_DOWN) {
        let mut tail: Vec<&str> = console.lines().rev().take(10).collect();
        tail.reverse();
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(BootBenchError::NoPowerOff {
            who: who.to_string(),
            status: out.status,
            console_tail: format!("{}\n{}", tail.join("\n"), stderr.trim()),
        });
    }
    Ok(secs)
}

/// (instructions, simulated ns) from a boot's `--stats` file.
fn read_stats(path: &Path, model: &str) -> Result<(u64, u64), BootBenchError> {
    let bad = |message: String| BootBenchError::Stats {
        model: model.to_string(),
        message,
    };
    let text =
        std::fs::read_to_string(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let field = |k: &str| v[k].as_u64().ok_or_else(|| bad(format!("no `{k}`")));
    Ok((field("instructions")?, field("sim_time_ns")?))
}
