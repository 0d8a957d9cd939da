#!/usr/bin/env bash
# Prepare a machine for rvnvmm development and differential testing.
#
# Idempotent: safe to re-run.  Run as root on a fresh Debian 12 machine.
#
#  1. installs the host tools (riscv64 cross compilers, qemu-user, ...) with
#     apt-get, only those that are missing;
#  2. makes sure a Rust toolchain exists (rustup, minimal profile, if cargo
#     is not on PATH);
#  3. fetches the riscv64 packages pinned by scripts/debian-riscv64.lock from
#     a Debian mirror's pool/ (found in the host's apt sources), checks each
#     .deb's SHA256 against the lock, keeps it in the cache and extracts it,
#     then assembles a merged sysroot (scripts/debian_packages.py; the
#     system's apt sources are never touched);
#  4. writes $CACHE/paths.env with RVNVMM_BUSYBOX, RVNVMM_SYSROOT, and the
#     full system's RVNVMM_OPENSBI, RVNVMM_KERNEL, RVNVMM_MODULES;
#  5. installs the experiment workflow (python/: rvnvmm-sweep, rvnvmm-report,
#     rvnvmm-heat) and its test dependencies into the venv $CACHE/venv.
#
#   scripts/setup.sh                 # set up (or check) this machine
#   scripts/setup.sh --update-lock   # first re-resolve the lock from the signed
#                                    # package index (then commit the lock)
#
# Environment (README.md, "Set-up", says more):
#   RVNVMM_CACHE          cache directory (default: $HOME/.cache/rvnvmm)
#   RVNVMM_SKIP_HOST      if set to 1, skip steps 1 and 2 (host tools)
#   RVNVMM_DEBIAN_MIRROR  Debian mirror URL (default: the host's apt sources)
#   RVNVMM_DEBIAN_LOCK    package lock (default: scripts/debian-riscv64.lock)
#   RVNVMM_DEBIAN_KEYRING keyring verifying the package index
#   RVNVMM_FETCH_RETRIES, RVNVMM_FETCH_BACKOFF, RVNVMM_FETCH_BACKOFF_MAX,
#   RVNVMM_FETCH_TIMEOUT  retries of transient download failures (default 4),
#                         first back-off and its cap, per-request timeout (s)
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UPDATE_LOCK=0
for arg in "$@"; do
    case "$arg" in
        --update-lock) UPDATE_LOCK=1 ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown argument '$arg' (scripts/setup.sh [--update-lock])" ;;
    esac
done

export RVNVMM_CACHE="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}"
CACHE="$RVNVMM_CACHE"
SUITE=trixie
ARCH=riscv64
SYSROOT="$CACHE/sysroot-$SUITE-$ARCH"
# The workload suite (guest/workloads, docs/workloads.md) runs Debian's own
# riscv64 xz, bzip2, gzip, sqlite3, lua5.4, gawk and mawk from the sysroot
# ($RVNVMM_SYSROOT/usr/bin/NAME), with their shared libraries beside libc.
WORKLOAD_PACKAGES=(xz-utils bzip2 gzip sqlite3 lua5.4 gawk mawk
                   liblzma5 libbz2-1.0 libsqlite3-0 zlib1g libreadline8t64
                   readline-common libtinfo6 libgmp10 libmpfr6 libsigsegv2)
# PMDK (docs/persistence.md): Debian's riscv64 libpmemobj and libpmem with
# the libraries they load (ndctl's, and theirs), and the headers guest
# programs compile against (guest/emu/pmdk_rbtree.c).
PMDK_PACKAGES=(libpmemobj1 libpmem1 libpmemobj-dev libpmem-dev
               libndctl6 libdaxctl1 libkmod2 libudev1 libuuid1 libcap2
               libssl3t64 openssl-provider-legacy libzstd1)
# MPI (guest/npb/README.md): Debian's riscv64 Open MPI headers and libmpi with
# the libraries it and its plugins load, so that the MPI kernels link against
# the libmpi.so.40 that openmpi-bin brings into the full system's Debian root.
MPI_PACKAGES=(libopenmpi-dev libopenmpi40 libpmix2t64 libhwloc15 libevent-core-2.1-7t64
              libevent-pthreads-2.1-7t64 libfabric1 libucx0 libnl-3-200 libnl-route-3-200
              libmunge2 libibverbs1 ibverbs-providers librdmacm1t64 libfuse3-4 libgomp1 libibmad5
              libibumad3)
# NUMA (docs/numa.md, docs/full-system.md): Debian's riscv64 numactl and the
# libnuma it loads, so that `numactl` runs unchanged under `rvnvmm run` and
# in the full system; ndctl and daxctl with the libraries they load beyond
# PMDK's (their own libndctl6, libdaxctl1, libkmod2, libudev1, libuuid1 and
# libssl3t64's libcrypto are above), which hot-plug the NVMM into a lower
# memory tier in the full system.
NUMA_PACKAGES=(numactl libnuma1 ndctl daxctl libjson-c5 libkeyutils1 libiniparser4)
# A server for the tiering study (experiments/tiering.py): memcached and the
# libraries it loads that nothing above brings.
SERVER_PACKAGES=(memcached libevent-2.1-7t64 libsasl2-2)
# Full system (rvnvmm boot): OpenSBI's fw_dynamic and Debian's riscv64
# kernel with its modules. The kernel's package is named after its ABI, so
# it is found through the linux-image-riscv64 metapackage below.
SYSTEM_PACKAGES=(opensbi linux-image-riscv64)
PACKAGES=(busybox-static libc6 libstdc++6 libgcc-s1 "${WORKLOAD_PACKAGES[@]}" "${PMDK_PACKAGES[@]}"
          "${MPI_PACKAGES[@]}" "${NUMA_PACKAGES[@]}" "${SERVER_PACKAGES[@]}" "${SYSTEM_PACKAGES[@]}")
SYSROOT_PACKAGES=(libc6 libgcc-s1 libstdc++6 "${WORKLOAD_PACKAGES[@]}" "${PMDK_PACKAGES[@]}"
                  "${MPI_PACKAGES[@]}" "${NUMA_PACKAGES[@]}" "${SERVER_PACKAGES[@]}")

# ---------------------------------------------------------------- host tools
HOST_PACKAGES=(gcc-riscv64-linux-gnu g++-riscv64-linux-gnu gfortran-riscv64-linux-gnu qemu-user e2fsprogs
               debian-archive-keyring make curl ca-certificates
               python3-venv chromium device-tree-compiler
               qemu-system-misc cpio gnupg gdb-multiarch openmpi-bin libopenmpi-dev)

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

command -v python3 >/dev/null || die "python3 not found"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"
mkdir -p "$CACHE"

# ------------------------------------------------------- Debian packages
# PACKAGE<TAB>DIR lines; linux-image-riscv64 (the metapackage) gives the
# directory of the kernel package it points at.
if [ "$UPDATE_LOCK" = 1 ]; then fetch_command=update-lock; else fetch_command=fetch; fi
listing="$(python3 "$TOP/scripts/debian_packages.py" "$fetch_command" --codename "$SUITE" "${PACKAGES[@]}")" \
    || exit 1
declare -A DIRS
while IFS=$'\t' read -r p dir; do
    DIRS[$p]="$dir"
done <<< "$listing"
for p in "${PACKAGES[@]}"; do
    [ -n "${DIRS[$p]:-}" ] || die "no directory for package $p"
done
KERNEL_DIR="${DIRS[linux-image-riscv64]}"

# ------------------------------------------------------ firmware, kernel
OPENSBI="${DIRS[opensbi]}/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"
[ -f "$OPENSBI" ] || die "fw_dynamic.bin not found in ${DIRS[opensbi]}"
KERNEL="$(find "$KERNEL_DIR/boot" -maxdepth 1 -name 'vmlinu*' -type f | head -n1)"
[ -n "$KERNEL" ] || die "no kernel image in $KERNEL_DIR/boot"
MODULES="$(find "$KERNEL_DIR" -maxdepth 4 -path '*/lib/modules/*' -type d -name '6.*' | head -n1)"
[ -n "$MODULES" ] || die "no kernel modules in $KERNEL_DIR"

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
