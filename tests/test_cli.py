# SPDX-License-Identifier: GPL-2.0
"""Tests of scripts/kbtools/cli.py: how every command line ends (a one-line
error and exit 2, a closed pipe ends quietly), and of the commands that use
it, run as a user runs them: through a pipe whose reader goes away."""
import contextlib
import importlib.util
import io
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from typing import Callable, List, Optional, Sequence, Tuple

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import cli, packages, results  # noqa: E402


def quiet_call(main: Callable[..., int], argv: Optional[List[str]] = None
               ) -> Tuple[int, str]:
    """(return value, stderr) of main(argv)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, err.getvalue()


class Command(unittest.TestCase):
    def test_error_kinds_are_one_line_and_2(self) -> None:
        @cli.command("t.py", errors=(results.ResultError,))
        def main(argv: Optional[List[str]] = None) -> int:
            raise results.ResultError("bad\nfile")

        rc, err = quiet_call(main)
        self.assertEqual(rc, 2)
        self.assertEqual(err, "t.py: bad\\nfile\n")

    def test_other_errors_propagate(self) -> None:
        @cli.command("t.py")
        def main(argv: Optional[List[str]] = None) -> int:
            raise KeyError("bug")

        with self.assertRaises(KeyError):
            main()

    def test_return_value_and_argv_pass_through(self) -> None:
        @cli.command("t.py")
        def main(argv: Optional[List[str]] = None) -> int:
            return len(argv or [])

        self.assertEqual(main(["a", "b", "c"]), 3)

    def test_broken_pipe_is_quiet_success(self) -> None:
        @cli.command("t.py")
        def main(argv: Optional[List[str]] = None) -> int:
            raise BrokenPipeError()

        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(quiet_call(main), (0, ""))

    def test_writing_and_reading_name_the_file(self) -> None:
        @cli.command("t.py")
        def main(argv: Optional[List[str]] = None) -> int:
            with cli.writing("/nonexistent/dir/out"):
                open("/nonexistent/dir/out", "w", encoding="utf-8")
            return 0

        rc, err = quiet_call(main)
        self.assertEqual(rc, 2)
        self.assertEqual(err, "t.py: cannot write /nonexistent/dir/out: "
                              "No such file or directory\n")
        with self.assertRaises(cli.Error) as e:
            with cli.reading("x"):
                raise PermissionError(13, "Permission denied")
        self.assertEqual(str(e.exception), "cannot read x: Permission denied")


class TaskEnding(unittest.TestCase):
    def test_a_task_ends_as_a_command_under_the_name_it_is_given(self) -> None:
        @cli.task(errors=(results.ResultError,))
        def main(argv: Sequence[str], prog: str) -> int:
            if argv:
                raise results.ResultError(f"bad {argv[0]}")
            raise BrokenPipeError()

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(main(["x"], "kbench t"), 2)
            self.assertEqual(main(["y"], "t.py"), 2)
        self.assertEqual(err.getvalue(), "kbench t: bad x\nt.py: bad y\n")
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(quiet_call(lambda a: main([], "t.py")), (0, ""))


class OutputPaths(unittest.TestCase):
    def test_a_path_that_is_no_regular_file_is_written_into(self) -> None:
        """--json /dev/null as root must leave /dev/null a device: a
        pipe stands for it here (written into, not replaced)."""
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "out")
            os.mkfifo(fifo)
            reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
            try:
                results.write_json(fifo, {"a": 1})
                out, _ = reader.communicate(timeout=30)
            finally:
                reader.kill()
                reader.wait()
            self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
            self.assertEqual(b'{\n "a": 1\n}\n', out)
            self.assertEqual(["out"], os.listdir(d))


class ClosedPipe(unittest.TestCase):
    """A command whose reader exits at once ends with 0 and says nothing
    (no traceback, no "Exception ignored" at exit)."""

    def run_into_closed_pipe(self, *cmd: str
                             ) -> "subprocess.CompletedProcess[str]":
        reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
        reader.wait()
        proc = subprocess.run([sys.executable] + list(cmd),
                              stdout=reader.stdin, stderr=subprocess.PIPE,
                              text=True, check=False)
        assert reader.stdin is not None
        reader.stdin.close()
        return proc

    def test_lava_job_to_a_closed_pipe(self) -> None:
        if importlib.util.find_spec("yaml") is None:
            self.skipTest("needs PyYAML: " + packages.module_missing(
                "yaml", "python3-yaml"))
        # Large enough that the write itself meets the closed pipe.
        proc = self.run_into_closed_pipe(
            os.path.join(TOP, "scripts", "lava_job.py"),
            "--kernel", "http://x/bzImage", "--rootfs", "http://x/r.ext4")
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))


if __name__ == "__main__":
    unittest.main()
