#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# proc_create's figures beside Table 28-3 of The Linux Programming
# Interface (x86-32, Linux 2.6.27, 100,000 creations per cell) with the
# ratio book / here (how many times faster this machine creates).
#
# Usage: bench/proc_create_vs_book.sh [JSON]
#   JSON  the --json file of a proc_create run (a --full run for the
#         book's counts); without it, runs 'proc_create -m none' (quick)
# Environment: KSRC (kernel tree for the build, see lib/kbench.mk).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

case "${1:-}" in
-h|--help)
	sed -n '/^# Usage/,/^# Environment/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac
if [ $# -gt 1 ]; then
	echo "proc_create_vs_book.sh: too many arguments (see --help)" >&2
	exit 2
fi

if [ $# -eq 1 ]; then
	json=$1
	if [ ! -r "$json" ]; then
		echo "proc_create_vs_book.sh: cannot read '$json'" >&2
		exit 2
	fi
else
	make -s -C "$here/proc_create" >/dev/null
	json=$(mktemp /tmp/proc_create_vs_book.XXXXXX.json)
	trap 'rm -f "$json"' EXIT
	rc=0
	"$here/proc_create/proc_create" -m none --json "$json" >/dev/null || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "proc_create_vs_book.sh: proc_create exited with $rc" >&2
		exit "$rc"
	fi
fi

python3 - "$json" <<'PY'
import json
import sys

# Table 28-3: elapsed s, parent CPU s, rate per size.
BOOK = {
    "fork": [(22.27, 7.99, 4544), (26.38, 8.98, 4135), (126.93, 52.55, 1276)],
    "vfork": [(3.52, 2.49, 28955), (3.55, 2.50, 28621), (3.53, 2.51, 28810)],
    "clone": [(2.97, 2.14, 34333), (2.98, 2.13, 34217), (2.93, 2.10, 34688)],
    "fork_exec": [(135.72, 12.39, 764), (146.15, 16.69, 719),
                  (260.34, 61.86, 435)],
    "vfork_exec": [(107.36, 6.27, 969), (107.81, 6.35, 964),
                   (107.97, 6.38, 960)],
}
SIZES = ["1.70MB", "2.70MB", "11.70MB"]
ORDER = ["fork", "vfork", "clone", "fork_exec", "vfork_exec", "posix_spawn",
         "posix_spawn_exec", "clone3_vfork"]
N = 100000

doc = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in doc["rows"]}
print("proc_create: %s, kernel %s, %s CPUs; book: x86-32, Linux 2.6.27" % (
    doc.get("cmdline", "?"), doc["kernel"]["release"],
    doc["machine"]["cpus"]))
print("seconds for %d creations: elapsed (parent CPU); rate = creations per "
      "elapsed second; x = book elapsed / ours" % N)
print("%-17s %-8s %27s %27s %8s" % ("method", "size", "here", "book", "x"))
for m in ORDER:
    for i, size in enumerate(SIZES):
        r = rows.get("%s@%s" % (m, size))
        if r is None or r.get("status") != "ok":
            continue
        e = r["extra"]
        k = N / e["creations"]
        here = "%8.2f (%6.2f) %7.0f/s" % (e["elapsed_s"] * k,
                                          e["parent_cpu_s"] * k,
                                          e["rate_per_s"])
        book = BOOK.get(m)
        if book:
            b = book[i]
            print("%-17s %-8s %27s %8.2f (%6.2f) %7d/s %7.1fx" % (
                m, size, here, b[0], b[1], b[2], b[0] / (e["elapsed_s"] * k)))
        else:
            print("%-17s %-8s %27s %27s %8s" % (m, size, here, "-", "-"))
PY
