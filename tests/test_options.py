# SPDX-License-Identifier: GPL-2.0
"""kbtools.options against run_all.sh: the bash runner keeps its own case
statement, and this test fails when its options and the table differ
(names, which take a value, what the value must be, the help, what is
handed over to kbench run; what the plan passes to every program);
and kbtools.vm's walk of a guest run's command line, which is the
table's."""

import os
import re
import subprocess
import sys
import unittest
from typing import Dict, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import cli, options, plan, vm  # noqa: E402

RUN_ALL = os.path.join(TOP, "run_all.sh")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def block(text: str, start: str, end: str) -> str:
    """The text from the line start to the next line end after it."""
    at = text.index(start)
    return text[at:text.index(end, at)]


def arms(case: str) -> List[Tuple[List[str], str]]:
    """The arms of a bash case statement: (patterns, body)."""
    out: List[Tuple[List[str], str]] = []
    for m in re.finditer(r"(?ms)^\t(\S[^\n]*?)\)(.*?);;", case):
        out.append(([p.strip() for p in m.group(1).split("|")],
                     m.group(2)))
    return out


class Runner:
    """What run_all.sh's option loop says of each option."""

    def __init__(self, text: str):
        loop = block(text, "while (($#)); do\n\tcase $1 in", "\n\tesac")
        self.needs: Dict[str, str] = {}      # name -> need_value's words
        self.inline: Set[str] = set()        # NAME=* arms
        self.switches: Set[str] = set()
        self.refused: Dict[str, str] = {}    # name -> its die_usage
        self.optional_number: Set[str] = set()
        for patterns, body in arms(loop):
            names = [p for p in patterns if not p.endswith("=*")]
            self.inline |= {p[:-2] for p in patterns if p.endswith("=*")}
            need = re.search(r'need_value "\$1" "([^"]*)"', body)
            refused = re.search(r'die_usage "([^"]*)"', body)
            for n in names:
                if n in ("*", "-h", "--help"):
                    continue
                if need:
                    self.needs[n] = need.group(1)
                elif "=~ ^[0-9]+$" in body:
                    self.optional_number.add(n)
                elif refused:
                    self.refused[n] = refused.group(1)
                else:
                    self.switches.add(n)
        over = block(text, 'for arg in "$@"; do', "\ndone")
        self.handed_over = {p for patterns, _ in arms(over.replace(
            "\t\t", "\t")) for p in patterns}


class AgainstRunAll(unittest.TestCase):
    runner = Runner(read(RUN_ALL))

    def test_every_option_of_the_table_is_run_alls(self) -> None:
        r = self.runner
        for o in options.RUNNER:
            for n in o.names:
                with self.subTest(option=n):
                    if o.needs:
                        self.assertEqual(o.needs, r.needs.get(n))
                    elif o.optional_number:
                        self.assertIn(n, r.optional_number)
                    else:
                        self.assertIn(n, r.switches)
            with self.subTest(option=o.long):
                # --opt=value for every option with a value.
                self.assertEqual(bool(o.needs or o.optional_number),
                                 o.long in r.inline)

    def test_every_option_of_run_all_is_the_tables(self) -> None:
        r = self.runner
        ours = {n for o in options.RUNNER for n in o.names}
        self.assertEqual(ours, set(r.needs) | r.switches |
                         r.optional_number)
        self.assertEqual(ours, {n for o in options.RUNNER for n in o.names
                                if not (o.needs or o.optional_number)}
                         | set(r.needs) | r.optional_number)
        # What it refuses without --kernel is a guest run's.
        guest = {n for o in options.GUEST for n in o.names}
        self.assertTrue(r.refused)
        for n, why in r.refused.items():
            self.assertIn(n, guest)
            self.assertIn("needs --kernel", why)
        self.assertEqual(set(options.HANDED_OVER), r.handed_over)

    def test_what_every_program_gets_is_the_tables(self) -> None:
        # The plan (kbench run's, a guest's) passes them, not run_all.sh.
        step = plan.make(plan.Request(("t:p",), full=True,
                                      json_dir="/j")).steps[0]
        self.assertEqual({o.long for o in options.PROGRAM},
                         {w for w in step.command() if w.startswith("--")}
                         - {"--kill-after=10"})

    def test_the_help_names_each_with_its_value(self) -> None:
        text = subprocess.run([RUN_ALL, "--help"], capture_output=True,
                              text=True, check=True).stdout
        for o in [*options.RUNNER, *options.AB, options.find("--kernel"),
                  options.find("--arch"), options.find("--icount")]:
            with self.subTest(option=o.long):
                said = o.long + (f" {o.metavar}" if o.needs else
                                 f" [{o.metavar}]" if o.optional_number
                                 else "")
                self.assertRegex(text, rf"(?m)^ +(-., )?{re.escape(said)}"
                                 r"( |$)")


class TheWalk(unittest.TestCase):
    def test_values_go_where_the_table_says(self) -> None:
        """Each option of run_all.sh with a value goes to the guest with
        it (the value never read as an option), but the host's."""
        for o in options.RUNNER:
            if not o.needs:
                continue
            # A number of seconds is checked on the host.
            value = "5" if o.key == "timeout" else "--icount"
            for n in o.names:
                values, run, _ = vm.walk([n, value])
                if o.long in options.HOST:
                    self.assertEqual([value], values[o.key], n)
                    self.assertEqual([], run.args)
                else:
                    self.assertEqual([n, value], run.args, n)
                    self.assertNotIn("icount", values)
        values, run, _ = vm.walk(["--memory", "-t", "-t", "x"])
        self.assertEqual((["-t"], ["-t", "x"]), (values["memory"],
                                                 run.args))

    def test_a_missing_value_says_what_it_must_be(self) -> None:
        for name in ("-t", "--nest", "--vs-prefix", "--cpus", "--json"):
            with self.assertRaisesRegex(cli.Error,
                                        f"option '{name}' needs "
                                        f"{re.escape(options.find(name).needs)}"):
                vm.walk([name])


if __name__ == "__main__":
    unittest.main()
