#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kbench pmqtest against rt-tests' pmqtest on the same parameters, the
# ratio of the averages:
# `kbench bench pmqtest-vs-rttests` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench pmqtest-vs-rttests "$@"
