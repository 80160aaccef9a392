# SPDX-License-Identifier: GPL-2.0
"""Tests of packages.txt and its readers: scripts/kbtools/packages.py (the
list, the set-up in every environment with the machine faked, the system
calls with subprocess mocked, the generated parts of README.md and
docs/), scripts/setup.sh (the bash bootstrap of a bare root, with apt and
dpkg as PATH stubs) and the package names of tests/run.sh's need lines."""

import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import (Dict, Iterable, List, Optional, Sequence, Set,
                    Tuple)
from unittest import mock

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import packages  # noqa: E402
from support import present  # noqa: E402

SMALL = """\
# a comment
purpose base   what every use needs
purpose harness the kernel's harness
purpose extra  more
use run_all.sh base harness
use check      base harness extra
package base    gcc-x       gcc make
package base    libfoo-dev  /nonexistent/foo.h
package harness linux-src   /usr/src/linux.tar.xz
package extra   lint        lint
"""


class DebianPythonFirst(unittest.TestCase):
    """make check's python3 is Debian's (scripts/lib.bash's
    use_debian_python, kbench check's): a link to it first in PATH when
    PATH's is another and dpkg has python3 installed; otherwise nothing
    changes. A made-up Debian python3 and shim here."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.debian = os.path.join(tmp.name, "usr-bin", "python3")
        shim = os.path.join(tmp.name, "shims", "python3")
        for f in (self.debian, shim):
            os.makedirs(os.path.dirname(f))
            with open(f, "w") as out:
                out.write("#!/bin/sh\n")
            os.chmod(f, 0o755)
        self.links = os.path.join(tmp.name, "links")

    def first(self, path: str, have: Iterable[str] = ("python3",)
              ) -> "tuple[str, str]":
        with mock.patch.dict(os.environ, {"PATH": path}):
            said = packages.debian_python_first(
                self.links, Machine(have=have), self.debian)
            return said, os.environ["PATH"]

    def test_another_python3_in_path(self) -> None:
        path = os.path.join(self.tmp, "shims")
        said, now = self.first(path)
        self.assertEqual(f"{self.links}:{path}", now)
        self.assertEqual(os.path.realpath(self.debian), os.path.realpath(
            os.path.join(self.links, "python3")))
        self.assertIn("the tools run with Debian's", said)

    def test_debian_python3_in_path(self) -> None:
        path = os.path.dirname(self.debian)
        self.assertEqual(("", path), self.first(path))

    def test_python3_not_installed_by_dpkg(self) -> None:
        path = os.path.join(self.tmp, "shims")
        self.assertEqual(("", path), self.first(path, have=()))
        self.assertFalse(os.path.exists(self.links))


class Machine(packages.BareRoot):
    """A machine for the set-up: a bare root unless told otherwise; apt-get
    calls are recorded and may fail."""

    def __init__(self, have: Iterable[str] = (), euid: int = 0,
                 ids: Iterable[str] = ("debian",),
                 commands: Optional[Iterable[str]] = None,
                 files: Iterable[str] = (), knows: bool = True,
                 rcs: Optional[Dict[str, List[int]]] = None,
                 partial: Iterable[str] = (), half: Iterable[str] = (),
                 unknown: Iterable[str] = ()) -> None:
        super().__init__()
        self.have = set(have)
        self._euid = euid
        self.ids = set(ids)
        self.commands = None if commands is None else set(commands)
        self.files = set(files)
        self.knows = knows
        self.rcs = dict(rcs or {})
        self.partial = set(partial)
        self.half = set(half)
        self.unknown = set(unknown)
        self.calls: List[List[str]] = []

    def euid(self) -> int:
        return self._euid

    def which(self, command: str) -> Optional[str]:
        if self.commands is None or command in self.commands:
            return f"/usr/bin/{command}"
        return None

    def exists(self, pattern: str) -> bool:
        return pattern in self.files

    def os_ids(self) -> Set[str]:
        return self.ids

    def dpkg_status(self, names: Sequence[str]) -> Dict[str, str]:
        status = super().dpkg_status(names)
        status.update({n: "half-configured" for n in names if n in self.half})
        return status

    def apt_candidates(self, names: Sequence[str]) -> Set[str]:
        return set(names) - self.unknown if self.knows else set()

    def apt_get(self, args: Sequence[str]) -> int:
        self.calls.append(list(args))
        kind = "update" if "update" in args else "install"
        rcs = self.rcs.get(kind, [0])
        rc = rcs.pop(0) if len(rcs) > 1 else rcs[0]
        if kind == "update" and rc == 0:
            self.knows = True
        if kind == "install":
            if rc == 0:
                super().apt_get(args)
            self.have |= self.partial
        return rc


def run_setup(machine: Machine, use: str = "run_all.sh",
              no_install: bool = False,
              env: Optional[Dict[str, str]] = None,
              plist: Optional[packages.PackageList] = None) -> Tuple[int, str]:
    err = io.StringIO()
    rc = packages.set_up(use, no_install, plist or packages.parse(SMALL),
                         machine, err, env or {})
    return rc, err.getvalue()


class ListFile(unittest.TestCase):
    def test_small_list(self) -> None:
        plist = packages.parse(SMALL)
        self.assertEqual(plist.uses["check"], ("base", "harness", "extra"))
        self.assertEqual([p.name for p in plist.of_use("run_all.sh")],
                         ["gcc-x", "libfoo-dev", "linux-src"])
        self.assertEqual(present(plist.get("gcc-x")).probes, ("gcc", "make"))
        self.assertEqual(present(plist.package_of("make")).name, "gcc-x")
        self.assertIsNone(plist.package_of("nothing"))
        self.assertEqual(plist.names_of("check", "run_all.sh"), ["lint"])

    def test_ksrc_leaves_the_harness_out(self) -> None:
        plist = packages.parse(SMALL)
        self.assertEqual([p.name for p in plist.of_use("check", ksrc=True)],
                         ["gcc-x", "libfoo-dev", "lint"])

    def test_bad_lists(self) -> None:
        head = "purpose a x\nuse u a\n"
        for text, why in [
                ("purpose a x\nfoo a b\n", "2: unknown kind of line 'foo'"),
                ("purpose a x\npackage a pp\nuse u a\n", "3: a use line after"),
                (head + "package b pp\n", "3: unknown purpose 'b'"),
                ("purpose a x\nuse u b\npackage a pp\n", "2: unknown purpose 'b'"),
                (head + "package a pp\npackage a pp\n", "4: package 'pp' again (line 3)"),
                (head + "package a P_Q\n", "3: 'P_Q' is not a Debian package name"),
                (head + "package a\n", "3: a package line needs at least two fields"),
                ("purpose a x\npurpose a y\n", "2: purpose 'a' again"),
                (head + "use u a\npackage a pp\n", "3: use 'u' again"),
                (head + "package a pp x # why\n", "3: a comment takes a line of its own"),
                (head, "t.txt: no package")]:
            with self.subTest(text=text):
                with self.assertRaises(packages.ListError) as c:
                    packages.parse(text, "t.txt")
                self.assertIn(why, str(c.exception))

    def test_unknown_use(self) -> None:
        with self.assertRaises(packages.ListError) as c:
            packages.parse(SMALL).of_use("nope")
        self.assertIn("unknown use 'nope' (known: run_all.sh, check)", str(c.exception))

    def test_the_real_list(self) -> None:
        plist = packages.load()
        self.assertEqual(set(plist.uses), {"run_all.sh", "check", "check-all", ".ci/run"})
        every = {p.name for p in plist.packages}
        self.assertEqual({p.name for p in plist.of_use(".ci/run")}, every)
        # Each use sets up all that the one before it does.
        chain = ["run_all.sh", "check", "check-all", ".ci/run"]
        for small, big in zip(chain, chain[1:]):
            self.assertLess(set(plist.uses[small]), set(plist.uses[big]))
        self.assertIn("python3", plist.names_of("run_all.sh"))
        self.assertEqual(packages.title("check"), "make check")
        self.assertEqual(packages.title(".ci/run"), ".ci/run")

    def test_lines(self) -> None:
        self.assertEqual(packages.install_line(["a", "b"]),
                         "apt-get install --no-install-recommends a b")
        self.assertEqual(packages.install_line(["a"], update=True),
                         "apt-get update && apt-get install --no-install-recommends a")
        self.assertEqual(packages.undo_line(["a", "b"]),
                         "apt-get purge --autoremove a b")


class SetUp(unittest.TestCase):
    """Every environment of the set-up, on a faked machine."""

    def test_nothing_missing_is_silent(self) -> None:
        m = Machine(have={"gcc-x", "libfoo-dev", "linux-src"})
        self.assertEqual(run_setup(m), (0, ""))
        self.assertEqual(m.calls, [])

    def test_root_on_debian_installs_saying_so(self) -> None:
        m = Machine(have={"gcc-x"})
        rc, err = run_setup(m)
        self.assertEqual(rc, 0)
        self.assertEqual(err, "run_all.sh: installing 2 packages: libfoo-dev linux-src"
                         " (undo: apt-get purge --autoremove libfoo-dev linux-src)\n")
        self.assertEqual(m.calls, [["-y", "install", "--no-install-recommends",
                                    "libfoo-dev", "linux-src"]])

    def test_ubuntu_too(self) -> None:
        m = Machine(ids=("ubuntu", "debian"))
        self.assertEqual(run_setup(m)[0], 0)
        self.assertEqual(len(m.calls), 1)

    def test_indices_lacking_a_package_are_updated_first(self) -> None:
        m = Machine(knows=False)
        rc, err = run_setup(m, use="check")
        self.assertEqual(rc, 0)
        self.assertTrue(err.startswith("make check: apt's package indices lack"
                                       " some of them: apt-get update\n"
                                       "make check: installing 4 packages: "), err)
        self.assertEqual([c[0] for c in m.calls], ["update", "-y"])

    def test_not_root_prints_the_install_line(self) -> None:
        m = Machine(euid=1000)
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines(), [
            "run_all.sh: missing 3 packages (base, harness): gcc-x libfoo-dev linux-src",
            "run_all.sh: not root: install them as root, then run again:",
            "  apt-get install --no-install-recommends gcc-x libfoo-dev linux-src"])
        self.assertEqual(m.calls, [])

    def test_not_root_and_no_indices_updates_in_the_line(self) -> None:
        rc, err = run_setup(Machine(euid=1000, knows=False))
        self.assertEqual(rc, 4)
        self.assertIn("\n  apt-get update && apt-get install --no-install-recommends"
                      " gcc-x libfoo-dev linux-src\n", err)

    def test_no_install(self) -> None:
        m = Machine(have={"gcc-x", "linux-src"})
        rc, err = run_setup(m, use="check", no_install=True)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines()[1:], [
            "make check: not installing (--no-install): install them as root,"
            " then run again:",
            "  apt-get install --no-install-recommends libfoo-dev lint"])
        self.assertEqual(m.calls, [])

    def test_no_apt_lists_names_and_purposes(self) -> None:
        m = Machine(commands={"dpkg-query"})
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines(), [
            "run_all.sh: no apt-get here: install these packages by other means:",
            "  gcc-x       base: what every use needs",
            "  libfoo-dev  base: what every use needs",
            "  linux-src   harness: the kernel's harness"])

    def test_not_debian_goes_by_the_probes(self) -> None:
        found = Machine(ids=("fedora",), commands={"gcc", "make"},
                        files={"/nonexistent/foo.h", "/usr/src/linux.tar.xz"})
        self.assertEqual(run_setup(found), (0, ""))
        lacking = Machine(ids=("fedora",), commands={"gcc"})
        rc, err = run_setup(lacking)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines(), [
            "run_all.sh: not Debian or Ubuntu, and these are missing (Debian's"
            " package names: install your system's equivalents):",
            "  gcc-x       base: what every use needs",
            "  libfoo-dev  base: what every use needs",
            "  linux-src   harness: the kernel's harness"])
        self.assertEqual(lacking.calls, [])

    def test_no_dpkg_is_not_debian(self) -> None:
        m = Machine(commands={"apt-get", "gcc", "make"}, files={"/nonexistent/foo.h"},
                    )
        rc, err = run_setup(m, env={"KSRC": "/src/linux"})
        self.assertEqual((rc, err), (0, ""))

    def test_ksrc_leaves_the_harness_out(self) -> None:
        m = Machine(have={"gcc-x", "libfoo-dev"})
        self.assertEqual(run_setup(m, env={"KSRC": "/src/linux"}), (0, ""))
        self.assertEqual(run_setup(m, env={"KSRC": ""})[0], 0)
        self.assertEqual(m.calls[0][-1], "linux-src")

    def test_update_failing_installs_nothing(self) -> None:
        m = Machine(knows=False, rcs={"update": [100]})
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines()[1:], [
            "run_all.sh: apt-get update failed (exit status 100; its messages"
            " above): nothing installed",
            "run_all.sh: to try again, as root:",
            "  apt-get update && apt-get install --no-install-recommends gcc-x"
            " libfoo-dev linux-src"])
        self.assertEqual(m.calls, [["update"]])

    def test_update_not_getting_every_package_installs_nothing(self) -> None:
        # No network: apt-get update warns, exits 0, and gets nothing.
        m = Machine(knows=False, unknown={"libfoo-dev", "linux-src"})
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines()[1], "run_all.sh: apt has no version to"
                         " install of libfoo-dev linux-src, even after apt-get update"
                         " (its messages above): nothing installed")
        self.assertEqual(m.calls, [["update"]])

    def test_install_failing_is_tried_again_after_an_update(self) -> None:
        m = Machine(rcs={"install": [100, 0]})
        rc, err = run_setup(m)
        self.assertEqual(rc, 0)
        self.assertIn("run_all.sh: apt-get install failed (exit status 100):"
                      " apt-get update, and once more\n", err)
        self.assertEqual([c[0] for c in m.calls], ["-y", "update", "-y"])

    def test_held_packages_say_what_is_left(self) -> None:
        m = Machine(rcs={"install": [100]})
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        self.assertEqual(err.splitlines()[2:], [
            "run_all.sh: apt-get install failed (exit status 100; its messages"
            " above, all of its output in /var/log/apt/term.log)",
            "run_all.sh: none of them was installed (a dependency it installed:"
            " apt-get autoremove --purge)",
            "run_all.sh: still missing: gcc-x libfoo-dev linux-src; to try again,"
            " as root:",
            "  apt-get install --no-install-recommends gcc-x libfoo-dev linux-src"])

    def test_half_done_is_said(self) -> None:
        m = Machine(rcs={"install": [100]}, partial={"gcc-x", "libfoo-dev"},
                    half={"libfoo-dev"})
        rc, err = run_setup(m)
        self.assertEqual(rc, 4)
        lines = err.splitlines()
        # Something was installed: no second try.
        self.assertEqual(len(m.calls), 1)
        self.assertIn("run_all.sh: installed before it stopped: gcc-x"
                      " (undo: apt-get purge --autoremove gcc-x)", lines)
        self.assertIn("run_all.sh: left half-installed: libfoo-dev (finish: dpkg"
                      " --configure -a; or undo: apt-get purge --autoremove"
                      " libfoo-dev)", lines)
        self.assertIn("  apt-get install --no-install-recommends libfoo-dev"
                      " linux-src", lines)

    def test_apt_success_without_the_packages_is_a_failure(self) -> None:
        class Liar(Machine):
            def apt_get(self, args: Sequence[str]) -> int:
                self.calls.append(list(args))
                return 0
        rc, err = run_setup(Liar())
        self.assertEqual(rc, 4)
        self.assertIn("apt-get install ended without installing them all"
                      " (exit status 0;", err)


class System(unittest.TestCase):
    """The real machine's calls, subprocess mocked."""

    def test_dpkg_status(self) -> None:
        out = ("python3\tinstalled\nlibc6\tnot-installed\nlibc6\tinstalled\n"
               "gcc\tconfig-files\n")
        with mock.patch("subprocess.run") as run:
            run.return_value = subprocess.CompletedProcess([], 1, out)
            status = packages.System().dpkg_status(["python3", "libc6", "gcc", "nope"])
        self.assertEqual(status, {"python3": "installed", "libc6": "installed",
                                  "gcc": "config-files"})
        argv = run.call_args.args[0]
        # dpkg-query turns the \t and \n of the format into a tab and a newline.
        self.assertEqual(argv[:3], ["dpkg-query", "-W",
                                    "-f=${Package}\\t${db:Status-Status}\\n"])
        self.assertEqual(argv[3:], ["python3", "libc6", "gcc", "nope"])

    def test_apt_get_is_quiet_noninteractive_and_off_stdout(self) -> None:
        with mock.patch("subprocess.run") as run:
            run.return_value = subprocess.CompletedProcess([], 100)
            rc = packages.System().apt_get(["-y", "install", "x"])
        self.assertEqual(rc, 100)
        self.assertEqual(run.call_args.args[0], ["apt-get", "-qq", "-y", "install", "x"])
        kw = run.call_args.kwargs
        self.assertEqual(kw["stdout"], subprocess.DEVNULL)
        self.assertNotIn("stderr", kw)
        self.assertEqual(kw["env"]["DEBIAN_FRONTEND"], "noninteractive")

    def test_apt_candidates(self) -> None:
        policy = ("x:\n  Installed: (none)\n  Candidate: 1.0\n  Version table:\n"
                  "     1.0 500\n"
                  "y:\n  Installed: (none)\n  Candidate: (none)\n"
                  "w:amd64:\n  Installed: 2\n  Candidate: 2\n")
        with mock.patch("subprocess.run") as run:
            run.return_value = subprocess.CompletedProcess([], 0, policy)
            # y has no version to install; z is not in the indices at all.
            self.assertEqual(packages.System().apt_candidates(["x", "y", "z", "w"]),
                             {"x", "w"})
        self.assertEqual(run.call_args.args[0], ["apt-cache", "policy", "x", "y", "z", "w"])

    def test_os_ids(self) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".os-release") as f:
            f.write('PRETTY_NAME="Linux Mint"\nID=linuxmint\nID_LIKE="ubuntu debian"\n')
            f.flush()
            s = packages.System()
            s.os_release = f.name
            self.assertEqual(s.os_ids(), {"linuxmint", "ubuntu", "debian"})
            s.os_release = f.name + ".missing"
            self.assertEqual(s.os_ids(), set())


class ModuleMissing(unittest.TestCase):
    """Which python3 lacks a module: Debian's python3-* packages are for
    its /usr/bin/python3 alone (a made-up one here, subprocess mocked)."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.debian = os.path.join(tmp.name, "python3")
        with open(self.debian, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(self.debian, 0o755)
        self.shim = os.path.join(tmp.name, "shim-python3")

    def said(self, python: str, debian_has: Optional[bool] = None) -> str:
        with mock.patch("subprocess.run") as run:
            run.return_value = subprocess.CompletedProcess(
                [], 0 if debian_has else 1)
            text = packages.module_missing("yaml", "python3-yaml", python,
                                           self.debian)
        asked = [c.args[0] for c in run.call_args_list]
        self.assertEqual([] if debian_has is None else
                         [[self.debian, "-c", "import yaml"]], asked)
        return text

    def test_debian_python_itself(self) -> None:
        self.assertEqual("yaml is missing: apt-get install python3-yaml",
                         self.said(self.debian))

    def test_another_python_and_debian_has_it(self) -> None:
        self.assertEqual(
            f"yaml is missing from this python3 ({self.shim}), not from "
            f"Debian's {self.debian}, which has it (python3-yaml): run with "
            f"{self.debian}", self.said(self.shim, debian_has=True))

    def test_another_python_and_debian_lacks_it(self) -> None:
        self.assertEqual(
            "yaml is missing: apt-get install python3-yaml, then run with "
            f"Debian's {self.debian} (this python3, {self.shim}, does not see "
            "Debian's packages)", self.said(self.shim, debian_has=False))

    def test_no_debian_python(self) -> None:
        os.remove(self.debian)
        self.assertEqual("yaml is missing: apt-get install python3-yaml",
                         self.said(self.shim))


class Readme(unittest.TestCase):
    """README.md and docs/*.md: their generated blocks and install lines."""
    def setUp(self) -> None:
        self.texts = {}
        for path in packages.docs_files():
            with open(path, encoding="utf-8") as f:
                self.texts[os.path.relpath(path, TOP)] = f.read()
        self.text = self.texts["README.md"]
        self.plist = packages.load()

    def test_docs_agree_with_the_list(self) -> None:
        self.assertIn(os.path.join("docs", "requirements.md"), self.texts)
        self.assertEqual(packages.docs_problems(self.texts, self.plist), [])

    def test_a_stale_block_is_found(self) -> None:
        text = self.text.replace(" chromium", " chromium-old", 1)
        self.assertIn("the block 'install check' differs from packages.txt",
                      packages.readme_problems(text, self.plist, required=()))
        self.assertIn("README.md: the block 'install check' differs from packages.txt",
                      packages.docs_problems({**self.texts, "README.md": text},
                                             self.plist))
        self.assertEqual(packages.readme_render(text, self.plist), self.text)

    def test_a_missing_block_is_found(self) -> None:
        texts = {path: text.replace("<!-- packages.txt: table -->", "", 1)
                 for path, text in self.texts.items()}
        problems = packages.docs_problems(texts, self.plist)
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].endswith(
            ": no generated block '<!-- packages.txt: table -->'"), problems)
        self.assertEqual(packages.readme_problems("", self.plist), [
            f"no generated block '<!-- packages.txt: {s} -->'"
            for s in packages.REQUIRED_BLOCKS])

    def test_prose_installs_only_listed_packages(self) -> None:
        text = self.text + "\nThen (`apt-get install strace\nfrobnicate-dev:arm64`).\n"
        self.assertEqual(packages.readme_problems(text, self.plist, required=()), [
            "'apt-get install ... frobnicate-dev' names a package that"
            " packages.txt does not list"])
        page = os.path.join("docs", "extra.md")
        self.assertEqual(packages.docs_problems(
            {**self.texts, page: "# Extra\n(`apt-get install frob`)\n"},
            self.plist), [f"{page}: 'apt-get install ... frob' names a package"
                          " that packages.txt does not list"])

    def test_unknown_block(self) -> None:
        with self.assertRaises(packages.ListError):
            packages.readme_render("<!-- packages.txt: frob -->\n<!-- end -->\n",
                                   self.plist)

    def test_install_lines_wrap(self) -> None:
        block = packages.render_block(self.plist, "install check")
        lines = block.splitlines()
        self.assertTrue(all(len(x) <= packages.WIDTH for x in lines), lines)
        self.assertEqual(" ".join(x.rstrip(" \\").strip() for x in lines[1:-1]),
                         packages.install_line(self.plist.names_of("check")))


class NeedLines(unittest.TestCase):
    """The check steps' c.need("COMMAND[:PACKAGE]", ...) name commands of
    the list (kbtools.check, check_guests)."""

    def test_every_need_resolves(self) -> None:
        plist = packages.load()
        text = ""
        for name in ("check.py", "check_guests.py"):
            with open(os.path.join(TOP, "scripts", "kbtools", name),
                      encoding="utf-8") as f:
                text += f.read()
        words = [w for args in re.findall(r"\bc\.need\(([^)]*)\)", text)
                 for w in re.findall(r'"([^"]+)"', args) if "{" not in w]
        self.assertGreater(len(words), 20)
        for w in words:
            cmd, _, pkg = w.partition(":")
            with self.subTest(need=w):
                p = plist.package_of(cmd)
                self.assertIsNotNone(p, f"no package of packages.txt has {cmd}")
                if pkg:
                    self.assertEqual(present(p).name, pkg)
        noted = re.findall(r"note_missing\('([a-z0-9.+-]+)'\)", text)
        self.assertGreater(len(noted), 2)
        for name in noted:
            self.assertIsNotNone(plist.get(name), name)


STUBS = {
    # id -u: $STUB_UID
    "id": 'echo "${STUB_UID:-0}"\n',
    # dpkg-query -W -f=FORMAT PKG...: "installed:PKG " for the ones in $STATE
    "dpkg-query": 'shift 2\nfor p; do grep -qx "$p" "$STATE" && printf "installed:%s " "$p"; done\n'
                  'exit 0\n',
    # apt-cache policy PKG...: a candidate for each; none before an update
    # with $STUB_NO_INDICES, none at all with $STUB_NOTHING_FETCHED
    "apt-cache": 'echo "apt-cache $*" >>"$LOG"\nshift\nv=1.0\n'
                 '[[ -z ${STUB_NO_INDICES:-} || -e $STUBS/updated ]] || v="(none)"\n'
                 '[[ -z ${STUB_NOTHING_FETCHED:-} ]] || v="(none)"\n'
                 'for p; do printf "%s:\\n  Candidate: %s\\n" "$p" "$v"; done\n',
    # apt-get: logged; install adds its packages to $STATE (and python3 to PATH)
    "apt-get": 'echo "apt-get $*" >>"$LOG"\n'
               'if [[ " $* " == *" update "* ]]; then\n'
               '  [[ ${STUB_UPDATE_RC:-0} != 0 ]] || >"$STUBS/updated"; exit "${STUB_UPDATE_RC:-0}"\n'
               'fi\n'
               '[[ ${STUB_INSTALL_RC:-0} == 0 ]] || { echo "E: held" >&2; exit "$STUB_INSTALL_RC"; }\n'
               'for p; do [[ $p == -* || $p == install ]] || echo "$p" >>"$STATE"; done\n'
               'if grep -qx python3 "$STATE"; then cp "$STUBS/python3.later" "$STUBS/python3"; fi\n',
    "python3.later": 'echo "python3 $*" >>"$LOG"\nexit 0\n',
}


class Bootstrap(unittest.TestCase):
    """scripts/setup.sh on a bare root: no python3, apt and dpkg stubbed."""

    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp()
        self.stubs = os.path.join(self.tmp, "bin")
        os.mkdir(self.stubs)
        for name, body in STUBS.items():
            path = os.path.join(self.stubs, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write("#!/bin/bash\n" + body)
            os.chmod(path, 0o755)
        # What the bootstrap and the stubs run besides.
        for tool in ("awk", "grep", "cp"):
            os.symlink(present(shutil.which(tool)),
                       os.path.join(self.stubs, tool))
        self.state = os.path.join(self.tmp, "state")
        with open(self.state, "w", encoding="utf-8") as f:
            f.write("".join(f"{p}\n" for p in packages.BareRoot.ESSENTIAL))
        self.log = os.path.join(self.tmp, "log")
        open(self.log, "w").close()

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def setup_sh(self, *args: str, **env: str
                 ) -> Tuple[int, str, str, List[str]]:
        e = {"PATH": self.stubs, "STATE": self.state, "LOG": self.log,
             "STUBS": self.stubs}
        e.update(env)
        p = subprocess.run([os.path.join(TOP, "scripts", "setup.sh"), *args],
                           capture_output=True, text=True, env=e, check=False)
        with open(self.log, encoding="utf-8") as f:
            return p.returncode, p.stdout, p.stderr, f.read().splitlines()

    def test_bare_root_says_what_packages_py_says(self) -> None:
        rc, out, err, log = self.setup_sh("run_all.sh", STUB_NO_INDICES="1")
        self.assertEqual((rc, out), (0, ""))
        plist = packages.load()
        want = packages.render_block(plist, "setup run_all.sh")
        self.assertEqual(f"```\n{err}```\n", want)
        names = " ".join(n for n in plist.names_of("run_all.sh")
                         if n not in packages.BareRoot.ESSENTIAL)
        self.assertEqual([x for x in log if not x.startswith("apt-cache")], [
            "apt-get -qq update",
            f"apt-get -qq -y install --no-install-recommends {names}",
            f"python3 {TOP}/scripts/packages.py setup run_all.sh"])

    def test_python3_there_hands_over_at_once(self) -> None:
        shutil.copy(os.path.join(self.stubs, "python3.later"),
                    os.path.join(self.stubs, "python3"))
        rc, _, err, log = self.setup_sh("--no-install", "check")
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(log, [f"python3 {TOP}/scripts/packages.py setup"
                               " --no-install check"])

    def test_not_root_or_no_install_prints_the_line(self) -> None:
        cases: List[Tuple[List[str], Dict[str, str]]] = [
            (["check"], {"STUB_UID": "1000"}), (["--no-install", "check"], {})]
        for args, env in cases:
            with self.subTest(args=args):
                rc, _, err, log = self.setup_sh(*args, **env)
                self.assertEqual(rc, 4)
                self.assertIn("make check: python3 and more are missing", err)
                self.assertIn("\n  apt-get install --no-install-recommends"
                              " build-essential binutils", err)
                self.assertNotIn("dpkg ", err)
                self.assertEqual(log, [])

    def test_no_apt_prints_the_line(self) -> None:
        os.remove(os.path.join(self.stubs, "apt-get"))
        rc, _, err, _ = self.setup_sh(".ci/run")
        self.assertEqual(rc, 4)
        self.assertIn(".ci/run: python3 and more are missing", err)
        self.assertIn("packages.txt says what each is for", err)

    def test_update_failing(self) -> None:
        rc, _, err, log = self.setup_sh("run_all.sh", STUB_NO_INDICES="1",
                                        STUB_UPDATE_RC="100")
        self.assertEqual(rc, 4)
        self.assertIn("run_all.sh: apt-get update failed (its messages above):"
                      " nothing installed\n", err)
        self.assertEqual(log[1:], ["apt-get -qq update"])

    def test_update_getting_nothing(self) -> None:
        rc, _, err, log = self.setup_sh("run_all.sh", STUB_NOTHING_FETCHED="1")
        self.assertEqual(rc, 4)
        self.assertIn("run_all.sh: apt has no version to install of some of them,"
                      " even after apt-get update (its messages above): nothing"
                      " installed\n", err)
        self.assertEqual(log[1:-1], ["apt-get -qq update"])

    def test_install_failing(self) -> None:
        rc, _, err, _ = self.setup_sh("run_all.sh", STUB_INSTALL_RC="100")
        self.assertEqual(rc, 4)
        self.assertIn("E: held\nrun_all.sh: apt-get install failed (exit status 100;", err)
        self.assertIn("run_all.sh: still missing: build-essential binutils", err)
        self.assertNotIn("installed before it stopped", err)

    def test_ksrc_leaves_the_harness_out(self) -> None:
        rc, _, _, log = self.setup_sh("run_all.sh", KSRC="/src/linux")
        self.assertEqual(rc, 0)
        self.assertNotIn("linux-source", log[1])

    def test_bad_usage(self) -> None:
        bad: List[List[str]] = [[], ["--bogus"], ["a", "b"], ["nope"]]
        for args in bad:
            with self.subTest(args=args):
                rc, _, err, _ = self.setup_sh(*args)
                self.assertEqual(rc, 2)
                self.assertRegex(err, r"^setup\.sh: .*\nTry 'setup\.sh --help'")


if __name__ == "__main__":
    unittest.main()
