//! Why an `rvnvmm` command failed. `main` prints the message after
//! `rvnvmm: ` and exits with status 2; each message names the input at
//! fault and, where there is one, the fix. The errors of the commands that
//! have their own (`boot`, `bench speed`, `bench boot`) are here too, so
//! that this module names no command's module.

use crate::artefacts::ArtefactError;
use crate::microbench::MicrobenchError;
use crate::output::OutputError;
use std::path::PathBuf;

/// A failed `rvnvmm` command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The machine description: the config file, a `--set`, validation.
    #[error(transparent)]
    Config(#[from] rvnvmm_config::ConfigError),
    /// `machine.isa` does not name an extension set the hart can be.
    #[error("machine.isa: {0}")]
    Isa(#[from] rvnvmm_isa::IsaError),
    /// The machine lacks a part the command needs.
    #[error("{0}")]
    Machine(MachineLacks),
    /// A controller's address mapping does not parse.
    #[error("{0}")]
    AddressMapping(String),
    /// A command-line argument is wrong.
    #[error("{0}")]
    Usage(String),
    /// An input directory given on the command line is not one.
    #[error("{option} {} is not a directory", path.display())]
    NotADirectory {
        /// The option (`--root`).
        option: &'static str,
        /// Its value.
        path: PathBuf,
    },
    /// Something from outside the Rust code (set-up artefacts, qemu, guest
    /// programs) is missing.
    #[error(transparent)]
    Artefact(#[from] ArtefactError),
    /// An output file cannot be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The NVMM image cannot be opened, read or written.
    #[error(transparent)]
    Image(#[from] rvnvmm_mem::persist::ImageError),
    /// The user-mode process could not be created or run.
    #[error(transparent)]
    Run(#[from] rvnvmm_user::RunError),
    /// The memory-system model could not be built.
    #[error(transparent)]
    Memsys(#[from] rvnvmm_memsys::MemsysError),
    /// A memory controller could not be built.
    #[error(transparent)]
    Dram(#[from] rvnvmm_dram::DramError),
    /// gdb could not attach.
    #[error(transparent)]
    Gdb(#[from] rvnvmm_gdb::GdbError),
    /// `rvnvmm boot` failed.
    #[error(transparent)]
    Boot(#[from] BootError),
    /// A microbenchmark loop could not run.
    #[error(transparent)]
    Microbench(#[from] MicrobenchError),
    /// `rvnvmm bench speed` could not measure a workload.
    #[error(transparent)]
    Speed(#[from] SpeedError),
    /// `rvnvmm bench boot` could not measure a boot.
    #[error(transparent)]
    BootBench(#[from] BootBenchError),
}

/// A part of the machine a command needs and the config lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MachineLacks {
    /// No DRAM region (user mode places the process in the first one).
    #[error("the machine has no DRAM region")]
    Dram,
    /// No NVMM region (the NVMM microbenchmarks need one).
    #[error("the machine has no NVMM region")]
    Nvmm,
    /// The NVMM region names no controller of the machine.
    #[error("the NVMM region has no controller")]
    NvmmController,
    /// The controller's address mapping has no bank or no row bits.
    #[error("the controller's address mapping has no bank or row bits")]
    BankOrRowBits,
}

impl From<MachineLacks> for CliError {
    fn from(m: MachineLacks) -> CliError {
        CliError::Machine(m)
    }
}

/// Why `rvnvmm boot` could not start or finish. The command prints it after
/// `rvnvmm: `.
#[derive(Debug, thiserror::Error)]
pub enum BootError {
    /// The machine description (config file, `--set`, validation).
    #[error(transparent)]
    Config(#[from] rvnvmm_config::ConfigError),
    /// `--page-heat` cannot be recorded.
    #[error("{0}")]
    PageHeat(String),
    /// A set-up artefact (firmware, kernel) is missing.
    #[error(transparent)]
    Artefact(#[from] ArtefactError),
    /// An output file cannot be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// gdb could not attach.
    #[error(transparent)]
    Gdb(#[from] rvnvmm_gdb::GdbError),
    /// An input file could not be read.
    #[error("cannot read the {what} {}: {source}", path.display())]
    Read {
        /// Which input.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The kernel is not a RISC-V Linux `Image`.
    #[error("the kernel {} {source}", path.display())]
    Kernel {
        /// Its path.
        path: PathBuf,
        /// What is wrong with it.
        source: rvnvmm_board::machine::ImageError,
    },
    /// The images do not fit in DRAM.
    #[error(transparent)]
    Layout(rvnvmm_board::machine::ImageError),
    /// The initramfs script could not run.
    #[error("cannot run {}: {source}", script.display())]
    InitrdScript {
        /// `scripts/build-initramfs.sh`.
        script: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The initramfs script failed.
    #[error("{} failed (give --initrd FILE, or run scripts/setup.sh and make -C guest)", script.display())]
    InitrdScriptFailed {
        /// `scripts/build-initramfs.sh`.
        script: PathBuf,
    },
    /// The machine has no DRAM.
    #[error("the machine has no DRAM region to boot from")]
    NoDram,
    /// The disk image a checkpoint's overlay was written over has changed.
    #[error(
        "the disk image {} is not the one the checkpoint was taken with: {}\n  (the checkpoint \
         holds the blocks written since the boot over that image, which must not change; give \
         the original with --disk)",
        path.display(),
        differences.join("; ")
    )]
    DiskChanged {
        /// The image.
        path: PathBuf,
        /// What differs.
        differences: Vec<String>,
    },
    /// `--disk` restoring a checkpoint of a machine without a disk.
    #[error("--disk: the checkpoint is of a machine without a disk")]
    DiskNotInCheckpoint,
    /// The disk image could not be opened.
    #[error("cannot open the disk image {}: {source}", path.display())]
    Disk {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `machine.isa` does not parse.
    #[error("machine.isa: {0}")]
    Isa(#[from] rvnvmm_isa::IsaError),
    /// The board could not be built.
    #[error(transparent)]
    Board(#[from] rvnvmm_board::BoardError),
    /// The device tree could not be written.
    #[error(transparent)]
    Dtb(#[from] rvnvmm_board::DtbError),
    /// Guest RAM could not be set up.
    #[error(transparent)]
    Mem(#[from] rvnvmm_mem::MemError),
    /// The memory-system model could not be built.
    #[error(transparent)]
    Memsys(#[from] rvnvmm_memsys::MemsysError),
    /// The machine stopped with an error.
    #[error(transparent)]
    Machine(#[from] rvnvmm_board::machine::MachineError),
    /// The NVMM image could not be opened, read or written.
    #[error(transparent)]
    NvmmImage(#[from] rvnvmm_mem::persist::ImageError),
    /// A checkpoint could not be written, read or restored.
    #[error(transparent)]
    Checkpoint(#[from] rvnvmm_checkpoint::CheckpointError),
    /// A restored machine was asked to reboot, and its checkpoint does not
    /// name the boot files.
    #[error(
        "the guest asked for a reboot, which this machine restored from a checkpoint cannot do \
         (the checkpoint does not name its boot files: it was written by an older rvnvmm): boot \
         it instead"
    )]
    RebootAfterRestore,
    /// A boot file a restored machine reboots from has changed since the
    /// checkpoint.
    #[error(
        "the guest asked for a reboot, but the {what} {} is not the one the machine was booted \
         from: {}",
        path.display(),
        differences.join("; ")
    )]
    BootFileChanged {
        /// Which file.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// What differs.
        differences: Vec<String>,
    },
    /// Options that cannot be combined.
    #[error("{0}")]
    Options(&'static str),
    /// `--crash-at` on a machine without NVMM.
    #[error("--crash-at needs a machine with an NVMM region (a power failure loses what is not in its persistence domain)")]
    CrashWithoutNvmm,
    /// `--persist-trace` or `--image-overlay` on a machine without NVMM.
    #[error("{0} needs a machine with an NVMM region")]
    NeedsNvmm(&'static str),
    /// An `--image-overlay` file cannot be applied.
    #[error("{0}")]
    Overlay(String),
}

/// Why `rvnvmm bench speed` could not measure a workload.
#[derive(Debug, thiserror::Error)]
pub enum SpeedError {
    /// A host operation failed.
    #[error("{what}: {source}")]
    Host {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// qemu could not be started.
    #[error("cannot start {}: {source}", qemu.display())]
    QemuStart {
        /// The qemu binary.
        qemu: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The workload failed under qemu.
    #[error("{workload}: {} failed under qemu-riscv64 ({status})", program.display())]
    QemuFailed {
        /// The workload's name.
        workload: String,
        /// The guest program.
        program: PathBuf,
        /// qemu's exit status.
        status: std::process::ExitStatus,
    },
    /// The workload exited with a non-zero status under rvnvmm.
    #[error("{workload}: {} exited with status {status} under rvnvmm", program.display())]
    GuestFailed {
        /// The workload's name.
        workload: String,
        /// The guest program.
        program: PathBuf,
        /// Its exit status.
        status: i32,
    },
    /// The benchmark child failed; its message came through the pipe.
    #[error("{workload}: {message}")]
    Child {
        /// The workload's name.
        workload: String,
        /// The child's error message.
        message: String,
    },
    /// The benchmark child ended without a report.
    #[error(
        "{workload}: the benchmark child ended without a report (wait status {wait_status:#x})"
    )]
    NoReport {
        /// The workload's name.
        workload: String,
        /// `waitpid`'s status.
        wait_status: i32,
    },
}

/// Why `rvnvmm bench boot` could not measure a boot.
#[derive(Debug, thiserror::Error)]
pub enum BootBenchError {
    /// `--qemu` or `$RVNVMM_QEMU_SYSTEM` names no file.
    #[error("qemu-system-riscv64 {} does not exist", .0.display())]
    QemuMissing(PathBuf),
    /// No qemu-system-riscv64 on `PATH`.
    #[error(
        "qemu-system-riscv64 is not on PATH: install qemu-system-misc (scripts/setup.sh does)"
    )]
    QemuNotOnPath,
    /// `scripts/build-initramfs.sh` failed.
    #[error("scripts/build-initramfs.sh failed (give --initrd, or run scripts/setup.sh): {0}")]
    Initramfs(String),
    /// A child process could not be started or its output not read.
    #[error("cannot run {}: {source}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A boot did not reach power-off.
    #[error("{who}: the boot did not power off ({status}); console ends:\n{console_tail}")]
    NoPowerOff {
        /// `rvnvmm (MODEL)` or `qemu-system-riscv64`.
        who: String,
        /// The exit status.
        status: std::process::ExitStatus,
        /// The console's last lines.
        console_tail: String,
    },
    /// rvnvmm's statistics are missing or malformed.
    #[error("the statistics of rvnvmm boot ({model} model) are unreadable: {message}")]
    Stats {
        /// The model.
        model: String,
        /// What is wrong.
        message: String,
    },
}
