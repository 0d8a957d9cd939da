//! Whole-program tests of `rvnvmm run`: differential against Debian's
//! `qemu-riscv64` on the guest corpus and busybox, bad input, determinism and
//! `--root` confinement. Needs `scripts/setup.sh` and `make -C guest` first
//! (`scripts/test.sh` does both).

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rvnvmm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
}

/// Reads RVNVMM_BUSYBOX / RVNVMM_SYSROOT from the cache's paths.env.
fn paths() -> (PathBuf, PathBuf) {
    let cache = std::env::var_os("RVNVMM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/rvnvmm")
        });
    let text = std::fs::read_to_string(cache.join("paths.env")).unwrap_or_else(|_| {
        panic!(
            "{}/paths.env missing: run scripts/setup.sh",
            cache.display()
        )
    });
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| PathBuf::from(v.trim_matches('"')))
            .unwrap_or_else(|| panic!("{k} missing from paths.env: re-run scripts/setup.sh"))
    };
    (get("RVNVMM_BUSYBOX"), get("RVNVMM_SYSROOT"))
}

fn programs(kind: &str) -> Vec<PathBuf> {
    let dir = repo().join("guest/build").join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{} missing: run make -C guest", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no guest programs in {}", dir.display());
    v
}

/// Exit status as a shell reports it (128+N for a signal).
fn status(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0))
}

fn run_both(prog: &Path, args: &[&str], sysroot: Option<&Path>) -> Result<(), String> {
    let dir = tempdir();
    let mut q = Command::new("qemu-riscv64");
    if let Some(s) = sysroot {
        q.arg("-L").arg(s);
    }
    let q = q
        .arg(prog)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("qemu-riscv64");
    let dir2 = tempdir();
    let mut r = rvnvmm();
    r.arg("run");
    if let Some(s) = sysroot {
        r.arg("--sysroot").arg(s);
    }
    let r = r
        .arg(prog)
        .args(args)
        .current_dir(&dir2)
        .stdin(Stdio::null())
        .output()
        .expect("rvnvmm");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
    let stderr = String::from_utf8_lossy(&r.stderr);
    if stderr.contains("panicked") {
        return Err(format!("{}: rvnvmm panicked: {stderr}", prog.display()));
    }
    if q.stdout != r.stdout || status(&q) != status(&r) {
        let (qs, rs) = (
            String::from_utf8_lossy(&q.stdout),
            String::from_utf8_lossy(&r.stdout),
        );
        let first = qs.lines().zip(rs.lines()).position(|(a, b)| a != b);
        return Err(format!(
            "{} {:?}: qemu status {} vs rvnvmm {}; first differing line {:?}: qemu {:?} rvnvmm {:?}\nrvnvmm stderr: {}",
            prog.display(),
            args,
            status(&q),
            status(&r),
            first,
            first.and_then(|i| qs.lines().nth(i)),
            first.and_then(|i| rs.lines().nth(i)),
            stderr
        ));
    }
    Ok(())
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "rvnvmm-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The corpus programs that must match qemu-riscv64 exactly. The others in
/// guest/src (fileio, mmap, pthreads, signals, sys_misc) exercise system
/// calls and behaviours still being completed and join this list as they do.
const MATCHING: &[&str] = &[
    "abort_unhandled",
    "atomics",
    "bench_compute",
    "compressed",
    "cxx_basic",
    "execve_self",
    "float_edge",
    "float_print",
    "fork_pipe",
    "int_arith",
    "malloc_stress",
    "segv_unhandled",
    "selfmod",
    "setjmp",
    "stack_overflow",
];

fn differential(kind: &str, sysroot: Option<&Path>) {
    let all = programs(kind);
    let failures: Vec<String> = MATCHING
        .iter()
        .map(|name| match all.iter().find(|p| p.ends_with(name)) {
            Some(p) => run_both(p, &[], sysroot).err(),
            None => Some(format!(
                "{name} missing from guest/build/{kind}: run make -C guest"
            )),
        })
        .flatten()
        .collect();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn static_programs_match_qemu() {
    differential("static", None);
}

#[test]
fn dynamic_programs_match_qemu() {
    let (_, sysroot) = paths();
    differential("dynamic", Some(&sysroot));
}

#[test]
fn busybox_scripts_match_qemu() {
    let (busybox, _) = paths();
    let scripts = [
        "echo hello | md5sum; echo hi | sha256sum",
        "seq 1 20000 > f; gzip -c f > f.gz; gzip -dc f.gz | md5sum; wc -l f",
        "for i in 5 3 9 1; do echo $i; done | sort -n | tr '\\n' ' '; echo",
        "printf 'b 2\\na 1\\nc 3\\n' | awk '{s+=$2; print $1} END {print s}' | sed 's/a/A/'",
        "mkdir -p d/e; echo x > d/e/f; echo y > d/g; find d | sort; tar cf t.tar d; rm -r d; tar xf t.tar; cat d/e/f d/g",
        "x=0; while [ $x -lt 50 ]; do x=$((x+7)); done; echo $x; (exit 3); echo $?",
        "false | true; echo ${?}; sh -c 'exit 7'; echo $?",
    ];
    let failures: Vec<String> = scripts
        .iter()
        .filter_map(|s| run_both(&busybox, &["sh", "-c", s], None).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn assert_clean_error(args: &[&std::ffi::OsStr], what: &str) {
    let o = rvnvmm().args(args).stdin(Stdio::null()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{what}: should fail");
    assert!(o.status.code().is_some(), "{what}: died of a signal: {err}");
    assert!(!err.contains("panicked"), "{what}: panicked: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: want one line, got: {err}");
    assert!(err.starts_with("rvnvmm: "), "{what}: {err}");
}

#[test]
fn bad_input_gives_one_line_errors() {
    let dir = tempdir();
    let good = &programs("static")[0];
    let bytes = std::fs::read(good).unwrap();
    let truncated = dir.join("truncated");
    std::fs::write(&truncated, &bytes[..bytes.len().min(300)]).unwrap();
    let junk = dir.join("junk");
    std::fs::write(
        &junk,
        (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let corrupt = dir.join("corrupt");
    let mut c = bytes.clone();
    c[0x20..0x28].copy_from_slice(&u64::MAX.to_le_bytes()); // e_phoff far outside the file
    std::fs::write(&corrupt, &c).unwrap();
    let empty = dir.join("empty-sysroot");
    std::fs::create_dir_all(&empty).unwrap();
    let dynamic = &programs("dynamic")[0];
    let os = |s: &str| std::ffi::OsString::from(s);
    let run = os("run");
    assert_clean_error(&[&run, truncated.as_os_str()], "truncated ELF");
    assert_clean_error(&[&run, junk.as_os_str()], "random bytes");
    assert_clean_error(&[&run, corrupt.as_os_str()], "corrupt program headers");
    assert_clean_error(&[&run, Path::new("/bin/true").as_os_str()], "x86-64 ELF");
    assert_clean_error(&[&run, dir.join("nonexistent").as_os_str()], "missing file");
    assert_clean_error(
        &[
            &run,
            &os("--sysroot"),
            empty.as_os_str(),
            dynamic.as_os_str(),
        ],
        "missing interpreter",
    );
    assert_clean_error(
        &[&run, &os("--set"), &os("no.such.key=1"), good.as_os_str()],
        "unknown key",
    );
    assert_clean_error(
        &[&run, &os("--set"), &os("machine.hart=2"), good.as_os_str()],
        "misspelt key",
    );
    let o = rvnvmm()
        .args(["run", "--set", "machine.hart=2", "x"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("machine.harts"),
        "suggests the nearest key"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn statistics_are_deterministic() {
    let dir = tempdir();
    let prog = programs("static")
        .into_iter()
        .find(|p| p.ends_with("float_print"))
        .expect("float_print");
    let mut runs = Vec::new();
    for k in 0..2 {
        let stats = dir.join(format!("s{k}.json"));
        let o = rvnvmm()
            .arg("run")
            .arg("--stats")
            .arg(&stats)
            .arg(&prog)
            .output()
            .unwrap();
        assert!(o.status.success());
        let text = std::fs::read_to_string(&stats).unwrap();
        let stable: Vec<String> = text
            .lines()
            .filter(|l| !l.contains("host_seconds") && !l.contains("\"mips\""))
            .map(String::from)
            .collect();
        assert!(text.contains("\"sim_time_ns\"") && text.contains("\"instructions\""));
        runs.push(stable);
    }
    assert_eq!(runs[0], runs[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn root_confines_every_path() {
    let (busybox, _) = paths();
    let base = tempdir();
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("inside.txt"), "inside\n").unwrap();
    std::fs::write(base.join("secret.txt"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink("../../secret.txt", root.join("sub/link")).unwrap();
    std::os::unix::fs::symlink(base.join("secret.txt"), root.join("abs-link")).unwrap();
    let attempts = [
        "/inside.txt",
        "../secret.txt",
        "../../secret.txt",
        "/../secret.txt",
        "sub/link",
        "abs-link",
        "/sub/../../secret.txt",
    ];
    for a in attempts {
        let o = rvnvmm()
            .arg("run")
            .arg("--root")
            .arg(&root)
            .arg(&busybox)
            .args(["cat", a])
            .current_dir(&root)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("SECRET"), "{a} escaped the root: {out}");
        if a == "/inside.txt" {
            assert_eq!(out, "inside\n");
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
