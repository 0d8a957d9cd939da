//! What `rvnvmm boot` loads: the Linux `Image` header, where OpenSBI, the
//! kernel, the initramfs, `fw_dynamic_info` and the device tree go, and
//! how a hart starts at the firmware.

use super::*;

/// `fw_dynamic_info.magic` ("OSBI").
pub const FW_DYNAMIC_INFO_MAGIC: u64 = 0x4942_534f;
/// `fw_dynamic_info.version`.
pub const FW_DYNAMIC_INFO_VERSION: u64 = 2;
/// `fw_dynamic_info.next_mode` for S-mode.
pub const FW_DYNAMIC_INFO_NEXT_MODE_S: u64 = 1;

/// The fields of a RISC-V Linux `Image` header the loader uses
/// (Documentation/arch/riscv/boot-image-header.rst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageHeader {
    /// Offset of the image from a 2 MiB-aligned RAM base.
    pub text_offset: u64,
    /// Bytes the image occupies once running (including BSS); 0 if unknown.
    pub image_size: u64,
}

/// What is wrong with a kernel image or where the boot images would go.
/// The image messages complete a sentence that names the file ("the kernel
/// FILE ...").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// An ELF file where a flat `Image` is wanted.
    #[error(
        "is an ELF file (vmlinux?); rvnvmm boot wants a flat RISC-V Linux Image \
         (arch/riscv/boot/Image, Debian's /boot/vmlinux-*-riscv64)"
    )]
    Elf,
    /// No `Image` magic.
    #[error(
        "is not a RISC-V Linux Image (no \"RISCV\" magic at 0x30 nor \"RSC\\x05\" at 0x38 of \
         the header)"
    )]
    NoMagic,
    /// A `text_offset` that is not page-aligned or not below 1 GiB.
    #[error("has an unusable text_offset {0:#x}")]
    TextOffset(u64),
    /// The firmware reaches into the kernel's place.
    #[error("the firmware ({firmware_len} bytes) overlaps the kernel at {kernel:#x}")]
    FirmwareOverlapsKernel {
        /// The firmware's size.
        firmware_len: u64,
        /// Where the kernel goes.
        kernel: u64,
    },
    /// DRAM cannot hold everything.
    #[error(
        "DRAM ({mib} MiB at {base:#x}) is too small for the firmware, kernel ({kernel_len} bytes \
         at {kernel:#x}), initramfs and device tree"
    )]
    DramTooSmall {
        /// DRAM's size in MiB.
        mib: u64,
        /// DRAM's base.
        base: u64,
        /// The kernel's size.
        kernel_len: u64,
        /// Where the kernel goes.
        kernel: u64,
    },
}

/// Checks the `Image` header of `bytes`: the magic "RISCV\0\0\0" at 0x30
/// (deprecated) or "RSC\x05" at 0x38.
pub fn parse_image(bytes: &[u8]) -> Result<ImageHeader, ImageError> {
    if bytes.starts_with(b"\x7fELF") {
        return Err(ImageError::Elf);
    }
    if bytes.len() < 64
        || (&bytes[0x30..0x38] != b"RISCV\0\0\0" && &bytes[0x38..0x3c] != b"RSC\x05")
    {
        return Err(ImageError::NoMagic);
    }
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
    let text_offset = u64_at(8);
    let image_size = u64_at(16);
    if text_offset % 4096 != 0 || text_offset >= 1 << 30 {
        return Err(ImageError::TextOffset(text_offset));
    }
    Ok(ImageHeader {
        text_offset,
        image_size,
    })
}

/// Where everything goes in DRAM.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// The firmware (DRAM's base).
    pub firmware: u64,
    /// The kernel.
    pub kernel: u64,
    /// The initramfs: start and end.
    pub initrd: Option<(u64, u64)>,
    /// `struct fw_dynamic_info`.
    pub info: u64,
    /// The device tree.
    pub dtb: u64,
}

/// Places the images in the DRAM region `[base, base + size)`.
pub fn layout(
    base: u64,
    size: u64,
    firmware_len: u64,
    header: ImageHeader,
    kernel_len: u64,
    initrd_len: Option<u64>,
    dtb_len: u64,
) -> Result<Layout, ImageError> {
    const MIB: u64 = 1 << 20;
    let end = base + size;
    let kernel = base + header.text_offset;
    if firmware_len > header.text_offset {
        return Err(ImageError::FirmwareOverlapsKernel {
            firmware_len,
            kernel,
        });
    }
    let kernel_end = kernel + header.image_size.max(kernel_len);
    let dtb = (end.saturating_sub(dtb_len + 64 * 1024)) & !(2 * MIB - 1);
    let info = dtb - 4096;
    let initrd = initrd_len.map(|len| {
        let start = info.saturating_sub(len) & !0xfff;
        (start, start + len)
    });
    let low = initrd.map_or(info, |(s, _)| s);
    if dtb < base || low < kernel_end {
        return Err(ImageError::DramTooSmall {
            mib: size / MIB,
            base,
            kernel_len,
            kernel,
        });
    }
    Ok(Layout {
        firmware: base,
        kernel,
        initrd,
        info,
        dtb,
    })
}

/// `struct fw_dynamic_info` (OpenSBI `include/sbi/fw_dynamic.h`, version 2).
pub fn fw_dynamic_info(next_addr: u64, boot_hart: u64) -> [u8; 48] {
    let mut b = [0u8; 48];
    let fields = [
        FW_DYNAMIC_INFO_MAGIC,
        FW_DYNAMIC_INFO_VERSION,
        next_addr,
        FW_DYNAMIC_INFO_NEXT_MODE_S,
        0,
        boot_hart,
    ];
    for (i, f) in fields.iter().enumerate() {
        b[8 * i..8 * i + 8].copy_from_slice(&f.to_le_bytes());
    }
    b
}

/// What is loaded at (re)boot, and where.
pub struct BootImages {
    /// (address, bytes, what it is) of each image.
    pub images: Vec<(u64, Vec<u8>, &'static str)>,
    /// Where they go.
    pub lay: Layout,
}

impl BootImages {
    /// Writes the images into guest RAM.
    pub fn load(&self, mem: &mut PhysMem) -> Result<(), MachineError> {
        for (addr, bytes, what) in &self.images {
            if !mem.write(*addr, bytes) {
                return Err(MachineError::NotRam { what, addr: *addr });
            }
        }
        Ok(())
    }

    /// A hart as at reset, about to enter the firmware (its clock runs on);
    /// `hart_id` is its `mhartid`, which the firmware expects in `a0`.
    pub fn reset_hart(&self, hart: &mut Hart, hart_id: u64) {
        hart.set_full_system(true);
        hart.x = [0; 32];
        hart.f = [0; 32];
        hart.pc = self.lay.firmware;
        hart.x[10] = hart_id;
        hart.x[11] = self.lay.dtb;
        hart.x[12] = self.lay.info;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(magic_at_30: bool) -> Vec<u8> {
        let mut b = vec![0u8; 128];
        b[8..16].copy_from_slice(&0x20_0000u64.to_le_bytes());
        b[16..24].copy_from_slice(&0x1000u64.to_le_bytes());
        if magic_at_30 {
            b[0x30..0x38].copy_from_slice(b"RISCV\0\0\0");
        } else {
            b[0x38..0x3c].copy_from_slice(b"RSC\x05");
        }
        b
    }

    #[test]
    fn image_header() {
        for m in [true, false] {
            assert_eq!(
                parse_image(&image(m)).unwrap(),
                ImageHeader {
                    text_offset: 0x20_0000,
                    image_size: 0x1000
                }
            );
        }
        assert_eq!(
            parse_image(b"\x7fELF\x02\x01\x01").unwrap_err(),
            ImageError::Elf
        );
        assert!(parse_image(b"\x7fELF\x02\x01\x01")
            .unwrap_err()
            .to_string()
            .contains("ELF"));
        assert_eq!(parse_image(&[0; 100]).unwrap_err(), ImageError::NoMagic);
        assert!(ImageError::NoMagic
            .to_string()
            .contains("not a RISC-V Linux Image (no \"RISCV\" magic at 0x30 nor \"RSC\\x05\""));
        assert!(parse_image(&[0; 10]).is_err());
    }

    #[test]
    fn layout_puts_dtb_high_and_aligned() {
        let h = ImageHeader {
            text_offset: 0x20_0000,
            image_size: 32 << 20,
        };
        let l = layout(
            0x8000_0000,
            1 << 30,
            300_000,
            h,
            31 << 20,
            Some(10 << 20),
            4000,
        )
        .unwrap();
        assert_eq!(l.kernel, 0x8020_0000);
        assert_eq!(l.dtb, 0xbfe0_0000);
        assert_eq!(l.dtb % 8, 0);
        assert_eq!(l.info, 0xbfdf_f000);
        let (s, e) = l.initrd.unwrap();
        assert!(e <= l.info && s % 4096 == 0 && e - s == 10 << 20);
        assert!(layout(0x8000_0000, 16 << 20, 300_000, h, 31 << 20, None, 4000).is_err());
    }

    #[test]
    fn fw_dynamic_info_fields() {
        let b = fw_dynamic_info(0x8020_0000, 0);
        assert_eq!(&b[0..8], &0x4942_534fu64.to_le_bytes());
        assert_eq!(&b[8..16], &2u64.to_le_bytes());
        assert_eq!(&b[16..24], &0x8020_0000u64.to_le_bytes());
        assert_eq!(&b[24..32], &1u64.to_le_bytes());
    }
}
