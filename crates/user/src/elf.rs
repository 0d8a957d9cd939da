//! ELF64 RISC-V program loading: segments, interpreter, initial stack.
//!
//! Like Linux's `binfmt_elf`, the loader reads the ELF header and the
//! program headers only: section headers, symbols and debug information are
//! never looked at, so a damaged section-header table does not stop a
//! program Linux runs. The checks, and the errno an `execve` gets for each,
//! follow `load_elf_binary`.

use crate::errno::*;
use crate::vm::{AddressSpace, Backing, PROT_EXEC, PROT_READ, PROT_WRITE, USER_TOP};
use goblin::elf::header;
use rvnvmm_mem::sv39::PAGE_SIZE;
use rvnvmm_mem::PhysMem;

/// Why a program could not be loaded. Messages are for the user of `rvnvmm`.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// Host error.
        source: std::io::Error,
    },
    /// A directory, device, FIFO or socket (execve: EACCES).
    #[error("cannot run {path}: it is {what}, not a regular file")]
    NotRegularFile {
        /// File path.
        path: String,
        /// What it is.
        what: &'static str,
    },
    /// Not an ELF file, or a malformed one (execve: ENOEXEC).
    #[error("{path} is not a valid ELF file: {why}")]
    Malformed {
        /// File path.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// An ELF for another machine or class (execve: ENOEXEC).
    #[error("{path} is not a 64-bit little-endian RISC-V executable ({why})")]
    WrongMachine {
        /// File path.
        path: String,
        /// What it is instead.
        why: String,
    },
    /// Headers or segments promise bytes past the end of the file
    /// (execve: EIO, as Linux's short read).
    #[error("{path} is truncated: {why}")]
    Truncated {
        /// File path.
        path: String,
        /// What is missing.
        why: String,
    },
    /// Well-formed, but its layout cannot be loaded (execve: EINVAL).
    #[error("{path} cannot be loaded: {why}")]
    BadLayout {
        /// File path.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// More file contents to load than [`MAX_LOADED_BYTES`].
    #[error("{path} cannot be loaded: its segments cover {bytes} bytes of the file, more than the {max} bytes rvnvmm loads", max = MAX_LOADED_BYTES)]
    TooLarge {
        /// File path.
        path: String,
        /// Bytes the headers and segments cover.
        bytes: u64,
    },
    /// The dynamic linker named by PT_INTERP is missing.
    #[error("{path} needs the dynamic linker {interp}, which was not found{hint}")]
    MissingInterpreter {
        /// Program path.
        path: String,
        /// Interpreter path from PT_INTERP.
        interp: String,
        /// Where to look.
        hint: String,
    },
    /// Guest memory ran out.
    #[error("out of guest memory while loading {path} (raise the DRAM size in the config)")]
    NoMemory {
        /// File path.
        path: String,
    },
}

impl LoadError {
    /// The errno an `execve` of this file returns.
    pub fn errno(&self) -> Errno {
        match self {
            LoadError::Io { source, .. } => source
                .raw_os_error()
                .and_then(Errno::from_raw)
                .unwrap_or(EIO),
            LoadError::NotRegularFile { .. } => EACCES,
            LoadError::Malformed { .. } | LoadError::WrongMachine { .. } => ENOEXEC,
            LoadError::Truncated { .. } => EIO,
            LoadError::BadLayout { .. } => EINVAL,
            LoadError::MissingInterpreter { .. } => ENOENT,
            LoadError::TooLarge { .. } | LoadError::NoMemory { .. } => ENOMEM,
        }
    }
}

/// The most bytes of one ELF file the loader reads: the headers and the
/// file contents of its segments (a program's debug information, after
/// them, is not read). 4 GiB is more than the guest RAM of any machine
/// in `configs/`.
pub const MAX_LOADED_BYTES: u64 = 4 << 30;

/// What the loader placed where.
#[derive(Clone, Debug, Default)]
pub struct LoadedImage {
    /// Entry point to jump to (the interpreter's if there is one).
    pub entry: u64,
    /// The program's own entry (AT_ENTRY).
    pub prog_entry: u64,
    /// Address of the program headers in guest memory (AT_PHDR).
    pub phdr: u64,
    /// Number of program headers (AT_PHNUM).
    pub phnum: u64,
    /// Interpreter load base (AT_BASE), 0 for static programs.
    pub interp_base: u64,
    /// End of the highest segment (initial program break).
    pub brk: u64,
}

/// `p_type` values the loader acts on.
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_PHDR: u32 = 6;
/// `p_flags` bits.
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
/// Size of an ELF64 header and of one ELF64 program header.
const EHDR_SIZE: usize = 64;
const PHDR_SIZE: usize = 56;
/// Linux reads at most one page of program headers (`load_elf_phdrs`).
const MAX_PHDR_BYTES: u64 = 4096;
/// Linux's PATH_MAX, the longest PT_INTERP it accepts.
const PATH_MAX: u64 = 4096;

/// One program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramHeader {
    /// Segment type (`PT_*`).
    pub p_type: u32,
    /// `PF_R`, `PF_W`, `PF_X`.
    pub p_flags: u32,
    /// Offset of the segment's bytes in the file.
    pub p_offset: u64,
    /// Virtual address (before the load bias).
    pub p_vaddr: u64,
    /// Bytes in the file.
    pub p_filesz: u64,
    /// Bytes in memory (the rest is zero).
    pub p_memsz: u64,
}

impl ProgramHeader {
    fn parse(b: &[u8]) -> ProgramHeader {
        ProgramHeader {
            p_type: le32(b, 0),
            p_flags: le32(b, 4),
            p_offset: le64(b, 8),
            p_vaddr: le64(b, 16),
            p_filesz: le64(b, 32),
            p_memsz: le64(b, 40),
        }
    }

    /// The guest protection bits of the segment.
    fn prot(&self) -> u32 {
        let mut prot = 0;
        if self.p_flags & PF_R != 0 {
            prot |= PROT_READ;
        }
        if self.p_flags & PF_W != 0 {
            prot |= PROT_WRITE;
        }
        if self.p_flags & PF_X != 0 {
            prot |= PROT_EXEC;
        }
        prot
    }
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The ELF header fields the loader uses.
#[derive(Clone, Copy, Debug)]
struct Header {
    e_type: u16,
    e_entry: u64,
    e_phoff: u64,
    e_phnum: u16,
}

impl Header {
    /// Bytes `[e_phoff, end)` of the program-header table.
    fn phdr_end(&self) -> u64 {
        // Both bounded: checked in `parse_header`.
        self.e_phoff + u64::from(self.e_phnum) * PHDR_SIZE as u64
    }
}

/// A program file's headers and the bytes its segments load, validated for
/// RISC-V.
pub struct ElfFile {
    /// The first bytes of the file: the headers and every byte a PT_LOAD
    /// or the PT_INTERP covers (what follows, e.g. debug information, is not
    /// read).
    data: Vec<u8>,
    /// Path used in messages.
    pub path: String,
    header: Header,
    /// The program headers, in file order.
    pub phdrs: Vec<ProgramHeader>,
    interp: Option<String>,
    /// The file's device and inode, when read from a file.
    ident: Option<(u64, u64)>,
}

impl ElfFile {
    /// Reads and validates `path` (already resolved to a host path). Only a
    /// regular file is opened for reading (a FIFO is not waited on), and
    /// only the bytes the headers and segments cover are read.
    pub fn open(host_path: &std::path::Path, shown: &str) -> Result<ElfFile, LoadError> {
        use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
        let io = |source| LoadError::Io {
            path: shown.to_string(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(host_path)
            .map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(LoadError::NotRegularFile {
                path: shown.to_string(),
                what: rvnvmm_config::files::describe(&meta),
            });
        }
        let file_len = meta.len();
        // How many bytes to read is known once the headers are: the ELF
        // header, then the program headers, then the segments.
        let mut want = EHDR_SIZE as u64;
        loop {
            let mut data = vec![0; want.min(file_len) as usize];
            file.read_exact_at(&mut data, 0).map_err(io)?;
            let needed = bytes_needed(&data, file_len, shown)?;
            if needed > MAX_LOADED_BYTES {
                return Err(LoadError::TooLarge {
                    path: shown.to_string(),
                    bytes: needed,
                });
            }
            if needed <= data.len() as u64 {
                let mut elf = ElfFile::from_bytes(data, file_len, shown)?;
                elf.ident = Some((meta.dev(), meta.ino()));
                return Ok(elf);
            }
            want = needed;
        }
    }

    /// Validates the first bytes of a file of `file_len` bytes (all of it,
    /// or at least every byte its headers and segments cover).
    pub fn from_bytes(data: Vec<u8>, file_len: u64, shown: &str) -> Result<ElfFile, LoadError> {
        let header = parse_header(&data, file_len, shown)?;
        let phdrs = parse_phdrs(&data, &header);
        let malformed = |why: String| LoadError::Malformed {
            path: shown.to_string(),
            why,
        };
        let truncated = |why: String| LoadError::Truncated {
            path: shown.to_string(),
            why,
        };
        let bad = |why: String| LoadError::BadLayout {
            path: shown.to_string(),
            why,
        };
        let covered = |p: &ProgramHeader| -> Option<usize> {
            let end = p.p_offset.checked_add(p.p_filesz)?;
            (end <= file_len && end <= data.len() as u64).then_some(end as usize)
        };
        // Linux uses the first PT_INTERP and ignores any other.
        let mut interp = None;
        if let Some(p) = phdrs.iter().find(|p| p.p_type == PT_INTERP) {
            if p.p_filesz < 2 || p.p_filesz > PATH_MAX {
                return Err(malformed(format!(
                    "its PT_INTERP is {} bytes long (a path of 1 to {} bytes and a NUL)",
                    p.p_filesz,
                    PATH_MAX - 1
                )));
            }
            let end = covered(p).ok_or_else(|| {
                truncated(format!(
                    "its PT_INTERP (file bytes {:#x}+{:#x}) lies past its end ({file_len} bytes)",
                    p.p_offset, p.p_filesz
                ))
            })?;
            let bytes = &data[p.p_offset as usize..end];
            if bytes.last() != Some(&0) {
                return Err(malformed(
                    "its PT_INTERP path does not end with a NUL byte".into(),
                ));
            }
            // The path ends at the first NUL, as the kernel reads a C string.
            let path = bytes.split(|&b| b == 0).next().unwrap_or_default();
            let path = std::str::from_utf8(path)
                .map_err(|_| malformed("its PT_INTERP path is not UTF-8".into()))?;
            interp = Some(path.to_string());
        }
        for (i, p) in phdrs.iter().enumerate() {
            if p.p_type != PT_LOAD {
                continue;
            }
            if p.p_filesz > p.p_memsz {
                return Err(bad(format!(
                    "loadable segment {i} has more bytes in the file ({:#x}) than in memory ({:#x})",
                    p.p_filesz, p.p_memsz
                )));
            }
            if covered(p).is_none() {
                return Err(truncated(format!(
                    "loadable segment {i} (file bytes {:#x}+{:#x}) lies past its end ({file_len} bytes)",
                    p.p_offset, p.p_filesz
                )));
            }
            if p.p_filesz > 0 && p.p_offset % PAGE_SIZE != p.p_vaddr % PAGE_SIZE {
                return Err(bad(format!(
                    "loadable segment {i} has file offset {:#x} and address {:#x}, which differ within a 4 KiB page, so it cannot be mapped",
                    p.p_offset, p.p_vaddr
                )));
            }
            let end = p.p_vaddr.checked_add(p.p_memsz);
            let limit = if header.e_type == header::ET_EXEC {
                USER_TOP
            } else {
                // A shared object moves by its load bias; only the span
                // counts, which `load` checks against the free space.
                u64::MAX
            };
            if end.is_none_or(|e| e > limit) {
                return Err(bad(format!(
                    "loadable segment {i} ({:#x}+{:#x}) lies outside the user address space (below {USER_TOP:#x})",
                    p.p_vaddr, p.p_memsz
                )));
            }
        }
        if !phdrs.iter().any(|p| p.p_type == PT_LOAD && p.p_memsz > 0) {
            return Err(malformed("no loadable segment".into()));
        }
        if header.e_type == header::ET_EXEC && header.e_entry >= USER_TOP {
            return Err(bad(format!(
                "its entry point {:#x} lies outside the user address space (below {USER_TOP:#x})",
                header.e_entry
            )));
        }
        Ok(ElfFile {
            data,
            path: shown.to_string(),
            header,
            phdrs,
            interp,
            ident: None,
        })
    }

    /// The PT_INTERP path, if any.
    pub fn interpreter(&self) -> Option<&str> {
        self.interp.as_deref()
    }

    /// Linux's `end_data - start_data` for this program: from the highest
    /// segment start to the highest end of file bytes (in practice the
    /// initialised part of the data segment), which `RLIMIT_DATA` counts
    /// with the heap.
    pub fn data_segment_bytes(&self) -> u64 {
        let loads = self.phdrs.iter().filter(|p| p.p_type == PT_LOAD);
        let start = loads.clone().map(|p| p.p_vaddr).max().unwrap_or(0);
        let end = loads
            .map(|p| p.p_vaddr.saturating_add(p.p_filesz))
            .max()
            .unwrap_or(0);
        end.saturating_sub(start)
    }

    /// Maps the segments at `bias` (0 for ET_EXEC; chosen here for ET_DYN if
    /// `bias` is None). Returns (bias, entry, phdr address, highest end).
    pub fn load(
        &self,
        mem: &mut PhysMem,
        aspace: &mut AddressSpace,
        bias: Option<u64>,
    ) -> Result<(u64, u64, u64, u64), LoadError> {
        let bad = |why: String| LoadError::BadLayout {
            path: self.path.clone(),
            why,
        };
        let nomem = || LoadError::NoMemory {
            path: self.path.clone(),
        };
        let loads: Vec<&ProgramHeader> = self
            .phdrs
            .iter()
            .filter(|p| p.p_type == PT_LOAD && p.p_memsz > 0)
            .collect();
        // Validated: every end fits in 64 bits.
        let lo = loads.iter().map(|p| p.p_vaddr & !0xfff).min().unwrap_or(0);
        let hi = loads
            .iter()
            .map(|p| p.p_vaddr + p.p_memsz)
            .max()
            .unwrap_or(0);
        let bias = if self.header.e_type == header::ET_DYN {
            let span = (hi - lo)
                .checked_next_multiple_of(PAGE_SIZE)
                .filter(|&span| span <= USER_TOP)
                .ok_or_else(|| {
                    bad(format!(
                        "its segments span {:#x} bytes, more than the user address space ({USER_TOP:#x})",
                        hi - lo
                    ))
                })?;
            // As Linux, the lowest segment goes to the base, wherever the
            // file puts it (the arithmetic wraps as the kernel's does).
            let base = match bias {
                Some(base) => {
                    if base.checked_add(span).is_none_or(|end| end > USER_TOP) {
                        return Err(bad(format!(
                            "its segments span {span:#x} bytes, which do not fit between {base:#x} and the end of the user address space ({USER_TOP:#x})"
                        )));
                    }
                    base
                }
                None => aspace.find_free(span).ok_or_else(nomem)?,
            };
            base.wrapping_sub(lo)
        } else {
            0
        };
        for ph in &loads {
            let vaddr = ph.p_vaddr.wrapping_add(bias);
            let start = vaddr & !0xfff;
            let end = (vaddr + ph.p_memsz).next_multiple_of(PAGE_SIZE);
            let prot = ph.prot();
            // Linux maps each segment in turn over what is there, so a page
            // an earlier segment shares takes this segment's protections
            // (not the union).
            let mut s = start;
            while s < end {
                if let Some((vs, v)) = aspace.find(s) {
                    let vend = v.end;
                    if v.prot != prot {
                        aspace.protect(mem, vs.max(start), vend.min(end), prot).ok();
                    }
                    s = vend;
                } else {
                    let next = aspace
                        .vmas
                        .range(s..end)
                        .next()
                        .map(|(&k, _)| k)
                        .unwrap_or(end);
                    aspace.add(s, next, prot, Backing::Populated, &self.path);
                    // Past the file's data the segment is anonymous memory
                    // (the bss), as Linux maps it.
                    aspace.set_anon_from(s, (vaddr + ph.p_filesz).next_multiple_of(PAGE_SIZE));
                    if let (Some((dev, ino)), Some(v)) = (self.ident, aspace.vmas.get_mut(&s)) {
                        v.image = Some(crate::vm::FileIdent {
                            dev,
                            ino,
                            offset: (ph.p_offset & !0xfff) + (s - start),
                        });
                    }
                    s = next;
                }
            }
            // Copy the file bytes page by page (validated to be in `data`).
            let data = &self.data[ph.p_offset as usize..(ph.p_offset + ph.p_filesz) as usize];
            let mut va = vaddr;
            let mut off = 0usize;
            while off < data.len() {
                let page_room = (4096 - (va & 0xfff)) as usize;
                let n = page_room.min(data.len() - off);
                let vprot = aspace.find(va).map(|(_, v)| v.prot).unwrap_or(prot);
                let frame = aspace.populate_page(mem, va, vprot).map_err(|_| nomem())?;
                mem.write(frame + (va & 0xfff), &data[off..off + n]);
                off += n;
                va += n as u64;
            }
        }
        let phdr = self
            .phdrs
            .iter()
            .find(|p| p.p_type == PT_PHDR)
            .map(|p| p.p_vaddr.wrapping_add(bias))
            .or_else(|| {
                // Not given: it is where the file's e_phoff lands in a segment.
                let off = self.header.e_phoff;
                loads
                    .iter()
                    .find(|p| off >= p.p_offset && off - p.p_offset < p.p_filesz)
                    .map(|p| p.p_vaddr.wrapping_add(bias) + (off - p.p_offset))
            })
            .unwrap_or(0);
        let entry = self.header.e_entry.wrapping_add(bias);
        if entry >= USER_TOP {
            return Err(bad(format!(
                "its entry point {:#x} (loaded at {entry:#x}) lies outside the user address space (below {USER_TOP:#x})",
                self.header.e_entry
            )));
        }
        Ok((bias, entry, phdr, hi.wrapping_add(bias)))
    }
}

/// The bytes of the file the loader needs, from what of it has been read
/// (`data`, at least the ELF header when the file has one): the ELF header,
/// the program-header table once the header is known, and every byte a
/// PT_LOAD or the PT_INTERP covers once the table is. Segments past the end
/// of the file are left for [`ElfFile::from_bytes`] to report.
fn bytes_needed(data: &[u8], file_len: u64, shown: &str) -> Result<u64, LoadError> {
    let header = parse_header(data, file_len, shown)?;
    let table_end = header.phdr_end();
    if (data.len() as u64) < table_end {
        return Ok(table_end);
    }
    let needed = parse_phdrs(data, &header)
        .iter()
        .filter(|p| matches!(p.p_type, PT_LOAD | PT_INTERP))
        .filter_map(|p| p.p_offset.checked_add(p.p_filesz))
        .filter(|&end| end <= file_len)
        .fold(table_end, u64::max);
    Ok(needed)
}

/// Checks the ELF header as Linux does (magic, class, machine, type, program
/// header size and count) and that the program headers are in the file.
fn parse_header(data: &[u8], file_len: u64, shown: &str) -> Result<Header, LoadError> {
    let malformed = |why: String| LoadError::Malformed {
        path: shown.to_string(),
        why,
    };
    let wrong = |why: String| LoadError::WrongMachine {
        path: shown.to_string(),
        why,
    };
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        return Err(malformed("no ELF magic number".into()));
    }
    if data.len() < EHDR_SIZE {
        return Err(malformed(format!(
            "{} bytes, too short for an ELF header ({EHDR_SIZE} bytes)",
            data.len()
        )));
    }
    match data[4] {
        2 => {}
        1 => return Err(wrong("32-bit ELF".into())),
        c => return Err(wrong(format!("unknown ELF class {c}"))),
    }
    match data[5] {
        1 => {}
        2 => return Err(wrong("big-endian ELF".into())),
        d => return Err(wrong(format!("unknown ELF data encoding {d}"))),
    }
    let e_machine = le16(data, 18);
    if e_machine != header::EM_RISCV {
        return Err(wrong(format!(
            "machine is {}",
            header::machine_to_str(e_machine)
        )));
    }
    let e_type = le16(data, 16);
    if e_type != header::ET_EXEC && e_type != header::ET_DYN {
        let what = match e_type {
            header::ET_REL => "a relocatable object file",
            header::ET_CORE => "a core dump",
            _ => "of an unknown type",
        };
        return Err(malformed(format!(
            "it is {what}, not an executable or shared object"
        )));
    }
    let e_phentsize = le16(data, 54);
    if usize::from(e_phentsize) != PHDR_SIZE {
        return Err(malformed(format!(
            "its program headers are {e_phentsize} bytes each, not {PHDR_SIZE}"
        )));
    }
    let e_phnum = le16(data, 56);
    let table = u64::from(e_phnum) * PHDR_SIZE as u64;
    if e_phnum == 0 || table > MAX_PHDR_BYTES {
        return Err(malformed(format!(
            "it has {e_phnum} program headers (Linux takes 1 to {})",
            MAX_PHDR_BYTES / PHDR_SIZE as u64
        )));
    }
    let e_phoff = le64(data, 32);
    if e_phoff.checked_add(table).is_none_or(|end| end > file_len) {
        return Err(LoadError::Truncated {
            path: shown.to_string(),
            why: format!(
                "its program headers (file bytes {e_phoff:#x}+{table:#x}) lie past its end ({file_len} bytes)"
            ),
        });
    }
    Ok(Header {
        e_type,
        e_entry: le64(data, 24),
        e_phoff,
        e_phnum,
    })
}

/// The program headers of a checked `header`, from `data` that holds them.
fn parse_phdrs(data: &[u8], header: &Header) -> Vec<ProgramHeader> {
    let start = header.e_phoff as usize;
    data[start..header.phdr_end() as usize]
        .chunks_exact(PHDR_SIZE)
        .map(ProgramHeader::parse)
        .collect()
}

/// The auxiliary-vector keys we provide.
#[allow(missing_docs)]
pub mod auxv {
    pub const AT_NULL: u64 = 0;
    pub const AT_PHDR: u64 = 3;
    pub const AT_PHENT: u64 = 4;
    pub const AT_PHNUM: u64 = 5;
    pub const AT_PAGESZ: u64 = 6;
    pub const AT_BASE: u64 = 7;
    pub const AT_FLAGS: u64 = 8;
    pub const AT_ENTRY: u64 = 9;
    pub const AT_UID: u64 = 11;
    pub const AT_EUID: u64 = 12;
    pub const AT_GID: u64 = 13;
    pub const AT_EGID: u64 = 14;
    pub const AT_PLATFORM: u64 = 15;
    pub const AT_HWCAP: u64 = 16;
    pub const AT_CLKTCK: u64 = 17;
    pub const AT_SECURE: u64 = 23;
    pub const AT_RANDOM: u64 = 25;
    pub const AT_HWCAP2: u64 = 26;
    pub const AT_EXECFN: u64 = 31;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::AddressSpace;

    /// A minimal static RISC-V executable: one R+X segment holding
    /// `li a7, 93; ecall`.
    fn tiny_elf() -> Vec<u8> {
        let mut f = vec![0u8; 0x1000 + 8];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2; // 64-bit
        f[5] = 1; // little-endian
        f[6] = 1; // version
        let put16 =
            |f: &mut Vec<u8>, o: usize, v: u16| f[o..o + 2].copy_from_slice(&v.to_le_bytes());
        let put32 =
            |f: &mut Vec<u8>, o: usize, v: u32| f[o..o + 4].copy_from_slice(&v.to_le_bytes());
        let put64 =
            |f: &mut Vec<u8>, o: usize, v: u64| f[o..o + 8].copy_from_slice(&v.to_le_bytes());
        put16(&mut f, 16, 2); // ET_EXEC
        put16(&mut f, 18, 243); // EM_RISCV
        put32(&mut f, 20, 1);
        put64(&mut f, 24, 0x10000 + 0x1000); // entry
        put64(&mut f, 32, 64); // phoff
        put16(&mut f, 52, 64); // ehsize
        put16(&mut f, 54, 56); // phentsize
        put16(&mut f, 56, 1); // phnum
                              // PT_LOAD, R+X, offset 0, vaddr 0x10000, filesz = memsz = file size.
        put32(&mut f, 64, 1);
        put32(&mut f, 68, 5);
        put64(&mut f, 72, 0);
        put64(&mut f, 80, 0x10000);
        put64(&mut f, 88, 0x10000);
        let len = f.len() as u64;
        put64(&mut f, 96, len);
        put64(&mut f, 104, len);
        put64(&mut f, 112, 0x1000);
        put32(&mut f, 0x1000, 0x05d0_0893); // li a7, 93
        put32(&mut f, 0x1004, 0x0000_0073); // ecall
        f
    }

    fn load(data: Vec<u8>) -> Result<(u64, u64, u64, u64), LoadError> {
        let mut mem = PhysMem::new(&[(0x8000_0000, 0x40_0000)]).unwrap();
        let mut a = AddressSpace::new(&mut mem, 0x8000_0000, 0x40_0000).unwrap();
        let len = data.len() as u64;
        ElfFile::from_bytes(data, len, "t")?.load(&mut mem, &mut a, Some(crate::vm::PIE_BASE))
    }

    #[test]
    fn tiny_program_loads() {
        let (bias, entry, phdr, end) = load(tiny_elf()).unwrap();
        assert_eq!((bias, entry, phdr), (0, 0x11000, 0x10040));
        assert_eq!(end, 0x10000 + 0x1008);
    }

    #[test]
    fn corrupted_headers_are_errors_not_panics() {
        let good = tiny_elf();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut f = good.clone();
            // Corrupt 1-4 bytes of the headers, sometimes truncate.
            for _ in 0..1 + next() % 4 {
                let at = (next() % 120) as usize;
                f[at] = next() as u8;
            }
            if next() % 4 == 0 {
                let n = (next() % f.len() as u64) as usize;
                f.truncate(n);
            }
            let _ = load(f);
        }
        assert!(matches!(
            load(good[..40].to_vec()),
            Err(LoadError::Malformed { .. })
        ));
        let mut x86 = good.clone();
        x86[18] = 62;
        assert!(matches!(load(x86), Err(LoadError::WrongMachine { .. })));
    }

    /// A little-endian RISC-V ELF64 with `phdrs` (type, flags, offset,
    /// vaddr, filesz, memsz) right after the header, then `payload`.
    fn build(
        e_type: u16,
        entry: u64,
        phdrs: &[(u32, u32, u64, u64, u64, u64)],
        payload: &[u8],
    ) -> Vec<u8> {
        let mut v = b"\x7fELF\x02\x01\x01\x00".to_vec();
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(&e_type.to_le_bytes());
        v.extend_from_slice(&243u16.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&entry.to_le_bytes());
        v.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
        v.extend_from_slice(&0u64.to_le_bytes()); // e_shoff
        v.extend_from_slice(&5u32.to_le_bytes()); // e_flags
        for h in [64u16, 56, phdrs.len() as u16, 64, 0, 0] {
            v.extend_from_slice(&h.to_le_bytes());
        }
        for &(ty, flags, off, vaddr, filesz, memsz) in phdrs {
            v.extend_from_slice(&ty.to_le_bytes());
            v.extend_from_slice(&flags.to_le_bytes());
            for x in [off, vaddr, vaddr, filesz, memsz, 0x1000] {
                v.extend_from_slice(&x.to_le_bytes());
            }
        }
        v.extend_from_slice(payload);
        v
    }

    fn static_elf(entry: u64) -> Vec<u8> {
        let len = 64 + 56 + 8;
        build(
            2,
            entry,
            &[(PT_LOAD, 5, 0, 0x10000, len, len)],
            &[0x13, 0, 0, 0, 0x73, 0, 0, 0],
        )
    }

    fn message(r: Result<(u64, u64, u64, u64), LoadError>) -> String {
        r.expect_err("expected an error").to_string()
    }

    #[test]
    fn section_headers_are_not_read() {
        // A section-header table far past the end of the file, with many
        // entries and a bad string-table index: Linux ignores it.
        let mut f = static_elf(0x10000 + 120);
        f[40..48].copy_from_slice(&0xff_ffff_ff00u64.to_le_bytes()); // e_shoff
        f[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        f[60..62].copy_from_slice(&30u16.to_le_bytes()); // e_shnum
        f[62..64].copy_from_slice(&29u16.to_le_bytes()); // e_shstrndx
        let (_, entry, _, _) = load(f).expect("loads");
        assert_eq!(entry, 0x10000 + 120);
    }

    #[test]
    fn interpreter_path_ends_at_the_first_nul() {
        let interp = b"/lib/ld-linux-riscv64-lp64d.so.1\0\0\0\0\0\0\0\0";
        let off = 64 + 2 * 56;
        let f = build(
            2,
            0x10000,
            &[
                (
                    PT_INTERP,
                    4,
                    off,
                    0x10000 + off,
                    interp.len() as u64,
                    interp.len() as u64,
                ),
                (
                    PT_LOAD,
                    5,
                    0,
                    0x10000,
                    off + interp.len() as u64,
                    off + interp.len() as u64,
                ),
            ],
            interp,
        );
        let len = f.len() as u64;
        let e = ElfFile::from_bytes(f, len, "t").unwrap();
        assert_eq!(e.interpreter(), Some("/lib/ld-linux-riscv64-lp64d.so.1"));
        // Not NUL-terminated: ENOEXEC, as Linux.
        let f = build(
            2,
            0x10000,
            &[
                (PT_INTERP, 4, off, 0x10000 + off, 4, 4),
                (PT_LOAD, 5, 0, 0x10000, off + 4, off + 4),
            ],
            b"/abc",
        );
        let len = f.len() as u64;
        let e = ElfFile::from_bytes(f, len, "t").err().unwrap();
        assert!(e.to_string().contains("does not end with a NUL"), "{e}");
        assert_eq!(e.errno(), ENOEXEC);
    }

    #[test]
    fn layout_errors_name_the_problem() {
        let len = 64 + 56 + 8;
        let code = [0x13, 0, 0, 0, 0x73, 0, 0, 0];
        // filesz > memsz: EINVAL, and the message says so.
        let r = load(build(
            2,
            0x10000,
            &[(PT_LOAD, 5, 0, 0x10000, len, len - 4)],
            &code,
        ));
        let m = message(r);
        assert!(
            m.contains("more bytes in the file") && !m.contains("outside the file"),
            "{m}"
        );
        // A segment past the end of the file.
        let m = message(load(build(
            2,
            0x10000,
            &[(PT_LOAD, 5, 0, 0x10000, len + 1, len + 1)],
            &code,
        )));
        assert!(m.contains("truncated") && m.contains("past its end"), "{m}");
        // Offset and address not congruent modulo the page.
        let m = message(load(build(
            2,
            0x10000,
            &[(PT_LOAD, 5, 0, 0x10008, len, len)],
            &code,
        )));
        assert!(m.contains("differ within a 4 KiB page"), "{m}");
        // Above the user address space, and wrapping around it.
        let m = message(load(build(
            2,
            0x10000,
            &[(PT_LOAD, 5, 0, USER_TOP - 0x1000, len, 0x2000)],
            &code,
        )));
        assert!(m.contains("outside the user address space"), "{m}");
        let m = message(load(build(
            2,
            0x10000,
            &[(PT_LOAD, 5, 0, !0xfff, len, 0x2000)],
            &code,
        )));
        assert!(m.contains("outside the user address space"), "{m}");
        // Entry points outside user space, for ET_EXEC and ET_DYN (whose
        // entry moves with the load bias, wrapping as Linux's does).
        for entry in [u64::MAX, USER_TOP] {
            let m = message(load(static_elf(entry)));
            assert!(m.contains("entry point"), "{m}");
        }
        let m = message(load(build(
            3,
            USER_TOP,
            &[(PT_LOAD, 5, 0, 0, len, len)],
            &code,
        )));
        assert!(m.contains("entry point"), "{m}");
        // A shared object whose span does not even round to a page (found
        // by fuzzing: an overflow).
        let m = message(load(build(
            3,
            0,
            &[(PT_LOAD, 5, 0, 0, len, u64::MAX - 8)],
            &code,
        )));
        assert!(m.contains("more than the user address space"), "{m}");
        // A shared object too large for the space above its base.
        let m = message(load(build(
            3,
            0,
            &[(PT_LOAD, 5, 0, 0, len, USER_TOP)],
            &code,
        )));
        assert!(m.contains("do not fit"), "{m}");
    }

    /// Segments sharing a page: the page has the later one's protections,
    /// as Linux maps each segment over the ones before it.
    #[test]
    fn a_shared_page_takes_the_later_segments_protections() {
        let len = 64 + 2 * 56 + 8;
        let code = [0x13, 0, 0, 0, 0x73, 0, 0, 0];
        for (first, second) in [(5, 6), (6, 5), (7, 4)] {
            let f = build(
                2,
                0x10000 + 176,
                &[
                    (PT_LOAD, first, 0, 0x10000, len, len),
                    (PT_LOAD, second, 0, 0x10000, len, 0x1800),
                ],
                &code,
            );
            let mut mem = PhysMem::new(&[(0x8000_0000, 0x40_0000)]).unwrap();
            let mut a = AddressSpace::new(&mut mem, 0x8000_0000, 0x40_0000).unwrap();
            let n = f.len() as u64;
            ElfFile::from_bytes(f, n, "t")
                .unwrap()
                .load(&mut mem, &mut a, None)
                .unwrap();
            let prot = |a: &AddressSpace, at: u64| a.find(at).map(|(_, v)| v.prot);
            // PF_X 1, PF_W 2, PF_R 4; PROT_READ 1, PROT_WRITE 2, PROT_EXEC 4.
            let want = Some((second & 1) << 2 | (second & 2) | (second & 4) >> 2);
            assert_eq!(prot(&a, 0x10000), want, "{first} then {second}");
            assert_eq!(prot(&a, 0x11000), want, "{first} then {second}");
        }
    }

    #[test]
    fn shared_object_lowest_segment_goes_to_the_base() {
        let len = 64 + 56 + 8;
        let code = [0x13, 0, 0, 0, 0x73, 0, 0, 0];
        let (bias, entry, _, _) = load(build(
            3,
            0x5000_0000 + 120,
            &[(PT_LOAD, 5, 0, 0x5000_0000, len, len)],
            &code,
        ))
        .unwrap();
        assert_eq!(bias.wrapping_add(0x5000_0000), crate::vm::PIE_BASE);
        assert_eq!(entry, crate::vm::PIE_BASE + 120);
        // Far above the base, as Linux's wrapping load bias allows.
        let high = 0xffff_ffff_0000_0000;
        let (_, entry, _, _) = load(build(
            3,
            high + 120,
            &[(PT_LOAD, 5, 0, high, len, len)],
            &code,
        ))
        .unwrap();
        assert_eq!(entry, crate::vm::PIE_BASE + 120);
    }

    #[test]
    fn header_errors_as_linux_reports_them() {
        let good = static_elf(0x10000 + 120);
        let cases: &[(usize, &[u8], &str, Errno)] = &[
            (4, &[1], "32-bit", ENOEXEC),
            (5, &[2], "big-endian", ENOEXEC),
            (18, &[62, 0], "X86_64", ENOEXEC),
            (16, &[1, 0], "relocatable", ENOEXEC),
            (54, &[32, 0], "program headers are 32 bytes", ENOEXEC),
            (56, &[0, 0], "0 program headers", ENOEXEC),
            (56, &[74, 0], "74 program headers", ENOEXEC),
            (
                32,
                &[0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                "program headers",
                EIO,
            ),
        ];
        for &(at, bytes, want, errno) in cases {
            let mut f = good.clone();
            f[at..at + bytes.len()].copy_from_slice(bytes);
            let len = f.len() as u64;
            let e = ElfFile::from_bytes(f, len, "t").err().expect(want);
            assert!(e.to_string().contains(want), "{want}: {e}");
            assert_eq!(e.errno(), errno, "{want}: {e}");
        }
    }

    #[test]
    fn open_refuses_what_is_not_a_regular_file_without_reading_it() {
        for (path, what) in [("/dev/zero", "a character device"), ("/", "a directory")] {
            let e = ElfFile::open(std::path::Path::new(path), path)
                .err()
                .unwrap();
            assert!(e.to_string().contains(what), "{e}");
            assert_eq!(e.errno(), EACCES);
        }
        let dir = std::env::temp_dir().join(format!("rvnvmm-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = ElfFile::open(&fifo, "fifo").err().unwrap();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        // A real file: only the covered prefix is read, trailing bytes are not.
        let prog = dir.join("prog");
        let mut bytes = static_elf(0x10000 + 120);
        let covered = bytes.len();
        bytes.extend(std::iter::repeat_n(0xee, 100_000));
        std::fs::write(&prog, &bytes).unwrap();
        let e = ElfFile::open(&prog, "prog").unwrap();
        assert_eq!(e.data.len(), covered);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
