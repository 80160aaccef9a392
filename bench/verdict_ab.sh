#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Validate run_all.sh's A/B verdicts on this kernel (A/A trials, seccomp
# filters of known cost):
# `kbench bench verdict-ab` (scripts/kbtools/verdict_ab.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench verdict-ab "$@"
