#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Does kbench bisect's printed error bound hold when kernels differ in
more than the change? Bisections of 7 commits replayed (kbtools.replay,
the tool's own decisions) under models of the clock and of the images,
for changes of 0, +5%, +20% and +60%, beside the bound they print.

    bench/bisect_bound.py [--runs N] [--seed S] [--model NAME]...
                          [--builds tested|raw]
    bench/bisect_bound.py --confirmation [--runs N] [--seed S]

Prints one Markdown row per model and change: right answers, wrong
names, wrong ranges (without the culprit; without a change, any name or
narrowed range is wrong), undecided (the whole range, or a range
holding the culprit), no culprit (a change not found), the mean boots,
the mean bound printed, and whether the wrong answers stayed within it
(observed rate <= the mean bound). The last model breaks the bound's
assumption on purpose (an image effect shared by all of a commit's
builds now and then) and is marked so. --builds raw replays the
confirmation before its builds were tested against each other.

--confirmation replays the confirmation alone (decide_confirmation on
three builds of two commits, blocks in drawn orders, its looks after
blocks 2, 3 and 4), under both ways of counting the builds' spread:
how often it confirms a change carried by every build (its power), how
often it confirms commits that differ only by their images (its false
rate: one image of the later commit as far beyond as the change, or an
offset per build), and how often the test of one commit's builds
against each other shows identical images apart. docs/bisecting.md
has both tables.
"""

import argparse
import math
import os
import random
import sys
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bisect as kb  # noqa: E402
from kbtools import cli, replay, stats  # noqa: E402
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
    (replay.Model("offsets, loud clock", noise=0.10, offset_sd=0.03),
     "a loud clock (10%) and an offset per build (sd 3%) that its boots "
     "hide: a median of 8 boots moves 3.5%"),
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


def table(runs: int, seed: int, names: Optional[Sequence[str]],
          builds: str = "tested") -> str:
    clock = {"series_ramp.json": replay.good_equivalent(
        replay.load_series(RECORDED))}
    st = kb.make_settings("/tree", "0", "7", "slower", kb.DEFAULT_ALPHA,
                          2.0, None, ["syscall_overhead:getsid"], seed=seed,
                          builds=builds)
    rule = replay.new_rule(st)
    lines = [f"{runs} bisections of 7 commits per row (seed {seed}, "
             f"builds {builds}); wrong: its rate; bound: the mean bound "
             "printed", "",
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


# The confirmation's cases: name, the boots' noise (log sd), the change
# every build of the later commit carries, one image of it beyond by
# (a factor; 1: none), the offset per build (log sd).
CASES = (
    ("change x1.2, quiet", 0.05, 0.2, 1.0, 0.0),
    ("change x1.2, loud", 0.20, 0.2, 1.0, 0.0),
    ("change x2, loud", 0.20, 1.0, 1.0, 0.0),
    ("change x2, as run 1", 0.45, 1.0, 1.0, 0.0),
    ("change x3, as run 1", 0.45, 2.0, 1.0, 0.0),
    ("no change, identical images", 0.20, 0.0, 1.0, 0.0),
    ("one image x2 beyond, quiet", 0.05, 0.0, 2.0, 0.0),
    ("one image x2 beyond, as run 1", 0.45, 0.0, 2.0, 0.0),
    ("offsets sd 3%, quiet", 0.02, 0.0, 1.0, 0.03),
    ("offsets sd 3%, loud", 0.10, 0.0, 1.0, 0.03),
    ("offsets sd 10%, loud", 0.20, 0.0, 1.0, 0.10),
)


def confirm_once(st: Dict[str, object], noise: float, change: float,
                 beyond: float, offset: float, rng: random.Random
                 ) -> Tuple[str, List[float]]:
    """One confirmation: its verdict and the p of each commit's builds
    tested against each other at its last look."""
    level = {}
    for r in kb.LO_BUILDS + kb.HI_BUILDS:
        level[r] = math.exp(rng.gauss(0, offset)) if offset else 1.0
    for r in kb.HI_BUILDS:
        level[r] *= 1 + change
    level["hi"] *= beyond
    sim = replay.Replay(dict(st, seed=rng.randrange(1, 2 ** 32)),
                        replay.make_world(replay.Model("c"), 0.0, 7, rng))
    verdict, blocks = "more", 0
    while verdict == "more":
        while kb.blocks_done(sim.st, sim.boots, kb.CONFIRM) == blocks:
            role, block, _ = kb.next_boot(sim.st, sim.boots, kb.CONFIRM)
            sim.boots.append({"commit": role, "role": role,
                              "phase": kb.CONFIRM, "block": block,
                              "usable": 1})
            sim.figs.append({replay.KEY: [level[role] *
                                          math.exp(rng.gauss(0, noise))]})
        blocks += 1
        verdict, _ = kb.decide_confirmation(sim.st, sim.figures(),
                                            replay.SIGNAL, blocks)
    fig = sim.figures().blocks(kb.CONFIRM, replay.KEY)
    ps = [stats.blocked_groups_p([[bl.get(r, []) for r in b]
                                  for bl in fig.values()])
          for b in (kb.LO_BUILDS, kb.HI_BUILDS)]
    return verdict, ps


def confirmation_table(runs: int, seed: int) -> str:
    """The confirmation alone, under both ways of counting the builds."""
    lines = [f"{runs} confirmations per row (seed {seed}); confirmed: "
             "their share under each rule; shown apart: the share of "
             "commits whose identical builds the within-block test showed "
             "apart (p <= {:g})".format(kb.IMAGES_SHOWN), "",
             "| case | boots' noise | confirmed, raw | confirmed, tested | "
             "identical builds shown apart |",
             "|---|---:|---:|---:|---:|"]
    for name, noise, change, beyond, offset in CASES:
        rates = []
        shown = same = 0
        for rule in ("raw", "tested"):
            st = kb.make_settings("/tree", "0", "7", "slower",
                                  kb.DEFAULT_ALPHA, 2.0, None,
                                  ["syscall_overhead:getsid"], seed=seed,
                                  builds=rule)
            rng = random.Random(f"{seed}/{name}")
            confirmed = 0
            for _ in range(runs):
                verdict, ps = confirm_once(st, noise, change, beyond,
                                           offset, rng)
                confirmed += verdict == "confirmed"
                if rule == "tested" and not offset:
                    # lo's builds are identical; hi's too unless one
                    # image sits beyond.
                    tested = ps if beyond == 1.0 else ps[:1]
                    same += len(tested)
                    shown += sum(p <= kb.IMAGES_SHOWN for p in tested)
            rates.append(confirmed / runs)
        apart = f"{shown / same:.3f}" if same else "-"
        lines.append(f"| {name} | {noise:.0%} | {rates[0]:.3f} | "
                     f"{rates[1]:.3f} | {apart} |")
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
    ap.add_argument("--builds", choices=kb.BUILDS_RULES, default="tested",
                    help="how the confirmation counts the builds' spread")
    ap.add_argument("--confirmation", action="store_true",
                    help="the confirmation alone, under both rules")
    args = ap.parse_args(list(argv))
    known = [m.name for m, _ in MODELS] + [OUTSIDE[0].name]
    for name in args.model or []:
        if name not in known:
            raise cli.Error(f"--model '{name}': one of {', '.join(known)}")
    if args.runs < 1:
        raise cli.Error("--runs must be at least 1")
    if args.confirmation:
        write_stdout(confirmation_table(args.runs, args.seed))
        return 0
    write_stdout(table(args.runs, args.seed, args.model, args.builds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "bisect_bound.py"))
