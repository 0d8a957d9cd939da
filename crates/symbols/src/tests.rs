use super::*;

fn loc(pc: u64) -> Location {
    Location::unknown(pc)
}

#[test]
fn display_with_line() {
    let l = Location {
        object: Some("undo_log".into()),
        offset: Some(0x10a2c),
        function: Some("transaction".into()),
        file: Some("undo_log.c".into()),
        line: Some(97),
        ..loc(0x10a2c)
    };
    assert_eq!(l.to_string(), "undo_log.c:97 (transaction)");
    let l = Location {
        function: None,
        ..l
    };
    assert_eq!(l.to_string(), "undo_log.c:97");
}

#[test]
fn display_inlined() {
    let l = Location {
        object: Some("undo_log".into()),
        offset: Some(0x10a2c),
        function: Some("persist".into()),
        inlined_in: Some("transaction".into()),
        file: Some("undo_log.c".into()),
        line: Some(40),
        ..loc(0x10a2c)
    };
    assert_eq!(
        l.to_string(),
        "undo_log.c:40 (persist inlined in transaction)"
    );
}

#[test]
fn display_without_line() {
    let l = Location {
        object: Some("libpmemobj.so.1".into()),
        offset: Some(0x1a2b4),
        function: Some("pmemobj_tx_commit".into()),
        ..loc(0x3f_f7a1_a2b4)
    };
    assert_eq!(l.to_string(), "libpmemobj.so.1+0x1a2b4 (pmemobj_tx_commit)");
    // A file without a line is no source location.
    let l = Location {
        file: Some("tx.c".into()),
        ..l
    };
    assert_eq!(l.to_string(), "libpmemobj.so.1+0x1a2b4 (pmemobj_tx_commit)");
    let l = Location {
        function: None,
        file: None,
        ..l
    };
    assert_eq!(l.to_string(), "libpmemobj.so.1+0x1a2b4");
}

#[test]
fn display_nothing_known() {
    assert_eq!(loc(0x10a2c).to_string(), "0x10a2c");
}

fn mapping(guest: &str, host: &str, start: u64, end: u64, file_offset: u64) -> MappedObject {
    MappedObject {
        guest_path: guest.into(),
        host_path: host.into(),
        start,
        end,
        file_offset,
    }
}

#[test]
fn outside_every_mapping() {
    let s = Symbolizer::new(vec![
        mapping("/bin/a", "/nonexistent/a", 0x1000, 0x2000, 0),
        mapping("/bin/a", "/nonexistent/a", 0x3000, 0x4000, 0x1000),
    ]);
    for pc in [0, 0xfff, 0x2000, 0x2fff, 0x4000, u64::MAX] {
        assert_eq!(s.locate(pc), loc(pc), "{pc:#x}");
    }
    // Nothing was opened.
    assert!(s.errors().is_empty());
}

#[test]
fn missing_file_gives_the_file_offset() {
    let s = Symbolizer::new(vec![
        mapping(
            "/lib/libx.so.1",
            "/nonexistent/libx.so.1",
            0x4000,
            0x6000,
            0,
        ),
        mapping(
            "/lib/libx.so.1",
            "/nonexistent/libx.so.1",
            0x7000,
            0x8000,
            0x3000,
        ),
        // Beyond u64 on translation.
        mapping(
            "/lib/liby.so",
            "/nonexistent/liby.so",
            0x9000,
            0xa000,
            u64::MAX,
        ),
    ]);
    let l = s.locate(0x7010);
    assert_eq!(l.object.as_deref(), Some("libx.so.1"));
    assert_eq!(l.offset, Some(0x3010));
    assert_eq!((l.function, l.file, l.line), (None, None, None));
    assert_eq!(s.locate(0x4008).to_string(), "libx.so.1+0x8");
    assert_eq!(s.locate(0x9001).to_string(), "0x9001");
    // One error for the one host file opened.
    let errors = s.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(errors[0], Error::Read { .. }));
}

#[test]
fn base_names() {
    assert_eq!(base_name("/usr/lib/libpmemobj.so.1"), "libpmemobj.so.1");
    assert_eq!(base_name("undo_log.c"), "undo_log.c");
    assert_eq!(object_name(&mapping("", "/host/dir/prog", 0, 1, 0)), "prog");
}

#[test]
fn symbolizer_is_send() {
    fn send<T: Send>() {}
    send::<Symbolizer>();
}
