#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The Debian packages kbench uses: packages.txt, read for the set-up of a
command, the install lines, make check's SKIP lines, README.md and docs/.

  packages.py setup [--no-install] USE
        install what USE (run_all.sh, check, check-all, .ci/run) lacks, as root
        on Debian or Ubuntu, one line saying which and how to undo it;
        else say what is missing and how to install it, and exit 4
  packages.py line USE [--not USE]   the install line of USE's packages
  packages.py list [USE]             packages, purposes and what for
  packages.py package-of COMMAND...  the package of each command
  packages.py readme [--write] [FILE]...
        check that the FILEs (README.md and docs/*.md) agree with the
        list, the generated blocks in one or another of them: exit 1
        where not; --write makes their generated blocks again

Exit status: 0 done, 1 a FILE or a command not in the list, 4 missing
packages not installed, 2 bad usage or an unreadable list.
"""

import argparse
import os
import sys
from typing import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kbtools import cli, packages  # noqa: E402


def parse_args(argv: Sequence[str], prog: str) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog=prog,
        description="The Debian packages kbench uses (packages.txt).")
    ap.add_argument("--list", default=packages.LIST, metavar="FILE",
                    help="the package list (default: packages.txt of the clone)")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("setup", help="install what USE lacks, or say how (exit 4)")
    s.add_argument("--no-install", action="store_true",
                   help="never install: say what is missing and exit 4")
    s.add_argument("use")
    s = sub.add_parser("line", help="the install line of USE's packages")
    s.add_argument("use")
    s.add_argument("--not", dest="not_use", metavar="USE",
                   help="without the packages of this use")
    s = sub.add_parser("list", help="packages with their purposes")
    s.add_argument("use", nargs="?")
    s = sub.add_parser("package-of", help="the package of each COMMAND")
    s.add_argument("commands", nargs="+", metavar="COMMAND")
    s = sub.add_parser("readme", help="check README.md and docs/*.md against the list")
    s.add_argument("--write", action="store_true",
                   help="make the generated blocks again instead")
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="default: README.md and docs/*.md")
    return ap.parse_args(list(argv))


def read_texts(paths: list[str]) -> dict[str, str]:
    texts = {}
    for path in paths:
        with cli.reading(path), open(path, encoding="utf-8") as f:
            texts[path] = f.read()
    return texts


def readme(plist: packages.PackageList, paths: list[str], write: bool) -> int:
    texts = read_texts(paths or packages.docs_files())
    if write:
        for path, text in texts.items():
            new = packages.readme_render(text, plist)
            if new != text:
                with cli.writing(path), open(path, "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"packages.py: {path}: generated blocks written")
        return 0
    problems = packages.docs_problems(texts, plist)
    for p in problems:
        print(p)
    if problems:
        print("packages.py: the documentation disagrees with packages.txt"
              " (packages.py readme --write makes its blocks again)", file=sys.stderr)
        return 1
    for path in texts:
        print(f"{path} agrees with packages.txt")
    return 0


@cli.task(errors=(packages.ListError,))
def main(argv: Sequence[str], prog: str) -> int:
    args = parse_args(argv, prog)
    plist = packages.load(args.list)
    if args.command == "setup":
        return packages.set_up(args.use, args.no_install, plist)
    if args.command == "line":
        print(packages.install_line(plist.names_of(args.use, args.not_use)))
        return 0
    if args.command == "list":
        pkgs = plist.of_use(args.use) if args.use else plist.packages
        print("\n".join(packages.purpose_table(plist, pkgs)))
        return 0
    if args.command == "package-of":
        rc = 0
        for c in args.commands:
            p = plist.package_of(c)
            if p is None:
                print(f"packages.py: no package of packages.txt has '{c}'",
                      file=sys.stderr)
                rc = 1
            else:
                print(p.name)
        return rc
    return readme(plist, args.files, args.write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "packages.py"))
