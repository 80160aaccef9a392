#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: scripts/setup.sh [--no-install] USE
# Set up the Debian packages a kbench command needs: those of USE's
# purposes in packages.txt (USE: run_all.sh, check, check-all or .ci/run).
# As root on Debian or Ubuntu it installs the missing ones, one line
# saying which and how to undo it; otherwise, or with --no-install, it
# says what is missing and how to install it, and exits 4. Messages go to
# stderr, starting with the command ('make check: ...'). Exit status: 0
# all there, 4 missing, 2 bad usage.
#
# The work is scripts/packages.py's. This bash part gets python3 onto a
# bare Debian root: without python3 it installs USE's missing packages
# (python3 among them) itself, as root, else prints their install line.
set -euo pipefail

top=$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)
prog=setup.sh
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

no_install=
use=
while (($#)); do
	case $1 in
	--no-install) no_install=1 ;;
	-h | --help)
		help_from_header "$0" 4 11
		exit 0
		;;
	-*) die_usage "unknown option '$1'" ;;
	*)
		[[ -z $use ]] || die_usage "one USE only ('$use', then '$1')"
		use=$1
		;;
	esac
	shift
done
[[ -n $use ]] || die_usage "no USE (run_all.sh, check, check-all or .ci/run)"
setup=("$top/scripts/packages.py" setup ${no_install:+--no-install} "$use")
command -v python3 >/dev/null && exec python3 "${setup[@]}"

# USE's packages that dpkg does not have installed (harness: not with KSRC).
not_installed() {
	local have p
	have=" $(dpkg-query -W -f='${db:Status-Status}:${Package} ' "$@" 2>/dev/null) " || true
	for p; do
		[[ $have == *" installed:$p "* ]] || echo "$p"
	done
}
mapfile -t want < <(awk -v use="$use" -v ksrc="${KSRC:-}" '
	$1 == "use" && $2 == use { for (i = 3; i <= NF; i++) p[$i] = 1 }
	$1 == "package" && ($2 in p) && !(ksrc != "" && $2 == "harness") { print $3 }
' "$top/packages.txt")
((${#want[@]})) || die_usage "unknown USE '$use' (see packages.txt)"
# How USE is run: a file as it is, a make target with make.
prog=$use
[[ $use == *[./]* ]] || prog="make $use"
mapfile -t missing < <(not_installed "${want[@]}")
line="apt-get install --no-install-recommends ${missing[*]}"
if [[ -n $no_install || $(id -u) != 0 ]] ||
	! command -v apt-get >/dev/null; then
	msg "python3 and more are missing: install them (as root, on Debian or Ubuntu;" \
		"packages.txt says what each is for), then run again:"
	echo "  $line" >&2
	exit 4
fi
export DEBIAN_FRONTEND=noninteractive
# Has apt a version to install of each? (apt-cache show succeeds when it
# finds any.)
candidates() {
	local n
	n=$(apt-cache policy "${missing[@]}" 2>/dev/null | grep -c '^  Candidate: [^(]') || true
	((n >= ${#missing[@]}))
}
if ! candidates; then
	msg "apt's package indices lack some of them: apt-get update"
	apt-get -qq update >/dev/null ||
		die 4 "apt-get update failed (its messages above): nothing installed"
	candidates || die 4 "apt has no version to install of some of them, even" \
		"after apt-get update (its messages above): nothing installed"
fi
msg "installing ${#missing[@]} packages: ${missing[*]}" \
	"(undo: apt-get purge --autoremove ${missing[*]})"
rc=0
apt-get -qq -y install --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
mapfile -t left < <(not_installed "${missing[@]}")
if ((rc != 0 || ${#left[@]})); then
	msg "apt-get install failed (exit status $rc; its messages above, all of" \
		"its output in /var/log/apt/term.log)"
	got=()
	for p in "${missing[@]}"; do
		[[ " ${left[*]} " == *" $p "* ]] || got+=("$p")
	done
	((${#got[@]} == 0)) ||
		msg "installed before it stopped: ${got[*]} (undo: apt-get purge --autoremove ${got[*]})"
	msg "still missing: ${left[*]} (dpkg -l shows their state)"
	exit 4
fi
exec python3 "${setup[@]}"
