#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the path of a kernel source tree holding the kselftest harness
# (tools/testing/selftests/{lib.mk,kselftest.h,...}) and the KTAP parser
# (tools/testing/kunit/kunit.py), provisioning it on first use from Debian's
# linux-source-$KSRC_VERSION package into .cache/ of the collection.
# Only the path goes to stdout; progress and errors go to stderr.
#
#   KSRC_VERSION   6.12 (default), 6.1, ... (Debian's linux-source-X)
#   KBENCH_CACHE   cache directory (default: <kbench>/.cache)
set -euo pipefail

if (($#)); then
	echo "usage: $0   (takes no arguments; KSRC_VERSION and KBENCH_CACHE from the environment)" >&2
	exit 2
fi
version=${KSRC_VERSION:-6.12}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KBENCH_CACHE:-$top/.cache}
dest=$cache/linux-source-$version
stamp=$dest/.kbench-provisioned

die() {
	echo "provision-ksrc: $*" >&2
	exit 1
}

if [[ -f $stamp ]]; then
	echo "$dest"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.lock-$version"
flock 9
if [[ -f $stamp ]]; then	# another build provisioned it meanwhile
	echo "$dest"
	exit 0
fi

tarball=/usr/src/linux-source-$version.tar.xz
if [[ ! -f $tarball ]]; then
	echo "provision-ksrc: fetching Debian package linux-source-$version" >&2
	dl=$(mktemp -d "$cache/dl.XXXXXX")
	trap 'rm -rf "$dl"' EXIT
	(cd "$dl" && apt-get download "linux-source-$version" >&2) ||
		die "cannot download linux-source-$version (run 'apt-get update', or install it: apt-get install linux-source-$version; or pass KSRC=/path/to/linux)"
	dpkg-deb -x "$dl"/linux-source-"$version"_*.deb "$dl/root" ||
		die "cannot unpack the linux-source-$version package"
	tarball=$dl/root/usr/src/linux-source-$version.tar.xz
	[[ -f $tarball ]] || die "linux-source-$version holds no $tarball"
fi

echo "provision-ksrc: extracting tools/ and scripts/ of $tarball into $dest" >&2
rm -rf "$dest" "$dest.tmp"
mkdir -p "$dest.tmp"
tar -xJf "$tarball" -C "$dest.tmp" --strip-components=1 \
	"linux-source-$version/Makefile" \
	"linux-source-$version/scripts" \
	"linux-source-$version/tools" ||
	die "cannot extract $tarball"
[[ -f $dest.tmp/tools/testing/selftests/lib.mk ]] ||
	die "$tarball has no tools/testing/selftests/lib.mk"
mv "$dest.tmp" "$dest"
touch "$stamp"
echo "$dest"
