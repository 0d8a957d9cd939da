//! virtio-console (§5.3) with one port and no optional features: queue 0
//! receives (host input to the guest), queue 1 transmits.

use super::queue::{total_len, Cursor, Queue, QueueError};
use super::VirtioDevice;
use crate::guest_mem::GuestMemory;
use crate::input::InputQueue;
use std::io::Write;

const RECEIVEQ: usize = 0;
const TRANSMITQ: usize = 1;

/// A virtio console port.
pub struct Console {
    out: Box<dyn Write + Send>,
    out_buf: Vec<u8>,
    input: InputQueue,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console").finish_non_exhaustive()
    }
}

impl Console {
    /// A console writing to `out` and reading from `input`.
    pub fn new(out: Box<dyn Write + Send>, input: InputQueue) -> Console {
        Console {
            out,
            out_buf: Vec::new(),
            input,
        }
    }
}

impl VirtioDevice for Console {
    fn device_id(&self) -> u32 {
        3
    }

    fn features(&self) -> u64 {
        0
    }

    fn queue_count(&self) -> usize {
        2
    }

    fn read_config(&self, _offset: u64, data: &mut [u8]) {
        // cols, rows, max_nr_ports, emerg_wr: meaningless without the
        // features that announce them.
        data.fill(0);
    }

    fn process(
        &mut self,
        queues: &mut [Queue],
        _notified: u32,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        let tx = &mut queues[TRANSMITQ];
        while let Some(chain) = tx.pop(mem)? {
            let mut data = Cursor::new(chain.readable());
            // In pieces: a length is only known to be real once read.
            let mut buf = [0u8; 4096];
            loop {
                let n = data.read(mem, &mut buf)?;
                if n == 0 {
                    break;
                }
                self.out_buf.extend_from_slice(&buf[..n]);
            }
            tx.push_used(mem, chain.head, 0)?;
        }
        let rx = &mut queues[RECEIVEQ];
        while !self.input.is_empty() {
            let Some(chain) = rx.pop(mem)? else { break };
            let room = total_len(chain.writable()).min(usize::MAX as u64) as usize;
            let bytes = self.input.pop(room);
            Cursor::new(chain.writable()).write(mem, &bytes)?;
            rx.push_used(mem, chain.head, bytes.len() as u32)?;
        }
        Ok(())
    }

    fn wants_service(&self) -> bool {
        !self.input.is_empty()
    }

    fn flush(&mut self) {
        if !self.out_buf.is_empty() {
            // A closed host stdout must not stop the guest.
            let _ = self.out.write_all(&self.out_buf);
            let _ = self.out.flush();
            self.out_buf.clear();
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::super::queue::tests::{Driver, AVAIL, DESC, RAM, USED};
    use super::super::tests::{ack, init, notify, ram};
    use super::super::VirtioMmio;
    use super::*;
    use crate::uart::tests::Captured;

    #[test]
    fn transmit_and_receive() {
        let out = Captured::default();
        let input = InputQueue::new();
        let mut t = VirtioMmio::new(Box::new(Console::new(Box::new(out.clone()), input.clone())));
        assert_eq!(t.load(0x008, 4), Some(3));
        init(&mut t, 2, 8);
        let mut mem = ram();

        // Transmit: queue 1's rings are 0x4000 above queue 0's.
        let mut tx = Driver::new(8);
        mem.put(RAM + 0x10000, b"hello, ");
        mem.put(RAM + 0x10100, b"world\n");
        let shift = 0x4000;
        for (k, (addr, len)) in [(RAM + 0x10000, 7u32), (RAM + 0x10100, 6)]
            .into_iter()
            .enumerate()
        {
            let k = k as u16;
            Driver::desc(&mut mem, DESC + shift, k, addr, len, 0, 0);
            let slot = u64::from(tx.avail_idx % 8);
            mem.put(AVAIL + shift + 4 + 2 * slot, &k.to_le_bytes());
            tx.avail_idx += 1;
            mem.put(AVAIL + shift + 2, &tx.avail_idx.to_le_bytes());
        }
        notify(&mut t, 1);
        t.service(&mut mem);
        assert_eq!(out.0.lock().unwrap().as_slice(), b"hello, world\n");
        assert_eq!(mem.get(USED + shift + 2, 2), [2, 0]);
        assert_eq!(ack(&mut t), 1);

        // Receive: buffers wait for input, input waits for buffers.
        let mut rx = Driver::new(8);
        rx.offer(&mut mem, 0, &[(RAM + 0x20000, 4, true)]);
        notify(&mut t, 0);
        t.service(&mut mem);
        assert_eq!(rx.used(&mut mem), None);
        input.push(b"abcdef");
        assert!(t.needs_service());
        t.service(&mut mem);
        assert_eq!(rx.used(&mut mem), Some((0, 4)));
        assert_eq!(mem.get(RAM + 0x20000, 4), b"abcd");
        assert!(t.needs_service(), "two bytes still wait");
        t.service(&mut mem);
        assert_eq!(rx.used(&mut mem), None);
        rx.offer(&mut mem, 1, &[(RAM + 0x20100, 16, true)]);
        t.service(&mut mem);
        assert_eq!(rx.used(&mut mem), Some((1, 2)));
        assert_eq!(mem.get(RAM + 0x20100, 2), b"ef");
        assert!(!t.needs_service());
    }
}
