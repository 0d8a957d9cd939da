//! A timing model for the hart's unit tests: it records every call the
//! hart makes and answers from a set of resident lines.

use crate::{ControlPort, CoreId, DataAccess, FlushKind, TimingModel, TlbFlush};
use rvnvmm_timing::{filter_index, FilterTables, FILTER_ENTRIES};
use std::cell::Cell;
use std::collections::BTreeSet;

/// One call the hart made on the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    Data(CoreId, DataAccess),
    Fetch(CoreId, u64),
    PageWalk(CoreId, u64),
    TlbFlush(CoreId, TlbFlush),
    Satp(CoreId, u64),
    FlushLine(CoreId, u64, FlushKind),
    FlushL1d(CoreId),
}

/// Lines of `1 << data_shift` / `1 << fetch_shift` bytes. A line is
/// resident once the full model has seen it, if `remember` is set; a
/// resident line is a filter hit and a private hit. Every full-model call
/// costs `stall` cycles. The lines the model remembers also go into its
/// filter tables ([`TimingModel::data_filter_tables`]), a subset of
/// `data_lines` (a table slot keeps the latest line).
pub(crate) struct FakeModel {
    pub data_shift: u32,
    pub fetch_shift: u32,
    pub remember: bool,
    pub stall: u64,
    pub calls: Vec<Call>,
    pub data_lines: BTreeSet<u64>,
    pub fetch_lines: BTreeSet<u64>,
    /// The filter table of remembered data lines (for loads and stores).
    table: Box<[u64; FILTER_ENTRIES]>,
    /// The filter table of remembered fetch lines.
    fetch_table: Box<[u64; FILTER_ENTRIES]>,
    /// Hits counted through the tables: (loads, stores, fetches).
    pub table_hits: Box<[Cell<u64>; 3]>,
}

impl FakeModel {
    /// A model that forgets: every access reaches it.
    pub fn new(data_shift: u32, fetch_shift: u32) -> FakeModel {
        FakeModel {
            data_shift,
            fetch_shift,
            remember: false,
            stall: 0,
            calls: Vec::new(),
            data_lines: BTreeSet::new(),
            fetch_lines: BTreeSet::new(),
            table: Box::new([u64::MAX; FILTER_ENTRIES]),
            fetch_table: Box::new([u64::MAX; FILTER_ENTRIES]),
            table_hits: Box::new([Cell::new(0), Cell::new(0), Cell::new(0)]),
        }
    }

    /// Forgets the fetched lines (every fetch reaches the model again).
    pub fn forget_fetches(&mut self) {
        self.fetch_lines.clear();
        self.fetch_table.fill(u64::MAX);
    }

    /// The line addresses of the fetches recorded.
    pub fn fetches(&self) -> Vec<u64> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Fetch(_, pa) => Some(*pa),
                _ => None,
            })
            .collect()
    }

    /// The data accesses recorded.
    pub fn data(&self) -> Vec<DataAccess> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::Data(_, a) => Some(*a),
                _ => None,
            })
            .collect()
    }

    /// The PTE addresses page walks read.
    pub fn page_walks(&self) -> Vec<u64> {
        self.calls
            .iter()
            .filter_map(|c| match c {
                Call::PageWalk(_, pa) => Some(*pa),
                _ => None,
            })
            .collect()
    }
}

impl TimingModel for FakeModel {
    fn data_line_shift(&self) -> u32 {
        self.data_shift
    }
    fn fetch_line_shift(&self) -> u32 {
        self.fetch_shift
    }
    fn data_filter_hit(&self, _: CoreId, paddr: u64, _: bool) -> bool {
        self.data_lines.contains(&(paddr >> self.data_shift))
    }
    fn data_private_hit(&self, core: CoreId, paddr: u64, write: bool) -> bool {
        self.data_filter_hit(core, paddr, write)
    }
    fn data_access(&mut self, core: CoreId, access: DataAccess, _: u64) -> u64 {
        let line = access.paddr >> self.data_shift;
        assert_eq!(
            (access.paddr + access.size - 1) >> self.data_shift,
            line,
            "{access:?} crosses a line"
        );
        self.calls.push(Call::Data(core, access));
        if self.remember {
            self.data_lines.insert(line);
            self.table[filter_index(line)] = line;
        }
        self.stall
    }
    fn filter_tables(&self, _: CoreId) -> Option<FilterTables> {
        Some(FilterTables {
            read: self.table.as_ptr(),
            write: self.table.as_ptr(),
            read_hits: self.table_hits[0].as_ptr(),
            write_hits: self.table_hits[1].as_ptr(),
            data_shift: u64::from(self.data_shift),
            fetch: self.fetch_table.as_ptr(),
            fetch_hits: self.table_hits[2].as_ptr(),
            fetch_shift: u64::from(self.fetch_shift),
        })
    }
    fn fetch_filter_hit(&self, _: CoreId, paddr: u64) -> bool {
        self.fetch_lines.contains(&(paddr >> self.fetch_shift))
    }
    fn fetch_private_hit(&self, core: CoreId, paddr: u64) -> bool {
        self.fetch_filter_hit(core, paddr)
    }
    fn fetch(&mut self, core: CoreId, paddr: u64, _: u64) -> u64 {
        self.calls.push(Call::Fetch(core, paddr));
        if self.remember {
            self.fetch_lines.insert(paddr >> self.fetch_shift);
            self.fetch_table[filter_index(paddr >> self.fetch_shift)] = paddr >> self.fetch_shift;
        }
        self.stall
    }
    fn page_walk_read(&mut self, core: CoreId, pte_paddr: u64, _: u64) -> u64 {
        self.calls.push(Call::PageWalk(core, pte_paddr));
        0
    }
    fn tlb_flush(&mut self, core: CoreId, flush: TlbFlush) {
        self.calls.push(Call::TlbFlush(core, flush));
    }
    fn satp_write(&mut self, core: CoreId, satp: u64) {
        self.calls.push(Call::Satp(core, satp));
    }
    fn flush_line(&mut self, core: CoreId, paddr: u64, kind: FlushKind, _: u64) -> u64 {
        self.calls.push(Call::FlushLine(core, paddr, kind));
        0
    }
    fn flush_l1d(&mut self, core: CoreId, _: u64) -> u64 {
        self.calls.push(Call::FlushL1d(core));
        0
    }
    fn control_port(&mut self) -> Option<&mut dyn ControlPort> {
        None
    }
}
