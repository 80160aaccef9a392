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
"""
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pairs(doc):
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


def weighted_avg(doc):
    """Mean latency over all pairs, weighted by each pair's samples."""
    ps = pairs(doc)
    n = sum(p["samples"] for p in ps)
    return sum(p["avg"] * p["samples"] for p in ps) / n if n else float("nan")


def type_name(v):
    # JSON numbers: an int and a float are different types to a parser
    # that does int(...) or isinstance checks.
    return type(v).__name__


def schema_diff(ref, other, path="$"):
    """Keys of @ref missing from @other or with another JSON type."""
    problems = []
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


def generalise(doc):
    """Compare thread objects by shape: only thread "0" of each."""
    d = dict(doc)
    if "thread" in d and d["thread"]:
        d["thread"] = {"0": d["thread"]["0"]}
    return d


def main(argv):
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
        for p in problems:
            print(p)
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
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
