#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run apt-get or apt-cache on Debian's package indices of another
# architecture kept in the collection's cache, without touching the
# host's APT or dpkg configuration: `kbench debian apt`
# (scripts/kbtools/debian.py) under this script's name.
#
#   foreign_apt.sh ARCH apt-get|apt-cache ARG...
#   foreign_apt.sh ARCH update          fetch the indices now
#   KBENCH_CACHE      cache directory (default: <kbench>/.cache)
#
# Exit status: the command's; 3 when no index of ARCH could be fetched
# (update: when any index failed); 2 bad usage.
set -euo pipefail

# Messages say foreign_apt.sh, under the old name too (README.md, Layout).
KBENCH_PROG=foreign_apt.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" debian apt "$@"
