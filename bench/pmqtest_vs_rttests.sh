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

PYTHONPATH=$here python3 - "$tmp" "${#configs[@]}" "$ROUNDS" "$MAX_RATIO" <<'PY'
import statistics
import sys

import rt_tests_json as rj

tmp, nconf, rounds, max_ratio = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
status = 0


def med(vals):
    return statistics.median(vals)


for c in range(nconf):
    cfg = open(f"{tmp}/c{c}.cfg").read().strip()
    docs = {w: [rj.load(f"{tmp}/c{c}_r{r}_{w}.json") for r in range(1, rounds + 1)]
            for w in ("theirs", "ours")}
    print(f"\n## pmqtest {cfg}  (median of {rounds} round(s), us)")
    print(f"{'pair':<6}{'rt-tests Min/Avg/Max':>24}{'kbench Min/Avg/Max':>24}"
          f"{'Avg ratio':>11}{'samples (rt/kb)':>18}")
    npairs = len(rj.pairs(docs["theirs"][0]))
    for i in range(npairs):
        row = {}
        for w in ("theirs", "ours"):
            ps = [rj.pairs(d)[i] for d in docs[w]]
            row[w] = (med([p["min"] for p in ps]), med([p["avg"] for p in ps]),
                      med([p["max"] for p in ps]), med([p["samples"] for p in ps]))
        t, o = row["theirs"], row["ours"]
        ratio = o[1] / t[1] if t[1] else float("nan")
        print(f"{i:<6}{t[0]:>8.0f}{t[1]:>8.2f}{t[2]:>8.0f}"
              f"{o[0]:>8.0f}{o[1]:>8.2f}{o[2]:>8.0f}{ratio:>11.3f}"
              f"{t[3]:>9.0f}/{o[3]:<8.0f}")
    wt = med([rj.weighted_avg(d) for d in docs["theirs"]])
    wo = med([rj.weighted_avg(d) for d in docs["ours"]])
    ratio = wo / wt
    verdict = "ok" if ratio <= max_ratio else f"FAIL: above {max_ratio}"
    if ratio > max_ratio:
        status = 1
    print(f"{'all':<6}{'':>8}{wt:>8.2f}{'':>8}{'':>8}{wo:>8.2f}{'':>8}"
          f"{ratio:>11.3f}   {verdict}")
    # Our file read by the same code, and laid out like theirs.
    problems = rj.schema_diff(rj.generalise(docs["theirs"][0]),
                              rj.generalise(docs["ours"][0]))
    for p in problems:
        print(f"# JSON difference: {p}")
    print("# JSON: both files read by rt_tests_json.pairs(); rt-tests keys and types in ours: "
          + ("same" if not problems else f"{len(problems)} difference(s)"))
    rows = docs["ours"][0].get("rows", [])
    print(f"# JSON: kbench rows in ours: {', '.join(r['name'] for r in rows)}")
    if problems or not rows:
        status = 1
print("\nAvg ratio = kbench / rt-tests (lower is better). Both stop every pair "
      "when the first one reaches -l; 'all' is the sample-weighted mean.")
sys.exit(status)
PY
