//! What sits behind the bus: memory controllers, behind the [`Backend`]
//! trait.
//!
//! The real controllers are `rvnvmm_dram::Controller` (DDR3 banks and row
//! buffers with the three NVMM methods); [`FixedLatency`] is a trivial one
//! for tests and for machines without a controller model.

use rvnvmm_config::NvmmParams;

use crate::time::Ps;
use crate::MemsysError;

/// A memory controller as the bus sees it. Addresses are physical
/// (line-aligned); times are absolute [`Ps`].
pub trait Backend {
    /// A line read arriving at the controller input at `now`; returns when
    /// its data leaves the controller.
    fn read(&mut self, paddr: u64, now: Ps) -> Ps;
    /// A posted line write arriving at `now`; returns when the controller
    /// accepted it (its input or write queue took it). The write completes
    /// later, in the controller.
    fn write(&mut self, paddr: u64, now: Ps) -> Ps;
    /// Lets the controller run up to `now` (drain queues, precharge).
    fn advance(&mut self, now: Ps);
    /// End of the run at `now`: complete all queued work so the statistics
    /// are final (default: [`Backend::advance`]).
    fn drain(&mut self, now: Ps) {
        self.advance(now);
    }
    /// Per-region statistics for the stats JSON: `(region name, object)`.
    /// `sim_time_ns` is the run's simulated time (for rates).
    fn region_stats(&self, sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        let _ = sim_time_ns;
        Vec::new()
    }
    /// Drops the statistics.
    fn reset_stats(&mut self) {}
    /// Moves the start of NVMM region `region` (and the end of the DRAM
    /// region below it) to `boundary` at run time.
    fn set_boundary(&mut self, region: &str, boundary: u64) -> Result<(), MemsysError> {
        let _ = boundary;
        Err(MemsysError::Unsupported {
            region: region.to_string(),
            what: "move the boundary",
        })
    }
    /// Changes the NVMM emulation of one of its regions at run time.
    fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), MemsysError> {
        let _ = params;
        Err(MemsysError::Unsupported {
            region: region.to_string(),
            what: "change the NVMM setting",
        })
    }
}

/// A controller with constant latencies: a read's data leaves `read_ps`
/// after it arrives, a write is accepted `write_ps` after it arrives. It
/// records every request, for tests.
#[derive(Clone, Debug, Default)]
pub struct FixedLatency {
    /// Arrival to data out.
    pub read_ps: Ps,
    /// Arrival to acceptance.
    pub write_ps: Ps,
    /// Every request in arrival order: `(is_write, paddr, arrival)`.
    pub log: Vec<(bool, u64, Ps)>,
    /// The latest time given to `advance`.
    pub advanced_to: Ps,
}

impl FixedLatency {
    /// A controller answering reads after `read_ps` and accepting writes
    /// after `write_ps`.
    pub fn new(read_ps: Ps, write_ps: Ps) -> FixedLatency {
        FixedLatency {
            read_ps,
            write_ps,
            ..FixedLatency::default()
        }
    }

    /// Reads received.
    pub fn reads(&self) -> usize {
        self.log.iter().filter(|r| !r.0).count()
    }

    /// Writes received.
    pub fn writes(&self) -> usize {
        self.log.iter().filter(|r| r.0).count()
    }
}

impl Backend for FixedLatency {
    fn read(&mut self, paddr: u64, now: Ps) -> Ps {
        self.log.push((false, paddr, now));
        now + self.read_ps
    }

    fn write(&mut self, paddr: u64, now: Ps) -> Ps {
        self.log.push((true, paddr, now));
        now + self.write_ps
    }

    fn advance(&mut self, now: Ps) {
        self.advanced_to = self.advanced_to.max(now);
    }

    fn reset_stats(&mut self) {
        self.log.clear();
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
    fn read(&mut self, paddr: u64, now: Ps) -> Ps {
        let d = self.each_way;
        self.inner.read(paddr, now + d) + d
    }

    fn write(&mut self, paddr: u64, now: Ps) -> Ps {
        let d = self.each_way;
        self.inner.write(paddr, now + d).saturating_sub(d).max(now)
    }

    fn advance(&mut self, now: Ps) {
        // Whatever arrives later reaches the backend after now + each_way.
        self.inner.advance(now + self.each_way)
    }

    fn drain(&mut self, now: Ps) {
        self.inner.drain(now + self.each_way)
    }

    fn region_stats(&self, sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        self.inner.region_stats(sim_time_ns)
    }

    fn reset_stats(&mut self) {
        self.inner.reset_stats()
    }

    fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), MemsysError> {
        self.inner.set_nvmm(region, params)
    }

    fn set_boundary(&mut self, region: &str, boundary: u64) -> Result<(), MemsysError> {
        self.inner.set_boundary(region, boundary)
    }
}

/// A shared handle, so a test can keep looking at a backend it gave away.
impl<B: Backend> Backend for std::sync::Arc<std::sync::Mutex<B>> {
    fn read(&mut self, paddr: u64, now: Ps) -> Ps {
        lock(self).read(paddr, now)
    }
    fn write(&mut self, paddr: u64, now: Ps) -> Ps {
        lock(self).write(paddr, now)
    }
    fn advance(&mut self, now: Ps) {
        lock(self).advance(now)
    }
    fn drain(&mut self, now: Ps) {
        lock(self).drain(now)
    }
    fn region_stats(&self, sim_time_ns: u64) -> Vec<(String, serde_json::Value)> {
        lock(self).region_stats(sim_time_ns)
    }
    fn reset_stats(&mut self) {
        lock(self).reset_stats()
    }
    fn set_nvmm(&mut self, region: &str, params: NvmmParams) -> Result<(), MemsysError> {
        lock(self).set_nvmm(region, params)
    }
    fn set_boundary(&mut self, region: &str, boundary: u64) -> Result<(), MemsysError> {
        lock(self).set_boundary(region, boundary)
    }
}

fn lock<B>(m: &std::sync::Mutex<B>) -> std::sync::MutexGuard<'_, B> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The controllers handed to [`crate::MemorySystem::with_backends`]: one
/// `(controller name, model)` per `[memory.controllers.NAME]` that a region
/// names.
pub type Backends = Vec<(String, Box<dyn Backend + Send>)>;

/// One region's route: `[base, end)` goes to backend `backend`.
#[derive(Clone, Debug)]
pub(crate) struct Route {
    pub(crate) base: u64,
    pub(crate) end: u64,
    pub(crate) backend: usize,
    /// Index into the memory system's region list.
    pub(crate) region: usize,
}

/// Regions sorted by base, for address routing on a miss.
#[derive(Clone, Debug, Default)]
pub(crate) struct Routes {
    routes: Vec<Route>,
}

impl Routes {
    pub(crate) fn new(mut routes: Vec<Route>) -> Routes {
        routes.sort_by_key(|r| r.base);
        Routes { routes }
    }

    /// The route of `paddr`, if it is in a region.
    #[inline]
    pub(crate) fn find(&self, paddr: u64) -> Option<&Route> {
        let i = self.routes.partition_point(|r| r.base <= paddr);
        let r = self.routes.get(i.checked_sub(1)?)?;
        (paddr < r.end).then_some(r)
    }

    /// Moves the boundary between the route ending at `boundary_was` and the
    /// one starting there (region `upper`) to `boundary`.
    pub(crate) fn move_boundary(&mut self, upper: usize, boundary: u64) {
        let Some(i) = self.routes.iter().position(|r| r.region == upper) else {
            return;
        };
        let was = self.routes[i].base;
        self.routes[i].base = boundary;
        if let Some(lower) = self.routes.iter_mut().find(|r| r.end == was) {
            lower.end = boundary;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_delays_requests_and_read_data_but_buffers_writes() {
        let mut c = Crossing {
            inner: FixedLatency::new(100, 0),
            each_way: 30,
        };
        assert_eq!(c.read(0x40, 1000), 1000 + 30 + 100 + 30);
        assert_eq!(c.write(0x80, 2000), 2000);
        c.advance(3000);
        assert_eq!(c.inner.log, [(false, 0x40, 1030), (true, 0x80, 2030)]);
        assert_eq!(c.inner.advanced_to, 3030);
        // A write the backend accepts late holds the writer back as long.
        let mut c = Crossing {
            inner: FixedLatency::new(0, 500),
            each_way: 30,
        };
        assert_eq!(c.write(0, 1000), 1500);
    }

    #[test]
    fn routing() {
        let r = Routes::new(vec![
            Route {
                base: 0xC000_0000,
                end: 0x1_8000_0000,
                backend: 0,
                region: 1,
            },
            Route {
                base: 0x8000_0000,
                end: 0xC000_0000,
                backend: 0,
                region: 0,
            },
        ]);
        assert!(r.find(0x7fff_ffff).is_none());
        assert_eq!(r.find(0x8000_0000).unwrap().region, 0);
        assert_eq!(r.find(0xbfff_ffff).unwrap().region, 0);
        assert_eq!(r.find(0xC000_0000).unwrap().region, 1);
        assert!(r.find(0x1_8000_0000).is_none());
    }

    #[test]
    fn fixed_latency() {
        let mut f = FixedLatency::new(100, 5);
        assert_eq!(f.read(0x40, 1000), 1100);
        assert_eq!(f.write(0x80, 2000), 2005);
        assert_eq!((f.reads(), f.writes()), (1, 1));
        assert!(f.set_nvmm("nvmm", NvmmParams::default()).is_err());
    }
}
