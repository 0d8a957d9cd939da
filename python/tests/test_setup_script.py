"""scripts/setup.sh against a fake Debian mirror on loopback.

The mirror is a real archive in miniature: .debs built with dpkg-deb, a
Packages index, an InRelease signed with a key made for the test (apt verifies
it, as it verifies Debian's), served by http.server on 127.0.0.1. Each test
breaks it the way real mirrors break (an index mid-sync, a .deb gone from
pool/, 503s, no server at all) and checks what set-up does, in seconds.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.server
import importlib.util
import lzma
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup.sh"
_spec = importlib.util.spec_from_file_location("debian_packages", ROOT / "scripts" / "debian_packages.py")
debian_packages = sys.modules.setdefault("debian_packages", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(debian_packages)

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("apt-get", "dpkg-deb", "gpg")),
    reason="needs apt-get, dpkg-deb and gpg (Debian's apt, dpkg and gnupg)",
)

KERNEL = "linux-image-6.1.0-test-riscv64"
# Files setup.sh looks for, by package; the other packages hold a copyright file.
CONTENTS = {
    "busybox-static": ["usr/bin/busybox"],
    "opensbi": ["usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"],
    KERNEL: ["boot/vmlinux-6.1.0-test-riscv64", "usr/lib/modules/6.1.0-test-riscv64/modules.dep"],
    "libc6": ["usr/lib/ld-linux-riscv64-lp64d.so.1", "usr/lib/riscv64-linux-gnu/libc.so.6"],
    "libstdc++6": ["usr/lib/riscv64-linux-gnu/libstdc++.so.6"],
    "libgcc-s1": ["usr/lib/riscv64-linux-gnu/libgcc_s.so.1"],
    **{name: [f"usr/bin/{binary}"] for name, binary in [
        ("xz-utils", "xz"), ("bzip2", "bzip2"), ("gzip", "gzip"), ("sqlite3", "sqlite3"),
        ("lua5.4", "lua5.4"), ("gawk", "gawk"), ("mawk", "mawk")]},
}


def _wanted_packages() -> list[str]:
    """The packages setup.sh asks for: those its committed lock pins."""
    return [d.wanted for d in debian_packages.Lock.read(debian_packages.DEFAULT_LOCK).debs]


class FakeMirror:
    """A Debian archive in a directory, served on 127.0.0.1, that a test can break."""

    def __init__(self, root: Path, gnupg: Path):
        self.root, self.gnupg = root, gnupg
        self.debian = root / "debian"
        self.debs: dict[str, debian_packages.Deb] = {}  # by the package asked for
        self.depends: dict[str, str] = {}
        self.failures: dict[str, int] = {}  # URL path -> 503 answers still to give
        self.requests: list[str] = []
        mirror = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self):  # noqa: N802 (http.server's name)
                mirror.requests.append(self.path)
                if mirror.failures.get(self.path, 0) > 0:
                    mirror.failures[self.path] -= 1
                    self.send_error(503, "Service Unavailable")
                    return
                # A test republishes a suite within the second apt's
                # If-Modified-Since names, so a 304 would hide the change.
                del self.headers["If-Modified-Since"]
                super().do_GET()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = loopback(1, "debian", port=self.server.server_port)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, name: str, version: str, wanted: str | None = None,
            depends: str = "") -> debian_packages.Deb:
        """Build NAME_VERSION_riscv64.deb into pool/."""
        tree = self.root / "build" / f"{name}_{version}"
        for rel in CONTENTS.get(name, [f"usr/share/doc/{name}/copyright"]):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(f"{name} {version} {rel}\n")
        (tree / "DEBIAN").mkdir(parents=True, exist_ok=True)
        control = (f"Package: {name}\nVersion: {version}\nArchitecture: riscv64\n"
                   f"Maintainer: rvnvmm tests <tests@localhost>\nDescription: {name} for the set-up tests\n")
        (tree / "DEBIAN" / "control").write_text(control + (f"Depends: {depends}\n" if depends else ""))
        filename = f"pool/main/{name[0]}/{name}/{name}_{version}_riscv64.deb"
        deb_path = self.debian / filename
        deb_path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["dpkg-deb", "-Znone", "--root-owner-group", "--build", str(tree), str(deb_path)],
                       check=True, stdout=subprocess.DEVNULL)
        data = deb_path.read_bytes()
        deb = debian_packages.Deb(name, version, len(data), hashlib.sha256(data).hexdigest(), filename,
                                  wanted or name)
        self.debs[wanted or name] = deb
        self.depends[name] = depends
        return deb

    def packages_index(self) -> str:
        stanzas = []
        for deb in self.debs.values():
            stanza = (f"Package: {deb.name}\nVersion: {deb.version}\nArchitecture: riscv64\n"
                      f"Maintainer: rvnvmm tests <tests@localhost>\n")
            if self.depends.get(deb.name):
                stanza += f"Depends: {self.depends[deb.name]}\n"
            stanza += (f"Filename: {deb.filename}\nSize: {deb.size}\nSHA256: {deb.sha256}\n"
                       f"Description: {deb.name} for the set-up tests\n")
            stanzas.append(stanza)
        return "\n".join(stanzas)

    def publish(self, suite: str, codename: str, mid_sync: bool = False) -> None:
        """dists/SUITE: a signed InRelease and the Packages index it lists.

        mid_sync: the InRelease lists a newer index than the one served, as on a
        mirror whose sync is in progress (apt: "File has unexpected size").
        """
        served = self.packages_index().encode()
        listed = served + (b"\nPackage: newer\nVersion: 1\nArchitecture: riscv64\n" if mid_sync else b"")
        dist = self.debian / "dists" / suite
        index = dist / "main" / "binary-riscv64"
        index.mkdir(parents=True, exist_ok=True)
        (index / "Packages").write_bytes(served)
        (index / "Packages.xz").write_bytes(lzma.compress(served))
        sums = "".join(f" {hashlib.sha256(data).hexdigest()} {len(data)} main/binary-riscv64/{name}\n"
                       for name, data in [("Packages", listed), ("Packages.xz", lzma.compress(listed))])
        release = (f"Origin: Debian\nLabel: Debian\nSuite: {suite}\nCodename: {codename}\n"
                   f"Date: {email.utils.formatdate(usegmt=True)}\nArchitectures: riscv64\n"
                   f"Components: main\nDescription: set-up test archive\nSHA256:\n{sums}")
        (dist / "Release").write_text(release)
        (dist / "InRelease").unlink(missing_ok=True)
        subprocess.run(["gpg", "--homedir", str(self.gnupg), "--batch", "--yes", "--clearsign",
                        "--output", str(dist / "InRelease"), str(dist / "Release")], check=True)

    def unpublish(self, suite: str) -> None:
        shutil.rmtree(self.debian / "dists" / suite, ignore_errors=True)

    def remove_from_pool(self, wanted: str) -> None:
        (self.debian / self.debs[wanted].filename).unlink()


@pytest.fixture(scope="module")
def archive_key(tmp_path_factory):
    """A signing key for the fake archive and the keyring apt verifies it with."""
    gnupg = tmp_path_factory.mktemp("gnupg")
    gnupg.chmod(0o700)
    gpg = ["gpg", "--homedir", str(gnupg), "--batch"]
    subprocess.run(gpg + ["--passphrase", "", "--quick-gen-key", "rvnvmm test archive <archive@localhost>",
                          "ed25519", "sign", "never"], check=True, capture_output=True)
    keyring = gnupg / "archive-keyring.gpg"
    keyring.write_bytes(subprocess.run(gpg + ["--export"], check=True, capture_output=True).stdout)
    return gnupg, keyring


@pytest.fixture
def mirror(tmp_path, archive_key):
    """A consistent mirror: every wanted package in pool/ and trixie's index, signed."""
    m = FakeMirror(tmp_path / "mirror", archive_key[0])
    for wanted in _wanted_packages():
        if wanted == "linux-image-riscv64":
            m.add(KERNEL, "6.1.0-1", wanted=wanted)
            m.add(wanted, "6.1.0-1", wanted="meta:" + wanted, depends=f"{KERNEL} (= 6.1.0-1)")
        else:
            m.add(wanted, "1:1.0-1" if wanted == "gawk" else "1.0-1")  # an epoch, as Debian's gawk
    m.publish("trixie", "trixie")
    yield m
    m.stop()


def write_lock(path: Path, mirror: FakeMirror, **replace: debian_packages.Deb) -> Path:
    debs = [d for w, d in mirror.debs.items() if not w.startswith("meta:")]
    debs = [replace.get(d.wanted, d) for d in debs]
    debian_packages.Lock("trixie", debs, "the set-up tests' fake mirror").write(path)
    return path


@pytest.fixture
def cache(tmp_path):
    """An empty cache but for a venv setup.sh takes as up to date (pip is not what is tested)."""
    cache = tmp_path / "cache"
    venv = cache / "venv"
    (venv / "bin").mkdir(parents=True)
    for tool in ("rvnvmm-sweep", "pytest"):
        (venv / "bin" / tool).write_text("#!/bin/sh\n")
        (venv / "bin" / tool).chmod(0o755)
    key = hashlib.sha256((ROOT / "python" / "pyproject.toml").read_bytes()).hexdigest()
    (venv / ".rvnvmm-key").write_text(f"{key} {ROOT}\n")
    return cache


def run_setup(cache: Path, mirror_url: str, lock: Path, keyring: Path,
              *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "RVNVMM_CACHE": str(cache),
        "RVNVMM_SKIP_HOST": "1",
        "RVNVMM_DEBIAN_MIRROR": mirror_url,
        "RVNVMM_DEBIAN_LOCK": str(lock),
        "RVNVMM_DEBIAN_KEYRING": str(keyring),
        "RVNVMM_FETCH_RETRIES": "2",
        "RVNVMM_FETCH_BACKOFF": "0.05",
        "RVNVMM_FETCH_TIMEOUT": "5",
    }
    return subprocess.run(["bash", str(SETUP), *args], env=env, capture_output=True, text=True, timeout=120)


def said(done: subprocess.CompletedProcess) -> str:
    """Set-up's stderr with its line wrapping undone."""
    return " ".join(done.stderr.split())


def paths_env(cache: Path) -> dict[str, str]:
    lines = (cache / "paths.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def gone(deb: debian_packages.Deb) -> debian_packages.Deb:
    """The same package at a version the mirror does not have."""
    filename = deb.filename.replace(deb.version, "0.9-1")
    return debian_packages.Deb(deb.name, "0.9-1", deb.size, deb.sha256, filename, deb.wanted)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fresh_cache_with_the_lock_needs_no_index(tmp_path, mirror, cache, archive_key):
    mirror.publish("trixie", "trixie", mid_sync=True)
    lock = write_lock(tmp_path / "lock", mirror)
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert not any("/dists/" in r for r in mirror.requests), mirror.requests
    env = paths_env(cache)
    assert Path(env["RVNVMM_BUSYBOX"]).read_text() == "busybox-static 1.0-1 usr/bin/busybox\n"
    assert Path(env["RVNVMM_KERNEL"]).name == "vmlinux-6.1.0-test-riscv64"
    assert (Path(env["RVNVMM_SYSROOT"]) / "usr/bin/gawk").is_file()
    # The verified .debs stay in the cache, each tree names the .deb it came from.
    libc6 = mirror.debs["libc6"]
    kept = cache / "debs" / Path(libc6.filename).name
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == libc6.sha256
    assert (cache / "debian" / "libc6_1.0-1.verified").read_text().split()[0] == libc6.sha256
    assert (cache / "debian" / "gawk_1%3a1.0-1").is_dir()


def test_fresh_cache_mid_sync_mirror_ends_with_the_clear_message(tmp_path, mirror, cache, archive_key):
    # The locked libc6 is gone from pool/, and the only index is mid-sync: nothing usable.
    lock = write_lock(tmp_path / "lock", mirror, libc6=gone(mirror.debs["libc6"]))
    mirror.publish("trixie", "trixie", mid_sync=True)
    start = time.monotonic()
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    elapsed = time.monotonic() - start
    assert done.returncode != 0
    error = said(done)[said(done).index("setup: error:"):]
    assert "the lock pins libc6 0.9-1, which the mirror no longer has" in error
    assert "File has unexpected size" in error and "Packages" in error  # apt's own line
    assert "not a fault of this machine" in error
    assert "Run scripts/setup.sh again later" in error and "RVNVMM_DEBIAN_MIRROR" in error
    assert elapsed < 30, f"took {elapsed:.1f} s"
    assert not (cache / "paths.env").exists()


def test_fresh_cache_unreachable_mirror_fails_fast_with_the_clear_message(
        tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror)
    start = time.monotonic()
    done = run_setup(cache, loopback(1, "debian", port=free_port()), lock, archive_key[1])
    assert done.returncode != 0
    assert "retrying in" in done.stderr  # transient: retried with back-off ...
    assert "(3 tries)" in done.stderr  # ... RVNVMM_FETCH_RETRIES=2 times
    assert "not a fault of this machine" in said(done)
    assert time.monotonic() - start < 30


def test_warm_cache_goes_on_when_the_mirror_is_broken_or_gone(tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror)
    assert run_setup(cache, mirror.url, lock, archive_key[1]).returncode == 0
    before = paths_env(cache)

    # Mid-sync index and an empty pool: the verified cache is all set-up needs.
    mirror.publish("trixie", "trixie", mid_sync=True)
    for wanted in list(mirror.debs):
        if not wanted.startswith("meta:"):
            mirror.remove_from_pool(wanted)
    mirror.requests.clear()
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert mirror.requests == []
    assert paths_env(cache) == before

    # No mirror at all: the same.
    mirror.stop()
    done = run_setup(cache, loopback(1, "debian", port=free_port()), lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert "have libc6 1.0-1" in done.stderr


def test_locked_deb_gone_falls_back_to_the_alias_index_when_the_codename_is_mid_sync(
        tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror, libc6=gone(mirror.debs["libc6"]))
    mirror.publish("trixie", "trixie", mid_sync=True)
    mirror.publish("testing", "forky")  # an alias of another release: not a source for trixie
    mirror.publish("stable", "trixie")
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert "using suite stable, whose signed InRelease has codename trixie" in said(done)
    assert "using libc6 1.0-1 from the signed index of stable" in said(done)
    assert "scripts/setup.sh --update-lock" in said(done)
    assert (cache / "debian" / "libc6_1.0-1.verified").is_file()


def test_alias_with_a_bad_signature_is_refused(tmp_path, mirror, cache, archive_key, tmp_path_factory):
    lock = write_lock(tmp_path / "lock", mirror, libc6=gone(mirror.debs["libc6"]))
    mirror.publish("trixie", "trixie", mid_sync=True)
    mirror.publish("stable", "trixie")
    release = mirror.debian / "dists" / "stable" / "InRelease"
    release.write_text(release.read_text().replace("Label: Debian", "Label: Debiam"))
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode != 0
    assert "stable: E: The repository" in done.stderr and "is not signed" in done.stderr
    assert "not a fault of this machine" in said(done)


def test_previously_verified_index_is_used_with_a_warning(tmp_path, mirror, cache, archive_key):
    # A first set-up needs the index (the locked libc6 is gone) and keeps its verified lists.
    lock = write_lock(tmp_path / "lock", mirror, libc6=gone(mirror.debs["libc6"]))
    assert run_setup(cache, mirror.url, lock, archive_key[1]).returncode == 0
    # The libc6 it installed is lost from the cache; the index is now mid-sync.
    shutil.rmtree(cache / "debian" / "libc6_1.0-1")
    mirror.publish("trixie", "trixie", mid_sync=True)
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert "using the previously verified lists of trixie" in said(done)


def test_transient_errors_are_retried(tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror)
    path = "/debian/" + mirror.debs["libc6"].filename
    mirror.failures[path] = 2
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("503 Service Unavailable; retrying in") == 2
    assert mirror.requests.count(path) == 3


def test_deb_that_does_not_match_the_lock_is_refused(tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror)
    deb = mirror.debian / mirror.debs["zlib1g"].filename
    data = bytearray(deb.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, other content
    deb.write_bytes(data)
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode != 0
    assert f"SHA256 {hashlib.sha256(deb.read_bytes()).hexdigest()}, expected" in done.stderr
    assert "serves a different zlib1g 1.0-1 than the lock records" in said(done)
    assert "(3 tries)" in done.stderr and "Refused" in done.stderr
    assert not (cache / "debs" / deb.name).exists()
    assert not list((cache / "debian").glob("zlib1g_*"))


def test_update_lock_resolves_the_kernel_metapackage_from_the_signed_index(
        tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror, libc6=gone(mirror.debs["libc6"]))
    mirror.publish("trixie", "trixie", mid_sync=True)
    mirror.publish("stable", "trixie")
    done = run_setup(cache, mirror.url, lock, archive_key[1], "--update-lock")
    assert done.returncode == 0, done.stderr
    new = debian_packages.Lock.read(lock)
    assert new.codename == "trixie" and "suite stable" in new.origin
    assert new.for_wanted("libc6").version == "1.0-1"
    kernel = new.for_wanted("linux-image-riscv64")
    assert (kernel.name, kernel.sha256) == (KERNEL, mirror.debs["linux-image-riscv64"].sha256)
    assert "lock: libc6 1.0-1 (was libc6 0.9-1)" in done.stderr


def test_tree_of_an_older_setup_is_adopted_when_identical(tmp_path, mirror, cache, archive_key):
    lock = write_lock(tmp_path / "lock", mirror)
    assert run_setup(cache, mirror.url, lock, archive_key[1]).returncode == 0
    # As an older set-up left it: the tree, no .deb, no record of one.
    tree = cache / "debian" / "libc6_1.0-1"
    (cache / "debian" / "libc6_1.0-1.verified").unlink()
    (cache / "debs" / Path(mirror.debs["libc6"].filename).name).unlink()
    inode = tree.stat().st_ino
    done = run_setup(cache, mirror.url, lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert tree.stat().st_ino == inode  # kept in place: other runs may be using it
    assert (cache / "debian" / "libc6_1.0-1.verified").is_file()
    # A damaged one is replaced.
    (cache / "debian" / "libc6_1.0-1.verified").unlink()
    (tree / "usr/lib/riscv64-linux-gnu/libc.so.6").write_text("damaged\n")
    assert run_setup(cache, mirror.url, lock, archive_key[1]).returncode == 0
    assert (tree / "usr/lib/riscv64-linux-gnu/libc.so.6").read_text() == \
        "libc6 1.0-1 usr/lib/riscv64-linux-gnu/libc.so.6\n"
    # With the mirror out of reach, an unrecorded tree is used, with a warning.
    (cache / "debian" / "libc6_1.0-1.verified").unlink()
    (cache / "debs" / Path(mirror.debs["libc6"].filename).name).unlink()
    mirror.stop()
    done = run_setup(cache, loopback(1, "debian", port=free_port()), lock, archive_key[1])
    assert done.returncode == 0, done.stderr
    assert "WARNING: cannot download libc6 1.0-1 to verify the tree" in done.stderr
    assert "using it unverified" in said(done)


# ------------------------------------------------------------------ the mirror
def loopback(host: int, path: str, scheme: str = "http", port: int | None = None) -> str:
    """The address of a fake archive: loopback 127.0.0.HOST, never a real mirror."""
    where = f"127.0.0.{host}" + (f":{port}" if port is not None else "")
    return f"{scheme}://{where}/{path}"


def test_mirror_is_the_first_debian_main_source_of_the_host(tmp_path):
    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(f"# deb {loopback(2, 'debian')} bookworm main\n")
    (etc / "sources.list.d" / "a-nodesource.sources").write_text(
        f"Types: deb\nURIs: {loopback(3, 'node_20.x', 'https')}\nSuites: nodistro\nComponents: main\n")
    (etc / "sources.list.d" / "b-docker.list").write_text(
        f"deb [arch=amd64 signed-by=/k.gpg] {loopback(4, 'linux/debian', 'https')} bookworm stable\n")
    (etc / "sources.list.d" / "debian.sources").write_text(
        f"Types: deb-src\nURIs: {loopback(5, 'debian')}\nSuites: bookworm\nComponents: main\n\n"
        f"Types: deb\nURIs: {loopback(6, 'debian-security')}\nSuites: bookworm-security\n"
        "Components: main\n\n"
        f"Types: deb\nEnabled: no\nURIs: {loopback(7, 'debian')}\nSuites: bookworm\n"
        "Components: main\n\n"
        f"# the main archive\nTypes: deb\nURIs: {loopback(6, 'debian/')}\n"
        "Suites: bookworm bookworm-updates\nComponents: main contrib\n")
    assert debian_packages.debian_mirror({}, etc) == loopback(6, "debian")
    # A one-line source earlier in apt's order wins.
    (etc / "sources.list").write_text(f"deb [trusted=yes] {loopback(8, 'debian')} trixie main\n")
    assert debian_packages.debian_mirror({}, etc) == loopback(8, "debian")
    # The environment overrides the host.
    env = {"RVNVMM_DEBIAN_MIRROR": loopback(9, "debian/")}
    assert debian_packages.debian_mirror(env, etc) == loopback(9, "debian")


def test_no_debian_source_names_the_variable_to_set(tmp_path):
    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(f"deb {loopback(10, 'debian-security')} bookworm-security main\n")
    with pytest.raises(debian_packages.SetupError, match="set RVNVMM_DEBIAN_MIRROR"):
        debian_packages.debian_mirror({}, etc)
    with pytest.raises(debian_packages.SetupError, match="RVNVMM_DEBIAN_MIRROR=ftp://x"):
        debian_packages.debian_mirror({"RVNVMM_DEBIAN_MIRROR": "ftp://x"}, etc)


def test_back_off_doubles_up_to_its_cap():
    retry = debian_packages.Retry.from_env({"RVNVMM_FETCH_RETRIES": "5", "RVNVMM_FETCH_BACKOFF": "1.5",
                                            "RVNVMM_FETCH_BACKOFF_MAX": "5"})
    assert retry.attempts == 6
    assert [retry.delay(n) for n in range(1, 6)] == [1.5, 3, 5, 5, 5]
    with pytest.raises(debian_packages.SetupError, match="RVNVMM_FETCH_RETRIES='x' is not a number"):
        debian_packages.Retry.from_env({"RVNVMM_FETCH_RETRIES": "x"})


def test_lock_errors_name_the_line(tmp_path):
    path = tmp_path / "lock"
    path.write_text("codename trixie\narchitecture riscv64\ndeb libc6 1.0 12 nothex pool/main/l/x.deb\n")
    with pytest.raises(debian_packages.SetupError, match=r"lock:3: bad size or SHA256"):
        debian_packages.Lock.read(path)
    path.write_text("codename trixie\ndeb libc6 1.0 12 " + "0" * 64 + " ../etc/passwd\n")
    with pytest.raises(debian_packages.SetupError,
                       match=r"lock:2: \.\./etc/passwd is not a path under pool/"):
        debian_packages.Lock.read(path)


def test_closure_downloads_what_the_target_system_lacks_verified(tmp_path, mirror, cache, archive_key):
    """`closure` (scripts/build-rootfs.sh --mpi): the packages and the dependencies the target's
    dpkg status does not already satisfy, from the signed index, into the cache."""
    mirror.add("libmpi", "2.0-1", depends="libc6")
    mirror.add("mpi-common", "2.0-1")
    mirror.add("mpi-bin", "2.0-1", depends="libmpi, mpi-common, libc6 (>= 1.0)")
    mirror.publish("trixie", "trixie")
    status = tmp_path / "status"
    status.write_text("Package: libc6\nStatus: install ok installed\nVersion: 1.0-1\n"
                      "Architecture: riscv64\nMaintainer: x <x@localhost>\nDescription: x\n\n")
    lock = write_lock(tmp_path / "lock", mirror)
    env = {**os.environ, "RVNVMM_CACHE": str(cache), "RVNVMM_DEBIAN_MIRROR": mirror.url,
           "RVNVMM_DEBIAN_LOCK": str(lock), "RVNVMM_DEBIAN_KEYRING": str(archive_key[1]),
           "RVNVMM_FETCH_RETRIES": "2", "RVNVMM_FETCH_BACKOFF": "0.05"}
    script = ROOT / "scripts" / "debian_packages.py"
    done = subprocess.run([sys.executable, str(script), "closure", "--status", str(status), "mpi-bin"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = sorted(Path(line).name for line in done.stdout.split())
    assert got == ["libmpi_2.0-1_riscv64.deb", "mpi-bin_2.0-1_riscv64.deb", "mpi-common_2.0-1_riscv64.deb"]
    for line in done.stdout.split():
        data = Path(line).read_bytes()
        name = Path(line).name.split("_")[0]
        assert hashlib.sha256(data).hexdigest() == mirror.debs[name].sha256
    # A package the index lacks: a clear error, nothing printed.
    done = subprocess.run([sys.executable, str(script), "closure", "--status", str(status), "no-such"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert "apt cannot install no-such" in done.stderr
