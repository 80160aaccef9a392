#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write kbench results as one KCIDB I/O document (schema v5).

usage: kcidb.py [-o FILE] [--origin NAME] [--git-commit HASH]
                [--tree-name NAME] [--repo-url URL] [--validate] DIR...

DIR is a `run_all.sh --json DIR` directory (repeated or not, host or
--kernel run; an A/B directory exports both sides), or one result file.
When DIR holds run_all.ktap (run_all.sh keeps it), every KTAP check is
exported too, and a program that crashed or timed out is an ERROR.
Submit the document with KCIDB's own tool: kcidb-submit -p PROJECT -t
TOPIC < FILE. Exit status: 0 written, 2 bad input or usage.
"""

import argparse
import os
import sys
from typing import List, Optional, Tuple

from kbtools import cli, kcidb, ktap, results
from kbtools.results import Json


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="kcidb.py",
        description="Export kbench results as a KCIDB I/O document.")
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="run_all.sh --json directory or result file")
    p.add_argument("-o", "--output", default="-",
                   help="output file (default: standard output)")
    p.add_argument("--origin", default="kbench",
                   help="KCIDB origin, [a-z0-9_]+ (default: kbench)")
    p.add_argument("--git-commit", help="full commit hash of the kernel")
    p.add_argument("--tree-name", help="tree name (e.g. mainline, net-next)")
    p.add_argument("--repo-url", help="https:// URL of the kernel's repo")
    p.add_argument("--validate", action="store_true",
                   help="validate with the kcidb-io package before writing")
    return p.parse_args(argv)


def sides_of(path: str) -> List[str]:
    """The result directories held by PATH: itself, or base/ and
    candidate/ of an A/B directory."""
    ab = [os.path.join(path, s) for s in ("base", "candidate")]
    if os.path.isdir(path) and all(os.path.isdir(d) for d in ab) and \
            not any(f.endswith(".json") for f in os.listdir(path)):
        return ab
    return [path]


def load_ktap(path: str
              ) -> Tuple[Optional[ktap.Document], Optional[str]]:
    """(KTAP Document or None, side or None) for a result directory: its
    own run_all.ktap, or an A/B directory's, of which it is one side."""
    if not os.path.isdir(path):
        return None, None
    f, side = os.path.join(path, "run_all.ktap"), None
    if not os.path.isfile(f):
        side = os.path.basename(os.path.normpath(path))
        f = os.path.join(os.path.dirname(os.path.normpath(path)),
                         "run_all.ktap")
        if side not in ("base", "candidate") or not os.path.isfile(f):
            return None, None
    try:
        return ktap.read(f), side
    except OSError as e:
        raise kcidb.ExportError(f"cannot read {f}: {e.strerror}") from e


def validate(doc: Json) -> None:
    try:
        import kcidb_io
    except ImportError as e:
        raise kcidb.ExportError(
            "--validate needs the kcidb-io package (pip install kcidb-io)") \
            from e
    try:
        kcidb_io.schema.LATEST.validate_exactly(doc)
    except Exception as e:  # jsonschema's ValidationError and kin
        msg = str(e).splitlines()[0]
        raise kcidb.ExportError(f"invalid KCIDB document: {msg}") from e


def export(args: argparse.Namespace) -> Json:
    info = {k: v for k, v in (("git_commit_hash", args.git_commit),
                              ("tree_name", args.tree_name),
                              ("git_repository_url", args.repo_url)) if v}
    ex = kcidb.Exporter(args.origin, info)
    for path in args.dirs:
        for side in sides_of(path):
            stream, which = load_ktap(side)
            ex.add_run(results.load(side), stream, which)
    doc = ex.document()
    if not doc["tests"]:
        raise kcidb.ExportError("no tests in the given results")
    if args.validate:
        validate(doc)
    return doc


@cli.command("kcidb.py", errors=(kcidb.ExportError, results.ResultError,
                                 ktap.LineError))
def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    doc = export(args)
    with cli.writing(args.output):
        results.write_json(args.output, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
