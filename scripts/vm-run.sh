#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under virtme-ng/QEMU over the host's root filesystem (seen
# read-only) and run the kbench collection inside it with run_all.sh:
# the guest's KTAP streams to stdout, JSON results land in the host's
# --json directory, the exit status is the guest's. See usage() and
# scripts/README-vm.md.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=lib.bash
. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
cache=${KBENCH_CACHE:-$top/.cache}
vmcache=$cache/vm
vng_version=${KBENCH_VNG_VERSION:-1.42}

unused_modules=kvm,kvm_amd,kvm_intel,ahci,sr_mod,sg,iTCO_wdt,lpc_ich,i2c_i801,pcspkr,powernow_k8,aesni_intel

# Exit statuses of our own (the guest's run_all.sh supplies 0 and 1).
readonly EXIT_USAGE=2 EXIT_SETUP=3 EXIT_TIMEOUT=124 EXIT_GUEST=125

usage() {
	cat <<EOF
Usage: $prog --kernel IMAGE [VM OPTION]... [RUN_ALL OPTION]...
Boot IMAGE under virtme-ng/QEMU, the host's root filesystem mounted
read-only over 9p, and run the kbench collection inside it with
run_all.sh. The guest's KTAP goes to stdout as it runs; progress, the
accelerator used and a timing summary go to stderr.

IMAGE is one of:
  debian-6.1, debian-6.12, debian-6.1-rt, debian-6.12-rt
                  Debian's current linux-image package of that series and
                  flavour (resolved with apt-cache, fetched once with
                  'apt-get download', unpacked into .cache/vm/kernels/)
  linux-image-... an exact Debian package name, fetched the same way
  FILE            an x86 bzImage/vmlinuz; its modules are found in
                  DIR/lib/modules/VERSION where DIR is the image's
                  directory or a parent (the layout of an unpacked
                  package, or of 'make modules_install
                  INSTALL_MOD_PATH=DIR'); no modules is fine when 9p and
                  virtio are built in
  DIRECTORY       a kernel build tree (arch/x86/boot/bzImage, .config)

VM options:
  -k, --kernel IMAGE      the kernel to boot (required)
      --arch ARCH         x86_64 (default) or arm64: cross-build the
                          collection and boot an arm64 IMAGE under
                          qemu-system-aarch64 (TCG), a Debian arm64 root
                          filesystem built once into .cache/vm/ (see
                          scripts/vm-arm64.sh -h)
      --accel MODE        auto (default), kvm or tcg; auto uses KVM only
                          when a probe boot shows it can run a guest here
                          (the result is cached in .cache/vm/kvm-probe)
  -m, --memory SIZE       guest memory (default 2G)
      --cpus N            guest CPUs (default: as many as the host; 1
                          with --icount)
      --icount            exact mode: QEMU's instruction counter drives
                          the guest's clocks (-icount shift=0,sleep=off,
                          align=off; TCG only), so that a figure counts
                          the guest instructions it took (1 virtual ns
                          per instruction) whatever the host is doing;
                          every JSON file says so (machine.clock_mode)
      --append ARGS       extra kernel command line (repeatable)
      --boot-timeout SECS give up when the guest has not started the run
                          within SECS (default 300; 600 with --icount)
      --vm-timeout SECS   give up when the run inside has not ended
                          within SECS after boot (default: the sum of the
                          programs' timeouts plus 120; 0 = no limit, the
                          default with --full)
      --console FILE      keep the guest's kernel console log in FILE
  -h, --help              this help

Every other option goes to run_all.sh inside the guest, as on the host:
  -t NAME, --json DIR, --full, -o SECS, --nest STYLE, -l, ...
The collection is built on the host first (the guest cannot write to it);
--json DIR is created on the host and shared with the guest read-write.

Inside the guest: KBENCH_GUEST=tcg or kvm (recorded as machine.guest in
every JSON file: emulated figures are a functional check, not to be
compared with host figures) and KSFT_MACHINE_SLOW=yes (unless set to
something else here), so that the programs scale their work down.

Host needs (Debian packages): qemu-system-x86, busybox-static, udev, kmod,
python3-venv; virtme-ng $vng_version comes from PyPI into .cache/venv
on first use. .cache/ is the collection's (or \$KBENCH_CACHE).

Exit status: the guest's run_all.sh status (0 all passed, 1 something
failed); 2 bad usage or IMAGE is no kernel; 3 missing host package or
failed download; 124 the boot or the run timed out; 125 the guest kernel
did not boot, panicked or died during the run.
EOF
}

need_seconds() {
	[[ $2 =~ ^[0-9]+$ ]] || die_usage "invalid $1 '$2': not a number of seconds"
}

# ---- options -------------------------------------------------------------

kernel=
accel=${KBENCH_VM_ACCEL:-auto}
icount=		# --icount: QEMU's -icount options, else empty
memory=2G
cpus=
appends=()
boot_timeout=
vm_timeout=
console_keep=
json_dir=
full=
program_timeout=
guest_args=()	# run_all.sh's options, in their order
runs=1		# how many times each program runs (--repeat)
vs_prefix=	# --vs-prefix: each repetition runs both sides

# need_value OPTION WHAT "$@": OPTION (first of "$@") must have a value.
need_value() {
	(($# >= 4)) || die_usage "option '$1' needs $2"
}

parse_args() {
	while (($#)); do
		case $1 in
		-k | --kernel)
			need_value "$1" "an image" "$@"
			kernel=$2
			shift
			;;
		--kernel=*) kernel=${1#*=} ;;
		--accel)
			need_value "$1" "kvm, tcg or auto" "$@"
			accel=$2
			shift
			;;
		--accel=*) accel=${1#*=} ;;
		-m | --memory)
			need_value "$1" "a size" "$@"
			memory=$2
			shift
			;;
		--memory=*) memory=${1#*=} ;;
		--cpus)
			need_value "$1" "a number" "$@"
			cpus=$2
			shift
			;;
		--cpus=*) cpus=${1#*=} ;;
		--append)
			need_value "$1" "kernel arguments" "$@"
			appends+=("$2")
			shift
			;;
		--append=*) appends+=("${1#*=}") ;;
		--boot-timeout)
			need_value "$1" "seconds" "$@"
			boot_timeout=$2
			shift
			;;
		--boot-timeout=*) boot_timeout=${1#*=} ;;
		--vm-timeout)
			need_value "$1" "seconds" "$@"
			vm_timeout=$2
			shift
			;;
		--vm-timeout=*) vm_timeout=${1#*=} ;;
		--console)
			need_value "$1" "a file" "$@"
			console_keep=$2
			shift
			;;
		--console=*) console_keep=${1#*=} ;;
		--icount) icount=$icount_opts ;;
		--arch) shift ;;
		--arch=*) ;;
		-h | --help)
			usage
			exit 0
			;;
		# run_all.sh's options that take a value: keep the pair together.
		--json)
			need_value "$1" "a directory" "$@"
			json_dir=$2
			shift
			;;
		--json=*) json_dir=${1#*=} ;;
		-o | --timeout)
			need_value "$1" "a number of seconds" "$@"
			program_timeout=$2
			guest_args+=("$1" "$2")
			shift
			;;
		--timeout=*)
			program_timeout=${1#*=}
			guest_args+=("$1")
			;;
		-t | --test | --nest | --fail-above)
			need_value "$1" "a value" "$@"
			guest_args+=("$1" "$2")
			shift
			;;
		-r | --repeat)
			# Without a number the guest's run_all.sh takes the design's
			# (at most 8 for the whole collection).
			if (($# >= 2)) && [[ $2 =~ ^[0-9]+$ ]]; then
				runs=$((runs * 10#$2))
				guest_args+=("$1" "$2")
				shift
			else
				runs=$((runs * 8))
				guest_args+=("$1")
			fi
			;;
		--vs-prefix)
			need_value "$1" "a command" "$@"
			vs_prefix=1
			guest_args+=("$1" "$2")
			shift
			;;
		--full)
			full=1
			guest_args+=("$1")
			;;
		*) guest_args+=("$1") ;;
		esac
		shift
	done

	[[ -n $kernel ]] || die_usage "no kernel: give --kernel IMAGE (e.g. debian-6.1)"
	[[ $accel == auto || $accel == kvm || $accel == tcg ]] ||
		die_usage "invalid --accel '$accel' (use auto, kvm or tcg)"
	[[ $memory =~ ^[0-9]+[KMGT]?$ ]] ||
		die_usage "invalid --memory '$memory' (e.g. 2G, 1536M)"
	[[ -z $cpus || $cpus =~ ^[1-9][0-9]*$ ]] ||
		die_usage "invalid --cpus '$cpus': not a positive number"
	check_icount
	need_seconds --boot-timeout "$boot_timeout"
	((boot_timeout > 0)) || die_usage "--boot-timeout must be above 0"
	[[ -z $vm_timeout ]] || need_seconds --vm-timeout "$vm_timeout"
	[[ -z $program_timeout ]] || need_seconds --timeout "$program_timeout"
	if [[ -n $json_dir ]]; then
		[[ $json_dir != -* ]] || die_usage "invalid --json directory '$json_dir'"
		mkdir -p "$json_dir" || die_usage "cannot create directory '$json_dir'"
		json_dir=$(cd "$json_dir" && pwd)
		guest_args+=(--json "$json_dir")
	fi
	return 0
}

# QEMU's instruction counter (--icount): one virtual ns per guest
# instruction (shift=0), virtual time that does not follow the host's
# clock while the vCPU idles (sleep=off), and no attempt to keep it in
# step with real time (align=off). KBENCH_ICOUNT_QEMU replaces the
# options, to study other settings (README-vm.md, "Exact runs").
icount_opts=${KBENCH_ICOUNT_QEMU:-shift=0,sleep=off,align=off}

# --icount runs under TCG only (QEMU has no instruction counter under
# KVM) and on one CPU unless --cpus says otherwise; booting takes longer.
check_icount() {
	if [[ -z $icount ]]; then
		boot_timeout=${boot_timeout:-300}
		return 0
	fi
	[[ $accel != kvm ]] || die_usage "--icount needs TCG: it does not combine with --accel kvm"
	[[ $icount =~ (^|,)shift=([0-9]+)(,|$) ]] ||
		die_usage "invalid KBENCH_ICOUNT_QEMU '$icount': no shift=N"
	icount_shift=${BASH_REMATCH[2]}
	accel=tcg
	cpus=${cpus:-1}
	boot_timeout=${boot_timeout:-600}
}

# ---- host dependencies -----------------------------------------------------

have_udevd() {
	[[ -x /usr/lib/systemd/systemd-udevd || -x /lib/systemd/systemd-udevd ]] ||
		command -v udevd >/dev/null
}

# Every missing Debian package at once, so one apt-get fixes them all.
check_host() {
	local missing=()

	command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
	# virtme-ng builds its initramfs (9p/virtio modules) with busybox ...
	command -v busybox >/dev/null || missing+=(busybox-static)
	# ... and its guest init needs udevd to name the virtio-serial ports that
	# carry the guest's stdout, stderr and exit status.
	have_udevd || missing+=(udev)
	command -v depmod >/dev/null || missing+=(kmod)
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
	if ((${#missing[@]})); then
		die "$EXIT_SETUP" "missing host packages: ${missing[*]}" \
			"(install them: apt-get install ${missing[*]})"
	fi
	[[ $(uname -m) == x86_64 ]] ||
		die "$EXIT_SETUP" "only x86_64 hosts are supported, not $(uname -m)"
}

# virtme-ng from PyPI, in a venv of the collection's cache.
ensure_vng() {
	local venv=$cache/venv log

	if [[ $("$venv/bin/vng" --version 2>/dev/null) == "virtme-ng $vng_version" ]]; then
		PATH=$venv/bin:$PATH
		return
	fi
	mkdir -p "$cache"
	exec 8>"$cache/.lock-venv"
	flock 8
	if [[ $("$venv/bin/vng" --version 2>/dev/null) != "virtme-ng $vng_version" ]]; then
		msg "installing virtme-ng $vng_version from PyPI into $venv"
		log=$cache/venv-install.log
		if ! { [[ -x $venv/bin/pip ]] || python3 -m venv "$venv"; } >"$log" 2>&1 ||
			! "$venv/bin/pip" install -q "virtme-ng==$vng_version" >>"$log" 2>&1; then
			tail -n 5 "$log" >&2
			die "$EXIT_SETUP" "cannot install virtme-ng $vng_version (log: $log)"
		fi
	fi
	exec 8>&-
	PATH=$venv/bin:$PATH
}

# ---- the kernel --------------------------------------------------------------

# debian_series NAME -> "METAPACKAGE REGEX" of a short name.
debian_series() {
	case $1 in
	debian-6.1) echo 'linux-image-amd64 ^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	debian-6.1-rt) echo 'linux-image-rt-amd64 ^linux-image-6\.1\.0-[0-9]+-rt-amd64$' ;;
	debian-6.12) echo 'linux-image-6.12-amd64 ^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64$' ;;
	debian-6.12-rt) echo 'linux-image-6.12-rt-amd64 ^linux-image-6\.12\.[0-9]+\+deb[0-9]+-rt-amd64$' ;;
	*) return 1 ;;
	esac
}

# resolve_debian NAME -> the package a short name stands for today: what
# the series' metapackage depends on, else the newest matching name APT
# knows, else (offline) the newest one already in the cache.
resolve_debian() {
	local meta re pkg

	read -r meta re <<<"$(debian_series "$1")"
	pkg=$(apt-cache depends "$meta" 2>/dev/null |
		awk '$1 == "Depends:" { print $2 }' | grep -E "$re" | head -n 1) || true
	if [[ -z $pkg ]]; then
		pkg=$(apt-cache pkgnames linux-image- 2>/dev/null |
			grep -E "$re" | sort -V | tail -n 1) || true
	fi
	if [[ -z $pkg && -d $vmcache/kernels ]]; then
		pkg=$(find "$vmcache/kernels" -mindepth 1 -maxdepth 1 -printf '%f\n' |
			grep -E "$re" | sort -V | tail -n 1) || true
	fi
	[[ -n $pkg ]] ||
		die "$EXIT_SETUP" "no Debian package for $1 (tried $meta; run 'apt-get update'?)"
	echo "$pkg"
}

# fetch_package PKG -> the directory PKG is unpacked in (cached).
fetch_package() {
	local pkg=$1 dest=$vmcache/kernels/$1 dl kver

	if [[ ! -f $dest/.kbench-unpacked ]]; then
		mkdir -p "$vmcache/kernels"
		exec 8>"$vmcache/.lock-kernels"
		flock 8
	fi
	if [[ ! -f $dest/.kbench-unpacked ]]; then
		msg "fetching Debian package $pkg"
		dl=$(mktemp -d "$vmcache/dl.XXXXXX")
		echo "$dl" >"$state/partial-download"
		# _apt cannot write into a root-only cache: let it use a world-
		# writable directory, and keep apt's messages for errors only.
		chmod 755 "$dl"
		if ! (cd "$dl" && apt-get download "$pkg") >"$dl/log" 2>&1; then
			grep -E '^E:' "$dl/log" >&2 || tail -n 3 "$dl/log" >&2
			rm -rf "$dl"
			die "$EXIT_SETUP" "cannot download $pkg (run 'apt-get update'?)"
		fi
		rm -rf "$dest"
		dpkg-deb -x "$dl"/*.deb "$dl/root" ||
			die "$EXIT_SETUP" "cannot unpack $pkg"
		rm -f "$dl"/*.deb
		# Packages ship no modules.dep (their postinst makes it).
		for kver in "$dl"/root/lib/modules/*; do
			[[ -d $kver ]] || continue
			depmod -b "$dl/root" "${kver##*/}" ||
				die "$EXIT_SETUP" "depmod failed on $pkg's modules"
		done
		mv "$dl/root" "$dest"
		rm -rf "$dl" "$state/partial-download"
		touch "$dest/.kbench-unpacked"
	fi
	exec 8>&-
	echo "$dest"
}

# package_image DIR -> the one boot/vmlinuz-* of an unpacked package.
package_image() {
	local images=("$1"/boot/vmlinuz-*)

	if ((${#images[@]} != 1)) || [[ ! -f ${images[0]} ]]; then
		die "$EXIT_SETUP" "$1 holds no single boot/vmlinuz-*"
	fi
	echo "${images[0]}"
}

# An x86 boot image: "HdrS" at 0x202 (the boot protocol header).
is_bzimage() {
	[[ $(dd if="$1" bs=1 skip=514 count=4 2>/dev/null) == HdrS ]]
}

# resolve_kernel -> sets kimg (what vng boots), kimg_file (the bzImage
# itself) and kdesc (what to call it).
resolve_kernel() {
	local pkg dir

	if debian_series "$kernel" >/dev/null; then
		command -v apt-get >/dev/null ||
			die "$EXIT_SETUP" "$kernel needs apt-get (a Debian host)"
		pkg=$(resolve_debian "$kernel")
		dir=$(fetch_package "$pkg")
		kimg=$(package_image "$dir")
		kdesc="$kernel ($pkg)"
	elif [[ $kernel == linux-image-* && ! -e $kernel ]]; then
		dir=$(fetch_package "$kernel")
		kimg=$(package_image "$dir")
		kdesc=$kernel
	elif [[ -d $kernel ]]; then
		kimg=$(cd "$kernel" && pwd)
		[[ -f $kimg/arch/x86/boot/bzImage ]] ||
			die_usage "'$kernel' is a directory but no built kernel tree (no arch/x86/boot/bzImage)"
		kdesc="kernel tree $kimg"
	elif [[ -e $kernel ]]; then
		[[ -f $kernel && -r $kernel ]] ||
			die_usage "'$kernel' is not a readable file"
		kimg=$(cd "$(dirname "$kernel")" && pwd)/$(basename "$kernel")
		kdesc=$kimg
	else
		die_usage "no kernel image '$kernel' (a path, a kernel tree, debian-6.1, debian-6.12, ...)"
	fi
	kimg_file=$kimg
	[[ -d $kimg ]] && kimg_file=$kimg/arch/x86/boot/bzImage
	is_bzimage "$kimg_file" ||
		die_usage "'$kimg_file' is not an x86 kernel image (no bzImage boot header)"
	return 0
}

# ---- acceleration --------------------------------------------------------------

# One short boot under KVM to its "no root" panic (panic=-1 and -no-reboot
# make QEMU exit): on hosts where /dev/kvm opens but cannot run a guest,
# QEMU hangs or aborts instead, which the timeout turns into "no".
kvm_probe() {
	local out=$state/kvm-probe.log rc=0

	# The subshell keeps bash's "Aborted" report of a crashed QEMU quiet.
	(timeout -k 5 30 qemu-system-x86_64 -machine q35,accel=kvm -cpu host \
		-m 256M -smp 1 -nodefaults -display none -no-reboot \
		-serial stdio -kernel "$kimg_file" \
		-append "console=ttyS0 panic=-1 loglevel=5" \
		</dev/null >"$out" 2>&1
		status=$? && exit "$status") 2>/dev/null || rc=$?
	if ((rc == 0)) && grep -q 'Linux version' "$out"; then
		return 0
	fi
	if ((rc == 124 || rc == 137)); then
		kvm_why="a probe boot under KVM hung (killed after 30 s)"
	else
		kvm_why="a probe boot under KVM failed (QEMU exit status $rc$(
			grep -m 1 -i -e error -e fail "$out" | cut -c1-100 | sed 's/^/: /'))"
	fi
	return 1
}

# choose_accel -> sets accel to kvm or tcg, and kvm_why.
choose_accel() {
	local key result

	kvm_why=
	[[ $accel != auto ]] && { kvm_why="--accel $accel"; return; }
	if [[ ! -e /dev/kvm ]]; then
		kvm_why="no /dev/kvm"
	elif [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		kvm_why="no access to /dev/kvm"
	fi
	if [[ -n $kvm_why ]]; then
		accel=tcg
		return
	fi
	key="$(uname -n) $(uname -r) $(qemu-system-x86_64 --version | head -n 1)"
	if [[ -f $vmcache/kvm-probe ]] && [[ $(head -n 1 "$vmcache/kvm-probe") == "$key" ]]; then
		result=$(sed -n 2p "$vmcache/kvm-probe")
		accel=${result%% *}
		kvm_why="${result#* }; cached in $vmcache/kvm-probe"
		return
	fi
	msg "probing whether KVM can run a guest here (once per host, <= 30 s)"
	if kvm_probe; then
		accel=kvm
		kvm_why="a probe boot under KVM worked"
	else
		accel=tcg
	fi
	mkdir -p "$vmcache"
	printf '%s\n%s %s\n' "$key" "$accel" "$kvm_why" >"$vmcache/kvm-probe"
}

# ---- the run ---------------------------------------------------------------------

# Build on the host (the guest sees the tree read-only) and list the
# programs the run will start; run_all.sh checks -t names on the way.
build_and_list() {
	local out rc=0

	out=$("$top/run_all.sh" "${guest_args[@]}" --list) || rc=$?
	((rc != 4)) || die "$EXIT_SETUP" "the collection's packages are missing (see above)"
	((rc == 0)) ||
		die "$EXIT_USAGE" "run_all.sh could not build or list the collection (see above)"
	mapfile -t programs <<<"$out"
}

# The run's own limit: every program's timeout, plus room for the boot's
# leftovers and run_all.sh itself.
default_vm_timeout() {
	local p total=120

	if [[ -n $full && -z $program_timeout ]] || [[ $program_timeout == 0 ]]; then
		echo 0
		return
	fi
	for p in "${programs[@]}"; do
		[[ -n $p ]] || continue
		total=$((total + ${program_timeout:-$(settings_timeout "$top/${p%%:*}")}))
	done
	# Exact mode runs slower than plain TCG, with timeouts 4 times as
	# long in the guest (run_all.sh).
	[[ -n $icount ]] && total=$((total * 4))
	# --vs-prefix without --repeat runs the design's repetitions (at most
	# 8) of both sides.
	[[ -n $vs_prefix ]] && echo "$((total * 2 * (runs > 1 ? runs : 8)))" && return
	echo "$((total * runs))"
}

# Sort the guest's stderr: the kernel console (boot messages, and later
# kernel log lines) goes to the console log only, the rest to our stderr.
# Kernel lines that signal trouble are shown as they come.
filter_stderr() {
	local line booted=

	while IFS= read -r line || [[ -n $line ]]; do
		printf '%s\n' "$line" >>"$state/console.log"
		if [[ $line == "vm-run: guest up: "* ]]; then
			booted=1
			echo "$EPOCHREALTIME ${line#vm-run: guest up: }" >"$state/booted"
			echo "$line" >&2
		elif [[ $line == "vm-run: guest done: "* ]]; then
			echo "$EPOCHREALTIME" >"$state/done"
		elif [[ -z $booted ]]; then
			continue
		elif [[ $line =~ ^\[\ *[0-9]+\.[0-9]+\]\  ]]; then
			[[ $line =~ (WARNING|BUG|Oops|panic|Call\ Trace|RIP:|hung_task) ]] &&
				echo "vm-run: guest kernel: $line" >&2
		else
			printf '%s\n' "$line" >&2
		fi
	done
	return 0
}

# stop_after SECS MARKER FILE...: stop the guest and leave MARKER when
# none of FILE has appeared within SECS.
stop_after() {
	local deadline=$((SECONDS + $1)) marker=$2 f

	shift 2
	while ((SECONDS < deadline)); do
		for f in "$@"; do
			[[ -e $state/$f ]] && return 0
		done
		sleep 1
	done
	: >"$state/$marker"
	kill -TERM "$(cat "$state/vng.pid")" 2>/dev/null || true
	return 1
}

# The boot must reach the guest's "up" line within --boot-timeout, then
# the run its "done" line within --vm-timeout.
watchdog() {
	stop_after "$boot_timeout" boot-timeout booted exited || return 0
	[[ -e $state/booted ]] && ((vm_timeout > 0)) || return 0
	stop_after "$vm_timeout" run-timeout "done" exited || true
}

# The guest starts with a fresh environment: hand over what run_all.sh
# and the programs read (KSRC, KSELFTEST_<PROG>_ARGS).
guest_env() {
	local name

	printf ' KBENCH_GUEST=%q KSFT_MACHINE_SLOW=%q' "$accel" "${KSFT_MACHINE_SLOW:-yes}"
	[[ -z $icount ]] || printf ' KBENCH_ICOUNT=%q' "$icount_shift"
	for name in $(compgen -e); do
		[[ $name == KSRC || $name =~ ^KSELFTEST_[A-Z0-9_]+_ARGS$ ]] &&
			printf ' %s=%q' "$name" "${!name}"
	done
	return 0
}

guest_command() {
	local args=

	((${#guest_args[@]})) && args=$(printf ' %q' "${guest_args[@]}")
	printf 'exec env%s %q --no-build%s' "$(guest_env)" \
		"$top/scripts/vm-guest.sh" "$args"
}

# guest_hidden DIR: virtme-ng's guest init mounts an empty tmpfs over
# /var/tmp, /var/log and /run, so a clone (or its cache, or a KSRC)
# below them is not there in the guest unless handed over as a
# directory of its own.
guest_hidden() {
	case $1/ in
	/var/tmp/* | /var/log/* | /run/*) return 0 ;;
	esac
	return 1
}

# hidden_mounts: vng's options for the directories the guest needs that
# it would not see, outermost only. vng mounts every --rwdir, in order,
# before any --rodir, so one that holds the --json directory is handed
# over read-write (and before it), the others read-only.
hidden_mounts() {
	local d o need=() outer=()

	for d in "$top" "$cache" "${KSRC:-}"; do
		[[ -n $d && -d $d ]] && guest_hidden "$d" && need+=("$(cd "$d" && pwd)")
	done
	for d in "${need[@]}"; do
		for o in "${need[@]}"; do
			[[ $d/ == "$o"/?* ]] && continue 2
		done
		[[ " ${outer[*]} " == *" $d "* ]] || outer+=("$d")
	done
	for d in "${outer[@]}"; do
		if [[ -n $json_dir && $json_dir/ == "$d"/* ]]; then
			echo "--rwdir=$d"
		else
			echo "--rodir=$d"
		fi
	done
}

# Start vng in the background, its stdout and stderr through pipes (QEMU
# opens /proc/self/fd/1 and 2 itself and would truncate a redirected
# file), under timeout(1) in its own process group so that one signal
# stops vng, virtme-run and QEMU together.
start_vm() {
	local total=0 vng=(vng --run "$kimg" --verbose --user root --cwd "$top"
		--memory "$memory" --force-9p) a

	# Drivers for QEMU's emulated hardware that udev's coldplug would load
	# from 9p, slowly under TCG, and the collection never uses.
	vng+=(--append "modprobe.blacklist=$unused_modules")
	[[ $accel == tcg ]] && vng+=(--disable-kvm)
	[[ -n $icount ]] && vng+=(--qemu-opts "-icount $icount")
	[[ -n $cpus ]] && vng+=(--cpus "$cpus")
	mapfile -t -O "${#vng[@]}" vng < <(hidden_mounts)
	[[ -n $json_dir ]] && vng+=(--rwdir="$json_dir")
	for a in "${appends[@]}"; do
		vng+=(--append "$a")
	done
	vng+=(--exec "$(guest_command)")
	# A last resort behind the watchdog, should it ever miss.
	((vm_timeout > 0)) && total=$((boot_timeout + vm_timeout + 60))

	{
		set +e
		{
			(
				timeout -k 10 "$total" "${vng[@]}" </dev/null &
				echo "$!" >"$state/vng.pid"
				wait "$!"
			) 2>&1 >&3 3>&- | filter_stderr
			echo "${PIPESTATUS[0]}" >"$state/vng.rc"
			: >"$state/exited"
		} 3>&1 | tee "$state/ktap"
	} &
	vm_pipe=$!
	while [[ ! -s $state/vng.pid ]]; do
		sleep 0.05
	done
	watchdog &
	watchdog=$!
}

# shellcheck disable=SC2317 # called from traps
stop_vm() {
	if [[ -n ${state:-} && -s $state/vng.pid && ! -e $state/exited ]]; then
		kill -TERM "$(cat "$state/vng.pid")" 2>/dev/null || true
	fi
}

# shellcheck disable=SC2317 # called from traps
on_signal() {
	trap - INT TERM HUP
	if [[ -s $state/vng.pid ]]; then
		msg "interrupted: stopping the guest"
	else
		msg "interrupted"
	fi
	stop_vm
	[[ -n ${vm_pipe:-} ]] && { wait "$vm_pipe" 2>/dev/null || true; }
	exit 130
}

# shellcheck disable=SC2317 # called from traps
cleanup() {
	[[ -n ${watchdog:-} ]] && { kill "$watchdog" 2>/dev/null || true; }
	stop_vm
	[[ -n ${state:-} ]] || return 0
	if [[ -n $console_keep && -f $state/console.log ]]; then
		cp "$state/console.log" "$console_keep" || true
	fi
	# An interrupted download leaves no half-unpacked kernel behind.
	if [[ -f $state/partial-download ]]; then
		rm -rf "$(cat "$state/partial-download")"
	fi
	rm -rf "$state"
	return 0
}

console_tail() {
	msg "last lines of the guest console (--console FILE keeps all):"
	grep -v -e '^$' "$state/console.log" | tail -n "${1:-25}" | sed 's/^/    /' >&2
}

# ktap_totals: the run's "# Totals:" line, or counts of top-level results.
ktap_totals() {
	local t

	t=$(grep -E '^# Totals:' "$state/ktap" | tail -n 1) || true
	if [[ -n $t ]]; then
		echo "${t#\# Totals: }"
	else
		echo "ok:$(grep -c -E '^ok ' "$state/ktap") not-ok:$(grep -c -E '^not ok ' "$state/ktap")"
	fi
}

# secs FROM TO: seconds between two $EPOCHREALTIME stamps.
secs() {
	awk -v from="$1" -v to="$2" 'BEGIN { printf "%.1f", to - from }'
}

# What happened, from the markers the filter and the watchdog left.
report() {
	local rc=$1 t_end=$EPOCHREALTIME up upline boot run

	if [[ -e $state/boot-timeout ]]; then
		console_tail
		die "$EXIT_TIMEOUT" "$kdesc did not come up within $boot_timeout s (--boot-timeout)"
	fi
	if [[ ! -e $state/booted ]]; then
		console_tail
		if grep -q 'Unable to mount root fs' "$state/console.log"; then
			msg "hint: the kernel could not mount the host's root over 9p: build" \
				"9p, virtio-pci and overlayfs in, or put its modules in" \
				"DIR/lib/modules/VERSION with the image in DIR or below"
		fi
		if grep -q 'Kernel panic' "$state/console.log"; then
			die "$EXIT_GUEST" "$kdesc panicked at boot: $(grep -m 1 -o 'Kernel panic.*' "$state/console.log")"
		fi
		if ((rc == 127)); then
			msg "hint: exit status 127 is the guest's 'command not found':" \
				"$top/scripts/vm-guest.sh was not there in the guest"
		fi
		die "$EXIT_GUEST" "$kdesc did not boot (vng exit status $rc)"
	fi
	read -r up upline <"$state/booted"
	boot=$(secs "$t_start" "$up")
	run=$(secs "$up" "$t_end")
	if [[ -e $state/run-timeout ]] || { ((rc == 124 || rc == 137)) && [[ ! -e $state/done ]]; }; then
		console_tail 10
		die "$EXIT_TIMEOUT" "the run in $kdesc did not end within $vm_timeout s (--vm-timeout)"
	fi
	if [[ ! -e $state/done ]]; then
		console_tail
		if grep -q 'Kernel panic' "$state/console.log"; then
			die "$EXIT_GUEST" "$kdesc panicked during the run: $(grep -m 1 -o 'Kernel panic.*' "$state/console.log")"
		fi
		die "$EXIT_GUEST" "$kdesc died during the run (vng exit status $rc)"
	fi
	msg "$kdesc [$upline]: boot $boot s, run $run s, total $(secs "$t_start" "$t_end") s;" \
		"KTAP totals: $(ktap_totals); exit status $rc"
	exit "$rc"
}

# --arch arm64 hands the whole command line to the arm64 runner.
dispatch_arch() {
	local arch=x86_64 all=("$@")

	while (($#)); do
		case $1 in
		--arch) arch=${2:-} ;;
		--arch=*) arch=${1#*=} ;;
		esac
		shift
	done
	case $arch in
	x86_64 | amd64) return 0 ;;
	arm64 | aarch64) exec "$top/scripts/vm-arm64.sh" "${all[@]}" ;;
	*) die_usage "invalid --arch '$arch' (use x86_64 or arm64)" ;;
	esac
}

main() {
	local rc

	dispatch_arch "$@"
	parse_args "$@"
	state=$(mktemp -d "${TMPDIR:-/tmp}/kbench-vm.XXXXXX")
	trap cleanup EXIT
	trap on_signal INT TERM HUP
	check_host
	resolve_kernel
	ensure_vng
	build_and_list
	# The harness the host's build used: the guest lists the programs
	# with it (its copy in exact mode has no .cache/ of its own).
	if [[ -z ${KSRC:-} ]]; then
		KSRC=$("$top/scripts/provision-ksrc.sh") ||
			die "$EXIT_SETUP" "no kernel tree for the kselftest harness"
		export KSRC
	fi
	[[ -n $vm_timeout ]] || vm_timeout=$(default_vm_timeout)
	choose_accel
	if [[ -n $icount ]]; then
		msg "accel: TCG with QEMU's instruction counter (-icount $icount):" \
			"figures are guest instructions (1 virtual ns each at shift 0)," \
			"exact whatever the host does"
	elif [[ $accel == kvm ]]; then
		msg "accel: KVM ($kvm_why)"
	else
		msg "accel: TCG, software emulation, ~10x slower: figures are a" \
			"functional check only (KBENCH_GUEST=tcg in every JSON file)"
		msg "not KVM because $kvm_why"
	fi
	msg "booting $kdesc: ${#programs[@]} programs, boot timeout ${boot_timeout} s," \
		"run timeout $( ((vm_timeout)) && echo "$vm_timeout s" || echo none)"

	t_start=$EPOCHREALTIME
	start_vm
	wait "$vm_pipe" || true
	rc=$(cat "$state/vng.rc" 2>/dev/null || echo 255)
	report "$rc"
}

main "$@"
