# SPDX-License-Identifier: GPL-2.0
"""Debian's packages of another architecture (arm64, i386, ...), without
touching the host's APT or dpkg configuration (no dpkg
--add-architecture, no global apt-get update): the host's sources,
mirrors, proxies and keys, a private state in the collection's cache.

    kbench debian apt ARCH apt-get|apt-cache ARG...   (scripts/foreign_apt.sh)
    kbench debian apt ARCH update
    kbench debian cross-libs ARCH                      (scripts/cross_libs.sh)
    kbench debian arm64-rootfs                         (scripts/arm64_rootfs.sh)

The indices are fetched on first use and again when older than
KBENCH_APT_MAX_AGE seconds (default 21600). A mirror caught in the middle
of a sync fails one index: the update is retried, then an index that
still fails is left out with a warning (its packages may then be missing,
which the command itself reports).

cross-libs unpacks libcap's and libnuma's packages of ARCH into
.cache/cross/ARCH/, where lib/kbench.mk finds them for a cross build,
instead of the multiarch packages, which need dpkg --add-architecture and
may not install beside a newer host libc6-dev.

arm64-rootfs prepares, once, the root filesystem of the arm64 guest that
scripts/vm_arm64.sh boots: Debian's packages that run_all.sh and the
collection need, with their dependencies (apt's resolver over the arm64
indices above), unpacked with dpkg-deb and packed as an initramfs (newc
cpio), so that Debian's kernel needs no modules to mount its root.
Nothing runs under emulation: the little that maintainer scripts would do
for this guest (/etc/passwd, /etc/group, the awk and sh links) is done
here. The cpio is rebuilt when the package list changes; delete it to
fetch newer packages.
"""

import contextlib
import fcntl
import glob
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Iterator, List, NamedTuple, Optional, Sequence, Tuple

from kbtools import arch as arches
from kbtools import cli, paths, proc
from kbtools.arch import Arch
from kbtools.output import msg

MAX_AGE_S = 21600
NO_LISTS_AGE = 999999999
UPDATE_TRIES = 3
CROSS_PACKAGES = ("libcap-dev", "libcap2", "libnuma-dev", "libnuma1")
ARCH_RE = re.compile(r"[a-z0-9]+")

APT_USAGE = """\
Run apt-get or apt-cache on Debian's package indices of another
architecture (arm64, i386, ...) kept in the collection's cache, as if
that architecture were the native one, without touching the host's APT
or dpkg configuration.

  foreign_apt.sh ARCH apt-get|apt-cache ARG...
  foreign_apt.sh ARCH update          fetch the indices now
  KBENCH_CACHE      cache directory (default: <kbench>/.cache)

Exit status: the command's; 3 when no index of ARCH could be fetched
(update: when any index failed); 2 bad usage.
"""


class ForeignApt:
    """APT on ARCH's indices in CACHE/apt/ARCH."""

    def __init__(self, prog: str, arch: str, cache: Optional[str] = None):
        self.prog = prog
        self.arch = arch
        self.dir = os.path.join(cache or paths.cache_dir(), "apt", arch)

    def options(self) -> List[str]:
        """Native ARCH only, an empty dpkg status (nothing "installed": a
        dependency closure is complete), private lists and archives.
        Downloads as root, not as _apt, which may not enter the cache."""
        d = self.dir
        opts = {"APT::Architecture": self.arch,
                "APT::Architectures": self.arch,
                "Dir::State": f"{d}/state",
                "Dir::State::status": f"{d}/state/status",
                "Dir::Cache": f"{d}/cache", "Acquire::Languages": "none",
                "APT::Sandbox::User": "root",
                "APT::Install-Recommends": "false"}
        return [w for k, v in opts.items() for w in ("-o", f"{k}={v}")]

    def prepare(self) -> None:
        for sub in ("state/lists/partial", "cache/archives/partial"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        open(os.path.join(self.dir, "state", "status"), "a").close()

    def lock(self) -> int:
        """flock(2) on ARCH's .lock (as foreign_apt.sh took it); the fd,
        inheritable, so that an exec'd apt keeps holding it."""
        fd = os.open(os.path.join(self.dir, ".lock"),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.set_inheritable(fd, True)
        return fd

    def lists_age(self) -> int:
        """The newest index's age in seconds; a large number when none."""
        stamps = [os.stat(p).st_mtime for p in glob.glob(os.path.join(
            self.dir, "state", "lists", "*_Packages*"))]
        if not stamps:
            return NO_LISTS_AGE
        return int(time.time()) - int(max(stamps))

    def incomplete(self) -> str:
        return os.path.join(self.dir, "incomplete")

    def update(self) -> bool:
        """apt-get update, three tries. False when an index still failed
        (it is left out, marked for the next use to fetch again);
        cli.Failure (3) when no index of ARCH is there at all."""
        log = os.path.join(self.dir, "update.log")
        msg(self.prog, f"fetching Debian's {self.arch} package indices "
            f"into {self.dir}")
        for attempt in range(1, UPDATE_TRIES + 1):
            # --error-on=any: a failed fetch is an error, not a warning.
            if proc.run(["apt-get", *self.options(), "-q", "update",
                         "--error-on=any"], log=log) == 0:
                if os.path.exists(self.incomplete()):
                    os.unlink(self.incomplete())
                self.check_archive()
                return True
            if attempt < UPDATE_TRIES:
                time.sleep(attempt * 15)
        open(self.incomplete(), "w").close()
        problems = [line for line in proc.tail(log, 10000).splitlines()
                    if re.match(r"^(E|W):", line)]
        if self.lists_age() == NO_LISTS_AGE:
            sys.stderr.write("\n".join(problems) + "\n" if problems
                             else proc.tail(log, 5))
            raise cli.Failure(f"cannot fetch Debian's {self.arch} package "
                              f"indices (a mirror or network problem; see "
                              f"{log})", 3)
        msg(self.prog, f"warning: some of Debian's {self.arch} package "
            "indices failed (a mirror problem?); using the others:")
        sys.stderr.write("".join(f"    {p}\n" for p in problems))
        return False

    def check_archive(self) -> None:
        """After an update that fetched no index of ARCH: cli.Failure (3)
        quoting the Release files' Architectures lines, which do not
        list it (apt fetches nothing for an architecture a suite lacks,
        and says nothing)."""
        if self.lists_age() != NO_LISTS_AGE:
            return
        lines = []
        for release in sorted(glob.glob(os.path.join(
                self.dir, "state", "lists", "*Release"))):
            with open(release, encoding="utf-8", errors="replace") as f:
                archs = next((line.strip() for line in f
                              if line.startswith("Architectures:")), "")
            suite = os.path.basename(release).split("_dists_")[-1]
            lines.append(f"{suite.rsplit('_', 1)[0]}: {archs or '?'}")
        raise cli.Failure(f"the host's Debian sources have no {self.arch} "
                          f"packages ({'; '.join(lines) or 'no Release'})",
                          3)

    def fresh(self, max_age: int) -> None:
        """Fetch the indices when some failed last time or all are old."""
        if os.path.exists(self.incomplete()) or self.lists_age() > max_age:
            self.update()

    def command(self, tool: str, args: Sequence[str]) -> List[str]:
        """apt-get or apt-cache on these indices."""
        return [tool, *self.options(), *args]


def max_age() -> int:
    """How old the indices may be (KBENCH_APT_MAX_AGE); cli.Error when it
    is no number of seconds."""
    text = os.environ.get("KBENCH_APT_MAX_AGE", str(MAX_AGE_S))
    if not text.isdigit():
        raise cli.Error(f"invalid KBENCH_APT_MAX_AGE '{text}'")
    return int(text)


@contextlib.contextmanager
def apt_command(prog: str, arch: str, tool: str, args: Sequence[str],
                cache: Optional[str] = None) -> Iterator[List[str]]:
    """The command line of apt-get or apt-cache on ARCH's private
    indices, fetched first when old, their lock held while the block runs
    it. cli.Failure (3) when no index of ARCH can be fetched."""
    apt = ForeignApt(prog, arch, cache)
    apt.prepare()
    with proc.locked(os.path.join(apt.dir, ".lock")):
        apt.fresh(max_age())
        yield apt.command(tool, args)


def apt_problems(log: str) -> str:
    """apt's error and warning lines in log (else its last lines), for
    stderr."""
    lines = [line for line in proc.tail(log, 10000).splitlines()
             if re.match(r"^(E|W):", line)]
    return "\n".join(lines) + "\n" if lines else proc.tail(log, 3)


def check_arch(ap: cli.UsageParser, arch: str) -> None:
    if not ARCH_RE.fullmatch(arch):
        ap.error(f"invalid architecture '{arch}'")


def apt_main(argv: Sequence[str], prog: str = "kbench debian apt") -> int:
    """foreign_apt.sh: the command's exit status (it replaces this
    process); 3 no index of ARCH; 2 bad usage."""
    ap = cli.UsageParser(prog=prog)
    if argv[:1] in (["-h"], ["--help"]):
        print(APT_USAGE, end="")
        return 0
    if len(argv) < 2:
        ap.error("expected ARCH and apt-get, apt-cache or update")
    arch, tool, args = argv[0], argv[1], list(argv[2:])
    check_arch(ap, arch)
    if tool == "update":
        if args:
            ap.error("update takes no arguments")
    elif tool not in ("apt-get", "apt-cache"):
        ap.error(f"unknown command '{tool}' (apt-get, apt-cache or update)")
    try:
        age = max_age()
    except cli.Error as e:
        ap.error(str(e))
    apt = ForeignApt(prog, arch)

    def body() -> int:
        apt.prepare()
        apt.lock()
        if tool == "update":
            return 0 if apt.update() else 3
        apt.fresh(age)
        sys.stdout.flush()
        # In place of this process: an interactive apt-get may ask.
        os.execvp(tool, apt.command(tool, args))
    return cli.orchestrate(prog, body)


def unpack(debs: Sequence[str], root: str, dest: str) -> None:
    """Each package's files into root; the -dev packages' absolute
    libfoo.so links (/lib/TRIPLET/...) aimed into dest, where root will
    be moved."""
    for deb in debs:
        if proc.run(["dpkg-deb", "-x", deb, root]) != 0:
            raise cli.Failure(f"cannot unpack {os.path.basename(deb)}")
    for where, dirs, files in os.walk(root):
        for name in dirs + files:
            link = os.path.join(where, name)
            if os.path.islink(link):
                target = os.readlink(link)
                if target.startswith("/"):
                    os.unlink(link)
                    os.symlink(dest + target, link)


def cross_libs(prog: str, arch: str, cache: str) -> str:
    """CACHE/cross/ARCH with ARCH's libcap and libnuma unpacked (once,
    under a lock); cli.Failure 1 when a package cannot be fetched, 3
    when no index of ARCH can."""
    dest = os.path.join(cache, "cross", arch)
    stamp = os.path.join(dest, ".kbench-unpacked")
    if os.path.isfile(stamp):
        return dest
    os.makedirs(os.path.join(cache, "cross"), exist_ok=True)
    with proc.locked(os.path.join(cache, "cross", f".lock-{arch}")):
        if os.path.isfile(stamp):
            return dest
        dl = tempfile.mkdtemp(prefix="dl.", dir=os.path.join(cache, "cross"))
        try:
            msg(prog, "fetching " + " ".join(f"{p}:{arch}"
                                             for p in CROSS_PACKAGES))
            log = os.path.join(dl, "log")
            # No index of ARCH at all (mirror, network): Failure 3.
            with apt_command(prog, arch, "apt-get",
                             ["download", *CROSS_PACKAGES], cache) as cmd:
                rc = proc.run(cmd, log=log, cwd=dl)
            if rc != 0:
                sys.stderr.write(apt_problems(log))
                raise cli.Failure(f"cannot download the {arch} packages")
            root = os.path.join(dl, "root")
            unpack(sorted(glob.glob(os.path.join(dl, "*.deb"))), root, dest)
            shutil.rmtree(dest, ignore_errors=True)
            os.rename(root, dest)
            open(stamp, "w").close()
        finally:
            shutil.rmtree(dl, ignore_errors=True)
    return dest


def cross_libs_main(argv: Sequence[str],
                    prog: str = "kbench debian cross-libs") -> int:
    """cross_libs.sh: the directory on stdout; 0; 1 a package could not
    be fetched; 2 bad usage; 3 no index of ARCH (mirror or network)."""
    ap = cli.UsageParser(prog=prog)
    if len(argv) != 1 or argv[0].startswith("-"):
        if argv[:1] in (["-h"], ["--help"]):
            print(f"usage: {prog} ARCH   (Debian architecture: arm64, "
                  "i386, armhf, ...)")
            return 0
        ap.error("expected one Debian architecture (arm64, i386, ...)")
    check_arch(ap, argv[0])

    def body() -> int:
        print(cross_libs(prog, argv[0], paths.cache_dir()), flush=True)
        return 0
    return cli.orchestrate(prog, body)


class Rootfs(NamedTuple):
    """A guest's root filesystem of Debian packages, as data (of an
    architecture: rootfs_of)."""
    arch: str
    triplet: str
    packages: Tuple[str, ...]
    # Files the guest cannot do without: missing, the build fails.
    needs: Tuple[str, ...]
    # Bump when the layout changes (part of the cpio's name).
    layout: int = 1

    def key(self) -> str:
        """`printf '%s\\n' LAYOUT PACKAGE... | sha256sum | cut -c1-12`,
        as arm64_rootfs.sh named the cpio."""
        text = "".join(f"{w}\n" for w in (str(self.layout), *self.packages))
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def excludes(self) -> List[str]:
        """What the guest never reads (gconv: iconv's charset modules)."""
        return [f"--exclude=./{d}" for d in (
            "usr/share/doc", "usr/share/man", "usr/share/info",
            "usr/share/locale", "usr/share/lintian",
            f"usr/lib/{self.triplet}/gconv")]


def rootfs_of(a: Arch) -> Rootfs:
    """The root filesystem of an architecture's qemu guest (its
    rootfs_packages and rootfs_needs)."""
    if not a.rootfs_packages:
        raise cli.Failure(f"the {a.name} guest has no root filesystem of "
                          "Debian packages (arch.py: rootfs_packages)")
    return Rootfs(a.debian, a.triplet, a.rootfs_packages, a.rootfs_needs)


ROOTFS_USAGE = """\
  arm64_rootfs.sh
  KBENCH_CACHE      cache directory (default: <kbench>/.cache)

Host needs: apt, dpkg-deb, cpio. Exit status: 0, 2 bad usage, 3 a failed
download or a missing host package.
"""


@dataclass
class RootfsBuild:
    """One build of a Rootfs in a scratch directory WORK (the tree in
    WORK/root, the packages in WORK/debs), fetched from CACHE's indices."""
    prog: str
    fs: Rootfs
    work: str
    cache: str

    @property
    def root(self) -> str:
        return os.path.join(self.work, "root")

    @property
    def debs(self) -> str:
        return os.path.join(self.work, "debs")

    def fetch(self) -> None:
        """The packages and their whole dependency closure (the private
        dpkg status is empty) into WORK/debs."""
        os.makedirs(os.path.join(self.debs, "partial"))
        msg(self.prog, f"fetching {len(self.fs.packages)} Debian "
            f"{self.fs.arch} packages and their dependencies")
        log = os.path.join(self.work, "fetch.log")
        with apt_command(self.prog, self.fs.arch, "apt-get", [
                "-q", "-y", "--download-only", "-o",
                f"Dir::Cache::archives={self.debs}/", "install",
                *self.fs.packages], self.cache) as cmd:
            rc = proc.run(cmd, log=log)
        if rc != 0:
            sys.stderr.write(apt_problems(log))
            raise cli.Failure(f"cannot fetch the {self.fs.arch} packages of "
                              "the guest's root filesystem", 3)

    def unpack(self) -> None:
        """Every package into WORK/root, merged /usr as Debian 12
        installs it (/bin, /sbin, /lib are links into /usr)."""
        for d in ("bin", "sbin", "lib"):
            os.makedirs(os.path.join(self.root, "usr", d), exist_ok=True)
            os.symlink(f"usr/{d}", os.path.join(self.root, d))
        for deb in sorted(glob.glob(os.path.join(self.debs, "*.deb"))):
            if proc.run(["bash", "-c", 'set -o pipefail; deb=$1; shift; '
                         'dpkg-deb --fsys-tarfile "$deb" | tar -x '
                         '--keep-directory-symlink "$@" -C "$0"',
                         self.root, deb, *self.fs.excludes()]) != 0:
                raise cli.Failure(f"cannot unpack {os.path.basename(deb)}",
                                  3)

    def configure(self) -> None:
        """The maintainer scripts' part the guest relies on."""
        root = self.root
        for name in ("passwd", "group"):
            shutil.copy(os.path.join(root, "usr/share/base-passwd",
                                     f"{name}.master"),
                        os.path.join(root, "etc", name))
        for link, target in (("usr/bin/awk", "mawk"), ("usr/bin/sh", "dash")):
            if not os.path.lexists(os.path.join(root, link)):
                os.symlink(target, os.path.join(root, link))
        for d in ("proc", "sys", "dev", "tmp", "run"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        os.chmod(os.path.join(root, "tmp"), 0o1777)
        for f in self.fs.needs:
            if not os.path.exists(os.path.join(root, f)):
                raise cli.Failure(f"the {self.fs.arch} root filesystem has "
                                  f"no /{f}", 3)

    def pack(self, out: str) -> None:
        cpio = os.path.join(self.work, "cpio")
        if not pack_cpio(self.root, cpio):
            raise cli.Failure("cannot pack the root filesystem", 3)
        os.rename(cpio, out)


def pack_cpio(root: str, out: str) -> bool:
    """The tree root as an initramfs (newc cpio, owned by root) in out;
    False when cpio failed."""
    return proc.run(["sh", "-c", 'cd "$0" && find . -print0 | cpio --null '
                     '-o -H newc -R 0:0 --quiet >"$1"', root, out]) == 0


def rootfs(prog: str, fs: Rootfs, cache: str) -> str:
    """The cpio of fs in CACHE/vm (built once, under a lock)."""
    vm = os.path.join(cache, "vm")
    out = os.path.join(vm, f"{fs.arch}-root-{fs.key()}.cpio")
    if os.path.isfile(out):
        return out
    missing = [pkg for tool, pkg in (("apt-get", "apt"),
                                     ("dpkg-deb", "dpkg"), ("cpio", "cpio"))
               if shutil.which(tool) is None]
    if missing:
        raise cli.Failure(f"missing host packages: {' '.join(missing)} "
                          f"(apt-get install {' '.join(missing)})", 3)
    os.makedirs(vm, exist_ok=True)
    with proc.locked(os.path.join(vm, f".lock-{fs.arch}-rootfs")):
        if os.path.isfile(out):
            return out
        work = tempfile.mkdtemp(prefix=f"{fs.arch}-rootfs.", dir=vm)
        try:
            b = RootfsBuild(prog, fs, work, cache)
            b.fetch()
            b.unpack()
            b.configure()
            b.pack(out)
            debs = glob.glob(os.path.join(b.debs, "*.deb"))
            msg(prog, f"{fs.arch} root filesystem: {len(debs)} packages, "
                f"{os.path.getsize(out) // 1048576} MiB in {out}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return out


def arm64_rootfs_main(argv: Sequence[str],
                      prog: str = "kbench debian arm64-rootfs") -> int:
    """arm64_rootfs.sh: the cpio's path; 0; 2 bad usage; 3 a failed
    download or a missing host package."""
    if argv[:1] in (["-h"], ["--help"]):
        print(ROOTFS_USAGE, end="")
        return 0
    if argv:
        cli.UsageParser(prog=prog).error("no arguments expected")

    def body() -> int:
        print(rootfs(prog, rootfs_of(arches.ARM64), paths.cache_dir()),
              flush=True)
        return 0
    return cli.orchestrate(prog, body)
