#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each libFuzzer harness for a fixed time (or a fixed number of
# runs): `kbench fuzz run` (scripts/kbtools/fuzz.py) under this script's
# name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=fuzz/${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" fuzz run "$@"
