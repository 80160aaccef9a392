# SPDX-License-Identifier: GPL-2.0
"""Verdicts on exact figures: rows measured under QEMU's instruction
counter (machine.clock_mode "icount"), where a figure is the number of
guest instructions an operation took, not a time.

Such a figure does not drift with the host's load, but a kernel can
still take a different number of instructions from one boot to the
next (its pids, its allocators, where its timer ticks fall). So a row
is judged against what boots of the kernel under test showed, never of
another kernel (kbtools.calibration: an A/A of the base, its boots
grouped by repetition):

  margin  the larger of FLOOR_INSN and BOOT_SPREAD_FACTOR times the
          largest range, across the calibration's boots, of one
          repetition's figure, and for a row that is not exact
          CALIBRATED_FLOOR_PCT % of it: slower (faster) when every candidate
          repetition is more than the margin above (below) the base's
          repetition of the same place in the run
  class   what the calibration showed: exact when the range is within
          EXACT_PPM parts per million of the row (then the margin is
          half an instruction up to rows of 25,000 instructions, and a
          few instructions on the longest), near within
          NEAR_SPREAD_PCT %, noisy wider; the margin rule judges every
          class

A row timed one operation at a time also carries its most common
value and that value's share of the samples (mode, mode_share). Under
icount its creations fall into a few exact counts (one more step in the
scheduler's tree, a slab refill), and where none holds half of them the
median sits on the edge between two and moves with the boot. Where
every repetition of both sides has a mode_share of MODE_SHARE_MIN or
more and the calibration has the row's mode, the row is judged by its
mode (judged_figure, which compare and bisect both ask; the calibration
keeps it under mode_key), else by its median as before.

A row no calibration of this kernel has seen is judged by the boot
rule (the statistical one, over boots: 'pending' here), never as
exact. known() is the one lookup (compare and bisect call it with the
runs' headers and the base kernel's calibration): sides counted in two
setups (setup_of: the guest's architecture, another instruction set)
have no calibration in common.

A calibration's few boots can agree by chance on a row that moves now
and then (on arm64, clone read identically by three boots moved by 248
instructions in a fourth). What makes such a row move is its nature,
not the kernel's release (clone moves because kernel threads run
inside its timed loop), but how far it moves differs from kernel to
kernel (Debian 6.12's exec rows over 0.86% of the row, the test
kernel's over 0.15%), so the prior (icount_classes.json: many boots
of the kernels measured in the exact guest of each architecture, each
kernel's rows kept apart by its build, and the worst of each row over
them) bounds the class: a row that the prior's boots of the base's own
build (else of any of its kernels; and every mode of a build it never
saw), or the calibration's boots, saw move beyond the exact tolerance
is at best near (with_prior), and its margin is at least
BOOT_SPREAD_FACTOR times the
share of the row the prior's boots spread over: a row's mode by what
the mode did where the prior's boots held it steady (prior_modes), else
by what its median did (on arm64, clone read
37,798 instructions in three boots of five and 37,273 in a fourth: a
margin from three alike boots, even a near row's CALIBRATED_FLOOR_PCT
%, lets such a boot through as a verdict). A prior of one architecture
says nothing of another's rows, nor of runs whose exact guest settled
otherwise before its tests or ran its process creations at another
policy (stale_prior: each prior records its boots' settle and sched, and
either anew needs a new prior; until then the calibration alone classes
the rows). When both sides ran in
the same boots (two setups of one kernel, --vs-prefix) boots cannot
differ between the sides, and their repetitions class the row
(within_boot), bounded by the prior in the same way: a few repetitions
agree by chance as a few boots do.

What instructions do not show: cache and TLB misses, lock contention,
memory bandwidth, device latency, and work that costs cycles rather
than instructions (VERW buffer clearing, IBPB). A change of those alone
reads 'same' here.
"""

import dataclasses
import functools
import json
import os
import re
from dataclasses import dataclass
from typing import (Any, Dict, FrozenSet, List, Mapping, NamedTuple, Optional,
                    Sequence, Set, Tuple)

from kbtools import arch, policy, results, stats

# Repetitions of a batched null system call differ by one instruction
# per batch (0.001 per call with 1000 calls); a quarter instruction per
# operation leaves room for rows timed one operation at a time (the
# class of two setups in the same boots).
EXACT_SPREAD_INSN = 0.25
# A calibrated row is exact within 10 parts per million of itself
# across boots (3 ppm: one instruction in a batch of 1000 null calls).
EXACT_PPM = 10.0
# Half an instruction per operation: one added instruction is twice that.
FLOOR_INSN = 0.5
NEAR_SPREAD_PCT = 1.0
NEAR_FLOOR_PCT = 0.1
# The range of the few boots a calibration has is short of the range
# of many boots (two boots of a normal spread show about 1.1 sigma, four
# about 2): the margin is twice the boots' range.
BOOT_SPREAD_FACTOR = 2.0
# ... and two boots can agree by chance on a row that is not exact: its
# margin is at least this share of it. Chosen on three A/A boots of the
# test kernel (docs/exact-runs.md): 0.1% let 2 of 282 comparisons
# through as verdicts, 0.25% none.
CALIBRATED_FLOOR_PCT = 0.5
CLASSES = ("exact", "near", "noisy")
# The prior: classes measured per setup over boots of the kernels
# measured, the worst of each row (docs and bench/guest_modes.py; never
# a verdict's calibration).
CLASSES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "icount_classes.json")
# A classes file written before setups were told apart holds the A/A
# runs of x86_64 guests alone.
FIRST_SETUP = "x86_64"
# The figures of a row's most common value (kbtools.results.FIGURES).
MODE = "mode"
MODE_SHARE = "mode_share"
# The least share of its samples a row's most common value must hold in
# every repetition of both sides to be the row's figure. Measured at
# SCHED_OTHER (plugin windows, docs/exact-runs.md) the process-creation
# rows' most common count held 19-28 of 100 and the next 14-23, so which
# one is the mode changes with the boot. In the guest at SCHED_FIFO 1
# (the unpatched test kernel and its copy_process nop, 4 boots, 2 runs
# each): vfork, clone and clone3_vfork 0.39-0.69, every mode one of a few
# counts repeated across boots; fork 0.04-0.25, its modes thousands of
# instructions apart from boot to boot. 0.3 lies between the two. Above
# one half the median is the mode anyway; below it the median can fall
# between two counts where the mode does not (vfork@2.70MB: mode 42,570
# held by 0.47-0.61, median 42,570-42,594).
MODE_SHARE_MIN = 0.3
# How a calibration keeps a row's mode beside its median ('TEST:ROW#mode').
MODE_KEY_SUFFIX = "#mode"
# What the prior's file says of a row it saw move beyond the exact
# tolerance (its class) and the class it leaves such a row at best.
PRIOR_BOUND = "near"


class Decision(NamedTuple):
    """A row's class, verdict ('pending': the boot rule decides), note,
    and the margin (instructions) its verdict took (None: pending)."""
    cls: str
    verdict: str
    note: Optional[str] = None
    margin: Optional[float] = None


@dataclass(frozen=True)
class Known:
    """What boots of one kernel showed of a row: its class, the largest
    range across boots of one repetition's figure (boot_range) and of
    every figure (range), in instructions per operation, the median and
    the boots seen."""
    cls: str
    boot_range: float
    range: float
    median: float
    boots: int
    # What the prior (with_prior) saw of a row it saw move: which
    # setup's and how many boots ('' when it did not), and the largest
    # range across its boots of one repetition's figure as a share of
    # the row. Not in the JSON: the class and the margin are.
    bounded_by: str = dataclasses.field(default="", compare=False)
    prior_share: float = dataclasses.field(default=0.0, compare=False)

    @property
    def spread_pct(self) -> float:
        return self.range / abs(self.median) * 100 if self.median else 0.0

    def margin(self, paired: bool = True) -> float:
        """How far apart (instructions) the sides must be: no closer
        than the boots of the calibration, nor, relative to the row,
        than those of the prior that saw it move."""
        seen = self.boot_range if paired else self.range
        share = 0.0 if self.cls == "exact" else \
            abs(self.median) * CALIBRATED_FLOOR_PCT / 100
        return max(FLOOR_INSN, BOOT_SPREAD_FACTOR * seen, share,
                   prior_floor(self.prior_share, self.median))

    def to_json(self) -> Dict[str, Any]:
        return {"class": self.cls, "boot_range_insn": round(self.boot_range, 4),
                "range_insn": round(self.range, 4),
                "median_insn": round(self.median, 4),
                "spread_pct": round(self.spread_pct, 6), "boots": self.boots}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> "Known":
        """ValueError (or KeyError, TypeError) when d is not one."""
        k = Known(str(d["class"]), float(d["boot_range_insn"]),
                  float(d["range_insn"]), float(d["median_insn"]),
                  int(d["boots"]))
        if k.cls not in CLASSES or min(k.boot_range, k.range, k.boots) < 0:
            raise ValueError(f"not a calibrated row: {dict(d)}")
        return k


def setup_of(header: results.Header) -> Optional[str]:
    """The setup a run's figures were counted in: the guest's
    architecture (uname -m); None when the run does not say. Figures of
    two setups are different counts (another instruction set): a row
    exact in one says nothing of the other."""
    return header.machine.arch or None


def kernel_of(header: results.Header) -> Optional[str]:
    """One build of a kernel, as a run names it: uname -r and uname -v
    (builds of two commits of one tree share a release, never their
    uname -v: kbench's builds stamp it with their source and
    configuration, kbtools.kernel.build_stamp, other builds with their
    number and time); None when the run does not say."""
    k = header.kernel
    return " ".join(x for x in (k.release, k.version) if x) or None


def release_of(kernel: Optional[str]) -> str:
    """What a note calls a kernel (kernel_of): its release."""
    return kernel.split(" ", 1)[0] if kernel else "unnamed"


def load_classes(path: str = CLASSES_FILE) -> Dict[str, Any]:
    """The whole prior's file: 'setups', each with its 'rows', the A/A
    'runs' they came from and (when measured) the 'aa' record of the
    rule's error (a file of one setup's 'rows' and 'runs', as written
    before, is x86_64's); OSError or ValueError when it cannot be
    read."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if "setups" not in doc and "rows" in doc and "runs" in doc:
        doc = {"about": doc.get("about", ""), "setups": {FIRST_SETUP: {
            k: doc[k] for k in ("runs", "rows", "aa") if k in doc}}}
    setups = doc.get("setups")
    if not isinstance(setups, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("rows"), dict)
            for v in setups.values()):
        raise ValueError("no 'setups' object of 'rows'")
    return doc


def mode_key(key: str) -> str:
    """Where a calibration keeps the mode of row 'TEST:ROW'."""
    return key + MODE_KEY_SUFFIX


def steady_rep(rep: results.Repetition) -> bool:
    """The repetition has a most common value that holds MODE_SHARE_MIN
    of its samples or more."""
    return MODE in rep.figures and \
        rep.figures.get(MODE_SHARE, 0.0) >= MODE_SHARE_MIN


def steady_mode(rows: Sequence[results.Row]) -> bool:
    """Every repetition that measured each of rows holds a steady mode
    (steady_rep)."""
    reps = [rep for row in rows for rep in row.reps
            if rep.status == results.Status.OK]
    return bool(reps) and all(map(steady_rep, reps))


def figure_of(rows: Sequence[results.Row], stat: str = "median") -> str:
    """The figure an exact row is judged by: its mode in place of the
    median where every repetition of rows (both sides, or a
    calibration's boots) holds a steady one (steady_mode), else stat."""
    return MODE if stat == "median" and steady_mode(rows) else stat


def judged_figure(rows: Sequence[results.Row], headers: Sequence[results.Header],
                  test: str, row: str, cal: Optional[Mapping[str, Known]],
                  stat: str = "median", same_boots: bool = False
                  ) -> Tuple[str, Optional[Known]]:
    """The figure TEST:ROW is judged by and the base's calibration of it
    (known), for compare's A/B and the bisection's steps alike: the mode
    where every repetition of rows (both sides) holds a steady one
    (figure_of) and the calibration has the row's mode (or both sides
    ran in the same boots, which need none), else stat."""
    figure = figure_of(rows, stat)
    if figure != stat:
        found = known(headers, test, row, cal, figure=figure)
        if found is not None or same_boots:
            return figure, found
    return stat, known(headers, test, row, cal)


def known(headers: Sequence[results.Header], test: str, row: str,
          cal: Optional[Mapping[str, Known]],
          prior: Optional[str] = None,
          figure: str = "median") -> Optional[Known]:
    """The one lookup of a row's class: what the calibration of the
    base's kernel (cal: kbtools.calibration, 'TEST:ROW' -> Known) showed
    of TEST:ROW, for the runs compared (each side's header), bounded by
    the prior of their architecture (with_prior; prior: the classes
    file, CLASSES_FILE by default); None when there is no calibration, it lacks the row, or the
    runs were counted in two setups (setup_of), which no calibration
    spans. A row without one goes to the boot rule, never exact. figure
    MODE: the calibration of the row's mode (mode_key), which the prior
    bounds by what it saw of that mode, or of the row's median where its
    boots held no steady mode (prior_saw_move)."""
    setups = {setup_of(h) for h in headers}
    if cal is None or len(setups) > 1:
        return None
    key = f"{test}:{row}"
    if figure == MODE:
        key = mode_key(key)
    found = cal.get(key)
    if found is None:
        return None
    return with_prior(found, setups.pop() if setups else None, key, prior,
                      headers[0].machine.icount_settings if headers else None,
                      kernel_of(headers[0]) if headers else None)


def prior_setup(setup: Optional[str]) -> Optional[str]:
    """The architecture a setup's prior is kept under (kbtools.arch's
    name: 'aarch64' and 'arm64' are one), or None for none known."""
    found = arch.lookup(setup) if setup else None
    return found.name if found else None


class Moved(NamedTuple):
    """What a prior saw of a row that moved: the boots it was seen in,
    the largest range across them of one repetition's figure as a share
    of the row (0.0 when the prior's layout does not say), and the
    kernels those boots ran (0 when it does not say)."""
    boots: int
    share: float
    kernels: int = 0


def prior_moved(path: Optional[str] = None) -> Dict[str, Dict[str, Moved]]:
    """Architecture (prior_setup) -> 'TEST:ROW' -> Moved, for every row
    its prior saw move beyond the exact tolerance (class near or noisy);
    {} when the file cannot be read (no prior: the calibration alone
    classes the rows)."""
    return _prior_moved(path or CLASSES_FILE)


def _moved(row: Mapping[str, Any]) -> Moved:
    """A row of either layout: with its ranges (boot_range_insn over
    median_insn), or as written before calibrations (class, spread_pct
    over every figure, boots)."""
    boots = int(row.get("boots") or 0)
    kernels = int(row.get("kernels") or 0)
    try:
        return Moved(boots, abs(float(row["boot_range_insn"]) /
                                float(row["median_insn"])), kernels)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return Moved(boots, float(row.get("spread_pct") or 0.0) / 100,
                     kernels)


def settle_of(settings: str) -> str:
    """The settle a run's exact guest did before its tests, as its
    settings (machine.icount_settings, either layout) name it: '' for
    none."""
    m = re.search(r"(?:^|[;\s])settle=([^;\s]+)", settings)
    return m.group(1) if m else ""


def sched_of(settings: str) -> str:
    """How a run's exact guest scheduled its process-creation loops, as
    its settings name it (policy.Icount's 'sched'): '' for the programs'
    own policy (SCHED_OTHER)."""
    m = re.search(r"(?:^|[;\s])sched=([^;\s]+)", settings)
    return m.group(1) if m else ""


def prior_scheds(path: Optional[str] = None) -> Dict[str, str]:
    """Architecture (prior_setup) -> how its prior's boots scheduled
    their process-creation loops ('sched' of its setup: '' for the
    programs' own policy, also when the setup does not say: every prior
    made before the setting was); {} when the file cannot be read."""
    return _prior_scheds(path or CLASSES_FILE)


def _setups(path: str) -> List[Tuple[str, Mapping[str, Any]]]:
    """(architecture (prior_setup), its setup) of each setup of the
    classes file at path whose architecture is known; [] when the file
    cannot be read."""
    try:
        setups = load_classes(path)["setups"]
    except (OSError, ValueError):
        return []
    return [(arch_name, setup) for arch_name, setup in
            ((prior_setup(n), v) for n, v in setups.items())
            if arch_name is not None]


@functools.lru_cache(maxsize=8)
def _prior_scheds(path: str) -> Dict[str, str]:
    return {arch_name: str(setup.get("sched") or "")
            for arch_name, setup in _setups(path)}


def prior_settles(path: Optional[str] = None) -> Dict[str, Optional[str]]:
    """Architecture (prior_setup) -> the settle its prior's boots did
    ('settle' of its setup: '' none), or None for a prior written before
    priors were keyed by it; {} when the file cannot be read."""
    return _prior_settles(path or CLASSES_FILE)


@functools.lru_cache(maxsize=8)
def _prior_settles(path: str) -> Dict[str, Optional[str]]:
    return {arch_name: None if setup.get("settle") is None
            else str(setup["settle"]) for arch_name, setup in _setups(path)}


def stale_prior(setup: Optional[str], settings: Optional[str],
                prior: Optional[str] = None,
                key: Optional[str] = None) -> Optional[str]:
    """Why the prior of setup's architecture does not speak for runs
    whose exact guest ran with settings (machine.icount_settings): its
    boots settled otherwise, so what moved in them says nothing of these
    runs' rows (a settle that stops kernel threads inside the timed loops
    steadies rows the prior saw move), or they timed their process
    creations at another policy (sched_of; then only for the modes of
    the rows it schedules, policy.creation_row: key 'TEST:ROW#mode'
    (mode_key) of such a row, or None for any row. The policy steadies
    those rows' modes, measured; their medians move with the slab state
    at either policy, as the prior saw). None when it speaks for them,
    or the runs do not say (settings None)."""
    arch_name = prior_setup(setup)
    if arch_name is None or settings is None:
        return None
    want = prior_settles(prior).get(arch_name)
    have = settle_of(settings)
    if want is not None and want != have:
        return (f"the {arch_name} prior's boots settled otherwise "
                f"(settle={want or 'none'}, these runs: settle="
                f"{have or 'none'}): icount_classes.json has no prior of "
                f"this guest")
    scheds = prior_scheds(prior)
    if arch_name not in scheds or scheds[arch_name] == sched_of(settings):
        return None
    if key is not None and not (key.endswith(MODE_KEY_SUFFIX) and policy.
                                creation_row(key[:-len(MODE_KEY_SUFFIX)])):
        return None
    return (f"the {arch_name} prior's boots scheduled their process "
            f"creations otherwise (sched={scheds[arch_name] or 'other'}, "
            f"these runs: sched={sched_of(settings) or 'other'}): "
            f"icount_classes.json has no prior of this guest")


def prior_modes(path: Optional[str] = None) -> Dict[str, Set[str]]:
    """Architecture (prior_setup) -> the rows whose mode its prior's
    boots held steady in every repetition ('TEST:ROW#mode', mode_key),
    exact or not; {} when the file cannot be read."""
    return _prior_modes(path or CLASSES_FILE)


@functools.lru_cache(maxsize=8)
def _prior_modes(path: str) -> Dict[str, Set[str]]:
    out: Dict[str, Set[str]] = {}
    for arch_name, setup in _setups(path):
        out.setdefault(arch_name, set()).update(
            k for k in setup["rows"] if k.endswith(MODE_KEY_SUFFIX))
    return out


@functools.lru_cache(maxsize=8)
def _prior_moved(path: str) -> Dict[str, Dict[str, Moved]]:
    out: Dict[str, Dict[str, Moved]] = {}
    for arch_name, setup in _setups(path):
        moved = out.setdefault(arch_name, {})
        for key, row in setup["rows"].items():
            if isinstance(row, dict) and row.get("class") in (
                    "near", "noisy"):
                moved[key] = _moved(row)
    return out


class KernelPrior(NamedTuple):
    """What the prior's boots of one kernel (its build, kernel_of)
    showed: every row they ran ('TEST:ROW', and 'TEST:ROW#mode' where
    they held its mode steady) and, of those, the rows they saw move."""
    boots: int
    ran: FrozenSet[str]
    moved: Dict[str, Moved]


def prior_kernels(path: Optional[str] = None
                  ) -> Dict[str, Dict[str, KernelPrior]]:
    """Architecture (prior_setup) -> kernel (kernel_of: one build) ->
    KernelPrior, for each kernel whose boots its prior keeps apart
    ('kernel_rows' of its setup); {} when the file cannot be read or
    keeps none."""
    return _prior_kernels(path or CLASSES_FILE)


@functools.lru_cache(maxsize=8)
def _prior_kernels(path: str) -> Dict[str, Dict[str, KernelPrior]]:
    out: Dict[str, Dict[str, KernelPrior]] = {}
    for arch_name, setup in _setups(path):
        kernels = setup.get("kernels") or {}
        for kernel, rows in (setup.get("kernel_rows") or {}).items():
            if not isinstance(rows, dict):
                continue
            out.setdefault(arch_name, {})[str(kernel)] = KernelPrior(
                int(kernels.get(kernel) or 0), frozenset(rows),
                {k: _moved(r) for k, r in rows.items()
                 if isinstance(r, dict) and r.get("class") in
                 ("near", "noisy")})
    return out


def forget_prior() -> None:
    """Read the classes files anew at the next lookup (what a process
    that rewrote one, a test or the bench, needs)."""
    _prior_moved.cache_clear()
    _prior_modes.cache_clear()
    _prior_scheds.cache_clear()
    _prior_settles.cache_clear()
    _prior_kernels.cache_clear()


def with_prior(found: Known, setup: Optional[str], key: str,
               prior: Optional[str] = None,
               settings: Optional[str] = None,
               kernel: Optional[str] = None) -> Known:
    """found (a calibration's row 'TEST:ROW' in setup, its guest's
    settings), bounded by the prior of setup's own architecture when it
    saw the row move (three boots can agree by chance where twenty did
    not): at best PRIOR_BOUND, and a margin of at least twice the share
    of the row its boots spread over (bounded)."""
    seen = prior_saw_move(setup, key, prior, settings, kernel)
    if seen is None:
        return found
    return bounded(found, seen.why, seen.share)


def prior_floor(share: float, median: float) -> float:
    """The least margin a prior that saw a row move by share of it
    allows: BOOT_SPREAD_FACTOR times that share of the row."""
    return BOOT_SPREAD_FACTOR * share * abs(median)


def prior_clause(why: str, share: float) -> str:
    """What a margin's note says of the prior that widened it."""
    return f"{why}, by {share:.2%} of the row"


class Seen(NamedTuple):
    """A prior that saw a row move: what the note says of it (why) and
    the largest range across its boots of one repetition's figure as a
    share of the row."""
    why: str
    share: float


def prior_saw_move(setup: Optional[str], key: str,
                   prior: Optional[str] = None,
                   settings: Optional[str] = None,
                   kernel: Optional[str] = None) -> Optional[Seen]:
    """What the prior of setup's own architecture saw of 'TEST:ROW' (or
    of its mode, 'TEST:ROW#mode') when it saw it move beyond the exact
    tolerance: its boots of this kernel (the base's build, kernel_of)
    where it keeps them apart and they ran the row, else the worst of
    any of its kernels (how far a row moves differs from kernel to
    kernel, and a kernel it never saw may move it as far as any, and
    its modes at best near);
    None when they did not see it move, there is no prior of that
    architecture, or its boots settled otherwise than runs of these
    guest settings did, or timed the row's process creations at another
    policy (stale_prior)."""
    arch_name = prior_setup(setup)
    if arch_name is None or stale_prior(setup, settings, prior, key):
        return None
    own = prior_kernels(prior).get(arch_name, {}).get(kernel or "")
    median_key = key.removesuffix(MODE_KEY_SUFFIX)
    if own is not None and median_key in own.ran:
        # A mode its boots held steady is bounded by what it did in
        # them; any other by what the row's median did.
        moved = own.moved.get(key if key in own.ran else median_key)
        if moved is None:
            return None
        return Seen(f"the {arch_name} prior's {own.boots} boots of this "
                    f"kernel ({release_of(kernel)}) saw it move",
                    moved.share)
    unseen_mode = key != median_key and arch_name in prior_kernels(prior)
    if key not in prior_modes(prior).get(arch_name, set()):
        key = median_key
    moved = prior_moved(prior).get(arch_name, {}).get(key)
    if unseen_mode:
        # Another kernel's modes step with its own state (Debian 6.1's
        # clone modes by 2-4 instructions from boot to boot, where the
        # test kernel's never moved in 40 boots): three boots of a
        # kernel the prior never saw do not make its mode exact.
        return Seen(f"the {arch_name} prior has no boots of this kernel "
                    f"({release_of(kernel)}), whose modes may step",
                    moved.share if moved else 0.0)
    if moved is None:
        return None
    over = f" over {moved.boots} boots" if moved.boots else ""
    if moved.kernels > 1:
        over += f" of {moved.kernels} kernels"
    return Seen(f"the {arch_name} prior saw it move{over}", moved.share)


def bounded(found: Known, why: str, share: float = 0.0) -> Known:
    """found, as other boots that saw the row move beyond the exact
    tolerance (why says which) leave it: at best PRIOR_BOUND, its margin
    at least twice share (their range, a share of the row) of it."""
    return dataclasses.replace(
        found, cls=worse(found.cls, PRIOR_BOUND), bounded_by=why,
        prior_share=max(found.prior_share, share))


def aa_error(setup: Optional[str] = FIRST_SETUP,
             path: Optional[str] = None,
             settings: Optional[str] = None,
             kernel: Optional[str] = None) -> str:
    """What A/A runs showed of the rule's error in a setup (the runs'
    architecture: 'aarch64' and 'arm64' are one, their guest's settings),
    from the 'aa' record of that architecture's prior (bench/guest_modes.py
    exact), never another's nor one whose boots settled otherwise; for a
    base kernel (kernel_of) that a prior of several kernels never saw,
    from its 'aa_unseen' record (each of its kernels judged with a prior
    of the others, as such a kernel is): one clause."""
    name = setup or "an architecture the runs do not name"
    stale = stale_prior(setup, settings, path)
    if stale:
        return f"no A/A record of this rule's error on {name}: {stale}"
    try:
        setups = load_classes(path or CLASSES_FILE)["setups"]
        found = next(v for k, v in setups.items()
                     if setup and prior_setup(k) == prior_setup(setup))
        unseen = "kernel_rows" in found and \
            (kernel or "") not in found["kernel_rows"]
        if unseen and "aa_unseen" not in found:
            return (f"no A/A record of this rule's error on {name} for a "
                    f"kernel its prior never saw ({release_of(kernel)}; "
                    f"it holds boots of "
                    f"{', '.join(sorted(found['kernel_rows']))} alone)")
        aa = found["aa_unseen"] if unseen else found["aa"]
        false, trials = int(aa["false"]), int(aa["trials"])
        what = str(aa["what"])
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return (f"no A/A record of this rule's error on {name} "
                f"(icount_classes.json)")
    bound = stats.binomial_upper(false, trials)
    on = f"{setup}, for a kernel its prior never saw ({release_of(kernel)})" \
        if unseen else setup
    return (f"A/A runs on {on}: {false} false verdicts in {trials} row "
            f"comparisons "
            f"({what}): at most {bound:.2g} a row at 95% confidence")


def worse(a: str, b: str) -> str:
    """The less exact of two classes."""
    return max(a, b, key=CLASSES.index)


def spread(values: Sequence[float]) -> float:
    """Largest minus smallest."""
    return max(values) - min(values)


def rel_spread_pct(values: Sequence[float]) -> Optional[float]:
    """The spread in percent of the median; None for a median of 0."""
    mid = stats.median(values)
    return spread(values) / abs(mid) * 100 if mid else None


def class_of(boot_range: float, median: float,
             range_: Optional[float] = None) -> str:
    """A calibrated row's class from its ranges (instructions)."""
    whole = boot_range if range_ is None else max(boot_range, range_)
    if boot_range <= abs(median) * EXACT_PPM / 1e6:
        return "exact"
    if median and whole / abs(median) * 100 <= NEAR_SPREAD_PCT:
        return "near"
    return "noisy"


def known_of(boots: Sequence[Sequence[float]]) -> Optional[Known]:
    """The calibration of a row from its figures in each of two or more
    boots (each boot's repetitions in run order); None with fewer."""
    boots = [list(b) for b in boots if b]
    if len(boots) < 2:
        return None
    n = min(len(b) for b in boots)
    boot_range = max(spread([b[i] for b in boots]) for i in range(n))
    flat = [v for b in boots for v in b]
    median = stats.median(flat)
    return Known(class_of(boot_range, median), boot_range, spread(flat),
                 median, len(boots))


def row_class(vb: Sequence[float], vc: Sequence[float]) -> str:
    """exact, near or noisy, from both sides' repetitions (two or more
    each) in the same boots."""
    if max(spread(vb), spread(vc)) <= EXACT_SPREAD_INSN:
        return "exact"
    rb, rc = rel_spread_pct(vb), rel_spread_pct(vc)
    if rb is not None and rc is not None and max(rb, rc) <= NEAR_SPREAD_PCT:
        return "near"
    return "noisy"


def within_boot(vb: Sequence[float], vc: Sequence[float],
                setup: Optional[str] = None, key: str = "",
                prior: Optional[str] = None,
                settings: Optional[str] = None,
                kernel: Optional[str] = None) -> Decision:
    """Both sides in the same boots (of setup, the runs' architecture):
    the class from their repetitions, bounded by the prior of setup's
    architecture when it saw TEST:ROW (key) move, as known() bounds a
    calibration's (a few repetitions agree by chance as a few boots do:
    fork read slower (near) in a seccomp A/B that changed getppid
    alone); slower (faster) when the candidate's range is above (below)
    the base's by more than the floor (exact) or the larger spread plus
    NEAR_FLOOR_PCT % (near), and no closer than twice the share of the
    row the prior's boots spread over; a noisy row 'pending'."""
    seen = prior_saw_move(setup, key, prior, settings, kernel)
    cls = row_class(vb, vc)
    if seen is not None:
        cls = worse(cls, PRIOR_BOUND)
    if cls == "noisy":
        return Decision(cls, "pending")
    margin = FLOOR_INSN if cls == "exact" else max(vb) * (
        max(rel_spread_pct(vb) or 0.0, rel_spread_pct(vc) or 0.0)
        + NEAR_FLOOR_PCT) / 100
    source = "the repetitions in these boots"
    if seen is not None:
        margin = max(margin, prior_floor(seen.share, stats.median(vb)))
        source += "; " + prior_clause(seen.why, seen.share)
    verdict = _verdict(min(vc) - max(vb), max(vc) - min(vb), margin)
    note = _same_note(vb, vc, cls, margin, source) \
        if verdict == "same" else None
    return Decision(cls, verdict, note, margin)


def _verdict(low: float, high: float, margin: float) -> str:
    if low > margin:
        return "slower"
    if high < -margin:
        return "faster"
    return "same"


def _same_note(vb: Sequence[float], vc: Sequence[float], cls: str,
               margin: float, source: str) -> Optional[str]:
    if stats.median(vc) == stats.median(vb):
        return None
    return (f"within the {cls} margin of {fmt_insn(margin)} instructions "
            f"({source})")


def decide(vb: Sequence[float], vc: Sequence[float],
           known: Optional[Known]) -> Decision:
    """(class, verdict, note) of a row from each side's figure of each
    repetition of a run (in instructions per operation, in run order;
    two or more each) and the calibration of the base's kernel (known);
    'pending' when there is none: the boot rule decides."""
    if known is None:
        return Decision(row_class(vb, vc), "pending")
    paired = len(vb) == len(vc)
    margin = known.margin(paired)
    if paired:
        diffs = [c - b for b, c in zip(vb, vc)]
        low, high = min(diffs), max(diffs)
    else:
        low, high = min(vc) - max(vb), max(vc) - min(vb)
    verdict = _verdict(low, high, margin)
    note = None
    if verdict == "same":
        bound = "; " + prior_clause(known.bounded_by, known.prior_share) \
            if known.bounded_by else ""
        note = _same_note(vb, vc, known.cls, margin,
                          f"{BOOT_SPREAD_FACTOR:g}x the range of "
                          f"{known.boots} boots of the base{bound}")
    return Decision(known.cls, verdict, note, margin)


def too_few(vb: List[float], vc: List[float]) -> Optional[str]:
    """Why the repetitions cannot show a spread, or None."""
    if min(len(vb), len(vc)) < 2:
        return (f"{len(vb)} vs {len(vc)} repetitions: an exact verdict "
                f"needs 2 per side, so that each shows its spread")
    return None


def fmt_insn(v: Optional[float]) -> str:
    """An instruction count to three decimals: a difference of one
    instruction in a batch of 1000 shows."""
    if v is None:
        return "-"
    return f"{v:,.3f}" if abs(v) < 1e4 else f"{v:,.0f}"
