//! The machine's memory nodes as user mode sees them: ranges of guest
//! physical RAM, each of one kind and one NUMA node, and the frame pools
//! the address space takes its frames from.

use rvnvmm_mem::sv39::page_base;

/// One memory node: a range of guest RAM and its NUMA node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryNode {
    /// Its name in the machine description (`memory.NAME`), for messages
    /// that say which key sizes what ran out.
    pub name: String,
    /// Its NUMA node id (`memory.NAME.node`).
    pub id: u32,
    /// Guest physical base address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Non-volatile memory (`kind = "nvmm"`).
    pub nvmm: bool,
}

impl MemoryNode {
    /// `(base, size)`.
    pub fn range(&self) -> (u64, u64) {
        (self.base, self.size)
    }
}

/// The first DRAM node of `nodes`: where the process's frames come from.
pub fn dram_node(nodes: &[MemoryNode]) -> Option<&MemoryNode> {
    nodes.iter().find(|n| !n.nvmm)
}

/// The first NVMM node of `nodes`: what `/dev/nvmm` maps, where the heap
/// goes under `user.heap = "nvmm"` and the NVMM-backed directory lives.
pub fn nvmm_node(nodes: &[MemoryNode]) -> Option<&MemoryNode> {
    nodes.iter().find(|n| n.nvmm)
}

/// The frame pools of the address space over `nodes`, one per node: the
/// first DRAM node's is pool 0 (page tables and every frame but the heap's
/// come from it), the other nodes' follow in address order. The first NVMM
/// node gives only its upper half: the lower half is left to `/dev/nvmm`
/// windows, which programs map from offset 0, so the two never share frames
/// by default (and a window over heap frames in use is refused:
/// `Frames::claim`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FramePools {
    /// `(base, size)` of each pool.
    pub ranges: Vec<(u64, u64)>,
    /// The NUMA node of each pool.
    pub node_ids: Vec<u32>,
    /// The heap's pool: the first NVMM node's with `heap_on_nvmm`,
    /// otherwise 0.
    pub heap: usize,
}

/// The frame pools of `nodes` (see [`FramePools`]).
pub fn frame_pools(nodes: &[MemoryNode], heap_on_nvmm: bool) -> Result<FramePools, String> {
    let dram = dram_node(nodes).ok_or("the machine has no DRAM node for the process's memory")?;
    let nvmm = nvmm_node(nodes);
    let mut pools = vec![dram.range()];
    let mut node_ids = vec![dram.id];
    let mut heap = 0;
    for n in nodes.iter().filter(|n| *n != dram) {
        node_ids.push(n.id);
        if Some(n) == nvmm {
            if heap_on_nvmm {
                heap = pools.len();
            }
            let half = page_base(n.size / 2);
            pools.push((n.base + half, n.size - half));
        } else {
            pools.push(n.range());
        }
    }
    if heap_on_nvmm && nvmm.is_none() {
        return Err("user.heap = nvmm, but the machine has no NVMM region".into());
    }
    Ok(FramePools {
        ranges: pools,
        node_ids,
        heap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, id: u32, base: u64, size: u64, nvmm: bool) -> MemoryNode {
        MemoryNode {
            name: name.into(),
            id,
            base,
            size,
            nvmm,
        }
    }

    #[test]
    fn dram_is_pool_zero_and_the_first_nvmm_node_gives_its_upper_half() {
        let nodes = [
            node("pm", 0, 0x4000_0000, 0x4000_0000, true),
            node("dram", 1, 0x8000_0000, 0x4000_0000, false),
            node("far", 2, 0xC000_0000, 0x1000_0000, false),
            node("pm2", 3, 0x1_0000_0000, 0x1000_0000, true),
        ];
        let pools = frame_pools(&nodes, true).unwrap();
        assert_eq!(pools.node_ids, [1, 0, 2, 3]);
        let (pools, heap) = (pools.ranges, pools.heap);
        assert_eq!(
            pools,
            [
                (0x8000_0000, 0x4000_0000),
                (0x6000_0000, 0x2000_0000),
                (0xC000_0000, 0x1000_0000),
                (0x1_0000_0000, 0x1000_0000),
            ]
        );
        assert_eq!(heap, 1);
        assert_eq!(frame_pools(&nodes, false).unwrap().heap, 0);
        assert_eq!(nvmm_node(&nodes).unwrap().name, "pm");
        assert_eq!(dram_node(&nodes).unwrap().name, "dram");
    }

    #[test]
    fn a_machine_without_dram_or_without_the_nvmm_it_needs_is_refused() {
        let pm = node("pm", 0, 0x8000_0000, 0x1000_0000, true);
        let dram = node("dram", 0, 0x8000_0000, 0x1000_0000, false);
        assert!(frame_pools(std::slice::from_ref(&pm), false)
            .unwrap_err()
            .contains("no DRAM"));
        assert!(frame_pools(std::slice::from_ref(&dram), true)
            .unwrap_err()
            .contains("no NVMM"));
    }
}
