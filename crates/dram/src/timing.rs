//! The controller's timing parameters in picoseconds, quantised to its
//! clocks once when it is built.

use crate::error::check_ns;
use crate::grid::quantise;
use crate::method::Spec;
use crate::{DramError, Grid, Ps};

/// Timing parameters in picoseconds, quantised.
#[derive(Debug, Clone)]
pub(crate) struct Timing {
    /// The DRAM clock (commands issue through `tck_grid`).
    pub(crate) tck: Ps,
    pub(crate) clk: Ps,
    /// `tck` and `clk` as grids for [`Grid::up`].
    pub(crate) tck_grid: Grid,
    pub(crate) clk_grid: Grid,
    pub(crate) cl: Ps,
    pub(crate) cwl: Ps,
    pub(crate) burst: Ps,
    pub(crate) rcd: Ps,
    pub(crate) rp: Ps,
    pub(crate) ras: Ps,
    pub(crate) rtp: Ps,
    pub(crate) wr: Ps,
    pub(crate) ccd: Ps,
    pub(crate) rrd: Ps,
    pub(crate) faw: Option<Ps>,
    /// (tREFI, tRFC)
    pub(crate) refresh: Option<(Ps, Ps)>,
    /// Refreshes that may be postponed.
    pub(crate) postpone_max: u32,
    /// How far apart two ACTs of a rank can be and still constrain each
    /// other: `max(tRRD, tFAW)`.
    pub(crate) act_reach: Ps,
    /// How far apart (in command time) two column commands can be and
    /// still constrain each other: tCCD, or overlapping data bursts.
    pub(crate) col_reach: Ps,
    /// The controller clock and every DDR3 latency a command time is built
    /// from are whole DRAM clocks, so a time summed from command times,
    /// arrivals and these latencies needs no rounding to the DRAM clock
    /// (see [`Controller::commit_req`]).
    pub(crate) on_tck: bool,
}

impl Timing {
    pub(crate) fn new(c: &rvnvmm_config::ControllerConfig) -> Result<Timing, DramError> {
        check_ns("clock period (1000 / clock_mhz)", c.period_ns(), false)?;
        for (k, v) in [
            ("tck_ns", c.tck_ns),
            ("tcl_ns", c.tcl_ns),
            ("tcwl_ns", c.tcwl_ns),
            ("tburst_ns", c.tburst_ns),
            ("trcd_ns", c.trcd_ns),
            ("trp_ns", c.trp_ns),
            ("tras_ns", c.tras_ns),
            ("trtp_ns", c.trtp_ns),
            ("twr_ns", c.twr_ns),
            ("tccd_ns", c.tccd_ns),
            ("trrd_ns", c.trrd_ns),
        ] {
            check_ns(k, v, false)?;
        }
        if let Some(f) = c.tfaw_ns {
            check_ns("tfaw_ns", f, false)?;
        }
        let tck = ((c.tck_ns * 1000.0).round() as Ps).max(1);
        let clk = ((c.period_ns() * 1000.0).round() as Ps).max(1);
        let q = |ns: f64| quantise(ns, tck);
        let refresh = match &c.refresh {
            None => None,
            Some(r) => {
                check_ns("refresh.trefi_ns", r.trefi_ns, false)?;
                check_ns("refresh.trfc_ns", r.trfc_ns, false)?;
                let (refi, rfc) = (q(r.trefi_ns), q(r.trfc_ns));
                if rfc >= refi {
                    return Err(DramError::RefreshTooLong {
                        trfc_ns: r.trfc_ns,
                        trefi_ns: r.trefi_ns,
                    });
                }
                Some((refi, rfc))
            }
        };
        let (cl, cwl, burst, ccd) = (q(c.tcl_ns), q(c.tcwl_ns), q(c.tburst_ns), q(c.tccd_ns));
        let (rrd, faw) = (q(c.trrd_ns), c.tfaw_ns.map(q));
        let (rcd, rp, ras, rtp, wr) = (
            q(c.trcd_ns),
            q(c.trp_ns),
            q(c.tras_ns),
            q(c.trtp_ns),
            q(c.twr_ns),
        );
        // `quantise` gives whole clocks unless it saturated; check anyway.
        let on_tck = [clk, cl, cwl, burst, rcd, rp, ras, rtp, wr]
            .into_iter()
            .chain(refresh.map(|(_, rfc)| rfc))
            .all(|x| x % tck == 0);
        Ok(Timing {
            on_tck,
            postpone_max: c.refresh.as_ref().map_or(0, |r| r.postpone_max),
            act_reach: rrd.max(faw.unwrap_or(0)),
            col_reach: ccd.max(cl.max(cwl) + burst),
            tck,
            clk,
            tck_grid: Grid::new(tck),
            clk_grid: Grid::new(clk),
            cl,
            cwl,
            burst,
            rcd,
            rp,
            ras,
            rtp,
            wr,
            ccd,
            rrd,
            faw,
            refresh,
        })
    }

    /// What the methods start from.
    pub(crate) fn spec(&self) -> Spec {
        Spec {
            rcd: self.rcd,
            rp: self.rp,
            ras: self.ras,
            tck: self.tck,
            clk: self.clk,
        }
    }
}
