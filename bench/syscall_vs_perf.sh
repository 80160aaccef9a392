#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# getppid() cost: kbench syscall_overhead beside 'perf bench syscall
# basic', interleaved rounds, the ratios of the best and median rounds:
# `kbench bench syscall-vs-perf` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench syscall-vs-perf "$@"
