#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of kbench where --plugin (kbtools.where): inside a guest
# booted in exact mode with scripts/plugin/where_count.c loaded into QEMU,
# which counts the instructions between lib/mark.h's marks of each batch
# outside the guest. Here: the kernel's symbols (for the host to map
# addresses to functions) and the rows run. Not meant to be started by
# hand.
#
#   where_plugin_guest.sh OUTDIR PROGRAM SAMPLES BATCH ROW...
#
# OUTDIR/kallsyms is /proc/kallsyms (the guest boots nokaslr); for each
# ROW, OUTDIR/ROW/row.json and row.log are "PROGRAM -t ROW -i SAMPLES -w 0
# -b BATCH": the plugin's windows are its SAMPLES batches, in order. The
# exit status is the first failure's.
set -euo pipefail

out=$1 prog=$2 samples=$3 batch=$4
shift 4

# Addresses, not zeros: root reads them when kptr_restrict allows.
echo 0 >/proc/sys/kernel/kptr_restrict
cp /proc/kallsyms "$out/kallsyms"
for row in "$@"; do
	mkdir -p "$out/$row"
	"$prog" -t "$row" -i "$samples" -w 0 -b "$batch" \
		--json "$out/$row/row.json" >"$out/$row/row.log" 2>&1
done
