# SPDX-License-Identifier: GPL-2.0
"""The decisions of a performance bisection (kbtools.bisect_run runs it):
which boots to take, when good and bad differ, and whether a commit is
like good or like bad, each with a stated error.

On a real clock a boot's figure drifts with the host's load, and boots
close in time are alike. So nothing is compared across the run: every
comparison is between boots of its own time, in blocks, each block a
balanced set of boots taken one after another in a random order (drawn
from the bisection's seed, so that a rerun boots in the same order):

  endpoints  GGGGBBBB        4 boots of good and bad
  a step     GGGGSSSSBBBB    4 boots of good, the step S and bad
  confirm    LLMMNNHHIIJJ    2 boots of each of three builds of the
                             answer's last good commit (L, M, N) and
                             of its first bad one (H, I, J)

Within a block, under 'no difference' the boots of the two kernels
compared are exchangeable, because their order was drawn at random
(whatever the load did, and whatever the position in a block does), so
the rank sums of a side within its blocks have an exact distribution
(kbtools.stats.blocked_p, a randomization test), with no assumption on
the figures' shape or drift. A step
is bad when it ranks above good (slower) in its blocks at p <= alpha /
STEP_BLOCKS and not below bad; good the other way round; both at once is
'between': skipped. The looks after each block are paid for by dividing
alpha among them (Bonferroni), the endpoints' also among the rows
followed. A wrong class then happens with probability at most alpha per
step, and a whole bisection errs with at most the sum over its decisions
(error_bound), said with the result.

That sum assumes that a commit boots like good or like bad. A kernel
image can differ in more than its source (a layout that sits in one
mode or a few percent off on every boot), so the answer is confirmed
before it is printed (decide_confirmation): its first bad commit and the
good commit before it, each built three times, boot head to head in
blocks; the one must rank beyond the other, every build of it beyond
every build of the other, by more than twice what the builds of one
commit differ where their boots show them apart (a rank test of a
commit's builds against each other within their blocks: a spread the
boots' own noise accounts for is not an image's effect). Otherwise the
answer is 'could not decide', with the figure. The bound then counts the confirmation as one decision more,
and assumes that an image effect is not shared by a commit's builds.

Under QEMU's instruction counter (mode 'icount') figures are counts of
instructions: good is booted calibration.BOOTS times (GBGG: an A/A of
good, the calibration of its own rows, good_calibration), bad and each
step once, and kbtools.exact's rule decides against good's calibration,
on the figure compare would judge the two sides by
(kbtools.exact.judged_figure: a process-creation row's steady mode, else
its median; a row whose margin is wider than its change cannot be
followed there).

The state directory holds:
  settings.json   the bisection's parameters (for --resume)
  bisect.log      the 'git bisect log', after every step
  boots/HASH/K/   the JSON results of the K-th usable boot of HASH
  boots.tsv       every boot: its phase, block, role and the seed of
                  the blocks' order (BOOT_KEYS)
  signal.json     the rows on which good and bad differ
  steps.tsv       one line per step (STEP_KEYS)
"""

import json
import math
import os
import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from kbtools import calibration, compare, exact, ktap, results, stats

SETTINGS = "settings.json"
SIGNAL = "signal.json"
STEPS = "steps.tsv"
BOOTS = "boots.tsv"
STEP_KEYS = ("commit", "subject", "ratio", "ci_low", "ci_high", "verdict",
             "boots", "note", "p_bad", "p_good")
BOOT_KEYS = ("commit", "role", "phase", "block", "usable", "time", "load",
             "seed")
CLASSES = ("good", "bad", "skip")
MODES = ("real", "icount")
OPPOSITE = {"slower": "faster", "faster": "slower"}
# The boots of a block; their order is drawn per block (block_order).
ENDPOINT_BLOCK = "GGGGBBBB"
STEP_BLOCK = "GGGGSSSSBBBB"
CONFIRM_BLOCK = "LLMMNNHHIIJJ"
ICOUNT_ENDPOINT_BLOCK = "GB" + "G" * (calibration.BOOTS - 1)
ICOUNT_STEP_BLOCK = "S"
ENDPOINT_BLOCKS = 3
STEP_BLOCKS = 3
# The confirmation looks after blocks CONFIRM_FIRST_LOOK..CONFIRM_BLOCKS:
# with 6 boots a commit a block, two blocks are the fewest whose most
# extreme ranks (1/924 a block) reach alpha shared among those looks.
CONFIRM_FIRST_LOOK = 2
CONFIRM_BLOCKS = 4
CONFIRM = "confirm"
# The commits' builds must be apart by this many times the most the
# builds of one commit differ: offsets of the images alone put three
# builds of one commit above three of another 1 time in 20, with a gap
# twice their own spread 1 in 1400 (normal offsets; with two builds a
# commit 1 in 50, too often for the bound).
CONFIRM_MARGIN = 2.0
CONFIRM_BUILDS = 3
# The builds of one commit count as apart (their spread an image's
# effect, held against the commits' gap) when a rank test of them
# against each other within their blocks reaches this; above it their
# spread is what the boots' noise makes (the first of issue 42's
# real-clock bisections: builds x1.886 apart in their medians under a
# load switched on and off, p 0.35 within its 4 blocks). A lenient
# level: a spread that may be the images' counts.
IMAGES_SHOWN = 0.05
# Each build must be beyond the other commit's boots within the blocks
# at this level: the builds' medians in order can be their boots'
# noise, and one image as far beyond as the change (the one that misled
# a step) is not shown apart from its commit's other builds under a
# loud clock every time. At 0.01 such images fool the confirmation
# less (none in 1000 where 4-8 in 2000) but a x2 change under issue
# 42's loud clock is confirmed 41% of the time, not 76%
# (bench/bisect_bound.py --confirmation).
EACH_SHOWN = 0.05
# How the builds' spread is counted: 'tested' (IMAGES_SHOWN), or 'raw',
# always (the rule before, kept for the replays that show what it
# cost).
BUILDS_RULES = ("tested", "raw")
DEFAULT_ALPHA = 0.001
# A decided step whose opposite test came this close contradicts its
# class: the answer is widened rather than trusted.
NEAR = 0.05
ROLE = {"G": "good", "B": "bad", "S": "step",
        "L": "lo", "M": "lo2", "N": "lo3", "H": "hi", "I": "hi2", "J": "hi3"}
# The confirmation's builds of each of its commits.
LO_BUILDS = ("lo", "lo2", "lo3")
HI_BUILDS = ("hi", "hi2", "hi3")


def build_of(role: str) -> int:
    """Which build of its commit a role boots: 1 but for the
    confirmation's further builds."""
    return int(role[-1]) if role[-1].isdigit() else 1


class BisectError(Exception):
    """Unusable state or input; the message says which."""


# ---- settings -------------------------------------------------------------

def parse_target(text: str) -> Tuple[str, Optional[str]]:
    """TEST[:ROW] -> (test, row or None)."""
    test, _, row = text.partition(":")
    if not test or (":" in text and not row) or ":" in row:
        raise BisectError(f"'{text}' is not TEST or TEST:ROW")
    return test, row or None


def make_settings(tree: str, good: str, bad: str, direction: str,
                  alpha: float, threshold: float, check: Optional[str],
                  targets: Sequence[str], mode: str = "real",
                  step_blocks: int = STEP_BLOCKS,
                  seed: Optional[int] = None, order: str = "random",
                  confirm: bool = True, builds: str = "tested"
                  ) -> Dict[str, Any]:
    """The settings of a new bisection, checked: the seed of its blocks'
    order drawn when not given. order 'fixed' (every block in its
    pattern's order) and confirm False are the rule before issue 42,
    kept for the replays that show what it got wrong; builds 'raw' the
    confirmation before its builds were tested against each other."""
    if direction not in OPPOSITE:
        raise BisectError(f"direction '{direction}' is not slower or faster")
    if mode not in MODES:
        raise BisectError(f"mode '{mode}' is not real or icount")
    for t in targets:
        parse_target(t)
    if not 0 < alpha < 1:
        raise BisectError(f"alpha {alpha:g} is not between 0 and 1")
    if threshold < 0:
        raise BisectError(f"threshold {threshold:g} is negative")
    if step_blocks < 1:
        raise BisectError("a step needs at least one block")
    if order not in ("random", "fixed"):
        raise BisectError(f"order '{order}' is not random or fixed")
    if builds not in BUILDS_RULES:
        raise BisectError(f"builds '{builds}' is not tested or raw")
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2 ** 32)
    return {"tree": tree, "good": good, "bad": bad, "direction": direction,
            "alpha": alpha, "threshold": threshold, "check": check or None,
            "targets": list(targets), "mode": mode,
            "step_blocks": step_blocks, "seed": seed, "order": order,
            "confirm": confirm, "builds": builds}


def load_settings(state: str) -> Dict[str, Any]:
    path = os.path.join(state, SETTINGS)
    try:
        with open(path, encoding="utf-8") as f:
            settings: Dict[str, Any] = json.load(f)
            return settings
    except OSError as e:
        raise BisectError(f"no bisection state in {state} ({e.strerror})")
    except ValueError as e:
        raise BisectError(f"{path} is not valid JSON: {e}")


def save_settings(state: str, settings: Dict[str, Any]) -> None:
    os.makedirs(state, exist_ok=True)
    results.write_text(os.path.join(state, SETTINGS),
                       json.dumps(settings, indent=1) + "\n")


def wanted(settings: Dict[str, Any], test: str, row: str) -> bool:
    """The rows the user named: every row of a test named alone."""
    for target in settings["targets"]:
        t, r = parse_target(target)
        if t == test and (r is None or r == row):
            return True
    return False


def unmeasured_rows(settings: Dict[str, Any],
                    keys: Sequence[Tuple[str, str]]) -> List[str]:
    """What the boots say of each TEST:ROW target that none of them
    measured (a mistyped row): its test's rows that they did."""
    out = []
    for target in settings["targets"]:
        test, row = parse_target(target)
        if row is None or (test, row) in keys:
            continue
        rows = sorted(r for t, r in keys if t == test)
        out.append(f"no boot measured {target} (the rows they measured "
                   f"of {test}: {', '.join(rows) or 'none'})")
    return out


# ---- boots and their figures ---------------------------------------------------

def boots_dir(state: str, commit: str) -> str:
    return os.path.join(state, "boots", commit)


def usable_boots(state: str, commit: str) -> List[int]:
    """The numbers of the commit's usable boots (directories with JSON)."""
    d = boots_dir(state, commit)
    if not os.path.isdir(d):
        return []
    return sorted(int(n) for n in os.listdir(d)
                  if n.isdigit() and os.path.isdir(os.path.join(d, n)))


def append_tsv(path: str, keys: Sequence[str], record: Dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("\t".join(str(record.get(k) if record.get(k) is not None
                              else "").replace("\t", " ")
                          for k in keys) + "\n")


def read_tsv(path: str, keys: Sequence[str]) -> List[Dict[str, str]]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [dict(zip(keys, ln.rstrip("\n").split("\t")))
                for ln in f if ln.strip()]


def record_boot(state: str, boot: Dict[str, Any]) -> None:
    """Keep one boot (usable or not) in the state's boot schedule."""
    append_tsv(os.path.join(state, BOOTS), BOOT_KEYS, boot)


def read_boots(state: str) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for b in read_tsv(os.path.join(state, BOOTS), BOOT_KEYS):
        boot: Dict[str, object] = dict(b)
        boot["block"] = int(b["block"])
        boot["usable"] = int(b["usable"]) if b["usable"] else None
        out.append(boot)
    return out


def boot_run(state: str, boot: Dict[str, Any]) -> Optional[results.Run]:
    """The results of one usable boot (None: not usable)."""
    if boot["usable"] is None:
        return None
    path = os.path.join(boots_dir(state, boot["commit"]),
                        str(boot["usable"]))
    return results.load(path, boot["commit"][:12])


# One boot's row as its results read it, and its figures' instructions
# per unit (1.0 on a real clock): the exact rule asks its mode and share.
Measured = Tuple[results.Row, float]


def boot_rows(run: results.Run) -> Dict[Tuple[str, str], Measured]:
    """(test, row) -> each timed row of one boot's results that measured
    something, with its scale to instructions per operation for an
    icount run (the exact rule's floors are in instructions)."""
    out = {}
    for test in run.tests.values():
        for row in test.rows.values():
            if row.status == "ok" and row.unit in compare.TIME_UNITS:
                out[(test.name, row.name)] = \
                    (row, test.insn_per_unit(row.unit) or 1.0)
    return out


def boot_figures(state: str, boot: Dict[str, Any], stat: str = "median",
                 run: Optional[results.Run] = None
                 ) -> Dict[Tuple[str, str], List[float]]:
    """(test, row) -> the figures of one usable boot (its results, run,
    when read already): its repetitions' (one, or two in exact mode) in
    the row's unit, or in instructions per operation for an icount run
    (boot_rows)."""
    run = run or boot_run(state, boot)
    if run is None:
        return {}
    return {key: [v * scale for v in row.values(stat)]
            for key, (row, scale) in boot_rows(run).items()}


class Figures:
    """The figures of every boot of a bisection (boots: the schedule's
    records; by_boot: each one's figures by (test, row), empty for an
    unusable boot; headers: the usable boots' results headers, which
    say the setup an exact rule looks its A/A classes up in; rows: each
    boot's rows as read (boot_rows), whose modes the exact rule may
    judge by; without them, a row of by_boot's medians)."""

    def __init__(self, boots: List[Dict[str, Any]],
                 by_boot: List[Dict[Tuple[str, str], List[float]]],
                 headers: Sequence[results.Header] = (),
                 rows: Optional[List[Dict[Tuple[str, str], Measured]]] = None):
        self.boots = boots
        self._by_boot = by_boot
        self.headers = list(headers)
        self._rows = rows

    @classmethod
    def of_state(cls, state: str, boots: List[Dict[str, Any]]) -> "Figures":
        runs = [boot_run(state, b) for b in boots]
        return cls(boots, [boot_figures(state, b, run=r)
                           for b, r in zip(boots, runs)],
                   [t.header for r in runs if r for t in r.tests.values()],
                   [boot_rows(r) if r else {} for r in runs])

    def of(self, i: int, key: Tuple[str, str]) -> List[float]:
        return self._by_boot[i].get(key, [])

    def keys(self) -> List[Tuple[str, str]]:
        seen: Dict[Tuple[str, str], None] = {}
        for f in self._by_boot:
            for k in f:
                seen.setdefault(k, None)
        return list(seen)

    def blocks(self, phase: str, key: Tuple[str, str]
               ) -> Dict[int, Dict[str, List[float]]]:
        """block -> role -> the boots' figures (a boot's median) of one
        row in one phase."""
        out: Dict[int, Dict[str, List[float]]] = {}
        for i, b in enumerate(self.boots):
            vs = self.of(i, key)
            if b["phase"] != phase or not vs:
                continue
            roles = out.setdefault(b["block"], {})
            roles.setdefault(b["role"], []).append(stats.median(vs))
        return out

    def boot_reps(self, phase: str, role: str, key: Tuple[str, str]
                  ) -> List[List[float]]:
        """The repetitions of each of a role's boots in a phase (exact
        mode), boots in order."""
        return [self.of(i, key) for i, b in enumerate(self.boots)
                if b["phase"] == phase and b["role"] == role
                and self.of(i, key)]

    def measured(self, phase: str, role: str, key: Tuple[str, str]
                 ) -> List[Measured]:
        """The row of each of a role's boots in a phase that measured it
        (exact mode), boots in order."""
        return [self._measured(i, key) for i, b in enumerate(self.boots)
                if b["phase"] == phase and b["role"] == role
                and self.of(i, key)]

    def _measured(self, i: int, key: Tuple[str, str]) -> Measured:
        if self._rows is not None and key in self._rows[i]:
            return self._rows[i][key]
        row = results.Row(key[1])
        for v in self.of(i, key):
            row.add_rep(results.Repetition.of(median=v))
        return row, 1.0


# ---- the schedule -----------------------------------------------------------

def pattern(settings: Dict[str, Any], phase: str) -> str:
    icount = settings.get("mode") == "icount"
    if phase == "endpoints":
        return ICOUNT_ENDPOINT_BLOCK if icount else ENDPOINT_BLOCK
    if phase == CONFIRM:
        return CONFIRM_BLOCK
    if settings.get("check"):
        return "S"
    return ICOUNT_STEP_BLOCK if icount else STEP_BLOCK


# The order of a block before issue 42, fixed (balanced in time, yet
# the same every block): kept for the replays of that rule.
FIXED_ORDER = {ENDPOINT_BLOCK: "GBBGBGGB", STEP_BLOCK: "GSBBSGBSGGSB",
               CONFIRM_BLOCK: "LHMINJJNIMHL"}


def randomized(settings: Dict[str, Any]) -> bool:
    """Whether a real-clock bisection draws its blocks' orders (a state
    from before issue 42 has no seed and keeps its fixed orders)."""
    return (settings.get("seed") is not None and
            settings.get("order", "random") == "random")


def block_order(settings: Dict[str, Any], phase: str, block: int) -> str:
    """The order of the boots of one block: its pattern shuffled by a
    generator seeded with the bisection's seed, the phase and the block,
    so that a rerun (or --resume) boots in the same order. An exact or
    functional bisection, one boot per kernel, keeps its pattern."""
    pat = pattern(settings, phase)
    if settings.get("mode") == "icount" or settings.get("check"):
        return pat
    if not randomized(settings):
        return FIXED_ORDER.get(pat, pat)
    letters = list(pat)
    random.Random(f"{settings['seed']}/{phase}/{block}").shuffle(letters)
    return "".join(letters)


def order_note(settings: Dict[str, Any]) -> str:
    """'; blocks in an order drawn from seed N' of a bisection that
    draws them (printed at its start, so that a rerun can be compared)."""
    if settings.get("mode") == "icount" or settings.get("check") or \
            not randomized(settings):
        return ""
    return f"; blocks in an order drawn from seed {settings['seed']}"


def next_boot(settings: Dict[str, Any], boots: List[Dict[str, Any]], phase: str
              ) -> Tuple[str, int, bool]:
    """(role, block, block_done) of the phase's next boot: its slot in
    the block's order, the block's number, and whether this boot ends a
    block (the time to look)."""
    taken = sum(1 for b in boots if b["phase"] == phase)
    pat = pattern(settings, phase)
    slot = taken % len(pat)
    block = taken // len(pat) + 1
    return (ROLE[block_order(settings, phase, block)[slot]], block,
            slot == len(pat) - 1)


def blocks_done(settings: Dict[str, Any], boots: List[Dict[str, Any]], phase: str) -> int:
    taken = sum(1 for b in boots if b["phase"] == phase)
    return taken // len(pattern(settings, phase))


# ---- decisions ------------------------------------------------------------------

def _oriented(direction: str, low: List[float], high: List[float]
              ) -> Tuple[List[float], List[float]]:
    """(xs, ys) such that 'ys above xs' is the bisected direction."""
    return (low, high) if direction == "slower" else (high, low)


def _ratio(over: Sequence[float], under: Sequence[float]) -> Optional[float]:
    if not over or not under or stats.median(under) <= 0:
        return None
    return float(stats.median(over) / stats.median(under))


def good_calibration(key: Tuple[str, str], good: Sequence[Measured]
                     ) -> Dict[str, exact.Known]:
    """Good's boots at the endpoints as the calibration of one row, kept
    as compare's is (calibration.of_row: its median and, where steady,
    its mode)."""
    if not good:
        return {}
    merged = results.Row(key[1])
    for n, (row, _) in enumerate(good):
        for rep in row.reps:
            merged.add_rep(rep, str(n))
    return calibration.of_row(f"{key[0]}:{key[1]}", merged, good[0][1])


def exact_decision(fig: Figures, phase: str, role: str, against: str,
                   key: Tuple[str, str]) -> Optional[exact.Decision]:
    """kbtools.exact's decision on a row: role's boots in phase against
    those of `against` (good or bad) at the endpoints, with good's
    calibration (its endpoint boots, good_calibration), on the figure
    compare would judge the two by (exact.judged_figure: a steady mode,
    else the median); None without figures."""
    other = fig.measured("endpoints", against, key)
    mine = fig.measured(phase, role, key)
    if not other or not mine:
        return None
    figure, known = exact.judged_figure(
        [row for row, _ in other + mine], fig.headers, *key,
        good_calibration(key, fig.measured("endpoints", "good", key)))

    def by_position(side: List[Measured]) -> List[float]:
        return compare.by_position([[v * scale for v in row.values(figure)]
                                    for row, scale in side])
    if against == "good":
        return exact.decide(by_position(other), by_position(mine), known)
    return exact.decide(by_position(mine), by_position(other), known)


def endpoint_alpha(settings: Dict[str, Any], rows: int) -> float:
    """The level of one look at one row of the endpoints."""
    return float(settings["alpha"]) / (ENDPOINT_BLOCKS * max(1, rows))


def step_alpha(settings: Dict[str, Any]) -> float:
    """The level of one look at a step (every signal row must agree)."""
    return float(settings["alpha"]) / int(settings.get("step_blocks",
                                                         STEP_BLOCKS))


def endpoint_rows(settings: Dict[str, Any], fig: Figures) -> List[Dict[str, Any]]:
    """One entry per wanted row measured on both endpoints: its ratio
    bad/good, the blocked p of the bisected direction, the boots."""
    out = []
    for key in fig.keys():
        if not wanted(settings, *key):
            continue
        blocks = fig.blocks("endpoints", key)
        g = [v for b in blocks.values() for v in b.get("good", [])]
        b = [v for bl in blocks.values() for v in bl.get("bad", [])]
        if not g or not b:
            continue
        entry = {"test": key[0], "row": key[1], "ratio": _ratio(b, g),
                 "good": len(g), "bad": len(b)}
        if settings.get("mode") == "icount":
            d = exact_decision(fig, "endpoints", "bad", "good", key)
            entry["class"], entry["verdict"] = \
                ("-", "no-verdict") if d is None or d.verdict == "pending" \
                else (d.cls, d.verdict)
            entry["margin"] = d.margin if d else None
        else:
            pairs = [_oriented(settings["direction"], bl.get("good", []),
                               bl.get("bad", [])) for bl in blocks.values()]
            entry["p"] = stats.blocked_p(pairs)
        out.append(entry)
    return out


def _beyond_threshold(settings: Dict[str, Any], e: Dict[str, Any]) -> bool:
    """Whether bad/good lies beyond --threshold in the bisected
    direction (a real clock's ratio, before any test)."""
    up = 1 + settings["threshold"] / 100
    ratio = e["ratio"]
    return ratio is not None and (ratio > up if settings["direction"] ==
                                  "slower" else ratio < 1 / up)


# A row whose endpoints read beyond --threshold with a p at or below
# this, yet above the endpoints' alpha, leaves them undecided rather than
# 'no culprit': evidence of a change at the usual level, short of the
# bisection's error bound.
SUGGESTIVE_P = 0.05


def _suggests_change(settings: Dict[str, Any], e: Dict[str, Any]) -> bool:
    return _beyond_threshold(settings, e) and e["p"] <= SUGGESTIVE_P


def _row_signals(settings: Dict[str, Any], e: Dict[str, Any], rows: int) -> bool:
    if settings.get("mode") == "icount":
        return bool(e["verdict"] == settings["direction"])
    return (_beyond_threshold(settings, e) and
            e["p"] <= endpoint_alpha(settings, rows))


def decide_endpoints(settings: Dict[str, Any], fig: Figures, done: int
                     ) -> Tuple[str, List[Dict[str, Any]], List[Dict[str, Any]]]:
    """('differ', signal rows, entries) when bad differs from good in
    the bisected direction on a wanted row; ('more', ...) while more
    blocks may tell; after the last block ('undecided', ...) when a row
    reads beyond --threshold in that direction with a p at or below
    SUGGESTIVE_P that did not reach the endpoints' alpha (a noisy clock:
    neither a change nor its absence is shown), else ('none', ...): not
    shown to differ."""
    entries = endpoint_rows(settings, fig)
    signal = [{"test": e["test"], "row": e["row"]} for e in entries
              if _row_signals(settings, e, len(entries))]
    if signal:
        return "differ", signal, entries
    icount = settings.get("mode") == "icount"
    last = 1 if icount else ENDPOINT_BLOCKS
    if entries and done < last:
        return "more", [], entries
    if not icount and any(_suggests_change(settings, e) for e in entries):
        return "undecided", [], entries
    return "none", [], entries


def fmt_p(p: Optional[float]) -> str:
    return "-" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def describe_endpoint(settings: Dict[str, Any], e: Dict[str, Any]) -> str:
    """'syscall_overhead:getsid (x2.081, p 0.0002 over 8+8 boots)'."""
    fig = compare.fmt_ratio(e["ratio"])
    if settings.get("mode") == "icount":
        margin = f", margin {exact.fmt_insn(e['margin'])} insn" \
            if e.get("margin") is not None else ""
        return (f"{e['test']}:{e['row']} ({fig}, {e['verdict']} "
                f"({e['class']}){margin}, {e['good']}+{e['bad']} boots)")
    return (f"{e['test']}:{e['row']} ({fig}, p {fmt_p(e['p'])} in blocks "
            f"of their own time, {e['good']}+{e['bad']} boots)")


def undecided_endpoints_line(settings: Dict[str, Any],
                             entries: List[Dict[str, Any]]) -> str:
    """Bad reads beyond the threshold, the blocks could not show it."""
    best = min((e for e in entries if _suggests_change(settings, e)),
               key=lambda e: float(e["p"]))
    alpha = endpoint_alpha(settings, len(entries))
    return (f"could not decide: bad reads {settings['direction']} than good "
            f"on {describe_endpoint(settings, best)}, short of the "
            f"endpoints' alpha {alpha:.2g}: this clock is too noisy for "
            f"it now (boot again later, or use --icount under TCG)")


def no_culprit_line(settings: Dict[str, Any], entries: List[Dict[str, Any]]) -> str:
    if not entries:
        return ("no culprit: none of the rows "
                f"{', '.join(settings['targets'])} was measured on both "
                f"good and bad")
    best = min(entries, key=lambda e: e.get("p", 1.0))
    more = f" and {len(entries) - 1} more rows" if len(entries) > 1 else ""
    return (f"no culprit: good and bad were not shown to differ on "
            f"{describe_endpoint(settings, best)}{more}")


def _step_row(settings: Dict[str, Any], fig: Figures, phase: str,
              key: Tuple[str, str]) -> Dict[str, Any]:
    """p_bad (the step like bad: beyond good in the bisected direction)
    and p_good (like good: short of bad), over the step's blocks."""
    d = settings["direction"]
    blocks = fig.blocks(phase, key)
    like_bad = [_oriented(d, bl.get("good", []), bl.get("step", []))
                for bl in blocks.values()]
    like_good = [_oriented(d, bl.get("step", []), bl.get("bad", []))
                 for bl in blocks.values()]
    s = [v for bl in blocks.values() for v in bl.get("step", [])]
    g = [v for bl in blocks.values() for v in bl.get("good", [])]
    return {"p_bad": stats.blocked_p(like_bad),
            "p_good": stats.blocked_p(like_good),
            "ratio": _ratio(s, g), "boots": len(s)}


def _icount_step_row(settings: Dict[str, Any], fig: Figures, phase: str,
                     key: Tuple[str, str]) -> Dict[str, Any]:
    """The exact rule against the endpoints' boots: bad when the step
    differs from good as bad does and not from bad."""
    s = [v for boot in fig.boot_reps(phase, "step", key) for v in boot]
    g = [v for boot in fig.boot_reps("endpoints", "good", key) for v in boot]
    out: Dict[str, object] = {"ratio": _ratio(s, g), "boots": 1 if s else 0,
                              "p_bad": None, "p_good": None, "class": None}
    vs_good = exact_decision(fig, phase, "step", "good", key)
    vs_bad = exact_decision(fig, phase, "step", "bad", key)
    if vs_good is None or vs_bad is None:
        return out
    out["class"] = vs_good.cls
    direction = settings["direction"]
    out["bad"] = vs_good.verdict == direction and vs_bad.verdict == "same"
    out["good"] = vs_good.verdict == "same" and vs_bad.verdict == direction
    return out


def decide_step(settings: Dict[str, Any], fig: Figures, signal: List[Dict[str, Any]],
                commit: str, done: int) -> Tuple[str, Dict[str, Any]]:
    """(class, detail) of the step COMMIT after `done` blocks: good or
    bad when every signal row says so, 'more' while undecided and more
    blocks may tell, 'skip' after the last or when a row reads between
    good and bad. detail: the first row's ratio to good, p_bad, p_good,
    boots, and a note."""
    level = step_alpha(settings)
    rows = []
    for s in signal:
        key = (s["test"], s["row"])
        if settings.get("mode") == "icount":
            r = _icount_step_row(settings, fig, commit, key)
        else:
            r = _step_row(settings, fig, commit, key)
            r["bad"] = r["p_bad"] <= level < r["p_good"]
            r["good"] = r["p_good"] <= level < r["p_bad"]
            r["between"] = max(r["p_bad"], r["p_good"]) <= level
        rows.append(r)
    detail = dict(rows[0]) if rows else {"boots": 0}
    if rows and all(r.get("bad") for r in rows):
        return "bad", detail
    if rows and all(r.get("good") for r in rows):
        return "good", detail
    if any(r.get("between") for r in rows):
        detail["note"] = "between good and bad"
        return "skip", detail
    last = 1 if settings.get("mode") == "icount" else \
        settings.get("step_blocks", STEP_BLOCKS)
    if done < last:
        return "more", detail
    detail["note"] = ("neither like good nor like bad (exact rule)"
                      if settings.get("mode") == "icount"
                      else "undecided after the last block")
    return "skip", detail


# ---- the answer and its confirmation ----------------------------------------

@dataclass(frozen=True)
class Answer:
    """What the decided steps leave: the commits that may be the first
    bad one (oldest first: one is a culprit, more a range), the good
    commit before them (lo) and the bad one ending them (hi), and why it
    is a range ('' when it is not)."""
    commits: List[str]
    lo: str
    hi: str
    why: str = ""

    @property
    def culprit(self) -> Optional[str]:
        return self.commits[0] if len(self.commits) == 1 else None


def answer(steps: List[Dict[str, Any]], good: str, bad: str,
           between: Callable[[List[str], List[str]], List[str]],
           parent: Callable[[str], str]) -> Answer:
    """The one reading of a bisection's steps, for kbench bisect and its
    replays alike: the commits reachable from every trusted bad commit
    (bad and the steps classed bad) and from no trusted good one (good
    and the steps classed good), where a decided step whose opposite test
    came within NEAR is not trusted (contradictions). between(goods,
    bads) lists those commits oldest first (git rev-list, or a line of
    numbers); parent(c) is c's parent."""
    distrust = {s["commit"] for s in contradictions(steps)}
    trusted = [s for s in steps if s.get("note") != "endpoint" and
               s["commit"] not in distrust]
    goods = [good] + [s["commit"] for s in trusted if s["verdict"] == "good"]
    bads = [bad] + [s["commit"] for s in trusted if s["verdict"] == "bad"]
    commits = between(goods, bads) or [bad]
    why = ""
    if distrust:
        why = ("the evidence contradicts itself at " +
               ", ".join(contradiction(s) for s in steps
                         if s["commit"] in distrust))
    elif len(commits) > 1:
        why = "skipped: not built, not booted or undecided"
    return Answer(commits, parent(commits[0]), commits[-1], why)


def contradiction(step: Dict[str, Any]) -> str:
    """'HASH (good, yet bad p 0.01)' of a contradicted step."""
    opposite = "p_bad" if step["verdict"] == "good" else "p_good"
    return (f"{step['commit'][:12]} ({step['verdict']}, yet {opposite[2:]} "
            f"p {fmt_p(float(step[opposite]))})")


def range_text(ans: Answer) -> str:
    """The answer's culprit, or its range in git's notation (lo..hi:
    after the last good commit, up to the first bad one)."""
    return (ans.culprit[:12] if ans.culprit else
            f"the range {ans.lo[:12]}..{ans.hi[:12]}")


def range_line(ans: Answer) -> str:
    """The last line of an answer that is a range."""
    listed = " ".join(c[:12] for c in ans.commits)
    if ans.why.startswith("skipped"):
        return (f"could not decide: the first bad commit is one of {listed} "
                f"({ans.why})")
    return f"could not decide: {ans.why}: the first bad commit is one of " \
        f"{listed}"


def needs_confirmation(settings: Dict[str, Any], ans: Answer) -> bool:
    """A real-clock answer narrower than the whole range is confirmed
    before it is printed (the whole range is the endpoints' own
    decision)."""
    return bool(settings.get("confirm") and settings.get("mode") != "icount"
                and not settings.get("check") and
                (ans.lo, ans.hi) != (settings["good"], settings["bad"]))


def confirm_alpha(settings: Dict[str, Any]) -> float:
    """The level of one look of the confirmation."""
    return float(settings["alpha"]) / (CONFIRM_BLOCKS - CONFIRM_FIRST_LOOK + 1)


def _log_ratio(over: Sequence[float], under: Sequence[float]) -> float:
    r = _ratio(over, under)
    return math.log(r) if r is not None and r > 0 else 0.0


def _builds_apart(settings: Dict[str, Any],
                 blocks: Dict[int, Dict[str, List[float]]],
                 builds: Sequence[str], logs: Dict[str, float]
                 ) -> Tuple[float, float, float]:
    """(spread, p, counted) of one commit's builds: the most their
    medians differ (log), the p of a rank test of them against each
    other within their blocks (kbtools.stats.blocked_groups_p), and the
    spread held against the commits' gap: all of it when the test shows
    them apart (IMAGES_SHOWN) or the rule is 'raw', none when their
    boots' noise accounts for it."""
    spread = max(logs[r] for r in builds) - min(logs[r] for r in builds)
    p = stats.blocked_groups_p([[bl.get(r, []) for r in builds]
                                for bl in blocks.values()])
    shown = settings.get("builds", "tested") == "raw" or p <= IMAGES_SHOWN
    return spread, p, spread if shown else 0.0


def _confirm_row(settings: Dict[str, Any], fig: Figures,
                 key: Tuple[str, str]) -> Dict[str, Any]:
    """One row's confirmation: the blocked p of hi's boots beyond lo's
    (all builds), the gap between the builds of the two commits (the
    smallest ratio of a hi build's median to a lo build's, in the
    bisected direction, as a log), the most the builds of one commit
    differ (spread, log), the smaller p of the two commits' builds
    tested against each other within their blocks (images_p) and the
    builds' spread counted as the images' effect (builds, log:
    _builds_apart)."""
    d = settings["direction"]
    blocks = fig.blocks(CONFIRM, key)
    lo_all = [[v for r in LO_BUILDS for v in bl.get(r, [])]
              for bl in blocks.values()]
    hi_all = [[v for r in HI_BUILDS for v in bl.get(r, [])]
              for bl in blocks.values()]
    p = stats.blocked_p([_oriented(d, lo, hi)
                         for lo, hi in zip(lo_all, hi_all)])
    every = {r: [v for bl in blocks.values() for v in bl.get(r, [])]
             for r in LO_BUILDS + HI_BUILDS}
    sign = 1 if d == "slower" else -1
    logs = {r: sign * math.log(stats.median(vs)) if vs and
            min(vs) > 0 else 0.0 for r, vs in every.items()}
    lo = [logs[r] for r in LO_BUILDS]
    hi = [logs[r] for r in HI_BUILDS]
    apart = [_builds_apart(settings, blocks, b, logs)
             for b in (LO_BUILDS, HI_BUILDS)]
    # Each build on its own beyond the other commit's boots (hi's) or
    # short of them (lo's), within the blocks: the builds' medians in
    # order can be the boots' noise too.
    each = max([stats.blocked_p([_oriented(d, lo, bl.get(r, []))
                                 for lo, bl in zip(lo_all, blocks.values())])
                for r in HI_BUILDS] +
               [stats.blocked_p([_oriented(d, bl.get(r, []), hi)
                                 for hi, bl in zip(hi_all, blocks.values())])
                for r in LO_BUILDS])
    return {"p": p, "change": min(hi) - max(lo), "each_p": each,
            "spread": max(a[0] for a in apart),
            "images_p": min(a[1] for a in apart),
            "builds": max(a[2] for a in apart),
            "ratio": _ratio(sum(hi_all, []), sum(lo_all, [])),
            "boots": sum(len(v) for v in every.values())}


def decide_confirmation(settings: Dict[str, Any], fig: Figures,
                        signal: List[Dict[str, Any]], done: int
                        ) -> Tuple[str, Dict[str, Any]]:
    """(verdict, detail) of the confirmation after `done` blocks:
    'confirmed' when on every signal row hi's boots rank beyond lo's
    within their blocks at confirm_alpha, and every build of hi beyond
    every build of lo by more than CONFIRM_MARGIN times both --threshold
    and the most the builds of one commit differ where their boots show
    them apart (_builds_apart); 'images' when the
    boots differ but the builds do not line up so (the answer cannot be
    told from the images' own effects); 'more' while more blocks may
    tell; 'unconfirmed' after the last."""
    if done < CONFIRM_FIRST_LOOK:
        return "more", {}
    level = confirm_alpha(settings)
    rows = [_confirm_row(settings, fig, (s["test"], s["row"]))
            for s in signal]
    detail = dict(rows[0]) if rows else {"boots": 0}
    up = math.log(1 + settings["threshold"] / 100)
    if rows and all(r["p"] <= level for r in rows):
        worst = min(rows, key=lambda r: float(
            r["change"] - CONFIRM_MARGIN * max(r["builds"], up)))
        detail.update(worst)
        if all(r["change"] > CONFIRM_MARGIN * max(r["builds"], up) and
               (settings.get("builds", "tested") == "raw" or
                r["each_p"] <= EACH_SHOWN) for r in rows):
            return "confirmed", detail
        if done >= CONFIRM_BLOCKS:
            return "images", detail
    if done < CONFIRM_BLOCKS:
        return "more", detail
    return "unconfirmed", detail


def builds_text(detail: Dict[str, Any]) -> str:
    """What the builds of one commit showed: the most their medians
    differ and, tested against each other within their blocks, whether
    that was shown (and so held against the change) or not, with the
    test's p."""
    spread = math.exp(detail.get("spread", detail.get("builds", 0.0)))
    text = f"builds of one commit up to x{spread:.3f} apart"
    if "images_p" not in detail:
        return text
    p = fmt_p(detail["images_p"])
    if detail.get("builds", 0.0) > 0:
        return f"{text} (within their blocks p {p})"
    return (f"{text} in their medians, not shown apart within their "
            f"blocks (p {p}), so not held against the change")


def each_text(detail: Dict[str, Any]) -> str:
    """', each build beyond the other commit's boots within the blocks
    (p at most P)' (nothing for the raw rule's detail)."""
    if "each_p" not in detail:
        return ""
    return (f", each build beyond the other commit's boots within the "
            f"blocks (p at most {fmt_p(detail['each_p'])})")


def confirmation_line(settings: Dict[str, Any], ans: Answer, verdict: str,
                      detail: Dict[str, Any]) -> str:
    """The step line's note of a confirmation."""
    change = math.exp(detail.get("change", 0.0)) if "change" in detail \
        else None
    what = {"confirmed": "confirmed", "images": "not confirmed",
            "unconfirmed": "not confirmed"}[verdict]
    fig = (f"{builds_text(detail)}; the commits' at least x{change:.3f}"
           f"{each_text(detail)}" if change is not None else "no figure")
    return (f"{what} against {ans.lo[:12]}, {CONFIRM_BUILDS} builds "
            f"each: {fig}, p {fmt_p(detail.get('p'))}")


def unconfirmed_line(settings: Dict[str, Any], ans: Answer, verdict: str,
                     detail: Dict[str, Any], whole: List[str]) -> str:
    """The last line of an answer its confirmation did not bear out."""
    up = math.log(1 + settings["threshold"] / 100)
    tested = settings.get("builds", "tested") != "raw"
    if verdict == "images" and tested and \
            detail.get("each_p", 0.0) > EACH_SHOWN and \
            detail["change"] > CONFIRM_MARGIN * max(detail["builds"], up):
        why = (f"the builds of {ans.hi[:12]} are at least "
               f"x{math.exp(detail['change']):.3f} beyond those of "
               f"{ans.lo[:12]} in their medians, but not each of them "
               f"beyond the other commit's boots within the blocks (p at "
               f"most {fmt_p(detail['each_p'])}): a build's own effect may "
               f"have made the answer")
    elif verdict == "images" and detail.get("builds", 0.0) < up:
        why = (f"the builds of {ans.hi[:12]} are at least "
               f"x{math.exp(detail['change']):.3f} beyond those of "
               f"{ans.lo[:12]}, not {CONFIRM_MARGIN:g} times "
               f"--threshold ({settings['threshold']:g}%) beyond")
    elif verdict == "images":
        why = (f"the builds of {ans.hi[:12]} are at least "
               f"x{math.exp(detail['change']):.3f} beyond those of "
               f"{ans.lo[:12]}, but {builds_text(detail)}: the images' "
               f"own effects are not small beside the change")
    else:
        why = (f"{ans.hi[:12]} was not shown beyond {ans.lo[:12]} on "
               f"{CONFIRM_BUILDS} builds of each (p {fmt_p(detail.get('p'))} "
               f"after {detail.get('boots', 0)} boots)")
    # good..bad in git's notation (good itself left out): the range a
    # user pastes into git log has as many commits as the line says.
    return (f"could not decide: {why}; the first bad commit is one of the "
            f"{len(whole)} commits of {settings['good'][:12]}.."
            f"{settings['bad'][:12]}")


# ---- error, consistency and the step table -----------------------------------

def decisions(steps: List[Dict[str, Any]]) -> int:
    """The decisions an answer rests on: the endpoints', each decided
    step's, and its confirmation's."""
    return 1 + sum(1 for s in steps if s.get("note") != "endpoint" and
                   s.get("verdict") in ("good", "bad", "confirmed",
                                        "unconfirmed"))


def error_bound(settings: Dict[str, Any], steps: List[Dict[str, Any]]) -> Optional[float]:
    """The probability that the answer is wrong, at most: the endpoints'
    alpha plus each decided step's and the confirmation's (the union
    bound). None in exact mode, whose error is what A/A runs showed
    (error_line)."""
    if settings.get("mode") == "icount" or settings.get("check"):
        return None
    return float(settings["alpha"]) * decisions(steps)


def exact_guest(headers: Sequence[results.Header]
                ) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(setup, guest settings, kernel) of the boots' exact guest, as the
    first of their results headers that says them (good's: exact.aa_error's
    arguments); x86_64, unsaid, when no boot said."""
    for h in headers:
        if exact.setup_of(h):
            return exact.setup_of(h), h.machine.icount_settings, \
                exact.kernel_of(h)
    return exact.FIRST_SETUP, None, None


def error_line(settings: Dict[str, Any], steps: List[Dict[str, Any]],
               headers: Sequence[results.Header] = ()) -> str:
    """The answer's error, as its rule bounds it (real clock) or as A/A
    runs of the boots' own exact guest showed it (icount: headers)."""
    bound = error_bound(settings, steps)
    if settings.get("check"):
        return ("error: a functional check, one boot per step: as right "
                "as the check is")
    if bound is None:
        setup, guest, kernel = exact_guest(headers)
        return (f"error: exact (QEMU's instruction counter): each decision "
                f"takes a margin of twice the range of good's "
                f"{calibration.BOOTS} boots, on the figure compare judges "
                f"the row by (its most common value where that holds "
                f"{exact.MODE_SHARE_MIN:.0%} or more of every run of both "
                f"sides and of good's, else its median); "
                f"{exact.aa_error(setup, None, guest, kernel)}; "
                f"instructions do "
                f"not show cache or "
                f"TLB misses, contention, bandwidth, device latency or "
                f"microcode costs")
    confirmed = any(s.get("verdict") in ("confirmed", "unconfirmed")
                    for s in steps)
    order = (f"in an order drawn from seed {settings['seed']}"
             if randomized(settings) else "in a fixed order")
    assumes = (f"assuming a commit's image shares no effect of its own "
               f"with its other builds (the answer's two commits were "
               f"built {CONFIRM_BUILDS} times and checked)" if confirmed else
               "assuming every commit boots like good or like bad (not "
               "confirmed on further builds)")
    return (f"error: this answer is wrong with probability at most "
            f"{bound:.2g} ({decisions(steps)} decisions at "
            f"{settings['alpha']:g} each: exact rank tests within blocks "
            f"of their own time, {order}; {assumes})")


def contradictions(steps: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Decided steps whose opposite test came within NEAR: a good step
    that read nearly as bad, or a bad one nearly as good."""
    out = []
    for s in steps:
        opposite = {"good": "p_bad", "bad": "p_good"}.get(
            str(s.get("verdict")))
        if opposite is None or s.get("note") == "endpoint":
            continue
        p = s.get(opposite)
        if p is not None and p != "" and float(p) <= NEAR:
            out.append(s)
    return out


def fmt_step(step: Dict[str, Any]) -> str:
    """One line: commit, subject, ratio to good, verdict, boots, note."""
    if step.get("ratio") in (None, ""):
        fig = "-"
    else:
        fig = f"x{float(step['ratio']):.3f}"
    subject = step["subject"]
    if len(subject) > 44:
        subject = subject[:43] + "~"
    line = (f"{step['commit'][:12]}  {subject:<44}  {fig:<8}  "
            f"{step['verdict']:<4}  boots {step['boots']}")
    ps = [f"{k[2:]} p {fmt_p(float(step[k]))}" for k in ("p_bad", "p_good")
          if step.get(k) not in (None, "")]
    notes = ([step["note"]] if step.get("note") else []) + ps
    if notes:
        line += f"  ({', '.join(notes)})"
    return line


def append_step(state: str, step: Dict[str, Any]) -> None:
    append_tsv(os.path.join(state, STEPS), STEP_KEYS, step)


def read_steps(state: str) -> List[Dict[str, Any]]:
    return read_tsv(os.path.join(state, STEPS), STEP_KEYS)


# ---- KTAP of a boot -----------------------------------------------------------

def check_result(stream: str, name: str) -> str:
    """ok / not ok / skip / missing: the result NAME (TEST:CHECK or CHECK)
    in a KTAP stream, at any nesting depth under TEST's result."""
    test, _, check = name.rpartition(":")
    doc = ktap.parse(stream)

    def walk(d: ktap.Document, inside: bool) -> Optional[str]:
        for r in d.results:
            here = inside or not test or test in r.name
            if here and r.name == check:
                if r.directive == "SKIP":
                    return "skip"
                return "ok" if r.ok else "not ok"
            if r.child is not None:
                found = walk(r.child, here)
                if found:
                    return found
        return None

    return walk(doc, False) or "missing"


def stream_problems(stream: str) -> List[str]:
    """Why a KTAP stream is incomplete (empty when it is complete): its
    structure, not its results; a failed row is a result."""
    doc = ktap.parse(stream)
    if doc.version is None or doc.plan is None:
        return ["no KTAP version line or plan: the run did not start"]
    return ktap.check(doc)
