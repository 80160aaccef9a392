#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make a directory that, as the whole of PATH, shows what a bare Debian
root (debootstrap --variant=minbase) has and nothing of packages.txt: the
commands of the installed packages of priority "required", less every
package packages.txt lists and every command it probes for, and the
given python3. make check's unit_python_bare_path step runs the Python unit
tests with it: a test that runs a tool it does not say it needs (a skip
naming the tool) fails there, on this machine too.

Usage: tests/bare_path.py PYTHON DIR
  PYTHON  the interpreter the tests run with (linked as DIR/python3)
  DIR     a new or empty directory
Prints one line saying what DIR holds. Exit 0, 4 without dpkg (no
Debian package database to tell a bare root's commands by), 2 on bad
usage.
"""

import argparse
import os
import subprocess
import sys
from typing import Dict, Iterable, List, Set

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "scripts"))

from kbtools import packages  # noqa: E402

# Where a bare root's commands are; the order of a root's PATH.
BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin",
            "/sbin", "/bin")


def dpkg(*args: str) -> str:
    return subprocess.run(["dpkg-query", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True,
                          check=False).stdout


def required_packages() -> Set[str]:
    """The installed packages of priority required: what minbase has."""
    status = dpkg("-W", "-f=${Priority} ${db:Status-Status} ${Package}\\n")
    return {w[2] for w in (line.split() for line in status.splitlines())
            if len(w) == 3 and w[:2] == ["required", "installed"]}


def files_of(names: Iterable[str]) -> Set[str]:
    """The real paths of every file of the packages NAMES."""
    listed = dpkg("-L", *sorted(names)).splitlines()
    return {os.path.realpath(f) for f in listed if f.startswith("/")}


def bare_commands(plist: packages.PackageList) -> Dict[str, str]:
    """{command: its file}: every command in BIN_DIRS whose file (through
    links and alternatives) belongs to a required package packages.txt
    does not list, and whose name it does not probe for."""
    listed = {p.name for p in plist.packages}
    probed = {x for p in plist.packages for x in p.probes if "/" not in x}
    allowed = files_of(required_packages() - listed)
    found: Dict[str, str] = {}
    for d in BIN_DIRS:
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            real = os.path.realpath(path)
            if (name not in found and name not in probed
                    and real in allowed and os.access(real, os.X_OK)
                    and os.path.isfile(real)):
                found[name] = real
    return found


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(prog="tests/bare_path.py",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("python")
    ap.add_argument("dir")
    a = ap.parse_args(argv)
    if not os.access(a.python, os.X_OK):
        ap.error(f"'{a.python}' is not an executable")
    if subprocess.run(["sh", "-c", "command -v dpkg-query"],
                      stdout=subprocess.DEVNULL, check=False).returncode:
        print("no dpkg-query: cannot tell a bare Debian root's commands")
        return 4
    os.makedirs(a.dir, exist_ok=True)
    if os.listdir(a.dir):
        ap.error(f"'{a.dir}' is not empty")
    found = bare_commands(packages.load())
    found["python3"] = os.path.realpath(a.python)
    for name, real in found.items():
        os.symlink(real, os.path.join(a.dir, name))
    print(f"{a.dir}: {len(found) - 1} commands of a bare Debian root "
          f"(priority required, none of packages.txt) and python3 -> "
          f"{found['python3']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
