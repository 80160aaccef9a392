# SPDX-License-Identifier: GPL-2.0
"""virtme-ng in the collection's cache: the one version kbench installs
and runs (kbtools.vm, kbtools.testkernel), pinned here only.

    bin_dir = vng.ensure(prog, cache_dir())    # raises Missing (exit 3)
"""

import os
import sys
from typing import Dict, Optional

from kbtools import cli, paths, proc
from kbtools.output import msg

VERSION = os.environ.get("KBENCH_VNG_VERSION", "1.42")


class Missing(cli.Failure):
    """virtme-ng could not be installed: exit status 3."""

    def __init__(self, message: str):
        super().__init__(message, 3)


def venv_dir(cache: Optional[str] = None) -> str:
    return os.path.join(cache or paths.cache_dir(), "venv")


def installed(venv: str, version: str = VERSION) -> bool:
    """True when venv's vng says it is virtme-ng VERSION."""
    try:
        out = proc.capture([os.path.join(venv, "bin", "vng"), "--version"])
    except proc.Failed:
        return False
    return out.strip() == f"virtme-ng {version}"


def ensure(prog: str, cache: Optional[str] = None,
           version: str = VERSION) -> str:
    """The bin directory of a venv holding virtme-ng VERSION, installed
    from PyPI on first use under the cache's venv lock."""
    cache = cache or paths.cache_dir()
    venv = venv_dir(cache)
    if installed(venv, version):
        return os.path.join(venv, "bin")
    os.makedirs(cache, exist_ok=True)
    with proc.locked(os.path.join(cache, ".lock-venv")):
        if not installed(venv, version):
            msg(prog, f"installing virtme-ng {version} from PyPI into {venv}")
            log = os.path.join(cache, "venv-install.log")
            pip = os.path.join(venv, "bin", "pip")
            ok = (os.access(pip, os.X_OK) or proc.run(
                ["python3", "-m", "venv", venv], log=log) == 0)
            ok = ok and proc.run([pip, "install", "-q",
                                  f"virtme-ng=={version}"],
                                 log=log, append=True) == 0
            if not ok:
                print(proc.tail(log, 5), end="", file=sys.stderr)
                raise Missing(f"cannot install virtme-ng {version} "
                              f"(log: {log})")
    return os.path.join(venv, "bin")


def path_env(bin_dir: str,
             base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment with bin_dir first on PATH."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env
