#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A throwaway LAVA server and worker on this machine, to try and test the
# kbench LAVA job (scripts/lava-job.py): everything lives in a Debian 12
# chroot made with debootstrap (its own PostgreSQL, gunicorn,
# lava-scheduler and lava-worker, started and stopped by this script);
# nothing of the host's own services is touched.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prog=${0##*/}
# shellcheck source=scripts/lib.bash
. "$top/scripts/lib.bash"

base=${KBENCH_LAVA_DIR:-/var/tmp/kbench-lava}
root=$base/root		# the LAVA chroot
srv=$root/srv/kbench	# kernel, rootfs and job as the worker sees them
guest=$srv/guest	# the guest's root filesystem, packed as a cpio
state=$base/state	# pids and logs of the started daemons
mirror=${KBENCH_LAVA_MIRROR:-http://deb.debian.org/debian}
port=${KBENCH_LAVA_PORT:-8790}
suite=bookworm
worker=kbench-worker
device=kbench-qemu01
# The guest: Debian 12 with what run_all.sh needs even with --no-build
# (make and the compiler: its test list goes through the Makefiles'
# library checks), python3 for the translator, a console login.
guest_packages=python3,bash,make,gcc,libc6-dev,libcap-dev,libcap2,libnuma-dev,libnuma1,procps,util-linux,login,kmod,iproute2

usage() {
	cat <<EOF
Usage: $prog setup|start|run|stop|destroy [OPTION]...
A throwaway LAVA (server, worker and one qemu device) in a Debian 12
chroot under $base (KBENCH_LAVA_DIR), for the kbench LAVA job.

  setup     debootstrap the chroot, install PostgreSQL and LAVA 2023.01
            from Debian, create the admin, the qemu device and the worker
            (about 2 GB of disk, 5-20 minutes; once)
  start     mount /proc, /sys, /dev into the chroot, start PostgreSQL,
            gunicorn (127.0.0.1:$port, KBENCH_LAVA_PORT), lava-scheduler
            and lava-worker
  run       pack the built collection into a guest rootfs (debootstrapped
            once), submit the job (scripts/lava-job.py), wait for it, print
            its results from the REST API as a table and check them against
            the KTAP the job printed
  stop      stop what start started (by the pids it recorded), unmount
  destroy   stop, then remove $base

run options:
  --kernel IMAGE   the kernel to boot (default: Debian 12's 6.1 kernel,
                   fetched into the chroot with apt-get download)
  -t NAME, -r N, --repeat N, --full, --timeout SECS, --machine-slow
                   passed to scripts/lava-job.py (run_all.sh's options)
  --keep-rootfs    reuse the guest rootfs packed by the last run

Needs root, debootstrap, curl, jq, the Debian mirror ($mirror;
KBENCH_LAVA_MIRROR) and the collection built (make).
EOF
}

in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive HOME=/root "$@"
}

apt_root() {
	in_root apt-get -y -q -o Dpkg::Use-Pty=0 "$@"
}

mounted() {
	mountpoint -q "$1"
}

mount_root() {
	mounted "$root/proc" || mount -t proc proc "$root/proc"
	mounted "$root/sys" || mount -t sysfs sysfs "$root/sys"
	mounted "$root/dev" || mount --bind /dev "$root/dev"
	mounted "$root/dev/pts" || mount --bind /dev/pts "$root/dev/pts"
}

umount_root() {
	local m
	for m in dev/pts dev sys proc; do
		if mounted "$root/$m"; then
			umount "$root/$m" || umount -l "$root/$m"
		fi
	done
}

pg_running() {
	[[ -x $root/usr/bin/pg_ctlcluster ]] &&
		in_root pg_ctlcluster 15 main status >/dev/null 2>&1
}

pg_start() {
	pg_running || in_root pg_ctlcluster 15 main start
}

pg_stop() {
	if pg_running; then
		in_root pg_ctlcluster 15 main stop
	fi
}

manage() {
	in_root lava-server manage "$@"
}

check_host() {
	(($(id -u) == 0)) || die 2 "needs root (chroot, mount)"
	local c
	for c in debootstrap curl jq; do
		command -v "$c" >/dev/null || die 2 "$c not found (apt-get install $c)"
	done
}

# The chroot's daemons listen on the host's network: refuse to start
# where a host service already holds their ports.
check_ports() {
	local p
	for p in 5432 "$port"; do
		if ss -ltnH "sport = :$p" | grep -q .; then
			[[ $p == 5432 ]] && pg_running && continue
			[[ $p == "$port" && -s $state/gunicorn.pid ]] && continue
			die 1 "port $p is in use on this machine"
		fi
	done
}

do_setup() {
	check_host
	mkdir -p "$base" "$state"
	if [[ ! -x $root/usr/bin/apt-get ]]; then
		msg "debootstrap $suite into $root"
		rm -rf "$root"
		debootstrap --variant=minbase "$suite" "$root" "$mirror" \
			>"$state/debootstrap.log" 2>&1 ||
			die 1 "debootstrap failed: see $state/debootstrap.log"
	fi
	cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
EOF
	# No daemon starts while packages install: start does that.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	trap 'pg_stop || true; umount_root' EXIT
	mount_root
	check_ports
	apt_root update >"$state/apt.log" 2>&1 ||
		die 1 "apt-get update failed: see $state/apt.log"
	msg "installing PostgreSQL"
	apt_root install --no-install-recommends postgresql \
		>>"$state/apt.log" 2>&1 || die 1 "see $state/apt.log"
	pg_start
	msg "installing lava-server, lava-dispatcher, qemu (a few minutes)"
	apt_root install --no-install-recommends lava-server lava-dispatcher \
		qemu-system-x86 gunicorn python3-yaml ca-certificates cpio \
		>>"$state/apt.log" 2>&1 || die 1 "see $state/apt.log"
	configure_lava
	msg "setup done; next: $prog start"
}

configure_lava() {
	local dict=$root/etc/lava-server/dispatcher-config/devices/$device.jinja2

	mkdir -p "$root/etc/lava-server/settings.d"
	cat >"$root/etc/lava-server/settings.d/50-kbench.yaml" <<EOF
ALLOWED_HOSTS: ["127.0.0.1", "localhost"]
EOF
	manage migrate --noinput >"$state/manage.log" 2>&1 ||
		die 1 "lava-server manage migrate failed: see $state/manage.log"
	manage users list 2>/dev/null | grep -qw admin ||
		manage users add --superuser --staff --passwd admin admin \
			>>"$state/manage.log" 2>&1
	manage device-types add qemu >>"$state/manage.log" 2>&1 || true
	manage workers add "$worker" >>"$state/manage.log" 2>&1 || true
	mkdir -p "$(dirname "$dict")"
	cat >"$dict" <<EOF
{% extends 'qemu.jinja2' %}
{% set netdevice = 'user' %}
{% set memory = 2048 %}
{% set no_kvm = True %}
EOF
	manage devices add --device-type qemu --worker "$worker" "$device" \
		>>"$state/manage.log" 2>&1 || true
}

# The guest's init: the mounts the collection needs, then a root login
# on the serial console (LAVA's auto_login), again and again.
write_guest_init() {
	cat >"$guest/sbin/kbench-init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# bash's process substitution needs /dev/fd, which devtmpfs lacks.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm /dev/mqueue
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t mqueue mqueue /dev/mqueue
hostname kbench
while :; do
	/sbin/agetty --noclear -L ttyS0 115200 vt100
done
INIT
	chmod 755 "$guest/sbin/kbench-init"
}

# The built collection (no .git, no caches) and the kselftest files of
# the provisioned tree that its Makefiles read.
copy_collection() {
	local ksrc dest=$guest/opt/kbench mini
	ksrc=$("$top/scripts/provision-ksrc.sh")
	rm -rf "$dest"
	mkdir -p "$dest"
	tar -C "$top" --exclude=./.git --exclude=./.cache --exclude=./out \
		--exclude=./build -cf - . | tar -C "$dest" -xf -
	mini=$dest/.cache/$(basename "$ksrc")/tools/testing/selftests
	mkdir -p "$mini"
	cp -a "$ksrc/tools/testing/selftests/lib.mk" \
		"$ksrc/tools/testing/selftests/kselftest.h" \
		"$ksrc/tools/testing/selftests/kselftest_harness.h" \
		"$ksrc/tools/testing/selftests/kselftest" "$mini/"
	touch "$dest/.cache/$(basename "$ksrc")/.kbench-provisioned"
}

make_guest() {
	if [[ ! -x $guest/usr/bin/python3 ]]; then
		msg "debootstrap the guest rootfs into $guest (once)"
		rm -rf "$guest"
		mkdir -p "$srv"
		debootstrap --variant=minbase --include="$guest_packages" \
			"$suite" "$guest" "$mirror" >"$state/guest.log" 2>&1 ||
			die 1 "debootstrap of the guest failed: see $state/guest.log"
		rm -rf "$guest"/var/cache/apt/archives/*.deb \
			"$guest"/var/lib/apt/lists/* "$guest"/usr/share/doc \
			"$guest"/usr/share/man "$guest"/usr/share/locale
		chroot "$guest" passwd -d root >/dev/null
		echo kbench >"$guest/etc/hostname"
	fi
	write_guest_init
	copy_collection
}

pack_guest() {
	msg "packing the guest rootfs"
	# Uncompressed: LAVA unpacks and repacks it to append its overlay,
	# and the guest's kernel unpacks it under TCG; gzip costs minutes.
	in_root sh -c 'cd /srv/kbench/guest && find . -xdev |
		cpio -o -H newc --quiet >/srv/kbench/rootfs.cpio.tmp' ||
		die 1 "cannot pack the guest rootfs"
	rm -f "$srv/rootfs.cpio.gz"
	mv "$srv/rootfs.cpio.tmp" "$srv/rootfs.cpio"
}

# Debian 12's 6.1 kernel, fetched with apt-get download in the chroot.
debian_kernel() {
	local pkg
	pkg=$(in_root apt-cache depends linux-image-amd64 |
		sed -n 's/^ *Depends: \(linux-image-6\.1\.[^ ]*-amd64\)$/\1/p' |
		head -n 1)
	[[ -n $pkg ]] || die 1 "cannot resolve linux-image-amd64 in the chroot"
	if [[ ! -f $srv/kernel/$pkg.stamp ]]; then
		msg "fetching $pkg"
		rm -rf "$srv/kernel"
		mkdir -p "$srv/kernel"
		in_root sh -c "cd /srv/kbench/kernel && apt-get download -q $pkg" \
			>"$state/kernel.log" 2>&1 || die 1 "see $state/kernel.log"
		in_root sh -c "dpkg-deb --fsys-tarfile /srv/kbench/kernel/${pkg}_*.deb |
			tar -xf - -C /srv/kbench/kernel ./boot" ||
			die 1 "cannot unpack $pkg"
		touch "$srv/kernel/$pkg.stamp"
	fi
	cp "$srv"/kernel/boot/vmlinuz-* "$srv/vmlinuz"
}

token() {
	cat "$state/token"
}

api() {
	curl -sSf -H "Authorization: Token $(token)" \
		"http://127.0.0.1:$port/api/v0.2/$1"
}

api_up() {
	curl -sf -o /dev/null "http://127.0.0.1:$port/api/v0.2/"
}

# start_daemon NAME COMMAND...: run COMMAND in the chroot in a session of
# its own, its pid in $state/NAME.pid, its output in $state/NAME.log.
start_daemon() {
	local name=$1
	shift
	if [[ -s $state/$name.pid ]] &&
		kill -0 "$(cat "$state/$name.pid")" 2>/dev/null; then
		return 0
	fi
	setsid chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 HOME=/root "$@" >"$state/$name.log" 2>&1 </dev/null &
	echo $! >"$state/$name.pid"
}

# stop_daemon NAME: end the session start_daemon began (its qemu too).
stop_daemon() {
	local name=$1 pid k
	[[ -s $state/$name.pid ]] || return 0
	pid=$(cat "$state/$name.pid")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM -- "-$pid" 2>/dev/null || true
		for ((k = 0; k < 50; k++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	rm -f "$state/$name.pid"
}

# The worker's token file, from the server's record of the worker.
worker_token() {
	local f=$root/var/lib/lava/dispatcher/worker/token
	[[ -s $f ]] && return 0
	mkdir -p "$(dirname "$f")"
	manage workers details "$worker" | sed -n 's/^token *: //p' >"$f"
	chmod 600 "$f"
	[[ -s $f ]] || die 1 "no token for worker $worker (setup incomplete?)"
}

# The admin's API token (made on first use): CSV rows id,secret,description.
admin_token() {
	local secret
	secret=$(manage tokens list --user admin --csv | sed -n '2s/^[^,]*,\([^,]*\),.*/\1/p')
	if [[ -z $secret ]]; then
		manage tokens add --user admin >/dev/null
		secret=$(manage tokens list --user admin --csv | sed -n '2s/^[^,]*,\([^,]*\),.*/\1/p')
	fi
	[[ -n $secret ]] || die 1 "cannot make an API token for admin"
	echo "$secret"
}

do_start() {
	local k
	check_host
	[[ -x $root/usr/bin/lava-server ]] ||
		die 1 "no LAVA in $root: run '$prog setup' first"
	mkdir -p "$state"
	mount_root
	check_ports
	pg_start
	admin_token >"$state/token"
	worker_token
	start_daemon gunicorn gunicorn lava_server.wsgi --workers 2 \
		--bind "127.0.0.1:$port" --timeout 120
	start_daemon scheduler lava-server manage lava-scheduler
	start_daemon worker lava-worker --name "$worker" \
		--url "http://127.0.0.1:$port/" \
		--token-file /var/lib/lava/dispatcher/worker/token
	for ((k = 0; k < 120; k++)); do
		api_up && break
		sleep 1
	done
	api_up || die 1 "the LAVA API did not come up: see $state/gunicorn.log"
	msg "LAVA is up: http://127.0.0.1:$port/ (logs in $state)"
}

do_stop() {
	local d
	for d in worker scheduler gunicorn; do
		stop_daemon "$d"
	done
	if mounted "$root/proc"; then
		pg_stop || true
	fi
	umount_root
	msg "stopped"
}

do_destroy() {
	do_stop
	rm -rf "$base"
}

# submit JOB.yaml -> the job's id
submit() {
	jq -Rs '{definition: .}' "$1" |
		curl -sSf -H "Authorization: Token $(token)" \
			-H 'Content-Type: application/json' --data @- \
			"http://127.0.0.1:$port/api/v0.2/jobs/" | jq -r '.job_ids[0]'
}

do_run() {
	local kernel='' keep='' job_args=() id t0
	while (($#)); do
		case $1 in
		--kernel)
			(($# >= 2)) || die_usage "option '$1' needs an image"
			kernel=$2
			shift
			;;
		-t | --test | -r | --repeat)
			(($# >= 2)) || die_usage "option '$1' needs a value"
			job_args+=("$1" "$2")
			shift
			;;
		--timeout)
			(($# >= 2)) || die_usage "option '$1' needs a number of seconds"
			job_args+=("$1" "$2")
			shift
			;;
		--full | --machine-slow) job_args+=("$1") ;;
		--keep-rootfs) keep=1 ;;
		*) die_usage "unknown option '$1'" ;;
		esac
		shift
	done
	[[ -z $kernel || -f $kernel ]] || die_usage "no such kernel image '$kernel'"
	check_host
	api_up || die 1 "LAVA is not running: '$prog start' first"
	if [[ -z $keep || ! -f $srv/rootfs.cpio ]]; then
		make_guest
		pack_guest
	fi
	if [[ -n $kernel ]]; then
		cp "$kernel" "$srv/vmlinuz"
	else
		debian_kernel
	fi
	"$top/scripts/lava-job.py" --kernel file:///srv/kbench/vmlinuz \
		--rootfs file:///srv/kbench/rootfs.cpio --init /sbin/kbench-init \
		--job-name "kbench local" "${job_args[@]}" -o "$state/job.yaml"
	id=$(submit "$state/job.yaml") || die 1 "job submission failed"
	[[ $id =~ ^[0-9]+$ ]] || die 1 "job submission failed: '$id'"
	t0=$SECONDS
	msg "job $id submitted; waiting (http://127.0.0.1:$port/scheduler/job/$id)"
	until [[ $(api "jobs/$id/" | jq -r .state) == Finished ]]; do
		sleep 5
	done
	api "jobs/$id/" | jq -r '"job \(.id): \(.health)"'
	msg "job $id took $((SECONDS - t0)) s from submission to its end"
	api "jobs/$id/tests/?limit=10000" >"$state/tests.json"
	api "jobs/$id/logs/" >"$state/log.yaml"
	PYTHONPATH="$top/scripts" python3 -m kbtools.lava \
		--check-job "$state/tests.json" "$state/log.yaml"
}

main() {
	(($#)) || die_usage "no command (setup, start, run, stop, destroy)"
	local cmd=$1
	shift
	case $cmd in
	setup) do_setup "$@" ;;
	start) do_start "$@" ;;
	run) do_run "$@" ;;
	stop) do_stop "$@" ;;
	destroy) do_destroy "$@" ;;
	-h | --help) usage ;;
	*) die_usage "unknown command '$cmd'" ;;
	esac
}

main "$@"
