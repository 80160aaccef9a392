# SPDX-License-Identifier: GPL-2.0
"""Bisections replayed on recorded boots: how often a rule names the
wrong commit, brackets a range without the culprit, or gives up.

A series is the figures of real boots of a good and a bad kernel taken
in turn over time (bench/bisect_boots.py records one, with the host's
load changing as it goes). A replay bisects a line of commits whose
culprit is known: a commit before it boots like good, from it on like
bad. Its boots take, in time order, the recorded boots of that kind
around the same moment of the series, so that the drift of the load and
the likeness of boots close in time are the recording's, and a random
start and a small jitter make every replay another resample.

  replay(series, settings, commits, culprit, rng)  the new rule
                                                   (kbtools.bisect)
  replay_old(series, commits, culprit, rng)        the rule before it:
      a U test at alpha 0.01 after every boot, a step's boots against
      every endpoint boot of the run
"""

import json
import random
from typing import Any, Dict, List, Optional, Set, Tuple

from kbtools import bisect as kb
from kbtools import compare

KEY = ("syscall_overhead", "getsid")
# A replay draws among this many recorded boots of the wanted kind
# around its moment.
JITTER = 3


def load_series(path: str) -> List[Dict[str, Any]]:
    """The boots of a recorded series: kind ('good' or 'bad'), value."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    boots = doc["boots"] if isinstance(doc, dict) else doc
    return [b for b in boots if b.get("value") is not None]


class Source:
    """Recorded boots handed out in time order: each simulated boot
    moves the clock one recorded boot on and takes one of the JITTER
    nearest boots of its kind from there (the series wraps around)."""

    def __init__(self, series: List[Dict[str, Any]], rng: random.Random):
        self.series = series
        self.rng = rng
        self.clock = rng.randrange(len(series))
        self.by_kind = {k: [i for i, b in enumerate(series)
                            if b["kind"] == k] for k in ("good", "bad")}

    def boot(self, kind: str) -> float:
        self.clock = (self.clock + 1) % len(self.series)
        idx = self.by_kind[kind]
        after = [i for i in idx if i >= self.clock] + \
            [i + len(self.series) for i in idx if i < self.clock]
        near = sorted(after)[:JITTER]
        pick = self.rng.choice(near) % len(self.series)
        return float(self.series[pick]["value"])


class Line:
    """A line of commits 0 (good) .. n (bad), culprit c: commit i boots
    like bad when i >= c."""

    def __init__(self, n: int, culprit: int):
        self.n = n
        self.culprit = culprit

    def kind(self, i: int) -> str:
        return "bad" if i >= self.culprit else "good"


def _git_next(lo: int, hi: int, skipped: Set[int]) -> Optional[int]:
    """The commit git bisect would test in (lo, hi): the untested one
    nearest the middle."""
    cands = [i for i in range(lo + 1, hi) if i not in skipped]
    if not cands:
        return None
    mid = (lo + hi) / 2
    return min(cands, key=lambda i: (abs(i - mid), i))


class NewRule:
    """kbtools.bisect's decisions on simulated boots."""

    def __init__(self, settings: Dict[str, Any], line: Line, source: Source):
        self.st = settings
        self.line = line
        self.source = source
        self.boots: List[Dict[str, Any]] = []
        self.figs: List[Dict[Tuple[str, str], List[float]]] = []

    def figures(self) -> kb.Figures:
        return kb.Figures(self.boots, self.figs)

    def boot_block(self, phase: str, commit: int) -> None:
        while True:
            role, block, last = kb.next_boot(self.st, self.boots, phase)
            i = {"good": 0, "bad": self.line.n, "step": commit}[role]
            self.boots.append({"commit": str(i), "role": role,
                               "phase": phase, "block": block, "usable": 1})
            self.figs.append({KEY: [self.source.boot(self.line.kind(i))]})
            if last:
                return

    def endpoints(self) -> Optional[List[Dict[str, Any]]]:
        """The signal rows; [] when the endpoints stayed undecided, None
        when they were not shown to differ."""
        while True:
            done = kb.blocks_done(self.st, self.boots, "endpoints")
            if done:
                verdict, signal, _ = kb.decide_endpoints(
                    self.st, self.figures(), done)
                if verdict == "differ":
                    return signal
                if verdict == "none":
                    return None
                if verdict == "undecided":
                    return []
            self.boot_block("endpoints", 0)

    def step(self, commit: int, signal: List[Dict[str, Any]]) -> Dict[str, Any]:
        phase = str(commit)
        while True:
            done = kb.blocks_done(self.st, self.boots, phase)
            if done:
                c, detail = kb.decide_step(self.st, self.figures(), signal,
                                           phase, done)
                if c != "more":
                    return {"commit": phase, "verdict": c,
                            "p_bad": detail.get("p_bad"),
                            "p_good": detail.get("p_good")}
            self.boot_block(phase, commit)


def _answer(lo: int, hi: int, skipped: Set[int], steps: List[Dict[str, Any]]
            ) -> Tuple[str, List[int]]:
    """('culprit', [i]) or ('range', [...]) as bisect_run prints it,
    widened where a decided step contradicts itself."""
    bad_steps = kb.contradictions(steps)
    if bad_steps:
        distrust = {s["commit"] for s in bad_steps}
        goods = [0] + [int(s["commit"]) for s in steps
                       if s["verdict"] == "good" and s["commit"] not in
                       distrust]
        bads = [hi] + [int(s["commit"]) for s in steps
                       if s["verdict"] == "bad" and s["commit"] not in
                       distrust]
        return "range", list(range(max(goods) + 1, min(bads) + 1))
    left = [i for i in range(lo + 1, hi) if i in skipped]
    if not left:
        return "culprit", [hi]
    return "range", left + [hi]


def replay(series: List[Dict[str, Any]], settings: Dict[str, Any], n: int, culprit: int,
           rng: random.Random) -> Dict[str, Any]:
    """One bisection of commits 0..n under the new rule."""
    line = Line(n, culprit)
    sim = NewRule(settings, line, Source(series, rng))
    signal = sim.endpoints()
    if signal is None:
        return {"answer": "none", "commits": [], "boots": len(sim.boots)}
    if not signal:
        # The endpoints undecided: the whole range is the answer.
        return {"answer": "range", "commits": list(range(1, n + 1)),
                "boots": len(sim.boots)}
    lo, hi, steps = 0, n, []
    skipped: Set[int] = set()
    while True:
        i = _git_next(lo, hi, skipped)
        if i is None:
            break
        s = sim.step(i, signal)
        steps.append(s)
        if s["verdict"] == "good":
            lo = i
        elif s["verdict"] == "bad":
            hi = i
        else:
            skipped.add(i)
    answer, commits = _answer(lo, hi, skipped, steps)
    return {"answer": answer, "commits": commits, "boots": len(sim.boots),
            "error": kb.error_bound(settings, steps)}


def replay_old(series: List[Dict[str, Any]], n: int, culprit: int,
               rng: random.Random, alpha: float = 0.01,
               threshold: float = 2.0, least: int = 5,
               most: int = 8) -> Dict[str, Any]:
    """One bisection under the rule before blocks: a U test at alpha
    after every boot, a step against every endpoint boot of the run."""
    line = Line(n, culprit)
    src = Source(series, rng)
    vals: Dict[int, List[float]] = {0: [], n: []}
    boots = 0

    def boot(i: int) -> None:
        nonlocal boots
        boots += 1
        vals.setdefault(i, []).append(src.boot(line.kind(i)))

    def verdict(a: int, b: int) -> str:
        return compare.row_verdict(vals[a], vals[b], threshold,
                                   alpha).verdict.value
    order = 0
    while True:
        for i in ((0, n) if order % 2 == 0 else (n, 0)):
            boot(i)
        order += 1
        if len(vals[0]) >= least:
            if verdict(0, n) == "slower":
                break
            if len(vals[0]) >= most:
                return {"answer": "none", "commits": [], "boots": boots}
    lo, hi, turn = 0, n, 0
    skipped: Set[int] = set()
    while True:
        nxt = _git_next(lo, hi, skipped)
        if nxt is None:
            break
        i = nxt
        c = None
        while c is None:
            boot(i)
            k = len(vals[i])
            if k % 2 == 0:
                turn += 1
                boot(0 if turn % 2 else n)
            if k < least:
                continue
            if verdict(0, i) == "slower":
                c = "bad"
            elif verdict(n, i) == "faster":
                c = "good"
            elif k >= most:
                c = "skip"
        if c == "good":
            lo = i
        elif c == "bad":
            hi = i
        else:
            skipped.add(i)
    answer, commits = _answer(lo, hi, skipped, [])
    return {"answer": answer, "commits": commits, "boots": boots}


def judge(outcome: Dict[str, Any], culprit: int) -> str:
    """right, wrong-name, wrong-range, undecided (a range holding the
    culprit) or none (no culprit found)."""
    if outcome["answer"] == "none":
        return "none"
    if outcome["answer"] == "culprit":
        return "right" if outcome["commits"] == [culprit] else "wrong-name"
    return "undecided" if culprit in outcome["commits"] else "wrong-range"


def tally(series: List[Dict[str, Any]], settings: Optional[Dict[str, Any]], replays: int,
          seed: int, n: int = 7) -> Dict[str, float]:
    """Counts of judge()'s outcomes over `replays` bisections of n
    commits with the culprit drawn at random, and the mean boots; the
    new rule with settings, the old one with None."""
    rng = random.Random(seed)
    counts: Dict[str, float] = {k: 0 for k in ("right", "wrong-name",
                                                "wrong-range", "undecided",
                                                "none")}
    boots = 0
    for _ in range(replays):
        culprit = rng.randint(1, n)
        out = (replay(series, settings, n, culprit, rng) if settings
               else replay_old(series, n, culprit, rng))
        counts[judge(out, culprit)] += 1
        boots += out["boots"]
    counts["boots"] = boots / replays
    return counts


def aa_false_rate(series: List[Dict[str, Any]], boots: int, trials: int,
                  seed: int, kind: str = "good") -> float:
    """The fraction of replayed A/A comparisons of one kernel (its
    recorded boots, consecutive in time from a random start, given to the
    two sides in ABBA order as run_all.sh --vs-kernel boots them) that
    compare's rule calls slower or faster: its false-verdict rate under
    the drift the series recorded (a load that changes midway, ...)."""
    rng = random.Random(seed)
    runs = [b["value"] for b in series if b["kind"] == kind]
    wrong = 0
    for _ in range(trials):
        start = rng.randrange(len(runs))
        sides: Tuple[List[float], List[float]] = ([], [])
        for k in range(2 * boots):
            v = runs[(start + k) % len(runs)]
            # ABBA: A B, B A, A B, ...
            sides[(k + k // 2) % 2].append(v)
        e = compare.row_verdict(sides[0], sides[1])
        wrong += e.verdict in (compare.Verdict.SLOWER,
                               compare.Verdict.FASTER)
    return wrong / trials
