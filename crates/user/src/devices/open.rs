//! Opening a device file and placing an mmap of one: the process's side of
//! the devices.

use super::*;
use crate::process::Process;

impl Process {
    /// Opens a device file: a memfd of the device's size standing for it.
    pub(crate) fn open_device(&mut self, dev: Device, flags: i32) -> SysResult {
        let size = match dev {
            Device::Nvmm => self.opts.nvmm_node().ok_or(ENODEV)?.size,
            // A machine without NVMM has no control page.
            Device::NvmmControl if self.memory.devices.control.is_empty() => return Err(ENODEV),
            Device::NvmmControl => self.memory.devices.control_window_size(),
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
            Device::Nvmm => self.opts.nvmm_node().ok_or(ENODEV)?.range(),
            Device::NvmmControl => (CONTROL_PAGE_BASE, self.memory.devices.control_window_size()),
        };
        if off.checked_add(len).is_none_or(|end| end > size) {
            return Err(EINVAL);
        }
        Ok(base + off)
    }
}
