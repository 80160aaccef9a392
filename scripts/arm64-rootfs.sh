#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare, once, the root filesystem of the arm64 guest that
# scripts/vm-arm64.sh boots: a minimal Debian arm64 system (mmdebstrap,
# maintainer scripts run through qemu-user-static) holding what
# run_all.sh and the collection need, packed as an initramfs (newc cpio) so
# that Debian's kernel needs no modules to mount its root (vm-arm64.sh
# appends a second cpio with /init and the collection). Prints the
# cpio's path; progress and errors go to stderr.
#
#   arm64-rootfs.sh [SUITE]   SUITE: bookworm (default)
#   KBENCH_CACHE              cache directory (default: <kbench>/.cache)
#
# Host needs: mmdebstrap, qemu-user-static (binfmt_misc registered), cpio.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

[[ ${1:-} == -h || ${1:-} == --help ]] && {
	echo "usage: $prog [SUITE]   (default bookworm; prints the initramfs path)"
	exit 0
}
(($# <= 1)) || die_usage "too many arguments"
suite=${1:-bookworm}
[[ $suite =~ ^[a-z]+$ ]] || die_usage "invalid suite '$suite'"
cache=${KBENCH_CACHE:-$top/.cache}
out=$cache/vm/arm64-$suite.cpio

# run_all.sh (bash, make, coreutils' timeout, mawk, sed) and the
# collection's libraries; procps and util-linux for debugging in the guest.
packages=bash,make,mawk,sed,grep,coreutils,util-linux,procps,libcap2,libnuma1,kmod

if [[ -f $out ]]; then
	echo "$out"
	exit 0
fi
missing=()
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
command -v cpio >/dev/null || missing+=(cpio)
[[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P || -x /usr/bin/qemu-aarch64-static ]] ||
	missing+=(qemu-user-static)
((${#missing[@]} == 0)) ||
	die 3 "missing host packages: ${missing[*]} (apt-get install ${missing[*]})"
[[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] ||
	die 3 "arm64 binaries do not run here: register qemu-user-static's binfmt" \
		"(mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc;" \
		"systemctl restart systemd-binfmt or update-binfmts --enable qemu-aarch64)"

mkdir -p "$cache/vm"
exec 9>"$cache/vm/.lock-arm64-rootfs"
flock 9
if [[ -f $out ]]; then
	echo "$out"
	exit 0
fi
work=$(mktemp -d "$cache/vm/arm64-rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
msg "building the $suite arm64 root filesystem (once; minutes under emulation)"
if ! mmdebstrap --variant=minbase --architectures=arm64 --include="$packages" \
	--dpkgopt='path-exclude=/usr/share/{doc,man,locale,info}/*' \
	"$suite" "$work/root" >"$work/log" 2>&1; then
	tail -n 15 "$work/log" >&2
	die 3 "mmdebstrap failed"
fi
(cd "$work/root" && find . -print0 | cpio --null -o -H newc --quiet) >"$work/cpio" ||
	die 3 "cannot pack the root filesystem"
mv "$work/cpio" "$out"
echo "$out"
