#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The table of seed 000 (the /proc/taskstats RFC benchmark): seconds per
# pass over 1000 and 10000 processes for every method, with ratios:
# `kbench bench taskstats-seed` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench taskstats-seed "$@"
