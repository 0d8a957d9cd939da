//! The memory nodes in the emulated `/sys/devices/system/node` (Linux's
//! drivers/base/node.c): the node lists, and each node's `cpumap`,
//! `cpulist`, `distance`, `meminfo` and `numastat`, which libnuma,
//! `numactl` and hwloc read.

use super::*;
use crate::numa::{NodeCounters, NodeMask};

/// Where the node tree is in the guest.
pub(super) const SYS_NODE: &[u8] = b"/sys/devices/system/node";

/// The node lists of `/sys/devices/system/node`.
pub const NODE_LISTS: [&str; 5] = [
    "has_cpu",
    "has_memory",
    "has_normal_memory",
    "online",
    "possible",
];

/// A file of a node's directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeFile {
    /// `cpumap`: the node's CPUs as a mask.
    CpuMap,
    /// `cpulist`: the node's CPUs as a list.
    CpuList,
    /// `distance`: the distances to every node.
    Distance,
    /// `meminfo`: the node's memory.
    Meminfo,
    /// `numastat`: where pages went.
    Numastat,
}

impl NodeFile {
    /// The files of a node's directory, by name.
    pub const LISTED: [(&'static str, NodeFile); 5] = [
        ("cpulist", NodeFile::CpuList),
        ("cpumap", NodeFile::CpuMap),
        ("distance", NodeFile::Distance),
        ("meminfo", NodeFile::Meminfo),
        ("numastat", NodeFile::Numastat),
    ];

    pub(super) fn by_name(name: &[u8]) -> Option<NodeFile> {
        NodeFile::LISTED
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|&(_, f)| f)
    }
}

/// The emulated file of `rest` (a path below `/sys/devices/system/node/`)
/// on a machine whose nodes are `nodes`.
pub(super) fn node_file(rest: &[u8], nodes: NodeMask) -> Option<ProcFile> {
    if let Some(&list) = NODE_LISTS.iter().find(|n| n.as_bytes() == rest) {
        return Some(ProcFile::NodeList {
            cpus: list == "has_cpu",
        });
    }
    let (dir, file) = split_first(rest)?;
    let node: u32 = std::str::from_utf8(dir.strip_prefix(b"node")?)
        .ok()?
        .parse()
        .ok()?;
    if !nodes.has(node) || dir != format!("node{node}").as_bytes() {
        return None;
    }
    Some(ProcFile::Node {
        node,
        file: NodeFile::by_name(file)?,
    })
}

/// Writes the node tree under `sys` (the tree's `sys/devices/system`):
/// a directory per node with its files, links between each node and its
/// CPUs as Linux makes them.
pub(super) fn write_tree(
    system: &std::path::Path,
    nodes: NodeMask,
    cpu_node: u32,
    harts: usize,
) -> std::io::Result<()> {
    use std::os::unix::fs::symlink;
    let dir = system.join("node");
    std::fs::create_dir_all(&dir)?;
    for name in NODE_LISTS {
        std::fs::write(dir.join(name), "")?;
    }
    for id in nodes.iter() {
        let node = dir.join(format!("node{id}"));
        std::fs::create_dir_all(&node)?;
        for (name, _) in NodeFile::LISTED {
            std::fs::write(node.join(name), "")?;
        }
        if id == cpu_node {
            for h in 0..harts {
                symlink(format!("../../cpu/cpu{h}"), node.join(format!("cpu{h}")))?;
                symlink(
                    format!("../../node/node{id}"),
                    system.join(format!("cpu/cpu{h}/node{id}")),
                )?;
            }
        }
    }
    Ok(())
}

/// A node set as Linux prints a node list (`0-1,3`).
pub fn node_list(nodes: NodeMask) -> String {
    let ids: Vec<usize> = nodes.iter().map(|i| i as usize).collect();
    cpu_list(&ids)
}

/// A policy as Linux's `mpol_to_str` prints it in `numa_maps`
/// (`bind:0-1`, `interleave=static:1`, `local`).
pub fn policy_text(p: &crate::numa::Policy) -> String {
    use crate::numa::{Mode, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES};
    let mut s = p.mode.name().to_string();
    if p.flags & MPOL_F_STATIC_NODES != 0 {
        s += "=static";
    } else if p.flags & MPOL_F_RELATIVE_NODES != 0 {
        s += "=relative";
    }
    if p.mode != Mode::Local {
        s += ":";
        s += &node_list(p.nodes);
    }
    s
}

/// A node's `meminfo`: the lines libnuma and `numactl -H` read, in
/// Linux's layout.
pub fn node_meminfo(node: u32, total: u64, free: u64) -> String {
    let line = |key: &str, bytes: u64| format!("Node {node} {key:<16}{:>8} kB\n", bytes >> 10);
    [
        line("MemTotal:", total),
        line("MemFree:", free),
        line("MemUsed:", total.saturating_sub(free)),
    ]
    .concat()
}

/// A node's `numastat`.
pub fn node_numastat(c: &NodeCounters) -> String {
    format!(
        "numa_hit {}\nnuma_miss {}\nnuma_foreign {}\ninterleave_hit {}\nlocal_node {}\nother_node {}\n",
        c.numa_hit, c.numa_miss, c.numa_foreign, c.interleave_hit, c.local_node, c.other_node
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_paths_name_only_the_machines_nodes() {
        let nodes = NodeMask::bits(0b101);
        assert_eq!(
            node_file(b"node2/distance", nodes),
            Some(ProcFile::Node {
                node: 2,
                file: NodeFile::Distance
            })
        );
        assert_eq!(node_file(b"node1/distance", nodes), None);
        assert_eq!(node_file(b"node02/distance", nodes), None);
        assert_eq!(node_file(b"node0/vmstat", nodes), None);
        assert_eq!(
            node_file(b"has_cpu", nodes),
            Some(ProcFile::NodeList { cpus: true })
        );
        assert_eq!(
            node_file(b"online", nodes),
            Some(ProcFile::NodeList { cpus: false })
        );
    }

    #[test]
    fn policies_print_as_linux_prints_them() {
        use crate::numa::*;
        let p = Policy::new(
            MPOL_INTERLEAVE,
            MPOL_F_RELATIVE_NODES,
            NodeMask::bits(0b1001),
            NodeMask::bits(0b10100),
        )
        .unwrap()
        .unwrap();
        assert_eq!(policy_text(&p), "interleave=relative:2,4");
        let p = Policy::new(MPOL_LOCAL, 0, NodeMask::default(), NodeMask::bits(1))
            .unwrap()
            .unwrap();
        assert_eq!(policy_text(&p), "local");
        assert_eq!(node_list(NodeMask::bits(0b1011)), "0-1,3");
    }

    #[test]
    fn meminfo_and_numastat_in_linuxs_layout() {
        assert_eq!(
            node_meminfo(1, 16 << 20, 4 << 20),
            "Node 1 MemTotal:          16384 kB\nNode 1 MemFree:            4096 kB\nNode 1 MemUsed:           12288 kB\n"
        );
        let c = NodeCounters {
            numa_hit: 3,
            ..Default::default()
        };
        assert!(node_numastat(&c).starts_with("numa_hit 3\nnuma_miss 0\n"));
    }
}
