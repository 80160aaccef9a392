#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CI step: boot Debian kernels other than the host's and run every test
# directory inside each: `kbench ci-vm` (scripts/kbtools/ci_vm.py) under
# this script's name. See scripts/ci_vm.sh --help.
#
#   scripts/ci_vm.sh [KERNEL]...
set -euo pipefail

# Messages say ci_vm.sh, under the old name too (README.md, Layout).
KBENCH_PROG=ci_vm.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" ci-vm "$@"
