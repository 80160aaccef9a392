# SPDX-License-Identifier: GPL-2.0
"""The plan of a run of the collection, made once by one pure function
(make): which program runs when, on which side and repetition, in ABBA
order, under which KTAP title and timeout, with which command line and
where its JSON goes, and which repetitions are merged where at the end.
kbtools.runner carries it out on a host. It imports kbtools.policy
alone, reads no file and starts nothing.

The order: repetition K of N, then each program, then the sides of K
(base, candidate; candidate, base when K is even), so that drift hits
both sides alike.
"""

import os
import shlex
from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Sequence, Tuple

from kbtools import policy

SIDES = ("base", "candidate")
# Where the repetitions go (under --json DIR in a guest that leaves
# them to the host: kbtools.results.REPETITIONS).
REPETITIONS = "repetitions"
# Seconds timeout(1) waits after its signal before SIGKILL.
KILL_AFTER_S = 10


@dataclass(frozen=True)
class Request:
    """What the plan is made of: the programs ("DIR:PROG", in order),
    the repetitions per side, the sides' command prefixes (ab: an A/B on
    this kernel, --vs-prefix), and what decides each program's timeout,
    arguments and JSON file."""
    programs: Tuple[str, ...]
    repeat: int = 1
    ab: bool = False
    vs_prefix: Tuple[str, ...] = ()
    base_prefix: Tuple[str, ...] = ()
    full: bool = False
    timeout: Optional[int] = None       # --timeout (0: none)
    timeout_factor: int = 1             # KBENCH_TIMEOUT_FACTOR
    settings: Mapping[str, int] = field(default_factory=dict)  # DIR: timeout=
    json_dir: str = ""                  # --json DIR ("" none)
    scratch: str = ""                   # the run's own directory
    host_merges: bool = False           # KBENCH_MERGE=host
    environ: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """One run of one program."""
    n: int
    test: str
    program: str
    side: str
    repetition: int
    title: str
    timeout: int                        # 0: none
    json: str                           # "" no --json
    argv: Tuple[str, ...]               # [PREFIX...] ./PROG ARGS...

    def command(self) -> List[str]:
        """The command line, run in the program's test directory."""
        return ["timeout", f"--kill-after={KILL_AFTER_S}", str(self.timeout),
                *self.argv]


@dataclass(frozen=True)
class Merge:
    """The repetitions of one side merged into out."""
    side: str
    out: str
    inputs: Tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    steps: Tuple[Step, ...]
    sides: Tuple[str, ...]
    repeat: int
    merges: Tuple[Merge, ...]
    # Where the merged sides are compared ("" no comparison).
    compared: str


def args_variable(program: str) -> str:
    """The variable of a program's extra arguments, as the kernel's
    runner names it (KSELFTEST_<PROG>_ARGS)."""
    return "KSELFTEST_" + program.upper().replace("-", "_") + "_ARGS"


def title(test: str, program: str, side: str, k: int, repeat: int,
          ab: bool) -> str:
    """The program's KTAP title; a repeated or A/B run says which side
    and repetition."""
    t = f"selftests: kbench/{test}: {program}"
    if ab:
        return t + f" ({side}, repetition {k} of {repeat})"
    if repeat > 1:
        return t + f" (repetition {k} of {repeat})"
    return t


def sides_of(k: int, sides: Tuple[str, ...]) -> Tuple[str, ...]:
    """The sides in the order of repetition K: ABBA..."""
    return tuple(reversed(sides)) if len(sides) == 2 and k % 2 == 0 \
        else sides


def repeated(r: Request) -> bool:
    """Whether each run's JSON is one repetition of a side, merged at
    the end (or by the host of a guest)."""
    return r.repeat > 1 or r.ab


def repetition_dir(r: Request) -> str:
    if r.host_merges and r.json_dir:
        return os.path.join(r.json_dir, REPETITIONS)
    return os.path.join(r.scratch, "json")


def json_file(r: Request, program: str, side: str, k: int) -> str:
    """Where one run writes its JSON: DIR/PROG.json for a plain run, else
    a file per side and repetition ("" none)."""
    if not repeated(r):
        return os.path.join(r.json_dir, program + ".json") if r.json_dir \
            else ""
    return os.path.join(repetition_dir(r), side, str(k), program + ".json")


def timeout(r: Request, test: str) -> int:
    """A program's timeout: --timeout, else its settings' times the
    factor; none with --full."""
    if r.timeout is not None:
        return r.timeout
    if r.full:
        return 0
    return r.settings.get(test, policy.DEFAULT_PROGRAM_TIMEOUT) * r.timeout_factor


def argv_of(r: Request, program: str, side: str, json: str
            ) -> Tuple[str, ...]:
    prefix = r.vs_prefix if side == "candidate" else r.base_prefix
    args = ["--full"] if r.full else []
    if json:
        args += ["--json", json]
    # Split on white space: the kernel runner's contract.
    args += r.environ.get(args_variable(program), "").split()
    return (*prefix, "./" + program, *args)


def merges(r: Request, sides: Tuple[str, ...]) -> Tuple[Merge, ...]:
    """Each side's repetitions merged into --json DIR (DIR/SIDE with two
    sides; the scratch directory without --json); none when nothing is
    repeated or the host of a guest merges."""
    if not repeated(r) or r.host_merges:
        return ()
    out = r.json_dir or os.path.join(r.scratch, "merged")
    return tuple(Merge(s, os.path.join(out, s) if r.ab else out,
                       tuple(os.path.join(repetition_dir(r), s, str(k))
                             for k in range(1, r.repeat + 1)))
                 for s in sides)


def make(r: Request) -> Plan:
    """The plan of the request."""
    sides = SIDES if r.ab else SIDES[:1]
    steps: List[Step] = []
    for k in range(1, r.repeat + 1):
        for p in r.programs:
            test, program = p.split(":", 1)
            for side in sides_of(k, sides):
                json = json_file(r, program, side, k)
                steps.append(Step(
                    len(steps) + 1, test, program, side, k,
                    title(test, program, side, k, r.repeat, r.ab),
                    timeout(r, test), json, argv_of(r, program, side, json)))
    compared = "" if not r.ab or r.host_merges else \
        r.json_dir or os.path.join(r.scratch, "merged")
    return Plan(tuple(steps), sides, r.repeat, merges(r, sides), compared)


# What scripts/guest/run_plan.sh reads: one line a call of its shell
# functions, each word quoted for the shell.
PLAN_FILE_HEAD = "# The plan of a guest's run (kbtools.plan.to_file), run by " \
    "scripts/guest/run_plan.sh.\n"


def file_line(*words: object) -> str:
    """One line of a plan file: its words quoted for the shell."""
    return " ".join(shlex.quote(str(w)) for w in words) + "\n"


def to_file(p: Plan, nest: str, ktap: str = "") -> str:
    """The plan as a guest's bash runs it: 'plan STEPS NEST KTAP' (KTAP:
    where the stream is copied, "" none), then 'step TEST SECS TITLE
    JSON COMMAND...' for each step, run in TEST's directory. Its paths
    are the guest's (the Request's json_dir and scratch)."""
    return PLAN_FILE_HEAD + file_line("plan", len(p.steps), nest, ktap) + \
        "".join(file_line("step", s.test, s.timeout, s.title, s.json,
                          *s.command()) for s in p.steps)


def listing_file(programs: Sequence[str]) -> str:
    """The plan file of --list: 'listed DIR:PROG' for each program, which
    the guest prints as run_all.sh --list does (no KTAP, no totals)."""
    return PLAN_FILE_HEAD + "".join(file_line("listed", p) for p in programs)
