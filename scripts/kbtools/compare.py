# SPDX-License-Identifier: GPL-2.0
"""Per-row verdicts of one or more candidate runs against a base run.

Every row of every candidate gets a dict (see compare()). A verdict needs
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

import math

from kbtools import exact, stats
from kbtools.results import INSN, ResultError

TIME_UNITS = ("ns", "us", "ms", "s")
VERDICTS = ("slower", "faster", "same", "no-verdict", "missing", "skipped")
KEYS = ("candidate", "test", "name", "unit", "verdict", "ratio", "ci_low",
        "ci_high", "p_value", "p_adjusted", "cv_base", "cv_candidate",
        "n_base", "n_candidate", "base", "value", "note", "clock", "class",
        "delta", "spread_base", "spread_candidate", "log_sd", "mde_pct",
        "family_rows")
DEFAULT_THRESHOLD_PCT = 2.0
FAMILIES = ("run", "program")
# The power at which a row's smallest detectable change is stated.
MDE_POWER = 0.8


def _names(first, second):
    """Keys of first in order, then those only in second."""
    return list(first) + [k for k in second if k not in first]


def _skip_note(brow, crow):
    parts = []
    for side, row in (("baseline", brow), ("candidate", crow)):
        text = f"{side} {row.status}"
        if row.status != "ok" and row.reason:
            text += f" ({row.reason})"
        parts.append(text)
    return ", ".join(parts)


def _entry(cand, test, name, unit, verdict, note=None, **figures):
    out = dict.fromkeys(KEYS)
    out.update(candidate=cand.label, test=test, name=name, unit=unit,
               verdict=verdict, note=note, n_base=0, n_candidate=0,
               clock="real")
    out.update(figures)
    return out


def _check_clocks(cand, test, bt, ct):
    """An icount side and a real-clock side measure different things."""
    modes = (bt.clock_mode(), ct.clock_mode())
    if modes[0] != modes[1]:
        what = {"icount": "QEMU's instruction counter (--icount)",
                "real": "a real clock"}
        raise ResultError(f"{cand.path or cand.label}: {test}: the baseline "
                          f"ran on {what[modes[0]]}, the candidate on "
                          f"{what[modes[1]]}: instructions cannot be "
                          f"compared with time; run both sides the same "
                          f"way")


def _compare_row(cand, test, brow, crow, stat, alpha, need, bt=None,
                 ct=None):
    """The entry of one row present on both sides, before the
    multiple-testing step (verdict 'pending' when it is testable)."""
    name = brow.name
    if brow.unit != crow.unit and brow.unit and crow.unit:
        raise ResultError(f"{cand.path or cand.label}: {test}: row "
                          f"'{name}': unit '{brow.unit}' in the baseline, "
                          f"'{crow.unit}' in the candidate")
    unit = brow.unit or crow.unit
    if brow.status != "ok" or crow.status != "ok":
        return _entry(cand, test, name, unit, "skipped",
                      _skip_note(brow, crow))
    if unit is None:
        return _entry(cand, test, name, unit, "skipped",
                      "a check, not a figure")
    if unit not in TIME_UNITS:
        return _entry(cand, test, name, unit, "skipped",
                      f"'{unit}' is not a time")
    vb, vc = brow.values(stat), crow.values(stat)
    if not vb or not vc:
        return _entry(cand, test, name, unit, "skipped",
                      f"no '{stat}' figure")
    if bt is not None and bt.clock_mode() == "icount":
        return _compare_icount(_entry(cand, test, name, INSN, "pending",
                                      clock="icount"),
                               brow, crow, stat, alpha, need,
                               (bt.insn_per_unit(unit),
                                ct.insn_per_unit(unit)))
    return _test_values(_entry(cand, test, name, unit, "pending"), vb, vc,
                        alpha, need)


def _compare_icount(e, brow, crow, stat, alpha, need, scales):
    """Fill entry e of an icount row: kbtools.exact's class and verdict
    from the repetitions, in instructions per operation; a noisy row is
    left 'pending' for the statistical rule over its boots."""
    vb = [v * scales[0] for v in brow.values(stat)]
    vc = [v * scales[1] for v in crow.values(stat)]
    mb, mc = stats.median(vb), stats.median(vc)
    e.update(n_base=len(vb), n_candidate=len(vc), base=mb, value=mc,
             delta=mc - mb, ratio=mc / mb if mb > 0 else None,
             cv_base=stats.cv_pct(vb), cv_candidate=stats.cv_pct(vc),
             spread_base=exact.spread(vb), spread_candidate=exact.spread(vc))
    if e["ratio"] is None:
        e.update(verdict="skipped", note="the base's figure is not above 0")
        return e
    why = exact.too_few(vb, vc)
    if why:
        e.update(verdict="no-verdict", note=why)
        return e
    known = exact.calibration().get(f"{e['test']}:{e['name']}")
    e["class"], e["verdict"], e["note"] = exact.decide(vb, vc, known)
    if e["verdict"] != "pending":
        return e
    # Noisy: its boots are the replicates, not the repetitions in them.
    bb = [v * scales[0] for v in brow.boot_values(stat)]
    cb = [v * scales[1] for v in crow.boot_values(stat)]
    _test_values(e, bb, cb, alpha, need)
    e["note"] = (f"noisy under icount (its repetitions spread "
                 f"{fmt_pct(exact.rel_spread_pct(vb))} and "
                 f"{fmt_pct(exact.rel_spread_pct(vc))}): judged over boots")
    return e


def fmt_pct(v):
    return "-" if v is None else f"{v:.2g}%"


def _test_values(e, vb, vc, alpha, need):
    """Fill entry e from the two sides' per-repetition figures; its
    verdict stays 'pending' when it is testable."""
    mb, mc = stats.median(vb), stats.median(vc)
    e.update(n_base=len(vb), n_candidate=len(vc), base=mb, value=mc,
             ratio=mc / mb if mb > 0 else None,
             cv_base=stats.cv_pct(vb), cv_candidate=stats.cv_pct(vc),
             log_sd=stats.log_spread(vb, vc))
    if len(vb) >= 2 and len(vc) >= 2:
        e["p_value"] = stats.mann_whitney(vb, vc)[1]
        ci = stats.ratio_ci(vb, vc, alpha)
        if ci:
            e["ci_low"], e["ci_high"] = ci
    if e["ratio"] is None:
        e["verdict"] = "skipped"
        e["note"] = "the base's figure is not above 0"
    elif min(len(vb), len(vc)) < need:
        e["verdict"] = "no-verdict"
        e["note"] = (f"{len(vb)} vs {len(vc)} repetitions: a verdict needs "
                     f"at least {need} per side")
    return e


def _decide(e, threshold_pct, alpha):
    """slower / faster / same of a tested entry (adjusted p known)."""
    up = 1 + threshold_pct / 100
    significant = (e["p_adjusted"] is not None and e["p_adjusted"] <= alpha
                   and e["ci_low"] is not None)
    if significant and e["ratio"] > up and e["ci_low"] > 1:
        return "slower"
    if significant and e["ratio"] < 1 / up and e["ci_high"] < 1:
        return "faster"
    if significant and (e["ci_low"] > 1 or e["ci_high"] < 1):
        e["note"] = f"significant but within the {threshold_pct:g}% threshold"
    return "same"


def row_verdict(vb, vc, threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05):
    """The entry (keys KEYS) of one row tested alone, from the base's and
    the candidate's per-repetition figures: no other row to adjust for,
    so q = p."""
    e = dict.fromkeys(KEYS)
    e.update(verdict="pending", n_base=0, n_candidate=0)
    _test_values(e, vb, vc, alpha, stats.min_reps(alpha))
    if e["verdict"] == "pending":
        e["p_adjusted"] = e["p_value"]
        e["verdict"] = _decide(e, threshold_pct, alpha)
    return e


def _families(entries, family):
    """The entries that Benjamini-Hochberg corrects over together."""
    if family == "run":
        return [entries]
    groups = {}
    for e in entries:
        groups.setdefault(e["test"], []).append(e)
    return list(groups.values())


def _power(e, rows, threshold_pct, alpha):
    """The smallest change the design flags for this row (mde_pct), and
    no-verdict for a row it cannot flag at all, alone among `rows`."""
    nb, nc = e["n_base"], e["n_candidate"]
    e["family_rows"] = rows
    single = alpha / rows
    if stats.min_p(nb, nc) > single:
        if e["verdict"] in ("same", "no-verdict"):
            e["verdict"] = "no-verdict"
            need = stats.design_reps(rows, alpha)
            if e["clock"] == "icount":
                e["note"] = (f"{e['note'].split(':')[0]}: the statistical "
                             f"rule needs {need} boots per side, not "
                             f"{nb} vs {nc}")
            else:
                e["note"] = f"n={min(nb, nc)} of {rows} rows: needs {need}"
        return
    shift = stats.detectable_shift(nb, nc, single, MDE_POWER)
    if e["log_sd"] is not None:
        e["mde_pct"] = max(threshold_pct,
                           (math.exp(shift * e["log_sd"]) - 1) * 100)


def design_note(entries, alpha=0.05):
    """One line per candidate whose repetitions are below what one
    changed row among its family needs (empty when none is)."""
    out = []
    for e in entries:
        rows = e["family_rows"]
        if rows is None or e["verdict"] != "no-verdict" or \
                not (e["note"] or "").startswith("n="):
            continue
        line = (f"{e['candidate']}: {min(e['n_base'], e['n_candidate'])} "
                f"repetitions per side, but one changed row among {rows} "
                f"needs {stats.design_reps(rows, alpha)} to reach "
                f"q <= {alpha:g} (exact U: its smallest p is "
                f"{stats.min_p(e['n_base'], e['n_candidate']):.2g}, above "
                f"{alpha:g}/{rows})")
        if line not in out:
            out.append(line)
    return out


def compare_one(base, cand, threshold_pct=DEFAULT_THRESHOLD_PCT,
                stat="median", alpha=0.05, family="run"):
    """Entries of one candidate against base, in base order."""
    need = stats.min_reps(alpha)
    common = set(base.tests) & set(cand.tests)
    if not common:
        raise ResultError(f"no test is in both {base.path or base.label} "
                          f"({', '.join(sorted(base.tests))}) and "
                          f"{cand.path or cand.label} "
                          f"({', '.join(sorted(cand.tests))})")
    out = []
    for tname in _names(base.tests, cand.tests):
        bt, ct = base.tests.get(tname), cand.tests.get(tname)
        if bt is None or ct is None:
            where = "baseline" if ct is None else "candidate"
            for rname in (bt or ct).rows:
                out.append(_entry(cand, tname, rname,
                                  (bt or ct).rows[rname].unit, "missing",
                                  f"test only in the {where}"))
            continue
        _check_clocks(cand, tname, bt, ct)
        for rname in _names(bt.rows, ct.rows):
            brow, crow = bt.rows.get(rname), ct.rows.get(rname)
            if brow is None or crow is None:
                where = "baseline" if crow is None else "candidate"
                out.append(_entry(cand, tname, rname,
                                  (brow or crow).unit, "missing",
                                  f"only in the {where}"))
                continue
            out.append(_compare_row(cand, tname, brow, crow, stat, alpha,
                                    need, bt, ct))
    if family not in FAMILIES:
        raise ValueError(f"family '{family}' is not one of "
                         f"{', '.join(FAMILIES)}")
    # A row short of repetitions is still one of the rows compared.
    tested = [e for e in out if e["verdict"] == "pending" or
              (e["verdict"] == "no-verdict" and e["n_base"] > 0)]
    for group in _families(tested, family):
        pending = [e for e in group if e["verdict"] == "pending"]
        adjusted = stats.benjamini_hochberg([e["p_value"] for e in pending])
        for e, q in zip(pending, adjusted):
            e["p_adjusted"] = q
            e["verdict"] = _decide(e, threshold_pct, alpha)
        for e in group:
            _power(e, len(group), threshold_pct, alpha)
    return out


def compare(base, candidates, threshold_pct=DEFAULT_THRESHOLD_PCT,
            stat="median", alpha=0.05, family="run"):
    """One dict per (candidate, test, row), keys KEYS."""
    out = []
    for cand in candidates:
        out += compare_one(base, cand, threshold_pct, stat, alpha, family)
    return out


def fail_rows(entries, fail_above_pct):
    """Entries that are significantly slower with the interval's lower
    bound above fail_above_pct %."""
    limit = 1 + fail_above_pct / 100
    return [e for e in entries if e["verdict"] == "slower"
            and e["ci_low"] is not None and e["ci_low"] > limit]


def too_few(entries, alpha=0.05):
    """True when some row lacks a verdict for want of repetitions."""
    return any(e["verdict"] == "no-verdict" for e in entries)


def _guest(test):
    return (test.doc.get("machine") or {}).get("guest")


def warnings(base, candidates):
    """Differences of setup that make a comparison suspect."""
    out = []
    for cand in candidates:
        for tname in base.tests.keys() & cand.tests.keys():
            bg, cg = _guest(base.tests[tname]), _guest(cand.tests[tname])
            if bg != cg:
                out.append(f"{tname}: '{base.label}' ran "
                           f"{'in a ' + bg + ' guest' if bg else 'on the host'}"
                           f", '{cand.label}' "
                           f"{'in a ' + cg + ' guest' if cg else 'on the host'}"
                           ": compare only like with like")
                break
    return out


# Output: text (aligned whatever the name length), email (<= 72 columns),
# json. Rows are grouped by test; every candidate is one column group.

EMAIL_WIDTH = 72
SHORT = {"no-verdict": "no-verdict", "missing": "missing",
         "skipped": "skipped"}


def fmt_num(v):
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


def fmt_p(p):
    if p is None:
        return "-"
    return "<0.0001" if p < 0.0001 else f"{p:.2g}"


def fmt_ratio(r):
    return "-" if r is None else f"x{r:.3f}"


def fmt_ci(e):
    if e["ci_low"] is None:
        return "-"
    return f"{e['ci_low']:.3f}-{e['ci_high']:.3f}"


def fmt_cv(cv):
    return "-" if cv is None else f"{cv:.1f}%"


def fmt_mde(e):
    """The smallest change this design flags for the row ('-' where the
    exact rule decides, or the design cannot flag it at all)."""
    if is_exact(e):
        return "1 insn" if e["class"] == "exact" else "-"
    return "-" if e["mde_pct"] is None else f"{e['mde_pct']:.1f}%"


def _index(entries):
    """(test, name) in first-seen order, and entry by (candidate, test,
    name)."""
    order, by = [], {}
    for e in entries:
        key = (e["test"], e["name"])
        if key not in by:
            order.append(key)
            by[key] = {}
        by[key][e["candidate"]] = e
    return order, by


def _render(header, lines, aligns, width=None):
    """Aligned table: columns separated by two spaces; 'l'/'r' aligns.
    Section lines (a str instead of a list) are printed as they are."""
    cells = [header] + [ln for ln in lines if not isinstance(ln, str)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    out = []
    for ln in [header] + lines:
        if isinstance(ln, str):
            out.append(ln)
            continue
        parts = [c.ljust(w) if a == "l" else c.rjust(w)
                 for c, w, a in zip(ln, widths, aligns)]
        out.append("  ".join(parts).rstrip())
    return out


def is_exact(e):
    """An icount row decided by kbtools.exact (class exact or near)."""
    return e["clock"] == "icount" and e["class"] in ("exact", "near")


def _base_cells(e, full):
    """The base's figure, and in the full table its spread."""
    if e["base"] is None:
        figure = "-"
    elif e["unit"] == INSN:
        figure = f"{exact.fmt_insn(e['base'])} {INSN}"
    else:
        figure = f"{fmt_num(e['base'])} {e['unit']}"
    return [figure, fmt_cv(e["cv_base"])] if full else [figure]


def fmt_delta(e):
    """The change in instructions per operation: '+1.000 insn'."""
    if e["delta"] is None:
        return "-"
    sign = "+" if e["delta"] >= 0 else "-"
    return f"{sign}{exact.fmt_insn(abs(e['delta']))} {INSN}"


def verdict_label(e):
    """The verdict, with its class for an icount row: 'slower (exact)'."""
    if e["clock"] == "icount" and e["class"]:
        return f"{e['verdict']} ({e['class']})"
    return e["verdict"]


def _cand_cells(e, full):
    if e is None:
        return ["-"] * (8 if full else 4)
    # An exact row has no interval: its change in instructions instead.
    cells = [fmt_ratio(e["ratio"]), fmt_delta(e) if is_exact(e)
             else fmt_ci(e)]
    if full:
        cells += [fmt_p(e["p_value"]), fmt_p(e["p_adjusted"]),
                  fmt_cv(e["cv_candidate"])]
    cells += [fmt_mde(e), verdict_label(e)]
    if full:
        # The footer explains missing repetitions once for all rows.
        note = e["note"] if e["verdict"] != "no-verdict" else None
        cells.append(note or "")
    return cells


def _both_skipped(row):
    return all(e["verdict"] == "skipped" and e["base"] is None
               and "baseline skip" in (e["note"] or "")
               and "candidate skip" in (e["note"] or "")
               for e in row.values())


def _table(entries, labels, full, name_width=None):
    """Header and lines of one table over the given candidate labels;
    rows skipped on every side are left out (JSON keeps them)."""
    order, by = _index([e for e in entries if e["candidate"] in labels])
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
    lines, test = [], None
    for key in order:
        if key[0] != test:
            test = key[0]
            lines.append(f"{test}:")
        row = by[key]
        first = next(iter(row.values()))
        name = "  " + key[1]
        if name_width and len(name) > name_width:
            keep = name_width - 3
            name = name[:keep - keep // 2] + ".." + name[-(keep // 2) - 1:]
        cells = [name] + _base_cells(first, full)
        for label in labels:
            cells += _cand_cells(row.get(label), full)
        lines.append(cells)
    return header, lines, aligns


def _tag(i, n):
    return "" if n == 1 else f"{chr(ord('A') + i)}:"


def _describe(run):
    tests = list(run.tests.values())
    if not tests:
        return run.label
    doc = tests[0].doc
    kernel = (doc.get("kernel") or {}).get("release", "?")
    guest = (doc.get("machine") or {}).get("guest")
    reps = run.repetitions()
    where = f"{guest} guest" if guest else "host"
    if tests[0].clock_mode() == "icount":
        where += ", icount: figures are guest instructions"
    return (f"{run.label} ({kernel}, {where}, {reps} "
            f"repetition{'s' if reps != 1 else ''})")


def _legend(base, candidates, stat):
    lines = [f"base: {_describe(base)}"]
    for i, c in enumerate(candidates):
        tag = _tag(i, len(candidates)) or "candidate:"
        lines.append(f"{tag} {_describe(c)}")
    return lines


def _summary(entries, candidates, alpha):
    order, by = _index(entries)
    hidden = sum(1 for k in order if _both_skipped(by[k]))
    lines = []
    if hidden:
        lines.append(f"{hidden} rows skipped on every side are not shown "
                     f"(--format json lists them).")
    for i, c in enumerate(candidates):
        counts = {}
        for e in entries:
            if e["candidate"] == c.label:
                counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
        text = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if v in counts)
        lines.append(f"{_tag(i, len(candidates)) or 'candidate:'} "
                     f"{c.label}: {text}")
    return lines


def honesty(entries, alpha=0.05):
    """What to do when rows lack a verdict for want of repetitions."""
    if not too_few(entries, alpha):
        return []
    short = design_note(entries, alpha)
    return [
        "no-verdict: too few repetitions (or boots) for these rows to be "
        "flagged at all:",
    ] + [f"  {line}" for line in short] + [
        "Samples within one run cannot tell a change from the drift "
        "between runs. These choose the repetitions from the design (the "
        "rows compared, the family, alpha) and say how many:",
        "  ./run_all.sh --vs-prefix 'CMD' --json DIR",
        "  ./run_all.sh --kernel BASE --vs-kernel CAND --json DIR",
        "  ./run_all.sh --kernel BASE --vs-kernel CAND --icount --json DIR "
        "(exact rows: one boot each)",
    ]


FAMILY_TEXT = {"run": "each candidate's rows", "program": "each program's "
               "rows of a candidate"}


def _method(stat, threshold_pct, alpha, entries=(), family="run"):
    text = (f"Per row: ratio of the {stat}s over repetitions, 95% "
            f"Hodges-Lehmann interval, Mann-Whitney U p, q = "
            f"Benjamini-Hochberg over {FAMILY_TEXT[family]}; slower/faster "
            f"when q <= {alpha:g}, the interval excludes 1 and the change "
            f"exceeds {threshold_pct:g}%; mde: the smallest change flagged "
            f"{MDE_POWER:.0%} of the time, alone among its family, at this "
            f"row's spread and repetitions.")
    if any(e["clock"] == "icount" for e in entries):
        text += " " + exact_method()
    return text


def exact_method():
    """What an icount comparison's verdicts mean, in one paragraph."""
    return (f"Exact (icount) rows count guest instructions per operation: "
            f"an exact row (repetitions within "
            f"{exact.EXACT_SPREAD_INSN:g} instructions) is slower/faster "
            f"when every repetition differs by more than "
            f"{exact.FLOOR_INSN:g} instructions; a near row (within "
            f"{exact.NEAR_SPREAD_PCT:g}%) when the sides' ranges are apart "
            f"by more than its spread (within this comparison, or "
            f"{exact.BOOT_SPREAD_FACTOR:g}x that of A/A boots) plus "
            f"{exact.NEAR_FLOOR_PCT:g}%; a "
            f"noisy row takes the rule above over boots. Instructions do "
            f"not show cache or TLB misses, contention, memory bandwidth, "
            f"device latency or microcode costs.")


def format_text(base, candidates, entries, stat="median",
                threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05,
                family="run"):
    labels = [c.label for c in candidates]
    out = _legend(base, candidates, stat)
    out += [f"warning: {w}" for w in warnings(base, candidates)]
    out.append("")
    header, lines, aligns = _table(entries, labels, True)
    out += _render(header, lines, aligns)
    out.append("")
    out += _summary(entries, candidates, alpha)
    out += _wrap(_method(stat, threshold_pct, alpha, entries, family), 78)
    out += honesty(entries, alpha)
    return "\n".join(out) + "\n"


def _wrap(text, width=EMAIL_WIDTH):
    import textwrap
    return textwrap.wrap(text, width) or [""]


def _fits(lines, width=EMAIL_WIDTH):
    return all(len(ln) <= width for ln in lines)


def _email_table(entries, labels, force=False):
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


def format_email(base, candidates, entries, stat="median",
                 threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05,
                family="run"):
    """Plain text of at most 72 columns: all candidates in one table when
    it fits, else one table per candidate."""
    out = []
    for ln in _legend(base, candidates, stat):
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
            out += _email_table(entries, [label], force=True)
            out.append("")
    out.append("")
    for ln in _summary(entries, candidates, alpha):
        out += _wrap(ln)
    out += _wrap(_method(stat, threshold_pct, alpha, entries, family))
    for ln in honesty(entries, alpha):
        out += _wrap(ln)
    return "\n".join(out) + "\n"


def format_json(base, candidates, entries, stat="median",
                threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05,
                family="run"):
    import json
    doc = {"base": base.label, "candidates": [c.label for c in candidates],
           "stat": stat, "threshold_pct": threshold_pct, "alpha": alpha,
           "family": family, "design": design_note(entries, alpha),
           "method": _method(stat, threshold_pct, alpha, entries, family),
           "warnings": warnings(base, candidates),
           "rows": entries}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


FORMATS = {"text": format_text, "email": format_email, "json": format_json}
