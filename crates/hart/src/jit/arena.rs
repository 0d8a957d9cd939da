//! Executable memory for translated blocks: chunks mapped with `mmap`,
//! written while writable and executable only once written (W^X).

use std::ptr::NonNull;

/// Bytes in one chunk: room for hundreds of blocks.
const CHUNK: usize = 1 << 20;

/// Why code could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// The host refused to map or protect memory.
    #[error("cannot map executable memory: {0}")]
    Map(std::io::Error),
    /// One translation larger than a chunk.
    #[error("translated block of {0} bytes is larger than a chunk")]
    TooLarge(usize),
}

/// Chunks of host code; the last one is being filled.
#[derive(Default)]
pub struct ExecArena {
    chunks: Vec<NonNull<u8>>,
    /// Bytes used in the last chunk.
    used: usize,
}

// SAFETY: the arena owns its mappings outright; nothing else points into
// them except translations stored beside it in the same code cache.
unsafe impl Send for ExecArena {}

impl ExecArena {
    /// Copies `code` into executable memory and returns where it starts.
    pub fn place(&mut self, code: &[u8]) -> Result<*const u8, ArenaError> {
        if code.len() > CHUNK {
            return Err(ArenaError::TooLarge(code.len()));
        }
        if self.chunks.is_empty() || self.used + code.len() > CHUNK {
            self.chunks.push(map_chunk()?);
            self.used = 0;
        }
        let chunk = *self.chunks.last().expect("a chunk was just ensured");
        // Only the host pages the code lands on change protection: a
        // whole chunk's would rewrite every page-table entry of it twice
        // per block.
        let pages = host_pages(self.used, code.len());
        protect(chunk, pages.clone(), libc::PROT_READ | libc::PROT_WRITE)?;
        // SAFETY: `used + code.len() <= CHUNK`, the chunk is CHUNK bytes long
        // and those bytes are now writable; no translated code runs while a
        // block is placed.
        let start = unsafe {
            let dst = chunk.as_ptr().add(self.used);
            std::ptr::copy_nonoverlapping(code.as_ptr(), dst, code.len());
            dst
        };
        protect(chunk, pages, libc::PROT_READ | libc::PROT_EXEC)?;
        // Keep entry points 16-byte aligned.
        self.used = (self.used + code.len() + 15) & !15;
        Ok(start)
    }

    /// Forgets every translation (the code cache was flushed): keeps the
    /// first chunk for reuse and returns the others to the host.
    pub fn clear(&mut self) {
        let keep = self.chunks.len().min(1);
        for chunk in self.chunks.drain(keep..) {
            unmap(chunk);
        }
        self.used = 0;
    }
}

impl Drop for ExecArena {
    fn drop(&mut self) {
        for chunk in self.chunks.drain(..) {
            unmap(chunk);
        }
    }
}

fn map_chunk() -> Result<NonNull<u8>, ArenaError> {
    // SAFETY: an anonymous private mapping with no address hint touches no
    // existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            CHUNK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(ArenaError::Map(std::io::Error::last_os_error()));
    }
    NonNull::new(p.cast()).ok_or(ArenaError::Map(std::io::Error::other("null mapping")))
}

/// The host page size the arena assumes; a larger one only makes
/// [`host_pages`] ranges unaligned, which `mprotect` refuses (an error, not
/// a wrong protection).
const HOST_PAGE: usize = 4096;

/// The byte range of a chunk, in whole host pages, that holds `len` bytes
/// from offset `at`.
fn host_pages(at: usize, len: usize) -> std::ops::Range<usize> {
    let start = at & !(HOST_PAGE - 1);
    let end = (at + len.max(1) + HOST_PAGE - 1) & !(HOST_PAGE - 1);
    start..end.min(CHUNK)
}

fn protect(
    chunk: NonNull<u8>,
    range: std::ops::Range<usize>,
    prot: libc::c_int,
) -> Result<(), ArenaError> {
    // SAFETY: `chunk` is a CHUNK-byte mapping this arena made and `range`
    // lies within it.
    let r = unsafe {
        libc::mprotect(
            chunk.as_ptr().add(range.start).cast(),
            range.end - range.start,
            prot,
        )
    };
    if r != 0 {
        return Err(ArenaError::Map(std::io::Error::last_os_error()));
    }
    Ok(())
}

fn unmap(chunk: NonNull<u8>) {
    // SAFETY: `chunk` is a CHUNK-byte mapping this arena made and drops
    // here; no translation into it is used afterwards.
    unsafe {
        libc::munmap(chunk.as_ptr().cast(), CHUNK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placing_protects_only_the_pages_written() {
        assert_eq!(host_pages(0, 10), 0..4096);
        assert_eq!(host_pages(4090, 10), 0..8192);
        assert_eq!(host_pages(4096, 4096), 4096..8192);
        assert_eq!(host_pages(CHUNK - 16, 16), CHUNK - 4096..CHUNK);
        if !cfg!(target_arch = "x86_64") {
            return;
        }
        // Code placed across a page boundary runs, and so does the code
        // placed before it on the page made writable meanwhile.
        let mut arena = ExecArena::default();
        // mov eax, 7; ret
        let ret7 = [0xb8, 7, 0, 0, 0, 0xc3];
        let first = arena.place(&ret7).unwrap();
        arena.used = 4096 - 8;
        let across = arena.place(&ret7).unwrap();
        // SAFETY: both are complete functions returning 7 (System V).
        let (f, g) = unsafe {
            (
                std::mem::transmute::<*const u8, extern "C" fn() -> u32>(first),
                std::mem::transmute::<*const u8, extern "C" fn() -> u32>(across),
            )
        };
        assert_eq!((f(), g()), (7, 7));
    }

    #[test]
    fn clearing_keeps_one_chunk_for_reuse() {
        let mut arena = ExecArena::default();
        arena.clear();
        let first = arena.place(&[0xc3]).unwrap();
        let second = arena.place(&[0xc3]).unwrap();
        assert_eq!(
            second as usize - first as usize,
            16,
            "entries 16-byte aligned"
        );
        assert!(
            arena.place(&vec![0xc3; CHUNK]).is_ok(),
            "a new chunk when full"
        );
        assert_eq!(arena.chunks.len(), 2);
        arena.clear();
        assert_eq!(arena.chunks.len(), 1);
        assert_eq!(arena.place(&[0xc3]).unwrap(), first);
        assert!(matches!(
            arena.place(&vec![0; CHUNK + 1]),
            Err(ArenaError::TooLarge(_))
        ));
    }
}
