#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Did my patch make it slower? `kbench validate` under this script's
name: see kbtools/validate.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kbtools import validate  # noqa: E402

if __name__ == "__main__":
    sys.exit(validate.main(sys.argv[1:], "validate.py"))
