# SPDX-License-Identifier: GPL-2.0
"""The table of a patch series measured by kbench series (kbtools.series):
each row of each commit judged by kbtools.exact against the commit
before it (the step) and against the base (the running total), with the
class the base's own boots gave the row (kbtools.calibration); the
check that the steps of exact rows add up to the total; the text, the
72-column summary, the JSON records and the page.

    t = series_table.table(points, calibration)
    series_table.text(t, settings), summary(), to_json(), page()
"""

import html
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from kbtools import calibration, exact, stats, where

# The check's tolerance: the figures are shown to a thousandth of an
# instruction (one instruction in a batch of 1000 calls).
ROUNDING_INSN = 0.0005


@dataclass
class Point:
    """One commit of the series: n (0 the base), its state (measured,
    'does not build', 'does not boot') and its figures by position."""
    n: int
    commit: str
    subject: str
    status: str
    figures: Dict[str, List[float]] = field(default_factory=dict)


@dataclass
class Cell:
    """A row at a commit: its figure, step (against the last commit
    measured before it) and total (against the base), each a median of
    paired differences, with exact's verdicts."""
    value: float
    step: Optional[float]
    total: Optional[float]
    step_verdict: str
    total_verdict: str
    margin: Optional[float]
    prev: int = 0


def paired_delta(before: Sequence[float], after: Sequence[float]) -> float:
    """The median of the differences repetition by repetition (of their
    medians when the two ran different numbers)."""
    if len(before) == len(after) and before:
        return stats.median([a - b for b, a in zip(before, after)])
    return stats.median(after) - stats.median(before)


@dataclass
class Table:
    points: List[Point]
    cal: calibration.Calibration
    rows: List[str]                                 # every row, in order
    cells: Dict[Tuple[int, str], Cell]

    def known(self, row: str) -> Optional[exact.Known]:
        return self.cal.rows.get(row)

    def cls(self, row: str) -> str:
        k = self.known(row)
        return k.cls if k else "uncalibrated"

    def moved(self) -> List[str]:
        """The rows some step or the total moved by more than the
        margin."""
        return [r for r in self.rows if any(
            c.step_verdict in ("slower", "faster") or
            c.total_verdict in ("slower", "faster")
            for (n, row), c in self.cells.items() if row == r)]

    def measured(self) -> List[Point]:
        return [p for p in self.points if p.status == "measured"]

    def tip(self, row: str) -> Optional[Cell]:
        for p in reversed(self.measured()):
            if (p.n, row) in self.cells:
                return self.cells[(p.n, row)]
        return None


def table(pts: List[Point], cal: calibration.Calibration) -> Table:
    """The table of the series' commits (the base first)."""
    base = pts[0]
    rows = sorted(base.figures)
    cells: Dict[Tuple[int, str], Cell] = {}
    for row in rows:
        known = cal.rows.get(row)
        prev = base
        cells[(0, row)] = Cell(stats.median(base.figures[row]), None, None,
                               "base", "base", None)
        for p in pts[1:]:
            if row not in p.figures:
                continue
            vb, vp, vc = base.figures[row], prev.figures[row], p.figures[row]
            step = exact.decide(vp, vc, known)
            total = exact.decide(vb, vc, known)
            cells[(p.n, row)] = Cell(stats.median(vc), paired_delta(vp, vc),
                                     paired_delta(vb, vc), step.verdict,
                                     total.verdict, step.margin, prev.n)
            prev = p
    return Table(pts, cal, rows, cells)


def signed(v: Optional[float]) -> str:
    """A step or total in instructions, to a hundredth: an exact row's
    figure moves by a thousandth from boot to boot (one instruction in a
    batch of 1000 calls), which no step of a whole instruction shows."""
    if v is None:
        return "-"
    text = f"{v:+,.2f}"
    return "+0.00" if text == "-0.00" else text


@dataclass(frozen=True)
class Check:
    """Do a row's steps add up to its total (the tip against the
    base)?"""
    row: str
    steps: List[float]
    total: float
    adds_up: bool

    @property
    def residual(self) -> float:
        return sum(self.steps) - self.total


def checks(t: Table) -> List[Check]:
    """The check of every exact row: the sum of its steps against the
    tip's total, each a median of paired differences (medians do not
    add up unless the repetitions agree), within half a thousandth of
    an instruction (the figures shown)."""
    out = []
    for row in t.rows:
        if t.cls(row) != "exact":
            continue
        steps = [c.step for (n, r), c in sorted(t.cells.items())
                 if r == row and c.step is not None]
        tip = t.tip(row)
        if tip is None or tip.total is None or not steps:
            continue
        out.append(Check(row, steps, tip.total,
                         abs(sum(steps) - tip.total) < ROUNDING_INSN))
    return out


def short(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def row_name(row: str, t: Table) -> str:
    """TEST:ROW, or ROW alone when one test is measured."""
    tests = {r.split(":")[0] for r in t.rows}
    return row.split(":", 1)[1] if len(tests) == 1 else row


def cell_text(t: Table, n: int, row: str, p: Point) -> str:
    if p.status != "measured":
        return "-"
    c = t.cells.get((n, row))
    if c is None:
        return "-"
    if n == 0:
        return exact.fmt_insn(c.value)
    mark = {"slower": "", "faster": "", "same": " =", "pending": " ?"}
    return f"{signed(c.step)} {signed(c.total)}{mark.get(c.step_verdict, '')}"


def text(t: Table, st: Dict[str, Any]) -> str:
    """The table of commits by the rows that moved, and what is said
    under it."""
    moved = t.moved()
    n_commits = len(st["commits"])
    lines = [f"series {st['range']}: {n_commits} commits on "
             f"{st['base'][:12]}",
             f"base: {calibration.describe(t.cal)}",
             "instructions per operation: each cell the step (against the "
             "commit before) and",
             "the running total (against the base); '=' within the row's "
             "margin, '?' no",
             "calibration of the row", ""]
    widths = [max(14, len(row_name(r, t)), *(len(cell_text(t, p.n, r, p))
                                             for p in t.points))
              for r in moved]
    # The subject takes what the rows leave of 79 columns (24 at least).
    subj_w = max(24, min(34, 79 - 19 - sum(w + 2 for w in widths)))
    head = f"{'#':>3}  {'commit':<12}  {'subject':<{subj_w}}"
    lines.append(head + "".join(f"  {row_name(r, t):>{w}}"
                                for r, w in zip(moved, widths)))
    lines.append(" " * len(head) + "".join(
        f"  {class_text(t, r):>{w}}" for r, w in zip(moved, widths)))
    for p in t.points:
        line = f"{p.n:>3}  {p.commit[:12]:<12}  {short(p.subject, subj_w):<{subj_w}}"
        if p.status != "measured":
            lines.append(f"{line}  {p.status}")
            continue
        lines.append(line + "".join(f"  {cell_text(t, p.n, r, p):>{w}}"
                                    for r, w in zip(moved, widths)))
    if not moved:
        lines.append("no row moved beyond its margin")
    lines.append("")
    lines += check_lines(t)
    lines += noisy_lines(t)
    still = [row_name(r, t) for r in t.rows if r not in moved]
    if still:
        lines.append(wrap_list("unchanged through the series: ", still))
    return "\n".join(lines) + "\n"


def class_text(t: Table, row: str) -> str:
    """The row's class and margin: 'exact +-0.500'."""
    k = t.known(row)
    return f"{k.cls} +-{exact.fmt_insn(k.margin())}" if k else "uncalibrated"


def wrap_list(head: str, items: Sequence[str], width: int = 79) -> str:
    return "\n".join(textwrap.wrap(head + ", ".join(items), width,
                                   subsequent_indent="  "))


def steps_text(ch: Check) -> str:
    """A row's steps: 'steps +1.00 +0.00 -1.00', or of a long series
    those that show, by commit ('steps 1: +1.00, 13: -1.00, the other
    18 +0.00')."""
    if len(ch.steps) <= 8:
        return "steps " + " ".join(signed(v) for v in ch.steps)
    shown = [(n, v) for n, v in enumerate(ch.steps, 1)
             if signed(v) != "+0.00"]
    rest = len(ch.steps) - len(shown)
    parts = [f"{n}: {signed(v)}" for n, v in shown]
    if rest:
        parts.append(f"the other {rest} +0.00")
    return "steps " + ", ".join(parts)


def check_lines(t: Table) -> List[str]:
    """The check of each exact row that moved, and of all of them."""
    lines = []
    moved = t.moved()
    all_checks = checks(t)
    for ch in all_checks:
        if ch.row not in moved and ch.adds_up:
            continue
        say = "they add up" if ch.adds_up else \
            f"they DO NOT add up (off by {ch.residual:+.4f})"
        lines.append(wrap_list(
            f"{row_name(ch.row, t)} (exact): ",
            [f"{steps_text(ch)} = {signed(sum(ch.steps))}; tip - base "
             f"{signed(ch.total)}: {say}"]))
    bad = [row_name(ch.row, t) for ch in all_checks if not ch.adds_up]
    n = len(all_checks)
    if bad:
        lines.append(f"checked: the steps of {len(bad)} of {n} exact rows "
                     f"do not add up to the total ({', '.join(bad)}): "
                     f"their repetitions disagree")
    elif n:
        lines.append(f"checked: on all {n} exact rows the steps add up to "
                     f"the total (within {ROUNDING_INSN} insn)")
    return lines


def noisy_lines(t: Table) -> List[str]:
    """What a noisy or uncalibrated row would need for a verdict."""
    need = stats.min_reps()
    lines = []
    for row in t.rows:
        k = t.known(row)
        if k is not None and k.cls != "noisy":
            continue
        if k is None:
            lines.append(f"{row_name(row, t)}: no calibration of the base "
                         f"has it: a verdict needs {need} boots per side "
                         f"(kbench run --kernel A --vs-kernel B --repeat "
                         f"{need})")
            continue
        lines.append(f"{row_name(row, t)} (noisy, spread "
                     f"{k.spread_pct:.2g}% over {k.boots} boots of the base):"
                     f" a step under {exact.fmt_insn(k.margin())} insn reads "
                     f"same; less needs {need} boots per side (kbench run "
                     f"--kernel A --vs-kernel B --repeat {need}), judged over"
                     f" boots")
    return lines


def summary(t: Table, st: Dict[str, Any], width: int = 72,
            moved: Sequence[Mapping[str, Any]] = ()) -> str:
    """The email-ready summary: one line per commit that moved a row (at
    most width columns), under it the functions of that step when
    kbench series --where profiled it (moved: its differences), then the
    series' total per row."""
    rows = t.moved()
    n_commits = len(st["commits"])
    lines = [short(f"Instructions per operation under QEMU icount, against "
                   f"{st['base'][:12]}:", width)]
    for p in t.points[1:]:
        if p.status != "measured":
            lines.append(short(f"{p.n}/{n_commits} {p.subject}: "
                               f"{p.status}", width))
            continue
        for row in rows:
            c = t.cells.get((p.n, row))
            if c is None or c.step_verdict not in ("slower", "faster"):
                continue
            before = t.cells[(c.prev, row)].value
            what = (f": {signed(c.step)} insn on {row_name(row, t)} "
                    f"({signed_pct(c.step, before)})")
            head = f"{p.n}/{n_commits} "
            room = width - len(head) - len(what)
            lines.append(head + short(p.subject, max(room, 8)) + what)
            lines += [where_line(d, width) for d in moved
                      if d.get("n") == p.n and d.get("row") == row]
    totals = []
    for row in rows:
        tip = t.tip(row)
        if tip is not None and tip.total is not None:
            totals.append(f"{row_name(row, t)} {signed(tip.total)} insn "
                          f"({signed_pct(tip.total, t.cells[(0, row)].value)}"
                          f")")
    if totals:
        lines.append(wrap_list("Series: ", totals, width))
    else:
        lines.append("Series: no row moved beyond its margin.")
    if all(ch.adds_up for ch in checks(t)) and checks(t):
        lines.append("On every exact row the steps add up to the total.")
    if moved:
        lines += textwrap.wrap(f"Functions ('in') counted by "
                               f"{where.method_names(moved)}.", width)
    return "\n".join(lines) + "\n"


def where_line(doc: Mapping[str, Any], width: int) -> str:
    """A step's functions in the summary (kbench where's difference):
    '    in __do_sys_getppid +1.000', the largest first."""
    chs = doc["functions"]
    if not chs:
        return short("    in no function on the row's path (kbench where)",
                     width)
    text = ", ".join(f"{ch['name']} {ch['delta']:+.3f}" for ch in chs[:3])
    more = f", {len(chs) - 3} more" if len(chs) > 3 else ""
    return short(f"    in {text}{more}", width)


def signed_pct(delta: Optional[float], base: float) -> str:
    if delta is None or not base:
        return "-"
    return f"{delta / base * 100:+.2f}%"


def to_json(t: Table, st: Dict[str, Any]) -> Dict[str, Any]:
    records = []
    for p in t.points:
        for row in t.rows:
            rec: Dict[str, Any] = {"n": p.n, "commit": p.commit,
                                   "subject": p.subject, "status": p.status,
                                   "test": row.split(":")[0],
                                   "row": row.split(":", 1)[1],
                                   "class": t.cls(row)}
            c = t.cells.get((p.n, row))
            if c is not None:
                rec.update(value_insn=round(c.value, 4),
                           step_insn=None if c.step is None
                           else round(c.step, 4),
                           total_insn=None if c.total is None
                           else round(c.total, 4),
                           step_verdict=c.step_verdict,
                           total_verdict=c.total_verdict,
                           margin_insn=None if c.margin is None
                           else round(c.margin, 4))
            records.append(rec)
    return {"schema": "kbench-series/1", "tree": st["tree"],
            "range": st["range"], "base": st["base"], "tip": st["tip"],
            "unit": "instructions per operation (QEMU icount)",
            "calibration": t.cal.to_json(), "records": records,
            "checks": [{"row": ch.row,
                        "steps_insn": [round(v, 4) for v in ch.steps],
                        "total_insn": round(ch.total, 4),
                        "adds_up": ch.adds_up}
                       for ch in checks(t)]}


def heat(delta: Optional[float], verdict: str) -> str:
    """A cell's colour: red slower, blue faster, the stronger the more
    instructions (log scale), white within the margin."""
    if delta is None or verdict not in ("slower", "faster"):
        return "#ffffff"
    strength = min(1.0, 0.25 + math.log10(1 + abs(delta)) / 3)
    fade = int(255 * (1 - strength))
    return f"#ff{fade:02x}{fade:02x}" if delta > 0 else \
        f"#{fade:02x}{fade:02x}ff"


A_B_TEXT = ("A cell links to its commit's full A/B page: the commit "
            "against the one before it, judged by the base's calibration.")


def page(t: Table, st: Dict[str, Any],
         links: Optional[Mapping[int, str]] = None,
         where_html: str = "") -> str:
    """The HTML page: a commit-by-row map of the steps of the rows that
    moved (instructions per operation, exact's verdicts), the series'
    total under it, the checks and the rows that did not move. links:
    commit n -> the address of its A/B page, that its cells link to;
    where_html: the functions of the steps that moved (kbtools.report's
    where_html of kbench series --where's differences), at the end."""
    links = links or {}
    e = html.escape
    rows = t.moved()
    head = "".join(f"<th>{e(row_name(r, t))}<br><small>{e(t.cls(r))}"
                   f"</small></th>" for r in rows)
    body = []
    for p in t.points:
        tds = []
        for r in rows:
            c = t.cells.get((p.n, r))
            if p.status != "measured" or c is None:
                tds.append("<td>-</td>")
            elif p.n == 0:
                tds.append(f"<td>{e(exact.fmt_insn(c.value))}</td>")
            else:
                step = e(signed(c.step))
                if p.n in links:
                    step = f'<a href="{e(links[p.n])}">{step}</a>'
                tds.append(f"<td style=\"background:"
                           f"{heat(c.step, c.step_verdict)}\" title=\"total "
                           f"{e(signed(c.total))} insn, {e(c.step_verdict)}"
                           f"\">{step}</td>")
        what = "" if p.status == "measured" else f" <b>{e(p.status)}</b>"
        body.append(f"<tr><th>{p.n}</th><td title=\"{e(p.subject)}\">"
                    f"<code>{p.commit[:12]}</code> "
                    f"{e(short(p.subject, 44))}{what}</td>{''.join(tds)}"
                    f"</tr>")
    totals = "".join(f"<th>{e(signed(c.total))}</th>" if c and c.total
                     is not None else "<th>-</th>"
                     for c in (t.tip(r) for r in rows))
    still = [row_name(r, t) for r in t.rows if r not in rows]
    notes = check_lines(t) + noisy_lines(t)
    if still:
        notes.append("unchanged through the series: " + ", ".join(still))
    if not rows:
        notes.insert(0, "no row moved beyond its margin")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>kbench series {e(st['range'])}</title>
<style>
body {{ font-family: sans-serif; max-width: 1240px; margin: 1em auto;
       padding: 0 1em; }}
table {{ border-collapse: collapse; font-size: 13px; }}
th, td {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
td:nth-child(2) {{ text-align: left; white-space: nowrap; }}
pre {{ white-space: pre-wrap; }}
td a {{ color: inherit; }}
table.where td {{ text-align: right; }}
table.where td.l, table.where th.l {{ text-align: left; }}
p.note {{ color: #555; font-size: 0.85em; }}
.v-slower {{ background: #f5b7b1; }} .v-faster {{ background: #aed6f1; }}
</style></head><body>
<h1>Series {e(st['range'])}</h1>
<p>Exact mode (QEMU's instruction counter): each figure is guest
instructions per operation, not a time. Each cell is the commit's step
against the commit before it, red slower and blue faster beyond the
row's margin (from the base's own boots), white within it; its title
holds the running total. The base's line holds its figures, the last
line the series' total. The base's {e(calibration.describe(t.cal))}.
{A_B_TEXT if links else ""}</p>
<table>
<tr><th>#</th><th>commit</th>{head}</tr>
{chr(10).join(body)}
<tr><th></th><th>tip - base</th>{totals}</tr>
</table>
<pre>{e(chr(10).join(notes))}</pre>
{where_html}
</body></html>
"""
