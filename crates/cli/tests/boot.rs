//! `rvnvmm boot`: OpenSBI 1.6 and Debian's 6.12 kernel boot the initramfs of
//! `scripts/build-initramfs.sh` on four harts of the full-system board, run
//! its test script and power off, with the same script output as under
//! `qemu-system-riscv64` (`tests/system.rs`); and the command's errors.
//! Needs `scripts/setup.sh` and `make -C guest` first (`scripts/test.sh`
//! does both).

#[path = "../src/artefacts.rs"]
mod artefacts;
#[path = "support/boot_input.rs"]
mod boot_input;
#[path = "support/host_tool.rs"]
mod host_tool;
#[path = "support/initramfs.rs"]
mod initramfs;

use initramfs::{initramfs, rc_lines, RC_LINES};

use host_tool::host_tool;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn boot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("boot")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rvnvmm boot")
}

/// Boots the initramfs to power-off on `harts` harts with `args` and
/// `--stats`: the console and the statistics less the host's own timing
/// (`host_seconds`, `mips`). `what` names the boot in failures.
fn boot_to_power_off(
    what: &str,
    initrd: &str,
    harts: &str,
    args: &[&str],
) -> (String, serde_json::Value) {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let stats = std::env::temp_dir().join(format!(
        "rvnvmm-boot-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    let mut all = vec![
        "--smp",
        harts,
        "--initrd",
        initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
        "--stats",
        stats.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = boot(&all);
    let console = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{what}: {console}\n{stderr}");
    // The script's lines, with this machine's hart count.
    let expected: Vec<String> = RC_LINES
        .iter()
        .map(|l| l.replace(" 4", &format!(" {harts}")))
        .collect();
    assert_eq!(rc_lines(&console), expected, "{what}: {console}\n{stderr}");
    let text = std::fs::read_to_string(&stats).expect("statistics written");
    std::fs::remove_file(&stats).ok();
    let mut json: serde_json::Value = serde_json::from_str(&text).expect("statistics JSON");
    let top = json.as_object_mut().expect("an object");
    assert!(top.contains_key("instructions") && top.contains_key("sim_time_ns"));
    for host_key in ["host_seconds", "mips"] {
        assert!(top.remove(host_key).is_some(), "{what}: no {host_key}");
    }
    (console, json)
}

/// Boots with `args` after the initramfs, the console input written at
/// once (long before Linux opens the console: none of it may be lost).
/// Returns the exit status, the console (without carriage returns) and
/// stderr.
fn boot_with_input(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let initrd = initramfs();
    let out = boot_input::boot_with_input(
        &[&["--max-insns", "30000000000", "--initrd", &initrd], args].concat(),
        input,
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).replace('\r', ""),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rvnvmm-boot-{}-{name}", std::process::id()));
    std::fs::write(&p, contents).unwrap();
    p
}

#[test]
fn debian_linux_boots_on_four_harts_runs_the_script_and_powers_off() {
    let initrd = initramfs();
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--smp",
        "4",
        "--initrd",
        &initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{console}\n{stderr}");
    assert!(console.contains("OpenSBI v1.6"), "{console}");
    assert_eq!(rc_lines(&console), RC_LINES, "{console}\n{stderr}");
    assert!(console.contains("reboot: Power down"), "{console}");
}

#[test]
fn the_firmware_banner_appears_and_a_hang_beyond_max_insns_fails() {
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--initrd",
        &initramfs(),
        "--max-insns",
        "20000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(console.contains("OpenSBI v1.6"), "{console}");
    assert!(console.contains("Boot HART ID"), "{console}");
    assert_eq!(out.status.code(), Some(124), "{stderr}");
    assert!(
        stderr.starts_with("rvnvmm: stopped at --max-insns: 20000000 instructions retired"),
        "{stderr}"
    );
}

#[test]
fn a_kernel_panic_is_an_error() {
    // No initramfs and no root device: the kernel cannot mount a root.
    let empty = temp_file("empty-initrd", b"");
    let out = boot(&[
        "--set",
        "machine.model=functional",
        "--initrd",
        empty.to_str().unwrap(),
        "--append",
        "console=ttyS0 quiet root=/dev/vda",
        "--max-insns",
        "30000000000",
    ]);
    std::fs::remove_file(&empty).ok();
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(console.contains("Kernel panic - not syncing"), "{console}");
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the guest kernel panicked: ") && stderr.contains("Kernel panic"),
        "{stderr}"
    );
}

#[test]
fn a_missing_kernel_is_a_clear_error() {
    let fw = temp_file("fw-missing", b"firmware");
    let out = boot(&[
        "--firmware",
        fw.to_str().unwrap(),
        "--kernel",
        "/nonexistent/Image",
    ]);
    std::fs::remove_file(&fw).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the kernel /nonexistent/Image"),
        "{stderr}"
    );
    let out = boot(&["--firmware", "/nonexistent/fw_dynamic.bin"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the firmware /nonexistent/fw_dynamic.bin"),
        "{stderr}"
    );
}

#[test]
fn a_kernel_that_is_not_an_image_is_a_clear_error() {
    let fw = temp_file("fw-bad", b"firmware");
    let text = temp_file("not-an-image", &[0x13u8; 4096]);
    let elf = temp_file("elf", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0 and the rest");
    for (kernel, want) in [
        (&text, "is not a RISC-V Linux Image"),
        (&elf, "is an ELF file"),
    ] {
        let out = boot(&[
            "--firmware",
            fw.to_str().unwrap(),
            "--kernel",
            kernel.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
        assert!(stderr.contains(kernel.to_str().unwrap()), "{stderr}");
    }
    for f in [fw, text, elf] {
        std::fs::remove_file(f).ok();
    }
}

/// Console input reaches the shell, on a machine of 2 cores x 2 threads
/// whose topology Linux reads from the device tree's `cpu-map`: CPUs 0-1
/// are core 0's threads, 2-3 core 1's. Linux boots fast-forwarded in the
/// functional model; under the timing model four shell loops, one pinned
/// to each CPU, keep both threads of each core busy, and they share the
/// core's issue slots: every hart's instructions waited for slots its
/// sibling took (`issue_wait_cycles`). About 35 s.
#[test]
fn an_smt_machine_shows_its_topology_and_its_threads_share_the_core() {
    let stats = std::env::temp_dir().join(format!("rvnvmm-boot-{}-smt.json", std::process::id()));
    let (status, console, stderr) = boot_with_input(
        &[
            "--set",
            "machine.cores=2",
            "--set",
            "machine.threads_per_core=2",
            "--append",
            "console=ttyS0 quiet",
            "--fast-forward",
            "marker",
            "--stats",
            stats.to_str().unwrap(),
        ],
        "echo guest says $((6*7))\nnproc\n\
         for c in 0 1 2 3; do t=/sys/devices/system/cpu/cpu$c/topology; \
         echo topology cpu$c core $(cat $t/core_id) siblings $(cat $t/thread_siblings_list); done\n\
         echo sysfs files $(ls /sys/devices/system/cpu/cpu3/topology)\n\
         t=/sys/devices/system/cpu/cpu3/topology; echo sysfs cpu3 package $(cat $t/physical_package_id) \
         $(cat $t/package_cpus_list) cluster $(cat $t/cluster_id) $(cat $t/cluster_cpus_list) \
         core_cpus $(cat $t/core_cpus_list) $(cat $t/thread_siblings)\n\
         /opt/rvnvmm/nvmm-marker switch timing\n\
         for c in 0 1 2 3; do taskset -c $c sh -c 'i=0; while [ $i -lt 300 ]; do i=$((i+1)); done' & done; wait\n\
         poweroff\n",
    );
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let lines: Vec<&str> = console.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"guest says 42"), "{console}");
    assert!(lines.contains(&"4"), "{console}");
    let topology: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("topology cpu"))
        .collect();
    assert_eq!(
        topology,
        [
            "topology cpu0 core 0 siblings 0-1",
            "topology cpu1 core 0 siblings 0-1",
            "topology cpu2 core 1 siblings 2-3",
            "topology cpu3 core 1 siblings 2-3",
        ],
        "{console}"
    );
    // The files of a CPU's topology directory and what they say: user
    // mode's emulated tree has the same (`crates/user/src/procfs.rs`).
    assert!(
        lines.contains(
            &"sysfs files cluster_cpus cluster_cpus_list cluster_id core_cpus core_cpus_list \
              core_id core_siblings core_siblings_list package_cpus package_cpus_list \
              physical_package_id thread_siblings thread_siblings_list"
        ),
        "{console}"
    );
    assert!(
        lines.contains(&"sysfs cpu3 package 0 0-3 cluster 0 0-3 core_cpus 2-3 c"),
        "{console}"
    );
    assert!(console.contains("reboot: Power down"), "{console}");
    let text = std::fs::read_to_string(&stats).expect("statistics written");
    std::fs::remove_file(&stats).ok();
    let json: serde_json::Value = serde_json::from_str(&text).expect("statistics JSON");
    let harts = json["harts"].as_array().unwrap();
    assert_eq!(harts.len(), 4);
    for h in harts {
        // The statistics count from the switch to the timing model.
        assert!(h["issue_wait_cycles"].as_u64().unwrap() > 0, "{h}");
        assert!(h["instructions"].as_u64().unwrap() > 0, "{h}");
    }
}

/// The machine of DRAM node 0, a 2 µs DRAM node 1 (256 MiB) and an NVMM
/// node 2 (`crates/board/tests/data/dram-far-nvmm.toml`), functional: its
/// path, its config, and the distance between the DRAM nodes the device
/// tree gives.
fn numa_machine() -> (String, rvnvmm_config::Config, u8) {
    let path = artefacts::repo_root().join("crates/board/tests/data/dram-far-nvmm.toml");
    let path = path.to_str().unwrap().to_string();
    let cfg =
        rvnvmm_config::Config::load(Some(&path), &["machine.model=functional".into()]).unwrap();
    let far = rvnvmm_board::Numa::measure(&cfg)
        .unwrap()
        .nodes
        .distance(0, 1);
    assert!(far > 20, "{far}");
    (path, cfg, far)
}

/// Two DRAM nodes are two NUMA nodes to Debian's kernel: both online, the
/// harts all on node 0 (node 1 is CPU-less), the distances the device tree
/// gives (measured on the timing model) in sysfs, and node 1's memory
/// Linux's. About 10 s.
#[test]
fn two_dram_nodes_are_numa_nodes_to_linux() {
    let (config, cfg, far) = numa_machine();
    let config = config.as_str();
    let (status, console, stderr) = boot_with_input(
        &[
            "--config",
            config,
            "--set",
            "machine.model=functional",
            "--append",
            "console=ttyS0 quiet",
        ],
        "n=/sys/devices/system/node; echo numa online $(cat $n/online)\n\
         for i in 0 1; do echo \"numa node$i cpus [$(cat $n/node$i/cpulist)] \
         distance $(cat $n/node$i/distance) $(grep MemTotal $n/node$i/meminfo)\"; done\n\
         poweroff\n",
    );
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let numa: Vec<&str> = console
        .lines()
        .map(str::trim_end)
        .filter(|l| l.starts_with("numa "))
        .collect();
    let node = |i: usize| -> (String, u64) {
        let line = numa
            .iter()
            .find(|l| l.starts_with(&format!("numa node{i} ")))
            .unwrap_or_else(|| panic!("no node{i} line:\n{console}"));
        let (head, mem) = line
            .split_once(&format!(" Node {i} MemTotal: "))
            .unwrap_or_else(|| panic!("no MemTotal: {line}"));
        let kb = mem
            .trim()
            .strip_suffix(" kB")
            .and_then(|v| v.trim().parse().ok());
        (head.to_string(), kb.unwrap_or_else(|| panic!("{line}")))
    };
    assert_eq!(numa.first(), Some(&"numa online 0-1"), "{console}");
    let (node0, _) = node(0);
    let (node1, kb1) = node(1);
    assert_eq!(
        node0,
        format!("numa node0 cpus [0-3] distance 10 {far}"),
        "{console}"
    );
    assert_eq!(
        node1,
        format!("numa node1 cpus [] distance {far} 10"),
        "{console}"
    );
    // Most of node 1: memblock's early allocations, top-down, take the
    // rest (about 40 MiB of the 256).
    let region_kb = cfg.memory.regions["far"].size / 1024;
    assert!(
        kb1 <= region_kb && kb1 > region_kb * 3 / 4,
        "node 1 has {kb1} kB of {region_kb} kB:\n{console}"
    );
}

/// A small ext4 disk (`rvnvmm-boot-PID-NAME.img`) holding Debian's riscv64
/// numactl with the libraries and loader it needs (`scripts/setup.sh` puts
/// them in the sysroot) and, with `tiering`, Debian's `kmem.ko` (device DAX
/// as system RAM), Debian's ndctl and daxctl with their libraries,
/// `tier_workload` and `gups_tier` (`guest/emu/`), flat at its root.
fn numa_disk(name: &str, tiering: bool) -> PathBuf {
    let sysroot = artefacts::sysroot().expect("scripts/setup.sh first");
    let dir = std::env::temp_dir().join(format!("rvnvmm-boot-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<String> = [
        "usr/bin/numactl",
        "usr/lib/riscv64-linux-gnu/libnuma.so.1",
        "usr/lib/riscv64-linux-gnu/libc.so.6",
        "lib/ld-linux-riscv64-lp64d.so.1",
    ]
    .map(String::from)
    .into();
    if tiering {
        files.extend(["usr/bin/ndctl".into(), "usr/bin/daxctl".into()]);
        // What they load: ndctl's and daxctl's own libraries, libkmod (with
        // libcrypto, libz and libzstd) and libudev (with libcap).
        files.extend(
            [
                "libndctl.so.6",
                "libdaxctl.so.1",
                "libuuid.so.1",
                "libjson-c.so.5",
                "libkeyutils.so.1",
                "libiniparser.so.4",
                "libkmod.so.2",
                "libcrypto.so.3",
                "libz.so.1",
                "libzstd.so.1",
                "libudev.so.1",
                "libcap.so.2",
            ]
            .map(|lib| format!("usr/lib/riscv64-linux-gnu/{lib}")),
        );
    }
    for file in files {
        let from = sysroot.join(file);
        let name = from.file_name().unwrap();
        std::fs::copy(&from, dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup.sh first)", from.display()));
    }
    let run = |cmd: &mut Command, what: &str| {
        let out = cmd.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    if tiering {
        let modules = artefacts::setup_path("RVNVMM_MODULES").expect("scripts/setup.sh first");
        let xz = modules.join("kernel/drivers/dax/kmem.ko.xz");
        let ko = run(Command::new("xz").arg("-dc").arg(&xz), "xz -dc kmem.ko.xz");
        std::fs::write(dir.join("kmem.ko"), ko).unwrap();
        let emu = artefacts::guest_build().join("emu");
        for program in ["tier_workload", "gups_tier"] {
            let path = artefacts::guest_program(&emu, program).unwrap();
            std::fs::copy(&path, dir.join(program)).unwrap();
        }
    }
    let img = dir.with_extension("img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(32 << 20))
        .unwrap();
    run(
        Command::new(host_tool("mkfs.ext4"))
            .args(["-q", "-F", "-d"])
            .args([&dir, &img]),
        "mkfs.ext4 (e2fsprogs: scripts/setup.sh installs it)",
    );
    std::fs::remove_dir_all(&dir).ok();
    img
}

/// Console input mounting [`numa_disk`] on `/mnt` (ext4 and its modules
/// loaded first).
const MOUNT_NUMA_DISK: &str = "for m in $(cat /lib/modules/root-order); do \
     insmod /lib/modules/$m; done; mount -t ext4 -o ro /dev/vda /mnt\n";

/// numactl on [`numa_disk`], run through the disk's own loader.
const NUMACTL: &str = "/mnt/ld-linux-riscv64-lp64d.so.1 --library-path /mnt /mnt/numactl";

/// Debian's riscv64 `numactl -H` on the two-DRAM-node machine lists both
/// nodes, node 1 without CPUs, and the device tree's distances; it runs
/// from [`numa_disk`] in the initramfs's shell. About 15 s.
#[test]
fn numactl_lists_the_nodes_and_their_distances() {
    let (config, _, far) = numa_machine();
    let img = numa_disk("numactl", false);
    let (status, console, stderr) = boot_with_input(
        &[
            "--config",
            &config,
            "--set",
            "machine.model=functional",
            "--disk",
            img.to_str().unwrap(),
            "--append",
            "console=ttyS0 quiet",
        ],
        &format!("{MOUNT_NUMA_DISK}{NUMACTL} -H\npoweroff\n"),
    );
    std::fs::remove_file(&img).ok();
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let lines: Vec<&str> = console.lines().map(str::trim_end).collect();
    let expect = [
        "available: 2 nodes (0-1)".to_string(),
        "node 0 cpus: 0 1 2 3".into(),
        "node 1 cpus:".into(),
        "node distances:".into(),
        "node     0    1".into(),
        format!("   0:   10 {far:>4}"),
        format!("   1: {far:>4}   10"),
    ];
    for line in &expect {
        assert!(lines.contains(&line.as_str()), "no '{line}':\n{console}");
    }
}

/// ndctl and daxctl on [`numa_disk`] (with `tiering`), run through the
/// disk's own loader.
const NDCTL: &str = "/mnt/ld-linux-riscv64-lp64d.so.1 --library-path /mnt /mnt/ndctl";
const DAXCTL: &str = "/mnt/ld-linux-riscv64-lp64d.so.1 --library-path /mnt /mnt/daxctl";

/// The `/proc/vmstat` counters of demotion and promotion on the console
/// lines starting with `prefix`, by name.
/// The node lists of the memory tiers the console printed ("tier ID nodes
/// LIST" lines), fastest first (the lower id the faster).
fn tier_nodes<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut tiers: Vec<(u32, &str)> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("tier "))
        .filter_map(|l| l.split_once(" nodes "))
        .filter_map(|(id, nodes)| Some((id.parse().ok()?, nodes)))
        .collect();
    tiers.sort();
    tiers.iter().map(|t| t.1).collect()
}

fn tiering_counters(lines: &[&str], prefix: &str) -> std::collections::BTreeMap<String, u64> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

/// The NVMM as a `pmem-region` on a node of its own (`--nvmm pmem` and
/// `memory.nvmm.node`: the DRAM is node 0, the NVMM node 1, CPU-less and
/// memory-less at boot) becomes a lower memory tier with Debian's kernel,
/// ndctl and daxctl unmodified: `ndctl create-namespace -m devdax` makes the
/// raw namespace device DAX, `daxctl reconfigure-device --mode=system-ram`
/// hot-plugs it (Debian's `kmem.ko` loaded first). Node 1 then has memory, a
/// memory tier below node 0's, and is node 0's demotion target. With
/// demotion on and `kernel.numa_balancing=2`, `tier_workload` on a machine
/// whose DRAM is 256 MiB touches an 8 MiB hot set, then 256 MiB more:
/// reclaim demotes the hot set to node 1 (`pgdemote_*`); touched again in
/// a loop for 5 s, NUMA balancing's hint faults promote it back
/// (`pgpromote_success`). About 40 s.
#[test]
fn nvmm_hot_plugged_by_daxctl_is_a_lower_tier_that_demotes_and_promotes() {
    let img = numa_disk("tiering", true);
    let (status, console, stderr) = boot_with_input(
        &[
            "--set",
            "machine.model=functional",
            "--set",
            "memory.dram.size=0x10000000",
            "--set",
            "memory.nvmm.size=0x20000000",
            "--set",
            "memory.nvmm.node=1",
            "--nvmm",
            "pmem",
            "--disk",
            img.to_str().unwrap(),
            "--append",
            "console=ttyS0 quiet",
        ],
        &format!(
            "{MOUNT_NUMA_DISK}\
             for i in $(seq 100); do [ -e /sys/bus/nd/devices/namespace0.0 ] && break; \
             sleep 0.1; done\n\
             {NDCTL} create-namespace -f -e namespace0.0 -m devdax && insmod /mnt/kmem.ko && \
             {DAXCTL} reconfigure-device --mode=system-ram dax0.0\n\
             for t in /sys/devices/virtual/memory_tiering/memory_tier*; do \
             echo \"tier ${{t##*memory_tier}} nodes $(cat $t/nodelist)\"; done\n\
             {NUMACTL} -H\n\
             dmesg | grep 'Demotion targets for Node 0'\n\
             echo 1 > /sys/kernel/mm/numa/demotion_enabled\n\
             echo 2 > /proc/sys/kernel/numa_balancing\n\
             mount -t debugfs none /sys/kernel/debug\n\
             d=/sys/kernel/debug/sched/numa_balancing; echo 10 > $d/scan_delay_ms; \
             echo 10 > $d/scan_period_min_ms; echo 100 > $d/scan_period_max_ms\n\
             grep -E '^pg(demote|promote)' /proc/vmstat | sed 's/^/before /'\n\
             /mnt/tier_workload 8 256 5\n\
             grep -E '^pg(demote|promote)' /proc/vmstat | sed 's/^/after /'\n\
             poweroff\n"
        ),
    );
    std::fs::remove_file(&img).ok();
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let lines: Vec<&str> = console.lines().map(str::trim_end).collect();
    // ndctl's and daxctl's own reports.
    assert!(lines.contains(&"  \"mode\":\"devdax\","), "{console}");
    assert!(lines.contains(&"    \"mode\":\"system-ram\","), "{console}");
    assert!(lines.contains(&"reconfigured 1 device"), "{console}");
    let nodes = tier_nodes(&lines);
    assert_eq!(nodes, ["0", "1"], "{console}");
    assert!(lines.contains(&"available: 2 nodes (0-1)"), "{console}");
    assert!(lines.contains(&"node 1 cpus:"), "{console}");
    let node1_mb: u64 = lines
        .iter()
        .find_map(|l| l.strip_prefix("node 1 size: "))
        .and_then(|v| v.strip_suffix(" MB"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no node 1 size:\n{console}"));
    assert!(
        (128..=512).contains(&node1_mb),
        "node 1 has {node1_mb} MB:\n{console}"
    );
    assert!(
        console.contains("Demotion targets for Node 0: preferred: 1"),
        "{console}"
    );
    // Where the hot set's pages are, after each step.
    let hot = |step: &str| -> (u64, u64) {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("hot {step} node0 ")))
            .and_then(|l| l.split_once(" node1 "))
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .unwrap_or_else(|| panic!("no 'hot {step}' line:\n{console}"))
    };
    let (_, demoted) = hot("demoted");
    let (promoted, _) = hot("promoted");
    assert!(demoted > 0, "no hot page demoted:\n{console}");
    assert!(promoted > 0, "no hot page promoted:\n{console}");
    // And the guest's own counters.
    let before = tiering_counters(&lines, "before ");
    let after = tiering_counters(&lines, "after ");
    let grew = |names: &[&str]| -> u64 {
        names
            .iter()
            .map(|n| {
                let (b, a) = (before.get(*n), after.get(*n));
                let (b, a) = b.zip(a).unwrap_or_else(|| panic!("no {n}:\n{console}"));
                a - b
            })
            .sum()
    };
    assert!(
        grew(&["pgdemote_kswapd", "pgdemote_direct"]) > 0,
        "no demotion:\n{console}"
    );
    assert!(grew(&["pgpromote_success"]) > 0, "no promotion:\n{console}");
}

/// Console input that waits for `namespace0.0` and hot-plugs it as system
/// RAM with Debian's ndctl, kmem.ko and daxctl from [`numa_disk`].
fn hotplug_namespace0() -> String {
    format!(
        "for i in $(seq 100); do [ -e /sys/bus/nd/devices/namespace0.0 ] && break; \
         sleep 0.1; done\n\
         {NDCTL} create-namespace -f -e namespace0.0 -m devdax >/dev/null && \
         insmod /mnt/kmem.ko && {DAXCTL} reconfigure-device --mode=system-ram dax0.0\n"
    )
}

/// CXL memory soft reserved (`configs/dram-cxl.toml` with
/// `memory.cxl.soft_reserved`, node 0 of 256 MiB) is a `pmem-region` that
/// ndctl, kmem and daxctl hot-plug into a lower tier, and DAMON (Linux
/// 6.12's sysfs, Debian's kernel unmodified) moves pages between the tiers:
/// a kdamond on node 0's physical memory with the scheme `migrate_cold`
/// (target node 1) demotes the idle part of node 0, one on node 1's with
/// `migrate_hot` (target node 0) promotes the hot set `gups_tier` updates
/// there (demotion on reclaim on as well: without it, pages promoted up to
/// node 0's watermark left the kernel no page there, an OOM kill). Both
/// schemes apply (`stats/sz_applied`), `/proc/vmstat`'s `pgmigrate_success`
/// grows, and the hot set of the last phase, which first touch put on
/// node 1, is partly on node 0 at its end (move_pages). About 50 s.
#[test]
fn damon_migrates_hot_pages_up_and_cold_pages_down_between_cxl_tiers() {
    let img = numa_disk("damon", true);
    let config = artefacts::repo_root().join("configs/dram-cxl.toml");
    // Every access-pattern range is given: sysfs starts each min and max at 0.
    let damon = "d=/sys/kernel/mm/damon/admin/kdamonds; max=18446744073709551615\n\
         node_range() { b=$((0x$(cat /sys/devices/system/memory/block_size_bytes))); lo=; hi=\n\
         for m in /sys/devices/system/node/node$1/memory*; do i=${m##*memory}\n\
         if [ -z \"$lo\" ] || [ $i -lt $lo ]; then lo=$i; fi; \
         if [ -z \"$hi\" ] || [ $i -gt $hi ]; then hi=$i; fi; done\n\
         echo $((lo * b)) $(((hi + 1) * b)); }\n\
         damon_setup() { k=$d/$1; r=$(node_range $4); c=$k/contexts/0\n\
         echo 1 > $k/contexts/nr_contexts; echo paddr > $c/operations\n\
         i=$c/monitoring_attrs/intervals; echo 1000 > $i/sample_us; echo 20000 > $i/aggr_us\n\
         echo 1 > $c/targets/nr_targets; echo 1 > $c/targets/0/regions/nr_regions\n\
         echo ${r% *} > $c/targets/0/regions/0/start; echo ${r#* } > $c/targets/0/regions/0/end\n\
         echo 1 > $c/schemes/nr_schemes; s=$c/schemes/0; echo $2 > $s/action; echo $3 > $s/target_nid\n\
         a=$s/access_pattern; echo 4096 > $a/sz/min; echo $max > $a/sz/max\n\
         echo $5 > $a/nr_accesses/min; echo $6 > $a/nr_accesses/max\n\
         echo $7 > $a/age/min; echo $max > $a/age/max; echo on > $k/state; }\n\
         echo 2 > $d/nr_kdamonds\n\
         damon_setup 0 migrate_hot 0 1 2 20 0\n\
         damon_setup 1 migrate_cold 1 0 0 0 5\n";
    let stats = "for k in 0 1; do echo update_schemes_stats > $d/$k/state; \
         s=$d/$k/contexts/0/schemes/0; \
         echo \"damon $(cat $s/action) sz_applied $(cat $s/stats/sz_applied)\"; done\n";
    let (status, console, stderr) = boot_with_input(
        &[
            "--config",
            config.to_str().unwrap(),
            "--set",
            "machine.model=functional",
            "--set",
            "memory.dram.size=0x10000000",
            "--set",
            "memory.cxl.size=0x40000000",
            "--set",
            "memory.cxl.soft_reserved=true",
            "--disk",
            img.to_str().unwrap(),
            "--append",
            "console=ttyS0 quiet",
        ],
        &format!(
            "{MOUNT_NUMA_DISK}{hotplug}\
             for t in /sys/devices/virtual/memory_tiering/memory_tier*; do \
             echo \"tier ${{t##*memory_tier}} nodes $(cat $t/nodelist)\"; done\n\
             echo 16384 > /proc/sys/vm/min_free_kbytes\n\
             echo 1 > /sys/kernel/mm/numa/demotion_enabled\n\
             {damon}\
             grep -E '^pgmigrate_success' /proc/vmstat | sed 's/^/before /'\n\
             /mnt/gups_tier 192 16 2 15000000\n\
             grep -E '^pgmigrate_success' /proc/vmstat | sed 's/^/after /'\n\
             {stats}poweroff\n",
            hotplug = hotplug_namespace0(),
        ),
    );
    std::fs::remove_file(&img).ok();
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let lines: Vec<&str> = console.lines().map(str::trim_end).collect();
    assert!(lines.contains(&"reconfigured 1 device"), "{console}");
    let nodes = tier_nodes(&lines);
    assert_eq!(
        nodes,
        ["0", "1"],
        "two tiers, the CXL node below:\n{console}"
    );
    let applied = |action: &str| -> u64 {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("damon {action} sz_applied ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {action} statistics:\n{console}"))
    };
    assert!(applied("migrate_cold") > 0, "nothing demoted:\n{console}");
    assert!(applied("migrate_hot") > 0, "nothing promoted:\n{console}");
    let migrated = tiering_counters(&lines, "after ")["pgmigrate_success"]
        - tiering_counters(&lines, "before ")["pgmigrate_success"];
    assert!(migrated > 0, "no page migrated:\n{console}");
    // The last phase's hot set (slot 7 of 12: beyond what node 0 held at
    // first touch) has pages on node 0 at its end.
    let hot_node0: u64 = lines
        .iter()
        .find_map(|l| l.strip_prefix("phase 1 "))
        .and_then(|l| l.split_once(" hot_node0 "))
        .and_then(|(_, v)| v.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no phase 1 line:\n{console}"));
    assert!(hot_node0 > 0, "the hot set was not promoted:\n{console}");
}

/// The timed machine (the default `freedom-u500` model: 50 MHz in-order
/// cores, caches, DDR3) boots too; about 40 s on the 2-core host, so only
/// with `--ignored`.
#[test]
#[ignore]
fn debian_linux_boots_on_the_timing_model() {
    let initrd = initramfs();
    let out = boot(&[
        "--initrd",
        &initrd,
        "--append",
        "console=ttyS0 rvnvmm.rc=1 quiet",
        "--max-insns",
        "30000000000",
    ]);
    let console = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{console}\n{stderr}");
    assert_eq!(rc_lines(&console), RC_LINES, "{console}\n{stderr}");
}

/// Building the initramfs twice from the same inputs gives the same bytes: a
/// boot depends on the whole archive (a rebuild with other timestamps had
/// moved a timed boot's instruction count by 0.6%).
#[test]
fn the_initramfs_is_reproducible() {
    let script = artefacts::repo_root().join("scripts/build-initramfs.sh");
    let images: Vec<Vec<u8>> = (0..2)
        .map(|k| {
            let out = std::env::temp_dir().join(format!(
                "rvnvmm-boot-{}-initramfs-{k}.cpio.gz",
                std::process::id()
            ));
            let run = Command::new("bash")
                .arg(&script)
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "{}",
                String::from_utf8_lossy(&run.stderr)
            );
            let bytes = std::fs::read(&out).unwrap();
            std::fs::remove_file(&out).ok();
            // Timestamps have a resolution of a second.
            std::thread::sleep(std::time::Duration::from_millis(1100));
            bytes
        })
        .collect();
    assert!(images[0] == images[1], "two builds differ");
}

/// Two timed boots of two harts to power-off give the same statistics, bit
/// for bit, less the host's own timing (`host_seconds`, `mips`): guest RAM
/// sits at a different host address in each process (ASLR) and the console
/// reader is a host thread, and neither may reach the simulation. About 50 s
/// on the 2-core host, so only with `--ignored`.
#[test]
#[ignore]
fn two_hart_timed_boots_give_identical_statistics() {
    let initrd = initramfs();
    let runs: Vec<_> = (0..2)
        .map(|k| {
            let what = format!("timed boot {k}");
            boot_to_power_off(&what, &initrd, "2", &["--set", "machine.model=timing"]).1
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
}

/// A 4-hart boot to power-off gives the same console and statistics
/// (less the host's own timing) under both execution engines, in the
/// functional and the timing model: the translating engine retires,
/// charges and takes interrupts and traps exactly where the interpreter
/// does. About two minutes on the 2-core host.
#[test]
fn four_hart_boots_give_identical_statistics_under_both_engines() {
    let initrd = initramfs();
    for model in ["functional", "timing"] {
        let set = format!("machine.model={model}");
        let runs: Vec<_> = ["interp", "jit"]
            .into_iter()
            .map(|engine| {
                let what = format!("{model}, {engine}");
                let args = ["--set", &set, "--engine", engine];
                boot_to_power_off(&what, &initrd, "4", &args)
            })
            .collect();
        assert_eq!(runs[0].0, runs[1].0, "{model}: the consoles differ");
        assert!(runs[0].1 == runs[1].1, "{model}: the statistics differ");
    }
}

/// One table of `nvmm_microbench tables`: (op, stride or nbank) -> average
/// latency in ns.
fn microbench_table(out: &str) -> std::collections::BTreeMap<(String, u64), f64> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 4 || !["coarse", "fine", "proposed"].contains(&f[0]) {
                return None;
            }
            Some(((f[1].to_string(), f[2].parse().ok()?), f[3].parse().ok()?))
        })
        .collect()
}

/// libnvmm's tests pass inside Linux on the timed four-hart machine, and
/// seed 000's locality and bank microbenchmarks (Tables 3-6, through
/// libnvmm and `/dev/mem`) there agree with the same program in user mode: each ratio the paper reads
/// off the tables within 15%. The loop runs on a `nohz_full` CPU, as one
/// measures on a real machine, so timer ticks do not stretch it.
#[test]
fn the_seed_000_microbenchmarks_inside_linux_agree_with_user_mode() {
    let args = ["tables", "16777216", "536870912", "8192"];
    // First libnvmm's own test programs (flushes, control page, phases),
    // as they run in user mode, on one CPU: a whole-L1D flush
    // (`CFLUSH.D.L1 x0`) writes back this hart's L1D only, so a program
    // that migrates between two flushes leaves lines in another hart's.
    // Their output stays in the console, so a failing check shows.
    let script = format!(
        "nproc\nfor t in flush control phases; do taskset -c 2 /opt/rvnvmm/$t 2>&1; \
         echo \"libnvmm $t exit $?\"; done\n\
         taskset -c 2 /opt/rvnvmm/nvmm_microbench {}\npoweroff\n",
        args.join(" ")
    );
    let stats = std::env::temp_dir().join(format!(
        "rvnvmm-boot-{}-microbench-stats.json",
        std::process::id()
    ));
    let (status, console, stderr) = boot_with_input(
        &[
            "--append",
            "console=ttyS0 quiet cryptomgr.notests nohz_full=1-3",
            "--stats",
            stats.to_str().unwrap(),
        ],
        &script,
    );
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    assert!(
        console.lines().any(|l| l.trim_end() == "4"),
        "4 harts online:\n{console}"
    );
    // SMP Linux asks the firmware for IPIs and remote fences; the IPIs the
    // firmware's stores raise are the ones the harts receive.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("statistics written"))
            .expect("statistics JSON");
    std::fs::remove_file(&stats).ok();
    let sum = |f: &dyn Fn(&serde_json::Value) -> u64| -> u64 {
        json["harts"].as_array().unwrap().iter().map(f).sum()
    };
    let sbi_ipi = sum(&|h| h["sbi_calls"]["ipi"].as_u64().unwrap());
    let sbi_rfence = sum(&|h| h["sbi_calls"]["rfence"].as_u64().unwrap());
    let sent = sum(&|h| h["ipis_sent"].as_u64().unwrap());
    let received = sum(&|h| h["ipis_received"].as_u64().unwrap());
    assert!(
        sbi_ipi > 0 && sbi_rfence > 0 && sent > 0 && sent == received,
        "SBI IPI calls {sbi_ipi}, RFENCE calls {sbi_rfence}, IPIs sent {sent}, received {received}"
    );
    for t in ["flush", "control", "phases"] {
        assert!(
            console.contains(&format!("libnvmm {t} exit 0")),
            "libnvmm's {t} test inside Linux:\n{console}"
        );
    }
    let linux = microbench_table(&console);

    let user = Command::new(env!("CARGO_BIN_EXE_rvnvmm"))
        .arg("run")
        .arg(artefacts::repo_root().join("guest/build/emu/nvmm_microbench"))
        .args(args)
        .output()
        .expect("run the microbenchmark in user mode");
    let user_out = String::from_utf8_lossy(&user.stdout);
    assert!(user.status.success(), "{user_out}");
    let user = microbench_table(&user_out);
    assert_eq!(linux.len(), 16, "{console}");
    assert_eq!(user.len(), 16, "{user_out}");

    let ratio = |t: &std::collections::BTreeMap<(String, u64), f64>, op: &str, a: u64, b: u64| {
        t[&(op.to_string(), a)] / t[&(op.to_string(), b)]
    };
    // Table 3/4: stride 4096 over 8192; Tables 5/6: NBANK 4 (reads) and 6
    // (writes) over NBANK 1.
    for (op, a, b) in [
        ("read", 4096, 8192),
        ("write", 4096, 8192),
        ("read", 4, 1),
        ("write", 6, 1),
    ] {
        let (l, u) = (ratio(&linux, op, a, b), ratio(&user, op, a, b));
        assert!(
            (l / u - 1.0).abs() <= 0.15,
            "{op} {a}/{b}: Linux {l:.3}, user mode {u:.3}\n{console}\n{user_out}"
        );
    }
}

/// A 256 MiB NVMM region holding a fresh ext4 file system (4 KiB blocks, as
/// DAX needs), made by the host's `mkfs.ext4` (e2fsprogs, `scripts/setup.sh`);
/// the image's path.
fn ext4_nvmm_image(name: &str) -> PathBuf {
    let img = std::env::temp_dir().join(format!("rvnvmm-boot-{}-{name}.img", std::process::id()));
    let _ = std::fs::remove_file(&img);
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(PMEM_BYTES))
        .unwrap();
    let out = Command::new(host_tool("mkfs.ext4"))
        .args(["-q", "-F", "-b", "4096"])
        .arg(&img)
        .output()
        .expect("run mkfs.ext4 (e2fsprogs: scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    img
}

const PMEM_BYTES: u64 = 256 << 20;

/// `rvnvmm boot` of the NVMM `image` as `/dev/pmem0`, with `extra`
/// arguments and the console input `script` (the ext4 modules loaded and
/// the file system mounted `-o dax` on /mnt first).
fn boot_pmem(
    image: &std::path::Path,
    extra: &[&str],
    script: &str,
) -> (Option<i32>, String, String) {
    let set_image = format!("memory.nvmm.image={}", image.display());
    let mut args = vec![
        "--set",
        "machine.model=functional",
        "--set",
        "memory.nvmm.size=0x10000000",
        "--set",
        &set_image,
        "--nvmm",
        "pmem",
        "--append",
        "console=ttyS0 quiet",
    ];
    args.extend_from_slice(extra);
    let mount = "for m in $(cat /lib/modules/root-order); do insmod /lib/modules/$m; done; \
                 mount -t ext4 -o dax /dev/pmem0 /mnt && grep -q dax=always /proc/mounts && \
                 echo mounted-dax\n";
    boot_with_input(&args, &format!("{mount}{script}"))
}

/// The power fails while Linux rewrites files on an ext4 file system mounted
/// `-o dax` on `/dev/pmem0`, under eADR (every store is in the persistence
/// domain). Rebooted on the same image, Linux replays the journal and every
/// file holds one whole generation of its writes (or, truncated by the
/// write that was cut short, nothing), and the host's `e2fsck` finds the
/// file system clean.
#[test]
fn ext4_dax_crashed_during_writes_recovers_on_the_same_image_under_eadr() {
    let img = ext4_nvmm_image("eadr");
    // File f(i mod 8) gets generation i: "gen i:" 2048 times, by shell
    // built-ins only (no fork per file).
    let writer =
        "i=0; while true; do L=\"gen $i:\"; for k in 1 2 3 4 5 6 7 8 9 10 11; do L=$L$L; done; \
                  printf '%s' \"$L\" > /mnt/f$((i % 8)); echo \"wrote $i\"; i=$((i + 1)); done\n";
    // Linux mounts the file system about 57 s into the boot (simulated):
    // the crash comes some 18 s into the writes.
    let (status, console, stderr) = boot_pmem(
        &img,
        &[
            "--set",
            "memory.nvmm.persistence=eadr",
            "--crash-at",
            "time=75000000000",
        ],
        writer,
    );
    assert_eq!(status, Some(125), "{console}\n{stderr}");
    assert!(stderr.contains("power failure injected after"), "{stderr}");
    assert!(console.contains("mounted-dax"), "{console}");
    let wrote = console.lines().filter(|l| l.starts_with("wrote ")).count();
    assert!(
        wrote >= 16,
        "the crash should come well into the writes (move --crash-at later): {wrote} written\n{console}"
    );
    let check = "for f in /mnt/f*; do K=$(head -c 12 $f | cut -d: -f1); L=\"$K:\"; \
                 for k in 1 2 3 4 5 6 7 8 9 10 11; do L=$L$L; done; printf '%s' \"$L\" > /tmp/e; \
                 if [ ! -s $f ]; then echo \"check $f empty\"; \
                 elif cmp -s $f /tmp/e && [ $(( ${K#gen } % 8 )) = ${f#/mnt/f} ]; then echo \"check $f ok $K\"; \
                 else echo \"check $f BAD\"; fi; done\n\
                 umount /mnt && echo unmounted\npoweroff\n";
    let (status, console, stderr) = boot_pmem(&img, &[], check);
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    let checks: Vec<&str> = console
        .lines()
        .filter(|l| l.starts_with("check "))
        .collect();
    assert!(
        checks.len() == 8 && checks.iter().all(|l| !l.ends_with("BAD")),
        "after the reboot every file holds one whole generation: {checks:?}\n{console}"
    );
    let recovered = checks.iter().filter(|l| l.contains(" ok gen ")).count();
    assert!(recovered >= 6, "{checks:?}");
    assert!(console.contains("\nunmounted"), "{console}");
    let fsck = Command::new(host_tool("e2fsck"))
        .args(["-f", "-n"])
        .arg(&img)
        .output()
        .expect("run e2fsck");
    assert!(
        fsck.status.success(),
        "e2fsck after the recovery: {}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
    let _ = std::fs::remove_file(&img);
}

/// Linux 6.12 on riscv64 writes back no CPU cache line for pmem: block I/O
/// and DAX `write(2)` copy with plain stores (`memcpy_flushcache` and
/// `_copy_from_iter_flushcache` are plain copies there), so under ADR, in
/// the functional model (which evicts nothing), even a file `sync`ed long
/// before the power fails is lost: the image comes back as it was before
/// the boot (docs/persistence.md).
#[test]
fn under_adr_linux_pmem_writes_are_lost_even_after_sync() {
    let img = ext4_nvmm_image("adr");
    let before = std::fs::read(&img).unwrap();
    let script = "echo durable? > /mnt/synced; sync; echo synced; sleep 100\n";
    let (status, console, stderr) = boot_pmem(
        &img,
        &[
            "--set",
            "memory.nvmm.persistence=adr",
            "--crash-at",
            "time=75000000000",
            "--stats",
            &format!("{}.json", img.display()),
        ],
        script,
    );
    assert_eq!(status, Some(125), "{console}\n{stderr}");
    assert!(
        console.contains("\nsynced"),
        "the crash must come after the sync\n{console}"
    );
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", img.display())).unwrap())
            .unwrap();
    let crash = &stats["crash"];
    assert_eq!(stats["exit"]["crash"], true, "{stats}");
    assert_eq!(crash["flushes"], 0, "Linux flushed pmem lines: {crash}");
    assert!(
        crash["lost_lines"].as_array().unwrap().len() > 10,
        "the mount and the file were written: {crash}"
    );
    assert!(
        std::fs::read(&img).unwrap() == before,
        "nothing reached the ADR domain, so the image is as before the boot"
    );
    let _ = std::fs::remove_file(&img);
    let _ = std::fs::remove_file(format!("{}.json", img.display()));
}

/// NVMM as a `pmem-region`: Linux's block device `/dev/pmem0` has no DAX
/// mapping, so libnvmm refuses it (rather than measure DRAM page cache);
/// the initramfs's `pmem-devdax` turns the namespace into device DAX, and
/// the microbenchmark maps `/dev/dax0.0` through libnvmm.
#[test]
fn nvmm_as_pmem_is_mapped_through_device_dax() {
    let (status, console, stderr) = boot_with_input(
        &[
            "--set",
            "machine.model=functional",
            "--nvmm",
            "pmem",
            "--append",
            "console=ttyS0 quiet",
        ],
        "NVMM_DEVICE=/dev/pmem0 /opt/rvnvmm/nvmm_microbench locality 4096 2097152 read\n\
         /opt/rvnvmm/pmem-devdax\n\
         NVMM_DEVICE=/dev/dax0.0 /opt/rvnvmm/nvmm_microbench locality 4096 2097152 read\n\
         poweroff\n",
    );
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    assert!(
        console.contains("/dev/pmem0 has no DAX mapping"),
        "{console}"
    );
    assert!(
        console.lines().any(|l| l.trim_end() == "/dev/dax0.0"),
        "{console}"
    );
    assert_eq!(
        console.matches("avg_latency_ns ").count(),
        1,
        "only the device-DAX run measures:\n{console}"
    );
}

/// Seed 004 in the full system: with `transparent_hugepage=always` Linux
/// backs the stride program's 12 MiB array with 2 MiB pages
/// (`AnonHugePages` non-zero while it runs), and with Svnapot in the ISA
/// string it offers 64 KiB huge pages: a file on hugetlbfs mounted with
/// `pagesize=64K` maps with a 64 KiB `KernelPageSize`.
#[test]
fn linux_uses_transparent_huge_pages_and_64k_hugetlb_pages() {
    // AnonHugePages is sampled while the program runs (it drops back to 0
    // when it exits).
    let script = "cat /sys/kernel/mm/transparent_hugepage/enabled\n\
         /opt/rvnvmm/tlb_stride 100000 -s 128 & pid=$!; for i in $(seq 200); do \
         a=$(sed -n 's/^AnonHugePages: *//p' /proc/meminfo); [ \"$a\" != \"0 kB\" ] && break; \
         kill -0 $pid 2>/dev/null || break; sleep 0.05; done; echo \"thp: AnonHugePages $a\"; \
         kill $pid; wait\n\
         echo 8 > /sys/kernel/mm/hugepages/hugepages-64kB/nr_hugepages\n\
         mkdir -p /mnt/huge && mount -t hugetlbfs -o pagesize=64K none /mnt/huge && \
         /opt/rvnvmm/hugetlb_map /mnt/huge 4\n\
         grep -E '^(HugePages_Total|Hugetlb):' /proc/meminfo\n\
         poweroff\n";
    let (status, console, stderr) = boot_with_input(
        &[
            "--set",
            "machine.model=functional",
            "--append",
            "console=ttyS0 quiet transparent_hugepage=always",
        ],
        script,
    );
    assert_eq!(status, Some(0), "{console}\n{stderr}");
    assert!(console.contains("[always] madvise never"), "{console}");
    let anon_kb: u64 = console
        .lines()
        .find_map(|l| l.trim_end().strip_prefix("thp: AnonHugePages "))
        .and_then(|v| v.strip_suffix(" kB"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no AnonHugePages line:\n{console}"));
    assert!(
        anon_kb >= 2048 && anon_kb.is_multiple_of(2048),
        "{anon_kb} kB of anonymous huge pages:\n{console}"
    );
    let field = |name: &str| -> Vec<String> {
        console
            .lines()
            .filter_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(field("KernelPageSize:"), ["64 kB"], "{console}");
    assert!(console.contains("hugetlb_map: ok"), "{console}");
    // Eight 64 KiB pages reserved (the 2 MiB default size counts none).
    assert_eq!(field("Hugetlb:"), ["512 kB"], "{console}");
}

/// The SDK's `nvmm-marker` tool in the initramfs drives a booted machine
/// from its shell (user mode under Linux): Linux boots fast-forwarded in the
/// functional model, `switch timing` starts the timing model and the
/// statistics there, a named snapshot, back to functional, and an `exit`
/// marker ends the simulation with its status; the page heat, recorded
/// while the model is timed, adds up to the statistics. About 20 s.
#[test]
fn markers_from_the_linux_shell_switch_dump_and_exit() {
    let stats = std::env::temp_dir().join(format!("rvnvmm-boot-{}-roi.json", std::process::id()));
    let stats_arg = stats.to_str().unwrap();
    let heat = stats.with_extension("heat");
    let (status, console, stderr) = boot_with_input(
        &[
            "--append",
            "console=ttyS0 quiet",
            "--fast-forward",
            "marker",
            "--stats",
            stats_arg,
            "--page-heat",
            heat.to_str().unwrap(),
        ],
        "/opt/rvnvmm/nvmm-marker switch timing\n\
         echo region $((6*7))\n\
         /opt/rvnvmm/nvmm-marker dump shell-region\n\
         /opt/rvnvmm/nvmm-marker switch functional\n\
         /opt/rvnvmm/nvmm-marker exit 3\n\
         echo not reached\n",
    );
    assert_eq!(status, Some(3), "{console}\n{stderr}");
    assert!(console.contains("region 42"), "{console}");
    // (The typed lines are echoed; the command's output is not there.)
    assert!(
        !console.lines().any(|l| l.trim_end() == "not reached"),
        "{console}"
    );
    let text = std::fs::read_to_string(&stats).expect("statistics written");
    std::fs::remove_file(&stats).ok();
    let json: serde_json::Value = serde_json::from_str(&text).expect("statistics JSON");
    assert_eq!(json["exit"]["code"], 3);
    let switches: Vec<&str> = json["model_switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["to"].as_str().unwrap())
        .collect();
    assert_eq!(switches, ["timing", "functional"]);
    // The fast-forward's switch reset the statistics.
    let reset = json["stats_reset"]["instructions"].as_u64().expect("reset");
    assert_eq!(
        json["model_switches"][0]["instructions"].as_u64(),
        Some(reset)
    );
    let snapshot = &json["snapshots"][0];
    assert_eq!(snapshot["name"], "shell-region");
    let at = snapshot["instructions"].as_u64().unwrap();
    assert_eq!(
        snapshot["stats"]["instructions"].as_u64().unwrap(),
        at - reset
    );
    // Timed in the region: the caches saw it.
    assert!(
        snapshot["stats"]["caches"]["hart0.l1i"]["misses"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The run's counters count from the reset as well.
    let total = json["instructions"].as_u64().unwrap();
    assert!(total > at - reset, "{total}");
    let harts: u64 = json["harts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(harts, total);
    // The page heat counts what the statistics count, from the switch to
    // timing: every line read at a controller, on a page of its region.
    let bytes = std::fs::read(&heat).expect("page heat written");
    std::fs::remove_file(&heat).ok();
    let heat = rvnvmm_heat::HeatFile::read(&bytes).unwrap();
    assert!(heat.windows.is_some(), "the page heat's end block");
    let mut reads = std::collections::BTreeMap::<&str, u64>::new();
    for (_, page, c) in &heat.physical {
        let r = heat
            .regions
            .iter()
            .find(|r| (page << 12).wrapping_sub(r.base) < r.size)
            .expect("a page in a region");
        *reads.entry(r.name.as_str()).or_default() += u64::from(c.reads);
    }
    for (name, region) in json["regions"].as_object().unwrap() {
        let counted = reads.get(name.as_str()).copied().unwrap_or(0);
        assert_eq!(region["bus_reads"].as_u64(), Some(counted), "{name}");
    }
    assert!(reads.get("dram").copied().unwrap_or(0) > 1000, "{reads:?}");
    // One thread per core: no sibling takes an issue slot.
    for h in json["harts"].as_array().unwrap() {
        assert_eq!(h["issue_wait_cycles"], 0, "{h}");
        assert_eq!(h["unit_wait_cycles"], 0, "{h}");
    }
}
