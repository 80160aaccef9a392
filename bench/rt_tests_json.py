#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read pmqtest JSON files the way an rt-tests user would.

The same functions read the file written by rt-tests' pmqtest (--json) and
the one written by kbench's pmqtest, which carries rt-tests' layout next to
the kbench "rows".

  rt_tests_json.py summary FILE           one line per pair: min avg max samples
  rt_tests_json.py schema RTTESTS KBENCH  every key of the rt-tests file must
                                          exist in the kbench one, same type
  rt_tests_json.py rows FILE              the kbench rows (what compare reads)
  rt_tests_json.py compare DIR NCONF ROUNDS MAX_RATIO
                                          bench/pmqtest_vs_rttests.sh's table:
                                          DIR/cN.cfg, DIR/cN_rR_{theirs,ours}.json
"""
import json
import statistics
import sys
from typing import Any, Dict, List, Sequence, TextIO, Tuple


# A JSON document, and one pair's figures.
Doc = Dict[str, Any]
Pair = Dict[str, Any]


def load(path: str) -> Doc:
    with open(path, encoding="utf-8") as f:
        doc: Doc = json.load(f)
        return doc


def pairs(doc: Doc) -> List[Pair]:
    """Per pair: receiver min/avg/max (us), sender samples, timeouts."""
    out = []
    for key in sorted(doc["thread"], key=int):
        t = doc["thread"][key]
        rcv, snd = t["receiver"], t["sender"]
        out.append({
            "pair": int(key),
            "min": rcv["min"],
            "avg": rcv["avg"],
            "max": rcv["max"],
            "samples": snd["samples"],
            "timeouts": rcv["timeoutcount"],
            "interval": snd["interval"],
        })
    return out


def weighted_avg(doc: Doc) -> float:
    """Mean latency over all pairs, weighted by each pair's samples."""
    ps = pairs(doc)
    n = sum(p["samples"] for p in ps)
    return float(sum(p["avg"] * p["samples"] for p in ps) / n) if n \
        else float("nan")


def type_name(v: object) -> str:
    # JSON numbers: an int and a float are different types to a parser
    # that does int(...) or isinstance checks.
    return type(v).__name__


def schema_diff(ref: object, other: object, path: str = "$") -> List[str]:
    """Keys of @ref missing from @other or with another JSON type."""
    problems: List[str] = []
    if isinstance(ref, dict):
        if not isinstance(other, dict):
            return [f"{path}: object expected, got {type_name(other)}"]
        for k, v in ref.items():
            if k not in other:
                problems.append(f"{path}.{k}: missing")
            else:
                problems += schema_diff(v, other[k], f"{path}.{k}")
    elif type_name(ref) != type_name(other):
        problems.append(f"{path}: {type_name(ref)} expected, got {type_name(other)}")
    return problems


def generalise(doc: Doc) -> Doc:
    """Compare thread objects by shape: only thread "0" of each."""
    d = dict(doc)
    if "thread" in d and d["thread"]:
        d["thread"] = {"0": d["thread"]["0"]}
    return d


def pair_medians(docs: Sequence[Doc], i: int) -> Tuple[float, ...]:
    """Pair @i's min, avg, max and samples: the median over the rounds."""
    ps = [pairs(d)[i] for d in docs]
    return tuple(statistics.median(p[k] for p in ps)
                 for k in ("min", "avg", "max", "samples"))


def compare_config(theirs: Sequence[Doc], ours: Sequence[Doc], cfg: str,
                   rounds: int, max_ratio: float, out: TextIO = sys.stdout
                   ) -> int:
    """Print one configuration's table. Returns 0, or 1 on a ratio above
    @max_ratio, a layout difference or a file without kbench rows."""
    print(f"\n## pmqtest {cfg}  (median of {rounds} round(s), us)", file=out)
    print(f"{'pair':<6}{'rt-tests Min/Avg/Max':>24}{'kbench Min/Avg/Max':>24}"
          f"{'Avg ratio':>11}{'samples (rt/kb)':>18}", file=out)
    for i in range(len(pairs(theirs[0]))):
        t, o = pair_medians(theirs, i), pair_medians(ours, i)
        ratio = o[1] / t[1] if t[1] else float("nan")
        print(f"{i:<6}{t[0]:>8.0f}{t[1]:>8.2f}{t[2]:>8.0f}"
              f"{o[0]:>8.0f}{o[1]:>8.2f}{o[2]:>8.0f}{ratio:>11.3f}"
              f"{t[3]:>9.0f}/{o[3]:<8.0f}", file=out)
    wt = statistics.median(weighted_avg(d) for d in theirs)
    wo = statistics.median(weighted_avg(d) for d in ours)
    ratio = wo / wt
    status = 0 if ratio <= max_ratio else 1
    verdict = "ok" if not status else f"FAIL: above {max_ratio}"
    print(f"{'all':<6}{'':>8}{wt:>8.2f}{'':>8}{'':>8}{wo:>8.2f}{'':>8}"
          f"{ratio:>11.3f}   {verdict}", file=out)
    # Our file read by the same code, and laid out like theirs.
    problems = schema_diff(generalise(theirs[0]), generalise(ours[0]))
    for p in problems:
        print(f"# JSON difference: {p}", file=out)
    print("# JSON: both files read by rt_tests_json.pairs(); rt-tests keys "
          "and types in ours: "
          + ("same" if not problems else f"{len(problems)} difference(s)"),
          file=out)
    rows = ours[0].get("rows", [])
    print(f"# JSON: kbench rows in ours: {', '.join(r['name'] for r in rows)}",
          file=out)
    return 1 if status or problems or not rows else 0


def compare_dir(tmp: str, nconf: int, rounds: int, max_ratio: float) -> int:
    status = 0
    for c in range(nconf):
        with open(f"{tmp}/c{c}.cfg", encoding="utf-8") as f:
            cfg = f.read().strip()
        docs = {w: [load(f"{tmp}/c{c}_r{r}_{w}.json")
                    for r in range(1, rounds + 1)]
                for w in ("theirs", "ours")}
        status |= compare_config(docs["theirs"], docs["ours"], cfg, rounds,
                                 max_ratio)
    print("\nAvg ratio = kbench / rt-tests (lower is better). Both stop every "
          "pair when the first one reaches -l; 'all' is the sample-weighted "
          "mean.")
    return status


def main(argv: List[str]) -> int:
    if len(argv) == 3 and argv[1] == "summary":
        doc = load(argv[2])
        for p in pairs(doc):
            print(f"pair {p['pair']}: min {p['min']} avg {p['avg']:.2f} "
                  f"max {p['max']} samples {p['samples']} "
                  f"timeouts {p['timeouts']}")
        return 0
    if len(argv) == 4 and argv[1] == "schema":
        problems = schema_diff(generalise(load(argv[2])),
                               generalise(load(argv[3])))
        for problem in problems:
            print(problem)
        print("schema: " + ("same keys and types" if not problems else
                            f"{len(problems)} difference(s)"))
        return 1 if problems else 0
    if len(argv) == 3 and argv[1] == "rows":
        doc = load(argv[2])
        for r in doc["rows"]:
            print(f"{r['name']}: {r.get('status')} n={r.get('n')} "
                  f"mean={r.get('mean')} median={r.get('median')} "
                  f"unit={r.get('unit')}")
        return 0
    if len(argv) == 6 and argv[1] == "compare":
        return compare_dir(argv[2], int(argv[3]), int(argv[4]),
                           float(argv[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
