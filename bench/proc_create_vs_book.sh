#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# proc_create's figures beside Table 28-3 of The Linux Programming
# Interface, with the ratio book / here:
# `kbench bench proc-create-vs-book` (scripts/kbtools/bench.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bench proc-create-vs-book "$@"
