# SPDX-License-Identifier: GPL-2.0
"""kbench's Python tooling, one home per concern.

results  reads kbench JSON result files and directories, with repetitions
stats    the statistics of comparing repetitions (standard library only)
compare  turns two or more runs into per-row verdicts
ktap     parses KTAP streams and checks them strictly
"""
