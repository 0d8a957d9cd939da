//! The guest's open descriptors in a checkpoint. Guest descriptors are the
//! emulator's host descriptors, so they are saved by what the host says of
//! them and reopened under the same numbers: regular files and directories
//! by path, offset, flags and close-on-exec (a file must be unchanged:
//! same size and modification time), character devices by path, the
//! emulated `/proc` and `/sys` files and the device files by guest path,
//! pipes whose both ends the process holds with the bytes buffered in them.
//! 0, 1 and 2 are the restoring run's. Anything else (sockets, pipes to
//! other processes, eventfd, timerfd, epoll, ...) is refused, named.

use super::inherited::{inherited, open_fds};
use crate::devices::Device;
use crate::fs::AT_FDCWD;
use crate::process::Process;
use rvnvmm_checkpoint::{CheckpointError, StateReader, StateWriter};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A descriptor's kind in the section.
const KIND_FILE: u8 = 0;
const KIND_CHAR_DEVICE: u8 = 1;
const KIND_TREE: u8 = 2;
const KIND_DEVICE: u8 = 3;
const KIND_PIPE: u8 = 4;

/// The most descriptors a section may list.
const MAX_FDS: usize = 1 << 20;

/// `fstat` of a host descriptor.
pub(super) fn fstat(fd: i32) -> std::io::Result<libc::stat> {
    let mut st = crate::fs::unsafe_zeroed_stat();
    // SAFETY: fstat into a zeroed stat buffer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Opens `path` with `flags` and checks that it is the file the checkpoint
/// saw: the same size and modification time.
pub(super) fn open_checked(
    path: &Path,
    flags: i32,
    size: u64,
    sec: u64,
    nsec: u64,
    what: &str,
) -> Result<OwnedFd, CheckpointError> {
    let bad = |why: String| {
        CheckpointError::Outside(format!("the {what} file {}: {why}", path.display()))
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| bad("a NUL in its name".into()))?;
    // SAFETY: `c` is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(bad(std::io::Error::last_os_error().to_string()));
    }
    // SAFETY: a new descriptor, owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let st = fstat(fd.as_raw_fd()).map_err(|e| bad(e.to_string()))?;
    if (
        st.st_size as u64,
        st.st_mtime as u64,
        st.st_mtime_nsec as u64,
    ) != (size, sec, nsec)
    {
        return Err(bad(format!(
            "it changed since the checkpoint was taken (size {size}, modified {sec}.{nsec:09} then; \
             size {}, modified {}.{:09} now): a restore needs the files the process has open as they were",
            st.st_size, st.st_mtime, st.st_mtime_nsec
        )));
    }
    Ok(fd)
}

/// Puts `fd` at number `target` (closing what was there), close-on-exec
/// as `cloexec` says.
fn place(fd: OwnedFd, target: i32, cloexec: bool) -> std::io::Result<()> {
    let flags = if cloexec { libc::O_CLOEXEC } else { 0 };
    if fd.as_raw_fd() == target {
        // SAFETY: F_SETFD on a descriptor we own, then kept open.
        unsafe {
            libc::fcntl(
                target,
                libc::F_SETFD,
                if cloexec { libc::FD_CLOEXEC } else { 0 },
            )
        };
        std::mem::forget(fd);
        return Ok(());
    }
    // SAFETY: dup3 onto the guest's number; `fd` is closed when dropped.
    if unsafe { libc::dup3(fd.as_raw_fd(), target, flags) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The file status flags a descriptor is reopened with.
const REOPEN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_DIRECT
    | libc::O_SYNC
    | libc::O_DSYNC
    | libc::O_NOATIME
    | libc::O_DIRECTORY
    | libc::O_PATH;

impl Process {
    /// The descriptors the emulator keeps for itself: the root, the tree's
    /// hold, the files areas map.
    fn own_fds(&self) -> Vec<i32> {
        let mut own: Vec<i32> = self
            .memory
            .aspace
            .vmas
            .values()
            .filter_map(|v| v.file.as_ref().map(|f| f.fd.as_raw_fd()))
            .collect();
        own.extend(
            open_fds()
                .into_iter()
                .filter(|&fd| self.files.fs.is_internal(fd)),
        );
        own
    }

    /// Writes the guest's descriptors (3 and up), refusing those a
    /// checkpoint cannot hold.
    pub(super) fn save_descriptors(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        let own = self.own_fds();
        let fds: Vec<i32> = open_fds()
            .into_iter()
            .filter(|&fd| !inherited(fd) && !own.contains(&fd))
            .collect();
        let refuse = |fd: i32, what: String| {
            Err(CheckpointError::Unsupported(format!(
                "descriptor {fd}: {what}"
            )))
        };
        // Pipes by inode: their read and write ends.
        let mut pipes: Vec<(u64, Vec<i32>, Vec<i32>)> = Vec::new();
        let mut entries = StateWriter::new();
        let mut n = 0usize;
        for &fd in &fds {
            let st = match fstat(fd) {
                Ok(st) => st,
                Err(e) => return refuse(fd, e.to_string()),
            };
            let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
            // SAFETY: F_GETFL and F_GETFD take no argument.
            let (flags, fdflags) = unsafe {
                (
                    libc::fcntl(fd, libc::F_GETFL),
                    libc::fcntl(fd, libc::F_GETFD),
                )
            };
            let cloexec = fdflags & libc::FD_CLOEXEC != 0;
            let kind = st.st_mode & libc::S_IFMT;
            if kind == libc::S_IFIFO && link.as_os_str().as_bytes().starts_with(b"pipe:") {
                let ends = match pipes.iter_mut().find(|p| p.0 == st.st_ino) {
                    Some(p) => p,
                    None => {
                        pipes.push((st.st_ino, Vec::new(), Vec::new()));
                        pipes.last_mut().expect("just pushed")
                    }
                };
                if flags & libc::O_ACCMODE == libc::O_RDONLY {
                    ends.1.push(fd);
                } else {
                    ends.2.push(fd);
                }
                continue;
            }
            if let Some(dev) = Device::of_fd(fd) {
                entries.u32(fd as u32);
                entries.u8(KIND_DEVICE);
                entries.bytes(dev.path().as_bytes());
                entries.u32(flags as u32);
                entries.bool(cloexec);
                n += 1;
                continue;
            }
            let tree_path = self
                .files
                .fs
                .tree
                .as_ref()
                .and_then(|t| t.guest_path(&link));
            if let (Some(guest), libc::S_IFREG | libc::S_IFDIR) = (&tree_path, kind) {
                entries.u32(fd as u32);
                entries.u8(KIND_TREE);
                entries.bytes(guest.as_bytes());
                entries.u32(flags as u32);
                entries.bool(cloexec);
                entries.u64(offset(fd));
                n += 1;
                continue;
            }
            match kind {
                libc::S_IFREG | libc::S_IFDIR if link.is_absolute() => {
                    if st.st_nlink == 0 {
                        return refuse(fd, format!("the deleted file {}", link.display()));
                    }
                    entries.u32(fd as u32);
                    entries.u8(KIND_FILE);
                    entries.bytes(link.as_os_str().as_bytes());
                    entries.u32(flags as u32);
                    entries.bool(cloexec);
                    entries.u64(offset(fd));
                    entries.u64(st.st_size as u64);
                    entries.u64(st.st_mtime as u64);
                    entries.u64(st.st_mtime_nsec as u64);
                    n += 1;
                }
                libc::S_IFCHR if link.is_absolute() => {
                    entries.u32(fd as u32);
                    entries.u8(KIND_CHAR_DEVICE);
                    entries.bytes(link.as_os_str().as_bytes());
                    entries.u32(flags as u32);
                    entries.bool(cloexec);
                    n += 1;
                }
                libc::S_IFSOCK => return refuse(fd, "a socket".into()),
                libc::S_IFIFO => return refuse(fd, format!("the named pipe {}", link.display())),
                _ => {
                    let name = link.display().to_string();
                    let name = if name.is_empty() {
                        "unknown".into()
                    } else {
                        name
                    };
                    return refuse(fd, format!("{name}, which a checkpoint cannot hold"));
                }
            }
        }
        for (_, readers, writers) in &pipes {
            let fd = readers.first().or(writers.first()).copied().unwrap_or(-1);
            if readers.is_empty() || writers.is_empty() {
                return refuse(
                    fd,
                    "a pipe whose other end another process holds (or nobody)".into(),
                );
            }
            let buffered = match drain_and_refill(readers[0], writers[0]) {
                Ok(b) => b,
                Err(e) => return refuse(fd, format!("a pipe that cannot be read back: {e}")),
            };
            // SAFETY: F_GETPIPE_SZ takes no argument.
            let capacity = unsafe { libc::fcntl(readers[0], libc::F_GETPIPE_SZ) }.max(0);
            entries.u32(readers[0] as u32);
            entries.u8(KIND_PIPE);
            entries.u32(capacity as u32);
            entries.bytes(&buffered);
            for ends in [readers, writers] {
                entries.count(ends.len());
                for &e in ends {
                    // SAFETY: F_GETFL and F_GETFD take no argument.
                    let (fl, fdfl) =
                        unsafe { (libc::fcntl(e, libc::F_GETFL), libc::fcntl(e, libc::F_GETFD)) };
                    entries.u32(e as u32);
                    entries.u32(fl as u32);
                    entries.bool(fdfl & libc::FD_CLOEXEC != 0);
                }
            }
            n += 1;
        }
        w.count(n);
        w.bytes(&entries.into_bytes());
        Ok(())
    }

    /// Reopens the descriptors [`Process::save_descriptors`] wrote, under
    /// their numbers.
    pub(super) fn restore_descriptors(
        &mut self,
        outer: &mut StateReader<'_>,
    ) -> Result<(), CheckpointError> {
        let n = outer.count(MAX_FDS)?;
        let mut r = StateReader::new(super::DESCRIPTORS_SECTION, outer.bytes(usize::MAX)?);
        for _ in 0..n {
            let fd = r.u32()? as i32;
            if fd < 3 {
                return Err(r.malformed(format!("descriptor {fd}")));
            }
            if inherited(fd) || self.files.fs.is_internal(fd) {
                return Err(CheckpointError::Outside(format!(
                    "descriptor {fd}: this run holds that number already (given by the command \
                     that ran rvnvmm, or the emulator's own)"
                )));
            }
            let kind = r.u8()?;
            let fail = |why: String| CheckpointError::Outside(format!("descriptor {fd}: {why}"));
            match kind {
                KIND_FILE | KIND_CHAR_DEVICE => {
                    let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes(1 << 20)?));
                    let flags = r.u32()? as i32;
                    let cloexec = r.bool()?;
                    let opened = if kind == KIND_FILE {
                        let off = r.u64()?;
                        let (size, sec, nsec) = (r.u64()?, r.u64()?, r.u64()?);
                        let f = open_checked(&path, flags & REOPEN_FLAGS, size, sec, nsec, "open")?;
                        seek(&f, off).map_err(|e| fail(format!("{}: {e}", path.display())))?;
                        f
                    } else {
                        open_plain(&path, flags & REOPEN_FLAGS)
                            .map_err(|e| fail(format!("{}: {e}", path.display())))?
                    };
                    place(opened, fd, cloexec).map_err(|e| fail(e.to_string()))?;
                }
                KIND_TREE => {
                    let guest = r.bytes(1 << 20)?.to_vec();
                    let flags = r.u32()? as i32;
                    let cloexec = r.bool()?;
                    let off = r.u64()?;
                    let name = String::from_utf8_lossy(&guest).into_owned();
                    let raw = self
                        .files
                        .fs
                        .open(
                            AT_FDCWD,
                            &guest,
                            (flags & REOPEN_FLAGS) | libc::O_CLOEXEC,
                            0,
                        )
                        .map_err(|e| fail(format!("{name}: errno {}", e.raw())))?;
                    // SAFETY: a new descriptor, owned from here on.
                    let f = unsafe { OwnedFd::from_raw_fd(raw) };
                    seek(&f, off).map_err(|e| fail(format!("{name}: {e}")))?;
                    place(f, fd, cloexec).map_err(|e| fail(e.to_string()))?;
                }
                KIND_DEVICE => {
                    let path = r.bytes(64)?.to_vec();
                    let flags = r.u32()? as i32;
                    let cloexec = r.bool()?;
                    let dev = Device::by_path(&path)
                        .ok_or_else(|| r.malformed("an unknown device file"))?;
                    let raw = self
                        .open_device(dev, libc::O_CLOEXEC)
                        .map_err(|e| fail(format!("{}: errno {}", dev.path(), e.raw())))?;
                    // SAFETY: a new descriptor, owned from here on.
                    let f = unsafe { OwnedFd::from_raw_fd(raw as i32) };
                    set_status_flags(&f, flags);
                    place(f, fd, cloexec).map_err(|e| fail(e.to_string()))?;
                }
                KIND_PIPE => {
                    let capacity = r.u32()?;
                    let buffered = r.bytes(1 << 30)?.to_vec();
                    let mut ends = [Vec::new(), Vec::new()];
                    for e in &mut ends {
                        let k = r.count(MAX_FDS)?;
                        for _ in 0..k {
                            e.push((r.u32()? as i32, r.u32()? as i32, r.bool()?));
                        }
                    }
                    let (rd, wr) =
                        make_pipe(capacity, &buffered).map_err(|e| fail(format!("a pipe: {e}")))?;
                    for ((list, end), _) in ends.iter().zip([&rd, &wr]).zip(0..) {
                        for &(target, flags, cloexec) in list {
                            let dup = end.try_clone().map_err(|e| fail(e.to_string()))?;
                            set_status_flags(&dup, flags);
                            place(dup, target, cloexec).map_err(|e| fail(e.to_string()))?;
                        }
                    }
                }
                k => return Err(r.malformed(format!("descriptor kind {k}"))),
            }
        }
        r.finish()
    }
}

/// A descriptor's file offset.
fn offset(fd: i32) -> u64 {
    // SAFETY: lseek with SEEK_CUR moves nothing.
    let off = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    off.max(0) as u64
}

fn seek(fd: &OwnedFd, off: u64) -> std::io::Result<()> {
    // SAFETY: lseek on a descriptor we own.
    if unsafe { libc::lseek(fd.as_raw_fd(), off as i64, libc::SEEK_SET) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn open_plain(path: &Path, flags: i32) -> std::io::Result<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c` is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sets the status flags (`O_NONBLOCK`, `O_APPEND`, ...) a descriptor had.
fn set_status_flags(fd: &OwnedFd, flags: i32) {
    // SAFETY: F_SETFL with an integer argument; flags it cannot set are
    // ignored by the host.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) };
}

/// Reads what pipe `rd` holds and writes it back through `wr`: the pipe
/// is as it was, and its bytes are known.
fn drain_and_refill(rd: i32, wr: i32) -> std::io::Result<Vec<u8>> {
    let mut held: libc::c_int = 0;
    // SAFETY: FIONREAD into an int.
    if unsafe { libc::ioctl(rd, libc::FIONREAD, &mut held) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut buf = vec![0u8; held.max(0) as usize];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the rest of `buf`; the bytes are there
        // (FIONREAD), so the read does not block.
        let n = unsafe { libc::read(rd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n <= 0 {
            return Err(std::io::Error::last_os_error());
        }
        got += n as usize;
    }
    write_all(wr, &buf)?;
    Ok(buf)
}

fn write_all(fd: i32, data: &[u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: writing from the rest of `data`; it fits, as it was in
        // the pipe before.
        let n = unsafe { libc::write(fd, data[done..].as_ptr().cast(), data.len() - done) };
        if n <= 0 {
            return Err(std::io::Error::last_os_error());
        }
        done += n as usize;
    }
    Ok(())
}

/// A copy of `fd` numbered above the guest's descriptors.
fn high(fd: &OwnedFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own.
    let h = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 1000) };
    if h < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(h) })
}

/// A new pipe of `capacity` bytes holding `buffered`.
fn make_pipe(capacity: u32, buffered: &[u8]) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 into a two-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two new descriptors, owned from here on.
    let (low_rd, low_wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Above the guest's numbers: the low ones may be where an end goes,
    // and these are closed once the ends are placed.
    let (rd, wr) = (high(&low_rd)?, high(&low_wr)?);
    if capacity > 0 {
        // SAFETY: F_SETPIPE_SZ with an integer argument.
        unsafe { libc::fcntl(wr.as_raw_fd(), libc::F_SETPIPE_SZ, capacity as libc::c_int) };
    }
    write_all(wr.as_raw_fd(), buffered)?;
    Ok((rd, wr))
}
