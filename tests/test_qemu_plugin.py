# SPDX-License-Identifier: GPL-2.0
"""kbtools.qemu_plugin: the host's apt sources turned into deb-src (deb822
and one-line files), the private apt options, the header fetched once per
QEMU version (apt-get and tar mocked), a missing deb-src reach said with
its reason, and the plugin built with the warnings as errors (gcc
mocked)."""

import os
import sys
import tempfile
import unittest
from typing import Callable, Dict, List, Optional, Sequence
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))

from kbtools import cli, proc, qemu_plugin  # noqa: E402

DEB822 = """Types: deb
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://mirror.example/debian
Suites: bookworm
Components: main
"""
ONE_LINE = """# a comment
deb http://mirror.example/debian bookworm main
deb [arch=amd64] http://mirror.example/security bookworm-security main
deb-src http://mirror.example/debian bookworm main
"""
VERSION = "1:7.2+dfsg-7+deb12u18"


class Files(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def file(self, name: str, text: str) -> str:
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path


class Sources(Files):
    def test_deb822_stanzas_become_deb_src(self) -> None:
        [(name, text)] = qemu_plugin.src_sources(
            [self.file("debian.sources", DEB822)])
        self.assertEqual(name, "debian-src.sources")
        self.assertEqual(text.count("Types: deb-src"), 1)
        self.assertIn("Suites: bookworm bookworm-updates", text)
        self.assertIn("Signed-By: /usr/share/keyrings/", text)

    def test_one_line_deb_lines_become_deb_src(self) -> None:
        [(name, text)] = qemu_plugin.src_sources(
            [self.file("mirror.list", ONE_LINE)])
        self.assertEqual(name, "mirror-src.list")
        self.assertEqual(text.splitlines(), [
            "deb-src http://mirror.example/debian bookworm main",
            "deb-src [arch=amd64] http://mirror.example/security "
            "bookworm-security main"])

    def test_no_deb_entry_is_a_setup_failure_with_its_reason(self) -> None:
        only_src = self.file("src.list", "deb-src http://m/ bookworm main\n")
        with self.assertRaises(cli.Failure) as e:
            qemu_plugin.write_sources(os.path.join(self.dir.name, "apt"),
                                      [only_src])
        self.assertEqual(e.exception.status, cli.EXIT_SETUP)
        self.assertIn("no deb entry in the host's apt sources",
                      str(e.exception))

    def test_private_state_and_no_host_lists(self) -> None:
        opts = qemu_plugin.apt_options("/c/apt")
        self.assertIn("Dir::Etc::sourcelist=/dev/null", opts)
        self.assertIn("Dir::Etc::sourceparts=/c/apt/sources.list.d", opts)
        self.assertIn("Dir::State=/c/apt/state", opts)


class Version(unittest.TestCase):
    def test_the_source_version_of_the_installed_qemu(self) -> None:
        with mock.patch.object(proc, "capture",
                               return_value=VERSION + "\n") as cap:
            self.assertEqual(qemu_plugin.source_version(), VERSION)
        self.assertIn("${source:Version}", " ".join(cap.call_args[0][0]))

    def test_qemu_not_installed(self) -> None:
        with mock.patch.object(proc, "capture", side_effect=proc.Failed(
                ["dpkg-query"], 1, "no packages found")):
            with self.assertRaises(cli.Failure) as e:
                qemu_plugin.source_version()
        self.assertEqual(e.exception.status, cli.EXIT_SETUP)


class Fetch(Files):
    def setUp(self) -> None:
        super().setUp()
        self.runs: List[List[str]] = []
        self.parts: Dict[str, str] = {}
        env = mock.patch.dict(os.environ, {
            "KBENCH_QEMU_PLUGIN_CACHE": os.path.join(self.dir.name, "c")})
        env.start()
        self.addCleanup(env.stop)
        self.sources = [self.file("debian.sources", DEB822)]
        for target, value in (("host_source_files", self.sources),
                              ("source_version", VERSION), ("msg", None)):
            p = mock.patch.object(qemu_plugin, target,
                                  return_value=value)
            p.start()
            self.addCleanup(p.stop)

    def fake_run(self, fail: Optional[str] = None
                 ) -> Callable[..., int]:
        def run(cmd: Sequence[str], **kw: object) -> int:
            self.runs.append(list(cmd))
            parts = next(w.split("=", 1)[1] for w in cmd
                         if w.startswith("Dir::Etc::sourceparts="))
            self.parts = {n: open(os.path.join(parts, n),
                                  encoding="utf-8").read()
                          for n in os.listdir(parts)}
            if fail and fail in cmd:
                return 100
            if "source" in cmd:
                open(os.path.join(str(kw["cwd"]),
                                  "qemu_7.2+dfsg.orig.tar.xz"), "w").close()
            return 0
        return run

    @staticmethod
    def fake_tar(cmd: Sequence[str], **kw: object) -> str:
        dest = cmd[cmd.index("-C") + 1]
        inc = os.path.join(dest, "qemu-7.2.0", "include", "qemu")
        os.makedirs(inc)
        open(os.path.join(inc, "qemu-plugin.h"), "w").close()
        return ""

    def test_fetched_once_then_cached(self) -> None:
        with mock.patch.object(proc, "run", self.fake_run()), \
                mock.patch.object(proc, "capture", self.fake_tar):
            inc = qemu_plugin.header_dir("t")
            again = qemu_plugin.header_dir("t")
        self.assertEqual(inc, again)
        self.assertTrue(os.path.exists(os.path.join(inc, "qemu-plugin.h")))
        self.assertIn("1_7.2+dfsg-7+deb12u18", inc)
        self.assertEqual(len(self.runs), 2)
        self.assertIn("qemu=" + VERSION, self.runs[1])
        self.assertIn("--download-only", self.runs[1])
        self.assertIn("Types: deb-src", self.parts["debian-src.sources"])
        # Only the header stays in the cache.
        left = os.listdir(os.path.dirname(inc))
        self.assertNotIn("src", left)
        self.assertNotIn("apt", left)

    def test_no_deb_src_reach_says_why(self) -> None:
        with mock.patch.object(proc, "run", self.fake_run("source")):
            with self.assertRaises(cli.Failure) as e:
                qemu_plugin.header_dir("t")
        self.assertEqual(e.exception.status, cli.EXIT_SETUP)
        self.assertIn("through the host's apt sources as deb-src",
                      str(e.exception))

    def test_built_with_warnings_as_errors_and_cached(self) -> None:
        with mock.patch.object(proc, "run", self.fake_run()), \
                mock.patch.object(proc, "capture", self.fake_tar):
            qemu_plugin.header_dir("t")
        gcc: List[List[str]] = []

        def run(cmd: Sequence[str], **kw: object) -> int:
            gcc.append(list(cmd))
            open(cmd[cmd.index("-o") + 1], "w").close()
            return 0
        with mock.patch.object(proc, "run", run):
            so = qemu_plugin.build("t")
            self.assertEqual(qemu_plugin.build("t"), so)
        self.assertEqual(len(gcc), 1)
        for flag in ("-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"):
            self.assertIn(flag, gcc[0])
        self.assertTrue(gcc[0][-1].endswith("scripts/plugin/where_count.c"))
        self.assertTrue(so.endswith(".so"))

    def test_a_failed_build_fails(self) -> None:
        with mock.patch.object(proc, "run", self.fake_run()), \
                mock.patch.object(proc, "capture", self.fake_tar):
            qemu_plugin.header_dir("t")
        with mock.patch.object(proc, "run", return_value=1):
            with self.assertRaises(cli.Failure) as e:
                qemu_plugin.build("t")
        self.assertIn("cannot build the QEMU plugin", str(e.exception))


if __name__ == "__main__":
    unittest.main()
