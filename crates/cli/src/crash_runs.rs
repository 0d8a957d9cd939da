//! The child runs of `rvnvmm crashtest` (random and `--explore`): the
//! guests' fixed view of the world and the `rvnvmm run` processes made in
//! it.
//!
//! Every run sees the same guest view wherever the programs and the work
//! directory lie on the host (a crash point is an instruction count, and the
//! guest's stack holds its environment and paths): the program under test
//! and the recovery program at `/crashtest/bin/NAME` (their directory placed
//! there), the work directory as the working directory `/crashtest/work`,
//! and only `--env`'s variables.

use crate::error::CliError;
use crate::MachineArgs;
use rvnvmm_mem::persist::NvmmImage;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) fn path_arg(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

pub(crate) fn read_json(p: &Path) -> Result<serde_json::Value, CliError> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", p.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{} is not JSON: {e}", p.display())))
}

/// Where the work directory is in the guests' view (their working directory).
pub(crate) const WORK_GUEST: &str = "/crashtest/work";
/// Where the program under test and the recovery program are.
pub(crate) const BIN_GUEST: &str = "/crashtest/bin";

/// The guests' fixed view of the world (the module's doc).
pub(crate) struct GuestView {
    /// `--map` arguments, GUEST=HOST.
    pub(crate) maps: Vec<String>,
    /// The whole environment.
    pub(crate) envs: Vec<String>,
    /// The host directories of the programs placed: guest path, host path.
    pub(crate) placed: Vec<(String, PathBuf)>,
}

impl GuestView {
    /// `command` with its program named as the guests see it: a host file
    /// outside the `--map`s is named in its directory placed at
    /// `BIN_GUEST` (the second directory at `BIN_GUEST`2, ...), so that the
    /// files beside it (libraries found by `$ORIGIN`) are there too; a name
    /// a map gives (or a sysroot's) stays.
    pub(crate) fn place(&mut self, command: &[String]) -> Result<Vec<String>, CliError> {
        let mut out = command.to_vec();
        let Some(prog) = out.first_mut() else {
            return Ok(out);
        };
        let mapped = self
            .maps
            .iter()
            .filter_map(|m| m.split_once('=').map(|(g, _)| g))
            .any(|g| {
                prog.strip_prefix(g)
                    .is_some_and(|r| r.is_empty() || r.starts_with('/'))
            });
        let host = Path::new(prog.as_str());
        if mapped || !host.is_file() {
            return Ok(out);
        }
        let host = std::fs::canonicalize(host)
            .map_err(|e| CliError::Usage(format!("cannot use {prog}: {e}")))?;
        let (Some(dir), Some(name)) = (host.parent(), host.file_name()) else {
            return Ok(out);
        };
        let guest_dir = match self.placed.iter().find(|(_, h)| h == dir) {
            Some((g, _)) => g.clone(),
            None => {
                let g = match self.placed.len() {
                    0 => BIN_GUEST.to_string(),
                    n => format!("{BIN_GUEST}{}", n + 1),
                };
                self.maps.push(format!("{g}={}", dir.display()));
                self.placed.push((g.clone(), dir.to_path_buf()));
                g
            }
        };
        *prog = format!("{guest_dir}/{}", name.to_string_lossy());
        Ok(out)
    }

    /// The `rvnvmm run` options of the view.
    fn args(&self) -> Vec<String> {
        let mut v = vec!["--clean-env".to_string(), "--cwd".into(), WORK_GUEST.into()];
        for m in &self.maps {
            v.push("--map".into());
            v.push(m.clone());
        }
        for e in &self.envs {
            v.push("--env".into());
            v.push(e.clone());
        }
        v
    }
}

/// How the child runs are made.
pub(crate) struct Runner<'a> {
    pub(crate) exe: PathBuf,
    pub(crate) view: GuestView,
    pub(crate) machine: MachineArgs,
    pub(crate) region: String,
    pub(crate) sysroot: Option<PathBuf>,
    pub(crate) start: Option<&'a NvmmImage>,
    pub(crate) work: PathBuf,
    /// The child runs' temporary directory (`TMPDIR`), if not the host's.
    pub(crate) scratch: Option<PathBuf>,
    /// The full system's checkpoint (`crashtest --restore`): the runs are
    /// `rvnvmm boot` restored from it, their commands typed at its shell.
    /// `None`: user mode.
    pub(crate) system: Option<PathBuf>,
}

/// How a child run ended: whether the guest's program succeeded, its exit
/// status and what it wrote.
pub(crate) struct ChildRun {
    pub(crate) success: bool,
    pub(crate) status: String,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// The line a full-system run's shell prints after the command, with its
/// exit status. Typed as `rvnvmm-crashtest''-status=$?`, so that the
/// terminal's echo of the typed line never matches it.
const STATUS_LINE: &str = "rvnvmm-crashtest-status=";

/// A temporary directory in memory for the child runs, which each build
/// and remove a tree of small files (the emulated `/proc`, `/sys`): on a
/// disk file system that churn costs more than the runs themselves (40 ms
/// a run against 18 ms in memory, `docs/persistence.md`). Taken only where
/// `/dev/shm` is a memory file system with room; removed when dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    pub(crate) fn new() -> Option<Scratch> {
        let shm = Path::new("/dev/shm");
        // SAFETY: a plain C struct, for which all zeros is a valid value.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: statfs fills the struct it is given; the path is a C string.
        let ok = unsafe { libc::statfs(c"/dev/shm".as_ptr(), &mut st) } == 0;
        let room = st.f_bavail as u64 * st.f_bsize as u64;
        if !ok || st.f_type != libc::TMPFS_MAGIC || room < 1 << 30 {
            return None;
        }
        let dir = shm.join(format!("rvnvmm-crashtest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        Some(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Runner<'_> {
    /// `dst` as the starting image (absent: left to `rvnvmm run` to create
    /// zero). In the full system, the NVMM the checkpoint holds: a restored
    /// machine powered off at once saves it.
    pub(crate) fn fresh_image(&self, dst: &Path) -> Result<(), CliError> {
        let _ = std::fs::remove_file(dst);
        if self.system.is_some() {
            let run = self.child(dst, &[], &[])?;
            if !run.success {
                return Err(CliError::Usage(format!(
                    "the checkpoint's machine did not power off cleanly ({}):\n{}",
                    run.status, run.stderr
                )));
            }
            return Ok(());
        }
        if let Some(img) = self.start {
            img.copy_to(dst)?;
        }
        Ok(())
    }

    /// `command` (after `options`) on image `img`: an `rvnvmm run` of the
    /// program in user mode; in the full system, the checkpoint restored
    /// with the command line typed at its shell (none: it powers off at
    /// once), its exit status read from the console.
    fn child(
        &self,
        img: &Path,
        options: &[String],
        command: &[String],
    ) -> Result<ChildRun, CliError> {
        let Some(checkpoint) = &self.system else {
            let mut args = options.to_vec();
            args.push("--".into());
            args.extend(command.iter().cloned());
            let out = self.run(img, &args)?;
            return Ok(ChildRun {
                success: out.status.success(),
                status: out.status.to_string(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        };
        let mut c = Command::new(&self.exe);
        c.arg("boot").arg("--restore").arg(checkpoint);
        self.machine_on(&mut c, img);
        c.args(options);
        let mut input = String::new();
        if !command.is_empty() {
            input += &format!("{}\necho rvnvmm-crashtest''-status=$?\n", command.join(" "));
        }
        input += "poweroff -f\n";
        let out = run_with_input(c, input.as_bytes())
            .map_err(|e| CliError::Usage(format!("cannot run {}: {e}", self.exe.display())))?;
        let console = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if command.is_empty() {
            return Ok(ChildRun {
                success: out.status.success(),
                status: out.status.to_string(),
                stdout: console,
                stderr,
            });
        }
        // The command's output: the console between the typed command's
        // echo and the status line.
        let lines: Vec<&str> = console.lines().collect();
        let Some(at) = lines.iter().position(|l| l.starts_with(STATUS_LINE)) else {
            let tail = lines[lines.len().saturating_sub(8)..].join("\n    ");
            return Err(CliError::Usage(format!(
                "the full-system run ({}) never printed the command's exit status; the console ended:\n    {tail}\n{stderr}",
                out.status
            )));
        };
        let code = lines[at][STATUS_LINE.len()..].trim().to_string();
        // The echo of the typed status line ends the output.
        let to = lines[..at]
            .iter()
            .rposition(|l| l.contains("rvnvmm-crashtest''-status"))
            .unwrap_or(at);
        let from = lines[..to]
            .iter()
            .rposition(|l| l.contains(&command.join(" ")))
            .map_or(0, |i| i + 1);
        Ok(ChildRun {
            success: code == "0",
            status: format!("exit status: {code}"),
            stdout: lines[from..to].join("\n"),
            stderr,
        })
    }

    /// The machine's options for `c`, with image `img`.
    fn machine_on(&self, c: &mut Command, img: &Path) {
        if let Some(cfg) = &self.machine.config {
            c.arg("--config").arg(cfg);
        }
        for s in &self.machine.sets {
            c.arg("--set").arg(s);
        }
        c.arg("--set")
            .arg(format!("memory.{}.image={}", self.region, path_arg(img)));
    }

    /// `rvnvmm run` on image `img` with `args` (options, then `--` and the
    /// program).
    pub(crate) fn run(
        &self,
        img: &Path,
        args: &[String],
    ) -> Result<std::process::Output, CliError> {
        let mut c = Command::new(&self.exe);
        c.arg("run").arg("--no-progress");
        self.machine_on(&mut c, img);
        if let Some(s) = &self.sysroot {
            c.arg("--sysroot").arg(s);
        }
        c.args(self.view.args());
        if let Some(dir) = &self.scratch {
            c.env("TMPDIR", dir);
        }
        c.args(args).stdin(Stdio::null());
        c.output()
            .map_err(|e| CliError::Usage(format!("cannot run {}: {e}", self.exe.display())))
    }

    /// The run of `command` (after `options`) on image `img` that a crash
    /// test learns from (`what`: what it learns): it must succeed.
    pub(crate) fn learning_run(
        &self,
        img: &Path,
        options: &[String],
        command: &[String],
        what: &str,
    ) -> Result<(), CliError> {
        let out = self.child(img, options, command)?;
        if !out.success {
            return Err(CliError::Usage(format!(
                "{} exited with {} in the run that {what} (it must succeed without a crash):\n{}\n{}",
                command.join(" "),
                out.status,
                out.stdout,
                out.stderr
            )));
        }
        Ok(())
    }

    /// Runs the recovery program `recover` on image `img` (after
    /// `options`): `None` if it found the image consistent, else why not
    /// (its exit status and the last line it wrote, on stdout or else on
    /// stderr).
    pub(crate) fn recovery(
        &self,
        img: &Path,
        options: &[String],
        recover: &[String],
    ) -> Result<Option<String>, CliError> {
        let out = self.child(img, options, recover)?;
        if out.success {
            return Ok(None);
        }
        let last = |s: &str| s.lines().last().unwrap_or("").trim().to_string();
        let said = match last(&out.stdout) {
            s if s.is_empty() => last(&out.stderr),
            s => s,
        };
        Ok(Some(format!("recovery exited with {}: {said}", out.status)))
    }
}

/// Runs `c` with `input` on its stdin, collecting its output.
fn run_with_input(mut c: Command, input: &[u8]) -> std::io::Result<std::process::Output> {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    // Written from a thread: the child's output is read meanwhile.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output();
    let _ = writer.join();
    out
}
