//! Guest path resolution: host paths as qemu-user does by default, a
//! `--sysroot` consulted first for absolute paths (qemu's `-L`), or a
//! `--root` that confines every path — absolute, relative, `..` and symlinks
//! — inside one directory, using the host kernel's `openat2(RESOLVE_IN_ROOT)`.
//! In either mode, `--map GUEST=HOST` places a host directory or file at a
//! fixed guest path, so a program and its inputs have the same names in the
//! guest wherever they lie on the host.

use crate::errno::*;
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `AT_FDCWD`.
pub const AT_FDCWD: i32 = -100;

/// A process's files: its descriptors and the paths they are opened by,
/// and the layers over them (the NVMM-backed directory, timerfds).
pub(crate) struct Files {
    /// Path resolution, the working directory and the emulated `/proc`.
    pub(crate) fs: Fs,
    /// The file mode creation mask (`umask`).
    pub(crate) umask: u32,
    /// Host descriptors of the emulator's own that the guest must not
    /// touch or close ([`Process::keep_fd`]).
    ///
    /// [`Process::keep_fd`]: crate::process::Process::keep_fd
    pub(crate) kept_fds: Vec<i32>,
    /// The NVMM-backed directory (`user.pmem_dir`), once mounted: a layer
    /// of its own over the descriptors (`pmem.rs`).
    pub(crate) pmem: Option<crate::pmem::PmemDir>,
    /// The timerfds, by descriptor (`timers.rs`).
    pub(crate) timerfds: crate::timers::TimerFds,
}

/// How the guest's file names reach the host.
#[derive(Debug)]
pub struct Fs {
    /// The confining root, if any: its directory fd and host path.
    root: Option<(OwnedFd, PathBuf)>,
    /// Prefix tried first for absolute paths (only without a root).
    sysroot: Option<PathBuf>,
    /// The guest's working directory (absolute, inside the root) when confined.
    cwd: String,
    /// Host path of the running guest program, for `/proc/self/exe`.
    pub exe_host: PathBuf,
    /// Guest path of the running guest program.
    pub exe_guest: String,
    /// The emulated `/proc` and `/sys` directories (the process's own
    /// entries and the machine's harts, not the host's).
    pub tree: Option<crate::procfs::EmulatedTree>,
    /// The guest's pid, which names its own `/proc/<pid>`.
    pub pid: i32,
    /// The NVMM-backed directory (`user.pmem_dir`): its guest path and the
    /// host directory standing for it.
    pub pmem: Option<(Vec<u8>, PathBuf)>,
    /// The guest paths placed on host paths (`--map`), longest guest path
    /// first so that the innermost map wins.
    maps: Vec<Map>,
    /// Under a root: the `sun_path` each local socket was bound with on the
    /// host, and the guest's, latest last ([`Fs::guest_socket_path`]).
    unix_names: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A guest path standing for a host directory or file (`--map GUEST=HOST`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Map {
    /// The guest path: absolute, normal (no `.`, `..`, `//` or trailing
    /// `/`), not `/` itself.
    pub guest: String,
    /// The host path, absolute and with its symlinks resolved.
    pub host: PathBuf,
}

/// Why a `--map` cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// Not `GUEST=HOST`.
    #[error("--map wants GUEST=HOST (an absolute guest path, then a host path), got '{0}'")]
    Syntax(String),
    /// The guest side is not a usable absolute path.
    #[error("--map {0}: the guest path must be absolute and other than '/'")]
    GuestPath(String),
    /// The host side does not exist.
    #[error("--map {guest}={host}: {source}")]
    Host {
        /// The guest path.
        guest: String,
        /// The host path as given.
        host: String,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// The same guest path twice.
    #[error("--map {0} is given twice")]
    Twice(String),
}

impl Map {
    /// Parses `GUEST=HOST`; the host path must exist.
    pub fn parse(spec: &str) -> Result<Map, MapError> {
        let (guest, host) = spec
            .split_once('=')
            .filter(|(g, h)| !g.is_empty() && !h.is_empty())
            .ok_or_else(|| MapError::Syntax(spec.to_string()))?;
        Map::new(guest, Path::new(host))
    }

    /// The map of the guest path `guest` onto the existing host path `host`.
    pub fn new(guest: &str, host: &Path) -> Result<Map, MapError> {
        let normal = normalize(guest.as_bytes());
        if !guest.starts_with('/') || normal == b"/" {
            return Err(MapError::GuestPath(guest.to_string()));
        }
        let host_abs = std::fs::canonicalize(host).map_err(|source| MapError::Host {
            guest: guest.to_string(),
            host: host.display().to_string(),
            source,
        })?;
        Ok(Map {
            guest: String::from_utf8(normal).map_err(|_| MapError::GuestPath(guest.into()))?,
            host: host_abs,
        })
    }

    /// The host path of the absolute, normal guest path `path`, if the map
    /// covers it.
    fn host_of(&self, path: &[u8]) -> Option<PathBuf> {
        let rest = below(path, self.guest.as_bytes())?;
        Some(if rest.is_empty() {
            self.host.clone()
        } else {
            self.host.join(std::ffi::OsStr::from_bytes(rest))
        })
    }

    /// The guest path of the host path `host`, if it lies in the map.
    fn guest_of(&self, host: &Path) -> Option<String> {
        let rest = host.strip_prefix(&self.host).ok()?;
        Some(if rest.as_os_str().is_empty() {
            self.guest.clone()
        } else {
            format!("{}/{}", self.guest, rest.display())
        })
    }
}

/// What follows `prefix` in `path` when `path` is `prefix` or lies below it
/// (without the separating `/`).
fn below<'a>(path: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let rest = path.strip_prefix(prefix)?;
    match rest.first() {
        None => Some(rest),
        Some(b'/') => Some(&rest[1..]),
        Some(_) => None,
    }
}

/// An absolute path with `.`, `..` and repeated or trailing `/` taken out
/// by their names, as a bind mount's path is matched (`/..` is `/`).
pub fn normalize(path: &[u8]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for c in path.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    if parts.is_empty() {
        return b"/".to_vec();
    }
    let mut out = Vec::with_capacity(path.len());
    for c in parts {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    out
}

/// Bytes in `sockaddr_un.sun_path`.
const SUN_PATH_MAX: usize = 108;

/// A guest path the emulator answers from a host path of its own.
enum Special {
    /// A name of the emulated tree: read-only.
    Tree(PathBuf),
    /// A host object reached as the guest asked (`/proc/self/exe`,
    /// `/proc/self/fd/N`): opened with the guest's flags.
    Through(PathBuf),
}

impl Special {
    fn path(&self) -> &Path {
        match self {
            Special::Tree(p) | Special::Through(p) => p,
        }
    }
}

/// A resolved name: a host directory fd (or AT_FDCWD) and a name relative to it.
pub struct HostName {
    /// Keeps an opened parent directory alive.
    _owned: Option<OwnedFd>,
    /// The directory fd to pass to a `*at` call.
    pub dirfd: i32,
    /// The name to pass.
    pub name: CString,
}

#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}
const RESOLVE_IN_ROOT: u64 = 0x10;
const RESOLVE_NO_MAGICLINKS: u64 = 0x02;

fn cstr(b: &[u8]) -> Result<CString, Errno> {
    CString::new(b).map_err(|_| EINVAL)
}

impl Fs {
    /// Path handling with an optional confining root and sysroot.
    pub fn new(root: Option<&Path>, sysroot: Option<&Path>) -> std::io::Result<Fs> {
        let root = match root {
            Some(r) => {
                let canon = std::fs::canonicalize(r)?;
                let f = std::fs::File::open(&canon)?;
                // Keep it out of the range the guest's descriptors use.
                // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own.
                let high = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 900) };
                if high < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: `high` is a new descriptor owned from here on.
                Some((unsafe { OwnedFd::from_raw_fd(high) }, canon))
            }
            None => None,
        };
        Ok(Fs {
            root,
            sysroot: sysroot.map(Path::to_path_buf),
            cwd: "/".into(),
            exe_host: PathBuf::new(),
            exe_guest: String::new(),
            tree: None,
            pid: crate::family::FIRST_PID,
            pmem: None,
            maps: Vec::new(),
            unix_names: Vec::new(),
        })
    }

    /// Places `map` in the guest's view. Its guest path is given once.
    pub fn add_map(&mut self, map: Map) -> Result<(), MapError> {
        if self.maps.iter().any(|m| m.guest == map.guest) {
            return Err(MapError::Twice(map.guest));
        }
        self.maps.push(map);
        // Innermost first: `/a/b` before `/a`.
        self.maps.sort_by(|a, b| {
            b.guest
                .len()
                .cmp(&a.guest.len())
                .then(a.guest.cmp(&b.guest))
        });
        Ok(())
    }

    /// The maps in the guest's view.
    pub fn maps(&self) -> &[Map] {
        &self.maps
    }

    /// The absolute guest path `path` names relative to `dirfd`, in either
    /// mode.
    fn absolute_in_view(&self, dirfd: i32, path: &[u8]) -> Option<Vec<u8>> {
        if path.first() == Some(&b'/') {
            Some(path.to_vec())
        } else if self.root.is_some() {
            self.guest_abs(dirfd, path).ok()
        } else {
            self.guest_absolute(dirfd, path)
        }
    }

    /// The host path standing for a guest path (relative to `dirfd`) that a
    /// map covers.
    fn in_map(&self, dirfd: i32, path: &[u8]) -> Option<PathBuf> {
        if self.maps.is_empty() || path.is_empty() {
            return None;
        }
        let raw = self.absolute_in_view(dirfd, path)?;
        let abs = normalize(&raw);
        if let Some(host) = self.maps.iter().find_map(|m| m.host_of(&abs)) {
            return Some(host);
        }
        // `..` out of a map leads to the map's parent in the guest's view,
        // as out of a bind mount, not to the host directory's parent: the
        // name taken out by name is the host's (or the sysroot's) own.
        let through_map = self.maps.iter().any(|m| {
            below(&raw, m.guest.as_bytes())
                .is_some_and(|rest| rest.split(|&c| c == b'/').any(|c| c == b".."))
        });
        if through_map && self.root.is_none() {
            return Some(
                self.through_sysroot(&abs)
                    .unwrap_or_else(|| PathBuf::from(std::ffi::OsStr::from_bytes(&abs))),
            );
        }
        None
    }

    /// Where the guest's own view finds an absolute path named on the
    /// command line: a map, else (without a root) the sysroot. `None`: it is
    /// a host path.
    pub fn guest_named_host(&self, path: &[u8]) -> Option<PathBuf> {
        if path.first() != Some(&b'/') {
            return None;
        }
        let abs = normalize(path);
        self.maps.iter().find_map(|m| m.host_of(&abs)).or_else(|| {
            self.root
                .is_none()
                .then(|| self.through_sysroot(path))
                .flatten()
        })
    }

    /// The guest path of a host path that lies in a map.
    fn mapped_guest_of(&self, host: &Path) -> Option<String> {
        self.maps.iter().find_map(|m| m.guest_of(host))
    }

    /// The host form of the socket address `addr` a guest passes to bind
    /// (`bind`: its name is created) or connect and send (`bind` false:
    /// the name's symlinks are followed): under a root, an `AF_UNIX` path
    /// is resolved inside it and reaches the host as the `/proc/self/fd`
    /// link of the directory it is created in, or of the socket itself,
    /// so neither `..` nor a symlink leaves the root. Other addresses (and
    /// every address without a root, abstract and unnamed local ones) are
    /// passed as they are. The [`HostName`] holds the descriptors the
    /// address names: keep it until the call is made.
    pub fn host_sockaddr(
        &self,
        addr: &[u8],
        bind: bool,
    ) -> Result<(Vec<u8>, Option<HostName>), Errno> {
        let Some(path) = self.unix_path(addr) else {
            return Ok((addr.to_vec(), None));
        };
        let (host, n) = if bind {
            let n = self.resolve_to_change(AT_FDCWD, path, false)?;
            let host = if n.dirfd == AT_FDCWD {
                n.name.as_bytes().to_vec()
            } else {
                let mut h = format!("/proc/self/fd/{}/", n.dirfd).into_bytes();
                h.extend_from_slice(n.name.as_bytes());
                h
            };
            (host, n)
        } else {
            let n = self.resolve(AT_FDCWD, path, true)?;
            (n.name.as_bytes().to_vec(), n)
        };
        if host.len() >= SUN_PATH_MAX {
            return Err(ENAMETOOLONG);
        }
        let mut v = addr[..2].to_vec();
        v.extend_from_slice(&host);
        v.push(0);
        Ok((v, Some(n)))
    }

    /// The `sun_path` of a named `AF_UNIX` address, under a root (`None`
    /// for any other address, an abstract or an unnamed one, and without
    /// a root).
    fn unix_path<'a>(&self, addr: &'a [u8]) -> Option<&'a [u8]> {
        if self.root.is_none()
            || addr.len() <= 2
            || u16::from_ne_bytes([addr[0], addr[1]]) != libc::AF_UNIX as u16
            || addr[2] == 0
        {
            return None;
        }
        let p = &addr[2..];
        Some(&p[..p.iter().position(|&c| c == 0).unwrap_or(p.len())])
    }

    /// Notes that a socket was bound to the guest's address `guest`, which
    /// reached the host as `host` ([`Fs::host_sockaddr`]).
    pub fn note_socket_bound(&mut self, guest: &[u8], host: &[u8]) {
        let (Some(g), Some(h)) = (self.unix_path(guest), self.unix_path(host)) else {
            return;
        };
        let (g, h) = (g.to_vec(), h.to_vec());
        self.unix_names.retain(|(k, _)| *k != h);
        self.unix_names.push((h, g));
    }

    /// The guest's form of a socket address the host gives back
    /// (getsockname, getpeername, accept, a received datagram's sender):
    /// a local socket bound under the root has the path the guest bound it
    /// with, one bound elsewhere inside the root its path there. Other
    /// addresses are as the host gives them.
    pub fn guest_sockaddr(&self, addr: &[u8]) -> Vec<u8> {
        let Some(path) = self.unix_path(addr) else {
            return addr.to_vec();
        };
        let guest = match self.unix_names.iter().rev().find(|(h, _)| h == path) {
            Some((_, g)) => g.clone(),
            None => match (&self.root, path.first()) {
                (Some((_, r)), Some(b'/')) => {
                    match Path::new(std::ffi::OsStr::from_bytes(path)).strip_prefix(r) {
                        Ok(rest) => {
                            let mut g = b"/".to_vec();
                            g.extend_from_slice(rest.as_os_str().as_bytes());
                            g
                        }
                        Err(_) => return addr.to_vec(),
                    }
                }
                _ => return addr.to_vec(),
            },
        };
        let mut v = addr[..2].to_vec();
        v.extend_from_slice(&guest);
        v.push(0);
        v
    }

    /// Whether `fd` is one the emulator keeps for itself (the root, the
    /// hold on the emulated tree), which the guest may not close or reach.
    pub fn is_internal(&self, fd: i32) -> bool {
        self.root.as_ref().map(|(fd, _)| fd.as_raw_fd()) == Some(fd)
            || self.tree.as_ref().and_then(|t| t.hold_fd()) == Some(fd)
    }

    /// The guest's working directory when paths are confined (`/`
    /// otherwise: the host's is the guest's).
    pub fn cwd_confined(&self) -> &str {
        &self.cwd
    }

    /// Sets the confined working directory (a restored checkpoint's).
    pub fn set_cwd_confined(&mut self, cwd: String) {
        self.cwd = cwd;
    }

    /// Whether paths are confined.
    pub fn confined(&self) -> bool {
        self.root.is_some()
    }

    fn openat2(
        dirfd: i32,
        path: &CStr,
        flags: u64,
        mode: u64,
        resolve: u64,
    ) -> Result<OwnedFd, Errno> {
        let how = OpenHow {
            flags,
            mode,
            resolve,
        };
        // SAFETY: `path` is NUL-terminated and `how` is a valid open_how of
        // the size passed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dirfd,
                path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if r < 0 {
            return Err(Errno::last_host());
        }
        // SAFETY: the kernel returned a new descriptor that we now own.
        Ok(unsafe { OwnedFd::from_raw_fd(r as i32) })
    }

    /// The guest-absolute form of `path` relative to `dirfd` (confined mode).
    fn guest_abs(&self, dirfd: i32, path: &[u8]) -> Result<Vec<u8>, Errno> {
        if path.first() == Some(&b'/') {
            return Ok(path.to_vec());
        }
        let base = if dirfd == AT_FDCWD {
            self.cwd.clone()
        } else {
            self.guest_path_of_fd(dirfd)?
        };
        let mut v = base.into_bytes();
        if v.last() != Some(&b'/') {
            v.push(b'/');
        }
        v.extend_from_slice(path);
        Ok(v)
    }

    /// The guest path of an open descriptor (confined mode).
    fn guest_path_of_fd(&self, fd: i32) -> Result<String, Errno> {
        let host = std::fs::read_link(format!("/proc/self/fd/{fd}")).map_err(|_| EBADF)?;
        Ok(self.host_to_guest(&host))
    }

    fn host_to_guest(&self, host: &Path) -> String {
        if let Some(p) = self.tree.as_ref().and_then(|t| t.guest_path(host)) {
            return p;
        }
        if let Some(p) = self.guest_path_of_pmem(host) {
            return p;
        }
        if let Some(p) = self.mapped_guest_of(host) {
            return p;
        }
        match &self.root {
            Some((_, r)) => match host.strip_prefix(r) {
                Ok(rest) => format!("/{}", rest.display()),
                Err(_) => "/".into(),
            },
            None => host.display().to_string(),
        }
    }

    /// The path the guest knows a host file by: inside the root when
    /// confined (`None` outside it), with the sysroot's prefix taken off
    /// when the file lies in the sysroot, else the host path itself.
    pub fn guest_path_of_host(&self, host: &Path) -> Option<String> {
        // A memfd is named as Linux names it, wherever the guest stands.
        if host.as_os_str().as_bytes().starts_with(b"/memfd:") {
            return Some(host.display().to_string());
        }
        if let Some(p) = self.guest_path_of_pmem(host) {
            return Some(p);
        }
        if let Some(p) = self.tree.as_ref().and_then(|t| t.guest_path(host)) {
            return Some(p);
        }
        if let Some(p) = self.mapped_guest_of(host) {
            return Some(p);
        }
        if let Some((_, r)) = &self.root {
            return host
                .strip_prefix(r)
                .ok()
                .map(|rest| format!("/{}", rest.display()));
        }
        let in_sysroot = self
            .sysroot
            .as_ref()
            .and_then(|s| std::fs::canonicalize(s).ok())
            .and_then(|s| {
                host.strip_prefix(s)
                    .ok()
                    .map(|r| format!("/{}", r.display()))
            });
        Some(in_sysroot.unwrap_or_else(|| host.display().to_string()))
    }

    /// The guest path of a host path in the NVMM-backed directory.
    fn guest_path_of_pmem(&self, host: &Path) -> Option<String> {
        let (guest, dir) = self.pmem.as_ref()?;
        let rest = host.strip_prefix(dir).ok()?;
        let g = String::from_utf8_lossy(guest);
        Some(if rest.as_os_str().is_empty() {
            g.into_owned()
        } else {
            format!("{g}/{}", rest.display())
        })
    }

    /// The guest path of an open descriptor, as [`Fs::guest_path_of_host`].
    pub fn guest_path_of_open_fd(&self, fd: i32) -> Option<String> {
        let host = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
        self.guest_path_of_host(&host)
    }

    /// The absolute guest path `path` names relative to `dirfd`.
    pub fn guest_absolute(&self, dirfd: i32, path: &[u8]) -> Option<Vec<u8>> {
        if path.first() == Some(&b'/') {
            return Some(path.to_vec());
        }
        let mut v = if dirfd == AT_FDCWD {
            self.getcwd().ok()?
        } else {
            self.guest_path_of_open_fd(dirfd)?.into_bytes()
        };
        if v.last() != Some(&b'/') {
            v.push(b'/');
        }
        v.extend_from_slice(path);
        Some(v)
    }

    /// Maps an absolute guest path through the sysroot (unconfined mode).
    fn through_sysroot(&self, path: &[u8]) -> Option<PathBuf> {
        let s = self.sysroot.as_ref()?;
        if path.first() != Some(&b'/') {
            return None;
        }
        let cand = s.join(Path::new(std::ffi::OsStr::from_bytes(&path[1..])));
        std::fs::symlink_metadata(&cand).is_ok().then_some(cand)
    }

    /// A guest path (relative to `dirfd`) the emulator answers from a host
    /// path of its own: the process's `/proc` directory, `/sys/devices/
    /// system/cpu`, under a root all of `/proc` and `/sys` (the emulated
    /// tree); the program for `exe` (its link in the tree when not
    /// `follow`ed); the emulator's own `fd/` for the descriptors.
    fn special(&self, dirfd: i32, path: &[u8], follow: bool) -> Option<Special> {
        use crate::procfs::TreePath;
        if let Some(host) = self.in_pmem_dir(dirfd, path) {
            return Some(Special::Through(host));
        }
        if let Some(host) = self.in_map(dirfd, path) {
            return Some(Special::Through(host));
        }
        let tree = self.tree.as_ref()?;
        let abs;
        let path = if path.first() == Some(&b'/') {
            path
        } else if self.root.is_some() {
            abs = self.guest_abs(dirfd, path).ok()?;
            &abs[..]
        } else if dirfd != AT_FDCWD && !path.is_empty() {
            // Only a directory of the tree, or the host's /proc and /sys
            // (`openat(proc_fd, "self")`), can lead into the tree.
            let host = std::fs::read_link(format!("/proc/self/fd/{dirfd}")).ok()?;
            let mut base = match tree.guest_path(&host) {
                Some(g) => g.into_bytes(),
                None if host.starts_with("/proc") || host.starts_with("/sys") => {
                    host.as_os_str().as_bytes().to_vec()
                }
                None => return None,
            };
            base.push(b'/');
            base.extend_from_slice(path);
            abs = base;
            &abs[..]
        } else {
            return None;
        };
        Some(
            match tree.host_path(path, self.pid as u32, self.root.is_some())? {
                TreePath::Tree(p) => Special::Tree(p),
                TreePath::Exe if follow => Special::Through(self.exe_host.clone()),
                TreePath::Exe => Special::Tree(tree.own("exe")),
                TreePath::HostSelf(rest) => {
                    let fd = rest.split('/').nth(1).and_then(|n| n.parse::<i32>().ok());
                    if fd.is_some_and(|fd| self.is_internal(fd)) {
                        // Not the guest's: a name the tree lacks.
                        Special::Tree(tree.own(&rest))
                    } else {
                        Special::Through(Path::new("/proc/self").join(rest))
                    }
                }
            },
        )
    }

    /// Whether a guest path names something inside the NVMM-backed
    /// directory (not the directory itself).
    pub fn inside_pmem_dir(&self, dirfd: i32, path: &[u8]) -> bool {
        let Some((_, host)) = &self.pmem else {
            return false;
        };
        self.in_pmem_dir(dirfd, path).is_some_and(|p| p != *host)
    }

    /// The host path of a guest path inside the NVMM-backed directory.
    fn in_pmem_dir(&self, dirfd: i32, path: &[u8]) -> Option<PathBuf> {
        let (guest, host) = self.pmem.as_ref()?;
        if path.is_empty() {
            return None;
        }
        let abs = self.absolute_in_view(dirfd, path)?;
        let rest = abs.strip_prefix(&guest[..])?;
        if !rest.is_empty() && rest[0] != b'/' {
            return None;
        }
        // `..` leaves the directory: resolved as any other path.
        if rest.split(|&c| c == b'/').any(|c| c == b"..") {
            return None;
        }
        Some(host.join(std::ffi::OsStr::from_bytes(
            rest.strip_prefix(b"/").unwrap_or(rest),
        )))
    }

    /// Opens `path` like openat(2). Returns the new host (= guest) fd.
    pub fn open(&self, dirfd: i32, path: &[u8], flags: i32, mode: u32) -> Result<i32, Errno> {
        if let Some(special) = self.special(dirfd, path, flags & libc::O_NOFOLLOW == 0) {
            let read_only = flags & libc::O_ACCMODE == libc::O_RDONLY
                && flags & (libc::O_CREAT | libc::O_TRUNC) == 0;
            if !read_only && matches!(special, Special::Tree(_)) {
                return Err(EACCES);
            }
            let c = cstr(special.path().as_os_str().as_bytes())?;
            // SAFETY: c is NUL-terminated.
            let r = unsafe { libc::open(c.as_ptr(), flags, mode) };
            return if r < 0 {
                Err(Errno::last_host())
            } else {
                Ok(r)
            };
        }
        match &self.root {
            Some((rootfd, _)) => {
                let abs = cstr(&self.guest_abs(dirfd, path)?)?;
                let fd = Self::openat2(
                    rootfd.as_raw_fd(),
                    &abs,
                    flags as u32 as u64,
                    mode as u64,
                    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
                )?;
                let raw = fd.as_raw_fd();
                std::mem::forget(fd);
                Ok(raw)
            }
            None => {
                let host = self.through_sysroot(path);
                let c = match &host {
                    Some(h) => cstr(h.as_os_str().as_bytes())?,
                    None => cstr(path)?,
                };
                // SAFETY: c is NUL-terminated.
                let r = unsafe { libc::openat(dirfd, c.as_ptr(), flags, mode) };
                if r < 0 {
                    Err(Errno::last_host())
                } else {
                    Ok(r)
                }
            }
        }
    }

    /// Resolves `path` for a `*at` call. With `follow`, the final component's
    /// symlink is followed and the result names the object itself (via an
    /// O_PATH descriptor and an empty name, for AT_EMPTY_PATH calls); without
    /// it the parent directory is resolved and the last component returned.
    pub fn resolve(&self, dirfd: i32, path: &[u8], follow: bool) -> Result<HostName, Errno> {
        if let Some(special) = self.special(dirfd, path, follow) {
            return Ok(HostName {
                _owned: None,
                dirfd: AT_FDCWD,
                name: cstr(special.path().as_os_str().as_bytes())?,
            });
        }
        let Some((rootfd, _)) = &self.root else {
            let name = match self.through_sysroot(path) {
                Some(h) => cstr(h.as_os_str().as_bytes())?,
                None => cstr(path)?,
            };
            return Ok(HostName {
                _owned: None,
                dirfd,
                name,
            });
        };
        if path.is_empty() {
            return Err(ENOENT);
        }
        let abs = self.guest_abs(dirfd, path)?;
        let trimmed: &[u8] = {
            let mut t = &abs[..];
            while t.len() > 1 && t.last() == Some(&b'/') {
                t = &t[..t.len() - 1];
            }
            t
        };
        let split = trimmed.iter().rposition(|&c| c == b'/').unwrap_or(0);
        let last = &trimmed[split + 1..];
        if follow || last.is_empty() || last == b"." || last == b".." {
            let fd = Self::openat2(
                rootfd.as_raw_fd(),
                &cstr(trimmed)?,
                libc::O_PATH as u64,
                0,
                RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
            )?;
            // Name the object through its descriptor's /proc link: every
            // `*at` call follows it to exactly the object resolved here.
            let name = cstr(format!("/proc/self/fd/{}", fd.as_raw_fd()).as_bytes())?;
            return Ok(HostName {
                _owned: Some(fd),
                dirfd: AT_FDCWD,
                name,
            });
        }
        let parent = if split == 0 {
            &b"/"[..]
        } else {
            &trimmed[..split]
        };
        let fd = Self::openat2(
            rootfd.as_raw_fd(),
            &cstr(parent)?,
            (libc::O_PATH | libc::O_DIRECTORY) as u64,
            0,
            RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        )?;
        let raw = fd.as_raw_fd();
        Ok(HostName {
            _owned: Some(fd),
            dirfd: raw,
            name: cstr(last)?,
        })
    }

    /// [`Fs::resolve`] for a call that changes the name or the object
    /// (unlink, mkdir, rename, link, chmod, ...): the emulated tree is not
    /// the guest's to change (`EPERM`, as procfs's directories).
    pub fn resolve_to_change(
        &self,
        dirfd: i32,
        path: &[u8],
        follow: bool,
    ) -> Result<HostName, Errno> {
        if let Some(Special::Tree(_)) = self.special(dirfd, path, follow) {
            return Err(EPERM);
        }
        self.resolve(dirfd, path, follow)
    }

    /// A host path for reading a whole file (execve, the interpreter).
    pub fn host_path(&self, dirfd: i32, path: &[u8]) -> Result<PathBuf, Errno> {
        if let Some(special) = self.special(dirfd, path, true) {
            return Ok(special.path().to_path_buf());
        }
        match &self.root {
            Some(_) => {
                let fd = self.open(dirfd, path, libc::O_RDONLY | libc::O_CLOEXEC, 0)?;
                // SAFETY: fd was just opened and is owned here.
                let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                let p = std::fs::read_link(format!("/proc/self/fd/{}", owned.as_raw_fd()))
                    .map_err(|_| EIO)?;
                Ok(p)
            }
            None => Ok(self
                .through_sysroot(path)
                .unwrap_or_else(|| PathBuf::from(std::ffi::OsStr::from_bytes(path)))),
        }
    }

    /// chdir(2).
    pub fn chdir(&mut self, path: &[u8]) -> Result<(), Errno> {
        match &self.root {
            Some(_) => {
                let n = self.resolve(AT_FDCWD, path, true)?;
                let mut st: libc::stat = unsafe_zeroed_stat();
                // SAFETY: n.name is NUL-terminated; st is writable.
                if unsafe { libc::stat(n.name.as_ptr(), &mut st) } < 0 {
                    return Err(Errno::last_host());
                }
                if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                    return Err(ENOTDIR);
                }
                let name = Path::new(std::ffi::OsStr::from_bytes(n.name.as_bytes()));
                // A descriptor's link, or a host path standing for a guest
                // one (a map, the NVMM-backed directory).
                let host = if name.starts_with("/proc/self/fd") {
                    std::fs::read_link(name)
                } else {
                    std::fs::canonicalize(name)
                }
                .map_err(|_| ENOENT)?;
                self.cwd = self.host_to_guest(&host);
                Ok(())
            }
            None => {
                let n = self.resolve(AT_FDCWD, path, true)?;
                // SAFETY: NUL-terminated path.
                if unsafe { libc::chdir(n.name.as_ptr()) } < 0 {
                    return Err(Errno::last_host());
                }
                Ok(())
            }
        }
    }

    /// fchdir(2).
    pub fn fchdir(&mut self, fd: i32) -> Result<(), Errno> {
        match &self.root {
            Some(_) => {
                self.cwd = self.guest_path_of_fd(fd)?;
                Ok(())
            }
            None => {
                // SAFETY: plain syscall on an integer fd.
                if unsafe { libc::fchdir(fd) } < 0 {
                    Err(Errno::last_host())
                } else {
                    Ok(())
                }
            }
        }
    }

    /// getcwd(2) contents.
    pub fn getcwd(&self) -> Result<Vec<u8>, Errno> {
        match &self.root {
            Some(_) => Ok(self.cwd.clone().into_bytes()),
            None => std::env::current_dir()
                .map(|p| match self.mapped_guest_of(&p) {
                    Some(guest) => guest.into_bytes(),
                    None => p.as_os_str().as_bytes().to_vec(),
                })
                .map_err(|_| ENOENT),
        }
    }

    /// readlink for a resolved name, with `/proc/self/exe` answered with the
    /// guest program.
    pub fn readlink(&self, dirfd: i32, path: &[u8]) -> Result<Vec<u8>, Errno> {
        let through = match self.special(dirfd, path, false) {
            Some(Special::Tree(p)) if p.ends_with("proc/self/exe") => {
                return Ok(self.exe_guest.clone().into_bytes());
            }
            Some(Special::Through(p)) => Some(p),
            _ => None,
        };
        let n = self.resolve(dirfd, path, false)?;
        let mut buf = vec![0u8; 4096];
        // SAFETY: buf is writable for its length; name is NUL-terminated.
        let r = unsafe {
            libc::readlinkat(n.dirfd, n.name.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
        };
        if r < 0 {
            return Err(Errno::last_host());
        }
        buf.truncate(r as usize);
        // A descriptor's link names the object as the guest knows it (a
        // pipe's `pipe:[N]` as it is); nothing outside the root is shown.
        if through.is_some() && buf.first() == Some(&b'/') {
            let host = Path::new(std::ffi::OsStr::from_bytes(&buf));
            return self
                .guest_path_of_host(host)
                .map(String::into_bytes)
                .ok_or(ENOENT);
        }
        Ok(buf)
    }
}

/// A zeroed host `stat` buffer.
pub fn unsafe_zeroed_stat() -> libc::stat {
    // SAFETY: libc::stat is plain old data; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_takes_dots_out_by_name() {
        for (path, want) in [
            ("/", "/"),
            ("/a/b", "/a/b"),
            ("/a//b/", "/a/b"),
            ("/a/./b/../c", "/a/c"),
            ("/..", "/"),
            ("/a/../../b", "/b"),
        ] {
            assert_eq!(normalize(path.as_bytes()), want.as_bytes(), "{path}");
        }
    }

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rvnvmm-fs-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/file"), b"x").unwrap();
        d
    }

    #[test]
    fn a_map_places_a_host_directory_at_a_guest_path_and_back() {
        let d = scratch("map");
        let host = std::fs::canonicalize(&d).unwrap();
        let mut fs = Fs::new(None, None).unwrap();
        fs.add_map(Map::parse(&format!("/bench/={}", d.display())).unwrap())
            .unwrap();
        fs.add_map(Map::new("/bench/sub/inner", &d.join("sub")).unwrap())
            .unwrap();
        assert_eq!(fs.maps()[0].guest, "/bench/sub/inner", "innermost first");
        assert_eq!(fs.guest_named_host(b"/bench"), Some(host.clone()));
        assert_eq!(
            fs.guest_named_host(b"/bench/sub/file"),
            Some(host.join("sub/file"))
        );
        assert_eq!(
            fs.guest_named_host(b"/bench/sub/inner/file"),
            Some(host.join("sub/file"))
        );
        assert_eq!(fs.guest_named_host(b"/benchmark"), None, "by whole names");
        assert_eq!(fs.guest_named_host(b"/bench/../etc"), None);
        // Out of a map by `..`: the guest's parent of the map, not the
        // host directory's.
        assert_eq!(
            fs.host_path(AT_FDCWD, b"/bench/sub/inner/../..").unwrap(),
            host
        );
        assert_eq!(
            fs.host_path(AT_FDCWD, b"/bench/..").unwrap(),
            PathBuf::from("/")
        );
        assert_eq!(
            fs.host_path(AT_FDCWD, b"/bench/../tmp").unwrap(),
            PathBuf::from("/tmp")
        );
        assert_eq!(fs.guest_named_host(b"bench/sub"), None, "absolute only");
        assert_eq!(
            fs.guest_path_of_host(&host.join("sub/file")).as_deref(),
            Some("/bench/sub/inner/file")
        );
        // Opening through the map reads the host file.
        let fd = fs
            .open(AT_FDCWD, b"/bench/sub/file", libc::O_RDONLY, 0)
            .unwrap();
        // SAFETY: the descriptor was just opened and is owned here.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        assert_eq!(std::io::read_to_string(f).unwrap(), "x");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_map_refuses_what_it_cannot_place() {
        let d = scratch("bad");
        for spec in ["", "=", "/a", "/a=", "=/tmp"] {
            assert!(
                matches!(Map::parse(spec), Err(MapError::Syntax(_))),
                "{spec}"
            );
        }
        for guest in ["relative", "/", "/.."] {
            assert!(
                matches!(Map::new(guest, &d), Err(MapError::GuestPath(_))),
                "{guest}"
            );
        }
        let missing = Map::new("/x", &d.join("missing")).unwrap_err();
        assert!(missing.to_string().contains("/x="), "{missing}");
        let mut fs = Fs::new(None, None).unwrap();
        fs.add_map(Map::new("/x", &d).unwrap()).unwrap();
        assert!(matches!(
            fs.add_map(Map::new("/x/", &d).unwrap()),
            Err(MapError::Twice(_))
        ));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_confined_guest_can_work_in_a_mapped_directory() {
        let d = scratch("root");
        let root = d.join("root");
        std::fs::create_dir_all(&root).unwrap();
        let mut fs = Fs::new(Some(&root), None).unwrap();
        fs.add_map(Map::new("/data", &d.join("sub")).unwrap())
            .unwrap();
        fs.chdir(b"/data").unwrap();
        assert_eq!(fs.getcwd().unwrap(), b"/data");
        let fd = fs.open(AT_FDCWD, b"file", libc::O_RDONLY, 0).unwrap();
        // SAFETY: the descriptor was just opened and is owned here.
        drop(unsafe { std::fs::File::from_raw_fd(fd) });
        fs.chdir(b"/").unwrap();
        assert_eq!(fs.getcwd().unwrap(), b"/");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A `sockaddr_un` of `path` (NUL-terminated), as a guest passes it.
    fn sun(path: &[u8]) -> Vec<u8> {
        let mut v = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        v.extend_from_slice(path);
        v.push(0);
        v
    }

    #[test]
    fn socket_paths_resolve_inside_the_root_and_come_back_as_the_guests() {
        let base = std::env::temp_dir().join(format!("rvnvmm-fs-sockets-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let mut fs = Fs::new(Some(&root), None).unwrap();
        // Without a root, and for addresses that are no path, nothing changes.
        let plain = Fs::new(None, None).unwrap();
        let dotdot = sun(b"/../s.sock");
        assert_eq!(plain.host_sockaddr(&dotdot, true).unwrap().0, dotdot);
        let abstract_name = sun(b"\0abstract");
        let unnamed = sun(b"")[..2].to_vec();
        let inet = [2u8, 0, 0, 80, 127, 0, 0, 1];
        for a in [&abstract_name[..], &unnamed, &inet] {
            assert_eq!(fs.host_sockaddr(a, true).unwrap().0, a);
            assert_eq!(fs.guest_sockaddr(a), a);
        }
        // A bind by ".." names the root's own directory, through its
        // descriptor's /proc link.
        let (host, hold) = fs.host_sockaddr(&dotdot, true).unwrap();
        let text = String::from_utf8_lossy(&host[2..host.len() - 1]).into_owned();
        assert!(
            text.starts_with("/proc/self/fd/") && text.ends_with("/s.sock"),
            "{text}"
        );
        let dir = std::fs::read_link(text.trim_end_matches("/s.sock")).unwrap();
        assert_eq!(dir, std::fs::canonicalize(&root).unwrap());
        let sock = std::os::unix::net::UnixDatagram::unbound().unwrap();
        // SAFETY: `host` holds host.len() bytes of socket address.
        let r = unsafe {
            libc::bind(
                sock.as_raw_fd(),
                host.as_ptr().cast(),
                host.len() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0);
        drop(hold);
        assert!(root.join("s.sock").exists() && !base.join("s.sock").exists());
        // What the host gives back is the guest's name again.
        fs.note_socket_bound(&dotdot, &host);
        assert_eq!(fs.guest_sockaddr(&host), dotdot);
        // A socket bound by its host path inside the root: its guest path.
        let canon = std::fs::canonicalize(&root).unwrap();
        let inside = canon.join("sub/t.sock");
        assert_eq!(
            fs.guest_sockaddr(&sun(inside.as_os_str().as_bytes())),
            sun(b"/sub/t.sock")
        );
        // Connecting follows the name to the socket itself.
        let (host, _hold) = fs.host_sockaddr(&sun(b"/sub/../s.sock"), false).unwrap();
        assert!(String::from_utf8_lossy(&host).contains("/proc/self/fd/"));
        assert_eq!(
            fs.host_sockaddr(&sun(b"/missing/s.sock"), false).err(),
            Some(ENOENT)
        );
        // A name the host's longer form cannot hold.
        let long = [b'n'; 100];
        assert_eq!(
            fs.host_sockaddr(&sun(&long), true).err(),
            Some(ENAMETOOLONG)
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
