#!/usr/bin/env bash
# Builds the initramfs that `rvnvmm boot` (and qemu-system-riscv64, for
# comparison) boots: Debian's riscv64 busybox-static, the kernel modules the
# board needs that Debian's kernel builds as modules, the guest SDK's test
# programs and the NVMM microbenchmark, and an /init that loads the modules,
# runs /etc/rvnvmm/rc and powers off (if the kernel command line says
# `rvnvmm.rc=1`), or starts busybox init with a shell on the console
# (`poweroff` and `reboot` then work).
#
#   scripts/build-initramfs.sh [OUT]     # default $RVNVMM_CACHE/initramfs/initramfs-KEY.cpio.gz
#
# Prints the path of the image. Needs scripts/setup.sh (paths.env) and
# `make -C guest` first. The image is rebuilt only when an input changes
# (its name carries a hash of them).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CACHE="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}"
# shellcheck source=/dev/null
. "$CACHE/paths.env"
die() { echo "build-initramfs: $*" >&2; exit 1; }
for v in RVNVMM_BUSYBOX RVNVMM_MODULES; do
    [ -n "${!v:-}" ] || die "$v missing from $CACHE/paths.env: run scripts/setup.sh"
done
command -v cpio >/dev/null || die "cpio not found: run scripts/setup.sh"

# Modules in load order (dependencies first). The 8250 UART, SMP, syscon
# power-off, Svnapot, Zicbom, THP and FS_DAX are built into Debian's kernel.
MODULES=(
    kernel/drivers/virtio/virtio_mmio.ko
    kernel/drivers/block/virtio_blk.ko
    kernel/drivers/char/hw_random/virtio-rng.ko
    kernel/drivers/nvdimm/libnvdimm.ko
    kernel/drivers/nvdimm/nd_btt.ko
    kernel/drivers/nvdimm/nd_pmem.ko
    kernel/drivers/nvdimm/of_pmem.ko
    kernel/drivers/dax/device_dax.ko
    kernel/drivers/dax/dax_pmem.ko
)
# Loaded only to mount a root file system from the disk
# (`rvnvmm.root=/dev/vda`, scripts/build-rootfs.sh).
ROOT_MODULES=(
    kernel/lib/crc16.ko
    kernel/fs/mbcache.ko
    kernel/fs/jbd2/jbd2.ko
    kernel/crypto/crc32c_generic.ko
    kernel/lib/libcrc32c.ko
    kernel/fs/ext4/ext4.ko
)
PROGRAMS=(
    "$top/guest/build/emu/nvmm_microbench"
    "$top/guest/build/emu/control_page"
    "$top/guest/build/emu/lat_os"
    "$top/guest/build/static/contended"
    "$top/guest/build/static/tlb_stride"
    "$top/guest/build/emu/hugetlb_map"
    "$top/sdk/libnvmm/build/nvmm-marker"
)
for t in "$top"/sdk/libnvmm/build/tests/*; do
    [ -x "$t" ] && PROGRAMS+=("$t")
done

key_inputs() {
    sha256sum "$0" "$RVNVMM_BUSYBOX" "${PROGRAMS[@]}"
    for m in "${MODULES[@]}" "${ROOT_MODULES[@]}"; do ls -l "$RVNVMM_MODULES/$m".xz 2>/dev/null || ls -l "$RVNVMM_MODULES/$m"; done
}
for p in "${PROGRAMS[@]}"; do [ -x "$p" ] || die "$p missing: run make -C guest"; done
KEY=$(key_inputs | sha256sum | cut -c1-16)
OUT="${1:-$CACHE/initramfs/initramfs-$KEY.cpio.gz}"
if [ -f "$OUT" ]; then
    echo "$OUT"
    exit 0
fi
mkdir -p "$(dirname "$OUT")"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,mnt,etc/rvnvmm,lib/modules,opt/rvnvmm}
cp "$RVNVMM_BUSYBOX" "$root/bin/busybox"
add_module() { # MODULE ORDER-FILE
    local name
    name=$(basename "$1")
    if [ -f "$RVNVMM_MODULES/$1.xz" ]; then
        xz -dc "$RVNVMM_MODULES/$1.xz" > "$root/lib/modules/$name"
    elif [ -f "$RVNVMM_MODULES/$1" ]; then
        cp "$RVNVMM_MODULES/$1" "$root/lib/modules/$name"
    else
        die "module $1 not found under $RVNVMM_MODULES"
    fi
    echo "$name" >> "$root/lib/modules/$2"
}
for m in "${MODULES[@]}"; do add_module "$m" order; done
for m in "${ROOT_MODULES[@]}"; do add_module "$m" root-order; done
for p in "${PROGRAMS[@]}"; do cp "$p" "$root/opt/rvnvmm/"; done
# Under `rvnvmm boot --nvmm pmem`: turn the pmem namespace into a
# device-DAX /dev/dax0.0, which libnvmm maps with MAP_SYNC (the block
# device /dev/pmem0 has no DAX mapping). What `ndctl create-namespace -m
# devdax` does, through sysfs; the page structures live in the NVMM itself.
cat > "$root/opt/rvnvmm/pmem-devdax" <<'EOF'
#!/bin/sh
nd=/sys/bus/nd
for i in $(seq 100); do [ -e $nd/devices/namespace0.0 ] && break; sleep 0.1; done
[ -e $nd/devices/namespace0.0 ] || { echo "pmem-devdax: no pmem namespace (boot with --nvmm pmem)" >&2; exit 1; }
[ -e /dev/dax0.0 ] && { echo /dev/dax0.0; exit 0; }
echo namespace0.0 > $nd/drivers/nd_pmem/unbind 2>/dev/null
d=$(cat $nd/devices/region0/dax_seed)
cat /proc/sys/kernel/random/uuid > $nd/devices/$d/uuid &&
    echo namespace0.0 > $nd/devices/$d/namespace &&
    echo pmem > $nd/devices/$d/mode &&
    echo $d > $nd/drivers/dax_pmem/bind || { echo "pmem-devdax: failed" >&2; exit 1; }
for i in $(seq 50); do [ -e /dev/dax0.0 ] && break; sleep 0.1; done
[ -e /dev/dax0.0 ] && echo /dev/dax0.0
EOF
chmod 755 "$root/opt/rvnvmm/pmem-devdax"

cat > "$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || mdev -s
for m in $(cat /lib/modules/order); do
    insmod /lib/modules/$m 2>/dev/null || echo "init: insmod $m failed"
done
# A pmem-region in the device tree becomes /dev/pmem0 a little after
# of_pmem loads.
if ls /proc/device-tree | grep -q pmem; then
    for i in $(seq 50); do [ -e /dev/pmem0 ] && break; sleep 0.1; done
fi
# Loopback, for programs that talk TCP or UDP to themselves (lat_os).
ifconfig lo 127.0.0.1 up
echo "rvnvmm initramfs: $(nproc) harts online"
# rvnvmm.root=DEVICE: mount that ext4 file system (read-only, for the
# system's own fsck, unless the command line says `rw`) and run its init
# (rvnvmm.init=PATH, default /sbin/init) as PID 1.
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
rootdev=$(arg rvnvmm.root)
if [ -n "$rootdev" ]; then
    for m in $(cat /lib/modules/root-order); do
        insmod /lib/modules/$m 2>/dev/null || echo "init: insmod $m failed"
    done
    for i in $(seq 50); do [ -b "$rootdev" ] && break; sleep 0.1; done
    mkdir -p /newroot
    rootmode=ro
    tr ' ' '\n' < /proc/cmdline | grep -qx rw && rootmode=rw
    if mount -t ext4 -o "$rootmode" "$rootdev" /newroot; then
        rootinit=$(arg rvnvmm.init)
        mount --move /dev /newroot/dev
        umount /sys /proc
        exec switch_root /newroot "${rootinit:-/sbin/init}"
    fi
    echo "init: cannot mount $rootdev; staying in the initramfs"
fi
if grep -q 'rvnvmm.rc=1' /proc/cmdline && [ -x /etc/rvnvmm/rc ]; then
    /etc/rvnvmm/rc
    poweroff -f
fi
# busybox init as PID 1, so `poweroff` and `reboot` work from the shell.
exec /bin/init
EOF
chmod 755 "$root/init"
cat > "$root/etc/inittab" <<'EOF'
::respawn:-/bin/sh
::ctrlaltdel:/bin/reboot
::shutdown:/bin/sync
EOF

# The automated boot test's script: facts the test compares between rvnvmm
# and qemu-system-riscv64 (timings differ and are not printed here).
cat > "$root/etc/rvnvmm/rc" <<'EOF'
#!/bin/sh
echo "rc: harts $(nproc)"
grep -c '^processor' /proc/cpuinfo | sed 's/^/rc: cpuinfo processors /'
uname -sm | sed 's/^/rc: uname /'
for m in virtio_mmio libnvdimm nd_pmem of_pmem; do
    grep -q "^$m " /proc/modules && echo "rc: module $m loaded"
done
[ -e /dev/pmem0 ] && echo "rc: /dev/pmem0 present"
echo "rc: done"
EOF
chmod 755 "$root/etc/rvnvmm/rc"

# The same inputs give the same bytes: a guest boot depends on the whole
# archive (timestamps and inode numbers included), and the same command must
# give the same statistics. Fixed times and owners; cpio numbers the inodes.
find "$root" -exec touch -h -d @0 {} +
tmp="$OUT.tmp.$$"
(cd "$root" && find . | LC_ALL=C sort |
    cpio -o -H newc --quiet --reproducible --owner=0:0 | gzip -9n) > "$tmp"
mv "$tmp" "$OUT"
echo "$OUT"
