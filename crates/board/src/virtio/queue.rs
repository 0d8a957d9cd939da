//! Split virtqueues (virtio 1.2 §2.7) as the device side sees them: take
//! descriptor chains from the available ring, return them on the used ring.
//!
//! Everything the driver wrote is checked before use: ring indices, queue
//! size, descriptor indices, chain length (which bounds loops), indirect
//! tables and the device-readable-before-device-writable order. A violation
//! is a [`QueueError`], which the transport turns into DEVICE_NEEDS_RESET.

use crate::guest_mem::{GuestMemory, GuestMemoryExt, MemoryFault};

/// The largest queue size offered (QueueNumMax).
pub const QUEUE_MAX: u16 = 256;
/// The largest indirect table accepted, in descriptors (the spec's largest
/// queue size).
const INDIRECT_MAX: u64 = 32768;

const DESC_F_NEXT: u16 = 1;
const DESC_F_WRITE: u16 = 2;
const DESC_F_INDIRECT: u16 = 4;
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};

const AVAIL_F_NO_INTERRUPT: u16 = 1;

/// Why a queue (or a request on it) cannot be processed: the driver broke
/// the protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// A ring, descriptor table or buffer lies outside guest RAM.
    #[error(transparent)]
    Memory(#[from] MemoryFault),
    /// QueueNum is zero, above QueueNumMax or not a power of two.
    #[error("queue size {0} is not a power of two in 1..={QUEUE_MAX}")]
    Size(u16),
    /// The available index moved by more than the queue size.
    #[error("available index {avail} is more than the queue size ahead of {last}")]
    AvailIndex {
        /// The index the driver published.
        avail: u16,
        /// The last index the device consumed.
        last: u16,
    },
    /// A descriptor index beyond its table.
    #[error("descriptor index {index} outside a table of {size}")]
    Index {
        /// The index.
        index: u64,
        /// The table's size.
        size: u64,
    },
    /// A chain longer than its table: a loop.
    #[error("descriptor chain longer than its table (a loop)")]
    Loop,
    /// An indirect descriptor that is empty, of a size not a multiple of
    /// 16, too large, nested, or chained with NEXT.
    #[error("malformed indirect descriptor")]
    Indirect,
    /// A device-readable descriptor after a device-writable one.
    #[error("device-readable descriptor after a device-writable one")]
    Order,
    /// A request the device cannot parse (missing header or status byte).
    #[error("malformed request: {0}")]
    Request(&'static str),
}

/// One buffer of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Desc {
    /// Guest physical address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u32,
}

/// A descriptor chain taken from the available ring: its head index and its
/// buffers, device-readable ones first.
#[derive(Clone, Debug, Default)]
pub struct Chain {
    /// Index of the head descriptor (what the used ring returns).
    pub head: u16,
    descs: Vec<Desc>,
    readable: usize,
}

impl Chain {
    /// The device-readable buffers.
    pub fn readable(&self) -> &[Desc] {
        &self.descs[..self.readable]
    }

    /// The device-writable buffers.
    pub fn writable(&self) -> &[Desc] {
        &self.descs[self.readable..]
    }
}

/// Total bytes of `descs`.
pub fn total_len(descs: &[Desc]) -> u64 {
    descs.iter().map(|d| u64::from(d.len)).sum()
}

/// A position in a list of buffers, to read or write them as one byte
/// stream.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    descs: &'a [Desc],
    offset: u64,
}

impl<'a> Cursor<'a> {
    /// At the first byte of `descs`.
    pub fn new(descs: &'a [Desc]) -> Cursor<'a> {
        Cursor { descs, offset: 0 }
    }

    /// Bytes left.
    pub fn remaining(&self) -> u64 {
        total_len(self.descs) - self.offset
    }

    /// The guest address and length of the next contiguous piece, at most
    /// `max` bytes, advancing past it; `None` at the end.
    fn next_piece(&mut self, max: u64) -> Option<(u64, u64)> {
        while let Some((d, rest)) = self.descs.split_first() {
            let left = u64::from(d.len) - self.offset;
            if left == 0 {
                self.descs = rest;
                self.offset = 0;
                continue;
            }
            let n = left.min(max);
            // `walk` refused buffers that wrap around the address space.
            let addr = d.addr + self.offset;
            self.offset += n;
            return Some((addr, n));
        }
        None
    }

    /// Reads up to `buf.len()` bytes; how many were read.
    pub fn read(&mut self, mem: &mut dyn GuestMemory, buf: &mut [u8]) -> Result<usize, QueueError> {
        let mut done = 0;
        while done < buf.len() {
            let Some((addr, n)) = self.next_piece((buf.len() - done) as u64) else {
                break;
            };
            let n = n as usize;
            mem.read(addr, &mut buf[done..done + n])?;
            done += n;
        }
        Ok(done)
    }

    /// Writes up to `data.len()` bytes; how many were written.
    pub fn write(&mut self, mem: &mut dyn GuestMemory, data: &[u8]) -> Result<usize, QueueError> {
        let mut done = 0;
        while done < data.len() {
            let Some((addr, n)) = self.next_piece((data.len() - done) as u64) else {
                break;
            };
            let n = n as usize;
            mem.write(addr, &data[done..done + n])?;
            done += n;
        }
        Ok(done)
    }

    /// Skips up to `n` bytes.
    pub fn skip(&mut self, mut n: u64) {
        while n > 0 {
            match self.next_piece(n) {
                Some((_, k)) => n -= k,
                None => break,
            }
        }
    }
}

/// One virtqueue's registers and the device's position in its rings.
#[derive(Clone, Debug, Default)]
pub struct Queue {
    /// QueueNum: the size the driver chose.
    pub size: u16,
    /// QueueReady.
    pub ready: bool,
    /// Descriptor table address.
    pub desc: u64,
    /// Driver (available) ring address.
    pub driver: u64,
    /// Device (used) ring address.
    pub device: u64,
    last_avail: u16,
    used_idx: u16,
    signal: bool,
}

impl Queue {
    fn check_size(&self) -> Result<u64, QueueError> {
        let n = self.size;
        if n == 0 || n > QUEUE_MAX || !n.is_power_of_two() {
            return Err(QueueError::Size(n));
        }
        Ok(u64::from(n))
    }

    /// Takes the next available chain, or `None` if the driver has made none
    /// available (or the queue is not ready).
    pub fn pop(&mut self, mem: &mut dyn GuestMemory) -> Result<Option<Chain>, QueueError> {
        if !self.ready {
            return Ok(None);
        }
        let size = self.check_size()?;
        let avail = mem.read_u16(self.driver.wrapping_add(2))?;
        let ahead = avail.wrapping_sub(self.last_avail);
        if ahead == 0 {
            return Ok(None);
        }
        if u64::from(ahead) > size {
            return Err(QueueError::AvailIndex {
                avail,
                last: self.last_avail,
            });
        }
        let slot = u64::from(self.last_avail) % size;
        let head = mem.read_u16(self.driver.wrapping_add(4 + 2 * slot))?;
        let chain = self.walk(mem, head, size)?;
        self.last_avail = self.last_avail.wrapping_add(1);
        Ok(Some(chain))
    }

    /// Follows the chain from `head`.
    fn walk(&self, mem: &mut dyn GuestMemory, head: u16, size: u64) -> Result<Chain, QueueError> {
        let mut chain = Chain {
            head,
            ..Chain::default()
        };
        let (mut table, mut entries, mut indirect) = (self.desc, size, false);
        let mut index = u64::from(head);
        let mut seen = 0;
        loop {
            if index >= entries {
                return Err(QueueError::Index {
                    index,
                    size: entries,
                });
            }
            seen += 1;
            if seen > entries {
                return Err(QueueError::Loop);
            }
            let mut raw = [0u8; 16];
            mem.read(table.wrapping_add(16 * index), &mut raw)?;
            let addr = u64::from_le_bytes(raw[0..8].try_into().expect("8 bytes"));
            let len = u32::from_le_bytes(raw[8..12].try_into().expect("4 bytes"));
            let flags = u16::from_le_bytes([raw[12], raw[13]]);
            let next = u16::from_le_bytes([raw[14], raw[15]]);
            if flags & DESC_F_INDIRECT != 0 {
                let n = u64::from(len) / 16;
                if indirect
                    || flags & DESC_F_NEXT != 0
                    || len == 0
                    || len % 16 != 0
                    || n > INDIRECT_MAX
                {
                    return Err(QueueError::Indirect);
                }
                (table, entries, indirect) = (addr, n, true);
                (index, seen) = (0, 0);
                continue;
            }
            if addr.checked_add(u64::from(len)).is_none() {
                return Err(MemoryFault {
                    paddr: addr,
                    len: u64::from(len),
                }
                .into());
            }
            let desc = Desc { addr, len };
            if flags & DESC_F_WRITE != 0 {
                chain.descs.push(desc);
            } else if chain.descs.len() == chain.readable {
                chain.descs.push(desc);
                chain.readable += 1;
            } else {
                return Err(QueueError::Order);
            }
            if flags & DESC_F_NEXT == 0 {
                return Ok(chain);
            }
            index = u64::from(next);
        }
    }

    /// Returns chain `head` to the driver with `len` bytes written into it,
    /// and notes whether the driver wants an interrupt for it.
    pub fn push_used(
        &mut self,
        mem: &mut dyn GuestMemory,
        head: u16,
        len: u32,
    ) -> Result<(), QueueError> {
        let size = self.check_size()?;
        let slot = u64::from(self.used_idx) % size;
        let mut elem = [0u8; 8];
        elem[..4].copy_from_slice(&u32::from(head).to_le_bytes());
        elem[4..].copy_from_slice(&len.to_le_bytes());
        mem.write(self.device.wrapping_add(4 + 8 * slot), &elem)?;
        self.used_idx = self.used_idx.wrapping_add(1);
        mem.write_u16(self.device.wrapping_add(2), self.used_idx)?;
        let flags = mem.read_u16(self.driver)?;
        self.signal |= flags & AVAIL_F_NO_INTERRUPT == 0;
        Ok(())
    }

    /// Whether used buffers were returned that the driver wants an
    /// interrupt for, since the last call.
    pub fn take_signal(&mut self) -> bool {
        std::mem::take(&mut self.signal)
    }
}

/// The driver's set-up (size, ready, ring addresses) and the device's
/// indices.
impl Checkpointable for Queue {
    fn save(&self, w: &mut StateWriter) {
        w.u16(self.size);
        w.bool(self.ready);
        w.u64(self.desc);
        w.u64(self.driver);
        w.u64(self.device);
        w.u16(self.last_avail);
        w.u16(self.used_idx);
        w.bool(self.signal);
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        self.size = r.u16()?;
        self.ready = r.bool()?;
        self.desc = r.u64()?;
        self.driver = r.u64()?;
        self.device = r.u64()?;
        self.last_avail = r.u16()?;
        self.used_idx = r.u16()?;
        self.signal = r.bool()?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::guest_mem::fake::FakeMem;

    pub const RAM: u64 = 0x8000_0000;
    pub const DESC: u64 = RAM;
    pub const AVAIL: u64 = RAM + 0x1000;
    pub const USED: u64 = RAM + 0x2000;

    /// A driver side for tests: writes descriptors and rings by hand.
    pub struct Driver {
        pub size: u16,
        pub avail_idx: u16,
        pub used_seen: u16,
    }

    impl Driver {
        pub fn new(size: u16) -> Driver {
            Driver {
                size,
                avail_idx: 0,
                used_seen: 0,
            }
        }

        pub fn queue(&self) -> Queue {
            Queue {
                size: self.size,
                ready: true,
                desc: DESC,
                driver: AVAIL,
                device: USED,
                ..Queue::default()
            }
        }

        pub fn desc(
            mem: &mut FakeMem,
            table: u64,
            i: u16,
            addr: u64,
            len: u32,
            flags: u16,
            next: u16,
        ) {
            let mut raw = [0u8; 16];
            raw[0..8].copy_from_slice(&addr.to_le_bytes());
            raw[8..12].copy_from_slice(&len.to_le_bytes());
            raw[12..14].copy_from_slice(&flags.to_le_bytes());
            raw[14..16].copy_from_slice(&next.to_le_bytes());
            mem.put(table + 16 * u64::from(i), &raw);
        }

        /// Writes a chain of `(addr, len, writable)` buffers at descriptor
        /// `first` onwards and makes it available.
        pub fn offer(&mut self, mem: &mut FakeMem, first: u16, bufs: &[(u64, u32, bool)]) {
            for (k, &(addr, len, w)) in bufs.iter().enumerate() {
                let i = first + k as u16;
                let mut flags = if w { DESC_F_WRITE } else { 0 };
                if k + 1 < bufs.len() {
                    flags |= DESC_F_NEXT;
                }
                Self::desc(mem, DESC, i, addr, len, flags, i + 1);
            }
            self.publish(mem, first);
        }

        /// Makes the chain at `head` available.
        pub fn publish(&mut self, mem: &mut FakeMem, head: u16) {
            let slot = u64::from(self.avail_idx % self.size);
            mem.put(AVAIL + 4 + 2 * slot, &head.to_le_bytes());
            self.avail_idx = self.avail_idx.wrapping_add(1);
            mem.put(AVAIL + 2, &self.avail_idx.to_le_bytes());
        }

        /// The next used element `(id, len)`, if any.
        pub fn used(&mut self, mem: &mut FakeMem) -> Option<(u32, u32)> {
            let idx = u16::from_le_bytes(mem.get(USED + 2, 2).try_into().unwrap());
            if idx == self.used_seen {
                return None;
            }
            let slot = u64::from(self.used_seen % self.size);
            let e = mem.get(USED + 4 + 8 * slot, 8);
            self.used_seen = self.used_seen.wrapping_add(1);
            Some((
                u32::from_le_bytes(e[..4].try_into().unwrap()),
                u32::from_le_bytes(e[4..].try_into().unwrap()),
            ))
        }
    }

    #[test]
    fn chains_split_into_readable_and_writable() {
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut d = Driver::new(8);
        let mut q = d.queue();
        assert!(q.pop(&mut mem).unwrap().is_none());
        d.offer(
            &mut mem,
            2,
            &[
                (RAM + 0x4000, 3, false),
                (RAM + 0x5000, 5, true),
                (RAM + 0x6000, 1, true),
            ],
        );
        let c = q.pop(&mut mem).unwrap().unwrap();
        assert_eq!(c.head, 2);
        assert_eq!(
            c.readable(),
            &[Desc {
                addr: RAM + 0x4000,
                len: 3
            }]
        );
        assert_eq!(total_len(c.writable()), 6);
        let mut w = Cursor::new(c.writable());
        assert_eq!(w.write(&mut mem, b"abcdefgh").unwrap(), 6);
        assert_eq!(mem.get(RAM + 0x5000, 5), b"abcde");
        assert_eq!(mem.get(RAM + 0x6000, 1), b"f");
        q.push_used(&mut mem, c.head, 6).unwrap();
        assert!(q.take_signal());
        assert!(!q.take_signal());
        assert_eq!(d.used(&mut mem), Some((2, 6)));
        assert!(q.pop(&mut mem).unwrap().is_none());
    }

    #[test]
    fn no_interrupt_flag_suppresses_the_signal() {
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut d = Driver::new(4);
        let mut q = d.queue();
        mem.put(AVAIL, &AVAIL_F_NO_INTERRUPT.to_le_bytes());
        d.offer(&mut mem, 0, &[(RAM + 0x4000, 1, true)]);
        let c = q.pop(&mut mem).unwrap().unwrap();
        q.push_used(&mut mem, c.head, 1).unwrap();
        assert!(!q.take_signal());
    }

    #[test]
    fn indirect_tables() {
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut d = Driver::new(4);
        let mut q = d.queue();
        let table = RAM + 0x3000;
        Driver::desc(&mut mem, table, 0, RAM + 0x4000, 16, DESC_F_NEXT, 1);
        Driver::desc(&mut mem, table, 1, RAM + 0x5000, 1, DESC_F_WRITE, 0);
        Driver::desc(&mut mem, DESC, 0, table, 32, DESC_F_INDIRECT, 0);
        d.publish(&mut mem, 0);
        let c = q.pop(&mut mem).unwrap().unwrap();
        assert_eq!(c.readable().len(), 1);
        assert_eq!(
            c.writable(),
            &[Desc {
                addr: RAM + 0x5000,
                len: 1
            }]
        );
    }

    fn first_error(setup: impl FnOnce(&mut FakeMem, &mut Driver)) -> QueueError {
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut d = Driver::new(4);
        let mut q = d.queue();
        setup(&mut mem, &mut d);
        q.pop(&mut mem).unwrap_err()
    }

    #[test]
    fn malformed_chains_are_errors_not_panics() {
        // A loop: 0 → 1 → 0.
        let e = first_error(|m, d| {
            Driver::desc(m, DESC, 0, RAM, 1, DESC_F_NEXT, 1);
            Driver::desc(m, DESC, 1, RAM, 1, DESC_F_NEXT, 0);
            d.publish(m, 0);
        });
        assert_eq!(e, QueueError::Loop);
        // A next index beyond the table.
        let e = first_error(|m, d| {
            Driver::desc(m, DESC, 0, RAM, 1, DESC_F_NEXT, 9);
            d.publish(m, 0);
        });
        assert_eq!(e, QueueError::Index { index: 9, size: 4 });
        // A head index beyond the table.
        let e = first_error(|m, d| d.publish(m, 4));
        assert_eq!(e, QueueError::Index { index: 4, size: 4 });
        // Readable after writable.
        let e = first_error(|m, d| d.offer(m, 0, &[(RAM, 1, true), (RAM, 1, false)]));
        assert_eq!(e, QueueError::Order);
        // Nested indirect, and indirect with NEXT.
        let e = first_error(|m, d| {
            Driver::desc(m, RAM + 0x3000, 0, RAM + 0x3000, 16, DESC_F_INDIRECT, 0);
            Driver::desc(m, DESC, 0, RAM + 0x3000, 16, DESC_F_INDIRECT, 0);
            d.publish(m, 0);
        });
        assert_eq!(e, QueueError::Indirect);
        let e = first_error(|m, d| {
            Driver::desc(
                m,
                DESC,
                0,
                RAM + 0x3000,
                16,
                DESC_F_INDIRECT | DESC_F_NEXT,
                1,
            );
            d.publish(m, 0);
        });
        assert_eq!(e, QueueError::Indirect);
        // A loop inside an indirect table.
        let e = first_error(|m, d| {
            Driver::desc(m, RAM + 0x3000, 0, RAM, 1, DESC_F_NEXT, 1);
            Driver::desc(m, RAM + 0x3000, 1, RAM, 1, DESC_F_NEXT, 0);
            Driver::desc(m, DESC, 0, RAM + 0x3000, 32, DESC_F_INDIRECT, 0);
            d.publish(m, 0);
        });
        assert_eq!(e, QueueError::Loop);
        // An available index too far ahead.
        let e = first_error(|m, _| m.put(AVAIL + 2, &9u16.to_le_bytes()));
        assert_eq!(e, QueueError::AvailIndex { avail: 9, last: 0 });
        // A ring outside RAM.
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut q = Driver::new(4).queue();
        q.driver = 0x1000;
        assert!(matches!(q.pop(&mut mem), Err(QueueError::Memory(_))));
        // A size that is not a power of two.
        q.size = 3;
        assert_eq!(q.pop(&mut mem).unwrap_err(), QueueError::Size(3));
    }

    #[test]
    fn cursor_reads_across_buffers_and_faults_outside_ram() {
        let mut mem = FakeMem::new(RAM, 0x100);
        mem.put(RAM, b"0123456789");
        let descs = [
            Desc { addr: RAM, len: 2 },
            Desc {
                addr: RAM + 5,
                len: 5,
            },
        ];
        let mut c = Cursor::new(&descs);
        c.skip(1);
        let mut b = [0u8; 4];
        assert_eq!(c.read(&mut mem, &mut b).unwrap(), 4);
        assert_eq!(&b, b"1567");
        assert_eq!(c.remaining(), 2);
        let bad = [Desc {
            addr: RAM + 0xf0,
            len: 0x20,
        }];
        let mut c = Cursor::new(&bad);
        let mut b = [0u8; 0x20];
        assert!(matches!(
            c.read(&mut mem, &mut b),
            Err(QueueError::Memory(_))
        ));
    }

    #[test]
    fn a_checkpoint_restores_the_rings_and_indices() {
        use rvnvmm_checkpoint::Sections;
        let mut mem = FakeMem::new(RAM, 0x10000);
        let mut d = Driver::new(8);
        let mut q = d.queue();
        d.offer(&mut mem, 0, &[(RAM + 0x8000, 16, true)]);
        d.publish(&mut mem, 0);
        let chain = q.pop(&mut mem).unwrap().unwrap();
        q.push_used(&mut mem, chain.head, 16).unwrap();
        let mut s = Sections::new();
        s.save("q", &q);
        let mut back = Queue::default();
        s.restore("q", &mut back).unwrap();
        assert_eq!(format!("{back:?}"), format!("{q:?}"));
    }
}
