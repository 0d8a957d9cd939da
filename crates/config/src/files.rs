//! Reading the input files a run names (a config, a kernel, an initramfs)
//! without trusting what the path is.
//!
//! `std::fs::read` on `/dev/zero` never ends and on a FIFO blocks until a
//! writer comes; [`read_regular`] opens without blocking, refuses anything
//! but a regular file, and refuses a file larger than the caller's bound
//! before reading a byte of it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What kind of file `meta` describes, for messages ("a directory").
pub fn describe(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without blocking on a FIFO (`O_NONBLOCK` has no
/// effect on a regular file) and checks that it is a regular file; returns
/// it with its size.
pub fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", describe(&meta)),
        ));
    }
    Ok((file, meta.len()))
}

/// The contents of the regular file `path`, if it holds at most
/// `max_bytes` bytes (`max_what` names the bound in the message, e.g.
/// "a config file").
pub fn read_regular(path: &Path, max_bytes: u64, max_what: &str) -> io::Result<Vec<u8>> {
    let (file, len) = open_regular(path)?;
    if len > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it holds {len} bytes, more than the {max_bytes} bytes {max_what} may have"),
        ));
    }
    let mut data = Vec::new();
    // The file may have grown since the check: read one byte more than the
    // bound at most, and refuse if it is there.
    file.take(max_bytes + 1).read_to_end(&mut data)?;
    if data.len() as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("it grew past the {max_bytes} bytes {max_what} may have while being read"),
        ));
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_fifos_without_blocking() {
        let e = read_regular(Path::new("/dev/zero"), 1 << 20, "a test file").unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let e = read_regular(Path::new("/"), 1 << 20, "a test file").unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("rvnvmm-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, 1 << 20, "a test file").unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let big = dir.join("big");
        std::fs::write(&big, [7u8; 100]).unwrap();
        let e = read_regular(&big, 99, "a test file").unwrap_err();
        assert!(e.to_string().contains("100 bytes"), "{e}");
        assert_eq!(read_regular(&big, 100, "a test file").unwrap(), [7u8; 100]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
