#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate docs/report-ab.png, the picture of an A/B report in docs/reports.md:
# `kbench docs screenshot` (scripts/kbtools/screenshot.py) under this
# script's name, with the same options. See --help.
set -euo pipefail

# Messages say make_docs_screenshot.sh, under the old name too.
KBENCH_PROG=make_docs_screenshot.sh exec "$(dirname "${BASH_SOURCE[0]}")/../kbench" docs screenshot "$@"
