//! NUMA memory policies as Linux keeps them (mm/mempolicy.c): a thread's
//! policy (`set_mempolicy`), an area's (`mbind`), and where each decides a
//! fresh page goes among the machine's memory nodes; and the per-node
//! allocation counters Linux reports in `numastat`.
//!
//! Every hart is on the node of the first DRAM node (the slower nodes are
//! CPU-less, as the full system's device tree makes them), so "local" is
//! that node. Node ids are the config's (`memory.NAME.node`), at most
//! [`MAX_NUMNODES`].

use crate::errno::*;

/// Node ids the emulated kernel supports (its `MAX_NUMNODES`, as with
/// `NODES_SHIFT` 10, the largest Linux allows; a nodemask of the system
/// calls holds this many bits).
pub const MAX_NUMNODES: u32 = 1024;
/// 64-bit words of a nodemask.
const MASK_WORDS: usize = (MAX_NUMNODES / 64) as usize;

/// `MPOL_DEFAULT`: no policy of its own (an area falls back to its
/// thread's, a thread to the system's: local allocation).
pub const MPOL_DEFAULT: i32 = 0;
/// `MPOL_PREFERRED`: one node first, then the others nearest to it.
pub const MPOL_PREFERRED: i32 = 1;
/// `MPOL_BIND`: only the nodes of the mask, nearest to the CPU first.
pub const MPOL_BIND: i32 = 2;
/// `MPOL_INTERLEAVE`: page by page round the nodes of the mask.
pub const MPOL_INTERLEAVE: i32 = 3;
/// `MPOL_LOCAL`: the node of the allocating CPU.
pub const MPOL_LOCAL: i32 = 4;
/// `MPOL_PREFERRED_MANY`: the nodes of the mask first, then any.
pub const MPOL_PREFERRED_MANY: i32 = 5;
/// `MPOL_WEIGHTED_INTERLEAVE`: interleave by per-node weights (every
/// node's weight is 1 here, Linux's default, so it interleaves evenly).
pub const MPOL_WEIGHTED_INTERLEAVE: i32 = 6;
const MPOL_MAX: i32 = 7;

/// Mode flag: the nodemask is not remapped when the allowed nodes change.
pub const MPOL_F_STATIC_NODES: i32 = 1 << 15;
/// Mode flag: the nodemask is relative to the allowed nodes.
pub const MPOL_F_RELATIVE_NODES: i32 = 1 << 14;
/// Mode flag: NUMA balancing may migrate pages of a bound policy.
pub const MPOL_F_NUMA_BALANCING: i32 = 1 << 13;
const MPOL_MODE_FLAGS: i32 = MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | MPOL_F_NUMA_BALANCING;

/// `get_mempolicy` flag: return a node instead of the policy.
pub const MPOL_F_NODE: u64 = 1;
/// `get_mempolicy` flag: the policy of the area at `addr`.
pub const MPOL_F_ADDR: u64 = 2;
/// `get_mempolicy` flag: the nodes the thread may use.
pub const MPOL_F_MEMS_ALLOWED: u64 = 4;

/// `mbind` flag: fail (`EIO`) if pages are not where the policy says.
pub const MPOL_MF_STRICT: u64 = 1;
/// `mbind`/`move_pages` flag: move the process's own pages.
pub const MPOL_MF_MOVE: u64 = 2;
/// `mbind`/`move_pages` flag: move shared pages too (needs
/// `CAP_SYS_NICE`, which the emulated process does not have).
pub const MPOL_MF_MOVE_ALL: u64 = 4;

/// The distance Linux assumes between two nodes when none is given.
pub const REMOTE_DISTANCE: u8 = 20;

/// A set of node ids, below [`MAX_NUMNODES`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeMask([u64; MASK_WORDS]);

impl NodeMask {
    /// The set whose nodes 0 to 63 are the bits of `low`.
    pub fn bits(low: u64) -> NodeMask {
        let mut m = NodeMask::default();
        m.0[0] = low;
        m
    }

    /// The set of the given words, lowest first (more than the mask holds
    /// are ignored).
    pub fn from_words(words: &[u64]) -> NodeMask {
        let mut m = NodeMask::default();
        for (w, &v) in m.0.iter_mut().zip(words) {
            *w = v;
        }
        m
    }

    /// The set's 64-bit words, lowest first.
    pub fn words(&self) -> &[u64] {
        &self.0
    }

    /// The mask of one node (empty if `id` is too large).
    pub fn of(id: u32) -> NodeMask {
        NodeMask::default().with(id)
    }

    /// The set with node `id` added.
    pub fn with(mut self, id: u32) -> NodeMask {
        if id < MAX_NUMNODES {
            self.0[(id / 64) as usize] |= 1 << (id % 64);
        }
        self
    }

    /// Whether node `id` is in the set.
    pub fn has(self, id: u32) -> bool {
        id < MAX_NUMNODES && self.0[(id / 64) as usize] >> (id % 64) & 1 != 0
    }

    /// The nodes of both sets.
    pub fn and(self, other: NodeMask) -> NodeMask {
        let mut m = self;
        for (w, o) in m.0.iter_mut().zip(other.0) {
            *w &= o;
        }
        m
    }

    /// The nodes of this set not in `other`.
    pub fn and_not(self, other: NodeMask) -> NodeMask {
        let mut m = self;
        for (w, o) in m.0.iter_mut().zip(other.0) {
            *w &= !o;
        }
        m
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// The nodes of the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = u32> {
        self.0.into_iter().enumerate().flat_map(|(i, mut w)| {
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let bit = w.trailing_zeros();
                    w &= w - 1;
                    i as u32 * 64 + bit
                })
            })
        })
    }

    /// How many nodes the set holds.
    pub fn count(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The lowest node of the set.
    pub fn first(self) -> Option<u32> {
        self.0
            .iter()
            .enumerate()
            .find(|(_, &w)| w != 0)
            .map(|(i, w)| i as u32 * 64 + w.trailing_zeros())
    }

    /// The set as Linux prints a nodemask of `MAX_NUMNODES` bits
    /// (`Mems_allowed`): comma-separated 32-bit hexadecimal words, the
    /// highest first.
    pub fn hex_words(self) -> String {
        (0..MASK_WORDS * 2)
            .rev()
            .map(|w| format!("{:08x}", (self.0[w / 2] >> (32 * (w % 2))) as u32))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The `n`-th node of the set, counting round it (`n` modulo the
    /// set's size), as Linux's `interleave_nid` picks one.
    pub fn nth_round(self, n: u64) -> Option<u32> {
        let count = u64::from(self.count());
        if count == 0 {
            return None;
        }
        self.iter().nth((n % count) as usize)
    }
}

/// What a policy does, beside `MPOL_DEFAULT` (no policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `MPOL_PREFERRED`.
    Preferred,
    /// `MPOL_BIND`.
    Bind,
    /// `MPOL_INTERLEAVE`.
    Interleave,
    /// `MPOL_LOCAL`.
    Local,
    /// `MPOL_PREFERRED_MANY`.
    PreferredMany,
    /// `MPOL_WEIGHTED_INTERLEAVE`.
    WeightedInterleave,
}

impl Mode {
    fn number(self) -> i32 {
        match self {
            Mode::Preferred => MPOL_PREFERRED,
            Mode::Bind => MPOL_BIND,
            Mode::Interleave => MPOL_INTERLEAVE,
            Mode::Local => MPOL_LOCAL,
            Mode::PreferredMany => MPOL_PREFERRED_MANY,
            Mode::WeightedInterleave => MPOL_WEIGHTED_INTERLEAVE,
        }
    }

    fn of(number: i32) -> Option<Mode> {
        Some(match number {
            MPOL_PREFERRED => Mode::Preferred,
            MPOL_BIND => Mode::Bind,
            MPOL_INTERLEAVE => Mode::Interleave,
            MPOL_LOCAL => Mode::Local,
            MPOL_PREFERRED_MANY => Mode::PreferredMany,
            MPOL_WEIGHTED_INTERLEAVE => Mode::WeightedInterleave,
            _ => return None,
        })
    }

    /// The name Linux's `mpol_to_str` gives it (`numa_maps`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Preferred => "prefer",
            Mode::Bind => "bind",
            Mode::Interleave => "interleave",
            Mode::Local => "local",
            Mode::PreferredMany => "prefer (many)",
            Mode::WeightedInterleave => "weighted interleave",
        }
    }
}

/// A memory policy other than the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    /// What it does.
    pub mode: Mode,
    /// Its `MPOL_F_*` mode flags as given.
    pub flags: i32,
    /// The nodes it uses (empty for `Local`).
    pub nodes: NodeMask,
    /// The nodemask as given, reported back under the static or relative
    /// flags.
    pub user_nodes: NodeMask,
}

/// A system call's mode argument split into mode and flags, checked as
/// Linux's `sanitize_mpol_flags` does.
pub fn sanitize_mode(mode: i32) -> Result<(i32, i32), Errno> {
    let flags = mode & MPOL_MODE_FLAGS;
    let mode = mode & !MPOL_MODE_FLAGS;
    if !(0..MPOL_MAX).contains(&mode) {
        return Err(EINVAL);
    }
    if flags & MPOL_F_STATIC_NODES != 0 && flags & MPOL_F_RELATIVE_NODES != 0 {
        return Err(EINVAL);
    }
    if flags & MPOL_F_NUMA_BALANCING != 0 && !matches!(mode, MPOL_BIND | MPOL_PREFERRED_MANY) {
        return Err(EINVAL);
    }
    Ok((mode, flags))
}

impl Policy {
    /// The policy of `mode` (sanitised) with `flags` over `nodes`, as
    /// Linux's `mpol_new` and `mpol_set_nodemask` make it: `None` for
    /// `MPOL_DEFAULT`; nodes outside `allowed` dropped (or, relative,
    /// `nodes` mapped onto `allowed`); `EINVAL` where the mask must be empty
    /// and is not, or must not be and is (once trimmed).
    pub fn new(
        mode: i32,
        flags: i32,
        nodes: NodeMask,
        allowed: NodeMask,
    ) -> Result<Option<Policy>, Errno> {
        let static_or_relative = flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES) != 0;
        let mode = match mode {
            MPOL_DEFAULT if nodes.is_empty() => return Ok(None),
            MPOL_DEFAULT => return Err(EINVAL),
            MPOL_PREFERRED if nodes.is_empty() => {
                if static_or_relative {
                    return Err(EINVAL);
                }
                Mode::Local
            }
            MPOL_LOCAL if !nodes.is_empty() || static_or_relative => return Err(EINVAL),
            m => {
                let mode = Mode::of(m).ok_or(EINVAL)?;
                if mode != Mode::Local && nodes.is_empty() {
                    return Err(EINVAL);
                }
                mode
            }
        };
        let effective = if flags & MPOL_F_RELATIVE_NODES != 0 {
            relative(nodes, allowed)
        } else {
            nodes.and(allowed)
        };
        let used = match mode {
            Mode::Local => NodeMask::default(),
            _ if effective.is_empty() => return Err(EINVAL),
            Mode::Preferred => NodeMask::of(effective.first().unwrap_or(0)),
            _ => effective,
        };
        Ok(Some(Policy {
            mode,
            flags,
            nodes: used,
            user_nodes: if static_or_relative {
                nodes
            } else {
                NodeMask::default()
            },
        }))
    }

    /// The mode word `get_mempolicy` reports: the mode and its flags.
    pub fn mode_word(&self) -> i32 {
        self.mode.number() | self.flags
    }

    /// The nodemask `get_mempolicy` reports: as given under the static or
    /// relative flags, otherwise the nodes in use.
    pub fn reported_nodes(&self) -> NodeMask {
        if self.flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES) != 0 {
            self.user_nodes
        } else {
            self.nodes
        }
    }
}

/// `nodes` read relative to `allowed` (Linux's `mpol_relative_nodemask`):
/// bit n names the n-th allowed node, counting round them.
fn relative(nodes: NodeMask, allowed: NodeMask) -> NodeMask {
    let n = u64::from(allowed.count());
    if n == 0 {
        return NodeMask::default();
    }
    nodes.iter().fold(NodeMask::default(), |acc, bit| {
        acc.with(allowed.nth_round(u64::from(bit)).unwrap_or(0))
    })
}

/// A nodemask read from the guest as Linux's `get_nodes` reads it: `maxnode
/// - 1` bits (an old off-by-one kept for compatibility) from 64-bit words;
/// bits beyond [`MAX_NUMNODES`] must be zero. `read_word(i)` reads word
/// `i` or fails with `EFAULT`.
pub fn read_nodemask(
    maxnode: u64,
    null: bool,
    mut read_word: impl FnMut(u64) -> Result<u64, Errno>,
) -> Result<NodeMask, Errno> {
    let mut bits = maxnode.wrapping_sub(1);
    if maxnode == 0 || bits == 0 || null {
        return Ok(NodeMask::default());
    }
    if bits > 4096 * 8 {
        return Err(EINVAL);
    }
    let max = u64::from(MAX_NUMNODES);
    while bits > max {
        let chunk = bits.min(64);
        // Linux reads the whole word holding the top bit.
        let mut t = read_word((bits - 1) / 64)?;
        if bits - chunk >= max {
            bits -= chunk;
        } else {
            bits = max;
            if max % 64 != 0 {
                t &= !((1u64 << (max % 64)) - 1);
            }
        }
        if t != 0 {
            return Err(EINVAL);
        }
    }
    let mut mask = NodeMask::default();
    for (i, w) in mask
        .0
        .iter_mut()
        .enumerate()
        .take(bits.div_ceil(64) as usize)
    {
        let word = read_word(i as u64)?;
        let left = bits - 64 * i as u64;
        *w = if left >= 64 {
            word
        } else {
            word & ((1u64 << left) - 1)
        };
    }
    Ok(mask)
}

/// Per-node allocation counters, as Linux's `numastat` keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Pages allocated here that were meant for here.
    pub numa_hit: u64,
    /// Pages allocated here that were meant for another node.
    pub numa_miss: u64,
    /// Pages meant for here that went elsewhere.
    pub numa_foreign: u64,
    /// Interleaved pages that got the node interleaving chose.
    pub interleave_hit: u64,
    /// Pages allocated here by a CPU of this node.
    pub local_node: u64,
    /// Pages allocated here by a CPU of another node.
    pub other_node: u64,
    /// Pages migrated to this node (`move_pages`, `mbind`,
    /// `migrate_pages`).
    pub migrated_in: u64,
    /// Pages migrated away from this node.
    pub migrated_out: u64,
}

/// A thread's own policy (`set_mempolicy`); `None` is the default.
pub type TaskPolicy = Option<Policy>;

/// The machine's memory nodes as the process's kernel places pages on
/// them: each node's frame pools, the distances between nodes, and the
/// counters of what went where.
#[derive(Clone, Debug)]
pub struct NodeMap {
    /// `(node id, its frame pools)`, by ascending id.
    nodes: Vec<(u32, Vec<usize>)>,
    /// The node of every pool.
    pool_node: Vec<u32>,
    /// The node the harts are on.
    local: u32,
    /// `(from, to, distance)` for every ordered pair of nodes, if measured.
    distances: Vec<(u32, u32, u8)>,
    /// Counters by position in `nodes`.
    pub counters: Vec<NodeCounters>,
}

impl NodeMap {
    /// The map of pools whose nodes are `pool_node` (pool `i` belongs to
    /// node `pool_node[i]`), the harts on node `local`, with the given
    /// distances (Linux's defaults, 10 and 20, where none is given).
    pub fn new(pool_node: &[u32], local: u32, distances: &[(u32, u32, u8)]) -> NodeMap {
        let mut nodes: Vec<(u32, Vec<usize>)> = Vec::new();
        for (pool, &id) in pool_node.iter().enumerate() {
            match nodes.iter_mut().find(|(n, _)| *n == id) {
                Some((_, pools)) => pools.push(pool),
                None => nodes.push((id, vec![pool])),
            }
        }
        nodes.sort_unstable_by_key(|(id, _)| *id);
        NodeMap {
            counters: vec![NodeCounters::default(); nodes.len()],
            nodes,
            pool_node: pool_node.to_vec(),
            local,
            distances: distances.to_vec(),
        }
    }

    /// The nodes that have memory (every node here).
    pub fn online(&self) -> NodeMask {
        self.nodes
            .iter()
            .fold(NodeMask::default(), |m, (id, _)| m.with(*id))
    }

    /// The node ids, ascending.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.nodes.iter().map(|(id, _)| *id)
    }

    /// The node the harts are on.
    pub fn local(&self) -> u32 {
        self.local
    }

    /// The highest node id + 1 (Linux's `nr_node_ids`).
    pub fn nr_node_ids(&self) -> u32 {
        self.nodes.last().map_or(1, |(id, _)| id + 1)
    }

    /// The distance from node `a` to node `b`.
    pub fn distance(&self, a: u32, b: u32) -> u8 {
        if a == b {
            return 10;
        }
        self.distances
            .iter()
            .find(|&&(x, y, _)| x == a && y == b)
            .map_or(REMOTE_DISTANCE, |&(_, _, d)| d)
    }

    /// The node of pool `pool`.
    pub fn node_of_pool(&self, pool: usize) -> u32 {
        self.pool_node.get(pool).copied().unwrap_or(self.local)
    }

    /// The pools of node `id`, in order.
    pub fn pools_of(&self, id: u32) -> &[usize] {
        self.nodes
            .iter()
            .find(|(n, _)| *n == id)
            .map_or(&[], |(_, p)| p.as_slice())
    }

    /// The nodes of `allowed`, nearest to `from` first (Linux's zonelist
    /// order: by distance, then by id).
    pub fn by_distance(&self, from: u32, allowed: NodeMask) -> Vec<u32> {
        let mut ids: Vec<u32> = self.ids().filter(|&id| allowed.has(id)).collect();
        ids.sort_by_key(|&id| (self.distance(from, id), id));
        ids
    }

    /// Where a fresh page goes under `policy` (an area's, else its thread's;
    /// `None`: the default, from `default_pool` only) at interleave index
    /// `ilx`: the pools to try in order, and the node the policy meant
    /// (for the counters) and whether it interleaved.
    pub fn placement(
        &self,
        policy: Option<&Policy>,
        default_pool: usize,
        ilx: u64,
    ) -> (Vec<usize>, u32, bool) {
        let all = self.online();
        let (nodes, meant, interleaved) = match policy {
            // No policy: the area's own pool and no other, so that a
            // placement the machine's config makes (`user.heap`) holds and
            // running out is an out-of-memory kill naming the region to
            // enlarge, not Linux's quiet fall back to another node.
            None => return (vec![default_pool], self.node_of_pool(default_pool), false),
            Some(p) => match p.mode {
                Mode::Local => (self.by_distance(self.local, all), self.local, false),
                Mode::Preferred => {
                    let n = p.nodes.first().unwrap_or(self.local);
                    (self.by_distance(n, all), n, false)
                }
                Mode::PreferredMany => {
                    let mut v = self.by_distance(self.local, p.nodes);
                    let rest = all.and_not(p.nodes);
                    v.extend(self.by_distance(self.local, rest));
                    let meant = v.first().copied().unwrap_or(self.local);
                    (v, meant, false)
                }
                Mode::Bind => {
                    let v = self.by_distance(self.local, p.nodes);
                    let meant = v.first().copied().unwrap_or(self.local);
                    (v, meant, false)
                }
                Mode::Interleave | Mode::WeightedInterleave => {
                    let n = p.nodes.nth_round(ilx).unwrap_or(self.local);
                    (self.by_distance(n, all), n, true)
                }
            },
        };
        let pools = nodes
            .iter()
            .flat_map(|&id| self.pools_of(id).iter().copied())
            .collect();
        (pools, meant, interleaved)
    }

    /// Counts `pages` pages allocated on `got` for a placement that meant
    /// `meant` (interleaving or not), by a hart of the local node.
    pub fn count_allocation(&mut self, got: u32, meant: u32, interleaved: bool, pages: u64) {
        let local = self.local;
        if let Some(c) = self.counters_mut(got) {
            if got == meant {
                c.numa_hit += pages;
                if interleaved {
                    c.interleave_hit += pages;
                }
            } else {
                c.numa_miss += pages;
            }
            if got == local {
                c.local_node += pages;
            } else {
                c.other_node += pages;
            }
        }
        if got != meant {
            if let Some(c) = self.counters_mut(meant) {
                c.numa_foreign += pages;
            }
        }
    }

    /// Counts a page migrated from node `from` to node `to`.
    pub fn count_migration(&mut self, from: u32, to: u32) {
        if let Some(c) = self.counters_mut(from) {
            c.migrated_out += 1;
        }
        if let Some(c) = self.counters_mut(to) {
            c.migrated_in += 1;
        }
    }

    /// Zeroes the counters (a statistics reset).
    pub fn reset_counters(&mut self) {
        self.counters.fill(NodeCounters::default());
    }

    /// The counters of node `id`.
    pub fn counters_of(&self, id: u32) -> NodeCounters {
        self.nodes
            .iter()
            .position(|(n, _)| *n == id)
            .map(|i| self.counters[i])
            .unwrap_or_default()
    }

    fn counters_mut(&mut self, id: u32) -> Option<&mut NodeCounters> {
        let i = self.nodes.iter().position(|(n, _)| *n == id)?;
        self.counters.get_mut(i)
    }
}

/// Writes a policy (`None`: the default) to a checkpoint.
pub(crate) fn save_policy(w: &mut rvnvmm_checkpoint::StateWriter, p: Option<&Policy>) {
    match p {
        None => w.u8(0),
        Some(p) => {
            w.u8(p.mode.number() as u8);
            w.u32(p.flags as u32);
            w.u64s(p.nodes.words());
            w.u64s(p.user_nodes.words());
        }
    }
}

/// Reads a policy [`save_policy`] wrote.
pub(crate) fn restore_policy(
    r: &mut rvnvmm_checkpoint::StateReader<'_>,
) -> Result<Option<Policy>, rvnvmm_checkpoint::CheckpointError> {
    let mode = r.u8()?;
    if mode == 0 {
        return Ok(None);
    }
    let mode = Mode::of(i32::from(mode)).ok_or_else(|| r.malformed(format!("NUMA mode {mode}")))?;
    let flags = r.u32()? as i32;
    let mut masks = [[0u64; MASK_WORDS]; 2];
    for m in &mut masks {
        r.u64s_into(m, "a NUMA policy's nodes")?;
    }
    Ok(Some(Policy {
        mode,
        flags,
        nodes: NodeMask(masks[0]),
        user_nodes: NodeMask(masks[1]),
    }))
}

impl NodeMap {
    /// Writes the counters to a checkpoint.
    pub(crate) fn save(&self, w: &mut rvnvmm_checkpoint::StateWriter) {
        w.count(self.counters.len());
        for c in &self.counters {
            w.u64s(&c.fields());
        }
    }

    /// Reads the counters [`NodeMap::save`] wrote, for the same nodes.
    pub(crate) fn restore(
        &mut self,
        r: &mut rvnvmm_checkpoint::StateReader<'_>,
    ) -> Result<(), rvnvmm_checkpoint::CheckpointError> {
        let n = r.count(MAX_NUMNODES as usize)?;
        if n != self.counters.len() {
            return Err(r.malformed("the memory nodes are not this machine's"));
        }
        for c in &mut self.counters {
            let mut v = [0u64; NodeCounters::FIELDS];
            r.u64s_into(&mut v, "a node's counters")?;
            *c = NodeCounters::from_fields(v);
        }
        Ok(())
    }
}

impl NodeCounters {
    const FIELDS: usize = 8;

    /// The counters in declaration order.
    pub fn fields(&self) -> [u64; NodeCounters::FIELDS] {
        [
            self.numa_hit,
            self.numa_miss,
            self.numa_foreign,
            self.interleave_hit,
            self.local_node,
            self.other_node,
            self.migrated_in,
            self.migrated_out,
        ]
    }

    fn from_fields(v: [u64; NodeCounters::FIELDS]) -> NodeCounters {
        NodeCounters {
            numa_hit: v[0],
            numa_miss: v[1],
            numa_foreign: v[2],
            interleave_hit: v[3],
            local_node: v[4],
            other_node: v[5],
            migrated_in: v[6],
            migrated_out: v[7],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(ids: &[u32]) -> NodeMask {
        ids.iter().fold(NodeMask::default(), |m, &i| m.with(i))
    }

    #[test]
    fn modes_and_flags_are_checked_as_linux_does() {
        assert_eq!(sanitize_mode(MPOL_BIND), Ok((MPOL_BIND, 0)));
        assert_eq!(sanitize_mode(7), Err(EINVAL));
        assert_eq!(sanitize_mode(-1), Err(EINVAL));
        assert_eq!(
            sanitize_mode(MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES),
            Err(EINVAL)
        );
        assert_eq!(
            sanitize_mode(MPOL_INTERLEAVE | MPOL_F_NUMA_BALANCING),
            Err(EINVAL)
        );
        assert!(sanitize_mode(MPOL_BIND | MPOL_F_NUMA_BALANCING).is_ok());
    }

    #[test]
    fn policies_need_the_nodemask_their_mode_needs() {
        let all = mask(&[0, 1]);
        assert_eq!(Policy::new(MPOL_DEFAULT, 0, mask(&[]), all), Ok(None));
        assert_eq!(Policy::new(MPOL_DEFAULT, 0, mask(&[1]), all), Err(EINVAL));
        assert_eq!(Policy::new(MPOL_BIND, 0, mask(&[]), all), Err(EINVAL));
        assert_eq!(Policy::new(MPOL_INTERLEAVE, 0, mask(&[]), all), Err(EINVAL));
        assert_eq!(Policy::new(MPOL_LOCAL, 0, mask(&[0]), all), Err(EINVAL));
        // Nodes without memory are dropped; none left is EINVAL.
        assert_eq!(Policy::new(MPOL_BIND, 0, mask(&[5]), all), Err(EINVAL));
        let p = Policy::new(MPOL_BIND, 0, mask(&[1, 5]), all)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.mode, p.nodes, p.reported_nodes()),
            (Mode::Bind, mask(&[1]), mask(&[1]))
        );
        // An empty preferred set is local allocation.
        let p = Policy::new(MPOL_PREFERRED, 0, mask(&[]), all)
            .unwrap()
            .unwrap();
        assert_eq!(p.mode, Mode::Local);
        assert_eq!(
            Policy::new(MPOL_PREFERRED, MPOL_F_STATIC_NODES, mask(&[]), all),
            Err(EINVAL)
        );
        // Preferred keeps its first node; static reports what was given.
        let p = Policy::new(MPOL_PREFERRED, MPOL_F_STATIC_NODES, mask(&[1, 3]), all)
            .unwrap()
            .unwrap();
        assert_eq!((p.nodes, p.reported_nodes()), (mask(&[1]), mask(&[1, 3])));
        assert_eq!(p.mode_word(), MPOL_PREFERRED | MPOL_F_STATIC_NODES);
        // Relative: bit n is the n-th allowed node.
        let p = Policy::new(
            MPOL_INTERLEAVE,
            MPOL_F_RELATIVE_NODES,
            mask(&[0, 3]),
            mask(&[2, 4]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.nodes, mask(&[2, 4]));
    }

    #[test]
    fn nodemasks_are_read_with_linuxs_off_by_one_and_high_bits_checked() {
        let words = [0b1011u64, 0, 1];
        let read = |i: u64| words.get(i as usize).copied().ok_or(EFAULT);
        // maxnode 3 keeps 2 bits.
        assert_eq!(read_nodemask(3, false, read), Ok(mask(&[0, 1])));
        assert_eq!(read_nodemask(1, false, read), Ok(NodeMask::default()));
        assert_eq!(read_nodemask(65, false, read), Ok(NodeMask::bits(0b1011)));
        assert_eq!(
            read_nodemask(64 * 3 + 1, false, read),
            Ok(mask(&[0, 1, 3, 128]))
        );
        assert_eq!(read_nodemask(64 * 4 + 1, false, read), Err(EFAULT));
        assert_eq!(read_nodemask(5, true, read), Ok(NodeMask::default()));
        // Beyond MAX_NUMNODES the bits must be clear.
        let mut wide = [0u64; 17];
        wide[0] = 0b11;
        let read = |i: u64| wide.get(i as usize).copied().ok_or(EFAULT);
        assert_eq!(read_nodemask(64 * 17 + 1, false, read), Ok(mask(&[0, 1])));
        wide[16] = 1;
        let read = |i: u64| wide.get(i as usize).copied().ok_or(EFAULT);
        assert_eq!(read_nodemask(64 * 17 + 1, false, read), Err(EINVAL));
        assert_eq!(read_nodemask(4096 * 8 + 2, false, read), Err(EINVAL));
    }

    #[test]
    fn placement_follows_the_policy_and_falls_back_by_distance() {
        // Pools 0 (node 0), 1 (node 2), 2 (node 1).
        let d = [
            (0, 1, 20),
            (1, 0, 20),
            (0, 2, 30),
            (2, 0, 30),
            (1, 2, 15),
            (2, 1, 15),
        ];
        let map = NodeMap::new(&[0, 2, 1], 0, &d);
        assert_eq!(map.online(), mask(&[0, 1, 2]));
        assert_eq!(map.placement(None, 0, 0), (vec![0], 0, false));
        assert_eq!(map.placement(None, 2, 0), (vec![2], 1, false));
        let bind = Policy::new(MPOL_BIND, 0, mask(&[1, 2]), map.online()).unwrap();
        assert_eq!(map.placement(bind.as_ref(), 0, 0), (vec![2, 1], 1, false));
        let pref = Policy::new(MPOL_PREFERRED, 0, mask(&[2]), map.online()).unwrap();
        assert_eq!(
            map.placement(pref.as_ref(), 0, 0),
            (vec![1, 2, 0], 2, false)
        );
        let il = Policy::new(MPOL_INTERLEAVE, 0, mask(&[0, 1]), map.online()).unwrap();
        assert_eq!(map.placement(il.as_ref(), 0, 4).1, 0);
        assert_eq!(map.placement(il.as_ref(), 0, 5).1, 1);
    }

    #[test]
    fn counters_say_where_pages_went_and_where_they_were_meant_to() {
        let mut map = NodeMap::new(&[0, 1], 0, &[]);
        map.count_allocation(0, 0, false, 1);
        map.count_allocation(1, 1, true, 1);
        map.count_allocation(1, 0, false, 1);
        let (a, b) = (map.counters_of(0), map.counters_of(1));
        assert_eq!((a.numa_hit, a.numa_foreign, a.local_node), (1, 1, 1));
        assert_eq!(
            (b.numa_hit, b.numa_miss, b.interleave_hit, b.other_node),
            (1, 1, 1, 2)
        );
        assert_eq!(map.distance(0, 1), 20);
        let words = mask(&[0, 1, 33]).hex_words();
        assert_eq!(words.split(',').count(), 32);
        assert!(words.ends_with(",00000002,00000003"), "{words}");
        assert_eq!(mask(&[3, 700]).first(), Some(3));
        assert_eq!(mask(&[700]).first(), Some(700));
    }
}
