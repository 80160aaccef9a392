# SPDX-License-Identifier: GPL-2.0
"""kbench series: a patch series measured exactly, commit by commit.
Every commit of BASE..TIP of a kernel tree is built with the test
kernel's configuration (kbtools.kernel: incremental, cached by hash, as
validate and bisect build them) and booted once under QEMU's
instruction counter (kbtools.vm --icount); the base boots as often as
its calibration needs (kbtools.calibration: none when one of its image
is cached). Each row of each commit is judged against the commit
before it (the step) and against the base (the running total) by
kbtools.exact's rule, with the class the base's own boots gave the row.
See USAGE.

The builds run ahead in a child process while the commit before boots:
a warm series takes about the larger of the build and boot times per
commit, not their sum. The state directory holds every build's record
and every boot's results, so an interrupted series resumes (--resume)
where it stopped.
"""

import argparse
import contextlib
import functools
import hashlib
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import (Any, Callable, Dict, List, NamedTuple, Optional,
                    Sequence, Tuple)

from kbtools import (ab, bisect, bisect_run, calibration, cli, collection,
                     compare, guest, kcidb, kernel, lava, lava_job, options,
                     output, paths, plots, policy, proc, report, results, vm,
                     where)
from kbtools import series_table
from kbtools.series_table import Point, Table

USAGE = """\
Usage: {prog} --tree DIR BASE..TIP [-t TEST[:ROW]]... [OPTION]...
       {prog} --resume --state DIR
Measure a patch series exactly, commit by commit: build every commit of
BASE..TIP of the kernel git tree DIR with the test kernel's configuration
(incrementally, images cached by commit hash), boot each once under
QEMU's instruction counter (--icount: figures are guest instructions)
and print, per commit and row, the step (against the commit before) and
the running total (against BASE), in instructions per operation.

BASE boots {boots} times, an A/A of it whose spread gives each row its class
(exact, near or noisy) and its margin, unless a calibration of its image
is cached (then once). Every other commit boots once, running each
program {reps} times. The next commit builds while one boots. A commit
that does not build or boot is shown as such and the series goes on;
its successor is measured against the last commit that booted.

On exact rows the steps add up to the total, to the instruction: this is
checked and said. A noisy row's step within its margin reads 'same' and
the line under the table says how many boots a verdict on it needs.

  --tree DIR          a kernel git tree (clean; built out of tree, or in
                      place when testkernel/build.sh configured it)
  BASE..TIP           the series: the commits after BASE up to TIP
  -t, --test TEST[:ROW]
                      only these programs or rows (repeatable; default:
                      every program)
      --json DIR      the series as JSON in DIR/series.json: one record
                      per commit and row
      --summary FILE  the email-ready summary (at most 72 columns)
      --report FILE   an HTML page: the commit-by-row map of the steps,
                      each cell linked to its commit's A/B page (FILE-ab/)
      --kcidb FILE    every boot's results as KCIDB I/O, each commit its
                      own checkout (git_commit_hash)
      --where         for each commit whose step moved an exact or near
                      row of syscall_overhead, the functions whose own
                      instructions per operation changed (kbench where:
                      each commit on either side of such a step boots
                      once more), below the table, in the JSON, summary
                      and pages; x86_64
      --where-with HOW
                      how --where counts: plugin (kbench's QEMU plugin,
                      exact; the default, ftrace when it cannot be
                      provisioned, said so) or ftrace (function_graph)
      --lava URL      boot every commit as a job of the LAVA server at URL
                      (qemu device type; its API token in
                      KBENCH_LAVA_TOKEN): each image is copied into
                      --lava-images DIR, which the lab reads at
                      --lava-images-url URL; the guest's rootfs (the
                      built collection, as 'kbench lava local run' packs
                      it) at --lava-rootfs URL, its init --lava-init
                      PATH (default /sbin/init; the local lab's rootfs:
                      /sbin/kbench-init). The base's calibration comes
                      from the lab's own boots
{lava_jobs}      --state DIR     the series' builds and boots (default: under
                      ~/.cache/kbench/series/, one per tree, range and rows)
      --resume        go on with the series kept in the state directory
  -j, --jobs N        parallel make jobs of each build (default: the CPUs)
      --boot-timeout SECS, --vm-timeout SECS
                      passed to every boot (kbtools.vm)
  -h, --help          this help

Exit status: 0 every commit measured; 1 a commit did not build or boot,
or --where could not profile a step; 2 bad usage; 3 the base does not build or boot, or a failed setup;
130 interrupted (--resume goes on).
"""

VM_OPTIONS = ("--boot-timeout", "--vm-timeout")
LAVA_OPTIONS = ("lava", "lava-images", "lava-images-url", "lava-rootfs")
# The lab's API token: from the environment, never kept in the state.
LAVA_TOKEN = "KBENCH_LAVA_TOKEN"
# Jobs in the lab at once when it does not say how many devices take
# them: enough for a small lab to boot commits side by side, few enough
# that a series does not fill a shared lab's queue, nor leave much to
# cancel on ^C. The base's calibration alone is three.
LAVA_JOBS = 4
# How often the jobs in the lab are polled (s).
LAVA_POLL_S = 10.0
SETTINGS = "settings.json"
CALIBRATION = "calibration.json"
# --where's profiles, STATE/where/HASH/ROW/profile.json (kbench where's
# files of a boot; the plugin's in STATE/where-plugin/), and the
# differences of the steps (STATE/where.json).
WHERE = "where"
# How often the boots look for the next build's record (s).
POLL_S = 1.0
# ---- options ---------------------------------------------------------------

def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, help_text=USAGE.format(
        prog=prog, boots=calibration.BOOTS,
        reps=policy.icount().repetitions,
        lava_jobs=options.usage(["--lava-jobs"], fallback=LAVA_JOBS)))
    ap.add_argument("--tree")
    ap.add_argument("range", nargs="?")
    options.add_arguments(ap, ("--test",), {"--test": {
        "action": "append", "default": []}})
    options.add_arguments(ap, ("--json", "--report"))
    ap.add_argument("--summary")
    ap.add_argument("--kcidb")
    options.add_arguments(ap, ("--where", "--where-with"), {
        "--where-with": {"choices": (where.PLUGIN, where.FTRACE)}})
    ap.add_argument("--state")
    for name in LAVA_OPTIONS:
        ap.add_argument(f"--{name}")
    ap.add_argument("--lava-init", type=lava_job.kernel_word)
    options.add_arguments(ap, ("--lava-jobs",))
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("-j", "--jobs")
    options.add_arguments(ap, VM_OPTIONS)
    args = ap.parse_args(list(argv))
    if args.jobs is not None and not args.jobs.isdigit():
        raise cli.Error(f"invalid --jobs '{args.jobs}'")
    if args.where_with and not args.where:
        raise cli.Error("--where-with needs --where")
    if args.lava_jobs is not None and (not args.lava_jobs.isdigit() or
                                       int(args.lava_jobs) < 1):
        raise cli.Error(f"invalid --lava-jobs '{args.lava_jobs}' (a number "
                        f"of jobs, 1 or more)")
    if args.resume and args.state and not args.tree and not args.range:
        return args
    if not args.tree:
        raise cli.Error("no kernel tree: give --tree DIR")
    if not args.range or args.range.count("..") != 1 or \
            "..." in args.range or not all(args.range.split("..")):
        raise cli.Error(f"give the series as BASE..TIP, not "
                        f"'{args.range or ''}'")
    lava_given = [n for n in LAVA_OPTIONS if getattr(args, n.replace("-",
                                                                      "_"))]
    if lava_given and len(lava_given) != len(LAVA_OPTIONS):
        raise cli.Error("--lava needs --lava-images, --lava-images-url and "
                        "--lava-rootfs")
    for name in ("lava", "lava-images-url", "lava-rootfs"):
        value = getattr(args, name.replace("-", "_"))
        try:
            if value is not None:
                lava_job.url(value)
        except argparse.ArgumentTypeError as e:
            raise cli.Error(f"--{name}: {e}") from None
    if lava_given and not os.environ.get(LAVA_TOKEN):
        raise cli.Error(f"--lava: no API token in {LAVA_TOKEN}")
    if args.lava_jobs is not None and not lava_given:
        raise cli.Error("--lava-jobs needs --lava")
    bisect_run.check_targets(args.test)
    if args.where:
        check_where(args.test)
    return args


# ---- the state --------------------------------------------------------------

def default_state(tree: str, base: str, tip: str,
                  targets: Sequence[str]) -> str:
    key = hashlib.sha256("\n".join([tree, base, tip, *targets])
                         .encode()).hexdigest()
    return paths.user_cache("series", key[:12])


def build_record(state: str, commit: str) -> str:
    return os.path.join(state, "builds", f"{commit}.json")


def boots_dir(state: str, commit: str) -> str:
    return os.path.join(state, "boots", commit)


def usable_boots(state: str, commit: str) -> List[str]:
    """The commit's boots that left results, in order."""
    d = boots_dir(state, commit)
    if not os.path.isdir(d):
        return []
    ks = sorted(int(n) for n in os.listdir(d) if n.isdigit())
    return [os.path.join(d, str(k)) for k in ks]


def boot_failure(state: str, commit: str) -> Optional[str]:
    """Why the commit did not boot, when it did not."""
    path = os.path.join(boots_dir(state, commit), "failed.json")
    if not os.path.isfile(path):
        return None
    return str(results.read_json(path).get("why") or "it did not boot")


def read_build(state: str, commit: str) -> Optional[Dict[str, Any]]:
    path = build_record(state, commit)
    if not os.path.isfile(path):
        return None
    doc = results.read_json(path)
    return doc if isinstance(doc, dict) else None


def git_lines(tree: str, *args: str) -> List[str]:
    p = subprocess.run(["git", "-C", tree, *args], capture_output=True,
                       text=True)
    if p.returncode:
        first = (p.stderr.strip().splitlines() or ["git failed"])[0]
        raise cli.Error(f"git {args[0]} in {tree}: {first}")
    return p.stdout.splitlines()


def new_settings(args: argparse.Namespace) -> Dict[str, Any]:
    tree = bisect_run.checked_tree(args.tree)
    base_rev, tip_rev = args.range.split("..")
    base = tree.rev(base_rev, "BASE")
    tip = tree.rev(tip_rev, "TIP")
    if subprocess.run(["git", "-C", tree.path, "merge-base", "--is-ancestor",
                       base, tip]).returncode:
        raise cli.Error(f"BASE {base[:12]} is not an ancestor of TIP "
                        f"{tip[:12]}")
    commits = git_lines(tree.path, "rev-list", "--reverse", "--topo-order",
                        f"{base}..{tip}")
    if not commits:
        raise cli.Error(f"{args.range}: no commits in the series")
    subjects = {c: tree.subject(c) for c in [base, *commits]}
    return {"tree": tree.path, "range": args.range, "base": base,
            "tip": tip, "commits": commits, "subjects": subjects,
            "targets": list(args.test),
            "lava": {**{n: getattr(args, n.replace("-", "_"))
                        for n in LAVA_OPTIONS},
                     "lava-init": args.lava_init or "/sbin/init",
                     "lava-jobs": int(args.lava_jobs or 0) or None}
            if args.lava else None,
            "vm_args": options.passed_on(args, VM_OPTIONS)}


def prepare(args: argparse.Namespace) -> Tuple[Dict[str, Any], str]:
    """(settings, state) of a new or resumed series."""
    if args.resume and not args.tree:
        path = os.path.join(args.state or "", SETTINGS)
        if not args.state or not os.path.isfile(path):
            raise cli.Error(f"--resume: no series in '{args.state}'")
        return dict(results.read_json(path)), args.state
    st = new_settings(args)
    state = args.state or default_state(st["tree"], st["base"], st["tip"],
                                        st["targets"])
    path = os.path.join(state, SETTINGS)
    if os.path.isfile(path):
        if args.resume:
            return dict(results.read_json(path)), state
        raise cli.Error(f"a series was started in {state}: add --resume to "
                        f"go on with it, or remove that directory to start "
                        f"over")
    if args.resume:
        raise cli.Error(f"--resume: no series in '{state}'")
    try:
        os.makedirs(state, exist_ok=True)
        results.write_json(path, st)
    except OSError as e:
        raise cli.Error(f"cannot create --state '{state}': "
                        f"{cli.os_error_text(e)}") from e
    return st, state


# ---- the builds, run ahead ---------------------------------------------------

def build_one(builds: kernel.SeriesBuild, commit: str) -> Dict[str, Any]:
    """A build's record: the image, or why there is none."""
    start = time.monotonic()
    try:
        built = builds.build(commit)
    except kernel.BuildFailed as e:
        return {"status": "failed", "log": e.log,
                "error": bisect_run.build_error(e.log),
                "seconds": round(time.monotonic() - start, 1)}
    except (cli.Error, cli.Failure, proc.Failed) as e:
        return {"status": "setup", "error": str(e),
                "seconds": round(time.monotonic() - start, 1)}
    return {"status": "built", "image": built.image,
            "seconds": round(time.monotonic() - start, 1)}


def build_all(tree: str, commits: Sequence[str], state: str, jobs: int,
              prog: str) -> None:
    """The builder's work: each commit in order, its record written when
    it is done (a record already there: built before). The tree goes
    from one commit to the next (kernel.SeriesBuild) and back on its
    branch at the end. Stops at a failed setup (not the commit's
    fault)."""
    os.makedirs(os.path.join(state, "builds"), exist_ok=True)
    with kernel.SeriesBuild(tree, prog, jobs) as builds:
        for commit in commits:
            if read_build(state, commit) is not None:
                continue
            rec = build_one(builds, commit)
            rec["commit"] = commit
            path = build_record(state, commit)
            results.write_json(f"{path}.tmp", rec)
            os.replace(f"{path}.tmp", path)
            if rec["status"] == "setup":
                return


def _builder_main(tree: str, commits: Sequence[str], state: str, jobs: int,
                  prog: str) -> None:
    """The child's body: a signal (the parent's stop, or ^C) stops make's
    process group and puts the tree back on its branch (kbtools.kernel)
    before it ends."""
    try:
        with proc.stop_on_signals():
            build_all(tree, commits, state, jobs, prog)
    except proc.Interrupted:
        os._exit(cli.EXIT_INTERRUPTED)
    except BaseException as e:  # the parent says it: no trace here
        output.msg(prog, f"the builds stopped: {e}")
        os._exit(1)
    os._exit(0)


class Builder:
    """The builds of the series in a child process of their own, ahead
    of the boots."""

    def __init__(self, st: Dict[str, Any], state: str, jobs: int,
                 prog: str):
        self.st = st
        self.state = state
        self.jobs = jobs
        self.prog = prog
        self.child: Optional[Any] = None

    def start(self) -> None:
        commits = [self.st["base"], *self.st["commits"]]
        if all(read_build(self.state, c) is not None for c in commits):
            return
        ctx = multiprocessing.get_context("fork")
        self.child = ctx.Process(target=_builder_main, args=(
            self.st["tree"], commits, self.state, self.jobs, self.prog))
        sys.stdout.flush()
        sys.stderr.flush()
        self.child.start()

    def wait(self, commit: str) -> Dict[str, Any]:
        """The commit's build record, once its build is done."""
        while True:
            rec = self.ready(commit)
            if rec is not None:
                return rec
            time.sleep(POLL_S)

    def ready(self, commit: str) -> Optional[Dict[str, Any]]:
        """The commit's build record when its build is done, else None;
        cli.Failure when it never will be."""
        rec = read_build(self.state, commit)
        if rec is None and (self.child is None or
                            not self.child.is_alive()):
            # It may have written the record as it ended.
            rec = read_build(self.state, commit)
            if rec is None:
                raise cli.Failure(f"the builds stopped before "
                                  f"{commit[:12]} was built", cli.EXIT_SETUP)
        if rec is not None and rec.get("status") == "setup":
            raise cli.Failure(f"cannot build from {self.st['tree']}:"
                              f" {rec.get('error')}", cli.EXIT_SETUP)
        return rec

    def stop(self) -> None:
        """End the child (its make stopped, the tree put back)."""
        if self.child is None:
            return
        if self.child.is_alive() and self.child.pid:
            os.kill(self.child.pid, signal.SIGTERM)
        self.child.join(timeout=120)
        self.child = None


# ---- the boots -----------------------------------------------------------------

@dataclass
class Booter:
    """One boot of a commit's image under --icount, its results kept in
    STATE/boots/HASH/K/ (its KTAP, messages and console beside them)."""
    prog: str
    state: str
    targets: Sequence[str]
    vm_args: Sequence[str]
    why: str = ""

    @functools.cached_property
    def guest_env(self) -> Tuple[str, Dict[str, str]]:
        """The tests every boot runs and their programs' arguments
        (bisect_run.guest_env: it builds and lists the programs), once."""
        return bisect_run.guest_env(self.targets) if self.targets \
            else ("", {})

    def vm_options(self, image: str, console: str) -> vm.Options:
        tests, env = self.guest_env
        argv = ["--kernel", image, "--icount", "--repeat",
                str(policy.icount().repetitions), "--console", console,
                *self.vm_args]
        if tests:
            argv += ["-t", tests]
        opts = vm.parse(argv, vm.runner_prog(self.prog))
        opts.run.program_args = env
        return opts

    def key_of(self, image: str) -> calibration.Key:
        """What a calibration of the image holds for (kbtools.ab's key:
        the guest these boots make)."""
        with vm.Guest(self.vm_options(image, os.devnull),
                      vm.runner_prog(self.prog)) as g:
            g.prepare()
            return ab.calibration_key(g)

    def boot(self, commit: str, image: str) -> Optional[str]:
        """One boot, tried twice: the directory of its results, or None
        (why in self.why)."""
        for attempt in (1, 2):
            got = self.boot_once(commit, image)
            if got is not None:
                return got
            if attempt == 1:
                output.msg(self.prog, f"boot of {commit[:12]} unusable "
                           f"({self.why}): trying once more")
        return None

    def boot_once(self, commit: str, image: str) -> Optional[str]:
        d = boots_dir(self.state, commit)
        os.makedirs(d, exist_ok=True)
        k = len(usable_boots(self.state, commit)) + 1
        tmp = os.path.join(d, f"{k}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        console = os.path.join(d, f"{k}.console.log")
        ktap = os.path.join(d, f"{k}.ktap")
        try:
            return self.kept(d, k, self.guest_run(image, tmp, console, ktap),
                             ktap)
        finally:
            # Not kept: a failed boot, or one cut short by a signal.
            shutil.rmtree(tmp, ignore_errors=True)

    def guest_run(self, image: str, json_dir: str, console: str,
                  ktap: str) -> int:
        """One boot's exit status (the guest's failure to come up or
        finish included: why in self.why)."""
        self.why = ""
        with vm.Guest(self.vm_options(image, console),
                      vm.runner_prog(self.prog)) as g, open(ktap, "wb") as sink:
            g.prepare()
            try:
                return g.boot(json_dir, console, sink)
            except guest.Ended as e:
                self.why = str(e)
                return e.status

    def kept(self, d: str, k: int, rc: int, ktap: str) -> Optional[str]:
        """D/K, the boot's results, when the boot is usable; else None
        (why in self.why)."""
        tmp = os.path.join(d, f"{k}.tmp")
        if rc in (0, 1):
            with open(ktap, errors="replace") as f:
                problems = bisect.stream_problems(f.read())
            if not problems and any(n.endswith(".json")
                                    for n in os.listdir(tmp)):
                os.rename(tmp, os.path.join(d, str(k)))
                return os.path.join(d, str(k))
            self.why = problems[0] if problems else "no results"
        elif not self.why:
            self.why = f"exit {rc}"
        return None


class Slot(NamedTuple):
    """One boot of a commit: its number K, kept as STATE/boots/HASH/K/."""
    commit: str
    k: int


@dataclass
class Job:
    """A boot in the lab: its slot, its job, which try of the slot it
    is (a job that fails is tried once more) and when it went in."""
    slot: Slot
    jid: str
    tries: int
    start: float = 0.0


@dataclass
class LavaBooter(Booter):
    """The boots of a series as LAVA jobs (--lava URL): the image served
    to the lab at kernel_url(image), the job made by kbtools.lava_job
    (--icount, the programs), its id kept beside its boot
    (STATE/boots/HASH/K.lava.json) so that --resume polls the job
    instead of submitting it again; the results and KTAP taken from the
    job's log (kbtools.lava.keep_boot), its log kept as the console.
    LabRun submits, polls and collects many at once."""
    api: Optional[lava.Api] = None
    kernel_url: Optional[Callable[[str], str]] = None
    rootfs_url: str = ""
    job_options: Sequence[str] = ()
    poll_s: float = 10.0

    def job_argv(self, image: str) -> List[str]:
        assert self.kernel_url is not None
        argv = ["--kernel", self.kernel_url(image), "--rootfs",
                self.rootfs_url, "--icount", "--job-name",
                f"kbench series {os.path.basename(image)}",
                *self.job_options]
        for t in self.targets:
            argv += ["-t", bisect.parse_target(t)[0]]
        return argv

    def definition(self, image: str) -> str:
        import yaml  # the LAVA side only (Debian: python3-yaml)
        return str(yaml.safe_dump(
            lava_job.job(lava_job.parse_args(self.job_argv(image))),
            sort_keys=False, width=1000))

    def device_type(self) -> str:
        """The device type the jobs ask for."""
        return str(lava_job.parse_args(
            ["--kernel", "file:///k", "--rootfs", "file:///r",
             *self.job_options]).device_type)

    def key_of(self, image: str) -> calibration.Key:
        raise cli.Failure("a series through LAVA has no calibration key "
                          "of this host's guest", cli.EXIT_SETUP)

    def record(self, slot: Slot) -> str:
        return os.path.join(boots_dir(self.state, slot.commit),
                            f"{slot.k}.lava.json")

    def kept_jobs(self, commit: str) -> List[Job]:
        """The commit's jobs submitted before (an interrupted series'):
        to be polled, not submitted again."""
        d = boots_dir(self.state, commit)
        names = os.listdir(d) if os.path.isdir(d) else []
        out = []
        for name in names:
            k, dot, rest = name.partition(".")
            if k.isdigit() and dot and rest == "lava.json":
                rec = results.read_json(os.path.join(d, name))
                out.append(Job(Slot(commit, int(k)), str(rec["job"]),
                               int(rec.get("try") or 1), time.monotonic()))
        return sorted(out, key=lambda j: j.slot.k)

    def submit(self, slot: Slot, image: str, tries: int) -> Job:
        """The slot's job, submitted and kept (ValueError: the lab did
        not take it)."""
        assert self.api is not None
        jid = self.api.submit(self.definition(image))
        os.makedirs(boots_dir(self.state, slot.commit), exist_ok=True)
        results.write_json(self.record(slot), {
            "job": jid, "url": self.api.url, "try": tries})
        return Job(slot, jid, tries, time.monotonic())

    def finished(self, job: Job) -> Optional[Dict[str, object]]:
        """The job's record once it has ended, else None."""
        assert self.api is not None
        info = self.api.job(job.jid)
        return info if info.get("state") == "Finished" else None

    def collect(self, job: Job, info: Dict[str, object]) -> Optional[str]:
        """The ended job's boot directory (STATE/boots/HASH/K) when it
        is usable, else None (why in self.why); its record gone either
        way."""
        assert self.api is not None
        d = boots_dir(self.state, job.slot.commit)
        k = job.slot.k
        tmp = os.path.join(d, f"{k}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        ktap = os.path.join(d, f"{k}.ktap")
        self.why = ""
        try:
            text = self.api.log(job.jid)
            results.write_text(os.path.join(d, f"{k}.console.log"), text)
            if info.get("health") != "Complete":
                self.why = f"job {job.jid} ended {info.get('health')}"
            else:
                import yaml
                lava.keep_boot(yaml.safe_load(text) or [], tmp, ktap)
            return self.kept(d, k, 2 if self.why else 0, ktap)
        except (ValueError, OSError) as e:
            self.why = f"job {job.jid}: {e}"
            return None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            self.forget(job)

    def forget(self, job: Job) -> None:
        """The job's record removed: its slot is submitted anew."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.record(job.slot))

    def cancel(self, job: Job) -> Optional[str]:
        """The job cancelled in the lab and forgotten here; why not,
        when the lab would not (then it stays recorded, for --resume)."""
        assert self.api is not None
        try:
            self.api.cancel(job.jid)
        except ValueError as e:
            return str(e)
        self.forget(job)
        return None

    def lab_jobs(self, asked: Optional[int]) -> Tuple[int, str]:
        """How many jobs at once (ASKED: --lava-jobs), and where that
        number comes from."""
        if asked:
            return asked, "--lava-jobs"
        assert self.api is not None
        kind = self.device_type()
        try:
            n = self.api.capacity(kind)
        except ValueError as e:
            return LAVA_JOBS, f"the lab did not list its devices ({e})"
        if n < 1:
            return LAVA_JOBS, f"the lab lists no {kind} device taking jobs"
        return n, f"the lab's {kind} devices taking jobs"


def served(image: str, where: str, url: str) -> str:
    """The image put where the lab reads it (named by its contents, so
    that a commit that changes no code serves the same file), and its
    URL there."""
    with open(image, "rb") as f:
        name = hashlib.file_digest(f, "sha256").hexdigest()[:20]
    dest = os.path.join(where, f"{name}.img")
    if not os.path.isfile(dest):
        os.makedirs(where, exist_ok=True)
        shutil.copyfile(image, dest + ".tmp")
        os.chmod(dest + ".tmp", 0o644)
        os.replace(dest + ".tmp", dest)
    return f"{url.rstrip('/')}/{name}.img"


def booter_of(st: Dict[str, Any], state: str, prog: str) -> Booter:
    """The series' booter: this host's guest, or the LAVA lab's."""
    lab = st.get("lava")
    if not lab:
        return Booter(prog, state, st["targets"], st["vm_args"])
    token = os.environ.get(LAVA_TOKEN)
    if not token:
        raise cli.Error(f"--lava: no API token in {LAVA_TOKEN}")
    conf: Dict[str, str] = dict(lab)
    return LavaBooter(prog, state, st["targets"], st["vm_args"],
                      api=lava.Api(conf["lava"], token),
                      kernel_url=lambda image: served(
                          image, conf["lava-images"],
                          conf["lava-images-url"]),
                      rootfs_url=conf["lava-rootfs"],
                      job_options=["--init", conf["lava-init"]],
                      poll_s=LAVA_POLL_S)


def mark_unbooted(state: str, commit: str, why: str) -> None:
    os.makedirs(boots_dir(state, commit), exist_ok=True)
    results.write_json(os.path.join(boots_dir(state, commit), "failed.json"),
                       {"why": why})


# ---- the series ------------------------------------------------------------------

class Series:
    """The run: builds ahead, boots in order, the base's calibration."""

    def __init__(self, st: Dict[str, Any], state: str, jobs: int, prog: str):
        self.st = st
        self.state = state
        self.prog = prog
        self.builder = Builder(st, state, jobs, prog)
        self.booter = booter_of(st, state, prog)
        self.times: Dict[str, float] = {"build": 0.0, "boot": 0.0,
                                        "wait": 0.0}

    def say(self, text: str) -> None:
        output.msg(self.prog, text)

    def title(self, commit: str) -> str:
        return f"{commit[:12]} {self.st['subjects'].get(commit, '')}"

    def image(self, commit: str) -> Optional[str]:
        start = time.monotonic()
        rec = self.builder.wait(commit)
        self.times["wait"] += time.monotonic() - start
        return self.built(commit, rec)

    def built(self, commit: str, rec: Dict[str, Any]) -> Optional[str]:
        """The image of the commit's build record REC, or None (said)."""
        self.times["build"] += float(rec.get("seconds") or 0)
        if rec["status"] != "built":
            self.say(f"{self.title(commit)}: does not build "
                     f"({rec.get('error')}; log: {rec.get('log')})")
            return None
        return str(rec["image"])

    def boot_until(self, commit: str, image: str, boots: int) -> bool:
        while len(usable_boots(self.state, commit)) < boots:
            n = len(usable_boots(self.state, commit)) + 1
            self.say(f"booting {self.title(commit)} ({n} of {boots})")
            start = time.monotonic()
            got = self.booter.boot(commit, image)
            self.times["boot"] += time.monotonic() - start
            if got is None:
                return False
        return True

    def base(self) -> calibration.Calibration:
        """The base built and booted as often as its calibration needs;
        the calibration (STATE/calibration.json)."""
        commit = self.st["base"]
        path = os.path.join(self.state, CALIBRATION)
        if os.path.isfile(path):
            return calibration.load(path)
        image = self.image(commit)
        if image is None:
            raise cli.Failure(f"the base {self.title(commit)} does not "
                              f"build: nothing to measure against",
                              cli.EXIT_SETUP)
        key = self.booter.key_of(image)
        cal = calibration.cached(key)
        if cal is None:
            self.say(f"base: no calibration of its image cached: it boots "
                     f"{calibration.BOOTS} times (an A/A of it)")
            self.boot_until(commit, image, calibration.BOOTS)
            return self.calibrated(key)
        self.say(f"base: {calibration.describe(cal)}, cached "
                 f"({calibration.cache_path(key)}): it boots once")
        if not self.boot_until(commit, image, 1):
            raise cli.Failure(f"the base {self.title(commit)} does not "
                              f"boot ({self.booter.why})", cli.EXIT_SETUP)
        calibration.save(path, cal)
        return cal

    def calibrated(self, key: Optional[calibration.Key] = None
                   ) -> calibration.Calibration:
        """The base's calibration from its own boots (this host's or the
        lab's), kept in STATE/calibration.json, and cached as KEY's (the
        image in this host's guest) when it has all its boots; fewer
        boots than it needs end the series."""
        commit = self.st["base"]
        dirs = usable_boots(self.state, commit)
        if len(dirs) < calibration.BOOTS:
            why = f" ({self.booter.why})" if self.booter.why else ""
            raise cli.Failure(f"the base {self.title(commit)} booted only "
                              f"{len(dirs)} times{why}", cli.EXIT_SETUP)
        cal = calibration.of_dirs(dirs)
        if key is not None and cal.boots >= calibration.BOOTS:
            calibration.store(key, cal)
        calibration.save(os.path.join(self.state, CALIBRATION), cal)
        self.say(f"base: {calibration.describe(cal)}, from its own boots")
        return cal

    def commit(self, commit: str) -> None:
        if usable_boots(self.state, commit) or \
                boot_failure(self.state, commit) is not None:
            return
        image = self.image(commit)
        if image is None:
            return
        if not self.boot_until(commit, image, 1):
            self.say(f"{self.title(commit)}: does not boot "
                     f"({self.booter.why}); the series goes on")
            mark_unbooted(self.state, commit, self.booter.why)

    def run(self, lava_jobs: Optional[int] = None) -> None:
        self.builder.start()
        try:
            if isinstance(self.booter, LavaBooter):
                LabRun(self, self.booter, lava_jobs).run()
                return
            self.base()
            for c in self.st["commits"]:
                self.commit(c)
        finally:
            self.builder.stop()


class LabRun:
    """The series' boots as jobs of a LAVA lab (--lava): each boot's job
    submitted as soon as its commit is built, up to `bound` in the lab
    at once (the base's calibration boots first, then each commit in
    the series' order), all polled together, each collected when it
    ends, in whatever order the lab ends them. A job's results go to
    the boot it was submitted for (STATE/boots/HASH/K), so nothing shown
    depends on that order. A job that fails is tried once more; a base
    that does not boot ends the series. Whatever ends the run early (a
    signal, a failure) cancels the jobs still in the lab and forgets
    them: --resume submits them again."""

    def __init__(self, s: "Series", booter: LavaBooter,
                 asked: Optional[int]):
        self.s = s
        self.booter = booter
        self.asked = asked
        self.bound = 0
        self.pending: List[Slot] = []
        self.flight: List[Job] = []
        self.images: Dict[str, Optional[str]] = {}
        self.jobs = 0

    def title(self, slot: Slot) -> str:
        base = slot.commit == self.s.st["base"]
        return self.s.title(slot.commit) + \
            (f" (boot {slot.k} of {calibration.BOOTS})" if base else "")

    def wanted(self, commit: str) -> int:
        """How many boots the commit needs in all."""
        if commit == self.s.st["base"]:
            done = os.path.isfile(os.path.join(self.s.state, CALIBRATION))
            return 0 if done else calibration.BOOTS
        return 0 if boot_failure(self.s.state, commit) is not None else 1

    def plan(self) -> None:
        """The boots to submit, in order; the jobs an interrupted run
        left in the lab taken back, to be polled."""
        for c in [self.s.st["base"], *self.s.st["commits"]]:
            want = self.wanted(c)
            have = {int(os.path.basename(d))
                    for d in usable_boots(self.s.state, c)}
            if not want or len(have) >= want:
                continue
            kept = self.booter.kept_jobs(c)
            self.flight += kept
            taken = have | {j.slot.k for j in kept}
            k = 1
            for _ in range(want - len(taken)):
                while k in taken:
                    k += 1
                taken.add(k)
                self.pending.append(Slot(c, k))

    def built(self, commit: str) -> bool:
        """True once the commit's build is done (its image, or None,
        in self.images); a base that does not build ends the series."""
        if commit in self.images:
            return True
        rec = self.s.builder.ready(commit)
        if rec is None:
            return False
        self.images[commit] = self.s.built(commit, rec)
        if self.images[commit] is None and commit == self.s.st["base"]:
            raise cli.Failure(f"the base {self.s.title(commit)} does not "
                              f"build: nothing to measure against",
                              cli.EXIT_SETUP)
        return True

    def fill(self) -> None:
        """Submit the next boots whose commits are built, while the lab
        holds fewer than bound of the series' jobs."""
        while self.pending and len(self.flight) < self.bound and \
                self.built(self.pending[0].commit):
            slot = self.pending.pop(0)
            if self.images[slot.commit] is not None:
                self.submit(slot, 1)

    def image(self, commit: str) -> str:
        """The commit's image (a job taken back from an interrupted run
        is tried again with it)."""
        while not self.built(commit):
            time.sleep(POLL_S)
        return str(self.images[commit])

    def submit(self, slot: Slot, tries: int) -> None:
        image = self.image(slot.commit)
        try:
            # A job the lab took is recorded and in flight, or cancelled.
            with proc.deferred_signals():
                job = self.booter.submit(slot, image, tries)
                self.flight.append(job)
        except ValueError as e:
            self.failed(slot, tries, str(e))
            return
        self.jobs += 1
        self.s.say(f"job {job.jid}: {self.title(slot)} "
                   f"({len(self.flight)} in the lab)")

    def failed(self, slot: Slot, tries: int, why: str) -> None:
        """A try of the slot that left no usable boot: once more, or
        the commit said not to boot (the base: the series ends)."""
        if tries == 1:
            self.s.say(f"{self.title(slot)}: unusable ({why}): trying "
                       f"once more")
            self.submit(slot, 2)
        elif slot.commit == self.s.st["base"]:
            raise cli.Failure(f"the base {self.title(slot)} does not boot "
                              f"({why})", cli.EXIT_SETUP)
        else:
            self.s.say(f"{self.s.title(slot.commit)}: does not boot "
                       f"({why}); the series goes on")
            mark_unbooted(self.s.state, slot.commit, why)

    def poll(self) -> bool:
        """Collect the jobs that have ended; True when one had."""
        ended = False
        for job in list(self.flight):
            try:
                info = self.booter.finished(job)
            except ValueError as e:
                # As a job that failed: cancelled, tried once more.
                self.flight.remove(job)
                self.booter.cancel(job)
                self.failed(job.slot, job.tries, f"job {job.jid}: {e}")
                continue
            if info is None:
                continue
            ended = True
            self.flight.remove(job)
            self.s.times["boot"] += time.monotonic() - job.start
            if self.booter.collect(job, info) is None:
                self.failed(job.slot, job.tries, self.booter.why)
            else:
                self.s.say(f"job {job.jid} done: {self.title(job.slot)}")
        return ended

    def cancel_all(self) -> None:
        """The jobs still in the lab cancelled (a signal held until
        then), each said."""
        if not self.flight:
            return
        with proc.deferred_signals():
            for job in self.flight:
                why = self.booter.cancel(job)
                self.s.say(f"job {job.jid} cancelled: {self.title(job.slot)}"
                           if why is None else
                           f"job {job.jid} left in the lab ({why}): "
                           f"--resume polls it")
            self.flight = []

    def run(self) -> None:
        self.bound, source = self.booter.lab_jobs(self.asked)
        self.plan()
        start = time.monotonic()
        self.s.say(f"lab: up to {self.bound} jobs at once ({source}); "
                   f"{len(self.pending)} boots to submit"
                   + (f", {len(self.flight)} jobs of the run before polled"
                      if self.flight else ""))
        try:
            while self.pending or self.flight:
                self.fill()
                if self.flight:
                    if not self.poll():
                        time.sleep(self.booter.poll_s)
                elif self.pending:
                    # Nothing in the lab: the next build is awaited.
                    waited = time.monotonic()
                    self.s.builder.wait(self.pending[0].commit)
                    self.s.times["wait"] += time.monotonic() - waited
            if not os.path.isfile(os.path.join(self.s.state, CALIBRATION)):
                # A lab's boots: its QEMU and device, not this host's
                # guest, so no calibration cached by this host's key.
                self.s.calibrated()
        finally:
            self.cancel_all()
        self.s.say(f"lab: {self.jobs} jobs submitted, "
                   f"{self.s.times['boot']:.0f} s of jobs in "
                   f"{time.monotonic() - start:.0f} s")


# ---- the figures and the table ------------------------------------------------

def insn_boots(dirs: Sequence[str]) -> Dict[str, List[List[float]]]:
    """'TEST:ROW' -> each boot's repetitions, in instructions per
    operation, of the icount rows of these boots' results."""
    out: Dict[str, List[List[float]]] = {}
    for d in dirs:
        for test in results.load(d).tests.values():
            if test.clock_mode() != results.ClockMode.ICOUNT:
                continue
            for row in test.rows.values():
                scale = test.insn_per_unit(row.unit)
                if scale is None or row.status != results.Status.OK:
                    continue
                for boot in row.boot_reps():
                    out.setdefault(f"{test.name}:{row.name}", []).append(
                        [v * scale for v in boot])
    return out


def points(st: Dict[str, Any], state: str) -> List[Point]:
    """The base and each commit of the series as the state holds them:
    measured (its figures by position), or why not."""
    out = []
    for n, c in enumerate([st["base"], *st["commits"]]):
        subject = st["subjects"].get(c, "")
        rec = read_build(state, c)
        dirs = usable_boots(state, c)
        if dirs:
            figs = {k: compare.by_position(v)
                    for k, v in insn_boots(dirs).items()}
            out.append(Point(n, c, subject, "measured", figs))
        elif rec is not None and rec.get("status") == "failed":
            out.append(Point(n, c, subject, "does not build"))
        elif boot_failure(state, c) is not None:
            out.append(Point(n, c, subject, "does not boot"))
        else:
            out.append(Point(n, c, subject, "not measured yet"))
    return out


# ---- where the instructions went (--where) -------------------------------------

def check_where(targets: Sequence[str]) -> None:
    """--where profiles rows of syscall_overhead: cli.Error when the
    series measures none of them."""
    try:
        tests = {bisect.parse_target(t)[0] for t in targets}
    except bisect.BisectError as e:
        raise cli.Error(f"-t: {e}") from None
    if tests and where.PROGRAM not in tests:
        raise cli.Error(f"--where profiles rows of {where.PROGRAM}: add "
                        f"-t {where.PROGRAM}")


@dataclass(frozen=True)
class Step:
    """A row that a commit's step moved and --where profiles: commit n
    against the commit measured before it (prev)."""
    n: int
    prev: int
    row: str


def where_steps(t: Table) -> List[Step]:
    """The steps --where profiles, in the series' order: each exact or
    near row of kbench where's that a step moved (the A/B's rule,
    ab.where_profiles)."""
    out = []
    for (n, row), c in sorted(t.cells.items()):
        test, _, name = row.partition(":")
        if n and ab.where_profiles(test, name, t.cls(row), c.step_verdict):
            out.append(Step(n, c.prev, name))
    return out


def where_boots(steps: Sequence[Step]) -> Dict[int, List[str]]:
    """Commit n -> the rows its profile needs: its own step's and the
    next step's (one boot a commit, not two a step)."""
    need: Dict[int, List[str]] = {}
    for s in steps:
        for n in (s.prev, s.n):
            rows = need.setdefault(n, [])
            if s.row not in rows:
                rows.append(s.row)
    return dict(sorted(need.items()))


def where_dir(state: str, method: str) -> str:
    """Where a mechanism's profiles are kept (ftrace's where they were
    before the plugin came)."""
    return os.path.join(state, WHERE if method == where.FTRACE
                        else f"{WHERE}-{method}")


def profile_commit(commit: str, rows: Sequence[str], state: str,
                   prog: str, how: where.Mechanism
                   ) -> Dict[str, where.RowProfile]:
    """The commit's profiles of these rows, kept in STATE/where/HASH/
    (kbench where's files; where_dir's for the plugin): booted, as how
    counts, for the rows it has none of yet. cli.Failure as
    where.profile."""
    d = os.path.join(where_dir(state, how.method), commit)
    kept = {r: os.path.join(d, r, "profile.json") for r in rows}
    missing = [r for r, path in kept.items() if not os.path.isfile(path)]
    if missing:
        rec = read_build(state, commit) or {}
        # The guest sees the tree read-only: the program is built here.
        collection.build([where.PROGRAM], prog)
        where.profile(prog, where.bootable(str(rec.get("image")), prog),
                      missing, d, policy.icount(), how.plugin)
    return {r: where.load_profile(path) for r, path in kept.items()}


def step_label(t: Table, s: Step) -> str:
    p, q = t.points[s.n], t.points[s.prev]
    return (f"commit {p.n} {p.commit[:12]} "
            f"({series_table.short(p.subject, 40)}) against {q.n} "
            f"{q.commit[:12]}")


def where_pass(t: Table, state: str, prog: str,
               asked: Optional[str] = None
               ) -> Tuple[List[results.Json], bool]:
    """kbench where on each step that moved a row it profiles: the
    differences (where.diff_json's, each with its commit: n, commit,
    against, and a label as the A/B's candidate), also in
    STATE/where.json; False when a commit could not be profiled (said;
    its steps left out)."""
    steps = where_steps(t)
    if not steps:
        output.msg(prog, f"where: no step moved an exact or near row of "
                   f"{where.PROGRAM}: nothing to profile")
        return [], True
    need = where_boots(steps)
    output.msg(prog, f"where: {len(steps)} moved row"
               f"{'s' if len(steps) > 1 else ''} of {where.PROGRAM} ("
               + "; ".join(f"{s.n}: {s.row}" for s in steps) + f"), "
               f"{len(need)} commits with a profile each")
    how = where.mechanism(prog, asked)
    output.msg(prog, f"where: {how.said()}")
    # A series' profiles are where's own boots (syscall_overhead alone).
    left = [s.row for s in steps if not where.counts(how.method, s.row)]
    if left:
        output.msg(prog, "where: " + where.not_counted(
            how.method, list(dict.fromkeys(left)), False))
        steps = [s for s in steps if where.counts(how.method, s.row)]
        need = where_boots(steps)
    profs: Dict[Tuple[int, str], where.RowProfile] = {}
    ok = True
    for n, rows in need.items():
        try:
            got = profile_commit(t.points[n].commit, rows, state, prog,
                                 how)
        except cli.Failure as e:
            output.msg(prog, f"where: commit {n}: {e}")
            ok = False
            continue
        profs.update(((n, r), side) for r, side in got.items())
    docs = []
    for s in steps:
        if (s.prev, s.row) in profs and (s.n, s.row) in profs:
            docs.append(dict(
                where.diff_json(profs[(s.prev, s.row)], profs[(s.n, s.row)]),
                candidate=step_label(t, s), n=s.n,
                commit=t.points[s.n].commit,
                against=t.points[s.prev].commit, **{where.COMPARED: t.cells[
                    (s.n, f"{where.PROGRAM}:{s.row}")].step}))
    path = os.path.join(state, where.AB_FILE)
    with cli.writing(path):
        results.write_json(path, {"rows": docs})
    return docs, ok


def to_kcidb(st: Dict[str, Any], state: str) -> results.Json:
    """Every boot of the series as KCIDB I/O (kbtools.kcidb): each
    commit its own checkout, named by its hash, its boots' tests under
    its build."""
    ex = kcidb.Exporter()
    for c in [st["base"], *st["commits"]]:
        ex.checkout_info = {"git_commit_hash": c}
        for k, d in enumerate(usable_boots(state, c), 1):
            stream, _ = kcidb.load_ktap(d)
            ex.add_run(results.load(d), stream, key=f"{c}/{k}")
    return ex.document()


def ab_pages(page: str, t: Table, st: Dict[str, Any], state: str,
             moved: Sequence[results.Json] = ()) -> Dict[int, str]:
    """Each measured commit's full A/B page (kbtools.report) against the
    commit measured before it, judged by the base's calibration as its
    step is, with its step's functions (moved: --where's differences),
    in PAGE-ab/ beside the series' page; {n: its address from that
    page}; none without matplotlib (said so) or on stdout."""
    if page == "-":
        return {}
    if not plots.available():
        print(f"kbench series: no A/B pages beside {page}: "
              f"{plots.install_hint()}", file=sys.stderr)
        return {}
    sub = os.path.splitext(os.path.basename(page))[0] + "-ab"
    where = os.path.join(os.path.dirname(page), sub)
    measured = t.measured()
    links = {}
    for before, p in zip(measured, measured[1:]):
        runs = [results.load(boots_dir(state, q.commit),
                             f"{q.n}: {q.commit[:12]}") for q in (before, p)]
        name = f"{p.n}-{p.commit[:12]}.html"
        title = (f"kbench series {st['range']}: commit {p.n} against "
                 f"{before.n}: {p.subject}")
        path = os.path.join(where, name)
        with cli.writing(path):
            os.makedirs(where, exist_ok=True)
            results.write_text(path, report.render(
                runs, title=title, cal=t.cal.rows,
                moved=[d for d in moved if d.get("n") == p.n]))
        links[p.n] = f"{sub}/{name}"
    return links


def write_outputs(args: argparse.Namespace, t: Table, st: Dict[str, Any],
                  state: str, moved: Sequence[results.Json] = ()) -> None:
    """The files asked for; moved: --where's differences (in the JSON
    as "where", in the summary and the pages)."""
    if args.json:
        path = os.path.join(args.json, "series.json")
        doc = series_table.to_json(t, st)
        if args.where:
            doc["where"] = list(moved)
        with cli.writing(path):
            os.makedirs(args.json, exist_ok=True)
            results.write_json(path, doc)
    if args.summary:
        with cli.writing(args.summary):
            results.write_text(args.summary,
                               series_table.summary(t, st, moved=moved))
    if args.report:
        links = ab_pages(args.report, t, st, state, moved)
        with cli.writing(args.report):
            results.write_text(args.report, series_table.page(
                t, st, links, report.where_html(moved)))
    if args.kcidb:
        try:
            doc = to_kcidb(st, state)
        except kcidb.ExportError as e:
            raise cli.Failure(f"--kcidb: {e}") from e
        with cli.writing(args.kcidb):
            results.write_json(args.kcidb, doc)


# ---- main ----------------------------------------------------------------------

def series(args: argparse.Namespace, prog: str) -> int:
    st, state = prepare(args)
    if args.where:
        check_where(st["targets"])
    try:
        with proc.locked(os.path.join(state, ".lock"), wait=False):
            return measure(args, st, state, prog)
    except BlockingIOError:
        raise cli.Error(f"a series is running in {state} already") from None


def lava_jobs(args: argparse.Namespace, st: Dict[str, Any]
              ) -> Optional[int]:
    """The series' --lava-jobs: this command line's, else the one it
    was started with; None: as many as the lab says."""
    if args.lava_jobs is not None and not st.get("lava"):
        raise cli.Error("--lava-jobs: the series does not go through a "
                        "LAVA lab (--lava)")
    if args.lava_jobs is not None:
        return int(args.lava_jobs)
    return (st.get("lava") or {}).get("lava-jobs")


def measure(args: argparse.Namespace, st: Dict[str, Any], state: str,
            prog: str) -> int:
    """The series built, booted and shown (its state held)."""
    s = Series(st, state, int(args.jobs or 0), prog)
    clock = proc.Clock()
    s.say(f"series {st['range']} of {st['tree']}: {len(st['commits'])} "
          f"commits; state: {state}")
    s.run(lava_jobs(args, st))
    cal = calibration.load(os.path.join(state, CALIBRATION))
    t = series_table.table(points(st, state), cal)
    sys.stdout.write(series_table.text(t, st))
    sys.stdout.flush()
    moved: List[results.Json] = []
    profiled = True
    if args.where:
        start = time.monotonic()
        moved, profiled = where_pass(t, state, prog, args.where_with)
        s.times["where"] = time.monotonic() - start
    if moved:
        sys.stdout.write(compare.where_section(moved))
    sys.stdout.write("\n" + series_table.summary(t, st, moved=moved))
    sys.stdout.flush()
    write_outputs(args, t, st, state, moved)
    where_s = f", where {s.times['where']:.0f} s" if args.where else ""
    s.say(f"{len(st['commits'])} commits in {clock.seconds()} s (boots "
          f"{s.times['boot']:.0f} s, builds {s.times['build']:.0f} s, of "
          f"which the boots waited {s.times['wait']:.0f} s{where_s})")
    bad = [p for p in t.points if p.status != "measured"]
    return 1 if bad or not profiled else 0


def main(argv: Sequence[str], prog: str = "kbench series") -> int:
    """kbench series: 0 every commit measured, 1 a commit did not build
    or boot (or --where could not profile one), 2 bad usage, 3 a failed setup (the base included), 130
    interrupted."""
    def body() -> int:
        args = parse_args(argv, prog)
        try:
            return series(args, prog)
        except (results.ResultError, ValueError) as e:
            raise cli.Failure(str(e), cli.EXIT_SETUP) from e
    return cli.orchestrate(prog, body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
