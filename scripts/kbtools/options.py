# SPDX-License-Identifier: GPL-2.0
"""The collection's options, declared once: run_all.sh's (RUNNER), a
guest run's own (GUEST: kbtools.vm, run_all.sh --kernel), an A/B of
kernels' (AB: kbtools.ab, run_all.sh --vs-kernel), and what a run's
plan passes to every program (PROGRAM). A leaf: imports nothing of kbtools.

run_all.sh stays the bash runner the kselftest layout asks for, with
its own case statement; tests/test_options.py fails when its options
and RUNNER differ (names, which take a value and what it must be). The
Python tasks read this table: kbtools.vm walks a guest run's command
line with it (what is its own, what goes into the guest's plan, what
the host handles for the guest: HOST), and bisect, validate and
the LAVA job writer declare their options of these names with
add_arguments().
"""

import argparse
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Option:
    """One option: its names (the short one first), what its value must
    be ("" for a switch; said in "option '-t' needs a test name"), its
    metavar and help."""
    names: Tuple[str, ...]
    needs: str = ""
    metavar: str = ""
    help: str = ""
    # A switch that may take a number (--repeat [N]).
    optional_number: bool = False

    @property
    def long(self) -> str:
        return self.names[-1]

    @property
    def key(self) -> str:
        """The attribute argparse keeps it in (--vm-timeout: vm_timeout)."""
        return self.long.lstrip("-").replace("-", "_")


# run_all.sh's options, in its usage's order.
RUNNER: Tuple[Option, ...] = (
    Option(("-t", "--test"), "a test name", "NAME",
           "run only test directory NAME (repeatable, or a comma list)"),
    Option(("-l", "--list"), help="list the test programs and exit"),
    Option(("--json",), "a directory", "DIR",
           "keep every program's results in DIR/<program>.json"),
    Option(("-r", "--repeat"), metavar="N", optional_number=True,
           help="run every program N times (without N: the design's)"),
    Option(("--vs-prefix",), "a command", "CMD",
           "A/B on this kernel: the candidate runs as 'CMD PROG ARGS'"),
    Option(("--base-prefix",), "a command", "CMD",
           "with --vs-prefix: the base runs as 'CMD PROG ARGS'"),
    Option(("--fail-above",), "a percentage", "PCT",
           "exit 1 when a row is significantly slower by more than PCT %"),
    Option(("--report",), "a file name", "FILE",
           "with --json: an HTML report of the run"),
    Option(("--full",), help="the programs' full measurements"),
    Option(("-o", "--timeout"), "a number of seconds", "SECS",
           "every program's timeout (0 = none)"),
    Option(("--nest",), "'indent' or 'hash'", "STYLE",
           "how a program's own KTAP is nested"),
    Option(("--no-build",), help="do not run make first"),
    Option(("--no-install",), help="do not install missing packages"),
)

# A guest run's own options (kbtools.vm); run_all.sh hands a command
# line with --kernel over to it, and refuses the others without it.
GUEST: Tuple[Option, ...] = (
    Option(("-k", "--kernel"), "an image", "IMAGE", "the kernel to boot"),
    Option(("--arch",), "an architecture", "ARCH",
           "the guest's architecture"),
    Option(("--accel",), "kvm, tcg or auto", "MODE",
           "auto (default), kvm or tcg"),
    Option(("-m", "--memory"), "a size", "SIZE", "guest memory"),
    Option(("--cpus",), "a number", "N", "guest CPUs"),
    Option(("--icount",), help="exact mode: QEMU's instruction counter"),
    Option(("--append",), "kernel arguments", "ARGS",
           "extra kernel command line (repeatable)"),
    Option(("--boot-timeout",), "seconds", "SECS",
           "give up when the guest has not started the run within SECS"),
    Option(("--vm-timeout",), "seconds", "SECS",
           "give up when the run inside has not ended within SECS"),
    Option(("--console",), "a file", "FILE",
           "keep the guest's kernel console log in FILE"),
)

# An A/B of kernels' own options (kbtools.ab); run_all.sh hands a
# command line with --vs-kernel over to it.
AB: Tuple[Option, ...] = (
    Option(("--vs-kernel",), "an image", "IMG",
           "a candidate kernel (repeatable)"),
    Option(("--where",), help="with --icount: which functions moved each "
           "exact or near row of syscall_overhead or proc_create that moved "
           "(kbench where)"),
    Option(("--where-with",), "plugin or ftrace", "HOW",
           "with --where: count with kbench's QEMU plugin (exact; the "
           "default, ftrace when it cannot be provisioned) or ftrace's "
           "function_graph tracer"),
)

# run_all.sh's options that the host of a guest run handles itself (it
# works out the repetitions, keeps the results, writes the report): the
# guest's plan has --repeat N and --json of the shared directory.
HOST = ("--json", "--repeat", "--report")

# What a run's plan passes to every program (kbtools.plan): the
# programs' shared options (lib/cli.c).
PROGRAM: Tuple[Option, ...] = (
    Option(("--full",), help="the full, seed-sized measurements"),
    Option(("--json",), "a file name", "FILE",
           "the results as one JSON document in FILE"),
)

# kbench series' own options that a task's usage says from this table.
SERIES: Tuple[Option, ...] = (
    Option(("--lava-jobs",), "a number of jobs (1 or more)", "N",
           "with --lava: at most N jobs of the series in the lab at once "
           "(default: the lab's devices of the job's type that take jobs, "
           "health Good or Unknown; {fallback} when the lab does not say)"),
)

# The options that take run_all.sh's command line into kbench run.
HANDED_OVER = ("--kernel", "--vs-kernel")


# kbench lava local's own (scripts/lava_local.sh setup).
LAB: Tuple[Option, ...] = (
    Option(("--devices",), "a number of devices (1 or more)", "N",
           "N qemu devices on the one worker, each running a job at "
           "once (default {devices}; setup again adds, never removes)"),
)


def table() -> Tuple[Option, ...]:
    return RUNNER + GUEST + AB + SERIES + LAB


# Where a usage text starts an option's help, and how wide it goes.
HELP_COLUMN = 22
USAGE_WIDTH = 72


def usage(names: Sequence[str], **values: Any) -> str:
    """The usage lines of these options, as the tasks' usage texts lay
    them out (the help from column HELP_COLUMN, on a line of its own
    when the names reach it); values fill the help's {fields}."""
    import textwrap
    out = []
    for name in names:
        o = find(name)
        head = "  " + ("    " if len(o.names) == 1 else "") + \
            ", ".join(o.names) + (f" {o.metavar}" if o.metavar else "")
        lines = textwrap.wrap(o.help.format(**values),
                              USAGE_WIDTH - HELP_COLUMN)
        if len(head) + 2 > HELP_COLUMN:
            out.append(head)
        else:
            out.append(f"{head:<{HELP_COLUMN}}{lines.pop(0)}")
        out += [" " * HELP_COLUMN + line for line in lines]
    return "\n".join(out) + "\n"


def find(name: str, options: Sequence[Option] = ()) -> Option:
    """The option of this name (KeyError when there is none)."""
    for o in options or table():
        if name in o.names:
            return o
    raise KeyError(name)


def valued(options: Sequence[Option]) -> Dict[str, Option]:
    """Each name of the options that take a value."""
    return {n: o for o in options if o.needs for n in o.names}


def guest_values() -> Dict[str, Option]:
    """The names of run_all.sh's options with a value that go to the
    guest as they came (not the host's: HOST)."""
    return valued([o for o in RUNNER if o.long not in HOST])


def host_values() -> Dict[str, Option]:
    """The names of a guest run's own options with a value, and of
    run_all.sh's that its host handles."""
    return valued([*GUEST, *(o for o in RUNNER if o.long in HOST)])


def add_arguments(parser: argparse._ActionsContainer, names: Sequence[str],
                  overrides: Optional[Mapping[str, Dict[str, Any]]] = None,
                  short: bool = True) -> None:
    """Declare the options of these (long) names on an argparse parser
    or group, as the table says them (overrides: argparse keywords per
    name, e.g. a type or a help of the task's own; short=False: the
    long names only)."""
    for name in names:
        o = find(name)
        kw: Dict[str, Any] = {"help": o.help}
        if o.needs:
            kw["metavar"] = o.metavar
        elif o.optional_number:
            kw.update(metavar=o.metavar, nargs="?")
        else:
            kw["action"] = "store_true"
        kw.update((overrides or {}).get(name, {}))
        parser.add_argument(*(o.names if short else (o.long,)), **kw)


def passed_on(args: argparse.Namespace, names: Sequence[str]) -> List[str]:
    """The options of these names that args holds, as a command line
    (a switch when set, NAME VALUE when given)."""
    out: List[str] = []
    for name in names:
        o = find(name)
        value = getattr(args, o.key, None)
        if o.needs and value is not None:
            out += [o.long, str(value)]
        elif not o.needs and value:
            out.append(o.long)
    return out
