//! Guest program counter to source location: which object, function, source
//! file and line an address belongs to, for diagnoses such as "store at
//! undo_log.c:97 (transaction) not flushed before the fence at
//! undo_log.c:105".
//!
//! A [`Symbolizer`] is given the files mapped into the guest's address space
//! ([`MappedObject`]: the ELF executable and its shared libraries, one entry
//! per mapped segment) and opens each host file the first time an address in
//! it is asked for. The line comes from the object's DWARF (`-g`); the
//! function from DWARF or, without it, from the ELF symbol table. Whatever
//! cannot be read (a missing, stripped, truncated or non-ELF file) only makes
//! the [`Location`] less precise: [`Symbolizer::locate`] never fails, and
//! [`Symbolizer::errors`] says why an object gave less than it might have.
//!
//! ```
//! use rvnvmm_symbols::{MappedObject, Symbolizer};
//!
//! let symbols = Symbolizer::new(vec![MappedObject {
//!     guest_path: "/crashtest/bin/undo_log".into(),
//!     host_path: "build/emu/undo_log".into(),
//!     start: 0x10000,
//!     end: 0x7a000,
//!     file_offset: 0,
//! }]);
//! // "undo_log.c:97 (transaction)" with the program built with -g at hand,
//! // "undo_log+0x10a2c" without the file.
//! println!("store at {}", symbols.locate(0x10a2c));
//! // Outside every mapping only the address is known.
//! assert_eq!(symbols.locate(0x8).to_string(), "0x8");
//! ```
#![forbid(unsafe_code)]

use object::read::elf::{FileHeader, ProgramHeader};
use object::{Object, ObjectSection, ObjectSymbol};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One file mapped into the guest's address space (an ELF image or shared
/// library): one entry per mapping, so usually several per file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedObject {
    /// As the guest named it, e.g. "/crashtest/bin/undo_log".
    pub guest_path: String,
    /// Where the emulator read it on the host.
    pub host_path: PathBuf,
    /// Guest virtual address of the mapping's first byte.
    pub start: u64,
    /// One past the mapping's last byte.
    pub end: u64,
    /// File offset of `start`.
    pub file_offset: u64,
}

impl MappedObject {
    /// The executable mappings of the ELF file at `host_path` loaded with
    /// `base` added to the addresses it links (0 for a static or non-PIE
    /// program), as the guest names it `guest_path`: for a machine whose
    /// processes' mappings rvnvmm does not see (the full system).
    pub fn loaded(
        guest_path: &str,
        host_path: &Path,
        base: u64,
    ) -> Result<Vec<MappedObject>, Error> {
        let info = ObjectInfo::open(host_path)?;
        Ok(info
            .segments
            .iter()
            .filter(|s| s.executable && s.file_size > 0)
            .map(|s| MappedObject {
                guest_path: guest_path.to_string(),
                host_path: host_path.to_path_buf(),
                start: base.wrapping_add(s.vaddr),
                end: base.wrapping_add(s.vaddr).wrapping_add(s.file_size),
                file_offset: s.offset,
            })
            .collect())
    }
}

/// What is known about a guest address. Every field but `pc` may be missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The address asked for.
    pub pc: u64,
    /// File name of the object mapped there, e.g. "libpmemobj.so.1".
    pub object: Option<String>,
    /// The address within the object: its ELF virtual address (what
    /// `addr2line -e OBJECT` takes) when the object's program headers could
    /// be read, else the file offset (the same for a shared library whose
    /// first segment is loaded at 0, as usual).
    pub offset: Option<u64>,
    /// The function: the innermost one, which may have been inlined (see
    /// `inlined_in`).
    pub function: Option<String>,
    /// When `function` was inlined: the function it was inlined into, the
    /// one whose machine code this is (the symbol a stack trace would show).
    pub inlined_in: Option<String>,
    /// Base name of the source file (no directories: output must not depend
    /// on where the program was built).
    pub file: Option<String>,
    /// Source line (the innermost one, as binutils' addr2line reports).
    pub line: Option<u32>,
}

impl Location {
    /// Nothing known but the address.
    pub fn unknown(pc: u64) -> Location {
        Location {
            pc,
            ..Location::default()
        }
    }
}

/// "undo_log.c:97 (transaction)"; without a line
/// "libpmemobj.so.1+0x1a2b4 (pmemobj_tx_commit)"; with nothing known
/// "0x10a2c". An inlined function reads "(persist inlined in transaction)".
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.file, self.line, &self.object, self.offset) {
            (Some(file), Some(line), _, _) => write!(f, "{file}:{line}")?,
            (_, _, Some(object), Some(offset)) => write!(f, "{object}+{offset:#x}")?,
            _ => write!(f, "{:#x}", self.pc)?,
        }
        if let Some(function) = &self.function {
            write!(f, " ({function}")?;
            if let Some(outer) = &self.inlined_in {
                write!(f, " inlined in {outer}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// Why an object gave less than it might have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The host file could not be read.
    #[error("{}: cannot read: {message}", path.display())]
    Read { path: PathBuf, message: String },
    /// Not an ELF file, or its headers are malformed: nothing but the file
    /// offset is known.
    #[error("{}: not a readable ELF file: {message}", path.display())]
    NotElf { path: PathBuf, message: String },
    /// The section headers or symbol tables are malformed: no function
    /// names and no source lines.
    #[error("{}: bad sections or symbol table: {message}", path.display())]
    Sections { path: PathBuf, message: String },
    /// The DWARF is malformed: functions from the symbol table only, no
    /// source lines.
    #[error("{}: bad DWARF: {message}", path.display())]
    Dwarf { path: PathBuf, message: String },
}

/// Turns guest addresses into [`Location`]s. Each host file is read and
/// parsed once, the first time an address in it is asked for, however many
/// mappings name it. `Send` but not `Sync` (the cache is a `RefCell`).
pub struct Symbolizer {
    /// Sorted by `start`; assumed not to overlap (they are the guest's
    /// mappings at one moment).
    objects: Vec<MappedObject>,
    /// Each host file opened so far, read or not.
    cache: RefCell<HashMap<PathBuf, Result<ObjectInfo, Error>>>,
}

impl fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Symbolizer")
            .field("objects", &self.objects)
            .field("opened", &self.cache.borrow().len())
            .finish()
    }
}

impl Symbolizer {
    /// A symbolizer for these mappings; no file is opened yet.
    pub fn new(mut objects: Vec<MappedObject>) -> Symbolizer {
        objects.retain(|o| o.start < o.end);
        objects.sort_by_key(|o| o.start);
        Symbolizer {
            objects,
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// The mappings, sorted by guest address.
    pub fn objects(&self) -> &[MappedObject] {
        &self.objects
    }

    /// Where `pc` is. Never fails: what cannot be found is left out.
    pub fn locate(&self, pc: u64) -> Location {
        let mut loc = Location::unknown(pc);
        let i = self.objects.partition_point(|o| o.start <= pc);
        let Some(mapping) = i.checked_sub(1).map(|i| &self.objects[i]) else {
            return loc;
        };
        if pc >= mapping.end {
            return loc;
        }
        loc.object = Some(object_name(mapping));
        let Some(file_offset) = (pc - mapping.start).checked_add(mapping.file_offset) else {
            return loc;
        };
        loc.offset = Some(file_offset);

        if !self.cache.borrow().contains_key(&mapping.host_path) {
            let info = ObjectInfo::open(&mapping.host_path);
            self.cache
                .borrow_mut()
                .insert(mapping.host_path.clone(), info);
        }
        let cache = self.cache.borrow();
        let Some(Ok(info)) = cache.get(&mapping.host_path) else {
            return loc;
        };
        let Some(vaddr) = info.vaddr(file_offset) else {
            return loc;
        };
        loc.offset = Some(vaddr);
        if let Some(dwarf) = &info.dwarf {
            // A lookup error (malformed unit) leaves the symbol table.
            let _ = dwarf_lookup(dwarf, vaddr, &mut loc);
        }
        if loc.function.is_none() {
            loc.function = info.symbol(vaddr).map(str::to_owned);
        }
        loc
    }

    /// Why the objects opened so far gave less than they might have (missing
    /// or malformed files, bad DWARF), one error per host file at most. A
    /// stripped file is not an error.
    pub fn errors(&self) -> Vec<Error> {
        let cache = self.cache.borrow();
        let mut errors: Vec<Error> = cache
            .values()
            .filter_map(|info| match info {
                Err(e) => Some(e.clone()),
                Ok(info) => info.problem.clone(),
            })
            .collect();
        errors.sort_by_key(Error::to_string);
        errors
    }
}

/// The object's name as the guest knows it, without directories.
fn object_name(mapping: &MappedObject) -> String {
    let name = base_name(&mapping.guest_path);
    if name.is_empty() {
        let host = mapping.host_path.file_name().unwrap_or_default();
        host.to_string_lossy().into_owned()
    } else {
        name.to_owned()
    }
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Owned, so the parsed DWARF outlives the file's bytes; `Arc` (not `Rc`)
/// keeps the symbolizer `Send`.
type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// A PT_LOAD program header: how file offsets become virtual addresses.
struct Segment {
    offset: u64,
    file_size: u64,
    vaddr: u64,
    executable: bool,
}

/// A function from the symbol table.
struct Symbol {
    start: u64,
    end: u64,
    name: String,
}

/// What one ELF file tells.
struct ObjectInfo {
    segments: Vec<Segment>,
    /// Sorted by `start`.
    symbols: Vec<Symbol>,
    /// The largest symbol, which bounds the search back from an address.
    max_symbol_size: u64,
    dwarf: Option<addr2line::Context<Reader>>,
    /// What could not be read beyond the program headers.
    problem: Option<Error>,
}

impl ObjectInfo {
    fn open(path: &Path) -> Result<ObjectInfo, Error> {
        match std::fs::read(path) {
            Ok(data) => ObjectInfo::parse(path, &data),
            Err(e) => Err(Error::Read {
                path: path.to_owned(),
                message: e.to_string(),
            }),
        }
    }

    fn parse(path: &Path, data: &[u8]) -> Result<ObjectInfo, Error> {
        // The program headers alone, first: a file whose section headers are
        // cut off (they are at its end) still translates addresses.
        let not_elf = |e: object::Error| Error::NotElf {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let segments = match object::FileKind::parse(data).map_err(not_elf)? {
            object::FileKind::Elf64 => {
                load_segments::<object::elf::FileHeader64<object::Endianness>>(data)
            }
            object::FileKind::Elf32 => {
                load_segments::<object::elf::FileHeader32<object::Endianness>>(data)
            }
            kind => {
                return Err(Error::NotElf {
                    path: path.to_owned(),
                    message: format!("{kind:?}"),
                })
            }
        }
        .map_err(not_elf)?;
        let mut info = ObjectInfo {
            segments,
            symbols: Vec::new(),
            max_symbol_size: 0,
            dwarf: None,
            problem: None,
        };
        let file = match object::File::parse(data) {
            Ok(file) => file,
            Err(e) => {
                info.problem = Some(Error::Sections {
                    path: path.to_owned(),
                    message: e.to_string(),
                });
                return Ok(info);
            }
        };
        info.symbols = load_symbols(&file);
        info.max_symbol_size = info
            .symbols
            .iter()
            .map(|s| s.end - s.start)
            .max()
            .unwrap_or(0);
        match load_dwarf(&file) {
            Ok(dwarf) => info.dwarf = dwarf,
            Err(message) => {
                info.problem = Some(Error::Dwarf {
                    path: path.to_owned(),
                    message,
                })
            }
        }
        Ok(info)
    }

    /// The virtual address the file offset is loaded at. Segments may share
    /// a page but not bytes; should two claim the offset anyway, the
    /// executable one wins (a pc is code).
    fn vaddr(&self, offset: u64) -> Option<u64> {
        let mut found: Option<&Segment> = None;
        for s in &self.segments {
            if offset >= s.offset
                && offset - s.offset < s.file_size
                && found.is_none_or(|f| !f.executable && s.executable)
            {
                found = Some(s);
            }
        }
        found.map(|s| (offset - s.offset).wrapping_add(s.vaddr))
    }

    /// The function symbol covering `vaddr`; the innermost should symbols
    /// nest.
    fn symbol(&self, vaddr: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.start <= vaddr);
        self.symbols[..i]
            .iter()
            .rev()
            .take_while(|s| vaddr - s.start < self.max_symbol_size)
            .find(|s| vaddr < s.end)
            .map(|s| s.name.as_str())
    }
}

fn load_segments<Elf: FileHeader<Endian = object::Endianness>>(
    data: &[u8],
) -> object::Result<Vec<Segment>> {
    let header = Elf::parse(data)?;
    let endian = header.endian()?;
    let mut segments = Vec::new();
    for ph in header.program_headers(endian, data)? {
        if ph.p_type(endian) != object::elf::PT_LOAD {
            continue;
        }
        segments.push(Segment {
            offset: ph.p_offset(endian).into(),
            file_size: ph.p_filesz(endian).into(),
            vaddr: ph.p_vaddr(endian).into(),
            executable: ph.p_flags(endian).0 & object::elf::PF_X.0 != 0,
        });
    }
    Ok(segments)
}

/// Sized function symbols from `.symtab`, else `.dynsym` (a stripped file
/// keeps only the exported functions there).
fn load_symbols(file: &object::File<'_>) -> Vec<Symbol> {
    let functions = |symbols: &mut dyn Iterator<Item = object::Symbol<'_, '_>>| {
        symbols
            .filter(|s| s.kind() == object::SymbolKind::Text && s.is_definition() && s.size() > 0)
            .filter_map(|s| {
                let name = s.name().ok().filter(|n| !n.is_empty())?;
                Some(Symbol {
                    start: s.address(),
                    end: s.address().checked_add(s.size())?,
                    name: name.to_owned(),
                })
            })
            .collect::<Vec<_>>()
    };
    let mut symbols = functions(&mut file.symbols());
    if symbols.is_empty() {
        symbols = functions(&mut file.dynamic_symbols());
    }
    symbols.sort_by_key(|s| (s.start, s.end));
    symbols
}

/// The file's DWARF, or `None` without `.debug_info` (built with -g0, or
/// stripped).
fn load_dwarf(file: &object::File<'_>) -> Result<Option<addr2line::Context<Reader>>, String> {
    if file.section_by_name(".debug_info").is_none() {
        return Ok(None);
    }
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<Reader, String> {
        let data = match file.section_by_name(id.name()) {
            Some(section) => section
                .uncompressed_data()
                .map_err(|e| format!("{}: {e}", id.name()))?,
            None => Cow::Borrowed(&[][..]),
        };
        Ok(gimli::EndianArcSlice::new(Arc::from(&*data), endian))
    };
    let dwarf = gimli::Dwarf::load(load)?;
    addr2line::Context::from_dwarf(dwarf)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Function, file and line from DWARF. The frames come innermost first: the
/// first gives the line (the line table's, as binutils' addr2line reports
/// it) and the function it is in; the last, when it differs, the function
/// that was inlined into.
fn dwarf_lookup(
    dwarf: &addr2line::Context<Reader>,
    vaddr: u64,
    loc: &mut Location,
) -> Result<(), gimli::Error> {
    let mut frames = dwarf.find_frames(vaddr).skip_all_loads()?;
    let mut first = true;
    let mut outermost = None;
    while let Some(frame) = frames.next()? {
        let name = frame
            .function
            .as_ref()
            .and_then(|f| f.raw_name().ok())
            .map(Cow::into_owned);
        if first {
            first = false;
            loc.function = name.clone();
            if let Some(at) = frame.location {
                set_line(loc, at);
            }
        } else if name.is_some() {
            outermost = name;
        }
    }
    if loc.function.is_some() && outermost.is_some() && outermost != loc.function {
        loc.inlined_in = outermost;
    }
    if loc.line.is_none() {
        if let Some(at) = dwarf.find_location(vaddr)? {
            set_line(loc, at);
        }
    }
    Ok(())
}

fn set_line(loc: &mut Location, at: addr2line::Location<'_>) {
    if let (Some(file), Some(line)) = (at.file, at.line.filter(|&l| l != 0)) {
        loc.file = Some(base_name(file).to_owned());
        loc.line = Some(line);
    }
}

#[cfg(test)]
mod tests;
