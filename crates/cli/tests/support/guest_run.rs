//! Running a guest program (under rvnvmm or qemu-riscv64) for the
//! integration tests that compare the two: a clean environment, a working
//! directory of its own, a timeout, and a shell-pasteable command line for
//! the failure message. Included with `#[path]` by the tests that need it.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// `s` quoted for a POSIX shell.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A fresh directory under the system's temporary directory, removed on
/// drop unless `keep`.
pub struct TempDir {
    pub path: PathBuf,
    keep: bool,
}

impl TempDir {
    pub fn new(tag: &str, keep: bool) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("rvnvmm-test-{}-{n}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
        TempDir { path, keep }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// How a run ended.
pub struct Run {
    /// The command line, to paste into a shell.
    pub command: String,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Exit code, or 128 + signal.
    pub status: i32,
    #[allow(dead_code)] // not every test looks at the raw status
    pub raw: ExitStatus,
    pub timed_out: bool,
}

/// Exit code, or 128 + the signal that ended the process.
pub fn normalise(st: ExitStatus) -> i32 {
    match (st.code(), st.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => -1,
    }
}

fn spawn_reader<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Runs `cmd` in `cwd` with only PATH=`path`, TMPDIR=HOME=`cwd` and
/// LC_ALL=C in its environment and no stdin, killing it after `timeout`.
pub fn run_command(mut cmd: Command, cwd: &Path, path: &Path, timeout: Duration) -> Run {
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("TMPDIR", cwd)
        .env("HOME", cwd)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let command = show_command(&cmd, cwd, path);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    let out = spawn_reader(child.stdout.take().expect("stdout"));
    let err = spawn_reader(child.stderr.take().expect("stderr"));
    let start = Instant::now();
    let mut timed_out = false;
    let raw = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {
                if start.elapsed() > timeout {
                    timed_out = true;
                    let _ = child.kill();
                    break child.wait().expect("wait after kill");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("wait for {command}: {e}"),
        }
    };
    // A guest child that outlives the process could keep the pipes open;
    // bound the wait for EOF.
    let stdout = join_bounded(out, Duration::from_secs(30));
    let stderr = join_bounded(err, Duration::from_secs(30));
    Run {
        command,
        stdout,
        stderr,
        status: normalise(raw),
        raw,
        timed_out,
    }
}

/// A shell-pasteable rendering of a command line with its environment.
fn show_command(cmd: &Command, cwd: &Path, path: &Path) -> String {
    let mut parts = vec![sh_quote(&cmd.get_program().to_string_lossy())];
    parts.extend(cmd.get_args().map(|a| sh_quote(&a.to_string_lossy())));
    format!(
        "cd {cwd} && env -i PATH={path} TMPDIR={cwd} HOME={cwd} LC_ALL=C {cmd} </dev/null",
        cwd = sh_quote(&cwd.to_string_lossy()),
        path = sh_quote(&path.to_string_lossy()),
        cmd = parts.join(" ")
    )
}

fn join_bounded(h: std::thread::JoinHandle<Vec<u8>>, limit: Duration) -> Vec<u8> {
    let start = Instant::now();
    while !h.is_finished() {
        if start.elapsed() > limit {
            return b"<output pipe still open after the process ended>".to_vec();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    h.join().unwrap_or_default()
}

/// The last `max` bytes of `bytes` as text.
pub fn tail_text(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    if s.len() <= max {
        return s.into_owned();
    }
    let mut cut = s.len() - max;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    format!("...{}", &s[cut..])
}
