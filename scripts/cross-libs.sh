#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's libcap and libnuma packages of another architecture into
# .cache/cross/ARCH/, where lib/kbench.mk finds them for a cross build
# (make CROSS_COMPILE=...). For hosts where the multiarch packages
# (apt-get install libcap-dev:ARCH libnuma-dev:ARCH) cannot be installed,
# for example when the host's libc6-dev is newer than ARCH's in the
# indices. Needs the architecture in APT's indices: dpkg --add-architecture
# ARCH && apt-get update.
#
#   cross-libs.sh ARCH        arm64, i386, armhf, ...
#   KBENCH_CACHE              cache directory (default: <kbench>/.cache)
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
known=" $(dpkg --print-architecture) $(dpkg --print-foreign-architectures | tr '\n' ' ')"
[[ $known == *" $arch "* ]] ||
	die 1 "APT does not know architecture $arch: dpkg --add-architecture $arch && apt-get update"

mkdir -p "$cache/cross"
dl=$(mktemp -d "$cache/cross/dl.XXXXXX")
trap 'rm -rf "$dl"' EXIT
chmod 755 "$dl"	# _apt downloads into it
msg "fetching ${packages[*]/%/:$arch}"
if ! (cd "$dl" && apt-get download "${packages[@]/%/:$arch}") >"$dl/log" 2>&1; then
	grep -E '^E:' "$dl/log" >&2 || tail -n 3 "$dl/log" >&2
	die 1 "cannot download the $arch packages (apt-get update?)"
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
