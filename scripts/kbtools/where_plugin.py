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
batch (lib/mark.h), and the plugin writes the instructions executed at
each address between a batch's two marks: every task's (the children of
fork and clone too), the interrupts' and the entry code's, with no tracer
in the guest. Here each address is mapped to its function (kallsyms; user
space is one bucket) and each function's count per operation is its
median over the batches: a tick or a refill falls in some batches, not in
the median. Where the batches differ from one another (fork, clone: each
one's allocator and scheduler state), the medians do not add up to any
batch; each function's mean over the batches does, to the mean window,
and kbtools.where compares those there. A function's figure is the
instructions it ran itself.

The check: a window opens before the batch's first clock read and closes
after its last, so the window holds the row's instructions plus the rest
of the two clock reads and the marks: a constant, the same in every
batch, which the output gives (window less row).
"""

import bisect
import os
import re
import shlex
from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

from kbtools import cli, paths, policy, results, stats

USER = "[user]"
UNKNOWN = "[kernel, no symbol]"
# Where x86_64's kernel half starts: lower addresses are user space.
KERNEL_START = 0xffff800000000000
# The plugin's blocks: "window N", "ADDRESS COUNT", "end N TOTAL".
WINDOW = re.compile(r"^window (\d+)$")
END = re.compile(r"^end (\d+) (\d+)$")
COUNT = re.compile(r"^([0-9a-f]+) (\d+)$")
# kallsyms' code symbols (text, weak, and module text).
TEXT_TYPES = frozenset("tTwW")

Window = Dict[int, int]


def parse_windows(lines: Iterable[str]) -> List[Window]:
    """The plugin's windows, in order; cli.Failure when a block is cut
    short or its total is not the sum of its lines (a plugin that died
    mid-write)."""
    out: List[Window] = []
    cur: Dict[int, int] = {}
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
        cur[int(m.group(1), 16)] = int(m.group(2))
    if open_n >= 0:
        raise cli.Failure(f"the plugin's window {open_n} has no end")
    return out


@dataclass
class Symbols:
    """The kernel's code symbols, by address."""
    starts: List[int]
    names: List[str]

    def name_of(self, addr: int) -> str:
        if addr < KERNEL_START:
            return USER
        i = bisect.bisect_right(self.starts, addr) - 1
        return self.names[i] if i >= 0 else UNKNOWN


def parse_kallsyms(lines: Iterable[str]) -> Symbols:
    """/proc/kallsyms' code symbols; cli.Failure when every address is 0
    (read without the right to see them)."""
    syms: Dict[int, str] = {}
    for line in lines:
        parts = line.split()
        if len(parts) < 3 or parts[1] not in TEXT_TYPES:
            continue
        addr = int(parts[0], 16)
        # Of two names at one address, the first (kallsyms' order) wins.
        syms.setdefault(addr, parts[2])
    if not syms or set(syms) == {0}:
        raise cli.Failure("kallsyms has no addresses (kptr_restrict?)")
    starts = sorted(syms)
    return Symbols(starts, [syms[a] for a in starts])


def by_function(window: Window, syms: Symbols) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for addr, count in window.items():
        name = syms.name_of(addr)
        out[name] = out.get(name, 0) + count
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


def side(windows: Sequence[Window], syms: Symbols, batch: int
         ) -> PluginSide:
    """The row's functions per operation from its windows (at least
    one)."""
    if not windows:
        raise cli.Failure("the plugin saw no window of the row")
    per = [by_function(w, syms) for w in windows]
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


@dataclass
class Run:
    """The program's run in a plugin boot: the rows with marks, in
    order, each with its operations per batch; its warm-up batches and
    its samples, per row."""
    rows: List[Tuple[str, int]]
    warmup: int
    iterations: int


def read_run(path: str) -> Run:
    """The run of the program's JSON at path (every row it measured,
    in its order); cli.Failure when it says no warm-up or samples."""
    doc = results.load_doc(path)
    params = doc.header.params
    warmup, iterations = params.get("warmup"), params.get("iterations")
    if not isinstance(warmup, (int, float)) or \
            not isinstance(iterations, (int, float)):
        raise cli.Failure(f"{path}: no warmup or iterations in params")
    rows = []
    for r in doc.rows:
        if r.name in UNMARKED or r.status != results.Status.OK or \
                not r.reps:
            continue
        extra = r.reps[0].extra or {}
        batch = extra.get("batch", 1)
        rows.append((r.name, int(batch) if isinstance(batch, (int, float))
                     else 1))
    return Run(rows, int(warmup), int(iterations))


def split_run(windows: Sequence[Window], run: Run
              ) -> Dict[str, List[Window]]:
    """The windows of each row of the run: its warm-up's and then its
    samples' in the rows' order, the samples' kept (the A/B's figures
    are theirs); cli.Failure when there are not that many."""
    each = run.warmup + run.iterations
    if len(windows) != each * len(run.rows):
        raise cli.Failure(f"the plugin saw {len(windows)} windows, not "
                          f"{run.warmup} + {run.iterations} for each of "
                          f"{len(run.rows)} rows")
    return {r: list(windows[i * each + run.warmup:(i + 1) * each])
            for i, (r, _) in enumerate(run.rows)}


def guest_command(prog_path: str, out: str, env: Mapping[str, str]
                  ) -> str:
    """The guest's command: the whole program as an exact A/B runs it,
    in its environment (env)."""
    return " ".join(shlex.quote(w) for w in [
        paths.script("scripts/guest/where_plugin_guest.sh"), out,
        prog_path, *(f"{k}={v}" for k, v in sorted(env.items()))])


def qemu_opts(icount: policy.Icount, plugin: str, out: str) -> str:
    """QEMU's options of a plugin boot: exact mode, and the plugin
    writing its windows to out/windows.txt."""
    return " ".join([*icount.qemu_words(),
                     "-plugin", f"{plugin},out={windows_path(out)}"])


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
    with open(os.path.join(out, "kallsyms"), encoding="utf-8") as f:
        syms = parse_kallsyms(f)
    run = read_run(run_path(out))
    with open(windows_path(out), encoding="utf-8") as f:
        per_row = split_run(parse_windows(f), run)
    batches = dict(run.rows)
    missing = [r for r in rows if r not in per_row]
    if missing:
        raise cli.Failure(f"{out}: the program measured no "
                          f"{', '.join(missing)}")
    return {r: side(per_row[r], syms, batches[r]) for r in rows}


def window_gap(window_insn: float, row_insn: float) -> Tuple[float, str]:
    """What the window holds beyond the row, per operation, as text."""
    gap = window_insn - row_insn
    return gap, (f"window {window_insn:.3f} = row {row_insn:.3f} "
                 f"{gap:+.3f} (the clock reads' rest and the marks)")
