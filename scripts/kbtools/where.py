# SPDX-License-Identifier: GPL-2.0
"""Where the instructions went: a per-function difference of the rows of
syscall_overhead between two kernels, in exact mode.

Each kernel boots once under QEMU's instruction counter (one virtual ns
per guest instruction). Inside, scripts/guest/where_guest.sh records
ftrace's function_graph tracer, limited to the program's process and to
the graph of x64_sys_call (every system call), while each row runs
SHORT and then LONG samples; each row also runs once untraced. A call's
self count is its duration less its children's: the instructions it
ran itself, the tracer's per-call cost included. How often each system
call runs per operation is (LONG - SHORT) / operations: what the
program does once (exec, setup, its output) cancels. What it runs is
its typical path (the most common sequence of calls), each call the
median over the graphs that took it: interrupts and preemptions stay
out.

Between two kernels the tracer's per-call cost cancels for every
function called as often on both sides, as long as the tracer is the
same (a kernel and a patch of it); the table says where the number of
calls changed, and when every function moved (another tracer). The sum
of the changes is checked against the row's own delta, measured
untraced in the same boots. What the tracer cannot see is not in the
table: the entry code (noinstr), functions marked notrace, user space,
the paths off the typical one; inlined functions count as their
caller's. docs/where.md has the measurements.

With --plugin, kbench's QEMU TCG plugin counts instead, outside the
guest (kbtools.where_plugin): every instruction of the row's batches
in the whole program, run as an exact A/B runs it (the row after the
rows before it, with its warm-up), no tracer in the guest, so the table is exact between any two kernels
and the process-creation rows have one too (by each function's mean
over the batches, which differ there: the means add up to the mean
window). The A/B's, validate's and a series' --where count with the
plugin when it can be provisioned (mechanism(), --where-with).

    kbench where --kernel BASE --vs-kernel CAND [-t syscall_overhead:ROW]
    kbench where --profile DIR/base/ROW --vs-profile DIR/cand/ROW
"""

import argparse
import dataclasses
import json
import os
import re
import shlex
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Set, Tuple)

from kbtools import (arch, cli, collection, images, paths, policy, proc,
                     qemu_plugin, results, stats, vng)
from kbtools import where_plugin
from kbtools.output import msg

PROGRAM = "syscall_overhead"
# The rows where can profile, and the system calls of one operation: a
# trace keeps the graphs of these only. The process-creation rows are not
# here: their children are other tasks, which the pid filter leaves out.
ROW_SYSCALLS: Dict[str, Tuple[str, ...]] = {
    "getpid": ("getpid",), "getppid": ("getppid",),
    "getpgid_self": ("getpgid",), "getpgid_0": ("getpgid",),
    "getsid": ("getsid",), "msgget_ctl": ("msgget", "msgctl"),
    "msgsnd_rcv": ("msgsnd", "msgrcv"), "shmget_ctl": ("shmget", "shmctl"),
    "shmat_ctl": ("shmat", "shmdt"),
}
# The root of every system call's graph (where_guest.sh's
# set_graph_function), and the prefixes of the call it makes: the
# wrapper of a system call with arguments, the body of one without
# (6.1's getpid).
ROOT = "x64_sys_call"
# The rows the plugin profiles (fork's and clone's children run inside
# the window too).
PLUGIN_ROWS: Tuple[str, ...] = (*ROW_SYSCALLS, "fork", "clone")
FTRACE, PLUGIN = "ftrace", "plugin"


def counts(method: str, row: str, exact_guest: bool = False) -> bool:
    """Can this mechanism profile the row (TEST:ROW, or a row of
    PROGRAM)? ftrace: not fork's and clone's, whose children its pid
    filter leaves out; the plugin: also proc_create's cells, when it
    boots the A/B's exact guest, which runs every program (where's own
    boot runs PROGRAM alone)."""
    test, _, name = row.rpartition(":")
    test = test or PROGRAM
    if method != PLUGIN:
        return test == PROGRAM and name in ROW_SYSCALLS
    if test == PROGRAM:
        return name in PLUGIN_ROWS
    return exact_guest and test in where_plugin.MARKED


def not_counted(method: str, rows: Sequence[str], exact_guest: bool
                ) -> str:
    """The line that says which rows a pass leaves out, and why."""
    why = ("ftrace's pid filter leaves their children out"
           if method == FTRACE else "only the A/B's exact guest runs "
           "their programs" if not exact_guest else "no marks")
    return f"not profiled: {', '.join(rows)} ({why})"


def countable(cands: Sequence[Tuple[str, str, Sequence[str]]], method: str,
              exact_guest: bool = False
              ) -> Tuple[List[Tuple[str, str, List[str]]], List[str]]:
    """Each candidate (label, image, rows) with the rows the mechanism
    counts; the rows it cannot, once each."""
    kept: List[Tuple[str, str, List[str]]] = []
    left: List[str] = []
    for label, image, rows in cands:
        mine = [r for r in rows if counts(method, r, exact_guest)]
        kept.append((label, image, mine))
        left += [r for r in rows if r not in mine]
    return kept, list(dict.fromkeys(left))


SYSCALL_PREFIXES = ("__x64_sys_", "__do_sys_")
BATCH = 100
SHORT, LONG = 2, 12
# A change smaller than this (instructions per operation) is rounding.
EPSILON = 0.0005
# Two deltas of one row, each printed to the thousandth (the programs'
# microseconds to six places), differ by this much through rounding
# alone: no "why" below it.
ROUNDING = 0.0015
BOOT_TIMEOUT_S = 900

HELP = """\
Usage: {prog} --kernel BASE --vs-kernel CAND [-t TEST] [--plugin]
           [--keep DIR] [--json FILE]
       {prog} --profile BASE --vs-profile CAND [--json FILE]
Where did a row's instructions go: for each row, the functions whose
self instructions per operation changed from BASE to CAND, largest
first, with their sum checked against the row's own delta.

Each kernel boots once in exact mode (QEMU -icount, one CPU). For each
row, ftrace's function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)
records the row's system calls over {short} and then {long} samples of
{batch} operations, and the row runs once untraced for its delta. Self
instructions include the tracer's per-call cost, which cancels where a
function is called as often on both sides and the tracer is the same
(a kernel and a patch of it). Code that ftrace cannot see (entry code,
notrace, user space) is in the row's delta but not in the sum.

  -k, --kernel IMAGE      the base kernel (a bzImage, a kernel tree,
                          debian-6.1, ... as kbench vm takes)
      --vs-kernel IMAGE   the candidate kernel
  -t, --test TEST         {program} (every row below, the default) or
                          {program}:ROW[,ROW]...; rows:
                          {rows}
      --plugin            count with kbench's QEMU TCG plugin instead of
                          ftrace: every instruction of the row's marked
                          batches in the whole program run as an exact
                          A/B runs it, outside the guest, no tracer cost
                          (exact between any two kernels); also rows
                          fork, clone. The plugin header comes from
                          Debian's qemu source package (the host's apt
                          sources as deb-src), once
      --profile PATH      a base profile kept by --keep: DIR/base/ROW
                          (the traces read again) or its profile.json
      --vs-profile PATH   the candidate's (DIR/cand/ROW)
      --keep DIR          keep the traces and profiles in DIR/base/ROW
                          and DIR/cand/ROW
      --json FILE         the differences as JSON ('-': stdout)
      --expect FUNC:DELTA the change expected (repeatable): exit status
                          1 unless exactly these functions changed, by
                          these deltas, and every row's sum is its delta
                          (for CI: --expect __x64_sys_getsid:+5)
  -h, --help              this help

Exit status: 0 the tables are printed (and --expect is met); 1 a boot or
the guest's run failed, the tracer lost events, or --expect is not met;
2 bad usage; 3 a missing host package (with --plugin: also Debian's qemu
source package out of the host's apt sources' reach); 4 the kernel has no
function_graph tracer.
"""


# ---- the trace --------------------------------------------------------------

# " 0)   0.724 us    |    name();", " 0)               |  name() {",
# " 0)   5.061 us    |    }". IRQ arrows do not match; comments are
# left out.
# The calls nest by two spaces a level (the first at two).
LINE = re.compile(r"^\s*\d+\)\s+(?:(\d+)\.(\d{3}) us\s+)?\| ( *)(\S.*?)\s*$")


@dataclass
class Func:
    """A function's self instructions and calls per operation."""
    self_insn: float = 0.0
    calls: float = 0.0


Profile = Dict[str, Func]
# One system call's graph: (function, self instructions) of each call,
# in the order the calls ended.
Tree = Tuple[Tuple[str, float], ...]
# The graphs of each system call (by NAME) in a trace.
Trees = Dict[str, List[Tree]]


class _Reader:
    """parse_trace's state: the open calls, the graph being read."""

    def __init__(self, wanted: Optional[Set[str]]):
        self.wanted = wanted
        # The open calls: name, and the instructions of its children.
        self.stack: List[Tuple[str, List[float]]] = []
        self.calls: List[Tuple[str, float]] = []
        self.syscall: Optional[str] = None
        self.in_root = False
        self.trees: Trees = {}

    def start(self, depth: int, name: str) -> None:
        """A call starts (or a leaf): the top of a graph, or its first
        system call, says which graph."""
        if depth == 0:
            self.in_root, self.syscall, self.calls = name == ROOT, None, []
        elif self.in_root and self.syscall is None and depth == 1:
            for prefix in SYSCALL_PREFIXES:
                if name.startswith(prefix):
                    self.syscall = name.removeprefix(prefix)

    def end(self, depth: int, name: str, self_insn: float) -> None:
        self.calls.append((name, self_insn))
        if depth == 0 and self.in_root and self.syscall is not None and \
                (self.wanted is None or self.syscall in self.wanted):
            self.trees.setdefault(self.syscall, []).append(
                tuple(self.calls))
        if depth == 0:
            self.in_root = False


def parse_trace(lines: Iterable[str], shift: int = 0,
                syscalls: Optional[Sequence[str]] = None) -> Trees:
    """The graphs of the system calls in a function_graph trace whose
    graphs start at ROOT (calling __x64_sys_NAME or __do_sys_NAME), those
    of syscalls only when given; each call's self instructions (its
    duration less its children's). One virtual ns is 2^-shift
    instructions."""
    r = _Reader(None if syscalls is None else set(syscalls))
    scale = 1.0 / (1 << shift)
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        depth, text = len(m.group(3)) // 2, m.group(4)
        dur = (int(m.group(1)) * 1000 + int(m.group(2))) * scale \
            if m.group(1) is not None else None
        name = text.removesuffix("{").removesuffix(";").strip() \
            .removesuffix("()")
        closing = text.startswith("}")
        if not (closing or text.endswith("{") or text.endswith(");")):
            continue    # a comment (/* ... */)
        # A call whose end the trace lost (its task switched away)
        # leaves the stack deeper than the line: the line is right.
        del r.stack[depth + 1 if closing else depth:]
        if not closing:
            r.start(depth, name)
        if text.endswith("{"):
            r.stack.append((name, [0.0]))
            continue
        if dur is None:
            continue
        if closing:
            if len(r.stack) != depth + 1:
                continue    # the end of a call opened before the trace
            name, children = r.stack.pop()
            r.end(depth, name, dur - children[0])
        else:
            r.end(depth, name, dur)
        if r.stack:
            r.stack[-1][1][0] += dur
    return r.trees


def shape(tree: Tree) -> Tuple[str, ...]:
    return tuple(name for name, _ in tree)


def typical(trees: Sequence[Tree]) -> Tuple[List[Tree], float]:
    """The graphs that took the most common path (the same calls in the
    same order), and the share of the others: calls an interrupt, a
    preemption or a slow path made different."""
    counts = Counter(shape(t) for t in trees)
    common = counts.most_common(1)[0][0]
    same = [t for t in trees if shape(t) == common]
    return same, 1.0 - len(same) / len(trees)


@dataclass
class SideProfile:
    """One operation's functions on the typical path of each of its
    system calls, and the share of each system call's graphs that took
    another path."""
    functions: Profile
    atypical: Dict[str, float]


def per_operation(short: Trees, long: Trees, ops: int) -> SideProfile:
    """One operation's profile. How often each system call runs per
    operation comes from the difference of the two runs ((long - short)
    / ops: what the program does once cancels); what each one runs from
    its typical path in the long run, each call's self instructions the
    median over the graphs that took it. The median leaves out the
    calls that an interrupt made longer: under icount its instructions
    land in the self count of whichever function was running."""
    out: Profile = {}
    atypical: Dict[str, float] = {}
    for syscall in sorted(long):
        n = round((len(long[syscall]) - len(short.get(syscall, []))) / ops)
        if n <= 0:
            continue
        same, atypical[syscall] = typical(long[syscall])
        for i, (name, _) in enumerate(same[0]):
            f = out.setdefault(name, Func())
            f.self_insn += stats.median(t[i][1] for t in same) * n
            f.calls += n
    return SideProfile(out, atypical)


# ---- profiles on disk ------------------------------------------------------

@dataclass
class RowProfile:
    """One side: the row, its untraced figure, its functions, the share
    of each system call's graphs off the typical path."""
    row: str
    kernel: str
    row_insn: Optional[float]
    functions: Profile = field(default_factory=dict)
    atypical: Dict[str, float] = field(default_factory=dict)
    shift: int = 0
    # How it was counted (FTRACE or PLUGIN); the plugin's median window
    # per operation (the row and the rest of its clock reads).
    method: str = FTRACE
    window_insn: Optional[float] = None
    # The plugin's means over the batches: each function's, the
    # window's (their sum), the row's in the same run.
    means: Optional[Dict[str, float]] = None
    window_mean: Optional[float] = None
    row_mean: Optional[float] = None

    def to_json(self) -> results.Json:
        doc = {"row": self.row, "kernel": self.kernel,
               "icount_shift": self.shift, "row_insn": self.row_insn,
               "functions": {k: {"self_insn": round(f.self_insn, 6),
                                 "calls": round(f.calls, 6)}
                             for k, f in sorted(self.functions.items())},
               "atypical": {k: round(v, 6)
                            for k, v in sorted(self.atypical.items())}}
        if self.method == PLUGIN:
            doc.update(method=PLUGIN, window_insn=self.window_insn)
        if self.means is not None:
            doc.update(means={k: round(v, 6)
                              for k, v in sorted(self.means.items())},
                       window_mean=self.window_mean, row_mean=self.row_mean)
        return doc


def _float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def load_profile(path: str) -> RowProfile:
    """A profile.json, or a side's directory kept by --keep (its traces
    read again: a newer kbench reads them its way); cli.Error when it
    is none."""
    if os.path.isdir(path):
        kept = load_profile(os.path.join(path, "profile.json"))
        if kept.method == PLUGIN:
            return kept
        test, _, row = kept.row.partition(":")
        if test != PROGRAM or row not in ROW_SYSCALLS:
            raise cli.Error(f"{path}: a profile of {kept.row}, which where "
                            "cannot read")
        return read_side(path, kept.kernel, row, kept.shift)
    with cli.reading(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    try:
        doc = json.loads(text)
        funcs = {str(k): Func(float(v["self_insn"]), float(v["calls"]))
                 for k, v in doc["functions"].items()}
        row_insn = doc.get("row_insn")
        atypical = {str(k): float(v)
                    for k, v in doc.get("atypical", {}).items()}
        window = doc.get("window_insn")
        means = doc.get("means")
        return RowProfile(str(doc["row"]), str(doc.get("kernel", "")),
                          None if row_insn is None else float(row_insn),
                          funcs, atypical, int(doc.get("icount_shift", 0)),
                          str(doc.get("method", FTRACE)),
                          _float(window),
                          None if means is None else
                          {str(k): float(v) for k, v in means.items()},
                          _float(doc.get("window_mean")),
                          _float(doc.get("row_mean")))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise cli.Error(f"{path}: not a kbench where profile ({e})") from e


# ---- the difference ---------------------------------------------------------

@dataclass
class Change:
    name: str
    base: float
    cand: float
    calls_base: float
    calls_cand: float

    @property
    def delta(self) -> float:
        return self.cand - self.base

    @property
    def calls_changed(self) -> bool:
        return abs(self.calls_cand - self.calls_base) > EPSILON


def changes(base: Profile, cand: Profile) -> List[Change]:
    """The functions whose self instructions per operation changed,
    largest change first (then by name)."""
    out = []
    for name in set(base) | set(cand):
        b, c = base.get(name, Func()), cand.get(name, Func())
        ch = Change(name, b.self_insn, c.self_insn, b.calls, c.calls)
        if abs(ch.delta) > EPSILON or ch.calls_changed:
            out.append(ch)
    return sorted(out, key=lambda ch: (-abs(ch.delta), ch.name))


def unchanged(base: Profile, cand: Profile) -> List[str]:
    """The functions on both paths that did not change ("NAME" or "NAME
    xCALLS" for those called more than once per operation): the zeros
    that make a change's attribution believable."""
    moved = {ch.name for ch in changes(base, cand)}
    # The plugin counts no calls (0): a name alone.
    return [name if cand[name].calls in (0, 1) else
            f"{name} x{cand[name].calls:g}"
            for name in sorted(set(base) & set(cand) - moved)]


def row_delta(base: RowProfile, cand: RowProfile) -> Optional[float]:
    if base.row_insn is None or cand.row_insn is None:
        return None
    return cand.row_insn - base.row_insn


def total(chs: Sequence[Change]) -> float:
    return sum(ch.delta for ch in chs)


# x86_64's string routines: memset, memcpy, memmove, page clearing and
# copying, and the user-copy helpers, under every name a kernel gives
# the variant it picked at boot by the CPU's features (ERMS, FSRM, FSRS,
# REP_GOOD). Under TCG each iteration of a rep movs or rep stos counts
# as one instruction: "rep stosb" one a byte, "rep stosq" one in eight
# bytes, memset_orig's unrolled loop eleven in 64. Between kernels that
# pick other variants, or on another CPU model, their counts move with
# no change to the bytes copied (docs/exact-runs.md, "Two Debian
# kernels").
STRING_ROUTINES = frozenset({
    "memset", "__memset", "memset_orig", "memset_erms",
    "memcpy", "__memcpy", "memcpy_orig", "memcpy_erms",
    "memmove", "__memmove", "clear_page", "clear_page_orig",
    "clear_page_rep", "clear_page_erms", "copy_page",
    "rep_movs_alternative", "rep_stos_alternative",
    "copy_user_generic_string", "copy_user_generic_unrolled",
    "copy_user_short_string",
    "copy_user_enhanced_fast_string", "clear_user_original",
    "clear_user_rep_good", "clear_user_erms", "__clear_user",
})


def string_share(functions: Sequence[Mapping[str, Any]]
                 ) -> Optional[results.Json]:
    """The changed string routines' part of a difference's functions
    (diff_json's "functions"): their names, and their base, cand and
    delta together; None when none changed."""
    mine = [f for f in functions if f["name"] in STRING_ROUTINES]
    if not mine:
        return None
    return {"names": [f["name"] for f in mine],
            **{k: round(sum(float(f[k]) for f in mine), 6)
               for k in ("base", "cand", "delta")}}


def string_text(doc: Mapping[str, Any]) -> Optional[str]:
    """The line on the string routines' part of a difference (also of a
    where file written before it said so), None when none changed."""
    share = string_share(doc["functions"])
    if share is None:
        return None
    rest = float(doc["sum"]) - float(share["delta"])
    return (f"string routines ({', '.join(share['names'])}): "
            f"{float(share['base']):.3f} -> {float(share['cand']):.3f}, "
            f"{float(share['delta']):+.3f} of the sum, the rest "
            f"{rest:+.3f} (QEMU counts each iteration of a rep movs or "
            "rep stos as one instruction, and each kernel picks its "
            "variant by the CPU's features: this part moves with them, "
            "not only with the bytes copied)")


def tracer_differs(base: Profile, cand: Profile) -> bool:
    """Every function on both paths changed: the mark of a tracer whose
    own per-call cost differs between the kernels (ftrace is part of
    each: 6.1 against 6.12 moved every call by 68 or more)."""
    both = set(base) & set(cand)
    return bool(both) and all(
        abs(cand[f].self_insn - base[f].self_insn) > EPSILON for f in both)


def sums_up(chs: Sequence[Change], delta: Optional[float]) -> bool:
    """The sum of the changes is the row's delta (adds_up)."""
    return adds_up(total(chs), delta)


def adds_up(sum_: float, delta: Optional[float]) -> bool:
    """A sum is the row's delta (to 0.01 instruction: the programs print
    the row's median to 0.01 ns)."""
    return delta is not None and \
        abs(delta - sum_) <= 0.01 + 1e-6 * abs(delta)


def check_sum(chs: Sequence[Change], delta: Optional[float],
              tracer: bool = False, why: Optional[str] = None) -> str:
    """One line: does the sum account for the row's delta, or how far
    apart they are and why (tracer: tracer_differs(); why: the plugin's
    reason, plugin_why())."""
    if delta is None:
        return "the row's own delta is unknown (a profile without row_insn)"
    gap = delta - total(chs)
    if sums_up(chs, delta):
        return (f"sum {total(chs):+.3f} = the row's delta {delta:+.3f} "
                "instructions per operation")
    if why is not None:
        pass
    elif tracer:
        why = ("every function on the path moved: the tracer's own "
               "per-call cost differs between these kernels, and the "
               "table is not exact; it is between a kernel and a patch "
               "of it that leaves the tracing code alone")
    elif any(ch.calls_changed for ch in chs):
        why = "call counts changed: the tracer's per-call cost is in the sum"
    else:
        why = ("the rest ran where ftrace cannot see: entry code, notrace "
               "functions and what is inlined into them, user space; or "
               "off the typical path")
    return (f"sum {total(chs):+.3f} against the row's delta "
            f"{delta:+.3f}: {gap:+.3f} unattributed ({why})")


def _atypical(shares: Dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1%}" for k, v in shares.items()) or "-"


def _gap(value: Optional[float]) -> str:
    return "?" if value is None else f"{value:+.3f}"


def format_table(base: RowProfile, cand: RowProfile) -> str:
    """The functions on the row's typical path whose self instructions
    changed, largest first, their sum and its check."""
    return format_diff(diff_json(base, cand))


def format_diff(doc: results.Json) -> str:
    """A difference (diff_json's, or one of a where file's) as text:
    the changed functions, largest first, the check of their sum, the
    functions that did not change, the share off the typical path."""
    chs = doc["functions"]
    plugin = doc.get("method") == PLUGIN
    mean = doc.get("stat") == MEAN
    how = ("counted by QEMU's plugin: every instruction, no tracer"
           if plugin else "the tracer's per-call cost included") + \
        ("; means over the batches" if mean else "")
    lines = [f"where: {doc['row']}, self instructions per operation "
             f"({how})",
             f"  base {doc['base']}", f"  cand {doc['cand']}"]
    if not chs:
        lines.append("  no function on the row's path changed")
    else:
        width = max(len(ch["name"]) for ch in chs)
        lines.append(f"  {'function':<{width}} {'base':>12} {'cand':>12} "
                     f"{'delta':>10}  " + ("median" if mean else "calls"))
        for ch in chs:
            calls = (f"{ch.get('median_delta', 0.0):+.3f}" if mean else
                     "-" if plugin else
                     f"{ch['calls_base']:g} -> {ch['calls_cand']:g}"
                     if abs(ch["calls_cand"] - ch["calls_base"]) > EPSILON
                     else f"{ch['calls_cand']:g}")
            lines.append(f"  {ch['name']:<{width}} {ch['base']:12.3f} "
                         f"{ch['cand']:12.3f} {ch['delta']:+10.3f}  {calls}")
    lines.append("  " + doc["check"])
    strings = string_text(doc)
    if strings:
        lines.append(textwrap.fill(strings, 78, initial_indent="  ",
                                   subsequent_indent="    "))
    if mean:
        lines.append(textwrap.fill(
            "the batches differ (each one's allocator, page and scheduler "
            "state): each figure is a mean over them, and the means add "
            "up to the mean window where the medians do not; the row's "
            "delta above is its mean's in the same boots, its median's "
            f"(compare's) {_gap(doc.get('row_median_delta'))}", 78,
            initial_indent="  ", subsequent_indent="    "))
    said = compared_text(doc)
    if said:
        lines.append(textwrap.fill(said, 78, initial_indent="  ",
                                   subsequent_indent="    "))
    if doc.get("unchanged"):
        lines.append(textwrap.fill(
            "unchanged (+0.000): " + ", ".join(doc["unchanged"]), 78,
            initial_indent="  ", subsequent_indent="    "))
    shares = doc.get("atypical", {})
    if plugin:
        gaps = doc.get("window_gap", {})
        lines.append(f"  window less row: base {_gap(gaps.get('base'))}; "
                     f"cand {_gap(gaps.get('cand'))} (the rest of the "
                     "clock reads and the marks, per operation)")
        lines.append(f"  batches off the median window (a tick, a "
                     f"refill; {'in the means' if mean else 'left out'}): "
                     f"base "
                     f"{_atypical(shares.get('base', {}))}; cand "
                     f"{_atypical(shares.get('cand', {}))}")
        return "\n".join(lines) + "\n"
    lines.append(f"  off the typical path (interrupted, preempted; left "
                 f"out): base {_atypical(shares.get('base', {}))}; cand "
                 f"{_atypical(shares.get('cand', {}))}")
    return "\n".join(lines) + "\n"


def compared_text(doc: Mapping[str, Any]) -> Optional[str]:
    """The comparison's own delta of the row beside the where boot's
    (its median's), how far apart and why; None without it."""
    compared = _float(doc.get(COMPARED))
    if compared is None:
        return None
    here = _float(doc.get("row_median_delta") if doc.get("stat") == MEAN
                  else doc.get("row_delta"))
    head = f"the comparison's own delta: {compared:+.3f}"
    if here is None:
        return head
    apart = here - compared
    if abs(apart) < ROUNDING:
        return head + ", the where boot's too"
    why = ("the where boot is one more boot of the comparison's own "
           "exact guest, with a dither of its own, and a row whose cost "
           "depends on where the kernel's state stands (its allocators, "
           "its ids, where a tick falls) moves from boot to boot, as the "
           "calibration's boots show" if doc.get(AB_GUEST) else
           "the where boot runs the whole program as the comparison "
           "does, but in a guest of its own (vng over the host's root, "
           "where the comparison's exact guest boots its initramfs, with "
           "a dither), and a row whose cost depends on the guest's state "
           "(its CPU model, which picks the kernel's string routines, "
           "its cgroups, its memory, what else runs) reads otherwise "
           "there" if doc.get("method") == PLUGIN else
           "the where boot runs the row alone, in batches of "
           f"{BATCH}, after no other row, where the comparison runs the "
           "whole program, and the row's cost depends on what ran "
           "before it")
    return (f"{head}; the where boot's {here:+.3f} is {apart:+.3f} from "
            f"it: {why}")


def _change_json(ch: Change) -> results.Json:
    return {"name": ch.name, "base": round(ch.base, 6),
            "cand": round(ch.cand, 6), "delta": round(ch.delta, 6),
            "calls_base": round(ch.calls_base, 6),
            "calls_cand": round(ch.calls_cand, 6)}


MEDIAN, MEAN = "median", "mean"


def steady(side: RowProfile) -> bool:
    """Most of a plugin side's batches are its median window: the
    medians per function add up to it."""
    return side.atypical.get("batches", 0.0) < 0.5


def statistic(base: RowProfile, cand: RowProfile) -> str:
    """What a pair is compared by: the medians (ftrace's; the plugin's
    when each side's batches are mostly one window: a tick or a cold
    batch left out), else the plugin's means over the batches, which
    add up to the mean window whatever the batches do (fork, clone)."""
    if base.method == PLUGIN and not (steady(base) and steady(cand)) and \
            base.means is not None and cand.means is not None:
        return MEAN
    return MEDIAN


@dataclass
class Figures:
    """A side's figures by one statistic: per function, the row's, the
    window's."""
    functions: Profile
    row_insn: Optional[float]
    window_insn: Optional[float]


def figures(side: RowProfile, stat: str) -> Figures:
    if stat == MEAN and side.means is not None:
        return Figures({k: Func(v, 0.0) for k, v in side.means.items()},
                       side.row_mean, side.window_mean)
    return Figures(side.functions, side.row_insn, side.window_insn)


def _delta(b: Optional[float], c: Optional[float]) -> Optional[float]:
    return None if b is None or c is None else c - b


def _window_gap(side: Figures) -> Optional[float]:
    """What the window holds beyond the row, per operation."""
    if side.window_insn is None or side.row_insn is None:
        return None
    return round(side.window_insn - side.row_insn, 6)


def plugin_why(base: Figures, cand: Figures, stat: str, paired: bool
               ) -> str:
    """Why a plugin profile's sum is not the row's delta: the window's
    constant moved (another vDSO), or the batches differ (paired: the
    figures add up to the window, the means or the medians of steady
    sides)."""
    gb, gc = _window_gap(base), _window_gap(cand)
    if paired and gb is not None and gc is not None and \
            abs(gc - gb) > EPSILON:
        if stat == MEAN:
            # A tick or an interrupt between a clock read and its mark
            # lands in some batches' windows and not in their figure.
            return (f"the window holds {gc - gb:+.3f} more beyond the row "
                    "in cand, on average over the batches: what ran "
                    "between a clock read and a mark (a tick, an "
                    "interrupt, in some batches) differs between the "
                    "sides, and between two versions the rest of the "
                    "clock reads too (their vDSO)")
        return (f"the window holds {gc - gb:+.3f} more beyond the row in "
                "cand: the rest of the two clock reads differs between "
                "these kernels (their vDSO)")
    return ("the row's batches differ from one another (off the median "
            "window, below): medians per function do not add up to the "
            "median batch, and the row is not exact")


def diff_json(base: RowProfile, cand: RowProfile) -> results.Json:
    stat = statistic(base, cand)
    fb, fc = figures(base, stat), figures(cand, stat)
    chs = changes(fb.functions, fc.functions)
    plugin = base.method == PLUGIN
    delta = _delta(fb.row_insn, fc.row_insn)
    doc: results.Json = {
           "row": base.row, "base": base.kernel, "cand": cand.kernel,
           "row_delta": delta,
           "sum": round(total(chs), 6),
           "check": check_sum(chs, delta, not plugin and
                              tracer_differs(fb.functions, fc.functions),
                              plugin_why(fb, fc, stat, stat == MEAN or (
                                  steady(base) and steady(cand)))
                              if plugin else None),
           "functions": [_change_json(ch) for ch in chs],
           "unchanged": unchanged(fb.functions, fc.functions),
           "atypical": {"base": base.atypical, "cand": cand.atypical}}
    share = string_share(doc["functions"])
    if share is not None:
        doc["string_routines"] = share
    if plugin:
        doc.update(method=PLUGIN, window_gap={"base": _window_gap(fb),
                                              "cand": _window_gap(fc)})
    if stat == MEAN:
        doc.update(stat=MEAN, row_median_delta=row_delta(base, cand))
        # Beside each mean, the change of the function's median: a
        # function that ran alike in most batches shows its own change
        # there, the mean carrying its share of the odd ones.
        for ch in doc["functions"]:
            ch["median_delta"] = round(
                cand.functions.get(ch["name"], Func()).self_insn -
                base.functions.get(ch["name"], Func()).self_insn, 6)
    return doc


# The where file of an A/B directory (kbench run --vs-kernel --icount
# --where): {"rows": [diff_json + "candidate": its label, and COMPARED:
# the row's delta in the comparison that moved it]}.
AB_FILE = "where.json"
COMPARED = "compared_delta"
# True when the where boot was one more of the A/B's own exact guest.
AB_GUEST = "ab_guest"


def load_diffs(path: str) -> List[results.Json]:
    """The differences of a where file (where --json's, an A/B's
    where.json); cli.Error when it is none."""
    with cli.reading(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    try:
        rows = list(json.loads(text)["rows"])
        for doc in rows:
            format_diff(doc)    # what a reader takes is there
        return rows
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise cli.Error(f"{path}: not a kbench where file ({e})") from e


def parse_expect(text: str) -> Tuple[str, float]:
    """--expect FUNCTION:DELTA; cli.Error when it is not."""
    name, _, delta = text.rpartition(":")
    try:
        if name:
            return name, float(delta)
    except ValueError:
        pass
    raise cli.Error(f"--expect takes FUNCTION:DELTA (as "
                    f"__x64_sys_getsid:+5): '{text}'")


def unmet(pairs: Sequence[Tuple[RowProfile, RowProfile]],
          expected: Dict[str, float]) -> List[str]:
    """What differs from --expect: a function that changed otherwise
    than expected (or not at all), a row whose sum is not its delta."""
    problems, seen = [], set()
    for base, cand in pairs:
        doc = diff_json(base, cand)
        for ch in doc["functions"]:
            want = expected.get(ch["name"])
            if want is None or abs(ch["delta"] - want) > EPSILON:
                problems.append(f"{base.row}: {ch['name']} "
                                f"{ch['delta']:+.3f}, expected "
                                + ("no change" if want is None
                                   else f"{want:+.3f}"))
            seen.add(ch["name"])
        if not adds_up(doc["sum"], doc["row_delta"]):
            problems.append(f"{base.row}: {doc['check']}")
    problems += [f"{name}: no change, expected {want:+.3f}"
                 for name, want in expected.items() if name not in seen]
    return problems


# ---- the guest --------------------------------------------------------------

def guest_command(rows: Sequence[str], out: str) -> str:
    """The guest's shell command (on the kernel's command line, whose
    room is short: the loop over the rows is where_guest.sh's)."""
    return " ".join(shlex.quote(w) for w in [
        paths.script("scripts/guest/where_guest.sh"), out,
        os.path.join(paths.TOP, PROGRAM, PROGRAM), str(SHORT), str(LONG),
        str(BATCH), *rows])


def vng_command(image: str, rows: Sequence[str], out: str,
                icount: policy.Icount, plugin: Optional[str] = None
                ) -> List[str]:
    """The boot of one side: ftrace's guest, or with plugin (the
    plugin's shared object) the plugin's."""
    if plugin is None:
        opts = " ".join(icount.qemu_words())
        guest = guest_command(rows, out)
    else:
        opts = where_plugin.qemu_opts(icount, plugin, out)
        guest = where_plugin.guest_command(
            os.path.join(paths.TOP, PROGRAM, PROGRAM), out,
            policy.guest_env("tcg", icount))
    cmd = ["vng", "--run", image, "--user", "root", "--cwd", paths.TOP,
           "--memory", "2G", "--force-9p", "--disable-kvm",
           "--qemu-opts", opts, "--cpus", "1", f"--rwdir={out}"]
    for a in icount.appends:
        cmd += ["--append", a]
    return cmd + ["--exec", guest]


def row_figure(path: str, row: str, shift: int, stat: str = MEDIAN,
               doc: Optional[results.Document] = None,
               pooled: bool = False) -> float:
    """The untraced row's median (or mean), in instructions per
    operation, from the document at path (doc: already read): its first
    repetition's, or (pooled) the mean of its repetitions', weighted by
    their samples (n): the pooled samples' mean; a median so only where
    the repetitions agree, as on an exact row."""
    if doc is None:
        doc = results.load_doc(path)
    for r in doc.rows:
        if r.name != row:
            continue
        got = [(rep.figures[stat], rep.figures.get("n", 1.0))
               for rep in r.reps if stat in rep.figures]
        if got:
            value = sum(v * n for v, n in got) / sum(n for _, n in got) \
                if pooled else got[0][0]
            # The programs print microseconds: 1000 virtual ns each.
            return value * 1000.0 / (1 << shift)
    raise cli.Failure(f"{path}: no {stat} of row {row}")


# The lines of a buffer's stats that count lost events.
LOST = re.compile(r"/stats:(?:(?:commit )?overrun|dropped events): *(\d+)")


def lost_events(log: str) -> int:
    """The events the tracer's buffer lost, from where_guest.sh's log
    (the stats of the CPU's buffer; 0 when they are not there)."""
    lost = 0
    with cli.reading(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LOST.search(line)
                lost += int(m.group(1)) if m else 0
    return lost


def read_side(out: str, image: str, row: str, shift: int) -> RowProfile:
    """The profile of one row of one side from the guest's files in
    out (out/ROW when booted); cli.Failure when the tracer lost
    events."""
    profs = []
    for name in ("short", "long"):
        lost = lost_events(os.path.join(out, name, "where.log"))
        if lost:
            raise cli.Failure(f"{out}/{name}: the tracer's buffer lost "
                              f"{lost} events")
        path = os.path.join(out, name, "trace.txt")
        with cli.reading(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                profs.append(parse_trace(f, shift, ROW_SYSCALLS[row]))
    side = per_operation(profs[0], profs[1], (LONG - SHORT) * BATCH)
    return RowProfile(f"{PROGRAM}:{row}", image,
                      row_figure(os.path.join(out, "row.json"), row, shift),
                      side.functions, side.atypical, shift)


def plugin_profile(test: str, row: str, image: str,
                   p: where_plugin.PluginSide, path: str,
                   doc: results.Document, shift: int, pooled: bool = False
                   ) -> RowProfile:
    """A row's profile from its plugin side and its program's document
    (at path) of the same run (pooled: the row's figures are the mean
    of its repetitions', whose windows the side pools)."""
    scale = 1.0 / (1 << shift)

    def figure(stat: str) -> float:
        return row_figure(path, row, shift, stat, doc, pooled)
    return RowProfile(
        f"{test}:{row}", image, figure(MEDIAN),
        {k: Func(v * scale, 0.0) for k, v in p.functions.items()},
        {"batches": p.atypical}, shift, PLUGIN, p.window_insn * scale,
        {k: v * scale for k, v in p.means.items()},
        p.window_mean * scale, figure(MEAN))


def plugin_sides(out: str, image: str, rows: Sequence[str], shift: int
                 ) -> List[RowProfile]:
    """The rows of a plugin boot, from its files in out."""
    got = where_plugin.read_boot(out, rows)
    path = where_plugin.run_path(out)
    doc = results.load_doc(path)
    return [plugin_profile(PROGRAM, row, image, got[row], path, doc, shift)
            for row in rows]


def exact_sides(json_dir: str, windows: str, image: str,
                programs: Sequence[str], rows: Sequence[str], shift: int
                ) -> List[RowProfile]:
    """The rows (TEST:ROW) of a plugin boot of the A/B's own exact guest:
    its programs' documents in json_dir (PROGRAM.json of programs'
    DIR:PROGRAM, in the plan's order), the plugin's windows (their
    marked rows' in that order).
    cli.Failure when a document or a row is missing, or the windows
    are not the rows'."""
    docs = {}
    for entry in programs:
        prog = entry.rpartition(":")[2]     # "DIR:PROG" (collection's)
        path = os.path.join(json_dir, f"{prog}.json")
        if not os.path.isfile(path):
            if prog in where_plugin.MARKED:
                raise cli.Failure(f"{json_dir}: no {prog}.json (the "
                                  "guest's run failed)")
            continue
        docs[prog] = (path, results.load_doc(path))
    # The plan's order: repetition by repetition, each program in turn.
    segments = [dataclasses.replace(seg, row=f"{prog}:{seg.row}")
                for rep in range(max((where_plugin.repetitions(d)
                                      for _, d in docs.values()), default=1))
                for prog, (path, doc) in docs.items()
                for seg in where_plugin.read_run(path, rep, doc)]
    with cli.reading(windows):
        with open(windows, encoding="utf-8") as f:
            per_row = where_plugin.split_run(where_plugin.parse_windows(f),
                                             segments)
    batch = {seg.row: seg.batch for seg in segments}
    sides = []
    for row in rows:
        if row not in per_row:
            raise cli.Failure(f"{json_dir}: no marked row {row} ran")
        test, _, name = row.partition(":")
        path, doc = docs[test]
        sides.append(plugin_profile(test, name, image, where_plugin.side(
            per_row[row], batch[row]), path, doc, shift, pooled=True))
    return sides


def profile(prog: str, image: str, rows: Sequence[str], out: str,
            icount: policy.Icount, plugin: Optional[str] = None
            ) -> List[RowProfile]:
    """Boot image once and profile the rows, with ftrace or (plugin: its
    shared object) the QEMU plugin; out keeps the files
    (out/ROW/profile.json, out/vng.log)."""
    for row in rows:
        for name in (("",) if plugin else ("short", "long")):
            os.makedirs(os.path.join(out, row, name), exist_ok=True)
    env = vng.path_env(vng.ensure(prog))
    log = os.path.join(out, "vng.log")
    msg(prog, f"booting {image} (exact mode, "
        f"{'the QEMU plugin' if plugin else 'function_graph'})")
    status = proc.run(vng_command(image, rows, out, icount, plugin),
                      log=log, env=env, timeout=BOOT_TIMEOUT_S)
    if status == cli.EXIT_SKIP:
        raise cli.Failure(f"{image}: no function_graph tracer",
                          cli.EXIT_SKIP)
    if status != 0:
        raise cli.Failure(f"{image}: the guest's run failed (status "
                          f"{status}; log: {log})")
    if plugin is not None:
        sides = plugin_sides(out, image, rows, icount.shift)
        for side in sides:
            path = os.path.join(out, side.row.partition(":")[2],
                                "profile.json")
            with cli.writing(path):
                results.write_json(path, side.to_json())
        return sides
    sides = []
    for row in rows:
        side = read_side(os.path.join(out, row), image, row, icount.shift)
        path = os.path.join(out, row, "profile.json")
        with cli.writing(path):
            results.write_json(path, side.to_json())
        sides.append(side)
    return sides


# ---- command line -----------------------------------------------------------

def rows_of(test: str, plugin: bool = False) -> List[str]:
    """-t's rows: syscall_overhead[:ROW[,ROW]...]; cli.Error otherwise."""
    known: List[str] = list(PLUGIN_ROWS) if plugin else list(ROW_SYSCALLS)
    prog, colon, rows = test.partition(":")
    names = rows.split(",") if colon else known
    bad = [r for r in names if r not in known]
    if prog != PROGRAM or bad:
        raise cli.Error(f"-t takes {PROGRAM}, or {PROGRAM}:ROW[,ROW]... "
                        f"of the rows where knows ({', '.join(known)})"
                        f": '{test}'")
    return list(dict.fromkeys(names))


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, help_text=HELP.format(
        prog=prog, short=SHORT, long=LONG, batch=BATCH, program=PROGRAM,
        rows=textwrap.fill(", ".join(ROW_SYSCALLS), 78,
                           initial_indent=" " * 26,
                           subsequent_indent=" " * 26).lstrip()))
    ap.add_argument("-k", "--kernel")
    ap.add_argument("--vs-kernel")
    ap.add_argument("-t", "--test")
    ap.add_argument("--profile")
    ap.add_argument("--vs-profile")
    ap.add_argument("--plugin", action="store_true")
    ap.add_argument("--keep")
    ap.add_argument("--json")
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args(list(argv))
    try:
        a.expected = dict(parse_expect(e) for e in a.expect)
    except cli.Error as e:
        ap.error(str(e))
    boots = a.kernel is not None or a.vs_kernel is not None
    files = a.profile is not None or a.vs_profile is not None
    if boots == files:
        ap.error("give --kernel and --vs-kernel, or --profile and "
                 "--vs-profile")
    if files and a.plugin:
        ap.error("--plugin is how the boots count: not with --profile "
                 "(a kept profile says how it was counted)")
    if files and (a.profile is None or a.vs_profile is None):
        ap.error("--profile needs --vs-profile, and the other way round")
    if boots:
        if a.kernel is None or a.vs_kernel is None:
            ap.error("--kernel needs --vs-kernel, and the other way round")
        try:
            a.rows = rows_of(a.test or PROGRAM, a.plugin)
        except cli.Error as e:
            ap.error(str(e))
    return a


def bootable(kernel: str, prog: str) -> str:
    """The image vng boots of a kernel as kbench vm takes it (a
    bzImage, a tree, debian-6.1, ...)."""
    return images.resolve(arch.X86_64, kernel, prog).boot


def boot_both(prog: str, a: argparse.Namespace, work: str
              ) -> List[Tuple[RowProfile, RowProfile]]:
    icount = policy.icount()
    found = [bootable(k, prog) for k in (a.kernel, a.vs_kernel)]
    # The guest sees the tree read-only: the program is built here.
    collection.build([PROGRAM], prog)
    plugin = qemu_plugin.build(prog) if a.plugin else None
    sides = []
    for name, image in zip(("base", "cand"), found):
        sides.append(profile(prog, image, a.rows, os.path.join(work, name),
                             icount, plugin))
    return list(zip(sides[0], sides[1]))


@dataclass(frozen=True)
class Mechanism:
    """How a --where pass counts: METHOD (PLUGIN or FTRACE), the
    plugin's shared object when it is the plugin, and why this one (a
    line for the output)."""
    method: str
    plugin: Optional[str]
    why: str

    def said(self) -> str:
        """'counted by NAME (why)', a line of the pass's output."""
        return f"counted by {METHOD_NAME[self.method]} ({self.why})"


def mechanism(prog: str, asked: Optional[str]) -> Mechanism:
    """The mechanism of a --where pass (--where-with): the plugin when
    asked, or by default when it can be provisioned (its header fetched,
    built), else ftrace with the reason; ftrace when asked. cli.Failure
    (3) when the plugin was asked for and cannot be had."""
    if asked == FTRACE:
        return Mechanism(FTRACE, None, "--where-with ftrace")
    try:
        so = qemu_plugin.build(prog)
    except cli.Failure as e:
        if asked == PLUGIN:
            raise
        return Mechanism(FTRACE, None, f"the QEMU plugin cannot be "
                         f"provisioned: {e}")
    return Mechanism(PLUGIN, so, "--where-with plugin"
                     if asked == PLUGIN else "the default: it is exact")


# Each mechanism's name, and what it is, said with its figures
# (compare's where section, the report's tables, a series' summary).
METHOD_NAME = {PLUGIN: "kbench's QEMU plugin",
               FTRACE: "ftrace's function_graph tracer"}
METHOD_TEXT = {
    PLUGIN: "kbench's QEMU plugin under -icount: every guest instruction "
            "of the row's marked batches, from outside the guest",
    FTRACE: "ftrace's function_graph under -icount: self instructions on "
            "the row's typical path, the tracer's per-call cost included",
}


def methods_of(docs: Sequence[Mapping[str, Any]]) -> List[str]:
    """How these differences were counted (PLUGIN, FTRACE: both when a
    resumed series holds both), in the order first met."""
    return list(dict.fromkeys(str(d.get("method", FTRACE)) for d in docs))


def method_text(docs: Sequence[Mapping[str, Any]]) -> str:
    """How these differences were counted, as METHOD_TEXT says it."""
    return "; ".join(METHOD_TEXT.get(m, m) for m in methods_of(docs))


def method_names(docs: Sequence[Mapping[str, Any]]) -> str:
    """Who counted these differences, as METHOD_NAME says it."""
    return " and ".join(METHOD_NAME.get(m, m) for m in methods_of(docs))


def against_base(prog: str, base: str,
                 cands: Sequence[Tuple[str, str, Sequence[str]]], work: str,
                 icount: policy.Icount, plugin: Optional[str] = None
                 ) -> List[results.Json]:
    """The differences of each candidate (label, image, its rows) from
    the base image, each kernel booted once (the base for every row a
    candidate asks for), the files in work/base, work/cand1, ...; each
    difference diff_json's with its candidate's label; counted by
    ftrace, or by the QEMU plugin (its shared object). cli.Failure as
    profile()."""
    rows = list(dict.fromkeys(r for _, _, rs in cands for r in rs))
    if not rows:
        return []
    collection.build([PROGRAM], prog)
    base_of = {side.row: side for side in profile(
        prog, bootable(base, prog), rows, os.path.join(work, "base"),
        icount, plugin)}
    docs = []
    for n, (label, image, crows) in enumerate(cands, 1):
        if not crows:
            continue
        for side in profile(prog, bootable(image, prog), crows,
                            os.path.join(work, f"cand{n}"), icount, plugin):
            docs.append(dict(diff_json(base_of[side.row], side),
                             candidate=label))
    return docs


@cli.task(errors=(results.ResultError,))
def main(argv: Sequence[str], prog: str) -> int:
    a = parse(argv, prog)

    def body() -> int:
        if a.profile is not None:
            pairs = [(load_profile(a.profile), load_profile(a.vs_profile))]
        elif a.keep is not None:
            pairs = boot_both(prog, a, a.keep)
        else:
            with tempfile.TemporaryDirectory(prefix="kbench-where-") as d:
                pairs = boot_both(prog, a, d)
        print("\n".join(format_table(b, c) for b, c in pairs), end="")
        if a.json is not None:
            text = json.dumps({"rows": [diff_json(b, c) for b, c in pairs]},
                              indent=1) + "\n"
            if a.json == "-":
                print(text, end="")
            else:
                with cli.writing(a.json):
                    results.write_text(a.json, text)
        if a.expect:
            problems = unmet(pairs, a.expected)
            for p in problems:
                msg(prog, f"not as expected: {p}")
            return cli.EXIT_FAILED if problems else 0
        return 0
    return cli.orchestrate(prog, body)
