#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which kernel commit made a figure slower (or a check fail)? The
# bisection is kbtools.bisect_run's (its decisions kbtools.bisect's):
# see scripts/bisect.sh --help.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHONPATH="$top/scripts${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m kbtools.bisect_run "$@"
