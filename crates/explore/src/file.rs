//! The persistence trace file (`rvnvmm run --persist-trace FILE`): the
//! records of [`PersistTrace`] with the region they describe and the code
//! mapped at the end of the run, little-endian throughout.
//!
//! ```text
//! magic "RVNVPTR2"
//! u64 region base, u64 region size, u32 line bytes,
//! u8 domain (0 volatile, 1 ADR, 2 eADR), u8 truncated (1: records were dropped),
//! u64 instructions of the run, u64 records, u64 data bytes
//! records: u8 kind (0 store, 1 write, 2 flush, 3 flush-all, 4 fence, 5 sync),
//!          u32 hart, u64 insn, u64 pc, u64 offset, u32 len,
//!          u32 call stack (0: none, else 1 + its index)    (37 bytes each)
//! data: the bytes of the stores and writes, in record order
//! u32 objects; each: u32 n + guest path, u32 n + host path (n = 0: unknown),
//!          u64 start, u64 end, u64 file offset
//! u32 call stacks; each: u32 n, n u64 return addresses (the outermost first)
//! ```

use rvnvmm_mem::persist::DomainKind;
use rvnvmm_mem::persist_trace::{PersistTrace, TraceKind, TraceRecord};
use std::io::{self, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"RVNVPTR2";
const RECORD_BYTES: usize = 37;

/// A file mapped executable in the traced run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedFile {
    /// The guest's name of it.
    pub guest_path: String,
    /// Where the emulator read it on the host, if known.
    pub host_path: Option<String>,
    /// Its first byte's address, and one past its last.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    /// The file offset of `start`.
    pub offset: u64,
}

/// A trace file, read.
#[derive(Clone, Debug)]
pub struct TraceFile {
    /// The region's physical base.
    pub base: u64,
    /// Its size.
    pub size: u64,
    /// The tracking line (the data cache's line).
    pub line_bytes: u64,
    /// The persistence domain of the run.
    pub domain: DomainKind,
    /// Records were dropped for want of room: the trace is incomplete.
    pub truncated: bool,
    /// Instructions the run retired.
    pub instructions: u64,
    /// The records, in order.
    pub records: Vec<TraceRecord>,
    /// Their bytes.
    pub data: Vec<u8>,
    /// The code mapped at the end of the run.
    pub code: Vec<MappedFile>,
    /// The call stacks records name (`TraceRecord::calls`), each the
    /// return addresses, the outermost first.
    pub stacks: Vec<Vec<u64>>,
}

impl TraceFile {
    /// The bytes of `r`.
    pub fn bytes_of(&self, r: &TraceRecord) -> &[u8] {
        &self.data[r.data_at as usize..][..r.len as usize]
    }

    /// The call stack of `r` (the outermost caller first); empty if none is
    /// known.
    pub fn calls_of(&self, r: &TraceRecord) -> &[u64] {
        match r.calls {
            0 => &[],
            n => &self.stacks[n as usize - 1],
        }
    }
}

/// Why a trace file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    /// The file could not be read.
    #[error("cannot read the persistence trace {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// It is not a trace, or is damaged.
    #[error("{path} is not a persistence trace rvnvmm can read: {why}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
}

fn kind_code(k: TraceKind) -> u8 {
    match k {
        TraceKind::Store => 0,
        TraceKind::Write => 1,
        TraceKind::Flush => 2,
        TraceKind::FlushAll => 3,
        TraceKind::Fence => 4,
        TraceKind::Sync => 5,
    }
}

fn kind_of(code: u8) -> Option<TraceKind> {
    Some(match code {
        0 => TraceKind::Store,
        1 => TraceKind::Write,
        2 => TraceKind::Flush,
        3 => TraceKind::FlushAll,
        4 => TraceKind::Fence,
        5 => TraceKind::Sync,
        _ => return None,
    })
}

/// What the writer needs of the run besides the records.
pub struct TraceHeader {
    /// The region's base, size and line.
    pub base: u64,
    /// See `base`.
    pub size: u64,
    /// See `base`.
    pub line_bytes: u64,
    /// The domain.
    pub domain: DomainKind,
    /// Instructions the run retired.
    pub instructions: u64,
}

/// Writes `trace` with `header` and the mapped `code`.
pub fn write(
    out: &mut impl Write,
    header: &TraceHeader,
    trace: &PersistTrace,
    code: &[MappedFile],
) -> io::Result<()> {
    out.write_all(MAGIC)?;
    out.write_all(&header.base.to_le_bytes())?;
    out.write_all(&header.size.to_le_bytes())?;
    out.write_all(&(header.line_bytes as u32).to_le_bytes())?;
    let domain = match header.domain {
        DomainKind::Volatile => 0u8,
        DomainKind::Adr => 1,
        DomainKind::Eadr => 2,
    };
    out.write_all(&[domain, trace.truncated() as u8])?;
    out.write_all(&header.instructions.to_le_bytes())?;
    out.write_all(&(trace.records().len() as u64).to_le_bytes())?;
    let data_len: u64 = trace.records().iter().map(|r| u64::from(r.len)).sum();
    out.write_all(&data_len.to_le_bytes())?;
    let mut rec = [0u8; RECORD_BYTES];
    for r in trace.records() {
        rec[0] = kind_code(r.kind);
        rec[1..5].copy_from_slice(&r.hart.to_le_bytes());
        rec[5..13].copy_from_slice(&r.insn.to_le_bytes());
        rec[13..21].copy_from_slice(&r.pc.to_le_bytes());
        rec[21..29].copy_from_slice(&r.offset.to_le_bytes());
        rec[29..33].copy_from_slice(&r.len.to_le_bytes());
        rec[33..37].copy_from_slice(&r.calls.to_le_bytes());
        out.write_all(&rec)?;
    }
    for r in trace.records() {
        out.write_all(trace.bytes_of(r))?;
    }
    out.write_all(&(code.len() as u32).to_le_bytes())?;
    for m in code {
        for s in [Some(m.guest_path.as_str()), m.host_path.as_deref()] {
            let s = s.unwrap_or("");
            out.write_all(&(s.len() as u32).to_le_bytes())?;
            out.write_all(s.as_bytes())?;
        }
        for v in [m.start, m.end, m.offset] {
            out.write_all(&v.to_le_bytes())?;
        }
    }
    out.write_all(&(trace.stacks().len() as u32).to_le_bytes())?;
    for frames in trace.stacks() {
        out.write_all(&(frames.len() as u32).to_le_bytes())?;
        for f in frames.iter() {
            out.write_all(&f.to_le_bytes())?;
        }
    }
    Ok(())
}

/// A reader of the file's fields that turns running out into an error.
struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| format!("it ends at byte {}", self.buf.len()))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a path is not UTF-8".to_string())
    }
}

/// Reads a trace file.
pub fn read(path: &Path) -> Result<TraceFile, TraceFileError> {
    let name = path.display().to_string();
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|source| TraceFileError::Io {
            path: name.clone(),
            source,
        })?;
    parse(&buf).map_err(|why| TraceFileError::Format { path: name, why })
}

/// Parses the bytes of a trace file.
pub fn parse(buf: &[u8]) -> Result<TraceFile, String> {
    let mut c = Cursor { buf, at: 0 };
    if c.take(8).ok() != Some(MAGIC.as_slice()) {
        return Err("it does not start with RVNVPTR2".into());
    }
    let base = c.u64()?;
    let size = c.u64()?;
    let line_bytes = u64::from(c.u32()?);
    if !line_bytes.is_power_of_two() || !(8..=4096).contains(&line_bytes) {
        return Err(format!("line of {line_bytes} bytes"));
    }
    let domain = match c.u8()? {
        0 => DomainKind::Volatile,
        1 => DomainKind::Adr,
        2 => DomainKind::Eadr,
        d => return Err(format!("unknown domain {d}")),
    };
    let truncated = c.u8()? != 0;
    let instructions = c.u64()?;
    let count = c.u64()?;
    let data_len = c.u64()?;
    let room = (buf.len() - c.at) as u64;
    if count.saturating_mul(RECORD_BYTES as u64) > room || data_len > room {
        return Err(format!(
            "{count} records and {data_len} bytes do not fit in it"
        ));
    }
    let mut records = Vec::with_capacity(count as usize);
    let mut data_at = 0u64;
    for i in 0..count {
        let kind = kind_of(c.u8()?).ok_or_else(|| format!("record {i} has an unknown kind"))?;
        let hart = c.u32()?;
        let insn = c.u64()?;
        let pc = c.u64()?;
        let offset = c.u64()?;
        let len = c.u32()?;
        let calls = c.u32()?;
        let with_bytes = matches!(kind, TraceKind::Store | TraceKind::Write);
        if (len != 0) != with_bytes || offset.checked_add(u64::from(len)).is_none_or(|e| e > size) {
            return Err(format!(
                "record {i} ({kind:?} of {len} bytes at {offset:#x}) is out of the region"
            ));
        }
        records.push(TraceRecord {
            kind,
            hart,
            insn,
            pc,
            offset,
            len,
            data_at,
            calls,
        });
        data_at += u64::from(len);
    }
    if data_at != data_len {
        return Err(format!(
            "the records hold {data_at} bytes, the header says {data_len}"
        ));
    }
    let data = c.take(data_len as usize)?.to_vec();
    let objects = c.u32()?;
    let mut code = Vec::new();
    for _ in 0..objects {
        let guest_path = c.string()?;
        let host = c.string()?;
        code.push(MappedFile {
            guest_path,
            host_path: (!host.is_empty()).then_some(host),
            start: c.u64()?,
            end: c.u64()?,
            offset: c.u64()?,
        });
    }
    let count = c.u32()? as usize;
    let mut stacks = Vec::new();
    for _ in 0..count {
        let n = c.u32()? as usize;
        if n.saturating_mul(8) > buf.len() - c.at {
            return Err(format!("a call stack of {n} frames does not fit in it"));
        }
        stacks.push((0..n).map(|_| c.u64()).collect::<Result<Vec<u64>, _>>()?);
    }
    if let Some((i, r)) = records
        .iter()
        .enumerate()
        .find(|(_, r)| r.calls as usize > stacks.len())
    {
        return Err(format!(
            "record {i} names call stack {} of {}",
            r.calls,
            stacks.len()
        ));
    }
    if c.at != buf.len() {
        return Err(format!("{} bytes follow its end", buf.len() - c.at));
    }
    Ok(TraceFile {
        base,
        size,
        line_bytes,
        domain,
        truncated,
        instructions,
        records,
        data,
        code,
        stacks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (TraceHeader, PersistTrace, Vec<MappedFile>) {
        let mut t = PersistTrace::default();
        t.push_bytes(
            TraceKind::Store,
            0,
            5,
            0x1000,
            64,
            &[1, 2, 3, 4, 5, 6, 7, 8],
        );
        t.set_calls(&[0x10400, 0x10800]);
        t.push(TraceKind::Flush, 0, 6, 0x1004, 64);
        t.push(TraceKind::Fence, 0, 7, 0x1008, 0);
        t.set_calls(&[]);
        t.push_write(4096, &[7; 100]);
        let header = TraceHeader {
            base: 0x1_0000_0000,
            size: 1 << 20,
            line_bytes: 64,
            domain: DomainKind::Adr,
            instructions: 99,
        };
        let code = vec![MappedFile {
            guest_path: "/crashtest/bin/p".into(),
            host_path: None,
            start: 0x10000,
            end: 0x20000,
            offset: 0,
        }];
        (header, t, code)
    }

    #[test]
    fn a_trace_reads_back_as_written() {
        let (h, t, code) = sample();
        let mut buf = Vec::new();
        write(&mut buf, &h, &t, &code).unwrap();
        let f = parse(&buf).unwrap();
        assert_eq!(
            (f.base, f.size, f.line_bytes, f.instructions),
            (h.base, h.size, 64, 99)
        );
        assert_eq!(f.domain, DomainKind::Adr);
        assert_eq!(f.records.len(), 4);
        for (a, b) in f.records.iter().zip(t.records()) {
            assert_eq!(
                (a.kind, a.hart, a.insn, a.pc, a.offset),
                (b.kind, b.hart, b.insn, b.pc, b.offset)
            );
            assert_eq!(f.bytes_of(a), t.bytes_of(b));
            assert_eq!(a.calls, b.calls);
        }
        assert_eq!(f.code, code);
        assert_eq!(f.calls_of(&f.records[0]), &[] as &[u64]);
        assert_eq!(f.calls_of(&f.records[2]), &[0x10400, 0x10800]);
    }

    #[test]
    fn damaged_files_are_refused_with_a_reason() {
        let (h, t, code) = sample();
        let mut buf = Vec::new();
        write(&mut buf, &h, &t, &code).unwrap();
        for cut in [0, 7, 20, 60, buf.len() - 1] {
            assert!(parse(&buf[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = buf.clone();
        bad[0] = b'X';
        assert!(parse(&bad).unwrap_err().contains("RVNVPTR2"));
        // A record pointing outside the region.
        let mut bad = buf.clone();
        let first = 8 + 8 + 8 + 4 + 2 + 8 + 8 + 8;
        bad[first + 21..first + 29].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(parse(&bad).unwrap_err().contains("out of the region"));
        // A record naming a call stack the file does not hold.
        let mut bad = buf.clone();
        bad[first + 33..first + 37].copy_from_slice(&9u32.to_le_bytes());
        assert!(parse(&bad).unwrap_err().contains("call stack 9"));
        let mut long = buf;
        long.push(0);
        assert!(parse(&long).is_err());
    }
}
