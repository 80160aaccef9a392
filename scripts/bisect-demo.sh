#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The end-to-end check of scripts/bisect.sh: two series of 7 commits on
# top of the test kernel's unpatched tree, one of which makes getsid()
# 200 ns slower, the other with no functional change. Bisecting the
# first must name that commit; the second must end in 'no culprit'.
# See usage().
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=bisect-demo.sh
# shellcheck source=lib.bash
. "$top/scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog [--only regression|no-change|small] [--keep DIR] [BISECT OPTION]...
Make two series of 7 commits on top of the test kernel's unpatched tree
(testkernel/build.sh --print-tree; built once with testkernel/build.sh
--unpatched, so that every kernel here is an incremental build):

  regression  comments, a printk at init, a documentation file, and one
              commit that adds ndelay(200) at the start of getsid()
  no-change   the same with a comment instead of the delay
  small       the same with five nops at the start of getsid() instead
              of the delay (+5 instructions, +1.7%: for --icount, which
              counts them; a real clock cannot see it; not run unless
              named with --only)

and bisect each with
  scripts/bisect.sh --tree TREE --good unpatched --bad TIP -t syscall_overhead:getsid

The commits are made without touching the tree's files (a private index)
and with fixed dates, so that a second demo finds every image cached by
hash. The tree is switched to its unpatched branch for the run (under
testkernel's build lock) and put back on its branch afterwards.

  --only SERIES   run one series only
  --keep DIR      keep the bisections' state directories in DIR
  --series SERIES make that series' commits and print them (good=HASH,
                  bad=HASH, culprit=HASH; culprit empty for no-change),
                  bisecting nothing: for recording boots of its kernels
                  (bench/bisect_boots.py)
  -h, --help      this help

These go to scripts/bisect.sh: --max-repeat, --alpha, --threshold, -j,
--accel, --boot-timeout, --vm-timeout (each with its value), --icount.
Exit status: 0 the regression's (and small's) culprit is the commit that
slows getsid and the no-change series has no culprit; 1 otherwise; 2 bad
usage.
EOF
}

only=
keep=
print_series=
pass=()

parse_args() {
	while (($#)); do
		case $1 in
		--only)
			need_value "$1" "regression, no-change or small" "$#"
			only=$2
			shift
			;;
		--keep)
			need_value "$1" "a directory" "$#"
			keep=$2
			shift
			;;
		--series)
			need_value "$1" "regression, no-change or small" "$#"
			print_series=$2
			shift
			;;
		-h | --help)
			usage
			exit 0
			;;
		--icount) pass+=("$1") ;;
		--max-repeat | --alpha | --threshold | -j | --jobs | --accel | \
			--boot-timeout | --vm-timeout)
			need_value "$1" "a value" "$#"
			[[ -n $2 && $2 != -* ]] || die_usage "invalid $1 '$2'"
			pass+=("$1" "$2")
			shift
			;;
		*) die_usage "unknown argument '$1'" ;;
		esac
		shift
	done
	[[ -z $only || $only =~ ^(regression|no-change|small)$ ]] ||
		die_usage "invalid --only '$only' (regression, no-change or small)"
	[[ -z $print_series || $print_series =~ ^(regression|no-change|small)$ ]] ||
		die_usage "invalid --series '$print_series' (regression, no-change or small)"
}

git_demo() {
	GIT_AUTHOR_NAME=kbench GIT_AUTHOR_EMAIL=kbench@localhost \
		GIT_COMMITTER_NAME=kbench GIT_COMMITTER_EMAIL=kbench@localhost \
		GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' \
		git -C "$tree" "$@"
}

# edit PARENT FILE SED_SCRIPT SUBJECT: a commit on PARENT whose FILE is
# PARENT's run through sed (a new FILE when PARENT has none); prints its
# hash.
edit() {
	local parent=$1 file=$2 script=$3 subject=$4 blob old tree_id

	old=$(git_demo rev-parse -q --verify "$parent:$file") || old=
	blob=$({ if [[ -n $old ]]; then git_demo cat-file blob "$old"; else
		printf '%s\n' "kbench bisection demo" "====================="; fi; } |
		sed -e "$script" | git_demo hash-object -w --stdin)
	[[ $blob != "$old" ]] || die 1 "the edit '$subject' changed nothing in $file"
	GIT_INDEX_FILE=$work/index git_demo read-tree "$parent"
	GIT_INDEX_FILE=$work/index git_demo update-index --add --cacheinfo "100644,$blob,$file"
	tree_id=$(GIT_INDEX_FILE=$work/index git_demo write-tree)
	git_demo commit-tree "$tree_id" -p "$parent" -m "$subject"
}

# series KIND: the 7 commits on unpatched; sets tip and culprit.
# shellcheck disable=SC2016 # sed scripts: '$a' is sed's, not a variable
series() {
	local c delay

	c=$(git_demo rev-parse unpatched)
	c=$(edit "$c" kernel/sys.c '/^SYSCALL_DEFINE1(getsid, pid_t, pid)$/i\
/* getsid(0) is the session id of the caller. */' \
		"sys: say what getsid(0) returns")
	c=$(edit "$c" init/main.c '/^\tkernel_init_freeable();$/a\
\tpr_info("kbench bisect demo: a harmless message at init\\n");' \
		"init: say hello from kernel_init()")
	c=$(edit "$c" Documentation/kbench-bisect-demo.rst '$a\
The kbench bisection demo adds this file.' \
		"Documentation: a file of the kbench bisection demo")
	if [[ $1 == small ]]; then
		delay='/^SYSCALL_DEFINE1(getsid, pid_t, pid)$/,/^\tint retval;$/{
/^\tint retval;$/a\
\
\tasm volatile("nop\\n\\tnop\\n\\tnop\\n\\tnop\\n\\tnop");
}'
		c=$(edit "$c" kernel/sys.c "$delay" "sys: getsid: five nops first")
		culprit=$c
	elif [[ $1 == regression ]]; then
		delay='/^SYSCALL_DEFINE1(getsid, pid_t, pid)$/,/^\tint retval;$/{
/^\tint retval;$/a\
\
\tndelay(200);
}
/^#include <linux\/kmsg_dump.h>$/a\
#include <linux/delay.h>'
		c=$(edit "$c" kernel/sys.c "$delay" "sys: getsid: wait 200 ns first")
		culprit=$c
	else
		c=$(edit "$c" kernel/sys.c '/^SYSCALL_DEFINE1(getsid, pid_t, pid)$/i\
/* It takes no lock but RCU. */' "sys: getsid: say which lock it takes")
		culprit=
	fi
	c=$(edit "$c" kernel/sys.c '/^SYSCALL_DEFINE1(getpgid, pid_t, pid)$/i\
/* getpgid(0) is the process group of the caller. */' \
		"sys: say what getpgid(0) returns")
	c=$(edit "$c" init/main.c '/^\tasync_synchronize_full();$/a\
\t/* the demo message is printed above */' \
		"init: a comment in kernel_init()")
	c=$(edit "$c" Documentation/kbench-bisect-demo.rst '$a\
Nothing here changes what the kernel does.' \
		"Documentation: say what the demo's file is for")
	tip=$c
}

lock() {
	flock "${tree%/*/*}/.lock-build" "$@"
}

# shellcheck disable=SC2317 # called from traps
cleanup() {
	stop_child
	if [[ -n ${orig:-} ]]; then
		lock git -C "$tree" checkout -q "$orig" ||
			msg "could not put $tree back on $orig"
	fi
	[[ -z ${work:-} ]] || rm -rf "$work"
}

# run KIND: bisect one series; fails when the outcome is not the right one.
run() {
	local kind=$1 rc=0 start=$SECONDS last

	series "$kind"
	rm -rf "${states:?}/$kind"
	msg "$kind series: $(git_demo rev-list --count unpatched.."$tip") commits on" \
		"unpatched, tip ${tip:0:12}${culprit:+, the delay in ${culprit:0:12}}"
	# In the background, so that a signal reaches it (cleanup stops it).
	run_child "$top/scripts/bisect.sh" --tree "$tree" --good unpatched \
		--bad "$tip" -t syscall_overhead:getsid --state "$states/$kind" \
		"${pass[@]}" > >(tee "$work/$kind.out") || rc=$?
	wait # for tee, which has the last line
	last=$(tail -n 1 "$work/$kind.out")
	msg "$kind series: exit $rc in $((SECONDS - start)) s"
	if [[ $kind != no-change ]]; then
		[[ $rc == 0 && $last == "first bad commit: $culprit "* ]] && return 0
		msg "FAIL: want 'first bad commit: $culprit ...'"
	else
		[[ $rc == 1 && $last == "no culprit: "* ]] && return 0
		msg "FAIL: want 'no culprit: ...'"
	fi
	return 1
}

main() {
	local bad=0 kind

	parse_args "$@"
	tree=$("$top/testkernel/build.sh" --print-tree)
	[[ -f $tree/.kbench-ready ]] ||
		die 1 "no test kernel tree yet: run testkernel/build.sh --unpatched first"
	work=$(mktemp -d "${TMPDIR:-/tmp}/kbench-bisect-demo.XXXXXX")
	if [[ -n $print_series ]]; then
		trap 'rm -rf "$work"' EXIT
		series "$print_series"
		echo "good=$(git_demo rev-parse unpatched)"
		echo "bad=$tip"
		echo "culprit=$culprit"
		return 0
	fi
	states=${keep:-$work}
	mkdir -p "$states"
	trap cleanup EXIT
	trap 'exit 130' INT TERM HUP
	orig=$(git -C "$tree" symbolic-ref -q --short HEAD) || orig=$(git -C "$tree" rev-parse HEAD)
	[[ $orig == unpatched ]] && orig=
	[[ -z $orig ]] || lock git -C "$tree" checkout -q -f unpatched
	for kind in regression no-change small; do
		# The small series is for --icount: run only when named.
		[[ -z $only && $kind != small ]] || [[ $only == "$kind" ]] || continue
		run "$kind" || bad=1
	done
	if ((bad == 0)); then
		msg "PASS"
	else
		msg "FAIL"
	fi
	return "$bad"
}

main "$@"
