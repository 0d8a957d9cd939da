//! Loading: built-in machines and files, key checking, `--set` overrides,
//! and the TOML views of a config.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::{Table, Value};

use crate::schema::{
    flatten, map_names, nvmm_only_message, order_key, render, schema, suggest, LeafKind,
    CONTROLLERS, REGION_REQUIRED,
};
use crate::{AddressMapping, Config, ConfigError, Origin, RegionKind};

/// The largest config file read: a complete machine description is a few
/// KiB, so anything this big is not one.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The machines compiled into the binary: `configs/NAME.toml`.
const BUILTINS: &[(&str, &str)] = &[
    (
        "freedom-u500",
        include_str!("../../../configs/freedom-u500.toml"),
    ),
    ("zc706", include_str!("../../../configs/zc706.toml")),
    ("mappi", include_str!("../../../configs/mappi.toml")),
    (
        "alpha-like",
        include_str!("../../../configs/alpha-like.toml"),
    ),
    ("smt-pm", include_str!("../../../configs/smt-pm.toml")),
    ("dram-cxl", include_str!("../../../configs/dram-cxl.toml")),
    (
        "dram-cxl-nvmm",
        include_str!("../../../configs/dram-cxl-nvmm.toml"),
    ),
    (
        "dram-nvmm-cxl",
        include_str!("../../../configs/dram-nvmm-cxl.toml"),
    ),
    ("ddr5-cxl", include_str!("../../../configs/ddr5-cxl.toml")),
];

impl Config {
    /// The machine used when no `--config` is given.
    pub const DEFAULT_MACHINE: &'static str = "freedom-u500";

    /// Names of the built-in machines (`configs/*.toml`).
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTINS.iter().map(|(n, _)| *n).collect()
    }

    /// The TOML text of a built-in machine.
    pub fn builtin_toml(name: &str) -> Option<&'static str> {
        BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Loads a machine and applies `--set` overrides.
    ///
    /// * `None`: the default machine, [`Config::DEFAULT_MACHINE`].
    /// * A name without `/` and not ending in `.toml`: the built-in
    ///   `configs/NAME.toml` (compiled in, so it works from any directory).
    /// * Anything else: a file path, read from disk.
    ///
    /// `overrides` are `KEY=VALUE` strings with dotted keys
    /// (`memory.nvmm.trcd_ns=1000`), applied in order on top of the file.
    /// VALUE is parsed as a TOML value (number, bool, string, array) and
    /// taken as a plain string if it does not parse (`method=fine`).
    ///
    /// Keys the schema does not know, in the file or in an override, are
    /// errors naming the nearest valid key. Semantic checks are separate:
    /// call [`Config::validate`] on the result.
    pub fn load(name_or_path: Option<&str>, overrides: &[String]) -> Result<Config, ConfigError> {
        let name = name_or_path.unwrap_or(Self::DEFAULT_MACHINE);
        if is_path(name) {
            let path = PathBuf::from(name);
            let io = |source| ConfigError::Io {
                path: path.clone(),
                source,
            };
            let bytes =
                crate::files::read_regular(&path, MAX_CONFIG_BYTES, "a config file").map_err(io)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it is not UTF-8 text",
                ))
            })?;
            build(&text, Origin::File(path), overrides)
        } else {
            let text = Self::builtin_toml(name).ok_or_else(|| ConfigError::UnknownMachine {
                name: name.to_string(),
                available: Self::builtin_names()
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            })?;
            build(text, Origin::Builtin(name.to_string()), overrides)
        }
    }

    /// Like [`Config::load`], from TOML text. Keys the text leaves out take
    /// the default machine's values.
    pub fn from_toml_str(text: &str, overrides: &[String]) -> Result<Config, ConfigError> {
        build(text, Origin::Text, overrides)
    }

    /// The config as a complete TOML document (for `rvnvmm config show`);
    /// [`Config::from_toml_str`] reads it back to an equal config.
    pub fn to_toml_string(&self) -> String {
        let body = match toml::to_string(self) {
            Ok(s) => s,
            // Only reachable for integers above i64::MAX, which TOML cannot hold.
            Err(e) => return format!("# cannot express this config in TOML: {e}\n"),
        };
        let mut out = format!(
            "# rvnvmm machine '{}' (every key; see docs/config.md)\n",
            self.machine.name
        );
        let mut section = String::new();
        for line in body.lines() {
            if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = h.to_string();
            }
            match line.split_once(" = ") {
                Some((k, v)) if !line.starts_with('[') => {
                    let key = format!("{section}.{k}");
                    match v.parse::<i64>() {
                        Ok(i) => {
                            out.push_str(&format!("{k} = {}", render(&key, &Value::Integer(i))))
                        }
                        Err(_) => out.push_str(line),
                    }
                }
                _ => out.push_str(line),
            }
            out.push('\n');
        }
        out
    }

    /// Every key set in this config with its value rendered as TOML, in the
    /// order of `docs/config.md` (optional keys left unset are not listed;
    /// see [`Config::valid_keys`]).
    pub fn key_values(&self) -> Vec<(String, String)> {
        let mut leaves = Vec::new();
        flatten("", &self.tree(), &mut leaves);
        leaves.sort_by_key(|(k, _)| order_key(k));
        leaves
            .into_iter()
            .map(|(k, v)| {
                let r = render(&k, &v);
                (k, r)
            })
            .collect()
    }

    /// Every key that `--set` accepts on this config, including optional
    /// keys currently unset (`memory.controllers.NAME.tfaw_ns`, ...).
    /// Region and controller keys are listed for the names this config has.
    pub fn valid_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = schema().valid_keys(&self.tree()).into_keys().collect();
        keys.sort_by_key(|k| order_key(k));
        keys
    }

    /// The current value of one dotted key, rendered as TOML.
    pub fn get(&self, key: &str) -> Option<String> {
        self.key_values()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub(crate) fn tree(&self) -> Table {
        match Value::try_from(self) {
            Ok(Value::Table(t)) => t,
            _ => Table::new(),
        }
    }
}

fn is_path(s: &str) -> bool {
    s.contains('/') || s.contains(std::path::MAIN_SEPARATOR) || s.ends_with(".toml")
}

fn build(text: &str, origin: Origin, overrides: &[String]) -> Result<Config, ConfigError> {
    let mut file: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Syntax {
            origin: origin.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
    check_tree(&mut file, &origin)?;
    if let Some(ctrls) = file
        .get_mut("memory")
        .and_then(Value::as_table_mut)
        .and_then(|m| m.get_mut(CONTROLLERS))
        .and_then(Value::as_table_mut)
    {
        for ctrl in ctrls.iter_mut().filter_map(|(_, c)| c.as_table_mut()) {
            expand_speed_bin(ctrl, false);
        }
    }
    let in_file: Vec<&'static str> = TOPOLOGY_KEYS
        .iter()
        .copied()
        .filter(|k| machine_int(&file, k).is_some())
        .collect();
    let mut full = fill_defaults(file);
    // Which --set last wrote each key, to blame the right origin below.
    let mut set_by: BTreeMap<String, Origin> = BTreeMap::new();
    for arg in overrides {
        let key = apply_override(&mut full, arg)?;
        set_by.insert(key, Origin::Set(arg.clone()));
    }
    resolve_topology(&mut full, &in_file, &set_by, &origin)?;
    check_required(&full, &origin)?;
    check_dram_regions(&full, &origin, &set_by)?;
    Config::deserialize(Value::Table(full)).map_err(|e| {
        let (key, message) = split_toml_error(&e);
        ConfigError::Value {
            origin: set_by.remove(&key).unwrap_or(origin),
            key,
            message,
        }
    })
}

/// The `[machine]` keys that describe the topology (`harts` = `cores` x
/// `threads_per_core`).
const TOPOLOGY_KEYS: [&str; 3] = ["harts", "cores", "threads_per_core"];

fn machine_int(t: &Table, key: &str) -> Option<i64> {
    t.get("machine")?.as_table()?.get(key)?.as_integer()
}

/// Makes `machine.harts`, `machine.cores` and `machine.threads_per_core`
/// agree. The keys given at the later level win (a `--set` over the file,
/// the file over the defaults); `threads_per_core` is 1 unless given.
/// Given at one level: `cores` (with `threads_per_core`) sets `harts`;
/// `harts` alone sets `cores` = `harts / threads_per_core`, which must
/// divide; `harts` and `cores` both given must agree.
fn resolve_topology(
    full: &mut Table,
    in_file: &[&str],
    set_by: &BTreeMap<String, Origin>,
    file_origin: &Origin,
) -> Result<(), ConfigError> {
    let by_set = |k: &str| set_by.get(&format!("machine.{k}"));
    let given: Vec<&str> = if TOPOLOGY_KEYS.iter().any(|k| by_set(k).is_some()) {
        TOPOLOGY_KEYS
            .iter()
            .copied()
            .filter(|k| by_set(k).is_some())
            .collect()
    } else {
        in_file.to_vec()
    };
    let origin = |k: &str| by_set(k).cloned().unwrap_or_else(|| file_origin.clone());
    let get = |k: &str| machine_int(full, k).unwrap_or(0).max(0) as u64;
    let has = |k: &str| given.contains(&k);
    // threads_per_core from a lower level still applies (a file giving
    // threads_per_core = 2 and `--harts 4` means 2 cores of 2 threads).
    let tpc = get("threads_per_core");
    let (mut harts, mut cores) = (get("harts"), get("cores"));
    if [tpc, harts, cores].iter().any(|&v| v > u64::from(u32::MAX)) {
        return Ok(()); // out of the fields' range: deserialising says which
    }
    if has("cores") {
        let product = cores.saturating_mul(tpc);
        if has("harts") && harts != product {
            return Err(ConfigError::Value {
                key: "machine.harts".into(),
                message: format!(
                    "{harts} harts, but machine.cores x machine.threads_per_core is {cores} x {tpc} = {product}; give one of harts and cores, or make them agree"
                ),
                origin: origin("harts"),
            });
        }
        harts = product;
    } else if has("harts") || has("threads_per_core") {
        if tpc == 0 || harts % tpc != 0 {
            let blame = if has("harts") {
                "harts"
            } else {
                "threads_per_core"
            };
            return Err(ConfigError::Value {
                key: format!("machine.{blame}"),
                message: format!(
                    "{harts} harts do not make whole cores of {tpc} threads (machine.threads_per_core); set machine.cores instead"
                ),
                origin: origin(blame),
            });
        }
        cores = harts / tpc;
    }
    if let Some(Value::Table(m)) = full.get_mut("machine") {
        m.insert("harts".into(), Value::Integer(harts as i64));
        m.insert("cores".into(), Value::Integer(cores as i64));
    }
    Ok(())
}

/// The message and the dotted key of a serde error from `toml`.
fn split_toml_error(e: &toml::de::Error) -> (String, String) {
    let shown = e.to_string();
    let key = shown
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("in `")?.strip_suffix('`'))
        .unwrap_or("")
        .to_string();
    let message = e.message().trim().to_string();
    if key.is_empty() {
        ("(top level)".to_string(), message)
    } else {
        (key, message)
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("a string ({s:?})"),
        Value::Integer(i) => format!("an integer ({i})"),
        Value::Float(f) => format!("a float ({f})"),
        Value::Boolean(b) => format!("a boolean ({b})"),
        Value::Datetime(d) => format!("a date-time ({d})"),
        Value::Array(_) => "an array".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

/// Checks one leaf value against what its key takes, converting integers to
/// floats where a float is expected.
fn check_leaf(
    key: &str,
    kind: LeafKind,
    v: &mut Value,
    origin: &Origin,
) -> Result<(), ConfigError> {
    let type_error = |v: &Value| ConfigError::Type {
        key: key.to_string(),
        expected: kind.expected(),
        found: describe(v),
        origin: origin.clone(),
    };
    match (kind, &*v) {
        (LeafKind::Int, Value::Integer(i)) if *i >= 0 => Ok(()),
        (LeafKind::Float, Value::Float(_)) | (LeafKind::Bool, Value::Boolean(_)) => Ok(()),
        (LeafKind::Str, Value::String(_)) => Ok(()),
        (LeafKind::Float, Value::Integer(i)) => {
            *v = Value::Float(*i as f64);
            Ok(())
        }
        (LeafKind::Enum(names), Value::String(s)) => {
            if names.contains(&s.as_str()) {
                Ok(())
            } else {
                let hint = suggest(s, names.iter().copied())
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                Err(ConfigError::Value {
                    key: key.to_string(),
                    message: format!("\"{s}\" is not {}{hint}", kind.expected()),
                    origin: origin.clone(),
                })
            }
        }
        (LeafKind::Mapping, Value::String(s)) => {
            AddressMapping::parse(s)
                .map(|_| ())
                .map_err(|message| ConfigError::Value {
                    key: key.to_string(),
                    message,
                    origin: origin.clone(),
                })
        }
        _ => Err(type_error(v)),
    }
}

/// Region and controller names become parts of dotted keys.
fn check_name(what: &str, key: &str, name: &str, origin: &Origin) -> Result<(), ConfigError> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Ok(())
    } else {
        Err(ConfigError::Value {
            key: key.to_string(),
            message: format!(
                "{what} name '{name}' may use only letters, digits, '_' and '-' (it becomes part of dotted keys)"
            ),
            origin: origin.clone(),
        })
    }
}

/// The first leaf under `v` (or `key` itself), for reporting an unknown table.
fn first_leaf(key: &str, v: &Value) -> String {
    match v {
        Value::Table(t) => match t.iter().next() {
            Some((k, sub)) => first_leaf(&format!("{key}.{k}"), sub),
            None => key.to_string(),
        },
        _ => key.to_string(),
    }
}

/// Walks a file's tree: every key must be known and every value well typed.
fn check_tree(tree: &mut Table, origin: &Origin) -> Result<(), ConfigError> {
    let valid = schema().valid_keys(tree);
    walk_tree("", tree, &valid, origin)
}

fn is_section(valid: &BTreeMap<String, LeafKind>, key: &str) -> bool {
    let under = format!("{key}.");
    valid
        .range(under.clone()..)
        .next()
        .is_some_and(|(k, _)| k.starts_with(&under))
}

fn walk_tree(
    prefix: &str,
    t: &mut Table,
    valid: &BTreeMap<String, LeafKind>,
    origin: &Origin,
) -> Result<(), ConfigError> {
    for (k, v) in t.iter_mut() {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if prefix == "memory" && k != CONTROLLERS {
            check_name("region", &key, k, origin)?;
            if let Some(rel) = v.as_table().and_then(nvmm_key_on_dram) {
                return Err(ConfigError::Value {
                    key: format!("{key}.{rel}"),
                    message: nvmm_only_message(rel),
                    origin: origin.clone(),
                });
            }
        } else if prefix == "memory.controllers" {
            check_name("controller", &key, k, origin)?;
        }
        if let Some(&kind) = valid.get(&key) {
            check_leaf(&key, kind, v, origin)?;
        } else if is_section(valid, &key) {
            let Value::Table(sub) = v else {
                return Err(ConfigError::Type {
                    expected: format!("a table ([{key}])"),
                    found: describe(v),
                    key,
                    origin: origin.clone(),
                });
            };
            walk_tree(&key, sub, valid, origin)?;
        } else {
            let leaf = first_leaf(&key, v);
            return Err(ConfigError::UnknownKey {
                suggestion: suggest(&leaf, valid.keys().map(String::as_str)),
                key: leaf,
                origin: origin.clone(),
            });
        }
    }
    Ok(())
}

/// The first NVMM-only key of `region` if its kind is "dram".
fn nvmm_key_on_dram(region: &Table) -> Option<&'static str> {
    if region.get("kind").and_then(Value::as_str) != Some(RegionKind::Dram.as_str()) {
        return None;
    }
    schema()
        .region
        .iter()
        .find(|(rel, (_, nvmm_only))| *nvmm_only && region.contains_key(rel.as_str()))
        .map(|(rel, _)| rel.as_str())
}

/// After the overrides: no DRAM region may keep NVMM keys (`--set
/// memory.nvmm.kind=dram` on a file that gives them). Blames the override
/// that set the kind, if one did.
fn check_dram_regions(
    full: &Table,
    origin: &Origin,
    set_by: &BTreeMap<String, Origin>,
) -> Result<(), ConfigError> {
    let Some(mem) = full.get("memory").and_then(Value::as_table) else {
        return Ok(());
    };
    for (name, r) in mem.iter().filter(|(k, _)| *k != CONTROLLERS) {
        if let Some(rel) = r.as_table().and_then(nvmm_key_on_dram) {
            return Err(ConfigError::Value {
                key: format!("memory.{name}.{rel}"),
                message: nvmm_only_message(rel),
                origin: set_by
                    .get(&format!("memory.{name}.kind"))
                    .unwrap_or(origin)
                    .clone(),
            });
        }
    }
    Ok(())
}

/// The file's tree completed with the default machine: fixed sections merge
/// key by key; regions and controllers replace the default sets wholesale
/// when the file gives any.
fn fill_defaults(mut file: Table) -> Table {
    let mut full = Config::default().tree();
    if let Some(Value::Table(fm)) = file.remove("memory") {
        if let Some(Value::Table(mem)) = full.get_mut("memory") {
            if fm.keys().any(|k| k != CONTROLLERS) {
                mem.retain(|k, _| k == CONTROLLERS);
            }
            for (k, v) in fm {
                mem.insert(k, v);
            }
        }
    }
    merge(&mut full, file);
    full
}

fn merge(into: &mut Table, from: Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(Value::Table(a)), Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// Parses the VALUE of `--set KEY=VALUE`.
pub(crate) fn parse_value(raw: &str) -> Value {
    let raw = raw.trim();
    match format!("v = {raw}").parse::<Table>() {
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| Value::String(raw.into())),
        _ => Value::String(raw.to_string()),
    }
}

/// Whether `raw` is written as a TOML integer (decimal with an optional
/// sign, or 0x / 0o / 0b), whatever its magnitude.
pub(crate) fn is_integer_literal(raw: &str) -> bool {
    let raw = raw.trim();
    let (digits, radix) = match raw.get(..2) {
        Some("0x") => (&raw[2..], 16),
        Some("0o") => (&raw[2..], 8),
        Some("0b") => (&raw[2..], 2),
        _ => (raw.strip_prefix(['+', '-']).unwrap_or(raw), 10),
    };
    // Underscores only between digits, as TOML has them.
    digits
        .split('_')
        .all(|group| !group.is_empty() && group.chars().all(|c| c.is_digit(radix)))
}

/// Applies one `--set`; returns the key it set.
fn apply_override(full: &mut Table, arg: &str) -> Result<String, ConfigError> {
    let bad = |message: String| ConfigError::Override {
        arg: arg.to_string(),
        message,
    };
    let Some((key, raw)) = arg.split_once('=') else {
        return Err(bad(
            "expected KEY=VALUE with a dotted key, e.g. --set memory.nvmm.trcd_ns=1000".into(),
        ));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(bad(
            "the key is empty; expected KEY=VALUE, e.g. --set machine.harts=2".into(),
        ));
    }
    let origin = Origin::Set(arg.to_string());
    let valid = schema().valid_keys(full);
    let Some(kind) = valid
        .get(key)
        .copied()
        .or_else(|| schema().param_kind(full, key))
    else {
        let under = format!("{key}.");
        if let Some(example) = valid.keys().find(|k| k.starts_with(&under)) {
            return Err(bad(format!(
                "'{key}' is a section, not a key; set its keys one at a time, e.g. --set {example}=..."
            )));
        }
        let parts: Vec<&str> = key.splitn(3, '.').collect();
        if let [section, region, rel] = parts[..] {
            let (regions, _) = map_names(full);
            let is_dram_region = regions
                .iter()
                .any(|(n, k)| n == region && k.as_deref() == Some("dram"));
            if section == "memory"
                && is_dram_region
                && schema().region.get(rel).is_some_and(|x| x.1)
            {
                return Err(ConfigError::Value {
                    key: key.to_string(),
                    message: nvmm_only_message(rel),
                    origin,
                });
            }
        }
        return Err(ConfigError::UnknownKey {
            key: key.to_string(),
            suggestion: suggest(key, valid.keys().map(String::as_str)),
            origin,
        });
    };
    let mut value = parse_value(raw);
    if value.is_str() && is_integer_literal(raw) {
        return Err(bad(format!(
            "{} does not fit a config integer: TOML integers are 64-bit signed, from {} to {} (0x7FFF_FFFF_FFFF_FFFF)",
            raw.trim(),
            i64::MIN,
            i64::MAX
        )));
    }
    if matches!(kind, LeafKind::Str | LeafKind::Enum(_) | LeafKind::Mapping) && !value.is_str() {
        value = Value::String(raw.trim().to_string());
    }
    check_leaf(key, kind, &mut value, &origin)?;
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap_or(key);
    let mut t = full;
    for p in parts {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        let Value::Table(sub) = entry else {
            unreachable!("just made a table")
        };
        t = sub;
    }
    t.insert(last.to_string(), value);
    if last == "speed_bin" && key.starts_with("memory.controllers.") {
        expand_speed_bin(t, true);
    }
    Ok(key.to_string())
}

/// Writes the keys of the speed bin a controller table names
/// (`speed_bin`) into that table, as if they were written where
/// `speed_bin` is: in a file only the keys the table does not give
/// (`overwrite` false: the file's own keys override the bin), by `--set`
/// all of them (`overwrite` true: the file's keys are earlier, later
/// `--set`s override the bin). A name that is not a bin was refused before.
fn expand_speed_bin(ctrl: &mut Table, overwrite: bool) {
    let Some(bin) = ctrl
        .get("speed_bin")
        .and_then(Value::as_str)
        .and_then(crate::speed_bin::speed_bin)
    else {
        return;
    };
    for (key, v) in bin.entries() {
        let (table, leaf) = match key.split_once('.') {
            Some((sub, leaf)) => {
                let entry = ctrl
                    .entry(sub.to_string())
                    .or_insert_with(|| Value::Table(Table::new()));
                match entry.as_table_mut() {
                    Some(t) => (t, leaf),
                    None => continue,
                }
            }
            None => (&mut *ctrl, key),
        };
        if overwrite || !table.contains_key(leaf) {
            table.insert(leaf.to_string(), v);
        }
    }
}

/// Every region must give base, size, kind and controller.
fn check_required(full: &Table, origin: &Origin) -> Result<(), ConfigError> {
    let Some(mem) = full.get("memory").and_then(Value::as_table) else {
        return Ok(());
    };
    for (name, r) in mem.iter().filter(|(k, _)| *k != CONTROLLERS) {
        if let Some(t) = r.as_table() {
            if let Some(missing) = REGION_REQUIRED.iter().find(|k| !t.contains_key(**k)) {
                return Err(ConfigError::Value {
                    key: format!("memory.{name}.{missing}"),
                    message: format!(
                        "missing; every region needs {} (a file that defines any [memory.NAME] region replaces all of the default machine's regions; to change one key of a built-in machine, use --set)",
                        REGION_REQUIRED.join(", ")
                    ),
                    origin: origin.clone(),
                });
            }
        }
    }
    Ok(())
}
