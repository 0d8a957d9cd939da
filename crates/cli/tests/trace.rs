//! `rvnvmm run --trace` against qemu-riscv64's execution log: both
//! emulators must execute the same sequence of program counters.
//!
//! Method, per program (small static guest programs of `make -C guest`):
//!
//! * qemu runs as `qemu-riscv64 -singlestep -d nochain,exec PROGRAM`
//!   (`-singlestep` is qemu 7.2's name for what 8.1 and later call
//!   `-one-insn-per-tb`, used when `-h` lists it): every translation block
//!   is one instruction, and with chaining off each block's execution is
//!   logged on stderr as `Trace N: HOSTPTR [CS_BASE/PC/FLAGS/CFLAGS]
//!   SYMBOL`. rvnvmm runs as
//!   `rvnvmm run --trace PROGRAM`, which prints `HART PC DISASSEMBLY` on
//!   stderr. Both get the same argv, an empty environment, /dev/null as
//!   stdin and stdout, and a fresh working directory. Both logs are read as
//!   they come and the emulators are killed once enough has been compared.
//! * Comparison starts at the first execution of `main` (from the ELF
//!   symbol table). Before it, glibc's start-up legitimately depends on
//!   what the two user-mode kernels pass: rvnvmm's auxiliary vector has
//!   `AT_PLATFORM` and `AT_HWCAP2`, qemu 7.2's has neither, so the loop in
//!   `_dl_aux_init` runs a different number of times.
//! * A PC outside the program's `PT_LOAD` segments (code the program maps
//!   itself, the signal-return trampoline) compares only as "outside":
//!   the two emulators put those pages at different addresses.
//! * rvnvmm's trace lists retired instructions only (`--stats` counts the
//!   same number). qemu logs every block it starts, so an instruction that
//!   faults appears in its log and not in ours: a qemu line whose successor
//!   matches our next line is skipped. A line that repeats the previous
//!   line's PC in one trace only (an instruction restarted after a fault
//!   the emulator handled itself) is skipped too. A real loop on one
//!   instruction repeats in both traces and still has to match.
//! * The test passes when [`COMPARED`] instructions from `main` match, or
//!   both programs end together with the same exit status. Otherwise it
//!   reports the first divergence with the instructions around it.
//!
//! Needs `make -C guest` and `qemu-riscv64` (see `scripts/setup.sh`).

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Instructions compared from `main` on.
const COMPARED: usize = 200_000;

/// Where the program's own code is, and where `main` starts.
struct Image {
    main: u64,
    segments: Vec<(u64, u64)>,
}

impl Image {
    fn load(path: &Path) -> Image {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let elf = goblin::elf::Elf::parse(&bytes)
            .unwrap_or_else(|e| panic!("{} is not an ELF file: {e}", path.display()));
        assert_eq!(
            elf.header.e_type,
            goblin::elf::header::ET_EXEC,
            "{}: the trace test wants a position-dependent static program",
            path.display()
        );
        let main = elf
            .syms
            .iter()
            .find(|s| s.is_function() && elf.strtab.get_at(s.st_name) == Some("main"))
            .map(|s| s.st_value)
            .unwrap_or_else(|| panic!("{} has no symbol `main`", path.display()));
        let segments = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
            .map(|p| (p.p_vaddr, p.p_vaddr + p.p_memsz))
            .collect();
        Image { main, segments }
    }

    /// The PC as compared: itself inside the program, `None` outside.
    fn norm(&self, pc: u64) -> Option<u64> {
        self.segments
            .iter()
            .any(|&(a, b)| (a..b).contains(&pc))
            .then_some(pc)
    }
}

/// One executed instruction: its PC and the log line it came from.
struct Step {
    pc: u64,
    line: String,
}

/// A trace from `main` on.
struct Trace {
    steps: Vec<Step>,
    /// Whether the program ended before the trace was cut short.
    complete: bool,
    /// Exit status (128 + signal for a signal) when complete.
    status: Option<i32>,
    /// Log lines before `main`.
    before_main: usize,
}

/// `0 0000000000010744 jal ra,10766` -> 0x10744.
fn rvnvmm_pc(line: &str) -> Option<u64> {
    let mut f = line.splitn(3, ' ');
    let hart = f.next()?;
    let pc = f.next()?;
    if hart.is_empty() || !hart.bytes().all(|c| c.is_ascii_digit()) || pc.len() != 16 {
        return None;
    }
    u64::from_str_radix(pc, 16).ok()
}

/// `Trace 0: 0x7f8fec000100 [0000000000000000/0000000000010744/00207600/00000201] _start`
/// -> 0x10744.
fn qemu_pc(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("Trace ")?;
    let inside = rest.split_once('[')?.1.split_once(']')?.0;
    let pc = inside.split('/').nth(1)?;
    u64::from_str_radix(pc, 16).ok()
}

/// Reads the child's stderr until `limit` steps from `main` are in, then
/// kills it.
fn collect(mut child: Child, parse: fn(&str) -> Option<u64>, main: u64, limit: usize) -> Trace {
    let stderr = child.stderr.take().expect("piped stderr");
    let mut steps = Vec::with_capacity(limit + 64);
    let mut before_main = 0;
    let mut started = false;
    let mut complete = true;
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        let Some(pc) = parse(&line) else { continue };
        if !started {
            if pc != main {
                before_main += 1;
                continue;
            }
            started = true;
        }
        steps.push(Step { pc, line });
        // Some slack for skipped repeats.
        if steps.len() >= limit + limit / 8 {
            complete = false;
            break;
        }
    }
    if !complete {
        let _ = child.kill();
    }
    let st = child.wait().expect("wait");
    let status = complete.then(|| st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)));
    Trace {
        steps,
        complete,
        status,
        before_main,
    }
}

struct WorkDir(PathBuf);

impl WorkDir {
    fn new(tag: &str) -> WorkDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "rvnvmm-trace-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("mkdir {}: {e}", p.display()));
        WorkDir(p)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spawn(mut cmd: Command, cwd: &Path) -> Child {
    cmd.current_dir(cwd)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd.spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()))
}

/// qemu's option for one-instruction translation blocks: `-one-insn-per-tb`
/// from 8.1 on, `-singlestep` before.
fn one_insn_per_tb(qemu: &Path) -> &'static str {
    let help = Command::new(qemu)
        .arg("-h")
        .stdin(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if help.contains("-one-insn-per-tb") {
        "-one-insn-per-tb"
    } else {
        "-singlestep"
    }
}

/// Runs `name` under both emulators and compares the traces.
fn check(name: &str) {
    let hint = artefacts::SETUP_HINT;
    let dir = artefacts::guest_build().join("static");
    let prog = artefacts::guest_program(&dir, name).unwrap_or_else(|e| panic!("{e}\n{hint}"));
    let qemu = artefacts::qemu().unwrap_or_else(|e| panic!("{e}\n{hint}"));
    let image = Image::load(&prog);

    let qdir = WorkDir::new(&format!("{name}-qemu"));
    let mut qc = Command::new(&qemu);
    qc.args([one_insn_per_tb(&qemu), "-d", "nochain,exec"])
        .arg(&prog);
    let qchild = spawn(qc, &qdir.0);

    let rdir = WorkDir::new(&format!("{name}-rvnvmm"));
    let mut rc = Command::new(env!("CARGO_BIN_EXE_rvnvmm"));
    rc.args(["run", "--trace"]).arg(&prog);
    let rchild = spawn(rc, &rdir.0);

    let main = image.main;
    let qthread = std::thread::spawn(move || collect(qchild, qemu_pc, main, COMPARED));
    let r = collect(rchild, rvnvmm_pc, main, COMPARED);
    let q = qthread.join().expect("qemu reader");

    assert!(
        !q.steps.is_empty(),
        "{name}: qemu's log never reached main ({:#x}) after {} lines; \
         does this qemu-riscv64 accept `-singlestep` or `-one-insn-per-tb` and \
         `-d nochain,exec`?",
        main,
        q.before_main
    );
    assert!(
        !r.steps.is_empty(),
        "{name}: rvnvmm's trace never reached main ({main:#x}) after {} lines",
        r.before_main
    );
    compare(name, &image, &q, &r);
}

/// Aligns the two traces as the module documentation describes; panics at
/// the first divergence.
fn compare(name: &str, image: &Image, q: &Trace, r: &Trace) {
    let (qs, rs) = (&q.steps, &r.steps);
    let (mut i, mut j) = (0, 0);
    let (mut matched, mut q_repeats, mut r_repeats) = (0usize, 0usize, 0usize);
    // The last matched pairs, for context.
    let mut recent: VecDeque<(usize, usize)> = VecDeque::new();
    while matched < COMPARED && i < qs.len() && j < rs.len() {
        if image.norm(qs[i].pc) == image.norm(rs[j].pc) {
            recent.push_back((i, j));
            if recent.len() > 12 {
                recent.pop_front();
            }
            matched += 1;
            i += 1;
            j += 1;
        } else if j > 0 && rs[j].pc == rs[j - 1].pc {
            r_repeats += 1;
            j += 1;
        } else if i > 0 && qs[i].pc == qs[i - 1].pc {
            q_repeats += 1;
            i += 1;
        } else if i + 1 < qs.len() && qs[i + 1].pc == rs[j].pc {
            // qemu logs an instruction that faulted (its block started);
            // rvnvmm's trace lists retired instructions only.
            q_repeats += 1;
            i += 1;
        } else {
            panic!("{}", divergence(name, q, r, i, j, matched, &recent));
        }
    }
    if matched >= COMPARED {
        return;
    }
    // One trace ran out: both programs must have ended here, the same way.
    let q_left = qs.len() - i;
    let r_left = rs.len() - j;
    let tail_repeats =
        |s: &[Step], from: usize| (from..s.len()).all(|k| k > 0 && s[k].pc == s[k - 1].pc);
    let both_ended = q.complete
        && r.complete
        && (q_left == 0 || tail_repeats(qs, i))
        && (r_left == 0 || tail_repeats(rs, j));
    if !both_ended || q.status != r.status {
        let mut msg = divergence(name, q, r, i, j, matched, &recent);
        let _ = writeln!(
            msg,
            "qemu: {} more steps, ended: {} (status {:?}); \
             rvnvmm: {} more steps, ended: {} (status {:?})",
            q_left, q.complete, q.status, r_left, r.complete, r.status
        );
        panic!("{msg}");
    }
    assert!(
        matched > 1000,
        "{name}: only {matched} instructions from main compared; pick a longer program"
    );
    eprintln!(
        "{name}: {matched} instructions from main identical to the end \
         (skipped repeats: rvnvmm {r_repeats}, qemu {q_repeats})"
    );
}

fn divergence(
    name: &str,
    q: &Trace,
    r: &Trace,
    i: usize,
    j: usize,
    matched: usize,
    recent: &VecDeque<(usize, usize)>,
) -> String {
    let mut s = format!(
        "{name}: rvnvmm's trace diverges from qemu's after {matched} matching instructions \
         from main (qemu step {i}, rvnvmm step {j}; qemu had {} and rvnvmm {} log lines \
         before main)\n",
        q.before_main, r.before_main
    );
    let _ = writeln!(s, "last matching instructions (rvnvmm trace | qemu log):");
    for &(a, b) in recent {
        let _ = writeln!(s, "    {:<48} | {}", r.steps[b].line, q.steps[a].line);
    }
    let _ = writeln!(s, "then rvnvmm:");
    for st in r.steps.iter().skip(j).take(6) {
        let _ = writeln!(s, "  > {}", st.line);
    }
    if j >= r.steps.len() {
        let _ = writeln!(s, "  > <end of trace>");
    }
    let _ = writeln!(s, "and qemu:");
    for st in q.steps.iter().skip(i).take(6) {
        let _ = writeln!(s, "  > {}", st.line);
    }
    if i >= q.steps.len() {
        let _ = writeln!(s, "  > <end of log>");
    }
    s
}

macro_rules! trace_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
    };
}

// Short programs compared to their end, longer ones for COMPARED
// instructions; together they cover RVC, M, A, F/D, signals (through the
// trampoline and back), self-modifying code and stack growth.
trace_tests! {
    atomics,
    compressed,
    float_edge,
    int_arith,
    selfmod,
    setjmp,
    signals,
    stack_overflow,
}

#[test]
fn parsers() {
    assert_eq!(rvnvmm_pc("0 0000000000010744 jal ra,10766"), Some(0x10744));
    assert_eq!(rvnvmm_pc("rvnvmm: something else"), None);
    assert_eq!(
        qemu_pc(
            "Trace 0: 0x7f8fec000100 [0000000000000000/0000000000010744/00207600/00000201] _start"
        ),
        Some(0x10744)
    );
    assert_eq!(
        qemu_pc("Linking TBs 0x1 [0000000000010744] index 0 -> 0x2"),
        None
    );
}
