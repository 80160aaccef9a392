#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Strict check of a KTAP stream (run_all.sh output or one program's).

Stricter than the kernel's kunit.py parser, which tolerates a missing or
wrong plan: at every nesting level (4-space indentation, or '# ' prefixes
as run_kselftest.sh writes them) it checks the version line, that the plan
comes before the results, that results are numbered 1, 2, ... in order and
that their count equals the plan, and that a '# Totals:' line adds up.

  ktap_check.py [--no-fail] [--skip-reasons] [FILE]   (stdin by default)

--no-fail       a 'not ok' at any level is an error
--skip-reasons  a SKIP without a reason at the innermost level is an error
Exit status: 0 clean, 1 errors found (listed on stderr), 2 bad usage.
"""

import argparse
import re
import sys

VERSION = re.compile(r"^(K?TAP) version (\d+)$")
PLAN = re.compile(r"^1\.\.(\d+)(\s+#.*)?$")
RESULT = re.compile(r"^(ok|not ok) (\d+)(?: (?:- )?([^#]*?))?\s*(?:#\s*(.*))?$")
TOTALS = re.compile(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) "
                    r"skip:(\d+) error:(\d+)$")


class Block:
    """One KTAP document at one nesting level."""

    def __init__(self, name, first_line):
        self.name = name
        self.first_line = first_line
        self.lines = []          # (line number, text) at this level
        self.children = []       # nested Blocks, in order

    def check(self, opts, errors):
        plan = None
        seen_version = False
        results = []
        totals = None
        for num, text in self.lines:
            if not seen_version:
                if VERSION.match(text):
                    seen_version = True
                    continue
                if text.startswith("#") or not text.strip():
                    continue
                errors.append(f"line {num}: {self.name}: output before the "
                              f"version line: {text!r}")
                seen_version = True
            m = PLAN.match(text)
            if m:
                if plan is not None:
                    errors.append(f"line {num}: {self.name}: second plan")
                if results:
                    errors.append(f"line {num}: {self.name}: plan after results")
                plan = int(m.group(1))
                skip_all = "SKIP" in (m.group(2) or "")
                if skip_all and opts.skip_reasons and \
                        not m.group(2).split("SKIP", 1)[1].strip():
                    errors.append(f"line {num}: {self.name}: SKIP without a reason")
                continue
            m = RESULT.match(text)
            if m:
                results.append((num, m))
                continue
            m = TOTALS.match(text)
            if m:
                totals = (num, [int(x) for x in m.groups()])
        if not seen_version:
            errors.append(f"line {self.first_line}: {self.name}: no version line")
        if plan is None:
            errors.append(f"line {self.first_line}: {self.name}: no plan")
        for i, (num, m) in enumerate(results, 1):
            if int(m.group(2)) != i:
                errors.append(f"line {num}: {self.name}: result numbered "
                              f"{m.group(2)}, expected {i}")
            directive = (m.group(4) or "").strip()
            if opts.no_fail and m.group(1) == "not ok":
                errors.append(f"line {num}: {self.name}: not ok: "
                              f"{(m.group(3) or '').strip()} {directive}")
            if directive.upper().startswith("SKIP") and opts.skip_reasons \
                    and not self.children_for(m) \
                    and not directive[4:].strip():
                errors.append(f"line {num}: {self.name}: SKIP without a reason")
        if plan is not None and len(results) != plan:
            errors.append(f"line {self.first_line}: {self.name}: plan says "
                          f"{plan}, {len(results)} results")
        if totals:
            num, (p, f, xf, xp, s, e) = totals
            if p + f + xf + xp + s + e != len(results):
                errors.append(f"line {num}: {self.name}: totals add up to "
                              f"{p + f + xf + xp + s + e}, {len(results)} results")
        for child in self.children:
            child.check(opts, errors)

    def children_for(self, result):
        """A result whose program printed its own (nested) skip reason."""
        return any(c.parent_result == result.group(2) for c in self.children)


def split_levels(lines, name, first_line):
    """Build the Block tree: nested text is indented 4 spaces or '# '-prefixed."""
    block = Block(name, first_line)
    block.parent_result = None
    nested = []
    style = None

    def flush_nested():
        nonlocal nested, style
        if nested:
            child = split_levels(nested, f"{name}/{len(block.children) + 1}",
                                 nested[0][0])
            block.children.append(child)
            # The result line that closes the nested block names its number.
            child.parent_result = str(sum(1 for _, t in block.lines
                                          if RESULT.match(t)) + 1)
        nested, style = [], None

    for num, text in lines:
        if text.startswith("    ") and style in (None, "indent"):
            style = "indent"
            nested.append((num, text[4:]))
        elif style == "hash" and (text.startswith("# ") or text == "#"):
            nested.append((num, text[2:]))
        elif style is None and re.match(r"^# K?TAP version \d+$", text):
            style = "hash"
            nested.append((num, text[2:]))
        else:
            flush_nested()
            block.lines.append((num, text))
    flush_nested()
    return block


def main(argv=None):
    ap = argparse.ArgumentParser(prog="ktap_check.py",
                                 description="Strict KTAP stream check.")
    ap.add_argument("file", nargs="?", help="KTAP file (default: stdin)")
    ap.add_argument("--no-fail", action="store_true",
                    help="treat any 'not ok' as an error")
    ap.add_argument("--skip-reasons", action="store_true",
                    help="every SKIP must give a reason")
    opts = ap.parse_args(argv)
    try:
        f = open(opts.file, encoding="utf-8") if opts.file else sys.stdin
    except OSError as e:
        print(f"ktap_check.py: cannot read {opts.file}: {e.strerror}",
              file=sys.stderr)
        return 2
    lines = [(i, line.rstrip("\n")) for i, line in enumerate(f, 1)]
    top = split_levels(lines, "top", 1)
    errors = []
    top.check(opts, errors)
    for e in errors:
        print(f"ktap_check.py: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
