#!/usr/bin/env python3
"""Sampling against timing throughout, on the workload suite (docs/regions-of-interest.md).

    python3 experiments/sampling.py [--size test|ref] [--plan period=N,detail=M,warmup=W]
                                    [--only NAME,...] [--json FILE] [RVNVMM OPTIONS...]

For each workload (guest/workloads, `make -C guest`): a run timed throughout
gives the simulated time of the whole run; a run with `--sample PLAN` gives
the estimate of it from its windows and the 95 % confidence interval
(`sampling.estimate` in its statistics). The table gives both times, the
estimate's error, the interval's half-width, whether the timed run's time lies
in the interval, the fraction of instructions timed (warm-ups and windows),
and the host seconds of each run. The default options are those of the
suite's table: `--set user.heap=nvmm --set machine.model=timing`. Standard
library only.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from roi_fastforward import DEFAULT_OPTS, run, workloads  # noqa: E402

DEFAULT_PLAN = "period=100000,detail=2000,warmup=2000"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="test", choices=["test", "ref"])
    ap.add_argument("--plan", default=DEFAULT_PLAN, help="the --sample argument")
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--json", help="write the figures as JSON to this file")
    args, opts = ap.parse_known_args(argv)
    opts = opts or DEFAULT_OPTS
    names = args.only.split(",") if args.only else [w["name"] for w in workloads.load_manifest()["workload"]]
    rows = {}
    print("| workload | instructions | windows | timed (ms) | estimate (ms) | error | ± 95 % | within | timed fraction | host s timed / sampled |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    within_all = 0
    for name in names:
        w = workloads.workload(name)
        full = run(w, args.size, opts)
        sampled = run(w, args.size, opts + [f"--sample={args.plan}"])
        s = sampled["sampling"]
        e = s["estimate"]
        truth = full["sim_time_ns"]
        if e is None or e["half_width_ns"] is None:
            print(f"| {name} | {full['instructions']} | {len(s['windows'])} | {truth / 1e6:.3f} | — | — | — | — "
                  f"| {s['timed_fraction']:.3f} | {full['host_seconds']:.2f} / {sampled['host_seconds']:.2f} |")
            rows[name] = {"full": full["sim_time_ns"], "sampling": s}
            continue
        within = e["low_ns"] <= truth <= e["high_ns"]
        within_all += within
        if s["total_instructions"] != full["instructions"]:
            print(f"{name}: the runs differ in instructions: {full['instructions']} timed, "
                  f"{s['total_instructions']} sampled", file=sys.stderr)
        print(
            f"| {name} | {full['instructions']} | {len(s['windows'])} "
            f"| {truth / 1e6:.3f} | {e['sim_time_ns'] / 1e6:.3f} "
            f"| {100 * (e['sim_time_ns'] - truth) / truth:+.2f} % "
            f"| {100 * e['relative_error']:.2f} % | {'yes' if within else 'NO'} "
            f"| {s['timed_fraction']:.3f} "
            f"| {full['host_seconds']:.2f} / {sampled['host_seconds']:.2f} |",
            flush=True,
        )
        del s["windows"]
        rows[name] = {
            "full_sim_time_ns": truth,
            "full_host_seconds": full["host_seconds"],
            "sampled_host_seconds": sampled["host_seconds"],
            "within": within,
            "sampling": s,
        }
    print(f"\nwithin the bound: {within_all} of {len(names)}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
