# SPDX-License-Identifier: GPL-2.0
"""Tests of the host tasks on kunit_tool_test's model: subprocess mocked
(command lines, a build that fails, a missing package, bad options) or
tiny real children (timeouts, signals), all in seconds. kbtools.proc,
kbtools.kernel (testkernel/build.sh), kbtools.ksrc, kbtools.corpus and
the front door (./kbench)."""

import contextlib
import fcntl
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple)
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import __main__ as front  # noqa: E402
from kbtools import arch, cli, corpus, debian, kernel, ksrc, proc, vng  # noqa: E402,E501
from support import quiet  # noqa: E402
import needs  # noqa: E402

# A mocked make: make(cmd, log) -> its exit status.
Make = Callable[[List[str], str], int]


def sh(cmd: str, data: Optional[bytes] = None) -> str:
    """A shell pipeline's output (the reference the keys must match)."""
    return subprocess.run(["bash", "-c", cmd], input=data, check=True,
                          capture_output=True).stdout.decode().strip()


class Proc(unittest.TestCase):
    def test_timeout_stops_the_whole_group(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            pidfile = os.path.join(d, "pid")
            start = time.monotonic()
            with self.assertRaises(proc.TimedOut):
                proc.run(["bash", "-c", f"sleep 30 & echo $! >{pidfile}; "
                          "wait"], timeout=0.5)
            self.assertLess(time.monotonic() - start, 10)
            with open(pidfile) as f:
                grandchild = int(f.read())
            time.sleep(0.2)
            try:  # gone, or a zombie its new parent has not reaped yet
                with open(f"/proc/{grandchild}/stat") as f:
                    self.assertEqual("Z", f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass

    def test_log_status_and_a_command_that_cannot_start(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log")
            self.assertEqual(3, proc.run(["sh", "-c", "echo out; echo err "
                                          ">&2; exit 3"], log=log))
            self.assertEqual("out\nerr\n", proc.tail(log, 5))
            proc.run(["echo", "more"], log=log, append=True)
            self.assertEqual("err\nmore\n", proc.tail(log, 2))
        with self.assertRaises(proc.Failed) as e:
            proc.run(["/nonexistent/tool"])
        self.assertEqual(127, e.exception.status)
        with self.assertRaises(proc.Failed) as e:
            proc.capture(["sh", "-c", "echo first >&2; exit 5"])
        self.assertEqual((5, "first"), (e.exception.status,
                                        e.exception.detail))

    def test_a_signal_stops_the_child_and_runs_finally(self) -> None:
        cleaned: List[bool] = []

        def body() -> int:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0.3)
                return proc.run(["sleep", "30"])
            finally:
                cleaned.append(True)
        old = signal.signal(signal.SIGALRM, lambda *a: os.kill(
            os.getpid(), signal.SIGTERM))
        try:
            start = time.monotonic()
            rc, _, err = quiet(cli.orchestrate, "t", body)
        finally:
            signal.signal(signal.SIGALRM, old)
        self.assertEqual(130, rc)
        self.assertEqual([True], cleaned)
        self.assertLess(time.monotonic() - start, 10)
        self.assertIn("t: interrupted", err)

    @needs.commands("flock")
    def test_lock_is_flock_as_bash_takes_it(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lock = os.path.join(d, ".lock-build")
            with proc.locked(lock):
                busy = subprocess.run(["flock", "-n", lock, "true"])
            self.assertEqual(1, busy.returncode)
            self.assertEqual(0, subprocess.run(["flock", "-n", lock,
                                                "true"]).returncode)

    def test_tee_keeps_and_shows(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out, err = os.path.join(d, "out"), os.path.join(d, "err")
            rc = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, "
                 f"{os.path.join(TOP, 'scripts')!r}); from kbtools import "
                 f"proc; sys.exit(proc.tee(['sh', '-c', 'echo o; echo e >&2;"
                 f" exit 4'], {out!r}, {err!r}))"],
                capture_output=True, text=True)
            self.assertEqual((4, "o\n", "e\n"),
                             (rc.returncode, rc.stdout, rc.stderr))
            with open(out) as f, open(err) as g:
                self.assertEqual(("o\n", "e\n"), (f.read(), g.read()))

    def test_tee_merged_keeps_and_shows_both_in_one(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log")
            raw = io.BytesIO()
            shown = io.TextIOWrapper(raw)
            with mock.patch.object(sys, "stdout", shown):
                rc = proc.tee(["sh", "-c", "pwd; echo e >&2; exit 3"], log,
                              cwd=d, merge=True)
            shown.flush()
            with open(log) as f:
                self.assertEqual((3, f"{d}\ne\n", f"{d}\ne\n"),
                                 (rc, f.read(),
                                  raw.getvalue().decode()))

    def test_run_keeps_stderr_apart_on_request(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            out, err = os.path.join(d, "out"), os.path.join(d, "err")
            rc = proc.run(["sh", "-c", "echo o; echo e >&2; exit 3"],
                          log=out, err_log=err)
            with open(out) as f, open(err) as g:
                self.assertEqual((3, "o\n", "e\n"), (rc, f.read(), g.read()))

    def test_capture_bytes_as_they_are(self) -> None:
        data = b"a\r\n\xff\x00"
        self.assertEqual(data, proc.capture_bytes(["cat"], stdin=data))
        with self.assertRaisesRegex(proc.Failed, "exited 5: first"):
            proc.capture_bytes(["sh", "-c", "echo first >&2; exit 5"])


    def test_cpu_load_changes_on_demand_and_stops_at_the_end(self) -> None:
        popen, started = mock.MagicMock(), []

        def start(cmd: List[str], **kw: Any) -> mock.MagicMock:
            started.append((cmd, kw["start_new_session"]))
            return popen
        with mock.patch.object(subprocess, "Popen", side_effect=start), \
                mock.patch.object(proc, "stop_group") as stop:
            with proc.CpuLoad() as load:
                load.set(0)
                load.set(2)
                load.set(2)
                load.set(1)
            self.assertEqual(2, stop.call_count)
        self.assertEqual([(["stress-ng", "--cpu", "2", "--quiet"], True),
                          (["stress-ng", "--cpu", "1", "--quiet"], True)],
                         started)
        self.assertEqual(0, load.workers)

class Keys(unittest.TestCase):
    """The cache keys, byte for byte as testkernel/build.sh's sha256sum
    pipelines made them: images built before must still be found."""

    def test_keys_match_the_shell_pipelines(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            frags = []
            for i, text in enumerate(("CONFIG_A=y\n", "# x\nCONFIG_B=m\n")):
                frags.append(os.path.join(d, f"f{i}"))
                with open(frags[-1], "w") as f:
                    f.write(text)
            src = "/usr/src/linux-source-6.12.tar.xz 150000000"
            q = " ".join(frags)
            recipe = f"recipe {kernel.RECIPE}"
            self.assertEqual(
                sh(f"{{ echo '{recipe}'; echo '{src}'; cat {q}; }} | "
                   "sha256sum | cut -c1-12"), kernel.inputs_key(frags, src))
            self.assertEqual(
                sh(f"{{ echo '{recipe}'; cat {q}; }} | sha256sum | "
                   "cut -c1-12"), kernel.inputs_key(frags, ""))
            self.assertEqual(
                sh(f"sha256sum {q} | awk '{{ print $1 }}' | sha256sum | "
                   "cut -c1-12"), kernel.series_key(frags))
            self.assertEqual("none", kernel.series_key([]))
            self.assertEqual(sh(f"echo '{d}' | sha256sum | cut -c1-12"),
                             kernel.sha12((d + "\n").encode()))

    def test_fragments_in_the_glob_order_then_ours(self) -> None:
        frags = kernel.config_fragments(TOP, btf=True)
        self.assertEqual(os.path.join(TOP, "config"), frags[0])
        self.assertEqual(["kernel.config", "btf.config"],
                         [os.path.basename(f) for f in frags[-2:]])
        self.assertEqual(sh(f"cd {TOP} && printf '%s\\n' */config"
                            ).splitlines(),
                         [os.path.relpath(f, TOP) for f in frags[1:-2]])

    def test_lost_options(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            frag, config = os.path.join(d, "frag"), os.path.join(d, ".config")
            with open(frag, "w") as f:
                f.write("CONFIG_A=y\nCONFIG_B=y\n# CONFIG_B is not set\n"
                        "CONFIG_C=m\n# CONFIG_D is not set\n")
            with open(config, "w") as f:
                f.write("CONFIG_A=y\nCONFIG_B=y\nCONFIG_C=y\n")
            self.assertEqual(["CONFIG_B=n", "CONFIG_C=m"],
                             kernel.lost_options([frag], config))


class FakeCache:
    """A test-kernel cache laid out as build.sh leaves it."""

    def __init__(self, d: str) -> None:
        self.d = d
        self.tarball = os.path.join(d, "linux-source-6.12.tar.xz")
        with open(self.tarball, "wb") as f:
            f.write(b"x" * 100)

    def builder(self, **kw: Any) -> kernel.Builder:
        b = kernel.Builder("build.sh", cache=self.d, **kw)
        b.tarball = self.tarball
        return b


class Build(unittest.TestCase):
    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.cache = tmp.name
        env = mock.patch.dict(os.environ, {
            "KBENCH_TESTKERNEL_CACHE": self.cache})
        env.start()
        self.addCleanup(env.stop)
        # An installed tarball would win over the cache's: hide it.
        real = os.path.isfile
        p = mock.patch.object(ksrc, "installed_tarball",
                              return_value="/nonexistent.tar.xz")
        p.start()
        self.addCleanup(p.stop)
        self.fake = FakeCache(self.cache)
        self.isfile = real

    def call(self, *argv: str) -> Tuple[Any, str, str]:
        return quiet(kernel.build_main, list(argv), "build.sh")

    def test_dry_run_of_an_unconfigured_cache(self) -> None:
        rc, out, err = self.call("-n")
        self.assertEqual(1, rc)
        self.assertRegex(out, r"^patched=.*/patched-unconfigured-[0-9a-f]{12}"
                         r"/bzImage\nunpatched=.*/unpatched-unconfigured/"
                         r"bzImage\n$")
        self.assertIn("build.sh: patched: not built", err)

    def test_dry_run_finds_the_images_the_memo_names(self) -> None:
        b = self.fake.builder()
        b.compute_keys(True)
        os.makedirs(os.path.join(self.cache, "keys"))
        with open(os.path.join(self.cache, "keys", b.frag_key), "w") as f:
            f.write("abcdef012345\n")
        b.image_paths()
        for out in (b.out_patched, b.out_unpatched):
            os.makedirs(out)
            open(os.path.join(out, "bzImage"), "w").close()
        rc, out, err = self.call("-n")
        self.assertEqual(0, rc, err)
        self.assertEqual(f"patched={b.out_patched}/bzImage\n"
                         f"unpatched={b.out_unpatched}/bzImage\n", out)
        self.assertIn("patched-abcdef012345-", out)
        rc, out, _ = self.call("--unpatched", "-n")
        self.assertEqual((0, f"unpatched={b.out_unpatched}/bzImage\n"),
                         (rc, out))

    def test_bad_options_are_2(self) -> None:
        for argv in (("--bogus",), ("-j", "0"), ("--patched", "--unpatched"),
                     ("--commit", "HEAD"), ("--tree", "/nonexistent",
                                            "--commit", "x"), ("-j",)):
            rc, out, err = self.call(*argv)
            self.assertEqual(2, rc, argv)
            self.assertEqual("", out)
            self.assertIn("Try 'build.sh --help'", err)

    def test_missing_package_is_3(self) -> None:
        # Only what the test takes away is missing, whatever the host has
        # installed (headers, python3-venv).
        with mock.patch.object(shutil, "which",
                               side_effect=lambda t: None if t in (
                                   "bison", "xz") else "/usr/bin/" + t), \
                mock.patch.object(kernel, "HOST_FILES", ()), \
                mock.patch.object(proc, "succeeds",
                                  return_value=True):
            rc, _, err = self.call("--patched")
        self.assertEqual(3, rc)
        self.assertIn("missing host tools: bison xz (apt-get install bison "
                      "xz-utils)", err)

    def test_a_build_that_fails_is_1_with_its_log(self) -> None:
        """The tree extracted and configured (mocked), make fails: exit
        1, the log's tail and its path on stderr, nothing kept."""
        calls: List[List[str]] = []

        def run(cmd: List[str], log: Optional[str] = None, **kw: Any) -> int:
            calls.append(list(cmd))
            if log:
                with open(log, "a") as f:
                    f.write("cc1: error: something broke\n")
            if cmd[0] == "tar":
                os.makedirs(os.path.join(cmd[-1], "linux-source-6.12"))
            if "bzImage" in cmd:
                return 2
            return 0

        def configure(b: kernel.Builder, src: str, obj: str, log: str) -> None:
            with open(os.path.join(obj, ".config"), "w") as f:
                f.write("CONFIG_X=y\n")
            with open(os.path.join(obj, ".kbench-config"), "w") as f:
                f.write(b.frag_key + "\n")
        with mock.patch.object(kernel.Builder, "check_host"), \
                mock.patch.object(proc, "run", side_effect=run), \
                mock.patch.object(proc, "succeeds",
                                  return_value=False), \
                mock.patch.object(kernel.Builder, "configure", configure):
            rc, out, err = self.call("--unpatched", "-j3")
        self.assertEqual(1, rc, err)
        self.assertEqual("", out)
        self.assertIn("cc1: error: something broke", err)
        self.assertRegex(err, r"building the unpatched kernel failed \(log: "
                         r".*/build-unpatched\.log\)")
        make = [c for c in calls if "bzImage" in c]
        self.assertEqual(["make", "-C", make[0][2], "-j3",
                          "LOCALVERSION=-kbench-unpatched", "bzImage"],
                         make[0])
        self.assertEqual([], [n for n in os.listdir(self.cache)
                              if n.startswith("unpatched-")])

    def test_configure_command_lines(self) -> None:
        b = self.fake.builder()
        b.frag_key = "k" * 12
        calls: List[Tuple[List[str], Optional[str], Optional[str]]] = []

        def run(cmd: List[str], log: Optional[str] = None,
                cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                append: bool = False, **kw: Any) -> int:
            assert env is not None
            calls.append((list(cmd), cwd, env.get("KBUILD_OUTPUT")))
            if cmd[0] == "make":
                with open(os.path.join(self.cache, "obj", ".config"),
                          "w") as f:
                    f.write("".join(line + "\n" for line in
                                    kernel.wanted_config(b.frags).values()
                                    if line != "n"))
            return 0
        os.makedirs(os.path.join(self.cache, "obj"))
        with mock.patch.object(vng, "ensure", return_value="/v/bin"), \
                mock.patch.object(proc, "run", side_effect=run), \
                contextlib.redirect_stderr(io.StringIO()):
            b.configure("/src", os.path.join(self.cache, "obj"), "/dev/null")
        obj = os.path.join(self.cache, "obj")
        self.assertEqual([["virtme-configkernel", "--defconfig"],
                          ["scripts/kconfig/merge_config.sh", "-m", "-O",
                           obj, obj + "/.config", *b.frags],
                          ["make", "-s", f"O={obj}", "olddefconfig"]],
                         [c for c, _, _ in calls])
        self.assertEqual({("/src", obj)}, {(w, o) for _, w, o in calls})
        with open(os.path.join(obj, ".kbench-config")) as f:
            self.assertEqual("k" * 12 + "\n", f.read())


@needs.commands("git")
class TreeCommit(unittest.TestCase):
    """--tree DIR --commit REV on a tiny git tree that looks like a
    kernel's: make mocked; the tree is left on its branch, also when the
    build fails or is interrupted."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.cache = os.path.join(tmp.name, "cache")
        self.tree = os.path.join(tmp.name, "linux")
        os.makedirs(os.path.join(self.tree, "arch", "x86"))
        with open(os.path.join(self.tree, "Makefile"), "w") as f:
            f.write("all:\n")
        open(os.path.join(self.tree, "arch", "x86", "Kconfig"), "w").close()
        g = ["git", "-C", self.tree, "-c", "user.name=t",
             "-c", "user.email=t@t"]
        subprocess.run(g + ["init", "-q", "-b", "work"], check=True)
        subprocess.run(g + ["add", "-A"], check=True)
        subprocess.run(g + ["commit", "-q", "-m", "one"], check=True)
        subprocess.run(g + ["commit", "-q", "--allow-empty", "-m", "two"],
                       check=True)
        self.first = sh(f"git -C {self.tree} rev-parse HEAD~1")
        env = mock.patch.dict(os.environ, {
            "KBENCH_TESTKERNEL_CACHE": self.cache})
        env.start()
        self.addCleanup(env.stop)

    def branch(self) -> str:
        return sh(f"git -C {self.tree} symbolic-ref --short HEAD")

    @contextlib.contextmanager
    def mocked(self, make: Make) -> Iterator[None]:
        """The host checked and the tree configured (mocked), make is
        make(cmd, log)."""
        real_run = proc.run

        def run(cmd: List[str], log: Optional[str] = None, **kw: Any) -> int:
            if cmd[0] == "make":
                self.cmd = list(cmd)
                self.env = dict(kw.get("env") or {})
                self.head = sh(f"git -C {self.tree} rev-parse HEAD")
                assert log is not None
                return make(cmd, log)
            return real_run(cmd, log=log, **kw)

        def configure(b: kernel.Builder, src: str, obj: str, log: str) -> None:
            with open(os.path.join(obj, ".kbench-config"), "w") as f:
                f.write(b.frag_key + "\n")
        with mock.patch.object(kernel.Builder, "check_host"), \
                mock.patch.object(kernel.Builder, "configure", configure), \
                mock.patch.object(proc, "run", side_effect=run):
            yield

    def build(self, make: Make) -> Tuple[Any, str, str]:
        with self.mocked(make):
            return quiet(kernel.build_main, ["--tree", self.tree,
                                             "--commit", "HEAD~1", "-j2"],
                         "build.sh")

    def test_a_caller_gets_the_image_or_the_failure_with_its_log(self) -> None:
        """kernel.build_commit, as kbtools.bisect_run calls it: no
        process, a typed request and answer."""
        def fails(cmd: List[str], log: str) -> int:
            with open(log, "a") as f:
                f.write("kernel/fork.c:1: error: nope\n")
            return 2
        req = kernel.CommitBuild(self.tree, "HEAD~1", 2)
        with self.mocked(fails), contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(kernel.BuildFailed) as e:
                kernel.build_commit(req, "bisect.sh")
        with open(e.exception.log) as f:
            self.assertIn("error: nope", f.read())
        self.assertEqual(1, e.exception.status)
        with self.assertRaises(cli.Error):
            kernel.build_commit(kernel.CommitBuild(self.tree, "nonesuch"),
                                "bisect.sh")

    def test_built_out_of_tree_and_cached_by_commit(self) -> None:
        def make(cmd: List[str], log: str) -> int:
            open(log, "w").close()
            obj = cmd[3][2:]
            os.makedirs(os.path.join(obj, "arch", "x86", "boot"))
            for f in ("arch/x86/boot/bzImage", ".config"):
                open(os.path.join(obj, f), "w").close()
            return 0
        rc, out, err = self.build(make)
        self.assertEqual(0, rc, err)
        obj = os.path.join(self.cache, "obj",
                           kernel.sha12((self.tree + "\n").encode()))
        self.assertEqual(["make", "-C", self.tree, f"O={obj}", "-j2",
                          "LOCALVERSION=-kbench-bisect", "bzImage"], self.cmd)
        self.assertEqual(self.first, self.head)
        key = kernel.inputs_key(kernel.config_fragments(TOP, False), "")
        image = os.path.join(self.cache, "commits", f"{self.first}-{key}",
                             "bzImage")
        self.assertEqual(f"image={image}\n", out)
        with open(os.path.join(os.path.dirname(image), "commit")) as f:
            self.assertEqual(f"{self.first} one\n", f.read())
        self.assertEqual("work", self.branch())
        # Cached: -n finds it, nothing is built.
        rc, out, _ = quiet(kernel.build_main, ["-n", "--tree", self.tree,
                                               "--commit", self.first],
                           "build.sh")
        self.assertEqual((0, f"image={image}\n"), (rc, out))

    def test_the_stamp_names_the_content_not_the_commit(self) -> None:
        """uname -v of a build: the same for a commit of the same tree
        made elsewhere (another hash), another for other content."""
        def make(cmd: List[str], log: str) -> int:
            return 1
        g = f"git -C {self.tree} -c user.name=t -c user.email=t@t "
        twin = sh(f"GIT_COMMITTER_DATE=2001-01-01T00:00:00Z {g}commit-tree "
                  f"-p {self.first} -m elsewhere {self.first}^{{tree}}")
        stamps = []
        for rev in (self.first, twin, "HEAD~1"):
            with self.mocked(make):
                quiet(kernel.build_main, ["--tree", self.tree, "--commit",
                                          rev], "build.sh")
            stamps.append(self.env["KBUILD_BUILD_VERSION"])
            self.assertEqual(kernel.STAMP_TIME,
                             self.env["KBUILD_BUILD_TIMESTAMP"])
            self.assertEqual("kbench", self.env["KBUILD_BUILD_HOST"])
        self.assertRegex(stamps[0], r"^1-[0-9a-f]{12}$")
        self.assertEqual(stamps[0], stamps[1])
        with open(os.path.join(self.tree, "Makefile"), "a") as f:
            f.write("# changed\n")
        sh(f"{g}commit -q -am three")
        with self.mocked(make):
            quiet(kernel.build_main, ["--tree", self.tree, "--commit",
                                      "HEAD"], "build.sh")
        self.assertNotEqual(stamps[0], self.env["KBUILD_BUILD_VERSION"])

    def test_a_commit_that_does_not_build(self) -> None:
        def make(cmd: List[str], log: str) -> int:
            with open(log, "a") as f:
                f.write("kernel/fork.c:1: error: nope\n")
            return 2
        rc, out, err = self.build(make)
        self.assertEqual(1, rc)
        self.assertIn("error: nope", err)
        self.assertIn(f"building {self.first} failed (log: ", err)
        self.assertEqual("", out)  # no image= line: bisect.sh reads none
        self.assertEqual("work", self.branch())

    def test_interrupted_build_puts_the_tree_back(self) -> None:
        def make(cmd: List[str], log: str) -> int:
            raise proc.Interrupted(signal.SIGINT)
        rc, _, err = self.build(make)
        self.assertEqual(130, rc)
        self.assertIn("build.sh: interrupted", err)
        self.assertEqual("work", self.branch())

    def series_of(self, n: int) -> List[str]:
        """n more commits on the tree's branch, each changing one file;
        their hashes, oldest first."""
        g = ["git", "-C", self.tree, "-c", "user.name=t",
             "-c", "user.email=t@t"]
        hashes: List[str] = []
        for k in range(n):
            with open(os.path.join(self.tree, "f"), "w") as f:
                f.write(f"{k}\n")
            subprocess.run(g + ["add", "f"], check=True)
            subprocess.run(g + ["commit", "-q", "-m", f"c{k}"], check=True)
            hashes.append(sh(f"git -C {self.tree} rev-parse HEAD"))
        return hashes

    def make_image(self, cmd: Sequence[str], log: str) -> int:
        """make, mocked: an image in the object directory; the build
        lock is held meanwhile (another taker would wait)."""
        with open(os.path.join(self.cache, ".lock-build"), "w") as f:
            with self.assertRaises(BlockingIOError):
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        open(log, "w").close()
        obj = cmd[3][2:]
        os.makedirs(os.path.join(obj, "arch", "x86", "boot"), exist_ok=True)
        for name in ("arch/x86/boot/bzImage", ".config"):
            with open(os.path.join(obj, name), "w") as f:
                f.write(self.head)
        self.heads.append(self.head)
        return 0

    def checkouts(self) -> Tuple[List[str], Any]:
        """proc.run watched: the revisions the tree was checked out on,
        in order."""
        real_run = proc.run
        revs: List[str] = []

        def run(cmd: Sequence[str], log: Optional[str] = None,
                **kw: Any) -> int:
            if "checkout" in cmd:
                revs.append(cmd[-1])
            return real_run(cmd, log=log, **kw)
        return revs, mock.patch.object(proc, "run", side_effect=run)

    def test_a_series_goes_from_commit_to_commit(self) -> None:
        """kernel.SeriesBuild: each commit checked out from the one built
        before it, the tree put back on its branch once, at the end;
        a cached image is neither checked out nor built."""
        hashes = self.series_of(3)
        self.heads: List[str] = []
        with self.mocked(self.make_image), \
                contextlib.redirect_stderr(io.StringIO()):
            with kernel.SeriesBuild(self.tree, "series", 2) as builds:
                cached = builds.build(hashes[0])
            revs, watch = self.checkouts()
            with watch, kernel.SeriesBuild(self.tree, "series", 2) as builds:
                images = [builds.build(h).image for h in hashes]
                self.assertEqual(hashes[2], sh(
                    f"git -C {self.tree} rev-parse HEAD"))
        self.assertEqual(cached.image, images[0])
        self.assertEqual(hashes[1:], self.heads[1:])
        self.assertEqual([hashes[1], hashes[2], "work"], revs)
        self.assertEqual("work", self.branch())
        for h, image in zip(hashes, images):
            self.assertIn(h, image)
            with open(image) as f:
                self.assertEqual(h, f.read())

    def test_an_interrupted_series_puts_the_tree_back(self) -> None:
        hashes = self.series_of(3)
        self.heads = []

        def make(cmd: Sequence[str], log: str) -> int:
            if self.head == hashes[1]:
                raise proc.Interrupted(signal.SIGTERM)
            return self.make_image(cmd, log)
        with self.mocked(make), contextlib.redirect_stderr(io.StringIO()), \
                self.assertRaises(proc.Interrupted):
            with kernel.SeriesBuild(self.tree, "series", 2) as builds:
                for h in hashes:
                    builds.build(h)
        self.assertEqual([hashes[0]], self.heads)
        self.assertEqual("work", self.branch())
        # The lock given back, the cut build's image not kept.
        with proc.locked(os.path.join(self.cache, ".lock-build"),
                         wait=False):
            pass
        self.assertEqual(
            [], [d for d in os.listdir(os.path.join(self.cache, "commits"))
                 if d.startswith(hashes[1])])

    def test_a_tree_with_a_build_of_its_own_is_refused(self) -> None:
        open(os.path.join(self.tree, ".config"), "w").close()
        rc, _, err = self.build(lambda cmd, log: 0)
        self.assertEqual(2, rc)
        self.assertIn("holds a build of its own", err)


class Ksrc(unittest.TestCase):
    def test_no_package_is_1_and_nothing_left(self) -> None:
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {"KBENCH_CACHE": d,
                                             "KSRC_VERSION": "0.0"}), \
                mock.patch.object(proc, "run", return_value=100) as run:
            rc, out, err = quiet(ksrc.main, [], "provision_ksrc")
            self.assertEqual(["apt-get", "download", "linux-source-0.0"],
                             run.call_args_list[0].args[0])
            self.assertEqual([".lock-0.0"], os.listdir(d))
        self.assertEqual((1, ""), (rc, out))
        self.assertIn("cannot download linux-source-0.0 (run 'apt-get "
                      "update'", err)

    def test_arguments_are_2(self) -> None:
        self.assertEqual(2, quiet(ksrc.main, ["x"], "provision_ksrc")[0])


class Corpus(unittest.TestCase):
    def test_filing_by_harness(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            raw, out = os.path.join(d, "raw"), os.path.join(d, "corpus")
            os.makedirs(raw)
            for name, data in (("release", "6.12.9-amd64\n"),
                               ("mountinfo", "M"), ("cgroup-self", "C"),
                               ("memory.stat-v2", "S"), ("proc-x", "P"),
                               ("taskstats-burst-0", "0"),
                               ("taskstats-burst-1", "1")):
                with open(os.path.join(raw, name), "w") as f:
                    f.write(data)
            r = corpus.Recorder("record_corpus.sh", "/bin/true", out, d)
            quiet(r.file_raw, raw)
            r.option_seeds()

            def read(*p: str) -> bytes:
                with open(os.path.join(out, *p), "rb") as f:
                    return f.read()
            self.assertEqual(b"\x03C", read("cgroup", "6.12-cgroup-self"))
            self.assertEqual(b"\x04M\0C", read("cgroup", "6.12-own-dirs-self"))
            self.assertEqual(b"\x00S", read("cgroup", "6.12-memory.stat-v2"))
            self.assertEqual(b"\x02M", read("cgroup", "6.12-mountinfo"))
            self.assertEqual(b"P", read("proc_stat", "6.12-proc-x"))
            self.assertEqual(b"01", read("netlink",
                                         "6.12-taskstats-burst-all"))
            self.assertEqual(b"\x01" + b"1.5M", read("options", "value-6"))
            self.assertEqual(len(corpus.OPTION_SEEDS),
                             len(os.listdir(os.path.join(out, "options"))))

    def test_usage(self) -> None:
        for argv in (("-x",), ("extra",), ("-k",)):
            self.assertEqual(2, quiet(corpus.main, list(argv), "r")[0])
        with tempfile.TemporaryDirectory() as d:
            rec = os.path.join(d, "rec")
            with open(rec, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(rec, stat.S_IRWXU)
            rc, _, err = quiet(corpus.main, ["-r", rec, "-k", "/nonexistent"],
                               "r")
        self.assertEqual(2, rc)
        self.assertIn("no kernel image '/nonexistent'", err)
        self.assertEqual(["linux-image-6.1.0-10-amd64",
                          "linux-image-6.1.0-9-amd64"][::-1],
                         sorted(["linux-image-6.1.0-10-amd64",
                                 "linux-image-6.1.0-9-amd64"],
                                key=corpus.version_key))


class Debian(unittest.TestCase):
    """kbench debian apt and cross-libs, the rootfs's fetch: apt
    mocked."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.cache = tmp.name
        env = mock.patch.dict(os.environ, {"KBENCH_CACHE": self.cache})
        env.start()
        self.addCleanup(env.stop)
        sleep = mock.patch.object(time, "sleep")
        self.sleep = sleep.start()
        self.addCleanup(sleep.stop)

    def test_update_tries_three_times_then_3_without_indices(self) -> None:
        with mock.patch.object(proc, "run", return_value=100) as run:
            rc, _, err = quiet(debian.apt_main, ["arm64", "update"], "f")
        self.assertEqual(3, rc)
        self.assertEqual(3, run.call_count)
        self.assertEqual([mock.call(15), mock.call(30)],
                         self.sleep.call_args_list)
        cmd = run.call_args.args[0]
        self.assertEqual(["apt-get", "-o", "APT::Architecture=arm64"],
                         cmd[:3])
        self.assertIn(f"Dir::State={self.cache}/apt/arm64/state", cmd)
        self.assertEqual(["-q", "update", "--error-on=any"], cmd[-3:])
        self.assertIn("cannot fetch Debian's arm64 package indices", err)
        self.assertTrue(os.path.exists(os.path.join(
            self.cache, "apt", "arm64", "incomplete")))

    def test_an_architecture_the_sources_lack_is_said(self) -> None:
        """apt-get update succeeds and fetches nothing for riscv64 on
        bookworm: a failure quoting the suites' Architectures lines."""
        lists = os.path.join(self.cache, "apt", "riscv64", "state", "lists")

        def update(cmd: List[str], **kw: Any) -> int:
            os.makedirs(lists, exist_ok=True)
            with open(os.path.join(lists, "m_debian_dists_bookworm_"
                                   "InRelease"), "w") as f:
                f.write("Suite: stable\nArchitectures: all amd64 arm64\n")
            return 0
        with mock.patch.object(proc, "run", side_effect=update):
            rc, _, err = quiet(debian.apt_main, ["riscv64", "update"], "f")
        self.assertEqual(3, rc)
        self.assertIn("f: the host's Debian sources have no riscv64 "
                      "packages (bookworm: Architectures: all amd64 arm64)",
                      err)

    def test_old_indices_are_used_with_a_warning(self) -> None:
        lists = os.path.join(self.cache, "apt", "arm64", "state", "lists")
        os.makedirs(lists)
        index = os.path.join(lists, "m_dists_x_main_binary-arm64_Packages")
        open(index, "w").close()
        day_ago = time.time() - 86400
        os.utime(index, (day_ago, day_ago))
        # (apt would hold ARCH's lock until it ends: not here, where the
        # exec is mocked and this process goes on.)
        with mock.patch.object(proc, "run", return_value=100), \
                mock.patch.object(debian.ForeignApt, "lock"), \
                mock.patch.object(os, "execvp") as execvp:
            rc, _, err = quiet(debian.apt_main, ["arm64", "apt-cache",
                                                 "policy", "x"], "f")
            # Fresh and complete: no update, straight to apt.
            os.unlink(os.path.join(self.cache, "apt", "arm64",
                                   "incomplete"))
            os.utime(index)
            with mock.patch.object(proc, "run") as run:
                quiet(debian.apt_main, ["arm64", "apt-get", "download",
                                        "p"], "f")
            run.assert_not_called()
        self.assertIn("warning: some of Debian's arm64 package indices "
                      "failed", err)
        (first, second) = [c.args for c in execvp.call_args_list]
        self.assertEqual(("apt-cache", ["policy", "x"]),
                         (first[0], first[1][-2:]))
        self.assertEqual(("apt-get", ["download", "p"]),
                         (second[0], second[1][-2:]))

    def fresh_indices(self, arch: str = "arm64") -> None:
        lists = os.path.join(self.cache, "apt", arch, "state", "lists")
        os.makedirs(lists, exist_ok=True)
        open(os.path.join(lists, f"m_dists_x_main_binary-{arch}_Packages"),
             "w").close()

    def test_cross_libs_failures(self) -> None:
        # No index of arm64 at all: 3; apt-get download failing: 1.
        with mock.patch.object(proc, "run", return_value=100):
            rc, out, err = quiet(debian.cross_libs_main, ["arm64"], "x")
        self.assertEqual((3, ""), (rc, out))
        self.assertIn("cannot fetch Debian's arm64 package indices", err)
        self.fresh_indices()
        with mock.patch.object(proc, "run", return_value=100) as run:
            rc, out, err = quiet(debian.cross_libs_main, ["arm64"], "x")
        self.assertEqual((1, ""), (rc, out))
        self.assertIn("cannot download the arm64 packages", err)
        cmd = run.call_args.args[0]
        self.assertEqual(["apt-get", "-o", "APT::Architecture=arm64"],
                         cmd[:3])
        self.assertEqual(["download", *debian.CROSS_PACKAGES],
                         cmd[-1 - len(debian.CROSS_PACKAGES):])
        self.assertEqual([".lock-arm64"],
                         os.listdir(os.path.join(self.cache, "cross")))

    def test_rootfs_name_and_failures(self) -> None:
        fs = debian.rootfs_of(arch.ARM64)
        self.assertEqual(sh("printf '%s\\n' " + " ".join(
            [str(fs.layout), *fs.packages]) + " | sha256sum | cut -c1-12"),
            fs.key())
        with mock.patch.object(shutil, "which", return_value=None):
            rc, _, err = quiet(debian.arm64_rootfs_main, [], "r")
        self.assertEqual(3, rc)
        self.assertIn("apt-get install apt dpkg cpio", err)
        self.fresh_indices()
        # Whatever the host has installed: the tools are there, the
        # download fails.
        with mock.patch.object(shutil, "which",
                               return_value="/usr/bin/x"), \
                mock.patch.object(proc, "run", return_value=100) as run:
            rc, out, err = quiet(debian.arm64_rootfs_main, [], "r")
        self.assertEqual((3, ""), (rc, out))
        self.assertIn("cannot fetch the arm64 packages", err)
        cmd = run.call_args.args[0]
        self.assertEqual("apt-get", cmd[0])
        self.assertIn("APT::Architecture=arm64", cmd)
        self.assertEqual(["-q", "-y", "--download-only"],
                         cmd[cmd.index("-q"):cmd.index("-q") + 3])
        self.assertEqual([".lock-arm64-rootfs"],
                         os.listdir(os.path.join(self.cache, "vm")))
        self.assertEqual(2, quiet(debian.arm64_rootfs_main, ["x"], "r")[0])

    def test_unpack_aims_absolute_links_into_the_tree(self) -> None:
        root = os.path.join(self.cache, "root")
        os.makedirs(os.path.join(root, "usr", "lib"))
        os.symlink("/lib/x/libcap.so.2", os.path.join(root, "usr", "lib",
                                                      "libcap.so"))
        os.symlink("libnuma.so.1", os.path.join(root, "usr", "lib",
                                                "libnuma.so"))
        debian.unpack([], root, "/dest")
        self.assertEqual("/dest/lib/x/libcap.so.2", os.readlink(
            os.path.join(root, "usr", "lib", "libcap.so")))
        self.assertEqual("libnuma.so.1", os.readlink(
            os.path.join(root, "usr", "lib", "libnuma.so")))


class FrontDoor(unittest.TestCase):
    def test_help_lists_every_task(self) -> None:
        rc, out, _ = quiet(front.main, ["--help"])
        self.assertEqual(0, rc)
        for name in list(front.TASKS) + list(front.GROUPS):
            self.assertRegex(out, rf"(?m)^  {name}( |$)")
        for tasks in front.GROUPS.values():
            for name in tasks:
                self.assertRegex(out, rf"(?m)^    {name}( |$)")
        for want in ("run", "ab", "bisect", "compare", "report", "kcidb",
                     "lava", "kernel", "vm"):
            self.assertIn(want, front.TASKS.keys() | front.GROUPS.keys())
        self.assertTrue(all(len(line) < 80 for line in out.splitlines()))
        # One command for each job: the older names say which run they are.
        aliases = out.split("Aliases")[1]
        self.assertIn("  ab             kbench run --kernel BASE --vs-kernel "
                      "CAND", aliases)
        self.assertIn("  vm             kbench run --kernel IMAGE", aliases)

    def test_every_task_is_a_main(self) -> None:
        """Every task a function of kbtools, none a script handed over."""
        import importlib
        for tasks in [front.TASKS] + list(front.GROUPS.values()):
            for name, task in tasks.items():
                module, function = task.main.rsplit(".", 1)
                self.assertTrue(callable(getattr(importlib.import_module(
                    f"kbtools.{module}"), function)), name)

    def test_bad_usage_is_2(self) -> None:
        for argv in ([], ["bogus"], ["kernel"], ["kernel", "bogus"],
                     ["lava", "local", "bogus"]):
            rc, out, err = quiet(front.main, argv)
            self.assertEqual(2, rc, argv)
            self.assertIn("--help' for more information", err)

    def test_a_task_keeps_arguments_and_status(self) -> None:
        from kbtools import check
        with mock.patch.object(check, "main", return_value=7) as main:
            self.assertEqual(7, quiet(front.main, ["check", "--quick"])[0])
        main.assert_called_once_with(["--quick"], "kbench check")
        rc, _, err = quiet(front.main, ["compare", "/nonexistent.json",
                                        "/nonexistent.json"])
        self.assertEqual(2, rc)
        self.assertIn("kbench compare: ", err)

    def test_the_script_and_the_wrappers(self) -> None:
        for argv, want in (([os.path.join(TOP, "kbench"), "kernel", "build",
                             "--help"], "Usage: kbench kernel build "),
                           ([os.path.join(TOP, "testkernel", "build.sh"),
                             "--help"], "Usage: build.sh "),
                           ([os.path.join(TOP, "testkernel", "run.sh"),
                             "--help"], "Usage: run.sh "),
                           ([os.path.join(TOP, "scripts", "lava_local.sh"),
                             "--help"], "Usage: lava_local.sh ")):
            r = subprocess.run(argv, capture_output=True, text=True)
            self.assertEqual(0, r.returncode, r.stderr)
            self.assertTrue(r.stdout.startswith(want), r.stdout[:80])


if __name__ == "__main__":
    unittest.main()
