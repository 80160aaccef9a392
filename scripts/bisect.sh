#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which kernel commit made a figure slower (or a check fail)? git bisect
# over a kernel git tree, each commit built with the test kernel's
# configuration (testkernel/build.sh --tree --commit, images cached by
# hash), booted under virtme-ng/QEMU (scripts/vm-run.sh), measured in
# interleaved boots against the two endpoints and judged with compare's
# statistics (kbtools/bisect.py). See usage().
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bisect.sh
# shellcheck source=lib.bash
. "$top/scripts/lib.bash"

readonly EXIT_CULPRIT=0 EXIT_NO_CULPRIT=1 EXIT_SETUP=3 EXIT_UNDECIDED=125

usage() {
	cat <<EOF
Usage: $prog --tree DIR --good REV --bad REV -t TEST[:ROW]... [OPTION]...
       $prog --tree DIR --good REV --bad REV --check TEST:CHECK [OPTION]...
       $prog --resume --state DIR
Find the first commit between REV good and REV bad of the kernel git
tree DIR that made ROW of TEST slower (e.g. -t syscall_overhead:getsid;
a TEST alone means all its timing rows), or with --check the first one
on which the KTAP check CHECK of TEST (e.g. taskstats:ioctl_errors) is
'not ok' instead of 'ok'.

Each kernel is built from DIR with the test kernel's configuration
(testkernel/build.sh --tree DIR --commit HASH: images cached by commit
hash, so a second bisection over the same range builds nothing), and
booted under virtme-ng/QEMU (scripts/vm-run.sh; only the named tests
run, only the named rows through KSELFTEST_<TEST>_ARGS). First good and
bad are measured in alternating boots: bad must be 'slower' than good
(compare.py's verdict; 'faster' with --faster) on a named row. While it
is not, each gets one more boot, up to --max-repeat; then the bisection
stops with 'no culprit'. Every step's kernel is then booted in
turn with the endpoints (an endpoint boot after every second step
boot); it is bad when it is slower than good, good when it is faster
than bad and not slower than good, on every row where the endpoints
differ. While neither holds, it gets more boots, up to --max-repeat,
then 'git bisect skip'. A commit that does not build, or whose boot dies
or times out twice, is skipped too. DIR stays on its branch: the bisect
runs with --no-checkout, and a commit is checked out only while it is
built (under testkernel's build lock). One line per step on stdout:
commit, subject, ratio to good with its 95% interval, verdict, boots.
The last line is 'first bad commit: HASH SUBJECT', or 'no culprit: ...',
or 'could not decide: ...'.

  --tree DIR          a kernel git tree (clean: it is built out of tree,
                      or a tree testkernel/build.sh built in place)
  --good REV          a commit without the change
  --bad REV           a later commit with it
  -t, --test TEST[:ROW]
                      a row to follow (repeatable)
      --check TEST:CHECK
                      functional bisection: one boot per step, good when
                      CHECK is ok, bad when it is not ok
      --faster        look for the commit that made it faster
      --max-repeat N  boots of a step's kernel at most (default 8)
      --alpha A       significance of every verdict (default 0.01: a step
                      is looked at after each boot, so each look is
                      stricter than compare.py's 0.05); the fewest boots
                      per side is the one that can reach A (5 at 0.01)
      --threshold PCT smallest change called slower/faster (default 2)
      --state DIR     the bisection's state (default: under
                      ~/.cache/kbench/bisect/, one per tree, range and rows)
      --resume        continue the bisection kept in the state directory
                      (its figures, builds and 'git bisect log')
  -j, --jobs N        parallel make jobs
      --accel MODE, --boot-timeout SECS, --vm-timeout SECS
                      passed to scripts/vm-run.sh
  -h, --help          this help

Exit status: 0 first bad commit found; 1 no culprit (good and bad do not
differ, or the check is not ok on good and not ok on bad); 2 bad usage;
3 missing host tools or a failed setup; 125 could not decide (only
skipped commits left, or an endpoint does not build or boot); 130
interrupted.
EOF
}

tree=
good=
bad=
targets=()
check=
direction=slower
max_repeat=8
alpha=0.01
threshold=2
state=
resume=
jobs=()
vm_args=()
boots_used=0

parse_args() {
	while (($#)); do
		case $1 in
		--tree | --good | --bad | -t | --test | --check | --max-repeat | \
			--alpha | --threshold | --state | -j | --jobs | --accel | \
			--boot-timeout | --vm-timeout)
			need_value "$1" "a value" "$#"
			set_option "$1" "$2"
			shift
			;;
		--*=*) set_option "${1%%=*}" "${1#*=}" ;;
		--faster) direction=faster ;;
		--resume) resume=1 ;;
		-h | --help)
			usage
			exit 0
			;;
		*) die_usage "unknown argument '$1'" ;;
		esac
		shift
	done
	check_args
}

set_option() {
	case $1 in
	--tree) tree=$2 ;;
	--good) good=$2 ;;
	--bad) bad=$2 ;;
	-t | --test) targets+=("$2") ;;
	--check) check=$2 ;;
	--max-repeat) max_repeat=$2 ;;
	--alpha) alpha=$2 ;;
	--threshold) threshold=$2 ;;
	--state) state=$2 ;;
	-j | --jobs) jobs=(-j "$2") ;;
	--accel | --boot-timeout | --vm-timeout) vm_args+=("$1" "$2") ;;
	*) die_usage "unknown option '$1'" ;;
	esac
}

py() {
	PYTHONPATH="$top/scripts" python3 -m kbtools.bisect "$@"
}

check_args() {
	local git_top

	if [[ -n $resume && -n $state && -z $tree$good$bad$check && ${#targets[@]} -eq 0 ]]; then
		[[ -f $state/settings.json ]] ||
			die_usage "--resume: no bisection in '$state'"
		return 0
	fi
	[[ -n $tree ]] || die_usage "no kernel tree: give --tree DIR"
	[[ -n $good && -n $bad ]] || die_usage "give both --good REV and --bad REV"
	if [[ -n $check ]]; then
		[[ $check == ?*:?* ]] || die_usage "--check '$check' is not TEST:CHECK"
		targets=("${targets[@]}" "${check%%:*}")
	fi
	((${#targets[@]})) || die_usage "nothing to measure: give -t TEST[:ROW] or --check TEST:CHECK"
	py targets "${targets[@]}" 2>/dev/null ||
		die_usage "-t '${targets[*]}': each must be TEST or TEST:ROW"
	[[ $max_repeat =~ ^[1-9][0-9]*$ ]] || die_usage "invalid --max-repeat '$max_repeat'"
	[[ $alpha =~ ^0?\.[0-9]*[1-9][0-9]*$ ]] || die_usage "invalid --alpha '$alpha': not between 0 and 1"
	[[ $threshold =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "invalid --threshold '$threshold'"
	[[ -d $tree ]] || die_usage "--tree '$tree': no such directory"
	tree=$(cd "$tree" && pwd)
	git_top=$(git -C "$tree" rev-parse --show-toplevel 2>&1) ||
		die_usage "--tree '$tree': ${git_top%%$'\n'*}"
	[[ $git_top == "$tree" ]] ||
		die_usage "--tree '$tree' is not the top of a git work tree ($git_top is)"
	git -C "$tree" diff --quiet HEAD -- ||
		die_usage "--tree '$tree' has uncommitted changes: commit or stash them"
	good=$(rev "$good" --good)
	bad=$(rev "$bad" --bad)
	[[ $good != "$bad" ]] || die_usage "--good and --bad are the same commit"
	git -C "$tree" merge-base --is-ancestor "$good" "$bad" ||
		die_usage "--good ${good:0:12} is not an ancestor of --bad ${bad:0:12}"
	[[ -n $state ]] || state=$(default_state)
}

# rev REV OPTION: REV's full hash, or a usage error naming OPTION.
rev() {
	git -C "$tree" rev-parse -q --verify "$1^{commit}" ||
		die_usage "$2 '$1': no such commit in $tree"
}

default_state() {
	local key

	key=$(printf '%s\n' "$tree" "$good" "$bad" "$direction" "$check" "${targets[@]}" |
		sha256sum | cut -c1-12)
	echo "${XDG_CACHE_HOME:-$HOME/.cache}/kbench/bisect/$key"
}

# A new bisection writes its settings; --resume reads them back.
setup_state() {
	if [[ -n $resume ]]; then
		[[ -f $state/settings.json ]] || die_usage "--resume: no bisection in '$state'"
		load_settings
		return
	fi
	[[ ! -e $state/settings.json ]] ||
		die_usage "a bisection was started in $state: add --resume to continue it," \
			"or remove that directory to start over"
	mkdir -p "$state" || die_usage "cannot create --state '$state'"
	if ! py init "$state" "$tree" "$good" "$bad" "$direction" "$max_repeat" \
		"$alpha" "$threshold" "$check" "${targets[@]}"; then
		rmdir "$state" 2>/dev/null || true
		die_usage "invalid settings"
	fi
}

load_settings() {
	local key

	for key in tree good bad direction max_repeat alpha threshold check; do
		printf -v "$key" '%s' "$(py get "$state" "$key")"
	done
	mapfile -t targets < <(py get "$state" targets)
	[[ -d $tree ]] || die_usage "--resume: the tree $tree is gone"
	tree=$(cd "$tree" && pwd)
}

# ---- the tree's bisect state ----------------------------------------------

git_tree() {
	git -C "$tree" -c user.name=kbench -c user.email=kbench@localhost "$@"
}

bisecting() {
	(cd "$tree" && [[ -f $(git rev-parse --git-path BISECT_START) ]])
}

# The git bisect of the tree is ours (a --resume after a kill -9) or
# nobody's; somebody else's is left alone.
claim_tree() {
	bisecting || return 0
	if [[ -n $resume && -f $state/bisect.log ]] &&
		[[ $(git_tree bisect log | grep -m 1 '^git bisect start') == \
			$(grep -m 1 '^git bisect start' "$state/bisect.log") ]]; then
		git_tree bisect reset -q >/dev/null 2>&1 || git_tree bisect reset >/dev/null
		return 0
	fi
	die_usage "$tree is in a git bisect already ('git bisect reset' ends it)"
}

save_log() {
	bisecting || return 0
	git_tree bisect log >"$state/bisect.log.tmp" 2>/dev/null &&
		mv "$state/bisect.log.tmp" "$state/bisect.log"
}

# shellcheck disable=SC2317 # called from traps
cleanup() {
	stop_child
	if [[ -n ${owns_bisect:-} ]] && bisecting; then
		save_log || true
		git_tree bisect reset >/dev/null 2>&1 || true
	fi
	[[ -z ${work:-} ]] || rm -rf "$work"
}

subject() {
	git -C "$tree" log -1 --format=%s "$1"
}

# ---- builds and boots -----------------------------------------------------------

# build HASH: sets image; fails when the commit does not build (why in
# $work/build.err, its last lines).
build() {
	local out rc=0 t=$SECONDS

	run_child "$top/testkernel/build.sh" "${jobs[@]}" --tree "$tree" \
		--commit "$1" >"$work/build.out" 2>"$work/build.err" || rc=$?
	if ((rc == 2 || rc == 3)); then
		cat "$work/build.err" >&2
		die "$rc" "testkernel/build.sh cannot build from $tree (exit $rc)"
	fi
	out=$(grep '^image=' "$work/build.out" | tail -n 1) || true
	image=${out#image=}
	if ((rc == 0)) && [[ -f $image ]]; then
		msg "built ${1:0:12} in $((SECONDS - t)) s (or cached)"
		return 0
	fi
	msg "${1:0:12} does not build (exit $rc; $(grep -o 'log: [^)]*' "$work/build.err" | tail -n 1))"
	return 1
}

# The compiler's first error, else build.sh's last word, shortened.
build_error() {
	local line

	line=$(grep -m 1 -E ' error: |Error [0-9]+' "$work/build.err") ||
		line=$(grep -v '^\s*$' "$work/build.err" | tail -n 1) || true
	line=${line#build.sh: }
	echo "${line:0:70}"
}

# The guest runs only the named tests, and only the named rows of each.
guest_env() {
	local t test rows var
	local -A want=()

	for t in "${targets[@]}"; do
		test=${t%%:*}
		[[ $t == *:* ]] || { want[$test]=all; continue; }
		[[ ${want[$test]:-} == all ]] && continue
		want[$test]=${want[$test]:+${want[$test]},}${t#*:}
	done
	tests=$(printf '%s\n' "${!want[@]}" | sort | paste -sd,)
	for test in "${!want[@]}"; do
		rows=${want[$test]}
		[[ $rows == all ]] && continue
		var="KSELFTEST_$(tr '[:lower:]-' '[:upper:]_' <<<"$test")_ARGS"
		export "$var=${!var:+${!var} }-t $rows"
	done
}

# boot_once HASH IMAGE: one boot; a complete KTAP stream keeps its JSON
# as the commit's next usable boot. Sets why (the reason when not); an
# unusable boot's output and console are kept in STATE/failed/.
boot_once() {
	local dir=$state/boots/$1 try=$work/boot rc=0 k ok=

	rm -rf "$try"
	mkdir -p "$try/json" "$dir"
	run_child "$top/scripts/vm-run.sh" --kernel "$2" "${vm_args[@]}" \
		--console "$try/console.log" -t "$tests" --json "$try/json" \
		>"$try/ktap" 2>"$try/log" || rc=$?
	boots_used=$((boots_used + 1))
	case $rc in
	0 | 1) why=$(py boot-ok "$try/ktap" "$check") && ok=1 ;;
	124 | 125)
		why=$(grep "^vm-run.sh: " "$try/log" | tail -n 1)
		why=${why#vm-run.sh: }
		;;
	*)
		cat "$try/log" >&2
		die "$EXIT_SETUP" "scripts/vm-run.sh failed (exit $rc): not the kernel's fault"
		;;
	esac
	if [[ -z $ok ]]; then
		mkdir -p "$state/failed"
		mv "$try" "$state/failed/$1-$(date +%s)"
		return 1
	fi
	result=$why
	k=$(($(find "$dir" -mindepth 1 -maxdepth 1 -type d | wc -l) + 1))
	mv "$try/json" "$dir/$k"
	mv "$try/ktap" "$dir/$k.ktap"
	mv "$try/log" "$dir/$k.log"
	mv "$try/console.log" "$dir/$k.console.log" 2>/dev/null || true
	msg "boot of ${1:0:12}: usable boot $k ($(grep -o 'boot [0-9.]* s, run [0-9.]* s' "$dir/$k.log" || true))"
}

# boot HASH IMAGE: a boot that died, timed out or left an incomplete
# stream is tried once more; fails after the second.
boot() {
	if boot_once "$1" "$2"; then
		return 0
	fi
	msg "boot of ${1:0:12} unusable ($why): trying once more"
	boot_once "$1" "$2" && return 0
	msg "boot of ${1:0:12} unusable again ($why)"
	return 1
}

usable() {
	local d=$state/boots/$1

	[[ -d $d ]] || { echo 0; return; }
	find "$d" -mindepth 1 -maxdepth 1 -type d | wc -l
}

# ---- the endpoints ----------------------------------------------------------------

build_endpoint() {
	local name=$1 hash=$2

	if ! build "$hash"; then
		tail -n 15 "$work/build.err" >&2
		echo "could not decide: the $name commit ${hash:0:12} does not build"
		exit "$EXIT_UNDECIDED"
	fi
	if [[ $name == good ]]; then
		image_good=$image
	else
		image_bad=$image
	fi
}

boot_endpoint() {
	local name=$1 hash=$good img=$image_good

	[[ $name == bad ]] && hash=$bad img=$image_bad
	if ! boot "$hash" "$img"; then
		echo "could not decide: the $name kernel ${hash:0:12} does not boot ($why)"
		exit "$EXIT_UNDECIDED"
	fi
}

# measure_endpoints N: good and bad in turn (ABBA) until each has N boots.
measure_endpoints() {
	local order side

	while (($(usable "$good") < $1 || $(usable "$bad") < $1)); do
		endpoint_round=$((endpoint_round + 1))
		order="good bad"
		((endpoint_round % 2 == 0)) && order="bad good"
		for side in $order; do
			boot_endpoint "$side"
		done
	done
}

# The endpoints are looked at once each has the boots a verdict needs,
# then after every further boot of each while they do not differ, up to
# --max-repeat each (at --alpha per look, as a step is): a change the
# noise hides at 5 boots is not given up on, and good and bad that do
# not differ at --max-repeat end the bisection with 'no culprit'.
compare_endpoints() {
	local rc n

	endpoint_round=0
	if [[ -n $check ]]; then
		measure_endpoints 1
		check_endpoints
		return
	fi
	n=$(py get "$state" min_boots)
	while :; do
		measure_endpoints "$n"
		rc=0
		py endpoints "$state" "$((n >= max_repeat))" || rc=$?
		((rc == 0)) && return
		((rc == 1)) && exit "$EXIT_NO_CULPRIT"
		((rc == 10)) || die "$EXIT_SETUP" "could not compare the endpoints' results"
		n=$((n + 1))
	done
}

# --check: CHECK must be ok on good and not ok on bad.
check_endpoints() {
	local g b

	g=$(py boot-ok "$state/boots/$good/1.ktap" "$check")
	b=$(py boot-ok "$state/boots/$bad/1.ktap" "$check")
	if [[ $g != ok || $b != "not ok" ]]; then
		echo "no culprit: $check is '$g' on good and '$b' on bad"
		exit "$EXIT_NO_CULPRIT"
	fi
	echo '{}' >"$state/signal.json"
}

# ---- the steps ------------------------------------------------------------------------

# measure_step HASH IMAGE: boots of the step with an endpoint boot after
# every second one, until kbtools.bisect decides; prints the step line,
# sets verdict.
measure_step() {
	local hash=$1 img=$2 n out need

	need=$(py get "$state" min_boots)
	boots_used=0
	if [[ -n $check ]]; then
		if ! boot "$hash" "$img"; then
			verdict=skip
			py record "$state" "$hash" "$(subject "$hash")" skip "$boots_used" "boot: $why"
			return
		fi
		case $result in
		ok) verdict=good ;;
		"not ok") verdict=bad ;;
		*) verdict=skip ;;
		esac
		py record "$state" "$hash" "$(subject "$hash")" "$verdict" "$boots_used" \
			"$check: $result"
		return
	fi
	while :; do
		if ! boot "$hash" "$img"; then
			verdict=skip
			py record "$state" "$hash" "$(subject "$hash")" skip "$boots_used" "boot: $why"
			return
		fi
		n=$(usable "$hash")
		if ((n % 2 == 0)); then
			endpoint_turn=$((endpoint_turn + 1))
			if ((endpoint_turn % 2)); then
				boot "$good" "$image_good" || msg "an extra boot of good failed ($why)"
			else
				boot "$bad" "$image_bad" || msg "an extra boot of bad failed ($why)"
			fi
		fi
		((n >= need)) || continue
		out=$(py classify "$state" "$hash" "$n" "$max_repeat" "$(subject "$hash")" \
			"$boots_used") || die "$EXIT_SETUP" "could not classify ${hash:0:12}"
		verdict=$(head -n 1 <<<"$out")
		[[ $verdict == more ]] && continue
		tail -n +2 <<<"$out"
		return
	done
}

# One git bisect command; done is set when git names the culprit or
# only skipped commits are left.
bisect_mark() {
	git_tree bisect "$@" >"$work/bisect.out" 2>&1 || true
	save_log
	bisect_outcome
}

bisect_outcome() {
	if grep -q 'is the first bad commit' "$work/bisect.out"; then
		culprit=$(grep -m 1 -oE '^[0-9a-f]{40} is the first bad commit' "$work/bisect.out")
		culprit=${culprit%% *}
		done=1
	elif grep -q "only 'skip'ped commits left" "$work/bisect.out"; then
		done=undecided
	fi
	return 0
}

start_bisect() {
	done=
	owns_bisect=1
	if [[ -f $state/bisect.log ]]; then
		cp "$state/bisect.log" "$work/replay.log"
		git_tree bisect replay "$work/replay.log" >"$work/bisect.out" 2>&1 ||
			die "$EXIT_SETUP" "git bisect replay of $state/bisect.log failed"
		msg "resumed the bisection of $state (git bisect log replayed)"
	else
		git_tree bisect start --no-checkout "$bad" "$good" >"$work/bisect.out" 2>&1 ||
			die "$EXIT_SETUP" "git bisect start failed: $(tail -n 1 "$work/bisect.out")"
	fi
	save_log
	bisect_outcome
}

run_steps() {
	local hash

	endpoint_turn=0
	while [[ -z $done ]]; do
		hash=$(git_tree rev-parse BISECT_HEAD)
		if ! build "$hash"; then
			cp "$work/build.err" "$state/build-$hash.err"
			py record "$state" "$hash" "$(subject "$hash")" skip 0 \
				"does not build: $(build_error)"
			bisect_mark skip "$hash"
			continue
		fi
		measure_step "$hash" "$image"
		bisect_mark "$verdict" "$hash"
	done
}

finish() {
	if [[ $done == 1 ]]; then
		echo "first bad commit: $culprit $(subject "$culprit")"
		exit "$EXIT_CULPRIT"
	fi
	echo "could not decide: the first bad commit is one of" \
		"$(sed -n '/could be any of:/,$p' "$work/bisect.out" | grep -oE '^[0-9a-f]{40}' |
			cut -c1-12 | paste -sd' ') (skipped: not built, not booted or undecided)"
	exit "$EXIT_UNDECIDED"
}

main() {
	local start=$SECONDS

	parse_args "$@"
	[[ -z $resume || -n $tree ]] || load_settings
	claim_tree
	setup_state
	work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-bisect.XXXXXX")
	owns_bisect=
	trap cleanup EXIT
	trap 'exit 130' INT TERM HUP
	guest_env
	msg "bisecting ${good:0:12}..${bad:0:12} of $tree on ${targets[*]}" \
		"${check:+(check $check)}; state: $state"
	build_endpoint good "$good"
	build_endpoint bad "$bad"
	if [[ ! -f $state/signal.json ]]; then
		compare_endpoints
		py record "$state" "$good" "$(subject "$good")" good "$(usable "$good")" endpoint
		py record "$state" "$bad" "$(subject "$bad")" bad "$(usable "$bad")" endpoint
	fi
	[[ -z $resume ]] || py table "$state"
	start_bisect
	run_steps
	msg "$(($(git_tree rev-list --count "$good..$bad"))) commits," \
		"$(wc -l <"$state/steps.tsv") lines in $state/steps.tsv, $((SECONDS - start)) s"
	finish
}

main "$@"
