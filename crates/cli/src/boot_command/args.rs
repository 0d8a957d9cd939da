//! The options of `rvnvmm boot` (`BootArgs`) and the machine description
//! they name.

use crate::error::BootError;
use crate::{load_config, MachineArgs};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// The default kernel command line.
const DEFAULT_APPEND: &str = "console=ttyS0 earlycon=sbi";

/// How the NVMM regions appear to Linux.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum NvmmArg {
    /// Outside system RAM, for user space through /dev/mem (default).
    DevMem,
    /// A `pmem-region`: Linux's of_pmem makes /dev/pmem0.
    Pmem,
}

#[derive(Args)]
pub(crate) struct BootArgs {
    #[command(flatten)]
    pub(super) machine: MachineArgs,
    /// Number of harts (overrides machine.harts).
    #[arg(long, value_name = "N")]
    pub(super) smp: Option<u32>,
    /// The kernel: a RISC-V Linux `Image` (default RVNVMM_KERNEL of scripts/setup.sh).
    #[arg(long, value_name = "FILE")]
    pub(super) kernel: Option<PathBuf>,
    /// The firmware: OpenSBI fw_dynamic.bin (default RVNVMM_OPENSBI).
    #[arg(long, value_name = "FILE")]
    pub(super) firmware: Option<PathBuf>,
    /// The initramfs (default: what scripts/build-initramfs.sh builds; an
    /// empty file: none).
    #[arg(long, value_name = "FILE")]
    pub(super) initrd: Option<PathBuf>,
    /// The kernel command line.
    #[arg(long, value_name = "CMDLINE", default_value = DEFAULT_APPEND)]
    pub(super) append: String,
    /// A raw disk image for virtio-blk (/dev/vda), opened read-write; with
    /// --checkpoint-at or --restore it is not written: the guest's writes
    /// are kept over it (and in checkpoints). With --restore: the image to
    /// use instead of the path the checkpoint names.
    #[arg(long, value_name = "IMAGE")]
    pub(super) disk: Option<PathBuf>,
    /// Write the generated device tree blob to FILE.
    #[arg(long, value_name = "FILE")]
    pub(super) dump_dtb: Option<PathBuf>,
    /// How the NVMM regions appear to Linux.
    #[arg(
        long,
        value_enum,
        value_name = "dev-mem|pmem",
        default_value = "dev-mem"
    )]
    pub(super) nvmm: NvmmArg,
    /// Write statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub(super) stats: Option<PathBuf>,
    /// Record what reached every physical page (line reads and writes at
    /// its memory node, L1 misses) in windows of simulated time, into FILE
    /// (docs/page-heat.md; timing model, or from the end of
    /// --fast-forward).
    #[arg(long, value_name = "FILE")]
    pub(super) page_heat: Option<PathBuf>,
    /// The page heat's window in nanoseconds of simulated time.
    #[arg(long, value_name = "NS", requires = "page_heat",
          default_value_t = rvnvmm_heat::DEFAULT_WINDOW_NS)]
    pub(super) page_heat_window: u64,
    /// Execution engine: `jit` (the default: hot blocks translated to
    /// x86-64 code where the host is x86-64 and the run allows it), or
    /// `interp` (the interpreter only, the reference); the same results
    /// either way.
    #[arg(long, value_name = "interp|jit", default_value = "jit")]
    pub(super) engine: rvnvmm_hart::Engine,
    /// Give up (non-zero exit) if the guest has not powered off after about
    /// N instructions (all harts together).
    #[arg(long, value_name = "N")]
    pub(super) max_insns: Option<u64>,
    /// Write a profile of where simulated time goes (privilege level,
    /// function, pc) to FILE; kernel functions are named from the
    /// System.map beside the kernel image, or from --symbols.
    #[arg(long, value_name = "FILE")]
    pub(super) profile: Option<PathBuf>,
    /// A System.map for --profile.
    #[arg(long, value_name = "FILE", requires = "profile")]
    pub(super) symbols: Option<PathBuf>,
    /// Cut the power after N instructions (all harts) or when the next hart
    /// to run has reached NS of simulated time: the NVMM image
    /// (memory.NAME.image) keeps what reached the persistence domain, and
    /// rvnvmm exits with status 125.
    #[arg(long, value_name = "insns=N|time=NS", value_parser = rvnvmm_runctl::parse_stop_at)]
    pub(super) crash_at: Option<rvnvmm_runctl::StopAt>,
    /// Seed of the choices a crash makes (which flushes in flight survive).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(super) crash_seed: u64,
    /// Record every store, flush and fence that reaches the NVMM region,
    /// and every write to it, into FILE at the end of the run (what
    /// `rvnvmm crashtest --explore` enumerates crash states from;
    /// docs/persistence.md). With --restore: from the checkpoint's point.
    #[arg(long, value_name = "FILE",
          conflicts_with_all = ["crash_at", "checkpoint_at", "fast_forward", "sample"])]
    pub(super) persist_trace: Option<PathBuf>,
    /// Write the changes of FILE (a crash state of `crashtest --explore`)
    /// over the NVMM region before the machine starts (after a restore);
    /// the image is then not saved at the end.
    #[arg(long = "image-overlay", value_name = "FILE", hide = true,
          conflicts_with_all = ["crash_at", "checkpoint_at", "persist_trace"])]
    pub(super) image_overlays: Vec<PathBuf>,
    /// Wait for gdb on 127.0.0.1:PORT before the first instruction and let
    /// it debug the machine, the harts as threads (0: any free port,
    /// printed on stderr).
    #[arg(long, value_name = "PORT")]
    pub(super) gdb: Option<u16>,
    /// Boot in the functional model until exactly N instructions (all
    /// harts), until the next hart to run has reached NS of simulated time,
    /// or until the guest's first `switch timing` or `checkpoint` marker
    /// (e.g. `nvmm-marker switch timing` from the shell), then run the
    /// machine's timing model, cold, the statistics counting from there
    /// (docs/regions-of-interest.md, docs/checkpoints.md).
    #[arg(long, value_name = "insns=N|time=NS|marker", value_parser = crate::checkpoint::parse_run_point)]
    pub(super) fast_forward: Option<crate::checkpoint::RunPoint>,
    /// Take a checkpoint of the whole machine after exactly N instructions
    /// (all harts), when the next hart to run has reached NS of simulated
    /// time, or at the guest's first `checkpoint` marker (`nvmm-marker
    /// checkpoint`), into --checkpoint-to DIR; the run goes on
    /// (docs/checkpoints.md). Without --checkpoint-to: the same restore
    /// point, nothing written (the run through).
    #[arg(long, value_name = "insns=N|time=NS|marker", value_parser = crate::checkpoint::parse_run_point,
          conflicts_with_all = ["crash_at", "gdb", "profile"])]
    pub(super) checkpoint_at: Option<crate::checkpoint::RunPoint>,
    /// The directory the checkpoint is written to (created; a checkpoint
    /// there is replaced).
    #[arg(long, value_name = "DIR", requires = "checkpoint_at")]
    pub(super) checkpoint_to: Option<PathBuf>,
    /// End the run (exit status 0) once the checkpoint is written.
    #[arg(long, requires = "checkpoint_to")]
    pub(super) exit_after_checkpoint: bool,
    /// Sample the run: every N instructions (all harts), W instructions of
    /// warm-up and a window of M instructions in the timing model, the rest
    /// in the functional model; the statistics JSON's `sampling` estimates
    /// the whole run's simulated time from the windows, with a 95 %
    /// confidence interval (docs/regions-of-interest.md, "Sampling").
    #[arg(long, value_name = "period=N,detail=M[,warmup=W]", value_parser = rvnvmm_runctl::parse_sample,
          conflicts_with_all = ["fast_forward", "checkpoint_at", "restore"])]
    pub(super) sample: Option<rvnvmm_runctl::Sampling>,
    /// Build the machine from the checkpoint in DIR instead of booting the
    /// firmware, kernel and initramfs, and run on. The machine (--config,
    /// --set) must have the checkpoint's memory map, harts and ISA; its
    /// timing configuration may differ.
    #[arg(long, value_name = "DIR",
          conflicts_with_all = ["kernel", "firmware", "initrd", "dump_dtb", "crash_at", "gdb", "profile", "smp"])]
    pub(super) restore: Option<PathBuf>,
}

/// The machine description, with `--smp`.
pub(super) fn boot_config(a: &BootArgs) -> Result<rvnvmm_config::Config, BootError> {
    let mut machine_args = a.machine.clone();
    if let Some(n) = a.smp {
        machine_args.sets.push(format!("machine.harts={n}"));
    }
    Ok(load_config(&machine_args)?)
}
