//! The checkpoint format of rvnvmm: a whole machine written to a directory
//! and read back (`docs/checkpoints.md`).
//!
//! A checkpoint directory holds two files:
//!
//! * `manifest.json` ([`Manifest`]): the format version, the rvnvmm version,
//!   the configuration the checkpoint came from (whole), the memory map
//!   ([`MemoryMap`]: what a restore must match), the point (instructions,
//!   simulated time) and the list of sections.
//! * `state.bin`: a header (`RVNVCKPT`, the format version) and the
//!   sections, each `name`, length, Adler-32 checksum and payload. A
//!   component writes its own fields into its section with a
//!   [`StateWriter`] and reads them back with a [`StateReader`] (the
//!   [`Checkpointable`] trait), next to its code. Guest memory goes in sections
//!   of its own, sparse and compressed ([`write_pages`], [`read_pages`]).
//!
//! Sections are found by name, so a kind of machine adds its own (the full
//! system: harts, board devices, memory; user mode later: processes, files,
//! descriptors) without touching the others'. A truncated or damaged file
//! is an error ([`CheckpointError`]), never a panic.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 3;
/// The manifest's file name.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The sections' file name.
pub const STATE_FILE: &str = "state.bin";
/// What `state.bin` starts with.
const MAGIC: &[u8; 8] = b"RVNVCKPT";
/// Bytes of a memory page.
pub const PAGE_BYTES: usize = 4096;
/// Pages compressed together (4 MiB of raw data): large enough to compress
/// well, small enough that a damaged chunk is found early.
const PAGES_PER_CHUNK: usize = 1024;
/// The longest section name.
const MAX_NAME_BYTES: usize = 256;

/// What is wrong with a checkpoint, or why it cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file of the checkpoint could not be read or written.
    #[error("checkpoint {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The manifest is not valid JSON of the expected shape.
    #[error("checkpoint {}: the manifest is not readable: {source}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// Another format version.
    #[error("checkpoint format version {found}, this rvnvmm reads version {FORMAT_VERSION}")]
    Version {
        /// The version found.
        found: u32,
    },
    /// `state.bin` does not start with the checkpoint header.
    #[error("{STATE_FILE} is not an rvnvmm checkpoint (no RVNVCKPT header)")]
    NotACheckpoint,
    /// The state file ends inside something.
    #[error("{STATE_FILE} is truncated: it ends inside {0}")]
    Truncated(String),
    /// A section's checksum does not match its payload.
    #[error("section '{0}' is damaged (its checksum does not match)")]
    Checksum(String),
    /// A section the manifest lists or the machine needs is missing.
    #[error("the checkpoint has no section '{0}'")]
    MissingSection(String),
    /// A section's payload does not hold what its reader expects.
    #[error("section '{section}' is malformed: {why}")]
    Malformed {
        /// The section.
        section: String,
        /// What is wrong.
        why: String,
    },
    /// The manifest and the state file disagree.
    #[error("the manifest and {STATE_FILE} disagree: {0}")]
    Inconsistent(String),
    /// The machine a checkpoint is restored into differs from the one it
    /// was taken of.
    #[error(
        "the checkpoint cannot be restored on this machine: {}\n  (a checkpoint may be \
         restored under another timing configuration, not another memory map, hart count or ISA)",
        .0.join("; ")
    )]
    Mismatch(Vec<String>),
    /// A component cannot be saved (yet).
    #[error("cannot checkpoint {0}")]
    Unsupported(String),
    /// Something outside the checkpoint that a restore needs (a file the
    /// process has open, a directory) is missing or has changed.
    #[error("cannot restore the checkpoint: {0}")]
    Outside(String),
}

/// Writes the fields of one section, little-endian.
#[derive(Debug, Default)]
pub struct StateWriter {
    buf: Vec<u8>,
}

impl StateWriter {
    /// An empty section.
    pub fn new() -> StateWriter {
        StateWriter::default()
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    /// A boolean (one byte, 0 or 1).
    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    /// A 16-bit value.
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A 32-bit value.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A 64-bit value.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A count or length (as 64 bits).
    pub fn count(&mut self, n: usize) {
        self.u64(n as u64);
    }

    /// An optional 64-bit value.
    pub fn opt_u64(&mut self, v: Option<u64>) {
        self.bool(v.is_some());
        self.u64(v.unwrap_or(0));
    }

    /// Bytes, with their length.
    pub fn bytes(&mut self, b: &[u8]) {
        self.count(b.len());
        self.buf.extend_from_slice(b);
    }

    /// Bytes deflated (miniz_oxide, level 1), with their raw length: for
    /// bulk data such as a disk's written blocks.
    pub fn deflated(&mut self, b: &[u8]) {
        self.count(b.len());
        self.bytes(&miniz_oxide::deflate::compress_to_vec(b, 1));
    }

    /// 64-bit values, with their count.
    pub fn u64s(&mut self, v: &[u64]) {
        self.count(v.len());
        v.iter().for_each(|&x| self.u64(x));
    }
}

/// Reads the fields of one section back, in the order they were written;
/// running past its end or finding a value out of range is an error naming
/// the section.
#[derive(Debug)]
pub struct StateReader<'a> {
    section: &'a str,
    data: &'a [u8],
    pos: usize,
}

impl<'a> StateReader<'a> {
    /// A reader of section `section`'s payload `data`.
    pub fn new(section: &'a str, data: &'a [u8]) -> StateReader<'a> {
        StateReader {
            section,
            data,
            pos: 0,
        }
    }

    /// An error for this section.
    pub fn malformed(&self, why: impl Into<String>) -> CheckpointError {
        CheckpointError::Malformed {
            section: self.section.to_string(),
            why: why.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], CheckpointError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| self.malformed(format!("it ends at byte {}", self.data.len())))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CheckpointError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A byte.
    pub fn u8(&mut self) -> Result<u8, CheckpointError> {
        Ok(self.take(1)?[0])
    }

    /// A boolean.
    pub fn bool(&mut self) -> Result<bool, CheckpointError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.malformed(format!("a boolean is {b}"))),
        }
    }

    /// A 16-bit value.
    pub fn u16(&mut self) -> Result<u16, CheckpointError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A 32-bit value.
    pub fn u32(&mut self) -> Result<u32, CheckpointError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A 64-bit value.
    pub fn u64(&mut self) -> Result<u64, CheckpointError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A count or length, at most `max`.
    pub fn count(&mut self, max: usize) -> Result<usize, CheckpointError> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| self.malformed(format!("a count of {n}, more than {max}")))
    }

    /// A count that must be exactly `want` (a list the machine has a fixed
    /// number of: harts, registers).
    pub fn exact_len(&mut self, want: usize, what: &str) -> Result<(), CheckpointError> {
        let n = self.u64()?;
        if n != want as u64 {
            return Err(self.malformed(format!("{n} {what}, the machine has {want}")));
        }
        Ok(())
    }

    /// An optional 64-bit value.
    pub fn opt_u64(&mut self) -> Result<Option<u64>, CheckpointError> {
        let some = self.bool()?;
        let v = self.u64()?;
        Ok(some.then_some(v))
    }

    /// Bytes, at most `max` of them.
    pub fn bytes(&mut self, max: usize) -> Result<&'a [u8], CheckpointError> {
        let n = self.count(max.min(self.data.len()))?;
        self.take(n)
    }

    /// What [`StateWriter::deflated`] wrote, at most `max` bytes raw.
    pub fn inflated(&mut self, max: usize) -> Result<Vec<u8>, CheckpointError> {
        let raw = self.count(max)?;
        let packed = self.bytes(usize::MAX)?;
        let data = miniz_oxide::inflate::decompress_to_vec_with_limit(packed, raw)
            .map_err(|e| self.malformed(format!("deflated bytes do not inflate: {e}")))?;
        if data.len() != raw {
            return Err(self.malformed(format!(
                "deflated bytes inflate to {} bytes, not {raw}",
                data.len()
            )));
        }
        Ok(data)
    }

    /// 64-bit values into `out`, whose length the section must match.
    pub fn u64s_into(&mut self, out: &mut [u64], what: &str) -> Result<(), CheckpointError> {
        self.exact_len(out.len(), what)?;
        for v in out {
            *v = self.u64()?;
        }
        Ok(())
    }

    /// 64-bit values, at most `max` of them.
    pub fn u64s(&mut self, max: usize) -> Result<Vec<u64>, CheckpointError> {
        let n = self.count(max.min(self.data.len() / 8))?;
        (0..n).map(|_| self.u64()).collect()
    }

    /// Checks that the whole section was read.
    pub fn finish(self) -> Result<(), CheckpointError> {
        if self.pos != self.data.len() {
            return Err(self.malformed(format!(
                "{} bytes left over after its fields",
                self.data.len() - self.pos
            )));
        }
        Ok(())
    }
}

/// A component that saves its own state into a section and restores it.
/// What a component derives from other state (decoded code, translation
/// caches, timing state) it leaves out and rebuilds.
pub trait Checkpointable {
    /// Writes the state.
    fn save(&self, w: &mut StateWriter);
    /// Reads it back into a component built the same way (same sizes).
    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError>;
}

/// Writes `bytes` (a memory region, a multiple of [`PAGE_BYTES`] long or
/// not) sparsely: the pages that are not all zero, with their index,
/// deflated in chunks.
pub fn write_pages(w: &mut StateWriter, bytes: &[u8]) {
    let pages = bytes.len().div_ceil(PAGE_BYTES);
    w.count(bytes.len());
    let mut chunk = Vec::new();
    let mut in_chunk = 0;
    let flush = |w: &mut StateWriter, chunk: &mut Vec<u8>| {
        let packed = miniz_oxide::deflate::compress_to_vec(chunk, 1);
        w.count(chunk.len());
        w.bytes(&packed);
        chunk.clear();
    };
    for p in 0..pages {
        let page = &bytes[p * PAGE_BYTES..((p + 1) * PAGE_BYTES).min(bytes.len())];
        if page.iter().all(|&b| b == 0) {
            continue;
        }
        chunk.extend_from_slice(&(p as u64).to_le_bytes());
        chunk.extend_from_slice(page);
        chunk.resize(chunk.len() + PAGE_BYTES - page.len(), 0);
        in_chunk += 1;
        if in_chunk == PAGES_PER_CHUNK {
            flush(w, &mut chunk);
            in_chunk = 0;
        }
    }
    if in_chunk > 0 {
        flush(w, &mut chunk);
    }
    // An empty chunk ends the list.
    w.count(0);
}

/// Reads what [`write_pages`] wrote, handing each page that is not all
/// zero to `page` with its byte offset; `len` is the region's length,
/// which must be the one written.
pub fn read_pages(
    r: &mut StateReader<'_>,
    len: usize,
    mut page: impl FnMut(usize, &[u8]),
) -> Result<(), CheckpointError> {
    r.exact_len(len, "bytes of memory")?;
    let pages = len.div_ceil(PAGE_BYTES);
    const RECORD: usize = 8 + PAGE_BYTES;
    loop {
        let raw = r.count(PAGES_PER_CHUNK * RECORD)?;
        if raw == 0 {
            return Ok(());
        }
        if raw % RECORD != 0 {
            return Err(r.malformed(format!("a memory chunk of {raw} bytes")));
        }
        let packed = r.bytes(usize::MAX)?;
        let data = miniz_oxide::inflate::decompress_to_vec_with_limit(packed, raw)
            .map_err(|e| r.malformed(format!("a memory chunk does not inflate: {e}")))?;
        if data.len() != raw {
            return Err(r.malformed("a memory chunk inflates to another length"));
        }
        for rec in data.chunks_exact(RECORD) {
            let index = u64::from_le_bytes(rec[..8].try_into().expect("8 bytes"));
            if index >= pages as u64 {
                return Err(r.malformed(format!("page {index} of a region of {pages}")));
            }
            let off = index as usize * PAGE_BYTES;
            let n = PAGE_BYTES.min(len - off);
            page(off, &rec[8..8 + n]);
        }
    }
}

/// One memory region of the machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// The configuration's name for it.
    pub name: String,
    /// `dram` or `nvmm`.
    pub kind: String,
    /// Physical base.
    pub base: u64,
    /// Bytes.
    pub size: u64,
}

/// What a restore must match: the memory map, the harts and the ISA.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryMap {
    /// The memory regions in address order.
    pub regions: Vec<Region>,
    /// Harts.
    pub harts: u64,
    /// Cores (harts / threads per core).
    pub cores: u64,
    /// Hardware threads per core.
    pub threads_per_core: u64,
    /// The ISA string.
    pub isa: String,
}

impl MemoryMap {
    /// What differs between the checkpoint's map (`self`) and the
    /// machine's, in words; empty if they agree.
    pub fn differences(&self, machine: &MemoryMap) -> Vec<String> {
        let mut out = Vec::new();
        let mut num = |what: &str, saved: u64, now: u64| {
            if saved != now {
                out.push(format!("{what}: {saved} in the checkpoint, {now} here"));
            }
        };
        num("harts", self.harts, machine.harts);
        num("cores", self.cores, machine.cores);
        num(
            "threads per core",
            self.threads_per_core,
            machine.threads_per_core,
        );
        if self.isa != machine.isa {
            out.push(format!(
                "ISA: {} in the checkpoint, {} here",
                self.isa, machine.isa
            ));
        }
        let show = |rs: &[Region]| {
            rs.iter()
                .map(|r| format!("{} {} {:#x}+{:#x}", r.kind, r.name, r.base, r.size))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.regions != machine.regions {
            out.push(format!(
                "memory regions: [{}] in the checkpoint, [{}] here",
                show(&self.regions),
                show(&machine.regions)
            ));
        }
        out
    }
}

/// Where in the run the checkpoint was taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Instructions retired by all harts since the start.
    pub instructions: u64,
    /// The latest hart clock, in ns.
    pub sim_time_ns: u64,
    /// The model the machine ran in (`functional` or `timing`).
    pub model: String,
    /// What made it (`marker`, `insns=N`, `time=NS`).
    pub trigger: String,
}

/// A section as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionInfo {
    /// Its name.
    pub name: String,
    /// Bytes of its payload.
    pub bytes: u64,
}

/// `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The rvnvmm version that wrote it.
    pub rvnvmm_version: String,
    /// The command that wrote it (`boot`; user mode: `run`).
    pub kind: String,
    /// The whole configuration of the machine it came from.
    pub config: serde_json::Value,
    /// The memory map, harts and ISA.
    pub memory_map: MemoryMap,
    /// Where it was taken.
    pub point: Point,
    /// The sections of `state.bin`, in order.
    pub sections: Vec<SectionInfo>,
    /// The disk image of a machine with one: its base image, which the
    /// blocks written since the boot (saved with the virtio block device)
    /// are an overlay of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<FileIdentity>,
    /// What the machine was booted from: a guest reboot after a restore
    /// loads it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<BootFiles>,
}

/// The files and options a full-system boot loads (`rvnvmm boot`): a
/// reboot of a restored machine loads them again, if they have not
/// changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootFiles {
    /// OpenSBI `fw_dynamic.bin`.
    pub firmware: FileIdentity,
    /// The kernel `Image`.
    pub kernel: FileIdentity,
    /// The initramfs (an empty file: none).
    pub initrd: FileIdentity,
    /// The kernel command line.
    pub append: String,
    /// How the NVMM regions appear to Linux (`dev-mem` or `pmem`).
    pub nvmm: String,
}

/// The identity of a file a checkpoint depends on (a disk's base image,
/// the boot files): a restore checks that the file is still the one the
/// checkpoint was taken with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    /// Where it was (a restore opens it there unless given another path).
    pub path: PathBuf,
    /// Its length in bytes.
    pub bytes: u64,
    /// When it was last modified, in ns since the Unix epoch.
    pub modified_ns: u64,
}

impl FileIdentity {
    /// The identity of the file at `path` now (its path made absolute,
    /// so a restore from another directory finds it).
    pub fn of(path: &Path) -> std::io::Result<FileIdentity> {
        let meta = std::fs::metadata(path)?;
        let modified_ns = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Ok(FileIdentity {
            path: std::path::absolute(path)?,
            bytes: meta.len(),
            modified_ns,
        })
    }

    /// What differs between this (the checkpoint's) and `now` (the file
    /// a restore would use): its length and modification time.
    pub fn differences(&self, now: &FileIdentity) -> Vec<String> {
        let mut d = Vec::new();
        if self.bytes != now.bytes {
            d.push(format!(
                "{} bytes in the checkpoint, {} now",
                self.bytes, now.bytes
            ));
        }
        if self.modified_ns != now.modified_ns {
            d.push(format!(
                "modified at {} ns (Unix time) in the checkpoint, at {} ns now",
                self.modified_ns, now.modified_ns
            ));
        }
        d
    }
}

/// The sections of a checkpoint, by name, in the order they were added.
#[derive(Debug, Default)]
pub struct Sections {
    order: Vec<String>,
    data: BTreeMap<String, Vec<u8>>,
}

impl Sections {
    /// No sections.
    pub fn new() -> Sections {
        Sections::default()
    }

    /// Adds (or replaces) section `name`.
    pub fn insert(&mut self, name: impl Into<String>, payload: Vec<u8>) {
        let name = name.into();
        if !self.data.contains_key(&name) {
            self.order.push(name.clone());
        }
        self.data.insert(name, payload);
    }

    /// Adds section `name` with what `f` writes.
    pub fn write(&mut self, name: impl Into<String>, f: impl FnOnce(&mut StateWriter)) {
        let mut w = StateWriter::new();
        f(&mut w);
        self.insert(name, w.into_bytes());
    }

    /// Adds `item`'s state as section `name`.
    pub fn save(&mut self, name: impl Into<String>, item: &dyn Checkpointable) {
        self.write(name, |w| item.save(w));
    }

    /// Section `name`'s payload.
    pub fn get(&self, name: &str) -> Result<&[u8], CheckpointError> {
        self.data
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| CheckpointError::MissingSection(name.to_string()))
    }

    /// Whether there is a section `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.data.contains_key(name)
    }

    /// Reads section `name` with `f`, which must read all of it.
    pub fn read<T>(
        &self,
        name: &str,
        f: impl FnOnce(&mut StateReader<'_>) -> Result<T, CheckpointError>,
    ) -> Result<T, CheckpointError> {
        let mut r = StateReader::new(name, self.get(name)?);
        let v = f(&mut r)?;
        r.finish()?;
        Ok(v)
    }

    /// Restores `item` from section `name`.
    pub fn restore(
        &self,
        name: &str,
        item: &mut dyn Checkpointable,
    ) -> Result<(), CheckpointError> {
        self.read(name, |r| item.restore(r))
    }

    /// The sections as the manifest lists them.
    pub fn infos(&self) -> Vec<SectionInfo> {
        self.order
            .iter()
            .map(|n| SectionInfo {
                name: n.clone(),
                bytes: self.data[n].len() as u64,
            })
            .collect()
    }

    /// The state file's bytes.
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.data.values().map(Vec::len).sum::<usize>());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        for name in &self.order {
            let payload = &self.data[name];
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(&adler2::adler32_slice(payload).to_le_bytes());
            out.extend_from_slice(payload);
        }
        out
    }

    /// Parses a state file.
    fn decode(bytes: &[u8]) -> Result<Sections, CheckpointError> {
        let truncated = |what: &str| CheckpointError::Truncated(what.to_string());
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(CheckpointError::NotACheckpoint);
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FORMAT_VERSION {
            return Err(CheckpointError::Version { found: version });
        }
        let mut rest = &bytes[12..];
        let mut take = |n: usize, what: &str| -> Result<&[u8], CheckpointError> {
            if rest.len() < n {
                return Err(truncated(what));
            }
            let (a, b) = rest.split_at(n);
            rest = b;
            Ok(a)
        };
        let mut sections = Sections::new();
        while let Ok(len) = take(2, "a section's name") {
            let len = u16::from_le_bytes(len.try_into().expect("2 bytes")) as usize;
            if len == 0 || len > MAX_NAME_BYTES {
                return Err(CheckpointError::Inconsistent(format!(
                    "a section name of {len} bytes"
                )));
            }
            let name = String::from_utf8_lossy(take(len, "a section's name")?).into_owned();
            let what = format!("section '{name}'");
            let size = u64::from_le_bytes(take(8, &what)?.try_into().expect("8 bytes"));
            let sum = u32::from_le_bytes(take(4, &what)?.try_into().expect("4 bytes"));
            let size = usize::try_from(size).map_err(|_| truncated(&what))?;
            let payload = take(size, &what)?;
            if adler2::adler32_slice(payload) != sum {
                return Err(CheckpointError::Checksum(name));
            }
            sections.insert(name, payload.to_vec());
        }
        Ok(sections)
    }
}

/// A checkpoint: its manifest and sections.
#[derive(Debug)]
pub struct Checkpoint {
    /// `manifest.json`.
    pub manifest: Manifest,
    /// The sections of `state.bin`.
    pub sections: Sections,
}

impl Checkpoint {
    /// Writes the checkpoint into directory `dir` (created if missing;
    /// files of an earlier checkpoint there are replaced). The manifest's
    /// section list is filled in.
    pub fn write(&self, dir: &Path) -> Result<(), CheckpointError> {
        let io = |path: PathBuf| move |source| CheckpointError::Io { path, source };
        std::fs::create_dir_all(dir).map_err(io(dir.to_path_buf()))?;
        let manifest = Manifest {
            sections: self.sections.infos(),
            ..self.manifest.clone()
        };
        let state = dir.join(STATE_FILE);
        std::fs::write(&state, self.sections.encode()).map_err(io(state))?;
        let manifest_path = dir.join(MANIFEST_FILE);
        let text = serde_json::to_string_pretty(&manifest).expect("JSON of plain values");
        std::fs::write(&manifest_path, text + "\n").map_err(io(manifest_path))?;
        Ok(())
    }

    /// Reads the checkpoint in directory `dir`, checking the format
    /// version, the sections' checksums and that the manifest lists them.
    pub fn read(dir: &Path) -> Result<Checkpoint, CheckpointError> {
        let io = |path: PathBuf| move |source| CheckpointError::Io { path, source };
        let manifest_path = dir.join(MANIFEST_FILE);
        let text = std::fs::read(&manifest_path).map_err(io(manifest_path.clone()))?;
        let version: Option<u32> = serde_json::from_slice::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("format_version")?.as_u64())
            .and_then(|v| u32::try_from(v).ok());
        if let Some(found) = version.filter(|&v| v != FORMAT_VERSION) {
            return Err(CheckpointError::Version { found });
        }
        let manifest: Manifest =
            serde_json::from_slice(&text).map_err(|source| CheckpointError::Manifest {
                path: manifest_path,
                source,
            })?;
        let state = dir.join(STATE_FILE);
        let bytes = std::fs::read(&state).map_err(io(state))?;
        let sections = Sections::decode(&bytes)?;
        if sections.infos() != manifest.sections {
            return Err(CheckpointError::Inconsistent(
                "the sections listed are not those stored (truncated?)".into(),
            ));
        }
        Ok(Checkpoint { manifest, sections })
    }
}

#[cfg(test)]
mod tests;
