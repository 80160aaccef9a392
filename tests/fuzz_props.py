# SPDX-License-Identifier: GPL-2.0
"""What the property-based tests (test_fuzz_*.py) share: the hypothesis
import (a test module skips with this reason when it is missing; the
python_properties step of tests/run.sh fails instead), the settings of
the two runs, the JSON and KTAP strategies, running a CLI's main()
in-process so that a traceback is seen as the exception it is, a test's
temporary files and the check of an error line.

Two runs of the same properties (KBENCH_FUZZ_MODE):
  check    (default; make check) derandomized: a property's examples
           follow from its own source, so a commit always gives the same
           verdict. No example database, no deadline (a loaded machine is
           no failure). KBENCH_FUZZ_EXAMPLES examples (default 100) after
           the committed @example()s.
  explore  (make fuzz) fresh random examples, KBENCH_FUZZ_EXAMPLES
           (default 1000) per property, an example slower than 20 s is a
           failure.
Every strategy draws a plain value (a list of lines, an edit of a
document) and the test builds its input from it, so that a failing
example is printed as an @example(...) line to paste above the test: the
regression case of what exploration found.
"""

import contextlib
import copy
import functools
import inspect
import io
import json
import os
import sys
import tempfile
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Optional,
                    Sequence, Tuple, TypeVar)
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

# hypothesis keeps a cache in ./.hypothesis unless told otherwise: not in
# the tree.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(
    tempfile.gettempdir(), f"kbench-hypothesis-{os.getuid()}"))

try:
    from hypothesis import (HealthCheck, example, given, note, settings,
                            strategies as st)
    MISSING: Optional[str] = None
except ImportError:
    MISSING = ("hypothesis is not installed (Debian: python3-hypothesis; "
               "run with /usr/bin/python3)")
    # mypy reads hypothesis' own names above; these stand in for them.
    if not TYPE_CHECKING:
        class _Absent:
            """Stands for hypothesis' strategies and decorators so that the
            test modules load, and their classes skip with MISSING."""

            def __getattr__(self, name):
                return self

            def __call__(self, *args, **kwargs):
                return self

        st = _Absent()

        def given(*_args, **_kwargs):
            return lambda f: f

        def settings(*_args, **_kwargs):
            return lambda f: f

        def example(*_args, **_kwargs):
            return lambda f: f

        def note(_text):
            pass

        HealthCheck = []

# What the test modules take from here, hypothesis' names among them.
__all__ = ["HERE", "MISSING", "SCRIPTS", "Edit", "Breakage", "LineEdit",
           "assert_error", "breakages", "broken_json_text", "edited",
           "edited_lines", "edits", "example", "file_and", "json_values",
           "ktap_line", "ktap_lines", "line_edits", "load_docs", "load_json",
           "prop", "run_main", "spoiled_text", "spoilings", "st",
           "temp_paths", "write_text"]

MODES = {"check": 100, "explore": 1000}
MODE = os.environ.get("KBENCH_FUZZ_MODE") or "check"
if MODE not in MODES:
    raise ValueError(f"KBENCH_FUZZ_MODE={MODE!r}: want check (derandomized, "
                     f"make check) or explore (random, make fuzz)")
# Examples per property, besides the committed @example()s.
EXAMPLES = int(os.environ.get("KBENCH_FUZZ_EXAMPLES") or MODES[MODE])


# A test method, as the decorators below take and give it.
Test = Callable[..., None]
T = TypeVar("T")


def fuzz_settings(share: int = 1, deadline_s: int = 20
                  ) -> Callable[[T], T]:
    """Settings of a property in this run: a slow property (a page drawn
    by matplotlib) takes a SHARE of the examples, at least 10; exploring,
    an example slower than DEADLINE_S seconds fails."""
    explore = MODE == "explore"
    return settings(
        max_examples=EXAMPLES if share == 1 else max(10, EXAMPLES // share),
        derandomize=not explore, database=None,
        deadline=deadline_s * 1000 if explore else None,
        suppress_health_check=list(HealthCheck), print_blob=False)


def pasteable(test: Test) -> Test:
    """TEST (of keyword arguments drawn by @given) noting its arguments:
    hypothesis prints the note of the failing example it reports, as the
    line that makes it a committed regression case."""
    where = f"{os.path.basename(inspect.getsourcefile(test) or '?')}, " \
            f"above {test.__qualname__}"

    @functools.wraps(test)
    def run(self: unittest.TestCase, **kwargs: Any) -> None:
        args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
        note(f"@example({args})  # {where}")
        test(self, **kwargs)
    return run


def prop(share: int = 1, deadline_s: int = 20,
         **strategies: "st.SearchStrategy[Any]") -> Callable[[Test], Test]:
    """@given(**STRATEGIES) with fuzz_settings(SHARE, DEADLINE_S), the
    failing example printed as an @example(...) line (see pasteable)."""
    def wrap(test: Test) -> Test:
        return fuzz_settings(share, deadline_s)(
            given(**strategies)(pasteable(test)))
    return wrap


def run_main(main: Callable[..., int], argv: List[str],
             prog: Optional[str] = None) -> Tuple[int, str, str]:
    """(exit status, stdout, stderr) of main(argv), or of the task
    main(argv, prog); a usage error's SystemExit is a status, any other
    exception propagates. Standard output is UTF-8, strict, as a real
    one is: text that cannot be written (a lone surrogate) fails there
    too."""
    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict",
                           write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv) if prog is None else main(argv, prog)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) \
                else int(e.code is not None)
    return rc, raw.getvalue().decode("utf-8"), err.getvalue()


def temp_paths(testcase: unittest.TestCase, *names: str) -> List[str]:
    """Paths of NAMES in a temporary directory removed after the test."""
    tmp = tempfile.TemporaryDirectory()
    testcase.addCleanup(tmp.cleanup)
    return [os.path.join(tmp.name, name) for name in names]


def assert_error(testcase: unittest.TestCase, err: str, prog: str, paths: Sequence[str],
                 then: Sequence[str] = ()) -> str:
    """stderr ERR is PROG's one error line ("PROG: ...") naming one of
    PATHS, then the lines THEN (a usage hint); that error line."""
    lines = err.strip("\n").split("\n")
    testcase.assertTrue(lines[0].startswith(prog + ": "), err)
    testcase.assertTrue(any(p in lines[0] for p in paths), err)
    testcase.assertEqual(lines[1:], list(then), err)
    return lines[0]


def write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)


def json_values() -> "st.SearchStrategy[Any]":
    """Any JSON value, nested a little; its strings may hold a lone
    surrogate (what the escape "\\ud800" reads as)."""
    leaf = st.one_of(st.none(), st.booleans(),
                     st.integers(min_value=-2**70, max_value=2**70),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.text(st.characters(blacklist_categories=()),
                             max_size=8))
    return st.recursive(leaf, lambda c: st.one_of(
        st.lists(c, max_size=4),
        st.dictionaries(st.text(max_size=6), c, max_size=4)), max_leaves=8)


# An edit of a JSON document: (ACTION, PATH, VALUE). PATH is the keys and
# indices from the top to the part edited; ACTION "replace" puts VALUE
# there (PATH () replaces the whole document), "remove" deletes it,
# "duplicate" copies it (a list element twice, an object member under
# its key + "_"; VALUE None).
Edit = Tuple[str, Tuple[Any, ...], Any]


@st.composite
def edits(draw: "st.DrawFn", doc: Any) -> Edit:
    """An edit of DOC: descend into a random part, then replace it by any
    JSON value, remove it or duplicate it."""
    path: List[Any] = []
    value = doc
    while True:
        children = (list(value.keys()) if isinstance(value, dict) else
                    list(range(len(value))) if isinstance(value, list)
                    else [])
        action = draw(st.sampled_from(
            ["descend"] * 3 + ["replace", "remove", "duplicate"]
            if children else ["replace"]))
        if action == "replace":
            return ("replace", tuple(path), draw(json_values()))
        key = draw(st.sampled_from(children))
        path.append(key)
        if action != "descend":
            return (action, tuple(path), None)
        value = value[key]


def edited(doc: Any, edit: Edit) -> Any:
    """A copy of DOC with EDIT made (see edits())."""
    action, path, value = edit
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(doc)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if action == "replace":
        parent[key] = copy.deepcopy(value)
    elif action == "remove":
        del parent[key]
    elif isinstance(parent, dict):
        parent[key + "_"] = parent[key]
    else:
        parent.insert(key, parent[key])
    return out


# A spoiling of a document's JSON text (json.dumps(doc, indent=1)):
# ("truncate", N) keeps its first N characters; ("nonfinite", I, WORD)
# puts WORD (NaN, 1e999, ...) for the number at index I (at the end when
# I is the length); ("byte", I, CHAR) puts CHAR for the character at I.
Breakage = Tuple[Any, ...]


@st.composite
def breakages(draw: "st.DrawFn", doc: Any) -> Breakage:
    """A spoiling of DOC's text: truncated, a number made non-finite, or
    a character replaced."""
    text = json.dumps(doc, indent=1)
    how = draw(st.sampled_from(["truncate", "nonfinite", "byte"]))
    if how == "truncate":
        return (how, draw(st.integers(0, max(0, len(text) - 1))))
    if how == "nonfinite":
        word = draw(st.sampled_from(["NaN", "Infinity", "-Infinity",
                                     "1e999", "-1e999"]))
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        return (how, draw(st.sampled_from(digits)) if digits else len(text),
                word)
    return (how, draw(st.integers(0, max(0, len(text) - 1))),
            draw(st.characters()))


def broken_json_text(doc: Any, breakage: Breakage) -> str:
    """The text of DOC spoiled by BREAKAGE (see breakages())."""
    text = json.dumps(doc, indent=1)
    how = breakage[0]
    if how == "truncate":
        return text[:breakage[1]]
    i = breakage[1]
    if how == "nonfinite":
        j = i
        while j < len(text) and (text[j].isdigit() or text[j] in ".e-+"):
            j += 1
        return text[:i] + str(breakage[2]) + text[j:]
    return text[:i] + str(breakage[2]) + text[i + 1:]


@st.composite
def spoilings(draw: "st.DrawFn", doc: Any) -> Tuple[str, Any]:
    """("mutate", an edit of DOC), ("spoil", a breakage of its text) or
    ("any", any JSON value in its place)."""
    how = draw(st.sampled_from(["mutate", "spoil", "any"]))
    if how == "mutate":
        return (how, draw(edits(doc)))
    if how == "spoil":
        return (how, draw(breakages(doc)))
    return (how, draw(json_values()))


def spoiled_text(doc: Any, spoiling: Tuple[str, Any],
                 dump: Callable[[Any], str] = json.dumps) -> str:
    """The text SPOILING (see spoilings()) makes of DOC, dumped with
    DUMP."""
    how, what = spoiling
    if how == "mutate":
        return dump(edited(doc, what))
    if how == "spoil":
        return broken_json_text(doc, what)
    return dump(what)


def ktap_line() -> "st.SearchStrategy[str]":
    """A KTAP-ish line: what run_all.sh and kselftest write, or a near
    miss of it."""
    word = st.text(st.characters(blacklist_categories=("Cs",),
                                 blacklist_characters="\n\r"), max_size=12)
    num = st.integers(min_value=-1, max_value=2**70).map(str)
    indent = st.sampled_from(["", "    ", "        ", "# ", "# # ", "\t"])
    line = st.one_of(
        st.builds(lambda v: f"TAP version {v}", num),
        st.builds(lambda v: f"KTAP version {v}", num),
        st.builds(lambda n: f"1..{n}", num),
        st.builds(lambda ok, n, name, d: f"{ok} {n} {name}{d}",
                  st.sampled_from(["ok", "not ok", "OK", "not  ok"]), num,
                  word, st.sampled_from(["", " # SKIP", " # SKIP why",
                                         " # XFAIL x", " # error", " #"])),
        st.builds(lambda *v: "# Totals: pass:{} fail:{} xfail:{} xpass:{} "
                  "skip:{} error:{}".format(*v), *[num] * 6),
        st.just("Bail out!"),
        st.builds(lambda w: f"# {w}", word),
        word)
    return st.builds(lambda i, s: f"{i}{s}", indent, line)


def ktap_lines() -> "st.SearchStrategy[List[str]]":
    """Up to 30 KTAP-ish lines."""
    return st.lists(ktap_line(), max_size=30)


# Edits of a stream's lines, made one after the other: (I, "drop"),
# (I, "double"), (I, "cut") (the stream ends before line I) or
# (I, "replace", LINE); I counts from 0 in the lines as the edits before
# left them.
LineEdit = Tuple[Any, ...]


@st.composite
def line_edits(draw: "st.DrawFn", lines: Sequence[str],
               hows: Sequence[str] = ("drop", "double", "replace")
               ) -> List[LineEdit]:
    """One to four edits of LINES (see above), of the kinds HOWS."""
    out: List[LineEdit] = []
    n = len(lines)
    for _ in range(draw(st.integers(1, 4))):
        if not n:
            break
        i = draw(st.integers(0, n - 1))
        how = draw(st.sampled_from(hows))
        if how == "replace":
            out.append((i, how, draw(ktap_line())))
            continue
        out.append((i, how))
        n += {"drop": -1, "double": 1}.get(how, 0)
        if how == "cut":
            n = i
    return out


def edited_lines(lines: Sequence[str], edits: Sequence[LineEdit]
                 ) -> List[str]:
    """A copy of LINES with EDITS made (see line_edits())."""
    out = list(lines)
    for e in edits:
        i, how = e[0], e[1]
        if how == "drop":
            del out[i]
        elif how == "double":
            out.insert(i, out[i])
        elif how == "cut":
            del out[i:]
        else:
            out[i] = e[2]
    return out


def load_json(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        doc: Dict[str, Any] = json.load(f)
        return doc


def load_docs(directory: str) -> Dict[str, Any]:
    """{file name: document} of the .json files in DIRECTORY."""
    return {name: load_json(os.path.join(directory, name))
            for name in sorted(os.listdir(directory))
            if name.endswith(".json")}


def file_and(docs: Dict[str, Any],
             strategy: Callable[[Any], "st.SearchStrategy[Any]"]
             ) -> "st.SearchStrategy[Tuple[str, Any]]":
    """(a file name of DOCS, a value that STRATEGY(its document) draws):
    an edit (edits) or a spoiling (breakages, spoilings) of one file."""
    return st.sampled_from(sorted(docs)).flatmap(
        lambda name: st.tuples(st.just(name), strategy(docs[name])))
