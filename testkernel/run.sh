#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the patched and unpatched test kernels with build.sh,
# boot them in turn under virtme-ng (run_all.sh --kernel UNPATCHED
# --vs-kernel PATCHED --repeat N), run taskstats and memcg_ks inside, keep
# both JSON result sets, compare them with verdicts and print the seeds'
# two comparisons. Fails when a run fails, a row that needs the patched
# kernel (or its BTF) skipped there, or the guest kernel logged a WARNING,
# BUG or Oops.
# See usage() and README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
prog=${0##*/}
# shellcheck source=../scripts/lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.bash"

usage() {
	cat <<EOF
Usage: $prog [OPTION]...
Run the kbench tests taskstats and memcg_ks on the test kernel built by
build.sh from Debian's linux-source-6.12 with the series in patches/
(patched) and without it (unpatched), booted in turn under virtme-ng
(TCG unless KVM works here; run_all.sh --kernel unpatched --vs-kernel
patched --repeat N, ABBA...). Prints the KTAP streams, the verdict per row
of patched against unpatched, and the seeds' comparisons (ioctl vs per-pid
netlink; memory.stat.ks filters vs memory.stat) as measured in the guest.

Options:
  -o, --out DIR        keep results in DIR (default: out/testkernel/DATE
                       in the clone): DIR/{patched,unpatched}/ hold the
                       JSON files (one repetition per boot), DIR/ktap.txt
                       the KTAP stream and DIR/compare.txt the verdicts
  -r, --repeat N       boots of each kernel (default 4: the fewest that
                       can give a verdict; TCG boots take minutes)
  -N, --processes LIST taskstats process counts, comma separated (default
                       1000; the first one runs with memcg_ks, each other
                       one in a boot of its own, e.g. 1000,10000)
      --patched-only   build and boot only the patched kernel (no compare)
      --btf            the kernels built with BTF (build.sh --btf), so
                       that the BPF iterator rows run there too
      --accel MODE     auto, kvm or tcg (default: tcg; KVM hangs on the
                       development machine, see scripts/vm-run.sh)
  -h, --help           this help

On the patched kernel the RFC ioctl and the .ks rows and checks must run,
and the BPF iterator ones too with --btf: one that skips there fails
the run.

Exit status: 0 all passed and the guests logged no kernel warning;
1 a test failed, a patched-kernel row skipped, a guest logged a
WARNING/BUG/Oops, or a step failed;
2 bad usage; 3 a missing host package.
EOF
}

out=
repeat=4
procs=1000
accel=tcg
kernels=(patched unpatched)
btf=()		# --btf: for build.sh and summary.py

parse_args() {
	while (($#)); do
		case $1 in
		-o | --out)
			(($# >= 2)) || die_usage "option '$1' needs a directory"
			out=$2
			shift
			;;
		--out=*) out=${1#*=} ;;
		-N | --processes)
			(($# >= 2)) || die_usage "option '$1' needs a list of counts"
			procs=$2
			shift
			;;
		--processes=*) procs=${1#*=} ;;
		-r | --repeat)
			(($# >= 2)) || die_usage "option '$1' needs a number"
			repeat=$2
			shift
			;;
		--repeat=*) repeat=${1#*=} ;;
		--patched-only) kernels=(patched) ;;
		--btf) btf=(--btf) ;;
		--accel)
			(($# >= 2)) || die_usage "option '$1' needs auto, kvm or tcg"
			accel=$2
			shift
			;;
		--accel=*) accel=${1#*=} ;;
		-h | --help)
			usage
			exit 0
			;;
		*) die_usage "unknown argument '$1'" ;;
		esac
		shift
	done
	[[ $procs =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
		die_usage "invalid --processes '$procs': want counts like 1000,10000"
	[[ $accel =~ ^(auto|kvm|tcg)$ ]] || die_usage "invalid --accel '$accel'"
	[[ $repeat =~ ^[1-9][0-9]*$ ]] || die_usage "invalid --repeat '$repeat'"
	out=${out:-$top/out/testkernel/$(date -u +%Y%m%dT%H%M%SZ)}
}

declare -A image

build_kernels() {
	local line status=0 which=()

	[[ " ${kernels[*]} " == *" unpatched "* ]] || which=(--patched)
	"$here/build.sh" "${which[@]}" "${btf[@]}" >"$out/build.txt" || status=$?
	if ((status)); then
		msg "build.sh failed (exit $status)"
		exit "$status"
	fi
	while read -r line; do
		[[ $line =~ ^(patched|unpatched)=(.*)$ ]] &&
			image[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done <"$out/build.txt"
}

# Kernel messages that mean the kernel itself went wrong, in the
# kernel's own formats (not a user-space program's "WARNING:").
kernel_trouble() {
	"$here/kernel-trouble.sh" "$1"
}

# boot_run KERNEL SUBDIR N TIMEOUT TEST...: one boot, taskstats with N
# processes, TIMEOUT seconds per program ("" = the settings file's).
boot_run() {
	local k=$1 dir=$out/$2 n=$3 status=0 start=$SECONDS t tests=()

	[[ -n $4 ]] && tests+=(--timeout "$4")
	shift 4
	for t; do
		tests+=(-t "$t")
	done
	mkdir -p "$dir"
	msg "booting the $k kernel: $* (taskstats with $n processes) -> $dir"
	KSELFTEST_TASKSTATS_ARGS="--processes=$n" \
		"$top/scripts/vm-run.sh" --kernel "${image[$k]}" --accel "$accel" \
		--console "$dir/console.log" --json "$dir" \
		"${tests[@]}" 2> >(tee "$dir/vm-run.err" >&2) |
		tee "$dir/ktap.txt" || status=$?
	msg "$k kernel, $*: exit $status after $((SECONDS - start)) s"
	if [[ -f $dir/console.log ]] && kernel_trouble "$dir/console.log" >"$dir/trouble.txt"; then
		msg "the $k kernel logged trouble:"
		sed 's/^/    /' "$dir/trouble.txt" >&2
		status=1
	fi
	return "$status"
}

# ab_run N: unpatched and patched booted in turn, --repeat times each,
# taskstats with N processes and memcg_ks; DIR/unpatched, DIR/patched.
ab_run() {
	local status=0 f

	msg "booting unpatched and patched in turn, $repeat boots each -> $out"
	KSELFTEST_TASKSTATS_ARGS="--processes=$1" \
		"$top/run_all.sh" --kernel "${image[unpatched]}" \
		--vs-kernel "${image[patched]}" --repeat "$repeat" \
		--accel "$accel" --timeout 900 --json "$out/ab" \
		-t taskstats -t memcg_ks 2> >(tee "$out/vm-run.err" >&2) |
		tee "$out/ktap.txt" || status=$?
	mv "$out/ab/base" "$out/unpatched"
	mv "$out/ab/candidate" "$out/patched"
	rmdir "$out/ab" 2>/dev/null || true
	for f in "$out"/unpatched/console-*.log "$out"/patched/console-*.log; do
		[[ -f $f ]] || continue
		if kernel_trouble "$f" >"$out/trouble.txt"; then
			msg "a kernel logged trouble ($f):"
			sed 's/^/    /' "$out/trouble.txt" >&2
			status=1
		fi
	done
	return "$status"
}

main() {
	local k n first failed=0 counts ts_json=() ktaps=()

	parse_args "$@"
	mkdir -p "$out"
	build_kernels
	IFS=, read -r -a counts <<<"$procs"
	first=${counts[0]}
	if [[ " ${kernels[*]} " == *" unpatched "* ]]; then
		ab_run "$first" || failed=1
		echo "== verdicts: patched against unpatched (guest figures)"
		python3 "$top/scripts/compare.py" --label unpatched,patched \
			"$out/unpatched" "$out/patched" | tee "$out/compare.txt" || true
	else
		boot_run patched patched "$first" 900 taskstats memcg_ks || failed=1
	fi
	# Larger counts: emulated fork and exit of 10000 processes alone
	# take minutes, beyond the settings file's timeout.
	for k in "${kernels[@]}"; do
		for n in "${counts[@]:1}"; do
			boot_run "$k" "$k-$n" "$n" 1800 taskstats || failed=1
		done
	done

	echo "== the seeds' comparisons on the patched kernel (guest figures)"
	ts_json=("$out/patched/taskstats.json")
	for n in "${counts[@]:1}"; do
		ts_json+=("$out/patched-$n/taskstats.json")
	done
	# The ioctl, .ks and bpf_iter rows and checks must have passed there
	# (a passing check leaves no JSON row: the guests' KTAP says).
	mapfile -t ktaps < <(find "$out" -maxdepth 2 -name ktap.txt \
		\( -path "$out/ktap.txt" -o -path "$out/patched*" \) | sort)
	# The bpf_iter rows too when the kernels were built with BTF.
	if ! python3 "$here/summary.py" "${btf[@]}" "${ktaps[@]/#/--require-patched=}" \
		"${ts_json[@]/#/--taskstats=}" \
		--memcg="$out/patched/memcg_ks.json" | tee "$out/summary.txt"; then
		msg "the patched kernel skipped rows it must run (see above)"
		failed=1
	fi
	msg "results in $out"
	if ((failed)); then
		msg "FAILED: a run failed or a guest kernel logged trouble"
		return 1
	fi
	return 0
}

main "$@"
