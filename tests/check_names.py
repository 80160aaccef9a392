#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The names CI systems and compare.py key on stay what they are: run each
program as tests/names/*.names says and compare its KTAP test names and
its JSON row names with the committed list, so that a rename is a
conscious change (rerun with --write and commit the lists).

  check_names.py [--write] [--lists DIR] [--keep DIR | --from DIR] TOP

A list file holds, after its header, one line per KTAP result in the
order of the stream ("ktap NAME") and one per JSON row whose name is no
KTAP name ("json NAME", in the file's order). Header lines:
  # run: DIR/PROGRAM ARGS...   what to run (--json FILE is added)
  # numbered: PREFIX           PREFIX0, PREFIX1, ... (one per CPU, say)
                               count as one line PREFIXN
--keep DIR saves what the programs printed; --from DIR compares that
again without running anything (the step's check that a renamed line
fails). Exit status: 0 the same, 1 a list differs, 2 bad usage or a
program that could not be run.
"""

import argparse
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence, Tuple

KTAP_RESULT = re.compile(r"^(?:not )?ok \d+ (\S+)")


class Usage(Exception):
    pass


def read_list(path: str) -> Tuple[List[str], List[str], List[str]]:
    """(command words, numbered prefixes, the name lines) of a list file."""
    run: Optional[List[str]] = None
    numbered: List[str] = []
    names: List[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("# run: "):
                run = shlex.split(line[len("# run: "):])
            elif line.startswith("# numbered: "):
                numbered.append(line[len("# numbered: "):].strip())
            elif line and not line.startswith("#"):
                names.append(line)
    if not run:
        raise Usage(f"{path}: no '# run:' line")
    return run, numbered, names


def collapse_numbered(names: Sequence[str], prefixes: Sequence[str]
                      ) -> List[str]:
    """PREFIX0..PREFIXk in a row (numbered from 0) become one PREFIXN."""
    out: List[str] = []
    for given in names:
        name: Optional[str] = given
        for p in prefixes:
            m = re.fullmatch(re.escape(p) + r"(\d+)", given)
            if not m:
                continue
            if out and out[-1] == p + "N":
                name = None
            elif m.group(1) == "0":
                name = p + "N"
            break
        if name:
            out.append(name)
    return out


def observe(top: str, run: List[str], keep: Optional[str]
            ) -> Tuple[str, str]:
    """(KTAP text, JSON text) of one run of RUN in TOP."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.json")
        prog = os.path.join(os.path.abspath(top), run[0])
        if not os.access(prog, os.X_OK):
            raise Usage(f"{run[0]} is not built (make -C {top} all)")
        proc = subprocess.run([prog] + run[1:] + ["--json", path],
                              cwd=os.path.dirname(prog), text=True,
                              stdout=subprocess.PIPE, timeout=600)
        try:
            with open(path, encoding="utf-8") as f:
                doc = f.read()
        except OSError as e:
            raise Usage(f"{' '.join(run)} (exit {proc.returncode}) wrote no "
                        f"JSON: {e.strerror}")
    if keep:
        save(keep, run, proc.stdout, doc)
    return proc.stdout, doc


def kept_name(run: Sequence[str]) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", " ".join(run))


def save(directory: str, run: Sequence[str], ktap: str, doc: str) -> None:
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, kept_name(run))
    with open(base + ".ktap", "w", encoding="utf-8") as f:
        f.write(ktap)
    with open(base + ".json", "w", encoding="utf-8") as f:
        f.write(doc)


def load(directory: str, run: Sequence[str]) -> Tuple[str, str]:
    base = os.path.join(directory, kept_name(run))
    try:
        with open(base + ".ktap", encoding="utf-8") as f:
            ktap = f.read()
        with open(base + ".json", encoding="utf-8") as f:
            doc = f.read()
    except OSError as e:
        raise Usage(f"nothing kept for {' '.join(run)}: {e}")
    return ktap, doc


def name_lines(ktap: str, doc: str, numbered: Sequence[str]) -> List[str]:
    """The list a run gives: its KTAP names, then its JSON-only rows."""
    ktap_names = [m.group(1) for m in map(KTAP_RESULT.match,
                                          ktap.splitlines()) if m]
    try:
        rows = [r["name"] for r in json.loads(doc)["rows"]]
    except (ValueError, KeyError, TypeError) as e:
        raise Usage(f"unreadable JSON document: {e}")
    seen = set(ktap_names)
    lines = ["ktap " + n for n in collapse_numbered(ktap_names, numbered)]
    lines += ["json " + n for n in collapse_numbered(
        [r for r in rows if r not in seen], numbered)]
    return lines


def header(path: str) -> List[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().splitlines()
                if line.startswith("#")]


def check_one(args: argparse.Namespace, path: str) -> int:
    """0 when the list at PATH holds, else 1 (after a diff)."""
    run, numbered, want = read_list(path)
    if args.from_dir:
        ktap, doc = load(args.from_dir, run)
    else:
        ktap, doc = observe(args.top, run, args.keep)
    got = name_lines(ktap, doc, numbered)
    if not args.write and any(w.startswith("ktap ") for w in want) and \
            not any(g.startswith("ktap ") for g in got):
        raise Usage(f"{' '.join(run)} printed no KTAP result (run it as "
                    f"root, as make check does)")
    if args.write:
        text = "\n".join(header(path) + got) + "\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"written: {os.path.basename(path)} ({len(got)} names)")
        return 0
    if got == want:
        print(f"same: {os.path.basename(path)} ({len(got)} names)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        [w + "\n" for w in want], [g + "\n" for g in got],
        path, " ".join(run) + " (this run)"))
    print(f"FAIL: {os.path.basename(path)}: the names differ from the "
          f"committed list (a rename is an API change: --write, commit)")
    return 1


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(prog="check_names.py",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("top", help="the clone, with the programs built")
    ap.add_argument("--lists", help="the list files (default: TOP/tests/names)")
    ap.add_argument("--write", action="store_true",
                    help="rewrite the lists from this run")
    ap.add_argument("--keep", help="save the programs' output here")
    ap.add_argument("--from", dest="from_dir",
                    help="compare output saved by --keep, run nothing")
    args = ap.parse_args(argv)
    lists = args.lists or os.path.join(args.top, "tests", "names")
    try:
        files = sorted(os.path.join(lists, f) for f in os.listdir(lists)
                       if f.endswith(".names"))
        if not files:
            raise Usage(f"no *.names file in {lists}")
        return max(check_one(args, f) for f in files)
    except (Usage, OSError, subprocess.TimeoutExpired) as e:
        print(f"check_names.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
