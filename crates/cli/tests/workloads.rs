//! The workload suite at its "test" size (guest/workloads, docs/workloads.md):
//! every workload must print the same stdout, end with the same status and
//! leave the same files in its working directory under `qemu-riscv64` (the
//! reference) and under `rvnvmm run` with the heap on DRAM and on NVMM, in
//! the functional and in the timing model. The C kernels run a second time
//! as built with the B extension (`guest/build/workloads/bin-rvb`, from
//! `-march=rv64gc_zba_zbb_zbs`), qemu with
//! `-cpu rv64,zba=true,zbb=true,zbc=true,zbs=true`.
//!
//! Artefacts (the tests fail, not skip, when they are missing):
//! * `scripts/setup.sh`: `RVNVMM_SYSROOT` (the trixie riscv64 sysroot, which
//!   also holds Debian's xz, bzip2, gzip, sqlite3, lua5.4 and mawk);
//! * `make -C guest`: the kernels in `guest/build/workloads/bin`, the inputs
//!   in `guest/build/workloads/inputs` and `guest/build/workloads/manifest.json`
//!   (`guest/workloads/workloads.toml` as JSON);
//! * `qemu-riscv64` on PATH (or `RVNVMM_QEMU`).
//!
//! Conventions as in `differential.rs`: each run gets a fresh temporary
//! directory as its working directory, `$HOME` and `$TMPDIR`, a cleared
//! environment (`PATH=/usr/bin:/bin`, `LC_ALL=C`) and `/dev/null` as
//! stdin; stderr is not compared.  `RVNVMM_DIFF_TIMEOUT` (seconds, default
//! 300) bounds each run, `RVNVMM_DIFF_KEEP=1` keeps the directories.

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_run.rs"]
mod guest_run;

use guest_run::{tail_text, TempDir};

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Declares one test per workload of `guest/workloads/workloads.toml`
/// (a hyphen in the name becomes an underscore).
macro_rules! workloads {
    ($($test:ident => $name:expr;)*) => {
        const WORKLOADS: &[&str] = &[$($name),*];
        mod workload {
            $(
                #[test]
                fn $test() {
                    super::run_workload($name);
                }
            )*
        }
    };
}

workloads! {
    stream => "stream";
    gups => "gups";
    lbm => "lbm";
    mcf => "mcf";
    nbody => "nbody";
    mcts => "mcts";
    rbtree => "rbtree";
    xz => "xz";
    xz_d => "xz-d";
    bzip2 => "bzip2";
    gzip => "gzip";
    gzip_d => "gzip-d";
    sqlite => "sqlite";
    lua => "lua";
    awk => "awk";
}

/// Declares one test per C kernel for its B-extension build:
/// `workload_rvb::NAME`.
macro_rules! rvb_workloads {
    ($($test:ident => $name:expr;)*) => {
        const RVB_WORKLOADS: &[&str] = &[$($name),*];
        mod workload_rvb {
            $(
                #[test]
                fn $test() {
                    super::run_workload_build($name, super::Build::Rvb);
                }
            )*
        }
    };
}

rvb_workloads! {
    stream => "stream";
    gups => "gups";
    lbm => "lbm";
    mcf => "mcf";
    nbody => "nbody";
    mcts => "mcts";
    rbtree => "rbtree";
}

/// Which build of the C kernels runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// `bin/`: `-march=rv64gc`.
    Rv64gc,
    /// `bin-rvb/`: `-march=rv64gc_zba_zbb_zbs`.
    Rvb,
}

/// qemu-riscv64's CPU: RV64GC plus the extensions of rvnvmm's default ISA
/// that qemu 7.2 implements.
const QEMU_CPU: &str = "rv64,zba=true,zbb=true,zbc=true,zbs=true";

/// The rvnvmm configurations every workload runs in, beside qemu.
const CONFIGS: &[(&str, &[&str])] = &[
    (
        "functional, heap on DRAM",
        &[
            "--set",
            "machine.model=functional",
            "--set",
            "user.heap=dram",
        ],
    ),
    (
        "functional, heap on NVMM",
        &[
            "--set",
            "machine.model=functional",
            "--set",
            "user.heap=nvmm",
        ],
    ),
    (
        "timing, heap on DRAM",
        &["--set", "machine.model=timing", "--set", "user.heap=dram"],
    ),
    (
        "timing, heap on NVMM",
        &["--set", "machine.model=timing", "--set", "user.heap=nvmm"],
    ),
];

// ------------------------------------------------------------- environment

struct Workload {
    name: String,
    binary: String,
    sysroot: bool,
    test_args: Vec<String>,
    status: i32,
}

struct Env {
    sysroot: PathBuf,
    qemu: PathBuf,
    rvnvmm: PathBuf,
    bin: PathBuf,
    bin_rvb: PathBuf,
    inputs: PathBuf,
    workloads: Vec<Workload>,
    timeout: Duration,
    keep: bool,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Result<Env, String>> = OnceLock::new();
    match ENV.get_or_init(load_env) {
        Ok(e) => e,
        Err(msg) => panic!(
            "workload test setup failed: {msg}\n{}",
            artefacts::SETUP_HINT
        ),
    }
}

fn workloads_src() -> PathBuf {
    artefacts::repo_root().join("guest").join("workloads")
}

fn workloads_build() -> PathBuf {
    artefacts::guest_build().join("workloads")
}

fn str_field(v: &serde_json::Value, key: &str, name: &str) -> Result<String, String> {
    v.get(key)
        .and_then(|x| x.as_str())
        .map(str::to_string)
        .ok_or_else(|| format!("workload {name}: `{key}` missing or not a string"))
}

fn load_manifest() -> Result<Vec<Workload>, String> {
    let json_path = workloads_build().join("manifest.json");
    let toml_path = workloads_src().join("workloads.toml");
    let text = std::fs::read_to_string(&json_path).map_err(|e| {
        format!(
            "{} cannot be read ({e}): run `make -C guest`",
            json_path.display()
        )
    })?;
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(j), Some(t)) = (mtime(&json_path), mtime(&toml_path)) {
        if t > j {
            return Err(format!(
                "{} is older than {}: run `make -C guest`",
                json_path.display(),
                toml_path.display()
            ));
        }
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let list = v
        .get("workload")
        .and_then(|w| w.as_array())
        .ok_or_else(|| format!("{}: no `workload` array", json_path.display()))?;
    let mut out = Vec::new();
    for w in list {
        let name = str_field(w, "name", "?")?;
        let args = |size: &str| -> Result<Vec<String>, String> {
            w.get("args")
                .and_then(|a| a.get(size))
                .and_then(|a| a.as_array())
                .ok_or_else(|| format!("workload {name}: no args.{size}"))?
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("workload {name}: a non-string argument"))
                })
                .collect()
        };
        let test_args = args("test")?;
        args("ref")?;
        out.push(Workload {
            binary: str_field(w, "binary", &name)?,
            sysroot: w.get("sysroot").and_then(|s| s.as_bool()).unwrap_or(false),
            status: w.get("status").and_then(|s| s.as_i64()).unwrap_or(0) as i32,
            test_args,
            name,
        });
    }
    Ok(out)
}

fn load_env() -> Result<Env, String> {
    let sysroot = artefacts::sysroot().map_err(|e| e.to_string())?;
    let qemu = artefacts::qemu().map_err(|e| e.to_string())?;
    let rvnvmm = match std::env::var_os("RVNVMM_DIFF_BIN").filter(|v| !v.is_empty()) {
        Some(b) => PathBuf::from(b),
        None => PathBuf::from(env!("CARGO_BIN_EXE_rvnvmm")),
    };
    let build = workloads_build();
    let inputs = build.join("inputs");
    if !inputs.join("SHA256SUMS").is_file() {
        return Err(format!(
            "the workload inputs in {} are not generated: run `make -C guest`",
            inputs.display()
        ));
    }
    let timeout = std::env::var("RVNVMM_DIFF_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(300);
    let keep = std::env::var("RVNVMM_DIFF_KEEP")
        .map(|v| v == "1")
        .unwrap_or(false);
    Ok(Env {
        sysroot,
        qemu,
        rvnvmm,
        bin: build.join("bin"),
        bin_rvb: build.join("bin-rvb"),
        inputs,
        workloads: load_manifest()?,
        timeout: Duration::from_secs(timeout),
        keep,
    })
}

impl Env {
    fn expand(&self, s: &str, build: Build) -> String {
        let bin = match build {
            Build::Rv64gc => &self.bin,
            Build::Rvb => &self.bin_rvb,
        };
        s.replace("{bin}", &bin.to_string_lossy())
            .replace("{inputs}", &self.inputs.to_string_lossy())
            .replace("{sysroot}", &self.sysroot.to_string_lossy())
    }

    fn workload(&self, name: &str) -> &Workload {
        self.workloads
            .iter()
            .find(|w| w.name == name)
            .unwrap_or_else(|| panic!("workload {name} is not in guest/workloads/workloads.toml"))
    }
}

// ------------------------------------------------------------------ running

struct RunResult {
    what: String,
    command: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// Exit code, or 128 + signal.
    status: i32,
    timed_out: bool,
    /// Files left in the working directory: relative path -> contents.
    files: BTreeMap<String, Vec<u8>>,
}

fn collect_files(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            out.insert(format!("{rel}/"), Vec::new());
            collect_files(root, &p, out);
        } else {
            out.insert(rel, std::fs::read(&p).unwrap_or_default());
        }
    }
}

fn run_command(what: String, cmd: Command, cwd: &Path, timeout: Duration) -> RunResult {
    let run = guest_run::run_command(cmd, cwd, Path::new("/usr/bin:/bin"), timeout);
    let mut files = BTreeMap::new();
    collect_files(cwd, cwd, &mut files);
    RunResult {
        what,
        command: run.command,
        stdout: run.stdout,
        stderr: run.stderr,
        status: run.status,
        timed_out: run.timed_out,
        files,
    }
}

/// Where two outputs first differ (by line for text, by byte offset else).
fn describe_diff(expected: &[u8], actual: &[u8]) -> String {
    let first = expected
        .iter()
        .zip(actual.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(expected.len().min(actual.len()));
    let line = expected[..first].iter().filter(|&&b| b == b'\n').count() + 1;
    let ctx = |b: &[u8]| -> String {
        let from = first.saturating_sub(80);
        let to = (first + 80).min(b.len());
        format!("{:?}", String::from_utf8_lossy(&b[from..to]))
    };
    format!(
        "stdout differs at byte {first} (line {line}; qemu {} bytes, rvnvmm {} bytes)\n  q {}\n  r {}\n",
        expected.len(),
        actual.len(),
        ctx(expected),
        ctx(actual)
    )
}

fn run_workload(name: &str) {
    run_workload_build(name, Build::Rv64gc)
}

fn run_workload_build(name: &str, build: Build) {
    let env = env();
    let w = env.workload(name);
    let prog = env.expand(&w.binary, build);
    assert!(
        Path::new(&prog).is_file(),
        "{prog} does not exist: run `scripts/setup.sh` and `make -C guest`"
    );
    let args: Vec<String> = w.test_args.iter().map(|a| env.expand(a, build)).collect();

    // Reference: qemu.
    let qdir = TempDir::new(&format!("{name}-qemu"), env.keep);
    let mut qc = Command::new(&env.qemu);
    qc.arg("-cpu").arg(QEMU_CPU);
    if w.sysroot {
        qc.arg("-L").arg(&env.sysroot);
    }
    qc.arg(&prog).args(&args);
    let q = run_command("qemu-riscv64".into(), qc, &qdir.path, env.timeout);
    if q.timed_out || q.status != w.status {
        panic!(
            "{name}: the reference run under qemu ended with status {}{} (expected {}); \
             the test environment is broken\ncommand: {}\nstderr:\n{}",
            q.status,
            if q.timed_out { " (timed out)" } else { "" },
            w.status,
            q.command,
            tail_text(&q.stderr, 2000)
        );
    }

    let mut failures = String::new();
    for (i, (label, opts)) in CONFIGS.iter().enumerate() {
        let rdir = TempDir::new(&format!("{name}-rvnvmm{i}"), env.keep);
        let mut rc = Command::new(&env.rvnvmm);
        rc.arg("run");
        if w.sysroot {
            rc.arg("--sysroot").arg(&env.sysroot);
        }
        rc.args(*opts).arg("--").arg(&prog).args(&args);
        let r = run_command(format!("rvnvmm ({label})"), rc, &rdir.path, env.timeout);
        let panicked = String::from_utf8_lossy(&r.stderr).contains("panicked");
        let same_files = q.files == r.files;
        if q.stdout == r.stdout && q.status == r.status && !r.timed_out && !panicked && same_files {
            continue;
        }
        let _ = writeln!(failures, "{name}: {} differs from qemu-riscv64", r.what);
        let _ = writeln!(failures, "  qemu:   {}", q.command);
        let _ = writeln!(failures, "  rvnvmm: {}", r.command);
        if q.status != r.status || r.timed_out {
            let _ = writeln!(
                failures,
                "exit status: qemu {} / rvnvmm {}{}",
                q.status,
                r.status,
                if r.timed_out { " (TIMED OUT)" } else { "" }
            );
        }
        if panicked {
            let _ = writeln!(failures, "rvnvmm panicked");
        }
        if q.stdout != r.stdout {
            failures.push_str(&describe_diff(&q.stdout, &r.stdout));
        }
        if !same_files {
            let qk: BTreeSet<&String> = q.files.keys().collect();
            let rk: BTreeSet<&String> = r.files.keys().collect();
            let _ = writeln!(
                failures,
                "files left in the working directory differ: qemu {qk:?}, rvnvmm {rk:?}"
            );
        }
        let _ = writeln!(
            failures,
            "rvnvmm stderr (tail):\n{}",
            tail_text(&r.stderr, 2000)
        );
    }
    assert!(failures.is_empty(), "{failures}");
    engines_agree(name, &prog, &args, w.sysroot);
}

/// The statistics of a `--stats` file with the host's own figures (host
/// time, MIPS) taken out: what must be identical between engines.
fn simulated_stats(path: &Path) -> String {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let top = v.as_object_mut().expect("stats are a JSON object");
    assert!(
        top.remove("host_seconds").is_some() && top.remove("mips").is_some(),
        "{} lacks host_seconds or mips",
        path.display()
    );
    serde_json::to_string_pretty(&v).expect("JSON serialises")
}

/// Both execution engines give the same stdout, status and statistics
/// (less host time) in the functional model, where the translating engine
/// runs.
fn engines_agree(name: &str, prog: &str, args: &[String], sysroot: bool) {
    let env = env();
    let out = TempDir::new(&format!("{name}-engines"), env.keep);
    // One working directory for both: its path is in the guest's
    // environment, whose size moves the stack and so what the program does.
    let dir = TempDir::new(&format!("{name}-engine"), env.keep);
    let runs: Vec<(RunResult, String)> = ["interp", "jit"]
        .iter()
        .map(|engine| {
            let _ = std::fs::remove_dir_all(&dir.path);
            std::fs::create_dir_all(&dir.path)
                .unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.path.display()));
            let stats = out.path.join(format!("{engine}.json"));
            let mut rc = Command::new(&env.rvnvmm);
            rc.arg("run").arg("--engine").arg(engine);
            if sysroot {
                rc.arg("--sysroot").arg(&env.sysroot);
            }
            rc.args(["--set", "machine.model=functional", "--stats"])
                .arg(&stats)
                .arg("--")
                .arg(prog)
                .args(args);
            let r = run_command(
                format!("rvnvmm --engine {engine}"),
                rc,
                &dir.path,
                env.timeout,
            );
            assert!(
                !r.timed_out && !String::from_utf8_lossy(&r.stderr).contains("panicked"),
                "{name}: {} failed\nstderr:\n{}",
                r.command,
                tail_text(&r.stderr, 2000)
            );
            (r, simulated_stats(&stats))
        })
        .collect();
    let ((interp, interp_stats), (jit, jit_stats)) = (&runs[0], &runs[1]);
    assert_eq!(interp.status, jit.status, "{name}: exit status by engine");
    assert!(
        interp.stdout == jit.stdout,
        "{name}: stdout differs between engines"
    );
    if interp_stats != jit_stats {
        panic!(
            "{name}: statistics differ between engines\n  {}\n  {}\n{}",
            interp.command,
            jit.command,
            describe_diff(interp_stats.as_bytes(), jit_stats.as_bytes())
        );
    }
}

// ------------------------------------------------------ suite consistency

/// The manifest and the list above name the same workloads, every kernel
/// source has a workload, and every workload has its test and ref sizes.
#[test]
fn every_workload_is_listed() {
    let env = env();
    let in_manifest: BTreeSet<&str> = env.workloads.iter().map(|w| w.name.as_str()).collect();
    let listed: BTreeSet<&str> = WORKLOADS.iter().copied().collect();
    assert_eq!(
        in_manifest, listed,
        "guest/workloads/workloads.toml and the workloads! list in \
         crates/cli/tests/workloads.rs disagree"
    );
    let src = workloads_src().join("src");
    let kernels: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", src.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "c")
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
        })
        .collect();
    let used: BTreeSet<String> = env
        .workloads
        .iter()
        .filter_map(|w| w.binary.strip_prefix("{bin}/").map(str::to_string))
        .collect();
    assert_eq!(
        kernels, used,
        "guest/workloads/src/*.c and the {{bin}} workloads of workloads.toml disagree"
    );
    let kernel_workloads: BTreeSet<&str> = env
        .workloads
        .iter()
        .filter(|w| w.binary.starts_with("{bin}/"))
        .map(|w| w.name.as_str())
        .collect();
    let rvb: BTreeSet<&str> = RVB_WORKLOADS.iter().copied().collect();
    assert_eq!(
        kernel_workloads, rvb,
        "the rvb_workloads! list must name every workload of a C kernel"
    );
}
