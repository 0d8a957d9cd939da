//! `--gdb PORT`: Debian's gdb-multiarch, in batch mode, debugs a guest
//! program under `rvnvmm run` and Linux under `rvnvmm boot` through the
//! stub: breakpoints, steps, registers, memory, watchpoints, threads.
//! Needs gdb-multiarch (`scripts/setup.sh` installs it; a missing one
//! fails the tests rather than skipping them) and `make -C guest` first.

#[path = "../src/artefacts.rs"]
mod artefacts;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const GDB: &str = "gdb-multiarch";

/// gdb-multiarch runs here, or the test fails saying how to get it.
fn require_gdb(test: &str) {
    let ok = Command::new(GDB)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{test}: {GDB} is not installed (scripts/setup.sh installs it)"
    );
}

fn guest(name: &str) -> PathBuf {
    let p = artefacts::repo_root().join("guest/build/static").join(name);
    assert!(p.exists(), "{} missing: run make -C guest", p.display());
    p
}

/// rvnvmm started with `args` (which include `--gdb 0`), waiting for gdb:
/// the child, the port it listens on, and a reader collecting the rest of
/// its stderr.
fn start_rvnvmm(args: &[&str]) -> (Child, u16, std::thread::JoinHandle<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start rvnvmm");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let mut port = None;
    while port.is_none() {
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            panic!("rvnvmm ended before listening for gdb: {line}");
        }
        port = line
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok());
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    (child, port.unwrap(), rest)
}

/// Runs gdb-multiarch in batch mode on `program` (symbols, if any),
/// connected to `port`, with `commands`; returns what it printed.
fn run_gdb(program: Option<&Path>, port: u16, commands: &[&str]) -> String {
    let mut cmd = Command::new(GDB);
    cmd.args([
        "-nx",
        "-batch",
        "-ex",
        "set pagination off",
        "-ex",
        "set confirm off",
    ])
    .args(["-ex", &format!("target remote 127.0.0.1:{port}")]);
    for c in commands {
        cmd.args(["-ex", c]);
    }
    if let Some(program) = program {
        cmd.arg(program);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gdb-multiarch");
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("gdb did not finish in 300 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Waits for rvnvmm: its exit status, stdout and stderr.
fn finish(
    mut child: Child,
    rest: std::thread::JoinHandle<String>,
) -> (Option<i32>, String, String) {
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), stdout, rest.join().unwrap())
}

#[test]
fn gdb_breaks_steps_and_changes_registers_and_memory_in_user_mode() {
    require_gdb("gdb_breaks_steps_and_changes_registers_and_memory_in_user_mode");
    let prog = guest("gdb_target");
    let prog_s = prog.to_str().unwrap();
    let (child, port, rest) = start_rvnvmm(&["run", "--gdb", "0", prog_s]);
    let log = run_gdb(
        Some(&prog),
        port,
        &[
            "break *add_step",
            "continue",
            "info registers a0",
            "set $at_break = $pc",
            "stepi",
            "print (long)$pc - (long)$at_break",
            // add_step(1) adds 41 instead.
            "set $a0 = 41",
            "delete 1",
            "watch *(long *)&counter",
            "continue",
            "print *(long *)&counter",
            "set var *(long *)&counter = 1000",
            "x/1gd &counter",
            "delete",
            "rwatch *(long *)&counter",
            "continue",
            "delete",
            "info threads",
            "info registers fcsr",
            "continue",
        ],
    );
    let (code, stdout, stderr) = finish(child, rest);
    let context = format!("gdb:\n{log}\nrvnvmm stderr:\n{stderr}");
    assert!(log.contains("Breakpoint 1, 0x"), "{context}");
    assert!(log.contains("a0             0x1\t1"), "{context}");
    assert!(
        log.contains("$1 = 2") || log.contains("$1 = 4"),
        "stepi moved one instruction: {context}"
    );
    assert!(log.contains("Old value = 0\nNew value = 41"), "{context}");
    assert!(log.contains("$2 = 41"), "{context}");
    assert!(log.contains("<counter>:\t1000"), "{context}");
    assert!(log.contains("Value = 1000"), "read watchpoint: {context}");
    assert!(log.contains("* 1    Thread "), "{context}");
    assert!(log.contains("fcsr           0x0"), "{context}");
    assert!(log.contains("exited normally"), "{context}");
    // 1000 after the first call, then 2 + ... + 10.
    assert_eq!(stdout, "total=1054 counter=1054\n", "{context}");
    assert_eq!(code, Some(0), "{context}");
}

/// Sends `data` as a packet on `s` and returns the next packet's data
/// (acknowledgements skipped).
fn exchange(s: &mut std::net::TcpStream, data: &[u8]) -> String {
    use std::io::Write;
    if !data.is_empty() {
        let sum = data.iter().fold(0u8, |a, &b| a.wrapping_add(b));
        let mut framed = vec![b'+', b'$'];
        framed.extend_from_slice(data);
        framed.extend_from_slice(format!("#{sum:02x}").as_bytes());
        s.write_all(&framed).unwrap();
    }
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        s.read_exact(&mut byte).unwrap();
        got.push(byte[0]);
        if let Some(hash) = got.iter().position(|&b| b == b'#') {
            if got.len() == hash + 3 {
                let start = got.iter().position(|&b| b == b'$').unwrap();
                return String::from_utf8_lossy(&got[start + 1..hash]).into_owned();
            }
        }
    }
}

#[test]
fn ctrl_c_stops_a_running_program_and_kill_ends_it() {
    // The protocol itself, without gdb: works wherever rvnvmm does.
    use std::io::Write;
    let prog = guest("bench_compute");
    let (child, port, rest) = start_rvnvmm(&["run", "--gdb", "0", prog.to_str().unwrap(), "1000"]);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let first = exchange(&mut s, b"?");
    assert!(first.starts_with("T05thread:"), "{first}");
    let supported = exchange(&mut s, b"qSupported:swbreak+");
    assert!(supported.contains("PacketSize="), "{supported}");
    // Continue: no reply until the machine stops again.
    let sum = b"c".iter().fold(0u8, |a, &b| a.wrapping_add(b));
    s.write_all(format!("+$c#{sum:02x}").as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    s.write_all(b"\x03").unwrap();
    let stop = exchange(&mut s, b"");
    assert!(stop.starts_with("T02thread:"), "{stop}");
    // The program ran on between the two stops.
    let pc = exchange(&mut s, b"p20");
    assert_eq!(pc.len(), 16, "{pc}");
    assert_eq!(exchange(&mut s, b"vKill;1"), "OK");
    let (code, stdout, stderr) = finish(child, rest);
    assert_eq!(code, None, "killed by SIGKILL: {stdout}{stderr}");
}

/// The statistics of a run, host figures left out.
fn stable_stats(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("host_seconds") && !l.contains("\"mips\""))
        .map(String::from)
        .collect()
}

#[test]
fn a_run_gdb_only_continues_has_the_statistics_of_a_run_without_it() {
    require_gdb("a_run_gdb_only_continues_has_the_statistics_of_a_run_without_it");
    let prog = guest("pthreads");
    let prog_s = prog.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("rvnvmm-gdb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("plain.json");
    let debugged = dir.join("debugged.json");
    let timed = ["--set", "machine.model=timing", "--harts", "2"];
    let o = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("run")
        .args(timed)
        .arg("--stats")
        .arg(&plain)
        .arg(&prog)
        .output()
        .unwrap();
    // pthreads exits with 42 from a thread.
    assert_eq!(
        o.status.code(),
        Some(42),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut args = vec!["run"];
    args.extend(timed);
    args.extend(["--stats", debugged.to_str().unwrap(), "--gdb", "0", prog_s]);
    let (child, port, rest) = start_rvnvmm(&args);
    let log = run_gdb(Some(&prog), port, &["continue"]);
    let (code, stdout, stderr) = finish(child, rest);
    assert_eq!(code, Some(42), "gdb:\n{log}\nrvnvmm:\n{stderr}");
    assert_eq!(stdout, String::from_utf8_lossy(&o.stdout));
    assert!(log.contains("exited with code 052"), "{log}");
    assert_eq!(stable_stats(&plain), stable_stats(&debugged));
    let _ = std::fs::remove_dir_all(&dir);
}

#[path = "support/initramfs.rs"]
#[allow(dead_code)] // RC_LINES: four harts; this test boots two.
mod initramfs;

/// Busybox's entry point and its first four bytes, from the ELF file.
fn busybox_entry() -> (u64, [u8; 4]) {
    let path = artefacts::busybox().unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&path).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).expect("busybox is an ELF");
    let entry = elf.entry;
    let seg = elf
        .program_headers
        .iter()
        .find(|p| {
            p.p_type == goblin::elf::program_header::PT_LOAD
                && (p.p_vaddr..p.p_vaddr + p.p_filesz).contains(&entry)
        })
        .expect("a segment holds the entry point");
    let at = (seg.p_offset + entry - seg.p_vaddr) as usize;
    (entry, bytes[at..at + 4].try_into().unwrap())
}

#[test]
fn gdb_debugs_the_firmware_the_kernel_and_a_user_process_in_the_full_system() {
    require_gdb("gdb_debugs_the_firmware_the_kernel_and_a_user_process_in_the_full_system");
    let initrd = initramfs::initramfs();
    let (entry, first_bytes) = busybox_entry();
    let (child, port, rest) = start_rvnvmm(&[
        "boot",
        "--gdb",
        "0",
        "--set",
        "machine.model=functional",
        "--smp",
        "2",
        "--initrd",
        &initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
    ]);
    let user_break = format!("break *{entry:#x}");
    let log = run_gdb(
        None,
        port,
        &[
            "info registers priv pc",
            "info threads",
            // OpenSBI's fw_dynamic_info (a2) names the kernel's entry.
            "set $kernel = *(long *)($a2 + 16)",
            "break *$kernel",
            "continue",
            "info registers priv",
            "set $at_break = $pc",
            "stepi",
            "print (long)$pc - (long)$at_break",
            // A write through gdb (of what is there) keeps the code coherent.
            "set $word = *(long *)$pc",
            "set var *(long *)$pc = $word",
            "print *(long *)$pc == $word",
            "set var $a5 = 7",
            "print $a5",
            "delete",
            // Busybox's first instruction, as init starts, through Sv39.
            &user_break,
            "continue",
            "info registers priv",
            "print (($satp >> 60) & 0xf) == 8",
            "x/4xb $pc",
            "delete",
            // glibc's _start reads argc at sp.
            "set $argc = $sp",
            "rwatch *(int *)$argc",
            "continue",
            "delete",
            "continue",
        ],
    );
    let (code, console, stderr) = finish(child, rest);
    let context = format!("gdb:\n{log}\nrvnvmm stderr:\n{stderr}\nconsole:\n{console}");
    assert!(log.contains("prv:3 [Machine]"), "{context}");
    assert!(
        log.contains("* 1    Thread 1 ") && log.contains("  2    Thread 2 "),
        "{context}"
    );
    assert!(log.contains("hit Breakpoint 1, 0x"), "{context}");
    assert!(log.contains("prv:1 [Supervisor]"), "{context}");
    assert!(
        log.contains("$1 = 2") || log.contains("$1 = 4"),
        "{context}"
    );
    assert!(log.contains("$2 = 1"), "{context}");
    assert!(log.contains("$3 = 7"), "{context}");
    assert!(log.contains("hit Breakpoint 2, 0x"), "{context}");
    assert!(log.contains("prv:0 [User/Application]"), "{context}");
    assert!(log.contains("$4 = 1"), "Sv39 on: {context}");
    let bytes = first_bytes
        .iter()
        .map(|b| format!("{b:#04x}"))
        .collect::<Vec<_>>()
        .join("\t");
    assert!(log.contains(&format!("{entry:#x}:\t{bytes}")), "{context}");
    assert!(
        log.contains("hit Hardware read watchpoint 3: *(int *)$argc\n\nValue = "),
        "{context}"
    );
    assert!(log.contains("exited normally"), "{context}");
    assert_eq!(
        initramfs::rc_lines(&console).last(),
        Some(&"rc: done"),
        "{context}"
    );
    assert_eq!(code, Some(0), "{context}");
}
