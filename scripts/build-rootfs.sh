#!/usr/bin/env bash
# A minimal Debian trixie riscv64 root file system on a raw ext4 disk image
# for `rvnvmm boot --disk` (seed 000 §4.4: debootstrap, then boot Debian on
# the emulated machine).
#
#   scripts/build-rootfs.sh [IMAGE]        # default $RVNVMM_CACHE/rootfs/trixie-riscv64.img
#   scripts/build-rootfs.sh --mpi [IMAGE]  # default $RVNVMM_CACHE/rootfs/trixie-riscv64-mpi.img
#
# --mpi: the same system plus Debian's Open MPI (`openmpi-bin`), for the MPI
# build of the NAS-like kernels (seed 003). It starts from the plain image
# (built first if missing): the packages openmpi-bin needs on top of it
# (resolved by apt against the image's own dpkg status, downloaded and
# checked against the signed index) are written into a copy with debugfs,
# and rvnvmm boots the copy once to `dpkg -i` them.
#
# 1. On the host: `debootstrap --foreign` (download and unpack only; the
#    packages' scripts are riscv64 programs the host cannot run), with
#    sysvinit as init, a login prompt on the serial console, numactl, and
#    ndctl and daxctl (NUMA machines and memory tiers: docs/full-system.md).
# 2. The tree becomes an ext4 image (`mke2fs -d`, no loop mount needed).
# 3. rvnvmm boots the image (functional model: it is only installation) with
#    `rvnvmm.root=/dev/vda rvnvmm.init=/sbin/rvnvmm-second-stage`; the
#    project's initramfs mounts it and runs that script as PID 1, which runs
#    `debootstrap --second-stage` inside the emulator and powers off.
#
# Then `rvnvmm boot --disk IMAGE --append "console=ttyS0 rvnvmm.root=/dev/vda"`
# boots Debian from the disk to a login prompt (root, no password).
# Needs scripts/setup.sh and `make -C guest` first, network access and root
# (debootstrap creates device nodes and root-owned files). Not part of the
# test suite: stage 3 runs for a long while (docs/full-system.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}"
# RVNVMM_DEBIAN_MIRROR, else the host's own Debian apt source (as scripts/setup.sh).
MIRROR="$(python3 "$top/scripts/debian_packages.py" mirror)" || exit 1
SUITE=trixie
SIZE=2G
die() { echo "build-rootfs: $*" >&2; exit 1; }
mpi=false
if [ "${1:-}" = --mpi ]; then mpi=true; shift; fi
case "${1:-}" in -*) die "unknown option $1 (usage: build-rootfs.sh [--mpi] [IMAGE])" ;; esac
BASE="$CACHE/rootfs/$SUITE-riscv64.img"
if $mpi; then IMAGE="${1:-$CACHE/rootfs/$SUITE-riscv64-mpi.img}"; else IMAGE="${1:-$BASE}"; fi

[ "$(id -u)" = 0 ] || die "run as root (debootstrap creates device nodes)"
[ -f "$CACHE/paths.env" ] || die "run scripts/setup.sh first"
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v mke2fs >/dev/null || need+=(e2fsprogs)
if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >&2
fi
(cd "$top" && cargo build --release -p rvnvmm >&2)
rvnvmm="${CARGO_TARGET_DIR:-$top/target}/release/rvnvmm"
initrd=$(bash "$top/scripts/build-initramfs.sh")

mkdir -p "$(dirname "$IMAGE")"
tree=$(mktemp -d "$(dirname "$IMAGE")/tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT

# Boots IMAGE.part once with INIT as PID 1 (functional model: it is only
# installation); the image is renamed into place when INIT printed DONE.
install_in_rvnvmm() {
    local init=$1 done=$2 log="$IMAGE.$3.log" start
    start=$(date +%s)
    "$rvnvmm" boot --set machine.model=functional --initrd "$initrd" --disk "$IMAGE.part" \
        --append "console=ttyS0 quiet rw rvnvmm.root=/dev/vda rvnvmm.init=$init" \
        < /dev/null | tee "$log"
    grep -q "$done" "$log" || die "the installation in rvnvmm failed: see $log"
    mv "$IMAGE.part" "$IMAGE"
    echo "build-rootfs: $IMAGE ready (in rvnvmm: $(( $(date +%s) - start )) s)" >&2
    echo "$IMAGE"
}

if $mpi; then
    [ -f "$BASE" ] || "$0" "$BASE" >/dev/null
    echo "build-rootfs: openmpi-bin on a copy of $BASE" >&2
    debugfs -R "dump /var/lib/dpkg/status $tree/status" "$BASE" 2>/dev/null
    [ -s "$tree/status" ] || die "cannot read /var/lib/dpkg/status from $BASE"
    mapfile -t debs < <(python3 "$top/scripts/debian_packages.py" closure \
        --status "$tree/status" openmpi-bin)
    [ ${#debs[@]} -gt 0 ] || die "no packages to install (see the messages above)"
    cat > "$tree/install" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
echo "rvnvmm-install: dpkg -i $(ls /var/cache/rvnvmm-install | wc -l) packages"
if dpkg -i /var/cache/rvnvmm-install/*.deb; then
    rm -rf /var/cache/rvnvmm-install /usr/sbin/rvnvmm-install
    echo "rvnvmm-install: done"
else
    echo "rvnvmm-install: FAILED"
fi
sync
echo u > /proc/sysrq-trigger
echo o > /proc/sysrq-trigger
sleep 60
EOF
    {
        # debugfs's write names a file of its current directory; /sbin is a
        # symbolic link (merged /usr), which debugfs does not follow.
        echo "mkdir /var/cache/rvnvmm-install"
        echo "cd /var/cache/rvnvmm-install"
        for deb in "${debs[@]}"; do echo "write $deb $(basename "$deb")"; done
        echo "cd /usr/sbin"
        echo "write $tree/install rvnvmm-install"
        echo "sif rvnvmm-install mode 0100755"
    } > "$tree/debugfs.cmd"
    rm -f "$IMAGE.part"
    cp --sparse=always "$BASE" "$IMAGE.part"
    # The image was powered off with SysRq (its journal still to replay):
    # replay it first, or Linux would replay it over what debugfs writes.
    e2fsck -fy "$IMAGE.part" >"$tree/e2fsck.log" 2>&1 || [ $? -le 1 ] \
        || die "e2fsck of $IMAGE.part failed: $(tail -3 "$tree/e2fsck.log")"
    # debugfs exits 0 when a command fails: anything on stderr but its banner is an error.
    debugfs -w -f "$tree/debugfs.cmd" "$IMAGE.part" >/dev/null 2>"$tree/debugfs.err" || true
    if grep -v '^debugfs [0-9]' "$tree/debugfs.err" >&2; then
        die "debugfs could not write the packages into $IMAGE.part"
    fi
    install_in_rvnvmm /sbin/rvnvmm-install "rvnvmm-install: done" install
    exit 0
fi

echo "build-rootfs: stage 1 (host): debootstrap --foreign $SUITE riscv64" >&2
debootstrap --foreign --arch=riscv64 --variant=minbase \
    --include=sysvinit-core,e2fsprogs,ifupdown,procps,numactl,ndctl,daxctl \
    "$SUITE" "$tree" "$MIRROR" >&2

# Runs as PID 1 inside rvnvmm: the second stage, the settings of a booted
# system, then a clean power-off.
cat > "$tree/sbin/rvnvmm-second-stage" <<'EOF'
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
echo "rvnvmm-second-stage: debootstrap --second-stage"
if /debootstrap/debootstrap --second-stage; then
    echo rvnvmm > /etc/hostname
    printf '127.0.0.1 localhost\n127.0.1.1 rvnvmm\n' > /etc/hosts
    echo '/dev/vda / ext4 defaults 0 1' > /etc/fstab
    ln -sf ../proc/self/mounts /etc/mtab
    passwd -d root
    # A login prompt on the serial console, the board's UART.
    echo 'T0:23:respawn:/sbin/agetty -L ttyS0 115200 vt100' >> /etc/inittab
    echo "rvnvmm-second-stage: done"
else
    echo "rvnvmm-second-stage: FAILED (see /debootstrap/debootstrap.log)"
fi
# Power off with the disk clean: sync, remount read-only, off (SysRq s, u,
# o; debootstrap unmounted its /proc).
mountpoint -q /proc || mount -t proc proc /proc
sync
echo u > /proc/sysrq-trigger
echo o > /proc/sysrq-trigger
sleep 60
EOF
chmod 755 "$tree/sbin/rvnvmm-second-stage"

echo "build-rootfs: stage 2 (host): $SIZE ext4 image $IMAGE" >&2
rm -f "$IMAGE.part"
truncate -s "$SIZE" "$IMAGE.part"
mke2fs -q -t ext4 -L rootfs -d "$tree" "$IMAGE.part"

echo "build-rootfs: stage 3 (in rvnvmm): debootstrap --second-stage" >&2
install_in_rvnvmm /sbin/rvnvmm-second-stage "rvnvmm-second-stage: done" second-stage
