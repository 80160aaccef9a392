#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the JSON document tests/unit_*.c writes through lib/results.c:
the schema's keys, escaping, NaN as null, rows and skip reasons.

  check_unit_json.py FILE
Exit status: 0 good, 1 a check failed, 2 bad usage or unreadable file.
"""

import json
import sys
from typing import Any, Dict, List

TOP_KEYS = ("schema", "test", "kernel", "machine", "date", "cmdline", "clock",
            "params", "rows")
ROW_KEYS = ("unit", "n", "mean", "min", "max", "median", "stddev", "rsd_pct")


def problems(doc: Dict[str, Any]) -> List[str]:
    """Every way DOC differs from what unit_*.c wrote, as messages."""
    out = [f"missing key {k!r}" for k in TOP_KEYS if k not in doc]
    if out:
        return out
    params = doc["params"]
    if params.get("quote\"and\\slash") != "tab\there\nnewline":
        out.append("escaped parameter does not round-trip")
    if "nan_param" not in params or params["nan_param"] is not None:
        out.append("NaN parameter is not null")
    if doc["machine"].get("clock_mode") != "real":
        out.append(f"machine.clock_mode is {doc['machine'].get('clock_mode')!r}, "
                   f"not 'real'")
    if not isinstance(doc.get("boot_id"), str) or len(doc["boot_id"]) != 36:
        out.append(f"boot_id is {doc.get('boot_id')!r}, not the kernel's")
    rows = {r.get("name"): r for r in doc["rows"]}
    one = rows.get("row_one", {})
    out += [f"row_one lacks {k!r}" for k in ROW_KEYS if k not in one]
    if (one.get("n"), one.get("mean")) != (2, 2.0) or \
            one.get("extra", {}).get("batch") != 1000:
        out.append(f"row_one holds wrong figures: {one}")
    # Only a row timed one operation at a time carries its mode.
    if "mode" in one or "mode_share" in one:
        out.append("row_one carries a mode it was not given")
    mode = rows.get("row_mode", {})
    if (mode.get("mode"), mode.get("mode_share")) != (1.5, 0.5):
        out.append(f"row_mode lacks its mode and share: {mode}")
    skipped = rows.get("row_skipped", {})
    if skipped.get("status") != "skip" or \
            skipped.get("reason") != 'no "privilege"':
        out.append(f"row_skipped is wrong: {skipped}")
    return out


def main(argv: List[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: check_unit_json.py FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"check_unit_json.py: {argv[0]}: {e}", file=sys.stderr)
        return 2
    found = problems(doc)
    for p in found:
        print(f"check_unit_json.py: {p}", file=sys.stderr)
    if not found:
        print("JSON document parses and holds the schema")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
