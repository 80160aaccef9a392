#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) the patched and unpatched test kernels, boot them in
# turn, run taskstats and memcg_ks, compare and print the seeds' two
# comparisons: `kbench kernel run` (scripts/kbtools/testkernel.py) under
# this script's name, with the same options, output and exit status.
# See ./run.sh --help and README.md.
set -euo pipefail

KBENCH_PROG=${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" kernel run "$@"
