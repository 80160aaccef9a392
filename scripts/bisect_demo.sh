#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The end-to-end check of scripts/bisect.sh: `kbench bisect-demo`
# (scripts/kbtools/bisect_demo.py) under this script's name, with the
# same options, output, commits and exit status. See --help.
set -euo pipefail

# Messages say bisect_demo.sh, under the old name too (README.md, Layout).
KBENCH_PROG=bisect_demo.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bisect-demo "$@"
