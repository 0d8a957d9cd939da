//! The riscv64 Linux guest ABI: the structures system calls read and write
//! in guest memory, as `#[repr(C)]` values with the kernel's layout.
//!
//! Each type is read and written whole ([`Process::read_obj`] and
//! [`Process::write_obj`]) through `zerocopy`, so no field is packed by hand
//! at a byte offset. Padding the kernel leaves implicit is an explicit
//! zeroed field here (zerocopy refuses implicit padding, and the guest sees
//! zeros there as before). The layouts are those of `include/uapi/asm-generic`
//! and `arch/riscv/include/uapi` for a 64-bit `long`; the tests pin every
//! size and offset.
//!
//! [`Process::read_obj`]: crate::process::Process::read_obj
//! [`Process::write_obj`]: crate::process::Process::write_obj

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

// The guest is little-endian riscv64 and these values are its bytes as the
// host holds them: the host must be little-endian too.
const _: () = assert!(
    cfg!(target_endian = "little"),
    "the guest ABI structs are the guest's bytes: the host must be little-endian"
);

const NS_PER_S: u64 = 1_000_000_000;

/// `struct timespec` (seconds, nanoseconds).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

/// Seconds and a fraction in units of `unit` ns as nanoseconds, if both
/// are in range (the fraction below one second).
fn to_ns(sec: i64, frac: i64, unit: u64) -> Option<u64> {
    let frac = frac as u64;
    (sec >= 0 && frac < NS_PER_S / unit).then(|| {
        (sec as u64)
            .saturating_mul(NS_PER_S)
            .saturating_add(frac * unit)
    })
}

/// `struct timeval` (seconds, microseconds).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Timeval {
    pub tv_sec: i64,
    pub tv_usec: i64,
}

/// A time the ABI gives as seconds and a fraction: [`Timespec`] or
/// [`Timeval`].
pub(crate) trait GuestTime: Copy {
    /// `ns` nanoseconds (the fraction truncated).
    fn from_ns(ns: u64) -> Self;
    /// The time in nanoseconds (saturating); `None` out of range.
    fn to_ns(self) -> Option<u64>;
}

impl GuestTime for Timespec {
    fn from_ns(ns: u64) -> Timespec {
        Timespec {
            tv_sec: (ns / NS_PER_S) as i64,
            tv_nsec: (ns % NS_PER_S) as i64,
        }
    }

    /// `None` for negative seconds or nanoseconds outside 0..10^9, which
    /// Linux rejects with EINVAL.
    fn to_ns(self) -> Option<u64> {
        to_ns(self.tv_sec, self.tv_nsec, 1)
    }
}

impl GuestTime for Timeval {
    fn from_ns(ns: u64) -> Timeval {
        Timeval {
            tv_sec: (ns / NS_PER_S) as i64,
            tv_usec: ((ns % NS_PER_S) / 1000) as i64,
        }
    }

    fn to_ns(self) -> Option<u64> {
        to_ns(self.tv_sec, self.tv_usec, 1000)
    }
}

/// An interval timer's setting: `struct itimerspec` (timer_settime,
/// timerfd_settime) over [`Timespec`], `struct itimerval` (setitimer,
/// getitimer) over [`Timeval`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Itimer<T> {
    pub it_interval: T,
    pub it_value: T,
}

/// `struct itimerspec`.
pub(crate) type Itimerspec = Itimer<Timespec>;
/// `struct itimerval`.
pub(crate) type Itimerval = Itimer<Timeval>;

impl<T: GuestTime> Itimer<T> {
    /// An interval and a value in nanoseconds.
    pub fn from_ns(interval: u64, value: u64) -> Itimer<T> {
        Itimer {
            it_interval: T::from_ns(interval),
            it_value: T::from_ns(value),
        }
    }

    /// (interval, value) in nanoseconds; `None` if a field is out of range.
    pub fn to_ns(self) -> Option<(u64, u64)> {
        Some((self.it_interval.to_ns()?, self.it_value.to_ns()?))
    }
}

/// `struct tms` (times), in clock ticks.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Tms {
    pub tms_utime: i64,
    pub tms_stime: i64,
    pub tms_cutime: i64,
    pub tms_cstime: i64,
}

/// `struct rusage`: the two times, then fourteen `long` counters
/// (`ru_maxrss` to `ru_nivcsw`), which the emulator leaves zero.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Rusage {
    pub ru_utime: Timeval,
    pub ru_stime: Timeval,
    pub ru_counters: [i64; 14],
}

/// `struct rlimit` (getrlimit, setrlimit, prlimit64).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Rlimit {
    pub rlim_cur: u64,
    pub rlim_max: u64,
}

/// `struct sysinfo` with a 64-bit `long` (`_f` is empty there).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Sysinfo {
    pub uptime: i64,
    pub loads: [u64; 3],
    pub totalram: u64,
    pub freeram: u64,
    pub sharedram: u64,
    pub bufferram: u64,
    pub totalswap: u64,
    pub freeswap: u64,
    pub procs: u16,
    pub pad: u16,
    /// Alignment padding before `totalhigh`.
    pub _pad1: u32,
    pub totalhigh: u64,
    pub freehigh: u64,
    pub mem_unit: u32,
    /// Tail padding to the struct's 8-byte alignment.
    pub _pad2: u32,
}

/// `struct new_utsname`: six NUL-padded strings of 65 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct Utsname {
    pub sysname: [u8; 65],
    pub nodename: [u8; 65],
    pub release: [u8; 65],
    pub version: [u8; 65],
    pub machine: [u8; 65],
    pub domainname: [u8; 65],
}

/// `struct stat` of asm-generic (riscv64's `fstat`, `newfstatat`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_mode: u32,
    pub st_nlink: u32,
    pub st_uid: u32,
    pub st_gid: u32,
    pub st_rdev: u64,
    pub __pad1: u64,
    pub st_size: i64,
    pub st_blksize: i32,
    pub __pad2: i32,
    pub st_blocks: i64,
    pub st_atime: i64,
    pub st_atime_nsec: u64,
    pub st_mtime: i64,
    pub st_mtime_nsec: u64,
    pub st_ctime: i64,
    pub st_ctime_nsec: u64,
    pub __unused4: u32,
    pub __unused5: u32,
}

impl Stat {
    /// The guest's view of a host `stat` (fields narrowed as the guest's are).
    pub fn from_host(st: &libc::stat) -> Stat {
        Stat {
            st_dev: st.st_dev,
            st_ino: st.st_ino,
            st_mode: st.st_mode,
            st_nlink: st.st_nlink as u32,
            st_uid: st.st_uid,
            st_gid: st.st_gid,
            st_rdev: st.st_rdev,
            st_size: st.st_size,
            st_blksize: st.st_blksize as i32,
            st_blocks: st.st_blocks,
            st_atime: st.st_atime,
            st_atime_nsec: st.st_atime_nsec as u64,
            st_mtime: st.st_mtime,
            st_mtime_nsec: st.st_mtime_nsec as u64,
            st_ctime: st.st_ctime,
            st_ctime_nsec: st.st_ctime_nsec as u64,
            ..Stat::default()
        }
    }
}

/// `struct iovec`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Iovec {
    pub iov_base: u64,
    pub iov_len: u64,
}

/// `struct pollfd` (also the host's, so a slice of them goes to `poll`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Pollfd {
    pub fd: i32,
    pub events: i16,
    pub revents: i16,
}

/// `struct epoll_event` on riscv64: not packed (only x86-64's is), so
/// `data` is 8-aligned after 4 bytes of padding.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct EpollEvent {
    pub events: u32,
    pub _pad: u32,
    pub data: u64,
}

/// `struct user_msghdr` (sendmsg, recvmsg); the pointers are guest addresses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Msghdr {
    pub msg_name: u64,
    pub msg_namelen: u32,
    pub _pad1: u32,
    pub msg_iov: u64,
    pub msg_iovlen: u64,
    pub msg_control: u64,
    pub msg_controllen: u64,
    pub msg_flags: u32,
    pub _pad2: u32,
}

/// `struct mmsghdr` (sendmmsg, recvmmsg).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct Mmsghdr {
    pub msg_hdr: Msghdr,
    pub msg_len: u32,
    pub _pad: u32,
}

/// The first 64 bytes of `struct clone_args` (clone3's `CLONE_ARGS_SIZE_VER0`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct CloneArgs {
    pub flags: u64,
    pub pidfd: u64,
    pub child_tid: u64,
    pub parent_tid: u64,
    pub exit_signal: u64,
    pub stack: u64,
    pub stack_size: u64,
    pub tls: u64,
}

/// The kernel's `struct sigaction` on riscv64 (no `sa_restorer`): one
/// signal's disposition.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct SigAction {
    /// SIG_DFL (0), SIG_IGN (1) or a handler address.
    pub handler: u64,
    pub flags: u64,
    pub mask: u64,
}

/// `siginfo_t`: 128 bytes, the union after the three ints as 8-byte words
/// (`si_addr` for faults; `si_pid` | `si_uid` << 32, then `si_value` or
/// `si_status`, for signals a process sent or a child's change).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct SigInfo {
    pub si_signo: i32,
    pub si_errno: i32,
    pub si_code: i32,
    /// Alignment padding before the union.
    pub _pad: i32,
    pub fields: [u64; 14],
}

/// `stack_t` (sigaltstack, `uc_stack`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct StackT {
    pub ss_sp: u64,
    pub ss_flags: i32,
    pub _pad: i32,
    pub ss_size: u64,
}

/// `union __riscv_fp_state` as the D extension's state: 32 registers and
/// `fcsr`; the rest of the union (the Q extension's size, 528 bytes) zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct FpState {
    pub f: [u64; 32],
    pub fcsr: u32,
    pub _rest: [u32; 67],
}

/// `struct sigcontext`: `sc_regs` is `struct user_regs_struct` (pc, then
/// x1..x31), then the floating-point state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct SigContext {
    pub sc_regs: [u64; 32],
    pub sc_fpregs: FpState,
}

/// `struct ucontext` on riscv64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct UContext {
    pub uc_flags: u64,
    pub uc_link: u64,
    pub uc_stack: StackT,
    pub uc_sigmask: u64,
    /// The kernel's `__unused` (room for a larger sigset), 120 bytes.
    pub _unused: [u8; 120],
    /// Padding to `uc_mcontext`'s 16-byte alignment.
    pub _align: u64,
    pub uc_mcontext: SigContext,
}

/// The frame a handler runs on (the kernel's `struct rt_sigframe` without
/// the trampoline, which is the emulator's sigreturn page).
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub(crate) struct SigFrame {
    pub info: SigInfo,
    pub uc: UContext,
}

impl SigFrame {
    /// An all-zero frame.
    pub fn zeroed() -> SigFrame {
        SigFrame::new_zeroed()
    }
}

/// `struct riscv_hwprobe`: a key and its value.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
#[repr(C)]
pub(crate) struct HwProbe {
    pub key: i64,
    pub value: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// Sizes and offsets from the riscv64 kernel headers (and glibc's
    /// `sys/sysinfo.h`, `sys/utsname.h` for a 64-bit `long`).
    #[test]
    fn layouts_are_the_riscv64_kernels() {
        assert_eq!(size_of::<Timespec>(), 16);
        assert_eq!(size_of::<Timeval>(), 16);
        assert_eq!(size_of::<Itimerspec>(), 32);
        assert_eq!(offset_of!(Itimerspec, it_value), 16);
        assert_eq!(size_of::<Itimerval>(), 32);
        assert_eq!(size_of::<Tms>(), 32);
        assert_eq!(size_of::<Rusage>(), 144);
        assert_eq!(offset_of!(Rusage, ru_stime), 16);
        assert_eq!(size_of::<Rlimit>(), 16);

        assert_eq!(size_of::<Sysinfo>(), 112);
        assert_eq!(offset_of!(Sysinfo, totalram), 32);
        assert_eq!(offset_of!(Sysinfo, freeram), 40);
        assert_eq!(offset_of!(Sysinfo, procs), 80);
        assert_eq!(offset_of!(Sysinfo, totalhigh), 88);
        assert_eq!(offset_of!(Sysinfo, mem_unit), 104);

        assert_eq!(size_of::<Utsname>(), 390);
        assert_eq!(offset_of!(Utsname, machine), 260);

        assert_eq!(size_of::<Stat>(), 128);
        assert_eq!(offset_of!(Stat, st_mode), 16);
        assert_eq!(offset_of!(Stat, st_nlink), 20);
        assert_eq!(offset_of!(Stat, st_rdev), 32);
        assert_eq!(offset_of!(Stat, st_size), 48);
        assert_eq!(offset_of!(Stat, st_blksize), 56);
        assert_eq!(offset_of!(Stat, st_blocks), 64);
        assert_eq!(offset_of!(Stat, st_atime), 72);
        assert_eq!(offset_of!(Stat, st_mtime), 88);
        assert_eq!(offset_of!(Stat, st_ctime_nsec), 112);

        assert_eq!(size_of::<Iovec>(), 16);
        assert_eq!(size_of::<Pollfd>(), 8);
        assert_eq!(offset_of!(Pollfd, revents), 6);
        assert_eq!(size_of::<EpollEvent>(), 16);
        assert_eq!(offset_of!(EpollEvent, data), 8);
        assert_eq!(size_of::<Msghdr>(), 56);
        assert_eq!(offset_of!(Msghdr, msg_iov), 16);
        assert_eq!(offset_of!(Msghdr, msg_controllen), 40);
        assert_eq!(offset_of!(Msghdr, msg_flags), 48);
        assert_eq!(size_of::<Mmsghdr>(), 64);
        assert_eq!(offset_of!(Mmsghdr, msg_len), 56);
        assert_eq!(size_of::<CloneArgs>(), 64);
        assert_eq!(offset_of!(CloneArgs, tls), 56);
        assert_eq!(size_of::<HwProbe>(), 16);

        assert_eq!(size_of::<SigAction>(), 24);
        assert_eq!(offset_of!(SigAction, mask), 16);
        assert_eq!(size_of::<SigInfo>(), 128);
        assert_eq!(offset_of!(SigInfo, si_code), 8);
        assert_eq!(offset_of!(SigInfo, fields), 16);
        assert_eq!(size_of::<StackT>(), 24);
        assert_eq!(offset_of!(StackT, ss_flags), 8);
        assert_eq!(offset_of!(StackT, ss_size), 16);
        assert_eq!(size_of::<FpState>(), 528);
        assert_eq!(offset_of!(FpState, fcsr), 256);
        assert_eq!(size_of::<SigContext>(), 784);
        assert_eq!(offset_of!(SigContext, sc_fpregs), 256);
        assert_eq!(offset_of!(UContext, uc_stack), 16);
        assert_eq!(offset_of!(UContext, uc_sigmask), 40);
        assert_eq!(offset_of!(UContext, uc_mcontext), 176);
        assert_eq!(size_of::<UContext>(), 960);
        assert_eq!(size_of::<SigFrame>(), 128 + 960);
        assert_eq!(offset_of!(SigFrame, uc), 128);
        assert!(align_of::<SigFrame>() <= 16);
    }

    /// The structures the host's libc also defines have the same layout
    /// there (x86-64 Linux), so they can be handed to the host as they are.
    #[test]
    fn host_twins_match() {
        assert_eq!(size_of::<Pollfd>(), size_of::<libc::pollfd>());
        assert_eq!(size_of::<Rusage>(), size_of::<libc::rusage>());
        assert_eq!(size_of::<Timespec>(), size_of::<libc::timespec>());
        assert_eq!(size_of::<Iovec>(), size_of::<libc::iovec>());
        assert_eq!(size_of::<Rlimit>(), size_of::<libc::rlimit>());
        assert_eq!(size_of::<SigInfo>(), size_of::<libc::siginfo_t>());
    }

    #[test]
    fn timeval_and_timespec_pairs_round_trip_and_reject_bad_fields() {
        let b = Itimerval::from_ns(1_500_000_000, 2_000_001_000);
        assert_eq!(b.to_ns(), Some((1_500_000_000, 2_000_001_000)));
        let mut bad = b;
        bad.it_interval.tv_usec = 1_000_000;
        assert_eq!(bad.to_ns(), None, "usec 1000000");
        let mut neg = b;
        neg.it_value.tv_sec = -1;
        assert_eq!(neg.to_ns(), None, "negative seconds");
        let mut neg = b;
        neg.it_value.tv_usec = -1;
        assert_eq!(neg.to_ns(), None, "negative microseconds");
        let ns = Itimerspec::from_ns(7, 999_999_999);
        assert_eq!(ns.to_ns(), Some((7, 999_999_999)));
        assert_eq!(Timespec::from_ns(u64::MAX).to_ns(), Some(u64::MAX));
    }

    #[test]
    fn values_are_written_as_the_kernel_lays_them_out() {
        let t = Timespec::from_ns(3_000_000_007);
        assert_eq!(t.as_bytes()[..8], 3i64.to_le_bytes());
        assert_eq!(t.as_bytes()[8..], 7i64.to_le_bytes());
        let tv = Timeval::from_ns(3_000_007_999);
        assert_eq!((tv.tv_sec, tv.tv_usec), (3, 7));
        let mut st = crate::fs::unsafe_zeroed_stat();
        st.st_size = 0x1234;
        st.st_mode = 0o100644;
        st.st_blksize = 4096;
        let b = Stat::from_host(&st);
        assert_eq!(b.as_bytes()[48..56], 0x1234i64.to_le_bytes());
        assert_eq!(b.as_bytes()[16..20], 0o100644u32.to_le_bytes());
        assert_eq!(b.as_bytes()[56..60], 4096i32.to_le_bytes());
    }
}
