# SPDX-License-Identifier: GPL-2.0
"""kbench run: the collection here, with run_all.sh (the kselftest-style
runner, on a host or in a guest), or in guests: --kernel boots one
kernel (kbtools.vm), --vs-kernel compares kernels boot by boot
(kbtools.ab). run_all.sh hands a command line with these options over to
this task, so that it never starts guests itself.
"""

from typing import Sequence

from kbtools import ab, collection, vm

# Options that take the run into guests: run_all.sh hands over on the
# same list (its own scan of its arguments); --arch and --icount without
# --kernel are its usage errors.
GUEST_OPTIONS = ("--kernel",)


def option(word: str) -> str:
    return word.split("=", 1)[0] if word.startswith("--") else word


def main(argv: Sequence[str], prog: str = "kbench run") -> int:
    """run_all.sh's exit status, kbtools.vm's or kbtools.ab's."""
    options = {option(w) for w in argv}
    if "--vs-kernel" in options:
        return ab.main(argv, prog)
    if options & set(GUEST_OPTIONS):
        return vm.main(argv, vm.runner(prog))
    collection.run_in_place(argv)
