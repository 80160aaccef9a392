# SPDX-License-Identifier: GPL-2.0
"""Stands in for a system without matplotlib (tests/test_report.py)."""
raise ImportError("No module named 'matplotlib' (hidden by the test)")
