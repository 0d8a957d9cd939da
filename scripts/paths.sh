#!/usr/bin/env bash
# Print (when executed) or export (when sourced) the paths written by
# scripts/setup.sh: RVNVMM_BUSYBOX and RVNVMM_SYSROOT.
#
#   scripts/paths.sh            # prints KEY=VALUE lines
#   . scripts/paths.sh          # exports them into the current shell
_rvnvmm_env="${RVNVMM_CACHE:-$HOME/.cache/rvnvmm}/paths.env"
if [ ! -r "$_rvnvmm_env" ]; then
    echo "rvnvmm: $_rvnvmm_env not found: run scripts/setup.sh first" >&2
    unset _rvnvmm_env
    return 1 2>/dev/null || exit 1
fi
if (return 0 2>/dev/null); then
    set -a
    # shellcheck disable=SC1090
    . "$_rvnvmm_env"
    set +a
    unset _rvnvmm_env
else
    cat "$_rvnvmm_env"
fi
