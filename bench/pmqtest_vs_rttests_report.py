#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of bench/pmqtest_vs_rttests.sh: kbench pmqtest beside
rt-tests pmqtest, per configuration, with the ratio of their averages.

Run by bench/pmqtest_vs_rttests.sh, which passes: $tmp ${#configs[@]} $ROUNDS $MAX_RATIO
"""


def main():
    import statistics
    import sys

    import rt_tests_json as rj

    tmp, nconf, rounds, max_ratio = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    status = 0


    def med(vals):
        return statistics.median(vals)


    for c in range(nconf):
        cfg = open(f"{tmp}/c{c}.cfg").read().strip()
        docs = {w: [rj.load(f"{tmp}/c{c}_r{r}_{w}.json") for r in range(1, rounds + 1)]
                for w in ("theirs", "ours")}
        print(f"\n## pmqtest {cfg}  (median of {rounds} round(s), us)")
        print(f"{'pair':<6}{'rt-tests Min/Avg/Max':>24}{'kbench Min/Avg/Max':>24}"
              f"{'Avg ratio':>11}{'samples (rt/kb)':>18}")
        npairs = len(rj.pairs(docs["theirs"][0]))
        for i in range(npairs):
            row = {}
            for w in ("theirs", "ours"):
                ps = [rj.pairs(d)[i] for d in docs[w]]
                row[w] = (med([p["min"] for p in ps]), med([p["avg"] for p in ps]),
                          med([p["max"] for p in ps]), med([p["samples"] for p in ps]))
            t, o = row["theirs"], row["ours"]
            ratio = o[1] / t[1] if t[1] else float("nan")
            print(f"{i:<6}{t[0]:>8.0f}{t[1]:>8.2f}{t[2]:>8.0f}"
                  f"{o[0]:>8.0f}{o[1]:>8.2f}{o[2]:>8.0f}{ratio:>11.3f}"
                  f"{t[3]:>9.0f}/{o[3]:<8.0f}")
        wt = med([rj.weighted_avg(d) for d in docs["theirs"]])
        wo = med([rj.weighted_avg(d) for d in docs["ours"]])
        ratio = wo / wt
        verdict = "ok" if ratio <= max_ratio else f"FAIL: above {max_ratio}"
        if ratio > max_ratio:
            status = 1
        print(f"{'all':<6}{'':>8}{wt:>8.2f}{'':>8}{'':>8}{wo:>8.2f}{'':>8}"
              f"{ratio:>11.3f}   {verdict}")
        # Our file read by the same code, and laid out like theirs.
        problems = rj.schema_diff(rj.generalise(docs["theirs"][0]),
                                  rj.generalise(docs["ours"][0]))
        for p in problems:
            print(f"# JSON difference: {p}")
        print("# JSON: both files read by rt_tests_json.pairs(); rt-tests keys and types in ours: "
              + ("same" if not problems else f"{len(problems)} difference(s)"))
        rows = docs["ours"][0].get("rows", [])
        print(f"# JSON: kbench rows in ours: {', '.join(r['name'] for r in rows)}")
        if problems or not rows:
            status = 1
    print("\nAvg ratio = kbench / rt-tests (lower is better). Both stop every pair "
          "when the first one reaches -l; 'all' is the sample-weighted mean.")
    sys.exit(status)


if __name__ == "__main__":
    main()
