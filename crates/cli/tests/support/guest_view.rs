//! The fixed guest view of the tests whose figures are pinned: the guest
//! programs (`guest/build`) at `/guest`, the run's own directory as the
//! working directory `/work`, and an environment of the test's choosing
//! alone, so that the guest's stack, and every count that depends on it, is
//! the same wherever the checkout lies (`docs/architecture.md`, "The
//! guest's view of the world"). Included with `#[path]`; the caller passes
//! `artefacts::guest_build()`.
// Each including test uses what it needs.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::Path;

/// Where `guest/build` is in the guest's view.
pub const GUEST_BUILD: &str = "/guest";
/// The guest's working directory.
pub const GUEST_CWD: &str = "/work";

/// `rvnvmm run` options of the view: `build` at [`GUEST_BUILD`], `cwd` at
/// [`GUEST_CWD`] (the guest's working directory), `env` (`KEY=VALUE`) as
/// the whole environment.
pub fn options(build: &Path, cwd: &Path, env: &[&str]) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec!["--map".into()];
    let mut map = OsString::from(format!("{GUEST_BUILD}="));
    map.push(build);
    v.push(map);
    v.push("--map".into());
    let mut map = OsString::from(format!("{GUEST_CWD}="));
    map.push(cwd);
    v.push(map);
    v.extend(["--cwd".into(), GUEST_CWD.into(), "--clean-env".into()]);
    for e in env {
        v.extend(["--env".into(), OsString::from(e)]);
    }
    v
}

/// The guest's name of `host`, a file under `build`.
pub fn guest_path(build: &Path, host: &Path) -> String {
    let rest = host
        .strip_prefix(build)
        .unwrap_or_else(|_| panic!("{} is not under {}", host.display(), build.display()));
    format!("{GUEST_BUILD}/{}", rest.display())
}
