//! Locates addresses in one ELF file mapped at its link address, to compare
//! with binutils' addr2line:
//!
//!     cargo run -p rvnvmm-symbols --example locate -- FILE ADDR...
use object::{Object, ObjectSegment};
use rvnvmm_symbols::{MappedObject, Symbolizer};
use std::path::PathBuf;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().ok_or("usage: locate FILE ADDR...")?);
    let data = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| e.to_string())?;
    let objects = file
        .segments()
        .map(|s| {
            let (offset, size) = s.file_range();
            MappedObject {
                guest_path: path.to_string_lossy().into_owned(),
                host_path: path.clone(),
                start: s.address(),
                end: s.address() + size,
                file_offset: offset,
            }
        })
        .collect();
    let symbols = Symbolizer::new(objects);
    for arg in args {
        let pc = u64::from_str_radix(arg.trim_start_matches("0x"), 16)
            .map_err(|e| format!("{arg}: {e}"))?;
        println!("{pc:#x} {}", symbols.locate(pc));
    }
    for e in symbols.errors() {
        eprintln!("{e}");
    }
    Ok(())
}
