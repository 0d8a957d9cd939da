//! NUMA system calls: set_mempolicy, get_mempolicy, mbind, move_pages,
//! migrate_pages and set_mempolicy_home_node, with Linux 6.12's arguments,
//! checks and errors (mm/mempolicy.c, mm/migrate.c). The policies are
//! `crate::numa`'s; the pages move in `vm/migrate.rs`.

use crate::errno::*;
use crate::numa::*;
use crate::process::Process;
use rvnvmm_hart::{DataAccess, DataKind};
use rvnvmm_mem::sv39::{page_offset, PAGE_SIZE};

impl Process {
    /// The nodes the process may use (its cpuset's `mems_allowed`: every
    /// node with memory).
    pub(crate) fn mems_allowed(&self) -> NodeMask {
        self.memory.aspace.numa.online()
    }

    /// A nodemask argument (`nmask`, `maxnode`) read as Linux's
    /// `get_nodes` reads it.
    fn nodemask_arg(&mut self, nmask: u64, maxnode: u64) -> Result<NodeMask, Errno> {
        read_nodemask(maxnode, nmask == 0, |i| self.read_u64(nmask + 8 * i))
    }

    pub(super) fn sys_set_mempolicy(&mut self, mode: u64, nmask: u64, maxnode: u64) -> SysResult {
        let (mode, flags) = sanitize_mode(mode as i32)?;
        let nodes = self.nodemask_arg(nmask, maxnode)?;
        let policy = Policy::new(mode, flags, nodes, self.mems_allowed())?;
        self.threads.current_mut().mempolicy = policy;
        Ok(0)
    }

    pub(super) fn sys_get_mempolicy(&mut self, a: [u64; 6]) -> SysResult {
        let (mode_at, nmask, maxnode, addr, flags) = (a[0], a[1], a[2], a[3], a[4]);
        let numa = &self.memory.aspace.numa;
        if nmask != 0 && maxnode < u64::from(numa.nr_node_ids()) {
            return Err(EINVAL);
        }
        if flags & !(MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED) != 0 {
            return Err(EINVAL);
        }
        let task = self.threads.current().mempolicy;
        let (mode, nodes) = if flags & MPOL_F_MEMS_ALLOWED != 0 {
            if flags & (MPOL_F_NODE | MPOL_F_ADDR) != 0 {
                return Err(EINVAL);
            }
            (0, self.mems_allowed())
        } else {
            let policy = if flags & MPOL_F_ADDR != 0 {
                let (_, vma) = self.memory.aspace.find(addr).ok_or(EFAULT)?;
                vma.policy
            } else if addr != 0 {
                return Err(EINVAL);
            } else {
                task
            };
            let mode = if flags & MPOL_F_NODE != 0 {
                if flags & MPOL_F_ADDR != 0 {
                    // The node of the page there, faulted in as a read.
                    let page = addr & !(PAGE_SIZE - 1);
                    self.user_paddr(page, rvnvmm_mem::sv39::Access::Read)?;
                    self.memory
                        .aspace
                        .page_node(&self.memory.phys, page)
                        .map_err(|_| EFAULT)? as i32
                } else {
                    match task {
                        // The node the next interleaved page would take
                        // (Linux's `il_prev` starts before the first).
                        Some(p)
                            if policy == task
                                && matches!(
                                    p.mode,
                                    Mode::Interleave | Mode::WeightedInterleave
                                ) =>
                        {
                            p.nodes.first().unwrap_or(0) as i32
                        }
                        _ => return Err(EINVAL),
                    }
                }
            } else {
                policy.map_or(MPOL_DEFAULT, |p| p.mode_word())
            };
            (
                mode,
                policy.map_or(NodeMask::default(), |p| p.reported_nodes()),
            )
        };
        if mode_at != 0 {
            self.write_u32(mode_at, mode as u32)?;
        }
        if nmask != 0 {
            self.write_nodemask(nmask, maxnode, nodes)?;
        }
        Ok(0)
    }

    /// Writes `nodes` for a caller's `maxnode` as Linux's
    /// `copy_nodes_to_user` does: the words of `nr_node_ids` bits, and the
    /// rest of the caller's (`maxnode - 1` bits, rounded up to words)
    /// cleared.
    fn write_nodemask(&mut self, at: u64, maxnode: u64, nodes: NodeMask) -> Result<(), Errno> {
        let copy = (maxnode.saturating_sub(1)).next_multiple_of(64) / 8;
        let nbytes = u64::from(self.memory.aspace.numa.nr_node_ids()).div_ceil(64) * 8;
        if copy > nbytes {
            if copy > PAGE_SIZE {
                return Err(EINVAL);
            }
            self.write_mem(at + nbytes, &vec![0u8; (copy - nbytes) as usize])?;
        }
        let bytes: Vec<u8> = nodes.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        self.write_mem(at, &bytes[..copy.min(nbytes) as usize])
    }

    pub(super) fn sys_mbind(&mut self, a: [u64; 6]) -> SysResult {
        let (start, len, mode, nmask, maxnode, flags) = (a[0], a[1], a[2], a[3], a[4], a[5]);
        let (mode, mode_flags) = sanitize_mode(mode as i32)?;
        let nodes = self.nodemask_arg(nmask, maxnode)?;
        let mut flags = flags & 0xffff_ffff;
        if flags & !(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL) != 0 {
            return Err(EINVAL);
        }
        if flags & MPOL_MF_MOVE_ALL != 0 {
            return Err(EPERM); // needs CAP_SYS_NICE
        }
        if page_offset(start) != 0 {
            return Err(EINVAL);
        }
        if mode == MPOL_DEFAULT {
            flags &= !MPOL_MF_STRICT;
        }
        let len = len.checked_next_multiple_of(PAGE_SIZE).ok_or(EINVAL)?;
        let end = start.checked_add(len).ok_or(EINVAL)?;
        if end == start {
            return Ok(0);
        }
        let policy = Policy::new(mode, mode_flags, nodes, self.mems_allowed())?;
        // Holes: the default policy may span them, others may not; a range
        // that is all hole is EFAULT either way.
        let aspace = &self.memory.aspace;
        let covered = aspace.mapped_bytes(start, end);
        if covered == 0 || (policy.is_some() && covered != end - start) {
            return Err(EFAULT);
        }
        // The pages not on a node of the new policy, each with the node
        // the policy would put it on now.
        let numa = &aspace.numa;
        let allowed = match &policy {
            Some(p) if p.mode != Mode::Local => p.nodes,
            _ => NodeMask::of(numa.local()),
        };
        let misplaced: Vec<(u64, u32)> = aspace
            .resident_nodes(&self.memory.phys, start, end)
            .into_iter()
            .filter(|&(_, node)| !allowed.has(node))
            .map(|(page, _)| (page, numa.placement(policy.as_ref(), 0, page >> 12).1))
            .collect();
        self.memory.aspace.set_policy(start, end, policy);
        let mut failed = 0;
        if flags & MPOL_MF_MOVE != 0 {
            for &(page, to) in &misplaced {
                if self.move_guest_page(page, to).is_err() {
                    failed += 1;
                }
            }
        } else {
            failed = misplaced.len();
        }
        if failed > 0 && flags & MPOL_MF_STRICT != 0 {
            return Err(EIO);
        }
        Ok(0)
    }

    /// Moves the page at `vaddr` to node `to`, charging the current hart
    /// for the copy as the kernel's `copy_page` would take: a load of every
    /// line of the old frame and a store to every line of the new one.
    /// `Ok(false)`: already there.
    fn move_guest_page(&mut self, vaddr: u64, to: u32) -> Result<bool, Errno> {
        let moved = self
            .memory
            .aspace
            .move_page(&mut self.memory.phys, vaddr, to)?;
        let Some(m) = moved else {
            return Ok(false);
        };
        let cpu = self.threads.current().cpu;
        if let Some(model) = self.memsys.as_deref_mut() {
            let line = 1u64 << model.data_line_shift();
            let core = &mut self.threads.cpus[cpu].core;
            for off in (0..PAGE_SIZE).step_by(line as usize) {
                for (paddr, kind) in [
                    (m.from + off, DataKind::Load),
                    (m.to + off, DataKind::Store),
                ] {
                    let access = DataAccess {
                        paddr,
                        size: 8,
                        kind,
                    };
                    let stall = model.data_access(cpu, access, core.cycles);
                    core.cycles += 1 + stall;
                }
            }
        }
        Ok(true)
    }

    /// The process `pid` names for move_pages and migrate_pages: 0 or its
    /// own id (this process's threads share its memory); `ESRCH` for
    /// another (the emulator has no access to another process's memory).
    fn own_pid(&self, pid: u64) -> Result<(), Errno> {
        let pid = pid as i32;
        if pid == 0 || pid == self.pid || self.threads.all.iter().any(|t| t.tid == pid) {
            Ok(())
        } else {
            Err(ESRCH)
        }
    }

    pub(super) fn sys_move_pages(&mut self, a: [u64; 6]) -> SysResult {
        let (pid, count, pages, nodes, status, flags) =
            (a[0], a[1], a[2], a[3], a[4], a[5] as i32 as i64 as u64);
        if flags & !(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL) != 0 {
            return Err(EINVAL);
        }
        if flags & MPOL_MF_MOVE_ALL != 0 {
            return Err(EPERM);
        }
        self.own_pid(pid)?;
        if nodes == 0 {
            for i in 0..count {
                let page = self.read_u64(pages + 8 * i)?;
                let node = self
                    .memory
                    .aspace
                    .page_node(&self.memory.phys, page)
                    .map_or_else(|e| e.to_return() as i32, |n| n as i32);
                self.write_u32(status + 4 * i, node as u32)?;
            }
            return Ok(0);
        }
        let online = self.mems_allowed();
        for i in 0..count {
            let page = self.read_u64(pages + 8 * i)?;
            let node = self.read_u32(nodes + 4 * i)? as i32;
            if node < 0 || node as u32 >= MAX_NUMNODES || !online.has(node as u32) {
                return Err(ENODEV);
            }
            let result = match self.move_guest_page(page & !(PAGE_SIZE - 1), node as u32) {
                Ok(_) => node,
                Err(ENOMEM) => {
                    // Linux stops and returns the pages not moved: this one
                    // and those not tried.
                    return Ok((count - i) as i64);
                }
                Err(e) => e.to_return() as i32,
            };
            self.write_u32(status + 4 * i, result as u32)?;
        }
        Ok(0)
    }

    pub(super) fn sys_migrate_pages(&mut self, a: [u64; 6]) -> SysResult {
        let (pid, maxnode, old_nodes, new_nodes) = (a[0], a[1], a[2], a[3]);
        let old = self.nodemask_arg(old_nodes, maxnode)?;
        let new = self.nodemask_arg(new_nodes, maxnode)?;
        self.own_pid(pid)?;
        let allowed = self.mems_allowed();
        if !new.and_not(allowed).is_empty() {
            return Err(EPERM);
        }
        let new = new.and(allowed);
        if new.is_empty() {
            return Ok(0);
        }
        // Linux's `do_migrate_pages`: the n-th node of the old set goes to
        // the n-th of the new (counting round it); when the sets differ in
        // size, a node of both stays.
        let target = |s: u32| -> Option<u32> {
            if !old.has(s) || (old.count() != new.count() && new.has(s)) {
                return None;
            }
            let n = old.iter().position(|x| x == s)? as u64;
            new.nth_round(n).filter(|&d| d != s)
        };
        let areas: Vec<(u64, u64)> = self
            .memory
            .aspace
            .vmas
            .iter()
            .map(|(&s, v)| (s, v.end))
            .collect();
        let mut not_moved = 0;
        for (start, end) in areas {
            for (page, node) in self
                .memory
                .aspace
                .resident_nodes(&self.memory.phys, start, end)
            {
                if let Some(to) = target(node) {
                    match self.move_guest_page(page, to) {
                        Ok(_) | Err(EFAULT) | Err(EACCES) => {}
                        Err(_) => not_moved += 1,
                    }
                }
            }
        }
        Ok(not_moved)
    }

    pub(super) fn sys_set_mempolicy_home_node(&mut self, a: [u64; 6]) -> SysResult {
        let (start, len, home, flags) = (a[0], a[1], a[2], a[3]);
        if flags != 0 || page_offset(start) != 0 {
            return Err(EINVAL);
        }
        let home = u32::try_from(home).map_err(|_| EINVAL)?;
        if home >= MAX_NUMNODES || !self.mems_allowed().has(home) {
            return Err(EINVAL);
        }
        let len = len.checked_next_multiple_of(PAGE_SIZE).ok_or(EINVAL)?;
        let end = start.checked_add(len).ok_or(EINVAL)?;
        if end == start {
            return Ok(0);
        }
        if self.memory.aspace.mapped_bytes(start, end) != end - start {
            return Err(EFAULT);
        }
        // Linux gives a home node to bind and preferred-many policies only
        // (`EOPNOTSUPP` for others); the home node is where their pages
        // are tried first. This emulation keeps the policies as they are
        // and says so.
        Err(EOPNOTSUPP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::testing::*;

    /// A process on two DRAM nodes of 16 MiB, node 1 at distance 25.
    fn process() -> Process {
        two_node_process()
    }

    fn mask_at(p: &mut Process, mask: u64) -> u64 {
        let at = scratch(p, 4096);
        p.write_u64(at, mask).unwrap();
        at
    }

    #[test]
    fn set_and_get_mempolicy_round_trip_with_linuxs_errors() {
        let mut p = process();
        let m = mask_at(&mut p, 0b10);
        assert_eq!(err(p.sys_set_mempolicy(7, m, 65)), EINVAL);
        assert_eq!(err(p.sys_set_mempolicy(MPOL_BIND as u64, 0, 0)), EINVAL);
        assert_eq!(err(p.sys_set_mempolicy(MPOL_BIND as u64, WILD, 65)), EFAULT);
        let far = mask_at(&mut p, 0b100);
        assert_eq!(err(p.sys_set_mempolicy(MPOL_BIND as u64, far, 65)), EINVAL);
        assert_eq!(p.sys_set_mempolicy(MPOL_BIND as u64, m, 65), Ok(0));
        let out = scratch(&mut p, 4096);
        let mode = out + 64;
        assert_eq!(p.sys_get_mempolicy([mode, out, 64, 0, 0, 0]), Ok(0));
        assert_eq!(p.read_u32(mode).unwrap(), MPOL_BIND as u32);
        assert_eq!(p.read_u64(out).unwrap(), 0b10);
        // maxnode below nr_node_ids, unknown flags, an address without
        // MPOL_F_ADDR, MPOL_F_NODE without an interleave policy.
        assert_eq!(err(p.sys_get_mempolicy([mode, out, 1, 0, 0, 0])), EINVAL);
        assert_eq!(err(p.sys_get_mempolicy([mode, 0, 0, 0, 8, 0])), EINVAL);
        assert_eq!(err(p.sys_get_mempolicy([mode, 0, 0, 0x1000, 0, 0])), EINVAL);
        assert_eq!(
            err(p.sys_get_mempolicy([mode, 0, 0, 0, MPOL_F_NODE, 0])),
            EINVAL
        );
        assert_eq!(
            err(p.sys_get_mempolicy([mode, 0, 0, 0, MPOL_F_MEMS_ALLOWED | MPOL_F_NODE, 0])),
            EINVAL
        );
        assert_eq!(
            p.sys_get_mempolicy([mode, out, 64, 0, MPOL_F_MEMS_ALLOWED, 0]),
            Ok(0)
        );
        assert_eq!(p.read_u64(out).unwrap(), 0b11);
        assert_eq!(
            err(p.sys_get_mempolicy([mode, 0, 0, WILD, MPOL_F_ADDR, 0])),
            EFAULT
        );
        // Back to the default.
        assert_eq!(p.sys_set_mempolicy(0, 0, 0), Ok(0));
        assert_eq!(p.sys_get_mempolicy([mode, 0, 0, 0, 0, 0]), Ok(0));
        assert_eq!(p.read_u32(mode).unwrap(), 0);
    }

    #[test]
    fn a_bound_thread_faults_pages_in_on_its_node_and_the_query_says_so() {
        let mut p = process();
        let m = mask_at(&mut p, 0b10);
        p.sys_set_mempolicy(MPOL_BIND as u64, m, 65).unwrap();
        let buf = scratch(&mut p, 4 * 4096);
        p.write_mem(buf, b"x").unwrap();
        let arr = scratch(&mut p, 4096);
        p.write_u64(arr, buf).unwrap();
        p.write_u64(arr + 8, buf + 4096).unwrap();
        p.write_u64(arr + 16, WILD).unwrap();
        let status = arr + 1024;
        assert_eq!(p.sys_move_pages([0, 3, arr, 0, status, 0]), Ok(0));
        let st: Vec<i32> = (0..3)
            .map(|i| p.read_u32(status + 4 * i).unwrap() as i32)
            .collect();
        assert_eq!(st, [1, -(ENOENT.raw()), -(EFAULT.raw())]);
        let mode = arr + 2048;
        assert_eq!(
            p.sys_get_mempolicy([mode, 0, 0, buf, MPOL_F_NODE | MPOL_F_ADDR, 0]),
            Ok(0)
        );
        assert_eq!(p.read_u32(mode).unwrap(), 1);
    }

    #[test]
    fn move_pages_moves_and_reports_each_page() {
        let mut p = process();
        let buf = scratch(&mut p, 2 * 4096);
        p.write_mem(buf, b"keep").unwrap();
        let arr = scratch(&mut p, 4096);
        let (pages, nodes, status) = (arr, arr + 512, arr + 1024);
        p.write_u64(pages, buf).unwrap();
        p.write_u64(pages + 8, buf + 4096).unwrap();
        p.write_u32(nodes, 1).unwrap();
        p.write_u32(nodes + 4, 1).unwrap();
        assert_eq!(p.sys_move_pages([0, 2, pages, nodes, status, 0]), Ok(0));
        assert_eq!(p.read_u32(status).unwrap(), 1);
        assert_eq!(p.read_u32(status + 4).unwrap() as i32, -(ENOENT.raw()));
        assert_eq!(read(&mut p, buf, 4), b"keep");
        // A node without memory, a bad flag, MOVE_ALL, another process.
        p.write_u32(nodes, 3).unwrap();
        assert_eq!(
            err(p.sys_move_pages([0, 1, pages, nodes, status, 0])),
            ENODEV
        );
        assert_eq!(err(p.sys_move_pages([0, 1, pages, 0, status, 8])), EINVAL);
        assert_eq!(
            err(p.sys_move_pages([0, 1, pages, 0, status, MPOL_MF_MOVE_ALL])),
            EPERM
        );
        assert_eq!(
            err(p.sys_move_pages([99_999, 1, pages, 0, status, 0])),
            ESRCH
        );
        assert_eq!(err(p.sys_move_pages([0, 1, WILD, 0, status, 0])), EFAULT);
        assert_eq!(p.memory.aspace.numa.counters_of(1).migrated_in, 1);
    }

    #[test]
    fn mbind_places_and_moves_an_areas_pages() {
        let mut p = process();
        let buf = scratch(&mut p, 8 * 4096);
        for i in 0..8 {
            p.write_mem(buf + i * 4096, &[i as u8 + 1]).unwrap();
        }
        let m = mask_at(&mut p, 0b11);
        let mode = MPOL_INTERLEAVE as u64;
        // Misaligned, MOVE_ALL, bad flags, a hole.
        assert_eq!(err(p.sys_mbind([buf + 1, 4096, mode, m, 65, 0])), EINVAL);
        assert_eq!(
            err(p.sys_mbind([buf, 4096, mode, m, 65, MPOL_MF_MOVE_ALL])),
            EPERM
        );
        assert_eq!(err(p.sys_mbind([buf, 4096, mode, m, 65, 64])), EINVAL);
        assert_eq!(err(p.sys_mbind([WILD, 4096, mode, m, 65, 0])), EFAULT);
        // Strict without moving: pages are on node 0, the policy wants
        // both nodes, so none is misplaced.
        assert_eq!(
            p.sys_mbind([buf, 8 * 4096, mode, m, 65, MPOL_MF_STRICT]),
            Ok(0)
        );
        let one = mask_at(&mut p, 0b10);
        let bind = MPOL_BIND as u64;
        assert_eq!(
            err(p.sys_mbind([buf, 8 * 4096, bind, one, 65, MPOL_MF_STRICT])),
            EIO
        );
        assert_eq!(
            p.sys_mbind([buf, 8 * 4096, bind, one, 65, MPOL_MF_MOVE]),
            Ok(0)
        );
        for i in 0..8 {
            assert_eq!(
                p.memory.aspace.page_node(&p.memory.phys, buf + i * 4096),
                Ok(1)
            );
            assert_eq!(read(&mut p, buf + i * 4096, 1), [i as u8 + 1]);
        }
        let out = scratch(&mut p, 4096);
        assert_eq!(
            p.sys_get_mempolicy([out, out + 8, 64, buf, MPOL_F_ADDR, 0]),
            Ok(0)
        );
        assert_eq!(p.read_u32(out).unwrap(), MPOL_BIND as u32);
        assert_eq!(p.read_u64(out + 8).unwrap(), 0b10);
    }

    #[test]
    fn migrate_pages_moves_every_page_of_a_node() {
        let mut p = process();
        let buf = scratch(&mut p, 4 * 4096);
        for i in 0..4 {
            p.write_mem(buf + i * 4096, b"z").unwrap();
        }
        let from = mask_at(&mut p, 0b01);
        let to = mask_at(&mut p, 0b10);
        let far = mask_at(&mut p, 0b100);
        assert_eq!(err(p.sys_migrate_pages([0, 65, from, far, 0, 0])), EPERM);
        assert_eq!(err(p.sys_migrate_pages([4242, 65, from, to, 0, 0])), ESRCH);
        assert_eq!(p.sys_migrate_pages([0, 65, from, to, 0, 0]), Ok(0));
        for i in 0..4 {
            assert_eq!(
                p.memory.aspace.page_node(&p.memory.phys, buf + i * 4096),
                Ok(1)
            );
        }
    }
}
