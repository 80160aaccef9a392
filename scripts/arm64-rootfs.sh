#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare, once, the root filesystem of the arm64 guest that
# scripts/vm-arm64.sh boots: Debian's arm64 packages that run_all.sh and
# the collection need, with their dependencies (apt's resolver over the
# arm64 indices of scripts/foreign-apt.sh), unpacked with dpkg-deb and
# packed as an initramfs (newc cpio) so that Debian's kernel needs no
# modules to mount its root (vm-arm64.sh appends a second cpio with /init
# and the collection). Nothing runs under emulation: the little that
# maintainer scripts would do for this guest (/etc/passwd, /etc/group, the
# awk and sh links) is done here. Prints the cpio's path; progress and
# errors go to stderr. The cpio is rebuilt when the package list changes;
# delete it to fetch newer packages.
#
#   arm64-rootfs.sh
#   KBENCH_CACHE      cache directory (default: <kbench>/.cache)
#
# Host needs: apt, dpkg-deb, cpio. Exit status: 0, 2 bad usage, 3 a failed
# download or a missing host package.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

[[ ${1:-} == -h || ${1:-} == --help ]] && {
	help_from_header "$0" 16 20
	exit 0
}
(($# == 0)) || die_usage "no arguments expected"
cache=${KBENCH_CACHE:-$top/.cache}

# run_all.sh and its Makefile listing (bash, dash as make's /bin/sh,
# make, coreutils' timeout, mawk, sed, grep, find), the guest's /init
# (mount, util-linux's dmesg, tar, gzip), the collection's libraries
# (libcap2, libnuma1; memcg_ks runs cat), procps for debugging, the
# users (base-passwd) and base-files' /etc. usr-is-merged says the /usr
# merge is done (below), else apt would pick usrmerge and its perl.
packages=(
	base-files base-passwd bash dash coreutils make mawk sed grep findutils
	tar gzip mount util-linux procps libcap2 libnuma1 usr-is-merged
)
# What the guest would never read (gconv: iconv's charset modules).
excludes=(--exclude=./usr/share/doc --exclude=./usr/share/man
	--exclude=./usr/share/info --exclude=./usr/share/locale
	--exclude=./usr/share/lintian --exclude=./usr/lib/aarch64-linux-gnu/gconv)
format=1	# bump when the layout below changes
key=$(printf '%s\n' "$format" "${packages[@]}" | sha256sum | cut -c1-12)
out=$cache/vm/arm64-root-$key.cpio

if [[ -f $out ]]; then
	echo "$out"
	exit 0
fi
missing=()
command -v apt-get >/dev/null || missing+=(apt)
command -v dpkg-deb >/dev/null || missing+=(dpkg)
command -v cpio >/dev/null || missing+=(cpio)
((${#missing[@]} == 0)) ||
	die 3 "missing host packages: ${missing[*]} (apt-get install ${missing[*]})"

mkdir -p "$cache/vm"
exec 9>"$cache/vm/.lock-arm64-rootfs"
flock 9
if [[ -f $out ]]; then
	echo "$out"
	exit 0
fi
work=$(mktemp -d "$cache/vm/arm64-rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fetch_debs: the packages and their whole dependency closure (the
# private dpkg status is empty) into $work/debs.
fetch_debs() {
	local rc=0

	mkdir -p "$work/debs/partial"
	msg "fetching ${#packages[@]} Debian arm64 packages and their dependencies"
	"$top/scripts/foreign-apt.sh" arm64 apt-get -q -y --download-only \
		-o "Dir::Cache::archives=$work/debs/" install "${packages[@]}" \
		>"$work/fetch.log" 2>&1 || rc=$?
	if ((rc != 0)); then
		grep -E '^(E|W):|foreign-apt' "$work/fetch.log" >&2 || tail -n 10 "$work/fetch.log" >&2
		die 3 "cannot fetch the arm64 packages of the guest's root filesystem"
	fi
}

# unpack_debs: every package into $work/root, merged /usr as Debian 12
# installs it (/bin, /sbin, /lib are links into /usr).
unpack_debs() {
	local deb root=$work/root

	mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib"
	ln -s usr/bin "$root/bin"
	ln -s usr/sbin "$root/sbin"
	ln -s usr/lib "$root/lib"
	for deb in "$work"/debs/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x --keep-directory-symlink "${excludes[@]}" -C "$root" ||
			die 3 "cannot unpack $(basename "$deb")"
	done
}

# configure_root: the maintainer scripts' part the guest relies on.
configure_root() {
	local root=$work/root f

	cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
	cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
	[[ -e $root/usr/bin/awk ]] || ln -s mawk "$root/usr/bin/awk"
	[[ -e $root/usr/bin/sh ]] || ln -s dash "$root/usr/bin/sh"
	mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/run"
	chmod 1777 "$root/tmp"
	for f in usr/bin/bash usr/bin/sh usr/bin/awk usr/bin/make \
		usr/bin/timeout usr/bin/mount usr/bin/dmesg usr/bin/tar \
		usr/lib/ld-linux-aarch64.so.1 usr/lib/aarch64-linux-gnu/libcap.so.2 \
		usr/lib/aarch64-linux-gnu/libnuma.so.1; do
		[[ -e $root/$f ]] || die 3 "the arm64 root filesystem has no /$f"
	done
}

fetch_debs
unpack_debs
configure_root
(cd "$work/root" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) \
	>"$work/cpio" || die 3 "cannot pack the root filesystem"
mv "$work/cpio" "$out"
debs=("$work"/debs/*.deb)
msg "arm64 root filesystem: ${#debs[@]} packages," \
	"$(($(stat -c %s "$out") / 1048576)) MiB in $out"
echo "$out"
