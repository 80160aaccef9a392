# SPDX-License-Identifier: GPL-2.0
"""The LAVA job of a run: a definition that boots a kernel with a root
filesystem holding the built kbench collection, runs run_all.sh there
and reports every check and timing row as a LAVA test case
(scripts/guest/lava_run.sh).

    kbench lava job --kernel URL --rootfs URL [-t TEST]... [--repeat N]
                    [--full] [-o job.yaml]              (scripts/lava_job.py)

The default job is for LAVA's 'qemu' device type without KVM; see
docs/lava.md, for a board.
"""

import argparse
import re
import shlex
import sys
from typing import Any, Dict, Optional, Sequence

from kbtools import arch as arches
from kbtools import cli, options, packages, policy, results

try:
    import yaml
except ImportError:
    yaml = None

# A job definition, or a part of one, as YAML will write it.
Job = Dict[str, Any]

# The console of a kernel LAVA boots on an architecture kbench boots no
# guests of (those it does: kbtools.arch's lava_console).
OTHER_CONSOLES = {"i386": "ttyS0,115200", "arm": "ttyAMA0,115200"}
DEFAULT_CONSOLE = "ttyS0,115200"
CONSOLE_HELP = ("the kernel's console (default: the architecture's: "
                "ttyS0,115200 for amd64, ttyAMA0,115200 for arm64)")
DEVICE_TYPE_HELP = "LAVA's device type (default: the architecture's, qemu)"
COMPRESSIONS = ("gz", "xz", "bz2", "zstd")
TEST_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
# One word of the kernel command line inside QEMU's -append "...": no
# blank, quote, backslash, '$', '`' or control character.
KERNEL_WORD = re.compile(r"^[^\s\"'\\$`\x00-\x1f\x7f]+\Z")
# A --full run takes tens of minutes natively; TCG is slower still.
TEST_MINUTES = {"default": 30, "full": 240}


def compression_of(url: str) -> Optional[str]:
    """The compression LAVA must undo, from the URL's suffix."""
    for c in COMPRESSIONS:
        if url.endswith("." + c):
            return c
    return None


def run_command(args: argparse.Namespace) -> str:
    """The guest's command line: lava_run.sh with run_all.sh's options."""
    cmd = [f"{args.kbench_dir}/scripts/guest/lava_run.sh"]
    if args.machine_slow:
        cmd.insert(0, "KSFT_MACHINE_SLOW=yes")
    icount = exact_mode(args)
    if icount:
        # As a guest kbench boots gets them (kbtools.policy): the
        # programs record the mode, the figures are instructions.
        cmd[:0] = [f"{k}={v}" for k, v in policy.icount_env(icount).items()]
    for t in args.test:
        cmd += ["-t", t]
    # An exact verdict needs each boot's spread: the policy's runs at
    # least.
    repeat = max(args.repeat, icount.repetitions) if icount else args.repeat
    if repeat != 1:
        cmd += ["--repeat", str(repeat)]
    if args.full:
        cmd.append("--full")
    if args.timeout is not None:
        cmd += ["--timeout", str(args.timeout)]
    # A shell runs the step: --kbench-dir may hold blanks or quotes.
    return " ".join(shell_word(w) for w in cmd)


def shell_word(word: str) -> str:
    """WORD quoted for the step's shell; NAME=VALUE stays an assignment
    (its value quoted: icount's settings hold ';' and blanks)."""
    name, eq, value = word.partition("=")
    if eq and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{name}={shlex.quote(value)}"
    return shlex.quote(word)


def exact_mode(args: argparse.Namespace) -> Optional[policy.Icount]:
    """--icount's policy (kbtools.policy.icount), or None."""
    return policy.icount(steady=False) if args.icount else None


def console_of(args: argparse.Namespace) -> str:
    """--console, else the architecture's (kbtools.arch, else
    OTHER_CONSOLES), else ttyS0."""
    a = arches.lookup(args.arch)
    return (args.console or (a.lava_console if a else "")
            or OTHER_CONSOLES.get(args.arch) or DEFAULT_CONSOLE)


def kernel_args(args: argparse.Namespace) -> str:
    words = [f"console={console_of(args)}", "rdinit=" + args.init]
    words += args.kernel_arg
    return " ".join(words)


def ramdisk_image(args: argparse.Namespace) -> Job:
    image = {"url": args.rootfs, "format": "cpio.newc",
             # LAVA appends its overlay to the cpio itself: the default
             # path modifies images with libguestfs.
             "overlays": {"lava": True}}
    comp = compression_of(args.rootfs)
    if comp:
        image["compression"] = comp
    if args.device_type == "qemu":
        image["image_arg"] = "-initrd {ramdisk}"
    return image


def kernel_image(args: argparse.Namespace) -> Job:
    image = {"url": args.kernel}
    if args.device_type == "qemu":
        image["image_arg"] = f"-kernel {{kernel}} -append \"{kernel_args(args)}\""
    else:
        image["type"] = args.kernel_type
    return image


def deploy_action(args: argparse.Namespace) -> Job:
    deploy = {"timeout": {"minutes": 10}, "to": args.deploy_to,
              "images": {"kernel": kernel_image(args),
                         "ramdisk": ramdisk_image(args)}}
    if args.device_type != "qemu":
        deploy["os"] = "debian"
    return {"deploy": deploy}


def boot_action(args: argparse.Namespace) -> Job:
    boot = {"timeout": {"minutes": args.boot_minutes},
            "method": args.boot_method,
            "prompts": [args.prompt]}
    if args.device_type == "qemu":
        boot["media"] = "tmpfs"
    else:
        boot["commands"] = "ramdisk"
    if args.login:
        boot["auto_login"] = {"login_prompt": "login:",
                              "username": args.login}
    return {"boot": boot}


def test_action(args: argparse.Namespace) -> Job:
    minutes = args.test_minutes or \
        TEST_MINUTES["full" if args.full else "default"] * args.repeat
    definition = {
        "from": "inline",
        "name": "kbench",
        "path": "inline/kbench.yaml",
        "repository": {
            "metadata": {
                "format": "Lava-Test Test Definition 1.0",
                "name": "kbench",
                "description": "kbench: what kernel interfaces cost "
                               "(KTAP checks and timing medians)",
            },
            "run": {"steps": [run_command(args)]},
        },
    }
    return {"test": {"timeout": {"minutes": minutes},
                     "definitions": [definition]}}


def job(args: argparse.Namespace) -> Job:
    """The job definition as a dict, in LAVA's key order."""
    test = test_action(args)
    test_minutes = test["test"]["timeout"]["minutes"]
    doc = {
        "device_type": args.device_type,
        "job_name": args.job_name or "kbench " + " ".join(
            args.test or ["all"]),
        "timeouts": {"job": {"minutes": test_minutes + args.boot_minutes +
                             15},
                     "action": {"minutes": 10},
                     "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
    }
    if args.device_type == "qemu":
        doc["context"] = {"arch": args.arch, "memory": args.memory,
                          "no_kvm": True}
        icount = exact_mode(args)
        if icount:
            doc["context"]["extra_options"] = [
                " ".join(icount.qemu_words()),
                f"-smp {icount.cpus}"]
    else:
        # A board's template takes the command line from the context.
        doc["context"] = {"extra_kernel_args": kernel_args(args)}
    doc["actions"] = [deploy_action(args), boot_action(args), test]
    return doc


def positive(text: str) -> int:
    try:
        n = int(text, 10)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number above 0")
    return n


def seconds(text: str) -> int:
    if not re.match(r"^[0-9]+$", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of "
                                         f"seconds")
    return int(text)


def test_name(text: str) -> str:
    for name in text.split(","):
        if not TEST_NAME.match(name):
            raise argparse.ArgumentTypeError(f"invalid test name '{name}'")
    return text


def kernel_word(text: str) -> str:
    if not KERNEL_WORD.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not one kernel command line word (no blanks, "
            f"quotes, backslashes, '$', '`' or control characters)")
    return text


def regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular "
                                         f"expression: {e}") from None
    return text


def url(text: str) -> str:
    if not re.match(r"^(https?|file|ftp)://\S+$", text):
        raise argparse.ArgumentTypeError(f"'{text}' is not a URL "
                                         f"(http://, https://, file://)")
    return text


def parse_args(argv: Sequence[str], prog: str = "lava_job.py"
               ) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Write a LAVA job definition that runs the kbench "
                    "collection and reports its checks and figures.")
    p.add_argument("--kernel", required=True, type=url,
                   help="URL of the kernel image")
    p.add_argument("--rootfs", required=True, type=url,
                   help="URL of the root filesystem as a cpio.newc archive "
                        "(.gz/.xz/...), holding the built collection at "
                        "--kbench-dir and python3")
    # run_all.sh's (kbtools.options), for the guest's run.
    options.add_arguments(p, ("--test", "--repeat", "--full"), {
        "--test": {"action": "append", "default": [], "type": test_name,
                   "help": "run only this test (repeatable)"},
        "--repeat": {"nargs": None, "type": positive, "default": 1,
                     "help": "run every program N times (default 1)"},
        "--full": {"help": "the programs' full measurements (long)"}})
    options.add_arguments(p, ("--timeout",), {"--timeout": {
        "type": seconds, "help": "every program's runner timeout "
        "(run_all.sh -o; 0 = none): TCG runs slower than the settings "
        "files expect"}}, short=False)
    p.add_argument("--machine-slow", action="store_true",
                   help="KSFT_MACHINE_SLOW=yes: every program scales its "
                        "work down")
    p.add_argument("--icount", action="store_true",
                   help="exact mode (qemu device type): QEMU's instruction "
                        f"counter (-icount {policy.ICOUNT_QEMU}, one CPU) "
                        "drives the guest's clocks, the figures are "
                        "instructions, each program runs "
                        f"{policy.Icount.repetitions} times")
    p.add_argument("-o", "--output", help="write the job here (default "
                   "stdout)")
    p.add_argument("--job-name")
    p.add_argument("--kbench-dir", default="/opt/kbench",
                   help="the collection in the rootfs (default /opt/kbench)")
    p.add_argument("--device-type", help=DEVICE_TYPE_HELP)
    p.add_argument("--arch", default="amd64", help="qemu context arch")
    p.add_argument("--console", metavar="TTY", help=CONSOLE_HELP)
    p.add_argument("--memory", type=positive, default=2048,
                   help="qemu memory in MiB (the rootfs lives in RAM)")
    p.add_argument("--deploy-to", default="tmpfs",
                   help="deploy method (a board: tftp)")
    p.add_argument("--boot-method", default="qemu",
                   help="boot method (a board: u-boot, grub, ...)")
    p.add_argument("--kernel-type", default="image",
                   help="kernel type for a board (image, zimage, uimage)")
    p.add_argument("--init", default="/sbin/init", type=kernel_word,
                   help="the rootfs's init (rdinit=)")
    p.add_argument("--kernel-arg", action="append", default=[],
                   type=kernel_word,
                   help="one more kernel command line word (repeatable)")
    p.add_argument("--prompt", default="root@kbench:", type=regex,
                   help="shell prompt regex after login")
    p.add_argument("--login", default="root",
                   help="user to log in as at 'login:' ('' = no login)")
    p.add_argument("--boot-minutes", type=positive, default=10)
    p.add_argument("--test-minutes", type=positive,
                   help="test action timeout (default 30 per repetition, "
                        "240 with --full)")
    args = p.parse_args(list(argv))
    if args.device_type is None:
        a = arches.lookup(args.arch)
        args.device_type = a.lava_device_type if a else "qemu"
    if args.console is not None and not KERNEL_WORD.match(args.console):
        p.error(f"--console {args.console!r} is not one kernel command "
                "line word")
    if "quiet" in args.kernel_arg:
        p.error("'quiet' hides the console LAVA waits on")
    if args.icount and args.device_type != "qemu":
        p.error("--icount needs the qemu device type (QEMU's instruction "
                "counter)")
    if args.icount:
        try:
            policy.icount()
        except ValueError as e:
            p.error(str(e))
    return args


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    """kbench lava job, scripts/lava_job.py: 0 written; 2 bad usage or
    no PyYAML."""
    args = parse_args(argv, prog)
    if yaml is None:
        print(f"{prog}: needs PyYAML: "
              f"{packages.module_missing('yaml', 'python3-yaml')}",
              file=sys.stderr)
        return 2
    text = yaml.safe_dump(job(args), sort_keys=False, width=1000)
    with cli.writing(args.output or "-"):
        results.write_text(args.output or "-", text)
    return 0
