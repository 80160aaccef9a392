#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare two kbench result files (or two run_all.sh --json directories).

Prints, per row, the comparison table of the Scribe micro-benchmark:
slowdown (candidate / baseline), addition (candidate - baseline, with the
unit) and base (the baseline figure). Rows present in only one file, or
skipped in one, are flagged.

Exit status: 0 compared; 1 a row is slower than --fail-above allows;
2 unreadable or mismatched input, or bad usage.
"""

import argparse
import json
import math
import os
import sys

STATS = ("mean", "median", "min", "max", "p99")
UNIT_NAMES = {"us": "usec", "ns": "nsec", "ms": "msec", "s": "sec"}


class InputError(Exception):
    """Input that cannot be compared; the message names the problem."""


def load(path):
    """Return the parsed kbench document at path."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    except ValueError as e:
        raise InputError(f"{path} is not valid JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise InputError(f"{path} is not a kbench results file (no 'rows' list)")
    if not isinstance(doc.get("test"), str):
        raise InputError(f"{path} is not a kbench results file (no 'test' name)")
    for row in doc["rows"]:
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise InputError(f"{path}: a row has no name")
    return doc


def fmt_num(v):
    """Figures the way the seed prints them: 3 significant decimals."""
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def row_value(row, stat):
    v = row.get(stat)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def describe(doc):
    kernel = doc.get("kernel", {}).get("release", "?")
    guest = (doc.get("machine") or {}).get("guest")
    return f"{kernel}{' (' + guest + ' guest)' if guest else ''}"


def compare_docs(base, cand, stat, fail_above, out):
    """Print the table for one pair of documents; return rows over the limit."""
    if base["test"] != cand["test"]:
        raise InputError(f"different tests: baseline is '{base['test']}', "
                         f"candidate is '{cand['test']}'")
    bguest = (base.get("machine") or {}).get("guest")
    cguest = (cand.get("machine") or {}).get("guest")
    print(f"=> comparison: {base['test']} ({stat})", file=out)
    print(f"   baseline:  {describe(base)}  {base.get('date', '')}", file=out)
    print(f"   candidate: {describe(cand)}  {cand.get('date', '')}", file=out)
    if bguest != cguest:
        print("   warning: the runs come from different setups (host vs "
              "emulated guest): compare only like with like", file=out)
    print(f"{'row':<18}{'slowdown':>10}{'addition':>20}{'base':>18}", file=out)
    print("-" * 70, file=out)

    brows = {r["name"]: r for r in base["rows"]}
    crows = {r["name"]: r for r in cand["rows"]}
    names = [r["name"] for r in base["rows"]]
    names += [r["name"] for r in cand["rows"] if r["name"] not in brows]
    over = []
    for name in names:
        b, c = brows.get(name), crows.get(name)
        if b is None or c is None:
            where = "baseline" if c is None else "candidate"
            print(f"{name:<18}  only in the {where}", file=out)
            continue
        bs, cs = b.get("status", "ok"), c.get("status", "ok")
        if bs != "ok" or cs != "ok":
            print(f"{name:<18}  not compared: baseline {bs}, candidate {cs}",
                  file=out)
            continue
        if b.get("unit") != c.get("unit"):
            raise InputError(f"row '{name}': unit '{b.get('unit')}' in the "
                             f"baseline, '{c.get('unit')}' in the candidate")
        bv, cv = row_value(b, stat), row_value(c, stat)
        if bv is None or cv is None:
            print(f"{name:<18}  not compared: no '{stat}' figure", file=out)
            continue
        unit = UNIT_NAMES.get(b.get("unit", ""), b.get("unit", ""))
        ratio = cv / bv if bv else math.inf
        add = cv - bv
        sign = "+" if add >= 0 else "-"
        note = f"\t({b['note']})" if b.get("note") else ""
        print(f"{name:<18}{'x ' + format(ratio, '.2f'):>10}"
              f"{sign + ' ' + fmt_num(abs(add)) + ' ' + unit:>20}"
              f"{fmt_num(bv) + ' ' + unit:>18}{note}", file=out)
        if fail_above is not None and ratio > 1 + fail_above / 100.0:
            over.append(f"{base['test']}:{name}")
    print(file=out)
    return over


def pairs_from_dirs(bdir, cdir):
    """Pair the .json files of two run_all.sh --json directories by name."""
    bfiles = {f for f in os.listdir(bdir) if f.endswith(".json")}
    cfiles = {f for f in os.listdir(cdir) if f.endswith(".json")}
    if not bfiles & cfiles:
        raise InputError(f"no results file is in both {bdir} and {cdir}")
    for f in sorted(bfiles ^ cfiles):
        where = bdir if f in bfiles else cdir
        print(f"=> {f}: only in {where}\n")
    return [(os.path.join(bdir, f), os.path.join(cdir, f))
            for f in sorted(bfiles & cfiles)]


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="compare.py",
        description="Compare a baseline and a candidate kbench results file "
                    "(--json of any kbench program) or two run_all.sh --json "
                    "directories: slowdown (x candidate/baseline), addition "
                    "(candidate - baseline) and base, per row.")
    ap.add_argument("baseline", help="results file or directory of the base kernel")
    ap.add_argument("candidate", help="results file or directory of the patched kernel")
    ap.add_argument("-s", "--stat", choices=STATS, default="mean",
                    help="which figure to compare (default: mean, the seed's "
                         "'average')")
    ap.add_argument("--fail-above", type=float, metavar="PCT",
                    help="exit 1 when a row is more than PCT %% slower")
    args = ap.parse_args(argv)

    try:
        bdir, cdir = os.path.isdir(args.baseline), os.path.isdir(args.candidate)
        if bdir != cdir:
            raise InputError("give two files or two directories, not one of each")
        pairs = (pairs_from_dirs(args.baseline, args.candidate) if bdir
                 else [(args.baseline, args.candidate)])
        over = []
        for b, c in pairs:
            over += compare_docs(load(b), load(c), args.stat, args.fail_above,
                                 sys.stdout)
    except InputError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    if over:
        print(f"slower than {args.fail_above}%: {', '.join(over)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
