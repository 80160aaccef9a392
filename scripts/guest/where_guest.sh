#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of kbench's per-function profile (kbtools.where): runs
# inside a guest booted in exact mode (QEMU's -icount, one virtual ns per
# guest instruction) and records ftrace's function_graph tracer while one
# command runs, limited to that command's process and to the system calls
# it makes (the graph of x64_sys_call). Not meant to be started by hand.
#
#   where_guest.sh OUTDIR COMMAND [ARGUMENT]...
#
# OUTDIR/trace.txt gets the trace (durations in virtual ns: instructions),
# OUTDIR/where.log the command's output and the tracer's settings. The
# exit status is the command's, or 4 when the kernel has no
# function_graph tracer.
set -euo pipefail

out=$1
shift
mkdir -p "$out"
tr=/sys/kernel/tracing
if [[ ! -e $tr/available_tracers ]]; then
	mount -t tracefs nodev "$tr"
fi
if ! grep -qw function_graph "$tr/available_tracers"; then
	echo "where: this kernel has no function_graph tracer" >&2
	exit 4
fi

echo 0 >"$tr/tracing_on"
echo nop >"$tr/current_tracer"
# Enough for every call of a short run: the tracer drops events, and
# says so in the header, when the buffer is full.
echo 262144 >"$tr/buffer_size_kb"
echo local >"$tr/trace_clock"
echo x64_sys_call >"$tr/set_graph_function"
echo 0 >"$tr/options/function-fork"
echo function_graph >"$tr/current_tracer"
# The tracer's options exist once it is the current one. Plain
# durations: no '+', '!' or '#' marks before long ones.
echo 0 >"$tr/options/funcgraph-overhead"
# Interrupts untraced: their instructions land in the function they
# interrupt, which where's median per call leaves out.
echo 0 >"$tr/options/funcgraph-irqs"
: >"$tr/trace"

status=0
# The pid filter is this shell's, which becomes the command.
bash -c 'echo $$ >"$1/set_ftrace_pid"; echo 1 >"$1/tracing_on"; shift;
	exec "$@"' where "$tr" "$@" >"$out/where.log" 2>&1 || status=$?
echo 0 >"$tr/tracing_on"
cp "$tr/trace" "$out/trace.txt"
grep -H . "$tr/trace_clock" "$tr/buffer_size_kb" "$tr/per_cpu/cpu0/stats" \
	>>"$out/where.log" 2>/dev/null || true
echo nop >"$tr/current_tracer"
echo >"$tr/set_ftrace_pid"
echo >"$tr/set_graph_function"
exit "$status"
