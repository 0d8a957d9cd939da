"""Console scripts `rvnvmm-sweep`, `rvnvmm-report` and `rvnvmm-heat`.

Exit status of `rvnvmm-sweep`: 0 when every run succeeded, 1 when some
failed (their errors are in the store and the report), 2 when nothing ran
because the spec, the binary or the command line is wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .binary import BinaryNotFound, find_binary
from .executors import default_jobs
from .heat import read_heat
from .heatmap import METRICS, duration_text, node_summary
from .report import ReportError, write_heat_report, write_report
from .spec import SpecError, load_spec
from .store import Store
from .sweep import plan_sweep, run_sweep
from .validate import validate


def sweep_main(argv: Sequence[str] | None = None) -> int:
    """`rvnvmm-sweep SPEC --out DIR`: runs a sweep, resuming a stored one."""
    ap = argparse.ArgumentParser(
        prog="rvnvmm-sweep",
        description="Run a grid of rvnvmm runs or benchmarks described by a TOML spec; "
                    "runs already stored in --out are skipped.")
    ap.add_argument("spec", type=Path, help="the sweep spec (TOML, see docs/workflow.md)")
    ap.add_argument("--out", "-o", type=Path, required=True, help="results directory")
    ap.add_argument("--jobs", "-j", type=int, default=None,
                    help=f"runs at once (local executor, or Dask LocalCluster workers); "
                         f"default: the number of cores ({default_jobs()})")
    ap.add_argument("--executor", choices=("local", "dask"), default="local",
                    help="where runs execute (default local)")
    ap.add_argument("--scheduler", metavar="ADDRESS|FILE",
                    help="Dask scheduler to use: an address (tcp://host:8786) or a scheduler file; "
                         "default: start a LocalCluster")
    ap.add_argument("--rvnvmm", metavar="PATH",
                    help="the rvnvmm binary (default: $RVNVMM_BIN, rvnvmm on PATH, "
                         "or the repository's target/release/rvnvmm)")
    ap.add_argument("--check", action="store_true",
                    help="check the spec and show the plan without running anything")
    ap.add_argument("--report", action="store_true", help="write DIR/report.html afterwards")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    args = ap.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.scheduler and args.executor != "dask":
        ap.error("--scheduler needs --executor dask")

    try:
        if args.check:
            return _check(args.spec, args.out, args.rvnvmm)
        summary = run_sweep(args.spec, args.out, jobs=args.jobs, executor=args.executor,
                            scheduler=args.scheduler, binary=args.rvnvmm, quiet=args.quiet)
    except (SpecError, BinaryNotFound) as e:
        print(f"rvnvmm-sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rvnvmm-sweep: interrupted; finished runs are stored, run again to complete",
              file=sys.stderr)
        return 130
    print(summary)
    if args.report:
        print(f"report: {write_report(args.out)}")
    return 1 if summary.failed else 0


def _check(spec_path: Path, out: Path, binary: str | None) -> int:
    spec = load_spec(spec_path)
    path = find_binary(binary)
    for warning in validate(spec, path):
        print(f"warning: {warning}", file=sys.stderr)
    runs, entries, _ = plan_sweep(spec, path)
    stored = Store(out).completed_keys() if out.exists() else set()
    todo = sum(1 for e in entries if e["key"] not in stored)
    print(f"spec '{spec.name}' is valid: {len(runs)} runs ({spec.grid_size} grid points x "
          f"{spec.repeat} repeat{'s' if spec.repeat > 1 else ''}), {len(runs) - todo} already "
          f"stored in {out}, {todo} to run")
    if spec.page_heat_window_ns is not None:
        window = duration_text(spec.page_heat_window_ns * 1000)
        print(f"`run` commands record page heat in windows of {window} (kept in {out / 'heat'})")
    for run in runs[:20]:
        print(f"  {run.describe()}")
    if len(runs) > 20:
        print(f"  ... {len(runs) - 20} more")
    return 0


def report_main(argv: Sequence[str] | None = None) -> int:
    """`rvnvmm-report DIR`: writes DIR/report.html from a results store."""
    ap = argparse.ArgumentParser(
        prog="rvnvmm-report",
        description="Write a self-contained HTML report (tables and figures) of a stored sweep.")
    ap.add_argument("dir", type=Path, help="the sweep's --out directory")
    ap.add_argument("--baseline", "-b", action="append", default=[], metavar="AXIS=VALUE",
                    help="normalise to the run with this axis value (repeatable; default: the "
                         "spec's [report] baseline, else the first value of every non-workload axis)")
    ap.add_argument("--output", "-o", type=Path, help="where to write (default DIR/report.html)")
    args = ap.parse_args(argv)
    baseline = None
    if args.baseline:
        baseline = {}
        for item in args.baseline:
            key, sep, value = item.partition("=")
            if not sep:
                ap.error(f"--baseline wants AXIS=VALUE, got '{item}'")
            baseline[key.strip()] = value.strip()
    try:
        path = write_report(args.dir, baseline=baseline, output=args.output)
    except (ReportError, FileNotFoundError) as e:
        print(f"rvnvmm-report: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0


def heat_main(argv: Sequence[str] | None = None) -> int:
    """`rvnvmm-heat FILE`: draws a page-heat file as one HTML page."""
    ap = argparse.ArgumentParser(
        prog="rvnvmm-heat",
        description="Draw a page-heat file (rvnvmm run --page-heat) as one self-contained HTML "
                    "page: time x address heat maps per NUMA node (and by virtual page in user "
                    "mode), a per-node summary and the hottest pages.")
    ap.add_argument("file", type=Path, help="the page-heat file")
    ap.add_argument("--output", "-o", type=Path,
                    help="where to write the page (default: FILE with the suffix .html)")
    ap.add_argument("--metric", "-m", choices=METRICS, default="accesses",
                    help="what colours the heat maps and ranks the hottest pages: accesses "
                         "(line reads + writes at the node, default), reads, writes or misses "
                         "(L1 misses)")
    ap.add_argument("--summary", "-s", action="store_true",
                    help="print the per-node table; write the page only if --output is given")
    args = ap.parse_args(argv)
    try:
        if args.summary:
            heat = read_heat(args.file)
            if not heat.complete:
                print(f"rvnvmm-heat: warning: {args.file} has no end block (the run did not "
                      f"finish); {heat.windows} windows read", file=sys.stderr)
            table = node_summary(heat)
            table["share of accesses"] = [f"{v:.1%}" for v in table["share of accesses"]]
            print(table.to_string(index=False))
            if args.output is None:
                return 0
        print(write_heat_report(args.file, output=args.output, metric=args.metric))
    except (OSError, ValueError) as e:
        print(f"rvnvmm-heat: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(sweep_main())
