# SPDX-License-Identifier: GPL-2.0
"""Boot a kernel and run the collection inside it with run_all.sh: the
guest's KTAP streams to stdout, JSON results land in the host's --json
directory, the exit status is the guest's. Two backends, each
architecture as data (kbtools.arch):

- vng (x86_64): virtme-ng/QEMU over the host's root filesystem, seen
  read-only over 9p; the guest runs scripts/guest/vm_guest.sh.
- qemu (arm64; any architecture with rootfs_packages and an init):
  QEMU with a cached root filesystem of the architecture's Debian
  packages as its initramfs, the collection built for it (cross-built
  unless native), the Arch's init as /init.

Which one: the Arch's backend, or its exact_backend under --icount.

    kbench vm --kernel IMAGE [OPTION]...     (scripts/vm_run.sh,
                                              run_all.sh --kernel)

One boot is kbtools.guest's; a Guest here is a kernel made ready (host
packages checked, image fetched, collection built) that kbtools.ab boots
again and again.
"""

import base64
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from kbtools import arch as arches
from kbtools import (cli, collection, debian, design, guest, images, ksrc,
                     options, paths, policy, proc, results, runner, vng)
from kbtools.arch import Arch
from kbtools.policy import Icount
from kbtools.output import msg

EXIT_USAGE, EXIT_SETUP = 2, 3
EXIT_TIMEOUT, EXIT_GUEST = guest.EXIT_TIMEOUT, guest.EXIT_GUEST
ACCELS = ("auto", "kvm", "tcg")
# Drivers for QEMU's emulated hardware that udev's coldplug would load
# from 9p, slowly under TCG, and the collection never uses.
UNUSED_MODULES = ("kvm,kvm_amd,kvm_intel,ahci,sr_mod,sg,iTCO_wdt,lpc_ich,"
                  "i2c_i801,pcspkr,powernow_k8,aesni_intel")
KVM_PROBE_S = 30

USAGE = """\
Usage: {prog} --kernel IMAGE [VM OPTION]... [RUN_ALL OPTION]...
Boot IMAGE and run the kbench collection inside it with run_all.sh. The
guest's KTAP goes to stdout as it runs; progress, the accelerator used
and a timing summary go to stderr.

x86_64 (the default): IMAGE under virtme-ng/QEMU, the host's root
filesystem mounted read-only over 9p. arm64 (--arch arm64): the
collection cross-built, IMAGE under qemu-system-aarch64 (TCG: -M virt
-cpu max) with a minimal Debian arm64 root filesystem as its initramfs,
built once into .cache/vm/ (no modules needed).

IMAGE is one of:
  debian-6.1, debian-6.12, debian-6.1-rt, debian-6.12-rt
                  Debian's current linux-image package of that series and
                  flavour for the guest's architecture (resolved with
                  apt-cache, fetched once with 'apt-get download',
                  unpacked into .cache/vm/kernels/; arm64: 6.1 and 6.12)
  linux-image-... an exact Debian package name, fetched the same way
  FILE            a boot image (x86: a bzImage/vmlinuz; its modules are
                  found in DIR/lib/modules/VERSION where DIR is the
                  image's directory or a parent (the layout of an
                  unpacked package, or of 'make modules_install
                  INSTALL_MOD_PATH=DIR'); no modules is fine when 9p and
                  virtio are built in. arm64: an Image (or Image.gz,
                  vmlinuz) with virtio, PL011 and initramfs built in)
  DIRECTORY       a kernel build tree (arch/x86/boot/bzImage, .config;
                  arm64: arch/arm64/boot/Image)

VM options:
  -k, --kernel IMAGE      the kernel to boot (required)
      --arch ARCH         x86_64 (default) or arm64
      --accel MODE        auto (default), kvm or tcg; auto uses KVM only
                          when a probe boot shows it can run a guest here
                          (the result is cached in .cache/vm/kvm-probe);
                          arm64 always runs under TCG
  -m, --memory SIZE       guest memory (default 2G)
      --cpus N            guest CPUs (default: as many as the host, arm64
                          2; 1 with --icount)
      --icount            exact mode: QEMU's instruction counter drives
                          the guest's clocks (-icount shift=0,sleep=off,
                          align=off; TCG only), so that a figure counts
                          the guest instructions it took (1 virtual ns
                          per instruction) whatever the host is doing;
                          every JSON file says so (machine.clock_mode)
      --append ARGS       extra kernel command line (repeatable)
      --boot-timeout SECS give up when the guest has not started the run
                          within SECS (default 300; 600 with --icount or
                          arm64)
      --vm-timeout SECS   give up when the run inside has not ended
                          within SECS after boot (default: the sum of the
                          programs' timeouts plus 120, arm64 3600; 0 = no
                          limit, the default with --full)
      --console FILE      keep the guest's kernel console log in FILE
  -h, --help              this help

Every other option is run_all.sh's, as on the host:
  -t NAME, --json DIR, --full, -o SECS, --nest STYLE, -l, ...
The collection is built and listed on the host first (the guest cannot
write to it), and the host writes the plan of the guest's run (which
program when, its title, timeout and command line), which the guest
runs with scripts/guest/run_plan.sh; --json DIR is created on the host
and shared with the guest read-write (arm64, --icount: copied back at
the end). The host works out --repeat's number (without one: the
design's), merges the repetitions into DIR as kbench run does, and
runs --vs-prefix's comparison and --report FILE: the guest runs no
python3.

Inside the guest: KBENCH_GUEST=tcg or kvm (recorded as machine.guest in
every JSON file: emulated figures are a functional check, not to be
compared with host figures) and KSFT_MACHINE_SLOW=yes (unless set to
something else here), so that the programs scale their work down, and
KSELFTEST_<PROG>_ARGS as set here (KSRC is the host's build's alone).

Host needs (Debian packages): qemu-system-x86, busybox-static, udev, kmod,
python3-venv (virtme-ng {vng} comes from PyPI into .cache/venv on first
use); arm64: qemu-system-arm, gcc-aarch64-linux-gnu, cpio. .cache/ is
the collection's (or $KBENCH_CACHE).

Exit status: the guest's run status (0 all passed, 1 something
failed); 2 bad usage or IMAGE is no kernel; 3 missing host package,
failed download or build; 124 the boot or the run timed out; 125 the
guest kernel did not boot, panicked or died during the run; 130
interrupted (the guest stopped).
"""


def runner_prog(prog: str) -> str:
    """The VM runner's name in its messages: vm_run.sh's under a wrapper
    script (run_all.sh --kernel, vm_ab.sh's boots, vm_arm64.sh), as when
    those started scripts/vm_run.sh; the front door's own otherwise."""
    return "vm_run.sh" if prog.endswith(".sh") else prog


# ---- options ----------------------------------------------------------------

@dataclass
class RunArgs:
    """run_all.sh's options for the guest, in their order (but --repeat,
    which the host resolves, and --report, which it writes), and what
    the host needs to know of them: it works out the design, merges the
    repetitions, compares the sides and writes the report, so that the
    guest needs no python3."""
    args: List[str] = field(default_factory=list)
    json_dir: str = ""
    program_timeout: Optional[int] = None
    full: bool = False
    repeat: Optional[str] = None   # --repeat: a number, "design" or None
    runs: int = 1          # how many times each program runs (resolved)
    vs_prefix: str = ""    # --vs-prefix's command
    tests: List[str] = field(default_factory=list)    # -t, split
    fail_above: str = ""
    report: str = ""
    # KSELFTEST_<PROG>_ARGS for the guest, beyond (over) this process's
    # environment's.
    program_args: Dict[str, str] = field(default_factory=dict)

    def guest_env(self, accel: str, icount: Optional[Icount]
                  ) -> Dict[str, str]:
        """The guest's environment (kbtools.policy)."""
        return policy.guest_env(accel, icount,
                                {**os.environ, **self.program_args})


@dataclass
class Machine:
    """What a guest runs on."""
    arch: Arch
    accel: str             # auto, kvm or tcg
    memory: str
    cpus: Optional[int]
    icount: Optional[Icount]
    appends: List[str] = field(default_factory=list)
    # The initramfs guest's (kbench run --where): QEMU's -plugin
    # argument of a boot (kbtools.where_plugin), and whether the guest
    # copies its kallsyms into the results after the run (whose figures
    # it does not touch), for such a boot's symbols.
    plugin: Optional[str] = None
    kallsyms: bool = False


@dataclass
class Options:
    kernel: str
    machine: Machine
    boot_timeout: int
    vm_timeout: Optional[int]  # None: from the programs' timeouts
    console: str
    run: RunArgs


# The options with a value (kbtools.options): the run's own and those of
# run_all.sh's that the host handles (VALUES), run_all.sh's that go to
# the guest as they came, in order (GUEST_VALUES).
VALUES = options.host_values()
GUEST_VALUES = options.guest_values()
REPEAT = options.find("--repeat").names


class Words:
    """A command line walked one option at a time: "--opt=value" and
    "--opt value" alike."""

    def __init__(self, argv: Sequence[str]):
        self.argv = list(argv)
        self.i = 0

    def next(self) -> Optional[Tuple[str, str, Optional[str]]]:
        """(the word, the option, its value after '=' or None)."""
        if self.i >= len(self.argv):
            return None
        word = self.argv[self.i]
        self.i += 1
        if word.startswith("--") and "=" in word:
            opt, value = word.split("=", 1)
            return word, opt, value
        return word, word, None

    def value(self, opt: str, inline: Optional[str], what: str) -> str:
        if inline is not None:
            return inline
        if self.i >= len(self.argv):
            raise cli.Error(f"option '{opt}' needs {what}")
        self.i += 1
        return self.argv[self.i - 1]

    def number(self) -> Optional[str]:
        """The next word when it is a number (an optional value)."""
        if self.i < len(self.argv) and \
                re.fullmatch(r"[0-9]+", self.argv[self.i]):
            self.i += 1
            return self.argv[self.i - 1]
        return None


def seconds(option: str, text: str) -> int:
    if not re.fullmatch(r"[0-9]+", text):
        raise cli.Error(f"invalid {option} '{text}': not a number of "
                        "seconds")
    return int(text)


def walk(argv: Sequence[str]) -> Tuple[Dict[str, List[str]], RunArgs, bool]:
    """The VM options' values (each a list, in order), run_all.sh's
    options, and whether -h was asked for."""
    values: Dict[str, List[str]] = {}
    run = RunArgs()
    want_help = False
    words = Words(argv)
    while (item := words.next()) is not None:
        word, opt, inline = item
        if opt in VALUES:
            o = VALUES[opt]
            values.setdefault(o.key, []).append(words.value(opt, inline,
                                                            o.needs))
        elif word == "--icount":
            values["icount"] = [word]
        elif opt in ("--where", "--where-with"):
            # An A/B's (kbtools.ab): said before a boot, not by the
            # guest's run_all.sh after it.
            raise cli.Error("--where needs --vs-kernel: it profiles the "
                            "rows an A/B of kernels moved")
        elif word in ("-h", "--help"):
            want_help = True
        elif opt in GUEST_VALUES:
            o = GUEST_VALUES[opt]
            value = words.value(opt, inline, o.needs)
            run.args += [word] if inline is not None else [opt, value]
            if o.key == "timeout":
                run.program_timeout = seconds("--timeout", value)
            elif o.key == "vs_prefix":
                run.vs_prefix = value
            elif o.key == "test":
                run.tests += [t for t in value.split(",") if t]
            elif o.key == "fail_above":
                run.fail_above = value
        elif opt in REPEAT:
            # Without a number: the design's (resolved on the host).
            n = inline if inline is not None else words.number()
            run.repeat = n if n is not None else "design"
        else:
            run.full = run.full or word == "--full"
            run.args.append(word)
    return values, run, want_help


def last(values: Dict[str, List[str]], key: str) -> Optional[str]:
    return values[key][-1] if key in values else None


def parse(argv: Sequence[str], prog: str) -> Options:
    """The options of one guest run; cli.Error on bad usage, SystemExit
    (0) after -h."""
    values, run, want_help = walk(argv)
    name = last(values, "arch") or "x86_64"
    guest_arch = arches.lookup(name)
    if guest_arch is None:
        known = " or ".join(a.name for a in arches.ARCHES)
        raise cli.Error(f"invalid --arch '{name}' (use {known})")
    if want_help:
        sys.stdout.write(USAGE.format(prog=prog, vng=vng.VERSION))
        raise SystemExit(0)
    kernel = last(values, "kernel")
    if not kernel:
        raise cli.Error("no kernel: give --kernel IMAGE (e.g. "
                        f"{guest_arch.series[0]})")
    accel = last(values, "accel") or os.environ.get("KBENCH_VM_ACCEL") \
        or "auto"
    if accel not in ACCELS:
        raise cli.Error(f"invalid --accel '{accel}' (use auto, kvm or tcg)")
    if not guest_arch.kvm and last(values, "accel") == "kvm":
        raise cli.Error(f"--accel kvm: the {guest_arch.name} guest always "
                        "runs under TCG")
    if not guest_arch.kvm:
        accel = "tcg"
    memory = last(values, "memory") or "2G"
    if not re.fullmatch(r"[0-9]+[KMGT]?", memory):
        raise cli.Error(f"invalid --memory '{memory}' (e.g. 2G, 1536M)")
    cpus_text = last(values, "cpus")
    if cpus_text is not None and not re.fullmatch(r"[1-9][0-9]*", cpus_text):
        raise cli.Error(f"invalid --cpus '{cpus_text}': not a positive "
                        "number")
    icount: Optional[Icount] = None
    if "icount" in values:
        if accel == "kvm":
            raise cli.Error("--icount needs TCG: it does not combine with "
                            "--accel kvm")
        try:
            icount = policy.icount()
        except ValueError as e:
            raise cli.Error(str(e)) from e
        accel = "tcg"
    cpus = int(cpus_text) if cpus_text else \
        icount.cpus if icount else guest_arch.cpus
    boot_text = last(values, "boot_timeout")
    boot_timeout = seconds("--boot-timeout", boot_text) if boot_text \
        is not None else icount.boot_timeout if icount \
        else guest_arch.boot_timeout
    if boot_timeout <= 0:
        raise cli.Error("--boot-timeout must be above 0")
    vm_text = last(values, "vm_timeout")
    vm_timeout = seconds("--vm-timeout", vm_text) if vm_text is not None \
        else guest_arch.vm_timeout
    if run.repeat not in (None, "design"):
        run.runs = runner.check_repeat(run.repeat or "")
    if run.fail_above:
        runner.check_fail_above(run.fail_above)
    json_dir = last(values, "json")
    if json_dir is not None:
        run.json_dir = runner.json_dir_of(json_dir)
    run.report = last(values, "report") or ""
    if run.report:
        runner.check_report(run.report, run.json_dir)
    machine = Machine(guest_arch, accel, memory, cpus, icount,
                      values.get("append", []))
    return Options(kernel, machine, boot_timeout, vm_timeout,
                   last(values, "console") or "", run)


# ---- what the guest runs ----------------------------------------------------

def default_vm_timeout(run: RunArgs, programs: Sequence[str],
                       icount: Optional[Icount], top: str = paths.TOP) -> int:
    """The run's own limit: every program's timeout, plus room for the
    boot's leftovers and run_all.sh itself (0: none)."""
    if (run.full and run.program_timeout is None) or \
            run.program_timeout == 0:
        return 0
    total = policy.RUN_SLACK_S + sum(
        run.program_timeout if run.program_timeout is not None
        else policy.settings_timeout(os.path.join(top, p.split(":", 1)[0]))
        for p in programs if p)
    if icount:
        total *= icount.run_factor
    return total * run.runs * (2 if run.vs_prefix else 1)


def guest_runs(run: RunArgs, icount: Optional[Icount], prog: str) -> int:
    """How many times the guest runs each program, resolved on the host
    as run_all.sh resolves it on a host: --repeat N; the design's
    (kbtools.design, said on stderr) for --repeat without N and for
    --vs-prefix without --repeat, or 2 per side in exact mode, where
    the exact rows need no design (each side shows its spread)."""
    given = None if run.repeat in (None, "design") else \
        runner.check_repeat(run.repeat or "")
    if not run.vs_prefix:
        if run.repeat != "design":
            return given or 1
    elif icount and given is None:
        msg(prog, f"exact mode (icount): {icount.repetitions} repetitions "
            "per side")
        return icount.repetitions
    elif icount:
        return given or 1
    n, lines = design.plan(run.tests, given)
    for line in lines:
        msg(prog, line)
    return given or n


def guest_args(run: RunArgs) -> List[str]:
    """run_all.sh's arguments in the guest: the repetitions resolved."""
    repeat = ["--repeat", str(run.runs)] if run.runs > 1 or run.vs_prefix \
        else []
    return run.args + repeat


# Where an initramfs guest writes the --json results that its init
# copies back to the host (scripts/guest/initramfs_init.sh).
GUEST_JSON = "/tmp/json"
# Where the vng guest of exact mode writes them, in its collection's
# copy in memory (scripts/guest/vm_guest.sh copies them back).
ICOUNT_JSON = "/tmp/kbench-icount/json"


def guest_plan(run: RunArgs, programs: Sequence[str],
               env: Dict[str, str], json_dir: str, prog: str) -> str:
    """The plan file of the guest's run (runner.guest_plan): run_all.sh's
    options, the repetitions resolved, the guest's environment and
    json_dir, the --json directory as the guest sees it ("" none)."""
    return runner.guest_plan(guest_args(run), env, programs, json_dir, prog)


def prefix_files(run: RunArgs) -> List[str]:
    """The host's files that --base-prefix and --vs-prefix name by
    absolute path (a wrapper such as tests/seccomp_wrap): a guest whose
    root is not the host's gets them at the same paths."""
    words: List[str] = []
    args = run.args
    for i, arg in enumerate(args):
        opt, eq, value = arg.partition("=")
        if opt not in ("--base-prefix", "--vs-prefix"):
            continue
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        try:
            words += shlex.split(value)
        except ValueError:
            continue
    return [w for w in words if os.path.isabs(w) and os.path.isfile(w)]


def guest_hidden(path: str) -> bool:
    """virtme-ng's guest init mounts an empty tmpfs over /var/tmp,
    /var/log and /run: a directory below them is not there in the guest
    unless handed over as a directory of its own."""
    return any((path + "/").startswith(d) for d in ("/var/tmp/",
                                                    "/var/log/", "/run/"))


def hidden_mounts(dirs: Sequence[str], json_dir: str) -> List[str]:
    """vng's options for the directories the guest needs that it would
    not see, outermost only. vng mounts every --rwdir, in order, before
    any --rodir, so one that holds the --json directory is handed over
    read-write (and before it), the others read-only."""
    need = [os.path.abspath(d) for d in dirs
            if d and os.path.isdir(d) and guest_hidden(os.path.abspath(d))]
    outer: List[str] = []
    for d in need:
        if any((d + "/").startswith(o + "/") and d != o for o in need):
            continue
        if d not in outer:
            outer.append(d)
    return [f"--rwdir={d}" if json_dir and (json_dir + "/").startswith(
        d + "/") else f"--rodir={d}" for d in outer]


# ---- the backends -----------------------------------------------------------

class Backend:
    """What differs between the ways a guest is started."""
    name = ""

    def __init__(self, opts: Options, prog: str, cache: str):
        self.opts = opts
        self.machine = opts.machine
        self.prog = prog
        self.cache = cache
        self.programs: List[str] = []

    def say(self, text: str) -> None:
        msg(self.prog, text)

    def check_host(self) -> None:
        raise NotImplementedError

    def prepare(self, image: images.Image, work: str) -> None:
        raise NotImplementedError

    def command(self, boot: guest.Boot, json_dir: str
                ) -> Tuple[List[str], Dict[str, str]]:
        raise NotImplementedError

    def handlers(self, boot: guest.Boot
                 ) -> Tuple[Callable[[bytes], None], Callable[[bytes], None]]:
        raise NotImplementedError

    def hints(self, console: str, rc: int) -> List[str]:
        return []

    def finish(self, boot: guest.Boot, json_dir: str) -> None:
        """After a run that ended: the results back on the host."""

    def extra_logs(self) -> Tuple[str, ...]:
        return ()

    def collection_top(self) -> str:
        """Where the programs the guest runs were built."""
        return paths.TOP

    def programs_sha(self) -> str:
        """The digest of the build of the programs the guest runs
        (collection.programs_sha), after prepare()."""
        return collection.programs_sha(self.collection_top(), self.programs)


def missing_packages(wanted: Sequence[Tuple[bool, str]]) -> None:
    """Every missing Debian package at once, so one apt-get fixes them
    all: cli.Failure (3)."""
    missing = [pkg for there, pkg in wanted if not there]
    if missing:
        raise cli.Failure(f"missing host packages: {' '.join(missing)} "
                          f"(install them: apt-get install "
                          f"{' '.join(missing)})", EXIT_SETUP)


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


# What a copy of the clone for a guest leaves out: the clone's history,
# caches and build directories (at its top), and build products
# anywhere (the guest's own programs are placed over the copy).
COPY_SKIP_TOP = (".git", ".cache", "out", "build")
COPY_SKIP = ("__pycache__", ".kbench-target", ".mypy_cache")


def copy_collection(dest: str) -> None:
    """The clone's files as a guest needs them, into dest (made anew),
    links kept as links (the old names of the scripts)."""
    def skip(d: str, names: List[str]) -> List[str]:
        here = os.path.relpath(d, paths.TOP)
        return [n for n in names if n in COPY_SKIP or n.endswith(".o")
                or (here == "." and n in COPY_SKIP_TOP)
                or (here == "fuzz" and n == "build")]
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(paths.TOP, dest, symlinks=True, ignore=skip)


def place_programs(build: str, dest: str) -> None:
    """The programs of a make OUTPUT=BUILD into their test directories
    of the copy dest, where run_all.sh starts them."""
    for test in sorted(os.listdir(build)):
        src = os.path.join(build, test)
        if not os.path.isdir(src) or not os.path.isdir(
                os.path.join(dest, test)):
            continue
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            if os.path.isfile(path) and name not in COPY_SKIP and \
                    not name.endswith(".o"):
                shutil.copy2(path, os.path.join(dest, test, name))


class Vng(Backend):
    """virtme-ng over the host's root: the host's build of the
    collection, run by scripts/guest/vm_guest.sh in the guest."""
    name = "vng"

    def check_host(self) -> None:
        udevd = any(os.access(p, os.X_OK) for p in (
            "/usr/lib/systemd/systemd-udevd", "/lib/systemd/systemd-udevd")) \
            or have("udevd")
        missing_packages([
            (have(self.machine.arch.qemu), self.machine.arch.qemu_package),
            # virtme-ng builds its initramfs (9p/virtio modules) with
            # busybox, and its guest init needs udevd to name the
            # virtio-serial ports that carry the guest's stdout, stderr
            # and exit status.
            (have("busybox"), "busybox-static"), (udevd, "udev"),
            (have("depmod"), "kmod"),
            (proc.succeeds(["python3", "-c", "import venv, ensurepip"]),
             "python3-venv")])
        machine = os.uname().machine
        if machine != "x86_64":
            raise cli.Failure(f"only x86_64 hosts are supported, not "
                              f"{machine}", EXIT_SETUP)

    def prepare(self, image: images.Image, work: str) -> None:
        self.image = image
        self.env = vng.path_env(vng.ensure(self.prog, self.cache))
        self.build_and_list()
        if self.opts.vm_timeout is None:
            self.opts = replace(self.opts, vm_timeout=default_vm_timeout(
                self.opts.run, self.programs, self.machine.icount))
        accel, why = choose_accel(self.machine.accel, image.file,
                                  self.prog, self.cache)
        self.machine = replace(self.machine, accel=accel)
        say_accel(self.prog, self.machine, why)

    def build_and_list(self) -> None:
        """Build on the host (the guest sees the tree read-only) and list
        the programs the run will start (kbtools.collection, as
        run_all.sh does)."""
        run = self.opts.run
        collection.check_tests(run.tests)
        tests = list(run.tests) or collection.tests()
        if "--no-build" not in run.args:
            collection.build(tests, self.prog, "--no-install" in run.args)
        self.programs = collection.programs(tests)

    def guest_command(self, json_dir: str, plan_file: str) -> str:
        """The guest's command: vm_guest.sh, which runs the host's plan
        (plan_file)."""
        env = self.opts.run.guest_env(self.machine.accel,
                                      self.machine.icount)
        env["KBENCH_PLAN"] = plan_file
        args = guest_args(self.opts.run) + (["--json", json_dir]
                                            if json_dir else [])
        return "exec env" + "".join(
            f" {k}={shlex.quote(v)}" for k, v in env.items()) + \
            f" {shlex.quote(paths.script('scripts/guest/vm_guest.sh'))}" \
            " --no-build" + "".join(f" {shlex.quote(a)}" for a in args)

    def command(self, boot: guest.Boot, json_dir: str
                ) -> Tuple[List[str], Dict[str, str]]:
        m = self.machine
        cmd = ["vng", "--run", self.image.boot, "--verbose", "--user", "root",
               "--cwd", paths.TOP, "--memory", m.memory, "--force-9p",
               "--append", f"modprobe.blacklist={UNUSED_MODULES}"]
        if m.accel == "tcg":
            cmd.append("--disable-kvm")
        if m.icount:
            cmd += ["--qemu-opts", " ".join(m.icount.qemu_words())]
        if m.cpus:
            cmd += ["--cpus", str(m.cpus)]
        plan_file = self.plan_file(boot, json_dir)
        cmd += hidden_mounts([paths.TOP, self.cache, boot.state], json_dir)
        if json_dir:
            cmd.append(f"--rwdir={json_dir}")
        for a in kernel_appends(m):
            cmd += ["--append", a]
        cmd += ["--exec", self.guest_command(json_dir, plan_file)]
        return cmd, self.env

    def plan_file(self, boot: guest.Boot, json_dir: str) -> str:
        """The plan the guest runs, written into the boot's directory
        (the guest sees the host's root). In exact mode the guest runs
        it from its memory root, its --json directory the copy's
        (ICOUNT_JSON), and vm_guest.sh copies that back."""
        run, m = self.opts.run, self.machine
        guest_json = ICOUNT_JSON if m.icount and json_dir else json_dir
        path = boot.path("plan")
        with open(path, "w") as f:
            f.write(guest_plan(run, self.programs, run.guest_env(
                m.accel, m.icount), guest_json, self.prog))
        return path

    def handlers(self, boot: guest.Boot
                 ) -> Tuple[Callable[[bytes], None], Callable[[bytes], None]]:
        return boot.ktap, guest.virtme_stderr(boot)

    def hints(self, console: str, rc: int) -> List[str]:
        hints = []
        if "Unable to mount root fs" in console:
            hints.append("the kernel could not mount the host's root over "
                         "9p: build 9p, virtio-pci and overlayfs in, or put "
                         "its modules in DIR/lib/modules/VERSION with the "
                         "image in DIR or below")
        if rc == 127:
            hints.append("exit status 127 is the guest's 'command not "
                         f"found': {paths.script('scripts/guest/vm_guest.sh')} "
                         "was not there in the guest")
        return hints


class Qemu(Backend):
    """QEMU itself with the architecture's root filesystem of Debian
    packages as the initramfs and a second one holding its /init (the
    Arch's init), the collection built for it and the run's arguments;
    the console carries the KTAP and the results. Any architecture with
    rootfs_packages and an init: cross-built, or built natively."""
    name = "qemu"

    def check_host(self) -> None:
        a = self.machine.arch
        wanted = [(have(a.qemu), a.qemu_package)]
        if a.cross_prefix:
            wanted.append((have(a.cross_prefix + "gcc"), a.cross_package))
        wanted.append((have("cpio"), "cpio"))
        missing_packages(wanted)
        if not a.init:
            raise cli.Failure(f"the {a.name} guest has no init (arch.py)",
                              EXIT_SETUP)

    def prepare(self, image: images.Image, work: str) -> None:
        self.image = image
        self.rootfs = debian.rootfs(self.prog,
                                    debian.rootfs_of(self.machine.arch),
                                    self.cache)
        self.ksrc = os.environ.get("KSRC") or provisioned(self.prog,
                                                          self.cache)
        self.collection = self.build(work)
        run = self.opts.run
        collection.check_tests(run.tests)
        self.programs = collection.programs(list(run.tests) or
                                            collection.tests())
        a = self.machine.arch
        say_accel(self.prog, self.machine, f"the {a.name} guest runs under "
                  f"{a.qemu} {' '.join(a.machine)}, always TCG")

    def collection_top(self) -> str:
        return self.collection

    def build(self, work: str) -> str:
        """The collection for the guest: a copy of the clone of this
        run's own (WORK/kbench) holding the programs built (cross-built
        unless native) for the guest's architecture. The build is kept
        per clone in the cache (make OUTPUT=: only what changed is rebuilt, the clone's
        own build stays) and made and copied under a lock, so that runs
        one after the other, or at once, in one clone or in clones that
        share the cache, never write into one another's directories."""
        a = self.machine.arch
        out = os.path.join(self.cache, "vm", f"{a.name}-build",
                           paths.clone_id())
        cross: List[str] = []
        if a.cross_prefix:
            cross = [f"ARCH={a.name}", f"CROSS_COMPILE={a.cross_prefix}"]
            # Debian's libcap/libnuma of the architecture, unless
            # multiarch ones are installed (the build then names what is
            # missing).
            try:
                debian.cross_libs(self.prog, a.debian, self.cache)
            except cli.Failure:
                self.say(f"warning: no {a.name} libcap/libnuma from "
                         "Debian (kbench debian cross-libs)")
        os.makedirs(out, exist_ok=True)
        dest = os.path.join(work, "kbench")
        what = "cross-building" if cross else "building"
        with proc.locked(out + ".lock"):
            self.say(f"{what} the collection for {a.name} in {out}")
            log = os.path.join(work, "build.log")
            if proc.run(["make", "-s", "-C", paths.TOP, *cross,
                         f"KSRC={self.ksrc}", f"OUTPUT={out}"],
                        log=log, env=dict(os.environ,
                                          KBENCH_CACHE=self.cache)) != 0:
                sys.stderr.write(proc.tail(log, 20))
                raise cli.Failure(f"the {a.name} {'cross ' if cross else ''}"
                                  "build failed", EXIT_SETUP)
            try:
                copy_collection(dest)
                place_programs(out, dest)
            except OSError as e:
                raise cli.Failure(f"cannot copy the collection for the "
                                  f"guest: {cli.os_error_text(e)}",
                                  EXIT_SETUP) from e
        return dest

    def overlay(self, boot: guest.Boot, json_dir: str) -> str:
        """The initramfs: the root filesystem, then /init, /kbench, the
        harness's lib.mk and the run's arguments (/kbench-args)."""
        o = boot.path("overlay")
        shutil.copytree(self.collection, os.path.join(o, "kbench"),
                        symlinks=True)
        shutil.copy(paths.script(self.machine.arch.init),
                    os.path.join(o, "init"))
        for host_file in prefix_files(self.opts.run):
            os.makedirs(os.path.dirname(o + host_file), exist_ok=True)
            shutil.copy(host_file, o + host_file)
        os.chmod(os.path.join(o, "init"), 0o755)
        # The guest lists nothing and compiles nothing: the host's plan
        # names every program.
        icount = self.machine.icount
        env = self.opts.run.guest_env("tcg", icount)
        if icount and icount.dither:
            env["KBENCH_ICOUNT_DITHER"] = str(random.randrange(icount.dither))
        with open(os.path.join(o, "kbench-args"), "w") as f:
            f.write("".join(f"export {k}={shlex.quote(v)}\n"
                            for k, v in env.items()))
            if json_dir:
                f.write(f"json={GUEST_JSON}\n")
            if self.machine.kallsyms:
                f.write("kallsyms=1\n")
            f.write("plan=/kbench-plan\n")
        # The plan, its JSON in the directory the init copies back.
        with open(os.path.join(o, "kbench-plan"), "w") as f:
            f.write(guest_plan(self.opts.run, self.programs, env,
                               GUEST_JSON if json_dir else "", self.prog))
        # One time for every file: the guest's clock may start before the
        # host's file times (-rtc base=...), and make then warned of clock
        # skew in the KTAP, by a number of seconds that changed from boot
        # to boot; and the boots of a run get the same bytes.
        for d, dirs, files in os.walk(o):
            for name in dirs + files:
                os.utime(os.path.join(d, name), (0, 0),
                         follow_symlinks=False)
        cpio = boot.path("overlay.cpio")
        if not debian.pack_cpio(o, cpio):
            raise cli.Failure("cannot pack the guest's initramfs", EXIT_SETUP)
        initrd = boot.path("initrd.cpio")
        with open(initrd, "wb") as out:
            for part in (self.rootfs, cpio):
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, out)
        return initrd

    def command(self, boot: guest.Boot, json_dir: str
                ) -> Tuple[List[str], Dict[str, str]]:
        m = self.machine
        append = " ".join([f"console={m.arch.console}", "rdinit=/init",
                           "panic=-1", "quiet", *kernel_appends(m)])
        cmd = [m.arch.qemu, *m.arch.machine]
        if m.icount:
            cmd += m.icount.qemu_words()
        if m.plugin:
            cmd += ["-plugin", m.plugin]
        cmd += ["-smp", str(m.cpus or 1), "-m", m.memory, "-nodefaults",
                "-display", "none", "-no-reboot", "-serial", "stdio",
                "-kernel", self.image.boot, "-initrd",
                self.overlay(boot, json_dir), "-append", append]
        return cmd, dict(os.environ)

    def handlers(self, boot: guest.Boot
                 ) -> Tuple[Callable[[bytes], None], Callable[[bytes], None]]:
        err = open(boot.path("qemu.err"), "ab")
        boot.files.append(err)

        def qemu_err(data: bytes) -> None:
            err.write(data)
            err.flush()
        return guest.serial_console(boot, boot.path("json.b64")), qemu_err

    def extra_logs(self) -> Tuple[str, ...]:
        return ("qemu.err",)

    def finish(self, boot: guest.Boot, json_dir: str) -> None:
        if not json_dir:
            return
        tgz = boot.path("json.tgz")
        try:
            with open(boot.path("json.b64"), "rb") as f:
                data = base64.b64decode(f.read())
            with open(tgz, "wb") as f:
                f.write(data)
        except (OSError, ValueError):
            data = b""
        if not data or proc.run(["tar", "-xzf", tgz, "-C", json_dir]) != 0:
            self.say("warning: could not unpack the guest's JSON results")


BACKENDS = {"vng": Vng, "qemu": Qemu}


def kernel_appends(m: Machine) -> List[str]:
    """The guest kernel's command line beyond the backend's own: exact
    mode's switches (policy.Icount.appends), then --append's."""
    return [*(m.icount.appends if m.icount else ()), *m.appends]


def backend_of(m: Machine) -> str:
    """The backend that boots this machine: the architecture's for exact
    mode's own root (the deterministic guest's initramfs), or for plain
    runs (and exact runs on the usual root: KBENCH_ICOUNT_DETERMINISTIC=0)."""
    return m.arch.exact_backend if m.icount and m.icount.root \
        else m.arch.backend


def provisioned(prog: str, cache: str) -> str:
    """The kernel tree holding the kselftest harness (kbtools.ksrc)."""
    try:
        return ksrc.provision(cache, os.environ.get("KSRC_VERSION")
                              or ksrc.DEFAULT_VERSION, prog)
    except ksrc.SourceMissing as e:
        msg(prog, str(e))
        raise cli.Failure("no kernel tree for the kselftest harness",
                          EXIT_SETUP) from e


# ---- acceleration -----------------------------------------------------------

def kvm_probe(image: str, log: str) -> Tuple[bool, str]:
    """One short boot under KVM to its "no root" panic (panic=-1 and
    -no-reboot make QEMU exit): on hosts where /dev/kvm opens but cannot
    run a guest, QEMU hangs or aborts instead. (worked, why)."""
    cmd = ["qemu-system-x86_64", "-machine", "q35,accel=kvm", "-cpu", "host",
           "-m", "256M", "-smp", "1", "-nodefaults", "-display", "none",
           "-no-reboot", "-serial", "stdio", "-kernel", image, "-append",
           "console=ttyS0 panic=-1 loglevel=5"]
    try:
        rc = proc.run(cmd, log=log, timeout=KVM_PROBE_S)
    except proc.TimedOut:
        return False, (f"a probe boot under KVM hung (killed after "
                       f"{KVM_PROBE_S} s)")
    text = proc.tail(log, 100000)
    if rc == 0 and "Linux version" in text:
        return True, "a probe boot under KVM worked"
    first = next((ln for ln in text.splitlines()
                  if re.search(r"error|fail", ln, re.I)), "")
    return False, (f"a probe boot under KVM failed (QEMU exit status "
                   f"{status_text(rc)}{': ' + first[:100] if first else ''})")


def status_text(rc: int) -> str:
    return str(128 - rc if rc < 0 else rc)


def choose_accel(accel: str, image: str, prog: str,
                 cache: str) -> Tuple[str, str]:
    """(kvm or tcg, why); auto probes KVM once per host (host name,
    kernel, QEMU version), the answer cached in .cache/vm/kvm-probe."""
    if accel != "auto":
        return accel, f"--accel {accel}"
    if not os.path.exists("/dev/kvm"):
        return "tcg", "no /dev/kvm"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "no access to /dev/kvm"
    return probed(image, prog, cache)


def say_accel(prog: str, m: Machine, why: str) -> None:
    """Which accelerator, and what that makes of the figures."""
    if m.icount:
        msg(prog, f"accel: TCG with QEMU's instruction counter (-icount "
            f"{m.icount.qemu_opts}): figures are guest instructions (1 "
            f"virtual ns each at shift {m.icount.shift}), exact whatever "
            "the host does")
    elif m.accel == "kvm":
        msg(prog, f"accel: KVM ({why})")
    else:
        msg(prog, "accel: TCG, software emulation, ~10x slower: figures are "
            "a functional check only (KBENCH_GUEST=tcg in every JSON file)")
        msg(prog, f"not KVM because {why}")


def probed(image: str, prog: str, cache: str) -> Tuple[str, str]:
    vmcache = os.path.join(cache, "vm")
    memo = os.path.join(vmcache, "kvm-probe")
    u = os.uname()
    qemu = proc.capture(["qemu-system-x86_64", "--version"]).splitlines()
    key = f"{u.nodename} {u.release} {qemu[0] if qemu else ''}"
    try:
        with open(memo, encoding="utf-8") as f:
            lines = f.read().splitlines()
        if len(lines) >= 2 and lines[0] == key:
            accel, _, why = lines[1].partition(" ")
            return accel, f"{why}; cached in {memo}"
    except OSError:
        pass
    msg(prog, f"probing whether KVM can run a guest here (once per host, "
        f"<= {KVM_PROBE_S} s)")
    os.makedirs(vmcache, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        ok, why = kvm_probe(image, os.path.join(d, "kvm-probe.log"))
    accel = "kvm" if ok else "tcg"
    with open(memo, "w", encoding="utf-8") as f:
        f.write(f"{key}\n{accel} {why}\n")
    return accel, why


# ---- a guest ----------------------------------------------------------------

class Guest:
    """A kernel made ready to boot (host checked, image fetched,
    collection built), booted as often as asked:

        with Guest(opts, prog) as g:
            status = g.boot(json_dir, console, sys.stdout.buffer)
    """

    def __init__(self, opts: Options, prog: str,
                 cache: Optional[str] = None):
        self.prog = prog
        self.cache = cache or paths.cache_dir()
        self.backend = BACKENDS[backend_of(opts.machine)](opts, prog,
                                                         self.cache)
        self.kernel = opts.kernel
        self.work = ""
        self.times: Optional[Tuple[float, float]] = None  # the last boot's

    def __enter__(self) -> "Guest":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)

    def prepare(self) -> None:
        b = self.backend
        b.opts.run.runs = guest_runs(b.opts.run, b.machine.icount,
                                     self.prog)
        b.check_host()
        self.image = images.resolve(b.machine.arch, self.kernel, self.prog,
                                    self.cache)
        self.work = tempfile.mkdtemp(prefix="kbench-vm.",
                                     dir=os.environ.get("TMPDIR") or "/tmp")
        b.prepare(self.image, self.work)

    def boot(self, json_dir: str, console: str,
             sink: Optional[guest.Sink]) -> int:
        """One boot: the guest's exit status, or guest.Ended (124, 125)
        after the console's tail; the KTAP to sink as it comes, its
        boot and run times (s) in self.times."""
        b = self.backend
        o = b.opts
        vm_timeout = o.vm_timeout or 0
        programs = f"{len(b.programs)} programs, " if b.programs else ""
        msg(self.prog, f"booting {self.image.desc}: {programs}boot timeout "
            f"{o.boot_timeout} s, run timeout "
            f"{f'{vm_timeout} s' if vm_timeout else 'none'}")
        state = tempfile.mkdtemp(prefix="boot.", dir=self.work)
        boot = guest.Boot(state, sink, self.prog)
        try:
            cmd, env = b.command(boot, json_dir)
            out, err = b.handlers(boot)
            rc = guest.run(cmd, boot, env, out, err, o.boot_timeout,
                           vm_timeout)
            status = guest.verdict(boot, rc, self.image.desc, b.name,
                                   o.boot_timeout, vm_timeout, b.hints,
                                   b.extra_logs())
            if boot.up_at is not None and boot.end_at is not None:
                self.times = (boot.up_at - boot.start,
                              boot.end_at - boot.up_at)
            b.finish(boot, json_dir)
            return merge_repetitions(json_dir, bool(o.run.vs_prefix),
                                     self.prog, status)
        finally:
            boot.close()
            guest.keep_console(boot, console)
            shutil.rmtree(state, ignore_errors=True)


def merge_repetitions(json_dir: str, sides: bool, prog: str,
                      status: int) -> int:
    """The guest's repetitions (DIR/repetitions/) merged as run_all.sh
    merges them on a host (kbtools.results); the boot's status, or 1
    when they cannot be."""
    if not json_dir:
        return status
    try:
        results.merge_repetitions(json_dir, sides)
    except (results.ResultError, OSError) as e:
        msg(prog, f"could not merge the repetitions' results into "
            f"{json_dir}: {e}")
        return status or 1
    return status


def after_run(run: RunArgs, json_dir: str, work: str, prog: str,
              status: int) -> int:
    """What run_all.sh does after its runs on a host, done here for the
    guest: --vs-prefix's comparison, --report; the run's status."""
    ktap = os.path.join(json_dir, "run_all.ktap") if run.json_dir else ""
    rc = runner.conclude(json_dir if run.vs_prefix else "", run.vs_prefix,
                         run.fail_above, run.report, json_dir, prog, ktap)
    return status or rc


def main(argv: Sequence[str], prog: str = "kbench vm") -> int:
    """scripts/vm_run.sh, run_all.sh --kernel: the guest's exit status;
    2 bad usage; 3 setup; 124 timeout; 125 the guest died; 130."""
    prog = runner_prog(prog)

    def body() -> int:
        opts = parse(argv, prog)
        sys.stdout.flush()
        return run_guest(opts, prog, sys.stdout.buffer).status
    return cli.orchestrate(prog, body)


@dataclass(frozen=True)
class GuestRun:
    """How a guest run ended: the guest's exit status (after the host's
    comparison and report), the boot's and the run's seconds."""
    status: int
    times: Optional[Tuple[float, float]]


def run_guest(opts: Options, prog: str, sink: guest.Sink) -> GuestRun:
    """One guest run, as vm_run.sh runs it: made ready, booted, its
    results merged, compared and reported here; its KTAP to sink.
    cli.Error, cli.Failure (guest.Ended: 124, 125; 3 a failed setup),
    proc.Failed, as main() ends on them."""
    with Guest(opts, prog) as g:
        g.prepare()
        # An A/B in one boot compares on the host: its results come back
        # even without --json.
        json_dir = opts.run.json_dir
        if not json_dir and opts.run.vs_prefix:
            json_dir = os.path.join(g.work, "results")
            os.makedirs(json_dir)
        status = g.boot(json_dir, opts.console, sink)
        return GuestRun(after_run(opts.run, json_dir, g.work, prog, status),
                        g.times)
