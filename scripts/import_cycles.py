#!/usr/bin/env python3
"""Import circles between the files of each crate.

    scripts/import_cycles.py [--crate NAME]... [--check]

A file imports another when it names an item of that file's module by path
(`use crate::a::b`, `crate::a::f(...)`, `super::x`, `self::sub::y`, and the
entries of grouped `use crate::{a, b::c}`); a module's own `mod` lines and
`pub use` re-exports (a crate's facade, not a use) do not count, nor do test
modules (`tests.rs`, `*_tests.rs`, `#[cfg(test)] mod tests` blocks), nor
the crate root (`lib.rs`, `main.rs`: the crate's facade and the types every
module shares). Prints
every circle (a strongly connected set of two or more files) per crate;
`--check` exits with status 1 if there is any.
"""

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH_RE = re.compile(rf"\b(crate|super|self)((?:::{IDENT})+)")
GROUP_RE = re.compile(r"\buse\s+(crate|super|self)((?:::\w+)*)::\{", re.S)


def modules(src):
    """{module path tuple: file} for the crate whose sources are in `src`."""
    out = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main") and len(parts) == 1:
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        out[tuple(parts)] = f
    return out


def is_test_file(f):
    return f.stem == "tests" or f.stem.endswith("_tests") or "tests" in f.parts[:-1]


def strip_source(text):
    """The text without comments, string literals, test modules and
    `pub use` / `mod` lines."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    # A #[cfg(test)] item: drop from the attribute to the end of its block.
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            break
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        text = text[: m.start()] + text[i:]
    text = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]*;", "", text, flags=re.S)
    text = re.sub(r"(?:#\[[^\]]*\]\s*)*\b(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;", "", text)
    return text


def group_paths(text):
    """The full paths of grouped imports `use crate::a::{b, c::d}`."""
    out = []
    for m in GROUP_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        inner = text[m.end() : i - 1]
        # Top-level entries only; nested groups name their prefix.
        depth, start, entries = 0, 0, []
        for j, ch in enumerate(inner + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                entries.append(inner[start:j].strip())
                start = j + 1
        for e in entries:
            name = re.match(rf"{IDENT}(?:::{IDENT})*", e)
            if name and name.group(0) not in ("self",):
                out.append((m.group(1), m.group(2) + "::" + name.group(0)))
    return out


def resolve(mods, here, root, path):
    """The file of the longest module prefix that `root::path` names from
    module `here`, or None."""
    names = [p for p in path.split("::") if p]
    if root == "crate":
        base = []
    elif root == "super":
        base = list(here[:-1])
        while names and names[0] == "super":
            names.pop(0)
            base = base[:-1]
    else:
        base = list(here)
    full = base + names
    for n in range(len(full), -1, -1):
        f = mods.get(tuple(full[:n]))
        if f is not None:
            return f
    return None


def graph(src):
    mods = modules(src)
    root = mods.get(())
    edges = {f: set() for f in mods.values() if not is_test_file(f) and f != root}
    for here, f in mods.items():
        if f not in edges:
            continue
        text = strip_source(f.read_text())
        refs = [(m.group(1), m.group(2)) for m in PATH_RE.finditer(text)] + group_paths(text)
        for root, path in refs:
            g = resolve(mods, here, root, path)
            if g is not None and g != f and g in edges:
                edges[f].add(g)
    return edges


def circles(edges):
    """Strongly connected sets of two or more files (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crate", action="append", help="only this crate (its directory name)")
    ap.add_argument("--check", action="store_true", help="exit 1 if there is a circle")
    args = ap.parse_args()
    total = 0
    for src in sorted((REPO / "crates").glob("*/src")):
        crate = src.parent.name
        if args.crate and crate not in args.crate:
            continue
        for comp in circles(graph(src)):
            total += 1
            names = ", ".join(str(f.relative_to(src)) for f in comp)
            print(f"{crate}: {len(comp)} files: {names}")
    print(f"{total} circle(s)")
    sys.exit(1 if args.check and total else 0)


if __name__ == "__main__":
    main()
