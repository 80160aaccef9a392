#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare, once, the root filesystem of the arm64 guest that
# scripts/vm_arm64.sh boots (Debian's arm64 packages, packed as a newc
# cpio): `kbench debian arm64-rootfs` (scripts/kbtools/debian.py) under
# this script's name. Prints the cpio's path; progress and errors go to
# stderr.
#
#   arm64_rootfs.sh
#   KBENCH_CACHE      cache directory (default: <kbench>/.cache)
#
# Host needs: apt, dpkg-deb, cpio. Exit status: 0, 2 bad usage, 3 a failed
# download or a missing host package.
set -euo pipefail

# Messages say arm64_rootfs.sh, under the old name too (README.md, Layout).
KBENCH_PROG=arm64_rootfs.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" debian arm64-rootfs "$@"
