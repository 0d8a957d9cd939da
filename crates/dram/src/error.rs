//! What can go wrong building or reconfiguring a controller.

/// The longest latency a setting may give, in ns: the config's bound
/// (1000 s: far beyond any device, and far below [`crate::HORIZON`], so no
/// sum of latencies saturates), applied to run-time changes too.
pub use rvnvmm_config::MAX_LATENCY_NS;

/// A controller that cannot be built, or a run-time change it refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DramError {
    /// [`crate::Controller::from_config`] with a name the config lacks.
    #[error("no controller '{name}'; the config defines: {}", .known.join(", "))]
    UnknownController {
        /// The name asked for.
        name: String,
        /// The controllers the config defines.
        known: Vec<String>,
    },

    /// A problem in the configuration of controller `controller`.
    #[error("memory controller '{controller}': {problem}")]
    Setup {
        /// The controller's name.
        controller: String,
        /// What is wrong.
        problem: Box<DramError>,
    },

    /// A latency that is not a positive (or, where allowed, zero) finite
    /// number of ns up to [`MAX_LATENCY_NS`].
    #[error(
        "{key} must be a {} number of ns, at most 1e12, got {value}",
        if *.zero_allowed { "non-negative" } else { "positive" }
    )]
    Latency {
        /// The key (`trcd_ns`, `memory.nvmm.trp_ns`, ...).
        key: String,
        /// The value given.
        value: f64,
        /// Whether 0 is allowed.
        zero_allowed: bool,
    },

    /// A setting out of its range (other than a latency).
    #[error("{key} {problem}")]
    Setting {
        /// The key (`memory.nvmm.optane.dimms`, ...).
        key: String,
        /// What is wrong with its value.
        problem: String,
    },

    /// tRFC not below tREFI.
    #[error("refresh.trfc_ns ({trfc_ns}) must be below refresh.trefi_ns ({trefi_ns}), or the rank never leaves refresh")]
    RefreshTooLong {
        /// Duration of one refresh.
        trfc_ns: f64,
        /// Interval between refreshes.
        trefi_ns: f64,
    },

    /// A controller with no region to serve.
    #[error("serves no region; give at least one (name, base, size, nvmm)")]
    NoRegion,

    /// The address mapping does not fit the geometry.
    #[error("{0}")]
    Mapping(String),

    /// A geometry wider than a physical address.
    #[error("geometry needs {0} address bits; at most 64 are supported")]
    AddressBits(u32),

    /// Too many (or no) banks.
    #[error("ranks x banks = {ranks} x {banks} is not supported (1..=65536)")]
    Banks {
        /// Ranks per channel.
        ranks: u32,
        /// Banks per rank.
        banks: u32,
    },

    /// [`crate::Controller::set_line_bytes`] with a size that is not a power of two.
    #[error("line size must be a power of two, got {0}")]
    LineBytes(u64),

    /// A region the controller does not serve.
    #[error("controller '{controller}' serves no region '{region}'; it serves: {}", .known.join(", "))]
    UnknownRegion {
        /// The controller.
        controller: String,
        /// The region asked for.
        region: String,
        /// The regions it serves.
        known: Vec<String>,
    },

    /// NVMM settings for a DRAM region.
    #[error(
        "region '{0}' is DRAM; NVMM methods and latencies apply only to kind = \"nvmm\" regions"
    )]
    NotNvmm(String),

    /// A method name no module registered.
    #[error("no NVMM method '{name}'; the registered methods are: {}", .known.join(", "))]
    UnknownMethod {
        /// The name asked for.
        name: String,
        /// The registered names.
        known: Vec<&'static str>,
    },
}

impl DramError {
    /// `problem`, found in the configuration of controller `controller`.
    pub(crate) fn setup(controller: &str, problem: DramError) -> DramError {
        DramError::Setup {
            controller: controller.to_string(),
            problem: Box::new(problem),
        }
    }
}

/// Checks that `v` is a latency the model can hold: finite, positive (or 0
/// where `zero_allowed`), at most [`MAX_LATENCY_NS`].
pub(crate) fn check_ns(key: &str, v: f64, zero_allowed: bool) -> Result<(), DramError> {
    let ok = v.is_finite() && (v > 0.0 || (zero_allowed && v == 0.0)) && v <= MAX_LATENCY_NS;
    if ok {
        Ok(())
    } else {
        Err(DramError::Latency {
            key: key.to_string(),
            value: v,
            zero_allowed,
        })
    }
}
