#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 half of scripts/vm-run.sh (--arch arm64): cross-build the
# collection, boot an arm64 kernel under qemu-system-aarch64 (TCG, -M virt
# -cpu max) with a cached Debian arm64 root filesystem as its initramfs
# (scripts/arm64-rootfs.sh) and run the collection there. The guest's KTAP
# streams to stdout, --json results are copied back, the exit status is
# the guest's. Debian's arm64 packages (kernel, root filesystem, cross
# libraries) come from the private arm64 indices of scripts/foreign-apt.sh:
# the host's APT setup is not changed. See usage() and
# scripts/README-vm.md.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=vm-run.sh
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
cache=${KBENCH_CACHE:-$top/.cache}
vmcache=$cache/vm
cross=${KBENCH_CROSS_COMPILE_ARM64:-aarch64-linux-gnu-}

readonly EXIT_SETUP=3 EXIT_TIMEOUT=124 EXIT_GUEST=125

usage() {
	cat <<EOF2
Usage: $prog --arch arm64 --kernel IMAGE [VM OPTION]... [RUN_ALL OPTION]...
Cross-build the collection for arm64 and run it in an arm64 guest under
qemu-system-aarch64 (TCG: -M virt -cpu max), its root filesystem a
minimal Debian arm64 system built once into .cache/vm/ and loaded as an
initramfs (no modules needed). KTAP goes to stdout as it runs.

IMAGE is one of:
  debian-6.12, debian-6.1   Debian's arm64 kernel of that series
                            (fetched once into .cache/vm/kernels/)
  linux-image-...           an exact Debian arm64 package name
  FILE                      an arm64 Image (or Image.gz / vmlinuz) with
                            virtio, PL011 console and initramfs support
                            built in

VM options: -m/--memory SIZE (default 2G), --cpus N (default 2; 1 with
--icount), --append ARGS, --boot-timeout SECS (default 600), --vm-timeout
SECS (default 3600), --console FILE, --icount (exact mode: QEMU's
instruction counter drives the guest's clocks, as for x86; the root
filesystem is in guest memory already). Every other option goes to
run_all.sh in the guest (-t NAME, --json DIR, --full, -o SECS, ...).

Host needs (Debian packages): qemu-system-arm, gcc-aarch64-linux-gnu,
cpio. Debian's arm64 libcap/libnuma for the cross build are fetched into
.cache/cross/arm64/ (scripts/cross-libs.sh), the guest's root into
.cache/vm/ (scripts/arm64-rootfs.sh), no emulation involved.

Exit status: the guest's run_all.sh status; 2 bad usage; 3 missing host
package, failed download or build; 124 timeout; 125 the guest died.
EOF2
}

kernel=
memory=2G
cpus=
icount=		# --icount: QEMU's -icount options (scripts/vm-run.sh's)
appends=()
boot_timeout=600
vm_timeout=3600
console_keep=
json_dir=
guest_args=()

parse_args() {
	while (($#)); do
		case $1 in
		--arch) shift ;;
		--arch=*) ;;
		-k | --kernel) kernel=${2:-}; shift ;;
		--kernel=*) kernel=${1#*=} ;;
		-m | --memory) memory=${2:-}; shift ;;
		--memory=*) memory=${1#*=} ;;
		--cpus) cpus=${2:-}; shift ;;
		--cpus=*) cpus=${1#*=} ;;
		--append) appends+=("${2:-}"); shift ;;
		--append=*) appends+=("${1#*=}") ;;
		--boot-timeout) boot_timeout=${2:-}; shift ;;
		--boot-timeout=*) boot_timeout=${1#*=} ;;
		--vm-timeout) vm_timeout=${2:-}; shift ;;
		--vm-timeout=*) vm_timeout=${1#*=} ;;
		--console) console_keep=${2:-}; shift ;;
		--console=*) console_keep=${1#*=} ;;
		--icount) icount=${KBENCH_ICOUNT_QEMU:-shift=0,sleep=off,align=off} ;;
		--accel | --accel=*)
			die_usage "--accel: the arm64 guest always runs under TCG" ;;
		-h | --help) usage; exit 0 ;;
		--json) json_dir=${2:-}; shift ;;
		--json=*) json_dir=${1#*=} ;;
		-t | --test | --nest | --fail-above | -o | --timeout | -r | --repeat)
			(($# >= 2)) || die_usage "option '$1' needs a value"
			guest_args+=("$1" "$2")
			shift
			;;
		*) guest_args+=("$1") ;;
		esac
		shift
	done
	[[ -n $kernel ]] || die_usage "no kernel: give --kernel IMAGE (e.g. debian-6.12)"
	[[ $memory =~ ^[0-9]+[KMGT]?$ ]] || die_usage "invalid --memory '$memory'"
	cpus=${cpus:-$([[ -n $icount ]] && echo 1 || echo 2)}
	[[ $cpus =~ ^[1-9][0-9]*$ ]] || die_usage "invalid --cpus '$cpus'"
	if [[ -n $icount ]]; then
		[[ $icount =~ (^|,)shift=([0-9]+)(,|$) ]] ||
			die_usage "invalid KBENCH_ICOUNT_QEMU '$icount': no shift=N"
		icount_shift=${BASH_REMATCH[2]}
	fi
	[[ $boot_timeout =~ ^[1-9][0-9]*$ ]] || die_usage "invalid --boot-timeout '$boot_timeout'"
	[[ $vm_timeout =~ ^[0-9]+$ ]] || die_usage "invalid --vm-timeout '$vm_timeout'"
	if [[ -n $json_dir ]]; then
		mkdir -p "$json_dir" || die_usage "cannot create directory '$json_dir'"
		json_dir=$(cd "$json_dir" && pwd)
	fi
	return 0
}

check_host() {
	local missing=()

	command -v qemu-system-aarch64 >/dev/null || missing+=(qemu-system-arm)
	command -v "${cross}gcc" >/dev/null || missing+=(gcc-aarch64-linux-gnu)
	command -v cpio >/dev/null || missing+=(cpio)
	((${#missing[@]} == 0)) ||
		die "$EXIT_SETUP" "missing host packages: ${missing[*]} (apt-get install ${missing[*]})"
}

# debian_arm64 NAME -> the arm64 package a short name stands for today.
debian_arm64() {
	local meta re pkg

	case $1 in
	debian-6.1) meta=linux-image-arm64 re='^linux-image-6\.1\.0-[0-9]+-arm64$' ;;
	debian-6.12) meta=linux-image-6.12-arm64 re='^linux-image-6\.12\.[0-9]+\+deb[0-9]+-arm64$' ;;
	esac
	pkg=$("$top/scripts/foreign-apt.sh" arm64 apt-cache depends "$meta" |
		awk '$1 == "Depends:" { sub(/:arm64$/, "", $2); print $2 }' |
		grep -E "$re" | head -n 1) || true
	if [[ -z $pkg ]]; then
		# Offline or a mirror hiccup: the newest one fetched before.
		pkg=$(find "$vmcache/kernels" -mindepth 2 -maxdepth 2 -name .kbench-unpacked \
			-path '*_arm64/*' 2>/dev/null | sed 's|/[^/]*$||; s|.*/||; s|_arm64$||' |
			grep -E "$re" | sort -V | tail -n 1) || true
		[[ -n $pkg ]] || die "$EXIT_SETUP" "no Debian arm64 package for $1 in Debian's arm64 indices (scripts/foreign-apt.sh arm64 update)"
		msg "warning: $1 not found in Debian's arm64 indices; using $pkg fetched before"
	fi
	echo "$pkg"
}

# fetch_arm64 PKG -> its boot/vmlinuz-* (the package unpacked once).
fetch_arm64() {
	local dest=$vmcache/kernels/$1_arm64 dl images

	if [[ ! -f $dest/.kbench-unpacked ]]; then
		mkdir -p "$vmcache/kernels"
		msg "fetching Debian package $1:arm64"
		dl=$(mktemp -d "$vmcache/dl.XXXXXX")
		chmod 755 "$dl"
		if ! (cd "$dl" && "$top/scripts/foreign-apt.sh" arm64 apt-get download "$1") \
			>"$dl/log" 2>&1; then
			grep -E '^E:|foreign-apt' "$dl/log" >&2 || true
			rm -rf "$dl"
			die "$EXIT_SETUP" "cannot download $1:arm64"
		fi
		dpkg-deb --fsys-tarfile "$dl"/*.deb | tar -x -C "$dl" ./boot ||
			die "$EXIT_SETUP" "cannot unpack $1:arm64"
		rm -rf "$dest"
		mkdir -p "$dest"
		mv "$dl/boot" "$dest/boot"
		rm -rf "$dl"
		touch "$dest/.kbench-unpacked"
	fi
	images=("$dest"/boot/vmlinuz-*)
	[[ -f ${images[0]} ]] || die "$EXIT_SETUP" "$dest holds no boot/vmlinuz-*"
	echo "${images[0]}"
}

resolve_kernel() {
	local pkg

	if [[ $kernel == debian-6.1 || $kernel == debian-6.12 ]]; then
		pkg=$(debian_arm64 "$kernel") || exit
		kimg=$(fetch_arm64 "$pkg") || exit
		kdesc="$kernel ($pkg, arm64)"
	elif [[ $kernel == linux-image-* && ! -e $kernel ]]; then
		kimg=$(fetch_arm64 "${kernel%:arm64}") || exit
		kdesc="$kernel (arm64)"
	elif [[ -f $kernel && -r $kernel ]]; then
		kimg=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")
		kdesc=$kimg
	else
		die_usage "no arm64 kernel image '$kernel' (a file, debian-6.12, debian-6.1, linux-image-...)"
	fi
}

# The collection, cross-built in its own copy (the host's build stays).
build_collection() {
	local stage=$vmcache/arm64-kbench

	mkdir -p "$stage"
	tar -C "$top" --exclude=./.cache --exclude=./.git --exclude=./out -cf - . |
		tar -C "$stage" -xf -
	# Debian's arm64 libcap/libnuma, unless multiarch ones are installed
	# (the build then names what is missing).
	"$top/scripts/cross-libs.sh" arm64 >/dev/null ||
		msg "warning: no arm64 libcap/libnuma from scripts/cross-libs.sh"
	msg "cross-building the collection for arm64 in $stage"
	ksrc=${KSRC:-$("$top/scripts/provision-ksrc.sh")} ||
		die "$EXIT_SETUP" "no kernel tree for the kselftest harness"
	KBENCH_CACHE=$cache make -s -C "$stage" ARCH=arm64 CROSS_COMPILE="$cross" KSRC="$ksrc" \
		>"$state/build.log" 2>&1 || {
		tail -n 20 "$state/build.log" >&2
		die "$EXIT_SETUP" "the arm64 cross build failed"
	}
	collection=$stage
}

# The second initramfs: /init, /kbench and the run's arguments.
make_overlay() {
	local o=$state/overlay

	mkdir -p "$o/kbench"
	tar -C "$collection" -cf - . | tar -C "$o/kbench" -xf -
	install -m 755 "$top/scripts/arm64-init.sh" "$o/init"
	# run_all.sh lists a test's programs with its Makefile (emit_tests),
	# which reads the harness's lib.mk; nothing in the guest compiles.
	mkdir -p "$o/ksrc/tools/testing/selftests"
	cp "$ksrc/tools/testing/selftests/lib.mk" "$o/ksrc/tools/testing/selftests/"
	{
		# KBENCH_BPF=n: the cross build left BPF out; the listing (make
		# emit_tests) must not look for clang in a guest without one.
		printf 'export KBENCH_GUEST=tcg KSFT_MACHINE_SLOW=%q KSRC=/ksrc KBENCH_BPF=n\n' \
			"${KSFT_MACHINE_SLOW:-yes}"
		[[ -z $icount ]] || printf 'export KBENCH_ICOUNT=%q\n' "$icount_shift"
		printf 'args=(%s)\n' "$( ((${#guest_args[@]})) && printf '%q ' "${guest_args[@]}")"
		[[ -n $json_dir ]] && printf 'args+=(--json /tmp/json)\njson=/tmp/json\n'
	} >"$o/kbench-args"
	(cd "$o" && find . -print0 | cpio --null -o -H newc --quiet) >"$state/overlay.cpio"
	cat "$rootfs" "$state/overlay.cpio" >"$state/initrd.cpio"
}

# Console lines: the KTAP to stdout, the JSON tar to the --json directory,
# the marker lines to the state directory. The kernel's own lines after
# the run (sysrq's power-off) stay in the console log only.
filter_console() {
	local line in_json=

	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$state/console.log"
		case $line in
		"vm-run: guest up: "*)
			echo "$EPOCHREALTIME" >"$state/booted"
			echo "$line" >&2
			;;
		"vm-run: json begin") in_json=1 ;;
		"vm-run: json end") in_json= ;;
		"vm-run: guest done: exit status "*)
			echo "${line##* }" >"$state/done"
			;;
		*)
			if [[ -n $in_json ]]; then
				printf '%s\n' "$line" >>"$state/json.b64"
			elif [[ -e $state/booted && ! -e $state/done ]]; then
				printf '%s\n' "$line"
			fi
			;;
		esac
	done
}

run_guest() {
	local append="console=ttyAMA0 rdinit=/init panic=-1 quiet" total a
	local exact=()

	for a in "${appends[@]}"; do
		append+=" $a"
	done
	total=$((boot_timeout + vm_timeout))
	((vm_timeout == 0)) && total=0
	t_start=$EPOCHREALTIME
	if [[ -n $icount ]]; then
		exact=(-icount "$icount")
		msg "booting $kdesc under qemu-system-aarch64 (TCG, -cpu max) with" \
			"QEMU's instruction counter (-icount $icount): figures are guest" \
			"instructions, exact whatever the host does"
	else
		msg "booting $kdesc under qemu-system-aarch64 (TCG, -cpu max): emulated," \
			"figures are a functional check only"
	fi
	timeout -k 10 "$total" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on \
		"${exact[@]}" -smp "$cpus" -m "$memory" -nodefaults -display none -no-reboot \
		-serial stdio -kernel "$kimg" -initrd "$state/initrd.cpio" \
		-append "$append" </dev/null 2>"$state/qemu.err" | filter_console
	qemu_rc=${PIPESTATUS[0]}
}

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	[[ -n ${state:-} ]] || return 0
	[[ -n $console_keep && -f $state/console.log ]] && cp "$state/console.log" "$console_keep"
	rm -rf "$state"
	return 0
}

report() {
	local t_end=$EPOCHREALTIME rc

	if [[ ! -e $state/booted ]]; then
		grep -v '^$' "$state/console.log" "$state/qemu.err" 2>/dev/null | tail -n 20 | sed 's/^/    /' >&2
		((qemu_rc == 124)) && die "$EXIT_TIMEOUT" "$kdesc did not come up in time"
		die "$EXIT_GUEST" "$kdesc did not boot (qemu exit status $qemu_rc)"
	fi
	if [[ ! -e $state/done ]]; then
		tail -n 20 "$state/console.log" | sed 's/^/    /' >&2
		((qemu_rc == 124)) && die "$EXIT_TIMEOUT" "the run in $kdesc did not end in time"
		die "$EXIT_GUEST" "$kdesc died during the run (qemu exit status $qemu_rc)"
	fi
	if [[ -n $json_dir ]]; then
		base64 -d "$state/json.b64" | tar -xzf - -C "$json_dir" ||
			msg "warning: could not unpack the guest's JSON results"
	fi
	rc=$(cat "$state/done")
	msg "$kdesc: boot $(awk -v a="$t_start" -v b="$(cat "$state/booted")" 'BEGIN { printf "%.1f", b - a }') s," \
		"run $(awk -v a="$(cat "$state/booted")" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }') s;" \
		"exit status $rc"
	exit "$rc"
}

main() {
	parse_args "$@"
	check_host
	state=$(mktemp -d "${TMPDIR:-/tmp}/kbench-arm64.XXXXXX")
	trap cleanup EXIT
	resolve_kernel
	rootfs=$("$top/scripts/arm64-rootfs.sh") || die "$EXIT_SETUP" "no arm64 root filesystem"
	build_collection
	make_overlay
	run_guest
	report
}

main "$@"
