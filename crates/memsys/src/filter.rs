//! Filter caches (ZSim's idea): per hart, a direct-mapped array of line
//! numbers known to hit in the hart's L1 with the needed permission.
//!
//! A filter hit costs a shift, an xor, a mask, a load and a compare; the
//! full cache model runs only when the filter misses. The filter is a
//! *subset* of the L1: an entry is removed whenever the L1 line leaves, or
//! loses the permission the table stands for (an eviction, a coherence
//! invalidation or downgrade, a flush), and — with LRU replacement — when
//! the line stops being the most recently used of its set, because a filter
//! hit does not update recency. So every access that would change the
//! cache's state (a miss, an upgrade, an E→M write, an LRU reorder) reaches
//! the model, and the cache contents, statistics and timing are exactly
//! those of running every access through it.

use std::cell::Cell;

/// Entries per table. Three tables of 1024 `u64` are 24 KiB per hart.
/// The layout (size and index) is the timing interface's, which lets a
/// core test the data tables itself (`rvnvmm_timing::FilterTables`).
pub use rvnvmm_timing::FILTER_ENTRIES;

/// Tag of an empty entry: never a line number.
const EMPTY: u64 = u64::MAX;

/// Index of a line (see `rvnvmm_timing::filter_index`).
#[inline(always)]
pub(crate) fn index(line: u64) -> usize {
    rvnvmm_timing::filter_index(line)
}

/// The filter of one hart.
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    /// Lines valid in the L1D (any of S, E, M).
    pub(crate) read: Box<[u64; FILTER_ENTRIES]>,
    /// Lines Modified in the L1D (a store needs no state change).
    pub(crate) write: Box<[u64; FILTER_ENTRIES]>,
    /// Lines valid in the L1I.
    pub(crate) fetch: Box<[u64; FILTER_ENTRIES]>,
    /// log2 of the L1D line size.
    pub(crate) d_shift: u32,
    /// log2 of the L1I line size.
    pub(crate) i_shift: u32,
    /// Hits served by the tables (added to the L1 hit counts).
    pub(crate) read_hits: Cell<u64>,
    pub(crate) write_hits: Cell<u64>,
    pub(crate) fetch_hits: Cell<u64>,
}

impl Filter {
    pub(crate) fn new(d_shift: u32, i_shift: u32) -> Filter {
        Filter {
            read: Box::new([EMPTY; FILTER_ENTRIES]),
            write: Box::new([EMPTY; FILTER_ENTRIES]),
            fetch: Box::new([EMPTY; FILTER_ENTRIES]),
            d_shift,
            i_shift,
            read_hits: Cell::new(0),
            write_hits: Cell::new(0),
            fetch_hits: Cell::new(0),
        }
    }

    /// The tables for a core that tests them itself. The tables are
    /// boxed and the counters live in the filter, which the memory system
    /// never moves once built (one per core, made with it).
    pub(crate) fn tables(&self) -> rvnvmm_timing::FilterTables {
        rvnvmm_timing::FilterTables {
            read: self.read.as_ptr(),
            write: self.write.as_ptr(),
            read_hits: self.read_hits.as_ptr(),
            write_hits: self.write_hits.as_ptr(),
            data_shift: u64::from(self.d_shift),
            fetch: self.fetch.as_ptr(),
            fetch_hits: self.fetch_hits.as_ptr(),
            fetch_shift: u64::from(self.i_shift),
        }
    }

    /// Records a readable L1D line.
    #[inline]
    pub(crate) fn fill_read(&mut self, line: u64) {
        self.read[index(line)] = line;
    }

    /// Records a Modified L1D line (readable and writable).
    #[inline]
    pub(crate) fn fill_write(&mut self, line: u64) {
        self.read[index(line)] = line;
        self.write[index(line)] = line;
    }

    /// Records a valid L1I line.
    #[inline]
    pub(crate) fn fill_fetch(&mut self, line: u64) {
        self.fetch[index(line)] = line;
    }

    /// The L1D lost `line`.
    #[inline]
    pub(crate) fn drop_data(&mut self, line: u64) {
        let i = index(line);
        forget(&mut self.read[i], line);
        forget(&mut self.write[i], line);
    }

    /// The L1D's `line` is no longer Modified.
    #[inline]
    pub(crate) fn drop_write(&mut self, line: u64) {
        let i = index(line);
        forget(&mut self.write[i], line);
    }

    /// The L1I lost `line`.
    #[inline]
    pub(crate) fn drop_fetch(&mut self, line: u64) {
        let i = index(line);
        forget(&mut self.fetch[i], line);
    }

    /// Empties the data tables.
    pub(crate) fn clear_data(&mut self) {
        self.read.fill(EMPTY);
        self.write.fill(EMPTY);
    }

    /// Empties the fetch table.
    pub(crate) fn clear_fetch(&mut self) {
        self.fetch.fill(EMPTY);
    }

    /// Every line in the data tables: `(line, writable)`.
    #[cfg(test)]
    pub(crate) fn data_entries(&self) -> Vec<(u64, bool)> {
        let mut v: Vec<(u64, bool)> = self
            .read
            .iter()
            .filter(|&&l| l != EMPTY)
            .map(|&l| (l, false))
            .collect();
        v.extend(
            self.write
                .iter()
                .filter(|&&l| l != EMPTY)
                .map(|&l| (l, true)),
        );
        v
    }

    /// Every line in the fetch table.
    #[cfg(test)]
    pub(crate) fn fetch_entries(&self) -> Vec<u64> {
        self.fetch.iter().copied().filter(|&l| l != EMPTY).collect()
    }
}

/// Empties a table entry if it holds `line`. Always stored, the old value
/// or EMPTY, so that no branch depends on it: whether a victim line is in
/// the filter is a coin toss the branch predictor loses on every miss.
#[inline(always)]
fn forget(entry: &mut u64, line: u64) {
    let e = *entry;
    *entry = if e == line { EMPTY } else { e };
}
