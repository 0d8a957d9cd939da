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
    /// Column command to column command: tCCD_S (another bank group), or
    /// with one group tCCD_L (every pair of banks shares the group).
    pub(crate) ccd: Ps,
    /// ACT to ACT in the rank: tRRD_S, or with one group tRRD_L.
    pub(crate) rrd: Ps,
    /// tCCD_L and tRRD_L: column commands and ACTs to the same bank group
    /// of a rank (used only with `groups > 1`).
    pub(crate) ccd_l: Ps,
    pub(crate) rrd_l: Ps,
    /// Bank groups per rank (1: none, DDR3).
    pub(crate) groups: usize,
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
        for (k, v) in [
            ("tfaw_ns", c.tfaw_ns),
            ("tccd_l_ns", c.tccd_l_ns),
            ("trrd_l_ns", c.trrd_l_ns),
        ] {
            if let Some(v) = v {
                check_ns(k, v, false)?;
            }
        }
        if c.bank_groups == 0 || !c.banks.is_multiple_of(c.bank_groups) {
            return Err(DramError::Setting {
                key: "bank_groups".into(),
                problem: format!(
                    "must divide banks ({}) into equal groups, got {}",
                    c.banks, c.bank_groups
                ),
            });
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
        let (cl, cwl, burst) = (q(c.tcl_ns), q(c.tcwl_ns), q(c.tburst_ns));
        let groups = c.bank_groups.max(1) as usize;
        // _L is never shorter than _S. With one group every pair of banks is
        // in the same group: the _L spacing applies to all of them, through
        // the one list a rank (ACTs) and the channel (column commands) keep.
        let (ccd_s, rrd_s) = (q(c.tccd_ns), q(c.trrd_ns));
        let (ccd_l, rrd_l) = (q(c.tccd_l()).max(ccd_s), q(c.trrd_l()).max(rrd_s));
        let (ccd, rrd) = if groups > 1 {
            (ccd_s, rrd_s)
        } else {
            (ccd_l, rrd_l)
        };
        let faw = c.tfaw_ns.map(q);
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
            act_reach: rrd.max(rrd_l).max(faw.unwrap_or(0)),
            col_reach: ccd.max(ccd_l).max(cl.max(cwl) + burst),
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
            ccd_l,
            rrd_l,
            groups,
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
