//! virtio-blk (§5.2) backed by a raw image file.
//!
//! Writes go to the file with `pwrite` as each request is processed, so no
//! guest data is held in emulator memory: once a request completes, its
//! data is in the host's page cache and survives the emulator exiting
//! however it exits; `VIRTIO_BLK_T_FLUSH` calls `fsync` for durability
//! against host crashes too. The capacity is the file's length in 512-byte
//! sectors (a partial last sector is not visible).
//!
//! A device made with [`Block::open_overlay`] (a machine that is
//! checkpointed or restored, `docs/checkpoints.md`) never writes its image:
//! the sectors written are kept in memory over it, and a checkpoint saves
//! them with the device's state.

use super::queue::{total_len, Chain, Cursor, Queue, QueueError, QUEUE_MAX};
use super::VirtioDevice;
use crate::guest_mem::GuestMemory;
use rvnvmm_checkpoint::{CheckpointError, StateReader, StateWriter};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Feature bit: `seg_max` is valid.
pub const F_SEG_MAX: u64 = 1 << 2;
/// Feature bit: the device is read-only.
pub const F_RO: u64 = 1 << 5;
/// Feature bit: the flush command exists.
pub const F_FLUSH: u64 = 1 << 9;

const T_IN: u32 = 0;
const T_OUT: u32 = 1;
const T_FLUSH: u32 = 4;
const T_GET_ID: u32 = 8;
const S_OK: u8 = 0;
const S_IOERR: u8 = 1;
const S_UNSUPP: u8 = 2;
const SECTOR: u64 = 512;
const ID_BYTES: usize = 20;
/// Host I/O is done in pieces of at most this many bytes.
const CHUNK: usize = 64 * 1024;

/// The sectors written since a device was made, by sector number, when
/// they are kept over the image instead of written to it.
type Overlay = BTreeMap<u64, Box<[u8; SECTOR as usize]>>;

/// A virtio block device.
#[derive(Debug)]
pub struct Block {
    file: File,
    sectors: u64,
    read_only: bool,
    id: [u8; ID_BYTES],
    /// With [`Block::open_overlay`]: the sectors written, kept over the
    /// image (which is opened read-only).
    overlay: Option<Overlay>,
}

impl Block {
    /// Opens the raw image at `path` (read-write unless `read_only`).
    ///
    /// The image is a regular file or a block device; anything else (a
    /// character device such as `/dev/zero`, a FIFO, a directory) is refused
    /// without waiting on it.
    pub fn open(path: &Path, read_only: bool) -> io::Result<Block> {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        let meta = file.metadata()?;
        let kind = meta.file_type();
        if !kind.is_file() && !kind.is_block_device() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "it is {}, not a disk image file or block device",
                    rvnvmm_config::files::describe(&meta)
                ),
            ));
        }
        Block::from_file(file, read_only)
    }

    /// Opens the raw image at `path` as the base of an overlay: the guest
    /// may write the disk, but the sectors it writes are kept in memory
    /// (and saved in checkpoints, [`VirtioDevice::save`]), and the image
    /// is opened read-only and never changed.
    pub fn open_overlay(path: &Path) -> io::Result<Block> {
        let mut b = Block::open(path, true)?;
        b.read_only = false;
        b.overlay = Some(Overlay::new());
        Ok(b)
    }

    /// Bytes of the sectors kept over the image (0 without an overlay).
    pub fn overlay_bytes(&self) -> u64 {
        self.overlay.as_ref().map_or(0, |o| o.len() as u64 * SECTOR)
    }

    /// A device on an open image file. The file is locked (`flock`):
    /// exclusively when writable, shared when read-only, so two emulators
    /// cannot write one image at once.
    pub fn from_file(file: File, read_only: bool) -> io::Result<Block> {
        let locked = if read_only {
            file.try_lock_shared()
        } else {
            file.try_lock()
        };
        if let Err(e) = locked {
            return Err(match e {
                std::fs::TryLockError::WouldBlock => io::Error::new(
                    io::ErrorKind::ResourceBusy,
                    "the disk image is in use by another process",
                ),
                std::fs::TryLockError::Error(e) => e,
            });
        }
        // A block device's metadata length is 0: its size is where it ends.
        let bytes = std::io::Seek::seek(&mut &file, std::io::SeekFrom::End(0))?;
        let sectors = bytes / SECTOR;
        Ok(Block {
            file,
            sectors,
            read_only,
            id: *b"rvnvmm-blk\0\0\0\0\0\0\0\0\0\0",
            overlay: None,
        })
    }

    /// Sets the serial number `VIRTIO_BLK_T_GET_ID` returns (at most 20
    /// bytes; shorter ones are NUL-padded).
    pub fn with_id(mut self, id: &str) -> Block {
        self.id = [0; ID_BYTES];
        let n = id.len().min(ID_BYTES);
        self.id[..n].copy_from_slice(&id.as_bytes()[..n]);
        self
    }

    /// Capacity in 512-byte sectors.
    pub fn sectors(&self) -> u64 {
        self.sectors
    }

    /// Whether the bytes `[sector·512, +len)` are a whole number of sectors
    /// inside the disk.
    fn in_range(&self, sector: u64, len: u64) -> bool {
        len.is_multiple_of(SECTOR)
            && sector
                .checked_add(len / SECTOR)
                .is_some_and(|end| end <= self.sectors)
    }

    /// One request: returns the bytes written into the chain.
    fn request(&mut self, chain: &Chain, mem: &mut dyn GuestMemory) -> Result<u32, QueueError> {
        let mut readable = Cursor::new(chain.readable());
        let mut header = [0u8; 16];
        if readable.read(mem, &mut header)? < header.len() {
            return Err(QueueError::Request(
                "virtio-blk header shorter than 16 bytes",
            ));
        }
        let kind = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
        let sector = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
        let writable_len = total_len(chain.writable());
        if writable_len == 0 {
            return Err(QueueError::Request(
                "virtio-blk request without a status byte",
            ));
        }
        // All device-writable bytes but the last (the status) are data.
        let data_len = writable_len - 1;
        let mut data_in = Cursor::new(chain.writable());
        let (status, written) = match kind {
            T_IN if self.in_range(sector, data_len) => {
                match self.read_into(sector * SECTOR, data_len, &mut data_in, mem)? {
                    Ok(()) => (S_OK, data_len),
                    Err(_) => (S_IOERR, data_len),
                }
            }
            T_OUT if !self.read_only && self.in_range(sector, readable.remaining()) => {
                match self.write_from(sector * SECTOR, &mut readable, mem)? {
                    Ok(()) => (S_OK, 0),
                    Err(_) => (S_IOERR, 0),
                }
            }
            T_IN | T_OUT => (S_IOERR, 0),
            // The overlay is in memory: nothing to make durable.
            T_FLUSH if self.overlay.is_some() => (S_OK, 0),
            T_FLUSH => match self.file.sync_all() {
                Ok(()) => (S_OK, 0),
                Err(_) => (S_IOERR, 0),
            },
            T_GET_ID => {
                let n = data_len.min(ID_BYTES as u64) as usize;
                data_in.write(mem, &self.id[..n])?;
                (S_OK, n as u64)
            }
            _ => (S_UNSUPP, 0),
        };
        let mut status_at = Cursor::new(chain.writable());
        status_at.skip(data_len);
        status_at.write(mem, &[status])?;
        // A chain may hold more than 4 GiB; the used length saturates.
        Ok(u32::try_from(written + 1).unwrap_or(u32::MAX))
    }

    /// Reads `len` bytes of the image at `pos` into the guest buffers. The
    /// outer error is the guest's fault, the inner one the host's.
    fn read_into(
        &self,
        pos: u64,
        len: u64,
        out: &mut Cursor<'_>,
        mem: &mut dyn GuestMemory,
    ) -> Result<io::Result<()>, QueueError> {
        let mut buf = vec![0u8; CHUNK.min(len as usize)];
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK as u64) as usize;
            if let Err(e) = self.file.read_exact_at(&mut buf[..n], pos + done) {
                return Ok(Err(e));
            }
            if let Some(overlay) = &self.overlay {
                // `pos` and the chunks are whole sectors (`in_range`).
                let first = (pos + done) / SECTOR;
                for (s, data) in overlay.range(first..first + n as u64 / SECTOR) {
                    let at = ((s - first) * SECTOR) as usize;
                    buf[at..at + SECTOR as usize].copy_from_slice(&data[..]);
                }
            }
            out.write(mem, &buf[..n])?;
            done += n as u64;
        }
        Ok(Ok(()))
    }

    /// Writes the rest of the readable buffers (whole sectors,
    /// `in_range`) to the image at `pos`, or over it.
    fn write_from(
        &mut self,
        pos: u64,
        data: &mut Cursor<'_>,
        mem: &mut dyn GuestMemory,
    ) -> Result<io::Result<()>, QueueError> {
        let mut buf = vec![0u8; CHUNK.min(data.remaining() as usize)];
        let mut done = 0;
        loop {
            let n = data.read(mem, &mut buf)?;
            if n == 0 {
                return Ok(Ok(()));
            }
            if let Some(overlay) = self.overlay.as_mut() {
                // `Cursor::read` fills the buffer until the chain ends, so
                // every piece is whole sectors.
                let first = (pos + done) / SECTOR;
                for (i, data) in buf[..n].chunks_exact(SECTOR as usize).enumerate() {
                    let sector: [u8; SECTOR as usize] = data.try_into().expect("a sector");
                    overlay.insert(first + i as u64, Box::new(sector));
                }
            } else if let Err(e) = self.file.write_all_at(&buf[..n], pos + done) {
                return Ok(Err(e));
            }
            done += n as u64;
        }
    }
}

impl VirtioDevice for Block {
    fn device_id(&self) -> u32 {
        2
    }

    fn features(&self) -> u64 {
        F_SEG_MAX | F_FLUSH | if self.read_only { F_RO } else { 0 }
    }

    fn queue_count(&self) -> usize {
        1
    }

    fn read_config(&self, offset: u64, data: &mut [u8]) {
        // capacity (le64), size_max (le32), seg_max (le32); the rest 0.
        let mut config = [0u8; 24];
        config[0..8].copy_from_slice(&self.sectors.to_le_bytes());
        config[12..16].copy_from_slice(&(u32::from(QUEUE_MAX) - 2).to_le_bytes());
        config_bytes(&config, offset, data);
    }

    /// The sectors written since the boot (the overlay); a disk written
    /// through to its image cannot be saved.
    fn save(&self, w: &mut StateWriter) -> Result<(), CheckpointError> {
        let Some(overlay) = &self.overlay else {
            return Err(CheckpointError::Unsupported(
                "a disk written through to its image (only a disk opened as an overlay)".into(),
            ));
        };
        w.u64(self.sectors);
        w.u64s(&overlay.keys().copied().collect::<Vec<_>>());
        let data: Vec<u8> = overlay.values().flat_map(|s| s.iter().copied()).collect();
        w.deflated(&data);
        Ok(())
    }

    /// Reads back what [`Block::save`] wrote, over this device's image
    /// (which the caller checked is the checkpoint's).
    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let Some(overlay) = self.overlay.as_mut() else {
            return Err(r.malformed("a disk overlay for a disk written through to its image"));
        };
        let sectors = r.u64()?;
        if sectors != self.sectors {
            return Err(r.malformed(format!(
                "a disk of {sectors} sectors, the image has {}",
                self.sectors
            )));
        }
        let written = r.u64s(usize::MAX)?;
        if let Some(s) = written.iter().find(|&&s| s >= self.sectors) {
            return Err(r.malformed(format!("sector {s} written on a disk of {sectors}")));
        }
        if written.windows(2).any(|p| p[0] >= p[1]) {
            return Err(r.malformed("the written sectors are not in order"));
        }
        let data = r.inflated(written.len().saturating_mul(SECTOR as usize))?;
        if data.len() != written.len() * SECTOR as usize {
            return Err(r.malformed("the written sectors' data is of another length"));
        }
        overlay.clear();
        for (s, bytes) in written.iter().zip(data.chunks_exact(SECTOR as usize)) {
            overlay.insert(*s, Box::new(bytes.try_into().expect("a sector")));
        }
        Ok(())
    }

    fn process(
        &mut self,
        queues: &mut [Queue],
        _notified: u32,
        mem: &mut dyn GuestMemory,
    ) -> Result<(), QueueError> {
        let q = &mut queues[0];
        while let Some(chain) = q.pop(mem)? {
            let written = self.request(&chain, mem)?;
            q.push_used(mem, chain.head, written)?;
        }
        Ok(())
    }
}

/// Copies the configuration bytes at `offset` into `data`, zeros beyond.
pub(super) fn config_bytes(config: &[u8], offset: u64, data: &mut [u8]) {
    for (i, b) in data.iter_mut().enumerate() {
        *b = usize::try_from(offset)
            .ok()
            .and_then(|o| config.get(o + i))
            .copied()
            .unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::super::queue::tests::{Driver, RAM};
    use super::super::tests::{ack, init, notify, ram};
    use super::super::{status, VirtioMmio};
    use super::*;
    use crate::guest_mem::fake::FakeMem;
    use std::path::PathBuf;

    /// A temporary image file, removed on drop.
    pub struct TempImage(pub PathBuf);

    impl TempImage {
        pub fn new(name: &str, contents: &[u8]) -> TempImage {
            let path = std::env::temp_dir()
                .join(format!("rvnvmm-board-{}-{name}.img", std::process::id()));
            std::fs::write(&path, contents).unwrap();
            TempImage(path)
        }
    }

    impl Drop for TempImage {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    const HDR: u64 = RAM + 0x10000;
    const DATA: u64 = RAM + 0x11000;
    const STATUS: u64 = RAM + 0x13000;

    fn header(mem: &mut FakeMem, kind: u32, sector: u64) {
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(&kind.to_le_bytes());
        h[8..].copy_from_slice(&sector.to_le_bytes());
        mem.put(HDR, &h);
    }

    fn device(img: &TempImage, read_only: bool) -> VirtioMmio {
        let mut t = VirtioMmio::new(Box::new(Block::open(&img.0, read_only).unwrap()));
        init(&mut t, 1, 16);
        t
    }

    /// Offers a three-part request and runs it; returns (used len, status).
    fn run(
        t: &mut VirtioMmio,
        mem: &mut FakeMem,
        d: &mut Driver,
        data: Option<(u32, bool)>,
    ) -> (u32, u8) {
        let mut bufs = vec![(HDR, 16, false)];
        if let Some((len, w)) = data {
            bufs.push((DATA, len, w));
        }
        bufs.push((STATUS, 1, true));
        mem.put(STATUS, &[0xff]);
        d.offer(mem, 0, &bufs);
        notify(t, 0);
        t.service(mem);
        assert_eq!(ack(t), 1);
        let (id, len) = d.used(mem).expect("request completed");
        assert_eq!(id, 0);
        (len, mem.get(STATUS, 1)[0])
    }

    #[test]
    fn reads_and_writes_reach_the_image_file() {
        let mut image: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
        image.extend_from_slice(&[0; 100]); // A partial sector: invisible.
        let img = TempImage::new("rw", &image);
        let mut t = device(&img, false);
        assert_eq!(t.load(0x100, 8), Some(8), "capacity in sectors");
        assert_eq!(t.load(0x10c, 4), Some(254), "seg_max");
        t.store(0x14, 4, 0);
        assert_eq!(t.load(0x10, 4), Some((1 << 28) | (1 << 9) | (1 << 2)));
        let mut mem = ram();
        let mut d = Driver::new(16);

        header(&mut mem, T_IN, 2);
        assert_eq!(
            run(&mut t, &mut mem, &mut d, Some((1024, true))),
            (1025, S_OK)
        );
        assert_eq!(mem.get(DATA, 1024), &image[1024..2048]);

        header(&mut mem, T_OUT, 7);
        mem.put(DATA, &[0xab; 512]);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((512, false))), (1, S_OK));
        let on_disk = std::fs::read(&img.0).unwrap();
        assert_eq!(
            &on_disk[3584..4096],
            &[0xab; 512],
            "the write is in the file"
        );
        assert_eq!(&on_disk[..3584], &image[..3584]);

        header(&mut mem, T_FLUSH, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, None), (1, S_OK));

        header(&mut mem, T_GET_ID, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((20, true))), (21, S_OK));
        assert_eq!(&mem.get(DATA, 11), b"rvnvmm-blk\0");
    }

    #[test]
    fn an_overlay_keeps_writes_off_the_image_and_checkpoints_them() {
        let image: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
        let img = TempImage::new("overlay", &image);
        let mut t = VirtioMmio::new(Box::new(Block::open_overlay(&img.0).unwrap()));
        init(&mut t, 1, 16);
        t.store(0x14, 4, 0);
        assert_eq!(
            t.load(0x10, 4),
            Some((1 << 28) | (1 << 9) | (1 << 2)),
            "writable: no F_RO"
        );
        let mut mem = ram();
        let mut d = Driver::new(16);
        header(&mut mem, T_OUT, 3);
        let written: Vec<u8> = (0..1024u32).map(|i| (i % 13) as u8 + 1).collect();
        mem.put(DATA, &written);
        assert_eq!(
            run(&mut t, &mut mem, &mut d, Some((1024, false))),
            (1, S_OK)
        );
        assert_eq!(
            std::fs::read(&img.0).unwrap(),
            image,
            "the image is unchanged"
        );
        header(&mut mem, T_FLUSH, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, None), (1, S_OK));

        // Reads see the written sectors over the image.
        let mut want = image[1024..3072].to_vec();
        want[512..1536].copy_from_slice(&written);
        header(&mut mem, T_IN, 2);
        assert_eq!(
            run(&mut t, &mut mem, &mut d, Some((2048, true))),
            (2049, S_OK)
        );
        assert_eq!(mem.get(DATA, 2048), &want[..]);

        // A device restored from a checkpoint over the same image reads
        // the same, and its queue goes on.
        let mut w = StateWriter::new();
        t.save(&mut w).unwrap();
        let saved = w.into_bytes();
        let mut again = VirtioMmio::new(Box::new(Block::open_overlay(&img.0).unwrap()));
        let mut r = StateReader::new("board", &saved);
        again.restore(&mut r).unwrap();
        r.finish().unwrap();
        mem.put(DATA, &[0; 2048]);
        header(&mut mem, T_IN, 2);
        assert_eq!(
            run(&mut again, &mut mem, &mut d, Some((2048, true))),
            (2049, S_OK)
        );
        assert_eq!(mem.get(DATA, 2048), &want[..]);

        // Over an image of another size: refused.
        let small = TempImage::new("overlay-small", &image[..4096]);
        let mut other = VirtioMmio::new(Box::new(Block::open_overlay(&small.0).unwrap()));
        let e = other
            .restore(&mut StateReader::new("board", &saved))
            .unwrap_err();
        assert!(e.to_string().contains("16 sectors, the image has 8"), "{e}");
        drop((t, again));
        // A disk written through to its image is not saved.
        let through = device(&img, false);
        let e = through.save(&mut StateWriter::new()).unwrap_err();
        assert!(e.to_string().contains("written through"), "{e}");
    }

    #[test]
    fn out_of_range_unaligned_and_unknown_requests_fail_cleanly() {
        let img = TempImage::new("range", &[0; 2048]);
        let mut t = device(&img, false);
        let mut mem = ram();
        let mut d = Driver::new(16);
        header(&mut mem, T_IN, 3);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((1024, true))).1, S_IOERR);
        header(&mut mem, T_OUT, u64::MAX);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((512, false))).1, S_IOERR);
        header(&mut mem, T_IN, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((100, true))).1, S_IOERR);
        header(&mut mem, 99, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, None), (1, S_UNSUPP));
        assert_eq!(t.status() & status::DEVICE_NEEDS_RESET, 0);
        assert_eq!(std::fs::read(&img.0).unwrap(), [0; 2048]);
    }

    #[test]
    fn read_only_images_refuse_writes() {
        let img = TempImage::new("ro", &[7; 1024]);
        let mut t = device(&img, true);
        t.store(0x14, 4, 0);
        assert_ne!(t.load(0x10, 4).unwrap() & F_RO, 0);
        let mut mem = ram();
        let mut d = Driver::new(16);
        header(&mut mem, T_OUT, 0);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((512, false))).1, S_IOERR);
        header(&mut mem, T_IN, 1);
        assert_eq!(run(&mut t, &mut mem, &mut d, Some((512, true))).1, S_OK);
        assert_eq!(mem.get(DATA, 512), [7; 512]);
        assert_eq!(std::fs::read(&img.0).unwrap(), [7; 1024]);
    }

    #[test]
    fn an_image_in_use_cannot_be_opened_for_writing() {
        let img = TempImage::new("lock", &[0; 512]);
        let first = Block::open(&img.0, false).unwrap();
        let e = Block::open(&img.0, false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ResourceBusy);
        assert!(Block::open(&img.0, true).is_err());
        drop(first);
        let ro = Block::open(&img.0, true).unwrap();
        assert!(Block::open(&img.0, true).is_ok(), "readers share");
        assert!(Block::open(&img.0, false).is_err());
        drop(ro);
    }

    #[test]
    fn requests_without_header_or_status_need_reset() {
        let img = TempImage::new("bad", &[0; 1024]);
        for bufs in [
            vec![(HDR, 8, false), (STATUS, 1, true)],
            vec![(HDR, 16, false)],
        ] {
            let mut t = device(&img, false);
            let mut mem = ram();
            let mut d = Driver::new(16);
            header(&mut mem, T_IN, 0);
            d.offer(&mut mem, 0, &bufs);
            notify(&mut t, 0);
            t.service(&mut mem);
            assert_ne!(t.status() & status::DEVICE_NEEDS_RESET, 0);
            assert!(matches!(t.error(), Some(QueueError::Request(_))));
        }
    }

    #[test]
    fn data_buffer_outside_ram_needs_reset() {
        let img = TempImage::new("dma", &[0; 1024]);
        let mut t = device(&img, false);
        let mut mem = ram();
        let mut d = Driver::new(16);
        header(&mut mem, T_IN, 0);
        d.offer(
            &mut mem,
            0,
            &[(HDR, 16, false), (0x4000, 512, true), (STATUS, 1, true)],
        );
        notify(&mut t, 0);
        t.service(&mut mem);
        assert_ne!(t.status() & status::DEVICE_NEEDS_RESET, 0);
        assert!(matches!(t.error(), Some(QueueError::Memory(_))));
    }
}
