# SPDX-License-Identifier: GPL-2.0
"""scripts/bisect.sh and kbtools.bisect without kernel builds: argument
handling, state and --resume, the tree left as it was, and the decisions
on figures recorded from real boots (tests/data/bisect/)."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SCRIPTS = os.path.join(TOP, "scripts")
DATA = os.path.join(HERE, "data", "bisect")
sys.path.insert(0, SCRIPTS)

from kbtools import bisect, results  # noqa: E402

TEST, ROW = "syscall_overhead", "getsid"


def boot_doc(medians):
    """One boot's syscall_overhead.json: row name -> median (us)."""
    rows = [{"name": name, "status": "ok", "unit": "us", "n": 100,
             "mean": v, "median": v, "min": v * 0.95, "max": v * 1.3,
             "stddev": v * 0.05, "rsd_pct": 5.0} for name, v in
            medians.items()]
    return {"schema": results.SCHEMA, "test": TEST,
            "kernel": {"release": "6.12.117-kbench-bisect"},
            "machine": {"guest": "tcg"}, "date": "2026-11-23T17:00:00Z",
            "end_date": "2026-11-23T17:00:10Z", "cmdline": TEST,
            "params": {}, "rows": rows}


def recorded():
    with open(os.path.join(DATA, "figures.json"), encoding="utf-8") as f:
        return json.load(f)


class StateCase(unittest.TestCase):
    """A state directory filled with boots of given figures."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.state = os.path.join(self.tmp.name, "state")

    def init(self, good="g" * 40, bad="b" * 40, direction="slower",
             max_repeat=8, alpha=0.01, targets=(f"{TEST}:{ROW}",),
             check=""):
        self.assertEqual(0, bisect.main(
            ["init", self.state, "/tree", good, bad, direction,
             str(max_repeat), str(alpha), "2", check] + list(targets)))
        return bisect.load_settings(self.state)

    def boots(self, commit, values, row=ROW):
        d = bisect.boots_dir(self.state, commit)
        os.makedirs(d, exist_ok=True)
        k = len(bisect.usable_boots(self.state, commit))
        for v in values:
            k += 1
            os.makedirs(os.path.join(d, str(k)))
            results.write_json(os.path.join(d, str(k), TEST + ".json"),
                               boot_doc({row: v}))

    def runs(self, st, step=None):
        good = bisect.load_run(self.state, st["good"], "good")
        bad = bisect.load_run(self.state, st["bad"], "bad")
        s = bisect.load_run(self.state, step, "step") if step else None
        return good, bad, s


class Settings(StateCase):
    def test_targets(self):
        self.assertEqual(("a", "b"), bisect.parse_target("a:b"))
        self.assertEqual(("a", None), bisect.parse_target("a"))
        for bad in ("", ":b", "a:", "a:b:c"):
            with self.assertRaises(bisect.BisectError, msg=bad):
                bisect.parse_target(bad)

    def test_settings_checked(self):
        st = self.init()
        self.assertEqual(5, st["min_boots"])
        self.assertEqual(4, bisect.make_settings(
            "/t", "g", "b", "slower", 8, 0.05, 2, "", ["a"])["min_boots"])
        for args in (("sideways", 8, 0.01), ("slower", 4, 0.01),
                     ("slower", 8, 1.5), ("slower", "x", 0.01)):
            with self.assertRaises(bisect.BisectError, msg=args):
                bisect.make_settings("/t", "g", "b", args[0], args[1],
                                     args[2], 2, "", ["a"])

    def test_cli_usage(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.cli_usage()
        self.assertIn("usage: python3 -m kbtools.bisect", err.getvalue())

    def cli_usage(self):
        self.assertEqual(2, bisect.main([]))
        self.assertEqual(2, bisect.main(["nope"]))
        self.assertEqual(2, bisect.main(["get", self.state, "good"]))
        self.init()
        self.assertEqual(2, bisect.main(["get", self.state, "nope"]))
        self.assertEqual(2, bisect.main(["targets", "a:b:c"]))
        self.assertEqual(0, bisect.main(["targets", "a:b", "c"]))
        # Classifying before the endpoints were compared is an error.
        self.assertEqual(2, bisect.main(["classify", self.state, "c" * 40,
                                         "5", "8", "subject", "5"]))


class Decisions(StateCase):
    """Figures recorded from real runs (tests/data/bisect/figures.json
    says which): getsid medians per repetition."""

    def setUp(self):
        super().setUp()
        self.fig = recorded()

    def endpoints(self, st, good, bad):
        self.boots(st["good"], good)
        self.boots(st["bad"], bad)
        g, b, _ = self.runs(st)
        return bisect.endpoints(st, g, b)

    def test_endpoints_differ(self):
        st = self.init()
        signal, msg = self.endpoints(st, self.fig["good"], self.fig["bad"])
        self.assertEqual([{"test": TEST, "row": ROW}], signal)
        self.assertIsNone(msg)

    def test_no_change_is_no_culprit(self):
        st = self.init()
        signal, msg = self.endpoints(st, self.fig["no_change"]["good"],
                                     self.fig["no_change"]["bad"])
        self.assertEqual([], signal)
        self.assertRegex(msg, r"^no culprit: good and bad do not differ on "
                              r"syscall_overhead:getsid \(x[0-9.]+, CI "
                              r"[0-9.]+-[0-9.]+, same\)$")

    def test_endpoints_look_again_before_the_cap(self):
        """Not different yet: exit 10 and a progress line before the last
        look, the 'no culprit' line (exit 1) only at --max-repeat."""
        st = self.init()
        self.boots(st["good"], self.fig["no_change"]["good"])
        self.boots(st["bad"], self.fig["no_change"]["bad"])
        for final, rc, line in (("0", bisect.EXIT_MORE,
                                 r"^endpoints: no difference yet on .*: one "
                                 r"more boot of each$"),
                                ("1", 1, r"^no culprit: good and bad do not "
                                         r"differ on ")):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(rc, bisect.main(["endpoints", self.state,
                                                  final]))
            self.assertRegex(out.getvalue().strip(), line)
            self.assertFalse(os.path.exists(
                os.path.join(self.state, bisect.SIGNAL)))
        self.assertEqual(2, bisect.main(["endpoints", self.state, "x"]))
        # A difference is kept at any look.
        self.state = os.path.join(self.tmp.name, "state2")
        st = self.init()
        self.boots(st["good"], self.fig["good"])
        self.boots(st["bad"], self.fig["bad"])
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(0, bisect.main(["endpoints", self.state, "0"]))
        self.assertTrue(os.path.exists(os.path.join(self.state,
                                                    bisect.SIGNAL)))

    def test_wrong_direction_is_no_culprit(self):
        st = self.init(direction="faster")
        signal, msg = self.endpoints(st, self.fig["good"], self.fig["bad"])
        self.assertEqual([], signal)
        self.assertIn("slower", msg)

    def test_unnamed_row_is_not_followed(self):
        st = self.init(targets=(f"{TEST}:getpid",))
        signal, msg = self.endpoints(st, self.fig["good"], self.fig["bad"])
        self.assertEqual([], signal)
        self.assertIn("was measured on both", msg)
        # More boots cannot measure a row that is in no boot: the last
        # word at once, also before the last look.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(1, bisect.main(["endpoints", self.state, "0"]))
        self.assertRegex(out.getvalue(), r"^no culprit: none of the rows ")

    def classify(self, st, step_values, max_boots=8):
        self.boots("s" * 40, step_values)
        g, b, s = self.runs(st, "s" * 40)
        return bisect.classify(st, [{"test": TEST, "row": ROW}], g, b, s,
                               len(step_values), max_boots)

    def test_recorded_steps(self):
        for step in self.fig["steps"]:
            with self.subTest(step=step["subject"]):
                shutil.rmtree(self.state, ignore_errors=True)
                st = self.init()
                self.boots(st["good"], self.fig["good"])
                self.boots(st["bad"], self.fig["bad"])
                c, e = self.classify(st, step["values"])
                self.assertEqual(step["verdict"], c)
                self.assertEqual(len(step["values"]), e["n_candidate"])

    def test_demo_run_replayed(self):
        """The end-to-end demo's boots: the endpoints differ at 5+5, each
        step gets its recorded class from the endpoint boots there were
        then, and the no-change series differs at none of its looks."""
        demo = self.fig["demo"]["regression"]
        st = self.init()
        signal, _ = self.endpoints(st, demo["good"][:5], demo["bad"][:5])
        self.assertEqual([{"test": TEST, "row": ROW}], signal)
        for step in demo["steps"]:
            with self.subTest(step=step["subject"]):
                shutil.rmtree(self.state, ignore_errors=True)
                st = self.init()
                self.boots(st["good"], demo["good"][:step["good_boots"]])
                self.boots(st["bad"], demo["bad"][:step["bad_boots"]])
                c, _ = self.classify(st, step["values"])
                self.assertEqual(step["verdict"], c)
        nc = self.fig["demo"]["no_change"]
        for n in range(5, len(nc["good"]) + 1):
            with self.subTest(no_change_boots=n):
                shutil.rmtree(self.state, ignore_errors=True)
                st = self.init()
                signal, msg = self.endpoints(st, nc["good"][:n],
                                             nc["bad"][:n])
                self.assertEqual([], signal)
                self.assertIn("do not differ", msg)

    def test_too_few_boots_wants_more(self):
        st = self.init()
        self.boots(st["good"], self.fig["good"])
        self.boots(st["bad"], self.fig["bad"])
        c, _ = self.classify(st, self.fig["bad"][:2])
        self.assertEqual("more", c)

    def test_between_endpoints_is_skipped_at_the_cap(self):
        """A step half-way between good and bad, as noisy as the
        endpoints, is neither: more boots, then skip, never a class."""
        st = self.init()
        self.boots(st["good"], self.fig["good"])
        self.boots(st["bad"], self.fig["bad"])
        g, b = sorted(self.fig["good"]), sorted(self.fig["bad"])
        mid = [(x + y) / 2 for x, y in zip(g, b)]
        mix = [mid[0], b[0], g[-1], mid[-1], b[1]]
        self.assertEqual("more", self.classify(st, mix, 8)[0])
        shutil.rmtree(bisect.boots_dir(self.state, "s" * 40))
        self.assertEqual("skip", self.classify(st, mix, 5)[0])

    def test_faster_direction(self):
        """--faster: bad is the faster side; the same figures swapped."""
        st = self.init(direction="faster")
        signal, _ = self.endpoints(st, self.fig["bad"], self.fig["good"])
        self.assertEqual(1, len(signal))
        self.assertEqual("bad", self.classify(st, self.fig["good"])[0])
        shutil.rmtree(bisect.boots_dir(self.state, "s" * 40))
        self.assertEqual("good", self.classify(st, self.fig["bad"])[0])


class Streams(unittest.TestCase):
    COMPLETE = """TAP version 13
1..1
    KTAP version 1
    1..2
    ok 1 ioctl_errors
    not ok 2 ks_matches_legacy
    # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0
not ok 1 selftests: kbench/taskstats: taskstats
# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0
"""

    def test_complete(self):
        self.assertEqual([], bisect.stream_problems(self.COMPLETE))

    def test_incomplete(self):
        cut = "\n".join(self.COMPLETE.splitlines()[:5]) + "\n"
        self.assertTrue(bisect.stream_problems(cut))
        self.assertTrue(bisect.stream_problems(""))
        self.assertTrue(bisect.stream_problems("[    1.0] Kernel panic\n"))

    def test_check_result(self):
        s = self.COMPLETE
        self.assertEqual("ok", bisect.check_result(s, "taskstats:ioctl_errors"))
        self.assertEqual("not ok",
                         bisect.check_result(s, "ks_matches_legacy"))
        self.assertEqual("missing", bisect.check_result(s, "taskstats:nope"))
        self.assertEqual("missing",
                         bisect.check_result(s, "memcg_ks:ioctl_errors"))
        skip = s.replace("ok 1 ioctl_errors", "ok 1 ioctl_errors # SKIP no")
        self.assertEqual("skip", bisect.check_result(skip, "ioctl_errors"))


class Table(StateCase):
    def test_round_trip(self):
        self.init()
        step = {"commit": "c" * 40, "subject": "sys: a\tlong " + "x" * 60,
                "ratio": 1.9, "ci_low": 1.7, "ci_high": 2.1,
                "verdict": "bad", "boots": 7, "note": None}
        bisect.append_step(self.state, step)
        got = bisect.read_steps(self.state)
        self.assertEqual(1, len(got))
        line = bisect.fmt_step(got[0])
        self.assertTrue(line.startswith("c" * 12 + "  sys: a long x"))
        self.assertIn("x1.900 (1.700-2.100)", line)
        self.assertTrue(line.endswith("bad   boots 7"))


def git(tree, *args):
    subprocess.run(["git", "-C", tree, "-c", "user.name=t",
                    "-c", "user.email=t@t"] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Command(unittest.TestCase):
    """scripts/bisect.sh on a small git tree shaped like a kernel's, whose
    'make' fails: bad usage, an endpoint that does not build, the tree
    left on its branch, the state kept."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        t = self.tmp.name
        self.tree = os.path.join(t, "linux")
        os.makedirs(os.path.join(self.tree, "arch", "x86"))
        git(self.tree, "init", "-q", "-b", "work")
        for i in range(4):
            with open(os.path.join(self.tree, "Makefile"), "w") as f:
                f.write(f"# commit {i}\n%:\n\t@echo no kernel here >&2; "
                        f"exit 1\n")
            git(self.tree, "add", "-A")
            git(self.tree, "commit", "-q", "-m", f"commit {i}")
        self.env = dict(os.environ, KBENCH_TESTKERNEL_CACHE=os.path.join(
            t, "cache"), XDG_CACHE_HOME=os.path.join(t, "xdg"),
            TMPDIR=t)

    def run_bisect(self, *args):
        p = subprocess.run([os.path.join(SCRIPTS, "bisect.sh")] + list(args),
                           env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def base(self, *extra):
        return ["--tree", self.tree, "--good", "work~3", "--bad", "work",
                "-t", f"{TEST}:{ROW}"] + list(extra)

    def test_bad_usage(self):
        cases = [
            [],
            ["--tree"],
            ["--bogus"],
            ["--tree", "/nonexistent", "--good", "a", "--bad", "b", "-t", "x"],
            ["--tree", self.tree, "--good", "HEAD", "--bad", "HEAD~3",
             "-t", "x"],
            ["--tree", self.tree, "--good", "HEAD", "--bad", "HEAD", "-t",
             "x"],
            ["--tree", self.tree, "--good", "nope", "--bad", "HEAD", "-t",
             "x"],
            ["--tree", self.tree, "--good", "HEAD~1", "--bad", "HEAD"],
            self.base("-t", "a:b:c"),
            self.base("--check", "nocolon"),
            self.base("--max-repeat", "0"),
            self.base("--max-repeat", "3"),
            self.base("--alpha", "1.5"),
            self.base("--threshold", "x"),
            ["--resume", "--state", os.path.join(self.tmp.name, "none")],
        ]
        for args in cases:
            with self.subTest(args=args):
                rc, out, err = self.run_bisect(*args)
                self.assertEqual(2, rc, err)
                self.assertIn("bisect.sh", err)
                self.assertEqual("", out)

    def test_help(self):
        rc, out, _ = self.run_bisect("--help")
        self.assertEqual(0, rc)
        self.assertIn("Exit status", out)

    def test_dirty_tree_is_refused(self):
        with open(os.path.join(self.tree, "Makefile"), "a") as f:
            f.write("# local change\n")
        rc, _, err = self.run_bisect(*self.base())
        self.assertEqual(2, rc)
        self.assertIn("uncommitted changes", err)

    def test_someone_elses_bisect_is_left_alone(self):
        git(self.tree, "bisect", "start", "HEAD", "HEAD~3")
        rc, _, err = self.run_bisect(*self.base())
        self.assertEqual(2, rc)
        self.assertIn("git bisect already", err)
        self.assertTrue(os.path.exists(os.path.join(
            self.tree, ".git", "BISECT_START")))

    def rev(self, name):
        return subprocess.run(["git", "-C", self.tree, "rev-parse", name],
                              capture_output=True, text=True,
                              check=True).stdout.strip()

    def test_resume_a_finished_bisection(self):
        """--resume replays the kept 'git bisect log': a bisection that
        had found its culprit says it again, with no build or boot (the
        endpoints' images are in the cache) and the earlier steps."""
        state = os.path.join(self.tmp.name, "state")
        good, bad, culprit = (self.rev("work~3"), self.rev("work"),
                              self.rev("work~1"))
        self.assertEqual(0, bisect.main(
            ["init", state, self.tree, good, bad, "slower", "8", "0.01",
             "2", "", f"{TEST}:{ROW}"]))
        with open(os.path.join(state, bisect.SIGNAL), "w") as f:
            json.dump([{"test": TEST, "row": ROW}], f)
        for c in (good, bad):
            image = subprocess.run(
                [os.path.join(TOP, "testkernel", "build.sh"), "-n",
                 "--tree", self.tree, "--commit", c], env=self.env,
                capture_output=True, text=True).stdout.strip()
            self.assertTrue(image.startswith("image="), image)
            os.makedirs(os.path.dirname(image[6:]))
            open(image[6:], "w").close()
        git(self.tree, "bisect", "start", "--no-checkout", bad, good)
        git(self.tree, "bisect", "good", self.rev("work~2"))
        git(self.tree, "bisect", "bad", culprit)
        with open(os.path.join(state, "bisect.log"), "w") as f:
            f.write(subprocess.run(["git", "-C", self.tree, "bisect", "log"],
                                   capture_output=True, text=True,
                                   check=True).stdout)
        git(self.tree, "bisect", "reset")
        bisect.append_step(state, {"commit": culprit, "subject": "commit 2",
                                   "verdict": "bad", "boots": 7})
        rc, out, err = self.run_bisect("--resume", "--state", state)
        self.assertEqual(0, rc, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith(culprit[:12] + "  commit 2"))
        self.assertEqual(f"first bad commit: {culprit} commit 2", lines[-1])
        self.assertFalse(os.path.exists(os.path.join(
            self.tree, ".git", "BISECT_START")))
        self.assertEqual("work", subprocess.run(
            ["git", "-C", self.tree, "symbolic-ref", "--short", "HEAD"],
            capture_output=True, text=True).stdout.strip())

    def test_endpoint_that_does_not_build(self):
        # testkernel/build.sh configures with virtme-ng's venv and checks
        # its host tools before it runs make.
        venv = os.path.join(os.environ.get("KBENCH_CACHE", os.path.join(
            TOP, ".cache")), "venv", "bin", "virtme-configkernel")
        if not os.path.exists(venv) or not shutil.which("pahole"):
            self.skipTest("needs virtme-ng in .cache/venv (scripts/vm-run.sh "
                          "installs it) and pahole (dwarves)")
        state = os.path.join(self.tmp.name, "state")
        head = subprocess.run(["git", "-C", self.tree, "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout
        rc, out, err = self.run_bisect(*self.base("--state", state))
        self.assertEqual(125, rc, err)
        self.assertRegex(out.splitlines()[-1],
                         r"^could not decide: the good commit [0-9a-f]{12} "
                         r"does not build$")
        # The tree is back on its branch, clean, not bisecting.
        branch = subprocess.run(["git", "-C", self.tree, "symbolic-ref",
                                 "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        self.assertEqual("work", branch)
        self.assertEqual(head, subprocess.run(
            ["git", "-C", self.tree, "rev-parse", "HEAD"],
            capture_output=True, text=True).stdout)
        st = subprocess.run(["git", "-C", self.tree, "status",
                             "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True).stdout
        self.assertEqual("", st)
        self.assertFalse(os.path.exists(os.path.join(
            self.tree, ".git", "BISECT_START")))
        # The state is kept: a second start is refused, --resume goes on.
        with open(os.path.join(state, "settings.json")) as f:
            self.assertEqual(["syscall_overhead:getsid"],
                             json.load(f)["targets"])
        rc, _, err = self.run_bisect(*self.base("--state", state))
        self.assertEqual(2, rc)
        self.assertIn("--resume", err)
        rc, out, _ = self.run_bisect("--resume", "--state", state)
        self.assertEqual(125, rc)
        self.assertIn("does not build", out)


if __name__ == "__main__":
    unittest.main()
