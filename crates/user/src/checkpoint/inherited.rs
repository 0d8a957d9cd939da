//! The host descriptors a checkpoint leaves out: those this host process
//! had before its first guest process was made.

/// The descriptors this host process had before its first guest process
/// was made: inherited from the command that ran rvnvmm (0, 1, 2 and any
/// other) or the emulator's own. They are the restoring run's, not saved.
static INHERITED: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();

/// Notes the descriptors open now as [`INHERITED`] (the first call only).
pub(crate) fn note_inherited() {
    INHERITED.get_or_init(open_fds);
}

pub(crate) fn inherited(fd: i32) -> bool {
    fd <= 2 || INHERITED.get().is_some_and(|v| v.contains(&fd))
}

/// The open descriptors of this host process, in ascending order.
pub(crate) fn open_fds() -> Vec<i32> {
    let mut fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    fds.sort_unstable();
    // The listing's own descriptor is closed by now.
    // SAFETY: F_GETFD takes no argument.
    fds.retain(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0);
    fds
}
