# SPDX-License-Identifier: GPL-2.0
"""The kbench report: one self-contained HTML page of a run, or of an A/B
comparison, with a table and the fitting plots per program.

The page needs no network and no JavaScript: styles are inline, figures are
inline SVG drawn by kbtools.plots (matplotlib). Results come from
kbtools.results, verdicts from kbtools.compare.

The functions that take figures out of the results (fork_series,
ks_series, taskstats_groups, pmq_histograms, ...) are plain data and are
what tests/test_report.py checks; the page is assembled by render().
"""

import argparse
import html
import os
import re
import sys
from dataclasses import dataclass, field
from typing import (Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

from kbtools import compare as kbcompare
from kbtools import cli, exact, plots, results, stats, where
from kbtools.plots import Point
from kbtools.results import ClockMode, Json, Row, Run, Status, Summary, Test

TIME_UNITS = kbcompare.TIME_UNITS


class ReportError(Exception):
    """Input the report cannot be made of; the message names it."""


# ---- input -----------------------------------------------------------------

def is_ab_dir(path: str) -> bool:
    """An A/B directory of run_all.sh: base/ and candidate/ results."""
    return all(os.path.isdir(os.path.join(path, d))
               for d in ("base", "candidate"))


def load_runs(paths: Sequence[str]) -> List[Run]:
    """[Run] for one path (a run, or an A/B directory) or two (base and
    candidate). Raises ReportError on anything that is not kbench results,
    and on a base and candidate that share no test."""
    for p in paths:
        if not os.path.exists(p):
            raise ReportError(f"{p}: no such file or directory")
    if len(paths) == 1 and os.path.isdir(paths[0]) and is_ab_dir(paths[0]):
        paths = [os.path.join(paths[0], "base"),
                 os.path.join(paths[0], "candidate")]
    labels: List[Optional[str]] = ["base", "candidate"] \
        if len(paths) == 2 else [None]
    try:
        runs = [results.load(p, label) for p, label in zip(paths, labels)]
    except results.ResultError as e:
        raise ReportError(str(e)) from e
    if len(runs) == 2:
        b, c = runs
        if not set(b.tests) & set(c.tests):
            raise ReportError(
                f"base and candidate hold different tests: {paths[0]} has "
                f"{', '.join(sorted(b.tests))}; {paths[1]} has "
                f"{', '.join(sorted(c.tests))}")
    return runs


def load_calibration(paths: Sequence[str], base: Run
                     ) -> Optional[Dict[str, exact.Known]]:
    """The calibration an A/B directory's comparison took (its
    calibration.json: the base kernel's, cached or from its own boots),
    as compare.py --calibration reads it; None without one (the base's
    own boots then). ReportError when it cannot be read or is another
    kernel's."""
    if len(paths) != 1 or not is_ab_dir(paths[0]):
        return None
    path = os.path.join(paths[0], "calibration.json")
    if not os.path.isfile(path):
        return None
    try:
        return kbcompare.base_calibration(path, base)
    except results.ResultError as e:
        raise ReportError(str(e)) from e


def load_where(paths: Sequence[str]) -> List[Json]:
    """kbench where's differences kept beside an A/B directory's sides
    (where.json, kbench run --icount --where); ReportError when that
    file cannot be read."""
    if len(paths) != 1:
        return []
    path = os.path.join(paths[0], where.AB_FILE)
    if not (is_ab_dir(paths[0]) and os.path.isfile(path)):
        return []
    try:
        return where.load_diffs(path)
    except cli.Error as e:
        raise ReportError(str(e)) from e


# ---- figures out of the results ------------------------------------------

def row_figures(row: Row) -> Summary:
    """Summary figures of a row over its repetitions (median of medians,
    ...), cv_pct of the medians when repeated, and the spread of the
    repetitions' medians as rep_low/rep_high."""
    return results.summarize(row.reps)


def row_extra(row: Row) -> Json:
    """The row's extra figures (of its first repetition that has them)."""
    for rep in row.reps:
        if rep.extra is not None:
            return rep.extra
    return {}


@dataclass
class Timed:
    """A row that measured a time, its figures and its median."""
    row: Row
    fig: Summary
    median: float


def timed_rows(test: Test) -> List[Timed]:
    """Rows that measured a time, in the program's order."""
    out = []
    for row in test.rows.values():
        if row.status == Status.OK and row.unit in TIME_UNITS:
            fig = row_figures(row)
            if fig.median is not None:
                out.append(Timed(row, fig, fig.median))
    return out


def _point(x: float, test: Test, t: Timed) -> Point:
    """(x, median, repetitions' low, high): in guest instructions for an
    icount run, as its tables have them, not in its virtual time."""
    k = test.insn_per_unit(t.row.unit) or 1.0
    lo, hi = t.fig.rep_low, t.fig.rep_high
    return Point(x, t.median * k, None if lo is None else lo * k,
                 None if hi is None else hi * k)


def _counts_insn(runs: Sequence[Run], tname: str) -> bool:
    """Whether the runs of a program counted instructions (QEMU's
    -icount): its plots are then in instructions, as its tables are."""
    return any(test.insn_per_unit("us") for _, test, _ in
               _sides(runs, tname))


def _per(runs: Sequence[Run], tname: str, what: str) -> str:
    """A special plot's y label."""
    unit = "instructions" if _counts_insn(runs, tname) else "us"
    return f"{unit} per {what}"


def _number(v: object) -> Optional[float]:
    """V when it is a JSON number (not true or false), else None."""
    return float(v) if isinstance(v, (int, float)) and \
        not isinstance(v, bool) else None


def fork_series(test: Test) -> Dict[str, List[Point]]:
    """proc_create: {method: [(parent size MiB, median us, lo, hi)]} from
    rows named METHOD@SIZE (size from the row's vmsize_kib)."""
    out: Dict[str, List[Point]] = {}
    for t in timed_rows(test):
        if "@" not in t.row.name:
            continue
        method = t.row.name.split("@", 1)[0]
        kib = _number(row_extra(t.row).get("vmsize_kib"))
        if kib is None or kib <= 0:
            continue
        out.setdefault(method, []).append(_point(kib / 1024.0, test, t))
    return {m: sorted(p) for m, p in out.items() if len(p) >= 2}


KS_ROW = re.compile(r"^(stat|numa_stat)_(legacy|ks(\d+))_(per_read|per_cat|"
                    r"cat_process)$")
KS_FILES = {"stat": "memory.stat", "numa_stat": "memory.numa_stat"}


@dataclass
class KsSeries:
    """One memcg file's .ks rows by number of fields, and its legacy
    (all fields) row's figures; level, the legacy row's median in the
    points' unit."""
    ks: List[Point] = field(default_factory=list)
    legacy: Optional[Summary] = None
    level: Optional[float] = None


def ks_series(test: Test, mode: str = "per_read") -> Dict[str, KsSeries]:
    """memcg_ks: {file: KsSeries} for the files that have measured .ks
    rows of MODE."""
    out: Dict[str, KsSeries] = {}
    for t in timed_rows(test):
        m = KS_ROW.match(t.row.name)
        if not m or m.group(4) != mode:
            continue
        entry = out.setdefault(m.group(1), KsSeries())
        if m.group(2) == "legacy":
            entry.legacy = t.fig
            entry.level = t.median * (test.insn_per_unit(t.row.unit) or 1.0)
        else:
            entry.ks.append(_point(int(m.group(3)), test, t))
    return {f: KsSeries(sorted(e.ks), e.legacy, e.level)
            for f, e in out.items() if e.ks}


def taskstats_groups(test: Test) -> Dict[int, Dict[str, float]]:
    """taskstats: {nr_process: {method: median per process}}, in
    instructions for an icount run."""
    out: Dict[int, Dict[str, float]] = {}
    for t in timed_rows(test):
        n = _number(row_extra(t.row).get("nr_process"))
        if n is None:
            continue
        k = test.insn_per_unit(t.row.unit) or 1.0
        out.setdefault(int(n), {})[t.row.name] = t.median * k
    return out


PMQ_PERCENTILES = (("p50", "p50_us"), ("p99", "p99_us"),
                   ("p99.9", "p999_us"), ("max", "max_us"))


def _as_number(v: object, default: float) -> float:
    """V as it is when it is a JSON number, else DEFAULT."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) \
        else default


def _pmq_histogram(key: str, pair: object) -> Optional[plots.Histogram]:
    """The histogram of one pair of rt-tests' JSON ("thread" member), read
    from its receiver's; None when it has none."""
    rx = pair.get("receiver") if isinstance(pair, dict) else None
    hist = rx.get("histogram") if isinstance(rx, dict) else None
    if not isinstance(rx, dict) or not isinstance(hist, dict) or \
            not isinstance(hist.get("counts"), list):
        return None
    width = _as_number(hist.get("bucket_us", 1), 1) or 1
    buckets = [(i * width, c) for i, c in enumerate(hist["counts"])
               if _number(c) is not None]
    pct = [(name, rx[k]) for name, k in PMQ_PERCENTILES
           if _number(rx.get(k)) is not None]
    return plots.Histogram(f"pair {key} (CPU {rx.get('cpu', '?')})", buckets,
                           _as_number(hist.get("overflow", 0), 0), pct)


def pmq_histograms(test: Test) -> List[plots.Histogram]:
    """pmqtest with --histogram: one histogram with its percentiles per
    pair, from the rt-tests 'thread' object of the (first) run."""
    threads = test.header.doc.get("thread")
    if not isinstance(threads, dict):
        return []
    out = []
    for key in sorted(threads, key=lambda k: int(k) if k.isdigit() else 0):
        hist = _pmq_histogram(key, threads[key])
        if hist is not None:
            out.append(hist)
    return out


def pmq_percentiles(test: Test) -> List[plots.Percentiles]:
    """pmqtest rows latency_pairN: their latency by percentile, in
    instructions for an icount run."""
    out = []
    for t in timed_rows(test):
        if not t.row.name.startswith("latency_pair"):
            continue
        f, k = t.fig, test.insn_per_unit(t.row.unit) or 1.0
        pts = [("min", f.min), ("p50", f.median), ("p90", f.p90),
               ("p99", f.p99), ("p99.9", f.p999), ("max", f.max)]
        out.append(plots.Percentiles(t.row.name, [(n, v * k) for n, v in pts
                                                  if v is not None]))
    return out


# ---- plots per program -------------------------------------------------------

def _sides(runs: Sequence[Run], tname: str
           ) -> List[Tuple[Optional[str], Test, bool]]:
    """(label, test, dashed) for each run that has the test; in a
    comparison the base is drawn dashed, the candidate solid."""
    out = []
    for i, run in enumerate(runs):
        if tname in run.tests:
            out.append((run.label if len(runs) > 1 else None,
                        run.tests[tname], len(runs) > 1 and i == 0))
    return out


def _label(name: str, side: Optional[str]) -> str:
    return f"{name} ({side})" if side else name


FORK_PANELS = (
    (False, "Creating a process against the parent's size: fork copies "
            "the page tables, vfork, clone and posix_spawn do not"),
    (True, "Creating a process that execs a new program, against the "
           "parent's size"),
)


def plot_fork(runs: Sequence[Run]) -> List[str]:
    """Two panels: creation alone and creation + exec (their costs differ
    by an order of magnitude; one panel would crowd the flat lines)."""
    out = []
    for with_exec, title in FORK_PANELS:
        series = []
        for side, test, dashed in _sides(runs, "proc_create"):
            methods = fork_series(test)
            for i, method in enumerate(methods):
                if ("exec" in method) != with_exec:
                    continue
                series.append(plots.Series(_label(method, side),
                                           methods[method], i, dashed))
        if series:
            out.append(plots.series_plot(
                series, "parent size (MiB, VmSize)",
                _per(runs, "proc_create", "creation (median)"), title))
    return out


def plot_ks(runs: Sequence[Run]) -> List[str]:
    out = []
    for mode, what in (("per_read", "lseek + read on an open fd"),
                       ("per_cat", "open + read + close")):
        series = []
        for side, test, dashed in _sides(runs, "memcg_ks"):
            for i, (f, e) in enumerate(sorted(ks_series(test, mode).items())):
                series.append(plots.Series(_label(f"{KS_FILES[f]}.ks", side),
                                           e.ks, i, dashed))
                level = e.level
                if level is not None:
                    series.append(plots.Series(
                        _label(f"{KS_FILES[f]} (all fields)", side),
                        [Point(p.x, level) for p in e.ks], i, True, ""))
        if series:
            out.append(plots.series_plot(
                series, "fields in the .ks filter",
                _per(runs, "memcg_ks", f"read ({what})"),
                f"memory.stat read cost against the number of .ks fields "
                f"({mode.replace('_', ' ')})", xlog=True,
                xticks_at_data=True))
    return out


def plot_taskstats(runs: Sequence[Run]) -> List[str]:
    groups: List[Tuple[str, Dict[str, float]]] = []
    methods: List[str] = []
    for side, test, _ in _sides(runs, "taskstats"):
        for n, by_method in sorted(taskstats_groups(test).items()):
            for m in by_method:
                if m not in methods:
                    methods.append(m)
            groups.append((_label(f"{n} processes", side), by_method))
    if not groups:
        return []
    bars = [(g, [by.get(m) for m in methods]) for g, by in groups]
    return [plots.grouped_bars(
        bars, methods, _per(runs, "taskstats", "process (median)"),
        "taskstats: cost of one process's statistics, by method and "
        "process count")]


def plot_pmq(runs: Sequence[Run]) -> List[str]:
    out = []
    for side, test, _ in _sides(runs, "pmqtest"):
        hists = pmq_histograms(test)
        if hists:
            # The rt-tests part of the document is the first repetition's.
            first = (f", repetition 1 of {len(test.headers)}"
                     if len(test.headers) > 1 else "")
            out.append(plots.latency_histogram(
                hists, _label("pmqtest wake-up latency histogram with "
                              "percentiles" + first, side),
                test.insn_per_unit("us")))
    series = []
    for side, test, dashed in _sides(runs, "pmqtest"):
        for i, p in enumerate(pmq_percentiles(test)):
            series.append(plots.Percentiles(_label(p.label, side), p.points,
                                            i, dashed))
    if series:
        out.append(plots.latency_percentiles(
            series, "pmqtest wake-up latency by percentile",
            results.INSN if _counts_insn(runs, "pmqtest") else "us"))
    return out


def _row_figures(test: Test) -> Dict[str, Tuple[Optional[str],
                                                 plots.Dots]]:
    """Row -> (unit, (median, min, p99 or max)) of a program's timed
    rows; an icount run's in guest instructions, as its table has them,
    not in the guest's virtual time."""
    out: Dict[str, Tuple[Optional[str], plots.Dots]] = {}
    for t in timed_rows(test):
        k = test.insn_per_unit(t.row.unit)
        hi = t.fig.p99 if t.fig.p99 is not None else t.fig.max
        dots = (t.median, t.fig.min, hi) if k is None else \
            (t.median * k, None if t.fig.min is None else t.fig.min * k,
             None if hi is None else hi * k)
        out[t.row.name] = (results.INSN if k else t.row.unit, dots)
    return out


def plot_rows(runs: Sequence[Run], tname: str) -> List[str]:
    """Every timed row of a program (both sides of a comparison in one
    plot), for programs without a special plot; one plot per unit."""
    sides = _sides(runs, tname)
    figs = [_row_figures(test) for _, test, _ in sides]
    names: List[str] = []
    units: List[Optional[str]] = []
    for f in figs:
        for name, (unit, _) in f.items():
            names += [name] if name not in names else []
            units += [unit] if unit not in units else []
    out = []
    for unit in units:
        rows = [(n, [f[n][1] if n in f and f[n][0] == unit else None
                     for f in figs]) for n in names
                if any(n in f and f[n][0] == unit for f in figs)]
        labels = [s for s, _, _ in sides] if len(sides) > 1 else None
        out.append(plots.row_dots(rows, unit, f"{tname}: every row", labels))
    return out


SPECIAL_PLOTS: Dict[str, Callable[[Sequence[Run]], List[str]]] = {
    "proc_create": plot_fork,
    "memcg_ks": plot_ks,
    "taskstats": plot_taskstats,
    "pmqtest": plot_pmq,
}


def program_plots(runs: Sequence[Run], tname: str) -> List[str]:
    """The figures of one program: its special plots where its data has
    them, otherwise the overview of its rows."""
    special = SPECIAL_PLOTS.get(tname)
    figs = special(runs) if special else []
    return figs or plot_rows(runs, tname)


# ---- HTML ---------------------------------------------------------------------

def esc(v: object) -> str:
    return html.escape("" if v is None else str(v))


def fmt(v: Optional[float], digits: int = 4) -> str:
    """A figure with DIGITS significant digits, '' when absent."""
    if v is None:
        return ""
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.0f}" if abs(v) >= 10 ** digits else f"{v:.{digits}g}"
    return str(v)


def fmt_pct(v: Optional[float]) -> str:
    return "" if v is None else f"{v:.1f}"


CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif;
       margin: 1.5em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 1.8em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { padding: 2px 8px; border-bottom: 1px solid #e5e5e5;
         text-align: right; vertical-align: top; }
th { background: #f3f3f3; }
td { white-space: nowrap; }
td.l, th.l { text-align: left; }
td.note { text-align: left; color: #555; font-size: 0.92em;
          white-space: normal; }
table.meta td { text-align: left; border: none; padding: 1px 8px;
                white-space: normal; overflow-wrap: anywhere; }
table.meta td:first-child { white-space: nowrap; overflow-wrap: normal; }
.warn { background: #fdf2e9; border-left: 4px solid #e67e22;
        padding: 0.4em 0.8em; margin: 0.6em 0; }
.v-slower { background: #f5b7b1; } .v-faster { background: #abebc6; }
.v-same { color: #555; } .v-no-verdict { background: #f9e79f; }
.v-skip, .v-fail { color: #888; }
.s-fail { background: #f5b7b1; }
.plots { display: flex; flex-wrap: wrap; gap: 1em; }
.plots svg { max-width: 100%; height: auto; }
.counts span { margin-right: 1.2em; }
p.note { color: #555; font-size: 0.85em; }
code { font-size: 0.9em; }
table.where code { font-size: 1em; }
details { font-size: 0.85em; color: #555; margin: 0.3em 0; }
ul.note { margin: 0.2em 0; }
"""


def _kernel(test: Test) -> str:
    k = test.header.kernel
    return f"{k.release or '?'} {k.version or ''}".strip()


def _machine(test: Test) -> str:
    m = test.header.machine
    parts = [m.arch, m.hostname, f"{m.cpus} CPUs" if m.cpus else None]
    if m.guest:
        parts.append(f"{m.guest} guest")
    if m.machine_slow:
        parts.append("KSFT_MACHINE_SLOW")
    return ", ".join(str(p) for p in parts if p)


def _dates(run: Run) -> Tuple[str, str]:
    dates = []
    for t in run.tests.values():
        for h in t.headers:
            dates += [d for d in (h.date, h.end_date) if d]
    return (min(dates), max(dates)) if dates else ("?", "?")


def is_icount(run: Run) -> bool:
    """QEMU's instruction counter drove the clocks of the run."""
    return any(t.clock_mode() == ClockMode.ICOUNT
               for t in run.tests.values())


def measured(test: Test) -> Tuple[str, str]:
    """('clock', its name), or under QEMU -icount what the figures count
    instead: the guest's clock counts instructions, not time."""
    h = test.header
    if test.clock_mode() != ClockMode.ICOUNT:
        return ("clock", h.clock or "?")
    shift = h.machine.icount_shift or 0
    return ("measures", f"guest instructions per operation, exact: QEMU "
            f"-icount shift={shift} (one ns of {h.clock or 'the clock'} is "
            f"{1 << shift} instruction{'s' if shift else ''})")


def run_facts(run: Run) -> List[Tuple[str, object]]:
    """(what, value) lines of the header for one run."""
    tests = list(run.tests.values())
    start, end = _dates(run)
    return [("results", run.path),
            ("kernel", "; ".join(sorted({_kernel(t) for t in tests}))),
            ("machine", "; ".join(sorted({_machine(t) for t in tests}))),
            ("date", f"{start} to {end}"),
            ("programs", ", ".join(run.tests)),
            ("repetitions", run.repetitions()),
            measured(tests[0])]


def header_html(runs: Sequence[Run],
                entries: Optional[Sequence[kbcompare.Entry]] = None) -> str:
    """One table of what was run: a column per side in a comparison."""
    facts = [run_facts(r) for r in runs]
    out = ['<table class="meta">']
    if len(runs) > 1:
        out.append("<tr><td></td>" + "".join(
            f"<td><b>{esc(r.label)}</b></td>" for r in runs) + "</tr>")
    for i, (what, _) in enumerate(facts[0]):
        out.append(f"<tr><td><b>{esc(what)}</b></td>" + "".join(
            f"<td>{esc(f[i][1])}</td>" for f in facts) + "</tr>")
    out.append("</table>")
    out += [f'<p class="warn">{esc(w)}</p>'
            for w in warnings(runs, entries)]
    return "\n".join(out)


def warnings(runs: Sequence[Run],
             entries: Optional[Sequence[kbcompare.Entry]] = None
             ) -> List[str]:
    """What a reader must know before trusting a figure; entries: the
    comparison's, whose exact rows need no repetitions."""
    out = []
    guests = sorted({g for r in runs for t in r.tests.values()
                     if (g := t.header.machine.guest) is not None})
    if guests:
        out.append(f"Measured in an emulated or virtualised guest "
                   f"({', '.join(guests)}, booted by run_all.sh --kernel): "
                   f"a functional check, not figures to compare with a "
                   f"host.")
    if any(t.header.machine.machine_slow for r in runs
           for t in r.tests.values()):
        out.append("KSFT_MACHINE_SLOW was set: the programs scaled their "
                   "work down; the figures are less precise.")
    if len(runs) == 2:
        out += kbcompare.warnings(runs[0], [runs[1]])
        if any(is_icount(r) for r in runs):
            out += icount_warnings(entries or [])
        elif min(r.repetitions() for r in runs) < stats.min_reps():
            out.append(
                f"Too few repetitions for a verdict (a side has "
                f"{min(r.repetitions() for r in runs)}, a verdict needs "
                f"{stats.min_reps()} per side): drift between runs is the "
                f"real noise. For verdicts: run_all.sh --vs-prefix CMD (or "
                f"--kernel BASE --vs-kernel CAND) --repeat 5 --json DIR "
                f"--report FILE.")
    elif runs and runs[0].repetitions() < 2:
        out.append("One repetition: the spread shown is within one run. "
                   "run_all.sh --repeat N gives the run-to-run spread.")
    return out


def icount_warnings(entries: Sequence[kbcompare.Entry]) -> List[str]:
    """An exact comparison needs one boot per side and the base's
    calibration, not repetitions; only rows left without a verdict need
    more: boots."""
    lacking = [e.name or "?" for e in entries
               if e.verdict == kbcompare.Verdict.NO_VERDICT]
    if not lacking:
        return []
    return [f"{len(lacking)} row{'s' if len(lacking) > 1 else ''} without "
            f"a verdict ({', '.join(lacking)}): under icount a row that is "
            f"noisy, or that the base's calibration lacks, is judged over "
            f"boots, and one boot per side is one sample each. Exact and "
            f"near rows need one boot per side and the base's calibration."]


def run_table(test: Test) -> str:
    """The table of one program of a single run."""
    repeated = any(len(r.reps) > 1 for r in test.rows.values())
    cols = ["row", "unit", "median", "mean", "min", "p99", "max", "rsd %",
            "n"]
    if repeated:
        cols += ["reps", "run-to-run cv %"]
    cols.append("note")
    out = ["<table>", "<tr>" + "".join(
        f'<th class="{"l" if c in ("row", "note") else ""}">{esc(c)}</th>'
        for c in cols) + "</tr>"]
    skipped: List[Tuple[str, Optional[str]]] = []
    for row in test.rows.values():
        if row.status == Status.SKIP:
            skipped.append((row.name, row.reason))
            continue
        if row.status != Status.OK:
            out.append(
                f'<tr class="s-{esc(row.status)}"><td class="l">'
                f'{esc(row.name)}</td><td colspan="{len(cols) - 2}" '
                f'class="l">{esc(row.status.upper())}</td><td class="note">'
                f'{esc(row.reason)}</td></tr>')
            continue
        fig = row_figures(row)
        # An icount run's figures in guest instructions, as compared.
        k = test.insn_per_unit(row.unit)
        cells = [fmt(v if v is None or k is None else v * k)
                 for v in (fig.median, fig.mean, fig.min, fig.p99, fig.max)]
        cells += [fmt_pct(fig.rsd_pct), fmt(fig.n)]
        if repeated:
            cells += [fmt(fig.medians), fmt_pct(fig.cv_pct)]
        note = row.note or _extra_text(row)
        unit = results.INSN if k else row.unit
        out.append(f'<tr><td class="l">{esc(row.name)}</td>'
                   f'<td class="l">{esc(unit)}</td>' +
                   "".join(f"<td>{esc(c)}</td>" for c in cells) +
                   f'<td class="note">{esc(note)}</td></tr>')
    out.append("</table>")
    out.append(skipped_html(skipped))
    return "\n".join(out)


def skipped_html(skipped: Sequence[Tuple[Optional[str], Optional[str]]]
                 ) -> str:
    """Skipped rows folded away (a <details>, no script needed), grouped
    by reason: a kernel without an interface skips dozens of rows."""
    if not skipped:
        return ""
    by_reason: Dict[str, List[str]] = {}
    for name, reason in skipped:
        by_reason.setdefault(reason or "no reason given", []).append(
            name or "")
    items = "".join(f"<li>{esc(r)}: {esc(', '.join(n))}</li>"
                    for r, n in by_reason.items())
    return (f'<details><summary>{len(skipped)} row'
            f'{"s" if len(skipped) > 1 else ""} not measured '
            f'({len(by_reason)} reason{"s" if len(by_reason) > 1 else ""}'
            f')</summary><ul class="note">{items}</ul></details>')


def _extra_text(row: Row) -> str:
    ex = row_extra(row)
    return " ".join(f"{k}={fmt(v) if not isinstance(v, str) else v}"
                    for k, v in ex.items()
                    if isinstance(v, (int, float, str)))


HIDDEN = (kbcompare.Verdict.SKIPPED, kbcompare.Verdict.MISSING)


def compare_table(entries: Sequence[kbcompare.Entry]) -> str:
    """The tables of one program's rows in a comparison: the rows the
    exact rule decided, in instructions with their margins, then the
    others with their interval and p value (a clock's, or an icount
    row's judged over boots)."""
    shown = [e for e in entries if e.verdict not in HIDDEN]
    exact_rows = [e for e in shown if kbcompare.is_exact(e)]
    out = [exact_table(exact_rows)] if exact_rows else []
    others = [e for e in shown if not kbcompare.is_exact(e)]
    if others:
        out.append(clock_table(others))
    out.append(skipped_html([(e.name, f"{e.verdict}: {e.note}")
                             for e in entries if e.verdict in HIDDEN]))
    return "\n".join(out)


def table_html(cols: Sequence[str], rows: Sequence[Tuple[
        kbcompare.Entry, Sequence[str]]]) -> str:
    """A comparison's table: each entry's name, unit, cells, verdict (at
    column 'verdict') and note; a note every row shares is said once,
    below."""
    at = list(cols).index("verdict") - 2
    out = ["<table>", "<tr>" + "".join(
        f'<th class="{"l" if c in ("row", "note", "verdict") else ""}">'
        f'{esc(c)}</th>' for c in cols) + "</tr>"]
    notes = {e.note for e, _ in rows}
    common = notes.pop() if len(rows) > 1 and len(notes) == 1 else None
    for e, cells in rows:
        out.append(
            f'<tr><td class="l">{esc(e.name)}</td>'
            f'<td class="l">{esc(e.unit)}</td>' +
            "".join(f"<td>{esc(c)}</td>" for c in cells[:at]) +
            f'<td class="l v-{esc(e.verdict)}">'
            f'{esc(kbcompare.verdict_label(e))}</td>' +
            "".join(f"<td>{esc(c)}</td>" for c in cells[at:]) +
            f'<td class="note">{esc(e.note if not common else "")}</td>'
            f'</tr>')
    out.append("</table>")
    if common:
        out.append(f'<p class="note">Every row: {esc(common)}</p>')
    return "\n".join(out)


def n_cell(e: kbcompare.Entry) -> str:
    return f"{e.n_base} / {e.n_candidate}" if e.n_base else ""


def exact_table(entries: Sequence[kbcompare.Entry]) -> str:
    """Rows the exact rule decided: base and candidate in instructions
    per operation, the change and the row's margin (a change beyond it
    is the verdict); no interval or p value, which a clock's samples
    need and an exact count does not."""
    cols = ["row", "unit", "base", "candidate", "change", "margin",
            "ratio", "verdict", "n", "note"]
    def insn(v: Optional[float]) -> str:
        return "" if v is None else exact.fmt_insn(v)
    return table_html(cols, [(e, [
        insn(e.base), insn(e.value), kbcompare.fmt_delta(e),
        f"\u00b1{exact.fmt_insn(e.margin or 0.0)} {results.INSN}",
        "" if e.ratio is None else f"{e.ratio:.3f}", n_cell(e)])
        for e in entries])


def clock_table(entries: Sequence[kbcompare.Entry]) -> str:
    """Rows judged over samples: a clock's, or an icount row's over its
    boots."""
    cols = ["row", "unit", "base", "candidate", "ratio", "95% CI / change",
            "p", "verdict", "smallest change flagged", "cv % base",
            "cv % cand", "n", "note"]
    return table_html(cols, [(e, [
        fmt(e.base), fmt(e.value),
        "" if e.ratio is None else f"{e.ratio:.3f}",
        (f"{e.ci_low:.3f} .. {e.ci_high:.3f}"
         if e.ci_low is not None and e.ci_high is not None else ""),
        fmt(e.p_value, 2), kbcompare.fmt_mde(e), fmt_pct(e.cv_base),
        fmt_pct(e.cv_candidate), n_cell(e)]) for e in entries])


FOREST_VERDICTS = (kbcompare.Verdict.SLOWER, kbcompare.Verdict.FASTER,
                   kbcompare.Verdict.SAME, kbcompare.Verdict.NO_VERDICT)


def _plot_label(e: kbcompare.Entry, shown: Sequence[kbcompare.Entry]
                ) -> str:
    """The row's name; the program's too when more than one is shown."""
    return (e.name or "?") if len({s.test for s in shown}) == 1 \
        else f"{e.test}: {e.name}"


def forest_rows(entries: Sequence[kbcompare.Entry]) -> List[plots.ForestRow]:
    """Rows of the forest plot of ratios: every compared row with a ratio
    that the exact rule did not decide (those are drawn in
    instructions, insn_rows)."""
    shown = [e for e in entries
             if e.verdict in FOREST_VERDICTS and e.ratio and
             not kbcompare.is_exact(e)]
    return [plots.ForestRow(_plot_label(e, shown), e.ratio or 0.0,
                            e.ci_low, e.ci_high, e.verdict.value)
            for e in shown]


def insn_rows(entries: Sequence[kbcompare.Entry]) -> List[plots.InsnRow]:
    """Rows of the plot in instructions: every row the exact rule
    decided, with its change and its margin."""
    shown = [e for e in entries
             if e.verdict in FOREST_VERDICTS and kbcompare.is_exact(e) and
             e.delta is not None]
    return [plots.InsnRow(_plot_label(e, shown), e.delta or 0.0,
                          e.margin or 0.0, e.verdict.value)
            for e in shown]


def render(runs: Sequence[Run],
           threshold_pct: float = kbcompare.DEFAULT_THRESHOLD_PCT,
           stat: str = "median", title: Optional[str] = None,
           cal: Optional[Mapping[str, exact.Known]] = None,
           moved: Sequence[Json] = ()) -> str:
    """The whole page as a string; cal: the calibration the exact rule
    judges by (default: the base's own boots); moved: kbench where's
    differences of the rows that moved (an A/B's where.json), a table
    each below its program's. Raises ReportError when runs cannot be
    compared, RuntimeError when matplotlib is missing."""
    if not plots.available():
        raise RuntimeError(plots.install_hint())
    entries = None
    if len(runs) == 2:
        try:
            entries = kbcompare.compare(runs[0], [runs[1]], threshold_pct,
                                        stat, cal=cal)
        except results.ResultError as e:
            raise ReportError(str(e)) from e
    names = list(runs[0].tests) + [t for r in runs[1:] for t in r.tests
                                   if t not in runs[0].tests]
    if title is None:
        title = ("kbench A/B comparison" if entries is not None
                 else "kbench results")
    body = [f"<h1>{esc(title)}</h1>", header_html(runs, entries)]
    if entries is not None:
        body.append(comparison_summary(entries, threshold_pct, stat))
    for tname in names:
        body.append(program_section(runs, tname, entries))
        body.append(where_html([d for d in moved if str(
            d.get("row", "")).partition(":")[0] == tname]))
    body.append('<p class="note">Made by kbench scripts/report.py; '
                'figures drawn with matplotlib.</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset="
            "\"utf-8\">\n<title>" + esc(title) + "</title>\n<style>" + CSS +
            "</style></head>\n<body>\n" + "\n".join(body) +
            "\n</body></html>\n")


def comparison_summary(entries: Sequence[kbcompare.Entry],
                       threshold_pct: float, stat: str) -> str:
    counts = kbcompare.verdict_counts(entries)
    out = ["<h2>Verdicts</h2>", '<p class="counts">' + "".join(
        f'<span class="v-{esc(v)}">{esc(v)}: {counts.get(v, 0)}</span>'
        for v in kbcompare.VERDICTS) + "</p>"]
    exact_rows = insn_rows(entries)
    if exact_rows:
        out.append(EXACT_RULE)
        out.append('<div class="plots">' + plots.insn_forest(
            exact_rows, "Exact rows: candidate - base, in instructions") +
            "</div>")
    rows = forest_rows(entries)
    if rows or not exact_rows:
        out.append(
            f"<p>{'Other rows: r' if exact_rows else 'R'}atio of the "
            f"{esc(stat)}s over the {'boots' if exact_rows else 'repetitions'}"
            f" (candidate / base) with its 95% confidence interval "
            f"(Hodges-Lehmann); <b>slower</b>/<b>faster</b>: significant "
            f"after Benjamini-Hochberg and beyond the {threshold_pct:g}% "
            f"threshold (the grey band).</p>")
    if rows:
        title = "Other rows: candidate / base" if exact_rows \
            else "Every compared row: candidate / base"
        out.append('<div class="plots">' + plots.forest(
            rows, threshold_pct, title) + "</div>")
    return "\n".join(out)


# The exact rule (kbtools.exact) in a reader's words.
EXACT_RULE = (
    f"<p>Exact (icount) rows count guest instructions per operation, one "
    f"boot per side, judged against the calibration of the base's kernel "
    f"(its own boots, an A/A): <b>slower</b>/<b>faster</b> when every "
    f"candidate repetition differs from the base's at the same place in "
    f"the run by more than the row's margin (its grey band), the larger "
    f"of {exact.FLOOR_INSN:g} instruction and "
    f"{exact.BOOT_SPREAD_FACTOR:g}x the range of the base's calibrated "
    f"boots, and {exact.CALIBRATED_FLOOR_PCT:g}% of a near row: one added "
    f"instruction reads slower on an exact row. Instructions do not show "
    f"cache or TLB misses, contention, memory bandwidth, device latency "
    f"or microcode costs.</p>")


def measuring_command(cmdline: Optional[str]) -> str:
    """The program's command without the path the runner gave --json: a
    file of the runner's (in a kernel A/B each kernel's guest writes under
    its own "base" directory), not a choice of the measurement."""
    words = (cmdline or "").split()
    kept: List[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w == "--json":
            skip = True
        elif not w.startswith("--json="):
            kept.append(w)
    return " ".join(kept)


def program_section(runs: Sequence[Run], tname: str,
                    entries: Optional[Sequence[kbcompare.Entry]]) -> str:
    out = [f'<h2 id="{esc(tname)}">{esc(tname)}</h2>']
    for side, test, _ in _sides(runs, tname):
        cmd = measuring_command(test.header.cmdline)
        if cmd:
            who = f"{side}: " if side else ""
            out.append(f"<p>{esc(who)}<code>{esc(cmd)}</code></p>")
    if entries is not None:
        out.append(compare_table([e for e in entries if e.test == tname]))
    else:
        out.append(run_table(runs[0].tests[tname]))
    figs = program_plots(runs, tname)
    if figs:
        out.append('<div class="plots">' + "\n".join(figs) + "</div>")
    return "\n".join(out)


def where_html(docs: Sequence[Json]) -> str:
    """A small table per moved row that kbench where profiled: the
    functions whose self instructions per operation changed, largest
    first, the check of their sum, the functions that did not change."""
    if not docs:
        return ""
    out = ["<h3>Where the instructions went</h3>",
           '<p class="note">kbench where: each kernel booted once more, '
           f"counted by {esc(where.method_text(docs))}; instructions per "
           "operation of each function itself"
           + ("" if where.methods_of(docs) == [where.PLUGIN] else
              " (ftrace's per-call cost cancels between a kernel and a "
              "patch of it)") + ".</p>"]
    for doc in docs:
        who = f" ({doc['candidate']})" if doc.get("candidate") else ""
        last = "median change" if doc.get("stat") == where.MEAN else "calls"
        out += [f'<p><b>{esc(doc["row"])}</b>{esc(who)}</p>',
                '<table class="where"><tr><th class="l">function</th>'
                "<th>base</th><th>candidate</th><th>change</th>"
                f"<th>{last}</th></tr>"]
        for ch in doc["functions"]:
            # The plugin counts no calls; with means, the median's change.
            calls = f"{ch.get('median_delta', 0.0):+.3f}" \
                if doc.get("stat") == where.MEAN else \
                "-" if doc.get("method") == where.PLUGIN else \
                f"{ch['calls_base']:g}" \
                if ch["calls_base"] == ch["calls_cand"] \
                else f"{ch['calls_base']:g} &rarr; {ch['calls_cand']:g}"
            cls = "v-slower" if ch["delta"] > 0 else "v-faster"
            out.append(f'<tr><td class="l"><code>{esc(ch["name"])}</code>'
                       f'</td><td>{ch["base"]:.3f}</td>'
                       f'<td>{ch["cand"]:.3f}</td>'
                       f'<td class="{cls}">{ch["delta"]:+.3f}</td>'
                       f"<td>{calls}</td></tr>")
        if not doc["functions"]:
            out.append('<tr><td class="l" colspan="5">no function on the '
                       "row's path changed</td></tr>")
        out.append("</table>")
        out.append(f'<p class="note">{esc(doc["check"])}')
        strings = where.string_text(doc)
        if strings:
            out.append("<br>" + esc(strings))
        said = where.compared_text(doc)
        if said:
            out.append("<br>" + esc(said))
        if doc.get("stat") == where.MEAN:
            median = doc.get("row_median_delta")
            out.append("<br>" + esc(
                "each figure a mean over the batches, which differ (the "
                "means add up to the mean window); the row's median delta "
                + ("?" if median is None else f"{median:+.3f}")))
        if doc.get("unchanged"):
            out.append(f"<br>unchanged (+0.000): "
                       f"{esc(', '.join(doc['unchanged']))}")
        out.append("</p>")
    return "\n".join(out)


# ---- the command (kbench report, scripts/report.py) -------------------------

def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=prog,
        description="Write one self-contained HTML page (inline SVG, no "
                    "network, no JavaScript) of a kbench run: per program a "
                    "table and plots; for two runs (BASE CAND, or an A/B "
                    "directory holding base/ and candidate/) the verdict of "
                    "every row and a forest plot of the ratios with their "
                    "95% confidence intervals.")
    ap.add_argument("--check", action="store_true",
                    help="only check that the report can be drawn "
                         "(matplotlib is installed): exit 0, or 4 with how "
                         "to install it")
    ap.add_argument("runs", nargs="*", metavar="DIR",
                    help="run_all.sh --json directory or results file; "
                         "two of them: base and candidate")
    ap.add_argument("-o", "--output", default="kbench-report.html",
                    metavar="FILE",
                    help="where to write the page (default: "
                         "kbench-report.html; '-' for stdout)")
    ap.add_argument("--threshold", type=float, metavar="PCT",
                    default=kbcompare.DEFAULT_THRESHOLD_PCT,
                    help="smallest change that counts as slower/faster "
                         "(default %(default)s%%)")
    ap.add_argument("-s", "--stat", default="median",
                    choices=kbcompare.STATS,
                    help="figure compared per repetition (default median)")
    ap.add_argument("--title", help="title of the page")
    args = ap.parse_args(list(argv))
    if not args.check and not args.runs:
        ap.error("give a run_all.sh --json directory (or two to compare)")
    if len(args.runs) > 2:
        ap.error("give one run (or A/B directory) or two runs to compare")
    if not 0 <= args.threshold < 100:
        ap.error(f"invalid --threshold {args.threshold}: a percentage "
                 f"between 0 and 100")
    return args


def no_plots(prog: str) -> int:
    """Without matplotlib: how to install it, and 4."""
    print(f"{prog}: {plots.install_hint()} ({plots.MATPLOTLIB_ERROR})",
          file=sys.stderr)
    return 4


def write(out: str, paths: Sequence[str],
          threshold_pct: float = kbcompare.DEFAULT_THRESHOLD_PCT,
          stat: str = "median", title: Optional[str] = None) -> None:
    """The page of the runs at paths into out ('-': stdout). ReportError
    on input it cannot be made of, cli.Failure (4) without matplotlib,
    cli.Error when out cannot be written."""
    runs = load_runs(paths)
    if not plots.available():
        raise cli.Failure(f"{plots.install_hint()} ({plots.MATPLOTLIB_ERROR})",
                          cli.EXIT_SKIP)
    page = render(runs, threshold_pct, stat, title,
                  cal=load_calibration(paths, runs[0]),
                  moved=load_where(paths))
    with cli.writing(out):
        results.write_text(out, page)


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    """kbench report, scripts/report.py: 0 written; 2 bad usage or
    input; 4 no matplotlib."""
    args = parse_args(argv, prog)
    if args.check:
        return 0 if plots.available() else no_plots(prog)
    try:
        write(args.output, args.runs, args.threshold, args.stat, args.title)
    except ReportError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        print(f"Try '{prog} -h' for more information.", file=sys.stderr)
        return 2
    except cli.Failure as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.status
    if args.output != "-":
        print(f"{prog}: wrote {args.output}", file=sys.stderr)
    return 0
