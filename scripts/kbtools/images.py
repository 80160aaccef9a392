# SPDX-License-Identifier: GPL-2.0
"""The kernel a guest boots, from what --kernel IMAGE says:

  debian-6.1, debian-6.12, ...  Debian's current package of that series
                                for the guest's architecture (resolved
                                with apt-cache, fetched once with
                                'apt-get download', unpacked into
                                .cache/vm/kernels/)
  linux-image-...               that exact Debian package
  a file                        the image itself
  a directory                   a kernel build tree (its boot image)

Another architecture's packages come from the private indices of
kbtools.debian (kbench debian apt): the host's APT is not changed.
"""

import contextlib
import glob
import os
import platform
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import ContextManager, List, Optional

from kbtools import cli, debian, paths, proc
from kbtools.arch import Arch
from kbtools.output import msg

SETUP = 3  # exit status of a failed download or a missing package
STAMP = ".kbench-unpacked"


@dataclass(frozen=True)
class Image:
    """A resolved --kernel: what the backend boots (the image, or a build
    tree for virtme-ng), the image file itself, and its name in
    messages."""
    boot: str
    file: str
    desc: str


def version_key(text: str) -> List[object]:
    """A key that sorts as `sort -V`: numbers by value."""
    return [(0, int(p)) if p.isdigit() else (1, p)
            for p in re.split(r"(\d+)", text)]


def apt(arch: Arch, prog: str, cache: str, tool: str, *args: str
        ) -> ContextManager[List[str]]:
    """The command line of apt-get or apt-cache on arch's packages, to run
    in the block: the host's own, or the private indices of another
    architecture (kbtools.debian: fetched when old, locked while used)."""
    if arch.foreign_apt:
        return debian.apt_command(prog, arch.debian, tool, args, cache)
    return contextlib.nullcontext([tool, *args])


def kernels_dir(cache: str) -> str:
    return os.path.join(cache, "vm", "kernels")


def package_dir(arch: Arch, cache: str, package: str) -> str:
    return os.path.join(kernels_dir(cache), package + arch.kernel_dir_suffix)


def apt_lines(arch: Arch, prog: str, cache: str, tool: str,
              *args: str) -> List[str]:
    """The output lines of an apt query; none when it fails (offline, a
    mirror's hiccup: the callers fall back)."""
    try:
        with apt(arch, prog, cache, tool, *args) as cmd:
            return proc.capture(cmd).splitlines()
    except (proc.Failed, cli.Failure):
        return []


def debian_package(arch: Arch, name: str, prog: str, cache: str) -> str:
    """The package a debian-* name stands for today: what the series'
    metapackage depends on, else the newest matching name APT knows,
    else (offline) the newest one fetched before."""
    series = arch.debian_series(name)
    assert series is not None
    meta, regex = series
    suffix = f":{arch.debian}"
    for line in apt_lines(arch, prog, cache, "apt-cache", "depends", meta):
        words = line.split()
        if len(words) == 2 and words[0] == "Depends:":
            pkg = words[1].removesuffix(suffix)
            if re.search(regex, pkg):
                return pkg
    known = [p for p in apt_lines(arch, prog, cache, "apt-cache", "pkgnames",
                                  "linux-image-") if re.search(regex, p)]
    if known:
        return sorted(known, key=version_key)[-1]
    fetched = [d.removesuffix(arch.kernel_dir_suffix) for d in
               sorted(os.listdir(kernels_dir(cache)))
               if d.endswith(arch.kernel_dir_suffix)] \
        if os.path.isdir(kernels_dir(cache)) else []
    fetched = [p for p in fetched if re.search(regex, p)
               and os.path.isfile(os.path.join(
                   package_dir(arch, cache, p), STAMP))]
    if fetched:
        pkg = sorted(fetched, key=version_key)[-1]
        msg(prog, f"warning: {name} not found in Debian's {arch.debian} "
            f"package indices; using {pkg} fetched before")
        return pkg
    update = "kbench debian apt " + arch.debian + " update" \
        if arch.foreign_apt else "apt-get update"
    raise cli.Failure(f"no Debian {arch.debian} package for {name} (tried "
                      f"{meta}; run '{update}'?)", SETUP)


def unpack(arch: Arch, deb: str, root: str) -> None:
    """The package's files into root: all of them with the modules'
    dependency lists made (packages ship no modules.dep: their postinst
    makes it), or boot/ alone."""
    if not arch.modules:
        os.makedirs(root)
        if proc.run(["sh", "-c", 'dpkg-deb --fsys-tarfile "$0" | '
                     'tar -x -C "$1" ./boot', deb, root]) != 0:
            raise cli.Failure(f"cannot unpack {os.path.basename(deb)}",
                              SETUP)
        return
    if proc.run(["dpkg-deb", "-x", deb, root]) != 0:
        raise cli.Failure(f"cannot unpack {os.path.basename(deb)}", SETUP)
    for kver in sorted(glob.glob(os.path.join(root, "lib", "modules", "*"))):
        if os.path.isdir(kver) and proc.run(
                ["depmod", "-b", root, os.path.basename(kver)]) != 0:
            raise cli.Failure(f"depmod failed on {os.path.basename(deb)}'s "
                              "modules", SETUP)


def fetch(arch: Arch, package: str, prog: str, cache: str) -> str:
    """The directory the package is unpacked in (fetched once, under the
    cache's lock; an interrupted fetch leaves nothing half-unpacked)."""
    dest = package_dir(arch, cache, package)
    if os.path.isfile(os.path.join(dest, STAMP)):
        return dest
    vm = os.path.dirname(kernels_dir(cache))
    os.makedirs(kernels_dir(cache), exist_ok=True)
    with proc.locked(os.path.join(vm, ".lock-kernels")):
        if os.path.isfile(os.path.join(dest, STAMP)):
            return dest
        name = f"{package}:{arch.debian}" if arch.foreign_apt else package
        msg(prog, f"fetching Debian package {name}")
        dl = tempfile.mkdtemp(prefix="dl.", dir=vm)
        try:
            # _apt cannot write into a root-only cache: let it use a
            # world-writable directory; apt's messages for errors only.
            os.chmod(dl, 0o755)
            log = os.path.join(dl, "log")
            with apt(arch, prog, cache, "apt-get", "download",
                     package) as cmd:
                rc = proc.run(cmd, log=log, cwd=dl)
            if rc != 0:
                sys.stderr.write(debian.apt_problems(log))
                raise cli.Failure(f"cannot download {name} (run 'apt-get "
                                  "update'?)", SETUP)
            debs = glob.glob(os.path.join(dl, "*.deb"))
            if len(debs) != 1:
                raise cli.Failure(f"cannot download {name}", SETUP)
            root = os.path.join(dl, "root")
            unpack(arch, debs[0], root)
            shutil.rmtree(dest, ignore_errors=True)
            os.rename(root, dest)
            open(os.path.join(dest, STAMP), "w").close()
        finally:
            shutil.rmtree(dl, ignore_errors=True)
    return dest


def package_image(directory: str) -> str:
    """The one boot/vmlinuz-* of an unpacked package."""
    images = glob.glob(os.path.join(directory, "boot", "vmlinuz-*"))
    if len(images) != 1 or not os.path.isfile(images[0]):
        raise cli.Failure(f"{directory} holds no single boot/vmlinuz-*",
                          SETUP)
    return images[0]


def foreign(arch: Arch) -> str:
    """", ARCH" in a kernel's description when it is not the host's."""
    return "" if arch.name == platform.machine() or \
        platform.machine() in arch.aliases else f", {arch.name}"


def resolve(arch: Arch, name: str, prog: str,
            cache: Optional[str] = None) -> Image:
    """The kernel --kernel NAME means for arch: cli.Error (bad usage) when
    it is no kernel, cli.Failure (3) when it cannot be fetched."""
    cache = cache or paths.cache_dir()
    if arch.debian_series(name):
        if not arch.foreign_apt and shutil.which("apt-get") is None:
            raise cli.Failure(f"{name} needs apt-get (a Debian host)", SETUP)
        pkg = debian_package(arch, name, prog, cache)
        image = package_image(fetch(arch, pkg, prog, cache))
        desc = f"{name} ({pkg}{foreign(arch)})"
        return Image(image, image, desc)
    if name.startswith("linux-image-") and not os.path.exists(name):
        pkg = name.removesuffix(f":{arch.debian}")
        image = package_image(fetch(arch, pkg, prog, cache))
        return Image(image, image, name + (f" ({arch.name})"
                                           if foreign(arch) else ""))
    if os.path.isdir(name):
        tree = os.path.abspath(name)
        image = os.path.join(tree, arch.tree_image)
        if not os.path.isfile(image):
            raise cli.Error(f"'{name}' is a directory but no built kernel "
                            f"tree (no {arch.tree_image})")
        boot = tree if arch.backend == "vng" else image
        checked = Image(boot, image, f"kernel tree {tree}")
    elif os.path.exists(name):
        if not (os.path.isfile(name) and os.access(name, os.R_OK)):
            raise cli.Error(f"'{name}' is not a readable file")
        image = os.path.abspath(name)
        checked = Image(image, image, image)
    else:
        raise cli.Error(f"no kernel image '{name}' (a path, a kernel tree, "
                        f"{', '.join(arch.series)}, linux-image-...)")
    if not arch.is_image(checked.file):
        raise cli.Error(f"'{checked.file}' is not {arch.image_what}")
    return checked


def check(arch: Arch, name: str) -> None:
    """cli.Error now when --kernel NAME is a path that is no kernel (a
    Debian name is resolved when the guest is made ready)."""
    if not arch.debian_series(name) and not (
            name.startswith("linux-image-") and not os.path.exists(name)):
        resolve(arch, name, "")
