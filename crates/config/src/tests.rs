//! Loading, overrides, error paths and the shipped machines.

use std::path::{Path, PathBuf};

use crate::*;

fn configs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

fn sets(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn load_with(args: &[&str]) -> Result<Config, ConfigError> {
    Config::load(None, &sets(args))
}

fn problems(cfg: &Config) -> Vec<Problem> {
    match cfg.validate() {
        Err(ConfigError::Invalid { problems }) => problems,
        other => panic!("expected validation problems, got {other:?}"),
    }
}

fn has_problem(cfg: &Config, key: &str, text: &str) -> bool {
    problems(cfg)
        .iter()
        .any(|p| p.key == key && p.message.contains(text))
}

// ---------------------------------------------------------------- machines

#[test]
fn every_file_in_configs_loads_and_validates() {
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(configs_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let shown = path.to_str().unwrap();
        let cfg = Config::load(Some(shown), &[]).unwrap_or_else(|e| panic!("{shown}: {e}"));
        let warnings = cfg.validate().unwrap_or_else(|e| panic!("{shown}: {e}"));
        assert!(warnings.is_empty(), "{shown}: {warnings:?}");

        // The built-in copy (by name) is the same file.
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert_eq!(
            Config::builtin_toml(&name),
            Some(std::fs::read_to_string(&path).unwrap().as_str()),
            "configs/{name}.toml is not compiled in: add it to BUILTINS in load.rs"
        );
        assert_eq!(Config::load(Some(&name), &[]).unwrap(), cfg);
        seen.push(name);
    }
    seen.sort();
    let mut builtins = Config::builtin_names();
    builtins.sort();
    assert_eq!(seen, builtins);
}

#[test]
fn default_machine_is_freedom_u500_file() {
    let file = Config::load(Some("freedom-u500"), &[]).unwrap();
    assert_eq!(file, Config::default());
    assert_eq!(Config::load(None, &[]).unwrap(), Config::default());
}

#[test]
fn freedom_u500_matches_seed_000() {
    let c = Config::default();
    assert_eq!(c.machine.harts, 4);
    assert_eq!(c.machine.clock_hz, 50_000_000);
    assert_eq!(c.cache.l1d.size_bytes, 16 * 1024);
    assert_eq!(c.cache.l1d.mshrs, 0);
    assert!(!c.cache.l2.enabled);
    let ctrl = &c.memory.controllers["ddr3"];
    assert_eq!(ctrl.capacity_bytes(), 4 << 30);
    assert_eq!(ctrl.clock_mhz, 200.0);
    assert_eq!(ctrl.period_ns(), 5.0);
    // NVMM spans six 512 MiB banks (seed 000 Tables 5-6 need NBANK up to 6).
    let (base, _) = c.memory.controller_window("ddr3").unwrap();
    let nvmm = &c.memory.regions["nvmm"];
    let bank_bytes = (ctrl.capacity_bytes() / u128::from(ctrl.banks)) as u64;
    assert_eq!(bank_bytes, 512 << 20);
    assert_eq!((nvmm.base - base) / bank_bytes, 2);
    assert_eq!(nvmm.size / bank_bytes, 6);
    let n = nvmm.nvmm.as_ref().unwrap();
    assert_eq!(n.method, Method::Proposed);
    assert_eq!((n.trcd_ns, n.trp_ns, n.tras_ns), (1000.0, 1000.0, 7000.0));
    assert_eq!(c.memory.region_at(0x8000_0000).unwrap().0, "dram");
    assert_eq!(c.memory.region_at(0x1_7FFF_FFFF).unwrap().0, "nvmm");
    assert!(c.memory.region_at(0x1_8000_0000).is_none());
}

#[test]
fn zc706_matches_seed_001() {
    let c = Config::load(Some("zc706"), &[]).unwrap();
    assert_eq!(c.machine.harts, 2);
    assert_eq!(c.machine.clock_hz, 667_000_000);
    assert_eq!(c.cache.l1i.size_bytes, 32 * 1024);
    assert!(c.cache.l2.enabled);
    assert_eq!(c.cache.l2.size_bytes, 512 * 1024);
    let dram = &c.memory.regions["dram"];
    let nvmm = &c.memory.regions["nvmm"];
    assert_ne!(dram.controller, nvmm.controller);
    assert_eq!(nvmm.kind(), RegionKind::Nvmm);
    assert_eq!(
        c.memory.controllers[&nvmm.controller].row_buffer_bytes,
        8192
    );
}

#[test]
fn smt_pm_matches_seed_002() {
    let c = Config::load(Some("smt-pm"), &[]).unwrap();
    assert!(c.validate().unwrap().is_empty());
    assert_eq!((c.machine.cores, c.machine.threads_per_core), (2, 2));
    assert_eq!(c.machine.harts, 4);
    assert_eq!(c.machine.clock_hz, 2_100_000_000);
    assert_eq!(c.cache.l1i.size_bytes, 32 * 1024);
    assert_eq!(c.cache.l1d.size_bytes, 32 * 1024);
    assert!(c.cache.l2.enabled, "a last-level cache");
    let nvmm = &c.memory.regions["nvmm"];
    assert_eq!(nvmm.kind(), RegionKind::Nvmm);
    assert_eq!(nvmm.nvmm.as_ref().unwrap().method, Method::Optane);
    assert_eq!(c.memory.regions["dram"].kind(), RegionKind::Dram);
}

#[test]
fn show_round_trips() {
    for name in Config::builtin_names() {
        let c = Config::load(Some(name), &[]).unwrap();
        let text = c.to_toml_string();
        assert!(text.contains("base = 0x8000_0000"), "{text}");
        assert_eq!(Config::from_toml_str(&text, &[]).unwrap(), c, "{text}");
    }
}

#[test]
fn key_values_lists_every_set_key() {
    let c = Config::default();
    let kv = c.key_values();
    let keys: Vec<&str> = kv.iter().map(|(k, _)| k.as_str()).collect();
    for k in [
        "memory.nvmm.method",
        "memory.nvmm.trcd_ns",
        "memory.nvmm.trp_ns",
        "memory.nvmm.tras_ns",
        "memory.nvmm.coarse_read_ns",
        "memory.nvmm.coarse_write_ns",
        "machine.harts",
        "memory.controllers.ddr3.refresh.trfc_ns",
    ] {
        assert!(keys.contains(&k), "{k} missing from {keys:?}");
    }
    assert!(!keys.contains(&"memory.dram.method"));
    assert_eq!(
        keys[..4],
        [
            "machine.name",
            "machine.harts",
            "machine.cores",
            "machine.threads_per_core"
        ]
    );
    assert_eq!(c.get("machine.clock_hz").as_deref(), Some("50_000_000"));
    assert_eq!(*keys.last().unwrap(), "cflush.allow_user");
    assert_eq!(c.get("memory.nvmm.method").as_deref(), Some("\"proposed\""));
    assert_eq!(c.get("memory.nvmm.base").as_deref(), Some("0xC000_0000"));
    // Every listed key is accepted by --set with its own value.
    let all: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(Config::load(None, &all).unwrap(), c);
}

#[test]
fn valid_keys_include_unset_optionals() {
    let c = Config::load(None, &[]).unwrap();
    let mut c2 = c.clone();
    c2.memory.controllers.get_mut("ddr3").unwrap().tfaw_ns = None;
    assert!(c2
        .valid_keys()
        .contains(&"memory.controllers.ddr3.tfaw_ns".to_string()));
    let c3 = Config::from_toml_str(
        &c2.to_toml_string(),
        &sets(&["memory.controllers.ddr3.tfaw_ns=30"]),
    )
    .unwrap();
    assert_eq!(c3, c);
}

/// docs/config.md documents every key (with NAME for map entries).
#[test]
fn docs_cover_every_key() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md"))
            .unwrap();
    for k in Config::default().valid_keys() {
        let templ = k
            .replace("memory.controllers.ddr3.", "memory.controllers.NAME.")
            .replace("memory.dram.", "memory.NAME.")
            .replace("memory.nvmm.", "memory.NAME.");
        assert!(
            doc.contains(&format!("`{templ}`")),
            "docs/config.md lacks `{templ}`"
        );
    }
}

// ---------------------------------------------------------------- loading

#[test]
fn partial_file_takes_defaults() {
    let c = Config::from_toml_str("[machine]\nharts = 2\n", &[]).unwrap();
    let mut want = Config::default();
    want.machine.harts = 2;
    want.machine.cores = 2;
    assert_eq!(c, want);
    assert_eq!(Config::from_toml_str("", &[]).unwrap(), Config::default());
}

#[test]
fn file_regions_replace_default_regions() {
    let text = r#"
        [memory.main]
        base = 0x8000_0000
        size = 0x1000_0000
        kind = "dram"
        controller = "ddr3"
    "#;
    let c = Config::from_toml_str(text, &sets(&["user.heap=dram"])).unwrap();
    assert_eq!(c.memory.regions.keys().collect::<Vec<_>>(), ["main"]);
    assert!(c.memory.controllers.contains_key("ddr3"));
    c.validate().unwrap();

    // A region without base is reported with the rule that explains why.
    let e = Config::from_toml_str("[memory.nvmm]\nmethod = \"fine\"\n", &[]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("memory.nvmm.base"), "{msg}");
    assert!(
        msg.contains("replaces all of the default machine's regions"),
        "{msg}"
    );
}

#[test]
fn file_controller_takes_controller_defaults() {
    let text = r#"
        [memory.dram]
        base = 0x8000_0000
        size = 0x4000_0000
        kind = "dram"
        controller = "mc"

        [memory.controllers.mc]
        trcd_ns = 15.0
    "#;
    let c = Config::from_toml_str(text, &[]).unwrap();
    let mc = &c.memory.controllers["mc"];
    assert_eq!(mc.trcd_ns, 15.0);
    assert_eq!(mc.tcl_ns, ControllerConfig::default().tcl_ns);
    assert!(mc.refresh.is_none());
    assert_eq!(c.memory.controllers.len(), 1);
}

#[test]
fn file_path_is_read_from_disk() {
    let dir = std::env::temp_dir().join(format!("rvnvmm-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.toml");
    std::fs::write(&path, "[machine]\nname = \"mine\"\n").unwrap();
    let c = Config::load(Some(path.to_str().unwrap()), &[]).unwrap();
    assert_eq!(c.machine.name, "mine");
    std::fs::remove_dir_all(&dir).unwrap();

    let e = Config::load(Some("/nonexistent/x.toml"), &[]).unwrap_err();
    assert!(matches!(e, ConfigError::Io { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/x.toml"));
}

#[test]
fn unknown_machine_lists_builtins() {
    let e = Config::load(Some("freedom"), &[]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, ConfigError::UnknownMachine { .. }));
    assert!(msg.contains("freedom-u500, zc706"), "{msg}");
    assert!(msg.contains("pass a path"), "{msg}");
}

#[test]
fn syntax_error_is_reported() {
    let e = Config::from_toml_str("[machine\nharts = 2", &[]).unwrap_err();
    assert!(matches!(e, ConfigError::Syntax { .. }), "{e}");
}

// ---------------------------------------------------------------- unknown keys

#[test]
fn unknown_key_in_file_names_nearest() {
    let e = Config::from_toml_str("[machine]\nhart = 2\n", &[]).unwrap_err();
    match &e {
        ConfigError::UnknownKey {
            key, suggestion, ..
        } => {
            assert_eq!(key, "machine.hart");
            assert_eq!(suggestion.as_deref(), Some("machine.harts"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "unknown config key 'machine.hart' (did you mean 'machine.harts'?) in config text"
    );

    // Inside a region, and a misspelt section.
    let text = Config::default()
        .to_toml_string()
        .replace("trcd_ns = 1000.0", "trcd = 1000.0");
    let e = Config::from_toml_str(&text, &[]).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "unknown config key 'memory.nvmm.trcd' (did you mean 'memory.nvmm.trcd_ns'?)"
        ),
        "{e}"
    );
    let e = Config::from_toml_str("[cahce.l1d]\nways = 8\n", &[]).unwrap_err();
    assert!(
        e.to_string().contains("(did you mean 'cache.l1d.ways'?)"),
        "{e}"
    );
    let e = Config::from_toml_str("[memory.controllers.ddr3]\ntrcd = 1\n", &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("(did you mean 'memory.controllers.ddr3.trcd_ns'?)"),
        "{e}"
    );
    let e = Config::from_toml_str("frobnicate = 1\n", &[]).unwrap_err();
    assert!(e.to_string().contains("see docs/config.md"), "{e}");
}

#[test]
fn unknown_key_in_set_names_nearest() {
    let e = load_with(&["memory.nvmm.trcd=1000"]).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "unknown config key 'memory.nvmm.trcd' (did you mean 'memory.nvmm.trcd_ns'?)"
        ),
        "{msg}"
    );
    assert!(msg.contains("--set 'memory.nvmm.trcd=1000'"), "{msg}");

    // A misspelt region name: the region set depends on the loaded machine.
    let e = load_with(&["memory.nvm.tras_ns=7000"]).unwrap_err();
    assert!(msg_has(&e, "(did you mean 'memory.nvmm.tras_ns'?)"), "{e}");
    let e = Config::load(Some("zc706"), &sets(&["memory.controllers.ddr3.tcl_ns=15"])).unwrap_err();
    assert!(
        msg_has(&e, "(did you mean 'memory.controllers.ps-ddr3.tcl_ns'?)")
            || msg_has(&e, "(did you mean 'memory.controllers.pl-ddr3.tcl_ns'?)"),
        "{e}"
    );
    // A key given without its section.
    let e = load_with(&["harts=2"]).unwrap_err();
    assert!(msg_has(&e, "(did you mean 'machine.harts'?)"), "{e}");
}

fn msg_has(e: &ConfigError, s: &str) -> bool {
    e.to_string().contains(s)
}

#[test]
fn nvmm_keys_rejected_on_dram_region() {
    let e = load_with(&["memory.dram.trcd_ns=1000"]).unwrap_err();
    assert!(msg_has(&e, "applies only to NVMM regions"), "{e}");
    let text = Config::default().to_toml_string().replace(
        "kind = \"dram\"\n\n[memory.nvmm]",
        "kind = \"dram\"\nmethod = \"fine\"\n\n[memory.nvmm]",
    );
    let e = Config::from_toml_str(&text, &[]).unwrap_err();
    assert!(msg_has(&e, "memory.dram.method"), "{e}");
    assert!(msg_has(&e, "applies only to NVMM regions"), "{e}");
}

#[test]
fn bad_set_syntax() {
    let e = load_with(&["machine.harts"]).unwrap_err();
    assert!(matches!(e, ConfigError::Override { .. }), "{e}");
    assert!(msg_has(&e, "expected KEY=VALUE"), "{e}");
    let e = load_with(&["memory.nvmm=3"]).unwrap_err();
    assert!(msg_has(&e, "is a section"), "{e}");
    let e = load_with(&["=3"]).unwrap_err();
    assert!(msg_has(&e, "the key is empty"), "{e}");
}

// ---------------------------------------------------------------- types

#[test]
fn bad_type_names_key_and_expected_type() {
    let e = Config::from_toml_str("[machine]\nharts = \"four\"\n", &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config key 'machine.harts' expects a non-negative integer, but config text gives a string (\"four\")"
    );
    let e = load_with(&["machine.harts=four"]).unwrap_err();
    assert!(matches!(e, ConfigError::Type { .. }), "{e}");
    let e = load_with(&["machine.harts=-1"]).unwrap_err();
    assert!(msg_has(&e, "non-negative integer"), "{e}");
    let e = load_with(&["cflush.allow_user=1"]).unwrap_err();
    assert!(msg_has(&e, "expects true or false"), "{e}");
    let e = load_with(&["memory.nvmm.trcd_ns=fast"]).unwrap_err();
    assert!(msg_has(&e, "'memory.nvmm.trcd_ns' expects a number"), "{e}");
    let e = Config::from_toml_str("machine = 3\n", &[]).unwrap_err();
    assert!(msg_has(&e, "expects a table ([machine])"), "{e}");
    // Out of range for the field's integer type: reported by serde, with the key.
    let e = load_with(&["machine.harts=5000000000"]).unwrap_err();
    match &e {
        ConfigError::Value { key, origin, .. } => {
            assert_eq!(key, "machine.harts", "{e}");
            assert_eq!(*origin, Origin::Set("machine.harts=5000000000".into()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_enum_value_suggests() {
    let e = load_with(&["memory.nvmm.method=fien"]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("memory.nvmm.method"), "{msg}");
    assert!(
        msg.contains(
            "\"fien\" is not one of \"coarse\", \"fine\", \"proposed\", \"optane\" (did you mean \"fine\"?)"
        ),
        "{msg}"
    );
    let e = load_with(&["memory.controllers.ddr3.mapping=bank-rwo-column"]).unwrap_err();
    assert!(msg_has(&e, "unknown field 'rwo'"), "{e}");
}

// ---------------------------------------------------------------- --set

#[test]
fn set_each_nvmm_key() {
    let nvmm = |c: &Config| c.memory.regions["nvmm"].nvmm.clone().unwrap();
    for (m, want) in [
        ("coarse", Method::Coarse),
        ("fine", Method::Fine),
        ("proposed", Method::Proposed),
        ("optane", Method::Optane),
        ("\"fine\"", Method::Fine),
    ] {
        let c = load_with(&[&format!("memory.nvmm.method={m}")]).unwrap();
        assert_eq!(nvmm(&c).method, want);
    }
    let c = load_with(&[
        "memory.nvmm.trcd_ns=500",
        "memory.nvmm.trp_ns=1500.5",
        "memory.nvmm.tras_ns = 9000",
        "memory.nvmm.coarse_read_ns=250",
        "memory.nvmm.coarse_write_ns=2_000",
    ])
    .unwrap();
    let n = nvmm(&c);
    assert_eq!(n.trcd_ns, 500.0);
    assert_eq!(n.trp_ns, 1500.5);
    assert_eq!(n.tras_ns, 9000.0);
    assert_eq!(n.coarse_read_ns, 250.0);
    assert_eq!(n.coarse_write_ns, 2000.0);
    assert!(c.validate().unwrap().is_empty());
}

#[test]
fn set_other_kinds_of_value() {
    let c = load_with(&[
        "memory.nvmm.base=0xC000_0000",
        "machine.name=my machine",
        "machine.isa=rv64gc",
        "cflush.allow_user=false",
        "cache.l2.enabled=true",
        "memory.controllers.ddr3.mapping=row:14-bank-row:2-column",
        "memory.controllers.ddr3.refresh.trfc_ns=350",
        "machine.harts=1",
        "machine.harts=2",
    ])
    .unwrap();
    assert_eq!(c.machine.name, "my machine");
    assert_eq!(c.machine.isa, "rv64gc");
    assert_eq!(c.machine.extensions(), Ok(rvnvmm_isa::ExtSet::RV64GC));
    assert_eq!(c.machine.harts, 2, "later --set wins");
    assert!(!c.cflush.allow_user);
    assert!(c.cache.l2.enabled);
    let ddr3 = &c.memory.controllers["ddr3"];
    assert_eq!(
        ddr3.mapping,
        AddressMapping::Custom("row:14-bank-row:2-column".into())
    );
    assert_eq!(ddr3.refresh.as_ref().unwrap().trfc_ns, 350.0);
    c.validate().unwrap();
}

#[test]
fn set_region_kind_switches_nvmm_keys() {
    let c = load_with(&["memory.dram.kind=nvmm", "memory.dram.method=coarse"]).unwrap();
    let r = &c.memory.regions["dram"];
    assert_eq!(r.kind(), RegionKind::Nvmm);
    assert_eq!(r.nvmm.as_ref().unwrap().method, Method::Coarse);
    let e = load_with(&["memory.nvmm.kind=dram"]).unwrap_err();
    assert!(msg_has(&e, "applies only to NVMM regions"), "{e}");
}

// ---------------------------------------------------------------- validation

#[test]
fn overlap_is_an_error() {
    let c = load_with(&["memory.nvmm.base=0xB000_0000"]).unwrap();
    assert!(has_problem(&c, "memory.nvmm", "overlaps memory.dram"));
}

#[test]
fn zero_latency_is_an_error() {
    let c = load_with(&["memory.nvmm.trcd_ns=0"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.nvmm.trcd_ns",
        "must be a positive number of ns, at most 1e12, got 0"
    ));
    let c = load_with(&["memory.controllers.ddr3.tcl_ns=0"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.tcl_ns",
        "must be a positive number"
    ));
    let c = load_with(&["memory.nvmm.coarse_read_ns=-5"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.nvmm.coarse_read_ns",
        "must be from 0 to 1e12 ns, got -5"
    ));
    let c = load_with(&["memory.nvmm.size=0"]).unwrap();
    assert!(has_problem(&c, "memory.nvmm.size", "positive"));
    let c = load_with(&["cache.l1d.hit_latency_cycles=0"]).unwrap();
    assert!(has_problem(
        &c,
        "cache.l1d.hit_latency_cycles",
        "must be from 1 to 10_000 cycles, got 0"
    ));
    // Zero coarse delays and bus latencies are legal.
    let c = load_with(&["memory.nvmm.coarse_read_ns=0", "bus.request_latency_ns=0"]).unwrap();
    c.validate().unwrap();
}

#[test]
fn tras_above_ddr3_max_warns() {
    let c = load_with(&["memory.nvmm.tras_ns=80000"]).unwrap();
    let w = c.validate().unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].key, "memory.nvmm.tras_ns");
    assert!(w[0].message.contains("70200"), "{}", w[0]);
    let c = load_with(&["memory.nvmm.tras_ns=70200"]).unwrap();
    assert!(c.validate().unwrap().is_empty());
}

#[test]
fn zero_harts_is_an_error() {
    let c = load_with(&["machine.harts=0"]).unwrap();
    assert!(has_problem(
        &c,
        "machine.harts",
        "must be from 1 to 4095 harts, got 0"
    ));
}

#[test]
fn missing_controller_is_an_error() {
    let c = load_with(&["memory.nvmm.controller=ddr4"]).unwrap();
    assert!(has_problem(&c, "memory.nvmm.controller", "not defined"));
    let msg = c.validate().unwrap_err().to_string();
    assert!(msg.contains("[memory.controllers.ddr4]"), "{msg}");
}

#[test]
fn heap_on_nvmm_needs_nvmm_region() {
    let c = load_with(&["user.heap=nvmm"]).unwrap();
    c.validate().unwrap();
    let c = load_with(&["user.heap=nvmm", "memory.nvmm.kind=dram"]);
    // kind=dram on a region that still has NVMM keys is refused at load...
    assert!(c.is_err());
    // ...so build the DRAM-only machine from text.
    let text = r#"
        [user]
        heap = "nvmm"
        [memory.dram]
        base = 0x8000_0000
        size = 0x4000_0000
        kind = "dram"
        controller = "ddr3"
    "#;
    let c = Config::from_toml_str(text, &[]).unwrap();
    assert!(has_problem(
        &c,
        "user.heap",
        "no region has kind = \"nvmm\""
    ));
}

#[test]
fn stack_size_is_bounded_and_mmap_base_is_gone() {
    let c = load_with(&["user.stack_size=0x10_0000_0000"]).unwrap();
    c.validate().unwrap();
    for bad in ["0", "0x1001", "0x10_0000_1000"] {
        let c = load_with(&[&format!("user.stack_size={bad}")]).unwrap();
        assert!(
            has_problem(&c, "user.stack_size", "up to 0x10_0000_0000"),
            "{bad}"
        );
    }
    // The mmap area is placed below the stack, as Linux places it; the old
    // key named a floor nothing honoured.
    assert!(load_with(&["user.mmap_base=0x20_0000_0000"]).is_err());
}

#[test]
fn geometry_problems() {
    let c = load_with(&["memory.controllers.ddr3.banks=6"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.banks",
        "power of two"
    ));
    let c = load_with(&["memory.controllers.ddr3.rows=32768"]).unwrap();
    assert!(has_problem(&c, "memory.controllers.ddr3", "capacity"));
    let c = load_with(&["memory.controllers.ddr3.mapping=bank:2-row-column"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.mapping",
        "add up to 2 bits"
    ));
    let c = load_with(&["cache.l1d.size_bytes=12288"]).unwrap();
    assert!(has_problem(
        &c,
        "cache.l1d.size_bytes",
        "power-of-two number of sets"
    ));
    let c = load_with(&["memory.nvmm.base=0xC000_0800"]).unwrap();
    assert!(has_problem(&c, "memory.nvmm", "multiples of 4 KiB"));
}

#[test]
fn all_problems_are_listed() {
    let c = load_with(&["machine.harts=0", "memory.nvmm.trcd_ns=0"]).unwrap();
    let e = c.validate().unwrap_err();
    assert_eq!(problems(&c).len(), 2);
    let msg = e.to_string();
    assert!(
        msg.starts_with("invalid configuration (2 problems):"),
        "{msg}"
    );
    assert!(
        msg.contains("\n  - machine.harts: must be from 1 to 4095 harts, got 0"),
        "{msg}"
    );
}

#[test]
fn enum_names_match_serde() {
    fn check<T>(names: &[&str])
    where
        T: serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
    {
        for n in names {
            let v: T = toml::Value::String(n.to_string()).try_into().unwrap();
            assert_eq!(toml::Value::try_from(&v).unwrap().as_str(), Some(*n));
        }
    }
    check::<RegionKind>(RegionKind::NAMES);
    check::<Method>(Method::NAMES);
    check::<Replacement>(Replacement::NAMES);
    check::<Scheduler>(Scheduler::NAMES);
    check::<TrpOn>(TrpOn::NAMES);
    check::<KeepOpen>(KeepOpen::NAMES);
}

#[test]
fn zic64b_follows_the_cache_block_sizes() {
    use rvnvmm_isa::Ext;
    let c = load_with(&[]).unwrap();
    assert_eq!(c.cache.l1d.line_bytes, 64);
    assert!(c.extensions().unwrap().has(Ext::Zic64b));
    // 32-byte lines: cbo.clean/flush/inval and prefetch blocks are 32
    // bytes, so the default set leaves Zic64b out...
    let c = load_with(&["cache.l1d.line_bytes=32"]).unwrap();
    c.validate().unwrap();
    let isa = c.extensions().unwrap();
    assert!(!isa.has(Ext::Zic64b) && isa.has(Ext::Zicbom) && isa.has(Ext::Zicboz));
    // ...and naming it there is an error, unless no such block exists.
    let c = load_with(&[
        "cache.l1d.line_bytes=32",
        "machine.isa=rv64gc_zicbom_zic64b",
    ])
    .unwrap();
    assert!(has_problem(&c, "machine.isa", "cache.l1d.line_bytes = 32"));
    let c = load_with(&[
        "cache.l1d.line_bytes=32",
        "machine.isa=rv64gc_zicboz_zic64b",
    ])
    .unwrap();
    c.validate().unwrap();
    assert!(c.extensions().unwrap().has(Ext::Zic64b));
}

#[test]
fn isa_is_checked() {
    let c = load_with(&[]).unwrap();
    assert_eq!(c.machine.extensions(), Ok(rvnvmm_isa::ExtSet::DEFAULT));
    let bad = load_with(&["machine.isa=rv64gc_zbaa"]).unwrap();
    let err = bad.validate().unwrap_err().to_string();
    assert!(
        err.contains("machine.isa") && err.contains("did you mean 'zba'"),
        "{err}"
    );
    let bad = load_with(&["machine.isa=rv32gc"]).unwrap();
    assert!(bad.validate().is_err());
    let zero_clmul = load_with(&["core.clmul=0"]).unwrap();
    assert!(zero_clmul
        .validate()
        .unwrap_err()
        .to_string()
        .contains("core.clmul"));
}

#[test]
fn harts_and_cache_sizes_have_upper_bounds() {
    let c = load_with(&["machine.harts=10000000"]).unwrap();
    assert!(has_problem(&c, "machine.harts", "from 1 to 4095"));
    let c = load_with(&[&format!("machine.harts={}", crate::MAX_HARTS)]).unwrap();
    c.validate()
        .expect("MAX_HARTS harts with the default caches");
    let c = load_with(&["cache.l1d.size_bytes=1099511627776"]).unwrap();
    assert!(has_problem(
        &c,
        "cache.l1d.size_bytes",
        "largest cache level"
    ));
    let c = load_with(&["cache.l2.enabled=true", "cache.l2.size_bytes=1099511627776"]).unwrap();
    assert!(has_problem(
        &c,
        "cache.l2.size_bytes",
        "largest cache level"
    ));
    // Each level within its bound, but too many lines together.
    let c = load_with(&[
        "machine.harts=4095",
        "cache.l1d.size_bytes=67108864",
        "cache.l1d.ways=16",
    ])
    .unwrap();
    assert!(has_problem(&c, "cache", "cache lines"));
    assert!(!has_problem(&c, "cache.l1d.size_bytes", ""));
}

#[test]
fn integers_beyond_64_bit_signed_are_named_as_such() {
    for v in [
        "9223372036854775808",
        "18446744073709551615",
        "0xffffffffffffffff",
        "-9223372036854775809",
        "99999999999999999999999",
    ] {
        let e = Config::load(None, &[format!("memory.dram.size={v}")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not fit a config integer"), "{v}: {e}");
        assert!(!e.contains("string"), "{v}: {e}");
    }
    // Non-numbers are still strings to the type check.
    let e = Config::load(None, &["machine.harts=four".into()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("gives a string"), "{e}");
    for lit in ["12", "+3", "-4", "0xff_ff", "1_000"] {
        assert!(crate::load::is_integer_literal(lit), "{lit}");
    }
    for not in [
        "", "0x", "x1", "1.5", "1e3", "fine", "-", "0x_ff", "1__0", "1_",
    ] {
        assert!(!crate::load::is_integer_literal(not), "{not}");
    }
}

#[test]
fn core_costs_follow_the_model() {
    let timed = Config::load(None, &[]).unwrap();
    assert_eq!(timed.core_costs(), timed.core);
    let functional = Config::load(None, &["machine.model=functional".to_string()]).unwrap();
    assert_eq!(functional.core_costs(), CoreCosts::FUNCTIONAL);
    assert_ne!(
        functional.core,
        CoreCosts::FUNCTIONAL,
        "[core] itself stays"
    );
}

#[test]
fn tlb_geometry_is_checked() {
    let check = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        Config::load(None, &sets)
            .unwrap()
            .validate()
            .map_err(|e| e.to_string())
    };
    let c = Config::load(None, &["tlb.enabled=true".into()]).unwrap();
    assert!(c.tlb.enabled && c.tlb.dtlb.entries == 32 && c.tlb.l2.entries == 0);
    assert!(check(&["tlb.enabled=true"]).is_ok());
    let e = check(&["tlb.dtlb.entries=24", "tlb.dtlb.ways=8"]).unwrap_err();
    assert!(
        e.contains("tlb.dtlb.entries") && e.contains("power-of-two"),
        "{e}"
    );
    let e = check(&["tlb.itlb.ways=0"]).unwrap_err();
    assert!(e.contains("tlb.itlb.ways"), "{e}");
    // An L2 TLB of 0 entries is none; any other size must fit its ways.
    assert!(check(&["tlb.l2.entries=512", "tlb.l2.ways=4"]).is_ok());
    assert!(check(&["tlb.l2.entries=100", "tlb.l2.ways=4"]).is_err());
}

#[test]
fn optane_keys_are_set_and_checked() {
    let c = load_with(&[
        "memory.nvmm.method=optane",
        "memory.nvmm.optane.dimms=2",
        "memory.nvmm.optane.replacement=random",
        "memory.nvmm.optane.prefetch=false",
    ])
    .unwrap();
    let o = &c.memory.regions["nvmm"].nvmm.as_ref().unwrap().optane;
    assert_eq!(
        (o.dimms, o.replacement, o.prefetch),
        (2, Replacement::Random, false)
    );
    assert!(c.validate().is_ok());
    for (set, key) in [
        (
            "memory.nvmm.optane.xpline_bytes=100",
            "memory.nvmm.optane.xpline_bytes",
        ),
        (
            "memory.nvmm.optane.xpbuffer_bytes=1000",
            "memory.nvmm.optane.xpbuffer_bytes",
        ),
        (
            "memory.nvmm.optane.interleave_bytes=128",
            "memory.nvmm.optane.interleave_bytes",
        ),
        (
            "memory.nvmm.optane.wpq_entries=0",
            "memory.nvmm.optane.wpq_entries",
        ),
        (
            "memory.nvmm.optane.media_read_gbps=0",
            "memory.nvmm.optane.media_read_gbps",
        ),
        (
            "memory.nvmm.optane.buffer_read_ns=-1",
            "memory.nvmm.optane.buffer_read_ns",
        ),
    ] {
        let e = load_with(&[set]).unwrap().validate().unwrap_err();
        assert!(msg_has(&e, key), "{set}: {e}");
    }
    let e = load_with(&["memory.nvmm.optane.xpbufer_bytes=1"]).unwrap_err();
    assert!(
        e.to_string().contains("memory.nvmm.optane.xpbuffer_bytes"),
        "{e}"
    );
}

#[test]
fn topology_from_cores_or_harts() {
    let topo = |c: &Config| (c.machine.harts, c.machine.cores, c.machine.threads_per_core);
    let c = Config::from_toml_str("[machine]\ncores = 2\nthreads_per_core = 2\n", &[]).unwrap();
    assert_eq!(topo(&c), (4, 2, 2));
    let c = Config::from_toml_str("[machine]\nharts = 6\nthreads_per_core = 2\n", &[]).unwrap();
    assert_eq!(topo(&c), (6, 3, 2));
    // --set replaces the file's topology; threads_per_core from the file stays.
    let c = Config::from_toml_str(
        "[machine]\ncores = 2\nthreads_per_core = 2\n",
        &["machine.harts=2".into()],
    )
    .unwrap();
    assert_eq!(topo(&c), (2, 1, 2));
    let c = Config::load(None, &["machine.cores=1".into()]).unwrap();
    assert_eq!(topo(&c), (1, 1, 1));
    // The same level giving both: they must agree.
    let c = Config::from_toml_str(
        "[machine]\nharts = 4\ncores = 2\nthreads_per_core = 2\n",
        &[],
    )
    .unwrap();
    assert_eq!(topo(&c), (4, 2, 2));
    c.validate().unwrap();
    let e = Config::from_toml_str("[machine]\nharts = 4\ncores = 3\n", &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("machine.cores x machine.threads_per_core is 3 x 1 = 3"),
        "{e}"
    );
    let e = Config::load(
        None,
        &[
            "machine.harts=3".into(),
            "machine.threads_per_core=2".into(),
        ],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("do not make whole cores of 2 threads"),
        "{e}"
    );
    // A config built in code that disagrees with itself fails validation.
    let mut c = Config::default();
    c.machine.threads_per_core = 2;
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.contains("4 harts, but machine.cores x machine.threads_per_core is 4 x 2"),
        "{e}"
    );
    c.machine.cores = 2;
    c.core.issue_width = 0;
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("core.issue_width"), "{e}");
}

// ---------------------------------------------------------------- ranges

use crate::range::{range_of, Bound};
use crate::schema::{schema, LeafKind};

/// The numeric keys of `cfg`, optional ones included.
fn numeric_keys(cfg: &Config) -> Vec<String> {
    schema()
        .valid_keys(&cfg.tree())
        .into_iter()
        .filter(|(_, kind)| matches!(kind, LeafKind::Int | LeafKind::Float))
        .map(|(k, _)| k)
        .collect()
}

/// Values at and just past each end of `bound`, with whether validation
/// must accept them.
fn probes(bound: Bound) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    match bound {
        Bound::Int { min, max } => {
            out.push((max.to_string(), true));
            out.push(((max + 1).to_string(), false));
            out.push((min.to_string(), true));
            if min > 0 {
                out.push(((min - 1).to_string(), false));
            }
        }
        Bound::ZeroOrInt { min, max } => {
            out.push(("0".into(), true));
            out.push((min.to_string(), true));
            out.push(((min - 1).to_string(), false));
            out.push((max.to_string(), true));
            out.push(((max + 1).to_string(), false));
        }
        Bound::Float { min, open, max } => {
            let f = |v: f64| format!("{v:?}");
            out.push((f(max), true));
            out.push((f(max * (1.0 + 1e-9)), false));
            if open {
                out.push((f(min), false));
            } else {
                out.push((f(min), true));
                out.push((f(min - (min.abs() * 1e-3).max(1e-3)), false));
            }
        }
    }
    out
}

#[test]
fn every_numeric_key_of_every_machine_has_a_range() {
    for name in Config::builtin_names() {
        let c = Config::load(Some(name), &[]).unwrap();
        for key in numeric_keys(&c) {
            assert!(
                range_of(&key).is_some(),
                "{name}: {key} has no range; give it one in range.rs and docs/config.md"
            );
        }
    }
}

/// Every numeric key takes the ends of its range and refuses a value just
/// past them, in a problem on that key (or, for a derived key, the key it
/// follows).
#[test]
fn every_range_is_enforced_at_its_ends() {
    let base = Config::default();
    for key in numeric_keys(&base) {
        let range = range_of(&key).unwrap();
        // A machine on which the key's ends are otherwise valid.
        let context: &[&str] = match key.as_str() {
            "machine.threads_per_core" => &["machine.cores=1"],
            _ => &[],
        };
        for (value, accept) in probes(range.bound) {
            let mut args = sets(context);
            args.push(format!("{key}={value}"));
            let what = format!("--set {key}={value}");
            let cfg = match Config::load(None, &args) {
                Ok(cfg) => cfg,
                Err(e) => {
                    assert!(!accept, "{what}: refused at load: {e}");
                    assert!(e.to_string().contains(&key), "{what}: {e}");
                    continue;
                }
            };
            let problems = match cfg.validate() {
                Ok(_) => Vec::new(),
                Err(ConfigError::Invalid { problems }) => problems,
                Err(e) => panic!("{what}: {e}"),
            };
            let blamed =
                |p: &&Problem| p.key == key || key == "machine.cores" && p.key == "machine.harts";
            let on_key: Vec<&Problem> = problems.iter().filter(blamed).collect();
            if accept {
                assert!(
                    on_key.iter().all(|p| !p.message.contains("must be from")
                        && !p.message.contains("must be above")
                        && !p.message.contains("must be a positive number")
                        && !p.message.contains("0 or from")),
                    "{what}: the range refused its own end: {on_key:?}"
                );
            } else {
                assert!(
                    !on_key.is_empty(),
                    "{what}: accepted; problems {problems:?}"
                );
            }
        }
    }
}

/// One key of each class, by the message a user sees: the key, the range
/// and the value.
#[test]
fn out_of_range_messages_name_key_range_and_value() {
    let refused = |set: &str| {
        let e = load_with(&[set]).unwrap().validate().unwrap_err();
        e.to_string()
    };
    let accepted = |set: &[&str]| load_with(set).unwrap().validate().unwrap();
    // A core cost (a divisor of u32::MAX once wrapped a block's cost sum).
    accepted(&[
        "core.div=10000",
        "core.load_use=10000",
        "core.branch_taken=0",
    ]);
    let e = refused("core.div=4294967295");
    assert!(
        e.contains("core.div: must be from 1 to 10_000 cycles, got 4294967295"),
        "{e}"
    );
    assert!(refused("core.div=10001").contains("core.div: must be from 1 to 10_000"));
    assert!(refused("core.alu=0").contains("core.alu: must be from 1 to 10_000 cycles, got 0"));
    // A latency that may be 0 (1e17 ns once saturated to u64::MAX ps and wrapped).
    accepted(&["bus.request_latency_ns=1e12", "bus.response_latency_ns=0"]);
    let e = refused("bus.request_latency_ns=1e17");
    assert!(
        e.contains("bus.request_latency_ns: must be from 0 to 1e12 ns, got 1e17"),
        "{e}"
    );
    assert!(refused("bus.response_latency_ns=1e17").contains("bus.response_latency_ns: must be"));
    assert!(refused("bus.response_latency_ns=-0.5").contains("got -0.5"));
    // A latency that must be positive.
    accepted(&["memory.nvmm.trcd_ns=1e12"]);
    let e = refused("memory.nvmm.trcd_ns=1e17");
    assert!(
        e.contains("memory.nvmm.trcd_ns: must be a positive number of ns, at most 1e12, got 1e17"),
        "{e}"
    );
    assert!(refused("memory.controllers.ddr3.refresh.trfc_ns=0")
        .contains("must be a positive number of ns"));
    // A clock.
    accepted(&["machine.clock_hz=100_000_000_000", "bus.clock_hz=1_000_000"]);
    let e = refused("machine.clock_hz=999999");
    assert!(
        e.contains("machine.clock_hz: must be from 1_000_000 to 100_000_000_000 Hz, got 999999"),
        "{e}"
    );
    let e = refused("bus.clock_hz=999999");
    assert!(
        e.contains("bus.clock_hz: must be 0 or from 1_000_000 to 100_000_000_000 Hz, got 999999 (0: the core clock)"),
        "{e}"
    );
    let e = refused("memory.controllers.ddr3.clock_mhz=0.5");
    assert!(e.contains("must be from 1 to 100000 MHz, got 0.5"), "{e}");
    // A count and a size.
    accepted(&[
        "cache.l1d.mshrs=1024",
        "memory.controllers.ddr3.read_queue=65536",
    ]);
    assert!(refused("cache.l1d.mshrs=1025")
        .contains("cache.l1d.mshrs: must be from 0 to 1024 misses, got 1025"));
    let e = refused("memory.nvmm.size=0x100_0000_0000_0000");
    assert!(e.contains("memory.nvmm.size: base 0xC000_0000 + size 0x100_0000_0000_0000 passes 0x100_0000_0000_0000 (2^56)"), "{e}");
    let e = refused("user.time_slice_ns=0");
    assert!(
        e.contains("user.time_slice_ns: must be from 1 to 1_000_000_000_000 ns, got 0"),
        "{e}"
    );
    // The whole error names the key, the range and the value on one line.
    let e = load_with(&["core.div=4294967295"])
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration (1 problem):\n  - core.div: must be from 1 to 10_000 cycles, got 4294967295"
    );
}

#[test]
fn a_disabled_l2_is_validated_too() {
    let c = load_with(&[]).unwrap();
    assert!(!c.cache.l2.enabled);
    for (set, key, text) in [
        (
            "cache.l2.hit_latency_cycles=0",
            "cache.l2.hit_latency_cycles",
            "must be from 1 to 10_000 cycles, got 0",
        ),
        (
            "cache.l2.ways=0",
            "cache.l2.ways",
            "must be from 1 to 65_536 ways, got 0",
        ),
        (
            "cache.l2.size_bytes=12288",
            "cache.l2.size_bytes",
            "power-of-two number of sets",
        ),
        (
            "cache.l2.line_bytes=48",
            "cache.l2.line_bytes",
            "power of two",
        ),
        (
            "cache.l2.mshrs=5000",
            "cache.l2.mshrs",
            "must be from 0 to 1024 misses",
        ),
        (
            "cache.l2.size_bytes=1099511627776",
            "cache.l2.size_bytes",
            "largest cache level",
        ),
    ] {
        let c = load_with(&[set]).unwrap();
        assert!(!c.cache.l2.enabled, "{set}");
        assert!(has_problem(&c, key, text), "{set}: {:?}", c.validate());
    }
    // Disabled or not, its keys are the same; enabling a good one is fine.
    load_with(&["cache.l2.enabled=true"])
        .unwrap()
        .validate()
        .unwrap();
}

/// docs/config.md states each numeric key's range as validation enforces it.
#[test]
fn docs_state_every_range() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md"))
            .unwrap();
    for key in numeric_keys(&Config::default()) {
        let templ = key
            .replace("memory.controllers.ddr3.", "memory.controllers.NAME.")
            .replace("memory.dram.", "memory.NAME.")
            .replace("memory.nvmm.", "memory.NAME.");
        let row = doc
            .lines()
            .find(|l| {
                l.starts_with("| ")
                    && l.split(" | ")
                        .next()
                        .unwrap_or("")
                        .contains(&format!("`{templ}`"))
            })
            .unwrap_or_else(|| panic!("docs/config.md has no table row for `{templ}`"));
        let range = range_of(&key).unwrap().doc();
        assert!(
            row.contains(&range),
            "docs/config.md's row of `{templ}` does not state its range {range:?}:\n{row}"
        );
    }
}

#[test]
fn nvmm_settings_apply_by_key_as_one_change() {
    let p = NvmmParams::default();
    let q = p
        .with_settings(&[
            ("method", "fine".into()),
            ("trcd_ns", "250".into()),
            ("optane.dimms", "2".into()),
        ])
        .unwrap();
    assert_eq!(
        (q.method, q.trcd_ns, q.optane.dimms),
        (Method::Fine, 250.0, 2)
    );
    assert_eq!(q.trp_ns, p.trp_ns);
    assert!(p
        .with_settings(&[("trcd", "1".into())])
        .unwrap_err()
        .contains("trcd"));
    assert!(p.with_settings(&[("method", "slow".into())]).is_err());
    assert!(p.with_settings(&[("trcd_ns", "fast".into())]).is_err());
}

#[test]
fn memory_nodes_are_numbered_by_address_unless_given() {
    let mut cfg = Config::default();
    let ids = |cfg: &Config| -> Vec<(String, u32)> {
        cfg.memory
            .nodes()
            .iter()
            .map(|n| (n.name.to_string(), n.id))
            .collect()
    };
    assert_eq!(
        ids(&cfg),
        [("dram".to_string(), 0), ("nvmm".to_string(), 1)]
    );
    cfg.memory.regions.get_mut("nvmm").unwrap().node = Some(4);
    assert_eq!(ids(&cfg)[1].1, 4);
    let cfg = Config::from_toml_str("", &["memory.nvmm.node=3".into()]).unwrap();
    assert_eq!(ids(&cfg)[1].1, 3);
    assert!(cfg.to_toml_string().contains("node = 3"));
    let err = Config::from_toml_str("", &["memory.nvmm.node=5000".into()])
        .and_then(|c| c.validate().map(|_| c))
        .unwrap_err();
    assert!(err.to_string().contains("memory.nvmm.node"), "{err}");
}

/// `memory.NAME.soft_reserved` is off unless set, serialises only when
/// on (so existing machines print as before), and may not take every DRAM
/// region away from the boot.
#[test]
fn soft_reserved_regions_leave_some_dram_to_boot_in() {
    let cfg = Config::default();
    assert!(cfg.memory.regions.values().all(|r| !r.soft_reserved));
    assert!(!cfg.to_toml_string().contains("soft_reserved"));
    let cfg = Config::from_toml_str("", &["memory.nvmm.soft_reserved=true".into()]).unwrap();
    assert!(cfg.memory.regions["nvmm"].soft_reserved);
    assert!(cfg.to_toml_string().contains("soft_reserved = true"));
    cfg.validate().unwrap();
    let err = Config::from_toml_str("", &["memory.dram.soft_reserved=true".into()])
        .and_then(|c| c.validate().map(|_| c))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("memory.dram.soft_reserved") && text.contains("no DRAM region"),
        "{text}"
    );
    let err = Config::from_toml_str("", &["memory.nvmm.soft_reserved=1".into()]).unwrap_err();
    assert!(err.to_string().contains("soft_reserved"), "{err}");
}

#[test]
fn a_technology_takes_its_own_settings_by_name() {
    let cfg = Config::from_toml_str(
        "",
        &[
            "memory.controllers.ddr3.technology=fixed-latency".into(),
            "memory.controllers.ddr3.params.read_ns=80".into(),
        ],
    )
    .unwrap();
    let c = &cfg.memory.controllers["ddr3"];
    assert_eq!(c.technology, "fixed-latency");
    assert_eq!(c.params["read_ns"], 80.0);
    assert_eq!(
        Config::default().memory.controllers["ddr3"].technology,
        "ddr3"
    );
    let text = cfg.to_toml_string();
    assert!(text.contains("read_ns = 80"), "{text}");
    assert_eq!(Config::from_toml_str(&text, &[]).unwrap(), cfg);
}

#[test]
fn a_controller_may_sit_behind_a_cxl_link() {
    // configs/dram-cxl.toml: local DRAM, and DRAM behind a CXL link.
    let cfg = Config::load(
        Some("dram-cxl"),
        &sets(&["memory.controllers.cxl.link.lanes=16"]),
    )
    .unwrap();
    assert!(cfg.validate().unwrap().is_empty());
    assert_eq!(cfg.memory.controllers["ddr3"].link, None);
    let link = cfg.memory.controllers["cxl"].link.as_ref().unwrap();
    assert_eq!(
        *link,
        Link {
            lanes: 16,
            ..Link::default()
        }
    );
    assert_eq!(
        (link.kind, link.generation, link.retimers),
        (LinkKind::Cxl, 5, 0)
    );
    let nodes: Vec<(&str, u32)> = cfg.memory.nodes().iter().map(|n| (n.name, n.id)).collect();
    assert_eq!(nodes, [("dram", 0), ("cxl", 1)]);
    // Printed only where there is one, and read back the same.
    let printed = cfg.to_toml_string();
    assert_eq!(printed.matches("kind = \"cxl\"").count(), 1, "{printed}");
    assert!(
        printed.contains("[memory.controllers.cxl.link]"),
        "{printed}"
    );
    assert_eq!(Config::from_toml_str(&printed, &[]).unwrap(), cfg);
    assert!(!Config::default().to_toml_string().contains("link"));
    // `--set` makes one where there was none, its other keys at their
    // defaults.
    let cfg = Config::load(
        Some("dram-cxl"),
        &sets(&["memory.controllers.ddr3.link.generation=6"]),
    )
    .unwrap();
    assert_eq!(
        cfg.memory.controllers["ddr3"].link,
        Some(Link {
            generation: 6,
            ..Link::default()
        })
    );
}

#[test]
fn bad_link_settings_name_their_key() {
    let refused = |set: &str| -> String {
        match Config::load(None, &sets(&[set])) {
            Err(e) => e.to_string(),
            Ok(cfg) => cfg.validate().unwrap_err().to_string(),
        }
    };
    for (set, key, says) in [
        (
            "memory.controllers.ddr3.link.lanes=12",
            "link.lanes",
            "power of two",
        ),
        (
            "memory.controllers.ddr3.link.lanes=32",
            "link.lanes",
            "from 1 to 16",
        ),
        (
            "memory.controllers.ddr3.link.generation=7",
            "link.generation",
            "from 3 to 6",
        ),
        (
            "memory.controllers.ddr3.link.retimers=3",
            "link.retimers",
            "at most two",
        ),
        (
            "memory.controllers.ddr3.link.port_ns=-1",
            "link.port_ns",
            "from 0",
        ),
        (
            "memory.controllers.ddr3.link.kind=nvlink",
            "link.kind",
            "\"cxl\"",
        ),
        (
            "memory.controllers.ddr3.link.width=8",
            "link.width",
            "memory.controllers.ddr3.link",
        ),
    ] {
        let e = refused(set);
        assert!(e.contains(key) && e.contains(says), "{set}: {e}");
    }
}

// ------------------------------------------------------------- speed bins

fn ddr3_of(c: &Config) -> &ControllerConfig {
    &c.memory.controllers["ddr3"]
}

#[test]
fn a_speed_bin_fills_exactly_the_jedec_values() {
    let c = load_with(&["memory.controllers.ddr3.speed_bin=DDR4-3200AA"]).unwrap();
    c.validate().unwrap();
    let d = ddr3_of(&c);
    // JESD79-4C DDR4-3200AA (22-22-22 at 0.625 ns), x8 8 Gb.
    assert_eq!(d.speed_bin.as_deref(), Some("DDR4-3200AA"));
    assert_eq!(d.tck_ns, 0.625);
    assert_eq!((d.tcl_ns, d.trcd_ns, d.trp_ns), (13.75, 13.75, 13.75));
    assert_eq!((d.tcwl_ns, d.tburst_ns, d.tras_ns), (10.0, 2.5, 32.5));
    assert_eq!((d.trtp_ns, d.twr_ns), (7.5, 15.0));
    assert_eq!((d.tccd_ns, d.tccd_l_ns), (2.5, Some(5.0)));
    assert_eq!((d.trrd_ns, d.trrd_l_ns), (2.5, Some(5.0)));
    assert_eq!(d.tfaw_ns, Some(21.25));
    assert_eq!((d.banks, d.bank_groups, d.rows), (16, 4, 65536));
    assert_eq!((d.columns, d.row_buffer_bytes), (1024, 8192));
    let r = d.refresh.as_ref().unwrap();
    assert_eq!((r.trefi_ns, r.trfc_ns), (7800.0, 350.0));
    // DDR5-4800B, one 32-bit sub-channel: 40-39-39 at 0.416 ns, BL16.
    let c = load_with(&["memory.controllers.ddr3.speed_bin=DDR5-4800B"]).unwrap();
    let d = ddr3_of(&c);
    assert_eq!((d.tcl_ns, d.trcd_ns, d.trp_ns), (16.64, 16.224, 16.224));
    assert_eq!(
        (d.tburst_ns, d.tccd_ns, d.tccd_l_ns),
        (3.328, 3.328, Some(4.992))
    );
    assert_eq!((d.banks, d.bank_groups, d.bus_bytes()), (32, 8, 4));
    assert_eq!(d.refresh.as_ref().unwrap().trefi_ns, 3900.0);
    // Loading gives what `SpeedBin::apply` gives, for every bin.
    for bin in speed_bin::SPEED_BINS {
        let text = format!("[memory.controllers.ddr3]\nspeed_bin = \"{}\"\n", bin.name);
        let c = Config::from_toml_str(&text, &[]).unwrap();
        let mut want = ControllerConfig::default();
        bin.apply(&mut want);
        assert_eq!(ddr3_of(&c), &want, "{}", bin.name);
    }
}

#[test]
fn ddr3_1600k_is_the_default_timing() {
    let bin = speed_bin::speed_bin("DDR3-1600K").unwrap();
    let mut c = ControllerConfig::default();
    let d = c.clone();
    bin.apply(&mut c);
    assert_eq!(
        (
            c.tck_ns,
            c.tcl_ns,
            c.tcwl_ns,
            c.tburst_ns,
            c.trcd_ns,
            c.trp_ns
        ),
        (
            d.tck_ns,
            d.tcl_ns,
            d.tcwl_ns,
            d.tburst_ns,
            d.trcd_ns,
            d.trp_ns
        )
    );
    assert_eq!(
        (c.tras_ns, c.trtp_ns, c.twr_ns, c.tccd_ns),
        (d.tras_ns, d.trtp_ns, d.twr_ns, d.tccd_ns)
    );
    assert_eq!((c.banks, c.rows, c.columns), (d.banks, d.rows, d.columns));
    // tRRD: 5 clocks (the default's 6 ns rounds up to them); tFAW as
    // freedom-u500's 30 ns; refresh as `Refresh::default()`.
    assert_eq!((c.trrd_ns, d.trrd_ns), (6.25, 6.0));
    assert_eq!(c.tfaw_ns, Some(30.0));
    let r = c.refresh.unwrap();
    assert_eq!((r.trefi_ns, r.trfc_ns), (7800.0, 260.0));
}

#[test]
fn keys_beside_a_speed_bin_override_it() {
    // In the file: the file's own keys win over its bin.
    let text = "[memory.controllers.ddr3]\nspeed_bin = \"DDR4-2400R\"\ntcl_ns = 15.0\n\n[memory.controllers.ddr3.refresh]\npostpone_max = 2\n";
    let c = Config::from_toml_str(text, &[]).unwrap();
    let d = ddr3_of(&c);
    assert_eq!((d.tcl_ns, d.trcd_ns), (15.0, 13.328));
    let r = d.refresh.as_ref().unwrap();
    assert_eq!((r.postpone_max, r.trfc_ns), (2, 350.0));
    // A later --set wins over the bin.
    let c = Config::from_toml_str(text, &sets(&["memory.controllers.ddr3.trcd_ns=20"])).unwrap();
    assert_eq!((ddr3_of(&c).tcl_ns, ddr3_of(&c).trcd_ns), (15.0, 20.0));
    // A --set of speed_bin overrides the file's keys, and a --set after it
    // overrides the bin.
    let c = Config::from_toml_str(
        text,
        &sets(&[
            "memory.controllers.ddr3.speed_bin=DDR4-3200AA",
            "memory.controllers.ddr3.bank_groups=2",
        ]),
    )
    .unwrap();
    let d = ddr3_of(&c);
    assert_eq!((d.tcl_ns, d.bank_groups, d.banks), (13.75, 2, 16));
    // A built-in machine's controller written in full by its file.
    let c = Config::load(
        Some("freedom-u500"),
        &sets(&["memory.controllers.ddr3.speed_bin=DDR5-6400B"]),
    )
    .unwrap();
    assert_eq!(ddr3_of(&c).tcl_ns, 16.224);
    c.validate().unwrap();
    // `config show` reads back to the same machine.
    assert_eq!(Config::from_toml_str(&c.to_toml_string(), &[]).unwrap(), c);
}

#[test]
fn bad_speed_bins_and_group_timings_are_refused() {
    let e = load_with(&["memory.controllers.ddr3.speed_bin=DDR4-3200"]).unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("memory.controllers.ddr3.speed_bin"),
        "{shown}"
    );
    assert!(shown.contains("\"DDR4-3200AA\""), "{shown}");
    assert!(shown.contains("\"DDR5-4800B\""), "{shown}");
    let e =
        Config::from_toml_str("[memory.controllers.ddr3]\nspeed_bin = 4800\n", &[]).unwrap_err();
    assert!(e.to_string().contains("speed_bin"), "{e}");

    let mut c = Config::default();
    let d = c.memory.controllers.get_mut("ddr3").unwrap();
    d.speed_bin = Some("DDR9".into());
    d.tccd_l_ns = Some(2.0);
    d.trrd_l_ns = Some(1.0);
    d.bank_groups = 16;
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.speed_bin",
        "\"DDR4-2400R\""
    ));
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.tccd_l_ns",
        "below tccd_ns"
    ));
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.trrd_l_ns",
        "below trrd_ns"
    ));
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.bank_groups",
        "16 bank groups for 8 banks"
    ));
    let c = load_with(&["memory.controllers.ddr3.bank_groups=3"]).unwrap();
    assert!(has_problem(
        &c,
        "memory.controllers.ddr3.bank_groups",
        "power of two"
    ));
    let e = load_with(&["memory.controllers.ddr3.bank_groups=0"]).unwrap();
    assert!(has_problem(
        &e,
        "memory.controllers.ddr3.bank_groups",
        "bank groups"
    ));
}
