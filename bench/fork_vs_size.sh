#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fork() per-creation cost against the parent's size, beside vfork() and
# posix_spawn() measured in the same run:
# `kbench bench fork-vs-size` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench fork-vs-size "$@"
