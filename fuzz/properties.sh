#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Explore the property tests of the Python readers with fresh random
# examples: `kbench fuzz properties` (scripts/kbtools/fuzz.py) under this
# script's name, with the same options, output and exit status. See --help.
set -euo pipefail

KBENCH_PROG=fuzz/${0##*/} exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" fuzz properties "$@"
