# SPDX-License-Identifier: GPL-2.0
"""The VM runners and the A/B on kunit_tool_test's model, in seconds:
command lines per architecture (subprocess mocked), the options and
their defaults (exact mode's included), and tiny real children standing
in for a guest: one that never comes up, one whose run never ends, one
that panics, one that is interrupted, one that passes; the arm64
console's markers and results; the A/B's rotation and its retry of a
boot that died before its tests. kbtools.vm, kbtools.guest,
kbtools.images, kbtools.ab, kbtools.run, kbtools.ci_vm."""

import contextlib
import dataclasses
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple, cast
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import ab, arch, calibration, ci_vm, cli, exact  # noqa: E402
from kbtools import guest, images  # noqa: E402
from kbtools import collection, debian, design, packages, paths  # noqa: E402
from kbtools import policy, proc, results, vng  # noqa: E402
from kbtools import run, runner, vm, where  # noqa: E402
from kbtools import compare as kbcompare  # noqa: E402
from support import present, quiet  # noqa: E402
import needs  # noqa: E402

ICOUNT = "shift=0,sleep=off,align=off"


def assert_in_order(testcase: unittest.TestCase, text: str,
                    *parts: str) -> None:
    """Each of parts in text, each after the one before."""
    at = 0
    for part in parts:
        found = text.find(part, at)
        testcase.assertNotEqual(-1, found, f"{part!r} not found after "
                                f"offset {at} of:\n{text}")
        at = found + len(part)


def parse(*argv: str) -> vm.Options:
    return vm.parse(list(argv), "vm_run.sh")


class Options(unittest.TestCase):
    def setUp(self) -> None:
        env = mock.patch.dict(os.environ)
        env.start()
        self.addCleanup(env.stop)
        for name in ("KBENCH_VM_ACCEL", "KBENCH_ICOUNT_QEMU",
                     "KBENCH_ICOUNT_DETERMINISTIC"):
            os.environ.pop(name, None)

    def test_defaults_per_architecture(self) -> None:
        o = parse("--kernel", "k", "-t", "syscall_overhead", "--nest=hash")
        m = o.machine
        self.assertEqual((arch.X86_64, "auto", "2G", None, None),
                         (m.arch, m.accel, m.memory, m.cpus, m.icount))
        self.assertEqual((300, None), (o.boot_timeout, o.vm_timeout))
        self.assertEqual(["-t", "syscall_overhead", "--nest=hash"],
                         o.run.args)
        # A value that reads like a VM option stays run_all.sh's.
        o = parse("-k", "k", "--base-prefix", "--icount", "--vs-prefix=env")
        self.assertEqual((["--base-prefix", "--icount", "--vs-prefix=env"],
                          None, "env"),
                         (o.run.args, o.machine.icount, o.run.vs_prefix))
        o = parse("--kernel=k", "--arch", "aarch64")
        self.assertEqual((arch.ARM64, "tcg", 2, 600, 3600),
                         (o.machine.arch, o.machine.accel, o.machine.cpus,
                          o.boot_timeout, o.vm_timeout))

    def test_icount_is_one_field(self) -> None:
        o = parse("-k", "k", "--icount")
        # The deterministic guest by default; KBENCH_ICOUNT_DETERMINISTIC=0
        # the plain one.
        self.assertEqual(policy.Icount(
            ICOUNT, 0, qemu_args=policy.DETERMINISTIC_QEMU_ARGS,
            appends=policy.DETERMINISTIC_APPENDS, root="initramfs",
            settle=True, dither=policy.DITHER_LOOPS,
            sched=policy.CREATION_SCHED), o.machine.icount)
        self.assertEqual("qemu", vm.backend_of(o.machine))
        with mock.patch.dict(os.environ, {"KBENCH_ICOUNT_DETERMINISTIC": "0"}):
            o = parse("-k", "k", "--icount")
        self.assertEqual(policy.Icount(ICOUNT, 0), o.machine.icount)
        self.assertEqual("vng", vm.backend_of(o.machine))
        with mock.patch.dict(os.environ, {"KBENCH_ICOUNT_DETERMINISTIC":
                                          "no"}), \
                self.assertRaisesRegex(cli.Error, "1 .* or 0"):
            parse("-k", "k", "--icount")
        self.assertEqual(("tcg", 1, 600), (o.machine.accel, o.machine.cpus,
                                           o.boot_timeout))
        o = parse("-k", "k", "--icount", "--cpus", "3", "--boot-timeout=9")
        self.assertEqual((3, 9), (o.machine.cpus, o.boot_timeout))
        os.environ["KBENCH_ICOUNT_QEMU"] = "shift=3,align=off"
        self.assertEqual(3, present(parse("-k", "k",
                                            "--icount").machine.icount).shift)
        os.environ["KBENCH_ICOUNT_QEMU"] = "sleep=off"
        with self.assertRaisesRegex(cli.Error, "no shift=N"):
            parse("-k", "k", "--icount")
        with self.assertRaisesRegex(cli.Error, "needs TCG"):
            parse("-k", "k", "--accel", "kvm", "--icount")

    def test_bad_usage(self) -> None:
        for argv, want in ((["-t", "x"], "no kernel"),
                           (["-k", "k", "--accel", "fast"], "invalid --accel"),
                           (["-k", "k", "--memory", "2Q"], "invalid --memory"),
                           (["-k", "k", "--cpus", "0"], "invalid --cpus"),
                           (["-k", "k", "--boot-timeout", "0"], "above 0"),
                           (["-k", "k", "--vm-timeout", "x"], "seconds"),
                           (["-k", "k", "-o", "x"], "invalid --timeout"),
                           (["-k", "k", "--arch", "sparc"], "invalid --arch"),
                           (["-k", "k", "--arch", "arm64", "--accel", "kvm"],
                            "always runs under TCG"),
                           (["-k", "k", "--json", "-x"], "invalid --json"),
                           (["-k"], "option '-k' needs an image"),
                           (["-k", "k", "-t"], "option '-t' needs")):
            with self.assertRaisesRegex(cli.Error, want):
                parse(*argv)
        rc, out, err = quiet(vm.main, ["--bogus"], "vm_run.sh")
        self.assertEqual((2, ""), (rc, out))
        self.assertIn("Try 'vm_run.sh --help'", err)
        rc, _, err = quiet(vm.main, ["--bogus"], "vm_arm64.sh")
        self.assertIn("Try 'vm_run.sh --help'", err)
        rc, out, _ = quiet(vm.main, ["--arch", "arm64", "--help"],
                           "vm_run.sh")
        self.assertEqual(0, rc)
        self.assertTrue(out.startswith("Usage: vm_run.sh --kernel IMAGE"))

    def test_repeat_and_the_run_timeout(self) -> None:
        # --repeat is the host's to resolve: the guest gets --repeat N.
        o = parse("-k", "k", "-r", "3", "-t", "x,y", "--repeat")
        self.assertEqual(("design", ["-t", "x,y"], ["x", "y"]),
                         (o.run.repeat, o.run.args, o.run.tests))
        o = parse("-k", "k", "--repeat=3", "-t", "x")
        self.assertEqual((3, ["-t", "x", "--repeat", "3"]),
                         (o.run.runs, vm.guest_args(o.run)))
        self.assertEqual(["-t", "x"], vm.guest_args(parse("-k", "k", "-t",
                                                          "x").run))
        for bad, want in ((["-r", "0"], "invalid --repeat"),
                          (["--repeat=x"], "invalid --repeat"),
                          (["--vs-prefix", "env", "--fail-above", "x"],
                           "invalid --fail-above"),
                          (["--report", "r.html"], "needs --json")):
            with self.assertRaisesRegex(cli.Error, want):
                parse("-k", "k", *bad)
        with tempfile.TemporaryDirectory() as top:
            for d, t in (("a", "timeout=100\n"), ("b", None)):
                os.makedirs(os.path.join(top, d))
                if t:
                    with open(os.path.join(top, d, "settings"), "w") as f:
                        f.write(t)
            progs = ["a:p1", "a:p2", "b:p3"]

            def limit(*argv: str,
                      icount: Optional[policy.Icount] = None) -> int:
                return vm.default_vm_timeout(parse("-k", "k", *argv).run,
                                             progs, icount, top)
            self.assertEqual(120 + 100 + 100 + 45, limit())
            self.assertEqual((120 + 30) * 2, limit("-o", "10", "-r", "2"))
            self.assertEqual(0, limit("--full"))
            self.assertEqual(0, limit("-o", "0"))
            self.assertEqual((120 + 15) * 4, limit(
                "-o", "5", icount=policy.icount(ICOUNT)))
            self.assertEqual((120 + 15) * 2 * 3, limit(
                "-o", "5", "--vs-prefix", "env", "-r", "3"))

    def test_the_repetitions_are_resolved_on_the_host(self) -> None:
        """The guest's run_all.sh runs no python3: the design's
        repetitions are worked out here, and said here."""
        def runs(*argv: str) -> Tuple[Any, str]:
            o = parse("-k", "k", "-t", "syscall_overhead", *argv)
            rc, _, err = quiet(vm.guest_runs, o.run, o.machine.icount, "t")
            return rc, err
        n = design.reps(["syscall_overhead"])[0]
        self.assertEqual((1, ""), runs())
        self.assertEqual((3, ""), runs("-r", "3"))
        self.assertEqual(n, runs("--repeat")[0])
        self.assertIn(f"t: design: {n} repetitions per side",
                      runs("--repeat")[1])
        self.assertEqual(n, runs("--vs-prefix", "env")[0])
        rc, err = runs("--vs-prefix", "env", "-r", "2")
        self.assertEqual(2, rc)
        self.assertIn(f"t: warning: --repeat 2 is below the design's "
                      f"{n}", err)
        self.assertEqual((2, "t: exact mode (icount): 2 repetitions per "
                          "side\n"), runs("--vs-prefix", "env", "--icount"))
        self.assertEqual((3, ""), runs("--vs-prefix", "env", "--icount",
                                       "-r", "3"))
        o = parse("-k", "k", "--vs-prefix", "env")
        o.run.runs = 2
        self.assertEqual(["--vs-prefix", "env", "--repeat", "2"],
                         vm.guest_args(o.run))


class CommandLines(unittest.TestCase):
    def setUp(self) -> None:
        env = mock.patch.dict(os.environ, {"KSELFTEST_TASKSTATS_ARGS": "-N 5",
                                           "KSFT_MACHINE_SLOW": ""})
        env.start()
        self.addCleanup(env.stop)

    def vng(self, *argv: str) -> vm.Vng:
        # Exact mode through virtme-ng: the plain guest, the
        # deterministic one turned off.
        with mock.patch.dict(os.environ, {"KBENCH_ICOUNT_DETERMINISTIC": "0"}):
            o = parse("-k", "k", *argv)
        b = vm.Vng(o, "vm_run.sh", "/var/tmp/kb/.cache")
        b.image = images.Image("/img/bzImage", "/img/bzImage", "k")
        b.env = {"PATH": "/venv/bin"}
        b.machine = dataclasses.replace(b.machine, accel="tcg")
        return b

    def test_vng_under_tcg_with_icount(self) -> None:
        b = self.vng("--icount", "-t", "syscall_overhead", "--append", "x=1")
        b.programs = ["syscall_overhead:syscall_overhead"]
        usage = runner.usage("t")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(paths, "TOP", "/var/tmp/kb"), \
                mock.patch.object(runner, "usage", return_value=usage), \
                mock.patch.object(collection, "check_tests"), \
                mock.patch.object(os.path, "isdir", return_value=True):
            boot = guest.Boot(d, None, "t")
            cmd, env = b.command(boot, "/var/tmp/kb/j")
            with open(boot.path("plan")) as f:
                plan_file = f.read().splitlines()
            cmd[-1] = cmd[-1].replace(boot.path("plan"), "PLAN")
            boot.close()
        # The plan of the memory root: its JSON in the collection's copy
        # (vm_guest.sh copies it back), the exact timeouts (kselftest's
        # 45 s times 4: no settings file under the made-up TOP).
        self.assertEqual(plan_file[1:], [
            "plan 1 indent /tmp/kbench-icount/json/run_all.ktap",
            "step syscall_overhead 180 'selftests: kbench/syscall_overhead: "
            "syscall_overhead' /tmp/kbench-icount/json/syscall_overhead.json "
            "timeout --kill-after=10 180 ./syscall_overhead --json "
            "/tmp/kbench-icount/json/syscall_overhead.json"])
        self.assertEqual(["vng", "--run", "/img/bzImage", "--verbose",
                          "--user", "root", "--cwd", "/var/tmp/kb",
                          "--memory", "2G", "--force-9p", "--append",
                          "modprobe.blacklist=" + vm.UNUSED_MODULES,
                          "--disable-kvm", "--qemu-opts", "-icount " + ICOUNT,
                          "--cpus", "1", "--rwdir=/var/tmp/kb",
                          "--rwdir=/var/tmp/kb/j", "--append", "x=1",
                          "--exec"], cmd[:-1])
        self.assertEqual({"PATH": "/venv/bin"}, env)
        self.assertEqual(
            "exec env KBENCH_GUEST=tcg KSFT_MACHINE_SLOW=yes KBENCH_ICOUNT=0"
            " KBENCH_TIMEOUT_FACTOR=4 KBENCH_ICOUNT_SETTINGS='icount_qemu="
            f"{ICOUNT}; icount_shift=0' "
            "KSELFTEST_TASKSTATS_ARGS='-N 5' KBENCH_PLAN=PLAN "
            f"{TOP}/scripts/guest/vm_guest.sh --no-build -t syscall_overhead "
            "--json /var/tmp/kb/j", cmd[-1].replace("/var/tmp/kb/scripts",
                                                    f"{TOP}/scripts"))

    def test_hidden_directories_outermost_only(self) -> None:
        with mock.patch.object(os.path, "isdir", return_value=True):
            self.assertEqual(["--rwdir=/var/tmp/a", "--rodir=/run/k"],
                             vm.hidden_mounts(["/var/tmp/a", "/var/tmp/a/c",
                                               "/home/x", "/run/k"],
                                              "/var/tmp/a/j"))
            self.assertEqual(["--rodir=/var/log/a"],
                             vm.hidden_mounts(["/var/log/a"], ""))

    def test_qemu_for_arm64(self) -> None:
        o = parse("-k", "k", "--arch", "arm64", "--icount", "--append", "x=1",
                  "-m", "1G")
        b = vm.Qemu(o, "vm_run.sh", "/c")
        b.image = images.Image("/img/Image", "/img/Image", "k")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(vm.Qemu, "overlay", return_value="/i.cpio"):
            boot = guest.Boot(d, None, "t")
            cmd, _ = b.command(boot, "")
            boot.close()
        self.assertEqual(["qemu-system-aarch64", "-M", "virt", "-cpu",
                          "max,pauth-impdef=on,cntfrq=1000000000", "-icount",
                          ICOUNT, "-rtc", "base=2026-01-01T00:00:00,clock=vm",
                          "-seed", "1", "-smp",
                          "1", "-m", "1G", "-nodefaults", "-display", "none",
                          "-no-reboot", "-serial", "stdio", "-kernel",
                          "/img/Image", "-initrd", "/i.cpio", "-append",
                          "console=ttyAMA0 rdinit=/init panic=-1 quiet "
                          "nokaslr norandmaps randomize_kstack_offset=off "
                          "page_alloc.shuffle=0 slub_nomerge x=1"],
                         cmd)

    def test_host_packages_missing_is_3(self) -> None:
        b = vm.Qemu(parse("-k", "k", "--arch", "arm64"), "vm_run.sh", "/c")
        with mock.patch.object(shutil, "which", return_value=None), \
                self.assertRaises(cli.Failure) as e:
            b.check_host()
        self.assertEqual(3, e.exception.status)
        self.assertIn("apt-get install qemu-system-arm gcc-aarch64-linux-gnu"
                      " cpio", str(e.exception))

    def test_kvm_probe_is_cached_per_host(self) -> None:
        with tempfile.TemporaryDirectory() as cache, \
                mock.patch.object(proc, "capture",
                                  return_value="QEMU 7.2\n"), \
                mock.patch.object(vm, "kvm_probe", return_value=(
                    False, "a probe boot under KVM hung")) as probe, \
                contextlib.redirect_stderr(io.StringIO()):
            first = vm.probed("/img", "t", cache)
            second = vm.probed("/img", "t", cache)
        self.assertEqual(("tcg", "a probe boot under KVM hung"), first)
        self.assertEqual("tcg", second[0])
        self.assertIn("cached in", second[1])
        probe.assert_called_once()


    def test_vng_under_kvm_without_icount(self) -> None:
        b = self.vng("--cpus", "4", "-m", "1G")
        b.machine = dataclasses.replace(b.machine, accel="kvm")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(os.path, "isdir", return_value=False):
            boot = guest.Boot(d, None, "t")
            cmd, _ = b.command(boot, "")
            boot.close()
        self.assertNotIn("--disable-kvm", cmd)
        self.assertNotIn("--qemu-opts", cmd)
        self.assertEqual(["--memory", "1G"], cmd[8:10])
        self.assertEqual(["--cpus", "4", "--exec"], cmd[-4:-1])
        self.assertNotIn("KBENCH_ICOUNT", cmd[-1])
        self.assertNotIn("--json", cmd[-1])

    def test_icount_options_from_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"KBENCH_ICOUNT_QEMU":
                                          "shift=2,sleep=on"}):
            b = self.vng("--icount")
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(os.path, "isdir", return_value=False):
            boot = guest.Boot(d, None, "t")
            cmd, _ = b.command(boot, "")
            boot.close()
        i = cmd.index("--qemu-opts")
        self.assertEqual("-icount shift=2,sleep=on", cmd[i + 1])
        self.assertIn(" KBENCH_ICOUNT=2 ", cmd[-1])

    @needs.commands("make")
    def test_the_build_and_the_programs(self) -> None:
        """As run_all.sh does on the host (kbtools.collection): -t names
        checked (bad usage), the packages set up (missing: a setup
        failure, 3), the build (1), the programs listed."""
        with self.assertRaisesRegex(cli.Error, "unknown test 'nosuch' "
                                    "[(]known: .*syscall_overhead"):
            self.vng("-t", "nosuch").build_and_list()
        b = self.vng("-t", "syscall_overhead", "-t", "taskstats")
        calls: List[Any] = []

        def run(cmd: List[str], **kw: Any) -> int:
            calls.append(cmd)
            return 0
        with mock.patch.object(packages, "set_up",
                               return_value=4), \
                self.assertRaises(cli.Failure) as e:
            b.build_and_list()
        self.assertEqual(3, e.exception.status)
        with mock.patch.object(packages, "set_up",
                               return_value=0), \
                mock.patch.object(proc, "run", run):
            b.build_and_list()
        self.assertEqual(["TESTS=syscall_overhead taskstats", "all"],
                         calls[0][-2:])
        self.assertEqual(["syscall_overhead:syscall_overhead",
                          "taskstats:taskstats"], b.programs)
        # --no-build: neither.
        b = self.vng("-t", "syscall_overhead", "--no-build")
        with mock.patch.object(collection, "build") as build:
            b.build_and_list()
        build.assert_not_called()
        self.assertEqual(["syscall_overhead:syscall_overhead"], b.programs)

    def test_the_programs_digest_follows_their_build(self) -> None:
        """A calibration's key holds the build of the programs a guest
        runs: every executable of their directories, helpers too."""
        with tempfile.TemporaryDirectory() as top:
            os.makedirs(os.path.join(top, "proc_create"))

            def put(name: str, data: bytes, mode: int = 0o755) -> None:
                path = os.path.join(top, "proc_create", name)
                with open(path, "wb") as f:
                    f.write(data)
                os.chmod(path, mode)
            put("proc_create", b"\x7fELF one")
            put("proc_create_true", b"\x7fELF helper")
            put("pc_cells.c", b"source", 0o644)
            progs = ["proc_create:proc_create"]
            first = collection.programs_sha(top, progs)
            put("pc_cells.c", b"edited, not built", 0o644)
            self.assertEqual(first, collection.programs_sha(top, progs))
            put("proc_create_true", b"\x7fELF helper rebuilt")
            self.assertNotEqual(first, collection.programs_sha(top, progs))

    def test_a_cross_build_that_fails(self) -> None:
        calls: List[Any] = []

        def run(cmd: List[str], log: str = "", **kw: Any) -> int:
            calls.append((cmd, kw.get("env", {}).get("KBENCH_CACHE")))
            with open(log, "w") as f:
                f.write("".join(f"line {i}\n" for i in range(30)))
            return 2
        with tempfile.TemporaryDirectory() as work, \
                tempfile.TemporaryDirectory() as cache, \
                mock.patch.object(shutil, "copytree"), \
                mock.patch.object(debian, "cross_libs"), \
                mock.patch.object(proc, "run", run):
            b = vm.Qemu(parse("-k", "k", "--arch", "arm64"), "vm_run.sh",
                        cache)
            b.ksrc = "/src/linux"
            rc, _, err = quiet(cli.orchestrate, "vm_run.sh",
                               lambda: len(b.build(work)))
            out = os.path.join(cache, "vm", "arm64-build",
                               paths.clone_id())
        self.assertEqual(3, rc)
        # Built out of the clone's tree (its own build stays), into the
        # cache, per clone.
        self.assertEqual((["make", "-s", "-C", paths.TOP, "ARCH=arm64",
                           "CROSS_COMPILE=aarch64-linux-gnu-",
                           "KSRC=/src/linux", f"OUTPUT={out}"], cache),
                         calls[0])
        self.assertIn("line 29\nvm_run.sh: the arm64 cross build failed",
                      err)
        self.assertNotIn("line 9\n", err)

    def test_arm64_overlay_carries_icount_and_the_arguments(self) -> None:
        o = parse("-k", "k", "--arch", "arm64", "--icount", "-t",
                  "syscall_overhead", "--vs-prefix", "env")
        o.run.runs = 2
        b = vm.Qemu(o, "vm_run.sh", "/c")
        b.programs = ["syscall_overhead:syscall_overhead"]
        with tempfile.TemporaryDirectory() as d:
            b.collection = os.path.join(d, "coll")
            os.makedirs(b.collection)
            b.ksrc = os.path.join(d, "ksrc")
            sel = os.path.join(b.ksrc, "tools", "testing", "selftests")
            os.makedirs(sel)
            open(os.path.join(sel, "lib.mk"), "w").close()
            b.rootfs = os.path.join(d, "rootfs.cpio")
            with open(b.rootfs, "wb") as f:
                f.write(b"ROOT")
            state = os.path.join(d, "state")
            os.makedirs(state)
            boot = guest.Boot(state, None, "t")

            def pack(root: str, out: str) -> bool:
                with open(out, "wb") as f:
                    f.write(b"OVERLAY")
                return True
            with mock.patch.object(debian, "pack_cpio", pack):
                initrd = b.overlay(boot, "/host/json")
            boot.close()
            with open(initrd, "rb") as fb:
                self.assertEqual(b"ROOTOVERLAY", fb.read())
            with open(os.path.join(state, "overlay", "kbench-args")) as g:
                args = g.read()
            with open(os.path.join(state, "overlay", "kbench-plan")) as g:
                plan_file = g.read().splitlines()
            self.assertTrue(os.access(os.path.join(state, "overlay", "init"),
                                      os.X_OK))
            # Every file of the overlay dated alike (no clock skew in
            # the guest, the same bytes each boot).
            times = {os.lstat(os.path.join(r, n)).st_mtime
                     for r, ds, fs in os.walk(os.path.join(state, "overlay"))
                     for n in ds + fs}
        self.assertEqual({0}, times)
        # The deterministic guest: its settings and the dither, per boot.
        self.assertIn("export KBENCH_ICOUNT_SETTLE=1\n", args)
        self.assertIn("root=initramfs", args)
        self.assertRegex(args, "export KBENCH_ICOUNT_DITHER=[0-9]+\n")
        self.assertIn("export KBENCH_GUEST=tcg\n", args)
        self.assertNotIn("KBENCH_MERGE", args)
        self.assertIn("export KBENCH_ICOUNT=0\n", args)
        self.assertNotIn("KSRC", args)
        self.assertIn("json=/tmp/json\nplan=/kbench-plan\n", args)
        # The plan: the exact guest's timeouts (policy's run_factor), two
        # repetitions a side in ABBA order, JSON where the init copies
        # it back from.
        self.assertEqual(plan_file[1], "plan 4 indent /tmp/json/run_all.ktap")
        self.assertEqual(plan_file[3], (
            "step syscall_overhead 480 'selftests: kbench/syscall_overhead: "
            "syscall_overhead (candidate, repetition 1 of 2)' "
            "/tmp/json/repetitions/candidate/1/syscall_overhead.json timeout "
            "--kill-after=10 480 env ./syscall_overhead --json "
            "/tmp/json/repetitions/candidate/1/syscall_overhead.json"))

    def test_the_prefixes_host_files_go_into_the_initramfs(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            wrap = os.path.join(d, "wrap")
            open(wrap, "w").close()
            o = parse("-k", "k", "--icount", "--base-prefix",
                      f"{wrap} -n 0", f"--vs-prefix={wrap} -n 1",
                      "-t", "/etc")
            self.assertEqual([wrap, wrap], vm.prefix_files(o.run))
            self.assertEqual([], vm.prefix_files(parse("-k", "k").run))

    def test_the_runner_keeps_vm_run_sh_name_under_wrappers(self) -> None:
        self.assertEqual("vm_run.sh", vm.runner_prog("run_all.sh"))
        self.assertEqual("vm_run.sh", vm.runner_prog("vm_arm64.sh"))
        self.assertEqual("kbench vm", vm.runner_prog("kbench vm"))


def fake_guest(script: str) -> List[str]:
    """A stand-in for vng: a bash script."""
    return ["bash", "-c", script]


class OneBoot(unittest.TestCase):
    """guest.run and guest.verdict on tiny real children."""

    def boot(self, script: str, boot_timeout: int = 20, vm_timeout: int = 20,
             serial: bool = False) -> Any:
        with tempfile.TemporaryDirectory() as d:
            sink = io.BytesIO()
            b = guest.Boot(d, sink, "vm_run.sh")
            if serial:
                out, err = guest.serial_console(b, b.path("json.b64")), \
                    (lambda data: None)
            else:
                out, err = b.ktap, guest.virtme_stderr(b)
            result: Dict[str, Any] = {}
            start = time.monotonic()
            with contextlib.redirect_stderr(io.StringIO()) as e:
                try:
                    rc = guest.run(fake_guest(script), b, os.environ, out,
                                   err, boot_timeout, vm_timeout)
                    result["status"] = guest.verdict(
                        b, rc, "k", "vng", boot_timeout, vm_timeout,
                        lambda text, rc: ["a hint"])
                except guest.Ended as x:
                    result["status"] = x.status
                    result["message"] = str(x)
            b.close()
            result.update(stderr=e.getvalue(), ktap=sink.getvalue(),
                          secs=time.monotonic() - start)
            if serial and os.path.exists(b.path("json.b64")):
                with open(b.path("json.b64"), "rb") as f:
                    result["json"] = f.read()
        return result

    def test_a_run_that_passes(self) -> None:
        r = self.boot("echo '[    1.0] booting' >&2; "
                      "echo 'vm-run: guest up: Linux 6.1, accel=tcg' >&2; "
                      "echo 'TAP version 13'; echo '1..1'; echo 'ok 1 x'; "
                      "echo '# Totals: pass:1 fail:0'; "
                      "echo '[    9.5] WARNING: something' >&2; "
                      "echo 'a message' >&2; "
                      "echo 'vm-run: guest done: exit status 1' >&2; exit 1")
        self.assertEqual(1, r["status"])
        self.assertEqual(b"TAP version 13\n1..1\nok 1 x\n# Totals: pass:1 "
                         b"fail:0\n", r["ktap"])
        self.assertNotIn("booting", r["stderr"])
        self.assertIn("vm-run: guest kernel: [    9.5] WARNING", r["stderr"])
        self.assertRegex(r["stderr"], r"vm_run.sh: k \[Linux 6.1, accel=tcg"
                         r"\]: boot [0-9.]+ s, run [0-9.]+ s, total [0-9.]+ "
                         r"s; KTAP totals: pass:1 fail:0; exit status 1")

    def test_no_boot_within_the_timeout(self) -> None:
        r = self.boot("echo '[ 0.5] slow' >&2; sleep 30", boot_timeout=1)
        self.assertEqual(124, r["status"])
        self.assertEqual("k did not come up within 1 s (--boot-timeout)",
                         r["message"])
        self.assertIn("last lines of the guest console", r["stderr"])
        self.assertLess(r["secs"], 15)

    def test_a_run_that_does_not_end(self) -> None:
        r = self.boot("echo 'vm-run: guest up: L' >&2; sleep 30",
                      vm_timeout=1)
        self.assertEqual(124, r["status"])
        self.assertIn("the run in k did not end within 1 s", r["message"])
        self.assertLess(r["secs"], 15)

    def test_a_guest_that_panics(self) -> None:
        r = self.boot("echo '[ 2.0] Kernel panic - not syncing: VFS: Unable "
                      "to mount root fs' >&2; exit 0")
        self.assertEqual(125, r["status"])
        self.assertEqual("k panicked at boot: Kernel panic - not syncing: "
                         "VFS: Unable to mount root fs", r["message"])
        self.assertIn("hint: a hint", r["stderr"])
        r = self.boot("echo 'vm-run: guest up: L' >&2; echo 'TAP version 13';"
                      " echo '[ 9.0] Kernel panic - not syncing: sysrq' >&2;"
                      " exit 0")
        self.assertEqual(125, r["status"])
        self.assertIn("panicked during the run: Kernel panic", r["message"])
        self.assertIn("guest kernel: [ 9.0] Kernel panic", r["stderr"])
        r = self.boot("echo 'vm-run: guest up: L' >&2; exit 3")
        self.assertEqual("k died during the run (vng exit status 3)",
                         r["message"])

    def test_the_serial_console_of_arm64(self) -> None:
        r = self.boot(r"printf '[ 1.0] early\r\nvm-run: guest up: Linux 6.12 "
                      r"aarch64\r\nTAP version 13\r\n1..0\r\nvm-run: json "
                      r"begin\r\nH4sI\r\nvm-run: json end\r\nvm-run: guest "
                      r"done: exit status 3\r\n[ 9.0] reboot: Power down\n'",
                      serial=True)
        self.assertEqual(3, r["status"])
        self.assertEqual(b"TAP version 13\n1..0\n", r["ktap"])
        self.assertEqual(b"H4sI\n", r["json"])

    def test_a_signal_stops_the_guest(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            pidfile = os.path.join(d, "pid")
            b = guest.Boot(d, io.BytesIO(), "t")

            def stop_when_up() -> None:
                while b.up_at is None:
                    time.sleep(0.05)
                os.kill(os.getpid(), signal.SIGTERM)
            threading.Thread(target=stop_when_up, daemon=True).start()
            with proc.stop_on_signals(), \
                    self.assertRaises(proc.Interrupted), \
                    contextlib.redirect_stderr(io.StringIO()) as err:
                guest.run(fake_guest(f"sleep 60 & echo $! >{pidfile}; "
                                     "echo 'vm-run: guest up: L' >&2; wait"),
                          b, os.environ, b.ktap, guest.virtme_stderr(b),
                          20, 20)
            b.close()
            self.assertIn("interrupted: stopping the guest", err.getvalue())
            with open(pidfile) as f:
                grandchild = int(f.read())
            time.sleep(0.2)
            try:  # gone, or a zombie its new parent has not reaped yet
                with open(f"/proc/{grandchild}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
                self.assertEqual("Z", state)
            except FileNotFoundError:
                pass


class LastResort(unittest.TestCase):
    def test_a_guest_that_does_not_stop_after_its_run(self) -> None:
        """The run is over but the guest does not go away: stopped at
        boot + run timeout (+ slack), exit 124 as timeout(1) said it."""
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(guest, "SLACK_S", 0):
            b = guest.Boot(d, io.BytesIO(), "t")
            with contextlib.redirect_stderr(io.StringIO()) as err:
                rc = guest.run(fake_guest(
                    "echo 'vm-run: guest up: L' >&2; echo 'TAP version 13';"
                    " echo 'vm-run: guest done: exit status 0' >&2; "
                    "sleep 30"), b, os.environ, b.ktap,
                    guest.virtme_stderr(b), 1, 2)
                status = guest.verdict(b, rc, "k", "vng", 1, 2,
                                       lambda t, r: [])
            b.close()
        self.assertEqual((124, "last"), (status, b.timed_out))
        self.assertIn("exit status 124", err.getvalue())


class WholeRun(unittest.TestCase):
    """vm.main from the options to the exit status, the host's side
    mocked (packages, image, virtme-ng, build) and a bash script for
    vng."""

    def main(self, script: str, *argv: str,
             signal_after: Optional[float] = None,
             guest_json: Optional[Callable[[str], None]] = None) -> Any:
        """guest_json(json_dir): what the guest leaves there."""
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, write_through=True)
        err = io.StringIO()
        prog_calls: List[Any] = []

        def command(backend: vm.Vng, boot: guest.Boot,
                    json_dir: str) -> Tuple[List[str], Dict[str, str]]:
            prog_calls.append(backend.guest_command(json_dir, "PLAN"))
            if guest_json:
                guest_json(json_dir)
            return fake_guest(script), dict(os.environ)

        def build(cmd: List[str], **kw: Any) -> Tuple[int, str]:
            if cmd[-1] == "list":
                return 0, "syscall_overhead taskstats\n"
            prog_calls.append(cmd)
            return 0, "syscall_overhead:syscall_overhead\n"

        def comparison(req: kbcompare.Request) -> kbcompare.Comparison:
            prog_calls.append(req)
            return kbcompare.Comparison("a table\nof two lines", [], [])
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.dict(os.environ, {
                    "TMPDIR": d, "KSRC": "/ksrc",
                    # virtme-ng's exact guest: the deterministic one off.
                    "KBENCH_ICOUNT_DETERMINISTIC": "0"}), \
                mock.patch.object(vm.Vng, "check_host"), \
                mock.patch.object(images, "resolve", return_value=
                                  images.Image("/i", "/i", "test-kernel")), \
                mock.patch.object(vng, "ensure", return_value="/venv"), \
                mock.patch.object(proc, "output", build), \
                mock.patch.object(collection, "build"), \
                mock.patch.object(kbcompare, "comparison", comparison), \
                mock.patch.object(vm.Vng, "command", command), \
                mock.patch.object(vm, "choose_accel",
                                  return_value=("tcg", "--accel tcg")), \
                mock.patch.object(sys, "stdout", out), \
                contextlib.redirect_stderr(err):
            if signal_after is not None:
                threading.Timer(signal_after, os.kill,
                                (os.getpid(), signal.SIGTERM)).start()
            console = os.path.join(d, "console.txt")
            rc = vm.main(["--kernel", "test-kernel", "--console", console,
                          *argv], "vm_run.sh")
            kept = ""
            if os.path.exists(console):
                with open(console) as f:
                    kept = f.read()
            left = sorted(n for n in os.listdir(d) if n != "console.txt")
        return rc, raw.getvalue().decode(), err.getvalue(), kept, \
            left, prog_calls

    def test_a_passing_run(self) -> None:
        rc, out, err, kept, left, calls = self.main(
            "echo '[ 0.1] early' >&2; echo 'vm-run: guest up: L' >&2; "
            "echo 'TAP version 13'; echo '1..1'; echo 'ok 1 x'; "
            "echo 'vm-run: guest done: exit status 0' >&2",
            "-t", "syscall_overhead", "--icount")
        self.assertEqual(0, rc)
        self.assertEqual("TAP version 13\n1..1\nok 1 x\n", out)
        # syscall_overhead's timeout (120) and the slack (120), x 4.
        assert_in_order(self, err, "vm_run.sh: accel: TCG with QEMU's "
                        "instruction counter (-icount shift=0,sleep=off,"
                        "align=off)", "vm_run.sh: booting test-kernel: 1 "
                        "programs, boot timeout 600 s, run timeout 960 s")
        self.assertIn("[ 0.1] early", kept)
        self.assertEqual([], left)  # the work directory is gone
        self.assertEqual(["COLLECTION=syscall_overhead", "emit_tests"],
                         calls[0][-2:])
        self.assertIn("KBENCH_ICOUNT=0 KBENCH_TIMEOUT_FACTOR=4 "
                      "KBENCH_ICOUNT_SETTINGS='icount_qemu=shift=0,sleep=off,"
                      "align=off; icount_shift=0' KBENCH_PLAN=", calls[1])
        self.assertNotIn("KSRC", calls[1])

    def test_an_ab_in_one_boot_is_merged_and_compared_here(self) -> None:
        """--vs-prefix in a guest without --json: the guest leaves each
        repetition's JSON (KBENCH_MERGE=host), and the host merges them
        into base/ and candidate/, compares, and says the table."""
        seen: Dict[str, Any] = {}

        def guest_json(json_dir: str) -> None:
            seen["dir"] = json_dir
            for side in ("base", "candidate"):
                for k in ("1", "2"):
                    d = os.path.join(json_dir, "repetitions", side, k)
                    os.makedirs(d)
                    results.write_json(os.path.join(
                        d, "syscall_overhead.json"), result_doc(side + k))

        def listing() -> None:
            seen["files"] = sorted(
                os.path.relpath(os.path.join(d, f), seen["dir"])
                for d, _, fs in os.walk(seen["dir"]) for f in fs)
        real = vm.after_run

        def after_run(*args: Any) -> int:
            listing()
            return real(*args)
        with mock.patch.object(vm, "after_run", after_run):
            rc, out, err, _, _, calls = self.main(
                "echo 'vm-run: guest up: L' >&2; echo 'TAP version 13'; "
                "echo 'vm-run: guest done: exit status 0' >&2",
                "-t", "syscall_overhead", "--icount", "--vs-prefix", "env",
                guest_json=guest_json)
        self.assertEqual(0, rc, err)
        self.assertIn("exact mode (icount): 2 repetitions per side", err)
        self.assertIn(" --vs-prefix env --repeat 2 --json ", calls[1])
        self.assertEqual(["base/syscall_overhead.json",
                          "candidate/syscall_overhead.json"], seen["files"])
        compare = [c for c in calls
                   if isinstance(c, kbcompare.Request)][0]
        self.assertEqual(["base", "env"], compare.labels)
        self.assertEqual([os.path.join(seen["dir"], s)
                          for s in ("base", "candidate")], compare.paths)
        self.assertEqual("TAP version 13\n# a table\n# of two lines\n", out)

    def test_a_guest_that_panics_at_boot(self) -> None:
        rc, out, err, kept, _, _ = self.main(
            "echo '[ 1.0] Kernel panic - not syncing: No init found' >&2; "
            "exit 1")
        self.assertEqual((125, ""), (rc, out))
        self.assertIn("vm_run.sh: test-kernel panicked at boot: Kernel "
                      "panic - not syncing: No init found", err)
        self.assertIn("Kernel panic", kept)

    def test_a_signal_stops_the_guest_and_exits_130(self) -> None:
        rc, out, err, kept, left, _ = self.main(
            "echo 'vm-run: guest up: L' >&2; echo 'TAP version 13'; "
            "sleep 60", signal_after=1.5)
        self.assertEqual(130, rc)
        self.assertEqual("TAP version 13\n", out)
        self.assertEqual(1, err.count("interrupted"), err)
        self.assertIn("vm_run.sh: interrupted: stopping the guest", err)
        self.assertEqual([], left)


def result_doc(boot: str, arch: str = "aarch64") -> Dict[str, Any]:
    """One repetition of syscall_overhead's getpid."""
    return {"schema": "kbench-results/1", "test": "syscall_overhead",
            "kernel": {"release": "6.12"},
            "machine": {"arch": arch, "clock_mode": "icount",
                        "icount_shift": 0},
            "date": "2026-11-27T00:00:00Z", "boot_id": boot, "params": {},
            "rows": [{"name": "getpid", "status": "ok", "unit": "us",
                      "n": 100, "median": 0.4565, "mean": 0.4565}]}


class Staging(unittest.TestCase):
    """The arm64 collection: built per clone in the cache, copied per
    run; a second, third or concurrent run in one clone finds its own
    copy (before, copytree over the first run's copy failed on the old
    names' links, [Errno 17] File exists, printed as a list of reprs)."""

    def setUp(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        top = self.path("clone")
        for d in ("scripts", "syscall_overhead", ".git", ".cache",
                  "fuzz/build", "tests/__pycache__"):
            os.makedirs(os.path.join(top, d))
        for f, text in (("run_all.sh", "#!/bin/bash\n"),
                        ("scripts/vm_run.sh", "#!/bin/bash\n"),
                        ("syscall_overhead/syscall_overhead", "x86 ELF"),
                        ("syscall_overhead/syscall_overhead.o", "object"),
                        ("syscall_overhead/Makefile", "include x\n"),
                        (".git/HEAD", "ref"), (".cache/big", "cached"),
                        ("fuzz/build/fuzzer", "ELF"),
                        ("tests/__pycache__/x.pyc", "")):
            with open(os.path.join(top, f), "w") as fh:
                fh.write(text)
        os.symlink("vm_run.sh", os.path.join(top, "scripts", "vm-run.sh"))
        patch = mock.patch.object(paths, "TOP", top)
        patch.start()
        self.addCleanup(patch.stop)

    def path(self, *names: str) -> str:
        return os.path.join(self.tmp, *names)

    def build(self, cmd: List[str], log: Optional[str] = None,
              **kw: Any) -> int:
        """make OUTPUT=DIR: the arm64 programs in DIR/TEST/."""
        out = [a.split("=", 1)[1] for a in cmd if a.startswith("OUTPUT=")][0]
        os.makedirs(os.path.join(out, "syscall_overhead"), exist_ok=True)
        for name, text in (("syscall_overhead", "arm64 ELF"),
                           (".kbench-target", "aarch64-linux-gnu")):
            with open(os.path.join(out, "syscall_overhead", name), "w") as f:
                f.write(text)
        return 0

    def qemu(self) -> vm.Qemu:
        b = vm.Qemu(parse("-k", "k", "--arch", "arm64"), "vm_run.sh",
                    self.path("cache"))
        b.ksrc = "/src/linux"
        return b

    def patched(self) -> contextlib.ExitStack:
        """The cross libraries, make and stderr, for every run at once
        (mock.patch is not for threads of their own)."""
        stack = contextlib.ExitStack()
        stack.enter_context(mock.patch.object(debian, "cross_libs"))
        stack.enter_context(mock.patch.object(proc, "run", lambda *a, **k:
                                              self.build(*a, **k)))
        stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        return stack

    def cross_build(self, work: str) -> str:
        os.makedirs(work, exist_ok=True)
        with self.patched():
            dest = self.qemu().build(work)
        return dest

    def test_three_runs_in_one_clone(self) -> None:
        for k in range(3):
            dest = self.cross_build(self.path(f"work{k}"))
            self.assertEqual(self.path(f"work{k}", "kbench"), dest)
            with open(os.path.join(dest, "syscall_overhead",
                                   "syscall_overhead")) as f:
                self.assertEqual("arm64 ELF", f.read())
            self.assertEqual("vm_run.sh", os.readlink(
                os.path.join(dest, "scripts", "vm-run.sh")))
            for gone in (".git", ".cache", "fuzz/build", "tests/__pycache__",
                         "syscall_overhead/syscall_overhead.o",
                         "syscall_overhead/.kbench-target"):
                self.assertFalse(os.path.lexists(os.path.join(dest, gone)),
                                 gone)
        # The clone's own build stays; the build is the cache's, per clone.
        with open(os.path.join(paths.TOP, "syscall_overhead",
                               "syscall_overhead")) as f:
            self.assertEqual("x86 ELF", f.read())
        self.assertEqual([paths.clone_id(), paths.clone_id() +
                          ".lock"], sorted(os.listdir(self.path(
                              "cache", "vm", "arm64-build"))))

    def test_clones_sharing_a_cache_build_apart(self) -> None:
        first = paths.clone_id()
        with mock.patch.object(paths, "TOP", self.path("clone2")):
            self.assertNotEqual(first, paths.clone_id())
            self.assertTrue(paths.clone_id().startswith("clone2-"))

    def test_runs_at_once_take_turns(self) -> None:
        """The build and the copy of two runs at once, one after the
        other (the cache's lock), each run into its own copy."""
        inside, most = [0], [0]
        real = self.build

        def build(cmd: List[str], log: Optional[str] = None,
                  **kw: Any) -> int:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            time.sleep(0.2)
            inside[0] -= 1
            return real(cmd, log)
        patcher = mock.patch.object(self, "build", build)
        patcher.start()
        self.addCleanup(patcher.stop)
        runs = []
        for k in range(2):
            os.makedirs(self.path(f"w{k}"))
            runs.append(threading.Thread(target=self.qemu().build,
                                         args=(self.path(f"w{k}"),)))
        with self.patched():
            for t in runs:
                t.start()
            for t in runs:
                t.join()
        self.assertEqual(1, most[0])
        for k in range(2):
            self.assertTrue(os.path.isfile(self.path(
                f"w{k}", "kbench", "syscall_overhead", "syscall_overhead")))

    def test_a_copy_that_fails_is_one_line(self) -> None:
        e = shutil.Error([("/a/x", "/b/x", "[Errno 17] File exists"),
                             ("/a/y", "/b/y", "[Errno 17] File exists")])
        self.assertEqual("cannot copy /a/x to /b/x: [Errno 17] File exists "
                         "(and 1 more)", cli.os_error_text(e))
        rc, _, err = quiet(cli.orchestrate, "t", lambda: (_ for _ in ()).throw(e))
        self.assertEqual(1, rc)
        self.assertEqual("t: cannot copy /a/x to /b/x: [Errno 17] File "
                         "exists (and 1 more)\n", err)
        self.assertEqual("/f: No such file or directory", cli.os_error_text(
            FileNotFoundError(2, "No such file or directory", "/f")))


class HostMerge(unittest.TestCase):
    """The guest's repetitions merged here as run_all.sh merges them on
    a host: the same layout from an arm64 guest as from x86_64."""

    def test_layout(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            for sides in (False, True):
                out = os.path.join(d, str(sides))
                for side in ("base", "candidate") if sides else ("base",):
                    for k in ("1", "2", "10"):
                        rep = os.path.join(out, "repetitions", side, k)
                        os.makedirs(rep)
                        results.write_json(os.path.join(
                            rep, "syscall_overhead.json"),
                            result_doc(f"{side}{k}"))
                self.assertTrue(results.merge_repetitions(out, sides))
                self.assertFalse(results.merge_repetitions(out, sides))
                files = sorted(os.path.relpath(os.path.join(p, f), out)
                               for p, _, fs in os.walk(out) for f in fs)
                want = ["base/syscall_overhead.json",
                        "candidate/syscall_overhead.json"] if sides else \
                    ["syscall_overhead.json"]
                self.assertEqual(want, files)
                with open(os.path.join(out, want[0])) as f:
                    doc = json.load(f)
                self.assertEqual(3, doc["repeat"])
                # In the repetitions' order: 1, 2, 10.
                self.assertEqual(["base1", "base2", "base10"],
                                 [r["boot_id"] for r in doc["repetitions"]])

    def test_after_the_run_the_host_compares_and_reports(self) -> None:
        """--vs-prefix's table and --report, as run_all.sh ends on a
        host: '# ' lines on stdout and in DIR/run_all.ktap; compare's
        exit 1 (--fail-above) the run's status."""
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(runner, "check_report"):
            with open(os.path.join(d, "run_all.ktap"), "w") as f:
                f.write("# Totals: pass:2\n")
            run = parse("-k", "k", "--vs-prefix", "env", "--fail-above", "5",
                        "--json", d, "--report", os.path.join(d, "r.html")).run
            calls: List[Any] = []

            def comparison(req: kbcompare.Request) -> kbcompare.Comparison:
                calls.append(req)
                return kbcompare.Comparison("getppid slower", [],
                                               [mock.MagicMock()])

            def write(out: str, paths: List[str]) -> None:
                calls.append((out, paths))
            from kbtools import report
            with mock.patch.object(kbcompare, "comparison", comparison), \
                    mock.patch.object(kbcompare.Comparison, "over_lines",
                                      return_value=["env: getppid slower"]), \
                    mock.patch.object(report, "write", write):
                rc, out, err = quiet(vm.after_run, run, d, d, "t", 0)
            self.assertIn("t: env: getppid slower\n", err)
            with open(os.path.join(d, "run_all.ktap")) as f:
                ktap = f.read()
        self.assertEqual(1, rc)
        want = f"# getppid slower\n# report: {d}/r.html\n"
        self.assertEqual(want, out)
        self.assertEqual("# Totals: pass:2\n" + want, ktap)
        self.assertEqual((["base", "env"], 5.0,
                          [f"{d}/base", f"{d}/candidate"]),
                         (calls[0].labels, calls[0].fail_above_pct,
                          calls[0].paths))
        self.assertEqual((f"{d}/r.html", [d]), calls[1])

    def test_results_that_cannot_be_merged(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "repetitions", "base", "1")
            os.makedirs(rep)
            with open(os.path.join(rep, "syscall_overhead.json"), "w") as f:
                f.write("{")
            rc, _, err = quiet(vm.merge_repetitions, d, False, "t", 0)
        self.assertEqual(1, rc)
        self.assertIn("t: could not merge the repetitions' results into", err)

    def test_the_sides_compared_and_reported_here(self) -> None:
        """kbtools.compare and kbtools.report in this process, as
        compare.py and report.py would: the table as '# ' lines (also
        at the end of the KTAP copy), --fail-above's rows on stderr."""
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for side, median in (("base", 0.4), ("candidate", 0.8)):
                dirs.append(os.path.join(d, side))
                for k in range(4):
                    doc = result_doc(f"{side}{k}")
                    doc["machine"] = {"arch": "x86_64"}  # a real clock
                    doc["rows"][0]["median"] = median + k / 1000
                    rep = os.path.join(d, "reps", side, str(k))
                    os.makedirs(rep)
                    results.write_json(os.path.join(
                        rep, "syscall_overhead.json"), doc)
                results.merge_dirs(dirs[-1], [
                    os.path.join(d, "reps", side, str(k)) for k in range(4)])
            ktap = os.path.join(d, "run_all.ktap")
            with open(ktap, "w") as f:
                f.write("TAP version 13\n")
            rc, out, err = quiet(runner.compare, dirs, "base,env", "", "t", ktap)
            self.assertEqual((0, ""), (rc, err))
            self.assertRegex(out, r"(?m)^# .*getpid")
            self.assertIn("env", out)
            with open(ktap) as f:
                self.assertEqual("TAP version 13\n" + out, f.read())
            rc, _, err = quiet(runner.compare, dirs, "base,env", "10", "t")
            self.assertEqual(1, rc)
            self.assertIn("t: env: syscall_overhead:getpid is slower by "
                          "more than 10%", err)
            rc, out, err = quiet(runner.compare, [d, d + "/none"], "a,b",
                                 "", "t")
            self.assertEqual((2, ""), (rc, out))
            self.assertIn("t: could not compare the results: ", err)
            with mock.patch.object(runner, "say_lines") as said:
                self.assertFalse(runner.report(os.path.join(d, "r.html"),
                                               os.path.join(d, "none")))
            self.assertTrue(said.call_args[0][0].startswith("report: "))


class Images(unittest.TestCase):
    def test_local_kinds(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(cli.Error, "no built kernel tree"):
                images.resolve(arch.X86_64, d, "t", d)
            bz = os.path.join(d, "arch", "x86", "boot", "bzImage")
            os.makedirs(os.path.dirname(bz))
            with open(bz, "wb") as f:
                f.write(b"\0" * 0x202 + b"HdrS")
            self.assertEqual(images.Image(d, bz, f"kernel tree {d}"),
                             images.resolve(arch.X86_64, d, "t", d))
            with self.assertRaisesRegex(cli.Error, "not an x86 kernel image"):
                images.resolve(arch.X86_64, "/etc/hostname", "t", d)
            with self.assertRaisesRegex(cli.Error, "no kernel image"):
                images.resolve(arch.X86_64, "/nonexistent", "t", d)
            img = images.resolve(arch.ARM64, "/etc/hostname", "t", d)
            self.assertEqual("/etc/hostname", img.boot)

    def test_debian_names(self) -> None:
        with tempfile.TemporaryDirectory() as cache:
            pkg = "linux-image-6.12.43+deb13-arm64"
            dest = os.path.join(cache, "vm", "kernels", pkg + "_arm64")
            os.makedirs(os.path.join(dest, "boot"))
            open(os.path.join(dest, ".kbench-unpacked"), "w").close()
            open(os.path.join(dest, "boot", "vmlinuz-6.12"), "w").close()
            calls: List[Any] = []

            def capture(cmd: List[str]) -> str:
                calls.append(cmd)
                if "depends" in cmd:
                    return f"linux-image-6.12-arm64\n  Depends: {pkg}:arm64\n"
                return ""
            # arm64's private indices, fresh: no update.
            lists = os.path.join(cache, "apt", "arm64", "state", "lists")
            os.makedirs(lists)
            open(os.path.join(lists, "x_Packages"), "w").close()
            with mock.patch.object(proc, "capture", capture):
                img = images.resolve(arch.ARM64, "debian-6.12", "t", cache)
            self.assertEqual(os.path.join(dest, "boot", "vmlinuz-6.12"),
                             img.file)
            self.assertEqual(["apt-cache", "-o", "APT::Architecture=arm64"],
                             calls[0][:3])
            self.assertEqual(["depends", "linux-image-6.12-arm64"],
                             calls[0][-2:])
            # Offline: the newest one fetched before, with a warning.
            with mock.patch.object(proc, "capture",
                                   side_effect=proc.Failed(["x"], 3)):
                rc, _, err = quiet(images.resolve, arch.ARM64, "debian-6.12",
                                   "t", cache)
            self.assertEqual(img, rc)
            self.assertIn("using " + pkg + " fetched before", err)
            with mock.patch.object(proc, "capture", return_value=""), \
                    self.assertRaises(cli.Failure) as e:
                images.resolve(arch.ARM64, "debian-6.1", "t", cache)
            self.assertEqual(3, e.exception.status)


def write_getppid(json_dir: str, boot: str, median: float) -> None:
    """An exact boot's syscall_overhead.json: getppid alone."""
    doc = {"schema": "kbench-results/1", "test": "syscall_overhead",
           "boot_id": boot, "kernel": {"release": "6.12"},
           "machine": {"arch": "x86_64", "clock_mode": "icount",
                       "icount_shift": 0},
           "rows": [{"name": "getppid", "status": "ok", "unit": "us",
                     "median": median, "n": 9}]}
    with open(os.path.join(json_dir, "syscall_overhead.json"), "w") as f:
        json.dump(doc, f)


class FakeGuest:
    """vm.Guest without a guest: each boot writes what `plan` says."""

    def __init__(self, plan: List[Any], boots: List[Any]):
        self.plan = plan
        self.boots = boots

    def boot(self, json_dir: str, console: str,
             sink: Optional[guest.Sink]) -> int:
        status, ktap = self.plan.pop(0)
        self.boots.append((json_dir, console))
        with open(console, "w") as f:
            f.write("console\n")
        present(sink).write(ktap)
        if status == 0:
            with open(os.path.join(json_dir, "syscall_overhead.json"),
                      "w") as f:
                json.dump({"test": "syscall_overhead", "rows": []}, f)
        return int(status)

    def __exit__(self, *exc: object) -> None:
        pass


class AB(unittest.TestCase):
    def test_rotation(self) -> None:
        self.assertEqual([(1, 0), (1, 1), (2, 1), (2, 0)],
                         ab.rotation(2, 2))
        self.assertEqual([1, 2, 3, 2, 3, 1, 3, 1, 2],
                         [i + 1 for _, i in ab.rotation(3, 3)])

    def test_labels_and_sides(self) -> None:
        sides = [ab.Side(n, i) for n, i in zip(ab.side_names(3),
                                               ["/a/6.1", "/b/6.12", "x"])]
        self.assertEqual("6.1,6.12,x", ab.labels(sides))
        self.assertEqual(["base", "candidate", "candidate2"],
                         [s.name for s in sides])
        sides[2] = ab.Side("candidate2", "/c/6.1")
        self.assertEqual("base,candidate,candidate2", ab.labels(sides))

    def test_options(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            o = ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                          "-t", "syscall_overhead", "--accel", "tcg"], "t")
        self.assertEqual((6, ["syscall_overhead"]), (o.repeat, o.tests))
        self.assertEqual(["-t", "syscall_overhead", "--accel", "tcg"],
                         o.vm_args)
        self.assertIn("t: design: 6 boots per side", err.getvalue())
        o = ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                      "--icount"], "t")
        self.assertEqual((1, ["--icount", "--repeat", "2"]),
                         (o.repeat, o.vm_args))
        o = ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.1",
                      "--icount", "-r", "3"], "t")
        self.assertEqual(3, o.repeat)
        for argv, want in ((["--vs-kernel", "b"], "needs --kernel BASE"),
                           (["-k", "a", "--vs-kernel="], "needs an image"),
                           (["-k", "a", "--vs-kernel", "b", "--vs-prefix",
                             "env"], "do not combine"),
                           (["-k", "a", "--vs-kernel", "b", "--icount", "-r",
                             "0"], "invalid --repeat"),
                           (["-k", "debian-6.1", "--vs-kernel", "debian-6.1",
                             "--icount", "--cpus", "x"], "invalid --cpus"),
                           (["-k", "debian-6.1", "--vs-kernel",
                             "/nonexistent", "--icount"], "no kernel image")):
            with self.assertRaisesRegex(cli.Error, want):
                ab.parse(argv, "t")
        # Bad VM options are said before the design's boots are worked out.
        with contextlib.redirect_stderr(io.StringIO()) as err, \
                self.assertRaisesRegex(cli.Error, "invalid --memory"):
            ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                      "-t", "syscall_overhead", "-m", "lots"], "t")
        self.assertEqual("", err.getvalue())

    def test_more_options(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            o = ab.parse(["--kernel=debian-6.1", "--vs-kernel=debian-6.12",
                          "--test=syscall_overhead", "--repeat=3",
                          "--fail-above", "5"], "t")
        self.assertEqual((3, "5", ["--test=syscall_overhead"]),
                         (o.repeat, o.fail_above, o.vm_args))
        self.assertIn("t: warning: --repeat 3 is below the design's 6",
                      err.getvalue())
        for argv, want in ((["--report", "r.html"], "needs --json DIR"),
                           (["--fail-above", "x"], "not a percentage"),
                           (["--repeat=x"], "invalid --repeat")):
            with self.assertRaisesRegex(cli.Error, want):
                ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                          "-t", "syscall_overhead", *argv], "t")

    def test_a_kernel_that_cannot_be_made_ready(self) -> None:
        """A setup failure (exit 3) of one side fails each of its boots
        once said, without trying it again."""
        tap = b"TAP version 13\n1..1\nok 1 x\n"
        boots: List[Any] = []
        with tempfile.TemporaryDirectory() as work:
            o = ab.Options("a", ["b"], 2, ["syscall_overhead"], "", "", "",
                           False, [])
            run = ab.AB(o, "run_all.sh", work)
            run.guests = {"base": cast(vm.Guest, FakeGuest([(0, tap), (0, tap)],
                                                        boots))}
            tries = []

            def prepare(self: Any) -> None:
                tries.append(self.kernel)
                raise cli.Failure("cannot download b", 3)
            with mock.patch.object(vm.Guest, "prepare", prepare):
                rc, out, err = quiet(run.run)
        self.assertEqual(1, rc)
        self.assertEqual(["b"], tries)
        self.assertEqual(1, err.count("vm_run.sh: cannot download b"))
        self.assertIn("not ok 2 kbench: candidate b (boot 1 of 2) # exit=3",
                      out)
        self.assertIn("not ok 3 kbench: candidate b (boot 2 of 2) # exit=3",
                      out)

    def test_a_boot_that_died_early_is_tried_once_more(self) -> None:
        tap = b"TAP version 13\n1..1\nok 1 x\n"
        plans = {"base": [(125, b""), (0, tap), (0, tap)],
                 "candidate": [(124, b""), (125, b""), (125, b""),
                               (125, b"")]}
        boots: List[Any] = []
        with tempfile.TemporaryDirectory() as work:
            o = ab.Options("a", ["b"], 2, ["syscall_overhead"],
                           os.path.join(work, "results"), "", "", True, [])
            run = ab.AB(o, "t", work)
            run.guests = {n: cast(vm.Guest, FakeGuest(p, boots))
                          for n, p in plans.items()}
            # A calibration of the base's kernel is cached: it boots as
            # often as the candidate.
            with mock.patch.object(kbcompare, "comparison") as compare, \
                    mock.patch.object(ab, "calibration_key"), \
                    mock.patch.object(calibration, "cached", return_value=
                                      calibration.Calibration({}, 3)):
                rc, out, err = quiet(run.run)
            kept = sorted(os.listdir(os.path.join(work, "results", "base")))
            merged = os.path.isfile(os.path.join(
                work, "results", "base", "syscall_overhead.json"))
        self.assertEqual(1, rc)
        # Round 2 starts with the candidate (ABBA), whose kernel stays
        # dead: no results, nothing compared.
        assert_in_order(
            self, out, "# base boot 1 ended before the tests started (exit "
            "125): trying once more\n    TAP version 13\n",
            "\nok 1 kbench: base a (boot 1 of 2)\n",
            "# candidate boot 1 ended before the tests started (exit 124): "
            "trying once more",
            "\nnot ok 2 kbench: candidate b (boot 1 of 2) # exit=125\n",
            "\nnot ok 3 kbench: candidate b (boot 2 of 2)",
            "\nok 4 kbench: base a (boot 2 of 2)\n",
            "# Totals: pass:2 fail:2")
        self.assertIn("no boot of the candidate kernel left results", err)
        compare.assert_not_called()
        self.assertEqual(["console-1-failed.log", "console-1.log",
                          "console-2.log", "syscall_overhead.json"], kept)
        self.assertTrue(merged)


    def test_exact_mode_calibrates_the_base_from_its_own_boots(self) -> None:
        """No calibration of the base's kernel cached: it boots
        calibration.BOOTS times, the A/A of those boots is stored under
        its key and written beside the sides, and the comparison takes
        it; the next A/B of that kernel finds it and boots the base
        once."""
        tap = b"TAP version 13\n1..1\nok 1 x\n"

        def figures(boot: str) -> Callable[[str], None]:
            def write(json_dir: str) -> None:
                write_getppid(json_dir, boot, 0.329)
            return write

        class Figures(FakeGuest):
            def boot(self, json_dir: str, console: str,
                     sink: Optional[guest.Sink]) -> int:
                rc = super().boot(json_dir, console, sink)
                figures(console)(json_dir)
                return rc

        key = calibration.Key("sha", "QEMU 7.2", "x86_64", 1, "shift=0", "")
        for base_boots, want in ((calibration.BOOTS, "no calibration of its "
                                  "kernel cached: it boots 3 times"),
                                 (1, "cached")):
            with tempfile.TemporaryDirectory() as work, \
                    mock.patch.dict(os.environ, {"KBENCH_CACHE": work}):
                results_dir = os.path.join(work, "results")
                o = ab.Options("a", ["b"], 1, ["syscall_overhead"],
                               results_dir, "", "", True, [])
                if base_boots == 1:
                    calibration.store(key, calibration.Calibration(
                        {"syscall_overhead:getppid": exact.Known(
                            "exact", 0.0, 0.0, 329.0, 3)}, 3, "6.12"))
                run = ab.AB(o, "t", work)
                boots: List[Any] = []
                run.guests = {n: cast(vm.Guest, Figures([(0, tap)] * 3,
                                                        boots))
                              for n in ("base", "candidate")}
                with mock.patch.object(ab, "calibration_key",
                                       return_value=key), \
                        mock.patch.object(kbcompare, "comparison",
                                          return_value=kbcompare.Comparison(
                                              "", [], [])) as cmp:
                    rc, out, err = quiet(run.run)
                self.assertEqual(0, rc, out + err)
                self.assertIn(want, out)
                self.assertEqual(base_boots + 1, len(boots))
                last = base_boots + 1 if base_boots > 1 else 1
                self.assertIn(f"ok {last} kbench: base a (boot "
                              f"{base_boots} of {base_boots})", out)
                path = os.path.join(results_dir, "calibration.json")
                self.assertEqual(path, cmp.call_args[0][0].calibration)
                taken = calibration.load(path)
                self.assertEqual(3, taken.boots)
                stored = calibration.cached(key)
                self.assertIsNotNone(stored)


class Where(unittest.TestCase):
    """--where: in exact mode only, and after the comparison the rows
    that moved (exact or near, a verdict) profiled by kbench where
    (mocked here), their functions below the table and in where.json."""

    def test_options(self) -> None:
        o = ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                      "--icount", "--where", "-t", "syscall_overhead"], "t")
        self.assertTrue(o.where)
        self.assertNotIn("--where", o.vm_args)
        self.assertFalse(ab.parse(["-k", "debian-6.1", "--vs-kernel",
                                   "debian-6.12", "--icount"], "t").where)
        self.assertIsNone(o.where_with)
        for how in ("plugin", "ftrace"):
            o = ab.parse(["-k", "debian-6.1", "--vs-kernel", "debian-6.12",
                          "--icount", "--where", f"--where-with={how}"], "t")
            self.assertEqual(how, o.where_with)
            self.assertNotIn(f"--where-with={how}", o.vm_args)
        for argv, want in ((["-t", "syscall_overhead"], "needs --icount"),
                           (["--icount", "--where-with", "perf"],
                            "--where-with takes plugin or ftrace, not "
                            "'perf'"),
                           (["--icount", "--where-with"],
                            "needs plugin or ftrace"),
                           (["--icount", "-t", "pmqtest"],
                            "add -t syscall_overhead"),
                           (["--icount", "--arch", "arm64"],
                            "x86_64 kernels only")):
            with self.subTest(argv=argv), \
                    contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaisesRegex(cli.Error, want):
                ab.parse(["-k", "debian-6.12", "--vs-kernel", "debian-6.12",
                          "--where", *argv], "t")

    def test_one_guest_refuses_it_before_booting(self) -> None:
        for argv in (["--where"], ["--where-with", "ftrace"],
                     ["--where-with=plugin"]):
            with self.subTest(argv=argv), \
                    self.assertRaisesRegex(cli.Error,
                                           "--where needs --vs-kernel"):
                vm.parse(["--kernel", "debian-6.12", "--icount", *argv],
                         "t")

    def test_without_where(self) -> None:
        with contextlib.redirect_stderr(io.StringIO()), \
                self.assertRaisesRegex(cli.Error,
                                       "--where-with needs --where"):
            ab.parse(["-k", "debian-6.12", "--vs-kernel", "debian-6.12",
                      "--icount", "--where-with", "ftrace"], "t")

    def test_moved_rows(self) -> None:
        def entry(name: str, verdict: kbcompare.Verdict, cls: str,
                  test: str = "syscall_overhead") -> kbcompare.Entry:
            return kbcompare.Entry(candidate="c", test=test, name=name,
                                   verdict=verdict, row_class=cls,
                                   clock=results.ClockMode.ICOUNT)
        V = kbcompare.Verdict
        entries = [entry("getppid", V.SLOWER, "exact"),
                   entry("msgget_ctl", V.FASTER, "near"),
                   entry("getsid", V.SAME, "exact"),
                   entry("shmat_ctl", V.SLOWER, "noisy"),
                   entry("fork", V.SLOWER, "near"),
                   entry("getpid", V.SLOWER, "exact", "pmqtest")]
        entries.append(entry("fork@1.70MB", V.FASTER, "near", "proc_create"))
        # fork too (the plugin counts its children), and proc_create's
        # cells (marked), but not for ftrace; proc_create only in the
        # A/B's exact guest (where's own boot runs syscall_overhead).
        so = "syscall_overhead:"
        self.assertEqual({"c": [so + "getppid", so + "msgget_ctl",
                                so + "fork", "proc_create:fork@1.70MB"]},
                         ab.moved_rows(entries))
        rows = ab.moved_rows(entries)["c"]
        self.assertEqual(([("c", "/k", rows[:2])], rows[2:]),
                         where.countable([("c", "/k", rows)], where.FTRACE))
        self.assertEqual(([("c", "/k", rows[:3])], rows[3:]),
                         where.countable([("c", "/k", rows)], where.PLUGIN))
        self.assertEqual(([("c", "/k", rows)], []),
                         where.countable([("c", "/k", rows)], where.PLUGIN,
                                         exact_guest=True))
        self.assertEqual("not profiled: proc_create:fork@1.70MB (only the "
                         "A/B's exact guest runs their programs)",
                         where.not_counted(where.PLUGIN, rows[3:], False))
        self.assertIn("pid filter", where.not_counted(where.FTRACE, rows[2:],
                                                      False))

    def run_ab(self, cand_median: float,
               how: Optional[where.Mechanism] = None, in_ab_guest: bool = False
               ) -> Tuple[int, str, Any, str]:
        tap = b"TAP version 13\n1..1\nok 1 x\n"

        class Figures(FakeGuest):
            def boot(self, json_dir: str, console: str,
                     sink: Optional[guest.Sink]) -> int:
                rc = super().boot(json_dir, console, sink)
                write_getppid(json_dir, json_dir, cand_median
                              if "candidate" in json_dir else 0.329)
                return rc

        diff = {"row": "syscall_overhead:getppid", "base": "a", "cand": "b",
                "row_delta": 1.0, "sum": 1.0, "check": "sum +1.000 = the "
                "row's delta +1.000 instructions per operation",
                "functions": [{"name": "__do_sys_getppid", "base": 2858.0,
                               "cand": 2859.0, "delta": 1.0,
                               "calls_base": 1.0, "calls_cand": 1.0}],
                "unchanged": ["x64_sys_call"], "atypical": {},
                "candidate": "b"}
        key = calibration.Key("sha", "QEMU 7.2", "x86_64", 1, "shift=0", "")
        with tempfile.TemporaryDirectory() as work, \
                mock.patch.dict(os.environ, {"KBENCH_CACHE": work}):
            calibration.store(key, calibration.Calibration(
                {"syscall_overhead:getppid": exact.Known(
                    "exact", 0.0, 0.0, 329.0, 3)}, 3, "6.12"))
            results_dir = os.path.join(work, "results")
            o = ab.Options("a", ["b"], 1, ["syscall_overhead"], results_dir,
                           "", "", True, [], where=True,
                           where_with=how.method if how else None)
            run = ab.AB(o, "t", work)
            run.guests = {n: cast(vm.Guest, Figures([(0, tap)], []))
                          for n in ("base", "candidate")}
            if how is not None and how.method == where.PLUGIN:
                diff = dict(diff, method=where.PLUGIN)
            with mock.patch.object(ab, "calibration_key", return_value=key), \
                    mock.patch.object(where, "mechanism", return_value=how or
                                      where.Mechanism(where.FTRACE, None,
                                                      "no plugin")) as asked, \
                    mock.patch.object(ab.AB, "exact_guest",
                                      return_value=in_ab_guest), \
                    mock.patch.object(ab.AB, "where_exact",
                                      return_value=[diff]) as in_guest, \
                    mock.patch.object(where, "against_base",
                                      return_value=[diff]) as vng_boots:
                rc, out, err = quiet(run.run)
            profiled = in_guest if in_ab_guest else vng_boots
            (vng_boots if in_ab_guest else in_guest).assert_not_called()
            if profiled.called:
                asked.assert_called_once_with("t", o.where_with)
            path = os.path.join(results_dir, "where.json")
            kept = ""
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    kept = f.read()
        return rc, out + err, profiled, kept

    def test_a_moved_row_is_profiled_and_shown(self) -> None:
        rc, out, profiled, kept = self.run_ab(0.330)
        self.assertEqual(0, rc, out)
        self.assertEqual("a", profiled.call_args[0][1])
        self.assertEqual([("b", "b", ["getppid"])],
                         profiled.call_args[0][2])
        assert_in_order(self, out, "# where: profiling 1 moved row "
                        "(b: syscall_overhead:getppid)",
                        "# where the instructions went (1 moved row",
                        "# b:", "#   __do_sys_getppid     2858.000     "
                        "2859.000     +1.000  1",
                        "# Totals: pass:2")
        self.assertEqual("b", json.loads(kept)["rows"][0]["candidate"])
        self.assertAlmostEqual(1.0, json.loads(kept)["rows"][0][
            "compared_delta"])
        self.assertIn("#   the comparison's own delta: +1.000, the where "
                      "boot's too", out)
        self.assertIsNone(profiled.call_args[0][5])
        assert_in_order(self, out, "# where: counted by ftrace's "
                        "function_graph tracer (no plugin)",
                        "kbench where, one more boot a kernel: ftrace's "
                        "function_graph under -icount")

    def test_the_plugin_counts_when_it_can(self) -> None:
        """--where-with plugin, or the default when the plugin can be
        built: its object handed to where, the section says so."""
        how = where.Mechanism(where.PLUGIN, "/p.so", "asked for")
        rc, out, profiled, kept = self.run_ab(0.330, how)
        self.assertEqual(0, rc, out)
        self.assertEqual("/p.so", profiled.call_args[0][5])
        assert_in_order(self, out, "# where: counted by kbench's QEMU "
                        "plugin (asked for)", "kbench where, one more boot "
                        "a kernel: kbench's QEMU plugin under -icount")
        self.assertNotIn("ftrace", out[out.index("# where: counted"):])

    def test_the_plugin_boots_the_ab_s_own_guest(self) -> None:
        """The plugin in the A/B's exact guest: the moved rows (TEST:ROW)
        and the plugin's object to where_exact."""
        how = where.Mechanism(where.PLUGIN, "/p.so", "asked for")
        rc, out, profiled, kept = self.run_ab(0.330, how, in_ab_guest=True)
        self.assertEqual(0, rc, out)
        self.assertEqual(([("b", "b", ["syscall_overhead:getppid"])],
                          "/p.so"), profiled.call_args[0])
        assert_in_order(self, out, "# where: counted by kbench's QEMU "
                        "plugin", "# where: each kernel boots the A/B's own "
                        "exact guest once more, with the plugin",
                        "#   __do_sys_getppid")

    def test_a_where_boot_is_one_more_of_the_ab_s_guest(self) -> None:
        """where_boot: the side's guest booted once more with the plugin
        in QEMU's options (summing by the symbols an earlier boot copied
        out), the plugin gone after it; symbols that moved fail."""
        syms = "ffffffff81001000 T x64_sys_call\n"
        seen: List[Optional[str]] = []

        class Plugged(FakeGuest):
            backend: Any

            def boot(self, json_dir: str, console: str,
                     sink: Optional[guest.Sink]) -> int:
                seen.append(self.backend.machine.plugin)
                with open(os.path.join(json_dir, "kallsyms"), "w") as f:
                    f.write(syms)
                with open(os.path.join(json_dir, "syscall_overhead.json"),
                          "w") as f:
                    json.dump({"test": "syscall_overhead", "params": {
                        "warmup": 0, "iterations": 1}, "rows": [
                        {"name": "getppid", "median": 0.33, "mean": 0.33,
                         "extra": {"batch": 1000}}]}, f)
                out = (self.backend.machine.plugin or "").split(",")[1]
                with open(out.partition("=")[2], "w") as f:
                    f.write("window 0\nx64_sys_call 330000\nend 0 330000\n")
                return 0

        with tempfile.TemporaryDirectory() as work:
            o = ab.Options("a", ["b"], 1, ["syscall_overhead"],
                           os.path.join(work, "r"), "", "", True, [],
                           where=True)
            run = ab.AB(o, "t", work)
            g = Plugged([], [])
            g.backend = mock.Mock(machine=mock.Mock(plugin=None),
                                  programs=["syscall_overhead:"
                                            "syscall_overhead"])
            run.guests = {"base": cast(vm.Guest, g)}
            earlier = os.path.join(work, "json", "base", "1")
            os.makedirs(earlier)
            for name, text in (("kallsyms", syms), ("x.json", "{}")):
                with open(os.path.join(earlier, name), "w") as f:
                    f.write(text)
            [prof] = run.where_boot(run.sides[0], "/p.so",
                                    ["syscall_overhead:getppid"])
            self.assertEqual({"x64_sys_call": 330.0},
                             {k: f.self_insn
                              for k, f in prof.functions.items()})
            self.assertEqual(f"/p.so,out={work}/r/where/base/windows.txt,"
                             f"syms={earlier}/kallsyms", seen[0])
            self.assertIsNone(g.backend.machine.plugin)
            syms = "ffffffff81001010 T x64_sys_call\n"
            with self.assertRaisesRegex(cli.Failure, "symbols moved"):
                run.where_boot(run.sides[0], "/p.so",
                               ["syscall_overhead:getppid"])

    def test_nothing_moved_boots_nothing_more(self) -> None:
        rc, out, profiled, kept = self.run_ab(0.329)
        self.assertEqual(0, rc, out)
        profiled.assert_not_called()
        self.assertIn("# where: no exact or near row of syscall_overhead "
                      "moved", out)
        self.assertNotIn("where the instructions went", out)
        self.assertEqual("", kept)


class FrontDoor(unittest.TestCase):
    def test_run_hands_over_by_option(self) -> None:
        with mock.patch.object(ab, "main", return_value=7) as a, \
                mock.patch.object(vm, "main", return_value=8) as v, \
                mock.patch.object(runner, "main", return_value=9) as here:
            self.assertEqual(7, run.main(["--kernel=a", "--vs-kernel", "b"]))
            self.assertEqual(8, run.main(["-t", "x", "--kernel", "k",
                                          "--icount"], "run_all.sh"))
            self.assertEqual(9, run.main(["-t", "x", "--icount"]))
        a.assert_called_once_with(["--kernel=a", "--vs-kernel", "b"],
                                  "kbench run")
        v.assert_called_once_with(["-t", "x", "--kernel", "k", "--icount"],
                                  "vm_run.sh")
        # --icount without --kernel: the host's runner's usage error.
        here.assert_called_once_with(["-t", "x", "--icount"], "kbench run")

    def test_run_all_hands_over_on_the_same_options(self) -> None:
        with open(os.path.join(TOP, "run_all.sh")) as f:
            text = f.read()
        self.assertEqual(("--kernel",), run.GUEST_OPTIONS)
        self.assertIn("\t--kernel | --vs-kernel)\n", text)


class CiVm(unittest.TestCase):
    def test_guest_json_marked_missing_and_unmarked(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            for name, doc in (("a", {"machine": {"guest": "tcg"}}),
                              ("b", {"machine": {"guest": None}}),
                              ("c", [1])):
                with open(os.path.join(tmp, f"{name}.json"), "w") as f:
                    json.dump(doc, f)
            with open(os.path.join(tmp, "d.json"), "w") as f:
                f.write("{broken")
            self.assertIsNone(ci_vm.json_problem(os.path.join(tmp, "a.json")))
            for name in "bcde":
                self.assertIsNotNone(ci_vm.json_problem(
                    os.path.join(tmp, f"{name}.json")), name)

    def test_programs_that_ran(self) -> None:
        self.assertEqual(["p1"], ci_vm.ran(
            "ok 1 selftests: kbench/a: p1\n"
            "ok 2 selftests: kbench/a: p2 # SKIP no\n"
            "not ok 3 selftests: kbench/b: p3\n"))

    def test_one_kernel_checked(self) -> None:
        def run_guest(opts: vm.Options, prog: str,
                      sink: guest.Sink) -> vm.GuestRun:
            self.assertEqual("vm_run.sh", prog)
            self.assertEqual("debian-6.1", opts.kernel)
            json_dir = opts.run.json_dir
            with open(os.path.join(json_dir, "p1.json"), "w") as f:
                json.dump({"machine": {"guest": "tcg"}}, f)
            sink.write(b"TAP version 13\n1..1\n"
                       b"ok 1 selftests: kbench/a: p1\n")
            return vm.GuestRun(0, (20.06, 9.0))
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(vm, "run_guest", run_guest):
            (line, ok), out, _ = quiet(ci_vm.run_kernel, "debian-6.1",
                                       os.path.join(d, "k"))
            with open(os.path.join(d, "k", "ktap")) as f:
                self.assertIn("ok 1 selftests: kbench/a: p1\n", f.read())
        self.assertTrue(ok, line)
        self.assertIn("ok 1 selftests: kbench/a: p1\n", out)
        self.assertRegex(line, r"^debian-6.1 +PASS +[0-9]+ s  boot 20.1 s, "
                         r"run 9.0 s$")

        def fails(opts: vm.Options, prog: str,
                  sink: guest.Sink) -> vm.GuestRun:
            raise guest.Ended("debian-6.1 panicked at boot", 125)
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(vm, "run_guest", fails):
            (line, ok), out, err = quiet(ci_vm.run_kernel, "debian-6.1",
                                         os.path.join(d, "k"))
        self.assertFalse(ok)
        self.assertIn("vm_run.sh: debian-6.1 panicked at boot", err)
        self.assertIn("ci-vm: debian-6.1: vm_run.sh exit status 125", out)

    def test_bad_usage(self) -> None:
        rc, _, err = quiet(ci_vm.main, ["--bogus"], "ci_vm.sh")
        self.assertEqual(2, rc)
        self.assertIn("unknown option '--bogus'", err)


if __name__ == "__main__":
    unittest.main()
