use super::*;

fn manifest() -> Manifest {
    Manifest {
        format_version: FORMAT_VERSION,
        rvnvmm_version: "0.1.0".into(),
        kind: "boot".into(),
        config: serde_json::json!({"machine": {"harts": 2}}),
        memory_map: MemoryMap {
            regions: vec![Region {
                name: "dram".into(),
                kind: "dram".into(),
                base: 0x8000_0000,
                size: 1 << 20,
            }],
            harts: 2,
            cores: 2,
            threads_per_core: 1,
            isa: "rv64gc".into(),
        },
        point: Point {
            instructions: 42,
            sim_time_ns: 840,
            model: "functional".into(),
            trigger: "marker".into(),
        },
        sections: Vec::new(),
        disk: None,
        boot: None,
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rvnvmm-ckpt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn fields_read_back_in_order_and_overruns_are_errors() {
    let mut w = StateWriter::new();
    w.u8(7);
    w.bool(true);
    w.u16(0xbeef);
    w.u32(0xdead_beef);
    w.u64(u64::MAX);
    w.opt_u64(Some(5));
    w.opt_u64(None);
    w.bytes(b"abc");
    w.u64s(&[1, 2, 3]);
    let bytes = w.into_bytes();
    let mut r = StateReader::new("t", &bytes);
    assert_eq!(r.u8().unwrap(), 7);
    assert!(r.bool().unwrap());
    assert_eq!(r.u16().unwrap(), 0xbeef);
    assert_eq!(r.u32().unwrap(), 0xdead_beef);
    assert_eq!(r.u64().unwrap(), u64::MAX);
    assert_eq!(r.opt_u64().unwrap(), Some(5));
    assert_eq!(r.opt_u64().unwrap(), None);
    assert_eq!(r.bytes(10).unwrap(), b"abc");
    assert_eq!(r.u64s(10).unwrap(), vec![1, 2, 3]);
    r.finish().unwrap();

    let mut short = StateReader::new("t", &bytes[..3]);
    short.u8().unwrap();
    short.bool().unwrap();
    let e = short.u16().unwrap_err().to_string();
    assert!(e.contains("section 't' is malformed"), "{e}");
    // A huge length is refused before anything is allocated.
    let mut w = StateWriter::new();
    w.u64(u64::MAX);
    let b = w.into_bytes();
    assert!(StateReader::new("t", &b).bytes(usize::MAX).is_err());
    assert!(StateReader::new("t", &[2]).bool().is_err());
    let left = StateReader::new("t", &[1, 2]);
    assert!(left.finish().unwrap_err().to_string().contains("left over"));
}

#[test]
fn memory_is_sparse_compressed_and_exact() {
    let mut mem = vec![0u8; 300 * PAGE_BYTES + 100];
    mem[5] = 1;
    mem[17 * PAGE_BYTES..18 * PAGE_BYTES].fill(0xaa);
    mem[300 * PAGE_BYTES + 99] = 9;
    for (i, b) in mem[200 * PAGE_BYTES..201 * PAGE_BYTES]
        .iter_mut()
        .enumerate()
    {
        *b = (i * 7) as u8;
    }
    let mut w = StateWriter::new();
    write_pages(&mut w, &mem);
    let bytes = w.into_bytes();
    assert!(bytes.len() < 3 * PAGE_BYTES, "{} bytes", bytes.len());
    let mut back = vec![0u8; mem.len()];
    let mut r = StateReader::new("mem", &bytes);
    let mut pages = 0;
    read_pages(&mut r, mem.len(), |off, p| {
        back[off..off + p.len()].copy_from_slice(p);
        pages += 1;
    })
    .unwrap();
    r.finish().unwrap();
    assert_eq!(pages, 4);
    assert!(back == mem);

    // Another region length, and a damaged chunk, are errors.
    let mut r = StateReader::new("mem", &bytes);
    assert!(read_pages(&mut r, mem.len() + 1, |_, _| {}).is_err());
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 20] ^= 0xff;
    let mut r = StateReader::new("mem", &bad);
    assert!(read_pages(&mut r, mem.len(), |_, _| {}).is_err());
}

#[test]
fn many_pages_span_chunks() {
    let mem: Vec<u8> = (0..(PAGES_PER_CHUNK * 2 + 3) * PAGE_BYTES)
        .map(|i| (i / PAGE_BYTES) as u8 | 1)
        .collect();
    let mut w = StateWriter::new();
    write_pages(&mut w, &mem);
    let bytes = w.into_bytes();
    let mut back = vec![0u8; mem.len()];
    let mut r = StateReader::new("mem", &bytes);
    read_pages(&mut r, mem.len(), |off, p| {
        back[off..off + p.len()].copy_from_slice(p)
    })
    .unwrap();
    assert!(back == mem);
}

#[test]
fn a_checkpoint_reads_back_and_damage_is_an_error() {
    let dir = temp_dir("roundtrip");
    let mut sections = Sections::new();
    sections.write("a", |w| w.u64(1));
    sections.write("b", |w| w.bytes(&[9; 100]));
    Checkpoint {
        manifest: manifest(),
        sections,
    }
    .write(&dir)
    .unwrap();
    let c = Checkpoint::read(&dir).unwrap();
    assert_eq!(c.manifest.point.instructions, 42);
    assert_eq!(c.manifest.sections.len(), 2);
    assert_eq!(c.sections.read("a", |r| r.u64()).unwrap(), 1);
    assert!(matches!(
        c.sections.get("c"),
        Err(CheckpointError::MissingSection(_))
    ));

    let state = dir.join(STATE_FILE);
    let good = std::fs::read(&state).unwrap();
    for cut in [0, 5, 12, 20, good.len() - 1] {
        std::fs::write(&state, &good[..cut]).unwrap();
        let e = Checkpoint::read(&dir).unwrap_err();
        assert!(
            matches!(
                e,
                CheckpointError::NotACheckpoint
                    | CheckpointError::Truncated(_)
                    | CheckpointError::Inconsistent(_)
            ),
            "cut at {cut}: {e}"
        );
    }
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n - 1] ^= 1;
    std::fs::write(&state, &flipped).unwrap();
    assert!(matches!(
        Checkpoint::read(&dir).unwrap_err(),
        CheckpointError::Checksum(_)
    ));
    std::fs::write(&state, &good).unwrap();
    std::fs::write(dir.join(MANIFEST_FILE), "{\"format_version\": 1").unwrap();
    assert!(matches!(
        Checkpoint::read(&dir).unwrap_err(),
        CheckpointError::Manifest { .. }
    ));
    std::fs::write(dir.join(MANIFEST_FILE), "{\"format_version\": 99}").unwrap();
    assert!(matches!(
        Checkpoint::read(&dir).unwrap_err(),
        CheckpointError::Version { found: 99 }
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_maps_name_what_differs() {
    let a = manifest().memory_map;
    assert!(a.differences(&a).is_empty());
    let mut b = a.clone();
    b.harts = 4;
    b.regions[0].size = 2 << 20;
    let d = a.differences(&b);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].contains("harts: 2 in the checkpoint, 4 here"));
    assert!(d[1].contains("dram dram 0x80000000+0x100000"), "{}", d[1]);
    let e = CheckpointError::Mismatch(d).to_string();
    assert!(e.contains("another memory map"), "{e}");
}

#[test]
fn deflated_bytes_read_back_and_lies_are_errors() {
    let data: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
    let mut w = StateWriter::new();
    w.deflated(&data);
    w.deflated(&[]);
    let bytes = w.into_bytes();
    assert!(bytes.len() < data.len() / 4, "compressed");
    let mut r = StateReader::new("disk", &bytes);
    assert_eq!(r.inflated(usize::MAX).unwrap(), data);
    assert!(r.inflated(usize::MAX).unwrap().is_empty());
    r.finish().unwrap();
    // More than the reader allows, or a raw length that is not the data's.
    assert!(StateReader::new("disk", &bytes).inflated(100).is_err());
    let mut lying = bytes.clone();
    lying[0] ^= 1;
    let e = StateReader::new("disk", &lying)
        .inflated(usize::MAX)
        .unwrap_err();
    assert!(e.to_string().contains("section 'disk'"), "{e}");
}
