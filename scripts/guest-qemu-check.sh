#!/usr/bin/env bash
# Runs every guest program (guest/build/{static,dynamic}/*) and busybox
# script (guest/busybox/*.sh) under qemu-riscv64 RUNS times (default 2),
# the way crates/cli/tests/differential.rs runs its reference, and checks
# that stdout and exit status are identical across the runs.  Prints one
# line per program with its status and an md5 of its stdout.
#
#   scripts/guest-qemu-check.sh [RUNS]
#
# Needs scripts/setup.sh and `make -C guest` to have been run.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
RUNS="${1:-2}"
PATHS_ENV="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}/paths.env"
[ -r "$PATHS_ENV" ] || { echo "missing $PATHS_ENV: run scripts/setup.sh" >&2; exit 1; }
# shellcheck disable=SC1090
. "$PATHS_ENV"
QEMU="${RVNVMM_QEMU:-$(command -v qemu-riscv64)}" || { echo "qemu-riscv64 not found" >&2; exit 1; }
BUILD="$REPO/guest/build"
[ -d "$BUILD/static" ] || { echo "guest not built: run make -C guest" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/rvnvmm-qcheck.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# Busybox applet wrappers (qemu-user without binfmt_misc cannot execve a
# RISC-V binary, so busybox falls back to PATH, which finds these).
APPLETS="$WORK/applets"
mkdir -p "$APPLETS"
for a in $("$QEMU" "$RVNVMM_BUSYBOX" --list); do
    printf '#!/bin/sh\nexec %q %q %q "$@"\n' "$QEMU" "$RVNVMM_BUSYBOX" "$a" > "$APPLETS/$a"
    chmod +x "$APPLETS/$a"
done

# run_one TAG CMD... -> prints "STATUS MD5", stdout saved in $WORK/out.TAG
run_one() {
    local tag="$1"; shift
    local dir="$WORK/run.$tag"
    rm -rf "$dir"; mkdir -p "$dir"
    ( cd "$dir" && exec env -i PATH="$APPLETS" TMPDIR="$dir" HOME="$dir" LC_ALL=C "$@" ) \
        > "$WORK/out.$tag" 2> "$WORK/err.$tag" < /dev/null
    local st=$?
    rm -rf "$dir"
    printf '%s %s\n' "$st" "$(md5sum < "$WORK/out.$tag" | cut -c1-32)"
}

fail=0
check() {
    local name="$1"; shift
    local first="" r i
    for ((i = 1; i <= RUNS; i++)); do
        r="$(run_one "$i" "$@")"
        if [ -z "$first" ]; then
            first="$r"
        elif [ "$r" != "$first" ]; then
            printf '%-28s NONDETERMINISTIC: run 1 [%s] run %d [%s]\n' "$name" "$first" "$i" "$r"
            diff "$WORK/out.1" "$WORK/out.$i" | head -n 10
            fail=1
            return
        fi
    done
    printf '%-28s status %-4s stdout md5 %s lines %s\n' "$name" "${first%% *}" "${first#* }" \
        "$(wc -l < "$WORK/out.1")"
}

for linkage in static dynamic; do
    for prog in "$BUILD/$linkage"/*; do
        [ -x "$prog" ] || continue
        name="$(basename "$prog")"
        qemu=("$QEMU")
        [ "$linkage" = dynamic ] && qemu+=(-L "$RVNVMM_SYSROOT")
        args=()
        if [ "$name" = execve_self ]; then
            wrapper="$WORK/self-$linkage"
            printf '#!/bin/sh\nexec' > "$wrapper"
            printf ' %q' "${qemu[@]}" "$prog" >> "$wrapper"
            printf ' "$@"\n' >> "$wrapper"
            chmod +x "$wrapper"
            args=("$wrapper")
        fi
        check "$linkage/$name" "${qemu[@]}" "$prog" "${args[@]}"
    done
done
for script in "$REPO"/guest/busybox/*.sh; do
    check "busybox/$(basename "$script")" "$QEMU" "$RVNVMM_BUSYBOX" sh "$script"
done
exit "$fail"
