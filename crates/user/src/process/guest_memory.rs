//! Guest memory as the kernel reaches it: user addresses translated (and
//! faulted in) as the hart would, reads and writes of bytes, ABI values and
//! strings, and the out-of-memory kill when no frame is left.

use super::Process;
use crate::errno::*;
use crate::process::ExitKind;
use crate::vm::Backing;
use rvnvmm_mem::sv39::{self, page_base, page_offset, Access, Requester, PAGE_SIZE};
use zerocopy::{FromBytes, Immutable, IntoBytes};

impl Process {
    /// Translates a user address for the kernel, faulting pages in as the
    /// hart would. Errors are EFAULT.
    pub(crate) fn user_paddr(&mut self, vaddr: u64, access: Access) -> Result<u64, Errno> {
        let who = Requester {
            user: true,
            sum: false,
            mxr: false,
        };
        for _ in 0..2 {
            match sv39::translate(
                &mut self.memory.phys,
                self.memory.aspace.root,
                vaddr,
                access,
                who,
            ) {
                Ok(t) => return Ok(t.paddr),
                Err(_) => {
                    let task = self.threads.current().mempolicy;
                    let ok = match self.memory.aspace.handle_fault_for(
                        &mut self.memory.phys,
                        vaddr,
                        access == Access::Write,
                        false,
                        task.as_ref(),
                    ) {
                        Ok(ok) => ok,
                        Err(ENOMEM) => {
                            self.out_of_memory(vaddr);
                            return Err(EFAULT);
                        }
                        Err(_) => return Err(EFAULT),
                    };
                    if !ok {
                        return Err(EFAULT);
                    }
                }
            }
        }
        Err(EFAULT)
    }

    /// Reads guest memory.
    pub(crate) fn read_mem(&mut self, vaddr: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < buf.len() {
            let va = vaddr.wrapping_add(done as u64);
            let n = ((PAGE_SIZE - page_offset(va)) as usize).min(buf.len() - done);
            let pa = self.user_paddr(va, Access::Read)?;
            if !self.memory.phys.read(pa, &mut buf[done..done + n]) {
                return Err(EFAULT);
            }
            done += n;
        }
        Ok(())
    }

    /// Writes guest memory (keeping decoded code coherent).
    pub(crate) fn write_mem(&mut self, vaddr: u64, data: &[u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < data.len() {
            let va = vaddr.wrapping_add(done as u64);
            let n = ((PAGE_SIZE - page_offset(va)) as usize).min(data.len() - done);
            let pa = self.user_paddr(va, Access::Write)?;
            if !self.memory.phys.write(pa, &data[done..done + n]) {
                return Err(EFAULT);
            }
            self.memory.code.pages.code_written(page_base(pa));
            done += n;
        }
        Ok(())
    }

    /// Reads a guest ABI value (a [`crate::abi`] struct, or an array of
    /// plain integers) whole.
    pub(crate) fn read_obj<T: FromBytes + IntoBytes>(&mut self, vaddr: u64) -> Result<T, Errno> {
        let mut v = T::new_zeroed();
        self.read_mem(vaddr, v.as_mut_bytes())?;
        Ok(v)
    }

    /// Reads `n` guest ABI values in a row (an array of structs) whole.
    pub(crate) fn read_objs<T: FromBytes + IntoBytes + Clone>(
        &mut self,
        vaddr: u64,
        n: usize,
    ) -> Result<Vec<T>, Errno> {
        let mut v = vec![T::new_zeroed(); n];
        self.read_mem(vaddr, v.as_mut_slice().as_mut_bytes())?;
        Ok(v)
    }

    /// Writes a guest ABI value whole.
    pub(crate) fn write_obj<T: IntoBytes + Immutable + ?Sized>(
        &mut self,
        vaddr: u64,
        v: &T,
    ) -> Result<(), Errno> {
        self.write_mem(vaddr, v.as_bytes())
    }

    pub(crate) fn read_u64(&mut self, vaddr: u64) -> Result<u64, Errno> {
        let mut b = [0u8; 8];
        self.read_mem(vaddr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    pub(crate) fn read_u32(&mut self, vaddr: u64) -> Result<u32, Errno> {
        let mut b = [0u8; 4];
        self.read_mem(vaddr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub(crate) fn write_u64(&mut self, vaddr: u64, v: u64) -> Result<(), Errno> {
        self.write_mem(vaddr, &v.to_le_bytes())
    }

    pub(crate) fn write_u32(&mut self, vaddr: u64, v: u32) -> Result<(), Errno> {
        self.write_mem(vaddr, &v.to_le_bytes())
    }

    /// Reads a NUL-terminated string (at most 4096 bytes).
    pub(crate) fn read_cstr(&mut self, vaddr: u64) -> Result<Vec<u8>, Errno> {
        let mut out = Vec::new();
        let mut va = vaddr;
        loop {
            let n = (PAGE_SIZE - page_offset(va)) as usize;
            let mut chunk = vec![0u8; n];
            self.read_mem(va, &mut chunk)?;
            if let Some(z) = chunk.iter().position(|&c| c == 0) {
                out.extend_from_slice(&chunk[..z]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk);
            if out.len() > 1 << 20 {
                return Err(ENAMETOOLONG);
            }
            va += n as u64;
        }
    }

    /// Reads a NULL-terminated array of string pointers (argv, envp).
    pub(crate) fn read_str_array(&mut self, vaddr: u64) -> Result<Vec<String>, Errno> {
        let mut v = Vec::new();
        if vaddr == 0 {
            return Ok(v);
        }
        for i in 0.. {
            let p = self.read_u64(vaddr + i * 8)?;
            if p == 0 {
                break;
            }
            v.push(String::from_utf8_lossy(&self.read_cstr(p)?).into_owned());
            if v.len() > 1 << 16 {
                return Err(E2BIG);
            }
        }
        Ok(v)
    }

    /// A page fault (or a system call's access) found no free frame: as
    /// Linux's OOM killer, end the process with SIGKILL, saying on stderr
    /// what ran out and which config key sizes it.
    pub(crate) fn out_of_memory(&mut self, addr: u64) {
        let heap = self.memory.aspace.heap_pool;
        // A heap frame on NVMM, unless NVMM still has room: then it was a
        // page-table frame, and those live in DRAM.
        let pool = match self.memory.aspace.find(addr) {
            Some((_, v))
                if v.backing == Backing::Heap
                    && heap != 0
                    && self.memory.aspace.frames.free_bytes(heap) < 4096 =>
            {
                heap
            }
            _ => 0,
        };
        let mib = self.memory.aspace.frames.pool_bytes(pool) >> 20;
        let what = if pool == 0 {
            format!(
                "all {mib} MiB of DRAM are in use (memory.{}.size sizes it)",
                self.opts.dram_node().map_or("dram", |n| &n.name)
            )
        } else {
            format!(
                "all {mib} MiB of the heap on NVMM are in use (user.heap = \"nvmm\" takes the upper half of memory.{}.size)",
                self.opts.nvmm_node().map_or("nvmm", |n| &n.name)
            )
        };
        eprintln!(
            "rvnvmm: out of memory: guest (pid {}) killed by SIGKILL touching {addr:#x}: {what}",
            self.pid
        );
        self.exit = Some(ExitKind::Signal(crate::signal::SIGKILL));
    }
}
