# SPDX-License-Identifier: GPL-2.0
"""A/B of two kernels, or N side by side: boot the base and the candidate
images in turn (ABBA..., for N kernels a rotation: each round starts one
kernel later), one run of the collection per boot (the boot is the unit
of replication), keep DIR/base/, DIR/candidate/ (and DIR/candidate2/...
for more) with every boot as one repetition (and each boot's kernel
log, console-K.log), and end with scripts/compare.py's table.

    kbench ab --kernel BASE --vs-kernel CAND [OPTION]...
                                    (run_all.sh --vs-kernel, scripts/vm_ab.sh)
"""

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from kbtools import (calibration, cli, compare, design, images, options,
                     policy, proc, results, runner, vm, where,
                     where_plugin)
from kbtools.output import msg

USAGE = """\
Usage: {prog} --kernel BASE --vs-kernel CAND [--vs-kernel CAND2]...
                  [--repeat N] [--json DIR] [--fail-above PCT] [OPTION]...
Boot BASE and CAND in turn (ABBA..., N boots of each, default 5) under
virtme-ng/QEMU, run the collection once per boot with the same options,
and compare: one verdict per row (scripts/compare.py). With more
candidates, each round boots every kernel once, starting one kernel
later than the round before (B C1 C2, C1 C2 B, C2 B C1, ...), and the
table shows every candidate against BASE.

  -k, --kernel BASE       the base kernel (an IMAGE of scripts/vm_run.sh)
      --vs-kernel CAND    a candidate kernel (repeatable)
  -r, --repeat [N]        boots of each kernel (default: the design's,
                          the fewest with which one changed row among
                          those compared can be flagged: 6 for
                          syscall_overhead alone, 7 for the collection;
                          1 with --icount)
      --icount            exact mode (scripts/vm_run.sh --icount): figures
                          are guest instructions, each boot runs every
                          program twice, one boot per candidate decides
                          against the base kernel's calibration: the base
                          boots {boots} times (an A/A of it) unless one of its
                          image is cached (DIR/calibration.json: the one
                          taken)
      --where             with --icount: for each exact or near row of
                          syscall_overhead or proc_create that moved (a
                          verdict), the functions whose own instructions
                          per operation changed (each kernel with such a
                          row boots its exact guest once more), below the
                          table, in DIR/where.json and in the report;
                          x86_64 only
      --where-with HOW    how --where counts: plugin (kbench's QEMU
                          plugin: exact; the default, and when its header
                          cannot be fetched ftrace, said so) or ftrace
                          (ftrace's function_graph tracer in the guest)
      --json DIR          keep DIR/base/ and DIR/candidate/ (each program's
                          JSON with one repetition per boot; further
                          candidates in DIR/candidate2/, ...)
      --fail-above PCT    exit 1 when a row is significantly slower with
                          its 95% interval above PCT %
      --report FILE       with --json: the HTML report of the comparison
                          (scripts/report.py)

Every other option (-t, --full, -o, --accel, --memory, --arch, ...) goes
to scripts/vm_run.sh for every boot, and so do KSELFTEST_<PROG>_ARGS and
KSFT_MACHINE_SLOW. Output: one KTAP stream, a result per boot with the
boot's own stream nested, then the comparison as '# ' lines. A boot that
timed out or died before its tests started (no KTAP at all: under TCG
about 1 boot in 25 panics early) is tried once more, its console kept as
console-K-failed.log. Exit status: 0; 1 when a boot failed or
--fail-above; 2 on bad usage; 4 --report without matplotlib; 130
interrupted.
"""


@dataclass
class Options:
    base: str
    candidates: List[str]
    repeat: int
    tests: List[str]          # -t: the programs compared (all when none)
    json_dir: str
    fail_above: str
    report: str
    icount: bool
    vm_args: List[str] = field(default_factory=list)  # for every boot
    # KSELFTEST_<PROG>_ARGS of every guest, over this process's own.
    program_args: Dict[str, str] = field(default_factory=dict)
    # --where: kbench where on each exact or near row that moved;
    # --where-with: how it counts (None: the plugin when it can).
    where: bool = False
    where_with: Optional[str] = None


@dataclass(frozen=True)
class Side:
    """One kernel of the comparison: its name (base, candidate,
    candidate2, ...) and image."""
    name: str
    image: str


# The A/B's own options that take a value (kbtools.options); the others
# are every boot's (kbtools.vm).
VALUES = options.valued([options.find(n) for n in (
    "--kernel", "--vs-kernel", "--test", "--json", "--fail-above",
    "--report", "--where-with")])


def parse(argv: Sequence[str], prog: str) -> Options:
    """The A/B's options; cli.Error on bad usage, SystemExit(0) after
    -h. The VM options are checked here too (vm.parse), before a boot."""
    got: Dict[str, List[str]] = {}
    repeat: Optional[str] = None
    rest: List[str] = []
    words = vm.Words(argv)
    while (item := words.next()) is not None:
        word, opt, inline = item
        if opt in VALUES:
            value = words.value(opt, inline, VALUES[opt].needs)
            key = VALUES[opt].key
            got.setdefault(key, []).append(value)
            if key == "test":
                rest += [word] if inline is not None else [opt, value]
        elif opt in vm.REPEAT:
            # Without a number: the design's (kbtools.design).
            repeat = inline if inline is not None else \
                words.number() or "design"
        elif word == "--icount":
            got["icount"] = [word]
            rest.append(word)
        elif word == "--where":
            got["where"] = [word]
        elif opt == "--vs-prefix":
            raise cli.Error("--vs-prefix and --vs-kernel do not combine")
        elif word in ("-h", "--help"):
            sys.stdout.write(USAGE.format(prog=prog, boots=calibration.BOOTS))
            raise SystemExit(0)
        else:
            rest.append(word)
    base = (got.get("kernel") or [""])[-1]
    if not base:
        raise cli.Error("--vs-kernel needs --kernel BASE")
    cands = got.get("vs_kernel", [])
    if not cands or not all(cands):
        raise cli.Error("--vs-kernel needs an image")
    icount = "icount" in got
    tests = [t for names in got.get("test", []) for t in names.split(",")
             if t]
    # An icount boot is exact: one per kernel, the policy's runs of each
    # program in it (the guest's --repeat) so that each side shows its
    # spread.
    if icount:
        try:
            rest += ["--repeat", str(policy.icount().repetitions)]
        except ValueError as e:
            raise cli.Error(str(e)) from e
    given = None if repeat is None or repeat == "design" else \
        runner.check_repeat(repeat)
    fail_above = runner.check_fail_above(got["fail_above"][-1]) \
        if "fail_above" in got else ""
    # Every boot's VM options and each kernel, checked before any boot.
    for image in [base, *cands]:
        images.check(vm.parse(["--kernel", image, *rest], prog).machine.arch,
                     image)
    json_dir = runner.json_dir_of(got["json"][-1]) if "json" in got else ""
    report = (got.get("report") or [""])[-1]
    if report:
        runner.check_report(report, json_dir)
    where_with = check_where_with(got["where_with"][-1]
                                  if "where_with" in got else None,
                                  "where" in got)
    if "where" in got:
        check_where(icount, tests, [base, *cands], rest, prog)
    n = (given or 1) if icount else design_boots(tests, given, prog)
    opts = Options(base, cands, n, tests, json_dir, fail_above, report,
                   icount, rest, where="where" in got, where_with=where_with)
    return opts


def check_where_with(value: Optional[str], where_asked: bool
                     ) -> Optional[str]:
    """--where-with's value (None when not given); cli.Error when it is
    neither mechanism or comes without --where."""
    if value is None:
        return None
    if value not in (where.PLUGIN, where.FTRACE):
        raise cli.Error(f"--where-with takes {where.PLUGIN} or "
                        f"{where.FTRACE}, not '{value}'")
    if not where_asked:
        raise cli.Error("--where-with needs --where")
    return value


def check_where(icount: bool, tests: Sequence[str], kernels: Sequence[str],
                vm_args: Sequence[str], prog: str) -> None:
    """--where: exact mode, x86_64 guests, a run of the program where
    profiles; cli.Error otherwise."""
    if not icount:
        raise cli.Error("--where needs --icount: it attributes a row's "
                        "change in instructions")
    machine = vm.parse(["--kernel", kernels[0], *vm_args], prog).machine
    if machine.arch.name != "x86_64":
        raise cli.Error(f"--where profiles x86_64 kernels only (ftrace's "
                        f"graph of {where.ROOT}, the program's marks), not "
                        f"{machine.arch.name}")
    if tests and not set(tests) & set(where_plugin.MARKED):
        raise cli.Error(f"--where profiles rows of {where.PROGRAM} (and "
                        f"proc_create): add -t {where.PROGRAM}")


def design_boots(tests: List[str], given: Optional[int], prog: str) -> int:
    """The boots per kernel the design needs for the programs compared
    (kbtools.design), said on stderr; given: the --repeat asked for,
    kept, with a warning when fewer."""
    n, lines = design.plan(tests, given, "boots")
    for line in lines:
        msg(prog, line)
    return given or n


def side_names(n: int) -> List[str]:
    """base, candidate, then candidate2, candidate3, ..."""
    return ["base", "candidate"] + [f"candidate{i}" for i in range(2, n)]


def labels(sides: Sequence[Side]) -> str:
    """compare.py's labels: the images' names when they tell the sides
    apart."""
    names = [os.path.basename(s.image) for s in sides]
    if any(not n or "," in n for n in names) or len(set(names)) != len(names):
        names = [s.name for s in sides]
    return ",".join(names)


def rotation(n_sides: int, repeat: int) -> List[Tuple[int, int]]:
    """(boot k, side index) in boot order: round k starts k-1 kernels
    later (ABBA... for two)."""
    return [(k, (k - 1 + order) % n_sides) for k in range(1, repeat + 1)
            for order in range(n_sides)]


def say(line: str) -> None:
    print(line, flush=True)


class AB:
    """One A/B: the sides, a guest per side (made ready at its first
    boot), the work directory."""

    def __init__(self, opts: Options, prog: str, work: str):
        self.opts = opts
        self.prog = prog
        self.work = work
        images_ = [opts.base, *opts.candidates]
        self.sides = [Side(n, i) for n, i in zip(side_names(len(images_)),
                                                 images_)]
        self.results = opts.json_dir or os.path.join(work, "results")
        # The boots' own messages are the VM runner's (vm_run.sh: ...).
        self.vm_prog = vm.runner_prog(prog)
        self.guests: Dict[str, vm.Guest] = {}
        self.broken: Dict[str, int] = {}
        # Exact mode: the base kernel's calibration, cached (then the
        # base boots as often as the others) or taken from its own boots.
        self.cal_key: Optional[calibration.Key] = None
        self.cal: Optional[calibration.Calibration] = None

    def close(self) -> None:
        for g in self.guests.values():
            g.__exit__(None, None, None)

    def guest(self, side: Side) -> vm.Guest:
        if side.name not in self.guests:
            opts = vm.parse(["--kernel", side.image, *self.opts.vm_args],
                            self.prog)
            opts.run.program_args = dict(self.opts.program_args)
            # --where's plugin boot takes its symbols from these boots.
            opts.machine.kallsyms = self.opts.where and \
                self.opts.where_with != where.FTRACE
            g = vm.Guest(opts, self.vm_prog)
            self.guests[side.name] = g
            g.prepare()
        return self.guests[side.name]

    def ready(self, side: Side) -> Optional[vm.Guest]:
        """The side's guest, made ready at the first call; None when it
        cannot be (its exit status in self.broken, said once)."""
        if side.name in self.broken:
            return None
        try:
            return self.guest(side)
        except (cli.Failure, proc.Failed) as e:
            msg(self.vm_prog, str(e))
            self.broken[side.name] = e.status \
                if isinstance(e, cli.Failure) else 1
            return None

    def boot_try(self, side: Side, console: str, out: str) -> int:
        """One boot into work/ktap; its exit status (a kernel that could
        not be made ready: that status, said once)."""
        with open(os.path.join(self.work, "ktap"), "wb") as sink:
            g = self.ready(side)
            if g is None:
                return self.broken[side.name]
            try:
                return g.boot(out, console, sink)
            except cli.Failure as e:
                msg(self.vm_prog, str(e))
                return e.status

    def started(self) -> bool:
        with open(os.path.join(self.work, "ktap"), "rb") as f:
            return any(line.startswith(b"TAP version") for line in f)

    def boot(self, side: Side, k: int) -> int:
        """One boot, its KTAP nested; a boot that timed out or died before
        the tests started is tried once more, said in the stream, the
        failed try's console kept."""
        out = os.path.join(self.work, "json", side.name, str(k))
        consoles = os.path.join(self.work, "console")
        console = os.path.join(consoles, f"{side.name}-{k}.log")
        os.makedirs(out, exist_ok=True)
        os.makedirs(consoles, exist_ok=True)
        rc = self.boot_try(side, console, out)
        if rc in (vm.EXIT_TIMEOUT, vm.EXIT_GUEST) and not self.started():
            say(f"# {side.name} boot {k} ended before the tests started "
                f"(exit {rc}): trying once more")
            if os.path.exists(console):
                os.replace(console, os.path.join(
                    consoles, f"{side.name}-{k}-failed.log"))
            shutil.rmtree(out)
            os.makedirs(out)
            rc = self.boot_try(side, console, out)
        with open(os.path.join(self.work, "ktap"), "rb") as f:
            text = f.read().decode("utf-8", "replace")
        sys.stdout.write("".join(f"    {ln}\n" for ln in text.splitlines()))
        sys.stdout.flush()
        return rc

    def boots_of(self, side: Side) -> int:
        """How often a side boots: --repeat's, and under --icount the base
        calibration.BOOTS times when no calibration of its kernel is
        cached (an A/A of it, its own calibration)."""
        if self.opts.icount and side is self.sides[0] and self.cal is None:
            return max(self.opts.repeat, calibration.BOOTS)
        return self.opts.repeat

    def find_calibration(self) -> None:
        """Exact mode: the cached calibration of the base's kernel, said;
        none for a kernel that cannot be made ready (its boots fail)."""
        if not self.opts.icount:
            return
        g = self.ready(self.sides[0])
        if g is None:
            return
        self.cal_key = calibration_key(g)
        self.cal = calibration.cached(self.cal_key)
        if self.cal:
            say(f"# base: {calibration.describe(self.cal)}, cached "
                f"({calibration.cache_path(self.cal_key)})")
        else:
            say(f"# base: no calibration of its kernel cached: it boots "
                f"{self.boots_of(self.sides[0])} times (an A/A of it)")

    def calibrate(self, dirs: Sequence[str]) -> Optional[str]:
        """Exact mode: the calibration the comparison takes, written to
        RESULTS/calibration.json (compare --calibration): the cached one,
        or the base's own boots', kept in the cache when every one of
        them left results; None outside exact mode."""
        if not self.opts.icount:
            return None
        cal = self.cal
        if cal is None:
            try:
                cal = calibration.of_dirs(dirs)
            except (results.ResultError, OSError) as e:
                raise cli.Failure(f"cannot calibrate the base: {e}") from e
            if self.cal_key and len(dirs) >= calibration.BOOTS and \
                    cal.boots >= calibration.BOOTS:
                calibration.store(self.cal_key, cal)
            say(f"# base: {calibration.describe(cal)}, from its own boots")
        path = os.path.join(self.results, "calibration.json")
        calibration.save(path, cal)
        return path

    def keep_consoles(self) -> None:
        """Each boot's kernel log (and a failed try's), for whoever
        checks them for trouble: RESULTS/SIDE/console-K[-failed].log,
        whether or not the boots left results."""
        for side in self.sides:
            os.makedirs(os.path.join(self.results, side.name), exist_ok=True)
            for k in range(1, self.boots_of(side) + 1):
                for suffix in (f"{k}", f"{k}-failed"):
                    src = os.path.join(self.work, "console",
                                       f"{side.name}-{suffix}.log")
                    if os.path.isfile(src):
                        shutil.copyfile(src, os.path.join(
                            self.results, side.name, f"console-{suffix}.log"))

    def boot_dirs(self, side: Side) -> List[str]:
        """The side's boots that left results."""
        return [d for d in (os.path.join(self.work, "json", side.name, str(k))
                            for k in range(1, self.boots_of(side) + 1))
                if os.path.isdir(d) and
                any(n.endswith(".json") for n in os.listdir(d))]

    def merge(self) -> bool:
        """Each side's boots (those that left results) merged into one
        directory; False when a side has none."""
        self.keep_consoles()
        for side in self.sides:
            dirs = self.boot_dirs(side)
            if not dirs:
                msg(self.prog, f"no boot of the {side.name} kernel left "
                    "results: nothing to compare")
                return False
            try:
                results.merge_dirs(os.path.join(self.results, side.name),
                                   dirs)
            except (results.ResultError, OSError) as e:
                raise cli.Failure(f"could not merge the {side.name} boots' "
                                  f"results: {e}") from e
        return True

    def compare(self) -> int:
        """compare.py's table as '# ' lines (in exact mode against the
        base's calibration; with --where, each moved row's functions
        below it); its exit status (1 when the where pass failed)."""
        cal = self.calibrate(self.boot_dirs(self.sides[0]))
        dirs = [os.path.join(self.results, s.name) for s in self.sides]
        where_file, failed = None, False
        if self.opts.where:
            try:
                where_file = self.where_pass(dirs, cal)
            except (cli.Failure, results.ResultError) as e:
                msg(self.prog, f"--where: {e}")
                failed = True
        rc = runner.compare(dirs, labels(self.sides), self.opts.fail_above,
                            self.prog, calibration=cal, where=where_file)
        return rc or int(failed)

    def where_pass(self, dirs: Sequence[str], cal: Optional[str]
                   ) -> Optional[str]:
        """kbench where on each row that moved (moved_rows), the base
        and each candidate with one booted once more; the differences
        in RESULTS/where.json, its path (None when no row moved)."""
        entries = compare.comparison(compare.Request(
            dirs, labels(self.sides).split(","), fmt="json",
            calibration=cal)).entries
        moved = moved_rows(entries)
        names = labels(self.sides).split(",")
        cands = [(label, side.image, moved.get(label, []))
                 for label, side in zip(names[1:], self.sides[1:])]
        n = sum(len(c[2]) for c in cands)
        if not n:
            say(f"# where: no exact or near row of {where.PROGRAM} moved: "
                "nothing to profile")
            return None
        say(f"# where: profiling {n} moved row{'s' if n > 1 else ''} ("
            + "; ".join(f"{c[0]}: {', '.join(c[2])}" for c in cands if c[2])
            + "), each kernel with one booted once more")
        how = where.mechanism(self.prog, self.opts.where_with)
        say(f"# where: {how.said()}")
        exact = how.plugin is not None and self.exact_guest()
        cands, left = where.countable(cands, how.method, exact)
        if left:
            say(f"# where: {where.not_counted(how.method, left, exact)}")
        if exact and how.plugin:
            say("# where: each kernel boots the A/B's own exact guest once "
                "more, with the plugin")
            docs = self.where_exact(cands, how.plugin)
        else:
            docs = where.against_base(
                self.prog, self.sides[0].image,
                [(c[0], c[1], [r.partition(":")[2] for r in c[2]])
                 for c in cands], os.path.join(self.work, "where"),
                policy.icount(), how.plugin)
        deltas = {(e.candidate, f"{e.test}:{e.name}"): e.delta
                  for e in entries}
        for doc in docs:
            doc[where.COMPARED] = deltas.get((doc.get("candidate"),
                                              doc["row"]))
        path = os.path.join(self.results, where.AB_FILE)
        with cli.writing(path):
            results.write_json(path, {"rows": docs})
        return path

    def exact_guest(self) -> bool:
        """Do the sides boot the initramfs guest of exact mode (where a
        --where boot can be one more of the A/B's own)?"""
        g = self.ready(self.sides[0])
        return g is not None and isinstance(g.backend, vm.Qemu)

    def symbols(self, side: Side) -> str:
        """The kernel's code symbols, as one of the side's boots in this
        A/B copied them out (after its run); cli.Failure when none did."""
        for d in self.boot_dirs(side):
            path = os.path.join(d, where_plugin.SYMBOLS)
            if os.path.isfile(path) and os.path.getsize(path):
                return path
        raise cli.Failure(f"{side.name}: no boot copied its kernel's "
                          "symbols out")

    def where_boot(self, side: Side, so: str, rows: Sequence[str]
                   ) -> List[where.RowProfile]:
        """One more boot of the side's exact guest, the plugin in QEMU
        summing each window per function by the symbols of its earlier
        boots, its files in RESULTS/where/SIDE/; the rows' profiles.
        cli.Failure when the boot fails or the kernel's symbols moved
        (then the sums are not of these functions)."""
        g = self.ready(side)
        if g is None:
            raise cli.Failure(f"{side.name}: its guest cannot be made ready")
        # Kept with the results (--json DIR): the boot's own figures and
        # the plugin's windows, to read again (where.exact_sides).
        out = os.path.join(self.results, "where", side.name)
        json_dir = os.path.join(out, "json")
        os.makedirs(json_dir, exist_ok=True)
        syms = self.symbols(side)
        windows = where_plugin.windows_path(out)
        g.backend.machine.plugin = where_plugin.plugin_arg(so, windows,
                                                           syms)
        try:
            with open(os.path.join(out, "ktap"), "wb") as sink:
                rc = g.boot(json_dir, os.path.join(out, "console.log"), sink)
        finally:
            g.backend.machine.plugin = None
        if rc != 0:
            raise cli.Failure(f"{side.name}: the where boot failed (exit "
                              f"{rc}; console: {out}/console.log)")
        where_plugin.same_symbols(syms, os.path.join(json_dir,
                                                     where_plugin.SYMBOLS))
        return where.exact_sides(json_dir, windows, side.image,
                                 g.backend.programs, rows,
                                 policy.icount().shift)

    def where_exact(self, cands: Sequence[Tuple[str, str, Sequence[str]]],
                    so: str) -> List[results.Json]:
        """where.against_base's differences, each kernel booted once more
        in the A/B's own exact guest (the base for every candidate's
        rows)."""
        rows = list(dict.fromkeys(r for _, _, rs in cands for r in rs))
        if not rows:
            return []
        base = {p.row: p for p in self.where_boot(self.sides[0], so, rows)}
        docs = []
        for (label, _, crows), side in zip(cands, self.sides[1:]):
            if crows:
                docs += [dict(where.diff_json(base[p.row], p),
                              candidate=label, **{where.AB_GUEST: True})
                         for p in self.where_boot(side, so, crows)]
        return docs

    def report(self) -> bool:
        return runner.report(self.opts.report, self.results)

    def run(self) -> int:
        o = self.opts
        say("TAP version 13")
        self.find_calibration()
        order = rotation(len(self.sides), o.repeat)
        order += [(k, 0) for k in range(o.repeat + 1,
                                         self.boots_of(self.sides[0]) + 1)]
        say(f"1..{len(order)}")
        fail = 0
        for n, (k, i) in enumerate(order, 1):
            side = self.sides[i]
            title = f"kbench: {side.name} {side.image} (boot {k} of " \
                f"{self.boots_of(side)})"
            say(f"# {title}")
            rc = self.boot(side, k)
            if rc == 0:
                say(f"ok {n} {title}")
            else:
                say(f"not ok {n} {title} # exit={rc}")
                fail += 1
        merged = self.merge()
        crc = self.compare() if merged else 1
        status = 0 if fail == 0 and crc == 0 else 1
        if o.report and merged and not self.report():
            status = 1
        say(f"# Totals: pass:{len(order) - fail} fail:{fail} xfail:0 "
            "xpass:0 skip:0 error:0")
        return status


def moved_rows(entries: Sequence[compare.Entry]) -> Dict[str, List[str]]:
    """Each candidate's rows (TEST:ROW) that where can profile and that
    moved: an exact or near row of an icount clock with a verdict
    (slower, faster)."""
    out: Dict[str, List[str]] = {}
    for e in entries:
        if e.name is not None and e.clock == results.ClockMode.ICOUNT and \
                where_profiles(e.test, e.name, e.row_class, e.verdict):
            out.setdefault(e.candidate or "", []).append(
                f"{e.test}:{e.name}")
    return out


def where_profiles(test: Optional[str], row: str, row_class: Optional[str],
                   verdict: str) -> bool:
    """Does --where profile this row of an exact comparison (the A/B's,
    a series' step): a row that a program marks for the plugin
    (syscall_overhead's, fork and clone too; proc_create's cells), exact
    or near, with a verdict (slower, faster)? where.counts then keeps
    those the mechanism can count (ftrace: syscall_overhead's system
    calls alone)."""
    marked = test == where.PROGRAM and row in where.PLUGIN_ROWS or \
        test in where_plugin.MARKED and test != where.PROGRAM
    return marked and row_class in ("exact", "near") and \
        verdict in (compare.Verdict.SLOWER, compare.Verdict.FASTER)


def calibration_key(g: vm.Guest) -> calibration.Key:
    """What the calibration of a guest's kernel holds for: its image,
    QEMU, architecture, vCPUs, -icount options, command line, the
    exact guest's settings and the build of the programs it runs."""
    m = g.backend.machine
    icount = m.icount or policy.icount()
    return calibration.key_of(g.image.file, m.arch.qemu, m.arch.name,
                              m.cpus or icount.cpus, icount.qemu_opts,
                              vm.kernel_appends(m), icount.settings_text(),
                              g.backend.programs_sha())


def main(argv: Sequence[str], prog: str = "kbench ab") -> int:
    """run_all.sh --vs-kernel, scripts/vm_ab.sh: 0; 1 a boot failed or
    --fail-above; 2 bad usage; 4 --report without matplotlib; 130."""
    return cli.orchestrate(prog, lambda: run_ab(parse(argv, prog), prog))


def run_ab(opts: Options, prog: str) -> int:
    """The A/B opts ask for, its KTAP on stdout: 0; 1 a boot failed or
    --fail-above; cli.Error, cli.Failure, proc.Failed as main() ends on
    them."""
    work = tempfile.mkdtemp(prefix="kbench-ab.",
                            dir=os.environ.get("TMPDIR") or "/tmp")
    ab = AB(opts, prog, work)
    try:
        return ab.run()
    finally:
        ab.close()
        shutil.rmtree(work, ignore_errors=True)
