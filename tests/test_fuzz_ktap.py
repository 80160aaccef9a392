# SPDX-License-Identifier: GPL-2.0
"""Property-based tests of scripts/ktap_check.py and kbtools.ktap: any
text, KTAP-like or not, gives a verdict (exit 0 or 1, one error per
line on stderr naming the file and the line), never a traceback or a
hang; a well-formed stream built from random results passes."""

import unittest
from typing import List, Tuple

import fuzz_props
from fuzz_props import MISSING, prop, st

from kbtools import ktap  # noqa: E402


@unittest.skipIf(MISSING, MISSING or "")
class KtapProperties(unittest.TestCase):
    def setUp(self) -> None:
        self.path, = fuzz_props.temp_paths(self, "run.ktap")

    def check_file(self, text: str, *opts: str) -> Tuple[int, str]:
        fuzz_props.write_text(self.path, text)
        rc, out, err = fuzz_props.run_main(ktap.main,
                                           list(opts) + [self.path],
                                           "ktap_check.py")
        self.assertIn(rc, (0, 1), err)
        self.assertEqual(out, "")
        self.assertEqual(rc == 1, bool(err), err)
        # Every error names the file and the line.
        for line in err.splitlines():
            self.assertTrue(line.startswith(
                f"ktap_check.py: {self.path}: line "), err)
        return rc, err

    @prop(lines=fuzz_props.ktap_lines(),
          opts=st.sampled_from([(), ("--no-fail",), ("--skip-reasons",)]))
    def test_ktap_like_lines(self, lines: List[str],
                             opts: Tuple[str, ...]) -> None:
        self.check_file("\n".join(lines) + "\n", *opts)

    @prop(text=st.text(max_size=400))
    def test_any_text(self, text: str) -> None:
        self.check_file(text)

    @prop(data=st.binary(max_size=400))
    def test_any_bytes(self, data: bytes) -> None:
        with open(self.path, "wb") as f:
            f.write(data)
        rc, out, err = fuzz_props.run_main(ktap.main, [self.path],
                                           "ktap_check.py")
        self.assertIn(rc, (0, 1), err)

    @prop(results=st.lists(st.tuples(
        st.sampled_from(["ok", "not ok", "skip"]),
        st.text(st.characters(whitelist_categories=("L", "N"),
                              whitelist_characters="_-."),
                min_size=1, max_size=10)), max_size=12))
    def test_well_formed_passes(self, results: List[Tuple[str, str]]
                                ) -> None:
        """A stream written by the rules passes, and parses back whole."""
        lines = ["TAP version 13", f"1..{len(results)}"]
        counts = {"pass": 0, "fail": 0, "skip": 0}
        for i, (kind, name) in enumerate(results, 1):
            if kind == "skip":
                lines.append(f"ok {i} {name} # SKIP no reason needed")
                counts["skip"] += 1
            else:
                lines.append(f"{kind} {i} {name}")
                counts["pass" if kind == "ok" else "fail"] += 1
        lines.append(f"# Totals: pass:{counts['pass']} fail:{counts['fail']}"
                     f" xfail:0 xpass:0 skip:{counts['skip']} error:0")
        rc, err = self.check_file("\n".join(lines) + "\n")
        self.assertEqual(rc, 0, err)
        self.assertEqual(ktap.check(ktap.parse("\n".join(lines))), [])
        self.assertEqual(len(ktap.parse("\n".join(lines)).results),
                         len(results))


if __name__ == "__main__":
    unittest.main()
