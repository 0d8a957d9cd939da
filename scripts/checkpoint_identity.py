#!/usr/bin/env python3
"""Check that restoring a user-mode checkpoint and running on gives the
statistics and output of the run through it (docs/checkpoints.md, "User
mode"), on the whole workload suite and guest/emu/checkpoint_state.

    scripts/checkpoint_identity.py [--rvnvmm BIN] [--size test|ref] [--config NAME]
                                   [--only NAME,...] [--json OUT.json]

For every workload (guest/workloads, docs/workloads.md) at SIZE (default
`test`), with its heap in NVMM (user.heap=nvmm) on CONFIG (default
freedom-u500):

1. a functional run gives the instruction count; the point N is half of it;
2. functional: the run through the point (`--checkpoint-at insns=N`), the
   run writing the checkpoint there (`--checkpoint-to DIR
   --exit-after-checkpoint`) and the restore (`--restore DIR`) must have
   identical `--stats` JSON (less `host_seconds` and `mips`), and the
   writer's output followed by the restore's must be the run through's;
3. timing: the same functional checkpoint restored under the timing model
   and `--fast-forward insns=N --checkpoint-at insns=N` must too.

checkpoint_state (threads on a condition variable, files open for reading
and writing, a file mapping, a pipe holding bytes, a pending signal) is
checked the same way at its `checkpoint` marker, on two harts.

It prints one line per program (its point, the checkpoint's size and the
host time the write took) and exits with status 1 if any run differs.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "guest" / "workloads"))
import workloads  # noqa: E402

HOST_FIELDS = ("host_seconds", "mips")
WRITTEN = re.compile(r"checkpoint written to .* at (\d+) instructions, (\d+) ns .*: ([\d.]+) MiB in ([\d.]+) s")


def strip_host(stats):
    return {k: v for k, v in stats.items() if k not in HOST_FIELDS}


def differing(a, b):
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


class Runner:
    """Runs rvnvmm in a fixed working directory with a fixed environment,
    so every run of a program starts alike."""

    def __init__(self, rvnvmm, workdir, status=0):
        self.rvnvmm = rvnvmm
        self.cwd = workdir / "cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.stats = workdir / "stats.json"
        self.status = status

    def run(self, cmd, what):
        """(stats, stdout, stderr) of `cmd`."""
        if self.stats.exists():
            self.stats.unlink()
        out = self.cwd.parent / "stdout"
        with open(out, "wb") as f:
            p = subprocess.run(cmd, cwd=self.cwd, env=workloads.guest_env(str(self.cwd)),
                               stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.PIPE, text=False)
        stderr = p.stderr.decode(errors="replace")
        if p.returncode not in (0, self.status):
            raise SystemExit(f"{what}: exit status {p.returncode}\n  {' '.join(map(str, cmd))}\n{stderr}")
        return strip_host(json.loads(self.stats.read_text())), out.read_bytes(), stderr


def check_program(runner, base_cmd, restore_cmd, point_opt, machine, label):
    """Runs the three functional and two timing runs of one program; returns
    (failures, summary line)."""
    functional = ["--set", "machine.model=functional"]
    timing = ["--set", "machine.model=timing"]
    common = ["--config", machine, "--set", "user.heap=nvmm", "--no-progress", "--stats", str(runner.stats)]
    ck = runner.cwd.parent / "ck"
    failures = []
    through, out_through, _ = runner.run(base_cmd(common + functional + point_opt), f"{label}: functional run through")
    _, out_written, err = runner.run(
        base_cmd(common + functional + point_opt + ["--checkpoint-to", str(ck), "--exit-after-checkpoint"]),
        f"{label}: writing the checkpoint")
    m = WRITTEN.search(err)
    # The files as the writer left them: a restore that writes to them
    # changes them, and the next restore needs them as they were.
    saved_files = runner.cwd.parent / "cwd-at-checkpoint"
    shutil.rmtree(saved_files, ignore_errors=True)
    shutil.copytree(runner.cwd, saved_files, symlinks=True)
    restored, out_restored, _ = runner.run(restore_cmd(common + functional + ["--restore", str(ck)]),
                                           f"{label}: functional restore")
    if differing(through, restored):
        failures.append(f"{label} functional: statistics differ in {', '.join(differing(through, restored))}")
    if out_written + out_restored != out_through:
        failures.append(f"{label} functional: the output differs from the run through's")
    ff = ["--fast-forward", point_opt[1]] if point_opt[1].startswith("insns=") else ["--fast-forward", "marker"]
    timed_through, out_tt, _ = runner.run(base_cmd(common + timing + ff + point_opt), f"{label}: timing run through")
    shutil.rmtree(runner.cwd)
    shutil.copytree(saved_files, runner.cwd, symlinks=True)
    timed_restored, out_tr, _ = runner.run(restore_cmd(common + timing + ["--restore", str(ck)]),
                                           f"{label}: timing restore")
    if differing(timed_through, timed_restored):
        failures.append(f"{label} timing: statistics differ in {', '.join(differing(timed_through, timed_restored))}")
    if out_written + out_tr != out_tt:
        failures.append(f"{label} timing: the output differs from the run through's")
    size = (ck / "state.bin").stat().st_size
    line = (f"{label}: point {m.group(1) if m else '?'} of {through['instructions']} instructions, "
            f"{size / 2**20:.2f} MiB, written in {m.group(4) if m else '?'} s; "
            f"functional {'identical' if not any('functional' in f for f in failures) else 'DIFFERS'}, "
            f"timing {'identical' if not any('timing' in f for f in failures) else 'DIFFERS'}")
    return failures, line, {"point": int(m.group(1)) if m else None, "instructions": through["instructions"],
                            "state_bytes": size, "write_seconds": float(m.group(4)) if m else None,
                            "identical": not failures}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rvnvmm", default=os.environ.get("RVNVMM_BIN") or str(REPO / "target" / "release" / "rvnvmm"))
    ap.add_argument("--size", default="test", choices=("test", "ref"))
    ap.add_argument("--config", default="freedom-u500")
    ap.add_argument("--only", help="comma-separated programs (workload names, checkpoint_state)")
    ap.add_argument("--json", help="write the figures to this file")
    a = ap.parse_args()
    os.environ["RVNVMM_BIN"] = a.rvnvmm
    only = set(a.only.split(",")) if a.only else None
    failures, figures = [], {}
    with tempfile.TemporaryDirectory(prefix="rvnvmm-ckid-") as tmp:
        for w in workloads.load_manifest()["workload"]:
            if only and w["name"] not in only:
                continue
            runner = Runner(a.rvnvmm, Path(tmp) / w["name"], w.get("status", 0))
            plain, _, _ = runner.run(workloads.command(
                w, a.size, ["--config", a.config, "--set", "user.heap=nvmm", "--set", "machine.model=functional",
                            "--no-progress", "--stats", str(runner.stats)]), f"{w['name']}: plain run")
            point = ["--checkpoint-at", f"insns={plain['instructions'] // 2}"]
            f, line, fig = check_program(
                runner, lambda opts: workloads.command(w, a.size, opts),
                lambda opts: [a.rvnvmm, "run", *opts], point, a.config, w["name"])
            failures += f
            figures[w["name"]] = fig
            print(line, flush=True)
        if not only or "checkpoint_state" in only:
            prog = REPO / "guest" / "build" / "emu" / "checkpoint_state"
            if not prog.exists():
                raise SystemExit(f"{prog} is missing: make -C guest emu")
            runner = Runner(a.rvnvmm, Path(tmp) / "checkpoint_state")
            dirs = iter(range(1000))

            def base(opts):
                # Each run writes its files in a directory of its own: the
                # restore needs the writer's as the writer left them.
                d = runner.cwd / f"files{next(dirs):03d}"
                d.mkdir()
                return [a.rvnvmm, "run", "--harts", "2", *opts, str(prog), str(d)]

            f, line, fig = check_program(runner, base, lambda opts: [a.rvnvmm, "run", "--harts", "2", *opts],
                                         ["--checkpoint-at", "marker"], a.config, "checkpoint_state")
            failures += f
            figures["checkpoint_state"] = fig
            print(line, flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
