#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest's runner of the plan that the host wrote (kbtools.plan.to_file:
# which program runs when, under which title and timeout, with which
# command line): runs each step in its test's directory, nests its KTAP
# as kbench run does, prints its result line and the totals; or, for
# --list, prints the programs listed. It decides nothing of its own. Not
# meant to be started by hand.
#
#   run_plan.sh TOP PLAN_FILE
#
# Exit status: 0 when nothing failed, 1 when a step failed or timed out.
set -euo pipefail

(($# == 2)) || {
	echo "usage: ${0##*/} TOP PLAN_FILE (the guest's runner of kbench's plan)" >&2
	exit 2
}
top=$1
plan_file=$2
nest=indent
planned=
n=0 pass=0 fail=0 skip=0
ktap_copy=

# plan STEPS NEST KTAP: the KTAP header; the stream copied to KTAP ("" none).
plan() {
	planned=1
	nest=$2
	if [[ -n $3 ]]; then
		mkdir -p "${3%/*}"
		exec > >(tee "$3")
		ktap_copy=$!
	fi
	echo "TAP version 13"
	echo "1..$1"
}

# Nest a program's KTAP under its result line TITLE, line by line.
nest_output() {
	local title=$1 line subtest_done=
	while IFS= read -r line; do
		if [[ $nest == hash ]]; then
			printf '# %s\n' "$line"
			continue
		fi
		printf '    %s\n' "$line"
		# KTAP v1: the subtest's name follows its version line.
		if [[ -z $subtest_done && $line =~ ^K?TAP\ version ]]; then
			printf '    # Subtest: %s\n' "$title"
			subtest_done=1
		fi
	done
}

# listed DIR:PROG: one line of --list.
listed() {
	printf '%s\n' "$1"
}

# step TEST SECS TITLE JSON COMMAND...: one run of one program.
step() {
	local test=$1 secs=$2 title=$3 json=$4 rc=0
	shift 4
	n=$((n + 1))
	echo "# $title"
	[[ -z $json ]] || mkdir -p "${json%/*}"
	{ (cd "$top/$test" && exec "$@" 2>&1 </dev/null) | nest_output "$title"; } || rc=$?
	case $rc in
	0)
		echo "ok $n $title"
		pass=$((pass + 1))
		;;
	4)
		echo "ok $n $title # SKIP"
		skip=$((skip + 1))
		;;
	124 | 137)
		echo "not ok $n $title # TIMEOUT $secs seconds"
		fail=$((fail + 1))
		;;
	*)
		echo "not ok $n $title # exit=$rc"
		fail=$((fail + 1))
		;;
	esac
}

# shellcheck source=/dev/null
. "$plan_file"
[[ -n $planned ]] || exit 0
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
if [[ -n $ktap_copy ]]; then
	# Let tee write the last lines before anyone reads the copy.
	exec >&-
	wait "$ktap_copy" 2>/dev/null || true
fi
((fail == 0))
