#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each libFuzzer harness for a fixed time (or a fixed number of
# runs); fail on the first crash, leak, timeout or out-of-memory and
# leave the reproducer.
#
# Usage: fuzz/run.sh [-o OUT] [-t SECONDS | -r RUNS] HARNESS...
#   -o OUT      where the harnesses were built (default fuzz/build)
#   -t SECONDS  time per harness (default 30): exploration
#   -r RUNS     RUNS inputs per harness with a fixed seed, from the
#               committed seeds only: the same inputs every time (make
#               check's regression run)
#   HARNESS     options, proc_stat, cgroup, netlink
# Each harness starts from the seeds in fuzz/corpus/HARNESS and (with -t)
# what earlier runs kept in OUT/corpus/HARNESS (new inputs go there),
# with the words of fuzz/HARNESS.dict when there is one. Prints
# one line of figures per harness (executions, coverage, corpus). A
# failure leaves OUT/artifacts/HARNESS-crash-SHA1 (or -leak-, -timeout-,
# -oom-) and prints the command that reproduces it. Exit 0 when every
# harness ran clean, 1 on a finding, 2 on bad usage.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$here/build seconds=30 runs=

usage() {
	echo "Usage: fuzz/run.sh [-o OUT] [-t SECONDS | -r RUNS] HARNESS..." >&2
	exit 2
}

while getopts o:t:r:h opt; do
	case $opt in
	o) out=$(cd "$OPTARG" && pwd) ;;
	t) seconds=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($#)) || usage
[[ $seconds =~ ^[1-9][0-9]*$ ]] || {
	echo "fuzz/run.sh: -t wants whole seconds, not '$seconds'" >&2
	usage
}
[[ -z $runs || $runs =~ ^[1-9][0-9]*$ ]] || {
	echo "fuzz/run.sh: -r wants a number of runs, not '$runs'" >&2
	usage
}
scratch=
trap '[[ -z $scratch ]] || rm -rf "$scratch"' EXIT

# How long: a fixed time from every kept input, or a fixed number of
# inputs with a fixed seed from the committed seeds alone (its new
# inputs go to a scratch directory): the same run every time.
run_limits() {
	if [[ -n $runs ]]; then
		scratch=${scratch:-$(mktemp -d "${TMPDIR:-/tmp}/kbench-fuzz.XXXXXX")}
		mkdir -p "$scratch/$1"
		limits=(-runs="$runs" -seed=1)
		corpora=("$scratch/$1" "$here/corpus/$1")
		# Without address randomization too: with it the coverage of a
		# fixed seed still differed by a few features from run to run.
		launch=(setarch "$(uname -m)" -R)
	else
		limits=(-max_total_time="$seconds")
		corpora=("$out/corpus/$1" "$here/corpus/$1")
		launch=()
	fi
}

# The longest input worth trying, per harness: an option value, a
# /proc/PID/status read, a few pages of cgroup text, a netlink datagram.
max_len() {
	case $1 in
	options) echo 256 ;;
	proc_stat) echo 4096 ;;
	cgroup) echo 16384 ;;
	*) echo 8192 ;;
	esac
}

# The figures of libFuzzer's last status line ("#N DONE cov: ...").
figures() {
	grep -E '^#[0-9]+' "$1" | tail -n 1 |
		sed -E 's/^#([0-9]+)[[:space:]]+[A-Z]+[[:space:]]+/\1 runs, /'
}

bad=0
for h; do
	bin=$out/fuzz_$h
	[[ -x $bin ]] || {
		echo "fuzz/run.sh: no harness $bin (make -C fuzz first)" >&2
		exit 2
	}
	[[ -d $here/corpus/$h ]] || {
		echo "fuzz/run.sh: no seed corpus $here/corpus/$h" >&2
		exit 2
	}
	mkdir -p "$out/corpus/$h" "$out/artifacts"
	log=$out/$h.log
	dict=()
	[[ -f $here/$h.dict ]] && dict=(-dict="$here/$h.dict")
	rc=0
	run_limits "$h"
	"${launch[@]}" "$bin" "${dict[@]}" "${limits[@]}" -timeout=10 -rss_limit_mb=2048 \
		-max_len="$(max_len "$h")" -close_fd_mask=3 \
		-artifact_prefix="$out/artifacts/$h-" -print_final_stats=1 \
		"${corpora[@]}" >"$log" 2>&1 || rc=$?
	if ((rc != 0)); then
		bad=$((bad + 1))
		grep -E -A 20 'ERROR:|runtime error:|deadly signal|Test unit written' \
			"$log" | head -n 40
		artifact=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
		echo "FAIL: $h: libFuzzer exited $rc (log: $log)"
		[[ -n $artifact ]] && echo "reproduce: $bin $artifact"
		continue
	fi
	echo "$h: $(figures "$log"): no crash"
done
((bad == 0))
