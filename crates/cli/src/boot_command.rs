//! `rvnvmm boot`: the full system's command. Reads the firmware, kernel,
//! initramfs and disk named on the command line, builds the board machine
//! (`rvnvmm_board::machine`), puts the terminal in raw mode, runs the
//! machine until the guest powers off and writes the statistics.

use crate::artefacts;
use crate::checkpoint::RunPoint;
use crate::error::BootError;
use crate::roi::BootControl;
use crate::{load_config, MachineArgs};
use clap::{Args, ValueEnum};
use rvnvmm_board::machine::{
    fw_dynamic_info, layout, parse_image, BootImages, Console, ConsoleOut, End, Machine,
    MachineError,
};
use rvnvmm_board::profile::Symbols;
use rvnvmm_board::{map, Block, Board, DtbOptions, Entropy, InputQueue, NvmmMode};
use rvnvmm_checkpoint::{BootFiles, FileIdentity};
use rvnvmm_hart::{Core, CoreMap, Hart, HartConfig};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;
use rvnvmm_runctl::MarkerAction;
use rvnvmm_runctl::StopAt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The default kernel command line.
pub const DEFAULT_APPEND: &str = "console=ttyS0 earlycon=sbi";

/// How the NVMM regions appear to Linux.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum NvmmArg {
    /// Outside system RAM, for user space through /dev/mem (default).
    DevMem,
    /// A `pmem-region`: Linux's of_pmem makes /dev/pmem0.
    Pmem,
}

#[derive(Args)]
pub struct BootArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// Number of harts (overrides machine.harts).
    #[arg(long, value_name = "N")]
    smp: Option<u32>,
    /// The kernel: a RISC-V Linux `Image` (default RVNVMM_KERNEL of scripts/setup.sh).
    #[arg(long, value_name = "FILE")]
    kernel: Option<PathBuf>,
    /// The firmware: OpenSBI fw_dynamic.bin (default RVNVMM_OPENSBI).
    #[arg(long, value_name = "FILE")]
    firmware: Option<PathBuf>,
    /// The initramfs (default: what scripts/build-initramfs.sh builds; an
    /// empty file: none).
    #[arg(long, value_name = "FILE")]
    initrd: Option<PathBuf>,
    /// The kernel command line.
    #[arg(long, value_name = "CMDLINE", default_value = DEFAULT_APPEND)]
    append: String,
    /// A raw disk image for virtio-blk (/dev/vda), opened read-write; with
    /// --checkpoint-at or --restore it is not written: the guest's writes
    /// are kept over it (and in checkpoints). With --restore: the image to
    /// use instead of the path the checkpoint names.
    #[arg(long, value_name = "IMAGE")]
    disk: Option<PathBuf>,
    /// Write the generated device tree blob to FILE.
    #[arg(long, value_name = "FILE")]
    dump_dtb: Option<PathBuf>,
    /// How the NVMM regions appear to Linux.
    #[arg(
        long,
        value_enum,
        value_name = "dev-mem|pmem",
        default_value = "dev-mem"
    )]
    nvmm: NvmmArg,
    /// Write statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Execution engine: `jit` (the default: hot blocks translated to
    /// x86-64 code where the host is x86-64 and the run allows it), or
    /// `interp` (the interpreter only, the reference); the same results
    /// either way.
    #[arg(long, value_name = "interp|jit", default_value = "jit")]
    engine: rvnvmm_hart::Engine,
    /// Give up (non-zero exit) if the guest has not powered off after about
    /// N instructions (all harts together).
    #[arg(long, value_name = "N")]
    max_insns: Option<u64>,
    /// Write a profile of where simulated time goes (privilege level,
    /// function, pc) to FILE; kernel functions are named from the
    /// System.map beside the kernel image, or from --symbols.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// A System.map for --profile.
    #[arg(long, value_name = "FILE", requires = "profile")]
    symbols: Option<PathBuf>,
    /// Cut the power after N instructions (all harts) or when the next hart
    /// to run has reached NS of simulated time: the NVMM image
    /// (memory.NAME.image) keeps what reached the persistence domain, and
    /// rvnvmm exits with status 125.
    #[arg(long, value_name = "insns=N|time=NS", value_parser = rvnvmm_runctl::parse_stop_at)]
    crash_at: Option<rvnvmm_runctl::StopAt>,
    /// Seed of the choices a crash makes (which flushes in flight survive).
    #[arg(long, value_name = "S", default_value_t = 0)]
    crash_seed: u64,
    /// Wait for gdb on 127.0.0.1:PORT before the first instruction and let
    /// it debug the machine, the harts as threads (0: any free port,
    /// printed on stderr).
    #[arg(long, value_name = "PORT")]
    gdb: Option<u16>,
    /// Boot in the functional model until exactly N instructions (all
    /// harts), until the next hart to run has reached NS of simulated time,
    /// or until the guest's first `switch timing` or `checkpoint` marker
    /// (e.g. `nvmm-marker switch timing` from the shell), then run the
    /// machine's timing model, cold, the statistics counting from there
    /// (docs/regions-of-interest.md, docs/checkpoints.md).
    #[arg(long, value_name = "insns=N|time=NS|marker", value_parser = crate::checkpoint::parse_run_point)]
    fast_forward: Option<crate::checkpoint::RunPoint>,
    /// Take a checkpoint of the whole machine after exactly N instructions
    /// (all harts), when the next hart to run has reached NS of simulated
    /// time, or at the guest's first `checkpoint` marker (`nvmm-marker
    /// checkpoint`), into --checkpoint-to DIR; the run goes on
    /// (docs/checkpoints.md). Without --checkpoint-to: the same restore
    /// point, nothing written (the run through).
    #[arg(long, value_name = "insns=N|time=NS|marker", value_parser = crate::checkpoint::parse_run_point,
          conflicts_with_all = ["crash_at", "gdb", "profile"])]
    checkpoint_at: Option<crate::checkpoint::RunPoint>,
    /// The directory the checkpoint is written to (created; a checkpoint
    /// there is replaced).
    #[arg(long, value_name = "DIR", requires = "checkpoint_at")]
    checkpoint_to: Option<PathBuf>,
    /// End the run (exit status 0) once the checkpoint is written.
    #[arg(long, requires = "checkpoint_to")]
    exit_after_checkpoint: bool,
    /// Sample the run: every N instructions (all harts), W instructions of
    /// warm-up and a window of M instructions in the timing model, the rest
    /// in the functional model; the statistics JSON's `sampling` estimates
    /// the whole run's simulated time from the windows, with a 95 %
    /// confidence interval (docs/regions-of-interest.md, "Sampling").
    #[arg(long, value_name = "period=N,detail=M[,warmup=W]", value_parser = rvnvmm_runctl::parse_sample,
          conflicts_with_all = ["fast_forward", "checkpoint_at", "restore"])]
    sample: Option<rvnvmm_runctl::Sampling>,
    /// Build the machine from the checkpoint in DIR instead of booting the
    /// firmware, kernel and initramfs, and run on. The machine (--config,
    /// --set) must have the checkpoint's memory map, harts and ISA; its
    /// timing configuration may differ.
    #[arg(long, value_name = "DIR",
          conflicts_with_all = ["kernel", "firmware", "initrd", "dump_dtb", "crash_at", "gdb", "profile", "smp"])]
    restore: Option<PathBuf>,
}

/// The largest input file `boot` reads (firmware, kernel, initramfs,
/// symbol map): guest RAM holds them, and no machine in `configs/` has
/// more than 4 GiB of it.
const MAX_INPUT_BYTES: u64 = 4 << 30;

fn read_file(what: &'static str, path: &Path) -> Result<Vec<u8>, BootError> {
    rvnvmm_config::files::read_regular(path, MAX_INPUT_BYTES, "an input file").map_err(|source| {
        BootError::Read {
            what,
            path: path.to_path_buf(),
            source,
        }
    })
}

/// The terminal attributes to restore, for the signal handler.
static SAVED_TERMIOS: std::sync::OnceLock<libc::termios> = std::sync::OnceLock::new();

/// SIGINT/SIGTERM/SIGHUP while the terminal is raw: restore it, then die
/// of the signal as usual.
extern "C" fn restore_terminal_and_die(sig: libc::c_int) {
    // SAFETY: tcsetattr, signal and raise are async-signal-safe; the
    // OnceLock was set before the handler was installed.
    unsafe {
        if let Some(t) = SAVED_TERMIOS.get() {
            libc::tcsetattr(0, libc::TCSANOW, t);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Puts a terminal on stdin into non-canonical, no-echo mode (the guest
/// echoes) until dropped or a signal ends the emulator. Ctrl-C still
/// stops the emulator.
struct RawTerminal(Option<libc::termios>);

impl RawTerminal {
    fn new() -> RawTerminal {
        // SAFETY: plain termios calls on fd 0 with a valid struct, and
        // installing a handler that only makes async-signal-safe calls.
        unsafe {
            if libc::isatty(0) != 1 {
                return RawTerminal(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawTerminal(None);
            }
            let saved = t;
            if SAVED_TERMIOS.set(saved).is_ok() {
                let handler = restore_terminal_and_die as extern "C" fn(libc::c_int);
                for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                    libc::signal(sig, handler as libc::sighandler_t);
                }
            }
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawTerminal(Some(saved))
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(t) = self.0 {
            // SAFETY: restores the attributes read in `new`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &t);
            }
        }
    }
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

/// What building a machine of this run takes: a boot, a restore and a
/// restore point build it the same way.
struct Rig {
    cfg: rvnvmm_config::Config,
    hart_cfg: HartConfig,
    console: Console,
    disk: Option<PathBuf>,
    /// The disk is an overlay over its image (`Block::open_overlay`): the
    /// run checkpoints or restores.
    disk_overlay: bool,
    /// What the machine was booted from (a checkpoint names it, a reboot
    /// after a restore loads it).
    boot_files: Option<BootFiles>,
}

impl Rig {
    /// The board, its UART reading `input`.
    fn board(&self, input: &InputQueue) -> Result<Board, BootError> {
        let mut builder = Board::builder(&self.cfg).uart(
            Box::new(ConsoleOut::new(
                self.console.clone(),
                Box::new(std::io::stdout()),
            )),
            input.clone(),
        );
        if let Some(disk) = &self.disk {
            let blk = if self.disk_overlay {
                Block::open_overlay(disk)
            } else {
                Block::open(disk, false)
            };
            let blk = blk.map_err(|source| BootError::Disk {
                path: disk.clone(),
                source,
            })?;
            builder = builder.virtio(blk);
        }
        builder = builder.virtio(Entropy::new(0x5eed));
        Ok(builder.build()?)
    }

    /// The machine of `board`, `harts` and RAM `mem`, with the configured
    /// model's memory system, cold.
    fn machine(
        &self,
        board: Board,
        harts: Vec<Hart>,
        mem: PhysMem,
        input: InputQueue,
    ) -> Result<Machine, BootError> {
        let n = board.harts();
        let core_map = CoreMap::with_threads_per_core(n, board.threads_per_core())
            .expect("the board has at least one hart");
        // The threads of a core share its issue calendar, as in user mode.
        let cores = Core::for_harts(&core_map, &self.hart_cfg);
        let memsys = match self.cfg.machine.model {
            rvnvmm_config::Model::Timing => {
                Some(Box::new(MemorySystem::with_cores(&self.cfg, core_map)?) as _)
            }
            rvnvmm_config::Model::Functional => None,
        };
        Ok(Machine::new(
            board,
            harts,
            cores,
            mem,
            memsys,
            input,
            self.console.clone(),
        ))
    }

    /// A machine to restore a checkpoint into: new devices, harts and
    /// memory system; RAM `mem`, or new and zero.
    fn blank(&self, mem: Option<PhysMem>) -> Result<Machine, BootError> {
        let input = InputQueue::new();
        let board = self.board(&input)?;
        let mem = match mem {
            Some(m) => m,
            None => {
                let mut ranges: Vec<(u64, u64)> = board.dram().map(|r| (r.base, r.size)).collect();
                ranges.extend(board.nvmm().map(|r| (r.base, r.size)));
                PhysMem::new(&ranges)?
            }
        };
        let harts = (0..board.harts())
            .map(|_| Hart::new(self.hart_cfg.clone()))
            .collect();
        self.machine(board, harts, mem, input)
    }
}

/// Makes a restore point of `m` (`docs/checkpoints.md`): saves it, writes
/// the checkpoint to `dir` if given, and carries on in a machine rebuilt
/// from what was saved, as `--restore` would build it (decoded code,
/// software TLBs and the timing model start cold). A fast-forward by
/// marker ends here, and one by a point if `ends_fast_forward`: the
/// rebuilt machine is timed.
fn restore_point(
    rig: &Rig,
    m: &mut Machine,
    roi: &mut BootControl,
    trigger: String,
    dir: Option<&Path>,
    ends_fast_forward: bool,
) -> Result<(), BootError> {
    let started = Instant::now();
    let point = crate::checkpoint::point_now(m, trigger);
    let mut sections = crate::checkpoint::save(m, roi, dir.is_some())?;
    if let Some(dir) = dir {
        let origin = crate::checkpoint::Origin {
            kind: "boot",
            disk: rig.disk.as_deref().filter(|_| rig.disk_overlay),
            boot: rig.boot_files.as_ref(),
        };
        sections = crate::checkpoint::write(origin, &rig.cfg, sections, &point, dir, started)?;
    }
    let ff_ends = ends_fast_forward || roi.fast_forwarding_to_marker();
    let timed = m.is_timed() || ff_ends;
    let mut fresh = rig.blank(Some(m.take_mem()))?;
    if !timed {
        fresh.set_timing(false)?;
    }
    fresh.restore(&sections, false, false)?;
    fresh.set_host_input(m.host_input().clone());
    *m = fresh;
    if ff_ends {
        roi.timing_from_restore_point(m, point.instructions, point.sim_time_ns);
    }
    Ok(())
}

/// The files and options a boot loads (`--firmware`, `--kernel`,
/// `--initrd` or their defaults, `--append`, `--nvmm`), as a checkpoint
/// names them.
fn boot_files(a: &BootArgs) -> Result<BootFiles, BootError> {
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
fn boot_images(
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
        .next()
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
fn boot_machine(
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

/// `rvnvmm boot`: builds the machine (booted, or restored from a
/// checkpoint), runs it under its run control until the guest powers off
/// or the run stops at a point, and writes what the options ask for. The
/// exit status: the guest's, or the crash's or the instruction limit's.
pub fn main(a: BootArgs) -> Result<i32, BootError> {
    let cfg = boot_config(&a)?;
    // Output paths are checked before the run, not after it.
    let check = |what, p: &Option<PathBuf>| {
        p.as_deref()
            .map(|p| crate::output::OutputFile::check(what, p))
            .transpose()
    };
    let dtb_out = check("device tree", &a.dump_dtb)?;
    let stats_out = check("stats", &a.stats)?;
    let profile_out = check("profile", &a.profile)?;
    let mut rig = Rig::new(&a, &cfg)?;
    let nvmm_region = crate::persistence::NvmmRegion::of(&cfg)?;
    let (m, mut boot, restored) = match &a.restore {
        Some(dir) => restore_machine(&a, &mut rig, dir)?,
        None => {
            let files = boot_files(&a)?;
            let (m, boot) = boot_machine(&a, &rig, &files, nvmm_region.as_ref(), dtb_out.as_ref())?;
            rig.boot_files = Some(files);
            (m, Some(boot), None)
        }
    };
    let points = Points::of(&a, &rig)?;
    let mut m = arm(&a, m, &points)?;

    let _raw = RawTerminal::new();
    take_host_input(&a, &mut m);
    let started = Instant::now();
    let mut roi = run_control(&a, &mut m, restored)?;
    let result = run(&a, &rig, &mut m, &mut roi, &mut boot, points)?;
    let host_seconds = started.elapsed().as_secs_f64();
    m.flush();
    let crash = power_down(&a, &mut m, &result, nvmm_region.as_ref())?;
    if let Some(out) = &stats_out {
        let json = stats_json(&cfg, &mut m, &result, host_seconds, crash.as_ref(), roi);
        out.write(json.as_bytes())?;
    }
    if let (Some(out), Some(profile)) = (&profile_out, m.profile()) {
        write_profile(&a, &rig, out, profile)?;
    }
    exit_status(result)
}

/// The machine description, with `--smp`.
fn boot_config(a: &BootArgs) -> Result<rvnvmm_config::Config, BootError> {
    let mut machine_args = a.machine.clone();
    if let Some(n) = a.smp {
        machine_args.sets.push(format!("machine.harts={n}"));
    }
    Ok(load_config(&machine_args)?)
}

impl Rig {
    /// What building a machine of `cfg` takes with the options `a`.
    fn new(a: &BootArgs, cfg: &rvnvmm_config::Config) -> Result<Rig, BootError> {
        let isa = cfg.extensions()?;
        Ok(Rig {
            cfg: cfg.clone(),
            hart_cfg: HartConfig {
                clock_hz: cfg.machine.clock_hz,
                timebase_hz: map::TIMEBASE_HZ,
                cflush_user: cfg.cflush.allow_user,
                costs: cfg.core_costs(),
                isa,
                misaligned_fast: cfg.machine.misaligned == rvnvmm_config::Misaligned::Fast,
                engine: a.engine,
            },
            console: Console::default(),
            disk: a.disk.clone(),
            disk_overlay: a.checkpoint_at.is_some(),
            boot_files: None,
        })
    }
}

/// A machine, the images that reboot it (`None`: load them from the boot
/// files first), and a restored checkpoint's point and run-control
/// bookkeeping.
type Built = (
    Machine,
    Option<BootImages>,
    Option<(rvnvmm_checkpoint::Point, BootControl)>,
);

/// The machine of the checkpoint in `dir` (`--restore`), with its disk.
fn restore_machine(a: &BootArgs, rig: &mut Rig, dir: &Path) -> Result<Built, BootError> {
    let c = crate::checkpoint::read_for("boot", &rig.cfg, dir)?;
    // The disk: the checkpoint's image (or --disk's), unchanged, with the
    // checkpoint's overlay over it.
    match (&c.manifest.disk, &a.disk) {
        (Some(image), given) => {
            let path = given.clone().unwrap_or_else(|| image.path.clone());
            let now = FileIdentity::of(&path).map_err(|source| BootError::Disk {
                path: path.clone(),
                source,
            })?;
            let differences = image.differences(&now);
            if !differences.is_empty() {
                return Err(BootError::DiskChanged { path, differences });
            }
            rig.disk = Some(path);
            rig.disk_overlay = true;
        }
        (None, Some(_)) => return Err(BootError::DiskNotInCheckpoint),
        (None, None) => {}
    }
    let mut m = rig.blank(None)?;
    m.restore(&c.sections, true, true)?;
    let roi = crate::checkpoint::roi_of(&c.sections)?;
    rig.boot_files = c.manifest.boot;
    Ok((m, None, Some((c.manifest.point, roi))))
}

/// The points the machine stops at on its own: a fast-forward's end or a
/// checkpoint's point, not both, nor a crash besides.
#[derive(Clone, Copy)]
struct Points {
    /// `--fast-forward insns=N|time=NS`.
    fast_forward: Option<StopAt>,
    /// `--checkpoint-at insns=N|time=NS`.
    checkpoint: Option<StopAt>,
}

impl Points {
    /// The points of the options `a`, checked against each other and the
    /// disk of `rig`.
    fn of(a: &BootArgs, rig: &Rig) -> Result<Points, BootError> {
        let point = |p: Option<RunPoint>| match p {
            Some(RunPoint::Point(at)) => Some(at),
            _ => None,
        };
        let (ff_point, checkpoint_point) = (point(a.fast_forward), point(a.checkpoint_at));
        if ff_point.is_some() && (checkpoint_point.is_some() || a.crash_at.is_some()) {
            return Err(BootError::Options(
                "--fast-forward insns=N|time=NS cannot be combined with --checkpoint-at \
                 insns=N|time=NS or --crash-at (one point at a time: take the checkpoint in the \
                 functional model and restore it under the timing model instead)",
            ));
        }
        if ff_point.is_some() && rig.disk.is_some() && !rig.disk_overlay {
            return Err(BootError::Options(
                "--fast-forward insns=N|time=NS cannot be combined with --disk (yet): the disk is \
                 written through to its image, which a restore point cannot carry over; take a \
                 checkpoint (--checkpoint-at, the disk an overlay) and restore it under the timing \
                 model instead",
            ));
        }
        if let (Some(disk), true) = (&rig.disk, rig.disk_overlay) {
            eprintln!(
                "rvnvmm: the disk {} is not written in this run: the guest's writes are kept over \
                 it (and in checkpoints)",
                disk.display()
            );
        }
        Ok(Points {
            fast_forward: ff_point,
            checkpoint: checkpoint_point,
        })
    }
}

/// `m` with what the options `a` add to a run: the crash point, the point
/// it stops at, the profile, the debugger.
fn arm(a: &BootArgs, mut m: Machine, points: &Points) -> Result<Machine, BootError> {
    if let Some(at) = a.crash_at {
        m = m.with_crash_at(at);
    }
    // Not `None`: that would clear `--crash-at`'s point.
    if let Some(at) = points.fast_forward.or(points.checkpoint) {
        m.set_checkpoint_at(Some(at));
    }
    if a.profile.is_some() {
        m = m.with_profile();
    }
    if let Some(port) = a.gdb {
        m = m.with_gdb(crate::gdb::wait_for_gdb(port)?);
    }
    Ok(m)
}

/// Starts reading the host's stdin into `m`'s input. After a restore the
/// guest takes input at once: input piped in is read to its end first and
/// held until every hart first idles, so it arrives at the same point
/// whatever the host's timing (a boot holds it back until Linux opens the
/// console, which gives the same). Typing at a terminal arrives as it
/// comes.
fn take_host_input(a: &BootArgs, m: &mut Machine) {
    let reader = m.host_input().spawn_reader(std::io::stdin());
    if a.restore.is_some() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let saved = m.host_input().queued_bytes().len();
        let _ = reader.join();
        if m.host_input().queued_bytes().len() > saved {
            m.hold_input_until_idle();
        }
    }
}

/// The run control of the boot of `m`: a fast-forward's, a restored
/// checkpoint's bookkeeping, a sampled boot's, or new.
fn run_control(
    a: &BootArgs,
    m: &mut Machine,
    restored: Option<(rvnvmm_checkpoint::Point, BootControl)>,
) -> Result<BootControl, BootError> {
    Ok(match (a.fast_forward, restored) {
        (Some(RunPoint::Marker), restored) => {
            let mut roi = restored.map_or_else(BootControl::new, |(_, roi)| roi);
            crate::roi::fast_forward_to_marker(&mut roi, m)?;
            roi
        }
        // Markers do not end it: the machine is rebuilt timed at the point.
        (Some(RunPoint::Point(_)), restored) => {
            crate::roi::functional_until_timing(m)?;
            restored.map_or_else(BootControl::new, |(_, roi)| roi)
        }
        (None, Some((point, mut roi))) => {
            // A functional checkpoint restored under the timing model: the
            // fast-forward's switch, at the restore point.
            if point.model == "functional" && m.is_timed() {
                roi.timing_from_restore_point(m, point.instructions, point.sim_time_ns);
            }
            roi
        }
        (None, None) => match a.sample {
            Some(plan) => crate::roi::sample(m, plan)?,
            None => BootControl::new(),
        },
    })
}

/// Runs `m` until the guest powers off or the run ends otherwise: reboots
/// it, hands markers and pauses to the run control `roi`, takes restore
/// points (a fast-forward's end, checkpoints) at `points` and `checkpoint`
/// markers.
fn run(
    a: &BootArgs,
    rig: &Rig,
    m: &mut Machine,
    roi: &mut BootControl,
    boot: &mut Option<BootImages>,
    points: Points,
) -> Result<Result<End, MachineError>, BootError> {
    // The points still ahead: `--fast-forward`'s end, `--checkpoint-at`'s
    // (each reached once).
    let Points {
        fast_forward: mut ff_point,
        checkpoint: checkpoint_point,
    } = points;
    let mut checkpoint_taken = false;
    let mut noted_marker = false;
    Ok(loop {
        let at_marker = match m.run(a.max_insns) {
            Ok(End::Reboot) => {
                // A restored machine loads the boot files its checkpoint
                // names, if they have not changed.
                if boot.is_none() {
                    let files = rig
                        .boot_files
                        .as_ref()
                        .ok_or(BootError::RebootAfterRestore)?;
                    *boot = Some(boot_images(rig, m.board(), files, true, None)?);
                }
                m.reboot(boot.as_ref().expect("the boot images, loaded above"))?;
                continue;
            }
            Ok(End::Marker {
                op: rvnvmm_isa::MarkerOp::Checkpoint,
                ..
            }) => true,
            Ok(End::Checkpoint) => false,
            Ok(End::Pause) => {
                crate::roi::sample_point(roi, m);
                continue;
            }
            Ok(End::Marker { hart, op, arg }) => {
                debug_assert_eq!(
                    hart,
                    m.last_pc().0,
                    "the run control asks the hart that ran last"
                );
                // `checkpoint` markers are taken above.
                if let Some(MarkerAction::Exit(code)) = roi.marker(m, op, arg) {
                    break Ok(End::PowerOff(code.into()));
                }
                continue;
            }
            other => break other,
        };
        if at_marker && roi.is_sampled() {
            if !std::mem::replace(&mut noted_marker, true) {
                eprintln!(
                    "rvnvmm: a `checkpoint` marker was ignored: a sampled run is not checkpointed \
                     (--sample decides the model)"
                );
            }
            continue;
        }
        let disk_written_through = rig.disk.is_some() && !rig.disk_overlay;
        if at_marker && (a.gdb.is_some() || a.profile.is_some() || disk_written_through) {
            if !std::mem::replace(&mut noted_marker, true) {
                eprintln!(
                    "rvnvmm: a `checkpoint` marker was ignored: a machine with a disk written \
                     through to its image (no --checkpoint-at), a debugger or a profile is not \
                     checkpointed (yet)"
                );
            }
            continue;
        }
        // The fast-forward's end: the same restore point as a checkpoint's
        // there, nothing written, the rebuilt machine timed.
        if let (false, Some(at)) = (at_marker, ff_point) {
            ff_point = None;
            restore_point(rig, m, roi, RunPoint::Point(at).trigger(), None, true)?;
            continue;
        }
        let due = !checkpoint_taken
            && match a.checkpoint_at {
                Some(RunPoint::Marker) => at_marker,
                Some(RunPoint::Point(_)) => !at_marker,
                None => false,
            };
        checkpoint_taken |= due;
        let trigger = match (at_marker, a.checkpoint_at) {
            (false, Some(at)) => at.trigger(),
            _ => "marker".to_string(),
        };
        let dir = a.checkpoint_to.as_deref().filter(|_| due);
        restore_point(rig, m, roi, trigger, dir, false)?;
        if due && a.exit_after_checkpoint {
            break Ok(End::Checkpoint);
        }
        // The rebuilt machine stops at the point still ahead if a marker
        // came first.
        if let Some(at) = ff_point.or(checkpoint_point.filter(|_| !checkpoint_taken)) {
            m.set_checkpoint_at(Some(at));
        }
    })
}

/// After the run ended with `result`: the power fails at a crash (the
/// crash's JSON, said on stderr too), or else the NVMM region keeps all
/// the guest stored.
fn power_down(
    a: &BootArgs,
    m: &mut Machine,
    result: &Result<End, MachineError>,
    nvmm_region: Option<&crate::persistence::NvmmRegion>,
) -> Result<Option<serde_json::Value>, BootError> {
    if !matches!(result, Ok(End::Crash)) {
        // Powered off, or stopped some other way with the power on: all the
        // guest stored is in NVMM, as after a clean shutdown.
        if let Some(n) = nvmm_region {
            n.save_mem(m.mem())?;
        }
        return Ok(None);
    }
    let image = nvmm_region.and_then(|n| n.image.as_ref());
    let report = m.power_fail(image, a.crash_seed)?;
    let at = crate::persistence::CrashPoint {
        instructions: m.instructions(),
        sim_time_ns: m.cores().iter().map(|c| c.time_ns()).max().unwrap_or(0),
        last_pc: m.last_pc(),
    };
    eprintln!("rvnvmm: {}", crate::persistence::crash_line(&at, &report));
    Ok(Some(crate::persistence::crash_json(
        &at,
        &report,
        m.mem().domain(),
        a.crash_seed,
    )))
}

/// Writes `profile` to `out`, kernel functions named from `--symbols` or
/// the System.map beside the kernel.
fn write_profile(
    a: &BootArgs,
    rig: &Rig,
    out: &crate::output::OutputFile,
    profile: &rvnvmm_board::profile::Profile,
) -> Result<(), BootError> {
    let map = a
        .symbols
        .clone()
        .or_else(|| Symbols::beside(&rig.boot_files.as_ref()?.kernel.path));
    let symbols = match &map {
        Some(p) => Some(Symbols::parse(&String::from_utf8_lossy(&read_file(
            "symbol map",
            p,
        )?))),
        None => None,
    };
    out.write(profile.report(symbols.as_ref(), 60).as_bytes())?;
    Ok(())
}

/// The exit status of a run that ended with `result`.
fn exit_status(result: Result<End, MachineError>) -> Result<i32, BootError> {
    // As `rvnvmm run`: the limit is not an error of the run but its own
    // outcome, with its own status.
    if let Err(MachineError::InsnLimit {
        max,
        harts,
        console,
    }) = &result
    {
        eprintln!(
            "rvnvmm: stopped at --max-insns: {max} instructions retired and the guest had not \
             powered off (exit status {})\n  {harts}\n  last console lines:\n    {console}",
            crate::INSN_LIMIT_STATUS
        );
        return Ok(crate::INSN_LIMIT_STATUS);
    }
    match result? {
        End::PowerOff(code) => Ok(i32::from(code)),
        End::Crash => Ok(crate::persistence::CRASH_STATUS),
        End::Checkpoint => Ok(0),
        End::Reboot | End::Marker { .. } | End::Pause => {
            unreachable!("the machine goes on after these")
        }
    }
}

fn stats_json(
    cfg: &rvnvmm_config::Config,
    m: &mut Machine,
    result: &Result<End, MachineError>,
    host_seconds: f64,
    crash: Option<&serde_json::Value>,
    roi: BootControl,
) -> String {
    use serde_json::json;
    let exit = match result {
        Ok(End::PowerOff(c)) => json!({ "code": c }),
        Ok(End::Reboot) => json!({ "reboot": true }),
        Ok(End::Crash) => json!({ "crash": true }),
        Ok(End::Checkpoint) => json!({ "checkpoint": true }),
        Ok(End::Marker { .. } | End::Pause) => {
            unreachable!("the machine goes on after a marker or a pause")
        }
        Err(e) => json!({ "error": e.to_string() }),
    };
    let mut v = rvnvmm_board::stats::stats_json(m, true);
    // The whole run's speed, not the region's.
    let instructions = m.instructions();
    let extra = json!({
        "schema": "rvnvmm-stats/1",
        "machine": cfg.machine.name,
        "program": "boot",
        "exit": exit,
        "host_seconds": host_seconds,
        "mips": if host_seconds > 0.0 { instructions as f64 / host_seconds / 1e6 } else { 0.0 },
    });
    if let (serde_json::Value::Object(top), serde_json::Value::Object(extra)) = (&mut v, extra) {
        for (k, val) in extra {
            top.insert(k, val);
        }
    }
    if let Some(c) = crash {
        v["crash"] = c.clone();
    }
    if let Some(s) = roi.sampling_outcome(instructions, cfg.machine.clock_hz) {
        v["sampling"] = rvnvmm_runctl::sampling_json(&s);
    }
    roi.add_to(&mut v);
    serde_json::to_string_pretty(&v).expect("JSON of plain values") + "\n"
}
