#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Open an HTML report in headless Chromium and check it as a reader sees
it: kbtools.browser under this script's name (see there).

    browser_check.py [--plots N] [--text TEXT]... [--screenshot PNG]
                     [--width PX] [--clip HEIGHT] [--scale F] REPORT.html
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import browser  # noqa: E402

if __name__ == "__main__":
    sys.exit(browser.main(sys.argv[1:], "browser_check.py"))
