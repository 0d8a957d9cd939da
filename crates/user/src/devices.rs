//! Device files of the user-mode kernel: `/dev/nvmm`, a window on the NVMM
//! region's physical memory (as seed 001 mapped `/dev/mem`), and
//! `/dev/nvmm-ctl`, the memory system's control page.
//!
//! An open device is a host memfd with a recognisable name, so it survives
//! `dup`, `fork` and `execve` like any descriptor and needs no table of our
//! own; `mmap` of it maps physical pages instead of file contents.

use crate::errno::*;
use crate::process::Process;
use std::ffi::CString;

/// Physical address of the memory system's control page.
pub const CONTROL_PAGE_BASE: u64 = 0x1010_0000;

/// The devices behind physical addresses that are not RAM: the control page.
#[derive(Debug, Default)]
pub(crate) struct Devices {
    pub control: Option<rvnvmm_memsys::control::ControlPage>,
}

impl rvnvmm_hart::Mmio for Devices {
    fn load(
        &mut self,
        paddr: u64,
        size: u64,
        port: Option<&mut dyn rvnvmm_hart::ControlPort>,
    ) -> Option<u64> {
        let off = paddr.checked_sub(CONTROL_PAGE_BASE)?;
        self.control.as_mut()?.load(port, off, size)
    }

    fn store(
        &mut self,
        paddr: u64,
        size: u64,
        value: u64,
        port: Option<&mut dyn rvnvmm_hart::ControlPort>,
    ) -> bool {
        match (paddr.checked_sub(CONTROL_PAGE_BASE), self.control.as_mut()) {
            (Some(off), Some(cp)) => cp.store(port, off, size, value),
            _ => false,
        }
    }
}

/// The device files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// `/dev/nvmm`.
    Nvmm,
    /// `/dev/nvmm-ctl`.
    NvmmControl,
}

impl Device {
    /// The device a guest path names.
    pub fn by_path(path: &[u8]) -> Option<Device> {
        match path {
            b"/dev/nvmm" => Some(Device::Nvmm),
            b"/dev/nvmm-ctl" => Some(Device::NvmmControl),
            _ => None,
        }
    }

    /// The guest path.
    pub fn path(self) -> &'static str {
        match self {
            Device::Nvmm => "/dev/nvmm",
            Device::NvmmControl => "/dev/nvmm-ctl",
        }
    }

    fn memfd_name(self) -> &'static str {
        match self {
            Device::Nvmm => "rvnvmm-dev-nvmm",
            Device::NvmmControl => "rvnvmm-dev-nvmm-ctl",
        }
    }

    /// The device an open descriptor refers to, if any.
    pub fn of_fd(fd: i32) -> Option<Device> {
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
        let t = target.to_string_lossy();
        let name = t.strip_prefix("/memfd:")?.split(' ').next()?;
        [Device::Nvmm, Device::NvmmControl]
            .into_iter()
            .find(|d| d.memfd_name() == name)
    }
}

impl Process {
    /// Opens a device file: a memfd of the device's size standing for it.
    pub(crate) fn open_device(&mut self, dev: Device, flags: i32) -> SysResult {
        let size = match dev {
            Device::Nvmm => self.opts.nvmm.ok_or(ENODEV)?.1,
            // A machine without NVMM has no control page.
            Device::NvmmControl if self.devices.control.is_none() => return Err(ENODEV),
            Device::NvmmControl => 4096,
        };
        let name = CString::new(dev.memfd_name()).expect("no NUL");
        let mfd_flags = if flags & libc::O_CLOEXEC != 0 {
            libc::MFD_CLOEXEC
        } else {
            0
        };
        // SAFETY: memfd_create with a NUL-terminated name; ftruncate on the
        // new descriptor (sparse: no memory is used).
        unsafe {
            let fd = libc::memfd_create(name.as_ptr(), mfd_flags);
            if fd < 0 {
                return Err(Errno::last_host());
            }
            if libc::ftruncate(fd, size as i64) < 0 {
                let e = Errno::last_host();
                libc::close(fd);
                return Err(e);
            }
            Ok(fd as i64)
        }
    }

    /// The physical base of an `mmap` of `len` bytes at `off` of a device.
    pub(crate) fn device_window(&self, dev: Device, off: u64, len: u64) -> Result<u64, Errno> {
        let (base, size) = match dev {
            Device::Nvmm => self.opts.nvmm.ok_or(ENODEV)?,
            Device::NvmmControl => (CONTROL_PAGE_BASE, 4096),
        };
        if off.checked_add(len).is_none_or(|end| end > size) {
            return Err(EINVAL);
        }
        Ok(base + off)
    }
}
