#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own tests (make check): unit tests of the shared library
# and the tools, the collection run as root and as an unprivileged user
# with its KTAP checked strictly and by the kernel's kunit.py parser, the
# in-tree build/install/run_kselftest.sh path in a 6.12 and a 6.1 tree,
# bad-usage handling and what is left behind after SIGTERM.
#
# Usage: tests/run.sh [--quick] [--vm] [--testkernel] [STEP...]
#   --quick       skip the in-tree (6.1/6.12) and unprivileged steps
#   --vm          also boot a Debian kernel and run the collection in it
#   --testkernel  also build (or reuse) the patched test kernel and run
#                 taskstats and memcg_ks on it (testkernel/run.sh)
#   STEP      run only these steps (see the names printed)
# Prints KTAP, ends with "N passed, N failed, N skipped"; exits 1 on failure.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-check.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
quick= vm= testkernel= only=()
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--vm) vm=1 ;;
	--testkernel) testkernel=1 ;;
	-h | --help)
		sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-*)
		echo "tests/run.sh: unknown option '$a'" >&2
		exit 2
		;;
	*) only+=("$a") ;;
	esac
done

ksrc=$("$top/scripts/provision-ksrc.sh")
ksft=$ksrc/tools/testing/selftests
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all)

n=0 passed=0 failed=0 skipped=0
steps=()

# step NAME FUNCTION: run FUNCTION, its output logged and shown nested.
step() {
	steps+=("$1:$2")
}

run_steps() {
	local s name fn rc
	echo "TAP version 13"
	echo "1..${#steps[@]}"
	for s in "${steps[@]}"; do
		name=${s%%:*}
		fn=${s#*:}
		n=$((n + 1))
		if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then
			echo "ok $n $name # SKIP not selected"
			skipped=$((skipped + 1))
			continue
		fi
		echo "# --- $name"
		rc=0
		("$fn") >"$work/$name.log" 2>&1 || rc=$?
		sed 's/^/# /' "$work/$name.log" | tail -n 40
		if ((rc == 0)); then
			echo "ok $n $name"
			passed=$((passed + 1))
		elif ((rc == 4)); then
			echo "ok $n $name # SKIP $(tail -n 1 "$work/$name.log")"
			skipped=$((skipped + 1))
		else
			echo "not ok $n $name"
			failed=$((failed + 1))
		fi
	done
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	echo "$passed passed, $failed failed, $skipped skipped"
	((failed == 0))
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# ---- steps ---------------------------------------------------------------

build_collection() {
	make -C "$top" all
}

config_is_union() {
	local want
	want=$(cat "$top"/*/config | grep '^CONFIG_' | sort -u)
	diff <(grep '^CONFIG_' "$top/config" | sort -u) <(echo "$want") ||
		fail "top-level config is not the union of the test fragments"
}

unit_c() {
	local src bin libs
	libs=$(ls "$top"/lib/*.c)
	for src in "$top"/tests/unit_*.c; do
		bin=$work/$(basename "$src" .c)
		# shellcheck disable=SC2086
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$ksft" -I"$top/lib" \
			"$src" $libs -lcap -lm -lnuma -o "$bin" ||
			fail "cannot build $src"
		"$bin" "$work/unit.json" | tee "$work/unit.ktap"
		"$top/scripts/ktap_check.py" --no-fail "$work/unit.ktap" ||
			fail "$(basename "$src") reported failures"
	done
	python3 - "$work/unit.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("schema", "test", "kernel", "machine", "date", "cmdline", "clock", "params", "rows"):
    assert k in d, k
assert d["params"]["quote\"and\\slash"] == "tab\there\nnewline"
assert d["params"]["nan_param"] is None
r = {x["name"]: x for x in d["rows"]}
one = r["row_one"]
for k in ("unit", "n", "mean", "min", "max", "median", "stddev", "rsd_pct"):
    assert k in one, k
assert one["n"] == 2 and one["mean"] == 2.0 and one["extra"]["batch"] == 1000
assert r["row_skipped"]["status"] == "skip"
assert r["row_skipped"]["reason"] == 'no "privilege"'
print("JSON document parses and holds the schema")
EOF
}

unit_python() {
	python3 -m unittest discover -s "$top/tests" -p 'test_*.py' -t "$top/tests" -v
}

# Count the innermost results of a run_all.sh stream.
count_rows() {
	grep -cE '^    (ok|not ok) [0-9]+' "$1" || true
}

collection_as_root() {
	local out=$work/root.ktap rows ran
	"$top/run_all.sh" --no-build --json "$work/json-root" | tee "$out" ||
		fail "run_all.sh exited non-zero"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check failed"
	python3 "$ksrc/tools/testing/kunit/kunit.py" parse <"$out" >"$work/kunit.txt" ||
		fail "kunit.py parse rejected the stream"
	rows=$(count_rows "$out")
	ran=$(sed -n 's/.*Ran \([0-9]*\) tests.*/\1/p' "$work/kunit.txt")
	echo "kunit.py parse: $(tail -n 1 "$work/kunit.txt")"
	[[ $ran == "$rows" ]] || fail "kunit.py saw $ran results, the stream has $rows rows"
	"$top/scripts/compare.py" "$work/json-root" "$work/json-root" >/dev/null ||
		fail "compare.py cannot read the run's JSON results"
}

# nobody cannot be assumed to read the clone: run a copy in $work.
collection_as_nobody() {
	local copy=$work/nobody out=$work/nobody.ktap
	# The harness and nolibc only, at their places in a tree (lib.mk
	# finds the tree's top from its own real path).
	mkdir -p "$copy/ksrc/tools/testing/selftests" "$copy/ksrc/tools/include"
	cp -a "$ksft"/{lib.mk,kselftest.h,kselftest_harness.h,kselftest} \
		"$copy/ksrc/tools/testing/selftests/"
	# proc_create's exec helper is built on the tree's nolibc.
	cp -a "$ksrc/tools/include/nolibc" "$copy/ksrc/tools/include/"
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - -cf -) | (mkdir -p "$copy/kbench" && tar -xf - -C "$copy/kbench")
	# Steps run in a checked subshell, where set -e is off: check each.
	make -s -C "$copy/kbench" KSRC="$copy/ksrc" all ||
		fail "cannot build the collection's copy"
	chmod -R a+rX "$copy"
	mkdir -m 777 "$copy/json"
	(cd "$copy" && KSRC="$copy/ksrc" "${nobody[@]}" \
		"$copy/kbench/run_all.sh" --no-build --json "$copy/json") | tee "$out" ||
		fail "run_all.sh as nobody exited non-zero"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check failed"
}

# in_tree VERSION: the collection inside a kernel tree's selftests.
in_tree() {
	local v=$1 tree sel inst out
	tree=$(KSRC_VERSION=$v "$top/scripts/provision-ksrc.sh")
	sel=$tree/tools/testing/selftests
	rm -rf "$sel/kbench"
	mkdir -p "$sel/kbench"
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - -cf -) | tar -xf - -C "$sel/kbench"
	# shellcheck disable=SC2064
	trap "rm -rf '$sel/kbench'" RETURN
	out=$work/intree-$v.txt
	make -C "$sel" TARGETS=kbench/syscall_overhead run_tests 2>&1 | tee "$out"
	grep -q '^ok 1 selftests: kbench/syscall_overhead: syscall_overhead' "$out" ||
		fail "in-tree run_tests did not report ok"
	inst=$work/install-$v
	make -C "$sel" TARGETS=kbench install INSTALL_PATH="$inst" >/dev/null ||
		fail "in-tree install of every kbench test failed"
	"$inst/run_kselftest.sh" -l
	"$inst/run_kselftest.sh" -c kbench/syscall_overhead | tee "$out" ||
		fail "run_kselftest.sh -c kbench/syscall_overhead failed"
	grep -q '^ok 1 selftests: kbench/syscall_overhead: syscall_overhead' "$out" ||
		fail "run_kselftest.sh did not report ok"
}
in_tree_6_12() { in_tree 6.12; }
in_tree_6_1() { in_tree 6.1; }

# Every program: an unknown option and its own bad values give exit 2.
bad_usage() {
	local line dir prog s rc errs=0
	expect_usage_error() {
		rc=0
		timeout 20 "$@" >/dev/null 2>"$work/err" || rc=$?
		if ((rc == 0 || rc == 4 || rc >= 124)) || [[ ! -s $work/err ]]; then
			echo "FAIL: '$*' exited $rc, stderr: $(head -c 200 "$work/err")"
			errs=$((errs + 1))
		else
			echo "ok: '$*' -> $rc: $(head -n 1 "$work/err")"
		fi
	}
	while IFS=: read -r dir prog; do
		expect_usage_error "$top/$dir/$prog" --no-such-option
		expect_usage_error "$top/$dir/$prog" extra-argument
	done < <("$top/run_all.sh" --no-build --list)
	local words assign
	while read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		read -r -a words <<<"$line"
		assign=()
		while [[ ${words[0]} == *=* ]]; do
			assign+=("${words[0]}")
			words=("${words[@]:1}")
		done
		expect_usage_error env "${assign[@]}" "$top/${words[0]}" "${words[@]:1}"
	done <"$top/tests/bad_args.txt"
	for s in "$top"/bench/*.sh "$top"/scripts/*.sh "$top"/testkernel/*.sh; do
		expect_usage_error "$s" --no-such-option
	done
	expect_usage_error "$top/run_all.sh" --bogus
	expect_usage_error "$top/run_all.sh" -t no_such_test
	expect_usage_error "$top/scripts/compare.py" /nonexistent.json /nonexistent.json
	expect_usage_error "$top/scripts/report.py" /nonexistent
	((errs == 0)) || fail "$errs usage errors were not handled"
}

# What the system holds that a test could leave behind.
snapshot() {
	{
		ipcs -q | awk 'NR > 3 && NF' | awk '{print "msq", $2}'
		ipcs -m | awk 'NR > 3 && NF' | awk '{print "shm", $2}'
		ipcs -s | awk 'NR > 3 && NF' | awk '{print "sem", $2}'
		ls /dev/mqueue 2>/dev/null | sed 's/^/mq /'
		find /sys/fs/cgroup -maxdepth 3 -type d -name '*kbench*' 2>/dev/null | sed 's/^/cg /'
		for f in /proc/sys/kernel/task_delayacct /proc/sys/fs/mqueue/*; do
			[[ -r $f ]] && echo "knob $f $(cat "$f")"
		done
	} | sort
}

# SIGTERM each program halfway (as the runner's timeout does): nothing
# may survive it, and no IPC object, queue, cgroup or knob may change.
sigterm_leftovers() {
	local dir prog before after pid sid errs=0
	mountpoint -q /dev/mqueue || mount -t mqueue none /dev/mqueue 2>/dev/null || true
	while IFS=: read -r dir prog; do
		before=$(snapshot)
		(cd "$top/$dir" && exec setsid "./$prog" >"$work/sigterm.out" 2>&1) &
		pid=$!
		sleep 3
		sid=$pid
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			pgrep -s "$sid" >/dev/null || break
			sleep 0.1
		done
		wait "$pid" 2>/dev/null || true
		after=$(snapshot)
		if pgrep -s "$sid" >/dev/null; then
			echo "FAIL: $dir/$prog: processes survive SIGTERM: $(pgrep -s "$sid" | tr '\n' ' ')"
			pkill -KILL -s "$sid" || true
			errs=$((errs + 1))
		elif [[ $before != "$after" ]]; then
			echo "FAIL: $dir/$prog: left behind after SIGTERM:"
			diff <(echo "$before") <(echo "$after") || true
			errs=$((errs + 1))
		else
			echo "ok: $dir/$prog: SIGTERM after 3 s left nothing behind"
		fi
	done < <("$top/run_all.sh" --no-build --list)
	((errs == 0)) || fail "$errs programs left something behind"
}

run_all_sigterm() {
	local before after pid
	before=$(snapshot)
	setsid "$top/run_all.sh" --no-build >"$work/ra-term.out" 2>&1 &
	pid=$!
	sleep 4
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	sleep 1
	pgrep -s "$pid" && fail "processes survive run_all.sh's SIGTERM"
	after=$(snapshot)
	[[ $before == "$after" ]] || fail "run_all.sh SIGTERM left: $(diff <(echo "$before") <(echo "$after"))"
	echo "run_all.sh stopped by SIGTERM, nothing left behind"
}

# The HTML report of a small run and of an A/B run, opened in headless
# Chromium: no console error, every plot drawn, a known row on the page.
# Screenshots stay in $KBENCH_ARTIFACTS (default: the step's work dir).
report_in_browser() {
	local d=$work/report shots=${KBENCH_ARTIFACTS:-$work/report} rc=0
	mkdir -p "$d" "$shots"
	"$top/scripts/report.py" --check || rc=$?
	((rc != 4)) || { echo "SKIP: no matplotlib: apt-get install python3-matplotlib"; exit 4; }
	command -v chromium >/dev/null ||
		{ echo "SKIP: no chromium: apt-get install chromium"; exit 4; }
	# The check itself must be able to fail: a missing resource, a console
	# error, an empty plot, a plot too many and a missing text.
	printf '%s\n' '<!DOCTYPE html><html><body><img src="missing.png">' \
		'<script>console.error("broken")</script>' \
		'<svg width="90" height="90"></svg></body></html>' >"$d/bad.html"
	python3 "$top/tests/browser_check.py" --plots 2 --text getppid \
		"$d/bad.html" >"$d/bad.out" && fail "browser_check.py passed a broken page"
	[[ $(grep -c '^FAIL' "$d/bad.out") == 5 ]] ||
		fail "browser_check.py missed a problem: $(cat "$d/bad.out")"
	KSELFTEST_PMQTEST_ARGS=--histogram=100 "$top/run_all.sh" --no-build \
		-t syscall_overhead,pmqtest --json "$d/run" --report "$d/run.html" \
		>"$d/run.ktap" || fail "run_all.sh --report failed: $(tail -n 3 "$d/run.ktap")"
	grep -q "^# report: $d/run.html" "$d/run.ktap" || fail "no report line in the KTAP"
	# syscall_overhead's rows; pmqtest's histogram and percentiles.
	python3 "$top/tests/browser_check.py" --plots 3 --text getppid \
		--text latency_pair0 --screenshot "$shots/report-run.png" "$d/run.html" ||
		fail "the report of a run is not right in the browser"
	KSELFTEST_PMQTEST_ARGS=--histogram=100 "$top/run_all.sh" --no-build \
		-t pmqtest --vs-prefix env -r 2 --json "$d/ab" --report "$d/ab.html" \
		>"$d/ab.ktap" ||
		fail "run_all.sh --vs-prefix --report failed: $(tail -n 3 "$d/ab.ktap")"
	# The forest plot, each side's histogram, the percentiles of both.
	python3 "$top/tests/browser_check.py" --plots 4 --text latency_pair1 \
		--text "Every compared row" --screenshot "$shots/report-ab.png" \
		"$d/ab.html" || fail "the A/B report is not right in the browser"
	"$top/scripts/report.py" -o "$d/bad.html" "$d/run/syscall_overhead.json" \
		"$d/ab/base/pmqtest.json" 2>"$d/err" &&
		fail "report.py compared runs of different tests"
	grep -q "different tests" "$d/err" || fail "unclear message: $(cat "$d/err")"
	echo "reports checked in chromium; screenshots in $shots"
}

vm_debian_6_1() {
	"$top/scripts/ci-vm.sh"
}

# The ioctl and .ks code paths on a kernel that has the interfaces.
testkernel_patched() {
	"$top/testkernel/run.sh" --patched-only
}

# run_all.sh --repeat / --vs-prefix and the seccomp wrapper: layout of the
# repeated JSON, the A/B stream and its comparison, bad usage.
ab_runner() {
	local cc out=$work/ab.ktap bin=$work/seccomp_wrap args bad rc

	for cc in gcc clang; do
		"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -o "$bin.$cc" \
			"$top/tests/seccomp_wrap.c" || fail "seccomp_wrap: $cc build"
	done
	cp "$bin.gcc" "$bin"
	"$bin" -n 5 true || fail "seccomp_wrap -n 5 true"
	"$bin" -n 5 --measure | grep -q 'ratio=' || fail "seccomp_wrap --measure"
	for bad in "-n x true" "-n 99999 true" "" "--bogus"; do
		args=()
		read -r -a args <<<"$bad"
		rc=0
		"$bin" "${args[@]}" 2>/dev/null || rc=$?
		((rc == 2)) || fail "seccomp_wrap $bad: exit $rc, want 2"
	done
	for bad in "--repeat 0" "-r x" "--vs-prefix=" "--vs-prefix no-such-cmd" \
		"--fail-above 5" "--vs-kernel debian-6.1" "--vs-prefix env --fail-above x"; do
		read -r -a args <<<"$bad"
		rc=0
		"$top/run_all.sh" --no-build "${args[@]}" >/dev/null 2>&1 || rc=$?
		((rc == 2)) || fail "run_all.sh $bad: exit $rc, want 2"
	done
	KSELFTEST_SYSCALL_OVERHEAD_ARGS="-i 50 -t getpid,getppid" \
		"$top/run_all.sh" --no-build -t syscall_overhead --repeat 2 \
		--vs-prefix "$bin -n 5" --json "$work/ab" | tee "$out" ||
		fail "run_all.sh --vs-prefix exited non-zero"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check of the A/B stream failed"
	grep -q '^1\.\.4$' "$out" || fail "plan is not 2 sides x 2 repetitions"
	grep -q '^ok 2 .*(candidate, repetition 1 of 2)$' "$out" ||
		fail "no candidate result in second place"
	grep -q '^ok 3 .*(candidate, repetition 2 of 2)$' "$out" ||
		fail "repetition 2 does not start with the candidate (ABBA)"
	grep -qE '^#   getppid .* no-verdict' "$out" ||
		fail "no comparison table (or a verdict from 2 repetitions)"
	python3 "$top/scripts/compare.py" -f json "$work/ab/base" \
		"$work/ab/candidate" >"$work/ab.json" || fail "compare.py"
	grep -q '"n_base": 2' "$work/ab.json" || fail "repetitions not kept"
	grep -q '"repeat": 2' "$work/ab/candidate/syscall_overhead.json" ||
		fail "no repeat key in the merged JSON"
}

step build_collection build_collection
step config_is_union config_is_union
step unit_c unit_c
step unit_python unit_python
step collection_as_root collection_as_root
step bad_usage bad_usage
step sigterm_leftovers sigterm_leftovers
step run_all_sigterm run_all_sigterm
step ab_runner ab_runner
step report_in_browser report_in_browser
if [[ -z $quick ]]; then
	step collection_as_nobody collection_as_nobody
	step in_tree_6_12 in_tree_6_12
	step in_tree_6_1 in_tree_6_1
fi
[[ -n $vm ]] && step vm_debian_6_1 vm_debian_6_1
[[ -n $testkernel ]] && step testkernel_patched testkernel_patched
run_steps
