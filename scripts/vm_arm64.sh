#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 guest: `kbench vm --arch arm64` (scripts/kbtools/vm.py, the
# architecture's data in scripts/kbtools/arch.py) under this script's
# name. See scripts/vm_run.sh --help and docs/vm-details.md.
set -euo pipefail

# Messages say vm_run.sh (kbtools.vm.runner), under the old name too.
KBENCH_PROG=vm_arm64.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" vm --arch arm64 "$@"
