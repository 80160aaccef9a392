# SPDX-License-Identifier: GPL-2.0
"""The collection run on this host by its own runner, run_all.sh (the
top-level runner the kselftest layout asks for): the one place kbtools
starts it on the host. Guests start it themselves (kbtools.vm)."""

import os
from typing import Mapping, NoReturn, Optional, Sequence

from kbtools import paths, proc

RUNNER = paths.script("run_all.sh")


def run(argv: Sequence[str], *, log: Optional[str] = None,
        err_log: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None) -> int:
    """run_all.sh ARGV here (its KTAP into log, its messages into
    err_log when given); its exit status."""
    return proc.run([RUNNER, *argv], log=log, err_log=err_log, env=env)


def run_in_place(argv: Sequence[str]) -> NoReturn:
    """run_all.sh ARGV in place of this process (kbench run)."""
    os.execv(RUNNER, [RUNNER, *argv])
