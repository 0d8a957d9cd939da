//! rvnvmm-timing
