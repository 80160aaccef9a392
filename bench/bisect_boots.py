#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Boots of a good and a bad kernel over time, and bisections replayed
on them: the evidence behind scripts/bisect.sh's rule.

    bench/bisect_boots.py record --good IMG --bad IMG -o FILE
                                 [--boots N] [--load SPEC] [VM OPTION]...
    bench/bisect_boots.py table [--replays N] [--seed S] FILE...

record boots GOOD and BAD in turn (GBBG...) under scripts/vm_run.sh,
each running syscall_overhead's getsid row, and keeps every boot's
median, time and load average in FILE (JSON, rewritten after each boot,
so that an interrupted recording keeps what it has). --load changes the
host's load as the recording goes: SPEC is a comma list of WORKERSxBOOTS
(stress-ng --cpu WORKERS for the next BOOTS boots; 0 for none), e.g.
0x20,2x30,1x20,0x20: idle, then two busy workers, one, idle again. The
stress-ng it starts is stopped when the recording ends or is stopped.

table replays bisections of 7 commits, the culprit drawn at random, on
each recorded FILE (kbtools.replay: the boots resampled in contiguous
runs of time) with the rule of scripts/bisect.sh and with the rules
before it, and prints how often each named the culprit, named a wrong
commit, bracketed a range without the culprit, bracketed one with it
(undecided) or found no culprit, the mean boots and the mean bound
printed. bench/bisect_bound.py holds the rule to its bound under models
of what images do beyond their source.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))

from kbtools import bisect as kb  # noqa: E402
from kbtools import cli, proc, replay, results, stats  # noqa: E402
from kbtools.output import write_stdout  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ("good", "bad", "bad", "good")


def parse_load(spec: str) -> List[Tuple[int, int]]:
    """'0x20,2x30' -> [(0, 20), (2, 30)]."""
    out = []
    for part in spec.split(","):
        workers, _, boots = part.partition("x")
        if not workers.isdigit() or not boots.isdigit() or int(boots) < 1:
            raise cli.Error(f"--load '{spec}': '{part}' is not WORKERSxBOOTS")
        out.append((int(workers), int(boots)))
    return out


def boot_median(image: str, vm_args: Sequence[str], work: str
                ) -> Optional[float]:
    """The getsid median of one boot of image, or None (unusable)."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, KSELFTEST_SYSCALL_OVERHEAD_ARGS="-t getsid")
    with open(os.path.join(work, "ktap"), "w") as out, \
            open(os.path.join(work, "log"), "w") as err:
        rc = subprocess.call([os.path.join(TOP, "scripts", "vm_run.sh"),
                              "--kernel", image, *vm_args, "-t",
                              "syscall_overhead", "--json",
                              os.path.join(work, "json")], stdout=out,
                             stderr=err, env=env)
    if rc not in (0, 1):
        return None
    try:
        run = results.load(os.path.join(work, "json"))
        row = run.tests["syscall_overhead"].rows["getsid"]
        vs = row.values()
    except (results.ResultError, KeyError):
        return None
    return stats.median(vs) if vs else None


def record(args: argparse.Namespace) -> int:
    schedule = parse_load(args.load) if args.load else [(0, args.boots)]
    total = sum(b for _, b in schedule)
    doc: Dict[str, Any] = {"about": f"getsid medians (us) of boots of {args.good} (good) "
                    f"and {args.bad} (bad) in turn (GBBG...), recorded by "
                    f"bench/bisect_boots.py with --load "
                    f"{args.load or 'none'} on {os.uname().nodename}",
           "load": args.load, "boots": []}
    load = proc.CpuLoad()
    work = tempfile.mkdtemp(prefix="kbench-boots.")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        k = 0
        for workers, count in schedule:
            load.set(workers)
            for _ in range(count):
                kind = ORDER[k % len(ORDER)]
                start = time.time()
                value = boot_median(args.good if kind == "good" else
                                    args.bad, args.vm_args, work)
                k += 1
                doc["boots"].append({
                    "kind": kind, "value": value, "workers": workers,
                    "start": round(start), "seconds": round(
                        time.time() - start, 1),
                    "load": float(open("/proc/loadavg").read().split()[0])})
                results.write_json(args.output, doc)
                print(f"{k}/{total} {kind} {value} (workers {workers})",
                      file=sys.stderr, flush=True)
    finally:
        load.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


def table(args: argparse.Namespace) -> int:
    """Bisections replayed on each recording's boots (as one good
    kernel's figures in time order, kbtools.replay.good_equivalent) with
    a change of +20% and x2 (the demo's), by the rule of kbench bisect,
    by the rule of issue 31 (one order, no confirmation) and by the
    pooled rule before it."""
    def st(**kw: Any) -> Dict[str, Any]:
        return kb.make_settings("/tree", "0", "7", "slower", args.alpha,
                                2.0, None, ["syscall_overhead:getsid"],
                                seed=args.seed, **kw)
    rules = (("blocks, drawn order, confirmed", replay.new_rule(st())),
             ("blocks, one order (issue 31)",
              replay.new_rule(st(order="fixed", confirm=False))),
             ("pooled U (before)", replay.pooled_rule()))
    head = ("| series | change | rule | right | wrong name | wrong range | "
            "undecided | no culprit | boots | bound |")
    lines = [head, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for path in args.files:
        name = os.path.basename(path)
        clocks = {name: replay.good_equivalent(replay.load_series(path))}
        for effect in (0.2, 1.0):
            for rule_name, rule in rules:
                t = replay.tally(rule, replay.Model(name, clock=name),
                                 effect, args.replays, args.seed,
                                 recorded=clocks)
                lines.append(
                    f"| {name} | +{effect:.0%} | {rule_name} | "
                    f"{t['right']:.0f} | {t['wrong-name']:.0f} | "
                    f"{t['wrong-range']:.0f} | {t['undecided']:.0f} | "
                    f"{t['none']:.0f} | {t['boots']:.1f} | "
                    f"{t['bound']:.2g} |")
    lines += ["", "| series | kernel A/A, ABBA boots per side | false "
              "verdicts |", "|---|---:|---:|"]
    for path in args.files:
        series = replay.load_series(path)
        for n in (4, 6, 8):
            rate = replay.aa_false_rate(series, n, args.replays, args.seed)
            lines.append(f"| {os.path.basename(path)} | {n} | {rate:.3f} |")
    write_stdout("\n".join(lines) + "\n")
    return 0


@cli.task(errors=(results.ResultError,))
def main(argv: Sequence[str], prog: str) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=(
        "Record boots of a good and a bad kernel, or replay bisections "
        "on recorded boots."))
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="boot the two kernels in turn")
    rec.add_argument("--good", required=True)
    rec.add_argument("--bad", required=True)
    rec.add_argument("-o", "--output", required=True)
    rec.add_argument("--boots", type=int, default=40)
    rec.add_argument("--load", help="WORKERSxBOOTS,... (stress-ng --cpu)")
    tab = sub.add_parser("table", help="replay bisections on recordings")
    tab.add_argument("files", nargs="+", metavar="FILE")
    tab.add_argument("--replays", type=int, default=200)
    tab.add_argument("--seed", type=int, default=1)
    tab.add_argument("--alpha", type=float, default=kb.DEFAULT_ALPHA)
    args, rest = ap.parse_known_args(list(argv))
    if args.command == "record":
        args.vm_args = rest
        if args.boots < 1:
            ap.error("--boots must be at least 1")
        if args.load and not shutil.which("stress-ng"):
            raise cli.Error("--load needs stress-ng (apt-get install "
                            "stress-ng)")
        return record(args)
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    for path in args.files:
        try:
            replay.load_series(path)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise cli.Error(f"{path}: not a recorded series ({e})")
    return table(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "bisect_boots.py"))
