#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kbench pmqtest against rt-tests' pmqtest on the same parameters, in one
# run: both write --json, the SAME reader (bench/rt_tests_json.py) reads
# both files, and the table shows Min/Avg/Max side by side with the ratio
# of the averages (kbench / rt-tests). Our average must not exceed theirs
# by more than 10 % (the measurement must add no cost).
#
# Usage: bench/pmqtest_vs_rttests.sh [ROUNDS]
# Environment: LOOPS (20000), INTERVAL (100 us), PRIO (80), ROUNDS (3),
#   RTTESTS_PMQTEST (/usr/bin/pmqtest), KSRC (kernel tree for the build),
#   MAX_RATIO (1.10).
# Each configuration runs ROUNDS times, alternating which tool goes first;
# the table shows the median of the rounds. Runs without privilege for
# SCHED_FIFO skip the -p configuration.
# Exit: 0 ok, 1 a ratio above MAX_RATIO or a JSON mismatch, 4 no rt-tests.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
ROUNDS=${1:-${ROUNDS:-3}}
if (($# > 1)) || [[ ! $ROUNDS =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: $0 [ROUNDS]   (ROUNDS a positive number, default 3)" >&2
	exit 2
fi
LOOPS=${LOOPS:-20000}
INTERVAL=${INTERVAL:-100}
PRIO=${PRIO:-80}
MAX_RATIO=${MAX_RATIO:-1.10}
theirs=${RTTESTS_PMQTEST:-/usr/bin/pmqtest}
ours=$top/pmqtest/pmqtest

if [[ ! -x $theirs ]]; then
	echo "rt-tests pmqtest not found at $theirs (apt-get install rt-tests)" >&2
	exit 4
fi
make -s -C "$top/pmqtest" ${KSRC:+KSRC="$KSRC"} >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configs=("-S -l $LOOPS -i $INTERVAL -q")
if "$ours" -p "$PRIO" -l 1 -q >/dev/null 2>&1; then
	configs+=("-S -l $LOOPS -i $INTERVAL -q -p $PRIO")
else
	echo "# no SCHED_FIFO privilege: skipping the -p $PRIO configuration"
fi

echo "# rt-tests: $theirs ($("$theirs" --help 2>&1 | head -1))"
echo "# kbench:   $ours"
echo "# $ROUNDS round(s) per configuration, alternating order; $(nproc) CPUs"
for c in "${!configs[@]}"; do
	for ((r = 1; r <= ROUNDS; r++)); do
		order=(theirs ours)
		((r % 2)) || order=(ours theirs)
		for who in "${order[@]}"; do
			bin=$theirs
			[[ $who == ours ]] && bin=$ours
			out="$tmp/c${c}_r${r}_$who"
			# shellcheck disable=SC2086 # the options are words
			"$bin" ${configs[$c]} --json="$out.json" >"$out.txt"
		done
	done
	echo "${configs[$c]}" >"$tmp/c${c}.cfg"
done

python3 "$here/rt_tests_json.py" compare "$tmp" "${#configs[@]}" "$ROUNDS" "$MAX_RATIO"
