# SPDX-License-Identifier: GPL-2.0
"""One boot of a guest, whatever starts it: the child in a process group
of its own, its two output streams read line by line into the boot's
markers, the boot and run watchdogs, and what happened said as the VM
runners say it (kbtools.vm's backends give the command line and what
each line means).

The guest's own lines mark its progress: "vm-run: guest up: ..." ends
the boot (scripts/guest/vm_guest.sh, scripts/guest/initramfs_init.sh print it) and
"vm-run: guest done: ..." the run; a guest that stops between them died.

Exit statuses: the guest's run status (0, 1: run_plan.sh's); 124 the boot or the
run timed out; 125 the kernel did not boot, panicked or died.
"""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from typing import IO, Callable, List, Mapping, Optional, Sequence

from kbtools import cli, proc
from kbtools.output import Writer, msg

EXIT_TIMEOUT, EXIT_GUEST = 124, 125
UP, DONE = b"vm-run: guest up: ", b"vm-run: guest done: "
KERNEL_LINE = re.compile(rb"^\[ *[0-9]+\.[0-9]+\] ")
TROUBLE = re.compile(rb"WARNING|BUG|Oops|panic|Call Trace|RIP:|hung_task")
POLL_S = 0.2
# After the child's exit, how long its readers may take to drain.
DRAIN_S = 10.0
# Beyond the boot and run timeouts: the last resort should the guest
# neither end nor be seen to.
SLACK_S = 60


# Where a boot's KTAP goes as it comes (a binary file, stdout, a Tee).
Sink = Writer[bytes]


class Boot:
    """The markers and files of one boot in its state directory: the
    whole console (console.log), the KTAP copy (ktap), the times the
    guest came up and was done."""

    def __init__(self, state: str, sink: Optional[Sink], prog: str):
        self.state = state
        self.prog = prog
        self.sink = sink
        self.console = open(os.path.join(state, "console.log"), "wb")
        self.ktap_file = open(os.path.join(state, "ktap"), "wb")
        self.start = time.monotonic()
        self.up_at: Optional[float] = None
        self.upline = ""
        self.done_at: Optional[float] = None
        self.done_status: Optional[int] = None
        self.end_at: Optional[float] = None  # when the verdict was said
        self.timed_out = ""  # "boot", "run" or "last": a watchdog fired
        self.files: List[IO[bytes]] = []  # the backend's, closed with it

    def path(self, name: str) -> str:
        return os.path.join(self.state, name)

    def up(self, line: bytes) -> None:
        self.up_at = time.monotonic()
        self.upline = line[len(UP):].decode("utf-8", "replace").rstrip()
        sys.stderr.write(line.decode("utf-8", "replace").rstrip("\n") + "\n")
        sys.stderr.flush()

    def done(self, status: Optional[int] = None) -> None:
        self.done_at = time.monotonic()
        self.done_status = status

    def ktap(self, data: bytes) -> None:
        """KTAP for the caller's stdout (or file) and the copy."""
        self.ktap_file.write(data)
        self.ktap_file.flush()
        if self.sink is None:
            return
        try:
            self.sink.write(data)
            self.sink.flush()
        except (BrokenPipeError, ValueError):
            self.sink = None  # the reader went away; go on draining

    def close(self) -> None:
        for f in [self.console, self.ktap_file, *self.files]:
            f.close()

    def console_text(self) -> str:
        with open(self.path("console.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")

    def tail(self, lines: int, extra: Sequence[str] = ()) -> None:
        """The console's last non-empty lines (and extra files'), said."""
        text = self.console_text()
        for name in extra:
            text += proc.tail(self.path(name), 10000)
        shown = [ln for ln in text.splitlines() if ln.strip()][-lines:]
        msg(self.prog, "last lines of the guest console (--console "
            "FILE keeps all):")
        sys.stderr.write("".join(f"    {ln}\n" for ln in shown))

    def ktap_totals(self) -> str:
        """The run's "# Totals:" line, or counts of top-level results."""
        with open(self.path("ktap"), "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        totals = [ln for ln in lines if ln.startswith("# Totals:")]
        if totals:
            return totals[-1][len("# Totals: "):]
        ok = sum(1 for ln in lines if ln.startswith("ok "))
        not_ok = sum(1 for ln in lines if ln.startswith("not ok "))
        return f"ok:{ok} not-ok:{not_ok}"


def virtme_stderr(boot: Boot) -> Callable[[bytes], None]:
    """virtme-ng's stderr: the kernel console (boot messages, later
    kernel log lines) to the console log only, the guest's own stderr to
    ours; kernel lines that signal trouble shown as they come."""
    def line(data: bytes) -> None:
        boot.console.write(data)
        boot.console.flush()
        if data.startswith(UP):
            boot.up(data)
        elif data.startswith(DONE):
            boot.done()
        elif boot.up_at is None:
            return
        elif KERNEL_LINE.match(data):
            if TROUBLE.search(data):
                sys.stderr.write("vm-run: guest kernel: " + data.decode(
                    "utf-8", "replace").rstrip("\n") + "\n")
        else:
            sys.stderr.write(data.decode("utf-8", "replace"))
        sys.stderr.flush()
    return line


def serial_console(boot: Boot, json_b64: str) -> Callable[[bytes], None]:
    """A serial console that carries everything (scripts/guest/initramfs_init.sh):
    the KTAP to the sink, the --json tar (base64, between marker lines)
    to json_b64, the markers to the boot. The kernel's own lines after
    the run (the power-off) stay in the console log only."""
    in_json = [False]

    def line(raw: bytes) -> None:
        data = raw.rstrip(b"\n").rstrip(b"\r") + b"\n"
        boot.console.write(data)
        boot.console.flush()
        if data.startswith(UP):
            boot.up(data)
        elif data == b"vm-run: json begin\n":
            in_json[0] = True
        elif data == b"vm-run: json end\n":
            in_json[0] = False
        elif data.startswith(DONE + b"exit status "):
            word = data.split()[-1]
            boot.done(int(word) if word.isdigit() else 1)
        elif in_json[0]:
            with open(json_b64, "ab") as f:
                f.write(data)
        elif boot.up_at is not None and boot.done_at is None:
            boot.ktap(data)
    return line


def pump(stream: IO[bytes], handle: Callable[[bytes], None]) -> None:
    for data in iter(stream.readline, b""):
        handle(data)


def status_of(returncode: int) -> int:
    """A child's exit status as a shell reports it (128 + signal)."""
    return 128 - returncode if returncode < 0 else returncode


def watch(child: "subprocess.Popen[bytes]", boot: Boot, boot_timeout: int,
          vm_timeout: int) -> int:
    """Wait for the child; stop its group when the guest has not come up
    within boot_timeout seconds, or its run has not ended vm_timeout
    seconds after (0: no limit). Its exit status: 124 when the last
    resort stopped it (as timeout(1) says it)."""
    last = boot.start + boot_timeout + vm_timeout + SLACK_S
    while True:
        try:
            return status_of(child.wait(timeout=POLL_S))
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if boot.up_at is None:
            if now - boot.start > boot_timeout:
                boot.timed_out = "boot"
        elif vm_timeout and boot.done_at is None and \
                now - boot.up_at > vm_timeout:
            boot.timed_out = "run"
        elif vm_timeout and now > last:
            boot.timed_out = "last"
        if boot.timed_out:
            proc.stop_group(child)
            rc = status_of(child.wait())
            return EXIT_TIMEOUT if boot.timed_out == "last" else rc


def run(cmd: Sequence[str], boot: Boot, env: Mapping[str, str],
        stdout: Callable[[bytes], None], stderr: Callable[[bytes], None],
        boot_timeout: int, vm_timeout: int) -> int:
    """Start cmd in a process group of its own (a signal stops vng or
    QEMU and all they started), its stdout and stderr through pipes
    (QEMU opens /proc/self/fd/1 and 2 itself and would truncate a
    redirected file) into the handlers; the watchdogs; its exit status.
    An interruption stops the guest before it goes on."""
    child = proc.spawn(cmd, env)
    assert child.stdout is not None and child.stderr is not None
    readers = [threading.Thread(target=pump, args=(child.stdout, stdout),
                                daemon=True),
               threading.Thread(target=pump, args=(child.stderr, stderr),
                                daemon=True)]
    for t in readers:
        t.start()
    try:
        rc = watch(child, boot, boot_timeout, vm_timeout)
    except proc.Interrupted as e:
        msg(boot.prog, "interrupted: stopping the guest")
        e.said = True
        proc.stop_group(child)
        raise
    except BaseException:
        proc.stop_group(child)
        raise
    finally:
        for t in readers:
            t.join(DRAIN_S)
        child.stdout.close()
        child.stderr.close()
    return rc


def panic(text: str) -> str:
    m = re.search(r"Kernel panic.*", text)
    return m.group(0) if m else ""


class Ended(cli.Failure):
    """A guest that did not come up or did not finish: 124 or 125."""


def console_end(boot: Boot, extra: Sequence[str]) -> str:
    """The console's last lines said, then its whole text."""
    boot.tail(25, extra)
    return boot.console_text()


def died(text: str, panicked: str, otherwise: str) -> Ended:
    """A guest that stopped short (EXIT_GUEST): "PANICKED: the panic line"
    when its console has one, else otherwise."""
    line = panic(text)
    return Ended(f"{panicked}: {line}" if line else otherwise, EXIT_GUEST)


def secs(a: float, b: float) -> str:
    return f"{b - a:.1f}"


def verdict(boot: Boot, rc: int, desc: str, backend: str,
            boot_timeout: int, vm_timeout: int,
            hints: Callable[[str, int], List[str]],
            extra: Sequence[str] = ()) -> int:
    """What happened, from the markers: the guest's exit status, or
    Ended (124, 125) with the console's last lines said first."""
    if boot.timed_out == "boot":
        boot.tail(25, extra)
        raise Ended(f"{desc} did not come up within {boot_timeout} s "
                    "(--boot-timeout)", EXIT_TIMEOUT)
    if boot.up_at is None:
        text = console_end(boot, extra)
        for hint in hints(text, rc):
            msg(boot.prog, "hint: " + hint)
        raise died(text, f"{desc} panicked at boot",
                   f"{desc} did not boot ({backend} exit status {rc})")
    if boot.timed_out == "run" or (rc in (124, 137) and boot.done_at is None):
        boot.tail(10, extra)
        raise Ended(f"the run in {desc} did not end within {vm_timeout} s "
                    "(--vm-timeout)", EXIT_TIMEOUT)
    if boot.done_at is None:
        raise died(console_end(boot, extra), f"{desc} panicked during the run",
                   f"{desc} died during the run ({backend} exit status {rc})")
    status = rc if boot.done_status is None else boot.done_status
    end = boot.end_at = time.monotonic()
    msg(boot.prog, f"{desc} [{boot.upline}]: boot "
        f"{secs(boot.start, boot.up_at)} s, run {secs(boot.up_at, end)} s, "
        f"total {secs(boot.start, end)} s; KTAP totals: "
        f"{boot.ktap_totals()}; exit status {status}")
    return status


def keep_console(boot: Boot, path: str) -> None:
    """--console FILE: the whole console log, whatever happened."""
    if path and os.path.isfile(boot.path("console.log")):
        try:
            shutil.copyfile(boot.path("console.log"), path)
        except OSError as e:
            msg(boot.prog, f"cannot keep the console in {path}: "
                f"{e.strerror}")
