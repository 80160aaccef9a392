# SPDX-License-Identifier: GPL-2.0
"""kbtools.policy: the one home of how a run is run. A guest's plan
(runner.guest_plan, run by scripts/guest/run_plan.sh) multiplies the
programs' timeouts (policy.settings_timeout) by the factor the guest's
environment (policy.guest_env) gives it, not by a constant of its own; an architecture's backends are its data
(arch.Arch.backend, exact_backend), and exact mode's QEMU arguments and
kernel switches reach both backends' command lines."""

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools import arch, cli, debian, guest, images, lava_job  # noqa: E402
from kbtools import paths, policy, proc, runner, vm  # noqa: E402
from test_design import collection_tests  # noqa: E402
from support import present  # noqa: E402


class Timeouts(unittest.TestCase):
    def test_the_settings_timeouts(self) -> None:
        dirs = [os.path.join(TOP, t) for t in collection_tests()]
        self.assertTrue(dirs)
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("none", None), ("late", "x=1\ntimeout=9\n"),
                               ("twice", "timeout=3\ntimeout=70\n"),
                               ("junk", "timeout=abc\n")):
                os.makedirs(os.path.join(d, name))
                if text is not None:
                    with open(os.path.join(d, name, "settings"), "w") as f:
                        f.write(text)
                dirs.append(os.path.join(d, name))
            got = {t: policy.settings_timeout(t) for t in dirs}
        self.assertTrue(all(t > 0 for t in got.values()))
        self.assertEqual([45, 9, 70, 45], [got[t] for t in dirs[-4:]])

    def fake_collection(self, d: str) -> str:
        """A collection of one program (faketest:prog, timeout=7) with
        the real scripts/guest/run_plan.sh and run_all.sh, and a timeout(1) on PATH
        that records its arguments and says the program timed out."""
        top = os.path.join(d, "top")
        os.makedirs(os.path.join(top, "scripts", "guest"))
        os.makedirs(os.path.join(top, "faketest"))
        shutil.copy(os.path.join(TOP, "scripts", "guest", "run_plan.sh"),
                    os.path.join(top, "scripts", "guest"))
        # Its usage text, which the options' parser reads.
        shutil.copy(os.path.join(TOP, "run_all.sh"), top)
        with open(os.path.join(top, "faketest", "settings"), "w") as f:
            f.write("timeout=7\n")
        os.makedirs(os.path.join(d, "bin"))
        fake = os.path.join(d, "bin", "timeout")
        with open(fake, "w") as f:
            f.write(f'#!/bin/sh\necho "$*" >>{d}/timeout-args\nexit 124\n')
        os.chmod(fake, 0o755)
        return top

    def guest_run(self, env: Dict[str, str], *args: str) -> List[str]:
        """The "# TIMEOUT" lines and timeout(1)'s first arguments of the
        plan that a guest with env runs (runner.guest_plan, run by
        scripts/guest/run_plan.sh)."""
        with tempfile.TemporaryDirectory() as d:
            top = self.fake_collection(d)
            with unittest.mock.patch.object(paths, "TOP", top):
                text = runner.guest_plan(list(args), env, ["faketest:prog"],
                                         "", "t")
            plan_file = os.path.join(d, "plan")
            with open(plan_file, "w") as f:
                f.write(text)
            p = subprocess.run(
                [os.path.join(top, "scripts", "guest", "run_plan.sh"), top,
                 plan_file], env=dict(os.environ,
                                      PATH=f"{d}/bin:{os.environ['PATH']}"),
                capture_output=True, text=True, check=False)
            self.assertEqual(1, p.returncode, p.stderr)
            with open(os.path.join(d, "timeout-args")) as f:
                calls = [" ".join(line.split()[:2]) for line in f]
        return [line.split("# ")[-1] for line in p.stdout.splitlines()
                if "# TIMEOUT" in line] + calls

    def test_the_guest_takes_the_factor_from_its_environment(self) -> None:
        self.assertEqual(["TIMEOUT 7 seconds", "--kill-after=10 7"],
                         self.guest_run({}))
        ic = policy.icount()
        env = policy.guest_env("tcg", ic, {})
        self.assertEqual(str(ic.run_factor), env["KBENCH_TIMEOUT_FACTOR"])
        secs = 7 * ic.run_factor
        self.assertEqual([f"TIMEOUT {secs} seconds",
                          f"--kill-after=10 {secs}"],
                         self.guest_run({"KBENCH_TIMEOUT_FACTOR":
                                         env["KBENCH_TIMEOUT_FACTOR"]}))
        # --timeout says the seconds themselves.
        self.assertEqual(["TIMEOUT 5 seconds", "--kill-after=10 5"],
                         self.guest_run({"KBENCH_TIMEOUT_FACTOR": "3"},
                                        "-o", "5"))
        for bad in ("0", "x", "-2", "1.5"):
            with self.assertRaisesRegex(cli.Error,
                                        "KBENCH_TIMEOUT_FACTOR must be"):
                runner.guest_plan([], {"KBENCH_TIMEOUT_FACTOR": bad},
                                  ["faketest:prog"], "", "t")


class GuestEnv(unittest.TestCase):
    def test_what_the_guest_reads(self) -> None:
        environ = {"KSELFTEST_TASKSTATS_ARGS": "-N 5", "HOME": "/root",
                   "KSFT_MACHINE_SLOW": "no"}
        self.assertEqual({"KBENCH_GUEST": "kvm", "KSFT_MACHINE_SLOW": "no",
                          "KSELFTEST_TASKSTATS_ARGS": "-N 5"},
                         policy.guest_env("kvm", None, environ))
        env = policy.guest_env("tcg", policy.icount("shift=2"), {})
        self.assertEqual(("2", "4", "yes"),
                         (env["KBENCH_ICOUNT"], env["KBENCH_TIMEOUT_FACTOR"],
                          env["KSFT_MACHINE_SLOW"]))
        with self.assertRaisesRegex(ValueError, "no shift=N"):
            policy.icount("sleep=off")
        # What a run records of how its guest ran: the plain guest's
        # -icount, the deterministic one's switches too, in every JSON.
        plain = policy.icount("shift=2", steady=False)
        self.assertEqual({"icount_qemu": "shift=2", "icount_shift": "2"},
                         plain.settings())
        steady = policy.icount("shift=2", steady=True)
        self.assertEqual(
            "icount_qemu=shift=2; icount_shift=2; qemu_args=-rtc "
            "base=2026-01-01T00:00:00,clock=vm -seed 1; append=nokaslr "
            "norandmaps randomize_kstack_offset=off page_alloc.shuffle=0 "
            "slub_nomerge; root=initramfs; settle=1; dither=<1000; "
            "sched=fifo1+2other", steady.settings_text())
        env = policy.guest_env("tcg", steady, {})
        self.assertEqual((steady.settings_text(), "1", "1"),
                         (env["KBENCH_ICOUNT_SETTINGS"],
                          env["KBENCH_ICOUNT_SETTLE"],
                          env["KBENCH_ICOUNT_FIFO"]))
        # KBENCH_ICOUNT_FIFO=0: the process creations at the programs'
        # own policy, and the settings say so (both sides must match).
        with unittest.mock.patch.dict(os.environ, {"KBENCH_ICOUNT_FIFO": "0"}):
            other = policy.icount("shift=2", steady=True)
        self.assertNotIn("sched", other.settings())
        self.assertNotIn("KBENCH_ICOUNT_FIFO",
                         policy.guest_env("tcg", other, {}))
        self.assertEqual([True, True, True, False, False],
                         [policy.creation_row(k) for k in (
                             "syscall_overhead:fork", "syscall_overhead:clone",
                             "proc_create:vfork@1.70MB",
                             "syscall_overhead:getppid", "proc_createx:y")])
        with unittest.mock.patch.dict(os.environ, {"KBENCH_ICOUNT_FIFO": "yes"}), \
                self.assertRaisesRegex(ValueError, "KBENCH_ICOUNT_FIFO"):
            policy.icount("shift=2", steady=True)
        self.assertNotIn("KBENCH_ICOUNT_SETTLE",
                         policy.guest_env("tcg", plain, {}))
        self.assertTrue(policy.deterministic({}))
        self.assertFalse(policy.deterministic(
            {"KBENCH_ICOUNT_DETERMINISTIC": "0"}))
        with self.assertRaisesRegex(ValueError, "KBENCH_ICOUNT_DETERMINISTIC"):
            policy.deterministic({"KBENCH_ICOUNT_DETERMINISTIC": "yes"})


def machine(a: arch.Arch, icount: bool) -> vm.Machine:
    ic = dataclasses.replace(policy.icount(policy.ICOUNT_QEMU, steady=True),
                             qemu_args=("-rtc", "clock=vm"),
                             appends=("nokaslr",)) if icount else None
    return vm.Machine(a, "tcg", "1G", None, ic, ["x=1"])


class ArchIsData(unittest.TestCase):
    # x86_64 as an architecture booted by QEMU itself with a root
    # filesystem of Debian packages: nothing but data changes.
    X86_QEMU = dataclasses.replace(
        arch.X86_64, backend="qemu", exact_backend="qemu",
        rootfs="initramfs", rootfs_packages=arch.ROOTFS_PACKAGES,
        rootfs_needs=arch.rootfs_needs("usr/lib64/ld-linux-x86-64.so.2",
                                       "x86_64-linux-gnu"),
        init="scripts/guest/initramfs_init.sh")

    def test_the_backend_is_the_architectures(self) -> None:
        # x86_64's exact guest: QEMU itself with an initramfs root.
        self.assertEqual(["vng", "qemu", "qemu", "qemu"],
                         [vm.backend_of(machine(a, i))
                          for a in (arch.X86_64, arch.ARM64)
                          for i in (False, True)])
        # Its usual root (the deterministic guest off): virtme-ng.
        m = machine(arch.X86_64, True)
        m.icount = dataclasses.replace(present(m.icount), root="")
        self.assertEqual("vng", vm.backend_of(m))

    def qemu(self, a: arch.Arch, icount: bool) -> List[str]:
        o = vm.parse(["-k", "k"], "vm_run.sh")
        o.machine = machine(a, icount)
        b = vm.Qemu(o, "vm_run.sh", "/c")
        b.image = images.Image("/img/k", "/img/k", "k")
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(vm.Qemu, "overlay",
                                           return_value="/i.cpio"):
            boot = guest.Boot(d, None, "t")
            cmd, _ = b.command(boot, "")
            boot.close()
        return cmd

    def test_x86_64_through_qemu_itself(self) -> None:
        cmd = self.qemu(self.X86_QEMU, True)
        self.assertEqual(["qemu-system-x86_64", "-icount",
                          policy.ICOUNT_QEMU, "-rtc", "clock=vm", "-smp", "1",
                          "-m", "1G", "-nodefaults", "-display", "none",
                          "-no-reboot", "-serial", "stdio", "-kernel",
                          "/img/k", "-initrd", "/i.cpio", "-append",
                          "console=ttyS0 rdinit=/init panic=-1 quiet "
                          "nokaslr x=1"], cmd)
        self.assertNotIn("-icount", self.qemu(self.X86_QEMU, False))
        for word in ("arm", "aarch64", "AMA"):
            self.assertNotIn(word, " ".join(cmd))

    def test_a_native_build_and_its_host_packages(self) -> None:
        o = vm.parse(["-k", "k"], "vm_run.sh")
        o.machine = machine(self.X86_QEMU, False)
        b = vm.Qemu(o, "vm_run.sh", "/c")
        calls: List[List[str]] = []

        def make(cmd: List[str], log: str = "", **kw: object) -> int:
            calls.append(cmd)
            return 1
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(proc, "run", make), \
                unittest.mock.patch.object(debian, "cross_libs") as libs, \
                unittest.mock.patch("sys.stderr"):
            b.cache, b.ksrc = d, "/src/linux"
            with self.assertRaisesRegex(cli.Failure,
                                        "the x86_64 build failed"):
                b.build(d)
        libs.assert_not_called()
        self.assertFalse([a for a in calls[0] if a.startswith(("ARCH=",
                                                               "CROSS_"))])
        with unittest.mock.patch.object(shutil, "which",
                                        return_value=None), \
                self.assertRaisesRegex(cli.Failure,
                                       "apt-get install qemu-system-x86 "
                                       "cpio[)]"):
            b.check_host()
        b.machine = dataclasses.replace(o.machine, arch=dataclasses.replace(
            self.X86_QEMU, init=""))
        with unittest.mock.patch.object(shutil, "which",
                                        return_value="/bin/x"), \
                self.assertRaisesRegex(cli.Failure, "has no init"):
            b.check_host()

    def test_exact_modes_arguments_reach_vng_too(self) -> None:
        o = vm.parse(["-k", "k"], "vm_run.sh")
        o.machine = machine(arch.X86_64, True)
        b = vm.Vng(o, "vm_run.sh", "/c")
        b.image = images.Image("/img/k", "/img/k", "k")
        b.env = {}
        with tempfile.TemporaryDirectory() as d, \
                unittest.mock.patch.object(os.path, "isdir",
                                           return_value=False):
            boot = guest.Boot(d, None, "t")
            cmd, _ = b.command(boot, "")
            boot.close()
        at = cmd.index("--qemu-opts")
        self.assertEqual(f"-icount {policy.ICOUNT_QEMU} -rtc clock=vm",
                         cmd[at + 1])
        appends = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--append"]
        self.assertEqual(["nokaslr", "x=1"], appends[-2:])


class LavaJob(unittest.TestCase):
    """A LAVA job's exact mode is the policy's, its console the
    architecture's."""
    URLS = ["--kernel", "https://lab/vmlinuz", "--rootfs",
            "https://lab/rootfs.cpio.gz"]

    def test_exact_mode(self) -> None:
        ic = policy.icount(policy.ICOUNT_QEMU)
        args = lava_job.parse_args([*self.URLS, "--icount"])
        step = lava_job.run_command(args).split()
        self.assertEqual([f"KBENCH_ICOUNT={ic.shift}",
                          f"KBENCH_TIMEOUT_FACTOR={ic.run_factor}"],
                         step[:2])
        self.assertEqual(["--repeat", str(ic.repetitions)], step[-2:])
        self.assertEqual([f"-icount {ic.qemu_opts}", f"-smp {ic.cpus}"],
                         lava_job.job(args)["context"]["extra_options"])
        plain = lava_job.parse_args(self.URLS)
        self.assertNotIn("KBENCH", lava_job.run_command(plain))
        self.assertNotIn("extra_options", lava_job.job(plain)["context"])

    def test_the_console_is_the_architectures(self) -> None:
        def console(*argv: str) -> str:
            return lava_job.kernel_args(lava_job.parse_args(
                [*self.URLS, *argv])).split()[0]
        self.assertEqual(["console=ttyS0,115200", "console=ttyAMA0,115200",
                          "console=ttyAMA0,115200", "console=ttyS0,115200",
                          "console=ttyAMA0,115200", "console=ttyS0,115200",
                          "console=hvc0"],
                         [console(*a) for a in (
                             (), ("--arch", "arm64"), ("--arch", "aarch64"),
                             ("--arch", "i386"), ("--arch", "arm"),
                             ("--arch", "mips"),
                             ("--arch", "arm64", "--console", "hvc0"))])
        self.assertEqual(arch.ARM64.lava_console, console(
            "--arch", "arm64").split("=", 1)[1])
        self.assertEqual("qemu", lava_job.parse_args(
            [*self.URLS, "--arch", "arm64"]).device_type)


if __name__ == "__main__":
    unittest.main()
