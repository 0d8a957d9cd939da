//! Where the things outside this repository's Rust code live: the guest
//! programs built by `make -C guest`, Debian's riscv64 busybox and sysroot
//! fetched by `scripts/setup.sh`, and `qemu-riscv64`.
//!
//! One lookup for `rvnvmm bench` and the integration tests (which include
//! this file with `#[path]`), so they agree on the variables and the hints.
//!
//! * `RVNVMM_BUSYBOX`, `RVNVMM_SYSROOT`: from the environment, else from
//!   `$RVNVMM_CACHE/paths.env` (default cache `$HOME/.cache/rvnvmm`), which
//!   `scripts/setup.sh` writes.
//! * `RVNVMM_QEMU`, else `qemu-riscv64` on `PATH`.
//! * Guest programs: `guest/build/{static,dynamic}/NAME` in the repository
//!   this binary was built from.

// Each includer uses a different part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A piece from outside the Rust code is missing; the message names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ArtefactError {
    /// A path `scripts/setup.sh` records is neither in the environment nor
    /// in the cache's `paths.env`.
    #[error("{key} is not set and {} cannot be read ({source}): run `scripts/setup.sh`", paths_env.display())]
    NoPathsFile {
        /// The variable, e.g. `RVNVMM_BUSYBOX`.
        key: String,
        /// `$RVNVMM_CACHE/paths.env`.
        paths_env: PathBuf,
        /// Why it cannot be read.
        source: std::io::Error,
    },
    /// `paths.env` exists but lacks the variable.
    #[error("{key} is not set in {}: re-run `scripts/setup.sh`", paths_env.display())]
    NotInPathsFile {
        /// The variable.
        key: String,
        /// `$RVNVMM_CACHE/paths.env`.
        paths_env: PathBuf,
    },
    /// The path is recorded but what it names is not there.
    #[error("{what} {} ({key}) {problem}: re-run `scripts/setup.sh`", path.display())]
    Broken {
        /// What it should be ("busybox binary").
        what: &'static str,
        /// The variable.
        key: &'static str,
        /// Its value.
        path: PathBuf,
        /// What is wrong ("does not exist").
        problem: &'static str,
    },
    /// `RVNVMM_QEMU` names no file.
    #[error("RVNVMM_QEMU={} does not exist", .0.display())]
    QemuMissing(PathBuf),
    /// No `qemu-riscv64` on `PATH`.
    #[error(
        "qemu-riscv64 is not on PATH: install qemu-user (`apt-get install qemu-user`, \
         or run `scripts/setup.sh`), or set RVNVMM_QEMU"
    )]
    QemuNotOnPath,
    /// A guest program is not built.
    #[error("guest program {} is not built: run `make -C guest`", .0.display())]
    GuestProgram(PathBuf),
}

/// The fix for missing setup artefacts.
pub const SETUP_HINT: &str = "run `scripts/setup.sh` (fetches busybox and the trixie riscv64 \
                              sysroot) and `make -C guest` (builds the guest programs) first";

/// The repository root (`crates/cli/../..`), as of build time.
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.to_path_buf())
}

/// `guest/build` in the repository.
pub fn guest_build() -> PathBuf {
    repo_root().join("guest").join("build")
}

/// The download cache of `scripts/setup.sh`.
pub fn cache_dir() -> PathBuf {
    if let Some(c) = std::env::var_os("RVNVMM_CACHE").filter(|c| !c.is_empty()) {
        return PathBuf::from(c);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    PathBuf::from(home).join(".cache").join("rvnvmm")
}

/// Parses `KEY=VALUE` lines (optionally `export`ed, quoted values, `#`
/// comments).
pub fn parse_env_file(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            out.push((k.trim().to_string(), v.to_string()));
        }
    }
    out
}

/// A path set by `scripts/setup.sh`: the environment variable `key`, else
/// its line in the cache's `paths.env`.
pub fn setup_path(key: &str) -> Result<PathBuf, ArtefactError> {
    if let Some(v) = std::env::var_os(key).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(v));
    }
    let paths_env = cache_dir().join("paths.env");
    let text = match std::fs::read_to_string(&paths_env) {
        Ok(text) => text,
        Err(source) => {
            return Err(ArtefactError::NoPathsFile {
                key: key.to_string(),
                paths_env,
                source,
            })
        }
    };
    parse_env_file(&text)
        .into_iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| PathBuf::from(v))
        .ok_or_else(|| ArtefactError::NotInPathsFile {
            key: key.to_string(),
            paths_env,
        })
}

/// Debian trixie's riscv64 busybox-static.
pub fn busybox() -> Result<PathBuf, ArtefactError> {
    let b = setup_path("RVNVMM_BUSYBOX")?;
    if !b.is_file() {
        return Err(ArtefactError::Broken {
            what: "busybox binary",
            key: "RVNVMM_BUSYBOX",
            path: b,
            problem: "does not exist",
        });
    }
    Ok(b)
}

/// The trixie riscv64 glibc + libstdc++ sysroot.
pub fn sysroot() -> Result<PathBuf, ArtefactError> {
    let s = setup_path("RVNVMM_SYSROOT")?;
    if !s.join("lib/ld-linux-riscv64-lp64d.so.1").exists() {
        return Err(ArtefactError::Broken {
            what: "sysroot",
            key: "RVNVMM_SYSROOT",
            path: s,
            problem: "has no lib/ld-linux-riscv64-lp64d.so.1",
        });
    }
    Ok(s)
}

/// An executable file named `name` in a directory of `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Debian's `qemu-riscv64`: `RVNVMM_QEMU`, else the one on `PATH`.
pub fn qemu() -> Result<PathBuf, ArtefactError> {
    match std::env::var_os("RVNVMM_QEMU").filter(|v| !v.is_empty()) {
        Some(q) => {
            let q = PathBuf::from(q);
            if q.is_file() {
                Ok(q)
            } else {
                Err(ArtefactError::QemuMissing(q))
            }
        }
        None => find_in_path("qemu-riscv64").ok_or(ArtefactError::QemuNotOnPath),
    }
}

/// A guest program in `dir`, or an error naming the fix.
pub fn guest_program(dir: &Path, name: &str) -> Result<PathBuf, ArtefactError> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(ArtefactError::GuestProgram(p))
    }
}
