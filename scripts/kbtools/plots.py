# SPDX-License-Identifier: GPL-2.0
"""Figures of the kbench report, drawn with matplotlib as inline SVG.

Every function takes plain data (the types below, already taken out of
the results by kbtools.report) and returns one <svg> element as a string, ready
to be put into an HTML page: no XML prolog, text kept as text (searchable,
small), element ids prefixed so that several figures can share one page.
"""

import io
import math
import re
from dataclasses import dataclass, field
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from kbtools import packages

MATPLOTLIB_ERROR: Optional[ImportError] = None
try:
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib import ticker
except ImportError as e:  # the report says how to install it
    MATPLOTLIB_ERROR = e



def install_hint() -> str:
    """How to get matplotlib, for this interpreter."""
    return (f"the report needs matplotlib: "
            f"{packages.module_missing('matplotlib', 'python3-matplotlib')}"
            " (not Debian or Ubuntu: dnf install python3-matplotlib on"
            " Fedora, else pip install matplotlib)")

VERDICT_COLOURS = {
    "slower": "#c0392b",
    "faster": "#1e8449",
    "same": "#7f8c8d",
    "no-verdict": "#b7950b",
}
# One colour per series, the same series always the same colour.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")

_figure_count = 0


class Point(NamedTuple):
    """A point of a line: low and high (or None) bound its error bar."""
    x: float
    y: float
    low: Optional[float] = None
    high: Optional[float] = None


@dataclass
class Series:
    """One line of series_plot(); colour is an index of PALETTE (None:
    the series' own index)."""
    label: str
    points: List[Point]
    colour: Optional[int] = None
    dashed: bool = False
    marker: str = "o"


@dataclass
class Histogram:
    """One pair's latency histogram: (us, count) buckets, the samples
    beyond them, and (name, us) percentiles."""
    label: str
    buckets: List[Tuple[float, float]]
    overflow: float = 0
    percentiles: List[Tuple[str, float]] = field(default_factory=list)


@dataclass
class Percentiles:
    """One pair's latency by percentile: (percentile name, us)."""
    label: str
    points: List[Tuple[str, float]]
    colour: Optional[int] = None
    dashed: bool = False


@dataclass
class ForestRow:
    """One row of the forest plot: the ratio, its interval, its verdict."""
    label: str
    ratio: float
    ci_low: Optional[float]
    ci_high: Optional[float]
    verdict: str


@dataclass
class InsnRow:
    """One exact row of the A/B plot in instructions: the change per
    operation (candidate - base), the margin the exact rule judged it
    by, its verdict."""
    label: str
    delta: float
    margin: float
    verdict: str


# One row of row_dots() on one side: (median, low, high).
Dots = Tuple[float, Optional[float], Optional[float]]


def available() -> bool:
    """True when matplotlib could be imported."""
    return MATPLOTLIB_ERROR is None


def _style() -> None:
    matplotlib.rcParams.update({
        "svg.fonttype": "none",
        "svg.hashsalt": "kbench",
        "font.size": 9,
        "font.family": "sans-serif",
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "legend.fontsize": 8,
        "legend.frameon": False,
    })


def _svg(fig: Any) -> str:
    """The figure as one <svg> element with ids unique in the page."""
    global _figure_count
    _figure_count += 1
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text: str = buf.getvalue()
    text = text[text.index("<svg"):]
    prefix = f"kbf{_figure_count}-"
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    if ids:
        pattern = re.compile(r'(\bid="|#)(' + "|".join(
            re.escape(i) for i in sorted(ids, key=len, reverse=True)) +
            r')(?=["\)])')
        text = pattern.sub(lambda m: m.group(1) + prefix + m.group(2), text)
    return text.replace("<svg ", '<svg class="kbplot" ', 1)


def spans_decades(values: Sequence[Optional[float]], decades: float = 1.5
                  ) -> bool:
    """True when the positive values span more than DECADES powers of 10:
    then a log scale shows every series, a linear one hides the small."""
    pos = [v for v in values if v is not None and v > 0]
    if len(pos) < 2:
        return False
    return math.log10(max(pos) / min(pos)) > decades


def _new(width: float = 6.4, height: float = 3.4) -> Tuple[Any, Any]:
    _style()
    fig, ax = plt.subplots(figsize=(width, height))
    return fig, ax


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def series_plot(series: Sequence[Series], xlabel: str, ylabel: str,
                title: str, xlog: Optional[bool] = None,
                ylog: Optional[bool] = None,
                hline: Optional[Tuple[float, str]] = None,
                xticks_at_data: bool = False) -> str:
    """Lines with markers; a point's low/high (or None) draw the spread
    of the repetitions as error bars.
    hline = (y, label) draws a reference level (e.g. the legacy file);
    xticks_at_data labels the x values measured (e.g. 3, 16, 32 fields)."""
    fig, ax = _new()
    xs = [p.x for s in series for p in s.points]
    ys: List[Optional[float]] = [p.y for s in series for p in s.points]
    if hline:
        ys.append(hline[0])
    for i, s in enumerate(series):
        colour = _colour(s.colour if s.colour is not None else i)
        pts = sorted(s.points)
        x = [p.x for p in pts]
        y = [p.y for p in pts]
        err = None
        if any(p.low is not None for p in pts):
            err = [[max(0.0, p.y - (p.low if p.low is not None else p.y))
                    for p in pts],
                   [max(0.0, (p.high if p.high is not None else p.y) - p.y)
                    for p in pts]]
        ax.errorbar(x, y, yerr=err, marker=s.marker,
                    markersize=4, capsize=2, linewidth=1.5, color=colour,
                    linestyle="--" if s.dashed else "-",
                    label=s.label)
    if hline:
        ax.axhline(hline[0], color="#555", linestyle="--", linewidth=1,
                   label=hline[1])
    if xlog if xlog is not None else spans_decades(xs):
        _log(ax, "x")
    if ylog if ylog is not None else spans_decades(ys):
        _log(ax, "y")
    if xticks_at_data:
        ticks = sorted(set(xs))
        ax.set_xticks(ticks, [_plain_number(t) for t in ticks])
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _svg(fig)


def _log(ax: Any, which: str) -> None:
    """A log axis labelled with plain numbers; minor ticks labelled too
    when the axis spans less than a decade (else there is no major one)."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_formatter(ticker.FuncFormatter(_plain_number))
    lo, hi = (ax.get_xlim() if which == "x" else ax.get_ylim())
    if lo > 0 and hi / lo < 20:
        axis.set_minor_formatter(ticker.FuncFormatter(_plain_number))
    else:
        axis.set_minor_formatter(ticker.NullFormatter())


def _plain_number(v: float, _pos: object = None) -> str:
    """Tick labels as numbers a reader knows (0.1, 1, 1000, 1e+06)."""
    if v <= 0:
        return ""
    if v >= 1e5 or v < 1e-3:
        return f"{v:.0e}"
    return f"{v:g}"


def grouped_bars(groups: Sequence[Tuple[str, Sequence[Optional[float]]]],
                 labels: Sequence[str], ylabel: str, title: str,
                 ylog: Optional[bool] = None) -> str:
    """Bars: groups = [(group_name, [value or None per label])], one colour
    per label (e.g. per method within a process count, or per side of a
    comparison)."""
    n = max(1, len(labels))
    fig, ax = _new(min(6.4, 2.8 + 0.45 * n * len(groups)), 3.2)
    width = 0.8 / n
    values = [v for _, vals in groups for v in vals if v is not None]
    for i, label in enumerate(labels):
        xs: List[float] = []
        hs: List[float] = []
        for g, (_, vals) in enumerate(groups):
            v = vals[i] if i < len(vals) else None
            if v is not None:
                xs.append(g - 0.4 + width * (i + 0.5))
                hs.append(v)
        bars = ax.bar(xs, hs, width * 0.95, color=_colour(i), label=label)
        ax.bar_label(bars, fmt="%.3g", fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)), [g for g, _ in groups])
    if ylog if ylog is not None else spans_decades(values):
        _log(ax, "y")
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left", fontsize=10)
    ax.grid(axis="x", visible=False)
    if len(labels) > 1:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _svg(fig)


def row_dots(rows: Sequence[Tuple[str, Sequence[Optional[Dots]]]],
             unit: Optional[str], title: str,
             sides: Optional[Sequence[Optional[str]]] = None) -> str:
    """Every timed row of a program: median as a dot, the min..p99 range
    as a bar, one line per row and side; rows = [(name, [(median, low,
    high) or None per side])], sides = the sides' names (a comparison) or
    None (one run)."""
    nsides = len(sides) if sides else 1
    height = 0.9 + (0.2 + 0.12 * nsides) * len(rows)
    fig, ax = _new(6.8, height)
    step = 0.7 / nsides
    values: List[float] = []
    for k, (name, per_side) in enumerate(rows):
        y0 = len(rows) - 1 - k
        for j, fig_ in enumerate(per_side):
            if fig_ is None:
                continue
            med, lo, hi = fig_
            y = y0 + (nsides - 1) * step / 2 - j * step
            colour = _colour(j)
            if lo is not None and hi is not None:
                ax.plot([lo, hi], [y, y], color=colour, alpha=0.35,
                        linewidth=4, solid_capstyle="butt")
            label = sides[j] if sides and k == 0 else None
            ax.plot([med], [y], "o", color=colour, markersize=4, label=label)
            values += [v for v in fig_ if v is not None]
    ax.set_yticks(range(len(rows))[::-1], [r[0] for r in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    if spans_decades(values):
        _log(ax, "x")
    what = "guest instructions" if unit == "insn" else unit
    ax.set_xlabel(f"{what} per operation (dot: median, bar: min to p99)")
    ax.set_title(title, loc="left", fontsize=10)
    ax.grid(axis="y", visible=False)
    if sides:
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4)
    return _svg(fig)


def latency_histogram(pairs: Sequence[Histogram], title: str,
                      insn_per_us: Optional[float] = None) -> str:
    """One line per pair: counts on a log axis (the tail is what matters)
    against a linear latency axis that ends where the histogram ends, as
    rt-tests users plot it; the percentiles as dashed lines in the pair's
    colour, their values in the legend. insn_per_us: the run counted
    instructions (QEMU -icount), and its microseconds are virtual."""
    fig, ax = _new(6.8, 3.2)
    top = 0.0
    for i, p in enumerate(pairs):
        pts = p.buckets
        if not pts:
            continue
        top = max(top, pts[-1][0] + 1)
        pct = ", ".join(f"{n} {v:.3g}" for n, v in p.percentiles)
        over = p.overflow
        ax.step([b for b, _ in pts], [c if c > 0 else 0.5 for _, c in pts],
                where="mid", color=_colour(i), linewidth=1.2,
                label=f"{p.label}: {pct} us"
                      + (f"; {over} beyond the range" if over else ""))
        for name, v in p.percentiles:
            ax.axvline(v, color=_colour(i), linestyle="--", linewidth=0.8,
                       alpha=0.7)
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.7)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(_plain_number))
    if top:
        ax.set_xlim(0, top)
    us = "us" if insn_per_us is None else \
        f"virtual us of {insn_per_us:,.0f} guest instructions"
    ax.set_xlabel(f"wake-up latency ({us}, 1 us buckets; dashed: p50, "
                  f"p99, p99.9, max)")
    ax.set_ylabel("samples")
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2))
    return _svg(fig)


PERCENTILE_AXIS = (("min", 0.0), ("p50", 50.0), ("p90", 90.0),
                   ("p99", 99.0), ("p99.9", 99.9), ("max", None))


def latency_percentiles(pairs: Sequence[Percentiles], title: str,
                        unit: str = "us") -> str:
    """The latency profile when no histogram was recorded: latency against
    percentile on a 'nines' axis (50, 90, 99, 99.9, max), one line per pair
    (rt-tests users read the tail this way); unit, the points'."""
    fig, ax = _new(6.4, 3.2)
    names = [n for n, _ in PERCENTILE_AXIS]
    values: List[Optional[float]] = []
    for i, p in enumerate(pairs):
        pts = [(names.index(n), v) for n, v in p.points
               if n in names and v is not None]
        values += [v for _, v in pts]
        ax.plot([x for x, _ in pts], [v for _, v in pts], marker="o",
                markersize=4,
                color=_colour(p.colour if p.colour is not None else i),
                linestyle="--" if p.dashed else "-", label=p.label)
    ax.set_xticks(range(len(names)), names)
    if spans_decades(values, 1.0):
        _log(ax, "y")
    ax.set_xlabel("percentile of the samples")
    what = "guest instructions" if unit == "insn" else unit
    ax.set_ylabel(f"wake-up latency ({what})")
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
    return _svg(fig)


def forest(rows: Sequence[ForestRow], threshold_pct: float, title: str
           ) -> str:
    """The A/B forest plot: one line per row, ratio as a dot with its 95%
    CI, the band of +-threshold around 1 shaded, colour by verdict."""
    height = 1.1 + 0.2 * len(rows)
    fig, ax = _new(7.2, height)
    band = threshold_pct / 100.0
    ax.axvspan(1 - band, 1 + band, color="#d5dbdb", alpha=0.6, linewidth=0,
               label=f"\u00b1{threshold_pct:g}% threshold")
    ax.axvline(1.0, color="#555", linewidth=0.8)
    ys = list(range(len(rows)))[::-1]
    seen = set()
    lows = [1 - band]
    highs = [1 + band]
    for y, r in zip(ys, rows):
        colour = VERDICT_COLOURS.get(r.verdict, "#7f8c8d")
        label = r.verdict if r.verdict not in seen else None
        seen.add(r.verdict)
        lo, hi = r.ci_low, r.ci_high
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color=colour, linewidth=1.6)
            lows.append(lo)
            highs.append(hi)
        ax.plot([r.ratio], [y], "o", color=colour, markersize=4.5,
                label=label)
        lows.append(r.ratio)
        highs.append(r.ratio)
    ax.set_yticks(ys, [r.label for r in rows], fontsize=8)
    lo, hi = min(lows), max(highs)
    if hi / lo > 3:
        ax.set_xlim(lo / 1.1, hi * 1.1)
        _log(ax, "x")
    else:
        pad = (hi - lo) * 0.05
        ax.set_xlim(lo - pad, hi + pad)
    return _forest_frame(fig, ax, len(rows), title,
                         "candidate / base (ratio of medians, 95% CI); "
                         "right of 1 = slower")


def _forest_frame(fig: Any, ax: Any, n: int, title: str, xlabel: str
                  ) -> str:
    """What both A/B plots share: n rows, the axis' label, the title with
    the legend under it."""
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left", fontsize=10, pad=16)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.99), ncol=5,
              borderaxespad=0.2)
    return _svg(fig)


def _signed_number(v: float, _pos: object = None) -> str:
    """Tick labels of a symmetric log axis: -1000, -1, 0, 1, 1000."""
    if v == 0:
        return "0"
    return ("-" if v < 0 else "+") + _plain_number(abs(v))


def insn_forest(rows: Sequence[InsnRow], title: str) -> str:
    """The A/B plot of exact rows: the change in instructions per
    operation as a dot, the row's own margin (instructions) as its grey
    band; linear within +-1 instruction, logarithmic beyond, so that one
    instruction and a thousand read on one axis."""
    height = 1.1 + 0.2 * len(rows)
    fig, ax = _new(7.2, height)
    ys = list(range(len(rows)))[::-1]
    seen = set()
    for y, r in zip(ys, rows):
        ax.fill_betweenx([y - 0.38, y + 0.38], -r.margin, r.margin,
                         color="#d5dbdb", alpha=0.8, linewidth=0,
                         label="the row's margin" if y == ys[0] else None)
        colour = VERDICT_COLOURS.get(r.verdict, "#7f8c8d")
        label = r.verdict if r.verdict not in seen else None
        seen.add(r.verdict)
        ax.plot([r.delta], [y], "o", color=colour, markersize=4.5,
                label=label)
    ax.axvline(0.0, color="#555", linewidth=0.8)
    ax.set_xscale("symlog", linthresh=1.0)
    reach = max([2.0] + [abs(r.delta) * 1.5 for r in rows] +
                [r.margin * 1.2 for r in rows])
    ax.set_xlim(-reach, reach)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(_signed_number))
    ax.set_yticks(ys, [r.label for r in rows], fontsize=8)
    return _forest_frame(fig, ax, len(rows), title,
                         "candidate - base, instructions per operation "
                         "(log beyond \u00b11); right of 0 = slower")
