//! Device files of the user-mode kernel: `/dev/nvmm`, a window on the NVMM
//! region's physical memory (as seed 001 mapped `/dev/mem`), and
//! `/dev/nvmm-ctl`, the memory system's control pages (one per NVMM node).
//!
//! An open device is a host memfd with a recognisable name, so it survives
//! `dup`, `fork` and `execve` like any descriptor and needs no table of our
//! own; `mmap` of it maps physical pages instead of file contents.

use crate::errno::*;
use rvnvmm_memsys::control::{ControlPage, CONTROL_PAGE_SIZE};
use std::ffi::CString;

mod open;

/// Physical address of the memory system's first control page; page k
/// follows at `CONTROL_PAGE_BASE + k * CONTROL_PAGE_SIZE`.
pub const CONTROL_PAGE_BASE: u64 = 0x1010_0000;

/// The devices behind physical addresses that are not RAM: the control
/// pages.
#[derive(Debug, Default)]
pub(crate) struct Devices {
    pub control: Vec<ControlPage>,
}

impl Devices {
    /// The control page at `paddr` and the offset into it.
    fn control_page(&mut self, paddr: u64) -> Option<(&mut ControlPage, u64)> {
        let off = paddr.checked_sub(CONTROL_PAGE_BASE)?;
        let page = self.control.get_mut((off / CONTROL_PAGE_SIZE) as usize)?;
        Some((page, off % CONTROL_PAGE_SIZE))
    }

    /// Bytes of the control pages' window (`/dev/nvmm-ctl`'s size).
    pub fn control_window_size(&self) -> u64 {
        CONTROL_PAGE_SIZE * self.control.len() as u64
    }
}

impl rvnvmm_hart::Mmio for Devices {
    fn load(
        &mut self,
        paddr: u64,
        size: u64,
        port: Option<&mut dyn rvnvmm_hart::ControlPort>,
    ) -> Option<u64> {
        let (page, off) = self.control_page(paddr)?;
        page.load(port, off, size)
    }

    fn store(
        &mut self,
        paddr: u64,
        size: u64,
        value: u64,
        port: Option<&mut dyn rvnvmm_hart::ControlPort>,
    ) -> bool {
        match self.control_page(paddr) {
            Some((page, off)) => page.store(port, off, size, value),
            None => false,
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
