//! NVMM emulation methods: plug-ins of the shared DDR3 controller path.
//!
//! The controller keeps one [`NvmmMethod`] per region and calls its hooks
//! where a method may change what DDR3 does: when a request arrives at the
//! controller input ([`NvmmMethod::arrival`]), when a row is activated
//! ([`NvmmMethod::activate`]) or accessed ([`NvmmMethod::column`]), when it
//! is precharged and its data written back to the cells
//! ([`NvmmMethod::precharge`]), when a refresh finds it open
//! ([`NvmmMethod::refresh_close`]), and for statistics of its own
//! ([`NvmmMethod::counters`]). Every hook has the plain DDR3 behaviour as
//! its default, which is what DRAM regions run ([`Ddr3`]). A method keeps
//! whatever state it needs (a write-combining buffer, an indirection
//! cache): the controller owns it for the region's lifetime, and a new
//! setting from the control page builds a new one.
//!
//! # Adding a method
//! One new file in this directory: a type implementing [`NvmmMethod`] and a
//! `pub const REGISTRATION: Registration` naming it and building it from a
//! region's settings; and one line in the `methods!` list below. To select
//! it from TOML (`memory.NAME.method`), its name also goes into
//! `rvnvmm_config::Method`, and new keys into `rvnvmm_config::NvmmParams`.
//! `added_latency.rs` (compiled for tests only) is the smallest example.

use std::fmt;

use rvnvmm_config::NvmmParams;

use crate::error::check_ns;
use crate::grid::quantise;
use crate::{Access, DramError, Ps};

/// Declares the method modules and [`REGISTRY`]: one line per method.
macro_rules! methods {
    ($($(#[$meta:meta])* $module:ident,)+) => {
        $( $(#[$meta])* pub mod $module; )+

        /// Every registered method, in the order listed.
        pub const REGISTRY: &[Registration] = &[$( $(#[$meta])* $module::REGISTRATION, )+];
    };
}

methods! {
    coarse,
    fine,
    proposed,
    optane,
    #[cfg(test)]
    added_latency,
}

/// The DDR3 timing of the controller that a method starts from, in ps,
/// quantised to the DRAM clock, and the controller clock the NVMM settings
/// are quantised to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// ACT → column command.
    pub rcd: Ps,
    /// PRE → ACT.
    pub rp: Ps,
    /// ACT → PRE minimum.
    pub ras: Ps,
    /// DRAM clock period.
    pub tck: Ps,
    /// Controller clock period.
    pub clk: Ps,
}

impl Spec {
    /// `ns` rounded up to whole controller clocks: how the FPGA emulators
    /// (and so the NVMM settings here) count latencies (5 ns at 200 MHz).
    pub fn controller_clocks(&self, ns: f64) -> Ps {
        quantise(ns, self.clk)
    }
}

/// The timing of a row just activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activation {
    /// Earliest column command.
    pub col_ready: Ps,
    /// Earliest PRE (the row's keep-open time).
    pub pre_ready: Ps,
}

/// An open row as a refresh sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenWindow {
    /// Earliest PRE under the row's own (possibly stretched) timing.
    pub pre_ready: Ps,
    /// Earliest PRE under the DDR3 timing of the controller config (tRAS,
    /// tRTP, tWR).
    pub pre_spec: Ps,
}

/// What an NVMM emulation method changes in the controller's DDR3 timing.
/// All times are absolute [`Ps`]; every hook defaults to DDR3.
pub trait NvmmMethod: fmt::Debug + Send {
    /// The registered name (`memory.NAME.method`), or `ddr3` for DRAM.
    fn name(&self) -> &'static str;

    /// A request presented at the controller input at `at` (after the
    /// requests ahead of it were accepted): when it enters the scheduler.
    /// The input is in order, so a hold here delays the requests behind it
    /// too (seed 000's coarse-grain method).
    fn arrival(&mut self, access: Access, at: Ps) -> Ps {
        let _ = access;
        at
    }

    /// An ACT of one of the region's rows at `at`.
    fn activate(&mut self, at: Ps, spec: &Spec) -> Activation {
        Activation {
            col_ready: at.saturating_add(spec.rcd),
            pre_ready: at.saturating_add(spec.ras),
        }
    }

    /// A column command at `col` in a row this region opened, whose
    /// earliest PRE (after tRAS, tRTP, tWR) is `pre_ready`: the row's
    /// earliest PRE from now on.
    fn column(&mut self, access: Access, col: Ps, pre_ready: Ps) -> Ps {
        let _ = (access, col);
        pre_ready
    }

    /// A PRE at `at` of a row this region opened, `dirty` if it was written
    /// since its ACT: when its data is back in the cells and the bank may
    /// activate again (the write-back that commits its writes).
    fn precharge(&mut self, at: Ps, dirty: bool, spec: &Spec) -> Ps {
        let _ = dirty;
        at.saturating_add(spec.rp)
    }

    /// A refresh due at `due` finds `row` open: when it closes the row. The
    /// default is the refresh path of seed 001 §3.1, which the methods do
    /// not change: an automatic precharge already due happens then;
    /// otherwise the row closes at the due time or as soon as the DDR3
    /// timing allows, without waiting out a stretched keep-open window.
    fn refresh_close(&self, row: OpenWindow, due: Ps) -> Ps {
        if row.pre_ready <= due {
            row.pre_ready
        } else {
            row.pre_spec.max(due)
        }
    }

    /// Counters of the method's own, `(name, value)`, reported with the
    /// region's statistics. Default: none.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Zeroes the method's own counters (and rates, histograms, wear).
    fn reset_counters(&mut self) {}

    /// Serves a request itself, in place of the DDR3 banks: a device with
    /// queues and buffers of its own behind the controller input (method
    /// `optane`). `offset` is the request's byte address within the region,
    /// `at` when it enters (after [`NvmmMethod::arrival`] and the read
    /// queue). Returns, for a read, when its data leaves the controller; for
    /// a write, when the controller accepted it (what the writer waits
    /// for). `None` (the default): the DDR3 path serves it.
    fn serve(&mut self, access: Access, offset: u64, at: Ps) -> Option<Ps> {
        let _ = (access, offset, at);
        None
    }

    /// When the work the method's own device has taken on is done
    /// ([`crate::Controller::finish`]). Default: 0 (none).
    fn idle(&self) -> Ps {
        0
    }

    /// Rates the method derives from its counters, `(name, value)`.
    /// Default: none.
    fn rates(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// Latency histograms of the method's own, `(name, histogram)` with
    /// the buckets of [`crate::empty_histogram`]. Default: none.
    fn histograms(&self) -> Vec<(&'static str, Vec<(Ps, u64)>)> {
        Vec::new()
    }

    /// Wear of the medium as the method counts it; `None` (the default):
    /// the controller counts dirty row write-backs per row.
    fn wear(&self) -> Option<crate::Wear> {
        None
    }
}

/// A method as registered: its name and how to build it from a region's
/// settings (already checked: every latency of the setting is valid).
#[derive(Clone, Copy)]
pub struct Registration {
    /// The name `memory.NAME.method` gives.
    pub name: &'static str,
    /// Builds the method for one region.
    pub build: fn(&NvmmParams, &Spec) -> Box<dyn NvmmMethod>,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The plain DDR3 timing: DRAM regions, and addresses outside every region.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ddr3;

impl NvmmMethod for Ddr3 {
    fn name(&self) -> &'static str {
        "ddr3"
    }
}

/// Names of the registered methods.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|r| r.name).collect()
}

/// Checks a region's NVMM setting as a whole: every latency, also those
/// the selected method does not read (the setting is one record, and the
/// control page may switch methods at any time).
pub(crate) fn check_settings(region: &str, p: &NvmmParams) -> Result<(), DramError> {
    let k = |f: &str| format!("memory.{region}.{f}");
    check_ns(&k("trcd_ns"), p.trcd_ns, false)?;
    check_ns(&k("trp_ns"), p.trp_ns, false)?;
    check_ns(&k("tras_ns"), p.tras_ns, false)?;
    check_ns(&k("coarse_read_ns"), p.coarse_read_ns, true)?;
    check_ns(&k("coarse_write_ns"), p.coarse_write_ns, true)?;
    match p.optane.problems().into_iter().next() {
        Some((key, problem)) => Err(DramError::Setting {
            key: k(&format!("optane.{key}")),
            problem,
        }),
        None => Ok(()),
    }
}

/// Builds method `name` for region `region` with settings `p`.
pub(crate) fn build(
    name: &str,
    region: &str,
    p: &NvmmParams,
    spec: &Spec,
) -> Result<Box<dyn NvmmMethod>, DramError> {
    check_settings(region, p)?;
    let r = REGISTRY
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| DramError::UnknownMethod {
            name: name.to_string(),
            known: names(),
        })?;
    Ok((r.build)(p, spec))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rvnvmm_config::Method;

    #[test]
    fn every_configurable_method_is_registered_once() {
        for name in Method::NAMES {
            let n = REGISTRY.iter().filter(|r| r.name == *name).count();
            assert_eq!(n, 1, "method '{name}' registered {n} times");
        }
        let mut all = names();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), REGISTRY.len(), "a name registered twice");
    }

    #[test]
    fn built_methods_report_their_name() {
        let spec = Spec {
            rcd: 13_750,
            rp: 13_750,
            ras: 35_000,
            tck: 1250,
            clk: 5000,
        };
        for r in REGISTRY {
            let m = build(r.name, "nvmm", &NvmmParams::default(), &spec).unwrap();
            assert_eq!(m.name(), r.name);
        }
        let e = build("optone", "nvmm", &NvmmParams::default(), &spec).unwrap_err();
        assert!(e.to_string().contains("proposed"), "{e}");
        let bad = NvmmParams {
            trcd_ns: 0.0,
            ..NvmmParams::default()
        };
        let e = build("coarse", "nvmm", &bad, &spec).unwrap_err();
        assert!(e.to_string().contains("memory.nvmm.trcd_ns"), "{e}");
    }
}
