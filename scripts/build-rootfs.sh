#!/usr/bin/env bash
# A minimal Debian trixie riscv64 root file system on a raw ext4 disk image
# for `rvnvmm boot --disk` (seed 000 §4.4: debootstrap, then boot Debian on
# the emulated machine).
#
#   scripts/build-rootfs.sh [IMAGE]     # default $RVNVMM_CACHE/rootfs/trixie-riscv64.img
#
# 1. On the host: `debootstrap --foreign` (download and unpack only; the
#    packages' scripts are riscv64 programs the host cannot run), with
#    sysvinit as init and a login prompt on the serial console.
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
IMAGE="${1:-$CACHE/rootfs/$SUITE-riscv64.img}"
die() { echo "build-rootfs: $*" >&2; exit 1; }

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

echo "build-rootfs: stage 1 (host): debootstrap --foreign $SUITE riscv64" >&2
debootstrap --foreign --arch=riscv64 --variant=minbase \
    --include=sysvinit-core,e2fsprogs,ifupdown,procps \
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
start=$(date +%s)
log="$IMAGE.second-stage.log"
"$rvnvmm" boot --set machine.model=functional --initrd "$initrd" --disk "$IMAGE.part" \
    --append "console=ttyS0 quiet rw rvnvmm.root=/dev/vda rvnvmm.init=/sbin/rvnvmm-second-stage" \
    < /dev/null | tee "$log"
grep -q "rvnvmm-second-stage: done" "$log" || die "the second stage failed: see $log"
mv "$IMAGE.part" "$IMAGE"
echo "build-rootfs: $IMAGE ready (second stage: $(( $(date +%s) - start )) s)" >&2
echo "$IMAGE"
