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

import html
import os
import re

from kbtools import compare as kbcompare
from kbtools import plots, results, stats

TIME_UNITS = kbcompare.TIME_UNITS
SIDE_STYLES = ("base", "candidate")


class ReportError(Exception):
    """Input the report cannot be made of; the message names it."""


# ---- input -----------------------------------------------------------------

def is_ab_dir(path):
    """An A/B directory of run_all.sh: base/ and candidate/ results."""
    return all(os.path.isdir(os.path.join(path, d))
               for d in ("base", "candidate"))


def load_runs(paths):
    """[Run] for one path (a run, or an A/B directory) or two (base and
    candidate). Raises ReportError on anything that is not kbench results,
    and on a base and candidate that share no test."""
    for p in paths:
        if not os.path.exists(p):
            raise ReportError(f"{p}: no such file or directory")
    if len(paths) == 1 and os.path.isdir(paths[0]) and is_ab_dir(paths[0]):
        paths = [os.path.join(paths[0], "base"),
                 os.path.join(paths[0], "candidate")]
    labels = ["base", "candidate"] if len(paths) == 2 else [None]
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


# ---- figures out of the results ------------------------------------------

def row_figures(row):
    """Summary figures of a row over its repetitions (median of medians,
    ...), cv_pct of the medians when repeated, and the spread of the
    repetitions' medians as rep_low/rep_high."""
    fig = results.summarize(row.reps)
    meds = row.values("median")
    if len(meds) >= 2:
        fig["rep_low"], fig["rep_high"] = min(meds), max(meds)
    fig["reps"] = len(meds)
    return fig


def row_extra(row):
    """The row's extra figures (of its first repetition that has them)."""
    for rep in row.reps:
        if isinstance(rep.get("extra"), dict):
            return rep["extra"]
    return {}


def timed_rows(test):
    """Rows that measured a time: (row, figures), in the program's order."""
    out = []
    for row in test.rows.values():
        if row.status == "ok" and row.unit in TIME_UNITS:
            fig = row_figures(row)
            if fig.get("median") is not None:
                out.append((row, fig))
    return out


def _point(x, fig):
    return (x, fig["median"], fig.get("rep_low"), fig.get("rep_high"))


def fork_series(test):
    """proc_create: {method: [(parent size MiB, median us, lo, hi)]} from
    rows named METHOD@SIZE (size from the row's vmsize_kib)."""
    out = {}
    for row, fig in timed_rows(test):
        if "@" not in row.name:
            continue
        method = row.name.split("@", 1)[0]
        kib = row_extra(row).get("vmsize_kib")
        if not isinstance(kib, (int, float)) or kib <= 0:
            continue
        out.setdefault(method, []).append(_point(kib / 1024.0, fig))
    return {m: sorted(p) for m, p in out.items() if len(p) >= 2}


KS_ROW = re.compile(r"^(stat|numa_stat)_(legacy|ks(\d+))_(per_read|per_cat|"
                    r"cat_process)$")
KS_FILES = {"stat": "memory.stat", "numa_stat": "memory.numa_stat"}


def ks_series(test, mode="per_read"):
    """memcg_ks: {file: {"ks": [(fields, median, lo, hi)], "legacy": fig}}
    for the files that have measured .ks rows of MODE."""
    out = {}
    for row, fig in timed_rows(test):
        m = KS_ROW.match(row.name)
        if not m or m.group(4) != mode:
            continue
        entry = out.setdefault(m.group(1), {"ks": [], "legacy": None})
        if m.group(2) == "legacy":
            entry["legacy"] = fig
        else:
            entry["ks"].append(_point(int(m.group(3)), fig))
    return {f: {"ks": sorted(e["ks"]), "legacy": e["legacy"]}
            for f, e in out.items() if e["ks"]}


def taskstats_groups(test):
    """taskstats: {nr_process: {method: median us per process}}."""
    out = {}
    for row, fig in timed_rows(test):
        n = row_extra(row).get("nr_process")
        if not isinstance(n, (int, float)):
            continue
        out.setdefault(int(n), {})[row.name] = fig["median"]
    return out


PMQ_PERCENTILES = (("p50", "p50_us"), ("p99", "p99_us"),
                   ("p99.9", "p999_us"), ("max", "max_us"))


def pmq_histograms(test):
    """pmqtest with --histogram: [{label, buckets, overflow, percentiles}]
    per pair, from the rt-tests 'thread' object of the (first) run."""
    threads = test.doc.get("thread")
    if not isinstance(threads, dict):
        return []
    out = []
    for key in sorted(threads, key=lambda k: int(k) if k.isdigit() else 0):
        rx = (threads[key] or {}).get("receiver") or {}
        hist = rx.get("histogram")
        if not isinstance(hist, dict) or not isinstance(
                hist.get("counts"), list):
            continue
        width = hist.get("bucket_us", 1) or 1
        buckets = [(i * width, c) for i, c in enumerate(hist["counts"])
                   if isinstance(c, (int, float))]
        pct = [(name, rx[k]) for name, k in PMQ_PERCENTILES
               if isinstance(rx.get(k), (int, float))]
        out.append({"label": f"pair {key} (CPU {rx.get('cpu', '?')})",
                    "buckets": buckets, "overflow": hist.get("overflow", 0),
                    "percentiles": pct})
    return out


def pmq_percentiles(test):
    """pmqtest rows latency_pairN: [{label, points: [(percentile, us)]}]."""
    out = []
    for row, fig in timed_rows(test):
        if not row.name.startswith("latency_pair"):
            continue
        pts = [("min", fig.get("min")), ("p50", fig.get("median")),
               ("p90", fig.get("p90")), ("p99", fig.get("p99")),
               ("p99.9", fig.get("p999")), ("max", fig.get("max"))]
        out.append({"label": row.name,
                    "points": [(n, v) for n, v in pts if v is not None]})
    return out


# ---- plots per program -------------------------------------------------------

def _sides(runs, tname):
    """(label, test, dashed) for each run that has the test; in a
    comparison the base is drawn dashed, the candidate solid."""
    out = []
    for i, run in enumerate(runs):
        if tname in run.tests:
            out.append((run.label if len(runs) > 1 else None,
                        run.tests[tname], len(runs) > 1 and i == 0))
    return out


def _label(name, side):
    return f"{name} ({side})" if side else name


FORK_PANELS = (
    (False, "Creating a process against the parent's size: fork copies "
            "the page tables, vfork, clone and posix_spawn do not"),
    (True, "Creating a process that execs a new program, against the "
           "parent's size"),
)


def plot_fork(runs):
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
                series.append({"label": _label(method, side),
                               "points": methods[method], "colour": i,
                               "dashed": dashed})
        if series:
            out.append(plots.series_plot(
                series, "parent size (MiB, VmSize)",
                "us per creation (median)", title))
    return out


def plot_ks(runs):
    out = []
    for mode, what in (("per_read", "lseek + read on an open fd"),
                       ("per_cat", "open + read + close")):
        series = []
        for side, test, dashed in _sides(runs, "memcg_ks"):
            for i, (f, e) in enumerate(sorted(ks_series(test, mode).items())):
                series.append({"label": _label(f"{KS_FILES[f]}.ks", side),
                               "points": e["ks"], "colour": i,
                               "dashed": dashed})
                leg = e["legacy"]
                if leg:
                    xs = [p[0] for p in e["ks"]]
                    series.append({
                        "label": _label(f"{KS_FILES[f]} (all fields)", side),
                        "points": [(x, leg["median"], None, None)
                                   for x in xs],
                        "colour": i, "dashed": True, "marker": ""})
        if series:
            out.append(plots.series_plot(
                series, "fields in the .ks filter", f"us per read ({what})",
                f"memory.stat read cost against the number of .ks fields "
                f"({mode.replace('_', ' ')})", xlog=True,
                xticks_at_data=True))
    return out


def plot_taskstats(runs):
    groups, methods = [], []
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
        bars, methods, "us per process (median)",
        "taskstats: cost of one process's statistics, by method and "
        "process count")]


def plot_pmq(runs):
    out = []
    for side, test, _ in _sides(runs, "pmqtest"):
        hists = pmq_histograms(test)
        if hists:
            # The rt-tests part of the document is the first repetition's.
            first = (f", repetition 1 of {len(test.headers)}"
                     if len(test.headers) > 1 else "")
            out.append(plots.latency_histogram(
                hists, _label("pmqtest wake-up latency histogram with "
                              "percentiles" + first, side)))
    series = []
    for side, test, dashed in _sides(runs, "pmqtest"):
        for i, p in enumerate(pmq_percentiles(test)):
            series.append(dict(p, label=_label(p["label"], side),
                               colour=i, dashed=dashed))
    if series:
        out.append(plots.latency_percentiles(
            series, "pmqtest wake-up latency by percentile"))
    return out


def plot_rows(runs, tname):
    """Every timed row of a program (both sides of a comparison in one
    plot), for programs without a special plot; one plot per unit."""
    sides = _sides(runs, tname)
    figs = [{row.name: (row.unit, (f["median"], f.get("min"),
                                   f.get("p99", f.get("max"))))
             for row, f in timed_rows(test)} for _, test, _ in sides]
    names, units = [], []
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


SPECIAL_PLOTS = {
    "proc_create": plot_fork,
    "memcg_ks": plot_ks,
    "taskstats": plot_taskstats,
    "pmqtest": plot_pmq,
}


def program_plots(runs, tname):
    """The figures of one program: its special plots where its data has
    them, otherwise the overview of its rows."""
    special = SPECIAL_PLOTS.get(tname)
    figs = special(runs) if special else []
    return figs or plot_rows(runs, tname)


# ---- HTML ---------------------------------------------------------------------

def esc(v):
    return html.escape("" if v is None else str(v))


def fmt(v, digits=4):
    """A figure with DIGITS significant digits, '' when absent."""
    if v is None:
        return ""
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.0f}" if abs(v) >= 10 ** digits else f"{v:.{digits}g}"
    return str(v)


def fmt_pct(v):
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
table.meta td { text-align: left; border: none; padding: 1px 8px; }
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
details { font-size: 0.85em; color: #555; margin: 0.3em 0; }
ul.note { margin: 0.2em 0; }
"""


def _kernel(test):
    k = test.doc.get("kernel") or {}
    return f"{k.get('release', '?')} {k.get('version', '')}".strip()


def _machine(test):
    m = test.doc.get("machine") or {}
    parts = [m.get("arch"), m.get("hostname"),
             f"{m.get('cpus')} CPUs" if m.get("cpus") else None]
    if m.get("guest"):
        parts.append(f"{m['guest']} guest")
    if m.get("machine_slow"):
        parts.append("KSFT_MACHINE_SLOW")
    return ", ".join(str(p) for p in parts if p)


def _dates(run):
    dates = []
    for t in run.tests.values():
        for h in t.headers:
            dates += [d for d in (h.get("date"), h.get("end_date")) if d]
    return (min(dates), max(dates)) if dates else ("?", "?")


def run_facts(run):
    """(what, value) lines of the header for one run."""
    tests = list(run.tests.values())
    start, end = _dates(run)
    return [("results", run.path),
            ("kernel", "; ".join(sorted({_kernel(t) for t in tests}))),
            ("machine", "; ".join(sorted({_machine(t) for t in tests}))),
            ("date", f"{start} to {end}"),
            ("programs", ", ".join(run.tests)),
            ("repetitions", run.repetitions()),
            ("clock", tests[0].doc.get("clock", "?"))]


def header_html(runs, entries, threshold_pct):
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
    out += [f'<p class="warn">{esc(w)}</p>' for w in warnings(runs)]
    return "\n".join(out)


def warnings(runs):
    """What a reader must know before trusting a figure."""
    out = []
    guests = sorted({(_machine_key(t, "guest")) for r in runs
                     for t in r.tests.values()} - {None})
    if guests:
        out.append(f"Measured in an emulated or virtualised guest "
                   f"({', '.join(guests)}, booted by run_all.sh --kernel): "
                   f"a functional check, not figures to compare with a "
                   f"host.")
    if any(_machine_key(t, "machine_slow") for r in runs
           for t in r.tests.values()):
        out.append("KSFT_MACHINE_SLOW was set: the programs scaled their "
                   "work down; the figures are less precise.")
    if len(runs) == 2:
        out += kbcompare.warnings(runs[0], [runs[1]])
        if min(r.repetitions() for r in runs) < stats.min_reps():
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


def _machine_key(test, key):
    return (test.doc.get("machine") or {}).get(key)


def run_table(test):
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
    skipped = []
    for row in test.rows.values():
        if row.status == "skip":
            skipped.append((row.name, row.reason))
            continue
        if row.status != "ok":
            out.append(
                f'<tr class="s-{esc(row.status)}"><td class="l">'
                f'{esc(row.name)}</td><td colspan="{len(cols) - 2}" '
                f'class="l">{esc(row.status.upper())}</td><td class="note">'
                f'{esc(row.reason)}</td></tr>')
            continue
        fig = row_figures(row)
        cells = [fmt(fig.get(k)) for k in ("median", "mean", "min", "p99",
                                          "max")]
        cells += [fmt_pct(fig.get("rsd_pct")), fmt(fig.get("n"))]
        if repeated:
            cells += [fmt(fig.get("reps")), fmt_pct(fig.get("cv_pct"))]
        note = row.note or _extra_text(row)
        out.append(f'<tr><td class="l">{esc(row.name)}</td>'
                   f'<td class="l">{esc(row.unit)}</td>' +
                   "".join(f"<td>{esc(c)}</td>" for c in cells) +
                   f'<td class="note">{esc(note)}</td></tr>')
    out.append("</table>")
    out.append(skipped_html(skipped))
    return "\n".join(out)


def skipped_html(skipped):
    """Skipped rows folded away (a <details>, no script needed), grouped
    by reason: a kernel without an interface skips dozens of rows."""
    if not skipped:
        return ""
    by_reason = {}
    for name, reason in skipped:
        by_reason.setdefault(reason or "no reason given", []).append(name)
    items = "".join(f"<li>{esc(r)}: {esc(', '.join(n))}</li>"
                    for r, n in by_reason.items())
    return (f'<details><summary>{len(skipped)} row'
            f'{"s" if len(skipped) > 1 else ""} not measured '
            f'({len(by_reason)} reason{"s" if len(by_reason) > 1 else ""}'
            f')</summary><ul class="note">{items}</ul></details>')


def _extra_text(row):
    ex = row_extra(row)
    return " ".join(f"{k}={fmt(v)}" for k, v in ex.items()
                    if isinstance(v, (int, float, str)))


def compare_table(entries):
    """The table of one program's rows in a comparison."""
    cols = ["row", "unit", "base", "candidate", "ratio", "95% CI / change",
            "p", "verdict", "smallest change flagged", "cv % base",
            "cv % cand", "n", "note"]
    out = ["<table>", "<tr>" + "".join(
        f'<th class="{"l" if c in ("row", "note", "verdict") else ""}">'
        f'{esc(c)}</th>' for c in cols) + "</tr>"]
    skipped = []
    shown = [e for e in entries if e["verdict"] not in ("skipped", "missing")]
    notes = {e.get("note") for e in shown}
    # A note every row shares (too few repetitions) is said once, below.
    common = notes.pop() if len(shown) > 1 and len(notes) == 1 else None
    for e in entries:
        if e["verdict"] in ("skipped", "missing"):
            skipped.append((e["name"], f"{e['verdict']}: {e.get('note')}"))
            continue
        ci = (f"{e['ci_low']:.3f} .. {e['ci_high']:.3f}"
              if e.get("ci_low") is not None else "")
        if kbcompare.is_exact(e):
            ci = kbcompare.fmt_delta(e)
        n = f"{e['n_base']} / {e['n_candidate']}" if e.get("n_base") else ""
        cells = [fmt(e.get("base")), fmt(e.get("value")),
                 "" if e.get("ratio") is None else f"{e['ratio']:.3f}", ci,
                 fmt(e.get("p_value"), 2)]
        out.append(
            f'<tr><td class="l">{esc(e["name"])}</td>'
            f'<td class="l">{esc(e.get("unit"))}</td>' +
            "".join(f"<td>{esc(c)}</td>" for c in cells) +
            f'<td class="l v-{esc(e["verdict"])}">'
            f'{esc(kbcompare.verdict_label(e))}</td>'
            f'<td>{esc(kbcompare.fmt_mde(e))}</td>'
            f'<td>{esc(fmt_pct(e.get("cv_base")))}</td>'
            f'<td>{esc(fmt_pct(e.get("cv_candidate")))}</td>'
            f'<td>{esc(n)}</td><td class="note">'
            f'{esc(e.get("note") if not common else "")}</td></tr>')
    out.append("</table>")
    if common:
        out.append(f'<p class="note">Every row: {esc(common)}</p>')
    out.append(skipped_html(skipped))
    return "\n".join(out)


FOREST_VERDICTS = ("slower", "faster", "same", "no-verdict")


def forest_rows(entries):
    """Rows of the forest plot: every compared row with a ratio."""
    shown = [e for e in entries
             if e["verdict"] in FOREST_VERDICTS and e.get("ratio")]
    # The program's name only when more than one program is shown.
    one_test = len({e["test"] for e in shown}) == 1
    return [{"label": e["name"] if one_test else f"{e['test']}: {e['name']}",
             "ratio": e["ratio"], "ci_low": e.get("ci_low"),
             "ci_high": e.get("ci_high"), "verdict": e["verdict"]}
            for e in shown]


def verdict_counts(entries):
    counts = {}
    for e in entries:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    return counts


def render(runs, threshold_pct=kbcompare.DEFAULT_THRESHOLD_PCT,
           stat="median", title=None):
    """The whole page as a string; raises ReportError when runs cannot be
    compared, RuntimeError when matplotlib is missing."""
    if not plots.available():
        raise RuntimeError(plots.INSTALL_HINT)
    entries = None
    if len(runs) == 2:
        try:
            entries = kbcompare.compare(runs[0], [runs[1]], threshold_pct,
                                        stat)
        except results.ResultError as e:
            raise ReportError(str(e)) from e
    names = list(runs[0].tests) + [t for r in runs[1:] for t in r.tests
                                   if t not in runs[0].tests]
    if title is None:
        title = ("kbench A/B comparison" if entries is not None
                 else "kbench results")
    body = [f"<h1>{esc(title)}</h1>",
            header_html(runs, entries, threshold_pct)]
    if entries is not None:
        body.append(comparison_summary(entries, threshold_pct, stat))
    for tname in names:
        body.append(program_section(runs, tname, entries))
    body.append('<p class="note">Made by kbench scripts/report.py; '
                'figures drawn with matplotlib.</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset="
            "\"utf-8\">\n<title>" + esc(title) + "</title>\n<style>" + CSS +
            "</style></head>\n<body>\n" + "\n".join(body) +
            "\n</body></html>\n")


def comparison_summary(entries, threshold_pct, stat):
    counts = verdict_counts(entries)
    out = ["<h2>Verdicts</h2>", '<p class="counts">' + "".join(
        f'<span class="v-{esc(v)}">{esc(v)}: {counts.get(v, 0)}</span>'
        for v in kbcompare.VERDICTS) + "</p>",
        f"<p>Ratio of the {esc(stat)}s over the repetitions (candidate / "
        f"base) with its 95% confidence interval (Hodges-Lehmann); "
        f"<b>slower</b>/<b>faster</b>: significant after "
        f"Benjamini-Hochberg and beyond the {threshold_pct:g}% threshold "
        f"(the grey band).</p>"]
    rows = forest_rows(entries)
    if rows:
        out.append('<div class="plots">' + plots.forest(
            rows, threshold_pct, "Every compared row: candidate / base") +
            "</div>")
    return "\n".join(out)


def program_section(runs, tname, entries):
    out = [f'<h2 id="{esc(tname)}">{esc(tname)}</h2>']
    for side, test, _ in _sides(runs, tname):
        cmd = test.doc.get("cmdline")
        if cmd:
            who = f"{side}: " if side else ""
            out.append(f"<p>{esc(who)}<code>{esc(cmd)}</code></p>")
    if entries is not None:
        out.append(compare_table([e for e in entries if e["test"] == tname]))
    else:
        out.append(run_table(runs[0].tests[tname]))
    figs = program_plots(runs, tname)
    if figs:
        out.append('<div class="plots">' + "\n".join(figs) + "</div>")
    return "\n".join(out)
