//! The host's e2fsprogs tools. Included with `#[path]`.

use std::path::PathBuf;

/// An e2fsprogs tool: on PATH, or in the sbin directories a non-root PATH
/// leaves out.
pub fn host_tool(name: &str) -> PathBuf {
    ["/usr/sbin", "/sbin"]
        .iter()
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name))
}
