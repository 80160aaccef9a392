# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# The file systems the collection needs in a guest whose init is ours,
# sourced (POSIX sh) by an initramfs guest's /init (scripts/guest/initramfs_init.sh)
# and written into the LAVA guest's init (kbtools.lava_local): one list
# for both. Not a command.

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# What udev would add: bash's process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /dev/pts /dev/shm /dev/mqueue /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t mqueue mqueue /dev/mqueue
mount -t cgroup2 cgroup2 /sys/fs/cgroup
