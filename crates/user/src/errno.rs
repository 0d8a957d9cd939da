//! Linux errno values: what a system call fails with. The guest sees them
//! negated in a0; the emulator passes them around as [`Errno`].

use std::fmt;

/// A Linux errno value (positive), the error of a system call. The named
/// values are the module's constants (`ENOENT`, ...); riscv64 uses the
/// generic numbering, the same as the host's.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Errno(i32);

/// A system call's result: its value, or the errno it fails with.
pub type SysResult<T = i64> = Result<T, Errno>;

macro_rules! errnos {
    ($($name:ident = $value:literal,)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`")]
            pub const $name: Errno = Errno($value);
        )*

        impl Errno {
            /// The symbolic name (`"ENOENT"`), for the values named here.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($value => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }
    };
}

errnos! {
    EPERM = 1,
    ENOENT = 2,
    ESRCH = 3,
    EINTR = 4,
    EIO = 5,
    E2BIG = 7,
    ENOEXEC = 8,
    EBADF = 9,
    ECHILD = 10,
    EAGAIN = 11,
    ENOMEM = 12,
    EACCES = 13,
    EFAULT = 14,
    EBUSY = 16,
    EEXIST = 17,
    EXDEV = 18,
    ENODEV = 19,
    ENOTDIR = 20,
    EISDIR = 21,
    EINVAL = 22,
    EMFILE = 24,
    ENOTTY = 25,
    EFBIG = 27,
    ENOSPC = 28,
    ESPIPE = 29,
    EROFS = 30,
    EPIPE = 32,
    ERANGE = 34,
    ENAMETOOLONG = 36,
    ENOSYS = 38,
    ENOTEMPTY = 39,
    ELOOP = 40,
    ENOTSOCK = 88,
    EOPNOTSUPP = 95,
    EAFNOSUPPORT = 97,
    ECONNREFUSED = 111,
    ETIMEDOUT = 110,
    EALREADY = 114,
    EINPROGRESS = 115,
}

/// Not an errno the guest sees: the call made its thread wait and will run
/// again (`syscall/blocking.rs`), so a0 is left as it is. The number is
/// Linux's kernel-internal `ERESTARTSYS`.
pub(crate) const BLOCKED: Errno = Errno(512);

impl Errno {
    /// The errno with this number, as the host or the guest reports it;
    /// `None` unless it is positive.
    pub fn from_raw(n: i32) -> Option<Errno> {
        (n > 0).then_some(Errno(n))
    }

    /// The number.
    pub fn raw(self) -> i32 {
        self.0
    }

    /// The calling thread's last host errno (after a libc call that
    /// failed); `EIO` if the host left none.
    pub fn last_host() -> Errno {
        Errno::from(std::io::Error::last_os_error())
    }

    /// The value a system call returns for it: `-errno`.
    pub fn to_return(self) -> i64 {
        -i64::from(self.0)
    }
}

/// A host I/O error as the errno it carries; `EIO` for an error that is
/// not the host's (`std` reports some without one).
impl From<std::io::Error> for Errno {
    fn from(e: std::io::Error) -> Errno {
        e.raw_os_error().and_then(Errno::from_raw).unwrap_or(EIO)
    }
}

/// `-ENOENT`: the return value, as Linux writes it.
impl std::ops::Neg for Errno {
    type Output = i64;

    fn neg(self) -> i64 {
        self.to_return()
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "errno {}", self.0),
        }
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Errno {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_match_the_host() {
        for (e, host) in [
            (ENOENT, libc::ENOENT),
            (EBADF, libc::EBADF),
            (EFAULT, libc::EFAULT),
            (EINVAL, libc::EINVAL),
            (ENOSYS, libc::ENOSYS),
            (ETIMEDOUT, libc::ETIMEDOUT),
            (EOPNOTSUPP, libc::EOPNOTSUPP),
            (ECONNREFUSED, libc::ECONNREFUSED),
        ] {
            assert_eq!(e.raw(), host, "{e}");
        }
        assert_eq!(ENOENT.to_string(), "ENOENT");
        assert_eq!(format!("{:?}", Errno::from_raw(133).unwrap()), "errno 133");
        assert_eq!(Errno::from_raw(0), None);
        assert_eq!(Errno::from_raw(-2), None);
    }

    #[test]
    fn return_values_are_negated() {
        assert_eq!(-EINVAL, -22);
        assert_eq!(EAGAIN.to_return(), -11);
    }

    #[test]
    fn host_errors_keep_their_errno() {
        let e = std::fs::File::open("/nonexistent/rvnvmm-errno-test").unwrap_err();
        assert_eq!(Errno::from(e), ENOENT);
        let not_os = std::io::Error::other("no errno");
        assert_eq!(Errno::from(not_os), EIO);
        // SAFETY: close of a descriptor that cannot be open fails with
        // EBADF and touches nothing.
        assert_eq!(unsafe { libc::close(-1) }, -1);
        assert_eq!(Errno::last_host(), EBADF);
    }
}
