//! The record of everything that wrote to an NVMM region and everything
//! that ordered those writes, for `rvnvmm crashtest --explore`
//! (`docs/persistence.md`).
//!
//! Where the persistence [`Domain`](crate::persist::Domain) decides one
//! outcome as the run goes, the trace keeps what is needed to enumerate
//! every outcome afterwards, without running the program again: each store
//! with its bytes, the program counter and hart that made it; each flush
//! and fence; each write the emulator made on the guest's behalf (a system
//! call's copy, a page zeroed) and each synchronous write-back (`msync`,
//! `fsync` of the NVMM-backed directory). Replaying the writes over the
//! starting image gives the region as the run left it, which the explorer
//! checks, so a writer the trace missed cannot go unnoticed.
//!
//! The records stay in memory during the run (a forked copy of the
//! emulator keeps its own and never writes them) and are written once, at
//! the end, by the command line.

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A store instruction (also an AMO, a successful `sc`, `cbo.zero`):
    /// its bytes.
    Store,
    /// A write to the region that no instruction made: a system call's copy
    /// into guest memory, a page zeroed or filled by the emulator. Its
    /// bytes; the hart and PC are those of the instruction running (an
    /// `ecall`), or 0 outside any.
    Write,
    /// A flush of one line (`cbo.clean`, `cbo.flush`, `cflush.d.l1`).
    Flush,
    /// `cflush.d.l1 x0` without a cache model: every line.
    FlushAll,
    /// A fence whose predecessor set has W: the hart's flushes complete.
    Fence,
    /// A line written back to the domain at once by the emulator on the
    /// guest's behalf (the NVMM-backed directory's `msync`, `fsync` and
    /// table updates): durable with its contents now.
    Sync,
}

/// One record: `insn` instructions of the machine had retired before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// What it is.
    pub kind: TraceKind,
    /// The hart that made it.
    pub hart: u32,
    /// Instructions retired (all harts) before the one that made it.
    pub insn: u64,
    /// The instruction's virtual PC (0 for none).
    pub pc: u64,
    /// Offset in the region: of the first byte written, or of the line
    /// (flush, sync); 0 for fences and `FlushAll`.
    pub offset: u64,
    /// Bytes written (stores, writes): `data[data_at..data_at + len]`.
    pub len: u32,
    /// Where the bytes are in [`PersistTrace::data`].
    pub data_at: u64,
    /// The call stack of the instruction: 0 for none known, else one more
    /// than its index in [`PersistTrace::stacks`].
    pub calls: u32,
}

/// The most bytes of records and data a trace keeps (beyond it the run
/// goes on and the trace reports that it is incomplete).
pub const MAX_TRACE_BYTES: usize = 2 << 30;

/// The records of one run.
#[derive(Clone, Debug, Default)]
pub struct PersistTrace {
    records: Vec<TraceRecord>,
    data: Vec<u8>,
    /// The instruction count of the last record (writes that no
    /// instruction made take it).
    last_insn: u64,
    /// The hart and PC of the instruction running, for writes made on its
    /// behalf (set around system calls).
    context: (u32, u64),
    truncated: bool,
    /// The distinct call stacks of the records (return addresses, the
    /// outermost first).
    stacks: Vec<Box<[u64]>>,
    stack_ids: std::collections::HashMap<Box<[u64]>, u32>,
    /// The stack the next records take (`TraceRecord::calls`).
    calls: u32,
}

impl PersistTrace {
    /// The records, in the order they happened.
    pub fn records(&self) -> &[TraceRecord] {
        &self.records
    }

    /// The bytes of stores and writes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The bytes of `r`.
    pub fn bytes_of(&self, r: &TraceRecord) -> &[u8] {
        &self.data[r.data_at as usize..][..r.len as usize]
    }

    /// Whether records were dropped for want of room ([`MAX_TRACE_BYTES`]).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The hart and PC that writes no instruction made are charged to.
    pub fn set_context(&mut self, hart: u32, pc: u64) {
        self.context = (hart, pc);
    }

    /// The distinct call stacks the records name (`TraceRecord::calls`).
    pub fn stacks(&self) -> &[Box<[u64]>] {
        &self.stacks
    }

    /// The call stack (return addresses, the outermost first) of the
    /// instruction the next records are made by; empty: none known.
    pub fn set_calls(&mut self, frames: &[u64]) {
        if frames.is_empty() {
            self.calls = 0;
            return;
        }
        if self.calls != 0 && *self.stacks[self.calls as usize - 1] == *frames {
            return;
        }
        self.calls = match self.stack_ids.get(frames) {
            Some(&id) => id,
            None => {
                self.stacks.push(frames.into());
                let id = self.stacks.len() as u32;
                self.stack_ids.insert(frames.into(), id);
                id
            }
        };
    }

    fn room(&mut self, bytes: usize) -> bool {
        let used = self.records.len() * std::mem::size_of::<TraceRecord>() + self.data.len();
        if used + bytes > MAX_TRACE_BYTES {
            self.truncated = true;
        }
        !self.truncated
    }

    /// Records an event without bytes.
    pub fn push(&mut self, kind: TraceKind, hart: u32, insn: u64, pc: u64, offset: u64) {
        if !self.room(std::mem::size_of::<TraceRecord>()) {
            return;
        }
        self.last_insn = insn;
        self.records.push(TraceRecord {
            kind,
            hart,
            insn,
            pc,
            offset,
            len: 0,
            data_at: 0,
            calls: self.calls,
        });
    }

    /// Records a store or write of `bytes` at `offset`.
    pub fn push_bytes(
        &mut self,
        kind: TraceKind,
        hart: u32,
        insn: u64,
        pc: u64,
        offset: u64,
        bytes: &[u8],
    ) {
        if bytes.is_empty() {
            return;
        }
        // Long writes are cut into pieces whose length fits the record.
        for (i, piece) in bytes.chunks(1 << 30).enumerate() {
            if !self.room(std::mem::size_of::<TraceRecord>() + piece.len()) {
                return;
            }
            self.last_insn = insn;
            self.records.push(TraceRecord {
                kind,
                hart,
                insn,
                pc,
                offset: offset + (i << 30) as u64,
                len: piece.len() as u32,
                data_at: self.data.len() as u64,
                calls: self.calls,
            });
            self.data.extend_from_slice(piece);
        }
    }

    /// Records a write no instruction made, charged to the context.
    pub fn push_write(&mut self, offset: u64, bytes: &[u8]) {
        let (hart, pc) = self.context;
        self.push_bytes(TraceKind::Write, hart, self.last_insn, pc, offset, bytes);
    }

    /// Records a synchronous write-back of the line at `offset`.
    pub fn push_sync(&mut self, offset: u64) {
        let (hart, pc) = self.context;
        self.push(TraceKind::Sync, hart, self.last_insn, pc, offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keep_their_bytes_and_order() {
        let mut t = PersistTrace::default();
        t.push_bytes(TraceKind::Store, 1, 10, 0x100, 64, &[1, 2, 3, 4]);
        t.push(TraceKind::Flush, 1, 11, 0x104, 64);
        t.set_context(0, 0x200);
        t.push_write(128, &[9; 16]);
        t.push(TraceKind::Fence, 1, 12, 0x108, 0);
        let r = t.records();
        assert_eq!(r.len(), 4);
        assert_eq!(t.bytes_of(&r[0]), &[1, 2, 3, 4]);
        assert_eq!((r[1].kind, r[1].offset), (TraceKind::Flush, 64));
        // A write no instruction made takes the context and the last count.
        assert_eq!((r[2].hart, r[2].pc, r[2].insn), (0, 0x200, 11));
        assert_eq!(t.bytes_of(&r[2]), &[9; 16]);
        assert_eq!(r[3].kind, TraceKind::Fence);
        assert!(!t.truncated());
    }

    #[test]
    fn call_stacks_are_kept_once_and_named_by_records() {
        let mut t = PersistTrace::default();
        t.push(TraceKind::Fence, 0, 1, 0x100, 0);
        t.set_calls(&[0x10, 0x20]);
        t.push(TraceKind::Fence, 0, 2, 0x100, 0);
        t.set_calls(&[0x10, 0x30]);
        t.push(TraceKind::Fence, 0, 3, 0x100, 0);
        t.set_calls(&[0x10, 0x20]);
        t.push(TraceKind::Flush, 0, 4, 0x104, 64);
        t.set_calls(&[]);
        t.push(TraceKind::Fence, 0, 5, 0x100, 0);
        let calls: Vec<u32> = t.records().iter().map(|r| r.calls).collect();
        assert_eq!(calls, [0, 1, 2, 1, 0]);
        assert_eq!(t.stacks().len(), 2);
        assert_eq!(&*t.stacks()[1], &[0x10, 0x30]);
    }
}
