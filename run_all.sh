#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build what is missing and run the kbench collection (or part of it) as one
# KTAP stream: one result per test program, its own KTAP nested behind "# "
# as the kselftest runner does, totals at the end. Exits non-zero when any
# program is "not ok".
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=${0##*/}
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog [OPTION]...
Build the kbench collection (what is missing) and run its test programs,
printing one KTAP stream on stdout.

  -t, --test NAME     run only test directory NAME (repeatable, or a
                      comma list); default: every test directory
  -l, --list          list the test programs and exit
      --json DIR      keep every program's results in DIR/<program>.json
                      and the KTAP stream in DIR/run_all.ktap (compare
                      two runs with scripts/compare.py)
  -r, --repeat [N]    run every program N times (default 1), interleaved
                      across programs; DIR/<program>.json keeps each
                      repetition's figures beside their summary; without
                      N, as many as the design needs (see below)
      --vs-prefix CMD A/B on this kernel: run every program plainly (the
                      base) and as 'CMD PROG ARGS' (the candidate),
                      alternating ABBA..., results in DIR/base and
                      DIR/candidate, then print the comparison
                      ('--vs-prefix env' is an A/A run)
      --base-prefix CMD  with --vs-prefix: run the base as 'CMD PROG ARGS'
                      too (an A/B of two wrappers, e.g. one filter
                      against another)
      --vs-kernel IMG A/B of two kernels: with --kernel BASE, boot BASE and
                      IMG in turn (ABBA..., one run per boot and --repeat),
                      then print the comparison (see --kernel); repeat it
                      for N kernels side by side (rotated each round)
      --fail-above PCT  with --vs-*: exit 1 when a row is significantly
                      slower with its 95% interval above PCT % (compare.py)
      --report FILE   with --json: write an HTML report of the run (or of
                      the A/B comparison) to FILE at the end
                      (scripts/report.py; needs python3-matplotlib)
      --full          run the programs' full, seed-sized measurements
                      (no runner timeout; can take tens of minutes)
  -o, --timeout SECS  override every program's timeout (0 = none); the
                      default is the 'timeout=' of the test's settings file
      --nest STYLE    how a program's own KTAP is nested: 'indent' (default:
                      4 spaces and a '# Subtest:' line, KTAP v1 nesting that
                      the kernel's kunit.py parser reads per row) or 'hash'
                      (every line behind '# ', as run_kselftest.sh prints)
      --kernel IMAGE  boot IMAGE under virtme-ng/QEMU and run there instead
                      (see scripts/vm_run.sh -h; e.g. debian-6.1)
      --arch ARCH     with --kernel: x86_64 (default) or arm64 (cross-built
                      collection, arm64 guest under TCG)
      --icount        with --kernel: TCG under QEMU's instruction counter,
                      figures in guest instructions, exact whatever the
                      host does (docs/exact-runs.md)
      --where         with --vs-kernel and --icount: the functions that
                      moved each exact or near row of syscall_overhead
                      that moved (kbench where; docs/where.md)
      --where-with HOW
                      how --where counts: plugin (kbench's QEMU plugin,
                      exact; the default, ftrace when it cannot be
                      provisioned) or ftrace (function_graph)
      --no-build      do not run make first (nor set up packages)
      --no-install    do not install the Debian packages the collection
                      lacks (packages.txt): print their install line, exit 4
  -h, --help          this help

Default --repeat with --vs-prefix or --vs-kernel: the design's, the
fewest repetitions per side with which one changed row among the rows
compared can be flagged (7 for the whole collection, 6 for
syscall_overhead alone; python3 -m kbtools.design), said before the
run starts. An explicit --repeat below it runs, with a warning here and
in the comparison (its rows read no-verdict, not same). With --icount
(--vs-kernel): one boot per candidate, judged against the base kernel's
calibration (three boots of the base the first time, then cached per
image).

Environment: KSRC=/path/to/linux picks the kernel tree that supplies the
kselftest harness (default: one provisioned from Debian's linux-source
package into .cache/); KSFT_MACHINE_SLOW=yes makes every program scale its
work down; KSELFTEST_<PROGRAM>_ARGS adds arguments to one program, as with
the kernel's runner; KBENCH_MERGE=host leaves each repetition's JSON
in DIR/repetitions/SIDE/K/ and compares nothing (--repeat then needs
its N); KBENCH_TIMEOUT_FACTOR=N multiplies every program's timeout
unless --timeout; KBENCH_ICOUNT_DETERMINISTIC=0 boots --icount's plain
guest instead of the deterministic one (docs/exact-runs.md).

The run is kbench run's (scripts/kbtools/runner.py), once
scripts/setup.sh has installed python3 on a bare root (without python3
and with --no-build: exit 4). A guest that --kernel boots runs the
plan that the host made of these options (scripts/guest/run_plan.sh:
no python3 there); the host merges, compares and reports.

Output: for each program "# selftests: kbench/DIR: PROG", the program's own
KTAP nested (figures on "# NAME: key=value ..." lines before each result),
then "ok N selftests: kbench/DIR: PROG" (or "# SKIP", or
"not ok ... # exit=RC" / "# TIMEOUT"); with --repeat or --vs-prefix the
title ends with "(SIDE, repetition K of N)". Exit status: 0 when nothing
failed, 1 when a program failed or timed out (or --fail-above), 2 on bad
usage, 4 when packages are missing (run as root on Debian or Ubuntu, it
installs them first, saying which; scripts/setup.sh).
EOF
}

all_tests() {
	make -s --no-print-directory -C "$top" list
}

tests=()
json_dir=
repeat=
vs_prefix=
vs_prefix_set=
base_prefix=
base_cmd=()
fail_above=
timeout_override=
build=1
no_install=
nest=indent

add_tests() {
	local t
	IFS=, read -r -a names <<<"$1"
	for t in "${names[@]}"; do
		[[ -n $t ]] || die_usage "empty test name in '$1'"
		[[ -f $top/$t/Makefile && -f $top/$t/config ]] ||
			die_usage "unknown test '$t' (known: $(all_tests))"
		tests+=("$t")
	done
}

# In a guest (--kernel) or A/B of kernels (--vs-kernel): the front
# door's task (kbench run: scripts/kbtools/vm.py, ab.py), which runs this
# script inside each guest. scripts/kbtools/run.py hands back on the
# same list: the two never call each other in a loop. Its python3 and
# every one this run starts is Debian's when there is one (scripts/lib.bash).
pydir=${KBENCH_CACHE:-$top/.cache}/python
use_debian_python "$pydir"
for arg in "$@"; do
	case ${arg%%=*} in
	--kernel | --vs-kernel)
		KBENCH_PROG=$prog exec "$top/kbench" run "$@"
		;;
	esac
done
# The command line as given, for kbench run on a host (below).
argv=("$@")

while (($#)); do
	case $1 in
	-t | --test)
		need_value "$1" "a test name" $#
		add_tests "$2"
		shift
		;;
	--test=*) add_tests "${1#*=}" ;;
	-l | --list) ;;
	--json)
		need_value "$1" "a directory" $#
		json_dir=$2
		shift
		;;
	--json=*) json_dir=${1#*=} ;;
	-r | --repeat)
		# Without a number: as many as the design needs.
		if (($# >= 2)) && [[ $2 =~ ^[0-9]+$ ]]; then
			repeat=$2
			shift
		else
			repeat=design
		fi
		;;
	--repeat=*) repeat=${1#*=} ;;
	--vs-prefix)
		need_value "$1" "a command" $#
		vs_prefix=$2
		vs_prefix_set=1
		shift
		;;
	--vs-prefix=*)
		vs_prefix=${1#*=}
		vs_prefix_set=1
		;;
	--base-prefix)
		need_value "$1" "a command" $#
		base_prefix=$2
		shift
		;;
	--base-prefix=*) base_prefix=${1#*=} ;;
	--arch | --arch=*)
		die_usage "option '--arch' needs --kernel IMAGE (it picks the guest's architecture)"
		;;
	--icount)
		die_usage "option '--icount' needs --kernel IMAGE (it is how the guest runs)"
		;;
	--fail-above)
		need_value "$1" "a percentage" $#
		fail_above=$2
		shift
		;;
	--fail-above=*) fail_above=${1#*=} ;;
	--report)
		need_value "$1" "a file name" $#
		shift
		;;
	--report=* | --full) ;;
	-o | --timeout)
		need_value "$1" "a number of seconds" $#
		timeout_override=$2
		shift
		;;
	--timeout=*) timeout_override=${1#*=} ;;
	--nest)
		need_value "$1" "'indent' or 'hash'" $#
		nest=$2
		shift
		;;
	--nest=*) nest=${1#*=} ;;
	--no-build) build= ;;
	--no-install) no_install=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown option '$1'" ;;
	esac
	shift
done

[[ $nest == indent || $nest == hash ]] ||
	die_usage "invalid --nest style '$nest' (use indent or hash)"
if [[ -n $timeout_override && ! $timeout_override =~ ^[0-9]+$ ]]; then
	die_usage "invalid timeout '$timeout_override': not a number of seconds"
fi
if [[ -n $repeat && $repeat != design ]]; then
	check_repeat "$repeat"
fi
if [[ -n $vs_prefix_set ]]; then
	read -r -a prefix <<<"$vs_prefix"
	((${#prefix[@]})) || die_usage "empty --vs-prefix command"
	command -v "${prefix[0]}" >/dev/null ||
		die_usage "--vs-prefix: command '${prefix[0]}' not found"
	read -r -a base_cmd <<<"$base_prefix"
	if ((${#base_cmd[@]})); then
		command -v "${base_cmd[0]}" >/dev/null ||
			die_usage "--base-prefix: command '${base_cmd[0]}' not found"
	fi
fi
[[ -z $base_prefix || -n $vs_prefix_set ]] ||
	die_usage "--base-prefix needs --vs-prefix (it wraps the base side)"
if [[ -n $fail_above ]]; then
	[[ -n $vs_prefix_set ]] ||
		die_usage "--fail-above needs --vs-prefix or --vs-kernel (or use scripts/compare.py)"
	check_fail_above "$fail_above"
fi
if [[ -n $json_dir ]]; then
	check_json_dir "$json_dir"
fi
# The run is kbench run's (scripts/kbtools/runner.py: the plan made once
# by kbtools.plan, the stream, merges, comparison and report), once
# setup.sh has installed python3 on a bare root. A guest that kbench
# boots runs the host's plan of it (scripts/guest/run_plan.sh), not this.
if [[ -n $build ]] && ! command -v python3 >/dev/null; then
	"$top/scripts/setup.sh" ${no_install:+--no-install} run_all.sh || exit
	use_debian_python "$pydir"
fi
command -v python3 >/dev/null ||
	die 4 "python3 is missing: scripts/setup.sh run_all.sh installs it (run_kselftest.sh runs the programs without it)"
KBENCH_PROG=$prog exec "$top/kbench" run "${argv[@]}"
