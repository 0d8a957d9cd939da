//! Hand-worked command timelines, the paper's cases, and property tests.
//!
//! Unless a test says otherwise the controller is freedom-u500's DDR3-1600
//! behind a 200 MHz controller (`rvnvmm_config::ControllerConfig::default()`:
//! no tFAW, no refresh), in DRAM clocks of 1.25 ns:
//! tCL 13.75, tCWL 10, tBURST 5, tRCD 13.75, tRP 13.75, tRAS 35, tRTP 7.5,
//! tWR 15, tCCD 5, tRRD 6.25 (6 ns rounded up to 5 tCK); requests and read
//! data on 5 ns controller-clock edges. NVMM (seed 000 §5): tRCD = tRP =
//! 1000, tRAS = 7000, coarse 1000/1000 ns.

use super::*;
use crate::method::{coarse::Coarse, fine::Fine, proposed::Proposed};
use crate::microbench::{banks, stride, BlockingCpu, Op};
use crate::schedule::write_watermarks;
use rvnvmm_config::{
    AddressMapping, ControllerConfig as CtrlCfg, KeepOpen, Method, Refresh, TrpOn,
};
use CommandKind::*;

const NS: Ps = 1000;
const DRAM: u64 = 0x8000_0000;
const NVMM: u64 = 0xC000_0000;
const ROW: u64 = 8192;
const BANK: u64 = 512 << 20;

fn params(m: Method) -> NvmmParams {
    NvmmParams {
        method: m,
        ..NvmmParams::default()
    }
}

fn regions(m: Method) -> Vec<(String, u64, u64, Option<NvmmParams>)> {
    vec![
        ("dram".into(), DRAM, 1 << 30, None),
        ("nvmm".into(), NVMM, 3 << 30, Some(params(m))),
    ]
}

fn with_cfg(cfg: &CtrlCfg, m: Method) -> Controller {
    let mut c = Controller::new("ddr3", cfg, &regions(m)).unwrap();
    c.set_trace(true);
    c
}

fn ctrl(m: Method) -> Controller {
    with_cfg(&CtrlCfg::default(), m)
}

/// The trace as (command, time in ps, bank, row).
fn trace(c: &mut Controller) -> Vec<(CommandKind, Ps, u32, u64)> {
    c.take_trace()
        .into_iter()
        .map(|x| (x.kind, x.at, x.bank, x.row))
        .collect()
}

/// The trace as (command, time in ps), for single-bank cases.
fn times(c: &mut Controller) -> Vec<(CommandKind, Ps)> {
    trace(c).into_iter().map(|x| (x.0, x.1)).collect()
}

fn stats(c: &Controller, name: &str) -> RegionStats {
    c.stats().into_iter().find(|s| s.name == name).unwrap()
}

fn no_refresh_cpu() -> BlockingCpu {
    BlockingCpu::freedom_u500()
}

// ---------------------------------------------------------------------
// Configuration, quantisation, address mapping
// ---------------------------------------------------------------------

#[test]
fn quantisation_to_dram_and_controller_clocks() {
    let t = Timing::new(&CtrlCfg::default()).unwrap();
    assert_eq!((t.tck, t.clk), (1250, 5000));
    assert_eq!(
        (t.cl, t.cwl, t.burst, t.rcd, t.rp, t.ras),
        (13_750, 10_000, 5_000, 13_750, 13_750, 35_000)
    );
    assert_eq!((t.rtp, t.wr, t.ccd, t.rrd), (7_500, 15_000, 5_000, 6_250));
    // NVMM latencies to 5 ns: zc706's 1013.75 becomes 1015.
    let p = NvmmParams {
        method: Method::Proposed,
        trcd_ns: 1013.75,
        trp_ns: 1001.0,
        tras_ns: 7000.0,
        coarse_read_ns: 2.0,
        coarse_write_ns: 0.0,
        ..NvmmParams::default()
    };
    let spec = t.spec();
    let e = Proposed::new(&p, &spec);
    assert_eq!(
        (e.fine.rcd, e.fine.rp_dirty, e.fine.rp_clean, e.ras),
        (1_015_000, 1_005_000, 13_750, 7_000_000)
    );
    assert_eq!(e.restart, None);
    let e = Proposed::new(
        &NvmmParams {
            keep_open: KeepOpen::RestartAtAccess,
            ..p.clone()
        },
        &spec,
    );
    assert_eq!(e.restart, Some(7_000_000 - 1_015_000));
    let coarse = Coarse::new(&p, &spec);
    assert_eq!((coarse.read, coarse.write), (5_000, 0));
    let fine = Fine::new(&p, &spec);
    assert_eq!((fine.rcd, fine.rp_dirty), (1_015_000, 1_005_000));
    // Every method's row timing as the controller sees it.
    for (m, rcd, ras) in [
        (Method::Coarse, 13_750, 35_000),
        (Method::Fine, 1_015_000, 35_000),
        (Method::Proposed, 1_015_000, 7_000_000),
    ] {
        let p = NvmmParams {
            method: m,
            ..p.clone()
        };
        let rules = RowRules::of(
            method::build(m.as_str(), "nvmm", &p, &spec)
                .unwrap()
                .as_mut(),
            &spec,
        );
        assert_eq!((rules.rcd, rules.ras), (rcd, ras), "{m}");
    }
}

#[test]
fn decode_bank_row_column_and_others() {
    let c = ctrl(Method::Proposed);
    let l = |a| {
        let x = c.decode(a);
        (x.rank, x.bank, x.row, x.column)
    };
    assert_eq!(l(DRAM), (0, 0, 0, 0));
    assert_eq!(l(NVMM), (0, 2, 0, 0)); // the NVMM region starts at bank 2
    assert_eq!(l(NVMM + ROW), (0, 2, 1, 0));
    assert_eq!(l(NVMM + 4096), (0, 2, 0, 512));
    assert_eq!(l(NVMM + 64), (0, 2, 0, 8));
    assert_eq!(l(DRAM + 7 * BANK + 5 * ROW), (0, 7, 5, 0));
    // Wraps at the 4 GiB capacity and below the window base, never panics.
    assert_eq!(l(DRAM + (4 << 30)), (0, 0, 0, 0));
    assert_eq!(l(0), l(DRAM + (2 << 30)));

    let rbc = CtrlCfg {
        mapping: AddressMapping::RowBankColumn,
        ..CtrlCfg::default()
    };
    let c = with_cfg(&rbc, Method::Fine);
    let x = c.decode(DRAM + ROW);
    assert_eq!((x.bank, x.row), (1, 0));
    let x = c.decode(DRAM + 8 * ROW + 3 * ROW);
    assert_eq!((x.bank, x.row), (3, 1));

    let custom = CtrlCfg {
        mapping: AddressMapping::parse("row:13-bank-row:2-column").unwrap(),
        ranks: 2,
        rows: 32768,
        ..CtrlCfg::default()
    };
    let c = with_cfg(&custom, Method::Fine);
    // rank(1) row:13 bank(3) row:2 column(10) offset(3), 32 bits
    let a = (1u64 << 31) | (5 << 18) | (6 << 15) | (2 << 13) | (7 << 3);
    let x = c.decode(DRAM + a);
    assert_eq!((x.rank, x.bank, x.row, x.column), (1, 6, (5 << 2) | 2, 7));
}

#[test]
fn constructor_errors_say_what_is_wrong() {
    let cfg = CtrlCfg::default();
    let e = Controller::new("x", &cfg, &[]).unwrap_err().to_string();
    assert!(e.contains("serves no region"), "{e}");
    let bad = CtrlCfg {
        trcd_ns: 0.0,
        ..cfg.clone()
    };
    let e = Controller::new("x", &bad, &regions(Method::Fine))
        .unwrap_err()
        .to_string();
    assert!(e.contains("trcd_ns") && e.contains("positive"), "{e}");
    let bad = CtrlCfg {
        banks: 6,
        ..cfg.clone()
    };
    assert!(Controller::new("x", &bad, &regions(Method::Fine)).is_err());
    let bad = CtrlCfg {
        refresh: Some(Refresh {
            trefi_ns: 100.0,
            trfc_ns: 200.0,
            ..Refresh::default()
        }),
        ..cfg.clone()
    };
    let e = Controller::new("x", &bad, &regions(Method::Fine)).unwrap_err();
    assert!(
        matches!(&e, DramError::Setup { problem, .. } if matches!(**problem, DramError::RefreshTooLong { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("trfc_ns"), "{e}");
    let mut r = regions(Method::Fine);
    r[1].3.as_mut().unwrap().trp_ns = f64::NAN;
    let e = Controller::new("x", &cfg, &r).unwrap_err().to_string();
    assert!(e.contains("memory.nvmm.trp_ns"), "{e}");
    let e = Controller::from_config(&Config::default(), "nope").unwrap_err();
    assert_eq!(
        e,
        DramError::UnknownController {
            name: "nope".into(),
            known: vec!["ddr3".into()]
        }
    );
    assert!(e.to_string().contains("ddr3"), "{e}");
}

#[test]
fn shipped_configs_build() {
    let c = Controller::from_config(&Config::default(), "ddr3").unwrap();
    let names: Vec<String> = c.stats().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["dram", "nvmm"]);
    let zc = Config::load(Some("zc706"), &[]).unwrap();
    let ps = Controller::from_config(&zc, "ps-ddr3").unwrap();
    let pl = Controller::from_config(&zc, "pl-ddr3").unwrap();
    assert_eq!(ps.stats()[0].name, "dram");
    assert_eq!(pl.stats()[0].name, "nvmm");
    assert_eq!(ps.t.clk, 1875);
    // pl-ddr3 serves only the NVMM region: its window starts at its base.
    assert_eq!(pl.decode(0xC000_0000).bank, 0);
    assert_eq!(pl.method("nvmm"), Some("fine"));
    let mut pl = pl;
    let spec = pl.spec;
    assert_eq!(
        RowRules::of(pl.regions[0].method.as_mut(), &spec).rcd,
        1_015_000
    );
}

// ---------------------------------------------------------------------
// DRAM timelines
// ---------------------------------------------------------------------

#[test]
fn dram_miss_on_closed_bank() {
    let mut c = ctrl(Method::Proposed);
    // ACT 100, RD 113.75 (tRCD), data 127.5..132.5, out on the 5 ns edge.
    assert_eq!(c.read(DRAM, 100 * NS), 135_000);
    c.advance(1_000 * NS);
    // Automatic precharge at max(ACT + tRAS, RD + tRTP) = 135.
    assert_eq!(
        times(&mut c),
        [(Act, 100_000), (Rd, 113_750), (Pre, 135_000)]
    );
    let s = stats(&c, "dram");
    assert_eq!((s.reads, s.acts, s.row_hits), (1, 1, 0));
    assert_eq!(s.read_latency_ps_sum, 35_000);
}

#[test]
fn dram_row_hit() {
    let mut c = ctrl(Method::Proposed);
    c.read(DRAM, 100 * NS);
    // Arrives at 120 < 135 (the automatic PRE): the row is open. RD at 120,
    // data ends 138.75 -> 140: 20 ns.
    assert_eq!(c.read(DRAM + 64, 120 * NS), 140_000);
    c.advance(1_000 * NS);
    assert_eq!(
        times(&mut c),
        [(Act, 100_000), (Rd, 113_750), (Rd, 120_000), (Pre, 135_000)]
    );
    let s = stats(&c, "dram");
    assert_eq!((s.acts, s.row_hits), (1, 1));
    assert_eq!(s.row_hit_rate(), 0.5);
    assert_eq!(s.act_per_req(), 0.5);
}

#[test]
fn dram_row_conflict_waits_tras_then_trp() {
    let mut c = ctrl(Method::Proposed);
    c.read(DRAM, 100 * NS);
    // Another row of bank 0 at 120: PRE at ACT + tRAS = 135, ACT at 148.75,
    // RD 162.5, data end 181.25 -> 185.
    assert_eq!(c.read(DRAM + ROW, 120 * NS), 185_000);
    assert_eq!(
        trace(&mut c),
        [
            (Act, 100_000, 0, 0),
            (Rd, 113_750, 0, 0),
            (Pre, 135_000, 0, 0),
            (Act, 148_750, 0, 1),
            (Rd, 162_500, 0, 1),
        ]
    );
}

#[test]
fn back_to_back_reads_same_row_keep_tccd() {
    let mut c = ctrl(Method::Proposed);
    assert_eq!(c.read(DRAM, 100 * NS), 135_000);
    // Same time, same row: a hit, but the second RD waits tCCD (5 ns).
    assert_eq!(c.read(DRAM + 64, 100 * NS), 140_000);
    assert_eq!(
        times(&mut c),
        [(Act, 100_000), (Rd, 113_750), (Rd, 118_750)]
    );
}

#[test]
fn back_to_back_reads_different_banks_overlap() {
    let mut c = ctrl(Method::Proposed);
    assert_eq!(c.read(DRAM, 100 * NS), 135_000);
    // Bank 1: ACT tRRD (6.25 ns) after bank 0's, RD at 120 (tRCD), which
    // also keeps tCCD to bank 0's RD at 113.75; data end 138.75 -> 140.
    assert_eq!(c.read(DRAM + BANK, 100 * NS), 140_000);
    assert_eq!(
        trace(&mut c),
        [
            (Act, 100_000, 0, 0),
            (Act, 106_250, 1, 0),
            (Rd, 113_750, 0, 0),
            (Rd, 120_000, 1, 0),
        ]
    );
}

#[test]
fn tfaw_limits_four_activates() {
    let cfg = CtrlCfg {
        tfaw_ns: Some(30.0),
        ..CtrlCfg::default()
    };
    let mut c = with_cfg(&cfg, Method::Fine);
    for b in 0..5 {
        c.read(DRAM + b * BANK, 100 * NS);
    }
    let acts: Vec<Ps> = trace(&mut c)
        .into_iter()
        .filter(|x| x.0 == Act)
        .map(|x| x.1)
        .collect();
    // tRRD 6.25 apart, the fifth waits for the first + tFAW (30).
    assert_eq!(acts, [100_000, 106_250, 112_500, 118_750, 130_000]);
}

#[test]
fn automatic_precharge_hides_locality_from_a_slow_cpu() {
    let mut c = ctrl(Method::Fine);
    c.read(DRAM, 100 * NS);
    // 2 µs later the same row was closed long ago (seed 000 Fig. 2).
    assert_eq!(c.read(DRAM + 64, 2_100 * NS), 2_135_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 113_750),
            (Pre, 135_000),
            (Act, 2_100_000),
            (Rd, 2_113_750)
        ]
    );
    assert_eq!(stats(&c, "dram").acts, 2);
}

#[test]
fn requests_from_the_past_arrive_now() {
    let mut a = ctrl(Method::Fine);
    let mut b = ctrl(Method::Fine);
    a.read(DRAM, 10_000 * NS);
    b.read(DRAM, 10_000 * NS);
    // A CPU whose clock lags: treated as arriving at 10 µs.
    let late = a.read(DRAM + BANK, 5_000 * NS);
    let on_time = b.read(DRAM + BANK, 10_000 * NS);
    assert_eq!(late, on_time);
    assert_eq!(a.now(), 10_000 * NS);
    assert_eq!(stats(&a, "dram"), stats(&b, "dram"));
}

// ---------------------------------------------------------------------
// coarse
// ---------------------------------------------------------------------

#[test]
fn coarse_holds_requests_at_the_input() {
    let mut c = ctrl(Method::Coarse);
    // Held 1000 ns, then DRAM timing: ACT 1100, RD 1113.75, out 1135.
    assert_eq!(c.read(NVMM, 100 * NS), 1_135_000);
    assert_eq!(times(&mut c), [(Act, 1_100_000), (Rd, 1_113_750)]);
    assert_eq!(stats(&c, "nvmm").read_latency_ps_sum, 1_035_000);
    // A write is accepted after its 1000 ns hold: that is what the writer waits.
    assert_eq!(c.write(NVMM + 3 * BANK, 2_000 * NS), 3_000_000);
    assert_eq!(stats(&c, "nvmm").write_wait_ps_sum, 1_000_000);
    // DRAM requests are not delayed...
    assert_eq!(c.read(DRAM, 4_000 * NS), 4_035_000);
}

#[test]
fn coarse_hold_blocks_the_channel_behind_it() {
    let mut c = ctrl(Method::Coarse);
    c.read(NVMM, 100 * NS); // held until 1100
                            // A DRAM read arriving at 200 waits behind the held handshake (AXI is
                            // in order), then runs at DRAM timing: ACT tRRD after the NVMM read's
                            // (1106.25), RD 1120, data end 1138.75 -> 1140.
    assert_eq!(c.read(DRAM, 200 * NS), 1_140_000);
    // Two NVMM reads in a row are held one after the other.
    let mut c = ctrl(Method::Coarse);
    c.read(NVMM, 100 * NS);
    assert_eq!(c.read(NVMM + BANK, 100 * NS), 2_135_000);
}

// ---------------------------------------------------------------------
// fine
// ---------------------------------------------------------------------

#[test]
fn fine_trcd_is_the_nvmm_read_latency() {
    let mut c = ctrl(Method::Fine);
    // ACT 100, RD 1100, data end 1118.75 -> 1120.
    assert_eq!(c.read(NVMM, 100 * NS), 1_120_000);
    c.advance(3_000 * NS);
    // Clean row: automatic PRE at RD + tRTP (tRAS long satisfied).
    assert_eq!(
        times(&mut c),
        [(Act, 100_000), (Rd, 1_100_000), (Pre, 1_107_500)]
    );
}

#[test]
fn fine_trp_is_stretched_only_for_a_dirty_row() {
    // Clean: read row 0, then a read of row 1 arrives while row 0 is open.
    let mut c = ctrl(Method::Fine);
    c.read(NVMM, 100 * NS);
    assert_eq!(c.read(NVMM + ROW, 200 * NS), 2_140_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 1_100_000),
            (Pre, 1_107_500),
            (Act, 1_121_250), // + DRAM tRP 13.75
            (Rd, 2_121_250),
        ]
    );
    // Dirty: write row 0 (posted), then read row 1.
    let mut c = ctrl(Method::Fine);
    assert_eq!(c.write(NVMM, 100 * NS), 100_000);
    assert_eq!(c.read(NVMM + ROW, 200 * NS), 3_150_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Wr, 1_100_000),
            (Pre, 1_130_000), // WR + tCWL + tBURST + tWR
            (Act, 2_130_000), // + NVMM tRP 1000: the write-back to the cells
            (Rd, 3_130_000),
        ]
    );
    c.advance(10_000 * NS);
    let s = stats(&c, "nvmm");
    // Write latency: issue (100) -> data in cells (PRE + tRP = 2130).
    assert_eq!((s.writes_done, s.write_latency_ps_sum), (1, 2_030_000));
    assert_eq!(s.write_wait_ps_sum, 0);
}

#[test]
fn fine_with_trp_on_always_stretches_every_precharge() {
    // Seed 001's modified MIG: the clean row 0 also takes the NVMM tRP
    // before row 1 can open (compare the first case above: ACT at 1121.25).
    let mut c = ctrl(Method::Fine);
    let p = NvmmParams {
        trp_on: TrpOn::Always,
        ..c.nvmm("nvmm").unwrap().clone()
    };
    c.set_nvmm("nvmm", p).unwrap();
    c.read(NVMM, 100 * NS);
    assert_eq!(c.read(NVMM + ROW, 200 * NS), 3_130_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 1_100_000),
            (Pre, 1_107_500),
            (Act, 2_107_500), // + NVMM tRP 1000 although the row was clean
            (Rd, 3_107_500),
        ]
    );
}

// ---------------------------------------------------------------------
// proposed
// ---------------------------------------------------------------------

#[test]
fn proposed_keeps_the_row_open_for_tras() {
    let mut c = ctrl(Method::Proposed);
    assert_eq!(c.read(NVMM, 100 * NS), 1_120_000);
    // 2 µs after the data: still open (PRE not before ACT + 7000 = 7100).
    assert_eq!(c.read(NVMM + 4096, 3_120 * NS), 3_140_000);
    // Another row of the same bank: waits out tRAS, PRE (clean: 13.75), ACT.
    assert_eq!(c.read(NVMM + ROW, 5_140 * NS), 8_135_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 1_100_000),
            (Rd, 3_120_000),
            (Pre, 7_100_000),
            (Act, 7_113_750),
            (Rd, 8_113_750),
        ]
    );
    let s = stats(&c, "nvmm");
    assert_eq!((s.reads, s.acts, s.row_hits), (3, 2, 1));
}

#[test]
fn proposed_other_banks_overlap_the_tras_wait() {
    let mut c = ctrl(Method::Proposed);
    c.read(NVMM, 100 * NS);
    c.read(NVMM + BANK, 1_200 * NS);
    // Row conflicts in two banks wait out their own tRAS in parallel.
    let a = c.read(NVMM + ROW, 2_000 * NS);
    let b = c.read(NVMM + BANK + ROW, 2_100 * NS);
    assert_eq!(a, 8_135_000); // ACT 100 + 7000 + tRP 13.75 + tRCD 1000 + 18.75
    assert_eq!(b, 9_235_000); // ACT 1200 + the same
}

#[test]
fn proposed_write_then_read_same_bank() {
    let mut c = ctrl(Method::Proposed);
    c.write(NVMM, 100 * NS);
    // The dirty row stays open 7000 ns, then takes the NVMM tRP to write
    // back: ACT 100, WR 1100, PRE 7100, ACT 8100, RD 9100.
    assert_eq!(c.read(NVMM + ROW, 200 * NS), 9_120_000);
    c.finish();
    let s = stats(&c, "nvmm");
    assert_eq!(s.write_latency_ps_sum, 8_000_000); // 100 -> 7100 + 1000
}

#[test]
fn fig8_sequence_text_rule() {
    // Seed 000 Fig. 8 with the freedom-u500 bus (800 ns each way) and 200 ns
    // of loop overhead: CPU-seen latencies of a stride-4096 read loop.
    let mut c = ctrl(Method::Proposed);
    let mut cpu = no_refresh_cpu();
    let l: Vec<Ps> = (0..6)
        .map(|i| cpu.read(&mut c, NVMM + i * 4096) / NS)
        .collect();
    // first miss (bank closed), hit ~1600 as in Fig. 8, then misses that
    // only wait for the rest of the first ACT's tRAS.
    assert_eq!(l, [2620, 1620, 4995, 1620, 4995, 1620]);
    // Stride 8192: every access a row conflict, tRAS + tRP apart.
    let mut c = ctrl(Method::Proposed);
    let mut cpu = no_refresh_cpu();
    let l: Vec<Ps> = (0..4)
        .map(|i| cpu.read(&mut c, NVMM + i * ROW) / NS)
        .collect();
    // (6810: the 5 ns output edge falls differently as ACTs drift by 13.75)
    assert_eq!(l, [2620, 6815, 6815, 6810]);
}

#[test]
fn fig8_sequence_restart_window() {
    // The keep-open window restarting at each access: a miss costs the same
    // after a hit as after a miss (Fig. 8's "~6000 ns" in both places).
    let mut c = ctrl(Method::Proposed);
    c.set_keep_open(KeepOpen::RestartAtAccess);
    let mut cpu = no_refresh_cpu();
    let l: Vec<Ps> = (0..6)
        .map(|i| cpu.read(&mut c, NVMM + i * 4096) / NS)
        .collect();
    assert_eq!(l, [2620, 1620, 6815, 1620, 6815, 1620]);
    let mut c = ctrl(Method::Proposed);
    c.set_keep_open(KeepOpen::RestartAtAccess);
    let mut cpu = no_refresh_cpu();
    let l: Vec<Ps> = (0..4)
        .map(|i| cpu.read(&mut c, NVMM + i * ROW) / NS)
        .collect();
    assert_eq!(l, [2620, 6815, 6815, 6810]);
}

fn stride_avg(m: Method, keep: KeepOpen, s: u64, op: Op) -> f64 {
    let mut c = ctrl(m);
    c.set_keep_open(keep);
    stride(&mut c, &mut no_refresh_cpu(), NVMM, s, 400, op)
}

#[test]
fn stride_ratio_worked_out_by_hand() {
    // The hand calculation: with the text's rule a blocking CPU
    // gets 0.5, since back-to-back row misses are tRAS + tRP apart whatever
    // the stride; coarse and fine cannot show locality at all.
    let r = |m, keep| stride_avg(m, keep, 4096, Op::Read) / stride_avg(m, keep, 8192, Op::Read);
    let p = r(Method::Proposed, KeepOpen::FromAct);
    assert!((p - 0.5).abs() < 0.01, "proposed {p}");
    for m in [Method::Coarse, Method::Fine] {
        let x = r(m, KeepOpen::FromAct);
        assert!((0.85..=1.0).contains(&x), "{m}: {x}");
    }
    // Absolute: 8192 is tRAS + tRP per access; 4096 half of it.
    let a = stride_avg(Method::Proposed, KeepOpen::FromAct, 8192, Op::Read);
    assert!((a - 7013.75).abs() < 15.0, "{a}");
    // The restarting window: ~0.63, near the paper's 0.67.
    let q = r(Method::Proposed, KeepOpen::RestartAtAccess);
    assert!((0.6..0.67).contains(&q), "restart {q}");
}

#[test]
fn proposed_write_latency_is_a_multiple_of_read_latency() {
    let w = Op::Write { ways: 4 };
    for s in [4096, 8192] {
        let rd = stride_avg(Method::Proposed, KeepOpen::FromAct, s, Op::Read);
        let wr = stride_avg(Method::Proposed, KeepOpen::FromAct, s, w);
        let x = wr / stride_avg(Method::Proposed, KeepOpen::FromAct, 8192, Op::Read);
        assert!((1.5..=3.5).contains(&x), "stride {s}: write {wr} read {rd}");
    }
    // At one bank (stride 8192, all in one bank) as in the issue: 2-3.5x.
    let rd = stride_avg(Method::Proposed, KeepOpen::FromAct, 8192, Op::Read);
    let wr = stride_avg(Method::Proposed, KeepOpen::FromAct, 8192, w);
    assert!((2.0..=3.5).contains(&(wr / rd)), "{wr} / {rd}");
}

#[test]
fn shipped_freedom_u500_with_refresh() {
    // The config as shipped refreshes every 7.8 µs; the refresh closes rows
    // at the DDR3 spec timing, cutting some tRAS waits short. Locality and
    // bank parallelism stay visible, within the bands.
    let run = |m: Method, f: &dyn Fn(&mut Controller) -> f64| {
        let mut cfg = Config::default();
        cfg.memory
            .regions
            .get_mut("nvmm")
            .unwrap()
            .nvmm
            .as_mut()
            .unwrap()
            .method = m;
        let mut c = Controller::from_config(&cfg, "ddr3").unwrap();
        f(&mut c)
    };
    let st = |s: u64, op: Op| {
        move |c: &mut Controller| stride(c, &mut no_refresh_cpu(), NVMM, s, 600, op)
    };
    let bk = |n: u64, op: Op| {
        move |c: &mut Controller| banks(c, &mut no_refresh_cpu(), NVMM, BANK, n, ROW, 600 / n, op)
    };
    let p4 = run(Method::Proposed, &st(4096, Op::Read));
    let p8 = run(Method::Proposed, &st(8192, Op::Read));
    assert!((0.45..=0.80).contains(&(p4 / p8)), "{p4} / {p8}");
    for m in [Method::Coarse, Method::Fine] {
        let r = run(m, &st(4096, Op::Read)) / run(m, &st(8192, Op::Read));
        assert!((0.85..=1.0).contains(&r), "{m}: {r}");
    }
    let b1 = run(Method::Proposed, &bk(1, Op::Read));
    let b4 = run(Method::Proposed, &bk(4, Op::Read));
    assert!(b4 <= 0.55 * b1, "{b1} -> {b4}");
    let w = Op::Write { ways: 4 };
    let w1 = run(Method::Proposed, &bk(1, w));
    let w6 = run(Method::Proposed, &bk(6, w));
    assert!(w6 <= 0.5 * w1, "{w1} -> {w6}");
    let wr = run(Method::Proposed, &st(8192, w));
    assert!((2.0..=3.5).contains(&(wr / p8)), "{wr} / {p8}");
}

fn bank_avg(m: Method, nbank: u64, op: Op) -> f64 {
    let mut c = ctrl(m);
    banks(
        &mut c,
        &mut no_refresh_cpu(),
        NVMM,
        BANK,
        nbank,
        ROW,
        120,
        op,
    )
}

#[test]
fn bank_parallelism_reads() {
    let p: Vec<f64> = (1..=4)
        .map(|n| bank_avg(Method::Proposed, n, Op::Read))
        .collect();
    // 1 bank: tRAS + tRP per access; 2 banks overlap their tRAS waits; from 3
    // banks on a bank's next access comes after its tRAS anyway. (Averages
    // include the cheaper first access of each bank.)
    assert!((p[0] - 7013.75).abs() < 0.01 * 7013.75, "{p:?}");
    assert!((p[1] - 7013.75 / 2.0).abs() < 0.01 * 3506.9, "{p:?}");
    assert!(
        (p[2] - 2820.0).abs() < 15.0 && (p[3] - 2820.0).abs() < 15.0,
        "{p:?}"
    );
    assert!(p[3] <= 0.55 * p[0], "falls by at least 45%: {p:?}");
    for m in [Method::Coarse, Method::Fine] {
        let v: Vec<f64> = (1..=4).map(|n| bank_avg(m, n, Op::Read)).collect();
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, 0f64), |a, &x| (a.0.min(x), a.1.max(x)));
        assert!(hi / lo < 1.1, "{m}: {v:?}");
    }
}

#[test]
fn bank_parallelism_writes() {
    let w = Op::Write { ways: 4 };
    let p: Vec<f64> = (1..=6).map(|n| bank_avg(Method::Proposed, n, w)).collect();
    let best = p[1..].iter().cloned().fold(f64::MAX, f64::min);
    assert!(best <= 0.5 * p[0], "falls by at least 50%: {p:?}");
    let c: Vec<f64> = (1..=6).map(|n| bank_avg(Method::Coarse, n, w)).collect();
    assert!(
        c.iter().all(|&x| (x - c[0]).abs() < 0.05 * c[0]),
        "coarse flat: {c:?}"
    );
}

// ---------------------------------------------------------------------
// Queues, FR-FCFS, refresh, control
// ---------------------------------------------------------------------

#[test]
fn posted_writes_wait_only_for_queue_space() {
    let cfg = CtrlCfg {
        write_queue: 2,
        ..CtrlCfg::default()
    };
    let mut c = with_cfg(&cfg, Method::Proposed);
    // Three writes to rows of one bank at once. Two fit in the queue; the
    // third waits until the first leaves it (its WR at 1100).
    assert_eq!(c.write(NVMM, 100 * NS), 100_000);
    assert_eq!(c.write(NVMM + ROW, 100 * NS), 100_000);
    assert_eq!(c.queued_writes(), 2);
    assert_eq!(c.write(NVMM + 2 * ROW, 100 * NS), 1_100_000);
    let end = c.finish();
    // Each dirty row: 7000 open, then 1000 to write back.
    assert_eq!(end, 100_000 + 3 * 8_000_000);
    let t = times(&mut c);
    assert_eq!(
        t.iter()
            .filter(|x| x.0 == Act)
            .map(|x| x.1)
            .collect::<Vec<_>>(),
        [100_000, 8_100_000, 16_100_000]
    );
    let s = stats(&c, "nvmm");
    assert_eq!((s.writes, s.writes_done), (3, 3));
    assert_eq!(s.write_wait_ps_sum, 1_000_000);
    assert_eq!(
        s.write_latency_ps_sum,
        (8_000_000 + 16_000_000 + 24_000_000) as u64
    );
    assert!((s.avg_write_latency_ns() - 16_000.0).abs() < 1e-9);
}

#[test]
fn read_hitting_a_queued_write_is_forwarded() {
    let mut c = ctrl(Method::Proposed);
    c.read(NVMM, 100 * NS); // opens row 0 until 7100
    c.write(NVMM + ROW + 64, 200 * NS); // row 1: queued behind tRAS
                                        // Read of the same line: answered from the write queue, one clock later.
    assert_eq!(c.read(NVMM + ROW + 64, 300 * NS), 305_000);
    // Another line of row 1 is not forwarded: it waits like the write.
    let s = stats(&c, "nvmm");
    assert_eq!((s.reads, s.forwarded, s.acts), (2, 1, 1));
}

#[test]
fn fr_fcfs_row_hit_overtakes_older_conflict() {
    let mut c = ctrl(Method::Proposed);
    c.read(NVMM, 100 * NS); // row 0 open until 7100
    c.write(NVMM + ROW, 2_000 * NS); // row 1: must wait for tRAS
                                     // A later read of row 0 is a hit and goes first.
    assert_eq!(c.read(NVMM + 64, 3_000 * NS), 3_020_000);
    c.finish();
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 1_100_000),
            (Rd, 3_000_000),
            (Pre, 7_100_000),
            (Act, 7_113_750),
            (Wr, 8_113_750),
            (Pre, 14_113_750), // dirty row: ACT + tRAS
        ]
    );
}

#[test]
fn fcfs_keeps_arrival_order_even_for_a_row_hit() {
    // The case above under `scheduler = "fcfs"`: the older write to row 1
    // goes first, so the later read of row 0 finds its row closed.
    let cfg = CtrlCfg {
        scheduler: rvnvmm_config::Scheduler::Fcfs,
        ..CtrlCfg::default()
    };
    let mut c = with_cfg(&cfg, Method::Proposed);
    c.read(NVMM, 100 * NS);
    c.write(NVMM + ROW, 2_000 * NS);
    assert_eq!(c.read(NVMM + 64, 3_000 * NS), 16_135_000);
    c.finish();
    assert_eq!(
        times(&mut c),
        [
            (Act, 100_000),
            (Rd, 1_100_000),
            (Pre, 7_100_000),
            (Act, 7_113_750),
            (Wr, 8_113_750),
            (Pre, 14_113_750),
            (Act, 15_113_750), // after the dirty row's NVMM tRP
            (Rd, 16_113_750),
            (Pre, 22_113_750),
        ]
    );
}

fn read_first() -> Controller {
    let cfg = CtrlCfg {
        scheduler: rvnvmm_config::Scheduler::ReadFirst,
        ..CtrlCfg::default()
    };
    with_cfg(&cfg, Method::Fine)
}

/// The rows of bank `bank` in the order they were activated.
fn act_rows(c: &mut Controller, bank: u32) -> Vec<u64> {
    trace(c)
        .into_iter()
        .filter(|x| x.0 == Act && x.2 == bank)
        .map(|x| x.3)
        .collect()
}

#[test]
fn read_first_lets_a_read_pass_a_buffered_write() {
    // A write-back to row 1 posted just before a fill of row 2, same bank.
    // FR-FCFS starts the write at once (the bank was idle), and the read
    // waits for its row cycle; read-first holds the write in the queue.
    let mut fr = ctrl(Method::Fine);
    fr.write(DRAM + ROW, 100 * NS);
    // WR 113.75, data end 128.75, + tWR, PRE 143.75, ACT 157.5, RD 171.25.
    assert_eq!(fr.read(DRAM + 2 * ROW, 105 * NS), 190 * NS);
    fr.finish();
    assert_eq!(act_rows(&mut fr, 0), [1, 2]);

    let mut c = read_first();
    assert_eq!(c.write(DRAM + ROW, 100 * NS), 100 * NS);
    // ACT 105, RD + tRCD 13.75, data after CL 13.75 + burst 5, on the
    // 5 ns controller clock.
    assert_eq!(c.read(DRAM + 2 * ROW, 105 * NS), 140 * NS);
    assert_eq!(c.queued_writes(), 1);
    // The write is written at the end (or when the queue fills).
    c.finish();
    assert_eq!(act_rows(&mut c, 0), [2, 1]);
    let s = stats(&c, "dram");
    assert_eq!((s.reads, s.writes, s.writes_done), (1, 1, 1));
}

#[test]
fn read_first_drains_from_the_high_to_the_low_watermark() {
    assert_eq!(write_watermarks(8), (7, 4));
    assert_eq!(write_watermarks(1), (1, 0));
    assert_eq!(write_watermarks(64), (55, 32));
    let mut c = read_first();
    for r in 1..=7 {
        c.write(DRAM + r * ROW, 100 * NS);
    }
    assert_eq!(c.queued_writes(), 7);
    // A read much later, in another bank: by then the full queue has
    // drained three writes (rows 1-3, oldest first) and stopped at four.
    let done = c.read(DRAM + BANK, 10_000 * NS);
    assert_eq!(done, 10_035 * NS);
    assert_eq!(c.queued_writes(), 4);
    assert_eq!(act_rows(&mut c, 0), [1, 2, 3]);
    c.finish();
    assert_eq!(stats(&c, "dram").writes_done, 7);
}

#[test]
fn fr_fcfs_oldest_first_among_misses() {
    let mut c = ctrl(Method::Fine);
    c.write(DRAM + ROW, 100 * NS);
    c.write(DRAM + 2 * ROW, 100 * NS);
    // Same bank, both misses: the older goes first.
    c.finish();
    let rows: Vec<u64> = trace(&mut c)
        .into_iter()
        .filter(|x| x.0 == Act)
        .map(|x| x.3)
        .collect();
    assert_eq!(rows, [1, 2]);
}

fn refresh_cfg() -> CtrlCfg {
    CtrlCfg {
        refresh: Some(Refresh::default()), // tREFI 7800, tRFC 260
        ..CtrlCfg::default()
    }
}

#[test]
fn refresh_closes_rows_and_blocks_trfc() {
    let mut c = with_cfg(&refresh_cfg(), Method::Fine);
    // Idle until 20 µs: only the last refresh (15.6 µs) matters.
    assert_eq!(c.read(DRAM, 20_000 * NS), 20_035_000);
    assert_eq!(
        times(&mut c),
        [(Ref, 15_600_000), (Act, 20_000_000), (Rd, 20_013_750)]
    );
    // An access just before the 23.4 µs refresh completes; the row it
    // opened is closed by the refresh (at ACT + tRAS), REF after tRP, and
    // the next access waits tRFC.
    c.read(DRAM + ROW, 23_395 * NS);
    assert_eq!(c.read(DRAM + ROW + 64, 23_420 * NS), 23_740_000);
    assert_eq!(
        times(&mut c),
        [
            (Pre, 20_035_000),
            (Act, 23_395_000),
            (Rd, 23_408_750),
            (Pre, 23_430_000),
            (Ref, 23_443_750),
            (Act, 23_703_750),
            (Rd, 23_717_500),
        ]
    );
}

#[test]
fn refresh_does_not_wait_for_a_stretched_tras() {
    let mut c = with_cfg(&refresh_cfg(), Method::Proposed);
    c.read(NVMM, 1_000 * NS); // row 0: PRE not before 8000 by tRAS
                              // The 7.8 µs refresh closes it at the spec timing, REF at 7813.75, the
                              // bank is back at 8073.75.
    assert_eq!(c.read(NVMM + ROW, 7_900 * NS), 9_095_000);
    assert_eq!(
        times(&mut c),
        [
            (Act, 1_000_000),
            (Rd, 2_000_000),
            (Pre, 7_800_000),
            (Ref, 7_813_750),
            (Act, 8_073_750),
            (Rd, 9_073_750),
        ]
    );
}

#[test]
fn refresh_postponed_while_a_row_is_open_then_issued_back_to_back() {
    let cfg = CtrlCfg {
        refresh: Some(Refresh {
            postpone_max: 2,
            ..Refresh::default()
        }),
        ..CtrlCfg::default()
    };
    let mut c = with_cfg(&cfg, Method::Proposed);
    // Row 0 is open until 8000 by tRAS: the 7.8 µs refresh is postponed,
    // and the row closes at its own time.
    c.read(NVMM, 1_000 * NS);
    assert_eq!(c.read(NVMM + ROW, 7_900 * NS), 9_035_000);
    // Row 2 (ACT 15027.5) is open over the 15.6 µs refresh: postponed
    // again. Row 3 opens at 23000, before the 23.4 µs refresh, which finds
    // two owed: it closes the row at the spec timing, then three REFs back
    // to back.
    assert_eq!(c.read(NVMM + 2 * ROW, 14_000 * NS), 16_050_000);
    assert_eq!(c.read(NVMM + 3 * ROW, 23_000 * NS), 24_020_000);
    c.advance(30_000 * NS);
    let t = times(&mut c);
    let refs: Vec<Ps> = t.iter().filter(|x| x.0 == Ref).map(|x| x.1).collect();
    // The row's RD (24000) was committed before the refresh was decided:
    // PRE at RD + tRTP, REF tRP later.
    assert_eq!(refs, [24_021_250, 24_281_250, 24_541_250]);
    assert!(t.contains(&(Pre, 8_000_000)));
    assert!(t.contains(&(Pre, 24_007_500)));
}

#[test]
fn refresh_after_an_automatic_precharge() {
    // fine: a dirty NVMM row auto-precharges at 1130 and writes back until
    // 2130; the refresh due at 7800 finds every bank closed and issues REF
    // at once, not after another PRE + NVMM tRP.
    let mut c = with_cfg(&refresh_cfg(), Method::Fine);
    c.write(NVMM, 100 * NS);
    c.advance(7_700 * NS);
    assert_eq!(c.read(NVMM + BANK, 7_900 * NS), 9_080_000);
    assert_eq!(
        trace(&mut c),
        [
            (Act, 100_000, 2, 0),
            (Wr, 1_100_000, 2, 0),
            (Pre, 1_130_000, 2, 0),
            (Ref, 7_800_000, 0, 0),
            (Act, 8_060_000, 3, 0),
            (Rd, 9_060_000, 3, 0),
        ]
    );
    // Same without the advance: the row is still "open" in the model when
    // the refresh is processed, and must close at its own 1130.
    let mut c = with_cfg(&refresh_cfg(), Method::Fine);
    c.write(NVMM, 100 * NS);
    c.read(NVMM + BANK, 7_900 * NS);
    let t = trace(&mut c);
    assert!(
        t.contains(&(Pre, 1_130_000, 2, 0)) && t.contains(&(Ref, 7_800_000, 0, 0)),
        "{t:?}"
    );
}

#[test]
fn advance_runs_posted_writes_and_precharges() {
    let mut c = ctrl(Method::Fine);
    c.write(NVMM, 100 * NS);
    c.advance(50 * NS);
    assert!(trace(&mut c).is_empty());
    c.advance(1_200 * NS);
    assert_eq!(
        times(&mut c),
        [(Act, 100_000), (Wr, 1_100_000), (Pre, 1_130_000)]
    );
    assert_eq!(stats(&c, "nvmm").writes_done, 1);
    // advance to the end of time terminates and stays total.
    c.advance(Ps::MAX);
    c.read(NVMM, Ps::MAX);
    c.write(NVMM, Ps::MAX);
    c.finish();
}

#[test]
fn set_nvmm_switches_method_at_run_time() {
    let mut c = ctrl(Method::Proposed);
    assert_eq!(c.read(NVMM, 100 * NS), 1_120_000);
    c.set_nvmm("nvmm", params(Method::Coarse)).unwrap();
    assert_eq!(c.nvmm("nvmm").unwrap().method, Method::Coarse);
    // Another bank under coarse: hold 1000 + DRAM timing.
    assert_eq!(c.read(NVMM + BANK, 10_000 * NS), 11_035_000);
    let fast = NvmmParams {
        trcd_ns: 100.0,
        ..params(Method::Fine)
    };
    c.set_nvmm("nvmm", fast).unwrap();
    assert_eq!(c.read(NVMM + 2 * BANK, 20_000 * NS), 20_120_000);
    assert!(c
        .set_nvmm("dram", params(Method::Fine))
        .unwrap_err()
        .to_string()
        .contains("DRAM"));
    assert!(c
        .set_nvmm("pmem", params(Method::Fine))
        .unwrap_err()
        .to_string()
        .contains("dram, nvmm"));
    let bad = NvmmParams {
        tras_ns: -1.0,
        ..params(Method::Proposed)
    };
    assert!(c
        .set_nvmm("nvmm", bad)
        .unwrap_err()
        .to_string()
        .contains("tras_ns"));
}

#[test]
fn bank_switches_and_reset() {
    let mut c = ctrl(Method::Fine);
    let mut t = 0;
    for a in [NVMM, NVMM + BANK, NVMM + BANK + 64, NVMM, DRAM] {
        t += 5_000 * NS;
        c.read(a, t);
    }
    let s = stats(&c, "nvmm");
    assert_eq!((s.reads, s.bank_switches), (4, 2));
    assert_eq!(s.bank_para(), 0.5);
    assert_eq!(s.first_ps, 5_000 * NS);
    assert_eq!(stats(&c, "dram").bank_switches, 0);
    c.write(NVMM, t + 10 * NS);
    c.reset_stats();
    c.finish();
    let s = stats(&c, "nvmm");
    let no_wear = Wear {
        unit: WearUnit::Row,
        writes: 0,
        units: 0,
        hist: Vec::new(),
        hottest: Vec::new(),
    };
    assert_eq!(
        s,
        RegionStats {
            wear: Some(no_wear),
            ..RegionStats::new("nvmm")
        },
        "in-flight write not counted after reset"
    );
}

#[test]
fn access_dispatches_by_kind() {
    let mut a = ctrl(Method::Fine);
    let mut b = ctrl(Method::Fine);
    assert_eq!(
        a.access(Access::Write, NVMM, 100 * NS),
        b.write(NVMM, 100 * NS)
    );
    assert_eq!(
        a.access(Access::Read, NVMM + BANK, 200 * NS),
        b.read(NVMM + BANK, 200 * NS)
    );
    assert_eq!(a.stats(), b.stats());
}

#[test]
fn addresses_outside_every_region_are_timed_as_dram_but_not_counted() {
    let mut c = ctrl(Method::Proposed);
    assert_eq!(c.read(0x1000, 100 * NS), 135_000);
    assert!(c.stats().iter().all(|s| s.requests() == 0));
}

// ---------------------------------------------------------------------
// Property tests: determinism, totality, DDR3 legality
// ---------------------------------------------------------------------

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Random traffic near the controller's regions: mostly plausible
/// addresses and increasing times, sometimes anything at all.
fn traffic(c: &mut Controller, seed: u64, n: usize, wild: bool) -> Vec<Ps> {
    let mut r = XorShift(seed | 1);
    let mut t: Ps = 0;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let addr = match r.below(if wild { 4 } else { 3 }) {
            0 => NVMM + r.below(8) * BANK / 2 + r.below(64) * 64,
            1 => DRAM + r.below(4) * ROW + r.below(128) * 64,
            2 => NVMM + r.below(1 << 32),
            _ => r.next(),
        };
        t = match r.below(if wild { 12 } else { 10 }) {
            0..=4 => t + r.below(100) * NS,
            5..=8 => t + r.below(10_000) * NS,
            9 => t.saturating_sub(r.below(5_000) * NS),
            10 => r.next(),
            _ => Ps::MAX - r.below(1 << 40),
        };
        let v = match r.below(10) {
            0..=5 => c.read(addr, t),
            6..=8 => c.write(addr, t),
            _ => {
                c.advance(t);
                t
            }
        };
        if wild && r.below(50) == 0 {
            let m = [
                Method::Coarse,
                Method::Fine,
                Method::Proposed,
                Method::Optane,
            ][r.below(4) as usize];
            let p = NvmmParams {
                method: m,
                trcd_ns: 1.0 + r.below(3000) as f64,
                trp_ns: 1.0 + r.below(3000) as f64,
                tras_ns: 1.0 + r.below(80_000) as f64,
                coarse_read_ns: r.below(2000) as f64,
                coarse_write_ns: r.below(2000) as f64,
                trp_on: [TrpOn::Dirty, TrpOn::Always][r.below(2) as usize],
                keep_open: c.nvmm("nvmm").map_or(KeepOpen::FromAct, |p| p.keep_open),
                optane: Default::default(),
                image: String::new(),
                persistence: rvnvmm_config::Persistence::Adr,
            };
            c.set_nvmm("nvmm", p).unwrap();
        }
        if wild && r.below(100) == 0 {
            c.set_keep_open(if r.below(2) == 0 {
                KeepOpen::FromAct
            } else {
                KeepOpen::RestartAtAccess
            });
        }
        assert!(c.bank_summary_is_exact(), "open banks / latest act_ready");
        out.push(v);
    }
    out.push(c.finish());
    assert!(c.bank_summary_is_exact(), "open banks / latest act_ready");
    out
}

fn configs() -> Vec<CtrlCfg> {
    let base = CtrlCfg::default();
    vec![
        base.clone(),
        CtrlCfg {
            tfaw_ns: Some(30.0),
            refresh: Some(Refresh::default()),
            ..base.clone()
        },
        CtrlCfg {
            mapping: AddressMapping::RowBankColumn,
            write_queue: 1,
            read_queue: 1,
            ..base.clone()
        },
        CtrlCfg {
            mapping: AddressMapping::parse("row:13-bank-row:2-column").unwrap(),
            ranks: 2,
            rows: 32768,
            tfaw_ns: Some(40.0),
            write_queue: 3,
            ..base.clone()
        },
        // A controller clock of 3 ns, not a whole number of 1.25 ns DRAM
        // clocks: every time is rounded to the DRAM clock as it comes.
        CtrlCfg {
            clock_mhz: 333.333,
            refresh: Some(Refresh::default()),
            ..base.clone()
        },
        CtrlCfg {
            clock_mhz: 533.333,
            tck_ns: 1.875,
            tcl_ns: 13.125,
            tcwl_ns: 11.25,
            tburst_ns: 7.5,
            trcd_ns: 13.125,
            trp_ns: 13.125,
            tras_ns: 37.5,
            rows: 32768,
            columns: 1024,
            row_buffer_bytes: 4096,
            refresh: Some(Refresh {
                trefi_ns: 7800.0,
                trfc_ns: 260.0,
                ..Refresh::default()
            }),
            ..base.clone()
        },
        // DDR4-3200AA's bank groups (4 of 4 banks; tCCD_L, tRRD_L), the
        // group bits at cache-line granularity, without refresh so that
        // the rules are replayed.
        CtrlCfg {
            mapping: AddressMapping::parse("row-bank:2-column:7-bank:2-column:3").unwrap(),
            refresh: None,
            ..ddr4()
        },
    ]
}

#[test]
fn deterministic() {
    for (i, cfg) in configs().iter().enumerate() {
        for m in [Method::Coarse, Method::Fine, Method::Proposed] {
            for seed in [1u64, 0xdead_beef, 42 + i as u64] {
                let mut a = with_cfg(cfg, m);
                let mut b = with_cfg(cfg, m);
                let ra = traffic(&mut a, seed, 600, false);
                let rb = traffic(&mut b, seed, 600, false);
                assert_eq!(ra, rb);
                assert_eq!(a.stats(), b.stats());
                assert_eq!(a.take_trace(), b.take_trace());
            }
        }
    }
}

#[test]
fn empty_queue_shortcuts_match_the_general_scheduler() {
    // Every completion time, statistic and command of random traffic
    // (wild addresses, times and method changes included) is the same
    // whether a read into an empty queue is scheduled at once or through
    // the queue and `step`, and the refreshes due while nothing is queued
    // run directly or through `step`.
    for (i, cfg) in configs().iter().enumerate() {
        for scheduler in [Scheduler::Fcfs, Scheduler::FrFcfs, Scheduler::ReadFirst] {
            let cfg = CtrlCfg {
                scheduler,
                ..cfg.clone()
            };
            for m in [
                Method::Coarse,
                Method::Fine,
                Method::Proposed,
                Method::Optane,
            ] {
                for (seed, wild) in [(7u64, false), (0xfeed, false), (31 + i as u64, true)] {
                    let mut fast = with_cfg(&cfg, m);
                    let mut general = with_cfg(&cfg, m);
                    general.without_empty_queue_shortcuts();
                    let what = format!("config {i} {scheduler:?} {m:?} seed {seed}");
                    assert_eq!(
                        traffic(&mut fast, seed, 1500, wild),
                        traffic(&mut general, seed, 1500, wild),
                        "{what}"
                    );
                    assert_eq!(fast.stats(), general.stats(), "{what}");
                    assert_eq!(fast.take_trace(), general.take_trace(), "{what}");
                }
            }
        }
    }
}

#[test]
fn decode_by_runs_matches_the_field_walk() {
    // `arrive` decodes rank, bank and row with one shift and mask each when
    // the layout allows; a layout splitting one of them walks the fields.
    let mut r = XorShift(5);
    for (i, cfg) in configs().iter().enumerate() {
        let c = with_cfg(cfg, Method::Proposed);
        // "row:13-bank-row:2-column", and DDR4's bank-group bits apart.
        let split = i == 3 || i == 6;
        assert_eq!(c.runs.is_none(), split, "config {i}");
        let Some([rank, bank, row]) = c.runs else {
            continue;
        };
        for _ in 0..10_000 {
            let a = DRAM + r.below(4 << 30);
            let loc = c.decode(a);
            let la = a.wrapping_sub(c.window_base) & c.addr_mask;
            let field = |(shift, mask): (u32, u64)| (la >> shift) & mask;
            assert_eq!(
                (field(rank) as u32, field(bank) as u32, field(row)),
                (loc.rank, loc.bank, loc.row),
                "config {i} address {a:#x}"
            );
        }
    }
}

#[test]
fn no_panic_on_any_address_or_time() {
    for (i, cfg) in configs().iter().enumerate() {
        for m in [Method::Coarse, Method::Fine, Method::Proposed] {
            for seed in 0..6u64 {
                let mut c = with_cfg(cfg, m);
                c.set_trace(seed % 2 == 0);
                traffic(&mut c, seed * 7919 + i as u64, 1500, true);
                for s in c.stats() {
                    assert!(s.act_per_req().is_finite() && s.bank_para() <= 1.0);
                    let _ = (s.req_per_sec(), s.avg_read_latency_ns(), s.rw_ratio());
                }
            }
        }
    }
}

#[test]
fn results_never_precede_the_request() {
    let mut r = XorShift(99);
    for m in [Method::Coarse, Method::Fine, Method::Proposed] {
        let mut c = with_cfg(&configs()[1], m);
        let mut t = 0;
        for _ in 0..2000 {
            t += r.below(3000) * NS;
            let a = NVMM + r.below(6) * BANK + r.below(8) * 4096;
            if r.below(3) == 0 {
                assert!(c.write(a, t) >= t);
            } else {
                let d = c.read(a, t);
                assert!(d > t, "read at {t} done at {d}");
            }
        }
    }
}

/// A method's row timing, asked through its hooks: tRCD, tRAS, tRP of a
/// clean and of a dirty row.
struct RowRules {
    rcd: Ps,
    ras: Ps,
    rp_clean: Ps,
    rp_dirty: Ps,
}

impl RowRules {
    fn of(m: &mut dyn NvmmMethod, spec: &Spec) -> RowRules {
        let a = m.activate(0, spec);
        RowRules {
            rcd: a.col_ready,
            ras: a.pre_ready,
            rp_clean: m.precharge(0, false, spec),
            rp_dirty: m.precharge(0, true, spec),
        }
    }
}

/// Replays a trace and checks the DDR3 rules for one timing set, with the
/// row timing `e`.
fn check_legal(cmds: &[Command], t: &Timing, e: &RowRules, banks: usize) {
    #[derive(Clone, Copy)]
    struct B {
        open: Option<u64>,
        act: Ps,
        pre: Option<(Ps, bool)>,
        dirty: bool,
        last_rd: Ps,
        last_wr_end: Ps,
    }
    let mut bs = vec![
        B {
            open: None,
            act: 0,
            pre: None,
            dirty: false,
            last_rd: 0,
            last_wr_end: 0,
        };
        banks
    ];
    let mut acts: Vec<Ps> = Vec::new();
    let mut cols: Vec<Ps> = Vec::new();
    // Per bank group (bank % groups, one rank): ACTs and column commands.
    let mut group_acts: Vec<Vec<Ps>> = vec![Vec::new(); t.groups];
    let mut group_cols: Vec<Vec<Ps>> = vec![Vec::new(); t.groups];
    for c in cmds {
        let g = c.bank as usize % t.groups;
        match c.kind {
            Act => group_acts[g].push(c.at),
            Rd | Wr => group_cols[g].push(c.at),
            _ => {}
        }
        let b = &mut bs[c.bank as usize];
        match c.kind {
            Act => {
                assert!(b.open.is_none(), "ACT on open bank {c:?}");
                if let Some((p, dirty)) = b.pre {
                    let rp = if dirty { e.rp_dirty } else { e.rp_clean };
                    assert!(c.at >= p + rp, "tRP {c:?}");
                }
                b.open = Some(c.row);
                b.act = c.at;
                b.dirty = false;
                acts.push(c.at);
            }
            Rd | Wr => {
                assert_eq!(b.open, Some(c.row), "column command to closed row {c:?}");
                assert!(c.at >= b.act + e.rcd, "tRCD {c:?}");
                if c.kind == Rd {
                    b.last_rd = b.last_rd.max(c.at);
                } else {
                    b.last_wr_end = b.last_wr_end.max(c.at + t.cwl + t.burst);
                    b.dirty = true;
                }
                cols.push(c.at);
            }
            Pre => {
                assert!(b.open.is_some(), "PRE on closed bank {c:?}");
                assert!(c.at >= b.act + e.ras, "tRAS {c:?}");
                assert!(c.at >= b.last_rd + t.rtp, "tRTP {c:?}");
                assert!(c.at >= b.last_wr_end + t.wr, "tWR {c:?}");
                b.open = None;
                b.pre = Some((c.at, b.dirty));
            }
            Ref => {}
        }
    }
    acts.sort_unstable();
    for w in acts.windows(2) {
        assert!(w[1] - w[0] >= t.rrd, "tRRD {w:?}");
    }
    if let Some(faw) = t.faw {
        for w in acts.windows(5) {
            assert!(w[4] - w[0] >= faw, "tFAW {w:?}");
        }
    }
    cols.sort_unstable();
    for w in cols.windows(2) {
        assert!(w[1] - w[0] >= t.ccd, "tCCD {w:?}");
    }
    if t.groups > 1 {
        for (acts, cols) in group_acts.iter_mut().zip(&mut group_cols) {
            acts.sort_unstable();
            for w in acts.windows(2) {
                assert!(w[1] - w[0] >= t.rrd_l, "tRRD_L {w:?}");
            }
            cols.sort_unstable();
            for w in cols.windows(2) {
                assert!(w[1] - w[0] >= t.ccd_l, "tCCD_L {w:?}");
            }
        }
    }
}

#[test]
fn random_dram_traffic_gives_a_legal_ddr3_trace() {
    for (i, cfg) in configs().iter().enumerate() {
        if cfg.refresh.is_some() || cfg.ranks > 1 {
            continue; // REF and per-rank rules are not replayed here
        }
        let dram_only = vec![("dram".to_string(), DRAM, 4 << 30, None)];
        let mut c = Controller::new("d", cfg, &dram_only).unwrap();
        c.set_trace(true);
        traffic(&mut c, 1234 + i as u64, 3000, false);
        let cmds = c.take_trace();
        assert!(cmds.iter().filter(|c| c.kind == Act).count() > 100);
        let rules = RowRules::of(c.regions[0].method.as_mut(), &c.spec);
        check_legal(&cmds, &c.t, &rules, c.banks.len());
    }
}

#[test]
fn random_nvmm_traffic_keeps_the_stretched_timings() {
    // Without refresh (which may close a proposed row early, on purpose),
    // every NVMM command obeys the method's tRCD, tRAS and dirty/clean tRP.
    for m in [Method::Coarse, Method::Fine, Method::Proposed] {
        for keep in [KeepOpen::FromAct, KeepOpen::RestartAtAccess] {
            // One region over every address the traffic uses (some lie past
            // the 4 GiB DIMM and wrap).
            let nvmm_only = vec![("nvmm".to_string(), DRAM, u64::MAX - DRAM, Some(params(m)))];
            let mut c = Controller::new("n", &CtrlCfg::default(), &nvmm_only).unwrap();
            c.set_keep_open(keep);
            c.set_trace(true);
            traffic(&mut c, 77, 3000, false);
            let cmds = c.take_trace();
            let rules = RowRules::of(c.regions[0].method.as_mut(), &c.spec);
            check_legal(&cmds, &c.t, &rules, c.banks.len());
        }
    }
}

#[test]
fn read_queue_limits_reads_in_flight() {
    let cfg = CtrlCfg {
        read_queue: 2,
        ..CtrlCfg::default()
    };
    let mut c = with_cfg(&cfg, Method::Fine);
    // Three NVMM reads to three banks at once: the third waits at the input
    // until the first one's data has left (1120).
    assert_eq!(c.read(NVMM, 100 * NS), 1_120_000);
    assert_eq!(c.read(NVMM + BANK, 100 * NS), 1_125_000);
    assert_eq!(c.read(NVMM + 2 * BANK, 100 * NS), 2_140_000);
    assert_eq!(
        stats(&c, "nvmm").read_latency_ps_sum,
        1_020_000 + 1_025_000 + 2_040_000
    );
}

#[test]
fn a_burst_at_one_instant_is_served_in_order_and_fast() {
    // 20000 write-backs at time 0 (a cache flush): the writer is paced by
    // the write queue, everything completes, and it stays cheap.
    let mut c = ctrl(Method::Fine);
    let mut last = 0;
    for i in 0..20_000u64 {
        let acc = c.write(DRAM + (i % 8) * BANK + (i / 8) * 64, 0);
        assert!(acc >= last);
        last = acc;
    }
    // A read of a line still queued is forwarded.
    let t = c.now();
    assert_eq!(c.read(DRAM + 7 * BANK + 2499 * 64, 0), t + 5_000);
    let end = c.finish();
    assert!(end > last);
    // Banks 0-1 are the DRAM region, 2-7 NVMM (fine: tRCD 1000 ns).
    let (d, n) = (stats(&c, "dram"), stats(&c, "nvmm"));
    assert_eq!((d.writes, d.writes_done), (5_000, 5_000));
    assert_eq!((n.writes, n.writes_done), (15_000, 15_000));
    // Consecutive lines of a row: mostly row hits (a bank's next write is
    // accepted only when a slot frees, sometimes after its row closed).
    assert!(d.row_hit_rate() > 0.95, "{}", d.row_hit_rate());
    assert!(n.row_hit_rate() > 0.95, "{}", n.row_hit_rate());
}

#[test]
fn two_blocking_cpus_overlap_in_different_banks() {
    // DESIGN §5: run the CPU with the smallest clock next, so the controller
    // sees requests in time order. Two CPUs, each striding through rows of
    // its own bank under `proposed`, wait out tRAS in parallel.
    let alone = {
        let mut c = ctrl(Method::Proposed);
        let mut a = no_refresh_cpu();
        for i in 0..50 {
            a.read(&mut c, NVMM + i * ROW);
        }
        a.now
    };
    let mut c = ctrl(Method::Proposed);
    let mut cpus = [no_refresh_cpu(), no_refresh_cpu()];
    let mut next = [0u64; 2];
    while next.iter().any(|&n| n < 50) {
        let k = if next[1] >= 50 || (next[0] < 50 && cpus[0].now <= cpus[1].now) {
            0
        } else {
            1
        };
        let a = NVMM + k as u64 * BANK + next[k] * ROW;
        cpus[k].read(&mut c, a);
        next[k] += 1;
    }
    for cpu in &cpus {
        let r = cpu.now as f64 / alone as f64;
        assert!((0.99..1.02).contains(&r), "{r}");
    }
    // The same two streams in one bank serialise (row conflicts).
    let mut c = ctrl(Method::Proposed);
    let mut cpus = [no_refresh_cpu(), no_refresh_cpu()];
    let mut next = [0u64; 2];
    while next.iter().any(|&n| n < 50) {
        let k = if next[1] >= 50 || (next[0] < 50 && cpus[0].now <= cpus[1].now) {
            0
        } else {
            1
        };
        let a = NVMM + (2 * next[k] + k as u64) * ROW;
        cpus[k].read(&mut c, a);
        next[k] += 1;
    }
    let slowest = cpus.iter().map(|c| c.now).max().unwrap();
    assert!(slowest as f64 > 1.9 * alone as f64, "{slowest} vs {alone}");
}

#[test]
fn set_bits_are_the_indices_of_the_ones_lowest_first() {
    assert_eq!(super::set_bits(0).count(), 0);
    assert_eq!(
        super::set_bits(1 << 63 | 1 << 5 | 1).collect::<Vec<_>>(),
        [0, 5, 63]
    );
    assert_eq!(
        super::set_bits(u64::MAX).collect::<Vec<_>>(),
        (0..64).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------
// Bank groups (DDR4, DDR5) and speed bins
// ---------------------------------------------------------------------

/// DDR4-3200AA (JESD79-4C: 22-22-22 at 0.625 ns; tCCD_S 4, tCCD_L 8, tRRD_S
/// 4, tRRD_L 8 clocks), one rank of 8 Gb x8: 16 banks in 4 groups, 8 GiB.
fn ddr4() -> CtrlCfg {
    let mut c = CtrlCfg::default();
    rvnvmm_config::speed_bin::speed_bin("DDR4-3200AA")
        .unwrap()
        .apply(&mut c);
    c
}

/// Column and ACT times of `c`'s trace, by kind.
fn cmd_times(c: &mut Controller, kind: CommandKind) -> Vec<Ps> {
    c.take_trace()
        .into_iter()
        .filter(|x| x.kind == kind)
        .map(|x| x.at)
        .collect()
}

fn ddr4_ctrl(cfg: &CtrlCfg) -> Controller {
    let mut c = Controller::new("ddr4", cfg, &[("dram".into(), DRAM, 8 << 30, None)]).unwrap();
    c.set_trace(true);
    c
}

#[test]
fn bank_group_acts_keep_trrd_l_within_a_group_and_trrd_s_across() {
    let cfg = CtrlCfg {
        refresh: None,
        ..ddr4()
    };
    let bank = 512 << 20; // bank-row-column: 64 K rows of 8 KiB per bank
                          // Banks 0 and 4 are both in group 0: tRRD_L = 8 clocks = 5 ns.
    let mut c = ddr4_ctrl(&cfg);
    c.read(DRAM, 0);
    c.read(DRAM + 4 * bank, 0);
    assert_eq!(cmd_times(&mut c, Act), vec![0, 5000]);
    // Banks 0 and 1: groups 0 and 1, tRRD_S = 4 clocks = 2.5 ns.
    let mut c = ddr4_ctrl(&cfg);
    c.read(DRAM, 0);
    c.read(DRAM + bank, 0);
    assert_eq!(cmd_times(&mut c, Act), vec![0, 2500]);
    // One group: every pair of banks keeps tRRD_L.
    let mut c = ddr4_ctrl(&CtrlCfg {
        bank_groups: 1,
        ..cfg
    });
    c.read(DRAM, 0);
    c.read(DRAM + bank, 0);
    assert_eq!(cmd_times(&mut c, Act), vec![0, 5000]);
}

#[test]
fn bank_group_column_commands_keep_tccd_l_within_a_group_and_tccd_s_across() {
    // ACTs one clock apart, so that the column commands' own spacing shows:
    // RD at ACT + tRCD (22 clocks = 13.75 ns), then tCCD.
    let cfg = CtrlCfg {
        refresh: None,
        trrd_ns: 0.625,
        trrd_l_ns: Some(0.625),
        tfaw_ns: None,
        ..ddr4()
    };
    let bank = 512 << 20;
    let mut c = ddr4_ctrl(&cfg);
    c.read(DRAM, 0);
    c.read(DRAM + 4 * bank, 0);
    // Same group: the second RD waits tCCD_L = 8 clocks = 5 ns.
    assert_eq!(cmd_times(&mut c, Rd), vec![13_750, 18_750]);
    let mut c = ddr4_ctrl(&cfg);
    c.read(DRAM, 0);
    c.read(DRAM + bank, 0);
    // Other group: tCCD_S = 4 clocks = 2.5 ns (one BL8 burst).
    assert_eq!(cmd_times(&mut c, Rd), vec![13_750, 16_250]);
    // A row hit in the same bank keeps tCCD_L as well.
    let mut c = ddr4_ctrl(&cfg);
    c.read(DRAM, 0);
    c.read(DRAM + 64, 0);
    assert_eq!(cmd_times(&mut c, Rd), vec![13_750, 18_750]);
}

#[test]
fn bank_group_errors_name_the_key() {
    let bad = CtrlCfg {
        bank_groups: 3,
        ..ddr4()
    };
    let e = Controller::new("d", &bad, &[("dram".into(), DRAM, 1 << 30, None)]).unwrap_err();
    assert!(e.to_string().contains("bank_groups"), "{e}");
    let bad = CtrlCfg {
        bank_groups: 0,
        ..ddr4()
    };
    let e = Controller::new("d", &bad, &[("dram".into(), DRAM, 1 << 30, None)]).unwrap_err();
    assert!(e.to_string().contains("bank_groups"), "{e}");
    let bad = CtrlCfg {
        tccd_l_ns: Some(f64::NAN),
        ..ddr4()
    };
    let e = Controller::new("d", &bad, &[("dram".into(), DRAM, 1 << 30, None)]).unwrap_err();
    assert!(e.to_string().contains("tccd_l_ns"), "{e}");
}

#[test]
fn ddr3_1600k_bin_times_as_the_default_controller() {
    let mut bin = CtrlCfg::default();
    rvnvmm_config::speed_bin::speed_bin("DDR3-1600K")
        .unwrap()
        .apply(&mut bin);
    let want = Timing::new(&CtrlCfg {
        tfaw_ns: Some(30.0),
        refresh: Some(Refresh::default()),
        ..CtrlCfg::default()
    })
    .unwrap();
    let got = Timing::new(&bin).unwrap();
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
}

/// Bytes per ns of `n` line reads posted at once to consecutive lines.
fn stream_gbps(cfg: &CtrlCfg, n: u64) -> f64 {
    let cfg = CtrlCfg {
        read_queue: 1 << 16,
        refresh: None,
        ..cfg.clone()
    };
    let mut c = Controller::new("s", &cfg, &[("dram".into(), DRAM, 4 << 30, None)]).unwrap();
    c.set_line_bytes(64).unwrap();
    let last = (0..n).map(|i| c.read(DRAM + 64 * i, 0)).max().unwrap();
    (64 * n) as f64 / (last as f64 / 1000.0)
}

#[test]
fn ddr4_streams_faster_than_ddr3_by_the_data_rate() {
    // DDR3-1600 (12.8 GB/s peak), row-sized blocks rotating over the banks.
    let ddr3 = CtrlCfg {
        mapping: AddressMapping::RowBankColumn,
        ..CtrlCfg::default()
    };
    // DDR4-3200 (25.6 GB/s peak) with the bank-group bits just above the
    // line, as DRAMSim3's and controllers' DDR4 mappings place them, so
    // that consecutive lines take tCCD_S.
    let ddr4_grouped = CtrlCfg {
        mapping: AddressMapping::parse("row-bank:2-column:7-bank:2-column:3").unwrap(),
        ..ddr4()
    };
    // The same DDR4 with the stream in one bank (each bank one block):
    // tCCD_L (8 clocks, 5 ns) between its lines, DDR3-1600's rate, less
    // the row switches that bank cannot overlap. (With `row-bank-column`
    // the scheduler fills those gaps with the next row's lines, in the
    // next bank and group, and reaches the full rate.)
    let ddr4_one_group = CtrlCfg {
        mapping: AddressMapping::BankRowColumn,
        ..ddr4()
    };
    let n = 4096;
    let (d3, d4, d4l) = (
        stream_gbps(&ddr3, n),
        stream_gbps(&ddr4_grouped, n),
        stream_gbps(&ddr4_one_group, n),
    );
    println!("stream GB/s: DDR3-1600 {d3:.2}, DDR4-3200 {d4:.2}, DDR4-3200 in one bank {d4l:.2}");
    assert!((11.0..=12.8).contains(&d3), "DDR3-1600 {d3} GB/s");
    let ratio = d4 / d3;
    assert!(
        (1.8..=2.05).contains(&ratio),
        "DDR4/DDR3 {d4}/{d3} = {ratio}"
    );
    assert!(
        (0.85..=1.0).contains(&(d4l / d3)),
        "DDR4 in one bank {d4l} GB/s"
    );
}

#[test]
fn ddr5_sub_channel_moves_64_byte_bursts() {
    // DDR5-4800B: one 32-bit sub-channel, BL16 = 8 clocks of 0.416 ns.
    let mut cfg = CtrlCfg::default();
    rvnvmm_config::speed_bin::speed_bin("DDR5-4800B")
        .unwrap()
        .apply(&mut cfg);
    let t = Timing::new(&cfg).unwrap();
    assert_eq!(
        (t.tck, t.burst, t.ccd, t.ccd_l, t.groups),
        (416, 3328, 3328, 4992, 8)
    );
    assert_eq!((t.cl, t.rcd, t.rp), (40 * 416, 39 * 416, 39 * 416));
    // An idle read: ACT, tRCD, RD, CL + burst, on 5 ns controller clocks.
    let mut c = Controller::new("d5", &cfg, &[("dram".into(), DRAM, 8 << 30, None)]).unwrap();
    let out = c.read(DRAM, 0);
    assert_eq!(
        out,
        (39 * 416 + 40 * 416 + 8 * 416_u64).div_ceil(5000) * 5000
    );
    // Streaming with the groups' bits above the line: 64 bytes per 8
    // clocks, 19.2 GB/s per sub-channel.
    let grouped = CtrlCfg {
        mapping: AddressMapping::parse("row-bank:2-column:6-bank:3-column:4").unwrap(),
        ..cfg
    };
    let g = stream_gbps(&grouped, 4096);
    println!("stream GB/s: DDR5-4800 sub-channel {g:.2}");
    assert!(
        (17.3..=19.25).contains(&g),
        "DDR5-4800 sub-channel {g} GB/s"
    );
}
