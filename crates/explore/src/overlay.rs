//! An image given as changes to another (`rvnvmm run --image-overlay`):
//! the crash states' images, written small.
//!
//! ```text
//! magic "RVNVOVL1", u64 entries; each: u64 offset in the region, u32 n, n bytes
//! ```

use std::io::{self, Write};

const MAGIC: &[u8; 8] = b"RVNVOVL1";

/// Writes `entries` (offset, bytes), in order.
pub fn write<'a>(
    out: &mut impl Write,
    entries: impl ExactSizeIterator<Item = (u64, &'a [u8])>,
) -> io::Result<()> {
    out.write_all(MAGIC)?;
    out.write_all(&(entries.len() as u64).to_le_bytes())?;
    for (offset, bytes) in entries {
        out.write_all(&offset.to_le_bytes())?;
        out.write_all(&(bytes.len() as u32).to_le_bytes())?;
        out.write_all(bytes)?;
    }
    Ok(())
}

/// Reads an overlay's entries; `size` bounds their offsets.
pub fn parse(buf: &[u8], size: u64) -> Result<Vec<(u64, Vec<u8>)>, String> {
    if buf.len() < 16 || &buf[..8] != MAGIC {
        return Err("it does not start with RVNVOVL1".into());
    }
    let n = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
    let mut at = 16usize;
    let mut out = Vec::new();
    for i in 0..n {
        let head = buf
            .get(at..at + 12)
            .ok_or(format!("entry {i} is cut short"))?;
        let offset = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as usize;
        at += 12;
        let bytes = buf
            .get(at..at + len)
            .ok_or(format!("entry {i} is cut short"))?;
        if offset.checked_add(len as u64).is_none_or(|e| e > size) {
            return Err(format!(
                "entry {i} ({len} bytes at {offset:#x}) is outside the region"
            ));
        }
        out.push((offset, bytes.to_vec()));
        at += len;
    }
    if at != buf.len() {
        return Err(format!("{} bytes follow its end", buf.len() - at));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_read_back_and_are_checked() {
        let mut buf = Vec::new();
        let e: Vec<(u64, &[u8])> = vec![(0, &[1, 2]), (4096, &[3; 64])];
        write(&mut buf, e.into_iter()).unwrap();
        let r = parse(&buf, 8192).unwrap();
        assert_eq!(r, vec![(0, vec![1, 2]), (4096, vec![3; 64])]);
        assert!(parse(&buf, 4100).unwrap_err().contains("outside"));
        assert!(parse(&buf[..buf.len() - 1], 8192).is_err());
        assert!(parse(b"nonsense", 8192).is_err());
    }
}
