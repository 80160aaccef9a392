#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own tests (make check): lint (shellcheck, pyflakes,
# checkpatch), unit tests of the shared library and the tools, the
# collection as root and as an unprivileged user with its KTAP checked
# strictly and by the kernel's kunit.py parser, an ASan+UBSan+LSan build
# and run, the in-tree build/install/run_kselftest.sh path in a 6.12 and
# a 6.1 tree and a clang (LLVM=1, O=, gen_tar) build, bad-usage handling
# and what is left behind after SIGTERM.
#
# Usage: tests/run.sh [--quick] [--vm] [--arm64] [--testkernel] [STEP...]
#   --quick       skip the in-tree (6.1/6.12, clang) and unprivileged steps
#   --vm          also boot a Debian kernel and run the collection in it,
#                 run the 32-bit build on this host, and boot Debian's
#                 arm64 6.12 kernel under TCG with the arm64 build
#   --arm64       the arm64 guest alone (without the rest of --vm)
#   --testkernel  also build (or reuse) the patched test kernel and run
#                 taskstats and memcg_ks on it (testkernel/run.sh)
#   STEP      run only these steps (see the names printed)
# Prints KTAP, ends with "N passed, N failed, N skipped"; exits 1 on
# failure, 2 on bad usage. A step whose tool is missing is an explicit
# SKIP naming the tool and its Debian package (listed again at the end).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=tests/run.sh
# shellcheck source=../scripts/lib.bash
. "$top/scripts/lib.bash"
# shellcheck source=common.bash
. "$top/tests/common.bash"

quick='' vm='' arm64='' testkernel='' only=()
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--vm) vm=1 ;;
	--arm64) arm64=1 ;;
	--testkernel) testkernel=1 ;;
	-h | --help)
		help_from_header "$0" 12 23
		exit 0
		;;
	-*) die_usage "unknown option '$a'" ;;
	*) only+=("$a") ;;
	esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-check.XXXXXX")
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# Every step's python3 is the one setup.sh installed packages for.
use_debian_python "$work/python"
ksrc=$("$top/scripts/provision_ksrc.sh")
ksft=$ksrc/tools/testing/selftests
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all)

n=0 passed=0 failed=0 skipped=0
steps=()

# step NAME [FUNCTION]: run FUNCTION (default NAME), its output logged and
# shown nested. Exit status 0 passes, 4 skips (the last line says why),
# anything else fails.
step() {
	steps+=("$1:${2:-$1}")
}

# A selected step that does not exist is bad usage, not a silent skip.
check_selection() {
	local want names=" ${steps[*]%%:*} "
	for want in "${only[@]}"; do
		[[ $names == *" $want "* ]] ||
			die_usage "no step '$want' (steps:$names)"
	done
}

run_steps() {
	local s name fn rc
	check_selection
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
		if ((rc != 0 && rc != 4)); then
			# The failures first: the tail below may not reach them.
			# (none is fine: the tail shows why; grep must not end the run)
			{ grep -E '^[[:space:]#]*not ok|^FAIL' "$work/$name.log" || true; } |
				head -n 20 | sed 's/^/# failure: /'
		fi
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
	if [[ -s $work/missing ]]; then
		echo "# steps skipped for missing tools; to run them:" \
			"apt-get install $(sort -u "$work/missing" | tr '\n' ' ')"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	((failed == 0))
}


# need COMMAND[:PACKAGE]...: SKIP the step (exit 4) naming each missing
# command and the Debian package of packages.txt that has it (a PACKAGE
# given must be that one: the list decides).
need() {
	local c cmd pkg missing=()
	for c; do
		cmd=${c%%:*}
		pkg=$(awk -v c="$cmd" '$1 == "package" {
			for (i = 4; i <= NF; i++) if ($i == c) { print $3; exit } }' "$top/packages.txt")
		[[ -n $pkg ]] || fail "need $c: no package of packages.txt has $cmd"
		[[ $c != *:* || ${c#*:} == "$pkg" ]] ||
			fail "need $c: packages.txt has $cmd in $pkg"
		command -v "$cmd" >/dev/null && continue
		missing+=("$cmd ($pkg)")
		echo "$pkg" >>"$work/missing"
	done
	((${#missing[@]} == 0)) && return 0
	echo "missing ${missing[*]}"
	exit 4
}

# note_missing PACKAGE: PACKAGE (of packages.txt) for the install line at
# the end; prints it, for the step's message.
note_missing() {
	grep -qE "^package +[a-z0-9]+ +$1( |\$)" "$top/packages.txt" ||
		fail "$1 is not in packages.txt"
	echo "$1" >>"$work/missing"
	echo "$1"
}


# project_ls [PATTERN]: the project's files (tracked and new, not ignored),
# NUL-separated, relative to the clone. A copy without .git (an unpacked
# tarball) gets git's ignore rules from a scratch repository of its own.
project_ls() {
	local repo=()
	if ! git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		[[ -d $work/no-clone.git ]] || git init -q --bare "$work/no-clone.git"
		repo=(--git-dir="$work/no-clone.git" --work-tree="$top")
	fi
	git -C "$top" "${repo[@]}" ls-files -z --cached --others --exclude-standard -- "$@"
}

# Files of the project (not .cache/, out/, build/ or .git/) named PATTERN;
# links left out (an old name's link is its file again, README.md: Layout).
project_files() {
	local f
	# git knows what is ours: generated files (vmlinux.h, BPF skeletons,
	# fuzz builds) are ignored, never linted.
	if command -v git >/dev/null; then
		project_ls "$1" | tr '\0' '\n' | sed "s|^|$top/|" | sort |
			while IFS= read -r f; do [[ -L $f ]] || echo "$f"; done
		return
	fi
	find "$top" \( -name .git -o -path "$top/.cache" -o -path "$top/out" \
		-o -path "$top/build" \) -prune -o -type f -name "$1" -print | sort
}

# every_program_ok FILE: each program has a plain "ok" (no SKIP, no
# directive) in FILE, as run_tests and run_kselftest.sh print it.
every_program_ok() {
	local dir prog bad=0 list
	list=$(programs) || return 1
	while IFS=: read -r dir prog; do
		if grep -qE "^ok [0-9]+ selftests: kbench/$dir: $prog\$" "$1"; then
			echo "ran: kbench/$dir: $prog"
		else
			echo "FAIL: no plain 'ok' for kbench/$dir: $prog in $(basename "$1")"
			bad=1
		fi
	done <<<"$list"
	return "$bad"
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

# README.md and docs/*.md agree with packages.txt: their generated install
# lines and package table are the list's (packages.py readme --write makes
# them again), and every package they tell to apt-get install is listed.
package_list() {
	need python3
	"$top/scripts/packages.py" readme || fail "README.md or docs/ disagree with packages.txt"
}

# Every bash script, by name or by shebang.
shell_scripts() {
	local f
	# The shebang of the first line: a Python file may hold a guest's
	# script as text.
	{
		project_files '*.sh'
		grep -rlE --exclude-dir=.git --exclude-dir=.cache --exclude-dir=out \
			'^#!/bin/(ba)?sh' "$top" | while IFS= read -r f; do
			head -n 1 "$f" | grep -qE '^#!/bin/(ba)?sh' && echo "$f"
		done || true
	} | sort -u
}

shellcheck_scripts() {
	local files
	need shellcheck
	mapfile -t files < <(shell_scripts)
	((${#files[@]})) || fail "no shell script found"
	printf 'shellcheck: %s\n' "${files[@]#"$top"/}"
	shellcheck -x --source-path=SCRIPTDIR "${files[@]}" ||
		fail "shellcheck found problems"
}

lint_python() {
	local files
	need python3
	mapfile -t files < <(project_files '*.py')
	((${#files[@]})) || fail "no Python file found"
	printf 'lint: %s\n' "${files[@]#"$top"/}"
	PYTHONPYCACHEPREFIX=$work/pycache python3 -m py_compile "${files[@]}" ||
		fail "py_compile rejected a file"
	need pyflakes3
	pyflakes3 "${files[@]}" || fail "pyflakes found problems"
}

# mypy over scripts/kbtools, the kbench front door, scripts/*.py,
# bench/*.py and tests/*.py (mypy.ini says which of them strictly).
type_check() {
	need mypy
	(cd "$top" && mypy --config-file mypy.ini \
		--cache-dir "${KBENCH_CACHE:-$top/.cache}/mypy") ||
		fail "mypy found problems"
}

# checkpatch.pl of the provisioned tree over every C file; the false
# positives of user-space code are listed in tests/checkpatch_false_positives.
checkpatch() {
	local files f ignore here list=$top/tests/checkpatch_false_positives bad=0
	need perl
	# "TYPE" lines hold everywhere, "TYPE FILE" lines in FILE only.
	ignore=$(sed 's/#.*//' "$list" | awk 'NF == 1' | xargs | tr ' ' ,)
	[[ -n $ignore ]] || fail "empty tests/checkpatch_false_positives"
	mapfile -t files < <(project_files '*.[ch]')
	((${#files[@]})) || fail "no C file found"
	for f in "${files[@]}"; do
		here=$(sed 's/#.*//' "$list" |
			awk -v f="${f#"$top"/}" 'NF == 2 && $2 == f { print $1 }' | xargs | tr ' ' ,)
		perl "$ksrc/scripts/checkpatch.pl" --no-tree --terse --show-types \
			--no-summary --ignore "$ignore${here:+,$here}" -f "$f" >"$work/cp.out" 2>&1 || bad=1
		sed "s|^$top/||" "$work/cp.out"
	done
	echo "checkpatch: ${#files[@]} files, ignored types: $ignore"
	((bad == 0)) || fail "checkpatch found warnings or errors"
}

unit_c() {
	local src bin libs rc
	need python3
	libs=$(find "$top/lib" -name '*.c' | sort)
	for src in "$top"/tests/unit_*.c; do
		bin=$work/$(basename "$src" .c)
		# shellcheck disable=SC2086
		gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$ksft" -I"$top/lib" \
			"$src" $libs -lcap -lm -lnuma -o "$bin" ||
			fail "cannot build $src"
		rc=0
		"$bin" "$work/unit.json" >"$work/unit.ktap" || rc=$?
		cat "$work/unit.ktap"
		((rc == 0)) || fail "$(basename "$bin") exited $rc"
		"$top/scripts/ktap_check.py" --no-fail "$work/unit.ktap" ||
			fail "$(basename "$src") reported failures"
	done
	"$top/tests/check_unit_json.py" "$work/unit.json" ||
		fail "the unit tests' JSON document is wrong"
}

# tests/test_*.py but the property modules (test_fuzz_*.py), which are
# python_properties' to run.
unit_modules() {
	local f
	for f in "$top"/tests/test_*.py; do
		f=${f##*/}
		[[ $f == test_fuzz_* ]] || echo "${f%.py}"
	done
}

# The unit tests; a test skipped for want of a package that dpkg has
# installed (another python3, a PATH without the tool) fails the step
# (tests/needs.py): the install did not take.
unit_python() {
	local mods rc=0
	need python3
	mapfile -t mods < <(unit_modules)
	(cd "$top/tests" && python3 -m unittest -v "${mods[@]}") >"$work/unit.log" 2>&1 ||
		rc=$?
	cat "$work/unit.log"
	((rc == 0)) || fail "unit tests failed"
	"$top/tests/needs.py" "$work/unit.log" || fail "unit tests skipped for want of what is installed"
}

# The unit tests once more, with a PATH that holds a bare Debian root's
# commands alone (tests/bare_path.py: priority "required", nothing of
# packages.txt) and the interpreter: a test that runs a tool it does not
# say it needs (tests/needs.py) fails here, whatever this machine has.
unit_python_bare_path() {
	local mods bin=$work/bare-path rc=0
	need python3
	"$top/tests/bare_path.py" "$(command -v python3)" "$bin" || rc=$?
	((rc != 4)) || exit 4
	((rc == 0)) || fail "tests/bare_path.py exited $rc"
	mapfile -t mods < <(unit_modules)
	(cd "$top/tests" && PATH=$bin "$bin/python3" -m unittest "${mods[@]}") ||
		fail "a unit test fails without the tools of packages.txt (say what it needs: tests/needs.py)"
}

# Count the innermost results of a run_all.sh stream.
count_rows() {
	grep -cE '^    (ok|not ok) [0-9]+' "$1" || true
}

collection_as_root() {
	local out=$work/root.ktap rows ran rc=0
	need python3
	"$top/run_all.sh" --no-build --json "$work/json-root" >"$out" || rc=$?
	cat "$out"
	((rc == 0)) || fail "run_all.sh exited $rc"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check failed"
	python3 "$ksrc/tools/testing/kunit/kunit.py" parse <"$out" >"$work/kunit.txt" ||
		fail "kunit.py parse rejected the stream"
	rows=$(count_rows "$out")
	ran=$(sed -n 's/.*Ran \([0-9]*\) tests.*/\1/p' "$work/kunit.txt")
	echo "kunit.py parse: $(tail -n 1 "$work/kunit.txt")"
	((rows > 0)) || fail "the stream has no results"
	[[ $ran == "$rows" ]] || fail "kunit.py saw $ran results, the stream has $rows rows"
	"$top/scripts/compare.py" "$work/json-root" "$work/json-root" >/dev/null ||
		fail "compare.py cannot read the run's JSON results"
	# The design's table of timing rows holds for this real run.
	PYTHONPATH=$top/scripts python3 -m kbtools.design --check "$work/json-root" ||
		fail "design.TIMING_ROWS does not hold for this run"
}

# The project's files (tracked and new, not ignored) as a tar stream.
project_tar() {
	(cd "$top" && project_ls | tar --null -T - -cf -)
}

# nobody cannot be assumed to read the clone: run a copy in $work.
collection_as_nobody() {
	local copy=$work/nobody out=$work/nobody.ktap rc=0
	need git setpriv:util-linux python3
	# The harness and nolibc only, at their places in a tree (lib.mk
	# finds the tree's top from its own real path).
	mkdir -p "$copy/ksrc/tools/testing/selftests" "$copy/ksrc/tools/include"
	cp -a "$ksft"/{lib.mk,kselftest.h,kselftest_harness.h,kselftest} \
		"$copy/ksrc/tools/testing/selftests/"
	# proc_create's exec helper is built on the tree's nolibc.
	cp -a "$ksrc/tools/include/nolibc" "$copy/ksrc/tools/include/"
	mkdir -p "$copy/kbench"
	project_tar | tar -xf - -C "$copy/kbench" || fail "cannot copy the clone"
	make -s -C "$copy/kbench" KSRC="$copy/ksrc" all ||
		fail "cannot build the collection's copy"
	chmod -R a+rX "$copy"
	mkdir -m 777 "$copy/json"
	# A temporary directory of its own: the caller's TMPDIR may be root's.
	mkdir -m 1777 "$copy/tmp"
	(cd "$copy" && TMPDIR="$copy/tmp" KSRC="$copy/ksrc" "${nobody[@]}" \
		"$copy/kbench/run_all.sh" --no-build --json "$copy/json") >"$out" || rc=$?
	cat "$out"
	((rc == 0)) || fail "run_all.sh as nobody exited $rc"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check failed"
}

# place_in_tree VERSION: a private copy of the provisioned tree (another
# run may use the cached one at the same time) with the clone at
# tools/testing/selftests/kbench; prints that selftests directory.
place_in_tree() {
	local tree copy=$work/tree-$1
	tree=$(KSRC_VERSION=$1 "$top/scripts/provision_ksrc.sh") ||
		fail "cannot provision the $1 tree"
	rm -rf "$copy"
	mkdir -p "$copy"
	cp -a "$tree"/{Makefile,scripts,tools} "$copy/" || fail "cannot copy $tree"
	mkdir -p "$copy/tools/testing/selftests/kbench"
	project_tar | tar -xf - -C "$copy/tools/testing/selftests/kbench" ||
		fail "cannot copy the clone"
	echo "$copy/tools/testing/selftests"
}

# in_tree VERSION: the collection inside a kernel tree's selftests: every
# program must run (plain ok) under run_tests and the installed
# run_kselftest.sh.
in_tree() {
	local v=$1 sel inst out rc=0
	need git rsync
	sel=$(place_in_tree "$v") || exit 1
	out=$work/intree-$v.txt
	make -C "$sel" TARGETS=kbench run_tests >"$out" 2>&1 || rc=$?
	cat "$out"
	((rc == 0)) || fail "in-tree run_tests exited $rc"
	every_program_ok "$out" || fail "in-tree run_tests did not run every program"
	inst=$work/install-$v
	make -C "$sel" TARGETS=kbench install INSTALL_PATH="$inst" >/dev/null ||
		fail "in-tree install of every kbench test failed"
	"$inst/run_kselftest.sh" -l | tee "$out"
	# As result lines, so that the one matcher checks the list too.
	sed 's/^\(.*\):\(.*\)$/ok 1 selftests: \1: \2/' "$out" >"$out.list"
	every_program_ok "$out.list" ||
		fail "run_kselftest.sh -l does not list every program"
	rc=0
	"$inst/run_kselftest.sh" >"$out" 2>&1 || rc=$?
	cat "$out"
	((rc == 0)) || fail "run_kselftest.sh exited $rc"
	every_program_ok "$out" || fail "run_kselftest.sh did not run every program"
}
in_tree_6_12() { in_tree 6.12; }
in_tree_6_1() { in_tree 6.1; }

# What KernelCI builds: clang (LLVM=1), an out-of-tree O= directory and
# the gen_tar tarball, whose run_kselftest.sh must run every program.
llvm_gen_tar() {
	local sel o=$work/llvm-out tarball unpacked=$work/llvm-tar out rc=0
	need git clang llvm-ar:llvm ld.lld:lld readelf:binutils
	sel=$(place_in_tree 6.12) || exit 1
	make -C "$sel" LLVM=1 O="$o" TARGETS=kbench gen_tar >"$work/llvm.log" 2>&1 ||
		{ tail -n 40 "$work/llvm.log"; fail "LLVM=1 O= gen_tar failed"; }
	tarball=$(sed -n 's/^Created //p' "$work/llvm.log")
	[[ -f $tarball ]] || fail "gen_tar named no tarball: $(tail -n 3 "$work/llvm.log")"
	echo "tarball: ${tarball#"$o"/}"
	mkdir -p "$unpacked"
	tar -xf "$tarball" -C "$unpacked"
	readelf -p .comment "$unpacked/kbench/syscall_overhead/syscall_overhead" |
		grep -q 'clang version' || fail "syscall_overhead was not built by clang"
	out=$work/llvm-run.txt
	(cd "$unpacked" && ./run_kselftest.sh) >"$out" 2>&1 || rc=$?
	cat "$out"
	((rc == 0)) || fail "the tarball's run_kselftest.sh exited $rc"
	every_program_ok "$out" || fail "the tarball's run_kselftest.sh did not run every program"
}

# Every program built with ASan+UBSan (LSan included) into its own output
# directory; each program's default run must report nothing.
sanitizers() {
	local o=$work/asan dir prog rc bad=0 flags=-fsanitize=address,undefined
	local programs_list
	programs_list=$(programs) || exit 1
	# One test at a time, so that one failing build hides no other.
	for dir in $(make -s -C "$top" list); do
		make -C "$top" TESTS="$dir" OUTPUT="$o" CFLAGS="$flags" \
			LDFLAGS="$flags" all || echo "FAIL: the sanitizer build of $dir failed"
	done
	while IFS=: read -r dir prog; do
		if [[ ! -x $o/$dir/$prog ]]; then
			echo "FAIL: $dir/$prog: not built with sanitizers"
			bad=$((bad + 1))
			continue
		fi
		rc=0
		(cd "$o/$dir" &&
			ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
			UBSAN_OPTIONS=print_stacktrace=1 \
			timeout 600 "./$prog") >"$work/san.out" 2>&1 || rc=$?
		if ((rc != 0 && rc != 4)) ||
			grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: [A-Za-z]*Sanitizer' \
				"$work/san.out"; then
			grep -E -A 12 'Sanitizer|runtime error:' "$work/san.out" | head -n 60
			echo "FAIL: $dir/$prog under ASan+UBSan+LSan: exit $rc"
			bad=$((bad + 1))
		else
			echo "clean: $dir/$prog (exit $rc)"
		fi
	done <<<"$programs_list"
	((bad == 0)) || fail "$bad sanitizer build or run failures"
}

# The KTAP test names and JSON row names of every program are the
# committed lists of tests/names/ (tests/check_names.py): a rename is an
# API change, made on purpose with --write. The check must be able to
# fail: the same output against a list with one name renamed.
names_unchanged() {
	local kept=$work/names-out lists=$work/names-renamed rc=0
	need python3
	make -s -C "$top" all >/dev/null || fail "cannot build the collection"
	python3 "$top/tests/check_names.py" --keep "$kept" "$top" ||
		fail "a KTAP test name or JSON row name changed"
	cp -r "$top/tests/names" "$lists"
	sed -i 's/^ktap getsid$/ktap getsid_renamed/' "$lists/syscall_overhead.names"
	python3 "$top/tests/check_names.py" --lists "$lists" --from "$kept" \
		"$top" >"$work/names-renamed.out" || rc=$?
	if ((rc != 1)) || ! grep -q '^+ktap getsid$' "$work/names-renamed.out"; then
		fail "the check passed a renamed row (exit $rc): $(tail -n 3 "$work/names-renamed.out")"
	fi
	echo "a renamed row fails the check, as it must"
}

# Every program: an unknown option and its own bad values give exit 2
# with a message on stderr.
bad_usage() {
	local line dir prog s rc errs=0 checked=0 programs_list
	expect_usage_error() {
		rc=0
		checked=$((checked + 1))
		timeout 60 "$@" >/dev/null 2>"$work/err" || rc=$?
		if ((rc != 2)) || [[ ! -s $work/err ]]; then
			echo "FAIL: '$*' exited $rc (want 2), stderr: $(head -c 200 "$work/err")"
			errs=$((errs + 1))
		else
			echo "usage error: '$*' -> $rc: $(head -n 1 "$work/err")"
		fi
	}
	programs_list=$(programs) || exit 1
	while IFS=: read -r dir prog; do
		expect_usage_error "$top/$dir/$prog" --no-such-option
		expect_usage_error "$top/$dir/$prog" extra-argument
	done <<<"$programs_list"
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
	for s in "$top"/bench/*.sh "$top"/scripts/*.sh "$top"/testkernel/*.sh \
		"$top"/scripts/*.py "$top"/tests/*.py; do
		[[ -x $s ]] || continue
		expect_usage_error "$s" --no-such-option
	done
	expect_usage_error "$top/kbench" --no-such-option
	expect_usage_error "$top/kbench" kernel no-such-task
	expect_usage_error "$top/kbench" kernel build --no-such-option
	expect_usage_error "$top/run_all.sh" --bogus
	expect_usage_error "$top/run_all.sh" -t no_such_test
	expect_usage_error "$top/scripts/compare.py" /nonexistent.json /nonexistent.json
	expect_usage_error "$top/tests/run.sh" --bogus
	expect_usage_error "$top/scripts/report.py" /nonexistent
	# A collection it cannot list is a failure, never an empty plan.
	rc=0
	KSRC=/nonexistent "$top/run_all.sh" --no-build -t syscall_overhead \
		>"$work/nolist.out" 2>/dev/null || rc=$?
	if ((rc != 1)) || grep -q '^1\.\.' "$work/nolist.out"; then
		echo "FAIL: run_all.sh without a kselftest tree exited $rc: $(head -c 200 "$work/nolist.out")"
		errs=$((errs + 1))
	fi
	echo "$checked bad invocations checked"
	((errs == 0)) || fail "$errs usage errors were not handled"
}

# SIGTERM each program while it runs, and run_all.sh: nothing may survive
# it or be left behind (tests/sigterm.sh), in a private IPC and mount
# namespace when possible, so that other users of SysV IPC and POSIX
# queues on the machine do not show up and /dev/mqueue is mounted there
# only.
sigterm_check() {
	local ns=()
	need pgrep:procps pkill:procps ipcs:util-linux setsid:util-linux \
		mountpoint:util-linux unshare:util-linux
	# In a chroot / is no mount point: its propagation cannot change.
	if unshare --ipc --mount true 2>/dev/null; then
		ns=(unshare --ipc --mount --propagation private)
	elif unshare --ipc --mount --propagation unchanged true 2>/dev/null; then
		ns=(unshare --ipc --mount --propagation unchanged)
	else
		echo "note: no private IPC namespace here: other IPC users may show up"
	fi
	"${ns[@]}" "$top/tests/sigterm.sh" "$@"
}

# pmqtest's checks fail on the bugs they name (strace fault injection);
# exit 4 (an explicit SKIP) when strace is missing.
pmqtest_faults() {
	need strace
	"$top/pmqtest/inject_faults.sh"
}
sigterm_leftovers() { sigterm_check; }
run_all_sigterm() { sigterm_check --run-all; }

# The HTML report of a small run and of an A/B run, opened in headless
# Chromium: no console error, every plot drawn, a known row on the page.
# Screenshots stay in $KBENCH_ARTIFACTS (default: the step's work dir).
report_in_browser() {
	local d=$work/report shots=${KBENCH_ARTIFACTS:-$work/report} rc=0
	mkdir -p "$d" "$shots"
	"$top/scripts/report.py" --check || rc=$?
	((rc != 4)) || { echo "missing matplotlib ($(note_missing python3-matplotlib))"; exit 4; }
	need chromium
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
	# kbench series' page of a recorded run (tests/data/series/steps):
	# the rows that moved, exact wording, no sideways scroll at 1,300 px.
	cp -r "$top/tests/data/series/steps" "$d/series"
	"$top/kbench" series --resume --state "$d/series" --report "$d/series.html" \
		>"$d/series.out" 2>&1 || fail "kbench series on a recorded run failed: $(tail -n 3 "$d/series.out")"
	python3 "$top/tests/browser_check.py" --plots 0 --fits --width 1300 \
		--text "instructions per operation" --text msgsnd_rcv \
		--screenshot "$shots/series.png" "$d/series.html" ||
		fail "the series page is not right in the browser"
	# Its cells' A/B pages: ksys_msgsnd's two nops read slower (exact).
	grep -q 'href="series-ab/3-6aa810902329.html"' "$d/series.html" ||
		fail "the series page does not link its commits' A/B pages"
	python3 "$top/tests/browser_check.py" --plots 2 --fits --width 1300 \
		--text "slower (exact)" --screenshot "$shots/series-ab.png" \
		"$d/series-ab/3-6aa810902329.html" ||
		fail "a series' A/B page is not right in the browser"
	# The one-instruction A/B of that run (its base against the getppid
	# nop): the exact rule's words and plot, no sideways scroll.
	local boots=$top/tests/data/series/steps/boots
	"$top/scripts/report.py" -o "$d/exact-ab.html" \
		"$boots/37f4b1112799ed725be5a06850037c76c8ee4901" \
		"$boots/1d1d872998e704078ac4525322edc6a1a21ee0c0" 2>"$d/err" ||
		fail "the exact A/B page failed: $(cat "$d/err")"
	python3 "$top/tests/browser_check.py" --plots 2 --fits --width 1300 \
		--text "guest instructions per operation" --text "one boot per side" \
		--screenshot "$shots/exact-ab.png" "$d/exact-ab.html" ||
		fail "the exact A/B page is not right in the browser"
	"$top/scripts/report.py" -o "$d/bad.html" "$d/run/syscall_overhead.json" \
		"$d/ab/base/pmqtest.json" 2>"$d/err" &&
		fail "report.py compared runs of different tests"
	grep -q "different tests" "$d/err" || fail "unclear message: $(cat "$d/err")"
	echo "reports checked in chromium; screenshots in $shots"
}

vm_debian_6_1() {
	need file python3
	"$top/scripts/ci_vm.sh"
}

# A kernel A/B whose boots die before the tests start (rdinit that does
# not exist: a panic at boot): each boot is tried once more, said in the
# stream, the failed try's console kept, and no verdict comes of it.
ab_boot_retry() {
	local out=$work/retry rc=0

	need file python3
	"$top/run_all.sh" --kernel debian-6.1 --vs-kernel debian-6.1 --repeat 1 \
		--append rdinit=/nonexistent -t syscall_overhead --json "$out" \
		>"$work/retry.ktap" 2>"$work/retry.err" || rc=$?
	((rc == 1)) || fail "exit $rc, want 1: $(tail -n 3 "$work/retry.err")"
	(($(grep -c '^# .* boot 1 ended before the tests started (exit 125): trying once more$' \
		"$work/retry.ktap") == 2)) || fail "no second try of each side's boot"
	(($(grep -c '^not ok [12] kbench: ' "$work/retry.ktap") == 2)) ||
		fail "the failed boots are not 'not ok'"
	[[ -f $out/base/console-1-failed.log ]] ||
		fail "the failed try's console was not kept"
	# The boots must have died of the panic, not of anything else.
	grep -q 'Kernel panic' "$out/base/console-1-failed.log" ||
		fail "the failed try did not panic: $(grep -m 1 'vm_run.sh: ' "$work/retry.err")"
}

# The ioctl and .ks code paths on a kernel that has the interfaces.
testkernel_patched() {
	need file python3
	"$top/testkernel/run.sh" --patched-only
}

# ---- exact mode (QEMU's instruction counter) ------------------------------

# The patched test kernel's image (built and cached by testkernel/), or
# $KBENCH_TESTKERNEL_IMAGE.
patched_image() {
	local img=${KBENCH_TESTKERNEL_IMAGE:-}

	[[ -n $img ]] || img=$("$top/testkernel/build.sh" --patched | sed -n 's/^patched=//p') ||
		fail "testkernel/build.sh --patched failed"
	[[ -f $img ]] || fail "no patched test kernel image '$img'"
	echo "$img"
}

# exact_rows DIR WANT: compare DIR/base with DIR/candidate (compare.py's
# JSON, kept as DIR.json) and check its rows: WANT is a list of
# "ROW:VERDICT" that must be exact or near with that verdict (or
# "ROW:VERDICT:CLASS", that class); every other exact row must read same
# with no change at all.
exact_rows() {
	local dir=$1 cal

	shift
	cal=()
	# The base kernel's calibration the A/B took (its own boots, or the cache).
	[[ ! -f $dir/calibration.json ]] || cal=(--calibration "$dir/calibration.json")
	"$top/scripts/compare.py" -f json "${cal[@]}" "$dir/base" "$dir/candidate" >"$dir.json" ||
		fail "compare.py"
	python3 - "$dir.json" "$@" <<'PY' || fail "the exact verdicts are not the expected ones"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
want = {w.split(":")[0]: w.split(":")[1:] for w in sys.argv[2:]}
bad = 0
for r in rows:
    if r["clock"] != "icount" and r["verdict"] not in ("skipped", "missing"):
        print(f"FAIL: {r['test']}:{r['name']} is not an icount row"); bad = 1
    if r["name"] in want:
        verdict, *cls = want[r["name"]]
        ok = r["verdict"] == verdict and r["class"] in (cls or ["exact", "near"])
        print(f"{r['name']}: {r['verdict']} ({r['class']}), "
              f"{r['delta']} insn, x{r['ratio']}")
        bad |= not ok
    elif r["verdict"] in ("slower", "faster"):
        print(f"FAIL: {r['test']}:{r['name']} {r['verdict']} ({r['class']})")
        bad = 1
    elif r["class"] == "exact" and abs(r["delta"]) >= 0.5:
        print(f"FAIL: exact row {r['name']} moved {r['delta']} insn"); bad = 1
missing = set(want) - {r["name"] for r in rows}
for m in missing:
    print(f"FAIL: no row {m}"); bad = 1
sys.exit(bad)
PY
}

# An A/A of the patched test kernel in exact mode, one boot each: no
# verdict, and every exact row identical to the instruction.
icount_aa() {
	local img out=$work/icount-aa rc=0
	need file python3
	img=$(patched_image) || exit 1
	"$top/run_all.sh" --kernel "$img" --vs-kernel "$img" --icount \
		-t syscall_overhead,pmqtest,taskstats --json "$out" >"$out.ktap" || rc=$?
	cat "$out.ktap"
	((rc == 0)) || fail "the icount A/A exited $rc"
	grep -q '^# base: .*icount: figures are guest instructions' "$out.ktap" ||
		fail "the comparison does not say it counts instructions"
	exact_rows "$out"
}

# A known cost in exact mode, one boot: syscall_overhead under two
# seccomp filters that differ in one compare, run on getppid alone
# (--base-prefix / --vs-prefix inside the guest; any filter sends every
# system call through seccomp, hence one on both sides): getppid slower
# (exact), every other row same. The wrapper lives in the cache, which
# the guest sees (not in this step's /tmp).
icount_ab() {
	local img out=$work/icount-ab bin=${KBENCH_CACHE:-$top/.cache}/seccomp_wrap rc=0
	need file python3
	img=$(patched_image) || exit 1
	mkdir -p "${bin%/*}"
	cc -O2 -o "$bin" "$top/tests/seccomp_wrap.c" || fail "cannot build seccomp_wrap"
	"$top/run_all.sh" --kernel "$img" --icount -t syscall_overhead \
		--base-prefix "$bin -n 0 -s getppid" --vs-prefix "$bin -n 1 -s getppid" \
		--json "$out" >"$out.ktap" || rc=$?
	cat "$out.ktap"
	((rc == 0)) || fail "the icount A/B exited $rc"
	exact_rows "$out" getppid:slower
}

# The one-command validation of a patch from a tree, in exact mode: the
# bisect demo's small series (five nops at the start of getsid) on the
# test kernel's tree, its good commit against the one that adds the nops
# (an incremental build, cached by hash): getsid slower (exact) by five
# instructions, every other row same.
icount_validate() {
	local tree series good culprit out=$work/icount-validate rc=0
	need git file python3
	# The tree's unpatched build, on which the commits build incrementally.
	"$top/testkernel/build.sh" --unpatched >"$work/tk-unpatched.log" 2>&1 ||
		{ tail -n 20 "$work/tk-unpatched.log"; fail "testkernel/build.sh --unpatched failed"; }
	tree=$("$top/testkernel/build.sh" --print-tree) || fail "no test kernel tree"
	series=$("$top/scripts/bisect_demo.sh" --series small) ||
		fail "bisect_demo.sh --series small failed"
	good=$(sed -n 's/^good=//p' <<<"$series")
	culprit=$(sed -n 's/^culprit=//p' <<<"$series")
	[[ -n $good && -n $culprit ]] || fail "no commits from bisect_demo.sh: $series"
	"$top/scripts/validate.py" --tree "$tree" --base "$good" --candidate "$culprit" \
		-t syscall_overhead --json "$out" >"$out.txt" 2>"$out.err" || rc=$?
	cat "$out.txt"
	((rc == 0)) || { tail -n 20 "$out.err"; fail "validate.py exited $rc"; }
	exact_rows "$out" getsid:slower
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
		"--fail-above 5" "--vs-kernel debian-6.1" "--vs-prefix env --fail-above x" \
		"--kernel debian-6.1 --vs-kernel debian-6.12 --vs-kernel=" \
		"--base-prefix env" "--vs-prefix env --base-prefix no-such-cmd"; do
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
	# In a guest (KBENCH_MERGE=host) no python3 runs: the repetitions are
	# left for the host (kbtools.vm), which merges them as above.
	mkdir -p "$work/nopython"
	printf '#!/bin/sh\necho "python3 $*" >>"%s"\nexit 99\n' "$work/python3-calls" \
		>"$work/nopython/python3"
	chmod +x "$work/nopython/python3"
	KBENCH_MERGE=host PATH="$work/nopython:$PATH" KSRC=$ksrc \
		KSELFTEST_SYSCALL_OVERHEAD_ARGS="-i 50 -t getpid,getppid" \
		"$top/run_all.sh" --no-build -t syscall_overhead --repeat 2 \
		--vs-prefix "$bin -n 5" --json "$work/guest" >"$work/guest.ktap" ||
		fail "run_all.sh as in a guest exited non-zero"
	[[ ! -e $work/python3-calls ]] || fail "python3 ran: $(cat "$work/python3-calls")"
	[[ -f $work/guest/repetitions/candidate/2/syscall_overhead.json ]] ||
		fail "no repetitions left for the host"
	PYTHONPATH=$top/scripts python3 -c 'import sys; from kbtools import results
results.merge_repetitions(sys.argv[1], True)' "$work/guest" ||
		fail "the host could not merge the guest's repetitions"
	grep -q '"repeat": 2' "$work/guest/candidate/syscall_overhead.json" ||
		fail "no repeat key in the JSON merged on the host"
}

# scripts/bisect.sh without kernel builds: usage, state and --resume, the
# tree left on its branch, the decisions on recorded boots; the demo's
# usage. The end-to-end check is scripts/bisect_demo.sh (not here: it
# builds and boots kernels for ~30 min).
bisect_tool() {
	local rc=0
	need python3 git
	python3 -m unittest discover -s "$top/tests" -p test_bisect.py -t "$top/tests" -v ||
		fail "tests/test_bisect.py failed"
	"$top/scripts/bisect_demo.sh" --only nothing >/dev/null 2>&1 || rc=$?
	((rc == 2)) || fail "bisect_demo.sh --only nothing: exit $rc, want 2"
	"$top/scripts/bisect_demo.sh" --help | grep -q 'no-change' ||
		fail "bisect_demo.sh --help"
}

# The libFuzzer harnesses of fuzz/, each in its two builds (clang,
# ASan+UBSan and MSan), replay every committed seed once and nothing else
# (fuzz/run.sh --replay): the same inputs on every machine, whatever the
# compiler makes of the coverage; make fuzz explores. A seed that fails
# fails the step, named with the command that reproduces it. A clang
# without the libFuzzer or MSan runtime fails the step: it is not a pass.
fuzz_short() {
	local out=$top/fuzz/build san
	need clang make
	printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }\n' \
		>"$work/probe.c"
	for san in address,undefined memory; do
		if ! clang -fsanitize=fuzzer,$san -o "$work/probe" \
			"$work/probe.c" 2>"$work/probe.err"; then
			cat "$work/probe.err"
			fail "clang cannot link libFuzzer with -fsanitize=$san (apt-get install $(note_missing libclang-rt-14-dev))"
		fi
	done
	make -s -C "$top/fuzz" OUT="$out" all || fail "cannot build the fuzz harnesses"
	"$top/fuzz/run.sh" -o "$out" --replay options proc_stat cgroup netlink ||
		fail "a committed seed fails a harness (reproducer above)"
}

# Property-based tests (hypothesis) of compare.py, kbtools.results,
# ktap_check.py, kcidb.py, report.py, kbtools.lava and lava_job.py with
# Debian's python3: any input gives a result or a one-line error. A
# missing hypothesis fails the step; a skipped test fails it too.
# Derandomized (KBENCH_FUZZ_MODE=check): the committed @example()s, then
# examples that follow from each property's source, with one hash seed
# (a reader that depends on the order of a set fails every time or
# never), so one commit always gets one verdict; make fuzz explores
# (fuzz/properties.sh).
python_properties() {
	local py=/usr/bin/python3 log=$work/properties.log
	[[ -x $py ]] || fail "no $py (Debian's python3)"
	if ! "$py" -c 'import hypothesis' 2>/dev/null; then
		fail "hypothesis is missing (apt-get install $(note_missing python3-hypothesis))"
	fi
	(cd "$top/tests" && KBENCH_FUZZ_MODE=check PYTHONHASHSEED=0 \
		"$py" -m unittest discover -v -s . -p 'test_fuzz_*.py') 2>&1 |
		tee "$log" || true
	grep -q '^OK' "$log" || fail "a property does not hold (falsifying example above)"
	! grep -q 'skipped' "$log" || fail "a property test was skipped"
}

# The KCIDB exporter: its tests with kcidb-io itself (from PyPI into a
# venv of the collection's cache), then a short real run exported and
# validated. A missing kcidb-io fails the step rather than skipping it.
kcidb_export() {
	local venv=${KBENCH_CACHE:-$top/.cache}/venv-kcidb out=$work/kcidb
	need python3
	if ! "$venv/bin/python" -c 'import kcidb_io' 2>/dev/null; then
		python3 -m venv "$venv" || fail "cannot create $venv (python3-venv)"
		"$venv/bin/pip" install -q kcidb-io ||
			fail "cannot install kcidb-io from PyPI into $venv"
	fi
	(cd "$top/tests" && KBENCH_REQUIRE_KCIDB_IO=1 "$venv/bin/python" \
		-m unittest -v test_kcidb) || fail "test_kcidb failed"
	KSELFTEST_SYSCALL_OVERHEAD_ARGS="-i 50" "$top/run_all.sh" --no-build \
		-t syscall_overhead,taskstats --json "$out" >/dev/null ||
		fail "run_all.sh --json failed"
	[[ -s $out/run_all.ktap ]] || fail "run_all.sh --json kept no run_all.ktap"
	"$venv/bin/python" "$top/scripts/kcidb.py" --validate \
		-o "$work/kcidb.json" "$out" || fail "kcidb.py could not export a real run"
	grep -q '"path": "kbench.syscall_overhead.getsid"' "$work/kcidb.json" ||
		fail "the export lacks syscall_overhead's getsid"
	grep -q '"path": "kbench.taskstats.family_resolves"' "$work/kcidb.json" ||
		fail "the export lacks taskstats' checks from the KTAP stream"
	echo "kcidb.py: $(grep -c '"build_id"' "$work/kcidb.json") tests exported and valid"
}

# The LAVA translation (KTAP + JSON -> lava-test-case) and job generator.
lava_parser() {
	need python3
	python3 -m unittest discover -s "$top/tests" -p test_lava.py \
		-t "$top/tests" -v
}

# lava_phase PHASE SECONDS [ARG...]: scripts/lava_local.sh PHASE, stopped
# (SIGTERM: it cleans up) past SECONDS; says its wall time, fails naming
# the phase.
lava_phase() {
	local phase=$1 secs=$2 start=$SECONDS rc=0
	shift 2
	timeout -k 60 "$secs" "$top/scripts/lava_local.sh" "$phase" "$@" || rc=$?
	echo "lava_local.sh $phase: $((SECONDS - start)) s"
	((rc != 124)) || fail "lava_local.sh $phase did not end within $secs s"
	((rc == 0)) || fail "lava_local.sh $phase exited $rc"
}

# lava_left LAB: what of the lab is still there (its directory, a mount
# below it, a process whose root is in it); nothing when it is gone.
lava_left() {
	local r
	[[ ! -e $1 ]] || echo "$1 exists"
	grep -F " $1/" /proc/self/mountinfo | awk '{ print "mounted: " $5 }' || true
	for r in /proc/[0-9]*/root; do
		[[ $(readlink "$r" 2>/dev/null) != "$1"/* ]] || echo "process ${r%/root} runs in it"
	done
}

# lava_cleanup LAB: destroy the lab after a failure or a signal, saying
# what of it is left if anything is.
lava_cleanup() {
	timeout 600 "$top/scripts/lava_local.sh" destroy || true
	lava_left "$1" | sed 's/^/left behind: /'
}

# A LAVA lab end to end, as docs/lava.md has a user try it: a lab of its
# own (in /var/tmp) set up from nothing, started, one
# syscall_overhead job on Debian's 6.1 kernel (the image vm_debian_6_1
# fetched), its results read back through LAVA's REST API and checked
# against the job's KTAP (at least 12 measurements, getpid among them),
# stopped and destroyed: nothing left mounted, running or on disk. Debian's
# packages stay in .cache/lava/debs for the next run.
lava_lab() {
	local lab out=$work/lava-run.out port start=$SECONDS n left
	need debootstrap python3
	for port in 5432 8790; do
		if [[ -n $(ss -ltnH "sport = :$port") ]]; then
			echo "port $port is in use on this machine (a LAVA lab or a PostgreSQL of its own): the lab needs it"
			exit 4
		fi
	done
	# The guest gets the collection as built here (alone: build it).
	make -s -C "$top" all >"$work/lava-make.log" 2>&1 ||
		{ tail -n 20 "$work/lava-make.log"; fail "the collection does not build"; }
	# Not below $work: a lab that could not be unmounted must never meet
	# the rm -rf of $work (its chroot's /dev is the host's).
	lab=$(mktemp -d /var/tmp/kbench-lava-check.XXXXXX)
	export KBENCH_LAVA_DIR=$lab
	trap 'lava_cleanup "$lab"' EXIT
	lava_phase setup 1800
	lava_phase start 180
	lava_phase run 1200 -t syscall_overhead --timeout 900 >"$out"
	cat "$out"
	grep -qE '^job [0-9]+: Complete$' "$out" || fail "the job did not end Complete"
	n=$(awk '$1 == "syscall_overhead" && $4 ~ /^[0-9.]+$/ && $5 == "us"' "$out" | wc -l)
	((n >= 12)) || fail "$n measurements in us from LAVA's API, want 12 or more"
	awk '$1 == "syscall_overhead" && $2 == "getpid" && $3 == "pass" && $4 > 0' "$out" |
		grep -q . || fail "no passed getpid measurement from LAVA's API"
	lava_phase stop 120
	lava_phase destroy 300
	trap - EXIT
	left=$(lava_left "$lab")
	[[ -z $left ]] || fail "destroy left: $left"
	for port in 5432 8790; do
		[[ -z $(ss -ltnH "sport = :$port") ]] || fail "port $port still in use after destroy"
	done
	echo "lava_lab: $n measurements, the lab gone; $((SECONDS - start)) s in all"
}

# ---- other architectures (issue 16) ----------------------------------

# elf_class_machine FILE: "ELF32 Intel 80386", "ELF64 AArch64", ...
elf_class_machine() {
	readelf -h "$1" | awk -F: '/^ *Class:/ { gsub(/ /, "", $2); c = $2 }
		/^ *Machine:/ { sub(/^ +/, "", $2); m = $2 }
		END { print c, m }'
}

# all_built_for DIR WANT: every program of the collection in DIR (a
# standalone copy, or an install tree) is an ELF of WANT.
all_built_for() {
	local dir prog f got
	while IFS=: read -r dir prog; do
		f=$1/$dir/$prog
		[[ -f $f ]] || fail "$dir/$prog was not built in $1"
		got=$(elf_class_machine "$f")
		[[ $got == "$2" ]] || fail "$dir/$prog is '$got', not '$2'"
		echo "$dir/$prog: $got"
	done <<<"$(programs)"
}

# The tree holding the kselftest harness (a copy of the clone would
# provision its own).
provisioned() {
	KSRC_VERSION=6.12 "$top/scripts/provision_ksrc.sh" || fail "cannot provision the 6.12 tree"
}

# mirror_trouble ARCH STATUS WHAT: after a setup failure (STATUS 3) of a
# step that fetched Debian's ARCH packages, SKIP when the private indices
# of scripts/foreign_apt.sh could not all be fetched (a mirror in the
# middle of a sync, no network): that says nothing about the code. Any
# other failure fails the step.
mirror_trouble() {
	local d=${KBENCH_CACHE:-$top/.cache}/apt/$1

	# On stderr: callers may capture stdout (foreign_libs).
	if (($2 == 3)) && [[ -e $d/incomplete ]]; then
		grep -E '^(E|W):' "$d/update.log" | tail -n 5 >&2
		echo "Debian's $1 package indices cannot be fetched now (mirror or network): $3 not checked" >&2
		exit 4
	fi
	fail "$3: setup failed (exit status $2)"
}

# foreign_libs ARCH: Debian's libcap/libnuma of ARCH unpacked
# (scripts/cross_libs.sh); prints their directory.
foreign_libs() {
	local rc=0 log=$work/cross-libs-$1.log

	"$top/scripts/cross_libs.sh" "$1" 2>"$log" || rc=$?
	((rc == 0)) && return 0
	cat "$log" >&2
	mirror_trouble "$1" "$((rc == 1 ? 3 : rc))" "the $1 libraries"
}

# cross_one ARCH TRIPLET WANT: standalone (a copy of the clone) and in a
# kernel tree (make -C tools/testing/selftests ARCH= CROSS_COMPILE=
# TARGETS=kbench install), every program an ELF of WANT.
cross_one() {
	local arch=$1 cc=$2- want=$3 copy=$work/cross-$1 sel
	need git "${cc}gcc:gcc-$2" readelf:binutils
	# Debian's architecture names are ARCH's here (arm64, i386).
	foreign_libs "$arch" >/dev/null
	rm -rf "$copy"
	mkdir -p "$copy"
	project_tar | tar -xf - -C "$copy" || fail "cannot copy the clone"
	KBENCH_CACHE=$top/.cache make -s -C "$copy" ARCH="$arch" CROSS_COMPILE="$cc" \
		KSRC="$(provisioned)" >"$work/cross-$arch.log" 2>&1 ||
		{ tail -n 30 "$work/cross-$arch.log"; fail "standalone $arch build failed"; }
	all_built_for "$copy" "$want"
	sel=$(place_in_tree 6.12) || exit 1
	KBENCH_CACHE=$top/.cache make -C "$sel" ARCH="$arch" CROSS_COMPILE="$cc" \
		TARGETS=kbench install INSTALL_PATH="$work/cross-install-$arch" \
		>"$work/cross-intree-$arch.log" 2>&1 ||
		{ tail -n 30 "$work/cross-intree-$arch.log"; fail "in-tree $arch build failed"; }
	all_built_for "$work/cross-install-$arch/kbench" "$want"
}

cross_arm64() { cross_one arm64 aarch64-linux-gnu "ELF64 AArch64"; }
cross_i386() { cross_one i386 i686-linux-gnu "ELF32 Intel 80386"; }

# 32-bit x86 programs need an x86_64 host and the i386 C library; without
# them the step SKIPs and names the package.
need_i386_runtime() {
	[[ $(uname -m) == x86_64 ]] || { echo "not an x86_64 host"; exit 4; }
	if [[ ! -e /lib/ld-linux.so.2 ]]; then
		echo "missing the 32-bit C library ($(note_missing libc6-i386))"
		exit 4
	fi
}

# The collection as 32-bit x86 programs on this 64-bit kernel (compat
# system calls, compat netlink): every program passes, or skips with a
# reason (ktap_check.py --skip-reasons). They run with the 32-bit C
# library of libc6-i386 (or libc6:i386) and the system's libcap2:i386 and
# libnuma1:i386 when installed, else the same packages unpacked by
# scripts/cross_libs.sh (LD_LIBRARY_PATH): no dpkg --add-architecture.
i386_host_run() {
	local copy=$work/i386-run out=$work/i386.ktap rc=0 libs m=i386-linux-gnu
	local ldpath=${LD_LIBRARY_PATH:-}
	need git i686-linux-gnu-gcc:gcc-i686-linux-gnu readelf:binutils python3
	need_i386_runtime
	libs=$(foreign_libs i386)
	if [[ ! -e /lib/$m/libcap.so.2 || ! -e /usr/lib/$m/libnuma.so.1 ]]; then
		ldpath=$libs/lib/$m:$libs/usr/lib/$m${ldpath:+:$ldpath}
		echo "32-bit libcap/libnuma from $libs (no libcap2:i386 libnuma1:i386 installed)"
	fi
	rm -rf "$copy"
	mkdir -p "$copy"
	project_tar | tar -xf - -C "$copy" || fail "cannot copy the clone"
	KBENCH_CACHE=$top/.cache make -s -C "$copy" ARCH=i386 \
		CROSS_COMPILE=i686-linux-gnu- KSRC="$(provisioned)" >"$work/i386.log" 2>&1 ||
		{ tail -n 30 "$work/i386.log"; fail "i386 build failed"; }
	all_built_for "$copy" "ELF32 Intel 80386"
	KSRC=$(provisioned) LD_LIBRARY_PATH=$ldpath "$copy/run_all.sh" --no-build \
		--json "$work/i386-json" >"$out" 2>"$work/i386.err" || rc=$?
	cat "$out" "$work/i386.err"
	((rc == 0)) || fail "the 32-bit collection exited $rc"
	every_program_ok "$out" || fail "not every 32-bit program ran"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check of the 32-bit run failed"
	grep -q '"user_bits": 32' "$work/i386-json/taskstats.json" ||
		fail "taskstats' JSON does not say it ran as a 32-bit program"
}

# taskstats as a 32-bit program on the patched test kernel: the
# /proc/taskstats ioctl through the kernel's compat path
# (compat_ptr_ioctl) and the netlink replies to a 32-bit caller. The
# ioctl checks and row must run (no SKIP) and pass. The image is
# testkernel/build.sh's (cached), or $KBENCH_TESTKERNEL_IMAGE.
testkernel_i386() {
	local cache=${KBENCH_CACHE:-$top/.cache} copy libs img t rc=0
	local out=$work/tk-i386.ktap m=i386-linux-gnu
	need git i686-linux-gnu-gcc:gcc-i686-linux-gnu readelf:binutils file python3
	need_i386_runtime
	libs=$(foreign_libs i386)
	img=$(patched_image) || exit 1
	# The guest sees this host's root but its own /tmp, and starts with
	# a fresh environment: the copy lives in the cache, its libraries
	# are found by their run path.
	copy=$cache/vm/i386-kbench
	rm -rf "$copy"
	mkdir -p "$copy"
	project_tar | tar -xf - -C "$copy" || fail "cannot copy the clone"
	KBENCH_CACHE=$cache make -s -C "$copy" ARCH=i386 CROSS_COMPILE=i686-linux-gnu- \
		KSRC="$(provisioned)" LDFLAGS="-Wl,-rpath,$libs/lib/$m:$libs/usr/lib/$m" \
		>"$work/tk-i386.log" 2>&1 ||
		{ tail -n 30 "$work/tk-i386.log"; fail "i386 build failed"; }
	[[ $(elf_class_machine "$copy/taskstats/taskstats") == "ELF32 Intel 80386" ]] ||
		fail "taskstats is not a 32-bit x86 program"
	(cd "$copy" && KBENCH_CACHE=$cache KSRC=$(provisioned) ./run_all.sh --kernel "$img" --no-build \
		-t taskstats --json "$copy/json") >"$out" || rc=$?
	cat "$out"
	((rc == 0)) || fail "the 32-bit taskstats on the test kernel exited $rc"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check failed"
	for t in ioctl_matches_netlink ioctl_errors ioctl; do
		grep -qE "^    ok [0-9]+ $t\$" "$out" ||
			fail "$t did not run and pass in the 32-bit taskstats"
	done
	grep -q '"user_bits": 32' "$copy/json/taskstats.json" ||
		fail "taskstats' JSON does not say it ran as a 32-bit program"
	rm -rf "$copy"
}

# json_layout DIR...: each DIR holds the same JSON files as the first,
# each with the same keys, repetitions and rows (each row its keys and
# repetitions).
json_layout() {
	python3 - "$@" <<'PY' || fail "the JSON layouts differ"
import json, os, sys
def layout(d):
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            with open(os.path.join(d, f)) as fh:
                doc = json.load(fh)
            out[f] = {"keys": sorted(doc), "repeat": doc.get("repeat"),
                      "repetitions": len(doc.get("repetitions", [])),
                      "rows": {r["name"]: (sorted(r), len(r.get("repetitions", [])))
                               for r in doc["rows"]}}
    return out
want = layout(sys.argv[1])
for f, v in want.items():
    print(f"{f}: repeat {v['repeat']}, {len(v['rows'])} rows")
bad = not want
for d in sys.argv[2:]:
    got = layout(d)
    for f in sorted(set(want) | set(got)):
        if want.get(f) != got.get(f):
            print(f"FAIL: {d}/{f}: {got.get(f)} against {want.get(f)}"); bad = 1
sys.exit(bad)
PY
}

# The arm64 guest: Debian's 6.12 arm64 kernel under TCG, the collection
# cross-built; its KTAP as strict as the host's, its JSON back.
vm_arm64_6_12() {
	local out=$work/arm64.ktap rc=0
	need qemu-system-aarch64:qemu-system-arm aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu \
		cpio dpkg-deb:dpkg
	"$top/run_all.sh" --kernel debian-6.12 --arch arm64 --json "$work/arm64-json" \
		>"$out" || rc=$?
	cat "$out"
	((rc != 3)) || mirror_trouble arm64 "$rc" "the arm64 guest"
	((rc == 0)) || fail "the arm64 guest run exited $rc"
	every_program_ok "$out" || fail "not every program ran in the arm64 guest"
	"$top/scripts/ktap_check.py" --no-fail --skip-reasons "$out" ||
		fail "KTAP check of the arm64 guest's stream failed"
	grep -q '"arch": "aarch64", "hostname": "[^"]*", "user_bits": 64' \
		"$work/arm64-json/syscall_overhead.json" || fail "no arm64 JSON copied back"
}

# ---- each guest path a second time ----------------------------------------
# The steps below run after the first boots of their paths
# (vm_debian_6_1, vm_arm64_6_12), in the same checkout: the cache, the
# cross-built collection and the earlier results are still there, so a
# path that works once and then fails fails here.

# A guest's repetitions are merged on the host (the arm64 guest has no
# python3): --repeat 3 in an x86_64 and in an arm64 guest give, file for
# file and key for key, the JSON of a --repeat 3 here.
vm_repeat_layout() {
	local d=$work/layout arch kernel rc
	need file python3 qemu-system-aarch64:qemu-system-arm \
		aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu cpio dpkg-deb:dpkg
	KSFT_MACHINE_SLOW=yes "$top/run_all.sh" -t syscall_overhead --repeat 3 \
		--json "$d/here" >"$d-here.ktap" || fail "run_all.sh --repeat 3 here failed"
	for arch in x86_64 arm64; do
		kernel="debian-6.12"
		[[ $arch == x86_64 ]] && kernel="debian-6.1"
		rc=0
		"$top/run_all.sh" --kernel "$kernel" --arch "$arch" -t syscall_overhead \
			--repeat 3 --json "$d/$arch" >"$d-$arch.ktap" || rc=$?
		if [[ $arch == arm64 ]] && ((rc == 3)); then
			mirror_trouble arm64 "$rc" "the arm64 guest"
		fi
		((rc == 0)) || fail "--repeat 3 in the $arch guest exited $rc: $(tail -n 3 "$d-$arch.ktap")"
		[[ ! -e $d/$arch/repetitions ]] || fail "the $arch guest's repetitions were left unmerged"
	done
	json_layout "$d/here" "$d/x86_64" "$d/arm64"
}

# Issue 40's A/A: Debian 6.12 against itself on arm64 under --icount, one
# boot a side, two runs a boot, twice in a row: no verdict, getpid,
# getppid, getsid and getpgid_0 same (exact), every exact row identical
# to the instruction, each side's JSON with its two repetitions.
vm_arm64_icount_aa() {
	local k out rc
	need file python3 qemu-system-aarch64:qemu-system-arm \
		aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu cpio dpkg-deb:dpkg
	for k in 1 2; do
		out=$work/arm64-aa-$k rc=0
		"$top/run_all.sh" --kernel debian-6.12 --vs-kernel debian-6.12 --arch arm64 \
			--icount -t syscall_overhead --json "$out" >"$out.ktap" || rc=$?
		grep -v '^    ' "$out.ktap"
		((rc != 3)) || mirror_trouble arm64 "$rc" "the arm64 A/A"
		((rc == 0)) || fail "the arm64 A/A ($k of 2) exited $rc"
		grep -q '"repeat": 2,' "$out/candidate/syscall_overhead.json" ||
			fail "the candidate's JSON does not hold its two repetitions"
		exact_rows "$out" getpid:same:exact getppid:same:exact \
			getsid:same:exact getpgid_0:same:exact
	done
}

step build_collection
step config_is_union
step package_list
step shellcheck shellcheck_scripts
step lint_python
step mypy type_check
step checkpatch
step unit_c
step unit_python
step unit_python_bare_path
step collection_as_root
step names_unchanged
step bad_usage
step sigterm_leftovers
step run_all_sigterm
step sanitizers
step pmqtest_faults
step ab_runner
step bisect_tool
step fuzz_short
step python_properties
step kcidb_export
step report_in_browser
step lava_parser
if [[ -z $quick ]]; then
	step cross_arm64
	step cross_i386
	step collection_as_nobody
	step in_tree_6_12
	step in_tree_6_1
	step llvm_gen_tar
fi
if [[ -n $vm ]]; then
	step vm_debian_6_1
	step ab_boot_retry
	step i386_host_run
	step lava_lab
fi
if [[ -n $vm || -n $arm64 ]]; then
	step vm_arm64_6_12
	step vm_arm64_icount_aa
fi
if [[ -n $vm ]]; then
	step vm_repeat_layout
fi
if [[ -n $testkernel ]]; then
	step icount_aa
	step icount_ab
	step icount_validate
	step testkernel_patched
	step testkernel_i386
fi
run_steps
