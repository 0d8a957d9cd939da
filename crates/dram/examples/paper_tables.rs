//! Seed 000 Fig. 8 and Tables 3-6 at the controller level: the
//! freedom-u500 controller driven by a slow blocking requester
//! (`microbench::BlockingCpu::freedom_u500`), paper values beside ours.
//!
//! `cargo run -p rvnvmm-dram --example paper_tables [-- --restart] [-- --no-refresh]`

use rvnvmm_config::{Config, Method};
use rvnvmm_dram::microbench::{banks, stride, BlockingCpu, Op};
use rvnvmm_dram::{Controller, KeepOpen};

const NVMM: u64 = 0xC000_0000;
const BANK: u64 = 512 << 20;
const ROW: u64 = 8192;

fn controller(method: Method, restart: bool, refresh: bool) -> Controller {
    let mut cfg = Config::default();
    if !refresh {
        for c in cfg.memory.controllers.values_mut() {
            c.refresh = None;
        }
    }
    cfg.memory
        .regions
        .get_mut("nvmm")
        .unwrap()
        .nvmm
        .as_mut()
        .unwrap()
        .method = method;
    let mut c = Controller::from_config(&cfg, "ddr3").unwrap();
    if restart {
        c.set_keep_open(KeepOpen::RestartAtAccess);
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let restart = args.iter().any(|a| a == "--restart");
    let refresh = !args.iter().any(|a| a == "--no-refresh");
    let methods = [Method::Coarse, Method::Fine, Method::Proposed];
    let n = 2000;
    let w = Op::Write { ways: 4 };
    println!(
        "keep-open: {}, refresh: {}",
        if restart {
            "restart-at-access"
        } else {
            "from-ACT (text rule)"
        },
        if refresh { "on (tREFI 7.8 us)" } else { "off" }
    );

    // Fig. 8: stride 4096, first accesses.
    let mut c = controller(Method::Proposed, restart, refresh);
    let mut cpu = BlockingCpu::freedom_u500();
    let lats: Vec<u64> = (0..6)
        .map(|i| cpu.read(&mut c, NVMM + i * 4096) / 1000)
        .collect();
    println!("Fig. 8 (proposed, stride 4096) CPU-seen latencies ns: {lats:?}  (paper: miss, ~1600 hit, ~6000 miss, ...)");

    let paper3 = [[2702.0, 2708.0, 4081.0], [2881.0, 2872.0, 6064.0]];
    let paper4 = [[4399.0, 4879.0, 14457.0], [4479.0, 5334.0, 15913.0]];
    for (title, op, paper) in [
        ("Table 3 (read)", Op::Read, paper3),
        ("Table 4 (write)", w, paper4),
    ] {
        println!("{title}: avg ns per access, ours (paper)");
        let mut rows = Vec::new();
        for s in [4096u64, 8192] {
            let row: Vec<f64> = methods
                .iter()
                .map(|&m| {
                    let mut c = controller(m, restart, refresh);
                    stride(&mut c, &mut BlockingCpu::freedom_u500(), NVMM, s, n, op)
                })
                .collect();
            rows.push(row);
        }
        for (si, s) in [4096, 8192].iter().enumerate() {
            print!("  STRIDE {s:5}:");
            for mi in 0..3 {
                print!(
                    "  {:7.0} ({:5.0}) x{:.2}",
                    rows[si][mi],
                    paper[si][mi],
                    rows[si][mi] / rows[1][mi]
                );
            }
            println!();
        }
    }
    let paper5 = [
        [2598.0, 2608.0, 6060.0],
        [2626.0, 2634.0, 4353.0],
        [2637.0, 2647.0, 3062.0],
        [2753.0, 2736.0, 2751.0],
        [2887.0, 2875.0, 2839.0],
        [2962.0, 2966.0, 2944.0],
    ];
    let paper6 = [
        [4204.0, 4892.0, 15843.0],
        [4207.0, 3925.0, 11104.0],
        [4223.0, 3655.0, 8712.0],
        [4307.0, 3652.0, 7070.0],
        [4465.0, 3658.0, 5818.0],
        [4507.0, 3656.0, 5153.0],
    ];
    for (title, op, paper) in [
        ("Table 5 (read)", Op::Read, paper5),
        ("Table 6 (write)", w, paper6),
    ] {
        println!("{title}: avg ns per access, ours (paper)");
        for nb in 1..=6u64 {
            print!("  NBANK {nb}:");
            for (mi, &m) in methods.iter().enumerate() {
                let mut c = controller(m, restart, refresh);
                let v = banks(
                    &mut c,
                    &mut BlockingCpu::freedom_u500(),
                    NVMM,
                    BANK,
                    nb,
                    ROW,
                    n / nb,
                    op,
                );
                print!("  {:7.0} ({:5.0})", v, paper[nb as usize - 1][mi]);
            }
            println!();
        }
    }
}
