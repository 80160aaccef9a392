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
                      (compare two runs with scripts/compare.py)
      --full          run the programs' full, seed-sized measurements
                      (no runner timeout; can take tens of minutes)
  -o, --timeout SECS  override every program's timeout (0 = none); the
                      default is the 'timeout=' of the test's settings file
      --kernel IMAGE  boot IMAGE under virtme-ng/QEMU and run there instead
                      (see scripts/vm-run.sh -h; e.g. debian-6.1)
      --no-build      do not run make first
  -h, --help          this help

Environment: KSRC=/path/to/linux picks the kernel tree that supplies the
kselftest harness (default: one provisioned from Debian's linux-source
package into .cache/); KSFT_MACHINE_SLOW=yes makes every program scale its
work down; KSELFTEST_<PROGRAM>_ARGS adds arguments to one program, as with
the kernel's runner.

      --nest STYLE    how a program's own KTAP is nested: 'indent' (default:
                      4 spaces and a '# Subtest:' line, KTAP v1 nesting that
                      the kernel's kunit.py parser reads per row) or 'hash'
                      (every line behind '# ', as run_kselftest.sh prints)

Output: for each program "# selftests: kbench/DIR: PROG", the program's own
KTAP nested (figures on "# NAME: key=value ..." lines before each result),
then "ok N selftests: kbench/DIR: PROG" (or "# SKIP", or
"not ok ... # exit=RC" / "# TIMEOUT"). Exit status: 0 when nothing failed,
1 when a program failed or timed out, 2 on bad usage.
EOF
}

all_tests() {
	make -s --no-print-directory -C "$top" list
}

tests=()
json_dir=
full=
timeout_override=
build=1
list=
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

# --kernel hands the whole command line over to the VM runner.
for arg in "$@"; do
	case $arg in
	--kernel | --kernel=*)
		exec "$top/scripts/vm-run.sh" "$@"
		;;
	esac
done

while (($#)); do
	case $1 in
	-t | --test)
		(($# >= 2)) || die_usage "option '$1' needs a test name"
		add_tests "$2"
		shift
		;;
	--test=*) add_tests "${1#*=}" ;;
	-l | --list) list=1 ;;
	--json)
		(($# >= 2)) || die_usage "option '$1' needs a directory"
		json_dir=$2
		shift
		;;
	--json=*) json_dir=${1#*=} ;;
	--full) full=1 ;;
	-o | --timeout)
		(($# >= 2)) || die_usage "option '$1' needs a number of seconds"
		timeout_override=$2
		shift
		;;
	--timeout=*) timeout_override=${1#*=} ;;
	--nest)
		(($# >= 2)) || die_usage "option '$1' needs 'indent' or 'hash'"
		nest=$2
		shift
		;;
	--nest=*) nest=${1#*=} ;;
	--no-build) build= ;;
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
if [[ -n $json_dir ]]; then
	[[ $json_dir != -* ]] || die_usage "invalid --json directory '$json_dir'"
	mkdir -p "$json_dir" || die_usage "cannot create directory '$json_dir'"
	json_dir=$(cd "$json_dir" && pwd)
fi
((${#tests[@]})) || read -r -a tests <<<"$(all_tests)"

if [[ -n $build ]]; then
	make -s --no-print-directory -C "$top" TESTS="${tests[*]}" all >&2 ||
		{ echo "$prog: build failed" >&2; exit 1; }
fi

# "dir:prog" for every test program, from lib.mk's emit_tests.
programs=()
for t in "${tests[@]}"; do
	while read -r line; do
		[[ -n $line ]] && programs+=("$line")
	done < <(make -s --no-print-directory -C "$top/$t" COLLECTION="$t" emit_tests)
done

if [[ -n $list ]]; then
	printf '%s\n' "${programs[@]}"
	exit 0
fi

settings_timeout() {
	local t=45 line
	if [[ -f $1/settings ]]; then
		while IFS= read -r line; do
			[[ $line =~ ^timeout=([0-9]+) ]] && t=${BASH_REMATCH[1]}
		done <"$1/settings"
	fi
	echo "$t"
}

# The program being run, so that a signal to us reaches it too.
current_pid=
rundir=$(mktemp -d "${TMPDIR:-/tmp}/kbench-run.XXXXXX")
on_signal() {
	trap - INT TERM HUP
	if [[ -n $current_pid ]]; then
		kill -TERM "$current_pid" 2>/dev/null || true
		wait "$current_pid" 2>/dev/null || true
	fi
	rm -rf "$rundir"
	echo "Bail out! interrupted" >&2
	exit 130
}
trap on_signal INT TERM HUP
trap 'rm -rf "$rundir"' EXIT

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

# run_program DIR PROG TITLE -> sets rc; streams the output nested.
run_program() {
	local dir=$1 name=$2 title=$3 secs args=() envvar extra
	secs=${timeout_override:-$(settings_timeout "$top/$dir")}
	[[ -n $full && -z $timeout_override ]] && secs=0
	[[ -n $full ]] && args+=(--full)
	[[ -n $json_dir ]] && args+=(--json "$json_dir/$name.json")
	envvar="KSELFTEST_$(tr '[:lower:]-' '[:upper:]_' <<<"$name")_ARGS"
	extra=${!envvar:-}
	# shellcheck disable=SC2206 # word splitting is the runner's contract
	[[ -n $extra ]] && args+=($extra)

	rm -f "$rundir/rc" "$rundir/pid"
	(
		cd "$top/$dir"
		timeout --kill-after=10 "$secs" "./$name" "${args[@]}" 2>&1 </dev/null &
		echo $! >"$rundir/pid"
		rc=0
		wait $! || rc=$?
		echo "$rc" >"$rundir/rc"
	) | nest_output "$title" &
	local pipe=$!
	while [[ ! -s $rundir/pid ]] && kill -0 "$pipe" 2>/dev/null; do
		sleep 0.01
	done
	current_pid=$(cat "$rundir/pid" 2>/dev/null || true)
	wait "$pipe" || true
	current_pid=
	rc=$(cat "$rundir/rc" 2>/dev/null || echo 1)
	timeout_secs=$secs
}

echo "TAP version 13"
echo "1..${#programs[@]}"
n=0 pass=0 fail=0 skip=0
for p in "${programs[@]}"; do
	dir=${p%%:*}
	name=${p#*:}
	n=$((n + 1))
	title="selftests: kbench/$dir: $name"
	echo "# $title"
	run_program "$dir" "$name" "$title"
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
		echo "not ok $n $title # TIMEOUT $timeout_secs seconds"
		fail=$((fail + 1))
		;;
	*)
		echo "not ok $n $title # exit=$rc"
		fail=$((fail + 1))
		;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
((fail == 0))
