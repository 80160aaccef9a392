#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How exact is a guest run? Each row's spread across boots under QEMU's
instruction counter, plain TCG, and plain TCG with the host loaded, and
the smallest change each mode can detect with 1, 3 and 5 boots per side.

    bench/guest_modes.py run --kernel IMAGE -o DIR [--boots N]
                             [--load WORKERS] [RUN_ALL OPTION]...
    bench/guest_modes.py table DIR
    bench/guest_modes.py classes [-o FILE] [--merge FILE] ICOUNT_RUN...

run boots IMAGE N times (default 3) in each mode, one after the other:
  icount      run_all.sh --kernel IMAGE --icount (each program twice)
  tcg         run_all.sh --kernel IMAGE --accel tcg
  tcg-loaded  the same beside stress-ng --cpu WORKERS (default 2)
keeping DIR/MODE/K/ (every program's JSON) and the wall time of each
boot. table prints, per row, the spread of the boots' medians (largest
over smallest, minus one) in each mode, and the smallest change each
mode detects in that row alone:
  icount, an exact row: one instruction per operation, from one boot;
  a near row: its spread plus the floor (kbtools.exact), from one boot;
  a real clock (and a noisy icount row): the change an exact U test over
  boots flags 80% of the time at 0.05 (kbtools.stats.detectable_shift)
  at this spread; with 1 or 3 boots per side none (2/C(6,3) = 0.1).

classes writes the exact classes of the rows from icount runs of one
kernel over several boots (each ICOUNT_RUN: a directory whose
subdirectories are boots, as DIR/icount/ of run, or a run_all.sh
--vs-kernel --icount DIR, whose base/ and candidate/ are boots of one
kernel in an A/A): the class of a row over every repetition of every
boot, and its spread, kept per setup (kbtools.exact.setup_of: the
guest's architecture, from the runs' own JSON). compare's exact rule
reads them (scripts/kbtools/icount_classes.json, kbtools.exact.known)
so that a row that repeats within a boot but moves between boots is
never called exact.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import cli, exact, proc, results, stats  # noqa: E402
from kbtools.compare import TIME_UNITS  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("icount", "tcg", "tcg-loaded")
BOOTS_PER_SIDE = (1, 3, 5)


def mode_args(mode):
    return ["--icount"] if mode == "icount" else ["--accel", "tcg"]


def run(args):
    for mode in MODES:
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


def boots_of(directory, mode):
    """(test, row) -> [the row's median of each boot] and the unit, in
    instructions for icount; plus each boot's repetitions (icount)."""
    medians, reps = {}, {}
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


def spread_pct(values):
    if len(values) < 2 or min(values) <= 0:
        return None
    return (max(values) / min(values) - 1) * 100


def stat_detectable(values, n):
    """The change (percent) an exact U test over n boots per side flags
    80% of the time at 0.05 for a row with these boots' spread; None
    when no change can be flagged (or no spread was measured)."""
    shift = stats.detectable_shift(n, n, 0.05)
    if shift is None or len(values) < 2 or min(values) <= 0:
        return None
    sd = stats.stdev([math.log(v) for v in values])
    return (math.exp(shift * sd) - 1) * 100


def icount_detectable(reps):
    """What an icount boot per side detects in a row: '1 insn' (exact),
    spread + floor (near), or None (noisy: the statistics over boots)."""
    flat = [v for boot in reps for v in boot]
    if len(flat) < 2:
        return None, None
    cls = exact.row_class(flat, flat)
    if cls == "exact":
        return cls, "1 insn"
    if cls == "near":
        return cls, f"{exact.rel_spread_pct(flat) + exact.NEAR_FLOOR_PCT:.2f}%"
    return cls, None


def boot_dirs(path):
    """The boots of one icount run that left results: its numbered
    subdirectories, or the base/ and candidate/ of an A/A (each holding
    one or more boots)."""
    if os.path.isdir(os.path.join(path, "base")):
        dirs = [os.path.join(path, s) for s in ("base", "candidate")]
    else:
        dirs = [os.path.join(path, k) for k in sorted(os.listdir(path))
                if k.isdigit()]
    return [d for d in dirs if os.path.isdir(d) and
            any(f.endswith(".json") for f in os.listdir(d))]


def run_classes(path):
    """(the run's setup, 'TEST:ROW' -> (class, spread %, boots)) over
    every repetition of every boot of one icount run of one kernel."""
    reps, boots, setups = {}, {}, set()
    for d in boot_dirs(path):
        for test in results.load(d).tests.values():
            setups.add(exact.setup_of(test.header))
            for row in test.rows.values():
                scale = test.insn_per_unit(row.unit)
                if scale is None or row.status != "ok":
                    continue
                key = f"{test.name}:{row.name}"
                reps.setdefault(key, []).extend(v * scale
                                                for v in row.values())
                boots.setdefault(key, set()).update(
                    b or d for b in row.boots)
    if len(setups) != 1 or None in setups:
        raise cli.Error(f"{path}: not the boots of one setup (machine.arch: "
                        f"{', '.join(sorted(str(s) for s in setups))})")
    out = {}
    for key, vs in reps.items():
        if len(vs) >= 2 and len(boots[key]) >= 2:
            out[key] = (exact.row_class(vs, vs),
                        exact.rel_spread_pct(vs) or 0.0, len(boots[key]))
    return setups.pop(), out


def earlier_classes(path):
    """SETUP -> its rows and runs, of an earlier classes file (--merge),
    so that new A/A runs add to its evidence and never erase it."""
    try:
        setups = {}
        for name, setup in exact.load_classes(path)["setups"].items():
            rows, runs = dict(setup["rows"]), list(setup["runs"])
            for key, row in rows.items():
                if row["class"] not in exact.CLASSES or \
                        float(row["spread_pct"]) < 0 or \
                        int(row["boots"]) < 0:
                    raise ValueError(f"{name}: row {key}: {row}")
            setups[name] = {"rows": rows, "runs": runs}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise cli.Error(f"{path}: not a classes file ({e})")
    return setups


def classes(args):
    """The worst class and spread of every row over the runs (each an A/A
    of one kernel) and those of an earlier file (--merge), and the boots
    they were seen in, per setup."""
    setups = earlier_classes(args.merge) if args.merge else {}
    for path in args.runs:
        name, found = run_classes(path)
        setup = setups.setdefault(name, {"rows": {}, "runs": []})
        merged = setup["rows"]
        for key, (cls, spread, boots) in found.items():
            was = merged.get(key, {"class": "exact", "spread_pct": 0.0,
                                   "boots": 0})
            merged[key] = {"class": exact.worse(was["class"], cls),
                           "spread_pct": round(max(was["spread_pct"],
                                                   spread), 4),
                           "boots": was["boots"] + boots}
        setup["runs"].append(os.path.basename(os.path.normpath(path)))
    doc = {"about": "exact classes of the rows under QEMU's instruction "
                    "counter, per setup (kbtools.exact.setup_of: the "
                    "guest's architecture): the worst over A/A runs of "
                    "one kernel each, every repetition of every boot "
                    "(bench/guest_modes.py classes --merge)",
           "setups": {name: {"runs": setup["runs"],
                             "rows": dict(sorted(setup["rows"].items()))}
                      for name, setup in sorted(setups.items())}}
    with cli.writing(args.output):
        results.write_json(args.output, doc)
    return 0


def fmt(v):
    return "-" if v is None else f"{v:.2f}%"


def table(args):
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
    seen = set()
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
def main(argv=None):
    ap = argparse.ArgumentParser(prog="guest_modes.py", description=(
        "Spread across boots and detectable change under icount, plain "
        "TCG and loaded TCG."))
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="boot the kernel in each mode")
    r.add_argument("--kernel", required=True)
    r.add_argument("-o", "--output", required=True)
    r.add_argument("--boots", type=int, default=3)
    r.add_argument("--load", type=int, default=2,
                   help="stress-ng --cpu workers for tcg-loaded")
    t = sub.add_parser("table", help="print the table of a run")
    t.add_argument("directory")
    c = sub.add_parser("classes", help="write the exact classes")
    c.add_argument("runs", nargs="+", metavar="ICOUNT_RUN")
    c.add_argument("-o", "--output", default="-")
    c.add_argument("--merge", metavar="FILE",
                   help="start from the rows of an earlier classes file")
    args, rest = ap.parse_known_args(argv)
    if args.command == "run":
        if args.boots < 2:
            ap.error("--boots must be at least 2 (a spread needs two)")
        if not shutil.which("stress-ng"):
            raise cli.Error("needs stress-ng (apt-get install stress-ng)")
        args.run_args = rest
        return run(args)
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "classes":
        for path in args.runs:
            if not os.path.isdir(path):
                raise cli.Error(f"{path}: no such directory")
        return classes(args)
    if not os.path.isdir(args.directory):
        raise cli.Error(f"{args.directory}: no such directory")
    return table(args)


if __name__ == "__main__":
    sys.exit(main())
