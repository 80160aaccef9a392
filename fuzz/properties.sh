#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Explore the property tests of the Python readers (tests/test_fuzz_*.py)
# with fresh random examples, as fuzz/run.sh explores with the libFuzzer
# harnesses. make check runs the same properties derandomized, a fixed
# regression run (tests/run.sh python_properties).
#
# Usage: fuzz/properties.sh [-n EXAMPLES] [MODULE...]
#   -n EXAMPLES  examples per property (default 1000; report.py's
#                properties a tenth), after the committed @example()s
#   MODULE       test_fuzz_kcidb, ... (default: every test_fuzz_*.py)
# A property that does not hold prints its smallest falsifying example
# as an @example(...) line, named again at the end with the test it
# belongs above: paste it there, fix what it shows, commit both; make
# check then runs it first, every time. The log is fuzz/build/
# properties.log. Exit 0 when every property held, 1 on a finding (or a
# property skipped), 2 on bad usage or without hypothesis.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
examples=1000 py=/usr/bin/python3

usage() {
	echo "Usage: fuzz/properties.sh [-n EXAMPLES] [MODULE...]" >&2
	exit 2
}

while getopts n:h opt; do
	case $opt in
	n) examples=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $examples =~ ^[1-9][0-9]*$ ]] || {
	echo "fuzz/properties.sh: -n wants a count of examples, not '$examples'" >&2
	usage
}
for m; do
	[[ $m == test_fuzz_* && -f $here/../tests/$m.py ]] || {
		echo "fuzz/properties.sh: no property module '$m' (tests/test_fuzz_*.py)" >&2
		usage
	}
done
"$py" -c 'import hypothesis' 2>/dev/null || {
	echo "fuzz/properties.sh: $py has no hypothesis (apt-get install python3-hypothesis)" >&2
	exit 2
}

mkdir -p "$here/build"
log=$here/build/properties.log
if (($#)); then
	run=("$py" -m unittest -v "$@")
else
	run=("$py" -m unittest discover -v -s . -p 'test_fuzz_*.py')
fi
(cd "$here/../tests" && KBENCH_FUZZ_MODE=explore KBENCH_FUZZ_EXAMPLES=$examples \
	"${run[@]}") 2>&1 | tee "$log" || true

mapfile -t found < <(grep '^@example(' "$log" || true)
if ((${#found[@]})); then
	echo
	echo "Falsifying examples: paste each above the test its comment names" \
		"(tests/), make it pass, commit both:"
	printf '    %s\n' "${found[@]}"
fi
grep -q '^OK' "$log" || {
	echo "FAIL: a property does not hold (log: $log)"
	exit 1
}
! grep -q 'skipped' "$log" || {
	echo "FAIL: a property was skipped, so it explored nothing (log: $log)"
	exit 1
}
