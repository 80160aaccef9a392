#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A throwaway LAVA server and worker on this machine, to try and test the
# kbench LAVA job: `kbench lava local` (scripts/kbtools/lava_local.py)
# under this script's name, with the same commands and options.
# See scripts/lava_local.sh --help.
set -euo pipefail

# Messages say lava_local.sh, under the old name too (README.md, Layout).
KBENCH_PROG=lava_local.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" lava local "$@"
