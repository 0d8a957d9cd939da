//! virtio-rng (§5.4), deterministic: the bytes come from a seeded
//! xoshiro256** generator, so a run with the same seed and the same
//! requests sees the same "entropy". The stream is a byte stream (how the
//! guest splits its requests does not change it) and is not restarted by a
//! device reset.

use super::queue::{Cursor, Queue, QueueError};
use super::VirtioDevice;
use crate::guest_mem::GuestMemory;
use rvnvmm_checkpoint::{CheckpointError, StateReader, StateWriter};

/// xoshiro256** (Blackman and Vigna), seeded through SplitMix64.
#[derive(Clone, Debug)]
pub struct Prng {
    s: [u64; 4],
    spare: [u8; 8],
    spare_len: usize,
}

impl Prng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Prng {
        let mut x = seed;
        let mut splitmix = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Prng {
            s: [splitmix(), splitmix(), splitmix(), splitmix()],
            spare: [0; 8],
            spare_len: 0,
        }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Fills `buf` with the next bytes of the stream (each output is used
    /// little-endian, leftovers saved for the next call).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            if self.spare_len == 0 {
                self.spare = self.next_u64().to_le_bytes();
                self.spare_len = 8;
            }
            *b = self.spare[8 - self.spare_len];
            self.spare_len -= 1;
        }
    }
}

/// A virtio entropy device.
#[derive(Clone, Debug)]
pub struct Entropy {
    prng: Prng,
}

impl Entropy {
    /// An entropy device whose output is determined by `seed`.
    pub fn new(seed: u64) -> Entropy {
        Entropy {
            prng: Prng::new(seed),
        }
    }
}

impl VirtioDevice for Entropy {
    fn device_id(&self) -> u32 {
        4
    }

    fn features(&self) -> u64 {
        0
    }

    fn queue_count(&self) -> usize {
        1
    }

    fn read_config(&self, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        self.save_state(w);
        Ok(())
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        self.restore_state(r)
    }

    fn process(
        &mut self,
        queues: &mut [Queue],
        _notified: u32,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        let q = &mut queues[0];
        let mut buf = [0u8; 4096];
        while let Some(chain) = q.pop(mem)? {
            // Device-readable buffers have no meaning here: ignored.
            let mut out = Cursor::new(chain.writable());
            let mut written = 0u64;
            while out.remaining() > 0 {
                let n = out.remaining().min(buf.len() as u64) as usize;
                self.prng.fill(&mut buf[..n]);
                out.write(mem, &buf[..n])?;
                written += n as u64;
            }
            q.push_used(mem, chain.head, u32::try_from(written).unwrap_or(u32::MAX))?;
        }
        Ok(())
    }
}

impl Entropy {
    /// The generator's state: a restored device goes on with the same
    /// bytes.
    fn save_state(&self, w: &mut StateWriter) {
        w.u64s(&self.prng.s);
        w.bytes(&self.prng.spare);
        w.u8(self.prng.spare_len as u8);
    }

    fn restore_state(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        r.u64s_into(&mut self.prng.s, "generator words")?;
        self.prng.spare = r
            .bytes(8)?
            .try_into()
            .map_err(|_| r.malformed("a spare word of another size"))?;
        self.prng.spare_len = match r.u8()? {
            n @ 0..=8 => usize::from(n),
            n => return Err(r.malformed(format!("{n} spare bytes"))),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::queue::tests::{Driver, RAM};
    use super::super::tests::{init, notify, ram};
    use super::super::VirtioMmio;
    use super::*;

    /// Draws `sizes` requests from a fresh device seeded with `seed`.
    fn draw(seed: u64, sizes: &[u32]) -> Vec<u8> {
        let mut t = VirtioMmio::new(Box::new(Entropy::new(seed)));
        init(&mut t, 1, 8);
        let mut mem = ram();
        let mut d = Driver::new(8);
        let mut all = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            d.offer(&mut mem, k as u16 % 8, &[(RAM + 0x10000, n, true)]);
            notify(&mut t, 0);
            t.service(&mut mem);
            assert_eq!(d.used(&mut mem).map(|u| u.1), Some(n));
            all.extend(mem.get(RAM + 0x10000, n as usize));
        }
        all
    }

    #[test]
    fn same_seed_same_bytes_however_requested() {
        let a = draw(42, &[64, 64]);
        assert_eq!(a, draw(42, &[3, 100, 25]));
        assert_ne!(a, draw(43, &[128]));
        assert!(a.iter().any(|&b| b != 0));
    }

    #[test]
    fn prng_matches_reference_outputs() {
        // xoshiro256** from state {1, 2, 3, 4} (the reference C code).
        let mut p = Prng::new(0);
        p.s = [1, 2, 3, 4];
        let v: Vec<u64> = (0..3).map(|_| p.next_u64()).collect();
        assert_eq!(v, [11520, 0, 1509978240]);
    }

    #[test]
    fn a_checkpoint_goes_on_with_the_same_bytes() {
        use rvnvmm_checkpoint::{StateReader, StateWriter};
        let mut e = Entropy::new(7);
        let mut first = [0u8; 13];
        e.prng.fill(&mut first);
        let mut w = StateWriter::new();
        e.save_state(&mut w);
        let bytes = w.into_bytes();
        let mut back = Entropy::new(0);
        back.restore_state(&mut StateReader::new("rng", &bytes))
            .unwrap();
        let (mut a, mut b) = ([0u8; 29], [0u8; 29]);
        e.prng.fill(&mut a);
        back.prng.fill(&mut b);
        assert_eq!(a, b);
        assert!(back
            .restore_state(&mut StateReader::new("rng", &bytes[..40]))
            .is_err());
    }
}
