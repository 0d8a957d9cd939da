#!/usr/bin/env python3
"""Debian's riscv64 packages for scripts/setup.sh: the mirror, the lock, verified downloads.

    debian_packages.py mirror                   # print the Debian mirror setup.sh uses
    debian_packages.py fetch PKG...             # verified, extracted packages: "PKG<TAB>DIR" lines
    debian_packages.py update-lock PKG...       # re-resolve the lock from a signed index
    debian_packages.py closure --status S PKG...  # verified .debs installing PKG on a system
                                                # whose dpkg status file is S needs (one per line)

The lock (scripts/debian-riscv64.lock) pins name, version, pool path, size and
SHA256 of every .deb, resolved from a signature-verified package index. With it
a set-up downloads straight from the mirror's pool/ and checks each .deb against
the lock: no index is needed, and a broken or mid-sync index does not matter.
Only when a locked .deb is gone from the mirror (or a package is not locked)
does it fall back to the index, which a private apt root refreshes and verifies:
the release's codename first; when that index is inconsistent, the suite alias
(stable, testing, ...) whose signed InRelease names the same codename; when no
list can be refreshed, the previously verified lists in the cache, with a
warning (apt's "old ones used instead").

Verified .debs stay in $CACHE/debs; each extracted tree $CACHE/debian/NAME_VERSION
has a NAME_VERSION.verified beside it naming the SHA256 of the .deb it came from,
so a tree counts as present only when it matches the lock.

Only the standard library: this runs before the project's venv exists.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import http.client
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ARCH = "riscv64"
DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
DEFAULT_LOCK = Path(__file__).resolve().parent / f"debian-{ARCH}.lock"
# Suite aliases tried, in order, when the codename's own index is inconsistent.
SUITE_ALIASES = ("stable", "testing", "oldstable", "unstable")
# Debian's release names and aliases: a host apt source with one of these suites
# (or NAME-updates, NAME-backports, ...) and component main serves Debian's archive.
DEBIAN_SUITES = {
    "buster", "bullseye", "bookworm", "trixie", "forky", "duke", "sid",
    "stable", "testing", "unstable", "oldstable", "oldoldstable", "experimental",
}  # fmt: skip
HTTP_TRANSIENT = {408, 425, 429}
HTTP_GONE = {404, 410}


def log(message: str) -> None:
    print(f"setup: {message}", file=sys.stderr, flush=True)


def warn(message: str) -> None:
    log(f"WARNING: {message}")


class SetupError(Exception):
    """A failure the user is told about in one paragraph; setup exits non-zero."""


# ------------------------------------------------------------------ settings
@dataclass(frozen=True)
class Retry:
    """How downloads retry transient failures (timeouts, 5xx, connection resets)."""

    attempts: int = 5  # tries in all, the first included
    first_delay: float = 2.0  # seconds before the second try; doubles, up to max_delay
    max_delay: float = 60.0
    timeout: float = 30.0  # seconds a connect or a read may take

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Retry:
        env = os.environ if env is None else env

        def number(key: str, default: float, minimum: float) -> float:
            text = env.get(key, "")
            if not text:
                return default
            try:
                value = float(text)
            except ValueError:
                raise SetupError(f"{key}={text!r} is not a number") from None
            if value < minimum:
                raise SetupError(f"{key}={text} is below {minimum:g}")
            return value

        return cls(
            attempts=1 + int(number("RVNVMM_FETCH_RETRIES", cls.attempts - 1, 0)),
            first_delay=number("RVNVMM_FETCH_BACKOFF", cls.first_delay, 0),
            max_delay=number("RVNVMM_FETCH_BACKOFF_MAX", cls.max_delay, 0),
            timeout=number("RVNVMM_FETCH_TIMEOUT", cls.timeout, 0.1),
        )

    def delay(self, failures: int) -> float:
        """Seconds to wait after the `failures`-th failed try."""
        return min(self.first_delay * 2 ** (failures - 1), self.max_delay)


# ------------------------------------------------------------------ the mirror
def _suite_is_debian_main(suite: str) -> bool:
    base, _, variant = suite.partition("-")
    return base in DEBIAN_SUITES and variant != "security"


def _usable_uri(uri: str) -> bool:
    scheme = urllib.parse.urlsplit(uri).scheme
    return scheme in ("http", "https", "file") and not uri.rstrip("/").endswith("-security")


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas, current, key = [], {}, None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, None
        elif line[0] in " \t" and key:
            current[key] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            key = key.strip().lower()
            current[key] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def _sources_from_deb822(text: str) -> list[tuple[str, list[str], list[str]]]:
    found = []
    for s in _deb822_stanzas(text):
        if "deb" not in s.get("types", "").split() or s.get("enabled", "yes").lower() == "no":
            continue
        suites, components = s.get("suites", "").split(), s.get("components", "").split()
        found += [(uri, suites, components) for uri in s.get("uris", "").split()]
    return found


def _sources_from_one_line(text: str) -> list[tuple[str, list[str], list[str]]]:
    found = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [arch=... signed-by=...]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2:
            found.append((words[0], [words[1]], words[2:]))
    return found


def host_sources(apt_etc: Path) -> list[tuple[str, list[str], list[str]]]:
    """The host's `deb` sources in apt's order: (URI, suites, components)."""
    files = [apt_etc / "sources.list"]
    parts = apt_etc / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    found = []
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        found += _sources_from_deb822(text) if path.suffix == ".sources" else _sources_from_one_line(text)
    return found


def debian_mirror(env: dict[str, str] | None = None, apt_etc: Path = Path("/etc/apt")) -> str:
    """RVNVMM_DEBIAN_MIRROR, else the first host apt source serving Debian's main archive."""
    env = os.environ if env is None else env
    override = env.get("RVNVMM_DEBIAN_MIRROR", "").strip()
    if override:
        if not _usable_uri(override):
            raise SetupError(
                f"RVNVMM_DEBIAN_MIRROR={override} is not an http://, https:// or file:// URL "
                "of a Debian archive"
            )
        return override.rstrip("/")
    for uri, suites, components in host_sources(apt_etc):
        if _usable_uri(uri) and "main" in components and any(map(_suite_is_debian_main, suites)):
            return uri.rstrip("/")
    raise SetupError(
        f"no Debian mirror found: none of the apt sources in {apt_etc} (sources.list, "
        "sources.list.d/*.list and *.sources) is an http, https or file source of Debian's "
        "main archive; set RVNVMM_DEBIAN_MIRROR to a Debian mirror's URL (the directory "
        "holding dists/ and pool/)"
    )


# ------------------------------------------------------------------ downloads
class FetchError(Exception):
    """A download that did not succeed; `gone` means the server says the file does not exist."""

    def __init__(self, url: str, detail: str, gone: bool = False, mismatch: bool = False):
        super().__init__(f"{url}: {detail}")
        self.url, self.detail, self.gone, self.mismatch = url, detail, gone, mismatch


def download(url: str, dest: Path, retry: Retry, size: int | None = None, sha256: str | None = None) -> None:
    """Fetch `url` to `dest` (atomically), checking size and SHA256 when given.

    Timeouts, connection failures, 5xx answers, short reads and a wrong size or
    hash are retried with exponential back-off; 404 and 410 are final.
    """
    part = dest.with_name(dest.name + ".part")
    failures = 0
    mismatch = False  # the last try got a whole answer, but not the file expected
    while True:
        mismatch = False
        try:
            request = urllib.request.Request(url, headers={"User-Agent": "rvnvmm-setup"})
            digest, length = hashlib.sha256(), 0
            with urllib.request.urlopen(request, timeout=retry.timeout) as answer, open(part, "wb") as out:
                while chunk := answer.read(1 << 20):
                    digest.update(chunk)
                    length += len(chunk)
                    out.write(chunk)
            if size is not None and length != size:
                raise _Transient(f"got {length} bytes, expected {size}")
            if sha256 is not None and digest.hexdigest() != sha256:
                raise _Transient(f"SHA256 {digest.hexdigest()}, expected {sha256}")
            os.replace(part, dest)
            return
        except urllib.error.HTTPError as e:
            part.unlink(missing_ok=True)
            if e.code in HTTP_GONE:
                raise FetchError(url, f"HTTP {e.code} {e.reason}", gone=True) from None
            if e.code not in HTTP_TRANSIENT and e.code < 500:
                raise FetchError(url, f"HTTP {e.code} {e.reason}") from None
            reason = f"HTTP {e.code} {e.reason}"
        except urllib.error.URLError as e:
            part.unlink(missing_ok=True)
            if isinstance(e.reason, FileNotFoundError):
                raise FetchError(url, "no such file", gone=True) from None
            reason = str(e.reason)
        except _Transient as e:
            part.unlink(missing_ok=True)
            reason, mismatch = str(e), True
        except (OSError, http.client.HTTPException, socket.timeout) as e:
            part.unlink(missing_ok=True)
            reason = str(e) or type(e).__name__
        failures += 1
        if failures >= retry.attempts:
            tries = "1 try" if failures == 1 else f"{failures} tries"
            raise FetchError(url, f"{reason} ({tries})", mismatch=mismatch)
        pause = retry.delay(failures)
        log(f"{url}: {reason}; retrying in {pause:g} s")
        time.sleep(pause)


class _Transient(Exception):
    pass


# ------------------------------------------------------------------ the lock
@dataclass(frozen=True)
class Deb:
    """One .deb: what the lock pins, or what a verified index lists."""

    name: str
    version: str
    size: int
    sha256: str
    filename: str  # path under the mirror, pool/...
    wanted: str  # the package asked for (a metapackage resolves to another name)

    @property
    def tree_name(self) -> str:
        # Like Debian's .deb file names, spell an epoch colon as %3a.
        return f"{self.name}_{self.version.replace(':', '%3a')}"

    def line(self) -> str:
        fields = [self.name, self.version, str(self.size), self.sha256, self.filename]
        return " ".join(fields + ([self.wanted] if self.wanted != self.name else []))


@dataclass
class Lock:
    codename: str
    debs: list[Deb] = field(default_factory=list)
    origin: str = ""  # where it was resolved from, for people reading it

    def for_wanted(self, wanted: str) -> Deb | None:
        return next((d for d in self.debs if d.wanted == wanted), None)

    @classmethod
    def read(cls, path: Path) -> Lock:
        try:
            text = path.read_text()
        except OSError as e:
            raise SetupError(f"cannot read the package lock {path}: {e.strerror}") from None
        lock, codename = cls(codename=""), None
        for number, raw in enumerate(text.splitlines(), 1):
            words = raw.split("#", 1)[0].split()
            if not words:
                continue
            where = f"{path}:{number}"
            if words[0] == "codename" and len(words) == 2:
                codename = words[1]
            elif words[0] == "architecture" and len(words) == 2:
                if words[1] != ARCH:
                    raise SetupError(f"{where}: architecture {words[1]}, expected {ARCH}")
            elif words[0] == "origin":
                lock.origin = " ".join(words[1:])
            elif words[0] == "deb" and len(words) in (6, 7):
                name, version, size, sha256, filename = words[1:6]
                if not size.isdigit() or not re.fullmatch(r"[0-9a-f]{64}", sha256):
                    raise SetupError(f"{where}: bad size or SHA256 in {raw.strip()!r}")
                if not filename.startswith("pool/") or ".." in filename.split("/"):
                    raise SetupError(f"{where}: {filename} is not a path under pool/")
                wanted = words[6] if len(words) == 7 else name
                lock.debs.append(Deb(name, version, int(size), sha256, filename, wanted))
            else:
                raise SetupError(f"{where}: cannot parse {raw.strip()!r} (see the comment at its top)")
        if not codename:
            raise SetupError(f"{path}: no 'codename' line")
        lock.codename = codename
        return lock

    def write(self, path: Path) -> None:
        lines = [
            f"# Debian {ARCH} packages of scripts/setup.sh, pinned so that every machine gets the",
            "# same guest binaries (and so the same instruction counts), and so that set-up needs",
            "# no package index. Refresh with `scripts/setup.sh --update-lock` and commit the result.",
            "# deb NAME VERSION SIZE SHA256 POOL-PATH [PACKAGE-ASKED-FOR]",
            f"codename {self.codename}",
            f"architecture {ARCH}",
            f"origin {self.origin}",
        ] + [f"deb {d.line()}" for d in sorted(self.debs, key=lambda d: d.wanted)]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, path)


# ------------------------------------------------------------------ the index
class PrivateApt:
    """apt-get/apt-cache on one suite of the mirror in a private root under the cache.

    The host's apt configuration and sources are never read or touched; apt
    verifies the InRelease signature against `keyring` and every index file
    against it, and keeps a suite's last verified lists when a refresh fails.
    """

    def __init__(self, cache: Path, mirror: str, suite: str, keyring: str, retry: Retry):
        self.root, self.mirror, self.suite = cache / f"apt-{suite}-{ARCH}", mirror, suite
        self.keyring, self.retry = keyring, retry

    def _options(self) -> list[str]:
        r = self.root
        options = {
            "Dir": r,
            "Dir::State": r / "var/lib/apt",
            "Dir::State::status": r / "var/lib/dpkg/status",
            "Dir::Cache": r / "var/cache/apt",
            "Dir::Etc": r / "etc/apt",
            "Dir::Etc::sourcelist": "/dev/null",
            "Dir::Etc::sourceparts": r / "etc/apt/sources.list.d",
            "Dir::Etc::preferencesparts": r / "etc/apt/preferences.d",
            "Dir::Etc::parts": r / "etc/apt/apt.conf.d",
            "APT::Architecture": ARCH,
            "APT::Architectures": ARCH,
            "Debug::NoLocking": "1",
            # The lists land in the cache, which the _apt user may not be able to write.
            "APT::Sandbox::User": _user_name(),
            "Acquire::Retries": str(self.retry.attempts - 1),
            "Acquire::Retries::Delay::Maximum": str(int(self.retry.max_delay)),
            "Acquire::http::Timeout": str(max(1, int(self.retry.timeout))),
            "Acquire::https::Timeout": str(max(1, int(self.retry.timeout))),
            "Acquire::Languages": "none",
        }
        for target in ("DEP-11", "DEP-11-icons", "DEP-11-icons-hidpi", "DEP-11-icons-small", "CNF"):
            options[f"Acquire::IndexTargets::deb::{target}::DefaultEnabled"] = "false"
        return [arg for key, value in options.items() for arg in ("-o", f"{key}={value}")]

    def _apt(self, tool: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [tool, *self._options(), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
        )

    def _prepare(self) -> None:
        for d in ("etc/apt/sources.list.d", "etc/apt/preferences.d", "etc/apt/apt.conf.d",
                  "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/lib/dpkg"):  # fmt: skip
            (self.root / d).mkdir(parents=True, exist_ok=True)
        status = self.root / "var/lib/dpkg/status"
        if not status.exists():
            status.touch()
        sources = self.root / "etc/apt/sources.list.d/debian.sources"
        text = (
            f"Types: deb\nURIs: {self.mirror}\nSuites: {self.suite}\nComponents: main\n"
            f"Architectures: {ARCH}\nSigned-By: {self.keyring}\n"
        )
        if not sources.exists() or sources.read_text() != text:
            sources.write_text(text)

    def update(self) -> list[str]:
        """Refresh the lists; returns apt's error lines (empty when it succeeded)."""
        self._prepare()
        log(f"refreshing the package index of {self.suite} ({ARCH}) from {self.mirror}")
        done = self._apt("apt-get", "-q", "update")
        if done.returncode == 0:
            return []
        # apt's E: lines say what failed (its generic "Some index files failed to
        # download" closing line says nothing more).
        errors = [line.strip() for line in done.stdout.splitlines()
                  if line.startswith(("E:", "W:")) and "Some index files failed" not in line]  # fmt: skip
        return errors or [f"apt-get update exited with status {done.returncode}"]

    def verified_release(self) -> tuple[str, str] | None:
        """(suite, codename) of the verified lists apt holds for this source, if any."""
        if not (self.root / "etc/apt/sources.list.d/debian.sources").exists():
            return None
        lines = self._apt("apt-cache", "policy").stdout.splitlines()
        for here, following in zip(lines, lines[1:]):
            if re.search(rf" {re.escape(self.suite)}/main {ARCH} Packages$", here):
                fields = dict(f.split("=", 1) for f in following.split(None, 1)[-1].split(",") if "=" in f)
                return fields.get("a", ""), fields.get("n", "")
        return None

    def release_date(self) -> str:
        for path in (self.root / "var/lib/apt/lists").glob(f"*_dists_{self.suite}_InRelease"):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("Date:"):
                    return line.split(":", 1)[1].strip()
        return "an unknown date"

    def deb(self, name: str, wanted: str) -> Deb | None:
        record = {}
        for line in self._apt("apt-cache", "show", "--no-all-versions", name).stdout.splitlines():
            key, sep, value = line.partition(": ")
            if sep and key in ("Package", "Version", "Filename", "Size", "SHA256") and key not in record:
                record[key] = value.strip()
        if record.get("Package") != name or len(record) != 5:
            return None
        return Deb(name, record["Version"], int(record["Size"]), record["SHA256"], record["Filename"], wanted)

    def install_set(self, status: Path, packages: list[str]) -> list[tuple[str, str]]:
        """(name, version) of what `apt-get install packages` would unpack on a system whose
        dpkg status file is `status` (no recommends): the packages and the dependencies that
        system lacks or holds in an older version."""
        done = self._apt("apt-get", "-s", "-q", "--no-install-recommends",
                         "-o", f"Dir::State::status={status}", "install", *packages)  # fmt: skip
        if done.returncode != 0:
            errors = [line.strip() for line in done.stdout.splitlines() if line.startswith("E:")]
            raise SetupError(f"apt cannot install {' '.join(packages)} there: " + "; ".join(errors or [done.stdout[-500:]]))
        # "Inst NAME [OLD] (VERSION Debian:...)"
        return re.findall(r"^Inst (\S+) (?:\[[^]]*\] )?\((\S+) ", done.stdout, re.M)

    def resolve(self, wanted: str) -> Deb | None:
        """The candidate of `wanted`; a kernel metapackage (linux-image-ARCH) gives its kernel."""
        if wanted == f"linux-image-{ARCH}":
            text = self._apt("apt-cache", "depends", wanted).stdout
            kernel = re.search(rf"^\s*Depends: (linux-image-[0-9]\S*-{ARCH})\b", text, re.M)
            return self.deb(kernel.group(1), wanted) if kernel else None
        return self.deb(wanted, wanted)


def _user_name() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


class Index:
    """A signature-verified package index of the codename, found as the docstring at the top says."""

    def __init__(self, cache: Path, mirror: str, codename: str, keyring: str, retry: Retry):
        self.cache, self.mirror, self.codename = cache, mirror, codename
        self.keyring, self.retry = keyring, retry
        self.apt: PrivateApt | None = None
        self.failures: list[str] = []  # what was tried, for the error paragraph
        self.absent_aliases: list[str] = []

    def _apt(self, suite: str) -> PrivateApt:
        return PrivateApt(self.cache, self.mirror, suite, self.keyring, self.retry)

    def _fresh(self, apt: PrivateApt) -> bool:
        errors = apt.update()
        release = apt.verified_release()
        if not errors and release and release[1] == self.codename:
            return True
        if not errors:
            errors = [f"its signed InRelease names codename {release[1] if release else 'nothing'}"]
        self.failures += [f"{apt.suite}: {e}" for e in errors]
        return False

    def get(self) -> PrivateApt:
        if self.apt is not None:
            return self.apt
        primary = self._apt(self.codename)
        if self._fresh(primary):
            self.apt = primary
            return primary
        unreachable = all(_unreachable(f) for f in self.failures)
        tried = [primary]
        for alias in () if unreachable else SUITE_ALIASES:
            claimed = self._claimed_codename(alias)
            if claimed != self.codename:
                continue
            apt = self._apt(alias)
            tried.append(apt)
            if self._fresh(apt):
                warn(
                    f"the index of {self.codename} on {self.mirror} cannot be used ({self.failures[0]}); "
                    f"using suite {alias}, whose signed InRelease has codename {self.codename}"
                )
                self.apt = apt
                return apt
        tried += [self._apt(a) for a in SUITE_ALIASES if self._apt(a).root.is_dir() and a not in
                  {t.suite for t in tried}]  # fmt: skip
        for apt in tried:
            release = apt.verified_release()
            if release and release[1] == self.codename:
                warn(
                    f"the package index could not be refreshed; using the previously verified lists "
                    f"of {apt.suite} dated {apt.release_date()} (apt's 'old ones used instead')"
                )
                self.apt = apt
                return apt
        if self.absent_aliases:
            self.failures.append(f"{', '.join(self.absent_aliases)}: no InRelease on this mirror")
        raise IndexUnavailable(self.failures)

    def _claimed_codename(self, alias: str) -> str | None:
        """The Codename an alias's InRelease claims, unverified: apt verifies it after."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "InRelease"
            try:
                download(f"{self.mirror}/dists/{alias}/InRelease", path, self.retry)
            except FetchError as e:
                if e.gone:
                    self.absent_aliases.append(alias)
                else:
                    self.failures.append(f"{alias}: {e}")
                return None
            found = re.search(r"^Codename: *(\S+)", path.read_text(errors="replace"), re.M)
        return found.group(1) if found else None


def _unreachable(apt_error: str) -> bool:
    return bool(re.search(r"Could not (connect|resolve)|Temporary failure resolving|timed out|"
                          r"Connection (refused|reset|failed)|Unable to connect", apt_error))  # fmt: skip


class IndexUnavailable(Exception):
    def __init__(self, failures: list[str]):
        super().__init__("; ".join(failures))
        self.failures = failures


# ------------------------------------------------------------------ the cache
class Cache:
    """Verified .debs ($CACHE/debs) and their extracted trees ($CACHE/debian)."""

    def __init__(self, root: Path):
        self.root, self.debs, self.trees = root, root / "debs", root / "debian"

    def tree(self, deb: Deb) -> Path:
        return self.trees / deb.tree_name

    def _stamp(self, deb: Deb) -> Path:
        return self.trees / f"{deb.tree_name}.verified"

    def deb_file(self, deb: Deb) -> Path:
        return self.debs / Path(deb.filename).name

    def has_tree(self, deb: Deb) -> bool:
        try:
            recorded = self._stamp(deb).read_text().split()
        except OSError:
            return False
        return recorded[:1] == [deb.sha256] and self.tree(deb).is_dir()

    def has_deb(self, deb: Deb) -> bool:
        path = self.deb_file(deb)
        return path.is_file() and path.stat().st_size == deb.size and _sha256(path) == deb.sha256

    def install(self, deb: Deb) -> None:
        """Extract the verified .deb; adopt an identical tree left by an older set-up."""
        self.trees.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{deb.name}.", dir=self.trees))
        try:
            fresh = tmp / "root"
            done = subprocess.run(["dpkg-deb", "-x", str(self.deb_file(deb)), str(fresh)],
                                  stderr=subprocess.PIPE, text=True)  # fmt: skip
            if done.returncode != 0:
                raise SetupError(f"dpkg-deb cannot extract {self.deb_file(deb)}: {done.stderr.strip()}")
            tree = self.tree(deb)
            if tree.is_dir() and same_tree(tree, fresh):
                pass  # keep the tree in place: other runs may be reading it
            else:
                if tree.exists():
                    tree.rename(tmp / "old")
                fresh.rename(tree)  # atomic: the tree exists only once complete
            stamp = self._stamp(deb).with_suffix(".tmp")
            stamp.write_text(f"{deb.sha256} {Path(deb.filename).name}\n")
            stamp.replace(self._stamp(deb))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _paragraph(head: str, details: list[str], text: str) -> str:
    """An error: its first line, the failures verbatim, then prose wrapped for a terminal."""
    body = textwrap.fill(text, width=92, initial_indent="  ", subsequent_indent="  ")
    return "\n".join([head, *(f"    {d}" for d in dict.fromkeys(details)), body])


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def same_tree(a: Path, b: Path) -> bool:
    """Whether two directory trees hold the same names, types, modes, links and contents."""
    for (dir_a, subdirs_a, files_a), (dir_b, subdirs_b, files_b) in zip(os.walk(a), os.walk(b)):
        subdirs_a.sort()
        subdirs_b.sort()
        if Path(dir_a).relative_to(a) != Path(dir_b).relative_to(b) or subdirs_a != subdirs_b:
            return False
        if sorted(files_a) != sorted(files_b):
            return False
        for name in subdirs_a + files_a:
            pa, pb = Path(dir_a, name), Path(dir_b, name)
            sa, sb = pa.lstat(), pb.lstat()
            if stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode) or sa.st_mode != sb.st_mode:
                return False
            if stat.S_ISLNK(sa.st_mode):
                if os.readlink(pa) != os.readlink(pb):
                    return False
            elif stat.S_ISREG(sa.st_mode) and not filecmp.cmp(pa, pb, shallow=False):
                return False
    return True


# ------------------------------------------------------------------ set-up
class Setup:
    """What `fetch` and `update-lock` do, against one cache and one lock."""

    def __init__(self, cache: Cache, lock: Lock, lock_path: Path, keyring: str, retry: Retry):
        self.cache, self.lock, self.lock_path = cache, lock, lock_path
        self.keyring, self.retry = keyring, retry
        self._mirror: str | None = None
        self._index: Index | None = None

    @property
    def mirror(self) -> str:
        # Found only when something must be downloaded: a complete cache needs no mirror.
        if self._mirror is None:
            self._mirror = debian_mirror()
            log(f"Debian mirror: {self._mirror}")
        return self._mirror

    def index(self) -> PrivateApt:
        if self._index is None:
            if not os.access(self.keyring, os.R_OK):
                raise SetupError(f"keyring {self.keyring} missing (install debian-archive-keyring)")
            self._index = Index(self.cache.root, self.mirror, self.lock.codename, self.keyring, self.retry)
        return self._index.get()

    def _download(self, deb: Deb) -> None:
        url = f"{self.mirror}/{deb.filename}"
        self.cache.debs.mkdir(parents=True, exist_ok=True)
        log(f"downloading {deb.name} {deb.version} ({_size(deb.size)})")
        download(url, self.cache.deb_file(deb), self.retry, deb.size, deb.sha256)

    def _ensure(self, deb: Deb) -> str:
        """Make the tree of `deb` present and verified; returns how ('have', ...)."""
        if self.cache.has_tree(deb):
            return "have"
        if not self.cache.has_deb(deb):
            try:
                self._download(deb)
            except FetchError:
                if self.cache.tree(deb).is_dir():
                    # An older set-up's tree, extracted from a verified index but with no
                    # record of the .deb: use it rather than fail while the mirror cannot help.
                    warn(
                        f"cannot download {deb.name} {deb.version} to verify the tree an older "
                        f"set-up left in {self.cache.tree(deb)}; using it unverified"
                    )
                    return "unverified"
                raise
        self.cache.install(deb)
        return "installed"

    def fetch(self, wanted: list[str]) -> dict[str, Path]:
        trees: dict[str, Path] = {}
        fallback: list[tuple[str, str]] = []  # (wanted, why)
        for name in wanted:
            deb = self.lock.for_wanted(name)
            if deb is None:
                fallback.append((name, f"{name} is not in the lock {self.lock_path}"))
                continue
            try:
                how = self._ensure(deb)
            except FetchError as e:
                if not e.gone:
                    raise SetupError(self._unreachable_message(deb, e)) from None
                why = f"the lock pins {deb.name} {deb.version}, which the mirror no longer has"
                fallback.append((name, why))
                continue
            if how == "have":
                log(f"have {deb.name} {deb.version}")
            trees[name] = self.cache.tree(deb)
        for name, why in fallback:
            try:
                apt = self.index()
            except IndexUnavailable as e:
                raise SetupError(self._no_index_message(why, e.failures)) from None
            deb = apt.resolve(name)
            if deb is None:
                raise SetupError(f"{why}, and the package index of {apt.suite} has no {name} for {ARCH}")
            warn(
                f"{why}: using {deb.name} {deb.version} from the signed index of {apt.suite}. Guest "
                f"binaries then differ from the lock's; refresh the lock with `scripts/setup.sh "
                f"--update-lock` (and commit it)"
            )
            try:
                self._ensure(deb)
            except FetchError as e:
                raise SetupError(self._unreachable_message(deb, e)) from None
            trees[name] = self.cache.tree(deb)
        return trees

    def closure(self, status: Path, wanted: list[str]) -> list[Path]:
        """Verified .debs (in the cache) of what installing `wanted` on a system with dpkg
        status `status` unpacks, from the signed index (not the lock: these go into a disk
        image, not into the sysroot)."""
        try:
            apt = self.index()
        except IndexUnavailable as e:
            raise SetupError(self._no_index_message(f"installing {' '.join(wanted)}", e.failures)) from None
        debs = []
        for name, version in apt.install_set(status, wanted):
            deb = apt.deb(name, name)
            if deb is None or deb.version != version:
                raise SetupError(f"the package index of {apt.suite} has no {name} {version} for {ARCH}")
            if not self.cache.has_deb(deb):
                try:
                    self._download(deb)
                except FetchError as e:
                    raise SetupError(self._unreachable_message(deb, e)) from None
            debs.append(self.cache.deb_file(deb))
        return debs

    def update_lock(self, wanted: list[str]) -> None:
        try:
            apt = self.index()
        except IndexUnavailable as e:
            why = "refreshing the lock needs the package index"
            raise SetupError(self._no_index_message(why, e.failures)) from None
        debs = []
        for name in wanted:
            deb = apt.resolve(name)
            if deb is None:
                raise SetupError(f"the package index of {apt.suite} has no {name} for {ARCH}")
            debs.append(deb)
        origin = (f"the signed index of suite {apt.suite} (codename {self.lock.codename}), "
                  f"dated {apt.release_date()}")
        new = Lock(self.lock.codename, debs, origin)
        old = {d.wanted: d for d in self.lock.debs}
        for deb in debs:
            before = old.get(deb.wanted)
            if before is None or (before.name, before.version) != (deb.name, deb.version):
                was = f"{before.name} {before.version}" if before else "not locked"
                log(f"lock: {deb.name} {deb.version} (was {was})")
        new.write(self.lock_path)
        self.lock = new
        log(f"wrote {self.lock_path} from {origin}")

    def _unreachable_message(self, deb: Deb, e: FetchError) -> str:
        if e.mismatch:
            return _paragraph(
                f"the Debian mirror {self.mirror} serves a different {deb.name} {deb.version} than the "
                f"{'lock' if self.lock.for_wanted(deb.wanted) == deb else 'signed index'} records:",
                [str(e)],
                "Refused: set-up installs only .debs whose size and SHA256 match. A mirror in the middle "
                "of a sync can do this for a while; a lasting difference means a damaged mirror (or a lock "
                "edited by hand). Run scripts/setup.sh again later, or set RVNVMM_DEBIAN_MIRROR to another "
                "Debian mirror.",
            )
        return _paragraph(
            f"cannot download {deb.name} {deb.version} from the Debian mirror {self.mirror}:",
            [str(e)],
            f"The cache {self.cache.root} does not hold it yet. This is the state of the mirror (or of "
            f"the network on the way to it), not a fault of this machine. Run scripts/setup.sh "
            f"again later, or set RVNVMM_DEBIAN_MIRROR to another Debian mirror.",
        )

    def _no_index_message(self, why: str, failures: list[str]) -> str:
        return _paragraph(
            f"cannot set up Debian's {ARCH} packages: {why}, so set-up needs the package index of "
            f"{self.lock.codename}, and it could not be refreshed from {self.mirror}:",
            failures,
            f"The cache {self.cache.root} holds no previously verified index of {self.lock.codename} "
            f"either. This is the state of the mirror (a sync in progress, or unreachable), not a fault "
            f"of this machine. Run scripts/setup.sh again later (a mirror sync usually completes within "
            f"hours), or set RVNVMM_DEBIAN_MIRROR to another Debian mirror.",
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("mirror", "fetch", "update-lock", "closure"))
    parser.add_argument("packages", nargs="*", help="packages wanted (a kernel metapackage gives its kernel)")
    parser.add_argument("--codename", help="the Debian release wanted (checked against the lock)")
    parser.add_argument("--status", type=Path,
                        help="closure: the dpkg status file of the system the packages go onto")  # fmt: skip
    args = parser.parse_intermixed_args(argv)
    try:
        if args.command == "mirror":
            print(debian_mirror())
            return 0
        cache = Path(os.environ.get("RVNVMM_CACHE") or Path.home() / ".cache/rvnvmm")
        lock_path = Path(os.environ.get("RVNVMM_DEBIAN_LOCK") or DEFAULT_LOCK)
        keyring = os.environ.get("RVNVMM_DEBIAN_KEYRING") or DEFAULT_KEYRING
        if args.command == "update-lock" and not lock_path.exists():
            if not args.codename:
                raise SetupError(f"{lock_path} does not exist: give --codename for a new lock")
            lock = Lock(args.codename)
        else:
            lock = Lock.read(lock_path)
        if args.codename and lock.codename != args.codename:
            if args.command != "update-lock":
                raise SetupError(
                    f"the lock {lock_path} is for Debian {lock.codename}, set-up wants {args.codename}: "
                    "run scripts/setup.sh --update-lock"
                )
            lock = Lock(args.codename, lock.debs)
        setup = Setup(Cache(cache), lock, lock_path, keyring, Retry.from_env())
        if args.command == "closure":
            if args.status is None:
                raise SetupError("closure needs --status FILE (a dpkg status file)")
            for deb in setup.closure(args.status, args.packages):
                print(deb)
            return 0
        if args.command == "update-lock":
            setup.update_lock(args.packages)
        for wanted, tree in setup.fetch(args.packages).items():
            print(f"{wanted}\t{tree}")
        return 0
    except SetupError as e:
        print(f"setup: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
