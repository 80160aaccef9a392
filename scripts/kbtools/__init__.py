# SPDX-License-Identifier: GPL-2.0
"""kbench's Python tooling: KTAP parsing, JSON results, statistics."""
