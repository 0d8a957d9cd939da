//! The NVMM-backed directory (`user.pmem_dir`): a DAX-like file system
//! whose files are frames of the NVMM region, so that libpmem's pmem
//! detection (a `MAP_SHARED_VALIDATE | MAP_SYNC` mapping) and PMDK pools
//! work in user mode, and the files live in the NVMM image.
//!
//! The namespace is a host directory (inside the emulated tree's temporary
//! directory): open, read, write, stat, readdir, unlink and rename are the
//! host's. Each of its regular files owns a run of pages (an *extent*) in
//! the NVMM region's second quarter, `[size/4, size/2)`, and the region's
//! memory at the extent *is* the host file's pages (a shared mapping,
//! `PhysMem::share_file_page`): a store through a guest `MAP_SYNC` mapping
//! (physical memory at the extent) and a `write(2)` to the file change the
//! same bytes. The partition's first page is a table of the files (name,
//! size, extent), in NVMM too, so an image saved by a run, or left by a
//! power failure, holds the files, and the next run finds them.
//!
//! Crash consistency of the metadata: a table entry is one 64-byte line,
//! written back to the persistence domain when it changes (at create,
//! resize, rename and unlink), after the pages a resize gives the file (so
//! an entry never points at pages that did not reach the domain). File data
//! persists as the guest persists it: stores through a mapping as any NVMM
//! store, `write(2)` like Linux 6.12's DAX write on riscv64 (plain copies,
//! not written back) until `fsync`/`fdatasync`/`msync` of the file, which
//! write its lines back (`dax_writeback_mapping_range`, `cbo.clean` on
//! riscv64).

use crate::errno::*;
use rvnvmm_mem::sv39::PAGE_SIZE;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

mod layer;

/// The table's entries are lines of this size; entry 0 is the header.
const ENTRY: u64 = 64;
const SLOTS: u64 = PAGE_SIZE / ENTRY;
const MAGIC: &[u8; 8] = b"RVPMDIR1";
/// The longest file name an entry holds (NUL-padded).
const NAME_MAX: usize = 40;

/// One file of the directory.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    name: Vec<u8>,
    /// Bytes.
    size: u64,
    /// First page of the extent, counted from the partition's base.
    start: u64,
    /// Pages of the extent: `ceil(size / 4096)`.
    pages: u64,
}

/// The directory of one process.
#[derive(Debug)]
pub(crate) struct PmemDir {
    /// The guest path, without a trailing slash.
    guest: Vec<u8>,
    /// The host directory holding the files.
    host: PathBuf,
    /// The partition: physical base and size (whole pages).
    base: u64,
    size: u64,
    /// Table slots 1.. (index 0 is the header).
    slots: Vec<Option<Entry>>,
    /// While a persistence trace is recorded: a file's extent (address
    /// and bytes) as it was before a host write to the file.
    traced_before: Option<(u64, Vec<u8>)>,
}

impl PmemDir {
    /// The partition of an NVMM region `(base, size)` the directory uses:
    /// its second quarter, so `/dev/nvmm` windows from offset 0 and the heap
    /// (the upper half, `user.heap = nvmm`) never share its frames.
    pub fn partition(nvmm: (u64, u64)) -> (u64, u64) {
        let quarter = (nvmm.1 / 4) & !(PAGE_SIZE - 1);
        (nvmm.0 + quarter, quarter)
    }

    fn table(&self) -> u64 {
        self.base
    }

    fn data_pages(&self) -> u64 {
        self.size / PAGE_SIZE - 1
    }

    fn page_addr(&self, page: u64) -> u64 {
        self.base + (1 + page) * PAGE_SIZE
    }

    fn slot(&self, name: &[u8]) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|e| e.name == name))
    }

    /// The first run of `pages` free pages, ignoring slot `except`'s.
    fn find_free(&self, pages: u64, except: Option<usize>) -> Option<u64> {
        let mut used: Vec<(u64, u64)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != except)
            .filter_map(|(_, s)| {
                s.as_ref()
                    .filter(|e| e.pages > 0)
                    .map(|e| (e.start, e.start + e.pages))
            })
            .collect();
        used.sort_unstable();
        let mut at = 0;
        for (s, e) in used {
            if s >= at + pages {
                return Some(at);
            }
            at = at.max(e);
        }
        (at + pages <= self.data_pages()).then_some(at)
    }
}

/// An entry as the table holds it in NVMM: one 64-byte line, the name
/// NUL-padded, then the sizes as little-endian words.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct Line {
    name: [u8; NAME_MAX],
    size: u64,
    start: u64,
    pages: u64,
}

const _: () = assert!(std::mem::size_of::<Line>() == ENTRY as usize);

/// The line of slot `e` (all zeros for a free slot).
fn encode(e: Option<&Entry>) -> Line {
    let mut l = Line::new_zeroed();
    if let Some(e) = e {
        l.name[..e.name.len()].copy_from_slice(&e.name);
        (l.size, l.start, l.pages) = (e.size, e.start, e.pages);
    }
    l
}

/// The entry a line holds; `None` for a free slot (an empty name).
fn decode(l: &Line) -> Option<Entry> {
    let len = l.name.iter().position(|&c| c == 0).unwrap_or(NAME_MAX);
    (len > 0).then(|| Entry {
        name: l.name[..len].to_vec(),
        size: l.size,
        start: l.start,
        pages: l.pages,
    })
}

/// A file system call as the directory, a layer over the host's file
/// system, sees it: the dispatcher classifies each call once and hands it
/// to [`Process::pmem_before`] and [`Process::pmem_after`].
///
/// [`Process::pmem_before`]: crate::process::Process::pmem_before
/// [`Process::pmem_after`]: crate::process::Process::pmem_after
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    /// mkdirat of the guest path at `path`.
    MakeDir { dirfd: i32, path: u64 },
    /// mknodat of the guest path at `path`, file type and mode `mode`.
    MakeNode { dirfd: i32, path: u64, mode: u32 },
    /// A call that may create, remove, rename or resize files by name
    /// (unlinkat, renameat2, truncate).
    Names,
    /// openat: the descriptor returned may name a new file.
    Opened,
    /// A call that may have created or resized the file `fd` has open.
    Wrote(i32),
    /// fsync or fdatasync of the file `fd` has open.
    Synced(i32),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(slots: &[(u64, u64)]) -> PmemDir {
        let mut d = PmemDir {
            guest: b"/mnt/pmem".to_vec(),
            host: PathBuf::from("/tmp/x"),
            base: 0x1000_0000,
            size: 64 * PAGE_SIZE,
            slots: vec![None; (SLOTS - 1) as usize],
            traced_before: None,
        };
        for (i, &(start, pages)) in slots.iter().enumerate() {
            d.slots[i] = Some(Entry {
                name: format!("f{i}").into_bytes(),
                size: pages * PAGE_SIZE,
                start,
                pages,
            });
        }
        d
    }

    #[test]
    fn entries_round_trip_through_a_line() {
        let e = Entry {
            name: b"pool.obj".to_vec(),
            size: 8 << 20,
            start: 3,
            pages: 2048,
        };
        assert_eq!(decode(&encode(Some(&e))), Some(e));
        assert_eq!(decode(&encode(None)), None);
    }

    #[test]
    fn free_runs_are_found_first_fit_and_the_partition_bounds_them() {
        let d = dir(&[(0, 4), (10, 5)]);
        assert_eq!(d.find_free(6, None), Some(4));
        assert_eq!(d.find_free(7, None), Some(15));
        assert_eq!(d.find_free(63 - 15, None), Some(15));
        assert_eq!(d.find_free(63 - 14, None), None);
        // Its own pages count as free when a file is moved.
        assert_eq!(d.find_free(9, Some(0)), Some(0));
    }

    #[test]
    fn the_partition_is_the_regions_second_quarter() {
        assert_eq!(
            PmemDir::partition((0x8000_0000, 1 << 30)),
            (0x8000_0000 + (1 << 28), 1 << 28)
        );
    }
}
