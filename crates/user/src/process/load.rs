//! Program loading: exec replaces the process image with an ELF program
//! (and its interpreter) and lays out its stack.

use super::{Process, RLIMIT_STACK, SIGRETURN_PAGE};
use crate::elf::{auxv::*, ElfFile, LoadError};
use crate::errno::*;
use crate::fs::AT_FDCWD;
use crate::signal::SigAction;
use crate::vm::{Backing, PROT_EXEC, PROT_READ, PROT_WRITE, STACK_TOP};
use rvnvmm_mem::sv39::PAGE_SIZE;
use std::path::PathBuf;

impl Process {
    /// Replaces the process image with `path` (execve). The current thread
    /// becomes the only one.
    pub(crate) fn exec(
        &mut self,
        path: &str,
        args: &[String],
        env: &[String],
        from_host: bool,
    ) -> Result<(), LoadError> {
        // The program named on the command line is a host path even under
        // --root, unless a map (or, without a root, the sysroot) holds it:
        // then it is the guest's name. Every path the guest names goes
        // through its own view.
        let mapped = from_host
            .then(|| self.files.fs.guest_named_host(path.as_bytes()))
            .flatten();
        let from_host = from_host && mapped.is_none();
        let host = if let Some(h) = mapped {
            h
        } else if from_host {
            PathBuf::from(path)
        } else {
            self.files
                .fs
                .host_path(AT_FDCWD, path.as_bytes())
                .map_err(|e| LoadError::Io {
                    path: path.to_string(),
                    source: std::io::Error::from_raw_os_error(e.raw()),
                })?
        };
        let file = ElfFile::open(&host, path)?;
        let interp = match file.interpreter().map(str::to_string) {
            Some(i) => {
                let hint = if self.opts.sysroot.is_none() && self.opts.root.is_none() {
                    " (pass --sysroot DIR with a riscv64 root, e.g. /usr/riscv64-linux-gnu)"
                        .to_string()
                } else {
                    " in the --sysroot/--root directory".to_string()
                };
                let missing = || LoadError::MissingInterpreter {
                    path: path.to_string(),
                    interp: i.clone(),
                    hint: hint.clone(),
                };
                let ihost = self
                    .files
                    .fs
                    .host_path(AT_FDCWD, i.as_bytes())
                    .map_err(|_| missing())?;
                if !ihost.exists() {
                    return Err(missing());
                }
                Some(ElfFile::open(&ihost, &i)?)
            }
            None => None,
        };
        // Point of no return: tear down the old image.
        self.memory.aspace.clear(&mut self.memory.phys);
        self.memory.code.flush();
        let cur = self.threads.current;
        let keep = self.threads.all.swap_remove(cur);
        self.threads.all.clear();
        self.threads.all.push(keep);
        self.threads.current = 0;
        for a in self.signals.actions.iter_mut() {
            if a.handler > 1 {
                *a = SigAction::default();
            }
        }
        // As Linux, the stack (and below it the mmap area) is laid out for
        // the soft RLIMIT_STACK in force at exec.
        let stack_size = self.rlimits[RLIMIT_STACK]
            .0
            .min(rvnvmm_config::MAX_STACK_SIZE)
            .next_multiple_of(0x1000)
            .max(0x1000);
        self.memory.aspace.mmap_top = crate::vm::mmap_top_for_stack(stack_size);
        let nomem = || LoadError::NoMemory {
            path: path.to_string(),
        };
        let (_bias, entry, phdr, end) = file.load(
            &mut self.memory.phys,
            &mut self.memory.aspace,
            Some(crate::vm::PIE_BASE),
        )?;
        let (interp_base, start) = match &interp {
            Some(i) => {
                let (b, e, _, _) = i.load(&mut self.memory.phys, &mut self.memory.aspace, None)?;
                (b, e)
            }
            None => (0, entry),
        };
        let brk = end.next_multiple_of(PAGE_SIZE);
        self.memory.aspace.data_segment = file.data_segment_bytes();
        self.memory.aspace.brk_start = brk;
        self.memory.aspace.brk = brk;
        // Signal-return trampoline: li a7, 139; ecall.
        self.memory.aspace.add(
            SIGRETURN_PAGE,
            SIGRETURN_PAGE + 0x1000,
            PROT_READ | PROT_EXEC,
            Backing::Populated,
            "[vdso]",
        );
        let f = self
            .memory
            .aspace
            .populate_page(&mut self.memory.phys, SIGRETURN_PAGE, PROT_READ | PROT_EXEC)
            .map_err(|_| nomem())?;
        self.memory
            .phys
            .write(f, &[0x93, 0x08, 0xb0, 0x08, 0x73, 0x00, 0x00, 0x00]);
        self.memory.aspace.add(
            STACK_TOP - stack_size,
            STACK_TOP,
            PROT_READ | PROT_WRITE,
            Backing::Anon,
            "[stack]",
        );
        self.files.fs.exe_host = host.clone();
        let base = path.rsplit('/').next().unwrap_or(path).as_bytes();
        let mut comm = [0u8; 16];
        comm[..base.len().min(15)].copy_from_slice(&base[..base.len().min(15)]);
        self.threads.current_mut().comm = comm;
        self.files.fs.exe_guest = if self.files.fs.confined() && from_host {
            // A program named on the command line is seen inside the
            // root; one from outside it by its file name only, so no host
            // path reaches the guest.
            std::fs::canonicalize(&host)
                .ok()
                .and_then(|h| self.files.fs.guest_path_of_host(&h))
                .unwrap_or_else(|| format!("/{}", path.rsplit('/').next().unwrap_or(path)))
        } else if self.files.fs.confined() || path.starts_with('/') {
            path.to_string()
        } else {
            std::env::current_dir()
                .map(|d| d.join(path).display().to_string())
                .unwrap_or_else(|_| path.to_string())
        };
        // The program's areas carry the name the guest knows it by.
        for v in self.memory.aspace.vmas.values_mut() {
            if v.image.is_some() && v.name == path {
                v.name.clone_from(&self.files.fs.exe_guest);
            }
        }
        let phnum = file.phdrs.len() as u64;
        let sp = self
            .build_stack(args, env, path, entry, phdr, phnum, interp_base)
            .map_err(|_| nomem())?;
        let t = &mut self.threads.all[0];
        t.hart.x = [0; 32];
        t.hart.f = [0; 32];
        t.hart.fflags = 0;
        t.hart.frm = 0;
        t.hart.x[2] = sp;
        t.hart.pc = start;
        t.hart.page_table = Some(self.memory.aspace.root);
        t.hart.translations_changed();
        t.hart.clear_reservation();
        t.clear_child_tid = 0;
        t.pending.clear();
        t.altstack = (0, 0, 2);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn build_stack(
        &mut self,
        args: &[String],
        env: &[String],
        execfn: &str,
        entry: u64,
        phdr: u64,
        phnum: u64,
        interp_base: u64,
    ) -> Result<u64, Errno> {
        let mut sp = STACK_TOP;
        let push_bytes = |p: &mut Process, sp: &mut u64, data: &[u8]| -> Result<u64, Errno> {
            *sp -= data.len() as u64;
            p.write_mem(*sp, data)?;
            Ok(*sp)
        };
        let cstr = |s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.push(0);
            v
        };
        let execfn_addr = push_bytes(self, &mut sp, &cstr(execfn))?;
        let env_end = sp;
        let mut env_ptrs = Vec::new();
        for e in env.iter().rev() {
            env_ptrs.push(push_bytes(self, &mut sp, &cstr(e))?);
        }
        env_ptrs.reverse();
        let arg_end = sp;
        self.image.env_area = (sp, env_end);
        let mut arg_ptrs = Vec::new();
        for a in args.iter().rev() {
            arg_ptrs.push(push_bytes(self, &mut sp, &cstr(a))?);
        }
        arg_ptrs.reverse();
        self.image.arg_area = (sp, arg_end);
        // AT_RANDOM: 16 bytes, fixed so runs are deterministic.
        let random = push_bytes(self, &mut sp, b"rvnvmm-at-random")?;
        sp &= !15;
        let auxv: Vec<(u64, u64)> = vec![
            (AT_PHDR, phdr),
            (AT_PHENT, 56),
            (AT_PHNUM, phnum),
            (AT_PAGESZ, PAGE_SIZE),
            (AT_BASE, interp_base),
            (AT_FLAGS, 0),
            (AT_ENTRY, entry),
            (AT_UID, unsafe_id(libc::getuid)),
            (AT_EUID, unsafe_id(libc::geteuid)),
            (AT_GID, unsafe_id(libc::getgid)),
            (AT_EGID, unsafe_id(libc::getegid)),
            (AT_HWCAP, self.opts.hart.isa.hwcap()),
            (AT_CLKTCK, 100),
            (AT_SECURE, 0),
            (AT_RANDOM, random),
            (AT_EXECFN, execfn_addr),
            (AT_NULL, 0),
        ];
        let mut words: Vec<u64> = vec![args.len() as u64];
        words.extend(&arg_ptrs);
        words.push(0);
        words.extend(&env_ptrs);
        words.push(0);
        for &(k, v) in &auxv {
            words.push(k);
            words.push(v);
        }
        self.image.auxv = auxv;
        sp -= words.len() as u64 * 8;
        sp &= !15;
        self.image.start_stack = sp;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write_mem(sp, &bytes)?;
        Ok(sp)
    }
}

fn unsafe_id(f: unsafe extern "C" fn() -> u32) -> u64 {
    // SAFETY: the get*id family has no preconditions.
    unsafe { f() as u64 }
}
