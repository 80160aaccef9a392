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
        raise ResultError(f"{test}: row '{name}': unit '{brow.unit}' in "
                          f"the baseline, '{crow.unit}' in the candidate")
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
    mb, mc = stats.median(vb), stats.median(vc)
    e = _entry(cand, test, name, unit, "pending", n_base=len(vb),
               n_candidate=len(vc), base=mb, value=mc,
               ratio=mc / mb if mb > 0 else None,
               cv_base=stats.cv_pct(vb), cv_candidate=stats.cv_pct(vc))
    if len(vb) >= 2 and len(vc) >= 2:
        e["p_value"] = stats.mann_whitney(vb, vc)[1]
        ci = stats.ratio_ci(vb, vc, alpha)
        if ci:
            e["ci_low"], e["ci_high"] = ci
    if min(len(vb), len(vc)) < need or e["ratio"] is None:
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


def compare_one(base, cand, threshold_pct=DEFAULT_THRESHOLD_PCT,
                stat="median", alpha=0.05):
    """Entries of one candidate against base, in base order."""
    need = stats.min_reps(alpha)
    common = set(base.tests) & set(cand.tests)
    if not common:
        raise ResultError(f"no test is in both '{base.label}' "
                          f"({', '.join(sorted(base.tests))}) and "
                          f"'{cand.label}' "
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
