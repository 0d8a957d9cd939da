//! Device files of the user-mode kernel: `/dev/nvmm`, a window on the NVMM
//! region's physical memory (as seed 001 mapped `/dev/mem`), and
//! `/dev/nvmm-ctl`, the memory system's control page.
//!
//! An open device is a host memfd with a recognisable name, so it survives
//! `dup`, `fork` and `execve` like any descriptor and needs no table of our
//! own; `mmap` of it maps physical pages instead of file contents.

use crate::errno::*;
use std::ffi::CString;

mod open;

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
