//! The board machine on small hand-assembled programs.

use super::*;
use crate::syscon;
use rvnvmm_config::Config;
use rvnvmm_hart::{CoreMap, HartConfig};
use rvnvmm_isa::encode::{addi, bne, csrr, li, sd, sw};

const T0: u8 = 5;
const T1: u8 = 6;
const T2: u8 = 7;
const A0: u8 = 10;
const WFI: u32 = 0x1050_0073;
/// `j .`
const SPIN: u32 = 0x0000_006f;
/// `j .-4`
const BACK: u32 = 0xffdf_f06f;
const MTVEC: u16 = 0x305;
const MIE: u16 = 0x304;
const MSTATUS: u16 = 0x300;

fn csrw(csr: u16, rs1: u8) -> u32 {
    (u32::from(csr) << 20) | (u32::from(rs1) << 15) | (1 << 12) | 0x73
}

fn sb(rs2: u8, rs1: u8) -> u32 {
    (u32::from(rs2) << 20) | (u32::from(rs1) << 15) | 0x23
}

/// The code of `poweroff(code)`: the syscon's FAIL command.
fn poweroff(code: u16) -> Vec<u32> {
    let mut p = li(T0, map::SYSCON_BASE);
    p.extend(li(T1, u64::from(syscon::FAIL) | u64::from(code) << 16));
    p.extend([sw(T1, T0, 0), SPIN]);
    p
}

/// Stores `time` and `minstret` at DRAM base + 0x800 and + 0x808.
fn record(base: u64) -> Vec<u32> {
    let mut p = li(T0, base + 0x800);
    p.extend([
        csrr(T1, 0xc01),
        sd(T1, T0, 0),
        csrr(T1, 0xb02),
        sd(T1, T0, 8),
    ]);
    p
}

/// What [`record`] stored: (time ticks, instructions retired).
fn recorded(r: &Rig) -> (u64, u64) {
    let at = r.base + 0x800;
    (
        r.m.mem().read_u64(at).unwrap(),
        r.m.mem().read_u64(at + 8).unwrap(),
    )
}

/// Where trap handlers start: DRAM base + this.
const HANDLER: usize = 0x400;

/// `code`, then `handler` at [`HANDLER`].
fn with_handler(mut code: Vec<u32>, handler: Vec<u32>) -> Vec<u32> {
    assert!(code.len() <= HANDLER / 4);
    code.resize(HANDLER / 4, SPIN);
    code.extend(handler);
    code
}

/// Enables the machine interrupts `mie_bits` with the handler at
/// [`HANDLER`] as the trap vector.
fn enable(mie_bits: u64, base: u64) -> Vec<u32> {
    let mut p = li(T0, base + HANDLER as u64);
    p.push(csrw(MTVEC, T0));
    p.extend(li(T0, mie_bits));
    p.push(csrw(MIE, T0));
    p.extend(li(T0, 1 << 3));
    p.push(csrw(MSTATUS, T0));
    p
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Rig {
    m: Machine,
    out: Captured,
    base: u64,
}

/// A machine of `harts` harts all starting at `program` (at DRAM's
/// base, `a0` = hart id), timed if `timed`; host input closed.
fn rig(harts: u32, program: impl Fn(u64) -> Vec<u32>, timed: bool) -> Rig {
    let mut cfg = Config::default();
    cfg.machine.harts = harts;
    let out = Captured::default();
    let console = Console::default();
    let board = Board::builder(&cfg)
        .uart(
            Box::new(ConsoleOut::new(console.clone(), Box::new(out.clone()))),
            InputQueue::new(),
        )
        .build()
        .unwrap();
    let base = board.dram().next().unwrap().base;
    let ranges: Vec<(u64, u64)> = board.dram().map(|r| (r.base, r.size)).collect();
    let mut mem = PhysMem::new(&ranges).unwrap();
    let words: Vec<u8> = program(base).iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(mem.write(base, &words));
    let core_map = CoreMap::one_thread_per_core(harts as usize);
    let cores: Vec<Core> = (0..harts as usize)
        .map(|h| Core::new(core_map.core_of(h), h as u64, &HartConfig::default()))
        .collect();
    let harts: Vec<Hart> = (0..harts)
        .map(|h| {
            let mut hart = Hart::new(HartConfig::default());
            hart.set_full_system(true);
            hart.pc = base;
            hart.x[10] = u64::from(h);
            hart
        })
        .collect();
    let memsys = timed
        .then(|| Box::new(rvnvmm_memsys::MemorySystem::with_cores(&cfg, core_map).unwrap()) as _);
    let m = Machine::new(board, harts, cores, mem, memsys, InputQueue::new(), console);
    m.host_input().close();
    Rig { m, out, base }
}

#[test]
fn stores_reach_the_uart_and_the_syscon_powers_off() {
    for timed in [false, true] {
        let mut r = rig(
            1,
            |_| {
                let mut p = li(T0, map::UART0_BASE);
                for c in b"hi\n" {
                    p.extend(li(T1, u64::from(*c)));
                    p.push(sb(T1, T0));
                }
                p.extend(poweroff(7));
                p
            },
            timed,
        );
        assert_eq!(r.m.run(Some(1_000_000)).unwrap(), End::PowerOff(7));
        assert_eq!(&*r.out.0.lock().unwrap(), b"hi\n");
        // The request is seen when the hart's turn ends.
        assert!(r.m.instructions() > 0 && r.m.instructions() < SLICE + 100);
        assert_eq!(r.m.memsys_mut().is_some(), timed);
    }
}

#[test]
fn the_instruction_limit_stops_spinning_harts_exactly() {
    let mut r = rig(2, |_| vec![SPIN], false);
    let e = r.m.run(Some(50_000)).unwrap_err();
    assert!(
        matches!(e, MachineError::InsnLimit { max: 50_000, .. }),
        "{e}"
    );
    assert!(e
        .to_string()
        .starts_with("the guest did not power off within 50000 instructions\n  hart 0: pc"));
    // Blocks run whole: a turn ends at most a block (64) past its budget.
    assert!((50_000..50_000 + 2 * 64).contains(&r.m.instructions()));
    // Both harts had turns, in time order: neither is a turn ahead.
    let h = r.m.cores();
    assert!(
        h[0].cycles.abs_diff(h[1].cycles) <= SLICE + 64,
        "{} {}",
        h[0].cycles,
        h[1].cycles
    );
}

#[test]
fn when_every_hart_sleeps_with_nothing_to_wake_it_the_run_ends_with_an_error() {
    let mut r = rig(2, |_| vec![WFI, BACK], false);
    let e = r.m.run(Some(1_000_000)).unwrap_err();
    assert!(matches!(e, MachineError::AllAsleep { .. }), "{e}");
    assert!(r.m.asleep(0) && r.m.asleep(1));
    assert!(e.to_string().contains("hart 1: pc 0x"), "{e}");
}

#[test]
fn a_software_interrupt_from_another_hart_wakes_a_sleeping_one() {
    // Hart 0 sleeps with MSIE on; hart 1 counts to 2000, then raises
    // hart 0's MSIP through the CLINT; hart 0's handler powers off.
    let program = |base: u64| {
        let sleeper = enable(1 << 3, base);
        let mut p = vec![bne(A0, 0, 4 * (sleeper.len() as i32 + 3))];
        p.extend(sleeper);
        p.extend([WFI, BACK]);
        p.extend(li(T2, 2000));
        p.extend([addi(T2, T2, -1), bne(T2, 0, -4)]);
        p.extend(li(T0, map::CLINT_BASE));
        p.extend(li(T1, 1));
        p.extend([sw(T1, T0, 0), WFI, BACK]);
        let mut handler = record(base);
        handler.extend(poweroff(5));
        with_handler(p, handler)
    };
    let mut r = rig(2, program, false);
    assert_eq!(r.m.run(Some(10_000_000)).unwrap(), End::PowerOff(5));
    let (ticks, insns) = recorded(&r);
    assert!(
        insns < 50,
        "hart 0 slept until the interrupt: {insns} instructions"
    );
    // It woke no earlier than hart 1's store (4000 instructions, at
    // 50 MHz 80 us = 800 ticks) and not a turn later.
    assert!((800..1000).contains(&ticks), "woke at {ticks}");
    assert_eq!(r.m.harts()[0].stats.interrupts, 1);
}

#[test]
fn a_timer_wakes_a_sleeping_hart_at_its_deadline() {
    // mtimecmp = 1000 ticks (100 us at 10 MHz), MTIE on, wfi.
    let program = |base: u64| {
        let mut p = li(T0, map::CLINT_BASE + 0x4000);
        p.extend(li(T1, 1000));
        p.push(sd(T1, T0, 0));
        p.extend(enable(1 << 7, base));
        p.extend([WFI, BACK]);
        let mut handler = record(base);
        handler.extend(poweroff(9));
        with_handler(p, handler)
    };
    for timed in [false, true] {
        let mut r = rig(1, program, timed);
        assert_eq!(r.m.run(Some(1_000_000)).unwrap(), End::PowerOff(9));
        let (ticks, insns) = recorded(&r);
        assert!(insns < 50, "it slept, not spun: {insns} instructions");
        // The handler reads `time` a few (cold-cache) instructions in.
        assert!((1000..1100).contains(&ticks), "woke at {ticks}");
    }
}

#[test]
fn a_reboot_reloads_the_images_and_restarts_every_hart_at_the_firmware() {
    // The program overwrites its data word, then asks for a reboot.
    let program = |base: u64| {
        let mut p = li(T0, base + 0x800);
        p.extend(li(T1, 0x5555_5555));
        p.push(sw(T1, T0, 0));
        p.extend(li(T0, map::SYSCON_BASE));
        p.extend(li(T1, u64::from(syscon::REBOOT)));
        p.extend([sw(T1, T0, 0), SPIN]);
        p
    };
    let mut r = rig(2, program, false);
    let base = r.base;
    let mut image = vec![0u8; 0x804];
    r.m.mem().read(base, &mut image);
    image[0x800..].copy_from_slice(&0xaaaa_aaaau32.to_le_bytes());
    let boot = BootImages {
        images: vec![(base, image, "firmware")],
        lay: Layout {
            firmware: base,
            kernel: base + 0x20_0000,
            initrd: None,
            info: base + 0x3000,
            dtb: base + 0x4000,
        },
    };
    boot.load(&mut r.m.mem).unwrap();
    assert_eq!(r.m.run(Some(1_000_000)).unwrap(), End::Reboot);
    assert_eq!(
        r.m.mem().read_u64(base + 0x800).unwrap() as u32,
        0x5555_5555
    );
    let latest = r.m.cores().iter().map(|c| c.cycles).max().unwrap();
    r.m.reboot(&boot).unwrap();
    assert_eq!(
        r.m.mem().read_u64(base + 0x800).unwrap() as u32,
        0xaaaa_aaaa
    );
    for (id, h) in r.m.harts().iter().enumerate() {
        assert_eq!(h.pc, base);
        assert_eq!(
            (h.x[10], h.x[11], h.x[12]),
            (id as u64, base + 0x4000, base + 0x3000)
        );
        assert_eq!(r.m.cores()[id].cycles, latest, "time runs on");
        assert!(!r.m.asleep(id));
    }
    // And it runs again, to the next reboot request.
    assert_eq!(r.m.run(Some(2_000_000)).unwrap(), End::Reboot);
    // An image outside RAM is refused.
    let bad = BootImages {
        images: vec![(0x10, vec![1], "kernel")],
        lay: boot.lay,
    };
    assert_eq!(
        bad.load(&mut r.m.mem).unwrap_err().to_string(),
        "cannot place the kernel at 0x10: not RAM"
    );
}

#[test]
fn dma_writes_reach_ram_and_drop_code_they_overwrite() {
    let mut mem = PhysMem::new(&[(0x8000_0000, 1 << 20)]).unwrap();
    let mut pages = CodePages::default();
    pages.mark(0x8000_1000);
    let mut dma = Dma {
        mem: &mut mem,
        pages: &mut pages,
    };
    dma.write(0x8000_0000, &[1, 2, 3]).unwrap();
    assert!(!dma.pages.flush_pending, "not a code page");
    // A write that crosses into the code page.
    dma.write(0x8000_0ffe, &[9; 4]).unwrap();
    assert!(dma.pages.flush_pending);
    let mut buf = [0u8; 4];
    dma.read(0x8000_0ffe, &mut buf).unwrap();
    assert_eq!(buf, [9; 4]);
    assert!(dma.write(0x10, &[1]).is_err(), "not RAM");
}

/// A three-instruction loop: blocks that run whole overshoot a budget
/// (turns of [`SLICE`] instructions).
fn counting_loop(_: u64) -> Vec<u32> {
    vec![addi(T0, T0, 1), addi(T1, T1, 1), bne(T0, 0, -8)]
}

#[test]
fn a_crash_at_an_instruction_count_lands_on_it_and_follows_the_run_without_it() {
    for n in [1, 50_003] {
        let mut r = rig(2, counting_loop, false).with_crash(StopAt::Insns(n));
        assert_eq!(r.m.run(None).unwrap(), End::Crash);
        assert_eq!(r.m.instructions(), n);
    }
    // A run without a crash, to its limit: its turns end at block ends, a
    // few instructions past their budgets.
    let mut plain = rig(2, counting_loop, false);
    plain.m.run(Some(1_000_000)).unwrap_err();
    let total = plain.m.instructions();
    assert_ne!(total, 1_000_000);
    // A crash where it stopped finds each hart where it was: every turn
    // before the crash's ended where the plain run's did.
    let mut r = rig(2, counting_loop, false).with_crash(StopAt::Insns(total));
    assert_eq!(r.m.run(None).unwrap(), End::Crash);
    let instret = |m: &Machine| m.harts().iter().map(|h| h.instret).collect::<Vec<_>>();
    assert_eq!(instret(&r.m), instret(&plain.m));
}

#[test]
fn a_crash_at_a_time_lands_within_a_few_instructions_of_it() {
    let mut r = rig(2, counting_loop, true).with_crash(StopAt::TimeNs(200_000));
    assert_eq!(r.m.run(None).unwrap(), End::Crash);
    let cores = r.m.cores();
    let at = cores.iter().map(|c| c.time_ns()).min().unwrap();
    assert!((200_000..200_100).contains(&at), "{at} ns");
    assert!(r.m.last_pc().0 < 2);
}

impl Rig {
    fn with_crash(mut self, at: StopAt) -> Rig {
        self.m = self.m.with_crash_at(at);
        self
    }
}

/// A marker (from M-mode here) stops the run past itself; the machine goes
/// on where it left off. `set_timing` moves between the models, and a
/// machine without a timing model refuses to switch to one.
#[test]
fn a_marker_stops_the_run_and_the_model_switches_both_ways() {
    use rvnvmm_isa::{encode_marker, MarkerOp};
    for timed in [false, true] {
        let mut r = rig(
            1,
            |_| {
                let mut p = vec![addi(A0, 0, 42), encode_marker(MarkerOp::DumpStats, A0)];
                p.extend(poweroff(3));
                p
            },
            timed,
        );
        let end = r.m.run(Some(1_000_000)).unwrap();
        assert_eq!(
            end,
            End::Marker {
                hart: 0,
                op: MarkerOp::DumpStats,
                arg: 42
            }
        );
        assert_eq!(r.m.harts()[0].pc, r.base + 8);
        r.m.reset_stats();
        assert_eq!(r.m.stats_base().unwrap().instructions, 2);
        if timed {
            let timing_costs = r.m.cores()[0].costs.clone();
            assert!(r.m.set_timing(false).unwrap());
            assert!(r.m.memsys_mut().is_none() && r.m.any_memsys_mut().is_some());
            assert_eq!(r.m.cores()[0].costs, rvnvmm_hart::CoreCosts::FUNCTIONAL);
            assert!(r.m.set_timing(true).unwrap());
            assert!(r.m.memsys_mut().is_some());
            assert_eq!(r.m.cores()[0].costs, timing_costs);
        } else {
            assert!(matches!(
                r.m.set_timing(true),
                Err(MachineError::NoTimingModel)
            ));
            assert!(!r.m.set_timing(false).unwrap());
        }
        assert_eq!(r.m.run(Some(1_000_000)).unwrap(), End::PowerOff(3));
    }
}

/// Each hart counts down 3000 + 1000 * id, writes its id to the UART;
/// hart 0 then waits for the others' marks in RAM and powers off.
fn countdown_program(base: u64) -> Vec<u32> {
    let mut p = li(T2, 3000);
    p.extend(li(T0, 1000));
    p.extend([
        0x02a2_82b3, // mul t0, t0, a0
        0x0053_83b3, // add t2, t2, t0
        addi(T2, T2, -1),
        bne(T2, 0, -4),
    ]);
    p.extend(li(T0, map::UART0_BASE));
    p.extend([addi(T1, A0, 0x30), sb(T1, T0)]);
    p.extend(li(T0, base + 0x900));
    p.extend([
        0x00a2_82b3, // add t0, t0, a0
        addi(T1, 0, 1),
        sb(T1, T0),
    ]);
    // Hart 0 waits for hart 1's mark and powers off; the others spin.
    let mut wait = li(T0, base + 0x901);
    wait.extend([0x0002_c303, bne(T1, 0, 8), 0xff9f_f06f]); // lbu t1, 0(t0); bnez; j .-8
    wait.extend(poweroff(9));
    p.push(bne(A0, 0, 4 * (wait.len() as i32 + 1)));
    p.extend(wait);
    p.push(SPIN);
    p
}

/// A machine saved at an instruction count and restored into a machine
/// built afresh (RAM zero, harts at reset) runs on as the machine that
/// stopped there does: the same power-off code, console output,
/// instructions, registers and clocks.
#[test]
fn a_checkpoint_restored_into_a_fresh_machine_runs_to_the_same_end() {
    let program = countdown_program;
    // The run through stops at the same point (a restore starts a new
    // round of turns there) and goes on.
    let mut through = rig(2, program, false);
    through.m.set_checkpoint_at(Some(StopAt::Insns(4_000)));
    assert_eq!(through.m.run(Some(10_000_000)).unwrap(), End::Checkpoint);
    assert_eq!(through.m.run(Some(10_000_000)).unwrap(), End::PowerOff(9));

    let mut saved = rig(2, program, false);
    saved.m.set_checkpoint_at(Some(StopAt::Insns(4_000)));
    assert_eq!(saved.m.run(Some(10_000_000)).unwrap(), End::Checkpoint);
    assert_eq!(saved.m.instructions(), 4_000);
    let mut sections = Sections::new();
    saved.m.save(&mut sections, true).unwrap();

    let mut restored = rig(2, |_| vec![], false);
    restored.m.restore(&sections, true, true).unwrap();
    assert_eq!(restored.m.instructions(), 4_000);
    assert_eq!(restored.m.run(Some(10_000_000)).unwrap(), End::PowerOff(9));
    assert_eq!(
        *restored.out.0.lock().unwrap(),
        *through.out.0.lock().unwrap()
    );
    assert_eq!(restored.m.instructions(), through.m.instructions());
    for h in 0..2 {
        assert_eq!(restored.m.harts()[h].x, through.m.harts()[h].x);
        assert_eq!(restored.m.cores()[h].cycles, through.m.cores()[h].cycles);
    }

    // A machine of another hart count refuses it.
    let mut other = rig(1, |_| vec![], false);
    assert!(other.m.restore(&sections, true, true).is_err());
}

/// Pauses ([`End::Pause`]) come at the end of the turn that reaches their
/// count and change nothing that follows.
#[test]
fn pauses_change_nothing() {
    let mut through = rig(2, countdown_program, true);
    assert_eq!(through.m.run(Some(10_000_000)).unwrap(), End::PowerOff(9));
    let mut paused = rig(2, countdown_program, true);
    for at in [1, 2_500, 5_000] {
        paused.m.set_pause_at(Some(at));
        assert_eq!(paused.m.run(Some(10_000_000)).unwrap(), End::Pause);
        assert!(paused.m.instructions() >= at);
    }
    assert_eq!(paused.m.run(Some(10_000_000)).unwrap(), End::PowerOff(9));
    assert_eq!(paused.m.instructions(), through.m.instructions());
    for h in 0..2 {
        assert_eq!(paused.m.harts()[h].x, through.m.harts()[h].x);
        assert_eq!(paused.m.cores()[h].cycles, through.m.cores()[h].cycles);
    }
}
