#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the lines of a guest console log in which the kernel itself
# reports trouble (WARNING: CPU: N PID: N at FILE:LINE, BUG:, Oops, ...):
# `kbench kernel trouble` (scripts/kbtools/testkernel.py) under this
# script's name. See --help.
#
#   kernel_trouble.sh CONSOLE_LOG
#
# Exit status: 0 trouble found (lines on stdout), 1 none, 2 bad usage or
# an unreadable log.
set -euo pipefail

# Messages say kernel_trouble.sh, under the old name too (README.md, Layout).
KBENCH_PROG=kernel_trouble.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" kernel trouble "$@"
