#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of kbench where --plugin (kbtools.where): inside a guest
# booted in exact mode with scripts/plugin/where_count.c loaded into QEMU,
# which counts the instructions between lib/mark.h's marks of each batch
# outside the guest. Here: the kernel's symbols (for the host to map
# addresses to functions) and the program run as an exact A/B runs it.
# Not meant to be started by hand.
#
#   where_plugin_guest.sh OUTDIR PROGRAM [VAR=VALUE...]
#
# OUTDIR/kallsyms is /proc/kallsyms (the guest boots nokaslr), which the
# plugin reads at the program's first mark to sum per function;
# OUTDIR/run.json and run.log are PROGRAM's whole run, every row with its
# warm-up, in the A/B's environment (the VAR=VALUE words): the plugin's
# windows are its batches, row after row, in order. The exit status is
# the program's.
set -euo pipefail

out=$1 prog=$2
shift 2

# Addresses, not zeros: root reads them when kptr_restrict allows.
echo 0 >/proc/sys/kernel/kptr_restrict
cp /proc/kallsyms "$out/kallsyms"
env "$@" "$prog" --json "$out/run.json" >"$out/run.log" 2>&1
