//! The flattened device tree of the board, as OpenSBI and Linux read it
//! (layout after QEMU `virt`; node by node in `docs/board.md`).

use crate::board::{control_page_base, Board, Target};
use crate::clint::CLINT_SIZE;
use crate::device::{Device, FdtNode, PHANDLE_CPU, PHANDLE_DEVICES};
use crate::map::*;
use crate::plic::{plic_size, PLIC_SOURCES};
use rvnvmm_isa::{Ext, ExtSet, CBOZ_BLOCK_BYTES};
use rvnvmm_memsys::control::CONTROL_PAGE_SIZE;
use vm_fdt::{FdtWriter, FdtWriterResult};

/// How the NVMM regions appear to the guest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NvmmMode {
    /// Not memory to the kernel at all: outside every `memory` node, so
    /// Linux never allocates from it and user space maps it through
    /// `/dev/mem` (seed 000 §4.2). The NVMM control page's node gives its
    /// address and size.
    #[default]
    Reserved,
    /// A `pmem-region` node per region (persistent: no `volatile`), so
    /// Linux's `of_pmem` driver makes `/dev/pmem0`, ... (a raw namespace;
    /// `ndctl create-namespace -m fsdax` turns it into one for DAX).
    Pmem,
}

/// What the device tree says beyond the board itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DtbOptions {
    /// The kernel command line (`/chosen/bootargs`).
    pub bootargs: String,
    /// The initramfs's physical `[start, end)` (`linux,initrd-start/end`).
    pub initrd: Option<(u64, u64)>,
    /// How the NVMM regions appear.
    pub nvmm: NvmmMode,
    /// The extensions the harts implement: `riscv,isa`,
    /// `riscv,isa-base` and `riscv,isa-extensions` are derived from it.
    pub isa: ExtSet,
}

impl Default for DtbOptions {
    fn default() -> Self {
        DtbOptions {
            bootargs: String::new(),
            initrd: None,
            nvmm: NvmmMode::default(),
            isa: ExtSet::DEFAULT,
        }
    }
}

/// Why a device tree cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum DtbError {
    /// The writer refused (e.g. a NUL in the command line).
    #[error("device tree: {0}")]
    Fdt(#[from] vm_fdt::Error),
}

const PHANDLE_PLIC: u32 = 1;

/// Interrupt causes as the harts' interrupt controllers number them.
const IRQ_M_SOFT: u32 = 3;
const IRQ_M_TIMER: u32 = 7;
const IRQ_S_EXT: u32 = 9;
const IRQ_M_EXT: u32 = 11;

/// `reg` cells of a 2-cell address and 2-cell size.
fn reg(base: u64, size: u64) -> [u64; 2] {
    [base, size]
}

impl Board {
    /// The device tree blob for this board. OpenSBI edits it in place
    /// (reserved memory for itself, hart and PLIC fix-ups), growing it:
    /// the loader must leave free memory after it (e.g. put it at the
    /// start of an otherwise unused 2 MiB block, as QEMU does).
    pub fn dtb(&self, opts: &DtbOptions) -> Result<Vec<u8>, DtbError> {
        let mut w = FdtWriter::new()?;
        let root = w.begin_node("")?;
        w.property_u32("#address-cells", 2)?;
        w.property_u32("#size-cells", 2)?;
        w.property_string_list(
            "compatible",
            vec!["rvnvmm,virt".into(), "riscv-virtio".into()],
        )?;
        w.property_string("model", "rvnvmm,virt")?;

        // Aliases: (alias, path of the node).
        let aliases: Vec<(&str, String)> = self
            .device_nodes()
            .filter_map(|(name, _, dev)| Some((dev.fdt_alias()?, format!("/soc/{name}"))))
            .collect();
        let chosen = w.begin_node("chosen")?;
        w.property_string("bootargs", &opts.bootargs)?;
        if let Some((_, path)) = aliases.iter().find(|(a, _)| *a == "serial0") {
            w.property_string("stdout-path", path)?;
        }
        if let Some((start, end)) = opts.initrd {
            w.property_u64("linux,initrd-start", start)?;
            w.property_u64("linux,initrd-end", end)?;
        }
        w.end_node(chosen)?;

        let node = w.begin_node("aliases")?;
        for (alias, path) in &aliases {
            w.property_string(alias, path)?;
        }
        w.end_node(node)?;

        let numa = self.numa();
        // The node ids the tree shows, for the distance map.
        let mut shown: Vec<u32> = Vec::new();
        let mut node_id = |w: &mut FdtWriter, id: u32| -> FdtWriterResult<()> {
            if numa.is_some() {
                w.property_u32("numa-node-id", id)?;
                if !shown.contains(&id) {
                    shown.push(id);
                }
            }
            Ok(())
        };
        for r in self.boot_ram() {
            let n = w.begin_node(&format!("memory@{:x}", r.base))?;
            w.property_string("device_type", "memory")?;
            w.property_array_u64("reg", &reg(r.base, r.size))?;
            node_id(&mut w, r.node)?;
            w.end_node(n)?;
        }
        // Soft-reserved regions of any kind, and with `--nvmm pmem` the
        // NVMM: DRAM first, so that a machine without soft reservation
        // keeps its tree byte for byte.
        let pmem = self.dram().filter(|r| r.soft_reserved).chain(
            self.nvmm()
                .filter(|r| r.soft_reserved || opts.nvmm == NvmmMode::Pmem),
        );
        for r in pmem {
            let n = w.begin_node(&format!("pmem@{:x}", r.base))?;
            w.property_string("compatible", "pmem-region")?;
            w.property_array_u64("reg", &reg(r.base, r.size))?;
            node_id(&mut w, r.node)?;
            w.end_node(n)?;
        }
        if let Some(numa) = numa {
            // Linux's `numa-distance-map-v1` (bindings/numa.txt): every
            // ordered pair, itself at 10.
            let matrix: Vec<u32> = numa
                .matrix(&shown)
                .into_iter()
                .flat_map(|(a, b, d)| [a, b, u32::from(d)])
                .collect();
            let n = w.begin_node("distance-map")?;
            w.property_string("compatible", "numa-distance-map-v1")?;
            w.property_array_u32("distance-matrix", &matrix)?;
            w.end_node(n)?;
        }

        self.cpus(&mut w, opts)?;

        for (_, node, dev) in self.device_nodes() {
            dev.fdt_root(&mut w, &node)?;
        }

        self.soc(&mut w)?;
        w.end_node(root)?;
        Ok(w.finish()?)
    }

    fn cpus(&self, w: &mut FdtWriter, opts: &DtbOptions) -> FdtWriterResult<()> {
        let ext: Vec<String> = opts.isa.names().into_iter().map(String::from).collect();
        let cpus = w.begin_node("cpus")?;
        w.property_u32("#address-cells", 1)?;
        w.property_u32("#size-cells", 0)?;
        w.property_u32("timebase-frequency", self.timebase_hz() as u32)?;
        for h in 0..self.harts() as u32 {
            let cpu = w.begin_node(&format!("cpu@{h}"))?;
            w.property_string("device_type", "cpu")?;
            w.property_u32("reg", h)?;
            w.property_string("status", "okay")?;
            w.property_string("compatible", "riscv")?;
            w.property_string("riscv,isa", &opts.isa.to_string())?;
            w.property_string("riscv,isa-base", "rv64i")?;
            w.property_string_list("riscv,isa-extensions", ext.clone())?;
            w.property_string("mmu-type", "riscv,sv39")?;
            if let Some(numa) = self.numa() {
                w.property_u32("numa-node-id", numa.cpu_node)?;
            }
            if opts.isa.has(Ext::Zicbom) {
                w.property_u32("riscv,cbom-block-size", self.cbom_block_bytes())?;
            }
            if opts.isa.has(Ext::Zicboz) {
                w.property_u32("riscv,cboz-block-size", CBOZ_BLOCK_BYTES)?;
            }
            if opts.isa.has(Ext::Zicbop) {
                w.property_u32("riscv,cbop-block-size", self.cbom_block_bytes())?;
            }
            w.property_phandle(PHANDLE_CPU + 2 * h)?;
            let intc = w.begin_node("interrupt-controller")?;
            w.property_u32("#address-cells", 0)?;
            w.property_u32("#interrupt-cells", 1)?;
            w.property_null("interrupt-controller")?;
            w.property_string("compatible", "riscv,cpu-intc")?;
            w.property_phandle(intc_phandle(h))?;
            w.end_node(intc)?;
            w.end_node(cpu)?;
        }
        // Linux's arch_topology reads cores, and their threads if a core
        // has `threadN` nodes; a core of one thread names its CPU itself.
        let map = w.begin_node("cpu-map")?;
        let cluster = w.begin_node("cluster0")?;
        let per_core = self.threads_per_core().max(1) as u32;
        for c in 0..(self.harts() as u32).div_ceil(per_core) {
            let core = w.begin_node(&format!("core{c}"))?;
            let first = c * per_core;
            let last = (first + per_core).min(self.harts() as u32);
            if per_core == 1 {
                w.property_u32("cpu", PHANDLE_CPU + 2 * first)?;
            } else {
                for h in first..last {
                    let thread = w.begin_node(&format!("thread{}", h - first))?;
                    w.property_u32("cpu", PHANDLE_CPU + 2 * h)?;
                    w.end_node(thread)?;
                }
            }
            w.end_node(core)?;
        }
        w.end_node(cluster)?;
        w.end_node(map)?;
        w.end_node(cpus)
    }

    /// `interrupts-extended` cells: every hart's `(intc, cause)` for each
    /// cause in `causes`.
    fn per_hart(&self, causes: &[u32]) -> Vec<u32> {
        (0..self.harts() as u32)
            .flat_map(|h| causes.iter().flat_map(move |&c| [intc_phandle(h), c]))
            .collect()
    }

    fn soc(&self, w: &mut FdtWriter) -> FdtWriterResult<()> {
        let soc = w.begin_node("soc")?;
        w.property_u32("#address-cells", 2)?;
        w.property_u32("#size-cells", 2)?;
        w.property_string("compatible", "simple-bus")?;
        w.property_null("ranges")?;

        // Every window of the address map, by address.
        for target in self.targets() {
            match target {
                Target::Clint => self.clint_node(w)?,
                Target::Plic => self.plic_node(w)?,
                Target::Control(k) => self.control_node(w, k)?,
                Target::Dev(i) => {
                    let (name, node, dev) = self.device_node(i);
                    let n = w.begin_node(&name)?;
                    dev.fdt_node(w, &node)?;
                    w.end_node(n)?;
                }
            }
        }
        w.end_node(soc)
    }

    fn clint_node(&self, w: &mut FdtWriter) -> FdtWriterResult<()> {
        let clint = w.begin_node(&format!("clint@{CLINT_BASE:x}"))?;
        w.property_string_list(
            "compatible",
            vec!["sifive,clint0".into(), "riscv,clint0".into()],
        )?;
        w.property_array_u64("reg", &reg(CLINT_BASE, CLINT_SIZE))?;
        w.property_array_u32(
            "interrupts-extended",
            &self.per_hart(&[IRQ_M_SOFT, IRQ_M_TIMER]),
        )?;
        w.end_node(clint)
    }

    fn plic_node(&self, w: &mut FdtWriter) -> FdtWriterResult<()> {
        let plic = w.begin_node(&format!("plic@{PLIC_BASE:x}"))?;
        w.property_string_list(
            "compatible",
            vec!["sifive,plic-1.0.0".into(), "riscv,plic0".into()],
        )?;
        w.property_array_u64("reg", &reg(PLIC_BASE, plic_size(2 * self.harts())))?;
        w.property_u32("#address-cells", 0)?;
        w.property_u32("#interrupt-cells", 1)?;
        w.property_null("interrupt-controller")?;
        w.property_u32("riscv,ndev", PLIC_SOURCES)?;
        // Context 2h is hart h's M-mode, 2h+1 its S-mode.
        w.property_array_u32(
            "interrupts-extended",
            &self.per_hart(&[IRQ_M_EXT, IRQ_S_EXT]),
        )?;
        w.property_phandle(PHANDLE_PLIC)?;
        w.end_node(plic)
    }

    /// Control page `k`'s node: where it is and the NVMM region of the
    /// memory node it controls, for user space in either mode.
    fn control_node(&self, w: &mut FdtWriter, k: usize) -> FdtWriterResult<()> {
        let base = control_page_base(k);
        let n = w.begin_node(&format!("nvmm-control@{base:x}"))?;
        w.property_string("compatible", "rvnvmm,nvmm-control")?;
        w.property_array_u64("reg", &reg(base, CONTROL_PAGE_SIZE))?;
        let node = self.control_pages()[k].node_name();
        let regions: Vec<u64> = self
            .nvmm()
            .filter(|r| r.name == node)
            .flat_map(|r| reg(r.base, r.size))
            .collect();
        w.property_array_u64("rvnvmm,nvmm-regions", &regions)?;
        w.end_node(n)
    }

    /// Registered device `i`: its node's name, where it is, and it.
    fn device_node(&self, i: usize) -> (String, FdtNode<'_>, &dyn Device) {
        let (base, size, irqs, dev) = self.device_at(i);
        let node = FdtNode {
            base,
            size,
            irqs,
            plic_phandle: PHANDLE_PLIC,
            phandle: PHANDLE_DEVICES + i as u32,
        };
        (format!("{}@{base:x}", dev.fdt_name()), node, dev)
    }

    /// [`Board::device_node`] of every device, in registration order.
    fn device_nodes(&self) -> impl Iterator<Item = (String, FdtNode<'_>, &dyn Device)> {
        (0..self.device_count()).map(|i| self.device_node(i))
    }
}

fn intc_phandle(hart: u32) -> u32 {
    PHANDLE_CPU + 2 * hart + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Console, Entropy, InputQueue};
    use fdt::Fdt;
    use rvnvmm_config::Config;

    fn board(harts: u32) -> Board {
        let mut cfg = Config::default();
        cfg.machine.harts = harts;
        Board::builder(&cfg)
            .uart(Box::new(std::io::sink()), InputQueue::new())
            .virtio(Entropy::new(1))
            .virtio(Console::new(Box::new(std::io::sink()), InputQueue::new()))
            .build()
            .unwrap()
    }

    fn prop<'a>(fdt: &'a Fdt<'a>, path: &str, name: &str) -> &'a [u8] {
        let node = fdt
            .find_node(path)
            .unwrap_or_else(|| panic!("no node {path}"));
        node.property(name)
            .unwrap_or_else(|| panic!("no {path}:{name}"))
            .value
    }

    fn cells(v: &[u8]) -> Vec<u32> {
        v.chunks(4)
            .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn u64s(v: &[u8]) -> Vec<u64> {
        v.chunks(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn strings(v: &[u8]) -> Vec<&str> {
        v.strip_suffix(&[0])
            .unwrap()
            .split(|&b| b == 0)
            .map(|s| std::str::from_utf8(s).unwrap())
            .collect()
    }

    /// The blob of `b` with the NVMM as `nvmm` says, other options default.
    fn nvmm_dtb(b: &Board, nvmm: NvmmMode) -> Vec<u8> {
        b.dtb(&DtbOptions {
            nvmm,
            ..DtbOptions::default()
        })
        .unwrap()
    }

    fn string<'a>(fdt: &'a Fdt<'a>, path: &str, name: &str) -> &'a str {
        let s = strings(prop(fdt, path, name));
        assert_eq!(s.len(), 1, "{path}:{name}");
        s[0]
    }

    #[test]
    fn isa_follows_the_extension_set() {
        let b = board(1);
        let gc = DtbOptions {
            isa: ExtSet::RV64GC.with(Ext::Zicbom),
            ..DtbOptions::default()
        };
        let blob = b.dtb(&gc).unwrap();
        let fdt = Fdt::new(&blob).unwrap();
        let cpu = "/cpus/cpu@0";
        assert_eq!(
            string(&fdt, cpu, "riscv,isa"),
            "rv64imafdc_zicbom_zicntr_zicsr_zifencei_zihpm_zca_zcd_sstc_svnapot"
        );
        assert_eq!(
            strings(prop(&fdt, cpu, "riscv,isa-extensions")),
            [
                "i", "m", "a", "f", "d", "c", "zicbom", "zicntr", "zicsr", "zifencei", "zihpm",
                "zca", "zcd", "sstc", "svnapot"
            ]
        );
        assert_eq!(cells(prop(&fdt, cpu, "riscv,cbom-block-size")), [64]);
        let node = fdt.find_node(cpu).unwrap();
        assert!(node.property("riscv,cboz-block-size").is_none());
        let blob = b.dtb(&DtbOptions::default()).unwrap();
        let all = Fdt::new(&blob).unwrap();
        let ext = strings(prop(&all, cpu, "riscv,isa-extensions"));
        for e in [
            "zba", "zbb", "zbs", "zbc", "zicond", "zcb", "zicboz", "zawrs", "zic64b", "zihpm",
        ] {
            assert!(ext.contains(&e), "{e}");
        }
        assert_eq!(cells(prop(&all, cpu, "riscv,cboz-block-size")), [64]);
    }

    #[test]
    fn cpu_map_lists_the_threads_of_each_core() {
        let mut cfg = Config::default();
        (
            cfg.machine.harts,
            cfg.machine.cores,
            cfg.machine.threads_per_core,
        ) = (4, 2, 2);
        let b = Board::builder(&cfg).build().unwrap();
        let blob = b.dtb(&DtbOptions::default()).unwrap();
        let fdt = Fdt::new(&blob).unwrap();
        for h in 0..4u32 {
            let (core, thread) = (h / 2, h % 2);
            let node = format!("/cpus/cpu-map/cluster0/core{core}/thread{thread}");
            assert_eq!(
                cells(prop(&fdt, &node, "cpu")),
                cells(prop(&fdt, &format!("/cpus/cpu@{h}"), "phandle")),
                "{node}"
            );
        }
        assert!(fdt.find_node("/cpus/cpu-map/cluster0/core2").is_none());
        let core0 = fdt.find_node("/cpus/cpu-map/cluster0/core0").unwrap();
        assert!(
            core0.property("cpu").is_none(),
            "an SMT core names its threads"
        );
    }

    #[test]
    fn device_tree_round_trip() {
        let b = board(2);
        let opts = DtbOptions {
            bootargs: "console=ttyS0 root=/dev/vda".into(),
            initrd: Some((0x8800_0000, 0x8812_3456)),
            ..DtbOptions::default()
        };
        let blob = b.dtb(&opts).unwrap();
        let fdt = Fdt::new(&blob).unwrap();

        assert_eq!(
            strings(prop(&fdt, "/", "compatible")),
            ["rvnvmm,virt", "riscv-virtio"]
        );
        assert_eq!(cells(prop(&fdt, "/", "#address-cells")), [2]);
        assert_eq!(fdt.chosen().bootargs(), Some("console=ttyS0 root=/dev/vda"));
        assert_eq!(
            string(&fdt, "/chosen", "stdout-path"),
            "/soc/serial@10000000"
        );
        assert_eq!(
            u64s(prop(&fdt, "/chosen", "linux,initrd-start")),
            [0x8800_0000]
        );
        assert_eq!(
            u64s(prop(&fdt, "/chosen", "linux,initrd-end")),
            [0x8812_3456]
        );
        assert_eq!(string(&fdt, "/aliases", "serial0"), "/soc/serial@10000000");

        // DRAM is system RAM; the NVMM is nowhere in memory.
        assert_eq!(string(&fdt, "/memory@80000000", "device_type"), "memory");
        assert_eq!(
            u64s(prop(&fdt, "/memory@80000000", "reg")),
            [0x8000_0000, 0x4000_0000]
        );
        let memory_nodes = fdt
            .all_nodes()
            .filter(|n| n.name.starts_with("memory") || n.name.starts_with("pmem"))
            .count();
        assert_eq!(memory_nodes, 1);

        // Harts and their interrupt controllers.
        assert_eq!(
            cells(prop(&fdt, "/cpus", "timebase-frequency")),
            [10_000_000]
        );
        let mut intc = Vec::new();
        for h in 0..2 {
            let cpu = format!("/cpus/cpu@{h}");
            assert_eq!(cells(prop(&fdt, &cpu, "reg")), [h]);
            assert_eq!(string(&fdt, &cpu, "device_type"), "cpu");
            assert_eq!(string(&fdt, &cpu, "riscv,isa"), ExtSet::DEFAULT.to_string());
            assert_eq!(string(&fdt, &cpu, "riscv,isa-base"), "rv64i");
            let ext = strings(prop(&fdt, &cpu, "riscv,isa-extensions"));
            assert!(ext.contains(&"zicbom") && ext.contains(&"svnapot") && ext.contains(&"c"));
            assert_eq!(string(&fdt, &cpu, "mmu-type"), "riscv,sv39");
            assert_eq!(cells(prop(&fdt, &cpu, "riscv,cbom-block-size")), [64]);
            let ic = format!("{cpu}/interrupt-controller");
            assert_eq!(string(&fdt, &ic, "compatible"), "riscv,cpu-intc");
            assert!(prop(&fdt, &ic, "interrupt-controller").is_empty());
            intc.push(cells(prop(&fdt, &ic, "phandle"))[0]);
            let core = cells(prop(
                &fdt,
                &format!("/cpus/cpu-map/cluster0/core{h}"),
                "cpu",
            ));
            assert_eq!(core, cells(prop(&fdt, &cpu, "phandle")));
        }
        assert!(fdt.find_node("/cpus/cpu@2").is_none());

        assert_eq!(
            u64s(prop(&fdt, "/soc/clint@2000000", "reg")),
            [0x200_0000, 0x1_0000]
        );
        assert_eq!(
            cells(prop(&fdt, "/soc/clint@2000000", "interrupts-extended")),
            [intc[0], 3, intc[0], 7, intc[1], 3, intc[1], 7]
        );
        let plic = "/soc/plic@c000000";
        assert_eq!(u64s(prop(&fdt, plic, "reg")), [0xc00_0000, 0x20_4000]);
        assert_eq!(cells(prop(&fdt, plic, "riscv,ndev")), [95]);
        assert_eq!(
            cells(prop(&fdt, plic, "interrupts-extended")),
            [intc[0], 11, intc[0], 9, intc[1], 11, intc[1], 9]
        );
        let plic_phandle = cells(prop(&fdt, plic, "phandle"));

        let uart = "/soc/serial@10000000";
        assert_eq!(string(&fdt, uart, "compatible"), "ns16550a");
        assert_eq!(u64s(prop(&fdt, uart, "reg")), [0x1000_0000, 0x100]);
        assert_eq!(cells(prop(&fdt, uart, "interrupts")), [10]);
        assert_eq!(cells(prop(&fdt, uart, "interrupt-parent")), plic_phandle);
        assert_eq!(cells(prop(&fdt, uart, "clock-frequency")), [3_686_400]);

        for (k, path) in ["/soc/virtio_mmio@10001000", "/soc/virtio_mmio@10002000"]
            .into_iter()
            .enumerate()
        {
            assert_eq!(string(&fdt, path, "compatible"), "virtio,mmio");
            assert_eq!(
                u64s(prop(&fdt, path, "reg")),
                [0x1000_1000 + 0x1000 * k as u64, 0x1000]
            );
            assert_eq!(cells(prop(&fdt, path, "interrupts")), [1 + k as u32]);
            assert_eq!(cells(prop(&fdt, path, "interrupt-parent")), plic_phandle);
        }
        assert!(fdt.find_node("/soc/virtio_mmio@10003000").is_none());

        let test = "/soc/test@100000";
        assert_eq!(
            strings(prop(&fdt, test, "compatible")),
            ["sifive,test1", "sifive,test0", "syscon"]
        );
        assert_eq!(u64s(prop(&fdt, test, "reg")), [0x10_0000, 0x1000]);
        let test_phandle = cells(prop(&fdt, test, "phandle"));
        for (node, value) in [("/poweroff", 0x5555), ("/reboot", 0x7777)] {
            assert_eq!(
                string(&fdt, node, "compatible"),
                format!("syscon{}", &node.replace('/', "-"))
            );
            assert_eq!(cells(prop(&fdt, node, "regmap")), test_phandle);
            assert_eq!(cells(prop(&fdt, node, "offset")), [0]);
            assert_eq!(cells(prop(&fdt, node, "value")), [value]);
        }

        let ctl = "/soc/nvmm-control@10100000";
        assert_eq!(string(&fdt, ctl, "compatible"), "rvnvmm,nvmm-control");
        assert_eq!(u64s(prop(&fdt, ctl, "reg")), [0x1010_0000, 0x1000]);
        assert_eq!(
            u64s(prop(&fdt, ctl, "rvnvmm,nvmm-regions")),
            [0xc000_0000, 0xc000_0000]
        );
    }

    #[test]
    fn pmem_mode_describes_nvmm_as_a_pmem_region() {
        let blob = nvmm_dtb(&board(1), NvmmMode::Pmem);
        let fdt = Fdt::new(&blob).unwrap();
        let pmem = "/pmem@c0000000";
        assert_eq!(string(&fdt, pmem, "compatible"), "pmem-region");
        assert_eq!(u64s(prop(&fdt, pmem, "reg")), [0xc000_0000, 0xc000_0000]);
        assert!(fdt.find_node(pmem).unwrap().property("volatile").is_none());
        assert_eq!(
            u64s(prop(&fdt, "/memory@80000000", "reg")),
            [0x8000_0000, 0x4000_0000]
        );
        assert!(fdt
            .find_node("/chosen")
            .unwrap()
            .property("linux,initrd-start")
            .is_none());
    }

    #[test]
    fn machine_without_nvmm_has_no_nvmm_nodes() {
        let mut cfg = Config::default();
        cfg.memory.regions.remove("nvmm");
        let b = Board::builder(&cfg).build().unwrap();
        for mode in [NvmmMode::Reserved, NvmmMode::Pmem] {
            let blob = nvmm_dtb(&b, mode);
            let fdt = Fdt::new(&blob).unwrap();
            assert!(fdt.all_nodes().all(|n| !n.name.starts_with("pmem")
                && !n.name.starts_with("nvmm-control")
                && !n.name.starts_with("virtio")));
        }
    }

    /// DRAM node 0, a slower DRAM node 1 and an NVMM node 2.
    const NUMA_MACHINE: &str = include_str!("../tests/data/dram-far-nvmm.toml");

    fn numa_board(sets: &[&str]) -> Board {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = Config::from_toml_str(NUMA_MACHINE, &sets).unwrap();
        Board::builder(&cfg).build().unwrap()
    }

    fn numa_id(fdt: &Fdt, path: &str) -> Option<u32> {
        let node = fdt.find_node(path).unwrap_or_else(|| panic!("no {path}"));
        node.property("numa-node-id")
            .map(|p| cells(p.value))
            .map(|c| c[0])
    }

    #[test]
    fn two_dram_nodes_are_numa_nodes_with_measured_distances() {
        let b = numa_board(&[]);
        let numa = b.numa().expect("two DRAM nodes want NUMA");
        assert_eq!(numa.cpu_node, 0);
        let ids: Vec<u32> = numa.nodes.nodes.iter().map(|n| n.0).collect();
        assert_eq!(ids, [0, 1, 2]);
        let far = numa.nodes.distance(0, 1);
        assert!(far > 20, "a 2 µs node is far from DDR3: {far}");
        for (mode, shown) in [(NvmmMode::Reserved, 2), (NvmmMode::Pmem, 3)] {
            let blob = nvmm_dtb(&b, mode);
            let fdt = Fdt::new(&blob).unwrap();
            assert_eq!(numa_id(&fdt, "/memory@80000000"), Some(0));
            assert_eq!(numa_id(&fdt, "/memory@c0000000"), Some(1));
            for h in 0..4 {
                assert_eq!(numa_id(&fdt, &format!("/cpus/cpu@{h}")), Some(0));
            }
            assert_eq!(
                string(&fdt, "/distance-map", "compatible"),
                "numa-distance-map-v1"
            );
            let matrix = cells(prop(&fdt, "/distance-map", "distance-matrix"));
            let want: Vec<u32> = numa
                .nodes
                .matrix()
                .into_iter()
                .filter(|&(a, b, _)| a < shown && b < shown)
                .flat_map(|(a, b, d)| [a, b, u32::from(d)])
                .collect();
            assert_eq!(matrix, want, "{mode:?}");
            assert_eq!(&matrix[..6], [0, 0, 10, 0, 1, u32::from(far)]);
            if mode == NvmmMode::Pmem {
                assert_eq!(numa_id(&fdt, "/pmem@100000000"), Some(2));
            }
        }
    }

    #[test]
    fn the_harts_are_on_the_fastest_dram_node() {
        // The slow DRAM first: node 0 is CPU-less, the harts on node 1.
        let b = numa_board(&["memory.dram.controller=far", "memory.far.controller=ddr3"]);
        assert_eq!(b.numa().unwrap().cpu_node, 1);
        let blob = b.dtb(&DtbOptions::default()).unwrap();
        let fdt = Fdt::new(&blob).unwrap();
        assert_eq!(numa_id(&fdt, "/cpus/cpu@0"), Some(1));
        assert_eq!(numa_id(&fdt, "/memory@80000000"), Some(0));
    }

    #[test]
    fn one_ram_node_has_no_numa_unless_a_region_names_its_node() {
        // The default machine: DRAM node 0 and NVMM node 1, one node of RAM.
        let plain = board(2);
        assert!(plain.numa().is_none());
        for mode in [NvmmMode::Reserved, NvmmMode::Pmem] {
            let blob = nvmm_dtb(&plain, mode);
            let fdt = Fdt::new(&blob).unwrap();
            assert!(fdt.find_node("/distance-map").is_none());
            assert!(fdt
                .all_nodes()
                .all(|n| n.property("numa-node-id").is_none()));
        }
        // Two DRAM regions given one node: still one node of RAM.
        let one = numa_board(&["memory.far.node=0", "memory.nvmm.node=1"]);
        assert!(one.numa().is_some(), "a region names its node");
        let mut cfg = Config::default();
        cfg.memory.regions.get_mut("nvmm").unwrap().node = Some(3);
        let b = Board::builder(&cfg).build().unwrap();
        let blob = nvmm_dtb(&b, NvmmMode::Pmem);
        let fdt = Fdt::new(&blob).unwrap();
        assert_eq!(numa_id(&fdt, "/memory@80000000"), Some(0));
        assert_eq!(numa_id(&fdt, "/pmem@c0000000"), Some(3));
        assert_eq!(numa_id(&fdt, "/cpus/cpu@0"), Some(0));
        let matrix = cells(prop(&fdt, "/distance-map", "distance-matrix"));
        assert_eq!(matrix.len(), 12);
        assert_eq!(&matrix[..3], [0, 0, 10]);
    }

    /// A soft-reserved region (CXL memory on `configs/dram-cxl.toml`) is a
    /// `pmem-region` on its own node in either NVMM mode, not a `memory`
    /// node; the harts stay on the boot-time DRAM node and the distance map
    /// still covers both nodes.
    #[test]
    fn a_soft_reserved_region_is_a_pmem_region_on_its_node() {
        let dram_cxl = include_str!("../../../configs/dram-cxl.toml");
        let sets = ["memory.cxl.soft_reserved=true".to_string()];
        let cfg = Config::from_toml_str(dram_cxl, &sets).unwrap();
        let b = Board::builder(&cfg).build().unwrap();
        assert_eq!(b.numa().unwrap().cpu_node, 0);
        let plain = Config::from_toml_str(dram_cxl, &[]).unwrap();
        let plain = Board::builder(&plain).build().unwrap();
        for mode in [NvmmMode::Reserved, NvmmMode::Pmem] {
            let blob = nvmm_dtb(&b, mode);
            let fdt = Fdt::new(&blob).unwrap();
            assert!(fdt.find_node("/memory@100000000").is_none(), "{mode:?}");
            let pmem = "/pmem@100000000";
            assert_eq!(string(&fdt, pmem, "compatible"), "pmem-region");
            assert_eq!(u64s(prop(&fdt, pmem, "reg")), [0x1_0000_0000, 0x8000_0000]);
            assert_eq!(numa_id(&fdt, pmem), Some(1));
            assert_eq!(numa_id(&fdt, "/memory@80000000"), Some(0));
            assert_eq!(numa_id(&fdt, "/cpus/cpu@0"), Some(0));
            let matrix = cells(prop(&fdt, "/distance-map", "distance-matrix"));
            let plain_blob = nvmm_dtb(&plain, mode);
            let plain_fdt = Fdt::new(&plain_blob).unwrap();
            let plain_matrix = cells(prop(&plain_fdt, "/distance-map", "distance-matrix"));
            assert_eq!(
                matrix, plain_matrix,
                "the same two nodes, the same distances"
            );
            assert!(plain_fdt.find_node("/memory@100000000").is_some());
            assert!(plain_fdt.find_node(pmem).is_none());
        }
    }

    #[test]
    fn bad_options_are_errors() {
        let b = board(1);
        let nul = DtbOptions {
            bootargs: "a\0b".into(),
            ..DtbOptions::default()
        };
        assert!(matches!(b.dtb(&nul), Err(DtbError::Fdt(_))));
    }

    /// `dtc` (scripts/setup.sh installs it) decompiles the blob without a
    /// warning: its checks cover unit addresses, `reg` sizes, interrupt
    /// and phandle references.
    #[test]
    fn dtc_accepts_the_blob_without_warnings() {
        if std::process::Command::new("dtc")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("dtc not installed: skipped (scripts/setup.sh installs it)");
            return;
        }
        let boards = [(board(4), "plain"), (numa_board(&[]), "numa")];
        for ((b, what), mode) in boards
            .iter()
            .flat_map(|b| [(b, NvmmMode::Reserved), (b, NvmmMode::Pmem)])
        {
            let blob = b
                .dtb(&DtbOptions {
                    bootargs: "console=ttyS0".into(),
                    initrd: Some((0x8400_0000, 0x8500_0000)),
                    nvmm: mode,
                    ..DtbOptions::default()
                })
                .unwrap();
            let path = std::env::temp_dir().join(format!(
                "rvnvmm-board-{}-{what}-{mode:?}.dtb",
                std::process::id()
            ));
            std::fs::write(&path, &blob).unwrap();
            let out = std::process::Command::new("dtc")
                .args(["-I", "dtb", "-O", "dts", "-o", "-"])
                .arg(&path)
                .output()
                .unwrap();
            let _ = std::fs::remove_file(&path);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && stderr.is_empty(), "dtc: {stderr}");
            let dts = String::from_utf8_lossy(&out.stdout);
            assert!(dts.contains("serial@10000000"), "{dts}");
        }
    }
}
