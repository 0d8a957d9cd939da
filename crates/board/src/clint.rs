//! The core-local interruptor (SiFive CLINT layout, the ACLINT MSWI and
//! MTIMER devices back to back, as QEMU `virt` maps them).
//!
//! | offset | register | width |
//! |---|---|---|
//! | 0x0000 + 4·h | `msip` of hart h (bit 0; the rest reads 0) | 32 |
//! | 0x4000 + 8·h | `mtimecmp` of hart h | 64, or 32-bit halves |
//! | 0xbff8 | `mtime` | 64, or 32-bit halves |
//!
//! `mtime` is derived from simulated time: `mtime = now_ns · timebase / 1e9
//! + offset`, where a store to `mtime` only changes the offset. The CLINT
//! holds no clock of its own; every query takes the caller's `now_ns`.

/// Bytes of the CLINT's register window.
pub const CLINT_SIZE: u64 = 0x1_0000;
const MTIMECMP: u64 = 0x4000;
const MTIME: u64 = 0xbff8;
/// The most harts the layout has room for (`mtimecmp` registers below
/// `mtime`).
pub const MAX_HARTS: usize = ((MTIME - MTIMECMP) / 8) as usize;

/// The CLINT of `harts` harts.
use rvnvmm_checkpoint::{CheckpointError, Checkpointable, StateReader, StateWriter};

/// The CLINT of `harts` harts.
#[derive(Clone, Debug)]
pub struct Clint {
    timebase_hz: u64,
    offset: u64,
    msip: Vec<bool>,
    mtimecmp: Vec<u64>,
    /// Per hart: software interrupts raised (`msip` 0 -> 1), kept across
    /// resets. Every inter-processor interrupt goes this way (OpenSBI's
    /// IPI and remote-fence calls write `msip`).
    ipis: Vec<u64>,
    ipis_sent: Vec<u64>,
}

impl Clint {
    /// A CLINT for `harts` harts whose `mtime` counts at `timebase_hz`.
    pub fn new(harts: usize, timebase_hz: u64) -> Clint {
        assert!(timebase_hz > 0, "timebase must be non-zero");
        Clint {
            timebase_hz,
            offset: 0,
            msip: vec![false; harts],
            // No timer interrupt until software programs one (the spec
            // leaves the reset value open; all ones is the quiet choice).
            mtimecmp: vec![u64::MAX; harts],
            ipis: vec![0; harts],
            ipis_sent: vec![0; harts],
        }
    }

    /// The `mtime` frequency.
    pub fn timebase_hz(&self) -> u64 {
        self.timebase_hz
    }

    /// Back to the reset state (`mtime` restarts from the time base).
    pub fn reset(&mut self) {
        let ipis = std::mem::take(&mut self.ipis);
        let sent = std::mem::take(&mut self.ipis_sent);
        *self = Clint::new(self.msip.len(), self.timebase_hz);
        self.ipis = ipis;
        self.ipis_sent = sent;
    }

    /// Software interrupts raised for hart `hart` since the board was
    /// built (reboots included).
    pub fn ipis_received(&self, hart: usize) -> u64 {
        self.ipis[hart]
    }

    /// Software interrupts hart `hart`'s stores raised (for any hart)
    /// since the board was built.
    pub fn ipis_sent(&self, hart: usize) -> u64 {
        self.ipis_sent[hart]
    }

    fn ticks(&self, now_ns: u64) -> u64 {
        // A 64-bit division while the product fits (a 128-bit one is a
        // library call, and this runs on every turn); the same result.
        match now_ns.checked_mul(self.timebase_hz) {
            Some(p) => p / 1_000_000_000,
            None => (u128::from(now_ns) * u128::from(self.timebase_hz) / 1_000_000_000) as u64,
        }
    }

    /// `mtime` at simulated time `now_ns`: what the `time` CSR reads too.
    pub fn mtime(&self, now_ns: u64) -> u64 {
        self.ticks(now_ns).wrapping_add(self.offset)
    }

    /// Sets `mtime` to `value` at time `now_ns`.
    pub fn set_mtime(&mut self, now_ns: u64, value: u64) {
        self.offset = value.wrapping_sub(self.ticks(now_ns));
    }

    /// Hart `hart`'s `mtimecmp`.
    pub fn mtimecmp(&self, hart: usize) -> u64 {
        self.mtimecmp[hart]
    }

    /// Hart `hart`'s `mtimecmp` on the time base's own scale (without the
    /// offset a store to `mtime` set): MTIP is pending once `now_ns ·
    /// timebase / 1e9` reaches it. What a hart that compares its own
    /// `time` CSR with the comparator needs. `u64::MAX` never fires.
    pub fn mtimecmp_ticks(&self, hart: usize) -> u64 {
        match self.mtimecmp[hart] {
            u64::MAX => u64::MAX,
            cmp => cmp.saturating_sub(self.offset),
        }
    }

    /// Whether hart `hart`'s machine timer interrupt (MTIP) is pending.
    pub fn mtip(&self, hart: usize, now_ns: u64) -> bool {
        self.mtime(now_ns) >= self.mtimecmp[hart]
    }

    /// Whether hart `hart`'s machine software interrupt (MSIP) is pending.
    pub fn msip(&self, hart: usize) -> bool {
        self.msip[hart]
    }

    /// The earliest simulated time, not before `now_ns`, at which hart
    /// `hart`'s MTIP is pending, or `None` if never (within `u64` ns). A
    /// hart waiting in WFI may skip ahead to it.
    pub fn next_timer_ns(&self, hart: usize, now_ns: u64) -> Option<u64> {
        let now = self.mtime(now_ns);
        let cmp = self.mtimecmp[hart];
        if now >= cmp {
            return Some(now_ns);
        }
        // The first t with ticks(t) >= ticks(now_ns) + (cmp - now).
        let target = u128::from(self.ticks(now_ns)) + u128::from(cmp - now);
        let tb = u128::from(self.timebase_hz);
        let t = (target * 1_000_000_000).div_ceil(tb);
        u64::try_from(t).ok()
    }

    /// The earliest [`Clint::next_timer_ns`] over all harts.
    pub fn next_event_ns(&self, now_ns: u64) -> Option<u64> {
        (0..self.msip.len())
            .filter_map(|h| self.next_timer_ns(h, now_ns))
            .min()
    }

    /// A load at `offset`; `None` for an access fault.
    pub fn load(&self, offset: u64, size: u64, now_ns: u64) -> Option<u64> {
        let (base, word) = self.word(offset, size)?;
        let value = match base {
            Reg::Msip(h) => u64::from(self.msip[h]),
            Reg::Mtimecmp(h) => self.mtimecmp[h],
            Reg::Mtime => self.mtime(now_ns),
        };
        Some(extract(value, offset - word, size))
    }

    /// A store at `offset` by hart `from` (`None`: not a hart's); `false`
    /// for an access fault.
    pub fn store(
        &mut self,
        offset: u64,
        size: u64,
        value: u64,
        now_ns: u64,
        from: Option<usize>,
    ) -> bool {
        let Some((reg, word)) = self.word(offset, size) else {
            return false;
        };
        let shift = offset - word;
        match reg {
            Reg::Msip(h) => {
                let raised = value & 1 != 0;
                let new_ipi = u64::from(raised && !self.msip[h]);
                self.ipis[h] += new_ipi;
                if let Some(sent) = from.and_then(|f| self.ipis_sent.get_mut(f)) {
                    *sent += new_ipi;
                }
                self.msip[h] = raised;
            }
            Reg::Mtimecmp(h) => self.mtimecmp[h] = insert(self.mtimecmp[h], value, shift, size),
            Reg::Mtime => {
                let v = insert(self.mtime(now_ns), value, shift, size);
                self.set_mtime(now_ns, v);
            }
        }
        true
    }

    /// The register an access falls in and the register's offset; 32- and
    /// 64-bit accesses, naturally aligned, inside one register.
    fn word(&self, offset: u64, size: u64) -> Option<(Reg, u64)> {
        if !matches!(size, 4 | 8) || !offset.is_multiple_of(size) {
            return None;
        }
        let harts = self.msip.len() as u64;
        if offset < MTIMECMP {
            let h = offset / 4;
            return (size == 4 && h < harts).then_some((Reg::Msip(h as usize), offset));
        }
        if offset >= MTIME {
            return (offset < MTIME + 8).then_some((Reg::Mtime, MTIME));
        }
        let h = (offset - MTIMECMP) / 8;
        (h < harts).then_some((Reg::Mtimecmp(h as usize), MTIMECMP + 8 * h))
    }
}

#[derive(Clone, Copy)]
enum Reg {
    Msip(usize),
    Mtimecmp(usize),
    Mtime,
}

/// `size` bytes of `value` from byte `shift` on.
fn extract(value: u64, shift: u64, size: u64) -> u64 {
    let v = value >> (shift * 8);
    if size == 8 {
        v
    } else {
        v & ((1 << (size * 8)) - 1)
    }
}

/// `value` written over `size` bytes of `old` from byte `shift` on.
fn insert(old: u64, value: u64, shift: u64, size: u64) -> u64 {
    if size == 8 {
        return value;
    }
    let mask = ((1u64 << (size * 8)) - 1) << (shift * 8);
    (old & !mask) | ((value << (shift * 8)) & mask)
}

/// `mtime`'s offset, `msip`, `mtimecmp` and the IPI counters; the hart
/// count and time base are the machine's.
impl Checkpointable for Clint {
    fn save(&self, w: &mut StateWriter) {
        w.u64(self.offset);
        w.bytes(&self.msip.iter().map(|&b| u8::from(b)).collect::<Vec<_>>());
        w.u64s(&self.mtimecmp);
        w.u64s(&self.ipis);
        w.u64s(&self.ipis_sent);
    }

    fn restore(&mut self, r: &mut StateReader<'_>) -> Result<(), CheckpointError> {
        let harts = self.msip.len();
        self.offset = r.u64()?;
        let msip = r.bytes(harts)?;
        if msip.len() != harts || msip.iter().any(|&b| b > 1) {
            return Err(r.malformed("msip of another hart count"));
        }
        self.msip = msip.iter().map(|&b| b == 1).collect();
        r.u64s_into(&mut self.mtimecmp, "mtimecmp registers")?;
        r.u64s_into(&mut self.ipis, "IPI counters")?;
        r.u64s_into(&mut self.ipis_sent, "IPI counters")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB: u64 = 10_000_000;

    #[test]
    fn mtimecmp_on_the_time_base_scale_ignores_the_mtime_offset() {
        let mut c = Clint::new(1, TB);
        assert_eq!(c.mtimecmp_ticks(0), u64::MAX, "never fires at reset");
        assert!(c.store(MTIMECMP, 8, 500, 0, None));
        assert_eq!(c.mtimecmp_ticks(0), 500);
        // mtime set 100 ticks ahead of the time base: the comparator is
        // reached 100 ticks earlier on the harts' `time` scale.
        c.set_mtime(0, 100);
        assert_eq!(c.mtimecmp_ticks(0), 400);
        assert!(!c.mtip(0, 39_999) && c.mtip(0, 40_000));
        assert!(c.store(MTIMECMP, 8, 50, 0, None));
        assert_eq!(c.mtimecmp_ticks(0), 0, "already due");
        assert!(c.store(MTIMECMP, 8, u64::MAX, 0, None));
        assert_eq!(c.mtimecmp_ticks(0), u64::MAX);
    }

    #[test]
    fn mtime_follows_simulated_time_and_can_be_set() {
        let mut c = Clint::new(2, TB);
        assert_eq!(c.load(MTIME, 8, 1_000_000), Some(10_000));
        assert_eq!(c.mtime(250), 2);
        assert!(c.store(MTIME, 8, 500, 1_000_000, None));
        assert_eq!(c.mtime(1_000_000), 500);
        assert_eq!(c.mtime(2_000_000), 10_500);
        // The high half alone.
        assert!(c.store(MTIME + 4, 4, 1, 2_000_000, None));
        assert_eq!(c.load(MTIME + 4, 4, 2_000_000), Some(1));
        assert_eq!(c.load(MTIME, 4, 2_000_000), Some(10_500));
    }

    #[test]
    fn timer_compare_raises_mtip_per_hart() {
        let mut c = Clint::new(2, TB);
        assert!(!c.mtip(0, 1 << 40));
        assert_eq!(c.next_event_ns(0), None);
        assert!(c.store(MTIMECMP + 8, 8, 1000, 0, None));
        assert!(!c.mtip(1, 99_999));
        assert!(c.mtip(1, 100_000));
        assert!(!c.mtip(0, 100_000));
        assert_eq!(c.next_timer_ns(1, 5), Some(100_000));
        assert_eq!(c.next_timer_ns(1, 200_000), Some(200_000));
        assert_eq!(c.next_event_ns(0), Some(100_000));
        // 32-bit halves: the low word, then the high word.
        assert!(c.store(MTIMECMP, 4, 7, 0, None));
        assert_eq!(c.mtimecmp(0), 0xffff_ffff_0000_0007);
        assert!(c.store(MTIMECMP + 4, 4, 0, 0, None));
        assert_eq!(c.load(MTIMECMP, 8, 0), Some(7));
        assert_eq!(c.next_timer_ns(0, 0), Some(700));
        assert_eq!(c.next_event_ns(0), Some(700));
    }

    #[test]
    fn next_timer_rounds_up_to_the_tick() {
        // 3 Hz: tick 1 begins at 333_333_334 ns.
        let mut c = Clint::new(1, 3);
        c.store(MTIMECMP, 8, 1, 0, None);
        let t = c.next_timer_ns(0, 0).unwrap();
        assert_eq!(t, 333_333_334);
        assert!(c.mtip(0, t) && !c.mtip(0, t - 1));
    }

    #[test]
    fn msip_is_one_bit_per_hart() {
        let mut c = Clint::new(2, TB);
        assert!(c.store(4, 4, 0xffff_ffff, 0, None));
        assert!(c.msip(1) && !c.msip(0));
        // Raising a raised msip again is not another interrupt.
        assert!(c.store(4, 4, 1, 0, None));
        assert_eq!((c.ipis_received(0), c.ipis_received(1)), (0, 1));
        assert_eq!(c.load(4, 4, 0), Some(1));
        assert!(c.store(4, 4, 0, 0, None));
        assert!(!c.msip(1));
        // The sender is counted when the store names one.
        assert!(c.store(4, 4, 1, 0, Some(0)));
        assert!(c.store(4, 4, 1, 0, Some(0)), "already raised");
        assert_eq!(
            (c.ipis_sent(0), c.ipis_sent(1), c.ipis_received(1)),
            (1, 0, 2)
        );
        // Beyond the harts, misaligned or 64-bit msip: access faults.
        assert!(!c.store(8, 4, 1, 0, None));
        assert_eq!(c.load(2, 4, 0), None);
        assert_eq!(c.load(0, 8, 0), None);
        assert_eq!(c.load(MTIMECMP + 16, 8, 0), None);
        assert_eq!(c.load(0, 1, 0), None);
    }

    #[test]
    fn a_checkpoint_restores_the_timer_and_software_interrupts() {
        use rvnvmm_checkpoint::Sections;
        let mut c = Clint::new(3, 10_000_000);
        c.set_mtime(1_000, 77);
        c.mtimecmp[1] = 500;
        c.msip[2] = true;
        c.ipis[2] = 4;
        c.ipis_sent[0] = 4;
        let mut s = Sections::new();
        s.save("clint", &c);
        let mut back = Clint::new(3, 10_000_000);
        s.restore("clint", &mut back).unwrap();
        assert_eq!(format!("{back:?}"), format!("{c:?}"));
        assert_eq!(back.mtime(5_000), c.mtime(5_000));
        // Another hart count, or a cut section, is an error.
        let mut other = Clint::new(2, 10_000_000);
        assert!(s.restore("clint", &mut other).is_err());
        let bytes = s.get("clint").unwrap();
        let mut cut = Sections::new();
        cut.insert("clint", bytes[..bytes.len() - 3].to_vec());
        assert!(cut
            .restore("clint", &mut Clint::new(3, 10_000_000))
            .is_err());
    }
}
