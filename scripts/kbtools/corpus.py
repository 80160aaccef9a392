# SPDX-License-Identifier: GPL-2.0
"""Seeds for the fuzz harnesses, recorded from real kernels and filed
into the corpus by decoder family.

    kbench corpus record [-r RECORDER] [-o CORPUS] [-k IMAGE]... [-H]
                                        (fuzz/record_corpus.sh)

fuzz/record_corpus (record_corpus.c) writes what a kernel hands kbench's
decoders as raw files; this runs it on this machine and, with -k, inside
a guest booted under virtme-ng (the host's root file system read-only,
the output directory shared read-write), then files each file as
CORPUS/HARNESS/ORIGIN-NAME, ORIGIN being the kernel's major.minor.
"""

import glob
import os
import re
import shlex
import shutil
import sys
import tempfile
from typing import List, Optional, Sequence

from kbtools import cli, paths, proc, vng
from kbtools.output import msg

FUZZ = os.path.join(paths.TOP, "fuzz")
BOOT_TIMEOUT_S = 600
# Debian kernels run_all.sh --kernel fetched, by the name it takes.
DEBIAN_GLOBS = {"debian-6.1": "linux-image-6.1.0-*-amd64",
                "debian-6.12": "linux-image-6.12.*+deb*-amd64"}
# Option values: selector = parser (low 3 bits) and bounds (high bits).
OPTION_SEEDS = (
    (0, "100"), (0, "010"), (0, "-7"), (0, "99999999999999999999"),
    (0, "1.5"), (1, "4096"), (1, "1.5M"), (1, "100MiB"), (1, "2G"),
    (1, "18446744073709551615"), (1, "17179869184G"), (1, "1BB"),
    (2, "0.25"), (2, ".5"), (2, "-2"), (2, "inf"), (3, "500ms"), (3, "2m"),
    (3, "1.5h"), (3, "10us"), (4, "30"), (4, "1d"), (4, "0.5"))

USAGE = """\
Record seeds for the fuzz harnesses from real kernels and file them
into the corpus by decoder family. fuzz/record_corpus (record_corpus.c)
writes what a kernel hands kbench's decoders (taskstats and cgroupstats
netlink replies, /proc/PID/stat, status and comm, mountinfo,
/proc/self/cgroup, memory.stat and memory.numa_stat of cgroup v1 or v2)
as raw files; this script runs it on this machine and, with -k, inside
a guest booted under virtme-ng (as run_all.sh --kernel does: the host's
root file system read-only, the output directory shared read-write),
then files each file as CORPUS/HARNESS/ORIGIN-NAME, ORIGIN being the
kernel's major.minor (6.1-taskstats-get-pid, 6.12-memory.stat-v2-child).
The option-value seeds are a fixed list.

Usage: fuzz/record_corpus.sh [-r RECORDER] [-o CORPUS] [-k IMAGE]... [-H]
  -r RECORDER  the recorder (default fuzz/build/record_corpus)
  -o CORPUS  where the seeds go (default fuzz/corpus)
  -k IMAGE   record inside IMAGE too: debian-6.1 or debian-6.12 (the
             Debian kernel 'run_all.sh --kernel debian-6.1' has fetched
             into .cache/vm/kernels/), or an x86 bzImage (repeatable)
  -H         record on this machine as well when -k is given (without
             -k this machine is the only origin)
Needs root (taskstats, a memory cgroup of its own) and the recorder
built (make -C fuzz build/record_corpus; 'make -C fuzz corpus' does
both for this machine). Exit 0 done, 1 a recording failed, 2 bad usage.
"""


Failure = cli.Failure


def version_key(path: str) -> List[object]:
    """A key that sorts as `sort -V`: numbers by value."""
    return [(0, int(p)) if p.isdigit() else (1, p)
            for p in re.split(r"(\d+)", path)]


def image_of(name: str) -> str:
    """The kernel image -k NAME boots: the newest Debian kernel of the
    series fetched into .cache/vm/kernels/ (not its PREEMPT_RT flavour),
    or a file. cli.Error for a file that is not there, Failure for a
    Debian kernel not fetched yet."""
    pattern = DEBIAN_GLOBS.get(name)
    if pattern is None:
        if not os.path.isfile(name):
            raise cli.Error(f"no kernel image '{name}'")
        return name
    found = [p for p in glob.glob(os.path.join(
        paths.TOP, ".cache", "vm", "kernels", pattern, "boot", "vmlinuz-*"))
        if "-rt-" not in p]
    if not found:
        raise Failure(f"{name} not fetched yet: run 'run_all.sh --kernel "
                      f"{name} -t taskstats' once")
    return sorted(found, key=version_key)[-1]


class Recorder:
    def __init__(self, prog: str, recorder: str, corpus: str, work: str):
        self.prog = prog
        self.recorder = recorder
        self.corpus = corpus
        self.work = work

    def put(self, harness: str, origin: str, name: str,
            selector: Optional[int], files: Sequence[str]) -> None:
        """A seed of the cgroup harness is its selector byte and the
        files, separated by NUL bytes; the others are the file itself."""
        os.makedirs(os.path.join(self.corpus, harness), exist_ok=True)
        data = b"" if selector is None else bytes([selector])
        parts = []
        for f in files:
            with open(f, "rb") as fh:
                parts.append(fh.read())
        with open(os.path.join(self.corpus, harness, f"{origin}-{name}"),
                  "wb") as out:
            out.write(data + b"\0".join(parts))

    def file_raw(self, raw: str) -> None:
        """Every file the recorder wrote, to its harness."""
        with open(os.path.join(raw, "release"), encoding="utf-8",
                  errors="replace") as f:
            release = f.read().rstrip("\n")
        origin = "\n".join(re.sub(r"^([0-9]+\.[0-9]+).*", r"\1", line)
                           for line in release.split("\n"))
        mountinfo = os.path.join(raw, "mountinfo")
        for path in sorted(glob.glob(os.path.join(raw, "*"))):
            name = os.path.basename(path)
            if name.startswith(("taskstats-", "cgroupstats-")):
                self.put("netlink", origin, name, None, [path])
            elif name.startswith("proc-"):
                self.put("proc_stat", origin, name, None, [path])
            elif name.startswith("memory.stat-"):
                self.put("cgroup", origin, name, 0, [path])
            elif name.startswith("memory.numa_stat-"):
                self.put("cgroup", origin, name, 1, [path])
            elif name == "mountinfo":
                self.put("cgroup", origin, name, 2, [path])
            elif name.startswith("cgroup-"):
                self.put("cgroup", origin, name, 3, [path])
                if os.path.isfile(mountinfo):
                    self.put("cgroup", origin,
                             "own-dirs-" + name[len("cgroup-"):], 4,
                             [mountinfo, path])
        # The burst's replies in one datagram, as a busy socket delivers
        # them.
        if os.path.isfile(os.path.join(raw, "taskstats-burst-0")):
            with open(os.path.join(self.corpus, "netlink",
                                   f"{origin}-taskstats-burst-all"),
                      "wb") as out:
                for path in sorted(glob.glob(os.path.join(
                        raw, "taskstats-burst-[0-9]"))):
                    with open(path, "rb") as f:
                        out.write(f.read())
        count = sum(len(files) for _, _, files in os.walk(raw))
        msg(self.prog, f"{origin} ({release}): {count} files filed")

    def option_seeds(self) -> None:
        d = os.path.join(self.corpus, "options")
        os.makedirs(d, exist_ok=True)
        for i, (selector, value) in enumerate(OPTION_SEEDS):
            with open(os.path.join(d, f"value-{i}"), "wb") as f:
                f.write(bytes([selector]) + value.encode())

    def record_host(self) -> bool:
        raw = os.path.join(self.work, "host")
        os.makedirs(raw)
        ok = proc.run([self.recorder, raw]) == 0
        release = os.path.join(raw, "release")
        if os.path.isfile(release) and os.path.getsize(release):
            self.file_raw(raw)
        return ok

    def record_guest(self, name: str, image: str, raw: str) -> None:
        """Boot IMAGE (TCG: KVM cannot run guests on every host) and
        record into RAW; Failure when nothing was recorded."""
        venv = vng.venv_dir()
        if not vng.installed(venv):
            raise Failure(f"no virtme-ng in {venv}: run 'run_all.sh "
                          f"--kernel {name}' once")
        os.makedirs(raw, exist_ok=True)
        msg(self.prog, f"booting {image} (TCG: a few minutes)")
        log = os.path.join(self.work, "vng.log")
        guest = shlex.join([os.path.join(FUZZ, "record_corpus.sh"),
                            "--guest", raw, self.recorder])
        try:
            proc.run(["vng", "--run", image, "--user", "root", "--cwd",
                      paths.TOP, "--memory", "1G", "--force-9p",
                      "--disable-kvm", f"--rwdir={raw}", "--exec", guest],
                     log=log, env=vng.path_env(os.path.join(venv, "bin")),
                     timeout=BOOT_TIMEOUT_S)
        except proc.TimedOut as e:
            msg(self.prog, str(e))
        with open(log, "rb") as f:
            for m in re.finditer(rb"record_corpus.*", f.read()):
                sys.stderr.write(m.group(0).decode("utf-8", "replace") + "\n")
        release = os.path.join(raw, "release")
        if not (os.path.isfile(release) and os.path.getsize(release)):
            sys.stderr.write(proc.tail(log, 20))
            raise Failure(f"nothing recorded in {name}")


def guest_half(prog: str, argv: Sequence[str]) -> int:
    """Inside the guest: run the recorder into the shared directory."""
    if len(argv) != 2:
        cli.UsageParser(prog=prog).error("--guest wants DIR RECORDER")
    print(f"record_corpus.sh: guest up: Linux {os.uname().release}",
          file=sys.stderr, flush=True)
    if proc.run([argv[1], argv[0]], stdout=sys.stderr) != 0:
        print("record_corpus.sh: the recorder failed in the guest",
              file=sys.stderr)
    return 0


def main(argv: Sequence[str], prog: str = "kbench corpus record") -> int:
    if argv and argv[0] == "--guest":
        return guest_half(prog, argv[1:])
    ap = cli.UsageParser(prog=prog, help_text=USAGE)
    ap.add_argument("-r", dest="recorder",
                    default=os.path.join(FUZZ, "build", "record_corpus"))
    ap.add_argument("-o", dest="corpus", default=os.path.join(FUZZ, "corpus"))
    ap.add_argument("-k", dest="images", action="append", default=[])
    ap.add_argument("-H", dest="host", action="store_true")
    a = ap.parse_args(list(argv))
    recorder = os.path.abspath(a.recorder)
    if not os.access(recorder, os.X_OK):
        msg(prog, f"no {recorder}: make -C fuzz build/record_corpus first")
        return 2
    if os.geteuid() != 0:
        msg(prog, "not root: taskstats and the memory cgroup will be "
            "missing")
    # Every image first: a wrong name ends the run before anything.
    try:
        images = [(name, image_of(name)) for name in a.images]
    except cli.Error as e:
        ap.error(str(e))

    def body() -> int:
        work = tempfile.mkdtemp(prefix="kbench-seeds.")
        try:
            r = Recorder(prog, recorder, a.corpus, work)
            bad = False
            r.option_seeds()
            if a.host or not images:
                bad = not r.record_host()
            for n, (name, image) in enumerate(images):
                raw = os.path.join(work, f"guest{n}")
                try:
                    r.record_guest(name, image, raw)
                    r.file_raw(raw)
                except Failure as e:
                    msg(prog, str(e))
                    bad = True
            seeds = sum(len(f) for _, _, f in os.walk(a.corpus))
            msg(prog, f"{seeds} seeds in {a.corpus}")
            return int(bad)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return cli.orchestrate(prog, body)
