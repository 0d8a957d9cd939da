#!/usr/bin/env python3
"""The workload suite: inputs, manifest, runner (docs/workloads.md).

    workloads.py gen [OUTDIR]            generate the inputs (make -C guest does it)
    workloads.py list                    names, one a line
    workloads.py json                    the manifest as JSON
    workloads.py cmd NAME [SIZE]         print the rvnvmm and qemu command lines
    workloads.py run NAME [SIZE] [--qemu] [RVNVMM OPTIONS...]
                                         run one workload (guest stdout -> stdout)
    workloads.py table [--size SIZE] [--stats-dir DIR] [--only NAME,...] [RVNVMM OPTIONS...]
                                         run workloads with --stats one after the
                                         other and print the markdown table of
                                         docs/workloads.md

SIZE is `test` or `ref` (default `ref`).  The table's default options are
`--set user.heap=nvmm --set machine.model=timing`.

Only the standard library (Python >= 3.11 for tomllib).  Everything the
generator writes depends on nothing but this file and inputs/: its own
xorshift64* generator, integer arithmetic, and the gzip/lzma modules
for the compressed inputs of the decompression workloads.
"""

import gzip
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MANIFEST = HERE / "workloads.toml"
BUILD = REPO / "guest" / "build" / "workloads"
BIN = BUILD / "bin"
INPUTS = BUILD / "inputs"
SIZES = ("test", "ref")

# ------------------------------------------------------------- generator


class Rng:
    """xorshift64* with a fixed seed: the same stream on every host."""

    M = (1 << 64) - 1

    def __init__(self, seed):
        self.s = seed & self.M or 0x9E3779B97F4A7C15

    def next(self):
        x = self.s
        x ^= x >> 12
        x ^= (x << 25) & self.M
        x ^= x >> 27
        self.s = x
        return (x * 0x2545F4914F6CDD1D) & self.M

    def below(self, n):
        return self.next() % n


SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ou", "ai")]


def vocabulary(rng, n):
    words, seen = [], set()
    while len(words) < n:
        k = 1 + rng.below(4)
        w = "".join(SYLLABLES[rng.below(len(SYLLABLES))] for _ in range(k))
        if rng.below(5) == 0:
            w += "s"
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Zipf:
    """Integer-weighted Zipf sampling (weights floor(2^40 / rank))."""

    def __init__(self, items):
        self.items = items
        self.cum, total = [], 0
        for i in range(len(items)):
            total += (1 << 40) // (i + 1)
            self.cum.append(total)
        self.total = total

    def pick(self, rng):
        import bisect

        return self.items[bisect.bisect_right(self.cum, rng.below(self.total))]


def corpus(nbytes, seed=0xC0A9B05):
    """English-like text: Zipf-distributed pseudo-words, sentences,
    paragraphs, lines wrapped at 72 columns; exactly nbytes long."""
    rng = Rng(seed)
    z = Zipf(vocabulary(rng, 6000))
    out, size, line = [], 0, ""
    while size < nbytes:
        para = []
        for _ in range(3 + rng.below(6)):
            words = [z.pick(rng) for _ in range(5 + rng.below(16))]
            if rng.below(4) == 0:
                words.insert(rng.below(len(words)), str(1700 + rng.below(330)))
            for i in range(1, len(words) - 1):
                if rng.below(9) == 0:
                    words[i] += ","
            words[0] = words[0].capitalize()
            para.append(" ".join(words) + (".", ".", ".", "?", "!", ";")[rng.below(6)])
        text = " ".join(para)
        # Wrap.
        for w in text.split(" "):
            if line and len(line) + 1 + len(w) > 72:
                out.append(line + "\n")
                size += len(line) + 1
                line = w
            else:
                line = line + " " + w if line else w
        out.append(line + "\n\n")
        size += len(line) + 2
        line = ""
    return "".join(out).encode()[:nbytes]


def sales(nlines, seed=0x5A1E5):
    """The awk workload's log: id|day|region|product|qty|price|customer|comment."""
    rng = Rng(seed)
    vocab = vocabulary(rng, 3000)
    z = Zipf(vocab)
    regions = ["north", "south", "east", "west", "centre", "islands", "abroad"]
    prods = Zipf(["p%04d" % i for i in range(1, 1201)])
    lines = []
    for i in range(1, nlines + 1):
        comment = " ".join(z.pick(rng) for _ in range(2 + rng.below(9)))
        lines.append(
            "%d|%d|%s|%s|%d|%d.%02d|c%05d|%s\n"
            % (
                i,
                rng.below(3650),
                regions[rng.below(len(regions)) if rng.below(3) else 0],
                prods.pick(rng),
                1 + rng.below(40),
                1 + rng.below(500),
                rng.below(100),
                1 + rng.below(max(1, nlines // 20)),
                comment,
            )
        )
    return "".join(lines).encode()


# Generated inputs (docs/workloads.md lists them).  The corpora share one
# seed, so each is a prefix of the next larger one.
CORPORA = {"test": 48 * 1024, "512k": 512 * 1024, "ref": 3 * 1024 * 1024}
COMPRESSED = ("test", "ref")
SALES = {"test": 1500, "ref": 35_000}


def generate(outdir):
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    files = {}
    whole = corpus(max(CORPORA.values()))
    for size, nbytes in CORPORA.items():
        text = whole[:nbytes]
        files[f"corpus-{size}.txt"] = text
        if size in COMPRESSED:
            # Inputs of the decompression workloads.  zlib gives the same
            # bytes everywhere, and so has liblzma for a given preset so
            # far; gzip gets a fixed mtime.  (Either way the decompressed
            # output is the corpus.)
            files[f"corpus-{size}.txt.xz"] = lzma.compress(
                text, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=6
            )
            files[f"corpus-{size}.txt.gz"] = gzip.compress(text, compresslevel=6, mtime=0)
    for size, nlines in SALES.items():
        files[f"sales-{size}.txt"] = sales(nlines)
    for f in sorted((HERE / "inputs").iterdir()):
        if f.is_file():
            files[f.name] = f.read_bytes()
    sums = []
    for name in sorted(files):
        data = files[name]
        p = outdir / name
        if not p.exists() or p.read_bytes() != data:
            tmp = p.with_name(p.name + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(p)
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {name}\n")
    (outdir / "SHA256SUMS").write_text("".join(sums))
    for p in outdir.iterdir():  # inputs of earlier versions
        if p.name not in files and p.name not in ("SHA256SUMS", ".stamp"):
            p.unlink()
    (outdir.parent / "manifest.json").write_text(json.dumps(load_manifest(), indent=1) + "\n")
    print(f"workloads: {len(files)} inputs in {outdir}", file=sys.stderr)


# -------------------------------------------------------------- manifest


def load_manifest():
    with open(MANIFEST, "rb") as f:
        m = tomllib.load(f)
    names = set()
    for w in m["workload"]:
        for k in ("name", "binary", "stands_for", "class", "args"):
            if k not in w:
                raise SystemExit(f"{MANIFEST}: workload {w.get('name', '?')} has no {k}")
        if w["name"] in names:
            raise SystemExit(f"{MANIFEST}: duplicate workload {w['name']}")
        names.add(w["name"])
        for s in SIZES:
            if s not in w["args"]:
                raise SystemExit(f"{MANIFEST}: workload {w['name']} has no args.{s}")
        w.setdefault("sysroot", False)
        w.setdefault("status", 0)
    return m


def workload(name):
    for w in load_manifest()["workload"]:
        if w["name"] == name:
            return w
    raise SystemExit(f"no workload {name!r}; see `workloads.py list`")


def setup_path(key):
    if os.environ.get(key):
        return os.environ[key]
    cache = Path(os.environ.get("RVNVMM_CACHE") or Path.home() / ".cache" / "rvnvmm")
    try:
        for line in (cache / "paths.env").read_text().splitlines():
            k, _, v = line.strip().partition("=")
            if k == key:
                return v
    except OSError:
        pass
    raise SystemExit(f"{key} is not set and not in {cache}/paths.env: run scripts/setup.sh")


def expand(s, sysroot):
    return s.replace("{bin}", str(BIN)).replace("{inputs}", str(INPUTS)).replace("{sysroot}", sysroot or "")


# The guest's view under rvnvmm: the same names wherever the checkout, the
# cache and the working directory lie on the host (`rvnvmm run --map`), so
# that the guest's stack, and with it every address-dependent result, is
# the same for everyone.
GUEST_BUILD = "/guest"
GUEST_BIN = f"{GUEST_BUILD}/workloads/bin"
GUEST_INPUTS = f"{GUEST_BUILD}/workloads/inputs"
GUEST_CWD = "/work"


def guest_expand(s):
    """A manifest string with its placeholders as the guest names them
    ({sysroot} is the guest's root: rvnvmm finds it through --sysroot)."""
    return s.replace("{bin}", GUEST_BIN).replace("{inputs}", GUEST_INPUTS).replace("{sysroot}", "")


def guest_path(host):
    """The guest's name of a file under guest/build (GUEST_BUILD/...)."""
    rel = Path(host).resolve().relative_to(BUILD.parent.resolve())
    return f"{GUEST_BUILD}/{rel}"


def guest_view(env=None):
    """The `rvnvmm run` options of the fixed guest view: guest/build at
    GUEST_BUILD, the host's working directory at GUEST_CWD (the guest's),
    and `env` (default guest_env(GUEST_CWD)) as the whole environment."""
    opts = ["--map", f"{GUEST_BUILD}={BUILD.parent}", "--map", f"{GUEST_CWD}=.",
            "--cwd", GUEST_CWD, "--clean-env"]
    for k, v in (guest_env(GUEST_CWD) if env is None else env).items():
        opts += ["--env", f"{k}={v}"]
    return opts


def resolve(w, size):
    """(program, args, sysroot or None) with the placeholders filled in."""
    sysroot = setup_path("RVNVMM_SYSROOT") if w["sysroot"] else None
    prog = expand(w["binary"], sysroot)
    args = [expand(a, sysroot) for a in w["args"][size]]
    if not Path(prog).is_file():
        raise SystemExit(f"{prog} does not exist: run `make -C guest` (and scripts/setup.sh)")
    return prog, args, sysroot


def rvnvmm_bin():
    return os.environ.get("RVNVMM_BIN") or str(REPO / "target" / "release" / "rvnvmm")


def guest_env(cwd):
    """The fixed environment of every run: qemu-riscv64 passes its own on
    to the guest; rvnvmm gives the guest this one with cwd = GUEST_CWD
    (guest_view)."""
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": cwd, "TMPDIR": cwd}


def command(w, size, opts, qemu=False):
    """The command line of workload `w`, to run in a working directory of
    its own: rvnvmm's in the fixed guest view (programs and inputs by their
    guest names), or qemu-riscv64's with host paths."""
    prog, args, sysroot = resolve(w, size)
    if qemu:
        q = os.environ.get("RVNVMM_QEMU") or "qemu-riscv64"
        return [q] + (["-L", sysroot] if sysroot else []) + [prog] + args
    gprog = guest_expand(w["binary"])
    gargs = [guest_expand(a) for a in w["args"][size]]
    return ([rvnvmm_bin(), "run"] + (["--sysroot", sysroot] if sysroot else []) + guest_view()
            + list(opts) + ["--", gprog] + gargs)


def run(w, size, opts, qemu=False, stdout=None):
    with tempfile.TemporaryDirectory(prefix="rvnvmm-wl-") as cwd:
        cmd = command(w, size, opts, qemu)
        t = time.monotonic()
        p = subprocess.run(cmd, cwd=cwd, env=guest_env(cwd), stdin=subprocess.DEVNULL, stdout=stdout)
        return p.returncode, time.monotonic() - t


# ------------------------------------------------------------------ table


def fmt_si(x):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.0f}"


def table(argv):
    size, stats_dir, only, opts = "ref", None, None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--size":
            size, i = argv[i + 1], i + 2
        elif a == "--stats-dir":
            stats_dir, i = argv[i + 1], i + 2
        elif a == "--only":
            only, i = argv[i + 1].split(","), i + 2
        else:
            opts.append(a)
            i += 1
    if not opts:
        opts = ["--set", "user.heap=nvmm", "--set", "machine.model=timing"]
    stats_dir = Path(stats_dir or tempfile.mkdtemp(prefix="rvnvmm-wl-stats-"))
    stats_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for w in load_manifest()["workload"]:
        if only and w["name"] not in only:
            continue
        sj = stats_dir / f"{w['name']}-{size}.json"
        status, secs = run(w, size, opts + ["--stats", str(sj)], stdout=subprocess.DEVNULL)
        if status != w["status"]:
            raise SystemExit(f"{w['name']}: exit status {status}, expected {w['status']}")
        d = json.loads(sj.read_text())
        n = d["regions"].get("nvmm", {})
        dram = d["regions"].get("dram", {})
        nreq = n.get("reads", 0) + n.get("writes", 0)
        dreq = dram.get("reads", 0) + dram.get("writes", 0)
        rows.append(
            "| %s | %s | %.3f s | %s/s | %s | %.0f%% | %.3f | %.3f | %.2f | %.1f |"
            % (
                w["name"],
                fmt_si(d["instructions"]),
                d["sim_time_ns"] / 1e9,
                fmt_si(n.get("req_per_sec") or 0),
                fmt_si(nreq),
                100.0 * nreq / max(1, nreq + dreq),
                n.get("act_per_req") or 0,
                n.get("bank_para") or 0,
                n.get("rw_ratio") or 0,
                secs,
            )
        )
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"<!-- size {size}, options {' '.join(opts)}; stats in {stats_dir} -->")
    print(
        "| workload | instructions | sim time | NVMM req/s | NVMM requests | NVMM share "
        "| ACT/REQ | BANK PARA | R/W | host s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


# ------------------------------------------------------------------- main


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "gen":
        generate(rest[0] if rest else INPUTS)
    elif cmd == "list":
        for w in load_manifest()["workload"]:
            print(w["name"])
    elif cmd == "json":
        print(json.dumps(load_manifest(), indent=1))
    elif cmd in ("cmd", "run"):
        if not rest:
            raise SystemExit(f"usage: workloads.py {cmd} NAME [SIZE] ...")
        w = workload(rest[0])
        size = "ref"
        rest = rest[1:]
        if rest and rest[0] in SIZES:
            size, rest = rest[0], rest[1:]
        qemu = "--qemu" in rest
        opts = [a for a in rest if a != "--qemu"]
        if cmd == "cmd":
            print(" ".join(command(w, size, opts)))
            print(" ".join(command(w, size, [], qemu=True)))
            return 0
        status, _ = run(w, size, opts, qemu)
        return status
    elif cmd == "table":
        table(rest)
    else:
        raise SystemExit(f"unknown command {cmd!r}\n{__doc__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
