#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Record seeds for the fuzz harnesses from real kernels and file them into
# the corpus by decoder family: `kbench corpus record`
# (scripts/kbtools/corpus.py) under this script's name, with the same
# options and exit status. It runs itself inside the guest (--guest).
#
# Usage: fuzz/record_corpus.sh [-r RECORDER] [-o CORPUS] [-k IMAGE]... [-H]
# (fuzz/record_corpus.sh --help tells more)
set -euo pipefail

KBENCH_PROG=record_corpus.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" corpus record "$@"
