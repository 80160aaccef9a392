#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's libcap and libnuma packages of another architecture into
# .cache/cross/ARCH/, where lib/kbench.mk finds them for a cross build:
# `kbench debian cross-libs` (scripts/kbtools/debian.py) under this
# script's name.
#
#   cross_libs.sh ARCH        arm64, i386, armhf, ...
#   KBENCH_CACHE              cache directory (default: <kbench>/.cache)
#
# Prints the directory. Exit status: 0; 1 a package could not be fetched;
# 2 bad usage; 3 no index of ARCH could be fetched (mirror or network).
set -euo pipefail

# Messages say cross_libs.sh, under the old name too (README.md, Layout).
KBENCH_PROG=cross_libs.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" debian cross-libs "$@"
