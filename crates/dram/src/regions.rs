//! The controller's regions: which address belongs to which, and each
//! NVMM region's method and settings.
use crate::method::{self, Ddr3, NvmmMethod, Spec};
use crate::{Access, Controller, DramError, Ps, RegionState};
use rvnvmm_config::NvmmParams;
impl Controller {
    /// Run-time control (the guest's control page): method and latencies of
    /// NVMM region `region`. Applies to commands decided from now on.
    pub fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), DramError> {
        let spec = self.spec;
        let r = self.nvmm_region(region)?;
        let method = method::build(params.method.as_str(), region, &params, &spec)?;
        r.nvmm = Some(params);
        r.method = method;
        Ok(())
    }

    /// Runs registered method `name` (see [`method::REGISTRY`]) in NVMM
    /// region `region`, with the region's current settings: a method
    /// without a `memory.NAME.method` spelling of its own (a model under
    /// study, a test double) runs this way. Applies to commands decided
    /// from now on.
    pub fn set_method(&mut self, region: &str, name: &str) -> Result<(), DramError> {
        let spec = self.spec;
        let r = self.nvmm_region(region)?;
        let params = r.nvmm.clone().unwrap_or_default();
        r.method = method::build(name, region, &params, &spec)?;
        Ok(())
    }

    /// The name of the method region `region` runs (`ddr3` for DRAM), or
    /// `None` for a region this controller does not serve.
    pub fn method(&self, region: &str) -> Option<&'static str> {
        self.regions
            .iter()
            .find(|r| r.name == region)
            .map(|r| r.method.name())
    }

    /// The settings of NVMM region `region`, or why there are none (no
    /// such region of this controller, or a DRAM one).
    pub fn nvmm_settings(&self, region: &str) -> Result<&NvmmParams, DramError> {
        let i = self.nvmm_index(region)?;
        self.regions[i]
            .nvmm
            .as_ref()
            .ok_or_else(|| DramError::NotNvmm(region.to_string()))
    }

    /// NVMM region `region`, or why there is none.
    pub(crate) fn nvmm_region(&mut self, region: &str) -> Result<&mut RegionState, DramError> {
        let i = self.nvmm_index(region)?;
        Ok(&mut self.regions[i])
    }

    /// The index of NVMM region `region`, or why there is none.
    pub(crate) fn nvmm_index(&self, region: &str) -> Result<usize, DramError> {
        let Some(i) = self.regions.iter().position(|r| r.name == region) else {
            return Err(DramError::UnknownRegion {
                controller: self.name.clone(),
                region: region.to_string(),
                known: self.regions.iter().map(|r| r.name.clone()).collect(),
            });
        };
        if self.regions[i].nvmm.is_none() {
            return Err(DramError::NotNvmm(region.to_string()));
        }
        Ok(i)
    }

    /// The region holding `paddr` among the bounds the controller was
    /// built with, and the offset into it; `(regions, 0)` for an address
    /// outside them (counted nowhere, timed as DRAM).
    pub(crate) fn locate(&self, paddr: u64) -> (usize, u64) {
        self.regions
            .iter()
            .position(|r| paddr >= r.base && paddr - r.base < r.size)
            .map_or((self.regions.len(), 0), |i| {
                (i, paddr - self.regions[i].base)
            })
    }

    /// The NVMM settings of `region` (None for DRAM or unknown regions).
    pub fn nvmm(&self, region: &str) -> Option<&NvmmParams> {
        self.regions
            .iter()
            .find(|r| r.name == region)
            .and_then(|r| r.nvmm.as_ref())
    }
}

/// The method hooks of region index `region`: those of its method for an
/// NVMM region, DDR3's for a DRAM region and one past the last region (an
/// address outside every region). A DRAM region's method is always
/// [`Ddr3`] (only NVMM regions change method), so its hooks are called
/// statically and inline. A free function so that the caller may use the
/// controller's other fields meanwhile.
#[inline]
pub(crate) fn method_of(regions: &mut [RegionState], region: usize) -> Hooks<'_> {
    match regions.get_mut(region) {
        Some(r) if r.nvmm.is_some() => Hooks::Method(r.method.as_mut()),
        _ => Hooks::Ddr3,
    }
}

/// The hooks [`method_of`] found.
pub(crate) enum Hooks<'a> {
    Ddr3,
    Method(&'a mut dyn NvmmMethod),
}

impl Hooks<'_> {
    #[inline]
    pub(crate) fn arrival(self, access: Access, at: Ps) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.arrival(access, at),
            Hooks::Method(m) => m.arrival(access, at),
        }
    }

    #[inline]
    pub(crate) fn activate(self, at: Ps, spec: &Spec) -> method::Activation {
        match self {
            Hooks::Ddr3 => Ddr3.activate(at, spec),
            Hooks::Method(m) => m.activate(at, spec),
        }
    }

    #[inline]
    pub(crate) fn column(self, access: Access, col: Ps, pre_ready: Ps) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.column(access, col, pre_ready),
            Hooks::Method(m) => m.column(access, col, pre_ready),
        }
    }

    #[inline]
    pub(crate) fn precharge(self, at: Ps, dirty: bool, spec: &Spec) -> Ps {
        match self {
            Hooks::Ddr3 => Ddr3.precharge(at, dirty, spec),
            Hooks::Method(m) => m.precharge(at, dirty, spec),
        }
    }
}
