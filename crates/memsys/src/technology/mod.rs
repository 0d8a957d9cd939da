//! Memory technologies: what a controller behind the bus is, chosen by name
//! (`memory.controllers.NAME.technology`) from [`REGISTRY`].
//!
//! A technology builds the [`Backend`] of one controller from the machine's
//! config and the memory nodes the controller serves; the memory system
//! routes each line request to it by its own node map (the one declaration
//! of where each node begins and ends) and says which of those nodes the
//! line is in ([`crate::NodeAddr`]). The controller-independent
//! `interface_latency_ns` crossing is put in front of every technology here,
//! and a controller with a `[…link]` table goes behind its link
//! ([`cxl::CxlLink`]).
//!
//! # Adding a technology
//! One new file in this directory: a type implementing [`Backend`] and a
//! `pub const REGISTRATION: Registration` naming it and building it from
//! its controller's `params` (`[memory.controllers.NAME.params]`); and one
//! line in the `technologies!` list below. `fixed_latency.rs` is the
//! smallest example.

use rvnvmm_config::{Config, Region};

use crate::backend::{Backend, Backends, Crossing};
use crate::time::ns_to_ps;
use crate::MemsysError;

/// Declares the technology modules and [`REGISTRY`]: one line each.
macro_rules! technologies {
    ($($(#[$meta:meta])* $module:ident,)+) => {
        $( $(#[$meta])* pub mod $module; )+

        /// Every registered technology, in the order listed.
        pub const REGISTRY: &[Registration] = &[$( $(#[$meta])* $module::REGISTRATION, )+];
    };
}

technologies! {
    ddr3,
    fixed_latency,
}

/// A link in front of a controller of any technology (not a technology).
pub mod cxl;

/// What a technology is given to build one controller.
#[derive(Clone, Copy, Debug)]
pub struct Setup<'a> {
    /// The whole machine.
    pub cfg: &'a Config,
    /// The controller's name (`memory.controllers.NAME`).
    pub controller: &'a str,
    /// The memory nodes it serves, by name, in the order of their names:
    /// [`crate::NodeAddr::node`] indexes this list.
    pub nodes: &'a [(&'a str, &'a Region)],
    /// Bytes of the lines that cross the bus (the last-level cache's).
    pub line_bytes: u64,
}

impl Setup<'_> {
    /// The technology's setting `key` (`memory.controllers.NAME.params.KEY`),
    /// or `default` if the config gives none.
    pub fn param(&self, key: &str, default: f64) -> f64 {
        self.cfg.memory.controllers[self.controller]
            .params
            .get(key)
            .copied()
            .unwrap_or(default)
    }

    /// Refuses a `params` key not in `known` (a misspelt setting would
    /// otherwise be silently left at its default).
    pub fn only_params(&self, technology: &str, known: &[&str]) -> Result<(), MemsysError> {
        let params = &self.cfg.memory.controllers[self.controller].params;
        match params.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(MemsysError::Setting {
                key: format!("memory.controllers.{}.params.{k}", self.controller),
                problem: format!(
                    "technology '{technology}' has no such setting; its settings: {}",
                    known.join(", ")
                ),
            }),
        }
    }
}

/// One technology: its name and how it builds a controller.
#[derive(Clone, Copy)]
pub struct Registration {
    /// The name `memory.controllers.NAME.technology` selects it by.
    pub name: &'static str,
    /// Builds the controller described by `setup`.
    pub build: fn(&Setup<'_>) -> Result<Box<dyn Backend + Send>, MemsysError>,
}

/// The names of every registered technology.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|r| r.name).collect()
}

/// The controllers of `cfg` that some region names, each built by its
/// technology and put behind its `interface_latency_ns` crossing.
pub(crate) fn controllers(cfg: &Config, line_bytes: u64) -> Result<Backends, MemsysError> {
    let mut out: Backends = Vec::new();
    for (name, ctrl) in &cfg.memory.controllers {
        let nodes: Vec<(&str, &Region)> = cfg
            .memory
            .regions
            .iter()
            .filter(|(_, r)| &r.controller == name)
            .map(|(n, r)| (n.as_str(), r))
            .collect();
        if nodes.is_empty() {
            continue;
        }
        let technology = REGISTRY
            .iter()
            .find(|t| t.name == ctrl.technology)
            .ok_or_else(|| MemsysError::UnknownTechnology {
                controller: name.clone(),
                name: ctrl.technology.clone(),
                known: names(),
            })?;
        let setup = Setup {
            cfg,
            controller: name,
            nodes: &nodes,
            line_bytes,
        };
        let mut backend = (technology.build)(&setup)?;
        let each_way = ns_to_ps(ctrl.interface_latency_ns);
        if each_way > 0 {
            backend = Box::new(Crossing {
                inner: backend,
                each_way,
            });
        }
        // The link is between the host and the device; the crossing, the
        // device's own path to its controller's queues, is behind it.
        if let Some(link) = &ctrl.link {
            backend = Box::new(cxl::CxlLink::new(backend, link, line_bytes, name)?);
        }
        out.push((name.clone(), backend));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_technology_is_registered_once_and_the_default_is_one() {
        let mut all = names();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), REGISTRY.len());
        assert!(all.contains(&rvnvmm_config::DDR3_TECHNOLOGY));
    }

    #[test]
    fn an_unknown_technology_is_refused_with_the_known_ones() {
        let cfg =
            Config::from_toml_str("", &["memory.controllers.ddr3.technology=hbm9".into()]).unwrap();
        let err = crate::MemorySystem::new(&cfg, 1).unwrap_err().to_string();
        assert!(
            err.contains("hbm9") && err.contains("ddr3, fixed-latency"),
            "{err}"
        );
    }
}
