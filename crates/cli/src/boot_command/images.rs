//! The boot files and images: reading the firmware, kernel, initramfs
//! (by default the one `scripts/build-initramfs.sh` builds) and symbol
//! map, placing them and the device tree in DRAM, and the machine booted
//! from them.

use super::args::{BootArgs, NvmmArg};
use super::rig::Rig;
use crate::artefacts;
use crate::error::BootError;
use rvnvmm_board::machine::{fw_dynamic_info, layout, parse_image, BootImages, Machine};
use rvnvmm_board::{Board, DtbOptions, InputQueue, NvmmMode};
use rvnvmm_checkpoint::{BootFiles, FileIdentity};
use rvnvmm_hart::Hart;
use rvnvmm_mem::PhysMem;
use std::path::{Path, PathBuf};

/// The largest input file `boot` reads (firmware, kernel, initramfs,
/// symbol map): guest RAM holds them, and no machine in `configs/` has
/// more than 4 GiB of it.
const MAX_INPUT_BYTES: u64 = 4 << 30;

pub(super) fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, BootError> {
    rvnvmm_config::files::read_regular(path, MAX_INPUT_BYTES, "an input file").map_err(|source| {
        BootError::Read {
            what,
            path: path.to_path_buf(),
            source,
        }
    })
}

/// The default initramfs: what `scripts/build-initramfs.sh` builds.
fn default_initrd() -> Result<PathBuf, BootError> {
    let script = artefacts::repo_root().join("scripts/build-initramfs.sh");
    let out = std::process::Command::new("bash")
        .arg(&script)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|source| BootError::InitrdScript {
            script: script.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(BootError::InitrdScriptFailed { script });
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The files and options a boot loads (`--firmware`, `--kernel`,
/// `--initrd` or their defaults, `--append`, `--nvmm`), as a checkpoint
/// names them.
pub(super) fn boot_files(a: &BootArgs) -> Result<BootFiles, BootError> {
    let firmware = match &a.firmware {
        Some(p) => p.clone(),
        None => artefacts::setup_path("RVNVMM_OPENSBI")?,
    };
    let kernel = match &a.kernel {
        Some(p) => p.clone(),
        None => artefacts::setup_path("RVNVMM_KERNEL")?,
    };
    let initrd = match &a.initrd {
        Some(p) => p.clone(),
        None => default_initrd()?,
    };
    let identity = |what: &'static str, path: &Path| {
        FileIdentity::of(path).map_err(|source| BootError::Read {
            what,
            path: path.to_path_buf(),
            source,
        })
    };
    Ok(BootFiles {
        firmware: identity("firmware", &firmware)?,
        kernel: identity("kernel", &kernel)?,
        initrd: identity("initramfs", &initrd)?,
        append: a.append.clone(),
        nvmm: match a.nvmm {
            NvmmArg::DevMem => "dev-mem",
            NvmmArg::Pmem => "pmem",
        }
        .into(),
    })
}

/// Reads the boot files and places them, `fw_dynamic_info` and the device
/// tree of `board` in its DRAM (the tree also to `dtb_out`). With `check`
/// (a reboot of a restored machine), each file must still be the one
/// `files` identifies.
pub(super) fn boot_images(
    rig: &Rig,
    board: &Board,
    files: &BootFiles,
    check: bool,
    dtb_out: Option<&crate::output::OutputFile>,
) -> Result<BootImages, BootError> {
    let read = |what: &'static str, id: &FileIdentity| {
        if check {
            let now = FileIdentity::of(&id.path).map_err(|source| BootError::Read {
                what,
                path: id.path.clone(),
                source,
            })?;
            let differences = id.differences(&now);
            if !differences.is_empty() {
                return Err(BootError::BootFileChanged {
                    what,
                    path: id.path.clone(),
                    differences,
                });
            }
        }
        read_file(what, &id.path)
    };
    let firmware = read("firmware", &files.firmware)?;
    let kernel = read("kernel", &files.kernel)?;
    let header = parse_image(&kernel).map_err(|source| BootError::Kernel {
        path: files.kernel.path.clone(),
        source,
    })?;
    // An empty file boots without an initramfs.
    let initrd = Some(read("initramfs", &files.initrd)?).filter(|b| !b.is_empty());

    let (_, dram) = rig
        .cfg
        .memory
        .regions_of_kind(rvnvmm_config::RegionKind::Dram)
        .find(|(_, r)| !r.soft_reserved)
        .ok_or(BootError::NoDram)?;
    let (dram_base, dram_size) = (dram.base, dram.size);
    let nvmm = match files.nvmm.as_str() {
        "pmem" => NvmmMode::Pmem,
        _ => NvmmMode::Reserved,
    };
    let mut opts = DtbOptions {
        bootargs: files.append.clone(),
        initrd: initrd.as_ref().map(|_| (0, 0)),
        nvmm,
        isa: rig.hart_cfg.isa,
    };
    let probe = board.dtb(&opts)?;
    let lay = layout(
        dram_base,
        dram_size,
        firmware.len() as u64,
        header,
        kernel.len() as u64,
        initrd.as_ref().map(|i| i.len() as u64),
        probe.len() as u64,
    )
    .map_err(BootError::Layout)?;
    opts.initrd = lay.initrd;
    let dtb = board.dtb(&opts)?;
    if let Some(out) = &dtb_out {
        out.write(&dtb)?;
    }
    let mut images = vec![
        (lay.firmware, firmware, "firmware"),
        (lay.kernel, kernel, "kernel"),
    ];
    if let (Some((start, _)), Some(bytes)) = (lay.initrd, initrd) {
        images.push((start, bytes, "initramfs"));
    }
    images.push((
        lay.info,
        fw_dynamic_info(lay.kernel, 0).to_vec(),
        "fw_dynamic_info",
    ));
    images.push((lay.dtb, dtb, "device tree"));
    Ok(BootImages { images, lay })
}

/// Builds the machine of a boot from `files`: reads the firmware, kernel
/// and initramfs, writes the device tree and loads them into RAM, the
/// harts at the firmware. Gives the boot images (for a reboot).
pub(super) fn boot_machine(
    a: &BootArgs,
    rig: &Rig,
    files: &BootFiles,
    nvmm_region: Option<&crate::persistence::NvmmRegion>,
    dtb_out: Option<&crate::output::OutputFile>,
) -> Result<(Machine, BootImages), BootError> {
    let input = InputQueue::new();
    let board = rig.board(&input)?;
    let boot = boot_images(rig, &board, files, false, dtb_out)?;
    let mut ranges: Vec<(u64, u64)> = board.dram().map(|r| (r.base, r.size)).collect();
    ranges.extend(board.nvmm().map(|r| (r.base, r.size)));
    let mut mem = PhysMem::new(&ranges)?;
    boot.load(&mut mem)?;
    if let Some(n) = nvmm_region {
        n.load_mem(&mut mem)?;
        if a.crash_at.is_some() {
            mem.set_domain(n.domain());
        }
    } else if a.crash_at.is_some() {
        return Err(BootError::CrashWithoutNvmm);
    }

    let harts = (0..board.harts())
        .map(|h| {
            let mut hart = Hart::new(rig.hart_cfg.clone());
            boot.reset_hart(&mut hart, h as u64);
            hart
        })
        .collect();
    let mut m = rig.machine(board, harts, mem, input)?;
    if let (Some(ms), Some(_)) = (m.memsys_mut(), a.crash_at) {
        ms.record_write_backs();
    }
    Ok((m, boot))
}
