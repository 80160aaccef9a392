#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of two kernels, or N side by side, boots interleaved: `kbench ab`
# (scripts/kbtools/ab.py) under this script's name, as run_all.sh
# --kernel BASE --vs-kernel CAND... does. See scripts/vm_ab.sh --help.
set -euo pipefail

# Messages say vm_ab.sh, under the old name too (README.md, Layout).
KBENCH_PROG=vm_ab.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" ab "$@"
