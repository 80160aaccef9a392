#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What one read of memory.stat and memory.numa_stat costs, three ways
# side by side, from one run of memcg_ks:
# `kbench bench memcg-stat-read` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench memcg-stat-read "$@"
