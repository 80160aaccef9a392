#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Did my patch make it slower? See kbtools/validate.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kbtools import validate  # noqa: E402

if __name__ == "__main__":
    sys.exit(validate.main())
