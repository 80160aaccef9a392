# SPDX-License-Identifier: GPL-2.0
"""Per-row verdicts of one or more candidate runs against a base run.

Every row of every candidate gets an Entry (see compare()). A verdict needs
repetitions on both sides: the figure compared is the row's `stat`
(median by default) of each repetition, so n is the number of
repetitions, never the number of samples within one run.

Verdicts:
  slower / faster  the change is significant after Benjamini-Hochberg over
                   the row's family (adjusted p <= alpha), its 95%
                   interval excludes 1, and the ratio is beyond the
                   threshold
  same             not significant, or smaller than the threshold; the
                   row's mde_pct says how large a change would have been
                   flagged (80% of the time, alone among its family)
  no-verdict       too few repetitions for the test to reach alpha, or
                   for one changed row among its family to reach it
                   ("n=5 of 64 rows: needs 7")
  missing          the row is in one run only
  skipped          skipped or failed on a side, a check rather than a
                   figure, or a figure that is not a time

Runs under QEMU's instruction counter (machine.clock_mode "icount") are
counts of guest instructions: their rows are compared in instructions
per operation by kbtools.exact's rule (class exact, near or noisy),
one boot per side; only noisy rows take the statistical rule, over
boots. An icount side is never compared with a real-clock side.

The family that Benjamini-Hochberg corrects over is, by default, every
row of a candidate ("run": a verdict carries the false discovery rate
of the whole comparison); "program" corrects within each program, so
that a program's rows need no more repetitions than it alone would.
"""

import argparse
import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from enum import StrEnum
from typing import (Callable, Dict, List, Mapping, Optional, Sequence, Tuple,
                    TypeVar, Union)

from kbtools import calibration, cli, exact, results, stats, where
from kbtools.output import write_stdout
from kbtools.results import (INSN, ClockMode, Json, ResultError, Row, Run,
                             Status, Test, members)

TIME_UNITS = ("ns", "us", "ms", "s")


class Verdict(StrEnum):
    """A row's verdict (PENDING only while compare() works on it)."""
    SLOWER = "slower"
    FASTER = "faster"
    SAME = "same"
    NO_VERDICT = "no-verdict"
    MISSING = "missing"
    SKIPPED = "skipped"
    PENDING = "pending"


VERDICTS: Tuple[Verdict, ...] = tuple(v for v in Verdict
                                      if v != Verdict.PENDING)
# The keys of a row of the JSON output, in its order.
KEYS = ("candidate", "test", "name", "unit", "verdict", "ratio", "ci_low",
        "ci_high", "p_value", "p_adjusted", "cv_base", "cv_candidate",
        "n_base", "n_candidate", "base", "value", "note", "clock", "class",
        "delta", "spread_base", "spread_candidate", "log_sd", "mde_pct",
        "family_rows", "margin_insn", "figure")
DEFAULT_THRESHOLD_PCT = 2.0
FAMILIES = ("run", "program")
# The power at which a row's smallest detectable change is stated.
MDE_POWER = 0.8
# The mde is computed from this upper confidence bound of the row's
# spread, not from the spread its few repetitions happened to show (an
# underestimate states changes too small to be flagged that often):
# simulated, a change of the stated size is then flagged 78-82% of the
# time at n = 5, 7 and 10 on quiet and noisy rows, alone and among 64
# (kbtools.power.mde_check, bench/power.py --mde, 400 trials a cell),
# where the point estimate gave 68-74% on noisy rows. 60% is the bound
# that check found calibrated, not a convention.
MDE_SPREAD_CONFIDENCE = 0.6
# A row with a figure of 0 or below has no ratio or spread to judge by.
NONPOSITIVE = "a figure of 0 or below"


@dataclass
class Entry:
    """The comparison of one row of one candidate with the base: a row
    of the JSON output (to_json(): the fields in their order, the keys
    of KEYS). row_class, "class", is the exact rule's class of an icount
    row."""
    candidate: Optional[str] = None
    test: Optional[str] = None
    name: Optional[str] = None
    unit: Optional[str] = None
    verdict: Verdict = Verdict.PENDING
    ratio: Optional[float] = None
    ci_low: Optional[float] = None
    ci_high: Optional[float] = None
    p_value: Optional[float] = None
    p_adjusted: Optional[float] = None
    cv_base: Optional[float] = None
    cv_candidate: Optional[float] = None
    n_base: int = 0
    n_candidate: int = 0
    base: Optional[float] = None
    value: Optional[float] = None
    note: Optional[str] = None
    clock: ClockMode = ClockMode.REAL
    row_class: Optional[str] = field(default=None,
                                     metadata={"json": "class"})
    delta: Optional[float] = None
    spread_base: Optional[float] = None
    spread_candidate: Optional[float] = None
    log_sd: Optional[float] = None
    mde_pct: Optional[float] = None
    family_rows: Optional[int] = None
    # The exact rule's margin (instructions) when it decided the row.
    margin: Optional[float] = field(default=None,
                                    metadata={"json": "margin_insn"})
    # The figure an icount row was judged by: "median", or "mode" where
    # both sides' most common value was steady (kbtools.exact.figure_of).
    figure: Optional[str] = None

    def to_json(self) -> Json:
        return members(self)


def _names(first: Mapping[str, object], second: Mapping[str, object]
           ) -> List[str]:
    """Keys of first in order, then those only in second."""
    return list(first) + [k for k in second if k not in first]


def _skip_note(brow: Row, crow: Row) -> str:
    parts = []
    for side, row in (("baseline", brow), ("candidate", crow)):
        text = f"{side} {row.status}"
        if row.status != Status.OK and row.reason:
            text += f" ({row.reason})"
        parts.append(text)
    return ", ".join(parts)


def _entry(cand: Run, test: str, name: str, unit: Optional[str],
           verdict: Verdict, note: Optional[str] = None,
           clock: ClockMode = ClockMode.REAL) -> Entry:
    return Entry(candidate=cand.label, test=test, name=name, unit=unit,
                 verdict=verdict, note=note, clock=clock)


CLOCK_TEXT = {ClockMode.ICOUNT: "QEMU's instruction counter (--icount)",
              ClockMode.REAL: "a real clock"}


def _check_clocks(cand: Run, test: str, bt: Test, ct: Test) -> None:
    """An icount side and a real-clock side measure different things, and
    so do exact guests set up differently."""
    modes = (bt.clock_mode(), ct.clock_mode())
    if modes[0] != modes[1]:
        raise ResultError(f"{cand.path or cand.label}: {test}: the baseline "
                          f"ran on {CLOCK_TEXT[modes[0]]}, the candidate on "
                          f"{CLOCK_TEXT[modes[1]]}: instructions cannot be "
                          f"compared with time; run both sides the same "
                          f"way")
    settings = (bt.header.machine.icount_settings,
                ct.header.machine.icount_settings)
    if modes[0] == ClockMode.ICOUNT and settings[0] != settings[1]:
        raise ResultError(f"{cand.path or cand.label}: {test}: the "
                          f"baseline's exact guest ran with '{settings[0]}', "
                          f"the candidate's with '{settings[1]}': both "
                          f"sides must boot the same way")


def _compare_row(cand: Run, test: str, brow: Row, crow: Row, stat: str,
                 alpha: float, need: int, bt: Test, ct: Test,
                 cal: Mapping[str, exact.Known]) -> Entry:
    """The entry of one row present on both sides, before the
    multiple-testing step (verdict PENDING when it is testable)."""
    name = brow.name
    if brow.unit != crow.unit and brow.unit and crow.unit:
        raise ResultError(f"{cand.path or cand.label}: {test}: row "
                          f"'{name}': unit '{brow.unit}' in the baseline, "
                          f"'{crow.unit}' in the candidate")
    unit = brow.unit or crow.unit
    clock = bt.clock_mode()
    if brow.status != Status.OK or crow.status != Status.OK:
        return _entry(cand, test, name, unit, Verdict.SKIPPED,
                      _skip_note(brow, crow), clock)
    if unit is None:
        return _entry(cand, test, name, unit, Verdict.SKIPPED,
                      "a check, not a figure", clock)
    if unit not in TIME_UNITS:
        return _entry(cand, test, name, unit, Verdict.SKIPPED,
                      f"'{unit}' is not a time", clock)
    vb, vc = brow.values(stat), crow.values(stat)
    if not vb or not vc:
        return _entry(cand, test, name, unit, Verdict.SKIPPED,
                      f"no '{stat}' figure", clock)
    if clock == ClockMode.ICOUNT:
        return _compare_icount(_entry(cand, test, name, INSN,
                                      Verdict.PENDING, clock=clock),
                               brow, crow, stat, alpha, need, (bt, ct),
                               cal)
    return _test_values(_entry(cand, test, name, unit, Verdict.PENDING),
                        vb, vc, alpha, need)


def by_position(boots: Sequence[Sequence[float]]) -> List[float]:
    """A side's figure of each repetition of a boot, in run order: the
    median over its boots of the repetitions at that place."""
    n = min((len(b) for b in boots), default=0)
    return [stats.median([b[i] for b in boots]) for i in range(n)]


def same_boots(brow: Row, crow: Row) -> bool:
    """Both sides measured in the same boots (--vs-prefix)."""
    return None not in brow.boots and None not in crow.boots and \
        bool(brow.boots) and set(brow.boots) == set(crow.boots)


def _compare_icount(e: Entry, brow: Row, crow: Row, stat: str, alpha: float,
                    need: int, sides: Tuple[Test, Test],
                    cal: Mapping[str, exact.Known]) -> Entry:
    """Fill entry e of an icount row: kbtools.exact's class and verdict
    from the repetitions, in instructions per operation, against the
    calibration of the base's kernel (cal, through exact.known); a row
    it lacks is left PENDING for the statistical rule over its boots."""
    unit = brow.unit or crow.unit
    scales = (sides[0].insn_per_unit(unit) or 1.0,
              sides[1].insn_per_unit(unit) or 1.0)
    figure, known = exact.judged_figure(
        [brow, crow], [t.header for t in sides], sides[0].name, brow.name,
        cal, stat, same_boots(brow, crow))
    e.figure = figure
    bb = [[v * scales[0] for v in boot] for boot in brow.boot_reps(figure)]
    cb = [[v * scales[1] for v in boot] for boot in crow.boot_reps(figure)]
    vb = [v for boot in bb for v in boot]
    vc = [v for boot in cb for v in boot]
    mb, mc = stats.median(vb), stats.median(vc)
    e.n_base, e.n_candidate, e.base, e.value = len(vb), len(vc), mb, mc
    e.delta = mc - mb
    e.ratio = mc / mb if mb > 0 else None
    e.cv_base, e.cv_candidate = stats.cv_pct(vb), stats.cv_pct(vc)
    e.spread_base, e.spread_candidate = exact.spread(vb), exact.spread(vc)
    if e.ratio is None:
        e.verdict, e.note = Verdict.SKIPPED, "the base's figure is not above 0"
        return e
    if same_boots(brow, crow):
        why = exact.too_few(vb, vc)
        if why:
            e.verdict, e.note = Verdict.NO_VERDICT, why
            return e
        key = f"{sides[0].name}:{brow.name}"
        d = exact.within_boot(
            vb, vc, exact.setup_of(sides[0].header),
            exact.mode_key(key) if figure == exact.MODE else key,
            settings=sides[0].header.machine.icount_settings,
            kernel=exact.kernel_of(sides[0].header))
    else:
        d = exact.decide(by_position(bb), by_position(cb), known)
    # Uncalibrated, a row has no class: its repetitions alone cannot
    # show that it repeats across boots.
    e.row_class = d.cls if known is not None or same_boots(brow, crow) \
        else None
    e.note, e.margin = d.note, d.margin
    e.verdict = Verdict(d.verdict)
    if e.verdict != Verdict.PENDING:
        return e
    # Its boots are the replicates, not the repetitions in them.
    _test_values(e, [stats.median(b) for b in bb],
                 [stats.median(b) for b in cb], alpha, need)
    e.note = (f"noisy under icount (its repetitions spread "
              f"{fmt_pct(exact.rel_spread_pct(vb))} and "
              f"{fmt_pct(exact.rel_spread_pct(vc))}): judged over boots"
              if known is not None or same_boots(brow, crow) else
              "no calibration of this kernel: judged over boots")
    return e


def fmt_pct(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2g}%"


def _test_values(e: Entry, vb: Sequence[float], vc: Sequence[float],
                 alpha: float, need: int) -> Entry:
    """Fill entry e from the two sides' per-repetition figures; its
    verdict stays PENDING when it is testable."""
    mb, mc = stats.median(vb), stats.median(vc)
    e.n_base, e.n_candidate, e.base, e.value = len(vb), len(vc), mb, mc
    e.ratio = mc / mb if mb > 0 else None
    e.cv_base, e.cv_candidate = stats.cv_pct(vb), stats.cv_pct(vc)
    e.log_sd = stats.log_spread(vb, vc)
    if min(list(vb) + list(vc)) <= 0:
        e.verdict = Verdict.NO_VERDICT
        e.note = (f"{NONPOSITIVE} ({fmt_num(min(vb))} in the base, "
                  f"{fmt_num(min(vc))} in the candidate): no ratio or "
                  f"spread to judge by")
        return e
    if len(vb) >= 2 and len(vc) >= 2:
        e.p_value = stats.mann_whitney(vb, vc).p
        ci = stats.ratio_ci(vb, vc, alpha)
        if ci:
            e.ci_low, e.ci_high = ci
    if e.ratio is None:
        e.verdict = Verdict.SKIPPED
        e.note = "the base's figure is not above 0"
    elif min(len(vb), len(vc)) < need:
        e.verdict = Verdict.NO_VERDICT
        e.note = (f"{len(vb)} vs {len(vc)} repetitions: a verdict needs "
                  f"at least {need} per side")
    return e


def _decide(e: Entry, threshold_pct: float, alpha: float) -> Verdict:
    """slower / faster / same of a tested entry (adjusted p known)."""
    up = 1 + threshold_pct / 100
    if e.p_adjusted is None or e.p_adjusted > alpha or e.ci_low is None or \
            e.ci_high is None or e.ratio is None:
        return Verdict.SAME
    if e.ratio > up and e.ci_low > 1:
        return Verdict.SLOWER
    if e.ratio < 1 / up and e.ci_high < 1:
        return Verdict.FASTER
    if e.ci_low > 1 or e.ci_high < 1:
        e.note = f"significant but within the {threshold_pct:g}% threshold"
    return Verdict.SAME


def row_verdict(vb: Sequence[float], vc: Sequence[float],
                threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                alpha: float = 0.05) -> Entry:
    """The entry of one row tested alone, from the base's and the
    candidate's per-repetition figures: no other row to adjust for, so
    q = p."""
    e = _test_values(Entry(), vb, vc, alpha, stats.min_reps(alpha))
    if e.verdict == Verdict.PENDING:
        e.p_adjusted = e.p_value
        e.verdict = _decide(e, threshold_pct, alpha)
    return e


def _families(entries: List[Entry], family: str) -> List[List[Entry]]:
    """The entries that Benjamini-Hochberg corrects over together."""
    if family == "run":
        return [entries]
    groups: Dict[Optional[str], List[Entry]] = {}
    for e in entries:
        groups.setdefault(e.test, []).append(e)
    return list(groups.values())


def _power(e: Entry, rows: int, threshold_pct: float, alpha: float) -> None:
    """The smallest change the design flags for this row (mde_pct), and
    no-verdict for a row it cannot flag at all, alone among `rows`."""
    nb, nc = e.n_base, e.n_candidate
    e.family_rows = rows
    single = alpha / rows
    if (e.note or "").startswith(NONPOSITIVE):
        return
    if stats.min_p(nb, nc) > single:
        if e.verdict in (Verdict.SAME, Verdict.NO_VERDICT):
            e.verdict = Verdict.NO_VERDICT
            need = stats.design_reps(rows, alpha)
            if e.clock == ClockMode.ICOUNT:
                e.note = (f"{(e.note or '').split(':')[0]}: the "
                          f"statistical rule needs {need} boots per side, "
                          f"not {nb} vs {nc}")
            else:
                e.note = f"n={min(nb, nc)} of {rows} rows: needs {need}"
        return
    if e.log_sd is not None:
        # The whole rule: the U test at the row's share of the family's
        # level, the interval, the threshold; at an upper bound of the
        # spread.
        sigma = stats.spread_upper(e.log_sd, nb + nc - 2,
                                   MDE_SPREAD_CONFIDENCE)
        e.mde_pct = stats.rule_mde(nb, nc, sigma, threshold_pct, alpha,
                                   alpha, MDE_POWER, rows)


def design_note(entries: Sequence[Entry], alpha: float = 0.05) -> List[str]:
    """One line per candidate whose repetitions are below what one
    changed row among its family needs (empty when none is)."""
    out: List[str] = []
    for e in entries:
        rows = e.family_rows
        if rows is None or e.verdict != Verdict.NO_VERDICT or \
                not (e.note or "").startswith("n="):
            continue
        line = (f"{e.candidate}: {min(e.n_base, e.n_candidate)} "
                f"repetitions per side, but one changed row among {rows} "
                f"needs {stats.design_reps(rows, alpha)} to reach "
                f"q <= {alpha:g} (exact U: its smallest p is "
                f"{stats.min_p(e.n_base, e.n_candidate):.2g}, above "
                f"{alpha:g}/{rows})")
        if line not in out:
            out.append(line)
    return out


Side = TypeVar("Side")


def _one_side(base: Optional[Side], cand: Optional[Side]
              ) -> Tuple[str, Side]:
    """Which side alone has a test or a row ("baseline" or "candidate"),
    and what it has there."""
    if base is not None:
        return "baseline", base
    assert cand is not None, "on neither side"
    return "candidate", cand


def _missing(cand: Run, tname: str, rows: Dict[str, Row], where: str
             ) -> List[Entry]:
    """The entries of rows on one side only."""
    return [_entry(cand, tname, rname, row.unit, Verdict.MISSING, where)
            for rname, row in rows.items()]


def compare_one(base: Run, cand: Run,
                threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                stat: str = "median", alpha: float = 0.05,
                family: str = "run",
                cal: Optional[Mapping[str, exact.Known]] = None
                ) -> List[Entry]:
    """Entries of one candidate against base, in base order; cal: the
    calibration of the base's kernel (default: from the base's own
    boots, when it has two or more)."""
    need = stats.min_reps(alpha)
    if cal is None:
        cal = calibration.of_boots(base.tests, stat)
    common = set(base.tests) & set(cand.tests)
    if not common:
        raise ResultError(f"no test is in both {base.path or base.label} "
                          f"({', '.join(sorted(base.tests))}) and "
                          f"{cand.path or cand.label} "
                          f"({', '.join(sorted(cand.tests))})")
    out: List[Entry] = []
    for tname in _names(base.tests, cand.tests):
        bt, ct = base.tests.get(tname), cand.tests.get(tname)
        if bt is None or ct is None:
            where, test = _one_side(bt, ct)
            out += _missing(cand, tname, test.rows,
                            f"test only in the {where}")
            continue
        _check_clocks(cand, tname, bt, ct)
        for rname in _names(bt.rows, ct.rows):
            brow, crow = bt.rows.get(rname), ct.rows.get(rname)
            if brow is None or crow is None:
                where, row = _one_side(brow, crow)
                out += _missing(cand, tname, {rname: row},
                                f"only in the {where}")
                continue
            out.append(_compare_row(cand, tname, brow, crow, stat, alpha,
                                    need, bt, ct, cal))
    if family not in FAMILIES:
        raise ValueError(f"family '{family}' is not one of "
                         f"{', '.join(FAMILIES)}")
    # A row short of repetitions is still one of the rows compared.
    tested = [e for e in out if e.verdict == Verdict.PENDING or
              (e.verdict == Verdict.NO_VERDICT and e.n_base > 0)]
    for group in _families(tested, family):
        pending = [e for e in group if e.verdict == Verdict.PENDING]
        adjusted = stats.benjamini_hochberg([e.p_value for e in pending])
        for e, q in zip(pending, adjusted):
            e.p_adjusted = q
            e.verdict = _decide(e, threshold_pct, alpha)
        for e in group:
            _power(e, len(group), threshold_pct, alpha)
    return out


def compare(base: Run, candidates: Sequence[Run],
            threshold_pct: float = DEFAULT_THRESHOLD_PCT,
            stat: str = "median", alpha: float = 0.05,
            family: str = "run",
            cal: Optional[Mapping[str, exact.Known]] = None) -> List[Entry]:
    """One Entry per (candidate, test, row); cal as compare_one's."""
    out: List[Entry] = []
    if cal is None:
        cal = calibration.of_boots(base.tests, stat)
    for cand in candidates:
        out += compare_one(base, cand, threshold_pct, stat, alpha, family,
                           cal)
    return out


def fail_rows(entries: Sequence[Entry], fail_above_pct: float
              ) -> List[Entry]:
    """Entries that are significantly slower with the interval's lower
    bound above fail_above_pct %."""
    limit = 1 + fail_above_pct / 100
    return [e for e in entries if e.verdict == Verdict.SLOWER
            and e.ci_low is not None and e.ci_low > limit]


def too_few(entries: Sequence[Entry], alpha: float = 0.05) -> bool:
    """True when some row lacks a verdict for want of repetitions."""
    return any(e.verdict == Verdict.NO_VERDICT for e in entries)


def _guest(test: Test) -> Optional[str]:
    return test.header.machine.guest


def _where(guest: Optional[str]) -> str:
    return f"in a {guest} guest" if guest else "on the host"


def warnings(base: Run, candidates: Sequence[Run]) -> List[str]:
    """Differences of setup that make a comparison suspect."""
    out = []
    for cand in candidates:
        for tname in base.tests.keys() & cand.tests.keys():
            bg, cg = _guest(base.tests[tname]), _guest(cand.tests[tname])
            if bg != cg:
                out.append(f"{tname}: '{base.label}' ran {_where(bg)}, "
                           f"'{cand.label}' {_where(cg)}: compare only like "
                           f"with like")
                break
    out += [w for run in (base, *candidates) for w in fifo_not_applied(run)]
    return out


def fifo_not_applied(run: Run) -> List[str]:
    """A warning for each test of an exact run whose guest asked for its
    process creations at SCHED_FIFO 1 (a sched in its settings,
    policy.CREATION_SCHED) and some of whose rows say they ran without
    it (extra sched_fifo 0: the program was not allowed), for they ran
    at the program's own policy, which the other side, the calibration
    or the prior may not have."""
    if not exact.sched_of(run_settings(run) or ""):
        return []
    out = []
    for tname, test in run.tests.items():
        rows = sorted(row.name for row in test.rows.values()
                      if any(rep.extra and rep.extra.get("sched_fifo") == 0
                             for rep in row.reps))
        if rows:
            out.append(f"{tname}: '{run.label}' timed {', '.join(rows)} "
                       f"at the program's own policy, not at SCHED_FIFO 1 "
                       f"as its guest asked (sched_fifo=0: not allowed): "
                       f"compare only like with like")
    return out


# Output: text (aligned whatever the name length), email (<= 72 columns),
# json. Rows are grouped by test; every candidate is one column group.

EMAIL_WIDTH = 72


def fmt_num(v: Optional[float]) -> str:
    """Three significant figures, plain notation."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def fmt_p(p: Optional[float]) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.2g}"


def fmt_ratio(r: Optional[float]) -> str:
    return "-" if r is None else f"x{r:.3f}"


def fmt_ci(e: Entry) -> str:
    if e.ci_low is None or e.ci_high is None:
        return "-"
    return f"{e.ci_low:.3f}-{e.ci_high:.3f}"


def fmt_cv(cv: Optional[float]) -> str:
    return "-" if cv is None else f"{cv:.1f}%"


def fmt_mde(e: Entry) -> str:
    """The smallest change this design flags for the row ('-' where the
    exact rule decides, or the design cannot flag it at all)."""
    if is_exact(e):
        assert e.margin is not None
        return "1 insn" if e.margin < 1 else \
            f">{exact.fmt_insn(e.margin)} insn"
    return "-" if e.mde_pct is None else f"{e.mde_pct:.1f}%"


# A row of the tables: (test, row name).
RowKey = Tuple[Optional[str], Optional[str]]


def _index(entries: Sequence[Entry]
           ) -> Tuple[List[RowKey], Dict[RowKey, Dict[Optional[str], Entry]]]:
    """(test, name) in first-seen order, and entry by (candidate, test,
    name)."""
    order: List[RowKey] = []
    by: Dict[RowKey, Dict[Optional[str], Entry]] = {}
    for e in entries:
        key = (e.test, e.name)
        if key not in by:
            order.append(key)
            by[key] = {}
        by[key][e.candidate] = e
    return order, by


# A line of a table: its cells, or a section line printed as it is.
Line = Union[str, List[str]]


def _render(header: List[str], lines: Sequence[Line], aligns: List[str]
            ) -> List[str]:
    """Aligned table: columns separated by two spaces; 'l'/'r' aligns.
    Section lines (a str instead of a list) are printed as they are."""
    cells = [header] + [ln for ln in lines if not isinstance(ln, str)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    out = []
    for ln in [header, *lines]:
        if isinstance(ln, str):
            out.append(ln)
            continue
        parts = [c.ljust(w) if a == "l" else c.rjust(w)
                 for c, w, a in zip(ln, widths, aligns)]
        out.append("  ".join(parts).rstrip())
    return out


def is_exact(e: Entry) -> bool:
    """An icount row decided by kbtools.exact's margin."""
    return e.clock == ClockMode.ICOUNT and e.margin is not None


def _base_cells(e: Entry, full: bool) -> List[str]:
    """The base's figure, and in the full table its spread."""
    if e.base is None:
        figure = "-"
    elif e.unit == INSN:
        figure = f"{exact.fmt_insn(e.base)} {INSN}"
    else:
        figure = f"{fmt_num(e.base)} {e.unit}"
    return [figure, fmt_cv(e.cv_base)] if full else [figure]


def fmt_delta(e: Entry) -> str:
    """The change in instructions per operation: '+1.000 insn'."""
    if e.delta is None:
        return "-"
    sign = "+" if e.delta >= 0 else "-"
    return f"{sign}{exact.fmt_insn(abs(e.delta))} {INSN}"


def verdict_label(e: Entry) -> str:
    """The verdict, with its class for an icount row: 'slower (exact)'."""
    if e.clock == ClockMode.ICOUNT and e.row_class:
        return f"{e.verdict} ({e.row_class})"
    return e.verdict.value


def _cand_cells(e: Optional[Entry], full: bool) -> List[str]:
    if e is None:
        return ["-"] * (8 if full else 4)
    # An exact row has no interval: its change in instructions instead.
    cells = [fmt_ratio(e.ratio), fmt_delta(e) if is_exact(e)
             else fmt_ci(e)]
    if full:
        cells += [fmt_p(e.p_value), fmt_p(e.p_adjusted),
                  fmt_cv(e.cv_candidate)]
    cells += [fmt_mde(e), verdict_label(e)]
    if full:
        # The footer explains missing repetitions once for all rows.
        note = e.note if e.verdict != Verdict.NO_VERDICT else None
        cells.append(note or "")
    return cells


def _both_skipped(row: Dict[Optional[str], Entry]) -> bool:
    return all(e.verdict == Verdict.SKIPPED and e.base is None
               and "baseline skip" in (e.note or "")
               and "candidate skip" in (e.note or "")
               for e in row.values())


def _table(entries: Sequence[Entry], labels: Sequence[str], full: bool,
           name_width: Optional[int] = None
           ) -> Tuple[List[str], List[Line], List[str]]:
    """Header and lines of one table over the given candidate labels;
    rows skipped on every side are left out (JSON keeps them)."""
    order, by = _index([e for e in entries if e.candidate in labels])
    order = [k for k in order if not _both_skipped(by[k])]
    # The email table leaves the spreads out: it must fit 72 columns.
    header = ["row", "base", "cv"] if full else ["row", "base"]
    aligns = ["l", "r", "r"] if full else ["l", "r"]
    # An exact row shows its change in instructions where others show
    # their interval.
    change = "95% CI" if not any(is_exact(e) for e in entries) \
        else "CI/change"
    for i, label in enumerate(labels):
        tag = _tag(i, len(labels))
        if full:
            header += [f"{tag}ratio", change, "p", "q", "cv", "mde",
                       "verdict", "note"]
            aligns += ["r", "r", "r", "r", "r", "r", "l", "l"]
        else:
            header += [f"{tag}ratio", change, "mde", "verdict"]
            aligns += ["r", "r", "r", "l"]
    lines: List[Line] = []
    test = None
    for key in order:
        if key[0] != test:
            test = key[0]
            lines.append(f"{test}:")
        row = by[key]
        first = next(iter(row.values()))
        name = f"  {key[1]}"
        if name_width and len(name) > name_width:
            keep = name_width - 3
            name = name[:keep - keep // 2] + ".." + name[-(keep // 2) - 1:]
        cells = [name] + _base_cells(first, full)
        for label in labels:
            cells += _cand_cells(row.get(label), full)
        lines.append(cells)
    return header, lines, aligns


def _tag(i: int, n: int) -> str:
    return "" if n == 1 else f"{chr(ord('A') + i)}:"


def _describe(run: Run) -> str:
    tests = list(run.tests.values())
    if not tests:
        return run.label
    header = tests[0].header
    kernel = header.kernel.release or "?"
    guest = header.machine.guest
    reps = run.repetitions()
    where = f"{guest} guest" if guest else "host"
    if tests[0].clock_mode() == ClockMode.ICOUNT:
        where += ", icount: figures are guest instructions"
    return (f"{run.label} ({kernel}, {where}, {reps} "
            f"repetition{'s' if reps != 1 else ''})")


def _legend(base: Run, candidates: Sequence[Run]) -> List[str]:
    lines = [f"base: {_describe(base)}"]
    for i, c in enumerate(candidates):
        tag = _tag(i, len(candidates)) or "candidate:"
        lines.append(f"{tag} {_describe(c)}")
    return lines


def verdict_counts(entries: Sequence[Entry]) -> Dict[Verdict, int]:
    counts: Dict[Verdict, int] = {}
    for e in entries:
        counts[e.verdict] = counts.get(e.verdict, 0) + 1
    return counts


def _summary(entries: Sequence[Entry], candidates: Sequence[Run]
             ) -> List[str]:
    order, by = _index(entries)
    hidden = sum(1 for k in order if _both_skipped(by[k]))
    lines = []
    if hidden:
        lines.append(f"{hidden} rows skipped on every side are not shown "
                     f"(--format json lists them).")
    for i, c in enumerate(candidates):
        counts = verdict_counts([e for e in entries if e.candidate == c.label])
        text = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
        modes = sorted(f"{e.test}:{e.name}" for e in entries
                       if e.candidate == c.label and e.figure == exact.MODE)
        by_mode = f" ({len(modes)} judged by their most common value: " \
            f"{', '.join(modes)})" if modes else ""
        lines.append(f"{_tag(i, len(candidates)) or 'candidate:'} "
                     f"{c.label}: {text}{by_mode}")
    return lines


def _drift(entries: Sequence[Entry]) -> str:
    """Why the rows without a verdict have none: under icount a noisy row
    is judged over boots, and one boot per side is one sample each."""
    if any(e.clock == ClockMode.ICOUNT and e.verdict == Verdict.NO_VERDICT
           for e in entries):
        return ("One boot per side cannot tell a change of a noisy row from "
                "the drift between boots.")
    return ("Samples within one run cannot tell a change from the drift "
            "between runs.")


def honesty(entries: Sequence[Entry], alpha: float = 0.05) -> List[str]:
    """What to do when rows lack a verdict for want of repetitions."""
    if not too_few(entries, alpha):
        return []
    short = design_note(entries, alpha)
    return [
        "no-verdict: too few repetitions (or boots) for these rows to be "
        "flagged at all:",
    ] + [f"  {line}" for line in short] + [
        f"{_drift(entries)} These choose the repetitions from the design "
        f"(the rows compared, the family, alpha) and say how many:",
        "  ./run_all.sh --vs-prefix 'CMD' --json DIR",
        "  ./run_all.sh --kernel BASE --vs-kernel CAND --json DIR",
        "  ./run_all.sh --kernel BASE --vs-kernel CAND --icount --json DIR "
        "(exact rows: one boot each)",
    ]


FAMILY_TEXT = {"run": "each candidate's rows", "program": "each program's "
               "rows of a candidate"}


def _method(stat: str, threshold_pct: float, alpha: float,
            entries: Sequence[Entry] = (), family: str = "run",
            setup: Optional[str] = exact.FIRST_SETUP,
            settings: Optional[str] = None,
            kernel: Optional[str] = None) -> str:
    text = (f"Per row: ratio of the {stat}s over repetitions, 95% "
            f"Hodges-Lehmann interval, Mann-Whitney U p, q = "
            f"Benjamini-Hochberg over {FAMILY_TEXT[family]}; slower/faster "
            f"when q <= {alpha:g}, the interval excludes 1 and the change "
            f"exceeds {threshold_pct:g}%; mde: the smallest change this "
            f"rule flags {MDE_POWER:.0%} of the time, alone among its "
            f"family, at this row's repetitions and a "
            f"{MDE_SPREAD_CONFIDENCE:.0%} upper bound of its spread.")
    if any(e.clock == ClockMode.ICOUNT for e in entries):
        text += " " + exact_method(setup, settings, kernel)
    return text


def run_setup(run: Run) -> Optional[str]:
    """The setup a run's figures were counted in (kbtools.exact.setup_of
    of its first test that says)."""
    return next((exact.setup_of(t.header) for t in run.tests.values()
                 if exact.setup_of(t.header)), None)


def run_settings(run: Run) -> Optional[str]:
    """How a run's exact guest ran (machine.icount_settings of its first
    test that says), or None."""
    return next((t.header.machine.icount_settings for t in run.tests.values()
                 if t.header.machine.icount_settings is not None), None)


def run_kernel(run: Run) -> Optional[str]:
    """The kernel a run booted (exact.kernel_of its first test that
    says), or None."""
    return next(filter(None, (exact.kernel_of(t.header)
                              for t in run.tests.values())), None)


# A row no sched setting schedules (exact.stale_prior's key): the
# prior's word on every row.
NOT_CREATION = "-"


def exact_method(setup: Optional[str] = exact.FIRST_SETUP,
                 settings: Optional[str] = None,
                 kernel: Optional[str] = None) -> str:
    """What an icount comparison's verdicts mean, and their error (A/A
    runs of the setup's architecture, its guest's settings, of the base's
    kernel where the prior saw it), in one paragraph."""
    stale = exact.stale_prior(setup, settings, key=NOT_CREATION)
    creation = exact.stale_prior(setup, settings)
    prior = (f"a row that the prior of the architecture "
             f"(icount_classes.json, boots of its exact guest settled as "
             f"these runs) saw move is at best {exact.PRIOR_BOUND} and takes "
             f"at least {exact.BOOT_SPREAD_FACTOR:g}x the share of itself "
             f"that the prior's boots spread over" if not stale else
             f"no prior bounds the classes ({stale})")
    if creation and not stale:
        prior += (f", and none bounds the process-creation rows judged by "
                  f"their most common value ({creation})")
    return (f"Exact (icount) rows count guest instructions per operation, "
            f"judged against the calibration of the base's kernel (its "
            f"own boots, an A/A): slower/faster when every candidate "
            f"repetition differs from the base's at the same place in the "
            f"run by more than the row's margin, the larger of "
            f"{exact.FLOOR_INSN:g} instructions and "
            f"{exact.BOOT_SPREAD_FACTOR:g}x the range the calibration's "
            f"boots showed, and {exact.CALIBRATED_FLOOR_PCT:g}% of a row "
            f"that is not exact (exact: within {exact.EXACT_PPM:g} ppm "
            f"across boots; near: within {exact.NEAR_SPREAD_PCT:g}%; noisy: "
            f"wider); a row timed one operation at a time is judged by "
            f"its most common value where it holds "
            f"{exact.MODE_SHARE_MIN:.0%} or more of every repetition's "
            f"samples on both sides (figure 'mode'), else by its median; "
            f"{prior}; a row the "
            f"calibration lacks takes the rule above over boots. Error: "
            f"{exact.aa_error(setup, None, settings, kernel)}. Instructions do not show cache or TLB "
            f"misses, contention, memory bandwidth, device latency or "
            f"microcode costs.")


def format_text(base: Run, candidates: Sequence[Run],
                entries: Sequence[Entry], stat: str = "median",
                threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                alpha: float = 0.05, family: str = "run") -> str:
    labels = [c.label for c in candidates]
    out = _legend(base, candidates)
    out += [f"warning: {w}" for w in warnings(base, candidates)]
    out.append("")
    header, lines, aligns = _table(entries, labels, True)
    out += _render(header, lines, aligns)
    out.append("")
    out += _summary(entries, candidates)
    out += _wrap(_method(stat, threshold_pct, alpha, entries, family,
                         run_setup(base), run_settings(base),
                         run_kernel(base)), 78)
    out += honesty(entries, alpha)
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int = EMAIL_WIDTH) -> List[str]:
    return textwrap.wrap(text, width) or [""]


def _fits(lines: Sequence[str], width: int = EMAIL_WIDTH) -> bool:
    return all(len(ln) <= width for ln in lines)


def _email_table(entries: Sequence[Entry], labels: Sequence[str],
                 force: bool = False) -> Optional[List[str]]:
    """The narrowest table of these candidates that fits, names
    abbreviated in the middle when needed; None when nothing fits, unless
    force: then the narrowest there is (a line too long beats no table)."""
    header, lines, aligns = _table(entries, labels, False)
    table = _render(header, lines, aligns)
    if _fits(table):
        return table
    longest = max(len(ln) for ln in table)
    names = [len(ln[0]) for ln in lines if not isinstance(ln, str)]
    width = max(10, max(names + [3]) - (longest - EMAIL_WIDTH))
    header, lines, aligns = _table(entries, labels, False, width)
    narrow = _render(header, lines, aligns)
    return narrow if force or _fits(narrow) else None


def format_email(base: Run, candidates: Sequence[Run],
                 entries: Sequence[Entry], stat: str = "median",
                 threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                 alpha: float = 0.05, family: str = "run") -> str:
    """Plain text of at most 72 columns: all candidates in one table when
    it fits, else one table per candidate."""
    out = []
    for ln in _legend(base, candidates):
        out += _wrap(ln)
    for w in warnings(base, candidates):
        out += _wrap(f"warning: {w}")
    out.append("")
    labels = [c.label for c in candidates]
    table = _email_table(entries, labels)
    if table is not None:
        out += table
    else:
        for i, label in enumerate(labels):
            tag = _tag(i, len(labels))
            out.append(f"{tag} {label}".strip())
            out += _email_table(entries, [label], force=True) or []
            out.append("")
    out.append("")
    for ln in _summary(entries, candidates):
        out += _wrap(ln)
    out += _wrap(_method(stat, threshold_pct, alpha, entries, family,
                         run_setup(base), run_settings(base),
                         run_kernel(base)))
    for ln in honesty(entries, alpha):
        out += _wrap(ln)
    return "\n".join(out) + "\n"


def format_json(base: Run, candidates: Sequence[Run],
                entries: Sequence[Entry], stat: str = "median",
                threshold_pct: float = DEFAULT_THRESHOLD_PCT,
                alpha: float = 0.05, family: str = "run") -> str:
    doc = {"base": base.label, "candidates": [c.label for c in candidates],
           "stat": stat, "threshold_pct": threshold_pct, "alpha": alpha,
           "family": family, "design": design_note(entries, alpha),
           "method": _method(stat, threshold_pct, alpha, entries, family,
                             run_setup(base), run_settings(base),
                         run_kernel(base)),
           "warnings": warnings(base, candidates),
           "rows": [e.to_json() for e in entries]}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


Formatter = Callable[[Run, Sequence[Run], Sequence[Entry], str, float, float,
                      str], str]
FORMATS: Dict[str, Formatter] = {"text": format_text, "email": format_email,
                                 "json": format_json}


# ---- the command (kbench compare, scripts/compare.py) -----------------------

STATS = ("median", "mean", "min", "max", "p90", "p99")


@dataclass(frozen=True)
class Request:
    """A comparison: a base and candidates (results files or --json
    directories) and how to judge and show them."""
    paths: Sequence[str]
    labels: Sequence[str] = ()          # one per path; none: their names
    tests: Sequence[str] = ()           # only these programs
    fmt: str = "text"
    stat: str = "median"
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    alpha: float = 0.05
    family: str = "run"
    fail_above_pct: Optional[float] = None
    calibration: Optional[str] = None   # FILE; none: the base's own boots
    where: Optional[str] = None         # FILE: kbench where's differences


@dataclass
class Comparison:
    """What a comparison says: its table, and the rows beyond
    --fail-above (empty without it)."""
    text: str
    entries: List[Entry]
    over: List[Entry]

    def over_lines(self, fail_above_pct: float) -> List[str]:
        return [f"{e.candidate}: {e.test}:{e.name} is slower by more than "
                f"{fail_above_pct:g}% (95% interval x{e.ci_low:.3f}-"
                f"x{e.ci_high:.3f})" for e in self.over]


def unique_labels(runs: Sequence[Run]) -> None:
    """Default labels made distinct (r1/base and r2/base)."""
    seen: Dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = os.path.normpath(run.path or run.label)
    labels = [r.label for r in runs]
    for i, run in enumerate(runs):
        if labels.count(run.label) > 1:
            run.label = f"{run.label}#{i}"


def base_calibration(path: str, base: Run) -> Dict[str, exact.Known]:
    """The rows of --calibration FILE; ResultError when it cannot be
    read or is of another kernel than the base's."""
    try:
        cal = calibration.load(path)
    except (OSError, ValueError) as e:
        raise ResultError(f"--calibration {path}: {e}") from e
    releases = {t.header.kernel.release for t in base.tests.values()
                if t.header.kernel.release}
    if cal.release and releases and cal.release not in releases:
        raise ResultError(f"--calibration {path} is of {cal.release}, the "
                          f"base ran {', '.join(sorted(releases))}: a "
                          f"calibration holds for its own kernel only")
    return cal.rows


def comparison(req: Request) -> Comparison:
    """The comparison req asks for; ResultError on results that cannot
    be read or compared."""
    labels: List[Optional[str]] = [*req.labels] or [None] * len(req.paths)
    runs = [results.load(p, lbl) for p, lbl in zip(req.paths, labels)]
    unique_labels(runs)
    if req.tests:
        results.select_tests(runs, req.tests)
    base, cands = runs[0], runs[1:]
    cal = base_calibration(req.calibration, base) \
        if req.calibration else None
    entries = compare(base, cands, req.threshold_pct, req.stat, req.alpha,
                      req.family, cal)
    text = FORMATS[req.fmt](base, cands, entries, req.stat,
                            req.threshold_pct, req.alpha, req.family)
    if req.where and req.fmt != "json":
        text += where_text(req.where)
    over = fail_rows(entries, req.fail_above_pct) \
        if req.fail_above_pct is not None else []
    return Comparison(text, entries, over)


def where_text(path: str) -> str:
    """The where section below the table: the functions of each row
    that kbench where profiled (an A/B's where.json, where --json's);
    ResultError when the file cannot be read."""
    try:
        docs = where.load_diffs(path)
    except cli.Error as e:
        raise ResultError(str(e)) from e
    return where_section(docs)


def where_section(docs: Sequence[Json]) -> str:
    """The where section of these differences (a where file's), each
    under its candidate's label: the A/B's and a series' text."""
    out = ["", f"where the instructions went ({len(docs)} moved row"
           f"{'' if len(docs) == 1 else 's'}, kbench where, one more boot "
           f"a kernel: {where.method_text(docs)}):"]
    for doc in docs:
        who = doc.get("candidate")
        out += [""] + ([f"{who}:"] if who else []) + \
            where.format_diff(doc).rstrip("\n").splitlines()
    return "\n".join(out) + "\n"


def parse_args(argv: Sequence[str], prog: str) -> Request:
    ap = argparse.ArgumentParser(
        prog=prog,
        description="Compare candidate kbench runs with a base run, row by "
                    "row, over repetitions: ratio, 95% interval, p-value, "
                    "verdict.")
    ap.add_argument("base", help="results file or directory of the base")
    ap.add_argument("candidates", nargs="+", metavar="candidate",
                    help="results file or directory of a candidate")
    ap.add_argument("-l", "--label", action="append", default=[],
                    help="names of base and candidates, in order "
                         "(repeatable or comma list; default: file or "
                         "directory names)")
    ap.add_argument("-f", "--format", choices=sorted(FORMATS),
                    default="text", help="text (default), email (<= 72 "
                                         "columns) or json")
    ap.add_argument("-t", "--test", action="append", default=[],
                    metavar="NAME",
                    help="compare only these test programs (repeatable or "
                         "comma list; default: all)")
    ap.add_argument("-s", "--stat", choices=STATS, default="median",
                    help="per-repetition figure compared (default: median)")
    ap.add_argument("--threshold", type=float, metavar="PCT",
                    default=DEFAULT_THRESHOLD_PCT,
                    help="smallest change called slower/faster (default: "
                         "%(default)g%%)")
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="false discovery rate (default: %(default)g)")
    ap.add_argument("--family", choices=FAMILIES, default="run",
                    help="the rows Benjamini-Hochberg corrects over: every "
                         "row of a candidate (run, the default) or each "
                         "program's (program)")
    ap.add_argument("--fail-above", type=float, metavar="PCT",
                    help="exit 1 when a row is significantly slower with "
                         "its 95%% interval's lower bound above PCT %%")
    ap.add_argument("--calibration", metavar="FILE",
                    help="the calibration of the base's kernel under "
                         "--icount (kbtools.calibration; default: the "
                         "base's own boots, when it has two or more)")
    ap.add_argument("--where", metavar="FILE",
                    help="show below the table the functions of each "
                         "moved row that kbench where profiled (an A/B's "
                         "where.json, or where --json's file; text and "
                         "email formats)")
    args = ap.parse_args(list(argv))
    if not 0 < args.alpha < 1:
        ap.error(f"--alpha {args.alpha:g} is not between 0 and 1")
    if args.threshold < 0 or (args.fail_above is not None
                              and args.fail_above < 0):
        ap.error("percentages must not be negative")
    labels = [x for arg in args.label for x in arg.split(",")]
    paths = [args.base] + args.candidates
    if labels and len(labels) != len(paths):
        ap.error(f"{len(labels)} labels for {len(paths)} runs")
    if len(set(labels)) != len(labels) or "" in labels:
        ap.error("labels must be distinct and not empty")
    tests = [x for arg in args.test for x in arg.split(",")]
    if "" in tests:
        ap.error("test names must not be empty")
    return Request(paths, labels, tests, args.format, args.stat,
                   args.threshold, args.alpha, args.family, args.fail_above,
                   args.calibration, args.where)


@cli.task(errors=(ResultError,))
def main(argv: Sequence[str], prog: str) -> int:
    """kbench compare, scripts/compare.py: 0 compared; 1 a row beyond
    --fail-above; 2 bad usage or input."""
    req = parse_args(argv, prog)
    c = comparison(req)
    # A reader that went away (| head) still gets --fail-above's verdict.
    write_stdout(c.text)
    if req.fail_above_pct is None:
        return 0
    for line in c.over_lines(req.fail_above_pct):
        print(f"{prog}: {line}", file=sys.stderr)
    return 1 if c.over else 0
