//! What sits behind the bus: memory controllers, behind the [`Backend`]
//! trait, and the node map that routes a line to one.
//!
//! Controllers are built by their technology (`crate::technology`: the
//! DDR3 controller of `rvnvmm-dram`, a fixed-latency one, ...).

use crate::time::Ps;
use crate::MemsysError;

/// Where a line request goes, as the memory system's node map found it: a
/// backend never looks up addresses itself, so a boundary the control page
/// moves is moved in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeAddr {
    /// Which of the backend's nodes: their index among the regions naming
    /// its controller, in the order of their names.
    pub node: usize,
    /// Bytes from the node's current base to `paddr`.
    pub offset: u64,
    /// The physical address (line-aligned).
    pub paddr: u64,
}

impl NodeAddr {
    /// `paddr` in node 0 of a backend whose node starts at 0 (for tests of
    /// a backend alone).
    #[cfg(test)]
    pub(crate) fn in_first_node(paddr: u64) -> NodeAddr {
        NodeAddr {
            node: 0,
            offset: paddr,
            paddr,
        }
    }
}

/// A memory controller as the bus sees it. Addresses are physical
/// (line-aligned); times are absolute [`Ps`].
pub trait Backend {
    /// A line read arriving at the controller input at `now`; returns when
    /// its data leaves the controller.
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps;
    /// A posted line write arriving at `now`; returns when the controller
    /// accepted it (its input or write queue took it). The write completes
    /// later, in the controller.
    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps;
    /// Lets the controller run up to `now` (drain queues, precharge).
    fn advance(&mut self, now: Ps);
    /// End of the run at `now`: complete all queued work so the statistics
    /// are final (default: [`Backend::advance`]).
    fn drain(&mut self, now: Ps) {
        self.advance(now);
    }
    /// Per-node statistics for the stats JSON: `(node name, object)`.
    /// `nodes` names the backend's nodes in [`NodeAddr::node`] order;
    /// `sim_time_ns` is the run's simulated time (for rates).
    fn node_stats(&self, nodes: &[&str], sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        let _ = (nodes, sim_time_ns);
        Vec::new()
    }
    /// Drops the statistics.
    fn reset_stats(&mut self) {}
    /// Applies `settings` (keys of the technology, values as `--set` writes
    /// them) to node `node` at run time, as one change.
    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        let _ = settings;
        Err(MemsysError::Unsupported {
            region: node.to_string(),
            what: "change the settings",
        })
    }
}

/// A controller behind a shared box (what a technology builds).
impl<B: Backend + ?Sized> Backend for Box<B> {
    #[inline]
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        (**self).read(at, now)
    }
    #[inline]
    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        (**self).write(at, now)
    }
    fn advance(&mut self, now: Ps) {
        (**self).advance(now)
    }
    fn drain(&mut self, now: Ps) {
        (**self).drain(now)
    }
    fn node_stats(&self, nodes: &[&str], sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        (**self).node_stats(nodes, sim_time_ns)
    }
    fn reset_stats(&mut self) {
        (**self).reset_stats()
    }
    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        (**self).configure(node, settings)
    }
}

/// A backend behind a fixed-latency crossing (`interface_latency_ns`):
/// requests reach it `each_way` later, read data comes back `each_way`
/// later. The crossing is a pipeline that buffers posted writes, so a writer
/// waits only if the backend itself holds the write back.
pub struct Crossing<B> {
    /// The backend behind the crossing.
    pub inner: B,
    /// Latency of each direction.
    pub each_way: Ps,
}

impl<B: Backend> Backend for Crossing<B> {
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        let d = self.each_way;
        self.inner.read(at, now + d) + d
    }

    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        let d = self.each_way;
        self.inner.write(at, now + d).saturating_sub(d).max(now)
    }

    fn advance(&mut self, now: Ps) {
        // Whatever arrives later reaches the backend after now + each_way.
        self.inner.advance(now + self.each_way)
    }

    fn drain(&mut self, now: Ps) {
        self.inner.drain(now + self.each_way)
    }

    fn node_stats(&self, nodes: &[&str], sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        self.inner.node_stats(nodes, sim_time_ns)
    }

    fn reset_stats(&mut self) {
        self.inner.reset_stats()
    }

    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        self.inner.configure(node, settings)
    }
}

/// A shared handle, so a test can keep looking at a backend it gave away.
impl<B: Backend> Backend for std::sync::Arc<std::sync::Mutex<B>> {
    fn read(&mut self, at: NodeAddr, now: Ps) -> Ps {
        lock(self).read(at, now)
    }
    fn write(&mut self, at: NodeAddr, now: Ps) -> Ps {
        lock(self).write(at, now)
    }
    fn advance(&mut self, now: Ps) {
        lock(self).advance(now)
    }
    fn drain(&mut self, now: Ps) {
        lock(self).drain(now)
    }
    fn node_stats(&self, nodes: &[&str], sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        lock(self).node_stats(nodes, sim_time_ns)
    }
    fn reset_stats(&mut self) {
        lock(self).reset_stats()
    }
    fn configure(&mut self, node: &str, settings: &[(&str, String)]) -> Result<(), MemsysError> {
        lock(self).configure(node, settings)
    }
}

fn lock<B>(m: &std::sync::Mutex<B>) -> std::sync::MutexGuard<'_, B> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The controllers handed to [`crate::MemorySystem::with_backends`]: one
/// `(controller name, model)` per `[memory.controllers.NAME]` that a region
/// names.
pub type Backends = Vec<(String, Box<dyn Backend + Send>)>;

/// One memory node's route: `[base, end)` goes to backend `backend` as its
/// node `node`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Route {
    pub(crate) base: u64,
    pub(crate) end: u64,
    pub(crate) backend: usize,
    /// The node's index among its backend's ([`NodeAddr::node`]).
    pub(crate) node: usize,
    /// Index into the memory system's region list.
    pub(crate) region: usize,
}

impl Route {
    /// Where `paddr`, which the route holds, goes.
    #[inline(always)]
    pub(crate) fn at(&self, paddr: u64) -> NodeAddr {
        NodeAddr {
            node: self.node,
            offset: paddr - self.base,
            paddr,
        }
    }
}

/// The node map: every memory node's route, sorted by base; the one place
/// the machine keeps where each node begins and ends.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    routes: Vec<Route>,
}

impl Routes {
    pub(crate) fn new(mut routes: Vec<Route>) -> Routes {
        routes.sort_by_key(|r| r.base);
        Routes { routes }
    }

    /// The route of `paddr`, if it is in a node.
    #[inline]
    pub(crate) fn find(&self, paddr: u64) -> Option<&Route> {
        let i = self.routes.partition_point(|r| r.base <= paddr);
        let r = self.routes.get(i.checked_sub(1)?)?;
        (paddr < r.end).then_some(r)
    }

    /// Moves the start of region `upper`'s node, and the end of the node of
    /// the same backend that ends where it starts, to `boundary`: 4 KiB
    /// aligned, and each keeps at least a page.
    pub(crate) fn move_boundary(
        &mut self,
        upper: usize,
        boundary: u64,
    ) -> Result<(), BoundaryError> {
        let i = self
            .routes
            .iter()
            .position(|r| r.region == upper)
            .ok_or(BoundaryError::NoNode)?;
        let (base, end, backend) = (
            self.routes[i].base,
            self.routes[i].end,
            self.routes[i].backend,
        );
        let lower = self
            .routes
            .iter()
            .position(|r| r.end == base && r.backend == backend)
            .ok_or(BoundaryError::NoneBelow)?;
        let low = self.routes[lower].base;
        if !boundary.is_multiple_of(4096) || boundary <= low || boundary >= end {
            return Err(BoundaryError::Outside { low, end });
        }
        self.routes[lower].end = boundary;
        self.routes[i].base = boundary;
        Ok(())
    }
}

/// Why [`Routes::move_boundary`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoundaryError {
    /// The region is no node of the map.
    NoNode,
    /// No node of the same controller ends where it begins.
    NoneBelow,
    /// The boundary is misaligned or outside `(low, end)`.
    Outside {
        /// Base of the node below.
        low: u64,
        /// End of the node.
        end: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::technology::fixed_latency::FixedLatency;

    fn at(paddr: u64) -> NodeAddr {
        NodeAddr::in_first_node(paddr)
    }

    #[test]
    fn a_crossing_delays_requests_and_read_data_but_buffers_writes() {
        let mut c = Crossing {
            inner: FixedLatency::new(100, 0),
            each_way: 30,
        };
        assert_eq!(c.read(at(0x40), 1000), 1000 + 30 + 100 + 30);
        assert_eq!(c.write(at(0x80), 2000), 2000);
        c.advance(3000);
        assert_eq!(c.inner.log, [(false, 0x40, 1030), (true, 0x80, 2030)]);
        assert_eq!(c.inner.advanced_to, 3030);
        // A write the backend accepts late holds the writer back as long.
        let mut c = Crossing {
            inner: FixedLatency::new(0, 500),
            each_way: 30,
        };
        assert_eq!(c.write(at(0), 1000), 1500);
    }

    #[test]
    fn routing() {
        let route = |base, end, region| Route {
            base,
            end,
            backend: 0,
            node: region,
            region,
        };
        let mut r = Routes::new(vec![
            route(0xC000_0000, 0x1_8000_0000, 1),
            route(0x8000_0000, 0xC000_0000, 0),
        ]);
        assert!(r.find(0x7fff_ffff).is_none());
        assert_eq!(r.find(0x8000_0000).unwrap().region, 0);
        assert_eq!(r.find(0xbfff_ffff).unwrap().region, 0);
        let upper = *r.find(0xC000_0040).unwrap();
        assert_eq!((upper.region, upper.at(0xC000_0040).offset), (1, 0x40));
        assert!(r.find(0x1_8000_0000).is_none());

        // The boundary moves in the one map: lookups and offsets follow.
        assert_eq!(r.move_boundary(1, 0xA000_0000), Ok(()));
        let moved = *r.find(0xA000_0040).unwrap();
        assert_eq!((moved.region, moved.at(0xA000_0040).offset), (1, 0x40));
        assert_eq!(r.find(0x9fff_ffff).unwrap().region, 0);
        let outside = Err(BoundaryError::Outside {
            low: 0x8000_0000,
            end: 0x1_8000_0000,
        });
        assert_eq!(r.move_boundary(1, 0xA000_0001), outside);
        assert_eq!(r.move_boundary(1, 0x8000_0000), outside);
        assert_eq!(
            r.move_boundary(0, 0x9000_0000),
            Err(BoundaryError::NoneBelow)
        );
        assert_eq!(r.move_boundary(7, 0x9000_0000), Err(BoundaryError::NoNode));
    }
}
