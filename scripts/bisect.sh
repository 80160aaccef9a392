#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which kernel commit made a figure slower (or a check fail)? `kbench
# bisect` (scripts/kbtools/bisect_run.py, its decisions kbtools.bisect's)
# under this script's name, with the same options, output and exit
# status: see scripts/bisect.sh --help.
set -euo pipefail

KBENCH_PROG=bisect.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" bisect "$@"
