//! `rvnvmm boot` with console input written at once, before Linux opens the
//! console (none of it may be lost). Included with `#[path]`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `rvnvmm boot ARGS` with `input` on stdin; its output.
pub fn boot_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("boot")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rvnvmm boot");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
