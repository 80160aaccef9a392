# SPDX-License-Identifier: GPL-2.0
"""kbench's front door: `kbench TASK [ARG]...` (the `kbench` script at the
clone's top), or `python3 -m kbtools TASK [ARG]...` with scripts/ on the
module path.

Every task is a kbtools module's main(argv, prog), called here; the
scripts named beside the tasks run the same mains under their own
names (`kbench TASK --help` shows a task's options).
"""

import importlib
import os
import sys
import textwrap
from typing import Callable, Dict, List, NamedTuple, Optional

from kbtools.output import one_line

Main = Callable[[List[str], str], int]


class Task(NamedTuple):
    summary: str
    # The main to call: "MODULE.FUNCTION" of kbtools, imported when the
    # task runs.
    main: str = ""
    # An older name of a job another task does: that task's words.
    alias_of: str = ""


TASKS: Dict[str, Task] = {
    "run": Task("run the collection here (kbtools.runner; run_all.sh "
                "hands over to it), in a guest with --kernel "
                "(kbtools.vm), or A/B of kernels with --vs-kernel, boots "
                "interleaved, with verdicts (kbtools.ab)",
                main="run.main"),
    "ab": Task("scripts/vm_ab.sh", main="ab.main",
               alias_of="run --kernel BASE --vs-kernel CAND"),
    "bisect": Task("find the commit that made a row slower "
                   "(scripts/bisect.sh)", main="bisect_run.main"),
    "validate": Task("did my patch make it slower: two revisions of a "
                     "kernel tree built and compared in exact mode "
                     "(scripts/validate.py)", main="validate.main"),
    "series": Task("a patch series measured exactly, commit by commit: "
                   "the step and running total of each row in "
                   "instructions", main="series.main"),
    "bisect-demo": Task("the end-to-end check of bisect: two series of "
                        "commits on the test kernel's tree, each bisected "
                        "(scripts/bisect_demo.sh)", main="bisect_demo.main"),
    "where": Task("which functions a row's instructions went to, one "
                  "kernel against another, in exact mode (ftrace "
                  "function_graph under icount, or kbench's QEMU plugin "
                  "with --plugin)", main="where.main"),
    "compare": Task("verdicts per row of candidate runs against a base "
                    "(scripts/compare.py)", main="compare.main"),
    "report": Task("an HTML report of runs, with plots "
                   "(scripts/report.py)", main="report.main"),
    "kcidb": Task("export runs as KCIDB I/O (scripts/kcidb.py)",
                  main="kcidb.main"),
    "ktap": Task("check a KTAP stream strictly (scripts/ktap_check.py)",
                 main="ktap.main"),
    "vm": Task("scripts/vm_run.sh", main="vm.main",
               alias_of="run --kernel IMAGE"),
    "ci-vm": Task("boot Debian kernels other than the host's, check "
                  "everything that runs there (scripts/ci_vm.sh)",
                  main="ci_vm.main"),
    "check": Task("the project's own tests, a table of steps (make check, "
                  "tests/run.sh)", main="check.main"),
}

GROUPS: Dict[str, Dict[str, Task]] = {
    "kernel": {
        "build": Task("build (or find cached) the patched and unpatched "
                      "test kernels, or one commit of a tree "
                      "(testkernel/build.sh)", main="kernel.build_main"),
        "run": Task("boot both test kernels, run taskstats and memcg_ks, "
                    "compare (testkernel/run.sh)", main="testkernel.run_main"),
        "summary": Task("the seeds' comparisons from a test-kernel run "
                        "(testkernel/summary.py)",
                        main="testkernel.summary_main"),
        "trouble": Task("the kernel's own trouble lines of a guest console "
                        "(testkernel/kernel_trouble.sh)",
                        main="testkernel.trouble_main"),
        "source": Task("provision a kernel source tree's tools/ and "
                       "scripts/ from Debian (scripts/provision_ksrc.sh)",
                       main="ksrc.main"),
    },
    "lava": {
        "job": Task("write the LAVA job of a run (scripts/lava_job.py)",
                    main="lava_job.main"),
        "local": Task("a throwaway LAVA server and worker on this machine "
                      "(setup, start, run, check, stop, destroy; "
                      "scripts/lava_local.sh)", main="lava_local.main"),
        "cases": Task("a KTAP stream as LAVA test cases, or a finished "
                      "job checked (python3 -m kbtools.lava)",
                      main="lava.main"),
    },
    "bench": {
        "verdict-ab": Task("validate run_all.sh's A/B verdicts: A/A "
                           "trials, seccomp filters of known cost "
                           "(bench/verdict_ab.sh)", main="verdict_ab.main"),
        "syscall-vs-perf": Task("getppid beside 'perf bench syscall basic' "
                                "(bench/syscall_vs_perf.sh)",
                                main="bench.syscall_vs_perf_main"),
        "taskstats-seed": Task("the seed's table of every taskstats method "
                               "(bench/taskstats_seed.sh)",
                               main="bench.taskstats_seed_main"),
        "memcg-stat-read": Task("per-read, per-cat and cat-process cost of "
                                "memory.stat (bench/memcg_stat_read.sh)",
                                main="bench.memcg_stat_read_main"),
        "pmqtest-vs-rttests": Task("our pmqtest beside rt-tests' "
                                   "(bench/pmqtest_vs_rttests.sh)",
                                   main="bench.pmqtest_vs_rttests_main"),
        "fork-vs-size": Task("fork's cost against the parent's size "
                             "(bench/fork_vs_size.sh)",
                             main="bench.fork_vs_size_main"),
        "proc-create-vs-book": Task("proc_create beside the book's table "
                                    "(bench/proc_create_vs_book.sh)",
                                    main="bench.proc_create_vs_book_main"),
    },
    "fuzz": {
        "run": Task("each libFuzzer harness, ASan and MSan builds, for a "
                    "time, or its committed seeds replayed (fuzz/run.sh)",
                    main="fuzz.run_main"),
        "properties": Task("the Python readers' property tests with fresh "
                           "random examples (fuzz/properties.sh)",
                           main="fuzz.properties_main"),
    },
    "corpus": {
        "record": Task("record fuzz seeds from real kernels "
                       "(fuzz/record_corpus.sh)", main="corpus.main"),
    },
    "debian": {
        "apt": Task("apt-get or apt-cache on another architecture's "
                    "package indices, kept apart from the host's "
                    "(scripts/foreign_apt.sh)", main="debian.apt_main"),
        "cross-libs": Task("unpack another architecture's libcap and "
                           "libnuma for a cross build "
                           "(scripts/cross_libs.sh)",
                           main="debian.cross_libs_main"),
        "arm64-rootfs": Task("the arm64 guest's root filesystem, a cpio "
                             "of Debian packages (scripts/arm64_rootfs.sh)",
                             main="debian.arm64_rootfs_main"),
    },
    "docs": {
        "screenshot": Task("the picture of an A/B report in docs/reports.md "
                           "(scripts/make_docs_screenshot.sh)",
                           main="screenshot.main"),
    },
}

GROUP_SUMMARY = {
    "kernel": "the test kernel: build, run, summary; kernel sources",
    "lava": "LAVA: the job, a local lab, the results as test cases",
    "bench": "the bench scripts: a program beside its peer, ratios",
    "fuzz": "fuzzing: the libFuzzer harnesses, the property tests",
    "corpus": "the fuzz harnesses' seeds",
    "debian": "Debian packages of other architectures",
    "docs": "the documentation's pictures",
}


def entry(indent: int, name: str, width: int, text: str) -> List[str]:
    """A task's line(s): its name, its summary wrapped to 79 columns (on
    lines of its own when the name is wider than its column)."""
    column = " " * (indent + width)
    head = " " * indent + f"{name:<{width}}"
    alone = [head.rstrip()] if len(name) >= width else []
    return alone + textwrap.wrap(text, 79,
                                 initial_indent=column if alone else head,
                                 subsequent_indent=column,
                                 break_on_hyphens=False)


def help_text(prog: str) -> str:
    lines = [f"Usage: {prog} TASK [ARG]...",
             "kbench: kernel interface cost selftests, and the host tools "
             "that build",
             "kernels, boot guests, compare, bisect and report.", "",
             "Tasks:"]
    for name, task in TASKS.items():
        if not task.alias_of:
            lines += entry(2, name, 15, task.summary)
    for group, tasks in GROUPS.items():
        lines += entry(2, group, 15, GROUP_SUMMARY[group] + ":")
        for name, task in tasks.items():
            lines += entry(4, name, 13, task.summary)
    lines += ["", "Aliases (an older name of a job of run's, which is the "
              "name that stays):"]
    for name, task in TASKS.items():
        if task.alias_of:
            lines += entry(2, name, 15, f"{prog} {task.alias_of} "
                           f"({task.summary})")
    lines += ["",
              f"'{prog} TASK --help' tells a task's options. The script "
              "named beside a task",
              "runs the same task under its own name.",
              "",
              "Exit status: the task's (0 success; 1 a failure; 2 bad "
              "usage; 3 a missing",
              "host package or download; 4 skipped; 124 a timeout; 130 "
              "interrupted)."]
    return "\n".join(lines) + "\n"


def group_help(prog: str, group: str) -> str:
    lines = [f"Usage: {prog} {group} TASK [ARG]...",
             f"{GROUP_SUMMARY[group]}.", "", "Tasks:"]
    for name, task in GROUPS[group].items():
        lines += entry(2, name, 15, task.summary)
    return "\n".join(lines) + "\n"


def usage_error(prog: str, message: str) -> int:
    print(f"{prog}: {one_line(message)}", file=sys.stderr)
    print(f"Try '{prog} --help' for more information.", file=sys.stderr)
    return 2


def run_task(task: Task, argv: List[str], prog: str) -> int:
    module, function = task.main.rsplit(".", 1)
    main: Main = getattr(importlib.import_module(f"kbtools.{module}"),
                         function)
    return main(argv, prog)


def main(argv: Optional[List[str]] = None, prog: str = "kbench") -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        return usage_error(prog, "no task given")
    name, rest = argv[0], argv[1:]
    if name in ("-h", "--help", "help"):
        sys.stdout.write(help_text(prog))
        return 0
    # A wrapper script (testkernel/build.sh, scripts/vm_run.sh, ...)
    # keeps its own name in messages and help: it says so in KBENCH_PROG.
    wrapper = os.environ.pop("KBENCH_PROG", "")
    if name in TASKS:
        return run_task(TASKS[name], rest, wrapper or f"{prog} {name}")
    if name in GROUPS:
        if not rest:
            return usage_error(f"{prog} {name}", "no task given")
        if rest[0] in ("-h", "--help", "help"):
            sys.stdout.write(group_help(prog, name))
            return 0
        task = GROUPS[name].get(rest[0])
        if task is None:
            return usage_error(f"{prog} {name}",
                               f"unknown task '{rest[0]}'")
        return run_task(task, rest[1:], wrapper or f"{prog} {name} {rest[0]}")
    return usage_error(prog, f"unknown task '{name}'")


if __name__ == "__main__":
    sys.exit(main())
