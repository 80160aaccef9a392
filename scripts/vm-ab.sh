#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of two kernels, or N side by side: boot the base and the candidate
# images in turn (ABBA..., for N kernels a rotation: each round starts
# one kernel later), one run of the collection per boot (the boot is the
# unit of replication), keep DIR/base/, DIR/candidate/ (and
# DIR/candidate2/... for more) with every boot as one repetition (and each
# boot's kernel log, console-K.log), and end with scripts/compare.py's
# table. run_all.sh --kernel BASE --vs-kernel CAND... hands its command
# line over to this.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=run_all.sh
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog --kernel BASE --vs-kernel CAND [--vs-kernel CAND2]...
                  [--repeat N] [--json DIR] [--fail-above PCT] [OPTION]...
Boot BASE and CAND in turn (ABBA..., N boots of each, default 5) under
virtme-ng/QEMU, run the collection once per boot with the same options,
and compare: one verdict per row (scripts/compare.py). With more
candidates, each round boots every kernel once, starting one kernel
later than the round before (B C1 C2, C1 C2 B, C2 B C1, ...), and the
table shows every candidate against BASE.

  -k, --kernel BASE       the base kernel (an IMAGE of scripts/vm-run.sh)
      --vs-kernel CAND    a candidate kernel (repeatable)
  -r, --repeat [N]        boots of each kernel (default: the design's,
                          the fewest with which one changed row among
                          those compared can be flagged: 6 for
                          syscall_overhead alone, 7 for the collection;
                          1 with --icount)
      --icount            exact mode (scripts/vm-run.sh --icount): figures
                          are guest instructions, each boot runs every
                          program twice so that each side shows its
                          spread, and one boot per kernel decides the
                          exact and near rows (compare.py)
      --json DIR          keep DIR/base/ and DIR/candidate/ (each program's
                          JSON with one repetition per boot; further
                          candidates in DIR/candidate2/, ...)
      --fail-above PCT    exit 1 when a row is significantly slower with
                          its 95% interval above PCT %
      --report FILE       with --json: the HTML report of the comparison
                          (scripts/report.py)

Every other option (-t, --full, -o, --accel, --memory, ...) goes to
scripts/vm-run.sh for every boot, and so do KSELFTEST_<PROG>_ARGS and
KSFT_MACHINE_SLOW. Output: one KTAP stream, a result per boot with the
boot's own stream nested, then the comparison as '# ' lines. Exit status:
0, 1 when a boot failed or --fail-above, 2 on bad usage.
EOF
}

base=
cands=()
repeat=
icount=
tests=()	# -t: the programs compared (all when none)
json_dir=
fail_above=
report=
pass_args=()

parse_args() {
	while (($#)); do
		case $1 in
		-k | --kernel)
			need_value "$1" "an image" $#
			base=$2
			shift
			;;
		--kernel=*) base=${1#*=} ;;
		--vs-kernel)
			need_value "$1" "an image" $#
			cands+=("$2")
			shift
			;;
		--vs-kernel=*) cands+=("${1#*=}") ;;
		-r | --repeat)
			# Without a number: the design's (kbtools.design).
			if (($# >= 2)) && [[ $2 =~ ^[0-9]+$ ]]; then
				repeat=$2
				shift
			else
				repeat=design
			fi
			;;
		--repeat=*) repeat=${1#*=} ;;
		-t | --test)
			need_value "$1" "a test name" $#
			tests+=("${2//,/ }")
			pass_args+=("$1" "$2")
			shift
			;;
		--test=*)
			tests+=("${1#*=}")
			pass_args+=("$1")
			;;
		--json)
			need_value "$1" "a directory" $#
			json_dir=$2
			shift
			;;
		--json=*) json_dir=${1#*=} ;;
		--fail-above)
			need_value "$1" "a percentage" $#
			fail_above=$2
			shift
			;;
		--fail-above=*) fail_above=${1#*=} ;;
		--report)
			need_value "$1" "a file name" $#
			report=$2
			shift
			;;
		--report=*) report=${1#*=} ;;
		--icount)
			icount=1
			pass_args+=("$1")
			;;
		--vs-prefix | --vs-prefix=*)
			die_usage "--vs-prefix and --vs-kernel do not combine"
			;;
		-h | --help)
			usage
			exit 0
			;;
		*) pass_args+=("$1") ;;
		esac
		shift
	done
	[[ -n $base ]] || die_usage "--vs-kernel needs --kernel BASE"
	((${#cands[@]})) || die_usage "--vs-kernel needs an image"
	local c
	for c in "${cands[@]}"; do
		[[ -n $c ]] || die_usage "--vs-kernel needs an image"
	done
	# An icount boot is exact: one per kernel, two runs of each program in
	# it (the guest's --repeat) so that each side shows its own spread.
	if [[ -n $icount ]]; then
		[[ $repeat == design ]] && repeat=
		repeat=${repeat:-1}
		pass_args+=(--repeat 2)
	fi
	if [[ -z $repeat || $repeat == design ]]; then
		design_boots
	else
		check_repeat "$repeat"
		repeat=$((10#$repeat))
		[[ -n $icount ]] || design_boots "$repeat"
	fi
	[[ -z $fail_above ]] || check_fail_above "$fail_above"
	if [[ -n $json_dir ]]; then
		check_json_dir "$json_dir"
		json_dir=$(cd "$json_dir" && pwd)
	fi
	[[ -z $report ]] || check_report "$report" "$json_dir"
	return 0
}

# design_boots [N]: the boots per kernel that the design needs for the
# programs compared (kbtools.design), said on stderr; sets repeat unless
# N was given, else warns when N is fewer.
design_boots() {
	local out lines given=() list

	[[ -n ${1:-} ]] && given=(--given "$1")
	# shellcheck disable=SC2206 # the -t names, commas made blanks
	list=(${tests[*]:-})
	((${#list[@]})) || read -r -a list <<<"$(make -s --no-print-directory -C "$top" list)"
	out=$(PYTHONPATH="$top/scripts" python3 -m kbtools.design "${given[@]}" "${list[@]}") ||
		die 1 "cannot work out the boots (python3 -m kbtools.design)"
	mapfile -t lines <<<"$out"
	[[ -n ${1:-} ]] || repeat=${lines[0]}
	printf '%s\n' "${lines[@]:1}" | sed "s/^design: \([0-9]*\) repetitions/design: \1 boots/; s/^/$prog: /" >&2
}

# boot SIDE IMAGE K: one boot, its KTAP nested; sets rc. A boot that
# timed out or died before the tests started (no KTAP at all: under TCG
# about 1 boot in 25 panics early) is tried once more, as scripts/bisect.sh
# does, so that one lost boot does not cost the verdict; the failed try
# is said in the stream and its console kept as console-K-failed.log.
boot() {
	local side=$1 image=$2 k=$3 out=$work/json/$1/$3 console

	console=$work/console/$side-$k.log
	mkdir -p "$out" "$work/console"
	boot_try "$image" "$console" "$out"
	if ((rc == 124 || rc == 125)) && ! grep -q "^TAP version" "$work/ktap"; then
		echo "# $side boot $k ended before the tests started (exit $rc): trying once more"
		mv "$console" "$work/console/$side-$k-failed.log" 2>/dev/null || true
		rm -rf "$out"
		mkdir -p "$out"
		boot_try "$image" "$console" "$out"
	fi
	sed 's/^/    /' "$work/ktap"
}

# boot_try IMAGE CONSOLE JSON_DIR: scripts/vm-run.sh once; sets rc.
boot_try() {
	rc=0
	run_child "$top/scripts/vm-run.sh" --kernel "$1" --console "$2" \
		"${pass_args[@]}" --json "$3" >"$work/ktap" || rc=$?
}

# Each boot's kernel log (and a failed try's), for whoever checks them
# for trouble: RESULTS/SIDE/console-K[-failed].log, whether or not the
# boots left results.
keep_consoles() {
	local side k f

	for side in "${sides[@]}"; do
		mkdir -p "$results/$side"
		for ((k = 1; k <= repeat; k++)); do
			for f in "$side-$k" "$side-$k-failed"; do
				if [[ -f $work/console/$f.log ]]; then
					cp "$work/console/$f.log" "$results/$side/console-${f#"$side-"}.log"
				fi
			done
		done
	done
}

# Merge each side's boots (those that left results) into one directory;
# fails when a side has none.
merge_sides() {
	local side k dirs

	keep_consoles
	for side in "${sides[@]}"; do
		dirs=()
		for ((k = 1; k <= repeat; k++)); do
			if compgen -G "$work/json/$side/$k/*.json" >/dev/null; then
				dirs+=("$work/json/$side/$k")
			fi
		done
		if ((${#dirs[@]} == 0)); then
			msg "no boot of the $side kernel left results: nothing to compare"
			return 1
		fi
		PYTHONPATH="$top/scripts" python3 -m kbtools.results merge-dirs \
			"$results/$side" "${dirs[@]}" ||
			die 1 "could not merge the $side boots' results"
	done
}

# The sides' names: base, candidate, then candidate2, candidate3, ...
name_sides() {
	local i

	sides=(base candidate)
	for ((i = 2; i <= ${#cands[@]}; i++)); do
		sides+=("candidate$i")
	done
	images=("$base" "${cands[@]}")
}

# compare.py's labels: the images' names when they tell the sides apart.
labels() {
	local names=() img name

	for img in "${images[@]}"; do
		name=${img##*/}
		names+=("$name")
		if [[ -z $name || $name == *,* ]]; then
			names=()
			break
		fi
	done
	if ((${#names[@]} == 0)) ||
		(($(printf '%s\n' "${names[@]}" | sort -u | wc -l) != ${#names[@]})); then
		names=("${sides[@]}")
	fi
	(
		IFS=,
		echo "${names[*]}"
	)
}

main() {
	local k i n=0 fail=0 side image title status=0 crc=0 cmp_args
	local nk order

	parse_args "$@"
	name_sides
	nk=${#sides[@]}
	work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-ab.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	trap 'interrupted "$work"' INT TERM HUP
	results=${json_dir:-$work/results}

	echo "TAP version 13"
	echo "1..$((nk * repeat))"
	for ((k = 1; k <= repeat; k++)); do
		# Round k starts k-1 kernels later: ABBA... for two.
		for ((order = 0; order < nk; order++)); do
			i=$(((k - 1 + order) % nk))
			side=${sides[i]}
			image=${images[i]}
			n=$((n + 1))
			title="kbench: $side $image (boot $k of $repeat)"
			echo "# $title"
			boot "$side" "$image" "$k"
			if ((rc == 0)); then
				echo "ok $n $title"
			else
				echo "not ok $n $title # exit=$rc"
				fail=$((fail + 1))
			fi
		done
	done
	cmp_args=(--label "$(labels)")
	[[ -n $fail_above ]] && cmp_args+=(--fail-above "$fail_above")
	merged=
	if merge_sides; then
		merged=1
		"$top/scripts/compare.py" "${cmp_args[@]}" \
			"${sides[@]/#/$results/}" >"$work/compare.txt" || crc=$?
		sed 's/^/# /' "$work/compare.txt"
		((crc != 2)) || msg "compare.py could not compare the results"
	else
		crc=1
	fi
	if [[ -n $report && -n $merged ]]; then
		if "$top/scripts/report.py" -o "$report" "$results" 2>"$work/report.err"; then
			echo "# report: $report"
		else
			sed 's/^/# /' "$work/report.err"
			status=1
		fi
	fi
	((fail == 0 && crc == 0)) || status=1
	echo "# Totals: pass:$((n - fail)) fail:$fail xfail:0 xpass:0 skip:0 error:0"
	return "$status"
}

main "$@"
