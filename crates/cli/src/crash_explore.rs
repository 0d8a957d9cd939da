//! `rvnvmm crashtest --explore`: the program runs once with its
//! persistence trace recorded; every crash state of every ordering point
//! is then made from the trace as an image overlay (`rvnvmm_explore`), and
//! the recovery program runs on each distinct image, `--jobs` at a time.
//! Failing states are described by the stores behind them, named by
//! source line (`rvnvmm_symbols`); without a recovery program only the
//! lint is given.

use crate::crash_runs::{path_arg, Runner};
use crate::error::CliError;
use rvnvmm_explore::file::TraceFile;
use rvnvmm_explore::replay::{Choice, Options as ReplayOptions, Replay, StartImage};
use rvnvmm_explore::states::{Fingerprint, State};
use rvnvmm_explore::{describe, minimal_failures, store_of, Explorer, Job, PointInfo, Side};
use rvnvmm_symbols::{MappedObject, Symbolizer};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The choices of an exploration.
pub struct Options {
    /// See `rvnvmm_explore::replay::Options`.
    pub reorder: bool,
    /// See `rvnvmm_explore::replay::Options`.
    pub torn: Option<u64>,
    /// See `rvnvmm_explore::replay::Options`.
    pub at_insns: Vec<u64>,
    /// States checked at most per point.
    pub max_states: usize,
    /// Recovery runs at a time.
    pub jobs: usize,
    /// The domain, for the report.
    pub persistence: rvnvmm_config::Persistence,
    /// `--symbols`: ELF files of the full system's programs, `FILE[@BASE]`.
    pub symbols: Vec<String>,
}

/// The starting image, read line by line.
struct ImageFile(Option<File>);

impl StartImage for ImageFile {
    fn read(&mut self, offset: u64, len: usize) -> Arc<[u8]> {
        let mut buf = vec![0u8; len];
        if let Some(f) = &self.0 {
            let mut done = 0;
            while done < len {
                match f.read_at(&mut buf[done..], offset + done as u64) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => done += n,
                }
            }
        }
        buf.into()
    }
}

/// What the recovery made of one image.
struct Verdict {
    job: Job,
    /// `None`: consistent; otherwise why not.
    failure: Option<String>,
}

/// Runs the exploration; the exit status is 1 if a state failed.
pub fn run(
    runner: &Runner<'_>,
    opts: &Options,
    command: &[String],
    recover: &[String],
) -> Result<i32, CliError> {
    let work = &runner.work;
    // The starting image every state is made over (never written to).
    let start_img = work.join("start.img");
    runner.fresh_image(&start_img)?;
    // The run that records the trace, on its own copy.
    let learn_img = work.join("learn.img");
    runner.fresh_image(&learn_img)?;
    let trace_file = work.join("trace.bin");
    let options = ["--persist-trace".to_string(), path_arg(&trace_file)];
    runner.learning_run(&learn_img, &options, command, "records its trace")?;
    let trace =
        rvnvmm_explore::file::read(&trace_file).map_err(|e| CliError::Usage(e.to_string()))?;
    if trace.truncated {
        return Err(CliError::Usage(
            "the persistence trace outgrew its bound and is incomplete: explore a shorter run"
                .into(),
        ));
    }
    if !start_img.exists() {
        // No image configured: the region starts zero.
        File::create(&start_img)
            .and_then(|f| f.set_len(trace.size))
            .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", start_img.display())))?;
    }
    let replay_opts = ReplayOptions {
        at_insns: opts.at_insns.clone(),
        reorder: opts.reorder,
        torn: opts.torn,
        ..ReplayOptions::default()
    };
    let open_start = || ImageFile(File::open(&start_img).ok());
    check_trace_is_complete(&trace, open_start(), &learn_img, &start_img)?;
    let symbols = Namer::new(runner, &trace, &opts.symbols)?;
    let name = |r: &TraceRecord| symbols.site(r.pc, trace.calls_of(r));

    println!(
        "crashtest --explore: {}: {} instructions, {} stores and writes to NVMM, {} flushes, {} fences (persistence {}{}{})",
        command.join(" "),
        trace.instructions,
        count(&trace, |k| matches!(k, Kind::Store | Kind::Write)),
        count(&trace, |k| matches!(k, Kind::Flush | Kind::FlushAll)),
        count(&trace, |k| matches!(k, Kind::Fence)),
        opts.persistence,
        if opts.reorder { ", reorder" } else { "" },
        opts.torn.map(|t| format!(", torn {t}")).unwrap_or_default(),
    );

    let started = std::time::Instant::now();
    let mut explorer = Explorer::new(
        Replay::new(&trace, open_start(), replay_opts),
        opts.max_states,
    );
    let verdicts: Mutex<Vec<Verdict>> = Mutex::new(Vec::new());
    let checked = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let terminal = std::io::stderr().is_terminal();
    let run_error: Mutex<Option<CliError>> = Mutex::new(None);
    if !recover.is_empty() {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Job)>(opts.jobs * 4);
        let rx = Mutex::new(rx);
        std::thread::scope(|s| {
            for _ in 0..opts.jobs {
                s.spawn(|| loop {
                    let next = rx.lock().expect("no worker panics").recv();
                    let Ok((n, job)) = next else { break };
                    match check(runner, work, n, &job, recover, &start_img) {
                        Ok(failure) => {
                            failed.fetch_add(failure.is_some() as usize, Ordering::SeqCst);
                            verdicts
                                .lock()
                                .expect("no worker panics")
                                .push(Verdict { job, failure });
                        }
                        Err(e) => {
                            run_error.lock().expect("no worker panics").get_or_insert(e);
                        }
                    }
                    let d = checked.fetch_add(1, Ordering::SeqCst) + 1;
                    if terminal {
                        let mut err = std::io::stderr().lock();
                        let _ = write!(
                            err,
                            "\r\x1b[Kcrashtest --explore: {d} images checked, {} failed, {:.0} s",
                            failed.load(Ordering::SeqCst),
                            started.elapsed().as_secs_f64()
                        );
                        let _ = err.flush();
                    }
                });
            }
            let mut n = 0;
            while let Some(jobs) = explorer.next_jobs() {
                if run_error.lock().expect("no worker panics").is_some() {
                    break;
                }
                for job in jobs {
                    if tx.send((n, job)).is_err() {
                        break;
                    }
                    n += 1;
                }
            }
            drop(tx);
        });
        if terminal {
            eprint!("\r\x1b[K");
        }
        if let Some(e) = run_error.into_inner().expect("no worker panics") {
            return Err(e);
        }
    } else {
        while explorer.next_jobs().is_some() {}
    }
    let seconds = started.elapsed().as_secs_f64();
    let points = &explorer.points;
    let states: usize = points.iter().map(|p| p.states.len()).sum();
    let images: usize = points.iter().map(|p| p.new_images).sum();
    let capped = points
        .iter()
        .filter(|p| p.possible > p.states.len() as u128)
        .count();
    let verdicts: HashMap<Fingerprint, Option<String>> = verdicts
        .into_inner()
        .expect("no worker panics")
        .into_iter()
        .map(|v| (v.job.fingerprint, v.failure))
        .collect();
    let fails: Vec<&String> = verdicts.values().flatten().collect();
    if recover.is_empty() {
        println!(
            "{} ordering points, {states} crash states ({images} distinct images); no --recover: not checked",
            points.len()
        );
    } else {
        // The rate on stderr: stdout is the same from run to run.
        eprintln!(
            "crashtest --explore: {images} images checked in {seconds:.1} s ({:.0} a minute, --jobs {})",
            images as f64 * 60.0 / seconds.max(1e-3),
            opts.jobs
        );
        println!(
            "{} ordering points, {states} crash states, {images} distinct images checked: {} passed, {} failed{}",
            points.len(),
            images - fails.len(),
            fails.len(),
            if capped > 0 {
                format!("; {capped} points had more states than --max-states-per-point")
            } else {
                String::new()
            }
        );
    }
    let has_source = |pc: u64| symbols.has_source(pc);
    report_failures(&trace, points, &verdicts, &name, &has_source);
    report_lint(&trace, explorer.replay(), &name, &|pc| symbols.name(pc));
    Ok(if fails.is_empty() { 0 } else { 1 })
}

use rvnvmm_mem::persist_trace::{TraceKind as Kind, TraceRecord};

fn count(t: &TraceFile, f: impl Fn(Kind) -> bool) -> usize {
    t.records.iter().filter(|r| f(r.kind)).count()
}

/// Replays the whole trace and compares the result with the image the
/// run left: a write to NVMM the trace missed would make every state
/// wrong, so it is an error, never silently explored.
fn check_trace_is_complete(
    trace: &TraceFile,
    start: ImageFile,
    learn_img: &Path,
    start_img: &Path,
) -> Result<(), CliError> {
    let mut replay = Replay::new(trace, start, ReplayOptions::default());
    while replay.next_point().is_some() {}
    let ended = File::open(learn_img)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", learn_img.display())))?;
    let ranges = data_ranges(&ended, trace.size);
    let mut ended = ImageFile(Some(ended));
    let lb = trace.line_bytes as usize;
    let mut touched = std::collections::HashSet::new();
    for (line, bytes) in replay.final_lines() {
        touched.insert(line);
        if ended.read(line, lb)[..] != bytes[..] {
            return Err(incomplete(line));
        }
    }
    // Lines the trace never touched must be as they were.
    let mut before = ImageFile(File::open(start_img).ok());
    for (from, to) in ranges {
        let mut at = from & !(lb as u64 - 1);
        while at < to {
            if !touched.contains(&at) && before.read(at, lb) != ended.read(at, lb) {
                return Err(incomplete(at));
            }
            at += lb as u64;
        }
    }
    Ok(())
}

fn incomplete(line: u64) -> CliError {
    CliError::Usage(format!(
        "the persistence trace does not account for the run's writes to NVMM (line at offset {line:#x} of the region differs from the replay): a writer rvnvmm does not trace; the crash states would be wrong, so nothing is explored"
    ))
}

/// The ranges of `f` holding data (`SEEK_DATA`/`SEEK_HOLE`), within `size`.
fn data_ranges(f: &File, size: u64) -> Vec<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let mut out = Vec::new();
    let mut at: i64 = 0;
    while (at as u64) < size {
        // SAFETY: lseek on a descriptor we own.
        let data = unsafe { libc::lseek(f.as_raw_fd(), at, libc::SEEK_DATA) };
        if data < 0 {
            break;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), data, libc::SEEK_HOLE) };
        let hole = if hole < 0 { size as i64 } else { hole };
        out.push((data as u64, (hole as u64).min(size)));
        at = hole;
    }
    out
}

/// Names PCs: a process's code by the DWARF and symbols of the files
/// mapped there, the kernel's by its System.map.
struct Namer {
    user: Symbolizer,
    kernel: Option<rvnvmm_board::profile::Symbols>,
}

/// Where the kernel's half of the address space begins (Sv39 to Sv57).
const KERNEL_HALF: u64 = 1 << 63;

impl Namer {
    /// In user mode, the code the trace's run had mapped; in the full
    /// system, the `--symbols` files and the System.map beside the
    /// checkpoint's kernel.
    fn new(runner: &Runner<'_>, trace: &TraceFile, files: &[String]) -> Result<Namer, CliError> {
        let mut objects: Vec<MappedObject> = trace
            .code
            .iter()
            .filter_map(|m| {
                Some(MappedObject {
                    guest_path: m.guest_path.clone(),
                    host_path: PathBuf::from(m.host_path.as_ref()?),
                    start: m.start,
                    end: m.end,
                    file_offset: m.offset,
                })
            })
            .collect();
        for f in files {
            let (path, base) = match f.rsplit_once('@') {
                Some((p, b)) => {
                    let hex = b.trim_start_matches("0x");
                    let base = u64::from_str_radix(hex, 16).map_err(|_| {
                        CliError::Usage(format!("--symbols {f}: BASE must be hexadecimal"))
                    })?;
                    (p, base)
                }
                None => (f.as_str(), 0),
            };
            let path = Path::new(path);
            let shown = path
                .file_name()
                .map_or(f.clone(), |n| n.to_string_lossy().into());
            objects.extend(
                MappedObject::loaded(&shown, path, base)
                    .map_err(|e| CliError::Usage(format!("--symbols: {e}")))?,
            );
        }
        let kernel = match &runner.system {
            Some(dir) => checkpoint_kernel(dir)
                .and_then(|k| rvnvmm_board::profile::Symbols::beside(&k))
                .and_then(|map| std::fs::read_to_string(map).ok())
                .map(|text| rvnvmm_board::profile::Symbols::parse(&text)),
            None => None,
        };
        Ok(Namer {
            user: Symbolizer::new(objects),
            kernel,
        })
    }

    fn name(&self, pc: u64) -> String {
        if pc >= KERNEL_HALF {
            // Outside the System.map's range: a module's code.
            return match self.kernel.as_ref().and_then(|k| k.lookup(pc)) {
                Some((f, off)) => format!("kernel {f}+{off:#x}"),
                None => format!("kernel {pc:#x}"),
            };
        }
        self.user.locate(pc).to_string()
    }

    /// `pc` named, and where it has no source line (a library's code) the
    /// innermost call site of `calls` that has one: "undo_log+0x12d1e
    /// (nvmm_flush.part.0) called from undo_log.c:119 (transaction)".
    fn site(&self, pc: u64, calls: &[u64]) -> String {
        let mut s = self.name(pc);
        if pc < KERNEL_HALF && !self.has_source(pc) {
            // A return address is the instruction after the call.
            if let Some(call) = calls
                .iter()
                .rev()
                .map(|r| r.wrapping_sub(1))
                .find(|&c| self.has_source(c))
            {
                s += &format!(" called from {}", self.name(call));
            }
        }
        s
    }

    fn has_source(&self, pc: u64) -> bool {
        pc < KERNEL_HALF && self.user.locate(pc).line.is_some()
    }
}

/// The kernel a full-system checkpoint was booted from (its manifest).
fn checkpoint_kernel(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(PathBuf::from(v["boot"]["kernel"]["path"].as_str()?))
}

/// Runs the recovery on the image of `job`; `None` if it found it
/// consistent.
fn check(
    runner: &Runner<'_>,
    work: &Path,
    n: usize,
    job: &Job,
    recover: &[String],
    start_img: &Path,
) -> Result<Option<String>, CliError> {
    let overlay = work.join(format!("state-{n}.ovl"));
    let mut bytes = Vec::new();
    let entries = job
        .base
        .iter()
        .chain(job.choices.iter())
        .map(|(o, b)| (*o, &b[..]))
        .collect::<Vec<_>>();
    rvnvmm_explore::overlay::write(&mut bytes, entries.into_iter()).expect("writing to memory");
    std::fs::write(&overlay, &bytes)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", overlay.display())))?;
    let options = ["--image-overlay".to_string(), path_arg(&overlay)];
    let verdict = runner.recovery(start_img, &options, recover);
    let _ = std::fs::remove_file(&overlay);
    verdict
}

/// Where a point is: before a fence (named), or at the end.
fn point_name(trace: &TraceFile, p: &PointInfo, name: &dyn Fn(&TraceRecord) -> String) -> String {
    if p.requested {
        return format!("instruction {} (asked for)", p.insn);
    }
    match trace.records.get(p.record) {
        Some(r) if r.kind == Kind::Fence => format!("the fence at {}", name(r)),
        Some(r) => format!("the store at {}", name(r)),
        None => "the program's end".to_string(),
    }
}

/// The store behind a value, named.
fn store_name(trace: &TraceFile, c: &Choice, name: &dyn Fn(&TraceRecord) -> String) -> String {
    match store_of(c).map(|r| &trace.records[r]) {
        Some(r) if r.kind == Kind::Write => "a system call's write".to_string(),
        Some(r) => format!("store at {}", name(r)),
        None => "the starting image".to_string(),
    }
}

/// Units described per failing state; the rest are counted.
const MAX_LINES: usize = 4;

/// One failing state, described: its culprits (the key failures are
/// grouped by), its headline and one line per unit.
fn diagnosis(
    trace: &TraceFile,
    p: &PointInfo,
    state: &State,
    failure: &str,
    name: &dyn Fn(&TraceRecord) -> String,
    has_source: &dyn Fn(u64) -> bool,
) -> (Vec<(u64, bool)>, String, Vec<String>) {
    let at = point_name(trace, p, name);
    let (side, devs) = describe(&p.open, state);
    // The culprits: the PC of each unit's store and its side.
    let key = devs
        .iter()
        .map(|d| {
            let c = if side == Side::Absent {
                &d.current
            } else {
                &d.chosen
            };
            let pc = store_of(c).map_or(0, |r| trace.records[r].pc);
            (pc, side == Side::Absent)
        })
        .collect();
    let mut lines = Vec::new();
    match side {
        Side::Absent => {
            for d in &devs {
                let store = store_name(trace, &d.current, name);
                let reason = match d.current.flushed_by {
                    Some(f) => format!(
                        "flushed at {} but not yet ordered by a fence",
                        name(&trace.records[f])
                    ),
                    None => format!("not yet flushed at {at}"),
                };
                // The stores that did persist in this state though not
                // durable yet: what got ahead of it (the latest first).
                let mut ahead: Vec<(Option<usize>, String)> = p
                    .open
                    .iter()
                    .zip(state)
                    .filter(|(o, &c)| c as usize == o.values.len() - 1)
                    .map(|(o, _)| {
                        let c = o.values.last().expect("values");
                        (store_of(c), store_name(trace, c, name))
                    })
                    .collect();
                ahead.sort_by_key(|a| std::cmp::Reverse(a.0));
                ahead.dedup_by(|a, b| a.1 == b.1);
                let overtaken = match ahead.len() {
                    0 => String::new(),
                    n => format!(
                        ", while {}{} persisted",
                        ahead
                            .iter()
                            .take(3)
                            .map(|a| a.1.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        if n > 3 { ", ..." } else { "" }
                    ),
                };
                lines.push((
                    store_of(&d.current).map(|r| trace.records[r].pc),
                    format!("{store} (NVMM offset {:#x}) {reason}{overtaken}", d.offset),
                ));
            }
        }
        Side::Early => {
            // What the early units got ahead of: the others left durable.
            let behind: Vec<String> = p
                .open
                .iter()
                .zip(state)
                .filter(|(_, &c)| c == 0)
                .take(3)
                .map(|(o, _)| store_name(trace, o.values.last().expect("values"), name))
                .collect();
            let behind = if behind.is_empty() {
                "the stores before it".to_string()
            } else {
                behind.join(", ")
            };
            for d in &devs {
                let store = store_name(trace, &d.chosen, name);
                let how = match d.chosen.flushed_by {
                    Some(f) => format!(
                        "flushed at {} in the same fence window",
                        name(&trace.records[f])
                    ),
                    None => "not flushed yet: a cache may write it back early".to_string(),
                };
                lines.push((
                    store_of(&d.chosen).map(|r| trace.records[r].pc),
                    format!(
                        "{store} (NVMM offset {:#x}) may persist before {behind} ({how})",
                        d.offset
                    ),
                ));
            }
        }
    }
    // The program's own stores (with source lines) first; a few lines
    // only, the rest counted.
    lines.sort_by_key(|(pc, _)| !pc.is_some_and(&has_source));
    let more = lines.len().saturating_sub(MAX_LINES);
    let mut lines: Vec<String> = lines.into_iter().take(MAX_LINES).map(|l| l.1).collect();
    if more > 0 {
        lines.push(format!(
            "and {more} more line{}",
            if more == 1 { "" } else { "s" }
        ));
    }
    if lines.is_empty() {
        // Nothing was open: the memory right before the point is itself
        // a crash state (eADR in order). The stores that led to it:
        let last: Vec<String> = trace.records[..p.record.min(trace.records.len())]
            .iter()
            .rev()
            .filter(|r| r.kind == Kind::Store)
            .take(3)
            .map(|r| format!("store at {}", name(r)))
            .collect();
        lines.push(format!(
            "the memory as the program left it, every store durable; the last: {}",
            last.join(", ")
        ));
    }
    let headline = format!("crash before {at} ({} instructions): {failure}", p.insn);
    (key, headline, lines)
}

/// The failing states, each point's minimal ones described
/// ([`minimal_failures`]), grouped by their description: the same
/// culprits at many points are one bug.
fn report_failures(
    trace: &TraceFile,
    points: &[PointInfo],
    verdicts: &HashMap<Fingerprint, Option<String>>,
    name: &dyn Fn(&TraceRecord) -> String,
    has_source: &dyn Fn(u64) -> bool,
) {
    type Group = (
        String,
        Vec<String>,
        usize,
        std::collections::BTreeSet<usize>,
    );
    let mut groups: BTreeMap<Vec<(u64, bool)>, Group> = BTreeMap::new();
    let mut order = Vec::new();
    for (k, p) in points.iter().enumerate() {
        let failure = |fp: &Fingerprint| verdicts.get(fp).and_then(|v| v.as_deref());
        let fails: Vec<bool> = p
            .states
            .iter()
            .map(|(_, fp)| failure(fp).is_some())
            .collect();
        if !fails.contains(&true) {
            continue;
        }
        let states: Vec<State> = p.states.iter().map(|(s, _)| s.clone()).collect();
        for (i, explained) in minimal_failures(&p.open, &states, &fails) {
            let why = failure(&p.states[i].1).unwrap_or("");
            let (key, headline, lines) = diagnosis(trace, p, &states[i], why, name, has_source);
            let e = groups.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                (headline, lines, 0, Default::default())
            });
            e.2 += explained;
            e.3.insert(k);
        }
    }
    for key in order {
        let (headline, lines, states, at) = &groups[&key];
        println!("  FAIL {headline}");
        for l in lines {
            println!("    {l}");
        }
        println!(
            "    (at {} ordering point{}; {states} failing state{} show it)",
            at.len(),
            if at.len() == 1 { "" } else { "s" },
            if *states == 1 { "" } else { "s" }
        );
    }
}

fn report_lint<S: StartImage>(
    trace: &TraceFile,
    replay: &Replay<'_, S>,
    name: &dyn Fn(&TraceRecord) -> String,
    name_pc: &dyn Fn(u64) -> String,
) {
    // By store place: its PC, then its call site.
    let mut never: BTreeMap<(u64, String), usize> = BTreeMap::new();
    for (_, store) in replay.never_durable() {
        let r = &trace.records[store];
        if r.kind == Kind::Store {
            *never.entry((r.pc, name(r))).or_default() += 1;
        }
    }
    let lint = &replay.lint;
    if never.is_empty() && lint.clean_flushes.is_empty() && lint.redundant_fences.is_empty() {
        println!("lint: nothing to report");
        return;
    }
    for ((_, place), n) in &never {
        println!(
            "lint: store at {place} never made durable before the program's end ({n} line{})",
            if *n == 1 { "" } else { "s" }
        );
    }
    for (pc, n) in &lint.clean_flushes {
        println!(
            "lint: flush at {} of a line not written since it was last flushed ({n} time{})",
            name_pc(*pc),
            if *n == 1 { "" } else { "s" }
        );
    }
    for (pc, n) in &lint.redundant_fences {
        println!(
            "lint: fence at {} with no flush or NVMM store to order ({n} time{})",
            name_pc(*pc),
            if *n == 1 { "" } else { "s" }
        );
    }
}
