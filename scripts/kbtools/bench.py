# SPDX-License-Identifier: GPL-2.0
"""The bench scripts: a program of the collection run beside its peer
(perf, rt-tests) or a book's table, its figures printed as a table of
ratios by kbtools.bench_tables (or here).

    kbench bench syscall-vs-perf [ROUNDS]       (bench/syscall_vs_perf.sh)
    kbench bench taskstats-seed [OPTION]...     (bench/taskstats_seed.sh)
    kbench bench memcg-stat-read [MEMCG_KS OPTION]...
                                                (bench/memcg_stat_read.sh)
    kbench bench pmqtest-vs-rttests [ROUNDS]    (bench/pmqtest_vs_rttests.sh)
    kbench bench fork-vs-size [OPTION]...       (bench/fork_vs_size.sh)
    kbench bench proc-create-vs-book [JSON]     (bench/proc_create_vs_book.sh)

Each builds its program (make -s: its errors shown), runs it with --json
into a directory of its own and hands the file to the table.
"""

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Callable, Iterator, List, Mapping, Optional, Sequence

from kbtools import bench_tables, cli, paths, proc
from kbtools.output import msg

EXIT_MISSING = 4


# ---- shared steps -----------------------------------------------------------

def build(*make_args: str, progress: bool = False) -> None:
    """make -s: its errors shown, its progress lines dropped (or shown on
    stderr); Failure when it fails."""
    rc, out = proc.output(["make", "-s", *make_args])
    if progress:
        sys.stderr.write(out)
    if rc != 0:
        raise cli.Failure(f"make -s {' '.join(make_args)} exited {rc}")


def program(name: str) -> str:
    """A program of the collection, built: NAME/NAME."""
    build("-C", os.path.join(paths.TOP, name))
    return os.path.join(paths.TOP, name, name)


def table(lines: Callable[[bench_tables.Json], List[str]], path: str,
          bad: int = 1) -> int:
    """The table lines(document at path) makes, printed; 0, or bad when
    the file cannot be read or holds no table (said on stderr)."""
    try:
        with open(path, encoding="utf-8") as f:
            out = lines(json.load(f))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{os.path.basename(path)}: {e}", file=sys.stderr)
        return bad
    print("\n".join(out), flush=True)
    return 0


def cpus() -> int:
    """The CPUs this process may run on (nproc)."""
    return len(os.sched_getaffinity(0))


@contextlib.contextmanager
def scratch(prefix: str, keep: Optional[str] = None) -> Iterator[str]:
    """A directory for a run's files: keep (created) when given, else a
    temporary one, removed after."""
    if keep:
        os.makedirs(keep, exist_ok=True)
        yield keep
        return
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def json_file(prefix: str, keep: bool = False) -> Iterator[str]:
    """A temporary PREFIX.XXXXXXXX.json for a run, removed after unless
    kept."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".json")
    os.close(fd)
    try:
        yield path
    finally:
        if not keep:
            os.unlink(path)


def measured(cmd: Sequence[str], what: str) -> str:
    """A program's stdout (its stderr shown); Failure when it fails."""
    rc, out = proc.output(cmd)
    if rc != 0:
        raise cli.Failure(f"{what} exited {rc}")
    return out


def parser(prog: str, help_text: str) -> cli.UsageParser:
    """A bench script's options: help_text (its {prog} filled in) for
    --help, bad usage as cli.UsageParser ends it."""
    return cli.UsageParser(prog=prog, help_text=help_text.format(prog=prog))


def rounds_of(prog: str, argv: Sequence[str], help_text: str,
              default: str) -> int:
    """[ROUNDS], a number above 0."""
    ap = parser(prog, help_text)
    ap.add_argument("rounds", nargs="?", default=default)
    rounds = ap.parse_args(list(argv)).rounds
    return ap.count(rounds, f"invalid ROUNDS '{rounds}': not a number "
                    "above 0")


# ---- syscall_vs_perf --------------------------------------------------------

SYSCALL_VS_PERF_HELP = """\
getppid() cost: kbench syscall_overhead beside 'perf bench syscall basic'
(Debian linux-perf) on the same machine in the same run, interleaved
ROUNDS times, with the ratios of the best and of the median rounds.
kbench should add no harness overhead: the ratio of the best rounds
(noise from the VM and other tasks only ever adds time, so the fastest
round is the closest to the call's own cost) should stay within 10% of 1.

Usage: {prog} [ROUNDS]   (default 9)
Exit status: 0 the table printed, 1 a run failed, 2 bad usage, 4 no perf.
"""


def awk_median(figures: Sequence[str]) -> str:
    """The median as the bash script's awk printed it: the middle figure
    as written, or the mean of the two middle ones as %.6g."""
    v = sorted(figures, key=float)
    if len(v) % 2:
        return v[len(v) // 2]
    return f"{(float(v[len(v) // 2 - 1]) + float(v[len(v) // 2])) / 2:.6g}"


def best(figures: Sequence[str]) -> str:
    return min(figures, key=float)


def perf_ns() -> List[str]:
    """perf: 10,000,000 getppid() calls in one loop, total / loops, in
    ns per call."""
    out = proc.capture(["perf", "bench", "syscall", "basic"])
    return [f"{float(m.group(1)) * 1000:.3f}" for m in
            re.finditer(r"^\s*([0-9.]+).*usecs/op", out, re.M)]


def kbench_ns(binary: str, json_path: str) -> str:
    """kbench: 2000 samples of 1000-call batches; their mean is total /
    calls, the same time base as perf's figure."""
    measured([binary, "-t", "getppid", "-i", "2000", "--json", json_path],
             "syscall_overhead")
    with open(json_path, encoding="utf-8") as f:
        return f"{json.load(f)['rows'][0]['mean'] * 1000:.3f}"


def perf_table(rounds: int, perf: Sequence[str],
               ours: Sequence[str]) -> List[str]:
    pb, pm, kb, km = best(perf), awk_median(perf), best(ours), \
        awk_median(ours)
    r = float(kb) / float(pb)
    within = "within 10%" if 0.9 <= r <= 1.1 else "OUTSIDE 10%"
    return [f"getppid() ns per call, {rounds} interleaved rounds",
            f"{'':<36} {'best':>8} {'median':>8}   rounds",
            f"{'perf bench syscall basic':<36} {pb:>8} {pm:>8}   "
            + " ".join(perf),
            f"{'kbench syscall_overhead -t getppid':<36} {kb:>8} {km:>8}   "
            + " ".join(ours),
            f"ratio kbench/perf: best {r:.3f} ({within}), median "
            f"{float(km) / float(pm):.3f}"]


def syscall_vs_perf_main(argv: Sequence[str],
                         prog: str = "kbench bench syscall-vs-perf") -> int:
    rounds = rounds_of(prog, argv, SYSCALL_VS_PERF_HELP, "9")
    if not shutil.which("perf"):
        msg(prog, "perf not found: apt-get install linux-perf")
        return EXIT_MISSING

    def body() -> int:
        build("-C", os.path.join(paths.TOP, "syscall_overhead"),
              progress=True)
        binary = os.path.join(paths.TOP, "syscall_overhead",
                              "syscall_overhead")
        perf: List[str] = []
        ours: List[str] = []
        with scratch("kbench-syscall-vs-perf.") as d:
            for _ in range(rounds):
                perf += perf_ns()
                ours.append(kbench_ns(binary, os.path.join(d, "k.json")))
        if not perf:
            raise cli.Failure("perf bench syscall basic printed no usecs/op")
        print("\n".join(perf_table(rounds, perf, ours)))
        return 0
    return cli.orchestrate(prog, body)


# ---- taskstats_seed ---------------------------------------------------------

TASKSTATS_SEED_HELP = """\
Reproduce the table of seed 000 (the /proc/taskstats RFC benchmark):
seconds per pass over 1000 and 10000 processes, for every method, in one
run, with the ratio of each method to per-pid netlink, and what loading
the bpf_iter program costs once. Goal: batched netlink at least 1.2x
faster than per-pid netlink at 1000 processes.

Usage: {prog} [-p PASSES] [-K BATCH] [-s "1000 10000"] [-o DIR]
Needs CAP_NET_ADMIN for the netlink rows (run as root).
"""
TASKSTATS_GOAL = 1.2
# Only the method rows (and the reaping check): the other checks time
# nothing.
TASKSTATS_ROWS = ("netlink_per_pid,netlink_batched,procfs,procfs_pread,"
                  "ioctl,bpf_iter,children_reaped")


def taskstats_run(binary: str, n: str, passes: str, batch: str,
                  out: str) -> bool:
    """One process count: its JSON and KTAP in out, its skips said on
    stderr (or its failures); whether it ran."""
    sys.stderr.write(f"== {n} processes: taskstats -N {n} -p {passes} "
                     f"-K {batch}\n")
    rc, ktap = proc.output([binary, "-N", n, "-p", passes, "-K", batch,
                            "-t", TASKSTATS_ROWS, "--json",
                            os.path.join(out, f"taskstats_{n}.json")])
    with open(os.path.join(out, f"taskstats_{n}.ktap"), "w",
              encoding="utf-8") as f:
        f.write(ktap)
    lines = ktap.splitlines()
    if rc != 0:
        said = [line for line in lines if line.startswith(("not ok", "# "))]
        sys.stderr.write("".join(f"{line}\n" for line in [
            f"taskstats -N {n} failed; see below", *said[-20:]]))
        return False
    sys.stderr.write("".join(f"{line}\n" for line in lines
                             if re.match(r"ok .* # SKIP", line)))
    return True


def taskstats_seed_main(argv: Sequence[str],
                        prog: str = "kbench bench taskstats-seed") -> int:
    ap = parser(prog, TASKSTATS_SEED_HELP)
    ap.add_argument("-p", dest="passes", default="20")
    ap.add_argument("-K", dest="batch", default="64")
    # The process counts as one space-separated word.
    ap.add_argument("-s", dest="sizes", default="1000 10000")
    ap.add_argument("-o", dest="outdir")
    a = ap.parse_args(list(argv))

    def body() -> int:
        binary = program("taskstats")
        with scratch("taskstats_seed.", a.outdir) as out:
            for n in a.sizes.split():
                if not taskstats_run(binary, n, a.passes, a.batch, out):
                    return 1
            sizes = a.sizes.split()
            rows, kernel = bench_tables.seed_rows(out, sizes)
            bench_tables.seed_tables(rows, kernel, sizes)
            return bench_tables.seed_goal(rows, TASKSTATS_GOAL)
    return cli.orchestrate(prog, body)


# ---- memcg_stat_read --------------------------------------------------------

MEMCG_STAT_READ_HELP = """\
{prog}: what one read of memory.stat and memory.numa_stat
costs, three ways side by side, from one run of memcg_ks:
  per_read     lseek(0) + read on a kept fd (a daemon),
  per_cat      open + read + close (a script that reads the file itself),
  cat_process  an external 'cat FILE' process (a shell pipeline; what
               the seed's selftest timed),
and, when the kernel has them, the same for the .ks files with each
filter (ratio against legacy).

Usage: {prog} [memcg_ks options...]
  e.g. {prog}                 quick (20k reads, 100 cats)
       {prog} --full          1M reads, 1000 cats
       CGPATH=/sys/fs/cgroup/x {prog} -n 200000
"""


def memcg_stat_read_main(argv: Sequence[str],
                         prog: str = "kbench bench memcg-stat-read") -> int:
    """Every argument is memcg_ks's (its usage errors are ours: 2)."""
    if argv[:1] in (["-h"], ["--help"]):
        print(MEMCG_STAT_READ_HELP.format(prog=prog), end="")
        return 0

    def body() -> int:
        binary = program("memcg_ks")
        with scratch("kbench-memcg-stat-read.") as d:
            doc = os.path.join(d, "memcg_ks.json")
            rc, ktap = proc.output([binary, "--json", doc, *argv])
            if not (os.path.isfile(doc) and os.path.getsize(doc)):
                sys.stderr.write(ktap)
                msg(prog, f"memcg_ks exited {rc} without results")
                return 2 if rc == 2 else 1
            failed = [line for line in ktap.splitlines()
                      if line.startswith("not ok")]
            if failed:
                msg(prog, "some memcg_ks tests failed:")
                sys.stderr.write("".join(f"{line}\n" for line in failed))
            return table(bench_tables.memcg_table, doc, bad=2)
    return cli.orchestrate(prog, body)


# ---- pmqtest_vs_rttests -----------------------------------------------------

PMQTEST_HELP = """\
kbench pmqtest against rt-tests' pmqtest on the same parameters, in one
run: both write --json, the SAME reader (bench/rt_tests_json.py) reads
both files, and the table shows Min/Avg/Max side by side with the ratio
of the averages (kbench / rt-tests). Our average must not exceed theirs
by more than 10 % (the measurement must add no cost).

Usage: {prog} [ROUNDS]
Environment: LOOPS (20000), INTERVAL (100 us), PRIO (80), ROUNDS (3),
  RTTESTS_PMQTEST (/usr/bin/pmqtest), KSRC (kernel tree for the build),
  MAX_RATIO (1.10).
Each configuration runs ROUNDS times, alternating which tool goes first;
the table shows the median of the rounds. Runs without privilege for
SCHED_FIFO skip the -p configuration.
Exit: 0 ok, 1 a ratio above MAX_RATIO or a JSON mismatch, 4 no rt-tests.
"""


def first_line(cmd: Sequence[str], log: str) -> str:
    """The first line a command prints, stdout or stderr (its --help)."""
    proc.run(cmd, log=log)
    with open(log, encoding="utf-8", errors="replace") as f:
        return f.readline().rstrip("\n")


def pmqtest_configs(ours: str, env: Mapping[str, str]) -> List[str]:
    loops, interval = env.get("LOOPS", "20000"), env.get("INTERVAL", "100")
    prio = env.get("PRIO", "80")
    configs = [f"-S -l {loops} -i {interval} -q"]
    if proc.succeeds([ours, "-p", prio, "-l", "1", "-q"]):
        configs.append(f"{configs[0]} -p {prio}")
    else:
        print(f"# no SCHED_FIFO privilege: skipping the -p {prio} "
              "configuration")
    return configs


def pmqtest_rounds(tools: Sequence[str], config: str, c: int, rounds: int,
                   d: str) -> None:
    """ROUNDS runs of both tools on one configuration, alternating which
    goes first; its JSON files and the configuration in d."""
    for r in range(1, rounds + 1):
        order = ("theirs", "ours") if r % 2 else ("ours", "theirs")
        for who in order:
            binary = tools[0] if who == "theirs" else tools[1]
            out = os.path.join(d, f"c{c}_r{r}_{who}")
            text = measured([binary, *config.split(), f"--json={out}.json"],
                            binary)
            with open(f"{out}.txt", "w", encoding="utf-8") as f:
                f.write(text)
    with open(os.path.join(d, f"c{c}.cfg"), "w", encoding="utf-8") as f:
        f.write(config + "\n")


def pmqtest_vs_rttests_main(argv: Sequence[str],
                            prog: str = "kbench bench pmqtest-vs-rttests"
                            ) -> int:
    rounds = rounds_of(prog, argv, PMQTEST_HELP,
                       os.environ.get("ROUNDS", "3"))
    theirs = os.environ.get("RTTESTS_PMQTEST", "/usr/bin/pmqtest")
    if not os.access(theirs, os.X_OK):
        print(f"rt-tests pmqtest not found at {theirs} (apt-get install "
              "rt-tests)", file=sys.stderr)
        return EXIT_MISSING

    def body() -> int:
        ours = program("pmqtest")
        with scratch("kbench-pmqtest.") as d:
            configs = pmqtest_configs(ours, os.environ)
            version = first_line([theirs, "--help"],
                                 os.path.join(d, "help"))
            print(f"# rt-tests: {theirs} ({version})\n# kbench:   {ours}\n"
                  f"# {rounds} round(s) per configuration, alternating "
                  f"order; {cpus()} CPUs")
            for c, config in enumerate(configs):
                pmqtest_rounds((theirs, ours), config, c, rounds, d)
            return bench_tables.compare_dir(
                d, len(configs), rounds,
                float(os.environ.get("MAX_RATIO", "1.10")))
    return cli.orchestrate(prog, body)


# ---- proc_create: fork_vs_size and proc_create_vs_book ----------------------

FORK_VS_SIZE_HELP = """\
Usage: {prog} [-n N] [-m SIZES] [-T SECONDS] [-k]
  -n N      creations per cell (default 300)
  -m SIZES  touched sizes beyond the book's (default 16M,64M,256M,1G)
  -T S      stop a cell after S seconds (default 3)
  -k        keep the JSON file and print its path
Environment: KSRC (kernel tree for the build, see lib/kbench.mk).
"""

# proc_create's options, handed on in this order: sizes, creations per
# cell, seconds per cell.
FORK_VS_SIZE_OPTIONS = (("-m", "16M,64M,256M,1G"), ("-n", "300"),
                        ("-T", "3"))

PROC_CREATE_VS_BOOK_HELP = """\
Usage: {prog} [JSON]
  JSON  the --json file of a proc_create run (a --full run for the
        book's counts); without it, runs 'proc_create -m none' (quick)
Environment: KSRC (kernel tree for the build, see lib/kbench.mk).
"""


def proc_create(binary: str, args: Sequence[str], doc: str) -> None:
    """proc_create ARGS --json DOC; its exit status when it is neither
    0 nor 1 (a row that failed still leaves its figures)."""
    rc, _ = proc.output([binary, *args, "--json", doc])
    if rc not in (0, 1):
        raise cli.Failure(f"proc_create exited with {rc}", rc)


def fork_vs_size_main(argv: Sequence[str],
                      prog: str = "kbench bench fork-vs-size") -> int:
    ap = parser(prog, FORK_VS_SIZE_HELP)
    for option, default in FORK_VS_SIZE_OPTIONS:
        ap.add_argument(option, default=default)
    ap.add_argument("-k", dest="keep", action="store_true")
    a = ap.parse_args(list(argv))
    args = ["-t", "fork,vfork,posix_spawn"] + [
        word for option, _ in FORK_VS_SIZE_OPTIONS
        for word in (option, getattr(a, option[1:]))]

    def body() -> int:
        binary = program("proc_create")
        with json_file("fork_vs_size.", a.keep) as doc:
            print(f"proc_create {' '.join(args)}", flush=True)
            clock = proc.Clock()
            proc_create(binary, args, doc)
            print(f"wall time: {clock.seconds()} s; kernel "
                  f"{os.uname().release}, {cpus()} CPUs")
            if a.keep:
                print(f"JSON: {doc}")
            return table(bench_tables.fork_table, doc)
    return cli.orchestrate(prog, body)


def proc_create_vs_book_main(argv: Sequence[str],
                             prog: str = "kbench bench proc-create-vs-book"
                             ) -> int:
    ap = parser(prog, PROC_CREATE_VS_BOOK_HELP)
    ap.add_argument("json", nargs="?")
    a = ap.parse_args(list(argv))
    if a.json is not None and not os.access(a.json, os.R_OK):
        ap.error(f"cannot read '{a.json}'")

    def body() -> int:
        if a.json is not None:
            return table(bench_tables.book_table, a.json)
        binary = program("proc_create")
        with json_file("proc_create_vs_book.") as doc:
            proc_create(binary, ["-m", "none"], doc)
            return table(bench_tables.book_table, doc)
    return cli.orchestrate(prog, body)
