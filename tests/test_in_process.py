# SPDX-License-Identifier: GPL-2.0
"""The tasks that run another task's work call its functions, in this
process, with typed options (no script of the repository is started):
the test kernel's boots (kbtools.vm) and A/B (kbtools.ab), validate's
A/B; what ends a boot (bad options, a failed setup) is its exit status,
said with the VM runner's name, and the run goes on. The bisection's
boots are test_bisect's, ci-vm's test_vm's."""

import argparse
import contextlib
import io
import os
import sys
import tempfile
import unittest
from typing import Any, List, Optional
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import ab, bisect_run, cli, collection, guest  # noqa: E402
from kbtools import images, kernel, lava, lava_local, paths  # noqa: E402
from kbtools import testkernel, validate, vm  # noqa: E402
from support import quiet  # noqa: E402
import needs  # noqa: E402


def run_args(out: str, *argv: str) -> argparse.Namespace:
    return testkernel.parse_run_args("run.sh", ["-o", out, *argv])


class TestKernel(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.out = tmp.name
        self.run_ = testkernel.Run("run.sh", run_args(self.out, "-N",
                                                      "5,10"))
        self.run_.image = {"patched": "/img/p", "unpatched": "/img/u"}
        self.seen: List[Any] = []

    def test_a_boot(self) -> None:
        def run_guest(opts: vm.Options, prog: str,
                      sink: guest.Sink) -> vm.GuestRun:
            self.seen.append((opts, prog))
            sink.write(b"TAP version 13\n")
            print("vm_run.sh: booting", file=sys.stderr)
            return vm.GuestRun(0, (1.0, 2.0))
        with mock.patch.object(vm, "run_guest", run_guest):
            ok, out, err = quiet(self.run_.boot, "patched", "patched-10", 10,
                                 1800, ("taskstats",))
        self.assertTrue(ok)
        opts, prog = self.seen[0]
        self.assertEqual(("vm_run.sh", "/img/p", "tcg", ["taskstats"], 1800),
                         (prog, opts.kernel, opts.machine.accel,
                          opts.run.tests, opts.run.program_timeout))
        self.assertEqual({"KSELFTEST_TASKSTATS_ARGS": "--processes=10"},
                         opts.run.program_args)
        d = os.path.join(self.out, "patched-10")
        self.assertEqual(d, opts.run.json_dir)
        self.assertEqual("TAP version 13\n", out)
        for name, text in (("ktap.txt", "TAP version 13\n"),
                           ("vm-run.err", "vm_run.sh: booting\n")):
            with open(os.path.join(d, name)) as f:
                self.assertEqual(text, f.read())
        self.assertIn("vm_run.sh: booting", err)

    def test_a_boot_that_cannot_start_is_its_status(self) -> None:
        for e, status in ((cli.Failure("missing host packages: vng", 3), 3),
                          (guest.Ended("/img/p panicked at boot", 125), 125),
                          (cli.Error("invalid --memory"), 2)):
            def run_guest(opts: vm.Options, prog: str,
                          sink: guest.Sink) -> vm.GuestRun:
                raise e
            with mock.patch.object(vm, "run_guest", run_guest):
                ok, _, err = quiet(self.run_.boot, "patched", "p", 5, 900,
                                   ("taskstats",))
            self.assertFalse(ok)
            self.assertIn(f"vm_run.sh: {e}", err)
            self.assertIn(f"exit {status} after", err)
            with open(os.path.join(self.out, "p", "vm-run.err")) as f:
                self.assertIn(f"vm_run.sh: {e}\n", f.read())

    def test_the_ab(self) -> None:
        def run_ab(opts: ab.Options, prog: str) -> int:
            self.seen.append((opts, prog))
            print("TAP version 13")
            print("run_all.sh: booting", file=sys.stderr)
            os.makedirs(os.path.join(opts.json_dir, "base"))
            return 0
        with mock.patch.object(ab, "run_ab", run_ab), \
                mock.patch.object(images, "check"):
            ok, out, err = quiet(self.run_.ab, 5)
        self.assertTrue(ok, err)
        opts, prog = self.seen[0]
        self.assertEqual(("run_all.sh", "/img/u", ["/img/p"], 4,
                          ["taskstats", "memcg_ks"]),
                         (prog, opts.base, opts.candidates, opts.repeat,
                          opts.tests))
        self.assertEqual({"KSELFTEST_TASKSTATS_ARGS": "--processes=5"},
                         opts.program_args)
        self.assertIn("--timeout", opts.vm_args)
        self.assertEqual("TAP version 13\n", out)
        with open(os.path.join(self.out, "ktap.txt")) as f:
            self.assertEqual("TAP version 13\n", f.read())
        with open(os.path.join(self.out, "vm-run.err")) as f:
            # The design's words on 4 boots, then the boots'.
            self.assertRegex(f.read(), r"(?s)^run_all.sh: design: .*"
                             r"run_all.sh: booting\n$")
        # The base side's results are the unpatched kernel's.
        self.assertTrue(os.path.isdir(os.path.join(self.out, "unpatched")))


class Collection(unittest.TestCase):
    """kbtools.collection lists what run_all.sh lists."""

    @needs.commands("make")
    def test_tests_and_programs(self) -> None:
        from test_design import collection_tests
        self.assertEqual(collection_tests(), collection.tests())
        self.assertEqual(["syscall_overhead:syscall_overhead",
                          "taskstats:taskstats"],
                         collection.programs(["syscall_overhead",
                                              "taskstats"]))
        with self.assertRaisesRegex(cli.Error, "unknown test 'x'"):
            collection.check_tests(["taskstats", "x"])
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(paths, "TOP", d):
            os.makedirs(os.path.join(d, "empty"))
            with open(os.path.join(d, "empty", "Makefile"), "w") as f:
                f.write("emit_tests:\n\t@true\n")
            with self.assertRaisesRegex(cli.Failure, "empty lists no test"):
                collection.programs(["empty"])
            with self.assertRaisesRegex(cli.Failure, "cannot list the "
                                        "programs of gone"):
                collection.programs(["gone"])


class LavaLocal(unittest.TestCase):
    """The local lab writes its job with kbtools.lava_job and checks the
    job's results with kbtools.lava, in this process."""

    def test_the_job_written_and_checked(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lab = lava_local.Lab("lava_local.sh", d)
            lab.private_state()
            os.makedirs(lab.srv)
            open(os.path.join(lab.srv, "rootfs.cpio"), "w").close()
            kernel = os.path.join(d, "bzImage")
            open(kernel, "w").close()
            checked: List[Any] = []

            def api(path: str, data: Optional[bytes] = None) -> bytes:
                return b'{"job_ids": [7]}' if path == "jobs/" else b"{}"

            def check_job(tests: str, log: str, job: Optional[str],
                          prog: str) -> int:
                with open(job or "") as f:
                    checked.append((os.path.basename(tests),
                                    os.path.basename(log), f.read(), prog))
                return 1
            args = argparse.Namespace(keep_rootfs=True, kernel="k")
            with mock.patch.object(images, "resolve", return_value=
                                   images.Image(kernel, kernel, "k")), \
                    mock.patch.object(lab, "api", api), \
                    mock.patch.object(lab, "wait_job", return_value={
                        "id": "7", "health": "Complete"}), \
                    mock.patch.object(lava, "check_job", check_job):
                with self.assertRaisesRegex(cli.Failure, "differ from its "
                                            "KTAP"):
                    quiet(lab.run_job, args, ["-t", "syscall_overhead",
                                              "--repeat", "2"])
        tests, log, job, prog = checked[0]
        self.assertEqual(("tests.json", "log.yaml", "kbtools.lava"),
                         (tests, log, prog))
        self.assertIn("file:///srv/kbench/vmlinuz", job)
        self.assertIn("lava_run.sh -t syscall_overhead --repeat 2", job)


class Tree:
    path = "/tree"

    def rev(self, name: str, what: str) -> str:
        return name * 40

    def subject(self, rev: str) -> str:
        return "subject"


# -t is checked against the collection (make list) and a row its
# program names is passed on (built, --list).
@needs.commands("make", "gcc")
class Validate(unittest.TestCase):
    def test_the_ab_it_runs(self) -> None:
        o = self.ab_of()
        self.assertEqual(("/img/a", ["/img/b"], True, ["syscall_overhead"]),
                         (o.base, o.candidates, o.icount, o.tests))
        self.assertEqual({"KSELFTEST_SYSCALL_OVERHEAD_ARGS": "-t getppid"},
                         o.program_args)
        self.assertFalse(o.where)

    def test_where_goes_to_the_ab(self) -> None:
        """--where is the A/B's (kbtools.ab's where pass, as
        test_vm.Where shows it)."""
        self.assertTrue(self.ab_of("--where").where)
        self.assertIsNone(self.ab_of("--where").where_with)
        for how in ("plugin", "ftrace"):
            o = self.ab_of("--where", "--where-with", how)
            self.assertEqual((True, how), (o.where, o.where_with))

    def test_where_with_is_checked_before_a_build(self) -> None:
        for argv, want in ((["--where-with", "ftrace"],
                            "--where-with needs --where"),
                           (["--where", "--where-with", "perf"],
                            "invalid choice: 'perf'")):
            err = io.StringIO()
            with self.subTest(argv=argv), contextlib.redirect_stderr(err), \
                    self.assertRaises(SystemExit) as e:
                validate.parse_args(["--tree", "/tree", "--base", "a",
                                     "--candidate", "b", *argv], "v")
            self.assertEqual(2, e.exception.code)
            self.assertIn(want, err.getvalue())

    def ab_of(self, *extra: str) -> ab.Options:
        """The A/B validate runs, the builds and the A/B mocked."""
        seen: List[ab.Options] = []

        def build(req: kernel.CommitBuild, prog: str) -> kernel.CommitImage:
            return kernel.CommitImage(f"/img/{req.rev[0]}", "", req.rev)

        def run_ab(opts: ab.Options, prog: str) -> int:
            seen.append(opts)
            return 1
        args = validate.parse_args(["--tree", "/tree", "--base", "a",
                                    "--candidate", "b", "-t",
                                    "syscall_overhead:getppid", *extra], "v")
        with mock.patch.object(bisect_run, "checked_tree",
                               return_value=Tree()), \
                mock.patch.object(kernel, "build_commit", build), \
                mock.patch.object(ab, "run_ab", run_ab), \
                mock.patch.object(images, "check"), \
                contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(1, validate.validate(args, "v"))
        o: Optional[ab.Options] = seen[0] if seen else None
        assert o is not None
        return o


if __name__ == "__main__":
    unittest.main()
