//! The `Rig`: what building the board machine of a run takes (its
//! configuration, the harts' configuration, the console and the disk), and
//! the board, machine and blank machine it builds.

use super::args::BootArgs;
use crate::error::BootError;
use rvnvmm_board::machine::{Console, ConsoleOut, Machine};
use rvnvmm_board::{map, Block, Board, Entropy, InputQueue};
use rvnvmm_checkpoint::BootFiles;
use rvnvmm_hart::{Core, CoreMap, Hart, HartConfig};
use rvnvmm_mem::PhysMem;
use rvnvmm_memsys::MemorySystem;
use std::path::PathBuf;

/// What building a machine of this run takes: a boot, a restore and a
/// restore point build it the same way.
pub(super) struct Rig {
    pub(super) cfg: rvnvmm_config::Config,
    pub(super) hart_cfg: HartConfig,
    console: Console,
    pub(super) disk: Option<PathBuf>,
    /// The disk is an overlay over its image (`Block::open_overlay`): the
    /// run checkpoints or restores.
    pub(super) disk_overlay: bool,
    /// What the machine was booted from (a checkpoint names it, a reboot
    /// after a restore loads it).
    pub(super) boot_files: Option<BootFiles>,
}

impl Rig {
    /// What building a machine of `cfg` takes with the options `a`.
    pub(super) fn new(a: &BootArgs, cfg: &rvnvmm_config::Config) -> Result<Rig, BootError> {
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
                // A hart's calls interleave with the kernel's and other
                // processes': no shadow stack in the full system.
                call_stacks: false,
            },
            console: Console::default(),
            disk: a.disk.clone(),
            disk_overlay: a.checkpoint_at.is_some(),
            boot_files: None,
        })
    }

    /// The board, its UART reading `input`.
    pub(super) fn board(&self, input: &InputQueue) -> Result<Board, BootError> {
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
    pub(super) fn machine(
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
    pub(super) fn blank(&self, mem: Option<PhysMem>) -> Result<Machine, BootError> {
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
