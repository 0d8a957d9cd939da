//! The page-heat file (`--page-heat FILE`, docs/page-heat.md): what
//! reached every page in each window of simulated time, as the memory model
//! counts it ([`rvnvmm_timing::MemoryModel::record_page_heat`]).
//!
//! A [`Recorder`] takes the model's finished windows during the run and
//! writes them; [`HeatFile::read`] reads a file back. The format is compact
//! (LEB128 varints, page numbers as deltas) and streamed: a run that is
//! killed leaves every window written before it readable.
use rvnvmm_timing::{MemoryModel, PageCounts};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The file's first bytes.
pub const MAGIC: &[u8; 8] = b"RVNVHEAT";
/// The format's version.
pub const VERSION: u32 = 1;
/// log2 of the page the heat is counted in.
pub const PAGE_SHIFT: u32 = 12;
/// The window when none is given (`--page-heat-window`): 1 ms.
pub const DEFAULT_WINDOW_NS: u64 = 1_000_000;

const TAG_PHYSICAL: u8 = b'P';
const TAG_VIRTUAL: u8 = b'V';
const TAG_END: u8 = b'E';

/// A memory region as the file's header names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The region's name in the machine's configuration.
    pub name: String,
    /// Its NUMA node id.
    pub node: u32,
    /// Its first physical address.
    pub base: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// What reached one virtual page of a process in a window (user mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtualPage {
    /// The guest's process id.
    pub pid: u32,
    /// The page number: the virtual address >> [`PAGE_SHIFT`].
    pub page: u64,
    /// The node of the frame that held it at the window's end.
    pub node: u32,
    /// What reached it.
    pub counts: PageCounts,
}

fn put_uv(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_counts(out: &mut Vec<u8>, c: &PageCounts) {
    put_uv(out, u64::from(c.reads));
    put_uv(out, u64::from(c.writes));
    put_uv(out, u64::from(c.misses));
}

/// Writes the format to `W`, one block per call.
#[derive(Debug)]
pub struct HeatWriter<W: Write> {
    out: W,
    block: Vec<u8>,
    last_window: Option<u64>,
}

impl<W: Write> HeatWriter<W> {
    /// Writes the header: the window in picoseconds and the regions.
    pub fn new(mut out: W, window_ps: u64, regions: &[Region]) -> io::Result<HeatWriter<W>> {
        let mut b = Vec::with_capacity(64);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&PAGE_SHIFT.to_le_bytes());
        b.extend_from_slice(&window_ps.to_le_bytes());
        put_uv(&mut b, regions.len() as u64);
        for r in regions {
            put_uv(&mut b, u64::from(r.node));
            b.extend_from_slice(&r.base.to_le_bytes());
            b.extend_from_slice(&r.size.to_le_bytes());
            put_uv(&mut b, r.name.len() as u64);
            b.extend_from_slice(r.name.as_bytes());
        }
        out.write_all(&b)?;
        Ok(HeatWriter {
            out,
            block: b,
            last_window: None,
        })
    }

    fn begin(&mut self, tag: u8, window: u64, records: usize) {
        debug_assert!(self.last_window.is_none_or(|w| w <= window));
        self.last_window = Some(window);
        self.block.clear();
        self.block.push(tag);
        put_uv(&mut self.block, window);
        put_uv(&mut self.block, records as u64);
    }

    /// Window `window`'s physical pages, ascending by page number.
    pub fn physical(&mut self, window: u64, pages: &[(u64, PageCounts)]) -> io::Result<()> {
        self.begin(TAG_PHYSICAL, window, pages.len());
        let mut prev = 0;
        for (page, counts) in pages {
            debug_assert!(*page >= prev);
            put_uv(&mut self.block, page - prev);
            put_counts(&mut self.block, counts);
            prev = *page;
        }
        self.out.write_all(&self.block)
    }

    /// Window `window`'s virtual pages, ascending by (pid, page); after
    /// the window's physical pages.
    pub fn virtual_pages(&mut self, window: u64, pages: &[VirtualPage]) -> io::Result<()> {
        self.begin(TAG_VIRTUAL, window, pages.len());
        let mut prev: Option<(u32, u64)> = None;
        for p in pages {
            put_uv(&mut self.block, u64::from(p.pid));
            let base = match prev {
                Some((pid, page)) if pid == p.pid => page,
                _ => 0,
            };
            debug_assert!(p.page >= base);
            put_uv(&mut self.block, p.page - base);
            put_uv(&mut self.block, u64::from(p.node));
            put_counts(&mut self.block, &p.counts);
            prev = Some((p.pid, p.page));
        }
        self.out.write_all(&self.block)
    }

    /// The end block, `windows` the number of windows the run spanned;
    /// returns the writer, flushed.
    pub fn end(mut self, windows: u64) -> io::Result<W> {
        self.block.clear();
        self.block.push(TAG_END);
        put_uv(&mut self.block, windows);
        self.out.write_all(&self.block)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Maps a window's physical pages to the virtual pages that hold them
/// (user mode), appending to the vector.
pub type VirtualMap<'a> = &'a mut dyn FnMut(&[(u64, PageCounts)], &mut Vec<VirtualPage>);

/// A run's page heat on its way to a file: the model counts, the recorder
/// takes the windows no request can reach any more and writes them. A
/// write error stops the recording and is kept for [`Recorder::finish`],
/// which the run reports.
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    window_ns: u64,
    writer: Option<HeatWriter<BufWriter<File>>>,
    error: Option<io::Error>,
    virtual_pages: Vec<VirtualPage>,
}

impl Recorder {
    /// Creates `path` and writes its header.
    pub fn create(path: &Path, window_ns: u64, regions: &[Region]) -> Result<Recorder, String> {
        if window_ns == 0 {
            return Err("--page-heat-window must be at least 1 ns".into());
        }
        let fail = |e: io::Error| format!("cannot write the page heat to {}: {e}", path.display());
        let file = File::create(path).map_err(fail)?;
        let writer = HeatWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            window_ns.saturating_mul(1000),
            regions,
        )
        .map_err(fail)?;
        Ok(Recorder {
            path: path.to_path_buf(),
            window_ns,
            writer: Some(writer),
            error: None,
            virtual_pages: Vec::new(),
        })
    }

    /// The window in nanoseconds.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// Writes the model's finished windows (every window with `all`), and
    /// with `map` each window's virtual pages after its physical ones.
    pub fn pump(&mut self, model: &mut dyn MemoryModel, all: bool, mut map: Option<VirtualMap>) {
        let Some(writer) = self.writer.as_mut() else {
            // Stopped by an error: the model's windows are let go.
            model.take_page_heat(all, &mut |_| {});
            return;
        };
        let mut error = None;
        let virtual_pages = &mut self.virtual_pages;
        model.take_page_heat(all, &mut |(window, pages)| {
            if error.is_some() {
                return;
            }
            let mut wrote = writer.physical(window, pages);
            if let (Ok(()), Some(map)) = (&wrote, map.as_mut()) {
                virtual_pages.clear();
                map(pages, virtual_pages);
                virtual_pages.sort_unstable_by_key(|p| (p.pid, p.page));
                wrote = writer.virtual_pages(window, virtual_pages);
            }
            error = wrote.err();
        });
        if let Some(e) = error {
            self.fail(e);
        }
    }

    fn fail(&mut self, e: io::Error) {
        self.error = Some(e);
        // What was written stays readable: the blocks before are whole.
        self.writer = None;
    }

    /// The end of the run: writes every window left and the end block.
    pub fn finish(
        mut self,
        model: &mut dyn MemoryModel,
        map: Option<VirtualMap>,
    ) -> Result<(), String> {
        self.pump(model, true, map);
        if let Some(w) = self.writer.take() {
            let windows = w.last_window.map_or(0, |w| w + 1);
            if let Err(e) = w.end(windows) {
                self.error = Some(e);
            }
        }
        match self.error {
            Some(e) => Err(format!(
                "the page heat in {} stops early: {e}",
                self.path.display()
            )),
            None => Ok(()),
        }
    }

    /// Lets the recording go without writing anything more: for a forked
    /// child, whose copy of the buffer holds the parent's bytes.
    pub fn abandon(mut self) {
        if let Some(w) = self.writer.take() {
            std::mem::forget(w);
        }
    }
}

/// Why a page-heat file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError(pub String);

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

/// A page-heat file, read whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeatFile {
    /// The window in picoseconds.
    pub window_ps: u64,
    /// The machine's memory regions.
    pub regions: Vec<Region>,
    /// (window, physical page number, counts), in file order.
    pub physical: Vec<(u64, u64, PageCounts)>,
    /// (window, virtual page), in file order.
    pub virtual_pages: Vec<(u64, VirtualPage)>,
    /// The windows the run spanned, from the end block; `None` for a run
    /// that did not finish (every whole block before the break is read).
    pub windows: Option<u64>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn uv(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.take(1)?.first()?;
            v |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    fn u32v(&mut self) -> Option<u32> {
        u32::try_from(self.uv()?).ok()
    }
    fn counts(&mut self) -> Option<PageCounts> {
        Some(PageCounts {
            reads: self.u32v()?,
            writes: self.u32v()?,
            misses: self.u32v()?,
        })
    }
}

impl HeatFile {
    /// Reads a whole file's bytes.
    pub fn read(bytes: &[u8]) -> Result<HeatFile, FormatError> {
        let bad = |what: &str| FormatError(format!("not a page-heat file: {what}"));
        let mut c = Cursor { bytes, at: 0 };
        if c.take(8) != Some(&MAGIC[..]) {
            return Err(bad("no RVNVHEAT at its start"));
        }
        let version = c.u32().ok_or_else(|| bad("no version"))?;
        if version != VERSION {
            return Err(FormatError(format!(
                "page-heat file version {version}; this rvnvmm reads version {VERSION}"
            )));
        }
        let header = (|| {
            let shift = c.u32()?;
            let window_ps = c.u64()?;
            let n = c.uv()?;
            let mut regions = Vec::new();
            for _ in 0..n {
                let node = c.u32v()?;
                let base = c.u64()?;
                let size = c.u64()?;
                let len = usize::try_from(c.uv()?).ok()?;
                let name = String::from_utf8(c.take(len)?.to_vec()).ok()?;
                regions.push(Region {
                    name,
                    node,
                    base,
                    size,
                });
            }
            Some((shift, window_ps, regions))
        })();
        let (shift, window_ps, regions) = header.ok_or_else(|| bad("a short header"))?;
        if shift != PAGE_SHIFT {
            return Err(bad(&format!("pages of 2^{shift} bytes")));
        }
        let mut file = HeatFile {
            window_ps,
            regions,
            ..HeatFile::default()
        };
        // Blocks until the end block or the first one cut short.
        loop {
            let (physical, virtual_pages) = (file.physical.len(), file.virtual_pages.len());
            let whole = (|| -> Option<bool> {
                let tag = *c.take(1)?.first()?;
                if tag == TAG_END {
                    file.windows = Some(c.uv()?);
                    return Some(false);
                }
                let window = c.uv()?;
                let n = c.uv()?;
                let mut prev: Option<(u32, u64)> = None;
                for _ in 0..n {
                    match tag {
                        TAG_PHYSICAL => {
                            let page = prev.map_or(0, |p| p.1) + c.uv()?;
                            prev = Some((0, page));
                            file.physical.push((window, page, c.counts()?));
                        }
                        TAG_VIRTUAL => {
                            let pid = c.u32v()?;
                            let base = prev.filter(|p| p.0 == pid).map_or(0, |p| p.1);
                            let page = base + c.uv()?;
                            prev = Some((pid, page));
                            let node = c.u32v()?;
                            let counts = c.counts()?;
                            file.virtual_pages.push((
                                window,
                                VirtualPage {
                                    pid,
                                    page,
                                    node,
                                    counts,
                                },
                            ));
                        }
                        _ => return None,
                    }
                }
                Some(true)
            })();
            match whole {
                Some(true) => continue,
                Some(false) => break,
                None => {
                    // A block cut short (or garbled): drop what it added.
                    file.physical.truncate(physical);
                    file.virtual_pages.truncate(virtual_pages);
                    break;
                }
            }
        }
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(reads: u32, writes: u32, misses: u32) -> PageCounts {
        PageCounts {
            reads,
            writes,
            misses,
        }
    }

    fn sample() -> Vec<u8> {
        let regions = [
            Region {
                name: "dram".into(),
                node: 0,
                base: 0x8000_0000,
                size: 1 << 30,
            },
            Region {
                name: "cxl".into(),
                node: 1,
                base: 0x1_0000_0000,
                size: 1 << 31,
            },
        ];
        let mut w = HeatWriter::new(Vec::new(), 1_000_000_000, &regions).unwrap();
        w.physical(0, &[(0x80000, c(1, 2, 3)), (0x100000, c(300, 0, 70000))])
            .unwrap();
        w.virtual_pages(
            0,
            &[
                VirtualPage {
                    pid: 1,
                    page: 0x10,
                    node: 0,
                    counts: c(1, 2, 3),
                },
                VirtualPage {
                    pid: 1,
                    page: 0x3f_ffff_f000,
                    node: 1,
                    counts: c(300, 0, 70000),
                },
                VirtualPage {
                    pid: 2,
                    page: 0x5,
                    node: 1,
                    counts: c(0, 0, 1),
                },
            ],
        )
        .unwrap();
        w.physical(7, &[(0x80001, c(0, 0, 1))]).unwrap();
        w.end(8).unwrap()
    }

    #[test]
    fn a_file_reads_back_as_written() {
        let bytes = sample();
        let f = HeatFile::read(&bytes).unwrap();
        assert_eq!(f.window_ps, 1_000_000_000);
        assert_eq!(f.regions[1].name, "cxl");
        assert_eq!(f.regions[1].base, 0x1_0000_0000);
        assert_eq!(
            f.physical,
            [
                (0, 0x80000, c(1, 2, 3)),
                (0, 0x100000, c(300, 0, 70000)),
                (7, 0x80001, c(0, 0, 1))
            ]
        );
        let pages: Vec<(u32, u64, u32)> = f
            .virtual_pages
            .iter()
            .map(|(_, p)| (p.pid, p.page, p.node))
            .collect();
        assert_eq!(pages, [(1, 0x10, 0), (1, 0x3f_ffff_f000, 1), (2, 5, 1)]);
        assert_eq!(f.windows, Some(8));
    }

    #[test]
    fn a_cut_file_keeps_its_whole_blocks() {
        let bytes = sample();
        let whole = HeatFile::read(&bytes).unwrap();
        // Cut inside the last physical block.
        for cut in [bytes.len() - 3, bytes.len() - 5] {
            let f = HeatFile::read(&bytes[..cut]).unwrap();
            assert_eq!(f.windows, None);
            assert_eq!(f.physical, whole.physical[..2]);
            assert_eq!(f.virtual_pages, whole.virtual_pages);
        }
    }

    #[test]
    fn other_files_are_refused_by_name() {
        assert!(HeatFile::read(b"ELF").unwrap_err().0.contains("RVNVHEAT"));
        let mut bytes = sample();
        bytes[8] = 9;
        assert!(HeatFile::read(&bytes).unwrap_err().0.contains("version 9"));
    }
}
