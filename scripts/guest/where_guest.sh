#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of kbench's per-function profile (kbtools.where): runs
# inside a guest booted in exact mode (QEMU's -icount, one virtual ns per
# guest instruction) and records ftrace's function_graph tracer while a
# row of a program runs, limited to the program's process and to the
# system calls it makes (the graph of x64_sys_call). Not meant to be
# started by hand.
#
#   where_guest.sh OUTDIR PROGRAM SHORT LONG BATCH ROW...
#
# For each ROW, in OUTDIR/ROW: short/ and long/ hold the trace of
# "PROGRAM -t ROW -i SHORT|LONG -w 0 -b BATCH" (trace.txt, durations in
# virtual ns: instructions) and where.log (the program's output and the
# tracer's buffer stats); row.json and row.log are the row run untraced
# (LONG - SHORT samples). The exit status is the first failure's, or 4
# when the kernel has no function_graph tracer.
set -euo pipefail

out=$1 prog=$2 short=$3 long=$4 batch=$5
shift 5
tr=/sys/kernel/tracing

# The tracer on, not yet recording: every function's entry and exit
# run its hooks from now on, so the untraced run needs tracer_off.
tracer_on() {
	echo function_graph >"$tr/current_tracer"
	# The tracer's options exist once it is the current one. Plain
	# durations: no '+', '!' or '#' marks before long ones.
	echo 0 >"$tr/options/funcgraph-overhead"
	# Interrupts untraced: their instructions land in the function they
	# interrupt, which where's median per call leaves out.
	echo 0 >"$tr/options/funcgraph-irqs"
}

tracer_off() {
	echo 0 >"$tr/tracing_on"
	echo nop >"$tr/current_tracer"
}

# Trace "$@" into $1/trace.txt, its output and the buffer's stats into
# $1/where.log.
traced() {
	local dir=$1 status=0
	shift
	mkdir -p "$dir"
	tracer_on
	: >"$tr/trace"
	# The pid filter is this shell's, which becomes the command.
	bash -c 'echo $$ >"$1/set_ftrace_pid"; echo 1 >"$1/tracing_on"
		shift; exec "$@"' where "$tr" "$@" >"$dir/where.log" 2>&1 ||
		status=$?
	echo 0 >"$tr/tracing_on"
	cp "$tr/trace" "$dir/trace.txt"
	grep -H . "$tr/per_cpu/cpu0/stats" >>"$dir/where.log" || true
	tracer_off
	return "$status"
}

if [[ ! -e $tr/available_tracers ]]; then
	mount -t tracefs nodev "$tr"
fi
if ! grep -qw function_graph "$tr/available_tracers"; then
	echo "where: this kernel has no function_graph tracer" >&2
	exit 4
fi

tracer_off
# Enough for every call of a long run: the tracer counts what it drops
# in the buffer's stats, which kbtools.where reads.
echo 262144 >"$tr/buffer_size_kb"
echo local >"$tr/trace_clock"
echo x64_sys_call >"$tr/set_graph_function"
echo 0 >"$tr/options/function-fork"

for row in "$@"; do
	d=$out/$row
	traced "$d/short" "$prog" -t "$row" -i "$short" -w 0 -b "$batch"
	traced "$d/long" "$prog" -t "$row" -i "$long" -w 0 -b "$batch"
	# The tracer is off here (tracer_off): the row's own figure.
	"$prog" -t "$row" -i $((long - short)) -w 0 -b "$batch" \
		--json "$d/row.json" >"$d/row.log" 2>&1
done

echo >"$tr/set_ftrace_pid"
echo >"$tr/set_graph_function"
