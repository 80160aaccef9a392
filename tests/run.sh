#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's own tests (make check): the table of steps of
# scripts/kbtools/check.py (kbench check), under this script's name.
# tests/run.sh --help says the options.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KBENCH_PROG=tests/run.sh exec "$top/kbench" check "$@"
