//! Linux errno values as returned (negated) by system calls.
#![allow(missing_docs)]

pub const EPERM: i64 = 1;
pub const ENOENT: i64 = 2;
pub const ESRCH: i64 = 3;
pub const EINTR: i64 = 4;
pub const EIO: i64 = 5;
pub const E2BIG: i64 = 7;
pub const ENOEXEC: i64 = 8;
pub const EBADF: i64 = 9;
pub const ECHILD: i64 = 10;
pub const EAGAIN: i64 = 11;
pub const ENOMEM: i64 = 12;
pub const EACCES: i64 = 13;
pub const EFAULT: i64 = 14;
pub const EBUSY: i64 = 16;
pub const EEXIST: i64 = 17;
pub const ENOTDIR: i64 = 20;
pub const EISDIR: i64 = 21;
pub const EINVAL: i64 = 22;
pub const ENOTTY: i64 = 25;
pub const ENODEV: i64 = 19;
pub const ERANGE: i64 = 34;
pub const ENAMETOOLONG: i64 = 36;
pub const ENOSYS: i64 = 38;
pub const ELOOP: i64 = 40;
pub const ETIMEDOUT: i64 = 110;
pub const EXDEV: i64 = 18;
pub const EOPNOTSUPP: i64 = 95;

/// The calling thread's host errno, negated, as a syscall result.
pub fn host_errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(EIO as i32) as i64)
}

/// Converts a host libc return value (-1 + errno on failure) to a syscall
/// result.
pub fn host_ret(r: i64) -> i64 {
    if r == -1 {
        host_errno()
    } else {
        r
    }
}
