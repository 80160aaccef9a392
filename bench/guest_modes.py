#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How exact is a guest run? Each row's spread across boots under QEMU's
instruction counter, plain TCG, and plain TCG with the host loaded, and
the smallest change each mode can detect with 1, 3 and 5 boots per side.

    bench/guest_modes.py run --kernel IMAGE -o DIR [--boots N]
                             [--modes MODE,...] [--load WORKERS]
                             [RUN_ALL OPTION]...
    bench/guest_modes.py table DIR
    bench/guest_modes.py exact LABEL=DIR...
    bench/guest_modes.py classes [-o FILE] [--merge FILE [--anew]
                                 [--same-build OLD=NEW]...
                                 [--anew-rows PATTERN]...]
                                 ICOUNT_RUN[,...]...

run boots IMAGE N times (default 3) in each mode, one after the other:
  icount      run_all.sh --kernel IMAGE --icount (each program once:
              add --repeat 2 to run it twice, as an A/B's boots do and
              as the priors of icount_classes.json were made, but for
              arm64's first 5 boots)
  tcg         run_all.sh --kernel IMAGE --accel tcg
  tcg-loaded  the same beside stress-ng --cpu WORKERS (default 2)
keeping DIR/MODE/K/ (every program's JSON) and the wall time of each
boot (--modes: only these). table prints, per row, the spread of the boots' medians (largest
over smallest, minus one) in each mode, and the smallest change each
mode detects in that row alone:
  icount, an exact row: one instruction per operation, from one boot;
  a near row: its spread plus the floor (kbtools.exact), from one boot;
  a real clock (and a noisy icount row): the change an exact U test over
  boots flags 80% of the time at 0.05 (kbtools.stats.detectable_shift)
  at this spread; with 1 or 3 boots per side none (2/C(6,3) = 0.1).

exact takes icount boots of one kernel per LABEL (DIR: a directory
whose numbered subdirectories are boots, as DIR/icount/ of run) and
prints, per row and label, the figure it is judged by (its mode where
every repetition of every boot held a steady one, as compare judges it:
kbtools.exact.figure_of; else its median), the row's class and the
largest range of one repetition's figure across the boots (instructions and parts per
million: kbtools.exact.known_of), then the counts of each class, the
false verdicts of the exact rule in A/A runs made of those boots (each
boot in turn the candidate, the calibration.BOOTS after it in a ring
the base's calibration, with their median the base, and every boot but
the candidate the prior: kbtools.exact.bounded, decide), and the
smallest change one boot per side flags in each row (the margin of such
a calibration, at most: the worst set of boots).

classes writes the exact classes of the rows from icount runs, each of
one kernel over several boots (each ICOUNT_RUN: a directory whose
subdirectories are boots, as DIR/icount/ of run, or a run_all.sh
--vs-kernel --icount DIR, whose base/ and candidate/ are boots of one
kernel in an A/A; or several such directories of one kernel, comma
separated, whose boots are taken together): the class of a row over
every repetition of every boot, and its spread (and the same of its
mode, 'TEST:ROW#mode', where every repetition held a steady one), the
worst of each row over the runs, which may be of several kernels (a
row's ranges carried from one kernel to another as the share of the
row they are), kept per setup (kbtools.exact.setup_of: the
guest's architecture, from the runs' own JSON) with the kernels its
boots ran (their builds, uname -r and -v: boots; each row: how many of
them ran it), the settle its boots did and how they scheduled their
process creations
(a prior speaks for runs of that settle and sched alone: runs of
another are refused by --merge; --anew makes the setups of the runs
from them alone and keeps the file's other setups as they were;
--same-build keeps the file's boots of a build under the name a build
of the same source and configuration has now, and --anew-rows drops the
matching rows from the file's own rows of each kernel the runs ran, so
that runs of a changed program alone give them), and
each kernel's own rows beside them ('kernel_rows'). compare's exact
rule reads them as the prior of each architecture
(scripts/kbtools/icount_classes.json, kbtools.exact.with_prior) so that
a row that the prior's boots of the base's kernel saw move (of any of
its kernels, for a kernel it never saw) is never called exact, however
alike a calibration's three boots read it.
"""

import argparse
import fnmatch
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import (Any, Dict, List, Mapping, NamedTuple, Optional, Sequence,
                    Set, Tuple, cast)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import (calibration, cli, exact, policy, proc,  # noqa: E402
                     results, stats)
from kbtools.compare import TIME_UNITS, by_position  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Between the directories of an ICOUNT_RUN made of several runs of one
# kernel (classes: their boots taken together, so that a row's range
# spans every boot of that kernel, not each run's few).
RUN_SEP = ","
MODES = ("icount", "tcg", "tcg-loaded")
BOOTS_PER_SIDE = (1, 3, 5)


def mode_args(mode: str) -> List[str]:
    return ["--icount"] if mode == "icount" else ["--accel", "tcg"]


def run(args: argparse.Namespace) -> int:
    for mode in args.modes:
        with proc.CpuLoad() as load:
            load.set(args.load if mode == "tcg-loaded" else 0)
            for k in range(1, args.boots + 1):
                out = os.path.join(args.output, mode, str(k))
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                start = time.time()
                with open(os.path.join(out, "run.ktap"), "w") as ktap:
                    rc = subprocess.call(
                        [os.path.join(TOP, "run_all.sh"), "--kernel",
                         args.kernel, *mode_args(mode), *args.run_args,
                         "--json", out], stdout=ktap)
                with open(os.path.join(out, "wall"), "w") as f:
                    f.write(f"{time.time() - start:.1f}\n")
                print(f"{mode} boot {k}: exit {rc}, "
                      f"{time.time() - start:.0f} s", file=sys.stderr,
                      flush=True)
    return 0


def boots_of(directory: str, mode: str
             ) -> Tuple[Dict[Tuple[str, str], List[float]],
                        Dict[Tuple[str, str], List[List[float]]]]:
    """(test, row) -> [the row's median of each boot] and the unit, in
    instructions for icount; plus each boot's repetitions (icount)."""
    medians: Dict[Tuple[str, str], List[float]] = {}
    reps: Dict[Tuple[str, str], List[List[float]]] = {}
    root = os.path.join(directory, mode)
    if not os.path.isdir(root):
        return medians, reps
    for k in sorted(os.listdir(root), key=lambda s: int(s)
                    if s.isdigit() else 0):
        path = os.path.join(root, k)
        if not k.isdigit() or not any(f.endswith(".json")
                                      for f in os.listdir(path)):
            continue
        for test in results.load(path).tests.values():
            for row in test.rows.values():
                if row.status != "ok" or row.unit not in TIME_UNITS:
                    continue
                scale = test.insn_per_unit(row.unit) or 1.0
                vs = [v * scale for v in row.values()]
                if not vs:
                    continue
                key = (test.name, row.name)
                medians.setdefault(key, []).append(stats.median(vs))
                reps.setdefault(key, []).append(vs)
    return medians, reps


def spread_pct(values: Sequence[float]) -> Optional[float]:
    if len(values) < 2 or min(values) <= 0:
        return None
    return (max(values) / min(values) - 1) * 100


def stat_detectable(values: Sequence[float], n: int) -> Optional[float]:
    """The change (percent) an exact U test over n boots per side flags
    80% of the time at 0.05 for a row with these boots' spread; None
    when no change can be flagged (or no spread was measured)."""
    shift = stats.detectable_shift(n, n, 0.05)
    if shift is None or len(values) < 2 or min(values) <= 0:
        return None
    sd = stats.stdev([math.log(v) for v in values])
    return (math.exp(shift * sd) - 1) * 100


def icount_detectable(reps: Sequence[Sequence[float]]
                      ) -> Tuple[Optional[str], Optional[str]]:
    """What an icount boot per side detects in a row, against a
    calibration of its boots: its class and margin ('1 insn' when one
    added instruction is flagged), or None without two boots."""
    known = exact.known_of(reps)
    if known is None:
        return None, None
    margin = known.margin()
    return known.cls, "1 insn" if margin < 1 else \
        f"{margin / known.median * 100:.2g}%"


def boot_dirs(path: str) -> List[str]:
    """The boots of one icount run that left results: its numbered
    subdirectories, or the base/ and candidate/ of an A/A (each holding
    one or more boots); of each run in turn where path is several, comma
    separated (RUN_SEP: the boots of several runs of one kernel, taken
    as one)."""
    if RUN_SEP in path:
        return [d for part in path.split(RUN_SEP) for d in boot_dirs(part)]
    if os.path.isdir(os.path.join(path, "base")):
        dirs = [os.path.join(path, s) for s in ("base", "candidate")]
    else:
        dirs = [os.path.join(path, k) for k in sorted(os.listdir(path))
                if k.isdigit()]
    return [d for d in dirs if os.path.isdir(d) and
            any(f.endswith(".json") for f in os.listdir(d))]


def run_classes(path: str) -> Tuple[str, Dict[str, exact.Known]]:
    """(the run's setup, 'TEST:ROW' -> Known) over every boot of one
    icount run of one kernel."""
    dirs = boot_dirs(path)
    setups = {exact.setup_of(test.header) for d in dirs
              for test in results.load(d).tests.values()}
    if len(setups) != 1 or None in setups:
        raise cli.Error(f"{path}: not the boots of one setup (machine.arch: "
                        f"{', '.join(sorted(str(s) for s in setups))})")
    # The boots alone: the prior is made of them, never bounded by an
    # earlier one (the check above leaves one setup, and not None).
    # With each row's mode where every repetition held a steady one: the
    # prior bounds a mode by what it did, else by what the median did
    # (kbtools.exact.prior_saw_move).
    return cast(str, setups.pop()), \
        calibration.of_dirs(dirs, prior=False).rows


def run_settle(path: str) -> str:
    """The settle every boot of one icount run did before its tests
    (kbtools.exact.settle_of its guest's settings: '' none): a prior
    speaks for runs of its own settle alone."""
    settles = {exact.settle_of(test.header.machine.icount_settings or "")
               for d in boot_dirs(path)
               for test in results.load(d).tests.values()}
    if len(settles) != 1:
        raise cli.Error(f"{path}: not the boots of one settle ("
                        f"{', '.join(sorted(settles)) or 'no boots'})")
    return settles.pop()


def run_sched(path: str) -> Optional[str]:
    """How every boot of one icount run scheduled its process creations
    (kbtools.exact.sched_of its guest's settings: '' the programs' own
    policy): a prior speaks for runs of its own sched alone. None when
    its programs time no process creation (policy.creation_row): the
    sched changes nothing of what they measure, and such a run adds to
    a prior of any sched."""
    scheds = {exact.sched_of(test.header.machine.icount_settings or "")
              for d in boot_dirs(path)
              for test in results.load(d).tests.values()
              if any(policy.creation_row(f"{test.name}:{row}")
                     for row in test.rows)}
    if not scheds and boot_dirs(path):
        return None
    if len(scheds) != 1:
        named = sorted(s or "other" for s in scheds)
        raise cli.Error(f"{path}: not the boots of one sched ("
                        f"{', '.join(named) or 'no boots'})")
    return scheds.pop()


def run_kernel(path: str) -> str:
    """The kernel every boot of one icount run ran (kbtools.exact.kernel_of:
    its build, uname -r and -v): a prior keeps each kernel's rows apart,
    and bounds a base of that build by them."""
    kernels = {exact.kernel_of(test.header) or "" for d in boot_dirs(path)
               for test in results.load(d).tests.values()}
    if len(kernels) != 1 or "" in kernels:
        named = sorted(k or "unnamed" for k in kernels)
        raise cli.Error(f"{path}: not the boots of one kernel ("
                        f"{', '.join(named) or 'no boots'})")
    return kernels.pop()


def run_name(path: str) -> str:
    """How the prior names a run: its directory's name (of each, for
    several runs of one kernel taken as one)."""
    return RUN_SEP.join(os.path.basename(os.path.normpath(p))
                        for p in path.split(RUN_SEP))


def earlier_classes(path: str) -> Dict[str, Dict[str, Any]]:
    """SETUP -> its rows and runs, of an earlier classes file (--merge),
    so that new A/A runs add to its evidence and never erase it."""
    try:
        setups: Dict[str, Dict[str, Any]] = {}
        for name, setup in exact.load_classes(path)["setups"].items():
            setups[name] = {"rows": dict(setup["rows"]),
                            "runs": list(setup["runs"]),
                            "kernels": {str(k): int(v) for k, v in
                                        (setup.get("kernels") or {}).items()},
                            "row_kernels": {
                                k: int(v.get("kernels") or 0)
                                for k, v in setup["rows"].items()},
                            "kernel_rows": {
                                str(r): dict(rows) for r, rows in
                                (setup.get("kernel_rows") or {}).items()},
                            "settle": setup.get("settle"),
                            "sched": str(setup.get("sched") or ""),
                            "aa": earlier_aa(setup["aa"])
                            if "aa" in setup else None,
                            "aa_unseen": setup.get("aa_unseen")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise cli.Error(f"{path}: not a classes file ({e})")
    return setups


def earlier_aa(aa: Mapping[str, Any]) -> Dict[str, Any]:
    """The A/A record of an earlier setup: its counts, and what they
    were counted over, which a setup no run adds to keeps as read."""
    out: Dict[str, Any] = {k: int(aa[k]) for k in
                           ("false", "trials", "boots")}
    if "what" in aa:
        out["what"] = str(aa["what"])
    return out


def known_rows(path: str, name: str, rows: Dict[str, Any]
               ) -> Dict[str, exact.Known]:
    """A setup's rows of the classes file at path as Known (cli.Error
    when they are not, or are of the layout before calibrations: class,
    spread and boots alone, which new boots cannot be added to)."""
    try:
        return {k: exact.Known.from_json(v) for k, v in rows.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise cli.Error(f"{path}: not a classes file whose {name} rows new "
                        f"boots can be added to ({e}): class {name} anew "
                        f"(--anew)")


def build_pair(text: str) -> Tuple[str, str]:
    """--same-build's OLD=NEW (cli.Error unless both are given)."""
    old, sep, new = text.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise cli.Error(f"--same-build '{text}': OLD=NEW, each a build as "
                        f"the prior's kernels name it")
    return old.strip(), new.strip()


def same_builds(setups: Dict[str, Dict[str, Any]],
                renames: Mapping[str, str]) -> None:
    """Each build OLD of the earlier file's setups named NEW (its boots
    and own rows); cli.Error for an OLD no setup holds, or a NEW one
    already holds (two builds' boots are not merged this way)."""
    for old, new in renames.items():
        held = [s for s in setups.values() if old in s["kernels"]]
        if not held:
            raise cli.Error(f"--same-build: the prior holds no build "
                            f"'{old}'")
        for setup in held:
            if new in setup["kernels"]:
                raise cli.Error(f"--same-build: the prior holds '{new}' "
                                f"already")
            setup["kernels"][new] = setup["kernels"].pop(old)
            if old in setup["kernel_rows"]:
                setup["kernel_rows"][new] = setup["kernel_rows"].pop(old)


def rows_anew(own: Dict[str, Any], patterns: Sequence[str]) -> None:
    """Drop from a kernel's own rows those matching any pattern (a row's
    mode with its row)."""
    for k in [k for k in own if any(
            fnmatch.fnmatchcase(k.removesuffix(exact.MODE_KEY_SUFFIX), p)
            for p in patterns)]:
        del own[k]


def merged_known(was: Optional[exact.Known], new: exact.Known
                 ) -> exact.Known:
    """Two calibrations of one row: the wider ranges, the boots of both,
    the worse class. Ranges in instructions of was's median: new's are
    carried over as the share of its own row they are (two kernels'
    rows differ in size, and the prior bounds a row by that share)."""
    if was is None:
        return new
    scale = abs(was.median / new.median) if new.median else 1.0
    boot_range = max(was.boot_range, new.boot_range * scale)
    rng = max(was.range, new.range * scale)
    # Classed by the range across boots, as each calibration is
    # (kbtools.exact.known_of): the places of a run may differ by more.
    cls = exact.worse(exact.worse(was.cls, new.cls),
                      exact.class_of(boot_range, was.median))
    return exact.Known(cls, boot_range, rng, was.median,
                       was.boots + new.boots)


def classes(args: argparse.Namespace) -> int:
    """The worst class and ranges of every row over the runs (each an A/A
    of one kernel) and those of an earlier file (--merge), and the boots
    they were seen in, and the A/A false verdicts of the exact rule over
    their boots, per setup."""
    setups = earlier_classes(args.merge) if args.merge else {}
    same_builds(setups, args.same_build)
    touched: Set[str] = set()
    made_anew: Set[Tuple[str, str]] = set()
    given: Dict[str, List[Tuple[str, str, Dict[str, List["Boot"]]]]] = {}
    for path in args.runs:
        name, found = run_classes(path)
        settle, sched = run_settle(path), run_sched(path)
        kernel = run_kernel(path)
        # --anew: the runs alone make this setup; the others stay as read.
        if args.anew and name not in touched:
            setups.pop(name, None)
        setup = setups.setdefault(name, {"rows": {}, "runs": [], "aa": None,
                                         "kernels": {}, "row_kernels": {},
                                         "kernel_rows": {},
                                         "settle": settle, "sched": sched})
        # A prior that records no sched ran its creations at the
        # programs' own policy; a run that times none (None) takes the
        # sched of the runs that do.
        if setup["sched"] is None:
            setup["sched"] = sched
        if sched is not None and setup["sched"] != sched:
            raise cli.Error(f"{path}: its boots ran their process creations "
                            f"at sched={sched or 'other'}, the {name} "
                            f"prior's at sched={setup['sched'] or 'other'}: "
                            f"class {name} anew (--anew)")
        # A prior written before priors were keyed by their settle
        # (None) stays unkeyed: what its boots did is not known.
        if setup["settle"] not in (None, settle):
            raise cli.Error(f"{path}: its boots settled with settle="
                            f"{settle or 'none'}, the {name} prior's with "
                            f"settle={setup['settle'] or 'none'}: what "
                            f"moved under one says nothing of the other; "
                            f"class {name} anew (--anew)")
        if name not in touched:
            setup["rows"] = known_rows(args.merge, name, setup["rows"])
            setup["kernel_rows"] = {
                r: known_rows(args.merge, f"{name} {r}", rows)
                for r, rows in setup["kernel_rows"].items()}
            setup["aa"] = setup["aa"] or {"false": 0, "trials": 0,
                                          "boots": 0}
            touched.add(name)
        merged, aa = setup["rows"], setup["aa"]
        # A kernel new to the prior adds one to every row it ran.
        new_kernel = kernel not in setup["kernels"]
        own = setup["kernel_rows"].setdefault(kernel, {})
        if args.anew_rows and (name, kernel) not in made_anew:
            made_anew.add((name, kernel))
            rows_anew(own, args.anew_rows)
        for key, known in found.items():
            merged[key] = merged_known(merged.get(key), known)
            own[key] = merged_known(own.get(key), known)
            setup["row_kernels"][key] = setup["row_kernels"].get(key, 0) + \
                new_kernel
        boots = icount_boots(path)
        for trials in map(aa_trials, boots.values()):
            aa["false"] += sum(d.verdict in ("slower", "faster")
                               for d in trials)
            aa["trials"] += len(trials)
        # A directory may hold several boots (an A/A's base/).
        run_boots = max(map(len, boots.values()), default=0)
        aa["boots"] += run_boots
        setup["kernels"][kernel] = setup["kernels"].get(kernel, 0) + \
            run_boots
        aa["what"] = f"{aa['boots']} boots{of_kernels(setup, aa['boots'])}, " \
            f"each run of one kernel, " \
            f"each boot the candidate against a calibration of " \
            f"{calibration.BOOTS} other boots of its run and a prior of " \
            f"all of them"
        setup["runs"].append(run_name(path))
        given.setdefault(name, []).append((kernel, path, boots))
    for name, runs in given.items():
        # Each run judged as of a kernel the prior never saw needs
        # another kernel in the prior; added to what earlier runs gave.
        if len(setups[name]["kernels"]) > 1:
            setups[name]["aa_unseen"] = added_unseen(
                setups[name], unseen_aa(name, setups[name], runs))
    doc = {"about": "exact classes of the rows under QEMU's instruction "
                    "counter, per setup (kbtools.exact.setup_of: the "
                    "guest's architecture), the prior of the docs and the "
                    "bench (a verdict takes the calibration of its own "
                    "kernel): the worst over A/A runs of one kernel each, "
                    "every repetition of every boot "
                    "(bench/guest_modes.py classes --merge)",
           "setups": {name: setup_json(name, setup, name in touched)
                      for name, setup in sorted(setups.items())}}
    with cli.writing(args.output):
        results.write_json(args.output, doc)
    return 0


def of_kernels(setup: Dict[str, Any], boots: int) -> str:
    """How many kernels a prior's boots ran, for the words of an A/A
    record counted over boots of them; '' when the record is not of
    every boot it knows of (an earlier file that did not record them)."""
    n = len(setup["kernels"])
    if sum(setup["kernels"].values()) != boots:
        return ""
    return " of one kernel" if n == 1 else f" of {n} kernels"


def unseen_aa(name: str, setup: Dict[str, Any],
              runs: Sequence[Tuple[str, str, Dict[str, List["Boot"]]]]
              ) -> Dict[str, Any]:
    """The A/A record of the rule for a kernel the prior never saw: each
    kernel's runs (kernel, path, its icount_boots) judged as aa_trials
    does, each boot
    the candidate against a calibration of the boots after it in its
    run, bounded by a prior of the other kernels alone (as compare
    bounds a user's own kernel: their worst, its modes at best near)."""
    false = trials = boots = 0
    kernels = sorted({kernel for kernel, _, _ in runs})
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in kernels:
            path = os.path.join(tmp, "prior.json")
            others = {r: rows for r, rows in setup["kernel_rows"].items()
                      if r != kernel}
            worst: Dict[str, exact.Known] = {}
            for rows in others.values():
                for key, known in rows.items():
                    worst[key] = merged_known(worst.get(key), known)
            prior = {**setup, "rows": worst, "kernel_rows": others,
                     "kernels": {r: n for r, n in setup["kernels"].items()
                                 if r != kernel}}
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"setups": {name: setup_json(name, prior, True)}},
                          f)
            exact.forget_prior()
            for ran, run, run_boots in runs:
                if ran != kernel:
                    continue
                settings = run_settings(run)
                for key, bs in run_boots.items():
                    got = aa_trials(bs, prior=(name, key, path, settings,
                                               kernel))
                    false += sum(d.verdict in ("slower", "faster")
                                 for d in got)
                    trials += len(got)
                boots += max(map(len, run_boots.values()), default=0)
    exact.forget_prior()
    return {"false": false, "trials": trials, "boots": boots}


def added_unseen(setup: Dict[str, Any], new: Dict[str, int]
                 ) -> Dict[str, Any]:
    """A setup's aa_unseen record: an earlier file's (--merge) and the
    new runs' counts added, and what they were counted over (of how many
    kernels where its boots are every boot of the prior's kernels)."""
    was = setup.get("aa_unseen") or {}
    out: Dict[str, Any] = {k: int(was.get(k, 0)) + new[k]
                           for k in ("false", "trials", "boots")}
    out["what"] = f"{out['boots']} boots{of_kernels(setup, out['boots'])}" \
        f", each kernel's runs judged " \
        f"as of a kernel the prior never saw: each boot the candidate " \
        f"against a calibration of {calibration.BOOTS} other boots of " \
        f"its run and a prior of the other kernels"
    return out


def run_settings(path: str) -> str:
    """The exact guest's settings of a run's first boot."""
    for d in boot_dirs(path):
        for test in results.load(d).tests.values():
            return test.header.machine.icount_settings or ""
    return ""


def with_kernels(row: Dict[str, Any], kernels: int) -> Dict[str, Any]:
    """A row of the classes file with the number of kernels that ran it,
    where the prior knows it (not of rows of an earlier file that did
    not record them)."""
    return {**row, "kernels": kernels} if kernels else row


def setup_json(name: str, setup: Dict[str, Any], touched: bool
               ) -> Dict[str, Any]:
    """One setup of the classes file: its runs, the kernels they ran
    (their builds: boots), its A/A record (when one was measured) and its
    rows, each with the number of those kernels that ran it, as read
    when no run added to it."""
    rows = {k: with_kernels(v.to_json(), setup["row_kernels"].get(k, 0))
            for k, v in setup["rows"].items()} if touched else setup["rows"]
    out: Dict[str, Any] = {"runs": setup["runs"]}
    if setup.get("kernels"):
        out["kernels"] = dict(sorted(setup["kernels"].items()))
    if setup.get("settle") is not None:
        out["settle"] = setup["settle"]
    if setup.get("sched"):
        out["sched"] = setup["sched"]
    if setup["aa"]:
        out["aa"] = setup["aa"]
    if setup.get("aa_unseen"):
        out["aa_unseen"] = setup["aa_unseen"]
    out["rows"] = dict(sorted(rows.items()))
    # Each kernel's own rows: a base kernel the prior saw is bounded by
    # what its own boots did (kbtools.exact.prior_saw_move).
    kernel_rows = {r: {k: v.to_json() for k, v in sorted(rows.items())}
                   if touched else rows
                   for r, rows in sorted(setup.get("kernel_rows", {}).items())}
    if kernel_rows:
        out["kernel_rows"] = kernel_rows
    return out


# ---- exact: classes, A/A false verdicts and margins of icount boots ---------

class Boot(NamedTuple):
    """One boot's repetitions of a row, in instructions: their medians,
    and their modes when every one of them held a steady mode
    (kbtools.exact.steady_rep), else None."""
    median: List[float]
    mode: Optional[List[float]]


def icount_boots(directory: str) -> Dict[str, List[Boot]]:
    """'TEST:ROW' -> [each boot's repetitions], over the numbered
    subdirectories of directory that hold results."""
    out: Dict[str, List[Boot]] = {}
    for d in boot_dirs(directory):
        for test in results.load(d).tests.values():
            for row in test.rows.values():
                scale = test.insn_per_unit(row.unit) if row.unit else None
                if scale is None or row.status != "ok":
                    continue
                for reps in row.boot_groups():
                    steady = all(map(exact.steady_rep, reps))
                    out.setdefault(f"{test.name}:{row.name}", []).append(Boot(
                        [r.figures["median"] * scale for r in reps],
                        [r.figures[exact.MODE] * scale for r in reps]
                        if steady else None))
    return out


def judged(boots: Sequence[Boot]) -> Tuple[str, List[List[float]]]:
    """The figure the exact rule judges these boots together by, as
    compare does (kbtools.exact.figure_of: the mode where every
    repetition of every one of them held a steady one, else the
    median), and each boot's values of it."""
    modes = [b.mode for b in boots]
    if modes and all(m is not None for m in modes):
        return exact.MODE, cast(List[List[float]], modes)
    return "median", [b.median for b in boots]


def aa_trials(boots: Sequence[Boot],
              cal_boots: int = calibration.BOOTS,
              prior: Optional[Tuple[str, str, str, str, str]] = None
              ) -> List[exact.Decision]:
    """The A/A runs of a row's boots: each boot in turn the candidate,
    the cal_boots after it (in a ring) the base's calibration, every
    boot but the candidate the prior (kbtools.exact.bounded: a row they
    saw move is at best near, its margin at least twice their range),
    each judged by the figure compare would take (judged: the mode
    where the candidate and its calibration all held a steady one,
    bounded by the prior's mode where all of the prior's boots did, else
    by its median); the decision of each, none with fewer boots than one
    more than that."""
    n = len(boots)
    if n <= cal_boots:
        return []
    out: List[exact.Decision] = []
    for i in range(n):
        cal = [boots[(i + k) % n] for k in range(1, cal_boots + 1)]
        figure, values = judged([*cal, boots[i]])
        others = [*boots[:i], *boots[i + 1:]]
        of_prior = judged(others)
        if of_prior[0] != figure:
            of_prior = judged([b._replace(mode=None) for b in others])
        known = exact.known_of(values[:-1])
        if known and prior:
            setup, key, path, settings, kernel = prior
            known = exact.with_prior(
                known, setup, exact.mode_key(key) if figure == exact.MODE
                else key, path, settings, kernel)
        elif known:
            seen = exact.known_of(of_prior[1])
            if seen and seen.cls != "exact" and seen.median:
                known = exact.bounded(known, "the other boots saw it move",
                                      seen.boot_range / abs(seen.median))
        out.append(exact.decide(by_position(values[:-1]), values[-1],
                                known))
    return out


def worst_margin(boots: Sequence[Sequence[float]],
                 cal_boots: int = calibration.BOOTS) -> Optional[float]:
    """The largest margin a calibration of cal_boots of these boots
    takes (the smallest change one boot per side then flags, at most)."""
    sets = [exact.known_of(list(c))
            for c in itertools.combinations(boots, cal_boots)]
    return max((k.margin() for k in sets if k), default=None)


def fmt_ppm(insn: Optional[float], median: float) -> str:
    if insn is None or not median:
        return "-"
    return f"{insn / abs(median) * 1e6:.3g}"


def exact_table(args: argparse.Namespace) -> int:
    labels: List[Tuple[str, Dict[str, List[Boot]]]] = []
    for item in args.runs:
        label, sep, path = item.partition("=")
        if not sep or not label or not os.path.isdir(path):
            raise cli.Error(f"'{item}': not LABEL=DIR (a directory of boots)")
        labels.append((label, icount_boots(path)))
    keys = sorted({k for _, rows in labels for k in rows})
    head = ["row"] + [f"{label}: {what}" for label, _ in labels
                      for what in ("boots", "figure", "class",
                                   "range (insn)", "ppm", "flags")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    counts = {label: dict.fromkeys(exact.CLASSES, 0) for label, _ in labels}
    by_mode = {label: dict.fromkeys(exact.CLASSES, 0) for label, _ in labels}
    false = {label: [0, 0, 0] for label, _ in labels}  # false, trials, rows
    for key in keys:
        cells = [key]
        for label, rows in labels:
            boots = rows.get(key, [])
            figure, values = judged(boots)
            known = exact.known_of(values)
            if known is None:
                cells += [str(len(boots)), "-", "-", "-", "-", "-"]
                continue
            counts[label][known.cls] += 1
            by_mode[label][known.cls] += figure == exact.MODE
            trials = aa_trials(boots)
            wrong = sum(d.verdict in ("slower", "faster") for d in trials)
            false[label][0] += wrong
            false[label][1] += len(trials)
            false[label][2] += wrong > 0
            margin = worst_margin(values)
            cells += [str(known.boots), figure, known.cls,
                      exact.fmt_insn(known.boot_range),
                      fmt_ppm(known.boot_range, known.median),
                      "1 insn" if margin is not None and margin < 1 else
                      f"{exact.fmt_insn(margin)} insn ({fmt_ppm(margin, known.median)} ppm)"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for label, _ in labels:
        c, m, f = counts[label], by_mode[label], false[label]
        classes_ = ", ".join(
            f"{c[cls]} {cls}" + (f" ({m[cls]} by their mode)" if m[cls]
                                 else "") for cls in exact.CLASSES)
        lines.append(f"{label}: {classes_}; A/A false verdicts {f[0]} of "
                     f"{f[1]} row comparisons ({f[2]} rows)")
    cli.write_stdout("\n".join(lines) + "\n")
    return 0


def fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:.2f}%"


def table(args: argparse.Namespace) -> int:
    data = {m: boots_of(args.directory, m) for m in MODES}
    keys = list(data["icount"][0]) + [k for m in MODES[1:]
                                      for k in data[m][0]
                                      if k not in data["icount"][0]]
    head = ["row", "class", "icount spread", "tcg spread",
            "loaded spread", "icount: 1 boot"] + \
        [f"{m}: {n} boots" for m in ("tcg", "loaded")
         for n in BOOTS_PER_SIDE]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    seen: Set[Tuple[str, str]] = set()
    for key in keys:
        if key in seen:
            continue
        seen.add(key)
        ic_med, ic_reps = data["icount"][0].get(key, []), \
            data["icount"][1].get(key, [])
        cls, ic = icount_detectable(ic_reps)
        cells = [f"{key[0]}:{key[1]}", cls or "-", fmt(spread_pct(ic_med)),
                 fmt(spread_pct(data["tcg"][0].get(key, []))),
                 fmt(spread_pct(data["tcg-loaded"][0].get(key, []))),
                 ic or "statistics"]
        for mode in ("tcg", "tcg-loaded"):
            vals = data[mode][0].get(key, [])
            cells += [fmt(stat_detectable(vals, n)) for n in BOOTS_PER_SIDE]
        lines.append("| " + " | ".join(cells) + " |")
    cli.write_stdout("\n".join(lines) + "\n")
    return 0


@cli.command("guest_modes.py", errors=(results.ResultError,))
def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="guest_modes.py", description=(
        "Spread across boots and detectable change under icount, plain "
        "TCG and loaded TCG."))
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="boot the kernel in each mode (other "
                       "options go to run_all.sh: --repeat 2, -t TEST, "
                       "--arch arm64)")
    r.add_argument("--kernel", required=True)
    r.add_argument("-o", "--output", required=True)
    r.add_argument("--boots", type=int, default=3)
    r.add_argument("--load", type=int, default=2,
                   help="stress-ng --cpu workers for tcg-loaded")
    r.add_argument("--modes", default=",".join(MODES),
                   help="the modes booted, a comma list (default: all)")
    t = sub.add_parser("table", help="print the table of a run")
    t.add_argument("directory")
    x = sub.add_parser("exact", help="classes, A/A false verdicts and "
                       "margins of icount boots")
    x.add_argument("runs", nargs="+", metavar="LABEL=DIR")
    c = sub.add_parser("classes", help="write the exact classes")
    c.add_argument("runs", nargs="+", metavar="ICOUNT_RUN[,...]")
    c.add_argument("-o", "--output", default="-")
    c.add_argument("--merge", metavar="FILE",
                   help="start from the rows of an earlier classes file")
    c.add_argument("--anew", action="store_true",
                   help="with --merge: make each setup the runs are of "
                   "from them alone (a changed guest), keeping the "
                   "file's other setups as they are")
    c.add_argument("--same-build", action="append", default=[],
                   metavar="OLD=NEW",
                   help="with --merge: keep the file's boots of build OLD "
                   "(uname -r and -v, as its kernels name it) as NEW's: "
                   "the same source and configuration built again under "
                   "another uname -v")
    c.add_argument("--anew-rows", action="append", default=[],
                   metavar="PATTERN",
                   help="with --merge: drop the rows matching PATTERN "
                   "('TEST:ROW', shell wildcards) from the file's own rows "
                   "of each kernel the runs ran, so that the runs alone "
                   "give them (their program measures them otherwise now)")
    args, rest = ap.parse_known_args(argv)
    if args.command == "run":
        args.modes = args.modes.split(",")
        if not args.modes or not set(args.modes) <= set(MODES):
            ap.error(f"--modes: a comma list of {', '.join(MODES)}")
        if args.boots < 2:
            ap.error("--boots must be at least 2 (a spread needs two)")
        if "tcg-loaded" in args.modes and not shutil.which("stress-ng"):
            raise cli.Error("needs stress-ng (apt-get install stress-ng)")
        args.run_args = rest
        return run(args)
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "exact":
        return exact_table(args)
    if args.command == "classes":
        for opt in ("anew", "same_build", "anew_rows"):
            if getattr(args, opt) and not args.merge:
                ap.error(f"--{opt.replace('_', '-')}: with --merge FILE "
                         f"(the prior it changes)")
        args.same_build = dict(map(build_pair, args.same_build))
        for path in (p for run in args.runs for p in run.split(RUN_SEP)):
            if not os.path.isdir(path):
                raise cli.Error(f"{path}: no such directory")
        return classes(args)
    if not os.path.isdir(args.directory):
        raise cli.Error(f"{args.directory}: no such directory")
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
