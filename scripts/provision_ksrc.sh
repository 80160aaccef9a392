#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the path of a kernel source tree holding the kselftest harness
# and the KTAP parser, provisioned on first use from Debian's
# linux-source-$KSRC_VERSION package into .cache/ of the collection:
# `kbench kernel source` (scripts/kbtools/ksrc.py). Only the path goes to
# stdout; progress and errors go to stderr.
#
#   KSRC_VERSION   6.12 (default), 6.1, ... (Debian's linux-source-X)
#   KBENCH_CACHE   cache directory (default: <kbench>/.cache)
set -euo pipefail

# Messages say provision_ksrc, under the old name too (README.md, Layout).
KBENCH_PROG=provision_ksrc exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" kernel source "$@"
