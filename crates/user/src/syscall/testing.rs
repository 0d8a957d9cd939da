//! A bare process for the system calls' unit tests: guest RAM and an empty
//! address space, one thread on the first of two harts, and the host's
//! descriptors and file system (no root), as `rvnvmm run` sets up before
//! it loads a program.

use crate::errno::*;
use crate::process::{Options, Process};

/// Seconds since 1970 at simulated time zero.
pub(crate) const EPOCH_SECS: u64 = 1_700_000_000;

/// An address nothing is mapped at.
pub(crate) const WILD: u64 = 0xdead_0000;

/// Where the test process's heap starts.
pub(crate) const BRK_START: u64 = 0x40_0000;

pub(crate) fn process() -> Process {
    process_on(vec![crate::MemoryNode {
        name: "dram".into(),
        id: 0,
        base: 0x8000_0000,
        size: 64 << 20,
        nvmm: false,
    }])
}

/// A bare process on two DRAM nodes of 16 MiB, node 1 at distance 25.
pub(crate) fn two_node_process() -> Process {
    let node = |id: u32, base: u64| crate::MemoryNode {
        name: format!("node{id}"),
        id,
        base,
        size: 16 << 20,
        nvmm: false,
    };
    let mut p = process_on(vec![node(0, 0x8000_0000), node(1, 0x9000_0000)]);
    p.memory.aspace.numa = crate::numa::NodeMap::new(&[0, 1], 0, &[(0, 1, 25), (1, 0, 25)]);
    p
}

/// A bare process whose guest RAM is `nodes`.
pub(crate) fn process_on(nodes: Vec<crate::MemoryNode>) -> Process {
    let opts = Options {
        program: "test".into(),
        args: vec!["test".into()],
        env: Vec::new(),
        root: None,
        sysroot: None,
        maps: Vec::new(),
        cwd: None,
        harts: 2,
        hart: Default::default(),
        nodes,
        numa_distances: Vec::new(),
        heap_on_nvmm: false,
        pmem_dir: None,
        stack_size: 8 << 20,
        pages: crate::vm::PagePolicy::Base,
        max_insns: None,
        crash_at: None,
        trace: false,
        epoch_secs: EPOCH_SECS,
        quantum: 10_000,
        threads_per_core: 1,
        time_slice_ns: 3_000_000,
    };
    let mut p = Process::without_program(opts).expect("a bare process");
    p.memory.aspace.brk_start = BRK_START;
    p.memory.aspace.brk = BRK_START;
    p
}

/// Maps `len` bytes of private anonymous read-write memory.
pub(crate) fn scratch(p: &mut Process, len: u64) -> u64 {
    const RW: u64 = 3;
    const PRIVATE_ANON: u64 = 0x22;
    p.sys_mmap([0, len, RW, PRIVATE_ANON, u64::MAX, 0])
        .expect("anonymous memory") as u64
}

/// Puts `s` NUL-terminated into fresh guest memory.
pub(crate) fn guest_str(p: &mut Process, s: &str) -> u64 {
    let at = scratch(p, s.len() as u64 + 1);
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    p.write_mem(at, &b).unwrap();
    at
}

/// Reads `n` bytes of guest memory.
pub(crate) fn read(p: &mut Process, at: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    p.read_mem(at, &mut b).unwrap();
    b
}

/// A file in the host's temporary directory, removed when dropped.
pub(crate) struct TempFile(pub std::path::PathBuf);

impl TempFile {
    pub(crate) fn new(tag: &str, contents: &[u8]) -> TempFile {
        let path =
            std::env::temp_dir().join(format!("rvnvmm-syscall-{tag}-{}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    pub(crate) fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The error of a call expected to fail.
pub(crate) fn err(r: SysResult) -> Errno {
    r.expect_err("the call should fail")
}
