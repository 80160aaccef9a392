# SPDX-License-Identifier: GPL-2.0
"""The unit tests' own guards: tests/needs.py (a test that runs a tool
says so and skips without it; a skip for want of an installed package
fails unit_python) and tests/bare_path.py (the PATH of a bare Debian
root that unit_python_bare_path runs the tests with), on made-up
machines: PATH, dpkg and the bin directories are the test's."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

import bare_path
import needs
from kbtools import packages

LOG = """\
test_a (m.C.test_a) ... ok
test_b (m.C.test_b) ... skipped 'needs git (git), flock (util-linux)'
test_c (m.C.test_c) ... skipped 'no such file in the tree'
test_d (m.C.test_d) ... skipped "can't draw: apt-get install python3-matplotlib"
test_e (m.C.test_e) ... skipped 'needs PyYAML (python3-yaml)'
"""


class Needs(unittest.TestCase):
    def test_missing_names_each_tool_and_its_package(self) -> None:
        with mock.patch.object(shutil, "which",
                               side_effect=lambda c: None if c in (
                                   "git", "flock", "nothing") else "/x"):
            self.assertEqual("git (git), flock (util-linux), nothing",
                             needs.missing("git", "sh", "flock", "nothing"))
            self.assertEqual("", needs.missing("sh"))

    def test_commands_skips_saying_what(self) -> None:
        with mock.patch.object(shutil, "which", return_value=None):
            @needs.commands("git")
            class T(unittest.TestCase):
                def test(self) -> None:
                    pass
        result = unittest.TestResult()
        T("test").run(result)
        self.assertEqual([("needs git (git)")],
                         [reason for _, reason in result.skipped])

    def test_skips_naming_an_installed_package(self) -> None:
        found = needs.installed_in_skips(
            LOG.splitlines(), {"git", "python3-matplotlib", "file"})
        self.assertEqual(2, len(found))
        self.assertTrue(found[0].endswith("[installed: git]"), found)
        self.assertIn("test_d", found[1])
        self.assertEqual([], needs.installed_in_skips(LOG.splitlines(),
                                                      {"mypy"}))

    def test_the_command_fails_on_them(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write(LOG)
            f.flush()
            with mock.patch.object(packages.System, "dpkg_status",
                                   return_value={"python3-yaml": "installed",
                                                 "git": "config-files"}), \
                    mock.patch.object(shutil, "which",
                                      return_value="/usr/bin/dpkg-query"), \
                    mock.patch("sys.stdout"):
                self.assertEqual(1, needs.main([f.name]))
            with mock.patch.object(packages.System, "dpkg_status",
                                   return_value={}), \
                    mock.patch.object(shutil, "which",
                                      return_value="/usr/bin/dpkg-query"):
                self.assertEqual(0, needs.main([f.name]))


class BarePath(unittest.TestCase):
    """A machine whose /usr/bin has a required package's command, one of
    packages.txt's (util-linux, required too), a probed name of a
    required package (perl of perl-base), an alternative link (awk) and
    a command of a package that is not required (cpio)."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.bin = os.path.join(tmp.name, "usr", "bin")
        os.makedirs(self.bin)
        for name in ("cat", "flock", "perl", "mawk", "cpio"):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(path, 0o755)
        os.symlink(os.path.join(self.bin, "mawk"),
                   os.path.join(self.bin, "awk"))
        files = {"coreutils": "cat", "util-linux": "flock",
                 "perl-base": "perl", "mawk": "mawk", "cpio": "cpio"}
        status = "".join(f"{'optional' if p == 'cpio' else 'required'} "
                         f"installed {p}\n" for p in files)

        def dpkg(*args: str) -> str:
            if args[0] == "-W":
                return status
            return "".join(os.path.join(self.bin, files[p]) + "\n"
                           for p in args[1:])
        dpkg_patch = mock.patch.object(bare_path, "dpkg", side_effect=dpkg)
        dirs_patch = mock.patch.object(bare_path, "BIN_DIRS", (self.bin,))
        dpkg_patch.start()
        self.addCleanup(dpkg_patch.stop)
        dirs_patch.start()
        self.addCleanup(dirs_patch.stop)

    def test_a_bare_roots_commands_and_nothing_of_the_list(self) -> None:
        found = bare_path.bare_commands(packages.load())
        self.assertEqual({"awk": os.path.join(self.bin, "mawk"),
                          "cat": os.path.join(self.bin, "cat"),
                          "mawk": os.path.join(self.bin, "mawk")}, found)
