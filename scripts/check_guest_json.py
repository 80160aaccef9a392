#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that every program that ran in a guest left its JSON result file
and that the file says which accelerator the guest ran on (machine.guest
is "tcg" or "kvm"), for scripts/ci-vm.sh.

  check_guest_json.py DIR "PROGRAM..."
Exit status: 0 all there and marked, 1 a file missing or unmarked
(each named on stdout), 2 bad usage.
"""

import json
import pathlib
import sys


def problem(path):
    """What is wrong with one program's JSON file, or None."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return f"{path.name}: {err}"
    except RecursionError:
        return f"{path.name}: JSON nested too deeply"
    machine = doc.get("machine") if isinstance(doc, dict) else None
    guest = machine.get("guest") if isinstance(machine, dict) else None
    if guest not in ("tcg", "kvm"):
        return f"{path.name}: machine.guest is {guest!r}, not tcg/kvm"
    return None


def main(argv):
    if len(argv) != 2 or argv[0].startswith("-") or not argv[1].split():
        print("usage: check_guest_json.py DIR \"PROGRAM...\"", file=sys.stderr)
        return 2
    folder = pathlib.Path(argv[0])
    bad = [p for p in (problem(folder / (name + ".json"))
                       for name in argv[1].split()) if p]
    for p in bad:
        print(f"ci-vm: {p}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
