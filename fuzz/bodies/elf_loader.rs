//! One fuzz input for the ELF loader, shared by the libFuzzer target and the
//! seeded test in `crates/user/tests/elf_fuzz.rs`: the bytes as a whole
//! program file, validated and, if valid, loaded into a small guest twice
//! (as a program at the PIE base and as an interpreter placed by the
//! address space). Any outcome but a panic (or an abort) is a pass.

use rvnvmm_mem::PhysMem;
use rvnvmm_user::elf::ElfFile;
use rvnvmm_user::vm::{AddressSpace, PIE_BASE};

/// Guest RAM of the fuzzed machine: small, so that running out is explored.
const RAM: (u64, u64) = (0x8000_0000, 0x40_0000);

pub fn one_input(data: &[u8]) {
    let len = data.len() as u64;
    let Ok(file) = ElfFile::from_bytes(data.to_vec(), len, "fuzz") else {
        return;
    };
    let _ = file.interpreter();
    let mut mem = PhysMem::new(&[RAM]).expect("guest RAM");
    let mut aspace = AddressSpace::new(&mut mem, RAM.0, RAM.1).expect("address space");
    if let Ok((_, entry, _, _)) = file.load(&mut mem, &mut aspace, Some(PIE_BASE)) {
        assert!(entry < rvnvmm_user::vm::USER_TOP, "entry {entry:#x}");
    }
    let _ = file.load(&mut mem, &mut aspace, None);
}
