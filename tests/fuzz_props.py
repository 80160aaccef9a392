# SPDX-License-Identifier: GPL-2.0
"""What the property-based tests (test_fuzz_*.py) share: the hypothesis
import (a test module skips with this reason when it is missing; the
python_properties step of tests/run.sh fails instead), the settings, JSON
and KTAP strategies, and running a CLI's main() in-process so that a
traceback is seen as the exception it is."""

import contextlib
import io
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.path.insert(0, SCRIPTS)

# hypothesis keeps a cache in ./.hypothesis unless told otherwise: not in
# the tree.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(
    tempfile.gettempdir(), f"kbench-hypothesis-{os.getuid()}"))

try:
    from hypothesis import HealthCheck, given, settings, strategies as st
    MISSING = None
except ImportError:
    MISSING = ("hypothesis is not installed (Debian: python3-hypothesis; "
               "run with /usr/bin/python3)")

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

    def settings(**_kwargs):
        return lambda f: f

    HealthCheck = []

# KBENCH_FUZZ_EXAMPLES: examples per property (default 150; more for a
# longer run). No example database: nothing is written into the tree.
EXAMPLES = int(os.environ.get("KBENCH_FUZZ_EXAMPLES", "150"))


def fuzz_settings():
    """Settings of every property: a slow machine is no failure, but an
    example that takes longer than 20 s is a hang."""
    return settings(max_examples=EXAMPLES, deadline=20000, database=None,
                    suppress_health_check=list(HealthCheck),
                    print_blob=True)


def run_main(main, argv):
    """(exit status, stdout, stderr) of main(argv); a usage error's
    SystemExit is a status, any other exception propagates."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def json_values():
    """Any JSON value, nested a little."""
    leaf = st.one_of(st.none(), st.booleans(),
                     st.integers(min_value=-2**70, max_value=2**70),
                     st.floats(allow_nan=False, allow_infinity=False),
                     st.text(max_size=8))
    return st.recursive(leaf, lambda c: st.one_of(
        st.lists(c, max_size=4),
        st.dictionaries(st.text(max_size=6), c, max_size=4)), max_leaves=8)


def mutate(data, value, depth=0):
    """A copy of value with one part replaced by any JSON value, removed,
    or duplicated (a list element twice), drawn from data."""
    children = (list(value.keys()) if isinstance(value, dict) else
                list(range(len(value))) if isinstance(value, list) else [])
    action = data.draw(st.sampled_from(
        ["descend"] * 3 + ["replace", "remove", "duplicate"]
        if children else ["replace"]))
    if action == "replace":
        return data.draw(json_values())
    key = data.draw(st.sampled_from(children))
    if isinstance(value, dict):
        out = dict(value)
        if action == "descend":
            out[key] = mutate(data, value[key], depth + 1)
        elif action == "remove":
            del out[key]
        else:
            out[key + "_"] = value[key]
        return out
    out = list(value)
    if action == "descend":
        out[key] = mutate(data, value[key], depth + 1)
    elif action == "remove":
        del out[key]
    else:
        out.insert(key, value[key])
    return out


def broken_json_text(data, doc):
    """The text of doc, spoiled: truncated, a number made non-finite, or
    a byte replaced."""
    text = json.dumps(doc, indent=1)
    how = data.draw(st.sampled_from(["truncate", "nonfinite", "byte"]))
    if how == "truncate":
        return text[:data.draw(st.integers(0, max(0, len(text) - 1)))]
    if how == "nonfinite":
        word = data.draw(st.sampled_from(["NaN", "Infinity", "-Infinity",
                                          "1e999", "-1e999"]))
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if not digits:
            return text + word
        i = data.draw(st.sampled_from(digits))
        j = i
        while j < len(text) and (text[j].isdigit() or text[j] in ".e-+"):
            j += 1
        return text[:i] + word + text[j:]
    i = data.draw(st.integers(0, max(0, len(text) - 1)))
    return text[:i] + data.draw(st.characters()) + text[i + 1:]


def spoiled_text(data, doc, dump=json.dumps):
    """The text of doc mutated (dumped with dump), spoiled, or replaced by
    any JSON value, drawn from data."""
    how = data.draw(st.sampled_from(["mutate", "spoil", "any"]))
    if how == "mutate":
        return dump(mutate(data, doc))
    if how == "spoil":
        return broken_json_text(data, doc)
    return dump(data.draw(json_values()))


def write_text(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)


def ktap_lines():
    """KTAP-ish lines: what run_all.sh and kselftest write, and near
    misses of each."""
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
    return st.lists(st.builds(lambda i, s: i + s, indent, line), max_size=30)


def mutate_lines(data, lines, hows=("drop", "double", "replace")):
    """A copy of lines (a KTAP stream's) with one to four lines dropped,
    doubled, replaced by a KTAP-like line, or (how "cut") the stream cut
    off there."""
    lines = list(lines)
    for _ in range(data.draw(st.integers(1, 4))):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        how = data.draw(st.sampled_from(hows))
        if how == "drop":
            del lines[i]
        elif how == "double":
            lines.insert(i, lines[i])
        elif how == "cut":
            del lines[i:]
        else:
            lines[i] = data.draw(ktap_lines().filter(bool))[0]
    return lines
