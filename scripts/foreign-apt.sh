#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run apt-get or apt-cache on Debian's package indices of another
# architecture (arm64, i386, ...) kept in the collection's cache, as if
# that architecture were the native one, without touching the host's APT
# or dpkg configuration (no dpkg --add-architecture, no global apt-get
# update): the host's sources, mirrors, proxies and keys, a private state.
# The indices are fetched on first use and again when older than
# KBENCH_APT_MAX_AGE seconds (default 21600). A mirror caught in the middle
# of a sync fails one index: the update is retried, then an index that
# still fails is left out with a warning (its packages may then be
# missing, which the command itself reports).
#
#   foreign-apt.sh ARCH apt-get|apt-cache ARG...
#   foreign-apt.sh ARCH update          fetch the indices now
#   KBENCH_CACHE      cache directory (default: <kbench>/.cache)
#
# Exit status: the command's; 3 when no index of ARCH could be fetched
# (update: when any index failed); 2 bad usage.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

usage() {
	help_from_header "$0" 15 20
}

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
(($# >= 2)) || die_usage "expected ARCH and apt-get, apt-cache or update"
arch=$1
tool=$2
shift 2
[[ $arch =~ ^[a-z0-9]+$ ]] || die_usage "invalid architecture '$arch'"
case $tool in
apt-get | apt-cache) ;;
update) (($# == 0)) || die_usage "update takes no arguments" ;;
*) die_usage "unknown command '$tool' (apt-get, apt-cache or update)" ;;
esac
max_age=${KBENCH_APT_MAX_AGE:-21600}
[[ $max_age =~ ^[0-9]+$ ]] || die_usage "invalid KBENCH_APT_MAX_AGE '$max_age'"

cache=${KBENCH_CACHE:-$top/.cache}
d=$cache/apt/$arch
# Native ARCH only, an empty dpkg status (nothing "installed": a
# dependency closure is complete), private lists and archives. Downloads
# as root, not as _apt, which may not enter the cache directory.
opts=(
	-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
	-o "Dir::State=$d/state" -o "Dir::State::status=$d/state/status"
	-o "Dir::Cache=$d/cache" -o "Acquire::Languages=none"
	-o "APT::Sandbox::User=root" -o "APT::Install-Recommends=false"
)

# The newest index's age in seconds; a large number when there is none.
lists_age() {
	local newest

	newest=$(find "$d/state/lists" -maxdepth 1 -name '*_Packages*' \
		-printf '%T@\n' 2>/dev/null | sort -n | tail -n 1)
	[[ -n $newest ]] || { echo 999999999; return; }
	echo $(($(date +%s) - ${newest%.*}))
}

# update_lists: apt-get update, three tries. Returns 1 when an index still
# failed (it is left out, marked for the next use to fetch again), exits
# 3 when no index of ARCH is there at all.
update_lists() {
	local try log=$d/update.log

	msg "fetching Debian's $arch package indices into $d"
	for try in 1 2 3; do
		# --error-on=any: a failed fetch is an error, not a warning.
		if apt-get "${opts[@]}" -q update --error-on=any >"$log" 2>&1; then
			rm -f "$d/incomplete"
			return 0
		fi
		if ((try < 3)); then sleep $((try * 15)); fi
	done
	touch "$d/incomplete"
	if [[ $(lists_age) == 999999999 ]]; then
		grep -E '^(E|W):' "$log" >&2 || tail -n 5 "$log" >&2
		die 3 "cannot fetch Debian's $arch package indices (a mirror or network problem; see $log)"
	fi
	msg "warning: some of Debian's $arch package indices failed (a mirror problem?); using the others:"
	grep -E '^(E|W):' "$log" | sed 's/^/    /' >&2 || true
	return 1
}

mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial"
touch "$d/state/status"
exec 9>"$d/.lock"
flock 9
if [[ $tool == update ]]; then
	update_lists || exit 3
	exit 0
fi
if [[ -e $d/incomplete ]] || (($(lists_age) > max_age)); then
	update_lists || true
fi
exec "$tool" "${opts[@]}" "$@"
