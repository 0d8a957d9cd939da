//! Why an `rvnvmm` command failed. `main` prints the message after
//! `rvnvmm: ` and exits with status 2; each message names the input at
//! fault and, where there is one, the fix.

use crate::artefacts::ArtefactError;
use crate::boot_command::BootError;
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
    Speed(#[from] crate::bench::SpeedError),
    /// `rvnvmm bench boot` could not measure a boot.
    #[error(transparent)]
    BootBench(#[from] crate::bench_boot::BootBenchError),
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
