# SPDX-License-Identifier: GPL-2.0
"""Per-row verdicts of one or more candidate runs against a base run.

Every row of every candidate gets a dict (see compare()). A verdict needs
repetitions on both sides: the figure compared is the row's `stat`
(median by default) of each repetition, so n is the number of
repetitions, never the number of samples within one run.

Verdicts:
  slower / faster  the change is significant after Benjamini-Hochberg over
                   all rows of the candidate (adjusted p <= alpha), its 95%
                   interval excludes 1, and the ratio is beyond the
                   threshold
  same             not significant, or smaller than the threshold
  no-verdict       too few repetitions for the test to reach alpha
  missing          the row is in one run only
  skipped          skipped or failed on a side, a check rather than a
                   figure, or a figure that is not a time
"""

from kbtools import stats
from kbtools.results import ResultError

TIME_UNITS = ("ns", "us", "ms", "s")
VERDICTS = ("slower", "faster", "same", "no-verdict", "missing", "skipped")
KEYS = ("candidate", "test", "name", "unit", "verdict", "ratio", "ci_low",
        "ci_high", "p_value", "p_adjusted", "cv_base", "cv_candidate",
        "n_base", "n_candidate", "base", "value", "note")
DEFAULT_THRESHOLD_PCT = 2.0


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
               verdict=verdict, note=note, n_base=0, n_candidate=0)
    out.update(figures)
    return out


def _compare_row(cand, test, brow, crow, stat, alpha, need):
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
    return _test_values(_entry(cand, test, name, unit, "pending"), vb, vc,
                        alpha, need)


def _test_values(e, vb, vc, alpha, need):
    """Fill entry e from the two sides' per-repetition figures; its
    verdict stays 'pending' when it is testable."""
    mb, mc = stats.median(vb), stats.median(vc)
    e.update(n_base=len(vb), n_candidate=len(vc), base=mb, value=mc,
             ratio=mc / mb if mb > 0 else None,
             cv_base=stats.cv_pct(vb), cv_candidate=stats.cv_pct(vc))
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


def compare_one(base, cand, threshold_pct=DEFAULT_THRESHOLD_PCT,
                stat="median", alpha=0.05):
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
        for rname in _names(bt.rows, ct.rows):
            brow, crow = bt.rows.get(rname), ct.rows.get(rname)
            if brow is None or crow is None:
                where = "baseline" if crow is None else "candidate"
                out.append(_entry(cand, tname, rname,
                                  (brow or crow).unit, "missing",
                                  f"only in the {where}"))
                continue
            out.append(_compare_row(cand, tname, brow, crow, stat, alpha,
                                    need))
    tested = [e for e in out if e["verdict"] == "pending"]
    adjusted = stats.benjamini_hochberg([e["p_value"] for e in tested])
    for e, q in zip(tested, adjusted):
        e["p_adjusted"] = q
        e["verdict"] = _decide(e, threshold_pct, alpha)
    return out


def compare(base, candidates, threshold_pct=DEFAULT_THRESHOLD_PCT,
            stat="median", alpha=0.05):
    """One dict per (candidate, test, row), keys KEYS."""
    out = []
    for cand in candidates:
        out += compare_one(base, cand, threshold_pct, stat, alpha)
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


def _base_cells(e):
    if e["base"] is None:
        return ["-", "-"]
    return [f"{fmt_num(e['base'])} {e['unit']}", fmt_cv(e["cv_base"])]


def _cand_cells(e, full):
    if e is None:
        return ["-"] * (7 if full else 4)
    cells = [fmt_ratio(e["ratio"]), fmt_ci(e)]
    if full:
        cells += [fmt_p(e["p_value"]), fmt_p(e["p_adjusted"]),
                  fmt_cv(e["cv_candidate"])]
    cells.append(e["verdict"])
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
    header = ["row", "base", "cv"]
    aligns = ["l", "r", "r"]
    for i, label in enumerate(labels):
        tag = _tag(i, len(labels))
        if full:
            header += [f"{tag}ratio", "95% CI", "p", "q", "cv", "verdict",
                       "note"]
            aligns += ["r", "r", "r", "r", "r", "l", "l"]
        else:
            header += [f"{tag}ratio", "95% CI", "verdict"]
            aligns += ["r", "r", "l"]
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
        cells = [name] + _base_cells(first)
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
    need = stats.min_reps(alpha)
    return [
        f"no-verdict: fewer than {need} repetitions per side. Samples "
        f"within one run",
        "cannot tell a change from the drift between runs; for a verdict "
        "run",
        "  ./run_all.sh --vs-prefix 'CMD' --repeat 5 --json DIR",
        "  ./run_all.sh --kernel BASE --vs-kernel CAND --repeat 5 --json DIR",
        "or compare two directories of repeated runs "
        "(run_all.sh --repeat 5).",
    ]


def _method(stat, threshold_pct, alpha):
    return (f"Per row: ratio of the {stat}s over repetitions, 95% "
            f"Hodges-Lehmann interval, Mann-Whitney U p, q = "
            f"Benjamini-Hochberg over each candidate's rows; slower/faster "
            f"when q <= {alpha:g}, the interval excludes 1 and the change "
            f"exceeds {threshold_pct:g}%.")


def format_text(base, candidates, entries, stat="median",
                threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05):
    labels = [c.label for c in candidates]
    out = _legend(base, candidates, stat)
    out += [f"warning: {w}" for w in warnings(base, candidates)]
    out.append("")
    header, lines, aligns = _table(entries, labels, True)
    out += _render(header, lines, aligns)
    out.append("")
    out += _summary(entries, candidates, alpha)
    out += _wrap(_method(stat, threshold_pct, alpha), 78)
    out += honesty(entries, alpha)
    return "\n".join(out) + "\n"


def _wrap(text, width=EMAIL_WIDTH):
    import textwrap
    return textwrap.wrap(text, width) or [""]


def _fits(lines, width=EMAIL_WIDTH):
    return all(len(ln) <= width for ln in lines)


def _email_table(entries, labels):
    """The narrowest table of these candidates that fits, names
    abbreviated in the middle when needed; None when nothing fits."""
    header, lines, aligns = _table(entries, labels, False)
    table = _render(header, lines, aligns)
    if _fits(table):
        return table
    longest = max(len(ln) for ln in table)
    names = [len(ln[0]) for ln in lines if not isinstance(ln, str)]
    width = max(names + [3]) - (longest - EMAIL_WIDTH)
    if width < 10:
        return None
    header, lines, aligns = _table(entries, labels, False, width)
    table = _render(header, lines, aligns)
    return table if _fits(table) else None


def format_email(base, candidates, entries, stat="median",
                 threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05):
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
            out += _email_table(entries, [label]) or []
            out.append("")
    out.append("")
    for ln in _summary(entries, candidates, alpha):
        out += _wrap(ln)
    out += _wrap(_method(stat, threshold_pct, alpha))
    for ln in honesty(entries, alpha):
        out += _wrap(ln)
    return "\n".join(out) + "\n"


def format_json(base, candidates, entries, stat="median",
                threshold_pct=DEFAULT_THRESHOLD_PCT, alpha=0.05):
    import json
    doc = {"base": base.label, "candidates": [c.label for c in candidates],
           "stat": stat, "threshold_pct": threshold_pct, "alpha": alpha,
           "method": _method(stat, threshold_pct, alpha),
           "warnings": warnings(base, candidates),
           "rows": entries}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


FORMATS = {"text": format_text, "email": format_email, "json": format_json}
