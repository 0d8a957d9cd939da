//! `Symbolizer::locate` on riscv64 programs built at test time with the
//! cross compiler, checked against binutils' addr2line.
use object::{Object, ObjectSegment, ObjectSymbol};
use rvnvmm_symbols::{Error, Location, MappedObject, Symbolizer};
use std::path::{Path, PathBuf};
use std::process::Command;

const CROSS: &str = "riscv64-linux-gnu-";

/// The line numbers below are asserted by the tests: keep them in step.
const TINY_C: &str = r#"volatile int sink;

__attribute__((noinline)) int scale(int x)
{
    sink = x;
    return x * 3 + 1;
}

static inline __attribute__((always_inline)) void store_twice(int v)
{
    sink = v;
    sink = v + 1;
}

__attribute__((noinline)) void twice(int v)
{
    store_twice(v);
}

int exported_fn(int x)
{
    return scale(x) + 2;
}

int main(int argc, char **argv)
{
    twice(argc);
    return exported_fn(argc);
}
"#;
/// scale's first statement, where its first instruction is.
const SCALE_LINE: u32 = 5;
/// A PIE's made-up load bias, as a loader might choose.
const BIAS: u64 = 0x2aaa_aaa0_0000;

/// A scratch directory with tiny.c in it, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("rvnvmm-symbols-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tiny.c"), TINY_C).unwrap();
        Scratch(dir)
    }

    /// Compiles tiny.c to `out` with `flags`; `None` (after a note) only
    /// when the cross compiler is not installed.
    fn cc(&self, out: &str, flags: &[&str]) -> Option<PathBuf> {
        let path = self.0.join(out);
        let status = Command::new(format!("{CROSS}gcc"))
            .current_dir(&self.0)
            .args(flags)
            .args(["-o", out, "tiny.c"])
            .status();
        match status {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                eprintln!("note: {CROSS}gcc not installed: test skipped");
                None
            }
            Err(e) => panic!("{CROSS}gcc: {e}"),
            Ok(s) => {
                assert!(s.success(), "{CROSS}gcc {flags:?} failed");
                Some(path)
            }
        }
    }

    fn strip(&self, from: &Path, out: &str) -> PathBuf {
        let path = self.0.join(out);
        let status = Command::new(format!("{CROSS}strip"))
            .arg("-o")
            .arg(&path)
            .arg(from)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The mappings a loader makes for the file's PT_LOAD segments, `bias`
/// added to their addresses (0 for an ET_EXEC at its link address).
fn mappings(path: &Path, guest_path: &str, bias: u64) -> Vec<MappedObject> {
    const PAGE: u64 = 0x1000;
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.segments()
        .map(|s| {
            let (offset, size) = s.file_range();
            let start = (bias + s.address()) & !(PAGE - 1);
            MappedObject {
                guest_path: guest_path.into(),
                host_path: path.to_owned(),
                start,
                end: (bias + s.address() + size).next_multiple_of(PAGE),
                file_offset: offset - (bias + s.address() - start),
            }
        })
        .collect()
}

/// A function's address and size from the file's symbol table.
fn function(path: &Path, name: &str) -> (u64, u64) {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let s = file
        .symbols()
        .find(|s| s.name() == Ok(name))
        .unwrap_or_else(|| panic!("no symbol {name}"));
    (s.address(), s.size())
}

/// (function, file base name, line) for each address, as binutils'
/// addr2line reports them (the innermost inlined function's name).
fn binutils(path: &Path, addrs: &[u64]) -> Vec<(Option<String>, Option<String>, Option<u32>)> {
    let out = Command::new(format!("{CROSS}addr2line"))
        .arg("-f")
        .arg("-e")
        .arg(path)
        .args(addrs.iter().map(|a| format!("{a:#x}")))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 * addrs.len(), "{text}");
    lines
        .chunks(2)
        .map(|pair| {
            let function = (pair[0] != "??").then(|| pair[0].to_owned());
            // "DIR/tiny.c:12 (discriminator 1)", "??:0" or "??:?"
            let at = pair[1].split(' ').next().unwrap();
            let (file, line) = at.rsplit_once(':').unwrap();
            let file = (file != "??").then(|| file.rsplit('/').next().unwrap().to_owned());
            let line = line.parse().ok().filter(|&l| l != 0);
            (function, file, line)
        })
        .collect()
}

/// Every 2-byte step through the named functions (instructions are 2 or
/// 4 bytes) locates as binutils' addr2line says; returns the locations.
fn check_against_binutils(
    symbols: &Symbolizer,
    path: &Path,
    bias: u64,
    names: &[&str],
) -> Vec<Location> {
    let mut addrs = Vec::new();
    for name in names {
        let (start, size) = function(path, name);
        assert!(size > 0);
        addrs.extend((start..start + size).step_by(2));
    }
    let expected = binutils(path, &addrs);
    let mut found = Vec::new();
    for (&addr, (function, file, line)) in addrs.iter().zip(expected) {
        let l = symbols.locate(addr + bias);
        assert_eq!(l.pc, addr + bias);
        assert_eq!(l.offset, Some(addr), "{addr:#x}");
        assert_eq!(
            (&l.function, &l.file, l.line),
            (&function, &file, line),
            "{addr:#x}: {l}"
        );
        found.push(l);
    }
    found
}

fn check_executable(path: &Path, guest: &str, bias: u64) {
    let symbols = Symbolizer::new(mappings(path, guest, bias));
    let (scale, _) = function(path, "scale");
    let l = symbols.locate(bias + scale);
    let reference = binutils(path, &[scale]).remove(0);
    assert_eq!(reference.2, Some(SCALE_LINE));
    assert_eq!(l.object.as_deref(), Some("tiny"));
    assert_eq!(l.function, reference.0);
    assert_eq!(l.function.as_deref(), Some("scale"));
    assert_eq!(l.file, reference.1);
    assert_eq!(l.file.as_deref(), Some("tiny.c"));
    assert_eq!(l.line, reference.2);
    assert_eq!(l.inlined_in, None);
    assert_eq!(l.to_string(), format!("tiny.c:{SCALE_LINE} (scale)"));

    let found = check_against_binutils(&symbols, path, bias, &["scale", "twice", "main"]);
    // store_twice's stores, inlined into twice.
    let inlined: Vec<_> = found
        .iter()
        .filter(|l| l.function.as_deref() == Some("store_twice"))
        .collect();
    assert!(!inlined.is_empty());
    for l in inlined {
        assert_eq!(l.inlined_in.as_deref(), Some("twice"));
        assert!(matches!(l.line, Some(11 | 12)), "{l}");
        assert!(
            l.to_string().ends_with(" (store_twice inlined in twice)"),
            "{l}"
        );
    }
    assert!(symbols.errors().is_empty(), "{:?}", symbols.errors());
}

#[test]
fn static_executable_at_its_link_address() {
    let s = Scratch::new("static");
    let Some(exe) = s.cc("tiny", &["-g", "-O1", "-static"]) else {
        return;
    };
    check_executable(&exe, "/crashtest/bin/tiny", 0);
}

#[test]
fn pie_at_a_bias() {
    let s = Scratch::new("pie");
    let Some(exe) = s.cc("tiny", &["-g", "-O1", "-fPIE", "-pie"]) else {
        return;
    };
    check_executable(&exe, "/crashtest/bin/tiny", BIAS);
}

#[test]
fn an_elf_loaded_by_its_program_headers_names_as_its_mappings_do() {
    let s = Scratch::new("loaded");
    let Some(exe) = s.cc("tiny", &["-g", "-O1", "-fPIE", "-pie"]) else {
        return;
    };
    let loaded = MappedObject::loaded("/d/tiny", &exe, BIAS).unwrap();
    assert!(!loaded.is_empty() && loaded.iter().all(|m| m.start >= BIAS));
    let (by_loader, by_headers) = (
        Symbolizer::new(mappings(&exe, "/d/tiny", BIAS)),
        Symbolizer::new(loaded),
    );
    for f in ["scale", "twice", "main"] {
        let (at, size) = function(&exe, f);
        for pc in (at..at + size).step_by(2) {
            assert_eq!(by_headers.locate(BIAS + pc), by_loader.locate(BIAS + pc));
        }
    }
    let missing = MappedObject::loaded("/d/none", &s.0.join("none"), 0);
    assert!(matches!(missing, Err(Error::Read { .. })), "{missing:?}");
}

#[test]
fn stripped_static_executable_knows_only_the_object() {
    let s = Scratch::new("stripped-static");
    let Some(exe) = s.cc("tiny.g", &["-g", "-O1", "-static"]) else {
        return;
    };
    let (scale, _) = function(&exe, "scale");
    let stripped = s.strip(&exe, "tiny");
    let symbols = Symbolizer::new(mappings(&stripped, "/bin/tiny", 0));
    let l = symbols.locate(scale);
    // No .symtab, and a static program has no .dynsym.
    assert_eq!(
        l,
        Location {
            object: Some("tiny".into()),
            offset: Some(scale),
            ..Location::unknown(scale)
        }
    );
    assert_eq!(l.to_string(), format!("tiny+{scale:#x}"));
    assert!(symbols.errors().is_empty());
}

#[test]
fn stripped_shared_library_names_exported_functions() {
    let s = Scratch::new("stripped-shared");
    let Some(lib) = s.cc("libtiny.so.g", &["-g", "-O1", "-fPIC", "-shared"]) else {
        return;
    };
    let (exported, _) = function(&lib, "exported_fn");
    let stripped = s.strip(&lib, "libtiny.so.1");
    let symbols = Symbolizer::new(mappings(&stripped, "/usr/lib/libtiny.so.1", BIAS));
    let l = symbols.locate(BIAS + exported + 2);
    assert_eq!(l.object.as_deref(), Some("libtiny.so.1"));
    assert_eq!(l.offset, Some(exported + 2));
    assert_eq!(l.function.as_deref(), Some("exported_fn"));
    assert_eq!((l.file, l.line), (None, None));
    assert_eq!(
        symbols.locate(BIAS + exported).to_string(),
        format!("libtiny.so.1+{exported:#x} (exported_fn)")
    );
}

#[test]
fn without_dwarf_the_symbol_table_names_the_function() {
    let s = Scratch::new("g0");
    let Some(exe) = s.cc("tiny", &["-g0", "-O1", "-static"]) else {
        return;
    };
    let (scale, size) = function(&exe, "scale");
    let symbols = Symbolizer::new(mappings(&exe, "/bin/tiny", 0));
    for pc in [scale, scale + size - 2] {
        let l = symbols.locate(pc);
        assert_eq!(l.function.as_deref(), Some("scale"));
        assert_eq!((&l.file, l.line, &l.inlined_in), (&None, None, &None));
        assert_eq!(l.to_string(), format!("tiny+{pc:#x} (scale)"));
    }
}

/// The same mappings of another host file.
fn mappings_of(path: &Path, maps: &[MappedObject]) -> Vec<MappedObject> {
    maps.iter()
        .map(|m| MappedObject {
            host_path: path.to_owned(),
            ..m.clone()
        })
        .collect()
}

/// Locates a spread of addresses in every mapping of `path` (which may be
/// anything): it must not panic, and must name the object.
fn locate_all(path: &Path, maps: &[MappedObject]) -> Vec<Location> {
    let maps = mappings_of(path, maps);
    let symbols = Symbolizer::new(maps.clone());
    let mut found = Vec::new();
    for m in &maps {
        for pc in (m.start..m.end).step_by(0x101).chain([m.end - 1]) {
            let l = symbols.locate(pc);
            assert_eq!(l.pc, pc);
            assert_eq!(l.object.as_deref(), Some("tiny"));
            assert!(l.offset.is_some());
            found.push(l);
        }
    }
    let _ = symbols.errors();
    found
}

#[test]
fn garbage_truncated_and_missing_files() {
    let s = Scratch::new("garbage");
    let Some(exe) = s.cc("tiny", &["-g", "-O1", "-static"]) else {
        return;
    };
    let maps = mappings(&exe, "/bin/tiny", 0);
    let data = std::fs::read(&exe).unwrap();
    let bad = s.0.join("bad");

    // Not ELF at all: the file offset, nothing more, and an error saying so.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut random = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let garbage: Vec<u8> = (0..data.len()).map(|_| random() as u8).collect();
    for contents in [&[][..], b"\x7fELF", &garbage] {
        std::fs::write(&bad, contents).unwrap();
        for l in locate_all(&bad, &maps) {
            let offset = maps
                .iter()
                .find(|m| (m.start..m.end).contains(&l.pc))
                .map(|m| l.pc - m.start + m.file_offset);
            assert_eq!(l.offset, offset);
            assert_eq!((&l.function, &l.file, l.line), (&None, &None, None));
        }
        let symbols = Symbolizer::new(mappings_of(&bad, &maps));
        let _ = symbols.locate(maps[0].start);
        assert!(matches!(symbols.errors()[..], [Error::NotElf { .. }]));
    }

    // Cut short anywhere: whatever survives, never a panic.
    let mut lengths: Vec<usize> = vec![1, 16, 63, 64, 65, 120, 200, 4096];
    lengths.extend((1..16).map(|i| data.len() * i / 16));
    lengths.push(data.len() - 1);
    for len in lengths {
        std::fs::write(&bad, &data[..len]).unwrap();
        locate_all(&bad, &maps);
    }

    // Bytes overwritten here and there (the DWARF is most of the file).
    for round in 0..64 {
        let mut bytes = data.clone();
        let at = random() as usize % bytes.len();
        let n = 1 + random() as usize % 512;
        for b in bytes.iter_mut().skip(at).take(n) {
            *b = if round % 2 == 0 { random() as u8 } else { 0xff };
        }
        std::fs::write(&bad, &bytes).unwrap();
        locate_all(&bad, &maps);
    }

    // Missing: as the garbage, with a read error.
    let symbols = Symbolizer::new(mappings(&exe, "/bin/tiny", 0));
    drop(std::fs::remove_file(&exe));
    let l = symbols.locate(maps[0].start + 0x10);
    assert_eq!(
        l.to_string(),
        format!("tiny+{:#x}", maps[0].file_offset + 0x10)
    );
    assert!(matches!(symbols.errors()[..], [Error::Read { .. }]));
}

/// The crash-test example itself, when built with -g (guest/Makefile):
/// every address in `transaction` as binutils says.
#[test]
fn undo_log_example_matches_binutils() {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest/build/emu/undo_log");
    let has_dwarf = std::fs::read(&exe).ok().is_some_and(|data| {
        object::File::parse(&*data).is_ok_and(|f| f.section_by_name(".debug_info").is_some())
    });
    if !has_dwarf {
        eprintln!("note: guest/build/emu/undo_log not built with -g: test skipped");
        return;
    }
    let symbols = Symbolizer::new(mappings(&exe, "/crashtest/bin/undo_log", 0));
    let found = check_against_binutils(&symbols, &exe, 0, &["transaction"]);
    assert!(found
        .iter()
        .all(|l| l.file.as_deref() == Some("undo_log.c")));
}
