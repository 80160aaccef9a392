# SPDX-License-Identifier: GPL-2.0
"""The test kernel's run: both kernels booted in turn, taskstats and
memcg_ks in each, the verdicts, and the seeds' two comparisons.

    kbench kernel run [OPTION]...       (testkernel/run.sh)
    kbench kernel summary [OPTION]...   (testkernel/summary.py)

The run builds (or finds) the images with kbtools.kernel, boots them with
run_all.sh --kernel UNPATCHED --vs-kernel PATCHED --repeat N (and
scripts/vm_run.sh for the larger process counts, one boot each), checks
each console for the kernel's trouble (trouble_lines below), compares
with kbtools.compare and ends with the summary below. It fails when a run
fails, a row that needs the patched kernel (or its BTF) skipped there, or
a guest kernel logged a WARNING, BUG or Oops.

The summary reads the kbench JSON results the run keeps for the patched
kernel (taskstats.json of one or more process counts, memcg_ks.json) and
prints:
  - taskstats (seed 000): every method of one pass over N processes
    (per-pid and batched netlink, procfs, procfs_pread, the RFC ioctl and
    the BPF task iterator), seconds per pass and the ratio of per-pid
    netlink to each, the iterator's load once, per process count;
  - memcg_ks (seed 001): ks filters of 3/16/32/64/128 fields vs legacy
    memory.stat, microseconds per read (lseek + read on a kept fd) and per
    cat (open + read + close), with the ratio ks / legacy; then the BPF
    cgroup iterator reading the same selections, with its ratio to legacy
    and to the .ks filter of the same size.
Figures from an emulated (TCG) guest are marked as such. A file that
holds several repetitions (boots) gives the median over them.

--require-patched KTAP exits 1 unless every row and check that needs the
patched kernel (ioctl, .ks; with --btf also bpf_iter) passed in that
run_all.sh KTAP stream: a kernel that lost an interface or its BTF must
not pass as one that has them.
"""

import argparse
import contextlib
import datetime
import glob
import os
import re
import shutil
import sys
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple)

from kbtools import ab, cli, kernel, ktap, paths, proc, results, stats
from kbtools import vm
from kbtools import compare as kbcompare
from kbtools.output import Tee, msg

SEED_TASKSTATS = {1000: (0.004446851, 0.001553733),
                  10000: (0.047024986, 0.023290664)}
SEED_MEMCG = "seed: per read legacy ~5 us vs ks 3 fields ~0.85 us; " \
             "per cat legacy ~1315 us vs ks full ~1745 us (with process creation)"
TS_METHODS = ("netlink_per_pid", "netlink_batched", "procfs", "procfs_pread",
              "ioctl", "bpf_iter")
KS_SIZES = (3, 16, 32, 64, 128)
# Results that pass only on the patched kernel (and as root), by
# program; BTF_ROWS only when that kernel has BTF as well (--btf).
# Checks that pass leave no JSON row, so the KTAP is read.
PATCHED = {
    "taskstats": ("ioctl_matches_netlink", "ioctl_errors", "ioctl"),
    "memcg_ks": ("ks_matches_legacy", "ks_invalid_filter_rejected",
                 "ks_empty_write_resets", "stat_ks3_per_read"),
}
BTF_ROWS = {
    "taskstats": ("bpf_iter_matches_netlink", "bpf_iter"),
    "memcg_ks": ("bpf_iter_matches_stat",) +
    tuple(f"bpf_iter{n}" for n in KS_SIZES),
}
PROGRAM_RE = re.compile(r"selftests: kbench/[^:]+: (\S+)")


def load(path: str) -> Optional[Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]]:
    """The header of the file's test and its rows by name, or None."""
    try:
        run = results.load(path)
    except results.ResultError as e:
        print(f"summary: {e}", file=sys.stderr)
        return None
    test = next(iter(run.tests.values()))
    return test.header.doc, {name: Summary(row)
                             for name, row in test.rows.items()}


class Summary(Dict[str, Any]):
    """A row as the tables read it: status, reason, note, and figures that
    are the median over the repetitions (extra figures too)."""

    def __init__(self, row: results.Row) -> None:
        super().__init__(status=row.status, reason=row.reason, note=row.note)
        med = row.values("median")
        if med:
            self["median"] = stats.median(med)
        extra: Dict[str, List[float]] = {}
        for rep in row.reps:
            for k, v in (rep.extra or {}).items():
                if isinstance(v, (int, float)) and \
                        rep.status == results.Status.OK:
                    extra.setdefault(k, []).append(float(v))
        self["extra"] = {k: stats.median(v) for k, v in extra.items()}


def where(doc: Dict[str, Any]) -> str:
    guest = (doc.get("machine") or {}).get("guest")
    rel = (doc.get("kernel") or {}).get("release", "?")
    return f"{rel}, {'guest ' + guest.upper() if guest else 'host'}"


def fmt(v: Optional[float], unit: str = "") -> str:
    return "-" if v is None else f"{v:.6g}{unit}"


def pass_s(row: Dict[str, Any]) -> Optional[float]:
    """Seconds per pass of a method row that ran, else None."""
    if row.get("status") != "ok":
        return None
    return (row.get("extra") or {}).get("pass_s_median")


def method_cell(row: Dict[str, Any], base_s: Optional[float]) -> str:
    """'SECONDS (RATIOx)' of a method, or its status."""
    s = pass_s(row)
    if s is None:
        return row.get("status", "-")
    return f"{s:.4g} ({base_s / s:.2f}x)" if base_s else f"{s:.4g}"


def taskstats_table(paths: Sequence[str]) -> None:
    print("taskstats (seed 000): one pass over N processes, seconds (median "
          "of passes); (Rx) = netlink_per_pid / method")
    print(f"{'N':>6} " + " ".join(f"{m:>18}" for m in TS_METHODS) +
          f" {'bpf_iter load':>14}  kernel, where")
    seeds: List[int] = []
    for path in paths:
        loaded = load(path)
        if not loaded:
            continue
        doc, r = loaded
        n = int(doc.get("params", {}).get("nr_process", 0))
        base = pass_s(r.get("netlink_per_pid", {}))
        cells = [method_cell(r.get(m, {}), base) for m in TS_METHODS]
        load_ms = (r.get("bpf_iter", {}).get("extra") or {}).get("load_ms")
        load_txt = fmt(load_ms, " ms") if pass_s(r.get("bpf_iter", {})) else "-"
        print(f"{n:>6} " + " ".join(f"{c:>18}" for c in cells) +
              f" {load_txt:>14}  {where(doc)}")
        if n in SEED_TASKSTATS:
            seeds.append(n)
    for n in seeds:
        nl, io = SEED_TASKSTATS[n]
        print(f"  seed (2021, RFC kernel, N={n}): netlink {nl:.6f} ioctl "
              f"{io:.6f} ({nl / io:.2f}x)")


def ks_tables(r: Dict[str, Any]) -> None:
    for f in ("stat", "numa_stat"):
        print(f"  {'memory.' + f:<16} {'per_read':>10} {'ratio':>7} {'per_cat':>10} {'ratio':>7}")
        legacy = {m: r.get(f"{f}_legacy_{m}", {}).get("median")
                  for m in ("per_read", "per_cat")}
        for v in ("legacy", "ks3", "ks16", "ks32", "ks64", "ks128", "ks_keys"):
            cols = []
            for m in ("per_read", "per_cat"):
                row = r.get(f"{f}_{v}_{m}", {})
                med = row.get("median") if row.get("status") == "ok" else None
                ratio = med / legacy[m] if med and legacy[m] else None
                cols.append(f"{fmt(med) if med else row.get('status', '-'):>10} "
                            f"{(f'{ratio:.2f}' if ratio and v != 'legacy' else ''):>7}")
            print(f"  {v:<16} {' '.join(cols)}")


def flush_way(note: Optional[str]) -> Optional[str]:
    """The flush a bpf_iter row's note names ("...: WAY, then ...")."""
    if not note or ": " not in note:
        return None
    return note.split(": ", 1)[1].split(", then", 1)[0]


def bpf_table(r: Dict[str, Any]) -> None:
    legacy = r.get("stat_legacy_per_read", {}).get("median")
    print("  BPF cgroup iterator (create + read + close of an iterator fd), "
          "us per read; ratio to legacy per_read and to the .ks per_read of "
          "the same size")
    print(f"  {'':<16} {'per_read':>10} {'/legacy':>7} {'/ks':>7}")
    load_ms = flush = None
    for n in KS_SIZES:
        row = r.get(f"bpf_iter{n}", {})
        if row.get("status") != "ok":
            print(f"  {'bpf_iter' + str(n):<16} {row.get('status', '-'):>10}")
            continue
        med = row.get("median")
        ks = r.get(f"stat_ks{n}_per_read", {})
        ks_med = ks.get("median") if ks.get("status") == "ok" else None
        rl = f"{med / legacy:.2f}" if med and legacy else ""
        rk = f"{med / ks_med:.2f}" if med and ks_med else ""
        print(f"  {'bpf_iter' + str(n):<16} {fmt(med):>10} {rl:>7} {rk:>7}")
        load_ms = (row.get("extra") or {}).get("load_ms", load_ms)
        flush = flush_way(row.get("note")) or flush
    if load_ms is not None:
        print(f"  load: {load_ms:.1f} ms once; flush: {flush or '?'}")


def memcg_table(path: str) -> None:
    loaded = load(path)
    if not loaded:
        return
    doc, r = loaded
    print(f"memcg_ks (seed 001): microseconds per read, median; ratio = ks / legacy ({where(doc)})")
    ks_tables(r)
    bpf_table(r)
    print(f"  ({SEED_MEMCG})")


def program_results(path: str) -> Dict[str, Dict[str, Any]]:
    """{program: {result name: Result}} of a run_all.sh KTAP stream (or
    of run_all.sh --vs-kernel's, its candidate side)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            doc = ktap.parse(f.read())
    except OSError as e:
        raise results.ResultError(f"cannot read {path}: {e.strerror}") from e
    out: Dict[str, Dict[str, Any]] = {}
    collect_programs(doc, out)
    return out


def collect_programs(doc: Any, out: Dict[str, Dict[str, Any]]) -> None:
    """Programs' results at any depth (an A/B stream nests each boot's
    run_all.sh stream); the unpatched side of an A/B run is left out."""
    for r in doc.results:
        if r.child is None or r.name.startswith("kbench: base "):
            continue
        m = PROGRAM_RE.search(r.name)
        if m:
            out.setdefault(m.group(1), {}).update(
                (c.name, c) for c in r.child.results)
        else:
            collect_programs(r.child, out)


def not_run(path: str, btf: bool = False) -> List[str]:
    """'FILE: PROGRAM: NAME DID (why)' for each row of the patched
    kernel's (with btf, also each BPF iterator row) that did not pass in
    the KTAP stream at path."""
    try:
        progs = program_results(path)
    except results.ResultError as e:
        return [str(e)]
    if not set(PATCHED) & set(progs):
        return [f"{path}: neither {' nor '.join(PATCHED)} ran"]
    out: List[str] = []
    for prog, got in progs.items():
        names = PATCHED.get(prog, ()) + (BTF_ROWS.get(prog, ()) if btf
                                          else ())
        for name in names:
            r = got.get(name)
            if r is None:
                out.append(f"{path}: {prog}: {name} missing")
            elif r.kind != "pass":
                out.append(f"{path}: {prog}: {name} {r.kind}"
                           f" ({r.reason or 'no reason'})")
    return out


def require_patched(ktap_paths: Sequence[str], btf: bool = False) -> int:
    """0 when every ioctl and .ks row and check (with btf, every bpf_iter
    one too) passed in each stream, else 1 (each listed on stderr)."""
    missing = [] if ktap_paths else ["no KTAP stream given (--ktap)"]
    for p in ktap_paths:
        missing += not_run(p, btf)
    for m in missing:
        print(f"summary: did not run on the patched kernel: {m}",
              file=sys.stderr)
    return 1 if missing else 0




def summary_main(argv: Sequence[str], prog: str = "summary.py") -> int:
    ap = cli.UsageParser(
        prog=prog, description="Print the seeds' two comparisons from a "
        "test-kernel run.")
    ap.add_argument("--taskstats", action="append", default=[],
                    help="a taskstats.json (repeatable, one per process count)")
    ap.add_argument("--memcg", help="a memcg_ks.json")
    ap.add_argument("--require-patched", action="append", default=[],
                    metavar="KTAP",
                    help="exit 1 unless the ioctl and .ks rows and checks "
                    "all passed (not skipped) in this run_all.sh KTAP "
                    "stream (repeatable)")
    ap.add_argument("--btf", action="store_true",
                    help="the patched kernel has BTF: --require-patched "
                    "requires the bpf_iter rows and checks too")
    a = ap.parse_args(list(argv))
    if a.taskstats:
        taskstats_table([p for p in a.taskstats if os.path.exists(p)])
        print()
    if a.memcg:
        memcg_table(a.memcg)
    if a.require_patched:
        return require_patched(a.require_patched, a.btf)
    return 0


# ---- a console's kernel trouble (testkernel/kernel_trouble.sh) -------------

# The kernel's own formats, after an optional "[  12.345678] " timestamp
# and "[T123]" caller id; a user-space program's "WARNING:" is not one.
TROUBLE = re.compile(
    r"^(\[ *[0-9]+\.[0-9]+\] )?(\[ *[CT][0-9]+\] )?"
    r"(WARNING: CPU: [0-9]+ PID: [0-9]+ at [^ ]+:[0-9]+|BUG: |kernel BUG at "
    r"|Oops|Internal error: Oops|general protection fault|Call Trace:"
    r"|Kernel panic - not syncing)")
TROUBLE_MAX = 5

TROUBLE_USAGE = """\
Print the lines of a guest console log in which the kernel itself
reports trouble, in the kernel's own formats (after an optional
"[  12.345678] " timestamp and "[T123]" caller id):
  WARNING: CPU: N PID: N at FILE:LINE ...   (WARN_ON and friends)
  BUG: ...  /  kernel BUG at FILE:LINE!
  Oops ...  /  Internal error: Oops ...
  general protection fault ...
  Call Trace:
  Kernel panic - not syncing: ...
A user-space program's "WARNING:" (virtme-ng-init, systemd) is not one.

  kernel_trouble.sh CONSOLE_LOG

Exit status: 0 trouble found (lines on stdout), 1 none, 2 bad usage or
an unreadable log.
"""


def trouble_lines(path: str) -> List[str]:
    """The first lines of the console log at path that report the
    kernel's own trouble (carriage returns dropped); OSError when it
    cannot be read."""
    found = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if TROUBLE.match(line):
                found.append(line.rstrip("\n").replace("\r", ""))
                if len(found) == TROUBLE_MAX:
                    break
    return found


def trouble_main(argv: Sequence[str],
                 prog: str = "kbench kernel trouble") -> int:
    """kernel_trouble.sh: 0 trouble found, 1 none, 2 bad usage or an
    unreadable log."""
    if argv[:1] in (["-h"], ["--help"]):
        print(TROUBLE_USAGE, end="")
        return 0
    if len(argv) != 1 or argv[0].startswith("-") or not argv[0]:
        cli.UsageParser(prog=prog).error(f"usage: {prog} CONSOLE_LOG")
    try:
        lines = trouble_lines(argv[0])
    except OSError:
        msg(prog, f"cannot read '{argv[0]}'")
        return 2
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    return 0 if lines else 1


# ---- the run (testkernel/run.sh) -------------------------------------------

RUN_USAGE = """\
Usage: {prog} [OPTION]...
Run the kbench tests taskstats and memcg_ks on the test kernel built by
build.sh from Debian's linux-source-6.12 with the series in patches/
(patched) and without it (unpatched), booted in turn under virtme-ng
(TCG unless KVM works here; run_all.sh --kernel unpatched --vs-kernel
patched --repeat N, ABBA...). Prints the KTAP streams, the verdict per row
of patched against unpatched, and the seeds' comparisons (ioctl vs per-pid
netlink; memory.stat.ks filters vs memory.stat) as measured in the guest.

Options:
  -o, --out DIR        keep results in DIR (default: out/testkernel/DATE
                       in the clone): DIR/{{patched,unpatched}}/ hold the
                       JSON files (one repetition per boot), DIR/ktap.txt
                       the KTAP stream and DIR/compare.txt the verdicts
  -r, --repeat N       boots of each kernel (default 4: the fewest that
                       can give a verdict; TCG boots take minutes)
  -N, --processes LIST taskstats process counts, comma separated (default
                       1000; the first one runs with memcg_ks, each other
                       one in a boot of its own, e.g. 1000,10000)
      --patched-only   build and boot only the patched kernel (no compare)
      --btf            the kernels built with BTF (build.sh --btf), so
                       that the BPF iterator rows run there too
      --accel MODE     auto, kvm or tcg (default: tcg; KVM hangs on the
                       development machine, see scripts/vm_run.sh)
  -h, --help           this help

On the patched kernel the RFC ioctl and the .ks rows and checks must run,
and the BPF iterator ones too with --btf: one that skips there fails
the run.

Exit status: 0 all passed and the guests logged no kernel warning;
1 a test failed, a patched-kernel row skipped, a guest logged a
WARNING/BUG/Oops, or a step failed;
2 bad usage; 3 a missing host package.
"""


def parse_run_args(prog: str, argv: Sequence[str]) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, help_text=RUN_USAGE.format(prog=prog))
    ap.add_argument("-o", "--out", default="")
    ap.add_argument("-r", "--repeat", default="4")
    ap.add_argument("-N", "--processes", default="1000")
    ap.add_argument("--patched-only", action="store_true")
    ap.add_argument("--btf", action="store_true")
    ap.add_argument("--accel", default="tcg")
    a = ap.parse_args(list(argv))
    if not re.fullmatch(r"[1-9][0-9]*(,[1-9][0-9]*)*", a.processes):
        ap.error(f"invalid --processes '{a.processes}': want counts like "
                 "1000,10000")
    if a.accel not in ("auto", "kvm", "tcg"):
        ap.error(f"invalid --accel '{a.accel}'")
    if not re.fullmatch(r"[1-9][0-9]*", a.repeat):
        ap.error(f"invalid --repeat '{a.repeat}'")
    if not a.out:
        date = datetime.datetime.now(datetime.timezone.utc)
        a.out = os.path.join(paths.TOP, "out", "testkernel",
                             date.strftime("%Y%m%dT%H%M%SZ"))
    return a


@contextlib.contextmanager
def copied_to(path: str, name: str = "stdout") -> Iterator[None]:
    """Inside the block, sys.stdout (or sys.stderr: name) also into
    path."""
    shown = getattr(sys, name)
    with open(path, "w", encoding="utf-8") as f:
        setattr(sys, name, Tee(shown, f))
        try:
            yield
        finally:
            setattr(sys, name, shown)


class Run:
    """One run: the images, the output directory, what failed."""

    def __init__(self, prog: str, a: argparse.Namespace):
        self.prog = prog
        self.out: str = a.out
        self.repeat: str = a.repeat
        self.accel: str = a.accel
        self.btf: bool = a.btf
        self.counts = [int(n) for n in a.processes.split(",")]
        self.kernels = ["patched"] if a.patched_only else ["patched",
                                                           "unpatched"]
        self.image: Dict[str, str] = {}
        self.clock = proc.Clock()

    def say(self, text: str) -> None:
        msg(self.prog, text)

    def build(self) -> None:
        """The images (kbtools.kernel: built or cached)."""
        self.image = kernel.test_kernels(kernel.TestKernelBuild(
            patched=True, unpatched="unpatched" in self.kernels,
            btf=self.btf), self.prog)

    def trouble(self, console: str, keep: str) -> bool:
        """True (and said) when the kernel logged trouble in console."""
        try:
            lines = trouble_lines(console)
        except OSError as e:
            self.say(f"cannot read {console}: {e.strerror}")
            return True
        with open(keep, "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))
        if not lines:
            return False
        self.say(f"the kernel logged trouble ({console}):")
        sys.stderr.write("".join(f"    {line}\n" for line in lines))
        return True

    @staticmethod
    def taskstats_args(n: int) -> Dict[str, str]:
        """taskstats with n processes in the guest."""
        return {"KSELFTEST_TASKSTATS_ARGS": f"--processes={n}"}

    @staticmethod
    def guest_run(run: Callable[[], int], prog: str, err: str) -> int:
        """run()'s status, its messages on stderr and in err; what ends
        it (bad options, a failed setup, a guest that did not come up or
        finish) its exit status, as the VM runner's (prog) would be."""
        with copied_to(err, "stderr"):
            return cli.step(prog, run)

    def boot(self, k: str, sub: str, n: int, timeout: int,
             tests: Sequence[str]) -> bool:
        """One boot of kernel k: taskstats with n processes and the tests,
        timeout seconds a program; True when it passed."""
        d = os.path.join(self.out, sub)
        os.makedirs(d, exist_ok=True)
        self.say(f"booting the {k} kernel: {' '.join(tests)} (taskstats "
                 f"with {n} processes) -> {d}")
        start = self.clock.seconds()
        argv = ["--kernel", self.image[k], "--accel", self.accel,
                "--console", os.path.join(d, "console.log"), "--json", d,
                "--timeout", str(timeout)]
        for t in tests:
            argv += ["-t", t]

        def run() -> int:
            prog = "vm_run.sh"
            opts = vm.parse(argv, prog)
            opts.run.program_args = self.taskstats_args(n)
            with open(os.path.join(d, "ktap.txt"), "wb") as ktap:
                return vm.run_guest(opts, prog, Tee(
                    ktap, sys.stdout.buffer)).status
        status = self.guest_run(run, "vm_run.sh",
                                os.path.join(d, "vm-run.err"))
        self.say(f"{k} kernel, {' '.join(tests)}: exit {status} after "
                 f"{self.clock.seconds() - start} s")
        console = os.path.join(d, "console.log")
        if os.path.isfile(console) and self.trouble(
                console, os.path.join(d, "trouble.txt")):
            status = 1
        return status == 0

    def ab(self, n: int) -> bool:
        """unpatched and patched booted in turn, --repeat times each,
        taskstats with n processes and memcg_ks: OUT/{un,}patched."""
        self.say(f"booting unpatched and patched in turn, {self.repeat} "
                 f"boots each -> {self.out}")
        ab_dir = os.path.join(self.out, "ab")

        def run() -> int:
            prog = "run_all.sh"
            opts = ab.parse(["--kernel", self.image["unpatched"],
                             "--vs-kernel", self.image["patched"],
                             "--repeat", self.repeat, "--accel", self.accel,
                             "--timeout", "900", "--json", ab_dir,
                             "-t", "taskstats", "-t", "memcg_ks"], prog)
            opts.program_args = self.taskstats_args(n)
            with copied_to(os.path.join(self.out, "ktap.txt")):
                return ab.run_ab(opts, prog)
        status = self.guest_run(run, "run_all.sh",
                                os.path.join(self.out, "vm-run.err"))
        for side, name in (("base", "unpatched"), ("candidate", "patched")):
            if os.path.isdir(os.path.join(ab_dir, side)):
                shutil.move(os.path.join(ab_dir, side),
                            os.path.join(self.out, name))
        with contextlib.suppress(OSError):
            os.rmdir(ab_dir)
        for name in ("unpatched", "patched"):
            for f in sorted(glob.glob(os.path.join(self.out, name,
                                                   "console-*.log"))):
                if self.trouble(f, os.path.join(self.out, "trouble.txt")):
                    status = 1
        return status == 0

    def compare(self) -> None:
        """The verdicts on stdout and in OUT/compare.txt (kbtools.compare);
        results it cannot compare are said, not a failure of the run."""
        print("== verdicts: patched against unpatched (guest figures)",
              flush=True)
        try:
            text = kbcompare.comparison(kbcompare.Request(
                [os.path.join(self.out, side) for side in ("unpatched",
                                                           "patched")],
                ["unpatched", "patched"])).text
        except results.ResultError as e:
            self.say(f"cannot compare the kernels: {e}")
            return
        with open(os.path.join(self.out, "compare.txt"), "w",
                  encoding="utf-8") as f:
            f.write(text)
        sys.stdout.write(text)
        sys.stdout.flush()

    def summary(self) -> bool:
        """The seeds' comparisons; False when the patched kernel skipped
        rows it must run."""
        print("== the seeds' comparisons on the patched kernel (guest "
              "figures)", flush=True)
        ts = [os.path.join(self.out, "patched", "taskstats.json")] + [
            os.path.join(self.out, f"patched-{n}", "taskstats.json")
            for n in self.counts[1:]]
        # The ioctl, .ks and bpf_iter rows and checks must have passed
        # there (a passing check leaves no JSON row: the guests' KTAP says).
        ktaps = sorted(glob.glob(os.path.join(self.out, "ktap.txt"))
                       + glob.glob(os.path.join(self.out, "patched*",
                                                "ktap.txt")))
        args = (["--btf"] if self.btf else []) + \
            [f"--require-patched={k}" for k in ktaps] + \
            [f"--taskstats={t}" for t in ts] + \
            [f"--memcg={os.path.join(self.out, 'patched', 'memcg_ks.json')}"]
        with copied_to(os.path.join(self.out, "summary.txt")):
            status = summary_main(args)
        if status:
            self.say("the patched kernel skipped rows it must run "
                     "(see above)")
        return status == 0

    def run(self) -> int:
        os.makedirs(self.out, exist_ok=True)
        self.build()
        ok = True
        first = self.counts[0]
        if "unpatched" in self.kernels:
            ok = self.ab(first)
            self.compare()
        else:
            ok = self.boot("patched", "patched", first, 900,
                           ("taskstats", "memcg_ks"))
        # Larger counts: emulated fork and exit of 10000 processes alone
        # take minutes, beyond the settings file's timeout.
        for k in self.kernels:
            for n in self.counts[1:]:
                ok = self.boot(k, f"{k}-{n}", n, 1800, ("taskstats",)) \
                    and ok
        ok = self.summary() and ok
        self.say(f"results in {self.out}")
        if not ok:
            self.say("FAILED: a run failed or a guest kernel logged trouble")
            return 1
        return 0


def run_main(argv: Sequence[str], prog: str = "kbench kernel run") -> int:
    """testkernel/run.sh: 0 all passed, 1 a failure, 2 bad usage, 3 a
    missing host package, 130 interrupted."""
    a = parse_run_args(prog, argv)
    return cli.orchestrate(prog, Run(prog, a).run)
