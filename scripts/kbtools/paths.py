# SPDX-License-Identifier: GPL-2.0
"""Where kbench's files are: the clone, its cache, the programs the front
door hands over to. A leaf: imports nothing of kbtools."""

import hashlib
import os

# scripts/kbtools/paths.py -> the clone's top directory.
TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPTS = os.path.join(TOP, "scripts")


def cache_dir() -> str:
    """The collection's cache (KBENCH_CACHE, default TOP/.cache): kernel
    sources, virtme-ng's venv, guest kernels, foreign package indices."""
    return os.environ.get("KBENCH_CACHE") or os.path.join(TOP, ".cache")


def user_cache(*parts: str) -> str:
    """~/.cache/kbench/PARTS (XDG_CACHE_HOME honoured): what every clone
    of this user shares (test kernels, bisection and series state, the
    QEMU plugin)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kbench", *parts)


# The host's apt sources, both formats: where kbench takes its Debian
# mirrors from (never a host name of its own).
APT_SOURCES = ("/etc/apt/sources.list", "/etc/apt/sources.list.d/*.list",
               "/etc/apt/sources.list.d/*.sources")


def script(name: str) -> str:
    """A script of the clone by its path below the top (scripts/vm_run.sh)."""
    return os.path.join(TOP, name)


def clone_id() -> str:
    """This clone's name in a cache that other clones may share
    (KBENCH_CACHE): its directory's name and a hash of its real path."""
    real = os.path.realpath(TOP)
    digest = hashlib.sha256(real.encode()).hexdigest()[:12]
    return f"{os.path.basename(real)}-{digest}"
