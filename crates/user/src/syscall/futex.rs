//! The futex system call.

use crate::errno::*;
use crate::process::{Process, ThreadState};

// The operations (linux/futex.h), less FUTEX_PRIVATE_FLAG (128), which
// changes nothing for one process.
const FUTEX_WAIT: u32 = 0;
const FUTEX_WAKE: u32 = 1;
const FUTEX_REQUEUE: u32 = 3;
const FUTEX_CMP_REQUEUE: u32 = 4;
const FUTEX_WAKE_OP: u32 = 5;
const FUTEX_WAIT_BITSET: u32 = 9;
const FUTEX_WAKE_BITSET: u32 = 10;
const FUTEX_CLOCK_REALTIME: u64 = 256;

pub(super) fn sign_extend12(v: u32) -> i32 {
    ((v << 20) as i32) >> 20
}

impl Process {
    pub(super) fn sys_futex(&mut self, a: [u64; 6]) -> Option<i64> {
        let (uaddr, op, val) = (a[0], a[1] as u32 & 0x7f, a[2] as u32);
        let realtime = a[1] & FUTEX_CLOCK_REALTIME != 0;
        let i = self.threads.current;
        let block = |p: &mut Process, bitset: u32, deadline: Option<u64>| -> Option<i64> {
            match p.read_u32(uaddr) {
                Err(e) => Some(-e),
                Ok(cur) if cur != val => Some(-EAGAIN),
                Ok(_) => {
                    if bitset == 0 {
                        return Some(-EINVAL);
                    }
                    p.threads.all[i].state = ThreadState::Futex {
                        addr: uaddr,
                        bitset,
                        deadline,
                    };
                    p.threads.all[i].hart.x[10] = 0;
                    None
                }
            }
        };
        match op {
            FUTEX_WAIT | FUTEX_WAIT_BITSET => {
                let deadline = if a[3] != 0 {
                    let s = match self.read_u64(a[3]) {
                        Ok(v) => v,
                        Err(e) => return Some(-e),
                    };
                    let ns = self.read_u64(a[3] + 8).unwrap_or(0);
                    let t = s.saturating_mul(1_000_000_000).saturating_add(ns);
                    Some(if op == FUTEX_WAIT {
                        self.now_ns() + t
                    } else if realtime {
                        t.saturating_sub(self.opts.epoch_secs * 1_000_000_000)
                    } else {
                        t
                    })
                } else {
                    None
                };
                let bitset = if op == FUTEX_WAIT_BITSET {
                    a[5] as u32
                } else {
                    u32::MAX
                };
                block(self, bitset, deadline)
            }
            FUTEX_WAKE => Some(self.futex_wake(uaddr, val as u64, u32::MAX) as i64),
            FUTEX_WAKE_BITSET => Some(self.futex_wake(uaddr, val as u64, a[5] as u32) as i64),
            FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
                if op == FUTEX_CMP_REQUEUE {
                    match self.read_u32(uaddr) {
                        Err(e) => return Some(-e),
                        Ok(cur) if cur != a[5] as u32 => return Some(-EAGAIN),
                        _ => {}
                    }
                }
                let woken = self.futex_wake(uaddr, val as u64, u32::MAX);
                let mut moved = 0;
                for t in self.threads.all.iter_mut() {
                    if moved >= a[3] {
                        break;
                    }
                    if let ThreadState::Futex { addr, .. } = &mut t.state {
                        if *addr == uaddr {
                            *addr = a[4];
                            moved += 1;
                        }
                    }
                }
                Some((woken + moved) as i64)
            }
            FUTEX_WAKE_OP => {
                let (uaddr2, encoded) = (a[4], a[5] as u32);
                let old = match self.read_u32(uaddr2) {
                    Ok(v) => v,
                    Err(e) => return Some(-e),
                };
                let opnum = (encoded >> 28) & 7;
                let cmp = (encoded >> 24) & 15;
                let mut oparg = (encoded >> 12) & 0xfff;
                let cmparg = encoded & 0xfff;
                if encoded & (8 << 28) != 0 {
                    oparg = 1 << (oparg & 31);
                }
                let new = match opnum {
                    0 => oparg,
                    1 => old.wrapping_add(oparg),
                    2 => old | oparg,
                    3 => old & !oparg,
                    _ => old ^ oparg,
                };
                if let Err(e) = self.write_u32(uaddr2, new) {
                    return Some(-e);
                }
                let mut n = self.futex_wake(uaddr, val as u64, u32::MAX);
                let (o, c) = (old as i32, sign_extend12(cmparg));
                let hit = match cmp {
                    0 => o == c,
                    1 => o != c,
                    2 => o < c,
                    3 => o <= c,
                    4 => o > c,
                    _ => o >= c,
                };
                if hit {
                    n += self.futex_wake(uaddr2, a[3], u32::MAX);
                }
                Some(n as i64)
            }
            _ => {
                self.warn_once(
                    2 << 32 | op as u64,
                    &format!("unsupported futex operation {op} returns ENOSYS"),
                );
                Some(-ENOSYS)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    const WAIT: u64 = FUTEX_WAIT as u64;
    const WAKE: u64 = FUTEX_WAKE as u64;

    #[test]
    fn wait_checks_the_value_and_wake_counts_waiters() {
        let mut p = process();
        let word = scratch(&mut p, 8);
        p.write_u32(word, 5).unwrap();
        assert_eq!(
            p.sys_futex([word, WAIT, 4, 0, 0, 0]),
            Some(-EAGAIN),
            "value changed"
        );
        assert_eq!(p.sys_futex([WILD, WAIT, 5, 0, 0, 0]), Some(-EFAULT));
        assert_eq!(
            p.sys_futex([word, WAKE, 1, 0, 0, 0]),
            Some(0),
            "nobody waits"
        );
        assert_eq!(
            p.sys_futex([word, WAIT, 5, 0, 0, 0]),
            None,
            "the thread blocks"
        );
        assert!(matches!(
            p.threads.all[0].state,
            ThreadState::Futex { addr, bitset: u32::MAX, deadline: None } if addr == word
        ));
        assert_eq!(p.sys_futex([word, WAKE, 1, 0, 0, 0]), Some(1));
        assert_eq!(p.threads.all[0].state, ThreadState::Runnable);
        assert_eq!(p.sys_futex([word, 99, 0, 0, 0, 0]), Some(-ENOSYS));
    }
}
