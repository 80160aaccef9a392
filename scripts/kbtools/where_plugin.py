# SPDX-License-Identifier: GPL-2.0
"""kbench where's plugin backend (where --plugin): the instructions of a
row counted outside the guest, by kbench's QEMU TCG plugin
(scripts/plugin/where_count.c, built by kbtools.qemu_plugin).

The kernel boots once in exact mode with the plugin loaded; inside,
scripts/guest/where_plugin_guest.sh copies /proc/kallsyms out and runs
the whole program as an exact A/B runs it (its environment, every row
with its warm-up, each after the rows before it), so that a row's
batches are the ones whose delta the A/B reports; a row's windows are
told apart by the run's order (read_run). syscall_overhead marks each
batch (lib/mark.h), and the plugin writes the instructions executed in
each function between a batch's two marks (it maps addresses by the
guest's kallsyms, read at the first mark; user space is one bucket):
every task's (the children of fork and clone too), the interrupts' and
the entry code's, with no tracer in the guest. Here each function's
count per operation is its median over the batches: a tick or a refill
falls in some batches, not in the median. Where the batches differ from
one another (fork, clone: each one's allocator and scheduler state), the
medians do not add up to any batch; each function's mean over the
batches does, to the mean window, and kbtools.where compares those
there. A function's figure is the instructions it ran itself.

An A/B's --where boots its own exact guest once more instead, with the
plugin in QEMU (kbtools.ab, where.exact_sides): every program of the
plan, each row's windows found by its program's JSON (MARKED:
syscall_overhead's batches, proc_create's timed creations).

The check: a window opens before the batch's first clock read and closes
after its last, so the window holds the row's instructions plus the rest
of the two clock reads and the marks: a constant, the same in every
batch, which the output gives (window less row).
"""

import os
import re
import shlex
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from kbtools import cli, paths, policy, results, stats

USER = "[user]"
UNKNOWN = "[kernel, no symbol]"
# The plugin's blocks: "window N", "FUNCTION COUNT", "end N TOTAL".
WINDOW = re.compile(r"^window (\d+)$")
END = re.compile(r"^end (\d+) (\d+)$")
COUNT = re.compile(r"^(\S.*) (\d+)$")

# A window: the instructions each function ran in it (the plugin sums
# them by the kernel's symbols; user space is one bucket, USER).
Window = Dict[str, int]


def parse_windows(lines: Iterable[str]) -> List[Window]:
    """The plugin's windows, in order; cli.Failure when a block is cut
    short or its total is not the sum of its lines (a plugin that died
    mid-write)."""
    out: List[Window] = []
    cur: Dict[str, int] = {}
    open_n = -1
    for n, line in enumerate(lines, 1):
        line = line.strip()
        m = WINDOW.match(line)
        if m:
            cur, open_n = {}, int(m.group(1))
            continue
        m = END.match(line)
        if m:
            if int(m.group(1)) != open_n or \
                    sum(cur.values()) != int(m.group(2)):
                raise cli.Failure(f"the plugin's window {m.group(1)} "
                                  f"(line {n}) does not add up")
            out.append(cur)
            open_n = -1
            continue
        m = COUNT.match(line)
        if not m or open_n < 0:
            raise cli.Failure(f"the plugin's output, line {n}: {line!r}")
        cur[m.group(1)] = cur.get(m.group(1), 0) + int(m.group(2))
    if open_n >= 0:
        raise cli.Failure(f"the plugin's window {open_n} has no end")
    return out


@dataclass
class PluginSide:
    """One row on one kernel: per function, the median instructions per
    operation over the batches; the median window; the share of the
    batches whose window differs from the median one; and per function
    the mean over the batches, with the mean window (their sum)."""
    functions: Dict[str, float]
    window_insn: float
    atypical: float
    means: Dict[str, float]
    window_mean: float


def side(windows: Sequence[Window], batch: int) -> PluginSide:
    """The row's functions per operation from its windows (at least
    one)."""
    if not windows:
        raise cli.Failure("the plugin saw no window of the row")
    per = list(windows)
    names = sorted(set().union(*per))
    funcs = {n: stats.median(p.get(n, 0) for p in per) / batch
             for n in names}
    # A mean over the batches: the means add up to the mean window
    # whether or not the batches differ (medians do only when most
    # batches are the same window).
    means = {n: stats.mean(p.get(n, 0) for p in per) / batch
             for n in names}
    totals = [sum(w.values()) for w in windows]
    mid = stats.median(totals)
    off = sum(1 for t in totals if t != mid) / len(totals)
    return PluginSide({n: v for n, v in funcs.items() if v},
                      mid / batch, off, {n: v for n, v in means.items() if v},
                      stats.mean(totals) / batch)


# The program's rows without marks around their batches: execve's chain
# times itself across exec().
UNMARKED = frozenset({"execve"})
# proc_create keeps at most this many timed creations of a cell, every
# stride-th (proc_create.h's MAX_SAMPLES).
PC_MAX_SAMPLES = 20000


@dataclass(frozen=True)
class Segment:
    """A row's windows in a run, in order: how many the program opened
    for it, which of them are its samples (the ones its figures are
    of: first, every step-th, at most count), its operations per
    window."""
    row: str
    windows: int
    first: int
    step: int
    count: int
    batch: int

    def samples(self, mine: Sequence[Window]) -> List[Window]:
        return list(mine[self.first::self.step][:self.count])


def _num(params: Mapping[str, object], key: str, path: str) -> int:
    value = params.get(key)
    if not isinstance(value, (int, float)):
        raise cli.Failure(f"{path}: no {key} in params")
    return int(value)


def syscall_segments(doc: results.Document, path: str, rep: int = 0
                     ) -> List[Segment]:
    """syscall_overhead marks each batch of a row that ran (in
    repetition rep), its warm-up batches' and its samples', the samples
    last."""
    warmup = _num(doc.header.params, "warmup", path)
    iterations = _num(doc.header.params, "iterations", path)
    out = []
    for r in doc.rows:
        if r.name in UNMARKED or r.status != results.Status.OK or \
                len(r.reps) <= rep:
            continue
        batch = (r.reps[rep].extra or {}).get("batch", 1)
        out.append(Segment(r.name, warmup + iterations, warmup, 1,
                           iterations, int(batch)
                           if isinstance(batch, (int, float)) else 1))
    return out


def proc_create_segments(doc: results.Document, path: str, rep: int = 0
                         ) -> List[Segment]:
    """proc_create marks each timed creation of a cell (not its
    warm-up): as many as the cell made (in repetition rep), every
    stride-th its sample. A cell that failed opened windows it does not
    count: cli.Failure."""
    count = _num(doc.header.params, "count", path)
    stride = max(1, -(-count // PC_MAX_SAMPLES))
    out = []
    for r in run_order(doc.rows):
        made = (r.reps[rep].extra or {}).get("creations") \
            if len(r.reps) > rep else None
        if r.status == results.Status.FAIL:
            raise cli.Failure(f"{path}: {r.name} failed: the windows of "
                              "its creations cannot be told apart")
        if r.status != results.Status.OK or \
                not isinstance(made, (int, float)):
            continue
        out.append(Segment(r.name, int(made), 0, stride, PC_MAX_SAMPLES, 1))
    return out


def run_order(rows: Sequence[results.RowRecord]
              ) -> List[results.RowRecord]:
    """proc_create's cells (METHOD@SIZE) in the order they ran: size by
    size, each size's methods in turn (its document lists them method by
    method); its other rows (the shape checks) after them."""
    cells = [r for r in rows if "@" in r.name]
    methods = list(dict.fromkeys(r.name.partition("@")[0] for r in cells))
    sizes = list(dict.fromkeys(r.name.partition("@")[2] for r in cells))
    cells.sort(key=lambda r: (sizes.index(r.name.partition("@")[2]),
                              methods.index(r.name.partition("@")[0])))
    return cells + [r for r in rows if "@" not in r.name]


# The programs that mark their batches, and how to find each row's
# windows in their JSON.
MARKED = {"syscall_overhead": syscall_segments,
          "proc_create": proc_create_segments}


def read_run(path: str, rep: int = 0,
             doc: Optional[results.Document] = None) -> List[Segment]:
    """The segments of the program's JSON at path (doc: already read)
    in its repetition rep (every row it measured, in its order; none
    for a program without marks); cli.Failure when its params do not
    say how many windows."""
    doc = doc or results.load_doc(path)
    segments = MARKED.get(doc.test)
    return segments(doc, path, rep) if segments else []


def repetitions(doc: results.Document) -> int:
    """How many times the program ran in the boot (its rows' reps)."""
    return max((len(r.reps) for r in doc.rows), default=1)


def split_run(windows: Sequence[Window], run: Sequence[Segment],
              qualify: str = "") -> Dict[str, List[Window]]:
    """The windows of each row of the run (its segments, in order): its
    samples', the others (warm-up) left out, a row's segments (one a
    repetition) pooled; cli.Failure when there are not as many windows
    as the segments say. qualify: a prefix of the rows' names
    (PROGRAM:)."""
    want = sum(seg.windows for seg in run)
    if len(windows) != want:
        raise cli.Failure(f"the plugin saw {len(windows)} windows, not "
                          f"the {want} of the rows that ran ("
                          + ", ".join(f"{seg.row} {seg.windows}"
                                      for seg in run) + ")")
    out: Dict[str, List[Window]] = {}
    at = 0
    for seg in run:
        out.setdefault(qualify + seg.row, []).extend(
            seg.samples(windows[at:at + seg.windows]))
        at += seg.windows
    return out


def guest_command(prog_path: str, out: str, env: Mapping[str, str]
                  ) -> str:
    """The guest's command: the whole program as an exact A/B runs it,
    in its environment (env)."""
    return " ".join(shlex.quote(w) for w in [
        paths.script("scripts/guest/where_plugin_guest.sh"), out,
        prog_path, *(f"{k}={v}" for k, v in sorted(env.items()))])


# The kernel's symbols, as a guest copies them out (/proc/kallsyms'
# lines).
SYMBOLS = "kallsyms"


def plugin_arg(plugin: str, windows: str, syms: str) -> str:
    """QEMU's -plugin argument: the plugin writing its windows to
    windows, summed per function of syms (read at the first mark)."""
    return f"{plugin},out={windows},syms={syms}"


def qemu_opts(icount: policy.Icount, plugin: str, out: str) -> str:
    """QEMU's options of where's own plugin boot: exact mode, and the
    plugin writing its windows to out/windows.txt, by the functions of
    out/kallsyms (the guest copies it there before the program's first
    mark)."""
    return " ".join([*icount.qemu_words(), "-plugin", plugin_arg(
        plugin, windows_path(out), os.path.join(out, SYMBOLS))])


def code_symbols(path: str) -> List[Tuple[str, str]]:
    """The code symbols of a kallsyms file: (address, name), in order."""
    with cli.reading(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return [(w[0], w[2]) for w in (line.split() for line in f)
                    if len(w) >= 3 and w[1] in "tTwW" and len(w[1]) == 1]


def same_symbols(used: str, now: str) -> None:
    """cli.Failure unless the kernel's code symbols at now (the boot's
    own) are those the plugin summed by (used, an earlier boot's)."""
    if code_symbols(used) != code_symbols(now):
        raise cli.Failure(f"the kernel's symbols moved between boots "
                          f"({used} against {now}): the plugin's sums "
                          "are not of these functions")


def windows_path(out: str) -> str:
    return os.path.join(out, "windows.txt")


def run_path(out: str) -> str:
    return os.path.join(out, "run.json")


def read_boot(out: str, rows: Sequence[str]) -> Dict[str, PluginSide]:
    """Each asked row's side from a plugin boot's files in out;
    cli.Failure when a file is missing or a row did not run."""
    for name in ("kallsyms", "windows.txt", "run.json"):
        if not os.path.exists(os.path.join(out, name)):
            raise cli.Failure(f"{out}: no {name} (the guest's run or the "
                              "plugin failed)")
    run = read_run(run_path(out))
    with open(windows_path(out), encoding="utf-8") as f:
        per_row = split_run(parse_windows(f), run)
    batches = {seg.row: seg.batch for seg in run}
    missing = [r for r in rows if r not in per_row]
    if missing:
        raise cli.Failure(f"{out}: the program measured no "
                          f"{', '.join(missing)}")
    return {r: side(per_row[r], batches[r]) for r in rows}


def window_gap(window_insn: float, row_insn: float) -> Tuple[float, str]:
    """What the window holds beyond the row, per operation, as text."""
    gap = window_insn - row_insn
    return gap, (f"window {window_insn:.3f} = row {row_insn:.3f} "
                 f"{gap:+.3f} (the clock reads' rest and the marks)")
