//! Differential tests: every guest program and busybox script is run under
//! `qemu-riscv64` (the reference) and under `rvnvmm run`, and both must
//! print the same stdout and end with the same status.
//!
//! Artefacts (the tests fail, not skip, when they are missing):
//! * `scripts/setup.sh` writes `$RVNVMM_CACHE/paths.env` (default cache
//!   `$HOME/.cache/rvnvmm`) with `RVNVMM_BUSYBOX` (Debian trixie's riscv64
//!   busybox-static) and `RVNVMM_SYSROOT` (a trixie riscv64 glibc +
//!   libstdc++ sysroot, used for the dynamic programs by both emulators).
//!   Either variable may also be set in the environment.
//! * `make -C guest` builds `guest/build/{static,dynamic}/NAME`, and the
//!   same programs with the B extension (`-march=rv64gc_zba_zbb_zbs`) in
//!   `guest/build/{static,dynamic}-rvb/NAME`.
//! * qemu runs with `-cpu rv64,zba=true,zbb=true,zbc=true,zbs=true` (the
//!   extensions rvnvmm implements that qemu 7.2 has); rvnvmm with its
//!   default ISA, every extension it implements.
//! * `qemu-riscv64` on PATH (or `RVNVMM_QEMU=/path/to/qemu-riscv64`).
//!
//! Conventions:
//! * Each run gets a fresh temporary directory as its working directory
//!   and as `$TMPDIR`, a cleared environment (`PATH`, `TMPDIR`, `HOME`,
//!   `LC_ALL=C`), and `/dev/null` as stdin.  stderr is not compared.
//! * A process killed by signal N counts as status 128 + N, for both
//!   emulators (qemu-user kills itself with the guest's signal; rvnvmm
//!   does too, or exits with 128 + N).
//! * The argument `{self}` is replaced by the path of the program itself
//!   for rvnvmm.  qemu-user without binfmt_misc cannot execve a RISC-V
//!   binary, so for qemu it becomes a host shell script that runs
//!   `qemu-riscv64 [-L SYSROOT] PROGRAM "$@"` instead.
//! * For the same reason busybox's re-exec of its applets needs help under
//!   qemu: `PATH` points at a directory of such wrapper scripts, one per
//!   applet, while for rvnvmm it points at a directory of symlinks to the
//!   busybox binary.
//! * Dynamic programs run with `qemu-riscv64 -L SYSROOT` and
//!   `rvnvmm run --sysroot SYSROOT`; static ones and busybox without.
//! * `RVNVMM_DIFF_TIMEOUT` (seconds, default 300) bounds each run;
//!   `RVNVMM_DIFF_KEEP=1` keeps the temporary directories;
//!   `RVNVMM_DIFF_BIN` replaces the rvnvmm binary (to test the harness).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/guest_run.rs"]
mod guest_run;

use guest_run::{run_command, sh_quote, tail_text, Run as RunResult, TempDir};

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

// ---------------------------------------------------------------- the corpus

/// Declares one test per program and build: `static_bin::NAME`,
/// `dynamic_bin::NAME`, `static_rvb::NAME` and `dynamic_rvb::NAME`, and
/// `static_jit::NAME` (the static build under `--engine jit`).
/// `NAME => (expected status, [arguments])`.
macro_rules! guest_programs {
    ($($name:ident => ($status:expr, [$($arg:expr),* $(,)?]);)*) => {
        /// Every program with its expected exit status and arguments.
        const GUEST_PROGRAMS: &[(&str, i32, &[&str])] = &[$((stringify!($name), $status, &[$($arg),*])),*];

        mod static_bin {
            $(
                #[test]
                fn $name() {
                    super::run_guest(super::Linkage::Static, stringify!($name), $status, &[$($arg),*]);
                }
            )*
        }

        mod dynamic_bin {
            $(
                #[test]
                fn $name() {
                    super::run_guest(super::Linkage::Dynamic, stringify!($name), $status, &[$($arg),*]);
                }
            )*
        }

        /// The static programs under the translating engine.
        mod static_jit {
            $(
                #[test]
                fn $name() {
                    super::run_guest_on(super::Linkage::Static, stringify!($name), $status, &[$($arg),*], "jit");
                }
            )*
        }

        mod static_rvb {
            $(
                #[test]
                fn $name() {
                    super::run_guest(super::Linkage::StaticRvb, stringify!($name), $status, &[$($arg),*]);
                }
            )*
        }

        mod dynamic_rvb {
            $(
                #[test]
                fn $name() {
                    super::run_guest(super::Linkage::DynamicRvb, stringify!($name), $status, &[$($arg),*]);
                }
            )*
        }
    };
}

guest_programs! {
    abort_unhandled => (134, []);
    affinity => (6, []);
    alarm_pause => (0, []);
    atomics => (3, []);
    bench_compute => (0, []);
    bitmanip => (0, []);
    bus_unhandled => (135, []);
    compressed => (5, []);
    contended => (0, ["lock", "3", "300"]);
    copy_range => (0, []);
    cxx_basic => (3, []);
    execve_self => (44, ["{self}"]);
    fileio => (0, []);
    float_edge => (23, []);
    float_print => (0, []);
    fpe_unhandled => (136, []);
    fork_pipe => (7, []);
    gdb_target => (0, []);
    ill_unhandled => (132, []);
    int_arith => (17, []);
    malloc_brk => (0, []);
    malloc_stress => (0, []);
    mmap => (0, []);
    pipe_threads => (0, []);
    pthreads => (42, []);
    roi_markers => (0, []);
    segv_unhandled => (139, []);
    selfmod => (9, []);
    setjmp => (11, []);
    signals => (0, []);
    smt_pair => (0, []);
    stack_overflow => (8, []);
    sys_misc => (4, []);
    tcp_echo_threads => (0, []);
    timerfd_epoll => (0, []);
    timers_threads => (0, []);
    tlb_stride => (0, ["20"]);
    trap_unhandled => (133, []);
    vm_ops => (0, []);
    wnohang_poll => (0, []);
    zfh_random => (16, []);
}

/// Declares one test per busybox script: `busybox::NAME` runs
/// `busybox sh guest/busybox/NAME.sh`.
macro_rules! busybox_scripts {
    ($($name:ident => $status:expr;)*) => {
        const BUSYBOX_SCRIPTS: &[&str] = &[$(stringify!($name)),*];

        mod busybox {
            $(
                #[test]
                fn $name() {
                    super::run_busybox_script(stringify!($name), $status);
                }
            )*
        }
    };
}

busybox_scripts! {
    archive_hash => 0;
    sh_features => 0;
    text_tools => 0;
}

// ------------------------------------------------------------- environment

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Linkage {
    Static,
    Dynamic,
    /// Static, built with the B extension.
    StaticRvb,
    /// Dynamic, built with the B extension.
    DynamicRvb,
}

impl Linkage {
    const ALL: [Linkage; 4] = [
        Linkage::Static,
        Linkage::Dynamic,
        Linkage::StaticRvb,
        Linkage::DynamicRvb,
    ];

    fn dir(self) -> &'static str {
        match self {
            Linkage::Static => "static",
            Linkage::Dynamic => "dynamic",
            Linkage::StaticRvb => "static-rvb",
            Linkage::DynamicRvb => "dynamic-rvb",
        }
    }

    fn dynamic(self) -> bool {
        matches!(self, Linkage::Dynamic | Linkage::DynamicRvb)
    }
}

/// qemu-riscv64's CPU: RV64GC with every extension of rvnvmm's default ISA
/// that qemu 7.2 implements (it spells Zfh and Zfhmin with capitals).
const QEMU_CPU: &str = "rv64,zba=true,zbb=true,zbc=true,zbs=true,Zfh=true,Zfhmin=true";

struct Env {
    repo: PathBuf,
    guest_build: PathBuf,
    busybox: PathBuf,
    sysroot: PathBuf,
    qemu: PathBuf,
    rvnvmm: PathBuf,
    /// PATH directory for qemu runs: wrapper scripts, one per busybox applet.
    qemu_applets: PathBuf,
    /// PATH directory for rvnvmm runs: symlinks to busybox, one per applet.
    rvnvmm_applets: PathBuf,
    timeout: Duration,
    keep: bool,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Result<Env, String>> = OnceLock::new();
    match ENV.get_or_init(load_env) {
        Ok(e) => e,
        Err(msg) => panic!(
            "differential test setup failed: {msg}\n{}",
            artefacts::SETUP_HINT
        ),
    }
}

fn repo_root() -> PathBuf {
    artefacts::repo_root()
}

fn load_env() -> Result<Env, String> {
    let repo = repo_root();
    let busybox = artefacts::busybox().map_err(|e| e.to_string())?;
    let sysroot = artefacts::sysroot().map_err(|e| e.to_string())?;
    let qemu = artefacts::qemu().map_err(|e| e.to_string())?;
    let guest_build = artefacts::guest_build();
    for (name, _, _) in GUEST_PROGRAMS {
        for linkage in Linkage::ALL {
            artefacts::guest_program(&guest_build.join(linkage.dir()), name)
                .map_err(|e| e.to_string())?;
        }
    }
    let rvnvmm = match std::env::var_os("RVNVMM_DIFF_BIN").filter(|v| !v.is_empty()) {
        Some(b) => PathBuf::from(b),
        None => PathBuf::from(env!("CARGO_BIN_EXE_rvnvmm")),
    };
    let timeout = std::env::var("RVNVMM_DIFF_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(300);
    let keep = std::env::var("RVNVMM_DIFF_KEEP")
        .map(|v| v == "1")
        .unwrap_or(false);
    let (qemu_applets, rvnvmm_applets) = make_applet_dirs(&busybox, &qemu)?;
    Ok(Env {
        repo,
        guest_build,
        busybox,
        sysroot,
        qemu,
        rvnvmm,
        qemu_applets,
        rvnvmm_applets,
        timeout: Duration::from_secs(timeout),
        keep,
    })
}

/// Single-quotes a string for /bin/sh.
fn write_executable(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

/// Builds (once per test process) the two applet directories.
fn make_applet_dirs(busybox: &Path, qemu: &Path) -> Result<(PathBuf, PathBuf), String> {
    let out = Command::new(qemu)
        .arg(busybox)
        .arg("--list")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} {} --list: {e}",
                qemu.display(),
                busybox.display()
            )
        })?;
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    let applets: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|a| !a.is_empty() && !a.contains('/'))
        .collect();
    if !out.status.success() || applets.len() < 50 {
        return Err(format!(
            "`{} {} --list` failed (status {:?}, {} applets)",
            qemu.display(),
            busybox.display(),
            out.status,
            applets.len()
        ));
    }
    // The directories depend only on these inputs: build them once under a
    // name derived from them, publish with an atomic rename, and reuse them
    // in later runs (concurrent test processes may race harmlessly).
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (qemu, busybox, &applets).hash(&mut h);
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = root.join(format!("rvnvmm-applets-{:016x}", h.finish()));
    let (qdir, rdir) = (base.join("qemu"), base.join("rvnvmm"));
    if base.join("complete").is_file() {
        return Ok((qdir, rdir));
    }
    let tmp = root.join(format!("rvnvmm-applets-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let (tq, tr) = (tmp.join("qemu"), tmp.join("rvnvmm"));
    std::fs::create_dir_all(&tq).map_err(|e| format!("mkdir {}: {e}", tq.display()))?;
    std::fs::create_dir_all(&tr).map_err(|e| format!("mkdir {}: {e}", tr.display()))?;
    let q = sh_quote(&qemu.to_string_lossy());
    let b = sh_quote(&busybox.to_string_lossy());
    for a in &applets {
        let script = format!("#!/bin/sh\nexec {q} {b} {} \"$@\"\n", sh_quote(a));
        write_executable(&tq.join(a), &script).map_err(|e| format!("write wrapper {a}: {e}"))?;
        std::os::unix::fs::symlink(busybox, tr.join(a)).map_err(|e| format!("symlink {a}: {e}"))?;
    }
    std::fs::write(tmp.join("complete"), b"").map_err(|e| format!("write marker: {e}"))?;
    if std::fs::rename(&tmp, &base).is_err() {
        // Another process published it first, or a stale incomplete copy
        // is in the way.
        if !base.join("complete").is_file() {
            let _ = std::fs::remove_dir_all(&base);
            std::fs::rename(&tmp, &base)
                .map_err(|e| format!("rename {} -> {}: {e}", tmp.display(), base.display()))?;
        } else {
            let _ = std::fs::remove_dir_all(&tmp);
        }
    }
    Ok((qdir, rdir))
}

// ------------------------------------------------------------------ running

/// Describes where two outputs first differ, with context.
fn describe_diff(expected: &[u8], actual: &[u8]) -> String {
    let e = String::from_utf8_lossy(expected);
    let a = String::from_utf8_lossy(actual);
    let el: Vec<&str> = e.split_inclusive('\n').collect();
    let al: Vec<&str> = a.split_inclusive('\n').collect();
    let first = el
        .iter()
        .zip(al.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(el.len().min(al.len()));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "stdout differs at line {} (qemu: {} lines, {} bytes; rvnvmm: {} lines, {} bytes)",
        first + 1,
        el.len(),
        expected.len(),
        al.len(),
        actual.len()
    );
    let from = first.saturating_sub(3);
    for line in &el[from..first] {
        let _ = write!(s, "    {line}");
        if !line.ends_with('\n') {
            s.push('\n');
        }
    }
    for i in first..(first + 5) {
        let q = el.get(i).copied();
        let r = al.get(i).copied();
        if q.is_none() && r.is_none() {
            break;
        }
        if q == r {
            let _ = write!(s, "    {}", q.unwrap_or(""));
            continue;
        }
        let _ = writeln!(
            s,
            "  q {}",
            q.map(|l| l.trim_end_matches('\n'))
                .unwrap_or("<end of output>")
        );
        let _ = writeln!(
            s,
            "  r {}",
            r.map(|l| l.trim_end_matches('\n'))
                .unwrap_or("<end of output>")
        );
    }
    s
}

fn status_text(r: &RunResult) -> String {
    let mut t = format!("{}", r.status);
    if let Some(sig) = r.raw.signal() {
        let _ = write!(t, " (killed by signal {sig})");
    }
    if r.timed_out {
        t.push_str(" (TIMED OUT, killed)");
    }
    t
}

/// Compares the two runs; panics with a full report on any mismatch.
fn compare(what: &str, expected_status: i32, q: &RunResult, r: &RunResult) {
    if q.timed_out || q.status != expected_status {
        panic!(
            "{what}: the reference run under qemu did not behave as expected \
             (status {}, expected {expected_status}); the test environment is broken\n\
             command: {}\nstderr:\n{}\nstdout (tail):\n{}",
            status_text(q),
            q.command,
            tail_text(&q.stderr, 2000),
            tail_text(&q.stdout, 2000)
        );
    }
    let same_out = q.stdout == r.stdout;
    let same_status = q.status == r.status && !r.timed_out;
    let panicked = String::from_utf8_lossy(&r.stderr).contains("panicked");
    if same_out && same_status && !panicked {
        return;
    }
    let mut msg = format!("{what}: rvnvmm differs from qemu-riscv64\n");
    let _ = writeln!(msg, "  qemu:   {}", q.command);
    let _ = writeln!(msg, "  rvnvmm: {}", r.command);
    if !same_status {
        let _ = writeln!(
            msg,
            "exit status: qemu {} / rvnvmm {}",
            status_text(q),
            status_text(r)
        );
    }
    if panicked {
        let _ = writeln!(msg, "rvnvmm panicked");
    }
    if !same_out {
        msg.push_str(&describe_diff(&q.stdout, &r.stdout));
    }
    let _ = writeln!(msg, "rvnvmm stderr (tail):\n{}", tail_text(&r.stderr, 3000));
    panic!("{msg}");
}

fn run_guest(linkage: Linkage, name: &str, expected_status: i32, args: &[&str]) {
    run_guest_on(linkage, name, expected_status, args, "interp");
}

/// [`run_guest`] with rvnvmm's execution engine `engine`.
fn run_guest_on(linkage: Linkage, name: &str, expected_status: i32, args: &[&str], engine: &str) {
    let env = env();
    let prog = env.guest_build.join(linkage.dir()).join(name);
    let prog_s = prog.to_string_lossy().into_owned();
    let what = format!("{}/{name} ({engine})", linkage.dir());

    // Reference: qemu.
    let qdir = TempDir::new(&format!("{name}-qemu"), env.keep);
    let wrapper = qdir.path.join(".self-under-qemu");
    let mut qemu_prefix = vec![
        env.qemu.to_string_lossy().into_owned(),
        "-cpu".into(),
        QEMU_CPU.into(),
    ];
    if linkage.dynamic() {
        qemu_prefix.push("-L".into());
        qemu_prefix.push(env.sysroot.to_string_lossy().into_owned());
    }
    if args.contains(&"{self}") {
        let quoted: Vec<String> = qemu_prefix.iter().map(|s| sh_quote(s)).collect();
        let script = format!(
            "#!/bin/sh\nexec {} {} \"$@\"\n",
            quoted.join(" "),
            sh_quote(&prog_s)
        );
        write_executable(&wrapper, &script).expect("write execve wrapper");
    }
    let subst = |a: &&str, selfpath: &str| -> String {
        if *a == "{self}" {
            selfpath.to_string()
        } else {
            a.to_string()
        }
    };
    let mut qc = Command::new(&qemu_prefix[0]);
    qc.args(&qemu_prefix[1..]).arg(&prog);
    qc.args(args.iter().map(|a| subst(a, &wrapper.to_string_lossy())));
    let q = run_command(qc, &qdir.path, &env.qemu_applets, env.timeout);

    // Under test: rvnvmm.
    let rdir = TempDir::new(&format!("{name}-rvnvmm"), env.keep);
    let mut rc = Command::new(&env.rvnvmm);
    rc.arg("run").arg("--engine").arg(engine);
    if linkage.dynamic() {
        rc.arg("--sysroot").arg(&env.sysroot);
    }
    rc.arg(&prog);
    rc.args(args.iter().map(|a| subst(a, &prog_s)));
    let r = run_command(rc, &rdir.path, &env.rvnvmm_applets, env.timeout);

    compare(&what, expected_status, &q, &r);
}

fn run_busybox_script(name: &str, expected_status: i32) {
    let env = env();
    let script = env
        .repo
        .join("guest")
        .join("busybox")
        .join(format!("{name}.sh"));
    assert!(
        script.is_file(),
        "missing busybox script {}",
        script.display()
    );
    let what = format!("busybox/{name}.sh");

    let qdir = TempDir::new(&format!("bb-{name}-qemu"), env.keep);
    let mut qc = Command::new(&env.qemu);
    qc.arg(&env.busybox).arg("sh").arg(&script);
    let q = run_command(qc, &qdir.path, &env.qemu_applets, env.timeout);

    let rdir = TempDir::new(&format!("bb-{name}-rvnvmm"), env.keep);
    let mut rc = Command::new(&env.rvnvmm);
    rc.arg("run").arg(&env.busybox).arg("sh").arg(&script);
    let r = run_command(rc, &rdir.path, &env.rvnvmm_applets, env.timeout);

    compare(&what, expected_status, &q, &r);
}

// ------------------------------------------------------ corpus consistency

/// Every source in guest/src has a test above, and vice versa.
#[test]
fn every_guest_program_is_listed() {
    let src = repo_root().join("guest").join("src");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", src.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            let ext = p.extension()?.to_str()?;
            if ext == "c" || ext == "cpp" {
                Some(p.file_stem()?.to_string_lossy().into_owned())
            } else {
                None
            }
        })
        .collect();
    let listed: BTreeSet<String> = GUEST_PROGRAMS
        .iter()
        .map(|(n, _, _)| n.to_string())
        .collect();
    assert_eq!(
        on_disk, listed,
        "guest/src and the guest_programs! list in crates/cli/tests/differential.rs disagree"
    );
}

/// Every script in guest/busybox has a test above, and vice versa.
#[test]
fn every_busybox_script_is_listed() {
    let dir = repo_root().join("guest").join("busybox");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "sh")
                .then(|| p.file_stem().map(|s| s.to_string_lossy().into_owned()))?
        })
        .collect();
    let listed: BTreeSet<String> = BUSYBOX_SCRIPTS.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        on_disk, listed,
        "guest/busybox and the busybox_scripts! list in crates/cli/tests/differential.rs disagree"
    );
}

/// The artefacts exist (fails with a hint to run setup.sh / make).
#[test]
fn artefacts_present() {
    let e = env();
    assert!(e.qemu_applets.is_dir() && e.rvnvmm_applets.is_dir());
}
