//! ELF64 RISC-V program loading: segments, interpreter, initial stack.

use crate::errno::*;
use crate::vm::{AddressSpace, Backing, PROT_EXEC, PROT_READ, PROT_WRITE};
use goblin::elf::{header, program_header, Elf};
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
    /// Not an ELF file, or a malformed one.
    #[error("{path} is not a valid ELF file: {why}")]
    Malformed {
        /// File path.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// An ELF for another machine or class.
    #[error("{path} is not a 64-bit little-endian RISC-V executable ({why})")]
    WrongMachine {
        /// File path.
        path: String,
        /// What it is instead.
        why: String,
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
    pub fn errno(&self) -> i64 {
        match self {
            LoadError::Io { source, .. } => source.raw_os_error().map(|e| e as i64).unwrap_or(EIO),
            LoadError::Malformed { .. } | LoadError::WrongMachine { .. } => ENOEXEC,
            LoadError::MissingInterpreter { .. } => ENOENT,
            LoadError::NoMemory { .. } => ENOMEM,
        }
    }
}

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

/// A parsed ELF file's raw bytes, validated for RISC-V.
pub struct ElfFile {
    /// File contents.
    pub data: Vec<u8>,
    /// Path used in messages.
    pub path: String,
}

impl ElfFile {
    /// Reads and validates `path` (already resolved to a host path).
    pub fn open(host_path: &std::path::Path, shown: &str) -> Result<ElfFile, LoadError> {
        let data = std::fs::read(host_path).map_err(|source| LoadError::Io {
            path: shown.to_string(),
            source,
        })?;
        let f = ElfFile {
            data,
            path: shown.to_string(),
        };
        f.parse()?;
        Ok(f)
    }

    /// Parses and checks the header.
    pub fn parse(&self) -> Result<Elf<'_>, LoadError> {
        let malformed = |why: String| LoadError::Malformed {
            path: self.path.clone(),
            why,
        };
        if self.data.len() < 4 || &self.data[..4] != b"\x7fELF" {
            return Err(malformed("no ELF magic number".into()));
        }
        let elf = Elf::parse(&self.data).map_err(|e| malformed(e.to_string()))?;
        let wrong = |why: String| LoadError::WrongMachine {
            path: self.path.clone(),
            why,
        };
        if !elf.is_64 {
            return Err(wrong("32-bit ELF".into()));
        }
        if !elf.little_endian {
            return Err(wrong("big-endian ELF".into()));
        }
        if elf.header.e_machine != header::EM_RISCV {
            return Err(wrong(format!(
                "machine is {}",
                header::machine_to_str(elf.header.e_machine)
            )));
        }
        if elf.header.e_type != header::ET_EXEC && elf.header.e_type != header::ET_DYN {
            return Err(malformed(
                "neither an executable nor a shared object".into(),
            ));
        }
        for ph in &elf.program_headers {
            if ph.p_type == program_header::PT_LOAD {
                let end = ph.p_offset.checked_add(ph.p_filesz);
                if end.is_none_or(|e| e > self.data.len() as u64) || ph.p_filesz > ph.p_memsz {
                    return Err(malformed(
                        "a loadable segment lies outside the file (truncated?)".into(),
                    ));
                }
                if ph
                    .p_vaddr
                    .checked_add(ph.p_memsz)
                    .is_none_or(|e| e > crate::vm::USER_TOP)
                {
                    return Err(malformed(
                        "a loadable segment lies outside the user address space".into(),
                    ));
                }
            }
        }
        if !elf
            .program_headers
            .iter()
            .any(|p| p.p_type == program_header::PT_LOAD)
        {
            return Err(malformed("no loadable segment".into()));
        }
        Ok(elf)
    }

    /// The PT_INTERP path, if any.
    pub fn interpreter(&self) -> Result<Option<String>, LoadError> {
        let elf = self.parse()?;
        Ok(elf.interpreter.map(|s| s.to_string()))
    }

    /// Maps the segments at `bias` (0 for ET_EXEC; chosen here for ET_DYN if
    /// `bias` is None). Returns (bias, entry, phdr address, highest end).
    pub fn load(
        &self,
        mem: &mut PhysMem,
        aspace: &mut AddressSpace,
        bias: Option<u64>,
    ) -> Result<(u64, u64, u64, u64), LoadError> {
        let elf = self.parse()?;
        let loads: Vec<_> = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == program_header::PT_LOAD && p.p_memsz > 0)
            .collect();
        let lo = loads.iter().map(|p| p.p_vaddr & !0xfff).min().unwrap_or(0);
        let hi = loads
            .iter()
            .map(|p| p.p_vaddr + p.p_memsz)
            .max()
            .unwrap_or(0);
        let bias = if elf.header.e_type == header::ET_DYN {
            match bias {
                Some(b) => b,
                None => {
                    let span = ((hi - lo) + 0xfff) & !0xfff;
                    aspace.find_free(span).ok_or_else(|| LoadError::NoMemory {
                        path: self.path.clone(),
                    })? - lo
                }
            }
        } else {
            0
        };
        let nomem = || LoadError::NoMemory {
            path: self.path.clone(),
        };
        for ph in &loads {
            let start = (ph.p_vaddr + bias) & !0xfff;
            let end = (ph.p_vaddr + bias + ph.p_memsz + 0xfff) & !0xfff;
            let mut prot = 0;
            if ph.is_read() {
                prot |= PROT_READ;
            }
            if ph.is_write() {
                prot |= PROT_WRITE;
            }
            if ph.is_executable() {
                prot |= PROT_EXEC;
            }
            // Segments may share a page at their boundary: merge protections.
            let mut s = start;
            while s < end {
                if let Some((vs, v)) = aspace.find(s) {
                    let vend = v.end;
                    if v.prot | prot != v.prot {
                        aspace
                            .protect(mem, vs.max(start), vend.min(end), v.prot | prot)
                            .ok();
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
                    s = next;
                }
            }
            // Copy the file bytes page by page.
            let data = &self.data[ph.p_offset as usize..(ph.p_offset + ph.p_filesz) as usize];
            let mut va = ph.p_vaddr + bias;
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
        let phdr = elf
            .program_headers
            .iter()
            .find(|p| p.p_type == program_header::PT_PHDR)
            .map(|p| p.p_vaddr + bias)
            .or_else(|| {
                // Not given: it is where the file's e_phoff lands in a segment.
                let off = elf.header.e_phoff;
                loads
                    .iter()
                    .find(|p| off >= p.p_offset && off < p.p_offset + p.p_filesz)
                    .map(|p| p.p_vaddr + bias + off - p.p_offset)
            })
            .unwrap_or(0);
        Ok((bias, elf.entry + bias, phdr, hi + bias))
    }
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
        ElfFile {
            data,
            path: "t".into(),
        }
        .load(&mut mem, &mut a, Some(crate::vm::PIE_BASE))
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
}
