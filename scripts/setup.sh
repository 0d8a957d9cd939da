#!/usr/bin/env bash
# Prepare a machine for rvnvmm development and differential testing.
#
# Idempotent: safe to re-run.  Run as root on a fresh Debian 12 machine.
#
#  1. installs the host tools (riscv64 cross compilers, qemu-user, ...) with
#     apt-get, only those that are missing;
#  2. makes sure a Rust toolchain exists (rustup, minimal profile, if cargo
#     is not on PATH);
#  3. fetches riscv64 packages from Debian trixie through a PRIVATE apt root
#     (the system's apt sources are never touched), extracts them into the
#     cache and assembles a merged sysroot;
#  4. writes $CACHE/paths.env with RVNVMM_BUSYBOX, RVNVMM_SYSROOT, and the
#     full system's RVNVMM_OPENSBI, RVNVMM_KERNEL, RVNVMM_MODULES;
#  5. installs the experiment workflow (python/: rvnvmm-sweep, rvnvmm-report)
#     and its test dependencies into the venv $CACHE/venv.
#
# Environment:
#   RVNVMM_CACHE      cache directory (default: $HOME/.cache/rvnvmm)
#   RVNVMM_SKIP_HOST  if set to 1, skip steps 1 and 2 (host tools)
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

CACHE="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}"
SUITE=trixie
ARCH=riscv64
MIRROR=http://deb.debian.org/debian
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
APTROOT="$CACHE/apt-$SUITE-$ARCH"
DEBDIR="$CACHE/debian"
SYSROOT="$CACHE/sysroot-$SUITE-$ARCH"
# The workload suite (guest/workloads, docs/workloads.md) runs Debian's own
# riscv64 xz, bzip2, gzip, sqlite3, lua5.4, gawk and mawk from the sysroot
# ($RVNVMM_SYSROOT/usr/bin/NAME), with their shared libraries beside libc.
WORKLOAD_PACKAGES=(xz-utils bzip2 gzip sqlite3 lua5.4 gawk mawk
                   liblzma5 libbz2-1.0 libsqlite3-0 zlib1g libreadline8t64
                   readline-common libtinfo6 libgmp10 libmpfr6 libsigsegv2)
# Full system (rvnvmm boot): OpenSBI's fw_dynamic and Debian's riscv64
# kernel with its modules. The kernel's package is named after its ABI, so
# it is found through the linux-image-riscv64 metapackage below.
SYSTEM_PACKAGES=(opensbi linux-image-riscv64)
PACKAGES=(busybox-static libc6 libstdc++6 libgcc-s1 "${WORKLOAD_PACKAGES[@]}" "${SYSTEM_PACKAGES[@]}")
SYSROOT_PACKAGES=(libc6 libgcc-s1 libstdc++6 "${WORKLOAD_PACKAGES[@]}")

# ---------------------------------------------------------------- host tools
HOST_PACKAGES=(gcc-riscv64-linux-gnu g++-riscv64-linux-gnu qemu-user
               debian-archive-keyring make curl ca-certificates
               python3-venv chromium device-tree-compiler
               qemu-system-misc cpio)

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "need root to run: $*"
    fi
}

install_host_packages() {
    local missing=() p
    for p in "${HOST_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "host packages present"
        return
    fi
    log "installing host packages: ${missing[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

ensure_rust() {
    if command -v cargo >/dev/null 2>&1; then
        log "rust present: $(cargo --version)"
        return
    fi
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
        log "rust present in ~/.cargo/bin (add it to PATH): $(cargo --version)"
        return
    fi
    log "installing rust via rustup"
    if curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
            | sh -s -- -y --profile minimal --component clippy,rustfmt; then
        export PATH="$HOME/.cargo/bin:$PATH"
        rustup component add clippy rustfmt
        log "rust installed: $(cargo --version)"
    else
        # Not fatal: the guest sysroot below does not need Rust.
        log "WARNING: rustup installation failed; install a Rust toolchain by other means"
    fi
}

if [ "${RVNVMM_SKIP_HOST:-0}" != 1 ]; then
    install_host_packages
    ensure_rust
fi

command -v apt-get >/dev/null || die "apt-get not found"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
[ -r "$KEYRING" ] || die "$KEYRING missing (install debian-archive-keyring)"

# ------------------------------------------------------- private apt root
mkdir -p "$APTROOT/etc/apt/sources.list.d" \
         "$APTROOT/etc/apt/preferences.d" \
         "$APTROOT/etc/apt/apt.conf.d" \
         "$APTROOT/var/lib/apt/lists/partial" \
         "$APTROOT/var/cache/apt/archives/partial" \
         "$APTROOT/var/lib/dpkg" \
         "$DEBDIR"
[ -e "$APTROOT/var/lib/dpkg/status" ] || : > "$APTROOT/var/lib/dpkg/status"

SOURCES="$APTROOT/etc/apt/sources.list.d/debian.sources"
NEW_SOURCES="Types: deb
URIs: $MIRROR
Suites: $SUITE
Components: main
Architectures: $ARCH
Signed-By: $KEYRING"
if [ ! -f "$SOURCES" ] || [ "$(cat "$SOURCES")" != "$NEW_SOURCES" ]; then
    printf '%s\n' "$NEW_SOURCES" > "$SOURCES"
    rm -f "$APTROOT/.last-update"
fi

APT_OPTS=(
    -o "Dir=$APTROOT"
    -o "Dir::State=$APTROOT/var/lib/apt"
    -o "Dir::State::status=$APTROOT/var/lib/dpkg/status"
    -o "Dir::Cache=$APTROOT/var/cache/apt"
    -o "Dir::Etc=$APTROOT/etc/apt"
    -o "Dir::Etc::sourcelist=/dev/null"
    -o "Dir::Etc::sourceparts=$APTROOT/etc/apt/sources.list.d"
    -o "Dir::Etc::preferencesparts=$APTROOT/etc/apt/preferences.d"
    -o "Dir::Etc::parts=$APTROOT/etc/apt/apt.conf.d"
    -o "APT::Architecture=$ARCH"
    -o "APT::Architectures=$ARCH"
    -o "Debug::NoLocking=1"
    # Downloads land in the cache, which the _apt user may not be able to
    # write to: do not drop privileges.
    -o "APT::Sandbox::User=$(id -un)"
    # Only the Packages indices are needed (skip appstream metadata etc.).
    -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::CNF::DefaultEnabled=false"
    -o "Acquire::Languages=none"
)

papt_get() { apt-get "${APT_OPTS[@]}" "$@"; }
papt_cache() { apt-cache "${APT_OPTS[@]}" "$@"; }

# Refresh the package lists at most once a day.
STAMP="$APTROOT/.last-update"
need_update=1
if [ -f "$STAMP" ] && [ -n "$(find "$STAMP" -mmin -1440 2>/dev/null)" ] \
   && compgen -G "$APTROOT/var/lib/apt/lists/*_Packages*" >/dev/null; then
    need_update=0
fi
if [ "$need_update" = 1 ]; then
    log "updating private apt lists ($SUITE/$ARCH)"
    papt_get -q update >&2 || die "apt-get update in the private root failed"
    touch "$STAMP"
else
    log "private apt lists are fresh (< 1 day)"
fi

# Candidate versions of all packages, from one apt-cache call.
declare -A VERSIONS
while read -r k v; do
    case "$k" in
        Package:) cur="$v" ;;
        Version:) [ -n "${VERSIONS[$cur]:-}" ] || VERSIONS[$cur]="$v" ;;
    esac
done < <(papt_cache show --no-all-versions "${PACKAGES[@]}" 2>/dev/null || true)

# pkg_version PKG -> candidate version
pkg_version() {
    [ -n "${VERSIONS[$1]:-}" ] || die "package $1 not found in $SUITE/$ARCH"
    printf '%s\n' "${VERSIONS[$1]}"
}

# fetch PKG -> prints extracted directory
fetch() {
    local pkg="$1" ver dir tmp deb
    ver="$(pkg_version "$pkg")"
    # Like Debian's .deb file names, spell an epoch colon as %3a.
    dir="$DEBDIR/${pkg}_${ver//:/%3a}"
    if [ -d "$dir" ]; then
        log "have $pkg $ver"
        printf '%s\n' "$dir"
        return
    fi
    log "downloading $pkg $ver"
    tmp="$(mktemp -d "$DEBDIR/.tmp-$pkg.XXXXXX")"
    ( cd "$tmp" && papt_get -q download "$pkg=$ver" >&2 ) \
        || { rm -rf "$tmp"; die "download of $pkg failed"; }
    deb="$(find "$tmp" -maxdepth 1 -name '*.deb' | head -n1)"
    [ -n "$deb" ] || { rm -rf "$tmp"; die "no .deb downloaded for $pkg"; }
    mkdir "$tmp/root"
    dpkg-deb -x "$deb" "$tmp/root"
    # Atomic publish: the directory exists only once fully extracted.
    mv "$tmp/root" "$dir"
    rm -rf "$tmp"
    printf '%s\n' "$dir"
}

# The kernel package the metapackage points at (linux-image-6.12.N+debM-riscv64).
KERNEL_PKG="$(papt_cache depends linux-image-riscv64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-riscv64\).*/\1/p' | head -n1)"
[ -n "$KERNEL_PKG" ] || die "cannot resolve linux-image-riscv64 to a kernel package in $SUITE/$ARCH"
while read -r k v; do
    case "$k" in
        Package:) cur="$v" ;;
        Version:) [ -n "${VERSIONS[$cur]:-}" ] || VERSIONS[$cur]="$v" ;;
    esac
done < <(papt_cache show --no-all-versions "$KERNEL_PKG" 2>/dev/null || true)
PACKAGES+=("$KERNEL_PKG")

declare -A DIRS
for p in "${PACKAGES[@]}"; do
    DIRS[$p]="$(fetch "$p")"
done

# ------------------------------------------------------ firmware, kernel
OPENSBI="${DIRS[opensbi]}/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"
[ -f "$OPENSBI" ] || die "fw_dynamic.bin not found in ${DIRS[opensbi]}"
KERNEL="$(find "${DIRS[$KERNEL_PKG]}/boot" -maxdepth 1 -name 'vmlinu*' -type f | head -n1)"
[ -n "$KERNEL" ] || die "no kernel image in ${DIRS[$KERNEL_PKG]}/boot"
MODULES="$(find "${DIRS[$KERNEL_PKG]}" -maxdepth 4 -path '*/lib/modules/*' -type d -name '6.*' | head -n1)"
[ -n "$MODULES" ] || die "no kernel modules in ${DIRS[$KERNEL_PKG]}"

# ------------------------------------------------------------ busybox
BUSYBOX=""
for cand in bin/busybox usr/bin/busybox; do
    if [ -f "${DIRS[busybox-static]}/$cand" ]; then
        BUSYBOX="${DIRS[busybox-static]}/$cand"
        break
    fi
done
[ -n "$BUSYBOX" ] || die "busybox binary not found in ${DIRS[busybox-static]}"

# ------------------------------------------------------- merged sysroot
# Rebuild when the set of package versions changes.
SYSROOT_KEY=""
for p in "${SYSROOT_PACKAGES[@]}"; do
    SYSROOT_KEY+="$(basename "${DIRS[$p]}")"$'\n'
done
if [ -f "$SYSROOT/.rvnvmm-sysroot" ] && [ "$(cat "$SYSROOT/.rvnvmm-sysroot")" = "${SYSROOT_KEY%$'\n'}" ]; then
    log "sysroot up to date: $SYSROOT"
else
    log "assembling sysroot $SYSROOT"
    tmp="$(mktemp -d "$CACHE/.tmp-sysroot.XXXXXX")"
    # Debian trixie is merged-/usr: create the usual top-level symlinks first
    # so packages that still ship files under /lib land in usr/lib.
    mkdir -p "$tmp/usr/lib" "$tmp/usr/bin" "$tmp/usr/sbin"
    ln -s usr/lib "$tmp/lib"
    ln -s usr/bin "$tmp/bin"
    ln -s usr/sbin "$tmp/sbin"
    for p in "${SYSROOT_PACKAGES[@]}"; do
        src="${DIRS[$p]}"
        # Copy each package tree; a top-level lib/bin/sbin directory in a
        # package is folded into usr/ to preserve the merged layout.
        for entry in "$src"/* "$src"/.[!.]*; do
            [ -e "$entry" ] || [ -L "$entry" ] || continue
            name="$(basename "$entry")"
            case "$name" in
                lib|bin|sbin)
                    if [ -d "$entry" ] && [ ! -L "$entry" ]; then
                        cp -a -l "$entry/." "$tmp/usr/$name/" 2>/dev/null \
                            || cp -a "$entry/." "$tmp/usr/$name/"
                        continue
                    fi ;;
            esac
            cp -a -l "$entry" "$tmp/" 2>/dev/null || cp -a "$entry" "$tmp/"
        done
    done
    printf '%s\n' "${SYSROOT_KEY%$'\n'}" > "$tmp/.rvnvmm-sysroot"
    chmod 755 "$tmp"
    rm -rf "$SYSROOT"
    mv "$tmp" "$SYSROOT"
fi

for f in lib/ld-linux-riscv64-lp64d.so.1 lib/riscv64-linux-gnu/libc.so.6 \
         lib/riscv64-linux-gnu/libstdc++.so.6 lib/riscv64-linux-gnu/libgcc_s.so.1 \
         usr/bin/xz usr/bin/bzip2 usr/bin/gzip usr/bin/sqlite3 usr/bin/lua5.4 usr/bin/gawk usr/bin/mawk; do
    [ -e "$SYSROOT/$f" ] || die "sysroot is missing $f"
done

# Files the guest's libc reads by absolute path, which would otherwise come
# from the host (rvnvmm --sysroot and qemu -L fall back to host paths) and
# change the guest's instruction counts whenever the host changes: an empty
# ld.so cache (the loader then searches the default directories), and a
# minimal passwd / nsswitch.conf for getpwuid.
mkdir -p "$SYSROOT/etc"
[ -e "$SYSROOT/etc/ld.so.cache" ] || : > "$SYSROOT/etc/ld.so.cache"
[ -e "$SYSROOT/etc/nsswitch.conf" ] || printf 'passwd: files\ngroup: files\n' > "$SYSROOT/etc/nsswitch.conf"
[ -e "$SYSROOT/etc/passwd" ] || printf 'root:x:0:0:root:/root:/bin/sh\n' > "$SYSROOT/etc/passwd"
[ -e "$SYSROOT/etc/group" ] || printf 'root:x:0:\n' > "$SYSROOT/etc/group"

# ------------------------------------------------------------ paths.env
PATHS_ENV="$CACHE/paths.env"
cat > "$PATHS_ENV.tmp" <<EOF
RVNVMM_BUSYBOX=$BUSYBOX
RVNVMM_SYSROOT=$SYSROOT
RVNVMM_OPENSBI=$OPENSBI
RVNVMM_KERNEL=$KERNEL
RVNVMM_MODULES=$MODULES
EOF
mv "$PATHS_ENV.tmp" "$PATHS_ENV"
log "wrote $PATHS_ENV"
cat "$PATHS_ENV"

# ------------------------------------------------------------ python venv
# python/ installed editable with its test extras. The venv is reinstalled
# only when python/pyproject.toml or the checkout's location changes, so a
# re-run costs one hash.
TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$CACHE/venv"
VENV_KEY="$(sha256sum "$TOP/python/pyproject.toml" | cut -d' ' -f1) $TOP"
if [ -x "$VENV/bin/rvnvmm-sweep" ] && [ -x "$VENV/bin/pytest" ] \
   && [ "$(cat "$VENV/.rvnvmm-key" 2>/dev/null)" = "$VENV_KEY" ]; then
    log "python venv up to date: $VENV"
else
    log "installing python/ into $VENV"
    command -v python3 >/dev/null || die "python3 not found"
    if ! "$VENV/bin/python" -c '' 2>/dev/null; then
        python3 -m venv --clear "$VENV" || die "python3 -m venv failed"
    fi
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$TOP/python[test]" \
        || die "pip install of python/ failed"
    printf '%s\n' "$VENV_KEY" > "$VENV/.rvnvmm-key"
fi
