#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's libcap and libnuma packages of another architecture into
# .cache/cross/ARCH/, where lib/kbench.mk finds them for a cross build
# (make CROSS_COMPILE=...), instead of the multiarch packages (apt-get
# install libcap-dev:ARCH libnuma-dev:ARCH), which need dpkg
# --add-architecture and may not install beside a newer host libc6-dev.
# The packages come from Debian's ARCH indices of scripts/foreign-apt.sh:
# the host's APT setup is not changed.
#
#   cross-libs.sh ARCH        arm64, i386, armhf, ...
#   KBENCH_CACHE              cache directory (default: <kbench>/.cache)
#
# Prints the directory. Exit status: 0; 1 a package could not be fetched;
# 2 bad usage; 3 no index of ARCH could be fetched (mirror or network).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

packages=(libcap-dev libcap2 libnuma-dev libnuma1)

if (($# != 1)) || [[ $1 == -* ]]; then
	[[ ${1:-} == -h || ${1:-} == --help ]] && {
		echo "usage: ${0##*/} ARCH   (Debian architecture: arm64, i386, armhf, ...)"
		exit 0
	}
	die_usage "expected one Debian architecture (arm64, i386, ...)"
fi
arch=$1
[[ $arch =~ ^[a-z0-9]+$ ]] || die_usage "invalid architecture '$arch'"
cache=${KBENCH_CACHE:-$top/.cache}
dest=$cache/cross/$arch

if [[ -f $dest/.kbench-unpacked ]]; then
	echo "$dest"
	exit 0
fi
mkdir -p "$cache/cross"
exec 9>"$cache/cross/.lock-$arch"
flock 9
if [[ -f $dest/.kbench-unpacked ]]; then
	echo "$dest"
	exit 0
fi
dl=$(mktemp -d "$cache/cross/dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
msg "fetching ${packages[*]/%/:$arch}"
rc=0
(cd "$dl" && "$top/scripts/foreign-apt.sh" "$arch" apt-get download "${packages[@]}") \
	>"$dl/log" 2>&1 || rc=$?
if ((rc != 0)); then
	grep -E '^(E|W):|foreign-apt' "$dl/log" >&2 || tail -n 3 "$dl/log" >&2
	# 3: no index of ARCH could be fetched (a mirror or network problem).
	((rc == 3)) || rc=1
	die "$rc" "cannot download the $arch packages"
fi
for deb in "$dl"/*.deb; do
	dpkg-deb -x "$deb" "$dl/root"
done
# The -dev packages' libfoo.so links are absolute (/lib/TRIPLET/...):
# aim them into the unpacked tree.
while IFS= read -r link; do
	target=$(readlink "$link")
	[[ $target == /* ]] && ln -sfn "$dest$target" "$link"
done < <(find "$dl/root" -type l)
rm -rf "$dest"
mv "$dl/root" "$dest"
touch "$dest/.kbench-unpacked"
echo "$dest"
