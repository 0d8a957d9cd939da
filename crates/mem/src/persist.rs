//! NVMM that outlives a run: the image file behind a region, and the
//! persistence domain (which of the guest's stores would survive a power
//! failure, `docs/persistence.md`).
//!
//! The guest's stores always go to [`PhysMem`] (the volatile view: what the
//! caches and memory hold together). A [`Domain`] keeps, beside it, the lines
//! that have reached the persistence domain since the start of the run: under
//! ADR a line gets there when a flush of it is ordered by a later fence of the
//! same hart, or when the timing model writes it back to memory; under eADR
//! every store is there at once, so nothing needs keeping. Stores themselves
//! are never seen here: all the work is at flushes, fences and write-backs.

use crate::persist_trace::{PersistTrace, TraceKind};
use crate::PhysMem;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const PAGE: u64 = 4096;

/// Errors of an NVMM image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The file exists with another size than the region.
    #[error("NVMM image {path}: the file holds {file} bytes but the region is {region} bytes (use an image made for this region, or delete it to start from zero)")]
    Size {
        /// The image.
        path: PathBuf,
        /// Its size.
        file: u64,
        /// The region's size.
        region: u64,
    },
    /// A host I/O error.
    #[error("NVMM image {path}: cannot {what}: {source}")]
    Io {
        /// The image.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The host's error.
        source: io::Error,
    },
    /// The region is not RAM of the machine.
    #[error("NVMM image {path}: the region {base:#x}+{size:#x} is not guest RAM")]
    NotRam {
        /// The image.
        path: PathBuf,
        /// Region base.
        base: u64,
        /// Region size.
        size: u64,
    },
}

/// A host file holding the contents of one NVMM region, byte for byte
/// (holes read as zero).
#[derive(Debug, Clone)]
pub struct NvmmImage {
    path: PathBuf,
    base: u64,
    size: u64,
}

impl NvmmImage {
    /// Opens the image of the region `base`+`size`, creating a sparse zero
    /// file if there is none. A file of another size is an error. Leftover
    /// temporary files of saves that were killed are removed.
    pub fn open(path: &Path, base: u64, size: u64) -> Result<NvmmImage, ImageError> {
        let image = NvmmImage {
            path: path.to_path_buf(),
            base,
            size,
        };
        image.remove_stale_temporaries();
        match std::fs::metadata(path) {
            Ok(m) if m.len() == size => {}
            Ok(m) => {
                return Err(ImageError::Size {
                    path: image.path,
                    file: m.len(),
                    region: size,
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // Created through the same crash-safe path as a save, so a
                // half-created image never appears under the name.
                let tmp = image.temporary();
                let f = image.create_temporary(&tmp)?;
                image.commit(f, &tmp)?;
            }
            Err(e) => return Err(image.io("read the file's size", e)),
        }
        Ok(image)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, what: &'static str, source: io::Error) -> ImageError {
        ImageError::Io {
            path: self.path.clone(),
            what,
            source,
        }
    }

    /// Copies the image into the region's memory (only its data extents:
    /// the region starts zeroed).
    pub fn load(&self, mem: &mut PhysMem) -> Result<(), ImageError> {
        let host = self.region_ptr(mem)?;
        let f = File::open(&self.path).map_err(|e| self.io("open it for reading", e))?;
        for (start, end) in data_extents(&f, self.size).map_err(|e| self.io("find its data", e))? {
            // SAFETY: [start, end) lies inside the region (extents are
            // clamped to its size), whose host memory is ours and is not a
            // Rust reference anywhere.
            let dst = unsafe {
                std::slice::from_raw_parts_mut(host.add(start as usize), (end - start) as usize)
            };
            f.read_exact_at(dst, start)
                .map_err(|e| self.io("read it", e))?;
        }
        Ok(())
    }

    /// Writes the region's memory as it is now (a clean shutdown), crash
    /// safely.
    pub fn save(&self, mem: &PhysMem) -> Result<(), ImageError> {
        let host = self.region_ptr(mem)?;
        let tmp = self.temporary();
        let f = self.create_temporary(&tmp)?;
        for page in candidate_pages(host, self.size) {
            // SAFETY: the page lies inside the region's host memory.
            let data =
                unsafe { std::slice::from_raw_parts(host.add(page as usize), PAGE as usize) };
            if !is_zero(data) {
                f.write_all_at(data, page)
                    .map_err(|e| self.io("write a temporary copy", e))?;
            }
        }
        self.commit(f, &tmp)
    }

    /// Copies the image to `dst` (a new file), keeping its holes.
    pub fn copy_to(&self, dst: &Path) -> Result<(), ImageError> {
        let src = File::open(&self.path).map_err(|e| self.io("open it for reading", e))?;
        let out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(dst)
            .map_err(|e| self.io("create a copy", e))?;
        out.set_len(self.size)
            .map_err(|e| self.io("size a copy", e))?;
        let mut buf = vec![0u8; 1 << 20];
        for (start, end) in
            data_extents(&src, self.size).map_err(|e| self.io("find its data", e))?
        {
            let mut at = start;
            while at < end {
                let n = ((end - at) as usize).min(buf.len());
                src.read_exact_at(&mut buf[..n], at)
                    .map_err(|e| self.io("read it", e))?;
                out.write_all_at(&buf[..n], at)
                    .map_err(|e| self.io("write a copy", e))?;
                at += n as u64;
            }
        }
        Ok(())
    }

    fn region_ptr(&self, mem: &PhysMem) -> Result<*mut u8, ImageError> {
        mem.host_ptr(self.base, self.size)
            .ok_or_else(|| ImageError::NotRam {
                path: self.path.clone(),
                base: self.base,
                size: self.size,
            })
    }

    /// `.NAME.tmp.PID` beside the image.
    fn temporary(&self) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map_or_else(|| "nvmm".into(), |n| n.to_string_lossy().into_owned());
        self.path
            .with_file_name(format!(".{name}.tmp.{}", std::process::id()))
    }

    /// A new, sparse, zero file of the region's size.
    fn create_temporary(&self, tmp: &Path) -> Result<File, ImageError> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)
            .map_err(|e| self.io("create a temporary copy beside it", e))?;
        f.set_len(self.size)
            .map_err(|e| self.io("size the temporary copy", e))?;
        Ok(f)
    }

    /// Syncs `tmp`, renames it over the image and syncs the directory: at
    /// every moment the name holds either the old or the new contents.
    fn commit(&self, f: File, tmp: &Path) -> Result<(), ImageError> {
        f.sync_all()
            .map_err(|e| self.io("sync the temporary copy", e))?;
        drop(f);
        std::fs::rename(tmp, &self.path)
            .map_err(|e| self.io("rename the temporary copy over it", e))?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| self.io("sync its directory", e))
    }

    /// Removes `.NAME.tmp.PID` files whose process no longer exists (a save
    /// killed before its rename).
    fn remove_stale_temporaries(&self) {
        let Some(name) = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return;
        };
        let prefix = format!(".{name}.tmp.");
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = file
                .strip_prefix(&prefix)
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: kill with signal 0 only checks that the process exists.
            let gone = unsafe { libc::kill(pid, 0) } != 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The `[start, end)` ranges of `f` holding data (`SEEK_DATA`/`SEEK_HOLE`),
/// within `size`. A file system without them reports one extent.
fn data_extents(f: &File, size: u64) -> io::Result<Vec<(u64, u64)>> {
    let fd = f.as_raw_fd();
    let mut out = Vec::new();
    let mut pos = 0u64;
    while pos < size {
        // SAFETY: lseek on a descriptor we own.
        let start = unsafe { libc::lseek(fd, pos as i64, libc::SEEK_DATA) };
        if start < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENXIO) {
                break; // No data after pos.
            }
            return Err(e);
        }
        // SAFETY: as above.
        let end = unsafe { libc::lseek(fd, start, libc::SEEK_HOLE) };
        if end < 0 {
            return Err(io::Error::last_os_error());
        }
        let (start, end) = (start as u64, (end as u64).min(size));
        if start >= end {
            break;
        }
        out.push((start, end));
        pos = end;
    }
    Ok(out)
}

/// Page offsets of a region's host memory that may hold anything but zero:
/// pages present or swapped out according to `/proc/self/pagemap` (a page
/// never touched is neither, and reads as zero). Every page if the map
/// cannot be read.
fn candidate_pages(host: *const u8, size: u64) -> Vec<u64> {
    let pages = size / PAGE;
    let all = || (0..pages).map(|p| p * PAGE).collect();
    let Ok(map) = File::open("/proc/self/pagemap") else {
        return all();
    };
    let first = host as u64 / PAGE;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 8 * 4096];
    let mut done = 0u64;
    while done < pages {
        let n = (pages - done).min(4096);
        let bytes = &mut buf[..(n * 8) as usize];
        if map.read_exact_at(bytes, (first + done) * 8).is_err() {
            return all();
        }
        for (i, e) in bytes.chunks_exact(8).enumerate() {
            let entry = u64::from_le_bytes(e.try_into().expect("8 bytes"));
            // Bit 63: present; bit 62: swapped.
            if entry & (3 << 62) != 0 {
                out.push((done + i as u64) * PAGE);
            }
        }
        done += n;
    }
    out
}

fn is_zero(data: &[u8]) -> bool {
    let (head, words, tail) = {
        // SAFETY: every bit pattern is a valid u64.
        unsafe { data.align_to::<u64>() }
    };
    head.iter().all(|&b| b == 0) && words.iter().all(|&w| w == 0) && tail.iter().all(|&b| b == 0)
}

/// Which stores survive a power failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainKind {
    /// The region is volatile: nothing the run wrote survives.
    Volatile,
    /// The controller's write queue is in the domain, the caches are not.
    Adr,
    /// The caches are in the domain too.
    Eadr,
}

/// What reached the domain, and when, for `rvnvmm crashtest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Instructions retired (all harts) before the one that caused it.
    pub insn: u64,
    /// What it was.
    pub kind: EventKind,
}

/// See [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A flush of an NVMM line (`cbo.clean`, `cbo.flush`, `cflush.d.l1`).
    Flush,
    /// A fence that completed this many flushes.
    Fence(u64),
}

/// A flush not yet ordered by a fence: the line as it was when flushed.
#[derive(Clone, Debug)]
struct InFlight {
    hart: u64,
    line: u64,
    data: Box<[u8]>,
}

/// Counters of the domain (`--stats` `crash`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DomainCounters {
    /// Flushes of NVMM lines seen.
    pub flushes: u64,
    /// Flushes that a fence completed.
    pub flushes_completed: u64,
    /// Lines the timing model wrote back to the region (evictions).
    pub write_backs: u64,
}

/// The persistence domain of one NVMM region.
#[derive(Debug)]
pub struct Domain {
    kind: DomainKind,
    base: u64,
    size: u64,
    line_bytes: u64,
    /// Lines that reached the domain since the start: offset -> contents.
    persisted: HashMap<u64, Box<[u8]>, BuildHasherDefault<LineHasher>>,
    in_flight: Vec<InFlight>,
    /// Line buffers to reuse: a flush takes one, a fence that finds its
    /// line persisted already gives it back (no allocation per flush).
    spare: Vec<Box<[u8]>>,
    /// Added to a hart's own instruction count to give the machine's.
    insn_base: u64,
    events: Option<Vec<Event>>,
    /// Every write to the region and every flush and fence, for the
    /// crash-state explorer.
    trace: Option<Box<PersistTrace>>,
    /// Whether `cflush.d.l1` writes a line to memory: true in the
    /// functional model and on machines without a shared L2 (with one, the
    /// line goes to the L2, and reaches memory when the L2 evicts it).
    pub l1_flush_reaches_memory: bool,
    /// Counters.
    pub counters: DomainCounters,
}

/// The most events a run records (a crash test samples points from them).
pub const MAX_EVENTS: usize = 1 << 20;

impl Domain {
    /// The domain of the region `base`+`size`, tracked per `line_bytes`
    /// (a power of two from 8 to 4096: the data cache's line).
    pub fn new(kind: DomainKind, base: u64, size: u64, line_bytes: u64) -> Domain {
        debug_assert!(line_bytes.is_power_of_two() && (8..=PAGE).contains(&line_bytes));
        Domain {
            kind,
            base,
            size,
            line_bytes,
            persisted: HashMap::default(),
            in_flight: Vec::new(),
            spare: Vec::new(),
            insn_base: 0,
            events: None,
            trace: None,
            l1_flush_reaches_memory: true,
            counters: DomainCounters::default(),
        }
    }

    /// Records flushes and the fences completing them from now on.
    pub fn record_events(&mut self) {
        self.events.get_or_insert_with(Vec::new);
    }

    /// Records every write to the region, flush and fence from now on
    /// ([`PersistTrace`]). The harts then keep the region's pages out of
    /// their store TLBs, so that every store comes by
    /// [`PhysMem::persist_store`].
    pub fn record_trace(&mut self) {
        self.trace.get_or_insert_with(Default::default);
    }

    /// The trace, if one is recorded.
    pub fn trace(&self) -> Option<&PersistTrace> {
        self.trace.as_deref()
    }

    /// Drops the trace without writing it (a forked copy of the emulator).
    pub fn abandon_trace(&mut self) {
        self.trace = None;
    }

    /// The region's base address, size and line.
    pub fn region(&self) -> (u64, u64) {
        (self.base, self.size)
    }

    /// The events recorded (at most [`MAX_EVENTS`]).
    pub fn events(&self) -> &[Event] {
        self.events.as_deref().unwrap_or(&[])
    }

    /// What survives.
    pub fn kind(&self) -> DomainKind {
        self.kind
    }

    /// The tracking granule in bytes.
    pub fn line_bytes(&self) -> u64 {
        self.line_bytes
    }

    /// Flushes not yet ordered by a fence.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    fn record(&mut self, insn: u64, kind: EventKind) {
        if let Some(ev) = self.events.as_mut() {
            if ev.len() < MAX_EVENTS {
                ev.push(Event {
                    insn: self.insn_base + insn,
                    kind,
                });
            }
        }
    }

    fn line_of(&self, paddr: u64) -> Option<u64> {
        let off = paddr.wrapping_sub(self.base);
        (off < self.size).then(|| off & !(self.line_bytes - 1))
    }
}

/// Hashes a line's offset: one multiply (the default hasher, SipHash,
/// costs more than the rest of a fence).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (n >> 3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// `line` reached the domain with `data` (none: eADR's flushes, whose line
/// was there already). A buffer no longer needed goes to `spare`.
fn persist_line(
    persisted: &mut HashMap<u64, Box<[u8]>, BuildHasherDefault<LineHasher>>,
    spare: &mut Vec<Box<[u8]>>,
    line: u64,
    data: Box<[u8]>,
) {
    if data.is_empty() {
        return;
    }
    match persisted.entry(line) {
        Entry::Occupied(mut e) => {
            e.get_mut().copy_from_slice(&data);
            spare.push(data);
        }
        Entry::Vacant(e) => {
            e.insert(data);
        }
    }
}

/// Region memory a domain reads lines from.
fn line_data(mem: &PhysMem, base: u64, line: u64, bytes: u64) -> Box<[u8]> {
    let mut data = vec![0u8; bytes as usize].into_boxed_slice();
    mem.read(base + line, &mut data);
    data
}

impl PhysMem {
    /// Tracks which stores to `domain`'s region reach its persistence
    /// domain from now on.
    pub fn set_domain(&mut self, domain: Domain) {
        self.domain = Some(Box::new(domain));
    }

    /// The persistence domain, if one is tracked.
    pub fn domain(&self) -> Option<&Domain> {
        self.domain.as_deref()
    }

    /// The persistence domain, if one is tracked.
    pub fn domain_mut(&mut self) -> Option<&mut Domain> {
        self.domain.as_deref_mut()
    }

    /// Whether a persistence domain is tracked (the harts' cheap test).
    #[inline]
    pub fn tracks_persistence(&self) -> bool {
        self.domain.is_some()
    }

    /// Sets the machine's instruction count minus the running hart's, so
    /// that events carry the machine's count.
    pub fn set_insn_base(&mut self, base: u64) {
        if let Some(d) = self.domain.as_deref_mut() {
            d.insn_base = base;
        }
    }

    /// Hart `hart` flushed the line holding `paddr` toward memory, as the
    /// instruction after `insn` of its own (`l1_only`: `cflush.d.l1`, which
    /// writes to the next level). Under ADR the line's contents now are in
    /// flight until the hart's next fence.
    pub fn persist_flush(&mut self, hart: u64, pc: u64, paddr: u64, insn: u64, l1_only: bool) {
        let Some(d) = self.domain.as_deref_mut() else {
            return;
        };
        if l1_only && !d.l1_flush_reaches_memory {
            return;
        }
        let Some(line) = d.line_of(paddr) else {
            return;
        };
        let at = d.insn_base + insn;
        if let Some(t) = d.trace.as_deref_mut() {
            t.push(TraceKind::Flush, hart as u32, at, pc, line);
        }
        let (base, bytes, kind) = (d.base, d.line_bytes, d.kind);
        // Under eADR and for a volatile region the flush is kept only to
        // show which fence completes it (crash tests pick points by them).
        let data = match kind {
            DomainKind::Adr => {
                let spare = self.domain.as_deref_mut().and_then(|d| d.spare.pop());
                let mut data = spare.unwrap_or_else(|| vec![0; bytes as usize].into());
                self.read(base + line, &mut data);
                data
            }
            _ => Box::default(),
        };
        let d = self.domain.as_deref_mut().expect("checked above");
        d.counters.flushes += 1;
        d.record(insn, EventKind::Flush);
        d.in_flight.push(InFlight { hart, line, data });
    }

    /// Hart `hart` flushed its whole data cache (`cflush.d.l1 x0`) in the
    /// functional model, which has no cache to say what it held: every
    /// line of the region that holds data is in flight, as it is now.
    pub fn persist_flush_all(&mut self, hart: u64, pc: u64, insn: u64) {
        let Some(d) = self.domain.as_deref_mut() else {
            return;
        };
        if !d.l1_flush_reaches_memory {
            return;
        }
        let at = d.insn_base + insn;
        if let Some(t) = d.trace.as_deref_mut() {
            t.push(TraceKind::FlushAll, hart as u32, at, pc, 0);
        }
        let (base, size, bytes, kind) = (d.base, d.size, d.line_bytes, d.kind);
        let mut lines = Vec::new();
        if kind == DomainKind::Adr {
            if let Some(host) = self.host_ptr(base, size) {
                for page in candidate_pages(host, size) {
                    for line in (page..page + PAGE).step_by(bytes as usize) {
                        lines.push(InFlight {
                            hart,
                            line,
                            data: line_data(self, base, line, bytes),
                        });
                    }
                }
            }
        }
        let d = self.domain.as_deref_mut().expect("checked above");
        d.counters.flushes += 1;
        d.record(insn, EventKind::Flush);
        d.in_flight.extend(lines);
    }

    /// Hart `hart` executed a fence ordering its earlier stores (and so its
    /// flushes) before later ones: its flushes in flight reach the domain.
    pub fn persist_fence(&mut self, hart: u64, pc: u64, insn: u64) {
        let Some(d) = self.domain.as_deref_mut() else {
            return;
        };
        let at = d.insn_base + insn;
        if let Some(t) = d.trace.as_deref_mut() {
            t.push(TraceKind::Fence, hart as u32, at, pc, 0);
        }
        if !d.in_flight.iter().any(|f| f.hart == hart) {
            return;
        }
        let mut completed = 0;
        if d.in_flight.iter().all(|f| f.hart == hart) {
            // The common case: no other hart has flushes in flight.
            for f in d.in_flight.drain(..) {
                completed += 1;
                persist_line(&mut d.persisted, &mut d.spare, f.line, f.data);
            }
        } else {
            let mut kept = Vec::with_capacity(d.in_flight.len());
            for f in std::mem::take(&mut d.in_flight) {
                if f.hart == hart {
                    completed += 1;
                    persist_line(&mut d.persisted, &mut d.spare, f.line, f.data);
                } else {
                    kept.push(f);
                }
            }
            d.in_flight = kept;
        }
        d.counters.flushes_completed += completed;
        d.record(insn, EventKind::Fence(completed));
    }

    /// Whether a persistence trace is recorded.
    pub fn traces_persistence(&self) -> bool {
        self.domain.as_deref().is_some_and(|d| d.trace.is_some())
    }

    /// Whether stores to the page at `ppage` must be seen one by one
    /// ([`persist_store`](Self::persist_store)): a trace is recorded and
    /// the page is in the region.
    #[inline]
    pub fn traces_stores_to(&self, ppage: u64) -> bool {
        self.domain
            .as_deref()
            .is_some_and(|d| d.trace.is_some() && d.line_of(ppage).is_some())
    }

    /// Hart `hart` stored `len` bytes at `paddr` with the instruction at
    /// `pc`, after `insn` instructions of its own: recorded with the bytes
    /// memory holds now, if a trace is kept and the bytes are in the region.
    pub fn persist_store(&mut self, hart: u64, pc: u64, insn: u64, paddr: u64, len: u64) {
        let Some(d) = self.domain.as_deref() else {
            return;
        };
        if d.trace.is_none() || d.line_of(paddr).is_none() {
            return;
        }
        let mut bytes = [0u8; 64];
        let len = (len as usize).min(bytes.len());
        self.read(paddr, &mut bytes[..len]);
        let d = self.domain.as_deref_mut().expect("checked above");
        let (at, off) = (d.insn_base + insn, paddr - d.base);
        if let Some(t) = d.trace.as_deref_mut() {
            t.set_context(hart as u32, pc);
            t.push_bytes(TraceKind::Store, hart as u32, at, pc, off, &bytes[..len]);
        }
    }

    /// Records, if a trace is kept, that the emulator wrote `len` bytes at
    /// `paddr` on the guest's behalf: called by [`PhysMem`]'s writes, and
    /// by whoever changed region memory through a host mapping (a file of
    /// the NVMM-backed directory written by the host's `write`).
    pub fn trace_write(&mut self, paddr: u64, len: u64) {
        let Some(d) = self.domain.as_deref() else {
            return;
        };
        if d.trace.is_none() {
            return;
        }
        // The part of the write inside the region.
        let (lo, hi) = (paddr.max(d.base), (paddr + len).min(d.base + d.size));
        if lo >= hi {
            return;
        }
        let mut bytes = vec![0u8; (hi - lo) as usize];
        self.read(lo, &mut bytes);
        let d = self.domain.as_deref_mut().expect("checked above");
        let off = lo - d.base;
        if let Some(t) = d.trace.as_deref_mut() {
            t.push_write(off, &bytes);
        }
    }

    /// The call stack (return addresses, the outermost first) of the
    /// instruction whose stores, flushes and fences come next, when a trace
    /// is kept.
    pub fn set_persist_calls(&mut self, frames: &[u64]) {
        if let Some(t) = self
            .domain
            .as_deref_mut()
            .and_then(|d| d.trace.as_deref_mut())
        {
            t.set_calls(frames);
        }
    }

    /// Charges the writes the emulator makes from now on to hart `hart`'s
    /// instruction at `pc` (a system call), when a trace is kept.
    pub fn set_persist_context(&mut self, hart: u64, pc: u64) {
        if let Some(t) = self
            .domain
            .as_deref_mut()
            .and_then(|d| d.trace.as_deref_mut())
        {
            t.set_context(hart as u32, pc);
        }
    }

    /// The emulator wrote the line holding `paddr` back to the domain on
    /// the guest's behalf (`msync`, `fsync`): durable now, and recorded so.
    pub fn persist_sync(&mut self, paddr: u64) {
        self.persist_write_back(paddr);
        if let Some(d) = self.domain.as_deref_mut() {
            if let (Some(line), Some(t)) = (d.line_of(paddr), d.trace.as_deref_mut()) {
                t.push_sync(line);
            }
        }
    }

    /// The memory system wrote the line holding `paddr` back to memory
    /// (an eviction): under ADR it is in the domain now.
    pub fn persist_write_back(&mut self, paddr: u64) {
        let Some(d) = self.domain.as_deref() else {
            return;
        };
        let Some(line) = d.line_of(paddr) else {
            return;
        };
        if d.kind != DomainKind::Adr {
            return;
        }
        let (base, bytes) = (d.base, d.line_bytes);
        let data = line_data(self, base, line, bytes);
        let d = self.domain.as_deref_mut().expect("checked above");
        d.counters.write_backs += 1;
        persist_line(&mut d.persisted, &mut d.spare, line, data);
    }
}

/// What a power failure did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Physical addresses of the lines whose contents in the image differ
    /// from what the guest last stored there, ascending.
    pub lost_lines: Vec<u64>,
    /// Flushes in flight that reached the domain anyway.
    pub in_flight_kept: u64,
    /// Flushes in flight that were lost.
    pub in_flight_lost: u64,
    /// The tracking granule (bytes of each lost line).
    pub line_bytes: u64,
}

/// A splitmix64 step: the seeded choices of a crash.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Cuts the power: each flush in flight reaches the domain or not by a
/// choice drawn from `seed`; the lines whose domain contents differ from
/// memory are reported; and, with an image, the image is written as the
/// domain holds the region (`Volatile`: left as it was at the start). The
/// domain's contents of a line not persisted during the run are the
/// image's at the start (zero without one).
pub fn crash(
    mem: &mut PhysMem,
    image: Option<&NvmmImage>,
    seed: u64,
) -> Result<CrashReport, ImageError> {
    let Some(mut d) = mem.domain.take() else {
        return Ok(CrashReport::default());
    };
    let mut report = CrashReport {
        line_bytes: d.line_bytes,
        ..CrashReport::default()
    };
    let mut state = seed;
    for f in std::mem::take(&mut d.in_flight) {
        if f.data.is_empty() {
            continue; // Nothing to keep or lose (eADR, volatile).
        }
        if splitmix(&mut state) & 1 == 1 {
            report.in_flight_kept += 1;
            d.persisted.insert(f.line, f.data);
        } else {
            report.in_flight_lost += 1;
        }
    }
    let result = write_domain(mem, &d, image, &mut report);
    mem.domain = Some(d);
    result.map(|()| report)
}

/// The domain's contents, page by page: the pages memory may hold data in
/// and the pages with persisted lines. Lost lines are recorded as they are
/// met; the image (if any, and not for a volatile region) is rewritten.
fn write_domain(
    mem: &PhysMem,
    d: &Domain,
    image: Option<&NvmmImage>,
    report: &mut CrashReport,
) -> Result<(), ImageError> {
    let host = match mem.host_ptr(d.base, d.size) {
        Some(h) => h,
        None => return Ok(()),
    };
    let mut pages = candidate_pages(host, d.size);
    pages.extend(d.persisted.keys().map(|l| l & !(PAGE - 1)));
    pages.sort_unstable();
    pages.dedup();
    let start = match image {
        Some(img) => Some(File::open(&img.path).map_err(|e| img.io("open it for reading", e))?),
        None => None,
    };
    let out = match image {
        Some(img) if d.kind != DomainKind::Volatile => {
            let tmp = img.temporary();
            Some((img.create_temporary(&tmp)?, tmp, img))
        }
        _ => None,
    };
    let mut page_buf = vec![0u8; PAGE as usize];
    for page in pages {
        // SAFETY: the page lies inside the region's host memory.
        let volatile =
            unsafe { std::slice::from_raw_parts(host.add(page as usize), PAGE as usize) };
        let durable: &[u8] = if d.kind == DomainKind::Eadr {
            volatile
        } else {
            page_buf.fill(0);
            if let (Some(f), Some(img)) = (&start, image) {
                read_at_most(f, &mut page_buf, page).map_err(|e| img.io("read it", e))?;
            }
            for off in (0..PAGE).step_by(d.line_bytes as usize) {
                if let Some(data) = d.persisted.get(&(page + off)) {
                    page_buf[off as usize..][..data.len()].copy_from_slice(data);
                }
            }
            &page_buf
        };
        for off in (0..PAGE as usize).step_by(d.line_bytes as usize) {
            let n = d.line_bytes as usize;
            if durable[off..off + n] != volatile[off..off + n] {
                report.lost_lines.push(d.base + page + off as u64);
            }
        }
        if let Some((f, _, img)) = &out {
            if !is_zero(durable) {
                f.write_all_at(durable, page)
                    .map_err(|e| img.io("write a temporary copy", e))?;
            }
        }
    }
    if let Some((f, tmp, img)) = out {
        img.commit(f, &tmp)?;
    }
    Ok(())
}

/// Reads into `buf` from `offset`, leaving zeros past the end of the file.
fn read_at_most(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes `events` as text, one a line: `INSN flush`, or `INSN fence N`
/// for a fence completing N flushes.
pub fn write_events(out: &mut impl Write, events: &[Event]) -> io::Result<()> {
    for e in events {
        match e.kind {
            EventKind::Flush => writeln!(out, "{} flush", e.insn)?,
            EventKind::Fence(n) => writeln!(out, "{} fence {n}", e.insn)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x1_0000_0000;
    const SIZE: u64 = 0x10_0000;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rvnvmm-persist-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("nvmm.img")
    }

    fn machine() -> PhysMem {
        PhysMem::new(&[(0x8000_0000, 0x10_0000), (BASE, SIZE)]).unwrap()
    }

    fn image_bytes(path: &Path, at: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0; n];
        File::open(path).unwrap().read_exact_at(&mut b, at).unwrap();
        b
    }

    #[test]
    fn image_is_created_sparse_and_survives_a_save() {
        let path = scratch("roundtrip");
        let img = NvmmImage::open(&path, BASE, SIZE).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE);
        let mut m = machine();
        img.load(&mut m).unwrap();
        assert_eq!(m.read_u64(BASE + 0x8000), Some(0));
        m.write_u64(BASE + 0x8000, 0xdead_beef);
        m.write_u64(BASE + SIZE - 8, 7);
        img.save(&m).unwrap();
        // Only the written pages hold blocks.
        use std::os::unix::fs::MetadataExt;
        assert!(std::fs::metadata(&path).unwrap().blocks() * 512 <= 4 * PAGE);
        let mut again = machine();
        NvmmImage::open(&path, BASE, SIZE)
            .unwrap()
            .load(&mut again)
            .unwrap();
        assert_eq!(again.read_u64(BASE + 0x8000), Some(0xdead_beef));
        assert_eq!(again.read_u64(BASE + SIZE - 8), Some(7));
        assert_eq!(again.read_u64(BASE), Some(0));
        // A copy keeps the contents and the holes.
        let copy = path.with_file_name("copy.img");
        NvmmImage::open(&path, BASE, SIZE)
            .unwrap()
            .copy_to(&copy)
            .unwrap();
        assert_eq!(image_bytes(&copy, 0x8000, 8), 0xdead_beefu64.to_le_bytes());
        assert_eq!(std::fs::metadata(&copy).unwrap().len(), SIZE);
        assert!(std::fs::metadata(&copy).unwrap().blocks() * 512 <= 4 * PAGE);
        std::fs::remove_file(&copy).unwrap();
        // No temporary is left behind.
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn an_image_of_another_size_is_refused() {
        let path = scratch("size");
        std::fs::write(&path, [1u8; 100]).unwrap();
        let e = NvmmImage::open(&path, BASE, SIZE).unwrap_err();
        assert!(e.to_string().contains("holds 100 bytes"), "{e}");
    }

    #[test]
    fn stale_temporaries_of_dead_processes_go() {
        let path = scratch("stale");
        // No process has pid 0x7fff_fff0 (above the kernel's limit).
        let stale = path.with_file_name(".nvmm.img.tmp.2147483632");
        std::fs::write(&stale, b"half").unwrap();
        NvmmImage::open(&path, BASE, SIZE).unwrap();
        assert!(!stale.exists());
    }

    fn adr(m: &mut PhysMem) {
        m.set_domain(Domain::new(DomainKind::Adr, BASE, SIZE, 64));
    }

    #[test]
    fn adr_keeps_only_flushed_and_fenced_lines() {
        let path = scratch("adr");
        let img = NvmmImage::open(&path, BASE, SIZE).unwrap();
        let mut m = machine();
        img.load(&mut m).unwrap();
        adr(&mut m);
        m.write_u64(BASE, 1); // flushed and fenced
        m.write_u64(BASE + 64, 2); // never flushed
        m.persist_flush(0, 0, BASE + 8, 10, false);
        m.write_u64(BASE + 16, 3); // after the flush: not in its copy
        m.persist_fence(0, 0, 11);
        m.persist_fence(1, 0, 12); // another hart's fence completes nothing
        let r = crash(&mut m, Some(&img), 0).unwrap();
        assert_eq!(r.lost_lines, vec![BASE, BASE + 64]);
        assert_eq!(image_bytes(&path, 0, 8), 1u64.to_le_bytes());
        assert_eq!(image_bytes(&path, 16, 8), [0; 8]);
        assert_eq!(image_bytes(&path, 64, 8), [0; 8]);
        let d = m.domain().unwrap();
        assert_eq!(d.counters.flushes, 1);
        assert_eq!(d.counters.flushes_completed, 1);
    }

    #[test]
    fn a_fence_completes_only_its_own_harts_flushes() {
        let mut m = machine();
        adr(&mut m);
        m.write_u64(BASE, 1);
        m.persist_flush(1, 0, BASE, 0, false);
        m.persist_fence(0, 0, 1);
        assert_eq!(m.domain().unwrap().in_flight(), 1);
        m.persist_fence(1, 0, 2);
        assert_eq!(m.domain().unwrap().in_flight(), 0);
    }

    #[test]
    fn in_flight_flushes_are_kept_or_lost_by_the_seed() {
        let run = |seed| {
            let mut m = machine();
            adr(&mut m);
            for i in 0..64 {
                m.write_u64(BASE + i * 64, i + 1);
                m.persist_flush(0, 0, BASE + i * 64, i, false);
            }
            crash(&mut m, None, seed).unwrap()
        };
        let a = run(1);
        assert_eq!(a.in_flight_kept + a.in_flight_lost, 64);
        assert!(a.in_flight_kept > 0 && a.in_flight_lost > 0);
        assert_eq!(a.lost_lines.len() as u64, a.in_flight_lost);
        assert_eq!(run(1), a);
        assert_ne!(run(2).lost_lines, a.lost_lines);
    }

    #[test]
    fn eadr_keeps_every_store_and_volatile_none() {
        for (kind, lost, kept) in [(DomainKind::Eadr, 0, 5u64), (DomainKind::Volatile, 1, 9u64)] {
            let path = scratch(&format!("{kind:?}"));
            std::fs::write(&path, []).unwrap();
            let f = OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(SIZE).unwrap();
            f.write_all_at(&9u64.to_le_bytes(), 128).unwrap();
            drop(f);
            let img = NvmmImage::open(&path, BASE, SIZE).unwrap();
            let mut m = machine();
            img.load(&mut m).unwrap();
            assert_eq!(m.read_u64(BASE + 128), Some(9));
            m.set_domain(Domain::new(kind, BASE, SIZE, 64));
            m.write_u64(BASE + 128, 5);
            let r = crash(&mut m, Some(&img), 0).unwrap();
            assert_eq!(r.lost_lines.len(), lost, "{kind:?}");
            assert_eq!(image_bytes(&path, 128, 8), kept.to_le_bytes(), "{kind:?}");
        }
    }

    #[test]
    fn a_whole_cache_flush_persists_every_line_at_the_fence() {
        let mut m = machine();
        adr(&mut m);
        m.write_u64(BASE + 8, 1);
        m.write_u64(BASE + 0x5000, 2);
        m.persist_flush_all(0, 0, 0);
        m.write_u64(BASE + 0x6000, 3); // after the flush
        m.persist_fence(0, 0, 1);
        let r = crash(&mut m, None, 0).unwrap();
        assert_eq!(r.lost_lines, vec![BASE + 0x6000]);
    }

    #[test]
    fn write_backs_persist_under_adr() {
        let mut m = machine();
        adr(&mut m);
        m.write_u64(BASE + 4096, 1);
        m.persist_write_back(BASE + 4096);
        m.persist_write_back(0x8000_0000); // DRAM: not tracked
        let r = crash(&mut m, None, 0).unwrap();
        assert!(r.lost_lines.is_empty());
        assert_eq!(m.domain().unwrap().counters.write_backs, 1);
    }

    #[test]
    fn events_carry_the_machines_count() {
        let mut m = machine();
        adr(&mut m);
        m.domain_mut().unwrap().record_events();
        m.set_insn_base(100);
        m.persist_flush(0, 0, BASE, 5, false);
        m.persist_fence(0, 0, 6);
        m.persist_fence(0, 0, 7); // nothing in flight: not an event
        let ev = m.domain().unwrap().events().to_vec();
        assert_eq!(
            ev,
            vec![
                Event {
                    insn: 105,
                    kind: EventKind::Flush
                },
                Event {
                    insn: 106,
                    kind: EventKind::Fence(1)
                }
            ]
        );
        let mut text = Vec::new();
        write_events(&mut text, &ev).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), "105 flush\n106 fence 1\n");
    }
}
