# SPDX-License-Identifier: GPL-2.0
"""Bisections replayed on simulated and recorded boots: how often a rule
names the wrong commit, brackets a range without the culprit, or gives
up, beside the error it prints.

A replay bisects a line of commits 0 (good) .. n (bad) whose culprit is
known (or that has none) with the decisions of kbtools.bisect, the very
functions kbench bisect calls: its blocks and their drawn order
(next_boot; each replayed bisection with a seed of its own, as each
real one draws), decide_endpoints, decide_step, the reading of the
steps (answer) and the confirmation on three builds of the answer's
commits (decide_confirmation), and its printed bound (error_bound).
Only git is simulated: the next commit is the one git bisect would
test.

A World says what a boot of a build of a commit reads. Its figures come
from a Clock, a good kernel's boots in time order: a recorded series
(bench/bisect_boots.py record; a bad kernel's recorded boots scaled to
good by the ratio of the medians) or a generated one (noise, load that
steps, modes). Each simulated boot takes the clock's next figure, from a
random start: contiguous runs of time, the drift and the likeness of
boots close in time the recording's, and never the same recorded boot
twice within a block (a block is shorter than the series). The World
then applies what the commit and its image do: the change from the
culprit on, an image that sits in a low mode on every boot (or on half
of them), an offset per build, a bump locked to the first boots of every
block. A further build of a commit draws its image effect anew: that
is the assumption the confirmation rests on.

  replay(world, settings, rng)          the rule (settings: kbtools.bisect
                                        .make_settings; order 'fixed' and
                                        confirm False are the rule before)
  replay_pooled(world, rng)             the rule before blocks: a U test
                                        at 0.01 after every boot, a step's
                                        boots against every endpoint boot
  recorded_confirmation(boots, st)      a real bisection's confirmation
                                        boots judged again, look by look
  exact_tally(path, st, runs, seed)     exact bisections (--icount) on
                                        recorded exact boots of a good and
                                        a bad kernel (load_exact)

An ExactWorld's boots are recorded boots of an exact guest: each a row's
figures of its runs (median, mode and the mode's share), a good kernel's
before the culprit and a bad one's from it on, drawn at random (under
icount a boot's figures do not follow the host's time). Its rows go to
the rule as they were read, so that the exact rule judges each by the
figure compare would (kbtools.exact.judged_figure); with modes False,
by the medians alone, the rule before issue 46's bisection.
"""

import json
import math
import random
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, List, Optional, Sequence, Set, Tuple,
                    Union)

from kbtools import bisect as kb
from kbtools import compare, results, stats

KEY = ("syscall_overhead", "getsid")
SIGNAL = [{"test": KEY[0], "row": KEY[1]}]
OUTCOMES = ("right", "wrong-name", "wrong-range", "undecided", "none")


def load_series(path: str) -> List[Dict[str, Any]]:
    """The usable boots of a recorded series: kind ('good' or 'bad'),
    value, in time order."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    boots = doc["boots"] if isinstance(doc, dict) else doc
    return [b for b in boots if b.get("value") is not None]


def good_equivalent(series: List[Dict[str, Any]]) -> List[float]:
    """A recorded series as one good kernel's figures in time order: a
    bad boot scaled by the ratio of good's median to bad's."""
    by = {k: [float(b["value"]) for b in series if b["kind"] == k]
          for k in ("good", "bad")}
    scale = (stats.median(by["good"]) / stats.median(by["bad"])
             if by["good"] and by["bad"] else 1.0)
    return [float(b["value"]) * (scale if b["kind"] == "bad" else 1.0)
            for b in series]


class Clock:
    """A good kernel's figures in time order, handed out one after
    another from a random start (wrapping around)."""

    def __init__(self, values: Sequence[float], rng: random.Random):
        if len(values) < len(kb.STEP_BLOCK):
            raise ValueError(f"a clock needs at least {len(kb.STEP_BLOCK)} "
                             f"figures (a block), not {len(values)}")
        self.values = list(values)
        self.at = rng.randrange(len(self.values))

    def next(self) -> float:
        self.at = (self.at + 1) % len(self.values)
        return self.values[self.at]


def generated_clock(kind: str, length: int, noise: float,
                    rng: random.Random) -> List[float]:
    """A generated good kernel's figures: 'iid' log-normal noise, or
    'load': the same under a load that steps every 10-40 boots between
    x1, x1.3 and x1.8, with a second mode (x1.25) that boots fall into
    and stay in for a while (a two-state Markov chain)."""
    out, level, mode, left = [], 1.0, False, 0
    for _ in range(length):
        if kind == "load":
            if left <= 0:
                level, left = rng.choice((1.0, 1.3, 1.8)), rng.randint(10, 40)
            left -= 1
            if rng.random() < 0.1:
                mode = not mode
        out.append(level * (1.25 if mode else 1.0) *
                   math.exp(rng.gauss(0, noise)))
    return out


@dataclass
class Model:
    """How kernels boot beyond the clock: the share of builds that sit
    low on every boot (image_low) or on half of their boots (image_half),
    by `low` (None: as far below as bad is above good, so that a bad
    image boots like good; x0.85 without a change), or exactly one image
    among the first builds of the commits that sits low (one_low: the
    further builds, whose layout differs, do not), an offset per build
    (offset_sd, a log-normal sd), and a factor on the boots in some
    slots of every block (counted from 0; slot_bump: a transient, or a
    load, that comes back at the same place of each block)."""
    name: str
    clock: str = "iid"           # iid, load, or a recorded series' name
    noise: float = 0.05
    image_low: float = 0.0
    image_half: float = 0.0
    one_low: bool = False
    low: Optional[float] = None
    offset_sd: float = 0.0
    slot_bump: float = 1.0
    slots: Tuple[int, ...] = (1, 2)


@dataclass
class World:
    """Commits 0..n, the change (effect: +0.2 is 20% slower) from the
    culprit on (None: no change), the model of their images and the
    clock."""
    n: int
    culprit: Optional[int]
    effect: float
    model: Model
    clock: Clock
    rng: random.Random
    images: Dict[Tuple[int, int], Tuple[float, float]] = field(
        default_factory=dict)
    low_commit: int = -1
    key: Tuple[str, str] = KEY
    header: Optional[results.Header] = None

    def __post_init__(self) -> None:
        if self.model.one_low:
            self.low_commit = self.rng.randint(0, self.n)

    def image(self, commit: int, build: int) -> Tuple[float, float]:
        """(factor, share of its boots it applies to) of one build."""
        if (commit, build) not in self.images:
            m, r = self.model, self.rng
            low = m.low if m.low is not None else (
                1 / (1 + self.effect) if self.effect > 0 else 0.85)
            factor, share = math.exp(r.gauss(0, m.offset_sd)) \
                if m.offset_sd else 1.0, 1.0
            draw = r.random()
            if (commit, build) == (self.low_commit, 1) or \
                    draw < m.image_low:
                factor *= low
            elif draw < m.image_low + m.image_half:
                factor, share = factor * low, 0.5
            self.images[(commit, build)] = (factor, share)
        return self.images[(commit, build)]

    def boot(self, commit: int, build: int, slot: int) -> float:
        v = self.clock.next()
        if self.culprit is not None and commit >= self.culprit:
            v *= 1 + self.effect
        factor, share = self.image(commit, build)
        if share >= 1 or self.rng.random() < share:
            v *= factor
        if slot in self.model.slots:
            v *= self.model.slot_bump
        return v


# One boot of a recorded exact row: its runs' figures (median, mode,
# mode_share), in instructions.
ExactBoot = List[Dict[str, float]]


@dataclass
class ExactWorld:
    """Commits 0..n of an exact bisection of row key (in the setup its
    header says): a boot of a commit reads one of good's recorded boots,
    drawn at random, and from the culprit on (None: no change) one of
    bad's."""
    n: int
    culprit: Optional[int]
    good: Sequence[ExactBoot]
    bad: Sequence[ExactBoot]
    rng: random.Random
    key: Tuple[str, str]
    header: Optional[results.Header] = None

    def boot(self, commit: int, build: int, slot: int) -> results.Row:
        changed = self.culprit is not None and commit >= self.culprit
        row = results.Row(self.key[1])
        for run in self.rng.choice(self.bad if changed else self.good):
            row.add_rep(results.Repetition.from_json(dict(run)))
        return row


def load_exact(path: str) -> Tuple[Tuple[str, str], results.Header,
                                   List[ExactBoot], List[ExactBoot]]:
    """A recorded exact row (tests/data/bisect/exact_*.json): its key,
    the header of its boots' setup, good's boots and bad's."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    m, k = doc["machine"], doc.get("kernel") or {}
    header = results.Header(machine=results.Machine(
        arch=m["arch"], guest=m.get("guest"),
        clock_mode=results.ClockMode(m["clock_mode"]),
        icount_shift=m.get("icount_shift"),
        icount_settings=m.get("icount_settings")),
        kernel=results.Kernel(release=k.get("release"),
                              version=k.get("version")))
    return (doc["test"], doc["row"]), header, doc["good"], doc["bad"]


def make_world(model: Model, effect: float, n: int, rng: random.Random,
               recorded: Optional[Dict[str, List[float]]] = None) -> World:
    """A world of n commits: the culprit drawn among 1..n (none when the
    effect is 0), its clock the model's."""
    culprit = rng.randint(1, n) if effect else None
    if recorded and model.clock in recorded:
        values = recorded[model.clock]
    else:
        values = generated_clock(model.clock, 400, model.noise, rng)
    return World(n, culprit, effect, model, Clock(values, rng), rng)


def _git_next(lo: int, hi: int, skipped: Set[int]) -> Optional[int]:
    """The commit git bisect would test in (lo, hi): the untested one
    nearest the middle."""
    cands = [i for i in range(lo + 1, hi) if i not in skipped]
    if not cands:
        return None
    mid = (lo + hi) / 2
    return min(cands, key=lambda i: (abs(i - mid), i))


def _between(goods: List[str], bads: List[str]) -> List[str]:
    """kbench bisect's git rev-list on a line of numbered commits."""
    lo = max(int(g) for g in goods)
    hi = min(int(b) for b in bads)
    return [str(i) for i in range(lo + 1, hi + 1)]


def _parent(commit: str) -> str:
    return str(int(commit) - 1)


class Replay:
    """One bisection on a world, by kbtools.bisect's decisions (an exact
    world's rows with their modes, or by their medians alone when modes
    is False)."""

    def __init__(self, settings: Dict[str, Any],
                 world: Union[World, ExactWorld], modes: bool = True):
        self.st = settings
        self.world = world
        self.modes = modes
        self.key = world.key
        self.signal = [{"test": self.key[0], "row": self.key[1]}]
        self.boots: List[Dict[str, Any]] = []
        self.figs: List[Dict[Tuple[str, str], List[float]]] = []
        self.rows: List[Dict[Tuple[str, str], kb.Measured]] = []
        self.ans: Optional[kb.Answer] = None

    def figures(self) -> kb.Figures:
        headers = [self.world.header] if self.world.header else []
        return kb.Figures(self.boots, self.figs, headers,
                          self.rows if self.modes else None)

    def commit_of(self, role: str, step: int) -> int:
        if role in kb.LO_BUILDS + kb.HI_BUILDS:
            assert self.ans is not None
            return int(self.ans.lo if role in kb.LO_BUILDS else self.ans.hi)
        return {"good": 0, "bad": self.world.n, "step": step}[role]

    def boot_block(self, phase: str, step: int = 0) -> None:
        slot = 0
        while True:
            role, block, last = kb.next_boot(self.st, self.boots, phase)
            i = self.commit_of(role, step)
            self.boots.append({"commit": str(i), "role": role,
                               "phase": phase, "block": block, "usable": 1})
            got = self.world.boot(i, kb.build_of(role), slot)
            if isinstance(got, results.Row):
                self.figs.append({self.key: got.values()})
                self.rows.append({self.key: (got, 1.0)})
            else:
                self.figs.append({self.key: [got]})
                self.rows.append({})
            slot += 1
            if last:
                return

    def endpoints(self) -> str:
        """decide_endpoints' last verdict: differ, none or undecided."""
        while True:
            done = kb.blocks_done(self.st, self.boots, "endpoints")
            if done:
                verdict, _, _ = kb.decide_endpoints(self.st, self.figures(),
                                                    done)
                if verdict != "more":
                    return verdict
            self.boot_block("endpoints")

    def step(self, commit: int) -> Dict[str, Any]:
        phase = str(commit)
        while True:
            done = kb.blocks_done(self.st, self.boots, phase)
            if done:
                c, detail = kb.decide_step(self.st, self.figures(),
                                           self.signal, phase, done)
                if c != "more":
                    return {"commit": phase, "verdict": c,
                            "p_bad": detail.get("p_bad"),
                            "p_good": detail.get("p_good")}
            self.boot_block(phase, commit)

    def confirm(self, ans: kb.Answer) -> str:
        self.ans = ans
        while True:
            done = kb.blocks_done(self.st, self.boots, kb.CONFIRM)
            verdict, _ = kb.decide_confirmation(self.st, self.figures(),
                                                self.signal, done)
            if verdict != "more":
                return verdict
            self.boot_block(kb.CONFIRM)


def replay(world: Union[World, ExactWorld], settings: Dict[str, Any],
           modes: bool = True) -> Dict[str, Any]:
    """One bisection of the world's commits: its answer ('culprit',
    'range': one that narrows the commits, 'undecided': the whole range,
    'none'), the commits it names, the boots and the bound it prints
    (None in exact mode)."""
    n = world.n
    sim = Replay(settings, world, modes)
    whole = list(range(1, n + 1))
    verdict = sim.endpoints()
    if verdict != "differ":
        return {"answer": "none" if verdict == "none" else "undecided",
                "commits": [] if verdict == "none" else whole,
                "boots": len(sim.boots), "error": settings["alpha"]}
    lo, hi = 0, n
    steps: List[Dict[str, Any]] = []
    skipped: Set[int] = set()
    while True:
        i = _git_next(lo, hi, skipped)
        if i is None:
            break
        s = sim.step(i)
        steps.append(s)
        if s["verdict"] == "good":
            lo = i
        elif s["verdict"] == "bad":
            hi = i
        else:
            skipped.add(i)
    ans = kb.answer(steps, "0", str(n), _between, _parent)
    commits = [int(c) for c in ans.commits]
    kind = "culprit" if ans.culprit else "range"
    if kb.needs_confirmation(settings, ans):
        confirmed = sim.confirm(ans)
        steps.append({"commit": ans.hi, "verdict": "confirmed"
                      if confirmed == "confirmed" else "unconfirmed"})
        if confirmed != "confirmed":
            kind, commits = "undecided", whole
    elif commits == whole and kind == "range":
        kind = "undecided"
    return {"answer": kind, "commits": commits, "boots": len(sim.boots),
            "error": kb.error_bound(settings, steps)}


def recorded_confirmation(boots: List[Dict[str, Any]],
                          settings: Dict[str, Any]
                          ) -> List[Tuple[int, str, Dict[str, Any]]]:
    """A real bisection's confirmation judged again under settings (a
    rule): its boots (role, block, value: a boot's figure of KEY, in
    boot order) given to decide_confirmation look by look, as kbench
    bisect would have, up to its verdict or the last recorded block.
    (blocks done, verdict, detail) of each look."""
    looks = []
    last = max((int(b["block"]) for b in boots), default=0)
    for done in range(1, last + 1):
        taken = [b for b in boots if int(b["block"]) <= done]
        fig = kb.Figures([{"commit": b["role"], "role": b["role"],
                           "phase": kb.CONFIRM, "block": int(b["block"]),
                           "usable": 1} for b in taken],
                         [{KEY: [float(b["value"])]} for b in taken])
        verdict, detail = kb.decide_confirmation(settings, fig, SIGNAL, done)
        looks.append((done, verdict, detail))
        if verdict != "more":
            break
    return looks


def replay_pooled(world: World, alpha: float = 0.01, threshold: float = 2.0,
                  least: int = 5, most: int = 8) -> Dict[str, Any]:
    """One bisection under the rule before blocks: a U test at alpha
    after every boot, a step against every endpoint boot of the run. Its
    bound is the one kbench bisect prints for as many decisions."""
    n = world.n
    vals: Dict[int, List[float]] = {0: [], n: []}
    boots = 0

    def boot(i: int) -> None:
        nonlocal boots
        boots += 1
        vals.setdefault(i, []).append(world.boot(i, 1, len(kb.STEP_BLOCK)))

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
                return {"answer": "none", "commits": [], "boots": boots,
                        "error": kb.DEFAULT_ALPHA}
    lo, hi, turn, decided = 0, n, 0, 1
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
        decided += c != "skip"
        if c == "good":
            lo = i
        elif c == "bad":
            hi = i
        else:
            skipped.add(i)
    commits = [i for i in range(lo + 1, hi) if i in skipped] + [hi]
    return {"answer": "culprit" if len(commits) == 1 else "range",
            "commits": commits, "boots": boots,
            "error": kb.DEFAULT_ALPHA * decided}


def judge(outcome: Dict[str, Any], culprit: Optional[int]) -> str:
    """right, wrong-name, wrong-range, undecided or none. With a culprit:
    right when named, undecided for a range holding it, none when no
    change was found (a miss, not a wrong answer). Without one (no
    change): none is right, a name or a narrowed range is wrong, the
    whole range undecided."""
    kind = outcome["answer"]
    if culprit is None:
        return {"none": "right", "culprit": "wrong-name",
                "range": "wrong-range"}.get(kind, "undecided")
    if kind == "none":
        return "none"
    if kind == "culprit":
        return "right" if outcome["commits"] == [culprit] else "wrong-name"
    return "undecided" if culprit in outcome["commits"] else "wrong-range"


Rule = Callable[[World], Dict[str, Any]]


def new_rule(settings: Dict[str, Any]) -> Rule:
    """The rule of these settings; each bisection draws the seed of its
    blocks' orders anew, as kbench bisect does (one seed for every
    replay would hold one set of orders to every world: a load locked
    to some slots would meet the same order each time)."""
    def rule(world: World) -> Dict[str, Any]:
        return replay(world, dict(settings,
                                  seed=world.rng.randrange(1, 2 ** 32)))
    return rule


def pooled_rule() -> Rule:
    return lambda world: replay_pooled(world)


def tally(rule: Rule, model: Model, effect: float, runs: int, seed: int,
          n: int = 7, recorded: Optional[Dict[str, List[float]]] = None
          ) -> Dict[str, float]:
    """Counts of judge()'s outcomes over `runs` bisections of n commits
    (the culprit drawn at random), the mean boots and the mean bound
    printed."""
    rng = random.Random(seed)
    counts: Dict[str, float] = {k: 0 for k in OUTCOMES}
    boots = bound = 0.0
    for _ in range(runs):
        world = make_world(model, effect, n, rng, recorded)
        out = rule(world)
        counts[judge(out, world.culprit)] += 1
        boots += out["boots"]
        bound += out["error"] or 0.0
    counts["boots"] = boots / runs
    counts["bound"] = bound / runs
    counts["runs"] = runs
    return counts


def exact_tally(path: str, settings: Dict[str, Any], runs: int, seed: int,
                n: int = 7, modes: bool = True) -> Dict[str, float]:
    """Counts of judge()'s outcomes over `runs` exact bisections (settings
    in mode icount) of n commits on the recorded exact row of path
    (load_exact), the culprit drawn at random, each with a seed of its
    own; modes False: the rule judging by medians alone."""
    key, header, good, bad = load_exact(path)
    rng = random.Random(seed)
    counts: Dict[str, float] = {k: 0 for k in OUTCOMES}
    for _ in range(runs):
        world = ExactWorld(n, rng.randint(1, n), good, bad, rng, key, header)
        out = replay(world, dict(settings,
                                 seed=rng.randrange(1, 2 ** 32)), modes)
        counts[judge(out, world.culprit)] += 1
    counts["runs"] = runs
    return counts


def wrong(t: Dict[str, float]) -> float:
    return t["wrong-name"] + t["wrong-range"]


def within_bound(t: Dict[str, float], confidence: float = 0.99) -> bool:
    """Whether a tally's wrong answers are no more than its mean printed
    bound lets them be: at most the count that a binomial of that rate
    exceeds with probability below 1 - confidence."""
    return wrong(t) <= stats.binomial_quantile(int(t["runs"]), t["bound"],
                                               confidence)


def aa_false_rate(series: List[Dict[str, Any]], boots: int, trials: int,
                  seed: int, kind: str = "good") -> float:
    """The fraction of replayed A/A comparisons of one kernel (its
    recorded boots, consecutive in time from a random start, given to the
    two sides in ABBA order as run_all.sh --vs-kernel boots them) that
    compare's rule calls slower or faster: its false-verdict rate under
    the drift the series recorded (a load that changes midway, ...)."""
    rng = random.Random(seed)
    runs = [b["value"] for b in series if b["kind"] == kind]
    wrong_verdicts = 0
    for _ in range(trials):
        start = rng.randrange(len(runs))
        sides: Tuple[List[float], List[float]] = ([], [])
        for k in range(2 * boots):
            v = runs[(start + k) % len(runs)]
            # ABBA: A B, B A, A B, ...
            sides[(k + k // 2) % 2].append(v)
        e = compare.row_verdict(sides[0], sides[1])
        wrong_verdicts += e.verdict in (compare.Verdict.SLOWER,
                                        compare.Verdict.FASTER)
    return wrong_verdicts / trials
