//! Executable memory for translated blocks, never writable and executable
//! at once (W^X).
//!
//! Each chunk is one shared memory object mapped twice: a writable view the
//! code is copied through and an executable view it runs from, so placing a
//! block costs a copy and no system call (the code cache places one per
//! block decoded hot: thousands in a Linux boot, each of which would
//! otherwise change page protection twice). Where the host refuses the
//! memory object, a chunk is one private mapping whose pages are made
//! writable for the copy and executable again after it.

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

/// One chunk of host code.
struct Chunk {
    /// Where translated code runs from (read and execute).
    exec: NonNull<u8>,
    /// The writable view of the same memory, or `None` when the chunk is a
    /// single mapping whose protection changes around each copy.
    write: Option<NonNull<u8>>,
}

/// Chunks of host code; the last one is being filled.
#[derive(Default)]
pub struct ExecArena {
    chunks: Vec<Chunk>,
    /// Bytes used in the last chunk.
    used: usize,
    /// Map single chunks and change their protection (the fallback; set
    /// once the host refused a shared memory object, or by a test).
    single_mapping: bool,
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
            let chunk = self.map_chunk()?;
            self.chunks.push(chunk);
            self.used = 0;
        }
        let chunk = self.chunks.last().expect("a chunk was just ensured");
        let start = match chunk.write {
            Some(write) => {
                // SAFETY: `used + code.len() <= CHUNK` and both views are
                // CHUNK bytes of the same memory; the bytes written are past
                // every placed block, so no translated code runs from them.
                unsafe {
                    let dst = write.as_ptr().add(self.used);
                    std::ptr::copy_nonoverlapping(code.as_ptr(), dst, code.len());
                    chunk.exec.as_ptr().add(self.used)
                }
            }
            None => {
                // Only the host pages the code lands on change protection:
                // a whole chunk's would rewrite every page-table entry of it
                // twice per block.
                let pages = host_pages(self.used, code.len());
                protect(
                    chunk.exec,
                    pages.clone(),
                    libc::PROT_READ | libc::PROT_WRITE,
                )?;
                // SAFETY: as above, and those bytes are now writable; no
                // translated code runs while a block is placed.
                let start = unsafe {
                    let dst = chunk.exec.as_ptr().add(self.used);
                    std::ptr::copy_nonoverlapping(code.as_ptr(), dst, code.len());
                    dst
                };
                protect(chunk.exec, pages, libc::PROT_READ | libc::PROT_EXEC)?;
                start
            }
        };
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

    /// Gives a child process made by `fork` its own copy of the code: the
    /// two views of each chunk are shared memory, so without it the child's
    /// next translations would land in its parent's chunk (and the
    /// parent's in the child's). Each chunk's code is copied into a new
    /// memory file mapped at the same addresses, so every translation and
    /// link stays valid. Call it in the child before it places code.
    pub fn unshare(&mut self) -> Result<(), ArenaError> {
        for chunk in &mut self.chunks {
            let Some(old_write) = chunk.write else {
                continue; // a private mapping: `fork` copied it already
            };
            let fresh = match map_double() {
                Ok(fresh) => fresh,
                Err(e) => {
                    self.forget_shared();
                    return Err(e);
                }
            };
            let write = fresh.write.expect("map_double gives two views");
            // SAFETY: both are CHUNK-byte views this arena mapped; the new
            // one is writable and no code runs while it is filled.
            unsafe { std::ptr::copy_nonoverlapping(chunk.exec.as_ptr(), write.as_ptr(), CHUNK) };
            // Move the fresh executable view over the old one (same address,
            // atomically), then drop the view that is no longer needed.
            // SAFETY: both are CHUNK-byte mappings of this arena; MREMAP_FIXED
            // replaces whatever was mapped at `chunk.exec`, the old view.
            let moved = unsafe {
                libc::mremap(
                    fresh.exec.as_ptr().cast(),
                    CHUNK,
                    CHUNK,
                    libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                    chunk.exec.as_ptr().cast::<libc::c_void>(),
                )
            };
            if moved == libc::MAP_FAILED {
                let e = ArenaError::Map(std::io::Error::last_os_error());
                unmap(fresh);
                self.forget_shared();
                return Err(e);
            }
            unmap_view(old_write);
            chunk.write = Some(write);
        }
        Ok(())
    }

    /// After a failed [`unshare`](Self::unshare): drops every chunk (from
    /// this process only) and maps single chunks from now on. The code
    /// placed so far is gone: the caller drops the translations.
    fn forget_shared(&mut self) {
        for chunk in self.chunks.drain(..) {
            unmap(chunk);
        }
        self.used = 0;
        self.single_mapping = true;
    }

    /// A new chunk: two views of one memory object, or (once the host
    /// refused one) a single private mapping.
    fn map_chunk(&mut self) -> Result<Chunk, ArenaError> {
        if !self.single_mapping {
            match map_double() {
                Ok(chunk) => return Ok(chunk),
                Err(_) => self.single_mapping = true,
            }
        }
        Ok(Chunk {
            exec: map(-1, libc::PROT_READ | libc::PROT_WRITE)?,
            write: None,
        })
    }
}

impl Drop for ExecArena {
    fn drop(&mut self) {
        for chunk in self.chunks.drain(..) {
            unmap(chunk);
        }
    }
}

/// A chunk as a memory file mapped twice (writable, executable).
fn map_double() -> Result<Chunk, ArenaError> {
    let last_error = || ArenaError::Map(std::io::Error::last_os_error());
    // SAFETY: the name is a NUL-terminated string; the descriptor is owned
    // here and closed below (the mappings keep the memory).
    let fd = unsafe { libc::memfd_create(c"rvnvmm-jit".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(last_error());
    }
    // SAFETY: `fd` is the memory file just created.
    let sized = unsafe { libc::ftruncate(fd, CHUNK as libc::off_t) } == 0;
    let views = if sized {
        map(fd, libc::PROT_READ | libc::PROT_WRITE).and_then(|write| {
            match map(fd, libc::PROT_READ | libc::PROT_EXEC) {
                Ok(exec) => Ok(Chunk {
                    exec,
                    write: Some(write),
                }),
                Err(e) => {
                    unmap_view(write);
                    Err(e)
                }
            }
        })
    } else {
        Err(last_error())
    };
    // SAFETY: `fd` is ours and used no more.
    unsafe { libc::close(fd) };
    views
}

/// A CHUNK-byte mapping of `fd` (shared), or anonymous memory for `-1`.
fn map(fd: libc::c_int, prot: libc::c_int) -> Result<NonNull<u8>, ArenaError> {
    let flags = if fd < 0 {
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS
    } else {
        libc::MAP_SHARED
    };
    // SAFETY: a new mapping with no address hint touches no existing
    // memory; `fd` is a CHUNK-byte memory file or -1.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), CHUNK, prot, flags, fd, 0) };
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

fn unmap(chunk: Chunk) {
    unmap_view(chunk.exec);
    if let Some(write) = chunk.write {
        unmap_view(write);
    }
}

fn unmap_view(view: NonNull<u8>) {
    // SAFETY: `view` is a CHUNK-byte mapping this arena made and drops
    // here; no translation into it is used afterwards.
    unsafe {
        libc::munmap(view.as_ptr().cast(), CHUNK);
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
        // In both kinds of chunk, code placed across a page boundary runs,
        // and so does the code placed before it on a page written since.
        for single_mapping in [false, true] {
            let mut arena = ExecArena::default();
            arena.single_mapping = single_mapping;
            // mov eax, 7; ret
            let ret7 = [0xb8, 7, 0, 0, 0, 0xc3];
            let first = arena.place(&ret7).unwrap();
            arena.used = 4096 - 8;
            let across = arena.place(&ret7).unwrap();
            assert_eq!(
                arena.chunks[0].write.is_none(),
                single_mapping,
                "a Linux host gives the two views"
            );
            // SAFETY: both are complete functions returning 7 (System V).
            let (f, g) = unsafe {
                (
                    std::mem::transmute::<*const u8, extern "C" fn() -> u32>(first),
                    std::mem::transmute::<*const u8, extern "C" fn() -> u32>(across),
                )
            };
            assert_eq!((f(), g()), (7, 7));
        }
    }

    #[test]
    fn a_forked_child_that_unshares_writes_only_its_own_code() {
        if !cfg!(target_arch = "x86_64") {
            return;
        }
        // mov eax, 7; ret
        let ret7 = [0xb8, 7, 0, 0, 0, 0xc3];
        let mut arena = ExecArena::default();
        let first = arena.place(&ret7).unwrap();
        let next = arena.chunks[0].exec.as_ptr().wrapping_add(arena.used);
        // SAFETY: the child only unshares, places one block and leaves
        // with `_exit`, without the test harness.
        let child = unsafe { libc::fork() };
        assert!(child >= 0);
        if child == 0 {
            let ok = arena.unshare().is_ok() && arena.place(&[0xcc; 64]).is_ok();
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        // SAFETY: `next` is inside the arena's first chunk, readable.
        let after = unsafe { std::slice::from_raw_parts(next, 64) };
        assert!(
            after.iter().all(|&b| b == 0),
            "the child wrote into the parent's code"
        );
        // The child's copy kept the code placed before the fork running;
        // check the parent's too, and that unsharing in place keeps it.
        arena.unshare().unwrap();
        // SAFETY: a complete function returning 7 (System V).
        let f = unsafe { std::mem::transmute::<*const u8, extern "C" fn() -> u32>(first) };
        assert_eq!(f(), 7);
        let second = arena.place(&ret7).unwrap();
        // SAFETY: as above.
        let g = unsafe { std::mem::transmute::<*const u8, extern "C" fn() -> u32>(second) };
        assert_eq!(g(), 7);
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
