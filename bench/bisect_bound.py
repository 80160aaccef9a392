#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Does kbench bisect's printed error bound hold when kernels differ in
more than the change? Bisections of 7 commits replayed (kbtools.replay,
the tool's own decisions) under models of the clock and of the images,
for changes of 0, +5%, +20% and +60%, beside the bound they print.

    bench/bisect_bound.py [--runs N] [--seed S] [--model NAME]...

Prints one Markdown row per model and change: right answers, wrong
names, wrong ranges (without the culprit; without a change, any name or
narrowed range is wrong), undecided (the whole range, or a range
holding the culprit), no culprit (a change not found), the mean boots,
the mean bound printed, and whether the wrong answers stayed within it
(observed rate <= the mean bound). The last model breaks the bound's
assumption on purpose (an image effect shared by all of a commit's
builds now and then) and is marked so. docs/bisecting.md has the table.
"""

import argparse
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bisect as kb  # noqa: E402
from kbtools import cli, replay  # noqa: E402
from kbtools.output import write_stdout  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDED = os.path.join(TOP, "tests", "data", "bisect", "series_ramp.json")
EFFECTS = (0.0, 0.05, 0.2, 0.6)
# The models: the name, what it is, and whether it keeps the bound's
# assumption (a commit's builds share no image effect of their own).
MODELS = (
    (replay.Model("iid", noise=0.05), "log-normal noise, 5%"),
    (replay.Model("load", clock="load", noise=0.05),
     "a load that steps (x1-x1.8 every 10-40 boots) and a second mode "
     "(x1.25) boots stay in for a while, 5% noise"),
    (replay.Model("recorded", clock="series_ramp.json"),
     "the demo's TCG boots (series_ramp.json) in time order"),
    (replay.Model("one image low", one_low=True),
     "one build in 7 (of the first builds) sits low on every boot, as "
     "far below as bad is above good"),
    (replay.Model("30% half low", image_half=0.3),
     "30% of builds sit low on half of their boots"),
    (replay.Model("offsets", noise=0.02, offset_sd=0.02),
     "a quiet clock (2%) and an offset per build (sd 2%)"),
    (replay.Model("slot load", slot_bump=1.3, slots=(1, 2, 4, 7)),
     "a load that comes back at slots 1, 2, 4, 7 of every block (+30%)"),
)
OUTSIDE = (replay.Model("builds low 1 in 7", image_low=1 / 7),
           "every build (further builds too) sits low on every boot with "
           "probability 1/7: all three builds of the culprit do 1 time in "
           "343 (outside the bound's assumption)")


def row(name: str, effect: float, t: Dict[str, float], inside: bool) -> str:
    wrong = replay.wrong(t) / t["runs"]
    held = ("yes" if wrong <= t["bound"] else "NO") if inside else \
        ("no (outside)" if wrong > t["bound"] else "yes (outside)")
    return (f"| {name} | {effect:+.0%} | {t['right']:.0f} | "
            f"{t['wrong-name']:.0f} | {t['wrong-range']:.0f} | "
            f"{t['undecided']:.0f} | {t['none']:.0f} | {t['boots']:.0f} | "
            f"{wrong:.4f} | {t['bound']:.4f} | {held} |")


def table(runs: int, seed: int, names: Optional[Sequence[str]]) -> str:
    clock = {"series_ramp.json": replay.good_equivalent(
        replay.load_series(RECORDED))}
    st = kb.make_settings("/tree", "0", "7", "slower", kb.DEFAULT_ALPHA,
                          2.0, None, ["syscall_overhead:getsid"], seed=seed)
    rule = replay.new_rule(st)
    lines = [f"{runs} bisections of 7 commits per row (seed {seed}); "
             "wrong: its rate; bound: the mean bound printed", "",
             "| model | change | right | wrong name | wrong range | "
             "undecided | no culprit | boots | wrong | bound | held |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    models: List[Tuple[replay.Model, str, bool]] = [
        (m, d, True) for m, d in MODELS]
    models.append((OUTSIDE[0], OUTSIDE[1], False))
    for model, _, inside in models:
        if names and model.name not in names:
            continue
        for effect in EFFECTS:
            t = replay.tally(rule, model, effect, runs, seed,
                             recorded=clock)
            lines.append(row(model.name, effect, t, inside))
    lines += [""] + [f"- {m.name}: {d}" for m, d, _ in models
                     if not names or m.name in names]
    return "\n".join(lines) + "\n"


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=(
        "Replay bisections under models of the clock and of the images, "
        "and hold the rule to its printed bound."))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", action="append",
                    help="only this model (repeatable)")
    args = ap.parse_args(list(argv))
    known = [m.name for m, _ in MODELS] + [OUTSIDE[0].name]
    for name in args.model or []:
        if name not in known:
            raise cli.Error(f"--model '{name}': one of {', '.join(known)}")
    if args.runs < 1:
        raise cli.Error("--runs must be at least 1")
    write_stdout(table(args.runs, args.seed, args.model))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "bisect_bound.py"))
