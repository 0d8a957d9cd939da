//! `--page-heat FILE --page-heat-window NS` (docs/page-heat.md): the
//! recorder both `run` and `boot` hand to their machine.
use rvnvmm_config::{Config, Model};
use rvnvmm_heat::{Recorder, Region};
use std::path::Path;

/// The recorder writing `path` for machine `cfg`, in windows of
/// `window_ns`. Refused for an untimed machine: the memory model counts.
pub(crate) fn recorder(cfg: &Config, path: &Path, window_ns: u64) -> Result<Recorder, String> {
    if cfg.machine.model != Model::Timing {
        return Err(
            "--page-heat needs the timing model (machine.model = \"timing\"): the \
                    memory system counts what reaches each page"
                .into(),
        );
    }
    let regions: Vec<Region> = cfg
        .memory
        .nodes()
        .iter()
        .map(|n| Region {
            name: n.name.to_string(),
            node: n.id,
            base: n.region.base,
            size: n.region.size,
        })
        .collect();
    Recorder::create(path, window_ns, &regions)
}
