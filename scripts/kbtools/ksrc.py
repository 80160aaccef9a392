# SPDX-License-Identifier: GPL-2.0
"""Debian's kernel sources: the linux-source-X tarball (installed in
/usr/src, or fetched with apt-get download), and the tree of its tools/
and scripts/ that the collection builds against.

    kbench kernel source        (scripts/provision_ksrc.sh)

prints the path of a kernel source tree holding the kselftest harness
(tools/testing/selftests/{lib.mk,kselftest.h,...}) and the KTAP parser
(tools/testing/kunit/kunit.py), provisioning it on first use from
Debian's linux-source-$KSRC_VERSION package into the collection's cache.
Only the path goes to stdout; progress and errors go to stderr.
"""

import contextlib
import os
import shutil
import sys
import tempfile
from typing import Iterator, Sequence

from kbtools import cli, paths, proc
from kbtools.output import msg

DEFAULT_VERSION = "6.12"


class SourceMissing(Exception):
    """The linux-source package could not be fetched or unpacked."""


def installed_tarball(version: str) -> str:
    return f"/usr/src/linux-source-{version}.tar.xz"


@contextlib.contextmanager
def downloaded_tarball(cache: str, version: str) -> Iterator[str]:
    """linux-source-VERSION fetched with apt-get download into a scratch
    directory of cache; yields its tarball, removed after the block."""
    package = f"linux-source-{version}"
    os.makedirs(cache, exist_ok=True)
    dl = tempfile.mkdtemp(prefix="dl.", dir=cache)
    try:
        if proc.run(["apt-get", "download", package], cwd=dl,
                    stdout=sys.stderr) != 0:
            raise SourceMissing(f"cannot download {package}")
        debs = [f for f in os.listdir(dl)
                if f.startswith(package + "_") and f.endswith(".deb")]
        root = os.path.join(dl, "root")
        if len(debs) != 1 or proc.run(
                ["dpkg-deb", "-x", os.path.join(dl, debs[0]), root]) != 0:
            raise SourceMissing(f"cannot unpack the {package} package")
        tarball = os.path.join(root, "usr", "src", f"{package}.tar.xz")
        if not os.path.isfile(tarball):
            raise SourceMissing(f"{package} holds no "
                                f"{installed_tarball(version)}")
        yield tarball
    finally:
        shutil.rmtree(dl, ignore_errors=True)


def extract_tools(tarball: str, version: str, dest: str) -> None:
    """Makefile, scripts/ and tools/ of the tarball into dest."""
    top = f"linux-source-{version}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.rmtree(dest + ".tmp", ignore_errors=True)
    os.makedirs(dest + ".tmp")
    if proc.run(["tar", "-xJf", tarball, "-C", dest + ".tmp",
                 "--strip-components=1", f"{top}/Makefile", f"{top}/scripts",
                 f"{top}/tools"], stdout=sys.stderr) != 0:
        raise SourceMissing(f"cannot extract {tarball}")
    if not os.path.isfile(os.path.join(dest + ".tmp", "tools", "testing",
                                       "selftests", "lib.mk")):
        raise SourceMissing(f"{tarball} has no tools/testing/selftests/lib.mk")
    os.rename(dest + ".tmp", dest)


def provision(cache: str, version: str, prog: str) -> str:
    """The provisioned tree's path (made once, under the cache's lock)."""
    dest = os.path.join(cache, f"linux-source-{version}")
    stamp = os.path.join(dest, ".kbench-provisioned")
    if os.path.isfile(stamp):
        return dest
    os.makedirs(cache, exist_ok=True)
    with proc.locked(os.path.join(cache, f".lock-{version}")):
        if os.path.isfile(stamp):  # provisioned meanwhile
            return dest
        tarball = installed_tarball(version)
        with contextlib.ExitStack() as stack:
            if not os.path.isfile(tarball):
                msg(prog, f"fetching Debian package linux-source-{version}")
                try:
                    tarball = stack.enter_context(
                        downloaded_tarball(cache, version))
                except SourceMissing as e:
                    if str(e).startswith("cannot download"):
                        raise SourceMissing(
                            f"{e} (run 'apt-get update', or install it: "
                            f"apt-get install linux-source-{version}; or "
                            "pass KSRC=/path/to/linux)") from e
                    raise
            msg(prog, f"extracting tools/ and scripts/ of {tarball} into "
                f"{dest}")
            extract_tools(tarball, version, dest)
        open(stamp, "w").close()
    return dest


def main(argv: Sequence[str], prog: str = "provision_ksrc") -> int:
    """provision_ksrc.sh: 0 and the path; 1 it cannot be provisioned; 2
    an argument given (it takes none)."""
    if argv:
        print(f"usage: {prog}   (takes no arguments; KSRC_VERSION and "
              "KBENCH_CACHE from the environment)", file=sys.stderr)
        return 2
    version = os.environ.get("KSRC_VERSION") or DEFAULT_VERSION

    def body() -> int:
        try:
            print(provision(paths.cache_dir(), version, prog), flush=True)
        except SourceMissing as e:
            raise cli.Failure(str(e)) from e
        return 0
    return cli.orchestrate(prog, body)
