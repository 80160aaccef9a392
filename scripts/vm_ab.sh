#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A/B of two kernels, or N side by side, boots interleaved: `kbench ab`
# (scripts/kbtools/ab.py) under this script's name, as run_all.sh
# --kernel BASE --vs-kernel CAND... does. See scripts/vm_ab.sh --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" ab "$@"
