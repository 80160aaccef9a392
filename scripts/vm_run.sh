#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under virtme-ng/QEMU (an arm64 one under QEMU with --arch
# arm64) and run the kbench collection inside it: `kbench vm`
# (scripts/kbtools/vm.py) under this script's name, with the same
# options, output and exit status. See scripts/vm_run.sh --help and
# docs/vm-details.md.
set -euo pipefail

# Messages say vm_run.sh, under the old name too (README.md, Layout).
KBENCH_PROG=vm_run.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" vm "$@"
