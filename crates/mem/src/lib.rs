//! Guest physical memory and the Sv39 page-table format for rvnvmm.
//!
//! [`PhysMem`] backs every RAM region of the guest with lazily committed host
//! memory (so a 4 GiB machine costs only what the guest touches, and a host
//! `fork` duplicates it copy-on-write). [`sv39`] walks and edits page tables
//! that live in that memory, exactly as a hart's MMU and a kernel would.

pub mod persist;
pub mod persist_trace;
pub mod phys;
pub mod sv39;

pub use phys::{MemError, PhysMem, RamRegion};
pub use sv39::{Access, Fault, Pte, Translation, PAGE_SIZE};
