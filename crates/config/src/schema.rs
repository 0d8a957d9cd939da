//! The set of valid dotted keys, derived from the types themselves, plus the
//! serde glue for the map-typed `[memory]` section.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toml::{Table, Value};

use crate::{
    Config, ControllerConfig, KeepOpen, Link, LinkKind, Memory, Method, NvmmParams, PagePolicy,
    Refresh, Region, RegionKind, Replacement, Scheduler, SmtPolicy, TlbRefill, TrpOn,
};

/// The table key under `[memory]` that holds controllers; every other key
/// is a region.
pub(crate) const CONTROLLERS: &str = "controllers";

/// The table of a controller that holds its technology's own settings.
pub(crate) const PARAMS: &str = "params";

/// Top-level sections in the order they are listed.
pub(crate) const SECTIONS: &[&str] = &[
    "machine", "core", "cache", "tlb", "bus", "memory", "user", "cflush",
];

/// Keys whose integer values are addresses or sizes, rendered in hex.
pub(crate) const HEX_KEYS: &[&str] = &["base", "size", "stack_size"];

/// Region keys every region must give.
pub(crate) const REGION_REQUIRED: &[&str] = &["base", "size", "kind", "controller"];

/// What a leaf key accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeafKind {
    Int,
    Float,
    Bool,
    Str,
    Enum(&'static [&'static str]),
    Mapping,
}

impl LeafKind {
    pub(crate) fn expected(self) -> String {
        match self {
            LeafKind::Int => "a non-negative integer".into(),
            LeafKind::Float => "a number".into(),
            LeafKind::Bool => "true or false".into(),
            LeafKind::Str => "a string".into(),
            LeafKind::Enum(names) => format!("one of {}", quoted_list(names)),
            LeafKind::Mapping => {
                "a mapping string ('bank-row-column', 'row-bank-column' or a bit-field string)"
                    .into()
            }
        }
    }
}

pub(crate) fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The schema: fixed keys, and templates for the map-typed sections.
pub(crate) struct Schema {
    /// Full dotted keys outside `[memory]`.
    pub fixed: BTreeMap<String, LeafKind>,
    /// Keys relative to `memory.NAME`, with "only for NVMM regions".
    pub region: BTreeMap<String, (LeafKind, bool)>,
    /// Keys relative to `memory.controllers.NAME`.
    pub controller: BTreeMap<String, LeafKind>,
    /// Declaration order of fixed keys, and of region and controller keys
    /// (relative), for listings.
    order: BTreeMap<String, usize>,
}

pub(crate) fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(build_schema)
}

fn kind_of(key: &str, v: &Value) -> LeafKind {
    let last = key.rsplit('.').next().unwrap_or(key);
    match v {
        Value::Integer(_) => LeafKind::Int,
        Value::Float(_) => LeafKind::Float,
        Value::Boolean(_) => LeafKind::Bool,
        _ if key == "link.kind" || key.ends_with(".link.kind") => LeafKind::Enum(LinkKind::NAMES),
        _ => match last {
            "heap" | "kind" => LeafKind::Enum(RegionKind::NAMES),
            "method" => LeafKind::Enum(Method::NAMES),
            "pages" => LeafKind::Enum(PagePolicy::NAMES),
            "trp_on" => LeafKind::Enum(TrpOn::NAMES),
            "keep_open" => LeafKind::Enum(KeepOpen::NAMES),
            "replacement" => LeafKind::Enum(Replacement::NAMES),
            "scheduler" => LeafKind::Enum(Scheduler::NAMES),
            "smt_policy" => LeafKind::Enum(SmtPolicy::NAMES),
            "refill" => LeafKind::Enum(TlbRefill::NAMES),
            "mapping" => LeafKind::Mapping,
            "speed_bin" => LeafKind::Enum(crate::speed_bin::SPEED_BIN_NAMES),
            _ => LeafKind::Str,
        },
    }
}

/// Flattens a table into `(dotted key, leaf value)` pairs.
pub(crate) fn flatten(prefix: &str, t: &Table, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(sub) => flatten(&key, sub, out),
            _ => out.push((key, v.clone())),
        }
    }
}

fn to_table<T: Serialize>(v: &T) -> Table {
    match Value::try_from(v) {
        Ok(Value::Table(t)) => t,
        _ => unreachable!("config sections serialise to tables"),
    }
}

fn build_schema() -> Schema {
    // An exemplar with every optional key present.
    let mut ex = Config::default();
    let ctrl = ControllerConfig {
        speed_bin: Some(crate::speed_bin::SPEED_BIN_NAMES[0].to_string()),
        tccd_l_ns: Some(5.0),
        trrd_l_ns: Some(6.0),
        tfaw_ns: Some(30.0),
        refresh: Some(Refresh::default()),
        link: Some(Link::default()),
        ..ControllerConfig::default()
    };
    ex.memory.controllers = BTreeMap::from([("c".to_string(), ctrl.clone())]);
    let nvmm = Region {
        base: 0,
        size: 1,
        controller: "c".into(),
        nvmm: Some(NvmmParams::default()),
        node: Some(0),
        soft_reserved: true,
    };
    let dram = Region {
        nvmm: None,
        ..nvmm.clone()
    };
    ex.memory.regions = BTreeMap::from([("r".to_string(), nvmm.clone())]);

    let mut fixed = BTreeMap::new();
    let mut leaves = Vec::new();
    flatten("", &to_table(&ex), &mut leaves);
    for (k, v) in leaves {
        if !k.starts_with("memory.") {
            fixed.insert(k.clone(), kind_of(&k, &v));
        }
    }

    let mut dram_keys = Vec::new();
    flatten("", &to_table(&dram), &mut dram_keys);
    let mut nvmm_keys = Vec::new();
    flatten("", &to_table(&nvmm), &mut nvmm_keys);
    let region = nvmm_keys
        .iter()
        .map(|(k, v)| {
            let nvmm_only = !dram_keys.iter().any(|(d, _)| d == k);
            (k.clone(), (kind_of(k, v), nvmm_only))
        })
        .collect();

    let mut ctrl_keys = Vec::new();
    flatten("", &to_table(&ctrl), &mut ctrl_keys);
    let controller = ctrl_keys
        .iter()
        .map(|(k, v)| (k.clone(), kind_of(k, v)))
        .collect();

    // Declaration order, from the serialiser (which follows the structs).
    let mut order = BTreeMap::new();
    let mut section = String::new();
    for line in toml::to_string(&ex).unwrap_or_default().lines() {
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = h.to_string();
        } else if let Some((k, _)) = line.split_once(" = ") {
            let full = format!("{section}.{k}");
            let key = match full.strip_prefix("memory.controllers.c.") {
                Some(rel) => format!("controller:{rel}"),
                None => match full.strip_prefix("memory.r.") {
                    Some(rel) => format!("region:{rel}"),
                    None => full,
                },
            };
            let n = order.len();
            order.insert(key, n);
        }
    }

    Schema {
        fixed,
        region,
        controller,
        order,
    }
}

/// Region and controller names present in a (partial) tree; when the tree
/// has none, the default machine's.
pub(crate) fn map_names(tree: &Table) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let mem = tree.get("memory").and_then(Value::as_table);
    let mut regions: Vec<(String, Option<String>)> = mem
        .map(|m| {
            m.iter()
                .filter(|(k, _)| *k != CONTROLLERS)
                .map(|(k, v)| {
                    let kind = v.get("kind").and_then(Value::as_str).map(str::to_string);
                    (k.clone(), kind)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut controllers: Vec<String> = mem
        .and_then(|m| m.get(CONTROLLERS))
        .and_then(Value::as_table)
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default();
    let default = Memory::default_machine();
    if regions.is_empty() {
        regions = default
            .regions
            .iter()
            .map(|(n, r)| (n.clone(), Some(r.kind().as_str().to_string())))
            .collect();
    }
    if controllers.is_empty() {
        controllers = default.controllers.keys().cloned().collect();
    }
    (regions, controllers)
}

impl Schema {
    /// Every valid dotted key for a tree with these region/controller names.
    /// NVMM-only keys are left out for regions whose kind is "dram".
    pub(crate) fn valid_keys(&self, tree: &Table) -> BTreeMap<String, LeafKind> {
        let mut out = self.fixed.clone();
        let (regions, controllers) = map_names(tree);
        for (name, kind) in &regions {
            let is_dram = kind.as_deref() == Some(RegionKind::Dram.as_str());
            for (k, (lk, nvmm_only)) in &self.region {
                if !(is_dram && *nvmm_only) {
                    out.insert(format!("memory.{name}.{k}"), *lk);
                }
            }
        }
        for name in &controllers {
            for (k, lk) in &self.controller {
                out.insert(format!("memory.{CONTROLLERS}.{name}.{k}"), *lk);
            }
            // A technology's own settings: whatever names the tree gives
            // (the technology checks them), every one a number.
            let params = tree
                .get("memory")
                .and_then(|m| m.get(CONTROLLERS))
                .and_then(|c| c.get(name))
                .and_then(|c| c.get(PARAMS))
                .and_then(Value::as_table);
            for k in params.into_iter().flat_map(|p| p.keys()) {
                out.insert(
                    format!("memory.{CONTROLLERS}.{name}.{PARAMS}.{k}"),
                    LeafKind::Float,
                );
            }
        }
        out
    }

    /// The kind of `key` if it names a technology setting of a controller
    /// the tree has (`memory.controllers.NAME.params.KEY`), present or not.
    pub(crate) fn param_kind(&self, tree: &Table, key: &str) -> Option<LeafKind> {
        let rest = key.strip_prefix("memory.")?.strip_prefix(CONTROLLERS)?;
        let (name, setting) = rest.strip_prefix('.')?.split_once('.')?;
        let setting = setting.strip_prefix(PARAMS)?.strip_prefix('.')?;
        let (_, controllers) = map_names(tree);
        (!setting.is_empty() && !setting.contains('.') && controllers.iter().any(|c| c == name))
            .then_some(LeafKind::Float)
    }
}

/// Sort key giving the listing order: sections in [`SECTIONS`] order, then
/// declaration order; regions (by name) before controllers (by name).
pub(crate) fn order_key(key: &str) -> (usize, usize, String, usize) {
    let section = key.split('.').next().unwrap_or("");
    let idx = SECTIONS
        .iter()
        .position(|s| *s == section)
        .unwrap_or(SECTIONS.len());
    let order = &schema().order;
    let pos = |k: &str| order.get(k).copied().unwrap_or(usize::MAX);
    if let Some(rest) = key.strip_prefix("memory.controllers.") {
        let (name, rel) = rest.split_once('.').unwrap_or((rest, ""));
        (idx, 1, name.to_string(), pos(&format!("controller:{rel}")))
    } else if let Some(rest) = key.strip_prefix("memory.") {
        let (name, rel) = rest.split_once('.').unwrap_or((rest, ""));
        (idx, 0, name.to_string(), pos(&format!("region:{rel}")))
    } else {
        (idx, 0, String::new(), pos(key))
    }
}

/// Renders a leaf value as TOML: integers of address/size keys in hex,
/// large decimal integers with `_` between groups of three digits.
pub(crate) fn render(key: &str, v: &Value) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    match v {
        Value::Integer(i) if HEX_KEYS.contains(&last) && *i >= 0 => hex(*i as u64),
        Value::Integer(i) if *i >= 1_000_000 => group(&i.to_string(), 3),
        _ => v.to_string(),
    }
}

/// Inserts `_` every `n` digits from the right.
fn group(digits: &str, n: usize) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(n) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// `0x8000_0000`-style hex (groups of four digits).
pub(crate) fn hex(n: u64) -> String {
    format!("0x{}", group(&format!("{n:X}"), 4))
}

/// Levenshtein distance.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The nearest candidate to `key`, if it is close enough to be a typo; a
/// candidate that ends with `.key` (a key given without its section) wins.
pub(crate) fn suggest<'a>(
    key: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let candidates: Vec<&str> = candidates.into_iter().collect();
    let suffix = format!(".{key}");
    if let Some(c) = candidates.iter().find(|c| c.ends_with(&suffix)) {
        return Some(c.to_string());
    }
    let limit = (key.chars().count() / 3).max(2);
    // Ties go to the longest common prefix: 'x.trcd' is 'x.trcd_ns', not 'x.kind'.
    let common = |c: &str| {
        key.chars()
            .zip(c.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    candidates
        .iter()
        .map(|c| (edit_distance(key, c), std::cmp::Reverse(common(c)), *c))
        .filter(|(d, _, _)| *d <= limit)
        .min()
        .map(|(_, _, c)| c.to_string())
}

// ---------------------------------------------------------------------------
// serde glue
// ---------------------------------------------------------------------------

/// The TOML form of a region: the keys every region has, then its medium,
/// tagged by `kind`. The NVMM keys are the fields of [`NvmmParams`],
/// declared there once; a `kind = "dram"` region takes none of them
/// (loading reports one given there with [`nvmm_only_message`] before
/// serde sees it).
#[derive(Serialize, Deserialize)]
pub(crate) struct RawRegion {
    base: u64,
    size: u64,
    controller: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    node: Option<u32>,
    // Absent unless set, so that every existing machine serialises as before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    soft_reserved: bool,
    #[serde(flatten)]
    medium: Medium,
}

/// What a region is made of, tagged by `kind`.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind")]
enum Medium {
    #[serde(rename = "dram")]
    Dram,
    #[serde(rename = "nvmm")]
    Nvmm(NvmmParams),
}

impl From<RawRegion> for Region {
    fn from(r: RawRegion) -> Region {
        Region {
            base: r.base,
            size: r.size,
            controller: r.controller,
            node: r.node,
            soft_reserved: r.soft_reserved,
            nvmm: match r.medium {
                Medium::Dram => None,
                Medium::Nvmm(p) => Some(p),
            },
        }
    }
}

pub(crate) fn nvmm_only_message(key: &str) -> String {
    format!(
        "'{key}' applies only to NVMM regions, and this region has kind = \"dram\"; remove it, or set kind = \"nvmm\""
    )
}

impl From<Region> for RawRegion {
    fn from(r: Region) -> RawRegion {
        RawRegion {
            base: r.base,
            size: r.size,
            controller: r.controller,
            node: r.node,
            soft_reserved: r.soft_reserved,
            medium: match r.nvmm {
                None => Medium::Dram,
                Some(p) => Medium::Nvmm(p),
            },
        }
    }
}

impl Serialize for Memory {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.regions.len() + 1))?;
        for (name, r) in &self.regions {
            m.serialize_entry(name, r)?;
        }
        m.serialize_entry(CONTROLLERS, &self.controllers)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for Memory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Memory;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a [memory] table of regions and [memory.controllers]")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Memory, A::Error> {
                let mut regions = BTreeMap::new();
                let mut controllers = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == CONTROLLERS {
                        controllers = Some(map.next_value::<BTreeMap<String, ControllerConfig>>()?);
                    } else {
                        let r = map.next_value::<Region>()?;
                        regions.insert(key, r);
                    }
                }
                let default = Memory::default_machine();
                Ok(Memory {
                    regions: if regions.is_empty() {
                        default.regions
                    } else {
                        regions
                    },
                    controllers: controllers.unwrap_or(default.controllers),
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggestions() {
        let c = ["memory.nvmm.trcd_ns", "memory.nvmm.trp_ns", "machine.harts"];
        assert_eq!(
            suggest("memory.nvmm.trcd", c).as_deref(),
            Some("memory.nvmm.trcd_ns")
        );
        assert_eq!(suggest("harts", c).as_deref(), Some("machine.harts"));
        assert_eq!(suggest("completely.different", c), None);
    }

    #[test]
    fn hex_rendering() {
        assert_eq!(hex(0x8000_0000), "0x8000_0000");
        assert_eq!(hex(0x20_0000_0000), "0x20_0000_0000");
        assert_eq!(hex(0), "0x0");
        assert_eq!(hex(0xabc), "0xABC");
        assert_eq!(hex(0xC000_0000), "0xC000_0000");
    }

    #[test]
    fn nvmm_keys_are_the_fields_of_nvmm_params() {
        let mut fields = Vec::new();
        flatten("", &to_table(&NvmmParams::default()), &mut fields);
        let mut fields: Vec<String> = fields.into_iter().map(|(k, _)| k).collect();
        fields.sort();
        let mut nvmm_only: Vec<String> = schema()
            .region
            .iter()
            .filter(|(_, (_, only))| *only)
            .map(|(k, _)| k.clone())
            .collect();
        nvmm_only.sort();
        assert_eq!(fields, nvmm_only);
    }

    #[test]
    fn schema_has_the_nvmm_keys_and_optionals() {
        let s = schema();
        for k in [
            "method",
            "trcd_ns",
            "trp_ns",
            "tras_ns",
            "coarse_read_ns",
            "coarse_write_ns",
            "trp_on",
            "keep_open",
            "image",
            "persistence",
        ] {
            assert!(s.region[k].1, "{k} should be NVMM-only");
        }
        for k in REGION_REQUIRED {
            assert!(!s.region[*k].1, "{k} applies to every region");
        }
        assert!(s.controller.contains_key("tfaw_ns"));
        for k in ["speed_bin", "tccd_l_ns", "trrd_l_ns", "bank_groups"] {
            assert!(s.controller.contains_key(k), "{k}");
        }
        assert!(s.controller.contains_key("refresh.trefi_ns"));
        assert_eq!(s.fixed["machine.harts"], LeafKind::Int);
        assert_eq!(s.fixed["bus.request_latency_ns"], LeafKind::Float);
        assert_eq!(
            s.fixed["cache.l1d.replacement"],
            LeafKind::Enum(Replacement::NAMES)
        );
    }
}
