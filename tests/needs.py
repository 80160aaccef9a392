#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a unit test needs of the host, said as a skip. A unit test mocks
what it can; one that runs a real tool (git for a tree, flock for a
lock) says so with @needs.commands(...) and skips, naming the tool and
the Debian package of packages.txt that has it, where the tool is
missing. make check's unit_python_bare_path step runs the unit tests with a
PATH of a bare Debian root alone (tests/bare_path.py): a test that runs
a tool without saying so fails there. Run as a command, it reads the
log of a unittest run for skips that name an installed package."""

import argparse
import os
import re
import shutil
import sys
import unittest
from typing import Callable, Iterable, List, Set, TypeVar, cast

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "scripts"))

from kbtools import packages  # noqa: E402

T = TypeVar("T")


def missing(*names: str) -> str:
    """'git (git), flock (util-linux)' for those of NAMES not in PATH;
    '' when all are there."""
    plist = packages.load()
    said = []
    for name in names:
        if shutil.which(name) is None:
            pkg = plist.package_of(name)
            said.append(f"{name} ({pkg.name})" if pkg else name)
    return ", ".join(said)


def commands(*names: str) -> Callable[[T], T]:
    """Skip a test (or a class of them) when a command of NAMES is not in
    PATH, saying which and its package."""
    lacking = missing(*names)
    return cast(Callable[[T], T],
                unittest.skipIf(bool(lacking), f"needs {lacking}"))


# ---- skips that an install should have prevented ---------------------------

SKIP = re.compile(r"\.\.\. skipped (['\"])(.*)\1$")
# How a skip names a package: "needs git (git)", "apt-get install
# python3-yaml" (a word such as "file" in prose is no package).
PACKAGE = re.compile(r"\(([a-z0-9][a-z0-9.+-]*)\)|"
                     r"apt-get install ([a-z0-9][a-z0-9.+-]*)")


def installed_in_skips(log: Iterable[str], installed: Set[str]) -> List[str]:
    """The skip lines of a unittest -v log whose reason names a package
    of INSTALLED, in parentheses or after 'apt-get install'."""
    found = []
    for line in log:
        m = SKIP.search(line)
        if not m:
            continue
        words = {a or b for a, b in PACKAGE.findall(m.group(2))}
        named = sorted(words & installed)
        if named:
            found.append(f"{line.strip()} [installed: {' '.join(named)}]")
    return found


def main(argv: List[str]) -> int:
    """tests/needs.py LOG: exit 1 listing the skips of a unittest -v log
    that name a package of packages.txt which dpkg has installed: an
    install that did not take (a python3 without Debian's modules, a
    PATH without the tool). 0 when there is none, or without dpkg."""
    ap = argparse.ArgumentParser(
        prog="tests/needs.py",
        description="Fail on the skips of a unittest -v log that name a "
        "package of packages.txt which dpkg has installed.")
    ap.add_argument("log")
    a = ap.parse_args(argv)
    if shutil.which("dpkg-query") is None:
        print("no dpkg-query: installed packages unknown, skips not checked")
        return 0
    status = packages.System().dpkg_status(
        [p.name for p in packages.load().packages])
    installed = {name for name, s in status.items() if s == "installed"}
    try:
        with open(a.log, encoding="utf-8", errors="replace") as f:
            found = installed_in_skips(f, installed)
    except OSError as e:
        ap.error(f"cannot read {a.log}: {e.strerror}")
    for line in found:
        print(f"FAIL: skipped for want of what is installed: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
