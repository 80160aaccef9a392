# SPDX-License-Identifier: GPL-2.0
"""kbench run: the collection here (kbtools.runner; run_all.sh, the
kselftest-style runner, hands a host's run over to it), or in guests:
--kernel boots one kernel (kbtools.vm), --vs-kernel compares kernels
boot by boot (kbtools.ab). run_all.sh hands a command line with these options over to
this task, so that it never starts guests itself.
"""

from typing import Sequence

from kbtools import ab, options, runner, vm

# Options that take the run into guests (kbtools.options.HANDED_OVER):
# run_all.sh hands over on the same list (its own scan of its
# arguments); --arch and --icount without --kernel are its usage errors.
AB_OPTIONS = ("--vs-kernel",)
GUEST_OPTIONS = tuple(o for o in options.HANDED_OVER if o not in AB_OPTIONS)


def option(word: str) -> str:
    return word.split("=", 1)[0] if word.startswith("--") else word


def main(argv: Sequence[str], prog: str = "kbench run") -> int:
    """run_all.sh's exit status, kbtools.vm's or kbtools.ab's."""
    given = {option(w) for w in argv}
    if given & set(AB_OPTIONS):
        return ab.main(argv, prog)
    if given & set(GUEST_OPTIONS):
        return vm.main(argv, vm.runner_prog(prog))
    return runner.main(argv, prog)
