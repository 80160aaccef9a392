# SPDX-License-Identifier: GPL-2.0
"""How a run is run: the one home of the policy that the host's Python
and the guest both follow, the guest's plan and programs reading it from
its environment (guest_env) rather than from constants of its own. A leaf:
imports nothing of kbtools.

- Exact mode (QEMU's instruction counter, --icount): Icount, icount().
- The programs' timeouts: kselftest's settings files
  (settings_timeout), the room a guest's run needs beyond them.
- guest_env(): what the guest's plan and programs read.
"""

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

# QEMU's instruction counter (--icount): one virtual ns per guest
# instruction (shift=0), virtual time that does not follow the host's
# clock while the vCPU idles (sleep=off), and no attempt to keep it in
# step with real time (align=off). KBENCH_ICOUNT_QEMU replaces the
# options, to study other settings (docs/exact-runs.md).
ICOUNT_QEMU = "shift=0,sleep=off,align=off"

# The deterministic exact guest (the default; KBENCH_ICOUNT_DETERMINISTIC=0
# turns it off): what a boot would otherwise take from the host or from
# chance, each shown to move rows (docs/exact-runs.md). QEMU's: the
# guest's wall clock starts at one date and follows virtual time (-rtc),
# and QEMU's own random numbers (the guest's RDRAND/RDSEED, virtio-rng)
# come from one seed (-seed).
DETERMINISTIC_QEMU_ARGS = ("-rtc", "base=2026-01-01T00:00:00,clock=vm",
                           "-seed", "1")
# The kernel's: no randomised placement of the kernel image (nokaslr),
# of a process's mappings (norandmaps), of the kernel stack on each
# system call (randomize_kstack_offset=off), of free pages
# (page_alloc.shuffle=0), and no merging of slab caches, which made
# objects of unrelated caches share slabs (slub_nomerge).
DETERMINISTIC_APPENDS = ("nokaslr", "norandmaps", "randomize_kstack_offset=off",
                         "page_alloc.shuffle=0", "slub_nomerge")
# Its root: an initramfs built once, read from guest memory (no host I/O
# during the boot or a measurement).
DETERMINISTIC_ROOT = "initramfs"
# Boots of a deterministic guest repeat each other to the instruction,
# but two kernels' boots differ early on, and one instruction more moves
# every later interrupt: each boot first runs a random number of empty
# loops below this (KBENCH_ICOUNT_DITHER), so that the A/A boots that
# calibrate a kernel differ as two kernels' would.
DITHER_LOOPS = 1000
# The deterministic guest's process-creation loops (syscall_overhead's fork
# and clone, proc_create's cells) run at SCHED_FIFO 1 (lib/settle.c):
# the fair class's tree and load tracking then leave the creations, and
# one count holds most of a row's creations instead of a fifth
# (docs/exact-runs.md). The kernel under test runs its RT class's
# enqueue, wake-up and pick paths there instead of the fair class's,
# with two idle SCHED_OTHER children of the program made runnable beside
# them ("+2other"): the RT class's paths take one branch whatever number
# of the kernel's own threads the loop keeps waiting (lib/settle.c).
# KBENCH_ICOUNT_FIFO=0 turns it off.
CREATION_SCHED = "fifo1+2other"
# The rows whose loops it schedules ('TEST:ROW'; 'TEST:' every row of
# the test): what a prior of another policy saw of them says nothing of
# these runs, and it still speaks for every other row.
CREATION_ROWS = ("syscall_overhead:fork", "syscall_overhead:clone",
                 "proc_create:")


def creation_row(key: str) -> bool:
    """Whether row 'TEST:ROW' is timed under CREATION_SCHED."""
    return any(key == k or (k.endswith(":") and key.startswith(k))
               for k in CREATION_ROWS)


@dataclass(frozen=True)
class Icount:
    """Exact mode: QEMU's -icount options and what they change. TCG only
    (QEMU has no instruction counter under KVM), one CPU unless --cpus
    says otherwise, longer boots, every program's timeout in the guest
    run_factor times as long (a virtual second is a billion
    instructions), and repetitions runs of each program per boot in an
    exact A/B (each side shows its spread)."""
    qemu_opts: str
    shift: int
    cpus: int = 1
    boot_timeout: int = 600
    run_factor: int = 4
    repetitions: int = 2
    # QEMU's arguments beside -icount (both backends put them after it).
    qemu_args: Tuple[str, ...] = ()
    # Kernel command-line switches of the deterministic guest.
    appends: Tuple[str, ...] = ()
    # The guest's root: "" the architecture's usual one, or "initramfs".
    root: str = ""
    # Settle the kernel before each test (lib/settle.c).
    settle: bool = False
    # Each boot's empty loops before the run: random below this (0: none).
    dither: int = 0
    # How the process-creation loops are scheduled: "" the programs'
    # own policy, CREATION_SCHED SCHED_FIFO 1 with two SCHED_OTHER
    # children waiting.
    sched: str = ""

    def qemu_words(self) -> List[str]:
        """QEMU's words of exact mode: -icount and its options, then the
        deterministic guest's arguments (every backend, in this order)."""
        return ["-icount", self.qemu_opts, *self.qemu_args]

    def settings(self) -> Dict[str, str]:
        """What a run records about how its guest ran: the -icount
        options and shift, and the deterministic guest's switches (none
        when it is off)."""
        out = {"icount_qemu": self.qemu_opts, "icount_shift": str(self.shift)}
        if self.qemu_args:
            out["qemu_args"] = " ".join(self.qemu_args)
        if self.appends:
            out["append"] = " ".join(self.appends)
        if self.root:
            out["root"] = self.root
        if self.settle:
            out["settle"] = "1"
        if self.dither:
            out["dither"] = f"<{self.dither}"
        if self.sched:
            out["sched"] = self.sched
        return out

    def settings_text(self) -> str:
        """settings() in one line, as every JSON records it
        (machine.icount_settings): two sides of an A/B must match."""
        return "; ".join(f"{k}={v}" for k, v in self.settings().items())


def deterministic(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether exact mode boots the deterministic guest:
    KBENCH_ICOUNT_DETERMINISTIC unset or 1 (the default), not 0;
    ValueError for anything else."""
    value = environ.get("KBENCH_ICOUNT_DETERMINISTIC", "1")
    if value not in ("0", "1"):
        raise ValueError(f"invalid KBENCH_ICOUNT_DETERMINISTIC '{value}': "
                         f"1 (the deterministic guest, the default) or 0")
    return value == "1"


def creation_fifo(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the deterministic guest runs its process-creation loops
    at SCHED_FIFO 1: KBENCH_ICOUNT_FIFO unset or 1 (the default), not 0;
    ValueError for anything else."""
    value = environ.get("KBENCH_ICOUNT_FIFO", "1")
    if value not in ("0", "1"):
        raise ValueError(f"invalid KBENCH_ICOUNT_FIFO '{value}': 1 "
                         f"(process creation at SCHED_FIFO 1, the default) "
                         f"or 0")
    return value == "1"


def icount(opts: Optional[str] = None, steady: Optional[bool] = None
           ) -> Icount:
    """The Icount of these -icount options (KBENCH_ICOUNT_QEMU, else the
    default), with the deterministic guest when steady (None: as
    KBENCH_ICOUNT_DETERMINISTIC says, on by default, and its process
    creations at SCHED_FIFO 1 unless KBENCH_ICOUNT_FIFO=0); ValueError
    when the options set no shift=N, or a variable is neither 0 nor 1."""
    text = opts if opts is not None else \
        os.environ.get("KBENCH_ICOUNT_QEMU") or ICOUNT_QEMU
    m = re.search(r"(?:^|,)shift=([0-9]+)(?:,|$)", text)
    if not m:
        raise ValueError(f"invalid KBENCH_ICOUNT_QEMU '{text}': no shift=N")
    if steady is None:
        steady = deterministic()
    if not steady:
        return Icount(text, int(m.group(1)))
    return Icount(text, int(m.group(1)), qemu_args=DETERMINISTIC_QEMU_ARGS,
                  appends=DETERMINISTIC_APPENDS, root=DETERMINISTIC_ROOT,
                  settle=True, dither=DITHER_LOOPS,
                  sched=CREATION_SCHED if creation_fifo() else "")


# kselftest's default timeout of a program without a settings file.
DEFAULT_PROGRAM_TIMEOUT = 45
# Room beyond the programs' timeouts: the boot's leftovers, run_all.sh.
RUN_SLACK_S = 120


def settings_timeout(test_dir: str) -> int:
    """A test's "timeout=" (kselftest's default 45), as the kselftest
    runner reads it."""
    t = DEFAULT_PROGRAM_TIMEOUT
    try:
        with open(os.path.join(test_dir, "settings"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^timeout=([0-9]+)", line)
                if m:
                    t = int(m.group(1))
    except OSError:
        pass
    return t


def icount_env(icount: Icount) -> Dict[str, str]:
    """What the guest's plan and programs read of exact mode: the shift
    (KBENCH_ICOUNT: the programs record it, their figures are
    instructions), the factor of every program's timeout
    (KBENCH_TIMEOUT_FACTOR), how the guest was set up (KBENCH_ICOUNT_SETTINGS:
    every JSON's machine.icount_settings), whether the programs settle
    the kernel before each test (KBENCH_ICOUNT_SETTLE=1, lib/settle.c)
    and run their process creations at SCHED_FIFO 1
    (KBENCH_ICOUNT_FIFO=1)."""
    env = {"KBENCH_ICOUNT": str(icount.shift),
           "KBENCH_TIMEOUT_FACTOR": str(icount.run_factor),
           "KBENCH_ICOUNT_SETTINGS": icount.settings_text()}
    if icount.settle:
        env["KBENCH_ICOUNT_SETTLE"] = "1"
    if icount.sched == CREATION_SCHED:
        env["KBENCH_ICOUNT_FIFO"] = "1"
    return env


def guest_env(accel: str, icount: Optional[Icount],
              environ: Mapping[str, str] = os.environ) -> Dict[str, str]:
    """The guest starts with a fresh environment: what its plan
    (runner.guest_plan) and the programs read there. KBENCH_GUEST (the accelerator, recorded in every
    JSON file), KSFT_MACHINE_SLOW (yes unless environ says otherwise),
    in exact mode KBENCH_ICOUNT (the shift) and KBENCH_TIMEOUT_FACTOR
    (the plan's factor of every program's timeout) and the
    KSELFTEST_<PROG>_ARGS of environ. That the host merges the
    repetitions is the plan's (runner.guest_plan), not the guest's."""
    env = {"KBENCH_GUEST": accel,
           "KSFT_MACHINE_SLOW": environ.get("KSFT_MACHINE_SLOW") or "yes"}
    if icount:
        env.update(icount_env(icount))
    for name, value in sorted(environ.items()):
        if re.fullmatch(r"KSELFTEST_[A-Z0-9_]+_ARGS", name):
            env[name] = value
    return env
