# SPDX-License-Identifier: GPL-2.0
"""Verdicts on exact figures: rows measured under QEMU's instruction
counter (machine.clock_mode "icount"), where a figure is the number of
guest instructions an operation took, not a time.

Such a figure does not drift with the host's load, so a row's
repetitions agree to the instruction or nearly, and one boot per side
decides. Every row gets a class from the spread its repetitions show on
each side (measured, never assumed):

  exact  both sides' repetitions within EXACT_SPREAD_INSN instructions
         of each other: slower (faster) when every candidate repetition
         is more than FLOOR_INSN instructions above (below) every base
         repetition, so that one added instruction per operation reads
         slower
  near   both sides within NEAR_SPREAD_PCT %: slower (faster) when the
         candidate's lowest repetition is above the base's highest by
         more than the larger side's spread plus NEAR_FLOOR_PCT %
  noisy  wider: the instructions depend on something outside the
         kernel's code path (a wait for the host, the placement of new
         processes); these rows keep the statistical rule, over boots

A comparison with one boot per side sees its repetitions, not its boots,
and a row can repeat itself within a boot yet differ between boots (a
getpgid of the caller's own pid costs 17 more instructions once the pid
crosses an IDR level). So a row's class is the worse of what this
comparison shows and what A/A runs of one kernel over several boots
showed in the same setup (CLASSES_FILE, written by bench/guest_modes.py
classes; known() is its one lookup, setup_of() what tells setups apart:
the architecture); a row no A/A run of the setup has seen is at best
near; a near row's margin takes the larger of this comparison's spread
and BOOT_SPREAD_FACTOR times the boots'.

What instructions do not show: cache and TLB misses, lock contention,
memory bandwidth, device latency, and work that costs cycles rather
than instructions (VERW buffer clearing, IBPB). A change of those alone
reads 'same' here.
"""

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kbtools import results, stats

# Repetitions of a batched null system call differ by one instruction
# per batch (0.001 per call with 1000 calls); a quarter instruction per
# operation leaves room for rows timed one operation at a time.
EXACT_SPREAD_INSN = 0.25
# Half an instruction per operation: one added instruction is twice that.
FLOOR_INSN = 0.5
NEAR_SPREAD_PCT = 1.0
NEAR_FLOOR_PCT = 0.1
# The range of the few boots an A/A calibration has is short of the range
# of many boots (two boots of a normal spread show about 1.1 sigma, four
# about 2): a near row's margin takes twice the boots' range. Held out,
# two-boot calibrations alone let 1 and 2 of 94 rows through an A/A.
BOOT_SPREAD_FACTOR = 2.0
CLASSES = ("exact", "near", "noisy")
CLASSES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "icount_classes.json")
# A classes file written before setups were told apart holds the A/A
# runs of x86_64 guests alone.
FIRST_SETUP = "x86_64"
Calibration = Dict[str, Dict[str, Dict[str, Any]]]
_calibration: Optional[Calibration] = None


def setup_of(header: results.Header) -> Optional[str]:
    """The setup a run's figures were counted in, as the classes file
    tells setups apart: the guest's architecture (uname -m); None when
    the run does not say. Figures of two setups are different counts
    (another instruction set): a row exact in one says nothing of the
    other."""
    return header.machine.arch or None


def load_classes(path: str = CLASSES_FILE) -> Dict[str, Any]:
    """The whole classes file: 'setups', each with its 'rows' and the A/A
    'runs' they came from (a file of one setup's 'rows' and 'runs', as
    written before, is x86_64's); OSError or ValueError when it cannot
    be read."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if "setups" not in doc and "rows" in doc and "runs" in doc:
        doc = {"about": doc.get("about", ""), "setups": {FIRST_SETUP: {
            "runs": doc["runs"], "rows": doc["rows"]}}}
    setups = doc.get("setups")
    if not isinstance(setups, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("rows"), dict)
            for v in setups.values()):
        raise ValueError("no 'setups' object of 'rows'")
    return doc


def calibration(path: str = CLASSES_FILE) -> Calibration:
    """SETUP -> 'TEST:ROW' -> {'class', 'spread_pct', 'boots'} measured
    across boots; empty when the file is missing."""
    global _calibration
    if _calibration is not None and path == CLASSES_FILE:
        return _calibration
    try:
        setups = {name: setup["rows"] for name, setup in
                  load_classes(path)["setups"].items()}
    except (OSError, ValueError, KeyError):
        setups = {}
    if path == CLASSES_FILE:
        _calibration = setups
    return setups


def known(headers: Sequence[results.Header], test: str, row: str
          ) -> Optional[Dict[str, Any]]:
    """What A/A runs across boots showed of TEST:ROW in the setups of
    the runs compared (each side's header): the worst class, the widest
    spread and the fewest boots over them; None when the A/A runs of a
    setup have not seen the row (or a run does not say its setup). The
    one lookup of the classes: what tells setups apart (setup_of) can
    grow without its callers changing."""
    found: List[Dict[str, Any]] = []
    for setup in {setup_of(h) for h in headers} or {None}:
        entry = calibration().get(setup or "", {}).get(f"{test}:{row}")
        if entry is None:
            return None
        found.append(entry)
    cls = "exact"
    for entry in found:
        cls = worse(cls, entry.get("class", "exact"))
    return {"class": cls,
            "spread_pct": max(float(e.get("spread_pct") or 0.0)
                              for e in found),
            "boots": min(int(e.get("boots") or 0) for e in found)}


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


def row_class(vb: Sequence[float], vc: Sequence[float]) -> str:
    """exact, near or noisy, from both sides' repetitions (two or more
    each)."""
    if max(spread(vb), spread(vc)) <= EXACT_SPREAD_INSN:
        return "exact"
    rb, rc = rel_spread_pct(vb), rel_spread_pct(vc)
    if rb is not None and rc is not None and max(rb, rc) <= NEAR_SPREAD_PCT:
        return "near"
    return "noisy"


def _margin(cls: str, vb: Sequence[float], vc: Sequence[float],
            boot_spread_pct: float = 0.0) -> float:
    """How far apart (in instructions) the two sides' ranges must be."""
    if cls == "exact":
        return FLOOR_INSN
    worst = max(rel_spread_pct(vb) or 0.0, rel_spread_pct(vc) or 0.0,
                boot_spread_pct * BOOT_SPREAD_FACTOR)
    return max(vb) * (worst + NEAR_FLOOR_PCT) / 100


def decide(vb: Sequence[float], vc: Sequence[float],
           known: Optional[Dict[str, Any]] = None) -> Tuple[str, str, Optional[str]]:
    """(class, verdict, note) of a row from each side's repetitions (in
    instructions per operation, two or more each) and what A/A runs
    across boots showed of it (known: a calibration() entry); the
    verdict of a noisy row is 'pending': the statistical rule decides
    it."""
    cls = row_class(vb, vc)
    spread = 0.0
    if known:
        cls = worse(cls, known.get("class", "exact"))
        spread = float(known.get("spread_pct") or 0.0)
    else:
        # One boot per side cannot show that a row repeats across boots.
        cls = worse(cls, "near")
    if cls == "noisy":
        return cls, "pending", None
    margin = _margin(cls, vb, vc, spread)
    if min(vc) - max(vb) > margin:
        return cls, "slower", None
    if min(vb) - max(vc) > margin:
        return cls, "faster", None
    note = None
    if stats.median(vc) != stats.median(vb):
        note = (f"within the {cls} margin of {fmt_insn(margin)} "
                f"instructions")
    return cls, "same", note


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
