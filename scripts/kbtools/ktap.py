# SPDX-License-Identifier: GPL-2.0
"""Parse a KTAP stream into a tree of documents and check it strictly.

A document is one nesting level: its version line, plan, result lines,
diagnostics and '# Totals:' line. A nested document is indented by 4
spaces (run_all.sh, kunit) or prefixed by '# ' (run_kselftest.sh) and is
closed by the result line that follows it at its parent's level.

  doc = parse(lines)              # lines: str or iterable of lines
  doc = read(path)                # the same, of a file: its messages
                                  # name it ("PATH: line N: ...")
  errors = check(doc, no_fail=True, skip_reasons=True)

A reader that cannot use a line raises LineError(doc, num, why): the one
shape of such an error, naming the file and the line.
"""

import argparse
import re
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from typing import (Callable, Dict, Iterable, List, Optional, Sequence,
                    Tuple, Union)

from kbtools import cli

VERSION = re.compile(r"^(K?TAP) version (\d+)$")
PLAN = re.compile(r"^1\.\.(\d+)(\s+#.*)?$")
RESULT = re.compile(r"^(ok|not ok) ([0-9]+)(?: (?:- )?([^#]*?))?[ \t]*(?:#(.*))?$")
# Anything a reader could take for a result line, in any case or
# indentation: it must parse as RESULT or be reported.
RESULT_LIKE = re.compile(r"^\s*(not\s+)?ok\b", re.IGNORECASE)
BAIL_OUT = re.compile(r"^\s*Bail out!", re.IGNORECASE)
TOTALS = re.compile(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) "
                    r"skip:(\d+) error:(\d+)$")
TOTALS_LIKE = re.compile(r"^#\s*Totals\b", re.IGNORECASE)
HASH_VERSION = re.compile(r"^# K?TAP version \d+$")


class Directive(StrEnum):
    """A result's directive, as kselftest.h spells it ('' for none)."""
    NONE = ""
    SKIP = "SKIP"
    XFAIL = "XFAIL"
    XPASS = "XPASS"
    TODO = "TODO"
    ERROR = "error"


class Kind(StrEnum):
    """The '# Totals:' field a result counts in."""
    PASS = "pass"
    FAIL = "fail"
    XFAIL = "xfail"
    XPASS = "xpass"
    SKIP = "skip"
    ERROR = "error"


# The fields of a '# Totals:' line, in its order.
TOTALS_FIELDS: Tuple[Kind, ...] = tuple(Kind)
# A line of the stream: its number and its text at one level.
Line = Tuple[int, str]


@dataclass(eq=False)
class Result:
    """One result line: ok, number, description and comment (directive
    and reason); line is its number in the stream, text the line at its
    level."""
    line: int
    text: str
    ok: bool
    number: int
    name: str
    comment: str
    # The nested Document it closes.
    child: Optional["Document"] = field(default=None, repr=False)

    @classmethod
    def of_match(cls, line: int, match: "re.Match[str]") -> "Result":
        """The result of a line that RESULT matched."""
        return cls(line, match.group(0), match.group(1) == "ok",
                   int(match.group(2)), (match.group(3) or "").strip(),
                   (match.group(4) or "").strip())

    @property
    def directive(self) -> Directive:
        """SKIP, XFAIL, XPASS, TODO, error (of a 'not ok') or none."""
        word = self.comment.split(" ", 1)[0]
        if word.upper() in ("SKIP", "XFAIL", "XPASS", "TODO"):
            return Directive(word.upper())
        if not self.ok and word == "error":
            return Directive.ERROR
        return Directive.NONE

    @property
    def reason(self) -> str:
        """The text after the directive (or the whole comment)."""
        if self.directive:
            return self.comment[len(self.directive):].strip()
        return self.comment

    @property
    def kind(self) -> Kind:
        """The '# Totals:' field this result counts in."""
        d = self.directive
        if d == Directive.SKIP:
            return Kind.SKIP
        if d == Directive.XFAIL:
            return Kind.XFAIL
        if d == Directive.XPASS:
            return Kind.XPASS
        if d == Directive.ERROR:
            return Kind.ERROR
        return Kind.PASS if self.ok else Kind.FAIL


@dataclass
class Totals:
    """A '# Totals:' line: its number in the stream and its counts."""
    line: int
    counts: Dict[Kind, int]


@dataclass(eq=False, repr=False)
class Document:
    """One KTAP document at one nesting level; source is the file it was
    read from (None for a string)."""
    name: str
    first_line: int
    source: Optional[str] = None
    lines: List[Line] = field(default_factory=list)   # at this level
    children: List["Document"] = field(default_factory=list)  # nested
    version: Optional[int] = None    # its line, 0 when output came first
    plan: Optional[int] = None
    plan_comment: str = ""
    results: List[Result] = field(default_factory=list)
    totals: Optional[Totals] = None
    closed_by: Optional[int] = None  # the number of its parent's result
    problems: List[Line] = field(default_factory=list)  # found by parse()

    def where(self, num: int) -> str:
        """Line NUM of the stream, as messages name it: "PATH: line N",
        or "line N" for a stream that is no file."""
        return f"{self.source}: line {num}" if self.source else \
            f"line {num}"


class LineError(ValueError):
    """A line of a stream that a reader cannot use: "PATH: line N: why"."""

    def __init__(self, doc: Document, num: int, why: str) -> None:
        super().__init__(f"{doc.where(num)}: {why}")


def _new_child(parent: Document, nested: List[Line]) -> Document:
    child = _build(nested, f"{parent.name}/{len(parent.children) + 1}",
                   nested[0][0], parent.source)
    parent.children.append(child)
    return child


def _build(lines: Iterable[Line], name: str, first_line: int,
           source: Optional[str] = None) -> Document:
    """Split LINES into this level's lines and nested documents."""
    doc = Document(name, first_line, source)
    nested: List[Line] = []
    style: Optional[str] = None  # how the nested document is marked
    open_child: Optional[Document] = None  # waiting for its result

    def flush() -> None:
        nonlocal nested, style, open_child
        if nested:
            if open_child is not None:
                doc.problems.append((open_child.first_line,
                                     "nested document not closed by a "
                                     "result line"))
            open_child = _new_child(doc, nested)
        nested, style = [], None

    for num, text in lines:
        if text.startswith("    ") and style in (None, "indent"):
            style = "indent"
            nested.append((num, text[4:]))
            continue
        if style == "hash" and (text.startswith("# ") or text == "#"):
            nested.append((num, text[2:]))
            continue
        if style is None and HASH_VERSION.match(text):
            style = "hash"
            nested.append((num, text[2:]))
            continue
        flush()
        doc.lines.append((num, text))
        if open_child is not None and text.strip() and \
                not text.startswith("#"):
            m = RESULT.match(text)
            if m:
                open_child.closed_by = int(m.group(2))
            else:
                doc.problems.append((open_child.first_line,
                                     "nested document not closed by a "
                                     "result line"))
            open_child = None
    flush()
    if open_child is not None:
        doc.problems.append((open_child.first_line,
                             "nested document not closed by a result line"))
    _parse_level(doc)
    return doc


def _parse_level(doc: Document) -> None:
    """Read version, plan, results and totals of one level."""
    for num, text in doc.lines:
        if BAIL_OUT.match(text):
            doc.problems.append((num, f"bail out: {text.strip()!r}"))
            continue
        if doc.version is None:
            if VERSION.match(text):
                doc.version = num
                continue
            if text.startswith("#") or not text.strip():
                continue
            doc.problems.append((num, f"output before the version line: "
                                      f"{text!r}"))
            doc.version = 0
        m = PLAN.match(text)
        if m:
            if doc.plan is not None:
                doc.problems.append((num, "second plan"))
            if doc.results:
                doc.problems.append((num, "plan after results"))
            doc.plan = int(m.group(1))
            doc.plan_comment = (m.group(2) or "").strip().lstrip("#").strip()
            continue
        m = RESULT.match(text)
        if m:
            doc.results.append(Result.of_match(num, m))
            continue
        if RESULT_LIKE.match(text):
            doc.problems.append((num, f"malformed result line: {text!r}"))
            continue
        m = TOTALS.match(text)
        if m:
            if doc.totals is not None:
                doc.problems.append((num, "second totals line"))
            doc.totals = Totals(num, dict(zip(TOTALS_FIELDS,
                                              map(int, m.groups()))))
        elif TOTALS_LIKE.match(text):
            doc.problems.append((num, f"malformed totals line: {text!r}"))
    for child in doc.children:
        for r in doc.results:
            if r.number == child.closed_by and r.child is None:
                r.child = child
                break


def parse(lines: Union[str, Iterable[str]],
          source: Optional[str] = None) -> Document:
    """Parse a KTAP stream (a string or an iterable of lines); SOURCE
    names it in messages."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    numbered = [(i, line.rstrip("\n")) for i, line in enumerate(lines, 1)]
    return _build(numbered, "top", 1, source)


def read(path: str) -> Document:
    """Parse the KTAP file at PATH (bytes that are not UTF-8 read as
    U+FFFD); OSError when it cannot be read."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse(f.read(), path)


def counts(doc: Document) -> Dict[Kind, int]:
    """{field: count} of this level's results, as '# Totals:' counts them."""
    c = dict.fromkeys(TOTALS_FIELDS, 0)
    for r in doc.results:
        c[r.kind] += 1
    return c


Say = Callable[[int, str], None]


def _check_results(doc: Document, no_fail: bool, skip_reasons: bool,
                   say: Say) -> None:
    for i, r in enumerate(doc.results, 1):
        if r.number != i:
            say(r.line, f"result numbered {r.number}, expected {i}")
        if no_fail and not r.ok and r.directive != Directive.SKIP:
            say(r.line, f"not ok: {r.name} {r.comment}".rstrip())
        # A program that printed its own nested skip reason may be
        # summarised by a bare '# SKIP' at the runner's level.
        if skip_reasons and r.directive == Directive.SKIP and \
                not r.reason and not _skip_explained(r.child):
            say(r.line, "SKIP without a reason")


def _skip_explained(child: Optional[Document]) -> bool:
    """The nested document says why it skipped: '1..0 # SKIP why', or
    every result a SKIP with its reason."""
    if child is None:
        return False
    if child.plan == 0:
        return child.plan_comment.upper().startswith("SKIP") and \
            bool(child.plan_comment[4:].strip())
    return bool(child.results) and all(
        r.directive == Directive.SKIP and r.reason for r in child.results)


def check(doc: Document, no_fail: bool = False,
          skip_reasons: bool = False) -> List[str]:
    """Every problem of DOC and its nested documents, as messages naming
    the file (when DOC was read from one) and the line."""
    errors: List[str] = []

    def say(num: int, msg: str) -> None:
        errors.append(f"{doc.where(num)}: {doc.name}: {msg}")

    for num, msg in doc.problems:
        say(num, msg)
    if doc.version is None:
        say(doc.first_line, "no version line")
    if doc.plan is None:
        say(doc.first_line, "no plan")
    elif doc.plan == 0 and skip_reasons and \
            doc.plan_comment.upper().startswith("SKIP") and \
            not doc.plan_comment[4:].strip():
        say(doc.first_line, "SKIP without a reason")
    _check_results(doc, no_fail, skip_reasons, say)
    if doc.plan is not None and len(doc.results) != doc.plan:
        say(doc.first_line, f"plan says {doc.plan}, {len(doc.results)} results")
    if doc.totals:
        seen = counts(doc)
        for kind in TOTALS_FIELDS:
            said = doc.totals.counts[kind]
            if said != seen[kind]:
                say(doc.totals.line, f"totals say {kind}:{said}, the "
                                     f"results hold {seen[kind]}")
    for child in doc.children:
        errors.extend(check(child, no_fail, skip_reasons))
    return errors


# ---- the strict check (kbench ktap, scripts/ktap_check.py) ------------------

@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    """0 clean, 1 errors found (one line each on stderr), 2 bad usage."""
    ap = argparse.ArgumentParser(prog=prog,
                                 description="Strict KTAP stream check.")
    ap.add_argument("file", nargs="?", help="KTAP file (default: stdin)")
    ap.add_argument("--no-fail", action="store_true",
                    help="treat any 'not ok' as an error")
    ap.add_argument("--skip-reasons", action="store_true",
                    help="every SKIP must give a reason")
    opts = ap.parse_args(list(argv))
    with cli.reading(opts.file):
        doc = read(opts.file) if opts.file else parse(sys.stdin.read())
    errors = check(doc, no_fail=opts.no_fail,
                   skip_reasons=opts.skip_reasons)
    for e in errors:
        print(f"{prog}: {e}", file=sys.stderr)
    return 1 if errors else 0
