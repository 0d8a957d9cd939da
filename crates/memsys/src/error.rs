//! What can go wrong building or reconfiguring the memory system.

use rvnvmm_dram::DramError;

/// A memory system that cannot be built, or a run-time change it refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemsysError {
    /// The host could not allocate a cache's arrays (config validation
    /// bounds the sizes; the host may still lack the memory).
    #[error("{cache}: cannot allocate host memory for {lines} cache lines ({size_bytes} bytes); shrink the cache")]
    CacheMemory {
        /// The cache.
        cache: String,
        /// Lines to allocate.
        lines: usize,
        /// Capacity.
        size_bytes: u64,
    },

    /// No hart to serve.
    #[error("the memory system needs at least one hart")]
    NoHarts,

    /// A bus latency outside what the model's picosecond times can hold
    /// (config validation refuses it first).
    #[error("{key} must be a non-negative number of ns, at most 1e12, got {value}")]
    Latency {
        /// The config key (`bus.request_latency_ns`, ...).
        key: &'static str,
        /// The value given.
        value: f64,
    },

    /// A cache line size the model cannot use.
    #[error("{cache}: line_bytes {line_bytes} must be a power of two of at least 4")]
    LineBytes {
        /// The cache (`hart0.l1d`, `l2`, ...).
        cache: String,
        /// The size given.
        line_bytes: u32,
    },

    /// A cache geometry that is not a power-of-two number of sets.
    #[error("{cache}: {size_bytes} bytes in {ways} ways of {line_bytes} bytes is not a power-of-two number of sets")]
    Sets {
        /// The cache.
        cache: String,
        /// Capacity.
        size_bytes: u64,
        /// Associativity.
        ways: u32,
        /// Line size.
        line_bytes: u32,
    },

    /// An L1 whose lines differ from the L2's.
    #[error("cache.{level}.line_bytes ({line_bytes}) must equal cache.l2.line_bytes ({l2_line_bytes}) when the L2 is enabled")]
    L2LineBytes {
        /// `l1i` or `l1d`.
        level: &'static str,
        /// The L1's line size.
        line_bytes: u32,
        /// The L2's.
        l2_line_bytes: u32,
    },

    /// Two controller models under one name.
    #[error("controller '{0}' given twice")]
    ControllerTwice(String),

    /// A region whose controller has no model.
    #[error("region '{region}' names controller '{controller}', which has no model")]
    NoModel {
        /// The region.
        region: String,
        /// The controller it names.
        controller: String,
    },

    /// A region name the machine does not have.
    #[error("no memory region named '{0}'")]
    UnknownRegion(String),

    /// A change the controller model of `region` does not support.
    #[error("this memory controller cannot {what} of region '{region}' at run time")]
    Unsupported {
        /// The region.
        region: String,
        /// What was asked (`change the NVMM method`, `move the boundary`).
        what: &'static str,
    },

    /// A controller of a technology nobody registered.
    #[error("memory.controllers.{controller}.technology: no technology '{name}'; the registered ones are: {}", .known.join(", "))]
    UnknownTechnology {
        /// The controller.
        controller: String,
        /// The name asked for.
        name: String,
        /// The registered names.
        known: Vec<&'static str>,
    },

    /// A setting the technology refused.
    #[error("{key}: {problem}")]
    Setting {
        /// The config key (or `memory.NAME` for a run-time change).
        key: String,
        /// What is wrong.
        problem: String,
    },

    /// A boundary move with no node below to take the difference.
    #[error("no memory node of controller '{controller}' ends where '{node}' begins, so there is no boundary to move")]
    NoBoundary {
        /// The node asked for.
        node: String,
        /// Its controller.
        controller: String,
    },

    /// A boundary that is misaligned or leaves a node empty.
    #[error(
        "boundary {boundary:#x} must be 4 KiB aligned and strictly between {low:#x} and {end:#x}"
    )]
    Boundary {
        /// The boundary asked for.
        boundary: u64,
        /// Base of the node below.
        low: u64,
        /// End of the node.
        end: u64,
    },

    /// The controller model refused.
    #[error(transparent)]
    Controller(#[from] DramError),
}
