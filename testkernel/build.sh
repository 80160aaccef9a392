#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kbench test kernel: `kbench kernel build` (scripts/kbtools/
# kernel.py) under this script's name, with the same options, output
# lines (patched=..., unpatched=..., image=...), cache and exit status.
# See ./build.sh --help and README.md.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" kernel build "$@"
