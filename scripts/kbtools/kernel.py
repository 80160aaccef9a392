# SPDX-License-Identifier: GPL-2.0
"""The kbench test kernel: Debian's linux-source-6.12 built with the patch
series in testkernel/patches/ ("patched") and without it ("unpatched"),
or one commit of another kernel git tree (--tree/--commit, for
scripts/bisect.sh), one small virtme-ng style configuration for all.

Images are cached outside the clone (KBENCH_TESTKERNEL_CACHE, default
~/.cache/kbench/testkernel), keyed by the source, the configuration and
the series, byte for byte as testkernel/build.sh keyed them before it
became a wrapper of this module:

  tree-SRCKEY/linux-source-6.12/   the build tree, a git repository
                                   (branches unpatched, patched-SERIES)
  keys/FRAGKEY                     the image key configuring those inputs
                                   gave last (going back costs nothing)
  patched-BASEKEY-SERIESKEY/       bzImage .config kernelrelease series
  unpatched-BASEKEY/               bzImage .config kernelrelease series
  commits/HASH-FRAGKEY/            bzImage .config build-HASH.log commit
  obj/SRCDIRKEY/                   out-of-tree objects of a --tree
  .lock-build                      flock(2): one build at a time

    kbench kernel build [OPTION]...     (testkernel/build.sh)
"""

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from kbtools import cli, ksrc, paths, proc, vng
from kbtools.output import msg

VERSION = "6.12"
# Bump when the way the kernels are configured or built changes.
RECIPE = 2
# A build's time, the same for every build: see build_stamp.
STAMP_TIME = "1970-01-01 00:00:00 UTC"
PACKAGE = f"linux-source-{VERSION}"
# Commands and headers a build needs, with the Debian package of each.
HOST_TOOLS = ("gcc", "make", "bison", "flex", "bc", "git", "xz")
HOST_FILES = (("/usr/include/libelf.h", "libelf-dev"),
              ("/usr/include/openssl/ssl.h", "libssl-dev"))
PACKAGE_OF = {"xz": "xz-utils"}
EXIT_FAILED, EXIT_USAGE, EXIT_MISSING = 1, 2, 3


Failure = cli.Failure


def cache_dir() -> str:
    return (os.environ.get("KBENCH_TESTKERNEL_CACHE")
            or paths.user_cache("testkernel"))


def sha12(data: bytes) -> str:
    """The first 12 hex digits of data's SHA-256, as `sha256sum | cut -c1-12`."""
    return hashlib.sha256(data).hexdigest()[:12]


def file_sha(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_word(path: str) -> Optional[str]:
    """A small file's text without its trailing newlines, as $(cat FILE)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().rstrip("\n")
    except OSError:
        return None


def write_atomic(path: str, text: str) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def series_files(patches: str) -> List[str]:
    """The patches in series order: the series file when there is one,
    else the names' order (git format-patch numbers them)."""
    series = os.path.join(patches, "series")
    if os.path.isfile(series):
        with open(series, encoding="utf-8") as f:
            names = [line.rstrip("\n") for line in f
                     if not re.match(r"^\s*(#|$)", line)]
        return [os.path.join(patches, n) for n in names]
    return sorted(os.path.join(patches, n) for n in os.listdir(patches)
                  if n.endswith(".patch")
                  and os.path.isfile(os.path.join(patches, n)))


def config_fragments(top: str, btf: bool) -> List[str]:
    """The configuration fragments in merge order: the collection's union
    config, every test directory's config (they may be ahead of the
    union), then the test kernel's, which wins."""
    frags = [os.path.join(top, "config")] if os.path.isfile(
        os.path.join(top, "config")) else []
    for d in sorted(os.listdir(top)):
        f = os.path.join(top, d, "config")
        if not d.startswith(".") and os.path.isfile(f):
            frags.append(f)
    frags.append(os.path.join(top, "testkernel", "kernel.config"))
    if btf:
        frags.append(os.path.join(top, "testkernel", "btf.config"))
    return frags


def build_stamp(identity: str, build: int) -> Dict[str, str]:
    """make's environment for a build whose uname -v names what was
    built, not when and where: '#BUILD-ID SMP ... 1970-01-01 00:00:00
    UTC', ID a digest of identity (the source and configuration's key).
    Two builds of one source and configuration, on any machine, then
    read as one kernel (kbtools.exact.kernel_of), so that the exact
    prior's boots of the test kernel, made elsewhere, are of this
    machine's build too; two commits still read apart."""
    return dict(os.environ,
                KBUILD_BUILD_VERSION=f"{build}-{sha12(identity.encode())}",
                KBUILD_BUILD_TIMESTAMP=STAMP_TIME,
                KBUILD_BUILD_USER="kbench", KBUILD_BUILD_HOST="kbench")


def stat_line(path: str) -> str:
    """`stat -c '%n %s' PATH`: the name and size stand for a tarball's
    content (hashing 150 MB on every run costs more than it protects)."""
    return f"{path} {os.stat(path).st_size}"


def inputs_key(frags: Sequence[str], source: str) -> str:
    """The key of the configuration's inputs: the recipe, what stands for
    the source ("" for --tree), the fragments' text."""
    data = f"recipe {RECIPE}\n".encode()
    if source:
        data += source.encode() + b"\n"
    for f in frags:
        with open(f, "rb") as fh:
            data += fh.read()
    return sha12(data)


def series_key(series: Sequence[str]) -> str:
    """`sha256sum PATCH... | awk '{print $1}' | sha256sum`, 12 digits."""
    if not series:
        return "none"
    return sha12("".join(file_sha(p) + "\n" for p in series).encode())


def wanted_config(frags: Sequence[str]) -> Dict[str, str]:
    """Symbol -> the line the fragments want ("n": not set); a later
    fragment overrides an earlier one."""
    want: Dict[str, str] = {}
    for frag in frags:
        with open(frag, encoding="utf-8") as f:
            for raw in f:
                line = raw.strip()
                m = re.match(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$", line)
                if m:
                    want[m.group(1)] = line
                    continue
                m = re.match(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$", line)
                if m:
                    want[m.group(1)] = "n"
    return want


def lost_options(frags: Sequence[str], config: str) -> List[str]:
    """The options the fragments ask for that .config does not have."""
    with open(config, encoding="utf-8", errors="replace") as f:
        lines = [line.rstrip("\n") for line in f]
    have = set(lines)
    lost = []
    for sym, line in sorted(wanted_config(frags).items()):
        if line == "n":
            if f"{sym}=y" in have or f"{sym}=m" in have:
                lost.append(f"{sym}=n")
        elif line not in have:
            lost.append(line)
    return lost


class Builder:
    """One invocation of the build: its options, keys and paths."""

    def __init__(self, prog: str, top: str = paths.TOP,
                 cache: Optional[str] = None, jobs: int = 1,
                 btf: bool = False):
        self.prog = prog
        self.top = top
        self.here = os.path.join(top, "testkernel")
        self.cache = cache or cache_dir()
        self.jobs = jobs
        self.btf = btf
        self.frags = config_fragments(top, btf)
        self.clock = proc.Clock()
        self.tarball = ""
        self.frag_key = ""
        self.series: List[str] = []
        self.series_key = "none"
        self.tree = ""
        self.out_patched = ""
        self.out_unpatched = ""

    def say(self, text: str) -> None:
        msg(self.prog, text)

    # ---- host and source ------------------------------------------------

    def check_host(self) -> None:
        missing = [tool for tool in HOST_TOOLS if shutil.which(tool) is None]
        missing += [pkg for path, pkg in HOST_FILES
                    if not os.path.isfile(path)]
        if shutil.which("pahole") is None:
            missing.append("dwarves")
        if not proc.succeeds(["python3", "-c", "import venv, ensurepip"]):
            missing.append("python3-venv")
        if missing:
            packages = " ".join(PACKAGE_OF.get(m, m) for m in missing)
            raise Failure(f"missing host tools: {' '.join(missing)} "
                          f"(apt-get install {packages})", EXIT_MISSING)

    def find_tarball(self) -> None:
        """/usr/src's tarball, else one fetched into the cache once."""
        for path in (ksrc.installed_tarball(VERSION),
                     os.path.join(self.cache, f"{PACKAGE}.tar.xz")):
            if os.path.isfile(path):
                self.tarball = path
                return
        self.tarball = os.path.join(self.cache, f"{PACKAGE}.tar.xz")
        self.say(f"fetching Debian package {PACKAGE}")
        try:
            with ksrc.downloaded_tarball(self.cache, VERSION) as t:
                os.replace(t, self.tarball)
        except ksrc.SourceMissing as e:
            raise Failure(f"cannot fetch {PACKAGE} (apt-get update, or "
                          f"apt-get install {PACKAGE})", EXIT_MISSING) from e

    # ---- keys -------------------------------------------------------------

    def keyed(self, want_patched: bool) -> None:
        """The source found and the keys computed: the image paths and
        the build tree known."""
        os.makedirs(self.cache, exist_ok=True)
        self.find_tarball()
        self.compute_keys(want_patched)

    def compute_keys(self, want_patched: bool) -> None:
        self.series = series_files(os.path.join(self.here, "patches"))
        if not self.series and want_patched:
            raise Failure(f"no patches in {self.here}/patches")
        source = stat_line(self.tarball)
        self.frag_key = inputs_key(self.frags, source)
        self.series_key = series_key(self.series)
        self.tree = os.path.join(
            self.cache, "tree-" + sha12((source + "\n").encode()), PACKAGE)
        self.image_paths()

    def image_paths(self) -> None:
        """The images are keyed by the configuration the inputs produced
        (its set options), so that a new fragment that changes nothing
        rebuilds nothing. Unknown ("unconfigured") until the tree was
        configured for the inputs once; remembered per inputs (keys/)."""
        base_key = "unconfigured"
        memo = os.path.join(self.cache, "keys", self.frag_key)
        if read_word(os.path.join(self.tree, ".kbench-config")) == \
                self.frag_key:
            data = (f"recipe {RECIPE}\n{stat_line(self.tarball)}\n").encode()
            with open(os.path.join(self.tree, ".config"), "rb") as f:
                data += b"".join(line.rstrip(b"\n") + b"\n" for line in f
                                 if line.startswith(b"CONFIG_"))
            base_key = sha12(data)
            if read_word(memo) != base_key:
                os.makedirs(os.path.dirname(memo), exist_ok=True)
                write_atomic(memo, base_key + "\n")
        elif os.path.isfile(memo):
            base_key = read_word(memo) or base_key
        self.out_patched = os.path.join(
            self.cache, f"patched-{base_key}-{self.series_key}")
        self.out_unpatched = os.path.join(self.cache,
                                          f"unpatched-{base_key}")

    # ---- the build tree ---------------------------------------------------

    def git_tree(self, *args: str) -> List[str]:
        return ["git", "-C", self.tree, "-c", "user.name=kbench",
                "-c", "user.email=kbench@localhost",
                "-c", "advice.detachedHead=false", "-c", "gc.auto=0",
                *args]

    def must(self, cmd: Sequence[str], what: str) -> None:
        """Run cmd (its output on stderr); Failure(what) when it fails."""
        if proc.run(cmd, stdout=sys.stderr) != 0:
            raise Failure(what)

    def prepare_tree(self) -> None:
        """The pristine source as a git repository (branch unpatched),
        once per tarball; configured whenever the inputs change."""
        if not os.path.isfile(os.path.join(self.tree, ".kbench-ready")):
            parent = os.path.dirname(self.tree)
            shutil.rmtree(parent, ignore_errors=True)
            tmp = tempfile.mkdtemp(prefix="tree.", dir=self.cache)
            self.say(f"extracting {self.tarball}")
            self.must(["tar", "-xJf", self.tarball, "-C", tmp],
                      f"cannot extract {self.tarball}")
            os.rename(tmp, parent)
            # Debian's top-level .gitignore ignores everything: add by
            # force, build products stay untracked all the same.
            self.must(self.git_tree("init", "-q", "-b", "unpatched"),
                      "git init failed")
            self.must(self.git_tree("add", "-f", "-A"), "git add failed")
            self.must(self.git_tree(
                "commit", "-q", "-m", f"{PACKAGE} (Debian, pristine)"),
                "git commit failed")
            open(os.path.join(self.tree, ".kbench-ready"), "w").close()
        if read_word(os.path.join(self.tree, ".kbench-config")) != \
                self.frag_key:
            self.configure(self.tree, self.tree,
                           os.path.join(self.cache, "config.log"))

    def configure(self, src: str, obj: str, log: str) -> None:
        """virtme-ng's defconfig and the fragments into OBJ/.config (OBJ
        is SRC, or the directory of an out-of-tree build)."""
        self.say(f"configuring: virtme-ng defconfig + "
                 f"{len(self.frags)} fragments")
        env = vng.path_env(vng.ensure(self.prog))
        try:
            os.unlink(os.path.join(obj, ".kbench-config"))
        except FileNotFoundError:
            pass
        merge = os.path.join("scripts", "kconfig", "merge_config.sh")
        if obj == src:
            steps = [["virtme-configkernel", "--defconfig"],
                     [merge, "-m", ".config", *self.frags],
                     ["make", "-s", "olddefconfig"]]
        else:
            env["KBUILD_OUTPUT"] = obj
            steps = [["virtme-configkernel", "--defconfig"],
                     [merge, "-m", "-O", obj, os.path.join(obj, ".config"),
                      *self.frags],
                     ["make", "-s", f"O={obj}", "olddefconfig"]]
        append = False
        for step in steps:
            if proc.run(step, log=log, cwd=src, env=env,
                        append=append) != 0:
                sys.stderr.write(proc.tail(log, 20))
                raise Failure(f"configuring the kernel failed (log: {log})")
            append = True
        lost = lost_options(self.frags, os.path.join(obj, ".config"))
        if lost:
            raise Failure("options the kernel configuration could not "
                          f"take: {' '.join(lost)}")
        with open(os.path.join(obj, ".kbench-config"), "w",
                  encoding="utf-8") as f:
            f.write(self.frag_key + "\n")

    def keep_image(self, obj: str, out: str, extra: Sequence[str],
                   notes: Dict[str, List[str]]) -> None:
        """bzImage, .config, the extra files and each note (a file made
        of a command's output) into OUT, whole or not at all."""
        tmp = out + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        for f in [os.path.join(obj, "arch", "x86", "boot", "bzImage"),
                  os.path.join(obj, ".config"), *extra]:
            shutil.copy2(f, tmp)
        for name, cmd in notes.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
                fh.write(proc.capture(cmd))
        shutil.rmtree(out, ignore_errors=True)
        os.rename(tmp, out)

    def build_one(self, name: str, out: str) -> None:
        """make bzImage on the checked-out branch; keep the image, its
        config and the series it holds in OUT."""
        log = os.path.join(self.cache, f"build-{name}.log")
        self.say(f"building the {name} kernel ({self.jobs} jobs, "
                 f"log: {log})")
        start = self.clock.seconds()
        local = f"LOCALVERSION=-kbench-{name}"
        if proc.run(["make", "-C", self.tree, f"-j{self.jobs}", local,
                     "bzImage"], log=log,
                    env=build_stamp(os.path.basename(out), 1)) != 0:
            sys.stderr.write(proc.tail(log, 30))
            raise Failure(f"building the {name} kernel failed (log: {log})")
        self.keep_image(self.tree, out, (), {
            "kernelrelease": ["make", "-s", "-C", self.tree, local,
                              "kernelrelease"],
            "series": self.git_tree("log", "--oneline", "unpatched..HEAD"),
        })
        self.say(f"built the {name} kernel in "
                 f"{self.clock.seconds() - start} s: {out}/bzImage")

    def build_patched(self) -> None:
        """One branch per series (patched-SERIESKEY): going back to a
        series built before only rewrites the files that differ."""
        branch = f"patched-{self.series_key}"
        if proc.succeeds(self.git_tree("rev-parse", "-q", "--verify",
                                       f"refs/heads/{branch}")):
            self.must(self.git_tree("checkout", "-q", "-f", branch),
                      f"cannot check out {branch}")
        else:
            self.must(self.git_tree("checkout", "-q", "-f", "unpatched"),
                      "cannot check out unpatched")
            self.must(self.git_tree("checkout", "-q", "-b", branch),
                      f"cannot make branch {branch}")
            if proc.run(self.git_tree("am", "-q", "--keep-cr",
                                      *self.series),
                        stdout=sys.stderr) != 0:
                proc.run(self.git_tree("am", "--abort"))
                proc.run(self.git_tree("checkout", "-q", "-f", "unpatched"))
                proc.run(self.git_tree("branch", "-q", "-D", branch))
                raise Failure(f"the series does not apply to {PACKAGE}")
        self.build_one("patched", self.out_patched)

    def build_unpatched(self) -> None:
        self.must(self.git_tree("checkout", "-q", "-f", "unpatched"),
                  "cannot check out unpatched")
        self.build_one("unpatched", self.out_unpatched)


class Commit:
    """One commit of another kernel git tree (--tree DIR --commit REV)."""

    def __init__(self, b: Builder, src: str, rev: str, build: int = 1):
        self.b = b
        self.src = src
        self.hash = rev
        self.build = build
        self.frag_key = inputs_key(b.frags, "")
        b.frag_key = self.frag_key
        # A further build of one commit (kbench bisect's confirmation):
        # another release string, so another image layout.
        self.suffix = "" if build == 1 else f"-{build}"
        self.out = os.path.join(b.cache, "commits",
                                f"{self.hash}-{self.frag_key}{self.suffix}")
        self.obj = os.path.join(b.cache, "obj",
                                sha12((src + "\n").encode()))
        self.log = os.path.join(b.cache, "commits", f"build-{rev}.log")

    def check_clean(self) -> None:
        """The image goes out of tree unless this tree was configured
        here (the test kernel's): kbuild needs a clean source tree."""
        if os.path.isfile(os.path.join(self.src, ".kbench-config")):
            self.obj = self.src
        elif (os.path.exists(os.path.join(self.src, ".config"))
              or os.path.isdir(os.path.join(self.src, "include", "config"))):
            raise cli.Error(
                f"--tree '{self.src}' holds a build of its own (.config): "
                "kbench builds out of tree and kbuild needs a clean source "
                "tree ('make mrproper' there, or give a separate git "
                "worktree)")

    def git(self, *args: str) -> List[str]:
        return ["git", "-C", self.src, "-c", "advice.detachedHead=false",
                *args]

    def build_here(self) -> None:
        """Check this commit out (from whichever commit the tree is on:
        make rebuilds what differs between the two) and build its image
        into self.out; the tree stays on it."""
        b = self.b
        log = self.log
        start = b.clock.seconds()
        try:
            b.must(self.git("checkout", "-q", "--detach", self.hash),
                   f"cannot check out {self.hash}")
            os.makedirs(os.path.join(b.cache, "commits"), exist_ok=True)
            os.makedirs(self.obj, exist_ok=True)
            if read_word(os.path.join(self.obj, ".kbench-config")) != \
                    self.frag_key:
                b.configure(self.src, self.obj, log)
            title = proc.capture(self.git("log", "-1", "--format=%h %s",
                                          self.hash)).strip()
            b.say(f"building {title} ({b.jobs} jobs, log: {log})")
            o = [] if self.obj == self.src else [f"O={self.obj}"]
            # The commit's tree, not its hash: the test kernel's commits
            # differ from one machine to another, their content does not.
            source = proc.capture(self.git(
                "rev-parse", f"{self.hash}^{{tree}}")).strip()
            # make in a process group of its own: an interruption stops
            # all of it before the tree is checked out again.
            if proc.run(["make", "-C", self.src, *o, f"-j{b.jobs}",
                         f"LOCALVERSION=-kbench-bisect{self.suffix}",
                         "bzImage"], log=log,
                        env=build_stamp(f"{source} {self.frag_key}",
                                        self.build)) != 0:
                sys.stderr.write(proc.tail(log, 30))
                raise Failure(f"building {self.hash} failed (log: {log})")
            b.keep_image(self.obj, self.out, (log,), {
                "commit": self.git("log", "-1", "--format=%H %s",
                                   self.hash)})
        except Failure as e:
            # Not the host's fault (3): this commit does not check out,
            # configure or build.
            if e.status != EXIT_FAILED or isinstance(e, BuildFailed):
                raise
            raise BuildFailed(str(e), log) from e
        b.say(f"built {self.hash} in {b.clock.seconds() - start} s: "
              f"{self.out}/bzImage")


def check_unchanged(tree: str) -> None:
    """cli.Error when the tree's tracked files differ from its HEAD:
    checking another commit out would take the changes along."""
    if not proc.succeeds(["git", "-C", tree, "diff", "--quiet", "HEAD",
                          "--"]):
        raise cli.Error(f"--tree '{tree}' has uncommitted changes: "
                        "commit or stash them")


def tree_head(tree: str) -> str:
    """The tree's branch, or its commit when it is on none."""
    try:
        return proc.capture(["git", "-C", tree, "symbolic-ref", "-q",
                             "--short", "HEAD"]).strip()
    except proc.Failed:
        return proc.capture(["git", "-C", tree, "rev-parse", "HEAD"]).strip()


def put_back(b: Builder, tree: str, head: str) -> None:
    """The tree checked out on HEAD again (its branch), a signal held
    until that is done: a checkout cut short would leave it between
    two commits."""
    with proc.deferred_signals():
        if proc.run(["git", "-C", tree, "-c", "advice.detachedHead=false",
                     "checkout", "-q", head]) != 0:
            b.say(f"could not put {tree} back on {head}")


USAGE = """\
Usage: {prog} [OPTION]...
Build the kbench test kernel from Debian's linux-source-{version}: once with
the patch series in testkernel/patches/ applied (patched: /proc/taskstats
ioctls, memory.stat.ks and memory.numa_stat.ks) and once without it
(unpatched), with the same small configuration (virtme-ng's defconfig,
the collection's config fragments, testkernel/kernel.config; no debug
info and so no BTF: the BPF iterator rows skip there, unless --btf).

The patched kernel is built first. Images are cached in
  {cache}/
keyed by the source tarball, the configuration and the series: a run whose
inputs did not change builds nothing. One build tree (a git repository,
patched and unpatched are branches) is kept there too, so that switching
between the two, or changing the series, rebuilds only what changed.

On success the last two lines on stdout are
  patched=PATH/bzImage
  unpatched=PATH/bzImage

Options:
  -j, --jobs N      parallel make jobs (default: the number of CPUs)
      --patched     build (or look up) only the patched kernel
      --unpatched   build (or look up) only the unpatched kernel
      --btf         add testkernel/btf.config: debug info and BTF, so
                    that the BPF iterator rows run beside the RFC ioctl
                    and the .ks files (other images, cached apart; a
                    full rebuild of the tree, about 1.5 times as long)
  -n, --dry-run     print the image paths and whether they are cached,
                    build nothing (exit 1 when one is missing)
      --tree DIR    with --commit: build that commit of the kernel git
                    tree DIR with the same configuration instead; DIR is
                    left on its branch (scripts/bisect.sh uses this)
      --commit REV  the commit of --tree to build. Its image is cached in
                    {cache}/commits/HASH-KEY/ (KEY: the
                    configuration's inputs); the last line on stdout is
                    image=PATH/bzImage. A clean DIR is built out of tree
                    in {cache}/obj/, one directory per tree,
                    incrementally from commit to commit; a DIR built in
                    place by this script (the test kernel's tree) is
                    built in place. Exit status 1: that commit does not
                    configure or build (the compiler's last lines on
                    stderr, the log beside the image directory).
      --print-tree  print the test kernel's build tree (a git repository,
                    branches unpatched and patched-*) and exit
  -h, --help        this help

Environment: KBENCH_TESTKERNEL_CACHE (default above), KBENCH_CACHE (the
collection's cache holding virtme-ng's venv, default {top}/.cache).

Host needs (Debian packages): gcc make bison flex bc libelf-dev libssl-dev
dwarves python3-venv xz-utils git, and linux-source-{version} (fetched with
apt-get download when /usr/src/linux-source-{version}.tar.xz is absent).
A cold build of both kernels takes ~20 min on 2 CPUs.

Exit status: 0 built or cached; 1 a build step failed; 2 bad usage;
3 a missing host package or download.
"""


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) or 1


def parse_build_args(prog: str, argv: Sequence[str]) -> argparse.Namespace:
    ap = cli.UsageParser(prog=prog, help_text=USAGE.format(
        prog=prog, version=VERSION, cache=cache_dir(), top=paths.TOP))
    ap.add_argument("-j", "--jobs", default=str(default_jobs()))
    for flag in ("--patched", "--unpatched", "--btf", "--print-tree"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("-n", "--dry-run", action="store_true")
    for option in ("--tree", "--commit"):
        ap.add_argument(option, default="")
    a = ap.parse_args(list(argv))
    if not re.fullmatch(r"[1-9][0-9]*", a.jobs):
        ap.error(f"invalid --jobs '{a.jobs}': not a positive number")
    if a.patched and a.unpatched:
        ap.error("--patched and --unpatched exclude each other")
    if a.commit and not a.tree:
        ap.error("--commit needs --tree DIR")
    if a.tree:
        check_tree_args(ap, a)
    return a


def check_tree_args(ap: cli.UsageParser, a: argparse.Namespace) -> None:
    """--tree DIR --commit REV: the top of a kernel git work tree and one
    of its commits (a.tree made absolute, a.hash set)."""
    if not a.commit:
        ap.error("--tree needs --commit REV")
    if a.patched or a.unpatched:
        ap.error("--tree builds one commit, not the patched or unpatched "
                 "kernel")
    try:
        a.tree, a.hash = tree_commit(a.tree, a.commit)
    except cli.Error as e:
        ap.error(str(e))


def tree_commit(tree: str, rev: str) -> Tuple[str, str]:
    """(the tree's absolute path, REV's full hash) of --tree DIR --commit
    REV; cli.Error unless DIR is the top of an x86 kernel git work tree
    holding that commit."""
    if not os.path.isdir(tree):
        raise cli.Error(f"--tree '{tree}': no such directory")
    tree = os.path.abspath(tree)
    try:
        git_top = proc.capture(["git", "-C", tree, "rev-parse",
                                "--show-toplevel"]).strip()
    except proc.Failed as e:
        raise cli.Error(f"--tree '{tree}': {e.detail}") from e
    if git_top != tree:
        raise cli.Error(f"--tree '{tree}' is not the top of a git work tree "
                        f"({git_top} is)")
    if not (os.path.isfile(os.path.join(tree, "Makefile"))
            and os.path.isdir(os.path.join(tree, "arch", "x86"))):
        raise cli.Error(f"--tree '{tree}' is not an x86 kernel source tree")
    try:
        return tree, proc.capture(["git", "-C", tree, "rev-parse", "-q",
                                   "--verify", f"{rev}^{{commit}}"]).strip()
    except proc.Failed as e:
        raise cli.Error(f"--commit '{rev}': no such commit in {tree}") \
            from e


@dataclass(frozen=True)
class CommitBuild:
    """A request: one commit of a kernel git tree, built with the test
    kernel's configuration (cached by its hash)."""
    tree: str
    rev: str
    jobs: int = 0              # make -j (0: the CPUs)
    dry_run: bool = False      # only look the image up
    build: int = 1             # 2, 3: a further image of the commit, its
                               # release string (and layout) another


@dataclass(frozen=True)
class CommitImage:
    """Its answer: the image (which exists unless a dry run found none)
    and the build log (the cache's, beside the image directories)."""
    image: str
    log: str
    commit: str


class BuildFailed(Failure):
    """The commit does not configure or build: the message names the
    log, whose last lines went to stderr."""

    def __init__(self, message: str, log: str):
        super().__init__(message, EXIT_FAILED)
        self.log = log


def build_commit(req: CommitBuild, prog: str,
                 cache: Optional[str] = None) -> CommitImage:
    """The image of req's commit, built once under the cache's build
    lock, the tree put back on its branch. cli.Error for a tree or rev
    that is no kernel commit, or an unclean tree; Failure (3) for missing
    host tools; BuildFailed when the commit does not build."""
    # A series of one commit: the same lock, checkout and put-back.
    with SeriesBuild(req.tree, prog, req.jobs, cache) as builds:
        return builds.build(req.rev, req.build, req.dry_run)


class SeriesBuild:
    """The commits of a series of one kernel git tree (build_commit's
    one commit too), built one after the other with the test kernel's
    configuration, release string and image cache, each checked out from
    the commit built before it: make rebuilds what the commit changed, not everything
    that differs from the tree's branch. The tree is the series' from
    the first build that is not cached to the end of the block: the
    cache's build lock held all that time, the tree put back on its
    branch once, at the end, also on an error or a signal (under
    proc.stop_on_signals).

        with kernel.SeriesBuild(tree, prog, jobs) as builds:
            image = builds.build(commit).image
    """

    def __init__(self, tree: str, prog: str, jobs: int = 0,
                 cache: Optional[str] = None):
        self.tree = tree
        self.b = Builder(prog, cache=cache, jobs=jobs or default_jobs())
        self.held: Optional[contextlib.ExitStack] = None
        self.head = ""

    def __enter__(self) -> "SeriesBuild":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build(self, rev: str, build: int = 1,
              dry_run: bool = False) -> CommitImage:
        """REV's image, cached or built (from the commit the tree is on;
        with dry_run, where it would be). cli.Error for a rev that is no
        commit or an unclean tree; Failure (3) for missing host tools;
        BuildFailed when it does not build."""
        tree, commit = tree_commit(self.tree, rev)
        c = Commit(self.b, tree, commit, build)
        c.check_clean()
        image = os.path.join(c.out, "bzImage")
        if not os.path.isfile(image) and not dry_run:
            self.hold(tree)
            if not os.path.isfile(image):
                c.build_here()
        return CommitImage(image, c.log, commit)

    def hold(self, tree: str) -> None:
        """The build lock taken and the tree's branch noted, once."""
        if self.held is not None:
            return
        self.b.check_host()
        os.makedirs(self.b.cache, exist_ok=True)
        held = contextlib.ExitStack()
        held.enter_context(proc.locked(os.path.join(self.b.cache,
                                                    ".lock-build")))
        try:
            check_unchanged(tree)
            self.head = tree_head(tree)
        except BaseException:
            held.close()
            raise
        self.held = held
        self.tree = tree

    def close(self) -> None:
        """The tree back on its branch, the lock given back."""
        if self.held is None:
            return
        try:
            put_back(self.b, self.tree, self.head)
        finally:
            self.held.close()
            self.held = None


def build_commit_main(b: Builder, a: argparse.Namespace) -> int:
    built = build_commit(CommitBuild(a.tree, a.hash, b.jobs, a.dry_run),
                         b.prog, b.cache)
    print(f"image={built.image}", flush=True)
    return 0 if os.path.isfile(built.image) else 1


@dataclass(frozen=True)
class TestKernelBuild:
    """A request: the patched and/or the unpatched test kernel."""
    patched: bool = True
    unpatched: bool = True
    btf: bool = False
    jobs: int = 0              # make -j (0: the CPUs)
    dry_run: bool = False      # only look the images up, saying which


def test_kernels(req: TestKernelBuild, prog: str,
                 cache: Optional[str] = None) -> Dict[str, str]:
    """"patched" and/or "unpatched" -> its image, built (under the
    cache's build lock) or cached; a dry run says of each whether it is
    cached and builds nothing. Failure: a build step failed (1), a
    missing host package or download (3)."""
    want = {"patched": req.patched, "unpatched": req.unpatched}
    b = Builder(prog, cache=cache, jobs=req.jobs or default_jobs(),
                btf=req.btf)
    b.keyed(want["patched"])

    def image(name: str) -> str:
        out = b.out_patched if name == "patched" else b.out_unpatched
        return os.path.join(out, "bzImage")

    if req.dry_run:
        for name in ("patched", "unpatched"):
            if want[name]:
                cached = os.path.isfile(image(name))
                b.say(f"{name}: {'cached' if cached else 'not built'}")
    elif any(want[n] and not os.path.isfile(image(n)) for n in want):
        b.check_host()
        with proc.locked(os.path.join(b.cache, ".lock-build")):
            b.prepare_tree()
            b.image_paths()
            if want["patched"] and not os.path.isfile(image("patched")):
                b.build_patched()
            if want["unpatched"] and not os.path.isfile(image("unpatched")):
                b.build_unpatched()
        b.say(f"done in {b.clock.seconds()} s")
    return {name: image(name) for name in ("patched", "unpatched")
            if want[name]}


def test_kernel_tree(prog: str, cache: Optional[str] = None) -> str:
    """The test kernel's build tree (a git repository: branches unpatched
    and patched-*), once it is there."""
    b = Builder(prog, cache=cache)
    b.keyed(want_patched=False)
    return b.tree


def build_test_kernel(b: Builder, a: argparse.Namespace) -> int:
    if a.print_tree:
        print(test_kernel_tree(b.prog, b.cache), flush=True)
        return 0
    images = test_kernels(TestKernelBuild(not a.unpatched, not a.patched,
                                          a.btf, b.jobs, a.dry_run),
                          b.prog, b.cache)
    for name, image in images.items():
        print(f"{name}={image}", flush=True)
    return int(not all(os.path.isfile(i) for i in images.values()))


def build_main(argv: Sequence[str], prog: str = "kbench kernel build") -> int:
    """testkernel/build.sh: exit 0 built or cached, 1 a build step
    failed, 2 bad usage, 3 a missing host package, 130 interrupted."""
    a = parse_build_args(prog, argv)
    b = Builder(prog, jobs=int(a.jobs), btf=a.btf)
    if a.tree:
        return cli.orchestrate(prog, lambda: build_commit_main(b, a))
    return cli.orchestrate(prog, lambda: build_test_kernel(b, a))
